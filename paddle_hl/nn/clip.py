"""Gradient clipping strategies passed to optimizers as ``grad_clip``.

Each strategy is a callable taking a list of ``(param, grad)`` pairs and returning new pairs;
the gradients given are never modified. Parameters with ``need_clip = False`` keep their
gradient as it is (and, for the global norm, do not count towards it).
"""

from __future__ import annotations

import math

import numpy as np

from .. import backend
from ..framework import dtype as _dt
from ..framework.tensor import Tensor, _wrap
from ..tensor._helpers import number_arg

__all__ = []


def _array(g):
    return g._data if isinstance(g, Tensor) else g


def _acc_dtype(dtype):
    """Norms of low-precision gradients are accumulated in float32."""
    return np.float32 if dtype in _dt.LOW_FLOATS else dtype


def _sum_squares(arr):
    xp = backend.get_array_module(arr)
    a = arr.astype(_acc_dtype(arr.dtype), copy=False)
    if a.dtype.kind == "c":
        a = xp.abs(a)
    return xp.vdot(a.ravel(), a.ravel()).real if a.size else xp.zeros((), a.dtype)


def _needs_clip(p):
    return getattr(p, "need_clip", True) is not False


class ClipGradBase:
    """Base class of the gradient clipping strategies."""

    def __call__(self, params_grads):
        return self._dygraph_clip(list(params_grads))

    def _dygraph_clip(self, params_grads):  # pragma: no cover - every subclass overrides
        raise TypeError(f"{type(self).__name__} does not define how to clip")


class _PerGradClip(ClipGradBase):
    """A strategy clipping each gradient on its own with ``_clip_array(arr) -> new array``;
    pairs without a gradient are dropped, need_clip=False ones kept as they are."""

    def _dygraph_clip(self, params_grads):
        out = []
        for p, g in params_grads:
            if g is None:
                continue
            out.append((p, _wrap(self._clip_array(_array(g))) if _needs_clip(p) else g))
        return out


class ClipGradByValue(_PerGradClip):
    """Clip every gradient element into ``[min, max]``.

    Args:
        max (float): the upper bound.
        min (float, optional): the lower bound; ``-max`` when None (``max`` must then be
            positive).

    Example:
        >>> clip = paddle.nn.ClipGradByValue(max=1.0)
        >>> opt = paddle.optimizer.SGD(0.1, parameters=model.parameters(), grad_clip=clip)
    """

    def __init__(self, max, min=None):  # noqa: A002  (Paddle's argument names)
        hi = number_arg(max, "ClipGradByValue", "max", real=True)
        if min is None:
            if hi <= 0.0:
                raise ValueError(f"ClipGradByValue: max must be positive when min is None, got "
                                 f"{hi}")
            lo = -hi
        else:
            lo = number_arg(min, "ClipGradByValue", "min", real=True)
        self.max = hi
        self.min = lo

    def __str__(self):
        return f"Clip Gradient By Value, min = {self.min:f}, max={self.max:f}"

    def _clip_array(self, arr):
        xp = backend.get_array_module(arr)
        return xp.clip(arr, self.min, self.max).astype(arr.dtype, copy=False)


class ClipGradByNorm(_PerGradClip):
    """Rescale each gradient separately so that its L2 norm is at most ``clip_norm``.

    A gradient whose norm is already ``<= clip_norm`` is kept; all-zero gradients stay zero
    (never NaN).

    Args:
        clip_norm (float): the largest allowed norm of one gradient.
    """

    def __init__(self, clip_norm):
        self.clip_norm = number_arg(clip_norm, "ClipGradByNorm", "clip_norm", real=True)

    def __str__(self):
        return f"Gradient Clip By Norm, clip_norm={self.clip_norm:f}"

    def _clip_array(self, arr):
        norm = math.sqrt(float(_sum_squares(arr)))
        if norm > self.clip_norm:
            scale = self.clip_norm / norm
            return (arr.astype(_acc_dtype(arr.dtype), copy=False) * scale).astype(arr.dtype)
        return arr.copy()


class ClipGradByGlobalNorm(ClipGradBase):
    """Rescale all gradients together so that their global L2 norm is at most ``clip_norm``.

    ``global_norm = sqrt(sum over params of ||g||^2)``; every gradient is multiplied by
    ``clip_norm / max(global_norm, clip_norm)``. Works with float16 gradients (the norm is
    accumulated in float32).

    Args:
        clip_norm (float): the largest allowed global norm.
        group_name (str): the group this clip belongs to (kept for compatibility).
        auto_skip_clip (bool): when True, gradients are returned unchanged (not even copied)
            while the global norm is within ``clip_norm``.

    Example:
        >>> clip = paddle.nn.ClipGradByGlobalNorm(clip_norm=1.0)
        >>> opt = paddle.optimizer.Adam(parameters=model.parameters(), grad_clip=clip)
    """

    def __init__(self, clip_norm, group_name="default_group", auto_skip_clip=False):
        self.clip_norm = number_arg(clip_norm, "ClipGradByGlobalNorm", "clip_norm", real=True)
        if not isinstance(group_name, str):
            raise TypeError(f"ClipGradByGlobalNorm: group_name must be a str, got "
                            f"{type(group_name).__name__}")
        self.group_name = group_name
        self._async_add_n = None
        self.auto_skip_clip = bool(auto_skip_clip)

    def __str__(self):
        return f"Gradient Clip By GlobalNorm, global_norm={self.clip_norm:f}"

    def _global_norm(self, params_grads):
        sums = [_sum_squares(_array(g)) for p, g in params_grads
                if g is not None and _needs_clip(p)]
        if not sums:
            return None
        total = 0.0
        for v in backend.host_values(sums):  # added in parameter order, in float64
            total += float(v)
        return math.sqrt(total)

    def _dygraph_clip(self, params_grads):
        norm = self._global_norm(params_grads)
        if norm is None:
            return params_grads
        need = norm > self.clip_norm
        scale = self.clip_norm / max(norm, self.clip_norm)
        out = []
        for p, g in params_grads:
            if g is None:
                continue
            if not _needs_clip(p) or (self.auto_skip_clip and not need):
                out.append((p, g))
                continue
            arr = _array(g)
            new = (arr.astype(_acc_dtype(arr.dtype), copy=False) * scale).astype(arr.dtype)
            out.append((p, _wrap(new)))
        return out


_MP_TYPE = [False]  # whether global-norm clipping of half-precision grads sums in float32


def _clip_by_global_norm_using_mp_type(*args):
    """Paddle's switch for summing half-precision gradients' squares in float32 when clipping
    by global norm. With an argument, sets it and returns the previous value; without, returns
    it. paddle_hl always accumulates half-precision squares in float32 (``_acc_dtype``), so the
    switch is recorded for code that reads it back."""
    if len(args) > 1:
        raise TypeError(f"_clip_by_global_norm_using_mp_type: takes at most 1 argument, got "
                        f"{len(args)}")
    old = _MP_TYPE[0]
    if args:
        _MP_TYPE[0] = bool(args[0])
    return old


def _squared_l2_norm(x):
    """The sum of the squares of ``x``'s elements, as a tensor of shape [1] (differentiable)."""
    from ..framework.tensor import Tensor  # noqa: PLC0415

    if not isinstance(x, Tensor):
        raise TypeError(f"_squared_l2_norm: x must be a Tensor, got {type(x).__name__}")
    return (x * x).sum().reshape([1])
