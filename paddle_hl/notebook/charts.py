"""Loss and metric curves with matplotlib: a live chart for ``Model.fit`` and history plots.

:class:`LiveChart` keeps ONE figure for a whole run and re-renders it into PNG bytes (shown by an
``ipywidgets.Image`` that is updated in place). Matplotlib is driven through its object API
(``matplotlib.figure.Figure`` on an Agg canvas, never pyplot), so no figure is ever displayed by
the inline backend on its own and nothing leaks between runs.

A full render (ticks, labels, legend) costs tens of milliseconds, so the axis limits are sticky:
they only move when a new point falls outside them (then by a generous margin), and in between a
refresh restores the cached background and draws just the lines (blitting), a few milliseconds.
"""

from __future__ import annotations

import io
import math
import numbers

import numpy as np

from . import _env

__all__ = []

_STYLES = {
    # kind: (line style, marker, line width, alpha, z-order)
    "step": ("-", None, 0.8, 0.45, 1),
    "epoch": ("-", "o", 1.6, 1.0, 3),
    "eval": ("--", "s", 1.6, 1.0, 3),
}
_HISTORY_SKIP = {"step", "epoch", "global_step", "lr", "time", "batch_size"}


def _nice_up(v: float) -> float:
    """The next round number (1, 1.2, 1.5, 2, ... 8 times a power of ten) at or above ``v``."""
    exp = math.floor(math.log10(v))
    for m in (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0):
        if m * 10.0 ** exp >= v:
            return m * 10.0 ** exp
    return 10.0 ** (exp + 1)


def scalars(value) -> list[float]:
    """The numbers in a log value (float, list of floats, 0-D or 1-D array) as floats."""
    if isinstance(value, numbers.Number):
        return [float(value)]
    if isinstance(value, (list, tuple)):
        out = []
        for v in value:
            out += scalars(v)
        return out
    if isinstance(value, np.ndarray | np.generic):
        arr = np.asarray(value)
        if arr.dtype.kind in "fiub":
            return arr.astype(np.float64).reshape(-1).tolist()
    return []


class LiveChart:
    """One figure with a loss panel and (when there are metrics) a metrics panel.

    Series are named by their panel (``'loss'`` or ``'metric'``), a label (``'loss'``,
    ``'acc'``) and a kind: ``'step'`` (a thin line per training step), ``'epoch'`` (a marker
    per epoch) or ``'eval'`` (a dashed line with square markers, one point per evaluation).

    Args:
        metrics (bool): whether to draw the metrics panel.
        total_steps (int, optional): the length of the x axis when known (epochs x steps).
        widget (bool): also build an ``ipywidgets.Image`` (``.widget``) that shows each render.
        figsize (tuple): figure size in inches.
        dpi (int): resolution of the PNG.
    """

    def __init__(self, metrics=True, total_steps=None, widget=True, figsize=(8.0, 2.6), dpi=72):
        _env.require("matplotlib", "the live training chart")
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.figure = Figure(figsize=figsize, dpi=dpi)
        FigureCanvasAgg(self.figure)
        axes = self.figure.subplots(1, 2 if metrics else 1, squeeze=False)[0]
        self.axes = {"loss": axes[0]}
        if metrics:
            self.axes["metric"] = axes[1]
        for name, ax in self.axes.items():
            ax.set_title("loss" if name == "loss" else "metrics", fontsize=9)
            ax.set_xlabel("step", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.grid(True, alpha=0.3)
        self.total_steps = total_steps
        self._series = {}  # (panel, label, kind) -> [xs, ys, Line2D or None]
        self._limits = {}  # panel -> (x1, y0, y1, log)
        self._extent = {}  # panel -> [x max, y min, y max]
        self._background = None
        self._layout_done = False
        self.renders = 0
        self.full_renders = 0
        self.png = b""
        self._prime()
        self.widget = None
        if widget:
            widgets = _env.require("ipywidgets", "the live training chart")
            # hidden until the first render, so no empty image shows meanwhile
            self.widget = widgets.Image(format="png",
                                        layout=widgets.Layout(max_width="100%", display="none"))

    def _prime(self):
        """Lay the figure out and draw it once with provisional limits (x up to the planned
        steps, the loss on a log axis from 1e-3 to 10, metrics on [0, 1.02]): the first draw
        of a figure pays for font loading and layout, so it is done while the run is set up.
        These limits hold a classifier's loss and the usual metrics (accuracy, precision,
        recall, AUC) for the whole run, so later renders are cheap blits."""
        x1 = max(self.total_steps or 10, 1)
        for panel, ax in self.axes.items():
            lim = (x1, 1e-3, 10.0, True) if panel == "loss" else (x1, 0.0, 1.02, False)
            ax.set_yscale("log" if lim[3] else "linear")
            ax.set_xlim(0, x1)
            ax.set_ylim(lim[1], lim[2])
            self._limits[panel] = lim
        self.figure.tight_layout()
        self._layout_done = True
        canvas = self.figure.canvas
        canvas.draw()
        self._background = canvas.copy_from_bbox(self.figure.bbox)

    # ------------------------------------------------------------------ data
    def add(self, panel: str, label: str, kind: str, x: float, y: float) -> None:
        """Append the point ``(x, y)`` to a series (created on first use).

        Args:
            panel (str): ``'loss'`` or ``'metric'``.
            label (str): the legend label, e.g. ``'loss'`` or ``'acc'``.
            kind (str): ``'step'``, ``'epoch'`` or ``'eval'``.
            x (float): the global training step.
            y (float): the value.
        """
        if panel not in self.axes:
            return
        s = self._series.get((panel, label, kind))
        if s is None:
            s = self._series[(panel, label, kind)] = [[], [], None]
        s[0].append(x)
        s[1].append(y)
        # running extent of the panel: O(1) per point, so checking the limits stays cheap
        ext = self._extent.get(panel)
        if ext is None:
            ext = self._extent[panel] = [x, math.inf, -math.inf]
        ext[0] = max(ext[0], x)
        if math.isfinite(y):
            ext[1] = min(ext[1], y)
            ext[2] = max(ext[2], y)

    def __len__(self):
        return sum(len(s[0]) for s in self._series.values())

    # ------------------------------------------------------------------ drawing
    def _color(self, panel, label):
        labels = sorted({lb for (p, lb, _k) in self._series if p == panel})
        return f"C{labels.index(label) % 10}"

    def _wanted_limits(self, panel, tight):
        """Axis limits ``(x1, y0, y1, log)`` for the panel's data. Live limits leave room for
        what is still to come (loss from 0 to a round number above the peak, metrics within
        [0, 1] on [0, 1.02], the x axis to the planned number of steps) so that they rarely
        change; ``tight`` fits a finished run."""
        ext = self._extent.get(panel)
        if ext is None or not math.isfinite(ext[1]):
            return None
        x1, lo, hi = ext
        if self.total_steps:
            x1 = max(x1, self.total_steps)
        elif not tight:
            x1 = _nice_up(max(x1, 1) * 1.5)
        x1 = max(x1, 1)
        if tight:
            log = panel == "loss" and lo > 0 and hi / lo > 20
            if log:
                return x1, 10.0 ** math.floor(math.log10(lo)), 10.0 ** math.ceil(
                    math.log10(hi)), True
            pad = (hi - lo) * 0.05 or max(abs(hi) * 0.1, 1e-3)
            return x1, (0.0 if 0 <= lo < pad else lo - pad), hi + pad, False
        if panel == "metric" and 0 <= lo and hi <= 1:
            return x1, 0.0, 1.02, False
        if panel == "loss" and lo > 0:  # whole decades around the data, with room below
            return (x1, 10.0 ** min(-3, math.floor(math.log10(lo)) - 1),
                    10.0 ** max(1, math.ceil(math.log10(hi))), True)
        pad = (hi - lo) * 0.25 or max(abs(hi) * 0.1, 1e-3)
        y0 = 0.0 if lo >= 0 else -_nice_up(-(lo - pad))
        y1 = _nice_up(hi * 1.15) if hi > 0 else hi + pad
        return x1, y0, y1, False

    def _fits(self, panel):
        cur = self._limits.get(panel)
        ext = self._extent.get(panel)
        if ext is None or not math.isfinite(ext[1]):
            return True
        return (cur is not None and ext[0] <= cur[0] and cur[1] <= ext[1] and ext[2] <= cur[2]
                and (not cur[3] or ext[1] > 0))

    def _new_lines(self):
        """Create the Line2D of new series and refresh the legends (no drawing)."""
        changed = set()
        for (panel, label, kind), s in sorted(self._series.items()):
            if s[2] is None:
                ls, marker, lw, alpha, z = _STYLES[kind]
                name = label if kind == "step" else f"{label} ({kind})"
                (s[2],) = self.axes[panel].plot([], [], linestyle=ls, marker=marker,
                                                markersize=3.5, linewidth=lw, alpha=alpha,
                                                zorder=z, label=name,
                                                color=self._color(panel, label))
                changed.add(panel)
        for panel in changed:
            self.axes[panel].legend(fontsize=7, loc="upper right")

    def _dynamic(self):
        """The artists blitted on each render: the data lines and the legends."""
        out = [s[2] for s in self._series.values() if s[2] is not None]
        out += [ax.get_legend() for ax in self.axes.values() if ax.get_legend() is not None]
        return out

    def _full_draw(self, tight=False):
        for panel, ax in self.axes.items():
            lim = self._wanted_limits(panel, tight=tight)
            if lim is None:
                continue
            x1, y0, y1, log = lim
            ax.set_yscale("log" if log else "linear")
            ax.set_xlim(0, x1)
            ax.set_ylim(y0, y1)
            self._limits[panel] = lim
        if not self._layout_done:
            self.figure.tight_layout()
            self._layout_done = True
        dynamic = self._dynamic()
        # the background is the figure without lines and legends; those are blitted on top
        for artist in dynamic:
            artist.set_visible(False)
        canvas = self.figure.canvas
        canvas.draw()
        self._background = canvas.copy_from_bbox(self.figure.bbox)
        for artist in dynamic:
            artist.set_visible(True)
        self.full_renders += 1

    def needs_full(self) -> bool:
        """Whether the next render must redraw everything (the first one, or a point outside
        the axes), i.e. costs tens of milliseconds instead of a few."""
        return self._background is None or not all(self._fits(p) for p in self.axes)

    def render(self, full: bool = False, tight: bool = False) -> bytes:
        """Draw the current data and return it as PNG bytes (also shown by ``.widget``).

        Args:
            full (bool): recompute the axis limits and redraw everything; otherwise only the
                lines and legends are redrawn unless a point left the axes.
            tight (bool): with ``full``, fit the limits to the data without the room left for
                the points still to come (for finished runs).

        Returns:
            bytes: the PNG image.
        """
        from PIL import Image

        self._new_lines()
        if full or self.needs_full():
            self._full_draw(tight=full and tight)
        canvas = self.figure.canvas
        canvas.restore_region(self._background)
        for (panel, _label, _kind), s in self._series.items():
            s[2].set_data(s[0], s[1])
            self.axes[panel].draw_artist(s[2])
        for ax in self.axes.values():
            if ax.get_legend() is not None:
                ax.draw_artist(ax.get_legend())
        buf = io.BytesIO()
        Image.fromarray(np.asarray(canvas.buffer_rgba())).save(buf, format="png",
                                                              compress_level=1)
        self.png = buf.getvalue()
        if self.widget is not None:
            self.widget.value = self.png
            if self.widget.layout.display == "none":
                self.widget.layout.display = None
        self.renders += 1
        return self.png

    def close(self):
        """Drop the figure's cached background (the last PNG stays in ``.png``)."""
        self._background = None


def _history_chart(history, widget=False):
    steps = history.get("step", []) if history else []
    epochs = history.get("epoch", []) if history else []
    evals = history.get("eval", []) if history else []
    names = []
    for rec in steps + epochs + evals:
        for k, v in rec.items():
            if k not in _HISTORY_SKIP and k != "loss" and k not in names and scalars(v):
                names.append(k)
    chart = LiveChart(metrics=bool(names), widget=widget)
    end_of_epoch = {}
    for i, rec in enumerate(steps):
        x = rec.get("global_step", i + 1)
        end_of_epoch[rec.get("epoch", 0)] = x
        _add_record(chart, rec, "step", x, names)
    for rec in epochs:
        e = rec.get("epoch", 0)
        _add_record(chart, rec, "epoch", end_of_epoch.get(e, e + 1), names)
    for rec in evals:
        e = rec.get("epoch", 0)
        _add_record(chart, rec, "eval", end_of_epoch.get(e, e + 1), names)
    return chart


def _add_record(chart, rec, kind, x, names):
    losses = scalars(rec.get("loss", []))
    for j, v in enumerate(losses):
        chart.add("loss", "loss" if len(losses) == 1 else f"loss{j}", kind, x, v)
    for name in names:
        vals = scalars(rec.get(name, []))
        for j, v in enumerate(vals):
            chart.add("metric", name if len(vals) == 1 else f"{name}{j}", kind, x, v)


def plot_history(history):
    """Draw ``Model.history`` (after ``fit``): the loss and metric curves per step, per epoch
    and per evaluation.

    Args:
        history (dict): ``model.history``, with the ``'step'``, ``'epoch'`` and ``'eval'``
            record lists.

    Returns:
        matplotlib.figure.Figure: the figure (not displayed; see :func:`show_history`).
    """
    chart = _history_chart(history)
    chart.render(full=True, tight=True)
    return chart.figure


def history_png(history) -> bytes:
    """:func:`plot_history` rendered as PNG bytes."""
    return _history_chart(history).render(full=True, tight=True)


def show_history(history) -> None:
    """Display :func:`plot_history` as a PNG image in the current notebook output.

    Args:
        history (dict): ``model.history``.
    """
    ipd = _env.require("IPython.display", "show_history")
    ipd.display(ipd.Image(data=history_png(history), format="png"))
