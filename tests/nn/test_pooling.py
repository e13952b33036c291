"""Pooling (paddle_hl/nn/functional/pooling.py, paddle_hl/nn/layer/pooling.py): parity with Paddle
2.6 (values, masks, gradients), finite-difference gradients, int32 masks shaped like the
output, kernel-only 3-D pools (stride = kernel size), fp16 adaptive average pooling, Paddle's
ceil_mode / divisor rules, max-unpool, layers and errors."""

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl import nn
from paddle_hl.nn import functional as F
from tests.op_check import check_parity as _check_parity
from tests.op_check import gradcheck

RNG = np.random.default_rng(11)


def _r(*shape, dtype="float64"):
    return RNG.standard_normal(shape).astype(dtype)




def check_parity(fn, inputs, pd):
    # Paddle's float64 average-pool gradients are only accurate to ~1e-8 (its reciprocal of the
    # window size is not exact), so pools are compared at 1e-6 rather than the float64 default
    return _check_parity(fn, inputs, pd, rtol=1e-6, atol=1e-6)


POOL2D_CASES = [
    dict(kernel_size=2),
    dict(kernel_size=3),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=2, stride=2, padding=1, ceil_mode=True),  # last window in the padding
    dict(kernel_size=4, stride=3, padding=2, ceil_mode=True),
    dict(kernel_size=[2, 3], stride=[1, 2], padding=[1, 0, 1, 1]),
    dict(kernel_size=3, stride=2, padding="same"),
    dict(kernel_size=3, stride=1, padding="valid"),
    dict(kernel_size=[3, 2], stride=2, padding=[[0, 0], [0, 0], [1, 1], [0, 1]]),
]


@pytest.mark.parity
@pytest.mark.parametrize("kw", POOL2D_CASES, ids=str)
@pytest.mark.parametrize("fmt", ["NCHW", "NHWC"])
def test_max_pool2d_parity(pd, kw, fmt):
    x = _r(2, 3, 7, 8)
    if fmt == "NHWC":
        if isinstance(kw.get("padding"), list) and isinstance(kw["padding"][0], list):
            kw = dict(kw, padding=[[0, 0], [1, 1], [0, 1], [0, 0]])
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    check_parity(lambda lib, x: lib.nn.functional.max_pool2d(x, data_format=fmt, **kw), [x], pd)


@pytest.mark.parity
@pytest.mark.parametrize("kw", POOL2D_CASES, ids=str)
@pytest.mark.parametrize("exclusive", [True, False])
def test_avg_pool2d_parity(pd, kw, exclusive):
    check_parity(lambda lib, x: lib.nn.functional.avg_pool2d(x, exclusive=exclusive, **kw),
                 [_r(2, 3, 7, 8)], pd)


@pytest.mark.parity
def test_avg_pool2d_nhwc_and_divisor_parity(pd):
    x = _r(2, 7, 8, 3)
    check_parity(lambda lib, x: lib.nn.functional.avg_pool2d(x, 3, 2, 1, data_format="NHWC"),
                 [x], pd)
    check_parity(lambda lib, x: lib.nn.functional.avg_pool2d(x, 3, 2, 1, divisor_override=4),
                 [_r(2, 3, 7, 8)], pd)


@pytest.mark.parity
@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=1, padding=1),
                                dict(kernel_size=2, stride=1)], ids=str)
def test_max_pool2d_mask_parity(pd, kw):
    check_parity(lambda lib, x: lib.nn.functional.max_pool2d(x, return_mask=True, **kw),
                 [_r(2, 3, 7, 8)], pd)


@pytest.mark.parity
def test_pool1d_3d_parity(pd):
    check_parity(lambda lib, x: lib.nn.functional.max_pool1d(x, 3, 2, 1, return_mask=True),
                 [_r(2, 3, 9)], pd)
    check_parity(lambda lib, x: lib.nn.functional.max_pool1d(x, 3, 2, [1, 2], ceil_mode=True),
                 [_r(2, 3, 9)], pd)
    check_parity(lambda lib, x: lib.nn.functional.avg_pool1d(x, 3, 2, 1, exclusive=False,
                                                             ceil_mode=True), [_r(2, 3, 9)], pd)
    check_parity(lambda lib, x: lib.nn.functional.avg_pool1d(x, 2, padding="same"),
                 [_r(2, 3, 9)], pd)
    check_parity(lambda lib, x: lib.nn.functional.max_pool3d(x, 2, return_mask=True),
                 [_r(2, 3, 4, 5, 6)], pd)
    check_parity(lambda lib, x: lib.nn.functional.max_pool3d(x, 2, 1, 1, return_mask=True),
                 [_r(1, 2, 3, 4, 5)], pd)
    check_parity(lambda lib, x: lib.nn.functional.max_pool3d(x, 3, 2, 1, data_format="NDHWC"),
                 [_r(2, 4, 5, 6, 3)], pd)
    check_parity(lambda lib, x: lib.nn.functional.avg_pool3d(x, 3, 2, 1, ceil_mode=True,
                                                             exclusive=False),
                 [_r(2, 3, 4, 5, 6)], pd)


@pytest.mark.parity
@pytest.mark.parametrize("size", [1, 3, [2, 5], [None, 3], [7, 9]], ids=str)
def test_adaptive_pool2d_parity(pd, size):
    check_parity(lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, size), [_r(2, 3, 5, 7)],
                 pd)
    check_parity(lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, size, "NHWC"),
                 [_r(2, 5, 7, 3)], pd)
    check_parity(lambda lib, x: lib.nn.functional.adaptive_max_pool2d(x, size, True),
                 [_r(2, 3, 5, 7)], pd)


@pytest.mark.parity
@pytest.mark.parametrize("size", [[3, 4], [2, 2], [6, 8], 1], ids=str)
def test_adaptive_avg_pool_tiling_windows_parity(pd, size):
    # outputs that divide the input: the windows tile it, taken as a mean and its broadcast
    check_parity(lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, size), [_r(2, 3, 6, 8)],
                 pd)
    check_parity(lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, size, "NHWC"),
                 [_r(2, 6, 8, 3)], pd)
    check_parity(lambda lib, x: lib.nn.functional.adaptive_avg_pool3d(x, [2, 1, 3]),
                 [_r(2, 3, 4, 5, 6)], pd)


@pytest.mark.parity
def test_adaptive_pool1d_3d_parity(pd):
    check_parity(lambda lib, x: lib.nn.functional.adaptive_max_pool1d(x, 4, True), [_r(2, 3, 9)],
                 pd)
    check_parity(lambda lib, x: lib.nn.functional.adaptive_avg_pool1d(x, 4), [_r(2, 3, 9)], pd)
    check_parity(lambda lib, x: lib.nn.functional.adaptive_max_pool3d(x, [2, 3, 4], True),
                 [_r(2, 3, 5, 6, 7)], pd)
    check_parity(lambda lib, x: lib.nn.functional.adaptive_avg_pool3d(x, [2, None, 4]),
                 [_r(2, 3, 5, 6, 7)], pd)
    check_parity(lambda lib, x: lib.nn.functional.adaptive_avg_pool3d(x, 2, "NDHWC"),
                 [_r(1, 5, 6, 7, 2)], pd)


@pytest.mark.parity
@pytest.mark.parametrize("nd,pool_kw,shape", [
    (1, dict(kernel_size=2), (2, 3, 8)),
    (2, dict(kernel_size=3, stride=2, padding=1), (2, 3, 7, 8)),
    (3, dict(kernel_size=2), (1, 2, 4, 4, 6)),
], ids=["1d", "2d", "3d"])
def test_max_unpool_parity(pd, nd, pool_kw, shape):
    def fn(lib, x):
        f = lib.nn.functional
        out, mask = getattr(f, f"max_pool{nd}d")(x, return_mask=True, **pool_kw)
        size = list(shape[2:]) if nd > 1 else None  # Paddle's 1-D form rejects a 1-D size
        return getattr(f, f"max_unpool{nd}d")(out, mask, output_size=size, **pool_kw)

    check_parity(fn, [_r(*shape)], pd)


# ------------------------------------------------------------------ finite differences
@pytest.mark.parametrize("fn,shape", [
    (lambda x: F.max_pool1d(x, 3, 2, 1), (2, 2, 7)),
    (lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), (1, 2, 5, 6)),
    (lambda x: F.max_pool2d(x, 2, data_format="NHWC"), (1, 4, 4, 2)),
    (lambda x: F.max_pool3d(x, 2, 1), (1, 1, 3, 3, 3)),
    (lambda x: F.avg_pool1d(x, 3, 2, 1, exclusive=False), (2, 2, 7)),
    (lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True), (1, 2, 5, 6)),
    (lambda x: F.avg_pool2d(x, 2, 1, divisor_override=3, data_format="NHWC"), (1, 3, 3, 2)),
    (lambda x: F.avg_pool3d(x, 2, 1, 1), (1, 1, 3, 3, 2)),
    (lambda x: F.adaptive_avg_pool1d(x, 3), (2, 2, 7)),
    (lambda x: F.adaptive_avg_pool2d(x, [2, 3]), (1, 2, 5, 7)),
    (lambda x: F.adaptive_avg_pool3d(x, 2), (1, 1, 3, 4, 3)),
    (lambda x: F.adaptive_max_pool1d(x, 3), (2, 2, 7)),
    (lambda x: F.adaptive_max_pool2d(x, [2, 3]), (1, 2, 5, 7)),
    (lambda x: F.adaptive_max_pool3d(x, 2), (1, 1, 3, 4, 3)),
], ids=["max1d", "max2d", "max2d_nhwc", "max3d", "avg1d", "avg2d", "avg2d_div", "avg3d",
        "aavg1d", "aavg2d", "aavg3d", "amax1d", "amax2d", "amax3d"])
def test_pool_gradcheck(fn, shape):
    # distinct values keep the max away from ties, where the derivative is not defined
    x = RNG.permutation(np.prod(shape)).reshape(shape).astype(np.float64) * 0.1
    gradcheck(fn, [x])


@pytest.mark.parametrize("nd,shape", [(1, (2, 3, 8)), (2, (2, 2, 4, 6)), (3, (1, 2, 4, 2, 4))])
def test_max_unpool_gradcheck(nd, shape):
    x = paddle.to_tensor(RNG.permutation(np.prod(shape)).reshape(shape).astype(np.float64))
    out, mask = getattr(F, f"max_pool{nd}d")(x, 2, return_mask=True)
    gradcheck(lambda v: getattr(F, f"max_unpool{nd}d")(v, mask, 2), [out.numpy()])


# ------------------------------------------------------------------ behaviours
@pytest.mark.parametrize("fn,shape", [
    (lambda x: F.max_pool1d(x, 2, return_mask=True), (2, 3, 8)),
    (lambda x: F.max_pool2d(x, 3, 2, 1, return_mask=True), (2, 3, 7, 7)),
    (lambda x: F.max_pool3d(x, 2, return_mask=True), (2, 3, 4, 4, 4)),
    (lambda x: F.adaptive_max_pool1d(x, 3, return_mask=True), (2, 3, 8)),
    (lambda x: F.adaptive_max_pool2d(x, [2, 3], return_mask=True), (2, 3, 7, 7)),
    (lambda x: F.adaptive_max_pool3d(x, 2, return_mask=True), (2, 3, 4, 4, 4)),
    (lambda x: nn.MaxPool1D(2, return_mask=True)(x), (2, 3, 8)),
    (lambda x: nn.MaxPool2D(2, return_mask=True)(x), (2, 3, 8, 8)),
    (lambda x: nn.MaxPool3D(2, return_mask=True)(x), (2, 3, 4, 4, 4)),
    (lambda x: nn.AdaptiveMaxPool1D(3, return_mask=True)(x), (2, 3, 8)),
    (lambda x: nn.AdaptiveMaxPool2D(3, return_mask=True)(x), (2, 3, 8, 8)),
    (lambda x: nn.AdaptiveMaxPool3D(3, return_mask=True)(x), (2, 3, 4, 4, 4)),
])
def test_return_mask_int32_same_shape_b73(fn, shape):
    x = paddle.to_tensor(_r(*shape, dtype="float32"))
    out, mask = fn(x)
    assert mask.dtype == paddle.int32
    assert mask.shape == out.shape
    assert mask.stop_gradient
    # the mask indexes the flattened input plane and points at the maximum
    plane = x.numpy().reshape(shape[0], shape[1], -1)
    picked = np.take_along_axis(plane, mask.numpy().reshape(shape[0], shape[1], -1), axis=2)
    np.testing.assert_array_equal(picked.reshape(out.shape), out.numpy())


def test_kernel_only_pools_default_stride_b74():
    x = paddle.ones([1, 2, 8, 8, 8])
    assert nn.MaxPool3D(kernel_size=2)(x).shape == [1, 2, 4, 4, 4]
    assert nn.AvgPool3D(kernel_size=2)(x).shape == [1, 2, 4, 4, 4]
    assert nn.MaxPool2D(2)(paddle.ones([1, 2, 8, 8])).shape == [1, 2, 4, 4]
    assert nn.AvgPool1D(2)(paddle.ones([1, 2, 8])).shape == [1, 2, 4]
    assert F.max_pool3d(x, 2).shape == [1, 2, 4, 4, 4]


def test_adaptive_avg_pool2d_fp16_matches_fp32_b74():
    x = _r(2, 4, 9, 7, dtype="float32")
    ref = F.adaptive_avg_pool2d(paddle.to_tensor(x), [4, 3]).numpy()
    half = F.adaptive_avg_pool2d(paddle.to_tensor(x).astype("float16"), [4, 3])
    assert half.dtype == paddle.float16
    np.testing.assert_allclose(half.astype("float32").numpy(), ref, rtol=2e-3, atol=2e-3)


def test_max_pool_ties_take_the_first_maximum():
    x = paddle.ones([1, 1, 4, 4], dtype="float64")
    x.stop_gradient = False
    out, mask = F.max_pool2d(x, 2, return_mask=True)
    np.testing.assert_array_equal(mask.numpy()[0, 0], [[0, 2], [8, 10]])
    F.max_pool2d(x, 3, 1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy()[0, 0], [[1, 1, 0, 0], [1, 1, 0, 0],
                                                         [0, 0, 0, 0], [0, 0, 0, 0]])


def test_ceil_mode_windows_in_padding_follow_paddle():
    x = paddle.arange(25, dtype="float32").reshape([1, 1, 5, 5])
    out = F.max_pool2d(x, 2, 2, padding=1, ceil_mode=True).numpy()[0, 0]
    assert out.shape == (4, 4)
    # a window that only covers padding yields -FLT_MAX (max) and nan (exclusive average)
    assert out[0, 3] == np.finfo(np.float32).min
    avg = F.avg_pool2d(paddle.ones([1, 1, 5, 5]), 2, 2, padding=1, ceil_mode=True).numpy()
    assert np.isnan(avg[0, 0, 3, 3]) and avg[0, 0, 0, 0] == 1
    # non-exclusive divides by the window clipped to the padded input
    avg = F.avg_pool2d(paddle.ones([1, 1, 6, 6]), 3, 2, padding=1, ceil_mode=True,
                       exclusive=False).numpy()[0, 0]
    np.testing.assert_allclose(avg[0], [4 / 9, 6 / 9, 6 / 9, 2 / 6], rtol=1e-6)


def test_divisor_override_rescales_the_average():
    out = F.avg_pool2d(paddle.ones([1, 1, 5, 5]), 3, 2, padding=1, divisor_override=2)
    np.testing.assert_allclose(out.numpy(), 4.5)


def test_max_unpool_places_values():
    x = paddle.arange(16, dtype="float32").reshape([1, 1, 4, 4])
    out, mask = F.max_pool2d(x, 2, return_mask=True)
    up = F.max_unpool2d(out, mask, 2, output_size=[5, 5]).numpy()[0, 0]
    expect = np.zeros((5, 5), np.float32)
    expect.flat[[5, 7, 13, 15]] = [5, 7, 13, 15]
    np.testing.assert_array_equal(up, expect)
    unpool = nn.MaxUnPool2D(2)
    assert unpool(out, mask).shape == [1, 1, 4, 4]
    np.testing.assert_array_equal(
        F.max_unpool1d(paddle.to_tensor([[[1.0, 2.0]]]),
                       paddle.to_tensor([[[1, 3]]], dtype="int32"), 2).numpy(), [[[0, 1, 0, 2]]])


def test_pool_layers_forward_and_repr():
    x = paddle.to_tensor(_r(2, 3, 8, 8, dtype="float32"))
    assert nn.AdaptiveAvgPool2D(1)(x).shape == [2, 3, 1, 1]
    assert nn.AvgPool2D(3, 2, 1, data_format="NCHW")(x).shape == [2, 3, 4, 4]
    assert nn.AdaptiveMaxPool2D([2, 4])(x).shape == [2, 3, 2, 4]
    assert nn.AdaptiveAvgPool1D(3)(paddle.ones([1, 2, 7])).shape == [1, 2, 3]
    assert nn.AdaptiveAvgPool3D(2)(paddle.ones([1, 2, 4, 5, 6])).shape == [1, 2, 2, 2, 2]
    assert repr(nn.MaxPool2D(2)) == "MaxPool2D(kernel_size=2, stride=None, padding=0)"
    assert repr(nn.AvgPool2D(2, 1, [1, 1])) == "AvgPool2D(kernel_size=2, stride=1, padding=[1, 1])"
    assert repr(nn.AdaptiveMaxPool1D(3, return_mask=True)) == \
        "AdaptiveMaxPool1D(output_size=3, return_mask=True)"
    assert repr(nn.AdaptiveAvgPool2D([2, 3])) == "AdaptiveAvgPool2D(output_size=[2, 3])"
    assert repr(nn.MaxUnPool3D(2)) == "MaxUnPool3D(output_size=None)"


@pytest.mark.parity
@pytest.mark.parametrize("name,args,kw", [
    ("MaxPool1D", (3, 2, 1), dict(ceil_mode=True)), ("MaxPool2D", (3, 2, 1), {}),
    ("MaxPool3D", (2,), {}), ("AvgPool1D", (3, 2, 1), dict(exclusive=False)),
    ("AvgPool2D", (3, 2, 1), dict(divisor_override=2)), ("AvgPool3D", (2,), {}),
    ("AdaptiveAvgPool1D", (3,), {}), ("AdaptiveAvgPool2D", ([2, 3],), {}),
    ("AdaptiveAvgPool3D", (2,), {}), ("AdaptiveMaxPool1D", (3,), {}),
    ("AdaptiveMaxPool2D", ([2, 3],), {}), ("AdaptiveMaxPool3D", (2,), {}),
], ids=lambda v: v if isinstance(v, str) else "")
def test_pool_layer_parity(pd, name, args, kw):
    nd = int(name[-2])
    shape = {1: (2, 3, 9), 2: (2, 3, 7, 8), 3: (1, 2, 4, 5, 6)}[nd]
    assert repr(getattr(nn, name)(*args, **kw)) == repr(getattr(pd.nn, name)(*args, **kw))
    check_parity(lambda lib, x: getattr(lib.nn, name)(*args, **kw)(x), [_r(*shape)], pd)


def test_pool_on_device(device):
    x = paddle.to_tensor(_r(2, 3, 8, 8, dtype="float32"), stop_gradient=False)
    out, mask = F.max_pool2d(x, 3, 2, 1, return_mask=True)
    (out.sum() + F.avg_pool2d(x, 2).sum() + F.adaptive_avg_pool2d(x, 3).sum()
     + F.adaptive_max_pool2d(x, 3).sum()).backward()
    assert x.grad.shape == [2, 3, 8, 8]
    assert F.max_unpool2d(out, mask, 3, 2, 1, output_size=[8, 8]).shape == [2, 3, 8, 8]


def test_empty_batch_pools():
    assert F.max_pool2d(paddle.ones([0, 3, 8, 8]), 2).shape == [0, 3, 4, 4]
    assert F.avg_pool2d(paddle.ones([0, 3, 8, 8]), 2).shape == [0, 3, 4, 4]
    assert F.adaptive_avg_pool2d(paddle.ones([0, 3, 8, 8]), 2).shape == [0, 3, 2, 2]


def _grad_of(fn, x):
    tx = paddle.to_tensor(x, stop_gradient=False)
    y = fn(tx)
    (gx,) = paddle.grad((y * y * y).sum(), [tx], create_graph=True)
    return tx, gx


@pytest.mark.parametrize("fn", [
    lambda x: F.max_pool2d(x, 3, 2, 1),
    lambda x: F.max_pool1d(x.reshape([1, 2, -1]), 3, 2, 1, ceil_mode=True),
    lambda x: F.avg_pool2d(x, 3, 2, 1, exclusive=False),
    lambda x: F.avg_pool2d(x, 2, 1, divisor_override=3, data_format="NHWC"),
    lambda x: F.adaptive_avg_pool2d(x, [2, 3]),
    lambda x: F.adaptive_max_pool2d(x, [2, 3]),
    lambda x: F.max_unpool2d(*F.max_pool2d(x, 2, return_mask=True), 2, output_size=[4, 5]),
], ids=["max2d", "max1d", "avg2d", "avg2d_nhwc", "aavg2d", "amax2d", "unpool2d"])
def test_pool_double_grad_finite_difference_b38(fn):
    """create_graph=True through pooling: the gradient is differentiable and right."""
    x = RNG.permutation(40).reshape(1, 2, 4, 5).astype(np.float64) * 0.1 - 2.0
    r = RNG.standard_normal(x.shape)
    tx, gx = _grad_of(fn, x)
    (gx * paddle.to_tensor(r)).sum().backward()
    eps = 1e-6
    num = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        orig = x[idx]
        x[idx] = orig + eps
        fp = float((_grad_of(fn, x)[1].numpy() * r).sum())
        x[idx] = orig - eps
        fm = float((_grad_of(fn, x)[1].numpy() * r).sum())
        x[idx] = orig
        num[idx] = (fp - fm) / (2 * eps)
    np.testing.assert_allclose(tx.grad.numpy(), num, rtol=1e-5, atol=1e-5)


@pytest.mark.parity
def test_pool_double_grad_parity(pd):
    x = RNG.permutation(72).reshape(2, 1, 6, 6).astype(np.float64) * 0.1

    def second(lib, fn):
        tx = lib.to_tensor(x, stop_gradient=False)
        y = fn(lib, tx)
        (gx,) = lib.grad((y * y * y).sum(), [tx], create_graph=True)
        (gx * gx).sum().backward()
        return tx.grad.numpy()

    # Paddle 2.6 has a double gradient for average pooling only ("Pool op grad grad only
    # supports avgpool"); max pooling is covered by the finite-difference test above
    for fn in (lambda lib, t: lib.nn.functional.avg_pool2d(t, 3, 2, 1),
               lambda lib, t: lib.nn.functional.avg_pool2d(t, 2, 1, ceil_mode=True,
                                                           exclusive=False)):
        np.testing.assert_allclose(second(paddle, fn), second(pd, fn), rtol=1e-6, atol=1e-6)


# ------------------------------------------------------------------ errors
def test_pool_errors():
    x = paddle.ones([2, 3, 8, 8])
    with pytest.raises(ValueError, match=r"max_pool2d.*4-D.*\[3, 8, 8\]"):
        F.max_pool2d(paddle.ones([3, 8, 8]), 2)
    with pytest.raises(TypeError, match=r"max_pool2d.*float.*int32"):
        F.max_pool2d(paddle.ones([2, 3, 8, 8], "int32"), 2)
    with pytest.raises(ValueError, match="return_mask"):
        F.max_pool2d(x, 2, return_mask=True, data_format="NHWC")
    with pytest.raises(ValueError, match="kernel_size"):
        F.max_pool2d(x, 0)
    with pytest.raises(ValueError, match="stride"):
        F.avg_pool2d(x, 2, 0)
    with pytest.raises(ValueError, match="ceil_mode"):
        F.max_pool2d(x, 2, 2, padding="valid", ceil_mode=True)
    with pytest.raises(ValueError, match="padding"):
        F.avg_pool2d(x, 2, padding="full")
    with pytest.raises(ValueError, match="data_format"):
        F.avg_pool2d(x, 2, data_format="NCL")
    with pytest.raises(ValueError, match="output_size"):
        F.adaptive_avg_pool2d(x, [2, 3, 4])
    with pytest.raises(ValueError, match="output_size"):
        F.adaptive_max_pool2d(x, 0)


def test_max_unpool_errors():
    x = paddle.arange(16, dtype="float32").reshape([1, 1, 4, 4])
    out, mask = F.max_pool2d(x, 2, return_mask=True)
    with pytest.raises(ValueError, match=r"output_size.*between 2 and 6"):
        F.max_unpool2d(out, mask, 2, output_size=[6, 6])
    with pytest.raises(ValueError, match="index"):
        F.max_unpool2d(out, mask * 10, 2)
    with pytest.raises(ValueError, match="data_format"):
        F.max_unpool2d(out, mask, 2, data_format="NHWC")
    with pytest.raises(ValueError, match="shape"):
        F.max_unpool2d(out, mask[:, :, :1], 2)
    with pytest.raises(TypeError, match="int32"):
        F.max_unpool2d(out, mask.astype("float32"), 2)
