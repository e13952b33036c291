"""Argument checking and conversion shared by the tensor ops (errors name the op and argument)."""

from __future__ import annotations

import numbers

import numpy as np

from .. import backend
from ..framework import dtype as _dt
from ..framework import state
from ..framework.engine import GRAD
from ..framework.op import apply, op
from ..framework.tensor import Tensor, _wrap, to_array

__all__ = []


def tensor_arg(x, op: str, arg: str = "x") -> Tensor:
    """Return ``x`` as a Tensor; ndarrays, numbers and lists are converted, None is refused."""
    if isinstance(x, Tensor):
        return x
    if x is None:
        raise TypeError(f"{op}: argument '{arg}' must be a Tensor, but got None")
    try:
        return _wrap(to_array(x, where=op))
    except (TypeError, ValueError) as e:
        raise TypeError(f"{op}: argument '{arg}' must be a Tensor, got {type(x).__name__} "
                        f"({e})") from None


def check_tensor(x, op: str, arg: str = "x", what: str = "a Tensor") -> Tensor:
    """``x`` itself when it is a Tensor; anything else (which :func:`tensor_arg` would
    convert) is refused with a TypeError naming the op, the argument, ``what`` it must be
    and the type given."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: {arg} must be {what}, got {type(x).__name__}")
    return x


def float_arg(x, op: str, arg: str = "x", *, complex_ok: bool = False,
              lift: bool = False) -> Tensor:
    """``x`` as a floating-point Tensor (float16, bfloat16, float32 or float64).

    Args:
        complex_ok: complex64/complex128 are accepted too.
        lift: integer and bool input is computed in the default float dtype instead of refused.

    Raises:
        TypeError: any other dtype, naming the op, the argument, its dtype and what is accepted.
    """
    x = tensor_arg(x, op, arg)
    d = x._data.dtype
    if _dt.is_float_np(d) or (complex_ok and d.kind == "c"):
        return x
    if lift and d.kind in "biu":
        return as_float(x)
    allowed = "float16, bfloat16, float32, float64" + (", complex64, complex128"
                                                      if complex_ok else "")
    if lift:
        allowed += " or an integer dtype"
    raise TypeError(f"{op}: argument '{arg}' has dtype {x.dtype.name}, expected a floating-point "
                    f"Tensor ({allowed}); cast it first, e.g. {arg}.astype('float32')")


def int_tensor_arg(x, op: str, arg: str = "x") -> Tensor:
    """``x`` as an integer Tensor; any other dtype raises a TypeError naming it."""
    x = tensor_arg(x, op, arg)
    if x._data.dtype.kind not in "iu":
        raise TypeError(f"{op}: argument '{arg}' has dtype {x.dtype.name}, expected an integer "
                        "Tensor (int16, int32 or int64)")
    return x


def int_arg(v, op: str, arg: str, *, integral_float: bool = False) -> int:
    """``v`` as a Python int (bool refused); ``integral_float`` also takes floats like 3.0."""
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        if integral_float and isinstance(v, float) and v.is_integer():
            return int(v)
        raise TypeError(f"{op}: {arg} must be an int, got {type(v).__name__} {v!r}")
    return int(v)


def number_arg(v, op: str, arg: str, *, real: bool = False):
    """``v`` as a Python number: given as one, as a NumPy scalar or as a one-element Tensor
    (its value).

    Args:
        real: a real number is required (bool refused) and is returned as a float.

    Raises:
        ValueError: a Tensor of more than one element.
        TypeError: anything else that is not a number (a real number when ``real``).
    """
    if isinstance(v, Tensor):
        if v.size != 1:
            raise ValueError(f"{op}: '{arg}' given as a Tensor must have one element, got "
                             f"shape {v.shape}")
        v = v.item()
    elif isinstance(v, np.generic):
        v = v.item()
    if not real:
        if not isinstance(v, numbers.Number):
            raise TypeError(f"{op}: '{arg}' must be a number, got {type(v).__name__}")
        return v
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{op}: '{arg}' must be a real number (int or float), got "
                        f"{type(v).__name__}")
    return float(v)


def positive_int(v, op: str, arg: str) -> int:
    """``v`` as a Python int greater than 0."""
    v = int_arg(v, op, arg)
    if v <= 0:
        raise ValueError(f"{op}: {arg} must be greater than 0, got {v}")
    return v


def name_suffix(name) -> str:
    """``", name=..."`` for a layer's extra_repr, or "" when it has no name."""
    return f", name={name}" if name else ""


def check_dtype(x: Tensor, allowed, op: str, arg: str = "x"):
    name = x.dtype.name
    if name not in allowed:
        raise TypeError(f"{op}: argument '{arg}' has dtype {name}, expected one of "
                        f"{list(allowed)}")


def norm_axis(axis, ndim: int, op: str, arg: str = "axis") -> int:
    """One axis as a non-negative int, checked against ``ndim`` (0-D tensors accept -1 and 0)."""
    if type(axis) is int:  # the common case, without the slow ABC isinstance below
        n = ndim if ndim > 0 else 1
        if -n <= axis < n:
            return axis % n
    if isinstance(axis, Tensor):
        axis = int(axis.item())
    if not isinstance(axis, numbers.Integral) or isinstance(axis, bool):
        raise TypeError(f"{op}: '{arg}' must be an int, got {type(axis).__name__}")
    n = max(ndim, 1)
    if not -n <= axis < n:
        raise ValueError(f"{op}: '{arg}' = {axis} is out of range for a tensor of rank {ndim}; "
                         f"expected a value in [{-n}, {n - 1}]")
    return int(axis) % n


def norm_axes(axis, ndim: int, op: str, arg: str = "axis"):
    """None (all axes), an int, or a list/tuple/Tensor of ints -> a sorted tuple of axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, Tensor):
        axis = axis.tolist()
    if isinstance(axis, (list, tuple)):
        if len(axis) == 0:
            return tuple(range(ndim))
        axes = tuple(sorted({norm_axis(a, ndim, op, arg) for a in axis}))
        if len(axes) != len(axis):
            raise ValueError(f"{op}: '{arg}' {list(axis)} contains a repeated axis")
        return axes if ndim else ()
    return (norm_axis(axis, ndim, op, arg),) if ndim else ()


def shape_arg(shape, op: str, arg: str = "shape") -> list:
    """A shape given as a list/tuple of ints and 0-D tensors, an int, or a 1-D int Tensor."""
    if type(shape) is list or type(shape) is tuple:
        # the common case, plain ints: no per-element conversion
        for s in shape:
            if type(s) is not int:
                break
        else:
            return list(shape)
    if isinstance(shape, Tensor):
        if not shape.dtype.is_integer:
            raise TypeError(f"{op}: '{arg}' as a Tensor must be integer, got {shape.dtype}")
        shape = shape.numpy().reshape(-1).tolist()
    elif isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        shape = [shape]
    elif isinstance(shape, np.ndarray):
        shape = shape.reshape(-1).tolist()
    if not isinstance(shape, (list, tuple)):
        raise TypeError(f"{op}: '{arg}' must be a list or tuple of ints, got "
                        f"{type(shape).__name__}")
    out = []
    for s in shape:
        if isinstance(s, Tensor):
            if s.size != 1:
                raise ValueError(f"{op}: '{arg}' elements given as Tensors must have one element,"
                                 f" got shape {s.shape}")
            s = s.item()
        if isinstance(s, (np.integer,)):
            s = int(s)
        if not isinstance(s, int) or isinstance(s, bool):
            raise TypeError(f"{op}: '{arg}' must contain ints, got {s!r} in {list(shape)}")
        out.append(s)
    return out


def xp_of(x: Tensor):
    return backend.get_array_module(x._data)


def float_dtype_for(npd):
    """The floating dtype an op on ``npd`` computes in (ints and bools -> default float)."""
    if _dt.is_inexact_np(npd):
        return npd
    return _dt.default_np()


def _cast_grad(M, x, out, g, dtype):
    # the cast back to the input's dtype (a cast's adjoint is a cast; itself differentiable)
    src = M.value(x).dtype
    if M.value(g).dtype == src:
        return (g,)
    return (M.op(_cast_kernel, g, dtype=src),)


@op("cast", saves=(), grad=_cast_grad)
def _cast_kernel(x, dtype):
    if x.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        x = x.real  # complex to real keeps the real part (the gradient of a real input too)
    return x.astype(dtype), GRAD


def cast_to(x: Tensor, npd) -> Tensor:
    """Differentiable cast (no-op when the dtype already matches)."""
    if x._data.dtype == npd:
        return x
    if not _dt.is_inexact_np(npd):
        return _wrap(x._data.astype(npd))
    return apply(_cast_kernel, x, dtype=npd)


def as_float(x: Tensor) -> Tensor:
    """x itself if it is floating/complex, else x cast to the default float dtype."""
    d = x._data.dtype
    if d.kind in "fc" or d == _dt.BFLOAT16_NP:
        return x
    return cast_to(x, _dt.default_np())


class _Operator:
    """The ``name`` default of the functions behind Tensor's Python operators (see
    ``tensor._as_operator``): ``x @ y`` promotes mixed float/int dtypes as Paddle's operators
    do, while ``paddle.matmul(x, y)`` rejects them as Paddle's functions do."""

    def __repr__(self):
        return "<operator>"


OPERATOR = _Operator()


class MixedDtypeError(TypeError, ValueError):
    """A float (or complex) tensor met an integer or bool one in an op that Paddle refuses to
    mix them in. Paddle raises ValueError here, Python's convention is TypeError: it is both."""


def check_kinds(dx, dy, op: str, names=("x", "y")) -> None:
    """Raise :class:`MixedDtypeError` when exactly one of two dtypes is float/complex."""
    if _dt.is_inexact_np(dx) != _dt.is_inexact_np(dy):
        a, b = _dt.from_np(dx).name, _dt.from_np(dy).name
        target = a if _dt.is_inexact_np(dx) else b
        other = names[1] if _dt.is_inexact_np(dx) else names[0]
        raise MixedDtypeError(
            f"{op}: the dtypes of '{names[0]}' ({a}) and '{names[1]}' ({b}) do not match; "
            f"{op} does not mix float and integer inputs. Cast one of them first, e.g. "
            f"{other}.astype('{target}')")


def check_tensor_kinds(tensors, op: str, arg: str = "x") -> None:
    """:func:`check_kinds` over a list of tensors (``concat``, ``stack``): names the entries."""
    first = None
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            continue
        if first is None:
            first = (i, t._data.dtype)
        elif t._data.dtype != first[1]:
            check_kinds(first[1], t._data.dtype, op, (f"{arg}[{first[0]}]", f"{arg}[{i}]"))


def promote_pair(x, y, op: str, strict: bool = False):
    """Apply Paddle's binary-op dtype rules; returns (x, y) with scalars left as Python scalars.

    With ``strict`` a float/complex tensor meeting an integer/bool tensor raises
    :class:`MixedDtypeError` (Paddle's functions refuse that mix); the check runs only when
    the dtypes differ, so it costs nothing on the common path.
    """
    tx, ty = isinstance(x, Tensor), isinstance(y, Tensor)
    if tx and ty:
        dx, dy = x._data.dtype, y._data.dtype
        if dx != dy:
            if strict:
                check_kinds(dx, dy, op)
            t = result_type(dx, dy)
            x, y = cast_to(x, t), cast_to(y, t)
        return x, y
    if tx:
        return x, _scalar_for(y, x, op, "y")
    if ty:
        return _scalar_for(x, y, op, "x"), y
    x = tensor_arg(x, op, "x")
    return promote_pair(x, y, op, strict)


def result_type(dx, dy):
    fx, fy = _dt.is_inexact_np(dx), _dt.is_inexact_np(dy)
    if fx and not fy:
        return dx
    if fy and not fx:
        return dy
    if {dx, dy} == {np.dtype(np.float16), _dt.BFLOAT16_NP}:
        return np.dtype(np.float32)
    return np.promote_types(dx, dy)


def _scalar_for(s, t: Tensor, op, arg):
    """A Python scalar meeting tensor ``t``: keep t's dtype class, floats lift ints to float."""
    if isinstance(s, (bool, np.bool_)):
        return s
    if isinstance(s, float):
        return s
    if isinstance(s, int):
        return s
    if isinstance(s, complex):
        return s
    if isinstance(s, np.generic):
        return s.item()
    if s is None:
        raise TypeError(f"{op}: argument '{arg}' must be a Tensor or a number, but got None")
    return tensor_arg(s, op, arg)


def needs_float_lift(t: Tensor, s) -> bool:
    return isinstance(s, float) and t._data.dtype.kind in "biu"


def no_grad_apply(fn, *args, **kw):
    with state.no_grad():
        return apply(fn, *args, **kw)
