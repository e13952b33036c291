"""Depthwise 2-D convolution, compiled, forward and both gradients.

- Channels last (``dw_*``, small planes): each output pixel's taps are contiguous runs of
  channels; 2-2.7x faster there than NumPy's per-tap passes.
- Stride phase planes of the padded input (``dwp_*``, planes with rows of 16 outputs or more):
  each tap one run over a wide grid of the plane; forward and backward 1.4-1.9x faster than
  NumPy's blocked passes.

Between the two (short rows of large inputs) NumPy's blocked form stays faster; the CPU
backend (``backend/_numpy.py``) chooses.
"""

from __future__ import annotations

import numpy as np

from .. import _threads
from ._njit import exact, fast, inline_exact
from ._planes import add_scaled, from_wide, phase_buffer, phases, tap_start, to_wide, wide_grid

__all__ = []


# depthwise convolution on channels-last [N, H, W, C] arrays (w: [taps, C]), over the
# channels lo..hi: each output pixel's taps are contiguous runs of channels, which
# vectorise; taps that fall in the padding are skipped. No fastmath: the loops over
# channels vectorise without it, and each tap's product is rounded before it is added,
# in the taps' order, as NumPy's per-tap passes do (the forward gives the same numbers).
# Floats divide as NumPy does: no zero-divisor check, which keeps a loop from vectorising
@exact
def _span(i, s_, p_, d_, k_, n_):
    # the taps t in [lo, hi) with 0 <= i * s_ - p_ + t * d_ < n_ (output i's taps inside)
    base = i * s_ - p_
    lo = 0 if base >= 0 else (-base + d_ - 1) // d_
    hi = 0 if base >= n_ else min(k_, (n_ - 1 - base) // d_ + 1)
    return lo, max(lo, hi)

# the kernels' multiply-adds over a run: dst += a * b (elementwise) and dst += src * s
# (a scalar). Inlined at numba's IR level, so each kernel's own float flags apply (the
# exact kernels round each product before adding it, as NumPy does) and no call is paid
# per run; runs are slices indexed from 0, so the loops vectorise
@inline_exact
def _add_product(dst, a, b):
    for c in range(dst.shape[0]):
        dst[c] += a[c] * b[c]


@exact
def dw_forward(x, w, kh, kw, sh, sw, dh, dw_, ph, pw, out, lo, hi):
    n_, h_, w_, _ = x.shape
    _, oh_, ow_, _ = out.shape
    m = hi - lo
    for n in range(n_):
        for i in range(oh_):
            k0, k1 = _span(i, sh, ph, dh, kh, h_)
            for j in range(ow_):
                j0, j1 = _span(j, sw, pw, dw_, kw, w_)
                o = out[n, i, j, lo:hi]
                for c in range(m):
                    o[c] = 0.0
                for ki in range(k0, k1):
                    for kj in range(j0, j1):
                        xr = x[n, i * sh - ph + ki * dh, j * sw - pw + kj * dw_, lo:hi]
                        wr = w[ki * kw + kj, lo:hi]
                        _add_product(o, xr, wr)

@exact
def dw_input_grad(g, w, kh, kw, sh, sw, dh, dw_, ph, pw, dx, lo, hi):
    # tap by tap, as NumPy's passes: each pixel receives its terms in the taps' order
    n_, h_, w_, _ = dx.shape
    _, oh_, ow_, _ = g.shape
    m = hi - lo
    for n in range(n_):
        for r in range(h_):
            for q in range(w_):
                d = dx[n, r, q, lo:hi]
                for c in range(m):
                    d[c] = 0.0
        for ki in range(kh):
            for kj in range(kw):
                wr = w[ki * kw + kj, lo:hi]
                for i in range(oh_):
                    k0, k1 = _span(i, sh, ph, dh, kh, h_)
                    if not k0 <= ki < k1:
                        continue
                    for j in range(ow_):
                        j0, j1 = _span(j, sw, pw, dw_, kw, w_)
                        if not j0 <= kj < j1:
                            continue
                        d = dx[n, i * sh - ph + ki * dh, j * sw - pw + kj * dw_, lo:hi]
                        gr = g[n, i, j, lo:hi]
                        _add_product(d, gr, wr)

@exact
def dw_weight_grad(x, g, kh, kw, sh, sw, dh, dw_, ph, pw, gw, lo, hi):
    # gw: [taps, C] sums
    n_, h_, w_, _ = x.shape
    _, oh_, ow_, _ = g.shape
    m = hi - lo
    for t in range(kh * kw):
        a = gw[t, lo:hi]
        for c in range(m):
            a[c] = 0.0
    for n in range(n_):
        for i in range(oh_):
            k0, k1 = _span(i, sh, ph, dh, kh, h_)
            for j in range(ow_):
                j0, j1 = _span(j, sw, pw, dw_, kw, w_)
                gr = g[n, i, j, lo:hi]
                for ki in range(k0, k1):
                    for kj in range(j0, j1):
                        xr = x[n, i * sh - ph + ki * dh, j * sw - pw + kj * dw_, lo:hi]
                        a = gw[ki * kw + kj, lo:hi]
                        _add_product(a, xr, gr)


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



def run(kernel, a, b, ksize, stride, dilation, pads, out, extent):
    """Run the compiled depthwise ``kernel`` (one of this module's) on ``a`` and ``b`` into
    ``out``, split over ``range(extent)`` on the thread pool; returns ``out``. The kernels
    (C-contiguous float arrays; ``pads`` only its low sides are read, the output size says the
    rest):

    - :func:`dw_forward` (x ``[N, H, W, C]``, w ``[taps, C]`` -> ``[N, OH, OW, C]``),
      :func:`dw_input_grad` (g, w -> ``[N, H, W, C]``), :func:`dw_weight_grad` (x, g ->
      float64 ``[taps, C]``): channels last, taps in the padding skipped (the forward needs
      finite weights for NumPy's numbers), split over channels;
    - :func:`dwp_forward` (x ``[N, C, H, W]``, w ``[C, taps]``), :func:`dwp_input_grad` (g, w),
      split over the ``N * C`` planes, and :func:`dwp_weight_grad` (x, g -> float64
      ``[C, taps]``), split over channels: on stride phase planes of the zero-padded input.
    """
    (kh, kw), (sh, sw), (dh, dw), ((pt, _), (pl, _)) = ksize, stride, dilation, pads
    _threads.split(lambda lo, hi: kernel(a, b, kh, kw, sh, sw, dh, dw, pt, pl, out, lo, hi),
                   extent, a.nbytes + b.nbytes + out.nbytes)
    return out
