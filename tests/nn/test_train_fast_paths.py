"""The training-step fast paths (benchmarks/train_step.py): convolution tap trimming, the
flat-plane col2im, im2col columns kept for the weight gradient, the small-plane 1x1 route, the
input-gradient skip of linear, relu's kernels, the in-place Adam update and the allocator
tuning. Each path is checked against real Paddle and/or the plain path it replaces."""

import math
import os
import subprocess
import sys

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.backend import _numba, settings
from paddle_hl.backend import _numpy as K
from paddle_hl.backend import windows as W
from paddle_hl.nn import functional as F
from paddle_hl.nn.functional import conv as C
from tests.op_check import check_parity, gradcheck

RNG = np.random.default_rng(11)


def _r(*shape, dtype="float64"):
    return RNG.standard_normal(shape).astype(dtype)


# shapes where the last ResNet stage's taps only read padding, and stride-1 cases for the
# flat-plane col2im (2-D, 3-D, dilation, groups, asymmetric padding, channels last)
TRIM_CASES = [
    ((2, 3, 1, 1), (4, 3, 3, 3), dict(padding=1)),
    ((2, 3, 2, 2), (4, 3, 3, 3), dict(stride=2, padding=1)),
    ((2, 3, 1, 4), (4, 3, 3, 3), dict(padding=1)),
    ((2, 3, 2, 2), (4, 3, 3, 3), dict(padding=2, dilation=2)),
    ((2, 4, 1, 1), (4, 2, 3, 3), dict(padding=1, groups=2)),
    ((2, 3, 1, 1, 1), (4, 3, 3, 3, 3), dict(padding=1)),
]
FLAT_CASES = [
    ((2, 3, 6, 5), (4, 3, 3, 3), dict(padding=1)),
    ((2, 3, 7, 6), (4, 3, 3, 2), dict(padding=(2, 1), dilation=(2, 1))),
    ((2, 3, 6, 6), (4, 3, 3, 3), dict(padding=[1, 0, 2, 1])),
    ((2, 6, 5, 5), (4, 3, 3, 3), dict(padding=1, groups=2)),
    ((2, 3, 4, 5, 6), (4, 3, 3, 3, 3), dict(padding=1)),
    ((2, 3, 8, 8), (4, 3, 5, 5), dict()),
]


def _conv(nd):
    return {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nd]


def _pd_conv(pd, nd):
    return {1: pd.nn.functional.conv1d, 2: pd.nn.functional.conv2d,
            3: pd.nn.functional.conv3d}[nd]


@pytest.mark.parity
@pytest.mark.parametrize("xs,ws,kw", TRIM_CASES + FLAT_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv_fast_paths_parity(xs, ws, kw, dtype, pd):
    nd = len(xs) - 2

    def fn(lib, x, w, b):
        f = _conv(nd) if lib is paddle else _pd_conv(pd, nd)
        return f(x, w, b, **kw)

    check_parity(fn, [_r(*xs, dtype=dtype), _r(*ws, dtype=dtype), _r(ws[0], dtype=dtype)], pd,
                 rtol=1e-4 if dtype == "float32" else None,
                 atol=1e-4 if dtype == "float32" else None)


NIN_CASES = [
    ((3, 4, 6, 5), (5, 4, 3, 3), dict(padding=1)),
    ((3, 4, 7, 6), (5, 4, 3, 3), dict(stride=2, padding=1)),
    ((3, 4, 6, 6), (5, 4, 3, 2), dict(padding=[1, 0, 2, 1], dilation=(2, 1))),
    ((3, 6, 5, 5), (4, 3, 3, 3), dict(padding=1, groups=2)),
    ((3, 8, 1, 1), (4, 8, 3, 3), dict(padding=1)),
    ((2, 3, 4, 5, 6), (4, 3, 3, 3, 3), dict(padding=1, stride=(1, 2, 1))),
    ((2, 3, 9), (4, 3, 3), dict(padding=2, dilation=2)),
]


@pytest.mark.parity
@pytest.mark.parametrize("xs,ws,kw", NIN_CASES)
@pytest.mark.parametrize("fmt", ["first", "last"])
def test_conv_batch_innermost_parity(xs, ws, kw, fmt, pd, monkeypatch):
    # the batch-innermost layout (im2col_nin) is chosen from batch 8 on; force it here
    monkeypatch.setattr(W, "_NIN_MIN_BATCH", 1)
    calls = []
    fwd_nin = W.conv_forward_nin
    monkeypatch.setattr(W, "conv_forward_nin", lambda *a: calls.append(1) or fwd_nin(*a))
    nd = len(xs) - 2
    data_format = {1: ("NCL", "NLC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}[nd][
        fmt == "last"]
    x = _r(*xs)
    if fmt == "last":
        x = np.ascontiguousarray(np.moveaxis(x, 1, -1))

    def fn(lib, x, w, b):
        f = _conv(nd) if lib is paddle else _pd_conv(pd, nd)
        return f(x, w, b, data_format=data_format, **kw)

    rows = []
    fwd_rows = W.pointwise_forward_cl
    monkeypatch.setattr(W, "pointwise_forward_cl", lambda *a: rows.append(1) or fwd_rows(*a))
    check_parity(fn, [x, _r(*ws), _r(ws[0])], pd)
    if fmt == "last" and xs[2:] == (1, 1):
        # trimmed to a 1x1 kernel on channels-last memory: one GEMM on x's rows instead
        assert rows and not calls, "the channels-last rows form was not taken"
    else:
        assert calls, "the batch-innermost path was not taken"


def test_conv_batch_innermost_gradcheck(monkeypatch):
    monkeypatch.setattr(W, "_NIN_MIN_BATCH", 1)
    gradcheck(lambda x, w: F.conv2d(x, w, stride=(2, 1), padding=1), [_r(2, 3, 5, 4),
                                                                     _r(2, 3, 3, 3)])


def test_conv_batch_innermost_is_used_for_training_batches():
    assert W.use_nin((64, 6, 14, 14), (16, 6, 5, 5), ((0, 0), (0, 0)), 1, (10, 10))
    assert W.use_nin((32, 64, 8, 8), (64, 64, 3, 3), ((1, 1), (1, 1)), 1, (8, 8))
    # a first layer with one channel, a small batch, a depthwise conv: the plain layout
    assert not W.use_nin((64, 1, 28, 28), (6, 1, 3, 3), ((1, 1), (1, 1)), 1, (28, 28))
    assert not W.use_nin((2, 64, 8, 8), (64, 64, 3, 3), ((1, 1), (1, 1)), 1, (8, 8))
    assert not W.use_nin((32, 8, 8, 8), (8, 1, 3, 3), ((1, 1), (1, 1)), 8, (8, 8))


@pytest.mark.parity
def test_conv_trim_channels_last_parity(pd):
    def fn(lib, x, w):
        f = F.conv2d if lib is paddle else pd.nn.functional.conv2d
        return f(x, w, padding=1, data_format="NHWC")

    check_parity(fn, [_r(2, 1, 1, 3), _r(4, 3, 3, 3)], pd)


@pytest.mark.parametrize("xs,ws,kw", TRIM_CASES[:3] + FLAT_CASES[:3])
def test_conv_fast_paths_gradcheck(xs, ws, kw):
    nd = len(xs) - 2
    gradcheck(lambda x, w, b: _conv(nd)(x, w, b, **kw), [_r(*xs), _r(*ws), _r(ws[0])])


def test_trim_taps_ranges():
    # 3x3, padding 1 on a 1x1 plane: only the centre tap reads the input
    assert W.trim_taps((3, 3), (1, 1), (1, 1), (1, 1), ((1, 1), (1, 1)), (1, 1)) == (
        (slice(1, 2), slice(1, 2)), ((0, 0), (0, 0)))
    # stride 2 from 2x2: the first row/column of taps reads padding only
    assert W.trim_taps((3, 3), (2, 2), (1, 1), (2, 2), ((1, 1), (1, 1)), (1, 1)) == (
        (slice(1, 3), slice(1, 3)), ((0, 0), (0, 0)))
    # every tap used: nothing to trim
    assert W.trim_taps((3, 3), (8, 8), (8, 8), (1, 1), ((1, 1), (1, 1)), (1, 1)) is None
    # a trim that would need a negative padding is not done
    assert W.trim_taps((3,), (1,), (1,), (1,), ((1, 1),), (2,)) is None


@pytest.mark.parametrize("ks,taps", [
    ((3,), (slice(1, 3),)),
    ((3, 3), (slice(1, 3), slice(1, 3))),
    ((3, 3), (slice(1, 2), slice(None))),
    ((3, 2, 3), (slice(0, 2), slice(None), slice(2, 3))),
])
def test_take_and_put_taps_are_the_strided_view_and_its_adjoint(ks, taps):
    w = _r(5, 4, *ks)
    sel = (slice(None),) * 2 + taps
    got = W.take_taps(w, taps)
    assert got.flags.c_contiguous
    np.testing.assert_array_equal(got, w[sel])
    full = W.put_taps(got * 2, w.shape, taps)
    expected = np.zeros_like(w)
    expected[sel] = w[sel] * 2
    np.testing.assert_array_equal(full, expected)


def test_trimmed_weight_grad_is_zero_on_dropped_taps():
    x = paddle.to_tensor(_r(2, 3, 1, 1), stop_gradient=False)
    w = paddle.to_tensor(_r(4, 3, 3, 3), stop_gradient=False)
    F.conv2d(x, w, padding=1).sum().backward()
    g = w.grad.numpy()
    mask = np.ones((3, 3), bool)
    mask[1, 1] = False
    assert np.all(g[:, :, mask] == 0)
    np.testing.assert_allclose(g[:, :, 1, 1], np.broadcast_to(x.numpy()[:, :, 0, 0].sum(0),
                                                             (4, 3)), rtol=1e-12)


@pytest.mark.parametrize("xs,ks,dil,pads", [
    ((2, 3, 6, 5), (3, 3), (1, 1), ((1, 1), (1, 1))),
    ((2, 3, 7, 6), (3, 2), (2, 1), ((2, 2), (1, 1))),
    ((1, 2, 4, 5, 6), (3, 2, 3), (1, 2, 1), ((1, 1), (2, 2), (0, 1))),
])
def test_col2im_flat_matches_col2im(xs, ks, dil, pads):
    n, c = xs[:2]
    psz = tuple(s + lo + hi for s, (lo, hi) in zip(xs[2:], pads))
    osz = W.conv_out_size(xs[2:], ks, (1,) * len(ks), pads, dil)
    g = _r(n, 4, *osz)
    w = _r(4, c, *ks)
    plain = W.col2im(w.reshape(4, -1).T @ W.g_cols(g, 1)[0], (n, c, *psz), ks,
                     (1,) * len(ks), dil, osz)
    flat = W.col2im_flat(w.reshape(4, -1).T @ W.g_cols_flat(g, 1, psz)[0], (n, c, *psz), ks,
                         dil, osz)
    np.testing.assert_allclose(flat, plain, rtol=1e-12, atol=1e-12)


def test_flat_ratio_choice():
    assert W.flat_ratio((8, 8), (10, 10), (1, 1)) == 10 / 8
    assert W.flat_ratio((8, 8), (10, 10), (2, 1)) is None  # stride 2: plain col2im
    assert W.flat_ratio((8,), (10,), (1,)) is None  # 1-D runs are already whole rows


@pytest.mark.parametrize("keep", [0, 1 << 30])
def test_kept_columns_give_the_same_weight_grad(monkeypatch, keep):
    monkeypatch.setattr(W, "_KEEP_COLS", keep)
    x = paddle.to_tensor(_r(3, 4, 7, 6), stop_gradient=False)
    w = paddle.to_tensor(_r(5, 4, 3, 3), stop_gradient=False)
    y = F.conv2d(x, w, stride=(2, 1), padding=1)
    gy = _r(*y.shape)
    (y * paddle.to_tensor(gy)).sum().backward()
    torch = pytest.importorskip("torch")
    tx = torch.tensor(x.numpy(), requires_grad=True)
    tw = torch.tensor(w.numpy(), requires_grad=True)
    ty = torch.nn.functional.conv2d(tx, tw, stride=(2, 1), padding=1)
    ty.backward(torch.tensor(gy))
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_kept_columns_survive_retain_graph():
    x = paddle.to_tensor(_r(2, 3, 5, 5), stop_gradient=False)
    w = paddle.to_tensor(_r(4, 3, 3, 3), stop_gradient=False)
    y = F.conv2d(x, w, padding=1).sum()
    y.backward(retain_graph=True)
    g1 = w.grad.numpy().copy()
    y.backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * g1, rtol=1e-12)


@pytest.mark.parity
@pytest.mark.parametrize("hw,stride", [(8, 2), (4, 1), (1, 1), (16, 1)])
def test_pointwise_small_and_large_planes(hw, stride, pd):
    # planes below _POINTWISE_MIN pixels take the batched-GEMM (im2col k=1) route
    def fn(lib, x, w, b):
        f = F.conv2d if lib is paddle else pd.nn.functional.conv2d
        return f(x, w, b, stride=stride)

    check_parity(fn, [_r(3, 4, hw, hw), _r(5, 4, 1, 1), _r(5)], pd)


# ------------------------------------------------------------------ linear / relu
@pytest.mark.parity
@pytest.mark.parametrize("x_grad", [False, True])
def test_linear_input_grad_skip(x_grad, pd):
    x, w, b = _r(6, 4), _r(4, 3), _r(3)
    res = {}
    for name, lib in (("hl", paddle), ("pd", pd)):
        tx = lib.to_tensor(x, stop_gradient=not x_grad)
        tw = lib.to_tensor(w, stop_gradient=False)
        tb = lib.to_tensor(b, stop_gradient=False)
        y = lib.nn.functional.linear(tx, tw, tb)
        (y * y).sum().backward()
        res[name] = (y.numpy(), tw.grad.numpy(), tb.grad.numpy(),
                     tx.grad.numpy() if x_grad else tx.grad)
    for a, e in zip(res["hl"], res["pd"]):
        if e is None:
            assert a is None
        else:
            np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-10)


def test_linear_no_input_grad_keeps_higher_order():
    x = paddle.to_tensor(_r(5, 4))
    w = paddle.to_tensor(_r(4, 3), stop_gradient=False)
    y = F.linear(x, w)
    (gw,) = paddle.grad((y * y).sum(), [w], create_graph=True)
    (ggw,) = paddle.grad(gw.sum(), [w])
    xa = x.numpy()
    np.testing.assert_allclose(ggw.numpy(), np.broadcast_to(
        2 * (xa.T @ xa).sum(axis=1, keepdims=True), (4, 3)), rtol=1e-10)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_relu_nan_and_signed_zero(dtype, pd):
    x = np.array([-1.0, 2.0, 0.0, -0.0, np.nan, np.inf, -np.inf], dtype=dtype)
    g = np.array([1.0, np.nan, 1.0, 1.0, 1.0, 2.0, np.nan], dtype=dtype)
    res = {}
    for name, lib in (("hl", paddle), ("pd", pd)):
        t = lib.to_tensor(x, stop_gradient=False)
        y = lib.nn.functional.relu(t)
        (gx,) = lib.grad(y, [t], lib.to_tensor(g))
        res[name] = (y.numpy(), gx.numpy())
    for a, e in zip(res["hl"], res["pd"]):
        np.testing.assert_array_equal(a, e)
        np.testing.assert_array_equal(np.signbit(a), np.signbit(e))


# ------------------------------------------------------------------ Adam
def _adam_reference(p, grads, lr, b1, b2, eps):
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    b1p, b2p = b1, b2
    for g in grads:
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        lr_t = lr * math.sqrt(1 - b2p) / (1 - b1p)
        p = p - lr_t * (m / (np.sqrt(v) + eps * math.sqrt(1 - b2p)))
        b1p *= b1
        b2p *= b2
    return p


def test_adam_in_place_matches_formula_across_shapes_and_dtypes():
    # one optimizer, parameters of different sizes and dtypes: the shared scratch buffer must
    # be sized and typed per parameter
    shapes = [(3, 4), (50,), (2, 3, 4), ()]
    params = [paddle.create_parameter(list(s), dtype) for s in shapes
              for dtype in ("float32", "float64")]
    init = [p.numpy().copy() for p in params]
    opt = paddle.optimizer.Adam(learning_rate=0.01, parameters=params)
    grads = [[_r(*p.shape).astype(p.numpy().dtype) for p in params] for _ in range(3)]
    for step in grads:
        for p, g in zip(params, step):
            p.grad = paddle.to_tensor(g)
        opt.step()
    for i, p in enumerate(params):
        exp = _adam_reference(init[i], [s[i] for s in grads], 0.01, 0.9, 0.999, 1e-8)
        tol = 1e-5 if p.numpy().dtype == np.float32 else 1e-12
        np.testing.assert_allclose(p.numpy(), exp, rtol=tol, atol=tol)


@pytest.mark.parity
def test_adam_parity_three_steps(pd):
    # fixed data: Adam's first steps divide by sqrt(v), so a gradient entry near zero makes the
    # comparison sensitive to the last bits; these inputs are away from that
    rng = np.random.default_rng(1)
    w0 = rng.standard_normal((4, 3)).astype("float32")
    x = rng.standard_normal((5, 4)).astype("float32")
    out = {}
    for name, lib in (("hl", paddle), ("pd", pd)):
        w = lib.create_parameter([4, 3], "float32",
                                 default_initializer=lib.nn.initializer.Assign(w0))
        opt = lib.optimizer.Adam(learning_rate=0.05, parameters=[w])
        for _ in range(3):
            (lib.matmul(lib.to_tensor(x), w) ** 2).mean().backward()
            opt.step()
            opt.clear_grad()
        out[name] = w.numpy()
    np.testing.assert_allclose(out["hl"], out["pd"], rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ allocator tuning
def test_tune_malloc_is_idempotent():
    first = K.tune_malloc()
    assert isinstance(first, bool)
    assert K.tune_malloc() is first


@pytest.mark.parametrize("env,expected", [({"PADDLE_HL_MALLOC_TUNING": "0"}, "False"),
                                          ({"MALLOC_ARENA_MAX": "2"}, "False")])
def test_tune_malloc_opt_out(env, expected):
    code = ("import paddle_hl; from paddle_hl.backend import _numpy as K; "
            "print(K.tune_malloc())")
    full_env = {k: v for k, v in os.environ.items()
                if not k.startswith("MALLOC_") and k != "PADDLE_HL_MALLOC_TUNING"}
    full_env.update(env)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=full_env, cwd=root, check=True)
    assert out.stdout.strip() == expected


# ------------------------------------------------------------------ depthwise phase-plane kernels
# the tests below draw from their own generator: the module's RNG feeds the tests above, whose
# data (Adam's, say) should not depend on which tests ran before them in a worker
_RNG2 = np.random.default_rng(12)


def _q(*shape, dtype="float64"):
    return _RNG2.standard_normal(shape).astype(dtype)


def _dw_cases():
    # (x shape, kernel, stride, dilation, pads, channel multiplier)
    return [
        ((2, 3, 9), (3,), (1,), (2,), ((2, 0),), 2),
        ((2, 3, 7), (3,), (2,), (1,), ((1, 1),), 1),
        ((2, 5, 6, 5), (3, 2), (2, 1), (1, 2), ((1, 0), (2, 1)), 1),
        ((3, 7, 7, 8), (3, 3), (2, 2), (1, 1), ((1, 1), (1, 1)), 2),
        ((2, 7, 8, 8), (3, 3), (3, 2), (2, 1), ((0, 2), (1, 1)), 1),
        ((2, 6, 5, 5), (5, 5), (1, 1), (1, 1), ((2, 2), (2, 2)), 1),
        ((2, 3, 1, 7), (1, 3), (1, 2), (1, 1), ((0, 0), (1, 1)), 1),
        ((2, 3, 2, 2), (3, 3), (2, 2), (1, 1), ((1, 1), (1, 1)), 1),  # phases without pixels
        ((1, 3, 4, 5, 6), (2, 2, 3), (2, 1, 1), (1, 2, 1), ((1, 1), (0, 1), (1, 1)), 3),
        # planes large enough for the compiled phase-plane kernels (rows of 16 or more)
        ((2, 3, 20, 18), (3, 3), (1, 1), (1, 1), ((1, 1), (1, 1)), 1),
        ((2, 4, 34, 33), (3, 3), (2, 2), (1, 1), ((1, 1), (0, 1)), 1),
        ((2, 2, 21, 24), (5, 3), (1, 2), (2, 1), ((3, 2), (2, 0)), 1),
        ((1, 3, 12, 40), (3, 3), (2, 1), (1, 1), ((1, 1), (1, 1)), 2),  # multiplier 2: NumPy
    ]


@pytest.fixture(params=[False, True], ids=["numpy", "compiled"])
def compiled(request, monkeypatch):
    """Run with NumPy's depthwise kernels, and with the numba extra's where it is installed
    (channels-last taps on small planes, phase planes on large ones)."""
    if request.param:
        pytest.importorskip("numba")
    monkeypatch.setitem(settings._values, settings.NUMBA_ENV, request.param)
    assert _numba.enabled() is request.param
    return request.param


def _dw_out_size(size, k, s, p, d):
    return tuple((n + lo + hi - dd * (kk - 1) - 1) // ss + 1
                 for n, kk, ss, (lo, hi), dd in zip(size, k, s, p, d))


@pytest.mark.parametrize("case", _dw_cases(), ids=lambda c: f"{c[0]}-k{c[1]}-s{c[2]}-m{c[5]}")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("block", [1 << 20, 256])  # one block, or many ragged ones
@pytest.mark.parametrize("layout", ["first", "last"])
def test_depthwise_blocked_kernels_match_whole_array_loop(case, dtype, block, layout,
                                                         monkeypatch, compiled):
    # a tiny block budget splits batch and channels into chunks that do not divide them
    monkeypatch.setattr(K, "_DW_BLOCK_BYTES", block)
    shape, k, s, d, p, m = case
    x = _q(*shape, dtype=dtype)
    if layout == "last":  # a channels-last tensor arrives as a transposed view
        x = np.moveaxis(np.ascontiguousarray(np.moveaxis(x, 1, -1)), -1, 1)
    c = shape[1]
    w = _q(c * m, 1, *k, dtype=dtype)
    osz = _dw_out_size(shape[2:], k, s, p, d)
    xpad = W.pad(x, p)
    tol = 1e-5 if dtype == "float32" else 1e-12
    ref = W._taps_forward(xpad, w, s, d, osz)
    for out_cl in (False, True):
        y = W.depthwise_forward(x, w, s, d, osz, p, out_cl=out_cl)
        assert y.shape == ref.shape and y.dtype == ref.dtype
        # the taps are summed in the same order as the whole-array loop: the same numbers
        np.testing.assert_array_equal(y, ref)
        assert (np.moveaxis(y, 1, -1) if out_cl else y).flags.c_contiguous
    np.testing.assert_array_equal(W.depthwise_forward(xpad, w, s, d, osz), ref)  # pre-padded
    g = _q(*ref.shape, dtype=dtype)
    dx_ref = W._taps_input_grad(g, w, xpad.shape, s, d)
    dx = W.depthwise_input_grad(g, w, xpad.shape, s, d, p)
    np.testing.assert_allclose(dx, W.crop(dx_ref, p, shape[2:]), rtol=tol, atol=tol)
    np.testing.assert_allclose(W.depthwise_input_grad(g, w, xpad.shape, s, d), dx_ref,
                               rtol=tol, atol=tol)
    gw_ref = W._taps_weight_grad(xpad, g, k, s, d)
    gw = W.depthwise_weight_grad(x, g, k, s, d, p)
    assert gw.shape == w.shape
    np.testing.assert_allclose(gw, gw_ref, rtol=10 * tol, atol=10 * tol)
    np.testing.assert_allclose(W.depthwise_weight_grad(xpad, g, k, s, d), gw_ref,
                               rtol=10 * tol, atol=10 * tol)


def test_depthwise_blocks_and_bufsize(monkeypatch):
    # MobileNetV2-like shapes: several samples share a block on small planes, a large plane is
    # split by channels; the kernels leave NumPy's ufunc buffer size as they found it
    plan = K._DwPlan(8, 960, (7, 7), ((1, 1), (1, 1)), (3, 3), (1, 1), (1, 1), (7, 7), 4)
    assert plan.nb == 8 and plan.q == (9, 9) and plan.run == 63
    plan = K._DwPlan(8, 96, (112, 112), ((1, 1), (1, 1)), (3, 3), (2, 2), (1, 1), (56, 56), 4)
    assert plan.nph == 4 and plan.q == (57, 57) and plan.run == 56 * 57
    assert plan.nb * plan.cb * plan.nph * plan.flat * 4 <= K._DW_BLOCK_BYTES
    before = np.getbufsize()
    x, w = _q(2, 4, 6, 6), _q(4, 1, 3, 3)
    W.depthwise_forward(x, w, (1, 1), (1, 1), (6, 6), ((1, 1), (1, 1)))
    W.depthwise_input_grad(x, w, (2, 4, 8, 8), (1, 1), (1, 1), ((1, 1), (1, 1)))
    assert np.getbufsize() == before


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the reference loop's inf * 0
def test_depthwise_non_finite_values_take_the_exact_path(compiled):
    # the wide grid multiplies zeros by pixels / weights no output of that tap reads: with a
    # non-finite one there the blocked sums would turn NaN, so those cases are redone exactly
    x, w = _q(2, 3, 6, 6), _q(3, 1, 3, 3)
    p, s, d, osz = ((1, 1), (1, 1)), (1, 1), (1, 1), (6, 6)
    g = _q(2, 3, 6, 6)
    x[0, 1, 2, 0] = np.inf  # column 0 is never read by tap kx=2
    gw = W.depthwise_weight_grad(x, g, (3, 3), s, d, p)
    ref = W._taps_weight_grad(W.pad(x, p), g, (3, 3), s, d)
    np.testing.assert_array_equal(np.isnan(gw), np.isnan(ref))
    np.testing.assert_allclose(gw, ref, rtol=1e-12)
    assert np.isfinite(gw[1, 0, :, 2]).all()  # the taps that never read the inf pixel
    w[2, 0, 0, 0] = np.inf
    dx = W.depthwise_input_grad(g, w, (2, 3, 8, 8), s, d, p)
    ref = W.crop(W._taps_input_grad(g, w, (2, 3, 8, 8), s, d), p, (6, 6))
    np.testing.assert_array_equal(dx, ref)
    y = W.depthwise_forward(x, w, s, d, osz, p)
    np.testing.assert_array_equal(y, W._taps_forward(W.pad(x, p), w, s, d, osz))


@pytest.mark.parity
@pytest.mark.parametrize("xs,kw", [
    ((3, 6, 9, 10), dict(stride=2, padding=1)),
    ((3, 6, 9, 10), dict(padding=2, dilation=2)),
    ((2, 6, 8, 8), dict(padding=[1, 0, 2, 1], stride=(1, 2))),
    ((2, 6, 11), dict(stride=2, padding=1)),
    ((2, 4, 4, 5, 6), dict(stride=(1, 2, 1), padding=1)),
])
@pytest.mark.parametrize("fmt", ["first", "last"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_depthwise_conv_blocked_parity(xs, kw, fmt, dtype, pd, monkeypatch):
    monkeypatch.setattr(K, "_DW_BLOCK_BYTES", 512)  # many blocks
    nd = len(xs) - 2
    c = xs[1]
    data_format = {1: ("NCL", "NLC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}[nd][
        fmt == "last"]
    x = _q(*xs, dtype=dtype)
    if fmt == "last":
        x = np.ascontiguousarray(np.moveaxis(x, 1, -1))

    def fn(lib, x, w, b):
        f = _conv(nd) if lib is paddle else _pd_conv(pd, nd)
        return f(x, w, b, groups=c, data_format=data_format, **kw)

    tol = 1e-4 if dtype == "float32" else None
    check_parity(fn, [x, _q(2 * c, 1, *(3,) * nd, dtype=dtype), _q(2 * c, dtype=dtype)], pd,
                 rtol=tol, atol=tol)


def test_depthwise_conv_gradcheck_blocked(monkeypatch):
    monkeypatch.setattr(K, "_DW_BLOCK_BYTES", 256)
    gradcheck(lambda x, w: F.conv2d(x, w, stride=2, padding=1, groups=3),
              [_q(2, 3, 5, 6), _q(6, 1, 3, 3)])


def test_depthwise_channels_last_output_is_not_copied():
    x = paddle.to_tensor(_q(2, 6, 6, 4, dtype="float32"))
    w = paddle.to_tensor(_q(4, 1, 3, 3, dtype="float32"))
    y = F.conv2d(x, w, padding=1, groups=4, data_format="NHWC")
    ref = F.conv2d(x.transpose([0, 3, 1, 2]), w, padding=1, groups=4)
    np.testing.assert_array_equal(y.numpy(), ref.numpy().transpose(0, 2, 3, 1))
    assert y._data.flags.c_contiguous
    # _from_cf hands back an array already in the requested layout, and copies otherwise
    a = np.moveaxis(np.zeros((2, 3, 3, 4)), -1, 1)
    assert W.from_cf(a, True).base is a.base or W.from_cf(a, True) is a.base
    assert W.from_cf(a, False) is not a


# ------------------------------------------------------------------ inference (no_grad) choices
def test_no_grad_needs_no_gradient():
    x = paddle.to_tensor(_q(1, 2, 3, 3), stop_gradient=False)
    assert C._need(x, None) == (True, False)
    with paddle.no_grad():
        assert C._need(x, None) == (False, False)


def test_batch_innermost_layout_for_inference():
    pads = ((1, 1), (1, 1))
    # training keeps the measured choice; without a backward only small stride-1 planes
    assert W.use_nin((8, 64, 56, 56), (64, 64, 3, 3), pads, 1, (56, 56), (1, 1), train=True)
    assert not W.use_nin((8, 64, 56, 56), (64, 64, 3, 3), pads, 1, (56, 56), (1, 1),
                          train=False)
    assert W.use_nin((8, 256, 14, 14), (256, 256, 3, 3), pads, 1, (14, 14), (1, 1),
                      train=False)
    assert not W.use_nin((8, 256, 28, 28), (256, 256, 3, 3), pads, 1, (14, 14), (2, 2),
                          train=False)
    assert not W.use_nin((2, 256, 14, 14), (256, 256, 3, 3), pads, 1, (14, 14), (1, 1),
                          train=False)


@pytest.mark.parametrize("xs", [(8, 16, 20, 20), (8, 16, 6, 6)])
def test_conv_inference_matches_training_forward(xs, monkeypatch):
    # no_grad picks the plain layout on the large plane and the batch-innermost one on the
    # small plane; both agree with the training-mode forward
    x = _q(*xs)
    w = paddle.to_tensor(_q(8, 16, 3, 3), stop_gradient=False)
    calls = []
    fwd_nin = W.conv_forward_nin
    monkeypatch.setattr(W, "conv_forward_nin", lambda *a: calls.append(1) or fwd_nin(*a))
    y_train = F.conv2d(paddle.to_tensor(x), w, padding=1)
    assert calls
    calls.clear()
    with paddle.no_grad():
        y_eval = F.conv2d(paddle.to_tensor(x), w, padding=1)
    assert bool(calls) == (xs[2] * xs[3] <= W._NIN_FWD_MAX_PLANE)
    np.testing.assert_allclose(y_eval.numpy(), y_train.numpy(), rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------ relu on large arrays
@pytest.mark.parametrize("n", [2 * 8192, 3 * 8192 + 5, 100003])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_relu_row_path_matches_fmax(n, dtype):
    x = _q(n, dtype=dtype)
    x[::7] = np.nan
    x[1::11] = -0.0
    x[2::13] = -np.inf
    y = F.relu(paddle.to_tensor(x)).numpy()
    ref = np.fmax(x, np.zeros_like(x))
    assert y.dtype == x.dtype
    np.testing.assert_array_equal(y, ref)
    assert not np.signbit(y).any()  # -0 and NaN give +0, as in Paddle
    xs = _q(4, 6, 40, 40, dtype=dtype)[:, :, ::2]  # not contiguous: the plain call
    np.testing.assert_array_equal(F.relu(paddle.to_tensor(xs)).numpy(), np.fmax(xs, 0))


@pytest.mark.parity
def test_relu_large_nan_and_signed_zero(pd):
    x = _q(5, 8192, dtype="float32")
    x[:, ::5] = -0.0
    x[:, 1::7] = np.nan
    res = {}
    for name, lib in (("hl", paddle), ("pd", pd)):
        t = lib.to_tensor(x, stop_gradient=False)
        y = lib.nn.functional.relu(t)
        (gx,) = lib.grad(y.sum(), [t])
        res[name] = (y.numpy(), gx.numpy())
    for a, e in zip(res["hl"], res["pd"]):
        np.testing.assert_array_equal(a, e)
        np.testing.assert_array_equal(np.signbit(a), np.signbit(e))


@pytest.mark.parametrize("shape,stride", [((3, 5, 2, 2), 1), ((4, 6, 1, 1), 1), ((3, 4, 4, 3), 2),
                                          ((1, 5, 2, 2), 1), ((3, 4, 9, 8), 1),
                                          ((2, 3, 17, 16), 2)])
def test_pointwise_conv_on_small_planes(shape, stride):
    """A 1x1 convolution on small planes runs as one GEMM over the whole batch (im2col with a
    1x1 kernel), on larger ones as per-sample GEMMs on x itself: the same values as the
    per-pixel definition either way."""
    x0 = _q(*shape)
    w0 = _q(7, shape[1], 1, 1)
    x = paddle.to_tensor(x0, stop_gradient=False)
    w = paddle.to_tensor(w0, stop_gradient=False)
    y = F.conv2d(x, w, stride=stride)
    xs = x0[:, :, ::stride, ::stride]
    want = np.einsum("oc,nchw->nohw", w0[:, :, 0, 0], xs)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-12, atol=1e-12)
    g = _q(*y.shape)
    y.backward(paddle.to_tensor(g))
    gx = np.zeros_like(x0)
    gx[:, :, ::stride, ::stride] = np.einsum("oc,nohw->nchw", w0[:, :, 0, 0], g)
    np.testing.assert_allclose(x.grad.numpy(), gx, rtol=1e-12, atol=1e-12)
    gw = np.einsum("nohw,nchw->oc", g, xs)[:, :, None, None]
    np.testing.assert_allclose(w.grad.numpy(), gw, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape_a,shape_b", [((16, 40), (150, 40)), ((2, 4, 40), (2, 9, 40)),
                                             ((9, 40), (4, 40))])
def test_gram_orientations_agree(shape_a, shape_b, monkeypatch):
    """windows.gram (a @ b^T) computes (b @ a^T)^T on long rows with more rows in b: both
    orientations give the product, C-contiguous (the weight gradient an optimizer reads)."""
    a, b = _r(*shape_a), _r(*shape_b)
    want = np.einsum("...ol,...kl->...ok", a, b)
    for min_len in (1, 10 ** 9):  # the swapped form where it applies, then never
        monkeypatch.setattr(W, "_GRAM_SWAP_MIN_LEN", min_len)
        got = W.gram(a, b)
        assert got.flags.c_contiguous and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_conv_weight_grad_through_swapped_gram(monkeypatch):
    """LeNet's second layer (batch-innermost columns): the weight gradient through the swapped
    GEMM equals the plain one's."""
    x = paddle.to_tensor(_r(8, 6, 14, 14, dtype="float32"), stop_gradient=False)
    w = paddle.to_tensor(_r(16, 6, 5, 5, dtype="float32"), stop_gradient=False)
    grads = []
    for min_len in (1, 10 ** 9):
        monkeypatch.setattr(W, "_GRAM_SWAP_MIN_LEN", min_len)
        w.clear_grad()
        F.conv2d(x, w).square().sum().backward()
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("n_out", [10, 64])
def test_linear_input_grad_thin_output(n_out):
    """linear's input gradient multiplies a copy of w^T for a few outputs (a classifier) and
    the view otherwise: both equal g @ w^T."""
    x = paddle.to_tensor(_r(32, 96), stop_gradient=False)
    w = paddle.to_tensor(_r(96, n_out), stop_gradient=False)
    g = _r(32, n_out)
    F.linear(x, w).backward(paddle.to_tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), g @ w.numpy().T, rtol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), x.numpy().T @ g, rtol=1e-12)
