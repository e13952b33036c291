"""Distances: pairwise_distance (every p, keepdim, broadcasting), PairwiseDistance and
CosineSimilarity layers: parity with Paddle 2.6.2, float64 gradients, reprs, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import paddle_hl
from tests.op_check import check_parity, gradcheck

F = paddle_hl.nn.functional


def _randn(*shape, seed=0, dtype="float64"):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


PS = [2.0, 1.0, 3.0, 0.5, math.inf, -math.inf, 0.0]
SHAPES = [((4, 5), (4, 5)), ((4, 5), (5,)), ((4, 5), (1, 5)), ((2, 3, 4), (2, 3, 4)),
          ((5,), (5,)), ((3, 4), (3, 1))]


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("p", PS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_pairwise_distance_parity(p, keepdim, dtype, pd):
    tol = 2e-5 if dtype == "float32" else 1e-9
    check_parity(lambda lib, x, y: lib.nn.functional.pairwise_distance(x, y, p=p,
                                                                       keepdim=keepdim),
                 [_randn(4, 5, dtype=dtype), _randn(4, 5, seed=1, dtype=dtype)], pd, rtol=tol,
                 atol=tol)


@pytest.mark.parity
@pytest.mark.parametrize("xs,ys", SHAPES)
def test_pairwise_distance_shapes_parity(xs, ys, pd):
    check_parity(lambda lib, x, y: lib.nn.functional.pairwise_distance(x, y, epsilon=1e-3),
                 [_randn(*xs), _randn(*ys, seed=1)], pd)


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5, math.inf, -math.inf])
@pytest.mark.parametrize("xs,ys", SHAPES[:4])
def test_pairwise_distance_gradcheck(p, xs, ys):
    gradcheck(lambda x, y: F.pairwise_distance(x, y, p=p), [_randn(*xs), _randn(*ys, seed=1)])


def test_pairwise_distance_numpy_and_0d():
    x, y = _randn(3, 4), _randn(3, 4, seed=1)
    out = F.pairwise_distance(paddle_hl.to_tensor(x), paddle_hl.to_tensor(y))
    np.testing.assert_allclose(out.numpy(), np.linalg.norm(x - y + 1e-6, axis=-1), rtol=1e-12)
    one = F.pairwise_distance(paddle_hl.to_tensor(x[0]), paddle_hl.to_tensor(y[0]))
    assert one.shape == []
    kd = F.pairwise_distance(paddle_hl.to_tensor(x[0]), paddle_hl.to_tensor(y[0]), keepdim=True)
    assert kd.shape == [1]
    zero = F.pairwise_distance(paddle_hl.to_tensor(x), paddle_hl.to_tensor(x), p=0.0,
                               epsilon=0.0)
    np.testing.assert_array_equal(zero.numpy(), np.zeros(3))


def test_pairwise_distance_zero_distance_grad_is_finite():
    x = paddle_hl.to_tensor(_randn(2, 3), stop_gradient=False)
    out = F.pairwise_distance(x, x.detach(), epsilon=0.0)
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((2, 3)))


def test_pairwise_distance_errors():
    with pytest.raises(ValueError, match=r"pairwise_distance.*\[3, 4\].*\[2, 4\]"):
        F.pairwise_distance(paddle_hl.ones([3, 4]), paddle_hl.ones([2, 4]))
    with pytest.raises(TypeError, match="pairwise_distance.*int64"):
        F.pairwise_distance(paddle_hl.to_tensor([1, 2]), paddle_hl.to_tensor([1, 2]))
    with pytest.raises(TypeError, match="pairwise_distance.*None"):
        F.pairwise_distance(paddle_hl.ones([3]), None)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw", [{}, {"p": 1.0, "epsilon": 1e-3, "keepdim": True},
                                {"p": math.inf}])
def test_pairwise_distance_layer_parity(kw, dtype, pd):
    tol = 2e-5 if dtype == "float32" else None

    def fn(lib, x, y):
        layer = lib.nn.PairwiseDistance(**kw)
        layer.eval()
        return layer(x, y)

    check_parity(fn, [_randn(4, 5, dtype=dtype), _randn(4, 5, seed=1, dtype=dtype)], pd,
                 rtol=tol, atol=tol)


@pytest.mark.parity
@pytest.mark.parametrize("kw", [{}, {"p": 1.0, "epsilon": 1e-3, "keepdim": True},
                                {"p": math.inf}, {"name": "d"}, {"p": 3}])
def test_pairwise_distance_repr_matches_paddle(kw, pd):
    assert repr(paddle_hl.nn.PairwiseDistance(**kw)) == repr(pd.nn.PairwiseDistance(**kw))


@pytest.mark.parity
@pytest.mark.parametrize("kw", [{}, {"axis": 0, "eps": 1e-5}, {"axis": -1}])
def test_cosine_similarity_layer_parity_and_repr(kw, pd):
    if not hasattr(F, "cosine_similarity"):
        pytest.skip("F.cosine_similarity (common family) is not available yet")
    assert repr(paddle_hl.nn.CosineSimilarity(**kw)) == repr(pd.nn.CosineSimilarity(**kw))
    check_parity(lambda lib, a, b: lib.nn.CosineSimilarity(**kw)(a, b),
                 [_randn(3, 4), _randn(3, 4, seed=1)], pd)


def test_distance_layers_have_no_state():
    for layer in (paddle_hl.nn.PairwiseDistance(), paddle_hl.nn.CosineSimilarity()):
        assert len(layer.state_dict()) == 0
        assert layer.parameters() == []
