"""LeNet-5 for 1x28x28 inputs (MNIST)."""

from __future__ import annotations

import paddle_hl as paddle
from paddle_hl import nn

__all__ = []


class LeNet(nn.Layer):
    """LeNet model from `"Gradient-based learning applied to document recognition"
    <https://ieeexplore.ieee.org/document/726791>`_.

    Args:
        num_classes (int, optional): size of the last fc layer; when <= 0 there is no fc
            layer and the conv features are returned. Default: 10.

    Returns:
        nn.Layer: the network; ``forward`` maps ``[N, 1, 28, 28]`` to ``[N, num_classes]``.

    Examples:
        >>> import paddle_hl as paddle
        >>> from paddle_hl.vision.models import LeNet
        >>> LeNet()(paddle.rand([1, 1, 28, 28])).shape
        [1, 10]
    """

    def __init__(self, num_classes: int = 10):
        super().__init__()
        self.num_classes = num_classes
        self.features = nn.Sequential(
            nn.Conv2D(1, 6, 3, stride=1, padding=1), nn.ReLU(), nn.MaxPool2D(2, 2),
            nn.Conv2D(6, 16, 5, stride=1, padding=0), nn.ReLU(), nn.MaxPool2D(2, 2))
        if num_classes > 0:
            # Paddle's LeNet stacks the three fc layers with no activation between them.
            self.fc = nn.Sequential(nn.Linear(400, 120), nn.Linear(120, 84),
                                    nn.Linear(84, num_classes))

    def forward(self, inputs):
        x = self.features(inputs)
        if self.num_classes > 0:
            x = self.fc(paddle.flatten(x, 1))
        return x
