"""Convolutions (paddle_hl/nn/functional/conv.py, paddle_hl/nn/layer/conv.py): parity with Paddle
2.6 over strides/paddings/dilations/groups/layouts, float64 finite-difference gradients of every
functional, higher-order gradients, fold/unfold, layers, and bad-input errors."""

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl import nn
from paddle_hl.nn import functional as F
from tests.op_check import check_parity, gradcheck

RNG = np.random.default_rng(7)


def _r(*shape, dtype="float64"):
    return RNG.standard_normal(shape).astype(dtype)


def _cl(shape):
    """NCHW-style shape -> the channels-last shape."""
    return (shape[0], *shape[2:], shape[1])


# ------------------------------------------------------------------ functional parity
CONV2D_CASES = [
    dict(),
    dict(stride=2),
    dict(stride=2, padding=1),
    dict(stride=(2, 1), padding=(1, 2)),
    dict(padding="same"),
    dict(padding="SAME", stride=2),
    dict(padding="valid"),
    dict(padding=[1, 2, 0, 1]),
    dict(padding=[[0, 0], [0, 0], [1, 0], [2, 1]]),
    dict(dilation=2, padding=2),
    dict(padding="same", dilation=2),  # Paddle drops the dilation for 'SAME'
    dict(groups=2, stride=2, padding=1),
]


@pytest.mark.parity
@pytest.mark.parametrize("kw", CONV2D_CASES, ids=str)
@pytest.mark.parametrize("fmt", ["NCHW", "NHWC"])
def test_conv2d_parity(pd, kw, fmt):
    groups = kw.get("groups", 1)
    x = _r(2, 4, 7, 8)
    if fmt == "NHWC":
        if isinstance(kw.get("padding"), list) and isinstance(kw["padding"][0], list):
            kw = dict(kw, padding=[[0, 0], [1, 0], [2, 1], [0, 0]])
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    w, b = _r(6, 4 // groups, 3, 3), _r(6)
    check_parity(lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, data_format=fmt, **kw),
                 [x, w, b], pd)


@pytest.mark.parity
@pytest.mark.parametrize("wshape,kw", [
    ((4, 1, 3, 3), dict(groups=4, padding=1)),             # depthwise
    ((8, 1, 3, 3), dict(groups=4, padding=1, stride=2)),   # depthwise, multiplier 2
    ((6, 4, 1, 1), dict()),                                # 1x1: plain GEMM
    ((6, 4, 1, 1), dict(stride=2)),
    ((6, 2, 1, 1), dict(groups=2)),
    ((6, 4, 5, 3), dict(padding=(2, 1), dilation=(1, 2))),
], ids=str)
@pytest.mark.parametrize("fmt", ["NCHW", "NHWC"])
def test_conv2d_special_paths_parity(pd, wshape, kw, fmt):
    x = _r(2, 4, 9, 8)
    if fmt == "NHWC":
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    check_parity(lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, data_format=fmt, **kw),
                 [x, _r(*wshape), _r(wshape[0])], pd)


@pytest.mark.parity
@pytest.mark.parametrize("stride", [1, 2])
def test_depthwise_conv_several_blocks_parity(pd, stride):
    # 130 channels of 40x40 at batch 3 with a 1 MiB block: three channel chunks, 130 not a
    # multiple of the chunk; float32 as in a model, under no_grad and with gradients
    x = _r(3, 130, 40, 40).astype("float32")
    w, b = _r(130, 1, 3, 3).astype("float32"), _r(130).astype("float32")
    check_parity(lambda lib, x, w, b: lib.nn.functional.conv2d(
        x, w, b, stride=stride, padding=1, groups=130), [x, w, b], pd, rtol=1e-4, atol=1e-4)
    with paddle.no_grad():
        y = F.conv2d(paddle.to_tensor(x), paddle.to_tensor(w), paddle.to_tensor(b),
                     stride=stride, padding=1, groups=130)
    ref = pd.nn.functional.conv2d(pd.to_tensor(x), pd.to_tensor(w), pd.to_tensor(b),
                                  stride=stride, padding=1, groups=130)
    np.testing.assert_allclose(y.numpy(), ref.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parity
@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding="same"), dict(padding=[1, 2]),
                                dict(dilation=2, groups=2), dict(data_format="NLC", padding=1)],
                         ids=str)
def test_conv1d_parity(pd, kw):
    x = _r(2, 4, 11)
    if kw.get("data_format") == "NLC":
        x = np.ascontiguousarray(x.transpose(0, 2, 1))
    w = _r(6, 4 // kw.get("groups", 1), 3)
    check_parity(lambda lib, x, w, b: lib.nn.functional.conv1d(x, w, b, **kw), [x, w, _r(6)], pd)


@pytest.mark.parity
@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=1, groups=2),
                                dict(padding="same"), dict(data_format="NDHWC", padding=1)],
                         ids=str)
def test_conv3d_parity(pd, kw):
    x = _r(2, 4, 5, 6, 5)
    if kw.get("data_format") == "NDHWC":
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 4, 1))
    w = _r(6, 4 // kw.get("groups", 1), 3, 2, 3)
    check_parity(lambda lib, x, w: lib.nn.functional.conv3d(x, w, **kw), [x, w], pd)


CONVT_CASES = [
    dict(),
    dict(stride=2),
    dict(stride=2, padding=1, output_padding=1),
    dict(stride=2, output_size=[12, 14]),
    dict(stride=3, padding="same"),
    dict(padding="valid", stride=2),
    dict(groups=2, dilation=2),
    dict(padding=[1, 0, 2, 1], stride=3),
]


@pytest.mark.parity
@pytest.mark.parametrize("kw", CONVT_CASES, ids=str)
@pytest.mark.parametrize("fmt", ["NCHW", "NHWC"])
def test_conv2d_transpose_parity(pd, kw, fmt):
    x = _r(2, 4, 5, 6)
    if fmt == "NHWC":
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    g = kw.get("groups", 1)
    check_parity(
        lambda lib, x, w, b: lib.nn.functional.conv2d_transpose(x, w, b, data_format=fmt, **kw),
        [x, _r(4, 3, 3, 3), _r(3 * g)], pd)


@pytest.mark.parity
def test_conv1d_conv3d_transpose_parity(pd):
    check_parity(lambda lib, x, w: lib.nn.functional.conv1d_transpose(
        x, w, stride=2, output_padding=1), [_r(2, 4, 9), _r(4, 6, 3)], pd)
    check_parity(lambda lib, x, w: lib.nn.functional.conv1d_transpose(
        x, w, stride=2, data_format="NLC", output_size=[20]), [_r(2, 9, 4), _r(4, 6, 3)], pd)
    check_parity(lambda lib, x, w, b: lib.nn.functional.conv3d_transpose(
        x, w, b, stride=2, padding=1, groups=2), [_r(2, 4, 3, 4, 3), _r(4, 3, 3, 3, 3), _r(6)],
        pd)


@pytest.mark.parity
def test_conv2d_float32_parity(pd):
    x, w, b = _r(2, 8, 12, 12, dtype="float32"), _r(16, 8, 3, 3, dtype="float32"), \
        _r(16, dtype="float32")
    check_parity(lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, stride=2, padding=1),
                 [x, w, b], pd, rtol=1e-4, atol=1e-4)


# ------------------------------------------------------------------ finite differences
@pytest.mark.parametrize("fn,shapes", [
    (lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1), [(2, 3, 7), (4, 3, 3), (4,)]),
    (lambda x, w, b: F.conv2d(x, w, b, padding=[1, 0, 2, 1], dilation=(1, 2)),
     [(1, 2, 5, 6), (3, 2, 2, 3), (3,)]),
    (lambda x, w, b: F.conv2d(x, w, b, groups=2, stride=2, data_format="NHWC"),
     [(1, 5, 5, 4), (4, 2, 3, 3), (4,)]),
    (lambda x, w, b: F.conv2d(x, w, b, groups=2, padding=1), [(1, 2, 4, 4), (4, 1, 3, 3), (4,)]),
    (lambda x, w, b: F.conv2d(x, w, b, stride=2), [(2, 3, 5, 5), (2, 3, 1, 1), (2,)]),
    (lambda x, w, b: F.conv3d(x, w, b, padding=1, stride=2), [(1, 2, 3, 4, 3), (2, 2, 2, 2, 2),
                                                              (2,)]),
    (lambda x, w, b: F.conv1d_transpose(x, w, b, stride=2, output_padding=1),
     [(1, 3, 4), (3, 2, 3), (2,)]),
    (lambda x, w, b: F.conv2d_transpose(x, w, b, stride=2, padding=1, groups=2),
     [(1, 4, 3, 3), (4, 1, 3, 3), (2,)]),
    (lambda x, w, b: F.conv3d_transpose(x, w, b, stride=(1, 2, 1)),
     [(1, 2, 2, 3, 2), (2, 2, 2, 2, 2), (2,)]),
], ids=["conv1d", "conv2d", "conv2d_nhwc_groups", "depthwise", "pointwise", "conv3d",
        "conv1d_t", "conv2d_t", "conv3d_t"])
def test_conv_gradcheck(fn, shapes):
    gradcheck(fn, [_r(*s) for s in shapes])


def test_fold_unfold_gradcheck():
    gradcheck(lambda x: F.unfold(x, [2, 3], strides=[1, 2], paddings=[1, 0, 0, 1],
                                 dilations=[2, 1]), [_r(2, 2, 5, 6)])
    gradcheck(lambda x: F.fold(x, [5, 4], 2, strides=1, paddings=1), [_r(1, 8, 30)])


# ------------------------------------------------------------------ higher order
def _second_order(lib, fn, x, w):
    tx = lib.to_tensor(x, stop_gradient=False)
    tw = lib.to_tensor(w, stop_gradient=False)
    y = fn(lib, tx, tw)
    gx, gw = lib.grad((y * y).sum(), [tx, tw], create_graph=True)
    ((gx * gx).sum() + (gw * gw).sum() * 0.5).backward()
    return tx.grad.numpy(), tw.grad.numpy()


@pytest.mark.parity
@pytest.mark.parametrize("name,fn,shapes", [
    ("conv2d", lambda lib, x, w: lib.nn.functional.conv2d(x, w, stride=2, padding=1, groups=2),
     [(2, 4, 6, 5), (4, 2, 3, 3)]),
    ("conv1d", lambda lib, x, w: lib.nn.functional.conv1d(x, w, dilation=2),
     [(2, 3, 9), (4, 3, 3)]),
])
def test_conv_double_grad_parity(pd, name, fn, shapes):
    x, w = _r(*shapes[0]), _r(*shapes[1])
    hx, hw = _second_order(paddle, fn, x, w)
    px, pw = _second_order(pd, fn, x, w)
    np.testing.assert_allclose(hx, px, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(hw, pw, rtol=1e-8, atol=1e-8)


def _grad_of(fn, x, w):
    """d/dx of sum(fn(x, w)^2), recorded with create_graph=True."""
    tx = paddle.to_tensor(x, stop_gradient=False)
    tw = paddle.to_tensor(w, stop_gradient=False)
    y = fn(tx, tw)
    (gx,) = paddle.grad((y * y).sum(), [tx], create_graph=True)
    return tx, tw, gx


@pytest.mark.parametrize("fn,shapes", [
    (lambda x, w: F.conv2d(x, w, stride=2, padding=1), [(1, 2, 4, 5), (3, 2, 3, 3)]),
    (lambda x, w: F.conv2d_transpose(x, w, stride=2, padding=1, output_padding=1),
     [(1, 2, 3, 3), (2, 3, 3, 3)]),
    (lambda x, w: F.conv2d(x, w, groups=2, padding=1), [(1, 2, 3, 3), (4, 1, 3, 3)]),
], ids=["conv2d", "conv2d_transpose", "depthwise"])
def test_conv_double_grad_finite_difference(fn, shapes):
    """The gradient computed with create_graph=True is differentiable, and its derivative is
    right: compare d/d(x, w) <r, grad_x> with central differences of grad_x itself."""
    x, w = _r(*shapes[0]), _r(*shapes[1])
    r = _r(*shapes[0])
    tx, tw, gx = _grad_of(fn, x, w)
    (gx * paddle.to_tensor(r)).sum().backward()
    eps = 1e-6
    for arr, ana in ((x, tx.grad.numpy()), (w, tw.grad.numpy())):
        num = np.zeros_like(arr)
        for idx in np.ndindex(arr.shape):
            orig = arr[idx]
            arr[idx] = orig + eps
            fp = float((_grad_of(fn, x, w)[2].numpy() * r).sum())
            arr[idx] = orig - eps
            fm = float((_grad_of(fn, x, w)[2].numpy() * r).sum())
            arr[idx] = orig
            num[idx] = (fp - fm) / (2 * eps)
        np.testing.assert_allclose(ana, num, rtol=1e-5, atol=1e-5)


def test_conv_third_order_runs():
    x = paddle.to_tensor(_r(1, 2, 4, 4), stop_gradient=False)
    w = paddle.to_tensor(_r(2, 2, 3, 3), stop_gradient=False)
    y = (F.conv2d(x, w, padding=1) ** 2).sum()
    (g1,) = paddle.grad(y, [x], create_graph=True)
    (g2,) = paddle.grad((g1 ** 2).sum(), [w], create_graph=True)
    (g3,) = paddle.grad((g2 ** 2).sum(), [x])
    assert g3.shape == [1, 2, 4, 4]
    assert np.isfinite(g3.numpy()).all()


# ------------------------------------------------------------------ fold / unfold
@pytest.mark.parity
@pytest.mark.parametrize("kw", [dict(kernel_sizes=2), dict(kernel_sizes=[2, 3], strides=[1, 2],
                                                          paddings=[1, 2, 3, 4], dilations=[2, 1]),
                                dict(kernel_sizes=3, paddings=[1, 0])], ids=str)
def test_unfold_parity(pd, kw):
    check_parity(lambda lib, x: lib.nn.functional.unfold(x, **kw), [_r(2, 3, 6, 7)], pd)


@pytest.mark.parity
def test_fold_parity(pd):
    check_parity(lambda lib, x: lib.nn.functional.fold(x, [6, 7], [2, 3], strides=[1, 2],
                                                       paddings=[1, 2], dilations=[2, 1]),
                 [_r(2, 18, 30)], pd)
    check_parity(lambda lib, x: lib.nn.functional.fold(x, 4, 2), [_r(2, 12, 9)], pd)


def test_unfold_fold_shapes_and_roundtrip_b76():
    x = paddle.to_tensor(_r(3, 2, 6, 8, dtype="float32"))
    cols = F.unfold(x, [2, 4], strides=[2, 4])
    assert cols.shape == [3, 2 * 2 * 4, 3 * 2]
    back = F.fold(cols, [6, 8], [2, 4], strides=[2, 4])
    assert back.shape == [3, 2, 6, 8]
    np.testing.assert_array_equal(back.numpy(), x.numpy())
    # overlapping windows: fold(unfold(ones)) counts how many windows cover each pixel
    ones = paddle.ones([1, 1, 4, 4])
    cover = F.fold(F.unfold(ones, 3), 4, 3).numpy()[0, 0]
    np.testing.assert_array_equal(cover, [[1, 2, 2, 1], [2, 4, 4, 2], [2, 4, 4, 2], [1, 2, 2, 1]])
    # the unfolded rows are (channel, tap) major and the columns the output grid, row-major
    a = paddle.arange(16, dtype="float32").reshape([1, 1, 4, 4])
    np.testing.assert_array_equal(F.unfold(a, 2, strides=2).numpy()[0],
                                  [[0, 2, 8, 10], [1, 3, 9, 11], [4, 6, 12, 14],
                                   [5, 7, 13, 15]])


def test_unfold_large_batch_b76():
    x = _r(600, 2, 5, 5, dtype="float32")
    big = F.unfold(paddle.to_tensor(x), 3, paddings=1).numpy()
    for i in (0, 299, 599):
        one = F.unfold(paddle.to_tensor(x[i:i + 1]), 3, paddings=1).numpy()
        np.testing.assert_array_equal(big[i:i + 1], one)


def test_fold_unfold_layers():
    x = paddle.to_tensor(_r(2, 3, 4, 4, dtype="float32"))
    un = nn.Unfold(kernel_sizes=2, strides=2)
    fo = nn.Fold(output_sizes=[4, 4], kernel_sizes=2, strides=2)
    np.testing.assert_array_equal(fo(un(x)).numpy(), x.numpy())
    assert repr(un) == "Unfold(kernel_size=2, dilation=1, padding=0, stride=2)"
    assert repr(fo) == "Fold(kernel_size=2, dilation=1, padding=0, stride=2)"


# ------------------------------------------------------------------ layers
LAYER_CASES = [
    ("Conv1D", (4, 6, 3), dict(padding=2, padding_mode="circular"), (2, 4, 9)),
    ("Conv1D", (4, 6, 3), dict(stride=2, data_format="NLC"), (2, 9, 4)),
    ("Conv2D", (4, 6, 3), dict(padding=1, padding_mode="reflect"), (2, 4, 7, 8)),
    ("Conv2D", (4, 6, 3), dict(padding=2, padding_mode="replicate", data_format="NHWC"),
     (2, 7, 8, 4)),
    ("Conv2D", (4, 8, 3), dict(padding=1, groups=4, stride=2), (2, 4, 7, 8)),
    ("Conv2D", (4, 6, (3, 1)), dict(padding="same", bias_attr=False), (2, 4, 7, 8)),
    ("Conv3D", (4, 6, 3), dict(stride=2, padding=1), (2, 4, 5, 5, 5)),
    ("Conv1DTranspose", (4, 6, 3), dict(stride=2), (2, 4, 5)),
    ("Conv2DTranspose", (4, 6, 3), dict(stride=2, padding=1, output_padding=1), (2, 4, 5, 5)),
    ("Conv2DTranspose", (4, 6, 3), dict(groups=2, data_format="NHWC"), (2, 5, 5, 4)),
    ("Conv3DTranspose", (4, 6, 2), dict(stride=2), (2, 4, 3, 3, 3)),
]


@pytest.mark.parity
@pytest.mark.parametrize("name,args,kw,shape", LAYER_CASES, ids=[c[0] for c in LAYER_CASES])
def test_conv_layer_parity(pd, name, args, kw, shape):
    pl = getattr(pd.nn, name)(*args, **kw)
    hl = getattr(nn, name)(*args, **kw)
    assert list(hl.state_dict()) == list(pl.state_dict())
    assert repr(hl) == repr(pl)
    missing, unexpected = hl.set_state_dict({k: v.numpy() for k, v in pl.state_dict().items()})
    assert not missing and not unexpected
    x = _r(*shape, dtype="float32")
    px = pd.to_tensor(x, stop_gradient=False)
    hx = paddle.to_tensor(x, stop_gradient=False)
    po, ho = pl(px), hl(hx)
    assert ho.shape == po.shape and ho.dtype == paddle.float32
    w = _r(*po.shape, dtype="float32")
    (po * pd.to_tensor(w)).sum().backward()
    (ho * paddle.to_tensor(w)).sum().backward()
    np.testing.assert_allclose(ho.numpy(), po.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(hx.grad.numpy(), px.grad.numpy(), rtol=1e-4, atol=1e-4)
    for (k, p), q in zip(hl.named_parameters(), pl.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=2e-3,
                                   err_msg=k)


def test_conv_layer_parameters_and_init():
    conv = nn.Conv2D(64, 128, 3, groups=4)
    assert conv.weight.shape == [128, 16, 3, 3]
    assert conv.bias.shape == [128]
    assert list(conv.state_dict()) == ["weight", "bias"]
    # Paddle's default: Normal(0, sqrt(2 / (in_channels * prod(kernel))))
    np.testing.assert_allclose(conv.weight.numpy().std(), (2 / (64 * 9)) ** 0.5, rtol=0.05)
    np.testing.assert_array_equal(conv.bias.numpy(), 0)
    convt = nn.Conv2DTranspose(64, 128, 3, groups=4)
    assert convt.weight.shape == [64, 32, 3, 3]
    # transposed convs keep the layer default (Xavier-uniform over fan_in + fan_out)
    np.testing.assert_allclose(convt.weight.numpy().std(), (2 / (32 * 9 + 64 * 9)) ** 0.5,
                               rtol=0.05)
    assert nn.Conv1D(2, 3, 3, bias_attr=False).bias is None
    assert list(nn.Conv1D(2, 3, 3, bias_attr=False).state_dict()) == ["weight"]
    assert nn.Conv3D(2, 4, (1, 2, 3)).weight.shape == [4, 2, 1, 2, 3]


def test_conv_layer_repr():
    assert repr(nn.Conv2D(4, 8, 3)) == "Conv2D(4, 8, kernel_size=[3, 3], data_format=NCHW)"
    assert repr(nn.Conv2D(4, 8, (3, 2), stride=2, padding=1, dilation=2, groups=2,
                          padding_mode="reflect", data_format="NHWC")) == (
        "Conv2D(4, 8, kernel_size=[3, 2], stride=[2, 2], padding=1, padding_mode=reflect, "
        "dilation=[2, 2], groups=2, data_format=NHWC)")
    assert repr(nn.Conv2DTranspose(4, 8, 3, stride=2, output_padding=1)) == (
        "Conv2DTranspose(4, 8, kernel_size=[3, 3], stride=[2, 2], output_padding=1, "
        "data_format=NCHW)")


def test_conv_layer_trains_one_step():
    net = nn.Sequential(nn.Conv2D(1, 4, 3, padding=1), nn.Conv2D(4, 2, 1))
    x = paddle.to_tensor(_r(4, 1, 6, 6, dtype="float32"))
    target = paddle.to_tensor(_r(4, 2, 6, 6, dtype="float32"))
    opt = paddle.optimizer.SGD(0.05, parameters=net.parameters())
    losses = []
    for _ in range(5):
        loss = ((net(x) - target) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss.numpy()))
    assert losses[-1] < losses[0]


def test_conv_transpose_layer_output_size():
    up = nn.Conv2DTranspose(4, 2, 3, stride=2, padding=1)
    x = paddle.ones([1, 4, 5, 5])
    assert up(x).shape == [1, 2, 9, 9]
    assert up(x, output_size=[10, 10]).shape == [1, 2, 10, 10]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_conv_low_precision_close_to_float32(dtype):
    x, w = _r(2, 3, 6, 6, dtype="float32"), _r(4, 3, 3, 3, dtype="float32") * 0.3
    ref = F.conv2d(paddle.to_tensor(x), paddle.to_tensor(w), padding=1).numpy()
    tx = paddle.to_tensor(x).astype(dtype)
    tx.stop_gradient = False
    out = F.conv2d(tx, paddle.to_tensor(w).astype(dtype), padding=1)
    assert out.dtype == getattr(paddle, dtype)
    tol = 2e-2 if dtype == "float16" else 1e-1
    np.testing.assert_allclose(out.astype("float32").numpy(), ref, rtol=tol, atol=tol)
    out.sum().backward()
    assert tx.grad.dtype == getattr(paddle, dtype)


def test_conv_no_grad_records_nothing():
    x = paddle.to_tensor(_r(1, 2, 5, 5, dtype="float32"), stop_gradient=False)
    conv = nn.Conv2D(2, 3, 3)
    with paddle.no_grad():
        y = conv(x)
    assert y.stop_gradient


def test_conv_on_device(device):
    conv = nn.Conv2D(3, 4, 3, padding=1)
    x = paddle.to_tensor(_r(2, 3, 6, 6, dtype="float32"), stop_gradient=False)
    y = conv(x)
    assert y.shape == [2, 4, 6, 6]
    y.sum().backward()
    assert x.grad.shape == [2, 3, 6, 6]
    assert conv.weight.grad.shape == [4, 3, 3, 3]


# ------------------------------------------------------------------ errors
def test_conv_errors_name_the_op_and_shapes():
    x = paddle.ones([2, 4, 8, 8])
    w = paddle.ones([6, 4, 3, 3])
    with pytest.raises(ValueError, match=r"conv2d.*4-D.*\[4, 8, 8\]"):
        F.conv2d(paddle.ones([4, 8, 8]), w)
    with pytest.raises(ValueError, match=r"conv2d.*channels.*\[6, 3, 3, 3\]"):
        F.conv2d(x, paddle.ones([6, 3, 3, 3]))
    with pytest.raises(ValueError, match="divisible by groups"):
        F.conv2d(x, paddle.ones([6, 2, 3, 3]), groups=3)
    with pytest.raises(ValueError, match="number of filters"):
        F.conv2d(x, paddle.ones([5, 2, 3, 3]), groups=2)
    with pytest.raises(ValueError, match="padding"):
        F.conv2d(x, w, padding="foo")
    with pytest.raises(ValueError, match="padding"):
        F.conv2d(x, w, padding=-1)
    with pytest.raises(ValueError, match="padding"):
        F.conv2d(x, w, padding=[1, 2, 3])
    with pytest.raises(ValueError, match="batch or channel"):
        F.conv2d(x, w, padding=[[0, 1], [0, 0], [1, 1], [1, 1]])
    with pytest.raises(ValueError, match="stride"):
        F.conv2d(x, w, stride=0)
    with pytest.raises(ValueError, match="data_format"):
        F.conv2d(x, w, data_format="NCL")
    with pytest.raises(ValueError, match=r"bias.*\[6\]"):
        F.conv2d(x, w, bias=paddle.ones([5]))
    with pytest.raises(TypeError, match="float"):
        F.conv2d(paddle.ones([2, 4, 8, 8], "int32"), paddle.ones([6, 4, 3, 3], "int32"))
    with pytest.raises(TypeError, match="same dtype"):
        F.conv2d(x.astype("float64"), w)
    with pytest.raises(ValueError, match="output size"):
        F.conv2d(x, paddle.ones([6, 4, 9, 9]))
    with pytest.raises(ValueError, match="empty"):
        F.conv2d(paddle.ones([0, 4, 8, 8]), w)


def test_conv_transpose_errors():
    x = paddle.ones([2, 4, 8, 8])
    w = paddle.ones([4, 6, 3, 3])
    with pytest.raises(ValueError, match=r"output_size.*\[17, 19\)"):
        F.conv2d_transpose(x, w, stride=2, output_size=[20, 20])
    with pytest.raises(ValueError, match="output_padding"):
        F.conv2d_transpose(x, w, stride=2, output_padding=2)
    with pytest.raises(ValueError, match="mutually exclusive"):
        F.conv2d_transpose(x, w, stride=2, output_padding=1, output_size=[17, 17])
    with pytest.raises(ValueError, match=r"weight.shape\[0\]"):
        F.conv2d_transpose(x, paddle.ones([3, 6, 3, 3]))


def test_conv_layer_errors():
    conv = nn.Conv2D(3, 4, 3)
    with pytest.raises(ValueError, match=r"Conv2D.*4-D.*\[3, 8, 8\]"):
        conv(paddle.ones([3, 8, 8]))
    with pytest.raises(ValueError, match=r"Conv2D.*5 channels.*in_channels=3"):
        conv(paddle.ones([1, 5, 8, 8]))
    with pytest.raises(ValueError, match="padding_mode"):
        nn.Conv2D(3, 4, 3, padding_mode="mirror")
    with pytest.raises(TypeError, match="padding must be an int"):
        nn.Conv2D(3, 4, 3, padding=[1, 1], padding_mode="reflect")
    with pytest.raises(ValueError, match="padding"):
        nn.Conv2D(3, 4, 3, padding="full")
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.Conv2D(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="data_format"):
        nn.Conv1D(3, 4, 3, data_format="NCHW")


def test_fold_unfold_errors():
    with pytest.raises(ValueError, match=r"unfold.*\[N, C, H, W\]"):
        F.unfold(paddle.ones([4, 8, 8]), 2)
    with pytest.raises(ValueError, match="paddings"):
        F.unfold(paddle.ones([1, 4, 8, 8]), 2, paddings=[1, 2, 3])
    with pytest.raises(ValueError, match="divisible"):
        F.fold(paddle.ones([2, 15, 9]), [4, 4], 2)
    with pytest.raises(ValueError, match="blocks"):
        F.fold(paddle.ones([2, 16, 8]), [4, 4], 2)
