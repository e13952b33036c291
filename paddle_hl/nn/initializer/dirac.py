"""Module path ``paddle.nn.initializer.dirac``, as Paddle lays it out (re-exports)."""

from .structured import Dirac  # noqa: F401

__all__ = ["Dirac"]
