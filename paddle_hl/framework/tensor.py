"""The Tensor: one backend array plus autograd state.

Python operators and most methods are attached by ``paddle_hl.tensor`` from the op library, so this
file holds only what is intrinsic to the object: storage, metadata, conversion, printing, pickling
and the autograd entry points.
"""

from __future__ import annotations

import itertools
import numbers
import sys
import weakref

import numpy as np

from .. import backend
from . import dtype as _dt
from . import place as _pl
from . import state

__all__ = []

_name_counter = itertools.count()
# id(tensor) -> callable(tensor) -> HTML, for the tensors a domain gave a rich view; entries
# leave with their tensor
_HTML_VIEWS = {}


def set_html_view(tensor, render):
    """Give ``tensor`` a rich view in Jupyter: ``render(tensor)`` returns the HTML to show.

    Domains use it for what they produce (audio features render as spectrogram images). The
    view lasts as long as the tensor; nothing is kept once it is freed.
    """
    key = id(tensor)
    if key not in _HTML_VIEWS:
        weakref.finalize(tensor, _HTML_VIEWS.pop, key, None)
    _HTML_VIEWS[key] = render
_EXTRA = {}  # id(tensor) -> (kind, payload) for vocabulary / string-list tensors

# The autograd engine and the op wrapper sit above this module and build Tensors; each hands over
# the one function Tensor calls back when it loads (``engine.run_backward`` for
# ``Tensor.backward``, ``op.apply`` for a differentiable copy between devices), so this module
# imports neither. Both are loaded with ``paddle_hl``, before any Tensor method can run.
_autograd = {"run_backward": None, "apply": None}


def attach_autograd(**fns):
    """Called by ``engine`` and ``op`` when they load, with the functions named in _autograd."""
    unknown = set(fns) - set(_autograd)
    if unknown:
        raise TypeError(f"attach_autograd: unknown hooks {sorted(unknown)}")
    _autograd.update(fns)


class _Version:
    """Inplace version counter, shared by a tensor and every view of it."""

    __slots__ = ("v",)

    def __init__(self):
        self.v = 0


class Tensor:
    """A multi-dimensional array with autograd, as ``paddle.Tensor``.

    Build one with :func:`paddle_hl.to_tensor`. ``stop_gradient`` is True by default; set it to
    False to have gradients computed for it.
    """

    __slots__ = ("_data", "stop_gradient", "_grad", "_name", "_node", "_idx", "_ver", "_hooks",
                 "_retain", "persistable", "__weakref__")

    def __init__(self, data=None, dtype=None, place=None, stop_gradient=True, name=None):
        if data is None:
            data = np.zeros([0], dtype=_dt.default_np())
        init_slots(self, to_array(data, dtype, place, "paddle.Tensor"), bool(stop_gradient))
        self._name = name

    # ------------------------------------------------------------------ metadata
    @property
    def shape(self) -> list:
        return list(self._data.shape)

    @property
    def dtype(self) -> _dt.DType:
        return _dt.from_np(self._data.dtype)

    @property
    def place(self) -> _pl.Place:
        return _pl.place_of(self._data)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def size(self) -> int:
        return int(self._data.size)

    @property
    def name(self) -> str:
        if self._name is None:
            self._name = f"generated_tensor_{next(_name_counter)}"
        return self._name

    @name.setter
    def name(self, value):
        self._name = value

    @property
    def is_leaf(self) -> bool:
        return self._node is None

    @property
    def inplace_version(self) -> int:
        return self._ver.v

    @property
    def grad(self):
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None and not isinstance(value, Tensor):
            value = Tensor(value)
        self._grad = value

    @property
    def T(self):  # noqa: N802
        # transpose is attached by the op library (paddle_hl.tensor), which sits above Tensor
        return self.transpose(list(range(self.ndim))[::-1])

    @property
    def data(self):
        return self.detach()

    @data.setter
    def data(self, value):
        self.set_value(value)

    @property
    def type(self):
        return "DENSE_TENSOR"

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    def numel(self):
        return _wrap(np.asarray(self._data.size, dtype=np.int64))

    def element_size(self) -> int:
        return self._data.dtype.itemsize

    def data_ptr(self) -> int:
        d = self._data
        return int(d.ctypes.data) if type(d) is np.ndarray else int(d.data.ptr)

    def is_contiguous(self) -> bool:
        return bool(self._data.flags.c_contiguous)

    def contiguous(self):
        if self._data.flags.c_contiguous:
            return self
        xp = backend.get_array_module(self._data)
        return _wrap(xp.ascontiguousarray(self._data), self.stop_gradient)

    def get_strides(self) -> list:
        return [s // self._data.itemsize for s in self._data.strides]

    def is_dense(self) -> bool:
        return True

    def _is_initialized(self) -> bool:
        """Whether the tensor holds its values (always, except a parameter built under
        ``LazyGuard`` whose ``initialize()`` is still pending)."""
        return True

    def is_dist(self) -> bool:
        return False

    def is_sparse(self) -> bool:
        return False

    # --- names Paddle's Tensor carries for static graphs and auto-parallel, in dygraph meaning
    @property
    def grad_fn(self):
        """The graph node that produced this tensor (None for a leaf)."""
        return self._node

    @property
    def grad_(self):
        """The gradient (None before backward); Paddle's other name for ``grad``."""
        return self._grad

    @property
    def layout(self) -> str:
        """Data layout; dense tensors are always ``'NCHW'`` (Paddle's default ``DataLayout``)."""
        return "NCHW"

    @property
    def offset(self) -> int:
        """Byte offset of this tensor's first element in the storage it shares with its base."""
        d = self._data
        base = d
        while getattr(base, "base", None) is not None and hasattr(base.base, "shape"):
            base = base.base
        if base is d:
            return 0
        if type(d) is np.ndarray:
            return int(d.__array_interface__["data"][0] - base.__array_interface__["data"][0])
        return int(d.data.ptr - base.data.ptr)

    @property
    def strides(self) -> list:
        """Strides in elements (Paddle's ``strides``); same as :meth:`get_strides`."""
        return self.get_strides()

    @property
    def block(self):
        """The global block of the default main program (where dygraph tensors live)."""
        from .program import default_main_program

        return default_main_program().global_block()

    # a dense single-process tensor has no distributed placement
    dist_attr = property(lambda self: None, doc="Distributed attribute: None (not distributed).")
    placements = property(lambda self: None, doc="Placements on a mesh: None (not distributed).")
    process_mesh = property(lambda self: None, doc="Process mesh: None (not distributed).")
    num_shard = property(lambda self: None, doc="Number of shards: None (not distributed).")

    is_sparse_coo = is_sparse_csr = is_selected_rows = is_sparse

    # ------------------------------------------------------------------ layouts
    # to_sparse_coo / to_sparse_csr are attached by the top-level namespace: the sparse layouts
    # live in paddle_hl.sparse, above Tensor, and load on first use.
    def to_dense(self):
        return self

    def _sparse_only(self, what):
        raise TypeError(f"Tensor.{what}() is defined for sparse tensors only; this tensor is "
                        "dense (convert it with to_sparse_coo / to_sparse_csr first)")

    def indices(self):
        self._sparse_only("indices")

    def values(self):
        self._sparse_only("values")

    def crows(self):
        self._sparse_only("crows")

    def cols(self):
        self._sparse_only("cols")

    def nnz(self):
        self._sparse_only("nnz")

    def coalesce(self, name=None):
        self._sparse_only("coalesce")

    def rows(self):
        raise TypeError("Tensor.rows(): this tensor is a dense tensor, not a SelectedRows tensor")

    def get_selected_rows(self):
        raise TypeError("Tensor.get_selected_rows(): this tensor is a dense tensor, not a "
                        "SelectedRows tensor")

    # String and vocabulary tensors (used by tokenizers): the payload is kept beside the tensor.
    def set_vocab(self, vocab):
        """Make this a vocabulary tensor holding ``vocab`` (a dict of str -> int)."""
        if not isinstance(vocab, dict):
            raise TypeError(f"Tensor.set_vocab: expected a dict, got {type(vocab).__name__}")
        _EXTRA[id(self)] = ("vocab", dict(vocab))
        weakref.finalize(self, _EXTRA.pop, id(self), None)

    def set_string_list(self, string_list):
        """Make this a string-list tensor holding ``string_list``."""
        if not isinstance(string_list, (list, tuple)) or not all(
                isinstance(s, str) for s in string_list):
            raise TypeError("Tensor.set_string_list: expected a list of str")
        _EXTRA[id(self)] = ("strings", list(string_list))
        weakref.finalize(self, _EXTRA.pop, id(self), None)

    def get_map_tensor(self):
        """The vocabulary set with ``set_vocab``."""
        kind, payload = _EXTRA.get(id(self), (None, None))
        if kind != "vocab":
            raise TypeError("Tensor.get_map_tensor(): this tensor holds no vocabulary; call "
                            "set_vocab first")
        return payload

    # ------------------------------------------------------------------ whole-tensor copies
    def copy_(self, other, blocking=True):
        """Copy ``other``'s values into this tensor (same shape; dtype converted)."""
        src = other._data if isinstance(other, Tensor) else np.asarray(other)
        if tuple(src.shape) != self._data.shape:
            raise ValueError(f"Tensor.copy_: source shape {list(src.shape)} does not match "
                             f"{self.shape}")
        xp = backend.get_array_module(self._data)
        writable(self)[...] = xp.asarray(src).astype(self._data.dtype, copy=False)
        self._ver.v += 1

    def reconstruct_from_(self, other):
        """Become a deep copy of ``other`` (data, shape and dtype), in place."""
        if not isinstance(other, Tensor):
            raise TypeError(f"Tensor.reconstruct_from_: expected a Tensor, got "
                            f"{type(other).__name__}")
        self._data = other._data.copy()
        self._ver.v += 1

    def create_tensor(dtype, name=None, persistable=False):  # noqa: N805  (Paddle's signature)
        """An empty tensor of ``dtype`` (shape [0])."""
        t = _wrap(np.zeros([0], dtype=_dt.to_np(dtype)))
        t._name = name
        t.persistable = bool(persistable)
        return t

    create_tensor = staticmethod(create_tensor)

    # ------------------------------------------------------------------ conversion
    def numpy(self) -> np.ndarray:
        """The values as a NumPy array that owns its memory, as in Paddle: writing to it leaves
        the tensor alone, and later in-place updates of the tensor (optimizer steps, gradient
        accumulation, running statistics) do not show up in it. 0-D tensors give 0-d arrays.

        Returns:
            numpy.ndarray: a copy of the data (a host copy for a GPU tensor).
        """
        a = self._data
        if type(a) is np.ndarray:
            return a.copy()
        return backend.to_numpy(a)

    def __array__(self, dtype=None, copy=None):
        a = backend.to_numpy(self._data)
        return a if dtype is None else a.astype(dtype, copy=False)

    def item(self, *args):
        """The value as a Python scalar; with indices, the element at that position."""
        a = backend.to_numpy(self._data)
        if args:
            return a.item(*args)
        if a.size != 1:
            raise ValueError(f"Tensor.item(): only one element tensors can be converted to Python "
                             f"scalars, got shape {list(a.shape)}")
        if a.dtype == _dt.BFLOAT16_NP:
            return float(a.astype(np.float32).item())
        return a.item()

    def tolist(self):
        a = backend.to_numpy(self._data)
        if a.dtype == _dt.BFLOAT16_NP:
            a = a.astype(np.float32)
        return a.tolist()

    def _one(self, what):
        if self._data.size != 1:
            raise TypeError(f"only one element tensors can be converted to Python {what}, "
                            f"got shape {self.shape}")
        return self.item()

    def __float__(self):
        return float(self._one("float"))

    def __int__(self):
        return int(self._one("int"))

    def __complex__(self):
        return complex(self._one("complex"))

    def __bool__(self):
        return bool(self._one("bool"))

    def __index__(self):
        if not self.dtype.is_integer:
            raise TypeError(f"only integer tensors can be used as an index, got {self.dtype}")
        return int(self._one("int"))

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-D tensor")
        return self._data.shape[0]

    def __dlpack__(self, stream=None, **kwargs):
        if stream is None:
            return self._data.__dlpack__(**kwargs)
        return self._data.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-D tensor")
        for i in range(self._data.shape[0]):
            yield self[i]

    def __hash__(self):
        return id(self)

    def __deepcopy__(self, memo):
        t = _wrap(self._data.copy(), self.stop_gradient)
        t._name = self._name
        t.persistable = self.persistable
        if self._grad is not None:
            t._grad = _wrap(self._grad._data.copy())
        memo[id(self)] = t
        return t

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self.numpy(), self.stop_gradient, self._name))

    def __repr__(self):
        from ._printing import tensor_repr

        return tensor_repr(self)

    __str__ = __repr__

    def _repr_html_(self):
        """Jupyter's rich view: the HTML a domain registered for this tensor with
        :func:`set_html_view` (an audio feature shows as a spectrogram image), else None, and
        Jupyter shows the text repr."""
        render = _HTML_VIEWS.get(id(self))
        return None if render is None else render(self)

    def __format__(self, spec):
        if self._data.ndim == 0 and spec:
            return format(self.item(), spec)
        return str(self)

    # ------------------------------------------------------------------ copies and devices
    def detach(self):
        """A new tensor sharing storage, cut from the graph (stop_gradient=True)."""
        t = _wrap(self._data)
        t._ver = self._ver
        return t

    def detach_(self):
        self._node = None
        self.stop_gradient = True
        return self

    def cpu(self):
        if type(self._data) is np.ndarray:
            return self
        return _same_grad(self, backend.to_numpy(self._data))

    def cuda(self, device_id=None, blocking=True):
        """A copy on GPU ``device_id``; without one, on the current device when that is a GPU
        (``set_device('gpu:1')`` makes it GPU 1), else on GPU 0, as in Paddle."""
        if device_id is None:
            place = _pl.current_place()
            if place.kind != "gpu":
                place = _pl.parse_place("gpu:0")
        else:
            place = _pl.parse_place(f"gpu:{device_id}")
        return _same_grad(self, _pl.move(self._data, place))

    def pin_memory(self):
        return self.cpu()

    def to(self, *args, **kwargs):
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(other_tensor)``."""
        device = kwargs.pop("device", None)
        dtype = kwargs.pop("dtype", None)
        kwargs.pop("blocking", None)
        if kwargs:
            raise TypeError(f"Tensor.to() got unexpected arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, Tensor):
                device, dtype = a.place, a.dtype
            elif isinstance(a, (_pl.Place,)) or (isinstance(a, str) and (
                    a in ("cpu",) or a.startswith(("gpu", "cuda")))):
                device = a
            elif a is not None and not isinstance(a, bool):
                dtype = a
        out = self
        if device is not None:
            place = _pl.parse_place(device)
            if place != self.place:
                out = _same_grad(out, _pl.move(out._data, place))
        if dtype is not None and _dt.to_np(dtype) != out._data.dtype:
            out = out.astype(dtype)
        return out

    def value(self):
        return self

    def get_tensor(self):
        return self

    def set_value(self, value):
        """Overwrite the contents in place (no graph), keeping shape and dtype."""
        arr = value._data if isinstance(value, Tensor) else np.asarray(value)
        if list(arr.shape) != self.shape:
            raise ValueError(f"Tensor.set_value: shape {list(arr.shape)} does not match the "
                             f"tensor's shape {self.shape}")
        xp = backend.get_array_module(self._data)
        writable(self)[...] = xp.asarray(arr).astype(self._data.dtype, copy=False)
        self._ver.v += 1
        return self

    # ------------------------------------------------------------------ autograd
    def backward(self, grad_tensor=None, retain_graph=False):
        """Compute gradients of this tensor w.r.t. the graph leaves, accumulating into ``.grad``."""
        _autograd["run_backward"]([self], [grad_tensor], retain_graph=retain_graph)

    def gradient(self):
        """The gradient as a NumPy array (None if there is none)."""
        return None if self._grad is None else self._grad.numpy()

    def clear_gradient(self, *args, **kwargs):
        """Reset ``.grad``: zero-filled by default, dropped (None) by ``clear_gradient(False)``.

        As in Paddle, ``set_to_zero`` is read only when passed positionally.
        """
        set_to_zero = bool(args[0]) if args else True
        if self._grad is None:
            return
        if set_to_zero:
            _zero_grad(self)
        else:
            self._grad = None

    def clear_grad(self, set_to_zero=True):
        """Reset ``.grad``: zero-filled when ``set_to_zero`` else None."""
        self.clear_gradient(set_to_zero)

    def retain_grads(self):
        """Keep ``.grad`` on this non-leaf tensor after backward."""
        if self._node is not None:
            self._node.retain(self._idx, self)
        self._retain = True
        return self

    def register_hook(self, hook):
        """Call ``hook(grad)`` when this tensor's gradient is computed; it may return a new one.

        Returns a handle whose ``remove()`` unregisters the hook.
        """
        if self.stop_gradient:
            raise RuntimeError("register_hook: cannot register a hook on a tensor with "
                               "stop_gradient=True")
        if not callable(hook):
            raise TypeError(f"register_hook: hook must be callable, got {type(hook).__name__}")
        if self._node is not None:
            return self._node.add_hook(self._idx, hook)
        if self._hooks is None:
            self._hooks = {}
        return _HookHandle(self._hooks, hook)

    def _register_grad_hook(self, hook):
        """Paddle's internal form of :meth:`register_hook`: returns the hook's id (an int) and
        accepts a tensor that does not need a gradient (the hook then never runs)."""
        if not callable(hook):
            raise TypeError("_register_grad_hook: hook must be callable, got "
                            f"{type(hook).__name__}")
        if self._node is not None:
            return self._node.add_hook(self._idx, hook).id
        if self._hooks is None:
            self._hooks = {}
        return _HookHandle(self._hooks, hook).id


class _HookHandle:
    """Removable handle returned by ``register_hook``."""

    _ids = itertools.count()

    def __init__(self, table: dict, hook):
        self._table = weakref.ref(table) if not isinstance(table, dict) else table
        self.id = next(self._ids)
        table[self.id] = hook

    def remove(self):
        self._table.pop(self.id, None)


def _rebuild(arr, stop_gradient, name):
    t = _wrap(np.array(arr), stop_gradient)
    t._name = name
    return t


def init_slots(t, arr, stop_gradient):
    """Set every slot of a fresh Tensor (or subclass instance) around array ``arr``."""
    t._data = arr
    t.stop_gradient = stop_gradient
    t._grad = None
    t._name = None
    t._node = None
    t._idx = 0
    t._ver = _Version()
    t._hooks = None
    t._retain = False
    t.persistable = False


def _wrap(arr, stop_gradient=True):
    """Fast internal constructor: wrap a backend array without copying or checks.

    It repeats init_slots inline on purpose: it runs once per op output, and the extra call
    would be a measurable part of the per-op budget (benchmarks/op_overhead.py).
    """
    t = Tensor.__new__(Tensor)
    t._data = arr
    t.stop_gradient = stop_gradient
    t._grad = None
    t._name = None
    t._node = None
    t._idx = 0
    t._ver = _Version()
    t._hooks = None
    t._retain = False
    t.persistable = False
    return t


# dtype -> the read-only 0-d zero that lazy zero gradients are broadcast views of
_ZERO = {}
# (shape, dtype) -> a lazy zero array of that shape
_LAZY = {}


def lazy_zeros(shape, dtype) -> np.ndarray:
    """A read-only array of zeros that takes no memory: a zero-stride view of one 0-d zero.

    ``clear_grad`` gives parameters such a gradient. Reading it (optimizers, norms, ``.numpy()``)
    sees zeros; the next backward replaces it with the new gradient instead of adding that to a
    buffer of zeros; code that writes into a tensor's buffer first calls :func:`writable`."""
    key = (shape, dtype)
    arr = _LAZY.get(key)
    if arr is None:
        dtype = np.dtype(dtype)
        z = _ZERO.get(dtype)
        if z is None:
            z = np.zeros((), dtype)
            z.flags.writeable = False
            _ZERO[dtype] = z
        arr = np.broadcast_to(z, shape)
        if len(_LAZY) < 4096:  # read-only: one array serves every gradient of its shape
            _LAZY[key] = arr
    return arr


def is_lazy_zero(arr) -> bool:
    """Whether ``arr`` is a :func:`lazy_zeros` array (or a view of one)."""
    return type(arr) is np.ndarray and arr.base is not None and arr.base is _ZERO.get(arr.dtype)


def writable(t: Tensor):
    """Make ``t``'s buffer writable before an in-place write: a read-only NumPy buffer (a lazy
    zero gradient, a broadcast view) is replaced by a writable copy of its values."""
    a = t._data
    if type(a) is np.ndarray and not a.flags.writeable:
        t._data = np.array(a)
    return t._data


def _grad_refs(t):
    """Reference counts of ``t``'s gradient tensor and of its buffer, as seen from here."""
    old = t._grad
    return sys.getrefcount(old), sys.getrefcount(old._data)


def _calibrate_grad_refs():
    probe = Tensor.__new__(Tensor)
    probe._grad = _wrap(np.zeros(2))
    return _grad_refs(probe)


def _held_elsewhere(t) -> bool:
    """Whether anything besides ``t`` holds its gradient tensor or that tensor's buffer (a
    variable of the user's, a view, a bucket): only then must ``clear_grad`` zero it in place."""
    return _grad_refs(t) != _GRAD_REFS


def _zero_grad(t: Tensor):
    """``clear_grad`` with ``set_to_zero``, with Paddle's aliasing: the gradient tensor handed
    out before is zero-filled, and the parameter gets a fresh zero gradient, so the next
    backward accumulates into a new tensor instead of into references the user kept.

    On the CPU the fresh gradient is a :func:`lazy_zeros` array: no allocation and no pass
    over the gradient's bytes, and the next backward stores its result instead of adding it
    to zeros."""
    if type(t._grad._data) is np.ndarray:
        # counted before this frame holds the gradient or its buffer itself
        held = _held_elsewhere(t)
        old = t._grad
        arr = old._data
        if held and arr.flags.writeable:
            arr[...] = 0
        t._grad = _wrap(lazy_zeros(arr.shape, arr.dtype), old.stop_gradient)
        return
    old = t._grad
    arr = old._data
    arr[...] = 0
    t._grad = _wrap(backend.get_array_module(arr).zeros_like(arr), old.stop_gradient)


def _same_grad(src: Tensor, arr):
    """A tensor on another device that stays in src's graph (copy between devices)."""
    if src.stop_gradient or not state.tls.grad_enabled:
        return _wrap(arr, src.stop_gradient)

    def _move(x):
        back = x

        def bw(g):
            return (_pl.move(g, _pl.place_of(back)),)

        return arr, bw

    return _autograd["apply"](_move, src)


_INT_BOUNDS: dict = {}
_I64 = 2**63


def _int_bounds(npd):
    b = _INT_BOUNDS.get(npd)
    if b is None:
        info = np.iinfo(npd)
        b = _INT_BOUNDS[npd] = (int(info.min), int(info.max))
    return b


def _out_of_range(where, value, npd):
    lo, hi = _int_bounds(npd)
    return ValueError(f"{where}: value {value!r} does not fit {_dt.from_np(npd)} (range "
                      f"[{lo}, {hi}]); casting would wrap it into another number. Give a wider "
                      "dtype or values within the range")


def check_fits(arr, npd, where):
    """Raise ValueError when casting the numbers in ``arr`` (a NumPy or CuPy array) to the
    integer dtype ``npd`` would not keep them: an integer outside the dtype's range, or a float
    whose integer part is outside it or that is NaN or infinite. NumPy's cast (and Paddle 2.6's,
    in ``to_tensor``, ``full`` and ``arange``) wraps such values silently into unrelated ones;
    here the error names the value and the dtype. Other target dtypes, and casts that cannot
    lose an integer, pass without looking at the values."""
    npd = np.dtype(npd)
    k = arr.dtype.kind
    if npd.kind not in "iu" or arr.size == 0 or k not in "iuf" or (
            k != "f" and np.can_cast(arr.dtype, npd)):
        return
    for v in (arr.min().item(), arr.max().item()):
        check_value_fits(v, npd, where)


def check_value_fits(value, npd, where):
    """:func:`check_fits` for one Python number (an int of any size, or a float)."""
    npd = np.dtype(npd)
    if npd.kind not in "iu" or isinstance(value, bool):
        return
    if isinstance(value, numbers.Integral):
        v = int(value)
    elif isinstance(value, numbers.Real):
        if not np.isfinite(value):
            raise _out_of_range(where, value, npd)
        v = int(value)  # truncates toward zero, as the cast does
    else:
        return
    lo, hi = _int_bounds(npd)
    if not lo <= v <= hi:
        raise _out_of_range(where, value, npd)


def to_array(data, dtype=None, place=None, where="to_tensor"):
    """Convert Python data, NumPy arrays or Tensors into a backend array (always a fresh copy).
    Integers that the integer dtype asked for cannot hold raise ValueError (see
    :func:`check_fits`)."""
    npd = None if dtype is None else _dt.to_np(dtype)
    plc = _pl.parse_place(place) if place is not None else _pl.current_place()
    if isinstance(data, Tensor):
        arr = data._data
        if npd is not None and arr.dtype != npd:
            check_fits(arr, npd, where)
            arr = arr.astype(npd)
        else:
            arr = arr.copy()
        return _pl.move(arr, plc) if plc != _pl.place_of(arr) else arr
    if backend.is_gpu_array(data):
        if npd is not None:
            check_fits(data, npd, where)
        arr = data.astype(npd) if npd is not None else data.copy()
        return _pl.move(arr, plc)
    if isinstance(data, np.ndarray | np.generic):
        if npd is None and data.dtype not in _dt._BY_NP:
            npd = _infer_np(data.dtype, where)
        if npd is not None:
            check_fits(np.asarray(data), npd, where)
        arr = np.array(data, dtype=npd, copy=True)
    else:
        arr = _from_python(data, npd, where)
    if plc.kind == "gpu":
        arr = _pl.move(arr, plc)
    return arr


def _infer_np(npd, where):
    if npd.kind == "U" or npd.kind == "S" or npd.kind == "O":
        raise TypeError(f"{where}: cannot build a tensor from data of dtype {npd} "
                        "(expected numbers, bools or nested lists of them)")
    if npd == np.uint16:
        return np.dtype(np.int32)
    if npd.kind == "u":
        return np.dtype(np.int64)
    if npd == np.float128 if hasattr(np, "float128") else False:
        return np.dtype(np.float64)
    raise TypeError(f"{where}: dtype {npd} is not supported")


def _from_python(data, npd, where):
    if isinstance(data, bool):
        return np.array(data, dtype=npd or np.bool_)
    if isinstance(data, int):
        if npd is not None or not -_I64 <= data < _I64:  # skip the common case's checks
            check_value_fits(data, npd or np.int64, where)
        return np.array(data, dtype=npd or np.int64)
    if isinstance(data, float):
        if npd is not None:
            check_value_fits(data, npd, where)
        return np.array(data, dtype=npd or _dt.default_np())
    if isinstance(data, complex):
        return np.array(data, dtype=npd or _complex_default())
    if isinstance(data, (list, tuple)):
        if any(isinstance(e, Tensor) for e in data):
            data = [e.numpy() if isinstance(e, Tensor) else e for e in data]
        try:
            arr = np.array(data)
        except ValueError as e:
            raise ValueError(f"{where}: cannot build a tensor from a ragged nested sequence "
                             f"({e})") from None
        if arr.dtype == object and arr.size and all(type(v) is int for v in arr.flat):
            # ints beyond 64 bits, which NumPy keeps as Python objects
            for v in arr.flat:
                check_value_fits(v, npd if npd is not None else np.int64, where)
        if npd is not None:
            check_fits(arr, npd, where)
            return arr.astype(npd, copy=False)
        k = arr.dtype.kind
        if k == "f":
            arr = arr.astype(_dt.default_np())  # as Paddle: even lists of np.float64 scalars
        elif k == "c":
            arr = arr.astype(_complex_default())
        elif k in "iu":
            if arr.dtype not in _dt._BY_NP or k == "u" and arr.dtype != np.uint8:
                check_fits(arr, np.int64, where)  # uint64: Python ints of 2**63 and above
                arr = arr.astype(np.int64)
            elif not _has_np_scalar(data):
                arr = arr.astype(np.int64)
        elif k not in "b" and arr.dtype not in _dt._BY_NP:
            if arr.size == 0:
                return arr.astype(_dt.default_np())
            raise TypeError(f"{where}: cannot build a tensor from elements of type "
                            f"{type(_first(data)).__name__}")
        return arr
    try:
        arr = np.asarray(data)
    except Exception:
        arr = None
    if arr is None or arr.dtype.kind in "OUS":
        raise TypeError(f"{where}: cannot build a tensor from {type(data).__name__}; expected a "
                        "number, bool, list, tuple, numpy.ndarray or Tensor")
    if npd is not None:
        check_fits(arr, npd, where)
    return arr.astype(npd) if npd is not None else arr.copy()


def _first(data):
    while isinstance(data, (list, tuple)) and data:
        data = data[0]
    return data


def _has_np_scalar(data):
    e = _first(data)
    return isinstance(e, np.ndarray | np.generic)


def _complex_default():
    return np.complex128 if _dt.default_np() == np.float64 else np.complex64


# the counts of a gradient that only its tensor holds (Python versions count differently)
_GRAD_REFS = _calibrate_grad_refs()
