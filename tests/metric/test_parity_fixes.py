"""Return types of the metrics and of paddle.metric.accuracy, against Paddle 2.6.2."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl


def _kind(v):
    if isinstance(v, list):
        return [_kind(e) for e in v]
    return type(v).__name__


@pytest.mark.parity
@pytest.mark.parametrize("topk", [(1,), (1, 2)])
def test_accuracy_metric_types_parity(pd, topk):
    rng = np.random.RandomState(0)
    pred = rng.rand(6, 4).astype("float32")
    lab = rng.randint(0, 4, (6, 1)).astype("int64")
    out = {}
    for lib in (pd, paddle_hl):
        m = lib.metric.Accuracy(topk=topk)
        empty = m.accumulate()
        c = m.compute(lib.to_tensor(pred), lib.to_tensor(lab))
        upd = m.update(c)
        acc = m.accumulate()
        out[lib.__name__] = (_kind(empty), _kind(upd), _kind(acc), np.asarray(upd),
                             np.asarray(acc), m.name())
    a, b = out["paddle"], out["paddle_hl"]
    assert b[:3] == a[:3]
    np.testing.assert_allclose(b[3], a[3], rtol=1e-12)
    np.testing.assert_allclose(b[4], a[4], rtol=1e-12)
    assert b[5] == a[5]


@pytest.mark.parity
def test_auc_precision_recall_types_parity(pd):
    rng = np.random.RandomState(1)
    p = rng.rand(50).astype("float32")
    y = (rng.rand(50) > 0.5).astype("int64")
    out = {}
    for lib in (pd, paddle_hl):
        auc = lib.metric.Auc()
        empty = auc.accumulate()
        auc.update(np.stack([1 - p, p], 1), y.reshape(-1, 1))
        pr, rc = lib.metric.Precision(), lib.metric.Recall()
        pr.update(p, y)
        rc.update(p, y)
        vals = (empty, auc.accumulate(), pr.accumulate(), rc.accumulate())
        out[lib.__name__] = ([_kind(v) for v in vals], [float(v) for v in vals])
    assert out["paddle_hl"][0] == out["paddle"][0]
    np.testing.assert_allclose(out["paddle_hl"][1], out["paddle"][1], rtol=1e-9)


@pytest.mark.parity
@pytest.mark.parametrize("k", [1, 2])
def test_accuracy_function_parity(pd, k):
    rng = np.random.RandomState(2)
    pred = rng.rand(7, 5).astype("float32")
    lab = rng.randint(0, 5, (7, 1)).astype("int64")
    out = {}
    for lib in (pd, paddle_hl):
        correct = lib.to_tensor(np.array([0], "int64"))
        total = lib.to_tensor(np.array([0], "int64"))
        r = lib.metric.accuracy(lib.to_tensor(pred), lib.to_tensor(lab), k=k, correct=correct,
                                total=total)
        out[lib.__name__] = [(str(t.dtype), list(t.shape), t.numpy().tolist())
                             for t in (r, correct, total)]
    assert out["paddle_hl"][1:] == out["paddle"][1:]
    assert out["paddle_hl"][0][:2] == out["paddle"][0][:2]
    np.testing.assert_allclose(out["paddle_hl"][0][2], out["paddle"][0][2], rtol=1e-6)
