"""VGG 11/13/16/19, with or without batch norm."""

from __future__ import annotations

import paddle_hl as paddle
from paddle_hl import nn

from ._registry import register_model
from ._utils import build_model

__all__ = []

model_urls = {
    "vgg16": ("https://paddle-hapi.bj.bcebos.com/models/vgg16.pdparams",
              "89bbffc0f87d260be9b8cdc169c991c4"),
    "vgg19": ("https://paddle-hapi.bj.bcebos.com/models/vgg19.pdparams",
              "23b18bb13d8894f60f54e642be79a0dd"),
}

# Conv widths per stage; "M" is a 2x2 max pool. Keys are the paper's configuration letters.
cfgs = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M",
          512, 512, 512, "M"],
    "E": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M",
          512, 512, 512, 512, "M"],
}
_DEPTH_CFG = {11: "A", 13: "B", 16: "D", 19: "E"}


class VGG(nn.Layer):
    """VGG model from `"Very Deep Convolutional Networks For Large-Scale Image Recognition"
    <https://arxiv.org/pdf/1409.1556.pdf>`_.

    Args:
        features (nn.Layer): the convolutional trunk, e.g. ``make_layers(cfgs['D'])``.
        num_classes (int, optional): size of the last fc layer; when <= 0 the classifier is
            left out. Default: 1000.
        with_pool (bool, optional): adaptive-average-pool the features to 7x7 first.
            Default: True.

    Returns:
        nn.Layer: the network.

    Examples:
        >>> import paddle_hl as paddle
        >>> from paddle_hl.vision.models import VGG
        >>> from paddle_hl.vision.models.vgg import make_layers, cfgs
        >>> model = VGG(make_layers(cfgs['A']), num_classes=10)
        >>> model(paddle.rand([1, 3, 64, 64])).shape
        [1, 10]
    """

    def __init__(self, features: nn.Layer, num_classes: int = 1000, with_pool: bool = True):
        super().__init__()
        self.features = features
        self.num_classes = num_classes
        self.with_pool = with_pool
        if with_pool:
            self.avgpool = nn.AdaptiveAvgPool2D((7, 7))
        if num_classes > 0:
            self.classifier = nn.Sequential(
                nn.Linear(512 * 7 * 7, 4096), nn.ReLU(), nn.Dropout(),
                nn.Linear(4096, 4096), nn.ReLU(), nn.Dropout(),
                nn.Linear(4096, num_classes))

    def forward(self, x):
        x = self.features(x)
        if self.with_pool:
            x = self.avgpool(x)
        if self.num_classes > 0:
            x = self.classifier(paddle.flatten(x, 1))
        return x


def make_layers(cfg, batch_norm=False):
    """Build the VGG trunk from a list of widths and "M" (max pool) entries.

    Args:
        cfg (list): e.g. ``cfgs['D']``.
        batch_norm (bool, optional): put a BatchNorm2D after every conv. Default: False.

    Returns:
        nn.Sequential: the trunk on 3-channel input.
    """
    layers = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2D(kernel_size=2, stride=2))
            continue
        layers.append(nn.Conv2D(in_channels, v, kernel_size=3, padding=1))
        if batch_norm:
            layers.append(nn.BatchNorm2D(v))
        layers.append(nn.ReLU())
        in_channels = v
    return nn.Sequential(*layers)


def _vgg(depth, pretrained, batch_norm, **kwargs):
    def make(**kw):
        return VGG(make_layers(cfgs[_DEPTH_CFG[depth]], batch_norm=batch_norm), **kw)

    arch = f"vgg{depth}" + ("_bn" if batch_norm else "")
    return build_model(make, arch, pretrained, model_urls, **kwargs)


@register_model
def vgg11(pretrained: bool = False, batch_norm: bool = False, **kwargs) -> VGG:
    """VGG-11; ``batch_norm=True`` adds a BatchNorm2D after every conv.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights (published for
            vgg16 and vgg19 without batch norm). Default: False.
        batch_norm (bool, optional): use batch normalization. Default: False.
        **kwargs: passed to :class:`VGG` (``num_classes``, ``with_pool``).

    Returns:
        VGG: the model.

    Examples:
        >>> from paddle_hl.vision.models import vgg11
        >>> model = vgg11(batch_norm=True)
    """
    return _vgg(11, pretrained, batch_norm, **kwargs)


@register_model
def vgg13(pretrained: bool = False, batch_norm: bool = False, **kwargs) -> VGG:
    """VGG-13; ``batch_norm=True`` adds a BatchNorm2D after every conv.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights (published for
            vgg16 and vgg19 without batch norm). Default: False.
        batch_norm (bool, optional): use batch normalization. Default: False.
        **kwargs: passed to :class:`VGG` (``num_classes``, ``with_pool``).

    Returns:
        VGG: the model.

    Examples:
        >>> from paddle_hl.vision.models import vgg13
        >>> model = vgg13(batch_norm=True)
    """
    return _vgg(13, pretrained, batch_norm, **kwargs)


@register_model
def vgg16(pretrained: bool = False, batch_norm: bool = False, **kwargs) -> VGG:
    """VGG-16; ``batch_norm=True`` adds a BatchNorm2D after every conv.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights (published for
            vgg16 and vgg19 without batch norm). Default: False.
        batch_norm (bool, optional): use batch normalization. Default: False.
        **kwargs: passed to :class:`VGG` (``num_classes``, ``with_pool``).

    Returns:
        VGG: the model.

    Examples:
        >>> from paddle_hl.vision.models import vgg16
        >>> model = vgg16(batch_norm=True)
    """
    return _vgg(16, pretrained, batch_norm, **kwargs)


@register_model
def vgg19(pretrained: bool = False, batch_norm: bool = False, **kwargs) -> VGG:
    """VGG-19; ``batch_norm=True`` adds a BatchNorm2D after every conv.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights (published for
            vgg16 and vgg19 without batch norm). Default: False.
        batch_norm (bool, optional): use batch normalization. Default: False.
        **kwargs: passed to :class:`VGG` (``num_classes``, ``with_pool``).

    Returns:
        VGG: the model.

    Examples:
        >>> from paddle_hl.vision.models import vgg19
        >>> model = vgg19(batch_norm=True)
    """
    return _vgg(19, pretrained, batch_norm, **kwargs)
