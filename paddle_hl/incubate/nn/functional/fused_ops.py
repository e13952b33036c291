"""The fused ops of ``paddle.incubate.nn.functional``, composed from paddle_hl ops."""

from __future__ import annotations

import numpy as np

import paddle_hl as _T

from ....framework.tensor import Tensor
from ....nn import functional as F
from ....tensor._helpers import check_tensor as _check_tensor

__all__ = []

_MODES = ("upscale_in_train", "downscale_in_infer")


def _check_mode(mode, op):
    if mode not in _MODES:
        raise ValueError(f"{op}: mode must be one of {_MODES}, got {mode!r}")


def _check_rate(p, op, arg):
    if not isinstance(p, (int, float)) or not 0 <= p <= 1:
        raise ValueError(f"{op}: {arg} must be a number in [0, 1], got {p!r}")


def _ln(x, scale, bias, eps):
    return F.layer_norm(x, x.shape[-1:], scale, bias, eps)


def fused_matmul_bias(x, y, bias=None, transpose_x=False, transpose_y=False, name=None):
    """``matmul(x, y) + bias`` (Paddle's fused GEMM epilogue).

    Args:
        x (Tensor): left operand.
        y (Tensor): right operand.
        bias (Tensor, optional): added to the last dim.
        transpose_x (bool): transpose the last two dims of x first.
        transpose_y (bool): transpose the last two dims of y first.

    Returns:
        Tensor: the product plus bias.

    Example:
        >>> out = fused_matmul_bias(paddle.rand([2, 4]), paddle.rand([4, 3]), paddle.rand([3]))
    """
    _check_tensor(x, "fused_matmul_bias", "x")
    _check_tensor(y, "fused_matmul_bias", "y")
    out = _T.matmul(x, y, transpose_x, transpose_y)
    return out if bias is None else _T.add(out, bias)


def fused_linear(x, weight, bias=None, transpose_weight=False, name=None):
    """``x @ weight + bias``; ``transpose_weight`` takes weight as ``[out, in]``.

    Example:
        >>> out = fused_linear(paddle.rand([2, 4]), paddle.rand([4, 3]))
    """
    return fused_matmul_bias(x, weight, bias, False, transpose_weight)


def fused_linear_activation(x, y, bias, trans_x=False, trans_y=False, activation=None):
    """``act(matmul(x, y) + bias)`` with ``activation`` None/'none', 'relu' or 'gelu'.

    Example:
        >>> out = fused_linear_activation(x, w, b, activation='relu')
    """
    if activation is None:
        activation = "none"
    if activation not in ("none", "relu", "gelu"):
        raise ValueError(f"fused_linear_activation: activation must be None, 'relu' or 'gelu', "
                         f"got {activation!r}")
    out = fused_matmul_bias(x, y, bias, trans_x, trans_y)
    if activation == "relu":
        return F.relu(out)
    if activation == "gelu":
        return F.gelu(out)
    return out


def fused_dropout_add(x, y, p=0.5, training=True, mode="upscale_in_train", name=None):
    """``dropout(x, p) + y``.

    Example:
        >>> out = fused_dropout_add(x, y, p=0.1)
    """
    _check_rate(p, "fused_dropout_add", "p")
    _check_mode(mode, "fused_dropout_add")
    return _T.add(F.dropout(x, p, training=training, mode=mode), y)


def fused_bias_dropout_residual_layer_norm(x, residual, bias=None, ln_scale=None, ln_bias=None,
                                           dropout_rate=0.5, ln_epsilon=1e-05, training=True,
                                           mode="upscale_in_train", name=None):
    """``layer_norm(residual + dropout(x + bias))`` over the last dim.

    Example:
        >>> out = fused_bias_dropout_residual_layer_norm(x, residual, bias, scale, shift)
    """
    op = "fused_bias_dropout_residual_layer_norm"
    _check_tensor(x, op, "x")
    _check_tensor(residual, op, "residual")
    if x.shape != residual.shape:
        raise ValueError(f"{op}: x {x.shape} and residual {residual.shape} must have one shape")
    _check_rate(dropout_rate, op, "dropout_rate")
    _check_mode(mode, op)
    h = x if bias is None else _T.add(x, bias)
    h = _T.add(residual, F.dropout(h, dropout_rate, training=training, mode=mode))
    return _ln(h, ln_scale, ln_bias, ln_epsilon)


def _act(name, op):
    if name == "relu":
        return F.relu
    if name == "gelu":
        return F.gelu
    raise ValueError(f"{op}: activation must be 'relu' or 'gelu', got {name!r}")


def fused_feedforward(x, linear1_weight, linear2_weight, linear1_bias=None, linear2_bias=None,
                      ln1_scale=None, ln1_bias=None, ln2_scale=None, ln2_bias=None,
                      dropout1_rate=0.5, dropout2_rate=0.5, activation="relu",
                      ln1_epsilon=1e-05, ln2_epsilon=1e-05, pre_layer_norm=False,
                      training=True, mode="upscale_in_train", ring_id=-1, add_residual=True,
                      name=None):
    """A transformer feed-forward block::

        out = layer_norm1(x) if pre_layer_norm else x
        out = dropout2(linear2(dropout1(act(linear1(out)))))
        out = x + out                      (add_residual)
        out = layer_norm2(out)             (post-norm only)

    Example:
        >>> out = fused_feedforward(x, w1, w2, b1, b2, dropout1_rate=0.0, dropout2_rate=0.0)
    """
    op = "fused_feedforward"
    _check_tensor(x, op, "x")
    _check_rate(dropout1_rate, op, "dropout1_rate")
    _check_rate(dropout2_rate, op, "dropout2_rate")
    _check_mode(mode, op)
    act = _act(activation, op)
    if x.shape[-1] != linear1_weight.shape[0]:
        raise ValueError(f"{op}: x's last dim {x.shape[-1]} must equal linear1_weight's first "
                         f"dim (weight shape {linear1_weight.shape})")
    h = _ln(x, ln1_scale, ln1_bias, ln1_epsilon) if pre_layer_norm else x
    h = F.linear(h, linear1_weight, linear1_bias)
    h = F.dropout(act(h), dropout1_rate, training=training, mode=mode)
    h = F.dropout(F.linear(h, linear2_weight, linear2_bias), dropout2_rate, training=training,
                  mode=mode)
    if add_residual:
        h = _T.add(x, h)
    if not pre_layer_norm:
        h = _ln(h, ln2_scale, ln2_bias, ln2_epsilon)
    return h


def fused_multi_head_attention(x, qkv_weight, linear_weight, pre_layer_norm=False,
                               pre_ln_scale=None, pre_ln_bias=None, ln_scale=None, ln_bias=None,
                               pre_ln_epsilon=1e-05, qkv_bias=None, linear_bias=None,
                               cache_kv=None, attn_mask=None, dropout_rate=0.5,
                               attn_dropout_rate=0.5, ln_epsilon=1e-05, training=True,
                               mode="upscale_in_train", ring_id=-1, add_residual=True,
                               num_heads=-1, transpose_qkv_wb=False, name=None):
    """Self-attention with the QKV projection, output projection, residual and layer norm::

        h = layer_norm(x, pre_ln_*) if pre_layer_norm else x
        q, k, v = split(h @ qkv_weight^T + qkv_bias)          heads: [b, n, s, d]
        k, v = concat(cache_kv[0], k), concat(cache_kv[1], v)  (with cache_kv)
        a = dropout(softmax(q * d**-0.5 @ k^T + attn_mask), attn_dropout_rate) @ v
        out = dropout(merge_heads(a) @ linear_weight + linear_bias, dropout_rate)
        out = x + out                                          (add_residual)
        out = layer_norm(out, ln_*)                            (post-norm only)

    Args:
        x (Tensor): ``[batch, seq, embed]``.
        qkv_weight (Tensor): ``[3, num_heads, head_dim, embed]``, or ``[embed, 3 * embed]``
            with ``transpose_qkv_wb`` (then ``num_heads`` is required).
        linear_weight (Tensor): ``[embed, embed]``.
        cache_kv (Tensor, optional): ``[2, batch, num_heads, cache_seq, head_dim]``.

    Returns:
        Tensor, or ``(out, cache_kv_out)`` when ``cache_kv`` is given.

    Example:
        >>> out = fused_multi_head_attention(x, qkv_w, lin_w, dropout_rate=0.0,
        ...                                  attn_dropout_rate=0.0)
    """
    op = "fused_multi_head_attention"
    _check_tensor(x, op, "x")
    if x.ndim != 3:
        raise ValueError(f"{op}: x must be [batch, seq, embed], got shape {x.shape}")
    _check_rate(dropout_rate, op, "dropout_rate")
    _check_rate(attn_dropout_rate, op, "attn_dropout_rate")
    _check_mode(mode, op)
    b, s, e = x.shape
    if transpose_qkv_wb:
        if num_heads <= 0:
            raise ValueError(f"{op}: num_heads must be given with transpose_qkv_wb=True")
        if qkv_weight.shape != [e, 3 * e]:
            raise ValueError(f"{op}: qkv_weight must be [embed, 3*embed] = {[e, 3 * e]} with "
                             f"transpose_qkv_wb, got {qkv_weight.shape}")
        nh, hd = num_heads, e // num_heads
    else:
        if qkv_weight.ndim != 4 or qkv_weight.shape[0] != 3 or qkv_weight.shape[3] != e:
            raise ValueError(f"{op}: qkv_weight must be [3, num_heads, head_dim, {e}], got "
                             f"{qkv_weight.shape}")
        nh, hd = qkv_weight.shape[1], qkv_weight.shape[2]
    h = _ln(x, pre_ln_scale, pre_ln_bias, pre_ln_epsilon) if pre_layer_norm else x
    if transpose_qkv_wb:
        qkv = _T.matmul(h, qkv_weight)
    else:
        qkv = _T.matmul(h, _T.reshape(qkv_weight, [3 * nh * hd, e]), transpose_y=True)
    if qkv_bias is not None:
        qkv = _T.add(qkv, _T.reshape(qkv_bias, [3 * nh * hd]))
    qkv = _T.transpose(_T.reshape(qkv, [b, s, 3, nh, hd]), [2, 0, 3, 1, 4])
    q, k, v = qkv[0], qkv[1], qkv[2]
    cache_out = None
    if cache_kv is not None:
        k = _T.concat([cache_kv[0], k], axis=2)
        v = _T.concat([cache_kv[1], v], axis=2)
        cache_out = _T.stack([k, v], axis=0)
    scores = _T.matmul(_T.scale(q, hd ** -0.5), k, transpose_y=True)
    if attn_mask is not None:
        scores = _T.add(scores, attn_mask)
    probs = F.dropout(F.softmax(scores, axis=-1), attn_dropout_rate, training=training, mode=mode)
    a = _T.reshape(_T.transpose(_T.matmul(probs, v), [0, 2, 1, 3]), [b, s, nh * hd])
    out = F.dropout(F.linear(a, linear_weight, linear_bias), dropout_rate, training=training,
                    mode=mode)
    if add_residual:
        out = _T.add(x, out)
    if not pre_layer_norm:
        out = _ln(out, ln_scale, ln_bias, ln_epsilon)
    return out if cache_out is None else (out, cache_out)


def _norm_axes(x, begin_norm_axis, op):
    if not isinstance(begin_norm_axis, int) or not -x.ndim <= begin_norm_axis < x.ndim:
        raise ValueError(f"{op}: begin_norm_axis must be an int in [{-x.ndim}, {x.ndim}), got "
                         f"{begin_norm_axis!r} for x of shape {x.shape}")
    b = begin_norm_axis % x.ndim
    return list(range(b, x.ndim)), b


def _prenorm_sum(x, bias, residual, alpha=1.0):
    h = x if bias is None else _T.add(x, bias)
    if residual is not None:
        h = _T.add(h, residual if alpha == 1.0 else _T.scale(residual, float(alpha)))
    return h


def fused_rms_norm(x, norm_weight, norm_bias, epsilon, begin_norm_axis, bias=None,
                   residual=None, quant_scale=-1, quant_round_type=0, quant_max_bound=0,
                   quant_min_bound=0):
    """RMS norm of ``x + bias + residual`` over the dims from ``begin_norm_axis``::

        h = x + bias + residual
        out = h / sqrt(mean(h**2) + epsilon) * norm_weight + norm_bias

    Returns:
        tuple: ``(out, residual_out)`` with ``residual_out = h`` (Paddle's two outputs).

    Example:
        >>> out, _ = fused_rms_norm(x, w, b, 1e-6, begin_norm_axis=1)
    """
    op = "fused_rms_norm"
    _check_tensor(x, op, "x")
    if quant_scale > 0:
        raise ValueError(f"{op}: int8 quantized output (quant_scale > 0) is not supported")
    axes, _ = _norm_axes(x, begin_norm_axis, op)
    h = _prenorm_sum(x, bias, residual)
    hf = h if h.dtype in (_T.float32, _T.float64) else _T.cast(h, "float32")
    ms = _T.mean(_T.square(hf), axis=axes, keepdim=True)
    out = _T.multiply(hf, _T.rsqrt(_T.add(ms, _T.full([], epsilon, hf.dtype))))
    if out.dtype != h.dtype:
        out = _T.cast(out, h.dtype)
    if norm_weight is not None:
        out = _T.multiply(out, norm_weight)
    if norm_bias is not None:
        out = _T.add(out, norm_bias)
    return out, h


def fused_layer_norm(x, norm_weight, norm_bias, epsilon, residual_alpha=1.0, begin_norm_axis=1,
                     bias=None, residual=None, quant_scale=-1, quant_round_type=0,
                     quant_max_bound=0, quant_min_bound=0):
    """Layer norm of ``x + bias + residual_alpha * residual`` over dims from
    ``begin_norm_axis``; without ``norm_weight`` and ``norm_bias`` only the sum is returned.

    Returns:
        tuple: ``(out, residual_out, mean, variance)`` as Paddle's kernel outputs
        (``mean``/``variance`` flattened over the leading dims); just the sum when both
        norm_weight and norm_bias are None.

    Example:
        >>> out = fused_layer_norm(x, w, b, 1e-5, begin_norm_axis=1)[0]
    """
    op = "fused_layer_norm"
    _check_tensor(x, op, "x")
    if quant_scale > 0:
        raise ValueError(f"{op}: int8 quantized output (quant_scale > 0) is not supported")
    axes, b = _norm_axes(x, begin_norm_axis, op)
    h = _prenorm_sum(x, bias, residual, residual_alpha)
    if norm_weight is None and norm_bias is None:
        return h
    mean = _T.mean(h, axis=axes, keepdim=True)
    var = _T.mean(_T.square(_T.subtract(h, mean)), axis=axes, keepdim=True)
    out = _T.multiply(_T.subtract(h, mean), _T.rsqrt(_T.add(var, _T.full([], epsilon, h.dtype))))
    if norm_weight is not None:
        out = _T.multiply(out, _T.reshape(norm_weight, h.shape[b:]))
    if norm_bias is not None:
        out = _T.add(out, _T.reshape(norm_bias, h.shape[b:]))
    lead = int(np.prod(h.shape[:b])) if b else 1
    return out, h, _T.reshape(mean, [lead]), _T.reshape(var, [lead])


def _rope_tables(seq, dim, dtype):
    inv = 1.0 / (10000.0 ** (np.arange(0, dim, 2, dtype=np.float64) / dim))
    ang = np.arange(seq, dtype=np.float64)[:, None] * inv[None, :]
    return np.sin(ang), np.cos(ang)


def fused_rotary_position_embedding(q, k=None, v=None, sin=None, cos=None, position_ids=None,
                                    use_neox_rotary_style=True):
    """Rotary position embedding of q (and k, v): ``out = x * cos + rotate(x) * sin``.

    With ``use_neox_rotary_style`` (Paddle's default) adjacent pairs ``(x[2i], x[2i+1])``
    rotate together; otherwise the front half pairs with the back half
    (``rotate(x) = concat(-x2, x1)``). Without sin/cos the angles are ``pos * 10000**(-2i/d)``;
    ``position_ids`` ([batch, seq]) picks the rows of sin/cos per batch.

    Args:
        q (Tensor): ``[batch, seq, heads, head_dim]`` (head_dim even).
        k, v (Tensor, optional): same layout as q.
        sin, cos (Tensor, optional): ``[seq, head_dim]`` or ``[1, seq, 1, head_dim]``.
        position_ids (Tensor, optional): int64 ``[batch, seq]``.

    Returns:
        tuple: ``(out_q, out_k, out_v)``, None for the inputs not given.

    Example:
        >>> oq, ok, _ = fused_rotary_position_embedding(q, k)
    """
    op = "fused_rotary_position_embedding"
    _check_tensor(q, op, "q")
    if q.ndim != 4 or q.shape[-1] % 2:
        raise ValueError(f"{op}: q must be [batch, seq, heads, head_dim] with an even "
                         f"head_dim, got shape {q.shape}")
    bsz, seq, _, dim = q.shape
    for name, t in (("k", k), ("v", v)):
        if t is not None and (t.ndim != 4 or t.shape[1] != seq or t.shape[3] != dim):
            raise ValueError(f"{op}: {name} must be [batch, {seq}, heads, {dim}], got {t.shape}")
    if (sin is None) != (cos is None):
        raise ValueError(f"{op}: give both sin and cos, or neither")
    if sin is None:
        s, c = _rope_tables(seq if position_ids is None else max(
            seq, int(position_ids.max().item()) + 1), dim, q.dtype)
        # each angle covers one rotated pair: repeat it on both members of the pair
        if use_neox_rotary_style:
            s, c = np.repeat(s, 2, axis=-1), np.repeat(c, 2, axis=-1)
        else:
            s, c = np.concatenate([s, s], -1), np.concatenate([c, c], -1)
        npd = q.numpy().dtype
        sin = Tensor(s.astype(npd))
        cos = Tensor(c.astype(npd))
    else:
        for name, t in (("sin", sin), ("cos", cos)):
            if t.shape not in ([t.shape[0], dim], [1, t.shape[1] if t.ndim == 4 else 0, 1, dim]):
                raise ValueError(f"{op}: {name} must be [seq, {dim}] or [1, seq, 1, {dim}], got "
                                 f"{t.shape}")
        sin = _T.reshape(sin, [-1, dim])
        cos = _T.reshape(cos, [-1, dim])
    if position_ids is not None:
        if position_ids.shape != [bsz, seq]:
            raise ValueError(f"{op}: position_ids must be [{bsz}, {seq}], got "
                             f"{position_ids.shape}")
        sin = _T.unsqueeze(_T.gather(sin, _T.reshape(position_ids, [-1])).reshape(
            [bsz, seq, dim]), 2)
        cos = _T.unsqueeze(_T.gather(cos, _T.reshape(position_ids, [-1])).reshape(
            [bsz, seq, dim]), 2)
    else:
        sin = _T.reshape(sin[:seq], [1, seq, 1, dim])
        cos = _T.reshape(cos[:seq], [1, seq, 1, dim])

    def rotate(x):
        if use_neox_rotary_style:
            pairs = _T.reshape(x, x.shape[:-1] + [dim // 2, 2])
            x0, x1 = pairs[..., 0], pairs[..., 1]
            return _T.reshape(_T.stack([_T.scale(x1, -1.0), x0], axis=-1), x.shape)
        x1, x2 = x[..., : dim // 2], x[..., dim // 2:]
        return _T.concat([_T.scale(x2, -1.0), x1], axis=-1)

    def emb(x):
        if x is None:
            return None
        return _T.add(_T.multiply(x, _T.cast(cos, x.dtype)),
                      _T.multiply(rotate(x), _T.cast(sin, x.dtype)))

    return emb(q), emb(k), emb(v)
