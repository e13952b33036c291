"""Paddle's tensor repr: a header line, then the values laid out as NumPy does."""

from __future__ import annotations

import numpy as np

from . import dtype as _dt

__all__ = []

_options = {"precision": 8, "threshold": 1000, "edgeitems": 3, "linewidth": 80,
            "sci_mode": False}


def set_printoptions(precision=None, threshold=None, edgeitems=None, sci_mode=None,
                     linewidth=None) -> None:
    """Set how tensors print (``paddle.set_printoptions``)."""
    for key, val in (("precision", precision), ("threshold", threshold),
                     ("edgeitems", edgeitems), ("sci_mode", sci_mode),
                     ("linewidth", linewidth)):
        if val is not None:
            if key == "sci_mode":
                if not isinstance(val, bool):
                    raise TypeError(f"set_printoptions: sci_mode must be a bool, got {val!r}")
            elif not isinstance(val, int):
                raise TypeError(f"set_printoptions: {key} must be an int, got {val!r}")
            _options[key] = val


def _shown(arr: np.ndarray) -> np.ndarray:
    """The elements that are printed (edge items only when the tensor is summarised)."""
    if arr.size <= _options["threshold"]:
        return arr
    e = _options["edgeitems"]
    for ax in range(arr.ndim):
        if arr.shape[ax] > 2 * e:
            idx = np.r_[0:e, arr.shape[ax] - e:arr.shape[ax]]
            arr = np.take(arr, idx, axis=ax)
    return arr


def _float_str(v, int_mode, prec, sci):
    if np.isnan(v):
        return "nan"
    if sci:
        return np.format_float_scientific(v, precision=prec, unique=False)
    if int_mode or v == np.floor(v):
        return (f"{v:.0f}" if np.isfinite(v) else ("inf" if v > 0 else "-inf")) + "."
    return f"{v:.{prec}f}"


def format_values(arr: np.ndarray, indent: int) -> str:
    """Paddle's layout: NumPy's nesting and wrapping, every element left-aligned to one width,
    a sign column when any value is negative, integral floats as ``1.``."""
    if arr.dtype == _dt.BFLOAT16_NP or arr.dtype == np.float16:
        arr = arr.astype(np.float32)
    if arr.size == 0:
        return "[]"
    shown = _shown(arr).ravel()
    kind = arr.dtype.kind
    prec = _options["precision"]
    if kind == "f":
        finite = shown[np.isfinite(shown)]
        int_mode = bool(np.all(finite == np.floor(finite)))
        sci = _options["sci_mode"]

        def to_str(v):
            return _float_str(v, int_mode, prec, sci)
    elif kind == "c":
        def to_str(v):
            return str(complex(v))
    else:
        to_str = str
    strs = [to_str(v) for v in shown.tolist()] if kind != "f" else [to_str(v) for v in shown]
    neg = any(x.startswith("-") for x in strs)
    width = max(len(x) for x in strs)

    def fmt(v):
        x = to_str(v)
        if neg and len(x) < width and not x.startswith("-"):
            x = " " + x
        return x.ljust(width)

    if arr.ndim == 0:
        return fmt(arr.item() if kind != "f" else arr[()]).rstrip()
    return np.array2string(arr, separator=", ", prefix=" " * indent,
                           max_line_width=_options["linewidth"] + 1,
                           threshold=_options["threshold"], edgeitems=_options["edgeitems"],
                           formatter={"all": fmt})


def tensor_repr(t) -> str:
    head = (f"Tensor(shape={t.shape}, dtype={t.dtype.name}, place={t.place}, "
            f"stop_gradient={t.stop_gradient},\n       ")
    return head + format_values(t.numpy(), 7) + ")"
