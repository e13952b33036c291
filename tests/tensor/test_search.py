"""Tests for paddle_hl/tensor/search.py."""

import numpy as np
import pytest

import paddle_hl as paddle
from tests.op_check import check_parity, gradcheck

RNG = np.random.default_rng(11)
NAN = float("nan")


def _r(*shape, dtype="float32"):
    return RNG.standard_normal(shape).astype(dtype)


def _perm(*shape, dtype="float32"):
    """Distinct values (no ties), so value gradients are unambiguous."""
    n = int(np.prod(shape)) if shape else 1
    return (RNG.permutation(n).reshape(shape) * 0.5 - 3).astype(dtype)


def _ties(*shape, dtype="float32"):
    return RNG.integers(0, 3, shape).astype(dtype)


WITH_NAN = np.array([[3.0, 1.0, NAN, 2.0], [2.0, 2.0, 1.0, NAN], [NAN, NAN, 0.0, -1.0]],
                    dtype="float32")

CASES = [
    # argmax / argmin
    ("argmax", lambda P, x: P.argmax(x), [_r(3, 4)]),
    ("argmax_axis", lambda P, x: P.argmax(x, axis=1), [_r(3, 4)]),
    ("argmax_keep", lambda P, x: P.argmax(x, keepdim=True), [_r(2, 3)]),
    ("argmax_axis_keep", lambda P, x: P.argmax(x, axis=0, keepdim=True), [_r(2, 3)]),
    ("argmax_int32", lambda P, x: P.argmax(x, -1, dtype="int32"), [_r(2, 3)]),
    ("argmax_0d", lambda P, x: P.argmax(x), [_r()]),
    ("argmax_ties", lambda P, x: P.argmax(x, 1), [_ties(4, 6)]),
    ("argmax_nan", lambda P, x: P.argmax(x, 1), [WITH_NAN]),
    ("argmin", lambda P, x: P.argmin(x, 0), [_r(3, 4, dtype="float64")]),
    ("argmin_int", lambda P, x: P.argmin(x), [np.array([[4, 1, 1], [0, 9, 0]])]),
    ("argmin_nan", lambda P, x: P.argmin(x, 0), [WITH_NAN]),
    ("argmax_method", lambda P, x: x.argmax(axis=-1), [_r(2, 5)]),
    # argsort / sort
    ("argsort", lambda P, x: P.argsort(x), [_r(3, 5)]),
    ("argsort_axis0_desc", lambda P, x: P.argsort(x, 0, True), [_r(4, 3)]),
    ("argsort_ties", lambda P, x: P.argsort(x), [_ties(3, 7)]),
    ("argsort_ties_desc", lambda P, x: P.argsort(x, descending=True), [_ties(3, 7)]),
    ("argsort_nan", lambda P, x: P.argsort(x), [WITH_NAN]),
    ("argsort_nan_desc", lambda P, x: P.argsort(x, descending=True), [WITH_NAN]),
    ("argsort_int_desc", lambda P, x: P.argsort(x, descending=True),
     [np.array([2, 1, 2, -5, 1], dtype="int64")]),
    ("argsort_int32", lambda P, x: P.argsort(x), [np.array([[3, 1], [0, -2]], "int32")]),
    ("argsort_0d", lambda P, x: P.argsort(x), [_r()]),
    ("sort", lambda P, x: P.sort(x), [_perm(3, 5)]),
    ("sort_desc", lambda P, x: P.sort(x, descending=True), [_perm(3, 5)]),
    ("sort_axis0", lambda P, x: P.sort(x, axis=0), [_perm(4, 2, 3, dtype="float64")]),
    ("sort_nan", lambda P, x: P.sort(x), [WITH_NAN]),
    ("sort_nan_desc", lambda P, x: P.sort(x, 1, True), [WITH_NAN]),
    ("sort_int", lambda P, x: P.sort(x), [np.array([3, 1, 2])]),
    ("sort_0d", lambda P, x: P.sort(x), [_r()]),
    ("sort_empty", lambda P, x: P.sort(x), [_r(0, 3)]),
    ("sort_method", lambda P, x: x.sort(), [_perm(2, 4)]),
    # topk
    ("topk", lambda P, x: P.topk(x, 2), [_perm(3, 5)]),
    ("topk_small", lambda P, x: P.topk(x, 3, largest=False), [_perm(3, 5)]),
    ("topk_axis0", lambda P, x: P.topk(x, 1, axis=0), [_perm(4, 3)]),
    ("topk_full", lambda P, x: P.topk(x, 4, axis=-1), [_perm(2, 4, dtype="float64")]),
    # with ties Paddle's CPU topk/kthvalue index order comes from std::partial_sort and is
    # unspecified; paddle_hl keeps ties in input order, so only values are compared here
    ("topk_ties", lambda P, x: P.topk(x, 3)[0], [_ties(4, 6)]),
    ("topk_ties_small", lambda P, x: P.topk(x, 3, largest=False)[0], [_ties(4, 6)]),
    ("topk_nan", lambda P, x: P.topk(x, 2)[0], [WITH_NAN]),
    ("topk_nan_small", lambda P, x: P.topk(x, 3, largest=False)[0], [WITH_NAN]),
    ("topk_tensor_k", lambda P, x: P.topk(x, P.to_tensor(2)), [_perm(2, 5)]),
    ("topk_int", lambda P, x: P.topk(x, 2), [np.array([[5, 1, 7], [2, 9, 0]])]),
    ("topk_0d", lambda P, x: P.topk(x, 1), [_r()]),
    ("topk_method", lambda P, x: x.topk(2), [_perm(6)]),
    # kthvalue / mode
    ("kthvalue", lambda P, x: P.kthvalue(x, 2), [_perm(3, 5)]),
    ("kthvalue_keep", lambda P, x: P.kthvalue(x, 3, axis=0, keepdim=True), [_perm(4, 3)]),
    ("kthvalue_1d", lambda P, x: P.kthvalue(x, 1), [_perm(5, dtype="float64")]),
    ("kthvalue_ties", lambda P, x: P.kthvalue(x, 2)[0], [_ties(3, 6)]),
    ("kthvalue_nan", lambda P, x: P.kthvalue(x, 4), [WITH_NAN]),
    ("mode", lambda P, x: P.mode(x)[1], [np.array([[1.0, 3, 3, 2, 2], [5, 5, 1, 1, 3]],
                                                   "float32")]),
    ("mode_vals", lambda P, x: P.mode(x), [np.array([[1.0, 2, 2, 1, 7], [4, 4, 4, 0, 0]],
                                                     "float32")]),
    ("mode_axis0", lambda P, x: P.mode(x, 0)[1], [np.array([[1, 3], [3, 1], [3, 1]])]),
    ("mode_keep", lambda P, x: P.mode(x, 1, True)[1], [_ties(4, 7, dtype="int64")]),
    ("mode_1d", lambda P, x: P.mode(x), [np.array([1.0, 2.0, 2.0, 1.0], "float64")]),
    ("mode_distinct", lambda P, x: P.mode(x), [_perm(2, 5)]),
    # nonzero / masked_select / where
    ("nonzero", lambda P, x: P.nonzero(x), [_ties(3, 4)]),
    ("nonzero_tuple", lambda P, x: P.nonzero(x, as_tuple=True), [_ties(2, 3, 2)]),
    ("nonzero_bool", lambda P, x: P.nonzero(x), [np.array([True, False, True])]),
    ("nonzero_none", lambda P, x: P.nonzero(x), [np.zeros((2, 3), "float32")]),
    ("masked_select", lambda P, x: P.masked_select(x, x > 0), [_r(3, 4)]),
    ("masked_select_bcast_mask", lambda P, x, m: P.masked_select(x, m),
     [_r(2, 3), np.array([True, False, True])]),
    ("masked_select_bcast_x", lambda P, x, m: P.masked_select(x, m),
     [_r(3), np.array([[True, False, True], [False, False, True]])]),
    ("masked_select_none", lambda P, x: P.masked_select(x, x > 100), [_r(2, 2)]),
    ("where", lambda P, c, x, y: P.where(c > 0, x, y), [_r(2, 3), _r(2, 3), _r(2, 3)]),
    ("where_bcast", lambda P, c, x, y: P.where(c > 0, x, y), [_r(2, 3), _r(3), _r(2, 1)]),
    ("where_f64", lambda P, c, x, y: P.where(c > 0, x, y),
     [_r(4), _r(4, dtype="float64"), _r(4, dtype="float64")]),
    ("where_int", lambda P, c, x, y: P.where(c, x, y),
     [np.array([True, False]), np.array([1, 2]), np.array([3, 4])]),
    ("where_cond_only", lambda P, c: P.where(c > 0), [_r(3, 4)]),
    ("where_tensor_scalar", lambda P, c, x: P.where(c > 0, x, P.to_tensor(0.0)),
     [_r(2, 3), _r(2, 3)]),
    ("where_method", lambda P, c, x, y: (c > 0).where(x, y), [_r(3), _r(3), _r(3)]),
    # searchsorted / bucketize
    ("searchsorted", lambda P, s, v: P.searchsorted(s, v),
     [np.array([1, 3, 5, 7]), np.array([[3, 6], [9, 0]])]),
    ("searchsorted_right", lambda P, s, v: P.searchsorted(s, v, right=True),
     [np.array([1.0, 3.0, 3.0, 7.0], "float32"), np.array([3.0, 0.5, 8.0, 7.0], "float32")]),
    ("searchsorted_nd", lambda P, s, v: P.searchsorted(s, v, out_int32=True),
     [np.array([[1, 3, 5, 7], [2, 4, 6, 8]]), np.array([[3, 6, 2], [9, 0, 4]])]),
    ("searchsorted_nd_right", lambda P, s, v: P.searchsorted(s, v, right=True),
     [np.sort(_ties(2, 3, 5, dtype="float64"), -1), _ties(2, 3, 4, dtype="float64")]),
    ("bucketize", lambda P, x, s: P.bucketize(x, s),
     [np.array([[3, 6], [9, 0]]), np.array([1, 3, 5, 7])]),
    ("bucketize_right", lambda P, x, s: P.bucketize(x, s, True, True),
     [_ties(5, dtype="float64"), np.array([0.0, 1.0, 2.0])]),
    ("bucketize_method", lambda P, x, s: x.bucketize(s),
     [_r(4), np.array([-1.0, 0.0, 1.0], "float32")]),
    # unique
    ("unique", lambda P, x: P.unique(x), [np.array([3, 1, 1, 2])]),
    ("unique_all", lambda P, x: P.unique(x, True, True, True), [np.array([3, 1, 1, 2, 3, 0])]),
    ("unique_2d_flat", lambda P, x: P.unique(x, True, True, True),
     [np.array([[3.0, 1.0], [1.0, 2.0]], "float32")]),
    ("unique_axis0", lambda P, x: P.unique(x, True, True, True, axis=0),
     [np.array([[1, 2], [1, 2], [0, 5], [1, 0]])]),
    ("unique_axis1", lambda P, x: P.unique(x, True, True, True, axis=1),
     [np.array([[1, 2, 1], [3, 0, 3]])]),
    ("unique_int32", lambda P, x: P.unique(x, return_index=True, dtype="int32"),
     [np.array([3, 1, 1, 2])]),
    ("unique_empty", lambda P, x: P.unique(x, True, True, True), [np.zeros(0, "float32")]),
    ("unique_consecutive", lambda P, x: P.unique_consecutive(x, True, True),
     [np.array([1, 1, 2, 2, 1, 3, 3])]),
    ("unique_consecutive_2d", lambda P, x: P.unique_consecutive(x, True, True),
     [np.array([[1, 1], [2, 1]])]),
    ("unique_consecutive_axis", lambda P, x: P.unique_consecutive(x, True, True, axis=0),
     [np.array([[1, 2], [1, 2], [0, 5], [1, 2]])]),
    ("unique_consecutive_plain", lambda P, x: P.unique_consecutive(x),
     [np.array([5.0, 5.0, 1.0], "float32")]),
]


@pytest.mark.parity
@pytest.mark.parametrize("name,fn,inputs", CASES, ids=[c[0] for c in CASES])
def test_parity(pd, name, fn, inputs):
    # tied values route their gradient through whichever index each library picked
    grad = not name.endswith(("_empty", "_none")) and "ties" not in name and "nan" not in name
    check_parity(fn, inputs, pd, grad=grad)


# ---------------------------------------------------------------- behaviours

def test_ties_keep_input_order():
    x = paddle.to_tensor([[1.0, 3.0, 3.0, 2.0, 3.0]])
    np.testing.assert_array_equal(paddle.topk(x, 2)[1].numpy(), [[1, 2]])
    np.testing.assert_array_equal(paddle.kthvalue(x, 3)[1].numpy(), [1])
    np.testing.assert_array_equal(paddle.argsort(x, descending=True).numpy(), [[1, 2, 4, 3, 0]])


def test_sort_nan_last():
    x = np.array([[2.0, NAN, -1.0, NAN, 5.0], [NAN, 0.0, 0.0, -np.inf, np.inf]], "float32")
    t = paddle.to_tensor(x)
    np.testing.assert_array_equal(paddle.sort(t).numpy(), np.sort(x, axis=-1))
    np.testing.assert_array_equal(paddle.argsort(t).numpy(), np.argsort(x, -1, kind="stable"))
    d = paddle.sort(t, descending=True).numpy()
    assert np.isnan(d[0, :2]).all() and np.isnan(d[1, 0])
    np.testing.assert_array_equal(d[0, 2:], [5.0, 2.0, -1.0])
    np.testing.assert_array_equal(d[1, 1:], [np.inf, 0.0, 0.0, -np.inf])


def test_unique_empty():
    e = paddle.to_tensor(np.zeros(0, "float32"))
    out = paddle.unique(e)
    assert out.shape == [0] and out.dtype == paddle.float32
    out, idx, inv, cnt = paddle.unique(e, True, True, True)
    assert idx.shape == inv.shape == cnt.shape == [0]
    assert idx.dtype == paddle.int64
    out, inv, cnt = paddle.unique_consecutive(e, True, True)
    assert out.shape == [0] and cnt.shape == [0]
    e2 = paddle.zeros([0, 3])
    assert paddle.unique(e2, axis=0).shape == [0, 3]


@pytest.mark.parametrize("right", [False, True])
def test_bucketize_searchsorted_match_numpy(right):
    seq = np.sort(RNG.integers(-5, 5, 12)).astype("float64")
    vals = RNG.integers(-7, 7, (3, 5)).astype("float64")
    side = "right" if right else "left"
    out = paddle.bucketize(paddle.to_tensor(vals), paddle.to_tensor(seq), right=right)
    np.testing.assert_array_equal(out.numpy(), np.searchsorted(seq, vals, side=side))
    assert out.dtype == paddle.int64
    out = paddle.searchsorted(paddle.to_tensor(seq), paddle.to_tensor(vals), right=right)
    np.testing.assert_array_equal(out.numpy(), np.searchsorted(seq, vals, side=side))
    seqs = np.sort(RNG.standard_normal((2, 3, 9)), -1)
    vs = RNG.standard_normal((2, 3, 4))
    vs[0, 0, 0] = seqs[0, 0, 3]  # an exact tie
    got = paddle.searchsorted(paddle.to_tensor(seqs), paddle.to_tensor(vs), out_int32=True,
                              right=right).numpy()
    assert got.dtype == np.int32
    ref = np.stack([np.searchsorted(s, v, side=side)
                    for s, v in zip(seqs.reshape(-1, 9), vs.reshape(-1, 4))]).reshape(2, 3, 4)
    np.testing.assert_array_equal(got, ref)


def test_index_outputs_stop_gradient():
    x = paddle.to_tensor(_perm(3, 4), stop_gradient=False)
    v, i = paddle.topk(x, 2)
    assert not v.stop_gradient and i.stop_gradient and i.dtype == paddle.int64
    v, i = paddle.kthvalue(x, 2)
    assert not v.stop_gradient and i.stop_gradient
    v, i = paddle.mode(x)
    assert not v.stop_gradient and i.stop_gradient
    assert paddle.argsort(x).stop_gradient
    assert paddle.argmax(x).stop_gradient and paddle.argmax(x).shape == []
    assert not paddle.sort(x).stop_gradient
    assert not paddle.masked_select(x, x > 0).stop_gradient
    assert paddle.nonzero(x).stop_gradient
    assert paddle.unique(x).stop_gradient


@pytest.mark.parametrize("fn", [
    lambda x: paddle.sort(x, axis=0),
    lambda x: paddle.sort(x, descending=True),
    lambda x: paddle.topk(x, 2)[0],
    lambda x: paddle.topk(x, 2, axis=0, largest=False)[0],
    lambda x: paddle.kthvalue(x, 2)[0],
    lambda x: paddle.kthvalue(x, 3, axis=0, keepdim=True)[0],
    lambda x: paddle.mode(x)[0],
    lambda x: paddle.masked_select(x, x > 0),
    lambda x: paddle.where(x > 0, x, x * 3),
])
def test_gradcheck_values(fn):
    # distinct values away from 0, so masks and orders do not flip under the perturbation
    gradcheck(fn, [RNG.permutation(16).reshape(4, 4) * 0.25 - 1.9])


def test_where_gradcheck_broadcast():
    c = paddle.to_tensor(np.array([[True, False, True], [False, True, True]]))
    gradcheck(lambda x, y: paddle.where(c, x, y), [RNG.standard_normal(3),
                                                    RNG.standard_normal((2, 1))])


@pytest.mark.parametrize("fn", [
    lambda x: paddle.sort(x, axis=1, descending=True),
    lambda x: paddle.topk(x, 2)[0],
    lambda x: paddle.kthvalue(x, 2, keepdim=True)[0],
    lambda x: paddle.mode(x)[0],
    lambda x: paddle.masked_select(x, x > -0.5),
    lambda x: paddle.where(x > 0, x, 2 * x),
    lambda x: paddle.where(x > 0, x, 1.0),
])
def test_double_grad(fn):
    """Gradient of sum(grad(sum(f(x)**3))) w.r.t. x, against finite differences."""
    xv = RNG.permutation(12).reshape(3, 4) * 0.3 - 1.65

    def grad_sum(v, create_graph):
        t = paddle.to_tensor(v, stop_gradient=False)
        (g,) = paddle.grad((fn(t) ** 3).sum(), t, create_graph=create_graph)
        return t, g

    t, g = grad_sum(xv, True)
    g.sum().backward()
    eps = 1e-6
    num = np.zeros_like(xv)
    for idx in np.ndindex(*xv.shape):
        d = np.zeros_like(xv)
        d[idx] = eps
        num[idx] = (grad_sum(xv + d, False)[1].numpy().sum()
                    - grad_sum(xv - d, False)[1].numpy().sum()) / (2 * eps)
    np.testing.assert_allclose(t.grad.numpy(), num, rtol=1e-5, atol=1e-5)


def test_where_python_scalars():
    x = paddle.to_tensor([1.0, -2.0, 3.0])
    out = paddle.where(x > 0, x, 0.0)
    assert out.dtype == paddle.float32
    np.testing.assert_array_equal(out.numpy(), [1.0, 0.0, 3.0])
    i = paddle.to_tensor([1, -2, 3])
    assert paddle.where(i > 0, i, 0).dtype == paddle.int64
    assert paddle.where(i > 0, i, 0.5).dtype == paddle.float32
    assert paddle.where(i > 0, 2, 0).dtype == paddle.int64
    np.testing.assert_array_equal(paddle.where(i > 0, 2, 0).numpy(), [2, 0, 2])
    x64 = paddle.to_tensor([1.0, 2.0], dtype="float64")
    assert paddle.where(x64 > 1, x64, 0.0).dtype == paddle.float64


def test_where_inplace():
    c = paddle.to_tensor([True, False, True])
    x = paddle.to_tensor([1.0, 2.0, 3.0])
    y = paddle.to_tensor([9.0, 8.0, 7.0])
    v = x.inplace_version
    r = paddle.where_(c, x, y)
    assert r is x and x.inplace_version == v + 1
    np.testing.assert_array_equal(x.numpy(), [1.0, 8.0, 3.0])
    np.testing.assert_array_equal(y.numpy(), [9.0, 8.0, 7.0])
    x2 = paddle.to_tensor([[1.0, 2.0], [3.0, 4.0]])
    paddle.to_tensor([True, False]).where_(x2, 0.0)
    np.testing.assert_array_equal(x2.numpy(), [[1.0, 0.0], [3.0, 0.0]])
    # through the graph: gradient reaches x where cond is True and y elsewhere
    w = paddle.to_tensor([1.0, 1.0, 1.0], stop_gradient=False)
    yy = paddle.to_tensor([5.0, 5.0, 5.0], stop_gradient=False)
    h = w * 2
    paddle.where_(c, h, yy)
    (h * paddle.to_tensor([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [2.0, 0.0, 6.0])
    np.testing.assert_allclose(yy.grad.numpy(), [0.0, 2.0, 0.0])
    leaf = paddle.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
    with pytest.raises((ValueError, RuntimeError), match="inplace"):
        paddle.where_(c, leaf, y)


def test_nonzero_as_tuple_shapes_and_where_single():
    x = paddle.to_tensor([[0, 1], [2, 0]])
    rows, cols = paddle.nonzero(x, as_tuple=True)
    assert rows.shape == [2, 1] and cols.shape == [2, 1]
    np.testing.assert_array_equal(rows.numpy().ravel(), [0, 1])
    r2, c2 = paddle.where(x > 0)
    np.testing.assert_array_equal(c2.numpy().ravel(), [1, 0])


def test_top_p_sampling():
    probs = np.array([[0.05, 0.05, 0.6, 0.3], [0.7, 0.1, 0.1, 0.1], [0.25, 0.25, 0.25, 0.25]],
                     "float32")
    x = paddle.to_tensor(probs)
    ps = paddle.to_tensor([0.5, 0.6, 1.0])
    counts = np.zeros((3, 4))
    paddle.seed(3)
    for _ in range(300):
        vals, ids = x.top_p_sampling(ps)
        assert vals.shape == [3, 1] and ids.shape == [3, 1] and ids.dtype == paddle.int64
        np.testing.assert_allclose(vals.numpy()[:, 0], probs[np.arange(3), ids.numpy()[:, 0]])
        counts[np.arange(3), ids.numpy()[:, 0]] += 1
    # row 0: only the 0.6 token reaches p=0.5; row 1: the 0.7 token; row 2: all four
    assert counts[0, 2] == 300 and counts[1, 0] == 300
    assert (counts[2] > 40).all()
    # a fixed seed repeats
    a = x.top_p_sampling(ps, seed=5)[1].numpy()
    b = x.top_p_sampling(ps, seed=5)[1].numpy()
    np.testing.assert_array_equal(a, b)
    # threshold removes tokens below it (the most likely one is always kept)
    th = paddle.to_tensor([0.0, 0.0, 0.3])
    assert (x.top_p_sampling(paddle.to_tensor([1.0, 1.0, 1.0]), threshold=th)[1].numpy()[2]
            == 0)


def test_search_on_device(device):
    x = paddle.to_tensor(WITH_NAN)
    np.testing.assert_array_equal(paddle.argsort(x).numpy(), np.argsort(WITH_NAN, -1,
                                                                        kind="stable"))
    v, i = paddle.topk(x, 2)
    assert i.place == x.place
    u, inv = paddle.unique(paddle.to_tensor([3, 1, 3]), return_inverse=True)
    np.testing.assert_array_equal(inv.numpy(), [1, 0, 1])
    np.testing.assert_array_equal(paddle.mode(paddle.to_tensor([[2, 1, 1, 2, 2]]))[1].numpy(),
                                  [4])
    s = paddle.searchsorted(paddle.to_tensor([[1, 3], [2, 4]]), paddle.to_tensor([[3], [3]]))
    np.testing.assert_array_equal(s.numpy(), [[1], [1]])
    g = paddle.to_tensor(_perm(3, 4), stop_gradient=False)
    paddle.sort(g, descending=True)[:, :2].sum().backward()
    assert g.grad.numpy().sum() == 6


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize("call,exc", [
    (lambda: paddle.argmax(paddle.zeros([0])), ValueError),
    (lambda: paddle.argmax(paddle.ones([2, 3]), axis=2), ValueError),
    (lambda: paddle.argmax(paddle.ones([2]), dtype="float32"), ValueError),
    (lambda: paddle.argmin(paddle.ones([2]), axis=1.5), TypeError),
    (lambda: paddle.topk(paddle.ones([2, 3]), 5), ValueError),
    (lambda: paddle.topk(paddle.ones([2, 3]), 0), ValueError),
    (lambda: paddle.kthvalue(paddle.ones([2, 3]), 5, axis=1), ValueError),
    (lambda: paddle.sort(paddle.to_tensor([True, False])), TypeError),
    (lambda: paddle.sort(paddle.ones([2]), axis=3), ValueError),
    (lambda: paddle.nonzero(paddle.to_tensor(3.0)), ValueError),
    (lambda: paddle.masked_select(paddle.ones([2]), paddle.ones([2])), TypeError),
    (lambda: paddle.masked_select(paddle.ones([2]), paddle.ones([3]) > 0), ValueError),
    (lambda: paddle.where(paddle.ones([2]) > 0, paddle.ones([2])), ValueError),
    (lambda: paddle.where(paddle.ones([2]) > 0, paddle.ones([2]), paddle.ones([3])),
     ValueError),
    (lambda: paddle.where(paddle.ones([2]) > 0, paddle.ones([2]), "a"), TypeError),
    (lambda: paddle.bucketize(paddle.ones([2]), paddle.ones([1, 2])), ValueError),
    (lambda: paddle.searchsorted(paddle.ones([2, 3]), paddle.ones([3, 1])), ValueError),
    (lambda: paddle.unique(paddle.ones([2]), dtype="float32"), ValueError),
    (lambda: paddle.mode(paddle.zeros([2, 0])), ValueError),
    (lambda: paddle.to_tensor([[0.5, 0.5]]).top_p_sampling(paddle.to_tensor([0.5, 0.5])),
     ValueError),
])
def test_errors(call, exc):
    with pytest.raises(exc) as info:
        call()
    assert str(info.value)


def test_error_message_names_op_and_shape():
    with pytest.raises(ValueError, match=r"topk: k \(5\).*\[2, 3\]"):
        paddle.topk(paddle.ones([2, 3]), 5)


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_topk_long_axis_matches_stable_sort(largest, dtype):
    """The partition path (k much smaller than the axis) keeps the full sort's tie order."""
    a = RNG.integers(0, 6, (3, 64, 5)).astype(dtype)
    x = paddle.to_tensor(a)
    for k in (1, 3, 8):
        v, i = paddle.topk(x, k, axis=1, largest=largest)
        key = -a if largest else a
        ref = np.argsort(key, axis=1, kind="stable")[:, :k]
        np.testing.assert_array_equal(i.numpy(), ref)
        np.testing.assert_array_equal(v.numpy(), np.take_along_axis(a, ref, 1))
