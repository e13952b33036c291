"""In-place gradient clipping of parameter lists: clip_grad_norm_ and clip_grad_value_."""

from __future__ import annotations

import math
import numbers

import numpy as np

from ... import backend
from ...framework import dtype as _dt
from ...framework.tensor import Tensor, _wrap, writable

__all__ = []


def _param_list(parameters, where):
    if isinstance(parameters, Tensor):
        return [parameters]
    try:
        params = list(parameters)
    except TypeError:
        raise TypeError(f"{where}: parameters must be a Tensor or an iterable of Tensors, got "
                        f"{type(parameters).__name__}") from None
    for p in params:
        if not isinstance(p, Tensor):
            raise TypeError(f"{where}: parameters must be Tensors, got {type(p).__name__}")
    return params


def _acc(arr):
    """Norms of float16/bfloat16 gradients are computed in float32."""
    return arr.astype(np.float32) if arr.dtype in _dt.LOW_FLOATS else arr


def _grad_norm(arr, norm_type):
    """The norm of one gradient array, as a Python float."""
    xp = backend.get_array_module(arr)
    a = xp.abs(_acc(arr))
    if a.size == 0:
        return 0.0
    if norm_type == math.inf:
        return float(a.max())
    if norm_type == 0:
        return float(xp.count_nonzero(a))
    if norm_type == 1:
        return float(a.sum())
    return math.sqrt(float(xp.vdot(a.ravel(), a.ravel())))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Scale the gradients of ``parameters`` in place so that their total norm is at most
    ``max_norm``.

    The total norm is the ``norm_type``-norm of the per-parameter gradient norms (the norm of
    all gradients concatenated). Gradients are multiplied by
    ``min(1, max_norm / (total_norm + 1e-6))``.

    Args:
        parameters (Tensor|list[Tensor]): the parameters whose ``.grad`` is clipped.
        max_norm (float): the largest allowed total norm.
        norm_type (float): 2.0 (default), 1, 0 (number of non-zeros) or ``float('inf')``.
        error_if_nonfinite (bool): raise RuntimeError when the total norm is nan or inf.

    Returns:
        Tensor: the total norm before clipping (0-D).

    Example:
        >>> loss.backward()
        >>> total = paddle.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    """
    params = _param_list(parameters, "clip_grad_norm_")
    if isinstance(max_norm, bool) or not isinstance(max_norm, numbers.Real):
        raise TypeError(f"clip_grad_norm_: max_norm must be a float, got "
                        f"{type(max_norm).__name__}")
    if isinstance(norm_type, bool) or not isinstance(norm_type, numbers.Real):
        raise TypeError(f"clip_grad_norm_: norm_type must be a float, got "
                        f"{type(norm_type).__name__}")
    norm_type = float(norm_type)
    if norm_type not in (math.inf, 0.0, 1.0, 2.0):
        raise ValueError(f"clip_grad_norm_: norm_type only supports inf, 0, 1 and 2, got "
                         f"{norm_type}")
    grads = [p._grad for p in params if p._grad is not None]
    if not grads:
        return _wrap(np.zeros((), dtype=np.float32))
    norms = [_grad_norm(g._data, norm_type) for g in grads]
    if norm_type == math.inf:
        total = max(norms)
    elif norm_type == 0:
        total = float(sum(1 for n in norms if n != 0))
    elif norm_type == 1:
        total = float(sum(norms))
    else:
        total = math.sqrt(sum(n * n for n in norms))
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(f"clip_grad_norm_: the total norm of order {norm_type} of the "
                           f"gradients is non-finite ({total}), so it cannot be clipped; pass "
                           "error_if_nonfinite=False to scale by it anyway")
    coef = float(max_norm) / (total + 1e-6)
    if not coef >= 1.0:  # NaN coefficients propagate, as in Paddle
        for g in grads:
            arr = g._data
            if arr.dtype in _dt.LOW_FLOATS:
                arr[...] = (arr.astype(np.float32) * coef).astype(arr.dtype)
            else:
                arr *= arr.dtype.type(coef)
            g._ver.v += 1
    out_dtype = grads[0]._data.dtype
    xp = backend.get_array_module(grads[0]._data)
    return _wrap(xp.asarray(total, dtype=out_dtype))


def clip_grad_value_(parameters, clip_value):
    """Clip every gradient element of ``parameters`` into ``[-clip_value, clip_value]``, in
    place.

    Args:
        parameters (Tensor|list[Tensor]): the parameters whose ``.grad`` is clipped.
        clip_value (float): the bound (positive).

    Returns:
        None
    """
    params = _param_list(parameters, "clip_grad_value_")
    if isinstance(clip_value, bool) or not isinstance(clip_value, numbers.Real):
        raise TypeError(f"clip_grad_value_: clip_value must be a float, got "
                        f"{type(clip_value).__name__}")
    c = float(clip_value)
    for p in params:
        g = p._grad
        if g is None:
            continue
        xp = backend.get_array_module(g._data)
        xp.clip(g._data, -c, c, out=writable(g))
        g._ver.v += 1
    return None
