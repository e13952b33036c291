"""auto_cast: output dtypes per op under O1/O2/OD against Paddle 2.6's documented lists,
promotion, custom lists, gradients, nesting, threads and PyLayer."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import paddle_hl as paddle
import paddle_hl.nn.functional as F
from paddle_hl.amp import amp_lists
from paddle_hl.framework import state

F16, BF16, F32 = "float16", "bfloat16", "float32"


def _t(shape, dtype=F32, seed=0):
    a = np.random.default_rng(seed).uniform(0.5, 1.5, shape).astype(np.float32)
    return paddle.to_tensor(a).astype(dtype)


def _conv(bias):
    def f(x):
        w = _t([4, 3, 3, 3], x.dtype.name, 1)
        b = _t([4], F32, 2) if bias else None
        return F.conv2d(x, w, b)
    return f


# (name, function of one input x [2, 3, 8, 8] or [4, 8], input shape, kind)
# kind: the op's place in Paddle 2.6's lists: white, black (O1 black list), extra (black at
# every level), gray (promotion)
CASES = [
    ("matmul", lambda x: paddle.matmul(x, x, transpose_y=True), [4, 8], "white"),
    ("einsum", lambda x: paddle.einsum("ij,kj->ik", x, x), [4, 8], "white"),
    ("conv2d", _conv(False), [2, 3, 8, 8], "white"),
    ("max_pool2d_mask", lambda x: F.max_pool2d(x, 2, return_mask=True)[0], [2, 3, 8, 8],
     "white"),
    ("exp", paddle.exp, [4, 8], "black"),
    ("log", paddle.log, [4, 8], "black"),
    ("square", paddle.square, [4, 8], "black"),
    ("reciprocal", paddle.reciprocal, [4, 8], "black"),
    ("softmax", F.softmax, [4, 8], "black"),
    ("log_softmax", F.log_softmax, [4, 8], "black"),
    ("softplus", F.softplus, [4, 8], "black"),
    ("sum", lambda x: x.sum(), [4, 8], "black"),
    ("mean", lambda x: x.mean(axis=1), [4, 8], "black"),
    ("cumsum", lambda x: paddle.cumsum(x, axis=1), [4, 8], "black"),
    ("layer_norm", lambda x: F.layer_norm(x, 8), [4, 8], "black"),
    ("cross_entropy", lambda x: F.cross_entropy(x, paddle.to_tensor([[1], [0], [2], [3]])),
     [4, 8], "black"),
    ("interpolate", lambda x: F.interpolate(x, scale_factor=2), [2, 3, 8, 8], "extra"),
    ("embedding", lambda x: F.embedding(paddle.to_tensor([1, 2]), x), [4, 8], "extra"),
    ("relu", F.relu, [4, 8], "gray"),
    ("add", lambda x: x + x, [4, 8], "gray"),
    ("transpose", lambda x: x.transpose([1, 0]), [4, 8], "gray"),
    ("tanh", paddle.tanh, [4, 8], "gray"),
    ("avg_pool2d", lambda x: F.avg_pool2d(x, 2), [2, 3, 8, 8], "gray"),
    ("batch_norm", lambda x: F.batch_norm(x, paddle.zeros([3]), paddle.ones([3]),
                                          training=True), [2, 3, 8, 8], "gray"),
]


def _expected(kind, level, in_dtype, low, use_promote=True):
    """Paddle 2.6's rule for one floating input of dtype ``in_dtype``."""
    if level == "O2" and not use_promote:
        return F32 if kind == "extra" else low
    if kind == "white":
        return low
    if kind == "extra" or (kind == "black" and level == "O1"):
        return F32
    if level == "OD":
        return F32
    return F32 if in_dtype == F32 else low  # promotion


@pytest.mark.parametrize("low", [F16, BF16])
@pytest.mark.parametrize("level", ["O1", "O2", "OD"])
@pytest.mark.parametrize("in_dtype", [F32, "low"])
@pytest.mark.parametrize("name,fn,shape,kind", CASES, ids=[c[0] for c in CASES])
def test_output_dtype_per_op(name, fn, shape, kind, level, in_dtype, low):
    in_dtype = low if in_dtype == "low" else in_dtype
    x = _t(shape, in_dtype)
    with paddle.amp.auto_cast(level=level, dtype=low):
        out = fn(x)
    assert out.dtype.name == _expected(kind, level, in_dtype, low), (name, level, in_dtype)


@pytest.mark.parametrize("name,fn,shape,kind", CASES, ids=[c[0] for c in CASES])
def test_o2_without_promotion(name, fn, shape, kind):
    x = _t(shape, F32)
    with paddle.amp.auto_cast(level="O2", use_promote=False):
        out = fn(x)
    assert out.dtype.name == _expected(kind, "O2", F32, F16, use_promote=False)


@pytest.mark.parametrize("name,fn,shape,kind", CASES[:6], ids=[c[0] for c in CASES[:6]])
def test_values_close_to_float32(name, fn, shape, kind):
    x = _t(shape, F32)
    ref = fn(x).astype(F32).numpy()
    with paddle.amp.auto_cast():
        out = fn(x)
    np.testing.assert_allclose(out.astype(F32).numpy(), ref, rtol=5e-3, atol=5e-3)


def test_disabled_and_o0_change_nothing():
    x = _t([4, 8])
    for kw in ({"enable": False}, {"level": "O0"}):
        with paddle.amp.auto_cast(**kw):
            assert paddle.matmul(x, x, transpose_y=True).dtype == paddle.float32
    assert state.amp_hook is None


def test_hook_removed_after_block():
    assert state.amp_hook is None
    with paddle.amp.auto_cast():
        assert state.amp_hook is not None
    assert state.amp_hook is None


def test_bias_added_after_low_precision_op():
    # Paddle's linear/conv are matmul/conv2d (white) then an add that promotes with the bias
    x = _t([4, 8])
    w = _t([8, 3])
    b16 = _t([3], F16)
    with paddle.amp.auto_cast():
        assert F.linear(x, w, _t([3])).dtype == paddle.float32
        assert F.linear(x, w).dtype == paddle.float16
        assert F.linear(x.astype(F16), w.astype(F16), b16).dtype == paddle.float16
        assert paddle.nn.Conv2D(3, 4, 3)(_t([1, 3, 6, 6])).dtype == paddle.float32
        assert paddle.nn.Conv2D(3, 4, 3, bias_attr=False)(_t([1, 3, 6, 6])).dtype == \
            paddle.float16
        # conv3d is not on the white list: promoted to float32
        assert paddle.nn.Conv3D(3, 4, 1, bias_attr=False)(_t([1, 3, 2, 2, 2])).dtype == \
            paddle.float32
    ref = F.linear(x, w, _t([3]))
    with paddle.amp.auto_cast():
        out = F.linear(x, w, _t([3]))
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=5e-3, atol=5e-3)


def test_channel_last_conv_bias():
    x = _t([1, 6, 6, 3])
    conv = paddle.nn.Conv2D(3, 4, 3, data_format="NHWC")
    ref = conv(x)
    with paddle.amp.auto_cast():
        out = conv(x)
    assert out.dtype == paddle.float32
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-2, atol=1e-2)


def test_gradients_come_back_in_input_dtype():
    x = _t([4, 8])
    x.stop_gradient = False
    w = _t([8, 8], seed=3)
    w.stop_gradient = False
    with paddle.amp.auto_cast():
        y = paddle.matmul(x, w)
        loss = F.softmax(y).sum() + y.astype(F32).mean()
    loss.backward()
    assert x.grad.dtype == paddle.float32 and w.grad.dtype == paddle.float32
    gx, gw = x.grad.numpy(), w.grad.numpy()
    x2, w2 = x.detach(), w.detach()
    x2.stop_gradient = w2.stop_gradient = False
    y2 = paddle.matmul(x2, w2)
    (F.softmax(y2).sum() + y2.mean()).backward()
    np.testing.assert_allclose(gx, x2.grad.numpy(), rtol=2e-2, atol=2e-3)
    np.testing.assert_allclose(gw, w2.grad.numpy(), rtol=2e-2, atol=2e-3)


def test_custom_lists():
    a, b = _t([2, 3]), _t([2, 3], seed=1)
    conv = paddle.nn.Conv2D(3, 2, 3, bias_attr=False)
    data = _t([1, 3, 6, 6])
    # the examples of Paddle's auto_cast documentation
    with paddle.amp.auto_cast(custom_black_list={"conv2d"}):
        assert conv(data).dtype == paddle.float32
    with paddle.amp.auto_cast(custom_white_list={"elementwise_add"}):
        assert (a + b).dtype == paddle.float16
    with paddle.amp.auto_cast(custom_white_list={"elementwise_add"}, level="O2"):
        assert (a + b).dtype == paddle.float16
    # paddle_hl names work too, and a custom white entry overrides the default black list
    with paddle.amp.auto_cast(custom_white_list=["add", "exp"]):
        assert (a + b).dtype == paddle.float16
        assert paddle.exp(a).dtype == paddle.float16
    with paddle.amp.auto_cast(custom_black_list=("matmul",)):
        assert paddle.matmul(a, b, transpose_y=True).dtype == paddle.float32


@pytest.mark.parametrize("kw,err", [
    ({"level": "O3"}, ValueError), ({"dtype": "float32"}, ValueError),
    ({"dtype": "float64", "enable": False}, ValueError),
    ({"custom_white_list": ["exp"], "custom_black_list": ["exp"]}, ValueError),
    ({"custom_white_list": 3}, TypeError), ({"custom_black_list": [1]}, TypeError),
])
def test_bad_arguments(kw, err):
    with pytest.raises(err):
        paddle.amp.auto_cast(**kw)


def test_dtype_objects_accepted():
    with paddle.amp.auto_cast(dtype=paddle.bfloat16):
        assert paddle.matmul(_t([2, 2]), _t([2, 2])).dtype == paddle.bfloat16


def test_nesting_restores_outer_setting():
    x = _t([4, 4])
    with paddle.amp.auto_cast():
        with paddle.amp.auto_cast(enable=False):
            assert paddle.matmul(x, x).dtype == paddle.float32
        assert paddle.matmul(x, x).dtype == paddle.float16
        with paddle.amp.auto_cast(dtype="bfloat16", level="O2"):
            assert paddle.matmul(x, x).dtype == paddle.bfloat16
            assert F.relu(x.astype(BF16)).dtype == paddle.bfloat16
        assert paddle.matmul(x, x).dtype == paddle.float16
    assert paddle.matmul(x, x).dtype == paddle.float32


def test_decorator_form():
    @paddle.amp.auto_cast(level="O1")
    def f(x):
        return paddle.matmul(x, x)

    x = _t([3, 3])
    assert f(x).dtype == paddle.float16
    assert paddle.matmul(x, x).dtype == paddle.float32


def test_state_is_per_thread():
    x = _t([4, 4])
    entered, done = threading.Event(), threading.Event()
    seen = {}

    def other():
        entered.wait()
        seen["other"] = paddle.matmul(x, x).dtype
        with paddle.amp.auto_cast(dtype="bfloat16"):
            seen["other_amp"] = paddle.matmul(x, x).dtype
        done.set()

    th = threading.Thread(target=other)
    th.start()
    with paddle.amp.auto_cast():
        entered.set()
        done.wait()
        seen["main"] = paddle.matmul(x, x).dtype
    th.join()
    assert seen == {"other": paddle.float32, "other_amp": paddle.bfloat16,
                    "main": paddle.float16}
    assert state.amp_hook is None


def test_pylayer_forward_under_auto_cast():
    class MatSquare(paddle.autograd.PyLayer):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return paddle.matmul(x, x)

        @staticmethod
        def backward(ctx, dy):
            (x,) = ctx.saved_tensor()
            return paddle.matmul(dy, x, transpose_y=True) + paddle.matmul(x, dy,
                                                                           transpose_x=True)

    x = _t([3, 3])
    x.stop_gradient = False
    with paddle.amp.auto_cast():
        y = MatSquare.apply(x)
        assert y.dtype == paddle.float16
        y.astype(F32).sum().backward()
    assert x.grad.dtype == paddle.float32
    ones = np.ones((3, 3), np.float32)
    xn = x.numpy()
    np.testing.assert_allclose(x.grad.numpy(), ones @ xn.T + xn.T @ ones, rtol=1e-2)


def test_linspace_and_creation_unaffected():
    with paddle.amp.auto_cast(level="O2"):
        t = paddle.linspace(0, 1, 5)
        z = paddle.zeros([2])
    assert t.dtype == paddle.float32 and z.dtype == paddle.float32
    np.testing.assert_allclose(t.numpy(), np.linspace(0, 1, 5, dtype=np.float32))


def test_float64_and_int_inputs_untouched():
    d = paddle.to_tensor(np.ones((2, 2)))
    i = paddle.to_tensor([[1, 2], [3, 4]])
    with paddle.amp.auto_cast(level="O2", use_promote=False):
        assert paddle.matmul(d, d).dtype == paddle.float64
        assert (i + i).dtype == paddle.int64


def test_ops_without_low_precision_kernel_stay_float32():
    a = paddle.eye(3) * 2.0
    with paddle.amp.auto_cast(level="O2", use_promote=False):
        assert paddle.linalg.inv(a).dtype == paddle.float32
        assert paddle.linalg.inv(a.astype(F16)).dtype == paddle.float32


def test_o2_norm_layers_keep_float32_params_and_low_output():
    net = paddle.nn.Sequential(paddle.nn.Conv2D(3, 4, 3, bias_attr=False),
                               paddle.nn.BatchNorm2D(4), paddle.nn.ReLU())
    paddle.amp.decorate(net, level="O2")
    with paddle.amp.auto_cast(level="O2"):
        out = net(_t([2, 3, 6, 6], F16))
        net.eval()  # inference batch_norm: only X is cast, the statistics stay float32
        out_eval = net(_t([2, 3, 6, 6], F16))
    assert net[1].weight.dtype == paddle.float32
    assert out.dtype == paddle.float16 and out_eval.dtype == paddle.float16


def test_o2_float32_input_into_decorated_model():
    # Paddle: the first white-list op casts the float32 batch to float16
    net = paddle.nn.Sequential(paddle.nn.Conv2D(3, 4, 3), paddle.nn.Flatten(),
                               paddle.nn.Linear(64, 2))
    paddle.amp.decorate(net, level="O2")
    with paddle.amp.auto_cast(level="O2"):
        out = net(_t([2, 3, 6, 6]))
    assert out.dtype == paddle.float16


def test_o1_layer_norm_is_float32_but_batch_norm_follows_x():
    x16 = _t([2, 3, 4, 4], F16)
    with paddle.amp.auto_cast():
        assert paddle.nn.LayerNorm(4)(x16).dtype == paddle.float32
        assert paddle.nn.GroupNorm(1, 3)(x16).dtype == paddle.float32
        assert paddle.nn.BatchNorm2D(3)(x16).dtype == paddle.float16
        assert paddle.nn.InstanceNorm2D(3)(x16).dtype == paddle.float32  # promoted by params


def test_lists_are_pauls_documented_lists():
    w, b = amp_lists.white_list(), amp_lists.black_list()
    assert w["float16"]["O1"] >= {"conv2d", "matmul_v2", "einsum", "max_pool2d_with_index"}
    assert "fused_attention" not in w["bfloat16"]["O1"]
    assert b["float16"]["O2"] == set(amp_lists.EXTRA_BLACK_LIST)
    assert b["float16"]["OD"] == set()
    assert {"softmax", "exp", "reduce_sum", "layer_norm"} <= b["float16"]["O1"]


@pytest.mark.parity
def test_lists_match_paddle(pd):
    from paddle.amp import amp_lists as pl

    assert amp_lists.white_list() == pl.white_list()
    assert amp_lists.black_list() == pl.black_list()
    assert set(amp_lists.EXTRA_BLACK_LIST) == set(pl.EXTRA_BLACK_LIST)


def _paddle_op_names(pd, capfd, fn):
    pd.amp.debugging.enable_operator_stats_collection()
    try:
        fn()
    finally:
        pd.amp.debugging.disable_operator_stats_collection()
    out = capfd.readouterr().out
    names = set()
    for line in out.splitlines():
        if line.startswith("  ") and "|" in line:
            names.add(line.split("|")[0].strip())
    return names


def _our_op_names(fn):
    with paddle.amp.debugging.collect_operator_stats() as st:
        fn()
    return set(st.counts) - {"cast"}


NAMED = [
    ("matmul", lambda m: m.matmul(m.rand([2, 3]), m.rand([3, 2]))),
    ("linear", lambda m: m.nn.functional.linear(m.rand([2, 3]), m.rand([3, 2]), m.rand([2]))),
    ("conv2d", lambda m: m.nn.functional.conv2d(m.rand([1, 3, 5, 5]), m.rand([2, 3, 3, 3]))),
    ("depthwise", lambda m: m.nn.functional.conv2d(m.rand([1, 3, 5, 5]), m.rand([3, 1, 3, 3]),
                                                   groups=3)),
    ("conv2d_transpose", lambda m: m.nn.functional.conv2d_transpose(m.rand([1, 3, 4, 4]),
                                                                    m.rand([3, 2, 3, 3]))),
    ("max_pool_mask", lambda m: m.nn.functional.max_pool2d(m.rand([1, 1, 4, 4]), 2,
                                                           return_mask=True)),
    ("avg_pool", lambda m: m.nn.functional.avg_pool2d(m.rand([1, 1, 4, 4]), 2)),
    ("softmax", lambda m: m.nn.functional.softmax(m.rand([2, 3]))),
    ("log_softmax", lambda m: m.nn.functional.log_softmax(m.rand([2, 3]))),
    ("sum", lambda m: m.rand([2, 3]).sum(axis=1)),
    ("pow", lambda m: m.pow(m.rand([2, 3]), 2.0)),
    ("elementwise_pow", lambda m: m.pow(m.rand([2, 3]), m.rand([2, 3]))),
    ("exp", lambda m: m.exp(m.rand([2, 3]))),
    ("layer_norm", lambda m: m.nn.functional.layer_norm(m.rand([2, 3]), 3)),
    ("smooth_l1", lambda m: m.nn.functional.smooth_l1_loss(m.rand([2, 3]), m.rand([2, 3]))),
    ("bce_logits", lambda m: m.nn.functional.binary_cross_entropy_with_logits(
        m.rand([2, 3]), m.rand([2, 3]))),
    ("relu", lambda m: m.nn.functional.relu(m.rand([2, 3]))),
]


@pytest.mark.parity
@pytest.mark.parametrize("name,fn", NAMED, ids=[n for n, _ in NAMED])
def test_op_names_match_paddle(pd, capfd, name, fn):
    # Paddle records a full mean as 'mean' or 'reduce_mean' depending on the caller
    same = {"mean": "reduce_mean"}
    ours = {same.get(n, n) for n in _our_op_names(lambda: fn(paddle))}
    capfd.readouterr()
    theirs = {same.get(n, n) for n in _paddle_op_names(pd, capfd, lambda: fn(pd))}
    assert ours and ours <= theirs, (ours, theirs)


def test_supported_devices():
    assert paddle.amp.is_float16_supported() is True
    assert paddle.amp.is_bfloat16_supported("cpu") is True
    with pytest.raises(ValueError):
        paddle.amp.is_float16_supported("xpu")
    if not paddle.is_compiled_with_cuda():
        with pytest.raises(ValueError):
            paddle.amp.is_bfloat16_supported("gpu:0")


def test_pylayer_backward_runs_under_the_forwards_auto_cast():
    seen = {}

    class MatMul(paddle.autograd.PyLayer):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return paddle.matmul(x, w)

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensor()
            gx = paddle.matmul(g, w, transpose_y=True)
            seen["dtype"] = gx.dtype
            return gx, paddle.matmul(x, g, transpose_x=True)

    x = paddle.rand([2, 3])
    w = paddle.rand([3, 4])
    x.stop_gradient = w.stop_gradient = False
    with paddle.amp.auto_cast(level="O1"):
        y = MatMul.apply(x, w)
    assert y.dtype == paddle.float16
    y.astype("float32").sum().backward()  # outside auto_cast
    assert seen["dtype"] == paddle.float16
    assert x.grad.dtype == paddle.float32 and w.grad.dtype == paddle.float32
