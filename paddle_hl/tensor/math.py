"""Elementwise math, cumulative ops and a few small compound ops (Paddle's ``tensor/math.py``).

Each op is a kernel on raw arrays declared with ``@op`` (see framework/op.py): its gradient rule
is written once over an operator namespace ``M`` and serves both first-order gradients (on
arrays) and ``create_graph`` (on Tensors). A public function with Paddle's signature wraps it.

Gradients of complex tensors follow Paddle's convention: for a holomorphic ``out = f(x)`` the
input gradient is ``g * conj(f'(x))``.
"""

from __future__ import annotations

import math as _pymath
import numbers

import numpy as np

from ..backend import get_array_module as _xp
from ..backend.arrays import sigmoid as _stable_sigmoid
from ..framework import dtype as _dt
from ..framework.op import GRAD, apply, apply_, apply_scalar, inplace, op
from ..framework.tensor import Tensor, _wrap
from ._helpers import (
    OPERATOR,
    as_float,
    cast_to,
    check_kinds,
    norm_axis,
    promote_pair,
    tensor_arg,
)

__all__ = []


def _is_complex(a) -> bool:
    return getattr(a, "dtype", None) is not None and a.dtype.kind == "c"


def _cj(t):
    """conj(t) for complex Tensors/arrays, t itself otherwise (used by gradient rules)."""
    if isinstance(t, Tensor):
        return conj(t) if t._data.dtype.kind == "c" else t
    if isinstance(t, complex):
        return t.conjugate()
    if _is_complex(t):
        return t.conj()
    return t


def _const(arr):
    """A constant (no-grad) Tensor around a raw array, for masks inside gradient rules."""
    return _wrap(arr)


def _kind(t: Tensor) -> str:
    return t._data.dtype.kind


def _is_inexact(t: Tensor) -> bool:
    return _dt.is_inexact_np(t._data.dtype)


def _require_float(x: Tensor, op: str, arg: str = "x", complex_ok: bool = False):
    d = x._data.dtype
    if _dt.is_float_np(d) or (complex_ok and d.kind == "c"):
        return
    allowed = "float16, bfloat16, float32, float64" + (", complex64, complex128"
                                                      if complex_ok else "")
    raise TypeError(f"{op}: argument '{arg}' must be a floating point tensor ({allowed}), "
                    f"got {x.dtype}")


def _require_int(x: Tensor, op: str, arg: str = "x"):
    if x._data.dtype.kind not in "iu":
        raise TypeError(f"{op}: argument '{arg}' must be an integer tensor (uint8, int8, int16, "
                        f"int32 or int64), got {x.dtype}")


def _zero_grad(M, x, out, g, **_):
    """Gradient rule of a piecewise-constant op: zero (connected to g under create_graph)."""
    return (M.zeros_like(g),)


def _times_zero(M, x, out, g, **_):
    """Gradient rule of a piecewise-constant op whose zero derivative multiplies the upstream
    gradient, as Paddle's floor, ceil, round and sign do: an inf or NaN upstream gradient gives
    NaN."""
    return (g * 0,)


def _zeros_bw(g):
    return (_xp(g).zeros_like(g),)


# ---------------------------------------------------------------- binary elementwise

def _prep(x, y, op, strict=False):
    """Dtype rules for a binary op; a Python float lifts an int/bool tensor to float.
    ``strict``: a float tensor meeting an integer one raises (see ``promote_pair``)."""
    x, y = promote_pair(x, y, op, strict)
    if isinstance(x, Tensor):
        if type(y) is float and x._data.dtype.kind in "biu":
            x = as_float(x)
        elif isinstance(y, bool) and x._data.dtype.kind != "b":
            y = int(y)
        elif x._data.dtype == _dt.BFLOAT16_NP and type(y) in (int, float):
            y = _dt.BFLOAT16_NP.type(y)  # NumPy would promote bfloat16 op Python float to fp32
    elif isinstance(y, Tensor):
        if type(x) is float and y._data.dtype.kind in "biu":
            y = as_float(y)
        elif isinstance(x, bool) and y._data.dtype.kind != "b":
            x = int(x)
        elif y._data.dtype == _dt.BFLOAT16_NP and type(x) in (int, float):
            x = _dt.BFLOAT16_NP.type(x)
    return x, y


def _tensors(x, y, op, strict=False):
    """Both operands as Tensors of one dtype (a Python scalar takes the other's dtype)."""
    x, y = _prep(x, y, op, strict)
    if not isinstance(x, Tensor):
        x = _wrap(_scalar_array(x, y, op))
    elif not isinstance(y, Tensor):
        y = _wrap(_scalar_array(y, x, op))
    return x, y


def _scalar_array(s, t: Tensor, op):
    xp = _xp(t._data)
    d = t._data.dtype
    if isinstance(s, complex) and d.kind != "c":
        d = np.dtype(np.complex128 if d == np.float64 else np.complex64)
    try:
        return xp.asarray(s, dtype=d)
    except (OverflowError, ValueError) as e:
        raise ValueError(f"{op}: the scalar {s!r} does not fit the tensor's dtype {t.dtype} "
                         f"({e})") from None


def _bcast_check(x: Tensor, y: Tensor, op: str):
    try:
        np.broadcast_shapes(x._data.shape, y._data.shape)
    except ValueError:
        raise ValueError(f"{op}: the shapes of x {x.shape} and y {y.shape} cannot be broadcast "
                         "together") from None


def _add_bw(g):
    return g, g


@op("add", saves=(), broadcast=True, const_grad=_add_bw)
def _add(x, y):
    return x + y, GRAD


def _sub_bw(g):
    return g, -g


@op("subtract", saves=(), broadcast=True, const_grad=_sub_bw)
def _sub(x, y):
    return x - y, GRAD


def _mul_grad(M, x, y, out, g):
    if M.tensor or out.dtype.kind == "c":
        return g * M.conj(y), g * M.conj(x)
    return g * y, g * x


@op("multiply", broadcast=True, grad=_mul_grad)
def _mul(x, y):
    return x * y, GRAD


@op("scale", saves=(), grad=lambda M, x, s, out, g: (g * s, None))
def _mul_scalar(x, s):
    return x * s, GRAD


def _div_grad(M, x, y, out, g):
    if M.tensor or out.dtype.kind == "c":
        # under create_graph the quotient is formed from x and y, so it stays differentiable
        return g / M.conj(y), -g * M.conj(x / (y * y))
    return g / y, -g * out / y


@op("divide", broadcast=True, grad=_div_grad)
def _div(x, y):
    return x / y, GRAD


def _int_pow(x, y, xp):
    """Integer ** integer where negative exponents truncate toward zero, as C does (no error)."""
    neg = y < 0
    if not xp.any(neg):
        return x ** y
    out = x ** xp.where(neg, 0, y)
    # 1 ** -n == 1, (-1) ** -n == +-1, any other base gives |result| < 1 -> 0
    small = xp.where(x == 1, 1, xp.where(x == -1, xp.where(y % 2 == 0, 1, -1), 0))
    return xp.where(neg, small, out).astype(out.dtype)


def _pow_grad(M, x, y, out, g):
    gx = g * M.conj(y * x ** (y - 1))
    if not hasattr(y, "shape"):  # a Python-number exponent gets no gradient
        return gx, None
    # d/dy x**y = x**y log x, defined as 0 where x <= 0
    safe = x if M.is_complex(x) else M.where(x > 0, x, M.ones_like(x))
    return gx, g * M.conj(x ** y * M.log(safe))


@op("pow", broadcast=True, grad=_pow_grad)
def _pow(x, y):
    xp = _xp(x)
    if x.dtype.kind in "iu":
        if isinstance(y, numbers.Integral):
            return _int_pow(x, xp.asarray(y, dtype=x.dtype), xp), None
        if getattr(y, "dtype", None) is not None and y.dtype.kind in "iu":
            return _int_pow(x, y, xp), None
    return x ** y, GRAD


# maximum/minimum: the gradient goes to x where x wins and to y elsewhere (ties go to y); a NaN
# comparison sends it nowhere, as in Paddle
@op("maximum", broadcast=True,
    grad=lambda M, x, y, out, g: (M.select(x > y, g), M.select(x <= y, g)))
def _maximum(x, y):
    # Paddle's kernel is ``x > y ? x : y``: a NaN in x yields y, a NaN in y yields NaN
    return _xp(x).where(x > y, x, y), GRAD


@op("minimum", broadcast=True,
    grad=lambda M, x, y, out, g: (M.select(x < y, g), M.select(x >= y, g)))
def _minimum(x, y):
    # Paddle's kernel is ``x < y ? x : y``: a NaN in x yields y, a NaN in y yields NaN
    return _xp(x).where(x < y, x, y), GRAD


def _fmax_mask(x, y):
    xp = _xp(x)
    if x.dtype.kind in "fc" or x.dtype == _dt.BFLOAT16_NP:
        return (x >= y) | xp.isnan(y)
    return x >= y


def _fmin_mask(x, y):
    xp = _xp(x)
    if x.dtype.kind in "fc" or x.dtype == _dt.BFLOAT16_NP:
        return (x <= y) | xp.isnan(y)
    return x <= y


def _fminmax(name, ufunc, mask_fn):
    def grad(M, x, y, out, g):
        m = mask_fn(M.value(x), M.value(y))  # x wins where it is selected or y is NaN
        return M.select(m, g), M.select(~m, g)

    @op(name, broadcast=True, grad=grad)
    def kernel(x, y):
        return getattr(_xp(x), ufunc)(x, y), GRAD

    kernel.__name__ = "_" + name
    return kernel


_fmax = _fminmax("fmax", "fmax", _fmax_mask)
_fmin = _fminmax("fmin", "fmin", _fmin_mask)


def _binary_public(kernel, x, y, op, strict=False):
    x, y = _prep(x, y, op, strict)
    if not isinstance(x, Tensor):
        x = _wrap(_scalar_array(x, y, op))
    elif not isinstance(y, Tensor):
        y = _wrap(_scalar_array(y, x, op))
    if x._data.shape != y._data.shape:
        _bcast_check(x, y, op)
    return apply(kernel, x, y)


def add(x, y, name=None):
    """Elementwise ``x + y`` with broadcasting.

    Args:
        x (Tensor): input.
        y (Tensor|number): input, broadcast against x.

    Returns:
        Tensor: the sum.

    Example:
        >>> paddle.add(paddle.to_tensor([1., 2.]), paddle.to_tensor([3., 4.]))
    """
    if type(y) is float and isinstance(x, Tensor) and x._data.dtype.kind == "f":
        return apply_scalar(_add, x, y)
    return _binary_public(_add, x, y, "add", name is not OPERATOR)


def subtract(x, y, name=None):
    """Elementwise ``x - y`` with broadcasting.

    Args:
        x (Tensor): input.
        y (Tensor|number): input, broadcast against x.

    Returns:
        Tensor: the difference.
    """
    return _binary_public(_sub, x, y, "subtract", name is not OPERATOR)


def multiply(x, y, name=None):
    """Elementwise ``x * y`` with broadcasting.

    Args:
        x (Tensor): input.
        y (Tensor|number): input, broadcast against x.

    Returns:
        Tensor: the product.
    """
    if type(y) is float and isinstance(x, Tensor) and x._data.dtype.kind == "f":
        return apply_scalar(_mul_scalar, x, y)  # the common case, which _prep leaves as it is
    if isinstance(x, Tensor) and not isinstance(y, (Tensor, complex)):
        x, y = _prep(x, y, "multiply")
        return apply(_mul_scalar, x, y)
    if isinstance(y, Tensor) and not isinstance(x, (Tensor, complex)):
        y, x = _prep(y, x, "multiply")
        return apply(_mul_scalar, y, x)
    return _binary_public(_mul, x, y, "multiply", name is not OPERATOR)


def divide(x, y, name=None):
    """Elementwise division ``x / y``, as Paddle's ``divide`` kernel computes it.

    Two integer (or bool) tensors divide as integers, truncating toward zero (C division:
    ``-7 / 2 == -3``), and keep their dtype; a zero divisor raises. Anything else is true
    division, where integer inputs give the default float dtype. The ``/`` operator is always
    true division (``paddle.to_tensor([7]) / paddle.to_tensor([2])`` is float32 3.5).

    Args:
        x (Tensor): dividend.
        y (Tensor|number): divisor, broadcast against x.

    Returns:
        Tensor: the quotient.

    Example:
        >>> paddle.divide(paddle.to_tensor([7, -7]), paddle.to_tensor([2, 2]))  # int64 [3, -3]
    """
    if isinstance(x, Tensor) and isinstance(y, Tensor) and x._data.dtype.kind in "biu" \
            and y._data.dtype.kind in "biu":
        return _int_divide(x, y)
    return true_divide(x, y)


def _int_divide(x, y):
    x, y = promote_pair(x, y, "divide")
    xp = _xp(x._data)
    a, b = x._data, y._data
    if bool(xp.any(b == 0)):
        raise ValueError(f"divide: integer division by zero (x {x.dtype.name} of shape "
                         f"{x.shape}, y of shape {y.shape}); cast to a float dtype for inf/nan")
    if a.dtype.kind == "b":
        return _wrap(a & b)  # True / True is 1; False / True is 0
    q = a // b
    # floor -> truncation toward zero where the exact quotient is negative and inexact
    q += ((a % b) != 0) & ((a < 0) != (b < 0))
    return _wrap(q)


def true_divide(x, y, name=None):
    """Elementwise true division ``x / y`` (the ``/`` operator); integer inputs give the
    default float dtype.

    Args:
        x (Tensor): dividend.
        y (Tensor|number): divisor, broadcast against x.

    Returns:
        Tensor: the quotient (never rounded to an integer).

    Example:
        >>> paddle.to_tensor([327]) / paddle.to_tensor([80])   # float32 [4.0875]
    """
    if name is not OPERATOR and isinstance(x, Tensor) and isinstance(y, Tensor) and \
            x._data.dtype != y._data.dtype:
        check_kinds(x._data.dtype, y._data.dtype, "divide")
    x, y = _prep(x, y, "divide")
    if isinstance(x, Tensor) and x._data.dtype.kind in "biu":
        x = as_float(x)
    if isinstance(y, Tensor) and y._data.dtype.kind in "biu":
        y = as_float(y)
    if isinstance(x, Tensor) and isinstance(y, Tensor):
        x, y = promote_pair(x, y, "divide")
    if not isinstance(y, Tensor) and not isinstance(y, complex):
        if y == 0:
            return apply(_div, x, y)
        # the reciprocal in the tensor's own precision (a bfloat16 scalar stays bfloat16)
        return apply(_mul_scalar, x, type(y)(1.0 / float(y)) if isinstance(y, np.generic)
                     else 1.0 / y)
    return _binary_public(_div, x, y, "divide")


def pow(x, y, name=None):  # noqa: A001
    """Elementwise ``x ** y``.

    Args:
        x (Tensor): base.
        y (Tensor|number): exponent; a Python float lifts an integer x to float.

    Returns:
        Tensor: the power. Integer bases to negative integer powers truncate toward zero.
    """
    x = tensor_arg(x, "pow", "x")
    x, y = _prep(x, y, "pow", name is not OPERATOR)
    if isinstance(y, Tensor):
        if x._data.shape != y._data.shape:
            _bcast_check(x, y, "pow")
    return apply(_pow, x, y)


def maximum(x, y, name=None):
    """Elementwise maximum as Paddle computes it, ``x > y ? x : y``: a NaN in y is returned,
    a NaN in x is not (``maximum(nan, 1) == 1``, ``maximum(1, nan)`` is nan); use
    :func:`fmax` to ignore NaNs on both sides.

    Args:
        x (Tensor): input.
        y (Tensor|number): input, broadcast against x.

    Returns:
        Tensor: the larger value; where x == y the gradient goes to y, as in Paddle.
    """
    return _binary_public(_maximum, x, y, "maximum", True)


def minimum(x, y, name=None):
    """Elementwise minimum as Paddle computes it, ``x < y ? x : y``: a NaN in y is returned,
    a NaN in x is not; use :func:`fmin` to ignore NaNs on both sides.

    Args:
        x (Tensor): input.
        y (Tensor|number): input, broadcast against x.

    Returns:
        Tensor: the smaller value; where x == y the gradient goes to y, as in Paddle.
    """
    return _binary_public(_minimum, x, y, "minimum", True)


def fmax(x, y, name=None):
    """Elementwise maximum that ignores NaN: one NaN gives the other value, two give NaN.

    Args:
        x (Tensor): input.
        y (Tensor): input, broadcast against x.

    Returns:
        Tensor: the larger value.
    """
    return _binary_public(_fmax, x, y, "fmax", True)


def fmin(x, y, name=None):
    """Elementwise minimum that ignores NaN: one NaN gives the other value, two give NaN.

    Args:
        x (Tensor): input.
        y (Tensor): input, broadcast against x.

    Returns:
        Tensor: the smaller value.
    """
    return _binary_public(_fmin, x, y, "fmin", True)


# ---- floor division, remainder, gcd / lcm

@op("floor_divide")
def _floordiv(x, y):
    xp = _xp(x)
    if x.dtype.kind in "iu":
        if xp.any(y == 0):
            raise ZeroDivisionError("floor_divide: integer division by zero")
        return xp.floor_divide(x, y), None
    with np.errstate(divide="ignore", invalid="ignore"):
        return xp.floor_divide(x, y), None


def _remainder_grad(M, x, y, out, g):
    # the quotient is piecewise constant: a constant factor under create_graph too
    xv, yv = M.value(x), M.value(y)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = _xp(xv).floor_divide(xv, yv)
    return g, -g * M.const(q)


@op("remainder", broadcast=True, grad=_remainder_grad)
def _remainder(x, y):
    xp = _xp(x)
    if x.dtype.kind in "iu":
        if xp.any(y == 0):
            raise ZeroDivisionError("remainder: integer modulo by zero")
        return xp.remainder(x, y), None
    with np.errstate(divide="ignore", invalid="ignore"):
        return xp.remainder(x, y), GRAD


def floor_divide(x, y, name=None):
    """Elementwise floor division ``x // y`` (rounds toward negative infinity).

    Args:
        x (Tensor): dividend.
        y (Tensor|number): divisor, broadcast against x.

    Returns:
        Tensor: the floored quotient, in the promoted dtype. Not differentiable.
    """
    return _binary_public(_floordiv, x, y, "floor_divide", name is not OPERATOR)


def remainder(x, y, name=None):
    """Elementwise modulo ``x % y`` with the sign of the divisor (Python semantics).

    Args:
        x (Tensor): dividend.
        y (Tensor|number): divisor, broadcast against x.

    Returns:
        Tensor: the remainder. ``floor_mod`` and ``mod`` are the same op.
    """
    return _binary_public(_remainder, x, y, "remainder", name is not OPERATOR)


floor_mod = remainder
mod = remainder


@op("gcd")
def _gcd(x, y):
    return _xp(x).gcd(x, y), None


@op("lcm")
def _lcm(x, y):
    return _xp(x).lcm(x, y), None


def _int_binary(kernel, x, y, op):
    x, y = _tensors(x, y, op)
    _require_int(x, op, "x")
    _require_int(y, op, "y")
    return _binary_public(kernel, x, y, op)


def gcd(x, y, name=None):
    """Elementwise greatest common divisor of integer tensors (``gcd(0, 0) == 0``).

    Args:
        x (Tensor): integer input.
        y (Tensor): integer input, broadcast against x.

    Returns:
        Tensor: the non-negative gcd.
    """
    return _int_binary(_gcd, x, y, "gcd")


def lcm(x, y, name=None):
    """Elementwise least common multiple of integer tensors (0 when either is 0).

    Args:
        x (Tensor): integer input.
        y (Tensor): integer input, broadcast against x.

    Returns:
        Tensor: the non-negative lcm.
    """
    return _int_binary(_lcm, x, y, "lcm")


# ---- float binary ops: atan2, hypot, logaddexp, nextafter, heaviside, ldexp

def _atan2_grad(M, x, y, out, g):
    r = x * x + y * y
    return g * y / r, -g * x / r


@op("atan2", broadcast=True, grad=_atan2_grad)
def _atan2(x, y):
    return _xp(x).arctan2(x, y), GRAD


@op("hypot", broadcast=True, uses_out=True,
    grad=lambda M, x, y, out, g: (g * x / out, g * y / out))
def _hypot(x, y):
    return _xp(x).hypot(x, y), GRAD


# sigmoid(x - y) rather than exp(x - out): out's rounding at large |x| would leak in
@op("logaddexp", broadcast=True,
    grad=lambda M, x, y, out, g: (g * M.sigmoid(x - y), g * M.sigmoid(y - x)))
def _logaddexp(x, y):
    return _xp(x).logaddexp(x, y), GRAD


@op("nextafter")
def _nextafter(x, y):
    return _xp(x).nextafter(x, y), None


# the step does not depend on x (almost everywhere); it is y where x == 0
@op("heaviside", broadcast=True,
    grad=lambda M, x, y, out, g: (M.zeros_like(g), M.select(M.value(x) == 0, g)))
def _heaviside(x, y):
    xp = _xp(x)
    out = xp.where(x == 0, y, (x > 0).astype(x.dtype))
    if x.dtype.kind == "f":
        out = xp.where(xp.isnan(x), x, out)
    return out.astype(x.dtype, copy=False), GRAD


def _float_binary(kernel, x, y, op, int_to=None, strict=False):
    """Float-only binary op: integer inputs compute in ``int_to`` (default: default dtype)."""
    x, y = _tensors(x, y, op, strict)
    if x._data.dtype.kind in "biu":
        target = int_to or _dt.default_np()
        x, y = cast_to(x, target), cast_to(y, target)
    return _binary_public(kernel, x, y, op)


def atan2(x, y, name=None):
    """Elementwise arctangent of ``x / y`` using both signs to pick the quadrant.

    Args:
        x (Tensor): the y-coordinate. Integer inputs give float64 (computed in float32), as
            in Paddle.
        y (Tensor): the x-coordinate, broadcast against x.

    Returns:
        Tensor: angles in ``[-pi, pi]``.
    """
    x, y = _tensors(x, y, "atan2", True)
    if x._data.dtype.kind in "biu":
        # Paddle computes integer atan2 in float32 and returns it as float64
        out = _float_binary(_atan2, x, y, "atan2", int_to=np.dtype(np.float32))
        return cast_to(out, np.dtype(np.float64))
    return _float_binary(_atan2, x, y, "atan2")


def hypot(x, y, name=None):
    """Elementwise ``sqrt(x**2 + y**2)`` without intermediate overflow.

    Args:
        x (Tensor): input.
        y (Tensor|number): input, broadcast against x.

    Returns:
        Tensor: the hypotenuse.
    """
    return _float_binary(_hypot, x, y, "hypot")


def logaddexp(x, y, name=None):
    """Elementwise ``log(exp(x) + exp(y))``, stable for large inputs.

    Args:
        x (Tensor): input.
        y (Tensor): input, broadcast against x.

    Returns:
        Tensor: the log of the sum of exponentials.
    """
    return _float_binary(_logaddexp, x, y, "logaddexp", strict=True)


def nextafter(x, y, name=None):
    """The next representable float after x in the direction of y (not differentiable).

    Args:
        x (Tensor): float32 or float64 input.
        y (Tensor): direction, broadcast against x.

    Returns:
        Tensor: x's neighbour toward y.
    """
    x, y = _tensors(x, y, "nextafter", True)
    _require_float(x, "nextafter", "x")
    return _binary_public(_nextafter, x, y, "nextafter")


def heaviside(x, y, name=None):
    """Heaviside step: 0 where x < 0, 1 where x > 0, and y where x == 0.

    Args:
        x (Tensor): input.
        y (Tensor|number): the value taken where x == 0, broadcast against x.

    Returns:
        Tensor: the step function, in the promoted dtype.
    """
    return _binary_public(_heaviside, x, y, "heaviside", True)


def _pow2(e, dtype):
    """2 ** e (integer e) in ``dtype``; bfloat16 goes through float32."""
    xp = _xp(e)
    one = np.float32(1) if dtype == _dt.BFLOAT16_NP else xp.ones((), dtype=dtype)
    return xp.ldexp(one, e.astype(np.int32)).astype(dtype, copy=False)


def _ldexp_grad(M, x, y, out, g):
    return g * M.const(_pow2(M.value(y), M.value(x).dtype)), None


@op("ldexp", broadcast=True, grad=_ldexp_grad)
def _ldexp(x, y):
    return x * _pow2(y, x.dtype), GRAD


def ldexp(x, y, name=None):
    """Elementwise ``x * 2**y``.

    Args:
        x (Tensor): mantissas; integer x computes in the default float dtype.
        y (Tensor): integer exponents, broadcast against x.

    Returns:
        Tensor: the scaled values.
    """
    x = as_float(tensor_arg(x, "ldexp", "x"))
    y = tensor_arg(y, "ldexp", "y")
    _require_int(y, "ldexp", "y")
    _bcast_check(x, y, "ldexp")
    return apply(_ldexp, x, y)


# ---------------------------------------------------------------- unary elementwise

def _unary(name, f, df=None, lift=True, no_bool=False, uses_out=False, doc=""):
    """Build kernel + public function for ``out = f(x)``.

    ``df(M, x, out)`` is the derivative, written once over the rule namespace ``M`` (arrays on
    the first-order path, Tensors under create_graph); backward is ``g * conj(df)``. (The
    activations' factory, ``nn.functional.activation._elementwise``, takes the gradient rule
    with g instead, which saves a pass for its select-shaped derivatives; ``_step_unary``'s
    rule is the zero derivative times g, ``g * 0``, as Paddle computes floor's, ceil's and
    round's, except for trunc, whose gradient Paddle gives as zeros even for an inf or NaN
    upstream gradient.) ``uses_out``
    says df reads ``out`` (then x's value is not saved). ``lift`` computes integer input in the
    default float dtype; otherwise the dtype is kept.
    """

    def grad(M, x, out, g):
        if M.tensor or out.dtype.kind == "c":
            return (g * M.conj(df(M, x, out)),)
        return (g * df(M, x, out),)

    def kernel(x):
        return f(x), (None if df is None else GRAD)

    def ikernel(x):
        return f(x), (None if df is None else GRAD)

    rule = None if df is None else grad
    op(name, saves=() if uses_out else (0,), grad=rule, uses_out=uses_out)(kernel)
    # The inplace form saves x (apply_ snapshots it): the create_graph rule reads x, whose buffer
    # the inplace write overwrites.
    op(name, grad=rule, uses_out=uses_out)(ikernel)
    kernel.__name__ = ikernel.__name__ = "_" + name

    def public(x, name=None):
        x = tensor_arg(x, kernel.op_name)
        k = x._data.dtype.kind
        if k in "biu":
            if lift:
                x = as_float(x)
            elif no_bool and k == "b":
                raise TypeError(f"{kernel.op_name}: bool tensors are not supported; cast x to "
                                "an integer or float dtype first")
        return apply(kernel, x)

    def inplace(x, name=None):
        x = tensor_arg(x, kernel.op_name + "_")
        if lift and x._data.dtype.kind in "biu":
            raise TypeError(f"{kernel.op_name}_: the result is floating point and cannot be "
                            f"written into x of dtype {x.dtype}; use {kernel.op_name}(x)")
        return apply_(ikernel, x)

    summary = doc or f"Elementwise ``{name}(x)``."
    for fn, nm in ((public, name), (inplace, name + "_")):
        fn.__name__ = nm
        fn.__qualname__ = nm
        fn.kernel = kernel
    public.__doc__ = (f"{summary}\n\n    Args:\n        x (Tensor): input"
                      f"{'; integer input computes in the default float dtype' if lift else ''}"
                      f".\n\n    Returns:\n        Tensor: same shape as x.\n")
    inplace.__doc__ = (f"Inplace :func:`{name}`: writes the result into x and returns x.\n\n"
                       f"    Args:\n        x (Tensor): input, overwritten.\n\n"
                       f"    Returns:\n        Tensor: x.\n")
    return public, inplace


def _uf(name):
    def f(x):
        return getattr(_xp(x), name)(x)

    return f


def _sq(x):
    return x * x


_LN10 = _pymath.log(10.0)
_LN2 = _pymath.log(2.0)

exp, exp_ = _unary("exp", _uf("exp"), lambda M, x, o: o, uses_out=True)
expm1, expm1_ = _unary("expm1", _uf("expm1"), lambda M, x, o: o + 1, uses_out=True)
log, log_ = _unary("log", _uf("log"), lambda M, x, o: 1 / x,
                   doc="Elementwise natural logarithm.")
log2, log2_ = _unary("log2", _uf("log2"), lambda M, x, o: 1 / (x * _LN2),
                     doc="Elementwise base-2 logarithm.")
log10, log10_ = _unary("log10", _uf("log10"), lambda M, x, o: 1 / (x * _LN10),
                       doc="Elementwise base-10 logarithm.")
log1p, log1p_ = _unary("log1p", _uf("log1p"), lambda M, x, o: 1 / (1 + x),
                       doc="Elementwise ``log(1 + x)``, accurate for small x.")
sqrt, sqrt_ = _unary("sqrt", _uf("sqrt"), lambda M, x, o: 0.5 / o, uses_out=True,
                     doc="Elementwise square root.")
rsqrt, rsqrt_ = _unary("rsqrt", lambda x: x.dtype.type(1) / _xp(x).sqrt(x),
                       lambda M, x, o: -0.5 * o * o * o, uses_out=True,
                       doc="Elementwise reciprocal square root ``1 / sqrt(x)``.")
reciprocal, reciprocal_ = _unary("reciprocal", lambda x: x.dtype.type(1) / x,
                                 lambda M, x, o: -o * o, uses_out=True,
                                 doc="Elementwise ``1 / x``.")
square, square_ = _unary("square", _sq, lambda M, x, o: 2 * x, lift=False,
                         no_bool=True, doc="Elementwise ``x * x`` (integer dtypes are kept).")
neg, neg_ = _unary("neg", _uf("negative"), lambda M, x, o: -1, lift=False,
                   no_bool=True, doc="Elementwise negation (integer dtypes are kept).")
sin, sin_ = _unary("sin", _uf("sin"), lambda M, x, o: M.cos(x))
cos, cos_ = _unary("cos", _uf("cos"), lambda M, x, o: -M.sin(x))
tan, tan_ = _unary("tan", _uf("tan"), lambda M, x, o: 1 + o * o, uses_out=True)
sinh, sinh_ = _unary("sinh", _uf("sinh"), lambda M, x, o: M.cosh(x))
cosh, cosh_ = _unary("cosh", _uf("cosh"), lambda M, x, o: M.sinh(x))
tanh, tanh_ = _unary("tanh", _uf("tanh"), lambda M, x, o: 1 - o * o, uses_out=True)
asin, asin_ = _unary("asin", _uf("arcsin"), lambda M, x, o: 1 / M.sqrt(1 - x * x),
                     doc="Elementwise arcsine.")
acos, acos_ = _unary("acos", _uf("arccos"), lambda M, x, o: -1 / M.sqrt(1 - x * x),
                     doc="Elementwise arccosine.")
atan, atan_ = _unary("atan", _uf("arctan"), lambda M, x, o: 1 / (1 + x * x),
                     doc="Elementwise arctangent.")
asinh, asinh_ = _unary("asinh", _uf("arcsinh"), lambda M, x, o: 1 / M.sqrt(x * x + 1),
                       doc="Elementwise inverse hyperbolic sine.")
acosh, acosh_ = _unary("acosh", _uf("arccosh"), lambda M, x, o: 1 / M.sqrt(x * x - 1),
                       doc="Elementwise inverse hyperbolic cosine.")
atanh, atanh_ = _unary("atanh", _uf("arctanh"), lambda M, x, o: 1 / (1 - x * x),
                       doc="Elementwise inverse hyperbolic tangent.")
deg2rad, _deg2rad_ = _unary("deg2rad", lambda x: x * (np.pi / 180), lambda M, x, o: np.pi / 180,
                            doc="Convert degrees to radians.")
rad2deg, _rad2deg_ = _unary("rad2deg", lambda x: x * (180 / np.pi), lambda M, x, o: 180 / np.pi,
                            doc="Convert radians to degrees.")


sigmoid, sigmoid_ = _unary("sigmoid", _stable_sigmoid, lambda M, x, o: o * (1 - o),
                           uses_out=True, doc="Elementwise logistic sigmoid ``1 / (1 + exp(-x))``.")


# ---- piecewise-constant and integer-preserving ops

def _round_half_away(x):
    xp = _xp(x)
    t = xp.trunc(x)
    # Paddle rounds halves away from zero (NumPy rounds them to even)
    return xp.where(xp.abs(x - t) >= 0.5, t + xp.sign(x), t).astype(x.dtype, copy=False)


def _step_unary(name, f, doc, rule=_times_zero):
    # the gradient is g * 0, or zeros_like(g) for trunc (see _unary's doc)
    @op(name, saves=(), grad=rule)
    def kernel(x):
        if x.dtype.kind in "biu":
            return x.copy(), None
        return f(x), GRAD

    kernel.__name__ = "_" + name

    def public(x, name=None):
        x = tensor_arg(x, kernel.op_name)
        return apply(kernel, x)

    def inplace(x, name=None):
        return apply_(kernel, tensor_arg(x, kernel.op_name + "_"))

    public.__name__, inplace.__name__ = name, name + "_"
    public.__qualname__, inplace.__qualname__ = name, name + "_"
    public.__doc__ = (f"{doc}\n\n    Args:\n        x (Tensor): input (integer tensors are "
                      "returned unchanged).\n\n    Returns:\n        Tensor: same shape and "
                      "dtype as x; the gradient is zero.\n")
    inplace.__doc__ = (f"Inplace :func:`{name}`: writes the result into x and returns x.\n\n"
                       "    Args:\n        x (Tensor): input, overwritten.\n\n"
                       "    Returns:\n        Tensor: x.\n")
    return public, inplace


ceil, ceil_ = _step_unary("ceil", _uf("ceil"), "Elementwise ceiling.")
floor, floor_ = _step_unary("floor", _uf("floor"), "Elementwise floor.")
round, round_ = _step_unary("round", _round_half_away,  # noqa: A001
                            "Elementwise rounding to the nearest integer, halves away from zero.")
_trunc_pub, _trunc_inp = _step_unary("trunc", _uf("trunc"),
                                     "Elementwise truncation toward zero.", rule=_zero_grad)


def trunc(input, name=None):  # noqa: A002  (Paddle's parameter name)
    """Elementwise truncation toward zero.

    Args:
        input (Tensor): input (integer tensors are returned unchanged).

    Returns:
        Tensor: same shape and dtype as input; the gradient is zero.
    """
    return _trunc_pub(input)


def trunc_(input, name=None):  # noqa: A002
    """Inplace :func:`trunc`.

    Args:
        input (Tensor): input, overwritten.

    Returns:
        Tensor: input.
    """
    return _trunc_inp(input)


def _identity_bw(g):
    return (g,)


@op("frac", saves=(), const_grad=_identity_bw)
def _frac(x):
    xp = _xp(x)
    if x.dtype.kind in "biu":
        return xp.zeros_like(x), None
    return x - xp.trunc(x), GRAD


def frac(x, name=None):
    """Fractional part ``x - trunc(x)`` (keeps the sign of x).

    Args:
        x (Tensor): input; integer tensors give zeros.

    Returns:
        Tensor: same shape and dtype as x.
    """
    return apply(_frac, tensor_arg(x, "frac"))


def frac_(x, name=None):
    """Inplace :func:`frac`.

    Args:
        x (Tensor): input, overwritten.

    Returns:
        Tensor: x.
    """
    return apply_(_frac, tensor_arg(x, "frac_"))


def _abs_grad(M, x, out, g):
    if M.is_complex(x):
        # d|z| = Re(conj(z/|z|) dz): the gradient is g * z / |z| (0 at z == 0)
        if not M.tensor:
            return (g / M.where(out == 0, 1, out) * x,)
        return (_as_complex_like(g, x) * sgn(x),)
    return (g * M.sign(x),)


@op("abs", grad=_abs_grad)
def _abs(x):
    return _xp(x).abs(x), GRAD


def _as_complex_like(t, ref):
    return apply(_re_to_c, t, dtype=ref._data.dtype)


def abs(x, name=None):  # noqa: A001
    """Elementwise absolute value; complex input gives the real magnitude.

    Args:
        x (Tensor): input (integer dtypes are kept).

    Returns:
        Tensor: ``|x|``; float32 for complex64 and float64 for complex128.
    """
    x = tensor_arg(x, "abs")
    if x._data.dtype.kind == "b":
        raise TypeError("abs: bool tensors are not supported; cast x to an integer or float "
                        "dtype first")
    return apply(_abs, x)


def abs_(x, name=None):
    """Inplace :func:`abs` (real tensors only).

    Args:
        x (Tensor): input, overwritten.

    Returns:
        Tensor: x.
    """
    x = tensor_arg(x, "abs_")
    if x._data.dtype.kind == "c":
        raise TypeError("abs_: the magnitude of a complex tensor is real and cannot be written "
                        "into x; use abs(x)")
    return apply_(_abs, x)


@op("sign", saves=(), grad=_times_zero)
def _sign(x):
    return _xp(x).sign(x), GRAD


def sign(x, name=None):
    """Elementwise sign: -1, 0 or 1 (NaN stays NaN); integer dtypes are kept.

    Args:
        x (Tensor): real input.

    Returns:
        Tensor: same shape and dtype as x; the gradient is zero.
    """
    x = tensor_arg(x, "sign")
    if x._data.dtype.kind in "bc":
        raise TypeError(f"sign: x must be an integer or floating point tensor, got {x.dtype}; "
                        "use sgn for complex input")
    return apply(_sign, x)


def _sgn_grad(M, x, out, g):
    if not M.is_complex(x):
        return (M.zeros_like(g),)
    # (g - Re(g * conj(sgn)) * sgn) / |z|, zero where z == 0
    nz = M.value(out) != 0
    a = M.abs(x)
    safe = M.select(nz, a) + M.mask(~nz, a)
    dtype = M.value(x).dtype
    gr = M.op(_re_to_c, M.real(g * M.conj(out)), dtype=dtype)
    return (M.select(nz, (g - gr * out) / M.op(_re_to_c, safe, dtype=dtype)),)


@op("sgn", uses_out=True, grad=_sgn_grad)
def _sgn(x):
    xp = _xp(x)
    if x.dtype.kind != "c":
        return xp.sign(x), GRAD
    a = xp.abs(x)
    nz = a != 0
    return xp.where(nz, x / xp.where(nz, a, 1), 0).astype(x.dtype, copy=False), GRAD


def sgn(x, name=None):
    """Sign for real input; ``z / |z|`` for complex input (0 stays 0).

    Args:
        x (Tensor): float or complex input.

    Returns:
        Tensor: same shape and dtype as x.
    """
    x = tensor_arg(x, "sgn")
    _require_float(x, "sgn", complex_ok=True)
    return apply(_sgn, x)


# ---- complex helpers: real, imag, conj, angle, as_complex, as_real

def _complex_of(npd):
    return np.dtype(np.complex128) if npd == np.float64 else np.dtype(np.complex64)


def _real_of(npd):
    return np.dtype(np.float64) if npd == np.complex128 else np.dtype(np.float32)


# real, imag and the two real -> complex embeddings are linear; each one's adjoint is another
@op("real", saves=(), grad=lambda M, x, out, g: (
    M.op(_re_to_c, g, dtype=M.value(x).dtype) if M.is_complex(x) else g,))
def _real_k(x):
    if x.dtype.kind != "c":
        return x.copy(), GRAD
    return _xp(x).ascontiguousarray(x.real), GRAD


@op("imag", saves=(), grad=lambda M, x, out, g: (
    M.op(_im_to_c, g, dtype=M.value(x).dtype) if M.is_complex(x) else M.zeros_like(g),))
def _imag_k(x):
    xp = _xp(x)
    if x.dtype.kind != "c":
        return xp.zeros_like(x), GRAD
    return xp.ascontiguousarray(x.imag), GRAD


@op("complex", saves=(), grad=lambda M, r, out, g, dtype: (M.op(_real_k, g),))
def _re_to_c(r, dtype):
    """Real -> complex (``r + 0j``); the gradient of a complex grad is its real part."""
    return r.astype(dtype), GRAD


@op("complex", saves=(), grad=lambda M, r, out, g, dtype: (M.op(_imag_k, g),))
def _im_to_c(r, dtype):
    """Real -> complex (``1j * r``); the gradient is the imaginary part of the grad."""
    return r.astype(dtype) * dtype.type(1j), GRAD


def real(x, name=None):
    """The real part of a complex tensor (a real tensor is returned as a copy).

    Args:
        x (Tensor): input.

    Returns:
        Tensor: float32 for complex64, float64 for complex128.
    """
    return apply(_real_k, tensor_arg(x, "real"))


def imag(x, name=None):
    """The imaginary part of a complex tensor (zeros for a real tensor).

    Args:
        x (Tensor): input.

    Returns:
        Tensor: float32 for complex64, float64 for complex128.
    """
    return apply(_imag_k, tensor_arg(x, "imag"))


@op("conj", saves=(), grad=lambda M, x, out, g: (M.conj(g),))
def _conj_k(x):
    if x.dtype.kind != "c":
        return x.copy(), GRAD
    return _xp(x).conj(x), GRAD


def conj(x, name=None):
    """Elementwise complex conjugate (real tensors are returned unchanged, as a copy).

    Args:
        x (Tensor): input.

    Returns:
        Tensor: same shape and dtype as x.
    """
    return apply(_conj_k, tensor_arg(x, "conj"))


def _angle_grad(M, x, out, g):
    if not M.is_complex(x):
        return (M.zeros_like(g),)
    # d angle = g * i z / |z|^2 (zero at z == 0)
    a2 = M.real(x * M.conj(x))
    nz = M.value(a2) != 0
    safe = M.select(nz, a2) + M.mask(~nz, a2)
    return (M.op(_im_to_c, M.select(nz, g / safe), dtype=M.value(x).dtype) * x,)


@op("angle", grad=_angle_grad)
def _angle(x):
    xp = _xp(x)
    if x.dtype.kind == "c":
        return xp.angle(x).astype(_real_of(x.dtype), copy=False), GRAD
    out = xp.where(x < 0, np.pi, 0).astype(x.dtype)
    if x.dtype.kind == "f":
        out = xp.where(xp.isnan(x), x, out)
    return out, GRAD


def angle(x, name=None):
    """Elementwise phase angle in radians (0 or pi for real input).

    Args:
        x (Tensor): real or complex input; integers compute in the default float dtype.

    Returns:
        Tensor: the angle, in the real dtype matching x.
    """
    x = tensor_arg(x, "angle")
    if x._data.dtype.kind in "biu":
        x = as_float(x)
    return apply(_angle, x)


# as_complex and as_real are inverse reinterpretations: each one's adjoint is the other
@op("as_complex", saves=(), grad=lambda M, x, out, g: (M.op(_as_real_k, g),))
def _as_complex_k(x):
    out = _xp(x).ascontiguousarray(x).view(_complex_of(x.dtype))[..., 0].copy()
    return out, GRAD


@op("as_real", saves=(), grad=lambda M, x, out, g: (M.op(_as_complex_k, g),))
def _as_real_k(x):
    return _xp(x).stack([x.real, x.imag], axis=-1), GRAD


def as_complex(x, name=None):
    """View pairs ``[..., 2]`` of a float32/float64 tensor as complex numbers.

    Args:
        x (Tensor): float32 or float64 tensor whose last dim has size 2 (real, imaginary).

    Returns:
        Tensor: complex64 or complex128, with the last dim removed.
    """
    x = tensor_arg(x, "as_complex")
    if x._data.dtype not in (np.float32, np.float64):
        raise TypeError(f"as_complex: x must be float32 or float64, got {x.dtype}")
    if x.ndim == 0 or x.shape[-1] != 2:
        raise ValueError(f"as_complex: the last dim of x must have size 2, got shape {x.shape}")
    return apply(_as_complex_k, x)


def as_real(x, name=None):
    """Split a complex tensor into ``[..., 2]`` (real, imaginary) pairs.

    Args:
        x (Tensor): complex64 or complex128 tensor.

    Returns:
        Tensor: float32 or float64 with a new last dim of size 2.
    """
    x = tensor_arg(x, "as_real")
    if x._data.dtype.kind != "c":
        raise TypeError(f"as_real: x must be complex64 or complex128, got {x.dtype}")
    return apply(_as_real_k, x)


# ---- ops with attributes: logit, stanh, nan_to_num, scale, clip, frexp

def _logit_grad(M, x, out, g, eps):
    with np.errstate(divide="ignore", invalid="ignore"):
        gx = g / (x * (1 - x))
    if eps:
        # the clipped input is constant outside [eps, 1 - eps]
        xv = M.value(x)
        gx = M.select((xv >= eps) & (xv <= 1 - eps), gx)
    return (gx,)


@op("logit", grad=_logit_grad)
def _logit(x, eps):
    xp = _xp(x)
    xc = x if eps is None or eps == 0 else xp.clip(x, eps, 1 - eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        return xp.log(xc / (1 - xc)), GRAD


def logit(x, eps=None, name=None):
    """Elementwise ``log(x / (1 - x))``; with ``eps``, x is first clipped to ``[eps, 1-eps]``.

    Args:
        x (Tensor): float input.
        eps (float, optional): clipping bound; the gradient is zero outside the bounds.

    Returns:
        Tensor: same shape and dtype as x.
    """
    x = as_float(tensor_arg(x, "logit"))
    return apply(_logit, x, eps=None if eps is None else float(eps))


def logit_(x, eps=None, name=None):
    """Inplace :func:`logit`.

    Args:
        x (Tensor): float input, overwritten.
        eps (float, optional): clipping bound.

    Returns:
        Tensor: x.
    """
    x = tensor_arg(x, "logit_")
    _require_float(x, "logit_")
    return apply_(_logit, x, eps=None if eps is None else float(eps))


@op("stanh", saves=(0,), grad=lambda M, x, out, g, a, b: (
    g * (a * b) * (1 - M.tanh(a * x) ** 2),))
def _stanh(x, a, b):
    return (b * _xp(x).tanh(a * x)).astype(x.dtype, copy=False), GRAD


def stanh(x, scale_a=0.67, scale_b=1.7159, name=None):
    """Scaled tanh ``scale_b * tanh(scale_a * x)``.

    Args:
        x (Tensor): input.
        scale_a (float): input scale.
        scale_b (float): output scale.

    Returns:
        Tensor: same shape and dtype as x.
    """
    x = as_float(tensor_arg(x, "stanh"))
    # Paddle stores the scales as float32 attributes; round them the same way
    return apply(_stanh, x, a=float(np.float32(scale_a)), b=float(np.float32(scale_b)))


@op("nan_to_num", grad=lambda M, x, out, g, **_: (
    M.select(_xp(M.value(x)).isfinite(M.value(x)), g),))
def _nan_to_num(x, nan, posinf, neginf):
    xp = _xp(x)
    info = np.finfo(x.dtype) if x.dtype != _dt.BFLOAT16_NP else None
    hi = posinf if posinf is not None else (float(info.max) if info else 3.3895314e38)
    lo = neginf if neginf is not None else (float(info.min) if info else -3.3895314e38)
    out = xp.where(xp.isnan(x), nan, x)
    out = xp.where(out == np.inf, hi, out)
    return xp.where(out == -np.inf, lo, out).astype(x.dtype, copy=False), GRAD


def _nan_args(x, op, nan, posinf, neginf):
    x = tensor_arg(x, op)
    _require_float(x, op)
    return x, dict(nan=float(nan), posinf=None if posinf is None else float(posinf),
                   neginf=None if neginf is None else float(neginf))


def nan_to_num(x, nan=0.0, posinf=None, neginf=None, name=None):
    """Replace NaN, +inf and -inf with finite numbers.

    Args:
        x (Tensor): float input.
        nan (float): the value for NaN.
        posinf (float, optional): the value for +inf (default: the dtype's max).
        neginf (float, optional): the value for -inf (default: the dtype's min).

    Returns:
        Tensor: same shape and dtype as x; the gradient is zero at replaced positions.
    """
    x, kw = _nan_args(x, "nan_to_num", nan, posinf, neginf)
    return apply(_nan_to_num, x, **kw)


def nan_to_num_(x, nan=0.0, posinf=None, neginf=None, name=None):
    """Inplace :func:`nan_to_num`.

    Args:
        x (Tensor): float input, overwritten.
        nan (float): the value for NaN.
        posinf (float, optional): the value for +inf.
        neginf (float, optional): the value for -inf.

    Returns:
        Tensor: x.
    """
    x, kw = _nan_args(x, "nan_to_num_", nan, posinf, neginf)
    return apply_(_nan_to_num, x, **kw)


@op("scale", saves=(), grad=lambda M, x, out, g, s, b, after: (g * s,))
def _scale_k(x, s, b, after):
    out = x * s + b if after else (x + b) * s
    return out.astype(x.dtype, copy=False), GRAD

_ACTS = {"tanh": lambda t: tanh(t), "sigmoid": lambda t: sigmoid(t),
         "relu": lambda t: maximum(t, 0)}


def _scale_args(x, scale, bias, act, op):
    x = tensor_arg(x, op)
    if isinstance(scale, Tensor):
        if scale.size != 1:
            raise ValueError(f"{op}: 'scale' as a Tensor must have one element, got shape "
                             f"{scale.shape}")
        scale = scale.item()
    if act is not None and act not in _ACTS:
        raise ValueError(f"{op}: unsupported act {act!r}; expected None or one of "
                         f"{sorted(_ACTS)}")
    if x._data.dtype.kind in "biu":
        # integer tensors keep their dtype: Paddle casts scale and bias to it
        scale, bias = int(scale), int(bias)
    else:
        scale, bias = float(scale), float(bias)
    return x, scale, bias


def scale(x, scale=1.0, bias=0.0, bias_after_scale=True, act=None, name=None):
    """``scale * x + bias`` (or ``scale * (x + bias)``), then an optional activation.

    Args:
        x (Tensor): input (integer dtypes are kept).
        scale (float|Tensor): the factor.
        bias (float): the offset.
        bias_after_scale (bool): add the bias after scaling (True) or before (False).
        act (str, optional): 'tanh', 'sigmoid' or 'relu' applied to the result.

    Returns:
        Tensor: same shape and dtype as x.
    """
    x, s, b = _scale_args(x, scale, bias, act, "scale")
    out = apply(_scale_k, x, s=s, b=b, after=bool(bias_after_scale))
    return _ACTS[act](out) if act is not None else out


def scale_(x, scale=1.0, bias=0.0, bias_after_scale=True, act=None, name=None):
    """Inplace :func:`scale` (Tensor method only).

    Args:
        x (Tensor): input, overwritten.
        scale (float|Tensor): the factor.
        bias (float): the offset.
        bias_after_scale (bool): add the bias after scaling (True) or before (False).
        act (str, optional): must be None for the inplace form.

    Returns:
        Tensor: x.
    """
    if act is not None:
        raise ValueError("scale_: act is not supported by the inplace form; use scale()")
    x, s, b = _scale_args(x, scale, bias, act, "scale_")
    return apply_(_scale_k, x, s=s, b=b, after=bool(bias_after_scale))


def _clip_grad(M, x, out, g, lo, hi):
    # Paddle passes the gradient only strictly inside (min, max)
    xv = M.value(x)
    m = None
    if lo is not None:
        m = xv > lo
    if hi is not None:
        m = (xv < hi) if m is None else m & (xv < hi)
    return (g if m is None else M.select(m, g),)


@op("clip", grad=_clip_grad)
def _clip(x, lo, hi):
    xp = _xp(x)
    out = x
    if lo is not None:
        out = xp.maximum(out, xp.asarray(lo, dtype=x.dtype))
    if hi is not None:
        out = xp.minimum(out, xp.asarray(hi, dtype=x.dtype))
    if out is x:
        out = x.copy()
    return out, GRAD


def _clip_args(x, min, max, op):  # noqa: A002
    x = tensor_arg(x, op)
    if x._data.dtype.kind in "bc":
        raise TypeError(f"{op}: x must be an integer or floating point tensor, got {x.dtype}")
    bounds = []
    for v, nm in ((min, "min"), (max, "max")):
        if isinstance(v, Tensor):
            if v.size != 1:
                raise ValueError(f"{op}: '{nm}' as a Tensor must have one element, got shape "
                                 f"{v.shape}")
            v = v.item()
        if v is not None:
            if not isinstance(v, numbers.Real):
                raise TypeError(f"{op}: '{nm}' must be a number or a 1-element Tensor, got "
                                f"{type(v).__name__}")
            # integer tensors keep their dtype; Paddle truncates float bounds to it
            v = int(v) if x._data.dtype.kind in "iu" else float(v)
        bounds.append(v)
    lo, hi = bounds
    if lo is not None and hi is not None and lo > hi:
        raise ValueError(f"{op}: max should be greater than or equal to min, got min={lo}, "
                         f"max={hi}")
    return x, lo, hi


def clip(x, min=None, max=None, name=None):  # noqa: A002
    """Clamp every element into ``[min, max]``; integer tensors keep their dtype.

    Args:
        x (Tensor): input.
        min (float|Tensor, optional): lower bound (none when None).
        max (float|Tensor, optional): upper bound (none when None).

    Returns:
        Tensor: same shape and dtype as x.

    Example:
        >>> paddle.clip(paddle.to_tensor([1, 5, 9], dtype='int32'), 3, 6)   # int32 [3, 5, 6]
    """
    x, lo, hi = _clip_args(x, min, max, "clip")
    return apply(_clip, x, lo=lo, hi=hi)


def clip_(x, min=None, max=None, name=None):  # noqa: A002
    """Inplace :func:`clip` (Tensor method only).

    Args:
        x (Tensor): input, overwritten.
        min (float|Tensor, optional): lower bound.
        max (float|Tensor, optional): upper bound.

    Returns:
        Tensor: x.
    """
    x, lo, hi = _clip_args(x, min, max, "clip_")
    return apply_(_clip, x, lo=lo, hi=hi)


def _frexp_grad(M, x, out, gm, ge):
    # d mantissa / dx = 2 ** -exponent, piecewise constant; the exponent's gradient is zero
    xv = M.value(x)
    src = xv.astype(np.float32) if xv.dtype == _dt.BFLOAT16_NP else xv
    xp = _xp(xv)
    e = xp.frexp(src)[1]
    return (gm * M.const(xp.ldexp(xp.ones((), dtype=src.dtype), -e).astype(xv.dtype)),)


@op("frexp", grad=_frexp_grad)
def _frexp(x):
    xp = _xp(x)
    src = x.astype(np.float32) if x.dtype == _dt.BFLOAT16_NP else x
    m, e = xp.frexp(src)
    return (m.astype(x.dtype, copy=False), e.astype(x.dtype)), GRAD


def frexp(x, name=None):
    """Split x into mantissa and exponent, ``x = mantissa * 2**exponent``.

    Args:
        x (Tensor): floating point input.

    Returns:
        tuple(Tensor, Tensor): mantissa in ``[0.5, 1)`` (by magnitude) and exponent, both in
        x's dtype.
    """
    x = tensor_arg(x, "frexp")
    _require_float(x, "frexp")
    return apply(_frexp, x)


# ---------------------------------------------------------------- cumulative ops

class _AxisError(IndexError, ValueError):
    """An axis out of range: Paddle raises IndexError here; ValueError is kept for callers
    that catch the helpers' error."""


def _axis(axis, ndim, op, arg="axis"):
    try:
        return norm_axis(axis, ndim, op, arg)
    except ValueError as e:
        raise _AxisError(str(e)) from None


def _moveaxis_last(a, axis):
    return a if axis == a.ndim - 1 else _xp(a).moveaxis(a, axis, -1)


# the adjoint of a running sum is the running sum in the other direction
@op("cumsum", saves=(), grad=lambda M, x, out, g, axis, reverse: (
    M.op(_cumsum_k, g, axis=axis, reverse=not reverse),))
def _cumsum_k(x, axis, reverse):
    xp = _xp(x)
    # CuPy's scan kernels have no bfloat16 arithmetic: the GPU sums in float32
    acc = "float32" if xp is not np and x.dtype.name == "bfloat16" else x.dtype
    if reverse:
        out = xp.flip(xp.cumsum(xp.flip(x, axis), axis=axis, dtype=acc), axis)
    else:
        out = xp.cumsum(x, axis=axis, dtype=acc)
    return out.astype(x.dtype, copy=False), GRAD


def _cum_prepare(x, axis, dtype, op, axis_arg="axis"):
    """Shared argument handling: returns (x, axis, final_shape) for a cumulative op."""
    from .manipulation import reshape

    x = tensor_arg(x, op)
    if dtype is not None:
        npd = _dt.to_np(dtype)
        if npd != x._data.dtype:
            x = cast_to(x, npd) if _dt.is_inexact_np(npd) else _wrap(x._data.astype(npd))
    if axis is None:
        return reshape(x, [-1]), 0, None
    ax = _axis(axis, x.ndim, op, axis_arg)
    if x.ndim == 0:
        return reshape(x, [1]), 0, []
    return x, ax, None


def _cum_finish(out, shape):
    if shape is None:
        return out
    from .manipulation import reshape

    if isinstance(out, tuple):
        return tuple(reshape(o, shape) for o in out)
    return reshape(out, shape)


def cumsum(x, axis=None, dtype=None, name=None):
    """Cumulative sum along ``axis`` (over the flattened tensor when axis is None).

    Args:
        x (Tensor): input; bool input sums as int64.
        axis (int, optional): the axis.
        dtype (str|paddle.dtype, optional): cast x to this dtype first.

    Returns:
        Tensor: same dtype as x (after the cast); 1-D when axis is None.

    Example:
        >>> paddle.cumsum(paddle.to_tensor([[1, 2], [3, 4]]), axis=0)   # [[1, 2], [4, 6]]
    """
    x = tensor_arg(x, "cumsum")
    if dtype is None and x._data.dtype.kind == "b":
        dtype = "int64"
    x, ax, shape = _cum_prepare(x, axis, dtype, "cumsum")
    return _cum_finish(apply(_cumsum_k, x, axis=ax, reverse=False), shape)


def cumsum_(x, axis=None, dtype=None, name=None):
    """Inplace :func:`cumsum` (the result must fit x's shape and dtype).

    Args:
        x (Tensor): input, overwritten.
        axis (int, optional): the axis; None works along the flattened tensor.
        dtype (str, optional): must be None or x's dtype.

    Returns:
        Tensor: x.
    """
    return _inplace_via(x, "cumsum_", cumsum, axis=axis, dtype=dtype)


def _cumprod_grad(M, x, out, g, axis):
    """Gradient of cumprod that stays exact when x contains zeros (no division by zero)."""
    xv = M.value(x)
    xp = _xp(xv)
    z = xv == 0
    nz = xp.cumsum(z, axis=axis)
    before = nz == 0  # no zero at or before this position
    first = z & (nz == 1)
    safe = M.where(M.const(before), x, 1)
    gx = M.select(before, M.op(_cumsum_k, g * M.conj(out), axis=axis, reverse=True)
                  / M.conj(safe))
    # (on a GPU the term is always added, zero where x has no zero, rather than asking the
    # device whether x has one: that question would stop the host until the GPU answers)
    if xp is not np or xp.any(first):
        # at the first zero the product of the other factors is the cumprod with it set to 1
        out1 = M.op(_cumprod_k, M.where(M.const(first), 1, x), axis=axis)
        gx = gx + M.select(first, M.op(_cumsum_k, g * M.conj(out1), axis=axis, reverse=True))
    return (gx,)


@op("cumprod", uses_out=True, grad=_cumprod_grad)
def _cumprod_k(x, axis):
    xp = _xp(x)
    if xp is not np and x.dtype.name == "bfloat16":
        # CuPy's scan kernels have no bfloat16 arithmetic: the GPU multiplies in float32
        return xp.cumprod(x, axis=axis, dtype="float32").astype(x.dtype), GRAD
    return xp.cumprod(x, axis=axis, dtype=x.dtype), GRAD


def cumprod(x, dim=None, dtype=None, name=None):
    """Cumulative product along ``dim`` (over the flattened tensor when dim is None).

    Args:
        x (Tensor): input.
        dim (int, optional): the axis.
        dtype (str|paddle.dtype, optional): cast x to this dtype first.

    Returns:
        Tensor: same dtype as x (after the cast). The gradient is exact with zeros in x.
    """
    x, ax, shape = _cum_prepare(x, dim, dtype, "cumprod", "dim")
    if x._data.dtype.kind == "b":
        raise TypeError("cumprod: bool tensors are not supported; pass dtype='int64'")
    return _cum_finish(apply(_cumprod_k, x, axis=ax), shape)


def cumprod_(x, dim=None, dtype=None, name=None):
    """Inplace :func:`cumprod`.

    Args:
        x (Tensor): input, overwritten.
        dim (int, optional): the axis.
        dtype (str, optional): must be None or x's dtype.

    Returns:
        Tensor: x.
    """
    return _inplace_via(x, "cumprod_", cumprod, dim=dim, dtype=dtype)


def _scan_arg(x, is_max):
    """Running arg-max/min along the last axis (ties and NaN pick the later index).

    A Hillis-Steele scan: log2(n) vectorised passes, the same on NumPy and CuPy.
    """
    xp = _xp(x)
    n = x.shape[-1]
    idx = xp.broadcast_to(xp.arange(n, dtype=np.int64), x.shape).copy()
    v = x
    isf = x.dtype.kind == "f" or x.dtype == _dt.BFLOAT16_NP
    shift = 1
    while shift < n:
        pv, cv = v[..., :-shift], v[..., shift:]
        better = (pv > cv) if is_max else (pv < cv)
        if isf:
            better = better | (xp.isnan(pv) & ~xp.isnan(cv))
        nv = v.copy()
        nv[..., shift:] = xp.where(better, pv, cv)
        ni = idx.copy()
        ni[..., shift:] = xp.where(better, idx[..., :-shift], idx[..., shift:])
        v, idx = nv, ni
        shift *= 2
    return idx


def _scatter_last(g, idx, n):
    """out[..., k] = sum of g[..., j] over j with idx[..., j] == k (last axis, length n)."""
    xp = _xp(g)
    lead = g.shape[:-1]
    if g.size == 0:
        return xp.zeros(lead + (n,), dtype=g.dtype)
    rows = int(np.prod(lead)) if lead else 1
    idx = xp.asarray(idx)  # an index attribute may be a host array
    flat = (idx.reshape(rows, -1) + (xp.arange(rows, dtype=np.int64) * n)[:, None]).ravel()
    if g.dtype.kind == "c":
        re = xp.bincount(flat, weights=g.real.ravel(), minlength=rows * n)
        im = xp.bincount(flat, weights=g.imag.ravel(), minlength=rows * n)
        out = re + 1j * im
    else:
        out = xp.bincount(flat, weights=g.ravel().astype(np.float64), minlength=rows * n)
    return out.astype(g.dtype).reshape(lead + (n,))


# take_along_axis and its scatter-add are adjoint: each one's gradient is the other
@op("take_along_axis", saves=(), grad=lambda M, x, out, g, idx, axis: (
    M.op(_scatter_along, g, idx=idx, axis=axis, n=M.value(x).shape[axis]),))
def _gather_along(x, idx, axis):
    """``take_along_axis`` kernel; its gradient scatters back (see :func:`_scatter_along`)."""
    return _xp(x).take_along_axis(x, idx, axis=axis), GRAD


@op("scatter_add", saves=(), grad=lambda M, g, out, gg, idx, axis, n: (
    M.op(_gather_along, gg, idx=idx, axis=axis),))
def _scatter_along(g, idx, axis, n):
    gl = _moveaxis_last(g, axis)
    il = _moveaxis_last(idx, axis)
    return _xp(g).moveaxis(_scatter_last(gl, il, n), -1, axis), GRAD


def _cumext_indices(x, axis, is_max):
    xp = _xp(x)
    return xp.moveaxis(_scan_arg(_moveaxis_last(x, axis), is_max), -1, axis)


# the running extremum's gradient goes to the element it was taken from (the index output)
@op("cummax", saves=(), uses_out=True, grad=lambda M, x, out, gv, gi, axis, is_max, idx_dtype: (
    M.op(_scatter_along, gv, idx=M.value(out[1]), axis=axis, n=M.value(x).shape[axis]),))
def _cumext_k(x, axis, is_max, idx_dtype):
    idx = _cumext_indices(x, axis, is_max)
    vals = _xp(x).take_along_axis(x, idx, axis=axis)
    return (vals, idx.astype(idx_dtype, copy=False)), GRAD


def _cumext(x, axis, dtype, op, is_max):
    x = tensor_arg(x, op)
    if x._data.dtype.kind in "bc":
        raise TypeError(f"{op}: x must be an integer or floating point tensor, got {x.dtype}")
    idt = _dt.to_np(dtype)
    if idt not in (np.int32, np.int64):
        raise TypeError(f"{op}: dtype of the indices must be int32 or int64, got {dtype}")
    x, ax, shape = _cum_prepare(x, axis, None, op)
    if x._data.shape[ax] == 0:
        return _cum_finish((_wrap(x._data.copy(), x.stop_gradient),
                            _wrap(x._data.astype(idt))), shape)
    return _cum_finish(apply(_cumext_k, x, axis=ax, is_max=is_max, idx_dtype=idt), shape)


def cummax(x, axis=None, dtype="int64", name=None):
    """Running maximum along ``axis`` and the index where it was reached.

    Args:
        x (Tensor): integer or float input.
        axis (int, optional): the axis (the flattened tensor when None).
        dtype (str): dtype of the indices, 'int32' or 'int64'.

    Returns:
        tuple(Tensor, Tensor): the running maxima (x's dtype) and their indices; ties pick
        the later index, NaN propagates.
    """
    return _cumext(x, axis, dtype, "cummax", True)


def cummin(x, axis=None, dtype="int64", name=None):
    """Running minimum along ``axis`` and the index where it was reached.

    Args:
        x (Tensor): integer or float input.
        axis (int, optional): the axis (the flattened tensor when None).
        dtype (str): dtype of the indices, 'int32' or 'int64'.

    Returns:
        tuple(Tensor, Tensor): the running minima (x's dtype) and their indices; ties pick
        the later index, NaN propagates.
    """
    return _cumext(x, axis, dtype, "cummin", False)


def _lcse_arr(a, axis, reverse=False):
    """log(cumsum(exp(a))) along ``axis`` on raw arrays, without overflow."""
    xp = _xp(a)
    if reverse:
        return xp.flip(_lcse_arr(xp.flip(a, axis), axis), axis)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if xp is np and a.dtype != _dt.BFLOAT16_NP:
            return np.logaddexp.accumulate(a, axis=axis)
        # CuPy (which has no ufunc.accumulate) and bfloat16: a log-depth scan of logaddexp
        # (Hillis-Steele): each step combines the prefixes in log space, so no term
        # underflows (a shift by the slice maximum turned the terms far below it into -inf)
        w = xp.moveaxis(a.astype(np.float32) if a.dtype == _dt.BFLOAT16_NP else a, axis, -1)
        w = w.copy()
        s = 1
        while s < w.shape[-1]:
            w[..., s:] = xp.logaddexp(w[..., s:], w[..., :-s])
            s *= 2
        return xp.moveaxis(w, -1, axis).astype(a.dtype, copy=False)


# logcumsumexp's gradient is dx_k = sum_{j>=k} g_j exp(x_k - out_j): a map linear in g that
# is computed in log space (g's positive and negative parts apart), so no term overflows. It and
# its transpose (the sum over j <= k) are a pair of kernels, each differentiable through the
# other: with L = sum(u * A(g, x, out)), dL/dg = B(u, x, out), dL/dx = u * A, and
# dL/dout = -g * B(u, x, out); B's rule mirrors it. So every order of derivative keeps the
# log-space form.

def _signed_lse(u, x, out, axis, reverse):
    """``sum over j (after k when reverse, else up to k) of u_j exp(x_j - out_k)``-shaped sums,
    as ``exp(x + lcse(log(u) - out))`` for u's positive and negative parts (log space)."""
    xp = _xp(u)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lp = xp.log(xp.where(u > 0, u, 0))
        ln = xp.log(xp.where(u < 0, -u, 0))
        if reverse:  # A: sum_{j>=k} g_j exp(x_k - out_j)
            r = xp.exp(x + _lcse_arr(lp - out, axis, True)) - \
                xp.exp(x + _lcse_arr(ln - out, axis, True))
        else:  # B: sum_{k<=j} u_k exp(x_k - out_j)
            r = xp.exp(_lcse_arr(lp + x, axis) - out) - xp.exp(_lcse_arr(ln + x, axis) - out)
    return r.astype(u.dtype, copy=False)


def _lcse_adj_grad(M, g, x, out, r, u, axis):
    t = M.op(_lcse_adjt_k, u, x, out, axis=axis)
    return t, u * r, -(g * t)


@op("logcumsumexp_grad", grad=_lcse_adj_grad, uses_out=True)
def _lcse_adj_k(g, x, out, axis):
    """The gradient map of logcumsumexp: ``sum_{j>=k} g_j exp(x_k - out_j)``."""
    return _signed_lse(g, x, out, axis, True), GRAD


def _lcse_adjt_grad(M, u, x, out, r, v, axis):
    a = M.op(_lcse_adj_k, v, x, out, axis=axis)
    return a, u * a, -(v * r)


@op("logcumsumexp_grad_t", grad=_lcse_adjt_grad, uses_out=True)
def _lcse_adjt_k(u, x, out, axis):
    """The transpose of :func:`_lcse_adj_k` in its first argument:
    ``sum_{k<=j} u_k exp(x_k - out_j)``."""
    return _signed_lse(u, x, out, axis, False), GRAD


@op("logcumsumexp", grad=lambda M, x, out, g, axis: (M.op(_lcse_adj_k, g, x, out, axis=axis),),
    uses_out=True)
def _logcumsumexp_k(x, axis):
    return _lcse_arr(x, axis), GRAD


def logcumsumexp(x, axis=None, dtype=None, name=None):
    """``log(cumsum(exp(x)))`` along ``axis``, computed without overflow.

    Args:
        x (Tensor): float input (integers compute in the default float dtype).
        axis (int, optional): the axis (the flattened tensor when None).
        dtype (str|paddle.dtype, optional): cast x to this dtype first.

    Returns:
        Tensor: same dtype as x (after the cast).
    """
    x = as_float(tensor_arg(x, "logcumsumexp"))
    x, ax, shape = _cum_prepare(x, axis, dtype, "logcumsumexp")
    return _cum_finish(apply(_logcumsumexp_k, x, axis=ax), shape)


# ---------------------------------------------------------------- diff, trapezoid

# the forward difference and its adjoint are linear: each one's gradient is the other
@op("diff", saves=(), grad=lambda M, x, out, g, axis: (
    M.op(_diff_adj_k, g, axis=axis, n=M.value(x).shape[axis]),))
def _diff_k(x, axis):
    hi_sl = (slice(None),) * axis + (slice(1, None),)
    lo_sl = (slice(None),) * axis + (slice(None, -1),)
    if x.dtype.kind == "b":
        return _xp(x).not_equal(x[hi_sl], x[lo_sl]), None
    return x[hi_sl] - x[lo_sl], GRAD


@op("diff_grad", saves=(), grad=lambda M, g, out, gg, axis, n: (M.op(_diff_k, gg, axis=axis),))
def _diff_adj_k(g, axis, n):
    """Adjoint of the forward difference: gx[k] = g[k-1] - g[k]."""
    xp = _xp(g)
    gx = xp.zeros(g.shape[:axis] + (n,) + g.shape[axis + 1:], dtype=g.dtype)
    gx[(slice(None),) * axis + (slice(1, None),)] += g
    gx[(slice(None),) * axis + (slice(None, -1),)] -= g
    return gx, GRAD


def diff(x, n=1, axis=-1, prepend=None, append=None, name=None):
    """The n-th forward difference along ``axis``, as ``np.diff``.

    Args:
        x (Tensor): input (bool input gives ``x[i+1] != x[i]``).
        n (int): how many times to difference.
        axis (int): the axis.
        prepend (Tensor, optional): values put before x along axis first.
        append (Tensor, optional): values put after x along axis first.

    Returns:
        Tensor: the differences; ``axis`` shrinks by n.
    """
    from .manipulation import concat

    x = tensor_arg(x, "diff")
    if x.ndim == 0:
        raise ValueError("diff: x must have at least one dimension, got a 0-D tensor")
    if not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f"diff: n must be a non-negative int, got {n!r}")
    ax = norm_axis(axis, x.ndim, "diff")
    parts = []
    for v, nm in ((prepend, "prepend"), (x, None), (append, "append")):
        if v is None:
            continue
        v = tensor_arg(v, "diff", nm or "x")
        if nm is not None:
            if v.ndim == 0:
                shp = list(x.shape)
                shp[ax] = 1
                from .manipulation import expand

                v = expand(v, shp)
            if v._data.dtype != x._data.dtype:
                v = cast_to(v, x._data.dtype)
        parts.append(v)
    if len(parts) > 1:
        x = concat(parts, axis=ax)
    for _ in range(int(n)):
        if x.shape[ax] == 0:
            break
        x = apply(_diff_k, x, axis=ax)
    return x


def _trapezoid(y, x, dx, axis, op, cumulative):
    from .manipulation import reshape

    y = tensor_arg(y, op, "y")
    _require_float(y, op, "y")
    if x is not None and dx is not None:
        raise ValueError(f"{op}: pass at most one of 'x' and 'dx'")
    if y.ndim == 0:
        raise ValueError(f"{op}: y must have at least one dimension, got a 0-D tensor")
    ax = norm_axis(axis, y.ndim, op)
    nd = y.ndim
    lo = (slice(None),) * ax + (slice(None, -1),)
    hi = (slice(None),) * ax + (slice(1, None),)
    avg = (y[hi] + y[lo]) * 0.5
    if x is not None:
        x = tensor_arg(x, op, "x")
        if x._data.dtype != y._data.dtype:
            x = cast_to(x, y._data.dtype)
        if x.ndim == 1:
            if x.shape[0] != y.shape[ax]:
                raise ValueError(f"{op}: 1-D x has {x.shape[0]} samples but y has "
                                 f"{y.shape[ax]} along axis {ax}")
            d = apply(_diff_k, x, axis=0)
            shp = [1] * nd
            shp[ax] = d.shape[0]
            d = reshape(d, shp)
        else:
            if x.shape != y.shape:
                raise ValueError(f"{op}: x must be 1-D or have y's shape {y.shape}, got "
                                 f"{x.shape}")
            d = apply(_diff_k, x, axis=ax)
        terms = avg * d
    else:
        step = 1.0 if dx is None else dx
        if isinstance(step, Tensor):
            step = step.item()
        terms = avg * float(step)
    if cumulative:
        return apply(_cumsum_k, terms, axis=ax, reverse=False)
    from .stat import sum as _sum

    return _sum(terms, axis=ax)


def trapezoid(y, x=None, dx=None, axis=-1, name=None):
    """Integrate y along ``axis`` with the trapezoidal rule.

    Args:
        y (Tensor): float samples.
        x (Tensor, optional): sample points (1-D along axis, or y's shape).
        dx (float, optional): constant spacing when x is None (default 1).
        axis (int): the axis to integrate along.

    Returns:
        Tensor: the integral; ``axis`` is removed (0-D for 1-D y).
    """
    return _trapezoid(y, x, dx, axis, "trapezoid", False)


def cumulative_trapezoid(y, x=None, dx=None, axis=-1, name=None):
    """Cumulative trapezoidal integral of y along ``axis``.

    Args:
        y (Tensor): float samples.
        x (Tensor, optional): sample points (1-D along axis, or y's shape).
        dx (float, optional): constant spacing when x is None (default 1).
        axis (int): the axis to integrate along.

    Returns:
        Tensor: running integrals; ``axis`` has one element fewer than y's.
    """
    return _trapezoid(y, x, dx, axis, "cumulative_trapezoid", True)


# ---------------------------------------------------------------- add_n, addmm, lerp, ...

# arguments: the inputs, out, g: every input gets g
@op("add_n", saves=(), grad=lambda M, *a: (a[-1],) * (len(a) - 2))
def _add_n_k(*xs):
    out = xs[0].copy()
    for a in xs[1:]:
        out += a
    return out, GRAD


def add_n(inputs, name=None):
    """Sum a list of tensors of the same shape and dtype.

    Args:
        inputs (Tensor|list[Tensor]): the tensors.

    Returns:
        Tensor: their elementwise sum.
    """
    if isinstance(inputs, Tensor):
        inputs = [inputs]
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TypeError("add_n: inputs must be a Tensor or a non-empty list of Tensors")
    ts = [tensor_arg(t, "add_n", f"inputs[{k}]") for k, t in enumerate(inputs)]
    for k, t in enumerate(ts[1:], 1):
        if t.shape != ts[0].shape:
            raise ValueError(f"add_n: all inputs must have the same shape; inputs[0] has "
                             f"{ts[0].shape} but inputs[{k}] has {t.shape}")
        if t._data.dtype != ts[0]._data.dtype:
            raise TypeError(f"add_n: all inputs must have the same dtype; inputs[0] is "
                            f"{ts[0].dtype} but inputs[{k}] is {t.dtype}")
    return apply(_add_n_k, *ts)


@op("addmm", saves=(1, 2), broadcast=True, grad=lambda M, inp, x, y, out, g, beta, alpha: (
    g * beta, alpha * (g @ y.T), alpha * (x.T @ g)))
def _addmm_k(inp, x, y, beta, alpha):
    return (beta * inp + alpha * (x @ y)).astype(x.dtype, copy=False), GRAD


def _addmm_args(input, x, y, op):  # noqa: A002
    inp = tensor_arg(input, op, "input")
    x = tensor_arg(x, op, "x")
    y = tensor_arg(y, op, "y")
    if x.ndim != 2 or y.ndim != 2:
        raise ValueError(f"{op}: x and y must be 2-D, got shapes {x.shape} and {y.shape}")
    if x.shape[1] != y.shape[0]:
        raise ValueError(f"{op}: x's columns ({x.shape[1]}) must match y's rows ({y.shape[0]}); "
                         f"got shapes {x.shape} and {y.shape}")
    out_shape = (x.shape[0], y.shape[1])
    try:
        if np.broadcast_shapes(tuple(inp.shape), out_shape) != out_shape:
            raise ValueError
    except ValueError:
        raise ValueError(f"{op}: input of shape {inp.shape} cannot be broadcast to the result "
                         f"shape {list(out_shape)}") from None
    x, y = promote_pair(x, y, op, True)
    if inp._data.dtype != x._data.dtype:
        check_kinds(inp._data.dtype, x._data.dtype, op, ("input", "x"))
        inp = cast_to(inp, x._data.dtype)
    return inp, x, y


def addmm(input, x, y, beta=1.0, alpha=1.0, name=None):  # noqa: A002
    """``beta * input + alpha * (x @ y)``.

    Args:
        input (Tensor): added term, broadcastable to ``[M, N]``.
        x (Tensor): ``[M, K]``.
        y (Tensor): ``[K, N]``.
        beta (float): factor on input.
        alpha (float): factor on the product.

    Returns:
        Tensor: ``[M, N]``.
    """
    inp, x, y = _addmm_args(input, x, y, "addmm")
    return apply(_addmm_k, inp, x, y, beta=float(beta), alpha=float(alpha))


def addmm_(input, x, y, beta=1.0, alpha=1.0, name=None):  # noqa: A002
    """Inplace :func:`addmm`: the result is written into input.

    Args:
        input (Tensor): ``[M, N]``, overwritten.
        x (Tensor): ``[M, K]``.
        y (Tensor): ``[K, N]``.
        beta (float): factor on input.
        alpha (float): factor on the product.

    Returns:
        Tensor: input.
    """
    inp, x, y = _addmm_args(input, x, y, "addmm_")
    return apply_(_addmm_k, inp, x, y, beta=float(beta), alpha=float(alpha))


@op("lerp", broadcast=True, grad=lambda M, x, y, w, out, g: (
    g * M.conj(1 - w), g * M.conj(w), g * M.conj(y - x)))
def _lerp_k(x, y, w):
    return x + w * (y - x), GRAD


def _lerp_args(x, y, weight, op):
    x, y = _tensors(x, y, op, True)
    if x._data.dtype.kind in "biu":
        x, y = as_float(x), as_float(y)
    if isinstance(weight, Tensor):
        if weight._data.dtype != x._data.dtype:
            weight = cast_to(weight, x._data.dtype)
    else:
        if not isinstance(weight, numbers.Number):
            weight = tensor_arg(weight, op, "weight")
            weight = cast_to(as_float(weight), x._data.dtype)
        else:
            weight = _wrap(_xp(x._data).asarray(weight, dtype=x._data.dtype))
    try:
        np.broadcast_shapes(tuple(x.shape), tuple(y.shape), tuple(weight.shape))
    except ValueError:
        raise ValueError(f"{op}: x {x.shape}, y {y.shape} and weight {weight.shape} cannot be "
                         "broadcast together") from None
    return x, y, weight


def lerp(x, y, weight, name=None):
    """Linear interpolation ``x + weight * (y - x)``.

    Args:
        x (Tensor): start.
        y (Tensor): end, broadcast against x.
        weight (float|Tensor): interpolation weight, broadcast against x.

    Returns:
        Tensor: the interpolated values.
    """
    x, y, w = _lerp_args(x, y, weight, "lerp")
    return apply(_lerp_k, x, y, w)


def lerp_(x, y, weight, name=None):
    """Inplace :func:`lerp` (Tensor method only).

    Args:
        x (Tensor): start, overwritten.
        y (Tensor): end.
        weight (float|Tensor): interpolation weight.

    Returns:
        Tensor: x.
    """
    x, y, w = _lerp_args(x, y, weight, "lerp_")
    return apply_(_lerp_k, x, y, w)


@op("increment", saves=(), const_grad=_identity_bw)
def _increment_k(x, value):
    return x + _xp(x).asarray(value, dtype=x.dtype), GRAD


def increment(x, value=1.0, name=None):
    """Add ``value`` to a one-element tensor, in place (as Paddle does); returns x.

    Args:
        x (Tensor): a tensor with exactly one element.
        value (float): the increment (cast to x's dtype).

    Returns:
        Tensor: x.
    """
    x = tensor_arg(x, "increment")
    if x.size != 1:
        raise ValueError(f"increment: x must have exactly one element, got shape {x.shape}")
    v = int(value) if x._data.dtype.kind in "iu" else float(value)
    return apply_(_increment_k, x, value=v)


def _multiplex_grad(M, *args, index):
    # input k gets the rows of g that were picked from it
    g = args[-1]
    col = index.reshape((-1,) + (1,) * (len(M.value(g).shape) - 1))
    return tuple(M.select(col == k, g) for k in range(len(args) - 2))


@op("multiplex", saves=(), grad=_multiplex_grad)
def _multiplex_k(*arrs, index):
    xp = _xp(arrs[0])
    return xp.stack(arrs)[index, xp.arange(arrs[0].shape[0])], GRAD


def multiplex(inputs, index, name=None):
    """Pick row i of ``inputs[index[i]]`` for every row i.

    Args:
        inputs (list[Tensor]): tensors of the same shape ``[M, ...]`` and dtype.
        index (Tensor): int32/int64 of shape ``[M, 1]`` (or ``[M]``) with values in
            ``[0, len(inputs))``.

    Returns:
        Tensor: ``[M, ...]``.
    """
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TypeError("multiplex: inputs must be a non-empty list of Tensors")
    ts = [tensor_arg(t, "multiplex", f"inputs[{k}]") for k, t in enumerate(inputs)]
    for k, t in enumerate(ts):
        if t.shape != ts[0].shape or t._data.dtype != ts[0]._data.dtype:
            raise ValueError(f"multiplex: all inputs must share shape and dtype; inputs[0] is "
                             f"{ts[0].shape} {ts[0].dtype}, inputs[{k}] is {t.shape} {t.dtype}")
    if ts[0].ndim == 0:
        raise ValueError("multiplex: inputs must have at least one dimension")
    idx = tensor_arg(index, "multiplex", "index")
    _require_int(idx, "multiplex", "index")
    m = ts[0].shape[0]
    ia = idx._data.reshape(-1)
    if ia.shape[0] != m:
        raise ValueError(f"multiplex: index must have shape [{m}, 1] (one entry per row of the "
                         f"inputs), got {idx.shape}")
    xp = _xp(ia)
    if ia.size and (bool(xp.any(ia < 0)) or bool(xp.any(ia >= len(ts)))):
        raise IndexError(f"multiplex: index values must be in [0, {len(ts)}), got values in "
                         f"[{int(ia.min())}, {int(ia.max())}]")
    return apply(_multiplex_k, *ts, index=ia.astype(np.int64))


def _renorm_factor(x, p, axis, max_norm):
    """Per-slice factor (a Tensor, differentiable) that brings norms above max_norm down."""
    from .stat import sum as _sum

    dims = [d for d in range(x.ndim) if d != axis]
    a = abs(x)
    if p == np.inf:
        from .manipulation import reshape, transpose

        perm = [axis] + dims
        flat = reshape(transpose(x, perm), [x.shape[axis], -1])
        nrm = apply(_rowmax_abs, flat)
        shp = [1] * x.ndim
        shp[axis] = x.shape[axis]
        nrm = reshape(nrm, shp)
    else:
        nrm = _sum(a ** p, axis=dims, keepdim=True) ** (1.0 / p) if dims else a
    big = _const((nrm._data > max_norm).astype(nrm._data.dtype))
    safe = nrm * big + (1 - big)
    return big * (max_norm / safe) + (1 - big)


def _rowmax_abs_grad(M, x, out, g):
    # the gradient goes to the (first) element of largest magnitude in each row
    xv = M.value(x)
    xp = _xp(xv)
    hot = xp.arange(xv.shape[1]) == xp.argmax(xp.abs(xv), axis=1)[:, None]
    return (M.select(hot, M.reshape(g, (-1, 1)) * M.sign(x)),)


@op("renorm_max", grad=_rowmax_abs_grad)
def _rowmax_abs(x):
    xp = _xp(x)
    a = xp.abs(x)
    if x.shape[1] == 0:
        return xp.zeros(x.shape[0], dtype=a.dtype), None
    return a.max(axis=1), GRAD


def _renorm_args(x, p, axis, max_norm, op):
    x = tensor_arg(x, op)
    _require_float(x, op)
    if x.ndim == 0:
        raise ValueError(f"{op}: x must have at least one dimension")
    ax = norm_axis(axis, x.ndim, op)
    p = float(p)
    if p <= 0:
        raise ValueError(f"{op}: p must be positive, got {p}")
    if max_norm < 0:
        raise ValueError(f"{op}: max_norm must be non-negative, got {max_norm}")
    return x, p, ax, float(max_norm)


def renorm(x, p, axis, max_norm):
    """Rescale each slice along ``axis`` whose p-norm exceeds ``max_norm`` to that norm.

    Args:
        x (Tensor): float input.
        p (float): the norm's power.
        axis (int): slices are ``x[..., i, ...]`` along this axis; the norm runs over the rest.
        max_norm (float): the largest allowed norm.

    Returns:
        Tensor: same shape and dtype as x.
    """
    x, p, ax, mn = _renorm_args(x, p, axis, max_norm, "renorm")
    return x * _renorm_factor(x, p, ax, mn)


def renorm_(x, p, axis, max_norm):
    """Inplace :func:`renorm`.

    Args:
        x (Tensor): float input, overwritten.
        p (float): the norm's power.
        axis (int): the slicing axis.
        max_norm (float): the largest allowed norm.

    Returns:
        Tensor: x.
    """
    x, p, ax, mn = _renorm_args(x, p, axis, max_norm, "renorm_")
    return _inplace_via(x, "renorm_", lambda t: t * _renorm_factor(t, p, ax, mn))


# trace and its adjoint (g placed on the diagonal) are linear: each one's gradient is the other
@op("trace", saves=(), grad=lambda M, x, out, g, offset, axis1, axis2: (
    M.op(_trace_adj_k, g, shape=tuple(M.value(x).shape), offset=offset, axis1=axis1,
         axis2=axis2),))
def _trace_k(x, offset, axis1, axis2):
    xp = _xp(x)
    return xp.asarray(xp.trace(x, offset=offset, axis1=axis1, axis2=axis2, dtype=x.dtype)), GRAD


def _diag_index(shape, offset, axis1, axis2, xp):
    n1, n2 = shape[axis1], shape[axis2]
    r0, c0 = (0, offset) if offset >= 0 else (-offset, 0)
    k = max(0, min(n1 - r0, n2 - c0))
    return xp.arange(k) + r0, xp.arange(k) + c0


@op("trace_grad", saves=(), grad=lambda M, g, out, gg, shape, offset, axis1, axis2: (
    M.op(_trace_k, gg, offset=offset, axis1=axis1, axis2=axis2),))
def _trace_adj_k(g, shape, offset, axis1, axis2):
    """Gradient of trace: g on the selected diagonal, zero elsewhere."""
    xp = _xp(g)
    gx = xp.zeros(shape, dtype=g.dtype)
    view = xp.moveaxis(gx, (axis1, axis2), (-2, -1))
    r, c = _diag_index(shape, offset, axis1, axis2, xp)
    view[..., r, c] = g[..., None]
    return gx, GRAD


def trace(x, offset=0, axis1=0, axis2=1, name=None):
    """Sum of a diagonal of the 2-D slices given by ``axis1`` and ``axis2``.

    Args:
        x (Tensor): input with at least 2 dims.
        offset (int): diagonal offset (positive: above the main diagonal).
        axis1 (int): first axis of the 2-D slices.
        axis2 (int): second axis of the 2-D slices.

    Returns:
        Tensor: the traces, with axis1 and axis2 removed (0-D for a matrix).
    """
    x = tensor_arg(x, "trace")
    if x.ndim < 2:
        raise ValueError(f"trace: x must have at least 2 dims, got shape {x.shape}")
    a1 = norm_axis(axis1, x.ndim, "trace", "axis1")
    a2 = norm_axis(axis2, x.ndim, "trace", "axis2")
    if a1 == a2:
        raise ValueError(f"trace: axis1 and axis2 must differ, both are {a1}")
    if x._data.dtype.kind == "b":
        x = _wrap(x._data.astype(np.int64))
    return apply(_trace_k, x, offset=int(offset), axis1=a1, axis2=a2)


# ---------------------------------------------------------------- inplace variants

def _inplace_via(x, op, fn, *args, **kw):
    """Inplace form of a composite op: compute ``fn(x, ...)`` and write it into x (see
    :func:`paddle_hl.framework.op.inplace`); the result must keep x's dtype."""
    x = tensor_arg(x, op)
    return inplace(x, op, lambda src: fn(src, *args, **kw), tuple(args) + tuple(kw.values()),
                   same_dtype=True)


def _inplace_other(x, y, op):
    if isinstance(y, Tensor):
        if y._data.dtype != x._data.dtype:
            y = cast_to(y, x._data.dtype)
        return (y,)
    return (_wrap(_xp(x._data).asarray(y, dtype=x._data.dtype)),)


def _check_inplace_bcast(x, y, op):
    if isinstance(y, Tensor) and y._data.shape != x._data.shape:
        try:
            ok = np.broadcast_shapes(x._data.shape, y._data.shape) == x._data.shape
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"{op}: y of shape {y.shape} cannot be broadcast to the shape "
                             f"{x.shape} of the inplace tensor x")


def _binary_inplace(kernel, op):
    def f(x, y, name=None):
        x = tensor_arg(x, op)
        _check_inplace_bcast(x, y, op)
        return apply_(kernel, x, *_inplace_other(x, y, op))

    f.__name__ = f.__qualname__ = op
    base = op[:-1]
    f.__doc__ = (f"Inplace :func:`{base}`: ``x = {base}(x, y)``, with y broadcast to x's shape; "
                 "returns x.\n\n    Args:\n        x (Tensor): input, overwritten.\n"
                 "        y (Tensor|number): the other operand.\n\n    Returns:\n"
                 "        Tensor: x.\n")
    return f


add_ = _binary_inplace(_add, "add_")
subtract_ = _binary_inplace(_sub, "subtract_")
multiply_ = _binary_inplace(_mul, "multiply_")
hypot_ = _binary_inplace(_hypot, "hypot_")
floor_divide_ = _binary_inplace(_floordiv, "floor_divide_")
remainder_ = _binary_inplace(_remainder, "remainder_")
floor_mod_ = remainder_
mod_ = remainder_


def divide_(x, y, name=None):
    """Inplace :func:`divide`; returns x.

    Args:
        x (Tensor): dividend, overwritten.
        y (Tensor|number): divisor, broadcast to x's shape.

    Returns:
        Tensor: x.
    """
    x = tensor_arg(x, "divide_")
    _check_inplace_bcast(x, y, "divide_")
    return apply_(_div, x, *_inplace_other(x, y, "divide_"))


def pow_(x, y, name=None):
    """Inplace :func:`pow`; returns x.

    Args:
        x (Tensor): base, overwritten.
        y (Tensor|number): exponent.

    Returns:
        Tensor: x.
    """
    x = tensor_arg(x, "pow_")
    _check_inplace_bcast(x, y, "pow_")
    if isinstance(y, Tensor):
        return apply_(_pow, x, *_inplace_other(x, y, "pow_"))
    return apply_(_pow, x, y)


def _composite_inplace(fn, x_doc, y_doc):
    """``fn_(x, y)``: the inplace form of the composite binary op ``fn`` (via _inplace_via)."""
    op = fn.__name__ + "_"

    def f(x, y, name=None):
        return _inplace_via(x, op, fn, y)

    f.__name__ = f.__qualname__ = op
    f.__doc__ = (f"Inplace :func:`{fn.__name__}`; returns x.\n\n    Args:\n"
                 f"        x (Tensor): {x_doc}, overwritten.\n        y (Tensor): {y_doc}.\n\n"
                 "    Returns:\n        Tensor: x.\n")
    return f


gcd_ = _composite_inplace(gcd, "integer input", "integer input")
lcm_ = _composite_inplace(lcm, "integer input", "integer input")
ldexp_ = _composite_inplace(ldexp, "float mantissas", "integer exponents")


_UNARY_INPLACE_TOP = ["abs_", "acos_", "atan_", "cos_", "expm1_", "log_", "log10_", "log2_",
                      "neg_", "sin_", "sinh_", "square_", "tan_", "tanh_", "trunc_", "frac_"]

API = [
    "add", "subtract", "multiply", "divide", "pow", "maximum", "minimum", "fmax", "fmin",
    "floor_divide", "remainder", "floor_mod", "mod", "gcd", "lcm", "atan2", "hypot", "logaddexp",
    "nextafter", "heaviside", "ldexp",
    "exp", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "square",
    "neg", "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh",
    "atanh", "deg2rad", "rad2deg", "ceil", "floor", "round", "trunc", "frac", "abs", "sign",
    "sgn", "real", "imag", "conj", "angle", "as_complex", "as_real", "logit", "stanh",
    "nan_to_num", "scale", "clip", "frexp", "cumsum", "cumprod", "cummax", "cummin",
    "logcumsumexp", "diff", "trapezoid", "cumulative_trapezoid", "add_n", "addmm", "lerp",
    "increment", "multiplex", "renorm", "trace",
    # inplace forms that Paddle 2.6 also exports at the top level
    "addmm_", "cumprod_", "cumsum_", "divide_", "floor_divide_", "floor_mod_", "mod_",
    "remainder_", "gcd_", "lcm_", "hypot_", "ldexp_", "logit_", "multiply_", "nan_to_num_",
    "pow_", "renorm_",
] + _UNARY_INPLACE_TOP

# Tensor methods: everything above except expm1_ and square_ (top level only in Paddle 2.6),
# plus sigmoid and the 2.1 inplace ops that are methods only.
METHODS = [n for n in API if n not in ("expm1_", "square_")] + [
    "sigmoid", "sigmoid_", "add_", "subtract_", "clip_", "scale_", "ceil_", "floor_", "exp_",
    "reciprocal_", "round_", "sqrt_", "rsqrt_", "acosh_", "asin_", "asinh_", "atanh_", "cosh_",
    "lerp_", "log1p_",
]
