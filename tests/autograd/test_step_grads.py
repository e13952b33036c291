"""Piecewise-constant ops: the gradient is the zero derivative times the upstream gradient, as
Paddle computes it (an inf or NaN upstream gradient gives NaN for floor, ceil, round and sign;
trunc's gradient is zeros)."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle

G = np.array([np.inf, np.nan, 2.0, -np.inf], dtype=np.float32)
X = np.array([1.5, 2.5, -3.2, 0.4], dtype=np.float32)


def _grad(mod, name):
    x = mod.to_tensor(X, stop_gradient=False)
    getattr(mod, name)(x).backward(mod.to_tensor(G))
    return x.grad.numpy()


@pytest.mark.parametrize("name", ["floor", "ceil", "round", "sign", "trunc"])
def test_upstream_inf_and_nan_match_paddle(pd, name):
    np.testing.assert_array_equal(_grad(paddle, name), _grad(pd, name))


@pytest.mark.parametrize("name, nan", [("floor", True), ("sign", True), ("trunc", False)])
def test_zero_gradient_times_upstream(name, nan):
    got = _grad(paddle, name)
    want = G * 0 if nan else np.zeros_like(G)
    np.testing.assert_array_equal(got, want)
    # under create_graph the gradient stays connected and its own gradient is zero
    x = paddle.to_tensor(X, stop_gradient=False)
    (gx,) = paddle.grad(getattr(paddle, name)(x * x).sum(), x, create_graph=True)
    np.testing.assert_array_equal(gx.numpy(), np.zeros_like(X))
