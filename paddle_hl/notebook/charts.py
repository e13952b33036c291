"""Loss and metric curves: the live chart of ``Model.fit`` and the history plots.

:class:`LiveChart` draws SVG markup itself (no plotting library in the training loop): one
panel for the loss and one for the metrics, each an inline ``<svg>`` with a ``viewBox``, so it
is sharp at any device pixel ratio and costs about a millisecond per render. Text and grid take
JupyterLab's CSS variables (with fallbacks for classic Notebook and plain HTML), so the chart
reads in light and dark themes. The legend sits above the plot area (it never covers data) and
the plot area is inset so that markers at the ends are drawn whole.

The same drawing serves the saved record (:meth:`LiveChart.static_svg`, a standalone SVG image
with its own background) and :func:`show_history`. :func:`plot_history` gives a matplotlib
figure of the same series for people who want to restyle it.

Labels have one meaning everywhere: ``loss`` is the per-step loss, ``loss (epoch)`` the value
``model.history['epoch']`` holds for the epoch (Paddle's epoch log: the loss of the epoch's last
step, the metrics accumulated over the epoch), ``loss (eval)`` the evaluation's result.
"""

from __future__ import annotations

import base64
import html
import math
import numbers

import numpy as np

from . import _env

__all__ = []

_HISTORY_SKIP = {"step", "epoch", "global_step", "lr", "time", "batch_size"}
# Tableau 10: distinct and readable on both a white and a near-black background
_PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#edc948",
            "#9c755f", "#ff9da7", "#bab0ac")
_MAX_POINTS = 500  # per drawn series; longer step series are thinned (the last point is kept)
_FG = "var(--jp-ui-font-color1,#212121)"
_FG2 = "var(--jp-ui-font-color2,#5f5f5f)"
_GRID = "var(--jp-border-color2,#e0e0e0)"
_STATIC = {_FG: "#212121", _FG2: "#5f5f5f", _GRID: "#e0e0e0"}
_KIND_ORDER = {"step": 0, "epoch": 1, "eval": 2}


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


def series_name(label: str, kind: str) -> str:
    """The legend / column name of a series: ``loss`` per step, ``loss (epoch)``, ``loss
    (eval)``."""
    return label if kind == "step" else f"{label} ({kind})"


def _nice_step(span: float, target: int = 5) -> float:
    raw = span / max(target, 1)
    exp = math.floor(math.log10(raw))
    for m in (1.0, 2.0, 2.5, 5.0, 10.0):
        if m * 10.0 ** exp >= raw:
            return m * 10.0 ** exp
    return 10.0 ** (exp + 1)


def _fmt_tick(v: float) -> str:
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 10000:
        return f"{v / 1000:g}k"
    if a >= 1 or a < 1e-3:
        return f"{v:g}"
    return f"{v:.3g}"


def _axis(lo: float, hi: float, panel: str):
    """``(y0, y1, log, ticks)`` for the data range ``[lo, hi]`` of a panel."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        lo, hi = 0.0, 1.0
    if panel == "metric" and 0 <= lo and hi <= 1:
        return 0.0, 1.0, False, [0.0, 0.25, 0.5, 0.75, 1.0]
    if panel == "loss" and lo > 0 and hi / lo > 20:
        y0 = 10.0 ** math.floor(math.log10(lo))
        y1 = 10.0 ** math.ceil(math.log10(hi))
        ticks = []
        e = round(math.log10(y0))
        decades = round(math.log10(y1)) - e
        subs = (1, 2, 5) if decades <= 2 else (1,)
        while 10.0 ** e <= y1 * 1.0001:
            ticks += [m * 10.0 ** e for m in subs if m * 10.0 ** e <= y1 * 1.0001]
            e += 1
        return y0, y1, True, ticks
    if hi - lo < 1e-12:
        pad = max(abs(hi) * 0.1, 1e-3)
        lo, hi = lo - pad, hi + pad
    y0 = 0.0 if 0 <= lo < (hi - lo) else lo
    step = _nice_step(hi - y0)
    y0 = math.floor(y0 / step) * step
    y1 = math.ceil(hi / step) * step
    n = int(round((y1 - y0) / step))
    return y0, y1, False, [y0 + i * step for i in range(n + 1)]


class LiveChart:
    """A loss panel and (when there are metrics) a metrics panel, drawn as inline SVG.

    Series are named by their panel (``'loss'`` or ``'metric'``), a label (``'loss'``,
    ``'acc'``) and a kind: ``'step'`` (a thin line per training step), ``'epoch'`` (a marker
    per epoch) or ``'eval'`` (a dashed line with square markers, one point per evaluation).

    Args:
        metrics (bool): whether to draw the metrics panel.
        total_steps (int, optional): the length of the x axis when known (epochs x steps).
        widget (bool): also build an ``ipywidgets.HTML`` (``.widget``) that shows each render.
        width (int): width of one panel in CSS pixels (the SVG scales down on narrow screens).
        height (int): height of one panel in CSS pixels.

    Example:
        >>> chart = LiveChart(metrics=False, widget=False)
        >>> chart.add("loss", "loss", "step", 1, 2.3)
        >>> chart.render().startswith("<div")
        True
    """

    def __init__(self, metrics=True, total_steps=None, widget=True, width=380, height=220):
        self.panels = ["loss", "metric"] if metrics else ["loss"]
        self.total_steps = total_steps
        self.width = width
        self.height = height
        self._series = {}  # (panel, label, kind) -> ([xs], [ys])
        self._colors = {}  # (panel, label) -> colour
        self._extent = {}  # panel -> [x max, y min, y max]
        self.renders = 0
        self.full_renders = 0
        self.markup = ""
        self.widget = None
        if widget:
            widgets = _env.require("ipywidgets", "the live training chart")
            # hidden until the first render, so no empty frame shows meanwhile
            self.widget = widgets.HTML("", layout=widgets.Layout(display="none",
                                                                 max_width="100%"))

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
        if panel not in self.panels:
            return
        if kind not in _KIND_ORDER:
            raise ValueError(f"LiveChart.add: kind must be 'step', 'epoch' or 'eval', got "
                             f"{kind!r}")
        s = self._series.get((panel, label, kind))
        if s is None:
            s = self._series[(panel, label, kind)] = ([], [])
            key = (panel, label)
            if key not in self._colors:
                n = sum(1 for p, _ in self._colors if p == panel)
                self._colors[key] = _PALETTE[n % len(_PALETTE)]
        x, y = float(x), float(y)
        s[0].append(x)
        s[1].append(y)
        # the panel's running extent, so that a render does not rescan every point
        ext = self._extent.setdefault(panel, [0.0, math.inf, -math.inf])
        ext[0] = max(ext[0], x)
        if math.isfinite(y):
            ext[1] = min(ext[1], y)
            ext[2] = max(ext[2], y)

    def __len__(self):
        return sum(len(s[0]) for s in self._series.values())

    def series(self) -> dict:
        """``{(panel, label, kind): (xs, ys)}`` of everything added so far (copies)."""
        return {k: (list(v[0]), list(v[1])) for k, v in self._series.items()}

    # ------------------------------------------------------------------ drawing
    def _legend_rows(self, panel, width):
        """The static legend laid out in rows that fit ``width``: [(x, y, text, colour, kind)]."""
        out, x, row = [], 46, 0
        for text, color, kind in self._legend(panel):
            need = 28 + 6.2 * len(text)
            if x + need > width and x > 46:
                x, row = 46, row + 1
            out.append((x, 12 + 15 * row, text, color, kind))
            x += need
        return out

    def _panel_svg(self, panel, static, height=None):
        w = self.width
        legend = self._legend_rows(panel, w) if static else []
        h = height or self.height + ((legend[-1][1] + 6) if legend else 0)
        legend_h = h - self.height  # the same plot height in every panel
        left, right, top, bottom = 46, 14, 8 + legend_h, 34
        pw, ph = w - left - right, h - top - bottom
        inset = 5  # markers at the ends of the axes are drawn whole
        items = sorted(((k, v) for k, v in self._series.items() if k[0] == panel),
                       key=lambda kv: (kv[0][1], _KIND_ORDER[kv[0][2]]))
        xmax, lo, hi = self._extent.get(panel, (0.0, math.inf, -math.inf))
        x1 = max(self.total_steps or 0, xmax, 1)
        if lo > hi:
            lo, hi = 0.0, 1.0
        y0, y1, log, ticks = _axis(lo, hi, panel)

        def px(x):
            return left + inset + x / x1 * (pw - 2 * inset)

        def py(y):
            if log:
                y = max(y, y0 * 1e-3)
                f = (math.log10(y) - math.log10(y0)) / (math.log10(y1) - math.log10(y0))
            else:
                f = (y - y0) / ((y1 - y0) or 1.0)
            f = min(max(f, -0.02), 1.02)
            return top + inset + (1 - f) * (ph - 2 * inset)

        def c(v):
            return _STATIC.get(v, v) if static else v

        out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" '
               f'height="{h}" style="max-width:100%;height:auto;overflow:visible" '
               f'font-family="sans-serif" font-size="11" role="img" '
               f'aria-label="{"loss" if panel == "loss" else "metrics"} per step">']
        if static:
            out.append(f'<rect width="{w}" height="{h}" fill="#ffffff"/>')
        for t in ticks:
            y = py(t)
            out.append(f'<line x1="{left}" x2="{left + pw}" y1="{y:.1f}" y2="{y:.1f}" '
                       f'style="stroke:{c(_GRID)}" stroke-width="1"/>'
                       f'<text x="{left - 5}" y="{y + 3.5:.1f}" text-anchor="end" '
                       f'style="fill:{c(_FG2)}">{_fmt_tick(t)}</text>')
        xstep = _nice_step(x1, 5)
        xt = 0.0
        while xt <= x1 * 1.0001:
            x = px(xt)
            out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top + ph}" y2="{top + ph + 4}" '
                       f'style="stroke:{c(_FG2)}"/><text x="{x:.1f}" y="{top + ph + 15}" '
                       f'text-anchor="middle" style="fill:{c(_FG2)}">{_fmt_tick(xt)}</text>')
            xt += xstep
        out.append(f'<line x1="{left}" x2="{left + pw}" y1="{top + ph}" y2="{top + ph}" '
                   f'style="stroke:{c(_FG2)}"/>'
                   f'<text x="{left + pw / 2:.0f}" y="{h - 4}" text-anchor="middle" '
                   f'style="fill:{c(_FG2)}">step{" (y on a log scale)" if log else ""}</text>')
        for (_p, label, kind), (xs, ys) in items:
            color = self._colors[(panel, label)]
            if kind == "step" and len(xs) > _MAX_POINTS:
                stride = -(-len(xs) // _MAX_POINTS)
                tail = [(xs[-1], ys[-1])] if (len(xs) - 1) % stride else []
                pts = list(zip(xs[::stride], ys[::stride])) + tail
            else:
                pts = list(zip(xs, ys))
            pts = [(px(x), py(y)) for x, y in pts if math.isfinite(y)]
            if not pts:
                continue
            d = "M" + "L".join(f"{x:.1f},{y:.1f}" for x, y in pts)
            name = html.escape(series_name(label, kind))
            if kind == "step":
                out.append(f'<path d="{d}" fill="none" stroke="{color}" stroke-width="1" '
                           f'stroke-opacity="0.55"><title>{name}</title></path>')
                continue
            dash = ' stroke-dasharray="5,3"' if kind == "eval" else ""
            out.append(f'<path d="{d}" fill="none" stroke="{color}" stroke-width="2"{dash}/>')
            for x, y in pts:
                if kind == "eval":
                    out.append(f'<rect x="{x - 3.5:.1f}" y="{y - 3.5:.1f}" width="7" '
                               f'height="7" fill="{color}"><title>{name}</title></rect>')
                else:
                    out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{color}">'
                               f'<title>{name}</title></circle>')
        # a standalone image carries its legend above the plot area, in as many rows as needed
        for x, y, text, color, kind in legend:
            out.append(self._legend_svg(x, y, text, color, kind))
        out.append("</svg>")
        return "".join(out)

    def _legend(self, panel):
        keys = sorted((k for k in self._series if k[0] == panel),
                      key=lambda k: (k[1], _KIND_ORDER[k[2]]))
        return [(series_name(label, kind), self._colors[(panel, label)], kind)
                for (_p, label, kind) in keys]

    @staticmethod
    def _legend_svg(x, y, text, color, kind):
        dash = ' stroke-dasharray="4,2"' if kind == "eval" else ""
        width = "1" if kind == "step" else "2"
        mark = ""
        if kind == "epoch":
            mark = f'<circle cx="{x + 9}" cy="{y - 4}" r="3" fill="{color}"/>'
        elif kind == "eval":
            mark = f'<rect x="{x + 6}" y="{y - 7}" width="6" height="6" fill="{color}"/>'
        return (f'<line x1="{x}" x2="{x + 18}" y1="{y - 4}" y2="{y - 4}" stroke="{color}" '
                f'stroke-width="{width}"{dash}/>{mark}<text x="{x + 22}" y="{y}" '
                f'fill="#212121">{html.escape(text)}</text>')

    def _legend_html(self, panel):
        spans = []
        for text, color, kind in self._legend(panel):
            style = "dashed" if kind == "eval" else "solid"
            thick = 1 if kind == "step" else 2
            spans.append(f"<span style='white-space:nowrap;margin-right:12px'><span style='"
                         f"display:inline-block;width:18px;vertical-align:middle;border-top:"
                         f"{thick}px {style} {color}'></span> {html.escape(text)}</span>")
        title = "loss" if panel == "loss" else "metrics"
        return (f"<div style='font-size:12px;color:{_FG};margin:0 0 2px 46px'><b>{title}</b>"
                f"&nbsp;&nbsp;{''.join(spans)}</div>")

    def render(self, full: bool = False, tight: bool = False) -> str:
        """Draw the current data as HTML with inline SVG (also shown by ``.widget``).

        Args:
            full (bool): kept for compatibility; every render draws everything.
            tight (bool): fit the x axis to the steps run instead of the planned steps.

        Returns:
            str: the markup.
        """
        if tight:
            self.fit_to_data()
        panels = "".join(
            f"<div style='flex:1 1 {self.width}px;max-width:{self.width}px;min-width:0'>"
            f"{self._legend_html(p)}{self._panel_svg(p, False)}</div>" for p in self.panels)
        self.markup = (f"<div class='phl-chart' style='display:flex;flex-wrap:wrap;gap:8px 24px;"
                       f"color:{_FG}'>{panels}</div>")
        if self.widget is not None:
            self.widget.value = self.markup
            if self.widget.layout.display == "none":
                self.widget.layout.display = None
        self.renders += 1
        self.full_renders += 1
        return self.markup

    def fit_to_data(self) -> None:
        """Shrink (or grow) the x axis to the last step that has data (a run that stopped
        early or at ``num_iters``)."""
        if self._extent:
            self.total_steps = max(ext[0] for ext in self._extent.values())

    def static_svg(self) -> str:
        """The chart as one standalone SVG document (white background, legends inside, no CSS
        variables): the picture a saved notebook keeps."""
        w = self.width
        # the panels share one height: the plot's plus the taller legend
        extra = max((rows[-1][1] + 6 if rows else 0)
                    for rows in (self._legend_rows(p, w) for p in self.panels))
        h = self.height + extra
        inner = []
        for i, p in enumerate(self.panels):
            body = self._panel_svg(p, True, height=h)
            inner.append(f'<g transform="translate({i * (w + 10)},0)">'
                         f'{body[body.index(">") + 1:-len("</svg>")]}</g>')
        total = len(self.panels) * w + (len(self.panels) - 1) * 10
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="{h}" '
                f'viewBox="0 0 {total} {h}" font-family="sans-serif" font-size="11">'
                f'<rect width="{total}" height="{h}" fill="#ffffff"/>{"".join(inner)}</svg>')

    def static_img(self) -> str:
        """:meth:`static_svg` as an ``<img>`` tag with a data URI (for HTML reports)."""
        data = base64.b64encode(self.static_svg().encode()).decode()
        return (f"<img alt='training curves' style='max-width:100%' "
                f"src='data:image/svg+xml;base64,{data}'/>")

    def close(self):
        """Kept for compatibility: the chart holds no drawing resources."""


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
        add_record(chart, rec, "step", x, names)
    for rec in epochs:
        e = rec.get("epoch", 0)
        add_record(chart, rec, "epoch", end_of_epoch.get(e, e + 1), names)
    for rec in evals:
        e = rec.get("epoch", 0)
        add_record(chart, rec, "eval", end_of_epoch.get(e, e + 1), names)
    chart.fit_to_data()
    return chart


def add_record(chart, rec, kind, x, names):
    """Add one log record (``{'loss': [..], 'acc': ..}``) to ``chart`` at step ``x``.

    Args:
        chart (LiveChart): the chart.
        rec (dict): the logs.
        kind (str): ``'step'``, ``'epoch'`` or ``'eval'``.
        x (float): the global step.
        names (list[str]): the metric names to take from ``rec``.
    """
    losses = scalars(rec.get("loss", []))
    for j, v in enumerate(losses):
        chart.add("loss", "loss" if len(losses) == 1 else f"loss{j}", kind, x, v)
    for name in names:
        vals = scalars(rec.get(name, []))
        for j, v in enumerate(vals):
            chart.add("metric", name if len(vals) == 1 else f"{name}{j}", kind, x, v)


_MPL_STYLES = {"step": ("-", None, 0.8, 0.55), "epoch": ("-", "o", 1.8, 1.0),
               "eval": ("--", "s", 1.8, 1.0)}


def plot_history(history):
    """Draw ``Model.history`` (after ``fit``) with matplotlib: the loss and metric curves per
    step, per epoch and per evaluation, labelled as in the live chart.

    Args:
        history (dict): ``model.history``, with the ``'step'``, ``'epoch'`` and ``'eval'``
            record lists.

    Returns:
        matplotlib.figure.Figure: the figure (not displayed; see :func:`show_history`).
    """
    _env.require("matplotlib", "plot_history")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    chart = _history_chart(history)
    fig = Figure(figsize=(4.6 * len(chart.panels), 2.8), dpi=100)
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(chart.panels), squeeze=False)[0]
    for ax, panel in zip(axes, chart.panels):
        ax.set_title("loss" if panel == "loss" else "metrics", fontsize=10)
        ax.set_xlabel("step", fontsize=9)
        ax.grid(True, alpha=0.3)
        for (p, label, kind), (xs, ys) in sorted(chart.series().items()):
            if p != panel:
                continue
            ls, marker, lw, alpha = _MPL_STYLES[kind]
            ax.plot(xs, ys, linestyle=ls, marker=marker, linewidth=lw, alpha=alpha,
                    markersize=4, color=chart._colors[(p, label)],
                    label=series_name(label, kind), clip_on=False)
        ys = [y for (p, _l, _k), (_xs, v) in chart.series().items() if p == panel for y in v]
        if panel == "loss" and ys and min(ys) > 0 and max(ys) / min(ys) > 20:
            ax.set_yscale("log")
        ax.margins(x=0.02, y=0.05)
        # outside the axes, so that it never covers a curve
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    return fig


def history_png(history, dpi: int = 200) -> bytes:
    """:func:`plot_history` rendered as PNG bytes (at ``dpi``, sharp on high-density screens).

    Args:
        history (dict): ``model.history``.
        dpi (int): resolution. Default 200.

    Returns:
        bytes: the PNG file.
    """
    import io

    buf = io.BytesIO()
    plot_history(history).savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def history_svg(history) -> str:
    """``model.history`` drawn like the live chart, as a standalone SVG document."""
    return _history_chart(history).static_svg()


class HistoryChart:
    """``model.history`` as the live chart draws it: themed inline SVG in Jupyter
    (``_repr_html_``), a standalone SVG image otherwise (``_repr_svg_``).

    Args:
        history (dict): ``model.history``.
    """

    def __init__(self, history):
        self._chart = _history_chart(history)

    def _repr_html_(self):
        return self._chart.render()

    def _repr_svg_(self):
        return self._chart.static_svg()

    def __repr__(self):
        n = len(self._chart)
        return f"<HistoryChart: {n} points; display it in a notebook>"


def show_history(history) -> None:
    """Display ``model.history`` in the current notebook output: the same chart, labels and
    numbers as the live chart of ``fit`` (``HistoryChart(history)`` gives the object).

    Args:
        history (dict): ``model.history``.
    """
    _env.display(HistoryChart(history))
