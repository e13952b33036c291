"""Image operations on NumPy ``HWC`` arrays.

Paddle runs these through OpenCV. paddle_hl does not depend on OpenCV, so this module computes
the same results in NumPy, following OpenCV's conventions: integer pixel centres, round-to-nearest
on integer output, float source coordinates in the warps (as OpenCV >= 4.11 computes them), and
a constant border that feeds the taps falling outside the image. A 2-D array stays 2-D and an
``HxWx1`` array keeps its channel axis.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = []

_INTERPS = ("nearest", "bilinear", "area", "bicubic", "lanczos")
_PAD_MODES = ("constant", "edge", "reflect", "symmetric")


def _check_interp(interpolation, op, allowed=_INTERPS):
    if interpolation not in allowed:
        raise ValueError(
            f"{op}: interpolation {interpolation!r} is not supported for numpy.ndarray images; "
            f"expected one of {list(allowed)}")


def _finish(out, dtype):
    """Round and saturate like OpenCV when the input is an integer image."""
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return np.clip(np.rint(out), info.min, info.max).astype(dtype)
    return out.astype(dtype, copy=False)


def to_tensor(pic, data_format="CHW"):
    """Convert an ``HWC`` (or ``HW``) array into a paddle_hl Tensor; uint8 is scaled to [0, 1]."""
    import paddle_hl as paddle

    if data_format not in ("CHW", "HWC"):
        raise ValueError(f"to_tensor: data_format should be 'CHW' or 'HWC', got {data_format!r}")
    if pic.ndim == 2:
        pic = pic[:, :, None]
    arr = pic.transpose(2, 0, 1) if data_format == "CHW" else pic
    if arr.dtype == np.uint8:
        return paddle.to_tensor(np.ascontiguousarray(arr, dtype=np.float32) * np.float32(1 / 255))
    return paddle.to_tensor(np.ascontiguousarray(arr))


# --------------------------------------------------------------------------- resize

def _taps_linear(n_in, n_out):
    scale = n_in / n_out
    f = (np.arange(n_out) + 0.5) * scale - 0.5
    s = np.floor(f)
    frac = f - s
    s = s.astype(np.int64)
    low = s < 0
    frac[low], s[low] = 0.0, 0
    high = s >= n_in - 1
    frac[high], s[high] = 0.0, n_in - 1
    idx = np.stack([s, np.minimum(s + 1, n_in - 1)], 1)
    return idx, np.stack([1.0 - frac, frac], 1)


def _cubic_weights(t):
    # Keys' cubic with a = -0.75, OpenCV's choice; t is the offset of the sample from tap 0
    a = -0.75
    x = np.stack([1.0 + t, t, 1.0 - t, 2.0 - t], 1)
    ax = np.abs(x)
    near = ((a + 2) * ax - (a + 3)) * ax * ax + 1
    far = ((a * ax - 5 * a) * ax + 8 * a) * ax - 4 * a
    return np.where(ax <= 1, near, far)


def _taps_cubic(n_in, n_out):
    f = (np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5
    s = np.floor(f)
    frac = f - s
    idx = np.clip(s.astype(np.int64)[:, None] + np.arange(-1, 3), 0, n_in - 1)
    return idx, _cubic_weights(frac)


def _taps_lanczos(n_in, n_out):
    f = (np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5
    s = np.floor(f)
    frac = f - s
    idx = np.clip(s.astype(np.int64)[:, None] + np.arange(-3, 5), 0, n_in - 1)
    t = frac[:, None] + 3 - np.arange(8)
    w = np.sinc(t) * np.sinc(t / 4.0)
    return idx, w / w.sum(1, keepdims=True)


def _taps_area_box(n_in, n_out):
    """Shrinking: each output pixel averages the source pixels under it, by overlap length."""
    scale = n_in / n_out
    width = int(math.ceil(scale)) + 1
    d = np.arange(n_out)[:, None]
    idx = np.floor(d[:, 0] * scale).astype(np.int64)[:, None] + np.arange(width)
    lo = np.maximum(d * scale, idx)
    hi = np.minimum((d + 1) * scale, idx + 1)
    w = np.clip(hi - lo, 0, None) / scale
    return np.clip(idx, 0, n_in - 1), w


def _taps_area_linear(n_in, n_out):
    """OpenCV's INTER_AREA when an axis grows: a linear filter with clipped fractions."""
    scale = n_in / n_out
    inv = 1.0 / scale
    d = np.arange(n_out)
    s = np.floor(d * scale).astype(np.int64)
    frac = (d + 1) - (s + 1) * inv
    frac = np.where(frac <= 0, 0.0, frac - np.floor(frac))
    high = s >= n_in - 1
    frac[high], s[high] = 0.0, n_in - 1
    idx = np.stack([s, np.minimum(s + 1, n_in - 1)], 1)
    return idx, np.stack([1.0 - frac, frac], 1)


def _apply_taps(arr, axis, idx, w):
    """Resample ``arr`` along ``axis`` with per-output tap indices and weights."""
    taken = np.take(arr, idx, axis=axis)  # axis becomes (n_out, taps)
    shape = [1] * taken.ndim
    shape[axis], shape[axis + 1] = w.shape
    return (taken * w.reshape(shape).astype(taken.dtype)).sum(axis + 1)


def _resize_array(img, oh, ow, interpolation):
    h, w = img.shape[:2]
    if (oh, ow) == (h, w):
        return img.copy()
    if interpolation == "nearest":
        ys = np.minimum(np.floor(np.arange(oh) * (1.0 / (oh / h))).astype(np.int64), h - 1)
        xs = np.minimum(np.floor(np.arange(ow) * (1.0 / (ow / w))).astype(np.int64), w - 1)
        return img[ys][:, xs]
    taps = {"bilinear": _taps_linear, "bicubic": _taps_cubic, "lanczos": _taps_lanczos}
    if interpolation == "area":
        # OpenCV averages only when both axes shrink
        taps_fn = _taps_area_box if h / oh >= 1 and w / ow >= 1 else _taps_area_linear
        fy, fx = taps_fn(h, oh), taps_fn(w, ow)
    else:
        fy, fx = taps[interpolation](h, oh), taps[interpolation](w, ow)
    work = img.astype(np.float64 if img.dtype == np.float64 else np.float32)
    out = _apply_taps(_apply_taps(work, 0, *fy), 1, *fx)
    return _finish(out, img.dtype)


def resize(img, size, interpolation="bilinear"):
    """Resize an ``HWC`` array; an int ``size`` matches the shorter edge."""
    _check_interp(interpolation, "resize")
    h, w = img.shape[:2]
    if isinstance(size, int):
        if (w <= h and w == size) or (h <= w and h == size):
            return img
        if w < h:
            oh, ow = int(size * h / w), size
        else:
            oh, ow = size, int(size * w / h)
    else:
        oh, ow = int(size[0]), int(size[1])
    if oh <= 0 or ow <= 0:
        raise ValueError(f"resize: output size must be positive, got {(oh, ow)}")
    return _resize_array(img, oh, ow, interpolation)


# --------------------------------------------------------------------------- pad / crop / flip

def pad(img, padding, fill=0, padding_mode="constant"):
    """Pad an ``HWC`` array; ``padding`` is an int, (left/right, top/bottom) or (l, t, r, b)."""
    left, top, right, bottom = padding
    widths = [(top, bottom), (left, right)] + [(0, 0)] * (img.ndim - 2)
    if padding_mode != "constant":
        np_mode = {"edge": "edge", "reflect": "reflect", "symmetric": "symmetric"}[padding_mode]
        return np.pad(img, widths, mode=np_mode)
    out = np.empty((img.shape[0] + top + bottom, img.shape[1] + left + right) + img.shape[2:],
                   dtype=img.dtype)
    out[...] = _fill_value(fill, img)
    out[top:top + img.shape[0], left:left + img.shape[1]] = img
    return out


def _fill_value(fill, img):
    """A fill number applies to every channel; a sequence gives one value per channel."""
    if isinstance(fill, numbers.Number):
        return fill
    vals = np.asarray(fill, dtype=np.float64).ravel()
    channels = img.shape[2] if img.ndim == 3 else 1
    if vals.size == 1:
        return vals[0]
    if vals.size < channels:
        raise ValueError(f"fill {tuple(fill)} has fewer values than the image's {channels} "
                         f"channels")
    return vals[:channels] if img.ndim == 3 else vals[0]


def crop(img, top, left, height, width):
    """Crop ``img[top:top+height, left:left+width]`` (a view, as Paddle)."""
    return img[top:top + height, left:left + width, ...]


def center_crop(img, output_size):
    """Crop the centre ``(th, tw)`` region."""
    h, w = img.shape[:2]
    th, tw = output_size
    return crop(img, int(round((h - th) / 2.0)), int(round((w - tw) / 2.0)), th, tw)


def hflip(img):
    """Mirror left-right (a new array)."""
    return img[:, ::-1].copy()


def vflip(img):
    """Mirror top-bottom (a new array)."""
    return img[::-1].copy()


# --------------------------------------------------------------------------- colour

def _lut(img, table):
    return table[img.astype(np.uint8)]


def adjust_brightness(img, brightness_factor):
    """Scale intensities by ``brightness_factor`` through a truncating uint8 table."""
    table = np.clip(np.arange(256) * brightness_factor, 0, 255).astype(np.uint8)
    return _lut(img, table)


def adjust_contrast(img, contrast_factor):
    """Stretch intensities around 74 (Paddle's fixed pivot for arrays) by ``contrast_factor``."""
    table = np.clip((np.arange(256) - 74) * contrast_factor + 74, 0, 255).astype(np.uint8)
    return _lut(img, table)


def _gray_u8(img):
    # OpenCV's RGB2GRAY fixed point: 14-bit weights that sum to 16384
    r, g, b = (img[..., i].astype(np.int64) for i in range(3))
    return ((r * 4899 + g * 9617 + b * 1868 + (1 << 13)) >> 14).astype(np.uint8)


def _gray(img):
    if img.ndim == 2 or img.shape[2] == 1:
        return img.reshape(img.shape[:2])
    if img.dtype == np.uint8:
        return _gray_u8(img)
    f = img.astype(np.float32)
    g = f[..., 0] * np.float32(0.299) + f[..., 1] * np.float32(0.587) \
        + f[..., 2] * np.float32(0.114)
    return _finish(g, img.dtype)


def adjust_saturation(img, saturation_factor):
    """Blend the image with its grayscale version: 0 is gray, 1 the original."""
    dtype = img.dtype
    if img.ndim == 2 or img.shape[2] == 1:
        return img.copy()
    f = img.astype(np.float32)
    gray = _gray(img).astype(np.float32)[..., None]
    out = f * np.float32(saturation_factor) + gray * np.float32(1 - saturation_factor)
    return np.clip(out, 0, 255).astype(dtype)


def _bgr_to_hsv_full(img):
    """OpenCV's 8-bit BGR2HSV_FULL: hue in [0, 256), integer table arithmetic."""
    b, g, r = (img[..., i].astype(np.int64) for i in range(3))
    v = np.maximum(np.maximum(b, g), r)
    diff = v - np.minimum(np.minimum(b, g), r)
    shift = 12
    idx = np.arange(256)
    with np.errstate(divide="ignore"):
        sdiv = np.where(idx > 0, np.rint((255 << shift) / np.maximum(idx, 1)), 0).astype(np.int64)
        hdiv = np.where(idx > 0, np.rint((256 << shift) / (6.0 * np.maximum(idx, 1))),
                        0).astype(np.int64)
    s = (diff * sdiv[v] + (1 << (shift - 1))) >> shift
    h = np.where(v == r, g - b, np.where(v == g, b - r + 2 * diff, r - g + 4 * diff))
    h = (h * hdiv[diff] + (1 << (shift - 1))) >> shift
    h = np.where(h < 0, h + 256, h)
    return h, s, v


def _hsv_full_to_bgr(h, s, v):
    """OpenCV's 8-bit HSV2BGR_FULL: float32 sector formula, rounded back to uint8.

    OpenCV reads the hue back with a range of 255 (it writes it with 256).
    """
    hf = h.astype(np.float32) * np.float32(6.0 / 255)
    sf = s.astype(np.float32) * np.float32(1.0 / 255)
    vf = v.astype(np.float32) * np.float32(1.0 / 255)
    hf = np.where(hf >= 6, hf - 6, hf)
    sector = np.floor(hf)
    frac = hf - sector
    sector = sector.astype(np.int64) % 6
    tab = np.stack([vf, vf * (1 - sf), vf * (1 - sf * frac), vf * (1 - sf * (1 - frac))])
    order = np.array([[1, 3, 0], [1, 0, 2], [3, 0, 1], [0, 2, 1], [0, 1, 3], [2, 1, 0]])
    pick = order[sector]  # (..., 3): which tab entry feeds b, g, r
    out = np.take_along_axis(np.moveaxis(tab, 0, -1), pick, axis=-1)
    gray = (s == 0)[..., None]
    out = np.where(gray, vf[..., None], out)
    return np.clip(np.rint(out * 255), 0, 255).astype(np.uint8)


def adjust_hue(img, hue_factor):
    """Rotate the hue channel by ``hue_factor`` of a turn (OpenCV's BGR hue, as Paddle)."""
    dtype = img.dtype
    if img.ndim == 2 or img.shape[2] == 1:
        return img.copy()
    u8 = img.astype(np.uint8)
    h, s, v = _bgr_to_hsv_full(u8)
    h = (h + int(hue_factor * 255)) % 256
    return _hsv_full_to_bgr(h, s, v).astype(dtype)


def to_grayscale(img, num_output_channels=1):
    """Convert an RGB array to gray with OpenCV's weights; 1 or 3 output channels."""
    gray = _gray(img)[..., None]
    if num_output_channels == 1:
        return gray
    return np.repeat(gray, 3, axis=2)


def normalize(img, mean, std, data_format="CHW", to_rgb=False):
    """``(img - mean) / std`` per channel, in float32."""
    shape = (-1, 1, 1) if data_format == "CHW" else (1, 1, -1)
    mean = np.float32(np.array(mean).reshape(shape))
    std = np.float32(np.array(std).reshape(shape))
    if to_rgb:
        img = img[..., ::-1]
    return (img - mean) / std


def erase(img, i, j, h, w, v, inplace=False):
    """Set ``img[i:i+h, j:j+w]`` to ``v``."""
    if not inplace:
        img = img.copy()
    img[i:i + h, j:j + w, ...] = v
    return img


# --------------------------------------------------------------------------- warps

def _invert_affine(m):
    a, b, c, d, e, f = m
    det = a * e - b * d
    if det == 0:
        raise ValueError("the affine matrix is singular")
    ia, ib, id_, ie = e / det, -b / det, -d / det, a / det
    return [ia, ib, -(ia * c + ib * f), id_, ie, -(id_ * c + ie * f)]


def _sample(img, xi, yi, fx, fy, interpolation, fill):
    """Gather ``img`` at integer taps (xi, yi) with fractions (fx, fy) in [0, 1).

    Taps outside the image read the constant border ``fill``.
    """
    h, w = img.shape[:2]
    squeeze = img.ndim == 2
    src = img[..., None] if squeeze else img
    c = src.shape[2]
    border = np.broadcast_to(np.asarray(_fill_value(fill, src), dtype=np.float64), (c,))
    # pad by the filter reach so every tap index lands inside the padded array
    p = 3
    padded = np.empty((h + 2 * p, w + 2 * p, c), np.float64)
    padded[...] = border
    padded[p:p + h, p:p + w] = src
    if interpolation == "nearest":
        offs, wx, wy = [0], np.ones(xi.shape + (1,)), np.ones(yi.shape + (1,))
    elif interpolation == "bilinear":
        tx, ty = fx, fy
        offs = [0, 1]
        wx, wy = np.stack([1 - tx, tx], -1), np.stack([1 - ty, ty], -1)
    else:
        offs = [-1, 0, 1, 2]
        wx = _cubic_weights(fx.ravel()).reshape(fx.shape + (4,))
        wy = _cubic_weights(fy.ravel()).reshape(fy.shape + (4,))
    out = np.zeros(xi.shape + (c,), np.float64)
    # a tap far outside maps onto the border band of the padded array
    for ky, oy in enumerate(offs):
        yy = np.clip(yi + oy + p, 0, h + 2 * p - 1)
        for kx, ox in enumerate(offs):
            xx = np.clip(xi + ox + p, 0, w + 2 * p - 1)
            out += padded[yy, xx] * (wy[..., ky] * wx[..., kx])[..., None]
    out = _finish(out, img.dtype)
    return out[..., 0] if squeeze else out


def _sample_float(img, xs, ys, interpolation, fill):
    """Interpolate at float source coordinates (OpenCV >= 4.11 keeps them unquantised)."""
    lim = float(np.iinfo(np.int32).max // 2)
    xs = np.clip(xs.astype(np.float64), -lim, lim)
    ys = np.clip(ys.astype(np.float64), -lim, lim)
    x0, y0 = np.floor(xs), np.floor(ys)
    return _sample(img, x0.astype(np.int64), y0.astype(np.int64), xs - x0, ys - y0,
                   interpolation, fill)


def _warp_affine_inv(img, m, out_w, out_h, interpolation, fill):
    """Sample with an output-to-input 2x3 matrix ``m`` (OpenCV pixel-index coordinates)."""
    # OpenCV maps coordinates in float32; doing the same makes half-pixel ties round its way
    m = np.asarray(m, np.float32)
    x = np.arange(out_w, dtype=np.float32)[None, :]
    y = np.arange(out_h, dtype=np.float32)[:, None]
    xs = m[0] * x + (m[1] * y + m[2])
    ys = m[3] * x + (m[4] * y + m[5])
    if interpolation == "nearest":
        return _sample(img, _round_coord(xs), _round_coord(ys), None, None, interpolation, fill)
    return _sample_float(img, xs, ys, interpolation, fill)


def _round_coord(v):
    """Nearest source index: round half to even, like OpenCV's cvRound."""
    lim = float(np.iinfo(np.int32).max // 2)
    return np.rint(np.clip(v, -lim, lim)).astype(np.int64)


def _check_warp_interp(interpolation, op):
    _check_interp(interpolation, op, ("nearest", "bilinear", "bicubic"))


def affine(img, matrix, interpolation="nearest", fill=0):
    """Affine warp with an output-to-input ``matrix`` given for pixel-centre coordinates.

    ``matrix`` is the inverse map ``[a, b, c, d, e, f]`` in the convention where pixel ``i``
    covers ``[i, i + 1)`` (the one Paddle's PIL path uses), so arrays and PIL images agree.
    """
    _check_warp_interp(interpolation, "affine")
    a, b, c, d, e, f = matrix
    # shift from centre coordinates (i + 0.5) to OpenCV's index coordinates (i)
    c2 = a * 0.5 + b * 0.5 + c - 0.5
    f2 = d * 0.5 + e * 0.5 + f - 0.5
    h, w = img.shape[:2]
    return _warp_affine_inv(img, [a, b, c2, d, e, f2], w, h, interpolation, fill)


def rotate(img, angle, interpolation="nearest", expand=False, center=None, fill=0):
    """Rotate counter-clockwise by ``angle`` degrees about ``center`` (OpenCV coordinates)."""
    _check_warp_interp(interpolation, "rotate")
    h, w = img.shape[:2]
    if center is None:
        center = (w / 2.0, h / 2.0)
    cx, cy = center
    rad = math.radians(angle)
    al, be = math.cos(rad), math.sin(rad)
    fwd = [al, be, (1 - al) * cx - be * cy, -be, al, be * cx + (1 - al) * cy]
    if expand:
        # bounding box of the corners rotated about the centre, as Paddle computes it
        r = -rad
        cs, sn = round(math.cos(r), 15), round(math.sin(r), 15)
        tx = cs * -cx + sn * -cy + cx
        ty = -sn * -cx + cs * -cy + cy
        corners = np.array([(0, 0), (w, 0), (w, h), (0, h)], np.float64)
        xx = cs * corners[:, 0] + sn * corners[:, 1] + tx
        yy = -sn * corners[:, 0] + cs * corners[:, 1] + ty
        nw = math.ceil(xx.max()) - math.floor(xx.min())
        nh = math.ceil(yy.max()) - math.floor(yy.min())
        fwd[2] += (nw - w) * 0.5
        fwd[5] += (nh - h) * 0.5
        w, h = int(nw), int(nh)
    return _warp_affine_inv(img, _invert_affine(fwd), w, h, interpolation, fill)


def perspective_matrix(startpoints, endpoints):
    """The 3x3 homography taking the four ``startpoints`` onto ``endpoints``."""
    src = np.asarray(startpoints, np.float32).astype(np.float64).reshape(4, 2)
    dst = np.asarray(endpoints, np.float32).astype(np.float64).reshape(4, 2)
    a = np.zeros((8, 8))
    a[:4, 0:2], a[:4, 2] = src, 1
    a[4:, 3:5], a[4:, 5] = src, 1
    a[:4, 6:8] = -src * dst[:, :1]
    a[4:, 6:8] = -src * dst[:, 1:]
    coef = np.linalg.solve(a, np.concatenate([dst[:, 0], dst[:, 1]]))
    return np.append(coef, 1.0).reshape(3, 3)


def perspective(img, startpoints, endpoints, interpolation="nearest", fill=0):
    """Warp so that ``startpoints`` move onto ``endpoints`` (OpenCV's warpPerspective)."""
    _check_warp_interp(interpolation, "perspective")
    h, w = img.shape[:2]
    m = np.linalg.inv(perspective_matrix(startpoints, endpoints))
    x = np.arange(w, dtype=np.float64)[None, :]
    y = np.arange(h, dtype=np.float64)[:, None]
    den = m[2, 0] * x + m[2, 1] * y + m[2, 2]
    xn = m[0, 0] * x + m[0, 1] * y + m[0, 2]
    yn = m[1, 0] * x + m[1, 1] * y + m[1, 2]
    inv = np.where(den != 0, 1.0 / np.where(den != 0, den, 1), 0.0)
    if interpolation == "nearest":
        return _sample(img, _round_coord(xn * inv), _round_coord(yn * inv), None, None,
                       interpolation, fill)
    return _sample_float(img, xn * inv, yn * inv, interpolation, fill)

