"""Image operations on ``PIL.Image`` images (Pillow does the pixel work)."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageEnhance, ImageOps

__all__ = []

_R = Image.Resampling
INTERP = {
    "nearest": _R.NEAREST,
    "bilinear": _R.BILINEAR,
    "bicubic": _R.BICUBIC,
    "box": _R.BOX,
    "lanczos": _R.LANCZOS,
    "hamming": _R.HAMMING,
}
# Image.transform/rotate only accept these three filters
_WARP_INTERPS = ("nearest", "bilinear", "bicubic")


def _interp(interpolation, op, allowed=tuple(INTERP)):
    if interpolation not in allowed:
        raise ValueError(f"{op}: interpolation {interpolation!r} is not supported for PIL "
                         f"images; expected one of {list(allowed)}")
    return INTERP[interpolation]


def to_tensor(pic, data_format="CHW"):
    """Convert a PIL image into a paddle_hl Tensor; 8-bit modes are scaled to [0, 1]."""
    import paddle_hl as paddle

    if data_format not in ("CHW", "HWC"):
        raise ValueError(f"to_tensor: data_format should be 'CHW' or 'HWC', got {data_format!r}")
    if pic.mode in ("I", "I;16"):
        arr = np.asarray(pic, np.int32)
    elif pic.mode == "F":
        arr = np.asarray(pic, np.float32)
    elif pic.mode == "1":
        arr = np.asarray(pic, np.uint8) * np.uint8(255)
    else:
        arr = np.asarray(pic)
    channels = 3 if pic.mode == "YCbCr" else 1 if pic.mode == "I;16" else len(pic.getbands())
    arr = arr.reshape(pic.size[1], pic.size[0], channels)
    if data_format == "CHW":
        arr = arr.transpose(2, 0, 1)
    if arr.dtype == np.uint8:
        return paddle.to_tensor(np.ascontiguousarray(arr, dtype=np.float32) * np.float32(1 / 255))
    return paddle.to_tensor(np.ascontiguousarray(arr))


def resize(img, size, interpolation="bilinear"):
    """Resize; an int ``size`` matches the shorter edge, keeping the aspect ratio."""
    resample = _interp(interpolation, "resize")
    w, h = img.size
    if isinstance(size, int):
        if (w <= h and w == size) or (h <= w and h == size):
            return img
        if w < h:
            return img.resize((size, int(size * h / w)), resample)
        return img.resize((int(size * w / h), size), resample)
    return img.resize((int(size[1]), int(size[0])), resample)


def _fill(fill, img):
    if isinstance(fill, (list, tuple)):
        fill = tuple(int(v) if img.mode not in ("F", "I") else v for v in fill)
        return fill[0] if len(img.getbands()) == 1 else fill
    return fill


def pad(img, padding, fill=0, padding_mode="constant"):
    """Pad by ``(left, top, right, bottom)`` with a constant or edge/reflect/symmetric border."""
    left, top, right, bottom = padding
    palette = img.getpalette() if img.mode == "P" else None
    if padding_mode == "constant":
        out = ImageOps.expand(img, border=(left, top, right, bottom), fill=_fill(fill, img))
    else:
        arr = np.asarray(img)
        widths = [(top, bottom), (left, right)] + [(0, 0)] * (arr.ndim - 2)
        out = Image.fromarray(np.pad(arr, widths, mode=padding_mode), img.mode)
    if palette is not None:
        out.putpalette(palette)
    return out


def crop(img, top, left, height, width):
    """Crop the box starting at (top, left); parts outside the image read as zero."""
    return img.crop((left, top, left + width, top + height))


def center_crop(img, output_size):
    """Crop the centre ``(th, tw)`` region."""
    w, h = img.size
    th, tw = output_size
    return crop(img, int(round((h - th) / 2.0)), int(round((w - tw) / 2.0)), th, tw)


def hflip(img):
    """Mirror left-right."""
    return img.transpose(Image.Transpose.FLIP_LEFT_RIGHT)


def vflip(img):
    """Mirror top-bottom."""
    return img.transpose(Image.Transpose.FLIP_TOP_BOTTOM)


def adjust_brightness(img, brightness_factor):
    """Pillow's Brightness enhancer: blend with black."""
    return ImageEnhance.Brightness(img).enhance(brightness_factor)


def adjust_contrast(img, contrast_factor):
    """Pillow's Contrast enhancer: blend with the mean gray level."""
    return ImageEnhance.Contrast(img).enhance(contrast_factor)


def adjust_saturation(img, saturation_factor):
    """Pillow's Color enhancer: blend with the grayscale image."""
    return ImageEnhance.Color(img).enhance(saturation_factor)


def adjust_hue(img, hue_factor):
    """Shift the HSV hue by ``hue_factor`` of a turn; gray modes are returned unchanged."""
    mode = img.mode
    if mode in ("L", "1", "I", "F"):
        return img
    h, s, v = img.convert("HSV").split()
    hue = (np.asarray(h, np.int16) + int(hue_factor * 255)) % 256
    h = Image.fromarray(hue.astype(np.uint8), "L")
    return Image.merge("HSV", (h, s, v)).convert(mode)


def affine(img, matrix, interpolation="nearest", fill=0):
    """Apply an output-to-input affine ``matrix`` (6 numbers) with Pillow."""
    resample = _interp(interpolation, "affine", _WARP_INTERPS)
    return img.transform(img.size, Image.Transform.AFFINE, matrix, resample,
                         fillcolor=_fillcolor(fill, img))


def _fillcolor(fill, img):
    bands = len(img.getbands())
    if isinstance(fill, (list, tuple)):
        return _fill(fill, img)
    return fill if bands == 1 else tuple([fill] * bands)


def rotate(img, angle, interpolation="nearest", expand=False, center=None, fill=0):
    """Rotate counter-clockwise by ``angle`` degrees."""
    resample = _interp(interpolation, "rotate", _WARP_INTERPS)
    return img.rotate(angle, resample, expand, center, fillcolor=_fillcolor(fill, img))


def perspective(img, coeffs, interpolation="nearest", fill=0):
    """Apply output-to-input perspective ``coeffs`` (8 numbers) with Pillow."""
    resample = _interp(interpolation, "perspective", _WARP_INTERPS)
    return img.transform(img.size, Image.Transform.PERSPECTIVE, coeffs, resample,
                         fillcolor=_fillcolor(fill, img))


def to_grayscale(img, num_output_channels=1):
    """Convert to mode 'L' (1 channel) or a gray 'RGB' image (3 channels)."""
    gray = img.convert("L")
    if num_output_channels == 1:
        return gray
    arr = np.asarray(gray)
    return Image.fromarray(np.ascontiguousarray(np.stack([arr] * 3, axis=-1)), "RGB")


def erase(img, i, j, h, w, v, inplace=False):
    """Set the box ``[i:i+h, j:j+w]`` to ``v``; PIL images are immutable here, so a new image."""
    arr = np.array(img)
    arr[i:i + h, j:j + w, ...] = np.asarray(v).astype(arr.dtype) if not np.isscalar(v) else v
    return Image.fromarray(arr, img.mode)
