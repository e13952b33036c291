"""GoogLeNet (Inception v1) with its two auxiliary classifiers."""

from __future__ import annotations

import paddle_hl as paddle
import paddle_hl.nn.functional as F
from paddle_hl import nn

from ._registry import register_model
from ._utils import _uniform_attr, build_model

__all__ = []

model_urls = {
    "googlenet": (
        "https://paddle-imagenet-models-name.bj.bcebos.com/dygraph/GoogLeNet_pretrained.pdparams",
        "80c06f038e905c53ab32c40eca6e26ae"),
}

# Inception modules in order: (name, in, 1x1, 3x3 reduce, 3x3, 5x5 reduce, 5x5, pool proj)
_INCEPTIONS = (
    ("_ince3a", 192, 64, 96, 128, 16, 32, 32),
    ("_ince3b", 256, 128, 128, 192, 32, 96, 64),
    ("_ince4a", 480, 192, 96, 208, 16, 48, 64),
    ("_ince4b", 512, 160, 112, 224, 24, 64, 64),
    ("_ince4c", 512, 128, 128, 256, 24, 64, 64),
    ("_ince4d", 512, 112, 144, 288, 32, 64, 64),
    ("_ince4e", 528, 256, 160, 320, 32, 128, 128),
    ("_ince5a", 832, 256, 160, 320, 32, 128, 128),
    ("_ince5b", 832, 384, 192, 384, 48, 128, 128),
)


def _xavier(channels, filter_size):
    """U(-s, s) with s = sqrt(3 / fan_in): the init of the published model's fc layers."""
    return _uniform_attr((3.0 / (filter_size**2 * channels)) ** 0.5)


class ConvLayer(nn.Layer):
    """Bias-free "same" Conv2D (parameters under ``_conv``)."""

    def __init__(self, num_channels, num_filters, filter_size, stride=1, groups=1):
        super().__init__()
        self._conv = nn.Conv2D(num_channels, num_filters, filter_size, stride=stride,
                               padding=(filter_size - 1) // 2, groups=groups, bias_attr=False)

    def forward(self, inputs):
        return self._conv(inputs)


class Inception(nn.Layer):
    """Four parallel branches (1x1; 1x1->3x3; 1x1->5x5; 3x3 max pool->1x1), concatenated on
    channels, then ReLU. ``output_channels`` is accepted for Paddle's signature only."""

    def __init__(self, input_channels, output_channels, filter1, filter3R, filter3, filter5R,
                 filter5, proj):
        super().__init__()
        self._conv1 = ConvLayer(input_channels, filter1, 1)
        self._conv3r = ConvLayer(input_channels, filter3R, 1)
        self._conv3 = ConvLayer(filter3R, filter3, 3)
        self._conv5r = ConvLayer(input_channels, filter5R, 1)
        self._conv5 = ConvLayer(filter5R, filter5, 5)
        self._pool = nn.MaxPool2D(kernel_size=3, stride=1, padding=1)
        self._convprj = ConvLayer(input_channels, proj, 1)

    def forward(self, inputs):
        branches = [self._conv1(inputs), self._conv3(self._conv3r(inputs)),
                    self._conv5(self._conv5r(inputs)), self._convprj(self._pool(inputs))]
        return F.relu(paddle.concat(branches, axis=1))


class GoogLeNet(nn.Layer):
    """GoogLeNet (Inception v1) model from `"Going Deeper with Convolutions"
    <https://arxiv.org/pdf/1409.4842.pdf>`_.

    ``forward`` returns ``[out, aux1, aux2]``: the main logits and the logits of the two
    auxiliary heads on inception 4a and 4d (or the three pooled feature maps when
    ``num_classes <= 0``), as Paddle does.

    Args:
        num_classes (int, optional): size of the last fc layers; when <= 0 the heads are
            left out. Default: 1000.
        with_pool (bool, optional): pool the main and auxiliary features. Default: True.

    Returns:
        nn.Layer: the network.

    Examples:
        >>> import paddle_hl as paddle
        >>> from paddle_hl.vision.models import GoogLeNet
        >>> out, aux1, aux2 = GoogLeNet()(paddle.rand([1, 3, 224, 224]))
        >>> out.shape, aux1.shape, aux2.shape
        ([1, 1000], [1, 1000], [1, 1000])
    """

    def __init__(self, num_classes: int = 1000, with_pool: bool = True):
        super().__init__()
        self.num_classes = num_classes
        self.with_pool = with_pool
        self._conv = ConvLayer(3, 64, 7, 2)
        self._pool = nn.MaxPool2D(kernel_size=3, stride=2)
        self._conv_1 = ConvLayer(64, 64, 1)
        self._conv_2 = ConvLayer(64, 192, 3)
        for name, cin, *widths in _INCEPTIONS:
            self.add_sublayer(name, Inception(cin, cin, *widths))
        if with_pool:
            self._pool_5 = nn.AdaptiveAvgPool2D(1)
            self._pool_o1 = nn.AvgPool2D(kernel_size=5, stride=3)
            self._pool_o2 = nn.AvgPool2D(kernel_size=5, stride=3)
        if num_classes > 0:
            self._drop = nn.Dropout(p=0.4, mode="downscale_in_infer")
            self._fc_out = nn.Linear(1024, num_classes, weight_attr=_xavier(1024, 1))
            self._conv_o1 = ConvLayer(512, 128, 1)
            self._fc_o1 = nn.Linear(1152, 1024, weight_attr=_xavier(2048, 1))
            self._drop_o1 = nn.Dropout(p=0.7, mode="downscale_in_infer")
            self._out1 = nn.Linear(1024, num_classes, weight_attr=_xavier(1024, 1))
            self._conv_o2 = ConvLayer(528, 128, 1)
            self._fc_o2 = nn.Linear(1152, 1024, weight_attr=_xavier(2048, 1))
            self._drop_o2 = nn.Dropout(p=0.7, mode="downscale_in_infer")
            self._out2 = nn.Linear(1024, num_classes, weight_attr=_xavier(1024, 1))

    def forward(self, inputs):
        # The stem convs have no activation in the published model; keep it that way so its
        # weights give the same outputs.
        x = self._pool(self._conv(inputs))
        x = self._pool(self._conv_2(self._conv_1(x)))
        x = self._pool(self._ince3b(self._ince3a(x)))
        aux1 = self._ince4a(x)
        aux2 = self._ince4d(self._ince4c(self._ince4b(aux1)))
        x = self._pool(self._ince4e(aux2))
        out = self._ince5b(self._ince5a(x))
        if self.with_pool:
            out = self._pool_5(out)
            aux1 = self._pool_o1(aux1)
            aux2 = self._pool_o2(aux2)
        if self.num_classes > 0:
            # Looked up in _sub_layers: the core Layer has a method named ``_drop``, which
            # would shadow the sublayer on plain attribute access.
            out = self._sub_layers["_drop"](out)
            out = self._fc_out(paddle.squeeze(out, axis=[2, 3]))
            aux1 = paddle.flatten(self._conv_o1(aux1), start_axis=1, stop_axis=-1)
            aux1 = self._out1(self._drop_o1(F.relu(self._fc_o1(aux1))))
            aux2 = paddle.flatten(self._conv_o2(aux2), start_axis=1, stop_axis=-1)
            # Paddle's second auxiliary head has no ReLU after its hidden fc layer.
            aux2 = self._out2(self._drop_o2(self._fc_o2(aux2)))
        return [out, aux1, aux2]


@register_model
def googlenet(pretrained: bool = False, **kwargs) -> GoogLeNet:
    """GoogLeNet; ``forward`` returns ``[out, aux1, aux2]``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights. Default: False.
        **kwargs: passed to :class:`GoogLeNet` (``num_classes``, ``with_pool``).

    Returns:
        GoogLeNet: the model.

    Examples:
        >>> from paddle_hl.vision.models import googlenet
        >>> model = googlenet()
    """
    return build_model(GoogLeNet, "googlenet", pretrained, model_urls, **kwargs)
