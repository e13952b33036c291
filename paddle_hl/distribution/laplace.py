"""The Laplace distribution."""

from __future__ import annotations

import math

from ..framework import random as _fr
from ..framework.tensor import Tensor, _wrap
from . import _utils
from .distribution import Distribution, register_kl

__all__ = []


class Laplace(Distribution):
    r"""The Laplace (double exponential) distribution.

    .. math:: p(x) = \frac{1}{2b} e^{-|x - \mu| / b}

    Args:
        loc (float|list|numpy.ndarray|Tensor): the location (mean).
        scale (float|list|numpy.ndarray|Tensor): the scale ``b`` (> 0).

    Example:
        >>> d = paddle.distribution.Laplace(0.0, 1.0)
        >>> d.entropy()  # 1 + log 2 = 1.6931
    """

    _display_params = ("loc", "scale")

    def __init__(self, loc, scale):
        (self.loc, self.scale), shape = _utils.to_params("Laplace", loc=loc, scale=scale)
        _utils.check_positive(self.scale, "Laplace", "scale")
        self._dtype = self.loc._data.dtype
        super().__init__(shape, ())

    @property
    def mean(self) -> Tensor:
        """``loc``."""
        return self.loc

    @property
    def stddev(self) -> Tensor:
        """``sqrt(2) scale``."""
        return self.scale * math.sqrt(2)

    @property
    def variance(self) -> Tensor:
        """``2 scale^2``."""
        return 2 * self.scale * self.scale

    def rsample(self, shape=()) -> Tensor:
        """Reparameterised samples through the quantile function of u ~ U(-1, 1).

        Args:
            shape (Sequence[int]): the sample shape.

        Returns:
            Tensor: shape ``shape + batch_shape``.
        """
        full = self._extend_shape(self._sample_shape(shape, "rsample"))
        e = _utils.eps(self._dtype)
        u = _wrap(_fr.uniform_array(full, self._dtype, low=-1 + e, high=1.0,
                                    place=self.loc.place))
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def sample(self, shape=()) -> Tensor:
        """Draw samples (no gradient); see :meth:`rsample`."""
        from .. import no_grad

        with no_grad():
            return self.rsample(shape).detach()

    def log_prob(self, value) -> Tensor:
        """``-log(2 scale) - |value - loc| / scale``."""
        value = _utils.to_value(value, self.loc, "Laplace.log_prob")
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def prob(self, value) -> Tensor:
        """The density at ``value``."""
        return self.log_prob(value).exp()

    def entropy(self) -> Tensor:
        """``1 + log(2 scale)``."""
        return 1 + (2 * self.scale).log()

    def cdf(self, value) -> Tensor:
        """``1/2 - 1/2 sign(value - loc) expm1(-|value - loc| / scale)``."""
        value = _utils.to_value(value, self.loc, "Laplace.cdf")
        d = value - self.loc
        return 0.5 - 0.5 * d.sign() * (-d.abs() / self.scale).expm1()

    def icdf(self, value) -> Tensor:
        """The quantile function ``loc - scale sign(p - 1/2) log(1 - 2|p - 1/2|)``."""
        value = _utils.to_value(value, self.loc, "Laplace.icdf")
        t = value - 0.5
        return self.loc - self.scale * t.sign() * (-2 * t.abs()).log1p()

    def kl_divergence(self, other) -> Tensor:
        """KL(self || other) for another Laplace."""
        return super().kl_divergence(other)


def _kl_laplace_laplace(p: Laplace, q: Laplace) -> Tensor:
    d = (p.loc - q.loc).abs()
    return ((q.scale / p.scale).log() + d / q.scale
            + p.scale / q.scale * (-d / p.scale).exp() - 1)


register_kl(Laplace, Laplace)(_kl_laplace_laplace)
