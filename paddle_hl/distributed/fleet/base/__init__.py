"""paddle.distributed.fleet.base: the strategy and topology modules under Paddle's paths."""

from . import distributed_strategy, topology  # noqa: F401

__all__ = []
