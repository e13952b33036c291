"""The Tensor namespace of gradient rules (``M`` under ``create_graph=True``).

A gradient rule (see ``paddle_hl.framework.op``) is written once over an operator namespace:
``paddle_hl.backend.arrays.ArrayOps`` on raw arrays for first-order gradients, and this one on
Tensors when the gradient must itself be differentiable. Names resolve to the public tensor ops
(``M.cos`` is ``paddle.cos``); the helpers below mirror ArrayOps' helpers.
"""

from __future__ import annotations

import importlib

from ..backend import get_array_module
from ..framework.tensor import Tensor, _wrap
from ._unbroadcast import unbroadcast_tensor as _unbroadcast_tensor

__all__ = []

_MODULES = ("math", "manipulation", "stat", "search", "logic", "creation", "linalg", "special")


class TensorOps:
    """Tensor-op namespace with the same vocabulary as ``ArrayOps``."""

    tensor = True

    def __getattr__(self, name):
        for m in _MODULES:
            f = getattr(importlib.import_module(f"{__package__}.{m}"), name, None)
            if callable(f) and not name.startswith("_"):
                setattr(self, name, f)
                return f
        raise AttributeError(f"gradient rules: no Tensor op named {name!r}")

    def conj(self, t):
        """conj(t) for complex Tensors, t itself otherwise."""
        if isinstance(t, Tensor):
            return self.__getattr__("conj")(t) if t._data.dtype.kind == "c" else t
        return t.conjugate() if isinstance(t, complex) else t

    @staticmethod
    def is_complex(t):
        return (t._data if isinstance(t, Tensor) else t).dtype.kind == "c"

    def select(self, cond, g):
        """``g`` where ``cond`` (bool Tensor or array) holds, 0 elsewhere; differentiable in g."""
        from .search import where

        if not isinstance(cond, Tensor):  # a host array (an op's index attribute): g's device
            gd = g._data if isinstance(g, Tensor) else g
            cond = _wrap(get_array_module(gd).asarray(cond))
        return where(cond, g, 0)

    @staticmethod
    def mask(cond, like):
        """A constant 0/1 Tensor of ``like``'s dtype where ``cond`` (bool Tensor or array)
        holds."""
        c = cond._data if isinstance(cond, Tensor) else cond
        d = like._data.dtype if isinstance(like, Tensor) else like.dtype
        return _wrap(c.astype(d, copy=False))

    @staticmethod
    def value(t):
        """The raw array of a Tensor (for masks and other constants of a rule)."""
        return t._data if isinstance(t, Tensor) else t

    @staticmethod
    def const(arr):
        """A constant (no-grad) Tensor around raw array values."""
        return _wrap(arr)

    # a gradient summed down to an input's shape with differentiable ops
    unbroadcast_tensor = staticmethod(_unbroadcast_tensor)

    @staticmethod
    def zeros_like(t):
        """A zero gradient that stays connected to ``t`` (so a later grad of it is defined)."""
        return t * 0

    def sum(self, t, axis=None, keepdim=False):
        from .stat import sum as _sum

        return _sum(t, axis=list(axis) if isinstance(axis, tuple) else axis, keepdim=keepdim)

    def expand(self, t, shape):
        from .manipulation import expand

        return expand(t, list(shape))

    @staticmethod
    def op(kernel, *args, **attrs):
        """Kernel ``kernel`` applied as a recorded (differentiable) op."""
        from ..framework.op import apply

        return apply(kernel, *args, **attrs)

    def reshape(self, t, shape):
        from .manipulation import reshape

        return reshape(t, list(shape))

    def transpose(self, t, perm):
        from .manipulation import transpose

        return transpose(t, list(perm))
