"""AMP in Jupyter: the GradScaler's loss-scale chart and the operator-stats table.

``GradScaler._repr_html_`` draws the loss-scale history (log2 axis) with the skipped steps
marked in red, as one inline SVG: no matplotlib, works offline and in saved notebooks.
:func:`watch` keeps such a chart live while training runs (an updating display; no widget
library needed). ``OperatorStats._repr_html_`` renders the ops-per-dtype table.
"""

from __future__ import annotations

import html
import math

from ._env import in_notebook

__all__ = []

_W, _H = 520, 170  # chart size in px
_PAD_L, _PAD_R, _PAD_T, _PAD_B = 56, 12, 10, 26
_MAX_POINTS = 1500
_MAX_MARKS = 400
# JupyterLab's theme variables with fallbacks for classic Notebook and plain HTML
_FG = "var(--jp-ui-font-color1,#212121)"
_FG2 = "var(--jp-ui-font-color2,#5f5f5f)"
_GRID = "var(--jp-border-color2,#e0e0e0)"
_PLOT_BG = "var(--jp-layout-color1,#fafafa)"


def _fmt(v: float) -> str:
    if v == 0 or not math.isfinite(v):
        return str(v)
    e = math.log2(v)
    if abs(e - round(e)) < 1e-9 and abs(e) >= 4:
        return f"2^{int(round(e))}"
    return f"{v:g}"


def _chart(history) -> str:
    """SVG: scale (log2) per update, red dots where the step was skipped."""
    n = len(history)
    stride = max(1, -(-n // _MAX_POINTS))
    pts = history[::stride]
    if pts[-1] is not history[-1]:
        pts = pts + [history[-1]]
    ys = [math.log2(max(s, 1e-30)) for _, s, _ in history]
    lo, hi = min(ys), max(ys)
    if hi - lo < 1:
        lo, hi = lo - 0.5, hi + 0.5
    x0, x1 = history[0][0], max(history[-1][0], history[0][0] + 1)
    pw, ph = _W - _PAD_L - _PAD_R, _H - _PAD_T - _PAD_B

    def px(step):
        return _PAD_L + (step - x0) / (x1 - x0) * pw

    def py(scale):
        return _PAD_T + (hi - math.log2(max(scale, 1e-30))) / (hi - lo) * ph

    # a step line: the scale holds until the next update
    path = []
    prev_y = None
    for step, scale, _ in pts:
        x, y = px(step), py(scale)
        if prev_y is None:
            path.append(f"M{x:.1f},{y:.1f}")
        else:
            path.append(f"H{x:.1f}V{y:.1f}")
        prev_y = y
    skipped = [(st, sc) for st, sc, bad in history if bad]
    marks = skipped[-_MAX_MARKS:]
    dots = "".join(f'<circle cx="{px(st):.1f}" cy="{py(sc):.1f}" r="2.6" fill="#e53935">'
                   f"<title>step {st}: skipped (inf/nan), scale -> {_fmt(sc)}</title></circle>"
                   for st, sc in marks)
    ticks = []
    for e in range(math.ceil(lo), math.floor(hi) + 1, max(1, (math.floor(hi) - math.ceil(lo))
                                                        // 4 or 1)):
        y = _PAD_T + (hi - e) / (hi - lo) * ph
        ticks.append(f'<line x1="{_PAD_L}" x2="{_W - _PAD_R}" y1="{y:.1f}" y2="{y:.1f}" '
                     f'style="stroke:{_GRID}"/><text x="{_PAD_L - 4}" y="{y + 3:.1f}" '
                     f'font-size="10" text-anchor="end" style="fill:{_FG2}">'
                     f'{_fmt(2.0 ** e)}</text>')
    return (f'<svg width="{_W}" height="{_H}" xmlns="http://www.w3.org/2000/svg" '
            f'style="font-family:sans-serif">'
            f'<rect x="{_PAD_L}" y="{_PAD_T}" width="{pw}" height="{ph}" '
            f'style="fill:{_PLOT_BG};stroke:{_GRID}"/>{"".join(ticks)}'
            f'<path d="{"".join(path)}" fill="none" stroke="#1e88e5" stroke-width="1.6"/>'
            f"{dots}"
            f'<text x="{_PAD_L}" y="{_H - 8}" font-size="10" style="fill:{_FG2}">step {x0}</text>'
            f'<text x="{_W - _PAD_R}" y="{_H - 8}" font-size="10" style="fill:{_FG2}" '
            f'text-anchor="end">step {history[-1][0]}</text>'
            f'<text x="{_PAD_L + pw / 2:.0f}" y="{_H - 8}" font-size="10" '
            f'style="fill:{_FG2}" text-anchor="middle">loss scale per update (log2)</text>'
            '</svg>')


def scaler_html(scaler) -> str:
    """HTML for a GradScaler: current settings, the scale history chart and skipped steps.

    Args:
        scaler (GradScaler): the scaler.

    Returns:
        str: a self-contained HTML block.
    """
    if not scaler.is_enable():
        return (f"<div style='font-family:sans-serif;color:{_FG}'><b>GradScaler</b> (disabled: "
                "losses and gradients pass through unscaled)</div>")
    hist = list(scaler._history)
    skipped = sum(1 for _, _, bad in hist if bad)
    scale = scaler._scale_value()
    rows = [("scale", _fmt(scale)),
            ("dynamic", str(scaler.is_use_dynamic_loss_scaling())),
            ("updates", str(len(hist) and hist[-1][0])),
            ("skipped steps", f"{skipped}" + (f" ({100.0 * skipped / len(hist):.1f}%)"
                                               if hist else "")),
            ("incr_ratio / every", f"{scaler.get_incr_ratio():g} / "
                                   f"{scaler.get_incr_every_n_steps()} steps"),
            ("decr_ratio / every", f"{scaler.get_decr_ratio():g} / "
                                   f"{scaler.get_decr_every_n_nan_or_inf()} bad steps")]
    # every cell names its colours (and no background of its own), so no theme can put
    # light text on a light row
    cell = "background:transparent;padding:1px 10px 1px 0;text-align:left"
    table = "".join(f"<tr style='background:transparent'><td style='color:{_FG2};{cell}'>"
                    f"{html.escape(k)}</td><td style='color:{_FG};{cell}'><b>{html.escape(v)}"
                    "</b></td></tr>" for k, v in rows)
    chart = _chart(hist) if hist else \
        f"<div style='color:{_FG2}'>no update yet: the chart fills as training runs</div>"
    return (f"<div class='phl-scaler' style='font-family:sans-serif;color:{_FG};display:flex;"
            "gap:16px;align-items:flex-start;flex-wrap:wrap'>"
            f"<div><b>GradScaler</b><table style='font-size:12px;color:{_FG}'>{table}</table>"
            f"</div><div>{chart}</div></div>")


def stats_html(table) -> str:
    """HTML table of an OperatorStats: one row per op, calls per dtype.

    Args:
        table (OperatorStats): the collected counts.

    Returns:
        str: an HTML table.
    """
    counts = table.counts
    cols = (("fp16", "FP16 Calls"), ("bf16", "BF16 Calls"), ("fp32", "FP32 Calls"),
            ("other", "Other Calls"))
    # translucent tints: the theme's text colour stays readable on them
    low = {"fp16": "rgba(30,136,229,.18)", "bf16": "rgba(126,87,194,.2)"}
    head = "".join(f"<th style='text-align:right;padding:2px 8px;color:{_FG}'>{t}</th>"
                   for _, t in cols)
    body = []
    for name, row in counts.items():
        cells = "".join(
            f"<td style='text-align:right;padding:2px 8px;color:{_FG};"
            f"{'background:' + low[k] if k in low and row[k] else ''}'>{row[k]}</td>"
            for k, _ in cols)
        body.append(f"<tr><td style='padding:2px 8px;color:{_FG}'><code>{html.escape(name)}"
                    "</code></td>"
                    f"{cells}</tr>")
    totals = {k: sum(r[k] for r in counts.values()) for k, _ in cols}
    foot = "".join(f"<td style='text-align:right;padding:2px 8px;color:{_FG}'><b>"
                   f"{totals[k]}</b></td>" for k, _ in cols)
    return (f"<table style='font-family:sans-serif;font-size:12px;border-collapse:collapse;"
            f"color:{_FG}'><thead><tr><th style='text-align:left;padding:2px 8px;color:{_FG}'>"
            f"Op Name</th>{head}</tr></thead><tbody>{''.join(body)}</tbody><tfoot><tr>"
            f"<td style='padding:2px 8px;color:{_FG}'><b>op count: {len(counts)}</b></td>"
            f"{foot}</tr></tfoot></table>")


def display_stats(table) -> bool:
    """Show an OperatorStats as HTML when running in a notebook; False elsewhere."""
    if not in_notebook():
        return False
    from IPython.display import HTML, display

    display(HTML(stats_html(table)))
    return True


class _Watch:
    """A live GradScaler chart: the display is redrawn every ``every`` updates."""

    def __init__(self, scaler, every):
        from IPython.display import HTML, display

        self._scaler = scaler
        self._every = max(1, int(every))
        self._html = HTML
        self._handle = display(HTML(scaler_html(scaler)), display_id=True)
        scaler._listeners.append(self)

    def __call__(self, scaler):
        if scaler._steps % self._every == 0:
            self._handle.update(self._html(scaler_html(scaler)))

    def stop(self):
        """Stop redrawing (the last chart stays)."""
        if self in self._scaler._listeners:
            self._scaler._listeners.remove(self)
        self._handle.update(self._html(scaler_html(self._scaler)))


def watch(scaler, every=10):
    """Show a GradScaler's chart in the notebook and redraw it while training runs.

    Args:
        scaler (GradScaler): the scaler to follow.
        every (int): redraw every this many updates. Default 10.

    Returns:
        An object whose ``stop()`` ends the live updates; None outside a notebook.
    """
    if not in_notebook():
        return None
    return _Watch(scaler, every)
