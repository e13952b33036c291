"""One gradient rule per op, for the complex helpers, attribute ops, cumulative ops, linear
adjoint pairs (diff, trace, take_along_axis/scatter_add) and the FFT kernels.

As in test_grad_rules.py: for a representative op of every family, the first-order gradient
(array path) must equal the create_graph gradient (Tensor path), and the derivative of that
gradient must match central finite differences of the first-order gradient (float64).
"""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.framework.op import apply
from paddle_hl.tensor import math as _math

from .test_grad_rules import _x, check_paths_agree, check_second_derivative


def _z(a, b):
    return paddle.complex(a, b)


_IDX = paddle.to_tensor(np.array([[1], [0], [1]], dtype=np.int64))
_TAKE = np.array([[2, 0, 0, 3], [1, 1, 2, 0], [3, 2, 1, 0]], dtype=np.int64)

CASES = {
    "sgn (complex, reads out)": (
        lambda a, b: paddle.real(paddle.sgn(_z(a, b)) * _z(b, a * a)), [_x(), _x()]),
    "sgn (real: zero gradient)": (lambda a: paddle.sgn(a - 1) * a * a, [_x()]),
    "angle (complex)": (lambda a, b: paddle.angle(_z(a - 1, b)) * a, [_x(), _x()]),
    "real/imag (linear embeddings)": (
        lambda a, b: paddle.real(_z(a, b) * _z(a, b)) + paddle.imag(_z(a, b) * _z(b, a * a)),
        [_x(), _x()]),
    "as_complex/as_real (adjoint pair)": (
        lambda a: paddle.as_real(paddle.as_complex(a) * paddle.as_complex(a * a)),
        [_x((3, 2))]),
    "logit (eps mask)": (lambda a: paddle.logit(a * 0.5, eps=0.2) * a, [_x()]),
    "clip (bounds mask)": (lambda a: paddle.clip(a * a, 0.5, 2.0) * a, [_x()]),
    "frexp (two outputs)": (lambda a: paddle.frexp(a * 3)[0] * a, [_x()]),
    "cumprod (reads out)": (lambda a: paddle.cumprod(a, dim=1) * a, [_x()]),
    "cummax (index output)": (lambda a: paddle.cummax(a * a, axis=1)[0] * a, [_x()]),
    "cummin (index output)": (lambda a: paddle.cummin(a * a, axis=0)[0] * a, [_x()]),
    "logcumsumexp (fused)": (lambda a: paddle.logcumsumexp(a * a, axis=1), [_x()]),
    "diff (adjoint kernel)": (lambda a: paddle.diff(a * a, n=2, axis=1) ** 2, [_x()]),
    "trace (adjoint kernel)": (lambda a: paddle.trace(a * a) * paddle.trace(a, offset=1),
                               [_x((3, 3))]),
    "take_along_axis kernel (adjoint scatter)": (
        lambda a: apply(_math._gather_along, a * a, idx=_TAKE, axis=1) * a, [_x()]),
    "addmm (three inputs, broadcast)": (
        lambda i, x, y: paddle.addmm(i * i, x, y * x[0:1, :].reshape([4, 1]), beta=0.5,
                                     alpha=2.0),
        [_x((3, 1)), _x((3, 4)), _x((4, 3))]),
    "multiplex (index attribute)": (
        lambda a, b: paddle.multiplex([a * a, a * b], _IDX), [_x(), _x()]),
    "renorm p=inf (row max)": (
        lambda a: paddle.renorm(a * 2, float("inf"), 0, 1.5) * a, [_x()]),
    "rfft (plan through M.op)": (
        lambda a: paddle.real(paddle.fft.rfft(a * a, axis=1) * paddle.fft.rfft(a, axis=1)),
        [_x()]),
    "irfft (hermitian weight)": (lambda a, b: paddle.fft.irfft(_z(a, b * a), n=6) ** 2,
                                 [_x(), _x()]),
    "fft2 / fftshift (complex, roll)": (
        lambda a, b: paddle.imag(paddle.fft.fft2(paddle.fft.fftshift(_z(a, b)) * _z(a, a),
                                                 norm="ortho")), [_x(), _x()]),
    "hfft (conjugate half spectrum)": (
        lambda a, b: paddle.fft.hfft(_z(a * b, b), n=5, norm="forward") * 1.5, [_x(), _x()]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_array_and_tensor_paths_agree(case):
    check_paths_agree(*CASES[case], rtol=1e-11, atol=1e-11, constant_grad=True)


@pytest.mark.parametrize("case", list(CASES))
def test_second_derivative_matches_finite_differences(case):
    check_second_derivative(*CASES[case])


_LINEAR = {
    "diff": lambda t: paddle.diff(t, axis=1),
    "trace": lambda t: paddle.trace(t),
    "rfft-irfft": lambda t: paddle.fft.irfft(paddle.fft.rfft(t, axis=1), n=4, axis=1),
}


@pytest.mark.parametrize("name", list(_LINEAR))
def test_third_derivative_through_adjoint_kernels(name):
    # for a linear L, d3/da3 of sum(c * L(a**3)) is 6 * L^T(c): the third-order gradient runs the
    # rule of L's adjoint kernel, whose own gradient is L again
    lin = _LINEAR[name]
    a_np = _x((4, 4))
    a = paddle.to_tensor(a_np, stop_gradient=False)
    y = lin(a * a * a)
    c = paddle.to_tensor(np.linspace(0.5, 1.5, y.size).reshape(y.shape))
    (g1,) = paddle.grad([(y * c).sum()], [a], create_graph=True)
    (g2,) = paddle.grad([g1.sum()], [a], create_graph=True)
    (g3,) = paddle.grad([g2.sum()], [a])
    u = paddle.to_tensor(np.zeros_like(a_np), stop_gradient=False)
    (adj,) = paddle.grad([(lin(u) * c).sum()], [u])
    np.testing.assert_allclose(g3.numpy(), 6 * adj.numpy(), rtol=1e-10, atol=1e-10)
