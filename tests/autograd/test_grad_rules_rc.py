"""One gradient rule per op for reductions, special functions and linear algebra.

For a representative op of each family converted to a single rule (reductions and their
masks, special functions whose derivative is another special function, matmul-family adjoints,
determinant/inverse/solve, norms), the first-order gradient (array path) must equal the
create_graph gradient (Tensor path), and the derivative of that gradient must match central
finite differences of the first-order gradient (float64).
"""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle
from tests.autograd.test_grad_rules import (
    _first,
    central_differences,
    check_paths_agree,
    check_second_derivative,
)

RNG = np.random.default_rng(11)


def _x(shape=(3, 4), lo=0.3, hi=1.7):
    return RNG.uniform(lo, hi, shape)


def _well_conditioned(n=3, batch=()):
    return RNG.uniform(-0.5, 0.5, batch + (n, n)) + 2.0 * np.eye(n)


# name -> (function of the inputs, input arrays)
CASES = {
    # reductions
    "sum (axis, keepdim)": (lambda a: paddle.sum(a * a, axis=1, keepdim=True), [_x()]),
    "mean (all axes)": (lambda a: paddle.mean(a * a), [_x()]),
    "nansum (mask constant)": (lambda a: paddle.nansum(a ** 3, axis=0), [_x()]),
    "nanmean (weights constant)": (lambda a: paddle.nanmean(a ** 3, axis=1), [_x()]),
    "prod (tensor form prod / x)": (lambda a: paddle.prod(a, axis=1), [_x()]),
    "max (selecting mask)": (lambda a: paddle.max(a * a, axis=0), [_x()]),
    "amax (shared mask)": (lambda a: paddle.amax(a ** 3, axis=[0, 1]), [_x()]),
    "logsumexp (reads out)": (lambda a: paddle.logsumexp(a, axis=1), [_x(lo=-1, hi=1)]),
    "var (fused)": (lambda a: paddle.var(a, axis=1), [_x()]),
    "std (fused)": (lambda a: paddle.std(a, axis=0, unbiased=False), [_x()]),
    # special functions
    "lgamma (digamma kernel)": (paddle.lgamma, [_x()]),
    "digamma (polygamma kernel)": (paddle.digamma, [_x()]),
    "polygamma (attribute n)": (lambda a: paddle.polygamma(a, 2), [_x()]),
    "erf": (paddle.erf, [_x(lo=-1.5, hi=1.5)]),
    "erfinv (reads out)": (paddle.erfinv, [_x(lo=-0.8, hi=0.8)]),
    "i0 (i1 kernel)": (paddle.i0, [_x(lo=-2, hi=2)]),
    "i0e (scaled, sign constant)": (paddle.i0e, [_x(lo=-2, hi=2)]),
    "i1 (private Bessel kernel)": (paddle.i1, [_x(lo=-2, hi=2)]),
    "i1e": (paddle.i1e, [_x(lo=-2, hi=2)]),
    "multigammaln (attribute p)": (lambda a: paddle.multigammaln(a, 3), [_x(lo=1.5, hi=3)]),
    # linear algebra
    "matmul (transposes, batch broadcast)": (
        lambda a, b: paddle.matmul(a, b, transpose_x=True, transpose_y=True),
        [_x((2, 3, 2)), _x((4, 3))]),
    "matmul (plain)": (lambda a, b: paddle.matmul(a * a, b), [_x((2, 3)), _x((3, 2))]),
    "dot (rows)": (lambda a, b: paddle.dot(a * a, b), [_x((2, 3)), _x((2, 3))]),
    "kron": (lambda a, b: paddle.kron(a * a, b), [_x((2, 2)), _x((2, 3))]),
    "cross": (lambda a, b: paddle.cross(a * a, b, axis=1), [_x((2, 3)), _x((2, 3))]),
    "einsum (three operands)": (lambda a, b, c: paddle.einsum("ij,jk,k->i", a, b, c),
                                [_x((2, 3)), _x((3, 2)), _x((2,))]),
    "inverse (reads out)": (paddle.linalg.inv, [_well_conditioned()]),
    "det (inverse kernel)": (paddle.linalg.det, [_well_conditioned(batch=(2,))]),
    "slogdet (second output)": (lambda a: paddle.linalg.slogdet(a)[1], [_well_conditioned()]),
    "solve (matrix rhs, batch broadcast)": (paddle.linalg.solve,
                                            [_well_conditioned(batch=(2,)), _x((3, 2))]),
    "solve (vector rhs)": (paddle.linalg.solve, [_well_conditioned(), _x((3,))]),
    "norm p=2": (lambda a: paddle.linalg.norm(a, p=2, axis=1), [_x(lo=-1, hi=1)]),
    "norm p=3": (lambda a: paddle.linalg.norm(a, p=3, axis=0), [_x(lo=-1, hi=1)]),
    "cdist (p=2, batch)": (lambda a, b: paddle.cdist(a, b), [_x((2, 3, 2)), _x((2, 2, 2))]),
    "cdist (p=1.5)": (lambda a, b: paddle.cdist(a, b, p=1.5), [_x((3, 2)), _x((2, 2))]),
    "cond p=1 (matrix abs norm)": (lambda a: paddle.linalg.cond(a, p=1), [_well_conditioned()]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_array_and_tensor_paths_agree(case):
    check_paths_agree(*CASES[case], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", list(CASES))
def test_second_derivative_matches_finite_differences(case):
    check_second_derivative(*CASES[case])


def test_prod_gradient_at_a_zero_is_the_product_of_the_others():
    # the array path keeps the zero-safe cumulative-product form
    x = paddle.to_tensor(np.array([[2.0, 0.0, 3.0], [1.0, 4.0, 5.0]]), stop_gradient=False)
    (g,) = paddle.grad([paddle.prod(x, axis=1).sum()], [x])
    np.testing.assert_array_equal(g.numpy(), [[0.0, 6.0, 0.0], [20.0, 5.0, 4.0]])


def test_det_gradient_of_a_singular_matrix_is_the_adjugate():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    x = paddle.to_tensor(a, stop_gradient=False)
    (g,) = paddle.grad([paddle.linalg.det(x)], [x])
    # adj(A)^T of [[a, b], [c, d]] is [[d, -c], [-b, a]]
    np.testing.assert_allclose(g.numpy(), [[4.0, -2.0], [-2.0, 1.0]], atol=1e-12)


def test_scaled_bessel_gradients_vanish_at_infinity():
    x = paddle.to_tensor(np.array([-np.inf, 1.0, np.inf]), stop_gradient=False)
    for f in (paddle.i0e, paddle.i1e):
        (g,) = paddle.grad([f(x).sum()], [x])
        assert g.numpy()[0] == 0 and g.numpy()[2] == 0 and np.isfinite(g.numpy()[1])


def test_converted_kernels_declare_one_rule():
    from paddle_hl.tensor import linalg, special, stat

    for k in (stat._sum_kernel, stat._mean_kernel, stat._lse_kernel, special._lgamma_k,
              special._bessel_k, linalg._matmul_kernel, linalg._det_kernel,
              linalg._pnorm_kernel, linalg._solve_kernel):
        assert callable(k.grad) and k.hi.rule is k.grad, k.op_name


@pytest.mark.parametrize("case", list(CASES))
def test_first_derivative_matches_finite_differences(case):
    # the rule itself is right (the checks above compare its two paths and its derivative)
    fn, arrays = CASES[case]
    _, gs = _first(fn, arrays, False)

    def value(arrs):
        y = fn(*[paddle.to_tensor(a) for a in arrs])
        return float((y.numpy() * np.linspace(0.5, 1.5, y.size).reshape(y.shape)).sum())

    for g, num in zip(gs, central_differences(value, arrays)):
        np.testing.assert_allclose(g.numpy(), num, rtol=1e-5, atol=1e-6)
