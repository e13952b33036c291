"""MobileNetV2: inverted residuals with linear bottlenecks."""

from __future__ import annotations

import paddle_hl as paddle
from paddle_hl import nn

from ._registry import register_model
from ._utils import ConvNormActivation, _make_divisible, build_model

__all__ = []

model_urls = {
    "mobilenetv2_1.0": ("https://paddle-hapi.bj.bcebos.com/models/mobilenet_v2_x1.0.pdparams",
                        "0340af0a901346c8d46f4529882fb63d"),
}

# (expand ratio t, output channels c, repeats n, first stride s), as in the paper's table 2.
_SETTING = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
            (6, 160, 3, 2), (6, 320, 1, 1))


class InvertedResidual(nn.Layer):
    """1x1 expand (ReLU6) -> 3x3 depthwise (ReLU6) -> 1x1 linear projection, plus the input
    when shapes allow. Parameters live under ``conv`` (an nn.Sequential)."""

    def __init__(self, inp, oup, stride, expand_ratio, norm_layer=None):
        super().__init__()
        if stride not in (1, 2):
            raise ValueError(f"InvertedResidual: stride must be 1 or 2, got {stride}")
        norm_layer = norm_layer or nn.BatchNorm2D
        self.stride = stride
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(ConvNormActivation(inp, hidden_dim, kernel_size=1,
                                             norm_layer=norm_layer, activation_layer=nn.ReLU6))
        layers += [
            ConvNormActivation(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim,
                               norm_layer=norm_layer, activation_layer=nn.ReLU6),
            nn.Conv2D(hidden_dim, oup, 1, 1, 0, bias_attr=False),
            norm_layer(oup),
        ]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        if self.use_res_connect:
            return x + self.conv(x)
        return self.conv(x)


class MobileNetV2(nn.Layer):
    """MobileNetV2 model from `"MobileNetV2: Inverted Residuals and Linear Bottlenecks"
    <https://arxiv.org/abs/1801.04381>`_.

    Args:
        scale (float, optional): channel multiplier. Default: 1.0.
        num_classes (int, optional): size of the last fc layer; when <= 0 there is none.
            Default: 1000.
        with_pool (bool, optional): global-average-pool before the fc layer. Default: True.

    Returns:
        nn.Layer: the network.

    Examples:
        >>> import paddle_hl as paddle
        >>> from paddle_hl.vision.models import MobileNetV2
        >>> MobileNetV2()(paddle.rand([1, 3, 64, 64])).shape
        [1, 1000]
    """

    def __init__(self, scale: float = 1.0, num_classes: int = 1000, with_pool: bool = True):
        super().__init__()
        self.num_classes = num_classes
        self.with_pool = with_pool
        round_nearest = 8
        norm_layer = nn.BatchNorm2D
        input_channel = _make_divisible(32 * scale, round_nearest)
        self.last_channel = _make_divisible(1280 * max(1.0, scale), round_nearest)
        features = [ConvNormActivation(3, input_channel, stride=2, norm_layer=norm_layer,
                                       activation_layer=nn.ReLU6)]
        for t, c, n, s in _SETTING:
            output_channel = _make_divisible(c * scale, round_nearest)
            for i in range(n):
                features.append(InvertedResidual(input_channel, output_channel,
                                                 s if i == 0 else 1, expand_ratio=t,
                                                 norm_layer=norm_layer))
                input_channel = output_channel
        features.append(ConvNormActivation(input_channel, self.last_channel, kernel_size=1,
                                           norm_layer=norm_layer, activation_layer=nn.ReLU6))
        self.features = nn.Sequential(*features)
        if with_pool:
            self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.classifier = nn.Sequential(nn.Dropout(0.2),
                                            nn.Linear(self.last_channel, num_classes))

    def forward(self, x):
        x = self.features(x)
        if self.with_pool:
            x = self.pool2d_avg(x)
        if self.num_classes > 0:
            x = self.classifier(paddle.flatten(x, 1))
        return x


def _mobilenet(arch, pretrained=False, **kwargs):
    return build_model(MobileNetV2, arch, pretrained, model_urls, **kwargs)


@register_model
def mobilenet_v2(pretrained: bool = False, scale: float = 1.0, **kwargs) -> MobileNetV2:
    """MobileNetV2 with channel multiplier ``scale``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights (published for
            scale=1.0). Default: False.
        scale (float, optional): channel multiplier. Default: 1.0.
        **kwargs: passed to :class:`MobileNetV2` (``num_classes``, ``with_pool``).

    Returns:
        MobileNetV2: the model.

    Examples:
        >>> from paddle_hl.vision.models import mobilenet_v2
        >>> model = mobilenet_v2(scale=0.5)
    """
    return _mobilenet(f"mobilenetv2_{scale}", pretrained, scale=scale, **kwargs)
