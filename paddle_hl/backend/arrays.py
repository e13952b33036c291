"""Array-level helpers shared by every op module, and the array namespace of gradient rules.

- :func:`xp`: the array module (NumPy or CuPy) of an array; the one idiom ops use.
- :func:`up` / :func:`down`: compute float16/bfloat16 in float32 (NumPy has no half-precision
  kernels) and round the result back.
- :func:`sigmoid`: the logistic function without overflow for large ``|x|``.
- :class:`ArrayOps`: the operator namespace a gradient rule receives as ``M`` on the first-order
  path (see ``paddle_hl.framework.op``); the Tensor namespace of ``paddle_hl.tensor`` offers the
  same names, so a rule written once runs on raw arrays and on Tensors.

This module imports nothing above the backend.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from . import get_array_module, is_gpu_array

__all__ = []

xp = get_array_module

F32 = np.dtype(np.float32)
LOW_FLOATS = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))
_NATIVE = (F32, np.dtype(np.float64))


def is_low(dtype) -> bool:
    """float16 or bfloat16 (computed in float32)."""
    return dtype in LOW_FLOATS


def up(a):
    """The compute array: float16/bfloat16 widened to float32, anything else as it is."""
    return a.astype(F32) if a.dtype in LOW_FLOATS else a


def down(a, dtype):
    """Round a computed array back to ``dtype``; a 0-D result stays an array (not a scalar)."""
    if a.dtype != dtype:
        a = a.astype(dtype)
    if type(a) is not np.ndarray and not is_gpu_array(a):
        a = np.asarray(a)
    return a


def sigmoid(x):
    """``1 / (1 + exp(-x))`` in x's dtype; exp only sees non-positive arguments, so large
    ``|x|`` never overflows and tiny results keep their relative precision."""
    m = xp(x)
    e = m.exp(-m.abs(x))
    r = 1 / (1 + e)
    return m.where(x >= 0, r, e * r).astype(x.dtype, copy=False)


# Paddle's op names that differ from the array module's
_ALIASES = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh",
            "acosh": "arccosh", "atanh": "arctanh", "atan2": "arctan2", "neg": "negative",
            "pow": "power", "concat": "concatenate"}


class ArrayOps:
    """Gradient-rule namespace over one array module (``ArrayOps.of(arr)``).

    Names resolve to the array module (under Paddle's spelling) or to the helpers below, and are
    cached on the instance after the first lookup, so ``M.cos`` costs one attribute load.
    """

    _by_module = {}

    def __init__(self, module):
        self.xp = module
        self.tensor = False

    @classmethod
    def of(cls, arr):
        m = get_array_module(arr)
        ns = cls._by_module.get(m)
        if ns is None:
            ns = cls._by_module[m] = cls(m)
        return ns

    def __getattr__(self, name):
        f = getattr(self.xp, _ALIASES.get(name, name))
        setattr(self, name, f)
        return f

    # -- helpers whose Tensor twins are composite ops
    @staticmethod
    def conj(a):
        """conj(a) for complex values, a itself otherwise (no copy, no ufunc call)."""
        if isinstance(a, complex):
            return a.conjugate()
        d = getattr(a, "dtype", None)
        return a.conj() if d is not None and d.kind == "c" else a

    @staticmethod
    def is_complex(a):
        return a.dtype.kind == "c"

    def select(self, cond, g):
        """``g`` where ``cond`` holds, 0 elsewhere, in g's dtype (NaN/inf in g do not leak)."""
        # cond may be a host array (an op's index attribute) while g is on the GPU
        return self.xp.where(self.xp.asarray(cond), g, 0).astype(g.dtype, copy=False)

    def mask(self, cond, like):
        """A constant 0/1 array of ``like``'s dtype where ``cond`` holds."""
        return self.xp.asarray(cond).astype(like.dtype, copy=False)

    def rsqrt(self, a):
        return 1 / self.xp.sqrt(a)

    @staticmethod
    def sigmoid(a):
        return sigmoid(a)

    @staticmethod
    def value(a):
        """The raw values of ``a`` (an array here; a Tensor's array in the Tensor namespace)."""
        return a

    def const(self, arr, like=None):
        """A constant built from raw array values (a no-grad Tensor in the Tensor namespace)."""
        return arr

    def reshape(self, a, shape):
        return a.reshape(shape)

    def transpose(self, a, perm):
        return a.transpose(perm)

    def sum(self, a, axis=None, keepdim=False):
        return a.sum(axis=axis, keepdims=keepdim)

    def expand(self, a, shape):
        return self.xp.broadcast_to(a, shape)

    def zeros_like(self, a):
        return self.xp.zeros_like(a)

    @staticmethod
    def op(kernel, *args, **attrs):
        """Kernel ``kernel`` on arrays (its output); the Tensor namespace applies it as a
        recorded op. A linear op's gradient is often another kernel (cumsum's is cumsum
        reversed): written once, it runs on both paths."""
        return kernel(*args, **attrs)[0]


NUMPY_OPS = ArrayOps.of(np.empty(0))


def array_ops(arr):
    """The :class:`ArrayOps` namespace for ``arr``'s array module."""
    return NUMPY_OPS if type(arr) is np.ndarray else ArrayOps.of(arr)
