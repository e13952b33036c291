"""Model files in PaddleClas / PaddleSeg / PaddleNLP style, run with ``paddle`` aliased to
paddle_hl, against the same files run by real Paddle (same weights through state_dict)."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl

from ._alias import load_model_file


def _to_hl(pd_model, hl_model):
    sd = pd_model.state_dict()
    hl_sd = hl_model.state_dict()
    assert list(hl_sd) == list(sd)
    for k, v in sd.items():
        assert hl_sd[k].shape == list(v.shape), k
    hl_model.set_state_dict({k: v.numpy() for k, v in sd.items()})
    for k, v in hl_model.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), sd[k].numpy())


def _pair(pd, name):
    pd_mod = load_model_file(name, as_paddle_hl=False)
    hl_mod = load_model_file(name, as_paddle_hl=True)
    assert hl_mod.paddle is paddle_hl and pd_mod.paddle is pd
    pd.seed(0)
    ref = pd_mod.build()
    ours = hl_mod.build()
    _to_hl(ref, ours)
    return pd_mod, ref, ours


@pytest.mark.parity
@pytest.mark.parametrize("name", ["clas_resnet", "seg_model", "effnet"])
def test_model_file_matches_paddle(pd, name):
    mod, ref, ours = _pair(pd, name)
    x = mod.example_input()
    ref.eval()
    ours.eval()
    want = ref(pd.to_tensor(x))
    got = ours(paddle_hl.to_tensor(x))
    if isinstance(want, list):
        want, got = want[0], got[0]
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)
    # one training step moves both the same way
    ref.train()
    ours.train()
    opt_r = pd.optimizer.Momentum(0.01, parameters=ref.parameters())
    opt_h = paddle_hl.optimizer.Momentum(0.01, parameters=ours.parameters())
    for model, opt, mod_ in ((ref, opt_r, pd), (ours, opt_h, paddle_hl)):
        out = model(mod_.to_tensor(x))
        out = out[0] if isinstance(out, list) else out
        (out * out).mean().backward()
        opt.step()
        opt.clear_grad()
    ref.eval()
    ours.eval()
    want = ref(pd.to_tensor(x))
    got = ours(paddle_hl.to_tensor(x))
    if isinstance(want, list):
        want, got = want[0], got[0]
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-3, atol=1e-4)


@pytest.mark.parity
def test_dotted_sublayer_names_match_paddle(pd):
    _, ref, ours = _pair(pd, "effnet")
    keys = list(ours.state_dict())
    assert "_blocks.0..dw.conv.weight" in keys
    assert [n for n, _ in ours.named_sublayers()] == [n for n, _ in ref.named_sublayers()]


@pytest.mark.parity
def test_seg_initializers_take_param_block(pd):
    mod = load_model_file("seg_model", as_paddle_hl=True)
    paddle_hl.seed(3)
    net = mod.build()
    w = net.stem._conv.weight.numpy()
    # KaimingNormal: std = sqrt(2 / fan_in), fan_in = 3 * 3 * 3
    np.testing.assert_allclose(w.std(), np.sqrt(2 / 27), rtol=0.35)
    np.testing.assert_array_equal(net.stem._batch_norm.weight.numpy(), np.ones(8, "float32"))
    assert net.stem._conv.weight.block is paddle_hl.static.default_main_program().global_block()


@pytest.mark.parity
def test_fused_encoder_file_matches_paddle_unfused_encoder(pd):
    """The fused encoder (GPU-only in Paddle's wheel) against Paddle's own unfused
    TransformerEncoderLayer carrying the same weights."""
    pd_mod, ref, ours = _pair(pd, "nlp_fused")
    assert pd_mod.USE_FUSED
    ids = np.random.default_rng(3).integers(0, 50, [2, 6]).astype("int64")
    ours.eval()
    got = ours(paddle_hl.to_tensor(ids)).numpy()

    sd = {k: v.numpy() for k, v in ref.state_dict().items()}
    t = pd.to_tensor
    h = ref.embeddings(t(ids)) + ref.position(pd.arange(6, dtype="int64").unsqueeze(0))
    for i in range(2):
        layer = pd.nn.TransformerEncoderLayer(16, 2, 64, dropout=0.0)
        p = f"layers.{i}."
        qkv = sd[p + "fused_attn.qkv_weight"].reshape(3, 16, 16)
        qkv_b = sd[p + "fused_attn.qkv_bias"].reshape(3, 16)
        names = {"self_attn.q_proj": 0, "self_attn.k_proj": 1, "self_attn.v_proj": 2}
        new = {}
        for n, j in names.items():
            new[n + ".weight"] = qkv[j].T
            new[n + ".bias"] = qkv_b[j]
        new["self_attn.out_proj.weight"] = sd[p + "fused_attn.linear_weight"]
        new["self_attn.out_proj.bias"] = sd[p + "fused_attn.linear_bias"]
        new["norm1.weight"] = sd[p + "fused_attn.ln_scale"]
        new["norm1.bias"] = sd[p + "fused_attn.ln_bias"]
        new["linear1.weight"] = sd[p + "ffn._linear1_weight"]
        new["linear1.bias"] = sd[p + "ffn._linear1_bias"]
        new["linear2.weight"] = sd[p + "ffn._linear2_weight"]
        new["linear2.bias"] = sd[p + "ffn._linear2_bias"]
        new["norm2.weight"] = sd[p + "ffn._ln2_scale"]
        new["norm2.bias"] = sd[p + "ffn._ln2_bias"]
        layer.set_state_dict({k: t(v) for k, v in new.items()})
        layer.eval()
        h = layer(h)
    want = pd.tanh(ref.pooler(h[:, 0])).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    # the to_static input_spec is checked on every call
    with pytest.raises(ValueError, match="input_spec"):
        ours(paddle_hl.to_tensor(ids[0]))


def test_nlp_file_exports_with_batch_and_sequence_free(tmp_path):
    """input_spec [None, None]: batch and sequence length both stay free in the saved program
    and in the ONNX model (position ids are an arange over the sequence)."""
    mod = load_model_file("nlp_fused", as_paddle_hl=True)
    net = mod.build()
    net.eval()
    paddle_hl.jit.save(net, str(tmp_path / "enc"))
    loaded = paddle_hl.jit.load(str(tmp_path / "enc"))
    shapes = [(1, 3), (2, 6), (4, 9)]
    rng = np.random.default_rng(4)
    for b, s in shapes:
        ids = paddle_hl.to_tensor(rng.integers(0, 50, [b, s]))
        np.testing.assert_allclose(loaded(ids).numpy(), net(ids).numpy(), rtol=1e-5, atol=1e-6)
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    f = paddle_hl.onnx.export(net, str(tmp_path / "enc"))
    sess = ort.InferenceSession(f, providers=["CPUExecutionProvider"])
    for b, s in shapes:
        ids = rng.integers(0, 50, [b, s]).astype("int64")
        np.testing.assert_allclose(sess.run(None, {"input_ids": ids})[0],
                                   net(paddle_hl.to_tensor(ids)).numpy(), rtol=1e-4, atol=1e-5)
