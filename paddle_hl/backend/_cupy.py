"""The CuPy (NVIDIA GPU) backend: the array module, strided views, scatter updates and the
fused optimizer update kernels.

See ``backend/__init__.py`` for the interface every backend module provides. This module is
imported only when a CuPy array reaches a backend function (``backend.for_array``), so
importing paddle_hl never imports CuPy.
"""

from __future__ import annotations

import contextlib
import functools

import cupy
import cupyx
import numpy as np

from . import _cuda_kernels

__all__ = []

name = "cupy"
xp = cupy
ndarray = cupy.ndarray
# every optimizer update runs as one elementwise kernel (see fused_update)
has_fused_updates = True


def to_numpy(arr) -> np.ndarray:
    """``arr`` copied to the host."""
    return cupy.asnumpy(arr)


# pinned staging buffers of host-to-device copies still in flight, with the event that marks
# each copy's end: a buffer goes back to CuPy's pinned pool only once its copy has finished
_in_flight: list = []


def from_host(arr, device_index):
    """A host (NumPy) array copied to GPU ``device_index``, staged through pinned memory.

    From pinned (page-locked) memory the copy is a DMA transfer queued on the current stream:
    the host goes on (collating the next batch) while the GPU copies and computes. The staging
    buffer is kept until the copy's event has completed.
    """
    arr = np.ascontiguousarray(arr)
    with cupy.cuda.Device(device_index):
        _in_flight[:] = [(ev, buf) for ev, buf in _in_flight if not ev.done]
        if arr.nbytes == 0:
            return cupy.asarray(arr)
        buf = cupyx.empty_pinned(arr.shape, dtype=arr.dtype)
        np.copyto(buf, arr)
        out = cupy.empty(arr.shape, dtype=arr.dtype)
        stream = cupy.cuda.get_current_stream()
        out.set(buf, stream=stream)
        ev = cupy.cuda.Event(block=False, disable_timing=True)
        ev.record(stream)
        _in_flight.append((ev, buf))
    return out


def as_strided(a, shape, strides):
    """A view of ``a`` with the given shape and byte strides (CuPy views carry byte strides
    exactly as NumPy's do)."""
    return cupy.lib.stride_tricks.as_strided(a, shape=shape, strides=strides)


def view_of(a, b):
    """Whether ``a`` shares ``b``'s storage: the same array, or a pointer into the same
    allocation (CuPy views made from a pointer, such as ``as_strided``'s, have no ``base``)."""
    return a is b or a.data.mem is b.data.mem


# dtypes CuPy's atomic scatters take; others (bfloat16, int8/16, uint8/16, bool) run in float32
# or int64 and are cast back
_ATOMIC = frozenset("int32 int64 float16 float32 float64 uint32 uint64".split())


def _atomic_dtype(dtype):
    if dtype.name in _ATOMIC:
        return None
    return cupy.dtype("int64") if dtype.kind in "iub" else cupy.dtype("float32")


def _atomic_add(out, index, values):
    wide = _atomic_dtype(out.dtype)
    if wide is None:
        cupy.add.at(out, index, values.astype(out.dtype, copy=False))
        return
    acc = out.astype(wide)
    cupy.add.at(acc, index, values.astype(wide, copy=False))
    out[...] = acc.astype(out.dtype)


def scatter_add(size, index, values):
    """A length-``size`` vector with ``values`` summed at ``index`` (atomic adds)."""
    out = cupy.zeros(size, dtype=values.dtype)
    _atomic_add(out, index, values)
    return out


def index_add(out, index, values):
    """``out[index] += values`` in place, repeated positions accumulating (atomic adds)."""
    _atomic_add(out, index, values)


def index_reduce(ufunc, out, index, values):
    """``out[index] = ufunc(out[index], values)`` in place with repeated positions applied one
    after another; ``ufunc`` is "add", "multiply", "maximum" or "minimum".

    add is CuPy's atomic add. maximum and minimum are atomic for float32 and the integer
    dtypes; CuPy's float64 atomic min/max round through float32, so float64 (like multiply,
    which has no atomic form) runs in rounds: the k-th occurrence of every position is
    combined in round k, where all positions are distinct.
    """
    if ufunc not in ("add", "multiply", "maximum", "minimum"):
        raise ValueError(f"index_reduce: ufunc must be 'add', 'multiply', 'maximum' or "
                         f"'minimum', got {ufunc!r}")
    if ufunc == "add":
        _atomic_add(out, index, values)
        return
    if ufunc != "multiply" and out.dtype.name in ("float32", "int32", "int64", "uint32",
                                                  "uint64"):
        getattr(cupy, ufunc).at(out, index, values.astype(out.dtype, copy=False))
        return
    if isinstance(index, tuple):  # one position per element: work on the flat array
        idx = cupy.broadcast_arrays(*[cupy.asarray(i) for i in index])
        lin = cupy.ravel_multi_index(tuple(idx), out.shape).reshape(-1)
        target = cupy.ascontiguousarray(out).reshape(-1)  # a copy only when out is strided
        vals = cupy.broadcast_to(values, idx[0].shape).reshape(-1)
    else:  # positions along the first axis, each taking a row of values
        index = cupy.asarray(index)
        lin = index.reshape(-1)
        target = out
        vals = cupy.broadcast_to(values, index.shape + out.shape[1:]).reshape(
            lin.shape + out.shape[1:])
    vals = vals.astype(out.dtype, copy=False)
    lin_h = cupy.asnumpy(lin)
    order = np.argsort(lin_h, kind="stable")
    srt = lin_h[order]
    start = np.r_[0, np.flatnonzero(np.diff(srt)) + 1]
    rank = np.empty_like(order)
    rank[order] = np.arange(srt.size) - np.repeat(start, np.diff(np.r_[start, srt.size]))
    rk = cupy.asarray(rank)
    fn = getattr(cupy, ufunc)
    for r in range(int(rank.max()) + 1 if rank.size else 0):
        sel = rk == r
        at = lin[sel]
        target[at] = fn(target[at], vals[sel])
    if target is not out and not out.flags.c_contiguous:
        out[...] = target.reshape(out.shape)


# the fused optimizer updates: one elementwise kernel each, from the CUDA sources of
# _cuda_kernels (plain strings, compiled by NVRTC in CI for every float dtype)
UPDATE_KERNELS = tuple(_cuda_kernels.UPDATES)


@functools.cache
def _update_kernel(kernel):
    # compiled on first use, once per dtype combination; CuPy also caches the binary on disk
    # across processes
    ins, outs, body, kname = _cuda_kernels.update_kernel(kernel)
    return cupy.ElementwiseKernel(ins, outs, body, kname)


def fused_update(kernel, grad, scalars, outputs):
    """Run the fused update ``kernel`` (a name in ``UPDATE_KERNELS``): ``grad`` and the
    ``scalars`` in, ``outputs`` (the parameter first, then its accumulators) updated in place.

    ``scalars`` are the kernel's inputs after the gradient, in its order: Python numbers (the
    hyperparameters) or device arrays it reads on the GPU (Adam's shape-[1] beta powers, so
    that no value goes to the host). The arithmetic runs in float32 (float64 for float64
    parameters) whatever the storage dtypes. Returns True."""
    ct = np.float64 if outputs[0].dtype == np.float64 else np.float32
    args = [s if isinstance(s, cupy.ndarray) else ct(s) for s in scalars]
    _update_kernel(kernel)(grad, *args, *outputs)
    return True


def depthwise_forward(x, w, stride, dilation, out_size, pads, out_cl):
    """None: on the GPU the generic loop of ``windows`` (one strided multiply-add per kernel
    tap over the whole batch, a few large kernels) is the depthwise convolution."""
    return None


def depthwise_input_grad(g, w, padded_shape, stride, dilation, pads, out_cl):
    """None: the generic per-tap loop of ``windows`` runs (see :func:`depthwise_forward`)."""
    return None


def depthwise_weight_grad(x, g, ksize, stride, dilation, pads, cl=False):
    """None: the generic per-tap loop of ``windows`` runs (see :func:`depthwise_forward`)."""
    return None


# ---------------------------------------------------------------------------- devices

def device_count():
    """The number of visible CUDA GPUs."""
    return int(cupy.cuda.runtime.getDeviceCount())


def current_device():
    """The index of the GPU that new arrays and kernels go to."""
    return int(cupy.cuda.Device().id)


def use_device(index):
    """Make GPU ``index`` the current device of this thread."""
    cupy.cuda.Device(index).use()


def device_of(arr):
    """The index of the GPU holding ``arr``."""
    return int(arr.device.id)


def to_device(arr, index):
    """``arr`` (a host or GPU array) on GPU ``index``; no copy when it is already there."""
    with cupy.cuda.Device(index):
        if isinstance(arr, cupy.ndarray) and arr.device.id == index:
            return arr
        return cupy.asarray(arr)


def synchronize(index):
    """Block until every kernel queued on GPU ``index`` has finished."""
    cupy.cuda.Device(index).synchronize()


def memory_stats(index):
    """``(in use, held)`` bytes of the memory pool of GPU ``index`` (CuPy's default pool keeps
    one sub-pool per device and reports the current device's)."""
    with cupy.cuda.Device(index):
        pool = cupy.get_default_memory_pool()
        return int(pool.used_bytes()), int(pool.total_bytes())


def empty_cache():
    """Return the pools' cached, unused blocks (device and pinned host memory) to the driver."""
    cupy.get_default_memory_pool().free_all_blocks()
    cupy.get_default_pinned_memory_pool().free_all_blocks()


def device_properties(index):
    """A dict with the ``name``, ``major``, ``minor``, ``total_memory`` (bytes) and
    ``multi_processor_count`` of GPU ``index``."""
    p = cupy.cuda.runtime.getDeviceProperties(index)
    name = p["name"]
    return {"name": name.decode() if isinstance(name, bytes) else str(name),
            "major": int(p["major"]), "minor": int(p["minor"]),
            "total_memory": int(p["totalGlobalMem"]),
            "multi_processor_count": int(p["multiProcessorCount"])}


def compute_capability(index):
    """The compute capability of GPU ``index`` as ``(major, minor)``."""
    # CuPy reports it as a string of digits, e.g. '80' for 8.0 and '100' for 10.0
    cc = str(cupy.cuda.Device(index).compute_capability)
    return int(cc[:-1]), int(cc[-1])


# ---------------------------------------------------------------------------- timing events

def record_event():
    """A CUDA event recorded now on the current stream (a point in the GPU's timeline)."""
    ev = cupy.cuda.Event()
    ev.record()
    return ev


def event_seconds(start, end):
    """Seconds between two events of :func:`record_event`; waits for ``end`` to complete."""
    end.synchronize()
    return cupy.cuda.get_elapsed_time(start, end) / 1e3


# ---------------------------------------------------------------------------- streams

def new_stream(index, high_priority=False):
    """A new CUDA stream on GPU ``index`` (the device's greatest priority when asked)."""
    with cupy.cuda.Device(index):
        if high_priority:
            greatest = cupy.cuda.runtime.deviceGetStreamPriorityRange()[1]
            return cupy.cuda.Stream(non_blocking=False, priority=greatest)
        return cupy.cuda.Stream(non_blocking=False)


def current_stream(index):
    """The stream GPU ``index``'s kernels are queued on now."""
    with cupy.cuda.Device(index):
        return cupy.cuda.get_current_stream()


def new_event(blocking=False, timing=False, interprocess=False):
    """A CUDA event (not yet recorded)."""
    return cupy.cuda.Event(block=blocking, disable_timing=not timing,
                           interprocess=interprocess)


def event_elapsed_ms(start, end):
    """Milliseconds between two recorded timing events."""
    return cupy.cuda.get_elapsed_time(start, end)


@contextlib.contextmanager
def on_stream(stream):
    """Queue the kernels launched inside the block on ``stream`` (a stream of
    :func:`new_stream` or :func:`current_stream`), on its device."""
    with cupy.cuda.Device(stream.device_id), stream:
        yield


# ---------------------------------------------------------------------------- DLPack

def to_dlpack(arr):
    """A DLPack capsule sharing ``arr``'s device memory."""
    return arr.toDlpack()


def from_dlpack(obj):
    """A CuPy array sharing the memory of a DLPack capsule or ``__dlpack__`` object on a CUDA
    device."""
    return cupy.from_dlpack(obj)


# ---------------------------------------------------------------------------- random numbers

class _Draws:
    """NumPy-Generator-like draws on a GPU from a ``cupy.random.RandomState`` (cuRAND)."""

    __slots__ = ("_rs",)

    def __init__(self, rs):
        self._rs = rs

    def random(self, size, dtype=np.float64):
        return self._rs.random_sample(size, dtype=dtype)

    def uniform(self, low, high, size):
        return self._rs.uniform(low, high, size)

    def standard_normal(self, size, dtype=np.float64):
        return self._rs.standard_normal(size, dtype=dtype)

    def normal(self, loc, scale, size):
        return self._rs.normal(loc, scale, size)

    def integers(self, low, high, size, dtype=np.int64):
        # RandomState.randint samples [low, high) like Generator.integers
        return self._rs.randint(low, high, size=size, dtype=dtype)

    def permutation(self, n):
        return self._rs.permutation(n)

    def poisson(self, lam, size=None):
        return self._rs.poisson(lam, size)

    def exponential(self, scale, size):
        return self._rs.exponential(scale, size)

    def standard_cauchy(self, size):
        return self._rs.standard_cauchy(size)

    def geometric(self, p, size):
        return self._rs.geometric(p, size)

    def binomial(self, n, p, size=None):
        return self._rs.binomial(n, p, size)

    def standard_gamma(self, shape, size=None):
        return self._rs.standard_gamma(shape, size)


_shared_states: dict = {}  # device index -> the RandomState reseeded by each shared draw


def seeded_draws(seed, device_index, private):
    """A draw object (the method names of ``numpy.random.Generator`` that random ops use)
    seeded with ``seed`` on GPU ``device_index``.

    ``private=False`` reseeds the device's one shared state (creating cuRAND generators is
    costly, and the global generator takes a fresh seed before every draw); ``private=True``
    gives a state of its own that later draws elsewhere cannot disturb.
    """
    with cupy.cuda.Device(device_index):
        if private:
            return _Draws(cupy.random.RandomState(seed))
        rs = _shared_states.get(device_index)
        if rs is None:
            rs = _shared_states[device_index] = cupy.random.RandomState(seed)
        else:
            rs.seed(seed)
    return _Draws(rs)


# ---------------------------------------------------------------------------- sparse products

def _sps():
    import cupyx.scipy.sparse as sps  # noqa: PLC0415  (loaded on the first sparse product)

    return sps


def csr_dense(vals, crows, cols, m, n, y):
    """``A @ y`` for the CSR matrix A ``[m, n]`` (values, crows, cols) and dense y ``[n, k]``
    (cuSPARSE)."""
    return _sps().csr_matrix((vals, cols, crows), shape=(m, n)) @ y


def csr_t_dense(vals, crows, cols, m, n, g):
    """``A.T @ g`` for the CSR matrix A ``[m, n]`` and dense g ``[m, k]`` (cuSPARSE)."""
    return _sps().csr_matrix((vals, cols, crows), shape=(m, n)).T @ g


def csr_csr(av, acr, acol, bv, bcr, bcol, m, k, n):
    """``A @ B`` of CSR matrices ``[m, k]`` and ``[k, n]`` (cuSPARSE): (values, crows, cols)
    with int64 indices, duplicates summed and column indices sorted in each row."""
    sps = _sps()
    c = (sps.csr_matrix((av, acol, acr), shape=(m, k))
         @ sps.csr_matrix((bv, bcol, bcr), shape=(k, n))).tocsr()
    c.sum_duplicates()
    c.sort_indices()
    return c.data, c.indptr.astype(np.int64), c.indices.astype(np.int64)
