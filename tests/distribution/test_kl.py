"""kl_divergence against real Paddle and the math, and register_kl's dispatch rules."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import paddle_hl

D = paddle_hl.distribution


@pytest.fixture
def kl_table():
    """Rules registered by a test are removed after it."""
    from paddle_hl.distribution import kl

    saved = dict(kl._REGISTER_TABLE)
    yield
    kl._REGISTER_TABLE.clear()
    kl._REGISTER_TABLE.update(saved)
    kl._dispatch.cache_clear()


def _pairs(lib, dtype):
    d = lib.distribution

    def t(a):
        return lib.to_tensor(np.asarray(a, dtype=dtype))

    return {
        "Normal": (d.Normal(t([0.0, 1.0]), t([1.0, 0.5])), d.Normal(t([1.0, -1.0]), t([2.0, 1.5]))),
        "LogNormal": (d.LogNormal(t([0.0, 1.0]), t([1.0, 0.5])),
                      d.LogNormal(t([1.0, -1.0]), t([2.0, 1.5]))),
        "Laplace": (d.Laplace(t([0.0, 1.0]), t([1.0, 0.5])), d.Laplace(t([1.0, -1.0]),
                                                                      t([2.0, 1.5]))),
        "Cauchy": (d.Cauchy(t([0.0, 1.0]), t([1.0, 0.5])), d.Cauchy(t([1.0, -1.0]), t([2.0, 1.5]))),
        "Bernoulli": (d.Bernoulli(t([0.3, 0.9])), d.Bernoulli(t([0.6, 0.2]))),
        "Beta": (d.Beta(t([2.0, 0.5]), t([3.0, 1.5])), d.Beta(t([3.0, 1.0]), t([4.0, 2.0]))),
        "Dirichlet": (d.Dirichlet(t([[1.0, 2.0, 3.0], [0.5, 0.5, 2.0]])),
                      d.Dirichlet(t([[2.0, 2.0, 1.0], [1.0, 3.0, 1.0]]))),
    }


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["Normal", "LogNormal", "Laplace", "Cauchy", "Bernoulli", "Beta",
                                  "Dirichlet"])
def test_kl_parity(name, dtype, pd):
    p, q = _pairs(paddle_hl, dtype)[name]
    pp, pq = _pairs(pd, dtype)[name]
    ours, theirs = D.kl_divergence(p, q), pd.distribution.kl_divergence(pp, pq)
    assert str(ours.dtype) == str(theirs.dtype)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), **tol)
    np.testing.assert_allclose(p.kl_divergence(q).numpy(), ours.numpy())


def _mc_kl(p, q, n=200000):
    x = p.sample([n])
    return (p.log_prob(x) - q.log_prob(x)).numpy().mean(0)


@pytest.mark.parametrize("name", ["Normal", "Laplace", "Cauchy", "Beta", "Dirichlet"])
def test_kl_matches_monte_carlo(name):
    p, q = _pairs(paddle_hl, "float64")[name]
    np.testing.assert_allclose(D.kl_divergence(p, q).numpy(), _mc_kl(p, q), rtol=0.05,
                               atol=0.01)


def test_geometric_kl_is_the_geometric_divergence():
    # Paddle 2.6 returns the Bernoulli divergence here; the series gives the right value
    p, q = 0.3, 0.6
    k = np.arange(2000)
    lp, lq = k * np.log1p(-p) + np.log(p), k * np.log1p(-q) + np.log(q)
    ref = np.sum(np.exp(lp) * (lp - lq))
    kl = D.kl_divergence(D.Geometric(paddle_hl.to_tensor(np.array([p]))),
                         D.Geometric(paddle_hl.to_tensor(np.array([q]))))
    np.testing.assert_allclose(kl.numpy(), [ref], rtol=1e-10)


def test_categorical_and_uniform_kl():
    a = np.array([[1.0, 2.0, 3.0]])
    b = np.array([[0.0, 0.5, 0.2]])
    pa = np.exp(a) / np.exp(a).sum(-1, keepdims=True)
    pb = np.exp(b) / np.exp(b).sum(-1, keepdims=True)
    kl = D.kl_divergence(D.Categorical(paddle_hl.to_tensor(a)),
                         D.Categorical(paddle_hl.to_tensor(b)))
    assert kl.shape == [1]
    np.testing.assert_allclose(kl.numpy(), (pa * np.log(pa / pb)).sum(-1), rtol=1e-10)
    u = D.kl_divergence(D.Uniform(paddle_hl.to_tensor([0.0, -2.0]), paddle_hl.to_tensor(1.0)),
                        D.Uniform(-1.0, 2.0))
    np.testing.assert_allclose(u.numpy(), [np.log(3.0), np.inf])


def test_independent_and_exponential_family_kl():
    p = D.Independent(D.Normal(paddle_hl.to_tensor([[0.0, 1.0]]), 1.0), 1)
    q = D.Independent(D.Normal(paddle_hl.to_tensor([[1.0, 1.0]]), 2.0), 1)
    ref = D.kl_divergence(p.base, q.base).numpy().sum(-1)
    np.testing.assert_allclose(D.kl_divergence(p, q).numpy(), ref, rtol=1e-6)
    # the Bregman rule for exponential families agrees with the closed form
    from paddle_hl.distribution.exponential_family import _kl_expfamily_expfamily

    bp, bq = _pairs(paddle_hl, "float64")["Beta"]
    np.testing.assert_allclose(_kl_expfamily_expfamily(bp, bq).numpy(),
                               D.kl_divergence(bp, bq).numpy(), rtol=1e-8)
    dp, dq = _pairs(paddle_hl, "float64")["Dirichlet"]
    np.testing.assert_allclose(_kl_expfamily_expfamily(dp, dq).numpy(),
                               D.kl_divergence(dp, dq).numpy(), rtol=1e-8)


def test_no_rule_is_a_clear_error():
    with pytest.raises(NotImplementedError, match=r"\(Normal, Laplace\).*register_kl"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Laplace(0.0, 1.0))
    with pytest.raises(NotImplementedError, match="different exponential families"):
        D.kl_divergence(D.Beta(1.0, 2.0), D.Bernoulli(0.5))
    with pytest.raises(TypeError, match="'q' must be a Distribution"):
        D.kl_divergence(D.Normal(0.0, 1.0), 3.0)
    with pytest.raises(TypeError, match="cls_p"):
        D.register_kl(int, D.Normal)


def test_register_kl_most_specific_rule_wins(kl_table):
    class MyNormal(D.Normal):
        pass

    class MyNormal2(MyNormal):
        pass

    calls = []

    @D.register_kl(MyNormal, D.Normal)
    def _kl_mine(p, q):
        calls.append("mine-normal")
        return paddle_hl.to_tensor(1.0)

    @D.register_kl(MyNormal2, MyNormal)
    def _kl_mine2(p, q):
        calls.append("mine2-mine")
        return paddle_hl.to_tensor(2.0)

    a, b = MyNormal(0.0, 1.0), MyNormal2(0.0, 1.0)
    # (MyNormal, MyNormal): (MyNormal, Normal) beats (Normal, Normal)
    assert float(D.kl_divergence(a, a)) == 1.0
    # (MyNormal2, MyNormal2): (MyNormal2, MyNormal) is the nearest
    assert float(D.kl_divergence(b, b)) == 2.0
    # (Normal, MyNormal): only (Normal, Normal) matches
    np.testing.assert_allclose(D.kl_divergence(D.Normal(0.0, 1.0), a).numpy(), 0.0, atol=1e-7)
    assert calls == ["mine-normal", "mine2-mine"]


def test_register_kl_ambiguity_warns(kl_table):
    class A(D.Normal):
        pass

    class B(D.Normal):
        pass

    @D.register_kl(A, D.Normal)
    def _kl_a(p, q):
        return paddle_hl.to_tensor(1.0)

    @D.register_kl(D.Normal, B)
    def _kl_b(p, q):
        return paddle_hl.to_tensor(2.0)

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = D.kl_divergence(A(0.0, 1.0), B(0.0, 1.0))
    assert float(out) == 1.0
    assert any("both match" in str(x.message) for x in w)


def test_kl_gradient_flows():
    loc = paddle_hl.to_tensor([0.5], stop_gradient=False)
    scale = paddle_hl.to_tensor([2.0], stop_gradient=False)
    D.kl_divergence(D.Normal(loc, scale), D.Normal(0.0, 1.0)).sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [0.5], rtol=1e-6)  # d/dmu = mu
    np.testing.assert_allclose(scale.grad.numpy(), [2.0 - 0.5], rtol=1e-6)  # s - 1/s
