"""One derivative per fused op: the kernels that used to pair a hand-written array backward with
a separate create_graph rule now have one rule (reading the kernel's residuals where it has
them). For each: the first-order gradient (array path) equals the create_graph one (Tensor
path), and the derivative of that gradient matches central finite differences of the
first-order gradient (float64).
"""

from __future__ import annotations

import numpy as np
import pytest

import geometric
import paddle_hl as paddle
import paddle_hl.nn.functional as F

from .test_grad_rules import _x, check_paths_agree, check_second_derivative

_IDS = paddle.to_tensor(np.array([0, 0, 1, 2, 2]))
_SRC = paddle.to_tensor(np.array([0, 1, 2, 3, 0, 2]))
_DST = paddle.to_tensor(np.array([1, 2, 0, 1, 3, 1]))

_RMEAN = paddle.to_tensor(np.array([0.3, -0.2]))
_RVAR = paddle.to_tensor(np.array([1.5, 0.7]))

CASES = {
    "softmax (float32 output as residual)": (
        lambda a: F.softmax(a * a, axis=1) * a, [_x()]),
    "log_softmax (log-probabilities as residual)": (
        lambda a: F.log_softmax(a * a, axis=0) * a, [_x()]),
    "cast (adjoint is a cast; complex to real)": (
        lambda a: paddle.cast(paddle.cast(a * a, "complex128") * paddle.to_tensor(
            np.complex128(1.5 + 2j)), "float64") * a, [_x()]),
    "interpolate bilinear (transpose kernel)": (
        lambda a: F.interpolate((a * a).reshape([1, 1, 3, 4]), size=[5, 6], mode="bilinear")
        * 1.5, [_x()]),
    "pixel_shuffle (inverse shuffle)": (
        lambda a: F.pixel_shuffle((a * a).reshape([1, 4, 1, 3]), 2) * paddle.to_tensor(
            np.linspace(0.5, 2, 12).reshape(1, 1, 2, 6)), [_x()]),
    "linear (GEMMs through the linear kernel, bias column sum)": (
        lambda a, w, b: F.linear((a * a).reshape([2, 3, 2]), w * w, b * a[0, :3]).tanh(),
        [_x(), _x((2, 3)), _x((3,))]),
    "linear without bias": (lambda a, w: F.linear(a * a, w * a[0, :2]).sin(),
                            [_x(), _x((4, 2))]),
    "var (centred values as residual)": (lambda a: paddle.var(a * a, axis=1) * a[:, 0], [_x()]),
    "var keepdim, biased": (lambda a: paddle.var(a * a, axis=[0, 1], unbiased=False,
                                                 keepdim=True) * a, [_x()]),
    "std (centred values and std as residuals)": (
        lambda a: paddle.std(a * a, axis=0) * a[0], [_x()]),
    "median (pick weights: a constant choice)": (
        lambda a: paddle.median(a * a, axis=1) * a[:, 1], [_x((3, 5))]),
    "median, even count": (lambda a: paddle.median(a * a * a) * a, [_x((3, 4))]),
    "quantile (interpolation weights)": (
        lambda a: paddle.quantile(a * a, [0.3, 0.8], axis=0) * a[0], [_x((5, 4))]),
    "normal log_prob (standardized residual)": (
        lambda v, m, s: paddle.distribution.Normal(m * v[0], s).log_prob(v * v),
        [_x((3, 4)), _x((4,), lo=-0.5, hi=0.5), _x((4,), lo=0.5, hi=1.5)]),
    "segment_mean (inverse counts as residual)": (
        lambda a: geometric.segment_mean(a * a, _IDS) * a[:3], [_x((5, 4))]),
    "segment_sum (adjoint: row gather)": (
        lambda a: geometric.segment_sum(a * a, _IDS) * a[1:4], [_x((5, 4))]),
    "send_u_recv mean (grouping as residual)": (
        lambda a: geometric.send_u_recv(a * a, _SRC, _DST, "mean") * a, [_x((4, 3))]),
    "segment_max (hit mask as residual)": (
        lambda a: geometric.segment_max(a * a * a, _IDS) * a[1:4], [_x((5, 4))]),
    "send_ue_recv div, mean": (
        lambda a, b: geometric.send_ue_recv(a * a, b * b, _SRC, _DST, "div", "mean") * a,
        [_x((4, 3)), _x((6, 3))]),
    "send_ue_recv mul by an edge scalar (weighted sparse form)": (
        lambda a, b: geometric.send_ue_recv(a * a, b * b, _SRC, _DST, "mul", "sum") * a,
        [_x((4, 3)), _x((6, 1))]),
    "send_uv mul": (
        lambda a, b: geometric.send_uv(a * a, b * a[:, :1], _SRC, _DST, "mul").tanh(),
        [_x((4, 3)), _x((4, 3))]),
    "send_u_recv sum": (
        lambda a: geometric.send_u_recv(a * a, _SRC, _DST, "sum", out_size=5)[1:] * a,
        [_x((4, 3))]),
    "bilinear (the input gradients are bilinear forms)": (
        lambda a, b, w, c: F.bilinear(a * a, b * a[:, :2], w, c * a[0, :2]).sin(),
        [_x((3, 4)), _x((3, 2)), _x((2, 4, 2)), _x((1, 2))]),
    "batch_norm eval (running statistics: constant residuals)": (
        lambda a, w, b: F.batch_norm((a * a).reshape([3, 2, 2]), _RMEAN, _RVAR, w * w, b * a[0, :2],
                                     training=False).sin(),
        [_x(), _x((2,)), _x((2,))]),
    "batch_norm, one value per channel (identity)": (
        lambda a, w, b: F.batch_norm((a * a).reshape([1, 12]), paddle.zeros([12]),
                                     paddle.ones([12]), w, b, training=True) * w * b,
        [_x(), _x((12,)), _x((12,))]),
    "spectral_norm (u v^T constant, sigma recomputed)": (
        lambda a: _spectral(a * a) * a, [_x((3, 4))]),
    "logcumsumexp (log-space adjoint kernels)": (
        lambda a: paddle.logcumsumexp(a * a, axis=1) * (a - 1), [_x()]),
    "logcumsumexp, reverse axis 0, signed gradient": (
        lambda a: paddle.logcumsumexp(a * 3, axis=0).sin(), [_x((4, 3), lo=-2, hi=2)]),
}


def _spectral(w):
    from paddle_hl.nn.layer import norm

    # no power iteration: u and v are the given constants, so finite differences see the
    # derivative the rule defines (it treats the iterated vectors as constants)
    sn = paddle.nn.SpectralNorm([3, 4], dim=0, power_iters=0)
    sn.weight_u.set_value(np.linspace(0.5, 1.0, 3))
    sn.weight_v.set_value(np.linspace(1.0, 0.2, 4))
    assert norm._spectral_k.residuals
    return sn(w)


@pytest.mark.parametrize("case", list(CASES))
def test_array_and_tensor_paths_agree(case):
    check_paths_agree(*CASES[case], rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("case", list(CASES))
def test_second_derivative_matches_finite_differences(case):
    check_second_derivative(*CASES[case])


@pytest.mark.parametrize("dt", ["float16", "float32"])
def test_softmax_low_precision_gradient_reads_the_float32_output(dt):
    xv = np.array([[0.1, 2.0, -1.0, 0.7]])
    x = paddle.to_tensor(xv.astype(dt), stop_gradient=False)
    g = np.array([[1.0, -2.0, 0.5, 3.0]])
    y = F.softmax(x, axis=1)
    y.backward(paddle.to_tensor(g.astype(dt)))
    p = np.exp(xv - xv.max()) / np.exp(xv - xv.max()).sum()
    want = p * (g - (g * p).sum())
    assert x.grad.dtype == x.dtype
    np.testing.assert_allclose(x.grad.numpy().astype(np.float64), want,
                               rtol=2e-3 if dt == "float16" else 1e-6, atol=1e-3)


def test_cast_complex_to_real_gradient_is_the_real_part():
    z = paddle.to_tensor(np.array([1 + 2j, 3 - 1j]), stop_gradient=False)
    y = paddle.cast(z, "float64")
    np.testing.assert_allclose(y.numpy(), [1.0, 3.0])
    (y * paddle.to_tensor([2.0, 5.0])).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), [2.0, 5.0])


def test_logcumsumexp_derivatives_stay_finite_far_apart():
    # terms 1000 apart: a shifted-exponential form overflows (inf * 0 = NaN); the log-space
    # adjoint kernels give the exact first, second and third derivatives
    xv = np.array([-1000.0, 0.0, 1000.0, 999.0])
    x = paddle.to_tensor(xv, stop_gradient=False)
    w = paddle.to_tensor(np.array([1.0, -2.0, 0.5, 3.0]))
    y = (paddle.logcumsumexp(x) * w).sum()
    (g1,) = paddle.grad(y, x, create_graph=True)
    (g2,) = paddle.grad((g1 * w).sum(), x, create_graph=True)
    (g3,) = paddle.grad(g2.sum(), x)
    for g in (g1, g2, g3):
        assert np.isfinite(g.numpy()).all()
    # closed form: p_jk = softmax over k <= j of x; dy/dx_k = sum_{j>=k} w_j p_jk
    p = np.zeros((4, 4))
    for j in range(4):
        e = np.exp(xv[:j + 1] - xv[:j + 1].max())
        p[j, :j + 1] = e / e.sum()
    np.testing.assert_allclose(g1.numpy(), w.numpy() @ p, atol=1e-12)


def test_logcumsumexp_third_derivative_matches_finite_differences():
    xv = np.array([[0.3, -0.4, 1.2, 0.1]])

    def second(v):  # d/dx sum(grad(sum(lcse(x) * c)) * c2) at v, as an array
        x = paddle.to_tensor(v, stop_gradient=False)
        (g1,) = paddle.grad((paddle.logcumsumexp(x, axis=1) * _C).sum(), x, create_graph=True)
        (g2,) = paddle.grad((g1 * _C2).sum(), x, create_graph=True)
        return x, g2

    x, g2 = second(xv)
    (g3,) = paddle.grad((g2 * _C).sum(), x)
    eps = 1e-6
    num = np.zeros_like(xv)
    for k in range(4):
        p, m = xv.copy(), xv.copy()
        p[0, k] += eps
        m[0, k] -= eps
        num[0, k] = ((second(p)[1].numpy() * _C.numpy()).sum()
                     - (second(m)[1].numpy() * _C.numpy()).sum()) / (2 * eps)
    np.testing.assert_allclose(g3.numpy(), num, rtol=1e-5, atol=1e-7)


_C = paddle.to_tensor(np.array([[1.0, -0.5, 2.0, 0.7]]))
_C2 = paddle.to_tensor(np.array([[0.2, 1.5, -1.0, 0.4]]))
