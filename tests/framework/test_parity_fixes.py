"""Tensor.numpy() ownership and clear_grad aliasing, against Paddle 2.6.2."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl


def _both(pd):
    return [(pd, "paddle"), (paddle_hl, "paddle_hl")]


@pytest.mark.parity
def test_numpy_returns_an_independent_array_parity(pd):
    for lib, _ in _both(pd):
        x = lib.to_tensor([1.0, 2.0, 3.0])
        a = x.numpy()
        a[0] = 99.0  # writing to the array leaves the tensor alone
        np.testing.assert_array_equal(x.numpy(), [1.0, 2.0, 3.0])
        x[1] = 7.0  # and writing to the tensor leaves an earlier array alone
        np.testing.assert_array_equal(a, [99.0, 2.0, 3.0])
        z = lib.to_tensor(5.0).numpy()
        assert isinstance(z, np.ndarray) and z.shape == ()


@pytest.mark.parity
def test_numpy_snapshot_of_running_stats_and_grads_parity(pd):
    # in-place state updates (batch-norm running stats, gradient accumulation) after the
    # snapshot do not show up in it
    x = np.random.RandomState(0).randn(3, 2, 4, 4).astype("float32")
    snaps = {}
    for lib, key in _both(pd):
        bn = lib.nn.BatchNorm2D(2)
        bn.train()
        bn(lib.to_tensor(x))
        before = bn._mean.numpy()
        bn(lib.to_tensor(x * 2))
        t = lib.to_tensor([1.0, 2.0], stop_gradient=False)
        (t * 3).sum().backward()
        g = t.grad.numpy()
        (t * 1).sum().backward()
        snaps[key] = (before, bn._mean.numpy(), g, t.grad.numpy())
    for a, b in zip(snaps["paddle"], snaps["paddle_hl"]):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-7)
    assert not np.allclose(snaps["paddle_hl"][0], snaps["paddle_hl"][1])


@pytest.mark.parity
def test_clear_grad_detaches_the_zeroed_gradient_parity(pd):
    res = {}
    for lib, key in _both(pd):
        x = lib.to_tensor([1.0, 2.0], stop_gradient=False)
        (x * 3).sum().backward()
        g = x.grad
        (x * 2).sum().backward()
        accumulated = g.numpy()  # accumulation before a clear is in place
        x.clear_grad()
        cleared = g.numpy()  # the old gradient tensor is zero-filled ...
        (x * 5).sum().backward()
        # ... and the next backward writes a new gradient, not into the old one
        res[key] = (accumulated, cleared, g.numpy(), x.grad.numpy())
        lin = lib.nn.Linear(2, 1)
        opt = lib.optimizer.SGD(0.1, parameters=lin.parameters())
        lin(lib.ones([1, 2])).sum().backward()
        gw = lin.weight.grad
        opt.step()
        opt.clear_grad()
        lin(lib.ones([1, 2]) * 3).sum().backward()
        res[key] += (gw.numpy(), lin.weight.grad.numpy())
        lin.clear_gradients()
        res[key] += (lin.weight.grad.numpy(),)
        opt.clear_grad(set_to_zero=False)
        res[key] += (lin.weight.grad is None,)
    for a, b in zip(res["paddle"], res["paddle_hl"]):
        np.testing.assert_array_equal(b, a)


def test_clear_grad_zeroes_then_accumulates():
    x = paddle_hl.to_tensor([1.0, 2.0], stop_gradient=False)
    (x * 3).sum().backward()
    x.clear_gradient()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])
    (x * 2).sum().backward()
    (x * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 4.0])
    x.clear_gradient(False)
    assert x.grad is None
