"""Find a learning rate before training: the range test behind ``Model.lr_find`` (a paddle_hl
extra, not in Paddle).

The test trains from the current weights with a learning rate that grows exponentially from
``start_lr`` to ``end_lr`` over at most ``num_iters`` steps, records the loss, smooths it (an
exponential moving average with bias correction) and stops once the smoothed loss passes
``diverge`` times its best value. Afterwards everything the steps changed is put back bit for
bit: parameters, buffers and gradients, the optimizer's accumulators, step counters and LR
scheduler, a GradScaler, the metrics, the layers' train/eval modes, the DataLoader sampler's
epoch and the random generators (paddle_hl's, NumPy's global one and Python's).

The suggestion is read off the smoothed curve (see :func:`suggest_lr`); the view shows the curve
with the suggested rate and the reason for it, and :func:`lr_find` returns the result.
"""

from __future__ import annotations

import copy
import math
import random

import numpy as np

from ..notebook import _views

__all__ = []  # implementation module: paddle_hl.notebook gives the names

_RULES = ("middle", "steepest", "min/10")


def smooth_losses(losses, beta: float = 0.85) -> np.ndarray:
    """The exponential moving average of ``losses`` with bias correction:
    ``avg_i = beta * avg_{i-1} + (1 - beta) * loss_i``, reported as ``avg_i / (1 - beta**i)``.

    Args:
        losses (Sequence[float]): the raw losses in order.
        beta (float): the smoothing factor in ``[0, 1)``.

    Returns:
        np.ndarray: float64, same length.
    """
    out = np.empty(len(losses), dtype=np.float64)
    avg = 0.0
    for i, v in enumerate(losses):
        avg = beta * avg + (1.0 - beta) * float(v)
        out[i] = avg / (1.0 - beta ** (i + 1))
    return out


def suggest_lr(lrs, smoothed, rule: str = "middle"):
    """A learning rate read off a range test's smoothed loss curve.

    Rules:
        ``'middle'`` (the default): the middle (on the log scale) of the loss's descent, between
        the rates where the smoothed loss has made 20% and 80% of its drop from the starting
        level (the median of the first tenth of the steps) to its minimum. Well inside the
        range where the loss falls, and a decade or more below the rate at the minimum, which
        a short test overestimates: training for a whole epoch at the rate where the test's
        loss is lowest often diverges.
        ``'steepest'``: where the smoothed loss falls fastest per decade of learning rate
        (before its minimum, after the first tenth of the steps, where the average settles).
        ``'min/10'``: a tenth of the rate at the minimum of the smoothed loss.

    Args:
        lrs (Sequence[float]): the learning rates tried, increasing.
        smoothed (Sequence[float]): the smoothed losses.
        rule (str): one of ``'middle'``, ``'steepest'``, ``'min/10'``.

    Returns:
        tuple[float, str, int]: the rate, the reason (a sentence) and the index of the point
        on the curve nearest the rate.
    """
    if rule not in _RULES:
        raise ValueError(f"suggest_lr: rule must be one of {_RULES}, got {rule!r}")
    lrs = np.asarray(lrs, dtype=np.float64)
    loss = np.asarray(smoothed, dtype=np.float64)
    if len(lrs) != len(loss) or len(lrs) < 2:
        raise ValueError(f"suggest_lr: need at least 2 points with one loss per rate, got "
                         f"{len(lrs)} rates and {len(loss)} losses")
    finite = np.isfinite(loss)
    lrs, loss = lrs[finite], loss[finite]
    if len(lrs) < 2:
        raise ValueError("suggest_lr: the loss was not finite at any tried rate")
    best = int(np.argmin(loss))

    def nearest(lr):
        return int(np.argmin(np.abs(np.log(lrs / lr))))

    head = max(3, len(loss) // 10)
    if rule == "middle":
        level = float(np.median(loss[:head]))
        drop = level - loss[best]
        if drop > 0 and best > 0:
            before = loss[:best + 1]
            i0 = int(np.argmax(before <= level - 0.2 * drop))
            i1 = int(np.argmax(before <= level - 0.8 * drop))
            if i1 > i0:
                lr = float(np.sqrt(lrs[i0] * lrs[i1]))
                return lr, (f"the middle of the loss's descent: it makes 20% to 80% of its drop "
                            f"({level:.3g} to {loss[best]:.3g}) between {lrs[i0]:.1e} and "
                            f"{lrs[i1]:.1e}"), nearest(lr)
        rule = "min/10"  # no clear descent: the fallback below
    if rule == "min/10":
        lr = lrs[best] / 10.0
        return lr, (f"a tenth of {lrs[best]:.2e}, where the smoothed loss is lowest "
                    f"({loss[best]:.4g})"), nearest(lr)
    x = np.log10(lrs)
    grad = np.gradient(loss, x)
    lo = min(head, best)
    i = lo + int(np.argmin(grad[lo:best + 1]))
    return lrs[i], (f"the steepest descent of the smoothed loss ({grad[i]:.3g} per "
                    f"decade of learning rate)"), i


class LRFindResult:
    """What the range test found.

    Attributes:
        lrs (np.ndarray): the learning rate of each step.
        losses (np.ndarray): the raw loss of each step.
        smoothed (np.ndarray): the smoothed loss.
        suggestion (float): the suggested learning rate.
        reason (str): why (the rule, in words).
        rule (str): the rule used.
        stopped (str): why the test ended (``'diverged'``, ``'num_iters'``, ``'end_lr'``,
            ``'data'``).
        index (int): the point of the curve at the suggestion.
    """

    def __init__(self, lrs, losses, smoothed, suggestion, reason, rule, stopped, index):
        self.lrs, self.losses, self.smoothed = lrs, losses, smoothed
        self.suggestion, self.reason, self.rule = float(suggestion), reason, rule
        self.stopped, self.index = stopped, index

    def __repr__(self):
        return self.text()

    def text(self) -> str:
        """The terminal form: the suggestion and a table of the curve at a few points."""
        n = len(self.lrs)
        picks = sorted(set(np.linspace(0, n - 1, min(n, 12)).round().astype(int).tolist()
                           + [self.index]))
        rows = [[f"{self.lrs[i]:.2e}", float(self.losses[i]), float(self.smoothed[i]),
                 "<- suggested" if i == self.index else ""] for i in picks]
        return "\n".join([
            f"lr_find: suggested learning rate {self.suggestion:.2e} ({self.reason}); "
            f"{n} steps from {self.lrs[0]:.1e} to {self.lrs[-1]:.1e}, stopped: {self.stopped}",
            _views.text_table(["lr", "loss", "smoothed", ""], rows)])

    def figure(self):
        """The curve as a matplotlib figure (smoothed loss against the rate, log axis)."""
        fig = _views.figure(6.4, 3.4)
        ax = fig.subplots()
        ax.plot(self.lrs, self.losses, color="#4e79a7", alpha=0.3, lw=0.8, label="loss")
        ax.plot(self.lrs, self.smoothed, color="#4e79a7", lw=1.8, label="smoothed loss")
        ax.axvline(self.suggestion, color="#e15759", lw=1, ls="--")
        ax.plot([self.lrs[self.index]], [self.smoothed[self.index]], "o", color="#e15759",
                label=f"suggested {self.suggestion:.1e}")
        ax.set_xscale("log")
        ax.set_xlabel("learning rate (log scale)")
        ax.set_ylabel("loss")
        lo = float(np.nanmin(self.smoothed))
        hi = float(np.nanmax(self.smoothed[: max(self.index + 1, len(self.smoothed) // 2)]))
        top = hi + 0.15 * (hi - lo) if hi > lo else lo + 1.0
        ax.set_ylim(lo - 0.05 * (top - lo), top)  # the tail past divergence leaves the frame
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="lower left", frameon=False)
        fig.tight_layout()
        return fig

    def view(self) -> _views.View:
        """HTML: the suggestion with its reason, and the curve."""
        parts = [_views.para(f"Suggested learning rate: {self.suggestion:.2e}", bold=True),
                 _views.para(f"Reason: {self.reason}. {len(self.lrs)} steps from "
                             f"{self.lrs[0]:.1e} to {self.lrs[-1]:.1e} (stopped: "
                             f"{self.stopped}); the model and optimizer were restored.",
                             muted=True)]
        if _views.have_matplotlib():
            parts.append(_views.fig_img(self.figure(), "learning rate range test"))
        else:
            parts.append(f"<pre style='color:{_views.FG}'>{self.text()}</pre>")
        return _views.View("lrfind", "".join(parts), self.text())


# ---------------------------------------------------------------------- saving and restoring

_OPT_SKIP = ("_param_groups", "_parameter_list", "_grad_clip", "regularization", "_work")


class _Snapshot:
    """Everything a few training steps change, saved so that it can be put back bit for bit."""

    def __init__(self, model, loader):
        from ..framework import random as prandom
        from ..optimizer.lr import LRScheduler

        net, opt = model.network, model._optimizer
        self.tensors = []
        for t in list(net.parameters()) + list(net.buffers()):
            grad = getattr(t, "_grad", None)
            ver = getattr(t, "_ver", None)
            self.tensors.append((t, t._data.copy(), grad,
                                 None if grad is None else grad._data.copy(),
                                 None if ver is None else ver.v))
        self.modes = [(layer, layer.training) for layer in net.sublayers(include_self=True)]
        keep = {id(t): t for t, *_ in self.tensors}
        keep[id(opt)] = opt
        self.opt = opt
        self.opt_state = {k: copy.deepcopy(v, dict(keep)) for k, v in opt.__dict__.items()
                          if k not in _OPT_SKIP and k != "_learning_rate"}
        self.lr = opt._learning_rate
        self.sched = None
        if isinstance(self.lr, LRScheduler):
            self.sched = copy.deepcopy(self.lr.__dict__, dict(keep))
        self.others = []  # the scaler and the metrics: plain state
        for obj in [model._scaler, *model._metrics]:
            if obj is not None:
                self.others.append((obj, copy.deepcopy(obj.__dict__, dict(keep))))
        self.model_attrs = {k: copy.deepcopy(getattr(model, k)) for k in
                            ("_forwarded", "_seen_specs", "_accumulate", "stop_training")
                            if hasattr(model, k)}
        self.model = model
        sampler = getattr(loader, "batch_sampler", None)
        self.sampler = (sampler, sampler.epoch) if hasattr(sampler, "epoch") else None
        self.rng_cpu = prandom.get_rng_state("cpu")
        try:
            self.rng_gpu = prandom.get_cuda_rng_state()
        except Exception:  # no GPU backend
            self.rng_gpu = None
        self.np_rng = np.random.get_state()
        self.py_rng = random.getstate()

    def restore(self):
        from ..framework import random as prandom

        for t, data, grad, gdata, ver in self.tensors:
            t._data[...] = data
            if ver is not None:
                t._ver.v = ver
            if grad is None:
                t._grad = None
            else:
                grad._data[...] = gdata
                t._grad = grad
        for layer, training in self.modes:
            layer.training = training
        opt = self.opt
        for k in [k for k in opt.__dict__ if k not in _OPT_SKIP and k not in self.opt_state
                  and k != "_learning_rate"]:
            del opt.__dict__[k]
        opt.__dict__.update(self.opt_state)  # the saved copies, owned by nobody else
        opt._learning_rate = self.lr
        if self.sched is not None:
            self.lr.__dict__.clear()
            self.lr.__dict__.update(self.sched)
        for obj, state in self.others:
            obj.__dict__.clear()
            obj.__dict__.update(state)
        for k, v in self.model_attrs.items():
            setattr(self.model, k, v)
        if self.sampler is not None:
            self.sampler[0].epoch = self.sampler[1]
        prandom.set_rng_state(self.rng_cpu, "cpu")
        if self.rng_gpu:
            prandom.set_cuda_rng_state(self.rng_gpu)
        np.random.set_state(self.np_rng)
        random.setstate(self.py_rng)


def lr_find(model, train_data, batch_size: int = 64, start_lr: float = 1e-7,
            end_lr: float = 10.0, num_iters: int = 100, smooth: float = 0.85,
            diverge: float = 4.0, rule: str = "middle", shuffle: bool = True,
            num_workers: int = 0, show: bool = True) -> LRFindResult:
    """The learning rate range test on a prepared ``paddle.Model`` (a paddle_hl extra, not in
    Paddle; ``Model.lr_find`` calls it and returns the suggestion).

    Trains from the current weights for at most ``num_iters`` steps (going over the data again
    when it is shorter) with the learning rate growing exponentially from ``start_lr`` to
    ``end_lr``, and stops early once the smoothed loss exceeds ``diverge`` times the best one
    (or is not finite). Then puts back the parameters, buffers, gradients, optimizer state
    (accumulators, step counters, LR scheduler), GradScaler, metrics, layer modes and random
    generators exactly as they were. The optimizer's learning rate may be a float or an
    LRScheduler (the scheduler is neither stepped nor changed).

    Args:
        model (paddle.Model): a Model after ``prepare(optimizer, loss)``.
        train_data (Dataset | DataLoader): training samples.
        batch_size (int): batch size when ``train_data`` is a Dataset; use the one you will
            train with. Default 64.
        start_lr (float): the first learning rate. Default 1e-7.
        end_lr (float): the last learning rate. Default 10.
        num_iters (int): at most this many steps. Default 100.
        smooth (float): the moving average's factor in ``[0, 1)``. Default 0.85: about the
            last 7 steps, under a decade of learning rate at the default range, so the
            curve does not lag the rates it is plotted against.
        diverge (float): stop when the smoothed loss exceeds this many times the best.
            Default 4.
        rule (str): how to read the suggestion off the curve: ``'middle'`` (default: the
            middle of the loss's descent), ``'steepest'`` or ``'min/10'`` (see
            :func:`suggest_lr`).
        shuffle (bool): shuffle a Dataset. Default True.
        num_workers (int): DataLoader workers. Default 0.
        show (bool): show the curve (Jupyter) or print the text form (terminal). Default True.

    Returns:
        LRFindResult: the curve, the suggestion and its reason.
    """
    where = "lr_find"
    if model._optimizer is None or model._loss is None:
        raise RuntimeError(f"{where}: call Model.prepare(optimizer, loss) first")
    for name, v in (("start_lr", start_lr), ("end_lr", end_lr)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
            raise ValueError(f"{where}: {name} must be a positive number, got {v!r}")
    if end_lr <= start_lr:
        raise ValueError(f"{where}: end_lr ({end_lr}) must be above start_lr ({start_lr})")
    if not isinstance(num_iters, int) or isinstance(num_iters, bool) or num_iters < 2:
        raise ValueError(f"{where}: num_iters must be an int >= 2, got {num_iters!r}")
    if not 0 <= smooth < 1:
        raise ValueError(f"{where}: smooth must lie in [0, 1), got {smooth!r}")
    if not diverge > 1:
        raise ValueError(f"{where}: diverge must be above 1, got {diverge!r}")
    if rule not in _RULES:
        raise ValueError(f"{where}: rule must be one of {_RULES}, got {rule!r}")
    loader = model._loader(train_data, batch_size, shuffle, False, num_workers)
    if model._len(loader) == 0:
        raise ValueError(f"{where}: train_data gave no batches")
    snap = _Snapshot(model, loader)
    opt = model._optimizer
    ratio = (end_lr / start_lr) ** (1.0 / (num_iters - 1))
    lrs, losses, smoothed = [], [], []
    best = math.inf
    avg = 0.0
    stopped = "num_iters"
    try:
        step = 0
        while step < num_iters:
            got = False
            for batch in loader:
                got = True
                lr = start_lr * ratio ** step
                opt._learning_rate = float(lr)
                ins, labels = model._split(batch, "train")
                res = model.train_batch(ins, labels)
                loss_list = res[0] if model._metrics else res
                loss = float(sum(float(np.asarray(v).reshape(-1)[0]) for v in loss_list))
                lrs.append(lr)
                losses.append(loss)
                step += 1
                if not math.isfinite(loss):
                    smoothed.append(math.inf)
                    stopped = "diverged"
                    break
                avg = smooth * avg + (1 - smooth) * loss
                value = avg / (1 - smooth ** step)
                smoothed.append(value)
                best = min(best, value)
                if step > 1 and value > diverge * best:
                    stopped = "diverged"
                    break
                if step >= num_iters:
                    break
            if not got:
                stopped = "data"
                break
            if stopped == "diverged":
                break
    finally:
        snap.restore()
    if len(lrs) >= num_iters and stopped == "num_iters" and lrs[-1] >= end_lr * 0.999:
        stopped = "end_lr"
    # the points past divergence do not count for the suggestion
    cut = len(smoothed)
    while cut > 2 and not math.isfinite(smoothed[cut - 1]):
        cut -= 1
    if cut < 2:
        raise FloatingPointError(f"{where}: the loss was not finite from the first steps "
                                 f"(losses {losses[:3]}); lower start_lr or check the data")
    suggestion, reason, index = suggest_lr(lrs[:cut], smoothed[:cut], rule)
    result = LRFindResult(np.asarray(lrs), np.asarray(losses), np.asarray(smoothed),
                          suggestion, reason, rule, stopped, min(index, cut - 1))
    _views.present(result.view(), show)
    return result
