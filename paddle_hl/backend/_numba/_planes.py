"""Shared pieces of the compiled window kernels (depthwise, max pool, thin convolutions).

A stride x stride *phase plane* of a plane holds every stride-th pixel (``ph[a, b, r, q]`` is
pixel ``(r * s + a, q * s + b)``), so each kernel tap reads, and the input gradients write,
contiguous rows. A plane ``[oh, ow]`` is handled on its *wide grid*: one run with rows
``pitch`` apart, the columns beyond ``ow`` spare, so each tap is one run over the whole grid.

numba keys each kernel's disk cache on its own file: the package discards cache entries older
than any of its source files (see ``_numba._discard_stale``), so editing this file recompiles
the kernels that inline these helpers.
"""

from __future__ import annotations

import numpy as np

from ._njit import exact, inline, inline_exact

__all__ = []


# dst += src * s (a scalar) over a run: inlined, so each kernel's own float flags apply (the
# exact kernels round each product before adding it, as NumPy does); runs are slices indexed
# from 0, so the loops vectorise
@inline_exact
def add_scaled(dst, src, s_):
    for t in range(dst.shape[0]):
        dst[t] += src[t] * s_


@exact
def phases_2x2(xpl, pt, pl, ph, fill):
    # stride 2 both ways: one pass over each source row fills both of its column phases
    # (the even and odd columns), reading the row once
    h_, w_ = xpl.shape
    _, _, pr, pc = ph.shape
    for a in range(2):
        for r in range(pr):
            y = r * 2 + a - pt
            r0 = ph[a, 0, r]
            r1 = ph[a, 1, r]
            if y < 0 or y >= h_:
                for q in range(pc):
                    r0[q] = fill
                    r1[q] = fill
                continue
            src = xpl[y]
            # columns q whose two source pixels 2q - pl and 2q - pl + 1 are both inside:
            # no bounds tests there, so the copy vectorises; the few others test
            q0 = min((pl + 1) // 2, pc)
            q1 = max(min(pc, (w_ - 1 + pl) // 2), q0)
            for q in range(q0):
                s0 = 2 * q - pl
                r0[q] = src[s0] if 0 <= s0 < w_ else fill
                r1[q] = src[s0 + 1] if 0 <= s0 + 1 < w_ else fill
            # slices indexed from 0: no negative-index tests either
            d0 = r0[q0:q1]
            d1 = r1[q0:q1]
            pairs = src[2 * q0 - pl:2 * q1 - pl]
            for u in range(q1 - q0):
                d0[u] = pairs[2 * u]
                d1[u] = pairs[2 * u + 1]
            for q in range(q1, pc):
                s0 = 2 * q - pl
                r0[q] = src[s0] if 0 <= s0 < w_ else fill
                r1[q] = src[s0 + 1] if 0 <= s0 + 1 < w_ else fill

@exact
def phases(xpl, sh, sw, pt, pl, ph, fill):
    # fill: the value of the pixels outside xpl (the padding)
    if sh == 2 and sw == 2:
        phases_2x2(xpl, pt, pl, ph, fill)
        return
    h_, w_ = xpl.shape
    _, _, pr, pc = ph.shape
    for a in range(sh):
        for b in range(sw):
            # the columns q whose source column q * sw + b - pl is inside the plane
            q_lo = min(max(0, (pl - b + sw - 1) // sw), pc)
            q_hi = max(min(pc, (w_ + pl - b + sw - 1) // sw), q_lo)
            for r in range(pr):
                y = r * sh + a - pt
                row = ph[a, b, r]
                if y < 0 or y >= h_:
                    for q in range(pc):
                        row[q] = fill
                    continue
                src = xpl[y]
                for q in range(q_lo):
                    row[q] = fill
                off = b - pl
                for q in range(q_lo, q_hi):
                    row[q] = src[q * sw + off]
                for q in range(q_hi, pc):
                    row[q] = fill

# a plane [oh, ow] and its wide grid (a run with rows pitch apart, the columns beyond ow
# spare): the copies in and out; slices indexed from 0 keep the copies vectorised
@exact
def to_wide(plane, pitch, wide):
    oh_, ow_ = plane.shape
    for i in range(oh_):
        src = plane[i]
        dst = wide[i * pitch:i * pitch + ow_]
        for j in range(ow_):
            dst[j] = src[j]

@exact
def from_wide(wide, pitch, plane):
    oh_, ow_ = plane.shape
    for i in range(oh_):
        src = wide[i * pitch:i * pitch + ow_]
        dst = plane[i]
        for j in range(ow_):
            dst[j] = src[j]

@exact
def phase_buffer(like, kh, kw, sh, sw, dh, dw_, oh_, ow_):
    # room for every tap's rows and columns of an oh_ x ow_ output, per phase
    return np.empty((sh, sw, oh_ + ((kh - 1) * dh) // sh, ow_ + ((kw - 1) * dw_) // sw),
                    like.dtype)

@inline
def wide_grid(like, kh, kw, sh, sw, dh, dw_, oh_, ow_):
    # the phase planes, each flattened, their pitch and the length of one tap's run over
    # the wide grid of an oh_ x ow_ output (output (i, j) at i * pitch + j)
    ph = phase_buffer(like, kh, kw, sh, sw, dh, dw_, oh_, ow_)
    pr, pc = ph.shape[2], ph.shape[3]
    return ph, ph.reshape(sh, sw, pr * pc), pc, (oh_ - 1) * pc + ow_

@inline
def tap_start(ki, kj, sh, sw, dh, dw_, pc):
    # tap (ki, kj): its phase plane (a, b) and where its run starts in that flat plane
    a, r = (ki * dh) % sh, (ki * dh) // sh
    b, q = (kj * dw_) % sw, (kj * dw_) // sw
    return a, b, r * pc + q
