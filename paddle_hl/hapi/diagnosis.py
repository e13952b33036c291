"""See what a trained model gets wrong: :func:`interpret`.

For a classifier: the confusion matrix (counts and row-normalised), the per-class precision,
recall and F1 table, the most confused pairs and a gallery of the samples with the highest loss
(prediction, truth and probability). For a regression model: the residual plots (predicted vs
true, residual vs predicted, residual histogram), the error summary and the worst samples.

The evaluation runs batched through the Model's own network (``Model.predict_batch``), with a
progress bar for long evaluations. The returned :class:`Interpretation` holds the numbers
(``confusion_matrix``, ``per_class`` ...) for scripts; the view is HTML in Jupyter (tables and
PNG pictures that stay in the saved notebook, themed with JupyterLab's CSS variables) and a
text table with a short summary in a terminal.
"""

from __future__ import annotations

import numpy as np

from ..notebook import _views
from ..notebook.tables import html_table

__all__ = []  # implementation module: paddle_hl.notebook gives the names


def confusion_matrix(labels, predictions, num_classes: int) -> np.ndarray:
    """``cm[t, p]``: the number of samples of true class ``t`` predicted as ``p``.

    Args:
        labels (np.ndarray): true classes [N] (ints in ``[0, num_classes)``).
        predictions (np.ndarray): predicted classes [N].
        num_classes (int): K.

    Returns:
        np.ndarray: int64 [K, K].
    """
    labels = np.asarray(labels, dtype=np.int64).reshape(-1)
    predictions = np.asarray(predictions, dtype=np.int64).reshape(-1)
    if labels.shape != predictions.shape:
        raise ValueError(f"confusion_matrix: labels {labels.shape} and predictions "
                         f"{predictions.shape} differ in length")
    bad = (labels < 0) | (labels >= num_classes)
    if bad.any():
        raise ValueError(f"confusion_matrix: labels must lie in [0, {num_classes}), got "
                         f"{np.unique(labels[bad])[:5].tolist()}")
    flat = np.bincount(labels * num_classes + predictions, minlength=num_classes ** 2)
    return flat.reshape(num_classes, num_classes).astype(np.int64)


def per_class_metrics(cm: np.ndarray) -> dict:
    """Precision, recall, F1 and support per class from a confusion matrix (0 where a ratio
    has nothing to divide by).

    Args:
        cm (np.ndarray): [K, K] counts, rows true, columns predicted.

    Returns:
        dict: ``precision``, ``recall``, ``f1`` (float64 [K]) and ``support`` (int64 [K]).
    """
    cm = np.asarray(cm, dtype=np.float64)
    tp = np.diag(cm)
    predicted = cm.sum(axis=0)
    support = cm.sum(axis=1)
    precision = np.divide(tp, predicted, out=np.zeros_like(tp), where=predicted > 0)
    recall = np.divide(tp, support, out=np.zeros_like(tp), where=support > 0)
    both = precision + recall
    f1 = np.divide(2 * precision * recall, both, out=np.zeros_like(tp), where=both > 0)
    return {"precision": precision, "recall": recall, "f1": f1,
            "support": support.astype(np.int64)}


def _probabilities(out: np.ndarray) -> np.ndarray:
    """Class probabilities [N, K]: the outputs themselves when they already are (non-negative
    rows summing to 1), else their softmax."""
    out = out.astype(np.float64)
    if out.min() >= 0 and np.allclose(out.sum(axis=1), 1.0, atol=1e-3):
        return out
    z = out - out.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


class Interpretation:
    """The numbers of :func:`interpret` (and its view: :meth:`show`, :meth:`view`).

    Attributes:
        task (str): ``'classification'`` or ``'regression'``.
        labels (np.ndarray): the true values, in evaluation order.
        predictions (np.ndarray): predicted classes [N] (classification) or values.
        losses (np.ndarray): per-sample loss (cross-entropy of the true class, or the squared
            error).
        probabilities (np.ndarray | None): [N, K] class probabilities.
        class_names (list[str]): names of the classes (numbers when the dataset has none).
        confusion_matrix (np.ndarray | None): int64 [K, K], rows true, columns predicted.
        normalized_confusion_matrix (np.ndarray | None): each row divided by its total.
        per_class (dict | None): ``class``, ``precision``, ``recall``, ``f1``, ``support``.
        accuracy (float | None): the fraction predicted right.
        most_confused (list): ``(true name, predicted name, count)``, most frequent first.
        top_losses (list[dict]): the highest-loss samples: ``index``, ``loss``, ``label``,
            ``prediction``, ``probability`` (of the prediction), ``true_probability``.
        residuals (np.ndarray | None): prediction - truth (regression).
        summary (dict): accuracy and macro/weighted F1, or MAE, RMSE, R2, bias, max error.
    """

    def __init__(self):
        self.task = "classification"
        self.labels = self.predictions = self.losses = None
        self.probabilities = None
        self.class_names = []
        self.confusion_matrix = None
        self.normalized_confusion_matrix = None
        self.per_class = None
        self.accuracy = None
        self.most_confused = []
        self.top_losses = []
        self.residuals = None
        self.summary = {}
        self._samples = []  # (index, input array) of the top losses, for the gallery
        self._dataset = None

    # ------------------------------------------------------------------ tables
    def per_class_rows(self):
        """The per-class table as rows ``[name, precision, recall, f1, support]``."""
        pc = self.per_class
        return [[name, float(pc["precision"][k]), float(pc["recall"][k]), float(pc["f1"][k]),
                 int(pc["support"][k])] for k, name in enumerate(self.class_names)]

    def __repr__(self):
        return self.text()

    def text(self) -> str:
        """The terminal form: a short summary and tables, no pictures."""
        if self.task == "regression":
            s = self.summary
            lines = [f"regression on {len(self.labels)} samples: MAE {s['mae']:.4g}  RMSE "
                     f"{s['rmse']:.4g}  R2 {s['r2']:.4f}  bias {s['bias']:+.4g}  max error "
                     f"{s['max_error']:.4g}"]
            rows = [[t["index"], t["label"], t["prediction"], t["prediction"] - t["label"]]
                    for t in self.top_losses]
            lines.append(_views.text_table(["sample", "true", "predicted", "residual"], rows,
                                           "largest errors"))
            return "\n".join(lines)
        s = self.summary
        lines = [f"classification of {len(self.labels)} samples into "
                 f"{len(self.class_names)} classes: accuracy {s['accuracy']:.4f}, macro F1 "
                 f"{s['macro_f1']:.4f}, weighted F1 {s['weighted_f1']:.4f}"]
        if self.most_confused:
            pairs = ", ".join(f"{t} -> {p} ({n})" for t, p, n in self.most_confused[:5])
            lines.append(f"most confused (true -> predicted): {pairs}")
        lines.append(_views.text_table(["class", "precision", "recall", "f1", "support"],
                                       self.per_class_rows(), "per class"))
        names = [str(n) for n in self.class_names]
        w = max(max(len(n) for n in names), len(str(int(self.confusion_matrix.max()))))
        if len(names) <= 20:
            lines.append("confusion matrix (rows true, columns predicted)")
            lines.append(" " * (w + 1) + " ".join(n[:w].rjust(w) for n in names))
            for n, row in zip(names, self.confusion_matrix):
                lines.append(n[:w].rjust(w) + " " + " ".join(str(int(v)).rjust(w)
                                                            for v in row))
        rows = [[t["index"], t["loss"], _views.label_text(t["label"], self.class_names),
                 _views.label_text(t["prediction"], self.class_names), t["probability"]]
                for t in self.top_losses]
        lines.append(_views.text_table(["sample", "loss", "true", "predicted", "p(pred)"], rows,
                                       "highest losses"))
        return "\n".join(lines)

    # ------------------------------------------------------------------ pictures
    def _confusion_figure(self):
        cm, norm = self.confusion_matrix, self.normalized_confusion_matrix
        k = len(cm)
        side = min(max(3.0, 0.32 * k + 1.4), 8.0)
        fig = _views.figure(2 * side + 0.6, side)
        names = [str(n) for n in self.class_names]
        for ax, data, title in zip(fig.subplots(1, 2), (cm, norm),
                                   ("counts", "normalised by true class")):
            ax.imshow(norm, cmap="Blues", vmin=0, vmax=1)
            ax.set_title(title, fontsize=10)
            ax.set_xticks(range(k))
            ax.set_yticks(range(k))
            ax.set_xticklabels(names, rotation=90 if max(map(len, names)) > 3 else 0,
                               fontsize=8)
            ax.set_yticklabels(names, fontsize=8)
            ax.set_xlabel("predicted", fontsize=9)
            ax.set_ylabel("true", fontsize=9)
            if k <= 20:
                for t in range(k):
                    for p in range(k):
                        v = data[t, p]
                        txt = f"{int(v)}" if data is cm else f"{v:.2f}"
                        if data is cm and v == 0:
                            continue
                        ax.text(p, t, txt, ha="center", va="center", fontsize=7 if k > 10 else 8,
                                color="white" if norm[t, p] > 0.55 else "#212121")
        fig.tight_layout()
        return fig

    def _gallery_figure(self):
        from ..notebook.data_view import display_image

        items = [(t, x) for t, (_i, x) in zip(self.top_losses, self._samples)]
        images = [(t, display_image(x, self._dataset)) for t, x in items]
        images = [(t, im) for t, im in images if im is not None]
        if not images:
            return None
        cols = min(len(images), 6)
        rows = -(-len(images) // cols)
        fig = _views.figure(1.7 * cols, 2.25 * rows)
        axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).reshape(-1)
        for ax in axes:
            ax.axis("off")
        for ax, (t, im) in zip(axes, images):
            ax.imshow(im, cmap="gray" if im.ndim == 2 else None, vmin=0, vmax=1,
                      interpolation="nearest")
            pred = _views.label_text(t["prediction"], self.class_names)
            true = _views.label_text(t["label"], self.class_names)
            ax.set_title(f"pred {pred} ({t['probability']:.2f})\ntrue {true}  loss "
                         f"{t['loss']:.2f}", fontsize=8, color=_views.BAD
                         if t["prediction"] != t["label"] else _views.GOOD)
        fig.tight_layout(pad=0.4, h_pad=1.0)
        return fig

    def _regression_figure(self):
        y, p = self.labels.reshape(-1), self.predictions.reshape(-1)
        r = p - y
        fig = _views.figure(11.0, 3.3)
        a, b, c = fig.subplots(1, 3)
        a.scatter(y, p, s=6, alpha=0.5, color="#4e79a7")
        lo, hi = float(min(y.min(), p.min())), float(max(y.max(), p.max()))
        a.plot([lo, hi], [lo, hi], color="#e15759", lw=1)
        a.set(xlabel="true", ylabel="predicted", title="predicted vs true")
        b.scatter(p, r, s=6, alpha=0.5, color="#4e79a7")
        b.axhline(0, color="#e15759", lw=1)
        b.set(xlabel="predicted", ylabel="residual", title="residual vs predicted")
        c.hist(r, bins=30, color="#4e79a7")
        c.set(xlabel="residual", ylabel="samples", title="residuals")
        for ax in (a, b, c):
            ax.title.set_fontsize(10)
            ax.grid(True, alpha=0.3)
        fig.tight_layout()
        return fig

    # ------------------------------------------------------------------ the view
    def view(self) -> _views.View:
        """The view: tables and pictures in HTML, with the text form for terminals."""
        parts = []
        pics = _views.have_matplotlib()
        if self.task == "regression":
            s = self.summary
            parts.append(_views.para(
                f"Regression on {len(self.labels)} samples: MAE {s['mae']:.4g}, RMSE "
                f"{s['rmse']:.4g}, R\u00b2 {s['r2']:.4f}, bias {s['bias']:+.4g}, max error "
                f"{s['max_error']:.4g}", bold=True))
            if pics:
                parts.append(_views.fig_img(self._regression_figure(), "residual plots"))
            rows = [[t["index"], float(t["label"]), float(t["prediction"]),
                     float(t["prediction"] - t["label"])] for t in self.top_losses]
            parts.append(html_table(["sample", "true", "predicted", "residual"], rows,
                                    title="Largest errors"))
            return _views.View("interpret", "".join(parts), self.text())
        s = self.summary
        parts.append(_views.para(
            f"{len(self.labels)} samples, {len(self.class_names)} classes: accuracy "
            f"{s['accuracy']:.4f}, macro F1 {s['macro_f1']:.4f}, weighted F1 "
            f"{s['weighted_f1']:.4f}", bold=True))
        if pics:
            parts.append(_views.fig_img(self._confusion_figure(), "confusion matrix"))
        body = [*self.per_class_rows()]
        footer = [("accuracy", s["accuracy"]), ("macro F1", s["macro_f1"]),
                  ("weighted F1", s["weighted_f1"])]
        tables = [html_table(["class", "precision", "recall", "F1", "support"], body,
                             title="Per class", footer=footer)]
        if self.most_confused:
            tables.append(html_table(["true", "predicted", "samples"],
                                     [[str(t), str(p), int(n)]
                                      for t, p, n in self.most_confused[:10]],
                                     title="Most confused"))
        parts.append("<div style='display:flex;flex-wrap:wrap;gap:24px;align-items:"
                     "flex-start'>" + "".join(f"<div>{t}</div>" for t in tables) + "</div>")
        gallery = self._gallery_figure() if pics and self._samples else None
        parts.append(_views.para("Highest losses", bold=True))
        if gallery is not None:
            parts.append(_views.fig_img(gallery, "highest-loss samples"))
        else:
            rows = [[t["index"], t["loss"], _views.label_text(t["label"], self.class_names),
                     _views.label_text(t["prediction"], self.class_names), t["probability"]]
                    for t in self.top_losses]
            parts.append(html_table(["sample", "loss", "true", "predicted", "p(pred)"], rows))
        return _views.View("interpret", "".join(parts), self.text())

    def show(self) -> None:
        """Display the view in Jupyter (print its text form elsewhere)."""
        _views.present(self.view(), True)


def _detect_task(out: np.ndarray, labels: np.ndarray, loss) -> str:
    name = type(loss).__name__.lower() if loss is not None else ""
    if any(k in name for k in ("mse", "l1loss", "smoothl1", "huber")):
        return "regression"
    if any(k in name for k in ("crossentropy", "nll", "softmax")):
        return "classification"
    if out.ndim == 2 and out.shape[1] >= 2 and labels.dtype.kind in "iub":
        return "classification"
    return "regression"


def interpret(model, eval_data, batch_size: int = 64, num_workers: int = 0,
              class_names=None, top_k: int = 12, task: str | None = None,
              verbose: int | None = None, show: bool = True) -> Interpretation:
    """Where a trained model goes wrong (a paddle_hl extra, not in Paddle).

    Runs ``model``'s network over ``eval_data`` in batches (no gradients) and computes, for a
    classifier, the confusion matrix (counts and row-normalised), precision / recall / F1 per
    class, the most confused pairs and the highest-loss samples; for a regression model, the
    residuals, their summary (MAE, RMSE, R2, bias, max error) and the worst samples. In Jupyter
    it shows them (tables, the matrix and a gallery of the highest-loss samples titled with
    prediction, probability and truth); in a terminal it prints the tables and a summary.

    Args:
        model (paddle.Model): a Model whose network gives one output per sample: class scores
            [N, K] (logits or probabilities) or values [N] / [N, 1].
        eval_data (Dataset | DataLoader): samples ``(input, label)``.
        batch_size (int): batch size when ``eval_data`` is a Dataset. Default 64.
        num_workers (int): DataLoader workers. Default 0.
        class_names (list[str], optional): names of the classes; by default the dataset's
            (``classes``, ``label_list`` ...) or the class numbers.
        top_k (int): how many highest-loss samples to keep. Default 12.
        task (str, optional): ``'classification'`` or ``'regression'``; detected from the
            loss (``CrossEntropyLoss`` / ``MSELoss`` ...) and the output shape by default.
        verbose (int, optional): 1 shows a progress bar; by default one is shown when the
            evaluation has more than 20 batches.
        show (bool): display the view (Jupyter) or print the text form (terminal). Default
            True.

    Returns:
        Interpretation: the numbers (``confusion_matrix``, ``per_class`` ...).

    Example:
        >>> interp = paddle_hl.notebook.interpret(model, test_set)  # doctest: +SKIP
        >>> interp.confusion_matrix.shape  # doctest: +SKIP
        (10, 10)
    """
    if task not in (None, "classification", "regression"):
        raise ValueError(f"interpret: task must be 'classification', 'regression' or None, "
                         f"got {task!r}")
    if not isinstance(top_k, int) or top_k < 0:
        raise ValueError(f"interpret: top_k must be an int >= 0, got {top_k!r}")
    chosen, outs, labels, top = _evaluate(model, eval_data, batch_size, num_workers, top_k,
                                          task, verbose)
    res = Interpretation()
    res.task = chosen
    res._dataset = _views.base_dataset(eval_data)
    res.labels = np.concatenate(labels)
    if chosen == "classification":
        _classification_result(res, np.concatenate(outs), top, class_names, eval_data)
    else:
        _regression_result(res, np.concatenate(outs), top)
    _views.present(res.view(), show)
    return res


def _evaluate(model, eval_data, batch_size, num_workers, top_k, task, verbose):
    """Run ``model`` over ``eval_data`` in batches, with the predict callbacks (a progress
    bar). Returns ``(task, outputs, labels, top)``: the task (``task`` or the detected one),
    the per-batch outputs (class probabilities or float64 values) and labels, and the
    ``(loss, index, input)`` of the ``top_k`` highest losses, highest first."""
    from .callbacks import config_callbacks

    loader = model._loader(eval_data, batch_size, False, False, num_workers)
    steps = model._len(loader)
    if verbose is None:
        verbose = 1 if steps is not None and steps > 20 else 0
    cbks = config_callbacks(None, model=model, verbose=verbose, metrics=[], mode="test")
    cbks.on_begin("predict", {"steps": steps})
    outs, labels = [], []
    top = []  # (loss, index, input) of the highest losses so far
    seen = 0
    logs = {}
    chosen = task
    for step, batch in enumerate(loader):
        cbks.on_batch_begin("predict", step, logs)
        ins, lbs = model._split(batch, "eval")
        if not lbs:
            raise ValueError("interpret: eval_data must give (input, label) samples; the "
                             f"batches have {len(ins)} input(s) and no label")
        out = np.asarray(model.predict_batch(ins)[0])
        lab = _views.to_numpy(lbs[0])
        n = out.shape[0] if out.ndim else 1
        if chosen is None:
            chosen = _detect_task(out, lab, model._loss)
        out, lab, loss = _batch_losses(chosen, out, lab, n)
        outs.append(out)
        labels.append(lab)
        if top_k:
            x = _views.to_numpy(ins[0])
            worst = np.argsort(-loss, kind="stable")[:top_k]
            top += [(float(loss[i]), seen + int(i), x[i]) for i in worst]
            top.sort(key=lambda t: (-t[0], t[1]))
            del top[top_k:]
        seen += n
        logs = {"step": step, "batch_size": n}
        cbks.on_batch_end("predict", step, logs)
    cbks.on_end("predict", logs)
    if not outs:
        raise ValueError("interpret: eval_data gave no samples")
    return chosen, outs, labels, top


def _batch_losses(task, out, lab, n):
    """One batch's ``(outputs, labels, per-sample loss)``: for a classifier the class
    probabilities, int64 labels and cross-entropy; for a regression model float64 [n, d]
    values and labels and the mean squared error."""
    if task == "classification":
        if out.ndim != 2:
            raise ValueError(f"interpret: a classifier's output must be [N, K] class "
                             f"scores, got shape {list(out.shape)}")
        lab = lab.reshape(n, -1)[:, 0].astype(np.int64)
        p = _probabilities(out)
        if lab.min() < 0 or lab.max() >= p.shape[1]:
            raise ValueError(f"interpret: labels must lie in [0, {p.shape[1]}) for "
                             f"{p.shape[1]} class scores, got {lab.min()}..{lab.max()}")
        return p, lab, -np.log(np.maximum(p[np.arange(n), lab], 1e-12))
    out = out.reshape(n, -1).astype(np.float64)
    lab = lab.reshape(n, -1).astype(np.float64)
    if out.shape != lab.shape:
        raise ValueError(f"interpret: regression outputs {list(out.shape)} and labels "
                         f"{list(lab.shape)} differ in shape")
    return out, lab, ((out - lab) ** 2).mean(axis=1)


def _classification_result(res, probs, top, class_names, eval_data):
    """Fill ``res`` (its ``labels`` set) for a classifier from the class probabilities of
    all samples and the highest losses."""
    k = probs.shape[1]
    res.probabilities = probs
    res.predictions = probs.argmax(axis=1).astype(np.int64)
    res.losses = -np.log(np.maximum(probs[np.arange(len(probs)), res.labels], 1e-12))
    names = list(class_names) if class_names is not None else _views.class_names(
        eval_data, k)
    if names is not None and len(names) != k:
        raise ValueError(f"interpret: class_names has {len(names)} names for {k} classes")
    res.class_names = [str(n) for n in names] if names else [str(i) for i in range(k)]
    cm = confusion_matrix(res.labels, res.predictions, k)
    res.confusion_matrix = cm
    rows = cm.sum(axis=1, keepdims=True).astype(np.float64)
    res.normalized_confusion_matrix = np.divide(cm, rows, out=np.zeros(cm.shape),
                                                where=rows > 0)
    pc = per_class_metrics(cm)
    res.per_class = {"class": list(res.class_names), **pc}
    res.accuracy = float(np.trace(cm) / max(cm.sum(), 1))
    support = pc["support"]
    res.summary = {"accuracy": res.accuracy, "macro_f1": float(pc["f1"].mean()),
                   "weighted_f1": float((pc["f1"] * support).sum() / max(support.sum(), 1))}
    off = [(int(cm[t, p]), t, p) for t in range(k) for p in range(k)
           if t != p and cm[t, p] > 0]
    off.sort(key=lambda v: (-v[0], v[1], v[2]))
    res.most_confused = [(res.class_names[t], res.class_names[p], n) for n, t, p in off]
    for loss, idx, x in top:
        pr = probs[idx]
        pred = int(res.predictions[idx])
        res.top_losses.append({"index": idx, "loss": loss, "label": int(res.labels[idx]),
                               "prediction": pred, "probability": float(pr[pred]),
                               "true_probability": float(pr[res.labels[idx]])})
        res._samples.append((idx, x))


def _regression_result(res, pred, top):
    """Fill ``res`` (its ``labels`` set, [N, d]) for a regression model from the predictions
    of all samples and the highest losses."""
    res.predictions = pred
    res.residuals = pred - res.labels
    res.losses = (res.residuals ** 2).mean(axis=1)
    r = res.residuals.reshape(-1)
    y = res.labels.reshape(-1)
    ss_tot = float(((y - y.mean()) ** 2).sum())
    res.summary = {"mae": float(np.abs(r).mean()), "rmse": float(np.sqrt((r ** 2).mean())),
                   "r2": 1.0 - float((r ** 2).sum()) / ss_tot if ss_tot > 0 else 0.0,
                   "bias": float(r.mean()), "max_error": float(np.abs(r).max())}
    if res.predictions.shape[1] == 1:
        res.predictions = res.predictions[:, 0]
        res.labels = res.labels[:, 0]
        res.residuals = res.residuals[:, 0]
    for loss, idx, x in top:
        res.top_losses.append({"index": idx, "loss": loss,
                               "label": float(np.ravel(res.labels[idx])[0]),
                               "prediction": float(np.ravel(res.predictions[idx])[0])})
        res._samples.append((idx, x))
