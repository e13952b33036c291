"""A distribution pushed through a chain of transforms."""

from __future__ import annotations

from ..framework.tensor import Tensor
from . import _utils
from .distribution import Distribution
from .independent import Independent
from .transform import ChainTransform, Transform, set_distribution_type

__all__ = []


class TransformedDistribution(Distribution):
    """The law of ``y = f_n(...f_1(x))`` for ``x ~ base``.

    ``log_prob(y) = base.log_prob(x) - sum_i log|det J_{f_i}|`` with x recovered through the
    inverses. When the transforms need more event axes than base has, base's rightmost batch
    axes are reinterpreted as event axes (as :class:`Independent` does).

    Args:
        base (Distribution): the base distribution.
        transforms (Sequence[Transform]): the transforms, applied first to last.

    Example:
        >>> d = paddle.distribution.TransformedDistribution(
        ...     paddle.distribution.Normal(0.0, 1.0), [paddle.distribution.ExpTransform()])
        >>> d.log_prob(paddle.to_tensor(1.0))  # the log-normal density at 1: -0.9189
    """

    def __init__(self, base, transforms):
        if not isinstance(base, Distribution):
            raise TypeError(f"TransformedDistribution: 'base' must be a Distribution, got "
                            f"{type(base).__name__}")
        if not isinstance(transforms, (list, tuple)):
            raise TypeError(f"TransformedDistribution: 'transforms' must be a list or tuple of "
                            f"Transform, got {type(transforms).__name__}")
        for i, t in enumerate(transforms):
            if not isinstance(t, Transform):
                raise TypeError(f"TransformedDistribution: transforms[{i}] must be a "
                                f"Transform, got {type(t).__name__}")
        self._base = base
        self._transforms = list(transforms)
        chain = ChainTransform(self._transforms)
        self._chain = chain
        d_in, d_out = chain._domain.event_rank, chain._codomain.event_rank
        base_shape = base.batch_shape + base.event_shape
        if len(base_shape) < d_in:
            raise ValueError(f"TransformedDistribution: the transforms need at least {d_in} "
                             f"event axes, but base has shape {list(base_shape)}")
        if d_in > len(base.event_shape):
            self._base = Independent(base, d_in - len(base.event_shape))
        out_shape = chain.forward_shape(base_shape)
        event_rank = max(d_out, len(self._base.event_shape) + d_out - d_in)
        cut = len(out_shape) - event_rank
        self._dtype = getattr(base, "_dtype", None)
        super().__init__(out_shape[:cut], out_shape[cut:])

    @property
    def base(self):
        return self._base

    @property
    def transforms(self):
        return self._transforms

    def sample(self, shape=()) -> Tensor:
        """Transformed draws of base (no gradient).

        Args:
            shape (Sequence[int]): the sample shape.

        Returns:
            Tensor: shape ``shape + batch_shape + event_shape``.
        """
        from .. import no_grad

        with no_grad():
            x = self._base.sample(shape)
            return self._chain.forward(x).detach()

    def rsample(self, shape=()) -> Tensor:
        """Transformed reparameterised draws of base (differentiable)."""
        return self._chain.forward(self._base.rsample(shape))

    def log_prob(self, value) -> Tensor:
        """The log density, by the change-of-variables formula.

        Args:
            value (Tensor): the points.

        Returns:
            Tensor: the log densities, shape ``value.shape`` without the event axes.
        """
        value = _utils.to_value_dtype(value, self._dtype, f"{type(self).__name__}.log_prob")
        y = value
        event_rank = len(self.event_shape)
        lp = 0.0
        for t in reversed(self._transforms):
            x = t.inverse(y)
            event_rank += t._domain.event_rank - t._codomain.event_rank
            lp = lp - _utils.sum_rightmost(t.forward_log_det_jacobian(x),
                                           event_rank - t._domain.event_rank)
            y = x
        return lp + _utils.sum_rightmost(self._base.log_prob(y),
                                         event_rank - len(self._base.event_shape))

    def prob(self, value) -> Tensor:
        """The density at ``value``."""
        return self.log_prob(value).exp()


set_distribution_type(TransformedDistribution)
