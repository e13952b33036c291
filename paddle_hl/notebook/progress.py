"""The Jupyter progress display of ``Model.fit`` / ``evaluate`` / ``predict``.

``hapi.progressbar.make_display`` builds a :class:`NotebookDisplay` inside a Jupyter kernel (and
falls back to the text display when this module cannot be imported, e.g. without ipywidgets).
One widget block is shown per run: a title, one progress bar per epoch / evaluation / prediction
with the live loss, metrics, step time and ETA, and (for ``fit``) a live matplotlib chart of the
loss and metrics per step, per epoch and per evaluation. Everything is updated in place.

``verbose`` keeps Paddle's meaning: 0 shows nothing (the display is never built), 1 the widgets,
2 the widgets plus Paddle's log lines (printed below them every ``log_freq`` steps).

Updates are throttled so that the display costs under 1% of a training step: the bars are
redrawn at most every ``interval`` seconds (plus the final state of each bar), and the chart at
most every ``chart_interval`` seconds, both only while the time spent displaying stays under
``budget`` (a fraction, default 0.8%) of the wall time since the run began; each epoch end and
evaluation redraws it once more when that fits the same budget, and the end of ``fit`` always
shows the final curves. The one-off setup (building the widgets, the first
matplotlib import and layout) is reported apart as ``setup_s``. ``stats`` (and
:func:`last_stats`) report the cost.
"""

from __future__ import annotations

import html
import time

import ipywidgets as widgets  # imported here on purpose: without it make_display falls back

from ..hapi.progressbar import TextDisplay, format_time
from . import _env
from .charts import scalars

__all__ = []

_LAST = None  # the most recent display, for last_stats()
_MUTED = "color:var(--jp-ui-font-color2,#777)"


def last_stats() -> dict | None:
    """The ``stats`` of the most recent :class:`NotebookDisplay` (None if there is none).

    Returns:
        dict | None: ``updates`` (calls of ``update``), ``bar_draws``, ``chart_renders`` (of
        which ``chart_full_renders`` redrew the axes, the others only blitted the lines),
        ``setup_s`` (seconds spent building the widget block once per run, including the
        first import of matplotlib), ``spent_s`` (seconds spent in all later display calls),
        ``chart_s`` (the part of ``spent_s`` spent rendering the chart),
        ``elapsed_s`` (seconds since the display started) and ``overhead``
        (``spent_s / elapsed_s``).
    """
    return None if _LAST is None else _LAST.stats


def _dedupe(items):
    seen = set()
    out = []
    for k, v in items:
        if k not in seen:
            seen.add(k)
            out.append((k, v))
    return out


def _seconds(s: float) -> str:
    s = int(round(s))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}:{s % 60:02d}"
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


class _Row:
    """One progress bar: a label, the bar, and a status line."""

    def __init__(self, title, steps, now):
        self.steps = steps
        self.step = 0
        self.items = []
        self.per_step = 0.0
        self.t0 = now
        self.samples = None
        # two widgets per bar (each widget is a few comm models to create in the front end)
        self.bar = widgets.IntProgress(value=0, min=0, max=max(int(steps or 1), 1),
                                       description=title, bar_style="info",
                                       style={"description_width": "7em"},
                                       layout=widgets.Layout(width="45%"))
        self.status = widgets.HTML("")
        self.box = widgets.HBox([self.bar, self.status])

    def text(self, now, done):
        parts = [f"{self.step}/{self.steps}" if self.steps else f"step {self.step}"]
        parts += [f"{html.escape(k)}: {html.escape(str(v))}" for k, v in self.items]
        if self.step:
            parts.append(format_time(self.per_step))
        if done:
            parts.append(f"<span style='{_MUTED}'>{_seconds(now - self.t0)}</span>")
            if self.samples is not None:
                parts.append(f"{self.samples} samples")
        elif self.steps and self.step:
            eta = self.per_step * (self.steps - self.step)
            parts.append(f"<span style='{_MUTED}'>ETA {_seconds(eta)}</span>")
        return " &middot; ".join(parts)

    def draw(self, now, done=False, style=None):
        if self.steps:
            self.bar.value = min(self.step, self.bar.max)
        elif done:
            self.bar.value = self.bar.max
        if style is not None:
            self.bar.bar_style = style
        self.status.value = self.text(now, done)


class NotebookDisplay:
    """Live ipywidgets progress bars and a matplotlib chart for the high-level API.

    Implements the display interface of ``hapi.progressbar.TextDisplay`` (``train_begin``,
    ``epoch_begin``, ``phase_begin``, ``update``, ``epoch_end``, ``phase_end``, ``train_end``).

    Args:
        verbose (int): 1 shows the widgets, 2 also prints Paddle's log lines.
        display (callable, optional): shows a widget (IPython's ``display`` by default).
        clock (callable, optional): the time source (``time.perf_counter``).
        interval (float, optional): minimum seconds between two redraws of a bar. Default 0.5.
        chart_interval (float, optional): minimum seconds between two chart renders. Default 2.
        budget (float, optional): the largest fraction of the wall time that throttled chart
            renders may take. Default 0.008.
        max_rows (int, optional): bars kept on screen; older ones are folded away. Default 12.
        chart (bool, optional): draw the live chart during ``fit``. Default True.
    """

    def __init__(self, verbose, display=None, clock=time.perf_counter, interval=0.5,
                 chart_interval=2.0, budget=0.008, max_rows=12, chart=True):
        global _LAST
        self.verbose = verbose
        self._show = display or _env.display
        self._clock = clock
        self.interval = interval
        self.chart_interval = chart_interval
        self.budget = budget
        self.max_rows = max_rows
        self._want_chart = chart
        self._log = TextDisplay(2) if verbose == 2 else None
        self._start = clock()
        self._spent = 0.0
        self._setup = 0.0
        self._chart_s = 0.0
        self._updates = 0
        self._bar_draws = 0
        self.box = None
        self.chart = None
        self._row = None
        self._rows = None
        self._hidden = 0
        self._training = False
        self._base = 0  # global steps of the finished epochs
        self._epoch_losses = []
        self._metric_names = []
        self._last_bar = -1e18
        self._last_chart = -1e18
        self._chart_cost = {False: 0.01, True: 0.08}  # blit / full render, seconds
        self._bar_cost = 0.0005
        self._dirty = False
        _LAST = self

    # ------------------------------------------------------------------ bookkeeping
    @property
    def stats(self) -> dict:
        """What the display cost so far (see :func:`last_stats`)."""
        elapsed = max(self._clock() - self._start, 1e-9)
        return {"updates": self._updates, "bar_draws": self._bar_draws,
                "chart_renders": self.chart.renders if self.chart is not None else 0,
                "chart_full_renders": self.chart.full_renders if self.chart is not None else 0,
                "setup_s": self._setup, "chart_s": self._chart_s, "spent_s": self._spent,
                "elapsed_s": elapsed,
                "overhead": self._spent / elapsed}

    def _new_box(self, title, with_chart, total_steps=None):
        self._finish_rows()
        self._header = widgets.HTML(title)
        self._rows = widgets.VBox([])
        self._more = widgets.HTML("")
        self._hidden = 0
        self._row = None
        self.chart = None
        parts = [self._header, self._more, self._rows]
        if with_chart and self._want_chart:
            try:
                from .charts import LiveChart

                self.chart = LiveChart(metrics=bool(self._metric_names),
                                       total_steps=total_steps)
                parts.append(self.chart.widget)
            except ImportError as e:  # matplotlib missing: bars only, and say why
                parts.append(widgets.HTML(f"<span style='{_MUTED}'>(no live chart: "
                                          f"{html.escape(str(e))})</span>"))
        self.box = widgets.VBox(parts)
        self._show(self.box)

    def _add_row(self, title, steps):
        now = self._clock()
        if self._row is not None:
            self._row.draw(now, done=True)
        row = _Row(title, steps, now)
        children = list(self._rows.children) + [row.box]
        if len(children) > self.max_rows:  # fold the oldest bars away
            self._hidden += len(children) - self.max_rows
            children = children[-self.max_rows:]
            self._more.value = f"<span style='{_MUTED}'>... {self._hidden} earlier</span>"
        self._rows.children = tuple(children)
        self._row = row
        row.draw(now)
        self._bar_draws += 1
        self._last_bar = now

    def _finish_rows(self):
        if self._row is not None:
            self._row.draw(self._clock(), done=True)
            self._row = None

    def _affordable(self, now):
        """Whether the next chart render fits the time budget (a blit nearly always does)."""
        cost = self._chart_cost[self.chart.needs_full()]
        return self._spent + cost <= self.budget * (now - self._start)

    def _render_chart(self, now):
        full = self.chart.needs_full()
        t = self._clock()
        self.chart.render()
        # what the next throttled render will cost, as measured for its kind
        self._chart_cost[full] = self._clock() - t
        self._chart_s += self._chart_cost[full]
        self._last_chart = now
        self._dirty = False

    # ------------------------------------------------------------------ display interface
    def train_begin(self, epochs, params):
        t0 = self._clock()
        if self._log is not None:
            self._log.train_begin(epochs, params)
        params = params or {}
        self._metric_names = [m for m in params.get("metrics", []) if m != "loss"]
        steps = params.get("steps")
        total = epochs * steps if epochs and steps else None
        what = [f"{epochs} epoch{'s' if epochs != 1 else ''}" if epochs else None,
                f"{steps} steps per epoch" if steps else None]
        title = "<b>Training</b>" + "".join(f" &middot; {w}" for w in what if w)
        self._training = True
        self._base = 0
        self._new_box(title, with_chart=True, total_steps=total)
        # building the block (and importing matplotlib the first time) is a one-off: it is
        # reported as setup_s and does not eat the budget of the throttled updates
        self._setup += self._clock() - t0

    def epoch_begin(self, epoch, epochs, steps):
        t0 = self._clock()
        if self._log is not None:
            self._log.epoch_begin(epoch, epochs, steps)
        if self.box is None:
            self._new_box("<b>Training</b>", with_chart=False)
        self._epoch_losses = []
        title = f"Epoch {epoch + 1}/{epochs}" if epochs else f"Epoch {epoch + 1}"
        self._add_row(title, steps)
        self._spent += self._clock() - t0

    def phase_begin(self, mode, steps):
        t0 = self._clock()
        if self._log is not None:
            self._log.phase_begin(mode, steps)
        title = "Eval" if mode == "eval" else "Predict"
        if not self._training or self.box is None:
            self._new_box(f"<b>{'Evaluation' if mode == 'eval' else 'Prediction'}</b>",
                          with_chart=False)
        self._add_row(title, steps)
        self._spent += self._clock() - t0

    def update(self, mode, step, steps, items, per_step, logs, force=False):
        now = self._clock()
        self._updates += 1
        if self._log is not None:
            self._log.update(mode, step, steps, items, per_step, logs, force)
        row = self._row
        if row is not None:
            row.step = step
            if steps and not row.steps:
                row.steps = steps
                row.bar.max = max(int(steps), 1)
            row.items = _dedupe(items)
            row.per_step = per_step
            if force or (now - self._last_bar >= self.interval and self._spent + self._bar_cost
                         <= self.budget * (now - self._start)):
                t = self._clock()
                row.draw(now)
                self._bar_cost = self._clock() - t
                self._bar_draws += 1
                self._last_bar = now
        chart = self.chart
        if chart is not None and mode == "train":
            self._record(self._base + step, logs, "step")
            if (not force and now - self._last_chart >= self.chart_interval
                    and self._affordable(now)):
                self._render_chart(now)
        self._spent += self._clock() - now

    def _record(self, x, logs, kind):
        chart = self.chart
        losses = scalars(logs.get("loss", []))
        for j, v in enumerate(losses):
            chart.add("loss", "loss" if len(losses) == 1 else f"loss{j}", kind, x, v)
        if kind == "step" and losses:
            self._epoch_losses.append(losses)
        for name in self._metric_names:
            if name in logs:
                vals = scalars(logs[name])
                for j, v in enumerate(vals):
                    chart.add("metric", name if len(vals) == 1 else f"{name}{j}", kind, x, v)
        self._dirty = True

    def epoch_end(self, epoch, logs):
        t0 = self._clock()
        row = self._row
        if row is not None:
            complete = not row.steps or row.step >= row.steps
            row.draw(t0, done=True, style="success" if complete else "warning")
            self._bar_draws += 1
            self._base += row.step
            self._row = None
        if self.chart is not None:
            logs = dict(logs or {})
            if self._epoch_losses:  # the epoch's marker is the mean of its logged step losses
                n = len(self._epoch_losses[0])
                cols = [[ls[j] for ls in self._epoch_losses if len(ls) == n] for j in range(n)]
                logs["loss"] = [sum(c) / len(c) for c in cols]
            self._record(self._base, logs, "epoch")
            if self._affordable(t0):
                self._render_chart(t0)
        if self._log is not None:
            self._log.epoch_end(epoch, logs)
        self._spent += self._clock() - t0

    def phase_end(self, mode, samples, logs):
        t0 = self._clock()
        row = self._row
        if row is not None:
            row.samples = samples
            row.draw(t0, done=True, style="success")
            self._bar_draws += 1
            self._row = None
        if mode == "eval" and self._training and self.chart is not None and logs:
            self._record(self._base, logs, "eval")
            if self._affordable(t0):
                self._render_chart(t0)
        if self._log is not None:
            self._log.phase_end(mode, samples, logs)
        if not self._training:
            self.box = None  # a later evaluate/predict call gets its own block
        self._spent += self._clock() - t0

    def train_end(self, logs):
        t0 = self._clock()
        self._finish_rows()
        if self.chart is not None and self._dirty:
            self._render_chart(t0)
        if self._log is not None:
            self._log.train_end(logs)
        self._training = False
        self.box = None
        self._spent += self._clock() - t0
