"""One gradient rule per op for the shape, gather/scatter, creation and search kernels.

These kernels are linear in their differentiable inputs, so each rule is an adjoint op written
once (``M.op(kernel, ...)`` or M's functions). For a representative op of each family the
first-order gradient (array path) must equal the create_graph gradient (Tensor path), and the
derivative of that gradient must match central finite differences. Every op is composed with a
product so that its second derivative is not zero.
"""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.framework.op import GRAD
from paddle_hl.tensor import creation, manipulation, search
from tests.autograd.test_grad_rules import _x, check_paths_agree, check_second_derivative


def _mask(shape, seed=3):
    return paddle.to_tensor(np.random.default_rng(seed).uniform(size=shape) > 0.5)


CASES = {
    "reshape": (lambda a: paddle.reshape(a * a, [4, 3]) * paddle.reshape(a, [4, 3]), [_x()]),
    "transpose": (lambda a, b: paddle.transpose(a * b, [1, 2, 0])
                  * paddle.transpose(a, [1, 2, 0]), [_x((2, 3, 4)), _x((2, 3, 4))]),
    "flip": (lambda a: paddle.flip(a * a, [0, 1]) * a, [_x()]),
    "roll (axes)": (lambda a: paddle.roll(a * a, [1, -2], [0, 1]) * a, [_x()]),
    "roll (flattened)": (lambda a: paddle.roll(a * a, 5) * a, [_x()]),
    "expand": (lambda a, b: paddle.expand(a * b, [2, 3, 4]) * b, [_x((3, 1)), _x((3, 4))]),
    "tile": (lambda a: paddle.tile(a * a, [2, 1]) * paddle.concat([a, a], 0), [_x()]),
    "concat (variadic)": (lambda a, b: paddle.concat([a * b, b * b], axis=1)
                          * paddle.concat([b, a], axis=1), [_x(), _x()]),
    "stack": (lambda a, b: paddle.stack([a * b, a], axis=1) * paddle.stack([b, b], axis=1),
              [_x(), _x()]),
    "split (multi-output)": (lambda a: paddle.split(a * a, [1, 3], axis=1)[1] * a[:, 1:],
                             [_x()]),
    "unbind (multi-output, one used)": (lambda a: paddle.unbind(a * a, 0)[2] * a[0], [_x()]),
    "gather (advanced index, repeats)": (lambda a: (a * a)[paddle.to_tensor([0, 2, 0])] * a[:3],
                                         [_x()]),
    "slice (basic index)": (lambda a: (a * a)[1:, ::2] * a[:2, 1::2], [_x()]),
    "index_put / scatter": (lambda a, v: paddle.scatter(a * a, paddle.to_tensor([1, 0]), v * a[:2])
                            * a, [_x(), _x((2, 4))]),
    "setitem broadcast value": (lambda a, v: _setitem(a * a, v * v) * a, [_x(), _x((4,))]),
    "unfold (overlapping windows)": (lambda a: paddle.unfold(a * a, 1, 2, 1) * 2.0, [_x()]),
    "as_strided (overlaps)": (lambda a: paddle.as_strided(a * a, [3, 3], [1, 1]) ** 2,
                              [_x()]),
    "masked_fill (tensor value)": (lambda a, v: paddle.masked_fill(a * a, _mask((3, 4)), v * v)
                                   * a, [_x(), _x(())]),
    "take_along_axis": (lambda a: paddle.take_along_axis(
        a * a, paddle.to_tensor([[2, 0, 1, 0]]), 0) * a[:1], [_x()]),
    "sort (gather along an axis)": (lambda a: paddle.sort(a * a, axis=1) * a, [_x()]),
    "where": (lambda a, b: paddle.where(_mask((3, 4)), a * b, b * b) * a, [_x(), _x()]),
    "tril / triu": (lambda a: paddle.tril(a * a, -1) * paddle.triu(a, 1) + paddle.triu(a * a)
                    * a, [_x((4, 4))]),
    "diagonal / diag_embed": (lambda a: paddle.diag(paddle.diagonal(a * a) * a[0, :3]) * a[:3, :3],
                              [_x()]),
    "assign / clone": (lambda a: paddle.assign(a * a) * paddle.clone(a), [_x()]),
    "complex / real / imag": (lambda a, b: paddle.real(paddle.complex(a * b, b) ** 2)
                              + paddle.imag(paddle.complex(a, a * a) ** 2), [_x(), _x()]),
    "polar": (lambda r, t: paddle.real(paddle.polar(r, t) ** 2), [_x(), _x()]),
    "vander": (lambda a: paddle.vander(a, 4) * a.unsqueeze(1), [_x((3,))]),
}


def _setitem(x, v):
    y = x.clone()
    y[1] = v
    return y


@pytest.mark.parametrize("case", list(CASES))
def test_array_and_tensor_paths_agree(case):
    check_paths_agree(*CASES[case], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", list(CASES))
def test_second_derivative_matches_finite_differences(case):
    check_second_derivative(*CASES[case])


KERNELS = [
    manipulation._gather_kernel, manipulation._scatter_grad_kernel, manipulation._put_kernel,
    manipulation._reshape_kernel, manipulation._as_strided_kernel,
    manipulation._transpose_kernel, manipulation._flip_kernel, manipulation._roll_kernel,
    manipulation._expand_kernel, manipulation._tile_kernel, manipulation._concat_kernel,
    manipulation._stack_kernel, manipulation._split_kernel, manipulation._unbind_kernel,
    manipulation._unfold_kernel, manipulation._masked_fill_kernel,
    creation._identity_kernel, creation._clone_kernel, creation._diag_take, creation._diag_put,
    creation._tri_kernel, creation._complex_kernel, creation._real_kernel, creation._imag_kernel,
    creation._polar_kernel, creation._vander_kernel, creation._fill_kernel,
    search._take_along, search._scatter_along, search._where_kernel,
    search._where_inplace_kernel,
]


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.__name__)
def test_kernels_declare_one_rule(kernel):
    # one rule: the higher-order rule is derived from it, never hand-written next to it
    assert callable(kernel.grad)
    assert kernel.hi.rule is kernel.grad


def test_named_kernel_keeps_the_rule():
    k = manipulation._named(manipulation._gather_kernel, "index_select")
    assert k.op_name == "index_select"
    assert k.grad is manipulation._gather_kernel.grad
    x = np.arange(6.0).reshape(2, 3)
    out, bw = k(x, idx=(np.array([1, 1]),))
    assert bw is GRAD
    np.testing.assert_array_equal(out, x[[1, 1]])


def test_gather_gradient_adds_repeats_on_both_paths():
    x = paddle.to_tensor(_x(), stop_gradient=False)
    idx = paddle.to_tensor([1, 1, 2])
    for create_graph in (False, True):
        (g,) = paddle.grad([paddle.index_select(x, idx, 0).sum()], [x],
                           create_graph=create_graph)
        np.testing.assert_array_equal(g.numpy()[:, 0], [0.0, 2.0, 1.0])


def test_fill_gradient_is_zero():
    x = paddle.to_tensor(_x(), stop_gradient=False)
    y = x * 1.0
    y.fill_(3.0)
    (g,) = paddle.grad([(y * x).sum()], [x])
    np.testing.assert_allclose(g.numpy(), np.full((3, 4), 3.0))
