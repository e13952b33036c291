"""Training under AMP: a small LeNet-like net reaches the float32 accuracy under O1 (float16
and bfloat16) and O2, through the plain loop and through Model.prepare(amp_configs=...)."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle

nn = paddle.nn
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _data(n=256, seed=0):
    r = np.random.default_rng(seed)
    y = r.integers(0, 2, n)
    x = r.normal(0, 0.5, (n, 1, 12, 12)).astype(np.float32)
    x[y == 0, :, :6] += 1.0  # class 0: bright top half; class 1: bright bottom half
    x[y == 1, :, 6:] += 1.0
    return x, y.astype(np.int64)


def _lenet():
    paddle.seed(0)
    return nn.Sequential(nn.Conv2D(1, 4, 3), nn.ReLU(), nn.MaxPool2D(2), nn.Conv2D(4, 8, 3),
                         nn.BatchNorm2D(8), nn.ReLU(), nn.Flatten(), nn.Linear(72, 2))


def _accuracy(net, x, y, **amp):
    net.eval()
    with paddle.no_grad(), paddle.amp.auto_cast(**amp):
        logits = net(paddle.to_tensor(x))
    net.train()
    return float((logits.astype("float32").numpy().argmax(1) == y).mean())


def _train(amp=None, o2=False, dtype="float16", steps=40):
    x, y = _data()
    net = _lenet()
    opt = paddle.optimizer.Adam(1e-2, parameters=net.parameters())
    if o2:
        net, opt = paddle.amp.decorate(net, opt, level="O2", dtype=dtype)
    kw = {"enable": amp is not None, "level": amp or "O1", "dtype": dtype}
    scaler = paddle.amp.GradScaler(init_loss_scaling=1024.0)
    for i in range(steps):
        idx = np.arange(i * 32, i * 32 + 32) % len(x)
        xb = paddle.to_tensor(x[idx])
        if o2:
            xb = xb.astype(dtype)
        with paddle.amp.auto_cast(**kw):
            loss = nn.functional.cross_entropy(net(xb), paddle.to_tensor(y[idx][:, None]))
        if amp is not None:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
        opt.clear_grad()
    xt, yt = _data(200, seed=1)
    if o2:
        xt = xt.astype(np.float16 if dtype == "float16" else np.float32)
    return _accuracy(net, xt, yt, **kw), net, loss


@pytest.fixture(scope="module")
def fp32_accuracy():
    acc, _, _ = _train()
    assert acc > 0.9
    return acc


def test_o1_float16_matches_float32(fp32_accuracy):
    acc, net, loss = _train("O1")
    assert net[0].weight.dtype == paddle.float32 and loss.dtype == paddle.float32
    assert acc >= fp32_accuracy - 0.03


def test_o1_bfloat16_matches_float32(fp32_accuracy):
    acc, _, _ = _train("O1", dtype="bfloat16")
    assert acc >= fp32_accuracy - 0.03


def test_o2_float16_matches_float32(fp32_accuracy):
    acc, net, _ = _train("O2", o2=True)
    assert net[0].weight.dtype == paddle.float16 and net[4].weight.dtype == paddle.float32
    assert acc >= fp32_accuracy - 0.05


class _DS(paddle.io.Dataset):
    def __init__(self, n, seed):
        self.x, self.y = _data(n, seed)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i:i + 1]


@pytest.mark.parametrize("cfg", ["O1", {"level": "O1", "init_loss_scaling": 256.0},
                                 {"dtype": "bfloat16"}])
def test_model_prepare_amp_configs(cfg):
    net = _lenet()
    m = paddle.Model(net)
    m.prepare(paddle.optimizer.Adam(1e-2, parameters=net.parameters()), nn.CrossEntropyLoss(),
              paddle.metric.Accuracy(), amp_configs=cfg)
    m.fit(_DS(256, 0), batch_size=32, epochs=2, verbose=0)
    res = m.evaluate(_DS(200, 1), batch_size=50, verbose=0)
    assert res["acc"] > 0.9


def test_model_save_writes_scaler_state(tmp_path):
    net = _lenet()
    m = paddle.Model(net)
    m.prepare(paddle.optimizer.Adam(1e-2, parameters=net.parameters()), nn.CrossEntropyLoss(),
              amp_configs={"level": "O1", "init_loss_scaling": 128.0})
    m.fit(_DS(64, 0), batch_size=32, epochs=1, verbose=0)
    m.save(str(tmp_path / "ck"))
    assert (tmp_path / "ck.pdscaler").exists()
    m2 = paddle.Model(_lenet())
    m2.prepare(paddle.optimizer.Adam(1e-2, parameters=m2.network.parameters()),
               nn.CrossEntropyLoss(), amp_configs={"level": "O1", "init_loss_scaling": 2.0})
    m2.load(str(tmp_path / "ck"))
    np.testing.assert_array_equal(m2._scaler.state_dict()["scale"], [128.0])
