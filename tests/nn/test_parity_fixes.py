"""Losses and the Bilinear initializer on ordinary and edge inputs, against Paddle 2.6.2.

Where Paddle 2.6.2 has a bug that is not copied (BCE pos_weight on negative logits, no
gradient for the Gaussian NLL variance, the Bilinear kernel), the test checks agreement where
Paddle is right and the documented formula elsewhere.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import paddle_hl

RTOL, ATOL = 1e-5, 1e-6


def _run(lib, fn, arrays, grad_of):
    ts = [lib.to_tensor(a) for a in arrays]
    for i in grad_of:
        ts[i].stop_gradient = False
    out = fn(lib, *ts)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    w = lib.to_tensor(np.linspace(0.5, 1.5, int(np.prod(outs[0].shape)) or 1)
                      .reshape(outs[0].shape).astype(str(outs[0].dtype).split(".")[-1]))
    (outs[0] * w).sum().backward()
    return [o.numpy() for o in outs], [ts[i].grad for i in grad_of]


def _compare(pd, fn, arrays, grad_of=(0,)):
    (po, pg), (ho, hg) = _run(pd, fn, arrays, grad_of), _run(paddle_hl, fn, arrays, grad_of)
    for a, b in zip(po, ho):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(b, a, rtol=RTOL, atol=ATOL)
    for a, b in zip(pg, hg):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=RTOL, atol=ATOL)
    return ho, hg


# ------------------------------------------------------------------ GaussianNLLLoss
def _gnll_data(var_shape=(4, 3), scale=1.0):
    rng = np.random.RandomState(0)
    x = rng.randn(4, 3).astype("float32")
    y = rng.randn(4, 3).astype("float32")
    v = (rng.rand(*var_shape).astype("float32") + 0.1) * scale
    return x, y, v


@pytest.mark.parity
@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("epsilon", [1e-6, 0.5])
def test_gaussian_nll_parity(pd, full, reduction, epsilon):
    def fn(lib, x, y, v):
        return lib.nn.functional.gaussian_nll_loss(x, y, v, full=full, epsilon=epsilon,
                                                   reduction=reduction)
    # Paddle gives the variance no gradient (not copied): compare input and label gradients
    _compare(pd, fn, _gnll_data(), grad_of=(0, 1))


@pytest.mark.parity
@pytest.mark.parametrize("case", ["var-last-1", "var-last-dropped", "label-broadcast",
                                  "small-var", "float64", "layer"])
def test_gaussian_nll_shapes_parity(pd, case):
    x, y, v = _gnll_data()
    if case == "var-last-1":
        v = v[:, :1].copy()
    elif case == "var-last-dropped":
        v = v[:, 0].copy()
    elif case == "label-broadcast":
        y = y[:, :1].copy()
    elif case == "small-var":
        v = v * 1e-3
    elif case == "float64":
        x, y, v = x.astype("float64"), y.astype("float64"), v.astype("float64")

    def fn(lib, x, y, v):
        if case == "layer":
            return lib.nn.GaussianNLLLoss(full=True, epsilon=0.2)(x, y, v)
        return lib.nn.functional.gaussian_nll_loss(x, y, v, epsilon=0.3 if case ==
                                                   "small-var" else 1e-6)
    _compare(pd, fn, (x, y, v), grad_of=(0,))


@pytest.mark.parity
def test_gaussian_nll_errors_parity(pd):
    x, y, v = _gnll_data()
    for lib in (pd, paddle_hl):
        f = lib.nn.functional.gaussian_nll_loss
        with pytest.raises(ValueError, match="negative"):
            f(lib.to_tensor(x), lib.to_tensor(y), lib.to_tensor(-v))
        with pytest.raises(ValueError):
            f(lib.to_tensor(x), lib.to_tensor(y), lib.to_tensor(v[:2]))


def test_gaussian_nll_variance_gradient():
    x, y, v = (a.astype("float64") for a in _gnll_data())
    vt = paddle_hl.to_tensor(v, stop_gradient=False)
    paddle_hl.nn.functional.gaussian_nll_loss(paddle_hl.to_tensor(x), paddle_hl.to_tensor(y),
                                              vt, reduction="sum").backward()
    np.testing.assert_allclose(vt.grad.numpy(), 0.5 * (1 / v - (x - y) ** 2 / v ** 2),
                               rtol=1e-12)


# ------------------------------------------------------------- BCEWithLogits pos_weight
def _bce_ref(x, y, pw, w=None):
    x, y, pw = (np.asarray(a, "float64") for a in (x, y, pw))
    sp = np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0)  # -log(sigmoid(x))
    loss = (1 - y) * x + (1 + (pw - 1) * y) * sp
    return loss if w is None else loss * w


@pytest.mark.parity
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
def test_bce_with_logits_pos_weight_parity_where_paddle_is_right(pd, reduction, weighted):
    # x >= 0 or y == 0 everywhere: Paddle's kernel and the documented formula agree
    rng = np.random.RandomState(0)
    x = np.abs(rng.randn(6, 3)).astype("float32") * 4
    y = (rng.rand(6, 3) > 0.5).astype("float32")
    x[y == 0] = -x[y == 0]
    pw = np.array([0.5, 2.0, 3.0], "float32")
    w = rng.rand(6, 3).astype("float32")
    arrays = (x, y, pw, w) if weighted else (x, y, pw)

    def fn(lib, x, y, pw, *w):
        return lib.nn.functional.binary_cross_entropy_with_logits(
            x, y, weight=w[0] if w else None, reduction=reduction, pos_weight=pw)

    def layer(lib, x, y, pw, *w):
        return lib.nn.BCEWithLogitsLoss(weight=w[0] if w else None, reduction=reduction,
                                        pos_weight=pw)(x, y)
    for f in (fn, layer):
        ours = f(paddle_hl, *[paddle_hl.to_tensor(a) for a in arrays]).numpy()
        theirs = f(pd, *[pd.to_tensor(a) for a in arrays]).numpy()
        np.testing.assert_allclose(ours, theirs, rtol=RTOL, atol=ATOL)
    ref = _bce_ref(x, y, pw, w if weighted else None)
    ref = ref if reduction == "none" else (ref.mean() if reduction == "mean" else ref.sum())
    np.testing.assert_allclose(ours, ref, rtol=RTOL, atol=ATOL)
    # the gradient is the derivative of the loss; Paddle 2.6.2 adds (pos_weight - 1) * y to
    # it, even for positive logits (not copied)
    xt = paddle_hl.to_tensor(x.astype("float64"), stop_gradient=False)
    paddle_hl.nn.functional.binary_cross_entropy_with_logits(
        xt, paddle_hl.to_tensor(y.astype("float64")), reduction="sum",
        pos_weight=paddle_hl.to_tensor(pw.astype("float64"))).backward()
    sig = 1 / (1 + np.exp(-x.astype("float64")))
    lw = 1 + (pw - 1) * y
    np.testing.assert_allclose(xt.grad.numpy(), (1 - y) - lw * (1 - sig), rtol=1e-10)
    xp_ = pd.to_tensor(x, stop_gradient=False)
    pd.nn.functional.binary_cross_entropy_with_logits(
        xp_, pd.to_tensor(y), reduction="sum", pos_weight=pd.to_tensor(pw)).backward()
    np.testing.assert_allclose(xp_.grad.numpy(), (1 - y) - lw * (1 - sig) + (lw - 1),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parity
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_bce_with_logits_without_pos_weight_parity(pd, reduction):
    rng = np.random.RandomState(3)
    x = (rng.randn(6, 3) * 5).astype("float32")
    y = rng.rand(6, 3).astype("float32")
    w = rng.rand(6, 3).astype("float32")

    def fn(lib, x, y, w):
        return lib.nn.functional.binary_cross_entropy_with_logits(x, y, weight=w,
                                                                  reduction=reduction)
    _compare(pd, fn, (x, y, w), grad_of=(0,))


@pytest.mark.parity
def test_bce_with_logits_pos_weight_negative_logits_follow_documentation(pd):
    x = np.array([-0.5, -2.0, -30.0, -2.0, -2.0], "float32")
    y = np.array([1.0, 1.0, 1.0, 0.5, 1.0], "float32")
    pw = np.array([3.0, 3.0, 3.0, 3.0, 0.5], "float32")
    args = lambda lib: (lib.to_tensor(x), lib.to_tensor(y))  # noqa: E731
    ours = paddle_hl.nn.functional.binary_cross_entropy_with_logits(
        *args(paddle_hl), reduction="none", pos_weight=paddle_hl.to_tensor(pw)).numpy()
    theirs = pd.nn.functional.binary_cross_entropy_with_logits(
        *args(pd), reduction="none", pos_weight=pd.to_tensor(pw)).numpy()
    np.testing.assert_allclose(ours, _bce_ref(x, y, pw), rtol=RTOL)
    # what Paddle 2.6.2 computes instead: pos_weight scales only log(1 + exp(-|x|))
    lw = 1 + (pw - 1) * y
    paddle_formula = (1 - y) * x + lw * np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0)
    np.testing.assert_allclose(theirs, paddle_formula, rtol=RTOL)
    # with pos_weight 1 the two agree
    ones = np.ones_like(pw)
    np.testing.assert_allclose(
        paddle_hl.nn.functional.binary_cross_entropy_with_logits(
            *args(paddle_hl), reduction="none", pos_weight=paddle_hl.to_tensor(ones)).numpy(),
        pd.nn.functional.binary_cross_entropy_with_logits(
            *args(pd), reduction="none", pos_weight=pd.to_tensor(ones)).numpy(), rtol=RTOL)


# ----------------------------------------------------------- softmax_with_cross_entropy
def _swce_inputs(scale):
    rng = np.random.RandomState(0)
    logits = (rng.randn(5, 4) * scale).astype("float32")
    hard = rng.randint(0, 4, (5, 1)).astype("int64")
    soft = rng.rand(5, 4).astype("float32")
    return logits, hard, soft / soft.sum(1, keepdims=True)


@pytest.mark.parity
@pytest.mark.parametrize("scale", [1.0, 30.0, 300.0])
@pytest.mark.parametrize("stable", [True, False])
@pytest.mark.parametrize("soft", [False, True])
def test_softmax_with_cross_entropy_parity(pd, scale, stable, soft):
    logits, hard, soft_lab = _swce_inputs(scale)

    def fn(lib, x, y):
        return lib.nn.functional.softmax_with_cross_entropy(
            x, y, soft_label=soft, numeric_stable_mode=stable, return_softmax=True)
    _compare(pd, fn, (logits, soft_lab if soft else hard))


@pytest.mark.parity
@pytest.mark.parametrize("case", ["ignore", "ignore-neg", "axis0", "axis0-soft", "3d-axis1",
                                  "label-1d", "int32-label", "float64", "neg-inf", "1d",
                                  "ce-big", "ce-soft-big", "ce-mean-big"])
def test_softmax_with_cross_entropy_cases_parity(pd, case):
    logits, hard, soft = _swce_inputs(1.0)
    rng = np.random.RandomState(1)
    F = "nn.functional"  # noqa: N806

    def f(lib):
        mod = lib
        for part in F.split("."):
            mod = getattr(mod, part)
        return mod
    arrays, call = (logits, hard), None
    if case == "ignore":
        call = lambda lib, x, y: f(lib).softmax_with_cross_entropy(x, y, ignore_index=2)  # noqa
    elif case == "ignore-neg":
        arrays = (logits, np.where(hard == 2, -1, hard))
        call = lambda lib, x, y: f(lib).softmax_with_cross_entropy(x, y, ignore_index=-1)  # noqa
    elif case == "axis0":
        arrays = (logits, rng.randint(0, 5, (1, 4)).astype("int64"))
        call = lambda lib, x, y: f(lib).softmax_with_cross_entropy(x, y, axis=0)  # noqa
    elif case == "axis0-soft":
        arrays = (logits * 50, (soft / soft.sum(0, keepdims=True)).astype("float32"))
        call = lambda lib, x, y: f(lib).softmax_with_cross_entropy(  # noqa: E731
            x, y, axis=0, soft_label=True)
    elif case == "3d-axis1":
        arrays = (np.repeat(logits[:, :, None], 2, 2) * 40,
                  rng.randint(0, 4, (5, 1, 2)).astype("int64"))
        call = lambda lib, x, y: f(lib).softmax_with_cross_entropy(x, y, axis=1)  # noqa
    elif case == "label-1d":
        arrays = (logits, hard[:, 0].copy())
    elif case == "int32-label":
        arrays = (logits * 100, hard.astype("int32"))
    elif case == "float64":
        arrays = (logits.astype("float64") * 100, hard)
    elif case == "neg-inf":
        arrays = (np.where(np.arange(4) == 3, -np.inf, logits).astype("float32"), hard % 3)
    elif case == "1d":
        arrays = (logits[0] * 100, hard[0].copy())
    elif case == "ce-big":
        arrays = (logits * 100, hard)
        call = lambda lib, x, y: f(lib).cross_entropy(x, y, reduction="none")  # noqa
    elif case == "ce-soft-big":
        arrays = (logits * 100, soft)
        call = lambda lib, x, y: f(lib).cross_entropy(x, y, soft_label=True,  # noqa: E731
                                                      reduction="none")
    elif case == "ce-mean-big":
        arrays = (logits * 100, hard)
        call = lambda lib, x, y: f(lib).cross_entropy(  # noqa: E731
            x, y, weight=lib.to_tensor(np.array([1, 2, 3, 4], arrays[0].dtype)))
    if call is None:
        call = lambda lib, x, y: f(lib).softmax_with_cross_entropy(x, y)  # noqa: E731
    _compare(pd, call, arrays)


@pytest.mark.parity
def test_softmax_cross_entropy_floors_shifted_logits_at_64_parity(pd):
    # two equal winners: loss = min(d, 64) + log(2), for hard and one-hot soft labels
    d = np.array([50, 63.5, 64, 64.5, 80, 200, 1e4], "float32")
    logits = np.stack([np.zeros_like(d), d, d], 1)
    lab = np.zeros((len(d), 1), "int64")
    onehot = np.eye(3, dtype="float32")[lab[:, 0]]
    for lib in (pd, paddle_hl):
        f = lib.nn.functional
        hard = f.softmax_with_cross_entropy(lib.to_tensor(logits), lib.to_tensor(lab))
        soft = f.softmax_with_cross_entropy(lib.to_tensor(logits), lib.to_tensor(onehot),
                                            soft_label=True)
        ce = f.cross_entropy(lib.to_tensor(logits), lib.to_tensor(lab), reduction="none")
        for out in (hard, soft, ce):
            np.testing.assert_allclose(out.numpy()[:, 0], np.minimum(d, 64.0) + np.log(2),
                                       rtol=1e-6)


# ------------------------------------------------------------------ Bilinear initializer
def _bilinear(lib, shape, dtype="float32"):
    return lib.create_parameter(list(shape), dtype,
                                default_initializer=lib.nn.initializer.Bilinear()).numpy()


def _documented_kernel(k):
    f = math.ceil(k / 2)
    c = (2 * f - 1 - f % 2) / (2 * f)
    w1 = 1 - np.abs(np.arange(k) / f - c)
    return np.outer(w1, w1)


def _paddle_2_6_kernel(k):
    # Paddle 2.6.2: the row of flat index i is taken as i / k (a true division)
    f = math.ceil(k / 2)
    c = (2 * f - 1 - f % 2) / (2 * f)
    i = np.arange(k * k)
    x, y = i % k, (i / k) % k
    return ((1 - np.abs(x / f - c)) * (1 - np.abs(y / f - c))).reshape(k, k)


@pytest.mark.parity
@pytest.mark.parametrize("shape", [(2, 1, 4, 4), (3, 3, 3, 3), (2, 2, 5, 5), (1, 1, 1, 1),
                                   (4, 1, 6, 6)])
def test_bilinear_initializer_documented_kernel(pd, shape):
    ours = _bilinear(paddle_hl, shape)
    theirs = _bilinear(pd, shape)
    k = shape[-1]
    np.testing.assert_allclose(ours, np.broadcast_to(_documented_kernel(k), shape), rtol=1e-6)
    np.testing.assert_allclose(ours[0, 0], ours[0, 0].T)  # symmetric and separable
    np.testing.assert_allclose(theirs, np.broadcast_to(_paddle_2_6_kernel(k), shape),
                               rtol=1e-6)
    if k == 1:
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_bilinear_initializer_dtype_and_errors_parity(pd, dtype):
    for lib in (pd, paddle_hl):
        assert _bilinear(lib, (1, 1, 4, 4), dtype).dtype == np.dtype(dtype)
        with pytest.raises(ValueError):
            _bilinear(lib, (1, 1, 4, 6))
        with pytest.raises(ValueError):
            _bilinear(lib, (4, 4, 4))
