"""Module path ``paddle.nn.initializer.orthogonal``, as Paddle lays it out (re-exports)."""

from .structured import Orthogonal  # noqa: F401

__all__ = ["Orthogonal"]
