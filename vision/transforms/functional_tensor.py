"""Image operations on paddle_hl Tensors laid out ``CHW`` (or ``NCHW``).

The work is done with public paddle_hl ops (``grid_sample``, ``interpolate``, ``index_select``),
so a Tensor on the GPU stays there. Sampling grids follow Paddle's conventions: pixel centres at
half-integers, ``align_corners=False``, and a ones channel sampled alongside the image to tell
which output pixels came from outside and get ``fill``.
"""

from __future__ import annotations

import math

import numpy as np

import paddle_hl as paddle
import paddle_hl.nn.functional as F

__all__ = []

_GRAY = (0.2989, 0.5870, 0.1140)


def _check(img, op, data_format="CHW"):
    if not isinstance(img, paddle.Tensor) or img.ndim not in (3, 4):
        shape = list(img.shape) if isinstance(img, paddle.Tensor) else None
        raise ValueError(f"{op}: expected a 3-D (C, H, W) or 4-D (N, C, H, W) Tensor image, "
                         f"got {type(img).__name__} with shape {shape}")
    if data_format.upper() not in ("CHW", "HWC"):
        raise ValueError(f"{op}: data_format should be 'CHW' or 'HWC', got {data_format!r}")


def _axes(data_format):
    """(channel, height, width) axes, counted from the end."""
    return (-3, -2, -1) if data_format.upper() == "CHW" else (-1, -3, -2)


def _is_float(img):
    return paddle.is_floating_point(img)


def _work_dtype(img):
    return img.dtype if _is_float(img) else paddle.float32


def _back(out, dtype, max_value=None):
    """Clip to the image range and cast back (truncating, as Paddle's astype does)."""
    if max_value is not None:
        out = out.clip(0, max_value)
    return out if out.dtype == dtype else out.astype(dtype)


def _max_value(img):
    return 1.0 if _is_float(img) else 255.0


def normalize(img, mean, std, data_format="CHW"):
    """``(img - mean) / std`` per channel."""
    _check(img, "normalize", data_format)
    mean = paddle.to_tensor(np.asarray(mean, np.float32), place=img.place)
    std = paddle.to_tensor(np.asarray(std, np.float32), place=img.place)
    if data_format.upper() == "CHW" and mean.ndim == 1:
        mean, std = mean.reshape([-1, 1, 1]), std.reshape([-1, 1, 1])
    return (img - mean) / std


def to_grayscale(img, num_output_channels=1, data_format="CHW"):
    """Weighted channel sum (0.2989, 0.587, 0.114), repeated to 1 or 3 channels."""
    _check(img, "to_grayscale", data_format)
    if num_output_channels not in (1, 3):
        raise ValueError(f"to_grayscale: num_output_channels should be 1 or 3, got "
                         f"{num_output_channels}")
    c_axis = _axes(data_format)[0]
    weights = paddle.to_tensor(np.asarray(_GRAY, np.float32), place=img.place)
    shape = [1] * img.ndim
    shape[c_axis] = 3
    work = img.astype(_work_dtype(img))
    gray = (work * weights.astype(work.dtype).reshape(shape)).sum(axis=c_axis, keepdim=True)
    gray = _back(gray, img.dtype)
    reps = [1] * img.ndim
    reps[c_axis] = num_output_channels
    return gray.tile(reps) if num_output_channels > 1 else gray


def vflip(img, data_format="CHW"):
    """Mirror top-bottom."""
    _check(img, "vflip", data_format)
    return img.flip(axis=[img.ndim + _axes(data_format)[1]])


def hflip(img, data_format="CHW"):
    """Mirror left-right."""
    _check(img, "hflip", data_format)
    return img.flip(axis=[img.ndim + _axes(data_format)[2]])


def crop(img, top, left, height, width, data_format="CHW"):
    """Crop ``[top:top+height, left:left+width]`` (a view)."""
    _check(img, "crop", data_format)
    if data_format.upper() == "CHW":
        return img[..., top:top + height, left:left + width]
    return img[..., top:top + height, left:left + width, :]


def center_crop(img, output_size, data_format="CHW"):
    """Crop the centre ``(th, tw)`` region."""
    _check(img, "center_crop", data_format)
    _, ha, wa = _axes(data_format)
    h, w = img.shape[ha], img.shape[wa]
    th, tw = output_size
    return crop(img, int(round((h - th) / 2.0)), int(round((w - tw) / 2.0)), th, tw,
                data_format)


def erase(img, i, j, h, w, v, inplace=False):
    """Set ``img[..., i:i+h, j:j+w]`` to ``v`` (a number or a Tensor broadcastable to it)."""
    _check(img, "erase")
    if not inplace:
        img = img.clone()
    if isinstance(v, paddle.Tensor):
        v = v.astype(img.dtype)
    img[..., i:i + h, j:j + w] = v
    return img


def pad(img, padding, fill=0, padding_mode="constant", data_format="CHW"):
    """Pad by ``(left, top, right, bottom)``; constant, edge, reflect or symmetric border."""
    _check(img, "pad", data_format)
    left, top, right, bottom = padding
    _, ha, wa = _axes(data_format)
    ha, wa = img.ndim + ha, img.ndim + wa
    h, w = img.shape[ha], img.shape[wa]
    if padding_mode == "constant":
        shape = list(img.shape)
        shape[ha] += top + bottom
        shape[wa] += left + right
        if isinstance(fill, (list, tuple)):
            # one fill value per channel
            c_axis = img.ndim + _axes(data_format)[0]
            vshape = [1] * img.ndim
            vshape[c_axis] = len(fill)
            vals = paddle.to_tensor(np.asarray(fill, np.float64), place=img.place)
            out = vals.astype(img.dtype).reshape(vshape).expand(shape).clone()
        else:
            out = paddle.full(shape, fill, dtype=img.dtype)
        index = [slice(None)] * img.ndim
        index[ha] = slice(top, top + h)
        index[wa] = slice(left, left + w)
        out[tuple(index)] = img
        return out
    if padding_mode == "reflect" and (max(top, bottom) >= h or max(left, right) >= w):
        raise ValueError(f"pad: reflect padding {tuple(padding)} must be smaller than the image "
                         f"size (H={h}, W={w})")
    # the padded image is a gather of rows and columns: np.pad on index ranges builds them
    rows = np.pad(np.arange(h), (top, bottom), mode=padding_mode)
    cols = np.pad(np.arange(w), (left, right), mode=padding_mode)
    out = paddle.index_select(img, paddle.to_tensor(rows, place=img.place), axis=ha)
    return paddle.index_select(out, paddle.to_tensor(cols, place=img.place), axis=wa)


def resize(img, size, interpolation="bilinear", data_format="CHW"):
    """Resize with ``F.interpolate``; an int ``size`` matches the shorter edge."""
    _check(img, "resize", data_format)
    if interpolation not in ("nearest", "bilinear", "bicubic"):
        raise ValueError(f"resize: interpolation {interpolation!r} is not supported for Tensor "
                         f"images; expected one of ['nearest', 'bilinear', 'bicubic']")
    _, ha, wa = _axes(data_format)
    h, w = img.shape[ha], img.shape[wa]
    if isinstance(size, int):
        if (w <= h and w == size) or (h <= w and h == size):
            return img
        oh, ow = (int(size * h / w), size) if w < h else (size, int(size * w / h))
    else:
        oh, ow = int(size[0]), int(size[1])
    batched = img.ndim == 4
    x = img if batched else img.unsqueeze(0)
    out = F.interpolate(x, size=(oh, ow), mode=interpolation,
                        data_format="N" + data_format.upper())
    return out if batched else out.squeeze(0)


# --------------------------------------------------------------------------- warps

def _to_nchw(img, data_format):
    x = img if img.ndim == 4 else img.unsqueeze(0)
    return x if data_format.upper() == "CHW" else x.transpose([0, 3, 1, 2])


def _from_nchw(out, img, data_format):
    if data_format.upper() != "CHW":
        out = out.transpose([0, 2, 3, 1])
    return out if img.ndim == 4 else out.squeeze(0)


def _affine_grid(theta, w, h, ow, oh):
    """Normalised sampling grid (1, oh, ow, 2) for a centred output-to-input matrix."""
    xs = np.linspace(-ow * 0.5 + 0.5, ow * 0.5 - 0.5, ow, dtype=np.float32)
    ys = np.linspace(-oh * 0.5 + 0.5, oh * 0.5 - 0.5, oh, dtype=np.float32)
    base = np.ones((oh, ow, 3), np.float32)
    base[..., 0] = xs
    base[..., 1] = ys[:, None]
    scaled = np.asarray(theta, np.float32).reshape(2, 3).T / np.float32([0.5 * w, 0.5 * h])
    return (base.reshape(-1, 3) @ scaled).reshape(1, oh, ow, 2)


def _grid_sample(img, grid, interpolation, fill):
    """Sample NCHW ``img`` on ``grid``; pixels drawn from outside take ``fill``."""
    if interpolation not in ("nearest", "bilinear"):
        raise ValueError(f"interpolation {interpolation!r} is not supported for Tensor images; "
                         f"expected 'nearest' or 'bilinear'")
    dtype = img.dtype
    x = img.astype(_work_dtype(img))
    n, c = x.shape[0], x.shape[1]
    g = paddle.to_tensor(grid, place=img.place).astype(x.dtype)
    if n > 1:
        g = g.expand([n] + list(g.shape[1:]))
    if fill is not None:
        x = paddle.concat([x, paddle.ones([n, 1] + list(x.shape[2:]), dtype=x.dtype)], axis=1)
    out = F.grid_sample(x, g, mode=interpolation, padding_mode="zeros", align_corners=False)
    if fill is not None:
        mask = out[:, -1:]
        out = out[:, :-1]
        vals = np.broadcast_to(np.asarray(fill, np.float64).ravel(), (c,)) \
            if np.size(fill) in (1, c) else None
        if vals is None:
            raise ValueError(f"fill {fill} must be a number or one value per channel ({c})")
        fill_img = paddle.to_tensor(vals.astype(np.float32), place=img.place) \
            .astype(out.dtype).reshape([1, c, 1, 1])
        if interpolation == "nearest":
            outside = (mask < 0.5).astype(out.dtype)
            out = out * (1.0 - outside) + outside * fill_img
        else:
            out = out * mask + (1.0 - mask) * fill_img
    if dtype != out.dtype:
        out = out.round().clip(*_int_range(dtype)).astype(dtype)
    return out


def _int_range(dtype):
    info = np.iinfo(np.dtype(str(dtype).replace("paddle.", "")))
    return float(info.min), float(info.max)


def affine(img, matrix, interpolation="nearest", fill=None, data_format="CHW"):
    """Warp with a centred output-to-input affine ``matrix`` (6 numbers)."""
    _check(img, "affine", data_format)
    x = _to_nchw(img, data_format)
    h, w = x.shape[-2], x.shape[-1]
    out = _grid_sample(x, _affine_grid(matrix, w, h, w, h), interpolation, fill)
    return _from_nchw(out, img, data_format)


def rotate(img, angle, interpolation="nearest", expand=False, center=None, fill=None,
           data_format="CHW"):
    """Rotate counter-clockwise by ``angle`` degrees about ``center`` (default: the middle)."""
    _check(img, "rotate", data_format)
    x = _to_nchw(img, data_format)
    h, w = x.shape[-2], x.shape[-1]
    rad = math.radians(-angle % 360)
    cx, cy = (0.0, 0.0) if center is None else (center[0] - w * 0.5, center[1] - h * 0.5)
    m = np.array([math.cos(rad), math.sin(rad), 0.0, -math.sin(rad), math.cos(rad), 0.0],
                 np.float32)
    m[2] += m[0] * -cx + m[1] * -cy + cx
    m[5] += m[3] * -cx + m[4] * -cy + cy
    ow, oh = w, h
    if expand:
        corners = np.array([[-0.5 * w, -0.5 * h, 1.0], [-0.5 * w, 0.5 * h, 1.0],
                            [0.5 * w, 0.5 * h, 1.0], [0.5 * w, -0.5 * h, 1.0]], np.float32)
        pos = corners @ m.reshape(2, 3).T
        size = np.ceil(pos.max(0)) - np.floor(pos.min(0))
        ow, oh = int(size[0]), int(size[1])
    out = _grid_sample(x, _affine_grid(m, w, h, ow, oh), interpolation, fill)
    return _from_nchw(out, img, data_format)


def perspective(img, coeffs, interpolation="nearest", fill=None, data_format="CHW"):
    """Warp with output-to-input perspective ``coeffs`` (8 numbers, PIL's convention)."""
    _check(img, "perspective", data_format)
    x = _to_nchw(img, data_format)
    oh, ow = x.shape[-2], x.shape[-1]
    c = np.asarray(coeffs, np.float32)
    xs = np.linspace(0.5, ow - 0.5, ow, dtype=np.float32)
    ys = np.linspace(0.5, oh - 0.5, oh, dtype=np.float32)
    base = np.ones((oh * ow, 3), np.float32)
    base[:, 0] = np.tile(xs, oh)
    base[:, 1] = np.repeat(ys, ow)
    num = base @ (c[:6].reshape(2, 3).T / np.float32([0.5 * ow, 0.5 * oh]))
    den = base @ np.array([[c[6], c[6]], [c[7], c[7]], [1.0, 1.0]], np.float32)
    grid = (num / den - 1.0).reshape(1, oh, ow, 2)
    out = _grid_sample(x, grid, interpolation, fill)
    return _from_nchw(out, img, data_format)


# --------------------------------------------------------------------------- colour

def _channels(img, op):
    c = img.shape[-3]
    if c not in (1, 3):
        raise ValueError(f"{op}: the image must have 1 or 3 channels (C, H, W), got shape "
                         f"{list(img.shape)}")
    return c


def _blend(img, other, ratio):
    """``other + ratio * (img - other)`` clipped to the image range, in the image dtype."""
    work = img.astype(_work_dtype(img))
    out = other + float(ratio) * (work - other)
    return _back(out, img.dtype, _max_value(img))


def adjust_brightness(img, brightness_factor):
    """Blend with black: scale every pixel by ``brightness_factor``."""
    _check(img, "adjust_brightness")
    if brightness_factor < 0:
        raise ValueError(f"adjust_brightness: brightness_factor should be non-negative, got "
                         f"{brightness_factor}")
    _channels(img, "adjust_brightness")
    return _blend(img, paddle.zeros([1], dtype=_work_dtype(img)), brightness_factor)


def adjust_contrast(img, contrast_factor):
    """Blend with the mean gray level."""
    _check(img, "adjust_contrast")
    if contrast_factor < 0:
        raise ValueError(f"adjust_contrast: contrast_factor should be non-negative, got "
                         f"{contrast_factor}")
    c = _channels(img, "adjust_contrast")
    work = img.astype(_work_dtype(img))
    gray = work if c == 1 else to_grayscale(work)
    mean = gray.mean(axis=[-3, -2, -1], keepdim=True)
    return _blend(img, mean, contrast_factor)


def adjust_saturation(img, saturation_factor):
    """Blend with the grayscale image."""
    _check(img, "adjust_saturation")
    if saturation_factor < 0:
        raise ValueError(f"adjust_saturation: saturation_factor should be non-negative, got "
                         f"{saturation_factor}")
    if _channels(img, "adjust_saturation") == 1:
        return img
    return _blend(img, to_grayscale(img.astype(_work_dtype(img))), saturation_factor)


def _rgb_to_hsv(img):
    maxc = img.max(axis=-3)
    minc = img.min(axis=-3)
    delta = maxc - minc
    flat = delta == 0
    s = delta / paddle.where(maxc == 0, paddle.ones_like(maxc), maxc)
    safe = paddle.where(flat, paddle.ones_like(delta), delta)
    r, g, b = img.unbind(axis=-3)
    rc, gc, bc = (maxc - r) / safe, (maxc - g) / safe, (maxc - b) / safe
    is_r = maxc == r
    is_g = paddle.logical_and(maxc == g, paddle.logical_not(is_r))
    h = paddle.where(is_r, bc - gc, paddle.where(is_g, rc - bc + 2.0, gc - rc + 4.0))
    h = paddle.where(flat, paddle.zeros_like(h), h)
    h = (h / 6.0) % 1.0
    return h, s, maxc


def _hsv_to_rgb(h, s, v):
    f6 = h * 6.0
    i = paddle.floor(f6)
    f = f6 - i
    i = i.astype("int64") % 6
    p = (v * (1.0 - s)).clip(0.0, 1.0)
    q = (v * (1.0 - s * f)).clip(0.0, 1.0)
    t = (v * (1.0 - s * (1.0 - f))).clip(0.0, 1.0)
    table = [(v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v), (v, p, q)]
    r, g, b = paddle.zeros_like(v), paddle.zeros_like(v), paddle.zeros_like(v)
    for k, (rk, gk, bk) in enumerate(table):
        sel = i == k
        r, g, b = paddle.where(sel, rk, r), paddle.where(sel, gk, g), paddle.where(sel, bk, b)
    return paddle.stack([r, g, b], axis=-3)


def adjust_hue(img, hue_factor):
    """Rotate the HSV hue by ``hue_factor`` of a turn (in [-0.5, 0.5])."""
    _check(img, "adjust_hue")
    if not -0.5 <= hue_factor <= 0.5:
        raise ValueError(f"adjust_hue: hue_factor should be in [-0.5, 0.5], got {hue_factor}")
    if _channels(img, "adjust_hue") == 1:
        return img
    dtype = img.dtype
    work = img.astype(paddle.float32) / 255.0 if not _is_float(img) else img
    h, s, v = _rgb_to_hsv(work)
    h = h + hue_factor
    h = h - h.floor()
    out = _hsv_to_rgb(h, s, v)
    if not _is_float(img):
        out = (out * 255.0).astype(dtype)
    return out

