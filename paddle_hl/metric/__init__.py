"""paddle_hl.metric: streaming evaluation metrics for ``Model.fit/evaluate``.

Protocol: per batch, ``compute(*outputs, *labels)`` runs on Tensors, then
``update(*numpy_results)``; ``accumulate()`` gives the running value under ``name()``.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..framework.tensor import Tensor, _wrap

__all__ = ["Metric", "Accuracy", "Precision", "Recall", "Auc", "accuracy"]


def _np(x):
    if isinstance(x, Tensor):
        # the raw array, not Tensor.numpy()'s copy: metrics run on every batch
        return backend.to_numpy(x._data)
    return np.asarray(x)


class Metric:
    """Base class of metrics: implement ``reset``, ``update``, ``accumulate`` and ``name``."""

    def __init__(self):
        pass

    def reset(self):
        """Clear the accumulated state."""
        raise NotImplementedError(f"function 'reset' not implemented in {type(self).__name__}")

    def update(self, *args):
        """Add one batch (the NumPy results of ``compute``)."""
        raise NotImplementedError(f"function 'update' not implemented in {type(self).__name__}")

    def accumulate(self):
        """The metric over everything seen since ``reset``."""
        raise NotImplementedError(f"function 'accumulate' not implemented in "
                                  f"{type(self).__name__}")

    def name(self):
        """The name(s) the metric is logged under."""
        raise NotImplementedError(f"function 'name' not implemented in {type(self).__name__}")

    def compute(self, *args):
        """Preprocess a batch on Tensors (default: pass the inputs through)."""
        return args


class Accuracy(Metric):
    """Top-k classification accuracy.

    Args:
        topk (tuple[int]): the k values to report.
        name (str, optional): base name; ``acc`` by default, ``acc_top{k}`` for several k.

    Example:
        >>> m = paddle.metric.Accuracy(topk=(1, 5))
        >>> m.update(m.compute(logits, labels)); m.accumulate()
    """

    def __init__(self, topk=(1,), name=None, *args, **kwargs):
        super().__init__()
        self.topk = tuple(topk) if isinstance(topk, (list, tuple)) else (int(topk),)
        if not self.topk or any(not isinstance(k, int) or k < 1 for k in self.topk):
            raise ValueError(f"Accuracy: topk must be positive ints, got {topk!r}")
        self.maxk = max(self.topk)
        self._init_name(name)
        self.reset()

    def _init_name(self, name):
        name = name or "acc"
        self._name = [f"{name}_top{k}" for k in self.topk] if len(self.topk) > 1 else [name]

    def compute(self, pred, label, *args):
        """``[N, maxk]`` float32 matrix: 1 where the i-th best class is the label."""
        p = _np(pred)
        y = _np(label)
        if p.ndim < 2:
            raise ValueError(f"Accuracy.compute: pred must be [N, C], got shape {list(p.shape)}")
        if y.ndim == p.ndim and y.shape[-1] != 1:  # one-hot or soft labels
            y = np.argmax(y, axis=-1)[..., None]
        elif y.ndim == p.ndim - 1:
            y = y[..., None]
        if self.maxk > p.shape[-1]:
            raise ValueError(f"Accuracy.compute: topk {self.maxk} exceeds the {p.shape[-1]} "
                             "classes of pred")
        # stable descending order, so ties rank the lower class first as Paddle's argsort does
        top = np.argsort(-p, axis=-1, kind="stable")[..., :self.maxk]
        return _wrap((top == y).astype(np.float32))

    def update(self, correct, *args):
        """Add a batch of ``compute`` results; returns this batch's accuracy (per k)."""
        c = _np(correct)
        n = int(np.prod(c.shape[:-1])) if c.ndim > 1 else c.shape[0]
        accs = []
        for i, k in enumerate(self.topk):
            num = float(c[..., :k].sum())
            # NumPy float64, as Paddle returns
            accs.append(np.float64(num / n) if n else 0.0)
            self.total[i] += num
            self.count[i] += n
        return accs[0] if len(self.topk) == 1 else accs

    def reset(self):
        self.total = [0.0] * len(self.topk)
        self.count = [0] * len(self.topk)

    def accumulate(self):
        # NumPy float64 per k, as Paddle returns; a plain 0.0 before any update
        res = [np.float64(t / c) if c > 0 else 0.0 for t, c in zip(self.total, self.count)]
        return res[0] if len(self.topk) == 1 else res

    def name(self):
        return self._name


class _BinaryCounts(Metric):
    def __init__(self, name):
        super().__init__()
        self._name = name
        self.reset()

    def _binary(self, preds, labels):
        p = _np(preds).reshape(-1)
        y = _np(labels).reshape(-1)
        if p.shape != y.shape:
            raise ValueError(f"{type(self).__name__}.update: preds has {p.size} values but "
                             f"labels has {y.size}")
        return np.floor(p + 0.5).astype(np.int64), y.astype(np.int64)

    def reset(self):
        self.tp = 0
        self.fp = 0
        self.fn = 0

    def name(self):
        return self._name


class Precision(_BinaryCounts):
    """Binary precision tp / (tp + fp); predictions are probabilities rounded at 0.5."""

    def __init__(self, name="precision", *args, **kwargs):
        super().__init__(name)

    def update(self, preds, labels):
        p, y = self._binary(preds, labels)
        self.tp += int(np.sum((p == 1) & (y == 1)))
        self.fp += int(np.sum((p == 1) & (y != 1)))

    def accumulate(self):
        ap = self.tp + self.fp
        return float(self.tp) / ap if ap != 0 else 0.0


class Recall(_BinaryCounts):
    """Binary recall tp / (tp + fn); predictions are probabilities rounded at 0.5."""

    def __init__(self, name="recall", *args, **kwargs):
        super().__init__(name)

    def update(self, preds, labels):
        p, y = self._binary(preds, labels)
        self.tp += int(np.sum((p == 1) & (y == 1)))
        self.fn += int(np.sum((p != 1) & (y == 1)))

    def accumulate(self):
        recall = self.tp + self.fn
        return float(self.tp) / recall if recall != 0 else 0.0


class Auc(Metric):
    """Area under the ROC (or precision-recall) curve from bucketed scores.

    ``update(preds, labels)`` takes ``preds`` of shape ``[N, 2]`` (class probabilities; the
    second column is the positive score) or ``[N]``/``[N, 1]`` positive scores.
    """

    def __init__(self, curve="ROC", num_thresholds=4095, name="auc", *args, **kwargs):
        super().__init__()
        if curve not in ("ROC", "PR"):
            raise ValueError(f"Auc: curve must be 'ROC' or 'PR', got {curve!r}")
        if not isinstance(num_thresholds, int) or num_thresholds < 1:
            raise ValueError(f"Auc: num_thresholds must be a positive int, got "
                             f"{num_thresholds!r}")
        self._curve = curve
        self._num_thresholds = num_thresholds
        self._name = name
        self.reset()

    def update(self, preds, labels):
        p = _np(preds)
        y = _np(labels).reshape(-1)
        score = p[:, 1] if p.ndim == 2 and p.shape[1] > 1 else p.reshape(-1)
        if score.shape[0] != y.shape[0]:
            raise ValueError(f"Auc.update: {score.shape[0]} predictions but {y.shape[0]} labels")
        bins = np.clip((score * self._num_thresholds).astype(np.int64), 0, self._num_thresholds)
        pos = y.astype(bool)
        self._stat_pos += np.bincount(bins[pos], minlength=self._num_thresholds + 1)
        self._stat_neg += np.bincount(bins[~pos], minlength=self._num_thresholds + 1)

    @staticmethod
    def trapezoid_area(x1, x2, y1, y2):
        return abs(x1 - x2) * (y1 + y2) / 2.0

    def accumulate(self):
        # cumulative counts of scores at or above each threshold, from the highest down
        tp = np.cumsum(self._stat_pos[::-1]).astype(np.float64)
        fp = np.cumsum(self._stat_neg[::-1]).astype(np.float64)
        tot_pos, tot_neg = tp[-1], fp[-1]
        if tot_pos <= 0 or tot_neg <= 0:
            return 0.0
        if self._curve == "ROC":
            tp0, fp0 = np.r_[0.0, tp[:-1]], np.r_[0.0, fp[:-1]]
            area = self.trapezoid_area(fp, fp0, tp, tp0).sum()
            return np.float64(area / tot_pos / tot_neg)
        precision = np.where(tp + fp > 0, tp / np.maximum(tp + fp, 1), 1.0)
        recall = tp / tot_pos
        r0 = np.r_[0.0, recall[:-1]]
        p0 = np.r_[1.0, precision[:-1]]
        return np.float64(self.trapezoid_area(recall, r0, precision, p0).sum())

    def reset(self):
        self._stat_pos = np.zeros(self._num_thresholds + 1, dtype=np.int64)
        self._stat_neg = np.zeros(self._num_thresholds + 1, dtype=np.int64)

    def name(self):
        return self._name


def accuracy(input, label, k=1, correct=None, total=None, name=None):  # noqa: A002
    """Top-k accuracy of one batch as a 0-D float32 Tensor.

    Args:
        input (Tensor): ``[N, C]`` scores.
        label (Tensor): ``[N]`` or ``[N, 1]`` int labels.
        k (int): count a hit when the label is among the k best scores.
        correct (Tensor, optional): set to the number of hits, a 0-D int32 tensor.
        total (Tensor, optional): set to the number of samples, a 0-D int32 tensor.

    Returns:
        Tensor: the accuracy, a 0-D float32 tensor.

    Example:
        >>> label = paddle.to_tensor([[0], [1], [2], [0]])
        >>> acc = paddle.metric.accuracy(paddle.rand([4, 3]), label)
    """
    p = _np(input)
    y = _np(label).reshape(-1)
    if p.ndim != 2 or p.shape[0] != y.shape[0]:
        raise ValueError(f"accuracy: input must be [N, C] and label [N] or [N, 1]; got "
                         f"{list(p.shape)} and {list(_np(label).shape)}")
    top = np.argsort(-p, axis=-1, kind="stable")[:, :k]
    hits = (top == y[:, None]).any(axis=1)
    n_correct = int(hits.sum())
    # as Paddle, ``correct`` and ``total`` are overwritten by 0-D int32 counts, whatever their
    # shape and dtype were
    for t, v in ((correct, n_correct), (total, y.shape[0])):
        if t is not None:
            t._data = backend.get_array_module(t._data).asarray(v, dtype=np.int32)
            t._ver.v += 1
    return _wrap(np.asarray(n_correct / max(y.shape[0], 1), dtype=np.float32))
