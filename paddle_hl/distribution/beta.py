"""The beta distribution."""

from __future__ import annotations

import numpy as np

from .. import backend
from ..framework import random as _fr
from ..framework.tensor import Tensor, _wrap
from . import _utils
from .distribution import register_kl
from .exponential_family import ExponentialFamily

__all__ = []


def _standard_gamma(conc, gen):
    """Gamma(conc, 1) draws of conc's shape and dtype (float64 inside for accuracy)."""
    xp = backend.get_array_module(conc)
    g = xp.asarray(gen.standard_gamma(conc.astype(np.float64), conc.shape))
    return g.astype(conc.dtype)


class Beta(ExponentialFamily):
    r"""The beta distribution on (0, 1).

    .. math:: p(x) = \frac{x^{\alpha - 1} (1 - x)^{\beta - 1}}{B(\alpha, \beta)}

    Args:
        alpha (float|list|numpy.ndarray|Tensor): the first concentration (> 0).
        beta (float|list|numpy.ndarray|Tensor): the second concentration (> 0).

    Example:
        >>> b = paddle.distribution.Beta(2.0, 3.0)
        >>> b.mean  # 0.4
    """

    _display_params = ("alpha", "beta")

    def __init__(self, alpha, beta):
        (self.alpha, self.beta), shape = _utils.to_params("Beta", alpha=alpha, beta=beta)
        _utils.check_positive(self.alpha, "Beta", "alpha")
        _utils.check_positive(self.beta, "Beta", "beta")
        self._dtype = self.alpha._data.dtype
        super().__init__(shape, ())

    @property
    def mean(self) -> Tensor:
        """``alpha / (alpha + beta)``."""
        return self.alpha / (self.alpha + self.beta)

    @property
    def variance(self) -> Tensor:
        """``alpha beta / ((alpha + beta)^2 (alpha + beta + 1))``."""
        s = self.alpha + self.beta
        return self.alpha * self.beta / (s * s * (s + 1))

    def _lbeta(self):
        return self.alpha.lgamma() + self.beta.lgamma() - (self.alpha + self.beta).lgamma()

    def log_prob(self, value) -> Tensor:
        """The log density at ``value`` in (0, 1).

        Args:
            value (Tensor): the points.

        Returns:
            Tensor: the log densities.
        """
        value = _utils.to_value(value, self.alpha, "Beta.log_prob")
        return ((self.alpha - 1) * value.log() + (self.beta - 1) * (-value).log1p()
                - self._lbeta())

    def prob(self, value) -> Tensor:
        """The density at ``value``."""
        return self.log_prob(value).exp()

    def sample(self, shape=()) -> Tensor:
        """Draw samples as ``X / (X + Y)`` with X ~ Gamma(alpha), Y ~ Gamma(beta) (no gradient).

        Args:
            shape (Sequence[int]): the sample shape.

        Returns:
            Tensor: shape ``shape + batch_shape``.
        """
        full = self._extend_shape(self._sample_shape(shape))
        xp = backend.get_array_module(self.alpha._data)
        gen = _fr.generator(self.alpha.place)
        x = _standard_gamma(xp.broadcast_to(self.alpha._data, full), gen)
        y = _standard_gamma(xp.broadcast_to(self.beta._data, full), gen)
        return _wrap(x / (x + y))

    def rsample(self, shape=()) -> Tensor:
        """Reparameterised samples ``X / (X + Y)``, differentiable in alpha and beta.

        The Gamma draws carry implicit gradients (``dx/dalpha = -dF/dalpha / f``); real Paddle
        2.6 has no Beta.rsample.

        Args:
            shape (Sequence[int]): the sample shape.

        Returns:
            Tensor: shape ``shape + batch_shape``.
        """
        from .. import broadcast_to
        from ._gamma import gamma_rsample

        full = list(self._extend_shape(self._sample_shape(shape, "rsample")))
        x = gamma_rsample(broadcast_to(self.alpha, full))
        y = gamma_rsample(broadcast_to(self.beta, full))
        return x / (x + y)

    def entropy(self) -> Tensor:
        """``ln B(a, b) - (a - 1) psi(a) - (b - 1) psi(b) + (a + b - 2) psi(a + b)``."""
        a, b = self.alpha, self.beta
        return (self._lbeta() - (a - 1) * a.digamma() - (b - 1) * b.digamma()
                + (a + b - 2) * (a + b).digamma())

    @property
    def _natural_parameters(self):
        return (self.alpha, self.beta)

    def _log_normalizer(self, x, y):
        return x.lgamma() + y.lgamma() - (x + y).lgamma()

    @property
    def _mean_carrier_measure(self):
        # h(x) = 1 / (x (1 - x)) with sufficient statistics (log x, log(1 - x))
        a, b = self.alpha, self.beta
        s = (a + b).digamma()
        return -(a.digamma() - s) - (b.digamma() - s)


def _kl_beta_beta(p: Beta, q: Beta) -> Tensor:
    a1, b1, a2, b2 = p.alpha, p.beta, q.alpha, q.beta
    return (q._lbeta() - p._lbeta() + (a1 - a2) * a1.digamma() + (b1 - b2) * b1.digamma()
            + (a2 - a1 + b2 - b1) * (a1 + b1).digamma())


register_kl(Beta, Beta)(_kl_beta_beta)
