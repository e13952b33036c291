"""segment_sum / segment_mean / segment_max / segment_min against Paddle 2.6.2 and NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl
from tests.op_check import check_parity, gradcheck

G = paddle_hl.geometric
OPS = ["segment_sum", "segment_mean", "segment_max", "segment_min"]


def _data(n, feat, dtype, seed=0):
    rng = np.random.default_rng(seed)
    size = n * int(np.prod(feat))
    vals = rng.permutation(size).reshape((n,) + tuple(feat))  # distinct: no max/min ties
    if np.dtype(dtype).kind == "f":
        return ((vals + 0.5) / size - 0.5).astype(dtype)
    return (vals - size // 2).astype(dtype)


def _ids(n, n_seg, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return np.sort(rng.integers(0, n_seg, n)).astype(dtype)


@pytest.mark.parity
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("ids_dtype", ["int32", "int64"])
def test_segment_parity(pd, op, dtype, ids_dtype):
    data = _data(20, (3,), dtype, seed=1)
    ids = _ids(20, 9, ids_dtype, seed=2)  # some ids missing: rows of 0
    check_parity(lambda lib, d: getattr(lib.geometric, op)(d, lib.to_tensor(ids)), [data], pd)


@pytest.mark.parity
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("feat", [(), (2, 3)])
def test_segment_shapes_and_ties(pd, op, feat):
    data = _data(12, feat, "float64", seed=3)
    ids = _ids(12, 5, "int64", seed=4)
    check_parity(lambda lib, d: getattr(lib.geometric, op)(d, lib.to_tensor(ids)), [data], pd)
    tied = np.array([[1.0, 2.0], [1.0, 3.0], [2.0, 3.0], [5.0, 5.0]])
    tids = np.array([0, 0, 0, 2])
    check_parity(lambda lib, d: getattr(lib.geometric, op)(d, lib.to_tensor(tids)), [tied], pd)


@pytest.mark.parametrize("op", OPS)
def test_segment_gradcheck(op):
    data = _data(10, (3,), "float64", seed=5)
    ids = paddle_hl.to_tensor(_ids(10, 4, "int64", seed=6))
    gradcheck(lambda d: getattr(G, op)(d, ids), [data])


@pytest.mark.parametrize("op", OPS)
def test_segment_large_against_numpy(op):
    # about 1e5 rows, int32 ids with gaps
    rng = np.random.default_rng(7)
    n = 100_000
    data = rng.standard_normal((n, 4)).astype("float32")
    ids = np.sort(rng.integers(0, 30_000, n)).astype("int32")
    out = getattr(G, op)(paddle_hl.to_tensor(data), paddle_hl.to_tensor(ids)).numpy()
    n_seg = int(ids[-1]) + 1
    assert out.shape == (n_seg, 4)
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    red = {"segment_sum": np.add, "segment_mean": np.add, "segment_max": np.maximum,
           "segment_min": np.minimum}[op]
    ref = np.zeros((n_seg, 4), dtype=np.float64)
    ref[ids[starts]] = red.reduceat(data.astype(np.float64), starts, axis=0)
    if op == "segment_mean":
        cnt = np.bincount(ids, minlength=n_seg)
        ref /= np.maximum(cnt, 1)[:, None]
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


def test_segment_second_order():
    data = paddle_hl.to_tensor(_data(8, (2,), "float64", seed=8), stop_gradient=False)
    ids = paddle_hl.to_tensor(np.array([0, 0, 1, 1, 1, 3, 3, 3]))
    out = G.segment_mean(data * data, ids)
    (g,) = paddle_hl.grad(out.sum(), data, create_graph=True)
    (gg,) = paddle_hl.grad(g.sum(), data)
    cnt = np.array([2, 2, 3, 3, 3, 3, 3, 3], dtype=float)[:, None]
    np.testing.assert_allclose(g.numpy(), 2 * data.numpy() / cnt, rtol=1e-12)
    np.testing.assert_allclose(gg.numpy(), 2 / cnt * np.ones((8, 2)), rtol=1e-12)


def test_empty_and_behaviour_example():
    out = G.segment_sum(paddle_hl.zeros([0, 3]), paddle_hl.to_tensor(np.zeros(0, "int64")))
    assert out.shape == [0, 3]
    d = paddle_hl.to_tensor([[1., 2., 3.], [3., 2., 1.], [4., 5., 6.]])
    ids = paddle_hl.to_tensor([0, 0, 1])
    np.testing.assert_allclose(G.segment_sum(d, ids).numpy(), [[4, 4, 4], [4, 5, 6]])
    np.testing.assert_allclose(G.segment_max(d, ids).numpy(), [[3, 2, 3], [4, 5, 6]])


class TestBadInput:
    d = paddle_hl.ones([4, 2])

    def test_unsorted(self):
        with pytest.raises(ValueError, match=r"segment_sum: 'segment_ids' must be sorted.*"
                                             r"segment_ids\[1\] = 2 > segment_ids\[2\] = 1"):
            G.segment_sum(self.d, paddle_hl.to_tensor([0, 2, 1, 2]))

    def test_length_dtype_sign_and_shape(self):
        with pytest.raises(ValueError, match="segment_mean: 'segment_ids' must have one id"):
            G.segment_mean(self.d, paddle_hl.to_tensor([0, 0, 1]))
        with pytest.raises(TypeError, match="'segment_ids' must be an int32 or int64"):
            G.segment_max(self.d, paddle_hl.to_tensor([0., 0., 1., 1.]))
        with pytest.raises(IndexError, match="'segment_ids' must be non-negative"):
            G.segment_min(self.d, paddle_hl.to_tensor([-1, 0, 1, 1]))
        with pytest.raises(ValueError, match="'segment_ids' must be 1-D"):
            G.segment_sum(self.d, paddle_hl.to_tensor([[0, 0, 1, 1]]))
