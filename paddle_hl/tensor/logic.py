"""Comparison, logical, bitwise and predicate ops (Paddle's ``tensor/logic.py`` category).

Comparisons and logical ops return bool tensors with ``stop_gradient=True``; binary ops
broadcast as NumPy does. Their inplace forms (``equal_``, ``logical_and_``, ...) turn x
into the bool result, as in Paddle 2.6; the bitwise inplace forms keep x's dtype.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..backend import get_array_module as _xp
from ..framework import dtype as _dt
from ..framework.op import apply, apply_, check_inplace, op
from ..framework.tensor import Tensor, _wrap
from ._helpers import OPERATOR, check_kinds, tensor_arg

__all__ = []


def _other(y, op, arg="y"):
    """The second operand: a Tensor stays, a Python/NumPy scalar stays a scalar (NumPy's weak
    scalar rules then keep the tensor's dtype class), anything else becomes a Tensor."""
    if isinstance(y, Tensor):
        return y
    if y is None:
        raise TypeError(f"{op}: argument '{arg}' must be a Tensor or a number, but got None")
    if isinstance(y, np.generic):
        return y.item()
    if isinstance(y, (bool, numbers.Number)):
        return y
    return tensor_arg(y, op, arg)


def _shape_of(v):
    return tuple(v._data.shape) if isinstance(v, Tensor) else ()


def _check_broadcast(x, y, op):
    sx, sy = _shape_of(x), _shape_of(y)
    if sx == sy or not sy:  # the common cases, without np.broadcast_shapes' cost
        return sx
    try:
        return np.broadcast_shapes(sx, sy)
    except ValueError:
        raise ValueError(f"{op}: the shapes of x {list(_shape_of(x))} and y "
                         f"{list(_shape_of(y))} cannot be broadcast together") from None


def _binary_args(x, y, op):
    """Both operands, with a scalar x (reflected operators) moved onto y's device."""
    if not isinstance(x, Tensor):
        if isinstance(y, Tensor) and isinstance(x, (bool, numbers.Number, np.generic)):
            x = _wrap(_xp(y._data).asarray(x))
        else:
            x = tensor_arg(x, op, "x")
    y = _other(y, op)
    _check_broadcast(x, y, op)
    return x, y


# ---------------------------------------------------------------- comparisons

def _check_kinds(x, y, op):
    """Paddle's functions refuse a float tensor against an integer/bool one (the Python
    operators promote instead: see ``_helpers.OPERATOR``)."""
    if isinstance(x, Tensor) and isinstance(y, Tensor) and x._data.dtype != y._data.dtype:
        check_kinds(x._data.dtype, y._data.dtype, op)


def _cmp_kernel_for(name, ufunc):
    def kernel(x, y):
        xp = _xp(x)
        return xp.asarray(getattr(xp, ufunc)(x, y)), None

    kernel.__name__ = f"_{name}_kernel"
    kernel.op_name = name
    return kernel


def _comparison(name, ufunc, ordered):
    kernel = _cmp_kernel_for(name, ufunc)

    def public(x, y, name=None):
        if name is not OPERATOR:
            _check_kinds(x, y, kernel.op_name)
        x, y = _binary_args(x, y, kernel.op_name)
        if ordered:
            for v in (x, y):
                if isinstance(v, Tensor) and v._data.dtype.kind == "c" or isinstance(v, complex):
                    raise TypeError(f"{kernel.op_name}: complex values have no ordering")
        return apply(kernel, x, y)

    public.__name__ = public.__qualname__ = name
    public.__doc__ = (
        f"Elementwise ``{ufunc}`` comparison of x and y (broadcast as NumPy does).\n\n"
        "    Args:\n"
        "        x (Tensor): input.\n"
        "        y (Tensor|number): input, broadcast against x.\n\n"
        "    Returns:\n"
        "        Tensor: bool, with stop_gradient=True.\n")
    return public


equal = _comparison("equal", "equal", False)
not_equal = _comparison("not_equal", "not_equal", False)
greater_than = _comparison("greater_than", "greater", True)
greater_equal = _comparison("greater_equal", "greater_equal", True)
less_than = _comparison("less_than", "less", True)
less_equal = _comparison("less_equal", "less_equal", True)


def _into_bool(x, res, op):
    """Paddle's inplace comparison/logical ops: x takes the bool result (same shape)."""
    if list(res._data.shape) != x.shape:
        raise ValueError(f"{op}: the broadcast result has shape {list(res._data.shape)}, which "
                         f"differs from the shape {x.shape} of the inplace tensor x")
    check_inplace(x, op)
    x._data = res._data
    x._ver.v += 1
    x._node = None
    x.stop_gradient = True
    return x


def _inplace_bool(fn, name):
    def inplace(x, y, name=None):
        x = tensor_arg(x, inplace.__name__)
        return _into_bool(x, fn(x, y), inplace.__name__)

    inplace.__name__ = inplace.__qualname__ = name
    inplace.__doc__ = (f"Inplace :func:`{fn.__name__}`: x becomes the bool result (same "
                       "shape as x); returns x.")
    return inplace


equal_ = _inplace_bool(equal, "equal_")
not_equal_ = _inplace_bool(not_equal, "not_equal_")
greater_than_ = _inplace_bool(greater_than, "greater_than_")
greater_equal_ = _inplace_bool(greater_equal, "greater_equal_")
less_than_ = _inplace_bool(less_than, "less_than_")
less_equal_ = _inplace_bool(less_equal, "less_equal_")


def equal_all(x, y, name=None):
    """Whether x and y have the same shape and all elements equal.

    Args:
        x (Tensor): input.
        y (Tensor): input (no broadcasting: a different shape gives False).

    Returns:
        Tensor: bool, shape ``[]``.
    """
    x = tensor_arg(x, "equal_all", "x")
    y = tensor_arg(y, "equal_all", "y")
    _check_kinds(x, y, "equal_all")
    xp = _xp(x._data)
    if x.shape != y.shape:
        return _wrap(xp.asarray(False))
    return _wrap(xp.asarray(bool(xp.all(x._data == y._data))))


def _close_args(x, y, rtol, atol, op):
    x = tensor_arg(x, op, "x")
    y = tensor_arg(y, op, "y")
    for arg, v in (("x", x), ("y", y)):
        if not _dt.is_inexact_np(v._data.dtype):
            raise TypeError(f"{op}: argument '{arg}' has dtype {v.dtype.name}, expected "
                            "float16, bfloat16, float32, float64 (or complex)")
    _check_broadcast(x, y, op)
    vals = []
    for arg, v in (("rtol", rtol), ("atol", atol)):
        if isinstance(v, Tensor):
            v = v.item()
        if not isinstance(v, numbers.Real) or isinstance(v, bool):
            raise TypeError(f"{op}: '{arg}' must be a float, got {type(v).__name__}")
        vals.append(float(v))
    return x, y, vals[0], vals[1]


@op("isclose")
def _isclose_kernel(x, y, rtol, atol, equal_nan):
    xp = _xp(x)
    dt = np.promote_types(np.float32, np.result_type(x.dtype, y.dtype)) \
        if x.dtype in _dt.LOW_FLOATS or y.dtype in _dt.LOW_FLOATS else None
    a = x.astype(dt) if dt is not None else x
    b = y.astype(dt) if dt is not None else y
    with np.errstate(invalid="ignore", over="ignore"):
        # infinities compare equal only to themselves; inf - inf would be NaN
        res = (a == b) | (xp.abs(a - b) <= atol + rtol * xp.abs(b))
    if equal_nan:
        res = res | (xp.isnan(a) & xp.isnan(b))
    return xp.asarray(res), None


def isclose(x, y, rtol=1e-05, atol=1e-08, equal_nan=False, name=None):
    """Elementwise ``|x - y| <= atol + rtol * |y|``.

    Args:
        x (Tensor): floating point input.
        y (Tensor): floating point input, broadcast against x.
        rtol (float): relative tolerance.
        atol (float): absolute tolerance.
        equal_nan (bool): whether two NaNs count as close.

    Returns:
        Tensor: bool.
    """
    x, y, rtol, atol = _close_args(x, y, rtol, atol, "isclose")
    return apply(_isclose_kernel, x, y, rtol=rtol, atol=atol, equal_nan=bool(equal_nan))


def allclose(x, y, rtol=1e-05, atol=1e-08, equal_nan=False, name=None):
    """Whether every element pair of x and y is close (see :func:`isclose`).

    Args:
        x (Tensor): floating point input.
        y (Tensor): floating point input, broadcast against x.
        rtol (float): relative tolerance.
        atol (float): absolute tolerance.
        equal_nan (bool): whether two NaNs count as close.

    Returns:
        Tensor: bool, shape ``[]``.

    Example:
        >>> paddle.allclose(paddle.to_tensor([1., 2.]), paddle.to_tensor([1., 2.000001]))
    """
    x, y, rtol, atol = _close_args(x, y, rtol, atol, "allclose")
    res = apply(_isclose_kernel, x, y, rtol=rtol, atol=atol, equal_nan=bool(equal_nan))
    return _wrap(_xp(res._data).asarray(bool(res._data.all())))


# ---------------------------------------------------------------- isnan / isinf / isfinite

def _test_kernel_for(name, ufunc, int_value):
    def kernel(x):
        xp = _xp(x)
        if not _dt.is_inexact_np(x.dtype):
            return xp.full(x.shape, int_value, dtype=np.bool_), None
        return xp.asarray(getattr(xp, ufunc)(x)), None

    kernel.__name__ = f"_{name}_kernel"
    kernel.op_name = name

    def public(x, name=None):
        return apply(kernel, tensor_arg(x, kernel.op_name))

    public.__name__ = public.__qualname__ = name
    public.__doc__ = (f"Elementwise ``{ufunc}`` test (integer and bool inputs are "
                      f"{'never' if not int_value else 'always'} {ufunc[2:]}).\n\n"
                      "    Args:\n        x (Tensor): input.\n\n"
                      "    Returns:\n        Tensor: bool, same shape as x.\n")
    return public


isnan = _test_kernel_for("isnan", "isnan", False)
isinf = _test_kernel_for("isinf", "isinf", False)
isfinite = _test_kernel_for("isfinite", "isfinite", True)


# ---------------------------------------------------------------- logical

def _write_out(out, res, op):
    """The ``out=`` argument: the result is written into ``out``, which is returned."""
    if out is None:
        return res
    if not isinstance(out, Tensor):
        raise TypeError(f"{op}: 'out' must be a Tensor, got {type(out).__name__}")
    out._data = res._data if out._data.dtype == res._data.dtype else \
        res._data.astype(out._data.dtype)
    out._ver.v += 1
    return out


def _ufunc_kernel(name, ufunc):
    """A non-differentiable kernel ``xp.<ufunc>(*arrays)`` with op_name ``name``."""
    def kernel(*arrays):
        xp = _xp(arrays[0])
        return xp.asarray(getattr(xp, ufunc)(*arrays)), None

    kernel.__name__ = f"_{name}_kernel"
    kernel.op_name = name
    return kernel


def _logical_kernel_for(name, ufunc):
    kernel = _ufunc_kernel(name, ufunc)

    def public(x, y, out=None, name=None):
        _check_kinds(x, y, kernel.op_name)
        x, y = _binary_args(x, y, kernel.op_name)
        return _write_out(out, apply(kernel, x, y), kernel.op_name)

    public.__name__ = public.__qualname__ = name
    public.__doc__ = (
        f"Elementwise ``{ufunc}`` (nonzero counts as True; broadcast as NumPy does).\n\n"
        "    Args:\n"
        "        x (Tensor): input of any dtype.\n"
        "        y (Tensor|bool|number): input, broadcast against x.\n"
        "        out (Tensor|None): optional tensor to write the result into.\n\n"
        "    Returns:\n"
        "        Tensor: bool.\n")
    return public


logical_and = _logical_kernel_for("logical_and", "logical_and")
logical_or = _logical_kernel_for("logical_or", "logical_or")
logical_xor = _logical_kernel_for("logical_xor", "logical_xor")


_logical_not_kernel = _ufunc_kernel("logical_not", "logical_not")


def logical_not(x, out=None, name=None):
    """Elementwise logical NOT (zero becomes True).

    Args:
        x (Tensor): input of any dtype.
        out (Tensor|None): optional tensor to write the result into.

    Returns:
        Tensor: bool.
    """
    x = tensor_arg(x, "logical_not")
    return _write_out(out, apply(_logical_not_kernel, x), "logical_not")


logical_and_ = _inplace_bool(logical_and, "logical_and_")
logical_or_ = _inplace_bool(logical_or, "logical_or_")
logical_xor_ = _inplace_bool(logical_xor, "logical_xor_")


def logical_not_(x, name=None):
    """Inplace :func:`logical_not`: x becomes the bool result; returns x."""
    x = tensor_arg(x, "logical_not_")
    return _into_bool(x, logical_not(x), "logical_not_")


# ---------------------------------------------------------------- bitwise

def _check_bitwise(v, op, arg):
    if isinstance(v, Tensor):
        if v._data.dtype.kind not in "biu":
            raise TypeError(f"{op}: argument '{arg}' has dtype {v.dtype.name}, expected bool, "
                            "uint8, int8, int16, int32 or int64")
    elif not isinstance(v, (bool, numbers.Integral)):
        raise TypeError(f"{op}: argument '{arg}' must be an integer or bool, got {v!r}")


def _bitwise_kernel_for(name, ufunc):
    kernel = _ufunc_kernel(name, ufunc)

    def prepare(x, y):
        x, y = _binary_args(x, y, kernel.op_name)
        _check_bitwise(x, kernel.op_name, "x")
        _check_bitwise(y, kernel.op_name, "y")
        return x, y

    def public(x, y, out=None, name=None):
        x, y = prepare(x, y)
        return _write_out(out, apply(kernel, x, y), kernel.op_name)

    def inplace(x, y, name=None):
        x, y = prepare(x, y)
        if not isinstance(y, Tensor):
            y = _wrap(_xp(x._data).asarray(y, dtype=x._data.dtype))
        return apply_(kernel, x, y)

    public.__name__ = public.__qualname__ = name
    public.__doc__ = (
        f"Elementwise ``{ufunc}`` of bool or integer tensors (broadcast as NumPy does).\n\n"
        "    Args:\n"
        "        x (Tensor): bool or integer input.\n"
        "        y (Tensor|int|bool): bool or integer input.\n"
        "        out (Tensor|None): optional tensor to write the result into.\n\n"
        "    Returns:\n"
        "        Tensor: the promoted dtype of x and y.\n")
    inplace.__name__ = inplace.__qualname__ = name + "_"
    inplace.__doc__ = f"Inplace :func:`{name}` (the result keeps x's dtype); returns x."
    return public, inplace


bitwise_and, bitwise_and_ = _bitwise_kernel_for("bitwise_and", "bitwise_and")
bitwise_or, bitwise_or_ = _bitwise_kernel_for("bitwise_or", "bitwise_or")
bitwise_xor, bitwise_xor_ = _bitwise_kernel_for("bitwise_xor", "bitwise_xor")


_bitwise_not_kernel = _ufunc_kernel("bitwise_not", "invert")


def bitwise_not(x, out=None, name=None):
    """Elementwise bitwise NOT (logical NOT for bool).

    Args:
        x (Tensor): bool or integer input.
        out (Tensor|None): optional tensor to write the result into.

    Returns:
        Tensor: same dtype as x.
    """
    x = tensor_arg(x, "bitwise_not")
    _check_bitwise(x, "bitwise_not", "x")
    return _write_out(out, apply(_bitwise_not_kernel, x), "bitwise_not")


def bitwise_not_(x, name=None):
    """Inplace :func:`bitwise_not`; returns x."""
    x = tensor_arg(x, "bitwise_not_")
    _check_bitwise(x, "bitwise_not_", "x")
    return apply_(_bitwise_not_kernel, x)


# ---------------------------------------------------------------- predicates

def is_tensor(x) -> bool:
    """Whether ``x`` is a paddle_hl Tensor (a Python bool)."""
    return isinstance(x, Tensor)


def _need_tensor(x, op):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a Tensor, but received type of x: {type(x)}")
    return x.dtype


def is_complex(x) -> bool:
    """Whether the Tensor ``x`` has a complex dtype (a Python bool)."""
    return _need_tensor(x, "is_complex").is_complex


def is_floating_point(x) -> bool:
    """Whether the Tensor ``x`` has a real floating point dtype (a Python bool)."""
    return _need_tensor(x, "is_floating_point").is_floating_point


def is_integer(x) -> bool:
    """Whether the Tensor ``x`` has an integer dtype (bool does not count; a Python bool)."""
    return _need_tensor(x, "is_integer").is_integer


def is_empty(x, name=None):
    """Whether ``x`` has no elements.

    Args:
        x (Tensor): input.

    Returns:
        Tensor: bool, shape ``[]``.
    """
    x = tensor_arg(x, "is_empty")
    return _wrap(_xp(x._data).asarray(x._data.size == 0))


def is_same_shape(x, y) -> bool:
    """Tensor method: whether ``x`` and ``y`` have the same shape (a Python bool)."""
    if not isinstance(y, Tensor):
        raise ValueError(f"is_same_shape: argument 'y' must be a Tensor, got {type(y).__name__}")
    return x.shape == y.shape


API = ["equal", "equal_", "not_equal", "greater_than", "greater_than_", "greater_equal",
       "greater_equal_", "less_than", "less_than_", "less_equal", "less_equal_", "equal_all",
       "allclose", "isclose", "isnan", "isinf", "isfinite", "logical_and", "logical_and_",
       "logical_or", "logical_or_", "logical_xor", "logical_not", "logical_not_",
       "bitwise_and", "bitwise_and_", "bitwise_or", "bitwise_or_", "bitwise_xor",
       "bitwise_xor_", "bitwise_not", "bitwise_not_", "is_tensor", "is_complex",
       "is_floating_point", "is_integer", "is_empty"]
# not_equal_, logical_xor_ and is_same_shape are Tensor methods only in Paddle 2.6.
METHODS = API + ["not_equal_", "logical_xor_", "is_same_shape"]
