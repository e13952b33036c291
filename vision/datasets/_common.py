"""Shared plumbing of the vision datasets: argument checks, image backend, cached downloads."""

from __future__ import annotations

__all__ = []
import paddle_hl as paddle
from paddle_hl.utils.datasets import DatasetArgumentError, check_mode, fetch  # noqa: F401

_BACKENDS = ("pil", "cv2")


def check_backend(cls_name: str, backend) -> str:
    """The image backend to use: ``backend``, or the global one when it is None."""
    if backend is None:
        backend = _default_backend()
    if backend not in _BACKENDS:
        raise ValueError(f"{cls_name}: Expected backend are one of {list(_BACKENDS)}, but got "
                         f"{backend!r}")
    return backend


def _default_backend() -> str:
    # paddle_hl.vision.image (set_image_backend / get_image_backend) is a sibling module; 'pil'
    # is Paddle's default when nothing was set.
    try:
        from ..image import get_image_backend
    except ImportError:
        return "pil"
    return get_image_backend()


def default_dtype() -> str:
    """The current default float dtype name (images of the 'cv2' backend are cast to it)."""
    return paddle.get_default_dtype()
