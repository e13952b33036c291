"""``paddle.device``: choose the device and ask what devices exist.

paddle_hl runs on the CPU with NumPy and on NVIDIA GPUs with CuPy; other Paddle device kinds
(XPU, IPU, custom devices) do not exist here and report as absent.
"""

from __future__ import annotations

import importlib

from .. import backend
from ..framework.place import get_device, is_compiled_with_cuda, set_device

__all__ = ["set_device", "get_device", "device_count", "get_all_device_type",
           "get_all_custom_device_type", "get_available_device", "get_available_custom_device",
           "get_cudnn_version", "is_compiled_with_cuda", "is_compiled_with_rocm",
           "is_compiled_with_xpu", "is_compiled_with_ipu", "is_compiled_with_cinn",
           "is_compiled_with_custom_device", "is_compiled_with_distribute", "synchronize",
           # paddle_hl's CPU settings (Paddle's C++ runtime has its own)
           "set_num_threads", "get_num_threads", "set_numba", "get_numba"]


def __getattr__(name):
    if name == "cuda":
        mod = importlib.import_module(f"{__name__}.cuda")
        globals()[name] = mod
        return mod
    raise AttributeError(f"module 'paddle_hl.device' has no attribute '{name}'")


def device_count() -> int:
    """Number of visible CUDA GPUs (0 without CuPy or without a GPU).

    Returns:
        int: The GPU count.
    """
    return backend.device_count()


def get_all_device_type() -> list:
    """Device kinds paddle_hl can run on here: ``['cpu']``, plus ``'gpu'`` with CuPy and a GPU.

    Returns:
        list[str]: The device types.
    """
    return ["cpu", "gpu"] if backend.device_count() > 0 else ["cpu"]


def get_available_device() -> list:
    """Every usable device: ``['cpu', 'gpu:0', 'gpu:1', ...]``.

    Returns:
        list[str]: The devices, as accepted by :func:`set_device`.
    """
    return ["cpu"] + [f"gpu:{i}" for i in range(backend.device_count())]


def get_all_custom_device_type() -> list:
    """Custom (plug-in) device types: none in paddle_hl.

    Returns:
        list: An empty list.
    """
    return []


def get_available_custom_device() -> list:
    """Custom (plug-in) devices: none in paddle_hl.

    Returns:
        list: An empty list.
    """
    return []


def get_cudnn_version():
    """The cuDNN version as an int (e.g. 8902), or None when cuDNN is not available.

    Returns:
        int|None: The version.
    """
    return backend.cudnn_version()


def is_compiled_with_rocm() -> bool:
    """False: paddle_hl has no ROCm backend."""
    return False


def is_compiled_with_xpu() -> bool:
    """False: paddle_hl has no XPU backend."""
    return False


def is_compiled_with_ipu() -> bool:
    """False: paddle_hl has no IPU backend."""
    return False


def is_compiled_with_cinn() -> bool:
    """False: paddle_hl has no CINN compiler."""
    return False


def is_compiled_with_distribute() -> bool:
    """True: ``paddle_hl.distributed`` is available (its engines load on use)."""
    return True


def is_compiled_with_custom_device(device_type: str) -> bool:
    """False for every custom device type.

    Args:
        device_type (str): e.g. "npu".

    Returns:
        bool: False.
    """
    return False


def synchronize(device=None) -> None:
    """Wait for all work queued on a GPU to finish.

    Args:
        device (str|CUDAPlace|int, optional): The GPU. Default: the current device.

    Returns:
        None
    """
    from ..framework.place import Place, current_place

    place = current_place() if device is None else device
    is_gpu = (isinstance(place, Place) and place.kind == "gpu") or isinstance(place, int) or (
        isinstance(place, str) and place.startswith(("gpu", "cuda")))
    if not is_gpu:
        raise TypeError(f"synchronize: device should be gpu, got {place}")
    from . import cuda

    cuda.synchronize(device)


def set_num_threads(num_threads: int) -> None:
    """Split the CPU kernels' large copies and passes over ``num_threads`` threads, the calling
    one included (``1``: every kernel runs inline). The default is the CPUs this process may
    run on, or the environment variable ``PADDLE_HL_NUM_THREADS``. Results do not depend on
    it.

    Args:
        num_threads (int): a positive thread count.
    """
    backend.settings.set_num_threads(num_threads)


def get_num_threads() -> int:
    """The threads the CPU kernels split their work over (see :func:`set_num_threads`).

    Returns:
        int: the thread count, the calling thread included.
    """
    return backend.settings.num_threads()


def set_numba(enable: bool) -> None:
    """Use the compiled CPU kernels of the numba extra (``pip install 'paddle_hl[numba]'``)
    where they apply, or NumPy's forms everywhere. The default is on, or the environment
    variable ``PADDLE_HL_NUMBA`` (``0``: off). The results agree to float rounding.

    Args:
        enable (bool): whether to use the compiled kernels.
    """
    backend.settings.set_numba(enable)


def get_numba() -> bool:
    """Whether the compiled CPU kernels are in use: numba installed, able to compile them here,
    and not switched off (see :func:`set_numba`).

    Returns:
        bool: True when the compiled kernels run.
    """
    return backend.compiled_kernels_in_use()
