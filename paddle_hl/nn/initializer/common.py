"""Elementwise initializers: Constant, Assign, Normal, TruncatedNormal, Uniform, Xavier, Kaiming.

Random draws go through ``paddle_hl.framework.random`` so that ``paddle.seed`` makes initial
parameters repeat; values are drawn on the parameter's device and written in its dtype
(float16 parameters get float16 values directly).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ... import backend
from ...framework import dtype as _dt
from ...framework import place as _pl
from ...framework import random as _rnd
from ...framework.tensor import Tensor
from ...tensor._helpers import number_arg
from ._base import Initializer, _global_initializer, calculate_gain, compute_fans

__all__ = []


def _draw_dtype(dtype):
    """Random values are drawn in float32/float64 and cast (ints get a float32 draw)."""
    return dtype if dtype in (np.dtype(np.float32), np.dtype(np.float64)) else np.float32


class Constant(Initializer):
    """Fill with a constant.

    Args:
        value (float): the value (default 0.0).

    Example:
        >>> fc = paddle.nn.Linear(2, 2, weight_attr=paddle.nn.initializer.Constant(0.5))
    """

    def __init__(self, value=0.0):
        self._value = number_arg(value, "Constant", "value", real=True)

    def _values(self, shape, dtype, place):
        xp = _pl.xp_for(place)
        v = self._value
        if np.dtype(dtype).kind in "iub":
            v = int(v)
        return xp.full(shape, v, dtype=dtype)


class Assign(Initializer):
    """Fill with given values (a NumPy array, list, tuple, number or Tensor).

    Args:
        value: the values; their shape must equal the parameter's.
        name (str, optional): unused.

    Example:
        >>> init = paddle.nn.initializer.Assign(np.eye(2))
        >>> fc = paddle.nn.Linear(2, 2, weight_attr=init)
    """

    def __init__(self, value, name=None):
        if isinstance(value, Tensor):
            arr = value._data
        elif isinstance(value, (np.ndarray, list, tuple, numbers.Number)) or \
                backend.is_gpu_array(value):
            arr = value if backend.is_gpu_array(value) else np.asarray(value)
        else:
            raise TypeError(f"Assign: value must be a numpy.ndarray, list, tuple, number or "
                            f"Tensor, got {type(value).__name__}")
        if arr.dtype.kind not in "biuf" and str(arr.dtype) != "bfloat16":
            raise TypeError(f"Assign: value has unsupported dtype {arr.dtype}")
        self._value = arr

    def _values(self, shape, dtype, place):
        v = self._value
        if tuple(v.shape) != tuple(shape):
            raise ValueError(f"Assign: the value has shape {list(v.shape)}, but the parameter "
                             f"has shape {list(shape)}")
        return _pl.move(v, place).astype(dtype)


class Normal(Initializer):
    """Fill with samples of N(mean, std**2).

    Args:
        mean (float): the mean (default 0.0).
        std (float): the standard deviation (default 1.0).
        name (str, optional): unused.
    """

    def __init__(self, mean=0.0, std=1.0, name=None):
        self._mean = number_arg(mean, "Normal", "mean", real=True)
        self._std = number_arg(std, "Normal", "std", real=True)

    def _values(self, shape, dtype, place):
        return _rnd.normal_array(shape, _draw_dtype(dtype), self._mean, self._std, place)


class TruncatedNormal(Initializer):
    """Fill with samples of N(mean, std**2) restricted to [mean - 2 std, mean + 2 std].

    Args:
        mean (float): the mean (default 0.0).
        std (float): the standard deviation before truncation (default 1.0).
        name (str, optional): unused.
    """

    def __init__(self, mean=0.0, std=1.0, name=None):
        self._mean = number_arg(mean, "TruncatedNormal", "mean", real=True)
        self._std = number_arg(std, "TruncatedNormal", "std", real=True)

    def _values(self, shape, dtype, place):
        xp = _pl.xp_for(place)
        dd = _draw_dtype(dtype)
        z = _rnd.normal_array(shape, dd, 0.0, 1.0, place)
        # rejection: redraw only the samples outside [-2, 2] (about 4.6% per round)
        bad = xp.abs(z) > 2.0
        n_bad = int(bad.sum())
        while n_bad:
            z[bad] = _rnd.normal_array((n_bad,), dd, 0.0, 1.0, place)
            bad = xp.abs(z) > 2.0
            n_bad = int(bad.sum())
        z *= self._std
        z += self._mean
        return z


class Uniform(Initializer):
    """Fill with samples of U[low, high).

    Args:
        low (float): lower bound (default -1.0).
        high (float): upper bound (default 1.0); must be >= low.
        name (str, optional): unused.
    """

    def __init__(self, low=-1.0, high=1.0, name=None):
        low = number_arg(low, "Uniform", "low", real=True)
        high = number_arg(high, "Uniform", "high", real=True)
        if high < low:
            raise ValueError(f"Uniform: high ({high}) must be greater than or equal to low "
                             f"({low})")
        self._low, self._high = low, high

    def _values(self, shape, dtype, place):
        return _rnd.uniform_array(shape, _draw_dtype(dtype), self._low, self._high, place)


def _fans(shape, fan_in, fan_out):
    fi, fo = compute_fans(list(shape))
    return (fi if fan_in is None else fan_in), (fo if fan_out is None else fan_out)


class XavierUniform(Initializer):
    """Glorot uniform: U[-limit, limit] with ``limit = sqrt(6 / (fan_in + fan_out))``.

    Args:
        fan_in (float, optional): fan in; computed from the shape when None.
        fan_out (float, optional): fan out; computed from the shape when None.
        name (str, optional): unused.
    """

    def __init__(self, fan_in=None, fan_out=None, name=None):
        self._fan_in = None if fan_in is None else number_arg(fan_in, "XavierUniform", "fan_in",
                                                              real=True)
        self._fan_out = None if fan_out is None else number_arg(fan_out, "XavierUniform",
                                                                "fan_out", real=True)

    def _values(self, shape, dtype, place):
        fi, fo = _fans(shape, self._fan_in, self._fan_out)
        limit = math.sqrt(6.0 / float(fi + fo)) if fi + fo > 0 else 0.0
        return _rnd.uniform_array(shape, _draw_dtype(dtype), -limit, limit, place)


class XavierNormal(Initializer):
    """Glorot normal: N(0, std**2) with ``std = sqrt(2 / (fan_in + fan_out))``.

    Args:
        fan_in (float, optional): fan in; computed from the shape when None.
        fan_out (float, optional): fan out; computed from the shape when None.
        name (str, optional): unused.
    """

    def __init__(self, fan_in=None, fan_out=None, name=None):
        self._fan_in = None if fan_in is None else number_arg(fan_in, "XavierNormal", "fan_in",
                                                              real=True)
        self._fan_out = None if fan_out is None else number_arg(fan_out, "XavierNormal",
                                                                "fan_out", real=True)

    def _values(self, shape, dtype, place):
        fi, fo = _fans(shape, self._fan_in, self._fan_out)
        std = math.sqrt(2.0 / float(fi + fo)) if fi + fo > 0 else 0.0
        return _rnd.normal_array(shape, _draw_dtype(dtype), 0.0, std, place)


class _Kaiming(Initializer):
    def __init__(self, fan_in=None, negative_slope=0.0, nonlinearity="relu"):
        where = type(self).__name__
        self._fan_in = None if fan_in is None else number_arg(fan_in, where, "fan_in", real=True)
        self._negative_slope = number_arg(negative_slope, where, "negative_slope", real=True)
        calculate_gain(nonlinearity, self._negative_slope)  # validates the name now
        self._nonlinearity = nonlinearity

    def _gain_over_fan(self, shape):
        fi = compute_fans(list(shape))[0] if self._fan_in is None else self._fan_in
        gain = calculate_gain(self._nonlinearity, self._negative_slope)
        return gain, float(fi)


class KaimingNormal(_Kaiming):
    """He normal: N(0, std**2) with ``std = gain / sqrt(fan_in)``.

    Args:
        fan_in (float, optional): fan in; computed from the shape when None.
        negative_slope (float): the slope of leaky_relu (used when nonlinearity is
            'leaky_relu').
        nonlinearity (str): the activation the gain is computed for (default 'relu').
    """

    def _values(self, shape, dtype, place):
        gain, fi = self._gain_over_fan(shape)
        std = gain / math.sqrt(fi) if fi > 0 else 0.0
        return _rnd.normal_array(shape, _draw_dtype(dtype), 0.0, std, place)


class KaimingUniform(_Kaiming):
    """He uniform: U[-limit, limit] with ``limit = gain * sqrt(3 / fan_in)``.

    Args:
        fan_in (float, optional): fan in; computed from the shape when None.
        negative_slope (float): the slope of leaky_relu (used when nonlinearity is
            'leaky_relu').
        nonlinearity (str): the activation the gain is computed for (default 'relu').
    """

    def _values(self, shape, dtype, place):
        gain, fi = self._gain_over_fan(shape)
        limit = gain * math.sqrt(3.0 / fi) if fi > 0 else 0.0
        return _rnd.uniform_array(shape, _draw_dtype(dtype), -limit, limit, place)


def _default_initializer_for(is_bias: bool, dtype=None):
    """The initializer a parameter gets when neither its ParamAttr nor its layer names one.

    The global initializer when set; otherwise zeros for biases and Xavier-uniform for float
    weights. Non-float weights have no default (Paddle refuses them).
    """
    glob = _global_initializer(is_bias)
    if glob is not None:
        return glob
    if is_bias:
        return Constant(0.0)
    if dtype is not None and not _dt.is_float_np(_dt.to_np(dtype)):
        raise TypeError(f"create_parameter: cannot create a parameter of dtype "
                        f"{_dt.convert(dtype).name} with the default initializer (float16, "
                        "bfloat16, float32, float64 only); pass default_initializer or a "
                        "ParamAttr initializer that fits the dtype")
    return XavierUniform()
