"""Input functionals: one_hot and embedding."""

from __future__ import annotations

import numbers

import numpy as np

from ... import backend
from ...framework import dtype as _dt
from ...framework.op import apply, op
from ...framework.tensor import Tensor, _wrap
from ...tensor._helpers import tensor_arg

__all__ = []


def _int_ids(x, op):
    x = tensor_arg(x, op)
    if x._data.dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise TypeError(f"{op}: x must be an int32 or int64 Tensor, got dtype {x.dtype.name}")
    return x


def _check_range(ids, n, op, what):
    if ids.size == 0:
        return
    xp = backend.get_array_module(ids)
    lo, hi = int(xp.min(ids)), int(xp.max(ids))
    if lo < 0 or hi >= n:
        bad = lo if lo < 0 else hi
        raise ValueError(f"{op}: every id must be in [0, {n}) ({what}), got {bad}")


def one_hot(x, num_classes, name=None):
    """One-hot encode integer ids: ``out[..., k] = 1.0 if x[...] == k``.

    Args:
        x (Tensor): int32/int64 ids in ``[0, num_classes)``.
        num_classes (int): the depth of the encoding.
        name (str, optional): unused.

    Returns:
        Tensor: float32, shape ``x.shape + [num_classes]``.

    Example:
        >>> F.one_hot(paddle.to_tensor([0, 2]), 3)   # [[1, 0, 0], [0, 0, 1]]
    """
    x = _int_ids(x, "one_hot")
    if isinstance(num_classes, Tensor):
        num_classes = num_classes.item()
    if isinstance(num_classes, bool) or not isinstance(num_classes, numbers.Integral) or \
            num_classes < 1:
        raise ValueError(f"one_hot: num_classes must be a positive int, got {num_classes!r}")
    ids = x._data
    _check_range(ids, int(num_classes), "one_hot", "num_classes")
    xp = backend.get_array_module(ids)
    out = ids[..., None] == xp.arange(int(num_classes), dtype=ids.dtype)
    return _wrap(out.astype(np.float32))


@op("embedding", saves=())
def _embedding_kernel(ids, w, padding_idx):
    xp = backend.get_array_module(w)
    out = xp.take(w, ids, axis=0)
    if padding_idx >= 0:
        out[ids == padding_idx] = 0

    def bw(g):
        d = w.shape[1]
        acc = np.float32 if g.dtype in _dt.LOW_FLOATS else g.dtype
        gw = xp.zeros(w.shape, dtype=acc)
        flat = ids.reshape(-1)
        g2 = g.reshape(-1, d).astype(acc, copy=False)
        backend.index_add(gw, flat, g2)
        if padding_idx >= 0:
            gw[padding_idx] = 0
        return None, gw.astype(w.dtype, copy=False), None

    return out, bw


def embedding(x, weight, padding_idx=None, sparse=False, name=None):
    """Look up rows of ``weight``: ``out[...] = weight[x[...]]``.

    Args:
        x (Tensor): int32/int64 ids in ``[0, num_embeddings)``.
        weight (Tensor): ``[num_embeddings, embedding_dim]``.
        padding_idx (int, optional): an id whose output is all zeros and whose row gets no
            gradient; negative values count from the end.
        sparse (bool): accepted for compatibility; gradients are dense.
        name (str, optional): unused.

    Returns:
        Tensor: ``x.shape + [embedding_dim]``, weight's dtype.

    Example:
        >>> w = paddle.arange(6, dtype='float32').reshape([3, 2])
        >>> F.embedding(paddle.to_tensor([2, 0]), w)   # [[4, 5], [0, 1]]
    """
    x = _int_ids(x, "embedding")
    weight = tensor_arg(weight, "embedding", "weight")
    if weight.ndim != 2:
        raise ValueError(f"embedding: weight must be 2-D [num_embeddings, embedding_dim], got "
                         f"shape {weight.shape}")
    if not _dt.is_float_np(weight._data.dtype):
        raise TypeError(f"embedding: weight must be a floating point Tensor, got dtype "
                        f"{weight.dtype.name}")
    n = weight.shape[0]
    if padding_idx is None:
        pidx = -1
    else:
        if isinstance(padding_idx, bool) or not isinstance(padding_idx, numbers.Integral):
            raise TypeError(f"embedding: padding_idx must be an int or None, got "
                            f"{type(padding_idx).__name__}")
        if not -n <= padding_idx < n:
            raise ValueError(f"embedding: padding_idx must be within [{-n}, {n}), got "
                             f"{padding_idx}")
        pidx = int(padding_idx) % n
    _check_range(x._data, n, "embedding", f"num_embeddings of weight {weight.shape}")
    return apply(_embedding_kernel, x, weight, pidx)
