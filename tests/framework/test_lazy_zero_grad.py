"""Cleared gradients are lazy zeros: they read as zeros everywhere, take no memory, and every
in-place write or backward after them gives what a buffer of real zeros would give."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.framework.tensor import is_lazy_zero


def _net(seed=0):
    paddle.seed(seed)
    return paddle.nn.Sequential(paddle.nn.Linear(4, 5), paddle.nn.Tanh(), paddle.nn.Linear(5, 3))


def _x():
    return paddle.to_tensor(np.random.default_rng(1).standard_normal((6, 4)).astype("float32"))


def _backward(net):
    net(_x()).square().mean().backward()


@pytest.mark.cpu
def test_clear_grad_gives_zeros_that_take_no_memory():
    net = _net()
    _backward(net)
    p = net[0].weight
    p.clear_grad()
    assert is_lazy_zero(p.grad._data)
    assert p.grad.shape == [4, 5] and p.grad.dtype == paddle.float32
    np.testing.assert_array_equal(p.grad.numpy(), np.zeros((4, 5), "float32"))
    p.grad.numpy()[...] = 1  # numpy() is a writable copy
    assert float(p.grad.abs().sum()) == 0.0
    p.clear_grad()  # twice is fine
    assert is_lazy_zero(p.grad._data)


def test_backward_after_clear_grad_equals_a_fresh_backward_in_the_same_tensor():
    fresh, cleared = _net(), _net()
    _backward(fresh)
    _backward(cleared)
    _backward(cleared)
    opt = paddle.optimizer.SGD(0.1, parameters=cleared.parameters())
    opt.clear_grad()
    taken = cleared[0].weight.grad  # taken while cleared: sees the next backward, as in Paddle
    _backward(cleared)
    for a, b in zip(fresh.parameters(), cleared.parameters()):
        np.testing.assert_array_equal(b.grad.numpy(), a.grad.numpy())
        assert not is_lazy_zero(b.grad._data)
    assert taken is cleared[0].weight.grad
    np.testing.assert_array_equal(taken.numpy(), fresh[0].weight.grad.numpy())
    _backward(cleared)  # a second backward accumulates
    np.testing.assert_allclose(cleared[0].weight.grad.numpy(),
                               2 * fresh[0].weight.grad.numpy(), rtol=1e-6)


def test_a_gradient_taken_before_clear_grad_is_zero_filled():
    net = _net()
    _backward(net)
    before = net[0].weight.grad
    net.clear_gradients()
    np.testing.assert_array_equal(before.numpy(), np.zeros((4, 5), "float32"))
    assert net[0].weight.grad is not before


@pytest.mark.cpu
def test_clear_grad_zero_fills_only_gradients_that_something_else_holds(monkeypatch):
    # zero-filling a gradient nobody else can see is a wasted pass over its bytes (1.2 ms of a
    # ResNet-18 step): clear_grad must count the references before it holds any itself
    from paddle_hl.framework import tensor as tensor_mod

    seen = []
    original = tensor_mod._held_elsewhere

    def recording(t):
        held = original(t)
        seen.append(held)
        return held

    monkeypatch.setattr(tensor_mod, "_held_elsewhere", recording)
    net = _net()
    opt = paddle.optimizer.Adam(parameters=net.parameters())
    _backward(net)
    opt.step()
    opt.clear_grad()
    assert seen == [False] * 4
    seen.clear()
    _backward(net)
    kept = net[2].bias.grad  # the user's variable: this one must be zero-filled
    view = net[0].weight.grad._data[1:]  # a view of the buffer: so must this one
    opt.clear_grad()
    assert seen == [True, False, False, True]
    np.testing.assert_array_equal(kept.numpy(), np.zeros(3, "float32"))
    np.testing.assert_array_equal(view, np.zeros((3, 5), "float32"))


@pytest.mark.parametrize("write", ["set_value", "copy_", "setitem", "scale_", "add_", "zero_",
                                   "clip_value", "clip_norm"])
def test_in_place_writes_into_a_cleared_gradient(write):
    net = _net()
    _backward(net)
    p = net[0].weight
    p.clear_grad()
    g = p.grad
    ones = np.ones((4, 5), "float32")
    expected = {"set_value": ones, "copy_": ones, "setitem": np.where(
        np.arange(4)[:, None] == 1, ones, 0 * ones), "scale_": 0 * ones,
        "add_": ones, "zero_": 0 * ones, "clip_value": 0 * ones, "clip_norm": 0 * ones}[write]
    if write == "set_value":
        g.set_value(ones)
    elif write == "copy_":
        g.copy_(paddle.to_tensor(ones))
    elif write == "setitem":
        g[1] = 1.0
    elif write == "scale_":
        g.scale_(3.0)
    elif write == "add_":
        g.add_(paddle.to_tensor(ones))
    elif write == "zero_":
        g.zero_()
    elif write == "clip_value":
        paddle.nn.utils.clip_grad_value_([p], 0.5)
    else:
        paddle.nn.utils.clip_grad_norm_([p], 1.0)
    np.testing.assert_array_equal(p.grad.numpy(), expected)
    _backward(net)  # and the next backward adds to what was written
    fresh = _net()
    _backward(fresh)
    np.testing.assert_allclose(p.grad.numpy(), expected + fresh[0].weight.grad.numpy(),
                               rtol=1e-6)


@pytest.mark.parametrize("name", ["SGD", "Momentum", "Adam", "AdamW", "RMSProp", "Adagrad"])
def test_optimizers_treat_cleared_gradients_as_real_zeros(name):
    # an unused parameter keeps its cleared gradient through backward: the optimizer must
    # update it exactly as with a gradient buffer of zeros (Adam's moments decay, momentum moves)
    results = []
    for materialize in (False, True):
        net = _net()
        extra = paddle.create_parameter([3], "float32")
        params = list(net.parameters()) + [extra]
        opt = getattr(paddle.optimizer, name)(learning_rate=0.1, parameters=params)
        (net(_x()).square().mean() + extra.sum()).backward()
        opt.step()
        for _ in range(2):
            opt.clear_grad()
            if materialize:
                for p in params:
                    p.grad.set_value(np.zeros(p.shape, "float32"))
                    assert not is_lazy_zero(p.grad._data)
            _backward(net)  # extra gets no gradient
            opt.step()
        results.append([p.numpy() for p in params])
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def test_grad_scaler_unscales_cleared_gradients():
    net = _net()
    opt = paddle.optimizer.SGD(0.1, parameters=net.parameters())
    scaler = paddle.amp.GradScaler(init_loss_scaling=8.0)
    _backward(net)
    opt.clear_grad()
    scaler.unscale_(opt)  # every gradient is a cleared zero: finite, stays zero
    assert not scaler._found_inf
    for p in net.parameters():
        np.testing.assert_array_equal(p.grad.numpy(), np.zeros(p.shape, "float32"))


@pytest.mark.parametrize("expr", ["add", "sub", "seed", "view", "hook", "reshape"])
def test_stored_leaf_gradients_never_alias(expr):
    # gradients are stored without a copy only when nothing else holds the array: one array
    # handed to two leaves, a gradient seed the user holds, a view of another gradient, or an
    # array a hook saw, are copied
    a = paddle.to_tensor(np.arange(6, dtype="float32").reshape(2, 3), stop_gradient=False)
    b = paddle.to_tensor(np.ones((2, 3), "float32"), stop_gradient=False)
    seed = paddle.to_tensor(np.full((2, 3), 2.0, "float32"))
    seen = []
    if expr == "hook":
        a.register_hook(lambda g: seen.append(g) or None)
    if expr == "view":
        y = paddle.concat([a * 2.0, b * 2.0], axis=0)[:2] * 3.0 + paddle.concat(
            [a, b], axis=0)[2:]
    elif expr == "sub":
        y = (a - b) * 2.0
    elif expr == "reshape":  # two reshapes of one fresh array reach the leaves
        y = (a.reshape([6]) + b.reshape([6])) * 2.0
    else:
        y = (a + b) * 2.0  # the product's gradient is a fresh array handed to both leaves
    if expr == "seed":
        (a + b).backward(seed)
    else:
        y.sum().backward()
    ga, gb = a.grad.numpy(), b.grad.numpy()
    a.grad.scale_(10.0)  # an in-place change of one gradient touches nothing else
    np.testing.assert_array_equal(b.grad.numpy(), gb)
    b.grad.scale_(3.0)
    np.testing.assert_array_equal(a.grad.numpy(), 10 * ga)
    np.testing.assert_array_equal(b.grad.numpy(), 3 * gb)
    np.testing.assert_array_equal(seed.numpy(), np.full((2, 3), 2.0, "float32"))
    for g in seen:
        np.testing.assert_array_equal(g.numpy(), ga)
