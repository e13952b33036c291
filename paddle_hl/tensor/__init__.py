"""The tensor op library, grouped by Paddle's category files.

Each category module lists what it contributes:

- ``API``: names exported at the top level (``paddle_hl.add``).
- ``METHODS``: names attached to ``Tensor`` as methods. A name that is also in ``API`` is the
  very same function; a ``(method_name, function)`` pair attaches a function under another name.

This module attaches the methods and Python operators once, at import.
"""

from __future__ import annotations

import types

from ..framework.op import set_tensor_ops
from ..framework.registry import collect_api, family_modules
from ..framework.tensor import Tensor
from . import creation, linalg, manipulation, math, stat
from ._helpers import OPERATOR
from ._tensor_ops import TensorOps

__all__ = []

CATEGORIES = [creation, math, stat, manipulation, linalg]


CATEGORIES += family_modules(__name__, ("logic", "search", "random", "special"))

set_tensor_ops(TensorOps())


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


def _as_operator(fn):
    """A copy of ``fn`` whose ``name`` argument defaults to ``_helpers.OPERATOR``.

    Paddle's Python operators promote mixed float/int tensors (``x @ y``) where its functions
    refuse them (``paddle.matmul(x, y)``). The functions tell the two apart by that default,
    which costs nothing per call, unlike a wrapper around every operator.
    """
    code = fn.__code__
    names = code.co_varnames[:code.co_argcount]
    if "name" not in names or not fn.__defaults__:
        return fn
    defaults = list(fn.__defaults__)
    defaults[names.index("name") - (code.co_argcount - len(defaults))] = OPERATOR
    op = types.FunctionType(code, fn.__globals__, fn.__name__, tuple(defaults), fn.__closure__)
    op.__kwdefaults__ = fn.__kwdefaults__
    op.__qualname__, op.__doc__, op.__module__ = fn.__qualname__, fn.__doc__, fn.__module__
    return op


def _attach_operators():
    from .manipulation import getitem, setitem

    add, sub, mul = _as_operator(math.add), _as_operator(math.subtract), \
        _as_operator(math.multiply)
    div, pow_, mm = _as_operator(math.true_divide), _as_operator(math.pow), \
        _as_operator(linalg.matmul)
    ops = {
        "__add__": add, "__radd__": _swap(add),
        "__sub__": sub, "__rsub__": _swap(sub),
        "__mul__": mul, "__rmul__": _swap(mul),
        "__truediv__": div, "__rtruediv__": _swap(div),
        "__pow__": pow_, "__rpow__": _swap(pow_),
        "__matmul__": mm, "__rmatmul__": _swap(mm),
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
            fn = _as_operator(fn)
            ops[dunder] = _swap(fn) if reflected else fn
    for k, v in ops.items():
        setattr(Tensor, k, v)
    Tensor.__hash__ = lambda self: id(self)


_attach()
