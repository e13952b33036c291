"""The channels-last depthwise kernels of small planes (paddle_hl/backend/_numpy.py): against
explicit loops, against the generic tap loops of ``windows``, the blocked phase-plane form, and
finite differences through ``conv2d``."""

import itertools

import numpy as np
import pytest

import paddle_hl as paddle
import paddle_hl.nn.functional as F
from paddle_hl.backend import _numpy
from paddle_hl.backend import windows as K
from tests.op_check import gradcheck

RNG = np.random.default_rng(7)

# (n, c, size, ksize, stride, dilation, pads): every one runs channels last
GEOMS = [
    (1, 5, (4, 4), (3, 3), (1, 1), (1, 1), ((1, 1), (1, 1))),  # batch 1
    (3, 7, (5, 7), (3, 3), (2, 2), (1, 1), ((1, 1), (1, 1))),  # odd sizes, stride 2
    (2, 4, (7, 6), (3, 2), (2, 1), (1, 2), ((2, 0), (1, 1))),  # dilation, uneven padding
    (2, 6, (8, 8), (5, 5), (1, 1), (1, 1), ((2, 2), (2, 2))),  # 5x5, MobileNetV2's 8x8 plane
    (2, 9, (14, 14), (3, 3), (2, 2), (1, 1), ((1, 1), (1, 1))),  # 14x14 -> 7x7
    (4, 3, (2, 2), (3, 3), (1, 1), (1, 1), ((1, 1), (1, 1))),  # taps reading mostly padding
    (2, 3, (9,), (3,), (1,), (1,), ((1, 1),)),  # 1-D
    (2, 3, (5, 5), (1, 1), (2, 2), (1, 1), ((0, 0), (0, 0))),  # one tap
    (2, 3, (3, 4, 4), (3, 3, 3), (1, 2, 1), (1, 1, 1), ((1, 1),) * 3),  # 3-D
]
IDS = ["batch1", "odd-s2", "dil-pads", "k5", "s2-14", "tiny", "1d", "1x1", "3d"]


def _out_size(size, ksize, stride, dil, pads):
    return tuple((s + lo + hi - d * (k - 1) - 1) // st + 1
                 for s, k, st, d, (lo, hi) in zip(size, ksize, stride, dil, pads))


def _naive_forward(x, w, stride, dil, pads, osz):
    """Depthwise convolution by explicit loops over output pixels and taps."""
    n, c = x.shape[:2]
    xp = np.pad(x, ((0, 0), (0, 0), *pads))
    out = np.zeros((n, c, *osz), x.dtype)
    for o in itertools.product(*[range(v) for v in osz]):
        for t in itertools.product(*[range(k) for k in w.shape[2:]]):
            idx = tuple(oi * s + ti * d for oi, ti, s, d in zip(o, t, stride, dil))
            out[(slice(None), slice(None)) + o] += xp[(slice(None), slice(None)) + idx] * w[
                (slice(None), 0) + t]
    return out


def _layouts(x):
    """x channel-first, and the same values as a channels-last view."""
    return [x, np.moveaxis(np.ascontiguousarray(np.moveaxis(x, 1, -1)), -1, 1)]


def _is_cl(a):
    return np.moveaxis(a, 1, -1).flags.c_contiguous


@pytest.mark.parametrize("geom", GEOMS, ids=IDS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_small_plane_kernels_match_references(geom, dtype):
    n, c, size, ksize, stride, dil, pads = geom
    osz = _out_size(size, ksize, stride, dil, pads)
    assert _numpy._use_cl(size, osz, 1)
    x = RNG.standard_normal((n, c, *size)).astype(dtype)
    w = RNG.standard_normal((c, 1, *ksize)).astype(dtype)
    g = RNG.standard_normal((n, c, *osz)).astype(dtype)
    tol = 1e-12 if dtype == "float64" else 2e-5
    ref = _naive_forward(x.astype("float64"), w.astype("float64"), stride, dil, pads, osz)
    xpad = K.pad(x, pads)
    padded = (n, c, *xpad.shape[2:])
    dx_ref = K.crop(K._taps_input_grad(g, w, padded, stride, dil), pads, size)
    gw_ref = K._taps_weight_grad(xpad, g, ksize, stride, dil)
    for xv, gv, out_cl in itertools.product(_layouts(x), _layouts(g), [False, True]):
        y = K.depthwise_forward(xv, w, stride, dil, osz, pads, out_cl=out_cl)
        assert y.shape == (n, c, *osz) and y.dtype == x.dtype
        assert _is_cl(y) if out_cl else y.flags.c_contiguous
        np.testing.assert_allclose(y, ref, rtol=tol, atol=tol)
        # the taps are summed in the generic loop's order: the same bits
        np.testing.assert_array_equal(y, K._taps_forward(xpad, w, stride, dil, osz))
        dx = K.depthwise_input_grad(gv, w, padded, stride, dil, pads, out_cl=out_cl)
        assert dx.shape == x.shape and dx.dtype == x.dtype
        assert _is_cl(dx) if out_cl else dx.flags.c_contiguous
        np.testing.assert_array_equal(dx, dx_ref)
        gw = K.depthwise_weight_grad(xv, gv, ksize, stride, dil, pads)
        assert gw.shape == w.shape and gw.dtype == w.dtype
        np.testing.assert_allclose(gw, gw_ref, rtol=tol, atol=tol * n * np.prod(osz))
    # adjoint identities in float64
    if dtype == "float64":
        y = K.depthwise_forward(x, w, stride, dil, osz, pads)
        dx = K.depthwise_input_grad(g, w, padded, stride, dil, pads)
        gw = K.depthwise_weight_grad(x, g, ksize, stride, dil, pads)
        np.testing.assert_allclose(np.vdot(y, g), np.vdot(x, dx), rtol=1e-12)
        np.testing.assert_allclose(np.vdot(y, g), np.vdot(w, gw), rtol=1e-12)


@pytest.mark.parametrize("geom", [GEOMS[1], GEOMS[3]], ids=["odd-s2", "k5"])
def test_small_plane_matches_blocked_form(geom, monkeypatch):
    """The channels-last and the blocked phase-plane forms agree: forward and input gradient
    bit for bit (same order of tap sums), weight gradient to rounding."""
    n, c, size, ksize, stride, dil, pads = geom
    osz = _out_size(size, ksize, stride, dil, pads)
    x = RNG.standard_normal((n, c, *size)).astype("float32")
    w = RNG.standard_normal((c, 1, *ksize)).astype("float32")
    g = RNG.standard_normal((n, c, *osz)).astype("float32")
    padded = (n, c, *[s + lo + hi for s, (lo, hi) in zip(size, pads)])

    def run():
        return (K.depthwise_forward(x, w, stride, dil, osz, pads),
                K.depthwise_input_grad(g, w, padded, stride, dil, pads),
                K.depthwise_weight_grad(x, g, ksize, stride, dil, pads))

    y, dx, gw = run()
    monkeypatch.setattr(_numpy, "_DW_CL_MAX_PLANE", 0)
    assert not _numpy._use_cl(size, osz, 1)
    y0, dx0, gw0 = run()
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_array_equal(dx, dx0)
    np.testing.assert_allclose(gw, gw0, rtol=1e-5, atol=1e-5)


def test_small_plane_non_finite_values_are_exact():
    """Nothing is computed outside the real pixels: inf/NaN in w or x reach exactly the
    outputs and gradients that read them (as the generic loops give)."""
    n, c, size, ksize, stride, dil, pads = GEOMS[1]
    osz = _out_size(size, ksize, stride, dil, pads)
    x = RNG.standard_normal((n, c, *size))
    w = RNG.standard_normal((c, 1, *ksize))
    g = RNG.standard_normal((n, c, *osz))
    w[1, 0, 0, 0] = np.inf
    x[0, 2, 0, 0] = np.nan
    xpad = K.pad(x, pads)
    padded = (n, c, *xpad.shape[2:])
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(K.depthwise_forward(x, w, stride, dil, osz, pads),
                                      K._taps_forward(xpad, w, stride, dil, osz))
        dx = K.depthwise_input_grad(g, w, padded, stride, dil, pads)
        np.testing.assert_array_equal(
            dx, K.crop(K._taps_input_grad(g, w, padded, stride, dil), pads, size))
        assert np.isfinite(dx[:, 0]).all() and not np.isfinite(dx[:, 1]).all()
        gw = K.depthwise_weight_grad(x, g, ksize, stride, dil, pads)
        np.testing.assert_allclose(gw, K._taps_weight_grad(xpad, g, ksize, stride, dil),
                                   rtol=1e-12)
        assert np.isnan(gw[2]).any() and np.isfinite(np.delete(gw, 2, axis=0)).all()


def test_channels_last_selection():
    """Small planes of multiplier-1 layers run channels last; larger ones and m > 1 do not."""
    assert _numpy._use_cl((8, 8), (8, 8), 1)
    assert _numpy._use_cl((14, 14), (7, 7), 1)
    assert not _numpy._use_cl((14, 14), (14, 14), 1)
    assert not _numpy._use_cl((16, 16), (8, 8), 1)
    assert not _numpy._use_cl((4, 4), (4, 4), 2)


@pytest.mark.parametrize("stride, dilation, padding", [(1, 1, 1), (2, 1, 1), (1, 2, 2),
                                                       (2, 1, [1, 0])])
@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
def test_depthwise_conv2d_small_plane_gradcheck(stride, dilation, padding, data_format):
    """Finite differences of conv2d(groups=C) on a 5x5 plane (float64), input and weight."""
    c = 4
    shape = (2, c, 5, 5) if data_format == "NCHW" else (2, 5, 5, c)
    x = RNG.standard_normal(shape)
    w = RNG.standard_normal((c, 1, 3, 3))
    gradcheck(lambda t, k: F.conv2d(t, k, stride=stride, padding=padding, dilation=dilation,
                                    groups=c, data_format=data_format), [x, w])


def test_depthwise_conv2d_small_plane_training_step():
    """A depthwise layer on a 4x4 plane learns the same in float32 as in float64."""
    c = 6
    x = RNG.standard_normal((3, c, 4, 4))
    w = RNG.standard_normal((c, 1, 3, 3))
    grads = []
    for dt in ["float64", "float32"]:
        xt = paddle.to_tensor(x.astype(dt), stop_gradient=False)
        wt = paddle.to_tensor(w.astype(dt), stop_gradient=False)
        (F.conv2d(xt, wt, padding=1, groups=c) ** 2).sum().backward()
        grads.append((xt.grad.numpy(), wt.grad.numpy()))
    for a, b in zip(grads[0], grads[1]):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-4)
