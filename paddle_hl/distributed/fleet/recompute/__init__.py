"""paddle.distributed.fleet.recompute: recomputation of activations in backward."""

from .recompute import recompute, recompute_sequential  # noqa: F401

__all__ = []
