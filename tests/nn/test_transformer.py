"""Attention and transformers: MultiHeadAttention, encoder/decoder layers and stacks,
Transformer, scaled_dot_product_attention and sparse_attention."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl
from paddle_hl.framework.op import apply
from paddle_hl.nn.functional.flash_attention import _attention
from tests.op_check import check_parity, gradcheck

nn = paddle_hl.nn
F = paddle_hl.nn.functional


# ---------------------------------------------------------------------------- helpers
def _copy_state(src, dst):
    theirs, ours = src.state_dict(), dst.state_dict()
    assert list(theirs) == list(ours)
    missing, unexpected = dst.set_state_dict({k: v.numpy() for k, v in theirs.items()})
    assert not missing and not unexpected


def _run(lib, layer, arrays, kwargs, train):
    layer.train() if train else layer.eval()
    ts = [lib.to_tensor(a, stop_gradient=False) for a in arrays]
    kw = {k: lib.to_tensor(v) for k, v in kwargs.items()}
    out = layer(*ts, **kw)
    outs = list(out) if isinstance(out, tuple) else [out]
    rng = np.random.default_rng(1)
    loss = None
    for o in outs:
        term = (o * lib.to_tensor(rng.standard_normal(o.shape).astype(o.numpy().dtype))).sum()
        loss = term if loss is None else loss + term
    loss.backward()
    return ([o.numpy() for o in outs] + [t.grad.numpy() for t in ts]
            + [p.grad.numpy() for p in layer.parameters()])


def _parity(pd, theirs, ours, arrays, kwargs=None, train=False, tol=2e-4):
    _copy_state(theirs, ours)
    assert repr(ours) == repr(theirs)
    a = _run(pd, theirs, arrays, kwargs or {}, train)
    b = _run(paddle_hl, ours, arrays, kwargs or {}, train)
    assert len(a) == len(b)
    for i, (u, v) in enumerate(zip(a, b)):
        assert u.shape == v.shape, f"item {i}"
        np.testing.assert_allclose(v, u, rtol=tol, atol=tol, err_msg=f"item {i}")


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


def _ref_attention(q, k, v, mask=None):
    """NumPy reference on [batch, seq, heads, dim] arrays."""
    q, k, v = (np.swapaxes(a, 1, 2).astype(np.float64) for a in (q, k, v))
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        s = s + mask
    with np.errstate(invalid="ignore"):  # a fully masked row is nan here (callers zero it)
        s = s - s.max(-1, keepdims=True)
        p = np.exp(s)
        p /= p.sum(-1, keepdims=True)
    return np.swapaxes(p @ v, 1, 2)


# ---------------------------------------------------------------------------- MHA
@pytest.mark.parity
@pytest.mark.parametrize("need_weights", [False, True])
@pytest.mark.parametrize("train", [False, True])
def test_mha_parity(pd, need_weights, train):
    # dropout 0 so train mode is deterministic in both libraries
    _parity(pd, pd.nn.MultiHeadAttention(8, 2, need_weights=need_weights),
            nn.MultiHeadAttention(8, 2, need_weights=need_weights), [_rand(2, 5, 8)],
            train=train)


@pytest.mark.parity
def test_mha_kdim_vdim_parity(pd):
    _parity(pd, pd.nn.MultiHeadAttention(8, 4, kdim=4, vdim=6, need_weights=True),
            nn.MultiHeadAttention(8, 4, kdim=4, vdim=6, need_weights=True),
            [_rand(2, 3, 8), _rand(2, 5, 4, seed=1), _rand(2, 5, 6, seed=2)])


@pytest.mark.parity
@pytest.mark.parametrize("kind", ["bool", "int", "float"])
def test_mha_masks_parity(pd, kind):
    rng = np.random.default_rng(3)
    if kind == "float":
        mask = rng.standard_normal((5, 5)).astype("float32")
    else:
        mask = (rng.random((2, 1, 5, 5)) > 0.3).astype(kind if kind == "bool" else "int64")
    _parity(pd, pd.nn.MultiHeadAttention(8, 2, need_weights=True),
            nn.MultiHeadAttention(8, 2, need_weights=True), [_rand(2, 5, 8)],
            {"attn_mask": mask})


@pytest.mark.parity
def test_mha_no_bias_float64_parity(pd):
    pd.set_default_dtype("float64")
    try:
        theirs = pd.nn.MultiHeadAttention(6, 3, bias_attr=False)
    finally:
        pd.set_default_dtype("float32")
    paddle_hl.set_default_dtype("float64")
    ours = nn.MultiHeadAttention(6, 3, bias_attr=False)
    paddle_hl.set_default_dtype("float32")
    assert list(ours.state_dict()) == ["q_proj.weight", "k_proj.weight", "v_proj.weight",
                                       "out_proj.weight"]
    _parity(pd, theirs, ours, [np.random.default_rng(4).standard_normal((2, 4, 6))], tol=1e-10)


@pytest.mark.parity
def test_mha_caches_parity(pd):
    x, mem = _rand(2, 5, 8), _rand(2, 4, 8, seed=1)
    res = []
    state = None
    for lib in (pd, paddle_hl):
        mha = lib.nn.MultiHeadAttention(8, 2)
        if state is None:
            state = {k: v.numpy() for k, v in mha.state_dict().items()}
        else:
            mha.set_state_dict(state)
        cache = mha.gen_cache(lib.to_tensor(x), type=mha.Cache)
        outs = []
        for t in range(3):  # incremental self-attention, one step at a time
            o, cache = mha(lib.to_tensor(x[:, t:t + 1]), cache=cache)
            outs.append(o.numpy())
        static = mha.gen_cache(lib.to_tensor(mem), lib.to_tensor(mem), type=mha.StaticCache)
        o2, static2 = mha(lib.to_tensor(x), lib.to_tensor(mem), lib.to_tensor(mem),
                          cache=static)
        full = mha.gen_cache(lib.to_tensor(x), lib.to_tensor(x), type=mha.Cache)
        res.append((outs, cache.k.shape, o2.numpy(), type(static2).__name__, full.k.shape,
                    type(cache).__name__))
    a, b = res
    for u, v in zip(a[0], b[0]):
        np.testing.assert_allclose(v, u, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(b[2], a[2], rtol=1e-4, atol=1e-5)
    assert a[1] == b[1] == [2, 2, 3, 4]
    assert a[3:] == b[3:]


def test_mha_incremental_equals_causal():
    mha = nn.MultiHeadAttention(8, 2)
    x = paddle_hl.to_tensor(_rand(2, 4, 8))
    causal = nn.Transformer.generate_square_subsequent_mask(None, 4)
    full = mha(x, attn_mask=causal).numpy()
    cache = mha.gen_cache(x)
    steps = []
    for t in range(4):
        o, cache = mha(x[:, t:t + 1], cache=cache)
        steps.append(o.numpy())
    np.testing.assert_allclose(np.concatenate(steps, 1), full, rtol=1e-5, atol=1e-6)


def test_mha_dropout_train_eval():
    paddle_hl.seed(0)
    mha = nn.MultiHeadAttention(8, 2, dropout=0.5, need_weights=True)
    x = paddle_hl.to_tensor(_rand(2, 5, 8))
    mha.eval()
    _, w_eval = mha(x)
    np.testing.assert_allclose(w_eval.numpy().sum(-1), 1.0, rtol=1e-5)
    mha.train()
    _, w_train = mha(x)
    wt = w_train.numpy()
    kept = wt != 0
    assert 0.2 < kept.mean() < 0.8
    # the kept weights are the eval weights scaled by 1 / (1 - p)
    np.testing.assert_allclose(wt[kept], 2 * w_eval.numpy()[kept], rtol=1e-5)


def test_mha_errors():
    with pytest.raises(ValueError, match="divisible"):
        nn.MultiHeadAttention(6, 4)
    with pytest.raises(ValueError, match="embed_dim to be greater than 0"):
        nn.MultiHeadAttention(0, 1)
    mha = nn.MultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match=r"query of shape \[batch_size, seq_len, 8\].*\[2, 5, 6\]"):
        mha(paddle_hl.randn([2, 5, 6]))
    with pytest.raises(ValueError, match="attn_mask of shape"):
        mha(paddle_hl.randn([2, 5, 8]), attn_mask=paddle_hl.zeros([3, 3]))
    with pytest.raises(TypeError, match="cache"):
        mha(paddle_hl.randn([2, 5, 8]), cache=(1, 2))


def test_mha_state_dict_round_trip():
    a, b = nn.MultiHeadAttention(8, 2), nn.MultiHeadAttention(8, 2)
    b.set_state_dict(a.state_dict())
    x = paddle_hl.randn([2, 3, 8])
    np.testing.assert_array_equal(a(x).numpy(), b(x).numpy())


# ---------------------------------------------------------------------------- layers
@pytest.mark.parity
@pytest.mark.parametrize("normalize_before", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_layer_parity(pd, normalize_before, activation):
    mask = np.random.default_rng(5).random((2, 1, 5, 5)) > 0.3
    for train in (False, True):
        kw = dict(activation=activation, normalize_before=normalize_before,
                  dropout=0.0 if train else 0.1)
        _parity(pd, pd.nn.TransformerEncoderLayer(8, 2, 16, **kw),
                nn.TransformerEncoderLayer(8, 2, 16, **kw), [_rand(2, 5, 8)],
                {"src_mask": mask}, train=train)


@pytest.mark.parity
@pytest.mark.parametrize("normalize_before", [False, True])
def test_decoder_layer_parity(pd, normalize_before):
    tgt_mask = np.triu(np.full((3, 3), -np.inf, dtype="float32"), 1)
    mem_mask = np.random.default_rng(6).random((2, 1, 3, 5)) > 0.2
    _parity(pd, pd.nn.TransformerDecoderLayer(8, 2, 16, normalize_before=normalize_before),
            nn.TransformerDecoderLayer(8, 2, 16, normalize_before=normalize_before),
            [_rand(2, 3, 8), _rand(2, 5, 8, seed=1)],
            {"tgt_mask": tgt_mask, "memory_mask": mem_mask})


@pytest.mark.parity
def test_stacks_parity(pd):
    enc_t = pd.nn.TransformerEncoder(pd.nn.TransformerEncoderLayer(8, 2, 16), 2,
                                     pd.nn.LayerNorm(8))
    enc_o = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 2, nn.LayerNorm(8))
    _parity(pd, enc_t, enc_o, [_rand(2, 5, 8)])
    dec_t = pd.nn.TransformerDecoder(pd.nn.TransformerDecoderLayer(8, 2, 16), 2)
    dec_o = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16), 2)
    _parity(pd, dec_t, dec_o, [_rand(2, 3, 8), _rand(2, 5, 8, seed=1)])


@pytest.mark.parity
@pytest.mark.parametrize("normalize_before", [False, True])
def test_transformer_parity(pd, normalize_before):
    theirs = pd.nn.Transformer(8, 2, 2, 1, 16, normalize_before=normalize_before)
    ours = nn.Transformer(8, 2, 2, 1, 16, normalize_before=normalize_before)
    mask = theirs.generate_square_subsequent_mask(3).numpy()
    np.testing.assert_array_equal(ours.generate_square_subsequent_mask(3).numpy(), mask)
    _parity(pd, theirs, ours, [_rand(2, 5, 8), _rand(2, 3, 8, seed=1)], {"tgt_mask": mask})


@pytest.mark.parity
def test_decoder_incremental_cache_parity(pd):
    x, mem = _rand(2, 3, 8), _rand(2, 4, 8, seed=1)
    res = []
    state = None
    for lib in (pd, paddle_hl):
        dec = lib.nn.TransformerDecoder(lib.nn.TransformerDecoderLayer(8, 2, 16), 2)
        if state is None:
            state = {k: v.numpy() for k, v in dec.state_dict().items()}
        else:
            dec.set_state_dict(state)
        dec.eval()
        m = lib.to_tensor(mem)
        cache = dec.gen_cache(m)
        outs = []
        for t in range(3):
            o, cache = dec(lib.to_tensor(x[:, t:t + 1]), m, cache=cache)
            outs.append(o.numpy())
        zipped = dec.gen_cache(m, do_zip=True)
        res.append((outs, [c[0].k.shape for c in cache], len(zipped), len(zipped[0])))
    for u, v in zip(res[0][0], res[1][0]):
        np.testing.assert_allclose(v, u, rtol=1e-4, atol=1e-5)
    assert res[0][1:] == res[1][1:]


def test_encoder_cache_and_clones():
    layer = nn.TransformerEncoderLayer(8, 2, 16)
    enc = nn.TransformerEncoder(layer, 3)
    assert enc.layers[0] is layer
    assert enc.layers[1] is not layer
    # the clones have their own, freshly initialised parameters
    assert not np.array_equal(enc.layers[1].linear1.weight.numpy(), layer.linear1.weight.numpy())
    enc.eval()
    x = paddle_hl.to_tensor(_rand(2, 1, 8))
    cache = enc.gen_cache(x)
    out, new_cache = enc(x, cache=cache)
    assert out.shape == [2, 1, 8] and len(new_cache) == 3
    assert new_cache[0].k.shape == [2, 2, 1, 4]


def test_transformer_attrs_and_errors():
    t = nn.Transformer(8, 2, 1, 1, 16, bias_attr=[False, True])
    assert "encoder.layers.0.self_attn.q_proj.bias" not in t.state_dict()
    assert "encoder.layers.0.linear1.bias" in t.state_dict()
    assert "decoder.layers.0.cross_attn.q_proj.bias" not in t.state_dict()
    with pytest.raises(ValueError, match="d_model to be greater than 0"):
        nn.Transformer(0, 2)
    with pytest.raises(ValueError, match=r"src of shape \[batch_size, seq_len, d_model=8\]"):
        t(paddle_hl.randn([2, 3, 4]), paddle_hl.randn([2, 3, 8]))
    with pytest.raises(ValueError, match="unknown activation"):
        nn.TransformerEncoderLayer(8, 2, 16, activation="nope")
    m = t.generate_square_subsequent_mask(paddle_hl.to_tensor(2))
    assert m.dtype == paddle_hl.float32 and m.numpy()[0, 1] == -np.inf and m.numpy()[1, 0] == 0


def test_transformer_state_dict_round_trip_and_training_step():
    a = nn.Transformer(8, 2, 1, 1, 16, dropout=0.0)
    b = nn.Transformer(8, 2, 1, 1, 16, dropout=0.0)
    b.set_state_dict(a.state_dict())
    src, tgt = paddle_hl.randn([2, 4, 8]), paddle_hl.randn([2, 3, 8])
    np.testing.assert_array_equal(a(src, tgt).numpy(), b(src, tgt).numpy())
    opt = paddle_hl.optimizer.SGD(0.1, parameters=a.parameters())
    loss0 = (a(src, tgt) ** 2).mean()
    loss0.backward()
    opt.step()
    assert float((a(src, tgt) ** 2).mean().numpy()) < float(loss0.numpy())


# ---------------------------------------------------------------------------- functional
@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sdpa_parity_no_mask(pd, dtype):
    # Paddle 2.6.2 on CPU only runs the unmasked, non-causal case
    q, k, v = (np.random.default_rng(i).standard_normal(s).astype(dtype)
               for i, s in enumerate([(2, 4, 3, 8), (2, 5, 3, 8), (2, 5, 3, 8)]))
    check_parity(lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(q, k, v),
                 [q, k, v], pd, rtol=1e-5 if dtype == "float32" else 1e-10)


@pytest.mark.parametrize("mask_kind", [None, "float", "bool"])
@pytest.mark.parametrize("is_causal", [False, True])
def test_sdpa_matches_formula(mask_kind, is_causal):
    """[batch, seq, heads, dim] layout, softmax(QKᵀ/√d + mask)V, causal masking."""
    rng = np.random.default_rng(7)
    q, k, v = rng.standard_normal((2, 4, 3, 8)), rng.standard_normal((2, 6, 3, 8)), \
        rng.standard_normal((2, 6, 3, 5))
    add = np.zeros((4, 6))
    mask = None
    if mask_kind == "float":
        mask = rng.standard_normal((2, 3, 4, 6))
        add = add + mask
    elif mask_kind == "bool":
        mask = rng.random((4, 6)) > 0.3
        mask[:, 0] = True
        add = add + np.where(mask, 0.0, -1e9)
    if is_causal:
        add = add + np.triu(np.full((4, 6), -np.inf), 1)
    out = F.scaled_dot_product_attention(
        paddle_hl.to_tensor(q), paddle_hl.to_tensor(k), paddle_hl.to_tensor(v),
        attn_mask=None if mask is None else paddle_hl.to_tensor(mask), is_causal=is_causal)
    assert out.shape == [2, 4, 3, 5] and out.dtype == paddle_hl.float64
    np.testing.assert_allclose(out.numpy(), _ref_attention(q, k, v, add), rtol=1e-10,
                               atol=1e-12)
    if is_causal:
        # query 0 sees only key 0
        np.testing.assert_allclose(out.numpy()[:, 0], v[:, 0], rtol=1e-10)


def test_sdpa_gradcheck_and_dropout():
    rng = np.random.default_rng(8)
    arrays = [rng.standard_normal((1, 3, 2, 4)), rng.standard_normal((1, 3, 2, 4)),
              rng.standard_normal((1, 3, 2, 4)), rng.standard_normal((1, 2, 3, 3))]
    gradcheck(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, m, is_causal=True),
              arrays)
    x = paddle_hl.randn([2, 8, 2, 4])
    out_eval = F.scaled_dot_product_attention(x, x, x, dropout_p=0.9, training=False)
    ref = F.scaled_dot_product_attention(x, x, x)
    np.testing.assert_array_equal(out_eval.numpy(), ref.numpy())
    out_train = F.scaled_dot_product_attention(x, x, x, dropout_p=0.9)
    assert not np.allclose(out_train.numpy(), ref.numpy())


def test_attention_kernel_gradcheck_with_weights_output():
    rng = np.random.default_rng(9)
    arrays = [rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4)),
              rng.standard_normal((2, 5, 2)), rng.standard_normal((3, 5))]
    gradcheck(lambda q, k, v, m: apply(_attention, q, k, v, m, None, scale=0.5,
                                       drop_scale=1.0), arrays)


def test_sdpa_empty_and_errors():
    q = paddle_hl.zeros([0, 4, 2, 8])
    assert F.scaled_dot_product_attention(q, q, q).shape == [0, 4, 2, 8]
    x = paddle_hl.randn([2, 4, 3, 8])
    with pytest.raises(ValueError, match=r"query must be 4-D.*\[4, 3, 8\]"):
        F.scaled_dot_product_attention(x[0], x, x)
    with pytest.raises(ValueError, match="must agree"):
        F.scaled_dot_product_attention(x, paddle_hl.randn([2, 4, 2, 8]), x)
    with pytest.raises(ValueError, match="does not broadcast"):
        F.scaled_dot_product_attention(x, x, x, attn_mask=paddle_hl.zeros([3, 3]))
    with pytest.raises(TypeError, match="floating"):
        F.scaled_dot_product_attention(paddle_hl.ones([2, 4, 3, 8], dtype="int64"), x, x)


# ---------------------------------------------------------------------------- sparse
def _csr(pattern):
    """CSR offsets/columns of a bool [B, H, L, L] pattern with equal nnz per head."""
    b, h, n, _ = pattern.shape
    counts = pattern.sum(-1)
    off = np.concatenate([np.zeros((b, h, 1), int), np.cumsum(counts, -1)], -1)
    cols = np.stack([np.nonzero(pattern[i, j])[1] for i in range(b) for j in range(h)])
    return off.astype("int32"), cols.reshape(b, h, -1).astype("int32")


def test_sparse_attention_matches_dense_reference():
    rng = np.random.default_rng(10)
    b, h, n, d = 2, 2, 4, 3
    pattern = np.zeros((b, h, n, n), bool)
    pattern[..., np.arange(n), np.arange(n)] = True  # diagonal
    pattern[..., :, 0] = True                         # plus the first column
    off, cols = _csr(pattern)
    q, k, v = (rng.standard_normal((b, h, n, d)) for _ in range(3))
    out = F.sparse_attention(*(paddle_hl.to_tensor(a) for a in (q, k, v)),
                             paddle_hl.to_tensor(off), paddle_hl.to_tensor(cols))
    ref = _ref_attention(*(np.swapaxes(a, 1, 2) for a in (q, k, v)),
                         np.where(pattern, 0.0, -np.inf))
    np.testing.assert_allclose(out.numpy(), np.swapaxes(ref, 1, 2), rtol=1e-10)
    # masks: 0 removes a key (padding) or a (query, key) pair
    kpm = np.ones((b, n))
    kpm[:, 0] = 0
    am = np.ones((n, n))
    am[1, 1] = 0
    out2 = F.sparse_attention(*(paddle_hl.to_tensor(a) for a in (q, k, v)),
                              paddle_hl.to_tensor(off), paddle_hl.to_tensor(cols),
                              key_padding_mask=paddle_hl.to_tensor(kpm),
                              attn_mask=paddle_hl.to_tensor(am))
    allowed = pattern & (kpm != 0)[:, None, None, :] & (am != 0)
    ref2 = np.swapaxes(_ref_attention(*(np.swapaxes(a, 1, 2) for a in (q, k, v)),
                                      np.where(allowed, 0.0, -np.inf)), 1, 2)
    ref2 = np.where(allowed.any(-1, keepdims=True), ref2, 0.0)  # fully masked row -> 0
    np.testing.assert_allclose(out2.numpy(), ref2, rtol=1e-10)
    np.testing.assert_array_equal(out2.numpy()[:, :, 1], 0.0)


def test_sparse_attention_gradcheck_and_errors():
    rng = np.random.default_rng(11)
    pattern = np.tril(np.ones((1, 1, 3, 3), bool))
    pattern[0, 0, 2, 1] = False
    off, cols = _csr(np.broadcast_to(pattern, (1, 1, 3, 3)))
    offs, colt = paddle_hl.to_tensor(off), paddle_hl.to_tensor(cols)
    arrays = [rng.standard_normal((1, 1, 3, 2)) for _ in range(3)]
    gradcheck(lambda q, k, v: F.sparse_attention(q, k, v, offs, colt), arrays)
    x = paddle_hl.randn([1, 1, 3, 2])
    with pytest.raises(ValueError, match=r"sparse_csr_offset must have shape \[1, 1, 4\]"):
        F.sparse_attention(x, x, x, paddle_hl.to_tensor([[[0, 1]]], dtype="int32"), colt)
    with pytest.raises(ValueError, match=r"query must be 4-D"):
        F.sparse_attention(x[0], x, x, offs, colt)
    with pytest.raises(ValueError, match="sparse_csr_columns must lie in"):
        F.sparse_attention(x, x, x, offs, paddle_hl.to_tensor(cols + 5))
