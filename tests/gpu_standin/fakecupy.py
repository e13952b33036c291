"""A strict CPU stand-in for CuPy: NumPy underneath, CuPy's rules on top.

Installed in ``sys.modules`` as ``cupy`` and ``cupyx`` (:func:`install`), it makes
paddle_hl's GPU backend run on the CPU, so CI can exercise the GPU path on every commit:

- :class:`ndarray` is a distinct array type: NumPy cannot take it implicitly (``np.asarray``
  raises TypeError as with a CuPy array), and mixing it with NumPy arrays in one operation
  raises as CuPy does.
- Every device-to-host transfer is counted in :data:`stats` (``get()``, ``asnumpy``,
  ``item()``, ``tolist()``, ``float()``/``int()``/``bool()``/``index()`` of an array, its
  ``repr``), and so are the operations that make CuPy wait for the device to learn an output
  size (``nonzero``, boolean-mask indexing, ``unique`` ...).
- The dtype/operation pairs CuPy lacks are refused: sorting bfloat16, bfloat16 scans
  (cumsum/cumprod) and, in an ``ElementwiseKernel``, compound assignment (``-=`` ...) to a
  bfloat16 value (CuPy's bfloat16 device class has none).
- ``ElementwiseKernel`` runs the kernel's own CUDA source, translated to NumPy expressions
  (the sources paddle_hl generates are straight-line arithmetic), and counts each launch.
- Devices, streams, events, pinned memory and the memory pools are stood in for.
"""

from __future__ import annotations

import collections
import re
import sys
import threading
import time
import types
import weakref

import numpy as np

__all__ = ["install", "standin", "stats", "ndarray"]

BF16 = None  # ml_dtypes' bfloat16, set by install()


class _Count(collections.Counter):
    """A Counter that also keeps where each count came from when ``stats.trace`` is on."""

    def __missing__(self, key):
        return 0

    def __setitem__(self, key, value):
        if stats.trace and value > self.get(key, 0):
            import traceback

            frames = [f for f in traceback.extract_stack()[:-2]
                      if "gpu_standin" not in f.filename]
            stats.where.append((key, [f"{f.filename.split('paddle_hl/')[-1]}:{f.lineno} "
                                      f"{f.name}" for f in frames[-4:]]))
        super().__setitem__(key, value)


class _Stats:
    """Counters of what reached the host and what ran."""

    def __init__(self):
        self.trace = False
        self.reset()

    def reset(self):
        self.where = []  # (kind, call sites) of each transfer while ``trace`` is on
        self.d2h = _Count()  # explicit transfers, by kind
        self.implicit = _Count()  # ops that wait for the device (output sizes)
        self.launches = collections.Counter()  # ElementwiseKernel launches, by kernel name
        self.syncs = 0  # device/stream/event synchronize calls
        self.h2d = 0

    @property
    def transfers(self):
        return sum(self.d2h.values()) + sum(self.implicit.values())

    def snapshot(self):
        return {"d2h": dict(self.d2h), "implicit": dict(self.implicit),
                "launches": dict(self.launches), "syncs": self.syncs, "h2d": self.h2d}


stats = _Stats()
_local = threading.local()
N_DEVICES = 1


def _current_device():
    return getattr(_local, "device", 0)


class DeviceToHostError(TypeError):
    pass


# ---------------------------------------------------------------------------- the array

def _no_numpy(where):
    raise TypeError(f"{where}: Implicit conversion to a NumPy array is not allowed. Please use "
                    "`.get()` to construct a NumPy array explicitly.")


def _is_bf16(dt):
    return BF16 is not None and np.dtype(dt) == BF16


def _unwrap(x, where, allow_host=False):
    if type(x) is ndarray:
        return x._a
    if isinstance(x, np.ndarray) and not allow_host:
        raise TypeError(f"{where}: Unsupported type <class 'numpy.ndarray'> (a host array "
                        "given to a device operation)")
    if isinstance(x, (list, tuple)):
        return type(x)(_unwrap(v, where, allow_host) for v in x)
    if isinstance(x, dict):
        return {k: _unwrap(v, where, allow_host) for k, v in x.items()}
    return x


def _wrap(r, device=None, keep=None):
    if keep is not None and id(r) in keep and keep[id(r)]._a is r:
        return keep[id(r)]
    if isinstance(r, np.ndarray):
        return ndarray(r, device)
    if isinstance(r, np.generic):  # CuPy's reductions give 0-d device arrays, not scalars
        return ndarray(np.asarray(r), device)
    if isinstance(r, tuple):
        return tuple(_wrap(v, device, keep) for v in r)
    if isinstance(r, list):
        return [_wrap(v, device, keep) for v in r]
    return r


class _Mem:
    __slots__ = ("__weakref__",)


_mems: dict = {}  # id of an allocation's root buffer -> (weak reference to it, its _Mem)


def _mem_of(root):
    entry = _mems.get(id(root))
    if entry is not None and entry[0]() is root:
        return entry[1]
    mem = _Mem()
    key = id(root)
    try:
        ref = weakref.ref(root, lambda _r, key=key: _mems.pop(key, None))
    except TypeError:  # not weak-referenceable: its own allocation each time
        return mem
    _mems[key] = (ref, mem)
    return mem


class _Data:
    """``arr.data``: the pointer and the allocation it lies in (one ``mem`` object per
    allocation, shared by every view of it, as CuPy's)."""

    def __init__(self, a):
        self.ptr = a.__array_interface__["data"][0]
        root = a
        while getattr(root, "base", None) is not None:
            root = root.base
        self.mem = _mem_of(root)


class _DeviceRef:
    def __init__(self, i):
        self.id = i

    def __eq__(self, other):
        return isinstance(other, (_DeviceRef, Device)) and self.id == other.id

    def __hash__(self):
        return hash(self.id)


def _check_sort(where, *arrays):
    for a in arrays:
        if isinstance(a, np.ndarray) and _is_bf16(a.dtype):
            raise TypeError(f"{where}: CuPy has no bfloat16 sort (the stand-in refuses what "
                            "CuPy cannot run)")


def _check_scan(where, a, dtype):
    if isinstance(a, np.ndarray) and _is_bf16(a.dtype) and (dtype is None or _is_bf16(dtype)):
        raise TypeError(f"{where}: CuPy's scan kernels have no bfloat16 arithmetic")


_SORTS = {"sort", "argsort", "lexsort", "unique", "partition", "argpartition", "median",
          "percentile", "quantile", "nanmedian", "nanpercentile", "nanquantile", "msort"}
_SCANS = {"cumsum", "cumprod", "nancumsum", "nancumprod"}
# the operations whose output size CuPy learns by waiting for the device
_SIZED = {"nonzero", "flatnonzero", "argwhere", "unique", "compress", "extract",
          "count_nonzero_host", "trim_zeros"}


def _guard(name, args, kwargs):
    if name in _SORTS:
        _check_sort(f"cupy.{name}", *[a for a in args if isinstance(a, np.ndarray)],
                    *[a for a in args[:1] if isinstance(a, (list, tuple))
                      for a in a if isinstance(a, np.ndarray)])
    if name in _SCANS:
        _check_scan(f"cupy.{name}", args[0] if args else kwargs.get("a"), kwargs.get("dtype"))
    if name in _SIZED:
        stats.implicit[name] += 1


# the device array wrapping each live NumPy array (``ndarray.base`` returns it, as CuPy does)
_wrappers: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


class ndarray:
    """A device array: a NumPy array that NumPy may not see (see the module docstring)."""

    __slots__ = ("_a", "_dev", "__weakref__")
    __array_priority__ = 1000

    def __init__(self, a, device=None):
        if not isinstance(a, np.ndarray):
            raise TypeError("ndarray: build device arrays with cupy.asarray / empty / zeros")
        self._a = a
        self._dev = _current_device() if device is None else device
        _wrappers[id(a)] = self
        if a.base is None and a.nbytes:  # an allocation of its own: the pool counts it
            _pool.allocate(a)

    # --- NumPy may not take it
    def __array__(self, dtype=None, copy=None):
        _no_numpy("numpy.asarray(cupy.ndarray)")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        for v in inputs:
            if isinstance(v, np.ndarray):
                _no_numpy(f"numpy.{ufunc.__name__}(numpy.ndarray, cupy.ndarray)")
        return _call(getattr(ufunc, method) if method != "__call__" else ufunc,
                     f"{ufunc.__name__}.{method}", inputs, kwargs)

    def __array_function__(self, func, types_, args, kwargs):
        return _call(func, func.__name__, args, kwargs)

    # --- device-to-host transfers (counted)
    def get(self, stream=None, order="C", out=None, blocking=True):
        stats.d2h["get"] += 1
        if out is not None:
            out[...] = self._a
            return out
        return self._a.copy()

    def item(self, *args):
        stats.d2h["item"] += 1
        return self._a.item(*args)

    def tolist(self):
        stats.d2h["tolist"] += 1
        return self._a.tolist()

    def __float__(self):
        stats.d2h["float"] += 1
        return float(self._a)

    def __int__(self):
        stats.d2h["int"] += 1
        return int(self._a)

    def __complex__(self):
        stats.d2h["complex"] += 1
        return complex(self._a)

    def __bool__(self):
        stats.d2h["bool"] += 1
        return bool(self._a)

    def __index__(self):
        stats.d2h["index"] += 1
        return self._a.__index__()

    def __repr__(self):
        stats.d2h["repr"] += 1
        return "stand-in " + repr(self._a)

    __str__ = __repr__

    def __reduce__(self):
        stats.d2h["pickle"] += 1
        return (_from_host, (self._a.copy(),))

    def __format__(self, spec):
        stats.d2h["format"] += 1
        return format(self._a, spec) if self._a.ndim == 0 else format(str(self._a), spec)

    # --- host-to-device
    def set(self, arr, stream=None):
        stats.h2d += 1
        self._a[...] = np.asarray(arr)

    # --- attributes
    shape = property(lambda s: s._a.shape)
    dtype = property(lambda s: s._a.dtype)
    ndim = property(lambda s: s._a.ndim)
    size = property(lambda s: s._a.size)
    itemsize = property(lambda s: s._a.itemsize)
    nbytes = property(lambda s: s._a.nbytes)
    strides = property(lambda s: s._a.strides)
    flags = property(lambda s: s._a.flags)
    T = property(lambda s: ndarray(s._a.T, s._dev))
    mT = property(lambda s: ndarray(np.swapaxes(s._a, -1, -2), s._dev))
    data = property(lambda s: _Data(s._a))
    device = property(lambda s: _DeviceRef(s._dev))

    @property
    def base(self):
        # CuPy hands back the base array object itself: code that walks ``.base`` to find an
        # array it already knows (the jit tracer) relies on that identity
        b = self._a.base
        if not isinstance(b, np.ndarray):
            return None
        known = _wrappers.get(id(b))
        return known if known is not None and known._a is b else ndarray(b, self._dev)

    @property
    def __cuda_array_interface__(self):
        a = self._a
        return {"shape": a.shape, "typestr": a.dtype.str, "version": 3,
                "data": (a.__array_interface__["data"][0], False),
                "strides": None if a.flags.c_contiguous else a.strides}

    @property
    def real(self):
        return ndarray(self._a.real, self._dev)

    @real.setter
    def real(self, v):
        self._a.real = _unwrap(v, "real")

    @property
    def imag(self):
        return ndarray(self._a.imag, self._dev)

    @imag.setter
    def imag(self, v):
        self._a.imag = _unwrap(v, "imag")

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        for i in range(len(self._a)):
            yield self[i]

    def __getitem__(self, idx):
        idx = _unwrap(idx, "__getitem__", allow_host=True)
        if _has_mask(idx):
            stats.implicit["mask_getitem"] += 1
        return _wrap(self._a[idx], self._dev)

    def __setitem__(self, idx, value):
        idx = _unwrap(idx, "__setitem__", allow_host=True)
        self._a[idx] = _unwrap(value, "__setitem__", allow_host=True)

    def __copy__(self):
        return ndarray(self._a.copy(), self._dev)

    def __deepcopy__(self, memo):
        return ndarray(self._a.copy(), self._dev)

    def __dlpack__(self, *args, **kwargs):
        return self._a.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return (2, self._dev)  # kDLCUDA

    def toDlpack(self):  # noqa: N802  (CuPy's name)
        return self._a.__dlpack__()

    def sort(self, axis=-1, kind=None):
        _check_sort("cupy.ndarray.sort", self._a)
        self._a.sort(axis=axis)

    def argsort(self, axis=-1, kind=None):
        _check_sort("cupy.ndarray.argsort", self._a)
        return ndarray(self._a.argsort(axis=axis, kind="stable"), self._dev)

    def nonzero(self):
        stats.implicit["nonzero"] += 1
        return _wrap(self._a.nonzero(), self._dev)

    def cumsum(self, axis=None, dtype=None, out=None):
        _check_scan("cupy.ndarray.cumsum", self._a, dtype)
        return _call(np.cumsum, "cumsum", (self, axis, dtype, out), {})

    def cumprod(self, axis=None, dtype=None, out=None):
        _check_scan("cupy.ndarray.cumprod", self._a, dtype)
        return _call(np.cumprod, "cumprod", (self, axis, dtype, out), {})

    def __getattr__(self, name):
        if name.startswith("__"):  # no __array_interface__ & co: NumPy may not read it
            raise AttributeError(f"'cupy.ndarray' object has no attribute '{name}'")
        attr = getattr(self._a, name)
        if not callable(attr):
            return _wrap(attr, self._dev)

        def method(*args, **kwargs):
            return _call(attr, f"ndarray.{name}", args, kwargs, device=self._dev)

        return method

    __hash__ = None


def _has_mask(idx):
    parts = idx if isinstance(idx, tuple) else (idx,)
    return any(isinstance(p, np.ndarray) and p.dtype == bool for p in parts)


def _from_host(a):
    return ndarray(np.array(a))


# CuPy's sorts are stable (radix/merge sorts): NumPy's default quicksort is not
_STABLE = {"sort", "argsort", "ndarray.sort", "ndarray.argsort"}


def _call(fn, name, args, kwargs, device=None):
    keep = {}
    for v in list(args) + list(kwargs.values()):
        if type(v) is ndarray:
            keep[id(v._a)] = v
            device = v._dev if device is None else device
    uargs = _unwrap(tuple(args), name)
    ukw = _unwrap(kwargs, name)
    _guard(name.split(".")[-1], uargs, ukw)
    if name in _STABLE:
        ukw["kind"] = "stable"
    return _wrap(fn(*uargs, **ukw), device, keep)


def _binop(op, reflected=False):
    def f(self, other):
        if isinstance(other, np.ndarray):
            _no_numpy(f"cupy.ndarray.{op.__name__}(numpy.ndarray)")
        o = other._a if type(other) is ndarray else other
        if isinstance(o, (list, tuple)):
            return NotImplemented
        r = op(o, self._a) if reflected else op(self._a, o)
        return _wrap(r, self._dev)

    return f


def _inplace(op):
    def f(self, other):
        if isinstance(other, np.ndarray):
            _no_numpy(f"cupy.ndarray.{op.__name__}(numpy.ndarray)")
        op(self._a, other._a if type(other) is ndarray else other)
        return self

    return f


import operator as _op  # noqa: E402

for _n in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or",
           "xor", "lshift", "rshift"):
    _f = getattr(_op, _n + "_") if _n in ("and", "or") else getattr(_op, _n)
    setattr(ndarray, f"__{_n}__", _binop(_f))
    setattr(ndarray, f"__r{_n}__", _binop(_f, reflected=True))
    setattr(ndarray, f"__i{_n}__", _inplace(getattr(_op, f"i{_n}")))
for _n in ("lt", "le", "eq", "ne", "gt", "ge"):
    setattr(ndarray, f"__{_n}__", _binop(getattr(_op, _n)))
for _n in ("neg", "pos", "abs", "invert"):
    setattr(ndarray, f"__{_n}__", (lambda o: lambda self: ndarray(np.asarray(o(self._a)),
                                                                   self._dev))(getattr(_op, _n)))


# ---------------------------------------------------------------------------- kernels

_PARAM = re.compile(r"^\s*(\w+)\s+(\w+)\s*$")
_CTYPE = {"float": np.float32, "double": np.float64}


def _parse_params(spec):
    out = []
    for item in spec.split(","):
        m = _PARAM.match(item)
        if m is None:
            raise ValueError(f"ElementwiseKernel: cannot read the parameter {item!r}")
        out.append((m.group(1), m.group(2)))
    return out


def _ternary(expr):
    """``c ? x : y`` (inside one pair of parentheses or a whole expression) -> where()."""
    while "?" in expr:
        q = expr.index("?")
        depth, start = 0, 0
        for i in range(q - 1, -1, -1):
            if expr[i] == ")":
                depth += 1
            elif expr[i] == "(":
                if depth == 0:
                    start = i + 1
                    break
                depth -= 1
        depth, colon, end = 0, None, len(expr)
        for i in range(q + 1, len(expr)):
            if expr[i] == "(":
                depth += 1
            elif expr[i] == ")":
                if depth == 0:
                    end = i
                    break
                depth -= 1
            elif expr[i] == ":" and depth == 0 and colon is None:
                colon = i
        cond, a, b = expr[start:q], expr[q + 1:colon], expr[colon + 1:end]
        expr = f"{expr[:start]}_where({cond}, {a}, {b}){expr[end:]}"
    return expr


class ElementwiseKernel:
    """CuPy's ElementwiseKernel, running its CUDA operation as NumPy expressions."""

    def __init__(self, in_params, out_params, operation, name="kernel", **kwargs):
        self.name = name
        self.ins = _parse_params(in_params)
        self.outs = _parse_params(out_params)
        self.operation = operation
        self._code = None

    def _types(self, args):
        bound = {}
        for (t, n), a in zip(self.ins + self.outs, args):
            dt = a.dtype if isinstance(a, (ndarray, np.generic)) else None
            if t in _NP_NAMES:
                continue
            if dt is None:
                raise TypeError(f"{self.name}: the argument {n} (type {t}) needs a dtype; got "
                                f"{type(a).__name__}")
            if t in bound and bound[t] != dt:
                raise TypeError(f"{self.name}: type {t} is bound to {bound[t]} and {dt} "
                                f"(argument {n})")
            bound[t] = np.dtype(dt)
        return bound

    def _check_bf16(self, bound):
        for t, dt in bound.items():
            if not _is_bf16(dt):
                continue
            names = [n for tt, n in self.ins + self.outs if tt == t]
            local = re.findall(rf"\b{t}\s+(\w+)\s*=", self.operation)
            for n in names + local:
                if re.search(rf"\b{n}\s*([-+*/])=", self.operation):
                    raise TypeError(
                        f"{self.name}: compound assignment to the bfloat16 value {n!r}: CuPy's "
                        "bfloat16 device type has no -=, +=, *=, /= (the kernel does not "
                        "compile for bfloat16)")

    def _compile(self):
        lines = []
        outs = {n for _, n in self.outs}
        for stmt in self.operation.split(";"):
            stmt = stmt.strip()
            if not stmt:
                continue
            stmt = re.sub(r"^(?:const\s+)?(?:[A-Z]|float|double)\s+(\w+\s*=)", r"\1", stmt)
            stmt = re.sub(r"\(([A-Z])\)\s*(\(|\w+|\d+\.?\d*)", r"_cast['\1'](\2", stmt)
            # close the casts opened above: _cast['C'](x -> _cast['C'](x)
            stmt = re.sub(r"_cast\['(\w)'\]\((\w+|\d+\.?\d*)(?!\w)", r"_cast['\1'](\2)", stmt)
            stmt = stmt.replace("fabs(", "_abs(").replace("sqrt(", "_sqrt(").replace(
                "max(", "_max(").replace("min(", "_min(").replace("exp(", "_exp(")
            stmt = _ternary(stmt)
            m = re.match(r"^(\w+)\s*([-+*/]?=)\s*(.*)$", stmt, re.S)
            if m is None:
                raise ValueError(f"{self.name}: the stand-in cannot run the statement {stmt!r}")
            target, op, expr = m.groups()
            if target in outs:
                lines.append(f"{target}[...] {op if op != '=' else '='} {expr}")
            else:
                lines.append(f"{target} {op} {expr}")
        return compile("\n".join(lines), f"<kernel {self.name}>", "exec")

    def __call__(self, *args, **kwargs):
        n_in, n_out = len(self.ins), len(self.outs)
        if len(args) != n_in + n_out:
            raise TypeError(f"{self.name}: expected {n_in + n_out} arguments, got {len(args)}")
        for a in args:
            if isinstance(a, np.ndarray):
                _no_numpy(f"{self.name}: a host array given to a kernel")
        bound = self._types(args)
        self._check_bf16(bound)
        if self._code is None:
            self._code = self._compile()
        stats.launches[self.name] += 1
        env = {}
        for (_, n), a in zip(self.ins, args):
            env[n] = a._a if type(a) is ndarray else a
        for (_, n), a in zip(self.outs, args[n_in:]):
            env[n] = a._a
        cast = {t: (lambda d: lambda x: np.asarray(x).astype(d))(dt) for t, dt in bound.items()}
        env.update(_cast=cast, _abs=np.abs, _sqrt=np.sqrt, _max=np.maximum, _min=np.minimum,
                   _exp=np.exp, _where=np.where)
        with np.errstate(all="ignore"):
            exec(self._code, env)  # noqa: S102  (the kernel's own arithmetic)
        return args[n_in] if n_out == 1 else tuple(args[n_in:])


_NP_NAMES = {"float32", "float64", "float16", "int32", "int64", "bool", "raw"}


# ---------------------------------------------------------------------------- devices, streams

class Device:
    def __init__(self, device=None):
        self.id = _current_device() if device is None else int(device)
        if not 0 <= self.id < N_DEVICES:
            raise CUDARuntimeError("cudaErrorInvalidDevice: invalid device ordinal")
        self._prev = []

    def __enter__(self):
        self._prev.append(_current_device())
        _local.device = self.id
        return self

    def __exit__(self, *exc):
        _local.device = self._prev.pop()

    def use(self):
        _local.device = self.id

    def synchronize(self):
        stats.syncs += 1

    @property
    def compute_capability(self):
        return "90"

    def __eq__(self, other):
        return isinstance(other, (Device, _DeviceRef)) and self.id == other.id

    def __hash__(self):
        return hash(self.id)


class CUDARuntimeError(RuntimeError):
    pass


class Stream:
    null = None

    def __init__(self, null=False, non_blocking=False, ptr=0):
        self.ptr = ptr

    def synchronize(self):
        stats.syncs += 1

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def use(self):
        return self


Stream.null = Stream(null=True)


def get_current_stream(device=None):
    return Stream.null


class Event:
    def __init__(self, block=False, disable_timing=False, interprocess=False):
        self.t = None

    def record(self, stream=None):
        self.t = time.perf_counter()

    @property
    def done(self):
        return True

    def query(self):
        return True

    def synchronize(self):
        stats.syncs += 1


def get_elapsed_time(start, end):
    return (end.t - start.t) * 1e3


class _Pool:
    """The memory pool: the bytes of the live device allocations (released when the NumPy
    buffer underneath is freed) and the most ever held."""

    def __init__(self):
        self.used = self.held = 0
        self._lock = threading.Lock()

    def allocate(self, a):
        n = a.nbytes
        with self._lock:
            self.used += n
            self.held = max(self.held, self.used)
        weakref.finalize(a, self._free, n)

    def _free(self, n):
        with self._lock:
            self.used -= n

    def used_bytes(self):
        return self.used

    def total_bytes(self):
        return self.held

    def free_all_blocks(self, stream=None):
        self.held = self.used

    def malloc(self, size):
        return _Memory(size)

    def set_limit(self, size=None, fraction=None):
        pass

    def get_limit(self):
        return 0

    def n_free_blocks(self):
        return 0


class _Memory:
    """A block from ``MemoryPool.malloc`` (host bytes; nothing in the stand-in reads it)."""

    def __init__(self, size):
        self.buf = np.empty(size, dtype=np.uint8)
        self.ptr = self.buf.__array_interface__["data"][0]
        self.mem = self


_pool, _pinned_pool = _Pool(), _Pool()
_allocator = [None]


def _runtime():
    rt = types.ModuleType("cupy.cuda.runtime")
    rt.CUDARuntimeError = CUDARuntimeError
    rt.getDeviceCount = lambda: N_DEVICES
    rt.runtimeGetVersion = lambda: 13000
    rt.driverGetVersion = lambda: 13000
    rt.getDevice = _current_device
    rt.deviceSynchronize = lambda: setattr(stats, "syncs", stats.syncs + 1)
    rt.getDeviceProperties = lambda i: {
        "name": b"paddle_hl CPU stand-in", "major": 9, "minor": 0,
        "totalGlobalMem": 16 << 30, "multiProcessorCount": 132}
    rt.memGetInfo = lambda: (16 << 30, 16 << 30)
    return rt


# ---------------------------------------------------------------------------- random

class RandomState:
    # CuPy takes 64-bit seeds; NumPy's legacy seeding 32-bit ones: seed through SeedSequence
    def __init__(self, seed=None):
        self.seed(seed)

    def seed(self, seed=None):
        self._rs = np.random.RandomState(np.random.MT19937(np.random.SeedSequence(
            None if seed is None else int(seed))))

    def _w(self, a, dtype=None):
        a = np.asarray(a)
        return ndarray(a.astype(dtype) if dtype is not None else a)

    def random_sample(self, size=None, dtype=np.float64):
        return self._w(self._rs.random_sample(size), dtype)

    def standard_normal(self, size=None, dtype=np.float64):
        return self._w(self._rs.standard_normal(size), dtype)

    def uniform(self, low=0.0, high=1.0, size=None, dtype=np.float64):
        return self._w(self._rs.uniform(_unwrap(low, "uniform"), _unwrap(high, "uniform"),
                                        size), dtype)

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=np.float64):
        return self._w(self._rs.normal(_unwrap(loc, "normal"), _unwrap(scale, "normal"),
                                       size), dtype)

    def randint(self, low, high=None, size=None, dtype=np.int64):
        return self._w(self._rs.randint(low, high, size=size, dtype=dtype))

    def permutation(self, n):
        return self._w(self._rs.permutation(n))

    def poisson(self, lam=1.0, size=None, dtype=np.int64):
        return self._w(self._rs.poisson(_unwrap(lam, "poisson"), size), dtype)

    def exponential(self, scale=1.0, size=None, dtype=np.float64):
        return self._w(self._rs.exponential(_unwrap(scale, "exponential"), size), dtype)

    def standard_cauchy(self, size=None, dtype=np.float64):
        return self._w(self._rs.standard_cauchy(size), dtype)

    def geometric(self, p, size=None, dtype=np.int64):
        return self._w(self._rs.geometric(_unwrap(p, "geometric"), size), dtype)

    def binomial(self, n, p, size=None, dtype=np.int64):
        return self._w(self._rs.binomial(_unwrap(n, "binomial"), _unwrap(p, "binomial"), size),
                       dtype)

    def standard_gamma(self, shape, size=None, dtype=np.float64):
        return self._w(self._rs.standard_gamma(_unwrap(shape, "standard_gamma"), size), dtype)


# ---------------------------------------------------------------------------- modules

class _Proxy(types.ModuleType):
    """A module whose missing attributes are NumPy's (or a NumPy submodule's), wrapped."""

    def __init__(self, name, np_mod):
        super().__init__(name)
        self._np_mod = np_mod

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        attr = getattr(self._np_mod, name)
        if isinstance(attr, np.ufunc):
            wrapped = _Ufunc(attr)
        elif isinstance(attr, type) or not callable(attr):
            wrapped = attr  # dtypes, constants, classes
        else:
            wrapped = _function(attr, name)
        setattr(self, name, wrapped)
        return wrapped


def _function(fn, name):
    def f(*args, **kwargs):
        return _call(fn, name, args, kwargs)

    f.__name__ = name
    return f


class _Ufunc:
    def __init__(self, uf):
        self._uf = uf
        self.__name__ = uf.__name__
        self.nin, self.nout = uf.nin, uf.nout

    def __call__(self, *args, **kwargs):
        return _call(self._uf, self.__name__, args, kwargs)

    def __getattr__(self, name):
        return _function(getattr(self._uf, name), f"{self.__name__}.{name}")


def _creation(fn, name):
    def f(*args, **kwargs):
        args, kwargs = _unwrap(args, name), _unwrap(kwargs, name)
        return ndarray(np.asarray(fn(*args, **kwargs)))

    f.__name__ = name
    return f


def asarray(a, dtype=None, order=None, blocking=False):
    if type(a) is ndarray:
        if a._dev != _current_device():
            return ndarray(a._a.astype(dtype or a.dtype, copy=True))
        return a if dtype is None or np.dtype(dtype) == a.dtype else ndarray(
            a._a.astype(dtype), a._dev)
    if isinstance(a, (list, tuple)) and any(type(v) is ndarray for v in a):
        return ndarray(np.asarray([v._a if type(v) is ndarray else v for v in a], dtype=dtype))
    stats.h2d += 1
    return ndarray(np.array(a, dtype=dtype, order=order or "K"))


def array(a, dtype=None, copy=True, order="K", ndmin=0, **kwargs):
    if type(a) is ndarray:
        return ndarray(np.array(a._a, dtype=dtype, copy=copy, order=order, ndmin=ndmin), a._dev)
    stats.h2d += 1
    return ndarray(np.array(a, dtype=dtype, order=order, ndmin=ndmin))


def asnumpy(a, stream=None, order="C", out=None, blocking=True):
    if type(a) is ndarray:
        stats.d2h["asnumpy"] += 1
        return a._a.copy()
    return np.asarray(a)


def get_array_module(*args):
    return sys.modules["cupy"] if any(type(a) is ndarray for a in args) else np


class _Capsule:
    """A bare DLPack capsule (``toDlpack()``'s) as the protocol object NumPy takes."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, stream=None, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


def from_dlpack(obj):
    if type(obj) is ndarray:
        return obj
    if not hasattr(obj, "__dlpack__"):
        obj = _Capsule(obj)
    return ndarray(np.from_dlpack(obj).copy())


def _cupy_module():
    cp = _Proxy("cupy", np)
    cp.__file__ = __file__
    cp.__version__ = "14.2.0-standin"
    cp.ndarray = ndarray
    cp.asarray = asarray
    cp.array = array
    cp.asnumpy = asnumpy
    cp.get_array_module = get_array_module
    cp.from_dlpack = from_dlpack
    cp.ElementwiseKernel = ElementwiseKernel
    cp.get_default_memory_pool = lambda: _pool
    cp.get_default_pinned_memory_pool = lambda: _pinned_pool
    for name in ("empty", "zeros", "ones", "full", "arange", "linspace", "eye", "identity",
                 "logspace", "tri"):
        setattr(cp, name, _creation(getattr(np, name), name))
    cuda = types.ModuleType("cupy.cuda")
    cuda.Device = Device
    cuda.Stream = Stream
    cuda.Event = Event
    cuda.get_current_stream = get_current_stream
    cuda.get_elapsed_time = get_elapsed_time
    cuda.runtime = _runtime()
    cuda.set_allocator = lambda fn=None: _allocator.__setitem__(0, fn)
    cuda.get_allocator = lambda: _allocator[0] or _pool.malloc
    cuda.is_available = lambda: True
    cp.cuda = cuda
    rnd = types.ModuleType("cupy.random")
    rnd.RandomState = RandomState
    cp.random = rnd
    lib = types.ModuleType("cupy.lib")
    st = types.ModuleType("cupy.lib.stride_tricks")

    def as_strided(x, shape=None, strides=None):
        return ndarray(np.lib.stride_tricks.as_strided(x._a, shape=shape, strides=strides),
                       x._dev)

    st.as_strided = as_strided
    lib.stride_tricks = st
    cp.lib = lib
    cp.linalg = _Proxy("cupy.linalg", np.linalg)
    cp.fft = _Proxy("cupy.fft", np.fft)
    return cp


class _CSR:
    """cupyx.scipy.sparse.csr_matrix over SciPy's, its arrays on the stand-in device."""

    def __init__(self, arg, shape=None):
        import scipy.sparse as sps

        if isinstance(arg, tuple):
            arg = tuple(_unwrap(v, "csr_matrix") for v in arg)
            self._m = sps.csr_matrix(arg, shape=shape)
        else:
            self._m = arg.tocsr()

    def __matmul__(self, other):
        if isinstance(other, _CSR):
            return _CSR(self._m @ other._m)
        return ndarray(np.asarray(self._m @ _unwrap(other, "csr_matrix @")))

    @property
    def T(self):  # noqa: N802
        return _CSR(self._m.T)

    def tocsr(self):
        return _CSR(self._m)

    def sum_duplicates(self):
        self._m.sum_duplicates()

    def sort_indices(self):
        self._m.sort_indices()

    data = property(lambda s: ndarray(s._m.data))
    indptr = property(lambda s: ndarray(s._m.indptr))
    indices = property(lambda s: ndarray(s._m.indices))
    shape = property(lambda s: s._m.shape)


def _cupyx_module():
    cx = types.ModuleType("cupyx")
    cx.__path__ = []  # a package: cupyx.scipy.sparse imports from it
    scipy_mod = types.ModuleType("cupyx.scipy")
    scipy_mod.__path__ = []
    sparse = types.ModuleType("cupyx.scipy.sparse")
    sparse.csr_matrix = _CSR
    scipy_mod.sparse = sparse
    cx.scipy = scipy_mod

    def empty_pinned(shape, dtype=float, order="C"):
        return np.empty(shape, dtype=dtype, order=order)

    def zeros_pinned(shape, dtype=float, order="C"):
        return np.zeros(shape, dtype=dtype, order=order)

    cx.empty_pinned = empty_pinned
    cx.zeros_pinned = zeros_pinned
    return cx


def standin(n_devices=None):
    """The stand-in ``(cupy, cupyx)`` modules, not installed (``n_devices`` devices; None
    keeps the number set before, 1 at first)."""
    global BF16, N_DEVICES
    import ml_dtypes

    BF16 = np.dtype(ml_dtypes.bfloat16)
    if n_devices is not None:
        N_DEVICES = int(n_devices)
    return _cupy_module(), _cupyx_module()


def install(n_devices=1):
    """Put the stand-in in ``sys.modules`` as ``cupy``/``cupyx`` and make paddle_hl's backend
    look for a GPU again (it finds the stand-in, with ``n_devices`` devices)."""
    cp, cx = standin(n_devices)
    for name in [m for m in sys.modules if m.split(".")[0] in ("cupy", "cupyx",
                                                               "cupy_backends")]:
        del sys.modules[name]
    sys.modules.update({"cupy": cp, "cupyx": cx, "cupyx.scipy": cx.scipy,
                        "cupyx.scipy.sparse": cx.scipy.sparse, "cupy.cuda": cp.cuda,
                        "cupy.cuda.runtime": cp.cuda.runtime, "cupy.random": cp.random,
                        "cupy.lib": cp.lib, "cupy.lib.stride_tricks": cp.lib.stride_tricks,
                        "cupy.linalg": cp.linalg, "cupy.fft": cp.fft})
    backend = sys.modules.get("paddle_hl.backend")
    if backend is not None:
        backend._cp = None
        backend._cupy_checked = False
        backend._cupy_error = ""
        backend._cupy_backend = None
        sys.modules.pop("paddle_hl.backend._cupy", None)
        if "_cupy" in backend.__dict__:
            del backend.__dict__["_cupy"]
    return cp
