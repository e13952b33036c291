"""The CuPy (NVIDIA GPU) backend: the array module, strided views, scatter updates and the
fused optimizer update kernels.

See ``backend/__init__.py`` for the interface every backend module provides. This module is
imported only when a CuPy array reaches a backend function (``backend.for_array``), so
importing paddle_hl never imports CuPy.
"""

from __future__ import annotations

import functools

import cupy
import cupyx
import numpy as np

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


def scatter_add(size, index, values):
    """A length-``size`` vector with ``values`` summed at ``index`` (atomic adds)."""
    out = cupy.zeros(size, dtype=values.dtype)
    cupyx.scatter_add(out, index, values)
    return out


def index_add(out, index, values):
    """``out[index] += values`` in place, repeated positions accumulating (atomic adds)."""
    cupyx.scatter_add(out, index, values)


_SCATTER = {"add": cupyx.scatter_add, "maximum": cupyx.scatter_max,
            "minimum": cupyx.scatter_min}


def index_reduce(ufunc, out, index, values):
    """``out[index] = ufunc(out[index], values)`` in place with repeated positions applied one
    after another; ``ufunc`` is "add", "multiply", "maximum" or "minimum".

    add, maximum and minimum are CuPy's atomic scatters. CuPy has no atomic multiply, so the
    products run in rounds: the k-th occurrence of every position is multiplied in round k,
    where all positions are distinct.
    """
    fn = _SCATTER.get(ufunc)
    if fn is not None:
        fn(out, index, values)
        return
    if ufunc != "multiply":
        raise ValueError(f"index_reduce: ufunc must be 'add', 'multiply', 'maximum' or "
                         f"'minimum', got {ufunc!r}")
    lin = cupy.ravel_multi_index(index, out.shape) if isinstance(index, tuple) else index
    lin_h = cupy.asnumpy(lin).reshape(-1)
    vals = cupy.broadcast_to(values, lin.shape).reshape(-1)
    order = np.argsort(lin_h, kind="stable")
    srt = lin_h[order]
    start = np.r_[0, np.flatnonzero(np.diff(srt)) + 1]
    rank = np.empty_like(order)
    rank[order] = np.arange(srt.size) - np.repeat(start, np.diff(np.r_[start, srt.size]))
    rk = cupy.asarray(rank)
    flat = out.reshape(-1)
    lin = cupy.asarray(lin_h)
    for r in range(int(rank.max()) + 1 if rank.size else 0):
        sel = rk == r
        flat[lin[sel]] *= vals[sel]


# One fused elementwise kernel per optimizer update. On a GPU each in-place pass of the NumPy
# form would be a kernel launch and a trip through memory; here the whole per-element update
# reads the gradient once and writes the parameter and its accumulators in place.
_UPDATES = {
    "sgd": ("T g, T lr", "T p", "p -= lr * g;"),
    "momentum": (
        "T g, T lr, T mu, T nesterov", "T p, T v",
        "v = mu * v + g; p -= nesterov != 0 ? lr * (g + mu * v) : lr * v;"),
    "adamw": (
        "T g, T lr_t, T b1, T b2, T eps_hat, T decay", "T p, T m, T v",
        "p *= decay; m = b1 * m + (1 - b1) * g; v = b2 * v + (1 - b2) * g * g;"
        "p -= lr_t * m / (sqrt(v) + eps_hat);"),
    "adamax": (
        "T g, T lr_t, T b1, T b2, T eps", "T p, T m, T inf",
        "m = b1 * m + (1 - b1) * g; inf = max(b2 * inf + eps, fabs(g)); p -= lr_t * m / inf;"),
    "adagrad": ("T g, T lr, T eps", "T p, T m", "m += g * g; p -= lr * g / (sqrt(m) + eps);"),
    "adadelta": (
        "T g, T lr, T rho, T eps", "T p, T sq_g, T sq_u",
        "sq_g = rho * sq_g + (1 - rho) * g * g;"
        "T upd = -sqrt((sq_u + eps) / (sq_g + eps)) * g;"
        "sq_u = rho * sq_u + (1 - rho) * upd * upd; p += lr * upd;"),
    "rmsprop": (
        "T g, T lr, T rho, T eps, T mom_c", "T p, T ms, T mom",
        "ms = rho * ms + (1 - rho) * g * g; mom = mom_c * mom + lr * g / sqrt(ms + eps);"
        "p -= mom;"),
    "rmsprop_centered": (
        "T g, T lr, T rho, T eps, T mom_c", "T p, T ms, T mg, T mom",
        "ms = rho * ms + (1 - rho) * g * g; mg = rho * mg + (1 - rho) * g;"
        "mom = mom_c * mom + lr * g / sqrt(ms - mg * mg + eps); p -= mom;"),
}
UPDATE_KERNELS = tuple(_UPDATES)


@functools.cache
def _update_kernel(kernel):
    # compiled on first use; CuPy also caches the binary on disk across processes
    ins, outs, body = _UPDATES[kernel]
    return cupy.ElementwiseKernel(ins, outs, body, f"paddle_hl_{kernel}")


def fused_update(kernel, grad, scalars, outputs):
    """Run the fused update ``kernel`` (a name in ``UPDATE_KERNELS``): ``grad`` and the
    Python-number ``scalars`` in, ``outputs`` (the parameter first, then its accumulators)
    updated in place, all in the parameter's dtype. Returns True."""
    dt = outputs[0].dtype
    _update_kernel(kernel)(grad.astype(dt, copy=False), *(dt.type(s) for s in scalars),
                           *outputs)
    return True


def depthwise_forward(x, w, stride, dilation, out_size, pads, out_cl):
    """None: on the GPU the generic loop of ``windows`` (one strided multiply-add per kernel
    tap over the whole batch, a few large kernels) is the depthwise convolution."""
    return None


def depthwise_input_grad(g, w, padded_shape, stride, dilation, pads, out_cl):
    """None: the generic per-tap loop of ``windows`` runs (see :func:`depthwise_forward`)."""
    return None


def depthwise_weight_grad(x, g, ksize, stride, dilation, pads):
    """None: the generic per-tap loop of ``windows`` runs (see :func:`depthwise_forward`)."""
    return None
