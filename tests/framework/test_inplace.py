"""Inplace ops, version counters and views (setitem on non-leaf tensors, view semantics)."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.framework.op import apply_
from paddle_hl.tensor.math import _mul


def T(v, sg=False, dtype="float32"):  # noqa: N802
    return paddle.to_tensor(v, dtype=dtype, stop_gradient=sg)


# ------------------------------------------------------- inplace ops on leaves that need grad

def test_inplace_on_leaf_that_needs_grad_raises():
    x = T([1.0, 2.0])
    with pytest.raises(ValueError, match="Leaf Tensor .* can't use inplace strategy"):
        x.add_(T([1.0, 1.0], sg=True))
    with pytest.raises(ValueError, match="can't use inplace"):
        x[0] = 3.0
    np.testing.assert_allclose(x.numpy(), [1.0, 2.0])
    assert x.inplace_version == 0


def test_inplace_on_leaf_allowed_under_no_grad():
    x = T([1.0, 2.0])
    with paddle.no_grad():
        x.add_(T([1.0, 1.0]))
        x[0] = 5.0
    np.testing.assert_allclose(x.numpy(), [5.0, 3.0])
    assert x.inplace_version == 2
    assert x.is_leaf and not x.stop_gradient


def test_version_mismatch_at_backward_same_message():
    msgs = []
    for _ in range(2):
        a = T([1.0, 2.0, 3.0])
        b = a * 1
        c = b * b
        b.add_(T([1.0, 1.0, 1.0], sg=True))
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as ei:
            c.sum().backward()
        msgs.append(str(ei.value))
    assert msgs[0] == msgs[1]
    assert "version is 1 but the expected version is 0" in msgs[0]


def test_setitem_bumps_version_and_breaks_saved_use():
    x = T([1.0, 2.0, 3.0])
    y = x * 2
    z = y * y
    y[0] = 10.0
    assert y.inplace_version == 1
    with pytest.raises(RuntimeError, match="inplace"):
        z.sum().backward()


def test_changing_an_input_of_add_is_allowed():
    a = T([1.0, 2.0, 3.0])
    b = a * 1
    c = b + b
    b.add_(T([1.0, 1.0, 1.0], sg=True))
    c.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [2.0, 2.0, 2.0])


def test_inplace_result_gradient(pd):
    def run(lib):
        x = lib.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
        w = lib.to_tensor([2.0, 3.0, 4.0], stop_gradient=False)
        y = x * 1
        y.multiply_(w)
        y.add_(x)
        (y * y).sum().backward()
        return x.grad.numpy(), w.grad.numpy(), y.numpy()

    for a, b in zip(run(paddle), run(pd)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_inplace_rebinds_graph_and_keeps_old_value_for_backward():
    x = T([1.0, 2.0])
    w = T([5.0, 7.0])
    y = x * 3
    y.multiply_(w)  # the gradient of w needs y's old value
    y.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [3.0, 6.0])
    np.testing.assert_allclose(x.grad.numpy(), [15.0, 21.0])


def test_inplace_with_itself_as_other_raises_as_paddle():
    x = T([1.0, 2.0])
    y = x * 3
    y.multiply_(y)
    with pytest.raises(RuntimeError, match="inplace"):
        y.sum().backward()


def test_inplace_with_grad_only_from_other():
    x = T([1.0, 2.0], sg=True)
    w = T([3.0, 4.0])
    x2 = x * 1
    x2.multiply_(w)
    assert not x2.stop_gradient and not x2.is_leaf
    x2.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [1.0, 2.0])


def test_inplace_shape_mismatch_raises():
    x = T([1.0, 2.0]) * 1
    with pytest.raises(ValueError, match="cannot be written into x of shape"):
        apply_(_mul, x, T(np.ones((3, 2), np.float32), sg=True))


def test_assign_version_counter():
    x = T([1.0, 2.0])
    y = paddle.assign(x)
    assert y.inplace_version == 0
    assert x.inplace_version == 0


# ---------------------------------------------------------------- setitem on non-leaf

def test_setitem_on_non_leaf(pd):
    for lib in (paddle, pd):
        x = lib.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
        v = lib.to_tensor(5.0, stop_gradient=False)
        y = x * 2
        y[0] = v
        (y * y).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), [0.0, 16.0, 24.0])
        np.testing.assert_allclose(v.grad.numpy(), 10.0)
        np.testing.assert_allclose(y.numpy(), [5.0, 4.0, 6.0])


def test_setitem_non_leaf_sum():
    x = T([[1.0, 2.0], [3.0, 4.0]])
    v = T([7.0, 8.0])
    y = x * 2
    y[1] = v
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[2.0, 2.0], [0.0, 0.0]])
    np.testing.assert_allclose(v.grad.numpy(), [1.0, 1.0])


def test_setitem_broadcast_value_grad():
    x = T(np.ones((3, 4), np.float32))
    v = T([1.0, 2.0, 3.0, 4.0])
    y = x * 1
    y[0:2] = v
    (y * 3).sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), [6.0, 6.0, 6.0, 6.0])
    np.testing.assert_allclose(x.grad.numpy()[:2], 0.0)
    np.testing.assert_allclose(x.grad.numpy()[2], 3.0)


# ---------------------------------------------------------------- views

def test_inplace_through_view_changes_base_and_shares_version():
    x = T([1.0, 2.0, 3.0, 4.0])
    y = x * 2
    r = y.reshape([2, 2])
    r.multiply_(T([[1.0, 2.0], [3.0, 4.0]], sg=True))
    np.testing.assert_allclose(y.numpy(), [2.0, 8.0, 18.0, 32.0])
    assert y.inplace_version == 1 and r.inplace_version == 1


def test_slice_view_inplace_changes_base():
    x = T([1.0, 2.0, 3.0, 4.0], sg=True)
    v = x[1:3]
    v.add_(T([10.0, 10.0]))
    np.testing.assert_allclose(x.numpy(), [1.0, 12.0, 13.0, 4.0])
    assert x.inplace_version == v.inplace_version == 1


def test_view_inplace_base_gradient_as_paddle(pd):
    """Paddle 2.6: an inplace op through a view changes the base's values, but the base's own
    gradient keeps the graph it had (the view's op is not replayed onto the base)."""
    def run(lib):
        x = lib.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
        w = lib.to_tensor([5.0, 6.0], stop_gradient=False)
        y = x * 1
        v = y[0:2]
        v.multiply_(w)
        (v.sum() + y.sum()).backward()
        return y.numpy(), x.grad.numpy(), w.grad.numpy()

    for a, b in zip(run(paddle), run(pd)):
        np.testing.assert_allclose(a, b)
    y, gx, gw = run(paddle)
    np.testing.assert_allclose(gx, [6.0, 7.0, 1.0])
    np.testing.assert_allclose(gw, [1.0, 2.0])


def test_setitem_through_view_as_paddle(pd):
    def run(lib):
        x = lib.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
        v = lib.to_tensor(5.0, stop_gradient=False)
        y = x * 2
        s = y[0:2]
        s[0] = v
        (y * y).sum().backward()
        return y.numpy(), x.grad.numpy(), v.grad

    (ya, ga, va), (yb, gb, vb) = run(paddle), run(pd)
    np.testing.assert_allclose(ya, yb)
    np.testing.assert_allclose(ga, gb)
    assert va is None and vb is None


def test_view_of_saved_tensor_changed_inplace_raises():
    x = T([1.0, 2.0, 3.0])
    y = x * 2
    z = y * y  # saves y
    v = y[0:2]
    v.add_(T([1.0, 1.0], sg=True))
    with pytest.raises(RuntimeError, match="inplace"):
        z.sum().backward()


def test_detach_shares_version():
    x = T([1.0, 2.0, 3.0])
    y = x * 1
    d = y.detach()
    d.add_(T([1.0, 1.0, 1.0]))
    assert y.inplace_version == 1 and d.inplace_version == 1
    np.testing.assert_allclose(y.numpy(), [2.0, 3.0, 4.0])


def test_no_grad_setitem_on_non_leaf_keeps_graph():
    x = T([1.0, 2.0, 3.0])
    y = x * 1
    with paddle.no_grad():
        y[0] = 5.0
    assert not y.stop_gradient
    (y * 1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 1.0, 1.0])
