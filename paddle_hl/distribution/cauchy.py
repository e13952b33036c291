"""The Cauchy distribution."""

from __future__ import annotations

import math

from ..framework import random as _fr
from ..framework.tensor import Tensor, _wrap
from . import _utils
from .distribution import Distribution, register_kl

__all__ = []


class Cauchy(Distribution):
    r"""The Cauchy distribution with location ``loc`` and scale ``scale``.

    .. math:: p(x) = \frac{1}{\pi \gamma (1 + ((x - x_0)/\gamma)^2)}

    It has no mean and no variance: asking for them raises a ValueError, as in Paddle.

    Args:
        loc (float|list|numpy.ndarray|Tensor): the location (median).
        scale (float|list|numpy.ndarray|Tensor): the scale (> 0).
        name (str, optional): unused, for Paddle compatibility.

    Example:
        >>> c = paddle.distribution.Cauchy(0.0, 1.0)
        >>> c.cdf(paddle.to_tensor(0.0))  # 0.5
    """

    _display_params = ("loc", "scale")

    def __init__(self, loc, scale, name=None):
        (self.loc, self.scale), shape = _utils.to_params("Cauchy", loc=loc, scale=scale)
        _utils.check_positive(self.scale, "Cauchy", "scale")
        self.name = name if name is not None else "Cauchy"
        self._dtype = self.loc._data.dtype
        super().__init__(shape, ())

    @property
    def mean(self):
        raise ValueError("Cauchy distribution has no mean.")

    @property
    def variance(self):
        raise ValueError("Cauchy distribution has no variance.")

    @property
    def stddev(self):
        raise ValueError("Cauchy distribution has no stddev.")

    def _u(self, shape):
        return _fr.uniform_array(self._extend_shape(shape), self._dtype, place=self.loc.place)

    def rsample(self, shape=()) -> Tensor:
        """Reparameterised samples ``loc + scale tan(pi (u - 1/2))``.

        Args:
            shape (Sequence[int]): the sample shape.

        Returns:
            Tensor: shape ``shape + batch_shape``.
        """
        u = _wrap(self._u(self._sample_shape(shape, "rsample")))
        return self.loc + self.scale * ((u - 0.5) * math.pi).tan()

    def sample(self, shape=()) -> Tensor:
        """Draw samples (no gradient); see :meth:`rsample`."""
        from .. import no_grad

        with no_grad():
            return self.rsample(shape).detach()

    def log_prob(self, value) -> Tensor:
        """``-log(pi scale) - log(1 + z^2)`` with ``z = (value - loc) / scale``."""
        value = _utils.to_value(value, self.loc, "Cauchy.log_prob")
        z = (value - self.loc) / self.scale
        return -(self.scale * math.pi).log() - (z * z).log1p()

    def prob(self, value) -> Tensor:
        """The density at ``value``."""
        return self.log_prob(value).exp()

    def cdf(self, value) -> Tensor:
        """``atan((value - loc) / scale) / pi + 1/2``."""
        value = _utils.to_value(value, self.loc, "Cauchy.cdf")
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value) -> Tensor:
        """The quantile function ``loc + scale tan(pi (value - 1/2))``."""
        value = _utils.to_value(value, self.loc, "Cauchy.icdf")
        return self.loc + self.scale * ((value - 0.5) * math.pi).tan()

    def entropy(self) -> Tensor:
        """``log(4 pi scale)``."""
        return (self.scale * (4 * math.pi)).log()

    def kl_divergence(self, other) -> Tensor:
        """KL(self || other) for another Cauchy."""
        return super().kl_divergence(other)


def _kl_cauchy_cauchy(p: Cauchy, q: Cauchy) -> Tensor:
    s = p.scale + q.scale
    d = p.loc - q.loc
    return ((s * s + d * d) / (4 * p.scale * q.scale)).log()


register_kl(Cauchy, Cauchy)(_kl_cauchy_cauchy)
