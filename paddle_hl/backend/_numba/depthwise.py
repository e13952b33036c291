"""Depthwise 2-D convolution, compiled, forward and both gradients.

- Channels last (``dw_*``, through :func:`cl_forward` and its adjoints; small planes, and any
  plane of data already channels last in memory): rows of
  (columns x channels), split over rows, each tap one run per row. On MobileNetV2's layers at
  batch 16 (forward, input and weight gradient) 1.1-1.4x faster than a loop per output pixel
  over channel ranges on 4x4-8x8 planes, 3-8x on 16x16-32x32 ones, and faster than the
  phase-plane kernels on every plane measured (up to 112x112), the transposing copies aside.
- Stride phase planes of the padded input (``dwp_*``, planes with rows of 16 outputs or more):
  each tap one run over a wide grid of the plane; forward and backward 1.4-1.9x faster than
  NumPy's blocked passes.

Between the two (short rows of large inputs) NumPy's blocked form stays faster; the CPU
backend (``backend/_numpy.py``) chooses.
"""

from __future__ import annotations

import numpy as np

from .. import _threads, tuning
from ._njit import exact, fast, inline_exact
from ._planes import add_scaled, from_wide, phase_buffer, phases, tap_start, to_wide, wide_grid

__all__ = []

# blocks of output rows the channels-last weight gradient sums separately (see
# cl_weight_grad)
_WGRAD_BLOCKS = tuning.value("depthwise.cl_wgrad_blocks")


# depthwise convolution on channels-last [N, H, W, C] arrays (w: [taps, C]), split over
# rows of the output (forward), of the input gradient, or over fixed blocks of output rows
# (weight gradient): each row is W * C contiguous values, and a tap adds one run per row
# -- with stride 1 across, one run of (columns x channels) against the tap's weights
# repeated along the row (wt: [taps, OW * C]); with a larger stride, one run of C channels
# per output column. Taps that fall in the padding are skipped. No fastmath: the loops
# vectorise without it, and each tap's product is rounded before it is added, in the taps'
# order, as NumPy's per-tap passes do (the forward and the input gradient give the same
# numbers). Floats divide as NumPy does: no zero-divisor check, which keeps a loop from
# vectorising
@exact
def _span(i, s_, p_, d_, k_, n_):
    # the taps t in [lo, hi) with 0 <= i * s_ - p_ + t * d_ < n_ (output i's taps inside);
    # symmetric in its roles: _span(t, d_, p_, s_, o_, n_) gives the outputs j in [lo, hi)
    # that tap t reads inside for (the columns of a row)
    base = i * s_ - p_
    lo = 0 if base >= 0 else (-base + d_ - 1) // d_
    hi = 0 if base >= n_ else min(k_, (n_ - 1 - base) // d_ + 1)
    return lo, max(lo, hi)


# the kernels' multiply-adds over a run: dst += a * b (elementwise). Inlined at numba's IR
# level, so each kernel's own float flags apply (the exact kernels round each product before
# adding it, as NumPy does) and no call is paid per run; runs are slices indexed from 0, so
# the loops vectorise
@inline_exact
def _add_product(dst, a, b):
    for c in range(dst.shape[0]):
        dst[c] += a[c] * b[c]


@inline_exact
def _tap_row(dst, src, w, wt, t, j0, j1, sw, so, c_, gather):
    # one tap over output columns j0..j1 of a row: with gather, dst (the output row) +=
    # src[input column j * sw + so] * w[t]; else (the input gradient) dst[input column] +=
    # src[output column] * w[t]
    if sw == 1:
        lo, hi = j0 * c_, j1 * c_
        s0 = (j0 + so) * c_
        n = hi - lo
        if gather:
            _add_product(dst[lo:hi], src[s0:s0 + n], wt[t, lo:hi])
        else:
            _add_product(dst[s0:s0 + n], src[lo:hi], wt[t, lo:hi])
        return
    wr = w[t]
    for j in range(j0, j1):
        s0 = (j * sw + so) * c_
        if gather:
            _add_product(dst[j * c_:(j + 1) * c_], src[s0:s0 + c_], wr)
        else:
            _add_product(dst[s0:s0 + c_], src[j * c_:(j + 1) * c_], wr)


@exact
def dw_forward(x, w, wt, kh, kw, sh, sw, dh, dw_, ph, pw, out, lo, hi):
    # output rows lo..hi of the flattened [N * OH] rows
    n_, h_, w_, c_ = x.shape
    _, oh_, ow_, _ = out.shape
    xf = x.reshape(n_ * h_, w_ * c_)
    of = out.reshape(n_ * oh_, ow_ * c_)
    for row in range(lo, hi):
        n, i = divmod(row, oh_)
        o = of[row]
        for e in range(ow_ * c_):
            o[e] = 0.0
        k0, k1 = _span(i, sh, ph, dh, kh, h_)
        for ki in range(k0, k1):
            xr = xf[n * h_ + i * sh - ph + ki * dh]
            for kj in range(kw):
                j0, j1 = _span(kj, dw_, pw, sw, ow_, w_)
                _tap_row(o, xr, w, wt, ki * kw + kj, j0, j1, sw, kj * dw_ - pw, c_, True)


@exact
def dw_input_grad(g, w, wt, kh, kw, sh, sw, dh, dw_, ph, pw, dx, lo, hi):
    # input-gradient rows lo..hi of the flattened [N * H] rows: each pixel receives its terms
    # in the taps' order (as the tap-by-tap passes add them)
    n_, h_, w_, c_ = dx.shape
    _, oh_, ow_, _ = g.shape
    gf = g.reshape(n_ * oh_, ow_ * c_)
    df = dx.reshape(n_ * h_, w_ * c_)
    for row in range(lo, hi):
        n, r = divmod(row, h_)
        d = df[row]
        for e in range(w_ * c_):
            d[e] = 0.0
        for ki in range(kh):
            y = r + ph - ki * dh  # = i * sh for the output row i this tap row reads from
            if y < 0 or y % sh != 0 or y // sh >= oh_:
                continue
            gr = gf[n * oh_ + y // sh]
            for kj in range(kw):
                j0, j1 = _span(kj, dw_, pw, sw, ow_, w_)
                _tap_row(d, gr, w, wt, ki * kw + kj, j0, j1, sw, kj * dw_ - pw, c_, False)


@exact
def dw_weight_grad(x, g, kh, kw, sh, sw, dh, dw_, ph, pw, parts, lo, hi):
    # blocks lo..hi of parts ([B, taps, C] float64): block b sums the output rows
    # b * R // B .. (b + 1) * R // B of the flattened [N * OH] rows, in order
    n_, h_, w_, c_ = x.shape
    _, oh_, ow_, _ = g.shape
    xf = x.reshape(n_ * h_, w_ * c_)
    gf = g.reshape(n_ * oh_, ow_ * c_)
    nb = parts.shape[0]
    rows = n_ * oh_
    for b in range(lo, hi):
        acc = parts[b]
        for t in range(kh * kw):
            for c in range(c_):
                acc[t, c] = 0.0
        for row in range(b * rows // nb, (b + 1) * rows // nb):
            n, i = divmod(row, oh_)
            gr = gf[row]
            k0, k1 = _span(i, sh, ph, dh, kh, h_)
            for ki in range(k0, k1):
                xr = xf[n * h_ + i * sh - ph + ki * dh]
                for kj in range(kw):
                    j0, j1 = _span(kj, dw_, pw, sw, ow_, w_)
                    a = acc[ki * kw + kj]
                    for j in range(j0, j1):
                        s0 = (j * sw + kj * dw_ - pw) * c_
                        _add_product(a, xr[s0:s0 + c_], gr[j * c_:(j + 1) * c_])


# depthwise convolution on larger channel-first planes: each [H, W] plane is split into
# stride x stride phase planes of the zero-padded input (ph[a, b, r, q] is padded pixel
# (r * s + a, q * s + b)), so every tap reads, and the input gradient writes, contiguous
# rows; the padding is real zeros, as in NumPy's padded forms (an inf weight meets them)
@exact
def dwp_forward(x, w, kh, kw, sh, sw, dh, dw_, pt, pl, out, lo, hi):
    # planes lo..hi of the flattened [N * C] axis; w: [C, taps]. Each tap is one run over
    # a wide output grid (rows pc apart, the phase planes' pitch): output (i, j) at
    # i * pc + j, the columns j >= ow_ computed and dropped
    _, c_, _, _ = x.shape
    _, _, oh_, ow_ = out.shape
    ph, flat, pc, run = wide_grid(x, kh, kw, sh, sw, dh, dw_, oh_, ow_)
    acc = np.empty(run, x.dtype)
    zero = acc[:0].sum()  # 0 in x's dtype: the phase copies stay in it
    for p in range(lo, hi):
        n, c = divmod(p, c_)
        phases(x[n, c], sh, sw, pt, pl, ph, zero)
        wc = w[c]
        for t in range(run):
            acc[t] = 0.0
        for ki in range(kh):
            for kj in range(kw):
                a, b, start = tap_start(ki, kj, sh, sw, dh, dw_, pc)
                add_scaled(acc, flat[a, b, start:start + run], wc[ki * kw + kj])
        from_wide(acc, pc, out[n, c])

@exact
def dwp_input_grad(g, w, kh, kw, sh, sw, dh, dw_, pt, pl, dx, lo, hi):
    # tap by tap into phase planes of the padded gradient, then the unpadded pixels out
    _, c_, h_, w_ = dx.shape
    _, _, oh_, ow_ = g.shape
    # the gradient on the wide grid of dwp_forward, zero in the extra columns: each tap
    # adds one run into a phase plane, its zeros landing on pixels of neighbouring rows
    # (exact for finite weights; planes with others take the rows one by one)
    ph, flat, pc, run = wide_grid(g, kh, kw, sh, sw, dh, dw_, oh_, ow_)
    wide = np.zeros(run, g.dtype)
    for p in range(lo, hi):
        n, c = divmod(p, c_)
        ph[...] = 0.0
        gp = g[n, c]
        wc = w[c]
        finite = True
        for t in range(kh * kw):
            finite = finite and np.isfinite(wc[t])
        if finite:
            to_wide(gp, pc, wide)
        for ki in range(kh):
            for kj in range(kw):
                a, b, start = tap_start(ki, kj, sh, sw, dh, dw_, pc)
                wv = wc[ki * kw + kj]
                if finite:
                    add_scaled(flat[a, b, start:start + run], wide, wv)
                    continue
                for i in range(oh_):
                    add_scaled(flat[a, b, start + i * pc:start + i * pc + ow_], gp[i], wv)
        d = dx[n, c]
        for y in range(h_):
            a, r = (y + pt) % sh, (y + pt) // sh
            drow = d[y]
            for b in range(sw):
                # the pixels xx = q * sw + b - pl of this row, from phase column q
                q_lo = (pl - b + sw - 1) // sw if pl > b else 0
                q_hi = (w_ + pl - b + sw - 1) // sw
                src = ph[a, b, r]
                off = b - pl
                for q in range(q_lo, q_hi):
                    drow[q * sw + off] = src[q]

@fast
def dwp_weight_grad(x, g, kh, kw, sh, sw, dh, dw_, pt, pl, gw, lo, hi):
    # channels lo..hi; gw: [C, taps] float64 sums over the batch and the plane
    n_, _, _, _ = x.shape
    _, _, oh_, ow_ = g.shape
    ph = phase_buffer(x, kh, kw, sh, sw, dh, dw_, oh_, ow_)
    zero = ph[0, 0, 0, :0].sum()
    for c in range(lo, hi):
        acc = gw[c]
        for t in range(kh * kw):
            acc[t] = 0.0
        for n in range(n_):
            phases(x[n, c], sh, sw, pt, pl, ph, zero)
            gp = g[n, c]
            for ki in range(kh):
                a, r0 = (ki * dh) % sh, (ki * dh) // sh
                for kj in range(kw):
                    b, q0 = (kj * dw_) % sw, (kj * dw_) // sw
                    s_ = 0.0
                    for i in range(oh_):
                        seg = ph[a, b, r0 + i, q0:q0 + ow_]
                        grow = gp[i]
                        for j in range(ow_):
                            s_ += seg[j] * grow[j]
                    acc[ki * kw + kj] += s_



def _geometry(ksize, stride, dilation, pads):
    (kh, kw), (sh, sw), (dh, dw), ((pt, _), (pl, _)) = ksize, stride, dilation, pads
    return kh, kw, sh, sw, dh, dw, pt, pl


def _tiled(w, sw, width):
    """``[taps, width * C]``: each tap's channel weights repeated along a row of ``width``
    outputs (stride 1 across; a stand-in otherwise, not read)."""
    if sw != 1:
        return w[:, :0]
    return np.ascontiguousarray(np.broadcast_to(w[:, None, :], (w.shape[0], width, w.shape[1]))
                                ).reshape(w.shape[0], -1)


def cl_forward(x, w, ksize, stride, dilation, pads, out):
    """The depthwise convolution of channels-last ``x`` (``[N, H, W, C]``) with ``w``
    (``[taps, C]``) into C-contiguous ``out`` (``[N, OH, OW, C]``), split over the output rows
    on the thread pool; returns ``out``. Taps in the padding are skipped: NumPy's numbers for
    finite weights."""
    geo = _geometry(ksize, stride, dilation, pads)
    wt = _tiled(w, geo[3], out.shape[2])
    _threads.split(lambda lo, hi: dw_forward(x, w, wt, *geo, out, lo, hi),
                   out.shape[0] * out.shape[1], x.nbytes + out.nbytes)
    return out


def cl_input_grad(g, w, ksize, stride, dilation, pads, dx):
    """The input gradient of :func:`cl_forward` for ``g`` (``[N, OH, OW, C]``) into
    C-contiguous ``dx`` (``[N, H, W, C]``), split over its rows; returns ``dx``."""
    geo = _geometry(ksize, stride, dilation, pads)
    wt = _tiled(w, geo[3], g.shape[2])
    _threads.split(lambda lo, hi: dw_input_grad(g, w, wt, *geo, dx, lo, hi),
                   dx.shape[0] * dx.shape[1], g.nbytes + dx.nbytes)
    return dx


def cl_weight_grad(x, g, ksize, stride, dilation, pads):
    """The weight gradient of :func:`cl_forward`: float64 ``[taps, C]``. The output rows are
    summed in a number of blocks that depends on the sizes only (the blocks run on the pool,
    then add up in order), so the result is the same with any number of threads."""
    geo = _geometry(ksize, stride, dilation, pads)
    rows = g.shape[0] * g.shape[1]
    blocks = min(rows, _WGRAD_BLOCKS) if x.nbytes + g.nbytes >= _threads.MIN_BYTES else 1
    parts = np.empty((blocks, geo[0] * geo[1], x.shape[-1]))
    _threads.run(lambda lo, hi: dw_weight_grad(x, g, *geo, parts, lo, hi),
                 [(b, b + 1) for b in range(blocks)])
    return parts.sum(axis=0) if blocks > 1 else parts[0]


def run(kernel, a, b, ksize, stride, dilation, pads, out, extent):
    """Run the compiled depthwise ``kernel`` (one of this module's) on ``a`` and ``b`` into
    ``out``, split over ``range(extent)`` on the thread pool; returns ``out``. The phase-plane
    kernels (C-contiguous float arrays; ``pads`` only its low sides are read, the output size
    says the rest; the channels-last ones run through :func:`cl_forward` and its adjoints):

    - :func:`dwp_forward` (x ``[N, C, H, W]``, w ``[C, taps]``), :func:`dwp_input_grad` (g, w),
      split over the ``N * C`` planes, and :func:`dwp_weight_grad` (x, g -> float64
      ``[C, taps]``), split over channels: on stride phase planes of the zero-padded input.
    """
    geo = _geometry(ksize, stride, dilation, pads)
    _threads.split(lambda lo, hi: kernel(a, b, *geo, out, lo, hi),
                   extent, a.nbytes + b.nbytes + out.nbytes)
    return out
