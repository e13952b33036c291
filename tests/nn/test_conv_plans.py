"""The plan a convolution or pooling op runs is readable: its label reaches the profiler's
event and ``paddle.nn.utils.explain``; plans are made once per geometry."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import paddle_hl as paddle
import paddle_hl.nn.functional as F
from paddle_hl import profiler
from paddle_hl.backend import plans, settings

# the labels asserted here are the CPU backend's plans
pytestmark = pytest.mark.cpu


@pytest.fixture
def numpy_kernels(monkeypatch):
    """The NumPy forms only, so the labels do not depend on numba being installed."""
    monkeypatch.setitem(settings._values, settings.NUMBA_ENV, False)


def _x(*shape):
    return paddle.to_tensor(np.random.default_rng(0).standard_normal(shape).astype(np.float32))


def test_plan_is_made_once_per_geometry(numpy_kernels):
    x = np.zeros((8, 16, 6, 6), np.float32)
    w = np.zeros((32, 16, 3, 3), np.float32)
    a = plans.plan_conv(x, w, (1, 1), ((1, 1), (1, 1)), (1, 1), 1, False)
    assert plans.plan_conv(x.copy(), w.copy(), (1, 1), ((1, 1), (1, 1)), (1, 1), 1, False) is a
    # list arguments find the same plan
    assert plans.plan_conv(x, w, [1, 1], [[1, 1], [1, 1]], [1, 1], 1, False) is a
    assert a.kind == "nin" and a.label == "conv2d nin 3x3 s1"
    assert repr(a) == "ConvPlan(conv2d nin 3x3 s1)"
    # another batch is another geometry (the batch-innermost layout starts at batch 8)
    b = plans.plan_conv(x[:2], w, (1, 1), ((1, 1), (1, 1)), (1, 1), 1, False)
    assert b is not a and b.kind == "im2col" and b.label == "conv2d im2col 3x3 s1 flat"
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.kind = "im2col"


def test_labels(numpy_kernels):
    z = np.zeros
    trimmed = plans.plan_conv(z((2, 512, 1, 1), np.float32), z((512, 512, 3, 3), np.float32),
                              (1, 1), ((1, 1), (1, 1)), (1, 1), 1, False, train=False)
    assert trimmed.label == "conv2d im2col 3x3 s1 trim->1x1"
    dw = plans.plan_conv(z((2, 32, 4, 4), np.float32), z((32, 1, 3, 3), np.float32), (2, 2),
                         ((1, 1), (1, 1)), (1, 1), 32, True)
    assert dw.label == "conv2d depthwise channels-last 3x3 s2 g32 cl"
    pool = plans.plan_pool("max", z((2, 3, 9, 9), np.float32), (3, 3), (2, 2),
                           ((1, 1), (1, 1)), False)
    assert pool.label == "max_pool2d windows 3x3 s2" and not pool.compiled


def test_profiler_event_carries_the_plan(numpy_kernels):
    x = _x(8, 16, 6, 6)
    w = _x(32, 16, 3, 3)
    with profiler.Profiler(on_trace_ready=lambda p: None) as p:
        y = F.conv2d(x, w, padding=1)
        z = F.max_pool2d(y, 2)
        (z * z).sum()
    ev = {e.name: e for e in p.profiler_result.events if e.type == "Operator"}
    assert ev["conv"].args["plan"] == "conv2d nin 3x3 s1"
    assert ev["max_pool"].args["plan"] == "max_pool2d windows 2x2 s2"
    assert "plan" not in ev["multiply"].args
    assert "input_shapes" not in ev["conv"].args


def test_backward_events_carry_the_plan(numpy_kernels):
    x = _x(8, 16, 6, 6)
    x.stop_gradient = False
    w = _x(32, 16, 3, 3)
    w.stop_gradient = False
    with profiler.Profiler(on_trace_ready=lambda p: None) as p:
        y = F.conv2d(x, w, padding=1)
        z = F.max_pool2d(y, 2)
        (z * z).sum().backward()
    ev = {e.name: e for e in p.profiler_result.events if e.type == "Operator"}
    assert ev["conv_grad"].args["plan"] == "conv2d nin 3x3 s1"
    assert ev["max_pool_grad"].args["plan"] == "max_pool2d windows 2x2 s2"
    assert "plan" not in ev["multiply_grad"].args


def test_profiler_with_shapes_keeps_both(numpy_kernels):
    with profiler.Profiler(on_trace_ready=lambda p: None, record_shapes=True) as p:
        F.avg_pool2d(_x(2, 3, 8, 8), 2)
    ev = next(e for e in p.profiler_result.events
              if e.name == "avg_pool" and e.type == "Operator")
    assert ev.args["plan"] == "avg_pool2d windows 2x2 s2"
    assert ev.args["input_shapes"][0] == [2, 3, 8, 8]


def test_explain_lists_each_layer(numpy_kernels):
    m = paddle.vision.models.LeNet()
    t = paddle.nn.utils.explain(m, paddle.zeros([64, 1, 28, 28]))
    assert [r[0] for r in t] == ["features.0", "features.2", "features.3", "features.5"]
    assert t[0] == ["features.0", "conv", [64, 1, 28, 28], "conv2d im2col 3x3 s1"]
    assert t[2][3] == "conv2d nin 5x5 s1"
    assert t[1][3] == "max_pool2d windows 2x2 s2"
    text = repr(t)
    assert "features.3" in text and "conv2d nin 5x5 s1" in text
    assert "conv2d nin 5x5 s1" in t._repr_html_()
    # every op when asked; no hook is left on the model, no gradient was recorded
    every = paddle.nn.utils.explain(m, paddle.zeros([2, 1, 28, 28]), all_ops=True)
    assert len(every) > len(t) and any(r[1] == "linear" or r[1] == "matmul" for r in every)
    assert all(not layer._forward_pre_hooks for layer in m.sublayers(include_self=True))


def test_explain_shows_the_compiled_choices(monkeypatch):
    pytest.importorskip("numba")
    monkeypatch.setitem(settings._values, settings.NUMBA_ENV, True)
    t = paddle.nn.utils.explain(paddle.vision.models.LeNet(), paddle.zeros([64, 1, 28, 28]))
    assert t[0][3] == "conv2d direct 3x3 s1" and t[1][3] == "max_pool2d compiled 2x2 s2"


def test_explain_checks_its_model():
    with pytest.raises(TypeError, match="explain: model must be an nn.Layer"):
        paddle.nn.utils.explain(lambda x: x, paddle.zeros([1]))


def test_direct_plan_keeps_the_gemm_fallback_choice(monkeypatch):
    # the direct kernels decline non-finite values; their GEMM fallback must be the form the
    # geometry would run without them (here the flat-plane col2im of the input gradient)
    pytest.importorskip("numba")
    monkeypatch.setitem(settings._values, settings.NUMBA_ENV, True)
    p = plans.plan_conv(np.zeros((2, 1, 10, 10), np.float32), np.zeros((3, 1, 3, 3), np.float32),
                        (1, 1), ((1, 1), (1, 1)), (1, 1), 1, False)
    assert p.kind == "direct" and p.base == "im2col" and p.flat
    assert p.label == "conv2d direct 3x3 s1 flat"


def test_depthwise_on_channels_last_data_runs_channels_last(monkeypatch):
    """With the compiled kernels, a depthwise layer whose data is channels last in memory (an
    NHWC tensor) runs the channels-last kernels whatever its plane size, with no transposing
    copy; channel-first data of the same size runs the phase planes. Both give the NumPy
    forms' results."""
    pytest.importorskip("numba")
    monkeypatch.setitem(settings._values, settings.NUMBA_ENV, True)
    x = np.random.default_rng(1).standard_normal((2, 24, 24, 8)).astype(np.float32)
    w = np.random.default_rng(2).standard_normal((8, 1, 3, 3)).astype(np.float32)

    def run(fmt):
        xt = paddle.to_tensor(x if fmt == "NHWC" else np.ascontiguousarray(x.transpose(0, 3, 1, 2)),
                              stop_gradient=False)
        wt = paddle.to_tensor(w, stop_gradient=False)
        y = F.conv2d(xt, wt, padding=1, groups=8, data_format=fmt)
        (y * y).sum().backward()
        ys = y.numpy() if fmt == "NHWC" else y.numpy().transpose(0, 2, 3, 1)
        gx = xt.grad.numpy() if fmt == "NHWC" else xt.grad.numpy().transpose(0, 2, 3, 1)
        return ys, gx, wt.grad.numpy()

    with profiler.Profiler(on_trace_ready=lambda p: None) as p:
        got_cl = run("NHWC")
        got_cf = run("NCHW")
    labels = [e.args["plan"] for e in p.profiler_result.events
              if e.type == "Operator" and e.name == "conv"]
    assert labels == ["conv2d depthwise channels-last 3x3 s1 g8 cl",
                      "conv2d depthwise phase-planes 3x3 s1 g8"], labels
    monkeypatch.setitem(settings._values, settings.NUMBA_ENV, False)
    want = run("NCHW")
    for a, b, c in zip(got_cl, got_cf, want):
        np.testing.assert_allclose(a, c, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(b, c, rtol=1e-5, atol=1e-5)
