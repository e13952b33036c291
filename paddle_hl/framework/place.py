"""Places (CPUPlace, CUDAPlace, CUDAPinnedPlace) and the current device."""

from __future__ import annotations

import numpy as np

from .. import backend

__all__ = []


class Place:
    """Where a tensor lives. ``Place(cpu)`` or ``Place(gpu:N)`` as Paddle prints it."""

    __slots__ = ("kind", "index")

    def __init__(self, kind="cpu", index=0):
        self.kind = kind
        self.index = index

    def __repr__(self):
        if self.kind == "cpu":
            return "Place(cpu)"
        if self.kind == "gpu_pinned":
            return "Place(gpu_pinned)"
        return f"Place(gpu:{self.index})"

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, Place) and (self.kind, self.index) == (other.kind, other.index)

    def __hash__(self):
        return hash((self.kind, self.index))

    def is_cpu_place(self):
        return self.kind == "cpu"

    def is_gpu_place(self):
        return self.kind == "gpu"

    def is_cuda_pinned_place(self):
        return self.kind == "gpu_pinned"

    def gpu_device_id(self):
        return self.index

    def get_device_id(self):
        return self.index


class CPUPlace(Place):
    __slots__ = ()

    def __init__(self):
        super().__init__("cpu", 0)


class CUDAPlace(Place):
    __slots__ = ()

    def __init__(self, id=0):  # noqa: A002  (Paddle's argument name)
        super().__init__("gpu", int(id))


class CUDAPinnedPlace(Place):
    """Pinned host memory; on paddle_hl this is ordinary host memory."""

    __slots__ = ()

    def __init__(self):
        super().__init__("gpu_pinned", 0)


_CPU = CPUPlace()
_current = [_CPU]


def place_of(arr) -> Place:
    if type(arr) is np.ndarray or not backend.is_gpu_array(arr):
        return _CPU
    return CUDAPlace(backend.for_array(arr).device_of(arr))


def current_place() -> Place:
    return _current[0]


def parse_place(p) -> Place:
    """Accept a Place, 'cpu', 'gpu', 'gpu:N' or 'cuda:N'."""
    if p is None:
        return _current[0]
    if isinstance(p, Place):
        if p.kind == "gpu" and not backend.gpu_available():
            raise ValueError(f"{p} requested but {backend.gpu_error()}")
        return p
    if isinstance(p, str):
        s = p.strip().lower()
        if s == "cpu":
            return _CPU
        if s.startswith(("gpu", "cuda")):
            idx = 0
            if ":" in s:
                try:
                    idx = int(s.split(":", 1)[1])
                except ValueError:
                    raise ValueError(f"set_device: cannot parse device {p!r}; expected "
                                     "'cpu', 'gpu' or 'gpu:N'") from None
            if not backend.gpu_available():
                raise ValueError(
                    f"The device should not be {p!r}: {backend.gpu_error()}; paddle_hl runs "
                    "on the CPU with NumPy. Install CuPy for your CUDA version to use a GPU.")
            n = backend.device_count()
            if idx >= n:
                raise ValueError(f"set_device({p!r}): only {n} GPU(s) visible")
            return CUDAPlace(idx)
    raise ValueError(f"unknown device {p!r}; expected 'cpu', 'gpu' or 'gpu:N'")


def set_device(device: str) -> Place:
    """Set the device new tensors are created on ('cpu', 'gpu', 'gpu:N'). Returns the Place."""
    place = parse_place(device)
    _current[0] = place
    if place.kind == "gpu":
        backend.gpu_backend().use_device(place.index)
    return place


def get_device() -> str:
    """The current device as a string: 'cpu' or 'gpu:N'."""
    p = _current[0]
    return "cpu" if p.kind == "cpu" else f"gpu:{p.index}"


def xp_for(place: Place):
    """Array module for a place (the CPU's or the GPU backend's)."""
    if place.kind == "gpu":
        return backend.gpu_backend().xp
    return np


def move(arr, place: Place):
    """Return ``arr`` on ``place`` (a copy only when the place changes)."""
    if place.kind != "gpu":
        return backend.to_numpy(arr)
    return backend.gpu_backend().to_device(arr, place.index)


def is_compiled_with_cuda() -> bool:
    """True when CuPy and a CUDA device are usable (paddle_hl's GPU backend)."""
    return backend.gpu_available()
