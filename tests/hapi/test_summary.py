"""paddle.summary and paddle.flops against Paddle 2.6.2."""

from __future__ import annotations

import re

import numpy as np
import pytest

import paddle_hl as paddle


def _lenet(lib):
    nn = lib.nn
    return nn.Sequential(
        nn.Conv2D(1, 6, 3, stride=1, padding=1), nn.ReLU(), nn.MaxPool2D(2, 2),
        nn.Conv2D(6, 16, 5, stride=1, padding=0), nn.ReLU(), nn.MaxPool2D(2, 2),
        nn.Flatten(), nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, 10))


def _block_net(lib):
    nn = lib.nn

    class Block(nn.Layer):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2D(3, 4, 3, padding=1)
            self.bn = nn.BatchNorm2D(4)
            self.short = nn.Sequential(nn.Conv2D(3, 4, 1), nn.BatchNorm2D(4))

        def forward(self, x):
            return nn.functional.relu(self.bn(self.conv(x)) + self.short(x))

    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.pool = nn.AdaptiveAvgPool2D(2)
            self.fc = nn.Linear(16, 3)
            self.fc.weight.stop_gradient = True

        def forward(self, x):
            return self.fc(paddle_flatten(lib, self.pool(self.block(x)))), x

    return Net()


def _resnet18(lib):
    return lib.vision.models.resnet18(num_classes=10)


def _mobilenet_v2(lib):
    return lib.vision.models.mobilenet_v2(num_classes=10)


def paddle_flatten(lib, x):
    return lib.flatten(x, 1)


def _strip_idx(text):
    """Layer numbers follow each library's global name counters; compare the rest."""
    text = re.sub(r"(\w)-\d+ ", r"\1-N ", text)
    return "\n".join(" ".join(line.split()) for line in text.splitlines())


@pytest.mark.parity
@pytest.mark.parametrize("build,size", [(_lenet, (1, 1, 28, 28)), (_block_net, (2, 3, 8, 8)),
                                        (_resnet18, (1, 3, 32, 32)),
                                        (_mobilenet_v2, (1, 3, 32, 32))])
def test_summary_parity(pd, capsys, build, size):
    ours = paddle.summary(build(paddle), size)
    out_ours = capsys.readouterr().out
    theirs = pd.summary(build(pd), size)
    out_theirs = capsys.readouterr().out
    assert {k: int(v) for k, v in ours.items()} == {k: int(v) for k, v in theirs.items()}
    assert _strip_idx(out_ours) == _strip_idx(out_theirs)


def test_lenet_counts():
    info = paddle.summary(_lenet(paddle), (1, 1, 28, 28))
    assert info == {"total_params": 61610, "trainable_params": 61610}


def test_summary_inputs_forms(capsys):
    net = paddle.nn.Linear(3, 2)
    assert paddle.summary(net, (None, 3))["total_params"] == 8
    assert paddle.summary(net, [(2, 3)], dtypes="float32")["total_params"] == 8
    assert paddle.summary(net, input=paddle.ones([4, 3]))["total_params"] == 8
    spec = paddle.static.InputSpec([None, 3], "float32", "x")
    assert paddle.summary(net, spec)["total_params"] == 8
    out = capsys.readouterr().out
    assert "[[4, 3]]" in out and "Total params: 8" in out
    with pytest.raises(ValueError, match="input_size or input"):
        paddle.summary(net)


def test_model_summary_uses_input_specs():
    spec = paddle.static.InputSpec([None, 1, 28, 28], "float32", "image")
    m = paddle.Model(_lenet(paddle), inputs=spec)
    assert m.summary()["total_params"] == 61610
    with pytest.raises(ValueError, match="input_size"):
        paddle.Model(_lenet(paddle)).summary()


@pytest.mark.parity
@pytest.mark.parametrize("build,size", [(_lenet, [1, 1, 28, 28]), (_block_net, [2, 3, 8, 8]),
                                        (_resnet18, [1, 3, 32, 32]),
                                        (_mobilenet_v2, [1, 3, 32, 32])])
def test_flops_parity(pd, capsys, monkeypatch, build, size):
    # Paddle 2.6.2's flops converts a shape-[1] tensor with int(), which NumPy 2 refuses
    monkeypatch.setattr(pd.Tensor, "__int__", lambda t: int(t.numpy().reshape(-1)[0]))
    ours = paddle.flops(build(paddle), size, print_detail=True)
    theirs = pd.flops(build(pd), size, print_detail=True)
    assert ours == theirs


def test_flops_custom_ops_and_tuple_outputs(capsys):
    net = _block_net(paddle)
    base = paddle.flops(net, [1, 3, 8, 8])

    def count(layer, x, y):
        return 5

    with_custom = paddle.flops(net, [1, 3, 8, 8], custom_ops={paddle.nn.BatchNorm2D: count})
    assert with_custom != base
    out = capsys.readouterr().out
    assert "Customize Function has been applied" in out and "Total Flops:" in out
    # the value real Paddle 2.6.2 prints for its LeNet, which is this network
    np.testing.assert_equal(paddle.flops(_lenet(paddle), [1, 1, 28, 28]), 347560)
