"""The geometric distribution."""

from __future__ import annotations

from ..framework import random as _fr
from ..framework.tensor import Tensor, _wrap
from . import _utils
from .distribution import Distribution, register_kl

__all__ = []


class Geometric(Distribution):
    r"""The number of failures before the first success in Bernoulli(``probs``) trials.

    .. math:: P(X = k) = (1 - p)^k p, \quad k = 0, 1, 2, \dots

    ``log_prob`` / ``prob`` are the same as ``log_pmf`` / ``pmf`` (real Paddle 2.6 leaves
    them undefined).

    Args:
        probs (float|list|numpy.ndarray|Tensor): the success probability, in (0, 1].

    Example:
        >>> g = paddle.distribution.Geometric(0.5)
        >>> g.mean  # 1.0
    """

    _display_params = ("probs",)
    _discrete = True

    def __init__(self, probs):
        (self.probs,), shape = _utils.to_params("Geometric", probs=probs)
        _utils.check_unit_interval(self.probs, "Geometric", "probs", open_low=True)
        self._dtype = self.probs._data.dtype
        super().__init__(shape, ())

    @property
    def mean(self) -> Tensor:
        """``(1 - p) / p``."""
        return 1 / self.probs - 1

    @property
    def variance(self) -> Tensor:
        """``(1 - p) / p^2``."""
        return (1 / self.probs - 1) / self.probs

    @property
    def stddev(self) -> Tensor:
        """The standard deviation."""
        return self.variance.sqrt()

    def rsample(self, shape=()) -> Tensor:
        """Samples ``floor(log u / log(1 - p))``, written with differentiable ops.

        The draws are integers, so their gradient with respect to ``probs`` is zero almost
        everywhere (as in Paddle).

        Args:
            shape (Sequence[int]): the sample shape.

        Returns:
            Tensor: float samples of shape ``shape + batch_shape``.
        """
        full = self._extend_shape(self._sample_shape(shape, "rsample"))
        t = _utils.tiny(self._dtype)
        u = _wrap(_fr.uniform_array(full, self._dtype, low=t, high=1.0,
                                    place=self.probs.place))
        return (u.log() / (-self.probs).log1p()).floor()

    def sample(self, shape=()) -> Tensor:
        """Draw samples (no gradient); see :meth:`rsample`."""
        from .. import no_grad

        with no_grad():
            return self.rsample(shape).detach()

    def log_pmf(self, k) -> Tensor:
        """``k log(1 - p) + log p``.

        Args:
            k (Tensor): numbers of failures.

        Returns:
            Tensor: the log masses.
        """
        from .. import where

        k = _utils.to_value(k, self.probs, "Geometric.log_pmf")
        q = (-self.probs).log1p()
        # k = 0 with p = 1: 0 * log 0 is 0, not nan
        return where(k == 0, q * 0, k * q) + self.probs.log()

    def pmf(self, k) -> Tensor:
        """``(1 - p)^k p``."""
        return self.log_pmf(k).exp()

    def log_prob(self, value) -> Tensor:
        """Same as :meth:`log_pmf`."""
        return self.log_pmf(value)

    def prob(self, value) -> Tensor:
        """Same as :meth:`pmf`."""
        return self.pmf(value)

    def cdf(self, k) -> Tensor:
        """``1 - (1 - p)^(k + 1)``."""
        k = _utils.to_value(k, self.probs, "Geometric.cdf")
        return 1 - ((k + 1) * (-self.probs).log1p()).exp()

    def entropy(self) -> Tensor:
        """``-((1 - p) log(1 - p) + p log p) / p``."""
        from .. import where

        p = self.probs
        q = 1 - p
        qlq = where(q > 0, q * (-p).log1p(), q * 0)
        return -(qlq + p * p.log()) / p

    def kl_divergence(self, other) -> Tensor:
        """KL(self || other) for another Geometric."""
        return super().kl_divergence(other)


def _kl_geometric_geometric(p: Geometric, q: Geometric) -> Tensor:
    """``log(p/q) + (1 - p)/p log((1 - p)/(1 - q))``.

    Real Paddle 2.6 returns the KL divergence of Bernoulli(p) and Bernoulli(q) here, which is
    not the divergence of the geometric laws (it misses the weight E[k] = (1 - p)/p).
    """
    from .. import where

    a, b = p.probs, q.probs
    ratio = (-a).log1p() - (-b).log1p()
    tail = where(a < 1, (1 / a - 1) * ratio, a * 0)
    return a.log() - b.log() + tail


register_kl(Geometric, Geometric)(_kl_geometric_geometric)
