"""Module path ``paddle.nn.initializer.constant``, as Paddle lays it out (re-exports)."""

from .common import Constant  # noqa: F401

__all__ = ["Constant"]
