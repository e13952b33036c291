"""A traced program: the kernel calls a forward made, replayable without the Python class.

Tracing runs the layer's forward eagerly with the op wrapper's kernel hook set (the hook the
profiler uses: no cost when off). Each kernel call is recorded with references to where its array
inputs came from -- a program input, a parameter/buffer (by structured name), an earlier kernel
output, or a constant -- and its keyword attributes. Kernels are referenced by their name in
the kernel registry (``module:name`` of a kernel declared with paddle_hl's op decorator), so
replay needs paddle_hl but not the model's code, and a program file can call nothing else.

Free dims (``None``/-1 in an InputSpec) become symbols, one per axis position (axis 0 of every
input is one symbol -- the batch --, axis 1 another, ...; at most two). The forward is traced at
a grid of sizes and every integer that changes (shapes in attributes, slice bounds) is fitted as
an exact integer polynomial of degree <= 2 in the symbols; constants whose shape follows them
must be uniform (zeros/ones/fill) and are stored as a fill. A further trace at other sizes must
reproduce the eager outputs, or saving fails with an error naming the op.
"""

from __future__ import annotations

import importlib
import io
import pickle
import types

import numpy as np

from ..framework import state
from ..framework.tensor import Tensor

__all__ = []

MAGIC = b"PDHLPRG1"
_GRID = (2, 3, 4)
_CHECK = (5, 7)


def free_axes(specs) -> list:
    """The axis positions that are free (-1) in some input spec: one symbol each."""
    return sorted({j for s in specs for j, n in enumerate(s.shape) if n == -1})


def trace_points(k: int) -> list:
    """Sizes of the k symbols to trace at: enough points to fit a degree-2 polynomial."""
    if k > 2:
        raise TraceError(f"input_spec has free dims at {k} axis positions; at most two (e.g. "
                         "batch and sequence length) are supported -- fix the others")
    if k == 0:
        return [()]
    if k == 1:
        return [(g,) for g in _GRID]
    return [(a, b) for a in _GRID for b in _GRID]


def check_point(k: int) -> tuple:
    """Sizes for the verification run, outside the traced grid."""
    return _CHECK[:k]


class TraceError(RuntimeError):
    """The forward cannot be captured as a replayable program."""


# ----------------------------------------------------------------------------- tracing
class _Tracer:
    def __init__(self, inputs, named):
        self.ops = []
        self.where = {}  # id(array) -> ("in", i) | ("p", name) | ("v", k)
        self.keep = []  # hold every traced array so that ids stay unique during the trace
        self.consts = []
        self.nv = 0
        for i, t in enumerate(inputs):
            self._bind(t._data, ("in", i))
        for name, t in named:
            self._bind(t._data, ("p", name))

    def _bind(self, arr, ref):
        self.where.setdefault(id(arr), ref)
        self.keep.append(arr)

    def _ref(self, a):
        if isinstance(a, (np.ndarray, np.generic)) or hasattr(a, "__cuda_array_interface__"):
            ref = self.where.get(id(a))
            if ref is not None:
                return ref
            base = getattr(a, "base", None)
            while base is not None:
                src = self.where.get(id(base))
                if src is not None:
                    if base.shape == a.shape and base.dtype == a.dtype:
                        return src
                    # a view made outside the op wrapper: replay it as a reshape when it is one
                    if base.size == a.size and base.dtype == a.dtype and a.flags.c_contiguous \
                            and base.flags.c_contiguous:
                        return ("reshape", src, tuple(a.shape))
                    if base.dtype == a.dtype and base.flags.c_contiguous:
                        # a basic-indexing view made outside the op wrapper (a slice)
                        return ("view", src, (_ptr(a) - _ptr(base)) // a.itemsize,
                                tuple(a.shape), tuple(st // a.itemsize for st in a.strides))
                    raise TraceError(
                        f"a kernel reads a strided view (shape {list(a.shape)}) of a traced "
                        f"value (shape {list(base.shape)}) made outside the op wrapper")
                base = getattr(base, "base", None)
            arr = np.asarray(a) if not hasattr(a, "get") else a.get()
            self.consts.append(np.array(arr))
            self.keep.append(a)
            return ("c", len(self.consts) - 1)
        if isinstance(a, (tuple, list)):
            return ("lit", type(a)(self._lit(x) for x in a)) if not any(
                isinstance(x, np.ndarray) for x in a) else ("seq", type(a).__name__,
                                                         [self._ref(x) for x in a])
        return ("lit", self._lit(a))

    def _lit(self, v):
        return v

    def __call__(self, fn, arrays, attrs, prev):
        if prev is not None:
            out, bw = prev(fn, arrays, attrs)
        elif attrs:
            out, bw = fn(*arrays, **attrs)
        else:
            out, bw = fn(*arrays)
        ins = [self._ref(a) for a in arrays]
        outs = out if type(out) is tuple else (out,)
        vids = []
        for o in outs:
            vids.append(self.nv)
            self._bind(o, ("v", self.nv))
            self.nv += 1
        self.ops.append({"fn": _kernel_ref(fn), "ins": ins, "attrs": dict(attrs),
                         "outs": vids, "tuple": type(out) is tuple})
        return out, bw


def _ptr(a) -> int:
    if isinstance(a, np.ndarray):
        return a.__array_interface__["data"][0]
    return int(a.data.ptr)


def _kernel_ref(fn) -> str:
    """The registry name (``module:name``) of kernel ``fn``, as a program file records it.

    Plain kernels are found by their qualified name; kernels built by a factory (one closure
    per activation, comparison, ...) by the module-level name they are bound to (and the
    closure cell that holds them: ``module:name#cell``). Only declared kernels (see
    :func:`registry`) have a name.
    """
    base = _renamed_base(fn)
    if base is not None:
        # the same kernel under another op name (errors, profiler): always recorded as the
        # kernel itself, so that every trace names it alike
        return _kernel_ref(base)
    ref = _REFS.get(id(fn))
    if ref is not None and _RESOLVED.get(ref) is fn:
        return ref
    mod = getattr(fn, "__module__", None)
    qual = getattr(fn, "__qualname__", None)
    if mod and qual and "<" not in qual and _kernel_module(mod):
        if _lookup(f"{mod}:{qual}") is fn:
            _REFS[id(fn)] = f"{mod}:{qual}"
            return f"{mod}:{qual}"
    _index_modules()
    ref = _REFS.get(id(fn))
    if ref is not None and _RESOLVED.get(ref) is fn:
        return ref
    name = getattr(fn, "op_name", None) or getattr(fn, "__name__", repr(fn))
    why = ("is not declared with paddle_hl.framework.op.op" if not _is_kernel(fn) else
           "is not reachable from a module-level name of paddle_hl's kernel modules")
    raise TraceError(f"kernel '{name}' ({mod}.{qual}) {why}, so a saved program could not "
                     "call it again")


# The kernel registry: registry name -> kernel, and id(kernel) -> its first registry name. It
# is filled from paddle_hl's own kernel modules (never from a file): a program file holds
# registry names, and loading looks each one up here, so a file can call nothing else.
_REFS = {}
_RESOLVED = {}
_INDEXED = set()  # kernel modules whose kernels are in the registry


def _is_kernel(fn) -> bool:
    """A function declared as a kernel with the ``op`` decorator (it sets ``op_name``)."""
    return isinstance(fn, types.FunctionType) and isinstance(
        getattr(fn, "op_name", None), str)


def _renamed_base(fn):
    """The wrapped kernel of a manipulation ``_named`` alias (a pass-through), else None."""
    if getattr(fn, "__module__", "") != "paddle_hl.tensor.manipulation" or not getattr(
            fn, "__qualname__", "").startswith("_named.<locals>."):
        return None
    code, cells = fn.__code__, fn.__closure__ or ()
    if code.co_freevars != ("kernel",):
        return None
    return cells[0].cell_contents


def _index_modules():
    """Add the kernels of every loaded paddle_hl kernel module to the registry."""
    import sys

    for mname, m in list(sys.modules.items()):
        if m is not None and mname not in _INDEXED and _kernel_module(mname):
            _index_module(mname, m)


def _index_module(mname, m):
    """Register the kernels of module ``m``: module-level kernels as ``module:name``, kernels
    held by a module-level function's closure (made by a factory and kept by the public
    function that applies them) as ``module:name#cell``, and kernels defined on a module-level
    class as ``module:Class.name``."""
    _INDEXED.add(mname)
    for k, v in list(vars(m).items()):
        if isinstance(v, type):
            if v.__module__ == mname:
                for a, f in list(vars(v).items()):
                    f = f.__func__ if isinstance(f, (staticmethod, classmethod)) else f
                    if _is_kernel(f):
                        _remember(f"{mname}:{k}.{a}", f)
            continue
        if not callable(v) or not str(getattr(v, "__module__", "")).startswith("paddle_hl"):
            continue
        _remember(f"{mname}:{k}", v)
        _index_closure(f"{mname}:{k}", v, 2)


def _remember(ref, v):
    if _is_kernel(v):
        _REFS.setdefault(id(v), ref)
        _RESOLVED.setdefault(ref, v)


def _index_closure(ref, fn, depth):
    code = getattr(fn, "__code__", None)
    cells = getattr(fn, "__closure__", None)
    if code is None or not cells or depth == 0:
        return
    for name, cell in zip(code.co_freevars, cells):
        try:
            v = cell.cell_contents
        except ValueError:
            continue
        if callable(v) and not isinstance(v, type) and getattr(v, "__code__", None) is not None:
            sub = f"{ref}#{name}"
            _remember(sub, v)
            _index_closure(sub, v, depth - 1)


# the packages that define op kernels; a program file may only call kernels from these, so
# loading a program cannot reach downloads, file I/O or process control
KERNEL_MODULES = ("paddle_hl.tensor", "paddle_hl.nn", "paddle_hl.incubate", "paddle_hl.fft",
                  "paddle_hl.signal", "paddle_hl.linalg", "paddle_hl.vision", "paddle_hl.audio",
                  "paddle_hl.geometric", "paddle_hl.sparse", "paddle_hl.framework.tensor")


def _kernel_module(mod: str) -> bool:
    return any(mod == m or mod.startswith(m + ".") for m in KERNEL_MODULES)


_SOURCE_MODULES = []


def _source_modules() -> frozenset:
    """The names of paddle_hl's kernel modules, read off the package's files (no import)."""
    if not _SOURCE_MODULES:
        import os

        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        names = set()
        for here, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d.isidentifier()]
            rel = os.path.relpath(here, os.path.dirname(root)).replace(os.sep, ".")
            for f in files:
                if f.endswith(".py") and f[:-3].isidentifier():
                    name = rel if f == "__init__.py" else f"{rel}.{f[:-3]}"
                    if _kernel_module(name):
                        names.add(name)
        _SOURCE_MODULES.append(frozenset(names))
    return _SOURCE_MODULES[0]


def _lookup(ref):
    """The registered kernel named ``ref``, or None. A kernel module not imported yet (a lazy
    package such as ``paddle_hl.fft``) is imported by its name when it is one of paddle_hl's
    own kernel modules; nothing is looked up by attribute."""
    fn = _RESOLVED.get(ref)
    if fn is not None:
        return fn
    if not isinstance(ref, str) or ref.count(":") != 1:
        return None
    mod = ref.split(":")[0]
    if mod not in _INDEXED:
        if mod not in _source_modules():
            return None
        import sys

        m = sys.modules.get(mod)
        if m is None:
            m = importlib.import_module(mod)
        _index_module(mod, m)
    return _RESOLVED.get(ref)


def _resolve(ref):
    """The kernel a program names ``ref``; a TraceError for anything not in the registry."""
    fn = _lookup(ref)
    if fn is None:
        if not isinstance(ref, str):
            raise TraceError(f"the kernel reference {ref!r} is not a 'module:name' string")
        mod = ref.split(":")[0]
        where = ("a kernel module of paddle_hl" if mod in _source_modules() else
                 "outside paddle_hl's kernel modules")
        raise TraceError(f"{ref!r} is not a registered paddle_hl kernel ({where}; only "
                         "functions declared as kernels with the op decorator can be called "
                         "by a program)")
    return fn


def trace_once(fn, inputs, named):
    """Run ``fn(*inputs)`` recording every kernel call; returns (ops, consts, output refs)."""
    tracer = _Tracer(inputs, named)
    # the kernels run through this thread's outer tracer, if any, else as the op wrapper runs
    # them (timed by a recording profiler); other threads' ops are not recorded
    prev = state.tls.tracer or state.run_kernel

    def hook(kernel, arrays, attrs):
        return tracer(kernel, arrays, attrs, prev)

    with state.op_tracer(hook):
        outs = fn(*inputs)
    single = isinstance(outs, Tensor)
    flat = [outs] if single else list(outs)
    for o in flat:
        if not isinstance(o, Tensor):
            raise TraceError(f"forward must return Tensors, got {type(o).__name__}")
    out_refs = [tracer._ref(o._data) for o in flat]
    return {"ops": tracer.ops, "consts": tracer.consts, "outs": out_refs, "single": single}, flat


# ----------------------------------------------------------------------------- free dims
def _monomials(k):
    return [()] + [(i,) for i in range(k)] + [(i, j) for i in range(k) for j in range(i, k)]


class Sym:
    """An integer that depends on the free-dim symbols: an integer polynomial of degree <= 2,
    coefficients in the order of ``_monomials(k)``."""

    __slots__ = ("c", "k")

    def __init__(self, c, k=1):
        self.c = tuple(int(x) for x in c)
        self.k = int(k)

    def at(self, dims):
        total = 0
        for coef, mono in zip(self.c, _monomials(self.k)):
            if coef:
                term = coef
                for i in mono:
                    term *= dims[i]
                total += term
        return total

    def terms(self):
        """``[(coef, monomial)]`` with nonzero coefficients (monomial: symbol indices)."""
        return [(c, m) for c, m in zip(self.c, _monomials(self.k)) if c]

    def __reduce__(self):
        return (Sym, (self.c, self.k))

    def __repr__(self):
        return f"Sym{self.c}"


def _fit(vals, points):
    k = len(points[0])
    monos = _monomials(k)
    a = np.array([[np.prod([p[i] for i in m]) if m else 1 for m in monos] for p in points],
                 dtype=np.float64)
    y = np.array(vals, dtype=np.float64)
    c = np.linalg.lstsq(a, y, rcond=None)[0]
    ci = np.round(c)
    if not np.array_equal(a @ ci, y):
        return None
    return Sym(ci, k)


def _merge(vals, sizes, where):
    """One value from the same slot of several traces: equal -> the value, ints -> a Sym."""
    v0 = vals[0]
    if all(_same(v, v0) for v in vals[1:]):
        return v0
    if all(type(v) in (int, np.int64, np.int32) for v in vals):
        s = _fit([int(v) for v in vals], sizes)
        if s is None:
            raise TraceError(f"{where}: the value {vals} depends on the free dim in a way "
                             "that cannot be fitted; give a fixed shape in input_spec")
        return s
    t = type(v0)
    if all(type(v) is t for v in vals):
        if t in (tuple, list) and all(len(v) == len(v0) for v in vals):
            return t(_merge([v[i] for v in vals], sizes, where) for i in range(len(v0)))
        if t is dict and all(v.keys() == v0.keys() for v in vals):
            return {k: _merge([v[k] for v in vals], sizes, where) for k in v0}
        if t is slice:
            return slice(*(_merge([getattr(v, f) for v in vals], sizes, where)
                           for f in ("start", "stop", "step")))
    raise TraceError(f"{where}: the value changes with the free dim ({vals[0]!r} vs "
                     f"{vals[1]!r}); give a fixed shape in input_spec")


def _same(a, b):
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    try:
        return bool(a == b)
    except Exception:
        return a is b


def _merge_const(cs, sizes, where):
    c0 = cs[0]
    if all(_same(c, c0) for c in cs[1:]):
        return ("c", c0)
    if all(c.ndim == c0.ndim and c.dtype == c0.dtype for c in cs):
        flat = [c.reshape(-1) for c in cs]
        uniform = all(f.size and (f == f[0]).all() for f in flat)
        if uniform and len({f[0].item() for f in flat}) == 1:
            shape = _merge([tuple(int(s) for s in c.shape) for c in cs], sizes, where)
            return ("fill", shape, flat[0][0].item(), c0.dtype.str)
        # shapes read as tensors (paddle.shape(x)): small int constants fitted element-wise
        if c0.dtype.kind in "iu" and c0.size <= 16 and all(c.shape == c0.shape for c in cs):
            try:
                vals = _merge([tuple(int(v) for v in c.reshape(-1)) for c in cs], sizes, where)
            except TraceError:
                vals = None
            if vals is not None:
                return ("ints", tuple(vals), tuple(c0.shape), c0.dtype.str)
        # position ids: arange(n) (possibly reshaped) whose length follows a free dim
        steps = {(f[0].item(), (f[1] - f[0]).item()) for f in flat if f.size > 1}
        if len(steps) == 1 and all(f.size > 1 for f in flat):
            start, step = steps.pop()
            if all(np.array_equal(f, start + step * np.arange(f.size, dtype=f.dtype))
                   for f in flat):
                shape = _merge([tuple(int(s) for s in c.shape) for c in cs], sizes, where)
                return ("arange", shape, start, step, c0.dtype.str)
    raise TraceError(f"{where}: a constant (shape {list(c0.shape)}) changes with the free dim "
                     "and is neither a uniform fill nor an arange; give a fixed shape in "
                     "input_spec")


def const_array(c, dims, xp=np):
    """The array of a merged constant at the symbol sizes ``dims``."""
    if c[0] == "c":
        return xp.asarray(c[1])
    if c[0] == "ints":
        return xp.asarray(_bind_sym(c[1], dims), dtype=np.dtype(c[3])).reshape(c[2])
    shape = tuple(_bind_sym(c[1], dims))
    if c[0] == "fill":
        return xp.full(shape, c[2], dtype=np.dtype(c[3]))
    n = int(np.prod(shape)) if shape else 1
    return (c[2] + c[3] * xp.arange(n)).astype(np.dtype(c[4])).reshape(shape)


def merge_traces(traces, sizes):
    """Fold traces taken at the given symbol sizes into one program with Sym integers."""
    t0 = traces[0]
    for size, t in zip(sizes[1:], traces[1:]):
        diff = next((i for i, (a, b) in enumerate(zip(t["ops"], t0["ops"]))
                     if a["fn"] != b["fn"]), None)
        if diff is None and len(t["ops"]) != len(t0["ops"]):
            diff = min(len(t["ops"]), len(t0["ops"]))
        if diff is not None:
            a, b = (ops[diff]["fn"] if diff < len(ops) else "the end of the forward"
                    for ops in (t0["ops"], t["ops"]))
            raise TraceError(
                f"the forward runs different ops for different sizes of the free dims (op "
                f"{diff}: {a} at sizes {sizes[0]}, {b} at {size}); give a fixed shape in "
                "input_spec")
    ops = []
    for k, op in enumerate(t0["ops"]):
        where = f"op {k} ({op['fn'].split(':')[1]})"
        ops.append({"fn": op["fn"], "outs": op["outs"], "tuple": op["tuple"],
                    "ins": _merge([t["ops"][k]["ins"] for t in traces], sizes, where),
                    "attrs": _merge([t["ops"][k]["attrs"] for t in traces], sizes, where)})
    n = len(t0["consts"])
    if any(len(t["consts"]) != n for t in traces):
        raise TraceError("the forward makes a different number of constants for different "
                         "sizes of the free dim")
    consts = [_merge_const([t["consts"][i] for t in traces], sizes, f"constant {i}")
              for i in range(n)]
    outs = _merge([t["outs"] for t in traces], sizes, "outputs")
    return {"ops": ops, "consts": consts, "outs": outs, "single": t0["single"]}


def _bind_sym(v, d):
    """``v`` with every Sym evaluated at the symbol sizes ``d`` (a tuple)."""
    if type(v) is Sym:
        return v.at(d)
    t = type(v)
    if t in (tuple, list):
        return t(_bind_sym(x, d) for x in v)
    if t is dict:
        return {k: _bind_sym(x, d) for k, x in v.items()}
    if t is slice:
        return slice(_bind_sym(v.start, d), _bind_sym(v.stop, d), _bind_sym(v.step, d))
    return v


def _has_sym(v):
    t = type(v)
    if t is Sym:
        return True
    if t in (tuple, list):
        return any(_has_sym(x) for x in v)
    if t is dict:
        return any(_has_sym(x) for x in v.values())
    if t is slice:
        return _has_sym(v.start) or _has_sym(v.stop) or _has_sym(v.step)
    return False


# ----------------------------------------------------------------------------- replay
def run(program, inputs, params, free_dim=None):
    """Replay ``program`` on input arrays with parameter arrays (dict by structured name).

    Args:
        program (dict): a merged program.
        inputs (list): backend arrays, one per input spec.
        params (dict): structured name -> backend array.
        free_dim (tuple, optional): the sizes of the free-dim symbols (read off the inputs).

    Returns:
        list: the output arrays.
    """
    from ..backend import get_array_module

    xp = get_array_module(inputs[0]) if inputs else np
    vals = {}
    consts = [const_array(c, free_dim, xp) for c in program["consts"]]

    get = resolver(vals, inputs, params, consts, free_dim)
    for op in program["ops"]:
        fn = _resolve(op["fn"])
        args = [get(r) for r in op["ins"]]
        attrs = op["attrs"]
        if program.get("sym") is not False and _has_sym(attrs):
            attrs = _bind_sym(attrs, free_dim)
        out, _ = fn(*args, **attrs) if attrs else fn(*args)
        outs = out if op["tuple"] else (out,)
        for k, o in zip(op["outs"], outs):
            vals[k] = o
    return [get(r) for r in program["outs"]]


def strided(base, offset, shape, strides):
    """The view ``base.flat[offset:]`` with ``shape`` and element ``strides``."""
    from ..backend import for_array

    flat = base.reshape(-1)[offset:]
    item = flat.itemsize
    return for_array(flat).as_strided(flat, shape, [s * item for s in strides])


def _reshape(x, shape):
    return x.reshape(shape)


def resolver(vals, inputs, params, consts, free_dim, *, seq_item=None, reshape=_reshape,
             view=strided, error=TraceError):
    """The function ``get(ref)`` that turns a value reference of a program into its value.

    A reference is ``("v", key)`` (an op's output, looked up in ``vals``, which the caller
    fills as ops run), ``("in", i)``, ``("p", name)``, ``("c", i)``, ``("lit", value)`` (its
    Sym integers bound to ``free_dim``), ``("seq", "tuple"|"list", refs)``, ``("reshape", ref,
    shape)`` or ``("view", ref, offset, shape, strides)``. The defaults work on backend
    arrays; a caller replaying on other values (Tensors) passes the operations that differ.

    Args:
        vals (dict), inputs (list), params (dict), consts (list): where the references point.
        free_dim (tuple): the sizes of the free-dim symbols.
        seq_item (callable, optional): applied to each item of a ``"seq"`` (default: none).
        reshape (callable): ``reshape(x, shape)``.
        view (callable): ``view(x, offset, shape, strides)``.
        error (callable): makes the exception for an unknown kind from its message.
    """
    def get(ref):
        kind = ref[0]
        if kind == "v":
            return vals[ref[1]]
        if kind == "in":
            return inputs[ref[1]]
        if kind == "p":
            return params[ref[1]]
        if kind == "c":
            return consts[ref[1]]
        if kind == "lit":
            return _bind_sym(ref[1], free_dim)
        if kind == "seq":
            items = (get(r) for r in ref[2]) if seq_item is None else (
                seq_item(get(r)) for r in ref[2])
            return (tuple if ref[1] == "tuple" else list)(items)
        if kind == "reshape":
            return reshape(get(ref[1]), _bind_sym(ref[2], free_dim))
        if kind == "view":
            return view(get(ref[1]), *(_bind_sym(r, free_dim) for r in ref[2:]))
        raise error(f"unknown value reference {ref!r}")

    return get


# ----------------------------------------------------------------------------- files
# What a program file (``.pdmodel`` written by paddle_hl's jit.save) is, and how it is read:
# the 8 bytes MAGIC, then a pickle (protocol 4) of plain data -- dicts, lists, tuples, strings,
# numbers, slices, NumPy arrays and dtypes, and Sym. The pickle is read by _SafeUnpickler,
# whose find_class rebuilds exactly those types and refuses every other global by name, so a
# file cannot name a function to call while it is unpickled. The kernels the program calls are
# registry names ("module:name"), each looked up in the kernel registry above by check() before
# any of them runs; a name that is not a declared paddle_hl kernel is refused.
class _SafeUnpickler(pickle.Unpickler):
    """Program files hold plain data only: builtins, NumPy arrays/dtypes and Sym."""

    _ALLOWED = {("builtins", "slice"), ("builtins", "Ellipsis"), ("builtins", "complex"),
                ("numpy", "dtype"), ("numpy", "ndarray"), ("numpy.core.multiarray", "_reconstruct"),
                ("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "scalar"),
                ("numpy._core.multiarray", "scalar"), ("numpy", "float32"), ("numpy", "float64"),
                ("numpy", "int64"), ("numpy", "int32"), ("numpy", "bool_"),
                ("paddle_hl.jit._program", "Sym")}

    def __init__(self, f, path):
        super().__init__(f)
        self.path = path

    def find_class(self, module, name):
        # NumPy's dtype classes (numpy.dtypes.Float32DType, ...) name the dtypes of arrays
        if (module, name) in self._ALLOWED or (module == "numpy.dtypes" and name.endswith(
                "DType") and name.isidentifier()):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            f"jit.load: unexpected object {module}.{name} in the program file {self.path}: "
            "a program file holds plain data only (numbers, strings, containers, NumPy "
            "arrays); refusing to load it")


def dumps(obj) -> bytes:
    return MAGIC + pickle.dumps(obj, protocol=4)


def loads(data: bytes, path: str):
    """The program in ``data`` (the bytes of the file ``path``), checked by :func:`check`."""
    from ..framework.io import truncation

    if len(data) < len(MAGIC) and MAGIC.startswith(data):
        raise ValueError(f"jit.load: {path} is truncated at byte {len(data)}: it ends inside "
                         "the file's 8-byte header")
    if not data.startswith(MAGIC):
        raise ValueError(
            f"jit.load: {path} is not a program saved by paddle_hl.jit.save: a .pdmodel "
            "written by Paddle holds a Paddle ProgramDesc, which paddle_hl does not run. Build "
            "the model with paddle_hl and set its parameters from the .pdiparams and "
            ".pdiparams.info files (by structured name) instead")
    body = data[len(MAGIC):]
    try:
        program = _SafeUnpickler(io.BytesIO(body), path).load()
    except Exception as e:
        cut = truncation(body)
        if cut is not None:
            n = len(MAGIC)
            of = f" of at least {cut[1] + n}" if cut[1] is not None else ""
            raise ValueError(f"jit.load: {path} is truncated at byte {cut[0] + n}{of}: the "
                             "program's pickle ends before its end marker (an interrupted "
                             "copy, or a full disk when it was written)") from None
        if isinstance(e, pickle.UnpicklingError) and str(e).startswith("jit.load: "):
            raise pickle.UnpicklingError(str(e)) from None
        raise ValueError(f"jit.load: {path} is not a readable program file "
                         f"({type(e).__name__}: {e})") from None
    check(program, path)
    return program


def check(program, path):
    """Refuse a program that is not the structure jit.save writes, or that calls anything but
    a registered kernel: an error naming ``path`` and the entry, before anything runs."""

    def bad(what):
        raise ValueError(f"jit.load: {path} is not a valid program file: {what}")

    if not isinstance(program, dict):
        bad(f"it holds a {type(program).__name__}, not a program")
    for key, t in (("ops", list), ("consts", list), ("outs", list), ("specs", list),
                   ("params", list), ("param_order", list)):
        if not isinstance(program.get(key), t):
            bad(f"entry {key!r} is missing or not a {t.__name__}")
    for i, op in enumerate(program["ops"]):
        if not (isinstance(op, dict) and isinstance(op.get("fn"), str)
                and isinstance(op.get("ins"), list) and isinstance(op.get("attrs"), dict)
                and isinstance(op.get("outs"), list)
                and all(isinstance(k, str) for k in op["attrs"])):
            bad(f"op {i} is not a {{'fn', 'ins', 'attrs', 'outs'}} record")
        try:
            _resolve(op["fn"])
        except TraceError as e:
            raise ValueError(f"jit.load: {path}: op {i} calls {op['fn']!r}, which is not a "
                             f"paddle_hl kernel; refusing to load the program ({e})") from None
