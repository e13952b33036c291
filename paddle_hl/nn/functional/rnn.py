"""Recurrent kernels: the fused SimpleRNN / LSTM / GRU cell step and whole-sequence kernels
with their backward, used by the layers of ``paddle_hl.nn.layer.rnn``.

Speed: a built-in cell run over a sequence is one fused kernel. Its forward projects the inputs
of all time steps in one GEMM, then loops over time doing one GEMM per step on the whole batch;
its backward runs the loop in reverse (BPTT) and forms every weight gradient with one GEMM over
all steps. The LSTM kernel goes further (see :func:`_lstm_seq`): no transposes, in-place gate
buffers, and on NumPy with several cores its step loops run as row shards on threads.

Math, as Paddle documents it (gates in this order in the stacked weights):

- SimpleRNN: ``h = act(x W_ihᵀ + b_ih + h₀ W_hhᵀ + b_hh)``
- LSTM (i, f, g, o): ``c = σ(f)·c₀ + σ(i)·tanh(g)``, ``h = σ(o)·tanh(c)``
- GRU (r, z, c): ``r = σ(x_r + h_r)``, ``z = σ(x_z + h_z)``, ``c = tanh(x_c + r·h_c)``,
  ``h = z·h₀ + (1 - z)·c`` where ``h_* = h₀ W_hhᵀ + b_hh`` split in three.

The kernels have no higher-order rule: ``create_graph=True`` through them raises a clear error.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait

import numpy as np

from ... import backend
from ...backend import _openblas
from ...framework.op import op

__all__ = []

API = []


# ============================================================================ step math
def _sigmoid(xp, a):
    # tanh form: no overflow warning for large |a|, and one transcendental call
    return 0.5 * (xp.tanh(0.5 * a) + 1.0)


def _step(xp, mode, xw, h, c, w_hh, b_hh):
    """One recurrence step on raw arrays.

    ``xw`` is the input projection ``x W_ihᵀ + b_ih`` of this step. Returns ``(h_new, c_new,
    cache)``; ``cache`` holds what :func:`_step_back` needs.
    """
    hh = h @ w_hh.T
    hh += b_hh
    if mode == "LSTM":
        a = xw + hh
        n = a.shape[-1] // 4
        i = _sigmoid(xp, a[:, :n])
        f = _sigmoid(xp, a[:, n:2 * n])
        g = xp.tanh(a[:, 2 * n:3 * n])
        o = _sigmoid(xp, a[:, 3 * n:])
        c_new = f * c
        c_new += i * g
        tc = xp.tanh(c_new)
        return o * tc, c_new, (i, f, g, o, tc)
    if mode == "GRU":
        n = hh.shape[-1] // 3
        r = _sigmoid(xp, xw[:, :n] + hh[:, :n])
        z = _sigmoid(xp, xw[:, n:2 * n] + hh[:, n:2 * n])
        hc = hh[:, 2 * n:]
        cand = xp.tanh(xw[:, 2 * n:] + r * hc)
        h_new = z * (h - cand)
        h_new += cand
        return h_new, None, (r, z, cand, hc)
    a = xw + hh
    h_new = xp.tanh(a) if mode == "RNN_TANH" else xp.maximum(a, 0)
    return h_new, None, (h_new,)


def _step_back(xp, mode, cache, g_h, g_c, h, c, w_hh):
    """Backward of :func:`_step`.

    ``g_h`` / ``g_c`` are the gradients reaching the step's new h / c. Returns ``(d_xw, d_hh,
    dh, dc)``: the gradients of the input projection, of the hidden projection ``h W_hhᵀ +
    b_hh``, and of the previous h and c (the part that does not go through ``W_hh``; the caller
    adds ``d_hh @ W_hh``).
    """
    if mode == "LSTM":
        i, f, g, o, tc = cache
        do = g_h * tc
        dct = g_h * o
        dct *= 1.0 - tc * tc
        if g_c is not None:
            dct += g_c
        d = xp.concatenate([dct * g * i * (1.0 - i), dct * c * f * (1.0 - f),
                            dct * i * (1.0 - g * g), do * o * (1.0 - o)], axis=-1)
        return d, d, None, dct * f
    if mode == "GRU":
        r, z, cand, hc = cache
        dcand = g_h * (1.0 - z)
        dcand *= 1.0 - cand * cand
        dz = g_h * (h - cand)
        dz *= z * (1.0 - z)
        dr = dcand * hc
        dr *= r * (1.0 - r)
        d_xw = xp.concatenate([dr, dz, dcand], axis=-1)
        d_hh = xp.concatenate([dr, dz, dcand * r], axis=-1)
        return d_xw, d_hh, g_h * z, None
    (h_new,) = cache
    d = g_h * (1.0 - h_new * h_new) if mode == "RNN_TANH" else g_h * (h_new > 0)
    return d, d, None, None


# ============================================================================ kernels
@op("rnn_cell")
def _cell_kernel(x, h, c, w_ih, w_hh, b_ih, b_hh, mode):
    """One step of a built-in cell on ``[batch, input_size]`` inputs.

    Returns ``(h_new, c_new)`` for LSTM and ``h_new`` otherwise.
    """
    xp = backend.get_array_module(x)
    xw = x @ w_ih.T
    xw += b_ih
    h_new, c_new, cache = _step(xp, mode, xw, h, c, w_hh, b_hh)

    def backward(g_h, g_c=None):
        if g_h is None:
            g_h = xp.zeros_like(h_new)
        d_xw, d_hh, dh, dc = _step_back(xp, mode, cache, g_h, g_c, h, c, w_hh)
        dh_total = d_hh @ w_hh
        if dh is not None:
            dh_total += dh
        return (d_xw @ w_ih, dh_total, dc, d_xw.T @ x, d_hh.T @ h, d_xw.sum(0), d_hh.sum(0))

    if mode == "LSTM":
        return (h_new, c_new), backward
    return h_new, backward


# h0/c0 are copied into the state history
@op("seq_kernel", saves=(0, 3, 4))
def _seq_kernel(x, h0, c0, w_ih, w_hh, b_ih, b_hh, mask, mode, reverse, time_major, zero_pad):
    """A built-in cell run over a whole sequence (one direction of one layer).

    Args:
        x: ``[batch, time, in]`` (``[time, batch, in]`` when ``time_major``).
        h0, c0: ``[batch, hidden]`` initial states (``c0`` None unless LSTM).
        mask: bool ``[batch, time]`` (True inside each sequence) or None.
        reverse: run from the last step to the first.
        zero_pad: outputs at padded steps are zeros (the fused multi-layer networks) rather than
            the cell's output computed from the held state (the RNN wrapper).

    Returns ``(outputs, h_last[, c_last])``; outputs in the layout of ``x``. Steps past a
    sequence's length keep the previous state, so the last state is the one at the last valid
    step (and a reversed run starts at each sequence's last valid step).

    Every buffer keeps the layout of ``x`` and the loops walk time-major views of them, so
    the inputs, outputs and input gradient are never transposed (see :func:`_lstm_seq`).
    """
    xp = backend.get_array_module(x)
    if mode == "LSTM":
        return _lstm_seq(xp, x, h0, c0, w_ih, w_hh, b_ih, b_hh, mask, reverse, time_major,
                         zero_pad)
    lead = x.shape[:2]
    steps = lead[0] if time_major else lead[1]
    isz = x.shape[2]
    n = w_hh.shape[1]
    gh = w_hh.shape[0]
    dt = xp.result_type(x.dtype, h0.dtype)

    def tm(a):  # time-major view of a buffer in x's layout
        return a if time_major else xp.swapaxes(a, 0, 1)

    # all input projections in one GEMM
    x2 = x.reshape(-1, isz)
    xw = (x2 @ w_ih.T).astype(dt, copy=False)
    xw += b_ih
    xw = xw.reshape(lead + (gh,))
    h_in = xp.empty(lead + (n,), dtype=dt)  # the state each step starts from
    y = xp.empty(lead + (n,), dtype=dt)
    xw_t, hin_t, y_t = tm(xw), tm(h_in), tm(y)
    m_t = None if mask is None else mask.T[:, :, None]
    seq = range(steps - 1, -1, -1) if reverse else range(steps)
    caches = [None] * steps
    h = h0.astype(dt, copy=False)
    for s in seq:
        hin_t[s] = h
        h_new, _, caches[s] = _step(xp, mode, xw_t[s], h, None, w_hh, b_hh)
        out = y_t[s]
        out[...] = h_new
        if m_t is None:
            h = h_new
        else:
            ms = m_t[s]
            h = xp.where(ms, h_new, h)
            if zero_pad:
                out *= ms
    h_last = h.copy()

    def backward(g_y, g_h, g_c=None):
        dh = xp.zeros_like(h_last) if g_h is None else g_h.astype(dt)
        gy_t = None if g_y is None else tm(g_y)
        d_xw = xp.empty(lead + (gh,), dtype=dt)
        d_hh = d_xw if mode != "GRU" else xp.empty_like(d_xw)
        dxw_t, dhh_t = tm(d_xw), tm(d_hh)
        for s in reversed(seq):
            if m_t is None:
                g_hn, carry = dh, None
            else:
                ms = m_t[s]
                g_hn = dh * ms
                carry = dh - g_hn  # the part that passes the held state straight through
            if gy_t is not None:
                gys = gy_t[s]
                if m_t is not None and zero_pad:
                    gys = gys * ms
                g_hn = g_hn + gys
            dxs, dhs, dh_direct, _ = _step_back(xp, mode, caches[s], g_hn, None, hin_t[s],
                                                None, w_hh)
            dxw_t[s] = dxs
            if d_hh is not d_xw:
                dhh_t[s] = dhs
            dh = dhs @ w_hh
            if dh_direct is not None:
                dh += dh_direct
            if carry is not None:
                dh += carry
        dxw2 = d_xw.reshape(-1, gh)
        dhh2 = d_hh.reshape(-1, gh)
        dw_ih = (dxw2.T @ x2).astype(w_ih.dtype, copy=False)
        dw_hh = (dhh2.T @ h_in.reshape(-1, n)).astype(w_hh.dtype, copy=False)
        dx = (dxw2 @ w_ih).reshape(lead + (isz,)).astype(x.dtype, copy=False)
        return (dx, dh, None, dw_ih, dw_hh, dxw2.sum(0).astype(b_ih.dtype, copy=False),
                dhh2.sum(0).astype(b_hh.dtype, copy=False), None)

    return (y, h_last), backward


# ============================================================================ row shards
# The step loops are a chain of small GEMMs and elementwise passes; the elementwise half runs
# on one core while BLAS threads only the GEMMs. The rows of a batch are independent, so on
# NumPy with several cores the loop runs as a few row shards, each on its own thread with
# single-threaded BLAS: every core does the whole chain (GEMM, activations, copies) for its
# rows, with no synchronisation inside the loop. NumPy releases the GIL inside BLAS and inside
# ufunc loops over arrays of this size, so the shards run in parallel. OpenBLAS's thread count
# is process-wide: while a shard loop runs, other NumPy GEMMs of the process are single-threaded
# too (the count is restored when the last loop ends). Threads that wait here block instead of
# spinning, which also keeps the step fast when the cores are shared with other processes.
_SHARD_MIN_ROWS = 8  # rows per shard below which a shard's GEMM loses its efficiency
_SHARD_MIN_WORK = 1 << 24  # batch * hidden² * steps below which one thread is as fast
_SHARD_MIN_STEP = 1 << 17  # rows * hidden² of one shard's step below which threads contend
_POOL = None
_POOL_LOCK = threading.Lock()


def _cpus():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _drop_pool():
    global _POOL
    _POOL = None  # a forked child has none of the parent's threads


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_drop_pool)


def _row_shards(xp, batch, hidden, steps):
    """Row slices to run a step loop on: one (the whole batch) unless the loop is big enough,
    runs on NumPy's OpenBLAS and more than one core and BLAS thread are available."""
    whole = [slice(0, batch)]
    if xp is not np or batch * hidden * hidden * steps < _SHARD_MIN_WORK:
        return whole
    k = min(_cpus(), 8, batch // _SHARD_MIN_ROWS)
    while k >= 2 and (batch // k) * hidden * hidden < _SHARD_MIN_STEP:
        k -= 1  # each shard's step must be big enough for NumPy to drop the GIL in it
    ctl = _openblas.thread_control()
    if k < 2 or not ctl or not _openblas.held_to_one_thread() and ctl[1]() < 2:
        return whole
    bounds = [batch * i // k for i in range(k + 1)]
    return [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:])]


def _in_shards(fn, shards):
    """``[fn(rows) for rows in shards]``: the first shard on this thread, the others on a
    small pool, with BLAS single-threaded meanwhile."""
    global _POOL
    if len(shards) == 1:
        return [fn(shards[0])]
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max(1, min(_cpus(), 8) - 1),
                                       thread_name_prefix="paddle_hl_rnn")
        pool = _POOL
    with _openblas.one_thread():
        futs = [pool.submit(fn, rows) for rows in shards[1:]]
        try:
            first = fn(shards[0])
        finally:
            wait(futs)
    return [first] + [f.result() for f in futs]


# ============================================================================ fused LSTM
def _lstm_gate_order(xp, n):
    """Row order that turns Paddle's gate blocks (i, f, g, o) into (i, f, o, g)."""
    return xp.concatenate([xp.arange(0, 2 * n), xp.arange(3 * n, 4 * n),
                           xp.arange(2 * n, 3 * n)])


def _lstm_seq(xp, x, h0, c0, w_ih, w_hh, b_ih, b_hh, mask, reverse, time_major, zero_pad):
    """The LSTM case of :func:`_seq_kernel` (same arguments and results).

    Layout and speed, for a step loop that is mostly per-step overhead around one small GEMM:

    - Every buffer keeps the layout of ``x`` (``[batch, time, ...]`` or ``[time, batch,
      ...]``) and the loop walks a time-major *view* of it, so neither the inputs, the outputs
      nor the input gradient are ever transposed; a step's slice is a strided ``[batch, n]``
      matrix that BLAS and the ufuncs take as it is.
    - One buffer holds ``[x | 1 | h_prev]`` for every step: the input projection of all steps
      with both biases is one GEMM on its first columns, each step writes the state it starts
      from into the last columns and multiplies them by ``W_hh``, and after the backward loop
      one GEMM of the gate gradients with the whole buffer gives ``dW_ih``, the bias gradient
      and ``dW_hh`` together (no separate bias pass, no reduction over the gates).
    - The gate rows are reordered to (i, f, o, g) and the rows of the three sigmoid gates are
      halved, so ``σ(a) = (1 + tanh(a/2)) / 2`` makes the activations of a step one in-place
      ``tanh`` over all four gates, then one multiply-add over the three contiguous sigmoid
      gates. Halving is exact in binary floating point.
    - The pre-activations of all steps live in one buffer that the activations overwrite; the
      backward overwrites a step's activations with that step's gate gradients once it has
      read them, so the whole backward allocates no buffer of that size. A second backward
      (``retain_graph=True``) first recomputes the activations.
    - On NumPy with several cores both step loops run as row shards on threads (see
      :func:`_row_shards`); the GEMMs before and after the loops keep BLAS's own threads.
    """
    lead = x.shape[:2]
    steps = lead[0] if time_major else lead[1]
    batch = h0.shape[0]
    n = w_hh.shape[1]
    isz = x.shape[2]
    dt = xp.result_type(x.dtype, h0.dtype, c0.dtype)
    order = _lstm_gate_order(xp, n)
    w_ih_p = w_ih[order]
    w_hh_p = w_hh[order]
    # forward copies with the sigmoid rows halved (tanh form of the sigmoid); the input
    # weights carry both biases in an extra column, matched by the ones column of ``xh``
    w_in = xp.empty((4 * n, isz + 1), dtype=dt)
    w_in[:, :isz] = w_ih_p
    w_in[:, isz] = (b_ih + b_hh)[order]
    w_in[:3 * n] *= 0.5
    w_rec = w_hh_p.astype(dt)
    w_rec[:3 * n] *= 0.5

    def tm(a):  # time-major view of a buffer in x's layout
        return a if time_major else xp.swapaxes(a, 0, 1)

    xh = xp.empty(lead + (isz + 1 + n,), dtype=dt)
    xh[..., :isz] = x
    xh[..., isz] = 1
    gates = xp.empty(lead + (4 * n,), dtype=dt)
    c_in = xp.empty(lead + (n,), dtype=dt)
    tanh_c = xp.empty(lead + (n,), dtype=dt)
    hin_t, g_t, cin_t, tc_t = tm(xh[..., isz + 1:]), tm(gates), tm(c_in), tm(tanh_c)
    m_t = None if mask is None else mask.T[:, :, None]
    seq = range(steps - 1, -1, -1) if reverse else range(steps)

    shards = _row_shards(xp, batch, n, steps)

    def run(h, c, y_t):
        """The forward: fills the activations and what the backward reads, writes the outputs
        into ``y_t`` (time-major view), returns the final ``(h, c)``."""
        xp.matmul(xh[..., :isz + 1].reshape(-1, isz + 1), w_in.T,
                  out=gates.reshape(-1, 4 * n))
        res = _in_shards(lambda rows: loop(rows, h[rows], c[rows], y_t), shards)
        if len(res) == 1:
            return res[0]
        return (xp.concatenate([r[0] for r in res]), xp.concatenate([r[1] for r in res]))

    def loop(rows, h, c, y_t):
        """The forward steps of batch rows ``rows``, starting from their ``(h, c)``."""
        hin_r, g_r, cin_r, tc_r, y_r = (v[:, rows] for v in (hin_t, g_t, cin_t, tc_t, y_t))
        m_r = None if m_t is None else m_t[:, rows]
        rec = xp.empty((h.shape[0], 4 * n), dtype=dt)
        ig = xp.empty(h.shape, dtype=dt)
        for s in seq:
            h_prev = hin_r[s]
            h_prev[...] = h
            cin_r[s] = c
            a = g_r[s]
            xp.matmul(h_prev, w_rec.T, out=rec)
            a += rec
            xp.tanh(a, out=a)
            sig = a[:, :3 * n]
            sig *= 0.5
            sig += 0.5
            c_new = a[:, n:2 * n] * c
            xp.multiply(a[:, :n], a[:, 3 * n:], out=ig)
            c_new += ig
            tc = tc_r[s]
            xp.tanh(c_new, out=tc)
            out = y_r[s]
            xp.multiply(a[:, 2 * n:3 * n], tc, out=out)
            if m_r is None:
                h, c = out, c_new
            else:
                ms = m_r[s]
                h = xp.where(ms, out, h)
                c = xp.where(ms, c_new, c)
                if zero_pad:
                    out *= ms
        return h, c

    y = xp.empty(lead + (n,), dtype=dt)
    h_last, c_last = run(h0.astype(dt, copy=False), c0.astype(dt, copy=False), tm(y))
    h_last = h_last.copy()  # without a mask it is a view of y, which the caller owns
    c_last = c_last.copy()
    spent = [False]

    def back_loop(rows, dh, dc, gy_t):
        """The backward steps of batch rows ``rows``: overwrites their activations with the
        gate gradients, returns the gradients of their initial ``(h, c)``."""
        g_r, cin_r, tc_r = (v[:, rows] for v in (g_t, cin_t, tc_t))
        m_r = None if m_t is None else m_t[:, rows]
        gy_r = None if gy_t is None else gy_t[:, rows]
        rn = dh.shape[0]
        sig_d = xp.empty((rn, 3 * n), dtype=dt)
        tmp = xp.empty((rn, n), dtype=dt)
        d_i = xp.empty((rn, n), dtype=dt)
        for s in reversed(seq):
            a = g_r[s]  # activations in, gate gradients out
            i, f, o, g = a[:, :n], a[:, n:2 * n], a[:, 2 * n:3 * n], a[:, 3 * n:]
            tc = tc_r[s]
            if m_r is None:
                g_hn, g_cn = dh, dc
            else:
                ms = m_r[s]
                g_hn = dh * ms
                g_cn = dc * ms
                dh -= g_hn  # the part that passes the held state straight through
                dc -= g_cn
            if gy_r is not None:
                gys = gy_r[s]
                if m_r is not None and zero_pad:
                    gys = gys * ms
                g_hn = g_hn + gys
            # gradient of the cell state: through h = o·tanh(c), plus what reaches c itself
            dct = g_hn * o
            xp.multiply(tc, tc, out=tmp)
            xp.subtract(1.0, tmp, out=tmp)
            dct *= tmp
            dct += g_cn
            dc_prev = dct * f
            # σ' = σ(1 - σ) of i, f, o, read before the slots are overwritten
            sig = a[:, :3 * n]
            xp.subtract(1.0, sig, out=sig_d)
            sig_d *= sig
            xp.multiply(dct, g, out=d_i)
            xp.multiply(g, g, out=tmp)
            xp.subtract(1.0, tmp, out=tmp)
            xp.multiply(dct, i, out=g)  # g slot: dct·i·(1 - g²)
            g *= tmp
            xp.multiply(d_i, sig_d[:, :n], out=i)
            xp.multiply(dct, cin_r[s], out=f)
            f *= sig_d[:, n:2 * n]
            xp.multiply(g_hn, tc, out=o)
            o *= sig_d[:, 2 * n:]
            dh_prev = a @ w_hh_p
            if m_r is None:
                dh, dc = dh_prev, dc_prev
            else:
                dh += dh_prev
                dc += dc_prev
        return dh, dc

    def backward(g_y, g_h, g_c=None):
        if spent[0] and steps:
            # a second backward: the first one overwrote the activations with gradients
            first = seq[0]
            run(hin_t[first].copy(), cin_t[first].copy(),
                xp.empty((steps, batch, n), dtype=dt))
        spent[0] = True
        dh = xp.zeros_like(h_last) if g_h is None else g_h.astype(dt)
        dc = xp.zeros_like(c_last) if g_c is None else g_c.astype(dt)
        gy_t = None if g_y is None else tm(g_y)
        res = _in_shards(lambda rows: back_loop(rows, dh[rows], dc[rows], gy_t), shards)
        if len(res) == 1:
            dh, dc = res[0]
        else:
            dh = xp.concatenate([r[0] for r in res])
            dc = xp.concatenate([r[1] for r in res])
        d2 = gates.reshape(-1, 4 * n)
        dw = d2.T @ xh.reshape(-1, isz + 1 + n)
        dx = (d2 @ w_ih_p).reshape(lead + (isz,))
        back = xp.empty_like(order)
        back[order] = xp.arange(order.shape[0])
        dw = dw[back]
        db = dw[:, isz]
        return (dx.astype(x.dtype, copy=False), dh, dc,
                dw[:, :isz].astype(w_ih.dtype), dw[:, isz + 1:].astype(w_hh.dtype),
                db.astype(b_ih.dtype), db.astype(b_hh.dtype), None)

    return (y, h_last, c_last), backward
