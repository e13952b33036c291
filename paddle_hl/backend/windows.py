"""Sliding-window algorithms, written once for every backend.

Everything here works on raw arrays of any backend: the array module comes from
``get_array_module`` and the only backend-specific pieces (strided views, the blocked NumPy
depthwise kernels) come from the backend module that ``for_array`` chooses. The ops in
``nn/functional/conv.py`` and ``nn/functional/pooling.py`` wrap these into differentiable
ops with their backward and higher-order rules.

Windows: every function works on *logical channel-first* arrays ``[N, C, *spatial]`` of any
memory layout (a channels-last tensor is passed as a transposed view, so no copy is made to
change layout). The heavy lifting is either one strided-view copy (``as_strided`` +
``ascontiguousarray``: one call, no Python loop over pixels) or a loop over the *kernel
offsets* (``prod(ksize)`` iterations, each one vectorised over batch, channels and output
pixels) where windows overlap and values must be accumulated.

Convolution as im2col + GEMM. Three array kernels carry every convolution: the convolution (C),
its adjoint in the input (T, the transposed convolution) and its adjoint in the weight (W). Each
form below has its three (``pointwise_*``, ``im2col_*``, ``depthwise_*``, the direct and the
batch-innermost ones); which form a layer runs is chosen once per geometry by
``backend/plans.py`` (``plan_conv``), from the predicates here (``use_direct``, ``use_nin``,
``is_pointwise``, ``is_depthwise``, ``flat_ratio``, ``trim_taps``) and the thresholds of
``backend/tuning.py``.

Layout (measured on ResNet shapes, see the report in benchmarks): the input is unfolded with one
strided-view copy into ``cols = [groups, C/groups*prod(k), N*prod(out)]`` so that the whole batch
is ONE BLAS GEMM per group: ``w[O, C*k] @ cols``. The result ``[O, N, *out]`` is moved to
``[N, O, *out]`` in the same pass that adds the bias. The input gradient is ``w.T @ g`` followed
by col2im (one vectorised strided add per kernel offset); the weight gradient is ``g @ cols.T``
with the columns of the forward pass kept for it when they are small (up to ``_KEEP_COLS`` bytes;
larger ones are recomputed from x rather than holding ``prod(k)`` copies of every activation for
the whole backward pass). 1x1 convolutions on large planes skip im2col (a batched GEMM on x
itself) and depthwise convolutions use a multiply-add per kernel offset. Channels-last inputs are
handled as transposed views of the same algorithm.

Measured refinements used by the convolution op's training step:

- from batch 8 on, layers whose columns are large next to their output (every 3x3 layer of a
  ResNet, LeNet's second layer) use a batch-innermost layout: x is copied once into
  ``[C, *Sp, N]``, so the window copies (forward) and the col2im adds (input gradient) move runs
  of ``out[-1] * N`` values instead of ``out[-1]``; the GEMMs are the same (``use_nin``).
  When no gradient is wanted (inference), only the forward's copies count and the layout is
  kept for small stride-1 planes only.
- kernel taps that only ever read padding (a 3x3 kernel with padding 1 on a 1x1 plane, as in the
  last ResNet stage) are dropped before the GEMMs: they multiply zeros. Their weight gradient is
  zero.
- otherwise, with stride 1, the input gradient's col2im runs on flattened padded planes: the
  output gradient is laid out with the padded row width (zeros in the extra columns), so each
  kernel offset adds one contiguous run per (channel, sample) instead of one short run per
  output row. The GEMM grows by the padded/output width ratio, so this is used while that ratio
  is < 2.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from . import ascontiguous, compiled_kernels, for_array, get_array_module, kernel, split, tuning

__all__ = []

# the thresholds of the convolution's choices (backend/tuning.py says what each decides and
# the measurement behind it); read once, module globals for the hot paths
_KEEP_COLS = tuning.value("conv.keep_cols")
_POINTWISE_MIN = tuning.value("conv.pointwise_min")
_WIDE_MAX = tuning.value("conv.wide_max")
_NIN_MIN_BATCH = tuning.value("conv.nin_min_batch")
_NIN_FWD_MAX_PLANE = tuning.value("conv.nin_fwd_max_plane")
_DIRECT_MAX_TAPS = tuning.value("conv.direct_max_taps")
_GRAM_SWAP_MIN_LEN = tuning.value("conv.gram_swap_min_len")


# On NumPy the large copies and accumulations below are split over the channel (or batch) axis
# on the CPU thread pool (``backend.split``, ``backend.ascontiguous``); every piece computes
# its own elements in the same order as the whole would, so results do not depend on the
# number of threads. The backend's optional compiled kernels (``backend.kernel``) run where
# they apply; each answers None otherwise, and the generic forms here run.
def _compiled(name, a, *args):
    """The backend's optional kernel ``name`` on ``a`` and ``args``, or None where the backend
    has none or it does not apply."""
    fn = kernel(a, name)
    return None if fn is None else fn(a, *args)


# --------------------------------------------------------------------------- windows
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
    mod = get_array_module(x)
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
    dst, src = tuple(dst), tuple(src)

    def part(lo, hi):
        out[lo:hi][dst] = x[lo:hi][src]

    split(x, part, shape[0], 2 * x.nbytes)
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
    return for_array(xpad).as_strided(xpad, shape, strides)


def im2col(xpad, ksize, stride, dilation, out_size, groups=1):
    """Unfold ``xpad`` ([N, C, *Sp]) into the GEMM operand ``[groups, C/groups * prod(k),
    N * prod(out)]`` (C-contiguous): one strided-view copy."""
    c = xpad.shape[1]
    cols = ascontiguous(windows(xpad, ksize, stride, dilation, out_size, "kn"))
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
    mod = get_array_module(cols)
    n, c = padded_shape[:2]
    cols = cols.reshape(c, *ksize, n, *out_size)
    acc = mod.zeros((c, n, *padded_shape[2:]), dtype=cols.dtype)
    taps = [(out_slices(off, stride, dilation, out_size), (slice(None),) + off)
            for off in kernel_offsets(ksize)]

    # one vectorised strided add per kernel offset: windows overlap, so a single assignment
    # through a strided view would drop the overlapping contributions
    def part(lo, hi):
        a, cc = acc[lo:hi], cols[lo:hi]
        for dst, src in taps:
            a[dst] += cc[src]

    split(cols, part, c, 2 * cols.nbytes)
    return acc.swapaxes(0, 1)


def im2col_nin(x, ksize, stride, dilation, pads, out_size, groups=1):
    """im2col with the batch innermost: ``[groups, C/groups * prod(k), prod(out) * N]``.

    ``x`` ([N, C, *S], any layout) is copied once, padded, into ``[C, *Sp, N]``; every window
    row then reads runs of ``out[-1] * N`` contiguous values (``N`` for a strided last dim)
    instead of ``out[-1]``, which makes the column copy several times faster for the small
    planes of a CNN's deeper layers. The GEMM result comes out as ``[O, *out, N]``.
    """
    mod = get_array_module(x)
    n, c = x.shape[:2]
    size = x.shape[2:]
    psz = tuple(s + lo + hi for s, (lo, hi) in zip(size, pads))
    if any(lo or hi for lo, hi in pads):
        xt = mod.zeros((c, *psz, n), dtype=x.dtype)
        inner = tuple(slice(lo, lo + s) for s, (lo, _) in zip(size, pads)) + (slice(None),)
        src = mod.moveaxis(x, 0, -1)

        def part(lo, hi):
            xt[lo:hi][(slice(None),) + inner] = src[lo:hi]

        split(x, part, c, 2 * x.nbytes)
    else:
        xt = ascontiguous(mod.moveaxis(x, 0, -1))
    cols = _compiled("im2col_nin", xt, ksize, stride, dilation, out_size)
    if cols is not None:  # compiled: runs of out[-1] * N values
        return cols.reshape(groups, c // groups * math.prod(ksize), -1)
    st = xt.strides
    sp = st[1:-1]
    shape = (c, *ksize, *out_size, n)
    strides = (st[0], *(s * d for s, d in zip(sp, dilation)),
               *(s * t for s, t in zip(sp, stride)), st[-1])
    cols = ascontiguous(for_array(x).as_strided(xt, shape, strides))
    return cols.reshape(groups, c // groups * math.prod(ksize), -1)


def col2im_nin(cols, padded_shape, ksize, stride, dilation, out_size):
    """The adjoint of :func:`im2col_nin` (before cropping): columns ``[C * prod(k),
    prod(out) * N]`` (any leading split) summed into a logical ``[N, C, *Sp]`` view of a
    ``[C, *Sp, N]`` array, one add of long runs per kernel offset."""
    mod = get_array_module(cols)
    acc = _compiled("col2im_nin", cols, padded_shape, ksize, stride, dilation, out_size)
    if acc is not None:  # compiled (LeNet's second layer: 3.5x)
        return mod.moveaxis(acc, -1, 0)
    n, c = padded_shape[:2]
    cols = cols.reshape(c, math.prod(ksize), *out_size, n)
    acc = mod.zeros((c, *padded_shape[2:], n), dtype=cols.dtype)
    taps = [(slice(None),) + out_slices(off, stride, dilation, out_size)[2:] + (slice(None),)
            for off in kernel_offsets(ksize)]

    def part(lo, hi):
        a, cc = acc[lo:hi], cols[lo:hi]
        for j, dst in enumerate(taps):
            a[dst] += cc[:, j]

    split(cols, part, c, 2 * cols.nbytes)
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
    mod = get_array_module(cols)
    n, c = padded_shape[:2]
    sp = padded_shape[2:]
    rs = [math.prod(sp[i + 1:]) for i in range(len(sp))]
    plane = math.prod(sp)
    run = out_size[0] * rs[0]
    tail = sum((k - 1) * d * r for k, d, r in zip(ksize[1:], dilation[1:], rs[1:]))
    acc = mod.zeros((c, n, plane + tail), dtype=cols.dtype)
    cols = cols.reshape(c, math.prod(ksize), n, run)
    starts = [sum(o * d * r for o, d, r in zip(off, dilation, rs))
              for off in kernel_offsets(ksize)]

    def part(lo, hi):
        a, cc = acc[lo:hi], cols[lo:hi]
        for j, start in enumerate(starts):
            a[:, :, start:start + run] += cc[:, j]

    split(cols, part, c, 2 * cols.nbytes)
    return acc[:, :, :plane].reshape(c, n, *sp).swapaxes(0, 1)




# --------------------------------------------------------------------------- depthwise
def _taps_forward(xpad, w, stride, dilation, out_size):
    """:func:`depthwise_forward` on the padded input, one strided multiply-add per tap over the
    whole batch (the generic form, and the reference a backend's own kernel matches)."""
    mod = get_array_module(xpad)
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


def _taps_input_grad(g, w, padded_shape, stride, dilation):
    """:func:`depthwise_input_grad` as one strided add per tap over the whole batch:
    ``[N, C, *Sp]``."""
    mod = get_array_module(g)
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


def _taps_weight_grad(xpad, g, ksize, stride, dilation):
    """:func:`depthwise_weight_grad` as one product and reduction per tap over the whole batch."""
    mod = get_array_module(xpad)
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




def _unpadded(padded_shape, pads):
    return tuple(p - lo - hi for p, (lo, hi) in zip(padded_shape[2:], pads))


def depthwise_forward(x, w, stride, dilation, out_size, pads=None, out_cl=False):
    """Depthwise conv (groups == C, one input channel per group): ``w`` is ``[C*m, 1, *k]``.

    A grouped GEMM would run C tiny products of inner size prod(k); a multiply-add per kernel
    tap is much faster. A backend may run the taps its own way (NumPy: block by block on phase
    planes, so the data stays in cache, and channels last on small planes, where the phase
    planes would be mostly padding); otherwise one strided multiply-add per tap covers the
    whole batch.

    Args:
        x: ``[N, C, *S]`` (any layout): the padded input, or the input to pad by ``pads``
            (``(lo, hi)`` per spatial dim) when given.
        w: ``[C*m, 1, *k]``.
        stride, dilation, out_size: per spatial dim.
        pads: see ``x``.
        out_cl: lay the result out channels last in memory (where the backend's kernel can;
            a logical view).

    Returns:
        ``[N, C*m, *out]``.
    """
    if x.size:
        y = for_array(x).depthwise_forward(x, w, stride, dilation, out_size, pads, out_cl)
        if y is not None:
            return y
    return _taps_forward(x if pads is None else pad(x, pads), w, stride, dilation, out_size)


def depthwise_input_grad(g, w, padded_shape, stride, dilation, pads=None, out_cl=False):
    """Adjoint of :func:`depthwise_forward` w.r.t. its input.

    Args:
        g: ``[N, C*m, *out]`` (any layout), the output gradient.
        w: ``[C*m, 1, *k]``.
        padded_shape: ``[N, C, *Sp]``, the padded input's shape.
        stride, dilation: per spatial dim.
        pads: when given, the padding included in ``padded_shape``: the result is cropped to
            the unpadded input.
        out_cl: as in :func:`depthwise_forward`.

    Returns:
        ``[N, C, *Sp]``, or ``[N, C, *S]`` with ``pads``.
    """
    if g.size:
        dx = for_array(g).depthwise_input_grad(g, w, padded_shape, stride, dilation, pads,
                                               out_cl)
        if dx is not None:
            return dx
    acc = _taps_input_grad(g, w, padded_shape, stride, dilation)
    return acc if pads is None else crop(acc, pads, _unpadded(padded_shape, pads))


def depthwise_weight_grad(x, g, ksize, stride, dilation, pads=None, cl=False):
    """Adjoint of :func:`depthwise_forward` w.r.t. its weight: ``[C*m, 1, *k]``.

    Args:
        x: ``[N, C, *S]`` (any layout): the padded input, or the input to pad by ``pads``.
        g: ``[N, C*m, *out]`` (any layout), the output gradient.
        ksize, stride, dilation: per spatial dim.
        pads: see ``x``.
        cl: x and g are channels last in memory (the backend may choose its form by it).

    Returns:
        ``[C*m, 1, *k]``.
    """
    if g.size:
        gw = for_array(x).depthwise_weight_grad(x, g, ksize, stride, dilation, pads, cl)
        if gw is not None:
            return gw
    return _taps_weight_grad(x if pads is None else pad(x, pads), g, ksize, stride, dilation)


# --------------------------------------------------------------------------- pooling
def _arg_dtype(ksize):
    n = math.prod(ksize)
    return np.int8 if n <= 127 else (np.int16 if n <= 32767 else np.int32)


def max_pool(xpad, ksize, stride, out_size, want_arg=True, compiled=None):
    """Max over windows (no dilation) of a padded ``[N, C, *Sp]`` array.

    A running maximum over the kernel offsets (prod(k) vectorised passes over the output) beats
    copying every window out and reducing it. Returns ``(out, arg)``: ``arg`` (or None) is the
    kernel offset of the first maximum of each window (Paddle's tie rule), as a small int.
    The offset is updated with integer arithmetic, ``arg += (v > out) * (j - arg)``, on
    preallocated buffers: three passes over one-byte data are several times cheaper than a
    masked ``copyto``.

    ``compiled``: whether to try the backend's compiled kernel (``max_pool2d``) first; None
    tries it wherever the backend has one (``backend.plans.plan_pool`` decides it once per
    geometry).
    """
    mod = get_array_module(xpad)
    one = (1,) * len(ksize)
    adt = _arg_dtype(ksize)
    res = None
    if compiled is not False:
        res = _compiled("max_pool2d", xpad, ksize, stride, out_size, want_arg, adt)
    if res is not None:
        # compiled: ResNet-50's stem pool at batch 8, 224x224: 38 -> 4 ms; ResNet-18 CIFAR's
        # pool 1.3 -> 0.9 ms; LeNet's 2x2 pools 0.24 -> 0.08 and 0.12 -> 0.04 ms
        return res
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


def max_pool_grad(g, arg, padded_shape, ksize, stride, compiled=None):
    """Route each output gradient to the input pixel its window's maximum came from
    (``compiled``: as in :func:`max_pool`)."""
    if compiled is not False:
        acc = _compiled("max_pool2d_grad", g, arg, padded_shape, ksize, stride)
        if acc is not None:
            return acc
    mod = get_array_module(g)
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
    mod = get_array_module(g)
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




# --------------------------------------------------------------------------- pool indices
def max_pool_index(arg, ksize, stride, ext, size):
    """Flat input index (into the unpadded spatial plane) of each window's maximum (int32)."""
    mod = get_array_module(arg)
    nd = len(ksize)
    osz = arg.shape[2:]
    flat = mod.zeros(arg.shape, dtype=np.int64)
    rem = arg.astype(np.int64)
    inner = math.prod(ksize)
    plane = 1
    planes = [0] * nd
    for d in range(nd - 1, -1, -1):
        planes[d] = plane
        plane *= size[d]
    for d in range(nd):
        inner //= ksize[d]
        kd = rem // inner
        rem = rem - kd * inner
        grid = (mod.arange(osz[d]) * stride[d] - ext[d][0]).reshape(
            (osz[d],) + (1,) * (nd - 1 - d))
        flat += (grid + kd) * planes[d]
    return flat.astype(np.int32)


def max_pool_gather(hpad, arg, ksize, stride):
    """Each window's value of ``hpad`` (a padded ``[N, C, *Sp]`` array) at the kernel offset
    ``arg`` that :func:`max_pool` found: the adjoint of :func:`max_pool_grad`."""
    mod = get_array_module(hpad)
    one = (1,) * len(ksize)
    out = mod.zeros(arg.shape, dtype=hpad.dtype)
    for j, off in enumerate(kernel_offsets(ksize)):
        out += mod.where(arg == j, hpad[out_slices(off, stride, one, arg.shape[2:])], 0)
    return out


def adaptive_bounds(n, o):
    """Paddle's adaptive windows along one dim: [floor(i*n/o), ceil((i+1)*n/o))."""
    i = np.arange(o)
    return (i * n) // o, -((-(i + 1) * n) // o)


def adaptive_max(x, osz):
    """``(out, flat)``: each adaptive window's maximum and its flat index in the input plane."""
    mod = get_array_module(x)
    n, c = x.shape[:2]
    size = x.shape[2:]
    nd = len(size)
    # per dim: the window's input positions, padded to the longest window by repeating the
    # window's last position (a repeat never changes the max nor the first argmax)
    pos = []
    for s, o in zip(size, osz):
        start, end = adaptive_bounds(s, o)
        width = int((end - start).max())
        pos.append(np.minimum(start[:, None] + np.arange(width), (end - 1)[:, None]))
    index = [slice(None), slice(None)]
    for d, p in enumerate(pos):
        shp = [1] * (2 * nd)
        shp[2 * d], shp[2 * d + 1] = p.shape
        index.append(mod.asarray(p.reshape(shp)))
    win = x[tuple(index)]  # [N, C, o0, w0, o1, w1, ...]
    perm = (0, 1) + tuple(range(2, 2 + 2 * nd, 2)) + tuple(range(3, 3 + 2 * nd, 2))
    win = win.transpose(perm).reshape(n, c, *osz, -1)
    local = win.argmax(axis=-1)
    out = mod.take_along_axis(win, local[..., None], axis=-1)[..., 0]
    # local window offset -> flat index into the input plane
    widths = [p.shape[1] for p in pos]
    flat = mod.zeros(local.shape, dtype=np.int64)
    rem = local
    inner = math.prod(widths)
    plane = math.prod(size)
    for d in range(nd):
        inner //= widths[d]
        plane //= size[d]
        ld = rem // inner
        rem = rem - ld * inner
        grid = mod.arange(osz[d]).reshape((osz[d],) + (1,) * (nd - 1 - d))
        flat += mod.asarray(pos[d])[grid, ld] * plane
    return mod.ascontiguousarray(out), flat


def adaptive_max_grad(g, flat, xshape):
    """Adjoint of :func:`adaptive_max` in its input: ``g`` (``[N, C, *osz]``) summed into a
    ``[N, C, *S]`` array at the flat indices ``flat`` it returned."""
    mod = get_array_module(g)
    n, c = xshape[:2]
    total = math.prod(xshape[2:])
    glob = flat + (mod.arange(n * c) * total).reshape((n, c) + (1,) * (len(xshape) - 2))
    gx = for_array(g).scatter_add(n * c * total, glob.ravel(), mod.ascontiguousarray(g).ravel())
    return gx.reshape(xshape)


def adaptive_max_gather(h, flat):
    """Adjoint of :func:`adaptive_max_grad`: ``h`` (``[N, C, *S]``) read at ``flat``."""
    mod = get_array_module(h)
    n, c = h.shape[:2]
    return mod.take_along_axis(h.reshape(n, c, -1), flat.reshape(n, c, -1),
                               axis=2).reshape(flat.shape)


# --------------------------------------------------------------------------- convolution
def to_cf(a, cl):
    """Logical channel-first view of a channels-last array (no copy)."""
    return a if not cl else a.transpose(0, a.ndim - 1, *range(1, a.ndim - 1))


def from_cf(al, cl, bias=None):
    """Materialise a logical ``[N, C, *S]`` array in the requested layout, adding ``bias`` in
    the same pass (the transposing copy and the bias add are one ufunc call).

    Callers pass freshly computed arrays, owned by nobody else, so one that is already in place
    (C-contiguous in the requested layout) is returned as it is rather than copied, with the
    bias added in place.
    """
    if bias is None:
        if not cl and al.flags.c_contiguous:
            return al
        if cl:
            phys = al.transpose(0, *range(2, al.ndim), 1)
            if phys.flags.c_contiguous:
                return phys
    mod = get_array_module(al)
    n, c, *sp = al.shape
    if cl:
        res = mod.empty((n, *sp, c), dtype=al.dtype)
        dst = to_cf(res, True)
    elif al.flags.c_contiguous:
        res = dst = al  # the bias is added in place
    else:
        res = mod.empty(al.shape, dtype=al.dtype)
        dst = res
    b = None if bias is None else bias.reshape((1, c) + (1,) * len(sp))

    def part(lo, hi):
        if b is None:
            mod.copyto(dst[lo:hi], al[lo:hi])
        else:
            mod.add(al[lo:hi], b, out=dst[lo:hi])

    split(al, part, n, 2 * al.nbytes)
    return res


def in_cl_memory(a):
    """Whether the logical ``[N, C, *S]`` array ``a`` is laid out channels last in memory:
    not C-contiguous as it stands, but its ``[N, *S, C]`` transpose is (a tensor of a
    channels-last format, or what a layer that keeps channels last made, see
    :func:`keep_cl`)."""
    return (a.ndim >= 3 and not a.flags.c_contiguous
            and a.transpose(0, *range(2, a.ndim), 1).flags.c_contiguous)


def keep_cl(al, bias=None):
    """The logical ``[N, C, *S]`` result ``al`` of a layer that keeps channels last in memory
    (see ``plans.ConvPlan.keep``): channels last as it is, or copied there, with ``bias`` added
    in the same pass; a logical view."""
    return to_cf(from_cf(al, True, bias), True)


def conv_out_size(size, ksize, stride, pads, dil):
    return tuple((n + lo + hi - d * (k - 1) - 1) // s + 1
                 for n, k, s, (lo, hi), d in zip(size, ksize, stride, pads, dil))


def is_depthwise(c, groups):
    return groups > 1 and groups == c


def is_1x1(ksize, pads, groups):
    """A 1x1 convolution without padding or groups (its forms need no window copies)."""
    return groups == 1 and all(k == 1 for k in ksize) and not any(lo or hi for lo, hi in pads)


def is_pointwise(ksize, pads, groups, osz):
    return (groups == 1 and all(k == 1 for k in ksize) and not any(lo or hi for lo, hi in pads)
            and math.prod(osz) >= _POINTWISE_MIN)


def flat_ratio(osz, psz, stride):
    """GEMM size of the flat-plane col2im relative to the plain one (None: not applicable)."""
    if len(osz) < 2 or any(s != 1 for s in stride):
        return None
    return math.prod(psz[1:]) / math.prod(osz[1:])


def trim_taps(ksize, size, osz, stride, pads, dil):
    """Kernel taps that read some real input pixel, per spatial dim.

    Returns None when every tap is used, else ``(taps, pads)``: a slice per dim selecting the
    used taps and the padding of the equivalent convolution with the trimmed kernel (the same
    output size). A dim is trimmed only when that keeps both paddings >= 0.
    """
    taps, new_pads, trimmed = [], [], False
    for k, n, m, s, (lo, hi), d in zip(ksize, size, osz, stride, pads, dil):
        # tap i reads input rows y*s + i*d - lo, y in [0, m): used iff some of them is in [0, n)
        i0 = max(0, -(-(lo - (m - 1) * s) // d))
        i1 = min(k, -(-(n + lo) // d))
        lo2 = lo - i0 * d
        hi2 = (m - 1) * s + d * (i1 - i0 - 1) + 1 - n - lo2
        if i1 <= i0 or (i0 == 0 and i1 == k) or lo2 < 0 or hi2 < 0:
            taps.append(slice(None))
            new_pads.append((lo, hi))
        else:
            taps.append(slice(i0, i1))
            new_pads.append((lo2, hi2))
            trimmed = True
    return (tuple(taps), tuple(new_pads)) if trimmed else None


def _tap_index(ksize, taps):
    """Flat indices, in ``prod(ksize)``, of the kernel taps that ``taps`` (one slice per spatial
    dim, from :func:`trim_taps`) select."""
    return np.arange(math.prod(ksize)).reshape(ksize)[taps].reshape(-1)


def take_taps(w, taps):
    """``w[:, :, *taps]`` as a C-contiguous array. One gather over the flattened taps: NumPy's
    copy of the strided view walks runs as short as one tap row (a 3x3 kernel trimmed to 2x2
    copies ``[512, 256, 2, 2]`` from ``[512, 256, 3, 3]`` in 0.95 ms; this in 0.28 ms)."""
    mod = get_array_module(w)
    o, c = w.shape[:2]
    idx = mod.asarray(_tap_index(w.shape[2:], taps))
    kept = tuple(len(range(*t.indices(k))) for t, k in zip(taps, w.shape[2:]))
    return mod.take(w.reshape(o * c, -1), idx, axis=1).reshape(o, c, *kept)


def put_taps(gw, shape, taps):
    """The full-kernel array of ``shape``, zeros except ``gw`` at ``taps`` (the adjoint of
    :func:`take_taps`), written by one scatter over the flattened taps."""
    mod = get_array_module(gw)
    o, c = shape[:2]
    full = mod.zeros(shape, dtype=gw.dtype)
    full.reshape(o, c, -1)[:, :, mod.asarray(_tap_index(shape[2:], taps))] = gw.reshape(o, c, -1)
    return full


def g_cols(gl, groups):
    """``[groups, O/groups, N*L]``: the output gradient as the GEMM operand (one copy)."""
    o = gl.shape[1]
    return ascontiguous(gl.swapaxes(0, 1)).reshape(groups, o // groups, -1)


def g_cols_flat(gl, groups, psz):
    """The GEMM operand of the flat-plane col2im: ``[groups, O/groups, N*o1*prod(psz[1:])]``,
    the output gradient laid out with the padded plane's trailing sizes, zeros beyond."""
    mod = get_array_module(gl)
    n, o = gl.shape[:2]
    osz = gl.shape[2:]
    buf = mod.zeros((o, n, osz[0], *psz[1:]), dtype=gl.dtype)
    buf[(slice(None),) * 3 + tuple(slice(0, m) for m in osz[1:])] = gl.swapaxes(0, 1)
    return buf.reshape(groups, o // groups, -1)


def _strided(xl, stride):
    return xl[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in stride)]


def gram(a, b):
    """``a @ b^T`` over the last axis: ``[..., O, L] x [..., K, L] -> [..., O, K]`` (the weight
    gradients' GEMMs, ``L`` the long axis of pixels), C-contiguous.

    On a long ``L`` NumPy's BLAS runs such a product faster when its result has at least as
    many rows as columns, so with ``K > O`` and ``L`` at least ``conv.gram_swap_min_len`` it
    computes ``(b @ a^T)^T`` (LeNet's second layer, ``[16, 6400] x [150, 6400]``: 0.47 ->
    0.26 ms); on short ``L`` the swapped form is slower. Only the order of the additions
    inside the GEMM differs. The result is copied to C order (it is
    small): a strided weight gradient would slow every optimizer kernel that reads it.
    """
    mod = get_array_module(a)
    if mod is np and b.shape[-2] > a.shape[-2] and a.shape[-1] >= _GRAM_SWAP_MIN_LEN:
        return np.ascontiguousarray(np.matmul(b, a.swapaxes(-1, -2)).swapaxes(-1, -2))
    return mod.matmul(a, b.swapaxes(-1, -2))


# The convolution's GEMM forms, one function per form and direction. Which form runs for a
# layer is chosen once per geometry by ``backend.plans.plan_conv`` (with the depthwise kernels
# above and the direct and batch-innermost forms below); nothing here re-tests the geometry.
def pointwise_forward(xl, w, stride, osz):
    """C for a 1x1 convolution without padding or groups (:func:`is_pointwise`): a batched GEMM
    on x itself, already in ``[N, O, L]`` order (no im2col, no transpose)."""
    mod = get_array_module(xl)
    n, c = xl.shape[:2]
    o = w.shape[0]
    x3 = mod.ascontiguousarray(_strided(xl, stride)).reshape(n, c, -1)
    return mod.matmul(w.reshape(o, c), x3).reshape(n, o, *osz)


def pointwise_data_grad(gl, w, size, stride):
    """T of :func:`pointwise_forward`: logical ``[N, C, *size]``."""
    mod = get_array_module(gl)
    n, o = gl.shape[:2]
    c = w.shape[1]
    osz = gl.shape[2:]
    g3 = mod.ascontiguousarray(gl).reshape(n, o, -1)
    dx = mod.matmul(w.reshape(o, c).T, g3).reshape(n, c, *osz)
    if tuple(osz) == tuple(size):
        return dx
    full = mod.zeros((n, c, *size), dtype=dx.dtype)
    full[(slice(None), slice(None)) + tuple(
        slice(0, s * (m - 1) + 1, s) for s, m in zip(stride, osz))] = dx
    return full


def pointwise_filter_grad(xl, gl, ksize, stride):
    """W of :func:`pointwise_forward`: ``[O, C, *k]``."""
    mod = get_array_module(xl)
    n, c = xl.shape[:2]
    o = gl.shape[1]
    x3 = mod.ascontiguousarray(_strided(xl, stride)).reshape(n, c, -1)
    g3 = mod.ascontiguousarray(gl).reshape(n, o, -1)
    if o * c <= x3.shape[2] * (o + c):
        # per-sample GEMMs then a sum: no transposing copy of the activations
        gw = gram(g3, x3).sum(axis=0)
    else:
        gw = mod.tensordot(g3, x3, axes=([0, 2], [0, 2]))
    return gw.reshape(o, c, *ksize)


# The 1x1 convolution on channels-last memory: x as ``[N*L, C]`` rows, one GEMM each way and
# no copy (a batched GEMM per sample would first copy x to channel-first, and the result
# back). The results are logical views of channels-last arrays; a strided layer copies the
# pixels it reads once.
def rows(al):
    """``[N*L, C]``: the rows of logical ``[N, C, *S]`` ``al`` channels last (a view when its
    memory is channels last, else one copy)."""
    return ascontiguous(al.transpose(0, *range(2, al.ndim), 1)).reshape(-1, al.shape[1])


def from_rows(r, n, osz):
    """The logical ``[N, O, *osz]`` view of ``[N*L, O]`` rows ``r`` (the inverse of
    :func:`rows`)."""
    return to_cf(r.reshape(n, *osz, r.shape[1]), True)


def pointwise_forward_cl(xl, w, stride, osz):
    """:func:`pointwise_forward` on channels-last memory: ``rows @ w.T``."""
    o, c = w.shape[:2]
    return from_rows(rows(_strided(xl, stride)) @ w.reshape(o, c).T, xl.shape[0], osz)


def pointwise_data_grad_cl(gl, w, size, stride):
    """T of :func:`pointwise_forward_cl`: a logical ``[N, C, *size]`` view of channels-last
    memory."""
    mod = get_array_module(gl)
    n, o = gl.shape[:2]
    c = w.shape[1]
    dx = from_rows(rows(gl) @ w.reshape(o, c), n, gl.shape[2:])
    if tuple(gl.shape[2:]) == tuple(size):
        return dx
    full = to_cf(mod.zeros((n, *size, c), dtype=dx.dtype), True)
    full[(slice(None), slice(None)) + tuple(
        slice(0, s * (m - 1) + 1, s) for s, m in zip(stride, gl.shape[2:]))] = dx
    return full


def pointwise_filter_grad_cl(xl, gl, ksize, stride):
    """W of :func:`pointwise_forward_cl`: ``g_rows.T @ x_rows``, ``[O, C, *k]``."""
    o, c = gl.shape[1], xl.shape[1]
    return gram(rows(gl).T, rows(_strided(xl, stride)).T).reshape(o, c, *ksize)


def im2col_forward(xl, w, stride, pads, dil, groups, osz):
    """C as im2col + one GEMM per group over the whole batch: ``(y, cols)``, ``y`` a logical
    ``[N, O, *out]`` view, ``cols`` the columns (for :func:`im2col_filter_grad`)."""
    mod = get_array_module(xl)
    n = xl.shape[0]
    o = w.shape[0]
    cols = im2col(pad(xl, pads), w.shape[2:], stride, dil, osz, groups)
    y = mod.matmul(w.reshape(groups, o // groups, -1), cols)
    return y.reshape(o, n, *osz).swapaxes(0, 1), cols


def im2col_data_grad(gl, w, size, stride, pads, dil, groups, flat, gcols=None):
    """T of :func:`im2col_forward`: ``w.T @ g`` then col2im, on flattened padded planes with
    ``flat`` (stride 1, see :func:`flat_ratio`); logical ``[N, C, *size]``."""
    mod = get_array_module(gl)
    n, o = gl.shape[:2]
    c = w.shape[1] * groups
    ksize = w.shape[2:]
    osz = gl.shape[2:]
    psz = tuple(s + lo + hi for s, (lo, hi) in zip(size, pads))
    wt = w.reshape(groups, o // groups, -1).transpose(0, 2, 1)
    if flat:
        dcols = mod.matmul(wt, g_cols_flat(gl, groups, psz))
        acc = col2im_flat(dcols, (n, c, *psz), ksize, dil, osz)
        return crop(acc, pads, size)
    if gcols is None:
        gcols = g_cols(gl, groups)
    acc = col2im(mod.matmul(wt, gcols), (n, c, *psz), ksize, stride, dil, osz)
    return crop(acc, pads, size)


def im2col_filter_grad(xl, gl, ksize, stride, pads, dil, groups, gcols=None, cols=None):
    """W of :func:`im2col_forward`: ``g @ cols.T`` (``cols``: the forward's columns, when
    kept), ``[O, C/groups, *k]``."""
    c = xl.shape[1]
    o = gl.shape[1]
    if cols is None:
        cols = im2col(pad(xl, pads), ksize, stride, dil, gl.shape[2:], groups)
    if gcols is None:
        gcols = g_cols(gl, groups)
    return gram(gcols, cols).reshape(o, c // groups, *ksize)


def use_direct(xl, w, stride, dil, groups, osz):
    """Whether this convolution runs as the backend's direct kernels (``conv2d_direct_*``): a thin
    2-D layer (``C * prod(k)`` at most ``_DIRECT_MAX_TAPS``, such as LeNet's first) with a
    kernel larger than 1x1, on an output plane of at least ``_POINTWISE_MIN`` pixels, stride
    and dilation 1, no groups, float32/float64, compiled kernels in use.

    Such a layer's im2col columns are ``prod(k)`` copies of the input that the GEMM then reads
    with an inner dimension of a few taps; the direct kernels read the padded input once per
    tap instead (LeNet's first layer at batch 64: forward 0.31 -> 0.1 ms; 3 -> 32 channels,
    3x3, on 64x64 at batch 16: forward and backward 6.8 -> 4.7 ms). A 1x1 kernel has no
    columns to spare: the GEMM on x itself is 10-20x faster than the direct kernels there.
    """
    taps = math.prod(w.shape[2:])
    return (xl.ndim == 4 and groups == 1 and xl.dtype.char in "fd"
            and w.dtype == xl.dtype and 1 < taps and w.shape[1] * taps <= _DIRECT_MAX_TAPS
            and all(s == 1 for s in stride) and all(d == 1 for d in dil)
            and math.prod(osz) >= _POINTWISE_MIN
            and kernel(xl, "conv2d_direct_forward") is not None and compiled_kernels(xl))


def conv_forward_direct(xl, w, pads, osz, bias=None):
    """:func:`conv_forward` through the direct kernels (see :func:`use_direct`), with the bias
    added in the same pass when given: C-contiguous ``[N, O, *out]``."""
    return _compiled("conv2d_direct_forward", pad(xl, pads), w, osz, bias)


def conv_data_grad_direct(gl, w, size, pads):
    """The input gradient through the direct kernels, or None where they do not apply
    (weights that are not all finite)."""
    psz = tuple(s + lo + hi for s, (lo, hi) in zip(size, pads))
    dxpad = _compiled("conv2d_direct_input_grad", gl, w, (gl.shape[0], w.shape[1], *psz))
    return None if dxpad is None else crop(dxpad, pads, size)


def conv_filter_grad_direct(xl, gl, ksize, pads):
    """The weight gradient through the direct kernels, or None where they do not apply
    (an input that is not all finite)."""
    return _compiled("conv2d_direct_weight_grad", pad(xl, pads), gl, ksize)


def use_nin(xshape, wshape, pads, groups, osz, stride=None, train=True):
    """Whether the batch-innermost layout (``im2col_nin``) serves this convolution better.

    It trades two transposing copies (x in, y out) for window copies and col2im adds over runs
    ``N`` times longer; measured, that wins when the batch is not tiny and the columns are
    large next to the output (``C*prod(k) >= 2*O``: the window copies dominate), e.g. every 3x3
    layer of a ResNet and LeNet's second layer, and loses for a first layer with few channels.

    Without a backward pass (``train=False``: no gradient wanted) only the forward copies
    count: there the layout wins only on small output planes with stride 1 (a ResNet's last
    two stages); on larger planes, strided layers and ResNet's 7x7 stem the plain im2col is
    faster (measured on ResNet-50 at batch 8, those layers alone: 144 ms -> 118 ms).
    """
    n, c = xshape[:2]
    o = wshape[0]
    ksize = wshape[2:]
    base = (n >= _NIN_MIN_BATCH and not is_depthwise(c, groups)
            and not is_pointwise(ksize, pads, groups, osz)
            and c * math.prod(ksize) >= 2 * o)
    if train or not base:
        return base
    return math.prod(osz) <= _NIN_FWD_MAX_PLANE and all(s == 1 for s in (stride or ()))


def conv_forward_nin(xl, w, stride, pads, dil, groups, osz):
    """The convolution through the batch-innermost columns; returns ``(y, kept cols or
    None)``."""
    mod = get_array_module(xl)
    n = xl.shape[0]
    o = w.shape[0]
    cols = im2col_nin(xl, w.shape[2:], stride, dil, pads, osz, groups)
    y = mod.matmul(w.reshape(groups, o // groups, -1), cols)
    y = mod.moveaxis(y.reshape(o, *osz, n), -1, 0)
    return y, (cols if cols.nbytes <= _KEEP_COLS else None)


def conv_backward_nin(xl, gl, w, stride, pads, dil, groups, osz, cols, need):
    """Input and weight gradients of :func:`conv_forward_nin`: ``(dx logical [N, C, *S] or None,
    dw or None)``, both from one batch-innermost copy of the output gradient."""
    mod = get_array_module(gl)
    n, c = xl.shape[:2]
    size = xl.shape[2:]
    o = w.shape[0]
    ksize = w.shape[2:]
    gt = ascontiguous(mod.moveaxis(gl, 0, -1)).reshape(groups, o // groups, -1)
    gx = gw = None
    if need[0]:
        psz = tuple(s + lo + hi for s, (lo, hi) in zip(size, pads))
        dcols = mod.matmul(w.reshape(groups, o // groups, -1).transpose(0, 2, 1), gt)
        gx = crop(col2im_nin(dcols, (n, c, *psz), ksize, stride, dil, osz), pads, size)
    if need[1]:
        if cols is None:
            cols = im2col_nin(xl, ksize, stride, dil, pads, osz, groups)
        gw = gram(gt, cols).reshape(w.shape)
    return gx, gw
