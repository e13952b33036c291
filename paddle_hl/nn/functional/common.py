"""Common functionals: linear, bilinear, the dropouts, pad, cosine_similarity, normalize,
label_smooth.

linear and bilinear are single kernels with fused backward passes; dropout draws one mask and
multiplies once (the mask shared along the dims not listed in ``axis``); pad handles every
mode with slicing for the interior and a small scatter for the borders.
"""

from __future__ import annotations

import itertools
import math
import numbers

import numpy as np

from ...backend import get_array_module as _xp
from ...backend import tuning as _tuning
from ...framework import dtype as _dt
from ...framework import place as _pl
from ...framework import random as _rnd
from ...framework import state
from ...framework.engine import GRAD
from ...framework.op import apply, op
from ...framework.tensor import Tensor
from ...tensor import linalg as _linalg
from ...tensor import math as _math
from ...tensor import stat as _stat
from ...tensor._helpers import float_arg, norm_axis, tensor_arg
from ...tensor.manipulation import broadcast_to

__all__ = []


def _low_numpy(dt, xp):
    """NumPy has no fp16/bf16 BLAS: such products are computed in float32 (as in matmul)."""
    return dt == _dt.BFLOAT16_NP or (dt in _dt.LOW_FLOATS and xp is np)


def _mm(a, b):
    xp = _xp(a)
    if _low_numpy(a.dtype, xp):
        return xp.matmul(a.astype(np.float32), b.astype(np.float32)).astype(a.dtype)
    return xp.matmul(a, b)


# ------------------------------------------------------------------------------------ linear
_THIN_OUT = _tuning.value("linear.thin_out")
_THIN_COPY_MAX = _tuning.value("linear.thin_copy_max")


def _gemm(M, a, b):
    """``a @ b`` in a rule: the namespace's matmul, except for float16/bfloat16 NumPy arrays,
    which take the linear kernel's float32 GEMM (NumPy has no half-precision BLAS)."""
    if not M.tensor and _low_numpy(a.dtype, M.xp):
        return M.op(_linear_kernel, a, b, None)
    return M.matmul(a, b)


def _linear_grad(M, x, w, b, out, g, need_x=True):
    """``g @ w.T`` and ``x2.T @ g2`` over the flattened leading dims, and the bias gradient a
    column sum; the input GEMM is skipped when x needs no gradient (``need_x``)."""
    k, n = M.value(w).shape
    g2 = M.reshape(g, (-1, n))
    gx = None
    if need_x:
        wt = M.transpose(w, (1, 0))
        if not M.tensor and n <= _THIN_OUT and k * n <= _THIN_COPY_MAX:
            # a few outputs (a classifier's 10) of a mid-sized layer: BLAS is several times
            # slower on the transposed view than on a copy of it (128x10 by 10x512: 0.09 ->
            # 0.014 ms)
            wt = M.xp.ascontiguousarray(wt)
        gx = M.reshape(_gemm(M, g2, wt), M.value(x).shape)
    gw = _gemm(M, M.transpose(M.reshape(x, (-1, k)), (1, 0)), g2)
    gb = None
    if b is not None:
        low = not M.tensor and g2.dtype in _dt.LOW_FLOATS
        gb = M.op(_colsum_kernel, g2) if low else M.sum(g2, axis=0)
    return gx, gw, gb


def _colsum_grad(M, g, out, gg):
    return (M.expand(M.reshape(gg, (1, -1)), M.value(g).shape),)


@op("linear_bias_grad", saves=(), grad=_colsum_grad)
def _colsum_kernel(g):
    """Column sums of a 2-D float16/bfloat16 array (linear's bias gradient), accumulated in
    float32."""
    low = g.dtype in _dt.LOW_FLOATS
    return g.sum(axis=0, dtype=np.float32 if low else None).astype(g.dtype, copy=False), GRAD


# one 2-D GEMM per gradient over the flattened leading dims (see _linear_grad)
@op("linear", saves=(0, 1), grad=_linear_grad)
def _linear_kernel(x, w, b, need_x=True):
    """``x @ w + b`` for x ``[..., in]``, w ``[in, out]``, b ``[out]`` or None.

    ``need_x`` False skips the input-gradient GEMM (x is data that needs no gradient, as for
    the first layer of a network: a third of that layer's backward work).
    """
    k, n = w.shape
    lead = x.shape[:-1]
    # one 2-D GEMM instead of a batched matmul over the leading dims (sizes given: k may be 0
    # in the weight-gradient GEMM of an empty batch)
    x2 = x.reshape(math.prod(lead), k)
    out = _mm(x2, w)
    if b is not None:
        out += b
    # a 2-D x's result is returned as the GEMM made it, not as a reshaped view of it: as the
    # weight gradient (x2.T @ g2) it is stored in .grad as it is, and clear_grad tells a
    # gradient buffer that something else holds only by counting the references to it
    if out.shape != lead + (n,):
        out = out.reshape(lead + (n,))
    return out, GRAD


def linear(x, weight, bias=None, name=None):
    """Fully connected: ``x @ weight + bias``.

    Args:
        x (Tensor): ``[..., in_features]``.
        weight (Tensor): ``[in_features, out_features]`` (Paddle's layout, not transposed).
        bias (Tensor, optional): ``[out_features]`` (or anything broadcastable to the output).
        name (str, optional): unused.

    Returns:
        Tensor: ``[..., out_features]``.

    Example:
        >>> F.linear(paddle.ones([2, 3]), paddle.ones([3, 4])).shape
        [2, 4]
    """
    x = float_arg(x, "linear", "x")
    weight = float_arg(weight, "linear", "weight")
    if bias is not None:
        bias = float_arg(bias, "linear", "bias")
    for arg, t in (("weight", weight), ("bias", bias)):
        # under auto_cast the AMP hook casts the operands to one dtype before the kernel runs
        if t is not None and t._data.dtype != x._data.dtype and state.amp_hook is None:
            raise ValueError(f"linear: x has dtype {x.dtype.name} but {arg} has dtype "
                             f"{t.dtype.name}; they must match")
    if x.ndim == 0:
        raise ValueError("linear: x must be at least 1-D, got a 0-D tensor")
    fused = weight.ndim == 2 and (bias is None or (bias.ndim == 1
                                                   and bias.shape[0] == weight.shape[1]))
    if weight.ndim == 2 and x.shape[-1] != weight.shape[0]:
        raise ValueError(f"linear: the last dim of x (shape {x.shape}) must equal dim 0 of "
                         f"weight (shape {weight.shape})")
    if fused:
        if x.stop_gradient:
            return apply(_linear_kernel, x, weight, bias, need_x=False)
        return apply(_linear_kernel, x, weight, bias)
    out = _linalg.matmul(x, weight)
    if bias is None:
        return out
    try:
        np.broadcast_shapes(tuple(out.shape), tuple(bias.shape))
    except ValueError:
        raise ValueError(f"linear: bias of shape {bias.shape} does not broadcast to the output "
                         f"shape {out.shape}") from None
    return _math.add(out, bias)


# ---------------------------------------------------------------------------------- bilinear
def _bilinear_grad(M, x1, x2, w, b, out, g):
    """The input gradients are bilinear forms themselves, with w's axes permuted:
    ``gx1[n, i] = g[n] @ w[:, i, :] @ x2[n]`` and ``gx2[n, j] = g[n] @ w[:, :, j] @ x1[n]``;
    the weight gradient is one GEMM over the batch."""
    n, o = M.value(g).shape
    i1, i2 = M.value(w).shape[1:]
    gx1 = M.op(_bilinear_kernel, g, x2, M.transpose(w, (1, 0, 2)), None)
    gx2 = M.op(_bilinear_kernel, g, x1, M.transpose(w, (2, 0, 1)), None)
    rows = M.reshape(M.reshape(g, (n, o, 1)) * M.reshape(x1, (n, 1, i1)), (n, o * i1))
    gw = M.reshape(M.op(_linear_kernel, M.transpose(rows, (1, 0)), x2, None), (o, i1, i2))
    gb = None if b is None else M.reshape(M.sum(g, axis=0, keepdim=True), M.value(b).shape)
    return gx1, gx2, gw, gb


# one GEMM with w laid out as [i, o*j], then a batched product with x2 (see _bilinear_grad)
@op("bilinear", saves=(0, 1, 2), grad=_bilinear_grad)
def _bilinear_kernel(x1, x2, w, b):
    """``out[n, o] = x1[n] @ w[o] @ x2[n] + b[0, o]``."""
    n = x1.shape[0]
    o, i1, i2 = w.shape
    xp = _xp(x1)
    # a[n, o, j] = sum_i x1[n, i] w[o, i, j]: one GEMM with w laid out as [i, o*j]
    w_i = xp.ascontiguousarray(w.transpose(1, 0, 2)).reshape(i1, o * i2)
    a = _mm(x1, w_i).reshape(n, o, i2)
    out = _mm(a, x2[:, :, None])[:, :, 0]
    if b is not None:
        out = out + b
    return out, GRAD


def bilinear(x1, x2, weight, bias=None, name=None):
    """Bilinear form: ``out[n, o] = x1[n] @ weight[o] @ x2[n] + bias[0, o]``.

    Args:
        x1 (Tensor): ``[N, in1_features]``.
        x2 (Tensor): ``[N, in2_features]``.
        weight (Tensor): ``[out_features, in1_features, in2_features]``.
        bias (Tensor, optional): ``[1, out_features]``.
        name (str, optional): unused.

    Returns:
        Tensor: ``[N, out_features]``.
    """
    x1 = float_arg(x1, "bilinear", "x1")
    x2 = float_arg(x2, "bilinear", "x2")
    weight = float_arg(weight, "bilinear", "weight")
    if bias is not None:
        bias = float_arg(bias, "bilinear", "bias")
    ts = [("x1", x1), ("x2", x2), ("weight", weight)] + ([("bias", bias)] if bias is not None
                                                         else [])
    for arg, t in ts[1:]:
        if t._data.dtype != x1._data.dtype:
            raise ValueError(f"bilinear: x1 has dtype {x1.dtype.name} but {arg} has dtype "
                             f"{t.dtype.name}; they must match")
    if x1.ndim != 2 or x2.ndim != 2:
        raise ValueError(f"bilinear: x1 and x2 must be 2-D [N, features], got shapes "
                         f"{x1.shape} and {x2.shape}")
    if weight.ndim != 3:
        raise ValueError(f"bilinear: weight must be 3-D [out, in1, in2], got shape "
                         f"{weight.shape}")
    if x1.shape[0] != x2.shape[0]:
        raise ValueError(f"bilinear: x1 and x2 must have the same batch size, got shapes "
                         f"{x1.shape} and {x2.shape}")
    if x1.shape[1] != weight.shape[1] or x2.shape[1] != weight.shape[2]:
        raise ValueError(f"bilinear: weight of shape {weight.shape} does not match x1 "
                         f"{x1.shape} and x2 {x2.shape} (expected [out, {x1.shape[1]}, "
                         f"{x2.shape[1]}])")
    if bias is not None and (bias.ndim != 2 or bias.shape[0] != 1
                             or bias.shape[1] != weight.shape[0]):
        raise ValueError(f"bilinear: bias must have shape [1, {weight.shape[0]}], got "
                         f"{bias.shape}")
    return apply(_bilinear_kernel, x1, x2, weight, bias)


# ----------------------------------------------------------------------------------- dropout
def _mask_grad(M, x, m, add, out, g):
    return g * m, None, None


@op("dropout", saves=(1,), grad=_mask_grad)
def _mask_kernel(x, m, add):
    """``x * m (+ add)`` with constant arrays m and add broadcasting against x."""
    out = x * m
    if add is not None:
        out += add
    return out, GRAD


def _check_p(p, op):
    if isinstance(p, Tensor):
        p = p.item()
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise TypeError(f"{op}: p must be a float in [0, 1], got {type(p).__name__}")
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{op}: p must be between 0 and 1, got {p}")
    return p


def _keep_mask(x, p, shape):
    """Bernoulli(1 - p) keep mask of ``shape`` on x's device, as a bool array."""
    r = _rnd.uniform_array(shape, np.float32, place=_pl.place_of(x._data))
    return r >= np.float32(p)


def dropout(x, p=0.5, axis=None, training=True, mode="upscale_in_train", name=None):
    """Randomly zero elements with probability ``p``.

    Args:
        x (Tensor): floating point input.
        p (float): the drop probability, in [0, 1].
        axis (int|list[int], optional): the dims the mask varies along; the same mask is
            shared along every other dim. None: every element independently.
        training (bool): apply dropout (True) or the inference rule (False).
        mode (str): 'upscale_in_train' (kept values scaled by 1/(1-p) while training, identity
            at inference) or 'downscale_in_infer' (no scaling while training, x*(1-p) at
            inference).
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.

    Example:
        >>> y = F.dropout(paddle.ones([2, 3]), p=0.5)  # zeros and 2s
    """
    p = _check_p(p, "dropout")
    if mode not in ("upscale_in_train", "downscale_in_infer"):
        raise ValueError(f"dropout: mode must be 'upscale_in_train' or 'downscale_in_infer', "
                         f"got {mode!r}")
    x = float_arg(x, "dropout")
    axes = None
    if axis is not None:
        if isinstance(axis, numbers.Integral) and not isinstance(axis, bool):
            axis = [axis]
        if not isinstance(axis, (list, tuple)) or any(
                isinstance(a, bool) or not isinstance(a, numbers.Integral) for a in axis):
            raise TypeError(f"dropout: axis must be an int or a list of ints, got {axis!r}")
        for a in axis:
            if not 0 <= a < x.ndim:
                raise ValueError(f"dropout: axis values must be in [0, {x.ndim}) for x of shape "
                                 f"{x.shape}, got {list(axis)}")
        axes = set(int(a) for a in axis)
    if not training:
        if mode == "upscale_in_train" or p == 0.0:
            return x
        # Paddle keeps p as a float32 attribute and scales by 1 - p computed in float32, also
        # for a float64 x (0.7000000029802322 for p = 0.3): the same factor gives the same
        # numbers
        return _math.scale(x, float(np.float32(1.0) - np.float32(p)))
    if p == 0.0 and mode == "upscale_in_train":
        return x
    dt = x._data.dtype
    xp = _xp(x._data)
    shape = tuple(x.shape) if axes is None else tuple(
        s if i in axes else 1 for i, s in enumerate(x.shape))
    if p == 1.0:
        return apply(_mask_kernel, x, xp.zeros(shape, dtype=dt), None)
    keep = _keep_mask(x, p, shape)
    scale = 1.0 / (1.0 - p) if mode == "upscale_in_train" else 1.0
    m = xp.multiply(keep, scale, dtype=dt) if scale != 1.0 else keep.astype(dt)
    return apply(_mask_kernel, x, m, None)


def _channel_dropout(x, p, training, data_format, op, ndim, formats):
    x = tensor_arg(x, op)
    if x.ndim != ndim:
        raise ValueError(f"{op}: x must be {ndim}-D, got shape {x.shape}")
    if data_format not in formats:
        raise ValueError(f"{op}: data_format must be {formats[0]!r} or {formats[1]!r}, got "
                         f"{data_format!r}")
    p = _check_p(p, op)
    if not training or p == 0.0:
        return x  # the identity, for any dtype (an integer x included), as in Paddle
    float_arg(x, op)
    axis = [0, 1] if data_format == formats[0] else [0, ndim - 1]
    return dropout(x, p=p, axis=axis, training=training, mode="upscale_in_train")


def dropout2d(x, p=0.5, training=True, data_format="NCHW", name=None):
    """Zero whole channels of a 4-D input with probability ``p`` (kept ones scaled by
    1/(1-p)).

    When ``training`` is False (or ``p`` is 0) x is returned as it is, whatever its dtype, as
    in Paddle. In training x must be floating point (Paddle's documented dtypes): Paddle 2.6.2
    runs an integer x through its float formula with every factor cast to the integer dtype
    first (with p = 0.3 the kept values are not rescaled by 1/0.7), which is a bug there and
    is not copied: paddle_hl raises TypeError.

    Args:
        x (Tensor): ``[N, C, H, W]`` or ``[N, H, W, C]``.
        p (float): the drop probability.
        training (bool): identity when False.
        data_format (str): 'NCHW' or 'NHWC'.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.
    """
    return _channel_dropout(x, p, training, data_format, "dropout2d", 4, ("NCHW", "NHWC"))


def dropout3d(x, p=0.5, training=True, data_format="NCDHW", name=None):
    """Zero whole channels of a 5-D input with probability ``p`` (kept ones scaled by
    1/(1-p)).

    When ``training`` is False (or ``p`` is 0) x is returned as it is, whatever its dtype, as
    in Paddle. In training x must be floating point (Paddle's documented dtypes): Paddle 2.6.2
    runs an integer x through its float formula with every factor cast to the integer dtype
    first (with p = 0.3 the kept values are not rescaled by 1/0.7), which is a bug there and
    is not copied: paddle_hl raises TypeError.

    Args:
        x (Tensor): ``[N, C, D, H, W]`` or ``[N, D, H, W, C]``.
        p (float): the drop probability.
        training (bool): identity when False.
        data_format (str): 'NCDHW' or 'NDHWC'.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.
    """
    return _channel_dropout(x, p, training, data_format, "dropout3d", 5, ("NCDHW", "NDHWC"))


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def alpha_dropout(x, p=0.5, training=True, name=None):
    """Dropout for SELU networks: dropped values are set to SELU's negative saturation and the
    result is affinely corrected so that mean and variance are kept.

    When ``training`` is False (or ``p`` is 0) x is returned as it is, whatever its dtype, as
    in Paddle. In training x must be floating point (Paddle's documented dtypes): Paddle 2.6.2
    runs an integer x through its float formula with every factor cast to the integer dtype
    first (with p = 0.5 every output is 0), which is a bug there and is not copied: paddle_hl
    raises TypeError.

    Args:
        x (Tensor): floating point input (any dtype when not training).
        p (float): the drop probability.
        training (bool): identity when False.
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as x.
    """
    p = _check_p(p, "alpha_dropout")
    x = tensor_arg(x, "alpha_dropout")
    if not training or p == 0.0:
        return x  # the identity, for any dtype (an integer x included), as in Paddle
    x = float_arg(x, "alpha_dropout")
    dt = x._data.dtype
    xp = _xp(x._data)
    if p == 1.0:
        return apply(_mask_kernel, x, xp.zeros(x.shape, dtype=dt), None)
    alpha_p = -_SELU_ALPHA * _SELU_SCALE
    a = ((1.0 - p) * (1.0 + p * alpha_p ** 2)) ** -0.5
    b = -a * alpha_p * p
    keep = _keep_mask(x, p, tuple(x.shape))
    # a * (x * keep + alpha_p * (1 - keep)) + b  ==  x * (a * keep) + (b if keep else a*alpha_p + b)
    m = xp.multiply(keep, a, dtype=dt)
    add = xp.where(keep, dt.type(b), dt.type(a * alpha_p + b)).astype(dt, copy=False)
    return apply(_mask_kernel, x, m, add)


# --------------------------------------------------------------------------------------- pad
_FORMATS = {3: ("NCL", "NLC"), 4: ("NCHW", "NHWC"), 5: ("NCDHW", "NDHWC")}
_MODES = ("constant", "reflect", "replicate", "circular")
_NP_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def _source_index(lo, n, m, mode):
    """For each of the m output positions along an axis, the input position it reads."""
    k = np.arange(m) - lo
    if mode == "replicate":
        return np.clip(k, 0, n - 1)
    if mode == "circular":
        return np.mod(k, n)
    if n == 1:
        return np.zeros(m, dtype=np.int64)
    period = 2 * (n - 1)
    k = np.mod(k, period)
    return np.where(k >= n, period - k, k)


@op("pad", saves=())
def _pad_kernel(x, pads, mode, value):
    """Pad (or crop, for negative widths) every axis by ``pads[axis] = (before, after)``."""
    xp = _xp(x)
    if mode == "constant":
        out_shape = tuple(s + lo + hi for s, (lo, hi) in zip(x.shape, pads))
        src = tuple(slice(max(-lo, 0), s - max(-hi, 0)) for s, (lo, hi) in zip(x.shape, pads))
        dst = tuple(slice(max(lo, 0), max(lo, 0) + (sl.stop - sl.start))
                    for (lo, _), sl in zip(pads, src))
        fill = xp.asarray(value).astype(x.dtype) if x.dtype.kind not in "iu" else int(value)
        out = xp.full(out_shape, fill, dtype=x.dtype)
        out[dst] = x[src]

        def bw(g):
            gx = xp.zeros(x.shape, dtype=g.dtype)
            gx[src] = g[dst]
            return gx, None, None, None

        return out, bw

    plan = []
    shape = list(x.shape)
    for axis, (lo, hi) in enumerate(pads):
        if lo or hi:
            n = shape[axis]
            m = n + lo + hi
            plan.append((axis, lo, n, m, _source_index(lo, n, m, mode)))
            shape[axis] = m
    if xp is np and all(lo >= 0 and hi >= 0 for lo, hi in pads):
        # pure padding: NumPy's pad allocates once and fills the borders in place (CuPy's
        # 'wrap' differs from NumPy's for pads wider than the axis: the GPU gathers instead)
        out = xp.pad(x, pads, mode=_NP_MODES[mode])
    else:
        out = x
        for axis, _, _, _, idx in plan:
            out = xp.take(out, xp.asarray(idx), axis=axis)

    def bw(g):
        for axis, lo, n, m, idx in reversed(plan):
            nd = g.ndim

            def at(a, b=None, _axis=axis, _nd=nd):
                key = [slice(None)] * _nd
                key[_axis] = slice(a, b) if b is not None else a
                return tuple(key)

            # the interior maps one to one (a slice copy); each border position adds one slab
            k0, k1 = max(lo, 0), min(lo + n, m)
            if k0 == lo and k1 - k0 == n:
                gx = g[at(k0, k1)].copy()
            else:
                shape = list(g.shape)
                shape[axis] = n
                gx = xp.zeros(shape, dtype=g.dtype)
                if k1 > k0:
                    gx[at(k0 - lo, k1 - lo)] = g[at(k0, k1)]
            for k in itertools.chain(range(0, k0), range(max(k1, k0), m)):
                gx[at(int(idx[k]))] += g[at(k)]
            g = gx
        return g, None, None, None

    return out, bw


def _pad_list(pad, op):
    if isinstance(pad, Tensor):
        pad = pad.numpy().reshape(-1).tolist()
    elif isinstance(pad, np.ndarray):
        pad = pad.reshape(-1).tolist()
    if isinstance(pad, numbers.Integral) and not isinstance(pad, bool):
        pad = [int(pad)]
    if not isinstance(pad, (list, tuple)):
        raise TypeError(f"{op}: pad must be a list or tuple of ints, got {type(pad).__name__}")
    out = []
    for v in pad:
        if isinstance(v, Tensor):
            v = v.item()
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise TypeError(f"{op}: pad must contain ints, got {v!r} in {list(pad)}")
        out.append(int(v))
    return out


def pad(x, pad, mode="constant", value=0.0, data_format="NCHW", name=None):
    """Pad (or, with negative widths, crop) a tensor.

    Two ways to give ``pad``:

    - ``mode='constant'`` and ``len(pad) == 2 * x.ndim``: every dim, from the first:
      ``[dim0_before, dim0_after, dim1_before, dim1_after, ...]``.
    - otherwise x must be 3-D, 4-D or 5-D and ``pad`` lists the spatial dims from the last:
      ``[left, right]``, ``[left, right, top, bottom]`` or
      ``[left, right, top, bottom, front, back]``, laid out as ``data_format`` says.

    Args:
        x (Tensor): the input.
        pad (list[int]|tuple|Tensor): the widths.
        mode (str): 'constant', 'reflect' (mirror without the edge; widths must be smaller
            than the dim), 'replicate' (repeat the edge) or 'circular' (wrap around).
        value (float): the fill value of 'constant'.
        data_format (str): 'NCL'/'NLC', 'NCHW'/'NHWC' or 'NCDHW'/'NDHWC'.
        name (str, optional): unused.

    Returns:
        Tensor: the padded tensor, same dtype as x.

    Example:
        >>> F.pad(paddle.ones([1, 1, 2, 2]), [1, 1, 0, 0]).shape
        [1, 1, 2, 4]
    """
    x = tensor_arg(x, "pad")
    widths = _pad_list(pad, "pad")
    if mode not in _MODES:
        raise ValueError(f"pad: mode must be one of {list(_MODES)}, got {mode!r}")
    nd = x.ndim
    if mode == "constant" and len(widths) == 2 * nd:
        pads = [(widths[2 * i], widths[2 * i + 1]) for i in range(nd)]
    else:
        if nd not in _FORMATS:
            raise ValueError(f"pad: x must be 3-D, 4-D or 5-D for mode {mode!r} with "
                             f"{len(widths)} pad values (or give 2 * ndim = {2 * nd} values "
                             f"in 'constant' mode), got shape {x.shape}")
        formats = _FORMATS[nd]
        if data_format not in formats:
            raise ValueError(f"pad: a {nd}-D input needs data_format {formats[0]!r} or "
                             f"{formats[1]!r}, got {data_format!r}")
        k = nd - 2
        if len(widths) != 2 * k:
            raise ValueError(f"pad: a {nd}-D input in {mode!r} mode needs {2 * k} pad values "
                             f"(or {2 * nd} in 'constant' mode), got {len(widths)}: {widths}")
        first = 2 if data_format == formats[0] else 1
        pads = [(0, 0)] * nd
        for j in range(k):
            pads[first + k - 1 - j] = (widths[2 * j], widths[2 * j + 1])
    for axis, (lo, hi) in enumerate(pads):
        n = x.shape[axis]
        if n + lo + hi < 0 or (lo < 0 and -lo > n) or (hi < 0 and -hi > n):
            raise ValueError(f"pad: widths ({lo}, {hi}) crop more than dim {axis} of size {n} "
                             f"(x shape {x.shape})")
        if mode != "constant" and (lo or hi):
            if n == 0:
                raise ValueError(f"pad: {mode!r} mode cannot pad dim {axis} of size 0 "
                                 f"(x shape {x.shape})")
            if mode == "reflect" and (lo >= n or hi >= n):
                raise ValueError(f"pad: 'reflect' widths must be smaller than the padded dim: "
                                 f"got ({lo}, {hi}) for dim {axis} of size {n} (x shape "
                                 f"{x.shape})")
    if isinstance(value, Tensor):
        value = value.item()
    if all(lo == 0 and hi == 0 for lo, hi in pads):
        return x
    return apply(_pad_kernel, x, tuple(pads), mode, value)


def zeropad2d(x, padding, data_format="NCHW", name=None):
    """Zero-pad the last two spatial dims of a 4-D tensor.

    Args:
        x (Tensor): ``[N, C, H, W]`` or ``[N, H, W, C]``.
        padding (list[int]): ``[left, right, top, bottom]``.
        data_format (str): 'NCHW' or 'NHWC'.
        name (str, optional): unused.

    Returns:
        Tensor: the padded tensor.
    """
    x = tensor_arg(x, "zeropad2d")
    if x.ndim != 4:
        raise ValueError(f"zeropad2d: x must be 4-D, got shape {x.shape}")
    widths = _pad_list(padding, "zeropad2d")
    if len(widths) != 4:
        raise ValueError(f"zeropad2d: padding must have 4 values [left, right, top, bottom], "
                         f"got {widths}")
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"zeropad2d: data_format must be 'NCHW' or 'NHWC', got "
                         f"{data_format!r}")
    return pad(x, widths, mode="constant", value=0.0, data_format=data_format)


# ----------------------------------------------------------------------- similarity / norms
def cosine_similarity(x1, x2, axis=1, eps=1e-8):
    """Cosine similarity of x1 and x2 along ``axis`` (the inputs broadcast).

    ``sum(x1 * x2) / sqrt(max(sum(x1^2) * sum(x2^2), eps^2))``.

    Args:
        x1 (Tensor): first input.
        x2 (Tensor): second input, broadcastable with x1.
        axis (int): the dim reduced.
        eps (float): small value that keeps the denominator positive.

    Returns:
        Tensor: the broadcast shape without ``axis``.
    """
    x1 = float_arg(x1, "cosine_similarity", "x1")
    x2 = float_arg(x2, "cosine_similarity", "x2")
    if x1._data.dtype != x2._data.dtype:
        raise ValueError(f"cosine_similarity: x1 has dtype {x1.dtype.name} but x2 has dtype "
                         f"{x2.dtype.name}")
    try:
        shape = np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    except ValueError:
        raise ValueError(f"cosine_similarity: the shapes of x1 {x1.shape} and x2 {x2.shape} do "
                         "not broadcast") from None
    ax = norm_axis(axis, len(shape), "cosine_similarity")
    if tuple(x1.shape) != shape:
        x1 = broadcast_to(x1, list(shape))
    if tuple(x2.shape) != shape:
        x2 = broadcast_to(x2, list(shape))
    w12 = _stat.sum(x1 * x2, axis=ax)
    w1 = _stat.sum(x1 * x1, axis=ax)
    w2 = _stat.sum(x2 * x2, axis=ax)
    n12 = _math.sqrt(_math.clip(w1 * w2, min=eps * eps))
    return w12 / n12


def normalize(x, p=2, axis=1, epsilon=1e-12, name=None):
    """Divide x by its ``p``-norm along ``axis``: ``x / max(||x||_p, epsilon)``.

    Args:
        x (Tensor): floating point input.
        p (float): the norm order (any positive number, or ``float('inf')``).
        axis (int): the dim the norm runs over.
        epsilon (float): lower bound of the norm (avoids division by zero).
        name (str, optional): unused.

    Returns:
        Tensor: same shape as x.

    Example:
        >>> F.normalize(paddle.to_tensor([[3., 4.]]))   # [[0.6, 0.8]]
    """
    x = float_arg(x, "normalize")
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise TypeError(f"normalize: p must be a number, got {type(p).__name__}")
    ax = norm_axis(axis, x.ndim, "normalize")
    if x.ndim == 0:
        raise ValueError("normalize: x must be at least 1-D, got a 0-D tensor")
    p = float(p)
    if p == 2.0:
        n = _math.sqrt(_stat.sum(x * x, axis=ax, keepdim=True))
    elif p == 1.0:
        n = _stat.sum(_math.abs(x), axis=ax, keepdim=True)
    elif math.isinf(p) and p > 0:
        n = _stat.max(_math.abs(x), axis=ax, keepdim=True)
    elif p > 0:
        n = _math.pow(_stat.sum(_math.pow(_math.abs(x), p), axis=ax, keepdim=True), 1.0 / p)
    else:
        raise ValueError(f"normalize: p must be positive, got {p}")
    return x / _math.maximum(n, epsilon)


def label_smooth(label, prior_dist=None, epsilon=0.1, name=None):
    """Label smoothing: ``(1 - epsilon) * label + epsilon * prior`` (uniform prior
    ``1 / num_classes`` when ``prior_dist`` is None).

    Args:
        label (Tensor): ``[..., num_classes]`` float (usually one-hot).
        prior_dist (Tensor, optional): ``[1, num_classes]`` prior distribution.
        epsilon (float): the smoothing weight, in [0, 1].
        name (str, optional): unused.

    Returns:
        Tensor: same shape and dtype as label.
    """
    label = float_arg(label, "label_smooth", "label")
    if isinstance(epsilon, Tensor):
        epsilon = epsilon.item()
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise TypeError(f"label_smooth: epsilon must be a float, got {type(epsilon).__name__}")
    epsilon = float(epsilon)
    if not 0.0 <= epsilon <= 1.0:
        raise ValueError(f"label_smooth: epsilon must be between 0 and 1, got {epsilon}")
    if label.ndim == 0:
        raise ValueError("label_smooth: label must be at least 1-D [..., num_classes]")
    if prior_dist is None:
        return _math.scale(label, 1.0 - epsilon, epsilon / label.shape[-1])
    prior_dist = float_arg(prior_dist, "label_smooth", "prior_dist")
    if prior_dist.shape[-1] != label.shape[-1]:
        raise ValueError(f"label_smooth: prior_dist of shape {prior_dist.shape} does not match "
                         f"label of shape {label.shape} in the class dim")
    # the prior is a constant of the op (no gradient flows into it, as in Paddle)
    return _math.scale(label, 1.0 - epsilon) + _math.scale(prior_dist.detach(), epsilon)
