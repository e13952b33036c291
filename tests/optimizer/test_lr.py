"""Every LR scheduler's sequence against Paddle 2.6.2, state_dict round trips, validation."""

from __future__ import annotations

import math

import numpy as np
import pytest

import paddle_hl as paddle

lr = paddle.optimizer.lr

CASES = {
    "NoamDecay": dict(d_model=64, warmup_steps=10, learning_rate=2.0),
    "PiecewiseDecay": dict(boundaries=[5, 12, 30], values=[0.1, 0.05, 0.01, 0.001]),
    "NaturalExpDecay": dict(learning_rate=0.5, gamma=0.1),
    "InverseTimeDecay": dict(learning_rate=0.5, gamma=0.2),
    "PolynomialDecay": dict(learning_rate=0.5, decay_steps=20, end_lr=0.01, power=2.0),
    "PolynomialDecay_cycle": dict(learning_rate=0.5, decay_steps=7, end_lr=0.01, cycle=True),
    "LinearWarmup": dict(learning_rate=0.5, warmup_steps=10, start_lr=0.0, end_lr=0.5),
    "ExponentialDecay": dict(learning_rate=0.5, gamma=0.9),
    "MultiStepDecay": dict(learning_rate=0.5, milestones=[5, 17, 33], gamma=0.5),
    "StepDecay": dict(learning_rate=0.5, step_size=7, gamma=0.3),
    "LambdaDecay": dict(learning_rate=0.5, lr_lambda=lambda e: 0.95 ** e),
    "MultiplicativeDecay": dict(learning_rate=0.5, lr_lambda=lambda e: 0.9),
    "CosineAnnealingDecay": dict(learning_rate=0.5, T_max=13, eta_min=0.01),
    "LinearLR": dict(learning_rate=0.5, total_steps=20, start_factor=0.2, end_factor=0.9),
    "CosineAnnealingWarmRestarts": dict(learning_rate=0.5, T_0=5, T_mult=2, eta_min=0.01),
    "CosineAnnealingWarmRestarts_1": dict(learning_rate=0.5, T_0=6, eta_min=0.0),
    "OneCycleLR": dict(max_learning_rate=1.0, total_steps=60),
    "OneCycleLR_3": dict(max_learning_rate=1.0, total_steps=60, three_phase=True,
                         anneal_strategy="linear"),
    "CyclicLR": dict(base_learning_rate=0.1, max_learning_rate=1.0, step_size_up=6),
    "CyclicLR_2": dict(base_learning_rate=0.1, max_learning_rate=1.0, step_size_up=4,
                       step_size_down=9, mode="triangular2"),
    "CyclicLR_exp": dict(base_learning_rate=0.1, max_learning_rate=1.0, step_size_up=5,
                         mode="exp_range", exp_gamma=0.97),
}


def _seq(mod, key, steps=50):
    name = key.split("_")[0]
    sched = getattr(mod, name)(**CASES[key])
    out = []
    for _ in range(steps):
        out.append(sched())
        sched.step()
    return out


@pytest.mark.parity
@pytest.mark.parametrize("key", sorted(CASES))
def test_sequence_parity(pd, key):
    np.testing.assert_allclose(_seq(lr, key), _seq(pd.optimizer.lr, key), rtol=1e-12,
                               atol=1e-15)


@pytest.mark.parity
def test_linear_warmup_wrapping_a_scheduler(pd):
    def build(mod):
        inner = mod.StepDecay(0.5, step_size=3, gamma=0.5)
        return mod.LinearWarmup(inner, warmup_steps=4, start_lr=0.0, end_lr=0.5)

    a, b = build(lr), build(pd.optimizer.lr)
    seq_a, seq_b = [], []
    for _ in range(20):
        seq_a.append(a())
        seq_b.append(b())
        a.step()
        b.step()
    np.testing.assert_allclose(seq_a, seq_b, rtol=1e-12)


@pytest.mark.parity
def test_reduce_on_plateau_parity(pd):
    metrics = [1.0, 0.9, 0.95, 0.95, 0.96, 0.97, 0.8, 0.81, 0.82, 0.83, 0.84, 0.85, 0.86] * 3
    res = []
    for mod in (lr, pd.optimizer.lr):
        s = mod.ReduceOnPlateau(1.0, patience=2, factor=0.5, cooldown=1)
        seq = []
        for m in metrics:
            s.step(m)
            seq.append(s())
        res.append(seq)
    np.testing.assert_allclose(res[0], res[1])
    s = lr.ReduceOnPlateau(1.0, mode="max", patience=0)
    s.step(paddle.to_tensor(1.0))
    s.step(paddle.to_tensor([0.5]))
    assert s() == pytest.approx(0.1)


@pytest.mark.parity
def test_step_with_explicit_epoch_parity(pd):
    a = lr.CosineAnnealingDecay(0.5, T_max=10)
    b = pd.optimizer.lr.CosineAnnealingDecay(0.5, T_max=10)
    for e in [3, 7, 15, 2]:
        a.step(e)
        b.step(e)
        assert a() == pytest.approx(b(), rel=1e-12)
    a = lr.CosineAnnealingWarmRestarts(0.5, T_0=3, T_mult=2)
    b = pd.optimizer.lr.CosineAnnealingWarmRestarts(0.5, T_0=3, T_mult=2)
    for e in [1, 4, 10, 22]:
        a.step(e)
        b.step(e)
        assert a() == pytest.approx(b(), rel=1e-12)


def test_state_dict_round_trip():
    s = lr.StepDecay(0.5, step_size=2)
    for _ in range(5):
        s.step()
    state = s.state_dict()
    assert state == {"last_epoch": 5, "last_lr": s()}
    t = lr.StepDecay(0.5, step_size=2)
    t.set_state_dict(state)
    assert t.last_epoch == 5 and t() == s()
    t.step()
    s.step()
    assert t() == s()
    w = lr.LinearWarmup(lr.StepDecay(0.5, 2), 3, 0.0, 0.5)
    for _ in range(6):
        w.step()
    st = w.state_dict()
    assert "LinearWarmup_LR" in st
    w2 = lr.LinearWarmup(lr.StepDecay(0.5, 2), 3, 0.0, 0.5)
    w2.set_state_dict(st)
    assert w2.learning_rate.last_epoch == w.learning_rate.last_epoch


def test_polynomial_decay_never_divides_by_zero():
    s = lr.PolynomialDecay(0.1, decay_steps=5, cycle=True)
    vals = [s()]
    for _ in range(12):
        s.step()
        vals.append(s())
    assert all(math.isfinite(v) for v in vals)
    s.step(0)
    assert math.isfinite(s())


def test_reference_formulas():
    s = lr.MultiplicativeDecay(1.0, lambda e: 0.5)
    seq = []
    for _ in range(4):
        seq.append(s())
        s.step()
    assert seq == [1.0, 0.5, 0.25, 0.125]
    s = lr.LinearLR(1.0, total_steps=4, start_factor=0.5, end_factor=1.0)
    seq = []
    for _ in range(6):
        seq.append(s())
        s.step()
    np.testing.assert_allclose(seq, [0.5, 0.625, 0.75, 0.875, 1.0, 1.0])
    c = lr.CyclicLR(0.0, 1.0, step_size_up=2)
    seq = []
    for _ in range(5):
        seq.append(c())
        c.step()
    np.testing.assert_allclose(seq, [0.0, 0.5, 1.0, 0.5, 0.0])


@pytest.mark.parametrize("build,match", [
    (lambda: lr.StepDecay(0.1, step_size=2, gamma=1.5), "gamma"),
    (lambda: lr.PiecewiseDecay([1, 2], [0.1]), "values"),
    (lambda: lr.MultiStepDecay(0.1, [3, 2]), "milestones"),
    (lambda: lr.ReduceOnPlateau(0.1, mode="middle"), "mode"),
    (lambda: lr.OneCycleLR(0.1, total_steps=0), "total_steps"),
    (lambda: lr.CyclicLR(0.1, 1.0, step_size_up=2, mode="sine"), "mode"),
    (lambda: lr.LinearLR(0.1, 10, start_factor=0), "start_factor"),
])
def test_bad_arguments(build, match):
    with pytest.raises((ValueError, TypeError), match=match):
        build()


def test_verbose_prints(capsys):
    s = lr.ExponentialDecay(0.5, 0.5, verbose=True)
    s.step()
    assert "ExponentialDecay set learning rate to 0.25" in capsys.readouterr().out
