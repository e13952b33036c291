"""paddle_hl.incubate: the incubating names model suites use in dygraph.

- :mod:`~paddle_hl.incubate.nn`: fused layers and ops (FusedLinear, FusedMultiHeadAttention,
  FusedFeedForward, FusedTransformerEncoderLayer, fused_rms_norm, rotary embedding, ...);
- :mod:`~paddle_hl.incubate.autograd`: jvp, vjp, Jacobian, Hessian of a function;
- :mod:`~paddle_hl.incubate.optimizer`: LookAhead, ModelAverage;
- ``softmax_mask_fuse``, ``softmax_mask_fuse_upper_triangle``, ``identity_loss``;
- ``segment_*`` and ``graph_*``: Paddle's incubate graph names over paddle_hl.geometric.
"""

from __future__ import annotations

import paddle_hl as _T

from . import autograd, nn, optimizer  # noqa: F401
from ._graph import (
    graph_khop_sampler,
    graph_reindex,
    graph_sample_neighbors,
    graph_send_recv,
    segment_max,
    segment_mean,
    segment_min,
    segment_sum,
)
from .optimizer import LookAhead, ModelAverage

__all__ = ["LookAhead", "ModelAverage", "softmax_mask_fuse", "softmax_mask_fuse_upper_triangle",
           "segment_sum", "segment_mean", "segment_max", "segment_min", "graph_send_recv",
           "graph_khop_sampler", "graph_sample_neighbors", "graph_reindex", "identity_loss"]


def softmax_mask_fuse(x, mask, name=None):
    """``softmax(x + mask)`` over the last axis (Paddle fuses the add into the softmax).

    Args:
        x (Tensor): scores ``[batch, heads, seq_q, seq_k]`` (float16/float32/float64).
        mask (Tensor): additive mask ``[batch, 1, seq_q, seq_k]`` (broadcast over heads).

    Returns:
        Tensor: probabilities shaped like x.

    Example:
        >>> p = paddle.incubate.softmax_mask_fuse(scores, mask)
    """
    if x.ndim != 4 or mask.ndim != 4:
        raise ValueError(f"softmax_mask_fuse: x and mask must be 4-D, got shapes {x.shape} and "
                         f"{mask.shape}")
    return _T.nn.functional.softmax(_T.add(x, mask), axis=-1)


def softmax_mask_fuse_upper_triangle(x):
    """Causal softmax: ``softmax`` over the last axis with the strict upper triangle of the last
    two dims masked out (position j > i gets probability 0).

    Args:
        x (Tensor): scores ``[batch, heads, seq, seq]``.

    Returns:
        Tensor: probabilities shaped like x.

    Example:
        >>> p = paddle.incubate.softmax_mask_fuse_upper_triangle(scores)
    """
    if x.ndim != 4 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"softmax_mask_fuse_upper_triangle: x must be [batch, heads, seq, seq], "
                         f"got shape {x.shape}")
    s = x.shape[-1]
    keep = _T.tril(_T.ones([s, s], "bool"))
    neg = _T.full([], float("-inf"), x.dtype)
    return _T.nn.functional.softmax(_T.where(keep, x, neg), axis=-1)


def identity_loss(x, reduction="none"):
    """Mark ``x`` as the loss (for IPU graphs) and reduce it: 'sum'/0, 'mean'/1 or 'none'/2.

    Example:
        >>> loss = paddle.incubate.identity_loss(per_sample, reduction='mean')
    """
    codes = {0: "sum", 1: "mean", 2: "none"}
    r = codes.get(reduction, reduction) if isinstance(reduction, int) else reduction
    if r not in ("sum", "mean", "none"):
        raise ValueError(f"identity_loss: reduction must be 'sum', 'mean', 'none' or 0/1/2, got "
                         f"{reduction!r}")
    if r == "sum":
        return _T.sum(x)
    if r == "mean":
        return _T.mean(x)
    return x


def __getattr__(name):
    # paddle.incubate.multiprocessing loads on first use (it registers pickling reducers)
    if name == "multiprocessing":
        import importlib

        mod = importlib.import_module(f"{__name__}.multiprocessing")
        globals()[name] = mod
        return mod
    raise AttributeError(f"module 'paddle_hl.incubate' has no attribute '{name}'")
