"""Distance layers: CosineSimilarity and PairwiseDistance."""

from __future__ import annotations

from ..functional.distance import pairwise_distance
from .layers import Layer

__all__ = []


class CosineSimilarity(Layer):
    """Cosine similarity of ``x1`` and ``x2`` along ``axis``.

    Args:
        axis (int): the axis the similarity is computed over (default 1).
        eps (float): lower bound of the norms, avoiding a division by zero.

    Example:
        >>> cos = paddle.nn.CosineSimilarity(axis=0)
        >>> cos(paddle.to_tensor([1., 0.]), paddle.to_tensor([1., 1.]))   # 0.7071
    """

    def __init__(self, axis=1, eps=1e-8):
        super().__init__()
        self._axis = axis
        self._eps = eps

    def forward(self, x1, x2):
        # the functional form belongs to the common family
        from ..functional.common import cosine_similarity  # noqa: PLC0415

        return cosine_similarity(x1, x2, axis=self._axis, eps=self._eps)

    def extra_repr(self):
        return f"axis={self._axis}, eps={self._eps}"


class PairwiseDistance(Layer):
    """The p-norm distance ``||x - y + epsilon||_p`` along the last axis.

    Args:
        p (float): the norm degree.
        epsilon (float): added to the difference.
        keepdim (bool): keep the reduced dim.

    Example:
        >>> dist = paddle.nn.PairwiseDistance()
        >>> dist(paddle.to_tensor([[1., 3.]]), paddle.to_tensor([[5., 6.]]))   # [4.9999986]
    """

    def __init__(self, p=2.0, epsilon=1e-6, keepdim=False, name=None):
        super().__init__()
        self.p = p
        self.epsilon = epsilon
        self.keepdim = keepdim
        self.name = name

    def forward(self, x, y):
        return pairwise_distance(x, y, self.p, self.epsilon, self.keepdim)

    def extra_repr(self):
        s = f"p={self.p}"
        if self.epsilon != 1e-6:
            s += f", epsilon={self.epsilon}"
        if self.keepdim is not False:
            s += f", keepdim={self.keepdim}"
        if self.name is not None:
            s += f", name={self.name}"
        return s
