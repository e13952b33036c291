"""The fused layers of ``paddle.incubate.nn``: same constructor arguments, parameter names and
shapes (hence state_dict keys) as Paddle 2.6; the forward is the composed math of
:mod:`paddle_hl.incubate.nn.functional`."""

from __future__ import annotations

import paddle_hl as _T

from ...nn import functional as F
from ...nn.initializer import Constant
from ...nn.layer.layers import Layer
from . import functional as IF

__all__ = []


def _convert_mask(mask, dtype):
    """Bool/int masks mean "attend where True/1": 0 there and -1e9 elsewhere; floats add as is."""
    if mask is None:
        return None
    if mask.dtype in (_T.bool, _T.int32, _T.int64, _T.int8, _T.uint8, _T.int16):
        return _T.scale(_T.subtract(_T.cast(mask, dtype), _T.ones([], dtype)), 1e9)
    return mask if mask.dtype == dtype else _T.cast(mask, dtype)


def _positive(v, where, arg):
    if not isinstance(v, int) or v <= 0:
        raise ValueError(f"{where}: {arg} must be a positive int, got {v!r}")


class FusedLinear(Layer):
    """Linear layer on the fused GEMM epilogue: ``x @ weight + bias``.

    Args:
        in_features (int), out_features (int): sizes.
        weight_attr, bias_attr: ParamAttr of weight (``[in, out]``, or ``[out, in]`` with
            ``transpose_weight``) and bias (``[out]``; False for none).
        transpose_weight (bool): store the weight transposed.

    Example:
        >>> fc = paddle.incubate.nn.FusedLinear(4, 2)
        >>> fc(paddle.rand([3, 4])).shape
        [3, 2]
    """

    def __init__(self, in_features, out_features, weight_attr=None, bias_attr=None,
                 transpose_weight=False, name=None):
        super().__init__()
        _positive(in_features, "FusedLinear", "in_features")
        _positive(out_features, "FusedLinear", "out_features")
        shape = [out_features, in_features] if transpose_weight else [in_features, out_features]
        self.weight = self.create_parameter(shape, weight_attr, self._dtype, False)
        self.bias = self.create_parameter([out_features], bias_attr, self._dtype, True)
        self.transpose_weight = transpose_weight
        self.name = name

    def forward(self, input):
        return IF.fused_linear(input, self.weight, self.bias, self.transpose_weight)


class FusedDropoutAdd(Layer):
    """``dropout(x, p) + y``.

    Example:
        >>> paddle.incubate.nn.FusedDropoutAdd(p=0.1)(x, y)
    """

    def __init__(self, p=0.5, mode="upscale_in_train", name=None):
        super().__init__()
        IF.fused_ops._check_rate(p, "FusedDropoutAdd", "p")
        IF.fused_ops._check_mode(mode, "FusedDropoutAdd")
        self.p, self.mode, self.name = p, mode, name

    def forward(self, x, y):
        return IF.fused_dropout_add(x, y, self.p, self.training, self.mode)

    def extra_repr(self):
        return f"p={self.p}, mode={self.mode}"


class FusedDropout(Layer):
    """Dropout (Paddle's fused dropout layer).

    Example:
        >>> paddle.incubate.nn.FusedDropout(p=0.5)(x)
    """

    def __init__(self, p=0.5, axis=None, mode="upscale_in_train", name=None):
        super().__init__()
        IF.fused_ops._check_rate(p, "FusedDropout", "p")
        IF.fused_ops._check_mode(mode, "FusedDropout")
        self.p, self.axis, self.mode, self.name = p, axis, mode, name

    def forward(self, input):
        return F.dropout(input, self.p, self.axis, self.training, self.mode)

    def extra_repr(self):
        return f"p={self.p}, axis={self.axis}, mode={self.mode}"


class FusedBiasDropoutResidualLayerNorm(Layer):
    """``layer_norm(residual + dropout(x + linear_bias))``.

    Parameters: ``linear_bias``, ``ln_scale``, ``ln_bias`` (each ``[embed_dim]``).

    Example:
        >>> layer = paddle.incubate.nn.FusedBiasDropoutResidualLayerNorm(8, dropout_rate=0.0)
        >>> layer(x, residual)
    """

    def __init__(self, embed_dim, dropout_rate=0.5, weight_attr=None, bias_attr=None,
                 epsilon=1e-05, name=None):
        super().__init__()
        _positive(embed_dim, "FusedBiasDropoutResidualLayerNorm", "embed_dim")
        self.embed_dim = embed_dim
        self.linear_bias = self.create_parameter([embed_dim], bias_attr, self._dtype, True)
        self.ln_scale = self.create_parameter([embed_dim], weight_attr, self._dtype, False,
                                              Constant(1.0))
        self.ln_bias = self.create_parameter([embed_dim], bias_attr, self._dtype, True)
        self.dropout_rate, self._epsilon, self.name = dropout_rate, epsilon, name

    def forward(self, x, residual):
        return IF.fused_bias_dropout_residual_layer_norm(
            x, residual, self.linear_bias, self.ln_scale, self.ln_bias, self.dropout_rate,
            self._epsilon, self.training)

    def extra_repr(self):
        return (f"embed_dim={self.embed_dim}, dropout_rate={self.dropout_rate}, "
                f"epsilon={self._epsilon}")


class FusedMultiHeadAttention(Layer):
    """Self-attention block with fused QKV projection, residual and layer norm.

    Parameters (Paddle's names): ``qkv_weight`` ``[3, num_heads, head_dim, embed_dim]`` (or
    ``[embed_dim, 3*embed_dim]`` with ``transpose_qkv_wb``), ``qkv_bias``, ``linear_weight``
    ``[embed_dim, embed_dim]``, ``linear_bias``, and ``pre_ln_scale``/``pre_ln_bias``
    (pre-norm) or ``ln_scale``/``ln_bias`` (post-norm).

    Example:
        >>> attn = paddle.incubate.nn.FusedMultiHeadAttention(8, 2)
        >>> attn(paddle.rand([2, 5, 8])).shape
        [2, 5, 8]
    """

    def __init__(self, embed_dim, num_heads, dropout_rate=0.5, attn_dropout_rate=0.5, kdim=None,
                 vdim=None, normalize_before=False, need_weights=False, qkv_weight_attr=None,
                 qkv_bias_attr=None, linear_weight_attr=None, linear_bias_attr=None,
                 pre_ln_scale_attr=None, pre_ln_bias_attr=None, ln_scale_attr=None,
                 ln_bias_attr=None, epsilon=1e-5, nranks=1, ring_id=-1, transpose_qkv_wb=False,
                 name=None):
        super().__init__()
        where = "FusedMultiHeadAttention"
        _positive(embed_dim, where, "embed_dim")
        _positive(num_heads, where, "num_heads")
        if embed_dim % num_heads:
            raise ValueError(f"{where}: embed_dim {embed_dim} must be divisible by num_heads "
                             f"{num_heads}")
        if need_weights:
            raise ValueError(f"{where}: need_weights=True is not supported (as in Paddle)")
        if nranks != 1:
            raise ValueError(f"{where}: tensor-parallel nranks > 1 needs paddle_hl.distributed "
                             "model parallelism, which this layer does not implement")
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.head_dim = embed_dim // num_heads
        self.kdim, self.vdim = kdim, vdim
        self.normalize_before, self.need_weights = normalize_before, need_weights
        self.dropout_rate, self.attn_dropout_rate = dropout_rate, attn_dropout_rate
        self._epsilon, self.transpose_qkv_wb, self.name = epsilon, transpose_qkv_wb, name
        if transpose_qkv_wb:
            qkv_w, qkv_b = [embed_dim, 3 * embed_dim], [3 * embed_dim]
        else:
            qkv_w = [3, num_heads, self.head_dim, embed_dim]
            qkv_b = [3, num_heads, self.head_dim]
        self.qkv_weight = self.create_parameter(qkv_w, qkv_weight_attr, self._dtype, False)
        self.qkv_bias = self.create_parameter(qkv_b, qkv_bias_attr, self._dtype, True)
        self.linear_weight = self.create_parameter([embed_dim, embed_dim], linear_weight_attr,
                                                   self._dtype, False)
        self.linear_bias = self.create_parameter([embed_dim], linear_bias_attr, self._dtype,
                                                 True)
        if normalize_before:
            self.pre_ln_scale = self.create_parameter([embed_dim], pre_ln_scale_attr,
                                                      self._dtype, False, Constant(1.0))
            self.pre_ln_bias = self.create_parameter([embed_dim], pre_ln_bias_attr,
                                                     self._dtype, True)
            self.ln_scale = self.ln_bias = None
        else:
            self.pre_ln_scale = self.pre_ln_bias = None
            self.ln_scale = self.create_parameter([embed_dim], ln_scale_attr, self._dtype, False,
                                                  Constant(1.0))
            self.ln_bias = self.create_parameter([embed_dim], ln_bias_attr, self._dtype, True)

    def forward(self, query, key=None, value=None, attn_mask=None, cache=None):
        for name, t in (("key", key), ("value", value)):
            if t is not None and t is not query:
                raise ValueError(f"FusedMultiHeadAttention: only self-attention is fused; "
                                 f"{name} must be None or query itself")
        return IF.fused_multi_head_attention(
            query, self.qkv_weight, self.linear_weight, self.normalize_before,
            self.pre_ln_scale, self.pre_ln_bias, self.ln_scale, self.ln_bias, self._epsilon,
            self.qkv_bias, self.linear_bias, cache, _convert_mask(attn_mask, query.dtype),
            self.dropout_rate, self.attn_dropout_rate, self._epsilon, self.training,
            num_heads=self.num_heads, transpose_qkv_wb=self.transpose_qkv_wb)

    def extra_repr(self):
        return (f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, "
                f"dropout_rate={self.dropout_rate}, attn_dropout_rate={self.attn_dropout_rate}, "
                f"epsilon={self._epsilon}, kdim={self.kdim}, vdim={self.vdim}, "
                f"normalize_before={self.normalize_before}, need_weights={self.need_weights}, "
                f"dtype={self._dtype}")


class FusedFeedForward(Layer):
    """Transformer feed-forward block with residual and layer norm.

    Parameters (Paddle's names): ``_linear1_weight`` ``[d_model, dim_feedforward]``,
    ``_linear1_bias``, ``_linear2_weight``, ``_linear2_bias``, and ``_ln1_scale``/``_ln1_bias``
    (pre-norm) or ``_ln2_scale``/``_ln2_bias`` (post-norm).

    Example:
        >>> ffn = paddle.incubate.nn.FusedFeedForward(8, 16)
        >>> ffn(paddle.rand([2, 5, 8])).shape
        [2, 5, 8]
    """

    def __init__(self, d_model, dim_feedforward, dropout_rate=0.1, epsilon=1e-05,
                 activation="relu", act_dropout_rate=None, normalize_before=False,
                 linear1_weight_attr=None, linear1_bias_attr=None, linear2_weight_attr=None,
                 linear2_bias_attr=None, ln1_scale_attr=None, ln1_bias_attr=None,
                 ln2_scale_attr=None, ln2_bias_attr=None, nranks=1, ring_id=-1, name=None):
        super().__init__()
        where = "FusedFeedForward"
        _positive(d_model, where, "d_model")
        _positive(dim_feedforward, where, "dim_feedforward")
        IF.fused_ops._act(activation, where)
        if nranks != 1:
            raise ValueError(f"{where}: tensor-parallel nranks > 1 is not implemented")
        self._d_model, self._dim_feedforward = d_model, dim_feedforward
        self._dropout_rate = dropout_rate
        self._act_dropout_rate = dropout_rate if act_dropout_rate is None else act_dropout_rate
        self._act_method, self._normalize_before = activation, normalize_before
        self._epsilon, self.name = epsilon, name
        dt = self._dtype
        self._linear1_weight = self.create_parameter([d_model, dim_feedforward],
                                                     linear1_weight_attr, dt, False)
        self._linear1_bias = self.create_parameter([dim_feedforward], linear1_bias_attr, dt, True)
        self._linear2_weight = self.create_parameter([dim_feedforward, d_model],
                                                     linear2_weight_attr, dt, False)
        self._linear2_bias = self.create_parameter([d_model], linear2_bias_attr, dt, True)
        if normalize_before:
            self._ln1_scale = self.create_parameter([d_model], ln1_scale_attr, dt, False,
                                                    Constant(1.0))
            self._ln1_bias = self.create_parameter([d_model], ln1_bias_attr, dt, True)
            self._ln2_scale = self._ln2_bias = None
        else:
            self._ln1_scale = self._ln1_bias = None
            self._ln2_scale = self.create_parameter([d_model], ln2_scale_attr, dt, False,
                                                    Constant(1.0))
            self._ln2_bias = self.create_parameter([d_model], ln2_bias_attr, dt, True)

    def forward(self, src, cache=None):
        return IF.fused_feedforward(
            src, self._linear1_weight, self._linear2_weight, self._linear1_bias,
            self._linear2_bias, self._ln1_scale, self._ln1_bias, self._ln2_scale, self._ln2_bias,
            self._act_dropout_rate, self._dropout_rate, self._act_method, self._epsilon,
            self._epsilon, self._normalize_before, self.training)

    def extra_repr(self):
        return (f"d_model={self._d_model}, dim_feedforward={self._dim_feedforward}, "
                f"dropout_rate={self._dropout_rate}, epsilon={self._epsilon}, "
                f"activation={self._act_method}, act_dropout_rate={self._act_dropout_rate}, "
                f"normalize_before={self._normalize_before}, dtype={self._dtype}")


class FusedTransformerEncoderLayer(Layer):
    """Transformer encoder layer: :class:`FusedMultiHeadAttention` (``fused_attn``) then
    :class:`FusedFeedForward` (``ffn``).

    Example:
        >>> enc = paddle.incubate.nn.FusedTransformerEncoderLayer(8, 2, 16, dropout_rate=0.0)
        >>> enc(paddle.rand([2, 5, 8])).shape
        [2, 5, 8]
    """

    def __init__(self, d_model, nhead, dim_feedforward, dropout_rate=0.1, activation="relu",
                 attn_dropout_rate=None, act_dropout_rate=None, normalize_before=False,
                 weight_attr=None, bias_attr=None):
        super().__init__()
        where = "FusedTransformerEncoderLayer"
        _positive(d_model, where, "d_model")
        _positive(nhead, where, "nhead")
        _positive(dim_feedforward, where, "dim_feedforward")
        attn_dropout_rate = dropout_rate if attn_dropout_rate is None else attn_dropout_rate
        act_dropout_rate = dropout_rate if act_dropout_rate is None else act_dropout_rate
        self.normalize_before = normalize_before
        w = weight_attr if not isinstance(weight_attr, (list, tuple)) else weight_attr[0]
        b = bias_attr if not isinstance(bias_attr, (list, tuple)) else bias_attr[0]
        self.fused_attn = FusedMultiHeadAttention(
            d_model, nhead, dropout_rate=dropout_rate, attn_dropout_rate=attn_dropout_rate,
            normalize_before=normalize_before, qkv_weight_attr=w, qkv_bias_attr=b,
            linear_weight_attr=w, linear_bias_attr=b, pre_ln_scale_attr=w, pre_ln_bias_attr=b,
            ln_scale_attr=w, ln_bias_attr=b)
        w2 = weight_attr if not isinstance(weight_attr, (list, tuple)) else weight_attr[-1]
        b2 = bias_attr if not isinstance(bias_attr, (list, tuple)) else bias_attr[-1]
        self.ffn = FusedFeedForward(
            d_model, dim_feedforward, dropout_rate=dropout_rate, activation=activation,
            act_dropout_rate=act_dropout_rate, normalize_before=normalize_before,
            linear1_weight_attr=w2, linear1_bias_attr=b2, linear2_weight_attr=w2,
            linear2_bias_attr=b2)

    def forward(self, src, src_mask=None, cache=None):
        if cache is None:
            return self.ffn(self.fused_attn(src, attn_mask=src_mask))
        out, new_cache = self.fused_attn(src, attn_mask=src_mask, cache=cache)
        return self.ffn(out), new_cache
