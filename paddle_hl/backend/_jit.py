"""Compiled CPU kernels through numba, an optional extra (``pip install 'paddle_hl[numba]'``).

NumPy runs a kernel as one pass over memory per operation; a normalisation layer's forward and
backward take about a dozen such passes. With numba installed, the kernels here do the same
work in fewer passes, on all the process's cores, and the NumPy forms stay in use wherever
numba is missing, switched off, or cannot run. The kernels:

- batch norm's training forward and backward, two passes each way, optionally with a ReLU or
  ReLU6 applied inside them (its derivative kept as a byte mask);
- the 2-D max pool: its gradient in one pass, and its forward with each kernel offset one
  run over stride phase planes, 2x2 windows of stride 2 directly (ResNet-50's stem pool at
  batch 8, 224x224: 38 to 4 ms; LeNet's pools 3x faster);
- depthwise 2-D convolution, forward and both gradients: on small planes channels last
  (each output pixel's taps are contiguous runs of channels; 2-2.7x faster there than
  NumPy's per-tap passes), on planes with rows of 16 outputs or more as stride phase planes
  of the padded input (each tap one run over a wide grid of the plane; forward and
  backward 1.4-1.9x faster than NumPy's blocked passes). Between the two (short rows of
  large inputs) NumPy's blocked form stays faster;
- thin dense 2-D convolutions (a first layer: few input channels times taps, stride 1),
  forward and both gradients, straight from the padded input: each tap one run over a wide
  grid of the plane, no im2col columns;
- im2col and col2im in the batch-innermost layout (``windows.im2col_nin``): one run per
  output row of a tap instead of NumPy's strided passes;
- the Adam/AdamW update of one parameter in one pass (the NumPy form takes ten): compiled
  without fastmath, so its numbers are bit for bit the NumPy passes'.

Switches and threads:

- ``PADDLE_HL_NUMBA=0`` in the environment switches the compiled kernels off (checked once, at
  the first kernel call); :func:`set_enabled` switches them at run time.
- Threads: the kernels are compiled serial and release the GIL; large calls are split over
  channel ranges on the CPU thread pool (``backend._threads``: sized from the process's CPU
  affinity, fork-safe), small ones run inline. numba's own thread pools are not used: its
  OpenMP layer keeps idle threads spinning after each kernel (halving the speed of the BLAS
  threads that run next), and waking its work-queue threads for each of a network's many
  small normalisations costs more than the kernels.
- The first use compiles the kernels (a few seconds) and caches the machine code on disk
  for later processes (each process compiles its own where no cache folder is writable);
  where numba cannot build them, the NumPy forms run and :func:`unavailable_reason` says
  why.

Kernels take C-contiguous float32 or float64 arrays; results agree with the NumPy forms to
rounding (sums are accumulated in another order, batch norm's and the depthwise weight
gradient's in float64), and Adam's exactly.
"""

from __future__ import annotations

import os

import numpy as np

from . import _threads

__all__ = []

_ENV = "PADDLE_HL_NUMBA"

_state = {"enabled": None, "kernels": None, "error": None}


def _env_enabled() -> bool:
    v = os.environ.get(_ENV, "").strip().lower()
    if v in ("", "1", "true", "yes", "on"):
        return True
    if v in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{_ENV} must be 0 or 1, got {os.environ[_ENV]!r}")


def set_enabled(flag: bool) -> None:
    """Use the compiled kernels (when numba is installed) or the NumPy forms."""
    _state["enabled"] = bool(flag)


def enabled() -> bool:
    """Whether the compiled kernels are in use: numba importable and not switched off."""
    on = _state["enabled"]
    if on is None:
        on = _state["enabled"] = _env_enabled()
    return on and _kernels() is not None


def unavailable_reason():
    """Why the compiled kernels are not in use, or None when they are."""
    if enabled():
        return None
    if _state["error"] is not None:
        return _state["error"]
    return f"switched off ({_ENV}=0 or set_enabled(False))"


def _kernels():
    k = _state["kernels"]
    if k is not None or _state["error"] is not None:
        return k
    try:
        import numba
    except ImportError as e:  # the extra is not installed
        _state["error"] = f"numba is not installed ({e}); pip install 'paddle_hl[numba]'"
        return None
    try:
        try:
            k = _compile(numba)
        except RuntimeError as e:
            if "cannot cache" not in str(e):
                raise
            k = _compile(numba, cache=False)  # no writable cache folder: compile per process
        dirs = _cache_dirs(k)
        removed = _discard_cache(dirs)
        try:
            _warm_up(k)  # compile (or load from the cache) now, where a failure can fall back
        except Exception:
            if not dirs:
                raise
            # an entry that reads as a whole pickle yet does not load: drop the kernels' whole
            # cache and compile once more before giving up
            removed += _discard_cache(dirs, everything=True)
            k = _compile(numba)
            _warm_up(k)
        if removed:
            import warnings

            warnings.warn(f"paddle_hl: discarded {removed} corrupt cache entries in "
                          f"{', '.join(sorted(dirs))} (numba's cache of the compiled kernels); "
                          "the kernels were compiled again", RuntimeWarning, stacklevel=3)
    except Exception as e:  # a numba or LLVM that cannot build these kernels here
        _state["error"] = f"numba could not compile the kernels ({type(e).__name__}: {e})"
        return None
    _state["kernels"] = k
    return k


# numba's disk cache: one folder per source file -- NUMBA_CACHE_DIR/<folder>_<hash> when that
# variable is set, else __pycache__ beside this file, else a per-user cache folder when that is
# not writable (numba's own choice). For each kernel, an index file "_jit.<kernel>-<line>.pyXY.nbi"
# (two pickles: numba's version, then the source stamp and the signatures) and one data file
# per signature ("....<n>.nbc", one pickle of the machine code). numba unpickles them as they
# are, so the folder has the trust of this package's own __pycache__. An empty or garbled file
# (a full disk, a killed process, a bad copy) made every later process fail to load the
# kernels, so the NumPy forms ran for good; such entries are now removed before the kernels
# load, and numba compiles and caches those kernels again.
_CACHE_PREFIX = __name__.rsplit(".", 1)[-1] + "."


def _cache_dirs(k) -> set:
    """The cache folders of the compiled kernels ``k`` (empty when they are not cached)."""
    dirs = set()
    for d in k.values():
        path = getattr(getattr(d, "_cache", None), "cache_path", None)
        if isinstance(path, str):
            dirs.add(path)
    return dirs


def _whole_pickles(data: bytes, count: int) -> bool:
    """``data`` is ``count`` complete pickles back to back (reads opcodes, builds nothing)."""
    import io
    import pickletools

    f = io.BytesIO(data)
    try:
        for _ in range(count):
            for _ in pickletools.genops(f):
                pass
    except ValueError:  # ran out of data before STOP, or an unknown opcode
        return False
    return f.tell() == len(data)


def _discard_cache(dirs, everything=False) -> int:
    """Remove this module's cache entries in ``dirs`` that are not whole pickles (all of them
    with ``everything``); returns how many were removed."""
    removed = 0
    for d in dirs:
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for name in names:
            if not name.startswith(_CACHE_PREFIX) or not name.endswith((".nbi", ".nbc")):
                continue
            path = os.path.join(d, name)
            try:
                with open(path, "rb") as f:
                    data = f.read()
                if everything or not _whole_pickles(data, 2 if name.endswith(".nbi") else 1):
                    os.remove(path)
                    removed += 1
            except OSError:  # removed by another process meanwhile, or not ours to remove
                continue
    return removed


def _warm_up(k):
    x = np.ones((2, 1, 3), np.float32)
    c = np.ones(1, np.float32)
    out, dx = np.empty_like(x), np.empty_like(x)
    mean, var, inv, gw, gb = (np.empty(1, np.float32) for _ in range(5))
    mask = np.empty(x.shape, np.bool_)
    for act in (0, 1, 2):
        k["bn_forward"](x, c, c, np.float32(1e-5), act, np.float32(6), out, mask, mean, var, inv,
                        np.zeros((3, 1), np.float32), 0, 1)
        k["bn_backward"](x, x, c, mean, inv, act, mask, dx, gw, gb, 0, 1)
    x4, w2 = np.ones((1, 2, 2, 1), np.float32), np.ones((4, 1), np.float32)
    o4 = np.empty((1, 1, 1, 1), np.float32)
    k["dw_forward"](x4, w2, 2, 2, 1, 1, 1, 1, 0, 0, o4, 0, 1)
    k["dw_input_grad"](o4, w2, 2, 2, 1, 1, 1, 1, 0, 0, x4.copy(), 0, 1)
    k["dw_weight_grad"](x4, o4, 2, 2, 1, 1, 1, 1, 0, 0, np.empty((4, 1)), 0, 1)
    for dt in (np.float32, np.float64):
        one = np.ones(2, dt)
        k["adam"](one.copy(), one, one.copy(), one.copy(), *(dt(0.5),) * 7)
    g = np.ones((2, 1, 1), np.float32)
    k["pool_max_grad"](g, np.zeros((2, 1, 1), np.int8), 1, 2, 1, 1, np.zeros((2, 2, 2), np.float32),
                       0, 2)


def _compile(numba, cache=True):
    # The helpers that kernels call are module globals, not closure cells: numba keys its
    # disk cache on the contents of a kernel's closure, and a compiled function in a cell
    # serialises differently in every process, so each process would compile those kernels
    # again (3 s for MobileNetV2's depthwise ones) instead of loading them.
    global _span, _phases_2x2, _phases, _phase_buffer, _pool_max_2x2, _to_wide, _from_wide
    global _add_scaled, _wide_grid, _tap_start, _add_product

    # reassociation lets the per-channel sums vectorise; no assumption about NaN or inf is
    # made, so they propagate as in the NumPy forms
    jit = numba.njit(cache=cache, nogil=True, fastmath={"reassoc", "contract"})

    @jit
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

    @jit
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

    @jit
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

    # depthwise convolution on channels-last [N, H, W, C] arrays (w: [taps, C]), over the
    # channels lo..hi: each output pixel's taps are contiguous runs of channels, which
    # vectorise; taps that fall in the padding are skipped. No fastmath: the loops over
    # channels vectorise without it, and each tap's product is rounded before it is added,
    # in the taps' order, as NumPy's per-tap passes do (the forward gives the same numbers).
    # Floats divide as NumPy does: no zero-divisor check, which keeps a loop from vectorising
    exact = numba.njit(cache=cache, nogil=True, error_model="numpy")

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
    @numba.njit(cache=cache, nogil=True, error_model="numpy", inline="always")
    def _add_product(dst, a, b):
        for c in range(dst.shape[0]):
            dst[c] += a[c] * b[c]

    @numba.njit(cache=cache, nogil=True, error_model="numpy", inline="always")
    def _add_scaled(dst, src, s_):
        for t in range(dst.shape[0]):
            dst[t] += src[t] * s_

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
    def _phases_2x2(xpl, pt, pl, ph, fill):
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
    def _phases(xpl, sh, sw, pt, pl, ph, fill):
        # fill: the value of the pixels outside xpl (the padding)
        if sh == 2 and sw == 2:
            _phases_2x2(xpl, pt, pl, ph, fill)
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
    def _to_wide(plane, pitch, wide):
        oh_, ow_ = plane.shape
        for i in range(oh_):
            src = plane[i]
            dst = wide[i * pitch:i * pitch + ow_]
            for j in range(ow_):
                dst[j] = src[j]

    @exact
    def _from_wide(wide, pitch, plane):
        oh_, ow_ = plane.shape
        for i in range(oh_):
            src = wide[i * pitch:i * pitch + ow_]
            dst = plane[i]
            for j in range(ow_):
                dst[j] = src[j]

    @exact
    def _phase_buffer(like, kh, kw, sh, sw, dh, dw_, oh_, ow_):
        # room for every tap's rows and columns of an oh_ x ow_ output, per phase
        return np.empty((sh, sw, oh_ + ((kh - 1) * dh) // sh, ow_ + ((kw - 1) * dw_) // sw),
                        like.dtype)

    @numba.njit(cache=cache, nogil=True, inline="always")
    def _wide_grid(like, kh, kw, sh, sw, dh, dw_, oh_, ow_):
        # the phase planes, each flattened, their pitch and the length of one tap's run over
        # the wide grid of an oh_ x ow_ output (output (i, j) at i * pitch + j)
        ph = _phase_buffer(like, kh, kw, sh, sw, dh, dw_, oh_, ow_)
        pr, pc = ph.shape[2], ph.shape[3]
        return ph, ph.reshape(sh, sw, pr * pc), pc, (oh_ - 1) * pc + ow_

    @numba.njit(cache=cache, nogil=True, inline="always")
    def _tap_start(ki, kj, sh, sw, dh, dw_, pc):
        # tap (ki, kj): its phase plane (a, b) and where its run starts in that flat plane
        a, r = (ki * dh) % sh, (ki * dh) // sh
        b, q = (kj * dw_) % sw, (kj * dw_) // sw
        return a, b, r * pc + q

    @exact
    def dwp_forward(x, w, kh, kw, sh, sw, dh, dw_, pt, pl, out, lo, hi):
        # planes lo..hi of the flattened [N * C] axis; w: [C, taps]. Each tap is one run over
        # a wide output grid (rows pc apart, the phase planes' pitch): output (i, j) at
        # i * pc + j, the columns j >= ow_ computed and dropped
        _, c_, _, _ = x.shape
        _, _, oh_, ow_ = out.shape
        ph, flat, pc, run = _wide_grid(x, kh, kw, sh, sw, dh, dw_, oh_, ow_)
        acc = np.empty(run, x.dtype)
        zero = acc[:0].sum()  # 0 in x's dtype: the phase copies stay in it
        for p in range(lo, hi):
            n, c = divmod(p, c_)
            _phases(x[n, c], sh, sw, pt, pl, ph, zero)
            wc = w[c]
            for t in range(run):
                acc[t] = 0.0
            for ki in range(kh):
                for kj in range(kw):
                    a, b, start = _tap_start(ki, kj, sh, sw, dh, dw_, pc)
                    _add_scaled(acc, flat[a, b, start:start + run], wc[ki * kw + kj])
            _from_wide(acc, pc, out[n, c])

    @exact
    def dwp_input_grad(g, w, kh, kw, sh, sw, dh, dw_, pt, pl, dx, lo, hi):
        # tap by tap into phase planes of the padded gradient, then the unpadded pixels out
        _, c_, h_, w_ = dx.shape
        _, _, oh_, ow_ = g.shape
        # the gradient on the wide grid of dwp_forward, zero in the extra columns: each tap
        # adds one run into a phase plane, its zeros landing on pixels of neighbouring rows
        # (exact for finite weights; planes with others take the rows one by one)
        ph, flat, pc, run = _wide_grid(g, kh, kw, sh, sw, dh, dw_, oh_, ow_)
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
                _to_wide(gp, pc, wide)
            for ki in range(kh):
                for kj in range(kw):
                    a, b, start = _tap_start(ki, kj, sh, sw, dh, dw_, pc)
                    wv = wc[ki * kw + kj]
                    if finite:
                        _add_scaled(flat[a, b, start:start + run], wide, wv)
                        continue
                    for i in range(oh_):
                        _add_scaled(flat[a, b, start + i * pc:start + i * pc + ow_], gp[i], wv)
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

    @jit
    def dwp_weight_grad(x, g, kh, kw, sh, sw, dh, dw_, pt, pl, gw, lo, hi):
        # channels lo..hi; gw: [C, taps] float64 sums over the batch and the plane
        n_, _, _, _ = x.shape
        _, _, oh_, ow_ = g.shape
        ph = _phase_buffer(x, kh, kw, sh, sw, dh, dw_, oh_, ow_)
        zero = ph[0, 0, 0, :0].sum()
        for c in range(lo, hi):
            acc = gw[c]
            for t in range(kh * kw):
                acc[t] = 0.0
            for n in range(n_):
                _phases(x[n, c], sh, sw, pt, pl, ph, zero)
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
        ph, flat, pc, run = _wide_grid(x, kh, kw, sh, sw, 1, 1, oh_, ow_)
        best = np.empty(run, x.dtype)
        at = np.zeros(run, arg.dtype)
        for p in range(lo, hi):
            _phases(x[p], sh, sw, 0, 0, ph, low)
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
                    a, b, start = _tap_start(ki, kj, sh, sw, 1, 1, pc)
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
            _from_wide(best, pc, out[p])
            if want_arg:
                _from_wide(at, pc, arg[p])

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
    @jit
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
                            _add_scaled(acc, xf[off:off + run], w[o, c, ki, kj])
                _from_wide(acc, wp, out[n, o])

    @jit
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
                _to_wide(g[n, o], wp, gwide[o])
            for c in range(c_):
                df = dxpad[n, c].reshape(hp * wp)
                for t in range(hp * wp):
                    df[t] = 0.0
                for o in range(o_):
                    for ki in range(kh):
                        for kj in range(kw):
                            off = ki * wp + kj
                            _add_scaled(df[off:off + run], gwide[o], w[o, c, ki, kj])

    @jit
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
                _to_wide(g[n, o], wp, gwide)
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

    # the optimizer update rounds exactly as the NumPy passes do (exact: no fastmath), and
    # divides as NumPy does (no zero-divisor check, which would keep the loop from vectorising)
    @exact
    def adam(p, g, m, v, lr_t, b1, b2, c1, c2, eps_t, decay):
        # 1-D C-contiguous slices of one parameter: Paddle's Adam formula, one pass
        if decay != 1.0:
            for i in range(p.shape[0]):
                p[i] = p[i] * decay
        for i in range(p.shape[0]):
            gi = g[i]
            mi = m[i] * b1 + gi * c1
            vi = v[i] * b2 + (gi * c2) * gi
            m[i] = mi
            v[i] = vi
            p[i] = p[i] - (mi / (np.sqrt(vi) + eps_t)) * lr_t

    return {"adam": adam, "nin_windows": nin_windows, "conv_fwd": conv_fwd,
            "conv_dgrad": conv_dgrad, "conv_wgrad": conv_wgrad,
            "bn_forward": bn_forward, "bn_backward": bn_backward, "pool_max": pool_max,
            "pool_max_grad": pool_max_grad, "dw_forward": dw_forward,
            "dw_input_grad": dw_input_grad, "dw_weight_grad": dw_weight_grad,
            "dwp_forward": dwp_forward, "dwp_input_grad": dwp_input_grad,
            "dwp_weight_grad": dwp_weight_grad}


def _arr(a, dtype):
    return np.ascontiguousarray(a, dtype=dtype)


# the activations batch norm can apply in its own passes (see :func:`batch_norm_train`)
ACTS = {None: 0, "relu": 1, "relu6": 2}


def batch_norm_train(x, w, b, eps, act=None):
    """Batch statistics and normalised output of a contiguous ``[N, C, L]`` float array over
    axes 0 and 2; ``w``/``b`` are per-channel arrays (or None for 1 and 0). ``act``: None,
    ``'relu'`` or ``'relu6'``, applied to the output in the same pass.

    Returns ``(out, mean, var, invstd, mask)``; mean, var and invstd have shape ``[C]``;
    ``mask`` (None without ``act``) is the activation's 0/1 derivative, for the backward."""
    k = _kernels()
    dt = x.dtype
    c = x.shape[1]
    x = _arr(x, dt)
    w = np.ones(c, dt) if w is None else _arr(w.reshape(-1), dt)
    b = np.zeros(c, dt) if b is None else _arr(b.reshape(-1), dt)
    out = np.empty_like(x)
    code = ACTS[act]
    mask = np.empty(x.shape if code else (1, 1, 1), np.bool_)
    mean, var, invstd = np.empty(c, dt), np.empty(c, dt), np.empty(c, dt)
    run, e = k["bn_forward"], dt.type(eps)
    top = dt.type(np.inf if act == "relu" else 6)

    ss = np.zeros((3, c), dt)  # per-channel scale and shift in dt, and a 0 of dt

    def part(lo, hi):  # whole arrays and a channel range: the kernel sees C-contiguous data
        run(x, w, b, e, code, top, out, mask, mean, var, invstd, ss, lo, hi)

    _threads.split(part, c, 2 * x.nbytes)
    return out, mean, var, invstd, (mask if code else None)


def batch_norm_train_grad(g, x, w, mean, invstd, mask=None):
    """The gradients ``(dx, dw, db)`` of :func:`batch_norm_train` for upstream ``g``; with an
    activation, ``mask`` is the one it returned (its derivative is applied first)."""
    k = _kernels()
    dt = x.dtype
    c = x.shape[1]
    g = _arr(g, dt)
    x = _arr(x, dt)
    w = np.ones(c, dt) if w is None else _arr(w.reshape(-1), dt)
    dx = np.empty_like(x)
    gw, gb = np.empty(c, dt), np.empty(c, dt)
    run = k["bn_backward"]
    code = 0 if mask is None else 1
    m = np.empty((1, 1, 1), np.bool_) if mask is None else mask

    def part(lo, hi):
        run(g, x, w, mean, invstd, code, m, dx, gw, gb, lo, hi)

    _threads.split(part, c, 3 * x.nbytes)
    return dx, gw, gb


def max_pool2d_grad(g, arg, padded_shape, ksize, stride):
    """:func:`backend.windows.max_pool_grad` for 2-D windows in one pass: each output gradient
    added to the input pixel its window's maximum came from (``arg``: the kernel offset of the
    maximum)."""
    k = _kernels()
    n, c = padded_shape[:2]
    g = _arr(g, g.dtype).reshape(n * c, *g.shape[2:])
    arg = np.ascontiguousarray(arg).reshape(g.shape)
    acc = np.zeros((n * c,) + tuple(padded_shape[2:]), g.dtype)
    run = k["pool_max_grad"]
    (kh, kw), (sh, sw) = ksize, stride

    def part(lo, hi):
        run(g, arg, kh, kw, sh, sw, acc, lo, hi)

    _threads.split(part, n * c, acc.nbytes)
    return acc.reshape(padded_shape)


def adam_update(p, g, m, v, lr_t, b1, b2, eps_t, decay):
    """One Adam (AdamW: ``decay`` ``!= 1`` scales the parameter first) update of parameter ``p``
    and its moments ``m``, ``v`` in place, in one pass: the same numbers as the optimizer's
    NumPy passes (each operation rounded in the arrays' dtype, in the same order), about
    twice as fast. Returns False, changing nothing, where the kernel does not apply: numba off
    or missing, or arrays that are not C-contiguous float32/float64 of one dtype and shape."""
    dt = p.dtype
    if (dt not in _FLOATS or not enabled()
            or any(type(a) is not np.ndarray or a.dtype != dt or a.shape != p.shape
                   or not a.flags.c_contiguous for a in (g, m, v))
            or not p.flags.c_contiguous):
        return False
    run = _kernels()["adam"]
    t = dt.type
    scalars = (t(lr_t), t(b1), t(b2), t(1 - b1), t(1 - b2), t(eps_t), t(decay))
    fp, fg, fm, fv = (a.reshape(-1) for a in (p, g, m, v))
    _threads.split(lambda lo, hi: run(fp[lo:hi], fg[lo:hi], fm[lo:hi], fv[lo:hi], *scalars),
                   fp.size, 7 * p.nbytes)
    return True


_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

def _nin_windows(cols, plane, ksize, stride, dilation, gather):
    run = _kernels()["nin_windows"]
    (kh, kw), (sh, sw), (dh, dw) = ksize, stride, dilation
    _threads.split(lambda lo, hi: run(cols, kh, kw, sh, sw, dh, dw, plane, gather, lo, hi),
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
    cols = _arr(cols, cols.dtype).reshape(c, ksize[0] * ksize[1], *out_size, n)
    acc = np.zeros((c, *padded_shape[2:], n), cols.dtype)
    _nin_windows(cols, acc, ksize, stride, dilation, False)
    return acc


def conv2d_forward(xpad, w, out_size, bias=None):
    """The stride-1, undilated, ungrouped 2-D convolution of the zero-padded C-contiguous
    ``xpad`` ``[N, C, Hp, Wp]`` with ``w`` ``[O, C, kh, kw]`` (same dtype), plus ``bias``
    ``[O]`` when given: ``[N, O, *out_size]``, split over the batch."""
    n, o = xpad.shape[0], w.shape[0]
    out = np.empty((n, o, *out_size), xpad.dtype)
    run, w = _kernels()["conv_fwd"], _arr(w, xpad.dtype)
    b = np.zeros(o, xpad.dtype) if bias is None else _arr(bias.reshape(-1), xpad.dtype)
    _threads.split(lambda lo, hi: run(xpad, w, b, out, lo, hi), n, xpad.nbytes + out.nbytes)
    return out


def conv2d_input_grad(g, w, padded_shape):
    """The padded input gradient ``[N, C, Hp, Wp]`` of :func:`conv2d_forward` for output
    gradient ``g``, or None for weights that are not all finite (the kernel adds the wide
    grid's zero columns times the weights to real pixels)."""
    if not np.isfinite(w).all():
        return None
    g = _arr(g, g.dtype)
    w = _arr(w, g.dtype)
    dxpad = np.empty(padded_shape, g.dtype)
    run = _kernels()["conv_dgrad"]
    _threads.split(lambda lo, hi: run(g, w, dxpad, lo, hi), g.shape[0],
                   g.nbytes + dxpad.nbytes)
    return dxpad


def conv2d_weight_grad(xpad, g, ksize):
    """The weight gradient ``[O, C, *ksize]`` of :func:`conv2d_forward` (summed in float64),
    or None for an input that is not all finite (see :func:`conv2d_input_grad`)."""
    if not np.isfinite(xpad).all():
        return None
    g = _arr(g, xpad.dtype)
    o, c = g.shape[1], xpad.shape[1]
    gw = np.empty((o, c, *ksize))
    run = _kernels()["conv_wgrad"]
    _threads.split(lambda lo, hi: run(xpad, g, gw, lo, hi), o, xpad.nbytes + g.nbytes)
    return gw.astype(xpad.dtype)



def depthwise(kernel, a, b, ksize, stride, dilation, pads, out, extent):
    """Run the compiled depthwise ``kernel`` on ``a`` and ``b`` into ``out``, split over
    ``range(extent)`` on the thread pool; returns ``out``. The kernels (C-contiguous float
    arrays; ``pads`` only its low sides are read, the output size says the rest):

    - ``dw_forward`` (x ``[N, H, W, C]``, w ``[taps, C]`` -> ``[N, OH, OW, C]``),
      ``dw_input_grad`` (g, w -> ``[N, H, W, C]``), ``dw_weight_grad`` (x, g -> float64
      ``[taps, C]``): channels last, taps in the padding skipped (the forward needs finite
      weights for NumPy's numbers), split over channels;
    - ``dwp_forward`` (x ``[N, C, H, W]``, w ``[C, taps]``), ``dwp_input_grad`` (g, w), split
      over the ``N * C`` planes, and ``dwp_weight_grad`` (x, g -> float64 ``[C, taps]``),
      split over channels: on stride phase planes of the zero-padded input.
    """
    run = _kernels()[kernel]
    (kh, kw), (sh, sw), (dh, dw), ((pt, _), (pl, _)) = ksize, stride, dilation, pads
    _threads.split(lambda lo, hi: run(a, b, kh, kw, sh, sw, dh, dw, pt, pl, out, lo, hi),
                   extent, a.nbytes + b.nbytes + out.nbytes)
    return out


def max_pool2d(xpad, ksize, stride, out_size, want_arg, arg_dtype):
    """:func:`backend.windows.max_pool` for 2-D windows of a padded ``[N, C, Hp, Wp]`` float
    array in one pass per plane: ``(out, arg or None)``."""
    run = _kernels()["pool_max"]
    n, c, hp, wp = xpad.shape
    x = _arr(xpad, xpad.dtype).reshape(n * c, hp, wp)
    out = np.empty((n * c,) + tuple(out_size), xpad.dtype)
    arg = np.empty(out.shape if want_arg else (1, 1, 1), arg_dtype)
    (kh, kw), (sh, sw) = ksize, stride
    low = xpad.dtype.type(np.finfo(np.float32).min)
    _threads.split(lambda lo, hi: run(x, kh, kw, sh, sw, low, want_arg, out, arg, lo, hi),
                   n * c, x.nbytes)
    shape = (n, c, *out_size)
    return out.reshape(shape), (arg.reshape(shape) if want_arg else None)
