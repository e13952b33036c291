"""MobileNetV1: depthwise-separable convolutions."""

from __future__ import annotations

import paddle_hl as paddle
from paddle_hl import nn

from ._registry import register_model
from ._utils import ConvNormActivation, build_model

__all__ = []

model_urls = {
    "mobilenetv1_1.0": ("https://paddle-hapi.bj.bcebos.com/models/mobilenetv1_1.0.pdparams",
                        "3033ab1975b1670bef51545feb65fc45"),
}

# (sublayer name, input channels, depthwise width, pointwise width, stride), before scaling.
_BLOCKS = (
    ("conv2_1", 32, 32, 64, 1), ("conv2_2", 64, 64, 128, 2),
    ("conv3_1", 128, 128, 128, 1), ("conv3_2", 128, 128, 256, 2),
    ("conv4_1", 256, 256, 256, 1), ("conv4_2", 256, 256, 512, 2),
    *((f"conv5_{i}", 512, 512, 512, 1) for i in range(1, 6)),
    ("conv5_6", 512, 512, 1024, 2), ("conv6", 1024, 1024, 1024, 1),
)


class DepthwiseSeparable(nn.Layer):
    """3x3 depthwise conv-BN-ReLU followed by a 1x1 pointwise conv-BN-ReLU."""

    def __init__(self, in_channels, out_channels1, out_channels2, num_groups, stride, scale):
        super().__init__()
        self._depthwise_conv = ConvNormActivation(
            in_channels, int(out_channels1 * scale), kernel_size=3, stride=stride, padding=1,
            groups=int(num_groups * scale))
        self._pointwise_conv = ConvNormActivation(
            int(out_channels1 * scale), int(out_channels2 * scale), kernel_size=1, stride=1,
            padding=0)

    def forward(self, x):
        return self._pointwise_conv(self._depthwise_conv(x))


class MobileNetV1(nn.Layer):
    """MobileNetV1 model from `"MobileNets: Efficient Convolutional Neural Networks for Mobile
    Vision Applications" <https://arxiv.org/abs/1704.04861>`_.

    Args:
        scale (float, optional): channel multiplier. Default: 1.0.
        num_classes (int, optional): size of the last fc layer; when <= 0 there is none.
            Default: 1000.
        with_pool (bool, optional): global-average-pool before the fc layer. Default: True.

    Returns:
        nn.Layer: the network.

    Examples:
        >>> import paddle_hl as paddle
        >>> from paddle_hl.vision.models import MobileNetV1
        >>> MobileNetV1(scale=0.5)(paddle.rand([1, 3, 64, 64])).shape
        [1, 1000]
    """

    def __init__(self, scale: float = 1.0, num_classes: int = 1000, with_pool: bool = True):
        super().__init__()
        self.scale = scale
        self.num_classes = num_classes
        self.with_pool = with_pool
        self.conv1 = ConvNormActivation(3, int(32 * scale), kernel_size=3, stride=2, padding=1)
        # Blocks are registered under Paddle's names (conv2_1 ... conv6) and run in this order.
        self.dwsl = [
            self.add_sublayer(name, DepthwiseSeparable(int(cin * scale), c1, c2, c1, stride,
                                                       scale))
            for name, cin, c1, c2, stride in _BLOCKS]
        if with_pool:
            self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.fc = nn.Linear(int(1024 * scale), num_classes)

    def forward(self, x):
        x = self.conv1(x)
        for block in self.dwsl:
            x = block(x)
        if self.with_pool:
            x = self.pool2d_avg(x)
        if self.num_classes > 0:
            x = self.fc(paddle.flatten(x, 1))
        return x


def _mobilenet(arch, pretrained=False, **kwargs):
    return build_model(MobileNetV1, arch, pretrained, model_urls, **kwargs)


@register_model
def mobilenet_v1(pretrained: bool = False, scale: float = 1.0, **kwargs) -> MobileNetV1:
    """MobileNetV1 with channel multiplier ``scale``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights (published for
            scale=1.0). Default: False.
        scale (float, optional): channel multiplier. Default: 1.0.
        **kwargs: passed to :class:`MobileNetV1` (``num_classes``, ``with_pool``).

    Returns:
        MobileNetV1: the model.

    Examples:
        >>> from paddle_hl.vision.models import mobilenet_v1
        >>> model = mobilenet_v1(scale=0.5)
    """
    return _mobilenet(f"mobilenetv1_{scale}", pretrained, scale=scale, **kwargs)
