"""Compiled transforms of the Winograd F(2x2, 3x3) convolution (``backend/winograd.py``).

- the input transform ``V = B^T d B``: per channel and sample, each tile row's four padded
  input rows are gathered once into a row buffer (the padding stays zero there), transformed
  along the rows in one vectorised pass, then each tile's 16 entries are written to the 16
  runs of ``V`` ``[16, C, P]``; the same pass checks that every value is finite;
- the output transform ``A^T M A``: per output channel, each tile's 16 entries of ``M``
  ``[16, K, P]`` give its 2x2 outputs plus the bias, written row by row into ``[N, K, OH,
  OW]``, cropped.

One pass over the input and one over ``M`` instead of NumPy's two dozen; the sums are the
same additions as the NumPy forms' in the same order (no fastmath), so the results are equal
to theirs up to the bias, which the NumPy form adds to ``M`` and these kernels to the output.
"""

from __future__ import annotations

import numpy as np

from .. import _threads
from ._njit import exact

__all__ = []


@exact
def wino_input(x, v, pt, pl, th, tw, lo, hi):
    # channels lo..hi of x [N, C, H, W] (any strides) into v [16, C, N * th * tw]; returns
    # whether every value read is finite
    n_, _, h_, w_ = x.shape
    wp = 2 * tw + 2
    rows = np.zeros((4, wp), v.dtype)  # only padding rows write its border columns: zeros
    t = np.empty((4, wp), v.dtype)
    finite = True
    for c in range(lo, hi):
        for n in range(n_):
            base = n * th * tw
            for i in range(th):
                for k in range(4):
                    r = 2 * i + k - pt
                    if 0 <= r < h_:
                        for s in range(w_):
                            val = x[n, c, r, s]
                            finite &= val - val == 0
                            rows[k, pl + s] = val
                    else:
                        for s in range(wp):
                            rows[k, s] = 0
                for s in range(wp):
                    d0, d1, d2, d3 = rows[0, s], rows[1, s], rows[2, s], rows[3, s]
                    t[0, s] = d0 - d2
                    t[1, s] = d1 + d2
                    t[2, s] = d2 - d1
                    t[3, s] = d1 - d3
                p0 = base + i * tw
                for a in range(4):
                    for j in range(tw):
                        e0, e1 = t[a, 2 * j], t[a, 2 * j + 1]
                        e2, e3 = t[a, 2 * j + 2], t[a, 2 * j + 3]
                        v[4 * a, c, p0 + j] = e0 - e2
                        v[4 * a + 1, c, p0 + j] = e1 + e2
                        v[4 * a + 2, c, p0 + j] = e2 - e1
                        v[4 * a + 3, c, p0 + j] = e1 - e3
    return finite


@exact
def wino_output(m, out, bias, th, tw, lo, hi):
    # output channels lo..hi: out[n, k, 2i + a, 2j + b] = (A^T M A)[a, b] of tile (i, j),
    # plus bias[k], cropped to out's size; each tile row in runs over its tiles
    n_, _, oh, ow = out.shape
    y = np.empty((2, 2 * tw), m.dtype)
    r = np.empty((2, 4, tw), m.dtype)
    for k in range(lo, hi):
        bk = bias[k]
        for n in range(n_):
            for i in range(th):
                p0 = (n * th + i) * tw
                for b in range(4):
                    m0, m1 = m[b, k, p0:p0 + tw], m[4 + b, k, p0:p0 + tw]
                    m2, m3 = m[8 + b, k, p0:p0 + tw], m[12 + b, k, p0:p0 + tw]
                    for j in range(tw):
                        s = m1[j] + m2[j]
                        d = m1[j] - m2[j]
                        r[0, b, j] = m0[j] + s
                        r[1, b, j] = d - m3[j]
                for a in range(2):
                    for j in range(tw):
                        s = r[a, 1, j] + r[a, 2, j]
                        d = r[a, 1, j] - r[a, 2, j]
                        y[a, 2 * j] = (r[a, 0, j] + s) + bk
                        y[a, 2 * j + 1] = (d - r[a, 3, j]) + bk
                    row = 2 * i + a
                    if row < oh:
                        for s in range(ow):
                            out[n, k, row, s] = y[a, s]


def input_transform(x, v, geo):
    """``backend.winograd``'s input transform of ``x`` into ``v`` ``[16, C, P]`` over the CPU
    thread pool; False when ``x`` is not all finite."""
    checks = []

    def part(lo, hi):
        checks.append(wino_input(x, v, geo.pt, geo.pl, geo.th, geo.tw, lo, hi))

    _threads.split(part, geo.c, v.nbytes + x.nbytes)
    return all(checks)


def output_transform(m, out, geo, bias):
    """``backend.winograd``'s output transform of ``m`` ``[16, K, P]`` into ``out``
    ``[N, K, OH, OW]`` plus ``bias`` (None: zero), over the CPU thread pool."""
    k = m.shape[1]
    b = np.zeros(k, m.dtype) if bias is None else np.ascontiguousarray(bias, m.dtype)

    def part(lo, hi):
        wino_output(m, out, b, geo.th, geo.tw, lo, hi)

    _threads.split(part, k, m.nbytes + out.nbytes)


def warm_up():
    """Compile both kernels (or load them from numba's cache) for float32 and float64 on tiny
    arrays, where a failure can still fall back to NumPy's forms."""
    for dt in (np.float32, np.float64):
        x = np.zeros((1, 1, 2, 2), dt)
        v = np.empty((16, 1, 1), dt)
        wino_input(x, v, 1, 1, 1, 1, 0, 1)
        wino_output(v, np.empty((1, 1, 2, 2), dt), np.zeros(1, dt), 1, 1, 0, 1)
