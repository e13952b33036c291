"""paddle_hl.vision: the model zoo, transforms, datasets, detection ops and image I/O.

Submodules load on first use, so ``import paddle_hl`` stays light.
"""

from __future__ import annotations

import importlib as _importlib

__all__ = ["datasets", "models", "transforms", "ops", "set_image_backend",
           "get_image_backend", "image_load"]

_SUBMODULES = ("datasets", "models", "transforms", "ops", "image")
_IMAGE_FUNCS = ("set_image_backend", "get_image_backend", "image_load")


def __getattr__(name):
    if name in _SUBMODULES:
        mod = _importlib.import_module(f"{__name__}.{name}")
        globals()[name] = mod
        return mod
    if name in _IMAGE_FUNCS:
        value = getattr(_importlib.import_module(f"{__name__}.image"), name)
        globals()[name] = value
        return value
    transforms = _importlib.import_module(f"{__name__}.transforms")
    if name in transforms.__all__:  # paddle.vision.Compose etc., as Paddle re-exports them
        return getattr(transforms, name)
    models = _importlib.import_module(f"{__name__}.models")
    if hasattr(models, name):  # paddle.vision.LeNet etc., as Paddle re-exports the zoo
        return getattr(models, name)
    raise AttributeError(f"module 'paddle_hl.vision' has no attribute '{name}'")
