"""paddle_hl.nn: layers, functional ops, initializers, clipping and utilities.

Layer families live in ``nn/layer/<family>.py`` and functional families in
``nn/functional/<family>.py``; each module lists its public names in ``API`` and is collected
here, so adding a family never touches this file.
"""

from __future__ import annotations

import importlib as _importlib

from ..framework.registry import collect_api, family_modules
from . import functional
from .layer.container import LayerDict, LayerList, ParameterList, Sequential
from .layer.layers import Layer

_FAMILIES = ("common", "conv", "pooling", "norm", "activation", "loss", "rnn", "transformer",
             "distance", "vision")


def _collect():
    layer_mods = family_modules(f"{__name__}.layer", _FAMILIES)
    return collect_api(layer_mods + family_modules(__name__, ("clip",)))


globals().update(_collect())


def __getattr__(name):
    if name in ("initializer", "utils", "loss"):
        mod = _importlib.import_module(f"{__name__}.{name}")
        globals()[name] = mod
        return mod
    raise AttributeError(f"module 'paddle_hl.nn' has no attribute '{name}'")
