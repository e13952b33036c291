"""Tensor-level un-broadcasting, used by higher-order gradient rules."""

from __future__ import annotations

__all__ = []


def unbroadcast_tensor(g, shape):
    """Sum Tensor ``g`` down to ``shape`` with differentiable ops."""
    shape = tuple(shape)
    if tuple(g._data.shape) == shape:
        return g
    from .manipulation import _reshape_to
    from .stat import sum as _sum

    nd = g.ndim - len(shape)
    if nd:
        g = _sum(g, axis=list(range(nd)))
    axes = [i for i, s in enumerate(shape) if s == 1 and g._data.shape[i] != 1]
    if axes:
        g = _sum(g, axis=axes, keepdim=True)
    return _reshape_to(g, shape)
