"""Recurrent kernels: the fused SimpleRNN / LSTM / GRU cell step and whole-sequence kernels
with their backward, used by the layers of ``paddle_hl.nn.layer.rnn``.

Speed: a built-in cell run over a sequence is one fused kernel. Its forward projects the inputs
of all time steps in one GEMM, then loops over time doing one GEMM per step on the whole batch;
its backward runs the loop in reverse (BPTT) and forms every weight gradient with one GEMM over
all steps. The LSTM kernel goes further (see :func:`_lstm_seq`): on NumPy with several cores
its whole forward and backward run as row shards on threads, each step is one GEMM of
``[x | 1 | h]`` written in place into the gate buffer, and its work buffers are reused from
one call to the next.

Math, as Paddle documents it (gates in this order in the stacked weights):

- SimpleRNN: ``h = act(x W_ihᵀ + b_ih + h₀ W_hhᵀ + b_hh)``
- LSTM (i, f, g, o): ``c = σ(f)·c₀ + σ(i)·tanh(g)``, ``h = σ(o)·tanh(c)``
- GRU (r, z, c): ``r = σ(x_r + h_r)``, ``z = σ(x_z + h_z)``, ``c = tanh(x_c + r·h_c)``,
  ``h = z·h₀ + (1 - z)·c`` where ``h_* = h₀ W_hhᵀ + b_hh`` split in three.

The kernels have no higher-order rule: ``create_graph=True`` through them raises a clear error.
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

from ... import backend
from ...backend import tuning
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
    if mask is not None:  # built on the host from the sequence lengths
        mask = xp.asarray(mask)
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
_SHARD_MIN_ROWS = tuning.value("rnn.shard_min_rows")
_SHARD_MIN_WORK = tuning.value("rnn.shard_min_work")
_SHARD_MIN_STEP = tuning.value("rnn.shard_min_step")
# rows of an LSTM shard from which one GEMM per step of [x|1|h] beats projecting the inputs
# of all steps first (see _lstm_seq)
_FUSED_MIN_ROWS = tuning.value("rnn.fused_min_rows")


def _row_shards(xp, batch, hidden, steps):
    """Row slices to run a step loop on: one (the whole batch) unless the loop is big enough,
    runs on NumPy's OpenBLAS and more than one core and BLAS thread are available."""
    whole = [slice(0, batch)]
    if xp is not np or batch * hidden * hidden * steps < _SHARD_MIN_WORK:
        return whole
    k = min(backend.num_threads(), 8, batch // _SHARD_MIN_ROWS)
    while k >= 2 and (batch // k) * hidden * hidden < _SHARD_MIN_STEP:
        k -= 1  # each shard's step must be big enough for NumPy to drop the GIL in it
    ctl = backend.blas_thread_control()
    if k < 2 or not ctl or not backend.blas_held_to_one_thread() and ctl[1]() < 2:
        return whole
    bounds = [batch * i // k for i in range(k + 1)]
    return [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:])]


def _in_shards(fn, shards):
    """``[fn(rows) for rows in shards]``: the first shard on this thread, the others on the
    CPU thread pool, with BLAS single-threaded meanwhile."""
    if len(shards) == 1:
        return [fn(shards[0])]
    with backend.blas_one_thread():
        return backend.parallel_map(fn, shards)


# ============================================================================ work buffers
# The fused LSTM's buffers (tens of MB per call) are fresh memory on every training step:
# the kernel maps and zeroes every page again on first touch, which cost about as much as
# the elementwise work of a whole step loop. Buffers of a graph that is gone (its backward
# function freed: after ``backward()`` without ``retain_graph``, or at once under no_grad)
# go back to a small free list keyed by shape and dtype, and the next call of the same
# shapes takes them. NumPy only; at most _WORK_MAX_BYTES are kept.
_WORK_MAX_BYTES = tuning.value("rnn.work_max_bytes")
_WORK = {}
_WORK_LOCK = threading.Lock()
_work_bytes = 0


def _work_take(xp, shape, dtype):
    """An uninitialised array of ``shape`` / ``dtype``, from the free list when it has one."""
    if xp is np:
        key = (shape, np.dtype(dtype).str)
        with _WORK_LOCK:
            free = _WORK.get(key)
            if free:
                global _work_bytes
                a = free.pop()
                _work_bytes -= a.nbytes
                return a
    return xp.empty(shape, dtype=dtype)


def _work_give(arrays):
    """Put ``arrays`` (NumPy arrays nothing else references) on the free list, as long as it
    stays under its size bound."""
    global _work_bytes
    with _WORK_LOCK:
        for a in arrays:
            if type(a) is not np.ndarray or _work_bytes + a.nbytes > _WORK_MAX_BYTES:
                continue
            _WORK.setdefault((a.shape, a.dtype.str), []).append(a)
            _work_bytes += a.nbytes


def _work_clear():
    global _work_bytes
    with _WORK_LOCK:
        _WORK.clear()
        _work_bytes = 0


# ============================================================================ fused LSTM
def _lstm_gate_order(xp, n):
    """Row order that turns Paddle's gate blocks (i, f, g, o) into (i, f, o, g)."""
    return xp.concatenate([xp.arange(0, 2 * n), xp.arange(3 * n, 4 * n),
                           xp.arange(2 * n, 3 * n)])


def _lstm_seq(xp, x, h0, c0, w_ih, w_hh, b_ih, b_hh, mask, reverse, time_major, zero_pad):
    """The LSTM case of :func:`_seq_kernel` (same arguments and results).

    Layout and speed, for a step loop that is mostly per-step overhead around one small GEMM:

    - The batch rows are split into row shards (one, or one per core on NumPy, see
      :func:`_row_shards`); each shard owns its buffers, time-major ``[slot, rows, ...]``
      whatever the layout of ``x``, and runs its whole forward and backward on its own thread
      with single-threaded BLAS, so no phase waits on another core or on BLAS threads.
    - One buffer holds ``[x | 1 | h]`` per slot: a step's gates are one GEMM of its slot with
      ``[W_ih | b_ih + b_hh | W_hh]`` (input projection, both biases and the recurrence
      together), written straight into the step's gate buffer; the step writes its new state
      into the next step's slot. The slots are ordered by time, with one extra slot for the
      final state (after the last for a forward run, before the first for a reverse one).
      After the backward loop one GEMM of the shard's gate gradients with its whole buffer
      gives its part of ``dW_ih``, the bias gradient and ``dW_hh`` together; the shards'
      parts are summed. A shard of few rows (under ``_FUSED_MIN_ROWS``) first projects the
      inputs of all its steps with one GEMM and multiplies only ``h`` by ``W_hh`` per step:
      with few rows a step's GEMM costs the reading of its weights, and ``W_hh`` is the
      smaller part of them.
    - The gate rows are reordered to (i, f, o, g) and the rows of the three sigmoid gates are
      halved, so ``σ(a) = (1 + tanh(a/2)) / 2`` makes the activations of a step one in-place
      ``tanh`` over all four gates, then one multiply-add over the three contiguous sigmoid
      gates. Halving is exact in binary floating point.
    - The activations of all steps live in one buffer per shard; the backward overwrites a
      step's activations with that step's gate gradients once it has read them, so the
      backward allocates no buffer of that size. A second backward (``retain_graph=True``)
      first recomputes the activations.
    - The inputs, outputs and input gradient keep the layout of ``x``; a shard reads and
      writes its rows of them through time-major views.

    The steps are the methods of :class:`_LstmRun`.
    """
    run = _LstmRun(xp, x, h0, c0, w_ih, w_hh, b_ih, b_hh, mask, reverse, time_major,
                   zero_pad)
    dt, isz = run.dt, run.isz
    y = xp.empty(run.lead + (run.n,), dtype=dt)
    h_last, c_last = run.forward(h0.astype(dt, copy=False), c0.astype(dt, copy=False),
                                 run.tm(y))

    def backward(g_y, g_h, g_c=None):
        dx, dh, dc, dw = run.backward(g_y, g_h, g_c)
        db = dw[:, isz]
        return (dx.astype(x.dtype, copy=False), dh, dc,
                dw[:, :isz].astype(w_ih.dtype), dw[:, isz + 1:].astype(w_hh.dtype),
                db.astype(b_ih.dtype), db.astype(b_hh.dtype), None)

    if xp is np:
        # the buffers outlive the graph only on the free list (they are private: the outputs
        # and gradients are separate arrays)
        weakref.finalize(backward, _give_shards, run.bufs)
    return (y, h_last, c_last), backward


class _LstmRun:
    """One call of the fused LSTM kernel (see :func:`_lstm_seq`): its sizes, its prepared
    weights, its row shards and their buffers, and the steps that run on them."""

    def __init__(self, xp, x, h0, c0, w_ih, w_hh, b_ih, b_hh, mask, reverse, time_major,
                 zero_pad):
        self.xp = xp
        self.time_major = time_major
        self.zero_pad = zero_pad
        self.lead = lead = x.shape[:2]
        self.steps = steps = lead[0] if time_major else lead[1]
        self.batch = h0.shape[0]
        self.n = n = w_hh.shape[1]
        self.isz = isz = x.shape[2]
        self.feat = isz + 1 + n
        self.dt = xp.result_type(x.dtype, h0.dtype, c0.dtype)
        self._prepare_weights(w_ih, w_hh, b_ih, b_hh)
        self.x_t = self.tm(x)
        self.m_t = None if mask is None else mask.T[:, :, None]
        self.seq = range(steps - 1, -1, -1) if reverse else range(steps)
        self.off = 1 if reverse else 0  # step s reads the state in slot s + off, writes s + 1 - off
        self.first, self.final = (steps, 0) if reverse else (0, steps)
        self.shards = list(enumerate(_row_shards(xp, self.batch, n, steps)))
        self.bufs = [None] * len(self.shards)  # per shard: see _shard_buffers
        # a shard of few rows projects its inputs of all steps with one GEMM first, and its
        # steps multiply only h by W_hh: each step's GEMM is then bound by reading the
        # weights, and W_hh is the smaller part of them
        self.w_rec_t = (xp.ascontiguousarray(self.w_fwd_t[isz + 1:])
                        if any(r.stop - r.start < _FUSED_MIN_ROWS for _, r in self.shards)
                        else None)
        self.spent = False  # a backward has overwritten the activations

    def tm(self, a):
        """Time-major view of an array in x's layout."""
        return a if self.time_major else self.xp.swapaxes(a, 0, 1)

    def _prepare_weights(self, w_ih, w_hh, b_ih, b_hh):
        """The gate order (i, f, o, g), the forward weights ``[W_ih | b_ih + b_hh | W_hh]``
        transposed with the sigmoid rows halved, and the backward's permuted ``W_ih`` and
        ``W_hh`` with the sigmoid rows quartered."""
        xp, n, isz, dt = self.xp, self.n, self.isz, self.dt
        self.order = order = _lstm_gate_order(xp, n)
        w_ih_p = w_ih[order].astype(dt)
        w_hh_p = w_hh[order].astype(dt)
        # forward weights with the sigmoid rows halved (tanh form of the sigmoid); the bias
        # column is matched by the ones column of the slots
        w_fwd = xp.empty((4 * n, self.feat), dtype=dt)
        w_fwd[:, :isz] = w_ih_p
        w_fwd[:, isz] = (b_ih + b_hh)[order]
        w_fwd[:, isz + 1:] = w_hh_p
        w_fwd[:3 * n] *= 0.5
        # BLAS packs the contiguous transpose faster than the transposed view
        self.w_fwd_t = xp.ascontiguousarray(w_fwd.T)
        # the backward's gate buffer holds 4x the gradients of the sigmoid gates (see
        # backward_shard): the weights that multiply it carry the 1/4 (exact in binary
        # floating point)
        w_hh_p[:3 * n] *= 0.25
        w_ih_p[:3 * n] *= 0.25
        self.w_ih_p, self.w_hh_p = w_ih_p, w_hh_p

    def _shard_buffers(self, k, rows):
        """Shard ``k``'s buffers, taken on its first run: the slots ``[x | 1 | h]``, the
        activations (gate gradients after the backward), the sigmoids, c and tanh(c)."""
        if self.bufs[k] is None:
            xp, steps, n, isz, dt, off = (self.xp, self.steps, self.n, self.isz, self.dt,
                                          self.off)
            rn = rows.stop - rows.start
            xh = _work_take(xp, (steps + 1, rn, self.feat), dt)
            xh[off:off + steps, :, :isz] = self.x_t[:, rows]
            xh[:, :, isz] = 1
            self.bufs[k] = (xh, _work_take(xp, (steps, rn, 4 * n), dt),
                            _work_take(xp, (steps, rn, 3 * n), dt),
                            _work_take(xp, (steps + 1, rn, n), dt),
                            _work_take(xp, (steps, rn, n), dt))
        return self.bufs[k]

    def forward_shard(self, k, rows, h, c, y_t):
        """The forward steps of batch rows ``rows`` (shard ``k``) from their ``(h, c)``: fills
        the activations and what the backward reads, writes the outputs into ``y_t`` (a
        time-major view, or None), returns the final ``(h, c)`` (views of the slots)."""
        xp, n, isz, dt, off, steps = self.xp, self.n, self.isz, self.dt, self.off, self.steps
        w_fwd_t, w_rec_t, zero_pad = self.w_fwd_t, self.w_rec_t, self.zero_pad
        xh, g, sg, cs, tcs = self._shard_buffers(k, rows)
        hs = xh[:, :, isz + 1:]
        hs[self.first] = h
        cs[self.first] = c
        rn = h.shape[0]
        ig = xp.empty((rn, n), dtype=dt)
        m_r = None if self.m_t is None else self.m_t[:, rows]
        y_r = None if y_t is None else y_t[:, rows]
        fused = rn >= _FUSED_MIN_ROWS
        if not fused:
            xp.matmul(xh[off:off + steps, :, :isz + 1].reshape(-1, isz + 1),
                      w_fwd_t[:isz + 1], out=g.reshape(-1, 4 * n))
            rec = xp.empty((rn, 4 * n), dtype=dt)
        for s in self.seq:
            a = g[s]
            if fused:
                xp.matmul(xh[s + off], w_fwd_t, out=a)
            else:
                xp.matmul(hs[s + off], w_rec_t, out=rec)
                a += rec
            # a keeps tanh(a/2) of the sigmoid gates and tanh of g: the backward's
            # derivative factor 1 - a² over the whole row; the sigmoids go to their own
            # contiguous buffer
            xp.tanh(a, out=a)
            sig = sg[s]
            xp.multiply(a[:, :3 * n], 0.5, out=sig)
            sig += 0.5
            c_prev, c_new = cs[s + off], cs[s + 1 - off]
            xp.multiply(sig[:, n:2 * n], c_prev, out=c_new)
            xp.multiply(sig[:, :n], a[:, 3 * n:], out=ig)
            c_new += ig
            tc = tcs[s]
            xp.tanh(c_new, out=tc)
            h_new = hs[s + 1 - off]
            xp.multiply(sig[:, 2 * n:], tc, out=h_new)
            if m_r is None:
                if y_r is not None:
                    y_r[s] = h_new
                continue
            ms = m_r[s]
            if y_r is not None:
                out = y_r[s]
                out[...] = h_new
                if zero_pad:
                    out *= ms
            h_new[...] = xp.where(ms, h_new, hs[s + off])
            c_new[...] = xp.where(ms, c_new, c_prev)
        return hs[self.final], cs[self.final]

    def forward(self, h, c, y_t):
        """The forward steps of all shards from ``(h, c)`` [batch, n]; returns the final
        ``(h, c)``."""
        res = _in_shards(lambda kr: self.forward_shard(kr[0], kr[1], h[kr[1]], c[kr[1]], y_t),
                         self.shards)
        xp = self.xp
        return (xp.concatenate([r[0] for r in res]), xp.concatenate([r[1] for r in res]))

    def _recompute(self):
        """Refill the activations a first backward overwrote, from each shard's initial
        state kept in its buffers."""
        first, isz, bufs = self.first, self.isz, self.bufs
        _in_shards(lambda kr: self.forward_shard(kr[0], kr[1], bufs[kr[0]][0][first, :, isz + 1:],
                                                 bufs[kr[0]][3][first], None), self.shards)

    def backward_shard(self, k, rows, dh, dc, gy_t, dx_t):
        """The backward steps of batch rows ``rows`` (shard ``k``): overwrites their
        activations with the gate gradients, writes their input gradient into ``dx_t``,
        returns the gradients of their initial ``(h, c)`` and their part of ``dW``.

        With ``t = tanh(a/2)`` kept for a sigmoid gate, ``σ' = σ(1 - σ) = (1 - t²)/4``, and
        ``tanh' = 1 - g²`` for g: one factor ``1 - a²`` over the whole row gives all four
        derivatives, the sigmoid gates' gradients times 4 (the weights that multiply them
        carry the 1/4)."""
        xp, n, dt, off, steps = self.xp, self.n, self.dt, self.off, self.steps
        w_hh_p, zero_pad = self.w_hh_p, self.zero_pad
        xh, g, sg, cs, tcs = self.bufs[k]
        m_r = None if self.m_t is None else self.m_t[:, rows]
        gy_r = None if gy_t is None else gy_t[:, rows]
        rn = dh.shape[0]
        der = xp.empty((rn, 4 * n), dtype=dt)
        tmp = xp.empty((rn, n), dtype=dt)
        dct = xp.empty((rn, n), dtype=dt)
        dh_prev = xp.empty((rn, n), dtype=dt)
        for s in reversed(self.seq):
            a = g[s]  # activations in, gate gradients out
            i, f, o, gg = a[:, :n], a[:, n:2 * n], a[:, 2 * n:3 * n], a[:, 3 * n:]
            sig = sg[s]
            tc = tcs[s]
            if m_r is None:
                g_hn, g_cn = dh, dc
                if gy_r is not None:
                    g_hn += gy_r[s]
            else:
                ms = m_r[s]
                g_hn = dh * ms
                g_cn = dc * ms
                dh -= g_hn  # the part that passes the held state straight through
                dc -= g_cn
                if gy_r is not None:
                    gys = gy_r[s]
                    if zero_pad:
                        gys = gys * ms
                    g_hn += gys
            xp.multiply(a, a, out=der)
            xp.subtract(1.0, der, out=der)
            # gradient of the cell state: through h = σo·tanh(c), plus what reaches c itself
            xp.multiply(g_hn, sig[:, 2 * n:], out=dct)
            xp.multiply(tc, tc, out=tmp)
            xp.subtract(1.0, tmp, out=tmp)
            dct *= tmp
            dct += g_cn
            # the gate gradients before their derivative factor, each written once its
            # slot's activation has been read
            xp.multiply(dct, gg, out=i)
            xp.multiply(dct, sig[:, :n], out=gg)
            xp.multiply(dct, cs[s + off], out=f)
            xp.multiply(g_hn, tc, out=o)
            a *= der
            if m_r is None:
                xp.multiply(dct, sig[:, n:2 * n], out=dc)  # gradient of the previous c
                xp.matmul(a, w_hh_p, out=dh)  # gradient of the previous h
            else:
                xp.multiply(dct, sig[:, n:2 * n], out=tmp)
                dc += tmp
                xp.matmul(a, w_hh_p, out=dh_prev)
                dh += dh_prev
        d2 = g.reshape(-1, 4 * n)
        dw = d2.T @ xh[off:off + steps].reshape(-1, self.feat)
        dx_t[:, rows] = (d2 @ self.w_ih_p).reshape(steps, rn, self.isz)
        return dh, dc, dw

    def backward(self, g_y, g_h, g_c):
        """The backward of all shards from the gradients of the outputs and the final state:
        returns ``(dx, dh0, dc0, dW)`` in the kernel's dtype, ``dW`` the gradient of
        ``[W_ih | b | W_hh]`` with its rows in Paddle's gate order."""
        xp, n, dt, batch = self.xp, self.n, self.dt, self.batch
        if self.spent and self.steps:
            # a second backward: the first one overwrote the activations with gradients
            self._recompute()
        self.spent = True
        dh = xp.zeros((batch, n), dtype=dt) if g_h is None else g_h.astype(dt)
        dc = xp.zeros((batch, n), dtype=dt) if g_c is None else g_c.astype(dt)
        gy_t = None if g_y is None else self.tm(g_y)
        dx = xp.empty(self.lead + (self.isz,), dtype=dt)
        dx_t = self.tm(dx)
        res = _in_shards(lambda kr: self.backward_shard(kr[0], kr[1], dh[kr[1]], dc[kr[1]],
                                                        gy_t, dx_t), self.shards)
        dh = xp.concatenate([r[0] for r in res])
        dc = xp.concatenate([r[1] for r in res])
        dw = res[0][2]
        for r in res[1:]:
            dw += r[2]
        dw[:3 * n] *= 0.25
        order = self.order
        back_order = xp.empty_like(order)
        back_order[order] = xp.arange(order.shape[0])
        return dx, dh, dc, dw[back_order]


def _give_shards(bufs):
    _work_give([a for b in bufs if b is not None for a in b])
