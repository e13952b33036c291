"""Module path ``paddle.nn.initializer.kaiming``, as Paddle lays it out (re-exports)."""

from .common import KaimingNormal, KaimingUniform  # noqa: F401

__all__ = ["KaimingNormal", "KaimingUniform"]
