"""Scaled dot-product attention (``paddle.nn.functional.scaled_dot_product_attention``).

The attention core, ``softmax(Q Kᵀ · scale + mask) V`` with optional dropout on the weights, is
one fused kernel with a hand-written backward: the forward keeps the (dropped-out) weights and
the dropout mask, and backward recomputes nothing. MultiHeadAttention uses the same kernel on
its ``[batch, heads, seq, head_dim]`` layout.
"""

from __future__ import annotations

import numpy as np

from ... import backend
from ...framework import dtype as _dt
from ...framework import place as _pl
from ...framework import random as _rnd
from ...framework.op import _unbroadcast, apply, op
from ...framework.tensor import Tensor, _wrap
from ...tensor._helpers import cast_to

__all__ = []


# ---------------------------------------------------------------------------- dropout helper
def _keep_mask(shape, p, arr):
    """A boolean keep-mask of ``shape`` (True with probability 1 - p) on ``arr``'s device."""
    u = _rnd.uniform_array(shape, np.float32, place=_pl.place_of(arr))
    return u >= p


@op("dropout", saves=())
def _masked_scale(x, keep, scale):
    """out = x · keep · scale (dropout with a precomputed mask)."""
    out = x * keep
    if scale != 1.0:
        out *= x.dtype.type(scale)

    def backward(g):
        gx = g * keep
        if scale != 1.0:
            gx *= g.dtype.type(scale)
        return gx, None

    return out, backward


def _dropout(x: Tensor, p: float, training: bool = True) -> Tensor:
    """Upscale-in-train dropout of ``x`` (the mode RNN and attention layers use)."""
    if not training or p == 0.0:
        return x
    keep = _keep_mask(x._data.shape, p, x._data)
    scale = 0.0 if p >= 1.0 else 1.0 / (1.0 - p)
    return apply(_masked_scale, x, keep, scale=scale)


# ---------------------------------------------------------------------------- attention core
def _softmax_last(s):
    xp = backend.get_array_module(s)
    m = s.max(axis=-1, keepdims=True)
    # a row whose scores are all -inf gives nan, as a plain softmax does
    e = xp.exp(s - m)
    e /= e.sum(axis=-1, keepdims=True)
    return e


@op("scaled_dot_product_attention", saves=(0, 1, 2))
def _attention(q, k, v, mask, keep, scale, drop_scale):
    """Attention on ``[..., Lq, d]`` / ``[..., Lk, d]`` / ``[..., Lk, dv]`` arrays.

    ``mask`` is an additive float mask broadcastable to ``[..., Lq, Lk]`` (or None); ``keep`` a
    dropout keep-mask of that shape (or None). Returns ``(out, weights)``, the weights after
    dropout, as Paddle's MultiHeadAttention returns them.
    """
    xp = backend.get_array_module(q)
    s = xp.matmul(q, xp.swapaxes(k, -1, -2))
    s *= s.dtype.type(scale)
    if mask is not None:
        s = s + mask
    p = _softmax_last(s)
    if keep is not None:
        pd = p * keep
        pd *= pd.dtype.type(drop_scale)
    else:
        pd = p
    out = xp.matmul(pd, v)

    def backward(g_out, g_w):
        dpd = None
        if g_out is not None:
            dpd = xp.matmul(g_out, xp.swapaxes(v, -1, -2))
            dv = xp.matmul(xp.swapaxes(pd, -1, -2), g_out)
        else:
            dv = xp.zeros_like(v)
        if g_w is not None:
            dpd = g_w if dpd is None else dpd + g_w
        if dpd is None:
            return None, None, None, None, None
        if keep is not None:
            dp = dpd * keep
            dp *= dp.dtype.type(drop_scale)
        else:
            dp = dpd
        ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True))
        dmask = None if mask is None or not hasattr(mask, "shape") else _unbroadcast(
            ds, mask.shape)
        ds = ds * ds.dtype.type(scale)  # not in place: dmask may share ds's memory
        dq = xp.matmul(ds, k)
        dk = xp.matmul(xp.swapaxes(ds, -1, -2), q)
        if dq.shape != q.shape:
            dq = _unbroadcast(dq, q.shape)
        if dk.shape != k.shape:
            dk = _unbroadcast(dk, k.shape)
        if dv.shape != v.shape:
            dv = _unbroadcast(dv, v.shape)
        return dq, dk, dv, dmask, None

    return (out, pd), backward


def _additive_mask(mask, dtype, where):
    """Paddle's attention-mask convention: bool/int masks mark the positions to *keep* and
    become 0 / -1e9; float masks are added as they are (cast to the scores' dtype)."""
    if mask is None:
        return None
    if not isinstance(mask, Tensor):
        raise TypeError(f"{where}: attn_mask must be a Tensor, got {type(mask).__name__}")
    kind = mask._data.dtype.kind
    npd = _dt.to_np(dtype)
    if kind in "biu":
        arr = mask._data.astype(npd)
        arr -= 1
        arr *= 1e9
        return _wrap(arr)
    if mask._data.dtype != npd:
        return cast_to(mask, npd)
    return mask


def _attention_core(q, k, v, mask, p, training, scale, where):
    """Run the fused kernel on Tensors; dropout with probability ``p`` when training."""
    keep = None
    drop_scale = 1.0
    if training and p > 0.0:
        lq, lk = q._data.shape[-2], k._data.shape[-2]
        keep = _keep_mask(tuple(q._data.shape[:-2]) + (lq, lk), p, q._data)
        drop_scale = 0.0 if p >= 1.0 else 1.0 / (1.0 - p)
    return apply(_attention, q, k, v, mask, keep, scale=float(scale), drop_scale=drop_scale)


def _check_qkv(query, key, value, where):
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{where}: {name} must be a Tensor, got {type(t).__name__}")
        if t.ndim != 4:
            raise ValueError(f"{where}: {name} must be 4-D [batch, seq_len, num_heads, "
                             f"head_dim], got shape {t.shape}")
        if not _dt.is_float_np(t._data.dtype):
            raise TypeError(f"{where}: {name} must be a floating tensor, got {t.dtype}")
    qs, ks, vs = query.shape, key.shape, value.shape
    if ks[:3] != vs[:3]:
        raise ValueError(f"{where}: key {ks} and value {vs} must agree in batch, seq_len and "
                         "num_heads")
    if qs[0] != ks[0] or qs[2] != ks[2] or qs[3] != ks[3]:
        raise ValueError(f"{where}: query {qs} and key {ks} must agree in batch, num_heads "
                         "and head_dim")
    if not (query.dtype == key.dtype == value.dtype):
        raise TypeError(f"{where}: query, key and value must share one dtype, got "
                        f"{query.dtype}, {key.dtype}, {value.dtype}")


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, training=True, name=None) -> Tensor:
    """Scaled dot-product attention, ``softmax(Q Kᵀ / √d + mask) V``.

    Args:
        query (Tensor): ``[batch, seq_len, num_heads, head_dim]``.
        key (Tensor): ``[batch, seq_len_kv, num_heads, head_dim]``.
        value (Tensor): ``[batch, seq_len_kv, num_heads, head_dim_v]``.
        attn_mask (Tensor, optional): added to the scores; broadcastable to
            ``[batch, num_heads, seq_len, seq_len_kv]``. A bool mask keeps the True positions.
        dropout_p (float): dropout probability on the attention weights.
        is_causal (bool): mask the keys after each query position (position i attends to
            keys j <= i).
        training (bool): apply dropout only when True.
        name (str, optional): unused, as in Paddle.

    Returns:
        Tensor: ``[batch, seq_len, num_heads, head_dim_v]``, the dtype of ``query``.

    Example:
        >>> q = paddle.rand([1, 4, 2, 8])
        >>> out = paddle.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
    """
    where = "scaled_dot_product_attention"
    _check_qkv(query, key, value, where)
    if not 0.0 <= float(dropout_p) <= 1.0:
        raise ValueError(f"{where}: dropout_p must be in [0, 1], got {dropout_p}")
    from ...tensor.manipulation import transpose  # noqa: PLC0415

    perm = [0, 2, 1, 3]
    q, k, v = transpose(query, perm), transpose(key, perm), transpose(value, perm)
    mask = _additive_mask(attn_mask, query.dtype, where)
    lq, lk = query.shape[1], key.shape[1]
    if is_causal:
        xp = backend.get_array_module(query._data)
        npd = query._data.dtype
        causal = xp.triu(xp.full((lq, lk), -np.inf, dtype=npd), 1)
        mask = _wrap(causal) if mask is None else mask + _wrap(causal)
    if isinstance(mask, Tensor):
        try:
            np.broadcast_shapes(tuple(mask.shape), (query.shape[0], query.shape[2], lq, lk))
        except ValueError:
            raise ValueError(f"{where}: attn_mask of shape {mask.shape} does not broadcast to "
                             f"[batch, num_heads, seq_len, seq_len_kv] = "
                             f"{[query.shape[0], query.shape[2], lq, lk]}") from None
    scale = 1.0 / float(np.sqrt(query.shape[3])) if query.shape[3] else 1.0
    out, _ = _attention_core(q, k, v, mask, float(dropout_p), training, scale, where)
    return transpose(out, perm)


def flash_attention(query, key, value, dropout=0.0, causal=False, return_softmax=False, *,
                    fixed_seed_offset=None, rng_name="", training=True, name=None):
    """Attention in the layout of Paddle's flash-attention kernel (computed exactly, unfused).

    Args:
        query (Tensor): ``[batch, seq_len, num_heads, head_dim]``.
        key (Tensor): ``[batch, seq_len_kv, num_heads, head_dim]``.
        value (Tensor): ``[batch, seq_len_kv, num_heads, head_dim]``.
        dropout (float): dropout probability on the attention weights (when ``training``).
        causal (bool): position i attends to keys j <= i only.
        return_softmax (bool): also return the attention weights (before dropout).
        fixed_seed_offset, rng_name: accepted for Paddle's signature; dropout draws from
            paddle_hl's generator.
        training (bool): apply dropout only when True.
        name (str, optional): unused.

    Returns:
        tuple: ``(out, softmax)``: out ``[batch, seq_len, num_heads, head_dim]``; softmax
        ``[batch, num_heads, seq_len, seq_len_kv]`` when ``return_softmax``, else None.
    """
    out = scaled_dot_product_attention(query, key, value, None, dropout, causal, training)
    if not return_softmax:
        return out, None
    from ...tensor.manipulation import transpose  # noqa: PLC0415

    perm = [0, 2, 1, 3]
    q, k = transpose(query, perm), transpose(key, perm)
    scores = q.matmul(k, transpose_y=True) * (1.0 / float(np.sqrt(query.shape[3])))
    if causal:
        xp = backend.get_array_module(query._data)
        lq, lk = query.shape[1], key.shape[1]
        scores = scores + _wrap(xp.triu(xp.full((lq, lk), -np.inf, query._data.dtype), 1))
    from .activation import softmax  # noqa: PLC0415

    return out, softmax(scores, axis=-1)
