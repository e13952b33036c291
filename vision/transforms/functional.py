"""Functional image transforms for PIL images, NumPy ``HWC`` arrays and ``CHW`` Tensors.

Every function checks its arguments, then hands the work to the backend of the input's type
(``functional_pil``, ``functional_cv2`` for arrays, ``functional_tensor``) and returns the same
type it was given.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import numpy as np
from PIL import Image

import paddle_hl as paddle

from . import functional_cv2 as F_cv2
from . import functional_pil as F_pil
from . import functional_tensor as F_t

__all__ = []


def _is_pil_image(img):
    return isinstance(img, Image.Image)


def _is_tensor_image(img):
    return isinstance(img, paddle.Tensor)


def _is_numpy_image(img):
    return isinstance(img, np.ndarray) and img.ndim in (2, 3)


def _check_img(img, op, name="img"):
    if not (_is_pil_image(img) or _is_numpy_image(img) or _is_tensor_image(img)):
        detail = f" with ndim={img.ndim}" if isinstance(img, np.ndarray) else ""
        raise TypeError(f"{op}: {name} should be a PIL Image, a Tensor image or an ndarray with "
                        f"ndim 2 or 3, got {type(img).__name__}{detail}")


def _dispatch(img, pil, cv2, tensor):
    if _is_pil_image(img):
        return pil()
    if _is_tensor_image(img):
        return tensor()
    return cv2()


def _image_size(img):
    """(width, height) of any supported image."""
    if _is_pil_image(img):
        return img.size
    if _is_tensor_image(img):
        return img.shape[-1], img.shape[-2]
    return img.shape[1], img.shape[0]


def _size_pair(size, op, name="size"):
    if isinstance(size, numbers.Integral) and not isinstance(size, bool):
        return int(size), int(size)
    if isinstance(size, Sequence) and len(size) == 2:
        return int(size[0]), int(size[1])
    raise TypeError(f"{op}: {name} should be an int or a sequence (h, w) of 2 ints, got "
                    f"{size!r}")


def _norm_padding(padding, op):
    if not isinstance(padding, (numbers.Number, list, tuple)):
        raise TypeError(f"{op}: padding should be an int or a list/tuple of 2 or 4 ints, got "
                        f"{type(padding).__name__}")
    if isinstance(padding, numbers.Number):
        p = int(padding)
        return p, p, p, p
    if len(padding) == 2:
        return int(padding[0]), int(padding[1]), int(padding[0]), int(padding[1])
    if len(padding) == 4:
        return tuple(int(v) for v in padding)
    raise ValueError(f"{op}: padding must be an int or a 2- or 4-element sequence, got a "
                     f"{len(padding)}-element sequence")


def to_tensor(pic, data_format="CHW"):
    """Convert a PIL image or an ``HWC`` ndarray into a Tensor.

    uint8 data (and 8-bit PIL modes) are scaled to float32 in [0, 1]; other dtypes keep their
    values. A Tensor is returned as is (``CHW``) or transposed to ``HWC``.

    Args:
        pic (PIL.Image|np.ndarray|Tensor): The image.
        data_format (str, optional): 'CHW' (default) or 'HWC'.

    Returns:
        Tensor: The image as a Tensor.

    Examples:
        >>> import numpy as np
        >>> from paddle_hl.vision.transforms import functional as F
        >>> F.to_tensor(np.zeros((4, 5, 3), np.uint8)).shape
        [3, 4, 5]
    """
    _check_img(pic, "to_tensor", "pic")
    if data_format not in ("CHW", "HWC"):
        raise ValueError(f"to_tensor: data_format should be 'CHW' or 'HWC', got {data_format!r}")
    if _is_pil_image(pic):
        return F_pil.to_tensor(pic, data_format)
    if _is_numpy_image(pic):
        return F_cv2.to_tensor(pic, data_format)
    return pic if data_format == "CHW" else pic.transpose([1, 2, 0])


def resize(img, size, interpolation="bilinear"):
    """Resize an image.

    Args:
        img (PIL.Image|np.ndarray|Tensor): The image (``HWC`` array, ``CHW`` Tensor).
        size (int|list|tuple): ``(h, w)``, or an int that the shorter edge is matched to
            (keeping the aspect ratio).
        interpolation (str, optional): PIL: 'nearest', 'bilinear', 'bicubic', 'box', 'lanczos',
            'hamming'; ndarray: 'nearest', 'bilinear', 'area', 'bicubic', 'lanczos'; Tensor:
            'nearest', 'bilinear', 'bicubic'. Default 'bilinear'.

    Returns:
        PIL.Image|np.ndarray|Tensor: The resized image, of the input's type.

    Examples:
        >>> import numpy as np
        >>> from paddle_hl.vision.transforms import functional as F
        >>> F.resize(np.zeros((20, 40, 3), np.uint8), 10).shape
        (10, 20, 3)
    """
    _check_img(img, "resize")
    if not (isinstance(size, int) or (isinstance(size, Sequence) and len(size) == 2)):
        raise TypeError(f"resize: size should be an int or a sequence (h, w), got {size!r}")
    if isinstance(size, int) and size <= 0:
        raise ValueError(f"resize: size should be positive, got {size}")
    return _dispatch(img, lambda: F_pil.resize(img, size, interpolation),
                     lambda: F_cv2.resize(img, size, interpolation),
                     lambda: F_t.resize(img, size, interpolation))


_PAD_MODES = ("constant", "edge", "reflect", "symmetric")


def pad(img, padding, fill=0, padding_mode="constant"):
    """Pad an image on its borders.

    Args:
        img (PIL.Image|np.ndarray|Tensor): The image.
        padding (int|list|tuple): One int for all borders, (left/right, top/bottom), or
            (left, top, right, bottom).
        fill (float|list|tuple, optional): Constant fill, one number or one per channel.
        padding_mode (str, optional): 'constant', 'edge', 'reflect' (no edge repeat) or
            'symmetric' (edge repeated). Default 'constant'.

    Returns:
        PIL.Image|np.ndarray|Tensor: The padded image.

    Examples:
        >>> import numpy as np
        >>> from paddle_hl.vision.transforms import functional as F
        >>> F.pad(np.zeros((4, 4, 3), np.uint8), (1, 2)).shape
        (8, 6, 3)
    """
    _check_img(img, "pad")
    if not isinstance(fill, (numbers.Number, str, list, tuple)):
        raise TypeError(f"pad: fill should be a number or a sequence, got {type(fill).__name__}")
    if not isinstance(padding_mode, str) or padding_mode not in _PAD_MODES:
        raise ValueError(f"pad: padding_mode should be one of {list(_PAD_MODES)}, got "
                         f"{padding_mode!r}")
    padding = _norm_padding(padding, "pad")
    return _dispatch(img, lambda: F_pil.pad(img, padding, fill, padding_mode),
                     lambda: F_cv2.pad(img, padding, fill, padding_mode),
                     lambda: F_t.pad(img, padding, fill, padding_mode))


def crop(img, top, left, height, width):
    """Crop the box with upper-left corner (top, left) and size (height, width).

    Args:
        img (PIL.Image|np.ndarray|Tensor): The image.
        top (int): Row of the upper-left corner.
        left (int): Column of the upper-left corner.
        height (int): Height of the box.
        width (int): Width of the box.

    Returns:
        PIL.Image|np.ndarray|Tensor: The cropped image.
    """
    _check_img(img, "crop")
    return _dispatch(img, lambda: F_pil.crop(img, top, left, height, width),
                     lambda: F_cv2.crop(img, top, left, height, width),
                     lambda: F_t.crop(img, top, left, height, width))


def center_crop(img, output_size):
    """Crop the centre of an image.

    Args:
        img (PIL.Image|np.ndarray|Tensor): The image.
        output_size (int|list|tuple): ``(h, w)`` or one int for a square.

    Returns:
        PIL.Image|np.ndarray|Tensor: The cropped image.
    """
    _check_img(img, "center_crop")
    size = _size_pair(output_size, "center_crop", "output_size")
    return _dispatch(img, lambda: F_pil.center_crop(img, size),
                     lambda: F_cv2.center_crop(img, size),
                     lambda: F_t.center_crop(img, size))


def hflip(img):
    """Flip an image left-right.

    Args:
        img (PIL.Image|np.ndarray|Tensor): The image.

    Returns:
        PIL.Image|np.ndarray|Tensor: The mirrored image.
    """
    _check_img(img, "hflip")
    return _dispatch(img, lambda: F_pil.hflip(img), lambda: F_cv2.hflip(img),
                     lambda: F_t.hflip(img))


def vflip(img):
    """Flip an image top-bottom.

    Args:
        img (PIL.Image|np.ndarray|Tensor): The image.

    Returns:
        PIL.Image|np.ndarray|Tensor: The mirrored image.
    """
    _check_img(img, "vflip")
    return _dispatch(img, lambda: F_pil.vflip(img), lambda: F_cv2.vflip(img),
                     lambda: F_t.vflip(img))


def _check_factor(value, op, name):
    if not isinstance(value, numbers.Number) or value < 0:
        raise ValueError(f"{op}: {name} should be a non-negative number, got {value!r}")


def _adjust_by_factor(img, kind, factor):
    """``adjust_<kind>(img, factor)`` with a non-negative factor, on the image's backend."""
    op, arg = f"adjust_{kind}", f"{kind}_factor"
    _check_img(img, op)
    _check_factor(factor, op, arg)
    return _dispatch(img, lambda: getattr(F_pil, op)(img, factor),
                     lambda: getattr(F_cv2, op)(img, factor),
                     lambda: getattr(F_t, op)(img, factor))


def adjust_brightness(img, brightness_factor):
    """Scale the brightness: 0 gives black, 1 the original image.

    Args:
        img (PIL.Image|np.ndarray|Tensor): The image (arrays are read as uint8).
        brightness_factor (float): Non-negative factor.

    Returns:
        PIL.Image|np.ndarray|Tensor: The adjusted image.
    """
    return _adjust_by_factor(img, "brightness", brightness_factor)


def adjust_contrast(img, contrast_factor):
    """Adjust the contrast: 0 gives a flat gray image, 1 the original image.

    Args:
        img (PIL.Image|np.ndarray|Tensor): The image.
        contrast_factor (float): Non-negative factor.

    Returns:
        PIL.Image|np.ndarray|Tensor: The adjusted image.
    """
    return _adjust_by_factor(img, "contrast", contrast_factor)


def adjust_saturation(img, saturation_factor):
    """Adjust the colour saturation: 0 gives a gray image, 1 the original image.

    Args:
        img (PIL.Image|np.ndarray|Tensor): The image.
        saturation_factor (float): Non-negative factor.

    Returns:
        PIL.Image|np.ndarray|Tensor: The adjusted image.
    """
    return _adjust_by_factor(img, "saturation", saturation_factor)


def adjust_hue(img, hue_factor):
    """Shift the hue by ``hue_factor`` of a full turn.

    Args:
        img (PIL.Image|np.ndarray|Tensor): The image.
        hue_factor (float): In [-0.5, 0.5]; 0 keeps the image.

    Returns:
        PIL.Image|np.ndarray|Tensor: The adjusted image.
    """
    _check_img(img, "adjust_hue")
    if not isinstance(hue_factor, numbers.Number) or not -0.5 <= hue_factor <= 0.5:
        raise ValueError(f"adjust_hue: hue_factor should be in [-0.5, 0.5], got {hue_factor!r}")
    return _dispatch(img, lambda: F_pil.adjust_hue(img, hue_factor),
                     lambda: F_cv2.adjust_hue(img, hue_factor),
                     lambda: F_t.adjust_hue(img, hue_factor))


def _get_affine_matrix(center, angle, translate, scale, shear):
    """Output-to-input matrix of: rotate (clockwise, degrees), shear, scale, translate."""
    rot = math.radians(angle)
    sx, sy = math.radians(shear[0]), math.radians(shear[1])
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    # inverse of [[a, b], [c, d]] (its determinant is 1), then of the scale
    m = [v / scale for v in (d, -b, 0.0, -c, a, 0.0)]
    cx, cy = center
    tx, ty = translate
    m[2] = m[0] * (-cx - tx) + m[1] * (-cy - ty) + cx
    m[5] = m[3] * (-cx - tx) + m[4] * (-cy - ty) + cy
    return m


def affine(img, angle, translate, scale, shear, interpolation="nearest", fill=0, center=None):
    """Apply an affine transform (rotation, translation, scale, shear) keeping the size.

    Args:
        img (PIL.Image|np.ndarray|Tensor): The image.
        angle (int|float): Rotation in degrees, clockwise.
        translate (list|tuple): Horizontal and vertical shift in pixels.
        scale (float): Positive scale factor.
        shear (float|list|tuple): Shear angle(s) in degrees, x (and y).
        interpolation (str, optional): 'nearest' (default), 'bilinear' or 'bicubic' (not for
            Tensors).
        fill (int|list|tuple, optional): Value for pixels outside the source. Default 0.
        center (list|tuple, optional): Centre (x, y) of the transform; default the middle.

    Returns:
        PIL.Image|np.ndarray|Tensor: The transformed image.
    """
    _check_img(img, "affine")
    if not isinstance(angle, (int, float)):
        raise TypeError(f"affine: angle should be an int or float, got {type(angle).__name__}")
    if not isinstance(translate, (list, tuple)):
        raise TypeError("affine: translate should be a list or tuple of 2 numbers")
    if len(translate) != 2:
        raise ValueError(f"affine: translate should have 2 values, got {len(translate)}")
    if scale <= 0.0:
        raise ValueError(f"affine: scale should be positive, got {scale}")
    if not isinstance(shear, (numbers.Number, list, tuple)):
        raise TypeError("affine: shear should be a number or a sequence of 1 or 2 numbers")
    if not isinstance(interpolation, str):
        raise TypeError(f"affine: interpolation should be a str, got {interpolation!r}")
    if center is not None and not isinstance(center, (list, tuple)):
        raise TypeError("affine: center should be a list or tuple (x, y)")
    shear = [float(shear), 0.0] if isinstance(shear, numbers.Number) else [float(s) for s in
                                                                           shear]
    if len(shear) == 1:
        shear = [shear[0], shear[0]]
    if len(shear) != 2:
        raise ValueError(f"affine: shear should have 1 or 2 values, got {shear}")
    translate = [float(t) for t in translate]
    width, height = _image_size(img)
    if _is_tensor_image(img):
        # the Tensor path samples in coordinates centred on the image
        c = [0.0, 0.0] if center is None else [center[0] - width * 0.5,
                                               center[1] - height * 0.5]
        matrix = _get_affine_matrix(c, float(angle), translate, scale, shear)
        return F_t.affine(img, matrix, interpolation, fill)
    if center is None:
        center = [width * 0.5, height * 0.5]
    matrix = _get_affine_matrix(center, float(angle), translate, scale, shear)
    if _is_pil_image(img):
        return F_pil.affine(img, matrix, interpolation, fill)
    return F_cv2.affine(img, matrix, interpolation, fill)


def rotate(img, angle, interpolation="nearest", expand=False, center=None, fill=0):
    """Rotate an image counter-clockwise by ``angle`` degrees.

    Args:
        img (PIL.Image|np.ndarray|Tensor): The image.
        angle (float): Degrees, counter-clockwise.
        interpolation (str, optional): 'nearest' (default), 'bilinear' or 'bicubic' (not for
            Tensors).
        expand (bool, optional): Grow the output to hold the whole rotated image.
        center (list|tuple, optional): Centre of rotation (x, y); default the middle.
        fill (int|list|tuple, optional): Value for pixels outside the source. Default 0.

    Returns:
        PIL.Image|np.ndarray|Tensor: The rotated image.
    """
    _check_img(img, "rotate")
    if not isinstance(angle, numbers.Number):
        raise TypeError(f"rotate: angle should be a number, got {type(angle).__name__}")
    if center is not None:
        if not isinstance(center, (list, tuple)) or len(center) != 2:
            raise TypeError(f"rotate: center should be a sequence (x, y), got {center!r}")
        center = tuple(center)
    if isinstance(fill, list):
        fill = tuple(fill)
    return _dispatch(img, lambda: F_pil.rotate(img, angle, interpolation, expand, center, fill),
                     lambda: F_cv2.rotate(img, angle, interpolation, expand, center, fill),
                     lambda: F_t.rotate(img, angle, interpolation, expand, center, fill))


def _get_perspective_coeffs(startpoints, endpoints):
    """The 8 output-to-input perspective coefficients mapping ``endpoints`` to ``startpoints``."""
    end = np.asarray(endpoints, np.float64).reshape(4, 2)
    start = np.asarray(startpoints, np.float64).reshape(4, 2)
    a = np.zeros((8, 8))
    a[0::2, 0:2], a[0::2, 2] = end, 1
    a[1::2, 3:5], a[1::2, 5] = end, 1
    a[0::2, 6:8] = -start[:, :1] * end
    a[1::2, 6:8] = -start[:, 1:] * end
    return list(np.linalg.lstsq(a, start.reshape(8), rcond=None)[0])


def _check_points(points, op, name):
    arr = np.asarray(points, dtype=np.float64)
    if arr.shape != (4, 2):
        raise ValueError(f"{op}: {name} should be 4 points [[x, y], ...], got shape "
                         f"{list(arr.shape)}")


def perspective(img, startpoints, endpoints, interpolation="nearest", fill=0):
    """Warp an image so that ``startpoints`` land on ``endpoints``.

    Args:
        img (PIL.Image|np.ndarray|Tensor): The image.
        startpoints (list): Four corners [top-left, top-right, bottom-right, bottom-left] of
            the original image, as [x, y].
        endpoints (list): Where those corners go.
        interpolation (str, optional): 'nearest' (default), 'bilinear' or 'bicubic' (not for
            Tensors).
        fill (int|list|tuple, optional): Value for pixels outside the source. Default 0.

    Returns:
        PIL.Image|np.ndarray|Tensor: The warped image.
    """
    _check_img(img, "perspective")
    _check_points(startpoints, "perspective", "startpoints")
    _check_points(endpoints, "perspective", "endpoints")
    if _is_numpy_image(img):
        return F_cv2.perspective(img, startpoints, endpoints, interpolation, fill)
    coeffs = _get_perspective_coeffs(startpoints, endpoints)
    if _is_pil_image(img):
        return F_pil.perspective(img, coeffs, interpolation, fill)
    return F_t.perspective(img, coeffs, interpolation, fill)


def to_grayscale(img, num_output_channels=1):
    """Convert an RGB image to grayscale.

    Args:
        img (PIL.Image|np.ndarray|Tensor): The image.
        num_output_channels (int, optional): 1 (default) or 3 (gray repeated).

    Returns:
        PIL.Image|np.ndarray|Tensor: The gray image.
    """
    _check_img(img, "to_grayscale")
    if num_output_channels not in (1, 3):
        raise ValueError(f"to_grayscale: num_output_channels should be 1 or 3, got "
                         f"{num_output_channels!r}")
    return _dispatch(img, lambda: F_pil.to_grayscale(img, num_output_channels),
                     lambda: F_cv2.to_grayscale(img, num_output_channels),
                     lambda: F_t.to_grayscale(img, num_output_channels))


def normalize(img, mean, std, data_format="CHW", to_rgb=False):
    """Normalize each channel: ``(img - mean) / std``.

    Args:
        img (PIL.Image|np.ndarray|Tensor): The image; PIL images become float32 arrays.
        mean (float|list|tuple): Per-channel means.
        std (float|list|tuple): Per-channel standard deviations.
        data_format (str, optional): Layout of ``img``, 'CHW' (default) or 'HWC'.
        to_rgb (bool, optional): Reverse the channel order first (arrays only).

    Returns:
        np.ndarray|Tensor: The normalized image.

    Examples:
        >>> import numpy as np
        >>> from paddle_hl.vision.transforms import functional as F
        >>> F.normalize(np.full((2, 2, 3), 3.0), [1, 1, 1], [2, 2, 2], 'HWC')[0, 0]
        array([1., 1., 1.])
    """
    if data_format not in ("CHW", "HWC"):
        raise ValueError(f"normalize: data_format should be 'CHW' or 'HWC', got "
                         f"{data_format!r}")
    if _is_tensor_image(img):
        return F_t.normalize(img, mean, std, data_format)
    if _is_pil_image(img):
        img = np.array(img).astype(np.float32)
    if not isinstance(img, np.ndarray):
        raise TypeError(f"normalize: img should be a PIL Image, ndarray or Tensor, got "
                        f"{type(img).__name__}")
    return F_cv2.normalize(img, mean, std, data_format, to_rgb)


def erase(img, i, j, h, w, v, inplace=False):
    """Fill the box ``[i:i+h, j:j+w]`` of an image with ``v``.

    Args:
        img (PIL.Image|np.ndarray|Tensor): The image (``CHW`` Tensor, ``HWC`` array).
        i (int): Top row of the box.
        j (int): Left column of the box.
        h (int): Height of the box.
        w (int): Width of the box.
        v (int|float|np.ndarray|Tensor): The value(s) to write.
        inplace (bool, optional): Write into ``img`` (arrays and Tensors). Default False.

    Returns:
        PIL.Image|np.ndarray|Tensor: The erased image.
    """
    _check_img(img, "erase")
    return _dispatch(img, lambda: F_pil.erase(img, i, j, h, w, v, inplace),
                     lambda: F_cv2.erase(img, i, j, h, w, v, inplace),
                     lambda: F_t.erase(img, i, j, h, w, v, inplace))
