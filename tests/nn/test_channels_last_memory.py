"""Channels last in memory inside a channel-first network (``backend/plans.py``, "Memory
layout"): a depthwise layer that runs channels last keeps its result there, a 1x1 layer on such
an input runs as one GEMM on its rows and keeps it too, and batch norm computes on the rows.
Every such path is checked against the same op on C-contiguous data (the layout changes
strides, never values) and, where Paddle is installed, against Paddle."""

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.backend import plans
from paddle_hl.backend import windows as W
from paddle_hl.nn import functional as F
from tests.op_check import check_parity

# the forms chosen here are the CPU backend's
pytestmark = pytest.mark.cpu

RNG = np.random.default_rng(5)


def _cl(a):
    """``a`` ([N, C, *S]) with the same values, laid out channels last in memory."""
    return np.moveaxis(np.ascontiguousarray(np.moveaxis(a, 1, -1)), -1, 1)


def _r(*shape, dtype="float32"):
    return RNG.standard_normal(shape).astype(dtype)


@pytest.fixture(params=[True, False], ids=["numba", "numpy"])
def numba(request):
    if request.param:
        pytest.importorskip("numba")
    old = paddle.device.get_numba()
    paddle.device.set_numba(request.param)
    yield request.param
    paddle.device.set_numba(old)


def _run(fn, arrays):
    """``fn`` on tensors of ``arrays`` and the gradients of ``sum(out**2)``: ``(out, grads,
    out's array)``."""
    ts = [paddle.to_tensor(a, stop_gradient=False) for a in arrays]
    out = fn(*ts)
    (out * out).sum().backward()
    return out.numpy(), [t.grad.numpy() for t in ts], out._data


def test_in_cl_memory():
    a = _r(2, 3, 4, 5)
    assert not W.in_cl_memory(a)
    assert W.in_cl_memory(_cl(a))
    # a plane of one pixel is both layouts at once: counted as channel-first
    assert not W.in_cl_memory(_cl(_r(2, 3, 1, 1)))
    assert not W.in_cl_memory(a[:, :, ::2])


@pytest.mark.parametrize("stride", [1, 2])
@pytest.mark.parametrize("shape", [(4, 6, 5, 3), (3, 8, 2, 2), (2, 5, 7)])
def test_pointwise_on_channels_last_memory(shape, stride, numba):
    x = _r(*shape)
    w = _r(7, shape[1], *([1] * (len(shape) - 2)))
    b = _r(7)
    conv = F.conv2d if len(shape) == 4 else F.conv1d

    def fn(x, w, b):
        return conv(x, w, b, stride=stride)

    ref, gref, _ = _run(fn, [x, w, b])
    out, grads, data = _run(fn, [_cl(x), w, b])
    # (a one-pixel plane is both layouts at once)
    assert W.in_cl_memory(data) or data[0, 0].size == 1, "the result left channels-last memory"
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
    for g, gr in zip(grads, gref):
        np.testing.assert_allclose(g, gr, rtol=1e-4, atol=1e-4)
    xl = _cl(x)
    plan = plans.plan_conv(xl, w, (stride,) * (len(shape) - 2), ((0, 0),) * (len(shape) - 2),
                           (1,) * (len(shape) - 2), 1, False)
    assert plan.kind == "pointwise" and plan.detail == "nhwc" and plan.keep, plan.label
    assert plan.label.endswith("keeps-cl")


def test_pointwise_nhwc_format_needs_no_copy():
    # a channels-last tensor (data_format="NHWC") runs the rows form and comes back as is
    x = _r(2, 3, 3, 8)
    w = _r(5, 8, 1, 1)
    y = F.conv2d(paddle.to_tensor(x), paddle.to_tensor(w), data_format="NHWC")
    assert y._data.flags.c_contiguous and y.shape == [2, 3, 3, 5]
    np.testing.assert_allclose(y.numpy(), np.einsum("nhwc,oc->nhwo", x, w[:, :, 0, 0]),
                               rtol=1e-5, atol=1e-5)


def test_depthwise_channels_last_keeps_the_layout(numba):
    # a small plane: the depthwise layer runs channels last and leaves its result there
    x = _r(4, 16, 6, 6)
    w = _r(16, 1, 3, 3)

    def fn(x, w):
        return F.conv2d(x, w, padding=1, groups=16)

    plan = plans.plan_conv(x, w, (1, 1), ((1, 1), (1, 1)), (1, 1), 16, False)
    assert plan.detail == "channels-last" and plan.keep, plan.label
    ref, gref, data = _run(fn, [x, w])
    assert W.in_cl_memory(data)
    out, grads, data = _run(fn, [_cl(x), w])
    assert W.in_cl_memory(data)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
    for g, gr in zip(grads, gref):
        np.testing.assert_allclose(g, gr, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("act", [None, "relu", "relu6"])
def test_batch_norm_on_channels_last_memory(act, numba):
    x = _r(4, 12, 5, 3) * 2 + 1

    def run(xa):
        bn = paddle.nn.BatchNorm2D(12)
        bn.weight.set_value(np.linspace(0.5, 1.5, 12).astype("float32"))
        bn.bias.set_value(np.linspace(-1, 1, 12).astype("float32"))
        t = paddle.to_tensor(xa, stop_gradient=False)
        y = bn(t)
        if act:
            y = getattr(F, act)(y)
        (y * y).sum().backward()
        return (y, t.grad.numpy(), bn.weight.grad.numpy(), bn.bias.grad.numpy(),
                bn._mean.numpy(), bn._variance.numpy())

    ref = run(x)
    got = run(_cl(x))
    assert W.in_cl_memory(got[0]._data), "batch norm left channels-last memory"
    np.testing.assert_allclose(got[0].numpy(), ref[0].numpy(), rtol=1e-5, atol=1e-5)
    for a, b in zip(got[1:], ref[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("c, split", [(10, False), (70, False), (70, True), (5, True)],
                         ids=["few-channels", "per-row", "split", "split-few"])
def test_compiled_batch_norm_rows_match_the_channel_first_kernel(c, split, monkeypatch):
    """Both forms of the rows kernels (per row, for arrays the pool does not split with many
    channels; chunked row blocks otherwise) against the channel-first kernel."""
    pytest.importorskip("numba")
    from paddle_hl.backend import _threads
    from paddle_hl.backend._numba import norm

    if split:
        monkeypatch.setattr(_threads, "MIN_BYTES", 0)
    x = (_r(3, c, 7) * 3).astype(np.float32)
    rows = W.rows(_cl(x))  # [N*L, C], a view of the channels-last copy
    assert norm._chunked(rows, 2 * rows.nbytes) is (split or c < norm._ROWS_MIN_C)
    w, b = _r(c), _r(c)
    g = _r(3, c, 7)

    def logical(a):
        return W.from_rows(a, 3, (7,))

    for act in (None, "relu", "relu6"):
        a = norm.batch_norm_train(x, w, b, 1e-5, act)
        r = norm.batch_norm_train(rows, w, b, 1e-5, act)
        np.testing.assert_allclose(logical(r[0]), a[0], rtol=1e-6, atol=1e-6)
        for u, v in zip(a[1:4], r[1:4]):
            np.testing.assert_allclose(v, u, rtol=1e-6, atol=1e-6)
        assert (a[4] is None) == (r[4] is None)
        if a[4] is not None:
            np.testing.assert_array_equal(logical(r[4]), a[4])
        da = norm.batch_norm_train_grad(g, x, w, a[1], a[3], a[4])
        dr = norm.batch_norm_train_grad(W.rows(_cl(g)), rows, w, r[1], r[3], r[4])
        np.testing.assert_allclose(logical(dr[0]), da[0], rtol=1e-5, atol=1e-5)
        for u, v in zip(da[1:], dr[1:]):
            np.testing.assert_allclose(v, u, rtol=1e-5, atol=1e-5)
        if split:  # the blocks depend on the sizes only: one thread gives the same bits
            monkeypatch.setattr(_threads, "num_threads", lambda: 1)
            r1 = norm.batch_norm_train(rows, w, b, 1e-5, act)
            dr1 = norm.batch_norm_train_grad(W.rows(_cl(g)), rows, w, r1[1], r1[3], r1[4])
            monkeypatch.undo()
            monkeypatch.setattr(_threads, "MIN_BYTES", 0)
            for u, v in zip((*r[:4], *dr), (*r1[:4], *dr1)):
                np.testing.assert_array_equal(u, v)


def test_mobilenet_v2_runs_its_small_planes_channels_last(monkeypatch):
    net = paddle.vision.models.mobilenet_v2(num_classes=10)
    x = paddle.to_tensor(_r(4, 3, 64, 64))
    seen = []
    orig = plans.ConvPlan.forward

    def spy(self, *a, **k):
        seen.append(self)
        return orig(self, *a, **k)

    monkeypatch.setattr(plans.ConvPlan, "forward", spy)
    net(x).sum().backward()
    kept = [p for p in seen if p.keep]
    assert kept, [p.label for p in seen]
    # from the first layer that keeps channels last on, every 1x1 layer runs on rows
    first = seen.index(kept[0])
    later_1x1 = [p for p in seen[first:] if p.ksize == (1, 1)]
    assert later_1x1 and all(p.detail == "nhwc" for p in later_1x1), \
        [p.label for p in later_1x1]
    assert all(np.isfinite(p.grad.numpy()).all() for p in net.parameters()
               if p.grad is not None)


@pytest.mark.parity
def test_mobilenet_v2_block_parity(pd):
    # a depthwise layer on a small plane, its batch norm and a 1x1 projection: the
    # channels-last path end to end against Paddle (training-mode batch norm, gradients)
    x = _r(4, 16, 6, 6).astype("float64")
    wd = _r(16, 1, 3, 3).astype("float64")
    wp = _r(24, 16, 1, 1).astype("float64")

    def fn(lib, x, wd, wp):
        f = lib.nn.functional
        y = f.conv2d(x, wd, padding=1, groups=16)
        y = f.batch_norm(y, lib.zeros([16], "float64"), lib.ones([16], "float64"),
                         training=True)
        y = f.relu6(y)
        return f.conv2d(y, wp)

    check_parity(fn, [x, wd, wp], pd, rtol=1e-6, atol=1e-6)


def test_row_sums_of_products_add_in_the_plain_order():
    from paddle_hl.nn.functional import norm

    a, b = _r(300, 24), _r(300, 24)
    fast = norm._rdot(a, b, (0,), np)
    np.testing.assert_array_equal(fast, (a * b).sum(axis=0, keepdims=True))
    # a channel range of the rows (the thread pool's split) too
    np.testing.assert_array_equal(norm._rdot(a[:, 5:17], b[:, 5:17], (0,), np),
                                  (a[:, 5:17] * b[:, 5:17]).sum(axis=0, keepdims=True))
