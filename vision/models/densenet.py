"""DenseNet 121/161/169/201/264."""

from __future__ import annotations

import math

import paddle_hl as paddle
import paddle_hl.nn.functional as F
from paddle_hl import nn

from ._registry import register_model
from ._utils import _uniform_attr, build_model

__all__ = []

_IMAGENET = "https://paddle-imagenet-models-name.bj.bcebos.com/dygraph/"
model_urls = {
    "densenet121": (_IMAGENET + "DenseNet121_pretrained.pdparams",
                    "db1b239ed80a905290fd8b01d3af08e4"),
    "densenet161": (_IMAGENET + "DenseNet161_pretrained.pdparams",
                    "62158869cb315098bd25ddbfd308a853"),
    "densenet169": (_IMAGENET + "DenseNet169_pretrained.pdparams",
                    "82cc7c635c3f19098c748850efb2d796"),
    "densenet201": (_IMAGENET + "DenseNet201_pretrained.pdparams",
                    "16ca29565a7712329cf9e36e02caaf58"),
    "densenet264": (_IMAGENET + "DenseNet264_pretrained.pdparams",
                    "3270ce516b85370bba88cfdd9f60bff4"),
}

# layers -> (stem channels, growth rate, dense layers per block)
_SPECS = {
    121: (64, 32, (6, 12, 24, 16)),
    161: (96, 48, (6, 12, 36, 24)),
    169: (64, 32, (6, 12, 32, 32)),
    201: (64, 32, (6, 12, 48, 32)),
    264: (64, 32, (6, 12, 64, 48)),
}


class BNACConvLayer(nn.Layer):
    """Pre-activation unit: BatchNorm -> ReLU -> Conv2D (no bias)."""

    def __init__(self, num_channels, num_filters, filter_size, stride=1, pad=0, groups=1):
        super().__init__()
        self._batch_norm = nn.BatchNorm2D(num_channels)
        self._conv = nn.Conv2D(num_channels, num_filters, filter_size, stride=stride,
                               padding=pad, groups=groups, bias_attr=False)

    def forward(self, input):  # noqa: A002  (Paddle's argument name)
        return self._conv(F.relu(self._batch_norm(input)))


class DenseLayer(nn.Layer):
    """Bottleneck (1x1 to ``bn_size * growth_rate``) then 3x3 to ``growth_rate`` channels,
    concatenated after the input."""

    def __init__(self, num_channels, growth_rate, bn_size, dropout):
        super().__init__()
        self.dropout = dropout
        self.bn_ac_func1 = BNACConvLayer(num_channels, bn_size * growth_rate, 1, pad=0)
        self.bn_ac_func2 = BNACConvLayer(bn_size * growth_rate, growth_rate, 3, pad=1)
        if dropout:
            self.dropout_func = nn.Dropout(p=dropout, mode="downscale_in_infer")

    def forward(self, input):  # noqa: A002
        new = self.bn_ac_func2(self.bn_ac_func1(input))
        if self.dropout:
            new = self.dropout_func(new)
        return paddle.concat([input, new], axis=1)


class DenseBlock(nn.Layer):
    """``num_layers`` DenseLayers, registered as ``{name}_1`` ... ``{name}_{num_layers}``."""

    def __init__(self, num_channels, num_layers, bn_size, growth_rate, dropout, name=None):
        super().__init__()
        self.dropout = dropout
        self.dense_layer_func = [
            self.add_sublayer(f"{name}_{i + 1}",
                              DenseLayer(num_channels + i * growth_rate, growth_rate, bn_size,
                                         dropout))
            for i in range(num_layers)]

    def forward(self, input):  # noqa: A002
        x = input
        for layer in self.dense_layer_func:
            x = layer(x)
        return x


class TransitionLayer(nn.Layer):
    """BN -> ReLU -> 1x1 conv -> 2x2 average pool between dense blocks."""

    def __init__(self, num_channels, num_output_features):
        super().__init__()
        self.conv_ac_func = BNACConvLayer(num_channels, num_output_features, 1, pad=0)
        self.pool2d_avg = nn.AvgPool2D(kernel_size=2, stride=2, padding=0)

    def forward(self, input):  # noqa: A002
        return self.pool2d_avg(self.conv_ac_func(input))


class ConvBNLayer(nn.Layer):
    """Conv2D (no bias) -> BatchNorm -> ReLU: the stem."""

    def __init__(self, num_channels, num_filters, filter_size, stride=1, pad=0, groups=1):
        super().__init__()
        self._conv = nn.Conv2D(num_channels, num_filters, filter_size, stride=stride,
                               padding=pad, groups=groups, bias_attr=False)
        self._batch_norm = nn.BatchNorm2D(num_filters)

    def forward(self, input):  # noqa: A002
        return F.relu(self._batch_norm(self._conv(input)))


class DenseNet(nn.Layer):
    """DenseNet model from `"Densely Connected Convolutional Networks"
    <https://arxiv.org/pdf/1608.06993.pdf>`_.

    Args:
        layers (int, optional): 121, 161, 169, 201 or 264. Default: 121.
        bn_size (int, optional): bottleneck multiplier of each dense layer. Default: 4.
        dropout (float, optional): dropout rate after each dense layer. Default: 0.0.
        num_classes (int, optional): size of the last fc layer; when <= 0 there is none.
            Default: 1000.
        with_pool (bool, optional): global-average-pool before the fc layer. Default: True.

    Returns:
        nn.Layer: the network.

    Examples:
        >>> import paddle_hl as paddle
        >>> from paddle_hl.vision.models import DenseNet
        >>> DenseNet(layers=121)(paddle.rand([1, 3, 64, 64])).shape
        [1, 1000]
    """

    def __init__(self, layers: int = 121, bn_size: int = 4, dropout: float = 0.0,
                 num_classes: int = 1000, with_pool: bool = True):
        super().__init__()
        if layers not in _SPECS:
            raise ValueError(f"DenseNet: supported layers are {sorted(_SPECS)} but input "
                             f"layer is {layers}")
        self.num_classes = num_classes
        self.with_pool = with_pool
        num_features, growth_rate, block_config = _SPECS[layers]
        self.block_config = block_config
        self.conv1_func = ConvBNLayer(3, num_features, 7, stride=2, pad=3)
        self.pool2d_max = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        self.dense_block_func_list = []
        self.transition_func_list = []
        for i, num_layers in enumerate(block_config):
            block = DenseBlock(num_features, num_layers, bn_size, growth_rate, dropout,
                               name=f"conv{i + 2}")
            self.dense_block_func_list.append(self.add_sublayer(f"db_conv_{i + 2}", block))
            num_features += num_layers * growth_rate
            if i != len(block_config) - 1:
                transition = TransitionLayer(num_features, num_features // 2)
                self.transition_func_list.append(
                    self.add_sublayer(f"tr_conv{i + 2}_blk", transition))
                num_features //= 2
        self.batch_norm = nn.BatchNorm2D(num_features)
        if with_pool:
            self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.out = nn.Linear(num_features, num_classes,
                                 weight_attr=_uniform_attr(1.0 / math.sqrt(num_features)))

    def forward(self, input):  # noqa: A002
        x = self.pool2d_max(self.conv1_func(input))
        for i, block in enumerate(self.dense_block_func_list):
            x = block(x)
            if i < len(self.transition_func_list):
                x = self.transition_func_list[i](x)
        x = F.relu(self.batch_norm(x))
        if self.with_pool:
            x = self.pool2d_avg(x)
        if self.num_classes > 0:
            x = self.out(paddle.flatten(x, start_axis=1, stop_axis=-1))
        return x


def _densenet(arch, layers, pretrained, **kwargs):
    return build_model(DenseNet, arch, pretrained, model_urls, layers=layers, **kwargs)


@register_model
def densenet121(pretrained: bool = False, **kwargs) -> DenseNet:
    """DenseNet-121: ``DenseNet(layers=121)``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights. Default: False.
        **kwargs: passed to :class:`DenseNet` (``bn_size``, ``dropout``, ``num_classes``,
            ``with_pool``).

    Returns:
        DenseNet: the model.

    Examples:
        >>> from paddle_hl.vision.models import densenet121
        >>> model = densenet121()
    """
    return _densenet("densenet121", 121, pretrained, **kwargs)


@register_model
def densenet161(pretrained: bool = False, **kwargs) -> DenseNet:
    """DenseNet-161: ``DenseNet(layers=161)``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights. Default: False.
        **kwargs: passed to :class:`DenseNet` (``bn_size``, ``dropout``, ``num_classes``,
            ``with_pool``).

    Returns:
        DenseNet: the model.

    Examples:
        >>> from paddle_hl.vision.models import densenet161
        >>> model = densenet161()
    """
    return _densenet("densenet161", 161, pretrained, **kwargs)


@register_model
def densenet169(pretrained: bool = False, **kwargs) -> DenseNet:
    """DenseNet-169: ``DenseNet(layers=169)``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights. Default: False.
        **kwargs: passed to :class:`DenseNet` (``bn_size``, ``dropout``, ``num_classes``,
            ``with_pool``).

    Returns:
        DenseNet: the model.

    Examples:
        >>> from paddle_hl.vision.models import densenet169
        >>> model = densenet169()
    """
    return _densenet("densenet169", 169, pretrained, **kwargs)


@register_model
def densenet201(pretrained: bool = False, **kwargs) -> DenseNet:
    """DenseNet-201: ``DenseNet(layers=201)``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights. Default: False.
        **kwargs: passed to :class:`DenseNet` (``bn_size``, ``dropout``, ``num_classes``,
            ``with_pool``).

    Returns:
        DenseNet: the model.

    Examples:
        >>> from paddle_hl.vision.models import densenet201
        >>> model = densenet201()
    """
    return _densenet("densenet201", 201, pretrained, **kwargs)


@register_model
def densenet264(pretrained: bool = False, **kwargs) -> DenseNet:
    """DenseNet-264: ``DenseNet(layers=264)``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights. Default: False.
        **kwargs: passed to :class:`DenseNet` (``bn_size``, ``dropout``, ``num_classes``,
            ``with_pool``).

    Returns:
        DenseNet: the model.

    Examples:
        >>> from paddle_hl.vision.models import densenet264
        >>> model = densenet264()
    """
    return _densenet("densenet264", 264, pretrained, **kwargs)
