"""Winograd F(2x2, 3x3) (backend/winograd.py): against a float64 reference and the im2col
path, in the NumPy and numba forms, with the non-finite fallback and the argument checks."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from paddle_hl.backend import settings, windows, winograd

# (batch, C, K, H, W, pads): odd sizes, every padding 0..2 (also uneven), C and K not
# multiples of anything, batch 1, a 1x1 output, planes of one row or column
GEOMETRIES = [
    (2, 3, 5, 7, 9, ((1, 1), (1, 1))),
    (1, 4, 3, 5, 6, ((0, 2), (2, 0))),
    (3, 7, 6, 8, 8, ((0, 0), (0, 0))),
    (2, 5, 4, 3, 4, ((2, 2), (1, 2))),
    (1, 5, 4, 1, 1, ((1, 1), (2, 0))),
    (1, 13, 11, 1, 9, ((2, 0), (0, 1))),
    (2, 9, 7, 11, 2, ((1, 2), (2, 1))),
    (2, 37, 29, 15, 13, ((1, 1), (1, 1))),
]


@pytest.fixture(params=["numpy-wide", "numpy-narrow", "numba"])
def compiled(request, monkeypatch):
    """Each form of the transforms: NumPy's on wide tile rows (one skipped GEMM column per
    tile row) and on exact ones, and the compiled kernels."""
    numba = request.param == "numba"
    if numba:
        pytest.importorskip("numba")
    else:
        wide = request.param == "numpy-wide"
        monkeypatch.setattr(winograd, "_WIDE_MAX_K_PER_TILE", 1 << 30 if wide else 0)
    monkeypatch.setitem(settings._values, settings.NUMBA_ENV, numba)
    from paddle_hl import backend

    assert backend.compiled_kernels_in_use() is numba
    return request.param


def _data(n, c, k, h, w, seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c, h, w)).astype(dtype)
    wt = (rng.standard_normal((k, c, 3, 3)) / np.sqrt(9 * c)).astype(dtype)
    b = rng.standard_normal(k).astype(dtype)
    return x, wt, b


def _reference(x, w, pads, bias=None):
    """The convolution in float64 as a sum over the 9 taps (independent of the library)."""
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    xp = np.pad(x, ((0, 0), (0, 0), *pads))
    oh, ow = xp.shape[2] - 2, xp.shape[3] - 2
    y = np.zeros((x.shape[0], w.shape[0], oh, ow))
    for i in range(3):
        for j in range(3):
            y += np.einsum("nchw,kc->nkhw", xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j])
    if bias is not None:
        y += bias.reshape(1, -1, 1, 1)
    return y


def _im2col(x, w, pads, bias=None):
    """The im2col path's forward (windows.im2col + one GEMM), as the convolution op runs it."""
    n, k = x.shape[0], w.shape[0]
    osz = (x.shape[2] + sum(pads[0]) - 2, x.shape[3] + sum(pads[1]) - 2)
    cols = windows.im2col(windows.pad(x, pads), (3, 3), (1, 1), (1, 1), osz)
    y = np.matmul(w.reshape(1, k, -1), cols).reshape(k, n, *osz).swapaxes(0, 1)
    return y if bias is None else y + bias.reshape(1, -1, 1, 1)


# (largest weight transform run in blocks, bytes per block): the whole-layer form, blocks of
# one tile row, the defaults
BLOCKINGS = [(0, 1 << 20), (1 << 30, 1),
             (winograd._FUSED_MAX_U_BYTES, winograd._FUSED_BLOCK_BYTES)]


def _blocking(monkeypatch, blocking):
    monkeypatch.setattr(winograd, "_FUSED_MAX_U_BYTES", blocking[0])
    monkeypatch.setattr(winograd, "_FUSED_BLOCK_BYTES", blocking[1])


@pytest.mark.parametrize("geo", GEOMETRIES, ids=lambda g: "x".join(map(str, g[:5])))
def test_float32_error_is_that_of_im2col(geo, compiled, monkeypatch):
    n, c, k, h, w, pads = geo
    x, wt, b = _data(n, c, k, h, w)
    for bias, blocking in itertools.product((b, None), BLOCKINGS):
        _blocking(monkeypatch, blocking)
        ref = _reference(x, wt, pads, bias)
        got = winograd.conv3x3_forward(x, winograd.weight_transform(wt), pads, bias)
        assert got.shape == ref.shape and got.dtype == np.float32
        assert got.flags.c_contiguous
        err = np.abs(got - ref).max()
        err_im2col = np.abs(_im2col(x, wt, pads, bias) - ref).max()
        # no worse than twice im2col's own float32 error (floor: a few ulps of the result,
        # for the tiny cases where the GEMM is nearly exact)
        floor = 4 * np.finfo(np.float32).eps * np.abs(ref).max()
        assert err <= 2 * max(err_im2col, floor), (err, err_im2col, floor)


def test_numba_and_numpy_forms_agree(monkeypatch):
    pytest.importorskip("numba")
    x, wt, b = _data(3, 21, 10, 13, 10, seed=1)
    pads = ((1, 2), (0, 1))
    u = winograd.weight_transform(wt)
    got = {}
    for numba, wide in ((False, 0), (False, 1 << 30), (True, 0)):
        monkeypatch.setitem(settings._values, settings.NUMBA_ENV, numba)
        monkeypatch.setattr(winograd, "_WIDE_MAX_K_PER_TILE", wide)
        got[numba, wide] = winograd.conv3x3_forward(x, u, pads, b)
    # NumPy's two forms make the same sums (the GEMM's columns are laid out differently);
    # the compiled kernels too, but the bias, added to M by NumPy and to the output by them
    np.testing.assert_allclose(got[False, 0], got[False, 1 << 30], rtol=0, atol=1e-6)
    np.testing.assert_allclose(got[True, 0], got[False, 0], rtol=0, atol=2e-6)


def test_float64(compiled):
    x, wt, b = _data(2, 6, 5, 9, 7, seed=2, dtype=np.float64)
    pads = ((2, 1), (1, 0))
    u = winograd.weight_transform(wt)
    assert u.dtype == np.float64
    got = winograd.conv3x3_forward(x, u, pads, b)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, _reference(x, wt, pads, b), rtol=0, atol=1e-13)


def test_weight_transform_is_g_w_gt():
    _, wt, _ = _data(1, 7, 5, 1, 1, seed=3, dtype=np.float64)
    g = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]])
    ref = np.einsum("ai,kcij,bj->abkc", g, wt, g).reshape(16, 5, 7)
    u = winograd.weight_transform(wt)
    assert u.shape == (16, 5, 7) and u.flags.c_contiguous
    np.testing.assert_allclose(u, ref, rtol=0, atol=1e-15)


def test_any_input_layout(compiled):
    # a channels-last tensor reaches the kernels as the transposed view of its array
    x, wt, b = _data(2, 6, 4, 7, 8, seed=4)
    x_cl = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    pads = ((1, 1), (1, 1))
    u = winograd.weight_transform(wt)
    np.testing.assert_array_equal(winograd.conv3x3_forward(x_cl, u, pads, b),
                                  winograd.conv3x3_forward(x, u, pads, b))


def test_thread_count_does_not_change_the_result(compiled, monkeypatch):
    # large enough to be split over the thread pool
    x, wt, b = _data(4, 64, 32, 30, 30, seed=5)
    u = winograd.weight_transform(wt)
    pads = ((1, 1), (1, 1))
    for blocking in BLOCKINGS[::2]:
        _blocking(monkeypatch, blocking)
        got = []
        for threads in (1, 2):
            monkeypatch.setitem(settings._values, settings.NUM_THREADS_ENV, threads)
            got.append(winograd.conv3x3_forward(x, u, pads, b))
        np.testing.assert_array_equal(got[0], got[1])


def _conv_op(x, wt, b, pads, data_format="NCHW"):
    """The convolution op under no_grad (the plan's ``winograd`` kind for the geometries of
    these tests), and the plan's label."""
    import paddle_hl as paddle
    from paddle_hl.backend import plans

    padding = [p for pair in pads for p in pair]
    xt = paddle.to_tensor(x if data_format == "NCHW" else x.transpose(0, 2, 3, 1))
    threads = paddle.device.get_num_threads()
    paddle.device.set_num_threads(1)  # NumPy's transforms run on one thread only
    try:
        with paddle.no_grad():
            y = paddle.nn.functional.conv2d(xt, paddle.to_tensor(wt), paddle.to_tensor(b),
                                            padding=padding, data_format=data_format).numpy()
        plan = plans.plan_conv(winograd_view(xt._data, data_format), wt, (1, 1), pads, (1, 1),
                               1, data_format == "NHWC", train=False)
    finally:
        paddle.device.set_num_threads(threads)
    return (y if data_format == "NCHW" else y.transpose(0, 3, 1, 2)), plan.label


def winograd_view(a, data_format):
    return a if data_format == "NCHW" else a.transpose(0, 3, 1, 2)


# 64 -> 64 channels on 2 x 32 x 32: 512 tiles, a geometry Winograd is chosen for
WIDE = (2, 64, 64, 32, 32)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_input_falls_back_to_im2col(bad, compiled, monkeypatch):
    x, wt, b = _data(*WIDE, seed=6)
    x[1, 2, 4, 4] = bad
    x[0, 0, 0, 8] = -bad if bad == bad else bad
    pads = ((1, 1), (1, 1))
    u = winograd.weight_transform(wt)
    for blocking in BLOCKINGS:
        _blocking(monkeypatch, blocking)
        assert winograd.conv3x3_forward(x, u, pads, b) is None
    got, label = _conv_op(x, wt, b, pads)
    assert "winograd" in label
    ref = _im2col(x, wt, pads, b)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    np.testing.assert_array_equal(np.isposinf(got), np.isposinf(ref))
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(ref))
    fin = np.isfinite(ref)
    assert not fin.all()
    np.testing.assert_allclose(got[fin], ref[fin], rtol=1e-5, atol=1e-5)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
def test_non_finite_weight_falls_back_to_im2col(compiled, data_format):
    x, wt, b = _data(*WIDE, seed=7)
    wt[1, 2, 0, 1] = np.inf
    assert winograd.weight_transform(wt) is None
    pads = ((0, 1), (2, 0))
    got, label = _conv_op(x, wt, b, pads, data_format)
    assert "winograd" in label
    ref = _im2col(x, wt, pads, b)
    np.testing.assert_array_equal(np.isfinite(got), np.isfinite(ref))
    np.testing.assert_array_equal(got[~np.isfinite(got)], ref[~np.isfinite(ref)])
    np.testing.assert_allclose(got[np.isfinite(ref)], ref[np.isfinite(ref)], atol=1e-5)


@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
def test_the_convolution_op_takes_winograd_without_a_gradient(compiled, data_format):
    x, wt, b = _data(*WIDE, seed=8)
    pads = ((1, 1), (1, 1))
    got, label = _conv_op(x, wt, b, pads, data_format)
    assert label.startswith("conv2d winograd 3x3")
    want = winograd.conv3x3_forward(x, winograd.weight_transform(wt), pads, b)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    err = np.abs(got - _reference(x, wt, pads, b)).max()
    im2col_err = np.abs(_im2col(x, wt, pads, b) - _reference(x, wt, pads, b)).max()
    assert err <= 2 * im2col_err, (err, im2col_err)


def test_a_weight_changed_in_place_is_transformed_again():
    """The plan keeps no transform of a weight: an in-place change (an optimizer step between
    two evaluations) is seen by the next call."""
    import paddle_hl as paddle

    x, wt, b = _data(*WIDE, seed=12)
    conv = paddle.nn.Conv2D(64, 64, 3, padding=1)
    conv.weight.set_value(wt)
    conv.bias.set_value(b)
    conv.eval()
    xt = paddle.to_tensor(x)
    threads = paddle.device.get_num_threads()
    paddle.device.set_num_threads(1)  # Winograd with either form of the transforms
    try:
        with paddle.no_grad():
            first = conv(xt).numpy()
        conv.weight._data *= 2  # in place, as the fused optimizer updates write
        with paddle.no_grad():
            second = conv(xt).numpy()
        label = paddle.nn.utils.explain(conv, xt).rows[0][-1]
    finally:
        paddle.device.set_num_threads(threads)
    assert "winograd" in label, label
    np.testing.assert_allclose(second - b[:, None, None], 2 * (first - b[:, None, None]),
                               rtol=1e-4, atol=1e-4)


def test_whole_array_form_for_other_backends():
    # the form CuPy arrays run (whole-array passes of the array module), here on NumPy
    x, wt, b = _data(2, 5, 3, 7, 6, seed=9)
    pads = ((2, 0), (1, 2))
    geo = winograd._Geometry(x.shape, pads)
    got = winograd._forward_generic(np, x, winograd.weight_transform(wt), geo, b)
    np.testing.assert_allclose(got, _reference(x, wt, pads, b), rtol=0, atol=2e-5)
    x[0, 0, 0, 0] = np.nan
    assert winograd._forward_generic(np, x, winograd.weight_transform(wt), geo, b) is None


def test_applies():
    ok = ((8, 64, 56, 56), (64, 64, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1)
    assert winograd.applies(*ok)
    for i, bad in [(1, (64, 64, 5, 5)), (2, (2, 2)), (3, ((3, 3), (1, 1))), (4, (2, 2)),
                   (5, 2), (0, (8, 64, 56))]:
        args = list(ok)
        args[i] = bad
        assert not winograd.applies(*args), args
    # an unpadded plane under 3 pixels has no output; one padded to 3 has one
    assert not winograd.applies((1, 2, 2, 9), (2, 2, 3, 3), (1, 1), ((0, 0), (1, 1)), (1, 1), 1)
    assert winograd.applies((1, 2, 1, 9), (2, 2, 3, 3), (1, 1), ((2, 0), (1, 1)), (1, 1), 1)


def test_argument_errors():
    x, wt, b = _data(1, 4, 3, 6, 6)
    u = winograd.weight_transform(wt)
    pads = ((1, 1), (1, 1))
    with pytest.raises(ValueError, match=r"conv3x3_forward.*same C"):
        winograd.conv3x3_forward(x[:, :3], u, pads)
    with pytest.raises(ValueError, match=r"conv3x3_forward.*float32 or both float64"):
        winograd.conv3x3_forward(x.astype(np.float64), u, pads)
    with pytest.raises(ValueError, match=r"conv3x3_forward.*pads"):
        winograd.conv3x3_forward(x, u, ((3, 1), (1, 1)))
    with pytest.raises(ValueError, match=r"conv3x3_forward.*bias must be \[K\] = \[3\]"):
        winograd.conv3x3_forward(x, u, pads, b[:2])
    with pytest.raises(ValueError, match=r"weight_transform.*\[K, C, 3, 3\]"):
        winograd.weight_transform(np.zeros((3, 4, 5, 5), np.float32))


def test_out_in_any_layout(compiled):
    # a channels-last result is written through its logical [N, K, OH, OW] view
    x, wt, b = _data(2, 6, 5, 8, 7, seed=10)
    pads = ((1, 0), (2, 1))
    u = winograd.weight_transform(wt)
    ref = winograd.conv3x3_forward(x, u, pads, b)
    res = np.full((2, 7, 8, 5), np.nan, np.float32)
    got = winograd.conv3x3_forward(x, u, pads, b, out=res.transpose(0, 3, 1, 2))
    np.testing.assert_array_equal(res.transpose(0, 3, 1, 2), ref)
    assert got.base is res
    with pytest.raises(ValueError, match=r"conv3x3_forward: out must be \[2, 5, 7, 8\]"):
        winograd.conv3x3_forward(x, u, pads, b, out=np.empty((2, 5, 8, 8), np.float32))


@pytest.mark.parametrize("compiled_forms", [False, True], ids=["numpy", "numba"])
def test_wins_where_measured(compiled_forms):
    # (batch, C, K, plane) -> won on NumPy, won with numba (one thread, CPU time, the weight
    # transformed on every call, as the convolution plan runs it)
    measured = {
        (8, 64, 64, 56): (True, True), (8, 128, 128, 28): (True, True),
        (8, 256, 256, 14): (True, True), (8, 512, 512, 7): (False, False),
        (32, 64, 64, 32): (True, True), (32, 512, 512, 4): (False, False),
        (8, 16, 16, 32): (False, True), (8, 32, 64, 28): (False, True),
        (8, 64, 64, 8): (False, False), (1, 512, 512, 7): (False, False),
        (4, 16, 32, 9): (False, False), (8, 8, 8, 28): (False, False),
        (32, 3, 64, 32): (False, False),
    }
    pads = ((1, 1), (1, 1))
    for (n, c, k, size), won in measured.items():
        got = winograd.wins((n, c, size, size), (k, c, 3, 3), pads, np.float32, compiled_forms)
        assert got is won[compiled_forms], (n, c, k, size)
        # on several threads only the compiled transforms pay (wall time)
        several = winograd.wins((n, c, size, size), (k, c, 3, 3), pads, np.float32,
                                compiled_forms, threads=2)
        assert several is (won[compiled_forms] and compiled_forms), (n, c, k, size)
        assert not winograd.wins((n, c, size, size), (k, c, 3, 3), pads, np.float64,
                                 compiled_forms)


def test_compiled_forms_that_cannot_build_fall_back(monkeypatch):
    pytest.importorskip("numba")
    monkeypatch.setitem(settings._values, settings.NUMBA_ENV, True)
    from paddle_hl.backend._numba import winograd as kernels

    def broken():
        raise RuntimeError("no LLVM here")

    monkeypatch.setattr(kernels, "warm_up", broken)
    monkeypatch.setattr(winograd, "_compiled", {"kernels": None, "error": None})
    x, wt, b = _data(1, 3, 2, 6, 6, seed=12)
    got = winograd.conv3x3_forward(x, winograd.weight_transform(wt), ((1, 1), (1, 1)), b)
    np.testing.assert_allclose(got, _reference(x, wt, ((1, 1), (1, 1)), b), atol=1e-5)
    assert "no LLVM here" in winograd._compiled["error"]
