"""Reductions and statistics (Paddle's ``tensor/stat.py`` and the reductions of ``math.py``).

Full reductions return 0-D tensors (shape ``[]``).
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..framework import dtype as _dt
from ..framework.op import apply
from ._helpers import as_float, cast_to, norm_axes, tensor_arg

__all__ = []


def _xp(a):
    return backend.get_array_module(a)


def _sum_kernel(x, axis, keepdim, dtype):
    xp = _xp(x)
    out = xp.sum(x, axis=axis, keepdims=keepdim, dtype=dtype)
    if not isinstance(out, xp.ndarray):
        out = xp.asarray(out)
    shape = x.shape

    def bw(g):
        if not keepdim and axis:
            g = xp.expand_dims(g, axis)
        return (xp.broadcast_to(g, shape).astype(x.dtype, copy=False),)

    return out, bw


def _sum_hi(i, g, axis, keepdim, dtype):
    from .manipulation import expand, unsqueeze

    gg = g[0]
    if not keepdim and axis:
        gg = unsqueeze(gg, list(axis))
    return (expand(gg, i[0].shape),)


_sum_kernel.op_name = "sum"
_sum_kernel.saves = ()
_sum_kernel.hi = _sum_hi


def sum(x, axis=None, dtype=None, keepdim=False, name=None):  # noqa: A001
    """Sum over ``axis`` (all axes when None; 0-D result).

    bool and int32 inputs sum to int64 unless ``dtype`` is given.
    """
    x = tensor_arg(x, "sum")
    axes = norm_axes(axis, x.ndim, "sum")
    if dtype is not None:
        npd = _dt.to_np(dtype)
    elif x._data.dtype.kind in "biu":
        npd = np.dtype(np.int64)
    else:
        npd = None
    if npd is not None and _dt.is_inexact_np(npd) and npd != x._data.dtype:
        x = cast_to(x, npd)
        npd = None
    return apply(_sum_kernel, x, axis=axes, keepdim=bool(keepdim), dtype=npd)


def _mean_kernel(x, axis, keepdim):
    xp = _xp(x)
    acc = np.float32 if x.dtype in _dt.LOW_FLOATS else None
    out = xp.mean(x, axis=axis, keepdims=keepdim, dtype=acc)
    out = xp.asarray(out).astype(x.dtype, copy=False)
    shape = x.shape
    n = 1
    for a in axis:
        n *= shape[a]

    def bw(g):
        if not keepdim and axis:
            g = xp.expand_dims(g, axis)
        return (xp.broadcast_to(g / n if n else g, shape).astype(x.dtype, copy=False),)

    return out, bw


def _mean_hi(i, g, axis, keepdim):
    from .manipulation import expand, unsqueeze

    n = 1
    for a in axis:
        n *= i[0].shape[a]
    gg = g[0]
    if not keepdim and axis:
        gg = unsqueeze(gg, list(axis))
    return (expand(gg / n, i[0].shape),)


_mean_kernel.op_name = "mean"
_mean_kernel.saves = ()
_mean_kernel.hi = _mean_hi


def mean(x, axis=None, keepdim=False, name=None):
    """Mean over ``axis`` (all axes when None; 0-D result). Low-precision floats accumulate in
    float32; integer inputs give the default float dtype."""
    x = as_float(tensor_arg(x, "mean"))
    axes = norm_axes(axis, x.ndim, "mean")
    return apply(_mean_kernel, x, axis=axes, keepdim=bool(keepdim))



API = ["sum", "mean"]
METHODS = list(API)
