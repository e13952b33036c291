"""amp.decorate: O2 parameter dtypes, norm layers in float32, excluded layers,
master weights and master gradients, save_dtype, argument errors."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle

nn = paddle.nn


class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.ln = nn.LayerNorm(4)

    def forward(self, x):
        return self.ln(self.fc(x))


def _net():
    return nn.Sequential(nn.Conv2D(3, 4, 3), nn.BatchNorm2D(4), nn.Linear(4, 4),
                         nn.LayerNorm(4), nn.GroupNorm(2, 4), nn.InstanceNorm2D(4),
                         nn.Embedding(3, 4), nn.BatchNorm(4), nn.SyncBatchNorm(4),
                         nn.BatchNorm1D(4), nn.PReLU(), Block())


LOW = {"0.weight", "0.bias", "2.weight", "2.bias", "6.weight", "10._weight", "11.fc.weight",
       "11.fc.bias"}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_o2_parameter_dtypes(dtype):
    m = _net()
    opt = paddle.optimizer.Adam(parameters=m.parameters())
    m2, opt2 = paddle.amp.decorate(m, opt, level="O2", dtype=dtype)
    assert m2 is m and opt2 is opt
    for name, p in m.named_parameters():
        assert p.dtype.name == (dtype if name in LOW else "float32"), name
    for name, b in m.named_buffers():
        assert b.dtype == paddle.float32, name  # BatchNorm statistics
    assert opt._multi_precision is True


def test_o1_changes_nothing():
    m = _net()
    opt = paddle.optimizer.SGD(parameters=m.parameters())
    r = paddle.amp.decorate(m, opt, level="O1")
    assert r == (m, opt)
    assert all(p.dtype == paddle.float32 for p in m.parameters())
    assert paddle.amp.decorate(m) is m


def test_return_forms():
    a, b = _net(), _net()
    r = paddle.amp.decorate([a, b], level="O2")
    assert isinstance(r, list) and r[0] is a and r[1] is b
    o = paddle.optimizer.SGD(parameters=a.parameters())
    r = paddle.amp.decorate(a, [o], level="O2", master_weight=False)
    assert isinstance(r, tuple) and isinstance(r[1], list) and r[1][0] is o
    assert o._multi_precision is False


def test_excluded_layers():
    m = _net()
    paddle.amp.decorate(m, level="O2", excluded_layers=[nn.Linear])
    assert m[2].weight.dtype == paddle.float32 and m[11].fc.weight.dtype == paddle.float32
    assert m[0].weight.dtype == paddle.float16
    m = _net()
    paddle.amp.decorate(m, level="O2", excluded_layers=m[11])
    assert m[11].fc.weight.dtype == paddle.float32
    assert m[2].weight.dtype == paddle.float16
    with pytest.raises(TypeError):
        paddle.amp.decorate(_net(), level="O2", excluded_layers=["fc"])


def test_layer_float16_helpers():
    m = _net()
    m.float16(excluded_layers=[nn.Linear])
    assert m[0].weight.dtype == paddle.float16 and m[2].weight.dtype == paddle.float32
    m.float()
    assert m[0].weight.dtype == paddle.float32


def test_save_dtype_casts_state_dict_only():
    m = _net()
    paddle.amp.decorate(m, level="O2", save_dtype="float32")
    sd = m.state_dict()
    assert m[0].weight.dtype == paddle.float16
    assert all(v.dtype == paddle.float32 for v in sd.values())
    np.testing.assert_allclose(sd["0.weight"].numpy(), m[0].weight.numpy().astype(np.float32))


def test_master_weights_keep_small_updates():
    paddle.seed(0)
    net = nn.Linear(2, 1, bias_attr=False)
    net.weight.set_value(np.ones((2, 1), np.float32) * 1024)
    opt = paddle.optimizer.SGD(learning_rate=0.01, parameters=net.parameters())
    paddle.amp.decorate(net, opt, level="O2")
    for _ in range(40):  # each step moves 0.01: below float16's spacing (1.0) at 1024
        with paddle.amp.auto_cast(level="O2"):
            loss = net(paddle.ones([1, 2]).astype("float16")).sum()
        loss.backward()
        opt.step()
        opt.clear_grad()
    assert net.weight.dtype == paddle.float16
    master = opt._master_weights[net.weight.name]
    np.testing.assert_allclose(paddle.backend.to_numpy(master),
                               np.full((2, 1), 1024 - 0.4, np.float32), rtol=1e-6)
    np.testing.assert_allclose(net.weight.numpy().astype(np.float32), 1024 - 0.4, atol=0.5)


def test_master_grad_keeps_float32_gradients():
    net = nn.Linear(3, 2)
    paddle.amp.decorate(net, level="O2", master_grad=True)
    for _ in range(2):
        with paddle.amp.auto_cast(level="O2"):
            loss = net(paddle.ones([4, 3]).astype("float16")).astype("float32").sum()
        loss.backward()
    assert net.weight.dtype == paddle.float16
    assert net.weight.grad.dtype == paddle.float32
    np.testing.assert_allclose(net.weight.grad.numpy(), np.full((3, 2), 8.0, np.float32))


@pytest.mark.parametrize("kw,err", [
    ({"level": "O3"}, ValueError), ({"level": "OD"}, ValueError),
    ({"level": "O2", "dtype": "float32"}, ValueError),
    ({"level": "O2", "save_dtype": "int8"}, ValueError),
])
def test_bad_arguments(kw, err):
    with pytest.raises(err):
        paddle.amp.decorate(_net(), **kw)


def test_non_layer_and_bad_optimizer():
    with pytest.raises(TypeError):
        paddle.amp.decorate("model", level="O2")
    with pytest.raises(TypeError):
        paddle.amp.decorate(_net(), optimizers="opt", level="O2")


def test_after_data_parallel_is_an_error():
    class DataParallel(nn.Layer):  # stands for paddle.DataParallel: same class name
        def __init__(self, layer):
            super().__init__()
            self._layers = layer

    with pytest.raises(RuntimeError, match="first use paddle.amp.decorate"):
        paddle.amp.decorate(DataParallel(_net()), level="O2")
