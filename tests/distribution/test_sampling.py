"""Sampling checked statistically (moments on 100k draws, Kolmogorov-Smirnov against SciPy),
seeding, shapes and dtypes, and gradients of rsample and log_prob."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import paddle_hl

from ..op_check import gradcheck

D = paddle_hl.distribution
N = 100_000


def _t(a, dtype="float64"):
    return paddle_hl.to_tensor(np.asarray(a, dtype=dtype))


# name -> (distribution, scipy frozen law or None, sampler name)
def _laws():
    return {
        "Normal": (D.Normal(_t(1.5), _t(2.0)), stats.norm(1.5, 2.0)),
        "Uniform": (D.Uniform(_t(-1.0), _t(3.0)), stats.uniform(-1.0, 4.0)),
        "Cauchy": (D.Cauchy(_t(0.5), _t(2.0)), stats.cauchy(0.5, 2.0)),
        "Laplace": (D.Laplace(_t(0.5), _t(2.0)), stats.laplace(0.5, 2.0)),
        "Gumbel": (D.Gumbel(_t(0.5), _t(2.0)), stats.gumbel_r(0.5, 2.0)),
        "LogNormal": (D.LogNormal(_t(0.3), _t(0.5)), stats.lognorm(0.5, scale=np.exp(0.3))),
        "Beta": (D.Beta(_t(2.0), _t(3.5)), stats.beta(2.0, 3.5)),
        "Bernoulli": (D.Bernoulli(_t(0.3)), stats.bernoulli(0.3)),
        "Geometric": (D.Geometric(_t(0.3)), stats.geom(0.3, loc=-1)),
    }


CONTINUOUS = ["Normal", "Uniform", "Cauchy", "Laplace", "Gumbel", "LogNormal", "Beta"]


@pytest.mark.parametrize("name,method", [(n, "sample") for n in CONTINUOUS]
                         + [(n, "rsample") for n in CONTINUOUS])
def test_ks_against_scipy(name, method):
    d, law = _laws()[name]
    x = getattr(d, method)([N]).numpy()
    assert x.shape == (N,)
    res = stats.kstest(x, law.cdf)
    assert res.pvalue > 1e-3, f"{name}.{method}: KS statistic {res.statistic}"
    # the law's own density agrees with SciPy's
    pts = law.ppf(np.array([0.1, 0.5, 0.9]))
    np.testing.assert_allclose(d.log_prob(_t(pts)).numpy(), law.logpdf(pts), rtol=1e-10)


@pytest.mark.parametrize("name", ["Normal", "Uniform", "Laplace", "Gumbel", "LogNormal", "Beta",
                                  "Bernoulli", "Geometric"])
def test_moments_on_100k_draws(name):
    d, law = _laws()[name]
    x = d.sample([N]).numpy()
    m, v = float(d.mean.numpy()), float(d.variance.numpy())
    np.testing.assert_allclose([m, v], [law.mean(), law.var()], rtol=1e-10)
    se = np.sqrt(v / N)
    assert abs(x.mean() - m) < 5 * se, f"{name}: mean {x.mean()} vs {m}"
    np.testing.assert_allclose(x.var(), v, rtol=0.05)


def test_discrete_laws_against_scipy():
    for name in ("Bernoulli", "Geometric"):
        d, law = _laws()[name]
        x = d.sample([N]).numpy()
        k = np.arange(2 if name == "Bernoulli" else 6)
        freq = np.array([(x == i).mean() for i in k])
        np.testing.assert_allclose(freq, law.pmf(k), atol=0.006)
        np.testing.assert_allclose(d.log_prob(_t(k)).numpy(), law.logpmf(k), rtol=1e-10)
        np.testing.assert_allclose(d.cdf(_t(k)).numpy(), law.cdf(k), rtol=1e-10)


def test_categorical_and_multinomial_frequencies():
    logits = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, -1.0]])
    p = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    s = D.Categorical(_t(logits)).sample([N])
    assert s.dtype == paddle_hl.int64 and s.shape == [N, 2]
    for b in range(2):
        freq = np.bincount(s.numpy()[:, b], minlength=3) / N
        np.testing.assert_allclose(freq, p[b], atol=0.006)
    probs = np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
    m = D.Multinomial(5, _t(probs))
    c = m.sample([20000]).numpy()
    assert c.shape == (20000, 2, 3)
    np.testing.assert_allclose(c.sum(-1), 5)
    np.testing.assert_allclose(c.mean(0), m.mean.numpy(), atol=0.05)
    np.testing.assert_allclose(c.var(0), m.variance.numpy(), rtol=0.06)


def test_dirichlet_moments():
    a = np.array([1.0, 2.0, 3.0])
    d = D.Dirichlet(_t(a))
    x = d.sample([N]).numpy()
    np.testing.assert_allclose(x.sum(-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(x.mean(0), d.mean.numpy(), atol=0.004)
    np.testing.assert_allclose(x.var(0), d.variance.numpy(), rtol=0.05)
    ref = stats.dirichlet(a)
    pt = np.array([0.2, 0.3, 0.5])
    np.testing.assert_allclose(d.log_prob(_t(pt)).numpy(), ref.logpdf(pt), rtol=1e-10)
    np.testing.assert_allclose(d.entropy().numpy(), ref.entropy(), rtol=1e-10)


@pytest.mark.parametrize("name", ["Normal", "Uniform", "Laplace", "Gumbel", "LogNormal", "Beta",
                                  "Cauchy"])
def test_entropy_against_scipy(name):
    d, law = _laws()[name]
    np.testing.assert_allclose(d.entropy().numpy(), law.entropy(), rtol=1e-10)


@pytest.mark.parametrize("name", ["Normal", "Uniform", "Cauchy", "Laplace", "Gumbel", "Beta",
                                  "Bernoulli", "Geometric", "Categorical", "Dirichlet",
                                  "Multinomial"])
def test_seed_repeats_and_dtype(name):
    def make(dtype):
        t = lambda a: _t(a, dtype)  # noqa: E731
        return {
            "Normal": lambda: D.Normal(t([0.0, 1.0]), t(1.0)),
            "Uniform": lambda: D.Uniform(t([0.0, 1.0]), t(2.0)),
            "Cauchy": lambda: D.Cauchy(t([0.0, 1.0]), t(1.0)),
            "Laplace": lambda: D.Laplace(t([0.0, 1.0]), t(1.0)),
            "Gumbel": lambda: D.Gumbel(t([0.0, 1.0]), t(1.0)),
            "Beta": lambda: D.Beta(t([1.0, 2.0]), t(1.0)),
            "Bernoulli": lambda: D.Bernoulli(t([0.2, 0.7])),
            "Geometric": lambda: D.Geometric(t([0.2, 0.7])),
            "Categorical": lambda: D.Categorical(t([[0.2, 0.7], [1.0, 0.0]])),
            "Dirichlet": lambda: D.Dirichlet(t([[0.2, 0.7], [1.0, 2.0]])),
            "Multinomial": lambda: D.Multinomial(3, t([[0.2, 0.8], [0.5, 0.5]])),
        }[name]()

    for dtype in ("float32", "float64"):
        d = make(dtype)
        paddle_hl.seed(123)
        a = d.sample([4]).numpy()
        paddle_hl.seed(123)
        b = d.sample([4]).numpy()
        np.testing.assert_array_equal(a, b)
        assert a.shape == (4, 2) + tuple(d.event_shape)
        want = "int64" if name == "Categorical" else dtype
        assert str(a.dtype) == want


def test_sample_shapes_and_no_gradient():
    loc = _t([[0.0, 1.0, 2.0]], "float32")
    loc.stop_gradient = False
    d = D.Normal(loc, _t([[1.0], [2.0]], "float32"))
    s = d.sample([5, 4])
    assert s.shape == [5, 4, 2, 3] and s.stop_gradient
    r = d.rsample([5])
    assert r.shape == [5, 2, 3] and not r.stop_gradient
    assert d.sample().shape == [2, 3]
    assert D.Normal(0.0, 1.0).sample([3], seed=7).shape == [3]
    np.testing.assert_array_equal(D.Normal(0.0, 1.0).sample([3], seed=7).numpy(),
                                  D.Normal(0.0, 1.0).sample([3], seed=7).numpy())


# ---------------------------------------------------------------- gradients

def _reseeded(fn):
    def run(*args):
        paddle_hl.seed(11)
        return fn(*args)

    return run


@pytest.mark.parametrize("name,params", [
    ("Normal", ([0.5, -1.0], [1.5, 0.7])),
    ("Uniform", ([0.5, -1.0], [1.5, 0.7])),
    ("Cauchy", ([0.5, -1.0], [1.5, 0.7])),
    ("Laplace", ([0.5, -1.0], [1.5, 0.7])),
    ("Gumbel", ([0.5, -1.0], [1.5, 0.7])),
    ("LogNormal", ([0.5, -1.0], [1.5, 0.7])),
])
def test_rsample_gradient(name, params):
    cls = getattr(D, name)
    gradcheck(_reseeded(lambda a, b: cls(a, b).rsample([3])), [np.array(p) for p in params],
              rtol=1e-5, atol=1e-7)


def test_normal_rsample_gradient_closed_form():
    loc = _t([0.5, -1.0])
    scale = _t([1.5, 0.7])
    loc.stop_gradient = scale.stop_gradient = False
    paddle_hl.seed(3)
    r = D.Normal(loc, scale).rsample([6])
    r.sum().backward()
    eps = (r.numpy() - loc.numpy()) / scale.numpy()
    np.testing.assert_allclose(loc.grad.numpy(), [6.0, 6.0])
    np.testing.assert_allclose(scale.grad.numpy(), eps.sum(0), rtol=1e-10)


@pytest.mark.parametrize("name,params,value", [
    ("Normal", ([0.5, -1.0], [1.5, 0.7]), [[0.3, 0.1], [1.0, -2.0]]),
    ("Cauchy", ([0.5, -1.0], [1.5, 0.7]), [[0.3, 0.1], [1.0, -2.0]]),
    ("Laplace", ([0.5, -1.0], [1.5, 0.7]), [[0.3, 0.1], [1.0, -2.0]]),
    ("Gumbel", ([0.5, -1.0], [1.5, 0.7]), [[0.3, 0.1], [1.0, -2.0]]),
    ("LogNormal", ([0.5, -1.0], [1.5, 0.7]), [[0.3, 0.1], [1.0, 2.0]]),
    ("Beta", ([0.5, 2.0], [1.5, 0.7]), [[0.3, 0.1], [0.6, 0.9]]),
    ("Uniform", ([0.0, -1.0], [1.5, 0.7]), [[0.3, 0.1], [1.0, -0.5]]),
])
def test_log_prob_gradient(name, params, value):
    cls = getattr(D, name)
    gradcheck(lambda a, b, v: cls(a, b).log_prob(v),
              [np.array(params[0]), np.array(params[1]), np.array(value)], rtol=1e-5, atol=1e-7)


def test_log_prob_gradient_discrete_and_simplex():
    gradcheck(lambda p: D.Bernoulli(p).log_prob(_t([[0.0, 1.0], [1.0, 1.0]])),
              [np.array([0.3, 0.8])], rtol=1e-5, atol=1e-7)
    gradcheck(lambda p: D.Geometric(p).log_prob(_t([[0.0, 1.0], [4.0, 2.0]])),
              [np.array([0.3, 0.8])], rtol=1e-5, atol=1e-7)
    gradcheck(lambda a: D.Dirichlet(a).log_prob(_t([0.2, 0.3, 0.5])),
              [np.array([[1.0, 2.0, 3.0], [0.5, 0.7, 1.2]])], rtol=1e-5, atol=1e-7)
    gradcheck(lambda x: D.Categorical(x).log_prob(_t([0, 2], "int64")),
              [np.array([[1.0, 2.0, 3.0], [0.5, 0.7, 1.2]])], rtol=1e-5, atol=1e-7)
    gradcheck(lambda p: D.Multinomial(4, p).log_prob(_t([1.0, 1.0, 2.0])),
              [np.array([0.2, 0.3, 0.5])], rtol=1e-5, atol=1e-7)
    gradcheck(lambda a, b: D.Beta(a, b).entropy(), [np.array([0.5, 2.0]), np.array([1.5, 3.0])],
              rtol=1e-5, atol=1e-7)


def test_bernoulli_relaxed_rsample():
    p = _t([0.3, 0.8])
    p.stop_gradient = False
    d = D.Bernoulli(p)
    z = d.rsample([N // 10], temperature=0.05)
    assert z.shape == [N // 10, 2]
    hard = (paddle_hl.nn.functional.sigmoid(z).numpy() > 0.5).mean(0)
    np.testing.assert_allclose(hard, [0.3, 0.8], atol=0.02)
    z.sum().backward()
    assert p.grad is not None and np.all(p.grad.numpy() > 0)


def test_gamma_implicit_gradient_against_scipy():
    from scipy import special

    from paddle_hl.distribution._gamma import _dx_dalpha

    a = np.array([0.3, 0.3, 2.0, 2.0, 10.0, 10.0, 50.0])
    x = np.array([0.01, 2.0, 0.5, 5.0, 3.0, 20.0, 45.0])
    h = 1e-6
    dp = (special.gammainc(a + h, x) - special.gammainc(a - h, x)) / (2 * h)
    ref = -dp / np.exp((a - 1) * np.log(x) - x - special.gammaln(a))
    np.testing.assert_allclose(_dx_dalpha(a, x), ref, rtol=1e-6)


def test_beta_and_dirichlet_rsample_gradients_of_the_mean():
    # d/da E[X] for X ~ Beta(a, b) is b / (a + b)^2; the pathwise estimate averages to it
    a, b = _t([2.0]), _t([3.5])
    a.stop_gradient = b.stop_gradient = False
    x = D.Beta(a, b).rsample([N])
    assert x.shape == [N, 1] and not x.stop_gradient
    x.mean().backward()
    np.testing.assert_allclose(a.grad.numpy(), [3.5 / 5.5 ** 2], rtol=0.03)
    np.testing.assert_allclose(b.grad.numpy(), [-2.0 / 5.5 ** 2], rtol=0.03)
    conc = _t([1.0, 2.0, 3.0])
    conc.stop_gradient = False
    y = D.Dirichlet(conc).rsample([N // 2])
    np.testing.assert_allclose(y.numpy().sum(-1), 1.0, rtol=1e-12)
    y[:, 0].mean().backward()
    # d E[X_0] / d alpha_j = (delta_0j a0 - a_0) / a0^2 with a0 = 6
    np.testing.assert_allclose(conc.grad.numpy(), [5 / 36, -1 / 36, -1 / 36], rtol=0.05,
                               atol=2e-3)
    s = D.Dirichlet(_t([1.0, 2.0, 3.0])).rsample([N // 2]).numpy()
    assert stats.kstest(s[:, 0], stats.beta(1.0, 5.0).cdf).pvalue > 1e-3


def test_normal_second_order_gradients():
    # d2/dloc2 of log N(v; loc, s) is -1/s^2; d2/ds2 is 1/s^2 - 3 (v - loc)^2 / s^4
    loc, scale = _t([0.5, -1.0]), _t([1.5, 0.7])
    loc.stop_gradient = scale.stop_gradient = False
    v = _t([0.1, 0.3])
    lp = D.Normal(loc, scale).log_prob(v).sum()
    gl, gs = paddle_hl.grad(lp, [loc, scale], create_graph=True)
    (hl,) = paddle_hl.grad(gl.sum(), [loc], retain_graph=True)
    (hs,) = paddle_hl.grad(gs.sum(), [scale])
    s, d = scale.numpy(), v.numpy() - loc.numpy()
    np.testing.assert_allclose(hl.numpy(), -1 / s ** 2, rtol=1e-10)
    np.testing.assert_allclose(hs.numpy(), 1 / s ** 2 - 3 * d ** 2 / s ** 4, rtol=1e-10)
    paddle_hl.seed(1)
    r = D.Normal(loc, scale).rsample([3])
    (g,) = paddle_hl.grad((r * r).sum(), [scale], create_graph=True)
    (h,) = paddle_hl.grad(g.sum(), [scale])
    eps = (r.numpy() - loc.numpy()) / s
    np.testing.assert_allclose(h.numpy(), 2 * (eps ** 2).sum(0), rtol=1e-10)
