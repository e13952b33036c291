"""NumPy (CPU) kernels for the window ops: im2col/col2im, pooling windows, scatter-add.

Every function works on *logical channel-first* arrays ``[N, C, *spatial]`` of any memory layout
(a channels-last tensor is passed as a transposed view, so no copy is made to change layout). The
heavy lifting is either one strided-view copy (``as_strided`` + ``ascontiguousarray``: one NumPy
call, no Python loop over pixels) or a loop over the *kernel offsets* (``prod(ksize)`` iterations,
each one vectorised over batch, channels and output pixels) where windows overlap and values must
be accumulated. ``backend/_cupy.py`` provides the same names for CuPy arrays.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import math
import os
import sys

import numpy as np
from numpy.lib.stride_tricks import as_strided

__all__ = []

xp = np

# glibc mallopt parameters
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = 32 << 20
_TRIM_THRESHOLD = 1 << 30
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
    if (env.get("PADDLE_HL_MALLOC_TUNING", "1") == "0" or not sys.platform.startswith("linux")
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


# The GPU kernel module: backend/_cupy.py builds on this one and registers itself here when
# backend.cupy_module() loads it, so this module never imports it back.
_gpu_kernels = None


def for_array(arr):
    """The kernel module for ``arr``: this one for NumPy arrays, ``_cupy`` for CuPy arrays."""
    if type(arr) is np.ndarray or isinstance(arr, np.ndarray):
        return _this
    return _gpu_kernels


def out_slices(offset, stride, dilation, out_size):
    """Index tuple selecting, in a padded ``[N, C, *Sp]`` array, the input pixel that kernel
    offset ``offset`` reads for every output pixel (a strided slice per spatial dim)."""
    return (slice(None), slice(None)) + tuple(
        slice(o * d, o * d + s * (n - 1) + 1, s)
        for o, d, s, n in zip(offset, dilation, stride, out_size))


def kernel_offsets(ksize):
    """All kernel offsets in row-major order (the order of Paddle's ``[*k]`` weight dims)."""
    return itertools.product(*[range(k) for k in ksize])


def pad(x, pads, value=0):
    """Pad the spatial dims of ``x`` ([N, C, *S], any layout) by ``pads`` ((lo, hi) per dim).

    Returns a new C-contiguous array; only the border slabs are filled with ``value`` (the
    interior is written once by the copy), so it costs one pass over the data. Negative
    ``hi`` entries crop.
    """
    mod = for_array(x).xp
    if not any(lo or hi for lo, hi in pads):
        return mod.ascontiguousarray(x)
    src = [slice(None), slice(None)]
    shape = list(x.shape[:2])
    for (lo, hi), n in zip(pads, x.shape[2:]):
        src.append(slice(0, n + min(hi, 0)))
        shape.append(n + lo + hi)
    out = mod.empty(shape, dtype=x.dtype)
    dst = [slice(None), slice(None)]
    for i, ((lo, hi), n) in enumerate(zip(pads, shape[2:])):
        dst.append(slice(lo, n - max(hi, 0)))
        if lo:
            out[(slice(None),) * (2 + i) + (slice(0, lo),)] = value
        if hi > 0:
            out[(slice(None),) * (2 + i) + (slice(n - hi, n),)] = value
    out[tuple(dst)] = x[tuple(src)]
    return out


def crop(xpad, pads, size):
    """The interior ``[N, C, *size]`` view of a padded array (inverse of :func:`pad`)."""
    return xpad[(slice(None), slice(None)) + tuple(
        slice(lo, lo + n) for (lo, _), n in zip(pads, size))]


def windows(xpad, ksize, stride, dilation, out_size, order="kn"):
    """A strided *view* of every sliding window of ``xpad`` ([N, C, *Sp]).

    ``order="kn"`` gives ``[C, *k, N, *out]`` (the im2col layout: the window elements become
    GEMM rows and the output pixels of the whole batch GEMM columns); ``order="nk"`` gives
    ``[N, C, *out, *k]`` (the pooling layout). Nothing is copied.
    """
    st = xpad.strides
    sn, sc, ss = st[0], st[1], st[2:]
    kstr = tuple(s * d for s, d in zip(ss, dilation))
    ostr = tuple(s * t for s, t in zip(ss, stride))
    n, c = xpad.shape[:2]
    if order == "kn":
        shape = (c, *ksize, n, *out_size)
        strides = (sc, *kstr, sn, *ostr)
    else:
        shape = (n, c, *out_size, *ksize)
        strides = (sn, sc, *ostr, *kstr)
    return for_array(xpad)._as_strided(xpad, shape, strides)


def _as_strided(a, shape, strides):
    return as_strided(a, shape=shape, strides=strides, writeable=False)


def im2col(xpad, ksize, stride, dilation, out_size, groups=1):
    """Unfold ``xpad`` ([N, C, *Sp]) into the GEMM operand ``[groups, C/groups * prod(k),
    N * prod(out)]`` (C-contiguous): one strided-view copy."""
    mod = for_array(xpad).xp
    c = xpad.shape[1]
    cols = mod.ascontiguousarray(windows(xpad, ksize, stride, dilation, out_size, "kn"))
    return cols.reshape(groups, c // groups * math.prod(ksize), -1)


def col2im(cols, padded_shape, ksize, stride, dilation, out_size):
    """Fold columns back, summing overlaps: the adjoint of :func:`im2col`.

    Args:
        cols: ``[C * prod(k), N * prod(out)]`` (any leading split of the first dim, e.g. the
            ``[groups, C/groups * prod(k), ...]`` of im2col) in the layout ``[C, *k, N, *out]``.
        padded_shape: ``[N, C, *Sp]`` of the result.

    Returns:
        ``[N, C, *Sp]`` (a logical view of a ``[C, N, *Sp]`` array).
    """
    mod = for_array(cols).xp
    n, c = padded_shape[:2]
    cols = cols.reshape(c, *ksize, n, *out_size)
    acc = mod.zeros((c, n, *padded_shape[2:]), dtype=cols.dtype)
    # one vectorised strided add per kernel offset: windows overlap, so a single assignment
    # through a strided view would drop the overlapping contributions
    for off in kernel_offsets(ksize):
        acc[out_slices(off, stride, dilation, out_size)] += cols[(slice(None),) + off]
    return acc.swapaxes(0, 1)


def im2col_nin(x, ksize, stride, dilation, pads, out_size, groups=1):
    """im2col with the batch innermost: ``[groups, C/groups * prod(k), prod(out) * N]``.

    ``x`` ([N, C, *S], any layout) is copied once, padded, into ``[C, *Sp, N]``; every window
    row then reads runs of ``out[-1] * N`` contiguous values (``N`` for a strided last dim)
    instead of ``out[-1]``, which makes the column copy several times faster for the small
    planes of a CNN's deeper layers. The GEMM result comes out as ``[O, *out, N]``.
    """
    mod = for_array(x).xp
    n, c = x.shape[:2]
    size = x.shape[2:]
    psz = tuple(s + lo + hi for s, (lo, hi) in zip(size, pads))
    if any(lo or hi for lo, hi in pads):
        xt = mod.zeros((c, *psz, n), dtype=x.dtype)
        xt[(slice(None),) + tuple(slice(lo, lo + s) for s, (lo, _) in zip(size, pads))
           + (slice(None),)] = mod.moveaxis(x, 0, -1)
    else:
        xt = mod.ascontiguousarray(mod.moveaxis(x, 0, -1))
    st = xt.strides
    sp = st[1:-1]
    shape = (c, *ksize, *out_size, n)
    strides = (st[0], *(s * d for s, d in zip(sp, dilation)),
               *(s * t for s, t in zip(sp, stride)), st[-1])
    cols = mod.ascontiguousarray(for_array(x)._as_strided(xt, shape, strides))
    return cols.reshape(groups, c // groups * math.prod(ksize), -1)


def col2im_nin(cols, padded_shape, ksize, stride, dilation, out_size):
    """The adjoint of :func:`im2col_nin` (before cropping): columns ``[C * prod(k),
    prod(out) * N]`` (any leading split) summed into a logical ``[N, C, *Sp]`` view of a
    ``[C, *Sp, N]`` array, one add of long runs per kernel offset."""
    mod = for_array(cols).xp
    n, c = padded_shape[:2]
    cols = cols.reshape(c, math.prod(ksize), *out_size, n)
    acc = mod.zeros((c, *padded_shape[2:], n), dtype=cols.dtype)
    for j, off in enumerate(kernel_offsets(ksize)):
        acc[out_slices(off, stride, dilation, out_size)[1:] + (slice(None),)] += cols[:, j]
    return mod.moveaxis(acc, -1, 0)


def col2im_flat(cols, padded_shape, ksize, dilation, out_size):
    """:func:`col2im` for stride 1, on flattened planes: one contiguous run per kernel offset,
    channel and sample (instead of one short run per output row).

    Args:
        cols: ``[C * prod(k), N * o1 * prod(Sp[1:])]`` (any leading split of the first dim) in
            the layout ``[C, *k, N, o1, *Sp[1:]]``: the columns of an output grid as wide as the
            padded plane in every dim but the first, **zero** beyond ``out_size`` (the caller
            zero-pads the output gradient before the GEMM).
        padded_shape: ``[N, C, *Sp]`` of the result.

    Returns:
        ``[N, C, *Sp]`` (a logical view of a ``[C, N, plane]`` array).

    In the flattened plane, output pixel ``p`` (row-major over the wide grid) of kernel offset
    ``off`` lands at ``p + sum(off_i * d_i * S_i)`` (``S_i`` the plane's row strides), so each
    offset adds one slice. The zero columns run past row ends into the next row (or into a
    small tail), adding nothing.
    """
    mod = for_array(cols).xp
    n, c = padded_shape[:2]
    sp = padded_shape[2:]
    rs = [math.prod(sp[i + 1:]) for i in range(len(sp))]
    plane = math.prod(sp)
    run = out_size[0] * rs[0]
    tail = sum((k - 1) * d * r for k, d, r in zip(ksize[1:], dilation[1:], rs[1:]))
    acc = mod.zeros((c, n, plane + tail), dtype=cols.dtype)
    cols = cols.reshape(c, math.prod(ksize), n, run)
    for j, off in enumerate(kernel_offsets(ksize)):
        start = sum(o * d * r for o, d, r in zip(off, dilation, rs))
        acc[:, :, start:start + run] += cols[:, j]
    return acc[:, :, :plane].reshape(c, n, *sp).swapaxes(0, 1)


# --------------------------------------------------------------------------- depthwise
# NumPy runs the depthwise kernels block by block on phase planes (see _DwPlan); CuPy (and
# the rare non-finite cases noted below) use the whole-array loop over kernel taps.

# scratch bytes of the input planes of one block; the run accumulators are about as large
# (measured on MobileNetV2's layers, batch 8: 1 MiB beat 256 KiB and 4 MiB)
_DW_BLOCK_BYTES = 1 << 20
# NumPy >= 2.3 copies the operands of a strided 2-D ufunc call into its buffers when their rows
# are shorter than the ufunc buffer (8192 elements): 3-4x slower on the runs here, which are a
# few hundred to a few thousand long. The kernels run with a buffer this small (see
# :func:`small_ufunc_buffer`): none of their calls casts, so none needs a buffer
_DW_BUFSIZE = 16


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


def _whole_forward(xpad, w, stride, dilation, out_size):
    """:func:`depthwise_forward` on the padded input, one strided multiply-add per tap over the
    whole batch (CuPy's path, and the reference the blocked NumPy form matches)."""
    mod = for_array(xpad).xp
    n, c = xpad.shape[:2]
    m = w.shape[0] // c
    nd = len(out_size)
    wk = w.reshape(c, m, -1)
    out = mod.zeros((n, c, m, *out_size), dtype=xpad.dtype)
    tmp = mod.empty_like(out)
    expand = (slice(None),) * 2 + (None,) + (slice(None),) * nd
    for j, off in enumerate(kernel_offsets(w.shape[2:])):
        xs = xpad[out_slices(off, stride, dilation, out_size)][expand]
        mod.multiply(xs, wk[:, :, j].reshape((1, c, m) + (1,) * nd), out=tmp)
        out += tmp
    return out.reshape(n, c * m, *out_size)


def _whole_input_grad(g, w, padded_shape, stride, dilation):
    """:func:`depthwise_input_grad` as one strided add per tap over the whole batch:
    ``[N, C, *Sp]``."""
    mod = for_array(g).xp
    n, c = padded_shape[:2]
    m = w.shape[0] // c
    out_size = g.shape[2:]
    nd = len(out_size)
    wk = w.reshape(c, m, -1)
    g5 = g.reshape(n, c, m, *out_size)
    acc = mod.zeros(padded_shape, dtype=g.dtype)
    for j, off in enumerate(kernel_offsets(w.shape[2:])):
        wj = wk[:, :, j].reshape((1, c, m) + (1,) * nd)
        contrib = (g5 * wj).sum(axis=2) if m > 1 else g5[:, :, 0] * wj[:, :, 0]
        acc[out_slices(off, stride, dilation, out_size)] += contrib
    return acc


def _whole_weight_grad(xpad, g, ksize, stride, dilation):
    """:func:`depthwise_weight_grad` as one product and reduction per tap over the whole batch."""
    mod = for_array(xpad).xp
    n, c = xpad.shape[:2]
    out_size = g.shape[2:]
    m = g.shape[1] // c
    nd = len(out_size)
    g5 = g.reshape(n, c, m, *out_size)
    red = (0,) + tuple(range(3, 3 + nd))
    gw = mod.empty((c, m, math.prod(ksize)), dtype=g.dtype)
    for j, off in enumerate(kernel_offsets(ksize)):
        xs = xpad[out_slices(off, stride, dilation, out_size)]
        gw[:, :, j] = (g5 * xs[:, :, None]).sum(axis=red)
    return gw.reshape(c * m, 1, *ksize)


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
        for off in kernel_offsets(ksize):
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


def depthwise_forward(x, w, stride, dilation, out_size, pads=None, out_cl=False):
    """Depthwise conv (groups == C, one input channel per group): ``w`` is ``[C*m, 1, *k]``.

    A grouped GEMM would run C tiny products of inner size prod(k); a multiply-add per kernel
    tap is much faster. On NumPy the taps run block by block on phase planes (:class:`_DwPlan`),
    so the data stays in cache; on CuPy one strided multiply-add per tap covers the batch.

    Args:
        x: ``[N, C, *S]`` (any layout): the padded input, or the input to pad by ``pads``
            (``(lo, hi)`` per spatial dim) when given.
        w: ``[C*m, 1, *k]``.
        stride, dilation, out_size: per spatial dim.
        pads: see ``x``.
        out_cl: lay the result out channels last in memory (NumPy; a logical view).

    Returns:
        ``[N, C*m, *out]``.
    """
    if not isinstance(x, np.ndarray) or x.size == 0:
        return _whole_forward(x if pads is None else pad(x, pads), w, stride, dilation,
                              out_size)
    n, c = x.shape[:2]
    size = x.shape[2:]
    pads = ((0, 0),) * len(size) if pads is None else pads
    m = w.shape[0] // c
    dt = x.dtype
    plan = _DwPlan(n, c, size, pads, w.shape[2:], stride, dilation, out_size, x.itemsize)
    wt = _dw_weights(w, c, dt)
    xs = plan.planes(dt)
    acc, tmp = plan.runs(dt), plan.runs(dt)
    out = _dw_out((n, c * m, *out_size), dt, out_cl)
    out5 = out.reshape(n, c, m, *out_size)
    with small_ufunc_buffer():  # the wide grid's garbage columns may overflow: no warnings
        for n0, n1, c0, c1, r in plan.blocks(n, c):
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
    return out


def depthwise_input_grad(g, w, padded_shape, stride, dilation, pads=None, out_cl=False):
    """Adjoint of :func:`depthwise_forward` w.r.t. its input.

    Args:
        g: ``[N, C*m, *out]`` (any layout), the output gradient.
        w: ``[C*m, 1, *k]``.
        padded_shape: ``[N, C, *Sp]``, the padded input's shape.
        stride, dilation: per spatial dim.
        pads: when given, the padding included in ``padded_shape``: the result is cropped to
            the unpadded input.
        out_cl: lay the result out channels last in memory (NumPy; a logical view).

    Returns:
        ``[N, C, *Sp]``, or ``[N, C, *S]`` with ``pads``.
    """
    if not isinstance(g, np.ndarray) or g.size == 0 or not np.isfinite(w).all():
        # the blocked form multiplies w by the zeros of the wide grid's extra columns and adds
        # them to real pixels: exact only for finite weights
        acc = _whole_input_grad(g, w, padded_shape, stride, dilation)
        return acc if pads is None else crop(acc, pads, _unpadded(padded_shape, pads))
    n, c = padded_shape[:2]
    pads = ((0, 0),) * (len(padded_shape) - 2) if pads is None else pads
    size = _unpadded(padded_shape, pads)
    m = w.shape[0] // c
    out_size = g.shape[2:]
    dt = g.dtype
    plan = _DwPlan(n, c, size, pads, w.shape[2:], stride, dilation, out_size, g.itemsize)
    wt = _dw_weights(w, c, dt)
    gs = plan.runs(dt, zero=True)  # the wide grid: zero in the extra columns, never written
    tmp = plan.runs(dt)
    acc = plan.planes(dt)
    g5 = g.reshape(n, c, m, *out_size)
    dx = _dw_out((n, c, *size), dt, out_cl)
    with small_ufunc_buffer():  # the wide grid's garbage columns may overflow: no warnings
        for n0, n1, c0, c1, r in plan.blocks(n, c):
            bn, bc = n1 - n0, c1 - c0
            a, t, gb = acc[:bc], tmp[:bc, :r], gs[:bc, :r]
            a.fill(0)
            for j in range(m):
                np.copyto(plan.outputs(gs, bn, bc), g5[n0:n1, c0:c1, j])
                for i, (ph, st) in enumerate(plan.taps):
                    np.multiply(gb, wt[j, i, c0:c1, None], out=t)
                    a[:, ph, st:st + r] += t
            plan.store(dx[n0:n1, c0:c1], acc)
    return dx


def depthwise_weight_grad(x, g, ksize, stride, dilation, pads=None):
    """Adjoint of :func:`depthwise_forward` w.r.t. its weight: ``[C*m, 1, *k]``.

    Args:
        x: ``[N, C, *S]`` (any layout): the padded input, or the input to pad by ``pads``.
        g: ``[N, C*m, *out]`` (any layout), the output gradient.
        ksize, stride, dilation: per spatial dim.
        pads: see ``x``.

    Returns:
        ``[C*m, 1, *k]``.
    """
    if not isinstance(x, np.ndarray) or g.size == 0:
        return _whole_weight_grad(x if pads is None else pad(x, pads), g, ksize, stride,
                                  dilation)
    n, c = x.shape[:2]
    size = x.shape[2:]
    pads0 = ((0, 0),) * len(size) if pads is None else pads
    m = g.shape[1] // c
    out_size = g.shape[2:]
    dt = g.dtype
    plan = _DwPlan(n, c, size, pads0, ksize, stride, dilation, out_size, g.itemsize)
    xs = plan.planes(dt)
    gs = plan.runs(dt, zero=True)
    g5 = g.reshape(n, c, m, *out_size)
    gw = np.zeros((m, len(plan.taps), c), dtype=dt)
    with np.errstate(all="ignore"):  # non-finite sums are redone below
        for n0, n1, c0, c1, r in plan.blocks(n, c):
            bn, bc = n1 - n0, c1 - c0
            plan.load(xs, x[n0:n1, c0:c1])
            gb = gs[:bc, :r, None]
            for j in range(m):
                np.copyto(plan.outputs(gs, bn, bc), g5[n0:n1, c0:c1, j])
                for i, (ph, st) in enumerate(plan.taps):
                    # one dot product per channel (BLAS): 3-4x faster than multiply and sum
                    gw[j, i, c0:c1] += np.matmul(xs[:bc, ph, None, st:st + r], gb)[:, 0, 0]
    gw = gw.transpose(2, 0, 1).reshape(c * m, 1, *ksize)
    if not np.isfinite(gw).all():
        # the wide grid's extra columns multiply zero by pixels that no output of that tap
        # reads: a non-finite one there would turn a finite sum into NaN; redo it exactly
        return _whole_weight_grad(x if pads is None else pad(x, pads), g, ksize, stride,
                                  dilation)
    return gw


def _arg_dtype(ksize):
    n = math.prod(ksize)
    return np.int8 if n <= 127 else (np.int16 if n <= 32767 else np.int32)


def max_pool(xpad, ksize, stride, out_size, want_arg=True):
    """Max over windows (no dilation) of a padded ``[N, C, *Sp]`` array.

    A running maximum over the kernel offsets (prod(k) vectorised passes over the output) beats
    copying every window out and reducing it. Returns ``(out, arg)``: ``arg`` (or None) is the
    kernel offset of the first maximum of each window (Paddle's tie rule), as a small int.
    The offset is updated with integer arithmetic, ``arg += (v > out) * (j - arg)``, on
    preallocated buffers: three passes over one-byte data are several times cheaper than a
    masked ``copyto``.
    """
    mod = for_array(xpad).xp
    one = (1,) * len(ksize)
    adt = _arg_dtype(ksize)
    out = arg = gt = tmp = None
    for j, off in enumerate(kernel_offsets(ksize)):
        v = xpad[out_slices(off, stride, one, out_size)]
        if out is None:
            out = v.copy()
            if want_arg:
                arg = mod.zeros(out.shape, dtype=adt)
                gt = mod.empty(out.shape, dtype=np.bool_)
                tmp = mod.empty(out.shape, dtype=adt)
            continue
        if want_arg:
            mod.greater(v, out, out=gt)
            mod.subtract(adt(j), arg, out=tmp)
            mod.multiply(tmp, gt, out=tmp)
            arg += tmp
        mod.maximum(out, v, out=out)
    return out, arg


def max_pool_grad(g, arg, padded_shape, ksize, stride):
    """Route each output gradient to the input pixel its window's maximum came from."""
    mod = for_array(g).xp
    out_size = g.shape[2:]
    one = (1,) * len(ksize)
    acc = mod.zeros(padded_shape, dtype=g.dtype)
    hit = mod.empty(g.shape, dtype=np.bool_)
    part = mod.empty(g.shape, dtype=g.dtype)
    overlap = any(s < k for s, k in zip(stride, ksize))
    for j, off in enumerate(kernel_offsets(ksize)):
        mod.equal(arg, j, out=hit)
        mod.multiply(g, hit, out=part)
        sl = out_slices(off, stride, one, out_size)
        if overlap:
            acc[sl] += part
        else:  # windows do not overlap: each slice receives its share directly
            acc[sl] = part
    return acc


def sum_pool(xpad, ksize, stride, out_size):
    """Sum over windows (no dilation) of a padded ``[N, C, *Sp]`` array."""
    one = (1,) * len(ksize)
    out = None
    for off in kernel_offsets(ksize):
        v = xpad[out_slices(off, stride, one, out_size)]
        if out is None:
            out = v.copy()
        else:
            out += v
    return out


def sum_pool_grad(g, padded_shape, ksize, stride):
    """Adjoint of :func:`sum_pool`: every window pixel receives its output's gradient."""
    mod = for_array(g).xp
    out_size = g.shape[2:]
    one = (1,) * len(ksize)
    acc = mod.zeros(padded_shape, dtype=g.dtype)
    overlap = any(s < k for s, k in zip(stride, ksize))
    for off in kernel_offsets(ksize):
        sl = out_slices(off, stride, one, out_size)
        if overlap:
            acc[sl] += g
        else:
            acc[sl] = g
    return acc


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


_this = sys.modules[__name__]
