"""Pooling: max/avg pool 1-D/2-D/3-D, adaptive pools, and max-unpool.

Fixed-window pools run on strided views of the padded input, one vectorised pass per kernel
offset (``max_pool`` / ``sum_pool`` of ``backend/windows.py``, which holds the window
algorithms); the max pools remember the winning offset (a small int) instead of the input, so
backward never re-reads the activations. Adaptive average pooling is
separable: it is one small averaging matrix per spatial dim, applied as GEMMs. Adaptive max
pooling gathers its (possibly overlapping) windows with index arrays and reduces them in one
``argmax``. Shapes, tie rules (first maximum), ceil_mode windows and divisors follow Paddle 2.6.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ...backend import get_array_module
from ...backend import plans as _plans
from ...backend import windows as _win
from ...backend.arrays import up as _up
from ...framework.engine import GRAD
from ...framework.op import apply, op
from ...framework.tensor import Tensor
from ...tensor._helpers import tensor_arg
from .conv import (
    _int,
    check_format,
    float_input,
    ntuple,
    parse_padding,
    same_pads,
)

__all__ = []

_LOW = ("float16", "bfloat16")


def _cdiv(a, b):
    """C-style (truncating) integer division, as Paddle's output-size formula uses."""
    return a // b if a >= 0 else -((-a) // b)


# --------------------------------------------------------------------------- argument parsing
def _pool_args(op, nd, x, kernel_size, stride, padding, ceil_mode, data_format):
    """Check the arguments and work out the geometry of a fixed-window pool.

    Returns ``(x, ksize, stride, pads, ext, osz, cl)``: ``pads`` is the declared padding and
    ``ext`` the padding actually applied (the declared one, extended on the high side so that
    ceil_mode windows and Paddle's truncated sizes stay inside the array).
    """
    x = float_input(x, op)
    if x.ndim != nd + 2:
        raise ValueError(f"{op}: the input should be a {nd + 2}-D tensor, but received a "
                         f"{x.ndim}-D tensor of shape {x.shape}")
    cl = check_format(data_format, nd, op)
    ksize = ntuple(kernel_size, nd, op, "kernel_size")
    stride = ksize if stride is None else ntuple(stride, nd, op, "stride")
    size = tuple(x.shape[1:-1] if cl else x.shape[2:])
    pads = parse_padding(padding, nd, cl, op)
    if pads == "valid":
        if ceil_mode:
            raise ValueError(f"{op}: when padding is 'VALID', ceil_mode must be False, got "
                             f"ceil_mode={ceil_mode}")
        pads = ((0, 0),) * nd
    elif pads == "same":
        pads = same_pads(size, ksize, stride)
    osz = []
    for n, k, s, (lo, hi) in zip(size, ksize, stride, pads):
        a = n + lo + hi - k
        osz.append(_cdiv(a + s - 1, s) + 1 if ceil_mode else _cdiv(a, s) + 1)
    if any(o <= 0 for o in osz):
        raise ValueError(f"{op}: the output size {osz} is not positive: input {x.shape}, "
                         f"kernel_size {list(ksize)}, stride {list(stride)}, padding "
                         f"{[list(p) for p in pads]}")
    ext = tuple((lo, max((o - 1) * s + k - n - lo, hi))
                for n, k, s, (lo, hi), o in zip(size, ksize, stride, pads, osz))
    return x, ksize, stride, pads, ext, tuple(osz), cl


def _padded_shape(xl, ext):
    return tuple(xl.shape[:2]) + tuple(n + lo + hi for n, (lo, hi) in zip(xl.shape[2:], ext))


# --------------------------------------------------------------------------- max pool
def _maxpool_kernel(x, ksize, stride, ext, cl, mask, need):
    dt = x.dtype
    x = _up(x)
    xl = _win.to_cf(x, cl)
    size = xl.shape[2:]
    # Paddle fills a window that only covers padding with -FLT_MAX, in every dtype
    lowest = float(np.finfo(np.float32).min)
    xpad = _win.pad(xl, ext, lowest)
    plan = _plans.plan_pool("max", xpad, ksize, stride, ext, cl)
    out, arg = plan.max(xpad, want_arg=need or mask)
    res = _win.from_cf(out, cl).astype(dt, copy=False)
    # the rule routes g by the winning offsets found here (a choice: constant under
    # create_graph, where the route is differentiated as the gather at the same offsets)
    saved = GRAD.save(arg, xpad.shape)
    if mask:
        return (res, _win.max_pool_index(arg, ksize, stride, ext, size)), saved
    return res, saved


def _maxpool_grad(M, x, out, saved, g, *_mask_grad, ksize, stride, ext, cl, mask, need):
    arg, pshape = saved
    return (M.op(_maxpool_route_kernel, g, arg, pshape=pshape, ksize=ksize, stride=stride,
                 ext=ext, cl=cl),)


def _pool_plan(a, pshape, ksize, stride, ext, cl):
    """The max pool's plan of the padded shape ``pshape`` (``a`` gives dtype and backend)."""
    mod = get_array_module(a)
    stand_in = mod.broadcast_to(mod.zeros((), dtype=_up(mod.zeros((), a.dtype)).dtype), pshape)
    return _plans.plan_pool("max", stand_in, ksize, stride, ext, cl)


def _maxpool_route_kernel(g, arg, pshape, ksize, stride, ext, cl):
    """The max-pool gradient as an op of g: each output gradient sent to the input pixel its
    window's maximum came from (``arg``: the offsets the forward found)."""
    gl = _win.to_cf(_up(g), cl)
    acc = _pool_plan(gl, pshape, ksize, stride, ext, cl).max_grad(gl, arg, pshape)
    size = tuple(n - lo - hi for n, (lo, hi) in zip(pshape[2:], ext))
    return _win.from_cf(_win.crop(acc, ext, size), cl).astype(g.dtype, copy=False), GRAD


def _maxpool_gather_kernel(h, arg, pshape, ksize, stride, ext, cl):
    """The adjoint of the route: each window reads h at its maximum's position."""
    hpad = _win.pad(_win.to_cf(_up(h), cl), ext)
    out = _win.max_pool_gather(hpad, arg, ksize, stride)
    return _win.from_cf(out, cl).astype(h.dtype, copy=False), GRAD


# the route and the gather are linear in their first input and each other's adjoint; the
# offsets are a constant (a choice, no derivative)
def _maxpool_route_grad(M, g, arg, out, h, **a):
    return M.op(_maxpool_gather_kernel, h, arg, **a), None


def _maxpool_gather_grad(M, h, arg, out, g, **a):
    return M.op(_maxpool_route_kernel, g, arg, **a), None


op("max_pool_grad", saves=(1,), grad=_maxpool_route_grad)(_maxpool_route_kernel)
op("max_pool_gather", saves=(1,), grad=_maxpool_gather_grad)(_maxpool_gather_kernel)
op("max_pool", saves=(), grad=_maxpool_grad, residuals=True)(_maxpool_kernel)
_plans.LABELLED.add(_maxpool_kernel)


def _max_pool(op, nd, x, kernel_size, stride, padding, return_mask, ceil_mode, data_format):
    x, ksize, stride, _pads, ext, _osz, cl = _pool_args(op, nd, x, kernel_size, stride,
                                                        padding, ceil_mode, data_format)
    if return_mask and cl:
        raise ValueError(f"{op}: when return_mask is True, data_format must be channel-first "
                         f"('{('NCL', 'NCHW', 'NCDHW')[nd - 1]}'), got {data_format!r}")
    return apply(_maxpool_kernel, x, ksize=ksize, stride=stride, ext=ext, cl=cl,
                 mask=bool(return_mask), need=not x.stop_gradient)


def max_pool1d(x, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False,
               name=None):
    """1-D max pooling over ``[N, C, L]``.

    Args:
        x (Tensor): ``[N, C, L]``, float.
        kernel_size (int|list): the window length.
        stride (int|list, optional): the step (default: kernel_size).
        padding (int|str|list): an int, 'same'/'valid', ``[p]`` or ``[lo, hi]``.
        return_mask (bool): also return the int32 index (into L) of each maximum.
        ceil_mode (bool): round the output length up instead of down.
        name (str, optional): unused.

    Returns:
        Tensor, or (Tensor, Tensor) with the mask: ``[N, C, L_out]``.

    Example:
        >>> F.max_pool1d(paddle.arange(8.0).reshape([1, 1, 8]), 2).tolist()
        [[[1.0, 3.0, 5.0, 7.0]]]
    """
    return _max_pool("max_pool1d", 1, x, kernel_size, stride, padding, return_mask, ceil_mode,
                     "NCL")


def max_pool2d(x, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False,
               data_format="NCHW", name=None):
    """2-D max pooling.

    Args:
        x (Tensor): ``[N, C, H, W]`` (or ``[N, H, W, C]`` with ``data_format='NHWC'``).
        kernel_size (int|list): ``k`` or ``[kh, kw]``.
        stride (int|list, optional): the step (default: kernel_size).
        padding (int|str|list): an int, 'same'/'valid', ``[ph, pw]``,
            ``[top, bottom, left, right]`` or 4 pairs. Padded pixels never win.
        return_mask (bool): also return the int32 flat index (``h * W + w``) of each maximum,
            same shape as the output (NCHW only).
        ceil_mode (bool): round the output size up instead of down.
        data_format (str): 'NCHW' or 'NHWC'.
        name (str, optional): unused.

    Returns:
        Tensor, or (Tensor, Tensor) with the mask.

    Example:
        >>> F.max_pool2d(paddle.ones([1, 3, 32, 32]), 2).shape
        [1, 3, 16, 16]
    """
    return _max_pool("max_pool2d", 2, x, kernel_size, stride, padding, return_mask, ceil_mode,
                     data_format)


def max_pool3d(x, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False,
               data_format="NCDHW", name=None):
    """3-D max pooling over ``[N, C, D, H, W]`` (or ``NDHWC``).

    Args:
        x (Tensor): the input.
        kernel_size (int|list): ``k`` or ``[kd, kh, kw]``.
        stride (int|list, optional): the step (default: kernel_size).
        padding (int|str|list): an int, 'same'/'valid', 3 or 6 ints, or 5 pairs.
        return_mask (bool): also return the int32 flat index of each maximum (NCDHW only).
        ceil_mode (bool): round the output size up instead of down.
        data_format (str): 'NCDHW' or 'NDHWC'.
        name (str, optional): unused.

    Returns:
        Tensor, or (Tensor, Tensor) with the mask.
    """
    return _max_pool("max_pool3d", 3, x, kernel_size, stride, padding, return_mask, ceil_mode,
                     data_format)


# --------------------------------------------------------------------------- avg pool
def _divisor(size, ksize, stride, pads, ext, osz, exclusive, xp):
    """Per-output divisor (broadcastable to ``[*osz]``), separable over the dims."""
    div = None
    for d, (n, k, s, (lo, _), o) in enumerate(zip(size, ksize, stride, pads, osz)):
        start = np.arange(o) * s - ext[d][0]
        end = start + k
        if exclusive:
            cnt = np.minimum(end, n) - np.maximum(start, 0)
        else:
            # Paddle's kernel clips the window at n + (low padding) on the high side too, which
            # differs from n + hi only for asymmetric padding ('SAME' or explicit pairs)
            cnt = np.minimum(end, n + lo) - np.maximum(start, -lo)
        cnt = np.maximum(cnt, 0).reshape((o,) + (1,) * (len(osz) - 1 - d))
        div = cnt if div is None else div * cnt
    return xp.asarray(div)


def _avgpool_kernel(x, ksize, stride, pads, ext, cl, exclusive, divisor):
    dt = x.dtype
    x = _up(x)
    xp = get_array_module(x)
    xl = _win.to_cf(x, cl)
    size = xl.shape[2:]
    xpad = _win.pad(xl, ext)
    plan = _plans.plan_pool("avg", xpad, ksize, stride, ext, cl)
    osz = plan.osz
    with np.errstate(divide="ignore", invalid="ignore"):
        # a window with no valid pixel divides by 0 and gives nan, as in Paddle
        div = _divisor(size, ksize, stride, pads, ext, osz, exclusive, np).astype(np.float64)
        if divisor:
            # Paddle rescales the ordinary average: avg * prod(kernel_size) / divisor_override
            div = div * (divisor / math.prod(ksize))
        scale = xp.asarray(1.0 / div, dtype=x.dtype)
        summed = plan.sum(xpad)
        summed *= scale
    res = _win.from_cf(summed, cl).astype(dt, copy=False)
    # the rule is the adjoint kernel, which needs the input's spatial size
    return res, GRAD.save(tuple(size))


# avg_pool and its adjoint are linear, each the other's transpose: that is their gradient rule
def _avgpool_grad(M, x, out, saved, g, **a):
    return (M.op(_avgpool_adj_kernel, g, size=saved[0], **a),)


def _avgpool_adj_kernel(g, size, ksize, stride, pads, ext, cl, exclusive, divisor):
    """The adjoint of avg_pool (its input gradient) as an op of g, so it can be differentiated."""
    dt = g.dtype
    xp = get_array_module(g)
    gl = _win.to_cf(_up(g), cl)
    psz = tuple(n + lo + hi for n, (lo, hi) in zip(size, ext))
    pshape = tuple(gl.shape[:2]) + psz
    osz = gl.shape[2:]
    with np.errstate(divide="ignore", invalid="ignore"):
        div = _divisor(size, ksize, stride, pads, ext, osz, exclusive, np).astype(np.float64)
        if divisor:
            div = div * (divisor / math.prod(ksize))
        acc = _win.sum_pool_grad(gl * xp.asarray(1.0 / div, dtype=gl.dtype), pshape, ksize,
                                 stride)
    return _win.from_cf(_win.crop(acc, ext, size), cl).astype(dt, copy=False), GRAD


def _avgpool_adj_grad(M, g, out, h, size, **a):
    return (M.op(_avgpool_kernel, h, **a),)


op("avg_pool", saves=(), grad=_avgpool_grad, residuals=True)(_avgpool_kernel)
_plans.LABELLED.add(_avgpool_kernel)
op("avg_pool_grad", saves=(), grad=_avgpool_adj_grad)(_avgpool_adj_kernel)


def _avg_pool(op, nd, x, kernel_size, stride, padding, ceil_mode, exclusive, divisor_override,
              data_format):
    x, ksize, stride, pads, ext, _osz, cl = _pool_args(op, nd, x, kernel_size, stride, padding,
                                                       ceil_mode, data_format)
    div = 0
    if divisor_override is not None and divisor_override != 0:
        div = float(divisor_override)
        if div <= 0:
            raise ValueError(f"{op}: divisor_override must be positive, got {divisor_override}")
    return apply(_avgpool_kernel, x, ksize=ksize, stride=stride, pads=pads, ext=ext, cl=cl,
                 exclusive=bool(exclusive), divisor=div)


def avg_pool1d(x, kernel_size, stride=None, padding=0, exclusive=True, ceil_mode=False,
               name=None):
    """1-D average pooling over ``[N, C, L]``.

    Args:
        x (Tensor): ``[N, C, L]``, float.
        kernel_size (int|list): the window length.
        stride (int|list, optional): the step (default: kernel_size).
        padding (int|str|list): an int, 'same'/'valid', ``[p]`` or ``[lo, hi]``.
        exclusive (bool): divide by the number of non-padding elements (True) or by the
            window size (False).
        ceil_mode (bool): round the output length up.
        name (str, optional): unused.

    Returns:
        Tensor: ``[N, C, L_out]``.
    """
    return _avg_pool("avg_pool1d", 1, x, kernel_size, stride, padding, ceil_mode, exclusive,
                     None, "NCL")


def avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True,
               divisor_override=None, data_format="NCHW", name=None):
    """2-D average pooling.

    Args:
        x (Tensor): ``[N, C, H, W]`` or ``[N, H, W, C]``.
        kernel_size (int|list): ``k`` or ``[kh, kw]``.
        stride (int|list, optional): the step (default: kernel_size).
        padding (int|str|list): as in :func:`max_pool2d`.
        ceil_mode (bool): round the output size up.
        exclusive (bool): leave padding out of the divisor.
        divisor_override (int, optional): divide every window by this instead.
        data_format (str): 'NCHW' or 'NHWC'.
        name (str, optional): unused.

    Returns:
        Tensor: the pooled tensor.

    Example:
        >>> F.avg_pool2d(paddle.ones([1, 1, 4, 4]), 2).tolist()
        [[[[1.0, 1.0], [1.0, 1.0]]]]
    """
    return _avg_pool("avg_pool2d", 2, x, kernel_size, stride, padding, ceil_mode, exclusive,
                     divisor_override, data_format)


def avg_pool3d(x, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True,
               divisor_override=None, data_format="NCDHW", name=None):
    """3-D average pooling.

    Args:
        x (Tensor): ``[N, C, D, H, W]`` or ``[N, D, H, W, C]``.
        kernel_size (int|list): ``k`` or ``[kd, kh, kw]``.
        stride (int|list, optional): the step (default: kernel_size).
        padding (int|str|list): an int, 'same'/'valid', 3 or 6 ints, or 5 pairs.
        ceil_mode (bool): round the output size up.
        exclusive (bool): leave padding out of the divisor.
        divisor_override (int, optional): divide every window by this instead.
        data_format (str): 'NCDHW' or 'NDHWC'.
        name (str, optional): unused.

    Returns:
        Tensor: the pooled tensor.
    """
    return _avg_pool("avg_pool3d", 3, x, kernel_size, stride, padding, ceil_mode, exclusive,
                     divisor_override, data_format)


# --------------------------------------------------------------------------- adaptive pools
@functools.lru_cache(maxsize=256)
def _avg_matrix(n, o):
    start, end = _win.adaptive_bounds(n, o)
    j = np.arange(n)
    inside = (j >= start[:, None]) & (j < end[:, None])
    return inside / (end - start)[:, None]


def _even_windows(size, osz):
    """The window sizes of an adaptive pool whose output divides its input in every spatial
    dim (the windows then tile the input exactly), else None."""
    if all(o > 0 and n % o == 0 for n, o in zip(size, osz)):
        return tuple(n // o for n, o in zip(size, osz))
    return None


def _tiled(shape, osz, k):
    """``[N, C, o1, k1, o2, k2, ...]``: the view of ``[N, C, *S]`` whose odd axes from 3 on
    run inside the windows."""
    return (*shape[:2], *[v for pair in zip(osz, k) for v in pair])


def _apply_mats(xl, mats, transpose):
    """Contract every spatial dim d of ``xl`` ([N, C, *S]) with ``mats[d]`` (``[o_d, S_d]``,
    or its transpose).

    Windows that tile the input (a global average pool, any output that divides the input)
    take a mean over the window axes instead (and its adjoint a broadcast): the products with
    the averaging matrices would be one tiny GEMM per sample and channel."""
    mod = get_array_module(xl)
    osz = tuple(m.shape[0] for m in mats)
    size = tuple(m.shape[1] for m in mats)
    k = _even_windows(size, osz)
    if k is not None:
        nd = len(mats)
        inner = tuple(3 + 2 * d for d in range(nd))
        if not transpose:
            return xl.reshape(_tiled(xl.shape, osz, k)).mean(axis=inner)
        scale = xl.dtype.type(1.0 / math.prod(k))
        g = mod.expand_dims(xl * scale, inner)
        return mod.broadcast_to(g, _tiled(xl.shape, osz, k)).reshape(*xl.shape[:2], *size)
    y = xl
    for d, m in enumerate(mats):
        m = mod.asarray(m.T if transpose else m, dtype=xl.dtype)
        ax = 2 + d
        y = mod.moveaxis(mod.matmul(m, mod.moveaxis(y, ax, -2)), -2, ax)
    return y


def _adaptive_avg_kernel(x, osz, cl):
    dt = x.dtype
    x = _up(x)
    xl = _win.to_cf(x, cl)
    size = xl.shape[2:]
    mats = [_avg_matrix(n, o) for n, o in zip(size, osz)]
    res = _win.from_cf(_apply_mats(xl, mats, False), cl).astype(dt, copy=False)
    return res, GRAD.save(tuple(size))


# adaptive_avg_pool and its adjoint are linear, each the other's transpose
def _adaptive_avg_grad(M, x, out, saved, g, osz, cl):
    return (M.op(_adaptive_avg_adj_kernel, g, size=saved[0], cl=cl),)


def _adaptive_avg_adj_kernel(g, size, cl):
    """The adjoint of adaptive_avg_pool as an op of g (its input gradient)."""
    dt = g.dtype
    gl = _win.to_cf(_up(g), cl)
    mats = [_avg_matrix(n, o) for n, o in zip(size, gl.shape[2:])]
    out = _win.from_cf(_apply_mats(gl, mats, True), cl).astype(dt, copy=False)
    return out, GRAD.save(tuple(gl.shape[2:]))


def _adaptive_avg_adj_grad(M, g, out, saved, h, size, cl):
    return (M.op(_adaptive_avg_kernel, h, osz=saved[0], cl=cl),)


op("adaptive_avg_pool", saves=(), grad=_adaptive_avg_grad, residuals=True)(_adaptive_avg_kernel)
op("adaptive_avg_pool_grad", saves=(), grad=_adaptive_avg_adj_grad,
   residuals=True)(_adaptive_avg_adj_kernel)


def _output_size(output_size, size, op):
    nd = len(size)
    if isinstance(output_size, Tensor):
        output_size = output_size.tolist()
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != nd:
            raise ValueError(f"{op}: output_size must be an int or a list of {nd} values, got "
                             f"{list(output_size)}")
        vals = [n if v is None else _int(v, op, "output_size") for v, n in zip(output_size, size)]
    else:
        vals = [_int(output_size, op, "output_size")] * nd
    if any(v <= 0 for v in vals):
        raise ValueError(f"{op}: output_size must be positive, got {vals}")
    return tuple(vals)


def _adaptive_args(op, nd, x, output_size, data_format):
    x = float_input(x, op)
    if x.ndim != nd + 2:
        raise ValueError(f"{op}: the input should be a {nd + 2}-D tensor, but received a "
                         f"{x.ndim}-D tensor of shape {x.shape}")
    cl = check_format(data_format, nd, op)
    size = tuple(x.shape[1:-1] if cl else x.shape[2:])
    return x, _output_size(output_size, size, op), cl


def _adaptive_avg(op, nd, x, output_size, data_format):
    x, osz, cl = _adaptive_args(op, nd, x, output_size, data_format)
    return apply(_adaptive_avg_kernel, x, osz=osz, cl=cl)


def adaptive_avg_pool1d(x, output_size, name=None):
    """Adaptive average pooling to a fixed output length.

    Window i covers ``[floor(i * L / out), ceil((i + 1) * L / out))``.

    Args:
        x (Tensor): ``[N, C, L]``.
        output_size (int): the output length.
        name (str, optional): unused.

    Returns:
        Tensor: ``[N, C, output_size]``.
    """
    return _adaptive_avg("adaptive_avg_pool1d", 1, x, output_size, "NCL")


def adaptive_avg_pool2d(x, output_size, data_format="NCHW", name=None):
    """Adaptive average pooling to a fixed output size.

    Args:
        x (Tensor): ``[N, C, H, W]`` or ``[N, H, W, C]``.
        output_size (int|list): ``s`` or ``[oh, ow]``; None keeps that dim.
        data_format (str): 'NCHW' or 'NHWC'.
        name (str, optional): unused.

    Returns:
        Tensor: ``[N, C, oh, ow]`` (or channels last).

    Example:
        >>> F.adaptive_avg_pool2d(paddle.ones([2, 8, 7, 7]), 1).shape
        [2, 8, 1, 1]
    """
    return _adaptive_avg("adaptive_avg_pool2d", 2, x, output_size, data_format)


def adaptive_avg_pool3d(x, output_size, data_format="NCDHW", name=None):
    """Adaptive average pooling over ``[N, C, D, H, W]`` (or ``NDHWC``).

    Args:
        x (Tensor): the input.
        output_size (int|list): ``s`` or ``[od, oh, ow]``; None keeps that dim.
        data_format (str): 'NCDHW' or 'NDHWC'.
        name (str, optional): unused.

    Returns:
        Tensor: the pooled tensor.
    """
    return _adaptive_avg("adaptive_avg_pool3d", 3, x, output_size, data_format)


def _adaptive_max_kernel(x, osz, mask):
    out, flat = _win.adaptive_max(x, osz)
    # the rule routes g by the maxima's flat indices found here (a choice: constant under
    # create_graph)
    saved = GRAD.save(flat, x.shape)
    if mask:
        return (out, flat.astype(np.int32)), saved
    return out, saved


def _adaptive_max_grad(M, x, out, saved, g, *_mask_grad, osz, mask):
    flat, xshape = saved
    return (M.op(_amax_route_kernel, g, flat, xshape=xshape),)


def _amax_route_kernel(g, flat, xshape):
    """The adaptive-max gradient as an op of g: g summed at the maxima's flat indices."""
    return _win.adaptive_max_grad(g, flat, xshape).astype(g.dtype, copy=False), GRAD


def _amax_gather_kernel(h, flat):
    """The adjoint of the adaptive-max route: each window reads h at its maximum."""
    return _win.adaptive_max_gather(h, flat), GRAD.save(tuple(h.shape))


# the route and the gather are linear in their first input and each other's adjoint
def _amax_route_grad(M, g, flat, out, h, xshape):
    return M.op(_amax_gather_kernel, h, flat), None


def _amax_gather_grad(M, h, flat, out, saved, g):
    return M.op(_amax_route_kernel, g, flat, xshape=saved[0]), None


op("adaptive_max_pool", saves=(), grad=_adaptive_max_grad, residuals=True)(_adaptive_max_kernel)
op("adaptive_max_pool_grad", saves=(1,), grad=_amax_route_grad)(_amax_route_kernel)
op("adaptive_max_pool_gather", saves=(1,), grad=_amax_gather_grad,
   residuals=True)(_amax_gather_kernel)


def _adaptive_max(op, nd, x, output_size, return_mask):
    x, osz, _ = _adaptive_args(op, nd, x, output_size, ("NCL", "NCHW", "NCDHW")[nd - 1])
    return apply(_adaptive_max_kernel, x, osz=osz, mask=bool(return_mask))


def adaptive_max_pool1d(x, output_size, return_mask=False, name=None):
    """Adaptive max pooling to a fixed output length.

    Args:
        x (Tensor): ``[N, C, L]``.
        output_size (int): the output length.
        return_mask (bool): also return the int32 index of each maximum.
        name (str, optional): unused.

    Returns:
        Tensor, or (Tensor, Tensor) with the mask: ``[N, C, output_size]``.
    """
    return _adaptive_max("adaptive_max_pool1d", 1, x, output_size, return_mask)


def adaptive_max_pool2d(x, output_size, return_mask=False, name=None):
    """Adaptive max pooling to a fixed output size over ``[N, C, H, W]``.

    Args:
        x (Tensor): ``[N, C, H, W]``.
        output_size (int|list): ``s`` or ``[oh, ow]``; None keeps that dim.
        return_mask (bool): also return the int32 flat index (``h * W + w``) of each maximum.
        name (str, optional): unused.

    Returns:
        Tensor, or (Tensor, Tensor) with the mask.

    Example:
        >>> F.adaptive_max_pool2d(paddle.ones([1, 2, 5, 7]), [2, 3]).shape
        [1, 2, 2, 3]
    """
    return _adaptive_max("adaptive_max_pool2d", 2, x, output_size, return_mask)


def adaptive_max_pool3d(x, output_size, return_mask=False, name=None):
    """Adaptive max pooling over ``[N, C, D, H, W]``.

    Args:
        x (Tensor): the input.
        output_size (int|list): ``s`` or ``[od, oh, ow]``; None keeps that dim.
        return_mask (bool): also return the int32 flat index of each maximum.
        name (str, optional): unused.

    Returns:
        Tensor, or (Tensor, Tensor) with the mask.
    """
    return _adaptive_max("adaptive_max_pool3d", 3, x, output_size, return_mask)


# --------------------------------------------------------------------------- max unpool
def _unpool_kernel(x, idx, osz):
    mod = get_array_module(x)
    n, c = x.shape[:2]
    total = math.prod(osz)
    flat_idx = idx.reshape(n, c, -1).astype(np.int64, copy=False)
    out = mod.zeros((n, c, total), dtype=x.dtype)
    mod.put_along_axis(out, flat_idx, x.reshape(n, c, -1), axis=2)
    return out.reshape(n, c, *osz), GRAD


# max_unpool and its gather are linear in their first input and each other's adjoint; the
# indices are a constant
def _unpool_grad(M, x, idx, out, g, osz):
    return M.op(_unpool_gather_kernel, g, idx), None


def _unpool_gather_kernel(g, idx):
    """The adjoint of max_unpool: read g at the indices (the unpool's input gradient)."""
    mod = get_array_module(g)
    n, c = g.shape[:2]
    flat_idx = idx.reshape(n, c, -1).astype(np.int64, copy=False)
    osz = g.shape[2:]
    out = mod.take_along_axis(g.reshape(n, c, -1), flat_idx, axis=2).reshape(idx.shape)
    return out, GRAD.save(tuple(osz))


def _unpool_gather_grad(M, g, idx, out, saved, h):
    return M.op(_unpool_kernel, h, idx, osz=saved[0]), None


op("max_unpool", saves=(1,), grad=_unpool_grad)(_unpool_kernel)
op("max_unpool_grad", saves=(1,), grad=_unpool_gather_grad, residuals=True)(_unpool_gather_kernel)


def _max_unpool(op, nd, x, indices, kernel_size, stride, padding, data_format, output_size):
    x = float_input(x, op)
    indices = tensor_arg(indices, op, "indices")
    fmt = ("NCL", "NCHW", "NCDHW")[nd - 1]
    if data_format != fmt:
        raise ValueError(f"{op}: data_format should be {fmt!r}, received {data_format!r}")
    if x.ndim != nd + 2:
        raise ValueError(f"{op}: the input should be a {nd + 2}-D tensor, got shape {x.shape}")
    if indices.shape != x.shape:
        raise ValueError(f"{op}: indices must have the shape of x {x.shape}, got "
                         f"{indices.shape}")
    if indices.dtype.name not in ("int32", "int64"):
        raise TypeError(f"{op}: indices must be int32 (the mask of max_pool), got "
                        f"{indices.dtype.name}")
    ksize = ntuple(kernel_size, nd, op, "kernel_size")
    stride = ksize if stride is None else ntuple(stride, nd, op, "stride")
    pad = ntuple(padding, nd, op, "padding", minimum=0)
    size = x.shape[2:]
    default = [(n - 1) * s - 2 * p + k for n, s, p, k in zip(size, stride, pad, ksize)]
    if output_size is None:
        osz = tuple(default)
    else:
        if isinstance(output_size, Tensor):
            output_size = output_size.tolist()
        vals = list(output_size) if isinstance(output_size, (list, tuple)) else [output_size]
        if len(vals) == nd + 2:
            vals = vals[2:]
        osz = ntuple(vals, nd, op, "output_size")
        for d, (o, m, s) in enumerate(zip(osz, default, stride)):
            if not m - s < o < m + s:
                raise ValueError(f'{op}: invalid output_size "{list(osz)}" (dim {d} must be '
                                 f"between {m - s} and {m + s})")
    total = math.prod(osz)
    idx = indices._data
    if idx.size:
        lo, hi = int(idx.min()), int(idx.max())
        if lo < 0 or hi >= total:
            raise ValueError(f"{op}: every index must be in [0, {total}) (the output plane "
                             f"{list(osz)}), got indices in [{lo}, {hi}]")
    return apply(_unpool_kernel, x, idx, osz=osz)


def max_unpool1d(x, indices, kernel_size, stride=None, padding=0, data_format="NCL",
                 output_size=None, name=None):
    """Partial inverse of max_pool1d: scatter x into zeros at the pooled positions.

    Args:
        x (Tensor): ``[N, C, L]``, the pooled values.
        indices (Tensor): the int32 mask from ``max_pool1d(..., return_mask=True)``.
        kernel_size (int|list): the pool's window.
        stride (int|list, optional): the pool's step (default: kernel_size).
        padding (int|list): the pool's padding.
        data_format (str): 'NCL'.
        output_size (list, optional): the exact output length (``[L]`` or ``[N, C, L]``).
        name (str, optional): unused.

    Returns:
        Tensor: ``[N, C, L_out]``, ``L_out = (L - 1) * stride - 2 * padding + kernel_size``.
    """
    return _max_unpool("max_unpool1d", 1, x, indices, kernel_size, stride, padding, data_format,
                       output_size)


def max_unpool2d(x, indices, kernel_size, stride=None, padding=0, data_format="NCHW",
                 output_size=None, name=None):
    """Partial inverse of max_pool2d: scatter x into zeros at the pooled positions.

    Args:
        x (Tensor): ``[N, C, H, W]``, the pooled values.
        indices (Tensor): the int32 mask from ``max_pool2d(..., return_mask=True)``.
        kernel_size (int|list): the pool's window.
        stride (int|list, optional): the pool's step (default: kernel_size).
        padding (int|list): the pool's padding.
        data_format (str): 'NCHW'.
        output_size (list, optional): ``[H, W]`` or ``[N, C, H, W]`` of the result.
        name (str, optional): unused.

    Returns:
        Tensor: the unpooled tensor.

    Example:
        >>> out, mask = F.max_pool2d(paddle.rand([1, 1, 4, 4]), 2, return_mask=True)
        >>> F.max_unpool2d(out, mask, 2).shape
        [1, 1, 4, 4]
    """
    return _max_unpool("max_unpool2d", 2, x, indices, kernel_size, stride, padding, data_format,
                       output_size)


def max_unpool3d(x, indices, kernel_size, stride=None, padding=0, data_format="NCDHW",
                 output_size=None, name=None):
    """Partial inverse of max_pool3d: scatter x into zeros at the pooled positions.

    Args:
        x (Tensor): ``[N, C, D, H, W]``, the pooled values.
        indices (Tensor): the int32 mask from ``max_pool3d(..., return_mask=True)``.
        kernel_size (int|list): the pool's window.
        stride (int|list, optional): the pool's step (default: kernel_size).
        padding (int|list): the pool's padding.
        data_format (str): 'NCDHW'.
        output_size (list, optional): ``[D, H, W]`` or the full shape of the result.
        name (str, optional): unused.

    Returns:
        Tensor: the unpooled tensor.
    """
    return _max_unpool("max_unpool3d", 3, x, indices, kernel_size, stride, padding, data_format,
                       output_size)
