"""Activation functions (``paddle.nn.functional`` activations).

Every activation is one kernel on raw arrays (see ``framework/op.py``) declared with ONE gradient
rule written over the rule namespace ``M``: on raw arrays it gives first-order gradients, on
Tensors (``create_graph=True``) differentiable ones. Elementwise rules read one value, the input
or the output when the derivative can be read from it. float16/bfloat16 inputs are computed in
float32 and rounded back once, which is what Paddle's GPU kernels do (Paddle's CPU build has no
low-precision kernels).
"""

from __future__ import annotations

import contextlib
import functools
import math as _pymath
import numbers

import numpy as np

from ... import backend
from ...backend import tuning
from ...backend.arrays import down as _down
from ...backend.arrays import sigmoid as _sigmoid
from ...backend.arrays import up as _up
from ...framework import dtype as _dt
from ...framework import random as _rnd
from ...framework.engine import GRAD
from ...framework.op import apply, apply_, op
from ...framework.tensor import Tensor
from ...tensor import math as _math
from ...tensor._helpers import cast_to, float_arg, norm_axis, tensor_arg
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

def _check_number(v, op: str, arg: str) -> float:
    """A float attribute, rounded to float32: Paddle stores activation attributes as 32-bit
    floats, so float64 inputs see e.g. 0.01 as 0.009999999776."""
    if isinstance(v, Tensor) and v.size == 1:
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{op}: '{arg}' must be a number, got {type(v).__name__}")
    return float(np.float32(v))


def _elementwise(name, fwd, d, from_out=False, quiet=False):
    """Build the kernel of an elementwise activation.

    ``fwd(xc, xp, **attrs)`` computes the output in the compute dtype; ``d(M, g, s, **attrs)``
    is the gradient rule: the input gradient from the upstream gradient ``g`` and one value
    ``s`` (the input, or the output when ``from_out``), written once over the rule namespace
    ``M``. On arrays it runs in the compute dtype (float16/bfloat16 widened to float32) and the
    result is rounded back to x's dtype.

    Unlike ``tensor.math._unary``'s derivative ``df(M, x, out)`` (which the factory multiplies
    by g), ``d`` takes g itself: the piecewise activations select between g and a scaled g
    (``where(x > 0, g, g * k)``), one pass fewer than building the derivative and then
    multiplying (measured: elu's backward 16 vs 28 us at 4096 float32 elements, 9.5 vs 12.9 ms
    at 2^20), and a mask rule multiplies g by the boolean mask directly (relu).
    ``quiet``: fwd and d raise no floating-point warnings on any input (NaN and inf
    included), so the errstate scope (about 1 µs a call) is skipped.
    """
    guard = contextlib.nullcontext if quiet else functools.partial(np.errstate, all="ignore")

    def kernel(x, **attrs):
        dt = x.dtype
        xp = backend.get_array_module(x)
        xc = x if dt in _NATIVE else x.astype(_F32)
        with guard():
            oc = fwd(xc, xp, **attrs)
        return _down(oc, dt), GRAD

    def grad(M, x, out, g, **attrs):
        s = out if from_out else x
        if M.tensor:
            return (d(M, g, s, **attrs),)
        dt = x.dtype
        if dt in _NATIVE:
            with guard():
                return (d(M, g, s, **attrs),)
        with guard():
            r = d(M, g.astype(_F32), s.astype(_F32), **attrs)
        return (_down(r, dt),)

    kernel.__name__ = "_" + name
    # from_out: the rule reads only the output, so a later inplace change of x does not matter
    return op(name, saves=() if from_out else (0,), grad=grad, uses_out=from_out)(kernel)


def _run(kernel, x, op, **attrs):
    return apply(kernel, float_arg(x, op), **attrs)


def _run_(kernel, x, op, **attrs):
    return apply_(kernel, float_arg(x, op), **attrs)


def _softplus_arr(x, xp):
    """log(1 + exp(x)) without overflow."""
    return xp.maximum(x, 0) + xp.log1p(xp.exp(-xp.abs(x)))


# ---------------------------------------------------------------- relu family

# NumPy's fmax/maximum against a scalar does not use its vector loop; against an array it does
# (2.7x faster in cache, 1.5x on activations larger than the cache), so large contiguous
# inputs are taken as rows of _RELU_ROW elements against one shared row of zeros
_RELU_ROW = tuning.value("activation.relu_row")
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
    lambda M, g, o: g * (o > 0),
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


def _band_grad(M, g, v, lo, hi):
    """``g * (lo < v < hi)`` with the mask as a 0/1 factor, as Paddle computes the gradients of
    relu6 and hardtanh: a NaN or inf upstream gradient gives NaN where the mask is 0, and a
    negative one gives -0.0 there. On arrays the boolean mask multiplies g directly (NumPy casts
    it in the multiply's loop): about 10x faster than ``where`` and no float mask is made."""
    if M.tensor:
        vv = M.value(v)
        return g * M.mask((vv > lo) & (vv < hi), g)
    inside = v > lo
    inside &= v < hi
    return g * inside


def _relu6_grad(M, g, o):
    return _band_grad(M, g, o, 0, 6)


_relu6_k = _elementwise(
    "relu6",
    lambda x, xp: xp.clip(x, 0, 6),
    _relu6_grad,
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
    lambda M, g, x, slope: M.where(x >= 0, g, g * slope))


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


_elu_k = _elementwise(
    "elu",
    lambda x, xp, alpha: xp.where(x > 0, x, alpha * xp.expm1(xp.minimum(x, 0))),
    # exp(min(x, 0)): the positive branch never overflows
    lambda M, g, x, alpha: M.where(x > 0, g, g * (alpha * M.exp(M.minimum(x, 0.0)))))


def elu(x, alpha=1.0, name=None):
    """ELU: ``x`` for x > 0, ``alpha * (exp(x) - 1)`` otherwise, for any alpha.

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


_celu_k = _elementwise(
    "celu",
    lambda x, xp, alpha: xp.where(x > 0, x, alpha * xp.expm1(xp.minimum(x, 0) / alpha)),
    lambda M, g, x, alpha: M.where(x > 0, g, g * M.exp(M.minimum(x, 0.0) / alpha)))


def celu(x, alpha=1.0, name=None):
    """CELU: ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

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


def _selu_grad(M, g, o, scale, alpha):
    # Paddle reads the derivative off the output, scale * alpha rounded to float32:
    # d = out + scale * alpha on the negative side
    sa = float(np.float32(scale * alpha))
    return M.where(o > 0, g * scale, g * (o + sa))


_selu_k = _elementwise(
    "selu",
    lambda x, xp, scale, alpha: scale * xp.where(x > 0, x, alpha * xp.expm1(xp.minimum(x, 0))),
    _selu_grad, from_out=True)


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


def _erf(M, v):
    # the array erf lives with the special functions (NumPy has none); Tensors use paddle.erf
    return M.erf(v) if M.tensor else _erf_arr(v)


def _gelu_grad(M, g, x, approximate):
    if approximate:
        x2 = x * x
        t = M.tanh(_SQRT_2_OVER_PI * x * (1.0 + _GELU_C * x2))
        d = 0.5 * (1.0 + t) + (0.5 * _SQRT_2_OVER_PI) * x * (1.0 - t * t) * (
            1.0 + 3.0 * _GELU_C * x2)
        return g * d
    d = 0.5 * (1.0 + _erf(M, x * _INV_SQRT_2)) + _INV_SQRT_2PI * x * M.exp(-0.5 * x * x)
    return g * d


_gelu_k = _elementwise("gelu", _gelu_fwd, _gelu_grad)


def gelu(x, approximate=False, name=None):
    """GELU: ``0.5 x (1 + erf(x / sqrt(2)))``, or the tanh formula when approximate.

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
    lambda M, g, x, t: g * ((x > t) | (x < -t)))


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
    lambda M, g, x, t: g * ((x > t) | (x < -t)))


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
    lambda M, g, o, slope, offset: _band_grad(M, g * slope, o, 0, 1),
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


def _hardswish_grad(M, g, x):
    # a factor that is 0 below -3 (not a selection), so that a NaN or negative upstream
    # gradient gives NaN or -0.0 there, as Paddle
    return g * M.where(x > -3, M.where(x < 3, (2.0 * x + 3.0) / 6.0, 1.0), 0.0)


_hardswish_k = _elementwise(
    "hardswish",
    lambda x, xp: x * xp.clip(x + 3.0, 0, 6) / 6.0,
    _hardswish_grad)


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
    _band_grad)


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
    lambda M, g, x, t: g * (x > t))


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

_log_sigmoid_k = _elementwise(
    "log_sigmoid",
    lambda x, xp: xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x))),
    # sigmoid(-x), computed so that neither branch overflows
    lambda M, g, x: g * M.sigmoid(-x))


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


def _softplus_grad(M, g, x, beta, threshold):
    bx = x * beta
    return M.where(bx > threshold, g, g * M.sigmoid(bx))


_softplus_k = _elementwise("softplus", _softplus_fwd, _softplus_grad)


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
    lambda M, g, x: g / M.square(1.0 + M.abs(x)))


def softsign(x, name=None):
    """Softsign: ``x / (1 + |x|)``.

    Args:
        x (Tensor): floating input.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.
    """
    return _run(_softsign_k, x, "softsign")


def _silu_grad(M, g, x):
    s = M.sigmoid(x)
    return g * (s * (1.0 + x * (1.0 - s)))


_silu_k = _elementwise("silu", lambda x, xp: x * _sigmoid(x), _silu_grad)
_swish_k = _elementwise("swish", lambda x, xp: x * _sigmoid(x), _silu_grad)


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


def _mish_grad(M, g, x):
    sp = M.where(x > 20.0, x, M.maximum(x, 0.0) + M.log1p(M.exp(-M.abs(x))))
    t = M.tanh(sp)
    dsp = M.where(x > 20.0, 1.0, M.sigmoid(x))
    return g * (t + x * (1.0 - t * t) * dsp)


_mish_k = _elementwise("mish", lambda x, xp: x * _mish_parts(x, xp)[1], _mish_grad)


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
    lambda M, g, x: g * M.square(M.tanh(x)))


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
    return _math.sigmoid(float_arg(x, "sigmoid"))


def tanh(x, name=None):
    """Hyperbolic tangent.

    Args:
        x (Tensor): floating input; an integer or bool x raises TypeError, as in Paddle 2.6
            (which has no integer kernel for it).
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.
    """
    return _math.tanh(float_arg(x, "tanh"))


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


def _softmax_grad(M, x, out, saved, g, axis):
    """``y * (g - sum(g * y))``. The residual is the output kept in float32 (float16/bfloat16
    gradients do not pass through the rounded output); under create_graph it is recomputed
    from x, being differentiable."""
    xv = M.value(x)
    if xv.ndim == 0:  # softmax of a scalar is the constant 1
        return (M.zeros_like(g),)
    if M.tensor:
        y = M.op(_softmax_k, x, axis=axis)
    else:
        (y,) = saved
        g = _up(g)
    gy = g * y
    r = gy - y * M.sum(gy, axis=axis, keepdim=True)
    return (r if M.tensor else _down(r, xv.dtype),)


@op("softmax", saves=(), grad=_softmax_grad, residuals=True)
def _softmax_k(x, axis):
    dt, shape = x.dtype, x.shape
    xp = backend.get_array_module(x)
    xc = _axis_view(_up(x), axis)
    if xc.size == 0:
        oc = xc.copy()
    else:
        oc = _softmax_arr(xc, axis, xp)
    oc = oc.reshape(shape)
    return _down(oc, dt), GRAD.save(oc)


def _log_softmax_grad(M, x, out, saved, g, axis):
    """``g - softmax(x) * sum(g)``; the residual is the float32 log-probabilities (the
    probabilities are recomputed from x under create_graph)."""
    xv = M.value(x)
    if xv.ndim == 0:
        return (M.zeros_like(g),)
    if M.tensor:
        p = M.op(_softmax_k, x, axis=axis)
    else:
        p = M.exp(saved[0])
        g = _up(g)
    r = g - p * M.sum(g, axis=axis, keepdim=True)
    return (r if M.tensor else _down(r, xv.dtype),)


@op("log_softmax", saves=(), grad=_log_softmax_grad, residuals=True)
def _log_softmax_k(x, axis):
    dt, shape = x.dtype, x.shape
    xp = backend.get_array_module(x)
    xc = _axis_view(_up(x), axis)
    if xc.size == 0:
        oc = xc.copy()
    else:
        oc = xc - xc.max(axis=axis, keepdims=True)
        oc -= xp.log(xp.exp(oc).sum(axis=axis, keepdims=True))
    oc = oc.reshape(shape)
    return _down(oc, dt), GRAD.save(oc)


def _softmax_prep(x, axis, dtype, op):
    x = tensor_arg(x, op)
    if dtype is not None:
        x = cast_to(x, _dt.to_np(dtype))
    x = float_arg(x, op)
    return x, norm_axis(axis, x.ndim, op)


def softmax(x, axis=-1, dtype=None, name=None):
    """Softmax along ``axis``: ``exp(x - max) / sum(exp(x - max))``.

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
    x = float_arg(x, "softmax_")
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


def _gumbel_grad(M, x, noise, out, g, temperature, hard, axis):
    # straight-through: the hard sample is differentiated as the soft one (Paddle's doc)
    dt = x.dtype
    if not M.tensor:
        x, g = _up(x), _up(g)
    y = M.op(_softmax_k, (x + noise) / temperature, axis=axis)
    gy = g * y
    r = (gy - y * M.sum(gy, axis=axis, keepdim=True)) / temperature
    return (r if M.tensor else _down(r, dt)), None


@op("gumbel_softmax", grad=_gumbel_grad)
def _gumbel_k(x, noise, temperature, hard, axis):
    dt = x.dtype
    xp = backend.get_array_module(x)
    y = _softmax_arr((_up(x) + noise) / temperature, axis, xp)
    if hard:
        idx = y.argmax(axis=axis)
        out = xp.zeros_like(y)
        xp.put_along_axis(out, xp.expand_dims(idx, axis), 1.0, axis=axis)
    else:
        out = y
    return _down(out, dt), GRAD


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
    x = float_arg(x, "gumbel_softmax")
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

def _glu_grad(M, x, out, g, axis):
    dt = x.dtype
    if not M.tensor:
        x, g = _up(x), _up(g)
    a, b = M.split(x, 2, axis=axis)
    s = M.sigmoid(b)
    ga = g * s
    r = M.concat([ga, ga * a * (1.0 - s)], axis=axis)
    return (r if M.tensor else _down(r, dt),)


@op("glu", grad=_glu_grad)
def _glu_k(x, axis):
    dt = x.dtype
    xp = backend.get_array_module(x)
    a, b = xp.split(_up(x), 2, axis=axis)
    return _down(a * _sigmoid(b), dt), GRAD


def glu(x, axis=-1, name=None):
    """Gated linear unit: split x in two halves ``a, b`` along axis and return
    ``a * sigmoid(b)``.

    Args:
        x (Tensor): floating input whose size along ``axis`` is even.
        axis (int): Default -1.
        name (str, optional): unused.

    Returns:
        Tensor: x's shape with ``axis`` halved.

    Example:
        >>> F.glu(paddle.to_tensor([[1., 2., 3., 4.]]))  # [[0.95257413, 1.96402758]]
    """
    x = float_arg(x, "glu")
    axis = norm_axis(axis, x.ndim, "glu")
    if x.ndim == 0 or x.shape[axis] % 2:
        raise ValueError(f"glu: the size of x along axis {axis} must be even to split it in "
                         f"two halves, got x of shape {x.shape}")
    return apply(_glu_k, x, axis=axis)


def _maxout_grad(M, x, out, g, groups, axis):
    # each output's gradient goes to the first maximum of its group (as Paddle)
    xv = M.value(x)
    xp = backend.get_array_module(xv)
    shape = tuple(xv.shape)
    rshape = shape[:axis] + (shape[axis] // groups, groups) + shape[axis + 1:]
    xr = xv.reshape(rshape)
    onehot = xp.zeros(rshape, dtype=xv.dtype)
    xp.put_along_axis(onehot, xp.expand_dims(xr.argmax(axis=axis + 1), axis + 1), 1,
                      axis=axis + 1)
    gshape = shape[:axis] + (shape[axis] // groups, 1) + shape[axis + 1:]
    return (M.reshape(M.reshape(g, gshape) * M.const(onehot), shape),)


@op("maxout", grad=_maxout_grad)
def _maxout_k(x, groups, axis):
    shape = x.shape
    xp = backend.get_array_module(x)
    c = shape[axis]
    xr = x.reshape(shape[:axis] + (c // groups, groups) + shape[axis + 1:])
    idx = xp.expand_dims(xr.argmax(axis=axis + 1), axis + 1)
    return xp.take_along_axis(xr, idx, axis=axis + 1).squeeze(axis + 1), GRAD


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
    x = float_arg(x, "maxout")
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

def _prelu_grad(M, x, w, out, g, wshape):
    dt, wdt = x.dtype, w.dtype
    if not M.tensor:
        x, w, g = _up(x), _up(w), _up(g)
    pos = x > 0
    gx = M.where(pos, g, M.reshape(w, wshape) * g)
    gw = M.where(pos, 0.0, g * x)
    red = tuple(k for k in range(gx.ndim) if k >= len(wshape) or wshape[k] == 1)
    if red:
        gw = M.sum(gw, axis=red)
    gw = M.reshape(gw, w.shape)
    if M.tensor:
        return gx, gw
    return _down(gx, dt), _down(gw, wdt)


@op("prelu", grad=_prelu_grad)
def _prelu_k(x, w, wshape):
    xp = backend.get_array_module(x)
    xc = _up(x)
    return _down(xp.where(xc > 0, xc, _up(w).reshape(wshape) * xc), x.dtype), GRAD


_PRELU_FORMATS = ("NC", "NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC")


def prelu(x, weight, data_format="NCHW", name=None):
    """PReLU: ``x`` for x > 0, ``weight * x`` otherwise, with one weight for all elements
    (weight shape [1]) or one per channel (shape [C]; the channel axis is 1, or the last axis
    for channel-last formats).

    Args:
        x (Tensor): floating input.
        weight (Tensor): 0-D/1-D slopes, of size 1 or C.
        data_format (str): 'NC', 'NCL', 'NCHW', 'NCDHW', 'NLC', 'NHWC' or 'NDHWC'.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.
    """
    x = float_arg(x, "prelu")
    weight = float_arg(weight, "prelu", "weight")
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


def _rrelu_grad(M, x, noise, out, g):
    # the slopes are constants of the draw: no gradient flows into the noise
    dt = x.dtype
    if M.tensor:
        noise = noise.astype(x.dtype)
    else:
        x, g = _up(x), _up(g)
    r = g * M.where(x >= 0, 1.0, noise)
    return (r if M.tensor else _down(r, dt)), None


@op("rrelu", grad=_rrelu_grad)
def _rrelu_k(x, noise):
    xp = backend.get_array_module(x)
    xc = _up(x)
    slope = xp.where(xc >= 0, 1.0, noise).astype(xc.dtype, copy=False)
    return _down(xc * slope, x.dtype), GRAD


def rrelu(x, lower=1.0 / 8.0, upper=1.0 / 3.0, training=True, name=None):
    """Randomized leaky ReLU: negative inputs are scaled by a slope drawn from
    ``U(lower, upper)`` per element in training, and by ``(lower + upper) / 2`` otherwise.

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
    x = float_arg(x, "rrelu")
    if not training:
        return apply(_leaky_k, x, slope=float(np.float32((lower + upper) / 2.0)))
    cdt = _up(x._data[:0]).dtype
    noise = _rnd.uniform_array(x._data.shape, cdt, lower, upper,
                               gen=_rnd.generator_for(x._data))
    return apply(_rrelu_k, x, noise)
