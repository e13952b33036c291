"""The numba extra: compiled normalisation and max-pool gradient kernels against the NumPy
forms, the switch, and the fallback when numba is missing."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.backend import _numba
from paddle_hl.backend import _numpy as K

RNG = np.random.default_rng(3)


@pytest.fixture
def both():
    """Run a function with the compiled kernels and with the NumPy forms; restore after."""
    pytest.importorskip("numba")
    before = _numba.enabled()

    def run(fn):
        out = []
        for flag in (True, False):
            _numba.set_enabled(flag)
            assert _numba.enabled() is flag
            out.append(fn())
        return out

    yield run
    _numba.set_enabled(before)


def _bn_step(shape, dtype, affine=True, fmt="NCHW", values=None):
    x = values if values is not None else RNG.standard_normal(shape).astype(dtype) * 3 + 1
    g = np.random.default_rng(5).standard_normal(shape).astype(dtype)
    c = shape[1] if fmt.startswith("NC") else shape[-1]
    layer = {2: paddle.nn.BatchNorm1D, 3: paddle.nn.BatchNorm1D, 4: paddle.nn.BatchNorm2D,
             5: paddle.nn.BatchNorm3D}[len(shape)]

    def run():
        paddle.seed(1)
        kw = {} if affine else {"weight_attr": False, "bias_attr": False}
        if len(shape) == 4:
            kw["data_format"] = fmt
        bn = layer(c, **kw)
        bn.to(dtype=dtype)
        if affine:
            bn.weight.set_value(np.linspace(0.5, 1.5, c).astype(dtype))
            bn.bias.set_value(np.linspace(-1, 1, c).astype(dtype))
        bn.train()
        t = paddle.to_tensor(x, stop_gradient=False)
        y = bn(t)
        y.backward(paddle.to_tensor(g))
        res = [y.numpy(), t.grad.numpy(), bn._mean.numpy(), bn._variance.numpy()]
        if affine:
            res += [bn.weight.grad.numpy(), bn.bias.grad.numpy()]
        return res

    return run


@pytest.mark.parametrize("shape", [(4, 3, 8, 8), (2, 5, 1, 1), (8, 16, 2, 2), (3, 4, 10),
                                   (6, 7), (2, 3, 2, 3, 4)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_batch_norm_matches_the_numpy_form(both, shape, dtype):
    jit, ref = both(_bn_step(shape, dtype))
    tol = 2e-5 if dtype == "float32" else 1e-11
    for a, b in zip(jit, ref):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def test_batch_norm_without_affine_and_channels_last(both):
    for kw in ({"affine": False}, {"fmt": "NHWC"}):
        jit, ref = both(_bn_step((4, 6, 5, 3), "float32", **kw))
        for a, b in zip(jit, ref):
            np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5)


def test_nan_and_inf_stay_in_their_channel(both):
    x = RNG.standard_normal((4, 3, 5, 5)).astype("float32")
    x[1, 0, 2, 2] = np.nan
    x[2, 2, 0, 1] = np.inf
    jit, ref = both(_bn_step(x.shape, "float32", values=x))
    _same_values(jit, ref, 2e-5, np.isnan)
    y = jit[0]
    assert np.isnan(y[:, 0]).all() and np.isfinite(y[:, 1]).all()


@pytest.mark.parametrize("shape,kernel,stride,padding,fmt", [
    ((4, 3, 9, 9), 3, 2, 1, "NCHW"),  # overlapping windows: gradients of ties add up
    ((2, 5, 8, 8), 2, 2, 0, "NCHW"),  # disjoint windows
    ((3, 2, 7, 10), (2, 3), (1, 2), (1, 0), "NCHW"),
    ((2, 6, 6, 4), 3, 2, 1, "NHWC"),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_max_pool_gradient_matches_the_numpy_form(both, shape, kernel, stride, padding, fmt,
                                                  dtype):
    # few distinct values: many ties, so the first-maximum rule and the sums both count
    x = np.round(RNG.standard_normal(shape) * 2).astype(dtype)

    def run():
        t = paddle.to_tensor(x, stop_gradient=False)
        y = paddle.nn.functional.max_pool2d(t, kernel, stride, padding, data_format=fmt)
        g = np.random.default_rng(7).standard_normal(y.shape).astype(dtype)
        y.backward(paddle.to_tensor(g))
        return y.numpy(), t.grad.numpy()

    (yj, gj), (yr, gr) = both(run)
    np.testing.assert_array_equal(yj, yr)
    assert gj.dtype == gr.dtype == np.dtype(dtype)
    np.testing.assert_allclose(gj, gr, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("want_arg", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_max_pool_forward_matches_the_numpy_form(both, want_arg, dtype):
    """The compiled forward (phase planes; 2x2 windows of stride 2 directly): the same maxima,
    NaN included, and the same first-maximum offsets (equal zeros of either sign count as
    ties: the offset stays on the first)."""
    from paddle_hl.backend import windows as W

    for shape, k, s in (((3, 4, 11, 12), (3, 3), (2, 2)), ((2, 3, 9, 10), (2, 3), (2, 1)),
                        ((2, 2, 7, 7), (3, 3), (1, 1)), ((2, 2, 8, 8), (2, 2), (2, 2)),
                        ((2, 3, 9, 11), (2, 2), (2, 2)), ((1, 2, 40, 37), (3, 3), (2, 2))):
        x = np.round(RNG.standard_normal(shape) * 2).astype(dtype)  # ties
        x[0, 1, 3, 3] = np.nan
        x[0, 0, 0, 1] = np.nan  # the second pixel of a 2x2 window
        x[-1, -1, 1, 0] = np.nan  # the third
        x[0, 0, 4:6, 4:6] = [[0.0, -0.0], [-0.0, 0.0]]  # equal zeros
        x[-1, 0, :3, :3] = np.finfo(np.float32).min  # as low as the padding value
        osz = tuple((n - kk) // ss + 1 for n, kk, ss in zip(shape[2:], k, s))
        (oj, aj), (orf, ar) = both(lambda: W.max_pool(x, k, s, osz, want_arg=want_arg))
        np.testing.assert_array_equal(oj, orf)
        assert oj.dtype == orf.dtype
        if want_arg:
            np.testing.assert_array_equal(aj, ar)
            assert aj.dtype == ar.dtype
        else:
            assert aj is None and ar is None


def test_max_pool_gradient_goes_to_the_first_maximum(both):
    x = np.array([[[[1.0, 3.0, 3.0], [3.0, 0.0, 2.0], [np.nan, 1.0, 0.0]]]], "float32")

    def run():
        t = paddle.to_tensor(x, stop_gradient=False)
        paddle.nn.functional.max_pool2d(t, 2, 1).sum().backward()
        return t.grad.numpy()

    jit, ref = both(run)
    np.testing.assert_array_equal(jit, ref)
    # a window holding a NaN keeps the offset of the maximum seen before it
    np.testing.assert_array_equal(jit[0, 0], [[0, 2, 0], [1, 0, 1], [0, 0, 0]])


def test_large_calls_split_over_threads_agree(both):
    """Above the thread pool's size threshold the channels are split across threads."""
    from paddle_hl.backend import _threads

    old = _threads.MIN_BYTES
    _threads.MIN_BYTES = 0
    try:
        jit, ref = both(_bn_step((8, 12, 16, 16), "float32"))
    finally:
        _threads.MIN_BYTES = old
    for a, b in zip(jit, ref):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5)


def test_two_threads_at_once(both):
    pytest.importorskip("numba")
    _numba.set_enabled(True)
    x = RNG.standard_normal((8, 4, 6, 6)).astype("float32")
    want, _ = _numba.norm.batch_norm_train(x.reshape(8, 4, 36), None, None, 1e-5)[:2]
    errs = []

    def work():
        for _ in range(20):
            out = _numba.norm.batch_norm_train(x.reshape(8, 4, 36), None, None, 1e-5)[0]
            if not np.array_equal(out, want):
                errs.append("different result")

    ts = [threading.Thread(target=work) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errs


def _child(code, **env):
    e = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=e, timeout=120)


def test_environment_switch_and_bad_value():
    code = ("from paddle_hl.backend import _numba; "
            "print(_numba.enabled(), _numba.unavailable_reason())")
    r = _child(code, PADDLE_HL_NUMBA="0")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("False switched off (PADDLE_HL_NUMBA=0")
    r = _child(code, PADDLE_HL_NUMBA="maybe")
    assert r.returncode != 0 and "PADDLE_HL_NUMBA must be 0 or 1, got 'maybe'" in r.stderr


def _fallback_run(setup, x):
    """In a fresh interpreter: ``setup``, then a training-mode batch norm of ``x`` (source);
    returns (enabled and the output's std, the reason the kernels are not in use)."""
    code = (f"{setup}\n"
            "import numpy as np, paddle_hl as paddle\n"
            "from paddle_hl.backend import _numba\n"
            "bn = paddle.nn.BatchNorm2D(3); bn.train()\n"
            f"y = bn(paddle.to_tensor({x}))\n"
            "print(_numba.enabled(), round(float(y.numpy().std()), 4))\n"
            "print(_numba.unavailable_reason())")
    r = _child(code, PADDLE_HL_NUMBA="1")
    assert r.returncode == 0, r.stderr
    return r.stdout.strip().splitlines()


def test_without_numba_the_numpy_forms_run():
    first, second = _fallback_run("import sys; sys.modules['numba'] = None",
                                  "np.arange(48, dtype='float32').reshape(2, 3, 2, 4)")
    assert first == "False 1.0"
    assert "numba is not installed" in second and "paddle_hl[numba]" in second


_BROKEN = ("def replacement(cache=True):\n"
           "    raise RuntimeError('no LLVM target here')")
_NO_CACHE_FOLDER = ("def replacement(cache=True):\n"
                    "    if cache:\n"
                    "        raise RuntimeError('cannot cache function: no locator available')\n"
                    "    return real(cache=False)")


@pytest.mark.parametrize("replacement,first,second", [
    # a numba that cannot build the kernels: the NumPy forms run, and the reason is kept
    (_BROKEN, "False 1.0",
     "numba could not compile the kernels (RuntimeError: no LLVM target here)"),
    # no writable cache folder: the kernels compile in memory, in each process
    (_NO_CACHE_FOLDER, "True 1.0", "None"),
])
def test_compile_failures(replacement, first, second):
    pytest.importorskip("numba")
    setup = ("from paddle_hl.backend import _numba\n"
             "real = _numba._build\n"
             f"{replacement}\n"
             "_numba._build = replacement")
    got = _fallback_run(setup, "np.arange(54, dtype='float32').reshape(2, 3, 3, 3)")
    assert got == [first, second]


def _same_values(jit, ref, tol, pattern):
    """Each pair of results has the same ``pattern`` (np.isnan or np.isfinite) and the same
    finite values."""
    for a, b in zip(jit, ref):
        np.testing.assert_array_equal(pattern(a), pattern(b))
        ok = np.isfinite(b)
        np.testing.assert_allclose(a[ok], b[ok], rtol=tol, atol=tol)


# ------------------------------------------------------- batch norm + activation in one op
class _NormAct(paddle.nn.Layer):
    """A batch norm and its activation declared as a fusion chain (see nn/_fusion.py)."""

    _fusions = (("bn", "act"),)

    def __init__(self, bn, act):
        super().__init__()
        self.bn = bn
        self.act = act

    def forward(self, x):
        return self.act(self.bn(x))


def norm_act(bn, act, x):
    """``act(bn(x))`` through a block declaring the chain: one op where the guard allows."""
    return _NormAct(bn, act)(x)


def _norm_act_step(shape, dtype, act, layered=True, values=None, hook=False):
    """A training-mode BatchNorm followed by ReLU/ReLU6: through ``norm_act`` (fused where
    the kernels are in use) or by calling the two layers; returns output, gradients and the
    running statistics."""
    x = values if values is not None else RNG.standard_normal(shape).astype(dtype) * 4 + 1
    g = np.random.default_rng(5).standard_normal(shape).astype(dtype)
    c = shape[1]

    def run(layered=layered):
        paddle.seed(1)
        bn = (paddle.nn.BatchNorm1D if len(shape) < 4 else paddle.nn.BatchNorm2D)(c)
        bn.to(dtype=dtype)
        bn.weight.set_value(np.linspace(0.5, 1.5, c).astype(dtype))
        bn.bias.set_value(np.linspace(-1, 5, c).astype(dtype))
        a = paddle.nn.ReLU() if act == "relu" else paddle.nn.ReLU6()
        seen = []
        if hook:
            bn.register_forward_post_hook(lambda layer, inp, out: seen.append(out.numpy()))
        t = paddle.to_tensor(x, stop_gradient=False)
        y = norm_act(bn, a, t) if layered else a(bn(t))
        y.backward(paddle.to_tensor(g))
        return [y.numpy(), t.grad.numpy(), bn.weight.grad.numpy(), bn.bias.grad.numpy(),
                bn._mean.numpy(), bn._variance.numpy()], seen

    return run


@pytest.mark.parametrize("act", ["relu", "relu6"])
@pytest.mark.parametrize("shape", [(8, 6, 5, 5), (16, 4), (4, 3, 7)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_norm_act_matches_the_two_layers(both, act, shape, dtype):
    step = _norm_act_step(shape, dtype, act)
    (fused, _), (numpy_form, _) = both(step)
    _numba.set_enabled(True)
    separate, _ = step(layered=False)  # compiled batch norm, then the activation's own op
    tol = 2e-5 if dtype == "float32" else 1e-11
    for a, b, c in zip(fused, numpy_form, separate):
        assert a.dtype == b.dtype == np.dtype(dtype)
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
        np.testing.assert_allclose(a, c, rtol=tol, atol=tol)
    y = fused[0]
    assert y.min() == 0 and (act == "relu" or y.max() == 6)  # both ends are reached


def test_norm_act_runs_as_one_op_and_falls_back_for_hooks_and_amp(both):
    """Fused: one ``norm_act`` op, no separate activation. A hook on the batch norm must
    see its own output, so the layers then run in turn."""
    pytest.importorskip("numba")
    from paddle_hl.framework import op as _op

    names = []
    real = _op.apply

    def spy(kernel, *a, **k):
        names.append(kernel.__name__)
        return real(kernel, *a, **k)

    _numba.set_enabled(True)
    for hook in (False, True):
        names.clear()
        from paddle_hl.nn.functional import norm as fnorm
        saved = fnorm.apply
        fnorm.apply = spy
        try:
            (out, seen) = _norm_act_step((4, 3, 5, 5), "float32", "relu6", True, hook=hook)()
        finally:
            fnorm.apply = saved
        if hook:
            assert "_norm_act_k" not in names and "_norm_k" in names
            assert len(seen) == 1 and seen[0].min() < 0  # the norm's own output, before ReLU6
        else:
            assert names == ["_norm_act_k"]
        assert out[0].min() == 0
    # under AMP the layers run in turn too (auto_cast decides each op's dtype)
    from paddle_hl.nn.functional import norm as fnorm
    names.clear()
    fnorm.apply = spy
    try:
        with paddle.amp.auto_cast():
            y = norm_act(paddle.nn.BatchNorm2D(3), paddle.nn.ReLU(),
                         paddle.to_tensor(RNG.standard_normal((4, 3, 5, 5)).astype("float32")))
    finally:
        fnorm.apply = saved
    assert "_norm_act_k" not in names and y.numpy().min() == 0


def test_norm_act_nan_and_inf(both):
    x = np.random.default_rng(21).standard_normal((4, 3, 5, 5)).astype("float32")
    x[1, 0, 2, 2] = np.nan  # channel 0: every value NaN after the norm
    g = np.ones(x.shape, "float32")
    g[0, 1, 0, 0] = np.inf  # an inf upstream gradient where ReLU6 is flat gives NaN

    def run():
        out = []
        for act in (paddle.nn.ReLU(), paddle.nn.ReLU6()):
            bn = paddle.nn.BatchNorm2D(3)
            t = paddle.to_tensor(x, stop_gradient=False)
            y = norm_act(bn, act, t)
            y.backward(paddle.to_tensor(g))
            out += [y.numpy(), t.grad.numpy()]
        return out

    jit, ref = both(run)
    # an inf upstream gradient makes the channel's sums infinite: the two forms arrange batch
    # norm's backward differently, so one gives inf where the other gives NaN; which values
    # are finite, and those values, agree
    _same_values(jit, ref, 2e-5, np.isfinite)
    for y in (jit[0], jit[2]):
        np.testing.assert_array_equal(np.isnan(y), np.isnan(ref[0] if y is jit[0] else ref[2]))
    for gx in (jit[1], jit[3]):
        assert not np.isfinite(gx[:, :2]).all() and np.isfinite(gx[:, 2]).all()
    relu_y, relu6_y = jit[0], jit[2]
    assert (relu_y[:, 0] == 0).all()  # ReLU turns NaN into 0
    assert np.isnan(relu6_y[:, 0]).all()  # ReLU6 keeps it


def test_norm_act_double_backward_matches_the_two_layers(both):
    x = RNG.standard_normal((6, 3, 4, 4)).astype("float64") * 3

    def run():
        paddle.seed(0)
        bn = paddle.nn.BatchNorm2D(3)
        bn.to(dtype="float64")
        t = paddle.to_tensor(x, stop_gradient=False)
        y = norm_act(bn, paddle.nn.ReLU6(), t)
        (gx,) = paddle.grad((y * y).sum(), t, create_graph=True)
        (gxx,) = paddle.grad((gx * gx).sum(), t)
        return gx.numpy(), gxx.numpy()

    jit, ref = both(run)
    for a, b in zip(jit, ref):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)


def test_models_train_the_same_with_the_fused_layers(both):
    """MobileNetV2's conv-norm-ReLU6 blocks and ResNet's conv-norm-ReLU run fused: a training
    step gives the same loss and gradients as with the NumPy forms."""
    def run(name, shape):
        def step():
            paddle.seed(0)
            net = getattr(paddle.vision.models, name)(num_classes=4)
            net.train()
            x = paddle.to_tensor(np.random.default_rng(0).standard_normal(shape)
                                 .astype("float32"))
            loss = net(x).square().mean()
            loss.backward()
            grads = [p.grad.numpy() for p in net.parameters() if p.grad is not None]
            return float(loss), grads
        return step

    for name, shape in (("mobilenet_v2", (8, 3, 32, 32)), ("resnet18", (8, 3, 32, 32))):
        (lj, gj), (lr, gr) = both(run(name, shape))
        # float32 summed in another order through 52 batch norms: MobileNetV2's loss moves by
        # 9.4e-6 relative with NumPy 2.4 and 1.3e-5 with NumPy 2.0 (the same with the code
        # before the kernels moved, run with PADDLE_HL_NUMBA=1 and =0)
        assert abs(lj - lr) <= 3e-5 * max(1.0, abs(lr))
        assert len(gj) == len(gr)
        # measured against the whole gradient's norm: a batch norm that feeds another one
        # has a bias gradient that is 0 up to rounding, so element-wise relative errors
        # there say nothing (float32 rounding in another order already moves them)
        scale = np.sqrt(sum(float(np.square(b, dtype=np.float64).sum()) for b in gr))
        for a, b in zip(gj, gr):
            assert a.shape == b.shape
            assert np.linalg.norm((a - b).ravel()) <= 5e-3 * scale


# ------------------------------------------------------- depthwise convolution, small planes
@pytest.mark.parametrize("shape,kernel,stride,padding,dilation,fmt", [
    ((4, 24, 4, 4), 3, 1, 1, 1, "NCHW"),
    ((3, 16, 8, 8), 3, 2, 1, 1, "NCHW"),
    ((2, 10, 5, 7), (3, 5), (2, 1), (1, 2), 1, "NCHW"),
    ((2, 12, 6, 6), 3, 1, 2, 2, "NCHW"),  # dilated
    ((2, 6, 3, 3), 3, 1, 0, 1, "NCHW"),  # no padding
    ((3, 20, 4, 4), 3, 1, 1, 1, "NHWC"),  # channels last in and out
    ((2, 8, 1, 1), 3, 1, 1, 1, "NCHW"),  # a 1x1 plane: only the centre tap is inside
    # larger planes: the phase-plane kernels (rows of 16 outputs or more)
    ((2, 6, 20, 18), 3, 1, 1, 1, "NCHW"),
    ((2, 5, 33, 34), 3, 2, 1, 1, "NCHW"),
    ((2, 3, 37, 40), 3, 2, 0, 1, "NCHW"),  # stride 2 without padding
    ((2, 3, 36, 35), 5, 2, 2, 1, "NCHW"),  # stride 2, two columns of padding
    ((2, 3, 36, 35), 3, (2, 1), 1, 1, "NCHW"),  # stride 2 down, 1 across
    ((2, 4, 24, 20), 5, 1, 4, 2, "NCHW"),
    ((2, 18, 20, 7), 3, 1, 1, 1, "NHWC"),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_depthwise_matches_the_numpy_form(both, shape, kernel, stride, padding, dilation, fmt,
                                          dtype):
    c = shape[1] if fmt == "NCHW" else shape[-1]
    x = RNG.standard_normal(shape).astype(dtype)
    k = (kernel, kernel) if isinstance(kernel, int) else kernel
    w = RNG.standard_normal((c, 1, *k)).astype(dtype)

    def run():
        t = paddle.to_tensor(x, stop_gradient=False)
        wt = paddle.to_tensor(w, stop_gradient=False)
        y = paddle.nn.functional.conv2d(t, wt, stride=stride, padding=padding,
                                        dilation=dilation, groups=c, data_format=fmt)
        g = np.random.default_rng(9).standard_normal(y.shape).astype(dtype)
        y.backward(paddle.to_tensor(g))
        return y.numpy(), t.grad.numpy(), wt.grad.numpy()

    _close_results(*both(run), dtype, 1e-5)


def _close_results(jit, ref, dtype, tol32):
    """Each pair of results has the dtype and shape asked for and agrees to ``tol32`` in
    float32, 1e-12 in float64."""
    tol = tol32 if dtype == "float32" else 1e-12
    for a, r in zip(jit, ref, strict=True):
        assert a.dtype == r.dtype == np.dtype(dtype) and a.shape == r.shape
        np.testing.assert_allclose(a, r, rtol=tol, atol=tol)


def test_depthwise_non_finite_values_as_the_numpy_form(both):
    """Padding taps are skipped by the compiled kernels: an inf weight there would meet a
    padded zero (NaN in the NumPy form), so such weights, and an upstream gradient with
    NaN, take the NumPy form; the results agree, NaNs included."""
    for size in (4, 20):  # channels-last taps, phase planes
        _depthwise_non_finite(both, size)


def _depthwise_non_finite(both, size):
    x = RNG.standard_normal((2, 8, size, size)).astype("float32")
    w = RNG.standard_normal((8, 1, 3, 3)).astype("float32")
    w[2, 0, 0, 0] = np.inf

    def run():
        out = []
        for weights, bad_g in ((w, False), (np.nan_to_num(w, posinf=1.0), True)):
            t = paddle.to_tensor(x, stop_gradient=False)
            wt = paddle.to_tensor(weights, stop_gradient=False)
            y = paddle.nn.functional.conv2d(t, wt, padding=1, groups=8)
            g = np.ones(y.shape, "float32")
            if bad_g:
                g[1, 3, 0, 0] = np.nan
            y.backward(paddle.to_tensor(g))
            out += [y.numpy(), t.grad.numpy(), wt.grad.numpy()]
        return out

    jit, ref = both(run)
    _same_values(jit, ref, 1e-5, np.isnan)
    assert np.isnan(jit[0][:, 2]).any()  # inf weight * padded zero, as in the NumPy form
    assert np.isnan(jit[5][3]).any()  # the NaN gradient reaches channel 3's weights


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("opt_name, kw", [("Adam", {}), ("AdamW", {"weight_decay": 0.1}),
                                          ("Adam", {"learning_rate": 0.01, "beta1": 0.5,
                                                    "epsilon": 1e-3})])
def test_adam_update_gives_the_numpy_passes_numbers_exactly(both, dtype, opt_name, kw):
    # the compiled update rounds every operation as NumPy does: the same bits, over steps
    # large enough for the thread pool to split (257*300 elements) and tiny ones (the bias)
    x = RNG.standard_normal((16, 257)).astype(dtype)

    def run():
        paddle.seed(0)
        # fresh parameter names in each run: the moments below are paired by sorted name, and
        # a counter crossing a power of ten (linear_99 -> linear_100) would reorder them
        with paddle.utils.unique_name.guard():
            net = paddle.nn.Sequential(paddle.nn.Linear(257, 300), paddle.nn.Tanh(),
                                       paddle.nn.Linear(300, 3))
        net.to(dtype=dtype)
        opt = getattr(paddle.optimizer, opt_name)(parameters=net.parameters(), **kw)
        for _ in range(4):
            net(paddle.to_tensor(x)).square().mean().backward()
            opt.step()
            opt.clear_grad()
        state = opt.state_dict()
        return [p.numpy() for p in net.parameters()] + [
            state[k].numpy() for k in sorted(state) if "moment" in k]

    compiled, plain = both(run)
    assert len(compiled) == 12
    for a, b in zip(compiled, plain):
        np.testing.assert_array_equal(a, b)


def test_adam_update_declines_what_it_cannot_run(both):
    pytest.importorskip("numba")
    p = np.ones(6, np.float32)
    m, v = np.zeros(6, np.float32), np.zeros(6, np.float32)
    args = (1e-3, 0.9, 0.999, 0.1, 0.001, 1e-8, 1.0)
    assert K.fused_update("adamw", np.ones(6, np.float16), args, (p, m, v)) is False  # dtypes
    assert K.fused_update("adamw", np.ones(12, np.float32)[::2], args, (p, m, v)) is False
    assert np.array_equal(p, np.ones(6, np.float32)) and not m.any()
    _numba.set_enabled(False)
    assert K.fused_update("adamw", np.ones(6, np.float32), args, (p, m, v)) is False
    _numba.set_enabled(True)
    assert K.fused_update("adamw", np.ones(6, np.float32), args, (p, m, v)) is True
    assert (p < 1).all() and m.all() and v.all()


# ------------------------------------------------- thin dense convolutions (direct kernels)
@pytest.mark.parametrize("xs,ws,padding,fmt", [
    ((4, 1, 28, 28), (6, 1, 3, 3), 1, "NCHW"),  # LeNet's first layer
    ((3, 2, 9, 11), (5, 2, 3, 3), [1, 2, 0, 1], "NCHW"),  # asymmetric padding
    ((2, 1, 14, 12), (4, 1, 5, 5), 0, "NCHW"),
    ((2, 3, 8, 8), (7, 3, 3, 3), 1, "NCHW"),  # 27 taps
    ((2, 9, 9, 3), (4, 3, 3, 3), 2, "NHWC"),  # channels last in and out
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_thin_conv_direct_kernels_match_the_gemm_form(both, xs, ws, padding, fmt, dtype):
    from paddle_hl.backend import windows as W

    x = RNG.standard_normal(xs).astype(dtype)
    w = RNG.standard_normal(ws).astype(dtype)
    b = RNG.standard_normal(ws[0]).astype(dtype)
    xl = np.moveaxis(x, -1, 1) if fmt == "NHWC" else x
    pads = paddle.nn.functional.conv.parse_padding(padding, 2, False, "conv2d")
    osz = W.conv_out_size(xl.shape[2:], ws[2:], (1, 1), pads, (1, 1))
    assert W.use_direct(xl, w, (1, 1), (1, 1), 1, osz) is _numba.enabled()  # the path tested

    def run():
        t = paddle.to_tensor(x, stop_gradient=False)
        wt = paddle.to_tensor(w, stop_gradient=False)
        bt = paddle.to_tensor(b, stop_gradient=False)
        y = paddle.nn.functional.conv2d(t, wt, bt, padding=padding, data_format=fmt)
        g = np.random.default_rng(4).standard_normal(y.shape).astype(dtype)
        y.backward(paddle.to_tensor(g))
        return y.numpy(), t.grad.numpy(), wt.grad.numpy(), bt.grad.numpy()

    _close_results(*both(run), dtype, 2e-5)


def test_thin_conv_non_finite_values_as_the_gemm_form(both):
    """The direct input gradient needs finite weights and the weight gradient a finite input
    (the wide grid's zero columns meet them); otherwise the GEMM forms run: the same NaNs."""
    x = RNG.standard_normal((2, 1, 10, 10)).astype("float32")
    w = RNG.standard_normal((3, 1, 3, 3)).astype("float32")
    x[1, 0, 4, 6] = np.inf
    w[2, 0, 0, 0] = np.inf

    def run():
        t = paddle.to_tensor(x, stop_gradient=False)
        wt = paddle.to_tensor(w, stop_gradient=False)
        y = paddle.nn.functional.conv2d(t, wt, padding=1)
        y.backward(paddle.ones_like(y))
        return y.numpy(), t.grad.numpy(), wt.grad.numpy()

    jit, ref = both(run)
    _same_values(jit, ref, 1e-5, np.isnan)
    assert np.isnan(jit[0]).any() and np.isnan(jit[1]).any()  # inf * padded zero, both forms


def test_thin_conv_direct_kernels_only_where_they_spare_columns():
    pytest.importorskip("numba")
    from paddle_hl.backend import windows as W

    x = np.zeros((4, 3, 16, 16), np.float32)
    if not _numba.enabled():
        pytest.skip("the compiled kernels are switched off")
    assert W.use_direct(x, np.zeros((8, 3, 3, 3), np.float32), (1, 1), (1, 1), 1, (16, 16))
    # a 1x1 kernel has no im2col columns: its GEMM on x itself is far faster
    assert not W.use_direct(x, np.zeros((8, 3, 1, 1), np.float32), (1, 1), (1, 1), 1, (16, 16))
    # too many channels x taps, a stride, groups, a small plane, a float16 input: the GEMMs
    assert not W.use_direct(x, np.zeros((8, 3, 5, 5), np.float32), (1, 1), (1, 1), 1, (16, 16))
    assert not W.use_direct(x, np.zeros((8, 3, 3, 3), np.float32), (2, 2), (1, 1), 1, (8, 8))
    assert not W.use_direct(x, np.zeros((9, 1, 3, 3), np.float32), (1, 1), (1, 1), 3, (16, 16))
    assert not W.use_direct(x, np.zeros((8, 3, 3, 3), np.float32), (1, 1), (1, 1), 1, (7, 7))
    assert not W.use_direct(x.astype(np.float16), np.zeros((8, 3, 3, 3), np.float16), (1, 1),
                            (1, 1), 1, (16, 16))


_EVERY_KERNEL = """
import numpy as np
import paddle_hl as paddle
from paddle_hl.backend import _numba
F = paddle.nn.functional
assert _numba.enabled(), _numba.unavailable_reason()
x = paddle.randn([2, 2, 20, 20])
x.stop_gradient = False
w = paddle.randn([2, 1, 3, 3])
w.stop_gradient = False
terms = [F.conv2d(x, w, padding=1, groups=2),  # depthwise on phase planes
         F.conv2d(x, w, stride=2, padding=1, groups=2),
         F.conv2d(x[:, :1], w, padding=1),  # a thin dense layer: the direct kernels
         F.max_pool2d(x, 3, 2, 1), F.max_pool2d(x, 2, 2)]
x8 = paddle.randn([8, 4, 6, 6])
x8.stop_gradient = False
terms.append(F.conv2d(x8, paddle.randn([4, 4, 3, 3]), padding=1))  # batch innermost: col2im
sum(t.sum() for t in terms).backward()
print("ran", float(x.grad.abs().sum()) > 0, float(w.grad.abs().sum()) > 0)
"""


@pytest.mark.slow
def test_a_second_process_loads_every_kernel_from_the_disk_cache(tmp_path):
    # the first process compiles and saves every kernel it runs; the next one must load them
    # all (a kernel whose cache key changes between processes compiles again each time)
    pytest.importorskip("numba")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), NUMBA_DEBUG_CACHE="1",
               PADDLE_HL_NUMBA="1")
    runs = [subprocess.run([sys.executable, "-c", _EVERY_KERNEL], env=env, capture_output=True,
                           text=True, timeout=300) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr[-2000:]
        assert "ran True True" in r.stdout
    assert runs[0].stdout.count("data saved") >= 15
    saved = [line for line in runs[1].stdout.splitlines() if "data saved" in line]
    assert not saved, saved


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("size,ksize,stride,dilation", [
    ((14, 14), (5, 5), (1, 1), (1, 1)),  # LeNet's second layer
    ((10, 10), (3, 3), (1, 1), (1, 1)),
    ((9, 11), (3, 3), (2, 2), (1, 1)),  # stride 2: one run per pixel
    ((10, 9), (3, 2), (1, 2), (2, 1)),  # dilation, stride across
])
def test_nin_windows_give_the_numpy_passes_numbers_exactly(both, size, ksize, stride, dilation,
                                                          dtype):
    # the columns are the same values, and col2im adds the taps in the same order as NumPy's
    # passes: the same bits
    from paddle_hl.backend import windows as W

    n, c = 5, 3
    pads = ((1, 0), (0, 2))
    x = RNG.standard_normal((n, c, *size)).astype(dtype)
    osz = W.conv_out_size(size, ksize, stride, pads, dilation)
    jit, ref = both(lambda: W.im2col_nin(x, ksize, stride, dilation, pads, osz))
    assert jit.shape == ref.shape == (1, c * math.prod(ksize), math.prod(osz) * n)
    np.testing.assert_array_equal(jit, ref)
    psz = (size[0] + 1, size[1] + 2)
    cols = RNG.standard_normal(ref.shape).astype(dtype)
    jit, ref = both(lambda: W.col2im_nin(cols, (n, c, *psz), ksize, stride, dilation, osz))
    assert jit.shape == ref.shape == (n, c, *psz) and jit.dtype == ref.dtype
    np.testing.assert_array_equal(jit, ref)


@pytest.mark.parametrize("shape, kernel, stride, padding, dilation", [
    ((4, 32, 32, 32), 3, 1, 1, 1),  # a large plane: the rows split over threads
    ((4, 24, 33, 31), 3, 2, 1, 1),  # stride 2: a run of channels per output column
    ((2, 16, 20, 18), 5, (1, 2), (2, 1), (1, 2)),  # uneven stride, dilation and padding
    ((2, 40, 9, 9), 3, 1, 0, 1),  # no padding
])
def test_depthwise_channels_last_kernels_on_large_arrays(shape, kernel, stride, padding,
                                                         dilation, monkeypatch):
    """The compiled channels-last kernels (rows of columns x channels) on arrays large enough
    to be split over threads: the forward and the input gradient give the generic tap loops'
    numbers bit for bit; the weight gradient agrees to rounding and is the same with one
    thread as with two."""
    pytest.importorskip("numba")
    from paddle_hl.backend import _threads
    from paddle_hl.backend import windows as W
    from paddle_hl.backend._numba import depthwise as D

    monkeypatch.setattr(_threads, "MIN_BYTES", 0)
    n, c, h, wd = shape
    k = (kernel, kernel)
    st = stride if isinstance(stride, tuple) else (stride, stride)
    pd = padding if isinstance(padding, tuple) else (padding, padding)
    dl = dilation if isinstance(dilation, tuple) else (dilation, dilation)
    pads = tuple((p, p) for p in pd)
    osz = tuple((s + 2 * p - d * (kk - 1) - 1) // t + 1
                for s, p, d, kk, t in zip((h, wd), pd, dl, k, st))
    x = RNG.standard_normal(shape).astype("float32")
    w = RNG.standard_normal((c, 1, *k)).astype("float32")
    g = RNG.standard_normal((n, c, *osz)).astype("float32")
    xpad = W.pad(x, pads)
    w2 = np.ascontiguousarray(w.reshape(c, -1).T)
    xc = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    gc = np.ascontiguousarray(g.transpose(0, 2, 3, 1))
    y = D.cl_forward(xc, w2, k, st, dl, pads, np.empty((n, *osz, c), "float32"))
    np.testing.assert_array_equal(y.transpose(0, 3, 1, 2), W._taps_forward(xpad, w, st, dl, osz))
    dx = D.cl_input_grad(gc, w2, k, st, dl, pads, np.empty_like(xc))
    want = W.crop(W._taps_input_grad(g, w, xpad.shape, st, dl), pads, (h, wd))
    np.testing.assert_array_equal(dx.transpose(0, 3, 1, 2), want)
    gws = []
    for threads in (1, 2):
        monkeypatch.setattr(_threads, "num_threads", lambda t=threads: t)
        gws.append(D.cl_weight_grad(xc, gc, k, st, dl, pads))
    np.testing.assert_array_equal(gws[0], gws[1])
    # each product is rounded to float32 (as NumPy's float32 passes do), the sums are float64:
    # within a float32 rounding of the sum of the terms' magnitudes
    x64, g64 = xpad.astype("float64"), g.astype("float64")
    ref = W._taps_weight_grad(x64, g64, k, st, dl)
    bound = W._taps_weight_grad(np.abs(x64), np.abs(g64), k, st, dl) * 2 ** -24
    assert (np.abs(gws[0].T.reshape(c, 1, *k) - ref) <= bound).all()
