"""Module path ``paddle.nn.initializer.uniform``, as Paddle lays it out (re-exports)."""

from .common import Uniform  # noqa: F401

__all__ = ["Uniform"]
