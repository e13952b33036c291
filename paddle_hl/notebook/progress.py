"""The Jupyter progress display of ``Model.fit`` / ``evaluate`` / ``predict``.

``hapi.progressbar.make_display`` builds a :class:`NotebookDisplay` inside a Jupyter kernel (and
falls back to the text display when this module cannot be imported, e.g. without ipywidgets).
One widget block is shown per run: a header, one progress bar per epoch / evaluation /
prediction with the live loss, metrics, step time and ETA, the messages callbacks print while
the run goes (EarlyStopping, ModelCheckpoint, Paddle's log lines with ``verbose=2``), and (for
``fit``) a live chart of the loss and metrics per step, per epoch and per evaluation.
Everything is updated in place.

When a run ends, the header says how it ended (finished, stopped early by a callback, stopped
at ``num_iters``) and a static record is displayed under the block: an HTML table of the epochs
and evaluations with their metrics and the final chart as an SVG image. A notebook exported to
HTML, opened on GitHub or reopened without a kernel keeps that record.

Updates are throttled so that the display costs about 1% of a training step: the bars are
redrawn at most every ``interval`` seconds (plus the final state of each bar), and the chart at
most every ``chart_interval`` seconds while the time spent displaying stays under ``budget`` of
the wall time since the run began. Every epoch end and every evaluation redraws the chart
regardless, so the picture never lags the bars by more than the throttle interval. ``stats``
(and :func:`last_stats`) report the cost.
"""

from __future__ import annotations

import html
import time

import ipywidgets as widgets  # imported here on purpose: without it make_display falls back

from . import _env
from ._env import format_time
from .charts import LiveChart, add_record, scalars
from .tables import HTMLTable

__all__ = []

_LAST = None  # the most recent display, for last_stats()
_MUTED = "color:var(--jp-ui-font-color2,#616161)"
_STATUS = ("white-space:nowrap;overflow:hidden;text-overflow:ellipsis;"
           "font-family:var(--jp-code-font-family,monospace);font-size:12px;"
           "color:var(--jp-ui-font-color1,#212121)")
_LABEL_W = "7.5em"
_BAR_W = "16em"  # one width for every bar


def last_stats() -> dict | None:
    """The ``stats`` of the most recent :class:`NotebookDisplay` (None if there is none).

    Returns:
        dict | None: ``updates`` (calls of ``update``), ``bar_draws``, ``chart_renders`` (all
        of which redraw the whole chart, also counted as ``chart_full_renders``),
        ``setup_s`` (seconds spent building the widget block once per run),
        ``spent_s`` (seconds spent in all later display calls), ``chart_s`` (the part of
        ``spent_s`` spent rendering the chart), ``elapsed_s`` (seconds since the display
        started) and ``overhead`` (``spent_s / elapsed_s``).
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


def fmt_value(value) -> str:
    """A log value as the rows, the tables and Paddle's log print it (4 decimals)."""
    vals = scalars(value)
    if not vals:
        return "" if value is None else str(value)
    return " ".join(f"{v:.4f}" for v in vals)


def _field(text, width):
    return (f"<span style='display:inline-block;min-width:{width}ch;margin-right:1.2ch'>"
            f"{text}</span>")


class _Row:
    """One progress bar: a label, the bar (fixed width), and a one-line status."""

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
                                       style={"description_width": _LABEL_W},
                                       layout=widgets.Layout(width=_BAR_W, flex="0 0 auto"))
        self.status = widgets.HTML("", layout=widgets.Layout(flex="1 1 0%", min_width="0",
                                                             overflow="hidden"))
        self.box = widgets.HBox([self.bar, self.status],
                                layout=widgets.Layout(width="100%", overflow="hidden",
                                                      flex_flow="row nowrap"))
        self.box.add_class("phl-row")  # for styling and the browser test

    def text(self, now, done):
        steps_w = 2 * len(str(self.steps or self.step)) + 1
        parts = [_field(f"{self.step}/{self.steps}" if self.steps else f"step {self.step}",
                        steps_w)]
        parts += [_field(f"{html.escape(k)}: {html.escape(str(v))}", len(k) + 8)
                  for k, v in self.items]
        if self.step:
            parts.append(_field(format_time(self.per_step), 10))
        if done:
            extra = _seconds(now - self.t0)
            if self.samples is not None:
                extra += f", {self.samples} samples"
            parts.append(f"<span style='{_MUTED}'>{extra}</span>")
        elif self.steps and self.step:
            eta = self.per_step * (self.steps - self.step)
            parts.append(f"<span style='{_MUTED}'>ETA {_seconds(eta)}</span>")
        return f"<div style='{_STATUS}'>{''.join(parts)}</div>"

    def draw(self, now, done=False, style=None):
        if self.steps:
            self.bar.value = min(self.step, self.bar.max)
        elif done:
            self.bar.value = self.bar.max
        if style is not None:
            self.bar.bar_style = style
        self.status.value = self.text(now, done)


class _SVGImage:
    """A standalone SVG picture (``image/svg+xml``) with a text fallback."""

    def __init__(self, svg, text):
        self._svg = svg
        self._text = text

    def _repr_svg_(self):
        return self._svg

    def __repr__(self):
        return self._text


class NotebookDisplay:
    """Live ipywidgets progress bars and an SVG chart for the high-level API.

    Implements the display interface of ``hapi.progressbar.TextDisplay`` (``train_begin``,
    ``epoch_begin``, ``phase_begin``, ``update``, ``epoch_end``, ``phase_end``, ``train_end``).

    Args:
        verbose (int): 1 shows the widgets, 2 also prints Paddle's log lines (in the block).
        display (callable, optional): shows a widget (IPython's ``display`` by default).
        clock (callable, optional): the time source (``time.perf_counter``).
        interval (float, optional): minimum seconds between two redraws of a bar. Default 0.5.
        chart_interval (float, optional): minimum seconds between two throttled chart renders.
            Default 1.
        budget (float, optional): the largest fraction of the wall time that throttled
            redraws may take. Default 0.01.
        max_rows (int, optional): bars kept on screen; older ones are folded away. Default 12.
        chart (bool, optional): draw the live chart during ``fit``. Default True.
        record (bool, optional): display the static record (table and chart) when a run ends.
            Default True.
        log (optional): a text display (``hapi.progressbar.TextDisplay``) that also receives
            every call, e.g. to print Paddle's log lines with verbose=2. Default None.
    """

    def __init__(self, verbose, display=None, clock=time.perf_counter, interval=0.5,
                 chart_interval=1.0, budget=0.01, max_rows=12, chart=True, record=True,
                 log=None):
        global _LAST
        self.verbose = verbose
        self._show = display or _env.display
        self._clock = clock
        self.interval = interval
        self.chart_interval = chart_interval
        self.budget = budget
        self.max_rows = max_rows
        self._want_chart = chart
        self._want_record = record
        self._log = log
        self._start = clock()
        self._spent = 0.0
        self._setup = 0.0
        self._chart_s = 0.0
        self._updates = 0
        self._bar_draws = 0
        self.box = None
        self.chart = None
        self.output = None
        self._capturing = False
        self._row = None
        self._rows = None
        self._hidden = 0
        self._training = False
        self._base = 0  # global steps of the finished epochs
        self._metric_names = []
        self._last_bar = -1e18
        self._last_chart = -1e18
        self._chart_cost = 0.002
        self._bar_cost = 0.0005
        self._dirty = False
        self._epochs = None
        self._steps = None
        self._records = []  # rows of the static table: (kind, epoch, steps, logs, seconds)
        self._epochs_run = 0
        self._run_t0 = clock()
        self._epoch = 0
        _LAST = self

    # ------------------------------------------------------------------ bookkeeping
    @property
    def stats(self) -> dict:
        """What the display cost so far (see :func:`last_stats`)."""
        elapsed = max(self._clock() - self._start, 1e-9)
        renders = self.chart.renders if self.chart is not None else 0
        return {"updates": self._updates, "bar_draws": self._bar_draws,
                "chart_renders": renders, "chart_full_renders": renders,
                "setup_s": self._setup, "chart_s": self._chart_s, "spent_s": self._spent,
                "elapsed_s": elapsed, "overhead": self._spent / elapsed}

    def _new_box(self, title, with_chart, total_steps=None):
        self._finish_rows()
        self._header = widgets.HTML(title)
        self._rows = widgets.VBox([], layout=widgets.Layout(width="100%"))
        self._more = widgets.HTML("")
        self._hidden = 0
        self._row = None
        self.chart = None
        self._records = []
        self._run_t0 = self._clock()
        # what callbacks print during the run lands here, inside the block
        self.output = widgets.Output(layout=widgets.Layout(max_height="12em",
                                                           overflow="auto"))
        parts = [self._header, self._more, self._rows, self.output]
        if with_chart and self._want_chart:
            self.chart = LiveChart(metrics=bool(self._metric_names), total_steps=total_steps)
            parts.append(self.chart.widget)
        self.box = widgets.VBox(parts, layout=widgets.Layout(width="100%", overflow="hidden"))
        self.box.add_class("phl-run")
        self._show(self.box)

    def _capture(self, on):
        """Route the cell's printed output into the block's Output widget (only in a kernel;
        the front end files the cell's messages there until the capture ends)."""
        if self.output is None or on == self._capturing:
            return
        if on:
            self.output.__enter__()
            self._end_with_cell()
        else:
            self.output.__exit__(None, None, None)
        self._capturing = on

    def _end_with_cell(self):
        """If the run dies with an exception (train_end never comes), the capture still ends
        with the cell, so the next run starts clean."""
        try:
            from IPython import get_ipython
        except ImportError:
            return
        ip = get_ipython()
        if ip is None or not hasattr(ip, "events"):
            return

        def done(*_args):
            self._capture(False)
            ip.events.unregister("post_run_cell", done)

        ip.events.register("post_run_cell", done)

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

    def _render_chart(self, now):
        t = self._clock()
        self.chart.render()
        self._chart_cost = self._clock() - t
        self._chart_s += self._chart_cost
        self._last_chart = now
        self._dirty = False

    def _title(self, what, epochs, steps):
        parts = [f"{epochs} epoch{'s' if epochs != 1 else ''}" if epochs else None,
                 f"{steps} steps per epoch" if steps else None]
        return f"<b>{what}</b>" + "".join(f" &middot; {p}" for p in parts if p)

    # ------------------------------------------------------------------ display interface
    def train_begin(self, epochs, params):
        t0 = self._clock()
        if self._log is not None:
            self._log.train_begin(epochs, params)
        params = params or {}
        self._metric_names = [m for m in params.get("metrics", []) if m != "loss"]
        steps = params.get("steps")
        self._epochs, self._steps = epochs, steps
        self._epochs_run = 0
        total = epochs * steps if epochs and steps else None
        self._training = True
        self._base = 0
        self._new_box(self._title("Training", epochs, steps), with_chart=True,
                      total_steps=total)
        self._capture(True)
        self._setup += self._clock() - t0

    def epoch_begin(self, epoch, epochs, steps):
        t0 = self._clock()
        if self.box is None:
            self._new_box("<b>Training</b>", with_chart=False)
        if self._log is not None:
            self._log.epoch_begin(epoch, epochs, steps)
        self._epoch = epoch
        title = f"Epoch {epoch + 1}/{epochs}" if epochs else f"Epoch {epoch + 1}"
        self._add_row(title, steps)
        self._spent += self._clock() - t0

    def phase_begin(self, mode, steps):
        t0 = self._clock()
        title = "Eval" if mode == "eval" else "Predict"
        if not self._training or self.box is None:
            self._new_box(f"<b>{'Evaluation' if mode == 'eval' else 'Prediction'}</b>"
                          + (f" &middot; {steps} steps" if steps else ""), with_chart=False)
        if self._log is not None:
            self._log.phase_begin(mode, steps)
        self._add_row(title, steps)
        self._spent += self._clock() - t0

    def update(self, mode, step, steps, items, per_step, logs, force=False):
        now = self._clock()
        self._updates += 1
        if self._log is not None:
            self._log.update(mode, step, steps, items, per_step, logs, force)
        row = self._row
        affordable = self.budget * (now - self._start)
        if row is not None:
            row.step = step
            if steps and not row.steps:
                row.steps = steps
                row.bar.max = max(int(steps), 1)
            row.items = _dedupe(items)
            row.per_step = per_step
            if force or (now - self._last_bar >= self.interval
                         and self._spent + self._bar_cost <= affordable):
                t = self._clock()
                row.draw(now)
                self._bar_cost = self._clock() - t
                self._bar_draws += 1
                self._last_bar = now
        if self.chart is not None and mode == "train":
            self._record(self._base + step, logs, "step")
            if (not force and now - self._last_chart >= self.chart_interval
                    and self._spent + self._chart_cost <= affordable):
                self._render_chart(now)
        self._spent += self._clock() - now

    def _record(self, x, logs, kind):
        add_record(self.chart, logs, kind, x, [m for m in self._metric_names if m in logs])
        self._dirty = True

    def epoch_end(self, epoch, logs):
        t0 = self._clock()
        logs = logs or {}
        row = self._row
        steps_run = 0
        if row is not None:
            # the row ends with the epoch's logged values: the numbers of model.history,
            # of the chart's "(epoch)" markers and of the record table
            row.items = [(k, fmt_value(logs[k]) if k in logs else v) for k, v in row.items]
            complete = not row.steps or row.step >= row.steps
            row.draw(t0, done=True, style="success" if complete else "warning")
            self._bar_draws += 1
            steps_run = row.step
            self._base += row.step
            self._row = None
        self._epochs_run += 1
        self._records.append(("train", epoch, steps_run, dict(logs), t0 - self._run_t0))
        if self.chart is not None:
            self._record(self._base, logs, "epoch")
            self._render_chart(t0)  # every epoch end, whatever the budget
        if self._log is not None:
            self._log.epoch_end(epoch, logs)
        self._spent += self._clock() - t0

    def phase_end(self, mode, samples, logs):
        t0 = self._clock()
        logs = logs or {}
        row = self._row
        if row is not None:
            row.samples = samples
            row.items = [(k, fmt_value(logs[k]) if k in logs else v) for k, v in row.items]
            row.draw(t0, done=True, style="success")
            self._bar_draws += 1
            self._row = None
        if mode == "eval":
            self._records.append(("eval", self._epoch if self._training else None, samples,
                                  dict(logs), t0 - self._run_t0))
        if mode == "eval" and self._training and self.chart is not None and logs:
            self._record(self._base, logs, "eval")
            self._render_chart(t0)  # every evaluation, whatever the budget
        if self._log is not None:
            self._log.phase_end(mode, samples, logs)
        if not self._training:
            elapsed = t0 - self._run_t0
            what = "Evaluation" if mode == "eval" else "Prediction"
            self._header.value = (f"<b>{what} finished</b> &middot; {samples} samples "
                                  f"&middot; {_seconds(elapsed)}")
            if self._want_record:
                if mode == "eval":
                    self._show(self.record_table())
                else:
                    self._show(_PlainHTML(f"<div style='{_MUTED};font-size:12px'>Prediction: "
                                          f"{samples} samples in {_seconds(elapsed)}</div>",
                                          f"Prediction: {samples} samples in "
                                          f"{_seconds(elapsed)}"))
            self.box = None  # a later evaluate/predict call gets its own block
        self._spent += self._clock() - t0

    def train_end(self, logs):
        t0 = self._clock()
        self._finish_rows()
        self._capture(False)
        if self._log is not None:
            self._log.train_end(logs)
        if self.box is not None:
            self._header.value = self._end_title(t0)
        if self.chart is not None:
            self.chart.fit_to_data()  # the axis ends where training ended
            self._render_chart(t0)
        if self._want_record and self.box is not None and self._records:
            self._show(self.record_table())
            if self.chart is not None and len(self.chart):
                # the saved notebook keeps the picture; the live chart steps aside for it
                self._show(_SVGImage(self.chart.static_svg(), "<training curves>"))
                self.chart.widget.layout.display = "none"
        self._training = False
        self.box = None
        self._spent += self._clock() - t0

    def _end_title(self, now):
        run = self._epochs_run
        steps = self._base
        took = _seconds(now - self._run_t0)
        planned = (self._epochs or 0) * (self._steps or 0)
        last = next((r for r in reversed(self._records) if r[0] == "train"), None)
        short_epoch = (last is not None and self._steps and last[2] < self._steps)
        if self._epochs and run < self._epochs and not short_epoch:
            why = (f"<b>Training stopped early</b> after epoch {run} of {self._epochs} "
                   "(a callback set <code>model.stop_training</code>; its message is below)")
        elif short_epoch and (run < (self._epochs or 0) or planned > steps):
            why = (f"<b>Training stopped at <code>num_iters</code></b> after {steps} steps "
                   f"(epoch {run}, step {last[2]} of {self._steps})")
        else:
            why = f"<b>Training finished</b> &middot; {run} epoch{'s' if run != 1 else ''}"
        return f"{why} &middot; {steps} steps &middot; {took}"

    def record_table(self) -> HTMLTable:
        """The run as a static table: one row per epoch (with the evaluation after it) or per
        evaluation, the loss and metrics as logged, and the time since the run began."""
        names = []
        for _k, _e, _n, logs, _t in self._records:
            for k in logs:
                if k not in ("step", "batch_size") and k not in names and scalars(logs[k]):
                    names.append(k)
        train = [r for r in self._records if r[0] == "train"]
        evals = [r for r in self._records if r[0] == "eval"]
        if train:
            by_epoch = {r[1]: r for r in evals}
            cols = ["epoch", "steps"] + names + [f"eval {n}" for n in names if by_epoch] + \
                ["time"]
            rows = []
            for _k, e, n, logs, t in train:
                ev = by_epoch.get(e)
                row = [str(e + 1), str(n)] + [fmt_value(logs.get(k)) for k in names]
                if by_epoch:
                    row += [fmt_value(ev[3].get(k)) if ev else "" for k in names]
                rows.append(row + [_seconds(t)])
            title = "Training record"
        else:
            cols = ["samples"] + names + ["time"]
            rows = [[str(n)] + [fmt_value(logs.get(k)) for k in names] + [_seconds(t)]
                    for _k, _e, n, logs, t in evals]
            title = "Evaluation record"
        align = ["right"] * len(cols)
        return HTMLTable(cols, rows, title=title, align=align)


class _PlainHTML:
    def __init__(self, markup, text):
        self._markup = markup
        self._text = text

    def _repr_html_(self):
        return self._markup

    def __repr__(self):
        return self._text
