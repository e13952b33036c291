"""Searching, sorting and selection (Paddle's ``tensor/search.py``).

Index outputs are int64 (or the requested int dtype) with ``stop_gradient=True``. Value outputs
(sort, topk, kthvalue, mode, masked_select, where) are differentiable: they are a gather of the
input at computed positions, whose gradient scatters back; gather and scatter are each other's
higher-order rule. Sorting is stable and puts NaN last (first when descending), as NumPy does.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..backend import get_array_module as _xp
from ..framework import dtype as _dt
from ..framework.op import GRAD, apply, apply_, check_inplace, op
from ..framework.random import generator, local_generator
from ..framework.tensor import Tensor, _wrap
from ._helpers import cast_to, check_kinds, int_arg, norm_axis, number_arg, result_type, tensor_arg

__all__ = []

_INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


def _int(v, op, arg):
    # an int given as a number, a NumPy scalar or a one-element Tensor
    return int_arg(number_arg(v, op, arg), op, arg)


_I64 = np.dtype(np.int64)


def _index_dtype(dtype, op):
    if type(dtype) is str and dtype == "int64":  # the default, without a dtype lookup
        return _I64
    npd = _dt.to_np(dtype)
    if npd not in _INDEX_DTYPES:
        raise ValueError(f"{op}: dtype must be int32 or int64, got {_dt.from_np(npd)}")
    return npd


# ---------------------------------------------------------------- gather / scatter pair

# gathering along an axis and scattering into zeros are each other's adjoint
@op("take_along_axis", saves=(), grad=lambda M, x, out, g, idx, axis: (
    M.op(_scatter_along, g, idx=idx, axis=axis, shape=tuple(x.shape)),))
def _take_along(x, idx, axis):
    """``take_along_axis(x, idx, axis)``; idx holds distinct positions along ``axis``."""
    return _xp(x).take_along_axis(x, idx, axis), GRAD


def _put_along(res, idx, g, axis):
    """put_along_axis for array modules without it (CuPy), through broadcast index grids."""
    xp = _xp(res)
    nd = idx.ndim
    grids = [xp.arange(n).reshape([n if d == i else 1 for d in range(nd)])
             for i, n in enumerate(idx.shape)]
    grids[axis] = idx
    res[tuple(grids)] = g


@op("scatter_along_axis", saves=(), grad=lambda M, g, out, gg, idx, axis, shape: (
    M.op(_take_along, gg, idx=idx, axis=axis),))
def _scatter_along(g, idx, axis, shape):
    """Zeros of ``shape`` with ``g`` written at ``idx`` along ``axis`` (the gather's adjoint)."""
    xp = _xp(g)
    res = xp.zeros(shape, dtype=g.dtype)
    if xp is np:
        np.put_along_axis(res, idx, g, axis)
    else:
        _put_along(res, idx, g, axis)
    return res, GRAD


def _gather(x: Tensor, idx, axis: int) -> Tensor:
    """Differentiable gather of x at index array ``idx`` along ``axis``."""
    return apply(_take_along, x, idx=idx, axis=axis)


# ---------------------------------------------------------------- sorting core

def _argsort(a, axis, descending):
    """Stable argsort; NaN last ascending and first descending (Paddle's order)."""
    xp = _xp(a)
    kw = {"kind": "stable"} if xp is np else {}
    if a.dtype == _dt.BFLOAT16_NP:
        a = a.astype(np.float32)
    if not descending:
        return xp.argsort(a, axis=axis, **kw)
    if a.dtype.kind in "biu":
        # ~a reverses the order of every integer dtype without overflow (and negates bools)
        return xp.argsort(~a, axis=axis, **kw)
    idx = xp.argsort(-a, axis=axis, **kw)
    if a.dtype.kind in "fc" and bool(xp.isnan(a).any()):
        # a second stable pass by "is not NaN" moves NaNs to the front, keeping the rest
        notnan = xp.take_along_axis(~xp.isnan(a), idx, axis)
        idx = xp.take_along_axis(idx, xp.argsort(notnan, axis=axis, **kw), axis)
    return idx


def _sortable(x, op):
    if x._data.dtype.kind == "b":
        raise TypeError(f"{op}: bool tensors cannot be sorted; cast x to an integer dtype")
    if x._data.dtype.kind == "c":
        raise TypeError(f"{op}: complex tensors cannot be sorted")
    return x


def argsort(x, axis=-1, descending=False, name=None) -> Tensor:
    """Indices that sort x along ``axis`` (stable; NaN last, or first when descending).

    Args:
        x (Tensor): input.
        axis (int): the axis to sort.
        descending (bool): sort from largest to smallest.

    Returns:
        Tensor: int64 indices, x's shape.

    Example:
        >>> paddle.argsort(paddle.to_tensor([3., 1., 2.]))  # [1, 2, 0]
    """
    x = _sortable(tensor_arg(x, "argsort"), "argsort")
    ax = norm_axis(axis, x.ndim, "argsort")
    if x.ndim == 0:
        return _wrap(_xp(x._data).zeros((), dtype=np.int64))
    return _wrap(_argsort(x._data, ax, descending).astype(np.int64, copy=False))


def sort(x, axis=-1, descending=False, name=None) -> Tensor:
    """x sorted along ``axis`` (stable; NaN last, or first when descending); differentiable.

    Args:
        x (Tensor): input.
        axis (int): the axis to sort.
        descending (bool): sort from largest to smallest.

    Returns:
        Tensor: the sorted values.
    """
    from .creation import clone

    x = _sortable(tensor_arg(x, "sort"), "sort")
    ax = norm_axis(axis, x.ndim, "sort")
    if x.ndim == 0:
        return clone(x)
    return _gather(x, _argsort(x._data, ax, descending), ax)


def topk(x, k, axis=None, largest=True, sorted=True, name=None):  # noqa: A002
    """The k largest (or smallest) values along ``axis`` and their indices.

    Ties keep their input order; NaN counts as the largest value.

    Args:
        x (Tensor): input.
        k (int|Tensor): how many.
        axis (int, optional): the axis (last when None).
        largest (bool): the largest (True) or the smallest values.
        sorted (bool): results are always sorted (accepted for compatibility).

    Returns:
        tuple[Tensor, Tensor]: values (differentiable) and int64 indices.
    """
    x = _sortable(tensor_arg(x, "topk"), "topk")
    k = _int(k, "topk", "k")
    ax = norm_axis(-1 if axis is None else axis, x.ndim, "topk")
    n = x.shape[ax] if x.ndim else 1
    if not 1 <= k <= n:
        raise ValueError(f"topk: k ({k}) must be in [1, {n}] (the size of axis {ax} of x with "
                         f"shape {x.shape})")
    xp = _xp(x._data)
    if x.ndim == 0:
        from .creation import clone

        return clone(x), _wrap(xp.zeros((), dtype=np.int64))
    idx = _topk_partition(x._data, k, ax, largest) if 8 * k <= n else None
    if idx is None:
        idx = xp.take(_argsort(x._data, ax, largest), xp.arange(k), axis=ax)
    return _gather(x, idx, ax), _wrap(idx.astype(np.int64, copy=False))


def _topk_partition(a, k, ax, largest):
    """top-k indices in O(n) + O(k log k) per slice, with the same tie order as a full stable
    sort (equal values in input order). None when it does not apply (NaN present, CuPy)."""
    if _xp(a) is not np or a.dtype.kind not in "iuf" or a.dtype == _dt.BFLOAT16_NP:
        return None
    if a.dtype.kind == "f" and np.isnan(a).any():
        return None
    m = np.moveaxis(a, ax, -1)
    n = m.shape[-1]
    t = np.partition(m, n - k if largest else k - 1, axis=-1)[..., n - k if largest else k - 1]
    t = t[..., None]
    better = m > t if largest else m < t
    tie = m == t
    need = k - better.sum(axis=-1, keepdims=True)
    chosen = better | (tie & (np.cumsum(tie, axis=-1) <= need))
    # exactly k chosen per slice; row-major nonzero keeps them in input order
    pos = np.nonzero(chosen.reshape(-1, n))[1].reshape(m.shape[:-1] + (k,))
    vals = np.take_along_axis(m, pos, -1)
    order = _argsort(vals, -1, largest)
    return np.moveaxis(np.take_along_axis(pos, order, -1), -1, ax)


def _squeeze_pick(x, idx, ax, keepdim):
    """Gather one position per slice (idx has size 1 along ax) and drop ax unless keepdim."""
    from .manipulation import reshape

    vals = _gather(x, idx, ax)
    ind = idx.astype(np.int64, copy=False)
    if not keepdim:
        shape = [s for i, s in enumerate(x.shape) if i != ax]
        vals = reshape(vals, shape)
        ind = ind.reshape(shape)
    return vals, _wrap(ind)


def kthvalue(x, k, axis=None, keepdim=False, name=None):
    """The k-th smallest value along ``axis`` and its index.

    Args:
        x (Tensor): input.
        k (int): 1-based rank.
        axis (int, optional): the axis (last when None).
        keepdim (bool): keep the reduced axis with size 1.

    Returns:
        tuple[Tensor, Tensor]: values (differentiable) and int64 indices.
    """
    x = _sortable(tensor_arg(x, "kthvalue"), "kthvalue")
    k = _int(k, "kthvalue", "k")
    ax = norm_axis(-1 if axis is None else axis, x.ndim, "kthvalue")
    if x.ndim == 0:
        if k != 1:
            raise ValueError(f"kthvalue: k ({k}) must be 1 for a 0-D tensor")
        from .creation import clone

        return clone(x), _wrap(_xp(x._data).zeros((), dtype=np.int64))
    n = x.shape[ax]
    if not 1 <= k <= n:
        raise ValueError(f"kthvalue: k ({k}) must be in [1, {n}] (the size of axis {ax} of x "
                         f"with shape {x.shape})")
    xp = _xp(x._data)
    idx = xp.take(_argsort(x._data, ax, False), xp.asarray([k - 1]), axis=ax)
    return _squeeze_pick(x, idx, ax, keepdim)


def mode(x, axis=-1, keepdim=False, name=None):
    """The most frequent value along ``axis`` (the smallest on ties) and its last index.

    Args:
        x (Tensor): input.
        axis (int): the axis.
        keepdim (bool): keep the reduced axis with size 1.

    Returns:
        tuple[Tensor, Tensor]: values (differentiable) and int64 indices.
    """
    x = _sortable(tensor_arg(x, "mode"), "mode")
    ax = norm_axis(axis, x.ndim, "mode")
    xp = _xp(x._data)
    if x.ndim == 0:
        from .creation import clone

        return clone(x), _wrap(xp.zeros((), dtype=np.int64))
    n = x.shape[ax]
    if n == 0:
        raise ValueError(f"mode: axis {ax} of x (shape {x.shape}) is empty")
    a = xp.moveaxis(x._data, ax, -1).reshape(-1, n)
    rows = a.shape[0]
    order = _argsort(a, 1, False)
    s = xp.take_along_axis(a, order, 1)
    start = xp.ones(s.shape, dtype=bool)
    start[:, 1:] = s[:, 1:] != s[:, :-1]
    # run ids over the flattened rows (every row begins a run); counts per run via bincount
    run = xp.cumsum(start.ravel()) - 1
    counts = xp.bincount(run)[run].reshape(rows, n)
    first = xp.argmax(counts, axis=1)  # the first run reaching the max: the smallest value
    r = xp.arange(rows)
    end = first + counts[r, first] - 1  # its last position: the largest original index
    pos = order[r, end]
    out_shape = list(x.shape[:ax]) + list(x.shape[ax + 1:])
    idx = xp.expand_dims(pos.reshape(out_shape), ax)
    return _squeeze_pick(x, idx, ax, keepdim)


# ---------------------------------------------------------------- argmax / argmin

def _arg_extreme(x, axis, keepdim, dtype, op, largest):
    if type(x) is not Tensor:
        x = tensor_arg(x, op)
    npd = _index_dtype(dtype, op)
    a = x._data
    if a.size == 0:
        raise ValueError(f"{op}: x must not be empty, got shape {x.shape}")
    xp = _xp(a)
    if a.dtype == _dt.BFLOAT16_NP:
        a = a.astype(np.float32)
    if axis is None:
        flat = a.reshape(-1)
        res = _nan_skipping_arg(xp, flat, 0, largest)
        if keepdim:
            res = res.reshape([1] * x.ndim)
        return _wrap(xp.asarray(res).astype(npd))
    ax = norm_axis(axis, a.ndim, op)
    if a.ndim == 0:
        return _wrap(xp.zeros((), dtype=npd))
    res = _nan_skipping_arg(xp, a, ax, largest)
    if keepdim:
        res = xp.expand_dims(res, ax)
    return _wrap(xp.asarray(res).astype(npd, copy=False))


def _nan_skipping_arg(xp, a, ax, largest):
    """arg max/min where NaN never wins (Paddle's comparison-based kernels skip it)."""
    # array methods (NumPy and CuPy) rather than xp.argmax: no dispatch layer per call
    if a.dtype.kind not in "fc" or not bool(xp.isnan(a).any()):
        return xp.asarray(a.argmax(axis=ax) if largest else a.argmin(axis=ax))
    b = xp.where(xp.isnan(a), -np.inf if largest else np.inf, a)
    return xp.asarray(b.argmax(axis=ax) if largest else b.argmin(axis=ax))


def argmax(x, axis=None, keepdim=False, dtype="int64", name=None) -> Tensor:
    """Index of the largest value (over all elements when ``axis`` is None: a 0-D result).

    Args:
        x (Tensor): input (not empty).
        axis (int, optional): the axis; the flattened tensor when None.
        keepdim (bool): keep the reduced axis (all axes with size 1 when axis is None).
        dtype (str|paddle.dtype): int32 or int64.

    Returns:
        Tensor: the indices.
    """
    return _arg_extreme(x, axis, keepdim, dtype, "argmax", True)


def argmin(x, axis=None, keepdim=False, dtype="int64", name=None) -> Tensor:
    """Index of the smallest value (over all elements when ``axis`` is None: a 0-D result).

    Args:
        x (Tensor): input (not empty).
        axis (int, optional): the axis; the flattened tensor when None.
        keepdim (bool): keep the reduced axis (all axes with size 1 when axis is None).
        dtype (str|paddle.dtype): int32 or int64.

    Returns:
        Tensor: the indices.
    """
    return _arg_extreme(x, axis, keepdim, dtype, "argmin", False)


# ---------------------------------------------------------------- selection

def nonzero(x, as_tuple=False):
    """Coordinates of the non-zero elements of x.

    Args:
        x (Tensor): at least 1-D.
        as_tuple (bool): return one ``[N, 1]`` tensor per dim instead of one ``[N, ndim]``.

    Returns:
        Tensor|tuple[Tensor]: int64 coordinates in row-major order.
    """
    x = tensor_arg(x, "nonzero")
    if x.ndim == 0:
        raise ValueError("nonzero: x must have at least 1 dim, got a 0-D tensor")
    xp = _xp(x._data)
    coords = xp.stack(xp.nonzero(x._data), axis=1).astype(np.int64, copy=False)
    if as_tuple:
        return tuple(_wrap(xp.ascontiguousarray(coords[:, i:i + 1])) for i in range(x.ndim))
    return _wrap(coords)


def masked_select(x, mask, name=None) -> Tensor:
    """The elements of x where ``mask`` is True, as a 1-D tensor (x and mask broadcast).

    Args:
        x (Tensor): input.
        mask (Tensor): bool mask.

    Returns:
        Tensor: 1-D, differentiable with respect to x.
    """
    from .manipulation import expand, reshape

    x = tensor_arg(x, "masked_select")
    mask = tensor_arg(mask, "masked_select", "mask")
    if mask._data.dtype.kind != "b":
        raise TypeError(f"masked_select: mask must be a bool tensor, got {mask.dtype}")
    try:
        shape = list(np.broadcast_shapes(tuple(x.shape), tuple(mask.shape)))
    except ValueError:
        raise ValueError(f"masked_select: x (shape {x.shape}) and mask (shape {mask.shape}) "
                         "cannot be broadcast") from None
    xp = _xp(x._data)
    if x.shape != shape:
        x = expand(x, shape)
    m = xp.broadcast_to(mask._data, shape).reshape(-1)
    return _gather(reshape(x, [-1]), xp.flatnonzero(m), 0)


def _routed(M, c, g):
    """The gradients of ``where(c, x, y)``: g where c holds for x, g elsewhere for y."""
    return M.where(c, g, 0), M.where(c, 0, g)


@op("where", saves=(0,), broadcast=True, grad=lambda M, c, x, y, out, g: (
    None, *_routed(M, c, g)))
def _where_kernel(c, x, y):
    return _xp(x).where(c, x, y), GRAD


def _where_inplace_grad(M, x, c, y, out, g):
    gx, gy = _routed(M, c, g)
    return gx, None, gy


@op("where", saves=(1,), broadcast=True, grad=_where_inplace_grad)
def _where_inplace_kernel(x, c, y):
    return _xp(x).where(c, x, y), GRAD


def _where_operands(condition, x, y, op):
    cond = tensor_arg(condition, op, "condition")
    if cond._data.dtype.kind != "b":
        cond = _wrap(cond._data.astype(bool))
    tx, ty = isinstance(x, Tensor), isinstance(y, Tensor)
    if not tx and not ty:
        xs = tensor_arg(x, op, "x")
        ys = tensor_arg(y, op, "y")
        if xs._data.dtype != ys._data.dtype:
            t = result_type(xs._data.dtype, ys._data.dtype)
            xs, ys = _wrap(xs._data.astype(t)), _wrap(ys._data.astype(t))
        return cond, xs, ys
    if not tx:
        x = _scalar_like(x, y, op, "x")
    elif not ty:
        y = _scalar_like(y, x, op, "y")
    if x._data.dtype != y._data.dtype:
        t = result_type(x._data.dtype, y._data.dtype)
        x, y = cast_to(x, t), cast_to(y, t)
    try:
        np.broadcast_shapes(tuple(cond.shape), tuple(x.shape), tuple(y.shape))
    except ValueError:
        raise ValueError(f"{op}: condition (shape {cond.shape}), x (shape {x.shape}) and y "
                         f"(shape {y.shape}) cannot be broadcast together") from None
    return cond, x, y


def _scalar_like(s, t: Tensor, op, arg):
    """A Python number meeting tensor ``t``: it takes t's dtype (a float lifts ints to float)."""
    xp = _xp(t._data)
    if isinstance(s, np.generic):
        s = s.item()
    if not isinstance(s, numbers.Number) and not isinstance(s, (list, tuple, np.ndarray)):
        raise TypeError(f"{op}: '{arg}' must be a Tensor or a number, got {type(s).__name__}")
    if not isinstance(s, numbers.Number):
        return tensor_arg(s, op, arg)
    npd = t._data.dtype
    if isinstance(s, float) and npd.kind in "biu":
        npd = _dt.default_np()
    elif isinstance(s, complex) and npd.kind != "c":
        npd = np.dtype(np.complex64)
    elif isinstance(s, int) and not isinstance(s, bool) and npd.kind == "b":
        npd = np.dtype(np.int64)
    return _wrap(xp.asarray(s, dtype=npd))


def where(condition, x=None, y=None, name=None):
    """Pick from ``x`` where ``condition`` is True and from ``y`` elsewhere (broadcasting).

    With only ``condition``, returns ``nonzero(condition, as_tuple=True)``. A Python number for
    x or y takes the other operand's dtype.

    Args:
        condition (Tensor): bool mask.
        x (Tensor|number, optional): values where True.
        y (Tensor|number, optional): values where False.

    Returns:
        Tensor: the broadcast result, differentiable with respect to x and y.

    Example:
        >>> x = paddle.to_tensor([1., -2., 3.])
        >>> paddle.where(x > 0, x, 0.)  # [1., 0., 3.]
    """
    if x is None and y is None:
        return nonzero(condition, as_tuple=True)
    if x is None or y is None:
        raise ValueError("where: x and y must both be given, or both be None")
    if isinstance(x, Tensor) and isinstance(y, Tensor) and x._data.dtype != y._data.dtype:
        check_kinds(x._data.dtype, y._data.dtype, "where")
    cond, x, y = _where_operands(condition, x, y, "where")
    return apply(_where_kernel, cond, x, y)


def where_(condition, x=None, y=None, name=None):
    """Inplace :func:`where`: the result is written into ``x``, which is returned.

    Args:
        condition (Tensor): bool mask, broadcastable to x.
        x (Tensor): values where True; receives the result.
        y (Tensor|number): values where False.

    Returns:
        Tensor: x.
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"where_: x must be a Tensor, got {type(x).__name__}")
    if y is None:
        raise ValueError("where_: y must be given")
    check_inplace(x, "where_")
    cond, xx, yy = _where_operands(condition, x, y, "where_")
    if xx is not x:
        yy = cast_to(yy, x._data.dtype)
    return apply_(_where_inplace_kernel, x, cond, yy)


# ---------------------------------------------------------------- binary search

def _merged_searchsorted(xp, seq, vals, right):
    """Row-wise searchsorted for seq ``[R, M]`` and values ``[R, K]`` with three stable sorts.

    Sorting all elements by (row, value, kind) puts each value after exactly the sequence
    elements of its row that precede it; counting those gives the insertion index.
    """
    rows, m = seq.shape
    k = vals.shape[1]
    t = result_type(seq.dtype, vals.dtype)
    allv = xp.concatenate([seq.astype(t).reshape(-1), vals.astype(t).reshape(-1)])
    row = xp.concatenate([xp.repeat(xp.arange(rows), m), xp.repeat(xp.arange(rows), k)])
    is_seq = xp.concatenate([xp.ones(rows * m, dtype=bool), xp.zeros(rows * k, dtype=bool)])
    # kind key: with side='left' a value sorts before equal sequence elements
    kind = is_seq if not right else ~is_seq
    kw = {"kind": "stable"} if xp is np else {}
    order = xp.argsort(kind, **kw)
    order = order[xp.argsort(allv[order], **kw)]
    order = order[xp.argsort(row[order], **kw)]
    seq_before = xp.cumsum(is_seq[order]) - is_seq[order]
    pos = xp.empty_like(seq_before)
    pos[order] = seq_before
    res = pos[rows * m:].reshape(rows, k) - xp.arange(rows)[:, None] * m
    return res


def searchsorted(sorted_sequence, values, out_int32=False, right=False, name=None) -> Tensor:
    """Insertion indices of ``values`` into ``sorted_sequence`` (as ``numpy.searchsorted``).

    Args:
        sorted_sequence (Tensor): 1-D, or N-D sorted along the last dim with leading dims
            equal to those of ``values``.
        values (Tensor): the values to place.
        out_int32 (bool): int32 output instead of int64.
        right (bool): place after equal elements (NumPy's ``side='right'``).

    Returns:
        Tensor: indices with ``values``' shape.
    """
    seq = tensor_arg(sorted_sequence, "searchsorted", "sorted_sequence")
    vals = tensor_arg(values, "searchsorted", "values")
    npd = np.dtype(np.int32) if out_int32 else np.dtype(np.int64)
    s, v = seq._data, vals._data
    xp = _xp(s)
    if seq.ndim == 0:
        raise ValueError("searchsorted: sorted_sequence must have at least 1 dim")
    if s.dtype == _dt.BFLOAT16_NP or v.dtype == _dt.BFLOAT16_NP:
        s, v = s.astype(np.float32), v.astype(np.float32)
    side = "right" if right else "left"
    if seq.ndim == 1:
        if s.dtype != v.dtype:
            t = result_type(s.dtype, v.dtype)
            s, v = s.astype(t), v.astype(t)
        return _wrap(xp.asarray(xp.searchsorted(s, v, side=side)).astype(npd))
    if vals.ndim != seq.ndim or seq.shape[:-1] != vals.shape[:-1]:
        raise ValueError(f"searchsorted: the leading dims of sorted_sequence (shape "
                         f"{seq.shape}) and values (shape {vals.shape}) must match")
    m = seq.shape[-1]
    res = _merged_searchsorted(xp, s.reshape(-1, m), v.reshape(-1, vals.shape[-1]), right)
    return _wrap(res.reshape(v.shape).astype(npd))


def bucketize(x, sorted_sequence, out_int32=False, right=False, name=None) -> Tensor:
    """Bucket index of each element of x among 1-D ``sorted_sequence`` boundaries.

    Args:
        x (Tensor): values.
        sorted_sequence (Tensor): 1-D sorted boundaries.
        out_int32 (bool): int32 output instead of int64.
        right (bool): place after equal boundaries.

    Returns:
        Tensor: indices with x's shape (as ``numpy.searchsorted``).
    """
    seq = tensor_arg(sorted_sequence, "bucketize", "sorted_sequence")
    if seq.ndim != 1:
        raise ValueError(f"bucketize: sorted_sequence must be 1-D, got shape {seq.shape}")
    return searchsorted(seq, x, out_int32=out_int32, right=right)


# ---------------------------------------------------------------- unique

def _rows_view(a, axis):
    """a with ``axis`` first and the rest flattened: [n, rest]."""
    xp = _xp(a)
    moved = xp.moveaxis(a, axis, 0)
    rest = int(np.prod(moved.shape[1:], dtype=np.int64))
    return moved.reshape(moved.shape[0], rest), moved.shape


def unique(x, return_index=False, return_inverse=False, return_counts=False, axis=None,
           dtype="int64", name=None):
    """The sorted unique elements of x (or unique slices along ``axis``).

    Args:
        x (Tensor): input (may be empty).
        return_index (bool): also return the index of each unique value's first occurrence.
        return_inverse (bool): also return, per input element, its unique value's index.
        return_counts (bool): also return how often each unique value occurs.
        axis (int, optional): unique slices along this axis; the flattened x when None.
        dtype (str|paddle.dtype): int32 or int64 for the index outputs.

    Returns:
        Tensor|tuple[Tensor]: ``out`` alone, or ``(out, index?, inverse?, counts?)``.
    """
    x = tensor_arg(x, "unique")
    npd = _index_dtype(dtype, "unique")
    a = x._data
    xp = _xp(a)
    if axis is None:
        flat = a.reshape(-1)
        if xp is not np and flat.dtype == _dt.BFLOAT16_NP:
            # CuPy cannot sort bfloat16: sort the (exact) float32 values, cast back
            flat = flat.astype(np.float32)
        res = xp.unique(flat, return_index=True, return_inverse=True, return_counts=True)
        out, index, inverse, counts = res
        out = out.astype(a.dtype, copy=False)
        inverse = inverse.reshape(-1)
    else:
        ax = norm_axis(axis, x.ndim, "unique")
        rows, moved_shape = _rows_view(a, ax)
        n = rows.shape[0]
        if n == 0:
            out = a
            index = inverse = counts = xp.zeros(0, dtype=np.int64)
        else:
            # lexicographic order of the rows (lexsort's primary key is its last one), then
            # boundaries where a row differs from the previous one
            keys = rows.astype(np.float32) if rows.dtype == _dt.BFLOAT16_NP else rows
            order = xp.lexsort(keys.T[::-1]) if keys.shape[1] else xp.arange(n)
            srt = rows[order]
            new = xp.ones(n, dtype=bool)
            if n > 1:
                new[1:] = (srt[1:] != srt[:-1]).any(axis=1)
            group = xp.cumsum(new) - 1
            starts = xp.flatnonzero(new)
            index = order[starts]
            counts = xp.diff(xp.concatenate([starts, xp.asarray([n])]))
            inverse = xp.empty(n, dtype=np.int64)
            inverse[order] = group
            uniq = srt[starts].reshape((len(starts),) + tuple(moved_shape[1:]))
            out = xp.moveaxis(uniq, 0, ax)
    out = _wrap(xp.ascontiguousarray(out))
    extra = []
    if return_index:
        extra.append(_wrap(index.astype(npd)))
    if return_inverse:
        extra.append(_wrap(inverse.astype(npd)))
    if return_counts:
        extra.append(_wrap(counts.astype(npd)))
    return (out, *extra) if extra else out


def unique_consecutive(x, return_inverse=False, return_counts=False, axis=None, dtype="int64",
                       name=None):
    """Collapse runs of equal consecutive elements (or slices along ``axis``).

    Args:
        x (Tensor): input.
        return_inverse (bool): also return, per input element, the index of its run.
        return_counts (bool): also return each run's length.
        axis (int, optional): compare slices along this axis; the flattened x when None.
        dtype (str|paddle.dtype): int32 or int64 for the index outputs.

    Returns:
        Tensor|tuple[Tensor]: ``out`` alone, or ``(out, inverse?, counts?)``.
    """
    x = tensor_arg(x, "unique_consecutive")
    npd = _index_dtype(dtype, "unique_consecutive")
    a = x._data
    xp = _xp(a)
    if axis is None:
        rows = a.reshape(-1, 1)
        ax = None
    else:
        ax = norm_axis(axis, x.ndim, "unique_consecutive")
        rows, moved_shape = _rows_view(a, ax)
    n = rows.shape[0]
    new = xp.ones(n, dtype=bool)
    if n > 1:
        new[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    starts = xp.flatnonzero(new)
    if ax is None:
        out = a.reshape(-1)[starts]
    else:
        uniq = rows[starts].reshape((len(starts),) + tuple(moved_shape[1:]))
        out = xp.ascontiguousarray(xp.moveaxis(uniq, 0, ax))
    extra = []
    if return_inverse:
        extra.append(_wrap((xp.cumsum(new) - 1).astype(npd)))
    if return_counts:
        extra.append(_wrap(xp.diff(xp.concatenate([starts, xp.asarray([n])])).astype(npd)))
    out = _wrap(out)
    return (out, *extra) if extra else out


# ---------------------------------------------------------------- sampling

def top_p_sampling(x, ps, threshold=None, seed=None, name=None):
    """Nucleus (top-p) sampling: one token per row from the smallest set of the most likely
    tokens whose probabilities reach ``ps``.

    Args:
        x (Tensor): ``[batch, vocab]`` probabilities.
        ps (Tensor): ``[batch]`` (or ``[batch, 1]``) top-p thresholds in (0, 1].
        threshold (Tensor, optional): ``[batch]`` minimum probability a token needs (the most
            likely token is always kept).
        seed (int, optional): a fixed seed for this call (None or -1: the global generator).

    Returns:
        tuple[Tensor, Tensor]: the sampled probabilities ``[batch, 1]`` and int64 token ids
        ``[batch, 1]``.
    """
    x = tensor_arg(x, "top_p_sampling")
    if x.ndim != 2:
        raise ValueError(f"top_p_sampling: x must be 2-D [batch, vocab], got shape {x.shape}")
    b, v = x.shape
    if v == 0:
        raise ValueError("top_p_sampling: x has an empty vocabulary")
    ps = tensor_arg(ps, "top_p_sampling", "ps")
    if ps.size != b:
        raise ValueError(f"top_p_sampling: ps must have one value per row ({b}), got shape "
                         f"{ps.shape}")
    a = x._data.astype(np.float64)
    xp = _xp(a)
    p = ps._data.astype(np.float64).reshape(b, 1)
    order = _argsort(a, 1, True)
    srt = xp.take_along_axis(a, order, 1)
    before = xp.cumsum(srt, axis=1) - srt  # mass of the more likely tokens
    keep = before < p
    if threshold is not None:
        th = tensor_arg(threshold, "top_p_sampling", "threshold")._data.astype(np.float64)
        keep &= srt >= th.reshape(b, 1)
    keep[:, 0] = True
    w = xp.where(keep, srt, 0.0)
    cdf = xp.cumsum(w, axis=1)
    cdf = cdf / cdf[:, -1:]
    cdf[:, -1] = 1.0
    s = _int(seed, "top_p_sampling", "seed") if seed is not None else -1
    gen = local_generator(s) if s not in (-1, 0) else generator()
    u = gen.random((b, 1))
    off = xp.arange(b, dtype=np.float64)[:, None]
    flat = xp.searchsorted((cdf + off).ravel(), (u + off).ravel(), side="right")
    pos = xp.minimum(flat.reshape(b, 1) - xp.arange(b)[:, None] * v, v - 1)
    ids = xp.take_along_axis(order, pos, 1).astype(np.int64)
    return _gather(x, ids, 1), _wrap(ids)


API = ["argmax", "argmin", "argsort", "sort", "topk", "kthvalue", "mode", "nonzero",
       "masked_select", "where", "where_", "searchsorted", "bucketize", "unique",
       "unique_consecutive"]
METHODS = ["argmax", "argmin", "argsort", "sort", "topk", "kthvalue", "mode", "nonzero",
           "masked_select", "where", "where_", "bucketize", "unique", "unique_consecutive",
           "top_p_sampling"]
