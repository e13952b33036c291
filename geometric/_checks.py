"""Argument checking shared by the graph ops: every error names the function and the argument."""

from __future__ import annotations

import numbers

import numpy as np

import paddle_hl
from paddle_hl.framework.tensor import Tensor

__all__ = []

_INDEX_DTYPES = ("int32", "int64")


class GraphIndexError(IndexError, ValueError):
    """An index value outside its range. Paddle raises IndexError for these, and ValueError
    for some of the neighbouring checks, so (like NumPy's AxisError) this is both."""


class GraphDtypeError(TypeError, ValueError):
    """An argument of the wrong dtype. Paddle reports these as ValueError; TypeError is what
    they are."""


def as_tensor(x, op: str, arg: str) -> Tensor:
    """``x`` as a Tensor (ndarrays and lists are converted); None and other objects refused."""
    if isinstance(x, Tensor):
        return x
    if x is None:
        raise TypeError(f"{op}: argument '{arg}' must be a Tensor, but got None")
    try:
        return paddle_hl.to_tensor(x)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{op}: argument '{arg}' must be a Tensor, got {type(x).__name__} "
                        f"({e})") from None


def check_values(x: Tensor, op: str, arg: str, allowed) -> None:
    name = x.dtype.name
    if name not in allowed:
        raise GraphDtypeError(f"{op}: argument '{arg}' has dtype {name}, expected one of "
                              f"{list(allowed)}")


def index_array(idx, op: str, arg: str, allow_column: bool = True):
    """A 1-D int32/int64 index as a backend array; [E, 1] columns are flattened as Paddle does."""
    t = as_tensor(idx, op, arg)
    a = t._data
    if a.dtype.kind not in "iu" or a.dtype.name not in _INDEX_DTYPES:
        raise GraphDtypeError(f"{op}: argument '{arg}' must be an int32 or int64 tensor, got "
                              f"dtype {t.dtype.name}")
    if a.ndim == 2 and allow_column and a.shape[1] == 1:
        a = a.reshape(-1)
    if a.ndim != 1:
        extra = " or of shape [N, 1]" if allow_column else ""
        raise ValueError(f"{op}: argument '{arg}' must be 1-D{extra}, got shape "
                         f"{list(a.shape)}")
    return a


def check_range(a, n: int, op: str, arg: str, what: str) -> None:
    """Every value of index array ``a`` lies in [0, n)."""
    if a.size == 0:
        return
    lo, hi = int(a.min()), int(a.max())
    if lo < 0 or hi >= n:
        bad = lo if lo < 0 else hi
        raise GraphIndexError(f"{op}: argument '{arg}' contains {bad}, which is out of range "
                              f"for {what} of size {n}; expected values in [0, {n})")


def same_length(a, b, op: str, arg_a: str, arg_b: str) -> None:
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"{op}: '{arg_a}' and '{arg_b}' must have the same length, got "
                         f"{a.shape[0]} and {b.shape[0]}")


def out_size_arg(out_size, op: str):
    """``out_size`` as an int, or None when it is not set (None or <= 0, as in Paddle)."""
    if out_size is None:
        return None
    if isinstance(out_size, Tensor):
        if out_size.dtype.name not in _INDEX_DTYPES:
            raise GraphDtypeError(f"{op}: 'out_size' as a Tensor must be int32 or int64, got "
                                  f"{out_size.dtype.name}")
        if out_size.size != 1:
            raise ValueError(f"{op}: 'out_size' as a Tensor must hold one value, got shape "
                             f"{out_size.shape}")
        out_size = int(out_size._data.reshape(-1)[0])
    elif isinstance(out_size, (list, tuple)) and len(out_size) == 1:
        out_size = out_size[0]
    if isinstance(out_size, bool) or not isinstance(out_size, (numbers.Integral, np.integer)):
        raise TypeError(f"{op}: 'out_size' must be an int or an int Tensor, got "
                        f"{type(out_size).__name__}")
    out_size = int(out_size)
    return out_size if out_size > 0 else None


def output_rows(dst, n_default: int, out_size, op: str) -> int:
    """The number of output rows, checked against the destination indices."""
    size = out_size_arg(out_size, op)
    if size is None:
        check_range(dst, n_default, op, "dst_index", "x's dim 0 (out_size is not set)")
        return n_default
    if dst.size and int(dst.max()) >= size:
        raise GraphIndexError(f"{op}: out_size={size} is too small: 'dst_index' holds "
                              f"{int(dst.max())}, so out_size must be at least "
                              f"{int(dst.max()) + 1}")
    check_range(dst, size, op, "dst_index", "the output (out_size)")
    return size


def choice(value, allowed, op: str, arg: str) -> str:
    if value not in allowed:
        quoted = ", ".join(f"`{a}`" for a in allowed)
        raise ValueError(f"{op}: {arg} should be {quoted}, but received {value!r}")
    return value
