"""``paddle.static`` scopes and place lists in dygraph meaning (the Program and Block objects
live in ``framework/program.py``, where ``Tensor.block`` reaches them)."""

from __future__ import annotations

import contextlib

__all__ = []


@contextlib.contextmanager
def name_scope(prefix=None):
    """A naming scope for ops; names are not prefixed in dygraph, so it only scopes."""
    yield


@contextlib.contextmanager
def device_guard(device=None):
    """Placement hint for static ops; eager ops run where their inputs are, so it only scopes."""
    if device is not None and not (device == "cpu" or str(device).startswith("gpu")):
        raise ValueError(f"device_guard: device must be 'cpu', 'gpu' or 'gpu:N', got {device!r}")
    yield


def cpu_places(device_count=None) -> list:
    """``device_count`` CPU places (default 1)."""
    from ..framework.place import CPUPlace

    return [CPUPlace() for _ in range(int(device_count or 1))]


def cuda_places(device_ids=None) -> list:
    """The CUDA places for ``device_ids`` (default: every visible GPU)."""
    from ..device import cuda
    from ..framework.place import CUDAPlace

    if device_ids is None:
        device_ids = range(cuda.device_count())
    elif isinstance(device_ids, int):
        device_ids = [device_ids]
    return [CUDAPlace(int(i)) for i in device_ids]
