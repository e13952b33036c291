"""paddle_hl.incubate.nn: fused layers/ops against real Paddle.

Paddle 2.6.2's CPU wheel has no kernels for most fused ops, so the oracle is the documented math
written with Paddle's unfused ops, run on Paddle's own initialised weights (copied into ours
with set_state_dict). Where Paddle's CPU kernel exists (fused_linear, softmax_mask_fuse) the
fused op itself is the oracle.
"""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.incubate import nn as inn
from paddle_hl.incubate.nn import functional as IF

RTOL, ATOL = 1e-5, 1e-5


def _copy(pd_layer, hl_layer):
    sd = {k: v.numpy() for k, v in pd_layer.state_dict().items()}
    assert list(sd) == list(hl_layer.state_dict())
    for k, v in hl_layer.state_dict().items():
        assert v.shape == list(sd[k].shape), k
    hl_layer.set_state_dict({k: paddle.to_tensor(v) for k, v in sd.items()})
    return sd


def _pd_ln(pd, x, w, b, eps=1e-5):
    return pd.nn.functional.layer_norm(x, x.shape[-1:], w, b, eps)


def _pd_mha(pd, x, sd, nh, pre, mask=None, transpose=False):
    """Paddle's documented fused attention math, on unfused Paddle ops."""
    t = pd.to_tensor
    b, s, e = x.shape
    hd = e // nh
    h = _pd_ln(pd, x, t(sd["pre_ln_scale"]), t(sd["pre_ln_bias"])) if pre else x
    if transpose:
        qkv = pd.matmul(h, t(sd["qkv_weight"])) + t(sd["qkv_bias"])
    else:
        qkv = pd.matmul(h, t(sd["qkv_weight"]).reshape([3 * e, e]), transpose_y=True)
        qkv = qkv + t(sd["qkv_bias"]).reshape([3 * e])
    qkv = qkv.reshape([b, s, 3, nh, hd]).transpose([2, 0, 3, 1, 4])
    q, k, v = qkv[0], qkv[1], qkv[2]
    sc = pd.matmul(q * hd ** -0.5, k, transpose_y=True)
    if mask is not None:
        sc = sc + mask
    a = pd.matmul(pd.nn.functional.softmax(sc, -1), v).transpose([0, 2, 1, 3]).reshape([b, s, e])
    out = x + pd.matmul(a, t(sd["linear_weight"])) + t(sd["linear_bias"])
    if not pre:
        out = _pd_ln(pd, out, t(sd["ln_scale"]), t(sd["ln_bias"]))
    return out


def _pd_ffn(pd, x, sd, pre, act="relu", prefix=""):
    t = pd.to_tensor
    g = lambda k: t(sd[prefix + k])  # noqa: E731
    h = _pd_ln(pd, x, g("_ln1_scale"), g("_ln1_bias")) if pre else x
    h = getattr(pd.nn.functional, act)(pd.matmul(h, g("_linear1_weight")) + g("_linear1_bias"))
    out = x + pd.matmul(h, g("_linear2_weight")) + g("_linear2_bias")
    return out if pre else _pd_ln(pd, out, g("_ln2_scale"), g("_ln2_bias"))


@pytest.mark.parity
@pytest.mark.parametrize("pre", [False, True])
@pytest.mark.parametrize("transpose", [False, True])
def test_fused_multi_head_attention_layer(pd, pre, transpose):
    pd.seed(3)
    ref = pd.incubate.nn.FusedMultiHeadAttention(8, 2, normalize_before=pre,
                                                 transpose_qkv_wb=transpose)
    ours = inn.FusedMultiHeadAttention(8, 2, normalize_before=pre, transpose_qkv_wb=transpose)
    sd = _copy(ref, ours)
    ours.eval()
    x = np.random.default_rng(0).standard_normal([2, 5, 8]).astype("float32")
    mask = np.triu(np.full([5, 5], -1e9, np.float32), 1)[None, None]
    want = _pd_mha(pd, pd.to_tensor(x), sd, 2, pre, pd.to_tensor(mask), transpose).numpy()
    got = ours(paddle.to_tensor(x), attn_mask=paddle.to_tensor(mask)).numpy()
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


@pytest.mark.parity
def test_fused_attention_bool_mask_and_cache(pd):
    ours = inn.FusedMultiHeadAttention(8, 2, dropout_rate=0.0, attn_dropout_rate=0.0)
    x = paddle.rand([1, 3, 8])
    keep = paddle.to_tensor(np.tril(np.ones([3, 3], bool))[None, None])
    add = paddle.to_tensor(np.triu(np.full([3, 3], -1e9, np.float32), 1)[None, None])
    np.testing.assert_allclose(ours(x, attn_mask=keep).numpy(), ours(x, attn_mask=add).numpy(),
                               rtol=RTOL, atol=ATOL)
    cache = paddle.zeros([2, 1, 2, 0, 4])
    out, new = ours(x, cache=cache)
    assert new.shape == [2, 1, 2, 3, 4]
    np.testing.assert_allclose(out.numpy(), ours(x).numpy(), rtol=RTOL, atol=ATOL)
    with pytest.raises(ValueError, match="self-attention"):
        ours(x, paddle.rand([1, 3, 8]))


@pytest.mark.parity
@pytest.mark.parametrize("pre,act", [(False, "relu"), (True, "gelu")])
def test_fused_feedforward_layer(pd, pre, act):
    pd.seed(4)
    ref = pd.incubate.nn.FusedFeedForward(8, 16, normalize_before=pre, activation=act)
    ours = inn.FusedFeedForward(8, 16, normalize_before=pre, activation=act)
    sd = _copy(ref, ours)
    ours.eval()
    x = np.random.default_rng(1).standard_normal([2, 5, 8]).astype("float32")
    want = _pd_ffn(pd, pd.to_tensor(x), sd, pre, act).numpy()
    np.testing.assert_allclose(ours(paddle.to_tensor(x)).numpy(), want, rtol=RTOL, atol=ATOL)


@pytest.mark.parity
def test_fused_transformer_encoder_layer_and_grads(pd):
    pd.seed(5)
    ref = pd.incubate.nn.FusedTransformerEncoderLayer(8, 2, 16, dropout_rate=0.0)
    ours = inn.FusedTransformerEncoderLayer(8, 2, 16, dropout_rate=0.0)
    sd = _copy(ref, ours)
    x = np.random.default_rng(2).standard_normal([2, 4, 8]).astype("float32")
    attn_sd = {k[len("fused_attn."):]: v for k, v in sd.items() if k.startswith("fused_attn.")}
    xp = pd.to_tensor(x, stop_gradient=False)
    want = _pd_ffn(pd, _pd_mha(pd, xp, attn_sd, 2, False), sd, False, prefix="ffn.")
    (want * want).sum().backward()
    xh = paddle.to_tensor(x, stop_gradient=False)
    got = ours(xh)
    (got * got).sum().backward()
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(xh.grad.numpy(), xp.grad.numpy(), rtol=1e-4, atol=1e-4)
    assert ours.ffn._linear1_weight.grad is not None


@pytest.mark.parity
def test_fused_linear_layer(pd):
    pd.seed(6)
    for tw in (False, True):
        ref = pd.incubate.nn.FusedLinear(4, 3, transpose_weight=tw)
        ours = inn.FusedLinear(4, 3, transpose_weight=tw)
        sd = _copy(ref, ours)
        x = np.random.default_rng(3).standard_normal([2, 4]).astype("float32")
        # Paddle's CPU kernel exists without a bias (with one it is the GPU GEMM epilogue)
        nob = pd.incubate.nn.functional.fused_linear(pd.to_tensor(x), pd.to_tensor(sd["weight"]),
                                                     None, tw)
        want = (nob + pd.to_tensor(sd["bias"])).numpy()
        np.testing.assert_allclose(ours(paddle.to_tensor(x)).numpy(), want, rtol=RTOL, atol=ATOL)


@pytest.mark.parity
def test_bias_dropout_residual_layer_norm_and_dropout_add(pd):
    pd.seed(7)
    ref = pd.incubate.nn.FusedBiasDropoutResidualLayerNorm(8, dropout_rate=0.0)
    ours = inn.FusedBiasDropoutResidualLayerNorm(8, dropout_rate=0.0)
    sd = _copy(ref, ours)
    rng = np.random.default_rng(4)
    x, r = (rng.standard_normal([2, 3, 8]).astype("float32") for _ in range(2))
    t = pd.to_tensor
    want = _pd_ln(pd, t(r) + t(x) + t(sd["linear_bias"]), t(sd["ln_scale"]), t(sd["ln_bias"]))
    got = ours(paddle.to_tensor(x), paddle.to_tensor(r))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=RTOL, atol=ATOL)
    da = inn.FusedDropoutAdd(p=0.5)
    da.eval()
    np.testing.assert_allclose(da(paddle.to_tensor(x), paddle.to_tensor(r)).numpy(), x + r,
                               rtol=RTOL, atol=ATOL)
    da.train()
    out = da(paddle.ones([1000]), paddle.zeros([1000])).numpy()
    assert set(np.unique(out)) <= {0.0, 2.0} and 300 < (out == 0).sum() < 700


@pytest.mark.parity
def test_functional_fused_ops(pd):
    rng = np.random.default_rng(5)
    x = rng.standard_normal([2, 3, 8]).astype("float32")
    w, b = rng.standard_normal([8]).astype("float32"), rng.standard_normal([8]).astype("float32")
    res = rng.standard_normal([2, 3, 8]).astype("float32")
    bias = rng.standard_normal([8]).astype("float32")
    t, T = pd.to_tensor, paddle.to_tensor
    # rms norm over the last axis of x + bias + residual
    h = x + bias + res
    want = h / np.sqrt((h * h).mean(-1, keepdims=True) + 1e-6) * w + b
    out, res_out = IF.fused_rms_norm(T(x), T(w), T(b), 1e-6, 2, bias=T(bias), residual=T(res))
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(res_out.numpy(), h, rtol=1e-6)
    # layer norm over dims from axis 1, with residual_alpha
    h2 = x + bias + 0.5 * res
    w2 = rng.standard_normal([24]).astype("float32")
    b2 = rng.standard_normal([24]).astype("float32")
    want = pd.nn.functional.layer_norm(t(h2), [3, 8], t(w2), t(b2), 1e-5).numpy()
    out = IF.fused_layer_norm(T(x), T(w2), T(b2), 1e-5, residual_alpha=0.5, begin_norm_axis=1,
                              bias=T(bias), residual=T(res))
    np.testing.assert_allclose(out[0].numpy(), want, rtol=1e-5, atol=1e-5)
    assert out[2].shape == [2] and out[3].shape == [2]
    # matmul + bias, with transposes; activation variant
    a = rng.standard_normal([4, 3]).astype("float32")
    m = rng.standard_normal([5, 4]).astype("float32")
    bb = rng.standard_normal([5]).astype("float32")
    want = pd.matmul(t(a), t(m), True, True) + t(bb)
    got = IF.fused_matmul_bias(T(a), T(m), T(bb), True, True)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=RTOL, atol=ATOL)
    got = IF.fused_linear_activation(T(a), T(m), T(bb), True, True, "gelu")
    np.testing.assert_allclose(got.numpy(), pd.nn.functional.gelu(want).numpy(), rtol=RTOL,
                               atol=ATOL)
    # feed-forward without residual, post-norm
    w1, w2_ = (rng.standard_normal(s).astype("float32") for s in ([8, 16], [16, 8]))
    want = pd.nn.functional.layer_norm(pd.matmul(pd.nn.functional.relu(pd.matmul(t(x), t(w1))),
                                                 t(w2_)), [8]).numpy()
    got = IF.fused_feedforward(T(x), T(w1), T(w2_), dropout1_rate=0.0, dropout2_rate=0.0,
                               add_residual=False)
    np.testing.assert_allclose(got.numpy(), want, rtol=RTOL, atol=ATOL)
    with pytest.raises(ValueError, match="activation"):
        IF.fused_feedforward(T(x), T(w1), T(w2_), activation="tanh")
    with pytest.raises(ValueError, match="begin_norm_axis"):
        IF.fused_rms_norm(T(x), T(w), T(b), 1e-6, 5)


def _rope_ref(x, sin, cos, neox):
    if neox:
        rot = np.stack([-x[..., 1::2], x[..., 0::2]], -1).reshape(x.shape)
    else:
        d = x.shape[-1] // 2
        rot = np.concatenate([-x[..., d:], x[..., :d]], -1)
    return x * cos + rot * sin


@pytest.mark.parametrize("neox", [True, False])
def test_rotary_position_embedding(neox):
    rng = np.random.default_rng(6)
    q, k = (rng.standard_normal([2, 4, 3, 8]).astype("float32") for _ in range(2))
    ang = np.arange(4)[:, None] * 10000.0 ** (-np.arange(0, 8, 2) / 8)
    if neox:
        sin, cos = np.repeat(np.sin(ang), 2, -1), np.repeat(np.cos(ang), 2, -1)
    else:
        sin, cos = np.tile(np.sin(ang), 2), np.tile(np.cos(ang), 2)
    sin4, cos4 = sin[None, :, None].astype("float32"), cos[None, :, None].astype("float32")
    oq, ok, ov = IF.fused_rotary_position_embedding(paddle.to_tensor(q), paddle.to_tensor(k),
                                                    use_neox_rotary_style=neox)
    assert ov is None
    np.testing.assert_allclose(oq.numpy(), _rope_ref(q, sin4, cos4, neox), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ok.numpy(), _rope_ref(k, sin4, cos4, neox), rtol=1e-5, atol=1e-5)
    # explicit sin/cos with position ids pick rows per batch
    pos = np.array([[3, 2, 1, 0], [0, 0, 1, 1]])
    oq, _, _ = IF.fused_rotary_position_embedding(
        paddle.to_tensor(q), sin=paddle.to_tensor(sin4), cos=paddle.to_tensor(cos4),
        position_ids=paddle.to_tensor(pos), use_neox_rotary_style=neox)
    want = _rope_ref(q, sin[pos][:, :, None], cos[pos][:, :, None], neox)
    np.testing.assert_allclose(oq.numpy(), want, rtol=1e-5, atol=1e-5)
    # rotation keeps the norm of each rotated pair
    np.testing.assert_allclose(np.linalg.norm(oq.numpy(), axis=-1), np.linalg.norm(q, axis=-1),
                               rtol=1e-5)


@pytest.mark.parity
def test_softmax_mask_fuse(pd):
    rng = np.random.default_rng(7)
    x = rng.standard_normal([2, 2, 4, 4]).astype("float32")
    mask = np.where(rng.random([2, 1, 4, 4]) < 0.3, -1e4, 0).astype("float32")
    want = pd.incubate.softmax_mask_fuse(pd.to_tensor(x), pd.to_tensor(mask)).numpy()
    got = paddle.incubate.softmax_mask_fuse(paddle.to_tensor(x), paddle.to_tensor(mask))
    np.testing.assert_allclose(got.numpy(), want, rtol=RTOL, atol=ATOL)
    # upper triangle: Paddle's kernel is GPU-only; the documented math is a causal softmax
    tri = np.where(np.triu(np.ones([4, 4], bool), 1), -np.inf, x)
    want = pd.nn.functional.softmax(pd.to_tensor(tri.astype("float32")), -1).numpy()
    got = paddle.incubate.softmax_mask_fuse_upper_triangle(paddle.to_tensor(x))
    np.testing.assert_allclose(got.numpy(), want, rtol=RTOL, atol=ATOL)


def test_signatures_match_paddle_names():
    import inspect

    assert list(inspect.signature(inn.FusedMultiHeadAttention).parameters)[:4] == [
        "embed_dim", "num_heads", "dropout_rate", "attn_dropout_rate"]
    assert "transpose_qkv_wb" in inspect.signature(IF.fused_multi_head_attention).parameters
    assert not hasattr(paddle.incubate.nn.functional, "swiglu")  # not in Paddle 2.6.2 either
