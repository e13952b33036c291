"""Module path ``paddle.nn.initializer.xavier``, as Paddle lays it out (re-exports)."""

from .common import XavierNormal, XavierUniform  # noqa: F401

__all__ = ["XavierNormal", "XavierUniform"]
