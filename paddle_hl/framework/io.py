"""``paddle.save`` / ``paddle.load``: Paddle 2.6's pickle format, written atomically, read safely.

What Paddle 2.6 writes (and so what this module writes, byte for byte in structure):

- a *state dict* (a dict whose values are Tensors, or dicts holding no Tensor) becomes a plain
  dict of NumPy arrays plus the key ``"StructuredToParameterName@@"`` mapping each key to the
  tensor's name;
- any other object is pickled with every Tensor replaced by the tuple ``(tensor.name, ndarray)``;
- bfloat16 tensors are stored as ``uint16`` arrays (and every ``uint16`` array loads as
  bfloat16, as in Paddle).

:func:`load` uses a restricted unpickler that can only rebuild NumPy arrays, dtypes and scalars,
Python's builtin containers and ``OrderedDict``; any other class in a file is refused by name,
so loading a file never runs code from it. A file cut short is named with the byte its pickle
stops at.

What every loader of the library reads, and what it refuses:

- ``paddle.load`` (``.pdparams``, ``.pdopt``, any ``paddle.save`` file) and ``Model.load``
  (which reads its files through ``paddle.load``): the restricted unpickler above.
- ``jit.load``: the ``.pdmodel`` pickle rebuilds plain data only (its own allow-list), and the
  kernels the program calls are names looked up in a registry of the kernels paddle_hl declares
  with its op decorator, checked before anything runs (``paddle_hl.jit._program``); the
  ``.pdiparams`` file is raw tensor bytes; ``.pdiparams.info`` is a pickle of plain values
  (no global at all).
- ``onnx.export`` reads no file: its inputs are the layer and the input specs.
- Archives (downloads, hub caches, dataset archives): members that would land outside the
  target folder (``..``, absolute paths, links pointing outside, device files) refuse the whole
  archive before anything is written (``paddle_hl.utils.download``); the datasets that read
  members straight from their archive write nothing, and CIFAR's pickled batches go through a
  restricted unpickler.
- ``hub.load`` runs the repository's ``hubconf.py``: Python code, by design, as in Paddle
  (trust is asked for as Paddle does).
- numba's cache of the compiled kernels: pickles numba writes beside the package's bytecode
  (or in ``NUMBA_CACHE_DIR``), with the trust of the package's own ``__pycache__``; corrupt
  entries are removed and compiled again (``paddle_hl.backend._numba``).

``paddle.save``, ``jit.save`` and ``onnx.export`` write through :func:`write_files`: a
temporary name in the same folder, then a rename.
"""

from __future__ import annotations

import _compat_pickle
import collections
import contextlib
import importlib
import io
import os
import pickle
import tempfile
import warnings

import numpy as np

from .. import backend
from . import dtype as _dt
from .parameter import Parameter as EagerParamBase  # noqa: F401  (Paddle's name in this module)
from .tensor import Tensor, _wrap, to_array

__all__ = []

_NAME_TABLE = "StructuredToParameterName@@"
_SAVE_CONFIGS = ("use_binary_format",)
_LOAD_CONFIGS = ("model_filename", "params_filename", "keep_name_table", "return_numpy")
_LEAF_TYPES = (type(None), bool, int, float, complex, str, bytes, bytearray, np.generic,
               np.dtype, range, slice)

# (module, name) pairs the loader may rebuild; numpy 1.x files name ``numpy.core``
_ALLOWED = {
    ("builtins", n) for n in ("tuple", "list", "dict", "set", "frozenset", "complex",
                              "bytearray", "bytes", "slice", "range", "str", "int", "float",
                              "bool")
} | {
    ("collections", "OrderedDict"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "scalar"),
    ("numpy._core.numeric", "_frombuffer"),
    ("_codecs", "encode"),  # protocol 2 stores bytes as _codecs.encode(str, 'latin1')
}


# ---------------------------------------------------------------------------- save
def _array_of(t: Tensor) -> np.ndarray:
    """The tensor's logical values as a host array (strided views are made contiguous)."""
    arr = backend.to_numpy(t._data)
    if not arr.flags.c_contiguous:  # np.ascontiguousarray would turn 0-D into 1-D
        arr = arr.copy(order="C")
    if arr.dtype == _dt.BFLOAT16_NP:
        arr = arr.view(np.uint16)
    return arr


def _is_layer(obj) -> bool:
    return any(c.__name__ == "Layer" and c.__module__.startswith("paddle_hl.nn")
               for c in type(obj).__mro__)


def _contains_tensor(obj) -> bool:
    if isinstance(obj, Tensor):
        return True
    if isinstance(obj, dict):
        return any(_contains_tensor(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return any(_contains_tensor(v) for v in obj)
    return False


def _is_state_dict(obj) -> bool:
    """Paddle's rule: a dict whose values are Tensors, or dicts that hold no Tensor."""
    if not isinstance(obj, dict):
        return False
    for v in obj.values():
        if isinstance(v, dict):
            if _contains_tensor(v):
                return False
        elif not isinstance(v, Tensor):
            return False
    return True


def _check_leaf(obj, where):
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind == "O":
            raise TypeError(f"paddle.save: cannot save a numpy array of dtype object at {where}; "
                            "paddle.load only rebuilds arrays of numbers, bools and strings")
        return obj.view(np.uint16) if obj.dtype == _dt.BFLOAT16_NP else obj
    if isinstance(obj, _LEAF_TYPES):
        return obj
    if isinstance(obj, (set, frozenset)):
        for v in obj:
            _check_leaf(v, where)
        return obj
    raise TypeError(
        f"paddle.save: cannot save an object of type {type(obj).__module__}."
        f"{type(obj).__qualname__} at {where}; paddle.save writes Tensors, numpy arrays, "
        "numbers, strings and nested list/tuple/dict of them (save a Layer's or an "
        "optimizer's state_dict() instead of the object)")


class _TensorRecord:
    """Pickles as Paddle pickles a Tensor: ``tuple(((name, ndarray),))``, i.e. the pair."""

    __slots__ = ("name", "array")

    def __init__(self, t: Tensor):
        self.name = t.name
        self.array = _array_of(t)

    def __reduce__(self):
        return (tuple, ((self.name, self.array),))


def _pack(obj, where="obj", seen=None):
    """Replace every Tensor by Paddle's ``(name, ndarray)`` record, checking what is saved."""
    seen = {} if seen is None else seen
    if isinstance(obj, Tensor):
        # one record per tensor, so a tensor saved twice is pickled once (memoised), as Paddle
        rec = seen.get(id(obj))
        if rec is None:
            rec = seen[id(obj)] = _TensorRecord(obj)
        return rec
    if isinstance(obj, dict):
        out = collections.OrderedDict() if isinstance(obj, collections.OrderedDict) else {}
        for k, v in obj.items():
            _check_leaf(k, f"{where} (a key)")
            out[k] = _pack(v, f"{where}[{k!r}]", seen)
        return out
    if isinstance(obj, list):
        return [_pack(v, f"{where}[{i}]", seen) for i, v in enumerate(obj)]
    if isinstance(obj, tuple):
        if type(obj) is not tuple:  # a namedtuple's class could not be rebuilt by load
            raise TypeError(f"paddle.save: cannot save a {type(obj).__qualname__} (a tuple "
                            f"subclass) at {where}; convert it to a plain tuple or dict")
        return tuple(_pack(v, f"{where}[{i}]", seen) for i, v in enumerate(obj))
    if _is_layer(obj):
        raise ValueError("paddle do not support saving `paddle.nn.Layer` object. Save "
                         "layer.state_dict() instead.")
    return _check_leaf(obj, where)


def _build_saved(obj):
    if _is_state_dict(obj):
        if not obj:
            warnings.warn("The input state dict is empty, no need to save.", stacklevel=3)
        saved = {}
        names = {}
        for k, v in obj.items():
            _check_leaf(k, "state_dict (a key)")
            if isinstance(v, Tensor):
                saved[k] = _array_of(v)
                names[k] = v.name
            else:
                saved[k] = _pack(v, f"state_dict[{k!r}]")
        saved[_NAME_TABLE] = names
        return saved
    return _pack(obj)


def _check_configs(configs, allowed, op):
    for k in configs:
        if k not in allowed:
            raise ValueError(f"The additional config ({k}) of `paddle.{op}` is not supported.")


_umask = []


def _file_mode():
    """Permissions a normally created file gets (mkstemp would leave it 0600)."""
    if not _umask:
        mask = os.umask(0)
        os.umask(mask)
        _umask.append(mask)
    return 0o666 & ~_umask[0]


def write_files(writers: dict) -> None:
    """Write several files as one: each to a temporary name beside it, then renamed into place.

    The one atomic writer of the library (``paddle.save``, ``jit.save``, ``onnx.export``, hub
    and download caches): every file is written in full to ``.<name>.<random>.tmp`` in its own
    folder and flushed to disk; only when all of them are written are they renamed over their
    final names (``os.replace``, atomic on one file system). A failure while writing (a full
    disk, an exception in a writer, an interrupt) leaves every previous file untouched and
    removes the temporaries.

    Args:
        writers (dict): final path -> ``write(f)`` callable writing the content to the binary
            file object ``f``. Renamed in the dict's order.
    """
    staged = []
    try:
        for path, write in writers.items():
            path = os.fspath(path)
            directory = os.path.dirname(os.path.abspath(path))
            os.makedirs(directory, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                                       dir=directory)
            staged.append((tmp, path))
            with os.fdopen(fd, "wb") as f:
                write(f)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, _file_mode())
        for tmp, path in staged:
            os.replace(tmp, path)
    finally:
        for tmp, _ in staged:
            if os.path.lexists(tmp):
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


def write_file(path, write) -> None:
    """Write one file atomically through :func:`write_files`: ``write(f)`` fills it."""
    write_files({path: write})


def _write_atomic(path: str, saved, protocol: int):
    """Pickle into a temporary file next to ``path``, then rename it over ``path``."""
    write_file(path, lambda f: pickle.dump(saved, f, protocol=protocol))


def save(obj, path, protocol=4, **configs):
    """Save a Tensor, a state_dict or a nested list/tuple/dict of them to ``path``.

    The file is Paddle 2.6's pickle format, so real ``paddle.load`` reads it and files written
    by real ``paddle.save`` load here. ``path`` is written exactly as given (no suffix added,
    parent directories created) through a temporary file and a rename, so an interrupted save
    never leaves a half-written file. ``path`` may also be a ``BytesIO``.

    Args:
        obj (object): A Tensor, a state_dict (``layer.state_dict()``,
            ``optimizer.state_dict()``), or nested list/tuple/dict of Tensors, numpy arrays,
            numbers and strings.
        path (str|os.PathLike|BytesIO): The file to write, or a binary buffer.
        protocol (int, optional): Pickle protocol, 2, 3 or 4. Default: 4.
        **configs: ``use_binary_format`` (only False: Paddle's static LoDTensor format is not
            written by paddle_hl).

    Returns:
        None

    Examples:
        >>> import paddle_hl as paddle
        >>> paddle.save({"w": paddle.ones([2])}, "/tmp/paddle_hl_doc/w.pdparams")
        >>> paddle.load("/tmp/paddle_hl_doc/w.pdparams")["w"].shape
        [2]
    """
    _check_configs(configs, _SAVE_CONFIGS, "save")
    if configs.get("use_binary_format"):
        raise ValueError("paddle.save: use_binary_format=True (Paddle's static LoDTensor file "
                         "format) is not supported by paddle_hl; save with the default pickle "
                         "format")
    if not isinstance(protocol, int) or isinstance(protocol, bool):
        raise ValueError(f"The 'protocol' MUST be `int`, but received {type(protocol)}")
    if not 1 < protocol < 5:
        raise ValueError(f"Expected 1<'protocol'<5, but received protocol={protocol}")
    if _is_layer(obj):
        raise ValueError("paddle do not support saving `paddle.nn.Layer` object. Save "
                         "layer.state_dict() instead.")
    if hasattr(path, "write") and not isinstance(path, (str, os.PathLike)):
        saved = _build_saved(obj)
        pickle.dump(saved, path, protocol=protocol)
        return
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"only supports saving objects to file and `BytesIO`, but got "
                         f"{type(path)}")
    path = os.fspath(path)
    if os.path.basename(path) == "":
        raise ValueError("The input path MUST be format of dirname/filename [dirname\\filename "
                         f"in Windows system], but received filename is empty string: {path!r}")
    if os.path.isdir(path):
        raise IsADirectoryError(f"paddle.save: {path!r} is a directory; pass a file path such "
                                "as 'dir/model.pdparams'")
    saved = _build_saved(obj)
    _write_atomic(path, saved, protocol)


# ---------------------------------------------------------------------------- load
class _Refused(pickle.UnpicklingError):
    """A file names a class the safe loader does not rebuild."""


class _SafeUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        # protocol 2 writes Python 2 names (__builtin__, copy_reg, ...); map them back
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        if module.startswith("numpy.core"):  # files written under numpy 1.x
            module = "numpy._core" + module[len("numpy.core"):]
        if (module, name) not in _ALLOWED:
            raise _Refused(
                f"paddle.load: refusing to load '{module}.{name}': the file contains an object "
                "of a class paddle.load does not rebuild (it only rebuilds numpy arrays, Python "
                "containers, numbers and strings, so that loading never runs code from a file)")
        return getattr(importlib.import_module(module), name)


def _to_tensor(arr: np.ndarray, name=None):
    if arr.dtype == np.uint16:  # Paddle stores bfloat16 as uint16
        arr = arr.view(_dt.BFLOAT16_NP)
    elif arr.dtype.kind in "OUSV":
        return arr
    t = _wrap(to_array(arr, where="paddle.load"))
    if name is not None:
        t._name = name
    return t


def _is_tensor_tuple(obj) -> bool:
    return (type(obj) is tuple and len(obj) == 2 and isinstance(obj[0], str)
            and isinstance(obj[1], np.ndarray))


def _contains_tensor_tuple(obj) -> bool:
    if _is_tensor_tuple(obj):
        return True
    if isinstance(obj, dict):
        return any(_contains_tensor_tuple(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return any(_contains_tensor_tuple(v) for v in obj)
    return False


def _map(obj, fn):
    """Rebuild nested list/tuple/dict with ``fn`` applied to every other value."""
    if isinstance(obj, dict):
        out = type(obj)() if isinstance(obj, collections.OrderedDict) else {}
        for k, v in obj.items():
            out[k] = _map(v, fn)
        return out
    if isinstance(obj, list):
        return [_map(v, fn) for v in obj]
    if type(obj) is tuple and not _is_tensor_tuple(obj):
        return tuple(_map(v, fn) for v in obj)
    return fn(obj)


def _unpack(obj, keep_name_table, return_numpy):
    if isinstance(obj, dict) and _NAME_TABLE in obj:
        names = obj[_NAME_TABLE] if isinstance(obj[_NAME_TABLE], dict) else {}
        out = {}
        for k, v in obj.items():
            if k == _NAME_TABLE:
                if keep_name_table:
                    out[k] = v
            elif isinstance(v, np.ndarray) and not return_numpy:
                out[k] = _to_tensor(v, names.get(k))
            else:
                out[k] = v
        return out
    if _contains_tensor_tuple(obj):
        def from_tuple(v):
            if not _is_tensor_tuple(v):
                return v
            return v[1] if return_numpy else _to_tensor(v[1], v[0])

        return _map(obj, from_tuple)
    if return_numpy:
        return obj
    return _map(obj, lambda v: _to_tensor(v) if isinstance(v, np.ndarray) else v)


def truncation(data: bytes):
    """``(stop, expected)`` when the pickle stream ``data`` ends before its STOP opcode: the
    byte where it stops and the least size its frames announce (None when they announce
    none); None when the stream is complete. Reads the opcodes only, runs nothing."""
    import pickletools

    if data and data[:1] != pickle.PROTO:
        return None  # every file paddle.save writes starts with its protocol: not a pickle
    frame_end = None
    try:
        for op, arg, pos in pickletools.genops(data):
            if op.name == "FRAME":
                frame_end = pos + 9 + arg
            elif op.name == "STOP":
                return None
    except ValueError as e:
        # pickletools' words for running out of data (an unknown opcode is garbage instead)
        if not any(w in str(e) for w in ("exhausted", "not enough data", "remain")):
            return None
    expected = frame_end if frame_end is not None and frame_end > len(data) else None
    return len(data), expected


def truncated_message(data: bytes):
    """How the pickle ``data`` is truncated ("truncated at byte N of at least M: ..."), or
    None when it is not."""
    cut = truncation(data)
    if cut is None:
        return None
    stop, expected = cut
    of = f" of at least {expected}" if expected is not None else ""
    return (f"truncated at byte {stop}{of}: the pickle stream ends before its end marker (an "
            "interrupted copy or download, or a full disk when it was written)")


def _unpickle(f, where):
    try:
        return _SafeUnpickler(f).load()
    except _Refused:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError,
            IndexError, KeyError, UnicodeDecodeError) as e:
        msg = None
        if hasattr(f, "seek"):
            with contextlib.suppress(OSError, ValueError):
                f.seek(0)
                msg = truncated_message(f.read())
        if msg is not None:
            raise ValueError(f"paddle.load: {where} is not a file written by paddle.save in "
                             f"full: it is {msg}") from None
        raise ValueError(f"paddle.load: {where} is not a file written by paddle.save "
                         f"({type(e).__name__}: {e})") from None


def load(path, **configs):
    """Load an object saved by :func:`save` (or by real Paddle's ``paddle.save``).

    Tensors come back as Tensors (on the current device, with their saved names); with
    ``return_numpy=True`` they come back as numpy arrays. A state_dict's name table is dropped
    unless ``keep_name_table=True``. Only numpy arrays, Python containers, numbers and strings
    are rebuilt: a file naming any other class is refused with an error naming it.

    Args:
        path (str|os.PathLike|BytesIO): The file written by ``paddle.save``, or a buffer.
        **configs: ``return_numpy`` (bool), ``keep_name_table`` (bool); ``model_filename`` and
            ``params_filename`` are accepted for compatibility and unused.

    Returns:
        object: The saved object.

    Examples:
        >>> import paddle_hl as paddle
        >>> paddle.save(paddle.to_tensor([1.0, 2.0]), "/tmp/paddle_hl_doc/t.pdtensor")
        >>> paddle.load("/tmp/paddle_hl_doc/t.pdtensor").numpy()
        array([1., 2.], dtype=float32)
    """
    _check_configs(configs, _LOAD_CONFIGS, "load")
    keep = bool(configs.get("keep_name_table", False))
    return_numpy = bool(configs.get("return_numpy", False))
    if hasattr(path, "read") and not isinstance(path, (str, os.PathLike)):
        if isinstance(path, io.TextIOBase):
            raise ValueError("paddle.load: the buffer must be binary (io.BytesIO or a file "
                             "opened with 'rb')")
        obj = _unpickle(path, "the buffer")
        return _unpack(obj, keep, return_numpy)
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"paddle.load: path must be a str, os.PathLike or BytesIO, got "
                         f"{type(path)}")
    path = os.fspath(path)
    if path == "" or not os.path.exists(path):
        raise ValueError(f"The ``path`` ({path}) to load model not exists.")
    if os.path.isdir(path):
        raise ValueError(f"paddle.load: {path!r} is a directory; paddle_hl loads the single "
                         "files written by paddle.save (Paddle's static-graph model "
                         "directories are not supported)")
    with open(path, "rb") as f:
        obj = _unpickle(f, repr(path))
    return _unpack(obj, keep, return_numpy)
