"""Resampling and vision functionals: interpolate/upsample, grid_sample, affine_grid and the
pixel/channel shuffles (``paddle.nn.functional`` vision ops).

Every interpolation mode Paddle offers is separable: the output is the input resampled along
each spatial axis in turn by a 1-D rule that reads a few input positions ("taps") per output
position, with weights. One small *plan* per call holds, for each resized axis, the tap indices
``idx[out, K]`` and weights ``w[out, K]`` (nearest K=1, linear K=2, bicubic K=4, area K = the
widest pooling window). The forward pass is one ``take`` + weighted sum per axis (exact, NaN
stays local, works on integer input for nearest); the backward pass multiplies the gradient by
the transposed per-axis matrix built from the same taps (one GEMM per axis, no scatter loops).
Source coordinates are computed in float32 like Paddle's kernels, so indices fall exactly where
Paddle's do.

``grid_sample`` gathers its 4 (2-D) or 8 (3-D) corner taps with ``take_along_axis`` and scatters
the input gradient back with one ``bincount`` per corner.
"""

from __future__ import annotations

import itertools
import numbers

import numpy as np

from ... import backend
from ...framework.engine import GRAD
from ...framework.op import apply, op
from ...framework.tensor import Tensor
from ...tensor._helpers import tensor_arg

__all__ = []

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_NATIVE = (_F32, _F64)
_FLOATS = ("float16", "bfloat16", "float32", "float64")


def _compute(a):
    """float32/float64 arrays as they are, everything else widened to float32."""
    return a if a.dtype in _NATIVE else a.astype(_F32)


def _is_bool(v) -> bool:
    return isinstance(v, (bool, np.bool_))


def _positive_int(v, op: str, what: str, msg_type: str, msg_pos: str) -> int:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{op}: {msg_type}, got {type(v).__name__} {v!r}")
    if v <= 0:
        raise ValueError(f"{op}: {msg_pos}, got {what} = {v}")
    return int(v)


def _check_dtype(x: Tensor, allowed, op: str, arg: str = "x", extra: str = ""):
    name = x.dtype.name
    if name not in allowed:
        raise TypeError(f"{op}: argument '{arg}' has dtype {name}, expected one of "
                        f"{list(allowed)}{extra}")


# ================================================================ interpolate

_MODES = ("linear", "bilinear", "trilinear", "nearest", "bicubic", "area")
_MODE_RANKS = {"linear": (3,), "bilinear": (4,), "bicubic": (4,), "trilinear": (5,),
               "nearest": (4, 5), "area": (3, 4, 5)}
_FORMATS = {3: ("NCW", "NWC"), 4: ("NCHW", "NHWC"), 5: ("NCDHW", "NDHWC")}
_CHANNEL_LAST = ("NWC", "NHWC", "NDHWC")
_LINEAR_DTYPES = ("uint8",) + _FLOATS
_MODE_DTYPES = {"nearest": ("uint8", "int32", "int64") + _FLOATS, "linear": _LINEAR_DTYPES,
                "bilinear": _LINEAR_DTYPES, "trilinear": _LINEAR_DTYPES, "bicubic": _FLOATS,
                "area": _FLOATS}
_CUBIC_A = -0.75


def _ratio(n_in: int, n_out: int, scale, align_corners: bool) -> np.float32:
    """Output-to-input coordinate ratio, in float32 as Paddle's kernels compute it."""
    if n_out <= 1:
        return np.float32(0.0)
    if align_corners:
        return np.float32(n_in - 1) / np.float32(n_out - 1)
    if scale is not None:
        return np.float32(1.0) / np.float32(scale)
    return np.float32(n_in) / np.float32(n_out)


def _half_pixel(ratio, d):
    """``ratio * (d + 0.5) - 0.5``: Paddle evaluates it in double (0.5 is a double literal)."""
    return np.float64(ratio) * (d.astype(_F64) + 0.5) - 0.5


def _nearest_taps(n_in, n_out, ratio, align_corners, align_mode, double):
    d = np.arange(n_out, dtype=_F32)
    src = ratio * d + np.float32(0.5) if align_corners else ratio * d
    idx = np.minimum(src.astype(np.int64), n_in - 1)
    return idx[:, None], None


def _linear_taps(n_in, n_out, ratio, align_corners, align_mode, double):
    d = np.arange(n_out, dtype=_F32)
    if align_corners or align_mode == 1:
        src = ratio * d
    else:
        # half-pixel centres, clamped at the first pixel
        # float32 arithmetic throughout, as Paddle's linear kernels
        src = np.maximum(ratio * (d + np.float32(0.5)) - np.float32(0.5), np.float32(0.0))
    i0 = np.minimum(src.astype(np.int64), n_in - 1)
    lam = (src - i0.astype(_F32)).astype(_F32)
    idx = np.stack([i0, np.minimum(i0 + 1, n_in - 1)], axis=1)
    w = np.stack([np.float32(1.0) - lam, lam], axis=1)
    return idx, w


def _cubic_taps(n_in, n_out, ratio, align_corners, align_mode, double):
    d = np.arange(n_out, dtype=_F32)
    if align_corners:
        src = (ratio * d).astype(_F64)
    else:
        # kept in double for float64 data, rounded to float otherwise (as Paddle's kernel)
        src = _half_pixel(ratio, d)
        if not double:
            src = src.astype(_F32).astype(_F64)
    base = np.floor(src)
    # the weights are computed in double and rounded to the data dtype when applied
    t = src - base
    a = _CUBIC_A

    def near(v):  # |v| <= 1 branch of the cubic convolution kernel
        return ((a + 2) * v - (a + 3)) * v * v + 1

    def far(v):  # 1 < |v| < 2 branch
        return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a

    w = np.stack([far(t + 1), near(t), near(1 - t), far(2 - t)], axis=1)
    idx = base.astype(np.int64)[:, None] + np.arange(-1, 3)[None, :]
    return np.clip(idx, 0, n_in - 1), w


def _area_taps(n_in, n_out, ratio, align_corners, align_mode, double):
    # adaptive average pooling windows [floor(i*in/out), ceil((i+1)*in/out))
    i = np.arange(n_out, dtype=np.int64)
    start = (i * n_in) // n_out
    end = ((i + 1) * n_in + n_out - 1) // n_out
    length = end - start
    k = np.arange(int(length.max()))[None, :]
    inside = k < length[:, None]
    idx = np.where(inside, start[:, None] + k, start[:, None])
    w = np.where(inside, 1.0 / length[:, None], 0.0)
    return idx, w


_TAPS = {"nearest": _nearest_taps, "linear": _linear_taps, "bilinear": _linear_taps,
         "trilinear": _linear_taps, "bicubic": _cubic_taps, "area": _area_taps}


def _gather_axis(x, axis, idx, w, xp):
    """Resample ``x`` along ``axis``: out[..., o, ...] = sum_k w[o, k] * x[..., idx[o, k], ...]."""
    n_out, k = idx.shape
    if w is None:
        return xp.take(x, xp.asarray(idx[:, 0]), axis=axis)
    # one take per tap, accumulated in place: cheaper than reducing a (..., out, K, ...) block
    wb = xp.asarray(w, dtype=x.dtype).reshape((n_out, k) + (1,) * (x.ndim - axis - 1))
    out = None
    for j in range(k):
        t = xp.take(x, xp.asarray(idx[:, j]), axis=axis)
        t *= wb[:, j]
        if out is None:
            out = t
        else:
            out += t
    return out


def _scatter_axis(g, axis, idx, w, n_in, xp):
    """The transpose of :func:`_gather_axis`: one GEMM with the dense (out, in) tap matrix."""
    n_out, k = idx.shape
    shape = g.shape
    lead = int(np.prod(shape[:axis]))
    trail = int(np.prod(shape[axis + 1:]))
    new_shape = shape[:axis] + (n_in,) + shape[axis + 1:]
    vals = 1.0 if w is None else w.reshape(-1)
    cols = np.repeat(np.arange(n_out), k)
    if trail == 1:
        m = np.zeros((n_out, n_in), dtype=g.dtype)
        np.add.at(m, (cols, idx.reshape(-1)), vals)
        return (g.reshape(lead, n_out) @ xp.asarray(m)).reshape(new_shape)
    # (in, out) @ (lead, out, trail) -> (lead, in, trail); the matrix must be C-contiguous, a
    # transposed view sends NumPy's batched matmul down a non-BLAS path (100x slower)
    mt = np.zeros((n_in, n_out), dtype=g.dtype)
    np.add.at(mt, (idx.reshape(-1), cols), vals)
    return xp.matmul(xp.asarray(mt), g.reshape(lead, n_out, trail)).reshape(new_shape)


def _resample_fwd(x, plan, xp):
    if not plan:
        return x.copy()
    for axis, idx, w, _ in plan:
        x = _gather_axis(x, axis, idx, w, xp)
    return x


def _resample_bwd(g, plan, xp):
    if not plan:
        return g.copy()
    for axis, idx, w, n_in in reversed(plan):
        g = _scatter_axis(g, axis, idx, w, n_in, xp)
    return g


# both are linear maps, each the other's transpose: that is their gradient rule
@op("interpolate", saves=(), grad=lambda M, x, out, g, plan: (
    M.op(_resample_t_kernel, g, plan=plan),))
def _resample_kernel(x, plan):
    dt = x.dtype
    xp = backend.get_array_module(x)
    weighted = any(w is not None for _, _, w, _ in plan)
    if dt.kind in "iu":
        # integer input: a pure gather (nearest), or float32 arithmetic truncated back
        out = _resample_fwd(x.astype(_F32) if weighted else x, plan, xp)
        return (out.astype(dt) if out.dtype != dt else out), None
    out = _resample_fwd(_compute(x), plan, xp)
    return (out.astype(dt) if out.dtype != dt else out), GRAD


@op("interpolate_grad", saves=(), grad=lambda M, g, out, gg, plan: (
    M.op(_resample_kernel, gg, plan=plan),))
def _resample_t_kernel(g, plan):
    """The transposed resampling (the gradient of :func:`_resample_kernel` as an op)."""
    dt = g.dtype
    xp = backend.get_array_module(g)
    out = _resample_bwd(_compute(g), plan, xp)
    return (out.astype(dt) if out.dtype != dt else out), GRAD


def _interp_size(size, nd: int, op: str) -> list:
    if isinstance(size, Tensor):
        if size.ndim != 1:
            raise ValueError(f"{op}: if size is a Tensor, its rank must be 1, but received "
                             f"{size.ndim} (shape {size.shape})")
        vals = size.numpy().tolist()
    elif isinstance(size, (list, tuple)):
        vals = []
        for s in size:
            if isinstance(s, Tensor):
                if s.size != 1:
                    raise ValueError(f"{op}: Tensor elements of 'size' must hold one value, got "
                                     f"shape {s.shape}")
                s = s.numpy().reshape(-1)[0].item()
            if isinstance(s, bool) or not isinstance(s, (numbers.Real, np.number)):
                raise TypeError(f"{op}: 'size' must contain ints or 1-element Tensors, got "
                                f"{s!r} in {list(size)}")
            vals.append(s)
    else:
        raise TypeError(f"{op}: 'size' must be a list, tuple or Tensor, got "
                        f"{type(size).__name__}")
    if len(vals) != nd:
        raise ValueError(f"{op}: the x and size should satisfy rank(x) - 2 == len(size); got "
                         f"len(size) = {len(vals)} for a {nd + 2}-D input")
    vals = [int(v) for v in vals]
    if any(v <= 0 for v in vals):
        raise ValueError(f"{op}: each dimension size given in 'size' must be greater than 0, "
                         f"got {vals}")
    return vals


def _interp_scale(scale, nd: int, op: str) -> list:
    if isinstance(scale, Tensor):
        vals = scale.numpy().astype(np.float64).reshape(-1).tolist()
        if scale.ndim > 1 or (len(vals) != 1 and len(vals) != nd):
            raise ValueError(f"{op}: scale_shape length should be {nd} for input {nd + 2}-D "
                             f"tensor; got a scale_factor Tensor of shape {scale.shape}")
        if len(vals) == 1:
            vals = vals * nd
    elif isinstance(scale, (list, tuple)):
        if len(scale) != nd:
            raise ValueError(f"{op}: scale_shape length should be {nd} for input {nd + 2}-D "
                             f"tensor; got {list(scale)}")
        vals = []
        for s in scale:
            if isinstance(s, Tensor):
                s = s.numpy().reshape(-1)[0].item()
            if _is_bool(s) or not isinstance(s, (numbers.Real, np.number)):
                raise TypeError(f"{op}: 'scale_factor' must contain numbers, got {s!r}")
            vals.append(float(s))
    elif isinstance(scale, (numbers.Real, np.number)) and not _is_bool(scale):
        vals = [float(scale)] * nd
    else:
        raise TypeError(f"{op}: Attr(scale)'s type should be float, int, list, tuple, or "
                        f"Tensor; got {type(scale).__name__}")
    if any(not v > 0 for v in vals):
        raise ValueError(f"{op}: Attr(scale) should be greater than zero, got {vals}")
    return vals


def interpolate(x, size=None, scale_factor=None, mode="nearest", align_corners=False,
                align_mode=0, data_format="NCHW", name=None):
    """Resize a batch of 1-D, 2-D or 3-D signals (images, volumes) by interpolation.

    Modes: ``'linear'`` (3-D input), ``'bilinear'`` and ``'bicubic'`` (4-D), ``'trilinear'``
    (5-D), ``'nearest'`` (4-D or 5-D; also integer input) and ``'area'`` (adaptive average
    pooling, 3-D to 5-D, needs ``size``).

    Source coordinates: with ``align_corners=True`` the corner pixels of input and output are
    aligned, ``src = dst * (in - 1) / (out - 1)``. Otherwise ``align_mode=0`` uses half-pixel
    centres, ``src = (dst + 0.5) * ratio - 0.5``, and ``align_mode=1`` uses
    ``src = dst * ratio``, with ``ratio = 1 / scale_factor`` when a scale is given and
    ``in / out`` otherwise. Nearest takes ``floor(dst * ratio)``.

    Args:
        x (Tensor): input of shape [N, C, W] / [N, C, H, W] / [N, C, D, H, W] (or the
            channel-last forms).
        size (list|tuple|Tensor, optional): output spatial size (ints or 1-element Tensors).
        scale_factor (float|list|tuple|Tensor, optional): multiplier of the spatial size; the
            output size is ``int(in * scale)``. Exactly one of size and scale_factor is given.
        mode (str): one of 'nearest', 'linear', 'bilinear', 'bicubic', 'trilinear', 'area'.
        align_corners (bool): align the corner pixels (linear-type and bicubic modes).
        align_mode (int): 0 (half-pixel) or 1 (``dst * ratio``) for linear-type modes.
        data_format (str): 'NCW'/'NWC', 'NCHW'/'NHWC' or 'NCDHW'/'NDHWC' by input rank.
        name (str, optional): unused.

    Returns:
        Tensor: the resized input, same dtype as x.

    Example:
        >>> x = paddle.rand([1, 3, 4, 4])
        >>> F.interpolate(x, scale_factor=2, mode='bilinear').shape
        [1, 3, 8, 8]
    """
    op = "interpolate"
    x = tensor_arg(x, op)
    if not isinstance(mode, str) or mode.lower() not in _MODES:
        raise ValueError(f"{op}: the 'mode' can only be 'area', 'linear', 'bilinear', "
                         f"'trilinear', 'bicubic' or 'nearest', got {mode!r}")
    mode = mode.lower()
    nd_x = x.ndim
    if nd_x not in _MODE_RANKS[mode]:
        ranks = " or ".join(f"{r}-D" for r in _MODE_RANKS[mode])
        raise ValueError(f"{op}: mode '{mode}' only supports {ranks} input, got a {nd_x}-D "
                         f"tensor of shape {x.shape}")
    if not _is_bool(align_corners):
        raise TypeError(f"{op}: align_corners should be a bool value, got "
                        f"{type(align_corners).__name__} {align_corners!r}")
    align_corners = bool(align_corners)
    if align_corners and mode == "nearest":
        raise ValueError(f"{op}: align_corners option can only be set with the interpolating "
                         "modes: linear | bilinear | bicubic | trilinear")
    if align_mode not in (0, 1) or _is_bool(align_mode):
        raise ValueError(f"{op}: align_mode can only be 0 or 1, got {align_mode!r}")
    if not isinstance(data_format, str):
        raise TypeError(f"{op}: data_format must be a str, got {type(data_format).__name__}")
    data_format = data_format.upper()
    if mode == "area":
        # Paddle's area mode accepts any data_format string; channel-last names are honoured
        channel_last = data_format in _CHANNEL_LAST
    else:
        if data_format not in _FORMATS[nd_x]:
            a, b = _FORMATS[nd_x]
            raise ValueError(f"{op}: got wrong value for param `data_format`: {data_format} "
                             f"received but only `{a}` or `{b}` supported for {nd_x}-D input")
        channel_last = data_format in _CHANNEL_LAST
    if size is None and scale_factor is None:
        raise ValueError(f"{op}: one of size and scale_factor must not be None")
    if size is not None and scale_factor is not None:
        raise ValueError(f"{op}: only one of size or scale_factor should be defined")
    if mode == "area" and size is None:
        raise ValueError(f"{op}: output size can not be None in AREA mode")
    _check_dtype(x, _MODE_DTYPES[mode], op, extra=f" for mode '{mode}'")
    if 0 in x.shape:
        raise ValueError(f"{op}: the input shape must not contain 0, got {x.shape}")

    nd = nd_x - 2
    axes = list(range(1, nd + 1)) if channel_last else list(range(2, nd + 2))
    in_sizes = [x.shape[a] for a in axes]
    if size is not None:
        out_sizes = _interp_size(size, nd, op)
        scales = [None] * nd
    else:
        scales = _interp_scale(scale_factor, nd, op)
        out_sizes = [int(n * s) for n, s in zip(in_sizes, scales)]
        if any(o <= 0 for o in out_sizes):
            raise ValueError(f"{op}: the output size {out_sizes} computed from input size "
                             f"{in_sizes} and scale_factor {scales} must be greater than 0")
    taps = _TAPS[mode]
    plan = []
    # Paddle copies the input when no spatial size changes; otherwise every axis is resampled
    # with its own ratio, including an axis whose size is unchanged under a scale_factor != 1.
    # The last spatial axis goes first: Paddle's bicubic interpolates along W, then H.
    if out_sizes != in_sizes:
        for a, n_in, n_out, s in reversed(list(zip(axes, in_sizes, out_sizes, scales))):
            if n_in == n_out and (mode == "area" or s in (None, 1.0)):
                continue  # provably the identity along this axis
            idx, w = taps(n_in, n_out, _ratio(n_in, n_out, s, align_corners), align_corners,
                          align_mode, x._data.dtype == _F64)
            plan.append((a, idx, w, n_in))
    return apply(_resample_kernel, x, plan=tuple(plan))


def upsample(x, size=None, scale_factor=None, mode="nearest", align_corners=False,
             align_mode=0, data_format="NCHW", name=None):
    """Resize a batch of signals; the same operation as :func:`interpolate`.

    Args:
        x (Tensor): 3-D, 4-D or 5-D input.
        size (list|tuple|Tensor, optional): output spatial size.
        scale_factor (float|list|tuple|Tensor, optional): multiplier of the spatial size.
        mode (str): 'nearest', 'linear', 'bilinear', 'bicubic', 'trilinear' or 'area'.
        align_corners (bool): align the corner pixels.
        align_mode (int): 0 or 1 (see :func:`interpolate`).
        data_format (str): layout of x.
        name (str, optional): unused.

    Returns:
        Tensor: the resized input.

    Example:
        >>> F.upsample(paddle.rand([1, 1, 2, 2]), size=[4, 4]).shape
        [1, 1, 4, 4]
    """
    return interpolate(x, size, scale_factor, mode, align_corners, align_mode, data_format, name)


# ================================================================ grid_sample

def _reflect(v, lo: float, span: float, xp):
    """Reflect ``v`` into [lo, lo + span] (a triangle wave); returns (value, d value / d v)."""
    if span <= 0:
        return xp.zeros_like(v), xp.zeros_like(v)
    u = v - lo
    sign = xp.where(u < 0, -1.0, 1.0).astype(v.dtype)
    u = xp.abs(u)
    # segments are (k*span, (k+1)*span]: a point exactly on the far edge is not yet mirrored,
    # which gives Paddle's derivative sign there
    flips = xp.maximum(xp.ceil(u / span) - 1, 0)
    extra = u - flips * span
    even = (flips % 2) == 0
    out = xp.where(even, extra, span - extra) + lo
    return out.astype(v.dtype), xp.where(even, sign, -sign)


def _grid_coord(c, size: int, padding: str, align_corners: bool, xp):
    """Normalized grid coordinate -> pixel coordinate along one axis, and its derivative."""
    if align_corners:
        scale = (size - 1) / 2.0
        pix = (c + 1) * scale
    else:
        scale = size / 2.0
        pix = ((c + 1) * size - 1) / 2.0
    deriv = xp.full(c.shape, scale, dtype=c.dtype)
    if padding == "zeros":
        return pix, deriv
    if padding == "reflection":
        if align_corners:
            pix, s = _reflect(pix, 0.0, float(size - 1), xp)
        else:
            pix, s = _reflect(pix, -0.5, float(size), xp)
        deriv = deriv * s
    inside = (pix >= 0) & (pix <= size - 1)
    deriv = xp.where(inside, deriv, 0)
    return xp.clip(pix, 0, size - 1), deriv


def _grid_corners(coords, sizes, mode: str, xp):
    """Per tap: (flat index into the spatial block, valid mask, weight, d weight / d coord)."""
    nd = len(sizes)
    strides = [int(np.prod(sizes[a + 1:])) for a in range(nd)]
    if mode == "nearest":
        # round half away from zero (C's round); Paddle's 2-D kernel bounds-checks the rounded
        # index, its 3-D kernel the unrounded coordinate
        ii = [xp.sign(c) * xp.floor(xp.abs(c) + 0.5) for c in coords]
        chk = ii if nd == 2 else coords
        valid = None
        flat = 0
        for a in range(nd):
            ok = (chk[a] >= 0) & (chk[a] <= sizes[a] - 1)
            valid = ok if valid is None else valid & ok
            flat = flat + xp.clip(ii[a], 0, sizes[a] - 1).astype(np.int64) * strides[a]
        return [(flat, valid, valid.astype(coords[0].dtype), None)]
    lo = [xp.floor(c) for c in coords]
    fr = [c - f for c, f in zip(coords, lo)]
    taps = []
    for bits in itertools.product((0, 1), repeat=nd):
        flat = 0
        valid = None
        ws = []
        for a, b in enumerate(bits):
            i = lo[a] + b
            ok = (i >= 0) & (i <= sizes[a] - 1)
            valid = ok if valid is None else valid & ok
            flat = flat + xp.clip(i, 0, sizes[a] - 1).astype(np.int64) * strides[a]
            ws.append(fr[a] if b else 1 - fr[a])
        w = ws[0]
        for v in ws[1:]:
            w = w * v
        dws = []
        for a, b in enumerate(bits):
            d = None
            for o in range(nd):
                if o != a:
                    d = ws[o] if d is None else d * ws[o]
            d = xp.ones_like(w) if d is None else d
            dws.append(d if b else -d)
        taps.append((flat, valid, xp.where(valid, w, 0), dws))
    return taps


@op("grid_sample")
def _grid_sample_kernel(x, grid, mode, padding_mode, align_corners):
    xp = backend.get_array_module(x)
    dt = x.dtype
    xc, gc = _compute(x), _compute(grid)
    n, c = x.shape[:2]
    sizes = x.shape[2:]
    nd = len(sizes)
    out_sp = grid.shape[1:-1]
    p = int(np.prod(out_sp))
    hw = int(np.prod(sizes))
    g = gc.reshape(n, p, nd)
    # grid component k indexes spatial axis nd-1-k (x runs along the last axis, the width)
    coords, derivs = [], []
    for a in range(nd):
        pix, d = _grid_coord(g[..., nd - 1 - a], sizes[a], padding_mode, align_corners, xp)
        coords.append(pix)
        derivs.append(d)
    taps = _grid_corners(coords, sizes, mode, xp)
    xf = xc.reshape(n, c, hw)

    def gather(flat, valid):
        v = xp.take_along_axis(xf, xp.broadcast_to(flat[:, None, :], (n, c, p)), axis=2)
        return xp.where(valid[:, None, :], v, 0)

    out = None
    for flat, valid, w, _ in taps:
        term = gather(flat, valid) * w[:, None, :]
        out = term if out is None else out + term
    out = out.reshape((n, c) + tuple(out_sp))
    out = out.astype(dt) if out.dtype != dt else out

    def backward(gout):
        go = _compute(gout).reshape(n, c, p)
        base = (xp.arange(n * c, dtype=np.int64) * hw).reshape(n, c, 1)
        gx = None
        for flat, _valid, w, _ in taps:
            contrib = xp.bincount((base + flat[:, None, :]).reshape(-1),
                                  weights=(go * w[:, None, :]).reshape(-1).astype(_F64),
                                  minlength=n * c * hw)
            gx = contrib if gx is None else gx + contrib
        gx = gx.reshape(x.shape).astype(dt)
        if mode == "nearest":
            return gx, xp.zeros(grid.shape, dtype=grid.dtype)
        dcoord = [None] * nd
        for flat, valid, _w, dws in taps:
            gv = (go * gather(flat, valid)).sum(axis=1)
            for a in range(nd):
                t = gv * dws[a]
                dcoord[a] = t if dcoord[a] is None else dcoord[a] + t
        gg = xp.stack([dcoord[nd - 1 - k] * derivs[nd - 1 - k] for k in range(nd)], axis=-1)
        return gx, gg.reshape(grid.shape).astype(grid.dtype)

    return out, backward


def grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=True, name=None):
    """Sample ``x`` at the normalized locations of ``grid`` (spatial transformer sampling).

    ``grid[..., 0]`` is the x (width) coordinate, ``grid[..., 1]`` y (height) and, for 5-D
    input, ``grid[..., 2]`` z (depth), each in [-1, 1]: with ``align_corners=True`` -1 and 1 are
    the centres of the corner pixels, otherwise their outer edges. Out-of-range locations read
    zeros (``'zeros'``), the nearest border pixel (``'border'``) or the input mirrored at its
    border (``'reflection'``). Size-1 spatial dims are allowed.

    Args:
        x (Tensor): input [N, C, H, W] or [N, C, D, H, W], float32 or float64.
        grid (Tensor): [N, H_out, W_out, 2] or [N, D_out, H_out, W_out, 3], same dtype as x.
        mode (str): 'bilinear' or 'nearest'.
        padding_mode (str): 'zeros', 'border' or 'reflection'.
        align_corners (bool): see above.
        name (str, optional): unused.

    Returns:
        Tensor: [N, C, H_out, W_out] (or [N, C, D_out, H_out, W_out]).

    Example:
        >>> x = paddle.rand([1, 1, 3, 3])
        >>> grid = paddle.zeros([1, 2, 2, 2])  # every location samples the centre pixel
        >>> F.grid_sample(x, grid).shape
        [1, 1, 2, 2]
    """
    op = "grid_sample"
    x = tensor_arg(x, op)
    grid = tensor_arg(grid, op, "grid")
    if mode not in ("bilinear", "nearest"):
        raise ValueError(f"{op}: the mode of grid sample function should be in "
                         f"['bilinear', 'nearest'], but got: {mode}")
    if padding_mode not in ("zeros", "reflection", "border"):
        raise ValueError(f"{op}: the padding mode of grid sample function should be in "
                         f"['zeros', 'reflection', 'border'], but got: {padding_mode}")
    if not _is_bool(align_corners):
        raise ValueError(f"{op}: the align corners should be bool, but got: {align_corners!r}")
    if x.ndim not in (4, 5):
        raise ValueError(f"{op}: Input(X) should be a 4-D or 5-D Tensor, but received shape "
                         f"{x.shape}")
    nd = x.ndim - 2
    if grid.ndim != x.ndim or grid.shape[-1] != nd:
        want = "[N, H_out, W_out, 2]" if nd == 2 else "[N, D_out, H_out, W_out, 3]"
        raise ValueError(f"{op}: for x of shape {x.shape}, grid should have shape {want}, but "
                         f"received {grid.shape}")
    if grid.shape[0] != x.shape[0]:
        raise ValueError(f"{op}: Input(X) and Input(Grid) dimension[0] should be equal, but "
                         f"received X shape {x.shape} and Grid shape {grid.shape}")
    _check_dtype(x, _FLOATS, op)
    if grid.dtype != x.dtype:
        raise TypeError(f"{op}: grid dtype {grid.dtype.name} differs from x dtype "
                        f"{x.dtype.name}; they must match")
    if 0 in x.shape[2:] and grid.size:
        raise ValueError(f"{op}: cannot sample from an input with an empty spatial dim, x "
                         f"shape {x.shape}")
    return apply(_grid_sample_kernel, x, grid, mode=mode, padding_mode=padding_mode,
                 align_corners=bool(align_corners))


# ================================================================ affine_grid

def _base_line(n: int, align_corners: bool):
    if align_corners:
        return np.linspace(-1.0, 1.0, n)
    return (np.arange(n, dtype=np.float64) * 2 + 1) / n - 1


@op("affine_grid", saves=())
def _affine_kernel(theta, sizes, align_corners):
    xp = backend.get_array_module(theta)
    dt = theta.dtype
    tc = _compute(theta)
    nd = len(sizes)
    lines = [_base_line(s, align_corners) for s in sizes]
    mesh = np.meshgrid(*lines, indexing="ij")
    # homogeneous coordinates [x, y, (z,) 1] with x along the last (width) axis
    cols = [mesh[nd - 1 - k].reshape(-1) for k in range(nd)]
    base = xp.asarray(np.stack(cols + [np.ones(cols[0].shape)], axis=1), dtype=tc.dtype)
    out = xp.matmul(base[None], xp.swapaxes(tc, 1, 2))
    n = theta.shape[0]
    out = out.reshape((n,) + tuple(sizes) + (nd,))
    out = out.astype(dt) if out.dtype != dt else out

    def backward(g):
        gm = _compute(g).reshape(n, -1, nd)
        r = xp.matmul(xp.swapaxes(gm, 1, 2), base)
        return (r.astype(dt) if r.dtype != dt else r,)

    return out, backward


def affine_grid(theta, out_shape, align_corners=True, name=None):
    """Sampling grid of a batch of affine transforms, for :func:`grid_sample`.

    Args:
        theta (Tensor): [N, 2, 3] (2-D) or [N, 3, 4] (3-D) affine matrices, float32/float64.
        out_shape (list|tuple|Tensor): output size [N, C, H, W] or [N, C, D, H, W].
        align_corners (bool): if True, -1 and 1 are the centres of the corner pixels.
        name (str, optional): unused.

    Returns:
        Tensor: grid of shape [N, H, W, 2] (or [N, D, H, W, 3]).

    Example:
        >>> theta = paddle.to_tensor([[[1., 0., 0.], [0., 1., 0.]]])
        >>> F.affine_grid(theta, [1, 1, 2, 3]).shape
        [1, 2, 3, 2]
    """
    op = "affine_grid"
    theta = tensor_arg(theta, op, "theta")
    if isinstance(out_shape, Tensor):
        shape = [int(v) for v in out_shape.numpy().reshape(-1).tolist()]
    elif isinstance(out_shape, (list, tuple)):
        shape = []
        for s in out_shape:
            if isinstance(s, Tensor):
                s = s.numpy().reshape(-1)[0].item()
            if _is_bool(s) or not isinstance(s, (numbers.Integral, np.integer)):
                raise TypeError(f"{op}: out_shape must contain ints, got {s!r}")
            shape.append(int(s))
    else:
        raise TypeError(f"{op}: out_shape must be a list, tuple or Tensor, got "
                        f"{type(out_shape).__name__}")
    if len(shape) not in (4, 5):
        raise ValueError(f"{op}: out_shape should be [N, C, H, W] or [N, C, D, H, W], got "
                         f"{shape}")
    if any(s <= 0 for s in shape[2:]):
        raise ValueError(f"{op}: the spatial sizes in out_shape must be positive, got {shape}")
    if not _is_bool(align_corners):
        raise TypeError(f"{op}: align_corners should be a bool, got {align_corners!r}")
    _check_dtype(theta, _FLOATS, op, "theta")
    nd = len(shape) - 2
    if theta.ndim != 3 or theta.shape[1:] != [nd, nd + 1]:
        raise ValueError(f"{op}: theta should have shape [N, {nd}, {nd + 1}] for an out_shape "
                         f"of rank {len(shape)}, got {theta.shape}")
    return apply(_affine_kernel, theta, sizes=tuple(shape[2:]), align_corners=bool(align_corners))


# ================================================================ pixel / channel shuffles

def _shuffle_grad(M, x, out, g, pre, perm, post):
    # the adjoint of a shuffle is the inverse shuffle
    mid = tuple(pre[p] for p in perm)
    inv = tuple(int(i) for i in np.argsort(perm))
    return (M.op(_shuffle_kernel, g, pre=mid, perm=inv, post=tuple(M.value(x).shape)),)


@op("shuffle", saves=(), grad=_shuffle_grad)
def _shuffle_kernel(x, pre, perm, post):
    """reshape(pre) -> transpose(perm) -> reshape(post); the gradient is the inverse."""
    return x.reshape(pre).transpose(perm).reshape(post), GRAD


def _nchw_arg(x, data_format, op):
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"{op}: Attr(data_format) should be 'NCHW' or 'NHWC', but received "
                         f"{data_format!r}")
    if x.ndim != 4:
        raise ValueError(f"{op}: input should be a 4-D tensor of format [N, C, H, W] or "
                         f"[N, H, W, C], but got shape {x.shape}")


def pixel_shuffle(x, upscale_factor, data_format="NCHW", name=None):
    """Rearrange [N, C*r*r, H, W] into [N, C, H*r, W*r] (sub-pixel convolution output).

    Args:
        x (Tensor): 4-D floating point input (an integer x raises TypeError, as in Paddle).
        upscale_factor (int): the factor r.
        data_format (str): 'NCHW' or 'NHWC'.
        name (str, optional): unused.

    Returns:
        Tensor: [N, C, H*r, W*r] (or [N, H*r, W*r, C]).

    Example:
        >>> F.pixel_shuffle(paddle.rand([2, 9, 4, 4]), 3).shape
        [2, 1, 12, 12]
    """
    op = "pixel_shuffle"
    x = tensor_arg(x, op)
    _check_dtype(x, _FLOATS, op)
    r = _positive_int(upscale_factor, op, "upscale_factor", "upscale factor must be int type",
                      "upscale_factor should be positive")
    _nchw_arg(x, data_format, op)
    if data_format == "NCHW":
        n, c, h, w = x.shape
    else:
        n, h, w, c = x.shape
    if c % (r * r):
        raise ValueError(f"{op}: the square of upscale_factor ({r * r}) should divide the "
                         f"number of channels ({c}); x shape {x.shape}")
    oc = c // (r * r)
    if data_format == "NCHW":
        pre, perm, post = (n, oc, r, r, h, w), (0, 1, 4, 2, 5, 3), (n, oc, h * r, w * r)
    else:
        pre, perm, post = (n, h, w, oc, r, r), (0, 1, 4, 2, 5, 3), (n, h * r, w * r, oc)
    return apply(_shuffle_kernel, x, pre=pre, perm=perm, post=post)


def pixel_unshuffle(x, downscale_factor, data_format="NCHW", name=None):
    """Rearrange [N, C, H*r, W*r] into [N, C*r*r, H, W]; the inverse of :func:`pixel_shuffle`.

    Args:
        x (Tensor): 4-D floating point input (an integer x raises TypeError, as in Paddle).
        downscale_factor (int): the factor r; it must divide H and W.
        data_format (str): 'NCHW' or 'NHWC'.
        name (str, optional): unused.

    Returns:
        Tensor: [N, C*r*r, H/r, W/r] (or [N, H/r, W/r, C*r*r]).

    Example:
        >>> F.pixel_unshuffle(paddle.rand([1, 1, 6, 6]), 3).shape
        [1, 9, 2, 2]
    """
    op = "pixel_unshuffle"
    x = tensor_arg(x, op)
    _check_dtype(x, _FLOATS, op)
    r = _positive_int(downscale_factor, op, "downscale_factor",
                      "Downscale factor must be int type", "Downscale factor must be positive")
    _nchw_arg(x, data_format, op)
    if data_format == "NCHW":
        n, c, h, w = x.shape
    else:
        n, h, w, c = x.shape
    if h % r or w % r:
        raise ValueError(f"{op}: downscale factor ({r}) should divide both height ({h}) and "
                         f"width ({w}); x shape {x.shape}")
    oh, ow = h // r, w // r
    if data_format == "NCHW":
        pre, perm, post = (n, c, oh, r, ow, r), (0, 1, 3, 5, 2, 4), (n, c * r * r, oh, ow)
    else:
        pre, perm, post = (n, oh, r, ow, r, c), (0, 1, 3, 5, 2, 4), (n, oh, ow, c * r * r)
    return apply(_shuffle_kernel, x, pre=pre, perm=perm, post=post)


def channel_shuffle(x, groups, data_format="NCHW", name=None):
    """Interleave the channels of ``groups`` groups (ShuffleNet's channel shuffle).

    Args:
        x (Tensor): 4-D floating point input (an integer x raises TypeError, as in Paddle).
        groups (int): number of groups; it must divide the channel count.
        data_format (str): 'NCHW' or 'NHWC'.
        name (str, optional): unused.

    Returns:
        Tensor: same shape as x, channels reordered from [g, C/g] to [C/g, g].

    Example:
        >>> x = paddle.arange(4, dtype='float32').reshape([1, 4, 1, 1])
        >>> F.channel_shuffle(x, 2).flatten()  # [0., 2., 1., 3.]
    """
    op = "channel_shuffle"
    x = tensor_arg(x, op)
    _check_dtype(x, _FLOATS, op)
    g = _positive_int(groups, op, "groups", "groups must be int type", "groups must be positive")
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"{op}: Attr(data_format) should be 'NCHW' or 'NHWC', but received "
                         f"{data_format!r}")
    if x.ndim != 4:
        raise ValueError(f"{op}: input x should be a 4-D tensor, but received x with the shape "
                         f"of {x.shape}")
    if data_format == "NCHW":
        n, c, h, w = x.shape
    else:
        n, h, w, c = x.shape
    if c % g:
        raise ValueError(f"{op}: the number of groups ({g}) should divide the number of "
                         f"channels ({c}); x shape {x.shape}")
    if data_format == "NCHW":
        pre, perm = (n, g, c // g, h, w), (0, 2, 1, 3, 4)
    else:
        pre, perm = (n, h, w, g, c // g), (0, 1, 2, 4, 3)
    return apply(_shuffle_kernel, x, pre=pre, perm=perm, post=tuple(x.shape))
