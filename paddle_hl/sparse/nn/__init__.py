"""Sparse layers (``paddle.sparse.nn``)."""

from . import functional  # noqa: F401
from .layers import (
                     BatchNorm,
                     Conv2D,
                     Conv3D,
                     LeakyReLU,
                     MaxPool3D,
                     ReLU,
                     ReLU6,
                     Softmax,
                     SubmConv2D,
                     SubmConv3D,
                     SyncBatchNorm,
)

__all__ = ["BatchNorm", "Conv2D", "Conv3D", "LeakyReLU", "MaxPool3D", "ReLU", "ReLU6", "Softmax",
           "SubmConv2D", "SubmConv3D", "SyncBatchNorm"]
