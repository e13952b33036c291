"""A ResNet in PaddleClas's style: ConvBNLayer with named ParamAttrs, the legacy BatchNorm with
moving-stat names, and the whole forward inside ``paddle.static.amp.fp16_guard``."""

import math

import paddle
import paddle.nn as nn
import paddle.nn.functional as F
from paddle import ParamAttr
from paddle.nn import AdaptiveAvgPool2D, BatchNorm, Conv2D, Linear, MaxPool2D
from paddle.nn.initializer import Uniform

NET_CONFIG = {"18": {"block_type": "BasicBlock", "block_depth": [2, 2, 2, 2],
                     "num_channels": [16, 16, 32, 64]}}


class ConvBNLayer(nn.Layer):
    def __init__(self, num_channels, num_filters, filter_size, stride=1, groups=1, act=None,
                 name=None):
        super().__init__()
        self._conv = Conv2D(in_channels=num_channels, out_channels=num_filters,
                            kernel_size=filter_size, stride=stride,
                            padding=(filter_size - 1) // 2, groups=groups,
                            weight_attr=ParamAttr(name=name + "_weights"), bias_attr=False)
        bn_name = "bn_" + name if name == "conv1" else "bn" + name[3:]
        self._batch_norm = BatchNorm(num_filters, act=act,
                                     param_attr=ParamAttr(name=bn_name + "_scale"),
                                     bias_attr=ParamAttr(bn_name + "_offset"),
                                     moving_mean_name=bn_name + "_mean",
                                     moving_variance_name=bn_name + "_variance")

    def forward(self, x):
        return self._batch_norm(self._conv(x))


class BasicBlock(nn.Layer):
    def __init__(self, num_channels, num_filters, stride, shortcut=True, name=None):
        super().__init__()
        self.conv0 = ConvBNLayer(num_channels, num_filters, 3, stride=stride, act="relu",
                                 name=name + "_branch2a")
        self.conv1 = ConvBNLayer(num_filters, num_filters, 3, act=None,
                                 name=name + "_branch2b")
        if not shortcut:
            self.short = ConvBNLayer(num_channels, num_filters, 1, stride=stride,
                                     name=name + "_branch1")
        self.shortcut = shortcut

    def forward(self, inputs):
        y = self.conv1(self.conv0(inputs))
        short = inputs if self.shortcut else self.short(inputs)
        y = paddle.add(x=short, y=y)
        return F.relu(y)


class ResNet(nn.Layer):
    def __init__(self, layers=18, class_num=10):
        super().__init__()
        cfg = NET_CONFIG[str(layers)]
        depth, chans = cfg["block_depth"], cfg["num_channels"]
        self.conv = ConvBNLayer(3, chans[0], 3, stride=1, act="relu", name="conv1")
        self.pool2d_max = MaxPool2D(kernel_size=3, stride=2, padding=1)
        self.block_list = []
        in_ch = chans[0]
        for block in range(len(depth)):
            shortcut = False
            for i in range(depth[block]):
                conv_name = "res" + str(block + 2) + chr(97 + i)
                basic_block = self.add_sublayer(
                    conv_name,
                    BasicBlock(num_channels=in_ch if i == 0 else chans[block],
                               num_filters=chans[block],
                               stride=2 if i == 0 and block != 0 else 1,
                               shortcut=shortcut, name=conv_name))
                self.block_list.append(basic_block)
                shortcut = True
            in_ch = chans[block]
        self.pool2d_avg = AdaptiveAvgPool2D(1)
        stdv = 1.0 / math.sqrt(in_ch * 1.0)
        self.out = Linear(in_ch, class_num, weight_attr=ParamAttr(
            initializer=Uniform(-stdv, stdv), name="fc_0.w_0"), bias_attr=ParamAttr(
                name="fc_0.b_0"))

    def forward(self, inputs):
        with paddle.static.amp.fp16_guard():
            y = self.pool2d_max(self.conv(inputs))
            for block in self.block_list:
                y = block(y)
            y = self.pool2d_avg(y)
            y = paddle.reshape(y, shape=[-1, y.shape[1]])
            return self.out(y)


def build():
    return ResNet(18, class_num=10)


def example_input():
    import numpy as np

    return np.random.default_rng(0).standard_normal([2, 3, 32, 32]).astype("float32")
