"""AlexNet (the one-GPU variant Paddle publishes weights for)."""

from __future__ import annotations

import math

import paddle_hl as paddle
import paddle_hl.nn.functional as F
from paddle_hl import nn

from ._registry import register_model
from ._utils import _uniform_attr, build_model

__all__ = []

model_urls = {
    "alexnet": (
        "https://paddle-imagenet-models-name.bj.bcebos.com/dygraph/AlexNet_pretrained.pdparams",
        "7f0f9f737132e02732d75a1459d98a43"),
}


def _conv(cin, cout, k, stride, padding):
    """Conv2D with weight and bias drawn from U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    stdv = 1.0 / math.sqrt(cin * k * k)
    return nn.Conv2D(cin, cout, k, stride=stride, padding=padding,
                     weight_attr=_uniform_attr(stdv), bias_attr=_uniform_attr(stdv))


def _linear(fin, fout, stdv):
    return nn.Linear(fin, fout, weight_attr=_uniform_attr(stdv), bias_attr=_uniform_attr(stdv))


class ConvPoolLayer(nn.Layer):
    """Conv2D -> optional ReLU -> 3x3/2 max pool (parameters under ``_conv``)."""

    def __init__(self, input_channels, output_channels, filter_size, stride, padding,
                 act=None):
        super().__init__()
        self.relu = nn.ReLU() if act == "relu" else None
        self._conv = _conv(input_channels, output_channels, filter_size, stride, padding)
        self._pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=0)

    def forward(self, inputs):
        x = self._conv(inputs)
        if self.relu is not None:
            x = self.relu(x)
        return self._pool(x)


class AlexNet(nn.Layer):
    """AlexNet model from `"ImageNet Classification with Deep Convolutional Neural Networks"
    <https://proceedings.neurips.cc/paper/2012/file/c399862d3b9d6b76c8436e924a68c45b-Paper.pdf>`_.

    Args:
        num_classes (int, optional): size of the last fc layer; when <= 0 the classifier is
            left out and the ``[N, 256, 6, 6]`` features are returned. Default: 1000.

    Returns:
        nn.Layer: the network; ``forward`` maps ``[N, 3, 224, 224]`` to ``[N, num_classes]``.

    Examples:
        >>> import paddle_hl as paddle
        >>> from paddle_hl.vision.models import AlexNet
        >>> AlexNet(num_classes=10)(paddle.rand([1, 3, 224, 224])).shape
        [1, 10]
    """

    def __init__(self, num_classes: int = 1000):
        super().__init__()
        self.num_classes = num_classes
        self._conv1 = ConvPoolLayer(3, 64, 11, 4, 2, act="relu")
        self._conv2 = ConvPoolLayer(64, 192, 5, 1, 2, act="relu")
        self._conv3 = _conv(192, 384, 3, 1, 1)
        self._conv4 = _conv(384, 256, 3, 1, 1)
        self._conv5 = ConvPoolLayer(256, 256, 3, 1, 1, act="relu")
        if num_classes > 0:
            stdv = 1.0 / math.sqrt(256 * 6 * 6)
            # downscale_in_infer: eval multiplies by (1 - p), as the published weights expect.
            self._drop1 = nn.Dropout(p=0.5, mode="downscale_in_infer")
            self._fc6 = _linear(256 * 6 * 6, 4096, stdv)
            self._drop2 = nn.Dropout(p=0.5, mode="downscale_in_infer")
            self._fc7 = _linear(4096, 4096, stdv)
            self._fc8 = _linear(4096, num_classes, stdv)

    def forward(self, inputs):
        x = self._conv2(self._conv1(inputs))
        x = F.relu(self._conv3(x))
        x = F.relu(self._conv4(x))
        x = self._conv5(x)
        if self.num_classes > 0:
            x = self._drop1(paddle.flatten(x, start_axis=1, stop_axis=-1))
            x = self._drop2(F.relu(self._fc6(x)))
            x = self._fc8(F.relu(self._fc7(x)))
        return x


def _alexnet(arch, pretrained, **kwargs):
    return build_model(AlexNet, arch, pretrained, model_urls, **kwargs)


@register_model
def alexnet(pretrained: bool = False, **kwargs) -> AlexNet:
    """AlexNet; ``pretrained=True`` loads Paddle's ImageNet weights.

    Args:
        pretrained (bool, optional): load the published ImageNet weights. Default: False.
        **kwargs: passed to :class:`AlexNet` (``num_classes``).

    Returns:
        AlexNet: the model.

    Examples:
        >>> from paddle_hl.vision.models import alexnet
        >>> model = alexnet()
    """
    return _alexnet("alexnet", pretrained, **kwargs)
