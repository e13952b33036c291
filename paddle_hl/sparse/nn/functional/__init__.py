"""Sparse functional ops (``paddle.sparse.nn.functional``)."""

from .activation import leaky_relu, relu, relu6, softmax
from .conv import conv2d, conv3d, subm_conv2d, subm_conv3d
from .pooling import max_pool3d
from .transformer import attention

__all__ = ["attention", "conv2d", "conv3d", "leaky_relu", "max_pool3d", "relu", "relu6",
           "softmax", "subm_conv2d", "subm_conv3d"]
