"""The log-normal distribution."""

from __future__ import annotations

from ..framework.tensor import Tensor
from . import _utils
from .distribution import register_kl
from .normal import Normal, _kl_normal_normal
from .transform import ExpTransform
from .transformed_distribution import TransformedDistribution

__all__ = []


class LogNormal(TransformedDistribution):
    r"""The law of ``exp(x)`` for ``x ~ Normal(loc, scale)``.

    .. math:: p(y) = \frac{1}{y \sigma \sqrt{2\pi}} e^{-\frac{(\log y - \mu)^2}{2\sigma^2}}

    Args:
        loc (float|list|numpy.ndarray|Tensor): the mean of log(y).
        scale (float|list|numpy.ndarray|Tensor): the standard deviation of log(y) (> 0).

    Example:
        >>> d = paddle.distribution.LogNormal(0.0, 1.0)
        >>> d.mean  # exp(0.5) = 1.6487
    """

    _display_params = ("loc", "scale")

    def __init__(self, loc, scale):
        (loc, scale), _ = _utils.to_params("LogNormal", loc=loc, scale=scale)
        _utils.check_positive(scale, "LogNormal", "scale")
        self._base_normal = Normal(loc, scale)
        self.loc = self._base_normal.loc
        self.scale = self._base_normal.scale
        super().__init__(self._base_normal, [ExpTransform()])

    @property
    def mean(self) -> Tensor:
        """``exp(loc + scale^2 / 2)``."""
        return (self.loc + self.scale * self.scale / 2).exp()

    @property
    def variance(self) -> Tensor:
        """``(exp(scale^2) - 1) exp(2 loc + scale^2)``."""
        s2 = self.scale * self.scale
        return s2.expm1() * (2 * self.loc + s2).exp()

    def entropy(self) -> Tensor:
        """``loc + 1/2 + log(scale) + log(2 pi) / 2``."""
        return self._base_normal.entropy() + self.loc

    def log_prob(self, value) -> Tensor:
        """The log density at ``value`` (> 0)."""
        return super().log_prob(value)

    def probs(self, value) -> Tensor:
        """The density at ``value``."""
        return self.prob(value)

    def cdf(self, value) -> Tensor:
        """The cumulative distribution function ``Phi((log value - loc) / scale)``."""
        value = _utils.to_value(value, self.loc, "LogNormal.cdf")
        return self._base_normal.cdf(value.log())

    def kl_divergence(self, other) -> Tensor:
        """KL(self || other) for another LogNormal (that of the underlying normals)."""
        return super().kl_divergence(other)


def _kl_lognormal_lognormal(p: LogNormal, q: LogNormal) -> Tensor:
    return _kl_normal_normal(p._base_normal, q._base_normal)


register_kl(LogNormal, LogNormal)(_kl_lognormal_lognormal)
