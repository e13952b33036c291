"""Sparse-masked attention: scores only where the mask has entries."""

from __future__ import annotations

import math

import numpy as np

from paddle_hl import backend
from paddle_hl import tensor as _ops
from paddle_hl.framework.tensor import Tensor

from ..._tensor import SparseCsrTensor
from ...binary import masked_matmul, matmul
from ...unary import require_sparse
from .activation import softmax

__all__ = []


def attention(query, key, value, sparse_mask, key_padding_mask=None, attn_mask=None, name=None):
    """``softmax(Q Kᵀ / sqrt(d)) V`` with the scores computed only on ``sparse_mask``'s pattern.

    Args:
        query (Tensor): dense ``[B, H, S, D]``.
        key (Tensor): dense ``[B, H, S, D]``.
        value (Tensor): dense ``[B, H, S, D]``.
        sparse_mask (Tensor): sparse CSR ``[B * H, S, S]``: which scores exist.
        key_padding_mask (Tensor, optional): dense ``[B, S]``; a 0 hides that key.
        attn_mask (Tensor, optional): dense ``[S, S]``; a 0 hides that (query, key) pair.
        name (str, optional): unused.

    Returns:
        Tensor: dense ``[B, H, S, D]``.

    Example:
        >>> q = paddle.rand([1, 2, 4, 8])
        >>> mask = paddle.ones([2, 4, 4]).to_sparse_csr()
        >>> out = paddle.sparse.nn.functional.attention(q, q, q, mask)
    """
    op = "paddle.sparse.nn.functional.attention"
    require_sparse(sparse_mask, "nn.functional.attention", "sparse_mask")
    if not isinstance(sparse_mask, SparseCsrTensor):
        raise TypeError(f"{op}: sparse_mask must be a CSR tensor [B * H, S, S], got COO")
    for arg, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor) or t.is_sparse() or t.ndim != 4:
            raise ValueError(f"{op}: {arg} must be a dense [B, H, S, D] tensor, got "
                             f"{getattr(t, 'shape', type(t).__name__)}")
    b, h, s, d = query.shape
    if key.shape != query.shape or value.shape[:3] != [b, h, s]:
        raise ValueError(f"{op}: query {query.shape}, key {key.shape} and value {value.shape} "
                         "must agree on [B, H, S] (and query/key on D)")
    if sparse_mask.shape != [b * h, s, s]:
        raise ValueError(f"{op}: sparse_mask must be [B * H, S, S] = {[b * h, s, s]}, got "
                         f"{sparse_mask.shape}")
    q = _ops.reshape(query, [b * h, s, d]) * (1.0 / math.sqrt(d))
    k = _ops.transpose(_ops.reshape(key, [b * h, s, d]), [0, 2, 1])
    scores = masked_matmul(q, k, sparse_mask)
    if key_padding_mask is not None or attn_mask is not None:
        xp = backend.get_array_module(scores._values)
        bh, rows = scores._rows()
        cols = scores._cols
        keep = xp.ones(cols.shape[0], dtype=bool)
        if key_padding_mask is not None:
            if key_padding_mask.shape != [b, s]:
                raise ValueError(f"{op}: key_padding_mask must be [B, S] = {[b, s]}, got "
                                 f"{key_padding_mask.shape}")
            keep &= key_padding_mask._data[bh // h, cols] != 0
        if attn_mask is not None:
            if attn_mask.shape != [s, s]:
                raise ValueError(f"{op}: attn_mask must be [S, S] = {[s, s]}, got "
                                 f"{attn_mask.shape}")
            keep &= attn_mask._data[rows, cols] != 0
        bias = xp.where(keep, 0, -np.inf).astype(scores._values.dtype)
        scores = scores._with_values(_ops.add(scores._vt, _ops.to_tensor(bias)))
    probs = softmax(scores)
    out = matmul(probs, _ops.reshape(value, [b * h, s, value.shape[-1]]))
    return _ops.reshape(out, [b, h, s, value.shape[-1]])
