"""Model.save writes .pdparams/.pdopt as one checkpoint: a process killed between the two renames
(SIGKILL, a real signal), a failing save, a stale .pdopt beside newer parameters; the files stay
readable by real Paddle. EarlyStopping(restore_best_weights=True)."""

from __future__ import annotations

import os
import pickle
import signal
import sys

import numpy as np
import pytest

import paddle_hl as paddle

from ._helpers import run

SAVE_TWICE = """
import os, signal, sys
import numpy as np
import paddle_hl as paddle

path = sys.argv[1]
paddle.seed(0)
net = paddle.nn.Linear(3, 2)
model = paddle.Model(net)
model.prepare(paddle.optimizer.Adam(parameters=net.parameters()), paddle.nn.MSELoss())
x, y = np.ones([4, 3], "float32"), np.zeros([4, 2], "float32")
model.train_batch([x], [y])
model.save(path)                      # the first, complete checkpoint
np.save(path + ".first.npy", net.weight.numpy())
model.train_batch([x], [y])
real_replace = os.replace

def replace(src, dst):
    if str(dst).endswith(".pdparams"):  # the .pdopt of the second save is already in place
        os.kill(os.getpid(), signal.SIGKILL)
    return real_replace(src, dst)

os.replace = replace
model.save(path)
"""


def _model(seed=0):
    paddle.seed(seed)
    net = paddle.nn.Linear(3, 2)
    model = paddle.Model(net)
    model.prepare(paddle.optimizer.Adam(parameters=net.parameters()), paddle.nn.MSELoss())
    return model, net


def _train(model, steps=1):
    x, y = np.ones([4, 3], "float32"), np.zeros([4, 2], "float32")
    for _ in range(steps):
        model.train_batch([x], [y])


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_kill_between_the_two_files_is_detected_on_load(tmp_path):
    path = str(tmp_path / "ckpt" / "model")
    res = run(SAVE_TWICE, path, timeout=120)
    assert res.returncode == -signal.SIGKILL, res.stderr
    assert [n for n in os.listdir(tmp_path / "ckpt") if n.endswith(".tmp")] != []  # killed
    model, net = _model(seed=1)
    with pytest.raises(RuntimeError, match=r"model\.pdparams and .*model\.pdopt come from "
                                           r"different saves"):
        model.load(path)
    # the parameters alone are the first save's, complete and usable
    model.load(path, reset_optimizer=True)
    np.testing.assert_array_equal(net.weight.numpy(), np.load(path + ".first.npy"))


def test_failing_save_leaves_the_previous_pair_untouched(tmp_path, monkeypatch):
    path = str(tmp_path / "m")
    model, net = _model()
    _train(model)
    model.save(path)
    saved = {s: open(path + s, "rb").read() for s in (".pdparams", ".pdopt")}
    _train(model)

    def broken(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(pickle, "dump", broken)
    with pytest.raises(OSError, match="disk full"):
        model.save(path)
    monkeypatch.undo()
    for s, data in saved.items():
        assert open(path + s, "rb").read() == data
    assert sorted(os.listdir(tmp_path)) == ["m.pdopt", "m.pdparams"]  # no temporaries left
    model2, _ = _model(seed=3)
    model2.load(path)


def test_stale_pdopt_beside_newer_parameters(tmp_path):
    path = str(tmp_path / "m")
    model, net = _model()
    _train(model)
    model.save(path)
    old_opt = open(path + ".pdopt", "rb").read()
    _train(model)
    model.save(path)
    with open(path + ".pdopt", "wb") as f:  # an older optimizer file beside newer parameters
        f.write(old_opt)
    model2, net2 = _model(seed=2)
    with pytest.raises(RuntimeError, match="different saves"):
        model2.load(path)
    model2.load(path, reset_optimizer=True)
    np.testing.assert_array_equal(net2.weight.numpy(), net.weight.numpy())


def test_matching_pair_round_trips(tmp_path):
    path = str(tmp_path / "m")
    model, net = _model()
    _train(model, 2)
    model.save(path)
    model2, net2 = _model(seed=5)
    model2.load(path)
    np.testing.assert_array_equal(net2.weight.numpy(), net.weight.numpy())
    # the optimizer state came along: one more step lands on the same weights
    _train(model)
    _train(model2)
    np.testing.assert_allclose(net2.weight.numpy(), net.weight.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parity
def test_real_paddle_reads_both_files(tmp_path, pd):
    path = str(tmp_path / "m")
    model, net = _model()
    _train(model, 2)
    model.save(path)
    params = pd.load(path + ".pdparams")
    opt = pd.load(path + ".pdopt")
    # the pairing id follows the pickle, where paddle.load never reads
    assert sorted(params) == ["bias", "weight"]
    np.testing.assert_allclose(params["weight"].numpy(), net.weight.numpy())
    assert not any("save id" in str(k) for k in opt)
    pnet = pd.nn.Linear(3, 2)
    pnet.set_state_dict(params)
    np.testing.assert_allclose(pnet.weight.numpy(), net.weight.numpy())
    popt = pd.optimizer.Adam(parameters=pnet.parameters())
    popt.set_state_dict(opt)
    names = pd.load(path + ".pdparams", keep_name_table=True)["StructuredToParameterName@@"]
    assert names["weight"] == net.weight.name


class _Record(paddle.callbacks.Callback):
    """Keeps the network's weights and the eval loss after every evaluation."""

    def __init__(self):
        super().__init__()
        self.history = []

    def on_eval_end(self, logs=None):
        self.history.append((float(np.ravel(logs["loss"])[0]),
                             self.model.network.weight.numpy().copy()))


class _Data(paddle.io.Dataset):
    def __init__(self):
        rng = np.random.default_rng(0)
        self.x = rng.standard_normal((32, 3)).astype("float32")
        self.y = (self.x @ np.array([[1.0], [-2.0], [0.5]], "float32")).astype("float32")

    def __getitem__(self, i):
        return self.x[i], self.y[i]

    def __len__(self):
        return 32


@pytest.mark.parametrize("restore", [True, False])
def test_early_stopping_restores_best_weights(tmp_path, restore):
    paddle.seed(0)
    net = paddle.nn.Linear(3, 1)
    model = paddle.Model(net)
    # a learning rate this large makes the loss grow: the best evaluation is the first one
    model.prepare(paddle.optimizer.SGD(1.5, parameters=net.parameters()), paddle.nn.MSELoss())
    record = _Record()
    stop = paddle.callbacks.EarlyStopping("loss", mode="min", patience=2, verbose=0,
                                          save_best_model=False, restore_best_weights=restore)
    model.fit(_Data(), eval_data=_Data(), batch_size=8, epochs=6, verbose=0,
              callbacks=[record, stop])
    losses = [loss for loss, _ in record.history]
    best = int(np.argmin(losses))
    assert best < len(losses) - 1  # the run went past its best evaluation
    final = net.weight.numpy()
    if restore:
        np.testing.assert_array_equal(final, record.history[best][1])
    else:
        np.testing.assert_array_equal(final, record.history[-1][1])


def test_early_stopping_default_is_paddles():
    assert paddle.callbacks.EarlyStopping().restore_best_weights is False
