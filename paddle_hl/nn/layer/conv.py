"""Convolution layers: Conv1D/2D/3D, Conv1DTranspose/2D/3D, and the Fold/Unfold layers.

Parameters are Paddle's: ``weight`` is ``[out, in/groups, *k]`` for a convolution and
``[in, out/groups, *k]`` for a transposed one, ``bias`` is ``[out]``; the state_dict keys are
``weight`` and ``bias``, so Paddle checkpoints load unchanged.
"""

from __future__ import annotations

import math

from ..functional import common as _common
from ..functional import conv as F
from ..initializer import Normal
from .layers import Layer

__all__ = []

_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Layer):
    """Shared construction, checks and printing of the convolution layers."""

    _nd = 2
    _transposed = False
    _op = "Conv2D"

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, padding_mode="zeros", weight_attr=None, bias_attr=None,
                 data_format="NCHW", output_padding=0):
        super().__init__()
        nd, op = self._nd, self._op
        if not isinstance(in_channels, int) or in_channels <= 0:
            raise ValueError(f"{op}: in_channels must be a positive int, got {in_channels!r}")
        if not isinstance(out_channels, int) or out_channels <= 0:
            raise ValueError(f"{op}: out_channels must be a positive int, got {out_channels!r}")
        if not isinstance(groups, int) or groups <= 0:
            raise ValueError(f"{op}: groups must be a positive int, got {groups!r}")
        if in_channels % groups:
            raise ValueError(f"{op}: in_channels ({in_channels}) must be divisible by groups "
                             f"({groups})")
        if out_channels % groups:
            raise ValueError(f"{op}: out_channels ({out_channels}) must be divisible by groups "
                             f"({groups})")
        if padding_mode not in _MODES:
            raise ValueError(f"{op}: padding_mode must be one of {list(_MODES)}, got "
                             f"{padding_mode!r}")
        if padding_mode != "zeros" and (isinstance(padding, bool)
                                        or not isinstance(padding, int)):
            raise TypeError(f"{op}: when padding_mode is {padding_mode!r}, padding must be an "
                            f"int, got {padding!r}")
        if padding_mode != "zeros" and self._transposed:
            raise ValueError(f"{op}: only padding_mode 'zeros' is supported for transposed "
                             f"convolutions, got {padding_mode!r}")
        F.check_format(data_format, nd, op)
        self._in_channels = in_channels
        self._out_channels = out_channels
        self._kernel_size = list(F.ntuple(kernel_size, nd, op, "kernel_size"))
        self._stride = list(F.ntuple(stride, nd, op, "stride"))
        self._dilation = list(F.ntuple(dilation, nd, op, "dilation"))
        # validated now so that a bad padding fails at construction, as in Paddle
        F.parse_padding(padding, nd, data_format[-1] == "C", op)
        self._padding = padding
        self._padding_mode = padding_mode
        self._groups = groups
        self._data_format = data_format
        self.output_padding = output_padding
        self._set_paddle_private_attrs(padding, padding_mode, data_format)
        if self._transposed:
            shape = [in_channels, out_channels // groups] + self._kernel_size
            init = None  # Paddle's transposed convs use the layer default (Xavier-uniform)
        else:
            shape = [out_channels, in_channels // groups] + self._kernel_size
            fan_in = in_channels * math.prod(self._kernel_size)
            init = Normal(0.0, (2.0 / fan_in) ** 0.5)
        self.weight = self.create_parameter(shape, attr=weight_attr,
                                            default_initializer=init)
        self.bias = self.create_parameter([out_channels], attr=bias_attr, is_bias=True)

    def _set_paddle_private_attrs(self, padding, padding_mode, data_format):
        """The private attributes Paddle's conv layers carry, which model code that subclasses
        them reads (channel axis, op name, padding algorithm and resolved padding)."""
        nd = self._nd
        self._channel_dim = len(data_format) - 1 if data_format[-1] == "C" else 1
        self._op_type = f"conv{nd}d"
        if (nd == 2 and not self._transposed and self._groups == self._in_channels
                and self._groups > 1 and self._out_channels % self._in_channels == 0):
            self._op_type = "depthwise_conv2d"
        self._use_cudnn = False  # paddle_hl has no cuDNN path
        pads = F.parse_padding(padding, nd, data_format[-1] == "C", self._op)
        if isinstance(pads, str):
            self._padding_algorithm, self._updated_padding = pads.upper(), [0] * nd
        else:
            self._padding_algorithm = "EXPLICIT"
            if all(lo == hi for lo, hi in pads):
                self._updated_padding = [lo for lo, _ in pads]
            else:
                self._updated_padding = [e for pair in pads for e in pair]
        if padding_mode != "zeros":
            self._updated_padding = [0] * nd
            self._reversed_padding_repeated_twice = [padding] * (2 * nd)

    def _check_input(self, x):
        nd, op = self._nd, self._op
        if x.ndim != nd + 2:
            raise ValueError(f"{op}: expected a {nd + 2}-D input ({self._data_format}), got "
                             f"shape {x.shape}")
        c = x.shape[-1] if self._data_format[-1] == "C" else x.shape[1]
        if c != self._in_channels:
            raise ValueError(f"{op}: the input has {c} channels (shape {x.shape}, data_format "
                             f"{self._data_format}) but the layer was built with in_channels="
                             f"{self._in_channels}")

    def _mode_padded(self, x):
        """Pad x with padding_mode (reflect/replicate/circular) before a padding-0 conv."""
        widths = [self._padding] * (2 * self._nd)
        return _common.pad(x, widths, mode=self._padding_mode, data_format=self._data_format)

    def extra_repr(self):
        s = f"{self._in_channels}, {self._out_channels}, kernel_size={self._kernel_size}"
        if self._stride != [1] * self._nd:
            s += f", stride={self._stride}"
        if self._padding != 0:
            s += f", padding={self._padding}"
        if self._padding_mode != "zeros":
            s += f", padding_mode={self._padding_mode}"
        if self.output_padding != 0:
            s += f", output_padding={self.output_padding}"
        if self._dilation != [1] * self._nd:
            s += f", dilation={self._dilation}"
        if self._groups != 1:
            s += f", groups={self._groups}"
        s += f", data_format={self._data_format}"
        return s


class _Conv(_ConvNd):
    _fn = staticmethod(F.conv2d)

    def forward(self, x):
        self._check_input(x)
        return self._conv(x, self.weight, self.bias)

    def _conv(self, x, weight, bias):
        if self._padding_mode != "zeros":
            return self._fn(self._mode_padded(x), weight, bias, stride=self._stride,
                            padding=0, dilation=self._dilation, groups=self._groups,
                            data_format=self._data_format)
        return self._fn(x, weight, bias, stride=self._stride, padding=self._padding,
                        dilation=self._dilation, groups=self._groups,
                        data_format=self._data_format)


class _ConvTranspose(_ConvNd):
    _transposed = True
    _fn = staticmethod(F.conv2d_transpose)

    def forward(self, x, output_size=None):
        self._check_input(x)
        return self._fn(x, self.weight, self.bias, stride=self._stride, padding=self._padding,
                        output_padding=self.output_padding if output_size is None else 0,
                        dilation=self._dilation, groups=self._groups, output_size=output_size,
                        data_format=self._data_format)


class Conv1D(_Conv):
    """1-D convolution layer (see :func:`paddle_hl.nn.functional.conv1d`).

    Args:
        in_channels (int): channels of the input.
        out_channels (int): channels of the output.
        kernel_size (int|list): the kernel length.
        stride (int|list): the step of the window.
        padding (int|str|list): an int, 'same'/'valid', or a list (see conv1d).
        dilation (int|list): spacing of the kernel taps.
        groups (int): channel groups.
        padding_mode (str): 'zeros', 'reflect', 'replicate' or 'circular'.
        weight_attr (ParamAttr, optional): the weight's attribute (default init
            Normal(0, sqrt(2 / (in_channels * k)))).
        bias_attr (ParamAttr|bool, optional): the bias's attribute; False for no bias.
        data_format (str): 'NCL' or 'NLC'.

    Shape:
        x ``[N, C_in, L]`` -> ``[N, C_out, L_out]``; weight ``[C_out, C_in/groups, k]``.

    Example:
        >>> conv = paddle.nn.Conv1D(4, 8, 3, padding=1)
        >>> conv(paddle.ones([2, 4, 10])).shape
        [2, 8, 10]
    """

    _nd, _op = 1, "Conv1D"
    _fn = staticmethod(F.conv1d)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, padding_mode="zeros", weight_attr=None, bias_attr=None,
                 data_format="NCL"):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, padding_mode, weight_attr, bias_attr, data_format)


class Conv2D(_Conv):
    """2-D convolution layer (see :func:`paddle_hl.nn.functional.conv2d`).

    Args:
        in_channels (int): channels of the input.
        out_channels (int): channels of the output.
        kernel_size (int|list): ``k`` or ``[kh, kw]``.
        stride (int|list): the step of the window.
        padding (int|str|list): an int, 'same'/'valid', or a list (see conv2d).
        dilation (int|list): spacing of the kernel taps.
        groups (int): channel groups (``groups == in_channels`` is depthwise).
        padding_mode (str): 'zeros', 'reflect', 'replicate' or 'circular'.
        weight_attr (ParamAttr, optional): the weight's attribute (default init
            Normal(0, sqrt(2 / (in_channels * kh * kw)))).
        bias_attr (ParamAttr|bool, optional): the bias's attribute; False for no bias.
        data_format (str): 'NCHW' or 'NHWC'.

    Shape:
        x ``[N, C_in, H, W]`` -> ``[N, C_out, H_out, W_out]``; weight
        ``[C_out, C_in/groups, kh, kw]``.

    Example:
        >>> conv = paddle.nn.Conv2D(3, 16, 3, stride=2, padding=1)
        >>> conv(paddle.ones([1, 3, 32, 32])).shape
        [1, 16, 16, 16]
    """

    _nd, _op = 2, "Conv2D"
    _fn = staticmethod(F.conv2d)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, padding_mode="zeros", weight_attr=None, bias_attr=None,
                 data_format="NCHW"):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, padding_mode, weight_attr, bias_attr, data_format)


class Conv3D(_Conv):
    """3-D convolution layer (see :func:`paddle_hl.nn.functional.conv3d`).

    Args:
        in_channels (int): channels of the input.
        out_channels (int): channels of the output.
        kernel_size (int|list): ``k`` or ``[kd, kh, kw]``.
        stride (int|list): the step of the window.
        padding (int|str|list): an int, 'same'/'valid', or a list (see conv3d).
        dilation (int|list): spacing of the kernel taps.
        groups (int): channel groups.
        padding_mode (str): 'zeros', 'reflect', 'replicate' or 'circular'.
        weight_attr (ParamAttr, optional): the weight's attribute.
        bias_attr (ParamAttr|bool, optional): the bias's attribute; False for no bias.
        data_format (str): 'NCDHW' or 'NDHWC'.

    Shape:
        x ``[N, C_in, D, H, W]`` -> ``[N, C_out, D_out, H_out, W_out]``.
    """

    _nd, _op = 3, "Conv3D"
    _fn = staticmethod(F.conv3d)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, padding_mode="zeros", weight_attr=None, bias_attr=None,
                 data_format="NCDHW"):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, padding_mode, weight_attr, bias_attr, data_format)


class Conv1DTranspose(_ConvTranspose):
    """1-D transposed convolution layer (see :func:`paddle_hl.nn.functional.conv1d_transpose`).

    Args:
        in_channels (int): channels of the input.
        out_channels (int): channels of the output.
        kernel_size (int|list): the kernel length.
        stride (int|list): the step of the window.
        padding (int|str|list): the padding removed from the output.
        output_padding (int|list): extra size added at the end of the output.
        groups (int): channel groups.
        dilation (int|list): spacing of the kernel taps.
        weight_attr (ParamAttr, optional): the weight's attribute (Xavier-uniform by default).
        bias_attr (ParamAttr|bool, optional): the bias's attribute; False for no bias.
        data_format (str): 'NCL' or 'NLC'.

    Shape:
        x ``[N, C_in, L]`` -> ``[N, C_out, L_out]``; weight ``[C_in, C_out/groups, k]``.
        ``forward(x, output_size=None)`` may ask for an exact output length.
    """

    _nd, _op = 1, "Conv1DTranspose"
    _fn = staticmethod(F.conv1d_transpose)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, dilation=1, weight_attr=None, bias_attr=None,
                 data_format="NCL"):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, "zeros", weight_attr, bias_attr, data_format, output_padding)


class Conv2DTranspose(_ConvTranspose):
    """2-D transposed convolution layer (see :func:`paddle_hl.nn.functional.conv2d_transpose`).

    Args:
        in_channels (int): channels of the input.
        out_channels (int): channels of the output.
        kernel_size (int|list): ``k`` or ``[kh, kw]``.
        stride (int|list): the step of the window.
        padding (int|str|list): the padding removed from the output.
        output_padding (int|list): extra size added at the end of each output dim.
        dilation (int|list): spacing of the kernel taps.
        groups (int): channel groups.
        weight_attr (ParamAttr, optional): the weight's attribute (Xavier-uniform by default).
        bias_attr (ParamAttr|bool, optional): the bias's attribute; False for no bias.
        data_format (str): 'NCHW' or 'NHWC'.

    Shape:
        x ``[N, C_in, H, W]`` -> ``[N, C_out, H_out, W_out]``; weight
        ``[C_in, C_out/groups, kh, kw]``.

    Example:
        >>> up = paddle.nn.Conv2DTranspose(8, 4, 2, stride=2)
        >>> up(paddle.ones([1, 8, 5, 5])).shape
        [1, 4, 10, 10]
    """

    _nd, _op = 2, "Conv2DTranspose"
    _fn = staticmethod(F.conv2d_transpose)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, dilation=1, groups=1, weight_attr=None, bias_attr=None,
                 data_format="NCHW"):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, "zeros", weight_attr, bias_attr, data_format, output_padding)


class Conv3DTranspose(_ConvTranspose):
    """3-D transposed convolution layer (see :func:`paddle_hl.nn.functional.conv3d_transpose`).

    Args:
        in_channels (int): channels of the input.
        out_channels (int): channels of the output.
        kernel_size (int|list): ``k`` or ``[kd, kh, kw]``.
        stride (int|list): the step of the window.
        padding (int|str|list): the padding removed from the output.
        output_padding (int|list): extra size added at the end of each output dim.
        dilation (int|list): spacing of the kernel taps.
        groups (int): channel groups.
        weight_attr (ParamAttr, optional): the weight's attribute.
        bias_attr (ParamAttr|bool, optional): the bias's attribute; False for no bias.
        data_format (str): 'NCDHW' or 'NDHWC'.

    Shape:
        x ``[N, C_in, D, H, W]`` -> ``[N, C_out, D_out, H_out, W_out]``.
    """

    _nd, _op = 3, "Conv3DTranspose"
    _fn = staticmethod(F.conv3d_transpose)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, dilation=1, groups=1, weight_attr=None, bias_attr=None,
                 data_format="NCDHW"):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, "zeros", weight_attr, bias_attr, data_format, output_padding)


class Unfold(Layer):
    """Extract sliding blocks (see :func:`paddle_hl.nn.functional.unfold`).

    Args:
        kernel_sizes (int|list): ``[kh, kw]``.
        dilations (int|list): ``[dh, dw]``.
        paddings (int|list): an int, ``[ph, pw]`` or ``[top, left, bottom, right]``.
        strides (int|list): ``[sh, sw]``.
        name (str, optional): unused.

    Shape:
        ``[N, C, H, W]`` -> ``[N, C*kh*kw, L]``.
    """

    def __init__(self, kernel_sizes, dilations=1, paddings=0, strides=1, name=None):
        super().__init__()
        self.kernel_sizes = kernel_sizes
        self.dilations = dilations
        self.paddings = paddings
        self.strides = strides
        self.name = name

    def forward(self, input):
        return F.unfold(input, self.kernel_sizes, self.strides, self.paddings, self.dilations)

    def extra_repr(self):
        name_str = f", name={self.name}" if self.name else ""
        return (f"kernel_size={self.kernel_sizes}, dilation={self.dilations}, "
                f"padding={self.paddings}, stride={self.strides}{name_str}")


class Fold(Layer):
    """Combine sliding blocks into an image (see :func:`paddle_hl.nn.functional.fold`).

    Args:
        output_sizes (int|list): ``[H, W]`` of the result.
        kernel_sizes (int|list): ``[kh, kw]``.
        dilations (int|list): ``[dh, dw]``.
        paddings (int|list): an int, ``[ph, pw]`` or ``[top, left, bottom, right]``.
        strides (int|list): ``[sh, sw]``.
        name (str, optional): unused.

    Shape:
        ``[N, C*kh*kw, L]`` -> ``[N, C, H, W]``.
    """

    def __init__(self, output_sizes, kernel_sizes, dilations=1, paddings=0, strides=1,
                 name=None):
        super().__init__()
        self.output_sizes = output_sizes
        self.kernel_sizes = kernel_sizes
        self.dilations = dilations
        self.paddings = paddings
        self.strides = strides
        self.name = name

    def forward(self, input):
        return F.fold(input, self.output_sizes, self.kernel_sizes, self.strides, self.paddings,
                      self.dilations)

    def extra_repr(self):
        name_str = f", name={self.name}" if self.name else ""
        return (f"kernel_size={self.kernel_sizes}, dilation={self.dilations}, "
                f"padding={self.paddings}, stride={self.strides}{name_str}")
