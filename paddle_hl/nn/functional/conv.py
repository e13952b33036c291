"""Convolutions (1-D/2-D/3-D, transposed) and fold/unfold, as im2col + one GEMM per layer.

Three array kernels carry everything, and they are closed under differentiation, which gives
``create_graph=True`` for free:

- ``C(x, w)``: the convolution.           grads: dx = T(g, w),  dw = W(x, g)
- ``T(g, w)``: its adjoint in x (the transposed convolution).
                                           grads: dg = C(h, w),  dw = W(h, g)
- ``W(x, g)``: its adjoint in w (the weight gradient).
                                           grads: dx = T(g, h),  dg = C(x, h)

The array algorithms behind them (im2col + one GEMM per layer, col2im, the depthwise
taps, the direct and batch-innermost forms) are shared by every backend and live in
``paddle_hl/backend/windows.py``; which of them a layer runs is its plan
(``backend/plans.py``: chosen once per geometry, readable as ``plan.label``). This module wraps
the plans into differentiable ops with their backward and higher-order rules, and parses the
Paddle arguments.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ...backend import get_array_module
from ...backend import plans as _plans
from ...backend import windows as _win
from ...framework import dtype as _dt
from ...framework import state
from ...framework.engine import GRAD
from ...framework.op import apply, op
from ...framework.tensor import Tensor
from ...tensor._helpers import tensor_arg

__all__ = []

_FORMATS = {1: ("NCL", "NLC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}
_LOW = (np.dtype(np.float16), _dt.BFLOAT16_NP)


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
        return get_array_module(g).ascontiguousarray(g)
    return g


def _bias_grad(g, cl):
    # the batch axis first: one vectorised pass, then short per-channel reductions (NumPy's
    # multi-axis reduction loops over the short spatial rows and is several times slower)
    g = g.sum(axis=0)
    axes = tuple(range(g.ndim - 1)) if cl else tuple(range(1, g.ndim))
    return g.sum(axis=axes) if axes else g


# --------------------------------------------------------------------------- kernels
# Each kernel runs its plan and hands the plan, with what its forward made, to its one gradient
# rule as residuals (GRAD.save). On arrays the rule runs the plan's adjoints on them (the
# trimmed weight, the kept im2col columns, the batch-innermost backward that serves both
# gradients from one copy of g); under create_graph the same rule writes the gradient with the
# other two kernels (the C/T/W closure of the module docstring), so it is differentiable again.
def _conv_kernel(x, w, b, stride, pads, dil, groups, cl, need):
    (x, w, b), low = _up(x, w, b)
    xl = _win.to_cf(x, cl)
    plan = _plans.plan_conv(xl, w, stride, pads, dil, groups, cl, train=any(need))
    # the columns are kept only for the weight gradient
    out, wk, cols = plan.forward(xl, w, b, keep=need[1])
    return _down(out, low), GRAD.save(plan, xl, w, wk, cols, low)


def _conv_grad(M, x, w, b, out, saved, g, stride, pads, dil, groups, cl, need):
    """C's gradient: ``(T(g, w), W(x, g), bias sum)``."""
    if M.tensor:
        a = dict(stride=stride, pads=pads, dil=dil, groups=groups, cl=cl)
        gx = M.op(_convt_kernel, g, w, None, size=_spatial(x, cl), need=_need(g, w, None),
                  **a) if _live(x) else None
        gw = M.op(_convw_kernel, x, g, ksize=tuple(w.shape[2:]), need=_need(x, g),
                  **a) if _live(w) else None
        return gx, gw, (_bias_grad_t(g, cl) if _live(b) else None)
    plan, xl, wu, wk, cols, low = saved
    g = _dense(g, low)
    gx, gw = plan.backward(xl, _win.to_cf(g, cl), wu, wk, cols, need)
    gb = _bias_grad(g, cl) if need[2] and b is not None else None
    return _down(gx, low), _down(gw, low), _down(gb, low)


def _base_plan(xl, w, stride, pads, dil, groups, cl, op):
    return _plans.plan_conv(xl, w, stride, pads, dil, groups, cl, fused=False,
                            op=f"conv{xl.ndim - 2}d{op}")


def _convt_kernel(x, w, b, stride, pads, dil, groups, cl, size, need):
    (x, w, b), low = _up(x, w, b)
    xl = _win.to_cf(x, cl)
    # the plan of the convolution this one is the adjoint of (its input has the output's size)
    n = xl.shape[0]
    plan = _base_plan(_shape_only(xl, (n, w.shape[1] * groups, *size)), w, stride, pads, dil,
                      groups, cl, "_transpose")
    out = _win.from_cf(plan.data_grad(xl, w), cl, b)
    return _down(out, low), GRAD.save(plan, xl, w, low)


def _convt_grad(M, x, w, b, out, saved, g, stride, pads, dil, groups, cl, size, need):
    """T's gradient: ``(C(g, w), W(g, x), bias sum)``."""
    if M.tensor:
        a = dict(stride=stride, pads=pads, dil=dil, groups=groups, cl=cl)
        gx = M.op(_conv_kernel, g, w, None, need=_need(g, w, None), **a) if _live(x) else None
        gw = M.op(_convw_kernel, g, x, ksize=tuple(w.shape[2:]), need=_need(g, x),
                  **a) if _live(w) else None
        return gx, gw, (_bias_grad_t(g, cl) if _live(b) else None)
    plan, xl, wu, low = saved
    g = _dense(g, low)
    gl = _win.to_cf(g, cl)
    gx = gw = gb = None
    if need[0]:
        gx = _win.from_cf(plan.base_forward(gl, wu)[0], cl)
    if need[1]:
        gw = plan.filter_grad(gl, xl)
    if need[2] and b is not None:
        gb = _bias_grad(g, cl)
    return _down(gx, low), _down(gw, low), _down(gb, low)


def _convw_kernel(x, g, stride, pads, dil, groups, cl, ksize, need):
    (x, g), low = _up(x, g)
    xl, gl = _win.to_cf(x, cl), _win.to_cf(g, cl)
    plan = _base_plan(xl, _shape_only(gl, (gl.shape[1], xl.shape[1] // groups, *ksize)), stride,
                      pads, dil, groups, cl, "_filter_grad")
    return _down(plan.filter_grad(xl, gl), low), GRAD.save(plan, xl, gl, low)


def _convw_grad(M, x, g, out, saved, h, stride, pads, dil, groups, cl, ksize, need):
    """W's gradient: ``(T(g, h), C(x, h))``."""
    if M.tensor:
        a = dict(stride=stride, pads=pads, dil=dil, groups=groups, cl=cl)
        gx = M.op(_convt_kernel, g, h, None, size=_spatial(x, cl), need=_need(g, h, None),
                  **a) if _live(x) else None
        gg = M.op(_conv_kernel, x, h, None, need=_need(x, h, None), **a) if _live(g) else None
        return gx, gg
    plan, xl, gl, low = saved
    h = _dense(h, low)
    gx = gg = None
    if need[0]:
        gx = _win.from_cf(plan.data_grad(gl, h), cl)
    if need[1]:
        gg = _win.from_cf(plan.base_forward(xl, h)[0], cl)
    return _down(gx, low), _down(gg, low)


def _shape_only(a, shape):
    """A stand-in of ``a``'s dtype and backend with ``shape``, for a plan's geometry (its
    values are never read)."""
    mod = get_array_module(a)
    return mod.broadcast_to(mod.zeros((), dtype=a.dtype), shape)


def _need(*ts):
    # under no_grad nothing is recorded, so no gradient can be asked for later
    if not state.tls.grad_enabled:
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


def _live(t):
    return isinstance(t, Tensor) and not t.stop_gradient


def _bias_grad_t(g, cl):
    axes = list(range(g.ndim - 1)) if cl else [0] + list(range(2, g.ndim))
    return g.sum(axis=axes)


op("conv", grad=_conv_grad, residuals=True)(_conv_kernel)
op("conv_transpose", grad=_convt_grad, residuals=True)(_convt_kernel)
op("conv_filter_grad", grad=_convw_grad, residuals=True)(_convw_kernel)
_plans.LABELLED.update((_conv_kernel, _convt_kernel, _convw_kernel))


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
    osz = _win.conv_out_size(size, ksize, stride, pads, dil)
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
    xp = get_array_module(x)
    n, c = x.shape[:2]
    size = x.shape[2:]
    osz = _win.conv_out_size(size, ksize, stride, pads, dil)
    cols = _win.windows(_win.pad(x, pads), ksize, stride, dil, osz, "nk")
    # [N, C, *out, *k] -> [N, C, *k, *out] -> [N, C*prod(k), L] (one copy)
    out = xp.ascontiguousarray(cols.transpose(0, 1, 4, 5, 2, 3))
    return out.reshape(n, c * math.prod(ksize), -1), GRAD.save(tuple(size))


# unfold and fold are linear, each the other's transpose: that is their gradient rule
def _unfold_grad(M, x, out, saved, g, ksize, stride, pads, dil):
    return (M.op(_fold_kernel, g, size=saved[0], ksize=ksize, stride=stride, pads=pads,
                 dil=dil),)


def _fold_kernel(x, size, ksize, stride, pads, dil):
    xp = get_array_module(x)
    n, ck, _ = x.shape
    c = ck // math.prod(ksize)
    osz = _win.conv_out_size(size, ksize, stride, pads, dil)
    psz = tuple(s + lo + hi for s, (lo, hi) in zip(size, pads))
    g6 = x.reshape(n, c, *ksize, *osz).transpose(1, 2, 3, 0, 4, 5)
    acc = _win.col2im(g6, (n, c, *psz), ksize, stride, dil, osz)
    return xp.ascontiguousarray(_win.crop(acc, pads, size)), GRAD


def _fold_grad(M, x, out, g, size, ksize, stride, pads, dil):
    return (M.op(_unfold_kernel, g, ksize=ksize, stride=stride, pads=pads, dil=dil),)


op("unfold", saves=(), grad=_unfold_grad, residuals=True)(_unfold_kernel)
op("fold", saves=(), grad=_fold_grad)(_fold_kernel)


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
    osz = _win.conv_out_size(x.shape[2:], ksize, stride, pads, dil)
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
    osz = _win.conv_out_size(size, ksize, stride, pads, dil)
    if any(o <= 0 for o in osz) or math.prod(osz) != x.shape[2]:
        raise ValueError(f"{op}: output_sizes {list(size)}, kernel_sizes {list(ksize)}, strides "
                         f"{list(stride)}, paddings {paddings}, dilations {list(dil)} give "
                         f"{osz[0]} * {osz[1]} = {math.prod(osz)} blocks, but input's dimension "
                         f"2 is {x.shape[2]} (shape {x.shape})")
    return apply(_fold_kernel, x, size=size, ksize=ksize, stride=stride, pads=pads, dil=dil)
