"""Resampling and vision ops (paddle_hl/nn/functional/vision.py, nn/layer/vision.py):
interpolate/upsample, grid_sample, affine_grid, pixel/channel shuffles and their layers."""

import numpy as np
import pytest

import paddle_hl as paddle
import paddle_hl.nn.functional as F
from tests.op_check import gradcheck, run_both

rng = np.random.default_rng(0)


def arr(shape, dtype="float32", lo=None, hi=None):
    if lo is not None:
        return (rng.random(shape) * (hi - lo) + lo).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def parity(fn, inputs, pd, tol=None, grad_tol=None, exact=False):
    """paddle_hl vs real Paddle: shapes, dtypes, values (exact for integers) and gradients."""
    res = run_both(fn, inputs, pd)
    (ho, hg, hd, hs), (po, pg, pdt, ps) = res["hl"], res["pd"]
    assert len(ho) == len(po)
    for i, (a, b) in enumerate(zip(ho, po)):
        assert hs[i] == ps[i], f"output {i} shape: paddle_hl {hs[i]}, paddle {ps[i]}"
        assert hd[i] == pdt[i], f"output {i} dtype: paddle_hl {hd[i]}, paddle {pdt[i]}"
        t = tol if tol is not None else (1e-10 if hd[i] == "float64" else 1e-5)
        if exact:
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=t, atol=t, err_msg=f"output {i}")
    gt = grad_tol if grad_tol is not None else tol
    for i, (a, b) in enumerate(zip(hg, pg)):
        if a is None or b is None:
            assert (a is None) == (b is None), f"grad {i}: one library has none"
            continue
        t = gt if gt is not None else (1e-10 if a.dtype == np.float64 else 1e-5)
        np.testing.assert_allclose(a, b, rtol=t, atol=t, err_msg=f"grad of input {i}")


# =============================================================== interpolate: parity

_LIN_MODES = {3: "linear", 4: "bilinear", 5: "trilinear"}
_CF = {3: "NCW", 4: "NCHW", 5: "NCDHW"}
_CL = {3: "NWC", 4: "NHWC", 5: "NDHWC"}
_SHAPES = {3: (2, 3, 7), 4: (2, 3, 4, 7), 5: (1, 2, 3, 4, 5)}
_OUT = {3: [11], 4: [6, 3], 5: [2, 5, 9]}


def _interp_cases():
    cases = []
    for rank in (3, 4, 5):
        lin = _LIN_MODES[rank]
        for ac, am in ((False, 0), (False, 1), (True, 0)):
            cases.append((lin, rank, "size", ac, am))
            cases.append((lin, rank, "scale", ac, am))
        cases.append(("area", rank, "size", False, 0))
    for rank in (4, 5):
        cases.append(("nearest", rank, "size", False, 0))
        cases.append(("nearest", rank, "scale", False, 0))
    for ac in (False, True):
        cases.append(("bicubic", 4, "size", ac, 0))
        cases.append(("bicubic", 4, "scale", ac, 1))
    return cases


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("channel_last", [False, True])
@pytest.mark.parametrize("mode,rank,how,ac,am", _interp_cases())
def test_interpolate_parity(pd, mode, rank, how, ac, am, channel_last, dtype):
    shape = _SHAPES[rank]
    if channel_last:
        shape = (shape[0],) + shape[2:] + (shape[1],)
    df = (_CL if channel_last else _CF)[rank]
    if how == "size":
        kw = {"size": _OUT[rank]}
    else:
        kw = {"scale_factor": [1.7, 0.6, 2.5][:rank - 2] if rank > 3 else 1.75}
    x = arr(shape, dtype)
    grad_tol = None
    if dtype == "float64" and (mode == "area" or (mode == "bicubic" and not ac)):
        # Paddle's float64 backward of these two modes rounds its weights/coordinates to
        # float32 (its forward does not); ours is the exact derivative of the forward
        grad_tol = 1e-5
    if mode == "area" and channel_last:
        pytest.skip("Paddle's area mode ignores data_format (pools the wrong axes)")
    parity(lambda P, t: P.nn.functional.interpolate(t, mode=mode, align_corners=ac,
                                                    align_mode=am, data_format=df, **kw),
           [x], pd, grad_tol=grad_tol)


@pytest.mark.parity
@pytest.mark.parametrize("n_in,n_out", [(10, 7), (10, 17), (5, 1), (1, 4), (3, 10), (7, 25)])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "nearest"])
def test_interpolate_parity_sizes(pd, mode, n_in, n_out):
    x = arr((1, 2, 3, n_in))
    for ac in ((False, True) if mode != "nearest" else (False,)):
        parity(lambda P, t: P.nn.functional.interpolate(t, size=[5, n_out], mode=mode,
                                                        align_corners=ac), [x], pd)


@pytest.mark.parity
@pytest.mark.parametrize("scale", [0.7, 1.1, 1.3, 0.35, 2.3, 3.0, 0.55])
@pytest.mark.parametrize("mode", ["linear", "nearest"])
def test_interpolate_parity_scales(pd, mode, scale):
    # the ratio is 1/scale (not in/out) when a scale is given
    x = arr((2, 3, 1, 10))
    if mode == "linear":
        for am in (0, 1):
            parity(lambda P, t: P.nn.functional.interpolate(
                t[:, :, 0], scale_factor=scale, mode="linear", align_mode=am,
                data_format="NCW"), [x], pd)
    else:
        parity(lambda P, t: P.nn.functional.interpolate(t, scale_factor=[1, scale]), [x], pd)


@pytest.mark.parity
@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
@pytest.mark.parametrize("scale", [[1.3, 1.1], [1.3, 1.0], [1.3, 2.0]])
def test_interpolate_unchanged_sizes(pd, mode, scale):
    # all sizes unchanged -> a copy; one size unchanged under scale != 1 -> still resampled
    x = arr((1, 2, 3, 6))
    parity(lambda P, t: P.nn.functional.interpolate(t, scale_factor=scale, mode=mode), [x], pd)


def test_interpolate_identity_is_copy():
    x = paddle.to_tensor(arr((1, 1, 3, 4)))
    y = F.interpolate(x, size=[3, 4], mode="bilinear")
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    y[0, 0, 0, 0] = 100.0
    assert float(x[0, 0, 0, 0]) != 100.0


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["uint8", "int32", "int64"])
def test_interpolate_nearest_int_b75(pd, dtype):
    # B75: nearest on 5-D NCDHW input and on integer input
    x = rng.integers(0, 200, (2, 3, 5, 7)).astype(dtype)
    parity(lambda P, t: P.nn.functional.interpolate(t, size=[9, 4], mode="nearest"), [x], pd,
           exact=True)
    x5 = rng.integers(0, 200, (1, 2, 3, 4, 5)).astype(dtype)
    parity(lambda P, t: P.nn.functional.interpolate(t, scale_factor=[2, 0.5, 1.5],
                                                    data_format="NCDHW"), [x5], pd, exact=True)
    parity(lambda P, t: P.nn.functional.interpolate(t, size=[4, 2, 7], data_format="NDHWC"),
           [x5], pd, exact=True)


@pytest.mark.parity
@pytest.mark.parametrize("rank", [3, 4, 5])
@pytest.mark.parametrize("ac,am", [(False, 0), (False, 1), (True, 0)])
def test_interpolate_uint8_linear(pd, rank, ac, am):
    x = rng.integers(0, 255, _SHAPES[rank]).astype("uint8")
    res = run_both(lambda P, t: P.nn.functional.interpolate(
        t, size=_OUT[rank], mode=_LIN_MODES[rank], align_corners=ac, align_mode=am,
        data_format=_CF[rank]), [x], pd)
    a, b = res["hl"][0][0], res["pd"][0][0]
    assert a.dtype == np.uint8 and a.shape == b.shape
    # computed in float32 and truncated: an exact-integer result may land 1 ulp either side
    np.testing.assert_allclose(a.astype(int), b.astype(int), atol=1, rtol=0)
    assert np.mean(a == b) > 0.9


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic", "area"])
def test_interpolate_low_precision(dtype, mode):
    x = arr((1, 2, 4, 5))
    ref = F.interpolate(paddle.to_tensor(x), size=[7, 3], mode=mode).numpy()
    t = paddle.to_tensor(x).astype(dtype)
    t.stop_gradient = False
    out = F.interpolate(t, size=[7, 3], mode=mode)
    assert out.dtype == t.dtype
    tol = 1e-2 if dtype == "float16" else 5e-2
    np.testing.assert_allclose(out.astype("float32").numpy(), ref, rtol=tol, atol=tol)
    out.sum().backward()
    assert t.grad.dtype == t.dtype and t.grad.shape == [1, 2, 4, 5]


@pytest.mark.parity
@pytest.mark.parametrize("case", ["size_tensor", "size_tensor_list", "size_tuple", "size_float",
                                  "scale_tensor", "scale_tensor1", "scale_tuple",
                                  "scale_list_tensor", "size_int32", "upper_mode",
                                  "lower_format"])
def test_interpolate_argument_forms(pd, case):
    x = arr((1, 2, 4, 5))

    def fn(P, t):
        f = P.nn.functional.interpolate
        forms = {
            "size_tensor": lambda: f(t, size=P.to_tensor([3, 6]), mode="bilinear"),
            "size_tensor_list": lambda: f(t, size=[P.to_tensor(3), 6], mode="bilinear"),
            "size_tuple": lambda: f(t, size=(2, 3), mode="bicubic"),
            "size_float": lambda: f(t, size=[2.5, 3], mode="bilinear"),
            "scale_tensor": lambda: f(t, scale_factor=P.to_tensor([2.0, 1.5]), mode="bilinear"),
            "scale_tensor1": lambda: f(t, scale_factor=P.to_tensor(2.0), mode="nearest"),
            "scale_tuple": lambda: f(t, scale_factor=(2, 3), mode="bilinear"),
            "scale_list_tensor": lambda: f(t, scale_factor=[P.to_tensor(1.5), 2]),
            "size_int32": lambda: f(t, size=P.to_tensor([3, 7], dtype="int32")),
            "upper_mode": lambda: f(t, size=[3, 7], mode="BILINEAR"),
            "lower_format": lambda: f(t, size=[3, 7], mode="bilinear", data_format="nchw"),
        }
        return forms[case]()

    parity(fn, [x], pd)


def test_upsample_is_interpolate():
    x = paddle.to_tensor(arr((1, 2, 3, 4)))
    for kw in ({"size": [5, 2], "mode": "bicubic"}, {"scale_factor": 2},
               {"scale_factor": 0.5, "mode": "bilinear", "align_corners": True}):
        np.testing.assert_array_equal(F.upsample(x, **kw).numpy(),
                                      F.interpolate(x, **kw).numpy())


def test_interpolate_area_channel_last():
    # area mode honours data_format (Paddle 2.6 pools the wrong axes for NHWC)
    x = arr((2, 6, 4, 3))
    out = F.interpolate(paddle.to_tensor(x), size=[3, 2], mode="area", data_format="NHWC")
    ref = x.reshape(2, 3, 2, 2, 2, 3).mean(axis=(2, 4))
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6, atol=1e-6)


def test_interpolate_matches_numpy_formulas():
    # bilinear, half-pixel centres, checked against a direct NumPy evaluation
    x = arr((1, 1, 4, 5), "float64")
    out = F.interpolate(paddle.to_tensor(x), size=[7, 3], mode="bilinear").numpy()[0, 0]

    def coords(n_in, n_out):
        src = np.maximum((np.arange(n_out) + 0.5) * n_in / n_out - 0.5, 0)
        i0 = np.minimum(np.floor(src).astype(int), n_in - 1)
        return i0, np.minimum(i0 + 1, n_in - 1), src - i0

    y0, y1, ly = coords(4, 7)
    x0, x1, lx = coords(5, 3)
    im = x[0, 0]
    ref = ((1 - ly)[:, None] * ((1 - lx) * im[y0][:, x0] + lx * im[y0][:, x1])
           + ly[:, None] * ((1 - lx) * im[y1][:, x0] + lx * im[y1][:, x1]))
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6)


# =============================================================== interpolate: gradients

@pytest.mark.parametrize("mode,shape,kw", [
    ("linear", (1, 2, 5), {"size": [8], "data_format": "NCW"}),
    ("linear", (1, 5, 2), {"scale_factor": 0.6, "data_format": "NWC", "align_mode": 1}),
    ("bilinear", (1, 1, 3, 4), {"size": [5, 3], "align_corners": True}),
    ("bilinear", (1, 3, 4, 1), {"scale_factor": 1.5, "data_format": "NHWC"}),
    ("trilinear", (1, 1, 2, 3, 2), {"size": [3, 2, 4], "data_format": "NCDHW"}),
    ("bicubic", (1, 1, 3, 4), {"size": [5, 6]}),
    ("bicubic", (1, 1, 4, 3), {"size": [2, 5], "align_corners": True}),
    ("nearest", (1, 1, 3, 4), {"size": [5, 3]}),
    ("nearest", (1, 1, 2, 2, 3), {"scale_factor": 2, "data_format": "NCDHW"}),
    ("area", (1, 2, 5), {"size": [3]}),
    ("area", (1, 1, 5, 4), {"size": [2, 3]}),
    ("area", (1, 1, 3, 4, 2), {"size": [2, 2, 1]}),
])
def test_interpolate_gradcheck(mode, shape, kw):
    gradcheck(lambda t: F.interpolate(t, mode=mode, **kw), [arr(shape, "float64")])


def test_interpolate_double_backward():
    # the backward is itself differentiable (create_graph): check d/dx of a gradient
    x0 = arr((1, 1, 3, 4), "float64")
    w = arr((1, 1, 5, 7), "float64")
    v = arr((1, 1, 3, 4), "float64")

    def first_grad(xa, create_graph):
        x = paddle.to_tensor(xa, stop_gradient=False)
        y = F.interpolate(x, size=[5, 7], mode="bicubic")
        (g,) = paddle.grad((y * y * paddle.to_tensor(w)).sum(), x, create_graph=create_graph)
        return x, g

    x, g = first_grad(x0, True)
    (g * paddle.to_tensor(v)).sum().backward()
    eps = 1e-6
    num = np.zeros_like(x0)
    for idx in np.ndindex(x0.shape):
        xp, xm = x0.copy(), x0.copy()
        xp[idx] += eps
        xm[idx] -= eps
        num[idx] = ((first_grad(xp, False)[1].numpy() * v).sum()
                    - (first_grad(xm, False)[1].numpy() * v).sum()) / (2 * eps)
    np.testing.assert_allclose(x.grad.numpy(), num, rtol=1e-5, atol=1e-6)


def test_interpolate_int_has_no_grad():
    x = paddle.to_tensor(np.arange(12).reshape(1, 1, 3, 4))
    y = F.interpolate(x, scale_factor=2)
    assert y.dtype == paddle.int64 and y.stop_gradient


# =============================================================== interpolate: errors

@pytest.mark.parametrize("kwargs,shape,dtype,exc,msg", [
    ({"size": [4], "mode": "foo"}, (1, 1, 5), "float32", ValueError, "mode"),
    ({"size": [4]}, (1, 1, 5), "float32", ValueError, "4-D or 5-D"),
    ({"size": [4], "mode": "bilinear"}, (1, 1, 5), "float32", ValueError, "4-D"),
    ({"size": [4, 4], "mode": "linear"}, (1, 1, 5, 5), "float32", ValueError, "3-D"),
    ({"size": [4, 4], "mode": "trilinear"}, (1, 1, 5, 5), "float32", ValueError, "5-D"),
    ({"size": [4], "mode": "linear"}, (1, 1, 5), "float32", ValueError, "data_format"),
    ({"size": [4, 4], "data_format": "NCW"}, (1, 1, 5, 5), "float32", ValueError,
     "data_format"),
    ({"size": [4, 4], "align_corners": True}, (1, 1, 5, 5), "float32", ValueError,
     "align_corners"),
    ({"size": [4, 4], "mode": "bilinear", "align_corners": 1}, (1, 1, 5, 5), "float32",
     TypeError, "align_corners"),
    ({"size": [4, 4], "mode": "bilinear", "align_mode": 2}, (1, 1, 5, 5), "float32",
     ValueError, "align_mode"),
    ({}, (1, 1, 5, 5), "float32", ValueError, "must not be None"),
    ({"size": [4, 4], "scale_factor": 2}, (1, 1, 5, 5), "float32", ValueError, "only one"),
    ({"scale_factor": 2, "mode": "area"}, (1, 1, 5, 5), "float32", ValueError, "AREA"),
    ({"size": [4]}, (1, 1, 5, 5), "float32", ValueError, "rank(x) - 2 == len(size)"),
    ({"size": 4}, (1, 1, 5, 5), "float32", TypeError, "size"),
    ({"size": [0, 4]}, (1, 1, 5, 5), "float32", ValueError, "greater than 0"),
    ({"scale_factor": -1}, (1, 1, 5, 5), "float32", ValueError, "greater than zero"),
    ({"scale_factor": 0}, (1, 1, 5, 5), "float32", ValueError, "greater than zero"),
    ({"scale_factor": [2, 3, 4]}, (1, 1, 5, 5), "float32", ValueError, "scale_shape"),
    ({"scale_factor": "a"}, (1, 1, 5, 5), "float32", TypeError, "scale"),
    ({"scale_factor": 0.1}, (1, 1, 5, 5), "float32", ValueError, "greater than 0"),
    ({"size": [4, 4], "mode": "bilinear"}, (1, 1, 5, 5), "int64", TypeError, "int64"),
    ({"size": [4, 4], "mode": "bicubic"}, (1, 1, 5, 5), "uint8", TypeError, "uint8"),
    ({"size": [4, 4]}, (1, 1, 5, 5), "bool", TypeError, "bool"),
    ({"size": [4, 4], "mode": "bilinear"}, (0, 1, 5, 5), "float32", ValueError, "contain 0"),
])
def test_interpolate_errors(kwargs, shape, dtype, exc, msg):
    x = paddle.zeros(shape, dtype=dtype)
    with pytest.raises(exc, match="interpolate") as info:
        F.interpolate(x, **kwargs)
    assert msg in str(info.value)


@pytest.mark.parity
def test_interpolate_errors_match_paddle_types(pd):
    cases = [({"size": [4], "mode": "foo"}, (1, 1, 5)),
             ({"size": [4, 4], "scale_factor": 2}, (1, 1, 5, 5)),
             ({"scale_factor": -1}, (1, 1, 5, 5)),
             ({"size": [4, 4], "mode": "bilinear", "align_mode": 2}, (1, 1, 5, 5)),
             ({"size": [4, 4], "mode": "bilinear", "align_corners": 1}, (1, 1, 5, 5))]
    for kw, shape in cases:
        kinds = []
        for lib in (paddle, pd):
            try:
                lib.nn.functional.interpolate(lib.zeros(shape), **kw)
            except Exception as e:  # noqa: BLE001  (comparing which class each library raises)
                kinds.append(type(e))
        assert len(kinds) == 2 and kinds[0] is kinds[1], (kw, kinds)


# =============================================================== grid_sample

_GS_SHAPES = [((2, 3, 4, 5), (2, 6, 7, 2)), ((2, 2, 3, 4, 5), (2, 3, 4, 2, 3)),
              ((1, 2, 1, 1), (1, 3, 4, 2)), ((1, 2, 1, 5), (1, 3, 4, 2)),
              ((1, 2, 1, 1, 3), (1, 2, 2, 2, 3))]


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("align_corners", [True, False])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("shapes", _GS_SHAPES, ids=["2d", "3d", "2d_1x1", "2d_1xW", "3d_1x1"])
def test_grid_sample_parity(pd, shapes, mode, padding_mode, align_corners, dtype):
    # includes degenerate size-1 spatial dims (B75) and grid points outside [-1, 1]
    xs, gs = shapes
    x = arr(xs, dtype)
    g = arr(gs, dtype, -1.7, 1.7)
    parity(lambda P, a, b: P.nn.functional.grid_sample(a, b, mode=mode,
                                                       padding_mode=padding_mode,
                                                       align_corners=align_corners),
           [x, g], pd)


@pytest.mark.parity
@pytest.mark.parametrize("nd", [2, 3])
@pytest.mark.parametrize("align_corners", [True, False])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample_ties_and_edges(pd, nd, mode, padding_mode, align_corners):
    # grid points exactly on pixel centres, half-pixel ties and the borders
    v = np.array([-1.0, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0, 1 / 3], dtype="float32")
    if nd == 2:
        x = arr((1, 2, 4, 4))
        g = np.stack(np.meshgrid(v, v), -1)[None].astype("float32")
    else:
        x = arr((1, 1, 3, 4, 4))
        g = np.stack(np.meshgrid(v[:6], v[:6], v[:6]), -1)[None].astype("float32")
    parity(lambda P, a, b: P.nn.functional.grid_sample(a, b, mode=mode,
                                                       padding_mode=padding_mode,
                                                       align_corners=align_corners),
           [x, g], pd)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [True, False])
def test_grid_sample_gradcheck(mode, padding_mode, align_corners):
    x = arr((1, 2, 3, 4), "float64")
    g = arr((1, 2, 3, 2), "float64", -1.3, 1.3)
    wrt = [0, 1] if mode == "bilinear" else [0]
    gradcheck(lambda a, b: F.grid_sample(a, b, mode=mode, padding_mode=padding_mode,
                                         align_corners=align_corners), [x, g], wrt=wrt)


def test_grid_sample_gradcheck_3d():
    x = arr((1, 1, 2, 3, 3), "float64")
    g = arr((1, 2, 1, 2, 3), "float64", -1.2, 1.2)
    gradcheck(lambda a, b: F.grid_sample(a, b, padding_mode="reflection"), [x, g])


def test_grid_sample_nearest_grid_grad_is_zero():
    x = paddle.to_tensor(arr((1, 1, 3, 3)), stop_gradient=False)
    g = paddle.to_tensor(arr((1, 2, 2, 2), lo=-1, hi=1), stop_gradient=False)
    F.grid_sample(x, g, mode="nearest").sum().backward()
    np.testing.assert_array_equal(g.grad.numpy(), 0)


def test_grid_sample_identity_grid():
    # affine_grid of the identity transform reproduces the input (align_corners both ways)
    x = arr((2, 3, 4, 5))
    theta = paddle.to_tensor(np.tile(np.eye(2, 3, dtype="float32"), (2, 1, 1)))
    for ac in (True, False):
        grid = F.affine_grid(theta, [2, 3, 4, 5], align_corners=ac)
        out = F.grid_sample(paddle.to_tensor(x), grid, align_corners=ac)
        np.testing.assert_allclose(out.numpy(), x, rtol=1e-5, atol=1e-5)


def test_grid_sample_empty_grid():
    out = F.grid_sample(paddle.zeros([2, 3, 4, 5]), paddle.zeros([2, 0, 7, 2]))
    assert out.shape == [2, 3, 0, 7]


@pytest.mark.parametrize("x_shape,g_shape,kw,exc,msg", [
    ((1, 1, 3, 3), (1, 2, 2, 2), {"mode": "bicubic"}, ValueError, "mode"),
    ((1, 1, 3, 3), (1, 2, 2, 2), {"padding_mode": "foo"}, ValueError, "padding mode"),
    ((1, 1, 3, 3), (1, 2, 2, 2), {"align_corners": 1}, ValueError, "align corners"),
    ((1, 3, 3), (1, 2, 2, 2), {}, ValueError, "4-D or 5-D"),
    ((1, 1, 3, 3), (1, 2, 2, 3), {}, ValueError, "grid should have shape"),
    ((1, 1, 2, 3, 3), (1, 2, 2, 2), {}, ValueError, "grid should have shape"),
    ((2, 1, 3, 3), (1, 2, 2, 2), {}, ValueError, "dimension[0]"),
])
def test_grid_sample_errors(x_shape, g_shape, kw, exc, msg):
    with pytest.raises(exc, match="grid_sample") as info:
        F.grid_sample(paddle.zeros(x_shape), paddle.zeros(g_shape), **kw)
    assert msg in str(info.value)


def test_grid_sample_dtype_errors():
    with pytest.raises(TypeError, match="grid_sample.*int64"):
        F.grid_sample(paddle.zeros([1, 1, 3, 3], "int64"), paddle.zeros([1, 2, 2, 2]))
    with pytest.raises(TypeError, match="grid_sample.*must match"):
        F.grid_sample(paddle.zeros([1, 1, 3, 3], "float64"), paddle.zeros([1, 2, 2, 2]))


# =============================================================== affine_grid

@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("align_corners", [True, False])
@pytest.mark.parametrize("out_shape", [[2, 3, 4, 5], [2, 1, 1, 3], [2, 3, 2, 4, 5],
                                       [2, 1, 3, 1, 2]])
def test_affine_grid_parity(pd, out_shape, align_corners, dtype):
    if align_corners and 1 in out_shape[2:]:
        pytest.skip("Paddle 2.6 divides 0 by 0 for a size-1 dim with align_corners=True")
    nd = len(out_shape) - 2
    theta = arr((2, nd, nd + 1), dtype)
    parity(lambda P, t: P.nn.functional.affine_grid(t, out_shape, align_corners=align_corners),
           [theta], pd)


@pytest.mark.parity
def test_affine_grid_out_shape_forms(pd):
    theta = arr((2, 2, 3))
    for form in ("tensor", "tuple", "list_tensor"):
        def fn(P, t, form=form):
            shape = {"tensor": P.to_tensor([2, 3, 4, 5]), "tuple": (2, 3, 4, 5),
                     "list_tensor": [2, 3, P.to_tensor(4), 5]}[form]
            return P.nn.functional.affine_grid(t, shape)

        parity(fn, [theta], pd)


def test_affine_grid_size_one_align_corners():
    # a size-1 dim with align_corners=True sits at -1 (linspace(-1, 1, 1)), not NaN
    theta = paddle.to_tensor(np.eye(2, 3, dtype="float32")[None])
    grid = F.affine_grid(theta, [1, 1, 1, 3], align_corners=True).numpy()
    np.testing.assert_allclose(grid[0, 0, :, 0], [-1, 0, 1])
    np.testing.assert_allclose(grid[0, 0, :, 1], [-1, -1, -1])


@pytest.mark.parametrize("align_corners", [True, False])
@pytest.mark.parametrize("out_shape", [[2, 1, 3, 4], [1, 1, 2, 3, 2]])
def test_affine_grid_gradcheck(out_shape, align_corners):
    nd = len(out_shape) - 2
    gradcheck(lambda t: F.affine_grid(t, out_shape, align_corners=align_corners),
              [arr((out_shape[0], nd, nd + 1), "float64")])


@pytest.mark.parametrize("theta_shape,out_shape,exc,msg", [
    ((2, 2, 3), [2, 3, 4], ValueError, "out_shape"),
    ((2, 3, 3), [2, 3, 4, 5], ValueError, "theta should have shape"),
    ((2, 2, 3), [2, 3, 0, 5], ValueError, "positive"),
    ((2, 2, 3), "abc", TypeError, "out_shape"),
])
def test_affine_grid_errors(theta_shape, out_shape, exc, msg):
    with pytest.raises(exc, match="affine_grid") as info:
        F.affine_grid(paddle.zeros(theta_shape), out_shape)
    assert msg in str(info.value)
    with pytest.raises(TypeError, match="affine_grid.*int64"):
        F.affine_grid(paddle.zeros([1, 2, 3], "int64"), [1, 1, 2, 2])


# =============================================================== pixel / channel shuffles

@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
def test_shuffles_parity(pd, data_format, dtype):
    def to_df(shape):
        return shape if data_format == "NCHW" else (shape[0], shape[2], shape[3], shape[1])

    x = arr(to_df((2, 18, 2, 3)), dtype)
    parity(lambda P, t: P.nn.functional.pixel_shuffle(t, 3, data_format), [x], pd)
    parity(lambda P, t: P.nn.functional.channel_shuffle(t, 3, data_format), [x], pd)
    parity(lambda P, t: P.nn.functional.channel_shuffle(t, 6, data_format), [x], pd)
    y = arr(to_df((2, 3, 4, 6)), dtype)
    parity(lambda P, t: P.nn.functional.pixel_unshuffle(t, 2, data_format), [y], pd)


@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
def test_shuffles_gradcheck(data_format):
    x = arr((1, 8, 2, 2) if data_format == "NCHW" else (1, 2, 2, 8), "float64")
    gradcheck(lambda t: F.pixel_shuffle(t, 2, data_format), [x])
    gradcheck(lambda t: F.pixel_unshuffle(t, 2, data_format), [x])
    gradcheck(lambda t: F.channel_shuffle(t, 4, data_format), [x])


@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
@pytest.mark.parametrize("r", [1, 2, 3])
def test_pixel_unshuffle_inverts_pixel_shuffle_b90(data_format, r):
    shape = (2, 2 * r * r, 3, 4) if data_format == "NCHW" else (2, 3, 4, 2 * r * r)
    x = paddle.to_tensor(arr(shape))
    up = paddle.nn.PixelShuffle(r, data_format)(x)
    back = paddle.nn.PixelUnshuffle(r, data_format)(up)
    np.testing.assert_array_equal(back.numpy(), x.numpy())
    np.testing.assert_array_equal(
        F.pixel_shuffle(F.pixel_unshuffle(up, r, data_format), r, data_format).numpy(),
        up.numpy())


def test_channel_shuffle_values():
    x = paddle.arange(6, dtype="float32").reshape([1, 6, 1, 1])
    np.testing.assert_array_equal(F.channel_shuffle(x, 2).numpy().ravel(), [0, 3, 1, 4, 2, 5])
    np.testing.assert_array_equal(F.channel_shuffle(x, 3).numpy().ravel(), [0, 2, 4, 1, 3, 5])


def test_shuffles_refuse_integers_and_double_backward():
    # Paddle 2.6 has no integer kernel for the shuffles: an integer x is refused, by name
    xi = paddle.to_tensor(np.arange(16).reshape(1, 4, 2, 2))
    for fn in (F.pixel_shuffle, F.pixel_unshuffle, F.channel_shuffle):
        with pytest.raises(TypeError, match=f"{fn.__name__}: argument 'x' has dtype int64"):
            fn(xi, 2)
    x = paddle.to_tensor(arr((1, 4, 2, 2), "float64"), stop_gradient=False)
    y = F.pixel_shuffle(x, 2)
    (g,) = paddle.grad((y * y).sum(), x, create_graph=True)
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.ones((1, 4, 2, 2)))


@pytest.mark.parametrize("fn,args,exc,msg", [
    (F.pixel_shuffle, ((1, 8, 2, 3), 3), ValueError, "divide the number of channels"),
    (F.pixel_shuffle, ((8, 2, 3), 2), ValueError, "4-D"),
    (F.pixel_shuffle, ((1, 8, 2, 3), 2.0), TypeError, "int"),
    (F.pixel_shuffle, ((1, 8, 2, 3), 0), ValueError, "positive"),
    (F.pixel_shuffle, ((1, 8, 2, 3), 2, "NCW"), ValueError, "data_format"),
    (F.pixel_unshuffle, ((1, 8, 2, 3), 2), ValueError, "divide both height"),
    (F.pixel_unshuffle, ((1, 8, 2, 4), 0), ValueError, "positive"),
    (F.pixel_unshuffle, ((1, 8, 2, 4), 2.0), TypeError, "int"),
    (F.channel_shuffle, ((1, 8, 2, 3), 3), ValueError, "divide the number of"),
    (F.channel_shuffle, ((1, 8, 2, 3), 0), ValueError, "positive"),
    (F.channel_shuffle, ((1, 8, 2, 3), 2.0), TypeError, "int"),
    (F.channel_shuffle, ((8, 2, 3), 2), ValueError, "4-D"),
])
def test_shuffle_errors(fn, args, exc, msg):
    with pytest.raises(exc, match=fn.__name__) as info:
        fn(paddle.zeros(args[0]), *args[1:])
    assert msg in str(info.value)
    if msg.startswith("divide") or msg == "4-D":
        assert str(list(args[0])) in str(info.value)  # the error shows the input shape


# =============================================================== layers

_LAYERS = [
    ("Upsample", {"size": [3, 4]}, (2, 3, 5, 6)),
    ("Upsample", {"scale_factor": 2, "mode": "bilinear", "align_corners": True}, (2, 3, 2, 3)),
    ("Upsample", {"scale_factor": [2, 3], "mode": "bicubic", "align_mode": 1,
                  "data_format": "NHWC", "name": "u"}, (1, 2, 3, 2)),
    ("Upsample", {"size": [7], "mode": "linear", "data_format": "NCW"}, (2, 3, 4)),
    ("Upsample", {"size": [3, 2, 4], "mode": "trilinear", "data_format": "NCDHW"},
     (1, 2, 2, 3, 2)),
    ("Upsample", {"size": [2, 3], "mode": "area"}, (1, 2, 5, 7)),
    ("UpsamplingNearest2D", {"size": [3, 4]}, (2, 3, 2, 2)),
    ("UpsamplingNearest2D", {"scale_factor": 2, "data_format": "NHWC", "name": "x"},
     (1, 2, 3, 2)),
    ("UpsamplingBilinear2D", {"scale_factor": 2.0}, (1, 2, 2, 3)),
    ("UpsamplingBilinear2D", {"size": [3, 4], "name": "k"}, (1, 2, 5, 2)),
    ("PixelShuffle", {"upscale_factor": 2}, (2, 8, 2, 3)),
    ("PixelShuffle", {"upscale_factor": 3, "data_format": "NHWC", "name": "p"}, (1, 2, 3, 9)),
    ("PixelUnshuffle", {"downscale_factor": 2}, (2, 3, 4, 6)),
    ("PixelUnshuffle", {"downscale_factor": 2, "data_format": "NHWC", "name": "q"},
     (1, 4, 2, 3)),
    ("ChannelShuffle", {"groups": 2}, (2, 8, 2, 3)),
    ("ChannelShuffle", {"groups": 4, "data_format": "NHWC", "name": "r"}, (1, 2, 3, 8)),
]


@pytest.mark.parity
@pytest.mark.parametrize("cls,kwargs,shape", _LAYERS,
                         ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(_LAYERS)])
def test_layer_parity(pd, cls, kwargs, shape):
    ours, theirs = getattr(paddle.nn, cls)(**kwargs), getattr(pd.nn, cls)(**kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict().keys()) == list(theirs.state_dict().keys())
    ours.set_state_dict(theirs.state_dict())
    x = arr(shape)
    for train in (True, False):
        for layer in (ours, theirs):
            layer.train() if train else layer.eval()
        parity(lambda P, t: (ours if P is paddle else theirs)(t), [x], pd)


@pytest.mark.parity
def test_layer_repr_edge_cases(pd):
    for cls, kw in [("Upsample", {}), ("Upsample", {"size": [2, 3], "scale_factor": 2}),
                    ("Upsample", {"scale_factor": (2, 3)}),
                    ("Upsample", {"mode": "BILINEAR", "data_format": "nhwc"}),
                    ("UpsamplingNearest2D", {}),
                    ("UpsamplingBilinear2D", {"size": [2, 3], "scale_factor": 2.5})]:
        assert repr(getattr(paddle.nn, cls)(**kw)) == repr(getattr(pd.nn, cls)(**kw))


@pytest.mark.filterwarnings("ignore:The input state dict is empty")
def test_layer_state_dict_round_trip(tmp_path):
    for cls, kwargs, shape in _LAYERS:
        layer = getattr(paddle.nn, cls)(**kwargs)
        sd = layer.state_dict()
        assert len(sd) == 0 and layer.parameters() == []
        path = str(tmp_path / f"{cls}.pdparams")
        paddle.save(sd, path)
        layer.set_state_dict(paddle.load(path))
        x = paddle.to_tensor(arr(shape))
        np.testing.assert_array_equal(layer(x).numpy(), layer(x).numpy())


def test_layer_attributes():
    up = paddle.nn.Upsample(scale_factor=2, mode="BICUBIC")
    assert (up.size, up.scale_factor, up.mode, up.align_corners, up.align_mode,
            up.data_format, up.name) == (None, 2, "bicubic", False, 0, "NCHW", None)
    bl = paddle.nn.UpsamplingBilinear2D(size=[4, 4])
    x = paddle.to_tensor(arr((1, 1, 2, 2)))
    np.testing.assert_allclose(
        bl(x).numpy(), F.interpolate(x, size=[4, 4], mode="bilinear", align_corners=True).numpy())


@pytest.mark.parametrize("make,exc,msg", [
    (lambda: paddle.nn.PixelShuffle(2.5), TypeError, "PixelShuffle"),
    (lambda: paddle.nn.PixelShuffle(2, "NCW"), ValueError, "PixelShuffle"),
    (lambda: paddle.nn.PixelUnshuffle(2.0), TypeError, "PixelUnshuffle"),
    (lambda: paddle.nn.PixelUnshuffle(0), ValueError, "PixelUnshuffle"),
    (lambda: paddle.nn.PixelUnshuffle(2, "NCW"), ValueError, "PixelUnshuffle"),
    (lambda: paddle.nn.ChannelShuffle(2.0), TypeError, "ChannelShuffle"),
    (lambda: paddle.nn.ChannelShuffle(0), ValueError, "ChannelShuffle"),
    (lambda: paddle.nn.ChannelShuffle(2, "NCW"), ValueError, "ChannelShuffle"),
])
def test_layer_init_errors(make, exc, msg):
    with pytest.raises(exc, match=msg):
        make()


def test_layer_forward_errors_name_shapes():
    with pytest.raises(ValueError, match=r"pixel_shuffle.*\[1, 3, 2, 2\]"):
        paddle.nn.PixelShuffle(2)(paddle.zeros([1, 3, 2, 2]))
    with pytest.raises(ValueError, match=r"interpolate.*\[1, 2, 3\]"):
        paddle.nn.Upsample(size=[3, 4])(paddle.zeros([1, 2, 3]))
    with pytest.raises(ValueError, match=r"channel_shuffle.*\[1, 6, 2, 2\]"):
        paddle.nn.ChannelShuffle(4)(paddle.zeros([1, 6, 2, 2]))
