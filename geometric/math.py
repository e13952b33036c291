"""Segment reductions: rows of ``data`` grouped by sorted ``segment_ids``.

The output has ``max(segment_ids) + 1`` rows; ids that do not occur give rows of 0. Sorted ids
mean the grouping needs no sort: the sum is one sparse product whose CSR arrays are the counts'
prefix sums, and max/min use the padded degree buckets of ``_kernels``.
"""

from __future__ import annotations

import math

from paddle_hl.framework.engine import GRAD
from paddle_hl.framework.op import apply, op

from . import _checks as ck
from . import _kernels as K

__all__ = []  # the public names are exported by paddle_hl.geometric

_DATA_DTYPES = ("float16", "bfloat16", "float32", "float64", "int32", "int64")


def _flat(a):
    return a.reshape(a.shape[0], math.prod(a.shape[1:]))


def _segment_linear_grad(M, data, out, saved, g, ids, n, pool):
    # the adjoint of a segment sum gathers each row's segment gradient; a mean scales it by
    # the inverse counts first (a residual that depends on the ids only: a constant)
    (inv,) = saved
    if inv is not None:
        g = g * inv
    return (M.op(_take_rows, g, ids=ids, n=n),)


@op("segment_pool", saves=(), grad=_segment_linear_grad, residuals=True)
def _segment_linear(data, ids, n, pool):
    seg = K.Segments(ids, n, is_sorted=True)
    out = K.segment_sum(_flat(data), seg)
    inv = None
    if pool == "mean":
        out = K.divide_by_count(out, seg.count)
        inv = K.inverse_count(seg.count, out.dtype, data.ndim)
    return out.reshape((n,) + data.shape[1:]), GRAD.save(inv)


@op("segment_pool_grad", saves=(), grad=lambda M, g, out, gg, ids, n: (
    M.op(_segment_linear, gg, ids=ids, n=n, pool="sum"),))
def _take_rows(g, ids, n):
    """Row ``ids[e]`` of ``g`` for every e: the adjoint of the segment sum by sorted ``ids``
    (whose adjoint it is in turn)."""
    return g[ids], GRAD


def _segment_extreme_grad(M, data, out, saved, g, ids, n, pool):
    # residual: which rows equal their segment's result (a choice: a constant under
    # create_graph); each gets the segment's whole gradient
    (hit,) = saved
    return (M.op(_take_rows, g, ids=ids, n=n) * hit,)


@op("segment_pool", saves=(), grad=_segment_extreme_grad, residuals=True)
def _segment_extreme(data, ids, n, pool):
    seg = K.Segments(ids, n, is_sorted=True)
    flat = _flat(data)
    out = K.segment_extreme(flat, seg, pool)
    hit = (flat == out[ids]).reshape(data.shape)
    return out.reshape((n,) + data.shape[1:]), GRAD.save(hit)


def _segment(data, segment_ids, pool, op):
    data = ck.as_tensor(data, op, "data")
    ck.check_values(data, op, "data", _DATA_DTYPES)
    if data.ndim == 0:
        raise ValueError(f"{op}: 'data' must have at least one dim, got a 0-D tensor")
    ids = ck.index_array(segment_ids, op, "segment_ids")
    if ids.shape[0] != data.shape[0]:
        raise ValueError(f"{op}: 'segment_ids' must have one id per row of 'data': got "
                         f"{ids.shape[0]} ids for data of shape {data.shape}")
    n = 0
    if ids.size:
        lo = int(ids[0])
        if lo < 0:
            raise ck.GraphIndexError(f"{op}: 'segment_ids' must be non-negative, got {lo}")
        xp = K.xp_of(ids)
        step = ids[1:] < ids[:-1]
        if bool(step.any()):
            i = int(xp.flatnonzero(step)[0])
            raise ValueError(f"{op}: 'segment_ids' must be sorted in non-decreasing order, but "
                             f"segment_ids[{i}] = {int(ids[i])} > segment_ids[{i + 1}] = "
                             f"{int(ids[i + 1])}")
        n = int(ids[-1]) + 1
    kernel = _segment_linear if pool in ("sum", "mean") else _segment_extreme
    return apply(kernel, data, ids=ids, n=n, pool=pool)


def segment_sum(data, segment_ids, name=None):
    """Sum the rows of ``data`` that share a segment id.

    Args:
        data (Tensor): [N, ...], float16/bfloat16/float32/float64/int32/int64.
        segment_ids (Tensor): [N] int32 or int64, sorted, non-negative.
        name (str, optional): unused, for Paddle compatibility.

    Returns:
        Tensor: [max(segment_ids) + 1, ...]; ids that do not occur give rows of 0.

    Example:
        >>> data = paddle.to_tensor([[1., 2., 3.], [3., 2., 1.], [4., 5., 6.]])
        >>> paddle.geometric.segment_sum(data, paddle.to_tensor([0, 0, 1]))
        Tensor(shape=[2, 3], ... [[4., 4., 4.], [4., 5., 6.]])
    """
    return _segment(data, segment_ids, "sum", "segment_sum")


def segment_mean(data, segment_ids, name=None):
    """Average the rows of ``data`` that share a segment id (integers truncate toward zero).

    Args:
        data (Tensor): [N, ...].
        segment_ids (Tensor): [N] int32 or int64, sorted, non-negative.
        name (str, optional): unused, for Paddle compatibility.

    Returns:
        Tensor: [max(segment_ids) + 1, ...]; ids that do not occur give rows of 0.

    Example:
        >>> data = paddle.to_tensor([[1., 2., 3.], [3., 2., 1.], [4., 5., 6.]])
        >>> paddle.geometric.segment_mean(data, paddle.to_tensor([0, 0, 1]))
        Tensor(shape=[2, 3], ... [[2., 2., 2.], [4., 5., 6.]])
    """
    return _segment(data, segment_ids, "mean", "segment_mean")


def segment_max(data, segment_ids, name=None):
    """Element-wise maximum of the rows of ``data`` that share a segment id.

    The gradient goes, whole, to every row that equals its segment's maximum.

    Args:
        data (Tensor): [N, ...].
        segment_ids (Tensor): [N] int32 or int64, sorted, non-negative.
        name (str, optional): unused, for Paddle compatibility.

    Returns:
        Tensor: [max(segment_ids) + 1, ...]; ids that do not occur give rows of 0.

    Example:
        >>> data = paddle.to_tensor([[1., 2., 3.], [3., 2., 1.], [4., 5., 6.]])
        >>> paddle.geometric.segment_max(data, paddle.to_tensor([0, 0, 1]))
        Tensor(shape=[2, 3], ... [[3., 2., 3.], [4., 5., 6.]])
    """
    return _segment(data, segment_ids, "max", "segment_max")


def segment_min(data, segment_ids, name=None):
    """Element-wise minimum of the rows of ``data`` that share a segment id.

    The gradient goes, whole, to every row that equals its segment's minimum.

    Args:
        data (Tensor): [N, ...].
        segment_ids (Tensor): [N] int32 or int64, sorted, non-negative.
        name (str, optional): unused, for Paddle compatibility.

    Returns:
        Tensor: [max(segment_ids) + 1, ...]; ids that do not occur give rows of 0.

    Example:
        >>> data = paddle.to_tensor([[1., 2., 3.], [3., 2., 1.], [4., 5., 6.]])
        >>> paddle.geometric.segment_min(data, paddle.to_tensor([0, 0, 1]))
        Tensor(shape=[2, 3], ... [[1., 2., 1.], [4., 5., 6.]])
    """
    return _segment(data, segment_ids, "min", "segment_min")
