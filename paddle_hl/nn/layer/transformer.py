"""Attention and transformer layers: MultiHeadAttention, TransformerEncoderLayer /
TransformerEncoder, TransformerDecoderLayer / TransformerDecoder and Transformer.

The attention core (scores, mask, softmax, dropout, weighted sum) is one fused kernel with a
hand-written backward (``functional/flash_attention.py``); the projections, feed-forward and
normalisation are the Linear, Dropout and LayerNorm layers, so parameter names and state_dict
keys are Paddle's.
"""

from __future__ import annotations

import collections
import copy

import numpy as np

from ... import backend
from ...framework.tensor import Tensor, _wrap
from ...tensor.manipulation import concat, reshape, transpose
from ..functional.flash_attention import _additive_mask, _attention_core
from .common import Dropout, Linear
from .container import LayerList
from .layers import Layer
from .norm import LayerNorm

__all__ = []


def _positive(cls, **kw):
    for arg, v in kw.items():
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{cls}: {arg} must be an int, got {type(v).__name__}")
        if v <= 0:
            raise ValueError(f"{cls}: expected {arg} to be greater than 0, but received {v}")


def _attr_list(attr, n, where):
    """A ``weight_attr``/``bias_attr`` given once or as a list of ``n`` (one per sublayer)."""
    if isinstance(attr, (list, tuple)):
        if len(attr) == 1:
            return [attr[0]] * n
        if len(attr) != n:
            raise ValueError(f"{where}: expected {n} parameter attributes in the list, got "
                             f"{len(attr)}")
        return list(attr)
    return [attr] * n


def _convert_mask(mask, dtype, where):
    """Paddle's mask convention for every transformer layer (see ``_additive_mask``)."""
    return _additive_mask(mask, dtype, where)


def _convert_attention_mask(attn_mask, dtype):
    """Paddle's helper that model code imports: a bool/int mask (True/1 keeps a position)
    becomes an additive float mask of 0 and -1e9; a float mask is cast to ``dtype``; None
    stays None."""
    return _additive_mask(attn_mask, dtype, "_convert_attention_mask")


def _convert_param_attr_to_list(param_attr, n):
    """Paddle's helper that model code imports: ``n`` parameter attributes from one given for
    all (repeated) or a list of ``n``. ``False`` entries stay ``False`` (no parameter); anything
    else becomes a ``ParamAttr``."""
    from ..param_attr import ParamAttr  # noqa: PLC0415

    def one(a):
        return False if a is False else ParamAttr._to_attr(a)

    if isinstance(param_attr, (list, tuple)):
        if len(param_attr) != n:
            raise ValueError(f"_convert_param_attr_to_list: length of param_attr should be {n} "
                             f"when it is a list/tuple, got {len(param_attr)}")
        return [one(a) for a in param_attr]
    if isinstance(param_attr, ParamAttr):
        return [copy.deepcopy(param_attr) for _ in range(n)]
    return [one(param_attr) for _ in range(n)]


def _activation(name, where):
    from ..functional import activation as fa  # noqa: PLC0415

    fn = getattr(fa, name, None) if isinstance(name, str) else None
    # a public activation function of that family (not a helper it imports)
    if fn is None or name.startswith("_") or getattr(fn, "__module__", None) != fa.__name__:
        raise ValueError(f"{where}: unknown activation {name!r}")
    return fn


class MultiHeadAttention(Layer):
    """Multi-head attention: queries attend to keys/values in ``num_heads`` subspaces.

    Args:
        embed_dim (int): feature size of the queries and of the output.
        num_heads (int): number of heads; must divide ``embed_dim``.
        dropout (float): dropout on the attention weights (training only).
        kdim (int, optional): feature size of the keys (default ``embed_dim``).
        vdim (int, optional): feature size of the values (default ``embed_dim``).
        need_weights (bool): also return the attention weights.
        weight_attr (ParamAttr, optional): for the four projection weights.
        bias_attr (ParamAttr|bool, optional): for their biases (False: no bias).

    ``forward(query, key=None, value=None, attn_mask=None, cache=None)``: query ``[batch,
    len_q, embed_dim]``, key/value ``[batch, len_k, kdim/vdim]`` (default: query). ``attn_mask``
    broadcasts to ``[batch, num_heads, len_q, len_k]``; bool/int masks keep the True/1 positions,
    float masks are added to the scores. Returns the output ``[batch, len_q, embed_dim]``, plus
    the weights when ``need_weights`` and the updated cache when ``cache`` is given.

    Example:
        >>> mha = paddle.nn.MultiHeadAttention(64, 4)
        >>> out = mha(paddle.rand([2, 10, 64]))   # [2, 10, 64]
    """

    Cache = collections.namedtuple("Cache", ["k", "v"])
    StaticCache = collections.namedtuple("StaticCache", ["k", "v"])

    def __init__(self, embed_dim, num_heads, dropout=0.0, kdim=None, vdim=None,
                 need_weights=False, weight_attr=None, bias_attr=None):
        super().__init__()
        _positive("MultiHeadAttention", embed_dim=embed_dim, num_heads=num_heads)
        if embed_dim % num_heads:
            raise ValueError(f"MultiHeadAttention: embed_dim ({embed_dim}) must be divisible "
                             f"by num_heads ({num_heads})")
        if not 0.0 <= float(dropout) <= 1.0:
            raise ValueError(f"MultiHeadAttention: dropout must be in [0, 1], got {dropout}")
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.need_weights = need_weights
        self.head_dim = embed_dim // num_heads
        linear = Linear
        self.q_proj = linear(embed_dim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.k_proj = linear(self.kdim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.v_proj = linear(self.vdim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.out_proj = linear(embed_dim, embed_dim, weight_attr, bias_attr=bias_attr)

    def _heads(self, x):
        # [batch, len, embed] -> [batch, heads, len, head_dim]
        return transpose(reshape(x, [0, 0, self.num_heads, self.head_dim]), [0, 2, 1, 3])

    def _check(self, t, dim, what):
        if not isinstance(t, Tensor):
            raise TypeError(f"MultiHeadAttention: {what} must be a Tensor, got "
                            f"{type(t).__name__}")
        if t.ndim != 3 or t.shape[-1] != dim:
            raise ValueError(f"MultiHeadAttention: expected {what} of shape [batch_size, "
                             f"seq_len, {dim}], got {t.shape}")

    def compute_kv(self, key, value):
        """Project ``key`` and ``value`` into per-head keys and values ``[batch, num_heads,
        len, head_dim]``."""
        self._check(key, self.kdim, "key")
        self._check(value, self.vdim, "value")
        return self._heads(self.k_proj(key)), self._heads(self.v_proj(value))

    def gen_cache(self, key, value=None, type=Cache):  # noqa: A002  (Paddle's argument name)
        """Build a cache for incremental decoding.

        ``type=MultiHeadAttention.StaticCache`` projects ``key``/``value`` once (cross
        attention over a fixed memory). ``type=Cache`` with ``value=None`` gives empty
        keys/values ``[batch, num_heads, 0, head_dim]`` that grow by one step per call;
        with ``value`` given, ``Cache(key, value)`` wraps them as they are.
        """
        if type is MultiHeadAttention.StaticCache:
            k, v = self.compute_kv(key, value if value is not None else key)
            return self.StaticCache(k, v)
        if value is None:
            xp = backend.get_array_module(key._data)
            shape = (key.shape[0], self.num_heads, 0, self.head_dim)
            return self.Cache(_wrap(xp.zeros(shape, dtype=key._data.dtype)),
                              _wrap(xp.zeros(shape, dtype=key._data.dtype)))
        return self.Cache(key, value)

    def _prepare_qkv(self, query, key, value, cache=None):
        q = self._heads(self.q_proj(query))
        if isinstance(cache, self.StaticCache):
            k, v = cache.k, cache.v
        else:
            k, v = self.compute_kv(key, value)
        if isinstance(cache, self.Cache):
            k = concat([cache.k, k], axis=2)
            v = concat([cache.v, v], axis=2)
            cache = self.Cache(k, v)
        return q, k, v, cache

    def forward(self, query, key=None, value=None, attn_mask=None, cache=None):
        self._check(query, self.embed_dim, "query")
        key = query if key is None else key
        value = query if value is None else value
        if cache is not None and not isinstance(cache, (self.Cache, self.StaticCache)):
            raise TypeError("MultiHeadAttention: cache must be a MultiHeadAttention.Cache or "
                            f"StaticCache, got {type(cache).__name__}")
        q, k, v, new_cache = self._prepare_qkv(query, key, value, cache)
        mask = _convert_mask(attn_mask, q.dtype, "MultiHeadAttention")
        if mask is not None:
            want = (q.shape[0], self.num_heads, q.shape[2], k.shape[2])
            try:
                np.broadcast_shapes(tuple(mask.shape), want)
            except ValueError:
                raise ValueError(f"MultiHeadAttention: attn_mask of shape {mask.shape} does "
                                 f"not broadcast to [batch_size, num_heads, len_q, len_k] = "
                                 f"{list(want)}") from None
        out, weights = _attention_core(q, k, v, mask, float(self.dropout), self.training,
                                       self.head_dim ** -0.5, "MultiHeadAttention")
        out = reshape(transpose(out, [0, 2, 1, 3]), [0, 0, self.embed_dim])
        out = self.out_proj(out)
        outs = [out]
        if self.need_weights:
            outs.append(weights)
        if cache is not None:
            outs.append(new_cache)
        return out if len(outs) == 1 else tuple(outs)


class _TransformerLayer(Layer):
    """What the encoder and decoder layers share: their sublayers (attention, feed-forward,
    one LayerNorm and one Dropout per block, under Paddle's names) and the residual block
    around each of them."""

    def _build(self, where, attentions, d_model, nhead, dim_feedforward, dropout, activation,
               attn_dropout, act_dropout, normalize_before, weight_attr, bias_attr):
        """The sublayers, in Paddle's order (which fixes the parameter names and the order
        of their initial values): the attentions named in ``attentions``, the feed-forward
        network, then ``norm1``... and ``dropout1``..., one per block; ``weight_attr`` and
        ``bias_attr`` give one entry per attention and one for the feed-forward network."""
        self._config = dict(d_model=d_model, nhead=nhead, dim_feedforward=dim_feedforward,
                            dropout=dropout, activation=activation, attn_dropout=attn_dropout,
                            act_dropout=act_dropout, normalize_before=normalize_before,
                            weight_attr=weight_attr, bias_attr=bias_attr)
        _positive(where, d_model=d_model, nhead=nhead, dim_feedforward=dim_feedforward)
        attn_dropout = dropout if attn_dropout is None else attn_dropout
        act_dropout = dropout if act_dropout is None else act_dropout
        self.normalize_before = normalize_before
        blocks = len(attentions) + 1
        w = _attr_list(weight_attr, blocks, where)
        b = _attr_list(bias_attr, blocks, where)
        for i, name in enumerate(attentions):
            setattr(self, name, MultiHeadAttention(d_model, nhead, dropout=attn_dropout,
                                                   weight_attr=w[i], bias_attr=b[i]))
        self.linear1 = Linear(d_model, dim_feedforward, w[-1], bias_attr=b[-1])
        self.dropout = Dropout(act_dropout, mode="upscale_in_train")
        self.linear2 = Linear(dim_feedforward, d_model, w[-1], bias_attr=b[-1])
        for i in range(1, blocks + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model))
        for i in range(1, blocks + 1):
            setattr(self, f"dropout{i}", Dropout(dropout, mode="upscale_in_train"))
        self.activation = _activation(activation, where)

    def _block(self, x, k, sublayer):
        """Block ``k``: ``x + dropout_k(sublayer(x))`` with LayerNorm ``norm_k`` before the
        sublayer (``normalize_before``) or after the sum. ``sublayer`` returns its output and
        a new cache (or None), which is returned with the block's output."""
        norm, dropout = getattr(self, f"norm{k}"), getattr(self, f"dropout{k}")
        residual = x
        if self.normalize_before:
            x = norm(x)
        x, cache = sublayer(x)
        x = residual + dropout(x)
        if not self.normalize_before:
            x = norm(x)
        return x, cache

    @staticmethod
    def _attend(attn, kv, mask, cache):
        """The attention sublayer ``attn`` over keys and values ``kv`` (the block's own input
        when None), for :meth:`_block`."""
        def sublayer(x):
            src = x if kv is None else kv
            if cache is None:
                return attn(x, src, src, mask, None), None
            return attn(x, src, src, mask, cache)
        return sublayer

    def _feed_forward(self, x):
        """The feed-forward sublayer, for :meth:`_block`."""
        return self.linear2(self.dropout(self.activation(self.linear1(x)))), None


class TransformerEncoderLayer(_TransformerLayer):
    """One encoder layer: self-attention and a feed-forward network, each with a residual
    connection and LayerNorm (before the sublayer when ``normalize_before``, else after).

    Args:
        d_model (int): feature size.
        nhead (int): attention heads.
        dim_feedforward (int): hidden size of the feed-forward network.
        dropout (float): dropout after each sublayer.
        activation (str): the feed-forward activation (``'relu'``, ``'gelu'``, ...).
        attn_dropout (float, optional): dropout on the attention weights (default
            ``dropout``).
        act_dropout (float, optional): dropout after the activation (default ``dropout``).
        normalize_before (bool): pre-norm instead of post-norm.
        weight_attr, bias_attr (ParamAttr or a list of 2, optional): for the attention and the
            feed-forward parameters.

    ``forward(src, src_mask=None, cache=None)`` returns ``[batch, len, d_model]`` (and the new
    cache when ``cache`` is given).

    Example:
        >>> layer = paddle.nn.TransformerEncoderLayer(64, 4, 128)
        >>> out = layer(paddle.rand([2, 10, 64]))
    """

    def __init__(self, d_model, nhead, dim_feedforward, dropout=0.1, activation="relu",
                 attn_dropout=None, act_dropout=None, normalize_before=False, weight_attr=None,
                 bias_attr=None):
        super().__init__()
        self._build("TransformerEncoderLayer", ("self_attn",), d_model, nhead, dim_feedforward,
                    dropout, activation, attn_dropout, act_dropout, normalize_before,
                    weight_attr, bias_attr)

    def forward(self, src, src_mask=None, cache=None):
        src_mask = _convert_mask(src_mask, src.dtype, "TransformerEncoderLayer")
        src, cache = self._block(src, 1, self._attend(self.self_attn, None, src_mask, cache))
        src, _ = self._block(src, 2, self._feed_forward)
        return src if cache is None else (src, cache)

    def gen_cache(self, src):
        """An empty incremental cache for the self-attention (``MultiHeadAttention.Cache``)."""
        return self.self_attn.gen_cache(src, type=self.self_attn.Cache)


def _clones(layer, num_layers, cls_name):
    _positive(cls_name, num_layers=num_layers)
    layers = [layer]
    for _ in range(num_layers - 1):
        config = getattr(layer, "_config", None)
        # a fresh layer with the same arguments (new parameters), as Paddle builds the stack;
        # a layer without a recorded config (a user subclass) is deep-copied instead
        layers.append(type(layer)(**config) if config is not None else copy.deepcopy(layer))
    return LayerList(layers)


class TransformerEncoder(Layer):
    """A stack of ``num_layers`` encoder layers (the first is ``encoder_layer``, the others
    new layers built with its arguments), optionally followed by ``norm``.

    Args:
        encoder_layer (TransformerEncoderLayer): the layer to stack.
        num_layers (int): how many.
        norm (LayerNorm, optional): applied to the output.

    ``forward(src, src_mask=None, cache=None)`` returns ``[batch, len, d_model]`` (and the
    list of new caches when ``cache`` is given).
    """

    def __init__(self, encoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers, "TransformerEncoder")
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, src_mask=None, cache=None):
        src_mask = _convert_mask(src_mask, src.dtype, "TransformerEncoder")
        out = src
        new_caches = []
        for i, mod in enumerate(self.layers):
            if cache is None:
                out = mod(out, src_mask=src_mask)
            else:
                out, c = mod(out, src_mask=src_mask, cache=cache[i])
                new_caches.append(c)
        if self.norm is not None:
            out = self.norm(out)
        return out if cache is None else (out, new_caches)

    def gen_cache(self, src):
        """One incremental cache per layer."""
        return [layer.gen_cache(src) for layer in self.layers]


class TransformerDecoderLayer(_TransformerLayer):
    """One decoder layer: self-attention, cross-attention over the encoder memory and a
    feed-forward network, each with a residual connection and LayerNorm.

    Args:
        d_model, nhead, dim_feedforward, dropout, activation, attn_dropout, act_dropout,
            normalize_before: as :class:`TransformerEncoderLayer`.
        weight_attr, bias_attr (ParamAttr or a list of 3, optional): for the self-attention,
            the cross-attention and the feed-forward parameters.

    ``forward(tgt, memory, tgt_mask=None, memory_mask=None, cache=None)`` returns ``[batch,
    len_tgt, d_model]`` (and ``(incremental_cache, static_cache)`` when ``cache`` is given).
    """

    def __init__(self, d_model, nhead, dim_feedforward, dropout=0.1, activation="relu",
                 attn_dropout=None, act_dropout=None, normalize_before=False, weight_attr=None,
                 bias_attr=None):
        super().__init__()
        self._build("TransformerDecoderLayer", ("self_attn", "cross_attn"), d_model, nhead,
                    dim_feedforward, dropout, activation, attn_dropout, act_dropout,
                    normalize_before, weight_attr, bias_attr)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, cache=None):
        where = "TransformerDecoderLayer"
        tgt_mask = _convert_mask(tgt_mask, tgt.dtype, where)
        memory_mask = _convert_mask(memory_mask, memory.dtype, where)
        incremental, static = (None, None) if cache is None else cache
        tgt, incremental = self._block(tgt, 1, self._attend(self.self_attn, None, tgt_mask,
                                                            incremental))
        tgt, static = self._block(tgt, 2, self._attend(self.cross_attn, memory, memory_mask,
                                                       static))
        tgt, _ = self._block(tgt, 3, self._feed_forward)
        return tgt if cache is None else (tgt, (incremental, static))

    def gen_cache(self, memory):
        """``(incremental_cache, static_cache)``: an empty self-attention cache and the
        cross-attention keys/values of ``memory``."""
        incremental = self.self_attn.gen_cache(memory, type=self.self_attn.Cache)
        static = self.cross_attn.gen_cache(memory, memory, type=self.self_attn.StaticCache)
        return incremental, static


class TransformerDecoder(Layer):
    """A stack of ``num_layers`` decoder layers, optionally followed by ``norm``.

    ``forward(tgt, memory, tgt_mask=None, memory_mask=None, cache=None)`` returns ``[batch,
    len_tgt, d_model]`` (and the list of new caches when ``cache`` is given).
    """

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers, "TransformerDecoder")
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, cache=None):
        where = "TransformerDecoder"
        tgt_mask = _convert_mask(tgt_mask, tgt.dtype, where)
        memory_mask = _convert_mask(memory_mask, memory.dtype, where)
        out = tgt
        new_caches = []
        for i, mod in enumerate(self.layers):
            if cache is None:
                out = mod(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask, cache=None)
            else:
                out, c = mod(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                             cache=cache[i])
                new_caches.append(c)
        if self.norm is not None:
            out = self.norm(out)
        return out if cache is None else (out, new_caches)

    def gen_cache(self, memory, do_zip=False):
        """One ``(incremental, static)`` cache per layer; ``do_zip`` regroups them as
        ``[(incremental...), (static...)]``."""
        cache = [layer.gen_cache(memory) for layer in self.layers]
        if do_zip:
            cache = list(zip(*cache))
        return cache


def _split_attrs(attr, where):
    """Transformer's weight/bias attrs: one value, or a list of 1, 2 (encoder attention, ffn /
    decoder ffn) or 3 (self-attention, cross-attention, ffn) entries."""
    if not isinstance(attr, (list, tuple)):
        return attr, attr
    if len(attr) == 1:
        return [attr[0]], [attr[0]]
    if len(attr) == 2:
        return list(attr), [attr[0], attr[0], attr[-1]]
    if len(attr) == 3:
        return [attr[0], attr[-1]], list(attr)
    raise ValueError(f"{where}: length of parameter attributes should be 1, 2 or 3, got "
                     f"{len(attr)}")


class Transformer(Layer):
    """The encoder-decoder transformer ("Attention Is All You Need").

    Args:
        d_model (int): feature size.
        nhead (int): attention heads.
        num_encoder_layers, num_decoder_layers (int): stack depths.
        dim_feedforward (int): feed-forward hidden size.
        dropout (float): dropout after each sublayer.
        activation (str): feed-forward activation.
        attn_dropout, act_dropout (float, optional): default ``dropout``.
        normalize_before (bool): pre-norm layers (and a final LayerNorm on each stack).
        weight_attr, bias_attr (ParamAttr or a list of 1-3, optional): parameter attributes.
        custom_encoder, custom_decoder (Layer, optional): replace the built stacks.

    ``forward(src, tgt, src_mask=None, tgt_mask=None, memory_mask=None)`` returns ``[batch,
    len_tgt, d_model]``.

    Example:
        >>> model = paddle.nn.Transformer(64, 4, 2, 2, 128)
        >>> mask = model.generate_square_subsequent_mask(7)
        >>> out = model(paddle.rand([2, 9, 64]), paddle.rand([2, 7, 64]), tgt_mask=mask)
    """

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation="relu", attn_dropout=None,
                 act_dropout=None, normalize_before=False, weight_attr=None, bias_attr=None,
                 custom_encoder=None, custom_decoder=None):
        super().__init__()
        where = "Transformer"
        _positive(where, d_model=d_model, nhead=nhead, dim_feedforward=dim_feedforward)
        enc_w, dec_w = _split_attrs(weight_attr, where)
        enc_b, dec_b = _split_attrs(bias_attr, where)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout,
                                            activation, attn_dropout, act_dropout,
                                            normalize_before, enc_w, enc_b)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, LayerNorm(d_model))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout,
                                            activation, attn_dropout, act_dropout,
                                            normalize_before, dec_w, dec_b)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, LayerNorm(d_model))
        self.d_model = d_model
        self.nhead = nhead

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None):
        for what, t in (("src", src), ("tgt", tgt)):
            if not isinstance(t, Tensor) or t.ndim != 3 or t.shape[-1] != self.d_model:
                got = t.shape if isinstance(t, Tensor) else type(t).__name__
                raise ValueError(f"Transformer: expected {what} of shape [batch_size, seq_len, "
                                 f"d_model={self.d_model}], got {got}")
        if src.shape[0] != tgt.shape[0]:
            raise ValueError(f"Transformer: src {src.shape} and tgt {tgt.shape} must have the "
                             "same batch size")
        src_mask = _convert_mask(src_mask, src.dtype, "Transformer")
        memory = self.encoder(src, src_mask=src_mask)
        tgt_mask = _convert_mask(tgt_mask, tgt.dtype, "Transformer")
        memory_mask = _convert_mask(memory_mask, memory.dtype, "Transformer")
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask)

    def generate_square_subsequent_mask(self, length):
        """A float32 ``[length, length]`` mask: 0 on and below the diagonal, -inf above it, so
        position i attends only to positions <= i.

        Example:
            >>> paddle.nn.Transformer(8, 2).generate_square_subsequent_mask(3)
        """
        if isinstance(length, Tensor):
            length = int(length._data.reshape(-1)[0])
        if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length < 0:
            raise ValueError(f"Transformer.generate_square_subsequent_mask: length must be a "
                             f"non-negative int, got {length!r}")
        from ...framework import place as _pl  # noqa: PLC0415

        xp = _pl.xp_for(_pl.current_place())
        return _wrap(xp.triu(xp.full((length, length), -np.inf, dtype=np.float32), 1))
