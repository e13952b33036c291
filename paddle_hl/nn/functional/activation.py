"""Activation functions (``paddle.nn.functional`` activations).

Every activation is one kernel on raw arrays (see ``framework/op.py``) returning its output and a
backward closure that keeps a single array (the input, or the output when the derivative can be
read from it), plus a higher-order rule ``hi`` written with public Tensor ops so that
``create_graph=True`` works. float16/bfloat16 inputs are computed in float32 and rounded back
once, which is what Paddle's GPU kernels do (Paddle's CPU build has no low-precision kernels).
"""

from __future__ import annotations

import contextlib
import functools
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


def _check_number(v, op: str, arg: str) -> float:
    """A float attribute, rounded to float32: Paddle stores activation attributes as 32-bit
    floats, so float64 inputs see e.g. 0.01 as 0.009999999776."""
    if isinstance(v, Tensor) and v.size == 1:
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{op}: '{arg}' must be a number, got {type(v).__name__}")
    return float(np.float32(v))


def _elementwise(name, fwd, bwd, hi, from_out=False, quiet=False):
    """Build the kernel of an elementwise activation.

    ``fwd(xc, xp, **attrs)`` computes the output in the compute dtype, ``bwd(g, s, xp, **attrs)``
    the input gradient from the upstream gradient and the one saved array ``s`` (the input, or
    the output when ``from_out``); ``hi(inputs, grads, **attrs)`` is the Tensor-level rule.
    ``quiet``: fwd and bwd raise no floating-point warnings on any input (NaN and inf
    included), so the errstate scope (about 1 µs a call) is skipped.
    """
    guard = contextlib.nullcontext if quiet else functools.partial(np.errstate, all="ignore")

    def kernel(x, **attrs):
        dt = x.dtype
        xp = backend.get_array_module(x)
        xc = x if dt in _NATIVE else x.astype(_F32)
        with guard():
            oc = fwd(xc, xp, **attrs)
        out = _down(oc, dt, xp)
        saved = oc if from_out else xc

        def backward(g):
            with guard():
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

# NumPy's fmax/maximum against a scalar does not use its vector loop; against an array it does
# (2.7x faster in cache, 1.5x on activations larger than the cache), so large contiguous
# inputs are taken as rows of _RELU_ROW elements against one shared row of zeros
_RELU_ROW = 8192
_ZERO_ROWS = {}


def _fmax0(x, xp):
    """``fmax(x, 0)`` as a new array: NaN gives 0, as in Paddle."""
    n = x.size
    if xp is not np or n < 2 * _RELU_ROW or not x.flags.c_contiguous:
        return xp.fmax(x, x.dtype.type(0))
    zero = _ZERO_ROWS.get(x.dtype)
    if zero is None:
        zero = _ZERO_ROWS[x.dtype] = np.zeros(_RELU_ROW, dtype=x.dtype)
        zero.flags.writeable = False
    flat = x.reshape(-1)
    out = np.empty_like(flat)
    k = n - n % _RELU_ROW
    np.fmax(flat[:k].reshape(-1, _RELU_ROW), zero, out=out[:k].reshape(-1, _RELU_ROW))
    np.fmax(flat[k:], x.dtype.type(0), out=out[k:])
    return out.reshape(x.shape)


# fmax(x, 0) maps NaN to 0 as Paddle does, and is ~10x faster than where(x > 0, x, 0); the
# gradient is ``g * (out > 0)`` as in Paddle's kernel (a NaN upstream gradient stays NaN)
_relu_k = _elementwise(
    "relu",
    _fmax0,
    lambda g, o, xp: xp.multiply(g, o > 0),
    lambda i, g: (g[0] * _mask(i[0] > 0, g[0]),),
    from_out=True, quiet=True)


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


def _celu_hi(i, g, alpha):
    x = i[0]
    return (g[0] * _search.where(x > 0, 1.0, _math.exp(_math.minimum(x, 0.0) / alpha)),)


_celu_k = _elementwise(
    "celu",
    lambda x, xp, alpha: xp.where(x > 0, x, alpha * xp.expm1(xp.minimum(x, 0) / alpha)),
    lambda g, x, xp, alpha: xp.where(x > 0, g, g * xp.exp(xp.minimum(x, 0) / alpha)),
    _celu_hi)


def celu(x, alpha=1.0, name=None):
    """CELU: ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` (B90).

    Args:
        x (Tensor): floating input.
        alpha (float): must not be 0. Default 1.0.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.

    Raises:
        ZeroDivisionError: alpha is 0.
    """
    alpha = _check_number(alpha, "celu", "alpha")
    if alpha == 0:
        raise ZeroDivisionError("alpha cannot be 0 for celu")
    return _run(_celu_k, x, "celu", alpha=alpha)


def _selu_hi(i, g, scale, alpha):
    x = i[0]
    d = _search.where(x > 0, scale, (scale * alpha) * _math.exp(_math.minimum(x, 0.0)))
    return (g[0] * d,)


def _selu_bwd(g, o, xp, scale, alpha):
    # Paddle reads the derivative off the output, scale * alpha rounded to float32:
    # d = out + scale * alpha on the negative side
    sa = float(np.float32(scale * alpha))
    return xp.where(o > 0, g * scale, g * (o + sa))


_selu_k = _elementwise(
    "selu",
    lambda x, xp, scale, alpha: scale * xp.where(x > 0, x, alpha * xp.expm1(xp.minimum(x, 0))),
    _selu_bwd, _selu_hi, from_out=True)


def selu(x, scale=1.0507009873554805, alpha=1.6732632423543772, name=None):
    """SELU: ``scale * x`` for x > 0, ``scale * alpha * (exp(x) - 1)`` otherwise.

    Args:
        x (Tensor): floating input.
        scale (float): must be greater than 1.0.
        alpha (float): must be no less than 0.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.
    """
    scale = _check_number(scale, "selu", "scale")
    alpha = _check_number(alpha, "selu", "alpha")
    if scale <= 1.0:
        raise ValueError(f"The scale must be greater than 1.0. Received: {scale}.")
    if alpha < 0:
        raise ValueError(f"The alpha must be no less than zero. Received: {alpha}.")
    return _run(_selu_k, x, "selu", scale=scale, alpha=alpha)


# ---------------------------------------------------------------- gelu

def _gelu_fwd(x, xp, approximate):
    if approximate:
        t = xp.tanh(_SQRT_2_OVER_PI * (x + _GELU_C * x * x * x))
        t += 1.0
        t *= x
        t *= 0.5
        return t
    e = _erf_arr(x * _INV_SQRT_2)
    e += 1.0
    e *= x
    e *= 0.5
    return e


def _gelu_bwd(g, x, xp, approximate):
    if approximate:
        x2 = x * x
        t = xp.tanh(_SQRT_2_OVER_PI * x * (1.0 + _GELU_C * x2))
        d = 0.5 * (1.0 + t) + (0.5 * _SQRT_2_OVER_PI) * x * (1.0 - t * t) * (
            1.0 + 3.0 * _GELU_C * x2)
        return g * d
    d = _erf_arr(x * _INV_SQRT_2)
    d += 1.0
    d *= 0.5
    d += _INV_SQRT_2PI * x * xp.exp(-0.5 * x * x)
    return g * d


def _gelu_hi(i, g, approximate):
    from ...tensor.special import erf

    x = i[0]
    if approximate:
        x2 = x * x
        t = _math.tanh(_SQRT_2_OVER_PI * x * (1.0 + _GELU_C * x2))
        d = 0.5 * (1.0 + t) + (0.5 * _SQRT_2_OVER_PI) * x * (1.0 - t * t) * (
            1.0 + 3.0 * _GELU_C * x2)
    else:
        d = 0.5 * (1.0 + erf(x * _INV_SQRT_2)) + _INV_SQRT_2PI * x * _math.exp(-0.5 * x * x)
    return (g[0] * d,)


_gelu_k = _elementwise("gelu", _gelu_fwd, _gelu_bwd, _gelu_hi)


def gelu(x, approximate=False, name=None):
    """GELU: ``0.5 x (1 + erf(x / sqrt(2)))``, or the tanh formula when approximate (B77).

    Args:
        x (Tensor): floating input.
        approximate (bool): use ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.

    Example:
        >>> F.gelu(paddle.to_tensor([1.0]))  # [0.8413447]
    """
    if not isinstance(approximate, (bool, np.bool_)):
        raise TypeError(f"gelu: 'approximate' must be a bool, got {type(approximate).__name__}")
    return _run(_gelu_k, x, "gelu", approximate=bool(approximate))


# ---------------------------------------------------------------- shrink / hard functions

_hardshrink_k = _elementwise(
    "hardshrink",
    lambda x, xp, t: x * ((x > t) | (x < -t)),
    lambda g, x, xp, t: g * ((x > t) | (x < -t)),
    lambda i, g, t: (g[0] * _mask((i[0] > t) | (i[0] < -t), g[0]),))


def hardshrink(x, threshold=0.5, name=None):
    """Hard shrinkage: ``x`` where ``|x| > threshold``, 0 elsewhere.

    Args:
        x (Tensor): floating input.
        threshold (float): Default 0.5.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.
    """
    return _run(_hardshrink_k, x, "hardshrink",
                t=_check_number(threshold, "hardshrink", "threshold"))


_softshrink_k = _elementwise(
    "softshrink",
    lambda x, xp, t: x - xp.clip(x, -t, t),
    lambda g, x, xp, t: g * ((x > t) | (x < -t)),
    lambda i, g, t: (g[0] * _mask((i[0] > t) | (i[0] < -t), g[0]),))


def softshrink(x, threshold=0.5, name=None):
    """Soft shrinkage: ``x - threshold`` above threshold, ``x + threshold`` below -threshold,
    0 in between.

    Args:
        x (Tensor): floating input.
        threshold (float): must be no less than 0. Default 0.5.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.
    """
    threshold = _check_number(threshold, "softshrink", "threshold")
    if threshold < 0:
        raise ValueError(f"The threshold must be no less than zero. Received: {threshold}.")
    return _run(_softshrink_k, x, "softshrink", t=threshold)


_hardsigmoid_k = _elementwise(
    "hardsigmoid",
    lambda x, xp, slope, offset: xp.clip(x * slope + offset, 0, 1),
    lambda g, o, xp, slope, offset: xp.where((o > 0) & (o < 1), g * slope, 0),
    lambda i, g, slope, offset: (g[0] * (slope * _mask(
        (i[0] * slope + offset > 0) & (i[0] * slope + offset < 1), g[0])),),
    from_out=True)


def hardsigmoid(x, slope=0.1666667, offset=0.5, name=None):
    """Hard sigmoid: ``clip(slope * x + offset, 0, 1)``.

    Args:
        x (Tensor): floating input.
        slope (float): Default 0.1666667.
        offset (float): Default 0.5.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.
    """
    return _run(_hardsigmoid_k, x, "hardsigmoid",
                slope=_check_number(slope, "hardsigmoid", "slope"),
                offset=_check_number(offset, "hardsigmoid", "offset"))


def _hardswish_bwd(g, x, xp):
    d = xp.where(x < 3, (2.0 * x + 3.0) / 6.0, 1.0)
    return xp.where(x > -3, g * d, 0)


def _hardswish_hi(i, g):
    x = i[0]
    d = _search.where(x < 3, (2.0 * x + 3.0) / 6.0, 1.0)
    return (g[0] * d * _mask(x > -3, g[0]),)


_hardswish_k = _elementwise(
    "hardswish",
    lambda x, xp: x * xp.clip(x + 3.0, 0, 6) / 6.0,
    _hardswish_bwd, _hardswish_hi)


def hardswish(x, name=None):
    """Hard swish: ``x * min(max(x + 3, 0), 6) / 6``.

    Args:
        x (Tensor): floating input.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.
    """
    return _run(_hardswish_k, x, "hardswish")


_hardtanh_k = _elementwise(
    "hardtanh",
    lambda x, xp, lo, hi: xp.clip(x, lo, hi),
    lambda g, x, xp, lo, hi: xp.where((x > lo) & (x < hi), g, 0),
    lambda i, g, lo, hi: (g[0] * _mask((i[0] > lo) & (i[0] < hi), g[0]),))


def _hardtanh_args(mn, mx, op):
    return _check_number(mn, op, "min"), _check_number(mx, op, "max")


def hardtanh(x, min=-1.0, max=1.0, name=None):  # noqa: A002  (Paddle's parameter names)
    """Hard tanh: ``clip(x, min, max)``.

    Args:
        x (Tensor): floating input.
        min (float): lower bound. Default -1.0.
        max (float): upper bound. Default 1.0.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.
    """
    lo, hi = _hardtanh_args(min, max, "hardtanh")
    return _run(_hardtanh_k, x, "hardtanh", lo=lo, hi=hi)


def hardtanh_(x, min=-1.0, max=1.0, name=None):  # noqa: A002
    """Inplace :func:`hardtanh`; returns x."""
    lo, hi = _hardtanh_args(min, max, "hardtanh_")
    return _run_(_hardtanh_k, x, "hardtanh_", lo=lo, hi=hi)


_thresholded_k = _elementwise(
    "thresholded_relu",
    lambda x, xp, t: x * (x > t),
    lambda g, x, xp, t: g * (x > t),
    lambda i, g, t: (g[0] * _mask(i[0] > t, g[0]),))


def thresholded_relu(x, threshold=1.0, name=None):
    """Thresholded ReLU: ``x`` where ``x > threshold``, 0 elsewhere.

    Args:
        x (Tensor): floating input.
        threshold (float): Default 1.0.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.
    """
    t = _check_number(threshold, "thresholded_relu", "threshold")
    return _run(_thresholded_k, x, "thresholded_relu", t=t)


def thresholded_relu_(x, threshold=1.0, name=None):
    """Inplace :func:`thresholded_relu`; returns x."""
    t = _check_number(threshold, "thresholded_relu_", "threshold")
    return _run_(_thresholded_k, x, "thresholded_relu_", t=t)


# ---------------------------------------------------------------- smooth functions

def _log_sigmoid_bwd(g, x, xp):
    e = xp.exp(-xp.abs(x))
    # sigmoid(-x), written so that neither branch overflows
    return g * (xp.where(x >= 0, e, 1.0) / (1.0 + e))


_log_sigmoid_k = _elementwise(
    "log_sigmoid",
    lambda x, xp: xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x))),
    _log_sigmoid_bwd,
    lambda i, g: (g[0] * _math.sigmoid(-i[0]),))


def log_sigmoid(x, name=None):
    """Log-sigmoid: ``log(1 / (1 + exp(-x)))``, computed without overflow.

    Args:
        x (Tensor): floating input.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.
    """
    return _run(_log_sigmoid_k, x, "log_sigmoid")


def _softplus_fwd(x, xp, beta, threshold):
    bx = x * beta
    return xp.where(bx > threshold, x, _softplus_arr(bx, xp) / beta)


def _softplus_bwd(g, x, xp, beta, threshold):
    bx = x * beta
    return xp.where(bx > threshold, g, g * _sigmoid_arr(bx, xp))


def _softplus_hi(i, g, beta, threshold):
    bx = i[0] * beta
    return (g[0] * _search.where(bx > threshold, 1.0, _math.sigmoid(bx)),)


_softplus_k = _elementwise("softplus", _softplus_fwd, _softplus_bwd, _softplus_hi)


def softplus(x, beta=1, threshold=20, name=None):
    """Softplus: ``log(1 + exp(beta * x)) / beta``, and ``x`` where ``beta * x > threshold``.

    Args:
        x (Tensor): floating input.
        beta (float): Default 1.
        threshold (float): Default 20.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.
    """
    return _run(_softplus_k, x, "softplus", beta=_check_number(beta, "softplus", "beta"),
                threshold=_check_number(threshold, "softplus", "threshold"))


_softsign_k = _elementwise(
    "softsign",
    lambda x, xp: x / (1.0 + xp.abs(x)),
    lambda g, x, xp: g / xp.square(1.0 + xp.abs(x)),
    lambda i, g: (g[0] / _math.square(1.0 + _math.abs(i[0])),))


def softsign(x, name=None):
    """Softsign: ``x / (1 + |x|)``.

    Args:
        x (Tensor): floating input.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.
    """
    return _run(_softsign_k, x, "softsign")


def _silu_bwd(g, x, xp):
    s = _sigmoid_arr(x, xp)
    return g * (s * (1.0 + x * (1.0 - s)))


def _silu_hi(i, g):
    s = _math.sigmoid(i[0])
    return (g[0] * (s * (1.0 + i[0] * (1.0 - s))),)


_silu_k = _elementwise("silu", lambda x, xp: x * _sigmoid_arr(x, xp), _silu_bwd, _silu_hi)
_swish_k = _elementwise("swish", lambda x, xp: x * _sigmoid_arr(x, xp), _silu_bwd, _silu_hi)


def silu(x, name=None):
    """SiLU: ``x * sigmoid(x)``.

    Args:
        x (Tensor): floating input.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.
    """
    return _run(_silu_k, x, "silu")


def swish(x, name=None):
    """Swish: ``x * sigmoid(x)`` (Paddle's swish has beta fixed to 1).

    Args:
        x (Tensor): floating input.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.
    """
    return _run(_swish_k, x, "swish")


def _mish_parts(x, xp):
    # Paddle's mish uses softplus with threshold 20: sp = x above it
    sp = xp.where(x > 20.0, x, _softplus_arr(x, xp))
    return sp, xp.tanh(sp)


def _mish_bwd(g, x, xp):
    _, t = _mish_parts(x, xp)
    dsp = xp.where(x > 20.0, 1.0, _sigmoid_arr(x, xp))
    return g * (t + x * (1.0 - t * t) * dsp)


def _mish_hi(i, g):
    x = i[0]
    sp = _search.where(x > 20.0, x, softplus(x))
    t = _math.tanh(sp)
    dsp = _search.where(x > 20.0, 1.0, _math.sigmoid(x))
    return (g[0] * (t + x * (1.0 - t * t) * dsp),)


_mish_k = _elementwise("mish", lambda x, xp: x * _mish_parts(x, xp)[1], _mish_bwd, _mish_hi)


def mish(x, name=None):
    """Mish: ``x * tanh(softplus(x))``.

    Args:
        x (Tensor): floating input.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.
    """
    return _run(_mish_k, x, "mish")


_tanhshrink_k = _elementwise(
    "tanhshrink",
    lambda x, xp: x - xp.tanh(x),
    lambda g, x, xp: g * xp.square(xp.tanh(x)),
    lambda i, g: (g[0] * _math.square(_math.tanh(i[0])),))


def tanhshrink(x, name=None):
    """Tanh shrink: ``x - tanh(x)``.

    Args:
        x (Tensor): floating input.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.
    """
    return _run(_tanhshrink_k, x, "tanhshrink")


def sigmoid(x, name=None):
    """Sigmoid: ``1 / (1 + exp(-x))``.

    Args:
        x (Tensor): floating input; an integer or bool x raises TypeError, as in Paddle 2.6
            (which has no integer kernel for it).
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.
    """
    return _math.sigmoid(_float_arg(x, "sigmoid"))


def tanh(x, name=None):
    """Hyperbolic tangent.

    Args:
        x (Tensor): floating input; an integer or bool x raises TypeError, as in Paddle 2.6
            (which has no integer kernel for it).
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.
    """
    return _math.tanh(_float_arg(x, "tanh"))


tanh_ = _math.tanh_


# ---------------------------------------------------------------- softmax family

def _axis_view(x, axis):
    """0-D inputs act as one-element vectors (softmax of a scalar is 1)."""
    return x.reshape(1) if x.ndim == 0 else x


def _softmax_arr(xc, axis, xp):
    m = xc.max(axis=axis, keepdims=True)
    e = xp.exp(xc - m)
    e /= e.sum(axis=axis, keepdims=True)
    return e


def _softmax_k(x, axis):
    dt, shape = x.dtype, x.shape
    xp = backend.get_array_module(x)
    xc = _axis_view(_up(x), axis)
    if xc.size == 0:
        oc = xc.copy()
    else:
        oc = _softmax_arr(xc, axis, xp)

    def backward(g):
        gc = _axis_view(_up(g), axis)
        r = gc * oc
        r -= oc * r.sum(axis=axis, keepdims=True)
        return (_down(r.reshape(shape), dt, xp),)

    return _down(oc.reshape(shape), dt, xp), backward


def _softmax_hi(i, g, axis):
    if i[0].ndim == 0:
        return (g[0] * 0.0,)
    y = softmax(i[0], axis=axis)
    gy = g[0] * y
    return (gy - y * gy.sum(axis=axis, keepdim=True),)


_softmax_k.op_name = "softmax"
_softmax_k.saves = ()
_softmax_k.hi = _softmax_hi


def _log_softmax_k(x, axis):
    dt, shape = x.dtype, x.shape
    xp = backend.get_array_module(x)
    xc = _axis_view(_up(x), axis)
    if xc.size == 0:
        oc = xc.copy()
    else:
        oc = xc - xc.max(axis=axis, keepdims=True)
        oc -= xp.log(xp.exp(oc).sum(axis=axis, keepdims=True))

    def backward(g):
        gc = _axis_view(_up(g), axis)
        r = gc - xp.exp(oc) * gc.sum(axis=axis, keepdims=True)
        return (_down(r.reshape(shape), dt, xp),)

    return _down(oc.reshape(shape), dt, xp), backward


def _log_softmax_hi(i, g, axis):
    if i[0].ndim == 0:
        return (g[0] * 0.0,)
    y = softmax(i[0], axis=axis)
    return (g[0] - y * g[0].sum(axis=axis, keepdim=True),)


_log_softmax_k.op_name = "log_softmax"
_log_softmax_k.saves = ()
_log_softmax_k.hi = _log_softmax_hi


def _softmax_prep(x, axis, dtype, op):
    x = tensor_arg(x, op)
    if dtype is not None:
        x = cast_to(x, _dt.to_np(dtype))
    x = _float_arg(x, op)
    return x, norm_axis(axis, x.ndim, op)


def softmax(x, axis=-1, dtype=None, name=None):
    """Softmax along ``axis``: ``exp(x - max) / sum(exp(x - max))`` (B47).

    Subtracting the row maximum keeps long rows (over 100000 elements) free of overflow/NaN.

    Args:
        x (Tensor): floating input (or any input when ``dtype`` is given).
        axis (int): the axis normalised over. Default -1.
        dtype (str|paddle.dtype, optional): x is cast to it first.
        name (str, optional): unused.

    Returns:
        Tensor: same shape as x; its dtype (or ``dtype``).

    Example:
        >>> F.softmax(paddle.to_tensor([1., 2., 3.]))  # [0.09003057, 0.24472848, 0.66524094]
    """
    x, axis = _softmax_prep(x, axis, dtype, "softmax")
    return apply(_softmax_k, x, axis=axis)


def softmax_(x, axis=-1, dtype=None, name=None):
    """Inplace :func:`softmax`. With a ``dtype`` different from x's, x is cast first and the
    cast copy (not x) is written and returned, as in Paddle."""
    x = tensor_arg(x, "softmax_")
    if dtype is not None and _dt.to_np(dtype) != x._data.dtype:
        x = cast_to(x, _dt.to_np(dtype))
    x = _float_arg(x, "softmax_")
    return apply_(_softmax_k, x, axis=norm_axis(axis, x.ndim, "softmax_"))


def log_softmax(x, axis=-1, dtype=None, name=None):
    """Log-softmax along ``axis``: ``x - max - log(sum(exp(x - max)))``.

    Args:
        x (Tensor): floating input (or any input when ``dtype`` is given).
        axis (int): Default -1.
        dtype (str|paddle.dtype, optional): x is cast to it first.
        name (str, optional): unused.

    Returns:
        Tensor: same shape as x.
    """
    x, axis = _softmax_prep(x, axis, dtype, "log_softmax")
    return apply(_log_softmax_k, x, axis=axis)


def _gumbel_k(x, noise, temperature, hard, axis):
    dt = x.dtype
    xp = backend.get_array_module(x)
    xc = _up(x)
    y = _softmax_arr((xc + noise) / temperature, axis, xp)
    if hard:
        idx = y.argmax(axis=axis)
        out = xp.zeros_like(y)
        xp.put_along_axis(out, xp.expand_dims(idx, axis), 1.0, axis=axis)
    else:
        out = y

    def backward(g):
        # straight-through: the hard sample is differentiated as the soft one (Paddle's doc)
        gc = _up(g)
        r = gc * y
        r -= y * r.sum(axis=axis, keepdims=True)
        r /= temperature
        return _down(r, dt, xp), None

    return _down(out, dt, xp), backward


def _gumbel_hi(i, g, temperature, hard, axis):
    y = softmax((i[0] + i[1]) / temperature, axis=axis)
    gy = g[0] * y
    return ((gy - y * gy.sum(axis=axis, keepdim=True)) / temperature, None)


_gumbel_k.op_name = "gumbel_softmax"
_gumbel_k.saves = ()
_gumbel_k.hi = _gumbel_hi


def gumbel_softmax(x, temperature=1.0, hard=False, axis=-1, name=None):
    """Sample from the Gumbel-softmax distribution: ``softmax((x + G) / temperature)`` with
    G standard Gumbel noise.

    Args:
        x (Tensor): unnormalised log-probabilities (float).
        temperature (float): positive. Default 1.0.
        hard (bool): return one-hot samples, differentiated as the soft ones.
        axis (int): Default -1.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.
    """
    x = _float_arg(x, "gumbel_softmax")
    temperature = _check_number(temperature, "gumbel_softmax", "temperature")
    if temperature <= 0:
        raise ValueError(f"gumbel_softmax: temperature must be greater than 0, got "
                         f"{temperature}")
    if x.ndim == 0:
        raise ValueError("gumbel_softmax: x must have at least one dimension, got a 0-D tensor")
    axis = norm_axis(axis, x.ndim, "gumbel_softmax")
    cdt = _up(x._data[:0]).dtype
    u = _rnd.uniform_array(x._data.shape, cdt, gen=_rnd.generator_for(x._data))
    xp = backend.get_array_module(u)
    tiny = np.finfo(cdt).tiny
    # G = -log(-log(U)) with U kept inside (0, 1) so neither log sees 0
    noise = -xp.log(-xp.log(xp.clip(u, tiny, 1.0 - np.finfo(cdt).epsneg)))
    return apply(_gumbel_k, x, noise, temperature=temperature, hard=bool(hard), axis=axis)


# ---------------------------------------------------------------- glu, maxout

def _glu_k(x, axis):
    dt = x.dtype
    xp = backend.get_array_module(x)
    a, b = xp.split(_up(x), 2, axis=axis)
    s = _sigmoid_arr(b, xp)

    def backward(g):
        gc = _up(g)
        ga = gc * s
        gb = ga * a
        gb *= 1.0 - s
        return (_down(xp.concatenate([ga, gb], axis=axis), dt, xp),)

    return _down(a * s, dt, xp), backward


def _glu_hi(i, g, axis):
    a, b = _manip.split(i[0], 2, axis=axis)
    s = _math.sigmoid(b)
    ga = g[0] * s
    return (_manip.concat([ga, ga * a * (1.0 - s)], axis=axis),)


_glu_k.op_name = "glu"
_glu_k.hi = _glu_hi


def glu(x, axis=-1, name=None):
    """Gated linear unit: split x in two halves ``a, b`` along axis and return
    ``a * sigmoid(b)`` (B89).

    Args:
        x (Tensor): floating input whose size along ``axis`` is even.
        axis (int): Default -1.
        name (str, optional): unused.

    Returns:
        Tensor: x's shape with ``axis`` halved.

    Example:
        >>> F.glu(paddle.to_tensor([[1., 2., 3., 4.]]))  # [[0.95257413, 1.96402758]]
    """
    x = _float_arg(x, "glu")
    axis = norm_axis(axis, x.ndim, "glu")
    if x.ndim == 0 or x.shape[axis] % 2:
        raise ValueError(f"glu: the size of x along axis {axis} must be even to split it in "
                         f"two halves, got x of shape {x.shape}")
    return apply(_glu_k, x, axis=axis)


def _maxout_k(x, groups, axis):
    dt, shape = x.dtype, x.shape
    xp = backend.get_array_module(x)
    c = shape[axis]
    xr = x.reshape(shape[:axis] + (c // groups, groups) + shape[axis + 1:])
    idx = xp.expand_dims(xr.argmax(axis=axis + 1), axis + 1)
    out = xp.take_along_axis(xr, idx, axis=axis + 1).squeeze(axis + 1)

    def backward(g):
        gr = xp.zeros(xr.shape, dtype=dt)
        # each output's gradient goes to the first maximum of its group (as Paddle)
        xp.put_along_axis(gr, idx, xp.expand_dims(g, axis + 1), axis=axis + 1)
        return (gr.reshape(shape),)

    return _down(out, dt, xp), backward


def _maxout_hi(i, g, groups, axis):
    x = i[0]
    xp = backend.get_array_module(x._data)
    shape = tuple(x._data.shape)
    rshape = shape[:axis] + (shape[axis] // groups, groups) + shape[axis + 1:]
    xr = x._data.reshape(rshape)
    onehot = xp.zeros(rshape, dtype=x._data.dtype)
    xp.put_along_axis(onehot, xp.expand_dims(xr.argmax(axis=axis + 1), axis + 1), 1.0,
                      axis=axis + 1)
    gx = _manip.unsqueeze(g[0], axis + 1) * _wrap(onehot)
    return (_manip.reshape(gx, list(shape)),)


_maxout_k.op_name = "maxout"
_maxout_k.hi = _maxout_hi


def maxout(x, groups, axis=1, name=None):
    """Maxout: split the channels into groups of ``groups`` consecutive channels and keep each
    group's maximum.

    Args:
        x (Tensor): 4-D floating input (NCHW with axis 1, NHWC with axis -1 or 3).
        groups (int): channels per group; must divide the channel count.
        axis (int): the channel axis, 1, -1 or 3. Default 1.
        name (str, optional): unused.

    Returns:
        Tensor: x's shape with ``C / groups`` channels.
    """
    x = _float_arg(x, "maxout")
    if x.ndim != 4:
        raise ValueError(f"maxout: x must be a 4-D tensor, got x of shape {x.shape}")
    if isinstance(groups, bool) or not isinstance(groups, numbers.Integral) or groups < 1:
        raise ValueError(f"maxout: 'groups' must be a positive int, got {groups!r}")
    if axis not in (1, -1, 3):
        raise ValueError(f"maxout: 'axis' must be 1, -1 or 3, got {axis}")
    axis = axis % 4
    if x.shape[axis] % groups:
        raise ValueError(f"maxout: the number of channels ({x.shape[axis]}, axis {axis} of x "
                         f"of shape {x.shape}) must be divisible by groups={groups}")
    return apply(_maxout_k, x, groups=int(groups), axis=axis)


# ---------------------------------------------------------------- prelu, rrelu

def _prelu_k(x, w, wshape):
    dt = x.dtype
    xp = backend.get_array_module(x)
    xc, wc = _up(x), _up(w).reshape(wshape)
    pos = xc > 0
    out = xp.where(pos, xc, wc * xc)

    def backward(g):
        gc = _up(g)
        gx = xp.where(pos, gc, wc * gc)
        gw = xp.where(pos, 0, gc * xc)
        red = tuple(k for k in range(gw.ndim) if k >= len(wshape) or wshape[k] == 1)
        gw = gw.sum(axis=red).reshape(w.shape) if red else gw.reshape(w.shape)
        return _down(gx, dt, xp), _down(gw, w.dtype, xp)

    return _down(out, dt, xp), backward


def _prelu_hi(i, g, wshape):
    x, w = i
    wb = _manip.reshape(w, list(wshape))
    pos = _mask(x > 0, g[0])
    gx = g[0] * pos + (g[0] * wb) * (1.0 - pos)
    gw = g[0] * x * (1.0 - pos)
    red = [k for k in range(gw.ndim) if k >= len(wshape) or wshape[k] == 1]
    if red:
        gw = gw.sum(axis=red)
    return gx, _manip.reshape(gw, list(w.shape))


_prelu_k.op_name = "prelu"
_prelu_k.hi = _prelu_hi

_PRELU_FORMATS = ("NC", "NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC")


def prelu(x, weight, data_format="NCHW", name=None):
    """PReLU: ``x`` for x > 0, ``weight * x`` otherwise, with one weight for all elements
    (weight shape [1]) or one per channel (shape [C]; the channel axis is 1, or the last axis
    for channel-last formats, B78).

    Args:
        x (Tensor): floating input.
        weight (Tensor): 0-D/1-D slopes, of size 1 or C.
        data_format (str): 'NC', 'NCL', 'NCHW', 'NCDHW', 'NLC', 'NHWC' or 'NDHWC'.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.
    """
    x = _float_arg(x, "prelu")
    weight = _float_arg(weight, "prelu", "weight")
    if weight.ndim > 1:
        raise ValueError(f"prelu: 'weight' must be 0-D or 1-D, got weight of shape "
                         f"{weight.shape}")
    if weight.size == 1:
        wshape = ()
    else:
        if data_format not in _PRELU_FORMATS:
            raise ValueError(f"prelu: data_format must be one of {list(_PRELU_FORMATS)}, got "
                             f"{data_format!r}")
        if x.ndim < 2:
            raise ValueError(f"prelu: x must have at least 2 dims when weight has more than one "
                             f"element, got x of shape {x.shape} and weight of shape "
                             f"{weight.shape}")
        caxis = 1 if data_format[1] == "C" else x.ndim - 1
        if x.shape[caxis] != weight.size:
            raise ValueError(f"prelu: weight size {weight.size} must equal the number of "
                             f"channels {x.shape[caxis]} (axis {caxis} of x of shape {x.shape}, "
                             f"data_format {data_format})")
        wshape = tuple(weight.size if k == caxis else 1 for k in range(x.ndim))
    if weight._data.dtype != x._data.dtype:
        weight = cast_to(weight, x._data.dtype)
    return apply(_prelu_k, x, weight, wshape=wshape)


def _rrelu_k(x, noise):
    dt = x.dtype
    xp = backend.get_array_module(x)
    xc = _up(x)
    slope = xp.where(xc >= 0, 1.0, noise).astype(xc.dtype, copy=False)

    def backward(g):
        return _down(_up(g) * slope, dt, xp), None

    return _down(xc * slope, dt, xp), backward


def _rrelu_hi(i, g):
    x, noise = i
    slope = _search.where(x >= 0, 1.0, noise.astype(x.dtype))
    return (g[0] * slope.detach(), None)


_rrelu_k.op_name = "rrelu"
_rrelu_k.saves = ()
_rrelu_k.hi = _rrelu_hi


def rrelu(x, lower=1.0 / 8.0, upper=1.0 / 3.0, training=True, name=None):
    """Randomized leaky ReLU: negative inputs are scaled by a slope drawn from
    ``U(lower, upper)`` per element in training, and by ``(lower + upper) / 2`` otherwise (B90).

    Args:
        x (Tensor): floating input.
        lower (float): in [0, 1]. Default 1/8.
        upper (float): in [lower, 1]. Default 1/3.
        training (bool): draw random slopes. Default True.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.
    """
    if not isinstance(lower, float) or not isinstance(upper, float):
        raise TypeError(f"The lower and upper values must be float type. Received: lower "
                        f"{lower}, upper {upper}.")
    if lower < 0 or lower > 1:
        raise ValueError(f"The lower value must be no less than zero or greater than one. "
                         f"Received: {lower}.")
    if upper < lower:
        raise ValueError(f"The upper value must be greater than lower value. Received: lower "
                         f"{lower}, upper {upper}.")
    if upper > 1:
        raise ValueError(f"The upper value must be no greater than one. Received: {upper}.")
    x = _float_arg(x, "rrelu")
    if not training:
        return apply(_leaky_k, x, slope=float(np.float32((lower + upper) / 2.0)))
    cdt = _up(x._data[:0]).dtype
    noise = _rnd.uniform_array(x._data.shape, cdt, lower, upper,
                               gen=_rnd.generator_for(x._data))
    return apply(_rrelu_k, x, noise)


API = [
    "celu", "elu", "elu_", "gelu", "glu", "gumbel_softmax", "hardshrink", "hardsigmoid",
    "hardswish", "hardtanh", "hardtanh_", "leaky_relu", "leaky_relu_", "log_sigmoid",
    "log_softmax", "maxout", "mish", "prelu", "relu", "relu6", "relu_", "rrelu", "selu",
    "sigmoid", "silu", "softmax", "softmax_", "softplus", "softshrink", "softsign", "swish",
    "tanh", "tanh_", "tanhshrink", "thresholded_relu", "thresholded_relu_",
]
