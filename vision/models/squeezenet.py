"""SqueezeNet 1.0 and 1.1."""

from __future__ import annotations

import paddle_hl as paddle
import paddle_hl.nn.functional as F
from paddle_hl import nn

from ._registry import register_model
from ._utils import build_model

__all__ = []

_IMAGENET = "https://paddle-imagenet-models-name.bj.bcebos.com/dygraph/"
model_urls = {
    "squeezenet1_0": (_IMAGENET + "SqueezeNet1_0_pretrained.pdparams",
                      "30b95af60a2178f03cf9b66cd77e1db1"),
    "squeezenet1_1": (_IMAGENET + "SqueezeNet1_1_pretrained.pdparams",
                      "a11250d3a1f91d7131fd095ebbf09eee"),
}

# The eight fire modules: (in, squeeze, expand 1x1, expand 3x3); the same for both versions.
_FIRES = ((None, 16, 64, 64), (128, 16, 64, 64), (128, 32, 128, 128), (256, 32, 128, 128),
          (256, 48, 192, 192), (384, 48, 192, 192), (384, 64, 256, 256), (512, 64, 256, 256))
# version -> (stem conv: out, kernel, padding; fire modules followed by a max pool)
_VERSIONS = {"1.0": ((96, 7, 0), (3, 7)), "1.1": ((64, 3, 1), (2, 4))}


class MakeFireConv(nn.Layer):
    """Conv2D (with bias) -> ReLU."""

    def __init__(self, input_channels, output_channels, filter_size, padding=0):
        super().__init__()
        self._conv = nn.Conv2D(input_channels, output_channels, filter_size, padding=padding)

    def forward(self, x):
        return F.relu(self._conv(x))


class MakeFire(nn.Layer):
    """Fire module: 1x1 squeeze, then 1x1 and 3x3 expands concatenated on channels."""

    def __init__(self, input_channels, squeeze_channels, expand1x1_channels,
                 expand3x3_channels):
        super().__init__()
        self._conv = MakeFireConv(input_channels, squeeze_channels, 1)
        self._conv_path1 = MakeFireConv(squeeze_channels, expand1x1_channels, 1)
        self._conv_path2 = MakeFireConv(squeeze_channels, expand3x3_channels, 3, padding=1)

    def forward(self, inputs):
        x = self._conv(inputs)
        return paddle.concat([self._conv_path1(x), self._conv_path2(x)], axis=1)


class SqueezeNet(nn.Layer):
    """SqueezeNet model from `"SqueezeNet: AlexNet-level accuracy with 50x fewer parameters and
    <0.5MB model size" <https://arxiv.org/pdf/1602.07360.pdf>`_.

    Args:
        version (str): '1.0' or '1.1'.
        num_classes (int, optional): channels of the final 1x1 conv classifier; when <= 0
            the classifier is left out. Default: 1000.
        with_pool (bool, optional): ReLU, global-average-pool and squeeze to ``[N, C]`` at
            the end. Default: True.

    Returns:
        nn.Layer: the network.

    Examples:
        >>> import paddle_hl as paddle
        >>> from paddle_hl.vision.models import SqueezeNet
        >>> SqueezeNet('1.1')(paddle.rand([1, 3, 64, 64])).shape
        [1, 1000]
    """

    def __init__(self, version: str, num_classes: int = 1000, with_pool: bool = True):
        super().__init__()
        if version not in _VERSIONS:
            raise ValueError(f"SqueezeNet: supported versions are {sorted(_VERSIONS)} but "
                             f"input version is {version!r}")
        self.version = version
        self.num_classes = num_classes
        self.with_pool = with_pool
        (stem, kernel, padding), self._pool_after = _VERSIONS[version]
        self._conv = nn.Conv2D(3, stem, kernel, stride=2, padding=padding)
        self._pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=0)
        self._fires = []
        for i, (cin, squeeze, e1, e3) in enumerate(_FIRES, start=1):
            fire = MakeFire(cin or stem, squeeze, e1, e3)
            self._fires.append(self.add_sublayer(f"_conv{i}", fire))
        self._drop = nn.Dropout(p=0.5, mode="downscale_in_infer")
        if num_classes > 0:
            self._conv9 = nn.Conv2D(512, num_classes, 1)
        self._avg_pool = nn.AdaptiveAvgPool2D(1)

    def forward(self, inputs):
        x = self._pool(F.relu(self._conv(inputs)))
        for i, fire in enumerate(self._fires, start=1):
            x = fire(x)
            if i in self._pool_after:
                x = self._pool(x)
        if self.num_classes > 0:
            # Looked up in _sub_layers: the core Layer has a method named ``_drop``, which
            # would shadow the sublayer on plain attribute access.
            x = self._conv9(self._sub_layers["_drop"](x))
        if self.with_pool:
            x = paddle.squeeze(self._avg_pool(F.relu(x)), axis=[2, 3])
        return x


def _squeezenet(arch, version, pretrained, **kwargs):
    return build_model(SqueezeNet, arch, pretrained, model_urls, version, **kwargs)


@register_model
def squeezenet1_0(pretrained: bool = False, **kwargs) -> SqueezeNet:
    """SqueezeNet 1.0.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights. Default: False.
        **kwargs: passed to :class:`SqueezeNet` (``num_classes``, ``with_pool``).

    Returns:
        SqueezeNet: the model.

    Examples:
        >>> from paddle_hl.vision.models import squeezenet1_0
        >>> model = squeezenet1_0()
    """
    return _squeezenet("squeezenet1_0", "1.0", pretrained, **kwargs)


@register_model
def squeezenet1_1(pretrained: bool = False, **kwargs) -> SqueezeNet:
    """SqueezeNet 1.1 (2.4x less computation than 1.0, same accuracy).

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights. Default: False.
        **kwargs: passed to :class:`SqueezeNet` (``num_classes``, ``with_pool``).

    Returns:
        SqueezeNet: the model.

    Examples:
        >>> from paddle_hl.vision.models import squeezenet1_1
        >>> model = squeezenet1_1()
    """
    return _squeezenet("squeezenet1_1", "1.1", pretrained, **kwargs)
