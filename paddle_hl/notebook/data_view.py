"""Look at the data as the model receives it: :func:`show_batch`.

A grid of samples after the dataset's transforms, titled with their labels (class names when
the dataset has them): images (de-normalised for display: the dataset's Normalize transform
is found and inverted, or ``mean``/``std`` are given), a player and a spectrogram for audio
samples, the decoded text for text datasets (those with ``decode(ids)``), the graph for
samples that carry an edge list. On a DataLoader it shows one real batch. Any Dataset whose
items are ``(image-like array, label)`` works: HWC or CHW, 1 or 3 channels, float or uint8.

In Jupyter the view is HTML (a PNG grid with its own white background, or themed tables), kept
in the saved notebook; in a terminal it prints a table of the samples and a short summary.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from . import _views
from .tables import html_table

__all__ = []  # implementation module: paddle_hl.notebook gives the names

_CHANNELS = (1, 3, 4)


def _layout(shape, data_format=None):
    """``'HW'``, ``'CHW'`` or ``'HWC'`` for an image-like array shape, or None."""
    if len(shape) == 2:
        return "HW" if min(shape) >= 2 else None
    if len(shape) != 3:
        return None
    first, last = shape[0] in _CHANNELS, shape[-1] in _CHANNELS
    if first and last:  # e.g. [3, 32, 3]: the transform's layout, else Paddle's CHW
        return data_format if data_format in ("CHW", "HWC") else "CHW"
    if first and min(shape[1:]) >= 2:
        return "CHW"
    if last and min(shape[:2]) >= 2:
        return "HWC"
    return None


def _stats(data, mean, std):
    """The (mean, std, data_format) to invert: explicit ones, else the dataset's Normalize."""
    fmt = None
    if mean is None and std is None and data is not None:
        t = _views.find_normalize(data)
        if t is not None:
            mean, std, fmt = t.mean, t.std, getattr(t, "data_format", None)
    if mean is None and std is None:
        return None, None, fmt
    mean = np.asarray(0.0 if mean is None else mean, dtype=np.float64).reshape(-1)
    std = np.asarray(1.0 if std is None else std, dtype=np.float64).reshape(-1)
    return mean, std, fmt


def _per_channel(v, c, what):
    if v.size == 1 or v.size == c:
        return v
    if np.all(v == v[0]):  # Normalize(127.5, ...) stores [m, m, m] for any image
        return v[:1]
    raise ValueError(f"show_batch: {what} has {v.size} values for an image with {c} channel(s)")


def display_image(x, data=None, mean=None, std=None):
    """An image-like sample as the float image ``[H, W]`` or ``[H, W, 3]`` in ``[0, 1]`` that
    is drawn: channels last, de-normalised (``x * std + mean`` per channel, with the given
    ``mean``/``std`` or those of the Normalize transform of ``data``), divided by 255 when the
    values are 0-255 pixel values, else clipped to ``[0, 1]``; an image of unknown scale
    outside ``[0, 1]`` is min-max rescaled.

    Args:
        x (np.ndarray | Tensor): the sample, ``[H, W]``, ``[C, H, W]`` or ``[H, W, C]``.
        data (Dataset | DataLoader, optional): where to look for a Normalize transform.
        mean (float | list, optional): the per-channel mean to add back.
        std (float | list, optional): the per-channel standard deviation to multiply back.

    Returns:
        np.ndarray | None: float64 image, or None when ``x`` is not image-like.
    """
    raw = _views.to_numpy(x)
    if raw.dtype.kind not in "fiub":
        return None
    m, s, fmt = _stats(data, mean, std)
    layout = _layout(raw.shape, fmt)
    if layout is None:
        return None
    arr = raw.astype(np.float64)
    if layout == "CHW":
        arr = np.moveaxis(arr, 0, -1)
    elif layout == "HW":
        arr = arr[..., None]
    c = arr.shape[-1]
    known = m is not None
    if known:
        arr = arr * _per_channel(s, c, "std") + _per_channel(m, c, "mean")
    if raw.dtype == np.uint8 or (known and arr.max(initial=0) > 1.5) or (
            raw.dtype.kind in "iu" and arr.max(initial=0) > 1):
        arr = arr / 255.0
    elif not known and (arr.min(initial=0) < -1e-3 or arr.max(initial=0) > 1 + 1e-3):
        lo, hi = arr.min(), arr.max()
        arr = (arr - lo) / (hi - lo) if hi > lo else np.zeros_like(arr)
    arr = np.clip(arr, 0.0, 1.0)
    if c == 1:
        return arr[..., 0]
    return arr[..., :3]


def _split_item(item):
    if isinstance(item, dict):
        for key in ("image", "img", "x", "input", "feat", "data"):
            if key in item:
                return item[key], item.get("label", item.get("y"))
        vals = list(item.values())
        return vals[0], (vals[1] if len(vals) > 1 else None)
    if isinstance(item, (list, tuple)) and not hasattr(item, "_meta"):
        return item[0], (item[1] if len(item) > 1 else None)
    if hasattr(item, "_meta"):  # an audio sample: a (feature, label) tuple with its meta
        return item[0], item[1]
    return item, None


def _samples(data, n):
    """``(items, from_loader)``: up to ``n`` raw items of a Dataset, or one batch of a
    DataLoader split into items."""
    if _views.is_loader(data):
        batch = next(iter(data))
        fields = list(batch) if isinstance(batch, (list, tuple)) else [batch]
        arrays = [_views.to_numpy(f) for f in fields]
        size = len(arrays[0])
        return [tuple(a[i] for a in arrays) for i in range(min(n, size))], True
    if hasattr(data, "__getitem__") and hasattr(data, "__len__"):
        return [data[i] for i in range(min(n, len(data)))], False
    if hasattr(data, "__iter__"):
        return list(itertools.islice(iter(data), n)), False
    raise TypeError(f"show_batch: expected a Dataset or a DataLoader, got {type(data).__name__}")


def _edges(x):
    """An edge list ``[2, E]`` from a graph-like sample (a dict or object with
    ``edge_index`` / ``edges``), else None."""
    for key in ("edge_index", "edges"):
        e = x.get(key) if isinstance(x, dict) else getattr(x, key, None)
        if e is not None:
            e = _views.to_numpy(e)
            if e.ndim == 2 and e.dtype.kind in "iu":
                return e if e.shape[0] == 2 else e.T if e.shape[1] == 2 else None
    return None


class BatchView(_views.View):
    """What :func:`show_batch` shows (returned with ``show=False``).

    Attributes:
        kind (str): ``'image'``, ``'audio'``, ``'text'``, ``'graph'`` or ``'array'``.
        titles (list[str]): the label of each sample.
        images (list[np.ndarray]): the drawn images (float in ``[0, 1]``, channels last) of an
            image batch.
        texts (list[str]): the decoded texts of a text batch.
        shapes (list[tuple]): each sample's input shape.
        normalize (tuple | None): the ``(mean, std)`` that was inverted.
        from_loader (bool): the samples are one batch of a DataLoader.
    """

    def __init__(self):
        super().__init__("batch", "", "")
        self.kind = "array"
        self.titles, self.images, self.texts, self.shapes = [], [], [], []
        self.normalize = None
        self.from_loader = False

    def _repr_html_(self):
        return (f"<div class='phl-view phl-batch' style='color:{_views.FG};max-width:100%;"
                f"overflow-x:auto;font-family:var(--jp-ui-font-family,sans-serif);"
                f"font-size:13px'>{self.body}</div>")


def _summary_line(view, count, what):
    src = "one batch of the DataLoader" if view.from_loader else "the first samples"
    norm = ""
    if view.normalize is not None:
        m, s = view.normalize
        norm = (f"; de-normalised with mean {np.round(m, 4).tolist()} std "
                f"{np.round(s, 4).tolist()}")
    shape = f", input {list(view.shapes[0])}" if view.shapes else ""
    return f"{count} {what} ({src}{shape}){norm}"


def show_batch(data, n: int = 16, columns: int | None = None, mean=None, std=None,
               class_names=None, max_chars: int = 300, show: bool = True):
    """Show samples as the model receives them (a paddle_hl extra, not in Paddle).

    Args:
        data (Dataset | DataLoader): a dataset (its first ``n`` samples are shown, after its
            transforms) or a DataLoader (one real batch is drawn from it).
        n (int): at most this many samples. Default 16.
        columns (int, optional): images per row (default: up to 8).
        mean (float | list, optional): the mean to add back for display, per channel (by
            default that of the dataset's Normalize transform, if it has one).
        std (float | list, optional): the standard deviation to multiply back, per channel.
        class_names (list[str], optional): label names (default: the dataset's ``classes`` /
            ``label_list`` when it has them).
        max_chars (int): decoded texts are cut to this length. Default 300.
        show (bool): display the view (Jupyter) or print its text form (terminal) and return
            None; with False, return the :class:`BatchView` without showing it.

    Returns:
        BatchView | None: the view when ``show`` is False.

    Example:
        >>> paddle_hl.notebook.show_batch(train_set, n=8)  # doctest: +SKIP
    """
    if not isinstance(n, int) or n <= 0:
        raise ValueError(f"show_batch: n must be a positive int, got {n!r}")
    items, from_loader = _samples(data, n)
    if not items:
        raise ValueError("show_batch: the data holds no samples")
    ds = _views.base_dataset(data)
    view = BatchView()
    view.from_loader = from_loader
    names = list(class_names) if class_names is not None else _views.class_names(ds)
    pairs = [_split_item(it) for it in items]
    view.titles = [_views.label_text(y, names) if y is not None else f"#{i}"
                   for i, (_x, y) in enumerate(pairs)]
    first = pairs[0][0]
    decode = getattr(ds, "decode", None)
    if hasattr(items[0], "_meta") and not from_loader:
        _audio(view, items)
    elif callable(decode) and _views.to_numpy(first).dtype.kind in "iu" and \
            _views.to_numpy(first).ndim <= 2:
        _text(view, pairs, decode, max_chars)
    elif _edges(first) is not None:
        _graph(view, pairs, columns)
    else:
        _image(view, pairs, data, mean, std, columns)
    _views.present(view, show)
    return None if show else view


def _audio(view, items):
    view.kind = "audio"
    cells, rows = [], []
    for title, it in zip(view.titles, items):
        meta = it._meta
        wav, sr = meta.get("waveform"), meta.get("sr")
        feat = _views.to_numpy(it[0])
        view.shapes.append(tuple(feat.shape))
        dur = f"{len(wav) / sr:.2f} s" if wav is not None and sr else ""
        rows.append([title, str(list(feat.shape)), dur])
        cells.append(f"<div style='min-width:0'>{it._repr_html_()}</div>")
    view.body = (_views.para(_summary_line(view, len(items), "audio samples"), muted=True)
                 + "<div style='display:grid;grid-template-columns:repeat(auto-fill,"
                 "minmax(320px,1fr));gap:12px'>" + "".join(cells) + "</div>")
    view.text = "\n".join([_summary_line(view, len(items), "audio samples"),
                           _views.text_table(["label", "feature", "duration"], rows)])


def _text(view, pairs, decode, max_chars):
    view.kind = "text"
    rows = []
    for title, (x, _y) in zip(view.titles, pairs):
        ids = _views.to_numpy(x).reshape(-1)
        view.shapes.append(tuple(_views.to_numpy(x).shape))
        text = str(decode(ids))
        view.texts.append(text)
        cut = text if len(text) <= max_chars else text[:max_chars - 3] + "..."
        rows.append([title, len(ids), cut])
    summary = _summary_line(view, len(pairs), "texts")
    table = html_table(["label", "tokens", "text"], rows, align=["left", "right", "left"])
    # long texts wrap inside the output instead of widening it
    table = table.replace("white-space:nowrap", "white-space:normal")
    view.body = _views.para(summary, muted=True) + table
    short = [[r[0], r[1], r[2][:70] + ("..." if len(r[2]) > 70 else "")] for r in rows]
    view.text = summary + "\n" + _views.text_table(["label", "tokens", "text"], short)


def _grid(count, columns):
    cols = columns or min(count, 8)
    return cols, -(-count // cols)


def _graph(view, pairs, columns):
    view.kind = "graph"
    rows = []
    graphs = []
    for title, (x, _y) in zip(view.titles, pairs):
        e = _edges(x)
        nodes = int(e.max()) + 1 if e.size else 0
        feats = x.get("x") if isinstance(x, dict) else getattr(x, "x", None)
        if feats is not None:
            nodes = max(nodes, len(_views.to_numpy(feats)))
        graphs.append((nodes, e))
        rows.append([title, nodes, int(e.shape[1])])
    summary = _summary_line(view, len(pairs), "graphs")
    parts = [_views.para(summary, muted=True)]
    if _views.have_matplotlib():
        cols, nrows = _grid(len(graphs), columns or 4)
        fig = _views.figure(2.4 * cols, 2.5 * nrows)
        axes = np.asarray(fig.subplots(nrows, cols, squeeze=False)).reshape(-1)
        for ax in axes:
            ax.axis("off")
        for ax, title, (nodes, e) in zip(axes, view.titles, graphs):
            ang = 2 * math.pi * np.arange(max(nodes, 1)) / max(nodes, 1)
            xy = np.stack([np.cos(ang), np.sin(ang)], axis=1)
            for a, b in e.T[:2000]:
                ax.plot(xy[[a, b], 0], xy[[a, b], 1], color="#9c9c9c", lw=0.6, zorder=1)
            ax.scatter(xy[:, 0], xy[:, 1], s=14, color="#4e79a7", zorder=2)
            ax.set_title(f"{title}\n{nodes} nodes, {e.shape[1]} edges", fontsize=8)
            ax.set_aspect("equal")
        fig.tight_layout(pad=0.4)
        parts.append(_views.fig_img(fig, "graphs"))
    parts.append(html_table(["label", "nodes", "edges"], rows))
    view.body = "".join(parts)
    view.text = summary + "\n" + _views.text_table(["label", "nodes", "edges"], rows)


def _image(view, pairs, data, mean, std, columns):
    m, s, _fmt = _stats(data, mean, std)
    images = [display_image(x, data, mean, std) for x, _y in pairs]
    view.shapes = [tuple(_views.to_numpy(x).shape) for x, _y in pairs]
    if any(im is None for im in images):  # not pictures: a table of the arrays
        view.kind = "array"
        rows = []
        for title, (x, _y) in zip(view.titles, pairs):
            a = _views.to_numpy(x)
            num = a.dtype.kind in "fiub" and a.size
            rows.append([title, str(list(a.shape)), str(a.dtype),
                         float(a.min()) if num else "", float(a.max()) if num else "",
                         float(a.mean()) if num else ""])
        cols = ["label", "shape", "dtype", "min", "max", "mean"]
        summary = _summary_line(view, len(pairs), "samples")
        view.body = _views.para(summary, muted=True) + html_table(cols, rows)
        view.text = summary + "\n" + _views.text_table(cols, rows)
        return
    view.kind = "image"
    view.images = images
    if m is not None:
        view.normalize = (m, s)
    summary = _summary_line(view, len(images), "images")
    rows = []
    for title, (x, _y) in zip(view.titles, pairs):
        a = _views.to_numpy(x)
        rows.append([title, str(list(a.shape)), float(a.min()), float(a.max()),
                     float(a.mean())])
    view.text = summary + "\n" + _views.text_table(
        ["label", "input shape", "min", "max", "mean"], rows,
        "the inputs as the model receives them")
    parts = [_views.para(summary, muted=True)]
    if _views.have_matplotlib():
        cols, nrows = _grid(len(images), columns)
        h, w = images[0].shape[:2]
        cell = 1.45 if max(h, w) <= 64 else 2.0
        fig = _views.figure(cell * cols, (cell * h / w + 0.3) * nrows)
        axes = np.asarray(fig.subplots(nrows, cols, squeeze=False)).reshape(-1)
        for ax in axes:
            ax.axis("off")
        for ax, title, im in zip(axes, view.titles, images):
            ax.imshow(im, cmap="gray" if im.ndim == 2 else None, vmin=0, vmax=1,
                      interpolation="nearest" if max(im.shape[:2]) <= 64 else "antialiased")
            ax.set_title(title if len(title) <= 18 else title[:17] + "\u2026", fontsize=9,
                         color="#212121")
        fig.tight_layout(pad=0.3)
        parts.append(_views.fig_img(fig, "samples: " + ", ".join(view.titles[:16])))
    else:
        parts.append(html_table(["label", "input shape", "min", "max", "mean"], rows))
    view.body = "".join(parts)
