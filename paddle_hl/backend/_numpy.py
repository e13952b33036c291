"""The NumPy (CPU) backend: the array module, strided views, scatter updates, the blocked
depthwise convolution, and the process settings that make NumPy training fast.

See ``backend/__init__.py`` for the interface every backend module provides. The window
algorithms themselves are array-generic and live in ``backend/windows.py``.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import itertools
import math
import os
import sys
import time

import numpy as np
from numpy.lib.stride_tricks import as_strided as _np_as_strided

from . import _numba, _threads, settings, tuning

__all__ = []

name = "numpy"
xp = np
ndarray = np.ndarray
# NumPy updates run as a few in-place vectorised passes written in each optimizer (the numba
# extra fuses Adam's: see fused_update)
has_fused_updates = False

# glibc mallopt parameters
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = tuning.value("malloc.mmap_threshold")
_TRIM_THRESHOLD = tuning.value("malloc.trim_threshold")
_malloc_tuned = None


def tune_malloc():
    """Keep freed activation-sized blocks in the process instead of returning them to the OS.

    A training step allocates and frees the same large arrays (activations, im2col columns,
    gradients) every step. With glibc's defaults, freed memory at the top of the heap above the
    trim threshold is returned to the OS at the end of a step, and every array above the mmap
    threshold is a fresh mapping, so the next step pays one page fault per 4 KiB page it
    touches: on LeNet that was a third of the step. Here blocks up to 32 MiB come from the heap
    (the most glibc's own adaptive threshold reaches) and up to 1 GiB of free heap is kept.
    Peak memory is unchanged; the resident size just does not shrink between steps.

    Done once, on Linux with glibc; skipped when ``PADDLE_HL_MALLOC_TUNING=0`` or when the user
    set glibc's own ``MALLOC_*`` tunables. Returns whether the settings are in effect.
    """
    global _malloc_tuned
    if _malloc_tuned is not None:
        return _malloc_tuned
    _malloc_tuned = False
    env = os.environ
    if (not settings.malloc_tuning() or not sys.platform.startswith("linux")
            or any(k.startswith("MALLOC_") or k == "GLIBC_TUNABLES" for k in env)):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    _malloc_tuned = bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)
                         and mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD))
    return _malloc_tuned



def to_numpy(arr) -> np.ndarray:
    """``arr`` as a NumPy array (no copy)."""
    return np.asarray(arr)


def from_host(arr, device_index):
    """A host array as this backend's array: the array itself (NumPy is the host)."""
    return np.asarray(arr)


def as_strided(a, shape, strides):
    """A read-only view of ``a`` with the given shape and byte strides."""
    return _np_as_strided(a, shape=shape, strides=strides, writeable=False)


def view_of(a, b):
    """Whether ``a`` may share ``b``'s storage: ``a`` is ``b`` or a view of some array (NumPy
    keeps the array it views in ``base``)."""
    return a is b or a.base is not None


def scatter_add(size, index, values):
    """A length-``size`` vector with ``values`` summed at ``index`` (both 1-D).

    ``bincount`` is one C loop; ``np.add.at`` would be several times slower.
    """
    dt = values.dtype
    if dt.kind == "f" and dt.itemsize <= 8:
        return np.bincount(index, weights=values.astype(np.float64, copy=False),
                           minlength=size).astype(dt, copy=False)
    out = np.zeros(size, dtype=dt)
    np.add.at(out, index, values)
    return out


# rows repeated more often than this many times are added by np.add.at (see index_add)
_RANK_LOOPS = tuning.value("index_add.rank_loops")


def _rows_add(out, ids, rows):
    """``out[ids[i]] += rows[i]`` for 1-D ``ids`` and rows of ``out``.

    ``np.add.at`` handles one row at a time; instead the ids are ranked by occurrence (0 for
    the first time an id appears, 1 for the second, ...) and every rank, whose ids are all
    distinct, is added with one fancy-indexed ``+=``. The rare heavy repeats beyond a few
    ranks go through ``np.add.at``.
    """
    n = ids.shape[0]
    if n == 0:
        return
    order = np.argsort(ids, kind="stable")
    s = ids[order]
    is_start = np.empty(n, dtype=bool)
    is_start[0] = True
    np.not_equal(s[1:], s[:-1], out=is_start[1:])
    starts = np.flatnonzero(is_start)
    rank = np.arange(n) - starts[np.cumsum(is_start) - 1]
    top = int(rank.max())
    for r in range(min(top, _RANK_LOOPS - 1) + 1):
        sel = order[rank == r]
        out[ids[sel]] += rows[sel]
    if top >= _RANK_LOOPS:
        rest = order[rank >= _RANK_LOOPS]
        np.add.at(out, ids[rest], rows[rest])


def index_add(out, index, values):
    """``out[index] += values`` in place, repeated positions accumulating.

    ``index`` is an integer array or a tuple of them (as in ``out[index]``). Whole rows
    (``values`` ``[len(index), *out.shape[1:]]``, an embedding's gradient) are added rank by
    rank, one fancy-indexed add per rank; anything else goes through ``np.add.at``.
    """
    if (type(index) is np.ndarray and index.ndim == 1 and out.ndim >= 2
            and values.shape == index.shape + out.shape[1:]):
        _rows_add(out, index, values)
    else:
        np.add.at(out, index, values)


def index_reduce(ufunc, out, index, values):
    """``out[index] = ufunc(out[index], values)`` in place with repeated positions applied one
    after another; ``ufunc`` is "add", "multiply", "maximum" or "minimum"."""
    getattr(np, ufunc).at(out, index, values)


def fused_update(kernel, grad, scalars, outputs):
    """The one-pass compiled update of the numba extra for "adamw" (Adam and AdamW: the same
    bits as the optimizer's NumPy passes, about twice as fast); False for the other kernels,
    or where the compiled one does not apply, and the optimizer runs its in-place passes."""
    if kernel == "adamw" and _numba.enabled():
        p, m, v = outputs
        return _numba.optim.adam_update(p, grad, m, v, *scalars)
    return False


# --------------------------------------------------------------------------- compiled kernels
# The numba extra's kernels (backend/_numba), each answering None where it does not apply (numba
# missing or switched off, a dtype other than float32/float64, other than 2-D windows): the
# caller then runs the generic form (backend/windows.py, nn/functional/norm.py).
def compiled_kernels() -> bool:
    """Whether the compiled kernels are in use (numba installed and not switched off)."""
    return _numba.enabled()


def _compiled(a, ksize=(0, 0)):
    return len(ksize) == 2 and a.dtype.char in "fd" and _numba.enabled()


def im2col_nin(plane, ksize, stride, dilation, out_size):
    """The window copy of ``windows.im2col_nin`` for 2-D windows: the padded C-contiguous
    ``[C, *Sp, N]`` plane unfolded into ``[C, taps, *out, N]`` columns; or None."""
    if not _compiled(plane, ksize):
        return None
    return _numba.conv.im2col_nin(plane, ksize, stride, dilation, out_size)


def col2im_nin(cols, padded_shape, ksize, stride, dilation, out_size):
    """``windows.col2im_nin`` for 2-D windows: the columns summed into a new ``[C, *Sp, N]``
    array; or None."""
    if not _compiled(cols, ksize):
        return None
    return _numba.conv.col2im_nin(cols, padded_shape, ksize, stride, dilation, out_size)


def max_pool2d(xpad, ksize, stride, out_size, want_arg, arg_dtype):
    """``windows.max_pool`` for 2-D windows of a padded ``[N, C, Hp, Wp]`` float array:
    ``(out, arg or None)``; or None."""
    if not _compiled(xpad, ksize):
        return None
    return _numba.pool.max_pool2d(xpad, ksize, stride, out_size, want_arg, arg_dtype)


def max_pool2d_grad(g, arg, padded_shape, ksize, stride):
    """``windows.max_pool_grad`` for 2-D windows, in one pass; or None."""
    if not _compiled(g, ksize):
        return None
    return _numba.pool.max_pool2d_grad(g, arg, padded_shape, ksize, stride)


def conv2d_direct_forward(xpad, w, out_size, bias=None):
    """The stride-1, undilated, ungrouped 2-D convolution of the zero-padded ``xpad``
    ``[N, C, Hp, Wp]`` with ``w`` straight from the input, no im2col columns (see
    ``windows.use_direct``), plus ``bias``; or None."""
    if not _compiled(xpad):
        return None
    return _numba.conv.conv2d_forward(xpad, w, out_size, bias)


def conv2d_direct_input_grad(g, w, padded_shape):
    """The padded input gradient of :func:`conv2d_direct_forward`; or None (also for weights
    that are not all finite)."""
    if not _compiled(g):
        return None
    return _numba.conv.conv2d_input_grad(g, w, padded_shape)


def conv2d_direct_weight_grad(xpad, g, ksize):
    """The weight gradient of :func:`conv2d_direct_forward`; or None (also for an input that
    is not all finite)."""
    if not _compiled(xpad):
        return None
    return _numba.conv.conv2d_weight_grad(xpad, g, ksize)


def batch_norm_train(x, w, b, eps, act=None):
    """Batch norm's training forward of an ``[N, C, L]`` float array over axes 0 and 2 (or of
    the ``[N*L, C]`` rows of one laid out channels last) in two passes, with ``act`` (None,
    "relu" or "relu6") applied in them: ``(out, mean, var, invstd, mask)`` (see
    ``_numba.norm.batch_norm_train``); or None."""
    if not _compiled(x):
        return None
    return _numba.norm.batch_norm_train(x, w, b, eps, act)


def batch_norm_train_grad(g, x, w, mean, invstd, mask=None):
    """The gradients ``(dx, dw, db)`` of :func:`batch_norm_train`; or None."""
    if not _compiled(x):
        return None
    return _numba.norm.batch_norm_train_grad(g, x, w, mean, invstd, mask)



# --------------------------------------------------------------------------- depthwise
# NumPy runs the depthwise kernels block by block on phase planes (see _DwPlan). The rare
# cases the blocked form cannot do exactly return None, and ``windows`` runs its generic loop
# over kernel taps instead.

# scratch bytes of the input planes of one block; the run accumulators are about as large
# (measured on MobileNetV2's layers, batch 8: 1 MiB beat 256 KiB and 4 MiB)
_DW_BLOCK_BYTES = tuning.value("depthwise.block_bytes")
# NumPy >= 2.3 copies the operands of a strided 2-D ufunc call into its buffers when their rows
# are shorter than the ufunc buffer (8192 elements): 3-4x slower on the runs here, which are a
# few hundred to a few thousand long. The kernels run with a buffer this small (see
# :func:`small_ufunc_buffer`): none of their calls casts, so none needs a buffer
_DW_BUFSIZE = tuning.value("depthwise.bufsize")


@contextlib.contextmanager
def small_ufunc_buffer(size=_DW_BUFSIZE):
    """Run a block with NumPy's ufunc buffer set to ``size`` elements and FP warnings off, then
    put both back (the buffer size is restored explicitly rather than relying on errstate
    scoping it, which NumPy guarantees only through its context variables)."""
    old = np.getbufsize()
    try:
        with np.errstate(all="ignore"):
            np.setbufsize(size)
            yield
    finally:
        np.setbufsize(old)




class _DwPlan:
    """Geometry and blocking of a depthwise convolution in *phase-plane* form (NumPy).

    The padded input plane is split into ``prod(stride)`` phase planes (phase ``p`` of dim
    ``i`` holds padded rows ``p, p + s_i, p + 2 s_i, ...``) of shape ``Q`` (``Q_i =
    ceil(padded_i / s_i)``). In phase coordinates every kernel tap reads its phase plane with
    stride 1, shifted; so on the flattened planes, outputs laid out on a *wide* grid
    ``[out_0, *Q[1:]]`` (as wide as the phase plane) read, for each tap, one contiguous run
    of ``L = out_0 * prod(Q[1:])`` elements starting at the tap's offset. The wide grid's
    extra columns (which read into the next row) are cropped (forward) or zero (backward).

    Work goes in blocks of ``nb`` samples x ``cb`` channels, small enough for the cache: a
    layer costs about one pass over its input and one over its output in memory, instead of
    several full-size passes per tap. In a block the scratch is channel-major with the
    samples inner, ``[cb, nph, nb, flat]`` (``flat`` >= each plane and its last run), so one
    channel's runs for all the block's samples are ONE run of ``R = (nb - 1) * flat + L``:
    a tap is one multiply and one add over a ``[cb, R]`` block, whose rows stay long on the
    small planes of a network's late layers too (an inner-loop call per row is what costs
    there). The garbage between samples is cropped or multiplied by zeros like the rest.
    """

    def __init__(self, n, c, size, pads, ksize, stride, dilation, out_size, itemsize):
        nd = len(size)
        q = [-(-(s + lo + hi) // st) for s, (lo, hi), st in zip(size, pads, stride)]
        rq = [math.prod(q[i + 1:]) for i in range(nd)]
        self.q, self.run = tuple(q), out_size[0] * rq[0]
        phases = list(itertools.product(*[range(s) for s in stride]))
        self.nph = len(phases)
        self.taps = []
        for off in itertools.product(*[range(k) for k in ksize]):
            ph = tuple(o * d % s for o, d, s in zip(off, dilation, stride))
            start = sum(o * d // s * r for o, d, s, r in zip(off, dilation, stride, rq))
            self.taps.append((phases.index(ph), start))
        self.flat = max(math.prod(q), max(st for _, st in self.taps) + self.run)
        # where each phase plane's real (not padding) pixels come from in x
        self.copies = []
        for k, ph in enumerate(phases):
            dst, src = [], []
            for p, s, (lo, _), st in zip(ph, size, pads, stride):
                u0 = max(0, -(-(lo - p) // st))
                r0 = u0 * st + p - lo
                cnt = len(range(r0, s, st))
                dst.append(slice(u0, u0 + cnt))
                src.append(slice(r0, r0 + (cnt - 1) * st + 1 if cnt > 0 else r0, st))
            if all(sl.stop > sl.start for sl in dst):
                self.copies.append((k, tuple(dst), tuple(src)))
        self.crop = (slice(None),) * 3 + tuple(slice(0, o) for o in out_size[1:])
        self.wide = (out_size[0], *q[1:])
        per = self.nph * self.flat
        budget = max(1, _DW_BLOCK_BYTES // itemsize)
        nb = min(n, max(1, budget // per))
        self.nb = -(-n // -(-n // nb))  # equal chunks
        cb = min(c, max(1, budget // (self.nb * per)))
        self.cb = -(-c // -(-c // cb))

    def blocks(self, n, c):
        """``(n0, n1, c0, c1, R)`` per block; ``R`` is the block's run length."""
        for n0 in range(0, n, self.nb):
            n1 = min(n, n0 + self.nb)
            for c0 in range(0, c, self.cb):
                yield n0, n1, c0, min(c, c0 + self.cb), (n1 - n0 - 1) * self.flat + self.run

    def planes(self, dtype):
        """Zeroed input-plane scratch ``[cb, nph, nb * flat]``."""
        return np.zeros((self.cb, self.nph, self.nb * self.flat), dtype=dtype)

    def runs(self, dtype, zero=False):
        """Run scratch ``[cb, nb * flat]`` (each sample's wide grid at a multiple of flat)."""
        return (np.zeros if zero else np.empty)((self.cb, self.nb * self.flat), dtype=dtype)

    def _grid(self, a, bn, bc):
        """``[bc, (nph,) bn, flat]`` view of the first ``bc`` channels and ``bn`` samples of
        the scratch ``a`` (``[cb, (nph,) nb * flat]``)."""
        return a[:bc, ..., :bn * self.flat].reshape(
            (bc,) + a.shape[1:-1] + (bn, self.flat))

    def outputs(self, a, bn, bc):
        """The ``[bn, bc, *out]`` outputs of run scratch ``a`` (a view)."""
        g = self._grid(a, bn, bc)[..., :self.run].reshape((bc, bn) + self.wide)
        return g[self.crop].swapaxes(0, 1)

    def phase_planes(self, a, bn, bc):
        """``[bn, bc, nph, *Q]`` view of input-plane scratch ``a``."""
        g = self._grid(a, bn, bc)[..., :math.prod(self.q)].reshape(
            (bc, self.nph, bn) + self.q)
        return g.transpose(2, 0, 1, *range(3, 3 + len(self.q)))

    def load(self, a, xb):
        """Copy a block ``[bn, bc, *size]`` of x into the input-plane scratch ``a``."""
        pl = self.phase_planes(a, *xb.shape[:2])
        for k, dst, src in self.copies:
            pl[(slice(None), slice(None), k) + dst] = xb[(slice(None),) * 2 + src]

    def store(self, dxb, a):
        """Copy input-plane scratch ``a`` back to a block ``[bn, bc, *size]`` (padding
        dropped; every pixel of x lies in exactly one phase plane)."""
        pl = self.phase_planes(a, *dxb.shape[:2])
        for k, dst, src in self.copies:
            dxb[(slice(None),) * 2 + src] = pl[(slice(None), slice(None), k) + dst]


@functools.lru_cache(maxsize=tuning.value("depthwise.plan_cache"))
def _cached_plan(*args):
    return _DwPlan(*args)


def _dw_plan(n, c, size, pads, ksize, stride, dilation, out_size, itemsize):
    """The :class:`_DwPlan` of a layer geometry, made once per geometry (a network runs the
    same few geometries every step; a plan is read-only once made)."""
    return _cached_plan(int(n), int(c), _key(size), _key(pads), _key(ksize), _key(stride),
                        _key(dilation), _key(out_size), int(itemsize))


def _key(v):
    """Nested sequences of ints as nested tuples (hashable)."""
    return tuple(_key(e) if isinstance(e, (list, tuple)) else int(e) for e in v)


def _dw_blocks(plan, n, c, nbytes, body, by_channel=False):
    """Run ``body(blocks)`` over the plan's blocks, shared out over the CPU thread pool.

    Each piece gets a contiguous share of the blocks (and makes its own scratch). With
    ``by_channel`` a channel range's blocks all go to one piece, in order, so sums over the
    batch's blocks are added in the same order as on one thread.
    """
    blocks = list(plan.blocks(n, c))
    if by_channel:
        groups = {}
        for blk in blocks:
            groups.setdefault(blk[2], []).append(blk)
        units = list(groups.values())
    else:
        units = [[blk] for blk in blocks]
    k = _threads.parts(nbytes, len(units))
    if k == 1:
        body(blocks)
        return
    _threads.run(body, [([blk for u in units[lo:hi] for blk in u],)
                        for lo, hi in _threads.ranges(len(units), k)])


def _dw_out(shape, dtype, cl):
    """An uninitialised logical ``[N, C, *S]`` array, channels last in memory with ``cl``."""
    if cl:
        return np.moveaxis(np.empty((shape[0], *shape[2:], shape[1]), dtype=dtype), -1, 1)
    return np.empty(shape, dtype=dtype)


def _dw_weights(w, c, dt):
    """``[m, K, C]``: each tap's channel weights as a contiguous vector."""
    m = w.shape[0] // c
    return np.ascontiguousarray(w.reshape(c, m, -1).transpose(1, 2, 0), dtype=dt)


def _unpadded(padded_shape, pads):
    return tuple(p - lo - hi for p, (lo, hi) in zip(padded_shape[2:], pads))


# ---- channels-last taps for small planes
# On small planes (a network's late layers) the phase-plane runs carry mostly padding and the
# wide grid's extra columns (a 4x4 plane with padding 1 runs 6-wide rows over 36-pixel planes
# for 16 outputs). There the taps run channels last instead: x is copied once into a zeroed,
# padded ``[N, *Sp, C]`` array and each tap is one multiply-add over ``[N, *out, C]`` whose rows
# are C (or ``out[-1] * C``) contiguous values, with nothing computed outside the outputs.
# Measured on MobileNetV2's layers (one thread): 1.3-5x faster on output planes up to 8x8 from
# input planes up to 14x14 (the smaller, the more); on larger planes the two transposing copies
# (x in, the result out) cost more than the phase planes' waste and the blocked form is faster.
_DW_CL_MAX_OUT = tuning.value("depthwise.cl_max_out")
_DW_CL_MAX_PLANE = tuning.value("depthwise.cl_max_plane")
_DW_CL_MAX_PLANE_JIT = tuning.value("depthwise.cl_max_plane_jit")
_DW_PLANES_MIN_ROW = tuning.value("depthwise.planes_min_row")
# ... and their taps run with NumPy's small ufunc buffer (see small_ufunc_buffer) on output
# planes up to this many pixels: faster there (runs of a few hundred values), slower on larger
# ones
_DW_CL_SMALLBUF_MAX = tuning.value("depthwise.cl_smallbuf_max")


def _use_cl(size, out_size, m, jit=False):
    """Whether a depthwise layer (input plane ``size``, output plane ``out_size``, multiplier
    ``m``) runs channels last; ``jit``: as the compiled kernels (``_jit_dw``), which stay
    ahead on input planes up to 32x32 (a 16x16 plane at stride 2: 1.3x faster backward)."""
    limit = _DW_CL_MAX_PLANE_JIT if jit else _DW_CL_MAX_PLANE
    return m == 1 and math.prod(size) <= limit and math.prod(out_size) <= _DW_CL_MAX_OUT


def _use_planes(out_size, m, jit):
    """Whether a depthwise layer that does not run channels last runs as the compiled
    phase-plane kernels: rows of at least 16 outputs (on shorter ones the per-row work of the
    compiled loops costs more than NumPy's blocked passes)."""
    return jit and m == 1 and out_size[-1] >= _DW_PLANES_MIN_ROW


def _dw_method(a, w, stride, size, out_size, m, cl=False):
    """How a depthwise layer runs here: "channels-last" (:func:`_use_cl`), "phase-planes" (the
    compiled phase-plane kernels, :func:`_use_planes`) or "blocked" (NumPy's blocked passes on
    phase planes, :class:`_DwPlan`); ``a`` and ``w`` give the dtypes (see :func:`_jit_dw`).

    ``cl``: the layer's data is channels last in memory (an NHWC tensor, or a network that
    keeps channels last). The compiled channels-last kernels then run whatever the plane size:
    they are faster than the phase planes even before those transpose in and out (NHWC, batch
    16, forward and backward: 32x32 planes of 32 channels 5.8 -> 1.5 ms; 112x112 at batch 8
    31 -> 8.8 ms)."""
    jit = _jit_dw(a, w, stride)
    if _use_cl(size, out_size, m, jit) or (cl and jit and m == 1):
        return "channels-last"
    return "phase-planes" if _use_planes(out_size, m, jit) else "blocked"


def depthwise_method(x, w, stride, out_size, cl=False):
    """The form :func:`depthwise_forward` takes for ``x`` (``[N, C, *S]``) and ``w``
    (``[C*m, 1, *k]``): "channels-last", "phase-planes" or "blocked" (the plan's label);
    ``cl``: the data is channels last in memory (see :func:`_dw_method`)."""
    return _dw_method(x, w, stride, x.shape[2:], out_size, w.shape[0] // x.shape[1], cl)


def _cl_scope(out_size):
    """The FP-warning (and buffer) scope of the channels-last taps."""
    if math.prod(out_size) <= _DW_CL_SMALLBUF_MAX:
        return small_ufunc_buffer()
    return np.errstate(all="ignore")


def _cl_taps(ksize, stride, dilation, out_size):
    """Per tap, the index into a padded ``[N, *Sp, C]`` array of the pixels it reads."""
    return [(slice(None),) + tuple(slice(o * d, o * d + s * (n - 1) + 1, s)
                                   for o, d, s, n in zip(off, dilation, stride, out_size))
            for off in itertools.product(*[range(k) for k in ksize])]


def _cl_padded(x, pads):
    """A zeroed ``[N, *Sp, C]`` copy of ``[N, C, *S]`` x (any layout), padded by ``pads``."""
    n, c = x.shape[:2]
    size = x.shape[2:]
    xp = np.zeros((n, *[s + lo + hi for s, (lo, hi) in zip(size, pads)], c), dtype=x.dtype)
    inner = tuple(slice(lo, lo + s) for s, (lo, _) in zip(size, pads))
    np.copyto(xp[(slice(None),) + inner], np.moveaxis(x, 1, -1))
    return xp


def _cl_weights(w, c, width, dt):
    """``[K, width, C]``: each tap's channel weights repeated ``width`` times, so a stride-1 row
    of ``width * C`` values is one contiguous run against one contiguous run of weights."""
    wk = w.reshape(c, -1).T.astype(dt, copy=False)
    return np.ascontiguousarray(np.broadcast_to(wk[:, None, :], (wk.shape[0], width, c)))


def _cl_result(al, out_cl):
    """A logical ``[N, C, *S]`` result from a channels-last ``[N, *S, C]`` array: a view when
    the caller wants channels last, else a channel-first copy."""
    if out_cl:
        return np.moveaxis(np.ascontiguousarray(al), -1, 1)
    return np.ascontiguousarray(np.moveaxis(al, -1, 1))


def _in_layout(a, cl):
    """C-contiguous logical ``[N, C, *S]`` ``a`` laid out channels last in memory with ``cl``."""
    if not cl:
        return a
    out = _dw_out(a.shape, a.dtype, True)
    out[...] = a
    return out


def _jit_dw(a, w, stride):
    """Whether a depthwise layer runs as the compiled kernels (``_numba.depthwise``): 2-D,
    float32/float64, numba in use."""
    return len(stride) == 2 and w.dtype == a.dtype and _compiled(a)


def _cl_forward(x, w, stride, dilation, out_size, pads, out_cl):
    n, c = x.shape[:2]
    dt = x.dtype
    if _jit_dw(x, w, stride) and np.isfinite(w).all():
        # skipped padding taps: exact for finite weights (0 * inf is not added)
        res = _dw_out((n, c, *out_size), dt, out_cl)
        dst = np.moveaxis(res, 1, -1) if out_cl else np.empty((n, *out_size, c), dt)
        _numba.depthwise.cl_forward(np.ascontiguousarray(np.moveaxis(x, 1, -1)),
                                    _dw_weights(w, c, dt)[0], w.shape[2:], stride, dilation,
                                    pads, dst)
        return res if out_cl else _cl_result(dst, False)
    xp = _cl_padded(x, pads)
    wt = _cl_weights(w, c, out_size[-1], dt)
    acc = np.empty((n, *out_size, c), dtype=dt)
    tmp = np.empty_like(acc)
    # the last tap's add writes the result in its final layout (channel-first: the transposing
    # copy and the add are one pass)
    res = _dw_out((n, c, *out_size), dt, out_cl)
    taps = _cl_taps(w.shape[2:], stride, dilation, out_size)
    last = len(taps) - 1
    with _cl_scope(out_size):
        for k, sl in enumerate(taps):
            dst = np.moveaxis(res, 1, -1) if k == last else acc
            if k == 0:
                np.multiply(xp[sl], wt[0], out=dst)
            else:
                np.multiply(xp[sl], wt[k], out=tmp)
                np.add(acc, tmp, out=dst)
    return res


def _cl_input_grad(g, w, padded_shape, stride, dilation, pads, out_cl):
    n, c = padded_shape[:2]
    dt = g.dtype
    out_size = g.shape[2:]
    gl = np.ascontiguousarray(np.moveaxis(g, 1, -1))
    if _jit_dw(g, w, stride):
        size = _unpadded(padded_shape, pads)
        dx = _numba.depthwise.cl_input_grad(gl, _dw_weights(w, c, dt)[0], w.shape[2:], stride,
                                            dilation, pads, np.empty((n, *size, c), dt))
        return _cl_result(dx, out_cl)
    wt = _cl_weights(w, c, out_size[-1], dt)
    acc = np.zeros((n, *padded_shape[2:], c), dtype=dt)
    tmp = np.empty_like(gl)
    with _cl_scope(out_size):
        for k, sl in enumerate(_cl_taps(w.shape[2:], stride, dilation, out_size)):
            np.multiply(gl, wt[k], out=tmp)
            acc[sl] += tmp
    inner = tuple(slice(lo, p - hi) for p, (lo, hi) in zip(padded_shape[2:], pads))
    return _cl_result(acc[(slice(None),) + inner], out_cl)


def _cl_weight_grad(x, g, ksize, stride, dilation, pads):
    c = x.shape[1]
    dt = g.dtype
    out_size = g.shape[2:]
    if _jit_dw(g, x, stride):
        gw = _numba.depthwise.cl_weight_grad(np.ascontiguousarray(np.moveaxis(x, 1, -1)),
                                             np.ascontiguousarray(np.moveaxis(g, 1, -1)),
                                             ksize, stride, dilation, pads)
        if np.isfinite(gw).all():
            # (a non-finite g would meet the padding's zeros in the form below: redo it there)
            return np.ascontiguousarray(gw.T).astype(dt).reshape(c, 1, *ksize)
    xp = _cl_padded(x, pads)
    gl = np.ascontiguousarray(np.moveaxis(g, 1, -1))
    taps = _cl_taps(ksize, stride, dilation, out_size)
    gw = np.empty((len(taps), c), dtype=dt)
    # einsum's sum of products: one pass per tap, no product array (1.3-1.7x faster than a
    # multiply and a sum over the pixel axis, measured on MobileNetV2's small planes)
    spec = "".join(chr(ord("a") + i) for i in range(gl.ndim))
    spec = f"{spec},{spec}->{spec[-1]}"
    with np.errstate(all="ignore"):
        for k, sl in enumerate(taps):
            np.einsum(spec, xp[sl], gl, out=gw[k])
    return np.ascontiguousarray(gw.T).reshape(c, 1, *ksize)


def depthwise_forward(x, w, stride, dilation, out_size, pads, out_cl):
    """Depthwise conv (groups == C) of a non-empty ``x`` (``windows.depthwise_forward``
    describes the arguments), its taps run block by block on phase planes (:class:`_DwPlan`)
    so the data stays in cache, or channels last on small planes (:func:`_use_cl`)."""
    n, c = x.shape[:2]
    size = x.shape[2:]
    pads = ((0, 0),) * len(size) if pads is None else pads
    m = w.shape[0] // c
    method = _dw_method(x, w, stride, size, out_size, m, out_cl)
    if method == "channels-last":
        return _cl_forward(x, w, stride, dilation, out_size, pads, out_cl)
    dt = x.dtype
    if method == "phase-planes":
        out = np.empty((n, c, *out_size), dt)
        dw = _numba.depthwise
        dw.run(dw.dwp_forward, np.ascontiguousarray(x), w.reshape(c, -1).astype(dt),
               w.shape[2:], stride, dilation, pads, out, n * c)
        return _in_layout(out, out_cl)
    plan = _dw_plan(n, c, size, pads, w.shape[2:], stride, dilation, out_size, x.itemsize)
    wt = _dw_weights(w, c, dt)
    out = _dw_out((n, c * m, *out_size), dt, out_cl)
    out5 = out.reshape(n, c, m, *out_size)

    def body(blocks):
        xs = plan.planes(dt)
        acc, tmp = plan.runs(dt), plan.runs(dt)
        with small_ufunc_buffer():  # the wide grid's garbage columns may overflow: no warnings
            for n0, n1, c0, c1, r in blocks:
                bn, bc = n1 - n0, c1 - c0
                plan.load(xs, x[n0:n1, c0:c1])
                a, t = acc[:bc, :r], tmp[:bc, :r]
                for j in range(m):
                    for i, (ph, st) in enumerate(plan.taps):
                        src = xs[:bc, ph, st:st + r]
                        wi = wt[j, i, c0:c1, None]
                        if i == 0:
                            np.multiply(src, wi, out=a)
                        else:
                            np.multiply(src, wi, out=t)
                            a += t
                    np.copyto(out5[n0:n1, c0:c1, j], plan.outputs(acc, bn, bc))

    _dw_blocks(plan, n, c, x.nbytes + out.nbytes, body)
    return out


def depthwise_input_grad(g, w, padded_shape, stride, dilation, pads, out_cl):
    """The input gradient of :func:`depthwise_forward` for a non-empty ``g``
    (``windows.depthwise_input_grad`` describes the arguments), or None for non-finite
    weights on planes that run blocked: the blocked form multiplies w by the zeros of the wide
    grid's extra columns and adds them to real pixels, which is exact only for finite weights
    (the channels-last form computes nothing outside the real pixels)."""
    n, c = padded_shape[:2]
    pads = ((0, 0),) * (len(padded_shape) - 2) if pads is None else pads
    size = _unpadded(padded_shape, pads)
    m = w.shape[0] // c
    method = _dw_method(g, w, stride, size, g.shape[2:], m, out_cl)
    if method == "channels-last":
        return _cl_input_grad(g, w, padded_shape, stride, dilation, pads, out_cl)
    if method == "phase-planes":
        dx = np.empty((n, c, *size), g.dtype)
        dw = _numba.depthwise
        dw.run(dw.dwp_input_grad, np.ascontiguousarray(g), w.reshape(c, -1).astype(g.dtype),
               w.shape[2:], stride, dilation, pads, dx, n * c)
        return _in_layout(dx, out_cl)
    if not np.isfinite(w).all():
        return None
    out_size = g.shape[2:]
    dt = g.dtype
    plan = _dw_plan(n, c, size, pads, w.shape[2:], stride, dilation, out_size, g.itemsize)
    wt = _dw_weights(w, c, dt)
    g5 = g.reshape(n, c, m, *out_size)
    dx = _dw_out((n, c, *size), dt, out_cl)

    def body(blocks):
        gs = plan.runs(dt, zero=True)  # the wide grid: zero in the extra columns, never written
        tmp = plan.runs(dt)
        acc = plan.planes(dt)
        with small_ufunc_buffer():  # the wide grid's garbage columns may overflow: no warnings
            for n0, n1, c0, c1, r in blocks:
                bn, bc = n1 - n0, c1 - c0
                a, t, gb = acc[:bc], tmp[:bc, :r], gs[:bc, :r]
                a.fill(0)
                for j in range(m):
                    np.copyto(plan.outputs(gs, bn, bc), g5[n0:n1, c0:c1, j])
                    for i, (ph, st) in enumerate(plan.taps):
                        np.multiply(gb, wt[j, i, c0:c1, None], out=t)
                        a[:, ph, st:st + r] += t
                plan.store(dx[n0:n1, c0:c1], acc)

    _dw_blocks(plan, n, c, g.nbytes + dx.nbytes, body)
    return dx


def depthwise_weight_grad(x, g, ksize, stride, dilation, pads, cl=False):
    """The weight gradient of :func:`depthwise_forward` for a non-empty ``g``
    (``windows.depthwise_weight_grad`` describes the arguments), or None where a non-finite
    value makes the blocked sum inexact (the channels-last form on small planes is exact)."""
    n, c = x.shape[:2]
    size = x.shape[2:]
    pads0 = ((0, 0),) * len(size) if pads is None else pads
    m = g.shape[1] // c
    method = _dw_method(g, x, stride, size, g.shape[2:], m, cl)
    if method == "channels-last":
        return _cl_weight_grad(x, g, ksize, stride, dilation, pads0)
    out_size = g.shape[2:]
    dt = g.dtype
    if method == "phase-planes":
        dw = _numba.depthwise
        gw = dw.run(dw.dwp_weight_grad, np.ascontiguousarray(x), np.ascontiguousarray(g),
                    ksize, stride, dilation, pads0, np.empty((c, math.prod(ksize))), c)
        return gw.astype(dt).reshape(c, 1, *ksize)
    plan = _dw_plan(n, c, size, pads0, ksize, stride, dilation, out_size, g.itemsize)
    g5 = g.reshape(n, c, m, *out_size)
    gw = np.zeros((m, len(plan.taps), c), dtype=dt)

    def body(blocks):
        xs = plan.planes(dt)
        gs = plan.runs(dt, zero=True)
        with np.errstate(all="ignore"):  # non-finite sums are redone by the caller
            for n0, n1, c0, c1, r in blocks:
                bn, bc = n1 - n0, c1 - c0
                plan.load(xs, x[n0:n1, c0:c1])
                gb = gs[:bc, :r, None]
                for j in range(m):
                    np.copyto(plan.outputs(gs, bn, bc), g5[n0:n1, c0:c1, j])
                    for i, (ph, st) in enumerate(plan.taps):
                        # one dot product per channel (BLAS): 3-4x faster than multiply and sum
                        gw[j, i, c0:c1] += np.matmul(xs[:bc, ph, None, st:st + r], gb)[:, 0, 0]

    _dw_blocks(plan, n, c, x.nbytes + g.nbytes, body, by_channel=True)
    gw = gw.transpose(2, 0, 1).reshape(c * m, 1, *ksize)
    if not np.isfinite(gw).all():
        # the wide grid's extra columns multiply zero by pixels that no output of that tap
        # reads: a non-finite one there would turn a finite sum into NaN; the generic loop
        # redoes it exactly
        return None
    return gw


# ---------------------------------------------------------------------------- devices
# The host is this backend's one device (index 0): the device functions below give the CPU
# meaning of the GPU backend's (nothing to select, nothing queued, no pool to report).

def device_count():
    """The number of devices of this backend: 1 (the host)."""
    return 1


def current_device():
    """The index of the current device: 0 (the host)."""
    return 0


def use_device(index):
    """Nothing to select on the host; ``index`` must be 0."""
    if index != 0:
        raise ValueError(f"use_device: the CPU backend has one device (index 0), got {index}")


def device_of(arr):
    """The device holding ``arr``: 0 (the host)."""
    return 0


def to_device(arr, index):
    """``arr`` in host memory (a device-to-host copy for another backend's array)."""
    use_device(index)
    return arr if type(arr) is np.ndarray else to_numpy(arr)


def synchronize(index):
    """Nothing to wait for: NumPy runs each operation to completion before returning."""
    use_device(index)


def memory_stats(index):
    """``(0, 0)``: NumPy allocates through the C heap, with no pool to report."""
    use_device(index)
    return 0, 0


def empty_cache():
    """Nothing to release: NumPy keeps no memory pool."""


def device_properties(index):
    """None: the host has no GPU properties."""
    use_device(index)
    return None


def compute_capability(index):
    """None: compute capability is a GPU notion."""
    use_device(index)
    return None


# ---------------------------------------------------------------------------- timing events

def record_event():
    """A point in the host's timeline (``time.perf_counter``); on the CPU work is done when
    the call that queued it returns, so host time is device time."""
    return time.perf_counter()


def event_seconds(start, end):
    """Seconds between two points of :func:`record_event`."""
    return end - start


# ---------------------------------------------------------------------------- DLPack

def to_dlpack(arr):
    """A DLPack capsule of ``arr`` (a copy when it is read-only, which NumPy will not export);
    TypeError for bfloat16, which NumPy's DLPack export does not support."""
    if arr.dtype.name == "bfloat16":
        raise TypeError("to_dlpack: NumPy cannot export bfloat16 tensors through DLPack; cast "
                        "the tensor (x.astype('float32')) or view its bits as uint16 first")
    if not arr.flags.writeable:
        arr = arr.copy()
    return arr.__dlpack__()


def from_dlpack(obj):
    """A NumPy array sharing the host memory of a ``__dlpack__`` object."""
    return np.from_dlpack(obj)


# ---------------------------------------------------------------------------- random numbers

def seeded_draws(seed, device_index, private):
    """A ``numpy.random.Generator`` (PCG64) seeded with ``seed``; always a fresh one, so
    ``private`` changes nothing on the host."""
    use_device(device_index)
    return np.random.Generator(np.random.PCG64(seed))


# ---------------------------------------------------------------------------- sparse products
# None: the sparse module's own CPU kernels run (SciPy when installed, else NumPy segment sums).

def csr_dense(vals, crows, cols, m, n, y):
    """None: ``paddle_hl.sparse`` computes ``A @ y`` on the CPU itself."""
    return None


def csr_t_dense(vals, crows, cols, m, n, g):
    """None: ``paddle_hl.sparse`` computes ``A.T @ g`` on the CPU itself."""
    return None


def csr_csr(av, acr, acol, bv, bcr, bcol, m, k, n):
    """None: ``paddle_hl.sparse`` computes ``A @ B`` on the CPU itself."""
    return None
