"""The data-to-diagnosis tools: ``show_batch`` (de-normalisation, layouts, loaders, text),
``Model.lr_find`` (the range test, its suggestion rules and the bit-for-bit restore) and
``interpret`` (confusion matrix and per-class metrics against a NumPy reference, regression
residuals), with their HTML and text forms."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest
from paddle_hl.vision.transforms import Compose, Normalize, Transpose

import paddle_hl as paddle
from paddle_hl.hapi import diagnosis, lr_range
from paddle_hl.notebook import _env, interpret, lr_find, show_batch

HARD_GREYS = re.compile(r"(?<![-\w(,])#(222|444|666|888|ccc|ddd|eee|f3f3f3|fafafa)\b")


class _Pairs(paddle.io.Dataset):
    """(x, label) samples from arrays, with an optional transform and class names."""

    def __init__(self, xs, ys, transform=None, classes=None):
        self.xs, self.ys, self.transform = xs, ys, transform
        if classes is not None:
            self.classes = classes

    def __len__(self):
        return len(self.xs)

    def __getitem__(self, i):
        x = self.xs[i]
        return (self.transform(x) if self.transform else x), self.ys[i]


@pytest.fixture
def terminal(monkeypatch):
    monkeypatch.setattr(_env, "_IN_NOTEBOOK", False)


@pytest.fixture
def shown(monkeypatch):
    pytest.importorskip("IPython")
    import IPython.display

    out = []
    monkeypatch.setattr(_env, "_IN_NOTEBOOK", True)
    monkeypatch.setattr(IPython.display, "display", lambda *objs, **kw: out.extend(objs))
    return out


# ---------------------------------------------------------------------- show_batch

def test_show_batch_inverts_the_datasets_normalize_hwc_rgb_uint8():
    rng = np.random.default_rng(0)
    raw = rng.integers(0, 256, (5, 6, 7, 3), dtype=np.uint8)
    mean, std = [120.0, 110.0, 100.0], [60.0, 50.0, 40.0]
    t = Compose([Normalize(mean=mean, std=std, data_format="HWC"), Transpose()])
    ds = _Pairs(raw, np.arange(5, dtype=np.int64), t, classes=list("abcde"))
    view = show_batch(ds, n=4, show=False)
    assert view.kind == "image" and len(view.images) == 4
    assert ds[0][0].shape == (3, 6, 7)  # the model sees CHW floats
    for i in range(4):
        assert view.images[i].shape == (6, 7, 3)
        np.testing.assert_allclose(view.images[i], raw[i] / 255.0, atol=1e-5)
    assert view.titles == ["a", "b", "c", "d"]
    np.testing.assert_array_equal(view.normalize[0], mean)
    np.testing.assert_array_equal(view.normalize[1], std)


def test_show_batch_explicit_mean_std_chw_unit_range_and_grey():
    rng = np.random.default_rng(1)
    img = rng.random((3, 3, 8, 8)).astype(np.float32)  # [N, C, H, W] in [0, 1]
    mean, std = np.array([0.5, 0.4, 0.3]), np.array([0.2, 0.25, 0.3])
    normed = (img - mean[:, None, None]) / std[:, None, None]
    view = show_batch(_Pairs(normed, np.zeros(3, np.int64)), mean=mean, std=std, show=False)
    np.testing.assert_allclose(view.images[1], img[1].transpose(1, 2, 0), atol=1e-6)
    # no statistics known: values outside [0, 1] are rescaled min-max for display
    plain = show_batch(_Pairs(normed, np.zeros(3, np.int64)), show=False)
    assert plain.images[0].min() == 0.0 and plain.images[0].max() == 1.0
    # one channel, 2-D, one-value Normalize
    grey = rng.integers(0, 256, (2, 5, 4), dtype=np.uint8)
    ds = _Pairs(grey, np.array([3, 7]), Normalize([127.5], [127.5], data_format="CHW"))
    view = show_batch(ds, show=False)
    assert ds[0][0].shape == (1, 5, 4) and view.images[0].shape == (5, 4)
    np.testing.assert_allclose(view.images[1], grey[1] / 255.0, atol=1e-6)
    assert view.titles == ["3", "7"]
    # a scalar Normalize broadcasts a 2-D image to three equal channels, as in Paddle
    ds = _Pairs(grey, np.array([3, 7]), Normalize(127.5, 127.5, data_format="CHW"))
    view = show_batch(ds, show=False)
    assert ds[0][0].shape == (3, 5, 4) and view.images[0].shape == (5, 4, 3)
    np.testing.assert_allclose(view.images[0], np.repeat(grey[0, :, :, None] / 255.0, 3, 2),
                               atol=1e-6)


def test_show_batch_on_a_loader_shows_one_real_batch():
    raw = np.arange(10 * 4 * 4, dtype=np.float32).reshape(10, 1, 4, 4) / 160.0
    ds = _Pairs(raw, np.arange(10).reshape(10, 1).astype(np.int64))
    loader = paddle.io.DataLoader(ds, batch_size=3, shuffle=False)
    view = show_batch(loader, n=16, show=False)
    assert view.from_loader and len(view.images) == 3 and view.titles == ["0", "1", "2"]
    np.testing.assert_allclose(view.images[2], raw[2, 0], atol=1e-7)


def test_show_batch_decodes_text_and_tabulates_arrays(terminal, capsys):
    class _Text(_Pairs):
        vocab = ["<pad>", "the", "cat", "sat"]

        def decode(self, ids):
            return " ".join(self.vocab[i] for i in ids if i)

    ds = _Text([np.array([1, 2, 3, 0]), np.array([2, 3, 0, 0])], np.array([1, 0]),
               classes=["neg", "pos"])
    view = show_batch(ds, show=False)
    assert view.kind == "text" and view.texts == ["the cat sat", "cat sat"]
    assert view.titles == ["pos", "neg"]
    show_batch(ds)
    out = capsys.readouterr().out
    assert "the cat sat" in out and "<" not in out.replace("<pad>", "")
    vec = show_batch(_Pairs(np.ones((2, 5), np.float32)[:, :, None, None].reshape(2, 5),
                            np.zeros(2)), show=False)
    assert vec.kind in ("array", "image")


def test_show_batch_audio_samples_and_graphs():
    from paddle_hl.audio._display import AudioSample

    class _Audio(paddle.io.Dataset):
        label_list = ["dog", "rain"]

        def __len__(self):
            return 3

        def __getitem__(self, i):
            wave = np.sin(np.arange(4000) * (i + 1) * 0.05).astype(np.float32)
            feat = np.abs(np.random.default_rng(i).standard_normal((16, 9))).astype(np.float32)
            return AudioSample((feat, np.array(i % 2)), {
                "waveform": wave, "sr": 8000, "label_name": self.label_list[i % 2],
                "feat_type": "melspectrogram"})

    view = show_batch(_Audio(), show=False)
    assert view.kind == "audio" and view.titles == ["dog", "rain", "dog"]
    assert view._repr_html_().count("<audio") == 3
    assert "0.50 s" in view.text and "<" not in view.text

    class _Graphs(paddle.io.Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return ({"x": np.ones((6, 2), np.float32),
                     "edge_index": np.array([[0, 1, 2, 3], [1, 2, 3, 4]])}, np.array([i]))

    graphs = show_batch(_Graphs(), show=False)
    assert graphs.kind == "graph" and graphs.titles == ["0", "1"]
    assert re.search(r"0\s+6\s+4", graphs.text)  # 6 nodes (from x), 4 edges


def test_show_batch_views_html_and_text(shown):
    pytest.importorskip("matplotlib")
    raw = np.random.default_rng(2).integers(0, 256, (4, 8, 8), dtype=np.uint8)
    assert show_batch(_Pairs(raw, np.arange(4))) is None
    (view,) = shown
    markup = view._repr_html_()
    assert "phl-batch" in markup and "data:image/png;base64" in markup
    assert "var(--jp-ui-font-color" in markup and not HARD_GREYS.search(markup)
    assert "<img" not in repr(view) and "4 images" in repr(view)


def test_show_batch_errors_name_the_argument():
    with pytest.raises(ValueError, match="show_batch: n must be a positive int"):
        show_batch(_Pairs(np.zeros((2, 4, 4)), [0, 1]), n=0)
    with pytest.raises(ValueError, match="show_batch: mean has 2 values for an image with 3"):
        show_batch(_Pairs(np.zeros((1, 3, 4, 4)), [0]), mean=[1, 2], std=[1, 1], show=False)


# ---------------------------------------------------------------------- lr_find

def test_smoothing_and_suggestion_rules():
    losses = [3.0, 1.0, 2.0]
    ref, avg = [], 0.0
    for i, v in enumerate(losses, 1):
        avg = 0.9 * avg + 0.1 * v
        ref.append(avg / (1 - 0.9 ** i))
    np.testing.assert_allclose(lr_range.smooth_losses(losses, 0.9), ref, rtol=1e-15)
    assert lr_range.smooth_losses([2.0], 0.98)[0] == pytest.approx(2.0)  # bias-corrected
    lrs = np.logspace(-6, 0, 61)
    x = np.log10(lrs)
    # a fall from 2.0 to 0.5 centred on 10^-3.5, then a climb past 10^-1.5
    loss = 2.0 - 1.5 / (1 + np.exp(-(x + 3.5) * 3)) + np.where(x > -1.5, (x + 1.5) ** 2 * 4,
                                                                 0)
    lr, reason, i = lr_range.suggest_lr(lrs, loss, "steepest")
    assert lr == pytest.approx(10 ** -3.5, rel=0.3) and "steepest" in reason
    lr, reason, _ = lr_range.suggest_lr(lrs, loss, "min/10")
    best = lrs[np.argmin(loss)]
    assert lr == pytest.approx(best / 10) and "tenth" in reason
    # the middle of the descent: 20% and 80% of the drop are reached symmetrically about the
    # centre of the logistic fall
    lr, reason, i = lr_range.suggest_lr(lrs, loss, "middle")
    assert lr == pytest.approx(10 ** -3.5, rel=0.25)
    assert "middle of the loss's descent" in reason
    assert abs(np.log10(lrs[i] / lr)) <= 0.05 + 1e-9  # the nearest point (0.1 decade apart)
    # a curve that only rises has no descent: a tenth of the rate at its minimum
    lr, reason, _ = lr_range.suggest_lr(lrs, 1.6 + x / 10, "middle")
    assert "tenth" in reason
    with pytest.raises(ValueError, match="suggest_lr: rule must be one of"):
        lr_range.suggest_lr(lrs, loss, "max")


def _small_model(scheduler=False, fresh=False):
    paddle.seed(3)
    net = paddle.nn.Sequential(paddle.nn.Linear(6, 16), paddle.nn.BatchNorm1D(16),
                               paddle.nn.ReLU(), paddle.nn.Dropout(0.3), paddle.nn.Linear(16, 3))
    lr = paddle.optimizer.lr.StepDecay(0.01, step_size=2, gamma=0.5) if scheduler else 0.01
    model = paddle.Model(net)
    model.prepare(paddle.optimizer.Adam(learning_rate=lr, parameters=net.parameters()),
                  paddle.nn.CrossEntropyLoss(), paddle.metric.Accuracy())
    rng = np.random.default_rng(4)
    xs = rng.standard_normal((96, 6)).astype(np.float32)
    ys = (xs[:, :3].argmax(axis=1)).astype(np.int64).reshape(-1, 1)
    data = _Pairs(xs, ys)
    if not fresh:
        cbs = [paddle.callbacks.LRScheduler(by_step=True)] if scheduler else None
        model.fit(data, batch_size=16, epochs=1, verbose=0, callbacks=cbs)
    return model, data


def _state(model):
    opt = model._optimizer
    st = {"param:" + k: v.numpy().copy() for k, v in model.network.state_dict().items()}
    for k, v in opt.state_dict().items():
        if k == "LR_Scheduler":
            st[k] = dict(v)
        else:
            st["opt:" + k] = v.numpy().copy()
    st["step_count"] = opt._step_count
    st["lr"] = opt.get_lr()
    st["rng"] = paddle.get_rng_state()[0]._state
    st["np"] = np.random.get_state()[1].copy()
    st["py"] = random.getstate()
    st["modes"] = [layer.training for layer in model.network.sublayers(include_self=True)]
    return st


def _assert_same(a, b):
    assert a.keys() == b.keys()
    for k in a:
        if isinstance(a[k], np.ndarray):
            assert a[k].dtype == b[k].dtype and a[k].shape == b[k].shape, k
            assert a[k].tobytes() == b[k].tobytes(), f"{k} changed"
        else:
            assert a[k] == b[k], k


@pytest.mark.parametrize("scheduler", [False, True], ids=["float-lr", "scheduler"])
def test_lr_find_restores_everything_bit_for_bit(scheduler, terminal, capsys):
    model, data = _small_model(scheduler)
    model.network.eval()  # a mode the test must not flip to train
    before = _state(model)
    assert any(k.startswith("opt:") and "moment1" in k for k in before)
    sched = model._optimizer._learning_rate
    suggestion = model.lr_find(data, batch_size=16, num_iters=30, start_lr=1e-5, end_lr=1.0)
    after = _state(model)
    _assert_same(before, after)
    assert model._optimizer._learning_rate is sched  # the user's scheduler object, untouched
    res = model.lr_find_result
    assert suggestion == res.suggestion and res.lrs[0] == 1e-5 and 2 <= len(res.lrs) <= 30
    assert np.all(np.diff(res.lrs) > 0)
    assert "suggested learning rate" in capsys.readouterr().out
    # and training afterwards is the same as training without the range test
    model.network.train()
    model.fit(data, batch_size=16, epochs=1, verbose=0)
    twin, _ = _small_model(scheduler)
    twin.fit(data, batch_size=16, epochs=1, verbose=0)
    for (k, a), b in zip(model.network.state_dict().items(), twin.network.state_dict().values()):
        assert a.numpy().tobytes() == b.numpy().tobytes(), k


def test_lr_find_on_a_fresh_optimizer_leaves_no_accumulators():
    model, data = _small_model(fresh=True)
    assert model._optimizer.state_dict() == {}
    grads = [p.grad for p in model.network.parameters()]
    model.lr_find(data, batch_size=16, num_iters=10, show=False)
    assert model._optimizer.state_dict() == {} and model._optimizer._step_count == 0
    assert [p.grad for p in model.network.parameters()] == grads


def test_lr_find_stops_on_divergence_and_checks_arguments():
    model, data = _small_model(fresh=True)
    res = lr_find(model, data, batch_size=16, start_lr=1e-3, end_lr=1e6, num_iters=100,
                  show=False)
    assert res.stopped == "diverged" and len(res.lrs) < 100
    assert res.smoothed[-1] > 4 * np.nanmin(res.smoothed[:-1]) or not np.isfinite(
        res.smoothed[-1])
    assert res.suggestion < res.lrs[-1]
    with pytest.raises(ValueError, match="lr_find: end_lr .* must be above start_lr"):
        lr_find(model, data, start_lr=1.0, end_lr=0.1)
    with pytest.raises(ValueError, match="lr_find: num_iters must be an int >= 2"):
        lr_find(model, data, num_iters=1)
    bare = paddle.Model(paddle.nn.Linear(2, 2))
    with pytest.raises(RuntimeError, match="lr_find: call Model.prepare"):
        bare.lr_find(data)


# ---------------------------------------------------------------------- interpret

class _Identity(paddle.nn.Layer):
    def forward(self, x):
        return x


def _reference(labels, preds, k):
    cm = np.zeros((k, k), np.int64)
    for t, p in zip(labels, preds):
        cm[t, p] += 1
    prec, rec, f1 = [], [], []
    for c in range(k):
        tp = cm[c, c]
        pp, sup = cm[:, c].sum(), cm[c, :].sum()
        p = tp / pp if pp else 0.0
        r = tp / sup if sup else 0.0
        prec.append(p)
        rec.append(r)
        f1.append(2 * p * r / (p + r) if p + r else 0.0)
    return cm, np.array(prec), np.array(rec), np.array(f1)


def test_interpret_classification_against_numpy(terminal, capsys):
    rng = np.random.default_rng(5)
    k, n = 4, 203
    labels = rng.integers(0, k, n)
    logits = rng.standard_normal((n, k)).astype(np.float32)
    logits[np.arange(n), labels] += 1.0  # better than chance
    logits[:, 3] -= 5.0  # class 3 is never predicted: precision 0/0
    ds = _Pairs(logits, labels.reshape(-1, 1).astype(np.int64),
                classes=["cat", "dog", "fox", "owl"])
    model = paddle.Model(_Identity())
    model.prepare(loss=paddle.nn.CrossEntropyLoss())
    res = interpret(model, ds, batch_size=37, top_k=5)
    preds = logits.argmax(axis=1)
    cm, prec, rec, f1 = _reference(labels, preds, k)
    np.testing.assert_array_equal(res.confusion_matrix, cm)
    np.testing.assert_array_equal(res.predictions, preds)
    np.testing.assert_allclose(res.per_class["precision"], prec, rtol=1e-12)
    np.testing.assert_allclose(res.per_class["recall"], rec, rtol=1e-12)
    np.testing.assert_allclose(res.per_class["f1"], f1, rtol=1e-12)
    np.testing.assert_array_equal(res.per_class["support"], np.bincount(labels, minlength=k))
    np.testing.assert_allclose(res.normalized_confusion_matrix.sum(axis=1), 1.0)
    assert res.accuracy == pytest.approx((preds == labels).mean())
    assert res.class_names == ["cat", "dog", "fox", "owl"] and res.per_class["class"][3] == "owl"
    # the most confused pairs, largest first, named
    off = sorted(((cm[t, p], t, p) for t in range(k) for p in range(k) if t != p and cm[t, p]),
                 key=lambda v: (-v[0], v[1], v[2]))
    assert res.most_confused[0] == (res.class_names[off[0][1]], res.class_names[off[0][2]],
                                    off[0][0])
    # the top losses are the largest cross-entropies, with their probabilities
    z = logits.astype(np.float64) - logits.max(axis=1, keepdims=True)
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    ce = -np.log(p[np.arange(n), labels])
    worst = np.argsort(-ce, kind="stable")[:5]
    assert [t["index"] for t in res.top_losses] == worst.tolist()
    np.testing.assert_allclose([t["loss"] for t in res.top_losses], ce[worst], rtol=1e-9)
    np.testing.assert_allclose([t["probability"] for t in res.top_losses],
                               p[worst, preds[worst]], rtol=1e-9)
    out = capsys.readouterr().out
    assert f"accuracy {res.accuracy:.4f}" in out and "owl" in out and "<" not in out


def test_confusion_matrix_helpers_match_numpy_on_random_data():
    rng = np.random.default_rng(6)
    for k in (2, 7):
        t, p = rng.integers(0, k, 500), rng.integers(0, k, 500)
        cm, prec, rec, f1 = _reference(t, p, k)
        np.testing.assert_array_equal(diagnosis.confusion_matrix(t, p, k), cm)
        m = diagnosis.per_class_metrics(cm)
        np.testing.assert_allclose(m["precision"], prec, rtol=1e-12)
        np.testing.assert_allclose(m["recall"], rec, rtol=1e-12)
        np.testing.assert_allclose(m["f1"], f1, rtol=1e-12)
    with pytest.raises(ValueError, match=r"confusion_matrix: labels must lie in \[0, 3\)"):
        diagnosis.confusion_matrix([0, 5], [0, 1], 3)


def test_interpret_regression_residuals(terminal, capsys):
    rng = np.random.default_rng(7)
    y = rng.standard_normal((50, 1)).astype(np.float32)
    pred = (y * 0.8 + 0.1).astype(np.float32)
    model = paddle.Model(_Identity())
    model.prepare(loss=paddle.nn.MSELoss())
    res = interpret(model, _Pairs(pred, y), batch_size=16, top_k=3)
    r = pred[:, 0].astype(np.float64) - y[:, 0]
    assert res.task == "regression"
    np.testing.assert_allclose(res.residuals, r, rtol=1e-12)
    assert res.summary["mae"] == pytest.approx(np.abs(r).mean())
    assert res.summary["rmse"] == pytest.approx(np.sqrt((r ** 2).mean()))
    yy = y[:, 0].astype(np.float64)
    assert res.summary["r2"] == pytest.approx(1 - (r ** 2).sum() / ((yy - yy.mean()) ** 2).sum())
    assert res.top_losses[0]["index"] == int(np.argmax(np.abs(r)))
    assert "RMSE" in capsys.readouterr().out


def test_interpret_view_html(shown):
    pytest.importorskip("matplotlib")
    rng = np.random.default_rng(8)
    imgs = rng.random((30, 1, 6, 6)).astype(np.float32)
    labels = rng.integers(0, 3, (30, 1)).astype(np.int64)

    class _Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = paddle.nn.Linear(36, 3)

        def forward(self, x):
            return self.fc(x.reshape([x.shape[0], -1]))

    model = paddle.Model(_Net())
    model.prepare(loss=paddle.nn.CrossEntropyLoss())
    res = interpret(model, _Pairs(imgs, labels, classes=["a", "b", "c"]), batch_size=8,
                    top_k=4)
    (view,) = shown
    markup = view._repr_html_()
    assert "phl-interpret" in markup and markup.count("data:image/png;base64") == 2
    assert "Per class" in markup and "var(--jp-ui-font-color1" in markup
    assert not HARD_GREYS.search(markup)
    assert res.confusion_matrix.sum() == 30 and len(res.top_losses) == 4
