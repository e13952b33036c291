"""paddle.distributed.fleet.utils: recompute and the data-parallel gradient helpers."""

from ..recompute.recompute import recompute, recompute_sequential  # noqa: F401
from . import hybrid_parallel_util  # noqa: F401

__all__ = ["recompute"]
