"""``paddle.device.cuda``: GPU queries and memory statistics, from the GPU backend.

Without CuPy or a GPU, ``device_count()`` is 0, ``empty_cache()`` does nothing, and the other
functions raise as Paddle does when it is not compiled with CUDA.
"""

from __future__ import annotations

from .. import backend
from ._ids import _device_id
from ._streams import Event, Stream, current_stream, stream_guard  # noqa: F401

__all__ = ["device_count", "synchronize", "empty_cache", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "max_memory_reserved", "get_device_name",
           "get_device_capability", "get_device_properties"]

# The GPU backend's memory pool reports current usage only; peaks are tracked at each query and at
# synchronize() so max_* never goes below any value seen.
_peak_allocated: dict = {}
_peak_reserved: dict = {}


def _no_cuda(api: str):
    return ValueError(f"The API paddle.device.cuda.{api} is not supported in CPU-only "
                      "paddle_hl (CuPy with a CUDA GPU is needed). Install CuPy for your CUDA "
                      "version to call this API.")


def _gpu(api: str, error=None):
    """The GPU backend module, or the error Paddle raises when it is not compiled with CUDA."""
    if not backend.gpu_available():
        raise error if error is not None else _no_cuda(api)
    return backend.gpu_backend()


def device_count() -> int:
    """Number of visible CUDA GPUs (0 without CuPy or a GPU).

    Returns:
        int: The GPU count.
    """
    return backend.device_count()


def synchronize(device=None) -> None:
    """Block until every kernel queued on the GPU has finished.

    Args:
        device (CUDAPlace|int|str, optional): The GPU. Default: the current one.

    Returns:
        None
    """
    gpu = _gpu("synchronize", RuntimeError(
        "paddle_hl is not running with CUDA (CuPy with a GPU is needed). Cannot visit device "
        "synchronize."))
    idx = _device_id(device, "synchronize")
    gpu.synchronize(idx)
    _observe(idx, gpu)


def empty_cache() -> None:
    """Return the cached, unused blocks of the GPU backend's memory pools to the driver.

    Returns:
        None
    """
    if backend.gpu_available():
        backend.gpu_backend().empty_cache()


def _observe(idx, gpu):
    used, total = gpu.memory_stats(idx)
    _peak_allocated[idx] = max(_peak_allocated.get(idx, 0), used)
    _peak_reserved[idx] = max(_peak_reserved.get(idx, 0), total)
    return used, total


def _pool_stat(device, op, which, peaks=None):
    """Bytes in use (which=0) or held (which=1) by the device's pool now, or, given the
    matching ``peaks`` dict, the peak observed so far (this query included)."""
    gpu = _gpu(op)
    idx = _device_id(device, op)
    now = _observe(idx, gpu)[which]
    return now if peaks is None else peaks[idx]


def memory_allocated(device=None) -> int:
    """Bytes of GPU memory currently held by tensors (the GPU pool's bytes in use).

    Args:
        device (CUDAPlace|int|str, optional): The GPU. Default: the current one.

    Returns:
        int: Bytes.
    """
    return _pool_stat(device, "memory_allocated", 0)


def max_memory_allocated(device=None) -> int:
    """Peak of :func:`memory_allocated` as observed by paddle_hl's queries.

    Args:
        device (CUDAPlace|int|str, optional): The GPU. Default: the current one.

    Returns:
        int: Bytes.
    """
    return _pool_stat(device, "max_memory_allocated", 0, _peak_allocated)


def memory_reserved(device=None) -> int:
    """Bytes of GPU memory held by the GPU backend's pool (in use plus cached).

    Args:
        device (CUDAPlace|int|str, optional): The GPU. Default: the current one.

    Returns:
        int: Bytes.
    """
    return _pool_stat(device, "memory_reserved", 1)


def max_memory_reserved(device=None) -> int:
    """Peak of :func:`memory_reserved` as observed by paddle_hl's queries.

    Args:
        device (CUDAPlace|int|str, optional): The GPU. Default: the current one.

    Returns:
        int: Bytes.
    """
    return _pool_stat(device, "max_memory_reserved", 1, _peak_reserved)


class _DeviceProperties:
    """What ``get_device_properties`` returns: name, major, minor, total_memory,
    multi_processor_count."""

    __slots__ = ("name", "major", "minor", "total_memory", "multi_processor_count")

    def __init__(self, props: dict):
        for key in self.__slots__:
            setattr(self, key, props[key])

    def __repr__(self):
        return (f"_gpuDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device=None) -> _DeviceProperties:
    """Properties of a GPU: name, compute capability, memory size, SM count.

    Args:
        device (CUDAPlace|int|str, optional): The GPU. Default: the current one.

    Returns:
        _DeviceProperties: With fields name, major, minor, total_memory,
        multi_processor_count.
    """
    gpu = _gpu("get_device_properties")
    idx = _device_id(device, "get_device_properties")
    return _DeviceProperties(gpu.device_properties(idx))


def get_device_name(device=None) -> str:
    """The GPU's name, e.g. "NVIDIA H100".

    Args:
        device (CUDAPlace|int|str, optional): The GPU. Default: the current one.

    Returns:
        str: The name.
    """
    _gpu("get_device_properties")
    return get_device_properties(device).name


def get_device_capability(device=None) -> tuple:
    """The GPU's compute capability as ``(major, minor)``.

    Args:
        device (CUDAPlace|int|str, optional): The GPU. Default: the current one.

    Returns:
        tuple[int, int]: e.g. (9, 0).
    """
    _gpu("get_device_properties")
    p = get_device_properties(device)
    return p.major, p.minor
