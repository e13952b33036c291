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


def format_values(arr: np.ndarray, indent: int) -> str:
    if arr.dtype == _dt.BFLOAT16_NP:
        arr = arr.astype(np.float32)
    if arr.size == 0:
        return "[]"
    kw = {}
    if arr.dtype.kind in "fc":
        if _options["sci_mode"]:
            kw["formatter"] = {"float_kind": lambda v: np.format_float_scientific(
                v, precision=_options["precision"])}
        else:
            kw["suppress_small"] = True
    return np.array2string(arr, precision=_options["precision"], separator=", ",
                           prefix=" " * indent, max_line_width=_options["linewidth"],
                           threshold=_options["threshold"], edgeitems=_options["edgeitems"],
                           **kw)


def tensor_repr(t) -> str:
    head = (f"Tensor(shape={t.shape}, dtype={t.dtype.name}, place={t.place}, "
            f"stop_gradient={t.stop_gradient},\n       ")
    return head + format_values(t.numpy(), 7) + ")"
