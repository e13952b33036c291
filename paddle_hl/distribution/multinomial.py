"""The multinomial distribution."""

from __future__ import annotations

import numbers

import numpy as np

from .. import backend
from ..framework import random as _fr
from ..framework.tensor import Tensor, _wrap
from . import _utils
from .distribution import Distribution

__all__ = []


class Multinomial(Distribution):
    r"""Counts of ``total_count`` independent draws among ``K`` categories.

    .. math:: P(x) = \frac{n!}{\prod_i x_i!} \prod_i p_i^{x_i}, \quad \sum_i x_i = n

    ``probs`` must be non-negative with a positive sum along the last axis; it is normalised
    to sum to one (as Paddle documents). Negative or NaN probabilities raise a ValueError.

    Args:
        total_count (int): the number of draws (>= 1).
        probs (list|numpy.ndarray|Tensor): category probabilities, last axis the categories.

    Example:
        >>> m = paddle.distribution.Multinomial(10, paddle.to_tensor([0.2, 0.3, 0.5]))
        >>> m.mean  # [2., 3., 5.]
    """

    _display_params = ("total_count", "probs")

    def __init__(self, total_count, probs):
        if (not isinstance(total_count, numbers.Integral) or isinstance(total_count, bool)
                or total_count < 1):
            raise ValueError(f"Multinomial: 'total_count' must be a positive int, got "
                             f"{total_count!r}")
        self.total_count = int(total_count)
        p = _utils.to_param(probs, "Multinomial", "probs")
        if p.ndim < 1:
            raise ValueError(f"Multinomial: 'probs' must be at least 1-D, got shape {p.shape}")
        a = p._data
        _utils.check(a >= 0, a, "Multinomial", "probs", "non-negative")
        s = a.sum(axis=-1)
        _utils.check(s > 0, s, "Multinomial", "probs.sum(-1)",
                     "positive (each row needs a non-zero probability)")
        self.probs = p / p.sum(axis=-1, keepdim=True)
        self._dtype = a.dtype
        shape = tuple(p.shape)
        super().__init__(shape[:-1], shape[-1:])

    @property
    def mean(self) -> Tensor:
        """``n p``."""
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        """``n p (1 - p)``."""
        return self.probs * (1 - self.probs) * self.total_count

    def _xlogp(self, x):
        from .. import where

        logp = self.probs.log()
        return where(x == 0, x * 0, x * logp)

    def log_prob(self, value) -> Tensor:
        """``log n! - sum log x_i! + sum x_i log p_i``.

        Args:
            value (Tensor): counts, last axis the categories.

        Returns:
            Tensor: the log masses (category axis reduced).
        """
        value = _utils.to_value(value, self.probs, "Multinomial.log_prob")
        n = float(self.total_count)
        return (float(_lgamma(n + 1)) - (value + 1).lgamma().sum(axis=-1)
                + self._xlogp(value).sum(axis=-1))

    def prob(self, value) -> Tensor:
        """The mass at ``value``."""
        return self.log_prob(value).exp()

    def sample(self, shape=()) -> Tensor:
        """Draw count vectors (the parameters' float dtype, no gradient).

        Args:
            shape (Sequence[int]): the sample shape.

        Returns:
            Tensor: shape ``shape + batch_shape + event_shape``.
        """
        shape = self._sample_shape(shape)
        p = self.probs._data.astype(np.float64)
        xp = backend.get_array_module(p)
        gen = _fr.generator(self.probs.place)
        size = shape + self.batch_shape
        if xp is np:
            p = p / p.sum(axis=-1, keepdims=True)
            out = gen.multinomial(self.total_count, np.broadcast_to(p, size + p.shape[-1:]),
                                  size=size)
        else:
            # device path: categorical draws by inverse CDF, then counted
            cdf = xp.cumsum(p, axis=-1)
            u = gen.random(size + (self.total_count,), dtype=np.float64)
            idx = (cdf[..., None, :] < u[..., None]).sum(axis=-1)
            k = p.shape[-1]
            idx = xp.minimum(idx, k - 1)
            out = (idx[..., None] == xp.arange(k)).sum(axis=-2)
        return _wrap(xp.asarray(out).astype(self._dtype))

    def entropy(self) -> Tensor:
        """The exact entropy, from the binomial marginals of the counts.

        ``H = -log n! - n sum p_i log p_i + sum_i E[log x_i!]`` with ``x_i ~ Bin(n, p_i)``.
        """
        from .. import to_tensor, where

        n = self.total_count
        k = np.arange(n + 1, dtype=np.float64)
        log_binom = _lgamma(n + 1) - _lgamma(k + 1) - _lgamma(n - k + 1)
        kt = to_tensor(k.astype(self._dtype))
        p = self.probs.unsqueeze(-1)
        logp, log1mp = p.log(), (-p).log1p()
        lpmf = (to_tensor(log_binom.astype(self._dtype)) + where(kt == 0, kt * 0, kt * logp)
                + where(kt == n, kt * 0, (n - kt) * log1mp))
        e_lfact = (lpmf.exp() * to_tensor(_lgamma(k + 1).astype(self._dtype))).sum(axis=-1)
        plogp = self._xlogp(self.probs).sum(axis=-1)
        return -float(_lgamma(n + 1)) - n * plogp + e_lfact.sum(axis=-1)


def _lgamma(x):
    from math import lgamma

    if np.ndim(x) == 0:
        return lgamma(float(x))
    return np.vectorize(lgamma, otypes=[np.float64])(x)
