"""Values and dtypes against real Paddle 2.6.2: log_prob, prob, entropy, mean, variance, cdf."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl

from ._specs import SPECS

DTYPES = ["float32", "float64"]
TOL = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-10, atol=1e-12)}
# Real Paddle computes some float64 results with float32 constants (log sqrt(2 pi), Euler's
# gamma), about 1e-8 off; the float64 values here are checked exactly against SciPy elsewhere.
PD_TOL = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-7, atol=1e-7)}


def _t(lib, dtype):
    return lambda a: lib.to_tensor(np.asarray(a, dtype=dtype))


def _both(name, pd, dtype):
    build, values = SPECS[name]
    return (build(paddle_hl, _t(paddle_hl, dtype)), build(pd, _t(pd, dtype)), values)


def _cmp(ours, theirs, dtype, what):
    a, b = ours.numpy(), theirs.numpy()
    assert str(ours.dtype) == str(theirs.dtype), f"{what}: dtype {ours.dtype} vs {theirs.dtype}"
    np.testing.assert_allclose(a, np.broadcast_to(b, a.shape), err_msg=what, **PD_TOL[dtype])


@pytest.mark.parity
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(SPECS))
def test_log_prob_entropy_moments(name, dtype, pd):
    ours, theirs, values = _both(name, pd, dtype)
    v = values.astype(dtype)
    # Paddle's Geometric has no log_prob / prob: compared through log_pmf / pmf below
    for meth in ("log_prob", "prob") if name != "Geometric" else ():
        _cmp(getattr(ours, meth)(paddle_hl.to_tensor(v)), getattr(theirs, meth)(pd.to_tensor(v)),
             dtype, f"{name}.{meth}")
    _cmp(ours.entropy(), theirs.entropy(), dtype, f"{name}.entropy")
    if name not in ("Cauchy", "Uniform"):  # no mean / Paddle's Uniform has none
        _cmp(ours.mean, theirs.mean, dtype, f"{name}.mean")
        _cmp(ours.variance, theirs.variance, dtype, f"{name}.variance")
    if hasattr(theirs, "cdf") and name not in ("LogNormal",):
        _cmp(ours.cdf(paddle_hl.to_tensor(v)), theirs.cdf(pd.to_tensor(v)), dtype,
             f"{name}.cdf")


@pytest.mark.parity
@pytest.mark.parametrize("dtype", DTYPES)
def test_geometric_pmf(dtype, pd):
    ours, theirs, values = _both("Geometric", pd, dtype)
    v = values.astype(dtype)
    _cmp(ours.log_pmf(paddle_hl.to_tensor(v)), theirs.log_pmf(pd.to_tensor(v)), dtype, "log_pmf")
    _cmp(ours.pmf(paddle_hl.to_tensor(v)), theirs.pmf(pd.to_tensor(v)), dtype, "pmf")
    np.testing.assert_allclose(ours.log_prob(paddle_hl.to_tensor(v)).numpy(),
                               ours.log_pmf(paddle_hl.to_tensor(v)).numpy())


@pytest.mark.parity
@pytest.mark.parametrize("dtype", DTYPES)
def test_laplace_icdf(dtype, pd):
    ours, theirs, _ = _both("Laplace", pd, dtype)
    q = np.array([0.1, 0.5, 0.93], dtype=dtype)
    _cmp(ours.icdf(paddle_hl.to_tensor(q)), theirs.icdf(pd.to_tensor(q)), dtype, "icdf")


@pytest.mark.parity
def test_scalar_parameters_give_float32_0d(pd):
    for name in ("Normal", "Cauchy", "Laplace", "Gumbel", "LogNormal"):
        ours = getattr(paddle_hl.distribution, name)(0.5, 2.0)
        theirs = getattr(pd.distribution, name)(0.5, 2.0)
        assert ours.batch_shape == tuple(theirs.batch_shape) == ()
        e = ours.entropy()
        assert e.shape == [] and e.dtype == paddle_hl.float32
        _cmp(e, theirs.entropy(), "float32", f"{name}.entropy")
        v = np.array([0.7, 1.5], dtype="float32")
        _cmp(ours.log_prob(paddle_hl.to_tensor(v)), theirs.log_prob(pd.to_tensor(v)), "float32",
             f"{name}.log_prob")


@pytest.mark.parity
def test_value_cast_to_parameter_dtype(pd):
    d = paddle_hl.distribution.Normal(paddle_hl.to_tensor(np.zeros(2)),
                                      paddle_hl.to_tensor(np.ones(2)))
    out = d.log_prob(paddle_hl.to_tensor([0.5, 1.0]))  # float32 value, float64 law
    assert out.dtype == paddle_hl.float64
    d32 = paddle_hl.distribution.Normal(0.0, 1.0)
    assert d32.log_prob(paddle_hl.to_tensor(np.array([0.5]))).dtype == paddle_hl.float32


def test_broadcast_batch_shape():
    d = SPECS["Normal"][0](paddle_hl, lambda a: paddle_hl.to_tensor(np.asarray(a, "float32")))
    # the broadcast of loc [1, 3] and scale [2, 1] (real Paddle reports loc's shape alone)
    assert d.batch_shape == (2, 3) and d.event_shape == ()
    assert d.sample([4]).shape == [4, 2, 3]
    assert d.mean.shape == [2, 3]


@pytest.mark.parametrize("dtype", DTYPES)
def test_categorical_matches_softmax(dtype):
    logits = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.2]], dtype=dtype)
    p = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    c = paddle_hl.distribution.Categorical(paddle_hl.to_tensor(logits))
    assert c.batch_shape == (2,) and c.event_shape == ()
    tol = TOL[dtype]
    np.testing.assert_allclose(c.entropy().numpy(), -(p * np.log(p)).sum(-1), **tol)
    # 1-D value: every distribution of the batch at every index
    lp = c.log_prob(paddle_hl.to_tensor([0, 2, 1])).numpy()
    np.testing.assert_allclose(lp, np.log(p)[:, [0, 2, 1]], **tol)
    assert lp.dtype == np.dtype(dtype)
    # batch_shape + [m]: per-distribution indices
    lp = c.log_prob(paddle_hl.to_tensor([[2], [0]])).numpy()
    np.testing.assert_allclose(lp, np.log(p)[[0, 1], [2, 0]][:, None], **tol)
    # samples of shape [n, 2] broadcast against the batch
    s = paddle_hl.to_tensor([[0, 1], [2, 2], [1, 0]])
    np.testing.assert_allclose(c.prob(s).numpy(), p[[0, 1], s.numpy()], **tol)
    np.testing.assert_allclose(c.prob(c.sample([5])).numpy().shape, (5, 2))


@pytest.mark.parity
def test_categorical_entropy_and_kl_parity(pd):
    logits = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.2]], dtype="float32")
    other = np.array([[0.0, 0.0, 1.0], [2.0, 0.5, 0.2]], dtype="float32")
    C, PC = paddle_hl.distribution.Categorical, pd.distribution.Categorical
    a = C(paddle_hl.to_tensor(logits))
    b = PC(pd.to_tensor(logits))
    _cmp(a.entropy(), b.entropy(), "float32", "entropy")
    kl = a.kl_divergence(C(paddle_hl.to_tensor(other)))
    ref = b.kl_divergence(PC(pd.to_tensor(other))).numpy().reshape(kl.shape)
    np.testing.assert_allclose(kl.numpy(), ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", DTYPES)
def test_independent_parity(dtype, pd):
    loc = np.array([[0.0, 1.0], [2.0, 3.0]], dtype=dtype)
    scale = np.array([[1.0, 1.5], [2.0, 0.5]], dtype=dtype)
    v = np.array([[0.1, 1.0], [2.0, 3.5]], dtype=dtype)
    ours = paddle_hl.distribution.Independent(
        paddle_hl.distribution.Normal(paddle_hl.to_tensor(loc), paddle_hl.to_tensor(scale)), 1)
    theirs = pd.distribution.Independent(
        pd.distribution.Normal(pd.to_tensor(loc), pd.to_tensor(scale)), 1)
    assert ours.batch_shape == tuple(theirs.batch_shape)
    assert ours.event_shape == tuple(theirs.event_shape)
    _cmp(ours.log_prob(paddle_hl.to_tensor(v)), theirs.log_prob(pd.to_tensor(v)), dtype, "lp")
    _cmp(ours.entropy(), theirs.entropy(), dtype, "entropy")
    _cmp(ours.mean, theirs.mean, dtype, "mean")
    _cmp(ours.variance, theirs.variance, dtype, "variance")
    assert ours.sample([3]).shape == [3, 2, 2]


@pytest.mark.parity
@pytest.mark.parametrize("dtype", DTYPES)
def test_transformed_distribution_parity(dtype, pd):
    loc = np.array([0.0, 0.5], dtype=dtype)
    v = np.array([0.5, 2.0], dtype=dtype)

    def make(lib):
        D = lib.distribution
        t = lib.to_tensor
        base = D.Normal(t(loc), t(np.ones(2, dtype)))
        return D.TransformedDistribution(
            base, [D.AffineTransform(t(np.array(0.5, dtype)), t(np.array(2.0, dtype))),
                   D.ExpTransform()])

    ours, theirs = make(paddle_hl), make(pd)
    assert ours.batch_shape == tuple(theirs.batch_shape) == (2,)
    _cmp(ours.log_prob(paddle_hl.to_tensor(v)), theirs.log_prob(pd.to_tensor(v)), dtype, "lp")
    _cmp(ours.prob(paddle_hl.to_tensor(v)), theirs.prob(pd.to_tensor(v)), dtype, "prob")


def test_exponential_family_entropy_matches_closed_form():
    D = paddle_hl.distribution
    t = paddle_hl.to_tensor
    dists = [D.Beta(t([0.5, 2.0]), t([1.5, 4.0])),
             D.Dirichlet(t([[1.0, 2.0, 3.0], [0.5, 0.7, 4.0]])),
             D.Bernoulli(t([0.2, 0.7]))]
    for d in dists:
        np.testing.assert_allclose(D.ExponentialFamily.entropy(d).numpy(), d.entropy().numpy(),
                                   rtol=1e-5, atol=1e-6, err_msg=type(d).__name__)


def test_multinomial_entropy_exact():
    from itertools import product

    from scipy.stats import multinomial

    p = np.array([0.2, 0.3, 0.5])
    n = 4
    support = [c for c in product(range(n + 1), repeat=3) if sum(c) == n]
    pmf = multinomial(n, p).pmf(support)
    ref = -(pmf * np.log(pmf)).sum()
    d = paddle_hl.distribution.Multinomial(n, paddle_hl.to_tensor(p))
    np.testing.assert_allclose(d.entropy().numpy(), ref, rtol=1e-10)
    np.testing.assert_allclose(d.log_prob(paddle_hl.to_tensor(np.array(support[3], float)))
                               .numpy(), np.log(pmf[3]), rtol=1e-10)


@pytest.mark.parity
def test_zero_d_values_and_numpy_scalars(pd):
    for name in ("Normal", "Cauchy", "Laplace", "Gumbel", "LogNormal"):
        ours = getattr(paddle_hl.distribution, name)(np.float64(0.5), 2.0)
        theirs = getattr(pd.distribution, name)(np.float64(0.5), 2.0)
        a = ours.log_prob(paddle_hl.to_tensor(1.0))
        b = theirs.log_prob(pd.to_tensor(1.0))
        assert a.shape == [] and a.dtype == paddle_hl.float32
        _cmp(a, b, "float32", name)
        assert ours.sample().shape == [] and ours.rsample().shape == []
    loc = paddle_hl.to_tensor(0.5, stop_gradient=False)
    d = paddle_hl.distribution.Normal(loc, 2.0)
    d.log_prob(paddle_hl.to_tensor(1.0)).backward()
    np.testing.assert_allclose(loc.grad.numpy(), 0.5 / 4, rtol=1e-6)
