"""Elementwise math and reductions (Paddle's ``tensor/math.py`` category).

Each op is a kernel on raw arrays returning ``(out, backward)`` (see framework/op.py), with its
higher-order rule next to it, and a public function with Paddle's signature.
"""

from __future__ import annotations

from .. import backend
from ..framework.op import apply, apply_
from ..framework.tensor import Tensor, _wrap
from ._helpers import (
    as_float,
    cast_to,
    promote_pair,
    tensor_arg,
)

__all__ = []

# ---------------------------------------------------------------- binary elementwise

def _prep(x, y, op):
    """Dtype rules for a binary op; a Python float lifts an int/bool tensor to float."""
    x, y = promote_pair(x, y, op)
    if isinstance(x, Tensor):
        if type(y) is float and x._data.dtype.kind in "biu":
            x = as_float(x)
        elif isinstance(y, bool) and x._data.dtype.kind != "b":
            y = int(y)
    elif isinstance(y, Tensor):
        if type(x) is float and y._data.dtype.kind in "biu":
            y = as_float(y)
        elif isinstance(x, bool) and y._data.dtype.kind != "b":
            x = int(x)
    return x, y


def _add(x, y):
    return x + y, _add_bw


def _add_bw(g):
    return g, g


_add.saves = ()
_add.broadcast = True
_add.op_name = "add"
_add.hi = lambda i, g: (g[0], g[0])


def _sub(x, y):
    return x - y, _sub_bw


def _sub_bw(g):
    return g, -g


_sub.saves = ()
_sub.broadcast = True
_sub.op_name = "subtract"
_sub.hi = lambda i, g: (g[0], -g[0])


def _mul(x, y):
    return x * y, lambda g: (g * y, g * x)


_mul.broadcast = True
_mul.op_name = "multiply"
_mul.hi = lambda i, g: (g[0] * i[1], g[0] * i[0])


def _mul_scalar(x, s):
    return x * s, lambda g: (g * s, None)


_mul_scalar.saves = ()
_mul_scalar.op_name = "scale"
_mul_scalar.hi = lambda i, g: (g[0] * i[1], None)


def _div(x, y):
    out = x / y
    return out, lambda g: (g / y, -g * out / y)


_div.broadcast = True
_div.op_name = "divide"
_div.hi = lambda i, g: (g[0] / i[1], -g[0] * i[0] / (i[1] * i[1]))


def _pow(x, y):
    out = x ** y

    def bw(g):
        if not hasattr(y, "shape"):  # a Python-number exponent gets no gradient
            return g * y * x ** (y - 1), None
        xp = _xp(x)
        safe = xp.where(x > 0, x, 1)  # d/dy x**y = x**y log x, defined as 0 where x <= 0
        return g * y * x ** (y - 1), g * out * xp.log(safe)

    return out, bw


def _pow_hi(i, g):
    x, y = i
    if isinstance(y, (int, float)):
        return g[0] * y * x ** (y - 1), None
    safe = where_positive(x)
    return g[0] * y * x ** (y - 1), g[0] * x ** y * log(safe)


_pow.broadcast = True
_pow.op_name = "pow"
_pow.hi = _pow_hi


def _xp(a):
    return backend.get_array_module(a)


def where_positive(x):
    """x where x > 0, else 1 (a safe argument for log in pow's gradient)."""
    return _wrap(_xp(x._data).where(x._data > 0, x._data, 1).astype(x._data.dtype)) \
        if x.stop_gradient else _where_pos_graph(x)


def _where_pos_graph(x):
    mask = _wrap((x._data > 0).astype(x._data.dtype))
    return x * mask + (1 - mask)


def _maximum(x, y):
    out = _xp(x).maximum(x, y)

    def bw(g):
        mx = x > y
        eq = x == y
        half = g * 0.5
        gx = _xp(g).where(mx, g, _xp(g).where(eq, half, 0))
        gy = _xp(g).where(mx, 0, _xp(g).where(eq, half, g))
        return gx.astype(g.dtype, copy=False), gy.astype(g.dtype, copy=False)

    return out, bw


_maximum.broadcast = True
_maximum.op_name = "maximum"


def _minimum(x, y):
    out = _xp(x).minimum(x, y)

    def bw(g):
        mn = x < y
        eq = x == y
        half = g * 0.5
        gx = _xp(g).where(mn, g, _xp(g).where(eq, half, 0))
        gy = _xp(g).where(mn, 0, _xp(g).where(eq, half, g))
        return gx.astype(g.dtype, copy=False), gy.astype(g.dtype, copy=False)

    return out, bw


_minimum.broadcast = True
_minimum.op_name = "minimum"


def _binary_public(kernel, x, y, op):
    x, y = _prep(x, y, op)
    if not isinstance(x, Tensor):
        x = _wrap(_xp(y._data).asarray(x, dtype=y._data.dtype))
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
        return apply(_add, x, y)
    return _binary_public(_add, x, y, "add")


def subtract(x, y, name=None):
    """Elementwise ``x - y`` with broadcasting."""
    return _binary_public(_sub, x, y, "subtract")


def multiply(x, y, name=None):
    """Elementwise ``x * y`` with broadcasting."""
    if isinstance(x, Tensor) and not isinstance(y, Tensor):
        x, y = _prep(x, y, "multiply")
        return apply(_mul_scalar, x, y)
    if isinstance(y, Tensor) and not isinstance(x, Tensor):
        y, x = _prep(y, x, "multiply")
        return apply(_mul_scalar, y, x)
    return _binary_public(_mul, x, y, "multiply")


def divide(x, y, name=None):
    """Elementwise true division ``x / y``; integer inputs give the default float dtype."""
    x, y = _prep(x, y, "divide")
    if isinstance(x, Tensor) and x._data.dtype.kind in "biu":
        x = as_float(x)
    if isinstance(y, Tensor) and y._data.dtype.kind in "biu":
        y = as_float(y)
    if isinstance(x, Tensor) and isinstance(y, Tensor):
        x, y = promote_pair(x, y, "divide")
    if not isinstance(y, Tensor):
        return apply(_mul_scalar, x, 1.0 / y) if y != 0 else apply(_div, x, y)
    return _binary_public(_div, x, y, "divide")


def pow(x, y, name=None):  # noqa: A001
    """Elementwise ``x ** y``; y may be a number or a Tensor."""
    x = tensor_arg(x, "pow", "x")
    x, y = _prep(x, y, "pow")
    if isinstance(y, Tensor) and not isinstance(x, Tensor):
        x = _wrap(_xp(y._data).asarray(x, dtype=y._data.dtype))
    if isinstance(y, int) and not isinstance(y, bool) and y < 0 and x._data.dtype.kind in "iu":
        raise ValueError("pow: integers to negative integer powers are not allowed")
    return apply(_pow, x, y)


def maximum(x, y, name=None):
    """Elementwise maximum (NaN propagates)."""
    return _binary_public(_maximum, x, y, "maximum")


def minimum(x, y, name=None):
    """Elementwise minimum (NaN propagates)."""
    return _binary_public(_minimum, x, y, "minimum")


# ---------------------------------------------------------------- unary elementwise

def _unary(name, f, df=None, hi=None, float_only=True, saves_out=False):
    """Build kernel + public function for ``out = f(x)`` with ``dx = g * df(x, out)``."""

    def kernel(x):
        out = f(x)
        if df is None:
            return out, None
        return out, lambda g: (g * df(x, out),)

    kernel.__name__ = "_" + name
    kernel.op_name = name
    if hi is not None:
        kernel.hi = hi

    def public(x, name=None):
        x = tensor_arg(x, kernel.op_name)
        if float_only:
            x = as_float(x)
        return apply(kernel, x)

    public.__name__ = name
    public.__qualname__ = name
    public.__doc__ = f"Elementwise ``{name}(x)``.\n\n    Args:\n        x (Tensor): input.\n\n" \
                     f"    Returns:\n        Tensor: same shape as x.\n"
    public.kernel = kernel
    return public


def _np_ufunc(name):
    def f(x):
        return getattr(_xp(x), name)(x)

    return f


exp = _unary("exp", _np_ufunc("exp"), lambda x, o: o, lambda i, g: (g[0] * exp(i[0]),))
log = _unary("log", _np_ufunc("log"), lambda x, o: 1 / x, lambda i, g: (g[0] / i[0],))
tanh = _unary("tanh", _np_ufunc("tanh"), lambda x, o: 1 - o * o,
              lambda i, g: (g[0] * (1 - tanh(i[0]) ** 2),))
sqrt = _unary("sqrt", _np_ufunc("sqrt"), lambda x, o: 0.5 / o,
              lambda i, g: (g[0] * 0.5 / sqrt(i[0]),))
square = _unary("square", _np_ufunc("square"), lambda x, o: 2 * x,
                lambda i, g: (g[0] * 2 * i[0],), float_only=False)
neg = _unary("neg", _np_ufunc("negative"), lambda x, o: -1, lambda i, g: (-g[0],),
             float_only=False)


# ---------------------------------------------------------------- inplace variants

def add_(x, y, name=None):
    """Inplace ``x += y`` (Tensor method only, as in Paddle); returns x."""
    return apply_(_add, x, *_inplace_other(x, y, "add_"))


def subtract_(x, y, name=None):
    return apply_(_sub, x, *_inplace_other(x, y, "subtract_"))


def multiply_(x, y, name=None):
    return apply_(_mul, x, *_inplace_other(x, y, "multiply_"))


def divide_(x, y, name=None):
    return apply_(_div, x, *_inplace_other(x, y, "divide_"))


def _inplace_other(x, y, op):
    if isinstance(y, Tensor):
        if y._data.dtype != x._data.dtype:
            y = cast_to(y, x._data.dtype)
        return (y,)
    return (_wrap(_xp(x._data).asarray(y, dtype=x._data.dtype)),)


API = ["add", "subtract", "multiply", "divide", "pow", "maximum", "minimum", "exp", "log", "tanh",
       "sqrt", "square", "neg"]
METHODS = API + ["add_", "subtract_", "multiply_", "divide_"]
