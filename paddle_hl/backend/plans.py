"""Plans: which algorithm runs a convolution or a pooling window, chosen once per geometry.

A convolution or fixed-window pool asks :func:`plan_conv` / :func:`plan_pool` for the plan of
its geometry (shapes, stride, padding, dilation, groups, layout, dtype, whether a gradient is
wanted, whether compiled kernels are in use) and calls its methods; the plan owns the forward
and both adjoints, so the kernels of ``nn/functional/conv.py`` and ``pooling.py`` hold no
algorithm choice of their own. Plans are made once per geometry and cached (a network runs the
same few geometries every step: one dict lookup per call), frozen, and readable:
``plan.label`` says what runs, e.g. ``conv2d nin 3x3 s1 trim->2x2`` or
``max_pool2d compiled 3x3 s2``; the profiler puts it on the op's event and
``paddle.nn.utils.explain`` lists it per layer.

Convolution kinds (``ConvPlan.kind``), chosen in this order:

- ``direct``: thin 2-D layers as the backend's direct compiled kernels (``windows.use_direct``);
- ``winograd``: a 3x3 stride-1 layer when no gradient is wanted, by Winograd's F(2x2, 3x3)
  (``backend/winograd.py``: 16/36 of im2col's multiplications), where ``winograd.wins`` says it
  was measured faster (with NumPy's transforms only on one thread); CPU only; values that are
  not all finite run the im2col form;
- ``nin``: im2col in the batch-innermost layout (``windows.use_nin``);
- ``pointwise``: a 1x1 layer as a batched GEMM on x itself (``windows.is_pointwise``);
  ``nhwc`` when x is channels last in memory: one GEMM on its ``[N*L, C]`` rows, whatever the
  plane size, the result channels last too;
- ``depthwise``: a multiply-add per tap (``windows.is_depthwise``); ``detail`` names the form
  the backend runs (NumPy: ``channels-last``, ``phase-planes`` or ``blocked``);
- ``im2col``: im2col + one GEMM per group; ``flat`` when the input gradient runs col2im on
  flattened padded planes (``windows.flat_ratio``).

Before that, kernel taps that only read padding are dropped (``trim``: ``windows.trim_taps``).
The kinds other than ``direct``, ``winograd`` and ``nin`` are the *base* forms: the transposed
convolution and the weight-gradient op, and the fallbacks of the direct and Winograd forms, run
those.

Memory layout. A channel-first network may keep channels last in memory from a layer on
(``ConvPlan.keep``): a depthwise layer that runs ``channels-last`` leaves its result there
instead of copying it back, and a 1x1 layer whose input is there (``nhwc``) does too; batch
norm, the activations and the residual adds follow the layout they are given. A network such
as MobileNetV2 thus runs its small planes channels last from the first such depthwise layer
on, with no transposing copy between its layers. The arrays stay logical ``[N, C, *S]``; only
their strides say where the channels are.

The thresholds behind every choice are entries of ``backend/tuning.py``.
"""

from __future__ import annotations

import dataclasses
import functools
import threading

import numpy as np

from . import compiled_kernels, for_array, kernel, settings, tuning
from . import windows as W
from . import winograd as WG

__all__ = []

_CONV = {}
_POOL = {}
_CACHE_MAX = tuning.value("conv.plan_cache")
_local = threading.local()
#: the kernels whose profiler events carry the plan label (registered by the op modules)
LABELLED = set()


def note(label):
    """Remember the plan label of the op running on this thread (read by the profiler)."""
    _local.label = label


def take_label():
    """The label :func:`note` left on this thread (None if none), cleared."""
    d = _local.__dict__
    return d.pop("label", None)


def _ks(ksize):
    return "x".join(map(str, ksize))


def _dims(prefix, v, default):
    if all(e == default for e in v):
        return ""
    return f" {prefix}{v[0]}" if len(set(v)) == 1 else f" {prefix}{_ks(v)}"


@dataclasses.dataclass(frozen=True)
class ConvPlan:
    """How one convolution geometry runs (see the module docstring for the kinds).

    Arrays are logical channel-first ``[N, C, *S]`` views (``windows.to_cf``); ``cl`` says the
    caller's layout, which a result is materialised in; ``mem``: the input is channels last
    in memory (``windows.in_cl_memory``); ``keep``: for a channel-first caller, the result
    stays channels last in memory (a logical view, see the module docstring).
    """

    op: str
    kind: str
    base: str
    detail: str
    flat: bool
    trim: tuple | None
    ksize: tuple
    kk: tuple
    size: tuple
    osz: tuple
    stride: tuple
    pads: tuple
    dil: tuple
    groups: int
    cl: bool
    train: bool
    mem: bool = False
    keep: bool = False

    @functools.cached_property
    def label(self):
        """A readable name of what runs, e.g. ``conv2d nin 3x3 s1 trim->2x2`` (``flat``: the
        input gradient's GEMM form runs col2im on flat planes; shown where a gradient may be
        wanted)."""
        kind = f"{self.kind} {self.detail}" if self.detail else self.kind
        s = f"{self.op} {kind} {_ks(self.ksize)}{_dims('s', self.stride, 0)}"
        s += _dims("d", self.dil, 1)
        if self.groups > 1:
            s += f" g{self.groups}"
        if self.trim is not None:
            s += f" trim->{_ks(self.kk)}"
        if self.flat and self.train and self.kind != "nin":
            s += " flat"
        return s + (" cl" if self.cl else "") + (" keeps-cl" if self.keep else "")

    def __repr__(self):
        return f"ConvPlan({self.label})"

    def _out(self, y, b=None):
        """The forward's result ``y`` (logical) in the caller's layout, or kept channels last
        (``keep``), with the bias added."""
        return W.keep_cl(y, b) if self.keep else W.from_cf(y, self.cl, b)

    # ---------------------------------------------------------------- the convolution
    def forward(self, xl, w, b=None, keep=False):
        """C: ``(out, wk, cols)``: the output in the caller's layout with the bias added, the
        weight with the trimmed taps dropped (``w`` itself when none are), and the im2col
        columns to keep for the weight gradient (``keep``; None when not kept or not made)."""
        note(self.label)
        wk = w if self.trim is None else W.take_taps(w, self.trim[0])
        kind = self.kind
        if kind == "direct":  # the kernel adds the bias
            y = W.conv_forward_direct(xl, wk, self.pads, self.osz, b)
            return W.from_cf(y, self.cl), wk, None
        if kind == "winograd":
            return self._winograd(xl, wk, b), wk, None
        if kind == "nin":
            y, cols = W.conv_forward_nin(xl, wk, self.stride, self.pads, self.dil, self.groups,
                                         self.osz)
        else:
            y, cols = self.base_forward(xl, wk)
            if cols is not None and cols.nbytes > W._KEEP_COLS:
                cols = None
        return self._out(y, b), wk, cols if keep else None

    def _winograd(self, xl, w, b):
        """The ``winograd`` forward in the caller's layout, bias added. The weight is
        transformed on every call: the kernel sees arrays, whose in-place changes (an
        optimizer step, ``set_value``) it cannot tell, and the thresholds count that cost."""
        u = WG.weight_transform(w)
        if u is not None:
            n, k = xl.shape[0], w.shape[0]
            if self.cl:
                res = np.empty((n, *self.osz, k), xl.dtype)
                out = W.to_cf(res, True)
            else:
                res = out = np.empty((n, k, *self.osz), xl.dtype)
            if WG.conv3x3_forward(xl, u, self.pads, b, out=out) is not None:
                return res
        # values that are not all finite: im2col keeps them in the windows that read them
        y, _ = self.base_forward(xl, w)
        return self._out(y, b)

    def backward(self, xl, gl, w, wk, cols, need):
        """The input and weight gradients of :meth:`forward` for the output gradient ``gl``
        (logical): ``(gx in the caller's layout or None, gw of w's shape or None)``."""
        note(self.label)
        gx = gw = None
        if self.kind == "nin":
            gx, gw = W.conv_backward_nin(xl, gl, wk, self.stride, self.pads, self.dil,
                                         self.groups, self.osz, cols, need)
        else:
            if self.kind == "direct":
                # None where the direct kernels do not apply (non-finite values): the GEMMs
                if need[0]:
                    gx = W.conv_data_grad_direct(gl, wk, self.size, self.pads)
                if need[1]:
                    gw = W.conv_filter_grad_direct(xl, gl, self.kk, self.pads)
            gcols = None
            if need[1] and gw is None and self.base == "im2col":
                gcols = W.g_cols(gl, self.groups)
            if need[0] and gx is None:
                gx = self.data_grad(gl, wk, gcols)
            if need[1] and gw is None:
                gw = self.filter_grad(xl, gl, gcols, cols)
        if gx is not None:
            # the input's layout: channels last where the input was
            gx = W.keep_cl(gx) if self.mem and not self.cl else W.from_cf(gx, self.cl)
        if gw is not None and self.trim is not None:
            gw = W.put_taps(gw, w.shape, self.trim[0])
        return gx, gw

    # ---------------------------------------------------------------- the base forms
    def base_forward(self, xl, w):
        """C by the base form: ``(y logical, im2col columns or None)``."""
        base = self.base
        if base == "pointwise":
            if self.detail == "nhwc":
                return W.pointwise_forward_cl(xl, w, self.stride, self.osz), None
            return W.pointwise_forward(xl, w, self.stride, self.osz), None
        if base == "depthwise":
            # the kernel pads as it goes (NumPy: block by block, in cache)
            return W.depthwise_forward(xl, w, self.stride, self.dil, self.osz, self.pads,
                                       out_cl=self.cl or self.keep), None
        return W.im2col_forward(xl, w, self.stride, self.pads, self.dil, self.groups, self.osz)

    def data_grad(self, gl, w, gcols=None):
        """T, the adjoint in the input, by the base form: logical ``[N, C, *size]``."""
        base = self.base
        if base == "pointwise":
            if self.detail == "nhwc":
                return W.pointwise_data_grad_cl(gl, w, self.size, self.stride)
            return W.pointwise_data_grad(gl, w, self.size, self.stride)
        if base == "depthwise":
            psz = tuple(s + lo + hi for s, (lo, hi) in zip(self.size, self.pads))
            return W.depthwise_input_grad(gl, w, (gl.shape[0], w.shape[1] * self.groups, *psz),
                                          self.stride, self.dil, self.pads,
                                          out_cl=self.cl or self.mem)
        return W.im2col_data_grad(gl, w, self.size, self.stride, self.pads, self.dil,
                                  self.groups, self.flat, gcols)

    def filter_grad(self, xl, gl, gcols=None, cols=None):
        """W, the adjoint in the weight, by the base form (of the kept taps' shape)."""
        base = self.base
        if base == "pointwise":
            if self.detail == "nhwc":
                return W.pointwise_filter_grad_cl(xl, gl, self.kk, self.stride)
            return W.pointwise_filter_grad(xl, gl, self.kk, self.stride)
        if base == "depthwise":
            return W.depthwise_weight_grad(xl, gl, self.kk, self.stride, self.dil, self.pads,
                                           cl=self.cl or self.mem or self.keep)
        return W.im2col_filter_grad(xl, gl, self.kk, self.stride, self.pads, self.dil,
                                    self.groups, gcols, cols)


def _key(v):
    return tuple(_key(e) if isinstance(e, (list, tuple)) else e for e in v)


def plan_conv(xl, w, stride, pads, dil, groups, cl, train=True, fused=True, op=None):
    """The :class:`ConvPlan` of convolving ``xl`` (logical ``[N, C, *S]``) with ``w``
    (``[O, C/groups, *k]``), made once per geometry.

    Args:
        xl, w: the arrays (their shapes, dtypes and backend are the geometry).
        stride, pads, dil, groups: as the convolution's (``pads``: ``(lo, hi)`` per dim).
        cl: the caller's layout is channels last.
        train: a gradient may be asked for (the batch-innermost layout weighs its backward).
        fused: consider the trimmed taps and the direct and batch-innermost forms (the
            convolution op); False: the base forms only (the transposed convolution and the
            weight-gradient op).
        op: the name in the label (default ``conv{nd}d``).
    """
    mem = fused and W.in_cl_memory(xl)
    key = (xl.shape, w.shape, stride, pads, dil, groups, cl, mem, xl.dtype, w.dtype, train, fused,
           op, for_array(xl).name, compiled_kernels(xl), W._NIN_MIN_BATCH,
           W._NIN_FWD_MAX_PLANE, W._DIRECT_MAX_TAPS, W._POINTWISE_MIN, W._WIDE_MAX,
           WG._MIN_TILES, WG._MIN_CHANNELS, WG._MIN_WORK, settings.num_threads())
    try:
        plan = _CONV.get(key)
    except TypeError:  # list arguments
        key = _key(key[:6]) + key[6:]
        plan = _CONV.get(key)
    if plan is None:
        plan = _make_conv(xl, w, _key(stride), _key(pads), _key(dil), groups, cl, train, fused,
                          op, mem)
        if len(_CONV) >= _CACHE_MAX:
            _CONV.clear()
        _CONV[key] = plan
    return plan


def _make_conv(xl, w, stride, pads, dil, groups, cl, train, fused, op, mem=False):
    nd = xl.ndim - 2
    size = tuple(xl.shape[2:])
    ksize = tuple(w.shape[2:])
    osz = W.conv_out_size(size, ksize, stride, pads, dil)
    trim, kk, kpads, kind = None, ksize, pads, None
    if fused:
        trim = W.trim_taps(ksize, size, osz, stride, pads, dil)
        if trim is not None:
            kpads = trim[1]
            kk = tuple(len(range(*t.indices(k))) for t, k in zip(trim[0], ksize))
        wk = w if trim is None else _shaped(w, kk)
        if W.use_direct(xl, wk, stride, dil, groups, osz):
            kind = "direct"
        elif not train and trim is None and _use_winograd(xl, w, stride, pads, dil, groups):
            kind = "winograd"
        elif W.use_nin(xl.shape, (w.shape[0], w.shape[1], *kk), kpads, groups, osz, stride,
                       train=train):
            kind = "nin"
    flat, detail = False, ""
    if (mem or cl) and fused and W.is_1x1(kk, kpads, groups):
        base, kind, detail = "pointwise", None, "nhwc"
    elif W.is_pointwise(kk, kpads, groups, osz):
        base = "pointwise"
    elif W.is_depthwise(xl.shape[1], groups):
        base = "depthwise"
    else:
        base = "im2col"
    if base == "im2col":
        psz = tuple(s + lo + hi for s, (lo, hi) in zip(size, kpads))
        ratio = W.flat_ratio(osz, psz, stride)
        flat = ratio is not None and ratio < W._WIDE_MAX
    elif base == "depthwise" and kind is None:
        method = kernel(xl, "depthwise_method")
        if method is not None and xl.size:
            detail = method(xl, w, stride, osz, cl or mem)
    # a channel-first caller's result stays channels last after a layer that computes it
    # there (see the module docstring)
    keep = fused and not cl and detail in ("nhwc", "channels-last")
    return ConvPlan(op=op or f"conv{nd}d", kind=kind or base, base=base, detail=detail,
                    flat=flat, trim=trim, ksize=ksize, kk=kk,
                    size=size, osz=osz, stride=stride, pads=kpads, dil=dil, groups=groups,
                    cl=cl, train=train, mem=bool(mem), keep=bool(keep))


def _use_winograd(xl, w, stride, pads, dil, groups):
    """Whether an inference convolution runs as Winograd: the geometry it computes, on the
    CPU, where it was measured faster (``winograd.wins``)."""
    return (type(xl) is np.ndarray and WG.applies(xl.shape, w.shape, stride, pads, dil, groups)
            and WG.wins(xl.shape, w.shape, pads, xl.dtype, compiled_kernels(xl),
                        settings.num_threads()))


def _shaped(w, kk):
    """A read-only stand-in of ``w`` with kernel dims ``kk`` (only its shape and dtype are
    read by the choices)."""
    return for_array(w).as_strided(w, (*w.shape[:2], *kk), w.strides)


# ---------------------------------------------------------------------------- pooling
@dataclasses.dataclass(frozen=True)
class PoolPlan:
    """How one fixed-window pool runs: ``kind`` "max" or "avg"; ``compiled``: the backend's
    compiled kernel (2-D max pools with the numba extra) instead of NumPy's pass per window
    offset. Arrays are logical channel-first; ``ext`` is the padding applied."""

    op: str
    kind: str
    compiled: bool
    ksize: tuple
    stride: tuple
    ext: tuple
    osz: tuple
    cl: bool

    @functools.cached_property
    def label(self):
        """A readable name of what runs, e.g. ``max_pool2d compiled 3x3 s2``."""
        how = "compiled" if self.compiled else "windows"
        s = f"{self.op} {how} {_ks(self.ksize)}{_dims('s', self.stride, 0)}"
        return s + (" cl" if self.cl else "")

    def __repr__(self):
        return f"PoolPlan({self.label})"

    def max(self, xpad, want_arg=True):
        """``(out, arg)`` of the max pool of the padded ``xpad`` (``windows.max_pool``)."""
        note(self.label)
        return W.max_pool(xpad, self.ksize, self.stride, self.osz, want_arg, self.compiled)

    def max_grad(self, g, arg, padded_shape):
        """The max pool's input gradient (padded), ``windows.max_pool_grad``."""
        note(self.label)
        return W.max_pool_grad(g, arg, padded_shape, self.ksize, self.stride, self.compiled)

    def sum(self, xpad):
        """The window sums of the padded ``xpad`` (``windows.sum_pool``)."""
        note(self.label)
        return W.sum_pool(xpad, self.ksize, self.stride, self.osz)


def plan_pool(kind, xpad, ksize, stride, ext, cl):
    """The :class:`PoolPlan` of pooling the padded ``xpad`` (logical ``[N, C, *Sp]``) with
    windows ``ksize`` at ``stride`` (``ext``: the padding applied), made once per geometry."""
    key = (kind, xpad.shape, xpad.dtype, ksize, stride, ext, cl, for_array(xpad).name,
           compiled_kernels(xpad))
    plan = _POOL.get(key)
    if plan is None:
        nd = len(ksize)
        osz = tuple((n - k) // s + 1 for n, k, s in zip(xpad.shape[2:], ksize, stride))
        compiled = (kind == "max" and nd == 2 and xpad.dtype.char in "fd"
                    and kernel(xpad, "max_pool2d") is not None and key[-1])
        plan = PoolPlan(op=f"{kind}_pool{nd}d", kind=kind, compiled=bool(compiled),
                        ksize=tuple(ksize), stride=tuple(stride), ext=tuple(ext), osz=osz,
                        cl=cl)
        if len(_POOL) >= _CACHE_MAX:
            _POOL.clear()
        _POOL[key] = plan
    return plan


def clear():
    """Forget every plan (after changing a threshold of ``backend/tuning.py`` at run time)."""
    _CONV.clear()
    _POOL.clear()
