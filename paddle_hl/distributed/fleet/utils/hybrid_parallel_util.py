"""Gradient and parameter synchronisation for data-parallel training by hand (without the
DataParallel wrapper, or with ``no_sync`` gradient accumulation)."""

from __future__ import annotations

from ....framework.tensor import Tensor
from ... import collective as _coll
from ..._compat import sync_params_buffers  # noqa: F401  (also exported under this path)

__all__ = []


def _group_size(group):
    return group.nranks if group is not None else _coll.get_world_size()


def fused_allreduce_gradients_with_group(parameter_list, group, bucket_size=128 * 1024 * 1024,
                                         scale=None):
    """Average (or scale) the gradients of ``parameter_list`` across ``group``, in buckets.

    Gradients of one dtype are packed into flat buffers of about ``bucket_size`` bytes, summed
    with one all-reduce each, multiplied by ``scale`` (1 / the group's size by default, so the
    result is the mean) and written back.

    Args:
        parameter_list (list[Tensor]): parameters; those without a gradient are skipped.
        group (Group|None): the ranks (all by default).
        bucket_size (int): bytes per bucket.
        scale (float, optional): the factor applied after the sum.
    """
    n = _group_size(group)
    scale = 1.0 / n if scale is None else float(scale)
    params = [p for p in parameter_list if getattr(p, "_grad", None) is not None]
    if not params:
        return
    buckets, cur, size = [], [], 0
    for p in params:
        nbytes = p._grad._data.nbytes
        if cur and (size + nbytes > bucket_size or
                    p._grad._data.dtype != cur[0]._grad._data.dtype):
            buckets.append(cur)
            cur, size = [], 0
        cur.append(p)
        size += nbytes
    buckets.append(cur)
    from .... import backend

    for bucket in buckets:
        xp = backend.get_array_module(bucket[0]._grad._data)
        flat = xp.concatenate([p._grad._data.reshape(-1) for p in bucket])
        t = Tensor(flat)
        if n > 1:
            _coll.all_reduce(t, group=group)
        if scale != 1.0:
            t._data *= t._data.dtype.type(scale)
        off = 0
        for p in bucket:
            g = p._grad
            k = g._data.size
            g._data = t._data[off:off + k].reshape(g._data.shape).copy()
            g._ver.v += 1
            off += k


def fused_allreduce_gradients(parameter_list, hcg):
    """Average the gradients of ``parameter_list`` over the data-parallel group of ``hcg``
    (all ranks when ``hcg`` is None)."""
    group = hcg.get_data_parallel_group() if hcg is not None else None
    fused_allreduce_gradients_with_group(parameter_list, group)


def broadcast_dp_parameters(model, hcg):
    """Broadcast the model's parameters and buffers from the data-parallel group's first
    rank."""
    sync_params_buffers(model, hcg.get_data_parallel_group() if hcg is not None else None, 0)


def broadcast_sharding_parameters(model, hcg):
    """Broadcast the model's parameters and buffers from the sharding group's first rank."""
    sync_params_buffers(model, hcg.get_sharding_parallel_group() if hcg is not None else None,
                        0)
