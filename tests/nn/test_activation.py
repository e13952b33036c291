"""Activations: paddle_hl/nn/functional/activation.py and paddle_hl/nn/layer/activation.py."""

import numpy as np
import pytest

import paddle_hl as paddle
import paddle_hl.nn as nn
import paddle_hl.nn.functional as F
from tests.op_check import check_parity, gradcheck

rng = np.random.default_rng(0)


def _away_from_kinks(shape, dtype="float64", lo=-4.0, hi=4.0):
    """Random values that keep clear of the kinks at 0, +-0.5, +-1, +-3, 6 (finite
    differences straddling a kink would be meaningless)."""
    x = rng.uniform(lo, hi, size=shape)
    kinks = np.array([0.0, 0.5, -0.5, 1.0, -1.0, 3.0, -3.0, 6.0])
    d = x[..., None] - kinks
    near = np.abs(d).min(-1) < 0.05
    x = np.where(near, x + 0.1, x)
    return x.astype(dtype)


# name -> (call with lib, kwargs)
ELEMENTWISE = {
    "relu": {}, "relu6": {}, "leaky_relu": {"negative_slope": 0.2},
    "leaky_relu_neg": {"negative_slope": -0.2}, "elu": {"alpha": 0.7},
    "elu_neg": {"alpha": -0.2}, "celu": {"alpha": 0.5}, "selu": {},
    "gelu": {}, "gelu_tanh": {"approximate": True}, "hardshrink": {"threshold": 0.5},
    "softshrink": {"threshold": 0.5}, "hardsigmoid": {}, "hardsigmoid_s": {"slope": 0.2,
                                                                            "offset": 0.3},
    "hardswish": {}, "hardtanh": {"min": -1.0, "max": 1.0}, "thresholded_relu": {"threshold":
                                                                                  1.0},
    "log_sigmoid": {}, "softplus": {}, "softplus_b": {"beta": 2.0, "threshold": 3.0},
    "softsign": {}, "silu": {}, "swish": {}, "mish": {}, "tanhshrink": {}, "sigmoid": {},
    "tanh": {},
}


def _fname(case):
    base = case
    for suffix in ("_neg", "_tanh", "_s", "_b"):
        if case.endswith(suffix) and case[:-len(suffix)] in dir(F):
            base = case[:-len(suffix)]
    return base


def _call(lib, case, x):
    kw = dict(ELEMENTWISE[case])
    if case == "elu_neg":
        kw = {"alpha": -0.2}
    return getattr(lib.nn.functional, _fname(case))(x, **kw)


# ----------------------------------------------------------------------- elementwise parity
@pytest.mark.parity
@pytest.mark.parametrize("case", sorted(ELEMENTWISE))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(3, 7), (), (0, 3), (2, 3, 4)])
def test_elementwise_parity(case, dtype, shape, pd):
    x = _away_from_kinks(shape, dtype, -8, 8) if shape != (0, 3) else np.zeros(shape, dtype)
    check_parity(lambda P, t: _call(P, case, t), [x], pd)


@pytest.mark.parity
@pytest.mark.parametrize("case", sorted(ELEMENTWISE))
def test_elementwise_special_values(case, pd):
    """Extreme values, exact kinks and NaN give Paddle's outputs (no overflow, NaN kept)."""
    x = np.array([-30.0, -6, -3, -1, -0.5, 0.0, 0.5, 1, 3, 6, 25, 80], "float64")
    check_parity(lambda P, t: _call(P, case, t), [x], pd)
    # far out, Paddle's own gradients degrade (denormals, NaN); ours stay finite
    t = paddle.to_tensor(np.array([-1e4, 1e4]), stop_gradient=False)
    y = _call(paddle, case, t)
    y.sum().backward()
    assert np.isfinite(y.numpy()).all() and np.isfinite(t.grad.numpy()).all()
    xn = np.array([np.nan, 1.0], "float32")
    check_parity(lambda P, t: _call(P, case, t), [xn], pd, grad=False)


@pytest.mark.parametrize("case", sorted(ELEMENTWISE))
def test_elementwise_gradcheck(case):
    gradcheck(lambda t: _call(paddle, case, t), [_away_from_kinks((3, 5))])


@pytest.mark.parametrize("case", sorted(ELEMENTWISE))
def test_elementwise_second_order(case):
    """create_graph=True: d/dx of sum(w * dy/dx) matches finite differences of dy/dx."""
    x0 = _away_from_kinks((4, 3))
    w = rng.standard_normal((4, 3))

    def first_grad(a):
        t = paddle.to_tensor(a, stop_gradient=False)
        (g,) = paddle.grad(_call(paddle, case, t).sum(), t)
        return (g.numpy() * w).sum()

    t = paddle.to_tensor(x0, stop_gradient=False)
    (g,) = paddle.grad(_call(paddle, case, t).sum(), t, create_graph=True)
    (gg,) = paddle.grad((g * paddle.to_tensor(w)).sum(), t, allow_unused=True)
    got = np.zeros_like(x0) if gg is None else gg.numpy()
    eps = 1e-6
    num = np.zeros_like(x0)
    for idx in np.ndindex(x0.shape):
        xp_, xm_ = x0.copy(), x0.copy()
        xp_[idx] += eps
        xm_[idx] -= eps
        num[idx] = (first_grad(xp_) - first_grad(xm_)) / (2 * eps)
    np.testing.assert_allclose(got, num, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("case", ["relu", "gelu", "silu", "elu", "softplus", "mish",
                                  "hardswish", "log_sigmoid"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_low_precision_stays_low(case, dtype):
    x = _away_from_kinks((4, 5), "float32")
    t = paddle.to_tensor(x, dtype=dtype, stop_gradient=False)
    y = _call(paddle, case, t)
    assert y.dtype == t.dtype
    ref = _call(paddle, case, paddle.to_tensor(t.astype("float32").numpy())).numpy()
    tol = 1e-2 if dtype == "float16" else 5e-2
    np.testing.assert_allclose(y.astype("float32").numpy(), ref, rtol=tol, atol=tol)
    y.sum().backward()
    assert t.grad.dtype == t.dtype


@pytest.mark.parametrize("fn", ["relu", "gelu", "softmax", "tanhshrink", "prelu"])
def test_integer_input_refused(fn):
    x = paddle.to_tensor([1, 2, 3])
    with pytest.raises(TypeError, match=fn):
        if fn == "prelu":
            F.prelu(x, paddle.to_tensor([0.25]))
        else:
            getattr(F, fn)(x)


# ----------------------------------------------------------------------- inplace forms
@pytest.mark.parity
@pytest.mark.parametrize("fn,kw", [("relu_", {}), ("elu_", {"alpha": 0.5}),
                                   ("leaky_relu_", {"negative_slope": 0.1}),
                                   ("hardtanh_", {"min": -0.5, "max": 0.7}),
                                   ("thresholded_relu_", {"threshold": 0.3}),
                                   ("softmax_", {"axis": 0}), ("tanh_", {})])
def test_inplace_forms(fn, kw, pd):
    x = rng.standard_normal((3, 4)).astype("float32")
    ours = paddle.to_tensor(x)
    out = getattr(F, fn)(ours, **kw)
    assert out is ours
    theirs = getattr(pd.nn.functional, fn)(pd.to_tensor(x), **kw).numpy()
    np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-6, atol=1e-6)


def test_inplace_on_graph_keeps_gradient():
    x = paddle.to_tensor([-1.0, 0.5, 2.0], stop_gradient=False)
    y = x * 2
    F.relu_(y)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 2.0, 2.0])


def test_inplace_on_leaf_that_needs_grad_raises():
    x = paddle.to_tensor([1.0, -1.0], stop_gradient=False)
    with pytest.raises(ValueError, match="relu_"):
        F.relu_(x)


# ----------------------------------------------------------------------- ELU
def test_b69_elu_negative_alpha_and_nan():
    y = nn.ELU(-0.2)(paddle.to_tensor([-1.0, 6.0]))
    np.testing.assert_allclose(y.numpy(), [0.12642412, 6.0], rtol=1e-6)
    assert np.isnan(F.elu(paddle.to_tensor([np.nan]), alpha=0.5).numpy()[0])
    with pytest.raises(AssertionError, match=r"elu_ only support alpha >= 0, please use elu "
                                             r"instead\."):
        F.elu_(paddle.to_tensor([1.0, -1.0]), alpha=-0.2)


# ----------------------------------------------------------------------- gelu
def test_b77_gelu_formulas():
    from math import erf, pi, sqrt, tanh

    x = np.linspace(-5, 5, 41)
    exact = np.array([0.5 * v * (1 + erf(v / sqrt(2))) for v in x])
    approx = np.array([0.5 * v * (1 + tanh(sqrt(2 / pi) * (v + 0.044715 * v ** 3))) for v in x])
    t = paddle.to_tensor(x)
    np.testing.assert_allclose(F.gelu(t).numpy(), exact, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(F.gelu(t, approximate=True).numpy(), approx, rtol=1e-12,
                               atol=1e-14)


# ----------------------------------------------------------------------- softmax
@pytest.mark.parity
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape,axis", [((3, 5), -1), ((3, 5), 0), ((2, 3, 4), 1),
                                        ((2, 3, 4), -3), ((), 0), ((0, 4), -1), ((4, 0), 0)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_parity(fn, shape, axis, dtype, pd):
    x = np.asarray(rng.standard_normal(shape) * 5).astype(dtype)
    check_parity(lambda P, t: getattr(P.nn.functional, fn)(t, axis=axis), [x], pd)


@pytest.mark.parity
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_dtype_argument(fn, pd):
    x = rng.standard_normal((3, 4)).astype("float32")
    check_parity(lambda P, t: getattr(P.nn.functional, fn)(t, dtype="float64"), [x], pd)
    xi = np.array([[1, 2, 3]], "int64")
    check_parity(lambda P, t: getattr(P.nn.functional, fn)(t, dtype="float32"), [xi], pd,
                 grad=False)


def test_b47_softmax_long_rows_and_non_last_axis():
    x = rng.standard_normal((2, 200001)).astype("float32") * 30
    y = F.softmax(paddle.to_tensor(x)).numpy()
    assert not np.isnan(y).any()
    np.testing.assert_allclose(y.sum(-1), [1.0, 1.0], rtol=1e-4)
    big = np.array([[1000.0, 1000.0], [-1000.0, 0.0]], "float32")
    np.testing.assert_allclose(F.softmax(paddle.to_tensor(big), axis=0).numpy(),
                               [[1.0, 1.0], [0.0, 0.0]], atol=1e-7)
    z = rng.standard_normal((3, 4, 5))
    e = np.exp(z - z.max(1, keepdims=True))
    np.testing.assert_allclose(F.softmax(paddle.to_tensor(z), axis=1).numpy(),
                               e / e.sum(1, keepdims=True), rtol=1e-12)


def test_softmax_inplace_with_dtype_returns_cast_copy():
    x = paddle.to_tensor([[1.0, 2.0]])
    y = F.softmax_(x, dtype="float64")
    assert y.dtype == paddle.float64
    np.testing.assert_allclose(x.numpy(), [[1.0, 2.0]])


def test_softmax_bad_axis():
    with pytest.raises(ValueError, match="softmax"):
        F.softmax(paddle.rand([2, 3]), axis=5)


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_gradcheck(fn):
    gradcheck(lambda t: getattr(F, fn)(t, axis=1), [rng.standard_normal((2, 3, 4))])


# ----------------------------------------------------------------------- glu, maxout
@pytest.mark.parity
@pytest.mark.parametrize("shape,axis", [((3, 4), -1), ((4, 3), 0), ((2, 6, 2), 1)])
def test_b89_glu(shape, axis, pd):
    x = rng.standard_normal(shape).astype("float32")
    check_parity(lambda P, t: P.nn.functional.glu(t, axis), [x], pd)
    a, b = np.split(x, 2, axis=axis)
    np.testing.assert_allclose(F.glu(paddle.to_tensor(x), axis).numpy(),
                               a / (1 + np.exp(-b)), rtol=1e-6)
    gradcheck(lambda t: F.glu(t, axis), [x.astype("float64")])


def test_glu_odd_size_raises():
    with pytest.raises(ValueError, match=r"glu.*\[3, 4\]"):
        F.glu(paddle.rand([3, 4]), axis=0)


@pytest.mark.parity
@pytest.mark.parametrize("shape,groups,axis", [((2, 4, 3, 3), 2, 1), ((2, 3, 3, 6), 3, -1),
                                               ((1, 6, 2, 2), 3, 1), ((2, 3, 2, 4), 2, 3)])
def test_maxout_parity(shape, groups, axis, pd):
    x = rng.standard_normal(shape).astype("float32")
    check_parity(lambda P, t: P.nn.functional.maxout(t, groups, axis), [x], pd)
    check_parity(lambda P, t: P.nn.Maxout(groups, axis)(t), [x], pd)
    gradcheck(lambda t: F.maxout(t, groups, axis), [x.astype("float64")])


@pytest.mark.parametrize("kw,msg", [({"groups": 3}, "divisible"), ({"groups": 2, "axis": 2},
                                                                    "axis"),
                                    ({"groups": 2, "shape": [2, 4, 3]}, "4-D")])
def test_maxout_errors(kw, msg):
    shape = kw.pop("shape", [2, 4, 3, 3])
    with pytest.raises(ValueError, match=msg):
        F.maxout(paddle.rand(shape), **kw)


# ----------------------------------------------------------------------- prelu
@pytest.mark.parity
@pytest.mark.parametrize("shape,wsize,fmt", [((3, 4), 1, "NCHW"), ((3, 4), 4, "NC"),
                                             ((2, 3, 4, 5), 3, "NCHW"),
                                             ((2, 4, 5, 3), 3, "NHWC"), ((2, 5, 3), 3, "NLC"),
                                             ((), 1, "NCHW"), ((2, 3, 2, 2, 2), 3, "NCDHW")])
def test_prelu_parity(shape, wsize, fmt, pd):
    x = rng.standard_normal(shape).astype("float32")
    w = rng.uniform(0.05, 0.5, size=[wsize]).astype("float32")
    check_parity(lambda P, t, ww: P.nn.functional.prelu(t, ww, data_format=fmt), [x, w], pd)


def test_prelu_gradcheck():
    x = _away_from_kinks((2, 3, 4))
    w = rng.uniform(0.1, 0.5, size=[3])
    gradcheck(lambda t, ww: F.prelu(t, ww), [x, w])
    gradcheck(lambda t, ww: F.prelu(t, ww, data_format="NLC"), [_away_from_kinks((2, 4, 3)),
                                                                w])


def test_b78_prelu_nhwc_weight_on_last_dim():
    m = nn.PReLU(3, data_format="NHWC")
    m._weight.set_value(paddle.to_tensor([0.1, 0.2, 0.3]))
    x = -np.ones([2, 2, 2, 3], "float32")
    np.testing.assert_allclose(m(paddle.to_tensor(x)).numpy(),
                               np.broadcast_to([-0.1, -0.2, -0.3], x.shape), rtol=1e-6)


@pytest.mark.parametrize("xs,ws,fmt,msg", [([2, 3, 4], [2], "NCHW", "channels"),
                                           ([2, 3], [1, 2], "NCHW", "0-D or 1-D"),
                                           ([2], [2], "NCHW", "at least 2 dims"),
                                           ([2, 3], [3], "XYZ", "data_format")])
def test_prelu_errors(xs, ws, fmt, msg):
    w = paddle.to_tensor(np.full(ws, 0.1, "float32"))
    with pytest.raises(ValueError, match=msg):
        F.prelu(paddle.rand(xs), w, data_format=fmt)


# ----------------------------------------------------------------------- rrelu, celu...
def test_b90_rrelu_eval_uses_mean_slope():
    x = paddle.to_tensor([-2.0, -1.0, 3.0])
    m = nn.RReLU(0.1, 0.3)
    m.eval()
    np.testing.assert_allclose(m(x).numpy(), [-0.4, -0.2, 3.0], rtol=1e-6)
    np.testing.assert_allclose(F.rrelu(x, 0.1, 0.3, training=False).numpy(),
                               [-0.4, -0.2, 3.0], rtol=1e-6)
    assert "training=False" in repr(m)


def test_rrelu_training_slopes_in_range_and_grad():
    x = paddle.to_tensor(-np.ones([1000]), stop_gradient=False)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    slopes = -y.numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.01
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), slopes)
    pos = F.rrelu(paddle.to_tensor([2.0, 5.0]), training=True)
    np.testing.assert_allclose(pos.numpy(), [2.0, 5.0])


@pytest.mark.parametrize("kw,exc,msg", [
    ({"lower": -0.1}, ValueError, "lower value"), ({"lower": 0.5, "upper": 0.3}, ValueError,
                                                   "greater than lower"),
    ({"upper": 1.3}, ValueError, "no greater than one"), ({"lower": 0, "upper": 1}, TypeError,
                                                          "float type")])
def test_rrelu_errors(kw, exc, msg):
    with pytest.raises(exc, match=msg):
        F.rrelu(paddle.rand([3]), **kw)


def test_b90_softmax2d_and_celu():
    x = rng.standard_normal((2, 3, 4, 4)).astype("float32")
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(nn.Softmax2D()(paddle.to_tensor(x)).numpy(),
                               e / e.sum(1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(nn.Softmax2D()(paddle.to_tensor(x[0])).numpy(),
                               (e / e.sum(1, keepdims=True))[0], rtol=1e-5)
    with pytest.raises(AssertionError, match="3D or 4D"):
        nn.Softmax2D()(paddle.rand([2, 3]))
    z = np.linspace(-3, 3, 13)
    for a in (0.5, 2.0, -1.5):
        ref = np.maximum(0, z) + np.minimum(0, a * (np.exp(z / a) - 1))
        np.testing.assert_allclose(nn.CELU(a)(paddle.to_tensor(z)).numpy(), ref, rtol=1e-6)


@pytest.mark.parametrize("call,exc,msg", [
    (lambda x: F.celu(x, alpha=0), ZeroDivisionError, "alpha cannot be 0"),
    (lambda x: F.selu(x, scale=0.5), ValueError, "scale must be greater than 1.0"),
    (lambda x: F.selu(x, alpha=-0.5), ValueError, "alpha must be no less than zero"),
    (lambda x: F.softshrink(x, threshold=-1), ValueError, "threshold must be no less"),
    (lambda x: F.gumbel_softmax(x, temperature=0), ValueError, "temperature"),
    (lambda x: F.gelu(x, approximate="yes"), TypeError, "approximate"),
    (lambda x: F.leaky_relu(x, "a"), TypeError, "negative_slope"),
])
def test_argument_errors(call, exc, msg):
    with pytest.raises(exc, match=msg):
        call(paddle.rand([2, 3]))


# ----------------------------------------------------------------------- gumbel_softmax
def test_gumbel_softmax_properties():
    x = paddle.to_tensor(rng.standard_normal((5, 6)), stop_gradient=False)
    y = F.gumbel_softmax(x, temperature=0.5)
    np.testing.assert_allclose(y.numpy().sum(-1), np.ones(5), rtol=1e-12)
    h = F.gumbel_softmax(x, hard=True, axis=0)
    assert set(np.unique(h.numpy())) <= {0.0, 1.0}
    np.testing.assert_allclose(h.numpy().sum(0), np.ones(6))
    w = paddle.to_tensor(rng.standard_normal((5, 6)))
    (g,) = paddle.grad((h * w).sum(), x)
    assert np.abs(g.numpy()).sum() > 0  # straight-through: the hard sample has a gradient
    paddle.seed(3)
    a = F.gumbel_softmax(x).numpy()
    paddle.seed(3)
    np.testing.assert_allclose(F.gumbel_softmax(x).numpy(), a)


def test_gumbel_softmax_gradient_is_softmax_gradient():
    x0 = rng.standard_normal((3, 4))
    x = paddle.to_tensor(x0, stop_gradient=False)
    paddle.seed(7)
    y = F.gumbel_softmax(x, temperature=2.0)
    w = rng.standard_normal((3, 4))
    (g,) = paddle.grad((y * paddle.to_tensor(w)).sum(), x)
    yn = y.numpy()
    np.testing.assert_allclose(g.numpy(), yn * (w - (w * yn).sum(-1, keepdims=True)) / 2.0,
                               rtol=1e-10)


# ----------------------------------------------------------------------- layers
LAYERS = [
    ("CELU", (), {}), ("CELU", (2.0,), {"name": "c"}), ("ELU", (-0.2,), {}),
    ("GELU", (True,), {}), ("GLU", (), {}), ("Hardshrink", (), {}), ("Hardsigmoid", (), {}),
    ("Hardswish", (), {}), ("Hardtanh", (-2.0, 2.0), {"name": "h"}), ("LeakyReLU", (), {}),
    ("LogSigmoid", (), {}), ("LogSoftmax", (0,), {}), ("Maxout", (2,), {"name": "n"}),
    ("Mish", (), {}), ("PReLU", (), {}), ("PReLU", (4, 0.1), {"data_format": "NHWC"}),
    ("RReLU", (), {}), ("ReLU", (), {}), ("ReLU", (), {"name": "r"}), ("ReLU6", (), {}),
    ("SELU", (), {}), ("Sigmoid", (), {}), ("Silu", (), {}), ("Softmax", (), {}),
    ("Softmax", (1,), {"name": "s"}), ("Softmax2D", (), {}), ("Softplus", (), {}),
    ("Softshrink", (), {}), ("Softsign", (), {}), ("Swish", (), {}), ("Tanh", (), {}),
    ("Tanhshrink", (), {}), ("ThresholdedReLU", (), {}), ("Tanh", (), {"name": "t"}),
]


@pytest.mark.parity
@pytest.mark.parametrize("cls,args,kw", LAYERS)
def test_layer_repr_and_parity(cls, args, kw, pd):
    ours, theirs = getattr(nn, cls)(*args, **kw), getattr(pd.nn, cls)(*args, **kw)
    assert repr(ours) == repr(theirs)
    sd = theirs.state_dict()
    assert list(ours.state_dict()) == list(sd)
    ours.set_state_dict({k: v.numpy() for k, v in sd.items()})
    x = rng.standard_normal((2, 4, 3, 4)).astype("float32")
    for mode in ("train", "eval"):
        getattr(ours, mode)()
        getattr(theirs, mode)()
        if cls == "RReLU" and mode == "train":
            continue
        a = paddle.to_tensor(x, stop_gradient=False)
        b = pd.to_tensor(x, stop_gradient=False)
        ya, yb = ours(a), theirs(b)
        np.testing.assert_allclose(ya.numpy(), yb.numpy(), rtol=1e-5, atol=1e-6)
        ya.sum().backward()
        yb.sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-6)
        for (k, p), q in zip(ours.named_parameters(), theirs.parameters()):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-5,
                                       err_msg=k)
            p.clear_grad()
            q.clear_grad()


def test_prelu_layer_state_dict_roundtrip():
    m = nn.PReLU(3, init=0.3, weight_attr=paddle.ParamAttr(name="slope"))
    assert m._weight.name == "slope"
    sd = {k: v.numpy() + 1 for k, v in m.state_dict().items()}
    m2 = nn.PReLU(3)
    m2.set_state_dict(sd)
    np.testing.assert_allclose(m2._weight.numpy(), [1.3, 1.3, 1.3], rtol=1e-6)
    x = paddle.to_tensor(-np.ones([2, 3, 2], "float32"))
    np.testing.assert_allclose(m2(x).numpy(), np.full([2, 3, 2], -1.3), rtol=1e-6)


def test_prelu_layer_trains():
    m = nn.PReLU(2)
    x = paddle.to_tensor(-np.ones([3, 2], "float32"))
    m(x).sum().backward()
    np.testing.assert_allclose(m._weight.grad.numpy(), [-3.0, -3.0])


def test_layer_bad_input_names_function():
    with pytest.raises(ValueError, match="channels"):
        nn.PReLU(3)(paddle.rand([2, 4, 5]))
    with pytest.raises(TypeError, match="relu"):
        nn.ReLU()(paddle.to_tensor([1, 2]))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("n", [5, 3 * 8192 + 7])  # the small path and the row-blocked one
def test_relu_on_nan_and_inf_is_quiet(dtype, n):
    """relu runs without an errstate scope: NaN and inf must still raise no warning."""
    import warnings

    a = np.linspace(-3, 3, n).astype(dtype)
    a[:4] = [np.nan, np.inf, -np.inf, -0.0]
    x = paddle.to_tensor(a, stop_gradient=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = F.relu(x)
        y.sum().backward()
        (F.relu(x) * paddle.to_tensor(np.full(n, np.nan, dtype))).sum().backward()
    out = y.numpy()
    assert out[:4].tolist() == [0.0, np.inf, 0.0, 0.0] and not np.signbit(out[3])
    np.testing.assert_array_equal(out[4:], np.maximum(a[4:], 0))
    assert np.isnan(x.grad.numpy()).all()  # a NaN upstream gradient stays NaN, as in Paddle
