"""Neighbour sampling on a graph stored in CSC form (``row``, ``colptr``): the in-neighbours of
node v are ``row[colptr[v]:colptr[v + 1]]``.

All nodes are sampled at once with array operations; randomness comes from paddle_hl's global
generator, so ``paddle.seed`` makes a sampling run repeat. Sampled neighbours of a node are
returned in their CSC order.

Uniform sampling without replacement of k of a node's d neighbours (d > k):

- d <= 4k: every neighbour gets a random key and the k smallest keys win (one stable argsort
  over the neighbours of all such nodes);
- d > 4k: k positions are drawn with replacement and only the repeats are drawn again until none
  are left. Repeats are rare here (about k*k / 2d per node), so this ends in a few rounds and
  never touches the other d - k neighbours, which matters for hub nodes. The set drawn this
  way is uniform over all k-subsets, since the procedure treats every position alike.

Weighted sampling uses the A-Res keys ``u ** (1 / w)`` (the k largest win), which draws without
replacement with probabilities proportional to the weights.
"""

from __future__ import annotations

import numpy as np

from paddle_hl.framework import random as _random
from paddle_hl.framework.op import apply, op

from .. import _checks as ck
from .. import _kernels as K
from ..reindex import _reindex

__all__ = []  # the public names are exported by paddle_hl.geometric

_WEIGHT_DTYPES = ("float32", "float64")


def _wrap_outputs(*arrays):
    """Wrap raw arrays as Tensors (non-differentiable outputs, through the op wrapper)."""
    return apply(_identity, *arrays)


@op("graph_sampling")
def _identity(*arrays):
    return tuple(arrays) if len(arrays) > 1 else arrays[0], None


def _ranges(xp, starts, lens):
    """Concatenation of ``arange(s, s + l)`` for each (s, l), as one int64 array."""
    total = int(lens.sum()) if lens.size else 0
    if total == 0:
        return xp.zeros(0, dtype=np.int64)
    offs = xp.cumsum(lens) - lens
    return xp.repeat(starts - offs, lens) + xp.arange(total, dtype=np.int64)


def _topk_by_keys(xp, starts, deg, k, keys):
    """Per node, the positions of its ``k`` smallest ``keys`` (values in [0, 1]), in CSC order;
    [nodes, k].

    One stable argsort of ``2 * node + key`` orders the neighbours by node, then by key (the
    factor 2 keeps a key of exactly 1 inside its node's range); it is several times faster
    than a two-key lexsort, and ties keep the CSC order.
    """
    n = starts.shape[0]
    pos = _ranges(xp, starts, deg)
    seg = xp.repeat(xp.arange(n, dtype=np.float64), deg)
    order = K.argsort_stable(seg * 2.0 + keys)
    rank = xp.arange(pos.shape[0]) - xp.repeat(xp.cumsum(deg) - deg, deg)
    chosen = pos[order][rank < k].reshape(n, k)
    return xp.sort(chosen, axis=1)


def _uniform_positions(xp, gen, starts, deg, k):
    """k distinct positions per node, uniformly, for nodes with more than k neighbours."""
    out = xp.zeros((starts.shape[0], k), dtype=np.int64)
    dense = deg <= 4 * k
    if bool(dense.any()):
        s, d = starts[dense], deg[dense]
        keys = gen.random(int(d.sum()), dtype=np.float64)
        out[dense] = _topk_by_keys(xp, s, d, k, keys)
    sparse = ~dense
    if bool(sparse.any()):
        s, d = starts[sparse], deg[sparse][:, None]
        r = xp.floor(gen.random((s.shape[0], k), dtype=np.float64) * d).astype(np.int64)
        r.sort(axis=1)
        rep = xp.zeros(r.shape, dtype=bool)
        rep[:, 1:] = r[:, 1:] == r[:, :-1]
        while bool(rep.any()):
            dd = xp.broadcast_to(d, r.shape)[rep]
            r[rep] = xp.floor(gen.random(dd.shape[0], dtype=np.float64) * dd).astype(np.int64)
            r.sort(axis=1)
            rep[:, 1:] = r[:, 1:] == r[:, :-1]
        out[sparse] = s[:, None] + r
    return out


def _weighted_positions(xp, gen, starts, deg, k, weight):
    """k distinct positions per node drawn with probability proportional to ``weight``."""
    pos = _ranges(xp, starts, deg)
    w = weight[pos].astype(np.float64)
    u = gen.random(pos.shape[0], dtype=np.float64)
    with np.errstate(divide="ignore", over="ignore"):
        # A-Res: the largest u ** (1 / w) win; a zero weight gives 0 (chosen only if needed)
        keys = xp.where(w > 0, u ** (1.0 / xp.where(w > 0, w, 1.0)), 0.0)
    return _topk_by_keys(xp, starts, deg, k, 1.0 - keys)


def _sample(row, colptr, nodes, sample_size, eids, draw, op):
    xp = K.xp_of(row)
    starts = colptr[nodes].astype(np.int64)
    deg = colptr[nodes + 1].astype(np.int64) - starts
    if bool((deg < 0).any()):
        raise ValueError(f"{op}: 'colptr' must be non-decreasing")
    take = deg if sample_size < 0 else xp.minimum(deg, sample_size)
    offs = xp.cumsum(take) - take
    pos = xp.zeros(int(take.sum()) if take.size else 0, dtype=np.int64)
    whole = take == deg
    if bool(whole.any()):
        pos[_ranges(xp, offs[whole], deg[whole])] = _ranges(xp, starts[whole], deg[whole])
    part = ~whole
    if bool(part.any()):
        chosen = draw(starts[part], deg[part], sample_size)
        pos[_ranges(xp, offs[part], take[part])] = chosen.reshape(-1)
    neighbors = row[pos]
    count = take.astype(np.int32)
    picked = None if eids is None else eids[pos]
    return neighbors, count, picked


def _check_graph(row, colptr, input_nodes, eids, return_eids, sample_size, op,
                 eids_arg="eids"):
    row_a = ck.index_array(row, op, "row", allow_column=False)
    colptr_a = ck.index_array(colptr, op, "colptr", allow_column=False)
    nodes = ck.index_array(input_nodes, op, "input_nodes")
    if colptr_a.shape[0] < 1:
        raise ValueError(f"{op}: 'colptr' must hold at least one offset, got an empty tensor")
    n_nodes = colptr_a.shape[0] - 1
    ck.check_range(nodes, n_nodes, op, "input_nodes", "the graph (len(colptr) - 1 nodes)")
    if colptr_a.size and (int(colptr_a[0]) < 0 or int(colptr_a[-1]) > row_a.shape[0]):
        raise ValueError(f"{op}: 'colptr' must run from 0 to at most len(row) = "
                         f"{row_a.shape[0]}, got [{int(colptr_a[0])}, ..., "
                         f"{int(colptr_a[-1])}]")
    if isinstance(sample_size, bool) or not isinstance(sample_size, (int, np.integer)):
        raise TypeError(f"{op}: 'sample_size' must be an int, got {type(sample_size).__name__}")
    if sample_size < -1:
        raise ValueError(f"{op}: 'sample_size' must be -1 (all neighbours) or >= 0, got "
                         f"{sample_size}")
    eids_a = None
    if return_eids:
        if eids is None:
            raise ValueError(f"{op}: `{eids_arg}` should not be None if `return_eids` is True.")
        eids_a = ck.index_array(eids, op, eids_arg, allow_column=False)
        if eids_a.shape[0] != row_a.shape[0]:
            raise ValueError(f"{op}: '{eids_arg}' must have one id per edge (len(row) = "
                             f"{row_a.shape[0]}), got {eids_a.shape[0]}")
    return row_a, colptr_a, nodes, eids_a


def sample_neighbors(row, colptr, input_nodes, sample_size=-1, eids=None, return_eids=False,
                     perm_buffer=None, name=None):
    """Sample up to ``sample_size`` in-neighbours of each input node, uniformly without
    replacement.

    Nodes with at most ``sample_size`` neighbours keep them all; ``sample_size=-1`` keeps every
    neighbour. The random draws come from paddle_hl's generator (``paddle.seed`` repeats them).

    Args:
        row (Tensor): [E] int32/int64, the source node of each edge in CSC order.
        colptr (Tensor): [N + 1] int32/int64, node v's edges are ``colptr[v]:colptr[v + 1]``.
        input_nodes (Tensor): [M] int32/int64, the nodes to sample for.
        sample_size (int): neighbours per node; -1 for all.
        eids (Tensor, optional): [E] edge ids, needed when ``return_eids`` is True.
        return_eids (bool): also return the ids of the sampled edges.
        perm_buffer (Tensor, optional): Paddle's GPU permutation buffer; not needed here (the
            sampler keeps no state between calls) and ignored.
        name (str, optional): unused, for Paddle compatibility.

    Returns:
        tuple: ``(out_neighbors [K] of row's dtype, out_count [M] int32)``, plus
        ``out_eids [K]`` when ``return_eids``. Node i's samples are
        ``out_neighbors[sum(out_count[:i]):][:out_count[i]]``.

    Example:
        >>> row = paddle.to_tensor([3, 7, 0, 9, 1, 4, 2, 9, 3, 9, 1, 9, 7])
        >>> colptr = paddle.to_tensor([0, 2, 4, 5, 6, 7, 9, 11, 11, 13, 13])
        >>> nodes = paddle.to_tensor([0, 8, 1, 2])
        >>> neighbors, count = paddle.geometric.sample_neighbors(row, colptr, nodes, 2)
        >>> count.tolist()
        [2, 2, 2, 1]
    """
    op = "sample_neighbors"
    row_a, colptr_a, nodes, eids_a = _check_graph(row, colptr, input_nodes, eids, return_eids,
                                                  sample_size, op)
    if perm_buffer is not None:
        ck.index_array(perm_buffer, op, "perm_buffer", allow_column=False)
    gen = _random.generator_for(row_a)
    xp = K.xp_of(row_a)

    def draw(starts, deg, k):
        return _uniform_positions(xp, gen, starts, deg, k)

    nb, cnt, picked = _sample(row_a, colptr_a, nodes, int(sample_size), eids_a, draw, op)
    if return_eids:
        return _wrap_outputs(nb, cnt, picked)
    return _wrap_outputs(nb, cnt)


def weighted_sample_neighbors(row, colptr, edge_weight, input_nodes, sample_size=-1, eids=None,
                              return_eids=False, name=None):
    """Sample up to ``sample_size`` in-neighbours of each input node without replacement, with
    probability proportional to ``edge_weight``.

    Args:
        row (Tensor): [E] int32/int64, the source node of each edge in CSC order.
        colptr (Tensor): [N + 1] int32/int64 offsets into ``row``.
        edge_weight (Tensor): [E] float32/float64, non-negative weight of each edge.
        input_nodes (Tensor): [M] int32/int64, the nodes to sample for.
        sample_size (int): neighbours per node; -1 for all.
        eids (Tensor, optional): [E] edge ids, needed when ``return_eids`` is True.
        return_eids (bool): also return the ids of the sampled edges.
        name (str, optional): unused, for Paddle compatibility.

    Returns:
        tuple: ``(out_neighbors, out_count)`` and ``out_eids`` when ``return_eids``, as in
        :func:`sample_neighbors`.

    Example:
        >>> w = paddle.rand([13])
        >>> neighbors, count = paddle.geometric.weighted_sample_neighbors(row, colptr, w,
        ...                                                                nodes, 2)
    """
    op = "weighted_sample_neighbors"
    row_a, colptr_a, nodes, eids_a = _check_graph(row, colptr, input_nodes, eids, return_eids,
                                                  sample_size, op)
    w = ck.as_tensor(edge_weight, op, "edge_weight")
    ck.check_values(w, op, "edge_weight", _WEIGHT_DTYPES)
    w_a = w._data.reshape(-1) if w.ndim == 2 and w.shape[1] == 1 else w._data
    if w_a.ndim != 1 or w_a.shape[0] != row_a.shape[0]:
        raise ValueError(f"{op}: 'edge_weight' must be [E] with E = len(row) = "
                         f"{row_a.shape[0]}, got shape {list(w_a.shape)}")
    if w_a.size and bool((w_a < 0).any()):
        raise ValueError(f"{op}: 'edge_weight' must be non-negative")
    gen = _random.generator_for(row_a)
    xp = K.xp_of(row_a)

    def draw(starts, deg, k):
        return _weighted_positions(xp, gen, starts, deg, k, w_a)

    nb, cnt, picked = _sample(row_a, colptr_a, nodes, int(sample_size), eids_a, draw, op)
    if return_eids:
        return _wrap_outputs(nb, cnt, picked)
    return _wrap_outputs(nb, cnt)


def graph_khop_sampler(row, colptr, input_nodes, sample_sizes, sorted_eids=None,
                       return_eids=False, name=None):
    """Multi-hop neighbour sampling with reindexing, the ``paddle.incubate`` graph sampler.

    Hop h samples ``sample_sizes[h]`` neighbours of the nodes first reached at hop h - 1 (the
    input nodes for the first hop, then those nodes in ascending id order, as Paddle orders
    them), and all edges are renumbered into the sampled subgraph.

    Args:
        row (Tensor): [E] int32/int64, CSC sources.
        colptr (Tensor): [N + 1] int32/int64 offsets into ``row``.
        input_nodes (Tensor): [M] the seed nodes.
        sample_sizes (list|tuple): neighbours per node at each hop.
        sorted_eids (Tensor, optional): [E] edge ids in CSC order, needed for ``return_eids``.
        return_eids (bool): also return the ids of the sampled edges.
        name (str, optional): unused, for Paddle compatibility.

    Returns:
        tuple: ``(edge_src [K, 1], edge_dst [K, 1], sample_index, reindex_nodes)`` and
        ``edge_eids [K]`` when ``return_eids``: the subgraph's edges in local ids, the original
        id of each local node, and the local ids of the input nodes.

    Example:
        >>> src, dst, nodes_out, seeds = paddle.geometric.sampling.graph_khop_sampler(
        ...     row, colptr, paddle.to_tensor([0, 8]), [2, 2])
    """
    op = "graph_khop_sampler"
    if not isinstance(sample_sizes, (list, tuple)) or not sample_sizes:
        raise TypeError(f"{op}: 'sample_sizes' must be a non-empty list of ints, got "
                        f"{sample_sizes!r}")
    row_a, colptr_a, nodes, eids_a = _check_graph(row, colptr, input_nodes, sorted_eids,
                                                  return_eids, -1, op, "sorted_eids")
    gen = _random.generator_for(row_a)
    xp = K.xp_of(row_a)

    def draw(starts, deg, k):
        return _uniform_positions(xp, gen, starts, deg, k)

    frontier = nodes
    seen = nodes
    srcs, dsts, eid_parts = [], [], []
    for h, k in enumerate(sample_sizes):
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < -1:
            raise ValueError(f"{op}: 'sample_sizes' must hold ints >= -1, got {sample_sizes}")
        nb, cnt, picked = _sample(row_a, colptr_a, frontier, int(k), eids_a, draw, op)
        srcs.append(nb)
        dsts.append(xp.repeat(frontier, cnt.astype(np.int64)))
        if picked is not None:
            eid_parts.append(picked)
        n_before = seen.shape[0]
        _, _, seen = _reindex(seen, [nb], [xp.zeros(n_before, dtype=np.int64)], op)
        if h + 1 < len(sample_sizes):
            # as Paddle: the next hop's frontier (and its place in the node list) is sorted;
            # the last hop's new nodes stay in order of first appearance
            seen[n_before:] = xp.sort(seen[n_before:])
        frontier = seen[n_before:]
    src_all = xp.concatenate(srcs)
    dst_all = xp.concatenate(dsts)
    # renumber both edge ends into the final node list (input nodes first, then by discovery)
    sample_index = seen
    lookup = _reindex_lookup(sample_index)
    edge_src = lookup(src_all).reshape(-1, 1)
    edge_dst = lookup(dst_all).reshape(-1, 1)
    reindex_nodes = xp.arange(nodes.shape[0], dtype=sample_index.dtype)
    outs = [edge_src.astype(row_a.dtype), edge_dst.astype(row_a.dtype),
            sample_index.astype(row_a.dtype), reindex_nodes.astype(row_a.dtype)]
    if return_eids:
        outs.append(xp.concatenate(eid_parts) if eid_parts else xp.zeros(0, eids_a.dtype))
    return _wrap_outputs(*outs)


def _reindex_lookup(nodes):
    """A function mapping original ids to their position in ``nodes`` (unique ids)."""
    xp = K.xp_of(nodes)
    order = K.argsort_stable(nodes)
    sorted_nodes = nodes[order]

    def lookup(v):
        return order[xp.searchsorted(sorted_nodes, v)]

    return lookup
