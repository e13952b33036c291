"""Module path ``paddle.nn.initializer.normal``, as Paddle lays it out (re-exports)."""

from .common import Normal, TruncatedNormal  # noqa: F401

__all__ = ["Normal", "TruncatedNormal"]
