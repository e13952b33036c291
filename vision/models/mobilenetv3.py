"""MobileNetV3 Small and Large."""

from __future__ import annotations

from functools import partial

import paddle_hl as paddle
from paddle_hl import nn

from ._registry import register_model
from ._utils import ConvNormActivation, _make_divisible, build_model

__all__ = []

model_urls = {
    "mobilenet_v3_small_x1.0": (
        "https://paddle-hapi.bj.bcebos.com/models/mobilenet_v3_small_x1.0.pdparams",
        "34fe0e7c1f8b00b2b056ad6788d0590c"),
    "mobilenet_v3_large_x1.0": (
        "https://paddle-hapi.bj.bcebos.com/models/mobilenet_v3_large_x1.0.pdparams",
        "118db5792b4e183b925d8e8e334db3df"),
}

# Per block: (in, kernel, expanded, out, squeeze-excite, activation, stride), before scaling.
_SMALL = (
    (16, 3, 16, 16, True, "relu", 2), (16, 3, 72, 24, False, "relu", 2),
    (24, 3, 88, 24, False, "relu", 1), (24, 5, 96, 40, True, "hardswish", 2),
    (40, 5, 240, 40, True, "hardswish", 1), (40, 5, 240, 40, True, "hardswish", 1),
    (40, 5, 120, 48, True, "hardswish", 1), (48, 5, 144, 48, True, "hardswish", 1),
    (48, 5, 288, 96, True, "hardswish", 2), (96, 5, 576, 96, True, "hardswish", 1),
    (96, 5, 576, 96, True, "hardswish", 1),
)
_LARGE = (
    (16, 3, 16, 16, False, "relu", 1), (16, 3, 64, 24, False, "relu", 2),
    (24, 3, 72, 24, False, "relu", 1), (24, 5, 72, 40, True, "relu", 2),
    (40, 5, 120, 40, True, "relu", 1), (40, 5, 120, 40, True, "relu", 1),
    (40, 3, 240, 80, False, "hardswish", 2), (80, 3, 200, 80, False, "hardswish", 1),
    (80, 3, 184, 80, False, "hardswish", 1), (80, 3, 184, 80, False, "hardswish", 1),
    (80, 3, 480, 112, True, "hardswish", 1), (112, 3, 672, 112, True, "hardswish", 1),
    (112, 5, 672, 160, True, "hardswish", 2), (160, 5, 960, 160, True, "hardswish", 1),
    (160, 5, 960, 160, True, "hardswish", 1),
)


def _activation(name):
    table = {"relu": nn.ReLU, "hardswish": nn.Hardswish, None: None}
    if name not in table:
        raise ValueError(f"MobileNetV3: activation must be 'relu', 'hardswish' or None, "
                         f"got {name!r}")
    return table[name]


class InvertedResidualConfig:
    """Channel widths (rounded to multiples of 8 after scaling), kernel, SE flag, activation
    class and stride of one MobileNetV3 block."""

    def __init__(self, in_channels, kernel, expanded_channels, out_channels, use_se,
                 activation, stride, scale=1.0):
        self.in_channels = self.adjust_channels(in_channels, scale=scale)
        self.kernel = kernel
        self.expanded_channels = self.adjust_channels(expanded_channels, scale=scale)
        self.out_channels = self.adjust_channels(out_channels, scale=scale)
        self.use_se = use_se
        self.activation_layer = _activation(activation)
        self.stride = stride

    @staticmethod
    def adjust_channels(channels, scale=1.0):
        return _make_divisible(channels * scale, 8)


class SqueezeExcitation(nn.Layer):
    """Squeeze-and-excitation: global pool -> 1x1 conv -> act -> 1x1 conv -> gate, times input.

    Args:
        input_channels (int): channels of the input and of the gate.
        squeeze_channels (int): bottleneck width.
        activation (callable, optional): builds the inner activation. Default: nn.ReLU.
        scale_activation (callable, optional): builds the gate. Default: nn.Sigmoid.
    """

    def __init__(self, input_channels, squeeze_channels, activation=None,
                 scale_activation=None):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2D(1)
        self.fc1 = nn.Conv2D(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2D(squeeze_channels, input_channels, 1)
        self.activation = (activation or nn.ReLU)()
        self.scale_activation = (scale_activation or nn.Sigmoid)()

    def _scale(self, x):
        s = self.activation(self.fc1(self.avgpool(x)))
        return self.scale_activation(self.fc2(s))

    def forward(self, input):  # noqa: A002  (Paddle's argument name)
        return self._scale(input) * input


class InvertedResidual(nn.Layer):
    """Optional 1x1 expand -> kxk depthwise -> optional SE -> 1x1 linear, plus a shortcut."""

    def __init__(self, in_channels, expanded_channels, out_channels, filter_size, stride,
                 use_se, activation_layer, norm_layer):
        super().__init__()
        self.use_res_connect = stride == 1 and in_channels == out_channels
        self.use_se = use_se
        self.expand = in_channels != expanded_channels
        if self.expand:
            self.expand_conv = ConvNormActivation(
                in_channels, expanded_channels, kernel_size=1, stride=1, padding=0,
                norm_layer=norm_layer, activation_layer=activation_layer)
        self.bottleneck_conv = ConvNormActivation(
            expanded_channels, expanded_channels, kernel_size=filter_size, stride=stride,
            padding=(filter_size - 1) // 2, groups=expanded_channels, norm_layer=norm_layer,
            activation_layer=activation_layer)
        if use_se:
            self.mid_se = SqueezeExcitation(expanded_channels,
                                            _make_divisible(expanded_channels // 4),
                                            scale_activation=nn.Hardsigmoid)
        self.linear_conv = ConvNormActivation(
            expanded_channels, out_channels, kernel_size=1, stride=1, padding=0,
            norm_layer=norm_layer, activation_layer=None)

    def forward(self, x):
        identity = x
        if self.expand:
            x = self.expand_conv(x)
        x = self.bottleneck_conv(x)
        if self.use_se:
            x = self.mid_se(x)
        x = self.linear_conv(x)
        if self.use_res_connect:
            x = x + identity
        return x


class MobileNetV3(nn.Layer):
    """MobileNetV3 trunk and head built from a list of :class:`InvertedResidualConfig`.

    Args:
        config (list[InvertedResidualConfig]): the blocks.
        last_channel (int): width of the hidden fc layer.
        scale (float, optional): channel multiplier (already applied in ``config``).
        num_classes (int, optional): size of the last fc layer; when <= 0 the classifier is
            left out. Default: 1000.
        with_pool (bool, optional): global-average-pool before the classifier. Default: True.
    """

    def __init__(self, config, last_channel, scale=1.0, num_classes=1000, with_pool=True):
        super().__init__()
        self.config = config
        self.scale = scale
        self.last_channel = last_channel
        self.num_classes = num_classes
        self.with_pool = with_pool
        self.firstconv_in_channels = config[0].in_channels
        self.lastconv_in_channels = config[-1].in_channels
        self.lastconv_out_channels = self.lastconv_in_channels * 6
        # The published weights were trained with these batch-norm settings.
        norm_layer = partial(nn.BatchNorm2D, epsilon=0.001, momentum=0.99)
        self.conv = ConvNormActivation(3, self.firstconv_in_channels, kernel_size=3, stride=2,
                                       padding=1, groups=1, activation_layer=nn.Hardswish,
                                       norm_layer=norm_layer)
        self.blocks = nn.Sequential(*[
            InvertedResidual(c.in_channels, c.expanded_channels, c.out_channels, c.kernel,
                             c.stride, c.use_se, c.activation_layer, norm_layer)
            for c in config])
        self.lastconv = ConvNormActivation(
            self.lastconv_in_channels, self.lastconv_out_channels, kernel_size=1, stride=1,
            padding=0, groups=1, norm_layer=norm_layer, activation_layer=nn.Hardswish)
        if with_pool:
            self.avgpool = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.classifier = nn.Sequential(
                nn.Linear(self.lastconv_out_channels, last_channel), nn.Hardswish(),
                nn.Dropout(p=0.2), nn.Linear(last_channel, num_classes))

    def forward(self, x):
        x = self.lastconv(self.blocks(self.conv(x)))
        if self.with_pool:
            x = self.avgpool(x)
        if self.num_classes > 0:
            x = self.classifier(paddle.flatten(x, 1))
        return x


class _PresetMobileNetV3(MobileNetV3):
    """A MobileNetV3 whose block table (``_TABLE``) and hidden fc width (``_LAST``, before
    scaling) are fixed by the subclass."""

    _TABLE: tuple = ()
    _LAST = 0

    def __init__(self, scale: float = 1.0, num_classes: int = 1000, with_pool: bool = True):
        config = [InvertedResidualConfig(*row, scale=scale) for row in self._TABLE]
        super().__init__(config, last_channel=_make_divisible(self._LAST * scale, 8),
                         scale=scale, num_classes=num_classes, with_pool=with_pool)


class MobileNetV3Small(_PresetMobileNetV3):
    """MobileNetV3-Small from `"Searching for MobileNetV3" <https://arxiv.org/abs/1905.02244>`_.

    Args:
        scale (float, optional): channel multiplier. Default: 1.0.
        num_classes (int, optional): size of the last fc layer; when <= 0 the classifier is
            left out. Default: 1000.
        with_pool (bool, optional): global-average-pool before the classifier. Default: True.

    Returns:
        nn.Layer: the network.

    Examples:
        >>> import paddle_hl as paddle
        >>> from paddle_hl.vision.models import MobileNetV3Small
        >>> MobileNetV3Small(scale=1.0)(paddle.rand([1, 3, 64, 64])).shape
        [1, 1000]
    """

    _TABLE, _LAST = _SMALL, 1024


class MobileNetV3Large(_PresetMobileNetV3):
    """MobileNetV3-Large from `"Searching for MobileNetV3" <https://arxiv.org/abs/1905.02244>`_.

    Args:
        scale (float, optional): channel multiplier. Default: 1.0.
        num_classes (int, optional): size of the last fc layer; when <= 0 the classifier is
            left out. Default: 1000.
        with_pool (bool, optional): global-average-pool before the classifier. Default: True.

    Returns:
        nn.Layer: the network.

    Examples:
        >>> import paddle_hl as paddle
        >>> from paddle_hl.vision.models import MobileNetV3Large
        >>> MobileNetV3Large()(paddle.rand([1, 3, 64, 64])).shape
        [1, 1000]
    """

    _TABLE, _LAST = _LARGE, 1280


def _mobilenet_v3(arch, pretrained=False, scale=1.0, **kwargs):
    cls = MobileNetV3Large if arch == "mobilenet_v3_large" else MobileNetV3Small
    return build_model(cls, f"{arch}_x{scale}", pretrained, model_urls, scale=scale,
                       **kwargs)


@register_model
def mobilenet_v3_small(pretrained: bool = False, scale: float = 1.0,
                       **kwargs) -> MobileNetV3Small:
    """MobileNetV3-Small with channel multiplier ``scale``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights (published for
            scale=1.0). Default: False.
        scale (float, optional): channel multiplier. Default: 1.0.
        **kwargs: passed to :class:`MobileNetV3Small` (``num_classes``, ``with_pool``).

    Returns:
        MobileNetV3Small: the model.

    Examples:
        >>> from paddle_hl.vision.models import mobilenet_v3_small
        >>> model = mobilenet_v3_small()
    """
    return _mobilenet_v3("mobilenet_v3_small", pretrained, scale, **kwargs)


@register_model
def mobilenet_v3_large(pretrained: bool = False, scale: float = 1.0,
                       **kwargs) -> MobileNetV3Large:
    """MobileNetV3-Large with channel multiplier ``scale``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights (published for
            scale=1.0). Default: False.
        scale (float, optional): channel multiplier. Default: 1.0.
        **kwargs: passed to :class:`MobileNetV3Large` (``num_classes``, ``with_pool``).

    Returns:
        MobileNetV3Large: the model.

    Examples:
        >>> from paddle_hl.vision.models import mobilenet_v3_large
        >>> model = mobilenet_v3_large()
    """
    return _mobilenet_v3("mobilenet_v3_large", pretrained, scale, **kwargs)
