"""Parameter conversion, broadcasting and validation shared by the distributions."""

from __future__ import annotations

import numbers

import numpy as np

from .. import backend
from ..framework import dtype as _dt
from ..framework.tensor import Tensor, _wrap, to_array

__all__ = []

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _np_dtype_of(x):
    """The float dtype a parameter asks for, or None when it adapts (a Python number)."""
    if isinstance(x, Tensor):
        d = x._data.dtype
    elif backend.is_array(x):
        d = x.dtype
    else:
        return None
    return d if d in _FLOATS else None


def to_param(x, op: str, arg: str, dtype=None) -> Tensor:
    """One parameter as a float Tensor.

    Python numbers and lists become float32 (Paddle's rule for distribution parameters),
    NumPy arrays keep float32/float64, Tensors keep a float dtype (integer ones become float32).
    ``dtype`` forces the result's dtype (used to bring parameters to one common dtype).
    """
    if isinstance(x, Tensor):
        t = x
    elif isinstance(x, bool) or x is None:
        raise TypeError(f"{op}: '{arg}' must be a number, list, numpy array or Tensor, got "
                        f"{type(x).__name__}")
    else:
        try:
            arr = to_array(x, where=op)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{op}: '{arg}' must be a number, list, numpy array or Tensor, got "
                            f"{type(x).__name__} ({e})") from None
        # arrays keep float32/float64; numbers (NumPy scalars too) and lists become float32
        keeps = backend.is_array(x)
        if not (keeps and arr.dtype in _FLOATS):
            arr = arr.astype(np.float32)
        t = _wrap(arr)
    target = dtype if dtype is not None else (
        t._data.dtype if t._data.dtype in _FLOATS else np.dtype(np.float32))
    if not _dt.is_float_np(t._data.dtype) and t._data.dtype.kind not in "iub":
        raise TypeError(f"{op}: '{arg}' must be a real tensor, got {t.dtype}")
    if t._data.dtype != target:
        t = t.astype(_dt.from_np(target))
    return t


def common_dtype(*values):
    """float64 when any tensor/array parameter is float64, else float32."""
    ds = [_np_dtype_of(v) for v in values]
    return np.dtype(np.float64) if any(d == np.float64 for d in ds) else np.dtype(np.float32)


def to_params(op: str, **kwargs):
    """Convert several parameters to one float dtype and broadcast them against each other.

    Returns:
        tuple: the broadcast Tensors (in keyword order) and the broadcast shape.
    """
    from .. import broadcast_shape, broadcast_to

    dt = common_dtype(*kwargs.values())
    ts = [to_param(v, op, k, dt) for k, v in kwargs.items()]
    shape = list(ts[0].shape)
    for t in ts[1:]:
        try:
            shape = broadcast_shape(shape, t.shape)
        except ValueError:
            names = ", ".join(f"{n} {list(v.shape)}" for n, v in zip(kwargs, ts))
            raise ValueError(f"{op}: the parameters cannot be broadcast together: {names}") \
                from None
    out = [t if list(t.shape) == shape else broadcast_to(t, shape) for t in ts]
    return tuple(out), tuple(shape)


def to_value(value, like: Tensor, op: str, arg: str = "value") -> Tensor:
    """A value argument as a Tensor of the distribution's dtype (cast like Paddle does)."""
    return to_value_dtype(value, like._data.dtype, op, arg)


def to_value_dtype(value, dtype, op: str, arg: str = "value") -> Tensor:
    """A value argument as a Tensor of numpy dtype ``dtype``."""
    if not isinstance(value, Tensor):
        try:
            value = _wrap(to_array(value, where=op))
        except (TypeError, ValueError) as e:
            raise TypeError(f"{op}: '{arg}' must be a Tensor or array-like ({e})") from None
    if dtype is not None and value._data.dtype != dtype:
        value = value.astype(_dt.from_np(np.dtype(dtype)))
    return value


def shape_tuple(shape, op: str, arg: str = "shape") -> tuple:
    """A sample shape given as an int, list, tuple or 1-D Tensor -> tuple of ints."""
    if isinstance(shape, Tensor):
        shape = shape.tolist()
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        shape = (int(shape),)
    if not isinstance(shape, (list, tuple)):
        raise TypeError(f"{op}: '{arg}' must be a list or tuple of ints, got "
                        f"{type(shape).__name__}")
    out = []
    for s in shape:
        if isinstance(s, Tensor):
            s = s.item()
        if not isinstance(s, numbers.Integral) or isinstance(s, bool) or s < 0:
            raise TypeError(f"{op}: '{arg}' must hold non-negative ints, got {list(shape)}")
        out.append(int(s))
    return tuple(out)


def _describe_bad(arr, mask):
    xp = backend.get_array_module(arr)
    bad = arr[mask]
    v = bad.ravel()[:3]
    return ", ".join(repr(float(b)) for b in (v.get() if xp is not np else v))


def check(cond_arr, arr, op: str, arg: str, expected: str):
    """Raise a ValueError naming ``op`` and ``arg`` where ``cond_arr`` is False (or arr NaN)."""
    xp = backend.get_array_module(arr)
    ok = cond_arr & ~xp.isnan(arr)
    if not bool(ok.all()):
        raise ValueError(f"{op}: every value of '{arg}' must be {expected}; got "
                         f"{_describe_bad(arr, ~ok)} (shape {list(arr.shape)}, "
                         f"dtype {_dt.from_np(arr.dtype)})")


def check_positive(t: Tensor, op: str, arg: str):
    a = t._data
    check(a > 0, a, op, arg, "positive (> 0)")


def check_unit_interval(t: Tensor, op: str, arg: str, open_low=False):
    a = t._data
    if open_low:
        check((a > 0) & (a <= 1), a, op, arg, "in (0, 1]")
    else:
        check((a >= 0) & (a <= 1), a, op, arg, "in [0, 1]")


def sum_rightmost(x: Tensor, n: int) -> Tensor:
    """Sum the last ``n`` axes of x (n <= 0 returns x)."""
    if n <= 0:
        return x
    return x.sum(axis=list(range(x.ndim - n, x.ndim)))


def tiny(dtype) -> float:
    return float(np.finfo(dtype).tiny)


def eps(dtype) -> float:
    return float(np.finfo(dtype).eps)
