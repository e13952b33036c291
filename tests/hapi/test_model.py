"""paddle.Model: fit/evaluate/predict, batches, callbacks order, save/load/resume, errors,
compared with Paddle 2.6.2 where it runs the same computation."""

from __future__ import annotations

import os

import numpy as np
import pytest

import paddle_hl as paddle


def _data(n=48, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 4)).astype("float32")
    y = (x[:, :1] + x[:, 1:2] > 0).astype("int64")
    return x, y


def _dataset(lib, n=48, seed=0):
    x, y = _data(n, seed)

    class D(lib.io.Dataset):
        def __len__(self):
            return n

        def __getitem__(self, i):
            return x[i], y[i]

    return D()


def _net(lib, seed=3):
    rng = np.random.default_rng(seed)
    net = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 2))
    state = {k: rng.standard_normal(v.shape).astype("float32") * 0.5
             for k, v in net.state_dict().items()}
    net.set_state_dict({k: lib.to_tensor(v) for k, v in state.items()})
    return net


def _model(lib, metrics=True, opt="Adam"):
    net = _net(lib)
    m = lib.Model(net)
    o = getattr(lib.optimizer, opt)(learning_rate=0.05, parameters=m.parameters())
    m.prepare(o, lib.nn.CrossEntropyLoss(),
              lib.metric.Accuracy() if metrics else None)
    return m


class Spy:
    """Records every callback hook with its logs' keys."""

    def __init__(self, base):
        class _Spy(base):
            def __init__(s):
                super().__init__()
                s.calls = []

            def _rec(s, name, *args):
                logs = args[-1] if args else None
                s.calls.append((name, sorted((logs or {}).keys())))

        for hook in ["on_train_begin", "on_train_end", "on_eval_begin", "on_eval_end",
                     "on_predict_begin", "on_predict_end", "on_epoch_begin", "on_epoch_end",
                     "on_train_batch_begin", "on_train_batch_end", "on_eval_batch_begin",
                     "on_eval_batch_end", "on_predict_batch_begin", "on_predict_batch_end"]:
            setattr(_Spy, hook, (lambda h: lambda s, *a: s._rec(h, *a))(hook))
        self.cls = _Spy


class LossLog:
    def __init__(self, base):
        class _L(base):
            def __init__(s):
                super().__init__()
                s.losses = []

            def on_train_batch_end(s, step, logs=None):
                s.losses.append(float(np.asarray(logs["loss"]).reshape(-1)[0]))

        self.cls = _L


@pytest.mark.parity
def test_fit_loss_history_and_evaluate_parity(pd):
    res = []
    for lib in (paddle, pd):
        m = _model(lib)
        log = LossLog(lib.callbacks.Callback).cls()
        m.fit(_dataset(lib), batch_size=8, epochs=2, shuffle=False, verbose=0,
              callbacks=[log])
        ev = m.evaluate(_dataset(lib, seed=1), batch_size=16, verbose=0)
        pr = m.predict(_dataset(lib, seed=1), batch_size=16, verbose=0, stack_outputs=True)
        res.append((log.losses, ev, pr))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-4, atol=1e-5)
    assert list(res[0][1]) == list(res[1][1]) == ["loss", "acc"]
    np.testing.assert_allclose(res[0][1]["loss"], res[1][1]["loss"], rtol=1e-4)
    assert res[0][1]["acc"] == pytest.approx(res[1][1]["acc"])
    np.testing.assert_allclose(res[0][2][0], res[1][2][0], rtol=1e-4, atol=1e-5)


@pytest.mark.parity
def test_callback_order_matches_paddle(pd):
    calls = []
    for lib in (paddle, pd):
        spy = Spy(lib.callbacks.Callback).cls()
        m = _model(lib)
        m.fit(_dataset(lib, 16), _dataset(lib, 8), batch_size=8, epochs=2, verbose=0,
              callbacks=[spy])
        m.evaluate(_dataset(lib, 8), batch_size=8, verbose=0, callbacks=[spy])
        m.predict(_dataset(lib, 8), batch_size=8, verbose=0, callbacks=[spy])
        calls.append([c[0] for c in spy.calls])
    assert calls[0] == calls[1]


@pytest.mark.parity
def test_train_eval_predict_batch_parity(pd):
    x, y = _data(6)
    out = []
    for lib in (paddle, pd):
        m = _model(lib)
        tb = m.train_batch([x], [y])
        eb = m.eval_batch([x], [y])
        pb = m.predict_batch([x])
        out.append((tb, eb, pb))
    (tl, tm), (el, em), pb = out[0]
    (tl2, tm2), (el2, em2), pb2 = out[1]
    assert isinstance(tl, list) and np.asarray(tl[0]).shape == ()
    np.testing.assert_allclose(tl, tl2, rtol=1e-5)
    np.testing.assert_allclose(el, el2, rtol=1e-5)
    assert tm == pytest.approx(tm2) and em == pytest.approx(em2)
    np.testing.assert_allclose(pb[0], pb2[0], rtol=1e-5, atol=1e-6)


def test_history_and_num_iters():
    m = _model(paddle)
    m.fit(_dataset(paddle), batch_size=8, epochs=3, verbose=0, num_iters=8)
    steps = m.history["step"]
    assert len(steps) == 8 and steps[-1]["global_step"] == 8
    assert {"loss", "acc", "lr", "time", "epoch"} <= set(steps[0])
    assert len(m.history["epoch"]) == 2


def test_eval_freq_and_early_stopping(tmp_path):
    m = _model(paddle)
    es = paddle.callbacks.EarlyStopping(monitor="loss", patience=0, min_delta=10,
                                        verbose=0)
    m.fit(_dataset(paddle), _dataset(paddle, 16), batch_size=8, epochs=5, verbose=0,
          callbacks=[es], save_dir=str(tmp_path))
    assert len(m.history["epoch"]) < 5
    assert os.path.exists(tmp_path / "best_model.pdparams")


def test_early_stopping_without_eval_data_warns():
    m = _model(paddle)
    with pytest.warns(UserWarning, match="EarlyStopping needs validation data"):
        m.fit(_dataset(paddle, 8), batch_size=8, epochs=1, verbose=0,
              callbacks=[paddle.callbacks.EarlyStopping()])


def test_save_load_resume_continues_same_curve(tmp_path):
    full = _model(paddle)
    log_full = LossLog(paddle.callbacks.Callback).cls()
    full.fit(_dataset(paddle), batch_size=8, epochs=2, shuffle=False, verbose=0,
             callbacks=[log_full])

    first = _model(paddle)
    first.fit(_dataset(paddle), batch_size=8, epochs=1, shuffle=False, verbose=0,
              save_dir=str(tmp_path))
    assert os.path.exists(tmp_path / "0.pdparams") and os.path.exists(tmp_path / "0.pdopt")
    assert os.path.exists(tmp_path / "final.pdparams")
    resumed = _model(paddle)
    resumed.load(str(tmp_path / "final"))
    log = LossLog(paddle.callbacks.Callback).cls()
    resumed.fit(_dataset(paddle), batch_size=8, epochs=1, shuffle=False, verbose=0,
                callbacks=[log])
    np.testing.assert_allclose(log.losses, log_full.losses[len(log.losses):], rtol=1e-5)


def test_save_file_names_and_inference_error(tmp_path):
    m = _model(paddle, opt="SGD")
    path = str(tmp_path / "ckpt" / "x")
    m.save(path)
    assert sorted(os.listdir(tmp_path / "ckpt")) == ["x.pdparams"]  # SGD has no state
    with pytest.raises(RuntimeError, match="Saving inference model needs 'inputs'"):
        paddle.Model(_net(paddle)).save(str(tmp_path / "inf"), training=False)


@pytest.mark.parametrize("with_inputs", [True, False])
def test_save_for_inference_writes_a_jit_model(tmp_path, with_inputs):
    """save(training=False) writes Paddle's inference files, loadable without the class."""
    net = _net(paddle)
    inputs = [paddle.static.InputSpec([None, 4], "float32", "x")] if with_inputs else None
    m = paddle.Model(net, inputs=inputs)
    x = np.random.default_rng(0).standard_normal((3, 4)).astype("float32")
    if not with_inputs:
        m.predict_batch([x])  # the shapes come from the batches run
    m.save(str(tmp_path / "inf"), training=False)
    assert sorted(os.listdir(tmp_path)) == ["inf.pdiparams", "inf.pdiparams.info", "inf.pdmodel"]
    loaded = paddle.jit.load(str(tmp_path / "inf"))
    net.eval()
    np.testing.assert_allclose(loaded(paddle.to_tensor(x)).numpy(),
                               net(paddle.to_tensor(x)).numpy(), rtol=1e-6)


@pytest.mark.parity
def test_save_for_inference_file_names_parity(tmp_path, pd):
    names = {}
    for lib in (paddle, pd):
        m = lib.Model(_net(lib), inputs=[lib.static.InputSpec([None, 4], "float32", "x")])
        d = tmp_path / lib.__name__
        m.save(str(d / "inf"), training=False)
        names[lib.__name__] = sorted(os.listdir(d))
    assert names["paddle_hl"] == names["paddle"]


def test_load_errors_and_skip_mismatch(tmp_path):
    m = _model(paddle)
    m.save(str(tmp_path / "a"))
    other = paddle.Model(paddle.nn.Sequential(paddle.nn.Linear(4, 3)))
    with pytest.raises(ValueError):
        other.load(str(tmp_path / "a"))
    with pytest.warns(UserWarning):
        other.load(str(tmp_path / "a.pdparams"), skip_mismatch=True)
    m2 = _model(paddle)
    m2.load(str(tmp_path / "a.pdopt"), reset_optimizer=True)
    np.testing.assert_array_equal(m2.network[0].weight.numpy(), m.network[0].weight.numpy())


def test_prepare_validation():
    m = paddle.Model(_net(paddle))
    with pytest.raises(TypeError, match="loss"):
        m.prepare(loss=3)
    with pytest.raises(AssertionError):
        m.prepare(metrics=[object()])
    with pytest.raises(ValueError, match="amp_level"):
        m.prepare(amp_configs="O3")
    with pytest.raises(ValueError, match="use_pure_fp16"):
        m.prepare(amp_configs={"use_pure_fp16": True})
    with pytest.raises(ValueError, match="Unsupported"):
        m.prepare(amp_configs={"level": "O1", "bogus": 1})
    with pytest.raises(ValueError, match="use_fp16_guard"):
        m.prepare(amp_configs={"use_fp16_guard": True})


def test_nan_loss_stops_with_step(tmp_path):
    class Bad(paddle.nn.Layer):
        def forward(self, out, label):
            return paddle.nn.functional.cross_entropy(out, label) * float("nan")

    m = paddle.Model(_net(paddle))
    m.prepare(paddle.optimizer.SGD(0.1, parameters=m.parameters()), Bad())
    with pytest.raises(FloatingPointError, match="epoch 0, step 0"):
        m.fit(_dataset(paddle), batch_size=8, verbose=0)


def test_shape_mismatch_names_outputs_and_labels():
    m = paddle.Model(_net(paddle))
    m.prepare(paddle.optimizer.SGD(0.1, parameters=m.parameters()), paddle.nn.MSELoss())
    x, y = _data(4)
    with pytest.raises(ValueError, match=r"outputs .*\[4, 2\].*labels .*\[4, 3\]"):
        m.train_batch([x], [np.zeros((4, 3), "float32")])


def test_unwritable_save_dir_fails_before_training(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    m = _model(paddle)
    with pytest.raises(OSError, match="not writable"):
        m.fit(_dataset(paddle), save_dir=str(blocker / "sub"), verbose=0)
    assert m.history is None


def test_accumulate_grad_batches_equals_bigger_batch():
    def run(bs, acc):
        m = _model(paddle, metrics=False, opt="SGD")
        m.fit(_dataset(paddle, 16), batch_size=bs, epochs=1, shuffle=False, verbose=0,
              accumulate_grad_batches=acc)
        return m.network[0].weight.numpy()

    # accumulating 2 batches of 8 sums the gradients of the two means
    w_acc = run(8, 2)
    m = _model(paddle, metrics=False, opt="SGD")
    x, y = _data(16)
    m.train_batch([x[:8]], [y[:8]], update=False)
    m.train_batch([x[8:]], [y[8:]], update=True)
    np.testing.assert_allclose(w_acc, m.network[0].weight.numpy(), rtol=1e-6)


def test_text_progress_output(capsys):
    m = _model(paddle)
    m.fit(_dataset(paddle, 16), _dataset(paddle, 8), batch_size=8, epochs=1, verbose=2,
          log_freq=1)
    out = capsys.readouterr().out
    assert "Epoch 1/1" in out and "step 2/2 - loss:" in out and "acc:" in out
    assert "Eval begin..." in out and "Eval samples: 8" in out


def test_multiple_inputs_and_losses():
    class Two(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.a = paddle.nn.Linear(2, 1)
            self.b = paddle.nn.Linear(3, 1)

        def forward(self, x1, x2):
            return self.a(x1), self.b(x2)

    def loss(o1, o2, y):
        return [((o1 - y) ** 2).mean(), ((o2 - y) ** 2).mean()]

    class D(paddle.io.Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, i):
            return (np.ones(2, "float32") * i, np.ones(3, "float32"),
                    np.array([i], "float32"))

    m = paddle.Model(Two())
    m.prepare(paddle.optimizer.SGD(0.01, parameters=m.parameters()), loss)
    m.fit(D(), batch_size=4, epochs=1, verbose=0)
    ev = m.evaluate(D(), batch_size=4, verbose=0)
    assert len(ev["loss"]) == 2
    preds = m.predict(D(), batch_size=4, verbose=0)
    assert len(preds) == 2 and preds[0][0].shape == (4, 1)
