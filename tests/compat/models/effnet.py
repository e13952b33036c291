"""EfficientNet-style blocks as PaddleClas writes them: sublayers registered under dotted
names (``'_blocks.0.'``), swish, depthwise convolutions and squeeze-excitation."""

import paddle
import paddle.nn as nn
import paddle.nn.functional as F


class ConvBNLayer(nn.Layer):
    def __init__(self, in_c, out_c, k, stride=1, groups=1, act="swish", name=""):
        super().__init__()
        self.conv = nn.Conv2D(in_c, out_c, k, stride=stride, padding=k // 2, groups=groups,
                              bias_attr=False)
        self.bn = nn.BatchNorm2D(out_c, momentum=0.99, epsilon=1e-3)
        self.act = act

    def forward(self, x):
        y = self.bn(self.conv(x))
        return F.swish(y) if self.act == "swish" else y


class SEBlock(nn.Layer):
    def __init__(self, c, r):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2D(1)
        self.reduce = nn.Conv2D(c, r, 1)
        self.expand = nn.Conv2D(r, c, 1)

    def forward(self, x):
        s = F.sigmoid(self.expand(F.swish(self.reduce(self.pool(x)))))
        return paddle.multiply(x, s)


class MbConvBlock(nn.Layer):
    def __init__(self, in_c, out_c, expand, stride):
        super().__init__()
        mid = in_c * expand
        self.expand_conv = ConvBNLayer(in_c, mid, 1) if expand != 1 else None
        self.dw = ConvBNLayer(mid, mid, 3, stride=stride, groups=mid)
        self.se = SEBlock(mid, max(1, in_c // 4))
        self.project = ConvBNLayer(mid, out_c, 1, act=None)
        self.skip = stride == 1 and in_c == out_c

    def forward(self, inputs):
        x = inputs if self.expand_conv is None else self.expand_conv(inputs)
        x = self.project(self.se(self.dw(x)))
        return paddle.add(x, inputs) if self.skip else x


class EfficientNetTiny(nn.Layer):
    def __init__(self, class_num=5):
        super().__init__()
        self.stem = ConvBNLayer(3, 8, 3, stride=2)
        self._blocks = []
        cfg = [(8, 8, 1, 1), (8, 16, 4, 2), (16, 16, 4, 1)]
        for idx, (i, o, e, s) in enumerate(cfg):
            block = self.add_sublayer("_blocks." + str(idx) + ".", MbConvBlock(i, o, e, s))
            self._blocks.append(block)
        self.pool = nn.AdaptiveAvgPool2D(1)
        self.fc = nn.Linear(16, class_num)

    def forward(self, x):
        x = self.stem(x)
        for block in self._blocks:
            x = block(x)
        return self.fc(paddle.flatten(self.pool(x), start_axis=1))


def build():
    return EfficientNetTiny()


def example_input():
    import numpy as np

    return np.random.default_rng(2).standard_normal([2, 3, 16, 16]).astype("float32")
