"""Renumber a sampled subgraph: the input nodes keep ids 0..len(x)-1, every other node gets the
next id in order of first appearance among the neighbours.

When the ids are small enough (at most a few times the number of ids involved, or 2**22), the
mapping is a dense lookup table: two scatters and a gather, no sort. Otherwise it falls back to
``unique`` (a sort). Both give the same result.
"""

from __future__ import annotations

import numpy as np

from paddle_hl.backend import tuning
from paddle_hl.framework.op import apply, op

from . import _checks as ck
from . import _kernels as K

__all__ = []  # the public names are exported by paddle_hl.geometric

_DENSE_LIMIT = tuning.value("geometric.dense_limit")


def _table_ids(xp, x, nbrs):
    """(id of each neighbour, id of each input node, new nodes) through a dense table."""
    top = int(max(int(x.max()) if x.size else 0, int(nbrs.max()) if nbrs.size else 0)) + 1
    table = xp.full(top, -1, dtype=np.int64)
    table[x] = xp.arange(x.shape[0])  # a repeated input node keeps its last position
    cand = nbrs[table[nbrs] < 0]
    first = xp.empty(top, dtype=np.int64)
    # written back to front, each value keeps the position of its first occurrence
    first[cand[::-1]] = xp.arange(cand.shape[0] - 1, -1, -1)
    new = cand[first[cand] == xp.arange(cand.shape[0])]
    table[new] = x.shape[0] + xp.arange(new.shape[0])
    return table[nbrs], table[x], new


def _unique_ids(xp, x, nbrs):
    """The same mapping through ``unique`` (for ids too large for a table)."""
    allv = xp.concatenate([x, nbrs])
    u, first, inv = xp.unique(allv, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    ids = xp.full(u.shape[0], -1, dtype=np.int64)
    ids[inv[:x.shape[0]]] = xp.arange(x.shape[0])
    fresh = xp.flatnonzero(ids < 0)
    fresh = fresh[K.argsort_stable(first[fresh])]
    ids[fresh] = x.shape[0] + xp.arange(fresh.shape[0])
    return ids[inv[x.shape[0]:]], ids[inv[:x.shape[0]]], u[fresh]


def _reindex(x, neighbors, counts, op):
    """Raw-array reindexing of one or several neighbour lists against the same input nodes."""
    xp = K.xp_of(x)
    nbrs = neighbors[0] if len(neighbors) == 1 else xp.concatenate(neighbors)
    n_ids = x.shape[0] + nbrs.shape[0]
    top = max(int(x.max()) if x.size else 0, int(nbrs.max()) if nbrs.size else 0)
    if top < max(_DENSE_LIMIT, 4 * n_ids):
        src, x_ids, new = _table_ids(xp, x, nbrs)
    else:
        src, x_ids, new = _unique_ids(xp, x, nbrs)
    dst = [xp.repeat(x_ids, c.astype(np.int64)) for c in counts]
    dst = dst[0] if len(dst) == 1 else xp.concatenate(dst)
    out_nodes = xp.concatenate([x, new.astype(x.dtype)])
    return src.astype(x.dtype), dst.astype(x.dtype), out_nodes


def _check_one(x, nb, cnt, op, suffix=""):
    if nb.dtype != x.dtype:
        raise ck.GraphDtypeError(f"{op}: 'neighbors{suffix}' must have x's dtype "
                                 f"({x.dtype.name}), got {nb.dtype.name}")
    if cnt.shape[0] != x.shape[0]:
        raise ValueError(f"{op}: 'count{suffix}' must have one entry per node of 'x' "
                         f"({x.shape[0]}), got {cnt.shape[0]}")
    if cnt.size and int(cnt.min()) < 0:
        raise ValueError(f"{op}: 'count{suffix}' must be non-negative, got {int(cnt.min())}")
    total = int(cnt.sum()) if cnt.size else 0
    if total != nb.shape[0]:
        raise ValueError(f"{op}: the counts must add up to the number of neighbors: "
                         f"sum(count{suffix}) = {total} but 'neighbors{suffix}' has "
                         f"{nb.shape[0]} entries")
    if nb.size and int(nb.min()) < 0:
        raise ck.GraphIndexError(f"{op}: 'neighbors{suffix}' must hold non-negative node ids, "
                                 f"got {int(nb.min())}")


def _check_x(x, op):
    xa = ck.index_array(x, op, "x", allow_column=False)
    if xa.size and int(xa.min()) < 0:
        raise ck.GraphIndexError(f"{op}: 'x' must hold non-negative node ids, got "
                                 f"{int(xa.min())}")
    return xa


def _check_buffers(value_buffer, index_buffer, op):
    # Paddle's GPU hash-table buffers: the table here is built per call, so they are only
    # checked for type
    for arg, buf in (("value_buffer", value_buffer), ("index_buffer", index_buffer)):
        if buf is not None:
            ck.index_array(buf, op, arg, allow_column=False)


def _outputs(*arrays):
    return apply(_identity3, *arrays)


@op("graph_reindex")
def _identity3(a, b, c):
    return (a, b, c), None


def reindex_graph(x, neighbors, count, value_buffer=None, index_buffer=None, name=None):
    """Renumber a sampled subgraph so that its nodes are 0..K-1, the input nodes first.

    Args:
        x (Tensor): [M] int32/int64, the input (center) nodes.
        neighbors (Tensor): [E] neighbours of the input nodes, of x's dtype, grouped by node.
        count (Tensor): [M] int32 (int64 accepted), the number of neighbours of each input node.
        value_buffer (Tensor, optional): Paddle's GPU hash-table buffer; not needed, ignored.
        index_buffer (Tensor, optional): Paddle's GPU hash-table buffer; not needed, ignored.
        name (str, optional): unused, for Paddle compatibility.

    Returns:
        tuple: ``(reindex_src [E], reindex_dst [E], out_nodes [K])`` of x's dtype: the local
        id of each neighbour, the local id of its center node, and the original id of each
        local node (``x`` first, then new nodes in order of first appearance).

    Example:
        >>> x = paddle.to_tensor([0, 1, 2])
        >>> neighbors = paddle.to_tensor([8, 9, 0, 4, 7, 6, 7])
        >>> count = paddle.to_tensor([2, 3, 2], dtype="int32")
        >>> src, dst, nodes = paddle.geometric.reindex_graph(x, neighbors, count)
        >>> src.tolist(), dst.tolist(), nodes.tolist()
        ([3, 4, 0, 5, 6, 7, 6], [0, 0, 1, 1, 1, 2, 2], [0, 1, 2, 8, 9, 4, 7, 6])
    """
    op = "reindex_graph"
    xa = _check_x(x, op)
    nb = ck.index_array(neighbors, op, "neighbors", allow_column=False)
    cnt = ck.index_array(count, op, "count", allow_column=False)
    _check_one(xa, nb, cnt, op)
    _check_buffers(value_buffer, index_buffer, op)
    return _outputs(*_reindex(xa, [nb], [cnt], op))


def reindex_heter_graph(x, neighbors, count, value_buffer=None, index_buffer=None, name=None):
    """:func:`reindex_graph` for several edge types sharing the same input nodes.

    The new nodes are numbered in order of first appearance across the neighbour lists, taken
    in list order; the edges of all types are concatenated.

    Args:
        x (Tensor): [M] int32/int64, the input nodes.
        neighbors (list[Tensor]): one neighbour tensor per edge type, of x's dtype.
        count (list[Tensor]): one [M] int32 count tensor per edge type.
        value_buffer (Tensor, optional): Paddle's GPU hash-table buffer; ignored.
        index_buffer (Tensor, optional): Paddle's GPU hash-table buffer; ignored.
        name (str, optional): unused, for Paddle compatibility.

    Returns:
        tuple: ``(reindex_src, reindex_dst, out_nodes)`` as in :func:`reindex_graph`.

    Example:
        >>> a = paddle.to_tensor([8, 9, 0, 4, 7, 6, 7]); ca = paddle.to_tensor([2, 3, 2], "int32")
        >>> b = paddle.to_tensor([0, 2, 3, 5, 1]); cb = paddle.to_tensor([1, 3, 1], "int32")
        >>> src, dst, nodes = paddle.geometric.reindex_heter_graph(x, [a, b], [ca, cb])
    """
    op = "reindex_heter_graph"
    xa = _check_x(x, op)
    if not isinstance(neighbors, (list, tuple)) or not isinstance(count, (list, tuple)):
        raise TypeError(f"{op}: 'neighbors' and 'count' must be lists of Tensors (one per edge "
                        f"type), got {type(neighbors).__name__} and {type(count).__name__}")
    if len(neighbors) != len(count) or not neighbors:
        raise ValueError(f"{op}: 'neighbors' and 'count' must be non-empty lists of the same "
                         f"length, got {len(neighbors)} and {len(count)}")
    nbs, cnts = [], []
    for i, (n, c) in enumerate(zip(neighbors, count)):
        nb = ck.index_array(n, op, f"neighbors[{i}]", allow_column=False)
        cnt = ck.index_array(c, op, f"count[{i}]", allow_column=False)
        _check_one(xa, nb, cnt, op, f"[{i}]")
        nbs.append(nb)
        cnts.append(cnt)
    _check_buffers(value_buffer, index_buffer, op)
    return _outputs(*_reindex(xa, nbs, cnts, op))
