"""paddle_hl.onnx.export: real ONNX models, run with ONNX Runtime against paddle_hl."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.static import InputSpec

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
ort = pytest.importorskip("onnxruntime", reason="onnxruntime is not installed")


class LSTMClassifier(paddle.nn.Layer):
    def __init__(self, mode="LSTM"):
        super().__init__()
        self.emb = paddle.nn.Embedding(100, 16)
        rnn = {"LSTM": paddle.nn.LSTM, "GRU": paddle.nn.GRU, "RNN": paddle.nn.SimpleRNN}[mode]
        self.rnn = rnn(16, 32)
        self.fc = paddle.nn.Linear(32, 2)

    def forward(self, ids):
        out = self.rnn(self.emb(ids))
        h = out[1][0] if isinstance(out[1], tuple) else out[1]
        return paddle.nn.functional.softmax(self.fc(h[-1]))


def _check(layer, spec, path, batches=(1, 3), ints=None):
    f = paddle.onnx.export(layer, str(path), spec)
    model = onnx.load(f)
    onnx.checker.check_model(model)
    sess = ort.InferenceSession(f, providers=["CPUExecutionProvider"])
    layer.eval()
    rng = np.random.default_rng(0)
    for b in batches:
        shape = [b if n == -1 else n for n in spec[0].shape]
        if ints:
            x = rng.integers(0, ints, shape).astype("int64")
        else:
            x = rng.standard_normal(shape).astype("float32")
        want = layer(paddle.to_tensor(x)).numpy()
        got = sess.run(None, {spec[0].name: x})[0]
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    return model


def test_lenet(tmp_path):
    from paddle_hl.vision.models import LeNet

    model = _check(LeNet(), [InputSpec([None, 1, 28, 28], "float32", "image")], tmp_path / "m")
    ops = {n.op_type for n in model.graph.node}
    assert {"Conv", "MaxPool", "Relu", "MatMul"} <= ops
    # parameters are initializers, named by their state_dict keys
    assert "param::features.0.weight" in {i.name for i in model.graph.initializer}


def test_resnet18(tmp_path):
    from paddle_hl.vision.models import resnet18

    model = _check(resnet18(num_classes=10), [InputSpec([None, 3, 32, 32], "float32", "x")],
                   tmp_path / "r")
    assert "BatchNormalization" in {n.op_type for n in model.graph.node}


def test_mobilenet_v2(tmp_path):
    from paddle_hl.vision.models import mobilenet_v2

    _check(mobilenet_v2(num_classes=10), [InputSpec([None, 3, 32, 32], "float32", "x")],
           tmp_path / "m", batches=(2,))


def test_split_shuffle_hardsigmoid_and_uneven_adaptive_pool(tmp_path):
    class Mixed(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.conv = paddle.nn.Conv2D(4, 4, 3, padding=1)
            self.pool = paddle.nn.AdaptiveAvgPool2D((3, 2))

        def forward(self, x):
            a, b = paddle.split(x, 2, axis=1)
            y = paddle.concat([paddle.nn.functional.hardsigmoid(a), b], axis=1)
            y = paddle.nn.functional.channel_shuffle(self.conv(y), 2)
            return paddle.flatten(self.pool(y), 1)

    _check(Mixed(), [InputSpec([None, 4, 5, 7], "float32", "x")], tmp_path / "s")


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
def test_recurrent_classifier(tmp_path, mode):
    model = _check(LSTMClassifier(mode), [InputSpec([None, 12], "int64", "ids")],
                   tmp_path / "c", ints=100)
    assert {"LSTM": "LSTM", "GRU": "GRU", "RNN": "RNN"}[mode] in {
        n.op_type for n in model.graph.node}


def test_elementwise_and_shapes(tmp_path):
    class Mixed(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = paddle.nn.Linear(6, 6)

        def forward(self, x):
            h = paddle.nn.functional.gelu(self.fc(x)) + paddle.nn.functional.silu(x) * 0.5
            h = paddle.nn.functional.hardswish(h) - paddle.nn.functional.leaky_relu(x)
            h = paddle.where(h > 0, h, paddle.exp(h) - 1) + (x < 0.5).astype("float32")
            t = paddle.matmul(h, x, transpose_y=True)
            return paddle.concat([t.mean(axis=-1, keepdim=True), x[:, 1:3].sum(axis=1,
                                                                               keepdim=True)], 1)

    _check(Mixed(), [InputSpec([None, 6], "float32", "x")], tmp_path / "e")


def test_two_free_axes_and_shape_tensors(tmp_path):
    class Tokens(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = paddle.nn.Linear(4, 3)
            self.norm = paddle.nn.LayerNorm(3)

        def forward(self, x):
            b, t = x.shape[0], x.shape[1]
            y = self.norm(self.fc(paddle.reshape(x, [b * t, 4])).reshape([b, t, 3]))
            n = paddle.shape(y)[0].astype("float32")
            return y[:, -1] * n + paddle.arange(t, dtype="float32").sum()

    net = Tokens()
    f = paddle.onnx.export(net, str(tmp_path / "t"), [InputSpec([None, None, 4], "float32",
                                                                "x")])
    sess = ort.InferenceSession(f, providers=["CPUExecutionProvider"])
    for shape in ([1, 1, 4], [3, 8, 4], [6, 2, 4]):
        x = np.random.default_rng(0).standard_normal(shape).astype("float32")
        np.testing.assert_allclose(sess.run(None, {"x": x})[0],
                                   net(paddle.to_tensor(x)).numpy(), rtol=1e-4, atol=1e-5)


def test_unsupported_kernel_is_named(tmp_path):
    class Cumulative(paddle.nn.Layer):
        def forward(self, x):
            return paddle.cumsum(x, axis=-1)

    with pytest.raises(ValueError, match="cumsum.*has no ONNX conversion|has no ONNX conv"):
        paddle.onnx.export(Cumulative(), str(tmp_path / "s"), [InputSpec([2, 3], "float32",
                                                                         "x")])


def test_opset_and_missing_onnx(tmp_path, monkeypatch):
    net = paddle.nn.Linear(3, 2)
    spec = [InputSpec([None, 3], "float32", "x")]
    f = paddle.onnx.export(net, str(tmp_path / "a"), spec)  # Paddle's default opset 9
    assert onnx.load(f).opset_import[0].version == 13
    f = paddle.onnx.export(net, str(tmp_path / "a"), spec, opset_version=15)
    assert onnx.load(f).opset_import[0].version == 15
    with pytest.raises(ValueError, match="opset_version"):
        paddle.onnx.export(net, str(tmp_path / "b"), spec, opset_version=30)
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ImportError, match=r"paddle_hl\[onnx\]"):
        paddle.onnx.export(net, str(tmp_path / "c"), spec, opset_version=13)
