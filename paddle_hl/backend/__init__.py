"""Array-module choice: NumPy always, CuPy when installed and a GPU is present.

Ops are written once against ``xp = get_array_module(arr)``. CuPy is imported lazily, the first
time a GPU is asked for, so importing paddle_hl never pays for it.
"""

from __future__ import annotations

import importlib

import numpy as np

__all__ = []

_cupy = None
_cupy_checked = False
_cupy_error = ""


def cupy_module():
    """Return the cupy module if it can be used (installed and a GPU visible), else None."""
    global _cupy, _cupy_checked, _cupy_error
    if not _cupy_checked:
        _cupy_checked = True
        try:
            import cupy  # noqa: PLC0415

            if cupy.cuda.runtime.getDeviceCount() < 1:
                _cupy_error = "CuPy is installed but no CUDA device is visible"
            else:
                # the GPU kernels register with _numpy.for_array; loading the submodule binds
                # the package attribute _cupy to it, so the CuPy module is assigned after
                importlib.import_module(f"{__name__}._cupy")
                _cupy = cupy
        except Exception as e:  # ImportError, or a CUDA runtime error without a driver
            _cupy_error = f"CuPy is not usable here ({type(e).__name__}: {e})"
    return _cupy


def cupy_error() -> str:
    cupy_module()
    return _cupy_error or "CuPy is not installed (pip install 'paddle_hl[gpu]')"


def get_array_module(arr):
    """numpy for numpy arrays (and scalars), cupy for cupy arrays."""
    if type(arr) is np.ndarray or _cupy is None:
        return np
    return _cupy if isinstance(arr, _cupy.ndarray) else np


def is_gpu_array(arr) -> bool:
    return _cupy is not None and isinstance(arr, _cupy.ndarray)


def to_numpy(arr) -> np.ndarray:
    if type(arr) is np.ndarray:
        return arr
    if is_gpu_array(arr):
        return arr.get()
    return np.asarray(arr)


def device_count() -> int:
    cp = cupy_module()
    return 0 if cp is None else int(cp.cuda.runtime.getDeviceCount())
