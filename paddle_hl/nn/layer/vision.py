"""Resampling and vision layers: Upsample, UpsamplingNearest2D, UpsamplingBilinear2D,
PixelShuffle, PixelUnshuffle and ChannelShuffle (thin wrappers of ``nn.functional.vision``)."""

from __future__ import annotations

import numbers

from ...tensor._helpers import name_suffix as _name_suffix
from ..functional import vision as _fv
from .layers import Layer

__all__ = []


def _size_or_scale(size, scale_factor):
    # Paddle shows scale_factor when it is set, size otherwise (even when None)
    return f"scale_factor={scale_factor}" if scale_factor is not None else f"size={size}"


def _check_format(data_format, where):
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"{where}: data format should be 'NCHW' or 'NHWC', but received "
                         f"data format: {data_format}")


def _check_int(v, where, msg_type, msg_pos=None):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{where}: {msg_type}, got {type(v).__name__} {v!r}")
    if msg_pos is not None and v <= 0:
        raise ValueError(f"{where}: {msg_pos}, got {v}")


class Upsample(Layer):
    """Resize the input by interpolation (the layer form of ``F.interpolate``).

    Args:
        size (list|tuple|Tensor, optional): output spatial size.
        scale_factor (float|list|tuple|Tensor, optional): multiplier of the spatial size;
            exactly one of size and scale_factor is given.
        mode (str): 'nearest', 'linear', 'bilinear', 'bicubic', 'trilinear' or 'area'.
        align_corners (bool): align the corner pixels of input and output.
        align_mode (int): 0 (half-pixel centres) or 1 (``dst * ratio``) for linear-type modes.
        data_format (str): 'NCW', 'NWC', 'NCHW', 'NHWC', 'NCDHW' or 'NDHWC' by input rank.
        name (str, optional): shown in the repr.

    Shape:
        [N, C, *spatial] (or channel-last) -> the same with the new spatial size.

    Example:
        >>> up = paddle.nn.Upsample(scale_factor=2, mode='bilinear')
        >>> up(paddle.rand([1, 3, 4, 4])).shape
        [1, 3, 8, 8]
    """

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=False,
                 align_mode=0, data_format="NCHW", name=None):
        super().__init__()
        self.size = size
        self.scale_factor = scale_factor
        self.mode = mode.lower() if isinstance(mode, str) else mode
        self.align_corners = align_corners
        self.align_mode = align_mode
        self.data_format = data_format
        self.name = name

    def forward(self, x):
        return _fv.interpolate(x, size=self.size, scale_factor=self.scale_factor,
                               mode=self.mode, align_corners=self.align_corners,
                               align_mode=self.align_mode, data_format=self.data_format,
                               name=self.name)

    def extra_repr(self):
        return (f"{_size_or_scale(self.size, self.scale_factor)}, mode={self.mode}, "
                f"align_corners={self.align_corners}, align_mode={self.align_mode}, "
                f"data_format={self.data_format}{_name_suffix(self.name)}")


class _Upsampling2D(Layer):
    """Fixed-mode upsampling of 4-D input; subclasses set ``_mode`` and ``_align_corners``."""

    _mode = "nearest"
    _align_corners = False

    def __init__(self, size=None, scale_factor=None, data_format="NCHW", name=None):
        super().__init__()
        self.size = size
        self.scale_factor = scale_factor
        self.data_format = data_format
        self.name = name

    def forward(self, x):
        return _fv.interpolate(x, size=self.size, scale_factor=self.scale_factor,
                               mode=self._mode, align_corners=self._align_corners, align_mode=0,
                               data_format=self.data_format, name=self.name)

    def extra_repr(self):
        return (f"{_size_or_scale(self.size, self.scale_factor)}, "
                f"data_format={self.data_format}{_name_suffix(self.name)}")


class UpsamplingNearest2D(_Upsampling2D):
    """Nearest-neighbour upsampling of 4-D input.

    Args:
        size (list|tuple|Tensor, optional): output [H, W].
        scale_factor (float|list|tuple|Tensor, optional): multiplier of H and W.
        data_format (str): 'NCHW' or 'NHWC'.
        name (str, optional): shown in the repr.

    Shape:
        [N, C, H, W] -> [N, C, H_out, W_out].

    Example:
        >>> paddle.nn.UpsamplingNearest2D(scale_factor=2)(paddle.rand([1, 1, 2, 2])).shape
        [1, 1, 4, 4]
    """

    _mode = "nearest"
    _align_corners = False


class UpsamplingBilinear2D(_Upsampling2D):
    """Bilinear upsampling of 4-D input with aligned corners (``align_corners=True``).

    Args:
        size (list|tuple|Tensor, optional): output [H, W].
        scale_factor (float|list|tuple|Tensor, optional): multiplier of H and W.
        data_format (str): 'NCHW' or 'NHWC'.
        name (str, optional): shown in the repr.

    Shape:
        [N, C, H, W] -> [N, C, H_out, W_out].

    Example:
        >>> paddle.nn.UpsamplingBilinear2D(size=[4, 4])(paddle.rand([1, 1, 2, 2])).shape
        [1, 1, 4, 4]
    """

    _mode = "bilinear"
    _align_corners = True


class _Shuffle(Layer):
    """Channel/space rearrangement by one int ``_arg`` (PixelShuffle and its kin): checks the
    int and the data format, calls ``_fn(x, value, data_format, name)``, and shows
    data_format in the repr only when it is not NCHW."""

    _fn = None
    _arg = ""

    def __init__(self, value, data_format, name, type_msg, positive_msg=None):
        super().__init__()
        where = type(self).__name__
        _check_int(value, where, type_msg, positive_msg)
        _check_format(data_format, where)
        setattr(self, "_" + self._arg, value)
        self._data_format = data_format
        self._name = name

    def forward(self, x):
        return self._fn(x, getattr(self, "_" + self._arg), self._data_format, self._name)

    def extra_repr(self):
        main = f"{self._arg}={getattr(self, '_' + self._arg)}"
        if self._data_format != "NCHW":
            main += f", data_format={self._data_format}"
        return main + _name_suffix(self._name)


class PixelShuffle(_Shuffle):
    """Rearrange [N, C*r*r, H, W] into [N, C, H*r, W*r] (the layer form of F.pixel_shuffle).

    Args:
        upscale_factor (int): the factor r.
        data_format (str): 'NCHW' or 'NHWC'.
        name (str, optional): shown in the repr.

    Shape:
        [N, C*r*r, H, W] -> [N, C, H*r, W*r].

    Example:
        >>> paddle.nn.PixelShuffle(3)(paddle.rand([2, 9, 4, 4])).shape
        [2, 1, 12, 12]
    """

    _fn = staticmethod(_fv.pixel_shuffle)
    _arg = "upscale_factor"

    def __init__(self, upscale_factor, data_format="NCHW", name=None):
        super().__init__(upscale_factor, data_format, name, "upscale factor must be int type")


class PixelUnshuffle(_Shuffle):
    """Rearrange [N, C, H*r, W*r] into [N, C*r*r, H, W]; the inverse of :class:`PixelShuffle`.

    Args:
        downscale_factor (int): the factor r; it must divide H and W.
        data_format (str): 'NCHW' or 'NHWC'.
        name (str, optional): shown in the repr.

    Shape:
        [N, C, H, W] -> [N, C*r*r, H/r, W/r].

    Example:
        >>> paddle.nn.PixelUnshuffle(2)(paddle.rand([1, 1, 4, 4])).shape
        [1, 4, 2, 2]
    """

    _fn = staticmethod(_fv.pixel_unshuffle)
    _arg = "downscale_factor"

    def __init__(self, downscale_factor, data_format="NCHW", name=None):
        super().__init__(downscale_factor, data_format, name, "Downscale factor must be int type",
                         "Downscale factor must be positive")


class ChannelShuffle(_Shuffle):
    """Interleave the channels of ``groups`` groups (the layer form of F.channel_shuffle).

    Args:
        groups (int): number of groups; it must divide the channel count.
        data_format (str): 'NCHW' or 'NHWC'.
        name (str, optional): shown in the repr.

    Shape:
        [N, C, H, W] -> [N, C, H, W].

    Example:
        >>> paddle.nn.ChannelShuffle(2)(paddle.rand([1, 4, 2, 2])).shape
        [1, 4, 2, 2]
    """

    _fn = staticmethod(_fv.channel_shuffle)
    _arg = "groups"

    def __init__(self, groups, data_format="NCHW", name=None):
        super().__init__(groups, data_format, name, "groups must be int type",
                         "groups must be positive")
