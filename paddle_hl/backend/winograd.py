"""Winograd F(2x2, 3x3): 3x3 stride-1 convolutions with 2.25 times fewer multiplications.

A 3x3, stride-1, undilated, ungrouped convolution is computed on 4x4 input tiles that step by
2 (each gives a 2x2 block of the output): the weight is transformed once into ``U = G w G^T``
(``[16, K, C]``), each input tile into ``V = B^T d B`` (``[16, C, P]``, ``P`` = batch times
tiles), and the output is ``A^T M A`` of the 16 products ``M[e] = U[e] @ V[e]`` (one batched
GEMM of ``[K, C] x [C, P]`` each, against im2col's one ``[K, 9C] x [9C, 4P]``: 16/36 of the
multiplications). Only inference uses it (no gradient is computed here).

Layouts, chosen so that every transform is a few long passes:

- the input is split once into its four phase planes (even/odd rows times even/odd columns)
  of the zero-padded input, per block of channels that stays in cache; the rows of tile ``i``
  are then rows ``i`` and ``i + 1`` of two phase planes, so the row and column transforms are
  plain (unstrided) shifted slices: 4 row passes and 16 column passes per block, each writing
  its part of ``V`` directly in the GEMM's operand layout (``P`` ordered sample, tile row,
  tile column); where the tile rows are long enough next to the output channels,
  each tile row gets one extra GEMM column (its last tile's right neighbour, which the output
  transform skips) so that the 16 column passes run over the whole channel block at once
  instead of once per tile row (``_wide``);
- the output transform reads ``M`` per block of output channels and writes the four output
  phases (even/odd rows and columns) straight into the ``[N, K, OH, OW]`` result, cropped;
  the bias is added to ``M``'s centre entry (which every output of a tile sums with
  coefficient 1), a quarter of a pass;
- channel blocks are split over the CPU thread pool (``backend.split``); each piece keeps its
  own scratch, whose zero borders (the padding) are written once per piece; the 16 GEMMs are
  single-threaded products on the pool too (``_products``);
- a layer with a small weight (64 -> 64 channels) runs instead in blocks of tile rows of one
  sample: each block is transformed, multiplied and transformed back while its ``V`` and
  ``M`` stay in cache, the blocks spread over the pool (``_forward_blocks``);
- with the numba extra in use, both transforms are compiled kernels (one pass each,
  ``backend/_numba/winograd.py``).

Non-finite values: a tile mixes 16 input values into every entry of ``V``, so an inf or NaN
would spread to the tile's other outputs (and inf turn into NaN) where im2col keeps it in the
windows that read it. :func:`weight_transform` answers None for a weight that is not all
finite and :func:`conv3x3_forward` None for such an input: the caller then runs im2col, and
non-finite values propagate exactly as there (the convolution plan's ``winograd`` kind does
both: ``backend/plans.py``).

Accuracy: in float32 the result's error against a float64 reference is about that of the
im2col GEMM (the transforms' coefficients are 0, +-1 and +-1/2; measured in
``tests/backend/test_winograd.py``).
"""

from __future__ import annotations

import copy

import numpy as np

from . import _numba, blas_one_thread, get_array_module, parallel_map, split, tuning

__all__ = []

# the thresholds, with what each decides and the measurement behind it: backend/tuning.py
_BLOCK_BYTES = tuning.value("winograd.block_bytes")
_WIDE_MAX_K_PER_TILE = tuning.value("winograd.wide_max_k_per_tile")
_FUSED_MAX_U_BYTES = tuning.value("winograd.fused_max_u_bytes")
_FUSED_BLOCK_BYTES = tuning.value("winograd.fused_block_bytes")
_MIN_CHANNELS = tuning.value("winograd.min_channels")
_MIN_CHANNELS_COMPILED = tuning.value("winograd.min_channels_compiled")
_MIN_TILES = tuning.value("winograd.min_tiles")
_MIN_WORK = tuning.value("winograd.min_work")
_NUMPY_MAX_THREADS = tuning.value("winograd.numpy_max_threads")
_MIN_WORK_COMPILED = tuning.value("winograd.min_work_compiled")


def applies(x_shape, w_shape, stride, pads, dil, groups) -> bool:
    """Whether a 2-D convolution has the geometry :func:`conv3x3_forward` computes: a 3x3
    kernel, stride and dilation 1, one group, every padding in 0..2 and an output of at least
    one pixel."""
    if len(x_shape) != 4 or tuple(w_shape[2:]) != (3, 3) or groups != 1:
        return False
    if tuple(stride) != (1, 1) or tuple(dil) != (1, 1):
        return False
    if not all(0 <= p <= 2 for pair in pads for p in pair):
        return False
    return all(s + lo + hi >= 3 for s, (lo, hi) in zip(x_shape[2:], pads))


def wins(x_shape, w_shape, pads, dtype, compiled, threads=1) -> bool:
    """Whether Winograd is measured faster than the im2col forms on a layer that
    :func:`applies`: float32, at least ``_MIN_TILES`` tiles in the batch (the GEMMs' column
    count), and enough channels and work for the transforms' passes to pay (``compiled``: the
    numba transforms are in use, which pay from fewer channels).

    Measured (one thread, CPU time, against the faster of im2col and the batch-innermost
    form): every 3x3 stride-1 layer of ResNet-50 at batch 8 and of ResNet-18 on CIFAR at batch
    32 wins, 0.63-0.91x with NumPy and 0.44-0.78x with numba (``benchmarks/winograd_layers.py``).
    Lost with NumPy: fewer than 64 channels (16 -> 16 at 32x32 batch 8 1.4x, 32 -> 64 at 28x28
    1.3x), few tiles (512 -> 512 at 7x7 batch 1 or 2: 1.2x, 1.1x), a small layer (64 -> 64 at
    8x8 batch 8: 1.1x); with numba: 16 -> 32 at 9x9 batch 4 (1.5x), 8 -> 8 at 28x28 (1.0x),
    batch 1 at 7x7 (1.1x).

    In wall time on several threads (``threads``: the CPU pool's) NumPy's transforms lose: their
    many short passes split over the pool less well than the GEMM they replace (2 threads,
    ResNet-50 at batch 8: 64 channels at 56x56 1.11x, 128 at 28x28 1.04x, 256 at 14x14 1.00x
    the im2col forms, while the compiled transforms give 0.51x, 0.68x, 0.80x), so they run only
    up to ``_NUMPY_MAX_THREADS`` threads (a data-parallel rank on one thread, a process limited
    by ``paddle.device.set_num_threads(1)``).
    """
    if dtype != np.float32 or (not compiled and threads > _NUMPY_MAX_THREADS):
        return False
    n, c = x_shape[:2]
    k = w_shape[0]
    oh = x_shape[2] + pads[0][0] + pads[0][1] - 2
    ow = x_shape[3] + pads[1][0] + pads[1][1] - 2
    tiles = n * -(-oh // 2) * -(-ow // 2)
    if compiled:
        least, work = _MIN_CHANNELS_COMPILED, _MIN_WORK_COMPILED
    else:
        least, work = _MIN_CHANNELS, _MIN_WORK
    return min(c, k) >= least and tiles >= _MIN_TILES and c * k * tiles >= work


def weight_transform(w):
    """``U = G w G^T`` of a ``[K, C, 3, 3]`` weight: ``[16, K, C]`` (C-contiguous, the weight's
    dtype), entry ``4 * a + b`` the tile coefficient ``(a, b)``; None when ``w`` is not all
    finite (see the module docstring).

    Raises:
        ValueError: ``w`` is not ``[K, C, 3, 3]``.
    """
    if w.ndim != 4 or tuple(w.shape[2:]) != (3, 3):
        raise ValueError(f"winograd.weight_transform: w must be [K, C, 3, 3], got shape "
                         f"{tuple(w.shape)}")
    mod = get_array_module(w)
    if not bool(mod.isfinite(w).all()):
        return None
    k, c = w.shape[:2]
    half = w.dtype.type(0.5) if mod is np else 0.5
    wt = mod.ascontiguousarray(w.transpose(2, 3, 0, 1))  # [3, 3, K, C]: long passes below
    # G along the kernel rows ([3, K, C] per row of G), then along the columns into U
    rows = [wt[0], (wt[0] + wt[1] + wt[2]) * half, (wt[0] - wt[1] + wt[2]) * half, wt[2]]
    u = mod.empty((4, 4, k, c), w.dtype)
    for a, r in enumerate(rows):
        u[a, 0] = r[0]
        u[a, 1] = (r[0] + r[1] + r[2]) * half
        u[a, 2] = (r[0] - r[1] + r[2]) * half
        u[a, 3] = r[2]
    return u.reshape(16, k, c)


class _Geometry:
    """Tile counts and crops of one call: ``th x tw`` tiles per sample, output ``oh x ow``."""

    def __init__(self, x_shape, pads, wide=False):
        self.n, self.c, self.h, self.w = x_shape
        (self.pt, self.pb), (self.pl, self.pr) = pads
        self.oh = self.h + self.pt + self.pb - 2
        self.ow = self.w + self.pl + self.pr - 2
        self.th = -(-self.oh // 2)
        self.tw = -(-self.ow // 2)
        # tiles per tile row in the GEMM's columns: one more than there are (a column the
        # output transform skips) with ``wide``, so that NumPy's column transform is one
        # run per channel block instead of one per tile row
        self.wide = wide
        self.pw = self.tw + 1 if wide else self.tw
        self.p = self.n * self.th * self.pw

    def block(self, i0, i1):
        """The geometry of tile rows ``i0..i1`` of one sample: its input rows (those of the
        padded rows ``2 i0 .. 2 i1 + 1`` that are not padding), top padding and output rows."""
        g = copy.copy(self)
        top = 2 * i0 - self.pt
        lo, hi = max(0, top), min(self.h, 2 * i1 + 2 - self.pt)
        g.n, g.h, g.pt = 1, max(0, hi - lo), lo - top
        g.th, g.oh = i1 - i0, min(self.oh, 2 * i1) - 2 * i0
        g.p = g.th * g.pw
        return g


def conv3x3_forward(x, u, pads, bias=None, out=None):
    """The stride-1 3x3 convolution of ``x`` with the weight whose transform is ``u``.

    Args:
        x: ``[N, C, H, W]`` float array, any memory layout (a channels-last input as its
            transposed view).
        u: ``[16, K, C]`` from :func:`weight_transform`, of ``x``'s dtype.
        pads: ``((top, bottom), (left, right))``, each in 0..2.
        bias: ``[K]`` or None.
        out: an ``[N, K, OH, OW]`` array of ``x``'s dtype to write the result into, any
            memory layout (a channels-last result as its transposed view); None: a new
            C-contiguous one.

    Returns:
        The result (``out`` when given), or None where ``x`` is not all finite (the caller
        runs im2col then; see the module docstring; ``out`` is left partly written).

    Raises:
        ValueError: shapes, dtypes or paddings outside what is described above.
    """
    _check(x, u, pads, bias)
    mod = get_array_module(x)
    if mod is not np:
        y = _forward_generic(mod, x, u, _Geometry(x.shape, pads), bias)
        if out is None or y is None:
            return y
        out[...] = y
        return out
    fast = _numba_kernels(x)
    geo = _Geometry(x.shape, pads)
    if not fast and _wide(geo, u.shape[1]):
        geo = _Geometry(x.shape, pads, wide=True)
    shape = (geo.n, u.shape[1], geo.oh, geo.ow)
    if out is None:
        out = np.empty(shape, x.dtype)
    elif tuple(out.shape) != shape or out.dtype != x.dtype:
        raise ValueError(f"winograd.conv3x3_forward: out must be {list(shape)} {x.dtype}, "
                         f"got {list(out.shape)} {out.dtype}")
    rows = _block_rows(geo, u)
    if rows:
        return out if _forward_blocks(x, u, geo, bias, out, fast, rows) else None
    v = np.empty((16, geo.c, geo.p), x.dtype)
    finite = (fast.input_transform if fast else _input_transform)(x, v, geo)
    if not finite:
        return None
    m = _products(u, v)
    del v
    (fast.output_transform if fast else _output_transform)(m, out, geo, bias)
    return out


def _block_rows(geo, u):
    """Tile rows per block of the blocked form; 0 for the whole-layer form: a larger weight,
    or a sample whose ``V`` and ``M`` take less than a block (the blocks would be whole
    samples, many small passes for nothing: 64 -> 64 at 8x8 batch 8 took 1.8x im2col's
    time)."""
    if u.nbytes > _FUSED_MAX_U_BYTES:
        return 0
    per_row = 16 * (u.shape[1] + u.shape[2]) * geo.pw * u.itemsize
    if per_row * geo.th < _FUSED_BLOCK_BYTES:
        return 0
    return max(1, _FUSED_BLOCK_BYTES // per_row)


def _forward_blocks(x, u, geo, bias, out, fast, rows):
    """The blocked form: each block of tile rows of one sample is transformed, multiplied and
    transformed back while its ``V`` and ``M`` stay in cache, the blocks spread over the CPU
    thread pool (single-threaded GEMMs); False when ``x`` is not all finite."""
    blocks = [(n, i0, min(geo.th, i0 + rows)) for n in range(geo.n)
              for i0 in range(0, geo.th, rows)]
    inp = fast.input_transform if fast else _input_transform
    outp = fast.output_transform if fast else _output_transform
    k = u.shape[1]

    def block(item):
        n, i0, i1 = item
        g = geo.block(i0, i1)
        r_lo = 2 * i0 - geo.pt + g.pt
        xb = x[n:n + 1, :, r_lo:r_lo + g.h]
        v = np.empty((16, geo.c, g.p), x.dtype)
        if not inp(xb, v, g):
            return False
        m = np.empty((16, k, g.p), x.dtype)
        np.matmul(u, v, out=m)
        outp(m, out[n:n + 1, :, 2 * i0:2 * i0 + g.oh], g, bias)
        return True

    with blas_one_thread():
        return all(parallel_map(block, blocks))


def _products(u, v):
    """``M[e] = U[e] @ V[e]`` for the 16 entries: one single-threaded GEMM per entry on the CPU
    thread pool. OpenBLAS's own threads would meet at the end of each of the 16 products; on a
    shared host one descheduled thread then stalls every product (measured under load: the
    layer's wall time 1.5-3x that of its CPU time), while the pool's caller takes over the
    products no worker has started."""
    m = np.empty((16, u.shape[1], v.shape[2]), v.dtype)

    def product(e):
        np.matmul(u[e], v[e], out=m[e])

    with blas_one_thread():
        parallel_map(product, range(16))
    return m


def _check(x, u, pads, bias):
    where = "winograd.conv3x3_forward"
    if x.ndim != 4 or u.ndim != 3 or u.shape[0] != 16 or u.shape[2] != x.shape[1]:
        raise ValueError(f"{where}: x must be [N, C, H, W] and u [16, K, C] with the same C, "
                         f"got x {tuple(x.shape)} and u {tuple(u.shape)}")
    if x.dtype != u.dtype or x.dtype.char not in "fd":
        raise ValueError(f"{where}: x and u must both be float32 or both float64, got "
                         f"{x.dtype} and {u.dtype}")
    if not applies(x.shape, (u.shape[1], u.shape[2], 3, 3), (1, 1), pads, (1, 1), 1):
        raise ValueError(f"{where}: pads must be ((top, bottom), (left, right)) in 0..2 "
                         f"leaving an output of at least 1x1, got {pads} for x "
                         f"{tuple(x.shape)}")
    if bias is not None and tuple(bias.shape) != (u.shape[1],):
        raise ValueError(f"{where}: bias must be [K] = [{u.shape[1]}], got "
                         f"{tuple(bias.shape)}")


def _wide(geo_narrow, k):
    """Whether NumPy's transforms run on wide tile rows (see ``_Geometry``): the GEMM grows by
    ``1 / tw`` for it, worth it up to ``_WIDE_MAX_K_PER_TILE`` output channels per tile of a
    tile row."""
    return k <= _WIDE_MAX_K_PER_TILE * geo_narrow.tw


def _numba_kernels(x):
    """The compiled transforms (``backend/_numba/winograd.py``) when numba is in use, else
    None."""
    if x.dtype.char not in "fd" or not _numba.enabled() or _compiled["error"]:
        return None
    if _compiled["kernels"] is None:
        try:
            from ._numba import winograd as kernels  # noqa: PLC0415  (imports numba)

            kernels.warm_up()
        except Exception as e:  # a numba that cannot build them here: NumPy's forms run
            _compiled["error"] = f"{type(e).__name__}: {e}"
            return None
        _compiled["kernels"] = kernels
    return _compiled["kernels"]


# the compiled transforms once built, or why they could not be
_compiled = {"kernels": None, "error": None}


# --------------------------------------------------------------------------- input transform
def _phase_rows(pad_lo, size, phase, count):
    """For the phase plane ``phase`` (rows ``2 i + phase`` of the padded input, ``i`` in
    ``0..count-1``): ``(first i, first input row, rows)`` that come from the input; the others
    are padding."""
    first_row = (phase - pad_lo) % 2
    first_i = (first_row + pad_lo - phase) // 2
    rows = min(len(range(first_row, size, 2)), count - first_i)
    return first_i, first_row, rows


def _input_transform(x, v, geo):
    """``V = B^T d B`` of every tile of ``x`` into ``v`` ``[16, C, P]`` (NumPy); False when
    ``x`` is not all finite (``v`` is then partly written)."""
    th, tw = geo.th, geo.tw
    per_channel = geo.n * (th + 1) * (tw + 1) * x.itemsize * 12
    block = max(1, min(geo.c, _BLOCK_BYTES // per_channel))
    rows = [_phase_rows(geo.pt, geo.h, p, th + 1) for p in (0, 1)]
    cols = [_phase_rows(geo.pl, geo.w, q, tw + 1) for q in (0, 1)]
    bad = []

    def part(lo, hi):
        # phase planes [p, q, c, n, th + 1, tw + 1] (their padding zeroed once) and the
        # row-transformed rows [a, q, c, n, th, tw + 1]
        ph = np.zeros((2, 2, block, geo.n, th + 1, tw + 1), x.dtype)
        t = np.empty((4, 2, block, geo.n, th, tw + 1), x.dtype)
        for c0 in range(lo, hi, block):
            c1 = min(hi, c0 + block)
            if not _input_block(x, v, geo, ph[:, :, :c1 - c0], t[:, :, :c1 - c0], c0, c1,
                                rows, cols):
                bad.append((c0, c1))

    split(x, part, geo.c, v.nbytes + x.nbytes)
    return not bad


def _input_block(x, v, geo, ph, t, c0, c1, rows, cols):
    th, tw = geo.th, geo.tw
    xs = x[:, c0:c1].transpose(1, 0, 2, 3)  # [c, n, h, w] view
    for p, (i0, r0, nr) in enumerate(rows):
        for q, (j0, s0, nc) in enumerate(cols):
            np.copyto(ph[p, q, :, :, i0:i0 + nr, j0:j0 + nc],
                      xs[:, :, r0:r0 + 2 * nr - 1:2, s0:s0 + 2 * nc - 1:2])
    # one sum of the block: not finite when any value is (or, rarely, when the sum overflows,
    # which only sends the call to im2col)
    with np.errstate(invalid="ignore", over="ignore"):
        if not np.isfinite(np.add.reduce(ph, axis=None)):
            return False
    # rows: d_r of tile i is phase (r % 2), row i + r // 2
    even, odd = ph[0], ph[1]
    e0, e1, o0, o1 = even[..., :th, :], even[..., 1:, :], odd[..., :th, :], odd[..., 1:, :]
    np.subtract(e0, e1, out=t[0])   # d0 - d2
    np.add(o0, e1, out=t[1])        # d1 + d2
    np.subtract(e1, o0, out=t[2])   # d2 - d1
    np.subtract(o0, o1, out=t[3])   # d1 - d3
    if geo.wide:
        # each channel block's tile rows as one run: column j + 1 of a row's last tile is
        # the next row's first (a value the output transform skips); the block's very last
        # entry has no next and is zeroed
        size = t[0, 0].size
        for a in range(4):
            ev, od = t[a, 0].reshape(-1), t[a, 1].reshape(-1)
            f0, f1, g0, g1 = ev[:-1], ev[1:], od[:-1], od[1:]
            dst = v[4 * a:4 * a + 4, c0:c1].reshape(4, size)
            np.subtract(f0, f1, out=dst[0, :-1])
            np.add(g0, f1, out=dst[1, :-1])
            np.subtract(f1, g0, out=dst[2, :-1])
            np.subtract(g0, g1, out=dst[3, :-1])
            dst[:, -1] = 0
        return True
    shape = (c1 - c0, geo.n, th, tw)
    for a in range(4):
        ev, od = t[a, 0], t[a, 1]
        f0, f1, g0, g1 = ev[..., :tw], ev[..., 1:], od[..., :tw], od[..., 1:]
        dst = v[4 * a:4 * a + 4, c0:c1].reshape((4,) + shape)
        np.subtract(f0, f1, out=dst[0])
        np.add(g0, f1, out=dst[1])
        np.subtract(f1, g0, out=dst[2])
        np.subtract(g0, g1, out=dst[3])
    return True


# --------------------------------------------------------------------------- output transform
def _output_transform(m, out, geo, bias):
    """``A^T M A`` of every tile of ``m`` ``[16, K, P]`` (plus ``bias``) into ``out``
    ``[N, K, OH, OW]``, cropped (NumPy)."""
    k = m.shape[1]
    per_channel = geo.p * m.itemsize * 8
    block = max(1, min(k, _BLOCK_BYTES // per_channel))
    mt = m.reshape(16, k, geo.n, geo.th, geo.pw)
    crop = [(len(range(a, geo.oh, 2)), len(range(b, geo.ow, 2)))
            for a in (0, 1) for b in (0, 1)]

    def part(lo, hi):
        r = np.empty((2, 4, block, geo.n, geo.th, geo.pw), m.dtype)
        s = np.empty((2, block, geo.n, geo.th, geo.pw), m.dtype)
        for k0 in range(lo, hi, block):
            k1 = min(hi, k0 + block)
            _output_block(mt[:, k0:k1], out[:, k0:k1], r[:, :, :k1 - k0], s[:, :k1 - k0],
                          None if bias is None else bias[k0:k1], crop)

    split(m, part, k, m.nbytes + out.nbytes)


def _output_block(mb, ob, r, s, bias, crop):
    if bias is not None:
        # every output of a tile sums M's entry (1, 1) with coefficient 1
        np.add(mb[5], bias.reshape(-1, 1, 1, 1), out=mb[5])
    # rows: A^T = [[1, 1, 1, 0], [0, 1, -1, -1]]
    for b in range(4):
        np.add(mb[4 + b], mb[8 + b], out=s[0])
        np.subtract(mb[4 + b], mb[8 + b], out=s[1])
        np.add(mb[b], s[0], out=r[0, b])
        np.subtract(s[1], mb[12 + b], out=r[1, b])
    # columns, written into the output phases (rows a::2, columns b::2), cropped
    for a in range(2):
        ra = r[a]
        np.add(ra[1], ra[2], out=s[0])
        np.subtract(ra[1], ra[2], out=s[1])
        (h0, w0), (h1, w1) = crop[2 * a], crop[2 * a + 1]
        np.add(ra[0, :, :, :h0, :w0].transpose(1, 0, 2, 3),
               s[0, :, :, :h0, :w0].transpose(1, 0, 2, 3), out=ob[:, :, a::2, 0::2])
        np.subtract(s[1, :, :, :h1, :w1].transpose(1, 0, 2, 3),
                    ra[3, :, :, :h1, :w1].transpose(1, 0, 2, 3), out=ob[:, :, a::2, 1::2])


# --------------------------------------------------------------------------- other backends
def _forward_generic(mod, x, u, geo, bias):
    """The same transforms with whole-array passes of ``mod`` (CuPy): no blocks, no threads."""
    if not bool(mod.isfinite(x).all()):
        return None
    hp, wp = 2 * geo.th + 2, 2 * geo.tw + 2
    xp = mod.zeros((geo.c, geo.n, hp, wp), x.dtype)
    xp[:, :, geo.pt:geo.pt + geo.h, geo.pl:geo.pl + geo.w] = x.transpose(1, 0, 2, 3)
    th, tw = geo.th, geo.tw
    d = [xp[:, :, r:r + 2 * th:2] for r in range(4)]
    t = (d[0] - d[2], d[1] + d[2], d[2] - d[1], d[1] - d[3])
    v = mod.empty((4, 4, geo.c, geo.n, th, tw), x.dtype)
    for a in range(4):
        e = [t[a][..., s:s + 2 * tw:2] for s in range(4)]
        v[a, 0], v[a, 1], v[a, 2], v[a, 3] = e[0] - e[2], e[1] + e[2], e[2] - e[1], e[1] - e[3]
    m = mod.matmul(u, v.reshape(16, geo.c, geo.p)).reshape(4, 4, -1, geo.n, th, tw)
    rows = (m[0] + m[1] + m[2], m[1] - m[2] - m[3])
    y = mod.empty((geo.n, u.shape[1], th, 2, tw, 2), x.dtype)
    for a, r in enumerate(rows):
        y[:, :, :, a, :, 0] = (r[0] + r[1] + r[2]).transpose(1, 0, 2, 3)
        y[:, :, :, a, :, 1] = (r[1] - r[2] - r[3]).transpose(1, 0, 2, 3)
    y = y.reshape(geo.n, -1, 2 * th, 2 * tw)[:, :, :geo.oh, :geo.ow]
    if bias is not None:
        y = y + bias.reshape(1, -1, 1, 1)
    return mod.ascontiguousarray(y)
