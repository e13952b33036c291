"""Residuals in the op protocol: a kernel returns ``(out, GRAD.save(...))`` and its one gradient
rule reads them, on arrays at first order and as constants under create_graph."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.framework.engine import GRAD, GraphFreedError, Saved, _bound
from paddle_hl.framework.op import apply, op

calls = {"rule": 0}


def _max_rule(M, x, out, saved, g, *, axis):
    calls["rule"] += 1
    (mask,) = saved  # the argmax as a 0/1 choice: a constant under create_graph
    return (g * mask,)


@op("test_max", grad=_max_rule, residuals=True)
def _max_k(x, axis):
    """max over ``axis`` (kept), the argmax saved as a 0/1 mask of x's shape."""
    idx = x.argmax(axis=axis)
    mask = np.zeros_like(x)
    np.put_along_axis(mask, np.expand_dims(idx, axis), 1.0, axis=axis)
    return x.max(axis=axis, keepdims=True), GRAD.save(mask)


def _softplus_rule(M, x, out, saved, g):
    (s,) = saved
    if M.tensor:  # s = sigmoid(x) is differentiable: recomputed from the Tensor input
        s = M.sigmoid(x)
    return (g * s,)


@op("test_softplus", grad=_softplus_rule, residuals=True)
def _softplus_k(x):
    s = 1.0 / (1.0 + np.exp(-x))
    return np.log1p(np.exp(x)), GRAD.save(s)


def _two_rule(M, x, out, saved, g0, g1, *, axis):
    (mask,) = saved
    return ((g0 + g1) * mask,)


@op("test_max2", grad=_two_rule, residuals=True)
def _max2_k(x, axis):
    """Two outputs (max and max again, doubled): the multi-output node binds the residuals."""
    out, saved = _max_k(x, axis)
    return (out, out * 1.0), saved


def _t(v):
    return paddle.to_tensor(np.asarray(v, dtype=np.float64), stop_gradient=False)


X = np.array([[0.3, 2.0, -1.0], [4.0, 0.5, 1.5]])


def test_first_order_reads_the_residuals():
    x = _t(X)
    y = apply(_max_k, x, axis=1)
    assert isinstance(y._node.saved, Saved)
    n = calls["rule"]
    (y * y).sum().backward()
    assert calls["rule"] == n + 1
    want = np.zeros_like(X)
    want[0, 1], want[1, 0] = 2 * 2.0, 2 * 4.0
    np.testing.assert_allclose(x.grad.numpy(), want)


def test_residuals_are_freed_with_the_inputs():
    x = _t(X)
    y = apply(_max_k, x, axis=1)
    node = y._node
    s = y.sum()
    s.backward(retain_graph=True)
    assert node.saved is not None
    s.backward()
    assert node.saved is None and node.in_data is None
    with pytest.raises(GraphFreedError):
        s.backward()


def test_profiler_binding_passes_the_residuals():
    x = _t(X)
    y = apply(_max_k, x, axis=1)
    (gx,) = _bound(y._node)(np.ones((2, 1)))
    np.testing.assert_allclose(gx, [[0, 1, 0], [1, 0, 0]])


def test_constant_residual_under_create_graph():
    # f = sum(max(x)^2): df/dx = 2 max * mask, d2f/dx2 = 2 mask mask^T (the mask a constant)
    x = _t(X)
    y = apply(_max_k, x, axis=1)
    (gx,) = paddle.grad((y * y).sum(), x, create_graph=True)
    assert not gx.stop_gradient
    (ggx,) = paddle.grad(gx.sum(), x)
    want = np.zeros_like(X)
    want[0, 1], want[1, 0] = 2.0, 2.0
    np.testing.assert_allclose(ggx.numpy(), want)


def test_recomputed_residual_under_create_graph_matches_finite_differences():
    xv = np.array([-1.5, 0.2, 2.0])
    x = _t(xv)
    y = apply(_softplus_k, x)
    (gx,) = paddle.grad(y.sum(), x, create_graph=True)
    s = 1 / (1 + np.exp(-xv))
    np.testing.assert_allclose(gx.numpy(), s)
    (ggx,) = paddle.grad((gx * gx).sum(), x)
    eps = 1e-6

    def first(v):
        return (1 / (1 + np.exp(-v))) ** 2

    fd = (first(xv + eps) - first(xv - eps)) / (2 * eps)
    np.testing.assert_allclose(ggx.numpy(), fd, rtol=1e-6)


def test_multi_output_kernel_binds_the_residuals():
    x = _t(X)
    a, b = apply(_max2_k, x, axis=1)
    (a.sum() + 3 * b.sum()).backward()
    want = np.zeros_like(X)
    want[0, 1] = want[1, 0] = 4.0
    np.testing.assert_allclose(x.grad.numpy(), want)


def test_residuals_go_through_saved_tensors_hooks():
    packed = []

    def pack(t):
        packed.append(t.numpy().copy())
        return packed[-1]

    def unpack(a):
        return paddle.to_tensor(a)

    x = _t(X)
    with paddle.autograd.saved_tensors_hooks(pack, unpack):
        y = apply(_max_k, x, axis=1)
    # the input and the mask are packed (each once): the node holds packed values only
    assert len(packed) == 2
    mask = [p for p in packed if set(np.unique(p)) <= {0.0, 1.0}]
    assert len(mask) == 1
    mask[0][...] = 0.5  # what unpack returns is what the rule reads
    y.sum().backward(retain_graph=True)
    np.testing.assert_allclose(x.grad.numpy(), np.full_like(X, 0.5))
    # create_graph reads the packed residuals too
    (gx,) = paddle.grad(y.sum(), x, create_graph=True)
    np.testing.assert_allclose(gx.numpy(), np.full_like(X, 0.5))


def test_undeclared_residuals_are_refused():
    @op("test_bad", grad=_max_rule)
    def bad(x):
        return x * 1.0, GRAD.save(x)

    with pytest.raises(TypeError, match="test_bad.*residuals=True"):
        apply(bad, _t(X))
    with pytest.raises(ValueError, match="residuals=True needs"):
        op("test_bad2", residuals=True)


def _scale_rule(M, x, s, out, saved, g):
    (k,) = saved
    return g * k, None


@op("test_scale", saves=(), grad=_scale_rule, residuals=True, broadcast=True)
def _scale_k(x, s):
    """x * 2s with the factor a residual; no input value is saved (saves=())."""
    k = 2.0 * s
    return x * k, GRAD.save(k)


def test_residuals_of_a_kernel_that_saves_no_input_under_hooks_and_broadcast():
    packed = []

    def pack(t):
        packed.append(t.numpy().copy())
        return packed[-1]

    x = _t(X)
    s = paddle.to_tensor(np.array([1.0, 2.0, 3.0]))  # broadcast against x: the bound form
    y = apply(_scale_k, x, s)
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * X * np.array([2.0, 4.0, 6.0]) ** 2)
    x2 = _t(X)
    with paddle.autograd.saved_tensors_hooks(pack, lambda a: paddle.to_tensor(a)):
        y2 = apply(_scale_k, x2, s)
    # only the residual is packed: neither input's value is saved
    assert len(packed) == 1 and packed[0].shape == (3,)
    y2.sum().backward()
    np.testing.assert_allclose(x2.grad.numpy(), np.broadcast_to([2.0, 4.0, 6.0], X.shape))
