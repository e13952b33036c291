"""Tests for paddle_hl/tensor/random.py and paddle_hl/framework/random.py.

Statistical checks use fixed seeds and tolerances of many standard errors, so they never flake.
"""

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.framework import random as frandom

N = 200_000  # samples for moment checks: standard error of a mean ~ 0.0022 * sigma


def _fresh(shape=(N,), dtype="float32"):
    return paddle.zeros(list(shape), dtype)


DRAWS = {
    "rand": lambda: paddle.rand([3, 4]),
    "uniform": lambda: paddle.uniform([5], min=2.0, max=3.0),
    "randn": lambda: paddle.randn([2, 2], "float64"),
    "standard_normal": lambda: paddle.standard_normal([3]),
    "normal": lambda: paddle.normal(1.0, 2.0, [4]),
    "normal_tensor": lambda: paddle.normal(paddle.to_tensor([1.0, 2.0]),
                                           paddle.to_tensor([0.5, 1.0])),
    "randint": lambda: paddle.randint(0, 100, [6]),
    "randint_like": lambda: paddle.randint_like(paddle.zeros([3]), 0, 10),
    "randperm": lambda: paddle.randperm(10),
    "bernoulli": lambda: paddle.bernoulli(paddle.full([8], 0.5)),
    "poisson": lambda: paddle.poisson(paddle.full([8], 3.0)),
    "multinomial": lambda: paddle.multinomial(paddle.to_tensor([0.2, 0.3, 0.5]), 2),
    "multinomial_repl": lambda: paddle.multinomial(paddle.to_tensor([[0.2, 0.8]]), 5, True),
    "uniform_": lambda: paddle.zeros([4]).uniform_(),
    "normal_": lambda: paddle.zeros([4]).normal_(),
    "exponential_": lambda: paddle.zeros([4]).exponential_(2.0),
    "cauchy_": lambda: paddle.cauchy_(paddle.zeros([4])),
    "geometric_": lambda: paddle.geometric_(paddle.zeros([4]), 0.3),
}


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_same_seed_same_numbers(name):
    draw = DRAWS[name]
    paddle.seed(123)
    a = [draw().numpy() for _ in range(2)]
    paddle.seed(123)
    b = [draw().numpy() for _ in range(2)]
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    paddle.seed(124)
    c = draw().numpy()
    if name not in ("bernoulli", "multinomial_repl", "multinomial", "poisson", "randint_like"):
        assert not np.array_equal(a[0], c)


@pytest.mark.cpu
def test_seed_repeats_across_processes():
    """A fixed seed gives the same numbers in a fresh interpreter (no hidden global state)."""
    import subprocess
    import sys

    code = ("import paddle_hl as p; p.seed(7); print(p.rand([3]).numpy().tolist(), "
            "p.randint(0, 1000, [3]).numpy().tolist())")
    outs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True).stdout for _ in range(2)]
    assert outs[0] == outs[1]
    paddle.seed(7)
    here = f"{paddle.rand([3]).numpy().tolist()} {paddle.randint(0, 1000, [3]).numpy().tolist()}"
    assert outs[0].strip() == here


def test_rng_state_roundtrip():
    paddle.seed(5)
    state = paddle.get_rng_state()
    assert isinstance(state, list) and len(state) == 1
    assert state[0].current_seed() == 5
    a = paddle.randn([5]).numpy()
    b = paddle.rand([2]).numpy()
    paddle.set_rng_state(state)
    np.testing.assert_array_equal(paddle.randn([5]).numpy(), a)
    np.testing.assert_array_equal(paddle.rand([2]).numpy(), b)
    # the saved state is a snapshot, unaffected by later draws
    paddle.set_rng_state(state)
    np.testing.assert_array_equal(paddle.randn([5]).numpy(), a)
    assert len(paddle.get_rng_state("cpu")) == 1
    with pytest.raises(ValueError):
        paddle.set_rng_state([])


@pytest.mark.cpu
def test_generator_object():
    g = paddle.seed(9)
    assert isinstance(g, frandom.Generator)
    assert g.initial_seed() == 9
    r1 = g.random()
    assert isinstance(r1, int) and 0 <= r1 < 2 ** 63
    st = g.get_state()
    x = paddle.rand([3]).numpy()
    g.set_state(st)
    np.testing.assert_array_equal(paddle.rand([3]).numpy(), x)
    g.manual_seed(9)
    assert g.random() == r1
    with pytest.raises(TypeError):
        paddle.seed("a")
    with pytest.raises(ValueError):
        paddle.seed(-1)


def test_cuda_rng_state_without_gpu():
    from paddle_hl import backend

    states = paddle.get_cuda_rng_state()
    assert isinstance(states, list)
    if backend.cupy_module() is None:
        assert states == []
        paddle.set_cuda_rng_state([])
        with pytest.raises(ValueError):
            paddle.set_cuda_rng_state([paddle.get_rng_state()[0]])
        with pytest.raises(ValueError):
            paddle.get_rng_state("gpu")


def test_uniform_seed_argument_is_private():
    paddle.seed(1)
    ref = paddle.rand([3]).numpy()
    paddle.seed(1)
    a = paddle.uniform([4], seed=77).numpy()
    b = paddle.uniform([4], seed=77).numpy()
    np.testing.assert_array_equal(a, b)
    # the global stream is untouched by seeded calls
    np.testing.assert_array_equal(paddle.rand([3]).numpy(), ref)
    x = paddle.zeros([4])
    x.uniform_(seed=77)
    np.testing.assert_array_equal(x.numpy(), a)


# ---------------------------------------------------------------- shapes and dtypes

@pytest.mark.parametrize("fn,shape,dtype", [
    (lambda: paddle.rand([2, 3]), [2, 3], paddle.float32),
    (lambda: paddle.rand([]), [], paddle.float32),
    (lambda: paddle.rand([0, 2], "float64"), [0, 2], paddle.float64),
    (lambda: paddle.rand(paddle.to_tensor([2, 3])), [2, 3], paddle.float32),
    (lambda: paddle.rand([paddle.to_tensor(2), 3]), [2, 3], paddle.float32),
    (lambda: paddle.rand([2], "bfloat16"), [2], paddle.bfloat16),
    (lambda: paddle.randn(4), [4], paddle.float32),
    (lambda: paddle.standard_normal([2], "float64"), [2], paddle.float64),
    (lambda: paddle.uniform([3], "float64", 0, 1), [3], paddle.float64),
    (lambda: paddle.normal(shape=[2, 2]), [2, 2], paddle.float32),
    (lambda: paddle.normal(paddle.to_tensor([1.0, 2.0], dtype="float64")), [2],
     paddle.float64),
    (lambda: paddle.normal(0.0, paddle.to_tensor([[1.0], [2.0]])), [2, 1], paddle.float32),
    (lambda: paddle.normal(paddle.to_tensor([1.0, 2.0]), paddle.to_tensor([[1.0], [2.0]])),
     [2], paddle.float32),
    (lambda: paddle.randint(5), [1], paddle.int64),
    (lambda: paddle.randint(5, shape=[]), [], paddle.int64),
    (lambda: paddle.randint(0, 5, [2], "int32"), [2], paddle.int32),
    (lambda: paddle.randint_like(paddle.zeros([2, 3]), 3), [2, 3], paddle.float32),
    (lambda: paddle.randint_like(paddle.zeros([2]), 3, dtype="int32"), [2], paddle.int32),
    (lambda: paddle.randperm(4), [4], paddle.int64),
    (lambda: paddle.randperm(4, "float32"), [4], paddle.float32),
    (lambda: paddle.randperm(0), [0], paddle.int64),
    (lambda: paddle.bernoulli(paddle.full([2, 2], 0.3, "float64")), [2, 2], paddle.float64),
    (lambda: paddle.poisson(paddle.full([3], 2.0)), [3], paddle.float32),
    (lambda: paddle.multinomial(paddle.to_tensor([0.5, 0.5]), 1), [1], paddle.int64),
    (lambda: paddle.multinomial(paddle.to_tensor([[1.0, 2.0, 3.0]] * 4), 2), [4, 2],
     paddle.int64),
])
def test_shapes_and_dtypes(fn, shape, dtype):
    out = fn()
    assert out.shape == shape
    assert out.dtype == dtype
    assert out.stop_gradient


@pytest.mark.parity
def test_shapes_dtypes_match_paddle(pd):
    calls = [
        lambda P: P.rand([2, 3]), lambda P: P.randn([4], "float64"),
        lambda P: P.uniform([3], min=2, max=3), lambda P: P.randint(5),
        lambda P: P.randint(5, shape=[]), lambda P: P.randint(0, 5, [2], "int32"),
        lambda P: P.randint_like(P.zeros([2, 3]), 3), lambda P: P.randperm(4, "float32"),
        lambda P: P.normal(P.to_tensor([1.0, 2.0]), P.to_tensor([[1.0], [2.0]])),
        lambda P: P.normal(P.to_tensor([1.0, 2.0], "float64"), P.to_tensor([1.0, 2.0])),
        lambda P: P.multinomial(P.to_tensor([[0.2, 0.8]]), 3, True),
        lambda P: P.poisson(P.to_tensor([1.0, 2.0])),
        lambda P: P.bernoulli(P.to_tensor([[0.1, 0.9]])),
        lambda P: P.standard_normal([]),
    ]
    for c in calls:
        a, b = c(paddle), c(pd)
        assert a.shape == list(b.shape)
        assert str(a.dtype) == str(b.dtype)


# ---------------------------------------------------------------- distributions

def test_rand_uniform_moments():
    paddle.seed(2024)
    u = paddle.rand([N]).numpy().astype(np.float64)
    assert u.min() >= 0.0 and u.max() < 1.0
    np.testing.assert_allclose(u.mean(), 0.5, atol=0.005)
    np.testing.assert_allclose(u.var(), 1 / 12, atol=0.002)
    v = paddle.uniform([N], "float64", min=-3.0, max=5.0).numpy()
    assert v.min() >= -3.0 and v.max() < 5.0
    np.testing.assert_allclose(v.mean(), 1.0, atol=0.05)
    np.testing.assert_allclose(v.var(), 64 / 12, rtol=0.02)


def test_normal_moments():
    paddle.seed(2025)
    z = paddle.randn([N], "float64").numpy()
    np.testing.assert_allclose(z.mean(), 0.0, atol=0.01)
    np.testing.assert_allclose(z.std(), 1.0, atol=0.01)
    w = paddle.normal(3.0, 0.5, [N]).numpy()
    np.testing.assert_allclose(w.mean(), 3.0, atol=0.01)
    np.testing.assert_allclose(w.std(), 0.5, atol=0.01)
    m = paddle.to_tensor(np.array([-2.0, 0.0, 4.0] * (N // 3)))
    s = paddle.to_tensor(np.array([0.1, 1.0, 3.0] * (N // 3)))
    x = paddle.normal(m, s).numpy().reshape(-1, 3)
    np.testing.assert_allclose(x.mean(0), [-2.0, 0.0, 4.0], atol=0.05)
    np.testing.assert_allclose(x.std(0), [0.1, 1.0, 3.0], rtol=0.03)
    y = _fresh(dtype="float64").normal_(1.0, 2.0).numpy()
    np.testing.assert_allclose([y.mean(), y.std()], [1.0, 2.0], atol=0.03)


def test_exponential_mean():
    paddle.seed(31)
    for lam in (0.5, 2.0, 7.0):
        x = _fresh()
        assert x.exponential_(lam) is x
        v = x.numpy().astype(np.float64)
        assert v.min() >= 0
        np.testing.assert_allclose(v.mean(), 1 / lam, rtol=0.02)
        np.testing.assert_allclose(v.std(), 1 / lam, rtol=0.03)


def test_cauchy_and_geometric():
    paddle.seed(32)
    c = paddle.cauchy_(_fresh(dtype="float64"), loc=1.5, scale=2.0).numpy()
    np.testing.assert_allclose(np.median(c), 1.5, atol=0.05)
    q1, q3 = np.percentile(c, [25, 75])
    np.testing.assert_allclose(q3 - q1, 4.0, rtol=0.05)  # IQR of Cauchy = 2 * scale
    g = paddle.geometric_(_fresh(dtype="float64"), 0.25).numpy()
    assert g.min() >= 1 and np.all(g == np.round(g))
    np.testing.assert_allclose(g.mean(), 4.0, rtol=0.02)
    gt = paddle.zeros([N // 2, 2]).geometric_(paddle.to_tensor([0.5, 0.1])).numpy()
    np.testing.assert_allclose(gt.mean(0), [2.0, 10.0], rtol=0.03)


def test_bernoulli_poisson_moments():
    paddle.seed(33)
    p = np.array([0.0, 0.1, 0.5, 0.9, 1.0], "float32")
    b = paddle.bernoulli(paddle.to_tensor(np.tile(p, (N // 5, 1)))).numpy()
    assert set(np.unique(b)) <= {0.0, 1.0}
    np.testing.assert_allclose(b.mean(0), p, atol=0.01)
    lam = np.array([0.5, 3.0, 20.0])
    x = paddle.poisson(paddle.to_tensor(np.tile(lam, (N // 3, 1)))).numpy()
    assert np.all(x == np.round(x)) and x.min() >= 0
    np.testing.assert_allclose(x.mean(0), lam, rtol=0.02)
    np.testing.assert_allclose(x.var(0), lam, rtol=0.05)


def test_randint_randperm_distribution():
    paddle.seed(34)
    r = paddle.randint(-3, 4, [N]).numpy()
    assert r.min() == -3 and r.max() == 3
    counts = np.bincount(r + 3) / N
    np.testing.assert_allclose(counts, np.full(7, 1 / 7), atol=0.005)
    perm = paddle.randperm(1000).numpy()
    np.testing.assert_array_equal(np.sort(perm), np.arange(1000))
    like = paddle.randint_like(paddle.zeros([N], "float64"), 2, 5).numpy()
    assert set(np.unique(like)) == {2.0, 3.0, 4.0}


def test_multinomial_frequencies():
    paddle.seed(35)
    p = np.array([[1.0, 2.0, 7.0], [5.0, 0.0, 5.0]])
    s = paddle.multinomial(paddle.to_tensor(p), 50_000, replacement=True).numpy()
    for row, probs in zip(s, p / p.sum(1, keepdims=True)):
        np.testing.assert_allclose(np.bincount(row, minlength=3) / len(row), probs, atol=0.01)
    assert not (s[1] == 1).any()
    # without replacement: distinct indices, never a zero-probability category
    w = paddle.multinomial(paddle.to_tensor([[0.0, 1.0, 1.0, 2.0]] * 2000), 3).numpy()
    assert all(len(set(r)) == 3 for r in w)
    assert not (w == 0).any()
    # first draw without replacement follows the probabilities
    np.testing.assert_allclose(np.bincount(w[:, 0], minlength=4)[1:] / 2000,
                               [0.25, 0.25, 0.5], atol=0.04)


def test_random_on_device(device):
    paddle.seed(8)
    a = paddle.rand([1000])
    assert a.place.is_gpu_place() == (device == "gpu")
    paddle.seed(8)
    np.testing.assert_array_equal(paddle.rand([1000]).numpy(), a.numpy())
    v = a.numpy()
    assert 0.45 < v.mean() < 0.55
    st = paddle.get_rng_state()
    n1 = paddle.randn([10]).numpy()
    paddle.set_rng_state(st)
    np.testing.assert_array_equal(paddle.randn([10]).numpy(), n1)
    x = paddle.zeros([500])
    x.exponential_(4.0)
    assert abs(x.numpy().mean() - 0.25) < 0.05
    assert paddle.randperm(6).place == a.place
    m = paddle.multinomial(paddle.to_tensor([[0.1, 0.9]]), 3, True)
    assert m.shape == [1, 3] and m.place == a.place


# ---------------------------------------------------------------- gradients

def test_normal_gradients():
    mean = paddle.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
    std = paddle.to_tensor([0.5, 1.0, 2.0], stop_gradient=False)
    paddle.seed(4)
    out = paddle.normal(mean, std)
    assert not out.stop_gradient
    out.sum().backward()
    np.testing.assert_allclose(mean.grad.numpy(), [1.0, 1.0, 1.0])
    noise = (out.numpy() - mean.numpy()) / std.numpy()
    np.testing.assert_allclose(std.grad.numpy(), noise, rtol=1e-5)


def test_poisson_gradient_is_zero():
    lam = paddle.to_tensor([1.0, 4.0], stop_gradient=False)
    out = paddle.poisson(lam)
    assert not out.stop_gradient
    (out * 3).sum().backward()
    np.testing.assert_array_equal(lam.grad.numpy(), [0.0, 0.0])
    assert paddle.bernoulli(lam * 0.1).stop_gradient


def test_inplace_random_fill_cuts_the_gradient():
    w = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    h = w * 2
    h.normal_()
    assert not h.stop_gradient
    (h + w).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, 1.0])


@pytest.mark.parametrize("name", ["uniform_", "normal_", "exponential_", "cauchy_"])
def test_inplace_random_on_leaf_that_needs_grad_raises(name):
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    with pytest.raises((ValueError, RuntimeError), match="inplace"):
        getattr(x, name)()
    with paddle.no_grad():
        getattr(x, name)()


def test_inplace_version_bumps():
    x = paddle.zeros([3])
    v = x.inplace_version
    x.uniform_()
    x.normal_()
    paddle.normal_(x)
    assert x.inplace_version == v + 3


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize("p", [1.5, -0.1, float("nan")])
def test_bernoulli_out_of_range_raises(p):
    x = paddle.to_tensor([0.5, p])
    with pytest.raises(ValueError, match="bernoulli"):
        paddle.bernoulli(x)
    with pytest.raises(IndexError):  # Paddle raises IndexError (OutOfRange)
        paddle.bernoulli(x)


@pytest.mark.parametrize("call,exc", [
    (lambda: paddle.rand([2], "int32"), TypeError),
    (lambda: paddle.randn([2], "int64"), TypeError),
    (lambda: paddle.rand([-1]), ValueError),
    (lambda: paddle.rand(None), TypeError),
    (lambda: paddle.randint(5, 3), ValueError),
    (lambda: paddle.randint(-3, shape=[2]), ValueError),
    (lambda: paddle.randint(0, 5, [2], "float32"), TypeError),
    (lambda: paddle.randint_like(paddle.zeros([2]), 3, 3), ValueError),
    (lambda: paddle.randperm(-1), ValueError),
    (lambda: paddle.randperm(3, "bool"), TypeError),
    (lambda: paddle.normal(), TypeError),
    (lambda: paddle.normal(paddle.ones([2]), paddle.ones([3])), ValueError),
    (lambda: paddle.bernoulli(paddle.to_tensor([1, 0])), TypeError),
    (lambda: paddle.poisson(paddle.to_tensor([1, 2])), TypeError),
    (lambda: paddle.poisson(paddle.to_tensor([-1.0])), ValueError),
    (lambda: paddle.multinomial(paddle.to_tensor([0.2, 0.8]), 3), ValueError),
    (lambda: paddle.multinomial(paddle.to_tensor([[0.2, -0.8]]), 1), ValueError),
    (lambda: paddle.multinomial(paddle.to_tensor([[0.0, 0.0]]), 1), ValueError),
    (lambda: paddle.multinomial(paddle.to_tensor([1, 2]), 1), TypeError),
    (lambda: paddle.multinomial(paddle.ones([2, 2, 2]), 1), ValueError),
    (lambda: paddle.multinomial(paddle.ones([2]), 0), ValueError),
    (lambda: paddle.to_tensor([1, 2]).uniform_(), TypeError),
    (lambda: paddle.to_tensor([1, 2]).exponential_(), TypeError),
    (lambda: paddle.zeros([2]).exponential_(0.0), ValueError),
    (lambda: paddle.cauchy_(paddle.zeros([2]), scale=-1.0), ValueError),
    (lambda: paddle.geometric_(paddle.zeros([2]), 1.5), ValueError),
    (lambda: paddle.geometric_(paddle.to_tensor([1, 2]), 0.5), TypeError),
])
def test_errors(call, exc):
    with pytest.raises(exc) as info:
        call()
    assert str(info.value)


def test_large_index_code_paths_are_64bit():
    """Index arithmetic in multinomial/randperm uses int64 arrays."""
    paddle.seed(0)
    out = paddle.multinomial(paddle.ones([3, 5]), 4, replacement=True)
    assert out.dtype == paddle.int64
    assert paddle.randperm(3)._data.dtype == np.int64
    assert frandom.randint_array(0, 2 ** 40, (4,), np.int64).max() >= 0


def test_float_inputs_are_checked_with_the_shared_wording():
    # bernoulli, poisson, multinomial and normal's tensor arguments use tensor._helpers.float_arg
    x = paddle.to_tensor([1, 0])
    for fn, arg, call in ((paddle.bernoulli, "x", lambda: paddle.bernoulli(x)),
                          (paddle.poisson, "x", lambda: paddle.poisson(x)),
                          (paddle.multinomial, "x", lambda: paddle.multinomial(x)),
                          (paddle.normal, "mean", lambda: paddle.normal(mean=x))):
        with pytest.raises(TypeError, match=rf"{fn.__name__}: argument '{arg}' has dtype int64, "
                                            "expected a floating-point Tensor"):
            call()


def test_number_arguments_share_one_check():
    # tensor._helpers.number_arg reads the numbers of random ops, initializers and clips: a
    # number, a NumPy scalar or a one-element Tensor; reals only (no bool) where a float is meant
    one = paddle.to_tensor([0.5])
    assert paddle.nn.initializer.Constant(one)._value == 0.5
    assert paddle.nn.initializer.Normal(np.float32(0.25), 2)._std == 2.0
    assert paddle.nn.ClipGradByNorm(one).clip_norm == 0.5
    assert paddle.nn.ClipGradByValue(np.int64(3)).max == 3.0
    assert paddle.uniform([2], min=np.float64(-0.5), max=one).shape == [2]
    with pytest.raises(ValueError, match=r"ClipGradByNorm: 'clip_norm' given as a Tensor must "
                                         r"have one element, got shape \[2\]"):
        paddle.nn.ClipGradByNorm(paddle.to_tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match=r"Constant: 'value' must be a real number \(int or "
                                        r"float\), got bool"):
        paddle.nn.initializer.Constant(True)
    with pytest.raises(TypeError, match="uniform: 'min' must be a number, got str"):
        paddle.uniform([2], min="0")
