"""The Initializer base class, fan computation, gains and the global initializer."""

from __future__ import annotations

import math
import numbers

import numpy as np

from ...framework import place as _pl
from ...framework.tensor import Tensor, writable

__all__ = []


class Initializer:
    """Base class of parameter initializers.

    An initializer is called as ``init(param, block=None)``: it fills ``param`` in place, in the
    parameter's dtype and on its device, and returns None (dygraph mode has no init op).
    Subclasses implement :meth:`_values` (the new values as an array) or :meth:`forward`.
    """

    def __call__(self, param, block=None):
        return self.forward(param, block)

    def forward(self, param, block=None):
        """Fill ``param`` in place (see the class docstring)."""
        where = type(self).__name__
        if not isinstance(param, Tensor):
            raise TypeError(f"{where}: expected a Tensor (Parameter) to initialise, got "
                            f"{type(param).__name__}")
        arr = param._data
        values = self._values(tuple(arr.shape), arr.dtype, _pl.place_of(arr))
        _fill(param, values)
        return None

    def _values(self, shape, dtype, place):  # pragma: no cover - every subclass overrides
        raise TypeError(f"{type(self).__name__} does not define how to compute values")

    def _compute_fans(self, var):
        return compute_fans(list(var.shape))


def _fill(param: Tensor, values) -> None:
    """Write ``values`` into ``param``'s storage (same device, cast to its dtype)."""
    arr = param._data
    values = _pl.move(values, _pl.place_of(arr))
    if values.dtype != arr.dtype:
        values = values.astype(arr.dtype)
    writable(param)[...] = values  # a read-only buffer (a broadcast view) is replaced first
    param._ver.v += 1


def compute_fans(shape):
    """(fan_in, fan_out) of a weight of ``shape`` as Paddle computes them.

    Linear weights are ``[in, out]``; conv weights ``[out, in/groups, *kernel]`` (the kernel
    size multiplies both fans). Scalars have fans (1, 1); vectors use their length for both.
    """
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = int(np.prod(shape[2:]))
    return shape[1] * receptive, shape[0] * receptive


_LINEAR_GAINS = ("sigmoid", "linear", "conv1d", "conv2d", "conv3d", "conv1d_transpose",
                 "conv2d_transpose", "conv3d_transpose")


def calculate_gain(nonlinearity, param=None):
    """The recommended gain of an activation, used to scale initial weights.

    Args:
        nonlinearity (str): one of 'sigmoid', 'linear', 'conv1d', 'conv2d', 'conv3d',
            'conv1d_transpose', 'conv2d_transpose', 'conv3d_transpose' (gain 1), 'tanh' (5/3),
            'relu' (sqrt(2)), 'leaky_relu' (sqrt(2 / (1 + slope**2))), 'selu' (3/4).
        param (float, optional): the negative slope of 'leaky_relu' (default 0.01).

    Returns:
        float: the gain (the int 1 for the linear family, as Paddle returns it).

    Example:
        >>> paddle.nn.initializer.calculate_gain('tanh')
        1.6666666666666667
    """
    if not isinstance(nonlinearity, str):
        raise TypeError(f"calculate_gain: nonlinearity must be a str, got "
                        f"{type(nonlinearity).__name__}")
    if nonlinearity in _LINEAR_GAINS:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, numbers.Real):
            raise TypeError(f"calculate_gain: param (the negative slope) must be a number, "
                            f"got {type(slope).__name__}")
        return math.sqrt(2.0 / (1 + float(slope) ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: nonlinearity function {nonlinearity} is not supported; "
                     f"expected one of {list(_LINEAR_GAINS)} or tanh, relu, leaky_relu, selu")


# --------------------------------------------------------------------------- global initializer
_global_weight = None
_global_bias = None


def set_global_initializer(weight_init, bias_init=None):
    """Use ``weight_init`` / ``bias_init`` for every parameter created afterwards.

    The global initializer replaces a layer's built-in default (e.g. Conv2D's Kaiming weights or
    BatchNorm's ones) but not an initializer given explicitly through ``ParamAttr``. Pass
    ``None`` to go back to the defaults.

    Args:
        weight_init (Initializer|None): initializer of weights (non-bias parameters).
        bias_init (Initializer|None): initializer of biases.

    Example:
        >>> paddle.nn.initializer.set_global_initializer(paddle.nn.initializer.Constant(0.5))
        >>> paddle.nn.Linear(2, 2).weight  # all 0.5
        >>> paddle.nn.initializer.set_global_initializer(None)
    """
    global _global_weight, _global_bias
    for arg, val in (("weight_init", weight_init), ("bias_init", bias_init)):
        if val is not None and not isinstance(val, Initializer):
            raise TypeError(f"set_global_initializer: {arg} must be an Initializer or None, "
                            f"got {type(val).__name__}")
    _global_weight = weight_init
    _global_bias = bias_init


def _global_initializer(is_bias: bool):
    """The initializer set by :func:`set_global_initializer` for this kind, or None."""
    return _global_bias if is_bias else _global_weight
