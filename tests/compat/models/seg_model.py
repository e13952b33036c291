"""A small segmentation model in PaddleSeg's style: param_init helpers that call initializers
as ``init(param, param.block)``, SyncBatchNorm falling back to BatchNorm2D on CPU, a
ConvBNReLU block and bilinear upsampling back to the input size."""

import paddle
import paddle.nn as nn
import paddle.nn.functional as F


def constant_init(param, **kwargs):
    initializer = nn.initializer.Constant(**kwargs)
    initializer(param, param.block)


def normal_init(param, **kwargs):
    initializer = nn.initializer.Normal(**kwargs)
    initializer(param, param.block)


def kaiming_normal_init(param, **kwargs):
    initializer = nn.initializer.KaimingNormal(**kwargs)
    initializer(param, param.block)


def SyncBatchNorm(*args, **kwargs):
    if paddle.get_device() == "cpu":
        return nn.BatchNorm2D(*args, **kwargs)
    return nn.SyncBatchNorm(*args, **kwargs)


class ConvBNReLU(nn.Layer):
    def __init__(self, in_channels, out_channels, kernel_size, padding="same", **kwargs):
        super().__init__()
        self._conv = nn.Conv2D(in_channels, out_channels, kernel_size, padding=padding,
                               **kwargs)
        self._batch_norm = SyncBatchNorm(out_channels, data_format="NCHW")
        self._relu = nn.ReLU()

    def forward(self, x):
        return self._relu(self._batch_norm(self._conv(x)))


class TinySegNet(nn.Layer):
    def __init__(self, num_classes=3, in_channels=3, pretrained=None):
        super().__init__()
        self.stem = ConvBNReLU(in_channels, 8, 3, stride=2)
        self.mid = nn.Sequential(ConvBNReLU(8, 16, 3), ConvBNReLU(16, 16, 3, dilation=2,
                                                                  padding=2))
        self.cls = nn.Conv2D(16, num_classes, 1)
        self.pretrained = pretrained
        self.init_weight()

    def init_weight(self):
        for layer in self.sublayers():
            if isinstance(layer, nn.Conv2D):
                kaiming_normal_init(layer.weight)
                if layer.bias is not None:
                    constant_init(layer.bias, value=0.0)
            elif isinstance(layer, (nn.BatchNorm, nn.SyncBatchNorm, nn.BatchNorm2D)):
                constant_init(layer.weight, value=1.0)
                constant_init(layer.bias, value=0.0)

    def forward(self, x):
        size = paddle.shape(x)[2:]
        feat = self.mid(self.stem(x))
        logit = self.cls(feat)
        return [F.interpolate(logit, size, mode="bilinear", align_corners=False)]


def build():
    return TinySegNet()


def example_input():
    import numpy as np

    return np.random.default_rng(1).standard_normal([2, 3, 16, 16]).astype("float32")
