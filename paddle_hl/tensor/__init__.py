"""The tensor op library, grouped by Paddle's category files.

Each category module lists what it contributes:

- ``API``: names exported at the top level (``paddle_hl.add``).
- ``METHODS``: names attached to ``Tensor`` as methods. A name that is also in ``API`` is the
  very same function; a ``(method_name, function)`` pair attaches a function under another name.

This module attaches the methods and Python operators once, at import.
"""

from __future__ import annotations

from ..framework.registry import collect_api, family_modules
from ..framework.tensor import Tensor
from . import creation, linalg, manipulation, math, stat

__all__ = []

CATEGORIES = [creation, math, stat, manipulation, linalg]


CATEGORIES += family_modules(__name__, ("logic", "search", "random", "special"))


def api_names() -> dict:
    """name -> function for every top-level tensor function."""
    return collect_api(CATEGORIES)


def _attach():
    for mod in CATEGORIES:
        for entry in getattr(mod, "METHODS", ()):
            if isinstance(entry, tuple):
                name, fn = entry
            else:
                name, fn = entry, getattr(mod, entry)
            setattr(Tensor, name, fn)
    _attach_operators()
    _attach_lazy_methods()


def _lazy_method(module, name):
    """A Tensor method whose function lives in a module loaded on first call."""

    def method(self, *args, **kwargs):
        import importlib

        fn = getattr(importlib.import_module(module), name)
        setattr(Tensor, name, fn)  # later calls go straight to the function
        return fn(self, *args, **kwargs)

    method.__name__ = name
    return method


def _create_parameter(shape, dtype, name=None, attr=None, is_bias=False,
                      default_initializer=None):
    """``Tensor.create_parameter`` is ``paddle.create_parameter``."""
    from ..nn.layer.layers import create_parameter

    return create_parameter(shape, dtype, name, attr, is_bias, default_initializer)


def _attach_lazy_methods():
    for name in ("stft", "istft"):
        setattr(Tensor, name, _lazy_method("paddle_hl.signal", name))
    Tensor.create_parameter = staticmethod(_create_parameter)


def _swap(fn):
    def reflected(x, y):
        return fn(y, x)

    reflected.__name__ = f"r{fn.__name__}"
    return reflected


def _attach_operators():
    from .manipulation import getitem, setitem

    ops = {
        "__add__": math.add, "__radd__": _swap(math.add),
        "__sub__": math.subtract, "__rsub__": _swap(math.subtract),
        "__mul__": math.multiply, "__rmul__": _swap(math.multiply),
        "__truediv__": math.true_divide, "__rtruediv__": _swap(math.true_divide),
        "__pow__": math.pow, "__rpow__": _swap(math.pow),
        "__matmul__": linalg.matmul, "__rmatmul__": _swap(linalg.matmul),
        "__neg__": math.neg,
        "__getitem__": getitem, "__setitem__": setitem,
    }
    optional = {
        "__floordiv__": ("floor_divide", False), "__rfloordiv__": ("floor_divide", True),
        "__mod__": ("remainder", False), "__rmod__": ("remainder", True),
        "__abs__": ("abs", False), "__invert__": ("bitwise_not", False),
        "__eq__": ("equal", False), "__ne__": ("not_equal", False),
        "__lt__": ("less_than", False), "__le__": ("less_equal", False),
        "__gt__": ("greater_than", False), "__ge__": ("greater_equal", False),
        "__and__": ("bitwise_and", False), "__rand__": ("bitwise_and", True),
        "__or__": ("bitwise_or", False), "__ror__": ("bitwise_or", True),
        "__xor__": ("bitwise_xor", False), "__rxor__": ("bitwise_xor", True),
        "__lshift__": ("bitwise_left_shift", False), "__rshift__": ("bitwise_right_shift", False),
    }
    api = api_names()
    for dunder, (name, reflected) in optional.items():
        fn = api.get(name)
        if fn is not None:
            ops[dunder] = _swap(fn) if reflected else fn
    for k, v in ops.items():
        setattr(Tensor, k, v)
    Tensor.__hash__ = lambda self: id(self)


_attach()
