"""Transform classes: callables that build a data pipeline from the functional forms.

Each transform follows Paddle's protocol: ``__call__`` draws the random parameters once with
``_get_params(inputs)`` into ``self.params``, then applies ``_apply_<key>`` to each input named in
``keys`` (``'image'``, ``'boxes'``, ``'mask'``, ...). Drawing the parameters once per call means an
image and its mask get the same crop or flip. Random numbers come from paddle_hl's generator, so
``paddle.seed`` makes a pipeline repeat.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import numpy as np

import paddle_hl as paddle

from . import functional as F

__all__ = []


# --------------------------------------------------------------------------- randomness

def _random():
    """A float in [0, 1) from paddle_hl's generator."""
    return float(paddle.rand([], dtype="float64").item())


def _uniform(low, high):
    return low + (high - low) * _random()


def _randint(low, high):
    """An int in [low, high] (both ends included, like ``random.randint``)."""
    return int(paddle.randint(int(low), int(high) + 1, []).item())


def _get_image_size(img):
    """(width, height) of a PIL image, ``HWC`` array or ``CHW``/``NCHW`` Tensor."""
    if F._is_pil_image(img):
        return img.size
    if F._is_numpy_image(img):
        return img.shape[1], img.shape[0]
    if F._is_tensor_image(img):
        if img.ndim not in (3, 4):
            raise ValueError(f"a Tensor image should be 3-D or 4-D, got {img.ndim}-D")
        return img.shape[-1], img.shape[-2]
    raise TypeError(f"unexpected image type {type(img).__name__}")


def _check_input(value, name, center=1, bound=(0, float("inf")), clip_first_on_zero=True):
    """Turn a jitter amount into a (low, high) range, or None when it changes nothing."""
    if isinstance(value, numbers.Number):
        if value < 0:
            raise ValueError(f"If {name} is a single number, it must be non negative, got "
                             f"{value}")
        value = [center - value, center + value]
        if clip_first_on_zero:
            value[0] = max(value[0], 0)
    elif isinstance(value, (tuple, list)) and len(value) == 2:
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            raise ValueError(f"{name} values should be between {bound}, got {value}")
        value = list(value)
    else:
        raise TypeError(f"{name} should be a single number or a list/tuple with length 2, got "
                        f"{value!r}")
    if value[0] == value[1] == center:
        return None
    return value


def _setup_size(size, name="size"):
    if isinstance(size, numbers.Integral):
        return int(size), int(size)
    if isinstance(size, Sequence) and len(size) == 2:
        return tuple(int(s) for s in size)
    raise TypeError(f"{name} should be an int or a sequence (h, w), got {size!r}")


def _setup_angle(x, name, req_sizes=(2,)):
    if isinstance(x, numbers.Number):
        if x < 0:
            raise ValueError(f"If {name} is a single number, it must be positive, got {x}")
        return [-x, x]
    if not isinstance(x, Sequence) or len(x) not in req_sizes:
        raise ValueError(f"{name} should be a number or a sequence of length "
                         f"{' or '.join(str(s) for s in req_sizes)}, got {x!r}")
    return [float(d) for d in x]


class Compose:
    """Chain transforms: each one's output is the next one's input.

    Args:
        transforms (list|tuple): The transforms to apply in order.

    Examples:
        >>> import numpy as np
        >>> from paddle_hl.vision.transforms import Compose, Resize, ToTensor
        >>> t = Compose([Resize((8, 8)), ToTensor()])
        >>> t(np.zeros((16, 20, 3), np.uint8)).shape
        [3, 8, 8]
    """

    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, data):
        for f in self.transforms:
            data = f(data)
        return data

    def __repr__(self):
        body = "".join(f"\n    {t}" for t in self.transforms)
        return f"{type(self).__name__}({body}\n)"


class BaseTransform:
    """Base class of the transforms.

    A subclass draws its random parameters in ``_get_params(inputs)`` (stored in
    ``self.params`` for the call) and transforms each input in ``_apply_<key>``.

    Args:
        keys (list[str]|tuple[str], optional): What each element of a tuple input is:
            'image' (``HWC`` image), 'boxes' (``[N, 4]`` xyxy), 'mask' (``HxW[x1]``), 'coords'
            (``[N, 2]``) or any name with an ``_apply_<name>`` method. Inputs beyond ``keys``
            pass through. Default ``('image',)``.

    Examples:
        >>> import numpy as np
        >>> from paddle_hl.vision.transforms import BaseTransform, functional as F
        >>> class Flip(BaseTransform):
        ...     def _apply_image(self, image):
        ...         return F.hflip(image)
        >>> Flip()(np.arange(3).reshape(1, 3, 1))[0, :, 0]
        array([2, 1, 0])
    """

    def __init__(self, keys=None):
        if keys is None:
            keys = ("image",)
        elif isinstance(keys, str) or not isinstance(keys, Sequence):
            raise ValueError(f"keys should be a sequence, but got keys={keys!r}")
        for k in keys:
            if self._get_apply(k) is None:
                raise ValueError(f"{type(self).__name__}: {k!r} is an unsupported data "
                                 f"structure (no _apply_{k} method)")
        self.keys = keys
        self.params = None

    def _get_params(self, inputs):
        return None

    def __call__(self, inputs):
        if not isinstance(inputs, tuple):
            inputs = (inputs,)
        self.params = self._get_params(inputs)
        outputs = []
        for i in range(min(len(inputs), len(self.keys))):
            apply = self._get_apply(self.keys[i])
            outputs.append(inputs[i] if apply is None else apply(inputs[i]))
        outputs.extend(inputs[len(self.keys):])
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _get_apply(self, key):
        return getattr(self, f"_apply_{key}", None)

    def _image(self, inputs):
        """The first input tagged 'image' (what the random parameters are sized on)."""
        keys = list(self.keys)
        return inputs[keys.index("image")] if "image" in keys else inputs[0]

    def _apply_image(self, image):
        raise TypeError(f"{type(self).__name__} does not transform images: define "
                        f"_apply_image in the subclass")

    def __repr__(self):
        return f"{type(self).__name__}()"


class _GeometricMixin:
    """Boxes and masks follow the image through flips and crops; masks use nearest."""

    def _apply_mask(self, mask):
        return self._apply_image(mask)


class ToTensor(BaseTransform):
    """Convert a PIL image or ``HWC`` ndarray to a Tensor (uint8 scaled to [0, 1]).

    Args:
        data_format (str, optional): 'CHW' (default) or 'HWC'.
        keys (list[str]|tuple[str], optional): See ``BaseTransform``.

    Examples:
        >>> import numpy as np
        >>> from paddle_hl.vision.transforms import ToTensor
        >>> t = ToTensor()(np.full((4, 5, 3), 255, np.uint8))
        >>> t.shape, float(t.max())
        ([3, 4, 5], 1.0)
    """

    def __init__(self, data_format="CHW", keys=None):
        super().__init__(keys)
        self.data_format = data_format

    def _apply_image(self, img):
        return F.to_tensor(img, self.data_format)


class Resize(BaseTransform):
    """Resize to ``size`` (``(h, w)``, or an int matched by the shorter edge).

    Args:
        size (int|list|tuple): Output size.
        interpolation (str, optional): See ``functional.resize``. Default 'bilinear'.
        keys (list[str]|tuple[str], optional): See ``BaseTransform``.

    Examples:
        >>> from PIL import Image
        >>> from paddle_hl.vision.transforms import Resize
        >>> Resize(224)(Image.new('RGB', (300, 200))).size
        (336, 224)
    """

    def __init__(self, size, interpolation="bilinear", keys=None):
        super().__init__(keys)
        if not (isinstance(size, int) or (isinstance(size, Sequence) and len(size) == 2)):
            raise TypeError(f"Resize: size should be an int or a sequence (h, w), got {size!r}")
        self.size = size
        self.interpolation = interpolation

    def _get_params(self, inputs):
        return {"size": _get_image_size(self._image(inputs))}

    def _apply_image(self, img):
        return F.resize(img, self.size, self.interpolation)

    def _apply_mask(self, mask):
        return F.resize(mask, self.size, "nearest")

    def _apply_boxes(self, boxes):
        w, h = self.params["size"]
        out = F.resize(np.zeros((h, w), np.uint8), self.size, "nearest")
        oh, ow = out.shape[:2]
        scale = np.array([ow / w, oh / h, ow / w, oh / h])
        return np.asarray(boxes) * scale


class RandomResizedCrop(BaseTransform):
    """Crop a random area and aspect ratio of the image, then resize it to ``size``.

    Args:
        size (int|list|tuple): Output size ``(h, w)``.
        scale (list|tuple, optional): Range of the crop area relative to the image.
        ratio (list|tuple, optional): Range of the crop aspect ratio (w / h).
        interpolation (str, optional): See ``functional.resize``. Default 'bilinear'.
        keys (list[str]|tuple[str], optional): See ``BaseTransform``.
    """

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4, 4.0 / 3),
                 interpolation="bilinear", keys=None):
        super().__init__(keys)
        self.size = _setup_size(size)
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            raise ValueError(f"RandomResizedCrop: scale and ratio should be (min, max), got "
                             f"scale={scale}, ratio={ratio}")
        self.scale = scale
        self.ratio = ratio
        self.interpolation = interpolation

    def _dynamic_get_param(self, image, attempts=10):
        width, height = _get_image_size(image)
        area = height * width
        log_ratio = (math.log(self.ratio[0]), math.log(self.ratio[1]))
        for _ in range(attempts):
            target_area = _uniform(*self.scale) * area
            aspect = math.exp(_uniform(*log_ratio))
            w = int(round(math.sqrt(target_area * aspect)))
            h = int(round(math.sqrt(target_area / aspect)))
            if 0 < w <= width and 0 < h <= height:
                return _randint(0, height - h), _randint(0, width - w), h, w
        # fall back to the largest centred crop within the ratio range
        in_ratio = float(width) / float(height)
        if in_ratio < min(self.ratio):
            w, h = width, int(round(width / min(self.ratio)))
        elif in_ratio > max(self.ratio):
            h, w = height, int(round(height * max(self.ratio)))
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def _get_params(self, inputs):
        return {"crop": self._dynamic_get_param(self._image(inputs))}

    def _apply_image(self, img):
        i, j, h, w = self.params["crop"]
        return F.resize(F.crop(img, i, j, h, w), self.size, self.interpolation)

    def _apply_mask(self, mask):
        i, j, h, w = self.params["crop"]
        return F.resize(F.crop(mask, i, j, h, w), self.size, "nearest")


class CenterCrop(_GeometricMixin, BaseTransform):
    """Crop the centre ``size`` region.

    Args:
        size (int|list|tuple): Output size ``(h, w)`` or an int for a square.
        keys (list[str]|tuple[str], optional): See ``BaseTransform``.
    """

    def __init__(self, size, keys=None):
        super().__init__(keys)
        self.size = _setup_size(size)

    def _apply_image(self, img):
        return F.center_crop(img, self.size)


class _RandomFlip(_GeometricMixin, BaseTransform):
    _flip = None

    def __init__(self, prob=0.5, keys=None):
        super().__init__(keys)
        if not 0 <= prob <= 1:
            raise ValueError(f"{type(self).__name__}: prob should be in [0, 1], got {prob}")
        self.prob = prob

    def _get_params(self, inputs):
        return {"flip": _random() < self.prob, "size": _get_image_size(self._image(inputs))}

    def _apply_image(self, img):
        return type(self)._flip(img) if self.params["flip"] else img


class RandomHorizontalFlip(_RandomFlip):
    """Flip the image left-right with probability ``prob``.

    Args:
        prob (float, optional): Probability of flipping, in [0, 1]. Default 0.5.
        keys (list[str]|tuple[str], optional): See ``BaseTransform``.
    """

    _flip = staticmethod(F.hflip)

    def _apply_boxes(self, boxes):
        boxes = np.array(boxes, copy=True)
        if self.params["flip"]:
            w = self.params["size"][0]
            boxes[..., [0, 2]] = w - boxes[..., [2, 0]]
        return boxes


class RandomVerticalFlip(_RandomFlip):
    """Flip the image top-bottom with probability ``prob``.

    Args:
        prob (float, optional): Probability of flipping, in [0, 1]. Default 0.5.
        keys (list[str]|tuple[str], optional): See ``BaseTransform``.
    """

    _flip = staticmethod(F.vflip)

    def _apply_boxes(self, boxes):
        boxes = np.array(boxes, copy=True)
        if self.params["flip"]:
            h = self.params["size"][1]
            boxes[..., [1, 3]] = h - boxes[..., [3, 1]]
        return boxes


class Normalize(BaseTransform):
    """Normalize each channel: ``(img - mean) / std``.

    Args:
        mean (int|float|list|tuple, optional): Channel means (a number means all channels).
        std (int|float|list|tuple, optional): Channel standard deviations.
        data_format (str, optional): 'CHW' (default) or 'HWC'.
        to_rgb (bool, optional): Reverse the channel order first. Default False.
        keys (list[str]|tuple[str], optional): See ``BaseTransform``.

    Examples:
        >>> import numpy as np
        >>> from paddle_hl.vision.transforms import Normalize
        >>> Normalize(127.5, 127.5, data_format='HWC')(np.full((2, 2, 3), 255, np.float32))[0, 0]
        array([1., 1., 1.], dtype=float32)
    """

    def __init__(self, mean=0.0, std=1.0, data_format="CHW", to_rgb=False, keys=None):
        super().__init__(keys)
        if isinstance(mean, numbers.Number):
            mean = [mean, mean, mean]
        if isinstance(std, numbers.Number):
            std = [std, std, std]
        self.mean = mean
        self.std = std
        self.data_format = data_format
        self.to_rgb = to_rgb

    def _apply_image(self, img):
        return F.normalize(img, self.mean, self.std, self.data_format, self.to_rgb)


class Transpose(BaseTransform):
    """Permute the axes of an ndarray or Tensor image (PIL images become ndarrays).

    Args:
        order (list|tuple, optional): The new axis order. Default (2, 0, 1): HWC -> CHW.
        keys (list[str]|tuple[str], optional): See ``BaseTransform``.
    """

    def __init__(self, order=(2, 0, 1), keys=None):
        super().__init__(keys)
        self.order = order

    def _apply_image(self, img):
        if F._is_tensor_image(img):
            return img.transpose(list(self.order))
        if F._is_pil_image(img):
            img = np.asarray(img)
        if img.ndim == 2:
            img = img[..., np.newaxis]
        return img.transpose(self.order)


class _ColorTransform(BaseTransform):
    """A colour jitter: masks and boxes pass through unchanged."""

    _name = ""
    _center, _bound, _clip = 1, (0, float("inf")), True

    def __init__(self, value, keys=None):
        super().__init__(keys)
        self.value = _check_input(value, self._name, self._center, self._bound, self._clip)

    def _get_params(self, inputs):
        return {"factor": None if self.value is None else _uniform(*self.value)}

    def _apply_image(self, img):
        factor = self.params["factor"]
        return img if factor is None else self._adjust(img, factor)

    def _apply_mask(self, mask):
        return mask

    def _apply_boxes(self, boxes):
        return boxes


class BrightnessTransform(_ColorTransform):
    """Scale the brightness by a factor drawn from [max(0, 1 - value), 1 + value].

    Args:
        value (float): Non-negative jitter amount; 0 keeps the image.
        keys (list[str]|tuple[str], optional): See ``BaseTransform``.
    """

    _name = "brightness"
    _adjust = staticmethod(F.adjust_brightness)


class ContrastTransform(_ColorTransform):
    """Adjust the contrast by a factor drawn from [max(0, 1 - value), 1 + value].

    Args:
        value (float): Non-negative jitter amount; 0 keeps the image.
        keys (list[str]|tuple[str], optional): See ``BaseTransform``.
    """

    _name = "contrast"
    _adjust = staticmethod(F.adjust_contrast)


class SaturationTransform(_ColorTransform):
    """Adjust the saturation by a factor drawn from [max(0, 1 - value), 1 + value].

    Args:
        value (float): Non-negative jitter amount; 0 keeps the image.
        keys (list[str]|tuple[str], optional): See ``BaseTransform``.
    """

    _name = "saturation"
    _adjust = staticmethod(F.adjust_saturation)


class HueTransform(_ColorTransform):
    """Shift the hue by a factor drawn from [-value, value].

    Args:
        value (float): In [0, 0.5]; 0 keeps the image.
        keys (list[str]|tuple[str], optional): See ``BaseTransform``.
    """

    _name = "hue"
    _center, _bound, _clip = 0, (-0.5, 0.5), False
    _adjust = staticmethod(F.adjust_hue)

    def __init__(self, value, keys=None):
        if isinstance(value, numbers.Number) and value > 0.5:
            raise ValueError(f"HueTransform: value should be in [0, 0.5], got {value}")
        super().__init__(value, keys)


class ColorJitter(BaseTransform):
    """Randomly change brightness, contrast, saturation and hue, in a random order.

    Args:
        brightness (float, optional): Brightness jitter, factor in [max(0, 1 - b), 1 + b].
        contrast (float, optional): Contrast jitter, factor in [max(0, 1 - c), 1 + c].
        saturation (float, optional): Saturation jitter, factor in [max(0, 1 - s), 1 + s].
        hue (float, optional): Hue jitter in [0, 0.5], shift in [-hue, hue].
        keys (list[str]|tuple[str], optional): See ``BaseTransform``.
    """

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0, keys=None):
        super().__init__(keys)
        self.brightness = brightness
        self.contrast = contrast
        self.saturation = saturation
        self.hue = hue
        self._parts = [BrightnessTransform(brightness), ContrastTransform(contrast),
                       SaturationTransform(saturation), HueTransform(hue)]

    def _get_params(self, inputs):
        order = paddle.randperm(len(self._parts)).numpy().tolist()
        picks = []
        for k in order:
            part = self._parts[k]
            if part.value is not None:
                picks.append((type(part)._adjust, _uniform(*part.value)))
        return {"ops": picks}

    def _apply_image(self, img):
        for adjust, factor in self.params["ops"]:
            img = adjust(img, factor)
        return img

    def _apply_mask(self, mask):
        return mask


class RandomCrop(_GeometricMixin, BaseTransform):
    """Crop a random ``size`` region, optionally padding the image first.

    Args:
        size (int|list|tuple): Output size ``(h, w)`` or an int for a square.
        padding (int|list|tuple, optional): Padding applied first (see ``functional.pad``).
        pad_if_needed (bool, optional): Pad an image smaller than ``size``. Default False.
        fill (float|tuple, optional): Fill for constant padding. Default 0.
        padding_mode (str, optional): 'constant', 'edge', 'reflect' or 'symmetric'.
        keys (list[str]|tuple[str], optional): See ``BaseTransform``.
    """

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant",
                 keys=None):
        super().__init__(keys)
        self.size = _setup_size(size)
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode

    def _padded_size(self, img):
        w, h = _get_image_size(img)
        if self.padding is not None:
            left, top, right, bottom = F._norm_padding(self.padding, "RandomCrop")
            w, h = w + left + right, h + top + bottom
        th, tw = self.size
        if self.pad_if_needed:
            w, h = w + 2 * max(tw - w, 0), h + 2 * max(th - h, 0)
        return w, h

    def _get_param(self, img, output_size):
        w, h = self._padded_size(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(f"RandomCrop: crop size {output_size} is larger than the image "
                             f"({h}, {w}); use padding or pad_if_needed=True")
        if w == tw and h == th:
            return 0, 0, h, w
        return _randint(0, h - th), _randint(0, w - tw), th, tw

    def _get_params(self, inputs):
        return {"crop": self._get_param(self._image(inputs), self.size)}

    def _apply_image(self, img):
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        w, h = _get_image_size(img)
        th, tw = self.size
        if self.pad_if_needed and w < tw:
            img = F.pad(img, (tw - w, 0), self.fill, self.padding_mode)
        if self.pad_if_needed and h < th:
            img = F.pad(img, (0, th - h), self.fill, self.padding_mode)
        i, j, ch, cw = self.params["crop"]
        return F.crop(img, i, j, ch, cw)


class Pad(_GeometricMixin, BaseTransform):
    """Pad the image borders.

    Args:
        padding (int|list|tuple): See ``functional.pad``.
        fill (int|list|tuple, optional): Constant fill. Default 0.
        padding_mode (str, optional): 'constant', 'edge', 'reflect' or 'symmetric'.
        keys (list[str]|tuple[str], optional): See ``BaseTransform``.
    """

    def __init__(self, padding, fill=0, padding_mode="constant", keys=None):
        F._norm_padding(padding, "Pad")
        if not isinstance(fill, (numbers.Number, str, list, tuple)):
            raise TypeError(f"Pad: fill should be a number or a sequence, got {fill!r}")
        if padding_mode not in F._PAD_MODES:
            raise ValueError(f"Pad: padding_mode should be one of {list(F._PAD_MODES)}, got "
                             f"{padding_mode!r}")
        super().__init__(keys)
        self.padding = padding
        self.fill = fill
        self.padding_mode = padding_mode

    def _apply_image(self, img):
        return F.pad(img, self.padding, self.fill, self.padding_mode)

    def _apply_boxes(self, boxes):
        left, top, _, _ = F._norm_padding(self.padding, "Pad")
        return np.asarray(boxes) + np.array([left, top, left, top])


class RandomAffine(BaseTransform):
    """Random affine transform: rotation, translation, scale and shear.

    Args:
        degrees (int|float|tuple): Rotation range; a number d means (-d, d). Clockwise.
        translate (tuple, optional): Maximum fractions (a, b) of the width and height to shift.
        scale (tuple, optional): Scale range (min, max).
        shear (int|float|tuple, optional): x-shear range, or (x_min, x_max, y_min, y_max).
        interpolation (str, optional): 'nearest' (default), 'bilinear' or 'bicubic'.
        fill (int|list|tuple, optional): Value for the area outside the source. Default 0.
        center (tuple, optional): Centre (x, y) of the transform; default the middle.
        keys (list[str]|tuple[str], optional): See ``BaseTransform``.
    """

    def __init__(self, degrees, translate=None, scale=None, shear=None, interpolation="nearest",
                 fill=0, center=None, keys=None):
        super().__init__(keys)
        self.degrees = _setup_angle(degrees, "degrees")
        if translate is not None:
            if not isinstance(translate, Sequence) or len(translate) != 2:
                raise ValueError(f"RandomAffine: translate should be a sequence of 2 values, got "
                                 f"{translate!r}")
            if not all(0.0 <= t <= 1.0 for t in translate):
                raise ValueError(f"RandomAffine: translate values should be in [0, 1], got "
                                 f"{translate}")
        if scale is not None:
            if not isinstance(scale, Sequence) or len(scale) != 2:
                raise ValueError(f"RandomAffine: scale should be a sequence of 2 values, got "
                                 f"{scale!r}")
            if any(s <= 0 for s in scale):
                raise ValueError(f"RandomAffine: scale values should be positive, got {scale}")
        if shear is not None:
            shear = _setup_angle(shear, "shear", req_sizes=(2, 4))
        self.translate = translate
        self.scale = scale
        self.shear = shear
        self.interpolation = interpolation
        self.fill = fill
        if center is not None and (not isinstance(center, Sequence) or len(center) != 2):
            raise ValueError(f"RandomAffine: center should be a sequence (x, y), got {center!r}")
        self.center = center

    def _get_param(self, img_size, degrees, translate=None, scale_ranges=None, shears=None):
        angle = _uniform(degrees[0], degrees[1])
        tx = ty = 0
        if translate is not None:
            max_dx = float(translate[0] * img_size[0])
            max_dy = float(translate[1] * img_size[1])
            tx = int(_uniform(-max_dx, max_dx))
            ty = int(_uniform(-max_dy, max_dy))
        scale = 1.0 if scale_ranges is None else _uniform(*scale_ranges)
        shear_x = shear_y = 0.0
        if shears is not None:
            shear_x = _uniform(shears[0], shears[1])
            if len(shears) == 4:
                shear_y = _uniform(shears[2], shears[3])
        return angle, (tx, ty), scale, (shear_x, shear_y)

    def _get_params(self, inputs):
        size = _get_image_size(self._image(inputs))
        return {"affine": self._get_param(size, self.degrees, self.translate, self.scale,
                                          self.shear)}

    def _apply_image(self, img):
        angle, translate, scale, shear = self.params["affine"]
        return F.affine(img, angle, list(translate), scale, list(shear), self.interpolation,
                        self.fill, self.center)

    def _apply_mask(self, mask):
        angle, translate, scale, shear = self.params["affine"]
        return F.affine(mask, angle, list(translate), scale, list(shear), "nearest", 0,
                        self.center)


class RandomRotation(BaseTransform):
    """Rotate by a random angle.

    Args:
        degrees (int|float|tuple): Angle range; a number d means (-d, d). Counter-clockwise.
        interpolation (str, optional): 'nearest' (default), 'bilinear' or 'bicubic'.
        expand (bool, optional): Grow the output to hold the whole image. Default False.
        center (tuple, optional): Centre (x, y) of rotation; default the middle.
        fill (int|list|tuple, optional): Value for the area outside the source. Default 0.
        keys (list[str]|tuple[str], optional): See ``BaseTransform``.
    """

    def __init__(self, degrees, interpolation="nearest", expand=False, center=None, fill=0,
                 keys=None):
        super().__init__(keys)
        self.degrees = _setup_angle(degrees, "degrees")
        self.interpolation = interpolation
        self.expand = expand
        self.center = center
        self.fill = fill

    def _get_param(self, degrees):
        return _uniform(degrees[0], degrees[1])

    def _get_params(self, inputs):
        return {"angle": self._get_param(self.degrees)}

    def _apply_image(self, img):
        return F.rotate(img, self.params["angle"], self.interpolation, self.expand, self.center,
                        self.fill)

    def _apply_mask(self, mask):
        return F.rotate(mask, self.params["angle"], "nearest", self.expand, self.center, 0)


class RandomPerspective(BaseTransform):
    """Apply a random perspective warp with probability ``prob``.

    Args:
        prob (float, optional): Probability of warping. Default 0.5.
        distortion_scale (float, optional): How far corners may move, in [0, 1]. Default 0.5.
        interpolation (str, optional): 'nearest' (default), 'bilinear' or 'bicubic'.
        fill (int|list|tuple, optional): Value for the area outside the source. Default 0.
        keys (list[str]|tuple[str], optional): See ``BaseTransform``.
    """

    def __init__(self, prob=0.5, distortion_scale=0.5, interpolation="nearest", fill=0,
                 keys=None):
        super().__init__(keys)
        if not 0 <= prob <= 1:
            raise ValueError(f"RandomPerspective: prob should be in [0, 1], got {prob}")
        if not 0 <= distortion_scale <= 1:
            raise ValueError(f"RandomPerspective: distortion_scale should be in [0, 1], got "
                             f"{distortion_scale}")
        self.prob = prob
        self.distortion_scale = distortion_scale
        self.interpolation = interpolation
        self.fill = fill

    def get_params(self, width, height, distortion_scale):
        """Draw the corner moves.

        Args:
            width (int): Image width.
            height (int): Image height.
            distortion_scale (float): How far corners may move, in [0, 1].

        Returns:
            tuple: ``(startpoints, endpoints)``, each the four corners [top-left, top-right,
            bottom-right, bottom-left] as [x, y].
        """
        half_w, half_h = width // 2, height // 2
        dx = int(distortion_scale * half_w) + 1
        dy = int(distortion_scale * half_h) + 1
        top_left = [int(_uniform(0, dx)), int(_uniform(0, dy))]
        top_right = [int(_uniform(width - dx, width - 1)), int(_uniform(0, dy))]
        bot_right = [int(_uniform(width - dx, width - 1)), int(_uniform(height - dy, height - 1))]
        bot_left = [int(_uniform(0, dx)), int(_uniform(height - dy, height - 1))]
        start = [[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]]
        return start, [top_left, top_right, bot_right, bot_left]

    def _get_params(self, inputs):
        if _random() >= self.prob:
            return {"points": None}
        w, h = _get_image_size(self._image(inputs))
        return {"points": self.get_params(w, h, self.distortion_scale)}

    def _apply_image(self, img):
        points = self.params["points"]
        if points is None:
            return img
        return F.perspective(img, points[0], points[1], self.interpolation, self.fill)

    def _apply_mask(self, mask):
        points = self.params["points"]
        if points is None:
            return mask
        return F.perspective(mask, points[0], points[1], "nearest", 0)


class Grayscale(BaseTransform):
    """Convert to grayscale.

    Args:
        num_output_channels (int, optional): 1 (default) or 3.
        keys (list[str]|tuple[str], optional): See ``BaseTransform``.
    """

    def __init__(self, num_output_channels=1, keys=None):
        super().__init__(keys)
        if num_output_channels not in (1, 3):
            raise ValueError(f"Grayscale: num_output_channels should be 1 or 3, got "
                             f"{num_output_channels!r}")
        self.num_output_channels = num_output_channels

    def _apply_image(self, img):
        return F.to_grayscale(img, self.num_output_channels)


class RandomErasing(BaseTransform):
    """Erase a random rectangle with probability ``prob``.

    Args:
        prob (float, optional): Probability of erasing. Default 0.5.
        scale (sequence, optional): Range of the erased area relative to the image.
        ratio (sequence, optional): Range of the erased box's aspect ratio.
        value (int|float|sequence|str, optional): Fill value: a number, one value per channel,
            or 'random' for normal noise. Default 0.
        inplace (bool, optional): Erase in place (arrays and Tensors). Default False.
        keys (list[str]|tuple[str], optional): See ``BaseTransform``.

    Examples:
        >>> import paddle_hl as paddle
        >>> from paddle_hl.vision.transforms import RandomErasing
        >>> out = RandomErasing(prob=1.0, value=0)(paddle.ones([3, 8, 8]))
        >>> bool((out == 0).any())
        True
    """

    def __init__(self, prob=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False,
                 keys=None):
        super().__init__(keys)
        if not isinstance(scale, (tuple, list)) or not isinstance(ratio, (tuple, list)):
            raise TypeError("RandomErasing: scale and ratio should be tuples or lists")
        if not isinstance(value, (numbers.Number, str, tuple, list)):
            raise TypeError("RandomErasing: value should be a number, a sequence or 'random'")
        if isinstance(value, str) and value != "random":
            raise ValueError(f"RandomErasing: the only string value is 'random', got {value!r}")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            raise ValueError(f"RandomErasing: scale and ratio should be (min, max), got "
                             f"scale={scale}, ratio={ratio}")
        if scale[0] < 0 or scale[1] > 1:
            raise ValueError(f"RandomErasing: scale should be within [0, 1], got {scale}")
        if not 0 <= prob <= 1:
            raise ValueError(f"RandomErasing: prob should be in [0, 1], got {prob}")
        self.prob = prob
        self.scale = scale
        self.ratio = ratio
        self.value = value
        self.inplace = inplace

    def _layout(self, img):
        """(channels, height, width) of any supported image."""
        if F._is_tensor_image(img):
            return img.shape[-3], img.shape[-2], img.shape[-1]
        arr = np.asarray(img)
        return (arr.shape[2] if arr.ndim == 3 else 1), arr.shape[0], arr.shape[1]

    def _dynamic_get_param(self, img, scale, ratio, value):
        c, h, w = self._layout(img)
        area = h * w
        log_ratio = np.log(np.asarray(ratio, np.float64))
        for _ in range(10):
            erase_area = _uniform(*scale) * area
            aspect = math.exp(_uniform(log_ratio[0], log_ratio[1]))
            eh = int(round(math.sqrt(erase_area * aspect)))
            ew = int(round(math.sqrt(erase_area / aspect)))
            if eh >= h or ew >= w or eh == 0 or ew == 0:
                continue
            if value is None:
                v = paddle.normal(shape=[c, eh, ew]).numpy()
                v = v if F._is_tensor_image(img) else v.transpose(1, 2, 0) * 255
            else:
                v = np.asarray(value, np.float64).reshape(-1)
                v = v[:, None, None] if F._is_tensor_image(img) else v[None, None, :]
            return _randint(0, h - eh), _randint(0, w - ew), eh, ew, v
        return 0, 0, h, w, None

    def _get_params(self, inputs):
        if _random() >= self.prob:
            return {"erase": None}
        img = self._image(inputs)
        value = None if isinstance(self.value, str) else (
            [self.value] if isinstance(self.value, numbers.Number) else list(self.value))
        if value is not None:
            c = self._layout(img)[0]
            if len(value) not in (1, c):
                raise ValueError(f"RandomErasing: value should be a number or one value per "
                                 f"channel ({c}), got {self.value}")
        return {"erase": self._dynamic_get_param(img, self.scale, self.ratio, value)}

    def _apply_image(self, img):
        params = self.params["erase"]
        if params is None or params[4] is None:
            return img
        i, j, h, w, v = params
        if F._is_tensor_image(img):
            v = paddle.to_tensor(v, place=img.place).astype(img.dtype)
        elif F._is_numpy_image(img):
            v = _cast_fill(v, img.dtype)
            if img.ndim == 2:
                v = v[..., 0]
        else:
            v = _cast_fill(v, np.uint8)
        return F.erase(img, i, j, h, w, v, self.inplace)


def _cast_fill(v, dtype):
    dtype = np.dtype(dtype)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return np.clip(v, info.min, info.max).astype(dtype)
    return v.astype(dtype)
