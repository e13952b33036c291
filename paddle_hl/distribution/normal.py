"""The normal (Gaussian) distribution."""

from __future__ import annotations

import math

from .. import backend
from ..framework import random as _fr
from ..framework.engine import GRAD
from ..framework.op import apply, op
from ..framework.tensor import Tensor, _wrap
from . import _utils
from .distribution import Distribution, register_kl

__all__ = []

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _normal_log_prob_grad(M, v, loc, scale, out, saved, g):
    # z = (v - loc) / scale is the forward's residual (recomputing it made backward a quarter
    # slower); it is differentiable, so create_graph recomputes it from the Tensors
    z = (v - loc) / scale if M.tensor else saved[0]
    gz = g * (z / scale)
    # g (z^2 - 1) / scale, as gz z - g / scale: one temporary fewer
    return -gz, gz, gz * z - g / scale


# one pass for the common 1-D case instead of five separate ops
@op("normal_log_prob", saves=(), broadcast=True, grad=_normal_log_prob_grad, residuals=True)
def _normal_log_prob(v, loc, scale):
    xp = backend.get_array_module(v)
    # asarray: 0-D operands give NumPy scalars, which cannot take in-place updates
    z = xp.asarray(v - loc)
    z = xp.divide(z, scale, out=z) if z.shape == xp.broadcast_shapes(z.shape, scale.shape) \
        else xp.asarray(z / scale)
    out = xp.asarray(z * z)
    out *= -0.5
    out -= xp.log(scale)
    out -= out.dtype.type(_HALF_LOG_2PI)
    return out, GRAD.save(z)


def _normal_rsample_grad(M, loc, scale, eps, out, g):
    return g, g * eps, None


# The reparameterised draw ``loc + eps * scale``: the gradient reads only the noise.
@op("normal_rsample", saves=(2,), broadcast=True, grad=_normal_rsample_grad)
def _normal_rsample(loc, scale, eps):
    xp = backend.get_array_module(eps)
    out = xp.asarray(eps * scale)
    out += loc
    return out, GRAD


class Normal(Distribution):
    r"""The normal distribution with mean ``loc`` and standard deviation ``scale``.

    .. math:: p(x) = \frac{1}{\sqrt{2\pi}\sigma} e^{-\frac{(x-\mu)^2}{2\sigma^2}}

    ``loc`` and ``scale`` broadcast against each other; their broadcast shape is the batch
    shape (real Paddle 2.6 takes loc's shape alone, so a wider scale gave a wrong batch_shape).
    Numbers and lists give float32; float64 arrays or tensors give float64.

    Args:
        loc (float|list|numpy.ndarray|Tensor): the mean.
        scale (float|list|numpy.ndarray|Tensor): the standard deviation (> 0).
        name (str, optional): unused, for Paddle compatibility.

    Example:
        >>> d = paddle.distribution.Normal(0.0, 1.0)
        >>> d.log_prob(paddle.to_tensor(0.5))  # -1.0439
    """

    _display_params = ("loc", "scale")

    def __init__(self, loc, scale, name=None):
        (self.loc, self.scale), shape = _utils.to_params("Normal", loc=loc, scale=scale)
        _utils.check_positive(self.scale, "Normal", "scale")
        self.name = name if name is not None else "Normal"
        self._dtype = self.loc._data.dtype
        super().__init__(shape, ())

    @property
    def mean(self) -> Tensor:
        """The mean, ``loc``."""
        return self.loc

    @property
    def stddev(self) -> Tensor:
        """The standard deviation, ``scale``."""
        return self.scale

    @property
    def variance(self) -> Tensor:
        """The variance, ``scale ** 2``."""
        return self.scale * self.scale

    def _eps(self, shape, seed=0):
        full = self._extend_shape(shape)
        gen = _fr.local_generator(seed, self.loc.place) if seed else None
        return _fr.normal_array(full, self._dtype, place=self.loc.place, gen=gen)

    def sample(self, shape=(), seed=0) -> Tensor:
        """Draw samples (no gradient).

        Args:
            shape (Sequence[int]): the sample shape.
            seed (int): 0 draws from the global generator; another value from a private
                generator with that seed.

        Returns:
            Tensor: shape ``shape + batch_shape``, the parameters' dtype.
        """
        eps = self._eps(self._sample_shape(shape), seed)
        xp = backend.get_array_module(eps)
        out = xp.asarray(eps * self.scale._data)
        out += self.loc._data
        return _wrap(out)

    def rsample(self, shape=()) -> Tensor:
        """Reparameterised samples ``loc + scale * eps`` (differentiable in loc and scale).

        Args:
            shape (Sequence[int]): the sample shape.

        Returns:
            Tensor: shape ``shape + batch_shape``.
        """
        eps = self._eps(self._sample_shape(shape, "rsample"))
        return apply(_normal_rsample, self.loc, self.scale, eps)

    def entropy(self) -> Tensor:
        """``0.5 + 0.5 log(2 pi) + log(scale)`` for each distribution of the batch."""
        return self.scale.log() + (0.5 + _HALF_LOG_2PI)

    def log_prob(self, value) -> Tensor:
        """The log density at ``value`` (cast to the parameters' dtype).

        Args:
            value (Tensor): the points; broadcast against the batch.

        Returns:
            Tensor: the log densities.
        """
        value = _utils.to_value(value, self.loc, "Normal.log_prob")
        return apply(_normal_log_prob, value, self.loc, self.scale)

    def probs(self, value) -> Tensor:
        """The density at ``value``."""
        return self.prob(value)

    def cdf(self, value) -> Tensor:
        """The cumulative distribution function at ``value``."""
        value = _utils.to_value(value, self.loc, "Normal.cdf")
        return 0.5 * (1 + ((value - self.loc) / (self.scale * math.sqrt(2))).erf())

    def icdf(self, value) -> Tensor:
        """The quantile function at probabilities ``value``."""
        value = _utils.to_value(value, self.loc, "Normal.icdf")
        return self.loc + self.scale * math.sqrt(2) * (2 * value - 1).erfinv()

    def kl_divergence(self, other) -> Tensor:
        """KL(self || other) for another Normal (or any registered pair)."""
        return super().kl_divergence(other)


def _kl_normal_normal(p: Normal, q: Normal) -> Tensor:
    ratio = p.scale / q.scale
    diff = (p.loc - q.loc) / q.scale
    return 0.5 * (ratio * ratio + diff * diff - 1) - ratio.log()


register_kl(Normal, Normal)(_kl_normal_normal)
