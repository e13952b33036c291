"""Module path ``paddle.nn.initializer.assign``, as Paddle lays it out (re-exports)."""

from .common import Assign  # noqa: F401

__all__ = ["Assign"]
