"""HTML tables for Jupyter: a generic builder and ``paddle.summary``'s layer table.

The markup uses inline styles only (no ``<style>`` block, no script), so it renders the same in
JupyterLab, classic Notebook, VS Code and static viewers such as GitHub that strip stylesheets.
"""

from __future__ import annotations

import html
import numbers
from collections.abc import Iterable, Mapping, Sequence

from . import _env

__all__ = []

# JupyterLab's theme variables, with fallbacks for classic Notebook and plain HTML: the text is
# the theme's font colour on the theme's background, so both themes read
_FG = "var(--jp-ui-font-color1,#212121)"
_TABLE = ("border-collapse:collapse;font-family:var(--jp-code-font-family,monospace);"
          f"font-size:12px;margin:4px 0;color:{_FG};background:var(--jp-layout-color0,#fff)")
_CAPTION = (f"caption-side:top;text-align:left;font-weight:bold;padding:2px 0 4px 0;"
            f"color:{_FG}")
_TH = (f"border-bottom:2px solid var(--jp-border-color1,#888);padding:3px 10px;color:{_FG};"
       "background:var(--jp-layout-color2,#eee);text-align:{align};white-space:nowrap")
_TD = (f"border-bottom:1px solid var(--jp-border-color2,#ddd);padding:2px 10px;color:{_FG};"
       "text-align:{align};white-space:nowrap")
_FOOT = f"padding:2px 10px;color:{_FG};" + "text-align:{align};font-weight:{weight}"
_ALIGNS = ("left", "right", "center")


def _cell_text(value) -> str:
    """Numbers as Paddle prints them in tables (thousands separators, 4 decimals)."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, numbers.Integral):
        return f"{int(value):,}"
    if isinstance(value, numbers.Real):
        return f"{float(value):.4f}"
    return str(value)


def html_table(columns: Sequence[str], rows: Iterable[Sequence], title: str | None = None,
               footer: Sequence[tuple[str, object]] | None = None,
               align: Sequence[str] | None = None) -> str:
    """Build an HTML table (escaped, inline-styled) from a header and rows.

    Args:
        columns (Sequence[str]): the header cells.
        rows (Iterable[Sequence]): one sequence of cells per row, each as long as ``columns``.
            Integers print with thousands separators, other numbers with 4 decimals.
        title (str, optional): a caption above the table.
        footer (Sequence[tuple[str, object]], optional): ``(label, value)`` lines under the
            table, e.g. totals.
        align (Sequence[str], optional): ``'left'``, ``'right'`` or ``'center'`` per column;
            by default numeric columns are right-aligned and the others left-aligned.

    Returns:
        str: the ``<table>`` markup.

    Example:
        >>> html_table(["name", "n"], [["a", 1200]])[:6]
        '<table'
    """
    columns = [str(c) for c in columns]
    rows = [list(r) for r in rows]
    for i, r in enumerate(rows):
        if len(r) != len(columns):
            raise ValueError(f"html_table: row {i} has {len(r)} cells but there are "
                             f"{len(columns)} columns {columns}")
    if align is None:
        align = [
            "right" if rows and all(isinstance(r[j], numbers.Number) for r in rows) else "left"
            for j in range(len(columns))]
    align = list(align)
    if len(align) != len(columns) or any(a not in _ALIGNS for a in align):
        raise ValueError(f"html_table: align must give one of {_ALIGNS} per column "
                         f"({len(columns)}), got {align}")
    out = [f'<table style="{_TABLE}">']
    if title:
        out.append(f'<caption style="{_CAPTION}">{html.escape(str(title))}</caption>')
    out.append("<thead><tr>")
    out += [f'<th style="{_TH.format(align=a)}">{html.escape(c)}</th>'
            for c, a in zip(columns, align)]
    out.append("</tr></thead><tbody>")
    for r in rows:
        out.append("<tr>" + "".join(
            f'<td style="{_TD.format(align=a)}">{html.escape(_cell_text(v))}</td>'
            for v, a in zip(r, align)) + "</tr>")
    out.append("</tbody>")
    if footer:
        out.append("<tfoot>")
        span = max(len(columns) - 1, 1)
        for label, value in footer:
            out.append(
                f'<tr><td colspan="{span}" style="{_FOOT.format(align="left", weight="bold")}">'
                f"{html.escape(str(label))}</td>"
                f'<td style="{_FOOT.format(align="right", weight="normal")}">'
                f"{html.escape(_cell_text(value))}</td></tr>")
        out.append("</tfoot>")
    out.append("</table>")
    return "".join(out)


class HTMLTable:
    """A table that Jupyter renders as HTML (``_repr_html_``) and a terminal as text.

    Args:
        columns (Sequence[str]): the header cells.
        rows (Iterable[Sequence]): the rows.
        title (str, optional): a caption.
        footer (Sequence[tuple[str, object]], optional): ``(label, value)`` lines.
        align (Sequence[str], optional): per-column alignment.
    """

    def __init__(self, columns, rows, title=None, footer=None, align=None):
        self.columns = [str(c) for c in columns]
        self.rows = [list(r) for r in rows]
        self.title = title
        self.footer = list(footer or [])
        self.align = align
        self._html = html_table(self.columns, self.rows, title, self.footer, align)

    def _repr_html_(self):
        return self._html

    def __repr__(self):
        cells = [self.columns] + [[_cell_text(v) for v in r] for r in self.rows]
        widths = [max(len(r[j]) for r in cells) for j in range(len(self.columns))]
        lines = [self.title] if self.title else []
        for i, r in enumerate(cells):
            lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
            if i == 0:
                lines.append("  ".join("-" * w for w in widths))
        lines += [f"{label}: {_cell_text(value)}" for label, value in self.footer]
        return "\n".join(lines)


def show_table(columns, rows, title=None, footer=None, align=None) -> HTMLTable:
    """Display an :class:`HTMLTable` in the current notebook output and return it.

    Args:
        columns (Sequence[str]): the header cells.
        rows (Iterable[Sequence]): the rows.
        title (str, optional): a caption.
        footer (Sequence[tuple[str, object]], optional): ``(label, value)`` lines.
        align (Sequence[str], optional): per-column alignment.

    Returns:
        HTMLTable: the displayed table.
    """
    table = HTMLTable(columns, rows, title, footer, align)
    _env.display(table)
    return table


def _summary_table(rows: Mapping[str, Mapping], info: Mapping[str, int]) -> HTMLTable:
    body = [[name, str(r["input_shape"]), str(r["output_shape"]), int(r["nb_params"])]
            for name, r in rows.items()]
    total = int(info["total_params"])
    trainable = int(info["trainable_params"])
    footer = [("Total params", total), ("Trainable params", trainable),
              ("Non-trainable params", total - trainable),
              ("Params size (MB)", f"{total * 4.0 / 1024 ** 2:0.2f}")]
    return HTMLTable(["Layer (type)", "Input Shape", "Output Shape", "Param #"], body,
                     title="Model Summary", footer=footer,
                     align=["left", "left", "left", "right"])


def summary_html(rows: Mapping[str, Mapping], info: Mapping[str, int]) -> str:
    """``paddle.summary``'s table as HTML.

    Args:
        rows (Mapping[str, Mapping]): layer key (``'Conv2D-1'``) to a dict with
            ``input_shape``, ``output_shape`` and ``nb_params``, in call order.
        info (Mapping[str, int]): ``{'total_params': ..., 'trainable_params': ...}``.

    Returns:
        str: the ``<table>`` markup.
    """
    return _summary_table(rows, info)._repr_html_()


def show_summary(rows: Mapping[str, Mapping], info: Mapping[str, int]) -> HTMLTable:
    """Display ``paddle.summary``'s table as HTML in the current notebook output.

    Args:
        rows (Mapping[str, Mapping]): the per-layer rows (see :func:`summary_html`).
        info (Mapping[str, int]): the parameter totals.

    Returns:
        HTMLTable: the displayed table.
    """
    table = _summary_table(rows, info)
    _env.display(table)
    return table
