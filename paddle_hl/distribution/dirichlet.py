"""The Dirichlet distribution."""

from __future__ import annotations

from .. import backend
from ..framework import random as _fr
from ..framework.tensor import Tensor, _wrap
from . import _utils
from .beta import _standard_gamma
from .distribution import register_kl
from .exponential_family import ExponentialFamily

__all__ = []


class Dirichlet(ExponentialFamily):
    r"""The Dirichlet distribution over the probability simplex.

    .. math:: p(x) = \frac{\prod_i x_i^{\alpha_i - 1}}{B(\alpha)}

    The last axis of ``concentration`` is the event axis, the others are batch axes.

    Args:
        concentration (list|numpy.ndarray|Tensor): the concentrations (> 0), at least 1-D.

    Example:
        >>> d = paddle.distribution.Dirichlet(paddle.to_tensor([1.0, 2.0, 3.0]))
        >>> d.mean  # [0.1667, 0.3333, 0.5]
    """

    _display_params = ("concentration",)

    def __init__(self, concentration):
        self.concentration = _utils.to_param(concentration, "Dirichlet", "concentration")
        if self.concentration.ndim < 1:
            raise ValueError(f"Dirichlet: 'concentration' must be at least 1-D, got shape "
                             f"{self.concentration.shape}")
        _utils.check_positive(self.concentration, "Dirichlet", "concentration")
        self._dtype = self.concentration._data.dtype
        shape = tuple(self.concentration.shape)
        super().__init__(shape[:-1], shape[-1:])

    @property
    def mean(self) -> Tensor:
        """``alpha / sum(alpha)``."""
        return self.concentration / self.concentration.sum(axis=-1, keepdim=True)

    @property
    def variance(self) -> Tensor:
        """``alpha_i (a0 - alpha_i) / (a0^2 (a0 + 1))``."""
        a = self.concentration
        a0 = a.sum(axis=-1, keepdim=True)
        return a * (a0 - a) / (a0 * a0 * (a0 + 1))

    def _lbeta(self):
        a = self.concentration
        return a.lgamma().sum(axis=-1) - a.sum(axis=-1).lgamma()

    def log_prob(self, value) -> Tensor:
        """The log density at a point ``value`` of the simplex.

        Args:
            value (Tensor): points whose last axis is the event axis.

        Returns:
            Tensor: the log densities (event axis reduced).
        """
        value = _utils.to_value(value, self.concentration, "Dirichlet.log_prob")
        return ((self.concentration - 1) * value.log()).sum(axis=-1) - self._lbeta()

    def prob(self, value) -> Tensor:
        """The density at ``value``."""
        return self.log_prob(value).exp()

    def sample(self, shape=()) -> Tensor:
        """Draw samples by normalising independent Gamma(alpha_i) draws (no gradient).

        Args:
            shape (Sequence[int]): the sample shape.

        Returns:
            Tensor: shape ``shape + batch_shape + event_shape``.
        """
        full = self._extend_shape(self._sample_shape(shape))
        xp = backend.get_array_module(self.concentration._data)
        g = _standard_gamma(xp.broadcast_to(self.concentration._data, full),
                            _fr.generator(self.concentration.place))
        return _wrap(g / g.sum(axis=-1, keepdims=True))

    def rsample(self, shape=()) -> Tensor:
        """Reparameterised samples (normalised Gamma draws), differentiable in concentration.

        The Gamma draws carry implicit gradients; real Paddle 2.6 has no Dirichlet.rsample.

        Args:
            shape (Sequence[int]): the sample shape.

        Returns:
            Tensor: shape ``shape + batch_shape + event_shape``.
        """
        from .. import broadcast_to
        from ._gamma import gamma_rsample

        full = list(self._extend_shape(self._sample_shape(shape, "rsample")))
        g = gamma_rsample(broadcast_to(self.concentration, full))
        return g / g.sum(axis=-1, keepdim=True)

    def entropy(self) -> Tensor:
        """``ln B(a) + (a0 - K) psi(a0) - sum (a_i - 1) psi(a_i)``."""
        a = self.concentration
        a0 = a.sum(axis=-1)
        k = a.shape[-1]
        return self._lbeta() + (a0 - k) * a0.digamma() - ((a - 1) * a.digamma()).sum(axis=-1)

    @property
    def _natural_parameters(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(axis=-1) - x.sum(axis=-1).lgamma()

    @property
    def _mean_carrier_measure(self):
        # h(x) = 1 / prod x_i with sufficient statistic log x
        a = self.concentration
        return -(a.digamma() - a.sum(axis=-1, keepdim=True).digamma()).sum(axis=-1)


def _kl_dirichlet_dirichlet(p: Dirichlet, q: Dirichlet) -> Tensor:
    a, b = p.concentration, q.concentration
    a0 = a.sum(axis=-1, keepdim=True)
    return q._lbeta() - p._lbeta() + ((a - b) * (a.digamma() - a0.digamma())).sum(axis=-1)


register_kl(Dirichlet, Dirichlet)(_kl_dirichlet_dirichlet)
