"""Activation functions (``paddle.nn.functional`` activations).

Every activation is one kernel on raw arrays (see ``framework/op.py``) returning its output and a
backward closure that keeps a single array (the input, or the output when the derivative can be
read from it), plus a higher-order rule ``hi`` written with public Tensor ops so that
``create_graph=True`` works. float16/bfloat16 inputs are computed in float32 and rounded back
once, which is what Paddle's GPU kernels do (Paddle's CPU build has no low-precision kernels).
"""

from __future__ import annotations

import math as _pymath
import numbers

import numpy as np

from ... import backend
from ...framework import dtype as _dt
from ...framework import random as _rnd
from ...framework.op import apply, apply_
from ...framework.tensor import Tensor, _wrap
from ...tensor import manipulation as _manip
from ...tensor import math as _math
from ...tensor import search as _search
from ...tensor._helpers import cast_to, norm_axis, tensor_arg
from ...tensor.special import _erf_arr

__all__ = []

_NATIVE = (np.dtype(np.float32), np.dtype(np.float64))
_F32 = np.dtype(np.float32)
_FLOAT_NAMES = ("float16", "bfloat16", "float32", "float64")
_SQRT_2_OVER_PI = _pymath.sqrt(2.0 / _pymath.pi)
_INV_SQRT_2 = 1.0 / _pymath.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / _pymath.sqrt(2.0 * _pymath.pi)
_GELU_C = 0.044715


# ---------------------------------------------------------------- helpers

def _float_arg(x, op: str, arg: str = "x") -> Tensor:
    """``x`` as a floating Tensor; integer/bool/complex input is refused as Paddle does."""
    x = tensor_arg(x, op, arg)
    d = x._data.dtype
    if not (d in _NATIVE or d in _dt.LOW_FLOATS):
        raise TypeError(f"{op}: argument '{arg}' has dtype {x.dtype.name}, expected one of "
                        f"{list(_FLOAT_NAMES)}; cast it with x.astype('float32') first")
    return x


def _up(a):
    """The compute array: float32/float64 as they are, float16/bfloat16 widened to float32."""
    return a if a.dtype in _NATIVE else a.astype(_F32)


def _down(a, dt, xp):
    """Round a computed array back to the op's dtype (0-D results stay arrays)."""
    if a.dtype != dt:
        a = a.astype(dt)
    if type(a) is not np.ndarray and not backend.is_gpu_array(a):
        a = xp.asarray(a)
    return a


def _mask(cond, like: Tensor) -> Tensor:
    """A bool Tensor turned into a constant 0/1 Tensor of ``like``'s dtype (for gradient rules)."""
    return _wrap(cond._data.astype(like._data.dtype))


def _check_number(v, op: str, arg: str):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{op}: '{arg}' must be a number, got {type(v).__name__}")
    return float(v)


def _elementwise(name, fwd, bwd, hi, from_out=False):
    """Build the kernel of an elementwise activation.

    ``fwd(xc, xp, **attrs)`` computes the output in the compute dtype, ``bwd(g, s, xp, **attrs)``
    the input gradient from the upstream gradient and the one saved array ``s`` (the input, or
    the output when ``from_out``); ``hi(inputs, grads, **attrs)`` is the Tensor-level rule.
    """

    def kernel(x, **attrs):
        dt = x.dtype
        xp = backend.get_array_module(x)
        xc = x if dt in _NATIVE else x.astype(_F32)
        with np.errstate(all="ignore"):
            oc = fwd(xc, xp, **attrs)
        out = _down(oc, dt, xp)
        saved = oc if from_out else xc

        def backward(g):
            with np.errstate(all="ignore"):
                r = bwd(g if g.dtype in _NATIVE else g.astype(_F32), saved, xp, **attrs)
            return (_down(r, dt, xp),)

        return out, backward

    kernel.__name__ = "_" + name
    kernel.op_name = name
    kernel.hi = hi
    if from_out:
        # backward reads only the output, so a later inplace change of x does not matter
        kernel.saves = ()
    return kernel


def _run(kernel, x, op, **attrs):
    return apply(kernel, _float_arg(x, op), **attrs)


def _run_(kernel, x, op, **attrs):
    return apply_(kernel, _float_arg(x, op), **attrs)


def _sigmoid_arr(x, xp):
    # exp of a non-positive argument only: no overflow for large |x|
    e = xp.exp(-xp.abs(x))
    r = 1.0 / (1.0 + e)
    return xp.where(x >= 0, r, e * r)


def _softplus_arr(x, xp):
    """log(1 + exp(x)) without overflow."""
    return xp.maximum(x, 0) + xp.log1p(xp.exp(-xp.abs(x)))


# ---------------------------------------------------------------- relu family

_relu_k = _elementwise(
    "relu",
    lambda x, xp: xp.where(x > 0, x, 0),
    lambda g, o, xp: xp.where(o > 0, g, 0),
    lambda i, g: (g[0] * _mask(i[0] > 0, g[0]),),
    from_out=True)


def relu(x, name=None):
    """ReLU: ``max(x, 0)`` (NaN gives 0, as in Paddle).

    Args:
        x (Tensor): float16, bfloat16, float32 or float64 input.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.

    Example:
        >>> F.relu(paddle.to_tensor([-2., 0., 1.]))  # [0., 0., 1.]
    """
    return _run(_relu_k, x, "relu")


def relu_(x, name=None):
    """Inplace :func:`relu`; returns x."""
    return _run_(_relu_k, x, "relu_")


_relu6_k = _elementwise(
    "relu6",
    lambda x, xp: xp.clip(x, 0, 6),
    lambda g, o, xp: xp.where((o > 0) & (o < 6), g, 0),
    lambda i, g: (g[0] * _mask((i[0] > 0) & (i[0] < 6), g[0]),),
    from_out=True)


def relu6(x, name=None):
    """ReLU6: ``min(max(x, 0), 6)``.

    Args:
        x (Tensor): floating input.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.
    """
    return _run(_relu6_k, x, "relu6")


_leaky_k = _elementwise(
    "leaky_relu",
    lambda x, xp, slope: xp.where(x > 0, x, x * slope),
    lambda g, x, xp, slope: xp.where(x >= 0, g, g * slope),
    lambda i, g, slope: (_search.where(i[0] >= 0, g[0], g[0] * slope),))


def _slope_arg(v, op):
    return _check_number(v, op, "negative_slope")


def leaky_relu(x, negative_slope=0.01, name=None):
    """Leaky ReLU: ``x`` for x > 0, ``negative_slope * x`` otherwise.

    Args:
        x (Tensor): floating input.
        negative_slope (float): slope for negative inputs (any sign). Default 0.01.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.

    Example:
        >>> F.leaky_relu(paddle.to_tensor([-2., 3.]), 0.1)  # [-0.2, 3.]
    """
    return _run(_leaky_k, x, "leaky_relu", slope=_slope_arg(negative_slope, "leaky_relu"))


def leaky_relu_(x, negative_slope=0.01, name=None):
    """Inplace :func:`leaky_relu`; returns x."""
    return _run_(_leaky_k, x, "leaky_relu_", slope=_slope_arg(negative_slope, "leaky_relu_"))


def _neg_exp(x, xp):
    # exp(min(x, 0)): the positive branch never overflows
    return xp.exp(xp.minimum(x, 0))


def _elu_hi(i, g, alpha):
    x = i[0]
    return (g[0] * _search.where(x > 0, 1.0, alpha * _math.exp(_math.minimum(x, 0.0))),)


_elu_k = _elementwise(
    "elu",
    lambda x, xp, alpha: xp.where(x > 0, x, alpha * xp.expm1(xp.minimum(x, 0))),
    lambda g, x, xp, alpha: xp.where(x > 0, g, g * (alpha * _neg_exp(x, xp))),
    _elu_hi)


def elu(x, alpha=1.0, name=None):
    """ELU: ``x`` for x > 0, ``alpha * (exp(x) - 1)`` otherwise, for any alpha (B69).

    Args:
        x (Tensor): floating input.
        alpha (float): scale of the negative branch. Default 1.0.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x; NaN stays NaN.

    Example:
        >>> F.elu(paddle.to_tensor([-1., 6.]), alpha=-0.2)  # [0.12642412, 6.]
    """
    return _run(_elu_k, x, "elu", alpha=_check_number(alpha, "elu", "alpha"))


def elu_(x, alpha=1.0, name=None):
    """Inplace :func:`elu`; only ``alpha >= 0`` is supported (as in Paddle).

    Raises:
        AssertionError: alpha < 0.
    """
    alpha = _check_number(alpha, "elu_", "alpha")
    assert alpha >= 0.0, "elu_ only support alpha >= 0, please use elu instead."
    return _run_(_elu_k, x, "elu_", alpha=alpha)
