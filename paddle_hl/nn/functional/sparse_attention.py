"""Block-sparse attention with a CSR layout (``paddle.nn.functional.sparse_attention``).

Each query row attends only to the key columns its CSR row lists. The scores are evaluated on
a dense ``[seq_len, seq_len]`` grid restricted by the pattern (one batched GEMM is faster in
NumPy than gathering the listed columns), so memory is O(seq_len²) per head.
"""

from __future__ import annotations

import numpy as np

from ... import backend
from ...framework import dtype as _dt
from ...framework.op import apply, op
from ...framework.tensor import Tensor

__all__ = []


@op("sparse_attention", saves=(0, 1, 2))
def _sparse_attn(q, k, v, allowed, scale):
    """Softmax attention over the True entries of ``allowed`` ``[B, H, L, L]``; a row with no
    allowed entry gives a zero output."""
    xp = backend.get_array_module(q)
    s = xp.matmul(q, xp.swapaxes(k, -1, -2))
    s *= s.dtype.type(scale)
    s = xp.where(allowed, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0)
    p = xp.exp(s - m)
    p *= allowed
    den = p.sum(axis=-1, keepdims=True)
    p /= xp.where(den == 0, 1, den)
    out = xp.matmul(p, v)

    def backward(g):
        dp = xp.matmul(g, xp.swapaxes(v, -1, -2))
        dv = xp.matmul(xp.swapaxes(p, -1, -2), g)
        ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True))
        ds *= ds.dtype.type(scale)
        return xp.matmul(ds, k), xp.matmul(xp.swapaxes(ds, -1, -2), q), dv, None

    return out, backward


def _pattern(offset, columns, b, h, n, where):
    """Dense bool ``[B, H, L, L]`` pattern from the CSR offsets and columns (vectorised)."""
    xp = backend.get_array_module(offset)
    off = offset.astype(np.int64).reshape(b * h, n + 1)
    cols = columns.astype(np.int64).reshape(b * h, -1)
    counts = xp.diff(off, axis=1)
    if bool((counts < 0).any()) or bool((off[:, 0] != 0).any()):
        raise ValueError(f"{where}: sparse_csr_offset must start at 0 and be non-decreasing")
    nnz = cols.shape[1]
    if bool((off[:, -1] > nnz).any()):
        raise ValueError(f"{where}: sparse_csr_offset ends at {int(off[:, -1].max())} but "
                         f"sparse_csr_columns holds only {nnz} entries per head")
    if nnz and (bool((cols < 0).any()) or bool((cols >= n).any())):
        raise ValueError(f"{where}: sparse_csr_columns must lie in [0, {n})")
    # entry j of head g belongs to row r when off[g, r] <= j < off[g, r+1]
    j = xp.arange(nnz)
    rows = (j[None, :, None] >= off[:, None, 1:]).sum(axis=-1)  # [B*H, nnz]
    valid = j[None, :] < off[:, -1:]
    allowed = xp.zeros((b * h, n, n), dtype=bool)
    g = xp.broadcast_to(xp.arange(b * h)[:, None], rows.shape)
    allowed[g[valid], rows[valid], cols[valid]] = True
    return allowed.reshape(b, h, n, n)


def sparse_attention(query, key, value, sparse_csr_offset, sparse_csr_columns,
                     key_padding_mask=None, attn_mask=None, name=None) -> Tensor:
    """Attention restricted to a sparsity pattern given in CSR form.

    ``out = softmax(Q Kᵀ / √d, over the listed columns of each row) V``.

    Args:
        query, key, value (Tensor): ``[batch, num_heads, seq_len, head_dim]``, float32/64.
        sparse_csr_offset (Tensor): int ``[batch, num_heads, seq_len + 1]``, the row offsets.
        sparse_csr_columns (Tensor): int ``[batch, num_heads, nnz]``, the column of each entry.
        key_padding_mask (Tensor, optional): ``[batch, seq_len]``; 0 masks that key.
        attn_mask (Tensor, optional): ``[seq_len, seq_len]``; 0 masks that (query, key) pair.
        name (str, optional): unused.

    Returns:
        Tensor: ``[batch, num_heads, seq_len, head_dim]``. A row with every entry masked is 0.

    Example:
        >>> q = paddle.rand([1, 1, 2, 4])
        >>> off = paddle.to_tensor([[[0, 2, 4]]], dtype='int32')
        >>> cols = paddle.to_tensor([[[0, 1, 0, 1]]], dtype='int32')
        >>> out = paddle.nn.functional.sparse_attention(q, q, q, off, cols)
    """
    where = "sparse_attention"
    for arg, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{where}: {arg} must be a Tensor, got {type(t).__name__}")
        if t.ndim != 4:
            raise ValueError(f"{where}: {arg} must be 4-D [batch_size, num_heads, seq_len, "
                             f"head_dim], got shape {t.shape}")
        if not _dt.is_float_np(t._data.dtype):
            raise TypeError(f"{where}: {arg} must be float32 or float64, got {t.dtype}")
    if not (query.shape == key.shape == value.shape):
        raise ValueError(f"{where}: query {query.shape}, key {key.shape} and value "
                         f"{value.shape} must have the same shape")
    b, h, n, d = query.shape
    for arg, t, want in (("sparse_csr_offset", sparse_csr_offset, [b, h, n + 1]),
                         ("sparse_csr_columns", sparse_csr_columns, None)):
        if not isinstance(t, Tensor) or t._data.dtype.kind not in "iu":
            raise TypeError(f"{where}: {arg} must be an int32/int64 Tensor")
        if want is not None and t.shape != want:
            raise ValueError(f"{where}: {arg} must have shape {want}, got {t.shape}")
    if sparse_csr_columns.ndim != 3 or sparse_csr_columns.shape[:2] != [b, h]:
        raise ValueError(f"{where}: sparse_csr_columns must have shape [batch_size={b}, "
                         f"num_heads={h}, nnz], got {sparse_csr_columns.shape}")
    allowed = _pattern(sparse_csr_offset._data, sparse_csr_columns._data, b, h, n, where)
    if key_padding_mask is not None:
        if not isinstance(key_padding_mask, Tensor) or key_padding_mask.shape != [b, n]:
            raise ValueError(f"{where}: key_padding_mask must have shape [batch_size={b}, "
                             f"seq_len={n}], got {getattr(key_padding_mask, 'shape', None)}")
        allowed = allowed & (key_padding_mask._data != 0)[:, None, None, :]
    if attn_mask is not None:
        if not isinstance(attn_mask, Tensor) or attn_mask.shape != [n, n]:
            raise ValueError(f"{where}: attn_mask must have shape [seq_len={n}, seq_len={n}], "
                             f"got {getattr(attn_mask, 'shape', None)}")
        allowed = allowed & (attn_mask._data != 0)
    scale = 1.0 / float(np.sqrt(d)) if d else 1.0
    return apply(_sparse_attn, query, key, value, allowed, scale=scale)
