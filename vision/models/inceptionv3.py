"""Inception v3."""

from __future__ import annotations

import math

import paddle_hl as paddle
from paddle_hl import nn

from ._registry import register_model
from ._utils import ConvNormActivation, _uniform_attr, build_model

__all__ = []

model_urls = {
    "inception_v3": ("https://paddle-hapi.bj.bcebos.com/models/inception_v3.pdparams",
                     "649a4547c3243e8b59c656f41fe330b8"),
}


def _cbr(cin, cout, kernel_size, stride=1, padding=0):
    """Conv (no bias) -> BatchNorm -> ReLU, with explicit padding."""
    return ConvNormActivation(cin, cout, kernel_size=kernel_size, stride=stride,
                              padding=padding, activation_layer=nn.ReLU)


def _avg_pool_3x3():
    # exclusive=False: padded zeros count in the average, as the published weights expect.
    return nn.AvgPool2D(kernel_size=3, stride=1, padding=1, exclusive=False)


def _cat(tensors):
    return paddle.concat(tensors, axis=1)


class InceptionStem(nn.Layer):
    """Five conv-BN-ReLU layers and two 3x3/2 max pools: 3x299x299 -> 192x35x35."""

    def __init__(self):
        super().__init__()
        self.conv_1a_3x3 = _cbr(3, 32, 3, stride=2)
        self.conv_2a_3x3 = _cbr(32, 32, 3)
        self.conv_2b_3x3 = _cbr(32, 64, 3, padding=1)
        self.max_pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=0)
        self.conv_3b_1x1 = _cbr(64, 80, 1)
        self.conv_4a_3x3 = _cbr(80, 192, 3)

    def forward(self, x):
        x = self.max_pool(self.conv_2b_3x3(self.conv_2a_3x3(self.conv_1a_3x3(x))))
        return self.max_pool(self.conv_4a_3x3(self.conv_3b_1x1(x)))


class InceptionA(nn.Layer):
    """35x35 module: 1x1 | 1x1->5x5 | 1x1->3x3->3x3 | avg pool->1x1."""

    def __init__(self, num_channels, pool_features):
        super().__init__()
        self.branch1x1 = _cbr(num_channels, 64, 1)
        self.branch5x5_1 = _cbr(num_channels, 48, 1)
        self.branch5x5_2 = _cbr(48, 64, 5, padding=2)
        self.branch3x3dbl_1 = _cbr(num_channels, 64, 1)
        self.branch3x3dbl_2 = _cbr(64, 96, 3, padding=1)
        self.branch3x3dbl_3 = _cbr(96, 96, 3, padding=1)
        self.branch_pool = _avg_pool_3x3()
        self.branch_pool_conv = _cbr(num_channels, pool_features, 1)

    def forward(self, x):
        b5 = self.branch5x5_2(self.branch5x5_1(x))
        b3 = self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x)))
        bp = self.branch_pool_conv(self.branch_pool(x))
        return _cat([self.branch1x1(x), b5, b3, bp])


class InceptionB(nn.Layer):
    """35x35 -> 17x17 reduction: 3x3/2 | 1x1->3x3->3x3/2 | 3x3/2 max pool."""

    def __init__(self, num_channels):
        super().__init__()
        self.branch3x3 = _cbr(num_channels, 384, 3, stride=2)
        self.branch3x3dbl_1 = _cbr(num_channels, 64, 1)
        self.branch3x3dbl_2 = _cbr(64, 96, 3, padding=1)
        self.branch3x3dbl_3 = _cbr(96, 96, 3, stride=2)
        self.branch_pool = nn.MaxPool2D(kernel_size=3, stride=2)

    def forward(self, x):
        b3 = self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x)))
        return _cat([self.branch3x3(x), b3, self.branch_pool(x)])


class InceptionC(nn.Layer):
    """17x17 module with factorized 7x7 convolutions (1x7 and 7x1)."""

    def __init__(self, num_channels, channels_7x7):
        super().__init__()
        c7 = channels_7x7
        self.branch1x1 = _cbr(num_channels, 192, 1)
        self.branch7x7_1 = _cbr(num_channels, c7, 1)
        self.branch7x7_2 = _cbr(c7, c7, (1, 7), padding=(0, 3))
        self.branch7x7_3 = _cbr(c7, 192, (7, 1), padding=(3, 0))
        self.branch7x7dbl_1 = _cbr(num_channels, c7, 1)
        self.branch7x7dbl_2 = _cbr(c7, c7, (7, 1), padding=(3, 0))
        self.branch7x7dbl_3 = _cbr(c7, c7, (1, 7), padding=(0, 3))
        self.branch7x7dbl_4 = _cbr(c7, c7, (7, 1), padding=(3, 0))
        self.branch7x7dbl_5 = _cbr(c7, 192, (1, 7), padding=(0, 3))
        self.branch_pool = _avg_pool_3x3()
        self.branch_pool_conv = _cbr(num_channels, 192, 1)

    def forward(self, x):
        b7 = self.branch7x7_3(self.branch7x7_2(self.branch7x7_1(x)))
        bd = self.branch7x7dbl_1(x)
        for layer in (self.branch7x7dbl_2, self.branch7x7dbl_3, self.branch7x7dbl_4,
                      self.branch7x7dbl_5):
            bd = layer(bd)
        bp = self.branch_pool_conv(self.branch_pool(x))
        return _cat([self.branch1x1(x), b7, bd, bp])


class InceptionD(nn.Layer):
    """17x17 -> 8x8 reduction: 1x1->3x3/2 | 1x1->1x7->7x1->3x3/2 | 3x3/2 max pool."""

    def __init__(self, num_channels):
        super().__init__()
        self.branch3x3_1 = _cbr(num_channels, 192, 1)
        self.branch3x3_2 = _cbr(192, 320, 3, stride=2)
        self.branch7x7x3_1 = _cbr(num_channels, 192, 1)
        self.branch7x7x3_2 = _cbr(192, 192, (1, 7), padding=(0, 3))
        self.branch7x7x3_3 = _cbr(192, 192, (7, 1), padding=(3, 0))
        self.branch7x7x3_4 = _cbr(192, 192, 3, stride=2)
        self.branch_pool = nn.MaxPool2D(kernel_size=3, stride=2)

    def forward(self, x):
        b3 = self.branch3x3_2(self.branch3x3_1(x))
        b7 = self.branch7x7x3_1(x)
        for layer in (self.branch7x7x3_2, self.branch7x7x3_3, self.branch7x7x3_4):
            b7 = layer(b7)
        return _cat([b3, b7, self.branch_pool(x)])


class InceptionE(nn.Layer):
    """8x8 module with the 3x3 branches split into parallel 1x3 and 3x1 convolutions."""

    def __init__(self, num_channels):
        super().__init__()
        self.branch1x1 = _cbr(num_channels, 320, 1)
        self.branch3x3_1 = _cbr(num_channels, 384, 1)
        self.branch3x3_2a = _cbr(384, 384, (1, 3), padding=(0, 1))
        self.branch3x3_2b = _cbr(384, 384, (3, 1), padding=(1, 0))
        self.branch3x3dbl_1 = _cbr(num_channels, 448, 1)
        self.branch3x3dbl_2 = _cbr(448, 384, 3, padding=1)
        self.branch3x3dbl_3a = _cbr(384, 384, (1, 3), padding=(0, 1))
        self.branch3x3dbl_3b = _cbr(384, 384, (3, 1), padding=(1, 0))
        self.branch_pool = _avg_pool_3x3()
        self.branch_pool_conv = _cbr(num_channels, 192, 1)

    def forward(self, x):
        b3 = self.branch3x3_1(x)
        b3 = _cat([self.branch3x3_2a(b3), self.branch3x3_2b(b3)])
        bd = self.branch3x3dbl_2(self.branch3x3dbl_1(x))
        bd = _cat([self.branch3x3dbl_3a(bd), self.branch3x3dbl_3b(bd)])
        bp = self.branch_pool_conv(self.branch_pool(x))
        return _cat([self.branch1x1(x), b3, bd, bp])


class InceptionV3(nn.Layer):
    """InceptionV3 model from `"Rethinking the Inception Architecture for Computer Vision"
    <https://arxiv.org/pdf/1512.00567.pdf>`_.

    As in Paddle, ``forward`` returns the main logits only (the model has no auxiliary head).

    Args:
        num_classes (int, optional): size of the last fc layer; when <= 0 there is none.
            Default: 1000.
        with_pool (bool, optional): global-average-pool before the fc layer. Default: True.

    Returns:
        nn.Layer: the network.

    Examples:
        >>> import paddle_hl as paddle
        >>> from paddle_hl.vision.models import InceptionV3
        >>> InceptionV3()(paddle.rand([1, 3, 96, 96])).shape
        [1, 1000]
    """

    def __init__(self, num_classes: int = 1000, with_pool: bool = True):
        super().__init__()
        self.num_classes = num_classes
        self.with_pool = with_pool
        self.layers_config = {
            "inception_a": [[192, 256, 288], [32, 64, 64]],
            "inception_b": [288],
            "inception_c": [[768, 768, 768, 768], [128, 160, 160, 192]],
            "inception_d": [768],
            "inception_e": [1280, 2048],
        }
        cfg = self.layers_config
        self.inception_stem = InceptionStem()
        blocks = [InceptionA(c, p) for c, p in zip(*cfg["inception_a"])]
        blocks += [InceptionB(c) for c in cfg["inception_b"]]
        blocks += [InceptionC(c, c7) for c, c7 in zip(*cfg["inception_c"])]
        blocks += [InceptionD(c) for c in cfg["inception_d"]]
        blocks += [InceptionE(c) for c in cfg["inception_e"]]
        self.inception_block_list = nn.LayerList(blocks)
        if with_pool:
            self.avg_pool = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.dropout = nn.Dropout(p=0.2, mode="downscale_in_infer")
            self.fc = nn.Linear(2048, num_classes,
                                weight_attr=_uniform_attr(1.0 / math.sqrt(2048.0)))

    def forward(self, x):
        x = self.inception_stem(x)
        for block in self.inception_block_list:
            x = block(x)
        if self.with_pool:
            x = self.avg_pool(x)
        if self.num_classes > 0:
            x = self.fc(self.dropout(paddle.reshape(x, [-1, 2048])))
        return x


@register_model
def inception_v3(pretrained: bool = False, **kwargs) -> InceptionV3:
    """InceptionV3 (expects 3x299x299 input for the published weights).

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights. Default: False.
        **kwargs: passed to :class:`InceptionV3` (``num_classes``, ``with_pool``).

    Returns:
        InceptionV3: the model.

    Examples:
        >>> from paddle_hl.vision.models import inception_v3
        >>> model = inception_v3()
    """
    return build_model(InceptionV3, "inception_v3", pretrained, model_urls, **kwargs)
