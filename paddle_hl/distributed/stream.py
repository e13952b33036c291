"""paddle.distributed.stream: the collectives with Paddle's stream arguments.

``use_calc_stream`` asks Paddle to run the collective on the computation stream; paddle_hl's
collectives already order themselves after the kernels that produced their inputs, so the
argument is accepted and the result is the same as :mod:`paddle_hl.distributed`'s.
"""

from __future__ import annotations

from . import collective as _coll

__all__ = []


def _split(tensor, n, where):
    if tensor.shape[0] % n:
        raise ValueError(f"paddle.distributed.stream.{where}: the input's first dimension "
                         f"({tensor.shape[0]}) must be divisible by the group's size ({n})")
    return [tensor[i * (tensor.shape[0] // n):(i + 1) * (tensor.shape[0] // n)]
            for i in range(n)]


def reduce_scatter(tensor, tensor_or_tensor_list, op=_coll.ReduceOp.SUM, group=None,
                   sync_op=True, use_calc_stream=False):
    """Reduce across ranks and give rank i the i-th part.

    Args:
        tensor (Tensor): the output (one part).
        tensor_or_tensor_list (Tensor|list[Tensor]): the input: one tensor per rank, or one
            tensor split along dim 0 into as many parts as ranks.
        op (ReduceOp): the reduction (SUM by default).
        group (Group, optional): the ranks (all by default).
        sync_op (bool): wait for the result.
        use_calc_stream (bool): accepted; see the module doc.
    """
    parts = tensor_or_tensor_list
    if not isinstance(parts, (list, tuple)):
        n = group.nranks if group is not None else _coll.get_world_size()
        parts = [p.clone() for p in _split(parts, n, "reduce_scatter")]
    return _coll.reduce_scatter(tensor, list(parts), op=op, group=group, sync_op=sync_op)


def all_reduce(tensor, op=_coll.ReduceOp.SUM, group=None, sync_op=True, use_calc_stream=False):
    """In-place all-reduce of ``tensor`` (see :func:`paddle_hl.distributed.all_reduce`)."""
    return _coll.all_reduce(tensor, op=op, group=group, sync_op=sync_op)


def broadcast(tensor, src=0, group=None, sync_op=True, use_calc_stream=False):
    """In-place broadcast of ``tensor`` from ``src`` (see
    :func:`paddle_hl.distributed.broadcast`)."""
    return _coll.broadcast(tensor, src, group=group, sync_op=sync_op)
