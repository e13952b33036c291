"""One gradient rule per op for the activations, dropout and the normal distribution's kernels.

For a representative op of each family (elementwise rule reading the input, rule reading the
output, masked/selecting rule, rule with attributes, split/concat rule, gather rule, two-input
rule with a broadcast weight, rules over constant random draws, fused-kernel rule of a
distribution), the first-order gradient (array path) must equal the create_graph gradient
(Tensor path), and the derivative of that gradient must match central finite differences of the
first-order gradient (float64). Random ops reseed before every call so that each evaluation
sees the same draw.
"""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle
import paddle_hl.nn.functional as F
from tests.autograd.test_grad_rules import _x, check_paths_agree, check_second_derivative


def _seeded(fn):
    def run(*xs):
        paddle.seed(11)
        return fn(*xs)

    return run


def _normal_log_prob(v, loc, scale):
    return paddle.distribution.Normal(loc, scale).log_prob(v)


def _normal_rsample(loc, scale):
    return paddle.distribution.Normal(loc, scale).rsample([2]) ** 2


# name -> (function of the inputs, input arrays)
CASES = {
    "relu (reads out, times input)": (lambda a: F.relu(a) * a, [_x(lo=-2, hi=2)]),
    "leaky_relu (attribute)": (lambda a: F.leaky_relu(a, 0.2) * a, [_x(lo=-2, hi=2)]),
    "elu (attribute, exp branch)": (lambda a: F.elu(a, 0.7), [_x(lo=-2, hi=2)]),
    "celu": (lambda a: F.celu(a, 1.3), [_x(lo=-2, hi=2)]),
    "selu (reads out)": (F.selu, [_x(lo=-2, hi=2)]),
    "gelu (erf)": (F.gelu, [_x(lo=-2, hi=2)]),
    "gelu (tanh approximation)": (lambda a: F.gelu(a, approximate=True), [_x(lo=-2, hi=2)]),
    "hardswish (selecting rule)": (F.hardswish, [_x(lo=-3.5, hi=3.5)]),
    "hardsigmoid (reads out, selecting)": (lambda a: F.hardsigmoid(a) * a,
                                           [_x(lo=-4, hi=4)]),
    "hardtanh (selecting)": (lambda a: F.hardtanh(a, -0.5, 0.8) * a, [_x(lo=-2, hi=2)]),
    "softshrink (masked)": (lambda a: F.softshrink(a, 0.3) ** 2, [_x(lo=-2, hi=2)]),
    "log_sigmoid": (F.log_sigmoid, [_x(lo=-3, hi=3)]),
    "softplus (attributes)": (lambda a: F.softplus(a, beta=2.0, threshold=3.0),
                              [_x(lo=-2, hi=2)]),
    "softsign": (F.softsign, [_x(lo=-2, hi=2)]),
    "silu": (F.silu, [_x(lo=-3, hi=3)]),
    "mish": (F.mish, [_x(lo=-3, hi=3)]),
    "tanhshrink": (F.tanhshrink, [_x(lo=-2, hi=2)]),
    "glu (split and concat)": (lambda a: F.glu(a, axis=-1), [_x((3, 4), lo=-2, hi=2)]),
    "maxout (gather)": (lambda a: F.maxout(a, 2, axis=1) ** 2, [_x((2, 4, 2, 1), lo=-2, hi=2)]),
    "prelu (two inputs, per-channel weight)": (
        lambda a, w: F.prelu(a, w) * a, [_x((2, 3, 2), lo=-2, hi=2), _x((3,), lo=0.1, hi=0.5)]),
    "rrelu (constant random slopes)": (_seeded(lambda a: F.rrelu(a) * a), [_x(lo=-2, hi=2)]),
    "gumbel_softmax (noise input)": (_seeded(lambda a: F.gumbel_softmax(a, 0.7)),
                                     [_x(lo=-1, hi=1)]),
    "dropout (constant mask)": (_seeded(lambda a: F.dropout(a * a, 0.4)), [_x()]),
    "normal log_prob (three inputs, broadcast)": (
        _normal_log_prob, [_x((3, 4)), _x((4,), lo=-0.5, hi=0.5), _x((4,), lo=0.5, hi=1.5)]),
    "normal rsample (noise input)": (_seeded(_normal_rsample), [_x((4,)), _x((4,))]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_array_and_tensor_paths_agree(case):
    check_paths_agree(*CASES[case], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", list(CASES))
def test_second_derivative_matches_finite_differences(case):
    check_second_derivative(*CASES[case])


@pytest.mark.parametrize("name", ["relu", "selu", "gelu", "hardsigmoid", "mish", "glu"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_low_precision_gradient_is_the_float32_rule_rounded_once(name, dtype):
    # the array rule widens float16/bfloat16 to float32 and rounds the gradient back once
    fn = getattr(F, name)
    x32 = np.linspace(-3, 3, 24, dtype=np.float32).reshape(4, 6)
    x = paddle.to_tensor(x32).astype(dtype)
    x.stop_gradient = False
    (g,) = paddle.grad([fn(x).astype("float32").sum()], [x])
    assert g.dtype == x.dtype
    xw = paddle.to_tensor(x.astype("float32").numpy(), stop_gradient=False)
    (gw,) = paddle.grad([fn(xw).sum()], [xw])
    tol = 1e-2 if dtype == "float16" else 2e-2
    np.testing.assert_allclose(g.astype("float32").numpy(), gw.numpy(), rtol=tol, atol=tol)


def test_activation_kernels_declare_one_rule():
    from paddle_hl.nn.functional import activation as act

    for k in (act._relu_k, act._gelu_k, act._mish_k, act._glu_k, act._maxout_k, act._prelu_k,
              act._rrelu_k, act._gumbel_k):
        assert callable(k.grad) and k.hi.rule is k.grad, k.op_name
