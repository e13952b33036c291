"""Batch norm's training forward and backward, compiled: two passes each way (NumPy's forms
take about a dozen), optionally with a ReLU or ReLU6 applied inside them, its derivative kept
as a byte mask. Sums are accumulated in float64 on the thread pool's channel ranges."""

from __future__ import annotations

import numpy as np

from .. import _threads
from ._njit import fast

__all__ = []

# the activations batch norm can apply in its own passes (see :func:`batch_norm_train`)
ACTS = {None: 0, "relu": 1, "relu6": 2}


@fast
def bn_forward(x, w, b, eps, act, top, out, mask, mean, var, invstd, ss_, lo, hi):
    # act: 0 none, 1 ReLU (NaN gives 0), 2 ReLU6 (clipped to [0, top]; NaN stays). With
    # an activation, mask gets its 0/1 derivative at the output, 0 < out < top (top: inf
    # for ReLU), as the activations' own gradients read it; the output is then computed
    # in out's dtype (scale and shift rounded to it through ss_), so the mask sees the
    # stored values, and the loops are selects, not branches, so they vectorise (ss_[2]
    # holds zeros of out's dtype)
    n_, _, l_ = x.shape
    m = n_ * l_
    for c in range(lo, hi):
        s = 0.0
        for n in range(n_):
            for i in range(l_):
                s += x[n, c, i]
        mu = s / m
        ss = 0.0
        for n in range(n_):
            for i in range(l_):
                d = x[n, c, i] - mu
                ss += d * d
        va = ss / m
        inv = 1.0 / np.sqrt(va + eps)
        sc = inv * w[c]
        sh = b[c] - mu * sc
        if act == 0:
            for n in range(n_):
                for i in range(l_):
                    out[n, c, i] = x[n, c, i] * sc + sh
        else:
            ss_[0, c] = sc
            ss_[1, c] = sh
            scd = ss_[0, c]
            shd = ss_[1, c]
            zero = ss_[2, c]  # 0 in out's dtype (the caller's zeros)
            if act == 1:
                for n in range(n_):
                    for i in range(l_):
                        y = x[n, c, i] * scd + shd
                        y = y if y > zero else zero
                        out[n, c, i] = y
                        mask[n, c, i] = y > zero
            else:
                for n in range(n_):
                    for i in range(l_):
                        y = x[n, c, i] * scd + shd
                        y = top if y > top else y
                        y = zero if y < zero else y
                        out[n, c, i] = y
                        mask[n, c, i] = (y > zero) & (y < top)
        mean[c] = mu
        var[c] = va
        invstd[c] = inv

@fast
def bn_backward(g, x, w, mean, invstd, act, mask, dx, gw, gb, lo, hi):
    # with an activation (act != 0), g is first multiplied by its 0/1 derivative (mask,
    # from the forward); a NaN or inf g stays NaN where it is 0, as in the activations'
    # own gradients
    n_, _, l_ = x.shape
    m = n_ * l_
    for c in range(lo, hi):
        mu = mean[c]
        sg = 0.0
        sgx = 0.0
        if act == 0:
            for n in range(n_):
                for i in range(l_):
                    gv = g[n, c, i]
                    sg += gv
                    sgx += gv * (x[n, c, i] - mu)
        else:
            for n in range(n_):
                for i in range(l_):
                    gv = g[n, c, i] * mask[n, c, i]
                    sg += gv
                    sgx += gv * (x[n, c, i] - mu)
        inv = invstd[c]
        sc = inv * w[c]
        k = sc / m
        a = k * inv * inv * sgx
        shift = k * sg - a * mu
        if act == 0:
            for n in range(n_):
                for i in range(l_):
                    dx[n, c, i] = sc * g[n, c, i] - a * x[n, c, i] - shift
        else:
            for n in range(n_):
                for i in range(l_):
                    gv = g[n, c, i] * mask[n, c, i]
                    dx[n, c, i] = sc * gv - a * x[n, c, i] - shift
        gw[c] = inv * sgx
        gb[c] = sg


# the same two passes each way on channels-last memory: x as [M, C] rows (M = N * L, row
# r = n * L + i, so each channel's terms come in the order of the kernels above), the loops
# over a row's channels lo..hi innermost (they vectorise); the per-channel sums and
# coefficients live in float64 arrays (acc), the coefficients as the kernels above round them
@fast
def bn_forward_rows(x, w, b, eps, act, top, out, mask, mean, var, invstd, ss_, acc, lo, hi):
    # every array is sliced to the channels lo..hi first: loops indexed from 0 vectorise
    m_ = x.shape[0]
    k_ = hi - lo
    s, q, sc, sh = acc[0, lo:hi], acc[1, lo:hi], acc[2, lo:hi], acc[3, lo:hi]
    for c in range(k_):
        s[c] = 0.0
        q[c] = 0.0
    for r in range(m_):
        row = x[r, lo:hi]
        for c in range(k_):
            s[c] += row[c]
    for c in range(k_):
        s[c] = s[c] / m_
    for r in range(m_):
        row = x[r, lo:hi]
        for c in range(k_):
            d = row[c] - s[c]
            q[c] += d * d
    wc, bc = w[lo:hi], b[lo:hi]
    scd, shd, zero = ss_[0, lo:hi], ss_[1, lo:hi], ss_[2, lo:hi]
    mc, vc, ic = mean[lo:hi], var[lo:hi], invstd[lo:hi]
    for c in range(k_):
        mu = s[c]
        va = q[c] / m_
        inv = 1.0 / np.sqrt(va + eps)
        sc[c] = inv * wc[c]
        sh[c] = bc[c] - mu * sc[c]
        scd[c] = sc[c]
        shd[c] = sh[c]
        mc[c] = mu
        vc[c] = va
        ic[c] = inv
    if act == 0:
        for r in range(m_):
            row, o = x[r, lo:hi], out[r, lo:hi]
            for c in range(k_):
                o[c] = row[c] * sc[c] + sh[c]
    elif act == 1:
        for r in range(m_):
            row, o, k = x[r, lo:hi], out[r, lo:hi], mask[r, lo:hi]
            for c in range(k_):
                y = row[c] * scd[c] + shd[c]
                y = y if y > zero[c] else zero[c]
                o[c] = y
                k[c] = y > zero[c]
    else:
        for r in range(m_):
            row, o, k = x[r, lo:hi], out[r, lo:hi], mask[r, lo:hi]
            for c in range(k_):
                y = row[c] * scd[c] + shd[c]
                y = top if y > top else y
                y = zero[c] if y < zero[c] else y
                o[c] = y
                k[c] = (y > zero[c]) & (y < top)

@fast
def bn_backward_rows(g, x, w, mean, invstd, act, mask, dx, gw, gb, acc, lo, hi):
    m_ = x.shape[0]
    k_ = hi - lo
    sg, sgx, sc, a, sh = (acc[0, lo:hi], acc[1, lo:hi], acc[2, lo:hi], acc[3, lo:hi],
                          acc[4, lo:hi])
    mc = mean[lo:hi]
    for c in range(k_):
        sg[c] = 0.0
        sgx[c] = 0.0
    for r in range(m_):
        gr, xr = g[r, lo:hi], x[r, lo:hi]
        if act == 0:
            for c in range(k_):
                gv = gr[c]
                sg[c] += gv
                sgx[c] += gv * (xr[c] - mc[c])
        else:
            k = mask[r, lo:hi]
            for c in range(k_):
                gv = gr[c] * k[c]
                sg[c] += gv
                sgx[c] += gv * (xr[c] - mc[c])
    wc, ic, gwc, gbc = w[lo:hi], invstd[lo:hi], gw[lo:hi], gb[lo:hi]
    for c in range(k_):
        inv = ic[c]
        sc[c] = inv * wc[c]
        kk = sc[c] / m_
        a[c] = kk * inv * inv * sgx[c]
        sh[c] = kk * sg[c] - a[c] * mc[c]
        gwc[c] = inv * sgx[c]
        gbc[c] = sg[c]
    for r in range(m_):
        gr, xr, d = g[r, lo:hi], x[r, lo:hi], dx[r, lo:hi]
        if act == 0:
            for c in range(k_):
                d[c] = sc[c] * gr[c] - a[c] * xr[c] - sh[c]
        else:
            k = mask[r, lo:hi]
            for c in range(k_):
                d[c] = sc[c] * (gr[c] * k[c]) - a[c] * xr[c] - sh[c]


def _channels(v, c, dt, fill):
    """A per-channel parameter as a contiguous ``[C]`` array of ``dt`` (``fill`` for None)."""
    if v is None:
        return np.full(c, fill, dt)
    return np.ascontiguousarray(v.reshape(-1), dtype=dt)


def batch_norm_train(x, w, b, eps, act=None):
    """Batch statistics and normalised output of a float array over all but its channel axis:
    a contiguous ``[N, C, L]`` array (channel-first), or the ``[N*L, C]`` rows of one laid out
    channels last (2-D: the ``*_rows`` kernels); ``w``/``b`` are per-channel arrays (or None
    for 1 and 0). ``act``: None, ``'relu'`` or ``'relu6'``, applied to the output in the same
    pass.

    Returns ``(out, mean, var, invstd, mask)``, ``out`` and ``mask`` shaped as ``x``; mean,
    var and invstd have shape ``[C]``; ``mask`` (None without ``act``) is the activation's 0/1
    derivative, for the backward."""
    dt = x.dtype
    rows = x.ndim == 2
    c = x.shape[-1] if rows else x.shape[1]
    x = np.ascontiguousarray(x, dtype=dt)
    w = _channels(w, c, dt, 1)
    b = _channels(b, c, dt, 0)
    out = np.empty_like(x)
    code = ACTS[act]
    mask = np.empty(x.shape if code else (1,) * x.ndim, np.bool_)
    mean, var, invstd = np.empty(c, dt), np.empty(c, dt), np.empty(c, dt)
    e = dt.type(eps)
    top = dt.type(np.inf if act == "relu" else 6)
    ss = np.zeros((3, c), dt)  # per-channel scale and shift in dt, and a 0 of dt
    if rows:
        acc = np.empty((4, c))  # the rows kernel's per-channel float64 sums and coefficients

        def part(lo, hi):
            bn_forward_rows(x, w, b, e, code, top, out, mask, mean, var, invstd, ss, acc, lo,
                            hi)
    else:
        def part(lo, hi):  # whole arrays and a channel range
            bn_forward(x, w, b, e, code, top, out, mask, mean, var, invstd, ss, lo, hi)

    _threads.split(part, c, 2 * x.nbytes)
    return out, mean, var, invstd, (mask if code else None)


def batch_norm_train_grad(g, x, w, mean, invstd, mask=None):
    """The gradients ``(dx, dw, db)`` of :func:`batch_norm_train` for upstream ``g`` (shaped
    as ``x``: channel-first or rows); with an activation, ``mask`` is the one it returned (its
    derivative is applied first)."""
    dt = x.dtype
    rows = x.ndim == 2
    c = x.shape[-1] if rows else x.shape[1]
    g = np.ascontiguousarray(g, dtype=dt)
    x = np.ascontiguousarray(x, dtype=dt)
    w = _channels(w, c, dt, 1)
    dx = np.empty_like(x)
    gw, gb = np.empty(c, dt), np.empty(c, dt)
    code = 0 if mask is None else 1
    m = np.empty((1,) * x.ndim, np.bool_) if mask is None else mask
    if rows:
        acc = np.empty((5, c))

        def part(lo, hi):
            bn_backward_rows(g, x, w, mean, invstd, code, m, dx, gw, gb, acc, lo, hi)
    else:
        def part(lo, hi):
            bn_backward(g, x, w, mean, invstd, code, m, dx, gw, gb, lo, hi)

    _threads.split(part, c, 3 * x.nbytes)
    return dx, gw, gb
