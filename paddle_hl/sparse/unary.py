"""Sparse ops with one sparse input: elementwise maps on the values, coalesce, sum, reshape,
transpose and slice.

Elementwise ops act on the stored values only: the pattern and the layout are kept, and a zero
that an op would turn into a non-zero (``cos``-like ops are absent for that reason) stays implicit.
"""

from __future__ import annotations

import numpy as np

from paddle_hl import backend
from paddle_hl import tensor as _ops
from paddle_hl.framework import dtype as _dt
from paddle_hl.framework.tensor import Tensor

from ._tensor import (
    SparseCooTensor,
    SparseCsrTensor,
    _SparseBase,
    coalesce_coo,
    coo_to_csr,
    flat_keys,
    from_keys,
    gather_values,
    scatter_values,
)

__all__ = []

_builtin_slice = slice


def require_sparse(x, where, arg="x"):
    """Raise a clear TypeError unless ``x`` is a sparse tensor."""
    if not isinstance(x, _SparseBase):
        kind = "a dense Tensor" if isinstance(x, Tensor) else type(x).__name__
        raise TypeError(f"paddle.sparse.{where}: {arg} must be a sparse COO or CSR tensor, got "
                        f"{kind} (convert it with to_sparse_coo / to_sparse_csr)")
    return x


def _elementwise(op_name, fn):
    def op(x, name=None):
        require_sparse(x, op_name)
        return x._with_values(fn(x._vt))

    op.__name__ = op.__qualname__ = op_name
    op.__doc__ = (f"Elementwise ``{op_name}`` of the stored values of a sparse tensor.\n\n"
                  "    The pattern and the layout (COO or CSR) are kept.\n\n"
                  "    Args:\n        x (Tensor): a sparse COO or CSR tensor.\n"
                  "        name (str, optional): unused.\n\n"
                  "    Returns:\n        Tensor: sparse, same layout and pattern as x.\n\n"
                  "    Example:\n"
                  "        >>> x = paddle.to_tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse_coo(2)\n"
                  f"        >>> y = paddle.sparse.{op_name}(x)\n")
    return op


abs = _elementwise("abs", _ops.abs)  # noqa: A001
asin = _elementwise("asin", _ops.asin)
asinh = _elementwise("asinh", _ops.asinh)
atan = _elementwise("atan", _ops.atan)
atanh = _elementwise("atanh", _ops.atanh)
deg2rad = _elementwise("deg2rad", _ops.deg2rad)
expm1 = _elementwise("expm1", _ops.expm1)
isnan = _elementwise("isnan", _ops.isnan)
log1p = _elementwise("log1p", _ops.log1p)
neg = _elementwise("neg", _ops.neg)
rad2deg = _elementwise("rad2deg", _ops.rad2deg)
sin = _elementwise("sin", _ops.sin)
sinh = _elementwise("sinh", _ops.sinh)
sqrt = _elementwise("sqrt", _ops.sqrt)
square = _elementwise("square", _ops.square)
tan = _elementwise("tan", _ops.tan)
tanh = _elementwise("tanh", _ops.tanh)


def pow(x, factor, name=None):  # noqa: A001
    """``x ** factor`` on the stored values of a sparse tensor (pattern and layout kept).

    Args:
        x (Tensor): a sparse COO or CSR tensor.
        factor (float|int): the exponent.
        name (str, optional): unused.

    Returns:
        Tensor: sparse, same layout and pattern as x.

    Example:
        >>> y = paddle.sparse.pow(paddle.to_tensor([[0.0, 3.0]]).to_sparse_coo(2), 2)
    """
    require_sparse(x, "pow")
    return x._with_values(_ops.pow(x._vt, factor))


def cast(x, index_dtype=None, value_dtype=None, name=None):
    """Cast the indices (``indices`` / ``crows`` and ``cols``) and/or the values of ``x``.

    Args:
        x (Tensor): a sparse COO or CSR tensor.
        index_dtype (str|paddle.dtype, optional): an integer dtype for the indices.
        value_dtype (str|paddle.dtype, optional): the values' new dtype.
        name (str, optional): unused.

    Returns:
        Tensor: sparse, same layout and pattern as x.

    Example:
        >>> x = paddle.to_tensor([[0.0, 3.0]]).to_sparse_coo(2)
        >>> paddle.sparse.cast(x, 'int32', 'float64').dtype
        paddle.float64
    """
    require_sparse(x, "cast")
    vt = x._vt if value_dtype is None else _ops.cast(x._vt, value_dtype)
    if index_dtype is None:
        return x._with_values(vt)
    ind = _dt.to_np(index_dtype)
    if np.dtype(ind).kind not in "iu":
        raise TypeError(f"paddle.sparse.cast: index_dtype must be an integer dtype, got "
                        f"{index_dtype!r}")
    if isinstance(x, SparseCooTensor):
        return SparseCooTensor(x._ix.astype(ind), vt, x._shape, vt.stop_gradient)
    return SparseCsrTensor(x._crows.astype(ind), x._cols.astype(ind), vt, x._shape,
                           vt.stop_gradient)


def coalesce(x, name=None):
    """Sort a COO tensor's indices (row-major) and merge duplicates, summing their values.

    Args:
        x (Tensor): a sparse COO tensor.
        name (str, optional): unused.

    Returns:
        Tensor: the coalesced sparse COO tensor (gradients flow back to x's values).

    Example:
        >>> x = paddle.sparse.sparse_coo_tensor([[1, 0, 1]], [1.0, 2.0, 3.0], [2])
        >>> paddle.sparse.coalesce(x).values().numpy().tolist()
        [2.0, 4.0]
    """
    require_sparse(x, "coalesce")
    if isinstance(x, SparseCsrTensor):
        return x
    return coalesce_coo(x)


def _norm_axis(axis, nd, where):
    a = int(axis)
    if not -nd <= a < nd:
        raise ValueError(f"paddle.sparse.{where}: axis {axis} is out of range for a {nd}-D "
                         "tensor")
    return a % nd


def sum(x, axis=None, dtype=None, keepdim=False, name=None):  # noqa: A001
    """Sum of a sparse tensor's elements, over all or one axis, as a sparse tensor.

    Paddle's result layouts: a COO sum over all elements is ``[1]`` (``[1] * ndim`` with
    ``keepdim``); a COO sum over a sparse axis merges the entries that differ only there; over a
    dense axis the values are summed. A CSR sum over all elements is a ``[1, 1]`` CSR tensor;
    over the last axis it is ``[..., M, 1]`` with one entry per non-empty row.

    Args:
        x (Tensor): a sparse COO or CSR tensor.
        axis (int, optional): the axis to reduce; None reduces every element.
        dtype (str|paddle.dtype, optional): the result's dtype.
        keepdim (bool): keep the reduced axis with size 1 (COO). Default False.
        name (str, optional): unused.

    Returns:
        Tensor: sparse, same layout as x.

    Example:
        >>> x = paddle.to_tensor([[0.0, 1.0], [2.0, 3.0]]).to_sparse_coo(2)
        >>> paddle.sparse.sum(x, axis=1).to_dense().numpy().tolist()
        [1.0, 5.0]
    """
    require_sparse(x, "sum")
    vt = x._vt if dtype is None else _ops.cast(x._vt, dtype)
    xp = backend.get_array_module(x._values)
    nd = len(x._shape)
    if isinstance(x, SparseCsrTensor):
        if axis is None:
            total = _ops.reshape(_ops.sum(vt), [1])
            return SparseCsrTensor(xp.array([0, 1], dtype=np.int64),
                                   xp.zeros([1], dtype=np.int64), total, (1, 1),
                                   total.stop_gradient)
        a = _norm_axis(axis, nd, "sum")
        if a != nd - 1:
            out = sum(x.to_sparse_coo(nd), a, None, True)
            return coo_to_csr(out)
        rowkey = flat_keys(x) // x._shape[-1]
        uniq, inv = xp.unique(rowkey, return_inverse=True)
        vals = scatter_values(vt, inv.ravel(), int(uniq.shape[0]))
        shape = x._shape[:-1] + (1,)
        return from_keys(uniq, vals, x, shape)
    sd = x.sparse_dim()
    if axis is None:
        total = _ops.sum(vt)
        if keepdim:
            return SparseCooTensor(xp.zeros((nd, 1), dtype=np.int64),
                                   _ops.reshape(total, [1]), (1,) * nd, total.stop_gradient)
        return SparseCooTensor(xp.zeros((1, 1), dtype=np.int64), _ops.reshape(total, [1]),
                               (1,), total.stop_gradient)
    a = _norm_axis(axis, nd, "sum")
    if a >= sd:  # a dense dim: the pattern is unchanged
        vals = _ops.sum(vt, axis=a - sd + 1, keepdim=keepdim)
        shape = list(x._shape)
        if keepdim:
            shape[a] = 1
        else:
            del shape[a]
        return SparseCooTensor(x._ix, vals, shape, vals.stop_gradient)
    shape = list(x._shape)
    ix = x._ix
    if keepdim:
        shape[a] = 1
        ix = ix.copy()
        ix[a] = 0
    else:
        del shape[a]
        ix = xp.concatenate([ix[:a], ix[a + 1:]])
    if ix.shape[0] == 0:  # a 1-D tensor summed over its only sparse dim
        total = _ops.sum(vt, axis=0, keepdim=False)
        return SparseCooTensor(xp.zeros((1, 1), dtype=np.int64),
                               _ops.unsqueeze(total, 0), [1] + shape, total.stop_gradient)
    tmp = SparseCooTensor(ix, vt, shape, vt.stop_gradient)
    return coalesce(tmp)


def _resolve_shape(shape, numel, where):
    shape = [int(s) for s in shape]
    if shape.count(-1) > 1:
        raise ValueError(f"paddle.sparse.{where}: at most one -1 in shape, got {shape}")
    if -1 in shape:
        rest = int(np.prod([s for s in shape if s != -1])) or 1
        shape[shape.index(-1)] = numel // rest
    if int(np.prod(shape)) != numel:
        raise ValueError(f"paddle.sparse.{where}: cannot reshape {numel} elements into {shape}")
    return shape


def reshape(x, shape, name=None):
    """Reshape a sparse tensor (row-major order, as the dense ``reshape``), keeping its layout.

    Args:
        x (Tensor): a sparse COO or CSR tensor. For a hybrid COO tensor only the sparse dims may
            change; the dense dims must stay as they are.
        shape (list|tuple): the new shape; one entry may be -1.
        name (str, optional): unused.

    Returns:
        Tensor: sparse, same layout as x (a CSR result must be 2-D or 3-D).

    Example:
        >>> x = paddle.to_tensor([[0.0, 1.0, 0.0, 2.0]]).to_sparse_coo(2)
        >>> paddle.sparse.reshape(x, [2, 2]).to_dense().numpy().tolist()
        [[0.0, 1.0], [0.0, 2.0]]
    """
    require_sparse(x, "reshape")
    if isinstance(x, SparseCsrTensor):
        shape = _resolve_shape(shape, int(np.prod(x._shape)), "reshape")
        coo = reshape(x.to_sparse_coo(len(x._shape)), shape)
        return coo_to_csr(coo)
    sd = x.sparse_dim()
    dense = list(x._shape[sd:])
    n_sparse = int(np.prod(x._shape[:sd]))
    shape = _resolve_shape(shape, int(np.prod(x._shape)), "reshape")
    if dense and shape[len(shape) - len(dense):] != dense:
        raise ValueError(f"paddle.sparse.reshape: a hybrid COO tensor (dense dims {dense}) keeps "
                         f"its dense dims; got shape {shape}")
    new_sparse = shape[:len(shape) - len(dense)]
    if int(np.prod(new_sparse)) != n_sparse:
        raise ValueError(f"paddle.sparse.reshape: cannot reshape sparse dims {x.shape[:sd]} into "
                         f"{new_sparse}")
    keys = flat_keys(x)
    xp = backend.get_array_module(keys)
    ix = xp.stack(xp.unravel_index(keys, new_sparse)).astype(np.int64) if keys.size else \
        xp.zeros((len(new_sparse), 0), dtype=np.int64)
    return SparseCooTensor(ix, x._vt, shape, x._vt.stop_gradient)


def transpose(x, perm, name=None):
    """Permute the dims of a sparse tensor (a COO result keeps the entries' order).

    Args:
        x (Tensor): a sparse COO or CSR tensor (for COO, ``perm`` permutes the sparse dims and
            leaves dense dims in place).
        perm (list|tuple): a permutation of ``range(x.ndim)``.
        name (str, optional): unused.

    Returns:
        Tensor: sparse, same layout as x.

    Example:
        >>> x = paddle.to_tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse_csr()
        >>> paddle.sparse.transpose(x, [1, 0]).to_dense().numpy().tolist()
        [[0.0, 2.0], [1.0, 0.0]]
    """
    require_sparse(x, "transpose")
    perm = [int(p) for p in perm]
    nd = len(x._shape)
    if sorted(p % nd for p in perm) != list(range(nd)) or len(perm) != nd:
        raise ValueError(f"paddle.sparse.transpose: perm must be a permutation of "
                         f"range({nd}) for shape {x.shape}, got {perm}")
    perm = [p % nd for p in perm]
    if isinstance(x, SparseCsrTensor):
        return coo_to_csr(transpose(x.to_sparse_coo(nd), perm))
    sd = x.sparse_dim()
    if sorted(perm[:sd]) != list(range(sd)):
        raise ValueError(f"paddle.sparse.transpose: a COO tensor with {sd} sparse dims can only "
                         f"permute its sparse dims among themselves, got perm {perm}")
    vt = x._vt
    if perm[sd:] != list(range(sd, nd)):
        vt = _ops.transpose(vt, [0] + [p - sd + 1 for p in perm[sd:]])
    shape = [x._shape[p] for p in perm]
    # as Paddle: a COO result keeps the entries' order (only CSR comes out sorted)
    return SparseCooTensor(x._ix[perm[:sd]], vt, shape, vt.stop_gradient)


def slice(x, axes, starts, ends, name=None):  # noqa: A001
    """Slice a sparse tensor along ``axes`` from ``starts`` to ``ends`` (as the dense op).

    Args:
        x (Tensor): a sparse COO or CSR tensor.
        axes (list): the axes to slice.
        starts (list): start per axis (negative counts from the end).
        ends (list): end per axis (exclusive; clipped to the dim).
        name (str, optional): unused.

    Returns:
        Tensor: sparse, same layout as x.

    Example:
        >>> x = paddle.to_tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse_coo(2)
        >>> paddle.sparse.slice(x, [0], [1], [2]).to_dense().numpy().tolist()
        [[2.0, 0.0]]
    """
    require_sparse(x, "slice")
    axes, starts, ends = ([int(v) for v in (a.tolist() if isinstance(a, Tensor) else a)]
                          for a in (axes, starts, ends))
    if not len(axes) == len(starts) == len(ends):
        raise ValueError(f"paddle.sparse.slice: axes, starts and ends must have the same length, "
                         f"got {len(axes)}, {len(starts)}, {len(ends)}")
    nd = len(x._shape)
    if isinstance(x, SparseCsrTensor):
        return coo_to_csr(slice(x.to_sparse_coo(nd), axes, starts, ends))
    sd = x.sparse_dim()
    xp = backend.get_array_module(x._values)
    shape = list(x._shape)
    keep = xp.ones(x.nnz(), dtype=bool)
    lo_hi = {}
    for a, s, e in zip(axes, starts, ends):
        a = _norm_axis(a, nd, "slice")
        n = x._shape[a]
        s = max(0, min(n, s + n if s < 0 else s))
        e = max(0, min(n, e + n if e < 0 else e))
        e = max(e, s)
        lo_hi[a] = (s, e)
        shape[a] = e - s
        if a < sd:
            keep &= (x._ix[a] >= s) & (x._ix[a] < e)
    pos = xp.nonzero(keep)[0]
    ix = x._ix[:, pos].copy()
    for a, (s, _) in lo_hi.items():
        if a < sd:
            ix[a] -= s
    vt = gather_values(x._vt, pos)
    dense_sl = [_builtin_slice(None)] + [
        _builtin_slice(*lo_hi.get(a, (None, None))) for a in range(sd, nd)]
    if any(a >= sd for a in lo_hi):
        vt = vt[tuple(dense_sl)]
    return SparseCooTensor(ix, vt, shape, vt.stop_gradient)
