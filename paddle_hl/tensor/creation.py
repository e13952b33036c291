"""Tensor creation (Paddle's ``tensor/creation.py``).

Constant factories (full, zeros, arange, linspace, eye, ...) build their arrays directly on the
current device and return tensors with ``stop_gradient=True``. The ops that take tensors
(assign, clone, diag, diag_embed, diagflat, tril/triu, complex, polar, meshgrid, vander) are
differentiable; the linear ones have higher-order rules.
"""

from __future__ import annotations

import builtins
import math
import numbers
import sys

import numpy as np

from .. import backend
from ..backend import get_array_module as _xp
from ..framework import dtype as _dt
from ..framework import place as _pl
from ..framework.op import GRAD, apply, apply_, check_inplace, op
from ..framework.tensor import Tensor, _wrap, check_fits, check_value_fits, to_array
from ._helpers import int_arg, norm_axis, shape_arg, tensor_arg

__all__ = []

_INT_INDEX = (np.dtype(np.int32), np.dtype(np.int64))


def _xp_place(place=None):
    return _pl.xp_for(_pl.parse_place(place) if place is not None else _pl.current_place())


def _np_dtype(dtype, default=None):
    if dtype is None:
        return default if default is not None else _dt.default_np()
    return _dt.to_np(dtype)


def _scalar(v, op, arg):
    """A Python number from a number or a one-element Tensor."""
    if isinstance(v, Tensor):
        if v.size != 1:
            raise ValueError(f"{op}: '{arg}' given as a Tensor must have one element, got shape "
                             f"{v.shape}")
        return v.item()
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray) and v.size == 1:
        return v.item()
    if not isinstance(v, numbers.Number):
        raise TypeError(f"{op}: '{arg}' must be a number or a one-element Tensor, got "
                        f"{type(v).__name__}")
    return v


def _finite(v, op, arg):
    """``v`` (a Python number) unless it is NaN or infinite: a bound or step that is not finite
    has no meaningful sequence, and would otherwise fail deep inside with an unrelated error."""
    if not isinstance(v, numbers.Integral) and not np.isfinite(v):
        raise ValueError(f"{op}: '{arg}' must be a finite number, got {v}")
    return v


def _int_arg(v, op, arg):
    """An int argument, which may also come as a 1-element Tensor or an integral float."""
    return int_arg(_scalar(v, op, arg), op, arg, integral_float=True)


def _shape(shape, op):
    shp = shape_arg(shape, op)
    if any(s < 0 for s in shp):
        raise ValueError(f"{op}: each value of 'shape' must be non-negative, got {shp}")
    return tuple(shp)


def _bytes_text(n):
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} bytes"  # pragma: no cover


def _new_array(op, shape, npd, make, itemsize=None):
    """``make()``, the new array of ``shape`` and dtype ``npd`` that creation op ``op`` builds,
    with the errors of a shape too large named in the op's terms: a byte size beyond what an
    array can address (ValueError) or more memory than there is (MemoryError), each naming the
    op, the shape, the dtype and the bytes. ``itemsize``: the widest element the op's
    intermediate arrays use, when wider than ``npd``'s."""
    nbytes = math.prod(shape) * builtins.max(npd.itemsize, itemsize or 0)
    if nbytes > sys.maxsize:
        raise ValueError(f"{op}: shape {list(shape)} of {_dt.from_np(npd)} needs {nbytes} bytes,"
                         f" more than an array can address ({sys.maxsize} bytes); expected a "
                         "smaller shape")
    try:
        return make()
    except MemoryError as e:
        raise MemoryError(f"{op}: not enough memory for shape {list(shape)} of "
                          f"{_dt.from_np(npd)} ({_bytes_text(nbytes)})") from e


# ---------------------------------------------------------------- from data

def to_tensor(data, dtype=None, place=None, stop_gradient=True) -> Tensor:
    """Build a Tensor from Python data, a NumPy array or a Tensor (always a copy).

    Python ints become int64, Python floats the default dtype (float32), bools bool.

    A value that an integer ``dtype`` cannot hold (``to_tensor([2**40], 'int32')``, 300 as
    int8, -1 as uint8, a Python int of 2**63 or more, a float outside the range, NaN or
    infinity) raises ValueError naming the value and the dtype. Paddle 2.6 wraps such values
    silently into other numbers; an error is kept here on purpose.

    Args:
        data: a number, (nested) list/tuple, numpy.ndarray or Tensor.
        dtype (str|paddle.dtype, optional): the dtype to cast to.
        place (Place|str, optional): where to put it; the current device by default.
        stop_gradient (bool): whether to stop gradients (default True).

    Returns:
        Tensor: the new tensor.

    Example:
        >>> paddle.to_tensor([[1, 2], [3, 4]]).dtype
        paddle.int64
    """
    return _wrap(to_array(data, dtype, place, "to_tensor"), bool(stop_gradient))


def _identity_bw(g):
    return (g,)


@op("assign", saves=(), const_grad=_identity_bw)
def _identity_kernel(x):
    return x.copy(), GRAD


def _assign_array(x):
    """Paddle's assign conversions: scalars become shape [1], float64 ndarrays float32."""
    if isinstance(x, (bool, np.bool_)):
        return np.array([bool(x)])
    if isinstance(x, numbers.Integral):
        return np.array([int(x)], dtype=np.int64)
    if isinstance(x, (float, np.floating)):
        return np.array([float(x)], dtype=_dt.default_np())
    if isinstance(x, builtins.complex):
        return np.array([x], dtype=np.complex64)
    if isinstance(x, np.ndarray):
        if x.dtype == np.float64:
            return x.astype(np.float32)
        return to_array(x, where="assign")
    if isinstance(x, (list, tuple)):
        return to_array(x, where="assign")
    if backend.is_gpu_array(x):
        return x.copy()
    raise TypeError(f"assign: 'x' must be a Tensor, numpy.ndarray, list, tuple or number, got "
                    f"{type(x).__name__}")


def assign(x, output=None) -> Tensor:
    """Copy ``x`` into a new tensor (or into ``output``); differentiable for Tensor inputs.

    Args:
        x (Tensor|numpy.ndarray|list|tuple|number): the value. Python numbers give shape [1];
            float64 ndarrays become float32, as in Paddle.
        output (Tensor, optional): a tensor to overwrite with the value (its shape and dtype are
            replaced by x's).

    Returns:
        Tensor: the copy (``output`` itself when given).

    Example:
        >>> paddle.assign(3.).shape
        [1]
    """
    if isinstance(x, Tensor):
        out = apply(_identity_kernel, x)
    else:
        arr = _assign_array(x)
        plc = _pl.current_place()
        out = _wrap(_pl.move(arr, plc) if plc.kind == "gpu" else arr)
    if output is None:
        return out
    if not isinstance(output, Tensor):
        raise TypeError(f"assign: 'output' must be a Tensor, got {type(output).__name__}")
    check_inplace(output, "assign")
    output._data = out._data
    output._ver.v += 1
    output._node, output._idx = out._node, out._idx
    if out._node is not None:
        output.stop_gradient = False
    return output


@op("clone", saves=(), const_grad=_identity_bw)
def _clone_kernel(x):
    return x.copy(), GRAD


def clone(x, name=None) -> Tensor:
    """A copy of ``x`` that stays in the graph: gradients flow back to ``x``.

    Args:
        x (Tensor): input.

    Returns:
        Tensor: a new tensor with x's values.
    """
    return apply(_clone_kernel, tensor_arg(x, "clone"))


# ---------------------------------------------------------------- constant factories

def full(shape, fill_value, dtype=None, name=None) -> Tensor:
    """A tensor of ``shape`` filled with ``fill_value``.

    Args:
        shape (list|tuple|Tensor|int): output shape; may mix ints and 0-D tensors.
        fill_value (number|Tensor): the value.
        dtype (str|paddle.dtype, optional): the default float dtype when None (as Paddle, even
            for int or bool values).

    Returns:
        Tensor: the filled tensor.

    Raises:
        ValueError: ``fill_value`` outside the range of an integer ``dtype`` (Paddle 2.6 wraps
            it silently), or a shape too large for any array.
        MemoryError: not enough memory for the shape.

    Example:
        >>> paddle.full([2, 3], 1.5)
    """
    shp = _shape(shape, "full")
    value = _scalar(fill_value, "full", "fill_value") if not isinstance(fill_value, str) \
        else fill_value
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise ValueError(f"full: 'fill_value' must be a number, got {fill_value!r}") from None
    if dtype is None:
        npd = np.dtype(np.complex64) if isinstance(value, builtins.complex) else _dt.default_np()
    else:
        npd = _dt.to_np(dtype)
    check_value_fits(value, npd, "full")
    xp = _xp_place()
    return _wrap(_new_array("full", shp, npd, lambda: xp.full(shp, value, dtype=npd)))


def zeros(shape, dtype=None, name=None) -> Tensor:
    """A tensor of zeros (default float dtype).

    Args:
        shape (list|tuple|Tensor|int): output shape; may mix ints and 0-D tensors.
        dtype (str|paddle.dtype, optional): output dtype.

    Returns:
        Tensor: zeros.
    """
    shp, npd, xp = _shape(shape, "zeros"), _np_dtype(dtype), _xp_place()
    return _wrap(_new_array("zeros", shp, npd, lambda: xp.zeros(shp, dtype=npd)))


def ones(shape, dtype=None, name=None) -> Tensor:
    """A tensor of ones (default float dtype).

    Args:
        shape (list|tuple|Tensor|int): output shape; may mix ints and 0-D tensors.
        dtype (str|paddle.dtype, optional): output dtype.

    Returns:
        Tensor: ones.
    """
    shp, npd, xp = _shape(shape, "ones"), _np_dtype(dtype), _xp_place()
    return _wrap(_new_array("ones", shp, npd, lambda: xp.ones(shp, dtype=npd)))


def empty(shape, dtype=None, name=None) -> Tensor:
    """An uninitialised tensor (its values are whatever memory held).

    Args:
        shape (list|tuple|Tensor|int): output shape.
        dtype (str|paddle.dtype, optional): output dtype (default float).

    Returns:
        Tensor: the new tensor.
    """
    shp, npd, xp = _shape(shape, "empty"), _np_dtype(dtype), _xp_place()
    return _wrap(_new_array("empty", shp, npd, lambda: xp.empty(shp, dtype=npd)))


def _like(x, dtype, op):
    x = tensor_arg(x, op)
    npd = x._data.dtype if dtype is None else _dt.to_np(dtype)
    return x, npd, _xp(x._data)


def full_like(x, fill_value, dtype=None, name=None) -> Tensor:
    """A tensor shaped like ``x`` filled with ``fill_value`` (x's dtype unless ``dtype``).

    Args:
        x (Tensor): gives the shape, device and default dtype.
        fill_value (number|Tensor): the value (``float('inf')`` works).
        dtype (str|paddle.dtype, optional): output dtype.

    Returns:
        Tensor: the filled tensor.
    """
    x, npd, xp = _like(x, dtype, "full_like")
    value = _scalar(fill_value, "full_like", "fill_value")
    if npd.kind in "iub" and isinstance(value, float) and not np.isfinite(value):
        raise ValueError(f"full_like: cannot fill an integer tensor ({_dt.from_np(npd)}) with "
                         f"{value}")
    check_value_fits(value, npd, "full_like")
    shp = x._data.shape
    return _wrap(_new_array("full_like", shp, npd, lambda: xp.full(shp, value, dtype=npd)))


def zeros_like(x, dtype=None, name=None) -> Tensor:
    """Zeros shaped like ``x`` (x's dtype unless ``dtype``).

    Args:
        x (Tensor): gives the shape, device and default dtype.
        dtype (str|paddle.dtype, optional): output dtype.

    Returns:
        Tensor: zeros.
    """
    x, npd, xp = _like(x, dtype, "zeros_like")
    shp = x._data.shape
    return _wrap(_new_array("zeros_like", shp, npd, lambda: xp.zeros(shp, dtype=npd)))


def ones_like(x, dtype=None, name=None) -> Tensor:
    """Ones shaped like ``x`` (x's dtype unless ``dtype``).

    Args:
        x (Tensor): gives the shape, device and default dtype.
        dtype (str|paddle.dtype, optional): output dtype.

    Returns:
        Tensor: ones.
    """
    x, npd, xp = _like(x, dtype, "ones_like")
    shp = x._data.shape
    return _wrap(_new_array("ones_like", shp, npd, lambda: xp.ones(shp, dtype=npd)))


def empty_like(x, dtype=None, name=None) -> Tensor:
    """An uninitialised tensor shaped like ``x``.

    Args:
        x (Tensor): gives the shape, device and default dtype.
        dtype (str|paddle.dtype, optional): output dtype.

    Returns:
        Tensor: the new tensor.
    """
    x, npd, xp = _like(x, dtype, "empty_like")
    shp = x._data.shape
    return _wrap(_new_array("empty_like", shp, npd, lambda: xp.empty(shp, dtype=npd)))


def arange(start=0, end=None, step=1, dtype=None, name=None) -> Tensor:
    """Values in ``[start, end)`` spaced by ``step``; ``arange(n)`` gives ``[0, n)``.

    int64 when start, end and step are all ints, else the default float dtype. A float step
    gives ``ceil((end - start) / step)`` elements. The result never needs gradients.

    Args:
        start (number|Tensor): first value (the end when ``end`` is None).
        end (number|Tensor, optional): the excluded bound.
        step (number|Tensor): the spacing (not 0).
        dtype (str|paddle.dtype, optional): int32, int64, or a float dtype.

    Returns:
        Tensor: 1-D tensor.

    Raises:
        ValueError: a value of the sequence outside the range of an integer ``dtype``
            (``arange(2**31 - 2, 2**31 + 2, dtype='int32')``; Paddle 2.6 wraps the bounds and
            returns other numbers or none), or more elements than an array can hold.
        MemoryError: not enough memory for the elements.

    Example:
        >>> paddle.arange(0, 1, 0.3).shape
        [4]
    """
    start = _finite(_scalar(start, "arange", "start"), "arange", "start")
    end = None if end is None else _finite(_scalar(end, "arange", "end"), "arange", "end")
    step = _finite(_scalar(step, "arange", "step"), "arange", "step")
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ValueError("arange: 'step' must not be 0")
    if (end - start) * step < 0:
        raise ValueError(f"arange: the step ({step}) goes away from end: start={start}, "
                         f"end={end}; use a step of the other sign")
    if dtype is None:
        ints = all(isinstance(v, numbers.Integral) and not isinstance(v, bool)
                   for v in (start, end, step))
        npd = np.dtype(np.int64) if ints else _dt.default_np()
    else:
        npd = _dt.to_np(dtype)
        if npd.kind in "bc":
            raise TypeError(f"arange: dtype {_dt.from_np(npd)} is not supported; expected int32, "
                            "int64 or a float dtype")
    xp = _xp_place()
    if all(isinstance(v, numbers.Integral) for v in (start, end, step)):
        start, end, step = int(start), int(end), int(step)
        n = builtins.max(0, -((start - end) // step))  # len(range(...)), for any size
        if n:  # the first and last values bound the rest: the int64 steps, then the cast
            for v in (start, start + (n - 1) * step):
                check_value_fits(v, np.int64, "arange")
                check_value_fits(v, npd, "arange")
        return _wrap(_new_array("arange", (n,), npd, lambda: xp.arange(
            start, end, step, dtype=np.int64).astype(npd, copy=False), itemsize=8))
    n = max(int(np.ceil((end - start) / step)), 0)
    vals = _new_array("arange", (n,), npd, lambda: xp.arange(n, dtype=np.float64) * step + start,
                      itemsize=8)
    if n:
        for v in (vals[0].item(), vals[-1].item()):
            check_value_fits(v, npd, "arange")
    return _wrap(vals.astype(npd))


def eye(num_rows, num_columns=None, dtype=None, name=None) -> Tensor:
    """A 2-D matrix with ones on the diagonal.

    Args:
        num_rows (int|Tensor): rows.
        num_columns (int|Tensor, optional): columns (``num_rows`` when None).
        dtype (str|paddle.dtype, optional): output dtype (default float).

    Returns:
        Tensor: shape ``[num_rows, num_columns]``.
    """
    n = _int_arg(num_rows, "eye", "num_rows")
    m = n if num_columns is None else _int_arg(num_columns, "eye", "num_columns")
    if n < 0 or m < 0:
        raise ValueError(f"eye: num_rows and num_columns must be non-negative, got {n}, {m}")
    npd, xp = _np_dtype(dtype), _xp_place()
    return _wrap(_new_array("eye", (n, m), npd, lambda: xp.eye(n, m, dtype=npd)))


def _linspace64(xp, start, stop, num):
    """float64 values filled from both ends (exact endpoints, symmetric rounding)."""
    if num == 1:
        return xp.asarray([float(start)], dtype=np.float64)
    step = (stop - start) / (num - 1)
    i = xp.arange(num, dtype=np.float64)
    return xp.where(i < num / 2, start + step * i, stop - step * (num - 1 - i))


def _num_arg(num, op):
    n = _int_arg(num, op, "num")
    if n <= 0:
        raise ValueError(f"{op}: 'num' must be larger than 0, got {n}")
    return n


def linspace(start, stop, num, dtype=None, name=None) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop`` (both included).

    Args:
        start (number|Tensor): first value.
        stop (number|Tensor): last value.
        num (int|Tensor): how many values (> 0).
        dtype (str|paddle.dtype, optional): output dtype (default float); integer dtypes
            truncate.

    Returns:
        Tensor: 1-D tensor of ``num`` values.
    """
    start = _finite(_scalar(start, "linspace", "start"), "linspace", "start")
    stop = _finite(_scalar(stop, "linspace", "stop"), "linspace", "stop")
    n = _num_arg(num, "linspace")
    npd = _np_dtype(dtype)
    for v in (start, stop):  # the endpoints are exact and bound the rest
        check_value_fits(v, npd, "linspace")
    xp = _xp_place()
    vals = _new_array("linspace", (n,), npd, lambda: _linspace64(xp, start, stop, n), itemsize=8)
    return _wrap(vals.astype(npd))


def logspace(start, stop, num, base=10.0, dtype=None, name=None) -> Tensor:
    """``base ** linspace(start, stop, num)``, as ``numpy.logspace``.

    Args:
        start (number|Tensor): first exponent.
        stop (number|Tensor): last exponent.
        num (int|Tensor): how many values (> 0).
        base (number|Tensor): the base (default 10).
        dtype (str|paddle.dtype, optional): output dtype (default float).

    Returns:
        Tensor: 1-D tensor of ``num`` values.
    """
    start = _finite(_scalar(start, "logspace", "start"), "logspace", "start")
    stop = _finite(_scalar(stop, "logspace", "stop"), "logspace", "stop")
    base = _finite(_scalar(base, "logspace", "base"), "logspace", "base")
    n = _num_arg(num, "logspace")
    npd = _np_dtype(dtype)
    xp = _xp_place()
    with np.errstate(over="ignore", invalid="ignore"):
        vals = _new_array("logspace", (n,), npd, lambda: xp.power(
            float(base), _linspace64(xp, start, stop, n)), itemsize=8)
        check_fits(vals, npd, "logspace")
        return _wrap(vals.astype(npd))


def meshgrid(*args, **kwargs):
    """Coordinate grids from 1-D tensors (``'ij'`` indexing), differentiable.

    Args:
        *args (Tensor): N 1-D tensors of the same dtype, or one list/tuple of them.

    Returns:
        list[Tensor]: N tensors of shape ``[len(t0), ..., len(tN-1)]``.

    Example:
        >>> a, b = paddle.meshgrid(paddle.arange(2), paddle.arange(3))
        >>> a.shape
        [2, 3]
    """
    from .manipulation import expand, reshape

    unknown = set(kwargs) - {"name"}
    if unknown:
        raise TypeError(f"meshgrid: unexpected keyword arguments {sorted(unknown)}")
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    if not args:
        raise ValueError("meshgrid: expected at least one tensor")
    ts = [tensor_arg(t, "meshgrid", f"args[{i}]") for i, t in enumerate(args)]
    for i, t in enumerate(ts):
        if t.ndim > 1:
            raise ValueError(f"meshgrid: every input must be 1-D (or 0-D), but input {i} has "
                             f"shape {t.shape}")
        if t._data.dtype != ts[0]._data.dtype:
            raise ValueError(f"meshgrid: all inputs must share one dtype; input 0 is "
                             f"{ts[0].dtype} but input {i} is {t.dtype}")
    sizes = [t.size for t in ts]
    out = []
    for i, t in enumerate(ts):
        view = [1] * len(ts)
        view[i] = sizes[i]
        out.append(expand(reshape(t, view), sizes))
    return out


# ---------------------------------------------------------------- diagonals

def _diag_index(xp, rows, cols, offset):
    """Row and column indices of diagonal ``offset`` of a ``rows x cols`` matrix."""
    r0, c0 = builtins.max(-offset, 0), builtins.max(offset, 0)
    n = builtins.max(0, builtins.min(rows - r0, cols - c0))
    i = xp.arange(n)
    return i + r0, i + c0


# reading a diagonal and writing one into zeros are each other's adjoint
@op("diagonal", saves=(), grad=lambda M, x, out, g, offset: (
    M.op(_diag_put, g, offset=offset, shape=tuple(x.shape), pad=0),))
def _diag_take(x, offset):
    """Diagonal ``offset`` of the last two dims: [..., r, c] -> [..., L]."""
    shape = x.shape
    ri, ci = _diag_index(_xp(x), shape[-2], shape[-1], offset)
    return x[..., ri, ci], GRAD


@op("diag", saves=(), grad=lambda M, v, out, g, offset, shape, pad: (
    M.op(_diag_take, g, offset=offset),))
def _diag_put(v, offset, shape, pad):
    """A [..., r, c] array equal to ``pad`` except diagonal ``offset``, which holds ``v``."""
    xp = _xp(v)
    ri, ci = _diag_index(xp, shape[-2], shape[-1], offset)
    out = xp.full(shape, pad, dtype=v.dtype)
    out[..., ri, ci] = v
    return out, GRAD


def _offset_arg(offset, op):
    return _int_arg(offset, op, "offset")


def diag(x, offset=0, padding_value=0, name=None) -> Tensor:
    """Build a diagonal matrix from a 1-D tensor, or take a diagonal of a 2-D tensor.

    Args:
        x (Tensor): 0-D/1-D (builds a matrix) or 2-D (extracts a diagonal).
        offset (int): which diagonal: >0 above the main one, <0 below.
        padding_value (number): value off the diagonal when building a matrix.

    Returns:
        Tensor: 2-D for 1-D input (size ``len(x) + |offset|``), 1-D for 2-D input.

    Example:
        >>> paddle.diag(paddle.to_tensor([1, 2]), offset=1).shape
        [3, 3]
    """
    x = tensor_arg(x, "diag")
    k = _offset_arg(offset, "diag")
    pad = _scalar(padding_value, "diag", "padding_value")
    if x.ndim <= 1:
        from .manipulation import reshape

        v = reshape(x, [-1]) if x.ndim == 0 else x
        m = v.shape[0] + abs(k)
        return apply(_diag_put, v, offset=k, shape=(m, m), pad=pad)
    if x.ndim == 2:
        r, c = x.shape
        if not -r < k < c:
            raise ValueError(f"diag: offset {k} is out of range for a matrix of shape {x.shape};"
                             f" expected a value in [{-r + 1}, {c - 1}]")
        return apply(_diag_take, x, offset=k)
    raise ValueError(f"diag: x must be 0-D, 1-D or 2-D, got shape {x.shape}")


def diag_embed(input, offset=0, dim1=-2, dim2=-1) -> Tensor:  # noqa: A002  (Paddle's name)
    """Put the last dim of ``input`` on a diagonal of new dims ``dim1`` and ``dim2``.

    Args:
        input (Tensor): shape ``[..., n]``.
        offset (int): which diagonal (>0 above the main one).
        dim1 (int): output axis indexing the diagonal's rows.
        dim2 (int): output axis indexing its columns.

    Returns:
        Tensor: rank ``input.ndim + 1``, the new dims of size ``n + |offset|``.
    """
    from .manipulation import transpose

    x = tensor_arg(input, "diag_embed", "input")
    if x.ndim == 0:
        raise ValueError("diag_embed: input must have at least 1 dim, got a 0-D tensor")
    k = _offset_arg(offset, "diag_embed")
    nd = x.ndim + 1
    d1 = norm_axis(dim1, nd, "diag_embed", "dim1")
    d2 = norm_axis(dim2, nd, "diag_embed", "dim2")
    if d1 == d2:
        raise ValueError(f"diag_embed: dim1 ({dim1}) and dim2 ({dim2}) must be different dims "
                         f"of the {nd}-D output")
    m = x.shape[-1] + abs(k)
    y = apply(_diag_put, x, offset=k, shape=tuple(x.shape[:-1]) + (m, m), pad=0)
    batch = iter(range(nd - 2))
    perm = [nd - 2 if a == d1 else nd - 1 if a == d2 else next(batch) for a in range(nd)]
    if perm == list(range(nd)):
        return y
    return transpose(y, perm)


def diagflat(x, offset=0, name=None) -> Tensor:
    """A 2-D matrix with the flattened ``x`` on diagonal ``offset``.

    Args:
        x (Tensor): any shape.
        offset (int): which diagonal (>0 above the main one).

    Returns:
        Tensor: square matrix of size ``x.size + |offset|``.
    """
    from .manipulation import reshape

    x = tensor_arg(x, "diagflat")
    k = _offset_arg(offset, "diagflat")
    v = reshape(x, [-1]) if x.ndim != 1 else x
    m = v.shape[0] + abs(k)
    return apply(_diag_put, v, offset=k, shape=(m, m), pad=0)


# masking a triangle is its own adjoint
@op("tril_triu", saves=(), grad=lambda M, x, out, g, diagonal, lower: (
    M.op(_tri_kernel, g, diagonal=diagonal, lower=lower),))
def _tri_kernel(x, diagonal, lower):
    xp = _xp(x)
    r, c = x.shape[-2:]
    mask = xp.tri(r, c, diagonal, dtype=bool) if lower else \
        ~xp.tri(r, c, diagonal - 1, dtype=bool)
    return xp.where(mask, x, xp.zeros((), dtype=x.dtype)), GRAD


def _tri_args(x, diagonal, op):
    x = tensor_arg(x, op)
    if x.ndim < 2:
        raise ValueError(f"{op}: x must have at least 2 dims, got shape {x.shape}")
    return x, _int_arg(diagonal, op, "diagonal")


def tril(x, diagonal=0, name=None) -> Tensor:
    """The lower triangle of the last two dims (elements above ``diagonal`` set to 0).

    Args:
        x (Tensor): at least 2-D.
        diagonal (int): 0 keeps the main diagonal; >0 keeps more, <0 fewer.

    Returns:
        Tensor: same shape and dtype as x.
    """
    x, k = _tri_args(x, diagonal, "tril")
    return apply(_tri_kernel, x, diagonal=k, lower=True)


def triu(x, diagonal=0, name=None) -> Tensor:
    """The upper triangle of the last two dims (elements below ``diagonal`` set to 0).

    Args:
        x (Tensor): at least 2-D.
        diagonal (int): 0 keeps the main diagonal; >0 keeps fewer, <0 more.

    Returns:
        Tensor: same shape and dtype as x.
    """
    x, k = _tri_args(x, diagonal, "triu")
    return apply(_tri_kernel, x, diagonal=k, lower=False)


def tril_(x, diagonal=0, name=None) -> Tensor:
    """Inplace :func:`tril`; returns x."""
    x, k = _tri_args(x, diagonal, "tril_")
    check_inplace(x, "tril_")
    return apply_(_tri_kernel, x, diagonal=k, lower=True)


def triu_(x, diagonal=0, name=None) -> Tensor:
    """Inplace :func:`triu`; returns x."""
    x, k = _tri_args(x, diagonal, "triu_")
    check_inplace(x, "triu_")
    return apply_(_tri_kernel, x, diagonal=k, lower=False)


def _index_dtype(dtype, op):
    npd = _dt.to_np(dtype)
    if npd not in _INT_INDEX:
        raise TypeError(f"{op}: dtype must be int32 or int64, got {_dt.from_np(npd)}")
    return npd


def tril_indices(row, col, offset=0, dtype="int64") -> Tensor:
    """Coordinates of the lower triangle of a ``row x col`` matrix.

    Args:
        row (int): rows.
        col (int): columns.
        offset (int): diagonal offset (>0 includes diagonals above the main one).
        dtype (str|paddle.dtype): int32 or int64.

    Returns:
        Tensor: shape ``[2, N]`` (row indices, then column indices), row-major order.
    """
    return _tri_indices(row, col, offset, dtype, "tril_indices", True)


def triu_indices(row, col=None, offset=0, dtype="int64") -> Tensor:
    """Coordinates of the upper triangle of a ``row x col`` matrix.

    Args:
        row (int): rows.
        col (int, optional): columns (``row`` when None).
        offset (int): diagonal offset (>0 excludes diagonals above the main one).
        dtype (str|paddle.dtype): int32 or int64.

    Returns:
        Tensor: shape ``[2, N]``, row-major order.
    """
    return _tri_indices(row, row if col is None else col, offset, dtype, "triu_indices", False)


def _tri_indices(row, col, offset, dtype, op, lower):
    r = _int_arg(row, op, "row")
    c = _int_arg(col, op, "col")
    k = _int_arg(offset, op, "offset")
    if r < 0 or c < 0:
        raise ValueError(f"{op}: row and col must be non-negative, got {r}, {c}")
    npd = _index_dtype(dtype, op)
    xp = _xp_place()
    mask = xp.tri(r, c, k, dtype=bool) if lower else ~xp.tri(r, c, k - 1, dtype=bool)
    return _wrap(xp.stack(xp.nonzero(mask)).astype(npd).reshape(2, -1))


# ---------------------------------------------------------------- complex numbers

def _complex_of(npd):
    return np.dtype(np.complex128) if npd == np.float64 else np.dtype(np.complex64)


# building a complex number from parts and taking its parts are each other's adjoint (a part
# given as the Python scalar 0 is a constant)
@op("complex", saves=(), broadcast=True, grad=lambda M, re, im, out, g: (
    M.op(_real_kernel, g), M.op(_imag_kernel, g)))
def _complex_kernel(re, im):
    a = re if hasattr(re, "dtype") else im
    out = _xp(a).empty(np.broadcast_shapes(np.shape(re), np.shape(im)),
                       dtype=_complex_of(a.dtype))
    out.real = re
    out.imag = im
    return out, GRAD


@op("real", saves=(), grad=lambda M, z, out, g: (M.op(_complex_kernel, g, 0),))
def _real_kernel(z):
    return z.real.copy(), GRAD


@op("imag", saves=(), grad=lambda M, z, out, g: (M.op(_complex_kernel, 0, g),))
def _imag_kernel(z):
    return z.imag.copy(), GRAD


def _float_pair(a, b, op, names):
    from ._helpers import cast_to, result_type

    a = tensor_arg(a, op, names[0])
    b = tensor_arg(b, op, names[1])
    for t, n in ((a, names[0]), (b, names[1])):
        if t._data.dtype not in (np.float32, np.float64):
            raise TypeError(f"{op}: '{n}' must be float32 or float64, got {t.dtype}")
    if a._data.dtype != b._data.dtype:
        common = result_type(a._data.dtype, b._data.dtype)
        a, b = cast_to(a, common), cast_to(b, common)
    try:
        np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    except ValueError:
        raise ValueError(f"{op}: shapes {a.shape} and {b.shape} cannot be broadcast") from None
    return a, b


def complex(real, imag, name=None) -> Tensor:  # noqa: A001  (Paddle's name)
    """A complex tensor ``real + 1j * imag`` (broadcasting); differentiable.

    Args:
        real (Tensor): float32 or float64 real parts.
        imag (Tensor): imaginary parts, same dtype.

    Returns:
        Tensor: complex64 (from float32) or complex128 (from float64).
    """
    re, im = _float_pair(real, imag, "complex", ("real", "imag"))
    return apply(_complex_kernel, re, im)


def _polar_grad(M, r, theta, out, g):
    gr, gi = M.op(_real_kernel, g), M.op(_imag_kernel, g)
    c, s = M.cos(theta), M.sin(theta)
    return gr * c + gi * s, r * (gi * c - gr * s)


@op("polar", broadcast=True, grad=_polar_grad)
def _polar_kernel(r, theta):
    xp = _xp(r)
    c, s = xp.cos(theta), xp.sin(theta)
    shape = np.broadcast_shapes(r.shape, theta.shape)
    out = xp.empty(shape, dtype=_complex_of(r.dtype))
    out.real = r * c
    out.imag = r * s
    return out, GRAD


def polar(abs, angle, name=None) -> Tensor:  # noqa: A002  (Paddle's names)
    """The complex tensor ``abs * (cos(angle) + 1j * sin(angle))``; differentiable.

    Args:
        abs (Tensor): magnitudes, float32 or float64.
        angle (Tensor): angles in radians, same dtype.

    Returns:
        Tensor: complex64 or complex128.
    """
    r, theta = _float_pair(abs, angle, "polar", ("abs", "angle"))
    return apply(_polar_kernel, r, theta)


# ---------------------------------------------------------------- vander

def _vander_powers(xp, n, increasing):
    p = xp.arange(n, dtype=np.int64)
    return p if increasing else p[::-1]


def _vander_grad(M, x, out, g, n, increasing):
    # d x**p / dx = p * x**(p - 1), with the p = 0 column contributing nothing
    xv = M.value(x)
    p = _vander_powers(_xp(xv), n, increasing)
    pm1 = M.const(_xp(xv).maximum(p - 1, 0).astype(xv.dtype))
    d = M.const(p.astype(xv.dtype)) * M.reshape(x, [-1, 1]) ** pm1
    return (M.sum(g * d, axis=1),)


@op("vander", grad=_vander_grad)
def _vander_kernel(x, n, increasing):
    p = _vander_powers(_xp(x), n, increasing)
    out = x[:, None] ** p.astype(x.dtype) if x.dtype.kind in "fc" else x[:, None] ** p
    return out.astype(x.dtype, copy=False), GRAD


def vander(x, n=None, increasing=False, name=None) -> Tensor:
    """The Vandermonde matrix of a 1-D tensor.

    Column j is ``x ** (n - 1 - j)`` (or ``x ** j`` when ``increasing``).

    Args:
        x (Tensor): 1-D input.
        n (int, optional): number of columns (``len(x)`` when None).
        increasing (bool): powers increase left to right.

    Returns:
        Tensor: shape ``[len(x), n]``, x's dtype.
    """
    x = tensor_arg(x, "vander")
    if x.ndim != 1:
        raise ValueError(f"vander: x must be a 1-D tensor, got shape {x.shape}")
    n = x.shape[0] if n is None else _int_arg(n, "vander", "n")
    if n < 0:
        raise ValueError(f"vander: 'n' must be non-negative, got {n}")
    if x._data.dtype.kind == "b":
        raise TypeError("vander: bool input is not supported")
    return apply(_vander_kernel, x, n=n, increasing=bool(increasing))


# ---------------------------------------------------------------- inplace fills

@op("fill", saves=(), grad=lambda M, x, out, g, value: (M.zeros_like(g),))
def _fill_kernel(x, value):
    return _xp(x).full(x.shape, value, dtype=x.dtype), GRAD


def fill_(x, value) -> Tensor:
    """Set every element of ``x`` to ``value`` in place (Tensor method); returns x.

    Args:
        x (Tensor): the tensor to fill.
        value (number|Tensor): the value, converted to x's dtype.

    Returns:
        Tensor: x.
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"fill_: x must be a Tensor, got {type(x).__name__}")
    v = _scalar(value, "fill_", "value")
    check_inplace(x, "fill_")
    if x._data.dtype.kind in "iu" and isinstance(v, float):
        v = int(v)
    return apply_(_fill_kernel, x, value=v)


def zero_(x) -> Tensor:
    """Set every element of ``x`` to zero in place (Tensor method); returns x."""
    return fill_(x, 0)


API = ["to_tensor", "assign", "clone", "full", "zeros", "ones", "empty", "full_like",
       "zeros_like", "ones_like", "empty_like", "arange", "eye", "linspace", "logspace",
       "meshgrid", "diag", "diag_embed", "diagflat", "tril", "triu", "tril_", "triu_",
       "tril_indices", "triu_indices", "complex", "polar", "vander"]
METHODS = ["clone", "diag", "diag_embed", "diagflat", "tril", "triu", "tril_", "triu_", "polar",
           "vander", "fill_", "zero_"]
