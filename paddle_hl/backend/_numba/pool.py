"""The 2-D max pool, compiled: its forward with each kernel offset one run over stride phase
planes, 2x2 windows of stride 2 directly (ResNet-50's stem pool at batch 8, 224x224: 38 to
4 ms; LeNet's pools 3x faster), and its gradient in one pass."""

from __future__ import annotations

import numpy as np

from .. import _threads
from ._njit import exact, fast
from ._planes import from_wide, phases, tap_start, wide_grid

__all__ = []


@fast
def pool_max_grad(g, arg, kh, kw, sh, sw, acc, lo, hi):
    # each output's gradient added at its window's maximum; the offset's row and column
    # come from a table (a division per element would cost more than the add)
    _, oh_, ow_ = g.shape
    rows = np.empty(kh * kw, np.int64)
    cols = np.empty(kh * kw, np.int64)
    for a in range(kh * kw):
        rows[a] = a // kw
        cols[a] = a % kw
    for p in range(lo, hi):
        gp = g[p]
        ap = arg[p]
        ac = acc[p]
        for i in range(oh_):
            grow = gp[i]
            arow = ap[i]
            for j in range(ow_):
                a = arow[j]
                ac[i * sh + rows[a], j * sw + cols[a]] += grow[j]



@exact
def _pool_max_2x2(x, want_arg, out, arg, lo, hi):
    # 2x2 windows, stride 2 (they do not overlap): each output from its four pixels
    # directly, in the offsets' order, with pool_max's rules
    _, oh_, ow_ = out.shape
    for p in range(lo, hi):
        xp = x[p]
        o = out[p]
        for i in range(oh_):
            r0 = xp[2 * i]
            r1 = xp[2 * i + 1]
            orow = o[i]
            if want_arg:
                arow = arg[p, i]
                for j in range(ow_):
                    best = r0[2 * j]
                    v = r0[2 * j + 1]
                    k = 1 if v > best else 0
                    best = np.maximum(best, v)
                    v = r1[2 * j]
                    k = 2 if v > best else k
                    best = np.maximum(best, v)
                    v = r1[2 * j + 1]
                    k = 3 if v > best else k
                    orow[j] = np.maximum(best, v)
                    arow[j] = k
            else:
                for j in range(ow_):
                    best = np.maximum(r0[2 * j], r0[2 * j + 1])
                    orow[j] = np.maximum(np.maximum(best, r1[2 * j]), r1[2 * j + 1])

@exact
def pool_max(x, kh, kw, sh, sw, low, want_arg, out, arg, lo, hi):
    # planes lo..hi of the padded [P, Hp, Wp] x: a running maximum over the kernel
    # offsets with NumPy's semantics (a NaN stays; the offset moves only on a strictly
    # greater value, so ties keep the first). As in the depthwise kernels, each offset is
    # one run over a wide grid of stride phase planes
    _, oh_, ow_ = out.shape
    if kh == 2 and kw == 2 and sh == 2 and sw == 2:
        _pool_max_2x2(x, want_arg, out, arg, lo, hi)
        return
    ph, flat, pc, run = wide_grid(x, kh, kw, sh, sw, 1, 1, oh_, ow_)
    best = np.empty(run, x.dtype)
    at = np.zeros(run, arg.dtype)
    for p in range(lo, hi):
        phases(x[p], sh, sw, 0, 0, ph, low)
        first = flat[0, 0]
        for t in range(run):
            best[t] = first[t]
        if want_arg:
            for t in range(run):
                at[t] = 0
        for ki in range(kh):
            for kj in range(kw):
                if ki == 0 and kj == 0:
                    continue
                a, b, start = tap_start(ki, kj, sh, sw, 1, 1, pc)
                seg = flat[a, b, start:start + run]
                k = ki * kw + kj
                # np.maximum keeps the first of equal values and propagates NaN, as
                # NumPy's running maximum does, and vectorises where a select does not
                if want_arg:
                    for t in range(run):
                        v = seg[t]
                        bt = best[t]
                        at[t] = k if v > bt else at[t]
                        best[t] = np.maximum(bt, v)
                else:
                    for t in range(run):
                        best[t] = np.maximum(best[t], seg[t])
        from_wide(best, pc, out[p])
        if want_arg:
            from_wide(at, pc, arg[p])



def max_pool2d(xpad, ksize, stride, out_size, want_arg, arg_dtype):
    """:func:`backend.windows.max_pool` for 2-D windows of a padded ``[N, C, Hp, Wp]`` float
    array in one pass per plane: ``(out, arg or None)``."""
    n, c, hp, wp = xpad.shape
    x = np.ascontiguousarray(xpad).reshape(n * c, hp, wp)
    out = np.empty((n * c,) + tuple(out_size), xpad.dtype)
    arg = np.empty(out.shape if want_arg else (1, 1, 1), arg_dtype)
    (kh, kw), (sh, sw) = ksize, stride
    low = xpad.dtype.type(np.finfo(np.float32).min)
    _threads.split(lambda lo, hi: pool_max(x, kh, kw, sh, sw, low, want_arg, out, arg, lo, hi),
                   n * c, x.nbytes)
    shape = (n, c, *out_size)
    return out.reshape(shape), (arg.reshape(shape) if want_arg else None)


def max_pool2d_grad(g, arg, padded_shape, ksize, stride):
    """:func:`backend.windows.max_pool_grad` for 2-D windows in one pass: each output gradient
    added to the input pixel its window's maximum came from (``arg``: the kernel offset of the
    maximum)."""
    n, c = padded_shape[:2]
    g = np.ascontiguousarray(g).reshape(n * c, *g.shape[2:])
    arg = np.ascontiguousarray(arg).reshape(g.shape)
    acc = np.zeros((n * c,) + tuple(padded_shape[2:]), g.dtype)
    (kh, kw), (sh, sw) = ksize, stride

    def part(lo, hi):
        pool_max_grad(g, arg, kh, kw, sh, sw, acc, lo, hi)

    _threads.split(part, n * c, acc.nbytes)
    return acc.reshape(padded_shape)
