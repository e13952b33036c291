"""Transforms of random variables: forward/inverse maps, log-det-Jacobians and shapes.

A transform ``f`` maps ``x`` to ``y = f(x)``. ``forward_log_det_jacobian(x)`` is
``log|det df/dx|``, summed over the transform's event axes (``_domain.event_rank`` trailing axes
of x), so its shape is x's shape without those axes. Every map is written with paddle_hl's
differentiable ops, so gradients flow through forward, inverse and the log-det-Jacobians.
"""

from __future__ import annotations

import enum
import math
import numbers

import numpy as np

from ..framework.tensor import Tensor
from . import _utils
from .distribution import Distribution

__all__ = []

# What a Transform called on a distribution builds: TransformedDistribution, which is made of
# this module's transforms, hands its class over when it loads (set_distribution_type).
_transformed = {}


def set_distribution_type(cls):
    """Called once by transformed_distribution.py with ``TransformedDistribution``."""
    _transformed["cls"] = cls


class Type(enum.Enum):
    """How a transform maps its domain: one-to-one and onto, one-to-one, onto, or neither."""

    BIJECTION = "bijection"
    INJECTION = "injection"
    SURJECTION = "surjection"
    OTHER = "other"

    @classmethod
    def is_injective(cls, t) -> bool:
        return t in (cls.BIJECTION, cls.INJECTION)


class _Variable:
    """The domain or codomain of a transform: a name, an event rank and a membership test."""

    def __init__(self, name: str, event_rank: int = 0, test=None):
        self.name = name
        self.event_rank = int(event_rank)
        self._test = test

    def constraint(self, value: Tensor) -> Tensor:
        """A boolean Tensor: whether each value lies in this set."""
        if self._test is None:
            return value == value
        return self._test(value)

    def __repr__(self):
        return f"{self.name}(event_rank={self.event_rank})"


def _real(rank=0):
    return _Variable("Real", rank, lambda v: v == v)


def _positive(rank=0):
    return _Variable("Positive", rank, lambda v: v > 0)


def _interval(lo, hi, rank=0):
    return _Variable(f"Interval({lo}, {hi})", rank, lambda v: (v > lo) & (v < hi))


def _simplex():
    return _Variable("Simplex", 1, lambda v: ((v >= 0).all(axis=-1))
                     & ((v.sum(axis=-1) - 1).abs() < 1e-6))


def _tensor(x, op, arg):
    if isinstance(x, Tensor):
        return x
    raise TypeError(f"{op}: '{arg}' must be a Tensor, got {type(x).__name__}")


def _as_tensor(x, op, arg):
    """Transform parameters: a Tensor (kept) or a number/array (float32 unless float64)."""
    return _utils.to_param(x, op, arg)


class Transform:
    """Base class of the transforms of random variables.

    Subclasses define ``_forward``, ``_inverse`` and one of ``_forward_log_det_jacobian`` /
    ``_inverse_log_det_jacobian`` (the other follows); ``_domain`` / ``_codomain`` give the
    event ranks. Calling a transform on a Tensor applies ``forward``; on a Distribution it
    builds a :class:`TransformedDistribution`; on a Transform, the chain (argument first).

    Example:
        >>> t = paddle.distribution.ExpTransform()
        >>> t.forward(paddle.to_tensor([0.0, 1.0]))  # [1.0, 2.7183]
    """

    _type = Type.INJECTION

    def __init__(self):
        pass

    @property
    def _domain(self):
        return _real(0)

    @property
    def _codomain(self):
        return _real(0)

    @classmethod
    def _is_injective(cls) -> bool:
        return Type.is_injective(cls._type)

    def __call__(self, input):  # noqa: A002
        if isinstance(input, Distribution):
            return _transformed["cls"](input, [self])
        if isinstance(input, Transform):
            return ChainTransform([input, self])
        return self.forward(input)

    def forward(self, x) -> Tensor:
        """Map x to y = f(x).

        Args:
            x (Tensor): the input, with at least ``_domain.event_rank`` axes.

        Returns:
            Tensor: y.
        """
        x = _tensor(x, f"{type(self).__name__}.forward", "x")
        self._check_rank(x, self._domain.event_rank, "forward", "x")
        return self._forward(x)

    def inverse(self, y) -> Tensor:
        """Map y back to x = f^-1(y).

        Args:
            y (Tensor): a value of the codomain.

        Returns:
            Tensor: x.
        """
        y = _tensor(y, f"{type(self).__name__}.inverse", "y")
        self._check_rank(y, self._codomain.event_rank, "inverse", "y")
        return self._inverse(y)

    def forward_log_det_jacobian(self, x) -> Tensor:
        """``log|det J_f(x)|``, summed over the event axes.

        Args:
            x (Tensor): the input.

        Returns:
            Tensor: shape of x without its ``_domain.event_rank`` trailing axes.
        """
        name = type(self).__name__
        x = _tensor(x, f"{name}.forward_log_det_jacobian", "x")
        self._check_rank(x, self._domain.event_rank, "forward_log_det_jacobian", "x")
        if not self._is_injective():
            raise NotImplementedError(
                f"{name}.forward_log_det_jacobian: the log-det-Jacobian is not defined for a "
                f"transform that is not injective ({self._type.value})")
        if type(self)._forward_log_det_jacobian is not Transform._forward_log_det_jacobian:
            return self._forward_log_det_jacobian(x)
        return -self._inverse_log_det_jacobian(self._forward(x))

    def inverse_log_det_jacobian(self, y) -> Tensor:
        """``log|det J_{f^-1}(y)|``, summed over the event axes.

        Args:
            y (Tensor): a value of the codomain.

        Returns:
            Tensor: shape of y without its ``_codomain.event_rank`` trailing axes.
        """
        name = type(self).__name__
        y = _tensor(y, f"{name}.inverse_log_det_jacobian", "y")
        self._check_rank(y, self._codomain.event_rank, "inverse_log_det_jacobian", "y")
        if type(self)._inverse_log_det_jacobian is not Transform._inverse_log_det_jacobian:
            return self._inverse_log_det_jacobian(y)
        if not self._is_injective():
            raise NotImplementedError(
                f"{name}.inverse_log_det_jacobian: the log-det-Jacobian is not defined for a "
                f"transform that is not injective ({self._type.value})")
        return -self._forward_log_det_jacobian(self._inverse(y))

    def forward_shape(self, shape) -> tuple:
        """The shape of ``forward(x)`` for x of ``shape``."""
        shape = _utils.shape_tuple(shape, f"{type(self).__name__}.forward_shape")
        return self._forward_shape(shape)

    def inverse_shape(self, shape) -> tuple:
        """The shape of ``inverse(y)`` for y of ``shape``."""
        shape = _utils.shape_tuple(shape, f"{type(self).__name__}.inverse_shape")
        return self._inverse_shape(shape)

    # subclasses override these
    def _forward(self, x):
        raise NotImplementedError(f"{type(self).__name__} does not define forward")

    def _inverse(self, y):
        raise NotImplementedError(f"{type(self).__name__} does not define inverse")

    def _forward_log_det_jacobian(self, x):
        raise NotImplementedError(
            f"{type(self).__name__} defines neither _forward_log_det_jacobian nor "
            "_inverse_log_det_jacobian")

    def _inverse_log_det_jacobian(self, y):
        return -self._forward_log_det_jacobian(self._inverse(y))

    def _forward_shape(self, shape):
        return shape

    def _inverse_shape(self, shape):
        return shape

    def _check_rank(self, x, rank, op, arg):
        if x.ndim < rank:
            raise ValueError(f"{type(self).__name__}.{op}: '{arg}' must have at least {rank} "
                             f"axes (the event rank), got shape {x.shape}")

    def __repr__(self):
        return f"{type(self).__name__}()"


class AbsTransform(Transform):
    """``y = |x|``. Not injective: ``inverse(y)`` returns the two preimages ``(-y, y)``.

    Example:
        >>> paddle.distribution.AbsTransform().forward(paddle.to_tensor([-1.0, 2.0]))  # [1, 2]
    """

    _type = Type.SURJECTION

    @property
    def _codomain(self):
        return _positive(0)

    def _forward(self, x):
        return x.abs()

    def _inverse(self, y):
        return -y, y

    def _inverse_log_det_jacobian(self, y):
        from .. import zeros_like

        z = zeros_like(y)
        return z, z


class AffineTransform(Transform):
    """``y = loc + scale * x``.

    The log-det-Jacobian ``log|scale|`` is broadcast to x's shape (real Paddle 2.6 returns it
    with the parameters' shape only, which then breaks sums and stacks of log-det-Jacobians).

    Args:
        loc (Tensor): the shift.
        scale (Tensor): the scale (non-zero).

    Example:
        >>> t = paddle.distribution.AffineTransform(paddle.to_tensor(1.), paddle.to_tensor(2.))
        >>> t.forward(paddle.to_tensor([0.0, 1.0]))  # [1.0, 3.0]
    """

    _type = Type.BIJECTION

    def __init__(self, loc, scale):
        super().__init__()
        self._loc = _as_tensor(loc, "AffineTransform", "loc")
        self._scale = _as_tensor(scale, "AffineTransform", "scale")

    @property
    def loc(self):
        return self._loc

    @property
    def scale(self):
        return self._scale

    def _forward(self, x):
        return self._loc + self._scale * x

    def _inverse(self, y):
        return (y - self._loc) / self._scale

    def _forward_log_det_jacobian(self, x):
        from .. import broadcast_shape, broadcast_to

        ldj = self._scale.abs().log()
        shape = broadcast_shape(broadcast_shape(x.shape, self._loc.shape), ldj.shape)
        return broadcast_to(ldj, shape) if list(ldj.shape) != list(shape) else ldj

    def _inverse_log_det_jacobian(self, y):
        return -self._forward_log_det_jacobian(y)

    def _forward_shape(self, shape):
        from .. import broadcast_shape

        return tuple(broadcast_shape(broadcast_shape(list(shape), self._loc.shape),
                                     self._scale.shape))

    _inverse_shape = _forward_shape


class ExpTransform(Transform):
    """``y = exp(x)``.

    Example:
        >>> paddle.distribution.ExpTransform().inverse(paddle.to_tensor([1.0]))  # [0.0]
    """

    _type = Type.BIJECTION

    @property
    def _codomain(self):
        return _positive(0)

    def _forward(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def _forward_log_det_jacobian(self, x):
        return x

    def _inverse_log_det_jacobian(self, y):
        return -y.log()


class PowerTransform(Transform):
    """``y = x ** power`` on the positive reals.

    Args:
        power (Tensor|float): the exponent. A float64 input with a float32 power computes in
            float64 (real Paddle 2.6 raises a dtype error there).

    Example:
        >>> t = paddle.distribution.PowerTransform(paddle.to_tensor(2.))
        >>> t.forward(paddle.to_tensor([3.0]))  # [9.0]
    """

    _type = Type.BIJECTION

    def __init__(self, power):
        super().__init__()
        self._power = _as_tensor(power, "PowerTransform", "power")

    @property
    def power(self):
        return self._power

    @property
    def _codomain(self):
        return _positive(0)

    def _p(self, x):
        p = self._power
        return p if p.dtype == x.dtype else p.astype(x.dtype)

    def _forward(self, x):
        return x.pow(self._p(x)) if self._power.ndim else x ** self._p(x)

    def _inverse(self, y):
        return y ** (1 / self._p(y))

    def _forward_log_det_jacobian(self, x):
        p = self._p(x)
        return (p * x ** (p - 1)).abs().log()

    def _forward_shape(self, shape):
        from .. import broadcast_shape

        return tuple(broadcast_shape(list(shape), self._power.shape))

    _inverse_shape = _forward_shape


class SigmoidTransform(Transform):
    """``y = sigmoid(x) = 1 / (1 + exp(-x))``; inverse ``log(y) - log(1 - y)``.

    Example:
        >>> paddle.distribution.SigmoidTransform().forward(paddle.to_tensor([0.0]))  # [0.5]
    """

    _type = Type.BIJECTION

    @property
    def _codomain(self):
        return _interval(0.0, 1.0)

    def _forward(self, x):
        from ..nn.functional import sigmoid

        return sigmoid(x)

    def _inverse(self, y):
        return y.log() - (-y).log1p()

    def _forward_log_det_jacobian(self, x):
        from ..nn.functional import softplus

        return -softplus(-x) - softplus(x)


class TanhTransform(Transform):
    """``y = tanh(x)``; log-det-Jacobian ``2 (log 2 - x - softplus(-2x))`` (stable for large x).

    Example:
        >>> paddle.distribution.TanhTransform().inverse(paddle.to_tensor([0.5]))  # [0.5493]
    """

    _type = Type.BIJECTION

    @property
    def _codomain(self):
        return _interval(-1.0, 1.0)

    def _forward(self, x):
        return x.tanh()

    def _inverse(self, y):
        return y.atanh()

    def _forward_log_det_jacobian(self, x):
        from ..nn.functional import softplus

        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class SoftmaxTransform(Transform):
    """``y = softmax(x)`` over the last axis; inverse ``log(y)`` (a representative preimage).

    Not injective (adding a constant to x gives the same y), so it has no log-det-Jacobian.

    Example:
        >>> paddle.distribution.SoftmaxTransform().forward(paddle.zeros([2]))  # [0.5, 0.5]
    """

    _type = Type.OTHER

    @property
    def _domain(self):
        return _real(1)

    @property
    def _codomain(self):
        return _simplex()

    def _forward(self, x):
        from ..nn.functional import softmax

        return softmax(x, axis=-1)

    def _inverse(self, y):
        return y.log()

    def _forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError(f"SoftmaxTransform.forward_shape: the shape needs at least one "
                             f"axis, got {list(shape)}")
        return shape

    _inverse_shape = _forward_shape


class StickBreakingTransform(Transform):
    """Maps ``R^K`` onto the ``K``-simplex in ``R^{K+1}`` by stick breaking.

    ``z_i = sigmoid(x_i - log(K - i))``, ``y_i = z_i * prod_{j<i}(1 - z_j)`` and the last
    element takes what is left. Works on any number of leading batch axes.

    Example:
        >>> t = paddle.distribution.StickBreakingTransform()
        >>> t.forward(paddle.zeros([2])).sum()  # 1.0
    """

    _type = Type.BIJECTION

    @property
    def _domain(self):
        return _real(1)

    @property
    def _codomain(self):
        return _simplex()

    def _offset_log(self, x):
        from .. import to_tensor

        k = x.shape[-1]
        return to_tensor(np.log(np.arange(k, 0, -1, dtype=np.float64)).astype(
            np.dtype(x._data.dtype)))

    def _forward(self, x):
        from .. import concat, cumprod, ones
        from ..nn.functional import sigmoid

        z = sigmoid(x - self._offset_log(x))
        rest = cumprod(1 - z, dim=-1)
        lead = list(x.shape[:-1]) + [1]
        one = ones(lead, dtype=x.dtype)
        return concat([z, one], axis=-1) * concat([one, rest], axis=-1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        # the stick left before piece i: 1 - sum_{j<i} y_j
        left = 1 - y_crop.cumsum(axis=-1) + y_crop
        return y_crop.log() - (left - y_crop).log() + self._offset_log(y_crop)

    def _forward_log_det_jacobian(self, x):
        from ..nn.functional import log_sigmoid

        xs = x - self._offset_log(x)
        y = self._forward(x)
        return (-xs + log_sigmoid(xs) + y[..., :-1].log()).sum(axis=-1)

    def _forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("StickBreakingTransform.forward_shape: the shape needs at least "
                             f"one axis, got {list(shape)}")
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def _inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("StickBreakingTransform.inverse_shape: the shape needs at least "
                             f"one axis, got {list(shape)}")
        return tuple(shape[:-1]) + (shape[-1] - 1,)


class ChainTransform(Transform):
    """The composition of ``transforms``, applied first to last.

    Log-det-Jacobians of the parts are summed over the axes that are events of the chain but
    not of the part, so parts of different event ranks compose.

    Args:
        transforms (Sequence[Transform]): the parts.

    Example:
        >>> t = paddle.distribution.ChainTransform(
        ...     [paddle.distribution.AffineTransform(paddle.to_tensor(0.), paddle.to_tensor(2.)),
        ...      paddle.distribution.ExpTransform()])
        >>> t.forward(paddle.to_tensor([1.0]))  # exp(2) = [7.3891]
    """

    def __init__(self, transforms):
        super().__init__()
        if not isinstance(transforms, (list, tuple)):
            raise TypeError(f"ChainTransform: 'transforms' must be a list or tuple of "
                            f"Transform, got {type(transforms).__name__}")
        for i, t in enumerate(transforms):
            if not isinstance(t, Transform):
                raise TypeError(f"ChainTransform: transforms[{i}] must be a Transform, got "
                                f"{type(t).__name__}")
        self.transforms = list(transforms)

    @property
    def _type(self):
        if all(t._type == Type.BIJECTION for t in self.transforms):
            return Type.BIJECTION
        if all(t._is_injective() for t in self.transforms):
            return Type.INJECTION
        return Type.OTHER

    def _is_injective(self):
        return Type.is_injective(self._type)

    @property
    def _domain(self):
        if not self.transforms:
            return _real(0)
        # walk back from the event rank the last part produces
        rank = self.transforms[-1]._codomain.event_rank
        for t in reversed(self.transforms):
            rank += t._domain.event_rank - t._codomain.event_rank
            rank = max(rank, t._domain.event_rank)
        return _Variable("Independent", rank)

    @property
    def _codomain(self):
        if not self.transforms:
            return _real(0)
        # walk forward from the event rank the first part consumes
        rank = self.transforms[0]._domain.event_rank
        for t in self.transforms:
            rank += t._codomain.event_rank - t._domain.event_rank
            rank = max(rank, t._codomain.event_rank)
        return _Variable("Independent", rank)

    def _forward(self, x):
        for t in self.transforms:
            x = t.forward(x)
        return x

    def _inverse(self, y):
        for t in reversed(self.transforms):
            y = t.inverse(y)
        return y

    def _forward_log_det_jacobian(self, x):
        total = 0.0
        rank = self._domain.event_rank
        for t in self.transforms:
            total = total + _utils.sum_rightmost(t.forward_log_det_jacobian(x),
                                                 rank - t._domain.event_rank)
            x = t.forward(x)
            rank += t._codomain.event_rank - t._domain.event_rank
        if not isinstance(total, Tensor):
            from .. import zeros

            total = zeros(x.shape[:x.ndim - rank] if rank else x.shape, dtype=x.dtype)
        return total

    def _forward_shape(self, shape):
        for t in self.transforms:
            shape = t.forward_shape(shape)
        return shape

    def _inverse_shape(self, shape):
        for t in reversed(self.transforms):
            shape = t.inverse_shape(shape)
        return shape


class IndependentTransform(Transform):
    """``base`` with its ``reinterpreted_batch_rank`` rightmost batch axes made event axes.

    The forward and inverse maps are base's; the log-det-Jacobian is summed over those axes.

    Args:
        base (Transform): the transform.
        reinterpreted_batch_rank (int): how many batch axes become event axes (> 0).

    Example:
        >>> t = paddle.distribution.IndependentTransform(paddle.distribution.ExpTransform(), 1)
        >>> t.forward_log_det_jacobian(paddle.ones([2, 3])).shape  # [2]
    """

    def __init__(self, base, reinterpreted_batch_rank):
        super().__init__()
        if not isinstance(base, Transform):
            raise TypeError(f"IndependentTransform: 'base' must be a Transform, got "
                            f"{type(base).__name__}")
        r = reinterpreted_batch_rank
        if not isinstance(r, numbers.Integral) or isinstance(r, bool) or r <= 0:
            raise ValueError(f"IndependentTransform: 'reinterpreted_batch_rank' must be an int "
                             f"greater than zero, got {r!r}")
        self._base = base
        self._reinterpreted_batch_rank = int(r)

    @property
    def _type(self):
        return self._base._type

    def _is_injective(self):
        return self._base._is_injective()

    @property
    def _domain(self):
        return _Variable("Independent",
                         self._base._domain.event_rank + self._reinterpreted_batch_rank)

    @property
    def _codomain(self):
        return _Variable("Independent",
                         self._base._codomain.event_rank + self._reinterpreted_batch_rank)

    def _forward(self, x):
        return self._base.forward(x)

    def _inverse(self, y):
        return self._base.inverse(y)

    def _forward_log_det_jacobian(self, x):
        return _utils.sum_rightmost(self._base.forward_log_det_jacobian(x),
                                    self._reinterpreted_batch_rank)

    def _forward_shape(self, shape):
        return self._base.forward_shape(shape)

    def _inverse_shape(self, shape):
        return self._base.inverse_shape(shape)


class ReshapeTransform(Transform):
    """Reshapes the event part of x from ``in_event_shape`` to ``out_event_shape``.

    Args:
        in_event_shape (Sequence[int]): the input event shape.
        out_event_shape (Sequence[int]): the output event shape (same number of elements).

    Example:
        >>> t = paddle.distribution.ReshapeTransform((2, 3), (3, 2))
        >>> t.forward(paddle.ones([4, 2, 3])).shape  # [4, 3, 2]
    """

    _type = Type.BIJECTION

    def __init__(self, in_event_shape, out_event_shape):
        super().__init__()
        self._in_event_shape = _utils.shape_tuple(in_event_shape, "ReshapeTransform",
                                                  "in_event_shape")
        self._out_event_shape = _utils.shape_tuple(out_event_shape, "ReshapeTransform",
                                                   "out_event_shape")
        a = int(np.prod(self._in_event_shape))
        b = int(np.prod(self._out_event_shape))
        if a != b:
            raise ValueError(f"ReshapeTransform: 'in_event_shape' {list(self._in_event_shape)} "
                             f"has {a} elements but 'out_event_shape' "
                             f"{list(self._out_event_shape)} has {b}")

    @property
    def in_event_shape(self):
        return self._in_event_shape

    @property
    def out_event_shape(self):
        return self._out_event_shape

    @property
    def _domain(self):
        return _Variable("Independent", len(self._in_event_shape))

    @property
    def _codomain(self):
        return _Variable("Independent", len(self._out_event_shape))

    def _swap(self, shape, src, dst, op):
        n = len(src)
        if tuple(shape[len(shape) - n:]) != src or len(shape) < n:
            raise ValueError(f"ReshapeTransform.{op}: the event shape must be {list(src)}, "
                             f"got shape {list(shape)}")
        return tuple(shape[:len(shape) - n]) + dst

    def _forward(self, x):
        return x.reshape(list(self._swap(tuple(x.shape), self._in_event_shape,
                                         self._out_event_shape, "forward")))

    def _inverse(self, y):
        return y.reshape(list(self._swap(tuple(y.shape), self._out_event_shape,
                                         self._in_event_shape, "inverse")))

    def _forward_log_det_jacobian(self, x):
        from .. import zeros

        shape = self._swap(tuple(x.shape), self._in_event_shape, self._out_event_shape,
                           "forward_log_det_jacobian")
        return zeros(list(shape[:len(shape) - len(self._out_event_shape)]), dtype=x.dtype)

    def _forward_shape(self, shape):
        return self._swap(tuple(shape), self._in_event_shape, self._out_event_shape,
                          "forward_shape")

    def _inverse_shape(self, shape):
        return self._swap(tuple(shape), self._out_event_shape, self._in_event_shape,
                          "inverse_shape")


class StackTransform(Transform):
    """Applies ``transforms[i]`` to slice ``i`` of x along ``axis`` and stacks the results.

    Args:
        transforms (Sequence[Transform]): one transform per slice.
        axis (int): the axis to split and stack along.

    Example:
        >>> t = paddle.distribution.StackTransform(
        ...     [paddle.distribution.ExpTransform(), paddle.distribution.AbsTransform()], 1)
        >>> t.forward(paddle.to_tensor([[0.0, -2.0]]))  # [[1.0, 2.0]]
    """

    def __init__(self, transforms, axis=0):
        super().__init__()
        if not isinstance(transforms, (list, tuple)) or not transforms:
            raise TypeError("StackTransform: 'transforms' must be a non-empty list or tuple of "
                            "Transform")
        for i, t in enumerate(transforms):
            if not isinstance(t, Transform):
                raise TypeError(f"StackTransform: transforms[{i}] must be a Transform, got "
                                f"{type(t).__name__}")
        if not isinstance(axis, numbers.Integral) or isinstance(axis, bool):
            raise TypeError(f"StackTransform: 'axis' must be an int, got {type(axis).__name__}")
        self._transforms = list(transforms)
        self._axis = int(axis)

    @property
    def transforms(self):
        return self._transforms

    @property
    def axis(self):
        return self._axis

    @property
    def _type(self):
        if all(t._type == Type.BIJECTION for t in self._transforms):
            return Type.BIJECTION
        if all(t._is_injective() for t in self._transforms):
            return Type.INJECTION
        return Type.OTHER

    def _is_injective(self):
        return Type.is_injective(self._type)

    @property
    def _domain(self):
        return _Variable("Stack", max(t._domain.event_rank for t in self._transforms))

    @property
    def _codomain(self):
        return _Variable("Stack", max(t._codomain.event_rank for t in self._transforms))

    def _slices(self, x, op):
        from .. import unstack

        n = len(self._transforms)
        if not -x.ndim <= self._axis < x.ndim:
            raise ValueError(f"StackTransform.{op}: axis {self._axis} is out of range for an "
                             f"input of shape {x.shape}")
        if x.shape[self._axis] != n:
            raise ValueError(f"StackTransform.{op}: the input has {x.shape[self._axis]} "
                             f"slices along axis {self._axis}, but there are {n} transforms")
        return unstack(x, axis=self._axis)

    def _map(self, x, op, fn):
        from .. import stack

        return stack([fn(t, v) for t, v in zip(self._transforms, self._slices(x, op))],
                     axis=self._axis)

    def _forward(self, x):
        return self._map(x, "forward", lambda t, v: t.forward(v))

    def _inverse(self, y):
        return self._map(y, "inverse", lambda t, v: t.inverse(v))

    def _forward_log_det_jacobian(self, x):
        from .. import broadcast_to

        def ldj(t, v):
            r = t.forward_log_det_jacobian(v)
            return r if list(r.shape) == list(v.shape) else broadcast_to(r, v.shape)

        return self._map(x, "forward_log_det_jacobian", ldj)

    def _inverse_log_det_jacobian(self, y):
        from .. import broadcast_to

        def ldj(t, v):
            r = t.inverse_log_det_jacobian(v)
            return r if list(r.shape) == list(v.shape) else broadcast_to(r, v.shape)

        return self._map(y, "inverse_log_det_jacobian", ldj)
