"""paddle_hl.vision.ops: parity with Paddle 2.6.2 on fixed inputs (values, dtypes, shapes, input
gradients), float64 finite-difference checks of the differentiable ops, NumPy references for
NMS per category, RoI bins, box coding and the YOLOv3 heads, and errors."""

from __future__ import annotations

import inspect
import io
import json
import pathlib

import numpy as np
import pytest
from paddle_hl.vision import ops

import paddle_hl
from tests.op_check import check_parity, gradcheck, run_both

API_FILE = pathlib.Path(__file__).resolve().parents[3] / "shared" / "api" / "paddle-2.6-api.json"


def _boxes(rng, k, size, lo=1.0, hi=0.5, dtype="float32"):
    xy = rng.uniform(0, size, (k, 2))
    wh = rng.uniform(lo, size * hi, (k, 2))
    return np.concatenate([xy, xy + wh], 1).astype(dtype)


def _t(a, **kw):
    return paddle_hl.to_tensor(a, **kw)


def _np_boxes_num(counts):
    return np.asarray(counts, dtype="int32")


# ----------------------------------------------------------------------------- namespace


def test_all_names_and_signatures():
    if not API_FILE.exists():
        pytest.skip("the API json lives in ../shared beside the checkout")
    api = json.loads(API_FILE.read_text())["paddle_hl.vision.ops"]
    assert sorted(ops.__all__) == sorted(api)
    for name, info in api.items():
        obj = getattr(ops, name)
        sig = inspect.signature(obj.__init__ if info["kind"] == "class" else obj)
        params = [p for p in sig.parameters.values() if p.name != "self"]
        rendered = "(" + ", ".join(
            p.name if p.default is inspect.Parameter.empty else f"{p.name}={p.default!r}"
            for p in params) + ")"
        assert rendered == info["signature"], name
        for meth in info.get("methods", []):
            assert callable(getattr(obj, meth))


def test_conv_norm_activation_is_the_zoo_class():
    from paddle_hl.vision.models._utils import ConvNormActivation

    assert ops.ConvNormActivation is ConvNormActivation
    assert "ConvNormActivation" not in ops.__all__
    with pytest.raises(AttributeError):
        ops.NoSuchOp  # noqa: B018


# ----------------------------------------------------------------------------- nms


def _nms_fixture():
    rng = np.random.default_rng(5)
    b = _boxes(rng, 120, 20, lo=0.5)
    s = rng.uniform(0, 1, 120).astype("float32")
    c = rng.integers(0, 4, 120).astype("int64")
    return b, s, c


@pytest.mark.parity
@pytest.mark.parametrize("thr", [0.1, 0.4, 0.8])
def test_nms_parity(pd, thr):
    b, s, c = _nms_fixture()
    check_parity(lambda lib, b: lib.vision.ops.nms(b, thr), [b], pd, grad=False)
    check_parity(lambda lib, b, s: lib.vision.ops.nms(b, thr, s), [b, s], pd, grad=False)
    check_parity(lambda lib, b, s, c: lib.vision.ops.nms(b, thr, s, c, [0, 1, 3]),
                 [b, s, c], pd, grad=False)
    check_parity(lambda lib, b, s, c: lib.vision.ops.nms(b, thr, s, c, [0, 1, 2, 3], top_k=7),
                 [b, s, c], pd, grad=False)


def test_nms_b125_per_category_and_top_k():
    boxes = np.array([[0, 0, 1, 1], [0, 0, 1, 2], [0, 0, 2, 2], [5, 5, 6, 6]], "float32")
    scores = np.array([0.1, 0.9, 0.5, 0.3], "float32")
    cats = np.array([0, 1, 0, 1], "int64")
    # no scores: input order; IoU([0,0,1,1], [0,0,1,2]) = 0.5 (normalized, no +1)
    np.testing.assert_array_equal(ops.nms(_t(boxes), 0.4).numpy(), [0, 2, 3])
    np.testing.assert_array_equal(ops.nms(_t(boxes), 0.6).numpy(), [0, 1, 2, 3])
    # scores: visited by score; box 2 loses to box 1 (IoU 0.5), box 0 too
    np.testing.assert_array_equal(ops.nms(_t(boxes), 0.4, _t(scores)).numpy(), [1, 3])
    # per category nothing overlaps enough: all kept, by descending score
    out = ops.nms(_t(boxes), 0.4, _t(scores), _t(cats), [0, 1])
    assert out.dtype == paddle_hl.int64
    np.testing.assert_array_equal(out.numpy(), [1, 2, 3, 0])
    np.testing.assert_array_equal(
        ops.nms(_t(boxes), 0.4, _t(scores), _t(cats), [0, 1], top_k=2).numpy(), [1, 2])
    np.testing.assert_array_equal(
        ops.nms(_t(boxes), 0.4, _t(scores), _t(cats), [1]).numpy(), [1, 3])
    # top_k also bounds the score-only form (Paddle documents it; its 2.6 code skips it)
    np.testing.assert_array_equal(ops.nms(_t(boxes), 0.4, _t(scores), top_k=1).numpy(), [1])


def test_nms_matches_sequential_greedy_reference():
    rng = np.random.default_rng(0)
    b = _boxes(rng, 700, 30, lo=2, hi=0.3).astype("float64")  # > one block of 256 boxes

    def iou(a, bs):
        iw = np.clip(np.minimum(a[2], bs[:, 2]) - np.maximum(a[0], bs[:, 0]), 0, None)
        ih = np.clip(np.minimum(a[3], bs[:, 3]) - np.maximum(a[1], bs[:, 1]), 0, None)
        inter = iw * ih
        area = lambda z: (z[..., 2] - z[..., 0]) * (z[..., 3] - z[..., 1])  # noqa: E731
        return inter / (area(a) + area(bs) - inter)

    keep = []
    for i in range(len(b)):
        if not keep or np.all(iou(b[i], b[keep]) <= 0.3):
            keep.append(i)
    np.testing.assert_array_equal(ops.nms(_t(b), 0.3).numpy(), keep)


def test_nms_empty_and_errors():
    assert ops.nms(_t(np.zeros((0, 4), "float32"))).shape == [0]
    with pytest.raises(ValueError, match="nms: boxes"):
        ops.nms(_t(np.zeros((3, 5), "float32")))
    with pytest.raises(TypeError, match="nms: boxes must be a Tensor"):
        ops.nms(np.zeros((3, 4), "float32"))
    b = _t(np.zeros((3, 4), "float32"))
    with pytest.raises(ValueError, match="categories"):
        ops.nms(b, 0.5, _t(np.ones(3, "float32")), _t(np.zeros(3, "int64")))
    with pytest.raises(ValueError, match="scores has 2 entries"):
        ops.nms(b, 0.5, _t(np.ones(2, "float32")))


# ----------------------------------------------------------------------------- matrix_nms


@pytest.mark.parity
@pytest.mark.parametrize("kw", [
    dict(score_threshold=0.3, post_threshold=0.2, nms_top_k=20, keep_top_k=30),
    dict(score_threshold=0.1, post_threshold=0.05, nms_top_k=-1, keep_top_k=-1,
         use_gaussian=True, gaussian_sigma=3.0, background_label=-1, return_index=True),
    dict(score_threshold=0.2, post_threshold=0.1, nms_top_k=10, keep_top_k=5, normalized=False,
         return_index=True, return_rois_num=False),
    dict(score_threshold=1.5, post_threshold=0.1, nms_top_k=10, keep_top_k=5,
         return_index=True),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matrix_nms_parity(pd, kw, dtype):
    rng = np.random.default_rng(7)
    bb = _boxes(rng, 2 * 30, 1.0, lo=0.05, hi=0.4, dtype=dtype).reshape(2, 30, 4)
    sc = rng.uniform(0, 1, (2, 4, 30)).astype(dtype)
    res = check_parity(lambda lib, b, s: [o for o in lib.vision.ops.matrix_nms(b, s, **kw)
                                          if o is not None], [bb, sc], pd, grad=False)
    out = res["hl"][0][0]
    assert out.shape[1] == 6
    if kw.get("return_rois_num", True):
        first = int(res["hl"][0][1][0])  # each image's detections come by descending score
        assert np.all(np.diff(out[:first, 1]) <= 0) and np.all(np.diff(out[first:, 1]) <= 0)


def test_matrix_nms_outputs_and_decay():
    boxes = np.array([[[0, 0, 1, 1], [0, 0, 1, 0.5], [2, 2, 3, 3]]], "float32")
    scores = np.array([[[0.0, 0.0, 0.0], [0.9, 0.8, 0.7]]], "float32")
    out, num, idx = ops.matrix_nms(_t(boxes), _t(scores), 0.1, 0.0, -1, -1, return_index=True)
    # box 1 overlaps box 0 with IoU 0.5: linear decay (1 - 0.5) / (1 - 0) = 0.5
    np.testing.assert_allclose(out.numpy()[:, 1], [0.9, 0.7, 0.4], rtol=1e-6)
    np.testing.assert_array_equal(out.numpy()[:, 0], [1, 1, 1])
    np.testing.assert_array_equal(idx.numpy().ravel(), [0, 2, 1])
    assert num.dtype == paddle_hl.int32 and num.numpy().tolist() == [3]
    out, _, _ = ops.matrix_nms(_t(boxes), _t(scores), 0.1, 0.0, -1, -1, use_gaussian=True,
                               gaussian_sigma=2.0)
    np.testing.assert_allclose(out.numpy()[2, 1], 0.8 * np.exp(-0.25 * 2.0), rtol=1e-6)
    with pytest.raises(ValueError, match="matrix_nms: scores"):
        ops.matrix_nms(_t(boxes), _t(scores[:, :, :2]), 0.1, 0.0, -1, -1)


# ----------------------------------------------------------------------------- RoI ops


def _roi_fixture(dtype="float32", n_img=2, c=8, h=11, w=13, counts=(3, 4), min_side=2.0):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((n_img, c, h, w)).astype(dtype)
    b = _boxes(rng, sum(counts), 12, lo=min_side, hi=0.6, dtype=dtype)
    b[0, :2] -= 2.5  # one box partly outside the image
    return x, b, _np_boxes_num(counts)


_ROI_ALIGN_CASES = [dict(output_size=3, spatial_scale=0.9),
                    dict(output_size=(2, 4), sampling_ratio=2, aligned=False),
                    dict(output_size=(3, 2), aligned=False, spatial_scale=0.5),
                    dict(output_size=2, sampling_ratio=1)]


@pytest.mark.parity
@pytest.mark.parametrize("kw", _ROI_ALIGN_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_roi_align_parity(pd, kw, dtype):
    x, b, bn = _roi_fixture(dtype)
    check_parity(lambda lib, x, b, n: lib.vision.ops.roi_align(x, b, n, **kw), [x, b, bn], pd)


@pytest.mark.parity
def test_roi_align_layer_parity(pd):
    x, b, bn = _roi_fixture()
    check_parity(lambda lib, x, b, n: lib.vision.ops.RoIAlign((2, 3), 0.8)(x, b, n),
                 [x, b, bn], pd)
    check_parity(lambda lib, x, b, n: lib.vision.ops.RoIAlign(2)(x, b, n, aligned=False),
                 [x, b, bn], pd)


def test_roi_align_b125_aligned_offset():
    # on a ramp x[h, w] = w bilinear sampling is exact, so the output is the mean sample column
    ramp = np.broadcast_to(np.arange(10, dtype="float32"), (1, 1, 10, 10)).copy()
    box = _t(np.array([[1.0, 1.0, 5.0, 5.0]], "float32"))
    num = _t(np.array([1], "int32"))
    out_al = ops.roi_align(_t(ramp), box, num, 1)
    out_leg = ops.roi_align(_t(ramp), box, num, 1, aligned=False)
    np.testing.assert_allclose(out_al.numpy().ravel(), [2.5], rtol=1e-6)  # center 3 - 0.5
    np.testing.assert_allclose(out_leg.numpy().ravel(), [3.0], rtol=1e-6)
    assert inspect.signature(ops.roi_align).parameters["aligned"].default is True


@pytest.mark.parametrize("kw", _ROI_ALIGN_CASES)
def test_roi_align_gradcheck(kw):
    x, b, bn = _roi_fixture("float64", c=2, h=7, w=8)
    gradcheck(lambda x: ops.roi_align(x, _t(b), _t(bn), **kw), [x])


def test_roi_align_thin_box_gradient_matches_forward():
    # a box narrower than a pixel: the gradient is the forward's (Paddle's CPU backward clamps
    # the width to 1 here and disagrees with its own forward)
    x = np.random.default_rng(0).standard_normal((1, 1, 6, 6))
    b = _t(np.array([[1.0, 1.6, 1.8, 5.7]]))
    gradcheck(lambda x: ops.roi_align(x, b, _t(np.array([1], "int32")), 3, 0.7), [x])


@pytest.mark.parity
@pytest.mark.parametrize("kw", [dict(output_size=3, spatial_scale=0.7),
                                dict(output_size=(2, 4)), dict(output_size=1)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_roi_pool_parity(pd, kw, dtype):
    x, b, bn = _roi_fixture(dtype)
    check_parity(lambda lib, x, b, n: lib.vision.ops.roi_pool(x, b, n, **kw), [x, b, bn], pd)
    check_parity(lambda lib, x, b, n: lib.vision.ops.RoIPool(**kw)(x, b, n), [x, b, bn], pd)


def test_roi_pool_b125_max_of_each_bin():
    x = np.arange(2 * 6 * 6, dtype="float64").reshape(1, 2, 6, 6)
    x[0, 1] = -x[0, 1]
    out = ops.roi_pool(_t(x), _t(np.array([[0.0, 0.0, 3.0, 3.0]])), _t(np.array([1], "int32")),
                       2)
    # the 4x4 region splits into 2x2 bins; the max of each bin of a ramp is its bottom-right
    ref = np.stack([np.array([[x[0, 0, :2, :2].max(), x[0, 0, :2, 2:4].max()],
                              [x[0, 0, 2:4, :2].max(), x[0, 0, 2:4, 2:4].max()]]),
                    np.array([[x[0, 1, :2, :2].max(), x[0, 1, :2, 2:4].max()],
                              [x[0, 1, 2:4, :2].max(), x[0, 1, 2:4, 2:4].max()]])])
    np.testing.assert_allclose(out.numpy()[0], ref)
    layer = ops.RoIPool(output_size=(4, 3), spatial_scale=0.5)
    assert "output_size=(4, 3), spatial_scale=0.5" in repr(layer)


def test_roi_pool_gradcheck():
    x, b, bn = _roi_fixture("float64", c=2, h=7, w=8)
    gradcheck(lambda x: ops.roi_pool(x, _t(b), _t(bn), (2, 3), 0.8), [x])


@pytest.mark.parity
@pytest.mark.parametrize("kw", [dict(output_size=2, spatial_scale=0.7), dict(output_size=(2, 1)),
                                dict(output_size=(1, 4), spatial_scale=1.3)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_psroi_pool_parity(pd, kw, dtype):
    x, b, bn = _roi_fixture(dtype)
    check_parity(lambda lib, x, b, n: lib.vision.ops.psroi_pool(x, b, n, **kw), [x, b, bn], pd)
    check_parity(lambda lib, x, b, n: lib.vision.ops.PSRoIPool(**kw)(x, b, n), [x, b, bn], pd)


def test_psroi_pool_reference_and_gradcheck():
    x = np.arange(4 * 4 * 4, dtype="float64").reshape(1, 4, 4, 4)
    out = ops.psroi_pool(_t(x), _t(np.array([[0.0, 0.0, 3.0, 3.0]])),
                         _t(np.array([1], "int32")), 2)
    # bin (i, j) averages channel i*2 + j over its 2x2 quarter
    ref = [[x[0, 0, :2, :2].mean(), x[0, 1, :2, 2:].mean()],
           [x[0, 2, 2:, :2].mean(), x[0, 3, 2:, 2:].mean()]]
    np.testing.assert_allclose(out.numpy()[0, 0], ref)
    xr, b, bn = _roi_fixture("float64", c=8, h=7, w=8)
    gradcheck(lambda x: ops.psroi_pool(x, _t(b), _t(bn), 2, 0.9), [xr])


@pytest.mark.parametrize("fn", [ops.roi_align, ops.roi_pool])
def test_roi_ops_empty_boxes(fn):
    x = _t(np.random.default_rng(0).standard_normal((2, 4, 5, 5)), stop_gradient=False)
    out = fn(x, _t(np.zeros((0, 4))), _t(np.array([0, 0], "int32")), 2)
    assert out.shape == [0, 4, 2, 2] and out.dtype == paddle_hl.float64
    out.backward(paddle_hl.zeros(out.shape, dtype="float64"))
    np.testing.assert_array_equal(x.grad.numpy(), 0)


def test_roi_ops_errors():
    x = _t(np.zeros((2, 4, 5, 5), "float32"))
    b = _t(np.zeros((3, 4), "float32"))
    with pytest.raises(ValueError, match="roi_align: boxes_num"):
        ops.roi_align(x, b, _t(np.array([1, 1], "int32")), 2)
    with pytest.raises(ValueError, match="roi_pool: boxes_num has 1 entries"):
        ops.roi_pool(x, b, _t(np.array([3], "int32")), 2)
    with pytest.raises(ValueError, match="roi_align: boxes must have shape"):
        ops.roi_align(x, _t(np.zeros((3, 5), "float32")), _t(np.array([1, 2], "int32")), 2)
    with pytest.raises(ValueError, match="roi_align: x must be a 4-D"):
        ops.roi_align(_t(np.zeros((4, 5, 5), "float32")), b, _t(np.array([3], "int32")), 2)
    with pytest.raises(TypeError, match="output_size"):
        ops.roi_pool(x, b, _t(np.array([1, 2], "int32")), 2.5)
    with pytest.raises(ValueError, match="psroi_pool: the channels of x"):
        ops.psroi_pool(x, b, _t(np.array([1, 2], "int32")), 3)
    with pytest.raises(TypeError, match="roi_align: x must be a floating-point"):
        ops.roi_align(_t(np.zeros((2, 4, 5, 5), "int32")), b, _t(np.array([1, 2], "int32")), 2)


# ----------------------------------------------------------------------------- deform_conv2d

_DEFORM_CASES = [
    # n, c, h, w, out, kernel, stride, padding, dilation, deformable_groups, groups, mask
    (2, 4, 7, 6, 6, 3, 1, 1, 1, 2, 2, True),
    (1, 3, 6, 6, 4, 3, 2, 0, 1, 1, 1, False),
    (1, 2, 8, 7, 2, (2, 3), 1, (1, 2), 2, 1, 1, True),
]


def _deform_inputs(case, dtype="float32", scale=2.0):
    n, c, h, w, o, k, st, pa, di, dg, g, _ = case
    kh, kw = (k, k) if isinstance(k, int) else k
    ph, pw = (pa, pa) if isinstance(pa, int) else pa
    ho = (h + 2 * ph - (di * (kh - 1) + 1)) // st + 1
    wo = (w + 2 * pw - (di * (kw - 1) + 1)) // st + 1
    rng = np.random.default_rng(3)
    x = rng.standard_normal((n, c, h, w)).astype(dtype)
    off = (rng.standard_normal((n, 2 * dg * kh * kw, ho, wo)) * scale).astype(dtype)
    wt = rng.standard_normal((o, c // g, kh, kw)).astype(dtype)
    bias = rng.standard_normal(o).astype(dtype)
    mask = rng.uniform(0, 1, (n, dg * kh * kw, ho, wo)).astype(dtype)
    return x, off, wt, bias, mask


@pytest.mark.parity
@pytest.mark.parametrize("case", _DEFORM_CASES)
def test_deform_conv2d_parity(pd, case):
    *_, st, pa, di, dg, g, use_mask = case
    x, off, wt, bias, mask = _deform_inputs(case)

    def fn(lib, x, off, wt, bias, mask):
        return lib.vision.ops.deform_conv2d(x, off, wt, bias, st, pa, di, dg, g,
                                            mask if use_mask else None)

    check_parity(fn, [x, off, wt, bias, mask], pd, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", _DEFORM_CASES)
def test_deform_conv2d_gradcheck(case):
    *_, st, pa, di, dg, g, use_mask = case
    small = (1,) + case[1:]
    x, off, wt, bias, mask = _deform_inputs(small, "float64", scale=0.7)

    def fn(x, off, wt, bias, mask):
        return ops.deform_conv2d(x, off, wt, bias, st, pa, di, dg, g, mask if use_mask else None)

    gradcheck(fn, [x, off, wt, bias, mask] if use_mask else [x, off, wt, bias, mask],
              wrt=[0, 1, 2, 3, 4] if use_mask else [0, 1, 2, 3], rtol=1e-4, atol=1e-6)


def test_deform_conv2d_zero_offset_is_conv2d():
    rng = np.random.default_rng(0)
    x = _t(rng.standard_normal((2, 4, 6, 7)))
    w = _t(rng.standard_normal((6, 2, 3, 3)))
    b = _t(rng.standard_normal(6))
    off = _t(np.zeros((2, 18, 3, 4)))
    out = ops.deform_conv2d(x, off, w, b, stride=2, padding=1, groups=2)
    ref = paddle_hl.nn.functional.conv2d(x, w, b, stride=2, padding=1, groups=2)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-10, atol=1e-10)
    # a mask of 0.5 halves the pre-bias output (v2)
    half = ops.deform_conv2d(x, off, w, None, 2, 1, groups=2, mask=_t(np.full((2, 9, 3, 4), .5)))
    np.testing.assert_allclose(half.numpy() * 2 + b.numpy()[:, None, None], ref.numpy(),
                               rtol=1e-10, atol=1e-10)


@pytest.mark.parity
def test_deform_conv2d_layer(pd):
    layer = ops.DeformConv2D(4, 6, 3, padding=1, deformable_groups=2, groups=2)
    sd = layer.state_dict()
    assert list(sd) == ["weight", "bias"]
    assert layer.weight.shape == [6, 2, 3, 3] and layer.bias.shape == [6]
    np.testing.assert_array_equal(layer.bias.numpy(), 0)
    ref = pd.vision.ops.DeformConv2D(4, 6, 3, padding=1, deformable_groups=2, groups=2)
    assert list(ref.state_dict()) == list(sd)
    ref.set_state_dict({k: pd.to_tensor(v.numpy()) for k, v in sd.items()})
    x, off, _, _, mask = _deform_inputs((1, 4, 5, 5, 6, 3, 1, 1, 1, 2, 2, True))
    for m in (None, mask):
        ours = layer(_t(x), _t(off), None if m is None else _t(m)).numpy()
        theirs = ref(pd.to_tensor(x), pd.to_tensor(off),
                     None if m is None else pd.to_tensor(m)).numpy()
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)
    big = ops.DeformConv2D(64, 8, 3, bias_attr=False)
    assert big.bias is None
    std = float(np.std(big.weight.numpy()))
    assert abs(std - (2.0 / (9 * 64)) ** 0.5) < 0.01


def test_deform_conv2d_errors():
    x = _t(np.zeros((1, 4, 5, 5), "float32"))
    w = _t(np.zeros((2, 4, 3, 3), "float32"))
    with pytest.raises(ValueError, match="deform_conv2d: offset must have shape"):
        ops.deform_conv2d(x, _t(np.zeros((1, 9, 3, 3), "float32")), w)
    with pytest.raises(ValueError, match="deform_conv2d: mask must have shape"):
        ops.deform_conv2d(x, _t(np.zeros((1, 18, 3, 3), "float32")), w,
                          mask=_t(np.zeros((1, 18, 3, 3), "float32")))
    with pytest.raises(ValueError, match="deformable_groups"):
        ops.deform_conv2d(x, _t(np.zeros((1, 54, 3, 3), "float32")), w, deformable_groups=3)
    with pytest.raises(ValueError, match="weight"):
        ops.deform_conv2d(x, _t(np.zeros((1, 18, 3, 3), "float32")), w, groups=2)
    with pytest.raises(ValueError, match="weight_attr"):
        ops.DeformConv2D(4, 2, 3, weight_attr=False)


# ----------------------------------------------------------------------------- box_coder


@pytest.mark.parity
@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("var_kind", ["list", "tensor"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_box_coder_parity(pd, normalized, var_kind, dtype):
    rng = np.random.default_rng(2)
    pb = _boxes(rng, 5, 10, lo=0.5, dtype=dtype)
    tb = _boxes(rng, 3, 10, lo=0.5, dtype=dtype)
    var = rng.uniform(0.1, 1, (5, 4)).astype(dtype)

    def v(lib, var):
        return [0.1, 0.1, 0.2, 0.2] if var_kind == "list" else var

    check_parity(lambda lib, p, var, t: lib.vision.ops.box_coder(
        p, v(lib, var), t, box_normalized=normalized), [pb, var, tb], pd, grad=False)
    if dtype == "float64" and var_kind == "list":
        return  # Paddle 2.6 decodes float64 with list variances from garbage memory
    for axis, shape in ((0, (3, 5, 4)), (1, (5, 3, 4))):
        deltas = (rng.standard_normal(shape) * 0.5).astype(dtype)
        check_parity(lambda lib, p, var, t: lib.vision.ops.box_coder(
            p, v(lib, var), t, "decode_center_size", normalized, axis), [pb, var, deltas],
            pd, grad=False)


def test_box_coder_b126_round_trip():
    rng = np.random.default_rng(4)
    priors = _boxes(rng, 6, 1.0, lo=0.05, hi=0.4, dtype="float64")
    boxes = _boxes(rng, 4, 1.0, lo=0.05, hi=0.4, dtype="float64")
    var = _t(rng.uniform(0.1, 1.0, (6, 4)))
    enc = ops.box_coder(_t(priors), var, _t(boxes))
    assert enc.shape == [4, 6, 4] and enc.stop_gradient
    dec = ops.box_coder(_t(priors), var, enc, "decode_center_size")
    np.testing.assert_allclose(dec.numpy(), np.broadcast_to(boxes[:, None], (4, 6, 4)),
                               rtol=1e-12, atol=1e-12)
    # axis=1: priors go with the first axis of the deltas
    dec1 = ops.box_coder(_t(priors), var, _t(enc.numpy().transpose(1, 0, 2)),
                         "decode_center_size", axis=1)
    np.testing.assert_allclose(dec1.numpy().transpose(1, 0, 2), dec.numpy(), rtol=1e-12)


def test_box_coder_errors():
    p = _t(np.zeros((2, 4), "float32"))
    with pytest.raises(TypeError, match="prior_box_var"):
        ops.box_coder(p, None, p)
    with pytest.raises(ValueError, match="4 elements"):
        ops.box_coder(p, [1.0, 1.0], p)
    with pytest.raises(ValueError, match="code_type"):
        ops.box_coder(p, [1.0] * 4, p, code_type="center")
    with pytest.raises(ValueError, match="target_box"):
        ops.box_coder(p, [1.0] * 4, _t(np.zeros((3, 3, 4), "float32")), "decode_center_size")


# ----------------------------------------------------------------------------- prior_box


@pytest.mark.parity
@pytest.mark.parametrize("kw", [
    dict(min_sizes=[4.0, 8.0], max_sizes=[9.0, 12.0], aspect_ratios=[2.0, 3.0], flip=True,
         clip=True),
    dict(min_sizes=[4.0, 8.0], max_sizes=[9.0, 12.0], aspect_ratios=[2.0, 1.0, 0.5],
         min_max_aspect_ratios_order=True, steps=[7.0, 9.0], offset=0.3),
    dict(min_sizes=5.0, aspect_ratios=2.0, variance=[1.0, 2.0, 3.0, 4.0]),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_prior_box_parity(pd, kw, dtype):
    rng = np.random.default_rng(0)
    feat = rng.standard_normal((2, 3, 4, 5)).astype(dtype)
    img = rng.standard_normal((2, 3, 30, 40)).astype("float32")
    check_parity(lambda lib, f, i: lib.vision.ops.prior_box(f, i, **kw), [feat, img], pd,
                 grad=False)


def test_prior_box_reference():
    boxes, var = ops.prior_box(_t(np.zeros((1, 1, 2, 2), "float32")),
                               _t(np.zeros((1, 3, 8, 8), "float32")), [4.0],
                               aspect_ratios=[4.0])
    assert boxes.shape == [2, 2, 2, 4] and var.shape == [2, 2, 2, 4]
    # cell (0, 0) centre (2, 2): a 4x4 box, then ratio 4 -> 8 wide, 2 high
    np.testing.assert_allclose(boxes.numpy()[0, 0], [[0, 0, 0.5, 0.5], [-0.25, 0.125, 0.75,
                                                                       0.375]])
    np.testing.assert_allclose(var.numpy()[1, 1, 1], [0.1, 0.1, 0.2, 0.2], rtol=1e-6)
    with pytest.raises(ValueError, match="steps"):
        ops.prior_box(_t(np.zeros((1, 1, 2, 2), "float32")),
                      _t(np.zeros((1, 3, 8, 8), "float32")), [4.0], steps=[1.0])


# ----------------------------------------------------------------------------- YOLOv3

_ANCHORS = [10, 13, 16, 30, 33, 23, 30, 61, 62, 45]


@pytest.mark.parity
@pytest.mark.parametrize("iou_aware", [False, True])
@pytest.mark.parametrize("clip", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_yolo_box_parity(pd, iou_aware, clip, dtype):
    rng = np.random.default_rng(6)
    s, k = 2, 3
    c = s * (6 + k) if iou_aware else s * (5 + k)
    x = (rng.standard_normal((2, c, 4, 5)) * 2).astype(dtype)
    isz = np.array([[60, 80], [50, 64]], "int32")

    def fn(lib, x, i):
        return lib.vision.ops.yolo_box(x, i, _ANCHORS[:4], k, 0.3, 16, clip_bbox=clip,
                                       scale_x_y=1.2, iou_aware=iou_aware, iou_aware_factor=0.4)

    tol = dict(rtol=1e-5, atol=5e-4) if dtype == "float32" else {}
    check_parity(fn, [x, isz], pd, grad=False, **tol)


def test_yolo_box_b124_shapes_and_iou_aware_conf():
    s, k, h, w = 2, 3, 2, 3
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, s * (6 + k), h, w))
    isz = _t(np.array([[64, 96]], "int32"))
    boxes, scores = ops.yolo_box(_t(x), isz, _ANCHORS[:4], k, 0.0, 32, iou_aware=True,
                                 iou_aware_factor=0.3)
    assert boxes.shape == [1, s * h * w, 4] and scores.shape == [1, s * h * w, k]
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    iou = sig(x[0, :s])  # [S, H, W]
    p = x[0, s:].reshape(s, 5 + k, h, w)
    f = float(np.float32(0.3))  # Paddle's float attributes are 32-bit
    conf = sig(p[:, 4]) ** (1 - f) * iou ** f
    ref = conf[:, None] * sig(p[:, 5:])  # [S, K, H, W]
    np.testing.assert_allclose(scores.numpy()[0], ref.transpose(0, 2, 3, 1).reshape(-1, k),
                               rtol=1e-10)
    # below the confidence threshold, boxes and scores are zero
    boxes, scores = ops.yolo_box(_t(x), isz, _ANCHORS[:4], k, 2.0, 32, iou_aware=True)
    np.testing.assert_array_equal(boxes.numpy(), 0)
    np.testing.assert_array_equal(scores.numpy(), 0)
    with pytest.raises(ValueError, match="yolo_box: x must have"):
        ops.yolo_box(_t(x), isz, _ANCHORS[:4], k, 0.1, 32)


def _yolo_fixture(mask, k, dtype="float32", n=2, hw=5, b=4):
    rng = np.random.default_rng(11)
    s = len(mask)
    x = rng.standard_normal((n, s * (5 + k), hw, hw)).astype(dtype)
    gt = np.concatenate([rng.uniform(0.05, 0.95, (n, b, 2)),
                         rng.uniform(0.02, 0.5, (n, b, 2))], -1).astype(dtype)
    gt[0, -1] = 0  # an invalid (empty) ground truth
    gl = rng.integers(0, k, (n, b)).astype("int32")
    gs = rng.uniform(0.3, 1, (n, b)).astype(dtype)
    return x, gt, gl, gs


_YOLO_CASES = [([0, 1], 3, True, 1.0, False), ([2, 3, 4], 2, False, 1.1, True),
               ([1, 3], 1, True, 1.0, True)]


@pytest.mark.parity
@pytest.mark.parametrize("case", _YOLO_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_yolo_loss_parity(pd, case, dtype):
    mask, k, smooth, sxy, use_score = case
    x, gt, gl, gs = _yolo_fixture(mask, k, dtype)

    def fn(lib, x, g, lab, s):
        return lib.vision.ops.yolo_loss(x, g, lab, _ANCHORS, mask, k, 0.5, 32,
                                        gt_score=s if use_score else None,
                                        use_label_smooth=smooth, scale_x_y=sxy)

    res = run_both(fn, [x, gt, gl, gs], pd)
    (ho, hg, hd, hs), (po, pg, pdt, ps) = res["hl"], res["pd"]
    assert hs == ps == [[2]] and hd == pdt == [dtype]
    np.testing.assert_allclose(ho[0], po[0], rtol=1e-5)
    np.testing.assert_allclose(hg[0], pg[0], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", _YOLO_CASES)
def test_yolo_loss_gradcheck(case):
    mask, k, smooth, sxy, use_score = case
    x, gt, gl, gs = _yolo_fixture(mask, k, "float64", n=1, hw=3, b=3)
    # two ground truths in the same cell: their losses (and gradients) add up
    gt[0, 2] = gt[0, 1] * np.array([1, 1, 1.02, 1.02])

    def fn(x):
        return ops.yolo_loss(x, _t(gt), _t(gl), _ANCHORS, mask, k, 0.5, 32,
                             gt_score=_t(gs) if use_score else None, use_label_smooth=smooth,
                             scale_x_y=sxy)

    gradcheck(fn, [x], rtol=1e-5, atol=1e-6)


def test_yolo_loss_b124_per_image_and_reference():
    # one ground truth, one class, no smoothing: check the loss against a hand computation
    x = np.zeros((1, 6, 2, 2))
    gt = np.array([[[0.3, 0.8, 0.2, 0.25]]])
    anchors = [16, 20, 40, 40]
    loss = ops.yolo_loss(_t(x), _t(gt), _t(np.zeros((1, 1), "int32")), anchors, [0], 1, 0.99,
                         32, use_label_smooth=False)
    assert loss.shape == [1] and loss.dtype == paddle_hl.float64
    ln2 = np.log(2.0)
    sce = lambda v, t: max(v, 0) - v * t + np.log1p(np.exp(-abs(v)))  # noqa: E731
    scale = 2 - 0.2 * 0.25
    tx, ty = 0.3 * 2 - 0, 0.8 * 2 - 1
    tw, th = np.log(0.2 * 64 / 16), np.log(0.25 * 64 / 20)
    loc = (sce(0, tx) + sce(0, ty) + abs(tw) + abs(th)) * scale
    obj = sce(0, 1.0) + 3 * ln2  # one positive cell, three negatives
    cls = sce(0, 1.0)
    np.testing.assert_allclose(loss.numpy(), [loc + obj + cls], rtol=1e-10)
    # no ground truth at all: every cell is an objectness negative
    x2 = _t(np.random.default_rng(0).standard_normal((2, 12, 3, 3)), stop_gradient=False)
    loss = ops.yolo_loss(x2, _t(np.zeros((2, 0, 4))), _t(np.zeros((2, 0), "int32")), anchors,
                         [0, 1], 1, 0.7, 32)
    obj = x2.numpy().reshape(2, 2, 6, 3, 3)[:, :, 4]
    ref = (np.maximum(obj, 0) + np.log1p(np.exp(-np.abs(obj)))).sum(axis=(1, 2, 3))
    np.testing.assert_allclose(loss.numpy(), ref, rtol=1e-10)
    loss.sum().backward()
    assert x2.grad.shape == [2, 12, 3, 3]
    with pytest.raises(ValueError, match="yolo_loss: x must have"):
        ops.yolo_loss(_t(x), _t(gt), _t(np.zeros((1, 1), "int32")), anchors, [0, 1], 1, 0.7,
                      32)


# ----------------------------------------------------------------------------- RPN / FPN


def _rpn_fixture():
    rng = np.random.default_rng(9)
    n, a, h, w = 2, 3, 6, 7
    scores = rng.uniform(0, 1, (n, a, h, w)).astype("float32")
    deltas = (rng.standard_normal((n, 4 * a, h, w)) * 0.3).astype("float32")
    anchors = _boxes(rng, h * w * a, 60, lo=2, hi=0.4).reshape(h, w, a, 4)
    var = np.tile(np.array([1.0, 1.0, 0.5, 0.5], "float32"), (h, w, a, 1))
    img = np.array([[64, 70], [50, 60]], "float32")
    return [scores, deltas, img, anchors, var]


@pytest.mark.parity
@pytest.mark.parametrize("kw", [
    dict(pre_nms_top_n=50, post_nms_top_n=20, nms_thresh=0.5, min_size=2.0),
    dict(pre_nms_top_n=500, post_nms_top_n=100, nms_thresh=0.7, pixel_offset=True),
    dict(pre_nms_top_n=80, post_nms_top_n=30, nms_thresh=0.8, eta=0.9),
    dict(pre_nms_top_n=80, post_nms_top_n=30, nms_thresh=0.5, min_size=1000.0),
])
def test_generate_proposals_parity(pd, kw):
    check_parity(lambda lib, *t: lib.vision.ops.generate_proposals(*t, return_rois_num=True,
                                                                   **kw),
                 _rpn_fixture(), pd, grad=False)


def test_generate_proposals_outputs():
    ts = [_t(a) for a in _rpn_fixture()]
    rois, probs, num = ops.generate_proposals(*ts, post_nms_top_n=5)
    assert num is None and rois.shape[1] == 4 and probs.shape[1] == 1
    rois, probs, num = ops.generate_proposals(*ts, post_nms_top_n=5, return_rois_num=True)
    assert num.dtype == paddle_hl.int32 and num.numpy().tolist() == [5, 5]
    p = probs.numpy().ravel()
    assert np.all(np.diff(p[:5]) <= 0) and np.all(np.diff(p[5:]) <= 0)
    # nothing survives the size filter: one zero proposal per image
    rois, probs, num = ops.generate_proposals(*ts, min_size=1e6, return_rois_num=True)
    np.testing.assert_array_equal(rois.numpy(), 0)
    assert num.numpy().tolist() == [1, 1]
    with pytest.raises(ValueError, match="generate_proposals: bbox_deltas"):
        ops.generate_proposals(ts[0], ts[0], *ts[2:])


@pytest.mark.parity
@pytest.mark.parametrize("kw", [dict(min_level=2, max_level=5, refer_level=4, refer_scale=224),
                                dict(min_level=1, max_level=3, refer_level=2, refer_scale=50,
                                     pixel_offset=True)])
def test_distribute_fpn_proposals_parity(pd, kw):
    rng = np.random.default_rng(12)
    rois = _boxes(rng, 25, 300, lo=1, hi=1.0)
    num = np.array([10, 5, 10], "int32")
    check_parity(lambda lib, r, n: lib.vision.ops.distribute_fpn_proposals(r, rois_num=n, **kw),
                 [rois, num], pd, grad=False)


def test_distribute_fpn_proposals_restore():
    rng = np.random.default_rng(1)
    rois = _boxes(rng, 30, 400, lo=1, hi=1.0)
    multi, restore, per_level = ops.distribute_fpn_proposals(_t(rois), 2, 5, 4, 224)
    assert per_level is None and len(multi) == 4 and restore.dtype == paddle_hl.int32
    cat = np.concatenate([m.numpy() for m in multi])
    np.testing.assert_array_equal(cat[restore.numpy()[:, 0]], rois)
    area = (rois[:, 2] - rois[:, 0]) * (rois[:, 3] - rois[:, 1])
    lvl = np.clip(np.floor(np.log2(np.sqrt(area) / 224 + 1e-8) + 4), 2, 5)
    for i, m in enumerate(multi):
        np.testing.assert_array_equal(m.numpy(), rois[lvl == i + 2])
    with pytest.raises(ValueError, match="max_level"):
        ops.distribute_fpn_proposals(_t(rois), 3, 3, 4, 224)


# ----------------------------------------------------------------------------- image I/O


def _jpeg(tmp_path, mode):
    from PIL import Image

    rng = np.random.default_rng(0)
    shape = (9, 12, 3) if mode == "RGB" else (9, 12)
    img = Image.fromarray((rng.uniform(0, 255, shape)).astype("uint8"), mode)
    path = tmp_path / f"img_{mode}.jpg"
    img.save(path, quality=95)
    return path


@pytest.mark.parity
def test_read_file_parity(pd, tmp_path):
    path = _jpeg(tmp_path, "RGB")
    ours = ops.read_file(str(path))
    theirs = pd.vision.ops.read_file(str(path))
    assert ours.dtype == paddle_hl.uint8 and ours.shape == theirs.shape
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("src", ["RGB", "L"])
@pytest.mark.parametrize("mode", ["unchanged", "gray", "rgb"])
def test_decode_jpeg(tmp_path, src, mode):
    from PIL import Image

    path = _jpeg(tmp_path, src)
    out = ops.decode_jpeg(ops.read_file(str(path)), mode=mode)
    pil = Image.open(io.BytesIO(path.read_bytes()))
    target = {"unchanged": src, "gray": "L", "rgb": "RGB"}[mode]
    ref = np.asarray(pil.convert(target))
    ref = ref[None] if ref.ndim == 2 else ref.transpose(2, 0, 1)
    assert out.dtype == paddle_hl.uint8 and out.shape == list(ref.shape)
    np.testing.assert_array_equal(out.numpy(), ref)


def test_decode_jpeg_errors(tmp_path):
    with pytest.raises(ValueError, match="mode"):
        ops.decode_jpeg(ops.read_file(str(_jpeg(tmp_path, "L"))), mode="bgr")
    with pytest.raises(TypeError, match="uint8"):
        ops.decode_jpeg(_t(np.zeros(10, "float32")))
    with pytest.raises(ValueError, match="decodable"):
        ops.decode_jpeg(_t(np.arange(20, dtype="uint8")))
