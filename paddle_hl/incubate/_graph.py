"""The incubate graph aliases: Paddle 2.6's incubate signatures over paddle_hl.geometric.

paddle_hl.geometric holds the implementations; these wrappers import it at call time and map
the older argument names (``pool_type``, ``flag_perm_buffer``, ...) onto it.
"""

from __future__ import annotations

import numpy as np

__all__ = []


def _geometric(fn_name, where):
    import importlib

    try:
        mod = importlib.import_module("paddle_hl.geometric")
    except ImportError as e:  # pragma: no cover - the geometric domain ships with paddle_hl
        raise ImportError(f"{where} needs paddle_hl.geometric, which failed to import: {e}") \
            from None
    fn = getattr(mod, fn_name, None)
    if fn is None:
        raise ImportError(f"{where} needs paddle_hl.geometric.{fn_name}, which this install "
                          "does not have")
    return fn


def segment_sum(data, segment_ids, name=None):
    """Sum of ``data`` rows per segment id (alias of ``paddle.geometric.segment_sum``)."""
    return _geometric("segment_sum", "incubate.segment_sum")(data, segment_ids)


def segment_mean(data, segment_ids, name=None):
    """Mean of ``data`` rows per segment id (alias of ``paddle.geometric.segment_mean``)."""
    return _geometric("segment_mean", "incubate.segment_mean")(data, segment_ids)


def segment_max(data, segment_ids, name=None):
    """Max of ``data`` rows per segment id (alias of ``paddle.geometric.segment_max``)."""
    return _geometric("segment_max", "incubate.segment_max")(data, segment_ids)


def segment_min(data, segment_ids, name=None):
    """Min of ``data`` rows per segment id (alias of ``paddle.geometric.segment_min``)."""
    return _geometric("segment_min", "incubate.segment_min")(data, segment_ids)


def graph_send_recv(x, src_index, dst_index, pool_type="sum", out_size=None, name=None):
    """Gather ``x[src_index]`` and reduce into ``dst_index`` with ``pool_type`` ('sum', 'mean',
    'max', 'min'); alias of ``paddle.geometric.send_u_recv``.

    Example:
        >>> out = paddle.incubate.graph_send_recv(x, src, dst, pool_type='sum')
    """
    pool = pool_type.lower() if isinstance(pool_type, str) else pool_type
    if pool not in ("sum", "mean", "max", "min"):
        raise ValueError(f"graph_send_recv: pool_type must be 'sum', 'mean', 'max' or 'min', "
                         f"got {pool_type!r}")
    return _geometric("send_u_recv", "incubate.graph_send_recv")(
        x, src_index, dst_index, reduce_op=pool, out_size=out_size)


def graph_sample_neighbors(row, colptr, input_nodes, eids=None, perm_buffer=None, sample_size=-1,
                           return_eids=False, flag_perm_buffer=False, name=None):
    """Sample up to ``sample_size`` neighbors of each input node of a CSC graph; alias of
    ``paddle.geometric.sample_neighbors``.

    Returns:
        tuple: ``(out_neighbors, out_count)``, plus ``out_eids`` with ``return_eids``.
    """
    if return_eids and eids is None:
        raise ValueError("graph_sample_neighbors: eids must be given when return_eids=True")
    if flag_perm_buffer and perm_buffer is None:
        raise ValueError("graph_sample_neighbors: perm_buffer must be given when "
                         "flag_perm_buffer=True")
    fn = _geometric("sample_neighbors", "incubate.graph_sample_neighbors")
    return fn(row, colptr, input_nodes, sample_size=sample_size, eids=eids,
              return_eids=return_eids, perm_buffer=perm_buffer if flag_perm_buffer else None)


def graph_reindex(x, neighbors, count, value_buffer=None, index_buffer=None,
                  flag_buffer_hashtable=False, name=None):
    """Renumber ``x`` and its sampled ``neighbors`` to 0..n-1; alias of
    ``paddle.geometric.reindex_graph``.

    Returns:
        tuple: ``(reindex_src, reindex_dst, out_nodes)``.
    """
    if flag_buffer_hashtable and (value_buffer is None or index_buffer is None):
        raise ValueError("graph_reindex: value_buffer and index_buffer must be given when "
                         "flag_buffer_hashtable=True")
    fn = _geometric("reindex_graph", "incubate.graph_reindex")
    if flag_buffer_hashtable:
        return fn(x, neighbors, count, value_buffer, index_buffer)
    return fn(x, neighbors, count)


def graph_khop_sampler(row, colptr, input_nodes, sample_sizes, sorted_eids=None,
                       return_eids=False, name=None):
    """Multi-hop neighbor sampling on a CSC graph, then renumbering.

    Hop h samples up to ``sample_sizes[h]`` neighbors of each node first reached in hop h-1
    (the input nodes for hop 0). Edges are listed hop by hop, node by node.

    Returns:
        tuple: ``(edge_src, edge_dst, sample_index, reindex_nodes)`` -- edges ``[E, 1]`` in
        the new numbering, the original ids of the numbered nodes (inputs first), the new ids
        of the input nodes -- plus ``edge_eids`` with ``return_eids``.

    Example:
        >>> src, dst, nodes, idx = paddle.incubate.graph_khop_sampler(row, colptr, seeds, [5, 5])
    """
    from ..framework.tensor import Tensor

    if not isinstance(sample_sizes, (list, tuple)) or not sample_sizes:
        raise ValueError(f"graph_khop_sampler: sample_sizes must be a non-empty list, got "
                         f"{sample_sizes!r}")
    if return_eids and sorted_eids is None:
        raise ValueError("graph_khop_sampler: sorted_eids must be given when return_eids=True")
    sample = _geometric("sample_neighbors", "incubate.graph_khop_sampler")
    seeds = np.asarray(input_nodes.numpy()).reshape(-1)
    order = {}
    for n in seeds.tolist():
        order.setdefault(n, len(order))
    frontier = list(dict.fromkeys(seeds.tolist()))
    src, dst, eids = [], [], []
    for size in sample_sizes:
        if not frontier:
            break
        nodes = Tensor(np.asarray(frontier, dtype=seeds.dtype))
        res = sample(row, colptr, nodes, sample_size=size, eids=sorted_eids,
                     return_eids=return_eids)
        neigh, count = res[0].numpy().reshape(-1), res[1].numpy().reshape(-1)
        if return_eids:
            eids.extend(res[2].numpy().reshape(-1).tolist())
        new = []
        pos = 0
        for center, c in zip(frontier, count.tolist()):
            for nb in neigh[pos:pos + c].tolist():
                if nb not in order:
                    order[nb] = len(order)
                    new.append(nb)
                src.append(order[nb])
                dst.append(order[center])
            pos += c
        frontier = new
    idt = seeds.dtype
    out = (Tensor(np.asarray(src, idt).reshape(-1, 1)), Tensor(np.asarray(dst, idt).reshape(-1, 1)),
           Tensor(np.asarray(list(order), idt)),
           Tensor(np.asarray([order[n] for n in seeds.tolist()], idt)))
    if return_eids:
        return out + (Tensor(np.asarray(eids, idt).reshape(-1, 1)),)
    return out
