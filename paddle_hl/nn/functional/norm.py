"""Normalization functions: batch_norm, layer_norm, instance_norm, local_response_norm.

Batch, layer, instance and group normalization share one fused kernel: the input is viewed as
an array whose ``raxes`` are the normalized axes; the statistics take one mean pass and one
centered pass (float32 accumulation for float16/bfloat16), the output is written in place over
the centered values, and the backward is the closed form

    dx = invstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)),   dxhat = g * weight

with no per-channel Python loop. Each kernel has a higher-order rule built from public ops.
"""

from __future__ import annotations

import contextlib
import numbers

import numpy as np

from ... import backend
from ...backend import tuning, windows
from ...backend.arrays import up as _up
from ...framework.engine import GRAD
from ...framework.op import apply, op
from ...framework.tensor import Tensor, _wrap
from ...tensor import manipulation as _manip
from ...tensor import math as _math
from ...tensor._helpers import float_arg as _float_arg
from ...tensor._helpers import tensor_arg

__all__ = []

_NATIVE = (np.dtype(np.float32), np.dtype(np.float64))
_F32 = np.dtype(np.float32)


def _cast(a, dt):
    return a if a.dtype == dt else a.astype(dt)


def _param(p, op, arg, size):
    """An optional per-channel parameter: None, or a Tensor with ``size`` elements."""
    if p is None:
        return None
    p = tensor_arg(p, op, arg)
    if p.size != size:
        raise ValueError(f"{op}: '{arg}' must have {size} elements (one per normalized "
                         f"feature), got {arg} of shape {p.shape}")
    return p


def _eps(v) -> float:
    """epsilon as Paddle stores it: a float32 attribute."""
    return float(np.float32(v))


# ---------------------------------------------------------------- the fused kernel

def _rsum(a, raxes):
    """``a.sum(axis=raxes, keepdims=True)``, reducing the batch axis first.

    NumPy reduces several axes at once with its inner loop on the last one; for batch norm's
    ``[N, C, L]`` view that is a loop over short rows (L = H*W is 1 to 64 in a small CNN), 2x to
    15x slower than adding the N rows first (one vectorised pass) and then the rows of L.
    """
    if len(raxes) > 1 and raxes[0] == 0:
        return a.sum(axis=0, keepdims=True).sum(axis=raxes[1:], keepdims=True)
    return a.sum(axis=raxes, keepdims=True)


# rows at least this long take np.vecdot for a per-channel sum of products: one read pass of
# both arrays and no product temporary, about 3x faster at 256 elements per row; shorter rows
# are faster as a product and two sums
_VECDOT_MIN = tuning.value("norm.vecdot_min")


def _rdot(a, b, raxes, xp):
    """``_rsum(a * b, raxes)`` for a ``[N, C, L]`` view reduced over N and L, or for ``[M, C]``
    rows reduced over M (channels last), without the product's temporary; None when the plain
    form is the faster one. On rows einsum's sum of products adds in the plain form's order
    (the same numbers) and is 1.5-2.7x faster (MobileNetV2's layers, ``[64..16384, 32..960]``)."""
    if xp is not np:
        return None
    if raxes == (0, 2) and a.ndim == 3 and a.shape[2] >= _VECDOT_MIN:
        return np.vecdot(a, b).sum(axis=0)[None, :, None]
    if raxes == (0,) and a.ndim == 2:
        return np.einsum("mc,mc->c", a, b)[None, :]
    return None


def _bn_k(xv, w, b, view, raxes, pshape, eps, dt, shape, xp):
    """The batch-norm case of :func:`_norm_k`: per-channel statistics and per-channel affine.

    The scale ``invstd * w`` is folded per channel, and the backward uses the per-channel sums
    ``sum(g)`` and ``sum(g * xc)`` only:
    ``dx = a * g - (a / M) * (sum(g) + invstd^2 * sum(g * xc) * xc)`` with ``a = invstd * w``,
    four passes instead of nine.
    """
    if raxes == (0, 2) and xv.dtype in _NATIVE and backend.compiled_kernels(xv):
        return _bn_jit(xv, w, b, eps, dt, shape)
    if raxes == (0, 2) and xv.ndim == 3 and windows.in_cl_memory(xv):
        return _bn_rows(xv, w, b, eps, dt, shape, xp)
    m = 1
    for k in raxes:
        m *= view[k]
    # every statistic is per channel: on NumPy the work is split over channel ranges on the
    # CPU thread pool (each range computed exactly as the whole array would be)
    ca = next(k for k in range(len(view)) if k not in raxes)
    nc = view[ca]
    pre = (slice(None),) * ca
    wv = None if w is None else _up(w).reshape(pshape)
    bv = None if b is None else _up(b).reshape(pshape)
    mean = xp.empty(pshape, dtype=xv.dtype)
    var = xp.empty(pshape, dtype=xv.dtype)
    invstd = xp.empty(pshape, dtype=xv.dtype)
    scale = xp.empty(pshape, dtype=xv.dtype)
    xc = xp.empty(xv.shape, dtype=xv.dtype)
    out = xp.empty(xv.shape, dtype=xv.dtype)

    def fwd(lo, hi):
        sl = pre + (slice(lo, hi),)
        xs, xcs, os = xv[sl], xc[sl], out[sl]
        mu = _rsum(xs, raxes)
        mu /= m
        xp.subtract(xs, mu, out=xcs)
        va = _rdot(xcs, xcs, raxes, xp)
        if va is None:
            xp.multiply(xcs, xcs, out=os)
            va = _rsum(os, raxes)
        va /= m
        inv = 1.0 / xp.sqrt(va + eps)
        sc = inv if wv is None else inv * wv[sl]
        xp.multiply(xcs, sc, out=os)
        if bv is not None:
            os += bv[sl]
        mean[sl], var[sl], invstd[sl], scale[sl] = mu, va, inv, sc

    backend.split(xv, fwd, nc, xv.nbytes)

    def backward(g, _gm=None, _gv=None):
        gv = _up(g.reshape(view))
        sg = xp.empty(pshape, dtype=gv.dtype)
        sgx = xp.empty(pshape, dtype=gv.dtype)
        dx = xp.empty(gv.shape, dtype=gv.dtype)

        def bwd(lo, hi):
            sl = pre + (slice(lo, hi),)
            gs, xcs = gv[sl], xc[sl]
            sgs = _rsum(gs, raxes)
            sgxs = _rdot(gs, xcs, raxes, xp)
            if sgxs is None:
                t = gs * xcs
                sgxs = _rsum(t, raxes)
            else:
                t = xp.empty_like(gs)
            k = scale[sl] / m
            inv = invstd[sl]
            xp.multiply(xcs, -(k * inv * inv * sgxs), out=t)
            t -= k * sgs
            ds = dx[sl]
            xp.multiply(gs, scale[sl], out=ds)
            ds += t
            sg[sl], sgx[sl] = sgs, sgxs

        backend.split(gv, bwd, nc, gv.nbytes)
        gw = None if w is None else _cast((invstd * sgx).reshape(w.shape), w.dtype)
        gb = None if b is None else _cast(sg.reshape(b.shape), b.dtype)
        return _cast(dx.reshape(shape), dt), gw, gb

    return (_cast(out.reshape(shape), dt), mean.squeeze(raxes), var.squeeze(raxes)), backward


def _bn_rows(xv, w, b, eps, dt, shape, xp):
    """:func:`_bn_k` of an ``[N, C, L]`` view laid out channels last in memory, as the
    ``[N*L, C]`` rows it is (no transposing copy); the output and the input gradient come back
    laid out as x."""
    n, c, l_ = xv.shape
    m = n * l_
    (out, mean, var), bw = _bn_k(windows.rows(xv), w, b, (m, c), (0,), (1, c), eps, dt,
                                 (m, c), xp)

    def backward(g, _gm=None, _gv=None):
        dx, gw, gb = bw(windows.rows(g.reshape(n, c, l_)))
        return windows.from_rows(dx, n, (l_,)).reshape(shape), gw, gb

    return (windows.from_rows(out, n, (l_,)).reshape(shape), mean, var), backward


def _bn_jit(xv, w, b, eps, dt, shape, act=None):
    """:func:`_bn_k` for an ``[N, C, L]`` view through the compiled kernels (two passes each
    way; the backward reads x and the batch mean instead of keeping the centered values).
    ``act`` ('relu' or 'relu6') is applied in the same passes (see :func:`_norm_act_k`). A
    view laid out channels last runs as its ``[N*L, C]`` rows, and its output and input
    gradient stay laid out so."""
    wv = None if w is None else _up(w)
    bv = None if b is None else _up(b)
    n, _, l_ = xv.shape
    cl = windows.in_cl_memory(xv)
    xk = windows.rows(xv) if cl else xv
    run = backend.kernel(xv, "batch_norm_train")
    out, mean, var, invstd, mask = run(xk, wv, bv, eps, act)

    def logical(a):
        return windows.from_rows(a, n, (l_,)) if cl else a

    def backward(g, _gm=None, _gv=None):
        gk = _up(g.reshape(xv.shape))
        dx, gw, gb = backend.kernel(xv, "batch_norm_train_grad")(
            windows.rows(gk) if cl else gk, xk, wv, mean, invstd, mask)
        gw = None if w is None else _cast(gw.reshape(w.shape), w.dtype)
        gb = None if b is None else _cast(gb.reshape(b.shape), b.dtype)
        return _cast(logical(dx).reshape(shape), dt), gw, gb

    return (_cast(logical(out).reshape(shape), dt), mean, var), backward


def _norm_k(x, w, b, view, raxes, pshape, eps):
    """Normalize ``x.reshape(view)`` over ``raxes``; scale/shift by w/b reshaped to pshape.

    Returns ``(out, mean, var)``: the batch statistics (float32 or float64, shape reduced over
    ``raxes``) come out as non-differentiable outputs, so batch_norm updates its running
    statistics without a second pass over x.
    """
    dt, shape = x.dtype, x.shape
    xp = backend.get_array_module(x)
    xv = _up(x.reshape(view))
    if xv.size == 0:
        zeros = xp.zeros([view[k] for k in range(len(view)) if k not in raxes], xv.dtype)
        return (_cast(xv.copy().reshape(shape), dt), zeros, zeros.copy()), None
    if all(pshape[k] == 1 for k in raxes) and all(
            pshape[k] != 1 for k in range(len(view)) if k not in raxes):
        return _bn_k(xv, w, b, view, raxes, pshape, eps, dt, shape, xp)
    mean = xv.mean(axis=raxes, keepdims=True)
    xc = xv - mean
    out = xc * xc
    var = out.mean(axis=raxes, keepdims=True)
    invstd = 1.0 / xp.sqrt(var + eps)
    # the output overwrites the squares buffer: one temporary besides the centered values
    xp.multiply(xc, invstd, out=out)
    wv = None if w is None else _up(w).reshape(pshape)
    if wv is not None:
        out *= wv
    if b is not None:
        out += _up(b).reshape(pshape)
    paxes = tuple(k for k in range(len(view)) if pshape[k] == 1)

    def backward(g, _gm=None, _gv=None):
        gv = _up(g.reshape(view))
        xhat = xc * invstd
        gw = None if w is None else _cast((gv * xhat).sum(axis=paxes).reshape(w.shape), w.dtype)
        gb = None if b is None else _cast(gv.sum(axis=paxes).reshape(b.shape), b.dtype)
        dxhat = gv * wv if wv is not None else gv.copy()
        proj = (dxhat * xhat).mean(axis=raxes, keepdims=True)
        dxhat -= dxhat.mean(axis=raxes, keepdims=True)
        xhat *= proj
        dxhat -= xhat
        dxhat *= invstd
        return _cast(dxhat.reshape(shape), dt), gw, gb

    return (_cast(out.reshape(shape), dt), mean.squeeze(raxes), var.squeeze(raxes)), backward


def _norm_hi(i, g, view, raxes, pshape, eps):
    x, w, b = i
    ra = list(raxes)
    paxes = [k for k in range(len(view)) if pshape[k] == 1]
    xv = _manip.reshape(x, list(view))
    xc = xv - xv.mean(axis=ra, keepdim=True)
    invstd = _math.rsqrt((xc * xc).mean(axis=ra, keepdim=True) + eps)
    xhat = xc * invstd
    gv = _manip.reshape(g[0], list(view))
    dxhat = gv * _manip.reshape(w, list(pshape)) if isinstance(w, Tensor) else gv
    dx = invstd * (dxhat - dxhat.mean(axis=ra, keepdim=True)
                   - xhat * (dxhat * xhat).mean(axis=ra, keepdim=True))
    gw = _manip.reshape((gv * xhat).sum(axis=paxes), list(w.shape)) \
        if isinstance(w, Tensor) else None
    gb = _manip.reshape(gv.sum(axis=paxes), list(b.shape)) if isinstance(b, Tensor) else None
    return _manip.reshape(dx, list(x.shape)), gw, gb


op("norm", hi=_norm_hi)(_norm_k)


def _norm_act_k(x, w, b, view, eps, act):
    """Batch norm over axes 0 and 2 of the ``[N, C, L]`` view, then ``act`` ('relu' or
    'relu6'), in the compiled kernels' two passes each way: the activation neither reads nor
    writes memory of its own, and its derivative is applied inside the backward pass.
    Returns ``(out, mean, var)`` as :func:`_norm_k`; only for what :func:`_fusable` allows."""
    return _bn_jit(x.reshape(view), w, b, eps, x.dtype, x.shape, act)


def _norm_act_hi(i, g, view, eps, act):
    # a differentiable form for double backward: the activation's derivative (a 0/1 mask of
    # the pre-activation, constant in x) times the upstream gradient, through batch norm's
    x, w, b = i
    pre = _norm_hi_forward(x, w, b, view, eps)
    inside = pre > 0 if act == "relu" else (pre > 0) & (pre < 6)
    ge = g[0] * inside.astype(g[0].dtype)
    return _norm_hi(i, [ge], view, (0, 2), (1, view[1], 1), eps)


def _norm_hi_forward(x, w, b, view, eps):
    """Batch norm's output (no graph: only its sign pattern is used) for the higher-order
    rule of :func:`_norm_act_k`."""
    xv = _manip.reshape(x, list(view)).detach()
    xc = xv - xv.mean(axis=[0, 2], keepdim=True)
    out = xc * _math.rsqrt((xc * xc).mean(axis=[0, 2], keepdim=True) + eps)
    if isinstance(w, Tensor):
        out = out * _manip.reshape(w.detach(), [1, view[1], 1])
    if isinstance(b, Tensor):
        out = out + _manip.reshape(b.detach(), [1, view[1], 1])
    return _manip.reshape(out, list(x.shape))


op("norm_act", hi=_norm_act_hi)(_norm_act_k)


def _fusable(x, raxes, count):
    """Whether batch norm's statistics and an activation after it can run as
    :func:`_norm_act_k`: the compiled kernels in use, a float32/float64 NumPy array with the
    channel axis second, and more than one value per channel."""
    return (raxes == (0, 2) and count > 1 and type(x._data) is np.ndarray
            and x._data.dtype in _NATIVE and backend.compiled_kernels(x._data))


def _normalize(x, w, b, view, raxes, pshape, eps):
    """Run the fused kernel; returns (out Tensor, mean array, var array)."""
    out, mean, var = apply(_norm_k, x, w, b, view=tuple(view), raxes=tuple(raxes),
                           pshape=tuple(pshape), eps=_eps(eps))
    return out, mean._data, var._data


# Per-channel scale and shift of a [N, C, S] view (NumPy). A scalar broadcast per row of S
# costs an inner-loop call per row, and NumPy >= 2.3 also copies strided operands through its
# ufunc buffer (8192 elements) when rows are shorter than it: 1.5x slower on 28x28 and 56x56
# planes. Rows at least this long run with a buffer too small to be used (the backend's
# small_ufunc_buffer); shorter ones (a CNN's 7x7 and 14x14 planes) take scale and shift
# expanded to one [C*S] row each, so the batch is N long contiguous rows (1.3x-2.5x faster
# from N = 2)
_UNBUFFERED_ROW = tuning.value("norm.unbuffered_row")


def _affine_apply(xp, xv, scale, shift):
    """``xv * scale + shift`` (per-channel broadcast vectors) in a new array, two passes; on
    NumPy split over the batch axis on the CPU thread pool."""
    if xp is not np:
        out = xp.multiply(xv, scale)
        out += shift
        return out
    out = np.empty(xv.shape, dtype=np.result_type(xv, scale))
    if xv.ndim == 3 and xv.shape[0] > 1 and xv.shape[2] < _UNBUFFERED_ROW:
        n, c, s = xv.shape
        x2, o2 = xv.reshape(n, c * s), out.reshape(n, c * s)
        sc, sh = np.repeat(scale.reshape(c), s), np.repeat(shift.reshape(c), s)
        small = False
    else:
        x2, o2, sc, sh = xv, out, scale, shift
        small = xv.shape[-1] >= _UNBUFFERED_ROW

    def part(lo, hi):
        with backend.small_ufunc_buffer() if small else contextlib.nullcontext():
            np.multiply(x2[lo:hi], sc, out=o2[lo:hi])
            o2[lo:hi] += sh

    backend.split(xv, part, x2.shape[0], 2 * xv.nbytes)
    return out


def _affine_k(x, w, b, mean, var, view, pshape, eps):
    """Normalize with given (running) statistics: ``(x - mean) * w / sqrt(var + eps) + b``."""
    dt, shape = x.dtype, x.shape
    xp = backend.get_array_module(x)
    invstd = 1.0 / xp.sqrt(_up(var).reshape(pshape) + eps)
    scale = invstd if w is None else invstd * _up(w).reshape(pshape)
    m = _up(mean).reshape(pshape)
    xv = _up(x.reshape(view))
    # per-channel scale and shift (tiny vectors), then two passes over x into one fresh
    # buffer: x * scale + (b - mean * scale), which also lands closer to Paddle's float32
    # results than (x - mean) * scale + b (measured: half as many last-bit differences)
    shift = -(m * scale) if b is None else _up(b).reshape(pshape) - m * scale
    out = _affine_apply(xp, xv, scale, shift)
    # the running statistics are constants (no gradient reaches them): so are these residuals
    return _cast(out.reshape(shape), dt), GRAD.save(invstd, m)


def _affine_grad(M, x, w, b, mean, var, out, saved, g, view, pshape, eps):
    """``dx = g * invstd * w``, ``dw = sum(g * (x - mean)) * invstd``, ``db = sum(g)``;
    float16/bfloat16 are computed in float32 on arrays."""
    invstd, m = saved
    paxes = tuple(k for k in range(len(view)) if pshape[k] == 1)
    low = not M.tensor
    gv = M.reshape(g, view)
    if low:
        gv = _up(gv)
    scale = invstd
    if w is not None:
        scale = invstd * M.reshape(_up(w) if low else w, pshape)
    gx = M.reshape(gv * scale, M.value(x).shape)
    gw = gb = None
    if w is not None:
        xv = M.reshape(x, view)
        gw = M.reshape(M.sum(gv * ((_up(xv) if low else xv) - m) * invstd, axis=paxes),
                       M.value(w).shape)
    if b is not None:
        gb = M.reshape(M.sum(gv, axis=paxes), M.value(b).shape)
    if low:
        gx = _cast(gx, x.dtype)
        gw = None if gw is None else _cast(gw, w.dtype)
        gb = None if gb is None else _cast(gb, b.dtype)
    return gx, gw, gb, None, None


op("batch_norm", grad=_affine_grad, residuals=True)(_affine_k)


def _identity_grad(M, x, w, b, out, g):
    return (g, None if w is None else M.zeros_like(w), None if b is None else M.zeros_like(b))


@op("batch_norm", saves=(), grad=_identity_grad)
def _identity_k(x, w, b):
    """Paddle's batch_norm with one value per channel returns x unchanged (and zero grads)."""
    return x.copy(), GRAD


# ---------------------------------------------------------------- batch_norm

_BN_FORMATS = ("NC", "NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC")


def _channel_layout(shape, channel_last):
    """(view, pshape, caxis) seeing x as [N, C, S] (channel first) or [M, C] (channel last)."""
    n = shape[0]
    if channel_last:
        c = shape[-1]
        m = int(np.prod(shape[:-1], dtype=np.int64))
        return (m, c), (1, c), len(shape) - 1
    c = shape[1]
    s = int(np.prod(shape[2:], dtype=np.int64))
    return (n, c, s), (1, c, 1), 1


def _update_running(t: Tensor, new, momentum):
    """running = momentum * running + (1 - momentum) * new, in place (it is state, not graph)."""
    d = t._data
    d *= momentum
    d += (1.0 - momentum) * new.astype(d.dtype).reshape(d.shape)
    t._ver.v += 1


def batch_norm(x, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.9, epsilon=1e-05, data_format="NCHW", use_global_stats=None,
               name=None):
    """Batch normalization over all axes but the channel axis.

    In training (and ``use_global_stats`` not True) the batch mean and biased variance are used
    and the running statistics are updated in place:
    ``running = momentum * running + (1 - momentum) * batch``. Otherwise the running statistics
    normalize x.

    Args:
        x (Tensor): [N, C], [N, C, L], [N, C, H, W], [N, C, D, H, W] or channel-last forms.
        running_mean (Tensor): [C] running mean, updated in place in training.
        running_var (Tensor): [C] running variance, updated in place in training.
        weight (Tensor, optional): [C] scale (ones when None).
        bias (Tensor, optional): [C] shift (zeros when None).
        training (bool): use batch statistics. Default False.
        momentum (float): Default 0.9.
        epsilon (float): added to the variance. Default 1e-5.
        data_format (str): 'NC', 'NCL', 'NCHW', 'NCDHW' (channel second) or 'NLC', 'NHWC',
            'NDHWC' (channel last).
        use_global_stats (bool, optional): force running (True) or batch (False) statistics;
            None follows ``training``.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.

    Example:
        >>> x = paddle.rand([4, 3, 8, 8])
        >>> y = F.batch_norm(x, paddle.zeros([3]), paddle.ones([3]), training=True)
    """
    return _batch_norm(x, running_mean, running_var, weight, bias, training, momentum, epsilon,
                       data_format, use_global_stats)


def _batch_norm(x, running_mean, running_var, weight, bias, training, momentum, epsilon,
                data_format, use_global_stats, act=None):
    """:func:`batch_norm`, then ``F.<act>`` when ``act`` ('relu' or 'relu6') is given: where
    the batch statistics are used and the compiled kernels are in use (see ``backend._numba``),
    the activation runs inside batch norm's own passes, forward and backward; elsewhere the
    two ops run in turn. The results are the same either way, to float rounding."""
    op = "batch_norm"
    x = _float_arg(x, op)
    if data_format not in _BN_FORMATS:
        raise ValueError(f"{op}: data_format must be one of {list(_BN_FORMATS)}, got "
                         f"{data_format!r}")
    if not 2 <= x.ndim <= 5:
        raise ValueError(f"{op}: x must be 2-D to 5-D, got x of shape {x.shape}")
    view, pshape, caxis = _channel_layout(tuple(x._data.shape), data_format[-1] == "C")
    c = pshape[1]
    running_mean = tensor_arg(running_mean, op, "running_mean")
    running_var = tensor_arg(running_var, op, "running_var")
    for arg, t in (("running_mean", running_mean), ("running_var", running_var)):
        if t.size != c:
            raise ValueError(f"{op}: '{arg}' must have {c} elements (the channels, axis "
                             f"{caxis} of x of shape {x.shape}, data_format {data_format}), "
                             f"got shape {t.shape}")
    weight = _param(weight, op, "weight", c)
    bias = _param(bias, op, "bias", c)
    global_stats = (not training) if use_global_stats is None else bool(use_global_stats)
    then = (lambda out: out) if act is None else _activation(act)
    if global_stats:
        return then(apply(_affine_k, x, weight, bias, running_mean._data, running_var._data,
                          view=view, pshape=pshape, eps=_eps(epsilon)))
    count = x.size // c if c else 0
    if count == 1:
        return then(apply(_identity_k, x, weight, bias))
    if data_format[-1] == "C":
        raxes = (0,)
    else:
        raxes = (0, 2)
    if act is not None and _fusable(x, raxes, count):
        out, mean, var = apply(_norm_act_k, x, weight, bias, view=tuple(view),
                               eps=_eps(epsilon), act=act)
        mean, var, then = mean._data, var._data, (lambda out: out)
    else:
        out, mean, var = _normalize(x, weight, bias, view, raxes, pshape, epsilon)
    if count > 1:
        # Paddle keeps momentum as a float32 attribute
        mom = float(np.float32(momentum))
        _update_running(running_mean, mean, mom)
        _update_running(running_var, var, mom)
    return then(out)


def _activation(act):
    from . import activation

    return getattr(activation, act)


# ---------------------------------------------------------------- layer_norm

def _shape_list(normalized_shape, op):
    if isinstance(normalized_shape, numbers.Integral) and not isinstance(normalized_shape, bool):
        return [int(normalized_shape)]
    if isinstance(normalized_shape, Tensor):
        normalized_shape = normalized_shape.tolist()
    if not isinstance(normalized_shape, (list, tuple)) or not all(
            isinstance(s, numbers.Integral) and not isinstance(s, bool)
            for s in normalized_shape):
        raise TypeError(f"{op}: normalized_shape must be an int or a list/tuple of ints, got "
                        f"{normalized_shape!r}")
    return [int(s) for s in normalized_shape]


def layer_norm(x, normalized_shape, weight=None, bias=None, epsilon=1e-05, name=None):
    """Layer normalization over the trailing ``normalized_shape`` dims (exact in float64).

    Args:
        x (Tensor): input of shape [*, *normalized_shape].
        normalized_shape (int|list[int]): the trailing dims normalized together.
        weight (Tensor, optional): scale with prod(normalized_shape) elements.
        bias (Tensor, optional): shift with prod(normalized_shape) elements.
        epsilon (float): added to the variance. Default 1e-5.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.

    Example:
        >>> y = F.layer_norm(paddle.rand([2, 3, 4]), [3, 4])
    """
    op = "layer_norm"
    x = _float_arg(x, op)
    ns = _shape_list(normalized_shape, op)
    shape = list(x.shape)
    if len(ns) > len(shape) or (ns and shape[len(shape) - len(ns):] != ns):
        raise ValueError(f"Given normalized_shape is {ns}, expected input with shape [*, "
                         f"{str(ns)[1:-1]}], but got input shape {shape}")
    if len(ns) == len(shape):
        raise ValueError(f"{op}: normalized_shape {ns} covers every dim of x (shape {shape}); "
                         "Paddle needs at least one leading (batch) dim before it")
    d = int(np.prod(ns, dtype=np.int64))
    m = int(np.prod(shape[:len(shape) - len(ns)], dtype=np.int64))
    weight = _param(weight, op, "weight", d)
    bias = _param(bias, op, "bias", d)
    out, _, _ = _normalize(x, weight, bias, (m, d), (1,), (1, d), epsilon)
    return out


# ---------------------------------------------------------------- instance / group norm

def instance_norm(x, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.9, eps=1e-05, data_format="NCHW", name=None):
    """Instance normalization: each (sample, channel) slice is normalized over its spatial
    dims (weight and bias may be None).

    As in Paddle 2.6 the statistics always come from the input; ``running_mean``,
    ``running_var``, ``use_input_stats`` and ``momentum`` are accepted and ignored.

    Args:
        x (Tensor): [N, C, *spatial] input.
        running_mean (Tensor, optional): ignored.
        running_var (Tensor, optional): ignored.
        weight (Tensor, optional): [C] scale.
        bias (Tensor, optional): [C] shift.
        use_input_stats (bool): ignored (always True).
        momentum (float): ignored.
        eps (float): added to the variance. Default 1e-5.
        data_format (str): 'NC', 'NCL', 'NCHW' or 'NCDHW' (channel second).
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.
    """
    op = "instance_norm"
    x = _float_arg(x, op)
    if data_format not in ("NC", "NCL", "NCHW", "NCDHW"):
        raise ValueError(f"{op}: data_format must be 'NC', 'NCL', 'NCHW' or 'NCDHW' (channel "
                         f"second), got {data_format!r}")
    if x.ndim < 2:
        raise ValueError(f"{op}: x must have at least 2 dims [N, C, ...], got x of shape "
                         f"{x.shape}")
    n, c = x.shape[0], x.shape[1]
    weight = _param(weight, op, "weight", c)
    bias = _param(bias, op, "bias", c)
    s = int(np.prod(x.shape[2:], dtype=np.int64))
    out, _, _ = _normalize(x, weight, bias, (n, c, s), (2,), (1, c, 1), eps)
    return out


def _group_norm(x, num_groups, weight=None, bias=None, epsilon=1e-05, data_format="NCHW",
                op="group_norm"):
    """Group normalization (Paddle 2.6 exposes it only as ``nn.GroupNorm``)."""
    x = _float_arg(x, op)
    if x.ndim < 2:
        raise ValueError(f"{op}: x must have at least 2 dims [N, C, ...], got x of shape "
                         f"{x.shape}")
    channel_last = data_format[-1] == "C" and data_format != "NC"
    shape = tuple(x.shape)
    c = shape[-1] if channel_last else shape[1]
    if weight is not None and weight.size != c or bias is not None and bias.size != c:
        p = weight if weight is not None else bias
        raise ValueError(f"{op}: x has {c} channels (x of shape {list(shape)}, data_format "
                         f"{data_format}) but the layer has {p.size}")
    if c % num_groups:
        raise ValueError(f"{op}: the number of channels {c} of x (shape {list(shape)}) must be "
                         f"divisible by num_groups={num_groups}")
    g = num_groups
    if channel_last:
        s = int(np.prod(shape[1:-1], dtype=np.int64))
        view, raxes, pshape = (shape[0], s, g, c // g), (1, 3), (1, 1, g, c // g)
    else:
        s = int(np.prod(shape[2:], dtype=np.int64))
        view, raxes, pshape = (shape[0], g, c // g, s), (2, 3), (1, g, c // g, 1)
    out, _, _ = _normalize(x, weight, bias, view, raxes, pshape, epsilon)
    return out


# ---------------------------------------------------------------- local_response_norm

_LRN_FORMATS = ("NCL", "NLC", "NCHW", "NHWC", "NCDHW", "NDHWC")


def local_response_norm(x, size, alpha=0.0001, beta=0.75, k=1.0, data_format="NCHW",
                        name=None):
    """Local response normalization across channels:
    ``x / (k + alpha * mean(x^2 over a window of size channels)) ** beta``.

    The window around channel c spans ``[c - size // 2, c + (size - 1) // 2]``, zero padded.

    Args:
        x (Tensor): 3-D, 4-D or 5-D input.
        size (int): number of channels in the window.
        alpha (float): Default 1e-4.
        beta (float): Default 0.75.
        k (float): Default 1.0.
        data_format (str): 'NCL', 'NLC', 'NCHW', 'NHWC', 'NCDHW' or 'NDHWC'.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.
    """
    op = "local_response_norm"
    x = _float_arg(x, op)
    if data_format not in _LRN_FORMATS:
        raise ValueError(f"{op}: data_format must be one of {list(_LRN_FORMATS)}, got "
                         f"{data_format!r}")
    if x.ndim < 3:
        raise ValueError(f"{op}: expected 3D or higher dimensionality input, got x of shape "
                         f"{x.shape}")
    if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 1:
        raise ValueError(f"{op}: 'size' must be a positive int, got {size!r}")
    caxis = x.ndim - 1 if data_format[-1] == "C" else 1
    c = x.shape[caxis]
    sq = x * x
    # zero-pad the channel axis, then add the `size` shifted windows (a loop over the window
    # length, not over elements); everything is a public op, so gradients of any order follow
    pad_shape = list(x.shape)
    parts = []
    before, after = size // 2, (size - 1) // 2
    if before:
        pad_shape[caxis] = before
        parts.append(_wrap(backend.get_array_module(x._data).zeros(pad_shape, x._data.dtype)))
    parts.append(sq)
    if after:
        pad_shape[caxis] = after
        parts.append(_wrap(backend.get_array_module(x._data).zeros(pad_shape, x._data.dtype)))
    padded = _manip.concat(parts, axis=caxis) if len(parts) > 1 else sq
    idx = [slice(None)] * x.ndim
    acc = None
    for j in range(size):
        idx[caxis] = slice(j, j + c)
        term = padded[tuple(idx)]
        acc = term if acc is None else acc + term
    # alpha, k and beta act as float32 attributes in Paddle on float32 input; float64 input
    # uses them in full
    cast = float if x._data.dtype == np.float64 else _eps
    div = _math.pow((acc / float(size)) * cast(alpha) + cast(k), cast(beta))
    return x / div
