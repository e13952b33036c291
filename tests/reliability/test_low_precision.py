"""Optimizers on float16/bfloat16 parameters: the moments, beta powers and the update arithmetic
in float32 as Paddle keeps them, rows with zero gradient finite and unchanged, the state's keys
and dtypes those of Paddle, and a state_dict round trip that keeps them."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle

LOW = ["float16", "bfloat16"]
ADAMS = ["Adam", "AdamW", "Adamax", "Lamb"]
ALL = ADAMS + ["SGD", "Momentum", "Adagrad", "RMSProp", "Adadelta"]
MULTI_PRECISION = ["Adam", "AdamW", "Lamb", "Momentum", "SGD"]  # the ones that take the flag


def _embedding_step(dtype, name, steps=1, **kw):
    paddle.seed(0)
    emb = paddle.nn.Embedding(4, 3)
    emb.to(dtype=dtype)
    opt = getattr(paddle.optimizer, name)(learning_rate=0.1, parameters=emb.parameters(), **kw)
    w0 = emb.weight.astype("float32").numpy().copy()
    for _ in range(steps):
        emb(paddle.to_tensor([0, 1])).astype("float32").sum().backward()
        opt.step()
        opt.clear_grad()
    opt.model = emb
    return w0, emb.weight.astype("float32").numpy(), opt


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("name", ADAMS)
def test_rows_without_gradient_stay_and_rows_with_one_learn(dtype, name):
    # float16/bfloat16 beta powers and epsilon used to give 0/0 = NaN in the rows with zero
    # gradient, and bfloat16's 0.999 -> 1.0 made the bias correction divide by zero
    # (no weight decay: it would move the rows without gradient too)
    kw = {"AdamW": {"weight_decay": 0.0}, "Lamb": {"lamb_weight_decay": 0.0}}.get(name, {})
    w0, w1, _ = _embedding_step(dtype, name, steps=3, **kw)
    assert np.isfinite(w1).all(), w1
    np.testing.assert_array_equal(w1[2:], w0[2:])  # no gradient: Adam's update is 0 there
    assert (np.abs(w1[:2] - w0[:2]) > 0.05).all(), w1[:2] - w0[:2]


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("name,kw", [("Adam", {}), ("AdamW", {"weight_decay": 0.1}),
                                     ("Lamb", {}), ("SGD", {}),
                                     ("Momentum", {"use_nesterov": True}), ("Adagrad", {}),
                                     ("RMSProp", {"centered": True, "momentum": 0.5}),
                                     ("Adadelta", {"learning_rate": 1.0}),
                                     ("Momentum", {"weight_decay": 0.01})])
def test_one_step_is_the_float32_step_rounded(dtype, name, kw):
    # Paddle's kernels load low-precision values into float32, compute there and round once at
    # the store: the first step from the same values equals the float32 optimizer's, rounded
    # (not Adamax: Paddle keeps its beta power in the parameter's dtype, so its first step
    # uses 0.9 rounded)
    rng = np.random.default_rng(1)
    w = rng.standard_normal((5, 7)).astype(np.float32)
    g = rng.standard_normal((5, 7)).astype(np.float32) * 1e-2
    w_low = paddle.to_tensor(w).astype(dtype).astype("float32").numpy()
    g_low = paddle.to_tensor(g).astype(dtype).astype("float32").numpy()
    out = {}
    for dt in (dtype, "float32"):
        p = paddle.to_tensor(w_low, stop_gradient=False).astype(dt).detach()
        p.stop_gradient = False
        opt = getattr(paddle.optimizer, name)(**{"learning_rate": 1e-3, "parameters": [p],
                                                 **kw})
        (p.astype("float32") * paddle.to_tensor(g_low)).sum().backward()
        opt.step()
        out[dt] = p
    want = out["float32"].astype(dtype).astype("float32").numpy()
    np.testing.assert_array_equal(out[dtype].astype("float32").numpy(), want)


@pytest.mark.parametrize("dtype", LOW)
def test_bfloat16_adam_learns_over_many_steps(dtype):
    # 0.999 rounds to 1.0 in bfloat16: with beta powers in the parameter's dtype the bias
    # correction 1 - beta2**t was 0 and nothing learnt; here a quadratic goes to its minimum
    p = paddle.to_tensor(np.full(4, 3.0, np.float32)).astype(dtype).detach()
    p.stop_gradient = False
    opt = paddle.optimizer.Adam(learning_rate=0.1, parameters=[p])
    for _ in range(100):
        (p.astype("float32") ** 2).sum().backward()
        opt.step()
        opt.clear_grad()
    assert np.abs(p.astype("float32").numpy()).max() < 0.5, p


# the dtypes real Paddle 2.6.2 gives each accumulator of a float16/bfloat16 parameter
# (checked against it in test_accumulator_dtypes_match_paddle)
def _acc_dtypes(opt):
    out = {}
    for key, val in opt.state_dict().items():
        if hasattr(val, "dtype"):
            out[key.split(".w_0_", 1)[1]] = str(val.dtype).replace("paddle.", "")
    return out


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("name,kw", [(n, {}) for n in ALL]
                         + [(n, {"multi_precision": True}) for n in MULTI_PRECISION])
def test_accumulators_keep_their_dtypes_through_state_dict(dtype, name, kw):
    _, _, opt = _embedding_step(dtype, name, **kw)
    dts = _acc_dtypes(opt)
    state = {k: v for k, v in opt.state_dict().items()}
    # a fresh optimizer loading the state has the same dtypes, before and after a step
    emb = opt.model
    opt2 = getattr(paddle.optimizer, name)(learning_rate=0.1, parameters=emb.parameters(),
                                           **kw)
    opt2.set_state_dict(state)
    emb(paddle.to_tensor([0, 1])).astype("float32").sum().backward()
    opt2.step()
    assert _acc_dtypes(opt2) == dts
    for key, val in opt.state_dict().items():
        if hasattr(val, "dtype") and "pow" in key:
            # the loaded beta powers were used and advanced: not restarted
            assert not np.array_equal(val.astype("float32").numpy(),
                                      opt2.state_dict()[key].astype("float32").numpy())


@pytest.mark.parity
@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("name,kw", [(n, {}) for n in ALL]
                         + [(n, {"multi_precision": True}) for n in MULTI_PRECISION])
def test_accumulator_dtypes_match_paddle(pd, dtype, name, kw):
    # Paddle's CPU has no float16 optimizer kernels, but it creates the accumulators before
    # it runs one: their names and dtypes are Paddle's layout of the state (with master
    # weights, the accumulators belong to the master: '{param}_fp32_master_0_moment1_0')
    _, _, opt = _embedding_step(dtype, name, **kw)
    pd.seed(0)
    emb = pd.nn.Embedding(4, 3)
    emb.to(dtype=dtype)
    ref = getattr(pd.optimizer, name)(learning_rate=0.1, parameters=emb.parameters(), **kw)
    emb(pd.to_tensor([0, 1])).astype("float32").sum().backward()
    try:
        ref.step()
    except RuntimeError:  # "kernel ... float16 ... is not registered" on the CPU
        pass
    assert _acc_dtypes(opt) == _acc_dtypes(ref)
