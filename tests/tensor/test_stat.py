"""Reductions and statistics (paddle_hl/tensor/stat.py) against Paddle 2.6.2, NumPy and finite
differences."""

import numpy as np
import pytest

import paddle_hl as paddle
from tests.op_check import check_op, check_parity, gradcheck, numeric_grad

RNG = np.random.default_rng(1234)


def _x(shape, dtype="float32"):
    # distinct values: no ties, so every gradient is well defined
    n = int(np.prod(shape))
    vals = RNG.permutation(n).astype(np.float64) / max(n, 1) - 0.5
    return (vals.reshape(shape) + RNG.uniform(-0.01, 0.01, shape)).astype(dtype)


AXES = [None, 0, -1, [0, 2], [1]]
MULTI_AXIS_OPS = {
    "sum": lambda P, a, ax, k: P.sum(a, axis=ax, keepdim=k),
    "mean": lambda P, a, ax, k: P.mean(a, axis=ax, keepdim=k),
    "prod": lambda P, a, ax, k: P.prod(a + 1.5, axis=ax, keepdim=k),
    "max": lambda P, a, ax, k: P.max(a, axis=ax, keepdim=k),
    "min": lambda P, a, ax, k: P.min(a, axis=ax, keepdim=k),
    "amax": lambda P, a, ax, k: P.amax(a, axis=ax, keepdim=k),
    "amin": lambda P, a, ax, k: P.amin(a, axis=ax, keepdim=k),
    "logsumexp": lambda P, a, ax, k: P.logsumexp(a, axis=ax, keepdim=k),
    "std": lambda P, a, ax, k: P.std(a, axis=ax, keepdim=k),
    "var": lambda P, a, ax, k: P.var(a, axis=ax, keepdim=k, unbiased=False),
    "nansum": lambda P, a, ax, k: P.nansum(a, axis=ax, keepdim=k),
    "nanmean": lambda P, a, ax, k: P.nanmean(a, axis=ax, keepdim=k),
    "nanmedian": lambda P, a, ax, k: P.nanmedian(a, axis=ax, keepdim=k),
    "quantile": lambda P, a, ax, k: P.quantile(a, [0.25, 0.6], axis=ax, keepdim=k),
    "nanquantile": lambda P, a, ax, k: P.nanquantile(a, 0.35, axis=ax, keepdim=k),
    "median": lambda P, a, ax, k: P.median(a, axis=ax, keepdim=k),
}


# ---------------------------------------------------------------- parity: values, dtypes, grads

@pytest.mark.parity
@pytest.mark.parametrize("op", sorted(MULTI_AXIS_OPS))
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_reduction_parity(pd, op, axis, keepdim):
    if op == "median" and isinstance(axis, (list, tuple)):
        pytest.skip("median takes a single int axis")
    fn = MULTI_AXIS_OPS[op]
    check_parity(lambda P, a: fn(P, a, axis, keepdim), [_x((3, 4, 5))], pd)


@pytest.mark.parity
@pytest.mark.parametrize("op", sorted(MULTI_AXIS_OPS))
def test_reduction_parity_float64(pd, op):
    fn = MULTI_AXIS_OPS[op]
    check_parity(lambda P, a: fn(P, a, 1, False), [_x((4, 6), "float64")], pd)


@pytest.mark.parity
@pytest.mark.parametrize("op", sorted(MULTI_AXIS_OPS))
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_reduction_parity_0d(pd, op, axis):
    """0-D inputs reduce to 0-D whatever the axis/keepdim."""
    if op in ("quantile", "nanquantile") and axis is not None:
        pytest.skip("Paddle's quantile refuses an axis on a 0-D tensor")
    fn = MULTI_AXIS_OPS[op]
    for keepdim in (False, True):
        res = check_parity(lambda P, a: fn(P, a, axis, keepdim),
                           [np.array(0.3, dtype="float32")], pd)
        assert res["hl"][3][0] == ([2] if op == "quantile" else [])


@pytest.mark.parity
@pytest.mark.parametrize("op", ["sum", "prod", "max", "min", "amax", "amin", "all", "any",
                                "count_nonzero", "nansum", "mean", "nanmedian", "median"])
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_inputs_parity(pd, op, dtype):
    x = RNG.integers(-5, 6, size=(3, 4)).astype(dtype)
    if op == "mean":
        # Paddle 2.6 averages integers in integer arithmetic; paddle_hl in the default float
        # dtype. Both agree on exact means.
        x = np.full((3, 4), 3, dtype=dtype)
        out = paddle.mean(paddle.to_tensor(x), axis=1)
        assert out.dtype == paddle.float32
        np.testing.assert_allclose(out.numpy(), np.full(3, 3.0))
        return
    check_parity(lambda P, a: getattr(P, op)(a, axis=1), [x], pd, grad=False)
    check_parity(lambda P, a: getattr(P, op)(a), [x], pd, grad=False)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["bool", "int16", "int32", "int64", "float32", "float64"])
def test_sum_dtype_rules_parity(pd, dtype):
    """bool/int32 sum to int64; int16 is kept."""
    x = (RNG.integers(0, 3, size=(2, 3)) > 0).astype(dtype) if dtype == "bool" else \
        RNG.integers(-3, 4, size=(2, 3)).astype(dtype)
    check_parity(lambda P, a: P.sum(a), [x], pd, grad=False)
    check_parity(lambda P, a: P.sum(a, axis=0, keepdim=True), [x], pd, grad=False)
    if dtype not in ("bool", "int16"):  # Paddle's CPU nansum has no bool/int16 kernel
        check_parity(lambda P, a: P.nansum(a, axis=1), [x], pd, grad=False)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_sum_dtype_argument_length1_axis(pd, dtype):
    """dtype= is honoured even when the reduced axis has length 1."""
    x = np.array([[1, 2, 3]]).astype(dtype)
    for target in ("int64", "float64", "float32"):
        check_parity(lambda P, a: P.sum(a, axis=0, dtype=target), [x], pd, grad=False)
    out = paddle.sum(paddle.to_tensor(x), axis=0, dtype="int32")
    assert out.dtype == paddle.int32
    np.testing.assert_array_equal(out.numpy(), [1, 2, 3])


def test_sum_dtype_grad_through_cast():
    x = paddle.to_tensor(np.array([[1., 2.]], dtype="float32"), stop_gradient=False)
    y = paddle.sum(x, axis=0, dtype="float64")
    assert y.dtype == paddle.float64
    y.sum().backward()
    assert x.grad.dtype == paddle.float32
    np.testing.assert_allclose(x.grad.numpy(), [[1., 1.]])


@pytest.mark.parity
def test_prod_dtype_parity(pd):
    x = np.array([[1, 2, 3]], dtype="int64")
    check_parity(lambda P, a: P.prod(a, dtype="float32"), [x], pd, grad=False)
    check_parity(lambda P, a: P.prod(a, axis=0, dtype="int32"), [x], pd, grad=False)


# ---------------------------------------------------------------- accumulation dtypes

@pytest.mark.parametrize("op", ["sum", "mean", "max", "min", "prod", "any", "all", "amax",
                                "logsumexp", "std", "var", "nansum", "nanmean", "median",
                                "count_nonzero"])
def test_full_reduction_is_0d(op):
    """axis=None gives shape [] (never [1]); item() and float() work."""
    x = paddle.to_tensor(_x((2, 3)) + 1.0)
    out = getattr(paddle, op)(x)
    assert out.shape == []
    assert out.numpy().shape == ()
    out.item()
    getattr(x, op)()  # also a Tensor method


@pytest.mark.parametrize("op", ["sum", "mean", "max", "min", "prod", "amax", "amin", "nansum",
                                "nanmean", "median", "nanmedian", "logsumexp"])
def test_length1_axis_returns_values(op):
    """reducing an axis of length 1 returns the input values unchanged."""
    x = _x((3, 1, 4))
    out = getattr(paddle, op)(paddle.to_tensor(x), axis=1)
    assert out.shape == [3, 4]
    np.testing.assert_allclose(out.numpy(), x[:, 0, :], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("op", ["sum", "mean", "nansum", "nanmean", "var", "std", "logsumexp",
                                "prod", "max", "amin"])
def test_low_precision_accumulates_in_float32(dtype, op):
    """fp16/bf16 reductions accumulate in fp32 and keep the input dtype."""
    rng = np.random.default_rng(0)
    base = rng.uniform(0.99, 1.01, size=(4, 2048)) if op == "prod" else \
        rng.uniform(0.5, 1.5, size=(4, 2048))
    x = paddle.to_tensor(base.astype("float32")).astype(dtype)
    ref32 = x.astype("float32")
    out = getattr(paddle, op)(x, axis=1)
    assert out.dtype == x.dtype
    exp = getattr(paddle, op)(ref32, axis=1).numpy()
    tol = 1e-2 if dtype == "bfloat16" else 2e-3
    np.testing.assert_allclose(out.astype("float32").numpy(), exp, rtol=tol)


def test_float16_sum_does_not_saturate():
    x = paddle.full([8192], 1.0, dtype="float16")
    # fp16 accumulation would stop at 2048; fp32 accumulation gives 8192 exactly
    np.testing.assert_allclose(paddle.sum(x).astype("float32").numpy(), 8192.0)


# ---------------------------------------------------------------- gradients

def test_max_min_tie_gradients_parity_b42(pd):
    """amax/amin share the gradient evenly among ties; max/min give each tie the full
    gradient, as Paddle does."""
    x = np.array([[1., 3., 3., 2.], [5., 5., 5., 0.], [0., 0., 4., 4.]], dtype="float32")
    for op in ("max", "min", "amax", "amin"):
        for axis in (None, 1, 0, [0, 1]):
            check_parity(lambda P, a: getattr(P, op)(a, axis=axis), [x], pd)


def test_amax_splits_evenly():
    x = paddle.to_tensor([1., 3., 3., 2.], stop_gradient=False)
    paddle.amax(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [0., .5, .5, 0.])
    x.clear_grad()
    paddle.max(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [0., 1., 1., 0.])


GRAD_OPS = {
    "sum": lambda a: paddle.sum(a, axis=[0, 2]),
    "mean": lambda a: paddle.mean(a, axis=1, keepdim=True),
    "prod": lambda a: paddle.prod(a, axis=1),
    "max": lambda a: paddle.max(a, axis=-1),
    "min": lambda a: paddle.min(a),
    "amax": lambda a: paddle.amax(a, axis=[0, 1]),
    "amin": lambda a: paddle.amin(a, axis=2, keepdim=True),
    "logsumexp": lambda a: paddle.logsumexp(a, axis=1),
    "std": lambda a: paddle.std(a, axis=[1, 2]),
    "var": lambda a: paddle.var(a, axis=0, unbiased=False),
    "nansum": lambda a: paddle.nansum(a, axis=1),
    "nanmean": lambda a: paddle.nanmean(a, axis=2),
    "median": lambda a: paddle.median(a, axis=1),
    "nanmedian": lambda a: paddle.nanmedian(a, axis=[0, 2]),
    "quantile": lambda a: paddle.quantile(a, [0.3, 0.8], axis=1),
    "nanquantile": lambda a: paddle.nanquantile(a, 0.45),
}


@pytest.mark.parametrize("op", sorted(GRAD_OPS))
def test_gradcheck(op):
    gradcheck(GRAD_OPS[op], [_x((3, 4, 2), "float64")])


@pytest.mark.parametrize("op", ["sum", "mean", "prod", "max", "min", "amax", "amin", "logsumexp",
                                "std", "var", "nansum", "nanmean", "median", "quantile"])
def test_create_graph_second_order(op):
    """The hi rules: the create_graph gradient equals the plain one and can be differentiated
    again (checked against finite differences of the first gradient)."""
    fn = GRAD_OPS[op]
    x0 = _x((3, 4, 2), "float64") + (1.5 if op in ("prod", "std") else 0.0)
    w = np.random.default_rng(3).standard_normal(x0.shape)

    def first_grad(arr, create_graph):
        x = paddle.to_tensor(arr, stop_gradient=False)
        y = fn(x * x * x)  # a nonlinear inner map, so that the second derivative is nonzero
        (g,) = paddle.grad(paddle.sum(y * y), x, create_graph=create_graph)
        return x, g

    x, g = first_grad(x0, True)
    _, g_plain = first_grad(x0, False)
    np.testing.assert_allclose(g.numpy(), g_plain.numpy(), rtol=1e-10, atol=1e-12)
    assert not g.stop_gradient
    paddle.sum(g * paddle.to_tensor(w)).backward()

    def scalar(arr):
        return float(np.sum(first_grad(arr, False)[1].numpy() * w))

    num = numeric_grad(scalar, [x0.copy()], 0, eps=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), num, rtol=1e-5, atol=1e-5)


def test_prod_gradient_with_zeros():
    """The gradient at a zero is the product of the other elements (Paddle gives NaN there)."""
    x = paddle.to_tensor([[2., 0., 3.], [0., 0., 4.], [1., 2., 3.]], dtype="float64",
                         stop_gradient=False)
    paddle.prod(x, axis=1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0., 6., 0.], [0., 0., 0.], [6., 3., 2.]])
    gradcheck(lambda a: paddle.prod(a, axis=0), [np.array([[2., 0.], [0., 3.], [4., 5.]])])


def test_std_var_unbiased_single_element():
    """Paddle divides by max(N - 1, 1): one element has variance 0, not NaN."""
    x = paddle.to_tensor([[1.5], [2.0]])
    np.testing.assert_allclose(paddle.var(x, axis=1).numpy(), [0., 0.])
    np.testing.assert_allclose(paddle.std(x, axis=1).numpy(), [0., 0.])
    np.testing.assert_allclose(paddle.var(paddle.to_tensor([1., 3.])).numpy(), 2.0)


def test_logsumexp_stability():
    out = paddle.logsumexp(paddle.to_tensor([1000., 1000.]))
    np.testing.assert_allclose(out.numpy(), 1000 + np.log(2), rtol=1e-6)
    # all -inf gives NaN in Paddle 2.6 (the max is subtracted as is)
    assert np.isnan(paddle.logsumexp(paddle.to_tensor([-np.inf, -np.inf])).numpy())


# ---------------------------------------------------------------- NaN rules

def _with_nans(shape=(3, 4, 5)):
    x = _x(shape)
    x[0, 1, 2] = np.nan
    x[2, 0, 0] = np.nan
    x[1, 3, 4] = np.nan
    return x


@pytest.mark.parity
@pytest.mark.parametrize("op", ["nansum", "nanmean", "nanmedian", "nanquantile"])
@pytest.mark.parametrize("axis", [None, 1, [0, 2]], ids=str)
def test_nan_ops_ignore_nan_parity(pd, op, axis):
    x = _with_nans()
    if op == "nanquantile":
        check_parity(lambda P, a: P.nanquantile(a, [0.2, 0.7], axis=axis), [x], pd)
    else:
        check_parity(lambda P, a: getattr(P, op)(a, axis=axis), [x], pd)


def test_median_quantile_max_nan_propagates():
    x = _with_nans()
    # Paddle 2.6 CPU returns NaN only for some NaN positions (it depends on the comparison
    # order); paddle_hl follows NumPy and Paddle's quantile docstring: NaN propagates.
    check_op(lambda P, a: P.max(a, axis=1), lambda a: np.max(a, axis=1), [x])
    check_op(lambda P, a: P.quantile(a, 0.4, axis=1), lambda a: np.quantile(
        a.astype("float64"), 0.4, axis=1), [x])
    check_op(lambda P, a: P.median(a, axis=1), lambda a: np.median(a, axis=1), [x])


def test_nan_only_groups():
    x = np.array([[1., np.nan, 3.], [np.nan, np.nan, np.nan]], dtype="float32")
    t = paddle.to_tensor(x, stop_gradient=False)
    out = paddle.nanmedian(t, axis=1)
    np.testing.assert_allclose(out.numpy(), [2., np.nan])
    out.sum().backward()
    # the all-NaN row gets no gradient (Paddle scatters it into other rows)
    np.testing.assert_allclose(t.grad.numpy(), [[.5, 0., .5], [0., 0., 0.]])
    np.testing.assert_allclose(paddle.nanmean(paddle.to_tensor(x), axis=1).numpy(), [2., np.nan])
    np.testing.assert_allclose(paddle.nansum(paddle.to_tensor(x), axis=1).numpy(), [4., 0.])
    assert np.isnan(paddle.nanquantile(paddle.to_tensor(x[1]), 0.5).numpy())


# ---------------------------------------------------------------- median / quantile details

def test_median_even_count_averages_middle_values():
    x = paddle.to_tensor([1., 3., 5., 2.], stop_gradient=False)
    out = paddle.median(x)
    np.testing.assert_allclose(out.numpy(), 2.5)
    out.backward()
    np.testing.assert_allclose(x.grad.numpy(), [0., .5, 0., .5])


@pytest.mark.parity
def test_median_dtypes_parity(pd):
    for dtype in ("int32", "int64", "float32", "float64"):
        x = RNG.integers(-9, 9, size=(4, 6)).astype(dtype)
        check_parity(lambda P, a: P.median(a, axis=0, keepdim=True), [x], pd, grad=False)
        check_parity(lambda P, a: P.nanmedian(a), [x], pd, grad=False)
        check_parity(lambda P, a: P.quantile(a, [0.1, 0.9], axis=1), [x], pd, grad=False)


@pytest.mark.parity
def test_quantile_shapes_parity(pd):
    x = _x((2, 3, 4))
    check_parity(lambda P, a: P.quantile(a, [0.1, 0.9], axis=[0, 2], keepdim=True), [x], pd)
    check_parity(lambda P, a: P.quantile(a, (0.5,), axis=2), [x], pd)
    check_parity(lambda P, a: P.quantile(a, 1), [x], pd)
    check_parity(lambda P, a: P.quantile(a, 0), [x], pd)
    check_parity(lambda P, a: P.quantile(a, 0.5, keepdim=True), [x], pd)


def test_quantile_output_is_float64():
    out = paddle.quantile(paddle.to_tensor([1., 2., 3., 4.]), 0.5)
    assert out.dtype == paddle.float64 and out.shape == []
    np.testing.assert_allclose(out.numpy(), 2.5)


def test_quantile_and_median_errors():
    x = paddle.to_tensor([1., 2., 3.])
    with pytest.raises(ValueError, match="range"):
        paddle.quantile(x, 1.5)
    with pytest.raises(ValueError, match="empty"):
        paddle.quantile(x, [])
    with pytest.raises(TypeError, match="q"):
        paddle.quantile(x, paddle.to_tensor(0.5))
    with pytest.raises(ValueError, match="axis"):
        paddle.median(paddle.ones([2, 2]), axis=[0, 1])
    with pytest.raises(ValueError):
        paddle.median(paddle.zeros([0]))
    with pytest.raises(ValueError, match="axis"):
        paddle.nanmedian(x, axis=[])


# ---------------------------------------------------------------- empty tensors and axis errors

@pytest.mark.parity
@pytest.mark.parametrize("op", ["sum", "mean", "prod", "max", "min", "amax", "amin", "all",
                                "any", "logsumexp", "std", "var", "median", "count_nonzero"])
def test_empty_reduction_raises_like_paddle(pd, op):
    for P in (paddle, pd):
        x = P.zeros([0, 3], dtype="bool" if op in ("all", "any") else "float32")
        with pytest.raises(ValueError):
            getattr(P, op)(x, axis=0 if op != "median" else None)


def test_axis_errors():
    x = paddle.ones([2, 3, 4])
    with pytest.raises(ValueError, match="sum"):
        paddle.sum(x, axis=3)
    with pytest.raises(ValueError, match="repeated"):
        paddle.sum(x, axis=[1, 1])
    with pytest.raises(TypeError, match="max"):
        paddle.max(x, axis=1.0)
    with pytest.raises(TypeError, match="bool"):
        paddle.max(paddle.to_tensor([True, False]))
    with pytest.raises(TypeError):
        paddle.sum(None)


def test_axis_as_tensor_and_negative():
    x = paddle.to_tensor(_x((2, 3)))
    np.testing.assert_allclose(paddle.max(x, axis=paddle.to_tensor(1)).numpy(),
                               x.numpy().max(1))
    np.testing.assert_allclose(paddle.sum(x, axis=paddle.to_tensor([-1])).numpy(),
                               x.numpy().sum(-1), rtol=1e-6)
    np.testing.assert_allclose(paddle.mean(x, axis=[]).numpy(), x.numpy().mean(), rtol=1e-6)


# ---------------------------------------------------------------- all / any / count_nonzero

@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["bool", "int32", "int64", "float32", "float64"])
def test_all_any_count_nonzero_parity(pd, dtype):
    x = (RNG.integers(0, 3, size=(3, 4)) > 0).astype(dtype)
    for op in ("all", "any", "count_nonzero"):
        for axis, keep in ((None, False), (1, True), ([0, 1], False), (0, False)):
            check_parity(lambda P, a: getattr(P, op)(a, axis=axis, keepdim=keep), [x], pd,
                         grad=False)


# ---------------------------------------------------------------- histogram / bincount

@pytest.mark.parity
def test_histogram_parity(pd):
    cases = [
        (np.array([1., 2., 3., 10.], "float32"), dict(bins=3, min=0, max=4)),
        (np.array([2., 2.], "float32"), dict(bins=3)),
        (_x((4, 5)), dict(bins=7)),
        (np.array([0., 0.5, 1., 1.], "float64"), dict(bins=2, min=0, max=1)),
        (np.array([1, 2, 3, 7, 9], "int64"), dict(bins=4)),
        (np.array([1, 2, 3, 7, 9], "int32"), dict(bins=3, min=2, max=8)),
        (np.array([1., np.nan, 2.], "float32"), dict(bins=2)),
        (np.zeros([0], "float32"), dict(bins=3)),
    ]
    for x, kw in cases:
        check_parity(lambda P, a: P.histogram(a, **kw), [x], pd, grad=False)


def test_histogram_errors_and_no_grad():
    x = paddle.to_tensor([1., 2.], stop_gradient=False)
    assert paddle.histogram(x, bins=2).stop_gradient
    with pytest.raises(ValueError, match="bins"):
        paddle.histogram(x, bins=0)
    with pytest.raises(ValueError, match="max"):
        paddle.histogram(x, bins=2, min=3, max=1)


@pytest.mark.parity
def test_bincount_parity(pd):
    x = np.array([0, 1, 1, 3, 5, 1], "int64")
    check_parity(lambda P, a: P.bincount(a), [x], pd, grad=False)
    check_parity(lambda P, a: P.bincount(a, minlength=9), [x.astype("int32")], pd, grad=False)
    for wdt in ("float32", "float64", "int64"):
        w = RNG.uniform(0, 2, size=x.shape).astype(wdt)
        check_parity(lambda P, a, b: P.bincount(a, weights=b, minlength=2), [x, w], pd,
                     grad=False)
    check_parity(lambda P, a: P.bincount(a), [np.zeros([0], "int64")], pd, grad=False)


def test_bincount_errors():
    with pytest.raises(TypeError, match="integer"):
        paddle.bincount(paddle.to_tensor([1., 2.]))
    with pytest.raises(ValueError, match="1-D"):
        paddle.bincount(paddle.to_tensor([[0, 1]]))
    with pytest.raises(ValueError, match="non-negative"):
        paddle.bincount(paddle.to_tensor([0, -1]))
    with pytest.raises(ValueError, match="shape"):
        paddle.bincount(paddle.to_tensor([0, 1]), weights=paddle.to_tensor([1.]))


# ---------------------------------------------------------------- numel / rank / shape

@pytest.mark.parity
def test_numel_rank_shape_parity(pd):
    for shape in ([2, 3, 0], [], [4]):
        x = np.zeros(shape, "float32")
        check_parity(lambda P, a: P.numel(a), [x], pd, grad=False)
        check_parity(lambda P, a: P.rank(a), [x], pd, grad=False)
        check_parity(lambda P, a: P.shape(a), [x], pd, grad=False)


def test_shape_carries_no_gradient_b41():
    x = paddle.to_tensor(_x((2, 3)), stop_gradient=False)
    s = paddle.shape(x)
    assert s.stop_gradient and s.dtype == paddle.int32 and s.shape == [2]
    y = (x * 2).reshape(s).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full((2, 3), 2.0))
    # Tensor.shape stays the list-valued property
    assert x.shape == [2, 3]
    assert x.numel().item() == 6 and x.rank().item() == 2


def test_methods_are_the_same_functions():
    x = paddle.to_tensor(_x((2, 3)))
    for name in ("sum", "mean", "max", "quantile", "histogram", "bincount", "nanmedian"):
        assert getattr(paddle.Tensor, name) is getattr(paddle, name)
    check_op(lambda P, a: a.sum(axis=1), lambda a: a.sum(1), [x.numpy()], rtol=1e-6)
    check_op(lambda P, a: a.var(axis=0), lambda a: a.var(0, ddof=1), [x.numpy()], rtol=1e-5)
    check_op(lambda P, a: a.logsumexp(), lambda a: np.log(np.exp(a).sum()), [x.numpy()],
             rtol=1e-6)


def test_reductions_on_device(device):
    """The same kernels run on the current device's array module (gpu skips without CuPy)."""
    a = _x((3, 4, 5), "float64")
    x = paddle.to_tensor(a, stop_gradient=False)
    checks = [
        (paddle.sum(x, axis=1), a.sum(1)),
        (paddle.amax(x, axis=[0, 2]), a.max((0, 2))),
        (paddle.logsumexp(x, axis=2), np.log(np.exp(a).sum(2))),
        (paddle.std(x, axis=0), a.std(0, ddof=1)),
        (paddle.median(x, axis=1), np.median(a, 1)),
        (paddle.quantile(x, [0.2, 0.7], axis=2), np.quantile(a, [0.2, 0.7], axis=2)),
        (paddle.prod(x, axis=-1), a.prod(-1)),
    ]
    total = None
    for out, ref in checks:
        assert out.place == x.place
        np.testing.assert_allclose(out.numpy(), ref, rtol=1e-10, atol=1e-12)
        total = out.sum() if total is None else total + out.sum()
    total.backward()
    assert x.grad.shape == [3, 4, 5]
    ints = paddle.to_tensor(np.array([0, 2, 2, 5]))
    np.testing.assert_array_equal(paddle.bincount(ints).numpy(), [1, 0, 2, 0, 0, 1])
    np.testing.assert_array_equal(paddle.histogram(ints, bins=5).numpy(), [1, 0, 2, 0, 1])
