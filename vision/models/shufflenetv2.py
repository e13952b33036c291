"""ShuffleNetV2 at widths 0.25x ... 2.0x, with ReLU or Swish."""

from __future__ import annotations

import paddle_hl as paddle
from paddle_hl import nn

from ._registry import register_model
from ._utils import _DEFAULT, ConvNormActivation, build_model

__all__ = []

_HAPI = "https://paddle-hapi.bj.bcebos.com/models/"
model_urls = {
    "shufflenet_v2_x0_25": (_HAPI + "shufflenet_v2_x0_25.pdparams",
                            "1e509b4c140eeb096bb16e214796d03b"),
    "shufflenet_v2_x0_33": (_HAPI + "shufflenet_v2_x0_33.pdparams",
                            "3d7b3ab0eaa5c0927ff1026d31b729bd"),
    "shufflenet_v2_x0_5": (_HAPI + "shufflenet_v2_x0_5.pdparams",
                           "5e5cee182a7793c4e4c73949b1a71bd4"),
    "shufflenet_v2_x1_0": (_HAPI + "shufflenet_v2_x1_0.pdparams",
                           "122d42478b9e81eb49f8a9ede327b1a4"),
    "shufflenet_v2_x1_5": (_HAPI + "shufflenet_v2_x1_5.pdparams",
                           "faced5827380d73531d0ee027c67826d"),
    "shufflenet_v2_x2_0": (_HAPI + "shufflenet_v2_x2_0.pdparams",
                           "cd3dddcd8305e7bcd8ad14d1c69a5784"),
    "shufflenet_v2_swish": (_HAPI + "shufflenet_v2_swish.pdparams",
                            "adde0aa3b023e5b0c94a68be1c394b84"),
}

# scale -> output channels of: stem, stage 2, stage 3, stage 4, last 1x1 conv
_WIDTHS = {
    0.25: (24, 24, 48, 96, 512),
    0.33: (24, 32, 64, 128, 512),
    0.5: (24, 48, 96, 192, 1024),
    1.0: (24, 116, 232, 464, 1024),
    1.5: (24, 176, 352, 704, 1024),
    2.0: (24, 224, 488, 976, 2048),
}
_STAGE_REPEATS = (4, 8, 4)


def create_activation_layer(act):
    """Activation class for ``act`` ('relu', 'swish' or None)."""
    table = {"relu": nn.ReLU, "swish": nn.Swish, None: None}
    if act not in table:
        raise ValueError(f"ShuffleNetV2: act must be 'relu', 'swish' or None, got {act!r}")
    return table[act]


def channel_shuffle(x, groups):
    """Interleave the channels of ``groups`` equal groups: ``[N, g*c, H, W]`` viewed as
    ``[N, g, c, H, W]``, transposed to ``[N, c, g, H, W]`` and flattened back."""
    batch_size, num_channels, height, width = x.shape[0:4]
    x = paddle.reshape(x, [batch_size, groups, num_channels // groups, height, width])
    x = paddle.transpose(x, perm=[0, 2, 1, 3, 4])
    return paddle.reshape(x, [batch_size, num_channels, height, width])


class InvertedResidual(nn.Layer):
    """Stride-1 unit: half the channels pass through, the other half go through
    1x1 -> 3x3 depthwise -> 1x1; then the halves are concatenated and shuffled."""

    def __init__(self, in_channels, out_channels, stride, activation_layer=_DEFAULT):
        super().__init__()
        half = out_channels // 2
        self._conv_pw = ConvNormActivation(in_channels // 2, half, 1, 1, 0,
                                           activation_layer=activation_layer)
        self._conv_dw = ConvNormActivation(half, half, 3, stride, 1, groups=half,
                                           activation_layer=None)
        self._conv_linear = ConvNormActivation(half, half, 1, 1, 0,
                                               activation_layer=activation_layer)

    def forward(self, inputs):
        half = inputs.shape[1] // 2
        x1, x2 = paddle.split(inputs, num_or_sections=[half, half], axis=1)
        x2 = self._conv_linear(self._conv_dw(self._conv_pw(x2)))
        return channel_shuffle(paddle.concat([x1, x2], axis=1), 2)


class InvertedResidualDS(nn.Layer):
    """Downsampling unit: two strided branches over the whole input, concatenated and
    shuffled."""

    def __init__(self, in_channels, out_channels, stride, activation_layer=_DEFAULT):
        super().__init__()
        half = out_channels // 2
        self._conv_dw_1 = ConvNormActivation(in_channels, in_channels, 3, stride, 1,
                                             groups=in_channels, activation_layer=None)
        self._conv_linear_1 = ConvNormActivation(in_channels, half, 1, 1, 0,
                                                 activation_layer=activation_layer)
        self._conv_pw_2 = ConvNormActivation(in_channels, half, 1, 1, 0,
                                             activation_layer=activation_layer)
        self._conv_dw_2 = ConvNormActivation(half, half, 3, stride, 1, groups=half,
                                             activation_layer=None)
        self._conv_linear_2 = ConvNormActivation(half, half, 1, 1, 0,
                                                 activation_layer=activation_layer)

    def forward(self, inputs):
        x1 = self._conv_linear_1(self._conv_dw_1(inputs))
        x2 = self._conv_linear_2(self._conv_dw_2(self._conv_pw_2(inputs)))
        return channel_shuffle(paddle.concat([x1, x2], axis=1), 2)


class ShuffleNetV2(nn.Layer):
    """ShuffleNetV2 model from `"ShuffleNet V2: Practical Guidelines for Efficient CNN
    Architecture Design" <https://arxiv.org/pdf/1807.11164.pdf>`_.

    Args:
        scale (float, optional): width: 0.25, 0.33, 0.5, 1.0, 1.5 or 2.0. Default: 1.0.
        act (str, optional): 'relu' or 'swish'. Default: 'relu'.
        num_classes (int, optional): size of the last fc layer; when <= 0 there is none.
            Default: 1000.
        with_pool (bool, optional): global-average-pool before the fc layer. Default: True.

    Returns:
        nn.Layer: the network.

    Examples:
        >>> import paddle_hl as paddle
        >>> from paddle_hl.vision.models import ShuffleNetV2
        >>> ShuffleNetV2(scale=0.5)(paddle.rand([1, 3, 64, 64])).shape
        [1, 1000]
    """

    def __init__(self, scale: float = 1.0, act: str = "relu", num_classes: int = 1000,
                 with_pool: bool = True):
        super().__init__()
        if scale not in _WIDTHS:
            raise ValueError(f"ShuffleNetV2: scale must be one of {sorted(_WIDTHS)}, "
                             f"got {scale}")
        self.scale = scale
        self.num_classes = num_classes
        self.with_pool = with_pool
        activation_layer = create_activation_layer(act)
        widths = _WIDTHS[scale]
        self._conv1 = ConvNormActivation(3, widths[0], 3, 2, 1,
                                         activation_layer=activation_layer)
        self._max_pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        self._block_list = []
        for stage, repeats in enumerate(_STAGE_REPEATS):
            cin, cout = widths[stage], widths[stage + 1]
            for i in range(repeats):
                block = (InvertedResidualDS(cin, cout, 2, activation_layer) if i == 0
                         else InvertedResidual(cout, cout, 1, activation_layer))
                self._block_list.append(self.add_sublayer(f"{stage + 2}_{i + 1}", block))
        self._last_conv = ConvNormActivation(widths[-2], widths[-1], 1, 1, 0,
                                             activation_layer=activation_layer)
        if with_pool:
            self._pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self._out_c = widths[-1]
            self._fc = nn.Linear(widths[-1], num_classes)

    def forward(self, inputs):
        x = self._max_pool(self._conv1(inputs))
        for block in self._block_list:
            x = block(x)
        x = self._last_conv(x)
        if self.with_pool:
            x = self._pool2d_avg(x)
        if self.num_classes > 0:
            x = self._fc(paddle.flatten(x, start_axis=1, stop_axis=-1))
        return x


def _shufflenet_v2(arch, pretrained=False, **kwargs):
    return build_model(ShuffleNetV2, arch, pretrained, model_urls, **kwargs)


@register_model
def shufflenet_v2_x0_25(pretrained: bool = False, **kwargs) -> ShuffleNetV2:
    """ShuffleNetV2 0.25x with relu: ``ShuffleNetV2(scale=0.25, act='relu')``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights. Default: False.
        **kwargs: passed to :class:`ShuffleNetV2` (``num_classes``, ``with_pool``).

    Returns:
        ShuffleNetV2: the model.

    Examples:
        >>> from paddle_hl.vision.models import shufflenet_v2_x0_25
        >>> model = shufflenet_v2_x0_25()
    """
    return _shufflenet_v2("shufflenet_v2_x0_25", pretrained=pretrained, scale=0.25, act="relu",
                          **kwargs)


@register_model
def shufflenet_v2_x0_33(pretrained: bool = False, **kwargs) -> ShuffleNetV2:
    """ShuffleNetV2 0.33x with relu: ``ShuffleNetV2(scale=0.33, act='relu')``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights. Default: False.
        **kwargs: passed to :class:`ShuffleNetV2` (``num_classes``, ``with_pool``).

    Returns:
        ShuffleNetV2: the model.

    Examples:
        >>> from paddle_hl.vision.models import shufflenet_v2_x0_33
        >>> model = shufflenet_v2_x0_33()
    """
    return _shufflenet_v2("shufflenet_v2_x0_33", pretrained=pretrained, scale=0.33, act="relu",
                          **kwargs)


@register_model
def shufflenet_v2_x0_5(pretrained: bool = False, **kwargs) -> ShuffleNetV2:
    """ShuffleNetV2 0.5x with relu: ``ShuffleNetV2(scale=0.5, act='relu')``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights. Default: False.
        **kwargs: passed to :class:`ShuffleNetV2` (``num_classes``, ``with_pool``).

    Returns:
        ShuffleNetV2: the model.

    Examples:
        >>> from paddle_hl.vision.models import shufflenet_v2_x0_5
        >>> model = shufflenet_v2_x0_5()
    """
    return _shufflenet_v2("shufflenet_v2_x0_5", pretrained=pretrained, scale=0.5, act="relu",
                          **kwargs)


@register_model
def shufflenet_v2_x1_0(pretrained: bool = False, **kwargs) -> ShuffleNetV2:
    """ShuffleNetV2 1.0x with relu: ``ShuffleNetV2(scale=1.0, act='relu')``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights. Default: False.
        **kwargs: passed to :class:`ShuffleNetV2` (``num_classes``, ``with_pool``).

    Returns:
        ShuffleNetV2: the model.

    Examples:
        >>> from paddle_hl.vision.models import shufflenet_v2_x1_0
        >>> model = shufflenet_v2_x1_0()
    """
    return _shufflenet_v2("shufflenet_v2_x1_0", pretrained=pretrained, scale=1.0, act="relu",
                          **kwargs)


@register_model
def shufflenet_v2_x1_5(pretrained: bool = False, **kwargs) -> ShuffleNetV2:
    """ShuffleNetV2 1.5x with relu: ``ShuffleNetV2(scale=1.5, act='relu')``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights. Default: False.
        **kwargs: passed to :class:`ShuffleNetV2` (``num_classes``, ``with_pool``).

    Returns:
        ShuffleNetV2: the model.

    Examples:
        >>> from paddle_hl.vision.models import shufflenet_v2_x1_5
        >>> model = shufflenet_v2_x1_5()
    """
    return _shufflenet_v2("shufflenet_v2_x1_5", pretrained=pretrained, scale=1.5, act="relu",
                          **kwargs)


@register_model
def shufflenet_v2_x2_0(pretrained: bool = False, **kwargs) -> ShuffleNetV2:
    """ShuffleNetV2 2.0x with relu: ``ShuffleNetV2(scale=2.0, act='relu')``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights. Default: False.
        **kwargs: passed to :class:`ShuffleNetV2` (``num_classes``, ``with_pool``).

    Returns:
        ShuffleNetV2: the model.

    Examples:
        >>> from paddle_hl.vision.models import shufflenet_v2_x2_0
        >>> model = shufflenet_v2_x2_0()
    """
    return _shufflenet_v2("shufflenet_v2_x2_0", pretrained=pretrained, scale=2.0, act="relu",
                          **kwargs)


@register_model
def shufflenet_v2_swish(pretrained: bool = False, **kwargs) -> ShuffleNetV2:
    """ShuffleNetV2 1.0x with swish: ``ShuffleNetV2(scale=1.0, act='swish')``.

    Args:
        pretrained (bool, optional): load Paddle's ImageNet weights. Default: False.
        **kwargs: passed to :class:`ShuffleNetV2` (``num_classes``, ``with_pool``).

    Returns:
        ShuffleNetV2: the model.

    Examples:
        >>> from paddle_hl.vision.models import shufflenet_v2_swish
        >>> model = shufflenet_v2_swish()
    """
    return _shufflenet_v2("shufflenet_v2_swish", pretrained=pretrained, scale=1.0, act="swish",
                          **kwargs)
