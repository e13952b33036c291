"""The Gumbel (type-I extreme value) distribution."""

from __future__ import annotations

import math

import numpy as np

from ..framework import random as _fr
from ..framework.tensor import Tensor, _wrap
from . import _utils
from .transform import AffineTransform, ExpTransform, Transform, Type
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform

__all__ = []

_EULER = 0.57721566490153286061


class _Inverse(Transform):
    """The inverse of a bijection (used to express Gumbel draws as transforms of a uniform)."""

    _type = Type.BIJECTION

    def __init__(self, base):
        super().__init__()
        self._base = base

    @property
    def _domain(self):
        return self._base._codomain

    @property
    def _codomain(self):
        return self._base._domain

    def _forward(self, x):
        return self._base.inverse(x)

    def _inverse(self, y):
        return self._base.forward(y)

    def _forward_log_det_jacobian(self, x):
        return self._base.inverse_log_det_jacobian(x)


class Gumbel(TransformedDistribution):
    r"""The Gumbel distribution: ``loc - scale log(-log u)`` for ``u ~ U(0, 1)``.

    .. math:: p(x) = \frac{1}{\beta} e^{-(z + e^{-z})}, \quad z = \frac{x - \mu}{\beta}

    Args:
        loc (float|list|numpy.ndarray|Tensor): the location (mode).
        scale (float|list|numpy.ndarray|Tensor): the scale (> 0).

    Example:
        >>> g = paddle.distribution.Gumbel(0.0, 1.0)
        >>> g.mean  # Euler's constant 0.5772
    """

    _display_params = ("loc", "scale")

    def __init__(self, loc, scale):
        (self.loc, self.scale), shape = _utils.to_params("Gumbel", loc=loc, scale=scale)
        _utils.check_positive(self.scale, "Gumbel", "scale")
        dt = self.loc._data.dtype
        finfo = np.finfo(dt)
        zeros = self.loc * 0
        base = Uniform(zeros + float(finfo.tiny), zeros + float(1 - finfo.eps))
        minus_one = _wrap(np.asarray(-1.0, dtype=dt))
        transforms = [ExpTransform(), AffineTransform(_wrap(np.asarray(0.0, dtype=dt)),
                                                      minus_one),
                      ExpTransform(), AffineTransform(self.loc, -self.scale)]
        # u -> log u -> -log u -> log(-log u) -> loc - scale log(-log u)
        super().__init__(base, [_Inverse(transforms[0]), transforms[1],
                                _Inverse(transforms[2]), transforms[3]])
        self._dtype = dt

    @property
    def mean(self) -> Tensor:
        """``loc + scale * euler_gamma``."""
        return self.loc + self.scale * _EULER

    @property
    def variance(self) -> Tensor:
        """``pi^2 scale^2 / 6``."""
        return self.scale * self.scale * (math.pi ** 2 / 6)

    @property
    def stddev(self) -> Tensor:
        """``pi scale / sqrt(6)``."""
        return self.scale * (math.pi / math.sqrt(6))

    def rsample(self, shape=()) -> Tensor:
        """Reparameterised samples ``loc - scale log(-log u)``.

        Args:
            shape (Sequence[int]): the sample shape.

        Returns:
            Tensor: shape ``shape + batch_shape``.
        """
        full = self._extend_shape(self._sample_shape(shape, "rsample"))
        t = _utils.tiny(self._dtype)
        u = _wrap(_fr.uniform_array(full, self._dtype, low=t, high=1.0 - _utils.eps(self._dtype),
                                    place=self.loc.place))
        return self.loc - self.scale * (-u.log()).log()

    def sample(self, shape=()) -> Tensor:
        """Draw samples (no gradient); see :meth:`rsample`."""
        from .. import no_grad

        with no_grad():
            return self.rsample(shape).detach()

    def log_prob(self, value) -> Tensor:
        """``-(z + exp(-z)) - log(scale)``, ``z = (value - loc) / scale``."""
        value = _utils.to_value(value, self.loc, "Gumbel.log_prob")
        z = (value - self.loc) / self.scale
        return -(z + (-z).exp()) - self.scale.log()

    def prob(self, value) -> Tensor:
        """The density at ``value``."""
        return self.log_prob(value).exp()

    def cdf(self, value) -> Tensor:
        """``exp(-exp(-(value - loc) / scale))``."""
        value = _utils.to_value(value, self.loc, "Gumbel.cdf")
        return (-(-(value - self.loc) / self.scale).exp()).exp()

    def entropy(self) -> Tensor:
        """``log(scale) + 1 + euler_gamma``."""
        return self.scale.log() + (1 + _EULER)
