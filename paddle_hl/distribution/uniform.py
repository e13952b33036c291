"""The continuous uniform distribution."""

from __future__ import annotations

from ..framework import random as _fr
from ..framework.tensor import Tensor, _wrap
from . import _utils
from .distribution import Distribution, register_kl

__all__ = []


class Uniform(Distribution):
    r"""The uniform distribution on ``[low, high)``.

    .. math:: p(x) = \frac{1}{high - low}, \quad low \le x < high

    Args:
        low (float|list|numpy.ndarray|Tensor): the lower bound.
        high (float|list|numpy.ndarray|Tensor): the upper bound (> low).
        name (str, optional): unused, for Paddle compatibility.

    Example:
        >>> u = paddle.distribution.Uniform(0.0, 2.0)
        >>> u.entropy()  # log 2 = 0.6931
    """

    _display_params = ("low", "high")

    def __init__(self, low, high, name=None):
        (self.low, self.high), shape = _utils.to_params("Uniform", low=low, high=high)
        lo, hi = self.low._data, self.high._data
        _utils.check(lo < hi, hi - lo, "Uniform", "high - low", "positive (low < high)")
        self.name = name if name is not None else "Uniform"
        self._dtype = lo.dtype
        super().__init__(shape, ())

    @property
    def mean(self) -> Tensor:
        """``(low + high) / 2``."""
        return (self.low + self.high) / 2

    @property
    def variance(self) -> Tensor:
        """``(high - low) ** 2 / 12``."""
        w = self.high - self.low
        return w * w / 12

    def _u(self, shape, seed=0):
        gen = _fr.local_generator(seed, self.low.place) if seed else None
        return _fr.uniform_array(self._extend_shape(shape), self._dtype, place=self.low.place,
                                 gen=gen)

    def sample(self, shape=(), seed=0) -> Tensor:
        """Draw samples (no gradient).

        Args:
            shape (Sequence[int]): the sample shape.
            seed (int): 0 for the global generator, else a private generator with that seed.

        Returns:
            Tensor: shape ``shape + batch_shape``.
        """
        u = self._u(self._sample_shape(shape), seed)
        lo = self.low._data
        u *= self.high._data - lo
        u += lo
        return _wrap(u)

    def rsample(self, shape=()) -> Tensor:
        """Reparameterised samples ``low + u (high - low)`` (differentiable in low and high)."""
        u = _wrap(self._u(self._sample_shape(shape, "rsample")))
        return self.low + u * (self.high - self.low)

    def log_prob(self, value) -> Tensor:
        """``-log(high - low)`` inside ``[low, high)``, ``-inf`` outside.

        Args:
            value (Tensor): the points.

        Returns:
            Tensor: the log densities.
        """
        from .. import where

        value = _utils.to_value(value, self.low, "Uniform.log_prob")
        inside = (value >= self.low) & (value < self.high)
        lp = -(self.high - self.low).log()
        return where(inside, lp + value * 0, lp * 0 + float("-inf"))

    def probs(self, value) -> Tensor:
        """The density at ``value``."""
        return self.prob(value)

    def entropy(self) -> Tensor:
        """``log(high - low)``."""
        return (self.high - self.low).log()

    def cdf(self, value) -> Tensor:
        """The cumulative distribution function, clipped to [0, 1]."""
        value = _utils.to_value(value, self.low, "Uniform.cdf")
        return ((value - self.low) / (self.high - self.low)).clip(0.0, 1.0)

    def icdf(self, value) -> Tensor:
        """The quantile function ``low + value (high - low)``."""
        value = _utils.to_value(value, self.low, "Uniform.icdf")
        return self.low + value * (self.high - self.low)


def _kl_uniform_uniform(p: Uniform, q: Uniform) -> Tensor:
    from .. import where

    inside = (q.low <= p.low) & (p.high <= q.high)
    kl = ((q.high - q.low) / (p.high - p.low)).log()
    return where(inside, kl, kl * 0 + float("inf"))


register_kl(Uniform, Uniform)(_kl_uniform_uniform)
