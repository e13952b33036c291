"""Tensor creation (Paddle's ``tensor/creation.py``)."""

from __future__ import annotations

import numpy as np

from ..framework import dtype as _dt
from ..framework import place as _pl
from ..framework.tensor import Tensor, _wrap, to_array
from ._helpers import shape_arg, tensor_arg

__all__ = []


def to_tensor(data, dtype=None, place=None, stop_gradient=True) -> Tensor:
    """Build a Tensor from Python data, a NumPy array or a Tensor (always a copy).

    Python ints become int64, Python floats the default dtype (float32), bools bool.

    Args:
        data: a number, (nested) list/tuple, numpy.ndarray or Tensor.
        dtype (str|paddle.dtype, optional): the dtype to cast to.
        place (Place|str, optional): where to put it; the current device by default.
        stop_gradient (bool): whether to stop gradients (default True).

    Example:
        >>> paddle.to_tensor([[1, 2], [3, 4]]).dtype
        paddle.int64
    """
    t = _wrap(to_array(data, dtype, place, "to_tensor"), bool(stop_gradient))
    return t


def _xp_place(place):
    return _pl.xp_for(_pl.parse_place(place) if place is not None else _pl.current_place())


def _np_dtype(dtype, default=None):
    if dtype is None:
        return default if default is not None else _dt.default_np()
    return _dt.to_np(dtype)


def full(shape, fill_value, dtype=None, name=None) -> Tensor:
    """A tensor of ``shape`` filled with ``fill_value``.

    With ``dtype=None`` the dtype follows the value: bool, int64 for ints, else the default float.
    """
    shp = shape_arg(shape, "full")
    if any(s < 0 for s in shp):
        raise ValueError(f"full: shape {shp} must not contain negative dims")
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if dtype is None:
        if isinstance(fill_value, bool):
            npd = np.dtype(np.bool_)
        elif isinstance(fill_value, complex):
            npd = np.dtype(np.complex64)
        else:
            npd = _dt.default_np()
    else:
        npd = _dt.to_np(dtype)
    xp = _xp_place(None)
    return _wrap(xp.full(shp, fill_value, dtype=npd))


def zeros(shape, dtype=None, name=None) -> Tensor:
    """A tensor of zeros (default float dtype)."""
    shp = shape_arg(shape, "zeros")
    return _wrap(_xp_place(None).zeros(shp, dtype=_np_dtype(dtype)))


def ones(shape, dtype=None, name=None) -> Tensor:
    """A tensor of ones (default float dtype)."""
    shp = shape_arg(shape, "ones")
    return _wrap(_xp_place(None).ones(shp, dtype=_np_dtype(dtype)))


def _like(x, op):
    return tensor_arg(x, op)


def full_like(x, fill_value, dtype=None, name=None) -> Tensor:
    """A tensor shaped like x filled with ``fill_value`` (x's dtype unless ``dtype``)."""
    x = _like(x, "full_like")
    npd = x._data.dtype if dtype is None else _dt.to_np(dtype)
    from .. import backend

    return _wrap(backend.get_array_module(x._data).full(x._data.shape, fill_value, dtype=npd))


def zeros_like(x, dtype=None, name=None) -> Tensor:
    return full_like(x, 0, dtype)


def ones_like(x, dtype=None, name=None) -> Tensor:
    return full_like(x, 1, dtype)


def arange(start=0, end=None, step=1, dtype=None, name=None) -> Tensor:
    """Values in ``[start, end)`` with ``step``; ``arange(n)`` gives ``[0, n)``.

    int64 when start, end and step are all ints, else the default float dtype.
    """
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = vals
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ValueError("arange: step must not be 0")
    if dtype is None:
        ints = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
        npd = np.dtype(np.int64) if ints else _dt.default_np()
    else:
        npd = _dt.to_np(dtype)
    n = int(np.ceil((end - start) / step))
    xp = _xp_place(None)
    return _wrap((xp.arange(max(n, 0), dtype=np.float64) * step + start).astype(npd)
                 if npd.kind == "f" else xp.arange(start, end, step).astype(npd))


def eye(num_rows, num_columns=None, dtype=None, name=None) -> Tensor:
    """A 2-D identity-like matrix."""
    n = int(num_rows.item() if isinstance(num_rows, Tensor) else num_rows)
    m = n if num_columns is None else int(
        num_columns.item() if isinstance(num_columns, Tensor) else num_columns)
    if n < 0 or m < 0:
        raise ValueError(f"eye: num_rows and num_columns must be non-negative, got {n}, {m}")
    return _wrap(_xp_place(None).eye(n, m, dtype=_np_dtype(dtype)))


API = ["to_tensor", "full", "zeros", "ones", "full_like", "zeros_like", "ones_like", "arange",
       "eye"]
METHODS = []
