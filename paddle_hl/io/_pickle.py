"""Pickling what a DataLoader sends to its workers, including code defined in ``__main__``.

Workers start from a fork server (see ``_forkserver``), so the dataset, the fetcher and the
worker_init_fn travel pickled. Classes and functions defined in a script's ``__main__``, in a
notebook or inside a function cannot be imported in a worker by name, so :func:`dumps` pickles
them by value: a class as its name, bases and attributes; a function as its marshalled code,
the globals it reads, its defaults and closure. Everything else is pickled as usual
(importable classes and functions by reference, modules by name). The worker runs the same
interpreter, so marshalled code loads there. Skeletons are made first and filled in
afterwards, so a class whose methods name the class itself, or functions that call each other,
pickle fine.
"""

from __future__ import annotations

import builtins
import importlib
import io
import marshal
import pickle
import sys
import types
import uuid

__all__ = []

_MAIN = "__main__"
_SKIP_CLASS_KEYS = frozenset(("__dict__", "__weakref__"))
_namespaces = {}  # token -> the globals dict shared by the __main__ functions of one pickle


def _namespace(token, module):
    """The globals dict the by-value functions of one module in one pickle share (made on
    first use)."""
    ns = _namespaces.get((token, module))
    if ns is None:
        ns = _namespaces[(token, module)] = {"__builtins__": builtins, "__name__": module}
    return ns


def _class_skeleton(metaclass, name, qualname, module, bases, slots):
    ns = {"__module__": module, "__qualname__": qualname}
    if slots is not None:
        ns["__slots__"] = slots
    return metaclass(name, bases, ns)


def _fill_class(cls, attrs):
    for k, v in attrs.items():
        setattr(cls, k, v)


def _function_skeleton(code, ns, name, ncells):
    cells = tuple(types.CellType() for _ in range(ncells)) if ncells else None
    return types.FunctionType(code, ns, name, None, cells)


def _fill_function(fn, state):
    fn.__globals__.update(state["globals"])
    fn.__defaults__ = state["defaults"]
    fn.__kwdefaults__ = state["kwdefaults"]
    fn.__qualname__ = state["qualname"]
    fn.__doc__ = state["doc"]
    fn.__dict__.update(state["dict"])
    fn.__module__ = state["module"]
    for cell, value in zip(fn.__closure__ or (), state["closure"]):
        if value is not _EMPTY:
            cell.cell_contents = value


class _Empty:
    """Stands for an empty closure cell."""

    def __reduce__(self):
        return "_EMPTY"


_EMPTY = _Empty()


def _names(code):
    """Global names a code object (and the code objects nested in it) may read."""
    out = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out |= _names(c)
    return out


def _by_value(obj) -> bool:
    """Whether a class or function cannot be imported by name in a worker: it is defined in
    ``__main__``, or inside a function (``<locals>``), or not where its name says."""
    mod = getattr(obj, "__module__", None)
    if mod is None or mod == _MAIN or mod == "__mp_main__":
        return True
    m = sys.modules.get(mod)
    if m is None:
        return True
    found = m
    for part in obj.__qualname__.split("."):
        found = getattr(found, part, None)
        if found is None:
            return True
    return found is not obj


class _Pickler(pickle.Pickler):
    def __init__(self, file):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._token = uuid.uuid4().hex

    def reducer_override(self, obj):
        if isinstance(obj, types.ModuleType):
            return importlib.import_module, (obj.__name__,)
        if isinstance(obj, type):
            if _by_value(obj):
                return self._reduce_class(obj)
            return NotImplemented
        if isinstance(obj, types.FunctionType):
            if _by_value(obj):
                return self._reduce_function(obj)
            return NotImplemented
        if isinstance(obj, types.CodeType):
            return marshal.loads, (marshal.dumps(obj),)
        if isinstance(obj, (classmethod, staticmethod)):
            return type(obj), (obj.__func__,)
        if isinstance(obj, property):
            return property, (obj.fget, obj.fset, obj.fdel, obj.__doc__)
        return NotImplemented

    def _reduce_class(self, cls):
        slots = cls.__dict__.get("__slots__")
        slot_names = ({slots} if isinstance(slots, str) else set(slots or ()))
        attrs = {k: v for k, v in cls.__dict__.items()
                 if k not in _SKIP_CLASS_KEYS and k not in slot_names
                 and k not in ("__module__", "__qualname__", "__slots__")}
        return (_class_skeleton, (type(cls), cls.__name__, cls.__qualname__, cls.__module__,
                                  cls.__bases__, slots), attrs, None, None, _fill_class)

    def _reduce_function(self, fn):
        g = fn.__globals__
        names = _names(fn.__code__)
        used = {n: g[n] for n in names if n in g and n != "__builtins__"}
        closure = []
        for cell in fn.__closure__ or ():
            try:
                closure.append(cell.cell_contents)
            except ValueError:
                closure.append(_EMPTY)
        state = {"globals": used, "defaults": fn.__defaults__, "kwdefaults": fn.__kwdefaults__,
                 "qualname": fn.__qualname__, "doc": fn.__doc__, "dict": dict(fn.__dict__),
                 "closure": tuple(closure), "module": fn.__module__}
        ncells = len(fn.__closure__ or ())
        return (_function_skeleton,
                (fn.__code__, _SharedNamespace(self._token, fn.__module__), fn.__name__, ncells),
                state, None, None, _fill_function)


class _SharedNamespace:
    """Pickles as the shared globals dict of the by-value functions of one pickle."""

    __slots__ = ("token", "module")

    def __init__(self, token, module):
        self.token = token
        self.module = module

    def __reduce__(self):
        return _namespace, (self.token, self.module)


def dumps(obj) -> bytes:
    """Pickle ``obj`` for a worker process (``__main__`` code by value)."""
    buf = io.BytesIO()
    _Pickler(buf).dump(obj)
    return buf.getvalue()


def loads(data: bytes):
    """Unpickle what :func:`dumps` wrote."""
    return pickle.loads(data)
