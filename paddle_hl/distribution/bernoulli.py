"""The Bernoulli distribution."""

from __future__ import annotations

from .. import backend
from ..framework import random as _fr
from ..framework.tensor import Tensor, _wrap
from . import _utils
from .distribution import register_kl
from .exponential_family import ExponentialFamily

__all__ = []


class Bernoulli(ExponentialFamily):
    r"""The Bernoulli distribution: 1 with probability ``probs``, 0 otherwise.

    .. math:: P(x) = p^x (1 - p)^{1 - x}, \quad x \in \{0, 1\}

    Args:
        probs (float|list|numpy.ndarray|Tensor): the probability of 1, in [0, 1].
        name (str, optional): unused, for Paddle compatibility.

    Example:
        >>> b = paddle.distribution.Bernoulli(0.3)
        >>> b.entropy()  # 0.6109
    """

    _display_params = ("probs",)
    _discrete = True

    def __init__(self, probs, name=None):
        (self.probs,), shape = _utils.to_params("Bernoulli", probs=probs)
        _utils.check_unit_interval(self.probs, "Bernoulli", "probs")
        self.name = name if name is not None else "Bernoulli"
        self._dtype = self.probs._data.dtype
        # logits from probs clipped away from 0 and 1, so that they stay finite
        self.logits = self._clipped().log() - (1 - self._clipped()).log()
        super().__init__(shape, ())

    def _clipped(self):
        e = _utils.eps(self._dtype)
        return self.probs.clip(e, 1 - e)

    @property
    def mean(self) -> Tensor:
        """``probs``."""
        return self.probs

    @property
    def variance(self) -> Tensor:
        """``probs (1 - probs)``."""
        return self.probs * (1 - self.probs)

    def sample(self, shape=()) -> Tensor:
        """Draw 0/1 samples (the parameters' float dtype, no gradient).

        Args:
            shape (Sequence[int]): the sample shape.

        Returns:
            Tensor: shape ``shape + batch_shape``.
        """
        full = self._extend_shape(self._sample_shape(shape))
        u = _fr.uniform_array(full, self._dtype, place=self.probs.place)
        return _wrap((u < self.probs._data).astype(self._dtype))

    def rsample(self, shape=(), temperature=1.0) -> Tensor:
        """Relaxed (Gumbel-softmax / binary concrete) samples, differentiable in ``probs``.

        Returns the relaxed logits ``(logit(p) + log(u) - log(1 - u)) / temperature``; as in
        Paddle, follow them with ``paddle.nn.functional.sigmoid`` to get values in (0, 1),
        which tend to Bernoulli draws as the temperature goes to 0.

        Args:
            shape (Sequence[int]): the sample shape.
            temperature (float): the relaxation temperature (> 0).

        Returns:
            Tensor: shape ``shape + batch_shape``.
        """
        if not float(temperature) > 0:
            raise ValueError(f"Bernoulli.rsample: 'temperature' must be positive, got "
                             f"{temperature!r}")
        full = self._extend_shape(self._sample_shape(shape, "rsample"))
        u = _fr.uniform_array(full, self._dtype, place=self.probs.place)
        xp = backend.get_array_module(u)
        u = xp.clip(u, _utils.tiny(self._dtype), 1 - _utils.eps(self._dtype))
        noise = _wrap(xp.log(u) - xp.log1p(-u))
        return (self.logits + noise) / float(temperature)

    def log_prob(self, value) -> Tensor:
        """``value log p + (1 - value) log(1 - p)``.

        Args:
            value (Tensor): 0/1 values.

        Returns:
            Tensor: the log masses.
        """
        value = _utils.to_value(value, self.probs, "Bernoulli.log_prob")
        p = self._clipped()
        return value * p.log() + (1 - value) * (1 - p).log()

    def prob(self, value) -> Tensor:
        """The mass at ``value``."""
        return self.log_prob(value).exp()

    def cdf(self, value) -> Tensor:
        """0 below 0, ``1 - p`` on [0, 1), 1 from 1 on."""
        from .. import where

        value = _utils.to_value(value, self.probs, "Bernoulli.cdf")
        zero = value * 0 + self.probs * 0
        return where(value < 0, zero, where(value < 1, zero + 1 - self.probs, zero + 1))

    def entropy(self) -> Tensor:
        """``-p log p - (1 - p) log(1 - p)``."""
        p = self._clipped()
        return -(p * p.log() + (1 - p) * (1 - p).log())

    @property
    def _natural_parameters(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        from ..nn.functional import softplus

        return softplus(x)

    @property
    def _mean_carrier_measure(self):
        return 0.0


def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    a, b = p._clipped(), q._clipped()
    return a * (a.log() - b.log()) + (1 - a) * ((1 - a).log() - (1 - b).log())


register_kl(Bernoulli, Bernoulli)(_kl_bernoulli_bernoulli)
