"""Backends: the one place that knows which devices exist and what differs per device.

Ops are written once against the array module of their inputs, ``xp =
backend.get_array_module(arr)``, and call the functions here where a device needs its own
code. Two backends exist, one module each, under identical names:

- ``_numpy.py``: NumPy on the CPU, always present.
- ``_cupy.py``: CuPy on an NVIDIA GPU, optional (``pip install 'paddle_hl[gpu]'``). It is
  imported the first time a GPU is asked for (:func:`cupy_module`) or a CuPy array reaches
  :func:`for_array`, so importing paddle_hl never imports CuPy.

:func:`for_array` is where a backend is chosen: the backend module of an array's type
(:func:`gpu_backend` gives the GPU's without an array). Every backend module provides:

- ``name`` (str), ``xp`` (the array module), ``ndarray`` (the array type).
- ``to_numpy(arr)``: the array on the host.
- ``from_host(arr, device_index)``: a host array on the backend's device ``device_index``
  (the GPU stages it through pinned memory, an asynchronous copy).
- ``as_strided(a, shape, strides)``: a view with byte strides (read-only where the backend
  can say so).
- ``view_of(a, b)``: whether ``a`` (the result of a view op on ``b``) shares ``b``'s storage.
- ``scatter_add(size, index, values)``: a new 1-D vector with ``values`` summed at ``index``.
- ``index_add(out, index, values)``: ``out[index] += values`` in place, repeats accumulating.
- ``index_reduce(ufunc, out, index, values)``: the same for "add", "multiply", "maximum",
  "minimum".
- ``has_fused_updates`` and ``fused_update(kernel, grad, scalars, outputs)``: the fused
  optimizer update ``kernel`` (names in ``_cupy.UPDATE_KERNELS``) applied in place; returns
  False where the backend has none and the optimizer's own in-place passes should run.
- ``depthwise_forward`` / ``depthwise_input_grad`` / ``depthwise_weight_grad``: the backend's
  own depthwise-convolution kernels, or None where the generic per-tap loop of
  ``windows.py`` should run (``windows`` calls them; see there for the arguments).

- Devices (the CPU backend has one, index 0, and gives each function its host meaning):
  ``device_count()``, ``current_device()``, ``use_device(index)``, ``device_of(arr)``,
  ``to_device(arr, index)`` (no copy when already there), ``synchronize(index)``,
  ``memory_stats(index)`` (bytes ``(in use, held)`` by the device's pool), ``empty_cache()``,
  ``device_properties(index)`` (a dict: name, major, minor, total_memory,
  multi_processor_count; None on the CPU) and ``compute_capability(index)`` (``(major,
  minor)``; None on the CPU).
- ``record_event()`` / ``event_seconds(start, end)``: points in the device's timeline and the
  seconds between them (CUDA events on the GPU; the profiler times kernels with them).
- ``to_dlpack(arr)`` / ``from_dlpack(obj)``: DLPack export and import of the backend's arrays.
- ``seeded_draws(seed, device_index, private)``: an object with the draw methods of
  ``numpy.random.Generator`` that random ops use, seeded with ``seed``.
- ``csr_dense`` / ``csr_t_dense`` / ``csr_csr``: CSR sparse products (cuSPARSE on the GPU), or
  None where ``paddle_hl.sparse``'s own CPU kernels should run.

Optional kernels: a backend may provide these (the CPU backend does, through the numba extra
in ``_numba/``); each answers None where it does not apply (numba missing or switched off, a
dtype or shape it does not take), and a backend without the name is asked through
:func:`kernel`, which answers None for it. The caller then runs the generic form:

- ``im2col_nin`` / ``col2im_nin``: the window copy of ``windows.im2col_nin`` and its adjoint;
- ``max_pool2d`` / ``max_pool2d_grad``: 2-D max pooling and its gradient;
- ``conv2d_direct_forward`` / ``conv2d_direct_input_grad`` / ``conv2d_direct_weight_grad``:
  thin dense convolutions without im2col columns (see ``windows.use_direct``);
- ``batch_norm_train`` / ``batch_norm_train_grad``: batch norm's training passes, optionally
  with ReLU/ReLU6 (``nn/functional/norm.py``);
- ``compiled_kernels()``: whether such kernels are in use (:func:`compiled_kernels`);
- ``depthwise_method(x, w, stride, out_size, cl)``: the form the backend's depthwise kernels take
  for a layer (a name for the plan's label, ``plans.py``).

Outside this package, code asks :func:`gpu_available` / :func:`gpu_error` whether a GPU can be
used and reaches the GPU's functions through :func:`gpu_backend`, or an array's through
:func:`for_array`; no module outside it names CuPy (``distributed/_nccl.py``, the NCCL
transport, is the one exception). :func:`is_array` recognises an array of any backend.

Threads and process policy live here too, and nowhere else:

- ``_threads.py`` is the CPU thread pool, the only one: the large NumPy kernels (im2col/col2im
  copies, batch norm, depthwise blocks, optimizer updates) split their work over the batch or
  channel axis on it through :func:`split`, :func:`ascontiguous`, :func:`parallel_map` and
  :func:`work_ranges` / :func:`run_pieces` (one call, inline, for other backends' arrays);
  results do not depend on the thread count.
- ``_openblas.py`` holds OpenBLAS's thread count (:func:`blas_thread_control`,
  :func:`blas_one_thread`) and idle-spin timeout.
- ``settings.py`` reads the environment once (``PADDLE_HL_NUM_THREADS``, ``PADDLE_HL_NUMBA``,
  ``PADDLE_HL_MALLOC_TUNING``, ``PADDLE_HL_BLAS_THREAD_TIMEOUT``, ``PADDLE_HL_FUSE_CONV_BN``)
  and computes the CPU count; its setters are public in ``paddle_hl.device``.
- Importing this package tunes the process once (:func:`tune_process`: glibc's malloc
  thresholds, OpenBLAS's spin timeout).

No module outside ``backend/`` names numba, ``_numba``, ``_threads`` or ``_openblas``
(``tests/backend/test_one_door.py`` checks it).

``windows.py`` holds the sliding-window algorithms shared by all backends (im2col/col2im and
the convolution's GEMM forms, depthwise taps, pooling windows): they use only the backend's
``xp`` and ``as_strided``. ``plans.py`` chooses which of them a convolution or pooling geometry
runs, once per geometry (``plan_conv``, ``plan_pool``: a cached, frozen plan with a readable
``label``), and ``tuning.py`` holds every performance threshold of the package in one table.
Adding a backend is one module with the names above plus a branch in :func:`for_array` (and
:func:`get_array_module`) that recognises its arrays.
"""

from __future__ import annotations

import numpy as np

from . import _numpy, _openblas, _threads, settings

__all__ = []

# the cupy module once it is known to be usable (not named _cupy: importing the submodule
# backend/_cupy.py binds that package attribute)
_cp = None
_cupy_backend = None  # backend/_cupy.py once a CuPy array reached for_array
_cupy_checked = False
_cupy_error = ""

# the CPUs this process may run on (computed once), and the threads of the CPU thread pool
cpu_count = settings.cpu_count
num_threads = settings.num_threads
# NumPy's ufunc buffer shrunk for a block of strided passes (the norm kernels)
small_ufunc_buffer = _numpy.small_ufunc_buffer
# OpenBLAS's thread count: (set, get) or False where it cannot be controlled; a block with it
# held to one thread (kernels that run their own threads); whether such a block runs
blas_thread_control = _openblas.thread_control
blas_one_thread = _openblas.one_thread
blas_held_to_one_thread = _openblas.held_to_one_thread


def tune_process():
    """Tune the process once for the CPU backend (called on import): keep freed
    activation-sized blocks in the heap (``_numpy.tune_malloc``: no page faults on every
    step) and let idle OpenBLAS workers sleep soon after a product instead of spinning on
    every core (``_openblas.tune_thread_timeout``). Each is skipped where the user chose
    otherwise (see ``settings``)."""
    _numpy.tune_malloc()
    _openblas.tune_thread_timeout()


def cupy_module():
    """Return the cupy module if it can be used (installed and a GPU visible), else None."""
    global _cp, _cupy_checked, _cupy_error
    if not _cupy_checked:
        _cupy_checked = True
        try:
            import cupy  # noqa: PLC0415  (optional; imported on first GPU use only)

            if cupy.cuda.runtime.getDeviceCount() < 1:
                _cupy_error = "CuPy is installed but no CUDA device is visible"
            else:
                _cp = cupy
        except Exception as e:  # ImportError, or a CUDA runtime error without a driver
            _cupy_error = f"CuPy is not usable here ({type(e).__name__}: {e})"
    return _cp


def cupy_error() -> str:
    """Why the GPU backend is not available (for error messages)."""
    cupy_module()
    return _cupy_error or "CuPy is not installed (pip install 'paddle_hl[gpu]')"


def get_array_module(arr):
    """numpy for numpy arrays (and scalars), cupy for cupy arrays."""
    if type(arr) is np.ndarray or _cp is None:
        return np
    return _cp if isinstance(arr, _cp.ndarray) else np


def is_gpu_array(arr) -> bool:
    """Whether ``arr`` lives on a GPU."""
    return _cp is not None and isinstance(arr, _cp.ndarray)


def for_array(arr):
    """The backend module for ``arr``: ``_numpy`` for NumPy arrays and scalars, ``_cupy`` for
    CuPy arrays."""
    if type(arr) is np.ndarray or _cp is None or not isinstance(arr, _cp.ndarray):
        return _numpy
    return _cupy_backend or gpu_backend()


def gpu_backend():
    """The GPU backend module (``_cupy``), imported on first use; requires a usable CuPy."""
    global _cupy_backend
    if _cupy_backend is None:
        if cupy_module() is None:
            raise RuntimeError(f"paddle_hl has no GPU backend here: {cupy_error()}")
        from . import _cupy as mod  # noqa: PLC0415  (CuPy is optional)

        _cupy_backend = mod
    return _cupy_backend


def to_numpy(arr) -> np.ndarray:
    """``arr`` as a NumPy array: no copy on the CPU, a device-to-host copy from a GPU."""
    if type(arr) is np.ndarray:
        return arr
    if is_gpu_array(arr):
        return arr.get()
    return np.asarray(arr)


def view_of(a, b) -> bool:
    """Whether array ``a``, made from ``b`` by a view op, shares ``b``'s storage."""
    if type(a) is np.ndarray:  # every view op passes here: no dispatch on the CPU
        return a is b or a.base is not None
    return for_array(a).view_of(a, b)


def host_values(arrays) -> list:
    """The host values of many small device arrays (0-d flags, per-tensor sums), in order,
    with one transfer per device type instead of one synchronising read per array."""
    out = [None] * len(arrays)
    groups = {}
    for i, a in enumerate(arrays):
        groups.setdefault(get_array_module(a), []).append(i)
    for xp, idx in groups.items():
        if xp is np:
            for i in idx:
                out[i] = np.asarray(arrays[i])
            continue
        vals = to_numpy(xp.stack([xp.asarray(arrays[i]) for i in idx]))
        for i, v in zip(idx, vals):
            out[i] = v
    return out


def device_count() -> int:
    """The number of visible GPUs (0 without a usable CuPy)."""
    cp = cupy_module()
    return 0 if cp is None else int(cp.cuda.runtime.getDeviceCount())


def to_gpu(arr, device_index=0):
    """A host array copied to GPU ``device_index`` through pinned memory (asynchronous on the
    current stream); requires a usable CuPy (see :func:`cupy_module`)."""
    return gpu_backend().from_host(arr, device_index)


def cuda_runtime_version():
    """The CUDA runtime version as an int (e.g. 12040), or None without a usable GPU."""
    cp = cupy_module()
    return None if cp is None else int(cp.cuda.runtime.runtimeGetVersion())


def cudnn_version():
    """The cuDNN version as an int (e.g. 8902), or None where CuPy has no cuDNN."""
    cp = cupy_module()
    if cp is None:
        return None
    try:
        from cupy.cuda import cudnn  # noqa: PLC0415  (optional part of CuPy)
    except ImportError:
        return None
    return int(cudnn.getVersion())


def scatter_add(size, index, values):
    """A length-``size`` vector with ``values`` (1-D) summed at ``index`` (1-D)."""
    return for_array(values).scatter_add(size, index, values)


def index_add(out, index, values):
    """``out[index] += values`` in place with repeated positions accumulating; ``index`` is an
    integer array or a tuple of them, as in ``out[index]``."""
    for_array(out).index_add(out, index, values)


def index_reduce(ufunc, out, index, values):
    """``out[index] = ufunc(out[index], values)`` in place, repeated positions applied one
    after another; ``ufunc`` is "add", "multiply", "maximum" or "minimum"."""
    for_array(out).index_reduce(ufunc, out, index, values)


def fused_update(kernel, grad, scalars, outputs):
    """Apply the fused optimizer update ``kernel`` in place where the parameter's backend has
    one (the GPU; on the CPU Adam's with the numba extra); returns False where it has none,
    and the optimizer runs its own passes.

    Args:
        kernel: the update's name: "sgd", "momentum", "adamw", "adamax", "adagrad",
            "adadelta", "rmsprop" or "rmsprop_centered".
        grad: the gradient array.
        scalars: the update's Python-number hyperparameters, in the kernel's order.
        outputs: the parameter array first, then its accumulators; updated in place.
    """
    return for_array(outputs[0]).fused_update(kernel, grad, scalars, outputs)


def gpu_available() -> bool:
    """Whether the GPU backend can be used here (CuPy installed and a CUDA device visible)."""
    return cupy_module() is not None


def gpu_error() -> str:
    """Why the GPU backend is not available (for error messages)."""
    return cupy_error()


def is_array(obj) -> bool:
    """Whether ``obj`` is an array of some backend (a NumPy or a GPU array)."""
    return isinstance(obj, np.ndarray) or is_gpu_array(obj)


def kernel(arr, name):
    """The optional kernel ``name`` (see the module docstring) of ``arr``'s backend, or None
    where that backend has none."""
    return getattr(for_array(arr), name, None)


def compiled_kernels(arr) -> bool:
    """Whether ``arr``'s backend runs compiled kernels (the CPU's numba extra in use)."""
    fn = getattr(for_array(arr), "compiled_kernels", None)
    return fn is not None and fn()


def compiled_kernels_in_use() -> bool:
    """Whether the CPU backend's compiled kernels run (numba installed, able to build them, and
    not switched off); the first call compiles them or loads them from numba's cache."""
    return _numpy.compiled_kernels()


def split(arr, fn, extent, nbytes):
    """``fn(lo, hi)`` over ``range(extent)``, for work on ``arr`` touching ``nbytes`` bytes:
    split over the CPU thread pool for NumPy arrays when large, one call otherwise."""
    if type(arr) is np.ndarray:
        _threads.split(fn, extent, nbytes)
    else:
        fn(0, extent)


def ascontiguous(a, axis=0):
    """A C-contiguous ``a`` (no copy when it is one): NumPy's copy split along ``axis`` over
    the CPU thread pool."""
    if type(a) is np.ndarray:
        return _threads.ascontiguous(a, axis)
    return get_array_module(a).ascontiguousarray(a)


def work_ranges(nbytes, extent):
    """The contiguous ``(lo, hi)`` ranges covering ``range(extent)`` that work touching
    ``nbytes`` bytes runs as on the CPU thread pool: one when it is small, on one thread, or
    inside a pool task. With :func:`run_pieces`, for work that needs per-piece scratch."""
    return _threads.ranges(extent, _threads.parts(nbytes, extent))


def run_pieces(fn, arg_list):
    """``fn(*args)`` for every ``args`` in ``arg_list`` on the CPU thread pool (the calling
    thread takes the first piece and every piece no worker has started); re-raises the first
    exception."""
    _threads.run(fn, arg_list)


def parallel_map(fn, items):
    """``[fn(item) for item in items]`` on the CPU thread pool (NumPy and BLAS release the
    GIL, so the items run in parallel); the calling thread takes the first."""
    return _threads.map_items(fn, items)


def seeded_draws(seed, place_kind, device_index, private=False):
    """A draw object for random ops (``numpy.random.Generator``'s method names) seeded with
    ``seed``, on the CPU (``place_kind`` "cpu") or GPU ``device_index``; see the backends'
    ``seeded_draws`` for ``private``."""
    mod = gpu_backend() if place_kind == "gpu" else _numpy
    return mod.seeded_draws(seed, device_index if place_kind == "gpu" else 0, private)


tune_process()
