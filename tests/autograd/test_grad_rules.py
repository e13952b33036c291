"""One gradient rule per op: the rule that gives first-order gradients on raw arrays also gives
differentiable gradients under create_graph, and its second derivatives are right.

For a representative op of every rule kind (unary derivative, unary reading its output, binary
rule, broadcasting binary, constant backward, masked/selecting rule, rule with keyword
attributes, piecewise-constant op), the first-order gradient (array path) must equal the
create_graph gradient (Tensor path), and the derivative of that gradient must match central
finite differences of the first-order gradient.
"""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.framework.engine import NoHigherOrderRuleError
from paddle_hl.framework.op import GRAD, apply, op

RNG = np.random.default_rng(7)


def _x(shape=(3, 4), lo=0.3, hi=1.7):
    return RNG.uniform(lo, hi, shape)


# name -> (function of the inputs, input arrays)
CASES = {
    "sin (unary derivative)": (paddle.sin, [_x()]),
    "exp (unary reading out)": (paddle.exp, [_x()]),
    "sqrt (unary reading out)": (paddle.sqrt, [_x()]),
    "sigmoid (stable helper)": (paddle.nn.functional.sigmoid if hasattr(
        paddle.nn.functional, "sigmoid") else paddle.sigmoid, [_x(lo=-2, hi=2)]),
    "multiply (binary)": (paddle.multiply, [_x(), _x()]),
    "divide (binary, broadcast)": (paddle.divide, [_x(), _x((4,))]),
    "pow (two tensor inputs)": (paddle.pow, [_x(), _x()]),
    "add (constant backward, broadcast)": (lambda a, b: paddle.add(a, b) * a, [_x(), _x((1, 4))]),
    "subtract (constant backward)": (lambda a, b: paddle.subtract(a, b) ** 2, [_x(), _x()]),
    "maximum (selecting rule)": (lambda a, b: paddle.maximum(a, b) * a * b,
                                 [_x(), _x()]),
    "atan2 (binary)": (paddle.atan2, [_x(), _x()]),
    "hypot (binary reading out)": (paddle.hypot, [_x(), _x()]),
    "logaddexp (binary, stable sigmoid)": (paddle.logaddexp, [_x(lo=-2, hi=2), _x(lo=-2, hi=2)]),
    "nan_to_num (keyword attributes)": (lambda a: paddle.nan_to_num(a * a, posinf=5.0),
                                        [_x()]),
    "floor (zero gradient)": (lambda a: paddle.floor(a * 3) * a * a, [_x()]),
    "abs (sign rule)": (lambda a: paddle.abs(a) * a, [_x(lo=-2, hi=2)]),
    "cumsum (linear: the adjoint is a kernel)": (lambda a: paddle.cumsum(a * a, axis=1),
                                                 [_x()]),
    "add_n (variadic inputs)": (lambda a, b: paddle.add_n([a * b, a, b * b]), [_x(), _x()]),
    "lerp (three inputs, broadcast)": (paddle.lerp, [_x(), _x(), _x((4,), lo=0.2, hi=0.8)]),
    "stanh (keyword attributes, no out)": (lambda a: paddle.stanh(a, 0.7, 1.3), [_x()]),
    "scale (attributes, constant factor)": (lambda a: paddle.scale(a * a, 2.0, 0.5), [_x()]),
}


def _first(fn, arrays, create_graph):
    xs = [paddle.to_tensor(a, stop_gradient=False) for a in arrays]
    y = fn(*xs)
    w = paddle.to_tensor(np.linspace(0.5, 1.5, y.size).reshape(y.shape))
    gs = paddle.grad([(y * w).sum()], xs, create_graph=create_graph)
    return xs, gs


def check_paths_agree(fn, arrays, rtol=1e-12, atol=1e-12, constant_grad=False):
    """The first-order gradient on the array path equals the create_graph one on Tensors, and
    the latter is itself differentiable (unless the op's gradient is a constant)."""
    _, g_arr = _first(fn, arrays, False)
    _, g_ten = _first(fn, arrays, True)
    for a, t in zip(g_arr, g_ten):
        assert not t.stop_gradient or constant_grad
        np.testing.assert_allclose(a.numpy(), t.numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("case", list(CASES))
def test_array_and_tensor_paths_agree(case):
    check_paths_agree(*CASES[case], constant_grad=case.startswith("floor"))


def central_differences(value, arrays, eps=1e-6):
    """Central-difference gradients of the scalar ``value(arrays)``, one array per input."""
    out = []
    for j, a in enumerate(arrays):
        num = np.zeros(a.shape)
        for k in np.ndindex(a.shape):
            pl = [b.copy() for b in arrays]
            mi = [b.copy() for b in arrays]
            pl[j][k] += eps
            mi[j][k] -= eps
            num[k] = (value(pl) - value(mi)) / (2 * eps)
        out.append(num)
    return out


def check_second_derivative(fn, arrays, rtol=1e-5, atol=1e-6):
    """The create_graph gradient of ``sum(v * grad)`` against central differences of the
    first-order (array path) gradient, for every input of ``fn``."""
    xs, gs = _first(fn, arrays, True)
    vs = [np.linspace(-1, 1, a.size).reshape(a.shape) for a in arrays]
    s = sum((g * paddle.to_tensor(v)).sum() for g, v in zip(gs, vs))
    h2 = paddle.grad([s], xs, allow_unused=True)

    def weighted_grad(arrs):  # sum(v_i * g_i) of the first-order gradient at arrs
        return sum((g.numpy() * v).sum() for g, v in zip(_first(fn, arrs, False)[1], vs))

    for j, num in enumerate(central_differences(weighted_grad, arrays)):
        a = arrays[j]
        got = np.zeros(a.shape) if h2[j] is None else h2[j].numpy()
        np.testing.assert_allclose(got, num, rtol=rtol, atol=atol)


@pytest.mark.parametrize("case", list(CASES))
def test_second_derivative_matches_finite_differences(case):
    check_second_derivative(*CASES[case])


def test_decorator_sets_attributes_and_returns_the_kernel():
    def rule(M, x, out, g):
        return (g * 3,)

    def kernel(x):
        return x * 3, GRAD

    k = op("triple", saves=(), grad=rule)(kernel)
    assert k is kernel
    assert k.op_name == "triple" and k.saves == () and k.grad is rule and k.hi is not None
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    y = apply(k, x)
    (g,) = paddle.grad([y.sum()], [x], create_graph=True)
    np.testing.assert_allclose(g.numpy(), [3.0, 3.0])


def test_rule_and_fused_backward_are_exclusive():
    with pytest.raises(ValueError, match="once"):
        op("bad", grad=lambda M, x, out, g: None, hi=lambda i, g: None)


def test_op_without_higher_order_rule_still_refuses_create_graph():
    @op("plain_twice")
    def kernel(x):
        return x * 2, lambda g: (g * 2,)

    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    y = apply(kernel, x)
    with pytest.raises(NoHigherOrderRuleError, match="plain_twice"):
        paddle.grad([(y * y).sum()], [x], create_graph=True)


def test_rule_backward_under_saved_tensors_hooks():
    packed = []

    def pack(t):
        packed.append(t)
        return t.numpy().copy()

    def unpack(a):
        return paddle.to_tensor(a)

    x = paddle.to_tensor([0.5, 1.0, 2.0], stop_gradient=False)
    with paddle.autograd.saved_tensors_hooks(pack, unpack):
        y = paddle.sin(x) * paddle.exp(x)
    y.sum().backward()
    xa = np.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(x.grad.numpy(), np.cos(xa) * np.exp(xa) + np.sin(xa) * np.exp(xa),
                               rtol=1e-6)
    assert packed
