"""Metrics against Paddle 2.6.2 and NumPy references on fixed arrays."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle

RNG = np.random.default_rng(0)
PRED = RNG.random((64, 5)).astype("float32")
LABEL = RNG.integers(0, 5, size=(64, 1)).astype("int64")
SCORES = RNG.random(200)
BINARY = (RNG.random(200) < SCORES).astype("int64")


@pytest.mark.parity
@pytest.mark.parametrize("topk", [(1,), (1, 2), (2, 3, 5)])
def test_accuracy_parity(pd, topk):
    res = []
    for lib in (paddle, pd):
        m = lib.metric.Accuracy(topk=topk)
        batch = []
        for s in range(0, 64, 16):
            c = m.compute(lib.to_tensor(PRED[s:s + 16]), lib.to_tensor(LABEL[s:s + 16]))
            batch.append(m.update(c.numpy() if hasattr(c, "numpy") else c))
        res.append((batch, m.accumulate(), m.name()))
    np.testing.assert_allclose(np.array(res[0][0], dtype=float), np.array(res[1][0], dtype=float))
    np.testing.assert_allclose(res[0][1], res[1][1])
    assert res[0][2] == res[1][2]


@pytest.mark.parity
@pytest.mark.parametrize("k", [1, 2, 4])
def test_accuracy_function_parity(pd, k):
    a = paddle.metric.accuracy(paddle.to_tensor(PRED), paddle.to_tensor(LABEL), k=k)
    b = pd.metric.accuracy(pd.to_tensor(PRED), pd.to_tensor(LABEL), k=k)
    assert a.shape == b.shape == []
    np.testing.assert_allclose(a.numpy(), b.numpy())


@pytest.mark.parity
@pytest.mark.parametrize("cls", ["Precision", "Recall"])
def test_precision_recall_parity(pd, cls):
    vals = []
    for lib in (paddle, pd):
        m = getattr(lib.metric, cls)()
        for s in range(0, 200, 50):
            m.update(SCORES[s:s + 50], BINARY[s:s + 50])
        vals.append((m.accumulate(), m.name()))
    assert vals[0][0] == pytest.approx(vals[1][0])
    assert vals[0][1] == vals[1][1]


@pytest.mark.parity
@pytest.mark.parametrize("n", [4095, 200, 10])
def test_auc_roc_parity(pd, n):
    preds = np.stack([1 - SCORES, SCORES], axis=1)
    vals = []
    for lib in (paddle, pd):
        m = lib.metric.Auc(num_thresholds=n)
        for s in range(0, 200, 40):
            m.update(preds[s:s + 40], BINARY[s:s + 40, None])
        vals.append(m.accumulate())
    assert vals[0] == pytest.approx(vals[1], rel=1e-12)


def test_auc_against_rank_statistic():
    m = paddle.metric.Auc(num_thresholds=100000)
    m.update(np.stack([1 - SCORES, SCORES], 1), BINARY)
    pos, neg = SCORES[BINARY == 1], SCORES[BINARY == 0]
    exact = (pos[:, None] > neg[None, :]).mean()
    assert m.accumulate() == pytest.approx(exact, abs=1e-4)


def test_auc_pr_perfect_and_random():
    m = paddle.metric.Auc(curve="PR", num_thresholds=1000)
    m.update(np.array([0.9, 0.8, 0.2, 0.1]), np.array([1, 1, 0, 0]))
    assert m.accumulate() == pytest.approx(1.0)
    m.reset()
    assert m.accumulate() == 0.0


def test_accuracy_one_hot_labels_and_reset():
    m = paddle.metric.Accuracy()
    onehot = np.eye(5, dtype="float32")[LABEL[:, 0]]
    c = m.compute(paddle.to_tensor(PRED), paddle.to_tensor(onehot))
    m.update(c)
    ref = (PRED.argmax(1) == LABEL[:, 0]).mean()
    assert m.accumulate() == pytest.approx(ref)
    m.reset()
    assert m.accumulate() == 0.0


def test_metric_errors():
    with pytest.raises(ValueError, match="topk"):
        paddle.metric.Accuracy(topk=(0,))
    with pytest.raises(ValueError, match="curve"):
        paddle.metric.Auc(curve="DET")
    with pytest.raises(ValueError, match="exceeds"):
        paddle.metric.Accuracy(topk=(9,)).compute(paddle.to_tensor(PRED), paddle.to_tensor(LABEL))
    with pytest.raises(ValueError, match="labels"):
        paddle.metric.Precision().update(np.zeros(3), np.zeros(4))
    with pytest.raises(NotImplementedError):
        paddle.metric.Metric().accumulate()
