"""ResNet, ResNeXt and Wide ResNet."""

from __future__ import annotations

import paddle_hl as paddle
from paddle_hl import nn

from ._registry import register_model
from ._utils import build_model

__all__ = []

_HAPI = "https://paddle-hapi.bj.bcebos.com/models/"
model_urls = {
    "resnet18": (_HAPI + "resnet18.pdparams", "cf548f46534aa3560945be4b95cd11c4"),
    "resnet34": (_HAPI + "resnet34.pdparams", "8d2275cf8706028345f78ac0e1d31969"),
    "resnet50": (_HAPI + "resnet50.pdparams", "ca6f485ee1ab0492d38f323885b0ad80"),
    "resnet101": (_HAPI + "resnet101.pdparams", "02f35f034ca3858e1e54d4036443c92d"),
    "resnet152": (_HAPI + "resnet152.pdparams", "7ad16a2f1e7333859ff986138630fd7a"),
    "resnext50_32x4d": (_HAPI + "resnext50_32x4d.pdparams",
                        "dc47483169be7d6f018fcbb7baf8775d"),
    "resnext50_64x4d": (_HAPI + "resnext50_64x4d.pdparams",
                        "063d4b483e12b06388529450ad7576db"),
    "resnext101_32x4d": (_HAPI + "resnext101_32x4d.pdparams",
                         "967b090039f9de2c8d06fe994fb9095f"),
    "resnext101_64x4d": (_HAPI + "resnext101_64x4d.pdparams",
                         "98e04e7ca616a066699230d769d03008"),
    "resnext152_32x4d": (_HAPI + "resnext152_32x4d.pdparams",
                         "18ff0beee21f2efc99c4b31786107121"),
    "resnext152_64x4d": (_HAPI + "resnext152_64x4d.pdparams",
                         "77c4af00ca42c405fa7f841841959379"),
    "wide_resnet50_2": (_HAPI + "wide_resnet50_2.pdparams", "0282f804d73debdab289bd9fea3fa6dc"),
    "wide_resnet101_2": (_HAPI + "wide_resnet101_2.pdparams",
                         "d4360a2d23657f059216f5d5a1a9ac93"),
}

# Blocks per stage for each depth.
_STAGES = {18: (2, 2, 2, 2), 34: (3, 4, 6, 3), 50: (3, 4, 6, 3), 101: (3, 4, 23, 3),
           152: (3, 8, 36, 3)}


class BasicBlock(nn.Layer):
    """Two 3x3 convs with a shortcut (ResNet-18/34). ``groups``/``base_width`` are accepted
    for a uniform block signature and ignored, as in Paddle."""

    expansion = 1
    # conv -> norm (-> activation) spans paddle_hl may run fused (see nn/_fusion.py)
    _fusions = (("conv1", "bn1", "relu"), ("conv2", "bn2"))

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64,
                 dilation=1, norm_layer=None):
        super().__init__()
        if dilation > 1:
            raise ValueError(f"BasicBlock: dilation > 1 is not supported, got {dilation}")
        norm_layer = norm_layer or nn.BatchNorm2D
        self.conv1 = nn.Conv2D(inplanes, planes, 3, padding=1, stride=stride, bias_attr=False)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2D(planes, planes, 3, padding=1, bias_attr=False)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        # the shortcut runs after the main branch, as in Paddle (hooks see this order)
        if self.downsample is not None:
            identity = self.downsample(x)
        out = out + identity
        out = self.relu(out)
        return out


class BottleneckBlock(nn.Layer):
    """1x1 reduce -> 3x3 (grouped for ResNeXt) -> 1x1 expand (x4), with a shortcut."""

    expansion = 4
    _fusions = (("conv1", "bn1", "relu"), ("conv2", "bn2", "relu"), ("conv3", "bn3"))

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64,
                 dilation=1, norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2D
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = nn.Conv2D(inplanes, width, 1, bias_attr=False)
        self.bn1 = norm_layer(width)
        self.conv2 = nn.Conv2D(width, width, 3, padding=dilation, stride=stride, groups=groups,
                               dilation=dilation, bias_attr=False)
        self.bn2 = norm_layer(width)
        self.conv3 = nn.Conv2D(width, planes * self.expansion, 1, bias_attr=False)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU()
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        out = self.relu(out)
        out = self.conv3(out)
        out = self.bn3(out)
        if self.downsample is not None:
            identity = self.downsample(x)
        out = out + identity
        out = self.relu(out)
        return out


class ResNet(nn.Layer):
    """ResNet model from `"Deep Residual Learning for Image Recognition"
    <https://arxiv.org/pdf/1512.03385.pdf>`_ (ResNeXt and Wide ResNet through ``width`` and
    ``groups``).

    Args:
        block (BasicBlock|BottleneckBlock): the residual block class.
        depth (int, optional): 18, 34, 50, 101 or 152. Default: 50.
        width (int, optional): base width per convolution group. Default: 64.
        num_classes (int, optional): size of the last fc layer; when <= 0 there is none.
            Default: 1000.
        with_pool (bool, optional): global-average-pool before the fc layer. Default: True.
        groups (int, optional): groups of the 3x3 convs. Default: 1.

    Returns:
        nn.Layer: the network.

    Examples:
        >>> import paddle_hl as paddle
        >>> from paddle_hl.vision.models import ResNet
        >>> from paddle_hl.vision.models.resnet import BasicBlock, BottleneckBlock
        >>> resnet18 = ResNet(BasicBlock, 18)
        >>> resnext50_32x4d = ResNet(BottleneckBlock, 50, width=4, groups=32)
        >>> resnet18(paddle.rand([1, 3, 64, 64])).shape
        [1, 1000]
    """

    _fusions = (("conv1", "bn1", "relu"),)

    def __init__(self, block, depth: int = 50, width: int = 64, num_classes: int = 1000,
                 with_pool: bool = True, groups: int = 1):
        super().__init__()
        if depth not in _STAGES:
            raise ValueError(f"ResNet: depth must be one of {sorted(_STAGES)}, got {depth}")
        stages = _STAGES[depth]
        self.groups = groups
        self.base_width = width
        self.num_classes = num_classes
        self.with_pool = with_pool
        self._norm_layer = nn.BatchNorm2D
        self.inplanes = 64
        self.dilation = 1
        self.conv1 = nn.Conv2D(3, self.inplanes, kernel_size=7, stride=2, padding=3,
                               bias_attr=False)
        self.bn1 = self._norm_layer(self.inplanes)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, stages[0])
        self.layer2 = self._make_layer(block, 128, stages[1], stride=2)
        self.layer3 = self._make_layer(block, 256, stages[2], stride=2)
        self.layer4 = self._make_layer(block, 512, stages[3], stride=2)
        if with_pool:
            self.avgpool = nn.AdaptiveAvgPool2D((1, 1))
        if num_classes > 0:
            self.fc = nn.Linear(512 * block.expansion, num_classes)

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
        """One stage: a (possibly strided) first block with a projection shortcut, then
        ``blocks - 1`` identity blocks."""
        norm_layer = self._norm_layer
        previous_dilation = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        out_planes = planes * block.expansion
        downsample = None
        if stride != 1 or self.inplanes != out_planes:
            downsample = nn.Sequential(
                nn.Conv2D(self.inplanes, out_planes, 1, stride=stride, bias_attr=False),
                norm_layer(out_planes))
        layers = [block(self.inplanes, planes, stride, downsample, self.groups, self.base_width,
                        previous_dilation, norm_layer)]
        self.inplanes = out_planes
        layers += [block(self.inplanes, planes, groups=self.groups, base_width=self.base_width,
                         norm_layer=norm_layer) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu(x)
        x = self.maxpool(x)
        x = self.layer1(x)
        x = self.layer2(x)
        x = self.layer3(x)
        x = self.layer4(x)
        if self.with_pool:
            x = self.avgpool(x)
        if self.num_classes > 0:
            x = self.fc(paddle.flatten(x, 1))
        return x


def _resnet(arch, depth, pretrained, **kwargs):
    """Build ``arch``; the variant's own ``width``/``groups`` are merged over the caller's
    kwargs by the constructors, so they win, as in Paddle."""
    block = BasicBlock if depth < 50 else BottleneckBlock
    return build_model(ResNet, arch, pretrained, model_urls, block, depth, **kwargs)


@register_model
def resnet18(pretrained: bool = False, **kwargs) -> ResNet:
    """ResNet-18: ``ResNet(BasicBlock, 18)``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights. Default: False.
        **kwargs: passed to :class:`ResNet` (``num_classes``, ``with_pool``).

    Returns:
        ResNet: the model.

    Examples:
        >>> from paddle_hl.vision.models import resnet18
        >>> model = resnet18()
    """
    return _resnet("resnet18", 18, pretrained, **kwargs)


@register_model
def resnet34(pretrained: bool = False, **kwargs) -> ResNet:
    """ResNet-34: ``ResNet(BasicBlock, 34)``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights. Default: False.
        **kwargs: passed to :class:`ResNet` (``num_classes``, ``with_pool``).

    Returns:
        ResNet: the model.

    Examples:
        >>> from paddle_hl.vision.models import resnet34
        >>> model = resnet34()
    """
    return _resnet("resnet34", 34, pretrained, **kwargs)


@register_model
def resnet50(pretrained: bool = False, **kwargs) -> ResNet:
    """ResNet-50: ``ResNet(BottleneckBlock, 50)``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights. Default: False.
        **kwargs: passed to :class:`ResNet` (``num_classes``, ``with_pool``).

    Returns:
        ResNet: the model.

    Examples:
        >>> from paddle_hl.vision.models import resnet50
        >>> model = resnet50()
    """
    return _resnet("resnet50", 50, pretrained, **kwargs)


@register_model
def resnet101(pretrained: bool = False, **kwargs) -> ResNet:
    """ResNet-101: ``ResNet(BottleneckBlock, 101)``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights. Default: False.
        **kwargs: passed to :class:`ResNet` (``num_classes``, ``with_pool``).

    Returns:
        ResNet: the model.

    Examples:
        >>> from paddle_hl.vision.models import resnet101
        >>> model = resnet101()
    """
    return _resnet("resnet101", 101, pretrained, **kwargs)


@register_model
def resnet152(pretrained: bool = False, **kwargs) -> ResNet:
    """ResNet-152: ``ResNet(BottleneckBlock, 152)``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights. Default: False.
        **kwargs: passed to :class:`ResNet` (``num_classes``, ``with_pool``).

    Returns:
        ResNet: the model.

    Examples:
        >>> from paddle_hl.vision.models import resnet152
        >>> model = resnet152()
    """
    return _resnet("resnet152", 152, pretrained, **kwargs)


@register_model
def resnext50_32x4d(pretrained: bool = False, **kwargs) -> ResNet:
    """ResNeXt-50 32x4d: ``ResNet(BottleneckBlock, 50, groups=32, width=4)``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights. Default: False.
        **kwargs: passed to :class:`ResNet` (``num_classes``, ``with_pool``).

    Returns:
        ResNet: the model.

    Examples:
        >>> from paddle_hl.vision.models import resnext50_32x4d
        >>> model = resnext50_32x4d()
    """
    return _resnet("resnext50_32x4d", 50, pretrained, **{**kwargs, "groups": 32, "width": 4})


@register_model
def resnext50_64x4d(pretrained: bool = False, **kwargs) -> ResNet:
    """ResNeXt-50 64x4d: ``ResNet(BottleneckBlock, 50, groups=64, width=4)``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights. Default: False.
        **kwargs: passed to :class:`ResNet` (``num_classes``, ``with_pool``).

    Returns:
        ResNet: the model.

    Examples:
        >>> from paddle_hl.vision.models import resnext50_64x4d
        >>> model = resnext50_64x4d()
    """
    return _resnet("resnext50_64x4d", 50, pretrained, **{**kwargs, "groups": 64, "width": 4})


@register_model
def resnext101_32x4d(pretrained: bool = False, **kwargs) -> ResNet:
    """ResNeXt-101 32x4d: ``ResNet(BottleneckBlock, 101, groups=32, width=4)``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights. Default: False.
        **kwargs: passed to :class:`ResNet` (``num_classes``, ``with_pool``).

    Returns:
        ResNet: the model.

    Examples:
        >>> from paddle_hl.vision.models import resnext101_32x4d
        >>> model = resnext101_32x4d()
    """
    return _resnet("resnext101_32x4d", 101, pretrained, **{**kwargs, "groups": 32, "width": 4})


@register_model
def resnext101_64x4d(pretrained: bool = False, **kwargs) -> ResNet:
    """ResNeXt-101 64x4d: ``ResNet(BottleneckBlock, 101, groups=64, width=4)``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights. Default: False.
        **kwargs: passed to :class:`ResNet` (``num_classes``, ``with_pool``).

    Returns:
        ResNet: the model.

    Examples:
        >>> from paddle_hl.vision.models import resnext101_64x4d
        >>> model = resnext101_64x4d()
    """
    return _resnet("resnext101_64x4d", 101, pretrained, **{**kwargs, "groups": 64, "width": 4})


@register_model
def resnext152_32x4d(pretrained: bool = False, **kwargs) -> ResNet:
    """ResNeXt-152 32x4d: ``ResNet(BottleneckBlock, 152, groups=32, width=4)``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights. Default: False.
        **kwargs: passed to :class:`ResNet` (``num_classes``, ``with_pool``).

    Returns:
        ResNet: the model.

    Examples:
        >>> from paddle_hl.vision.models import resnext152_32x4d
        >>> model = resnext152_32x4d()
    """
    return _resnet("resnext152_32x4d", 152, pretrained, **{**kwargs, "groups": 32, "width": 4})


@register_model
def resnext152_64x4d(pretrained: bool = False, **kwargs) -> ResNet:
    """ResNeXt-152 64x4d: ``ResNet(BottleneckBlock, 152, groups=64, width=4)``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights. Default: False.
        **kwargs: passed to :class:`ResNet` (``num_classes``, ``with_pool``).

    Returns:
        ResNet: the model.

    Examples:
        >>> from paddle_hl.vision.models import resnext152_64x4d
        >>> model = resnext152_64x4d()
    """
    return _resnet("resnext152_64x4d", 152, pretrained, **{**kwargs, "groups": 64, "width": 4})


@register_model
def wide_resnet50_2(pretrained: bool = False, **kwargs) -> ResNet:
    """Wide ResNet-50-2: ``ResNet(BottleneckBlock, 50, width=128)``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights. Default: False.
        **kwargs: passed to :class:`ResNet` (``num_classes``, ``with_pool``).

    Returns:
        ResNet: the model.

    Examples:
        >>> from paddle_hl.vision.models import wide_resnet50_2
        >>> model = wide_resnet50_2()
    """
    return _resnet("wide_resnet50_2", 50, pretrained, **{**kwargs, "width": 128})


@register_model
def wide_resnet101_2(pretrained: bool = False, **kwargs) -> ResNet:
    """Wide ResNet-101-2: ``ResNet(BottleneckBlock, 101, width=128)``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights. Default: False.
        **kwargs: passed to :class:`ResNet` (``num_classes``, ``with_pool``).

    Returns:
        ResNet: the model.

    Examples:
        >>> from paddle_hl.vision.models import wide_resnet101_2
        >>> model = wide_resnet101_2()
    """
    return _resnet("wide_resnet101_2", 101, pretrained, **{**kwargs, "width": 128})
