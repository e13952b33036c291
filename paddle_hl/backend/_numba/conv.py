"""Compiled pieces of the dense convolution.

- im2col and col2im in the batch-innermost layout (``windows.im2col_nin``): one run per
  output row of a tap instead of NumPy's strided passes, the sums in NumPy's order (the same
  bits);
- thin dense 2-D convolutions (a first layer: few input channels times taps, stride 1),
  forward and both gradients, straight from the padded input: each tap one run over a wide
  grid of the plane, no im2col columns.
"""

from __future__ import annotations

import numpy as np

from .. import _threads
from ._njit import exact, fast
from ._planes import add_scaled, from_wide, to_wide

__all__ = []


# im2col and col2im in the batch-innermost layout, over channels lo..hi: the columns
# [C, taps, oh, ow, N] copied out of (gather) or summed into (scatter) the padded
# [C, Hp, Wp, N] plane; with stride 1 across, each output row of a tap is one run of
# ow * N values, else each output pixel one run of N. The sums go tap after tap, as
# NumPy's passes add them (the same numbers)
@exact
def nin_windows(cols, kh, kw, sh, sw, dh, dw_, plane, gather, lo, hi):
    c_, _, oh_, ow_, n_ = cols.shape
    _, hp_, wp_, _ = plane.shape
    flat_cols = cols.reshape(c_, kh * kw * oh_ * ow_ * n_)
    flat_plane = plane.reshape(c_, hp_ * wp_ * n_)
    span = ow_ * n_ if sw == 1 else n_
    for c in range(lo, hi):
        col_c = flat_cols[c]
        plane_c = flat_plane[c]
        for ki in range(kh):
            for kj in range(kw):
                t = ki * kw + kj
                for i in range(oh_):
                    r = (i * sh + ki * dh) * wp_
                    for j in range(ow_ if sw != 1 else 1):
                        s0 = ((t * oh_ + i) * ow_ + j) * n_
                        p0 = (r + j * sw + kj * dw_) * n_
                        col = col_c[s0:s0 + span]
                        pix = plane_c[p0:p0 + span]
                        if gather:
                            for e in range(span):
                                col[e] = pix[e]
                        else:
                            for e in range(span):
                                pix[e] += col[e]


# thin dense convolutions (few input channels times taps: a network's first layer), stride
# and dilation 1, on the zero-padded input: each tap is one run over a wide grid of the
# padded plane (output (i, j) at i * Wp + j, as the depthwise kernels), so no im2col
# columns are built. Sums are accumulated in another order than the GEMM's.
@fast
def conv_fwd(xpad, w, bias, out, lo, hi):
    # samples lo..hi: out[n, o] = bias[o] + the sum over c and taps of w[o, c, tap] *
    # shifted x[n, c]
    _, c_, hp, wp = xpad.shape
    o_, _, kh, kw = w.shape
    _, _, oh, ow = out.shape
    run = (oh - 1) * wp + ow
    acc = np.empty(run, out.dtype)
    for n in range(lo, hi):
        for o in range(o_):
            b0 = bias[o]
            for t in range(run):
                acc[t] = b0
            for c in range(c_):
                xf = xpad[n, c].reshape(hp * wp)
                for ki in range(kh):
                    for kj in range(kw):
                        off = ki * wp + kj
                        add_scaled(acc, xf[off:off + run], w[o, c, ki, kj])
            from_wide(acc, wp, out[n, o])

@fast
def conv_dgrad(g, w, dxpad, lo, hi):
    # samples lo..hi of the padded input gradient; the output gradient on the wide grid
    # is zero in the extra columns, whose products land on neighbouring pixels (exact
    # for finite weights only: the caller checks)
    n_, o_, oh, ow = g.shape
    _, c_, kh, kw = w.shape
    _, _, hp, wp = dxpad.shape
    run = (oh - 1) * wp + ow
    gwide = np.zeros((o_, run), g.dtype)
    for n in range(lo, hi):
        for o in range(o_):
            to_wide(g[n, o], wp, gwide[o])
        for c in range(c_):
            df = dxpad[n, c].reshape(hp * wp)
            for t in range(hp * wp):
                df[t] = 0.0
            for o in range(o_):
                for ki in range(kh):
                    for kj in range(kw):
                        off = ki * wp + kj
                        add_scaled(df[off:off + run], gwide[o], w[o, c, ki, kj])

@fast
def conv_wgrad(xpad, g, gw, lo, hi):
    # output channels lo..hi of the float64 weight gradient gw [O, C, kh, kw]: each entry a
    # dot product of the wide output gradient (zero extra columns: exact for finite x
    # only, the caller checks) with a shifted run of the padded input, over the batch
    n_, c_, hp, wp = xpad.shape
    _, _, oh, ow = g.shape
    _, _, kh, kw = gw.shape
    run = (oh - 1) * wp + ow
    gwide = np.zeros(run, g.dtype)
    for o in range(lo, hi):
        for c in range(c_):
            for ki in range(kh):
                for kj in range(kw):
                    gw[o, c, ki, kj] = 0.0
        for n in range(n_):
            to_wide(g[n, o], wp, gwide)
            for c in range(c_):
                xf = xpad[n, c].reshape(hp * wp)
                for ki in range(kh):
                    for kj in range(kw):
                        off = ki * wp + kj
                        src = xf[off:off + run]
                        s_ = 0.0
                        for t in range(run):
                            s_ += gwide[t] * src[t]
                        gw[o, c, ki, kj] += s_



def _nin_windows(cols, plane, ksize, stride, dilation, gather):
    (kh, kw), (sh, sw), (dh, dw) = ksize, stride, dilation
    _threads.split(lambda lo, hi: nin_windows(cols, kh, kw, sh, sw, dh, dw, plane, gather, lo,
                                              hi),
                   cols.shape[0], cols.nbytes + plane.nbytes)


def im2col_nin(plane, ksize, stride, dilation, out_size):
    """:func:`backend.windows.im2col_nin`'s window copy for 2-D windows: the padded
    C-contiguous ``[C, *Sp, N]`` plane unfolded into new ``[C, taps, *out, N]`` columns,
    split over channels."""
    c, n = plane.shape[0], plane.shape[-1]
    cols = np.empty((c, ksize[0] * ksize[1], *out_size, n), plane.dtype)
    _nin_windows(cols, plane, ksize, stride, dilation, True)
    return cols


def col2im_nin(cols, padded_shape, ksize, stride, dilation, out_size):
    """:func:`backend.windows.col2im_nin` for 2-D windows: the columns (C-contiguous, laid out
    ``[C, taps, *out, N]``) summed into a new ``[C, *Sp, N]`` array, split over channels."""
    n, c = padded_shape[:2]
    cols = np.ascontiguousarray(cols).reshape(c, ksize[0] * ksize[1], *out_size, n)
    acc = np.zeros((c, *padded_shape[2:], n), cols.dtype)
    _nin_windows(cols, acc, ksize, stride, dilation, False)
    return acc


def conv2d_forward(xpad, w, out_size, bias=None):
    """The stride-1, undilated, ungrouped 2-D convolution of the zero-padded C-contiguous
    ``xpad`` ``[N, C, Hp, Wp]`` with ``w`` ``[O, C, kh, kw]`` (same dtype), plus ``bias``
    ``[O]`` when given: ``[N, O, *out_size]``, split over the batch."""
    n, o = xpad.shape[0], w.shape[0]
    out = np.empty((n, o, *out_size), xpad.dtype)
    w = np.ascontiguousarray(w, dtype=xpad.dtype)
    b = (np.zeros(o, xpad.dtype) if bias is None
         else np.ascontiguousarray(bias.reshape(-1), dtype=xpad.dtype))
    _threads.split(lambda lo, hi: conv_fwd(xpad, w, b, out, lo, hi), n,
                   xpad.nbytes + out.nbytes)
    return out


def conv2d_input_grad(g, w, padded_shape):
    """The padded input gradient ``[N, C, Hp, Wp]`` of :func:`conv2d_forward` for output
    gradient ``g``, or None for weights that are not all finite (the kernel adds the wide
    grid's zero columns times the weights to real pixels)."""
    if not np.isfinite(w).all():
        return None
    g = np.ascontiguousarray(g)
    w = np.ascontiguousarray(w, dtype=g.dtype)
    dxpad = np.empty(padded_shape, g.dtype)
    _threads.split(lambda lo, hi: conv_dgrad(g, w, dxpad, lo, hi), g.shape[0],
                   g.nbytes + dxpad.nbytes)
    return dxpad


def conv2d_weight_grad(xpad, g, ksize):
    """The weight gradient ``[O, C, *ksize]`` of :func:`conv2d_forward` (summed in float64),
    or None for an input that is not all finite (see :func:`conv2d_input_grad`)."""
    if not np.isfinite(xpad).all():
        return None
    g = np.ascontiguousarray(g, dtype=xpad.dtype)
    o, c = g.shape[1], xpad.shape[1]
    gw = np.empty((o, c, *ksize))
    _threads.split(lambda lo, hi: conv_wgrad(xpad, g, gw, lo, hi), o, xpad.nbytes + g.nbytes)
    return gw.astype(xpad.dtype)
