"""Module path ``paddle.nn.initializer.initializer``, as Paddle lays it out (re-exports)."""

from ._base import Initializer, calculate_gain  # noqa: F401

__all__ = ["Initializer", "calculate_gain"]
