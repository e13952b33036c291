"""Gradient clipping strategies (paddle_hl/nn/clip.py)."""

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl import nn


def _pairs(*grads, dtype="float32"):
    out = []
    for g in grads:
        p = paddle.create_parameter([1 if g is None else len(g)], dtype)
        out.append((p, None if g is None else paddle.to_tensor(np.array(g, dtype=dtype))))
    return out


def test_global_norm_scales_all_together():
    pairs = _pairs([3.0, 4.0, 0.0], [0.0, 0.0])
    out = nn.ClipGradByGlobalNorm(1.0)(pairs)
    np.testing.assert_allclose(out[0][1].numpy(), [0.6, 0.8, 0.0], rtol=1e-6)
    np.testing.assert_allclose(out[1][1].numpy(), [0.0, 0.0])
    # the input gradients are not modified
    np.testing.assert_array_equal(pairs[0][1].numpy(), [3.0, 4.0, 0.0])
    # The global norm runs over all params: sqrt(3^2 + 4^2 + 12^2) = 13
    out = nn.ClipGradByGlobalNorm(1.3)(_pairs([3.0, 4.0], [12.0]))
    np.testing.assert_allclose(out[0][1].numpy(), [0.3, 0.4], rtol=1e-6)
    np.testing.assert_allclose(out[1][1].numpy(), [1.2], rtol=1e-6)


def test_global_norm_need_clip_none_and_skip():
    pairs = _pairs([3.0, 4.0], [10.0, 0.0], None)
    pairs[1][0].need_clip = False
    out = nn.ClipGradByGlobalNorm(1.0)(pairs)
    assert len(out) == 2  # the None gradient is dropped
    np.testing.assert_allclose(out[0][1].numpy(), [0.6, 0.8], rtol=1e-6)
    assert out[1][1] is pairs[1][1]
    small = _pairs([0.3, 0.4])
    out = nn.ClipGradByGlobalNorm(10.0)(small)
    assert out[0][1] is not small[0][1]
    np.testing.assert_allclose(out[0][1].numpy(), [0.3, 0.4], rtol=1e-6)
    out = nn.ClipGradByGlobalNorm(10.0, auto_skip_clip=True)(small)
    assert out[0][1] is small[0][1]
    assert nn.ClipGradByGlobalNorm(1.0)([]) == []


def test_zero_grads_give_zeros_not_nan():
    for clip in (nn.ClipGradByNorm(1.0), nn.ClipGradByGlobalNorm(1.0), nn.ClipGradByValue(1.0)):
        out = clip(_pairs([0.0, 0.0, 0.0]))
        np.testing.assert_array_equal(out[0][1].numpy(), [0.0, 0.0, 0.0])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_low_precision_grads(dtype):
    # Fp16 grads work; their squares (1e6 here) would overflow in fp16 arithmetic
    pairs = _pairs([3000.0, 4000.0], [0.0], dtype=dtype)
    out = nn.ClipGradByGlobalNorm(1.0)(pairs)
    assert out[0][1].dtype == getattr(paddle, dtype)
    np.testing.assert_allclose(out[0][1].astype("float32").numpy(), [0.6, 0.8], rtol=1e-2)
    out = nn.ClipGradByNorm(5.0)(pairs)
    np.testing.assert_allclose(out[0][1].astype("float32").numpy(), [3.0, 4.0], rtol=1e-2)
    assert out[0][1].dtype == getattr(paddle, dtype)


def test_clip_by_norm_per_tensor():
    out = nn.ClipGradByNorm(1.0)(_pairs([3.0, 4.0], [0.3, 0.4]))
    np.testing.assert_allclose(out[0][1].numpy(), [0.6, 0.8], rtol=1e-6)
    np.testing.assert_allclose(out[1][1].numpy(), [0.3, 0.4], rtol=1e-6)
    pairs = _pairs([3.0, 4.0])
    pairs[0][0].need_clip = False
    assert nn.ClipGradByNorm(1.0)(pairs)[0][1] is pairs[0][1]


def test_clip_by_value():
    out = nn.ClipGradByValue(1.0)(_pairs([-3.0, 0.5, 4.0]))
    np.testing.assert_allclose(out[0][1].numpy(), [-1.0, 0.5, 1.0])
    out = nn.ClipGradByValue(2.0, -0.5)(_pairs([-3.0, 0.5, 4.0]))
    np.testing.assert_allclose(out[0][1].numpy(), [-0.5, 0.5, 2.0])
    with pytest.raises(ValueError, match="ClipGradByValue"):
        nn.ClipGradByValue(-1.0)
    with pytest.raises(TypeError, match="ClipGradByGlobalNorm"):
        nn.ClipGradByGlobalNorm("a")


def test_str():
    assert str(nn.ClipGradByGlobalNorm(1.0)) == "Gradient Clip By GlobalNorm, global_norm=1.000000"
    assert str(nn.ClipGradByNorm(1.0)) == "Gradient Clip By Norm, clip_norm=1.000000"
    assert str(nn.ClipGradByValue(2.0, -1)) == \
        "Clip Gradient By Value, min = -1.000000, max=2.000000"


def _train(lib, state, x, y, make_opt, steps=3):
    fc = lib.nn.Linear(4, 3)
    fc2 = lib.nn.Linear(3, 1)
    fc.set_state_dict({k: v for k, v in state[0].items()})
    fc2.set_state_dict({k: v for k, v in state[1].items()})
    params = fc.parameters() + fc2.parameters()
    fc2.bias.need_clip = False
    opt = make_opt(lib, params)
    for _ in range(steps):
        loss = ((fc2(fc(lib.to_tensor(x))) - lib.to_tensor(y)) ** 2).mean() * 50
        loss.backward()
        opt.step()
        opt.clear_grad()
    return [p.numpy() for p in params]


CLIPS = {
    "global": lambda lib: lib.nn.ClipGradByGlobalNorm(0.5),
    "norm": lambda lib: lib.nn.ClipGradByNorm(0.3),
    "value": lambda lib: lib.nn.ClipGradByValue(0.2),
    "value_minmax": lambda lib: lib.nn.ClipGradByValue(0.2, -0.05),
}


@pytest.mark.parity
@pytest.mark.parametrize("opt", ["sgd", "adam", "momentum"])
@pytest.mark.parametrize("clip", sorted(CLIPS))
def test_clip_through_optimizer_parity(clip, opt, pd):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 4)).astype("float32")
    y = rng.standard_normal((8, 1)).astype("float32")
    state = ({"weight": rng.standard_normal((4, 3)).astype("float32"),
              "bias": rng.standard_normal(3).astype("float32")},
             {"weight": rng.standard_normal((3, 1)).astype("float32"),
              "bias": rng.standard_normal(1).astype("float32")})

    def make_opt(lib, params):
        c = CLIPS[clip](lib)
        if opt == "sgd":
            return lib.optimizer.SGD(0.1, parameters=params, grad_clip=c)
        if opt == "momentum":
            return lib.optimizer.Momentum(0.1, parameters=params, grad_clip=c)
        return lib.optimizer.Adam(0.05, parameters=params, grad_clip=c)

    ours = _train(paddle, state, x, y, make_opt)
    theirs = _train(pd, state, x, y, make_opt)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
