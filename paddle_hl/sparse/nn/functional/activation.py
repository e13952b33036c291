"""Sparse activations: elementwise ones on the stored values, softmax over stored entries."""

from __future__ import annotations

import numpy as np

from paddle_hl import backend
from paddle_hl.framework.op import apply
from paddle_hl.nn import functional as F

from ..._tensor import flat_keys
from ...unary import coalesce, require_sparse

__all__ = []


def relu(x, name=None):
    """``max(x, 0)`` on the stored values (pattern and layout kept).

    Args:
        x (Tensor): a sparse COO or CSR tensor.
        name (str, optional): unused.

    Returns:
        Tensor: sparse, x's layout.

    Example:
        >>> y = paddle.sparse.nn.functional.relu(paddle.to_tensor([[0.0, -1.0]]).to_sparse_coo(2))
    """
    require_sparse(x, "nn.functional.relu")
    return x._with_values(F.relu(x._vt))


def relu6(x, name=None):
    """``min(max(x, 0), 6)`` on the stored values (pattern and layout kept).

    Args:
        x (Tensor): a sparse COO or CSR tensor.
        name (str, optional): unused.

    Returns:
        Tensor: sparse, x's layout.

    Example:
        >>> y = paddle.sparse.nn.functional.relu6(paddle.to_tensor([[0.0, 9.0]]).to_sparse_coo(2))
    """
    require_sparse(x, "nn.functional.relu6")
    return x._with_values(F.relu6(x._vt))


def leaky_relu(x, negative_slope=0.01, name=None):
    """Leaky ReLU on the stored values (pattern and layout kept).

    Args:
        x (Tensor): a sparse COO or CSR tensor.
        negative_slope (float): slope for negative values. Default 0.01.
        name (str, optional): unused.

    Returns:
        Tensor: sparse, x's layout.

    Example:
        >>> x = paddle.to_tensor([[0.0, -1.0]]).to_sparse_csr()
        >>> y = paddle.sparse.nn.functional.leaky_relu(x, 0.1)
    """
    require_sparse(x, "nn.functional.leaky_relu")
    return x._with_values(F.leaky_relu(x._vt, negative_slope))


def _segments(v, seg, starts, op):
    """Per-segment max / sum over sorted segments (reduceat on NumPy, scatter on CuPy)."""
    if not v.shape[0]:
        return v
    xp = backend.get_array_module(v)
    if xp is np:
        return (np.maximum if op == "max" else np.add).reduceat(v, starts)
    # scatter the rows into their segments (atomic updates on the GPU)
    out = xp.full((starts.shape[0],) + v.shape[1:], -np.inf if op == "max" else 0,
                  dtype=v.dtype)
    backend.index_reduce("maximum" if op == "max" else "add", out, seg, v)
    return out


def _segment_softmax_kernel(v, seg, starts):
    # seg: sorted segment id per entry; starts: first entry of each non-empty segment
    xp = backend.get_array_module(v)
    mx = _segments(v, seg, starts, "max")
    e = xp.exp(v - mx[seg]) if v.shape[0] else v
    s = _segments(e, seg, starts, "sum")
    out = e / s[seg] if v.shape[0] else v

    def bw(g):
        dot = _segments(g * out, seg, starts, "sum")
        return (out * (g - dot[seg]) if g.shape[0] else g), None, None

    return out, bw


def softmax(x, axis=-1, name=None):
    """Softmax over the stored entries of each row (the last axis); absent entries count as
    -inf, so each non-empty row of the result sums to one.

    Args:
        x (Tensor): a sparse CSR tensor, or a COO tensor (sparse in every dim, or with the
            softmax axis among its dense dims).
        axis (int): must be -1 (the last axis), as in Paddle.
        name (str, optional): unused.

    Returns:
        Tensor: sparse, x's layout and pattern.

    Example:
        >>> x = paddle.to_tensor([[0.0, 1.0, 2.0], [3.0, 0.0, 0.0]]).to_sparse_csr()
        >>> y = paddle.sparse.nn.functional.softmax(x)
    """
    require_sparse(x, "nn.functional.softmax")
    nd = len(x.shape)
    if int(axis) not in (-1, nd - 1):
        raise ValueError(f"paddle.sparse.nn.functional.softmax: only axis=-1 is supported (as in "
                         f"Paddle), got axis={axis} for a {nd}-D tensor")
    if x.is_sparse_coo():
        if x.sparse_dim() < nd:  # the last axis is dense: an ordinary softmax of the values
            return x._with_values(F.softmax(x._vt, axis=-1))
        x = coalesce(x)
    xp = backend.get_array_module(x._values)
    seg = flat_keys(x) // x.shape[-1]
    if seg.shape[0]:
        change = xp.concatenate([xp.ones(1, dtype=bool), seg[1:] != seg[:-1]])
        starts = xp.nonzero(change)[0]
        seg = xp.cumsum(change) - 1
    else:
        starts = seg
    return x._with_values(apply(_segment_softmax_kernel, x._vt, seg, starts))


