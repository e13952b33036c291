"""Reinterpreting batch axes of a distribution as event axes."""

from __future__ import annotations

import numbers

from ..framework.tensor import Tensor
from . import _utils
from .distribution import Distribution, kl_divergence, register_kl

__all__ = []


class Independent(Distribution):
    """``base`` with its ``reinterpreted_batch_rank`` rightmost batch axes made event axes.

    Log densities and entropies are summed over those axes; samples, mean and variance are
    base's.

    Args:
        base (Distribution): the base distribution.
        reinterpreted_batch_rank (int): how many batch axes become event axes,
            ``0 < rank <= len(base.batch_shape)``.

    Example:
        >>> base = paddle.distribution.Normal(paddle.zeros([2, 3]), 1.0)
        >>> d = paddle.distribution.Independent(base, 1)
        >>> d.batch_shape, d.event_shape
        ((2,), (3,))
    """

    def __init__(self, base, reinterpreted_batch_rank):
        if not isinstance(base, Distribution):
            raise TypeError(f"Independent: 'base' must be a Distribution, got "
                            f"{type(base).__name__}")
        r = reinterpreted_batch_rank
        n = len(base.batch_shape)
        if not isinstance(r, numbers.Integral) or isinstance(r, bool) or not 0 < r <= n:
            raise ValueError(f"Independent: expected 0 < reinterpreted_batch_rank <= {n} (the "
                             f"rank of base's batch shape {list(base.batch_shape)}), got {r!r}")
        self._base = base
        self._reinterpreted_batch_rank = int(r)
        shape = base.batch_shape + base.event_shape
        cut = n - self._reinterpreted_batch_rank
        self._dtype = getattr(base, "_dtype", None)
        super().__init__(shape[:cut], shape[cut:])

    @property
    def base(self):
        return self._base

    @property
    def reinterpreted_batch_rank(self):
        return self._reinterpreted_batch_rank

    @property
    def mean(self) -> Tensor:
        """base's mean."""
        return self._base.mean

    @property
    def variance(self) -> Tensor:
        """base's variance."""
        return self._base.variance

    def sample(self, shape=()) -> Tensor:
        """base's samples, shape ``shape + batch_shape + event_shape``."""
        return self._base.sample(shape)

    def rsample(self, shape=()) -> Tensor:
        """base's reparameterised samples."""
        return self._base.rsample(shape)

    def log_prob(self, value) -> Tensor:
        """base's log density summed over the reinterpreted axes."""
        return _utils.sum_rightmost(self._base.log_prob(value), self._reinterpreted_batch_rank)

    def prob(self, value) -> Tensor:
        """The density at ``value``."""
        return self.log_prob(value).exp()

    def entropy(self) -> Tensor:
        """base's entropy summed over the reinterpreted axes."""
        return _utils.sum_rightmost(self._base.entropy(), self._reinterpreted_batch_rank)


def _kl_independent_independent(p: Independent, q: Independent) -> Tensor:
    if p.reinterpreted_batch_rank != q.reinterpreted_batch_rank:
        raise ValueError(
            "kl_divergence: Independent distributions with different reinterpreted_batch_rank "
            f"({p.reinterpreted_batch_rank} and {q.reinterpreted_batch_rank})")
    return _utils.sum_rightmost(kl_divergence(p.base, q.base), p.reinterpreted_batch_rank)


# a rule beyond Paddle's table
register_kl(Independent, Independent)(_kl_independent_independent)
