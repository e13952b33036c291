"""paddle_hl.nn: layers, functional ops, initializers, clipping and utilities.

Layer families live in ``nn/layer/<family>.py`` and functional families in
``nn/functional/<family>.py``; their public names are imported here by name.
"""

from __future__ import annotations

import importlib as _importlib

from . import functional, loss
from .clip import (
    ClipGradByGlobalNorm,
    ClipGradByNorm,
    ClipGradByValue,
)
from .decode import BeamSearchDecoder, dynamic_decode
from .layer.activation import (
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Maxout,
    Mish,
    PReLU,
    ReLU,
    ReLU6,
    RReLU,
    Sigmoid,
    Silu,
    Softmax,
    Softmax2D,
    Softplus,
    Softshrink,
    Softsign,
    Swish,
    Tanh,
    Tanhshrink,
    ThresholdedReLU,
)
from .layer.common import (
    AlphaDropout,
    Bilinear,
    Dropout,
    Dropout2D,
    Dropout3D,
    Embedding,
    Flatten,
    Identity,
    Linear,
    Pad1D,
    Pad2D,
    Pad3D,
    Unflatten,
    ZeroPad2D,
)
from .layer.container import LayerDict, LayerList, ParameterList, Sequential
from .layer.conv import (
    Conv1D,
    Conv1DTranspose,
    Conv2D,
    Conv2DTranspose,
    Conv3D,
    Conv3DTranspose,
    Fold,
    Unfold,
)
from .layer.distance import (
    CosineSimilarity,
    PairwiseDistance,
)
from .layer.layers import Layer
from .layer.norm import (
    BatchNorm,
    BatchNorm1D,
    BatchNorm2D,
    BatchNorm3D,
    GroupNorm,
    InstanceNorm1D,
    InstanceNorm2D,
    InstanceNorm3D,
    LayerNorm,
    LocalResponseNorm,
    SpectralNorm,
    SyncBatchNorm,
)
from .layer.pooling import (
    AdaptiveAvgPool1D,
    AdaptiveAvgPool2D,
    AdaptiveAvgPool3D,
    AdaptiveMaxPool1D,
    AdaptiveMaxPool2D,
    AdaptiveMaxPool3D,
    AvgPool1D,
    AvgPool2D,
    AvgPool3D,
    MaxPool1D,
    MaxPool2D,
    MaxPool3D,
    MaxUnPool1D,
    MaxUnPool2D,
    MaxUnPool3D,
)
from .layer.rnn import (
    GRU,
    LSTM,
    RNN,
    BiRNN,
    GRUCell,
    LSTMCell,
    RNNCellBase,
    SimpleRNN,
    SimpleRNNCell,
)
from .layer.transformer import (
    MultiHeadAttention,
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
from .layer.vision import (
    ChannelShuffle,
    PixelShuffle,
    PixelUnshuffle,
    Upsample,
    UpsamplingBilinear2D,
    UpsamplingNearest2D,
)
from .loss import *  # noqa: F403  (the loss layers, listed once in nn/loss.py)

__all__ = [
    "Identity", "Linear", "Bilinear", "Embedding", "Flatten", "Unflatten", "Dropout",
    "Dropout2D", "Dropout3D", "AlphaDropout", "Pad1D", "Pad2D", "Pad3D", "ZeroPad2D",
    "CosineSimilarity", "Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose",
    "Conv3DTranspose", "Unfold", "Fold", "MaxPool1D", "MaxPool2D", "MaxPool3D", "AvgPool1D",
    "AvgPool2D", "AvgPool3D", "AdaptiveAvgPool1D", "AdaptiveAvgPool2D", "AdaptiveAvgPool3D",
    "AdaptiveMaxPool1D", "AdaptiveMaxPool2D", "AdaptiveMaxPool3D", "MaxUnPool1D",
    "MaxUnPool2D", "MaxUnPool3D", "BatchNorm", "BatchNorm1D", "BatchNorm2D", "BatchNorm3D",
    "SyncBatchNorm", "LayerNorm", "GroupNorm", "InstanceNorm1D", "InstanceNorm2D",
    "InstanceNorm3D", "LocalResponseNorm", "SpectralNorm", "CELU", "ELU", "GELU", "GLU",
    "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh", "LeakyReLU", "LogSigmoid",
    "LogSoftmax", "Maxout", "Mish", "PReLU", "RReLU", "ReLU", "ReLU6", "SELU", "Sigmoid",
    "Silu", "Softmax", "Softmax2D", "Softplus", "Softshrink", "Softsign", "Swish", "Tanh",
    "Tanhshrink", "ThresholdedReLU", "RNNCellBase", "SimpleRNNCell", "LSTMCell", "GRUCell",
    "RNN", "BiRNN", "SimpleRNN", "LSTM", "GRU", "MultiHeadAttention",
    "TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer",
    "TransformerDecoder", "Transformer", "PairwiseDistance", "Upsample", "UpsamplingNearest2D",
    "UpsamplingBilinear2D", "PixelShuffle", "PixelUnshuffle", "ChannelShuffle",
    "ClipGradByGlobalNorm", "ClipGradByNorm", "ClipGradByValue", "BeamSearchDecoder",
    "dynamic_decode", "Layer", "LayerDict", "LayerList", "ParameterList", "Sequential",
    *loss.__all__,
]


def __getattr__(name):
    # the submodules Paddle code reaches through paddle.nn, loaded on first use
    if name in ("initializer", "utils"):
        mod = _importlib.import_module(f"{__name__}.{name}")
        globals()[name] = mod
        return mod
    raise AttributeError(f"module 'paddle_hl.nn' has no attribute '{name}'")
