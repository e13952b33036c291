"""Matrix products: matmul family, dot/outer/inner, tensordot, kron, cross, einsum, multi_dot,
matrix_power (paddle_hl/tensor/linalg.py)."""

import ml_dtypes
import numpy as np
import pytest

import paddle_hl as paddle
from tests.op_check import check_parity, gradcheck

rng = np.random.default_rng(0)


def R(*shape, dtype="float64"):
    return rng.standard_normal(shape).astype(dtype)


def C(*shape, dtype="complex128"):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


MATMUL_SHAPES = [
    ((3, 4), (4, 5), False, False),
    ((2, 3, 4), (4, 5), False, False),
    ((2, 1, 3, 4), (3, 4, 2), False, False),
    ((4,), (2, 4, 3), False, False),
    ((2, 3, 4), (4,), False, False),
    ((4,), (4,), False, False),
    ((2, 4, 3), (2, 5, 4), True, True),
    ((4, 3), (4, 5), True, False),
    ((3, 4), (5, 4), False, True),
]


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("xs,ys,tx,ty", MATMUL_SHAPES)
def test_matmul_parity(pd, dtype, xs, ys, tx, ty):
    check_parity(lambda P, a, b: P.matmul(a, b, transpose_x=tx, transpose_y=ty),
                 [R(*xs, dtype=dtype), R(*ys, dtype=dtype)], pd,
                 rtol=1e-4 if dtype == "float32" else None,
                 # paddle 2.6.2 crashes in the backward of 4-D @ 3-D broadcasting
                 grad=len(xs) < 4)


@pytest.mark.parametrize("xs,ys,tx,ty", MATMUL_SHAPES)
def test_matmul_gradcheck(xs, ys, tx, ty):
    gradcheck(lambda a, b: paddle.matmul(a, b, tx, ty), [R(*xs), R(*ys)])


def test_matmul_operator_and_method():
    a, b = R(2, 3), R(3, 4)
    x, y = paddle.to_tensor(a), paddle.to_tensor(b)
    np.testing.assert_allclose((x @ y).numpy(), a @ b)
    np.testing.assert_allclose(x.matmul(y).numpy(), a @ b)
    np.testing.assert_allclose(x.mm(y).numpy(), a @ b)


def test_matmul_int_keeps_dtype():
    x = paddle.to_tensor(np.arange(6).reshape(2, 3))
    out = paddle.matmul(x, x.T if hasattr(x, "T") else paddle.transpose(x, [1, 0]))
    assert out.dtype == paddle.int64
    np.testing.assert_array_equal(out.numpy(), np.arange(6).reshape(2, 3) @ np.arange(6)
                                  .reshape(2, 3).T)


@pytest.mark.parametrize("xs,ys,out", [((0, 3), (3, 4), (0, 4)), ((2, 0), (0, 4), (2, 4)),
                                       ((2, 0, 3), (3, 5), (2, 0, 5)), ((3, 4), (4, 0), (3, 0))])
def test_matmul_zero_size_b53(xs, ys, out):
    a, b = R(*xs), R(*ys)
    x = paddle.to_tensor(a, stop_gradient=False)
    y = paddle.to_tensor(b, stop_gradient=False)
    o = paddle.matmul(x, y)
    assert o.shape == list(out)
    np.testing.assert_allclose(o.numpy(), a @ b)
    o.backward(paddle.ones(list(out), dtype="float64"))
    assert x.grad.shape == list(xs) and y.grad.shape == list(ys)
    np.testing.assert_allclose(x.grad.numpy(), np.ones(out) @ b.T)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_matmul_low_precision_b48(dtype):
    a, b = R(16, 64, dtype="float32"), R(64, 8, dtype="float32")
    x = paddle.to_tensor(a).astype(dtype)
    y = paddle.to_tensor(b).astype(dtype)
    out = paddle.matmul(x, y)
    assert out.dtype == getattr(paddle, dtype)
    ref = a.astype(getattr(ml_dtypes, dtype) if dtype == "bfloat16" else dtype).astype(
        np.float32)
    refb = b.astype(getattr(ml_dtypes, dtype) if dtype == "bfloat16" else dtype).astype(
        np.float32)
    tol = 2e-2 if dtype == "bfloat16" else 2e-3
    np.testing.assert_allclose(out.astype("float32").numpy(), ref @ refb, rtol=tol,
                               atol=tol * 8)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_matmul_complex_b8(pd, dtype):
    check_parity(lambda P, a, b: P.matmul(a, b), [C(2, 3, 4, dtype=dtype),
                                                  C(4, 2, dtype=dtype)], pd,
                 rtol=1e-4 if dtype == "complex64" else None)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "complex128"])
def test_kron_parity_b8(pd, dtype):
    mk = C if dtype.startswith("complex") else R
    check_parity(lambda P, a, b: P.kron(a, b), [mk(2, 3, dtype=dtype), mk(3, 2, 2, dtype=dtype)],
                 pd, rtol=1e-5)


def test_matmul_double_and_triple_backward_b39():
    a, b = R(2, 3), R(3, 2)
    x = paddle.to_tensor(a, stop_gradient=False)
    y = paddle.to_tensor(b, stop_gradient=False)
    # f = sum((x @ y)^2): d/dx = 2 (xy) y^T ; second and third derivatives through matmul hi
    out = paddle.matmul(x, y)
    f = (out * out).sum()
    (gx,) = paddle.grad(f, x, create_graph=True)
    np.testing.assert_allclose(gx.numpy(), 2 * (a @ b) @ b.T, rtol=1e-10)
    s = (gx * gx).sum()
    gx2, gy2 = paddle.grad(s, [x, y], create_graph=True)

    def s_of(aa, bb):
        g = 2 * (aa @ bb) @ bb.T
        return float((g * g).sum())

    eps = 1e-6
    num = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        d = np.zeros_like(a)
        d[i] = eps
        num[i] = (s_of(a + d, b) - s_of(a - d, b)) / (2 * eps)
    np.testing.assert_allclose(gx2.numpy(), num, rtol=1e-5, atol=1e-6)
    # third order: d/dy of sum(gx2)
    t = gx2.sum()
    (gy3,) = paddle.grad(t, y)

    def t_of(bb):
        def s2(aa):
            return s_of(aa, bb)
        n = np.zeros_like(a)
        for i in np.ndindex(a.shape):
            d = np.zeros_like(a)
            d[i] = 1e-4
            n[i] = (s2(a + d) - s2(a - d)) / 2e-4
        return n.sum()

    num3 = np.zeros_like(b)
    for i in np.ndindex(b.shape):
        d = np.zeros_like(b)
        d[i] = 1e-4
        num3[i] = (t_of(b + d) - t_of(b - d)) / 2e-4
    np.testing.assert_allclose(gy3.numpy(), num3, rtol=1e-4, atol=1e-4)
    del gy2


@pytest.mark.parametrize("tx,ty", [(False, False), (True, False), (False, True), (True, True)])
def test_matmul_double_backward_transposes(tx, ty):
    a, b = R(3, 3), R(3, 3)

    def first_grad(aa, bb):
        x = paddle.to_tensor(aa, stop_gradient=False)
        y = paddle.to_tensor(bb, stop_gradient=False)
        o = paddle.matmul(x, y, tx, ty)
        (gx,) = paddle.grad((o * o).sum(), x, create_graph=True)
        return gx

    gradcheck(lambda x, y: first_grad_t(x, y, tx, ty), [a, b])
    del first_grad


def first_grad_t(x, y, tx, ty):
    o = paddle.matmul(x, y, tx, ty)
    if x.stop_gradient:
        # the finite-difference pass runs without a graph: evaluate the closed form
        xa, ya = x.numpy(), y.numpy()
        A = xa.T if tx else xa
        B = ya.T if ty else ya
        g = 2 * (A @ B) @ B.T
        return paddle.to_tensor(g.T if tx else g)
    (gx,) = paddle.grad((o * o).sum(), x, create_graph=True)
    return gx


@pytest.mark.parity
def test_bmm_mm_mv_dot_parity(pd):
    check_parity(lambda P, a, b: P.bmm(a, b), [R(2, 3, 4), R(2, 4, 5)], pd)
    check_parity(lambda P, a, b: P.mm(a, b), [R(3, 4), R(4, 5)], pd)
    check_parity(lambda P, a, b: P.mv(a, b), [R(3, 4), R(4)], pd)
    check_parity(lambda P, a, b: P.dot(a, b), [R(3, 4), R(3, 4)], pd)
    check_parity(lambda P, a, b: P.dot(a, b), [R(4), R(4)], pd)
    check_parity(lambda P, a, b: P.outer(a, b), [R(2, 2), R(3)], pd)
    check_parity(lambda P, a, b: P.inner(a, b), [R(2, 4), R(3, 4)], pd)


def test_dot_shapes_and_int():
    assert paddle.dot(paddle.ones([4]), paddle.ones([4])).shape == []
    assert paddle.dot(paddle.ones([3, 4]), paddle.ones([3, 4])).shape == [3]
    x = paddle.to_tensor(np.arange(4, dtype="int32"))
    out = paddle.dot(x, x)
    assert out.dtype == paddle.int32 and int(out.numpy()) == 14


@pytest.mark.parametrize("fn,args", [
    ("bmm", [(2, 3, 4), (3, 4, 5)]), ("bmm", [(2, 3, 4), (2, 3, 5)]), ("bmm", [(3, 4), (4, 5)]),
    ("mv", [(3, 4), (3,)]), ("dot", [(3,), (4,)]), ("matmul", [(2, 3), (4, 5)]),
    ("matmul", [(2, 2, 3), (3, 3, 4)]), ("inner", [(2, 3), (2, 4)]), ("cross", [(2, 4), (2, 4)]),
    ("cross", [(2, 3), (1, 3)])])
def test_shape_errors_name_op_and_shapes(fn, args):
    ts = [paddle.to_tensor(R(*s)) for s in args]
    with pytest.raises(ValueError, match=fn) as e:
        getattr(paddle, fn)(*ts)
    assert str(list(args[0])) in str(e.value) or str(list(args[1])) in str(e.value)


def test_none_argument_raises_type_error():
    with pytest.raises(TypeError, match="matmul"):
        paddle.matmul(None, paddle.ones([2, 2]))


@pytest.mark.parity
@pytest.mark.parametrize("axes", [2, 0, 1, [[1, 2], [0, 1]], [1, 2], [[1, 2], [1]], [[1]]])
def test_tensordot_parity(pd, axes):
    x = R(2, 3, 4)
    y = R(3, 4, 5) if axes in (2, 0, 1) or axes == [[1, 2], [0, 1]] else R(2, 3, 4)
    if axes == 1:
        y = R(4, 5)
    check_parity(lambda P, a, b: P.tensordot(a, b, axes=axes), [x, y], pd)


def test_tensordot_tensor_axes_and_error():
    x, y = R(2, 3, 4), R(3, 4, 5)
    out = paddle.tensordot(paddle.to_tensor(x), paddle.to_tensor(y),
                           axes=paddle.to_tensor(np.array([[1, 2], [0, 1]])))
    np.testing.assert_allclose(out.numpy(), np.tensordot(x, y, axes=([1, 2], [0, 1])))
    with pytest.raises(ValueError, match="tensordot"):
        paddle.tensordot(paddle.to_tensor(x), paddle.to_tensor(y), axes=[[0], [0]])


@pytest.mark.parity
@pytest.mark.parametrize("shape,axis", [((4, 3), 9), ((3, 5), 0), ((2, 3, 4), 1), ((2, 3), -1)])
def test_cross_parity(pd, shape, axis):
    check_parity(lambda P, a, b: P.cross(a, b, axis=axis), [R(*shape), R(*shape)], pd)


def test_cross_kron_tensordot_gradcheck():
    gradcheck(lambda a, b: paddle.cross(a, b), [R(2, 3), R(2, 3)])
    gradcheck(lambda a, b: paddle.kron(a, b), [R(2, 3), R(2, 1, 2)])
    gradcheck(lambda a, b: paddle.tensordot(a, b, [[0], [1]]), [R(3, 2), R(4, 3)])
    gradcheck(lambda a, b: paddle.outer(a, b), [R(3), R(2, 2)])
    gradcheck(lambda a, b: paddle.inner(a, b), [R(2, 3), R(4, 3)])
    gradcheck(lambda a, b: paddle.dot(a, b), [R(2, 3), R(2, 3)])


EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("ij->", [(2, 3)]),
    ("ij->ji", [(2, 3)]),
    ("i,j->ij", [(3,), (4,)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (3, 4, 2)]),
    ("i...,j->...ij", [(2, 1, 3), (4,)]),
    ("ijk,ikl,lm->jm", [(2, 3, 4), (2, 4, 5), (5, 2)]),
    ("iij,jk->ik", [(3, 3, 2), (2, 4)]),
    ("ab,ab->a", [(3, 4), (3, 4)]),
    ("i,i", [(0,), (0,)]),
]


@pytest.mark.parity
# paddle 2.6.2 fails on size-1 ellipsis broadcasting and on repeated subscripts next to others
@pytest.mark.parametrize("eq,shapes", [c for i, c in enumerate(EINSUM_CASES[:-1])
                                       if i not in (9, 11)])
def test_einsum_parity_b61(pd, eq, shapes):
    check_parity(lambda P, *ts: P.einsum(eq, *ts), [R(*s) for s in shapes], pd)


@pytest.mark.parametrize("eq,shapes", EINSUM_CASES)
def test_einsum_matches_numpy_b61(eq, shapes):
    arrs = [R(*s) for s in shapes]
    out = paddle.einsum(eq, *[paddle.to_tensor(a) for a in arrs])
    ref = np.einsum(eq, *arrs)
    assert out.shape == list(np.shape(ref))
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("eq,shapes", EINSUM_CASES[:-1])
def test_einsum_gradcheck_b61(eq, shapes):
    gradcheck(lambda *ts: paddle.einsum(eq, *ts), [R(*s) for s in shapes])


def test_einsum_double_backward_and_float32():
    a, b = R(2, 3), R(3, 2)
    x = paddle.to_tensor(a, stop_gradient=False)
    y = paddle.to_tensor(b, stop_gradient=False)
    o = paddle.einsum("ij,jk->ik", x, y)
    (gx,) = paddle.grad((o * o).sum(), x, create_graph=True)
    np.testing.assert_allclose(gx.numpy(), 2 * (a @ b) @ b.T, rtol=1e-10)
    (gy,) = paddle.grad(gx.sum(), y)
    assert gy.shape == [3, 2]
    out32 = paddle.einsum("ij,jk", paddle.to_tensor(a.astype("float32")),
                          paddle.to_tensor(b.astype("float32")))
    assert out32.dtype == paddle.float32


@pytest.mark.parametrize("eq,shapes", [("ij,jk->ik", [(2, 3), (4, 5)]), ("ij->k", [(2, 3)]),
                                       ("ij,jk", [(2, 3)]), ("ijk->i", [(2, 3)]),
                                       ("i2->i", [(2, 3)]), ("ii->i", [(2, 3)])])
def test_einsum_errors(eq, shapes):
    with pytest.raises(ValueError, match="einsum"):
        paddle.einsum(eq, *[paddle.to_tensor(R(*s)) for s in shapes])


@pytest.mark.parity
def test_multi_dot_parity(pd):
    check_parity(lambda P, a, b, c: P.linalg.multi_dot([a, b, c]), [R(3), R(3, 4), R(4)], pd)
    check_parity(lambda P, a, b, c, d: P.linalg.multi_dot([a, b, c, d]),
                 [R(2, 5), R(5, 1), R(1, 4), R(4, 3)], pd)


def test_multi_dot_errors_and_grad():
    with pytest.raises(ValueError, match="multi_dot"):
        paddle.linalg.multi_dot([paddle.ones([2, 2])])
    with pytest.raises(ValueError, match="multi_dot"):
        paddle.linalg.multi_dot([paddle.ones([2, 2, 2]), paddle.ones([2, 2])])
    with pytest.raises(TypeError, match="multi_dot"):
        paddle.linalg.multi_dot([paddle.ones([2, 2]), paddle.ones([2, 2], dtype="float64")])
    gradcheck(lambda a, b, c: paddle.linalg.multi_dot([a, b, c]), [R(2, 3), R(3, 4), R(4)])


@pytest.mark.parity
@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, -1, -2])
def test_matrix_power_parity(pd, n):
    a = R(2, 3, 3) + 3 * np.eye(3)
    check_parity(lambda P, x: P.linalg.matrix_power(x, n), [a], pd, rtol=1e-8)


def test_matrix_power_gradcheck_and_method():
    a = R(3, 3) + 3 * np.eye(3)
    gradcheck(lambda x: paddle.linalg.matrix_power(x, 3), [a])
    gradcheck(lambda x: paddle.linalg.matrix_power(x, -2), [a])
    np.testing.assert_allclose(paddle.to_tensor(a).matrix_power(2).numpy(), a @ a)
    with pytest.raises(ValueError, match="matrix_power"):
        paddle.linalg.matrix_power(paddle.ones([2, 3]), 2)


def test_tensor_methods_are_the_same_functions():
    for n in ["matmul", "bmm", "mm", "mv", "dot", "tensordot", "outer", "inner", "kron",
              "cross", "cdist", "dist"]:
        assert getattr(paddle.Tensor, n) is getattr(paddle, n)
