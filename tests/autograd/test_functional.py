"""jacobian / hessian and saved_tensors_hooks."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.autograd import Hessian, Jacobian
from paddle_hl.framework import state


def T(v, sg=False, dtype="float32"):  # noqa: N802
    return paddle.to_tensor(v, dtype=dtype, stop_gradient=sg)


# ---------------------------------------------------------------- jacobian

def test_jacobian_is_lazy_and_caches_rows():
    x = T([1.0, 2.0, 3.0])
    y = x * x * 2
    J = paddle.autograd.jacobian(y, x)
    assert isinstance(J, Jacobian)
    assert J.shape == [3, 3]
    assert len(J._rows) == 0
    row = J[1]
    assert len(J._rows) == 1
    np.testing.assert_allclose(row.numpy(), [0.0, 8.0, 0.0])
    np.testing.assert_allclose(J[:].numpy(), np.diag([4.0, 8.0, 12.0]))
    assert len(J._rows) == 3


def test_jacobian_indexing_shapes_match_paddle(pd):
    def make(lib):
        x = lib.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
        y = x * x * lib.to_tensor([1.0, 2.0, 3.0])
        return lib.autograd.jacobian(y, x)

    Jh, Jp = make(paddle), make(pd)
    assert Jh.shape == Jp.shape
    for idx in [slice(None), 0, (0, 1), (slice(None), 0), (slice(0, 2), slice(1, 3)),
                slice(0, 2), (1, slice(None))]:
        a, b = Jh[idx], Jp[idx]
        assert a.shape == b.shape, idx
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    # list indices (Paddle 2.6.2 itself fails on them)
    np.testing.assert_allclose(Jh[[0, 2]].numpy(), Jh[:].numpy()[[0, 2]])
    np.testing.assert_allclose(Jh[1:1].numpy().shape, (0, 3))


def test_jacobian_scalar_and_0d():
    x = T([1.0, 2.0, 3.0])
    J = paddle.autograd.jacobian((x * x).sum(), x)
    assert J.shape == [3]
    np.testing.assert_allclose(J[:].numpy(), [2.0, 4.0, 6.0])
    x0 = T(2.0)
    J0 = paddle.autograd.jacobian(x0 * x0 * x0, x0)
    assert J0.shape == []
    with pytest.raises(IndexError, match="0-D"):
        J0[:]
    with pytest.raises(IndexError, match="Ellipsis"):
        J[...]


def test_jacobian_batched(pd):
    data = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
    out = []
    for lib in (paddle, pd):
        x = lib.to_tensor(data, stop_gradient=False)
        y = x * x
        J = lib.autograd.jacobian(y, x, batch_axis=0)
        out.append((J.shape, J[:].numpy(), J[0].numpy(), J[:, 1].numpy()))
    assert out[0][0] == out[1][0] == [3, 2, 2]
    for a, b in zip(out[0][1:], out[1][1:]):
        np.testing.assert_allclose(a, b)


def test_jacobian_tuples_structure():
    x1, x2 = T([1.0, 2.0]), T([3.0, 4.0, 5.0])
    y1 = x1.sum() * x2
    y2 = x1 * 2
    J = paddle.autograd.jacobian((y1, y2), (x1, x2))
    assert [[j.shape for j in r] for r in J] == [[[3, 2], [3, 3]], [[2, 2], [2, 3]]]
    np.testing.assert_allclose(J[0][0][:].numpy(), np.stack([[3.0, 3.0], [4.0, 4.0],
                                                             [5.0, 5.0]]))
    np.testing.assert_allclose(J[1][1][:].numpy(), np.zeros((2, 3)))
    assert len(paddle.autograd.jacobian(y1, (x1, x2))) == 2
    assert len(paddle.autograd.jacobian((y1, y2), x1)) == 2


def test_jacobian_errors():
    x = T(np.ones((2, 2), np.float32))
    with pytest.raises(ValueError, match="batch_axis should be None or 0"):
        paddle.autograd.jacobian(x * 2, x, batch_axis=1)
    with pytest.raises(ValueError, match="xs.ndim should be 0 or 1"):
        paddle.autograd.jacobian(x * 2, x)
    with pytest.raises(TypeError, match="Tensor"):
        paddle.autograd.jacobian([1.0], x)


def test_jacobian_of_unrelated_input_is_zero():
    x, w = T([1.0, 2.0]), T([3.0, 4.0])
    J = paddle.autograd.jacobian(x * 2, w)
    np.testing.assert_allclose(J[:].numpy(), np.zeros((2, 2)))


def test_jacobian_rows_are_differentiable():
    x = T([1.0, 2.0])
    J = paddle.autograd.jacobian(x * x * x, x)
    m = J[:]
    assert not m.stop_gradient
    (g,) = paddle.grad(m.sum(), x)
    np.testing.assert_allclose(g.numpy(), [6.0, 12.0])


def test_jacobian_of_op_without_second_order_rule():
    from paddle_hl.framework.op import apply

    def _k(x):
        return x * 3, lambda g: (g * 3,)

    x = T([1.0, 2.0])
    J = paddle.autograd.jacobian(apply(_k, x), x)
    np.testing.assert_allclose(J[:].numpy(), np.diag([3.0, 3.0]))


# ---------------------------------------------------------------- hessian

def test_hessian_of_quadratic_form_is_a_plus_at():
    """the Hessian of x^T A x is A + A^T."""
    A = np.array([[1.0, 2.0, 0.5], [3.0, 5.0, -1.0], [0.0, 4.0, 2.0]])
    x = T(np.array([1.0, -2.0, 0.5]), dtype="float64")
    At = paddle.to_tensor(A)
    y = paddle.matmul(paddle.matmul(x.unsqueeze(0), At), x.unsqueeze(1)).squeeze()
    H = paddle.autograd.hessian(y, x)
    assert isinstance(H, Hessian)
    assert H.shape == [3, 3]
    np.testing.assert_allclose(H[:].numpy(), A + A.T, rtol=1e-12)
    np.testing.assert_allclose(H[1].numpy(), (A + A.T)[1], rtol=1e-12)


@pytest.mark.parity
def test_hessian_matches_paddle(pd):
    A = np.array([[1.0, 2.0], [3.0, 5.0]], np.float32)
    res = []
    for lib in (paddle, pd):
        x = lib.to_tensor([1.0, 2.0], stop_gradient=False)
        y = lib.matmul(lib.matmul(x.unsqueeze(0), lib.to_tensor(A)), x.unsqueeze(1)).squeeze()
        res.append(lib.autograd.hessian(y, x)[:].numpy())
    np.testing.assert_allclose(res[0], res[1])


def test_hessian_batched_and_tuple(pd):
    data = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    out = []
    for lib in (paddle, pd):
        x = lib.to_tensor(data, stop_gradient=False)
        y = (x * x * x).sum(axis=1)
        H = lib.autograd.hessian(y, x, batch_axis=0)
        out.append((H.shape, H[:].numpy()))
        x1 = lib.to_tensor([1.0, 2.0], stop_gradient=False)
        x2 = lib.to_tensor([3.0, 4.0, 5.0], stop_gradient=False)
        yy = (x1.sum() * x2).sum()
        Ht = lib.autograd.hessian(yy, (x1, x2))
        out.append(([[h.shape for h in r] for r in Ht], Ht[0][1][:].numpy()))
    assert out[0][0] == out[2][0] == [2, 2, 2]
    np.testing.assert_allclose(out[0][1], out[2][1])
    assert out[1][0] == out[3][0]
    np.testing.assert_allclose(out[1][1], out[3][1])


def test_hessian_errors():
    x = T([1.0, 2.0])
    with pytest.raises(ValueError, match="numel"):
        paddle.autograd.hessian(x * x, x)
    with pytest.raises(ValueError, match=r"\[B\] or \[B, 1\]"):
        paddle.autograd.hessian(T(np.ones((2, 2), np.float32)) * 2,
                                T(np.ones((2, 2), np.float32)), batch_axis=0)


def test_hessian_matches_finite_differences():
    from tests.op_check import numeric_grad

    x0 = np.array([0.3, -0.7, 1.1])

    def f(x):
        return (paddle.tanh(x) * paddle.exp(x * 0.5)).sum() + (x * x).sum() * x[0]

    x = paddle.to_tensor(x0, stop_gradient=False)
    H = paddle.autograd.hessian(f(x), x)[:].numpy()
    num = np.zeros((3, 3))
    for i in range(3):
        def gi(xa, i=i):
            t = paddle.to_tensor(xa, stop_gradient=False)
            (g,) = paddle.grad(f(t), t)
            return float(g.numpy()[i])

        num[i] = numeric_grad(gi, [x0.copy()], 0)
    np.testing.assert_allclose(H, num, rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------- saved_tensors_hooks

def test_saved_tensors_hooks_pack_and_unpack():
    log = []

    def pack(t):
        log.append(("pack", tuple(t.shape)))
        return t.numpy().copy()

    def unpack(a):
        log.append(("unpack", a.shape))
        return paddle.to_tensor(a)

    a, b = T([1.0, 2.0]), T([3.0, 4.0])
    with paddle.autograd.saved_tensors_hooks(pack, unpack):
        y = a * b
        n_mul = len(log)
        z = a + b
        n_add = len(log) - n_mul
        s = (y + z).sum()
    assert not state.saved_hooks
    assert n_mul == 2 and n_add == 0
    assert all(k == "pack" for k, _ in log)
    n_pack = sum(k == "pack" for k, _ in log)
    s.backward()
    # every packed value is unpacked once (sum may keep its input array for its shape)
    assert sum(k == "unpack" for k, _ in log) == n_pack >= 2
    np.testing.assert_allclose(a.grad.numpy(), [4.0, 5.0])
    np.testing.assert_allclose(b.grad.numpy(), [2.0, 3.0])


def test_saved_tensors_hooks_pack_gets_the_input_tensor():
    seen = []
    a = T([1.0, 2.0])
    b = T([3.0, 4.0], sg=True)
    with paddle.autograd.saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
        (a * b).sum().backward()
    assert any(t is a for t in seen) and any(t is b for t in seen)


@pytest.mark.parametrize("name,f", [
    ("tanh_mul", lambda x, w: paddle.tanh(x) * w),
    ("div_broadcast", lambda x, w: x.reshape([2, 1]) / (w + 3.0)),
    ("pow_exp", lambda x, w: paddle.pow(x, 2.0) * paddle.exp(w)),
    ("matmul", lambda x, w: paddle.matmul(x.reshape([1, 2]), w.reshape([2, 1]))),
    ("sqrt_log", lambda x, w: paddle.sqrt(x * x + 1) + paddle.log(w * w + 1)),
])
def test_saved_tensors_hooks_same_gradients(name, f):
    """gradients equal those computed without the hooks (values round-trip via numpy)."""
    xv, wv = np.array([0.5, 1.5]), np.array([2.0, -1.0])
    grads = []
    for hooked in (False, True):
        x, w = T(xv, dtype="float64"), T(wv, dtype="float64")
        if hooked:
            with paddle.autograd.saved_tensors_hooks(lambda t: t.numpy().copy(),
                                                     lambda a: paddle.to_tensor(a)):
                out = f(x, w)
        else:
            out = f(x, w)
        out.sum().backward()
        grads.append((x.grad.numpy(), w.grad.numpy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0])
    np.testing.assert_allclose(grads[0][1], grads[1][1])


def test_saved_tensors_hooks_retain_graph_unpacks_each_time():
    count = [0]

    def unpack(t):
        count[0] += 1
        return t

    x = T([1.0, 2.0])
    with paddle.autograd.saved_tensors_hooks(lambda t: t, unpack):
        z = (x * x).sum()
    z.backward(retain_graph=True)
    first = count[0]
    z.backward()
    assert count[0] == 2 * first > 0
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])


def test_saved_tensors_hooks_with_create_graph():
    x = T([1.0, 2.0])
    with paddle.autograd.saved_tensors_hooks(lambda t: t.numpy().copy(),
                                             lambda a: paddle.to_tensor(a)):
        y = (x * x * x).sum()
    (g,) = paddle.grad(y, x, create_graph=True)
    (gg,) = paddle.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), [6.0, 12.0])


def test_saved_tensors_hooks_nesting_and_errors():
    with pytest.raises(TypeError, match="callable"):
        paddle.autograd.saved_tensors_hooks(1, lambda t: t)
    outer = paddle.autograd.saved_tensors_hooks(lambda t: t, lambda t: t)
    inner = paddle.autograd.saved_tensors_hooks(lambda t: t, lambda t: t)
    with outer:
        with inner:
            assert len(state.saved_hooks) == 2
        assert len(state.saved_hooks) == 1
    assert not state.saved_hooks
