"""Special functions (paddle_hl/tensor/special.py): parity with Paddle 2.6.2, accuracy against
SciPy, finite-difference and higher-order gradients, dtype rules, edge cases and errors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import paddle_hl
from tests.op_check import check_parity, gradcheck

UNARY = ["digamma", "erf", "erfinv", "i0", "i0e", "i1", "i1e", "lgamma"]
SHAPES = [(), (0,), (2, 0, 3), (7,), (3, 4)]


def _away_from_poles(a, gap=0.08):
    """Move points that sit within ``gap`` of a non-positive integer (a pole) away from it."""
    near = (a <= 0) & (np.abs(a - np.round(a)) < gap)
    return np.where(near, a + 2 * gap, a)


def _sample(name, shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if name in ("lgamma", "digamma", "polygamma"):
        a = _away_from_poles(rng.uniform(-4.6, 7.0, shape))
    elif name == "multigammaln":
        a = rng.uniform(2.2, 9.0, shape)
    elif name == "erf":
        a = rng.uniform(-3.0, 3.0, shape)
    elif name == "erfinv":
        a = rng.uniform(-0.95, 0.95, shape)
    else:  # Bessel
        a = rng.uniform(-9.0, 9.0, shape)
    return np.asarray(a, dtype=dtype)


def _scipy():
    return pytest.importorskip("scipy.special")


# ---------------------------------------------------------------- names and methods

def test_names_follow_paddle_2_6():
    for n in UNARY + ["multigammaln", "polygamma", "digamma_", "i0_", "lgamma_",
                      "multigammaln_", "polygamma_", "erf_"]:
        assert callable(getattr(paddle_hl, n)), n
    # erf_ is top-level only and erfinv_ a Tensor method only, as in Paddle 2.6
    assert not hasattr(paddle_hl, "erfinv_")
    assert not hasattr(paddle_hl.Tensor, "erf_")
    for n in UNARY + ["multigammaln", "polygamma", "digamma_", "erfinv_", "i0_", "lgamma_",
                      "multigammaln_", "polygamma_"]:
        assert callable(getattr(paddle_hl.Tensor, n)), n
    assert paddle_hl.Tensor.lgamma is paddle_hl.lgamma
    x = paddle_hl.to_tensor([0.5, 2.0])
    np.testing.assert_allclose(x.polygamma(1).numpy(), paddle_hl.polygamma(x, 1).numpy())
    np.testing.assert_allclose(x.multigammaln(1).numpy(), paddle_hl.lgamma(x).numpy(),
                               rtol=1e-6)


# ---------------------------------------------------------------- parity with Paddle 2.6.2

@pytest.mark.parity
@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES)
def test_unary_parity(pd, name, dtype, shape):
    x = _sample(name, shape, dtype)
    # paddle_hl's sum refuses empty inputs, so the weighted-sum gradient needs elements
    check_parity(lambda lib, t: getattr(lib, name)(t), [x], pd, grad=x.size > 0)


@pytest.mark.parity
@pytest.mark.parametrize("n", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(), (0,), (9,)])
def test_polygamma_parity(pd, n, dtype, shape):
    x = _sample("polygamma", shape, dtype, seed=n)
    # float32 Paddle sums the zeta series in single precision: compare relatively
    rtol = 2e-4 if dtype == "float32" else 1e-9
    check_parity(lambda lib, t: lib.polygamma(t, n), [x], pd, grad=x.size > 0, rtol=rtol,
                 atol=1e-4 if dtype == "float32" else 1e-9)


@pytest.mark.parity
@pytest.mark.parametrize("p", [1, 2, 3, 5, 1.5])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(), (2, 3)])  # Paddle 2.6.2 fails on empty inputs here
def test_multigammaln_parity(pd, p, dtype, shape):
    x = np.asarray(_sample("multigammaln", shape, dtype) + p / 2, dtype=dtype)
    # Paddle adds its constant p(p-1)/4 log(pi) in float32: ~1e-8 off in float64
    check_parity(lambda lib, t: lib.multigammaln(t, p), [x], pd, grad=x.size > 0,
                 rtol=1e-5 if dtype == "float32" else 1e-7)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_edge_values_parity(pd, dtype):
    """Poles, infinities, NaN, zero and tiny arguments agree with Paddle."""
    special = np.array([-3.0, -1.0, 0.0, -0.0, 1e-30, -1e-30, 1.0, 2.0, 1e15, -np.inf, np.nan],
                       dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ["lgamma", "digamma"]:
            check_parity(lambda lib, t, n=name: getattr(lib, n)(t), [special], pd, grad=False,
                         rtol=1e-5)
        for n in (1, 2, 3):
            pts = special[np.isfinite(special) & (np.abs(special) < 1e10) | ~np.isfinite(special)]
            pts = pts[pts != np.inf]
            check_parity(lambda lib, t, n=n: lib.polygamma(t, n), [pts], pd, grad=False,
                         rtol=1e-5)
        erf_pts = np.array([-np.inf, -30.0, -6.0, -1e-30, 0.0, 1e-30, 6.0, 30.0, np.inf, np.nan],
                           dtype=dtype)
        check_parity(lambda lib, t: lib.erf(t), [erf_pts], pd, grad=False)
        inv_pts = np.array([-1.0, -0.999, -1e-30, 0.0, 0.999, 1.0, np.nan], dtype=dtype)
        check_parity(lambda lib, t: lib.erfinv(t), [inv_pts], pd, grad=False, rtol=1e-5)
        bes = np.array([-np.inf, -50.0, -1e-30, 0.0, 1e-30, 50.0, np.nan], dtype=dtype)
        for name in ["i0e", "i1e"]:
            check_parity(lambda lib, t, n=name: getattr(lib, n)(t), [bes], pd, grad=False)
        for name in ["i0", "i1"]:
            check_parity(lambda lib, t, n=name: getattr(lib, n)(t), [bes[1:-2]], pd, grad=False)


@pytest.mark.parity
@pytest.mark.parametrize("name", ["i0", "i0e", "i1", "i1e"])
def test_bessel_grad_at_zero_parity(pd, name):
    """i1' -> 1/2 and i1e' -> 1/2 at 0; Paddle takes sign(0) = +1 in i0e' (= -1 at 0)."""
    x = np.array([0.0, -0.0, 1e-12, -1e-12, 40.0, -40.0], dtype=np.float64)
    check_parity(lambda lib, t: getattr(lib, name)(t), [x], pd)


@pytest.mark.parity
def test_large_bessel_parity(pd):
    x = np.array([15.0, 29.9, 30.1, 45.0, 120.0, 700.0, -700.0])
    for name in ["i0", "i1", "i0e", "i1e"]:
        check_parity(lambda lib, t, n=name: getattr(lib, n)(t), [x], pd, rtol=1e-12)


# ---------------------------------------------------------------- accuracy against SciPy

def _assert_close(actual, expected, rtol, atol=0.0):
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)


def _wide(seed=0):
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.uniform(-60, 60, 3000), rng.uniform(0, 4, 3000),
                           10.0 ** rng.uniform(-12, 3, 1000), -(10.0 ** rng.uniform(-12, 3, 1000))])


def test_lgamma_accuracy():
    sp = _scipy()
    x = _wide()
    with np.errstate(all="ignore"):
        ref = np.where(x > 0, sp.gammaln(x), np.log(np.abs(sp.gamma(x))))
    keep = np.abs(x) < 170
    out = paddle_hl.lgamma(paddle_hl.to_tensor(x)).numpy()
    _assert_close(out[keep], ref[keep], rtol=1e-11, atol=1e-13)
    big = np.array([1e3, 1e10, 1e100, 2.5e305])
    _assert_close(paddle_hl.lgamma(paddle_hl.to_tensor(big)).numpy(), sp.gammaln(big), rtol=1e-14)


def test_lgamma_near_its_zeros_is_relatively_accurate():
    sp = _scipy()
    # near 1 and 2, lgamma is computed from its Taylor series in zeta values: relative accuracy
    for base in (1.0, 2.0):
        x = base + np.array([1e-9, -1e-7, 3e-4, -0.01, 0.2, -0.25])
        z = x - base  # exact
        out = paddle_hl.lgamma(paddle_hl.to_tensor(x)).numpy()
        # reference from the derivative expansion lgamma(b + z) ~ psi(b) z + psi'(b) z^2 / 2 ...
        ref = sum(sp.polygamma(k - 1, base) * z ** k / math.factorial(k) for k in range(1, 40))
        _assert_close(out, ref, rtol=1e-13)


def test_digamma_accuracy():
    sp = _scipy()
    x = _away_from_poles(_wide(1), 1e-6)
    ref = sp.psi(x)
    out = paddle_hl.digamma(paddle_hl.to_tensor(x)).numpy()
    # absolute slack covers the cancellation next to the positive root 1.4616...
    _assert_close(out, ref, rtol=1e-11, atol=1e-14)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 12, 20])
def test_polygamma_accuracy(n):
    sp = _scipy()
    x = _away_from_poles(_wide(n), 1e-4)
    x = x[np.abs(x) < 200]  # SciPy sums the series term by term for negative arguments
    out = paddle_hl.polygamma(paddle_hl.to_tensor(x), n).numpy()
    ref = sp.polygamma(n, x)
    # the reflection formula for x < 0 is limited by the conditioning of psi^(n) there
    neg = x < 0
    _assert_close(out[~neg], ref[~neg], rtol=1e-12)
    _assert_close(out[neg], ref[neg], rtol=1e-10, atol=1e-12)


def test_erf_accuracy():
    sp = _scipy()
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.uniform(-7, 7, 5000), 10.0 ** rng.uniform(-300, 1, 500),
                        [1.999999, 2.0, 2.000001, -2.0, 5e-324]])
    out = paddle_hl.erf(paddle_hl.to_tensor(x)).numpy()
    _assert_close(out, sp.erf(x), rtol=2e-15, atol=0)


def test_erfinv_accuracy_and_roundtrip():
    sp = _scipy()
    rng = np.random.default_rng(4)
    y = np.concatenate([rng.uniform(-1, 1, 5000), 1 - 10.0 ** rng.uniform(-16, -0.1, 500),
                        -1 + 10.0 ** rng.uniform(-16, -0.1, 500),
                        10.0 ** rng.uniform(-300, -1, 200)])
    out = paddle_hl.erfinv(paddle_hl.to_tensor(y)).numpy()
    _assert_close(out, sp.erfinv(y), rtol=5e-14)
    x = rng.uniform(-5, 5, 2000)
    back = paddle_hl.erfinv(paddle_hl.erf(paddle_hl.to_tensor(x))).numpy()
    mid = np.abs(x) < 2
    _assert_close(back[mid], x[mid], rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("name,ref", [("i0", "i0"), ("i0e", "i0e"), ("i1", "i1"),
                                      ("i1e", "i1e")])
def test_bessel_accuracy(name, ref):
    sp = _scipy()
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(-40, 40, 5000), 10.0 ** rng.uniform(-300, 2.8, 1000),
                        -(10.0 ** rng.uniform(-300, 2.8, 1000)), [29.999, 30.0, 30.001]])
    if name in ("i0e", "i1e"):
        x = np.concatenate([x, [1e5, -1e10, 1e300]])
    out = getattr(paddle_hl, name)(paddle_hl.to_tensor(x)).numpy()
    _assert_close(out, getattr(sp, ref)(x), rtol=5e-15, atol=1e-300)


def test_float32_is_correctly_rounded_float64():
    """float32 inputs are evaluated in float64 and rounded once."""
    x32 = _sample("lgamma", (200,), "float32")
    for name in ["lgamma", "digamma", "erf", "i0e"]:
        a = getattr(paddle_hl, name)(paddle_hl.to_tensor(x32)).numpy()
        b = getattr(paddle_hl, name)(paddle_hl.to_tensor(x32.astype(np.float64))).numpy()
        assert a.dtype == np.float32
        np.testing.assert_array_equal(a, b.astype(np.float32))


# ---------------------------------------------------------------- multigammaln vs SciPy

@pytest.mark.parametrize("p", [1, 2, 3, 4, 7])
def test_b66_multigammaln_matches_scipy(p):
    sp = _scipy()
    rng = np.random.default_rng(p)
    x = (p - 1) / 2 + 10.0 ** rng.uniform(-3, 3, 500)
    out = paddle_hl.multigammaln(paddle_hl.to_tensor(x), p).numpy()
    ref = np.array([sp.multigammaln(v, p) for v in x[:50]])
    _assert_close(out[:50], ref, rtol=1e-12, atol=1e-12)
    # the vectorised definition on every point
    ref_all = p * (p - 1) / 4 * np.log(np.pi) + sum(sp.gammaln(x - j / 2) for j in range(p))
    _assert_close(out, ref_all, rtol=1e-12, atol=1e-12)
    t = paddle_hl.to_tensor(x.astype(np.float32))
    assert paddle_hl.multigammaln(t, p).dtype == paddle_hl.float32


def test_multigammaln_float_p_and_gradient():
    sp = _scipy()
    x = np.array([2.5, 3.0, 10.0])
    out = paddle_hl.multigammaln(paddle_hl.to_tensor(x), 1.5).numpy()
    ref = 0.25 * 1.5 * 0.5 * np.log(np.pi) + sp.gammaln(x - 0.25) + sp.gammaln(x + 0.25)
    _assert_close(out, ref, rtol=1e-13)
    t = paddle_hl.to_tensor(x, stop_gradient=False)
    paddle_hl.multigammaln(t, 3).sum().backward()
    _assert_close(t.grad.numpy(), sum(sp.psi(x - j / 2) for j in range(3)), rtol=1e-13)


# ---------------------------------------------------------------- gradients

GRAD_POINTS = {
    "lgamma": [-2.7, -0.4, 0.3, 1.0, 1.9, 4.5, 12.0],
    "digamma": [-2.7, -0.4, 0.3, 1.46, 3.3, 11.0],
    "erf": [-2.5, -0.7, 0.0, 0.4, 1.5, 2.2],
    "erfinv": [-0.9, -0.3, 0.0, 0.2, 0.75],
    "i0": [-4.0, -0.3, 0.0, 0.6, 5.0],
    "i0e": [-31.0, -4.0, -0.3, 0.6, 5.0, 33.0],
    "i1": [-4.0, -0.3, 0.0, 0.6, 5.0],
    "i1e": [-31.0, -4.0, -0.3, 0.0, 0.6, 5.0, 33.0],
}


@pytest.mark.parametrize("name", UNARY)
def test_gradcheck_unary(name):
    x = np.array(GRAD_POINTS[name])
    gradcheck(lambda t: getattr(paddle_hl, name)(t), [x], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["i0", "i1"])
@pytest.mark.parametrize("x", [-31.0, 33.0])
def test_gradcheck_large_bessel(name, x):
    # alone, so that the ~1e12 value does not swamp the finite differences of small entries
    gradcheck(lambda t: getattr(paddle_hl, name)(t), [np.array([x])], rtol=1e-6)


@pytest.mark.parametrize("n", [1, 2, 4])
def test_gradcheck_polygamma(n):
    gradcheck(lambda t: paddle_hl.polygamma(t, n), [np.array([-2.6, -0.4, 0.7, 2.2, 9.0])],
              rtol=1e-6, atol=1e-6)


def test_gradcheck_multigammaln():
    gradcheck(lambda t: paddle_hl.multigammaln(t, 4), [np.array([2.1, 3.3, 8.0])], rtol=1e-6)


def test_analytic_gradients():
    sp = _scipy()
    x = np.array([-2.5, 0.3, 1.7, 6.0])
    cases = [
        ("lgamma", sp.psi(x)),
        ("digamma", sp.polygamma(1, x)),
        ("erf", 2 / np.sqrt(np.pi) * np.exp(-x * x)),
        ("i0", sp.i1(x)),
        ("i0e", sp.i1e(x) - np.sign(x) * sp.i0e(x)),
        ("i1", sp.i0(x) - sp.i1(x) / x),
        ("i1e", sp.i0e(x) - sp.i1e(x) / x - np.sign(x) * sp.i1e(x)),
    ]
    for name, expected in cases:
        t = paddle_hl.to_tensor(x, stop_gradient=False)
        getattr(paddle_hl, name)(t).sum().backward()
        np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-12, err_msg=name)
    y = np.array([-0.8, 0.0, 0.5])
    t = paddle_hl.to_tensor(y, stop_gradient=False)
    paddle_hl.erfinv(t).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), np.sqrt(np.pi) / 2 * np.exp(sp.erfinv(y) ** 2),
                               rtol=1e-12)
    t = paddle_hl.to_tensor(x, stop_gradient=False)
    paddle_hl.polygamma(t, 2).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), sp.polygamma(3, x), rtol=1e-11)


def test_gradient_limits_at_zero_and_infinity():
    t = paddle_hl.to_tensor([0.0, 0.0], stop_gradient=False)
    (paddle_hl.i1(t[0:1]) + paddle_hl.i1e(t[1:2])).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), [0.5, 0.5])
    t = paddle_hl.to_tensor([-1.0, 1.0], stop_gradient=False)
    paddle_hl.erfinv(t).backward(paddle_hl.to_tensor([1.0, 1.0]))  # a sum would read inf - inf
    assert np.all(np.isposinf(t.grad.numpy()))
    t = paddle_hl.to_tensor([np.inf, -np.inf], stop_gradient=False)
    (paddle_hl.i0e(t) + paddle_hl.i1e(t)).sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), [0.0, 0.0])


def _second_derivative(fn, x):
    t = paddle_hl.to_tensor(x, stop_gradient=False)
    (g,) = paddle_hl.grad(fn(t).sum(), t, create_graph=True)
    (h,) = paddle_hl.grad(g.sum(), t, create_graph=True)
    return g, h, t


def test_second_order_gradients():
    sp = _scipy()
    x = np.array([-1.5, 0.2, 0.9, 3.5])
    _, h, _ = _second_derivative(paddle_hl.lgamma, x)
    np.testing.assert_allclose(h.numpy(), sp.polygamma(1, x), rtol=1e-12)
    _, h, _ = _second_derivative(paddle_hl.digamma, x)
    np.testing.assert_allclose(h.numpy(), sp.polygamma(2, x), rtol=1e-12)
    _, h, _ = _second_derivative(lambda t: paddle_hl.polygamma(t, 2), x)
    np.testing.assert_allclose(h.numpy(), sp.polygamma(4, x), rtol=1e-11)
    _, h, _ = _second_derivative(paddle_hl.erf, x)
    np.testing.assert_allclose(h.numpy(), -4 * x / np.sqrt(np.pi) * np.exp(-x * x), rtol=1e-12)
    y = np.array([-0.7, 0.1, 0.6])
    _, h, _ = _second_derivative(paddle_hl.erfinv, y)
    e = sp.erfinv(y)
    np.testing.assert_allclose(h.numpy(), np.pi / 2 * e * np.exp(2 * e * e), rtol=1e-12)
    _, h, _ = _second_derivative(lambda t: paddle_hl.multigammaln(t, 2), x + 2)
    np.testing.assert_allclose(h.numpy(), sp.polygamma(1, x + 2) + sp.polygamma(1, x + 1.5),
                               rtol=1e-12)


def _numeric_derivative(f, x, eps=1e-6):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


@pytest.mark.parametrize("name", ["i0", "i0e", "i1", "i1e"])
def test_bessel_higher_order_gradients(name):
    """The I_n(x)/x^n tower gives exact second and third derivatives, including at x = 0."""
    sp = _scipy()
    x = np.array([-35.0, -2.0, -0.5, 0.0, 0.7, 3.0, 32.0]) if name in ("i0", "i1") else \
        np.array([-35.0, -2.0, -0.5, 0.7, 3.0, 32.0])
    fn = getattr(paddle_hl, name)
    g, h, t = _second_derivative(fn, x)
    (h3,) = paddle_hl.grad(h.sum(), t)

    def first(v):  # analytic first derivative from SciPy
        s = np.sign(v)
        with np.errstate(all="ignore"):
            return {"i0": sp.i1(v),
                    "i0e": sp.i1e(v) - s * sp.i0e(v),
                    "i1": (sp.i0(v) + sp.iv(2, v)) / 2,
                    "i1e": (sp.i0e(v) + sp.ive(2, v)) / 2 - s * sp.i1e(v)}[name]

    np.testing.assert_allclose(g.numpy(), first(x), rtol=1e-12, atol=1e-15)
    num2 = _numeric_derivative(first, x)
    np.testing.assert_allclose(h.numpy(), num2, rtol=1e-7, atol=1e-8)
    num3 = _numeric_derivative(lambda v: _numeric_derivative(first, v, 1e-4), x, 1e-4)
    np.testing.assert_allclose(h3.numpy(), num3, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- dtypes, shapes, edges

@pytest.mark.parametrize("name", UNARY)
def test_integer_input_gives_default_float(name):
    x = paddle_hl.to_tensor([0, 1, 2] if name == "erfinv" else [1, 2, 3])
    out = getattr(paddle_hl, name)(x)
    assert out.dtype == paddle_hl.float32
    paddle_hl.set_default_dtype("float64")
    out = getattr(paddle_hl, name)(x)
    assert out.dtype == paddle_hl.float64
    assert paddle_hl.polygamma(paddle_hl.to_tensor([1, 2]), 1).dtype == paddle_hl.float64
    assert paddle_hl.multigammaln(paddle_hl.to_tensor([3, 4]), 2).dtype == paddle_hl.float64


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_keeps_dtype(name, dtype):
    x32 = _sample(name, (6,), "float32")
    t = paddle_hl.to_tensor(x32).astype(dtype)
    out = getattr(paddle_hl, name)(t)
    assert out.dtype == getattr(paddle_hl, dtype)
    ref = getattr(paddle_hl, name)(t.astype("float32")).numpy()
    tol = 1e-2 if dtype == "float16" else 6e-2
    np.testing.assert_allclose(out.astype("float32").numpy(), ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", UNARY + ["polygamma", "multigammaln"])
@pytest.mark.parametrize("shape", [(), (0,), (2, 0)])
def test_zero_dim_and_empty(name, shape):
    x = np.asarray(_sample(name, shape, "float32") + (3.0 if name == "multigammaln" else 0.0),
                   dtype=np.float32)
    args = {"polygamma": (1,), "multigammaln": (2,)}.get(name, ())
    t = paddle_hl.to_tensor(x, stop_gradient=False)
    out = getattr(paddle_hl, name)(t, *args)
    assert out.shape == list(shape)
    assert out.dtype == paddle_hl.float32
    if out.size:
        out.sum().backward()
        assert t.grad.shape == list(shape)


def test_documented_edge_values():
    inf, nan = np.inf, np.nan
    with np.errstate(all="ignore"):
        lg = paddle_hl.lgamma(paddle_hl.to_tensor([0.0, -1.0, -2.0, inf, -inf, nan])).numpy()
        np.testing.assert_array_equal(lg, [inf, inf, inf, inf, inf, nan])
        dg = paddle_hl.digamma(paddle_hl.to_tensor([0.0, -1.0, -5.0, inf, -inf, nan])).numpy()
        np.testing.assert_array_equal(dg, [nan, nan, nan, inf, nan, nan])
        pg = paddle_hl.polygamma(paddle_hl.to_tensor([0.0, -3.0, -inf, inf, nan]), 2).numpy()
        np.testing.assert_array_equal(pg, [-inf, -inf, -inf, 0.0, nan])
        pg = paddle_hl.polygamma(paddle_hl.to_tensor([0.0, -3.0, -inf]), 3).numpy()
        np.testing.assert_array_equal(pg, [inf, inf, inf])
        # erfinv: +-1 -> +-inf, outside [-1, 1] NaN (the mathematical definition, as SciPy and
        # Paddle's GPU kernel; the 2.6.2 CPU kernel returns +-inf there)
        ei = paddle_hl.erfinv(paddle_hl.to_tensor([-1.0, 1.0, 1.5, -2.0, nan, 0.0])).numpy()
        np.testing.assert_array_equal(ei, [-inf, inf, nan, nan, nan, 0.0])
        er = paddle_hl.erf(paddle_hl.to_tensor([-inf, inf, nan, -0.0])).numpy()
        np.testing.assert_array_equal(er, [-1.0, 1.0, nan, -0.0])
        b = paddle_hl.to_tensor([-inf, inf, nan])
        np.testing.assert_array_equal(paddle_hl.i0(b).numpy(), [inf, inf, nan])
        np.testing.assert_array_equal(paddle_hl.i1(b).numpy(), [-inf, inf, nan])
        np.testing.assert_array_equal(paddle_hl.i0e(b).numpy(), [0.0, 0.0, nan])
        np.testing.assert_array_equal(paddle_hl.i1e(b).numpy(), [-0.0, 0.0, nan])
        # i0 and i1 overflow (like Paddle) once exp(|x|) does; the scaled versions stay finite
        big = paddle_hl.to_tensor([700.0, 710.0], dtype="float64")
        assert np.isfinite(paddle_hl.i0(big).numpy()[0]) and np.isinf(paddle_hl.i0(big).numpy()[1])
        assert np.all(np.isfinite(paddle_hl.i1e(big).numpy()))


# ---------------------------------------------------------------- inplace variants

@pytest.mark.parametrize("name,args", [("digamma_", ()), ("erf_", ()), ("erfinv_", ()),
                                       ("i0_", ()), ("lgamma_", ()), ("multigammaln_", (2,)),
                                       ("polygamma_", (1,))])
def test_inplace_variants(name, args):
    base = name[:-1]
    x = np.array([0.3, 0.6, 0.8] if base == "erfinv" else [1.5, 2.5, 3.5], dtype=np.float32)
    t = paddle_hl.to_tensor(x)
    fn = getattr(paddle_hl, name, None) or getattr(paddle_hl.Tensor, name)
    res = fn(t, *args)
    assert res is t
    expected = getattr(paddle_hl, base)(paddle_hl.to_tensor(x), *args).numpy()
    np.testing.assert_allclose(t.numpy(), expected, rtol=1e-6)
    if hasattr(paddle_hl.Tensor, name):
        t2 = paddle_hl.to_tensor(x)
        assert getattr(t2, name)(*args) is t2
        np.testing.assert_allclose(t2.numpy(), expected, rtol=1e-6)


def test_inplace_records_gradient_and_refuses_leaf():
    sp = _scipy()
    leaf = paddle_hl.to_tensor([1.5, 2.5], dtype="float64", stop_gradient=False)
    y = leaf * 1.0
    paddle_hl.lgamma_(y)
    y.sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), sp.psi([1.5, 2.5]), rtol=1e-13)
    with pytest.raises(ValueError, match="lgamma_"):
        paddle_hl.lgamma_(leaf)
    z = leaf * 0.1
    z.erfinv_()
    z.sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), sp.psi([1.5, 2.5]) + 0.1 * np.sqrt(np.pi) / 2
                               * np.exp(sp.erfinv([0.15, 0.25]) ** 2), rtol=1e-12)


# ---------------------------------------------------------------- errors

def test_argument_errors():
    x = paddle_hl.to_tensor([1.0, 2.0])
    with pytest.raises(TypeError, match="polygamma.*int"):
        paddle_hl.polygamma(x, 1.0)
    with pytest.raises(TypeError, match="polygamma.*int"):
        paddle_hl.polygamma(x, paddle_hl.to_tensor(1))
    with pytest.raises(ValueError, match="polygamma.*greater than or equal to 0"):
        paddle_hl.polygamma(x, -1)
    with pytest.raises(ValueError, match="multigammaln.*p must be greater"):
        paddle_hl.multigammaln(x, 0)
    with pytest.raises(TypeError, match="multigammaln"):
        paddle_hl.multigammaln(x, "2")
    with pytest.raises(TypeError, match="lgamma.*None"):
        paddle_hl.lgamma(None)
    with pytest.raises(TypeError, match="erf.*complex"):
        paddle_hl.erf(paddle_hl.to_tensor([1 + 1j]))
    with pytest.raises(TypeError, match="digamma_.*int64"):
        paddle_hl.digamma_(paddle_hl.to_tensor([1, 2]))
    with pytest.raises(TypeError, match="i0_.*Tensor"):
        paddle_hl.i0_(np.array([1.0]))


# ---------------------------------------------------------------- devices

@pytest.mark.parametrize("name", UNARY + ["polygamma", "multigammaln"])
def test_runs_on_every_device(device, name):
    x = _sample(name, (5, 4), "float64", seed=7) + (2.0 if name == "multigammaln" else 0.0)
    assert x.shape == (5, 4)
    args = {"polygamma": (3,), "multigammaln": (3,)}.get(name, ())
    t = paddle_hl.to_tensor(x, stop_gradient=False)
    out = getattr(paddle_hl, name)(t, *args)
    out.sum().backward()
    paddle_hl.set_device("cpu")
    tc = paddle_hl.to_tensor(x, stop_gradient=False)
    ref = getattr(paddle_hl, name)(tc, *args)
    ref.sum().backward()
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(t.grad.numpy(), tc.grad.numpy(), rtol=1e-12, atol=1e-300)
