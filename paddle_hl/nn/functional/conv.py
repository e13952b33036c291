"""Convolutions (1-D/2-D/3-D, transposed) and fold/unfold, as im2col + one GEMM per layer.

Three array kernels carry everything, and they are closed under differentiation, which gives
``create_graph=True`` for free:

- ``C(x, w)``: the convolution.           grads: dx = T(g, w),  dw = W(x, g)
- ``T(g, w)``: its adjoint in x (the transposed convolution).
                                           grads: dg = C(h, w),  dw = W(h, g)
- ``W(x, g)``: its adjoint in w (the weight gradient).
                                           grads: dx = T(g, h),  dg = C(x, h)

Layout (measured on ResNet shapes, see the report in benchmarks): the input is unfolded with one
strided-view copy into ``cols = [groups, C/groups*prod(k), N*prod(out)]`` so that the whole batch
is ONE BLAS GEMM per group: ``w[O, C*k] @ cols``. The result ``[O, N, *out]`` is moved to
``[N, O, *out]`` in the same pass that adds the bias. The input gradient is ``w.T @ g`` followed
by col2im (one vectorised strided add per kernel offset); the weight gradient is ``g @ cols.T``
with the columns of the forward pass kept for it when they are small (up to ``_KEEP_COLS`` bytes;
larger ones are recomputed from x rather than holding ``prod(k)`` copies of every activation for
the whole backward pass). 1x1 convolutions on large planes skip im2col (a batched GEMM on x
itself) and depthwise convolutions use a multiply-add per kernel offset. Channels-last inputs are
handled as transposed views of the same algorithm.

Measured refinements of the training-step kernel (``_conv_kernel``):

- from batch 8 on, layers whose columns are large next to their output (every 3x3 layer of a
  ResNet, LeNet's second layer) use a batch-innermost layout: x is copied once into
  ``[C, *Sp, N]``, so the window copies (forward) and the col2im adds (input gradient) move runs
  of ``out[-1] * N`` values instead of ``out[-1]``; the GEMMs are the same (``_use_nin``).
  When no gradient is wanted (inference), only the forward's copies count and the layout is
  kept for small stride-1 planes only.
- kernel taps that only ever read padding (a 3x3 kernel with padding 1 on a 1x1 plane, as in the
  last ResNet stage) are dropped before the GEMMs: they multiply zeros. Their weight gradient is
  zero.
- otherwise, with stride 1, the input gradient's col2im runs on flattened padded planes: the
  output gradient is laid out with the padded row width (zeros in the extra columns), so each
  kernel offset adds one contiguous run per (channel, sample) instead of one short run per
  output row. The GEMM grows by the padded/output width ratio, so this is used while that ratio
  is < 2.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ...backend import _numpy as _kernels
from ...framework import dtype as _dt
from ...framework import state
from ...framework.op import apply
from ...framework.tensor import Tensor
from ...tensor._helpers import tensor_arg

__all__ = []

_FORMATS = {1: ("NCL", "NLC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}
_LOW = (np.dtype(np.float16), _dt.BFLOAT16_NP)
# im2col columns up to this size are kept from the forward pass for the weight gradient
_KEEP_COLS = 64 << 20
# a 1x1 convolution is a per-sample GEMM on x itself only on planes at least this large;
# on smaller planes one GEMM over the whole batch (im2col with k=1) is faster
_POINTWISE_MIN = 64
# the flat-plane col2im is used while padded/output plane width stays below this ratio
_WIDE_MAX = 2.0
# the batch-innermost im2col layout is considered from this batch size on (see _use_nin)
_NIN_MIN_BATCH = 8
# ... and, when no gradient is wanted, only for output planes up to this many pixels
_NIN_FWD_MAX_PLANE = 256


# --------------------------------------------------------------------------- array helpers
def _to_cf(a, cl):
    """Logical channel-first view of a channels-last array (no copy)."""
    return a if not cl else a.transpose(0, a.ndim - 1, *range(1, a.ndim - 1))


def _from_cf(al, cl, bias=None):
    """Materialise a logical ``[N, C, *S]`` array in the requested layout, adding ``bias`` in
    the same pass (the transposing copy and the bias add are one ufunc call).

    Callers pass freshly computed arrays, so one that is already in place (C-contiguous in
    the requested layout, no bias) is returned as it is rather than copied.
    """
    if bias is None:
        if not cl and al.flags.c_contiguous:
            return al
        if cl:
            phys = al.transpose(0, *range(2, al.ndim), 1)
            if phys.flags.c_contiguous:
                return phys
    mod = _kernels.for_array(al).xp
    n, c, *sp = al.shape
    if cl:
        res = mod.empty((n, *sp, c), dtype=al.dtype)
        dst = _to_cf(res, True)
    else:
        res = mod.empty(al.shape, dtype=al.dtype)
        dst = res
    if bias is None:
        mod.copyto(dst, al)
    else:
        mod.add(al, bias.reshape((1, c) + (1,) * len(sp)), out=dst)
    return res


def _out_size(size, ksize, stride, pads, dil):
    return tuple((n + lo + hi - d * (k - 1) - 1) // s + 1
                 for n, k, s, (lo, hi), d in zip(size, ksize, stride, pads, dil))


def _is_depthwise(c, groups):
    return groups > 1 and groups == c


def _is_pointwise(ksize, pads, groups, osz):
    return (groups == 1 and all(k == 1 for k in ksize) and not any(lo or hi for lo, hi in pads)
            and math.prod(osz) >= _POINTWISE_MIN)


def _flat_ratio(osz, psz, stride):
    """GEMM size of the flat-plane col2im relative to the plain one (None: not applicable)."""
    if len(osz) < 2 or any(s != 1 for s in stride):
        return None
    return math.prod(psz[1:]) / math.prod(osz[1:])


def _trim_taps(ksize, size, osz, stride, pads, dil):
    """Kernel taps that read some real input pixel, per spatial dim.

    Returns None when every tap is used, else ``(taps, pads)``: a slice per dim selecting the
    used taps and the padding of the equivalent convolution with the trimmed kernel (the same
    output size). A dim is trimmed only when that keeps both paddings >= 0.
    """
    taps, new_pads, trimmed = [], [], False
    for k, n, m, s, (lo, hi), d in zip(ksize, size, osz, stride, pads, dil):
        # tap i reads input rows y*s + i*d - lo, y in [0, m): used iff some of them is in [0, n)
        i0 = max(0, -(-(lo - (m - 1) * s) // d))
        i1 = min(k, -(-(n + lo) // d))
        lo2 = lo - i0 * d
        hi2 = (m - 1) * s + d * (i1 - i0 - 1) + 1 - n - lo2
        if i1 <= i0 or (i0 == 0 and i1 == k) or lo2 < 0 or hi2 < 0:
            taps.append(slice(None))
            new_pads.append((lo, hi))
        else:
            taps.append(slice(i0, i1))
            new_pads.append((lo2, hi2))
            trimmed = True
    return (tuple(taps), tuple(new_pads)) if trimmed else None


def _g_cols(gl, groups):
    """``[groups, O/groups, N*L]``: the output gradient as the GEMM operand (one copy)."""
    mod = _kernels.for_array(gl).xp
    o = gl.shape[1]
    return mod.ascontiguousarray(gl.swapaxes(0, 1)).reshape(groups, o // groups, -1)


def _g_cols_flat(gl, groups, psz):
    """The GEMM operand of the flat-plane col2im: ``[groups, O/groups, N*o1*prod(psz[1:])]``,
    the output gradient laid out with the padded plane's trailing sizes, zeros beyond."""
    mod = _kernels.for_array(gl).xp
    n, o = gl.shape[:2]
    osz = gl.shape[2:]
    buf = mod.zeros((o, n, osz[0], *psz[1:]), dtype=gl.dtype)
    buf[(slice(None),) * 3 + tuple(slice(0, m) for m in osz[1:])] = gl.swapaxes(0, 1)
    return buf.reshape(groups, o // groups, -1)


def _strided(xl, stride):
    return xl[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in stride)]


def _fwd(xl, w, stride, pads, dil, groups, keep=False, cl=False):
    """C: logical ``[N, O, *out]`` (any memory layout) of the convolution of ``xl``.

    With ``keep``, returns ``(y, cols)``: the im2col columns when the GEMM used them and they
    are at most ``_KEEP_COLS`` bytes (for :func:`_filter_grad`), else None. ``cl``: the result
    will be wanted channels last (a depthwise kernel writes it so directly).
    """
    K = _kernels.for_array(xl)
    mod = K.xp
    n, c = xl.shape[:2]
    o = w.shape[0]
    ksize = w.shape[2:]
    osz = _out_size(xl.shape[2:], ksize, stride, pads, dil)
    cols = None
    if _is_pointwise(ksize, pads, groups, osz):
        # 1x1: a batched GEMM on x itself, already in [N, O, L] order: no im2col, no transpose
        x3 = mod.ascontiguousarray(_strided(xl, stride)).reshape(n, c, -1)
        y = mod.matmul(w.reshape(o, c), x3).reshape(n, o, *osz)
    elif _is_depthwise(c, groups):
        # the kernel pads as it goes (NumPy: block by block, in cache)
        y = K.depthwise_forward(xl, w, stride, dil, osz, pads, out_cl=cl)
    else:
        cols = K.im2col(K.pad(xl, pads), ksize, stride, dil, osz, groups)
        y = mod.matmul(w.reshape(groups, o // groups, -1), cols)
        y = y.reshape(o, n, *osz).swapaxes(0, 1)
    if not keep:
        return y
    return y, (cols if cols is not None and cols.nbytes <= _KEEP_COLS else None)


def _data_grad(gl, w, size, stride, pads, dil, groups, gcols=None, cl=False):
    """T: logical ``[N, C, *size]``, the adjoint of :func:`_fwd` in its input (``cl``: as
    in :func:`_fwd`)."""
    K = _kernels.for_array(gl)
    mod = K.xp
    n, o = gl.shape[:2]
    c = w.shape[1] * groups
    ksize = w.shape[2:]
    osz = gl.shape[2:]
    psz = tuple(s + lo + hi for s, (lo, hi) in zip(size, pads))
    if _is_pointwise(ksize, pads, groups, osz):
        g3 = mod.ascontiguousarray(gl).reshape(n, o, -1)
        dx = mod.matmul(w.reshape(o, c).T, g3).reshape(n, c, *osz)
        if tuple(osz) == tuple(size):
            return dx
        full = mod.zeros((n, c, *size), dtype=dx.dtype)
        full[(slice(None), slice(None)) + tuple(
            slice(0, s * (m - 1) + 1, s) for s, m in zip(stride, osz))] = dx
        return full
    if _is_depthwise(c, groups):
        return K.depthwise_input_grad(gl, w, (n, c, *psz), stride, dil, pads, out_cl=cl)
    wt = w.reshape(groups, o // groups, -1).transpose(0, 2, 1)
    ratio = _flat_ratio(osz, psz, stride)
    if ratio is not None and ratio < _WIDE_MAX:
        dcols = mod.matmul(wt, _g_cols_flat(gl, groups, psz))
        acc = K.col2im_flat(dcols, (n, c, *psz), ksize, dil, osz)
        return K.crop(acc, pads, size)
    if gcols is None:
        gcols = _g_cols(gl, groups)
    acc = K.col2im(mod.matmul(wt, gcols), (n, c, *psz), ksize, stride, dil, osz)
    return K.crop(acc, pads, size)


def _filter_grad(xl, gl, ksize, stride, pads, dil, groups, gcols=None, cols=None):
    """W: ``[O, C/groups, *k]``, the adjoint of :func:`_fwd` in its weight (``cols``: the
    im2col columns of the forward pass, when kept)."""
    K = _kernels.for_array(xl)
    mod = K.xp
    n, c = xl.shape[:2]
    o = gl.shape[1]
    osz = gl.shape[2:]
    if _is_pointwise(ksize, pads, groups, osz):
        x3 = mod.ascontiguousarray(_strided(xl, stride)).reshape(n, c, -1)
        g3 = mod.ascontiguousarray(gl).reshape(n, o, -1)
        if o * c <= x3.shape[2] * (o + c):
            # per-sample GEMMs then a sum: no transposing copy of the activations
            gw = mod.matmul(g3, x3.transpose(0, 2, 1)).sum(axis=0)
        else:
            gw = mod.tensordot(g3, x3, axes=([0, 2], [0, 2]))
        return gw.reshape(o, c, *ksize)
    if _is_depthwise(c, groups):
        return K.depthwise_weight_grad(xl, gl, ksize, stride, dil, pads)
    if cols is None:
        cols = K.im2col(K.pad(xl, pads), ksize, stride, dil, osz, groups)
    if gcols is None:
        gcols = _g_cols(gl, groups)
    gw = mod.matmul(gcols, cols.transpose(0, 2, 1))
    return gw.reshape(o, c // groups, *ksize)


def _use_nin(xshape, wshape, pads, groups, osz, stride=None, train=True):
    """Whether the batch-innermost layout (``im2col_nin``) serves this convolution better.

    It trades two transposing copies (x in, y out) for window copies and col2im adds over runs
    ``N`` times longer; measured, that wins when the batch is not tiny and the columns are
    large next to the output (``C*prod(k) >= 2*O``: the window copies dominate), e.g. every 3x3
    layer of a ResNet and LeNet's second layer, and loses for a first layer with few channels.

    Without a backward pass (``train=False``: no gradient wanted) only the forward copies
    count: there the layout wins only on small output planes with stride 1 (a ResNet's last
    two stages); on larger planes, strided layers and ResNet's 7x7 stem the plain im2col is
    faster (measured on ResNet-50 at batch 8, those layers alone: 144 ms -> 118 ms).
    """
    n, c = xshape[:2]
    o = wshape[0]
    ksize = wshape[2:]
    base = (n >= _NIN_MIN_BATCH and not _is_depthwise(c, groups)
            and not _is_pointwise(ksize, pads, groups, osz)
            and c * math.prod(ksize) >= 2 * o)
    if train or not base:
        return base
    return math.prod(osz) <= _NIN_FWD_MAX_PLANE and all(s == 1 for s in (stride or ()))


def _fwd_nin(xl, w, stride, pads, dil, groups, osz):
    """:func:`_fwd` through the batch-innermost columns; returns ``(y, kept cols or None)``."""
    K = _kernels.for_array(xl)
    mod = K.xp
    n = xl.shape[0]
    o = w.shape[0]
    cols = K.im2col_nin(xl, w.shape[2:], stride, dil, pads, osz, groups)
    y = mod.matmul(w.reshape(groups, o // groups, -1), cols)
    y = mod.moveaxis(y.reshape(o, *osz, n), -1, 0)
    return y, (cols if cols.nbytes <= _KEEP_COLS else None)


def _bw_nin(xl, gl, w, stride, pads, dil, groups, osz, cols, need):
    """Input and weight gradients of :func:`_fwd_nin`: ``(dx logical [N, C, *S] or None,
    dw or None)``, both from one batch-innermost copy of the output gradient."""
    K = _kernels.for_array(gl)
    mod = K.xp
    n, c = xl.shape[:2]
    size = xl.shape[2:]
    o = w.shape[0]
    ksize = w.shape[2:]
    gt = mod.ascontiguousarray(mod.moveaxis(gl, 0, -1)).reshape(groups, o // groups, -1)
    gx = gw = None
    if need[0]:
        psz = tuple(s + lo + hi for s, (lo, hi) in zip(size, pads))
        dcols = mod.matmul(w.reshape(groups, o // groups, -1).transpose(0, 2, 1), gt)
        gx = K.crop(K.col2im_nin(dcols, (n, c, *psz), ksize, stride, dil, osz), pads, size)
    if need[1]:
        if cols is None:
            cols = K.im2col_nin(xl, ksize, stride, dil, pads, osz, groups)
        gw = mod.matmul(gt, cols.transpose(0, 2, 1)).reshape(w.shape)
    return gx, gw


# --------------------------------------------------------------------------- dtype plumbing
def _up(*arrs):
    """fp16/bf16 compute in fp32 (NumPy has no half-precision BLAS); returns (arrays, dtype)."""
    dt = arrs[0].dtype
    if dt in _LOW:
        return [None if a is None else a.astype(np.float32) for a in arrs], dt
    return list(arrs), None


def _down(a, dt):
    return a if dt is None or a is None else a.astype(dt)


def _dense(g, low):
    """The incoming gradient as a dense array in the compute dtype.

    Gradients of reductions arrive as zero-stride broadcast views; handed to matmul they would
    take NumPy's slow non-BLAS path, so they are materialised once here.
    """
    if low is not None:
        return g.astype(np.float32)
    if 0 in g.strides and g.size > 1:
        return _kernels.for_array(g).xp.ascontiguousarray(g)
    return g


def _bias_grad(g, cl):
    # the batch axis first: one vectorised pass, then short per-channel reductions (NumPy's
    # multi-axis reduction loops over the short spatial rows and is several times slower)
    g = g.sum(axis=0)
    axes = tuple(range(g.ndim - 1)) if cl else tuple(range(1, g.ndim))
    return g.sum(axis=axes) if axes else g


# --------------------------------------------------------------------------- kernels
def _conv_kernel(x, w, b, stride, pads, dil, groups, cl, need):
    (x, w, b), low = _up(x, w, b)
    xl = _to_cf(x, cl)
    size = xl.shape[2:]
    ksize = w.shape[2:]
    osz = _out_size(size, ksize, stride, pads, dil)
    trim = _trim_taps(ksize, size, osz, stride, pads, dil)
    wk, kpads = w, pads
    if trim is not None:
        # taps that only read padding are dropped: the same output from a smaller GEMM
        wk = _kernels.for_array(w).xp.ascontiguousarray(w[(slice(None),) * 2 + trim[0]])
        kpads = trim[1]
    nin = _use_nin(xl.shape, wk.shape, kpads, groups, osz, stride, train=any(need))
    if nin:
        y, cols = _fwd_nin(xl, wk, stride, kpads, dil, groups, osz)
    else:
        y, cols = _fwd(xl, wk, stride, kpads, dil, groups, keep=True, cl=cl)
    out = _from_cf(y, cl, b)
    del y
    if not need[1]:
        cols = None  # only the weight gradient reads them

    def bw(g):
        g = _dense(g, low)
        gl = _to_cf(g, cl)
        gx = gw = gb = None
        kk = wk.shape[2:]
        if nin:
            gx, gw = _bw_nin(xl, gl, wk, stride, kpads, dil, groups, osz, cols, need)
            if gx is not None:
                gx = _from_cf(gx, cl)
        else:
            gcols = None
            if need[1] and not (_is_pointwise(kk, kpads, groups, osz)
                                or _is_depthwise(xl.shape[1], groups)):
                gcols = _g_cols(gl, groups)
            if need[0]:
                gx = _from_cf(_data_grad(gl, wk, size, stride, kpads, dil, groups, gcols,
                                         cl), cl)
            if need[1]:
                gw = _filter_grad(xl, gl, kk, stride, kpads, dil, groups, gcols, cols)
        if need[1] and trim is not None:
            full = _kernels.for_array(gw).xp.zeros(w.shape, dtype=gw.dtype)
            full[(slice(None),) * 2 + trim[0]] = gw
            gw = full
        if need[2] and b is not None:
            gb = _bias_grad(g, cl)
        return _down(gx, low), _down(gw, low), _down(gb, low)

    return _down(out, low), bw


def _convt_kernel(x, w, b, stride, pads, dil, groups, cl, size, need):
    (x, w, b), low = _up(x, w, b)
    xl = _to_cf(x, cl)
    out = _from_cf(_data_grad(xl, w, size, stride, pads, dil, groups, cl=cl), cl, b)

    def bw(g):
        g = _dense(g, low)
        gl = _to_cf(g, cl)
        gx = gw = gb = None
        if need[0]:
            gx = _from_cf(_fwd(gl, w, stride, pads, dil, groups, cl=cl), cl)
        if need[1]:
            gw = _filter_grad(gl, xl, w.shape[2:], stride, pads, dil, groups)
        if need[2] and b is not None:
            gb = _bias_grad(g, cl)
        return _down(gx, low), _down(gw, low), _down(gb, low)

    return _down(out, low), bw


def _convw_kernel(x, g, stride, pads, dil, groups, cl, ksize, need):
    (x, g), low = _up(x, g)
    xl, gl = _to_cf(x, cl), _to_cf(g, cl)
    out = _filter_grad(xl, gl, ksize, stride, pads, dil, groups)

    def bw(h):
        h = _dense(h, low)
        gx = gg = None
        if need[0]:
            gx = _from_cf(_data_grad(gl, h, xl.shape[2:], stride, pads, dil, groups, cl=cl),
                          cl)
        if need[1]:
            gg = _from_cf(_fwd(xl, h, stride, pads, dil, groups, cl=cl), cl)
        return _down(gx, low), _down(gg, low)

    return _down(out, low), bw


def _need(*ts):
    # under no_grad nothing is recorded, so no gradient can be asked for later
    if not state.grad_enabled:
        return (False,) * len(ts)
    return tuple(isinstance(t, Tensor) and not t.stop_gradient for t in ts)


def _spatial(t, cl):
    s = t.shape
    return tuple(s[1:-1]) if cl else tuple(s[2:])


def _apply_c(x, w, b, stride, pads, dil, groups, cl):
    return apply(_conv_kernel, x, w, b, stride=stride, pads=pads, dil=dil, groups=groups, cl=cl,
                 need=_need(x, w, b))


def _apply_t(x, w, b, stride, pads, dil, groups, cl, size):
    return apply(_convt_kernel, x, w, b, stride=stride, pads=pads, dil=dil, groups=groups,
                 cl=cl, size=size, need=_need(x, w, b))


def _apply_w(x, g, stride, pads, dil, groups, cl, ksize):
    return apply(_convw_kernel, x, g, stride=stride, pads=pads, dil=dil, groups=groups, cl=cl,
                 ksize=ksize, need=_need(x, g))


def _live(t):
    return isinstance(t, Tensor) and not t.stop_gradient


def _bias_grad_t(g, cl):
    axes = list(range(g.ndim - 1)) if cl else [0] + list(range(2, g.ndim))
    return g.sum(axis=axes)


def _conv_hi(inputs, grads, stride, pads, dil, groups, cl, need):
    x, w, b = inputs
    g = grads[0]
    a = dict(stride=stride, pads=pads, dil=dil, groups=groups, cl=cl)
    gx = _apply_t(g, w, None, size=_spatial(x, cl), **a) if _live(x) else None
    gw = _apply_w(x, g, ksize=tuple(w.shape[2:]), **a) if _live(w) else None
    gb = _bias_grad_t(g, cl) if _live(b) else None
    return gx, gw, gb


def _convt_hi(inputs, grads, stride, pads, dil, groups, cl, size, need):
    x, w, b = inputs
    g = grads[0]
    a = dict(stride=stride, pads=pads, dil=dil, groups=groups, cl=cl)
    gx = _apply_c(g, w, None, **a) if _live(x) else None
    gw = _apply_w(g, x, ksize=tuple(w.shape[2:]), **a) if _live(w) else None
    gb = _bias_grad_t(g, cl) if _live(b) else None
    return gx, gw, gb


def _convw_hi(inputs, grads, stride, pads, dil, groups, cl, ksize, need):
    x, g = inputs
    h = grads[0]
    a = dict(stride=stride, pads=pads, dil=dil, groups=groups, cl=cl)
    gx = _apply_t(g, h, None, size=_spatial(x, cl), **a) if _live(x) else None
    gg = _apply_c(x, h, None, **a) if _live(g) else None
    return gx, gg


_conv_kernel.op_name = "conv"
_conv_kernel.hi = _conv_hi
_convt_kernel.op_name = "conv_transpose"
_convt_kernel.hi = _convt_hi
_convw_kernel.op_name = "conv_filter_grad"
_convw_kernel.hi = _convw_hi


# --------------------------------------------------------------------------- argument parsing
def _int(v, op, arg):
    if isinstance(v, Tensor):
        v = v.item()
    if isinstance(v, np.integer):
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{op}: '{arg}' must contain ints, got {v!r}")
    return int(v)


def ntuple(v, n, op, arg, minimum=1):
    """An int or a list/tuple of n ints -> a tuple of n ints, each >= ``minimum``."""
    if isinstance(v, Tensor):
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        if len(v) != n:
            raise ValueError(f"{op}: '{arg}' must be an int or a list of {n} ints, got {list(v)}")
        out = tuple(_int(e, op, arg) for e in v)
    else:
        out = (_int(v, op, arg),) * n
    if any(e < minimum for e in out):
        raise ValueError(f"{op}: every '{arg}' value must be >= {minimum}, got {list(out)}")
    return out


def parse_padding(padding, nd, cl, op, order="pairs"):
    """Paddle's padding forms -> 'same', 'valid', or a tuple of (lo, hi) per spatial dim.

    Accepted: an int; 'same'/'valid' (any case); nd ints (symmetric); 2*nd ints, either
    ``[d0_lo, d0_hi, d1_lo, ...]`` (``order='pairs'``, conv and pooling) or
    ``[d0_lo, d1_lo, ..., d0_hi, d1_hi, ...]`` (``order='lohi'``, unfold); or nd+2 pairs with
    zeros for the batch and channel dims.
    """
    if isinstance(padding, str):
        p = padding.upper()
        if p not in ("SAME", "VALID"):
            raise ValueError(f"{op}: unknown padding {padding!r}; it can only be 'SAME' or "
                             f"'VALID', an int, or a list of ints")
        return p.lower()
    if isinstance(padding, Tensor):
        padding = padding.tolist()
    if isinstance(padding, (list, tuple)):
        vals = list(padding)
        if vals and all(isinstance(e, (list, tuple)) for e in vals):
            if len(vals) != nd + 2 or any(len(e) != 2 for e in vals):
                raise ValueError(f"{op}: padding given as pairs must have {nd + 2} pairs "
                                 f"(batch, channel and {nd} spatial dims), got {padding}")
            batch_ch = (0, nd + 1) if cl else (0, 1)
            if any(_int(e, op, "padding") for i in batch_ch for e in vals[i]):
                raise ValueError(f"{op}: non-zero padding {padding} in the batch or channel "
                                 f"dimensions is not supported")
            sp = vals[1:-1] if cl else vals[2:]
            pads = tuple((_int(a, op, "padding"), _int(b, op, "padding")) for a, b in sp)
        elif len(vals) == nd:
            pads = tuple((_int(v, op, "padding"),) * 2 for v in vals)
        elif len(vals) == 2 * nd:
            v = [_int(e, op, "padding") for e in vals]
            if order == "pairs":
                pads = tuple((v[2 * i], v[2 * i + 1]) for i in range(nd))
            else:
                pads = tuple((v[i], v[nd + i]) for i in range(nd))
        else:
            raise ValueError(f"{op}: padding must be an int, 'same'/'valid', or a list of {nd} "
                             f"or {2 * nd} ints (or {nd + 2} pairs), got {padding}")
    else:
        p = _int(padding, op, "padding")
        pads = ((p, p),) * nd
    if any(lo < 0 or hi < 0 for lo, hi in pads):
        raise ValueError(f"{op}: invalid padding {padding}: every value must be >= 0")
    return pads


def same_pads(size, ksize, stride):
    """Paddle's 'SAME': out = ceil(in / stride), the extra pixel of an odd total at the end."""
    pads = []
    for n, k, s in zip(size, ksize, stride):
        total = max((-(-n // s) - 1) * s + k - n, 0)
        pads.append((total // 2, total - total // 2))
    return tuple(pads)


def check_format(data_format, nd, op):
    formats = _FORMATS[nd]
    if data_format not in formats:
        raise ValueError(f"{op}: data_format should be {formats[0]!r} or {formats[1]!r}, "
                         f"received {data_format!r}")
    return data_format == formats[1]


def float_input(x, op, arg="x"):
    x = tensor_arg(x, op, arg)
    d = x._data.dtype
    if not (d.kind == "f" or d == _dt.BFLOAT16_NP):
        raise TypeError(f"{op}: '{arg}' must be a floating tensor (float16, bfloat16, float32 or "
                        f"float64), got {x.dtype.name}")
    return x


def _check_rank(x, nd, op, arg="x"):
    if x.ndim != nd + 2:
        raise ValueError(f"{op}: input '{arg}' should be a {nd + 2}-D tensor, but received "
                         f"'{arg}' with the shape of {x.shape}")


def _prepare(op, nd, x, weight, bias, stride, dilation, groups, data_format, transposed):
    x = float_input(x, op, "x")
    weight = float_input(weight, op, "weight")
    _check_rank(x, nd, op)
    _check_rank(weight, nd, op, "weight")
    cl = check_format(data_format, nd, op)
    # under auto_cast the AMP hook brings x and weight to one dtype before the kernel runs
    if weight._data.dtype != x._data.dtype and state.amp_hook is None:
        raise TypeError(f"{op}: x ({x.dtype.name}) and weight ({weight.dtype.name}) must have "
                        f"the same dtype")
    if x.size == 0:
        raise ValueError(f"{op}: the input must not be empty, got shape {x.shape}")
    groups = _int(groups, op, "groups")
    if groups < 1:
        raise ValueError(f"{op}: groups must be >= 1, got {groups}")
    c = x.shape[-1] if cl else x.shape[1]
    if c % groups:
        raise ValueError(f"{op}: the channel of input must be divisible by groups, received: "
                         f"the channel of input is {c}, the shape of input is {x.shape}, the "
                         f"groups is {groups}")
    if transposed:
        if weight.shape[0] != c:
            raise ValueError(f"{op}: the number of input channels ({c}, input shape {x.shape}, "
                             f"data_format {data_format}) should equal weight.shape[0] "
                             f"(weight shape {weight.shape})")
        out_c = weight.shape[1] * groups
    else:
        if weight.shape[1] * groups != c:
            raise ValueError(f"{op}: the number of input's channels should be equal to filter's "
                             f"channels * groups. But received: the input's channels is {c}, the "
                             f"input's shape is {x.shape}; the filter's channels is "
                             f"{weight.shape[1]}, the filter's shape is {weight.shape}; the "
                             f"groups is {groups}, the data_format is {data_format}. The error "
                             f"may come from wrong data_format setting.")
        out_c = weight.shape[0]
        if out_c % groups:
            raise ValueError(f"{op}: the number of filters must be divisible by groups, "
                             f"received: the number of filters is {out_c}, the shape of weight "
                             f"is {weight.shape}, the groups is {groups}")
    if bias is not None:
        bias = float_input(bias, op, "bias")
        if bias.shape != [out_c]:
            raise ValueError(f"{op}: bias must have shape [{out_c}] (the output channels), got "
                             f"{bias.shape}")
        if bias._data.dtype != x._data.dtype and state.amp_hook is None:
            bias = bias.astype(x.dtype)
    stride = ntuple(stride, nd, op, "stride")
    dilation = ntuple(dilation, nd, op, "dilation")
    return x, weight, bias, stride, dilation, groups, cl


def _conv_nd(op, nd, x, weight, bias, stride, padding, dilation, groups, data_format):
    x, weight, bias, stride, dil, groups, cl = _prepare(
        op, nd, x, weight, bias, stride, dilation, groups, data_format, False)
    size = tuple(x.shape[1:-1] if cl else x.shape[2:])
    ksize = tuple(weight.shape[2:])
    pads = parse_padding(padding, nd, cl, op)
    if pads == "same":
        pads, dil = same_pads(size, ksize, stride), (1,) * nd  # Paddle ignores dilation here
    elif pads == "valid":
        pads = ((0, 0),) * nd
    osz = _out_size(size, ksize, stride, pads, dil)
    if any(o <= 0 for o in osz):
        raise ValueError(f"{op}: the output size {list(osz)} is not positive: input spatial size "
                         f"{list(size)}, kernel {list(ksize)}, stride {list(stride)}, padding "
                         f"{[list(p) for p in pads]}, dilation {list(dil)}")
    return _apply_c(x, weight, bias, stride, pads, dil, groups, cl)


def _conv_transpose_nd(op, nd, x, weight, bias, stride, padding, output_padding, dilation,
                       groups, output_size, data_format):
    x, weight, bias, stride, dil, groups, cl = _prepare(
        op, nd, x, weight, bias, stride, dilation, groups, data_format, True)
    size_in = tuple(x.shape[1:-1] if cl else x.shape[2:])
    ksize = tuple(weight.shape[2:])
    pads = parse_padding(padding, nd, cl, op)
    if pads == "same":
        pads, dil = same_pads(size_in, ksize, stride), (1,) * nd
    elif pads == "valid":
        pads = ((0, 0),) * nd
    base = tuple((n - 1) * s - lo - hi + d * (k - 1) + 1
                 for n, s, (lo, hi), d, k in zip(size_in, stride, pads, dil, ksize))
    if output_size is not None:
        if output_padding not in (0, None) and output_padding != [0] * nd:
            raise ValueError(f"{op}: output_padding option is mutually exclusive with "
                             f"output_size")
        osz = ntuple(output_size, nd, op, "output_size")
        for i, (o, b, s) in enumerate(zip(osz, base, stride)):
            if not b <= o < b + s:
                raise ValueError(f"{op}: output_size {list(osz)} is invalid: dim {i} must be in "
                                 f"[{b}, {b + s}) (the inferred size {b} plus less than the "
                                 f"stride {s})")
    else:
        opad = ntuple(output_padding, nd, op, "output_padding", minimum=0)
        for i, (p, s, d) in enumerate(zip(opad, stride, dil)):
            if p >= max(s, d):
                raise ValueError(f"{op}: output_padding {list(opad)} must be less than either "
                                 f"stride {list(stride)} or dilation {list(dil)} (dim {i})")
        osz = tuple(b + p for b, p in zip(base, opad))
    if any(o <= 0 for o in osz):
        raise ValueError(f"{op}: the output size {list(osz)} is not positive (input "
                         f"{x.shape}, weight {weight.shape})")
    return _apply_t(x, weight, bias, stride, pads, dil, groups, cl, osz)


# --------------------------------------------------------------------------- public API
def conv1d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format="NCL",
           name=None):
    """1-D convolution.

    Args:
        x (Tensor): ``[N, C, L]`` (``NCL``) or ``[N, L, C]`` (``NLC``), float32/float64.
        weight (Tensor): ``[O, C/groups, k]``.
        bias (Tensor, optional): ``[O]``.
        stride (int|list): the step of the window.
        padding (int|str|list): an int, 'same'/'valid', ``[p]``, ``[lo, hi]`` or 3 pairs.
        dilation (int|list): spacing of the kernel taps.
        groups (int): channel groups (``groups == C`` is depthwise).
        data_format (str): 'NCL' or 'NLC'.
        name (str, optional): unused.

    Returns:
        Tensor: ``[N, O, L_out]`` (or ``[N, L_out, O]``).

    Example:
        >>> F.conv1d(paddle.ones([1, 2, 5]), paddle.ones([3, 2, 3])).shape
        [1, 3, 3]
    """
    return _conv_nd("conv1d", 1, x, weight, bias, stride, padding, dilation, groups, data_format)


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format="NCHW",
           name=None):
    """2-D convolution (cross-correlation, as in Paddle).

    Args:
        x (Tensor): ``[N, C, H, W]`` (``NCHW``) or ``[N, H, W, C]`` (``NHWC``).
        weight (Tensor): ``[O, C/groups, kh, kw]``.
        bias (Tensor, optional): ``[O]``.
        stride (int|list): ``sh`` = ``sw`` or ``[sh, sw]``.
        padding (int|str|list): an int, 'same'/'valid', ``[ph, pw]``,
            ``[top, bottom, left, right]`` or 4 pairs ``[[0,0],[0,0],[t,b],[l,r]]``.
        dilation (int|list): spacing of the kernel taps.
        groups (int): channel groups (``groups == C`` is depthwise).
        data_format (str): 'NCHW' or 'NHWC'.
        name (str, optional): unused.

    Returns:
        Tensor: ``[N, O, H_out, W_out]`` (or channels last), with
        ``H_out = (H + top + bottom - dh * (kh - 1) - 1) // sh + 1``.

    Example:
        >>> F.conv2d(paddle.ones([1, 3, 8, 8]), paddle.ones([4, 3, 3, 3]), padding=1).shape
        [1, 4, 8, 8]
    """
    return _conv_nd("conv2d", 2, x, weight, bias, stride, padding, dilation, groups, data_format)


def conv3d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format="NCDHW",
           name=None):
    """3-D convolution.

    Args:
        x (Tensor): ``[N, C, D, H, W]`` (``NCDHW``) or ``[N, D, H, W, C]`` (``NDHWC``).
        weight (Tensor): ``[O, C/groups, kd, kh, kw]``.
        bias (Tensor, optional): ``[O]``.
        stride (int|list): the step of the window.
        padding (int|str|list): an int, 'same'/'valid', 3 or 6 ints, or 5 pairs.
        dilation (int|list): spacing of the kernel taps.
        groups (int): channel groups.
        data_format (str): 'NCDHW' or 'NDHWC'.
        name (str, optional): unused.

    Returns:
        Tensor: ``[N, O, D_out, H_out, W_out]`` (or channels last).
    """
    return _conv_nd("conv3d", 3, x, weight, bias, stride, padding, dilation, groups, data_format)


def conv1d_transpose(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1, output_size=None, data_format="NCL", name=None):
    """1-D transposed convolution (the gradient of conv1d w.r.t. its input).

    Args:
        x (Tensor): ``[N, C, L]`` or ``[N, L, C]``.
        weight (Tensor): ``[C, O/groups, k]``.
        bias (Tensor, optional): ``[O]``.
        stride, padding, dilation, groups: as in :func:`conv1d` (padding 'same' gives
            ``L_out = L * stride``).
        output_padding (int|list): extra size added at the end, < max(stride, dilation).
        output_size (int|list, optional): the exact output length, in
            ``[L_base, L_base + stride)``; exclusive with output_padding.
        data_format (str): 'NCL' or 'NLC'.
        name (str, optional): unused.

    Returns:
        Tensor: ``[N, O, L_out]`` with ``L_out = (L - 1) * stride - pad_lo - pad_hi +
        dilation * (k - 1) + 1 + output_padding``.
    """
    return _conv_transpose_nd("conv1d_transpose", 1, x, weight, bias, stride, padding,
                              output_padding, dilation, groups, output_size, data_format)


def conv2d_transpose(x, weight, bias=None, stride=1, padding=0, output_padding=0, dilation=1,
                     groups=1, output_size=None, data_format="NCHW", name=None):
    """2-D transposed convolution (the gradient of conv2d w.r.t. its input).

    Args:
        x (Tensor): ``[N, C, H, W]`` or ``[N, H, W, C]``.
        weight (Tensor): ``[C, O/groups, kh, kw]``.
        bias (Tensor, optional): ``[O]``.
        stride, padding, dilation, groups: as in :func:`conv2d`.
        output_padding (int|list): extra size added at the end of each dim.
        output_size (list, optional): the exact output size; exclusive with output_padding.
        data_format (str): 'NCHW' or 'NHWC'.
        name (str, optional): unused.

    Returns:
        Tensor: ``[N, O, H_out, W_out]``.

    Example:
        >>> F.conv2d_transpose(paddle.ones([1, 4, 5, 5]), paddle.ones([4, 2, 3, 3]),
        ...                    stride=2).shape
        [1, 2, 11, 11]
    """
    return _conv_transpose_nd("conv2d_transpose", 2, x, weight, bias, stride, padding,
                              output_padding, dilation, groups, output_size, data_format)


def conv3d_transpose(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1, output_size=None, data_format="NCDHW", name=None):
    """3-D transposed convolution.

    Args:
        x (Tensor): ``[N, C, D, H, W]`` or ``[N, D, H, W, C]``.
        weight (Tensor): ``[C, O/groups, kd, kh, kw]``.
        bias (Tensor, optional): ``[O]``.
        stride, padding, output_padding, dilation, groups, output_size: as in
            :func:`conv2d_transpose`.
        data_format (str): 'NCDHW' or 'NDHWC'.
        name (str, optional): unused.

    Returns:
        Tensor: ``[N, O, D_out, H_out, W_out]``.
    """
    return _conv_transpose_nd("conv3d_transpose", 3, x, weight, bias, stride, padding,
                              output_padding, dilation, groups, output_size, data_format)


# --------------------------------------------------------------------------- fold / unfold
def _unfold_kernel(x, ksize, stride, pads, dil):
    K = _kernels.for_array(x)
    n, c = x.shape[:2]
    size = x.shape[2:]
    osz = _out_size(size, ksize, stride, pads, dil)
    cols = K.windows(K.pad(x, pads), ksize, stride, dil, osz, "nk")
    # [N, C, *out, *k] -> [N, C, *k, *out] -> [N, C*prod(k), L] (one copy)
    out = K.xp.ascontiguousarray(cols.transpose(0, 1, 4, 5, 2, 3))
    out = out.reshape(n, c * math.prod(ksize), -1)

    def bw(g):
        psz = tuple(s + lo + hi for s, (lo, hi) in zip(size, pads))
        g6 = g.reshape(n, c, *ksize, -1).transpose(1, 2, 3, 0, 4).reshape(
            c, *ksize, n, *osz)
        acc = K.col2im(g6, (n, c, *psz), ksize, stride, dil, osz)
        return (K.xp.ascontiguousarray(K.crop(acc, pads, size)),)

    return out, bw


def _fold_kernel(x, size, ksize, stride, pads, dil):
    K = _kernels.for_array(x)
    n, ck, _ = x.shape
    c = ck // math.prod(ksize)
    osz = _out_size(size, ksize, stride, pads, dil)
    psz = tuple(s + lo + hi for s, (lo, hi) in zip(size, pads))
    g6 = x.reshape(n, c, *ksize, *osz).transpose(1, 2, 3, 0, 4, 5)
    out = K.xp.ascontiguousarray(K.crop(K.col2im(g6, (n, c, *psz), ksize, stride, dil, osz),
                                        pads, size))

    def bw(g):
        cols = K.windows(K.pad(g, pads), ksize, stride, dil, osz, "nk")
        return (K.xp.ascontiguousarray(cols.transpose(0, 1, 4, 5, 2, 3)).reshape(x.shape),)

    return out, bw


def _unfold_hi(inputs, grads, ksize, stride, pads, dil):
    x = inputs[0]
    return (apply(_fold_kernel, grads[0], size=tuple(x.shape[2:]), ksize=ksize, stride=stride,
                  pads=pads, dil=dil),)


def _fold_hi(inputs, grads, size, ksize, stride, pads, dil):
    return (apply(_unfold_kernel, grads[0], ksize=ksize, stride=stride, pads=pads, dil=dil),)


_unfold_kernel.op_name = "unfold"
_unfold_kernel.saves = ()
_unfold_kernel.hi = _unfold_hi
_fold_kernel.op_name = "fold"
_fold_kernel.saves = ()
_fold_kernel.hi = _fold_hi


def _fold_pads(paddings, op):
    if isinstance(paddings, (list, tuple)) and len(paddings) not in (2, 4):
        raise ValueError(f"{op}: paddings should either be an integer or a list/tuple of 2 or 4 "
                         f"integers, got {list(paddings)}")
    # Paddle's 4-value form is [top, left, bottom, right]
    return parse_padding(paddings, 2, False, op, order="lohi")


def unfold(x, kernel_sizes, strides=1, paddings=0, dilations=1, name=None):
    """Extract sliding blocks (im2col): ``[N, C, H, W] -> [N, C*kh*kw, L]``.

    Args:
        x (Tensor): ``[N, C, H, W]``.
        kernel_sizes (int|list): ``[kh, kw]``.
        strides (int|list): ``[sh, sw]``.
        paddings (int|list): an int, ``[ph, pw]`` or ``[top, left, bottom, right]``.
        dilations (int|list): ``[dh, dw]``.
        name (str, optional): unused.

    Returns:
        Tensor: ``[N, C*kh*kw, L]`` where L is the number of blocks (row-major over the output
        grid); row ``c*kh*kw + i*kw + j`` holds kernel tap (i, j) of channel c.

    Example:
        >>> F.unfold(paddle.ones([1, 2, 4, 4]), 2, strides=2).shape
        [1, 8, 4]
    """
    op = "unfold"
    x = float_input(x, op)
    if x.ndim != 4:
        raise ValueError(f"{op}: input should be the format of [N, C, H, W], got shape {x.shape}")
    ksize = ntuple(kernel_sizes, 2, op, "kernel_sizes")
    stride = ntuple(strides, 2, op, "strides")
    dil = ntuple(dilations, 2, op, "dilations")
    pads = _fold_pads(paddings, op)
    if isinstance(pads, str):
        raise ValueError(f"{op}: paddings must be ints, got {paddings!r}")
    osz = _out_size(x.shape[2:], ksize, stride, pads, dil)
    if any(o <= 0 for o in osz):
        raise ValueError(f"{op}: no block fits: input {x.shape}, kernel_sizes {list(ksize)}, "
                         f"strides {list(stride)}, paddings {paddings}, dilations {list(dil)}")
    return apply(_unfold_kernel, x, ksize=ksize, stride=stride, pads=pads, dil=dil)


def fold(x, output_sizes, kernel_sizes, strides=1, paddings=0, dilations=1, name=None):
    """Combine sliding blocks into an image, summing overlaps (col2im): the adjoint of unfold.

    Args:
        x (Tensor): ``[N, C*kh*kw, L]``.
        output_sizes (int|list): ``[H, W]`` of the result.
        kernel_sizes (int|list): ``[kh, kw]``.
        strides (int|list): ``[sh, sw]``.
        paddings (int|list): an int, ``[ph, pw]`` or ``[top, left, bottom, right]``.
        dilations (int|list): ``[dh, dw]``.
        name (str, optional): unused.

    Returns:
        Tensor: ``[N, C, H, W]``.

    Example:
        >>> F.fold(paddle.ones([1, 8, 4]), [4, 4], 2, strides=2).shape
        [1, 2, 4, 4]
    """
    op = "fold"
    x = float_input(x, op)
    if x.ndim != 3:
        raise ValueError(f"{op}: input should be a 3-D tensor [N, C*kh*kw, L], got shape "
                         f"{x.shape}")
    size = ntuple(output_sizes, 2, op, "output_sizes")
    ksize = ntuple(kernel_sizes, 2, op, "kernel_sizes")
    stride = ntuple(strides, 2, op, "strides")
    dil = ntuple(dilations, 2, op, "dilations")
    pads = _fold_pads(paddings, op)
    if isinstance(pads, str):
        raise ValueError(f"{op}: paddings must be ints, got {paddings!r}")
    kk = math.prod(ksize)
    if x.shape[1] % kk:
        raise ValueError(f"{op}: expected size of input's dimension 1 ({x.shape[1]}, shape "
                         f"{x.shape}) to be divisible by the product of kernel_sizes "
                         f"{list(ksize)} = {kk}")
    osz = _out_size(size, ksize, stride, pads, dil)
    if any(o <= 0 for o in osz) or math.prod(osz) != x.shape[2]:
        raise ValueError(f"{op}: output_sizes {list(size)}, kernel_sizes {list(ksize)}, strides "
                         f"{list(stride)}, paddings {paddings}, dilations {list(dil)} give "
                         f"{osz[0]} * {osz[1]} = {math.prod(osz)} blocks, but input's dimension "
                         f"2 is {x.shape[2]} (shape {x.shape})")
    return apply(_fold_kernel, x, size=size, ksize=ksize, stride=stride, pads=pads, dil=dil)
