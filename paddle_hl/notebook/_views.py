"""Shared pieces of the data and diagnosis views (:mod:`.show_batch`, :mod:`.lr_find`,
:mod:`.interpret`): a view object that is HTML in Jupyter and text in a terminal, matplotlib
figures rendered to embedded PNG, and the dataset introspection they share (class names, the
Normalize transform, the dataset behind a DataLoader).

The HTML uses inline styles and JupyterLab's CSS variables (with fallbacks), so it reads in
light and dark themes and stays as it is in a saved notebook (pictures are PNG data URIs with
their own white background).
"""

from __future__ import annotations

import base64
import html
import io
import numbers

import numpy as np

from . import _env

__all__ = []

FG = "var(--jp-ui-font-color1,#212121)"
FG2 = "var(--jp-ui-font-color2,#555555)"
BORDER = "var(--jp-border-color2,#e0e0e0)"
# a wrong prediction and a right one, on the white background of the pictures
BAD = "#b71c1c"
GOOD = "#1b5e20"


class View:
    """A rendered view: ``_repr_html_`` in Jupyter, the text form in a terminal.

    Args:
        kind (str): the view's name, also its CSS class (``phl-<kind>``).
        body (str): the HTML inside the view's root element.
        text (str): the terminal form (a table and a short summary, no pictures).
    """

    def __init__(self, kind: str, body: str, text: str):
        self.kind = kind
        self.body = body
        self.text = text

    def _repr_html_(self):
        return (f"<div class='phl-view phl-{self.kind}' style='color:{FG};max-width:100%;"
                f"overflow-x:auto;font-family:var(--jp-ui-font-family,sans-serif);"
                f"font-size:13px'>{self.body}</div>")

    def __repr__(self):
        return self.text


def present(view: View, show: bool) -> None:
    """Show ``view``: displayed in Jupyter, printed as text elsewhere (nothing when
    ``show`` is False)."""
    if not show:
        return
    if _env.in_notebook():
        _env.display(view)
    else:
        print(view.text)


def have_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def figure(width: float, height: float):
    """A bare matplotlib Figure with an Agg canvas (pyplot and the user's backend are left
    alone)."""
    _env.require("matplotlib", "paddle_hl.notebook")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def png_bytes(fig, dpi: int = 144) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, facecolor="white")
    return buf.getvalue()


def img_tag(png: bytes, alt: str, width_px: float | None = None) -> str:
    """An ``<img>`` with a PNG data URI, shown at ``width_px`` CSS pixels (at most the output
    width)."""
    data = base64.b64encode(png).decode("ascii")
    width = f"width:{width_px:.0f}px;" if width_px else ""
    return (f"<img alt='{html.escape(alt)}' style='{width}max-width:100%;height:auto;"
            f"display:block' src='data:image/png;base64,{data}'/>")


def fig_img(fig, alt: str, dpi: int = 144) -> str:
    """``fig`` as an ``<img>`` shown at its nominal size (drawn at ``dpi`` for sharpness)."""
    w = fig.get_figwidth() * 100
    return img_tag(png_bytes(fig, dpi), alt, w)


def para(text: str, bold: bool = False, muted: bool = False) -> str:
    weight = "font-weight:bold;" if bold else ""
    color = FG2 if muted else FG
    return (f"<div style='{weight}color:{color};margin:4px 0'>"
            f"{html.escape(text)}</div>")


def text_table(columns, rows, title=None) -> str:
    """A plain-text table (columns padded), as the terminal forms print them."""
    from .tables import _cell_text

    cells = [[str(c) for c in columns]] + [[_cell_text(v) for v in r] for r in rows]
    widths = [max(len(r[j]) for r in cells) for j in range(len(columns))]
    lines = [title] if title else []
    for i, r in enumerate(cells):
        lines.append("  ".join(c.rjust(w) if i and _numeric(rows, j) else c.ljust(w)
                               for j, (c, w) in enumerate(zip(r, widths))).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _numeric(rows, j):
    return bool(rows) and all(isinstance(r[j], numbers.Number) for r in rows)


# ---------------------------------------------------------------------- dataset introspection

def is_loader(data) -> bool:
    """Whether ``data`` is a DataLoader (known by its batch sampler: the views import nothing
    from the library)."""
    return hasattr(data, "batch_sampler") and hasattr(data, "dataset")


def base_dataset(data):
    """The Dataset behind ``data`` (a Dataset, a DataLoader, a Subset of one ...)."""
    ds = data.dataset if is_loader(data) else data
    for _ in range(5):  # Subset / wrappers: down to the dataset that carries the metadata
        if any(hasattr(ds, a) for a in ("transform", "classes", "label_list", "decode")):
            break
        inner = getattr(ds, "dataset", None)
        if inner is None or inner is ds:
            break
        ds = inner
    return ds


def class_names(data, num_classes: int | None = None):
    """Class names the dataset carries (``classes``, ``label_list``, ``class_names`` or
    ``label_names``), or None; a list whose length differs from ``num_classes`` is ignored."""
    ds = base_dataset(data)
    for attr in ("classes", "class_names", "label_names", "label_list"):
        names = getattr(ds, attr, None)
        if isinstance(names, dict):
            try:
                names = [k for k, _ in sorted(names.items(), key=lambda kv: kv[1])]
            except TypeError:
                continue
        if isinstance(names, (list, tuple)) and names and all(
                isinstance(n, str) for n in names):
            if num_classes is None or len(names) == num_classes:
                return list(names)
    return None


def find_normalize(data):
    """The last Normalize-like transform of the dataset's transform pipeline (an object with
    ``mean`` and ``std``; Compose pipelines are searched), or None."""
    ds = base_dataset(data)
    found = None
    stack = [getattr(ds, "transform", None), getattr(ds, "transforms", None)]
    while stack:
        t = stack.pop(0)
        if t is None:
            continue
        if isinstance(t, (list, tuple)):
            stack[:0] = list(t)
            continue
        inner = getattr(t, "transforms", None)
        if isinstance(inner, (list, tuple)):
            stack[:0] = list(inner)
            continue
        if type(t).__name__ == "Normalize" and hasattr(t, "mean") and hasattr(t, "std"):
            found = t
    return found


def to_numpy(x) -> np.ndarray:
    """An array of ``x``: a Tensor (anything with ``numpy()``), an array or a number."""
    if not isinstance(x, np.ndarray) and callable(getattr(x, "numpy", None)):
        return np.asarray(x.numpy())
    return np.asarray(x)


def label_text(label, names) -> str:
    """A label as a title: the class name when known, else the number(s)."""
    arr = np.asarray(to_numpy(label))
    if arr.size == 1 and arr.dtype.kind in "iub":
        k = int(arr.reshape(-1)[0])
        if names is not None and 0 <= k < len(names):
            return names[k]
        return str(k)
    if arr.size == 1 and arr.dtype.kind == "f":
        return f"{float(arr.reshape(-1)[0]):.4g}"
    if arr.dtype.kind in "US":
        return str(arr.reshape(-1)[0]) if arr.size == 1 else str(arr.tolist())
    flat = arr.reshape(-1)
    shown = ", ".join(f"{v:.3g}" if arr.dtype.kind == "f" else str(v) for v in flat[:6])
    return f"[{shown}{', ...' if flat.size > 6 else ''}]"
