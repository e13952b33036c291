"""Progress of a spawned job in Jupyter: one row per rank and the merged metrics.

Each rank of a job started by :func:`paddle_hl.distributed.spawn` from a notebook reports its
``Model.fit`` progress as tagged lines on its standard output (a :class:`RankReporter` callback
that ``Model.fit`` adds when ``PADDLE_HL_PROGRESS_REPORT`` is set). The launcher forwards the
ranks' output to the parent, where :class:`SpawnProgress` takes the tagged lines out of the
stream and draws them with the notebook progress rows of :mod:`paddle_hl.notebook.progress`:
one bar per rank with its step, loss and metrics, under a header with the merged figures (the
loss averaged over the ranks; the metrics, which data-parallel ``Model.fit`` computes on every
rank's outputs, as rank 0 reports them). Every other line goes to the cell unchanged.
"""

from __future__ import annotations

import html
import json
import os
import sys
import time

from ..hapi.callbacks import Callback

__all__ = []

REPORT_ENV = "PADDLE_HL_PROGRESS_REPORT"
TAG = "\x1epaddle_hl.progress "


def _plain(v):
    try:
        import numpy as np

        if isinstance(v, np.ndarray):
            v = v.reshape(-1).tolist()
            v = v[0] if len(v) == 1 else v
        elif isinstance(v, np.generic):
            v = v.item()
    except ImportError:
        pass
    if isinstance(v, (list, tuple)):
        v = [_plain(x) for x in v]
        return v[0] if len(v) == 1 else v
    return v if isinstance(v, (int, float, str)) or v is None else str(v)


class RankReporter(Callback):
    """Writes this rank's progress as tagged lines (at most every ``interval`` seconds, and at
    the end of every epoch and evaluation)."""

    def __init__(self, interval=0.25, stream=None):
        super().__init__()
        self.interval = interval
        self.stream = stream
        self._last = -1e18
        self._epoch = 0
        self._rank = int(os.environ.get("PADDLE_TRAINER_ID", "0"))

    def _emit(self, record, force=False):
        now = time.monotonic()
        if not force and now - self._last < self.interval:
            return
        self._last = now
        record["rank"] = self._rank
        out = self.stream or sys.stdout
        out.write(TAG + json.dumps(record) + "\n")
        out.flush()

    @staticmethod
    def _metrics(logs):
        return {k: _plain(v) for k, v in (logs or {}).items()
                if k not in ("step", "batch_size")}

    def on_train_begin(self, logs=None):
        self._emit({"event": "begin", "epochs": self.params.get("epochs"),
                    "steps": self.params.get("steps")}, force=True)

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch
        self._emit({"event": "epoch", "mode": "train", "epoch": epoch,
                    "steps": self.params.get("steps")}, force=True)

    def on_train_batch_end(self, step, logs=None):
        steps = self.params.get("steps")
        self._emit({"event": "step", "mode": "train", "epoch": self._epoch, "step": step + 1,
                    "steps": steps, "logs": self._metrics(logs)},
                   force=steps is not None and step + 1 >= steps)

    def on_epoch_end(self, epoch, logs=None):
        self._emit({"event": "done", "mode": "train", "epoch": epoch,
                    "logs": self._metrics(logs)}, force=True)

    def on_eval_begin(self, logs=None):
        self._emit({"event": "epoch", "mode": "eval", "epoch": self._epoch,
                    "steps": (logs or {}).get("steps")}, force=True)

    def on_eval_batch_end(self, step, logs=None):
        self._emit({"event": "step", "mode": "eval", "epoch": self._epoch, "step": step + 1,
                    "logs": self._metrics(logs)})

    def on_eval_end(self, logs=None):
        self._emit({"event": "done", "mode": "eval", "epoch": self._epoch,
                    "logs": self._metrics(logs)}, force=True)


def merge(records):
    """The merged figures of the ranks' latest records: the mean loss over the ranks and the
    other metrics as rank 0 reports them (data-parallel metrics are already global)."""
    losses = []
    merged = {}
    for rank in sorted(records):
        logs = records[rank].get("logs") or {}
        loss = logs.get("loss")
        if isinstance(loss, list):
            loss = loss[0] if loss else None
        if isinstance(loss, (int, float)):
            losses.append(float(loss))
        if rank == min(records):
            merged.update({k: v for k, v in logs.items() if k != "loss"})
    if losses:
        merged = {"loss": sum(losses) / len(losses), **merged}
    return merged


def _fmt(v):
    if isinstance(v, float):
        return f"{v:.4f}"
    if isinstance(v, list):
        return " ".join(_fmt(x) for x in v)
    return str(v)


class SpawnProgress:
    """The parent's side: a stream that draws the tagged lines as widgets and passes the rest
    to ``out``.

    Args:
        nprocs (int): the number of ranks.
        out: where the other lines go (the notebook cell's stream).
        display (callable, optional): shows a widget (IPython's ``display`` by default).
    """

    def __init__(self, nprocs, out, display=None):
        import ipywidgets as widgets

        from ..notebook import _env
        from ..notebook.progress import _Row

        self._widgets = widgets
        self._Row = _Row
        self.nprocs = nprocs
        self.out = out
        self._buf = ""
        self.records = {}
        self.rows = {}
        self.history = []  # merged figures at the end of each epoch / evaluation
        self._finished = {}
        self.header = widgets.HTML(f"<b>{nprocs} processes</b>")
        self.box = widgets.VBox([self.header])
        (display or _env.display)(self.box)

    def write(self, s):
        self._buf += s
        while "\n" in self._buf:
            line, self._buf = self._buf.split("\n", 1)
            pos = line.find(TAG)
            if pos < 0:
                self.out.write(line + "\n")
                continue
            if pos:
                self.out.write(line[:pos] + "\n")
            try:
                self.handle(json.loads(line[pos + len(TAG):]))
            except (ValueError, KeyError, TypeError):
                self.out.write(line + "\n")
        return len(s)

    def flush(self):
        self.out.flush()

    def handle(self, rec):
        """Draw one rank's record."""
        rank = int(rec["rank"])
        now = time.perf_counter()
        event = rec["event"]
        if event == "begin":
            return
        if event == "epoch":
            phase = "eval" if rec["mode"] == "eval" else f"ep {rec['epoch'] + 1}"
            title = f"rank {rank} {phase}"
            row = self._Row(title, rec.get("steps"), now)
            old = self.rows.get(rank)
            self.rows[rank] = row
            if old is not None:
                old.draw(now, done=True)
            self.box.children = (self.header,) + tuple(self.rows[r].box
                                                     for r in sorted(self.rows))
            self.records[rank] = rec
            return
        row = self.rows.get(rank)
        if row is None:
            return
        logs = rec.get("logs") or {}
        if event == "step":
            if rec["step"] > row.step:
                row.per_step = (now - row.t0) / rec["step"]
            row.step = rec["step"]
        row.items = [(k, _fmt(v)) for k, v in logs.items()]
        row.draw(now, done=event == "done", style="success" if event == "done" else None)
        self.records[rank] = rec
        merged = merge({r: v for r, v in self.records.items()
                        if v.get("mode") == rec.get("mode")})
        what = "evaluation" if rec.get("mode") == "eval" else f"epoch {rec['epoch'] + 1}"
        self.header.value = (f"<b>{self.nprocs} processes</b> &middot; {what} &middot; merged: "
                             + " &middot; ".join(f"{html.escape(k)}: {html.escape(_fmt(v))}"
                                                 for k, v in merged.items()))
        if event == "done":
            key = (rec.get("mode"), rec["epoch"])
            finished = self._finished.setdefault(key, {})
            finished[rank] = rec
            if len(finished) == self.nprocs:
                self.history.append({"mode": key[0], "epoch": key[1], **merge(finished)})
