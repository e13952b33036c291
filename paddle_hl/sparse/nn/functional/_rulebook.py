"""Rulebooks for sparse convolution and pooling (gather-GEMM-scatter, as spconv).

A rulebook says, for every output site and every kernel offset, which input site feeds it. It is
stored as a table ``[n_out, K]`` of input rows, with ``n_in`` (a zero / -inf padding row) where
no input exists, so one gather builds the ``[n_out, K, C]`` patch matrix and one GEMM does the
convolution.

Sites are looked up by their flat position in ``[B, *spatial]``: through a dense position ->
row table when the grid is small enough (one gather per offset), else by binary search in the
sorted positions.
"""

from __future__ import annotations

import itertools

import numpy as np

from paddle_hl import backend
from paddle_hl.backend import tuning

__all__ = []

_DENSE_LOOKUP_MAX = tuning.value("sparse.dense_lookup_max")


class Rulebook:
    """``table`` [n_out, K] input rows (``n_in`` = none), ``out_ix`` [1 + nd, n_out] coordinates,
    ``out_spatial`` and whether the backward may use the transposed table (``symmetric``)."""

    __slots__ = ("table", "out_ix", "out_spatial", "n_in", "symmetric", "_pairs")

    def __init__(self, table, out_ix, out_spatial, n_in, symmetric):
        self.table = table
        self.out_ix = out_ix
        self.out_spatial = out_spatial
        self.n_in = n_in
        self.symmetric = symmetric
        self._pairs = None

    def fill(self) -> float:
        """Share of (output, offset) slots that have an input."""
        return float((self.table < self.n_in).mean()) if self.table.size else 0.0

    def pairs(self):
        """Per offset, the (input rows, output rows) it connects (spconv's rulebook form)."""
        if self._pairs is None:
            xp = backend.get_array_module(self.table)
            res = []
            for k in range(self.table.shape[1]):
                out_rows = xp.nonzero(self.table[:, k] < self.n_in)[0]
                res.append((self.table[out_rows, k], out_rows))
            self._pairs = tuple(res)
        return self._pairs


def _offsets(ksize, dilation, padding):
    """Every kernel position (row-major, as the weight's leading dims) as an offset array."""
    grid = list(itertools.product(*[range(k) for k in ksize]))
    return np.array(grid, dtype=np.int64) * np.array(dilation) - np.array(padding)


class _Lookup:
    """Row of a site given its flat position (-1 when absent)."""

    def __init__(self, keys, size, xp):
        self.xp = xp
        self.n = keys.shape[0]
        if size <= _DENSE_LOOKUP_MAX:
            self.table = xp.full(size + 1, -1, dtype=np.int32)  # last slot: out of bounds
            self.table[keys] = xp.arange(self.n, dtype=np.int32)
            self.sorted = None
        else:
            self.table = None
            self.order = xp.argsort(keys)
            self.sorted = keys[self.order]

    def find(self, q, valid):
        """Rows of positions q (garbage where not ``valid``): -1 where missing or invalid."""
        xp = self.xp
        if self.table is not None:
            q = xp.where(valid, q, self.table.shape[0] - 1)
            return self.table[q].astype(np.int64)
        pos = xp.searchsorted(self.sorted, q)
        pos = xp.minimum(pos, max(self.n - 1, 0))
        hit = valid & (self.sorted[pos] == q) if self.n else xp.zeros(q.shape, dtype=bool)
        return xp.where(hit, self.order[pos], -1)


def build(ix, batch, in_spatial, ksize, stride, padding, dilation, subm):
    """The rulebook of a (submanifold) sparse convolution over coalesced coordinates ``ix``.

    Args:
        ix: ``[1 + nd, n_in]`` int64 (batch, spatial...) of the active input sites, sorted.
        batch: the batch size.
        in_spatial, ksize, stride, padding, dilation: per spatial dim.
        subm: outputs only at the input sites (stride ignored).

    Returns:
        Rulebook
    """
    xp = backend.get_array_module(ix)
    nd = len(in_spatial)
    n_in = ix.shape[1]
    offs = _offsets(ksize, dilation, padding)
    kk = offs.shape[0]
    sp_in = np.array(in_spatial, dtype=np.int64)
    coords = ix[1:]
    grid = (batch,) + tuple(in_spatial)
    if subm:
        # as Paddle: a submanifold kernel is centred on the site whatever the padding
        offs = _offsets(ksize, dilation, [(k - 1) // 2 * dl for k, dl in zip(ksize, dilation)])
        out_spatial = list(in_spatial)
        lookup = _Lookup(xp.ravel_multi_index(tuple(ix), grid), int(np.prod(grid)), xp)
        table = xp.empty((n_in, kk), dtype=np.int64)
        for k in range(kk):
            p = coords + xp.asarray(offs[k])[:, None]
            valid = ((p >= 0) & (p < xp.asarray(sp_in)[:, None])).all(axis=0)
            pc = xp.where(valid[None], p, 0)
            q = xp.ravel_multi_index((ix[0],) + tuple(pc), grid)
            table[:, k] = lookup.find(q, valid)
        table[table < 0] = n_in
        symmetric = bool(((offs + offs[::-1]) == 0).all())
        return Rulebook(table, ix, out_spatial, n_in, symmetric)
    out_spatial = [(in_spatial[d] + 2 * padding[d] - dilation[d] * (ksize[d] - 1) - 1)
                   // stride[d] + 1 for d in range(nd)]
    if min(out_spatial) <= 0:
        raise ValueError(f"sparse conv/pool: the output would be empty: input spatial size "
                         f"{list(in_spatial)}, kernel {list(ksize)}, stride {list(stride)}, "
                         f"padding {list(padding)}, dilation {list(dilation)}")
    ogrid = (batch,) + tuple(out_spatial)
    st = xp.asarray(np.array(stride, dtype=np.int64))[:, None]
    so = xp.asarray(np.array(out_spatial, dtype=np.int64))[:, None]
    pairs_in, pairs_out, pairs_k = [], [], []
    for k in range(kk):
        # input p feeds output q at offset k when q * stride + offset_k == p
        num = coords - xp.asarray(offs[k])[:, None]
        valid = ((num % st) == 0).all(axis=0)
        q = num // st
        valid &= ((q >= 0) & (q < so)).all(axis=0)
        rows = xp.nonzero(valid)[0]
        qk = xp.ravel_multi_index((ix[0, rows],) + tuple(q[:, rows]), ogrid)
        pairs_in.append(rows)
        pairs_out.append(qk)
        pairs_k.append(xp.full(rows.shape[0], k, dtype=np.int64))
    all_out = xp.concatenate(pairs_out)
    uniq, inv = xp.unique(all_out, return_inverse=True)
    table = xp.full((uniq.shape[0], kk), n_in, dtype=np.int64)
    table[inv.ravel(), xp.concatenate(pairs_k)] = xp.concatenate(pairs_in)
    out_ix = xp.stack(xp.unravel_index(uniq, ogrid)).astype(np.int64) if uniq.shape[0] else \
        xp.zeros((nd + 1, 0), dtype=np.int64)
    return Rulebook(table, out_ix, out_spatial, n_in, False)
