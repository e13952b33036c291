"""GradScaler through a long run of overflowing steps (a corrupt data shard): the scale stays
>= 1, the next clean step updates the weights with finite values, every skipped step reports
found_inf."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _setup():
    paddle.seed(0)
    lin = paddle.nn.Linear(4, 2)
    opt = paddle.optimizer.SGD(0.01, parameters=lin.parameters())
    return lin, opt


def _step(lin, opt, scaler, factor):
    with paddle.amp.auto_cast(dtype="float16"):
        loss = lin(paddle.ones([3, 4])).mean()
    loss = loss * factor
    scaler.scale(loss).backward()
    before = [p.numpy().copy() for p in lin.parameters()]
    scaler.step(opt)
    found = scaler._found_inf
    scaler.update()
    opt.clear_grad()
    return before, found


def test_scale_never_drops_below_one_and_clean_step_stays_finite(capsys):
    lin, opt = _setup()
    scaler = paddle.amp.GradScaler()  # default settings: 65536, decr 0.5 after every bad step
    for i in range(200):  # more than the ~165 that used to drive the scale to 0.0
        before, found = _step(lin, opt, scaler, float("inf") if i % 2 else float("nan"))
        assert found, f"bad step {i} was not reported as an overflow"
        for p, b in zip(lin.parameters(), before):
            np.testing.assert_array_equal(p.numpy(), b)  # the step was skipped
    assert scaler._scale_value() == 1.0
    assert "kept at the minimum 1.0" in capsys.readouterr().out
    before, found = _step(lin, opt, scaler, 1.0)
    assert not found
    for p, b in zip(lin.parameters(), before):
        assert np.isfinite(p.numpy()).all()
        assert not np.array_equal(p.numpy(), b)  # the clean step did update


def test_zero_scale_is_reported_as_overflow_not_written_into_weights():
    lin, opt = _setup()
    scaler = paddle.amp.GradScaler()
    scaler.set_init_loss_scaling(0.0)  # finite scaled gradients, 0 * inf when unscaled
    before, found = _step(lin, opt, scaler, 1.0)
    assert found
    for p, b in zip(lin.parameters(), before):
        np.testing.assert_array_equal(p.numpy(), b)
    assert scaler._scale_value() == 1.0  # the decrease is clamped at 1


def test_increase_that_would_overflow_keeps_the_scale():
    lin, opt = _setup()
    big = float(np.finfo(np.float32).max) / 1.5
    scaler = paddle.amp.GradScaler(init_loss_scaling=big, incr_every_n_steps=1)
    _step(lin, opt, scaler, 0.0)  # a zero loss: finite gradients at any scale
    np.testing.assert_allclose(scaler._scale_value(), np.float32(big), rtol=1e-6)
