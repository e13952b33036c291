"""DLPack interchange (``paddle.utils.dlpack``): zero-copy hand-off to and from other libraries.

``to_dlpack`` returns the PyCapsule that NumPy (CPU) or CuPy (GPU) exports; the capsule keeps a
reference to the tensor's memory, so it stays valid however long the capsule lives.
``from_dlpack`` takes such a capsule, or any object with ``__dlpack__`` (a NumPy or CuPy array,
a PyTorch tensor, ...), and wraps the memory without copying.
"""

from __future__ import annotations

import ctypes

import numpy as np

from .. import backend
from ..framework import dtype as _dt
from ..framework.tensor import Tensor, _wrap, to_array

__all__ = ["to_dlpack", "from_dlpack"]

_CPU, _CUDA, _CUDA_HOST = 1, 2, 3


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLTensorHead(ctypes.Structure):
    # the first two fields of DLTensor: enough to learn where the memory lives
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice)]


# DLManagedTensorVersioned: version (2 x uint32), manager_ctx, deleter, flags, then DLTensor
_VERSIONED_OFFSET = 8 + 8 + 8 + 8

_api = ctypes.pythonapi
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _is_capsule(obj) -> bool:
    return type(obj).__name__ == "PyCapsule"


def _capsule_device(capsule):
    """(device_type, device_id) of an unconsumed DLPack capsule."""
    for name, offset in ((b"dltensor", 0), (b"dltensor_versioned", _VERSIONED_OFFSET)):
        if _api.PyCapsule_IsValid(capsule, name):
            ptr = _api.PyCapsule_GetPointer(capsule, name)
            dev = _DLTensorHead.from_address(ptr + offset).device
            return int(dev.device_type), int(dev.device_id), name
    if _api.PyCapsule_IsValid(capsule, b"used_dltensor") or _api.PyCapsule_IsValid(
            capsule, b"used_dltensor_versioned"):
        raise ValueError("from_dlpack: this DLPack capsule was already consumed; a capsule can "
                         "be imported only once (call to_dlpack again for another import)")
    raise TypeError("from_dlpack: the PyCapsule is not a DLPack tensor capsule")


class _CapsuleSource:
    """Presents a bare capsule through the ``__dlpack__`` protocol numpy.from_dlpack expects."""

    def __init__(self, capsule, device):
        self._capsule = capsule
        self._device = device

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        return self._capsule

    def __dlpack_device__(self):
        return self._device


def _writeable(arr):
    """A writeable view of a read-only host array imported from DLPack (same memory).

    NumPy marks arrays from unversioned capsules read-only, since the old protocol cannot say
    whether writing is allowed; Paddle's imported tensors are writeable, so the memory is
    re-wrapped through a ctypes buffer that keeps the imported array (and its capsule) alive.
    """
    if arr.flags.writeable or arr.size == 0:
        return arr if arr.flags.writeable else arr.copy()
    low = sum((n - 1) * st for n, st in zip(arr.shape, arr.strides) if st < 0)
    high = sum((n - 1) * st for n, st in zip(arr.shape, arr.strides) if st > 0) + arr.itemsize
    buf = (ctypes.c_char * (high - low)).from_address(arr.ctypes.data + low)
    buf._owner = arr  # the buffer keeps the imported memory alive
    return np.ndarray(arr.shape, arr.dtype, buffer=buf, offset=-low, strides=arr.strides)


def to_dlpack(x):
    """Export a Tensor as a DLPack capsule (no copy).

    Args:
        x (Tensor): The tensor to export (any dtype except bfloat16 on the CPU, which NumPy's
            DLPack export does not support).

    Returns:
        PyCapsule: A "dltensor" capsule, consumable once by any DLPack importer.

    Examples:
        >>> import paddle_hl as paddle
        >>> x = paddle.to_tensor([1.0, 2.0])
        >>> y = paddle.utils.dlpack.from_dlpack(paddle.utils.dlpack.to_dlpack(x))
        >>> y.numpy()
        array([1., 2.], dtype=float32)
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"The type of 'x' in to_dlpack must be paddle.Tensor, but received "
                        f"{type(x)}.")
    arr = x._data
    try:
        return backend.for_array(arr).to_dlpack(arr)
    except BufferError as e:
        raise TypeError(f"to_dlpack: a tensor of dtype {x.dtype} cannot be exported through "
                        f"DLPack ({e})") from None


def _cuda_import(source):
    if not backend.gpu_available():
        raise RuntimeError(f"from_dlpack: the DLPack tensor lives on a CUDA device, but "
                           f"{backend.gpu_error()}")
    return backend.gpu_backend().from_dlpack(source)


def from_dlpack(dlpack):
    """Wrap a DLPack capsule, or an object with ``__dlpack__``, as a Tensor sharing its memory.

    Args:
        dlpack (PyCapsule|object): A capsule from :func:`to_dlpack` (or any library's
            ``to_dlpack``), or an array/tensor implementing ``__dlpack__`` and
            ``__dlpack_device__``.

    Returns:
        Tensor: A tensor on the CPU (host memory) or on the GPU (CUDA memory, needs CuPy).
    """
    if isinstance(dlpack, Tensor):
        dlpack = to_dlpack(dlpack)
    if _is_capsule(dlpack):
        dev_type, dev_id, _ = _capsule_device(dlpack)
        if dev_type == _CUDA:
            arr = _cuda_import(dlpack)
        elif dev_type in (_CPU, _CUDA_HOST):
            arr = _writeable(np.from_dlpack(_CapsuleSource(dlpack, (dev_type, dev_id))))
        else:
            raise ValueError(f"from_dlpack: unsupported DLPack device type {dev_type} "
                             "(paddle_hl handles CPU and CUDA memory)")
    elif hasattr(dlpack, "__dlpack__"):
        dev_type = dlpack.__dlpack_device__()[0] if hasattr(dlpack, "__dlpack_device__") else _CPU
        if dev_type == _CUDA:
            arr = _cuda_import(dlpack)
        elif dev_type in (_CPU, _CUDA_HOST):
            arr = _writeable(np.from_dlpack(dlpack))
        else:
            raise ValueError(f"from_dlpack: unsupported DLPack device type {dev_type} "
                             "(paddle_hl handles CPU and CUDA memory)")
    else:
        raise TypeError(f"The type of 'dlpack' in from_dlpack must be PyCapsule object or an "
                        f"object with __dlpack__, but received {type(dlpack)}.")
    if arr.dtype not in _dt._BY_NP:
        # e.g. uint32: paddle_hl has no such dtype, so it gets Paddle's nearest one (a copy)
        return _wrap(to_array(backend.to_numpy(arr), where="from_dlpack"))
    return _wrap(arr)
