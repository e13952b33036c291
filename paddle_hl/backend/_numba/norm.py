"""Batch norm's training forward and backward, compiled: two passes each way (NumPy's forms
take about a dozen), optionally with a ReLU or ReLU6 applied inside them, its derivative kept
as a byte mask. Sums are accumulated in float64: on the thread pool's channel ranges, or for
larger channels-last arrays on blocks of rows."""

from __future__ import annotations

import numpy as np

from .. import _threads, tuning
from ._njit import fast

__all__ = []

# the channels-last kernels: blocks of rows summed separately, values per chunk of a loop,
# and the fewest channels for which the per-row form runs (see _chunked)
_ROW_BLOCKS = tuning.value("norm.rows_blocks")
_WIDE = tuning.value("norm.rows_chunk")
_ROWS_MIN_C = tuning.value("norm.rows_min_channels")

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


# larger channels-last arrays, or few channels (see _chunked): x as [M, C] rows read flat. Each
# pass runs over blocks of rows (each thread streams its own rows), a block in chunks of u
# rows (u * C >= _WIDE values: one long loop per chunk, which vectorises, against the
# per-channel values repeated u times, "tiled"). The sums of a block go to its own float64
# row of parts, u partial sums per channel; the caller adds them up in a fixed order (the
# number of blocks depends on the sizes only, so the numbers do not depend on the thread
# count) and computes the per-channel coefficients between the passes in float64, as the
# channel-first kernels above compute them
@fast
def bn_rows_sums(xf, muw, mode, parts, rows, lo, hi):
    # blocks lo..hi of the [rows, C] rows xf: parts[b, :W] = the sums over block b's rows
    # of x (mode 0) or of (x - mu)**2 (mode 1; muw the tiled float64 mean), chunk by chunk
    nb, w_ = parts.shape
    c_ = xf.shape[0] // rows
    for b in range(lo, hi):
        p = parts[b]
        for e in range(w_):
            p[e] = 0.0
        end = (b + 1) * rows // nb * c_
        for s0 in range(b * rows // nb * c_, end, w_):
            n = min(w_, end - s0)
            xs = xf[s0:s0 + n]
            if mode == 0:
                for e in range(n):
                    p[e] += xs[e]
            else:
                for e in range(n):
                    d = xs[e] - muw[e]
                    p[e] += d * d

@fast
def bn_rows_apply(xf, scw, shw, ssw, act, top, of, mf, rows, nb, lo, hi):
    # blocks lo..hi of nb: out = x * scale + shift (scw, shw tiled float64; with an
    # activation in out's dtype through ssw, tiled ss_, as bn_forward does), and the
    # activation's mask
    w_ = scw.shape[0]
    c_ = xf.shape[0] // rows
    scd, shd, zero = ssw[0], ssw[1], ssw[2]
    end = hi * rows // nb * c_
    for s0 in range(lo * rows // nb * c_, end, w_):
        n = min(w_, end - s0)
        xs, o = xf[s0:s0 + n], of[s0:s0 + n]
        if act == 0:
            for e in range(n):
                o[e] = xs[e] * scw[e] + shw[e]
        elif act == 1:
            k = mf[s0:s0 + n]
            for e in range(n):
                y = xs[e] * scd[e] + shd[e]
                y = y if y > zero[e] else zero[e]
                o[e] = y
                k[e] = y > zero[e]
        else:
            k = mf[s0:s0 + n]
            for e in range(n):
                y = xs[e] * scd[e] + shd[e]
                y = top if y > top else y
                y = zero[e] if y < zero[e] else y
                o[e] = y
                k[e] = (y > zero[e]) & (y < top)

@fast
def bn_rows_grad_sums(gf, xf, meanw, act, mf, parts, rows, lo, hi):
    # blocks lo..hi: parts[b, 0] = the sums of g (times the mask with an activation) over
    # block b's rows, parts[b, 1] = of that times (x - mean), chunk by chunk
    nb, _, w_ = parts.shape
    c_ = xf.shape[0] // rows
    for b in range(lo, hi):
        sg, sgx = parts[b, 0], parts[b, 1]
        for e in range(w_):
            sg[e] = 0.0
            sgx[e] = 0.0
        end = (b + 1) * rows // nb * c_
        for s0 in range(b * rows // nb * c_, end, w_):
            n = min(w_, end - s0)
            gs, xs = gf[s0:s0 + n], xf[s0:s0 + n]
            if act == 0:
                for e in range(n):
                    gv = gs[e]
                    sg[e] += gv
                    sgx[e] += gv * (xs[e] - meanw[e])
            else:
                k = mf[s0:s0 + n]
                for e in range(n):
                    gv = gs[e] * k[e]
                    sg[e] += gv
                    sgx[e] += gv * (xs[e] - meanw[e])

@fast
def bn_rows_grad_apply(gf, xf, scw, aw, shw, act, mf, df, rows, nb, lo, hi):
    # blocks lo..hi of nb: dx = sc * g' - a * x - sh (g' = g times the mask with an
    # activation; scw, aw, shw tiled float64)
    w_ = scw.shape[0]
    c_ = xf.shape[0] // rows
    end = hi * rows // nb * c_
    for s0 in range(lo * rows // nb * c_, end, w_):
        n = min(w_, end - s0)
        gs, xs, d = gf[s0:s0 + n], xf[s0:s0 + n], df[s0:s0 + n]
        if act == 0:
            for e in range(n):
                d[e] = scw[e] * gs[e] - aw[e] * xs[e] - shw[e]
        else:
            k = mf[s0:s0 + n]
            for e in range(n):
                d[e] = scw[e] * (gs[e] * k[e]) - aw[e] * xs[e] - shw[e]


def _chunked(x, nbytes):
    """Whether ``[M, C]`` rows run as the chunked row-block kernels: an array the pool splits
    (the per-row kernels would split its channels, each thread reading a few of every row),
    or one of few channels (their loop over a row's channels is short). By the sizes only.

    ``[16*1024, 32]`` float32 rows (MobileNetV2's 32x32 planes, batch 16), forward and
    backward with ReLU6: 1.67 and 2.45 ms per-row, 0.50 and 0.34 ms chunked; ``[16*1024, 16]``
    (not split): 0.34 and 0.92 ms, 0.16 and 0.19 ms. On ``[16*64, 192]`` and smaller arrays of
    many channels the per-row kernels are 10-30 us faster (one call instead of three)."""
    return nbytes >= _threads.MIN_BYTES or x.shape[1] < _ROWS_MIN_C


def _row_blocks(x, nbytes):
    """The blocks of rows the rows kernels split ``x`` (``[M, C]``) into: a number set by the
    sizes alone (one for a small array)."""
    return min(x.shape[0], _ROW_BLOCKS) if nbytes >= _threads.MIN_BYTES else 1


def _over_blocks(kernel, nb):
    """Run ``kernel(lo, hi)`` over blocks ``0..nb`` on the thread pool."""
    _threads.run(kernel, [(b, b + 1) for b in range(nb)])


def _chunk(c):
    """Rows per chunk of the rows kernels for ``c`` channels."""
    return max(1, -(-_WIDE // c))


def _fold(parts, c):
    """The per-channel totals of the rows kernels' sums (``[..., u * C]``, float64), added in
    a fixed order."""
    return parts.reshape(-1, c).sum(axis=0)


def _rows_forward(x, w, b, eps, code, top, out, mask, mean, var, invstd, ss):
    m, c = x.shape
    nb = _row_blocks(x, 2 * x.nbytes)
    u = _chunk(c)
    xf, of = x.reshape(-1), out.reshape(-1)
    mf = mask.reshape(-1)  # (one unread value without an activation)
    parts = np.empty((nb, u * c))
    none = np.zeros(u * c)
    _over_blocks(lambda lo, hi: bn_rows_sums(xf, none, 0, parts, m, lo, hi), nb)
    mu = _fold(parts, c) / m
    muw = np.tile(mu, u)
    _over_blocks(lambda lo, hi: bn_rows_sums(xf, muw, 1, parts, m, lo, hi), nb)
    va = _fold(parts, c) / m
    inv = 1.0 / np.sqrt(va + eps)
    sc = inv * w
    sh = b - mu * sc
    ss[0], ss[1] = sc, sh
    mean[:], var[:], invstd[:] = mu, va, inv
    scw, shw = np.tile(sc, u), np.tile(sh, u)
    ssw = np.ascontiguousarray(np.tile(ss, (1, u)))
    _over_blocks(lambda lo, hi: bn_rows_apply(xf, scw, shw, ssw, code, top, of, mf, m, nb, lo,
                                              hi), nb)


def _rows_backward(g, x, w, mean, invstd, code, mask, dx, gw, gb):
    rows, c = x.shape
    nb = _row_blocks(x, 3 * x.nbytes)
    u = _chunk(c)
    gf, xf, df = g.reshape(-1), x.reshape(-1), dx.reshape(-1)
    mf = mask.reshape(-1)  # (one unread value without an activation)
    parts = np.empty((nb, 2, u * c))
    meanw = np.tile(mean, u)  # x - mean in x's dtype, as bn_backward_rows
    _over_blocks(lambda lo, hi: bn_rows_grad_sums(gf, xf, meanw, code, mf, parts, rows, lo, hi),
                 nb)
    sg = _fold(parts[:, 0], c)
    sgx = _fold(parts[:, 1], c)
    inv = invstd.astype(np.float64)
    sc = (invstd * w).astype(np.float64)  # rounded in x's dtype, as bn_backward
    kk = sc / rows
    a = kk * inv * inv * sgx
    sh = kk * sg - a * mean
    gw[:], gb[:] = inv * sgx, sg
    scw, aw, shw = np.tile(sc, u), np.tile(a, u), np.tile(sh, u)
    _over_blocks(lambda lo, hi: bn_rows_grad_apply(gf, xf, scw, aw, shw, code, mf, df, rows, nb,
                                                   lo, hi), nb)


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
    if rows and _chunked(x, 2 * x.nbytes):
        _rows_forward(x, w, b, e, code, top, out, mask, mean, var, invstd, ss)
        return out, mean, var, invstd, (mask if code else None)
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
    if rows and _chunked(x, 3 * x.nbytes):
        _rows_backward(g, x, w, mean, invstd, code, m, dx, gw, gb)
        return dx, gw, gb
    if rows:
        acc = np.empty((5, c))

        def part(lo, hi):
            bn_backward_rows(g, x, w, mean, invstd, code, m, dx, gw, gb, acc, lo, hi)
    else:
        def part(lo, hi):
            bn_backward(g, x, w, mean, invstd, code, m, dx, gw, gb, lo, hi)

    _threads.split(part, c, 3 * x.nbytes)
    return dx, gw, gb
