"""Sparse ops with two or more inputs: elementwise arithmetic, matmul, masked_matmul, mv, addmm.

Result layouts follow Paddle: ``add`` / ``subtract`` / ``multiply`` keep the operands' layout on
the union of their patterns, ``divide`` on every position (0 / 0 is NaN, as dense division);
``matmul`` of a sparse and a dense matrix is dense, of two sparse matrices of one layout is
sparse in that layout; ``masked_matmul`` has the mask's pattern.
"""

from __future__ import annotations

import numpy as np

from paddle_hl import backend
from paddle_hl import tensor as _ops
from paddle_hl.framework.op import apply, op
from paddle_hl.framework.state import is_grad_enabled
from paddle_hl.framework.tensor import Tensor

from . import _kernels as K
from ._tensor import (
    SparseCooTensor,
    SparseCsrTensor,
    _SparseBase,
    csr_from_keys,
    flat_keys,
    from_keys,
    scatter_values,
)
from .unary import coalesce, require_sparse

__all__ = []


def is_same_shape(x, y):
    """Whether two tensors (sparse or dense, in any layout) have the same shape.

    Args:
        x (Tensor): a sparse or dense tensor.
        y (Tensor): a sparse or dense tensor.

    Returns:
        bool

    Example:
        >>> x = paddle.rand([2, 3]).to_sparse_csr()
        >>> paddle.sparse.is_same_shape(x, paddle.rand([2, 3]))
        True
    """
    return list(x.shape) == list(y.shape)


# ---------------------------------------------------------------------- elementwise
def _check_pair(x, y, where):
    require_sparse(x, where, "x")
    require_sparse(y, where, "y")
    if x._layout != y._layout:
        raise TypeError(f"paddle.sparse.{where}: x and y must have the same layout, got "
                        f"{x._layout.upper()} and {y._layout.upper()} (convert one with "
                        "to_sparse_coo / to_sparse_csr)")
    if x.shape != y.shape:
        raise ValueError(f"paddle.sparse.{where}: x and y must have the same shape, got "
                         f"{x.shape} and {y.shape}")
    if x._layout == "coo" and x.sparse_dim() != y.sparse_dim():
        raise ValueError(f"paddle.sparse.{where}: x and y must have the same sparse_dim, got "
                         f"{x.sparse_dim()} and {y.sparse_dim()}")
    if x.dtype != y.dtype:
        raise TypeError(f"paddle.sparse.{where}: x and y must have the same dtype, got "
                        f"{x.dtype} and {y.dtype}")


def _binary(x, y, where, fn, full=False):
    _check_pair(x, y, where)
    if x._layout == "coo":
        x, y = coalesce(x), coalesce(y)
    kx, ky = flat_keys(x), flat_keys(y)
    xp = backend.get_array_module(kx)
    if full:
        keys = xp.arange(int(np.prod(x._shape[:x.sparse_dim()])), dtype=np.int64)
    elif kx.shape == ky.shape and bool((kx == ky).all()):
        return from_keys(kx, fn(x._vt, y._vt), x)  # one pattern: no expansion needed
    else:
        keys = xp.union1d(kx, ky)
    n = int(keys.shape[0])
    xe = scatter_values(x._vt, xp.searchsorted(keys, kx), n)
    ye = scatter_values(y._vt, xp.searchsorted(keys, ky), n)
    return from_keys(keys, fn(xe, ye), x)


def add(x, y, name=None):
    """``x + y`` of two sparse tensors of one layout and shape (union of their patterns).

    Args:
        x (Tensor): a sparse COO or CSR tensor.
        y (Tensor): a sparse tensor of x's layout, shape and dtype.
        name (str, optional): unused.

    Returns:
        Tensor: sparse, x's layout.

    Example:
        >>> x = paddle.to_tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse_csr()
        >>> paddle.sparse.add(x, x).to_dense().numpy().tolist()
        [[0.0, 2.0], [4.0, 0.0]]
    """
    return _binary(x, y, "add", _ops.add)


def subtract(x, y, name=None):
    """``x - y`` of two sparse tensors of one layout and shape (union of their patterns).

    Args:
        x (Tensor): a sparse COO or CSR tensor.
        y (Tensor): a sparse tensor of x's layout, shape and dtype.
        name (str, optional): unused.

    Returns:
        Tensor: sparse, x's layout.

    Example:
        >>> x = paddle.to_tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse_coo(2)
        >>> paddle.sparse.subtract(x, x).values().numpy().tolist()
        [0.0, 0.0]
    """
    return _binary(x, y, "subtract", _ops.subtract)


def multiply(x, y, name=None):
    """``x * y`` of two sparse tensors of one layout and shape (stored on the union pattern).

    Args:
        x (Tensor): a sparse COO or CSR tensor.
        y (Tensor): a sparse tensor of x's layout, shape and dtype.
        name (str, optional): unused.

    Returns:
        Tensor: sparse, x's layout.

    Example:
        >>> x = paddle.to_tensor([[0.0, 3.0], [2.0, 0.0]]).to_sparse_coo(2)
        >>> paddle.sparse.multiply(x, x).values().numpy().tolist()
        [9.0, 4.0]
    """
    return _binary(x, y, "multiply", _ops.multiply)


def divide(x, y, name=None):
    """``x / y`` of two sparse tensors of one layout and shape, stored at every position.

    As in Paddle, the result has an entry everywhere, since ``0 / 0`` is NaN.

    Args:
        x (Tensor): a sparse COO or CSR tensor.
        y (Tensor): a sparse tensor of x's layout, shape and dtype.
        name (str, optional): unused.

    Returns:
        Tensor: sparse, x's layout.

    Example:
        >>> x = paddle.to_tensor([[1.0, 2.0]]).to_sparse_coo(2)
        >>> paddle.sparse.divide(x, x).values().numpy().tolist()
        [1.0, 1.0]
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return _binary(x, y, "divide", _ops.divide, full=True)


# ---------------------------------------------------------------------- matmul family
def _csr_parts(x, where):
    """(values Tensor, crows, cols, shape) of a 2-D/3-D sparse tensor in CSR order."""
    if isinstance(x, SparseCsrTensor):
        return x._vt, x._crows, x._cols, x._shape
    if len(x._shape) not in (2, 3) or x.sparse_dim() != len(x._shape):
        raise ValueError(f"paddle.sparse.{where}: a COO operand must be 2-D or 3-D and sparse in "
                         f"every dim, got shape {x.shape} with sparse_dim {x.sparse_dim()}")
    c = coalesce(x)
    crows, cols = csr_from_keys(flat_keys(c), c._shape)
    return c._vt, crows, cols, c._shape


def _batches(crows, shape):
    """(nb, m, n, per-batch entry offsets, per-batch crows)."""
    m, n = shape[-2], shape[-1]
    nb = shape[0] if len(shape) == 3 else 1
    per = crows.reshape(nb, m + 1)
    off = np.concatenate([[0], np.cumsum(backend.to_numpy(per[:, -1]))]).astype(np.int64)
    return nb, m, n, off, per


def _needs_grad(t):
    return isinstance(t, Tensor) and not t.stop_gradient and is_grad_enabled()


@op("spmm_kernel", saves=(0, 4))
def _spmm_kernel(v, crows, cols, shape, y, need_v=True, need_y=True):
    nb, m, n, off, per = _batches(crows, shape)
    y3 = y if y.ndim == 3 else y[None]
    xp = backend.get_array_module(y)
    out = xp.empty((nb, m, y3.shape[-1]), dtype=xp.result_type(v, y))
    for b in range(nb):
        s, e = off[b], off[b + 1]
        out[b] = K.csr_dense(v[s:e], per[b], cols[s:e], m, n, y3[b])

    def bw(g):
        g = xp.ascontiguousarray(g)  # zero strides (a broadcast gradient) defeat BLAS
        g3 = g if g.ndim == 3 else g[None]
        # the sampled product for the values costs nnz x k multiply-adds: skip it (and the
        # dense operand's product) when that input does not need a gradient
        gv = xp.empty_like(v) if need_v else None
        gy = xp.empty_like(y3) if need_y else None
        for b in range(nb):
            s, e = off[b], off[b + 1]
            if need_v:
                rows = xp.repeat(xp.arange(m), xp.diff(per[b]))
                gv[s:e] = K.sddmm(g3[b], y3[b], rows, cols[s:e])
            if need_y:
                gy[b] = K.csr_t_dense(v[s:e], per[b], cols[s:e], m, n, g3[b])
        return gv, None, None, None, None if gy is None else gy.reshape(y.shape), None, None

    return (out if y.ndim == 3 else out[0]), bw


def _spspmm(xa, ya, where):
    av, acr, acol, ashape = _csr_parts(xa, where)
    bv, bcr, bcol, bshape = _csr_parts(ya, where)
    nb, m, k, aoff, aper = _batches(acr, ashape)
    _, _, n, boff, bper = _batches(bcr, bshape)
    xp = backend.get_array_module(acr)
    res = []
    for b in range(nb):
        res.append(K.csr_csr(av._data[aoff[b]:aoff[b + 1]], aper[b], acol[aoff[b]:aoff[b + 1]],
                             bv._data[boff[b]:boff[b + 1]], bper[b], bcol[boff[b]:boff[b + 1]],
                             m, k, n))
    ccrows = xp.concatenate([r[1] for r in res]) if res else xp.zeros(0, dtype=np.int64)
    ccols = xp.concatenate([r[2] for r in res])
    coff = np.concatenate([[0], np.cumsum([r[2].shape[0] for r in res])]).astype(np.int64)

    def kernel(a, bvals):
        out = xp.concatenate([r[0] for r in res])

        def bw(g):
            ga = xp.empty_like(a)
            gb = xp.empty_like(bvals)
            for i in range(nb):
                cs, ce = coff[i], coff[i + 1]
                as_, ae = aoff[i], aoff[i + 1]
                bs, be = boff[i], boff[i + 1]
                # dA = G @ B.T sampled on A's pattern; dB = A.T @ G sampled on B's pattern
                btv, btcr, btcol, _ = K.csr_transpose(bvals[bs:be], bper[i], bcol[bs:be], k, n)
                gbt = K.csr_csr(g[cs:ce], res[i][1], res[i][2], btv, btcr, btcol, m, n, k)
                arows = xp.repeat(xp.arange(m), xp.diff(aper[i]))
                ga[as_:ae] = K.sample_csr(*gbt, m, k, arows, acol[as_:ae])
                atv, atcr, atcol, _ = K.csr_transpose(a[as_:ae], aper[i], acol[as_:ae], m, k)
                atg = K.csr_csr(atv, atcr, atcol, g[cs:ce], res[i][1], res[i][2], k, m, n)
                brows = xp.repeat(xp.arange(k), xp.diff(bper[i]))
                gb[bs:be] = K.sample_csr(*atg, k, n, brows, bcol[bs:be])
            return ga, gb

        return out, bw

    vals = apply(kernel, av, bv)
    oshape = tuple(ashape[:-1]) + (n,)
    if isinstance(xa, SparseCsrTensor):
        return SparseCsrTensor(ccrows, ccols, vals, oshape, vals.stop_gradient)
    nbb = np.repeat(np.arange(nb), np.diff(coff))
    rows = xp.concatenate([xp.repeat(xp.arange(m), xp.diff(r[1])) for r in res])
    keys = (xp.asarray(nbb) * m + rows) * n + ccols
    return from_keys(keys.astype(np.int64), vals, xa, oshape)


def matmul(x, y, name=None):
    """Matrix product with a sparse first operand (2-D, or batched 3-D).

    sparse @ dense gives a dense tensor; COO @ COO gives COO and CSR @ CSR gives CSR.
    Gradients reach the sparse values (on their pattern) and the dense operand.

    Args:
        x (Tensor): a sparse COO or CSR tensor ``[M, K]`` or ``[B, M, K]``.
        y (Tensor): dense ``[K, N]`` / ``[B, K, N]``, or sparse of x's layout.
        name (str, optional): unused.

    Returns:
        Tensor: ``[M, N]`` / ``[B, M, N]``, dense or sparse as above.

    Example:
        >>> x = paddle.to_tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse_csr()
        >>> paddle.sparse.matmul(x, paddle.ones([2, 3])).numpy().tolist()
        [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]
    """
    require_sparse(x, "matmul", "x")
    if not isinstance(y, Tensor):
        raise TypeError(f"paddle.sparse.matmul: y must be a Tensor, got {type(y).__name__}")
    xs = x.shape
    if len(xs) not in (2, 3) or len(y.shape) != len(xs) or xs[-1] != y.shape[-2] or \
            (len(xs) == 3 and xs[0] != y.shape[0]):
        raise ValueError(f"paddle.sparse.matmul: shapes {xs} and {y.shape} do not match for a "
                         "(batched) matrix product: expected [M, K] @ [K, N] or "
                         "[B, M, K] @ [B, K, N]")
    if isinstance(y, _SparseBase):
        if y._layout != x._layout:
            raise TypeError(f"paddle.sparse.matmul: sparse operands must share a layout, got "
                            f"{x._layout.upper()} and {y._layout.upper()}")
        if x.dtype != y.dtype:
            raise TypeError(f"paddle.sparse.matmul: dtypes differ: {x.dtype} and {y.dtype}")
        return _spspmm(x, y, "matmul")
    if x.dtype != y.dtype:
        raise TypeError(f"paddle.sparse.matmul: x ({x.dtype}) and y ({y.dtype}) must have the "
                        "same dtype")
    vt, crows, cols, shape = _csr_parts(x, "matmul")
    return apply(_spmm_kernel, vt, crows, cols, shape, y, _needs_grad(vt), _needs_grad(y))


def _masked_kernel(a, b, rows, cols, batch, crows, shape):
    # a [.., M, K], b [.., K, N]: entries of a @ b on the mask's pattern
    xp = backend.get_array_module(a)
    a3 = a if a.ndim == 3 else a[None]
    b3t = xp.swapaxes(b if b.ndim == 3 else b[None], -1, -2)
    nb, m, n, off, per = _batches(crows, shape)
    out = xp.empty(rows.shape[0], dtype=xp.result_type(a, b))
    for i in range(nb):
        s, e = off[i], off[i + 1]
        out[s:e] = K.sddmm(a3[i], b3t[i], rows[s:e], cols[s:e])

    def bw(g):
        g = xp.ascontiguousarray(g)
        ga = xp.empty_like(a3)
        gbt = xp.empty_like(b3t)
        for i in range(nb):
            s, e = off[i], off[i + 1]
            ga[i] = K.csr_dense(g[s:e], per[i], cols[s:e], m, n, b3t[i])
            gbt[i] = K.csr_t_dense(g[s:e], per[i], cols[s:e], m, n, a3[i])
        return (ga.reshape(a.shape), xp.swapaxes(gbt, -1, -2).reshape(b.shape), None, None,
                None, None, None)

    return out, bw


def masked_matmul(x, y, mask, name=None):
    """``x @ y`` computed only at the non-zero positions of ``mask`` (a sampled product).

    Args:
        x (Tensor): dense ``[M, K]`` or ``[B, M, K]``.
        y (Tensor): dense ``[K, N]`` or ``[B, K, N]``.
        mask (Tensor): sparse CSR (or COO) ``[M, N]`` / ``[B, M, N]``; its values are ignored.
        name (str, optional): unused.

    Returns:
        Tensor: sparse, mask's layout and pattern.

    Example:
        >>> mask = paddle.eye(3).to_sparse_csr()
        >>> out = paddle.sparse.masked_matmul(paddle.rand([3, 4]), paddle.rand([4, 3]), mask)
    """
    require_sparse(mask, "masked_matmul", "mask")
    for arg, t in (("x", x), ("y", y)):
        if not isinstance(t, Tensor) or isinstance(t, _SparseBase):
            raise TypeError(f"paddle.sparse.masked_matmul: {arg} must be a dense Tensor, got "
                            f"{'a sparse tensor' if isinstance(t, _SparseBase) else type(t)}")
    ms = mask.shape
    if len(x.shape) != len(ms) or len(y.shape) != len(ms) or x.shape[-1] != y.shape[-2] or \
            [x.shape[-2], y.shape[-1]] != ms[-2:] or (len(ms) == 3 and not
                                                       x.shape[0] == y.shape[0] == ms[0]):
        raise ValueError(f"paddle.sparse.masked_matmul: shapes x {x.shape}, y {y.shape} and "
                         f"mask {ms} do not match ([.., M, K] @ [.., K, N] with mask "
                         "[.., M, N])")
    if isinstance(mask, SparseCsrTensor):
        crows, cols, shape = mask._crows, mask._cols, mask._shape
        like = mask
    else:
        m2 = coalesce(mask)
        crows, cols = csr_from_keys(flat_keys(m2), m2._shape)
        shape, like = m2._shape, m2
    batch, rows = SparseCsrTensor(crows, cols, mask._vt, shape)._rows()
    vals = apply(_masked_kernel, x, y, rows, cols, batch, crows, shape)
    if like._layout == "csr":
        return SparseCsrTensor(crows, cols, vals, shape, vals.stop_gradient)
    return SparseCooTensor(like._ix, vals, shape, vals.stop_gradient)


def mv(x, vec, name=None):
    """Sparse matrix times dense vector.

    Args:
        x (Tensor): a sparse COO or CSR matrix ``[M, N]``.
        vec (Tensor): dense ``[N]``.
        name (str, optional): unused.

    Returns:
        Tensor: dense ``[M]``.

    Example:
        >>> x = paddle.to_tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse_coo(2)
        >>> paddle.sparse.mv(x, paddle.to_tensor([1.0, 2.0])).numpy().tolist()
        [2.0, 2.0]
    """
    require_sparse(x, "mv", "x")
    if len(x.shape) != 2 or not isinstance(vec, Tensor) or isinstance(vec, _SparseBase) or \
            vec.ndim != 1 or vec.shape[0] != x.shape[1]:
        raise ValueError(f"paddle.sparse.mv: expected a sparse [M, N] matrix and a dense [N] "
                         f"vector, got {x.shape} and "
                         f"{getattr(vec, 'shape', type(vec).__name__)}")
    return _ops.reshape(matmul(x, _ops.reshape(vec, [-1, 1])), [-1])


def addmm(input, x, y, beta=1.0, alpha=1.0, name=None):  # noqa: A002
    """``beta * input + alpha * (x @ y)`` with a sparse ``x``.

    With a dense ``input`` (and dense y) the result is dense; with sparse ``input``, ``x`` and
    ``y`` of one layout it is sparse in that layout.

    Args:
        input (Tensor): dense or sparse ``[M, N]`` / ``[B, M, N]``.
        x (Tensor): sparse ``[M, K]`` / ``[B, M, K]``.
        y (Tensor): dense or sparse ``[K, N]`` / ``[B, K, N]``.
        beta (float): scale of input. Default 1.0.
        alpha (float): scale of the product. Default 1.0.
        name (str, optional): unused.

    Returns:
        Tensor: dense or sparse as above.

    Example:
        >>> x = paddle.to_tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse_csr()
        >>> out = paddle.sparse.addmm(paddle.ones([2, 2]), x, paddle.ones([2, 2]), 0.5, 2.0)
    """
    prod = matmul(x, y)
    if list(input.shape) != list(prod.shape):
        raise ValueError(f"paddle.sparse.addmm: input shape {input.shape} does not match "
                         f"x @ y's shape {prod.shape}")
    if isinstance(input, _SparseBase):
        if not isinstance(prod, _SparseBase):
            raise TypeError("paddle.sparse.addmm: a sparse input needs sparse x and y of its "
                            "layout (x @ y is dense here)")
        return add(input._with_values(input._vt * beta), prod._with_values(prod._vt * alpha))
    if isinstance(prod, _SparseBase):
        prod = prod.to_dense()
    return _ops.add(input * beta, prod * alpha)
