"""Pooling, fold and unfold have one gradient rule each (``grad=``, reading the forward's
residuals): the route/gather and adjoint kernels their rules call are themselves differentiable,
so third derivatives are right (checked against finite differences of the second)."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle
import paddle_hl.nn.functional as F
from paddle_hl.nn.functional import conv as C
from paddle_hl.nn.functional import pooling as P

RNG = np.random.default_rng(7)


def _second(fn, x, r1):
    """d/dx of sum(d/dx sum(fn(x)^3) * r1), recorded with create_graph."""
    tx = paddle.to_tensor(x, stop_gradient=False)
    y = fn(tx)
    (g1,) = paddle.grad((y * y * y).sum(), [tx], create_graph=True)
    (g2,) = paddle.grad((g1 * paddle.to_tensor(r1)).sum(), [tx], create_graph=True)
    return tx, g2


@pytest.mark.parametrize("fn", [
    lambda x: F.max_pool2d(x, 3, 2, 1),
    lambda x: F.avg_pool2d(x, 2, 1, exclusive=False),
    lambda x: F.adaptive_avg_pool2d(x, [2, 3]),
    lambda x: F.adaptive_avg_pool2d(x, [2, 5]),  # windows that tile the input: a mean
    lambda x: F.adaptive_avg_pool2d(x, 1),
    lambda x: F.adaptive_max_pool2d(x, [2, 3]),
    lambda x: F.max_unpool2d(*F.max_pool2d(x, 2, return_mask=True), 2, output_size=[4, 5]),
    lambda x: F.fold(F.unfold(x, 2, strides=1, paddings=1), [4, 5], 2, strides=1, paddings=1),
], ids=["max2d", "avg2d", "aavg2d", "aavg2d_tiled", "aavg2d_global", "amax2d", "unpool2d",
        "unfold_fold"])
def test_third_derivative_finite_difference(fn):
    x = RNG.permutation(40).reshape(1, 2, 4, 5).astype(np.float64) * 0.1 - 2.0
    r1, r2 = RNG.standard_normal(x.shape), RNG.standard_normal(x.shape)
    tx, g2 = _second(fn, x, r1)
    (g2 * paddle.to_tensor(r2)).sum().backward()
    eps = 1e-6
    num = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        orig = x[idx]
        x[idx] = orig + eps
        fp = float((_second(fn, x, r1)[1].numpy() * r2).sum())
        x[idx] = orig - eps
        fm = float((_second(fn, x, r1)[1].numpy() * r2).sum())
        x[idx] = orig
        num[idx] = (fp - fm) / (2 * eps)
    np.testing.assert_allclose(tx.grad.numpy(), num, rtol=1e-5, atol=1e-5)


def test_rules_are_declared_once():
    # one derivative per op: a grad= rule (its create_graph form derived from it), no hi=
    for k in (C._conv_kernel, C._convt_kernel, C._convw_kernel, C._unfold_kernel,
              C._fold_kernel, P._maxpool_kernel, P._maxpool_route_kernel,
              P._maxpool_gather_kernel, P._avgpool_kernel, P._avgpool_adj_kernel,
              P._adaptive_avg_kernel, P._adaptive_avg_adj_kernel, P._adaptive_max_kernel,
              P._amax_route_kernel, P._amax_gather_kernel, P._unpool_kernel,
              P._unpool_gather_kernel):
        assert k.grad is not None and k.hi.rule is k.grad, k.__name__

