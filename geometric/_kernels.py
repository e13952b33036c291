"""Segment and scatter reductions on raw arrays, shared by message passing and the segment ops.

Everything here works on 2-D row blocks: ``m`` of shape [E, F] whose rows are reduced into ``n``
output rows by an index vector ``ids`` of length E. Feature dims are flattened to F by the
callers and restored afterwards.

How each reduction runs, fastest path first:

- sum (NumPy): one sparse matrix product. A CSR matrix with a one at (ids[e], e) times ``m`` is
  scipy's single C loop over the edges; building it is a counting sort (no argsort). For
  gather-then-sum (``x[src]`` summed into ``dst``) the matrix has its ones at (dst, src) and
  multiplies ``x`` directly, so the [E, F] message block is never materialised; one weight per
  edge (GCN's normalisation) goes into the matrix's values. The backward multiplies by the
  transpose of the same matrix (a free CSC view). Without scipy, the padded-bucket reduction
  below is used.
- max / min (NumPy): rows are sorted by segment, and segments are grouped by degree into buckets
  of power-of-two width w. Each bucket is one gather into a [segments, w, F] block and one
  reduction over its middle axis, so the Python work is O(log(max degree)) calls, and the padded
  block is at most twice the size of ``m``. Padding repeats the segment's first row, which
  changes neither a max nor a min. (``np.maximum.reduceat`` on axis 0 walks the block column by
  column and is several times slower; ``np.maximum.at`` slower still.)
- GPU: one scatter of the rows into their segments (``backend.index_add`` /
  ``index_reduce``: atomic updates).

Empty segments are 0 for every reduction, as in Paddle.
"""

from __future__ import annotations

import numpy as np

from paddle_hl import backend

__all__ = []

_SPARSE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32),
                  np.dtype(np.int64))


def xp_of(a):
    return backend.get_array_module(a)


def _scipy_sparse():
    """scipy.sparse when it is installed (it is optional: the NumPy paths cover its absence)."""
    global _SP
    if _SP is False:
        try:
            import scipy.sparse as sp  # noqa: PLC0415

            _SP = sp
        except ImportError:
            _SP = None
    return _SP


_SP = False


class Segments:
    """The grouping of E rows into ``n`` segments by ``ids``; its derived arrays are built lazily
    and reused between a forward and its backward.

    Args:
        ids: 1-D integer array of length E, values in [0, n).
        n (int): the number of segments (output rows).
        is_sorted (bool): the ids are known to be non-decreasing (the segment ops), which saves
            the sort.
    """

    __slots__ = ("ids", "n", "size", "is_sorted", "_xp", "_count", "_order", "_buckets", "_mat")

    def __init__(self, ids, n: int, is_sorted: bool = False):
        self.ids = ids
        self.n = int(n)
        self.size = int(ids.shape[0])
        self.is_sorted = is_sorted
        self._xp = xp_of(ids)
        self._count = self._order = self._buckets = self._mat = None

    @property
    def count(self):
        """Rows per segment (int64, length n)."""
        if self._count is None:
            self._count = self._xp.bincount(self.ids, minlength=self.n)
        return self._count

    @property
    def order(self):
        """A stable permutation that sorts the rows by segment (None when already sorted)."""
        if self._order is None and not self.is_sorted:
            self._order = argsort_stable(self.ids)
        return self._order

    def matrix(self, cols=None, ncols=None, dtype=np.float32, data=None):
        """scipy CSR matrix [n, ncols] holding ``data[e]`` (default 1) at (ids[e], cols[e]);
        cols defaults to e. The last matrix built is kept for the backward."""
        sp = _scipy_sparse()
        dtype = np.dtype(dtype)
        m = self._mat
        if m is not None and m[0] is cols and m[1] is data and m[2] == dtype:
            return m[3]
        vals = np.ones(self.size, dtype=dtype) if data is None else data.astype(dtype,
                                                                                  copy=False)
        if cols is None:
            ncols = self.size
            if self.is_sorted:
                # already in row order: the CSR arrays are the counts' prefix sums and arange
                indptr = np.zeros(self.n + 1, dtype=np.int64)
                np.cumsum(self.count, out=indptr[1:])
                mat = sp.csr_matrix((vals, np.arange(self.size), indptr), shape=(self.n, ncols))
            else:
                mat = sp.csr_matrix((vals, (self.ids, np.arange(self.size))),
                                    shape=(self.n, ncols))
        else:
            mat = sp.csr_matrix((vals, (self.ids, cols)), shape=(self.n, ncols))
        self._mat = (cols, data, dtype, mat)
        return mat

    def buckets(self):
        """[(segments, rows, valid)] per degree bucket: ``rows`` [k, w] are row numbers of the
        block, padded with each segment's first row; ``valid`` marks the real entries."""
        if self._buckets is None:
            xp = self._xp
            count = self.count
            starts = xp.cumsum(count) - count
            seg = xp.flatnonzero(count)
            deg = count[seg]
            # bucket width: the next power of two at or above the degree
            width = xp.left_shift(1, xp.ceil(xp.log2(deg.astype(np.float64))).astype(np.int64))
            order = self.order
            out = []
            for w in xp.unique(width).tolist():
                sel = seg[width == w]
                k = xp.arange(w)[None, :]
                valid = k < count[sel][:, None]
                pos = starts[sel][:, None] + xp.where(valid, k, 0)
                out.append((sel, pos if order is None else order[pos], valid))
            self._buckets = out
        return self._buckets


def argsort_stable(a):
    """A stable argsort on either backend (CuPy's sort is always stable and takes no kind)."""
    if xp_of(a) is np:
        return np.argsort(a, kind="stable")
    return xp_of(a).argsort(a)


def _compute_dtype(dt):
    """scipy multiplies float32/float64/int32/int64; half types are summed in float32."""
    return dt if dt in _SPARSE_DTYPES else np.dtype(np.float32)


def segment_sum(m, seg: Segments):
    """Sum the rows of ``m`` [E, F] into [n, F] by segment."""
    xp = xp_of(m)
    if xp is not np:
        return _scatter("add", m, seg)
    sp = _scipy_sparse()
    if sp is not None:
        cd = _compute_dtype(m.dtype)
        out = seg.matrix(dtype=cd) @ m.astype(cd, copy=False)
        return np.asarray(out).astype(m.dtype, copy=False)
    return _bucket_reduce(m, seg, "sum")


def _sparse_ok(a):
    return xp_of(a) is np and _scipy_sparse() is not None


def gather_sum(x, src, seg: Segments, weight=None):
    """``weight[e] * x[src[e]]`` (weight 1 when None) summed into the destinations of ``seg``,
    without forming the [E, F] message block when scipy is available."""
    if _sparse_ok(x):
        cd = _compute_dtype(x.dtype)
        mat = seg.matrix(cols=src, ncols=x.shape[0], dtype=cd, data=weight)
        return np.asarray(mat @ x.astype(cd, copy=False)).astype(x.dtype, copy=False)
    m = x[src]
    if weight is not None:
        m = m * weight.astype(m.dtype, copy=False)[:, None]
    return segment_sum(m, seg)


def gather_sum_adjoint(g, src, seg: Segments, n_in: int, weight=None):
    """The adjoint of :func:`gather_sum`: ``weight[e] * g[dst[e]]`` summed into the sources.

    With scipy it multiplies by the transpose of the forward's matrix (a free CSC view), so the
    backward builds nothing."""
    if _sparse_ok(g):
        cd = _compute_dtype(g.dtype)
        mat = seg.matrix(cols=src, ncols=n_in, dtype=cd, data=weight)
        return np.asarray(mat.T @ g.astype(cd, copy=False)).astype(g.dtype, copy=False)
    m = g[seg.ids]
    if weight is not None:
        m = m * weight.astype(m.dtype, copy=False)[:, None]
    return segment_sum(m, Segments(src, n_in))


def segment_extreme(m, seg: Segments, op: str):
    """Max (``op='max'``) or min of the rows of ``m`` [E, F] per segment; empty segments are 0."""
    xp = xp_of(m)
    if xp is not np:
        return _scatter(op, m, seg)
    return _bucket_reduce(m, seg, op)


def _bucket_reduce(m, seg: Segments, op: str):
    out = np.zeros((seg.n,) + m.shape[1:], dtype=m.dtype)
    if seg.size == 0:
        return out
    if op == "sum":
        # padding points at an appended zero row (a repeated row would be counted twice)
        ext = np.concatenate([m, np.zeros((1,) + m.shape[1:], dtype=m.dtype)])
        for sel, rows, valid in seg.buckets():
            out[sel] = ext[np.where(valid, rows, seg.size)].sum(axis=1)
        return out
    red = np.maximum if op == "max" else np.minimum
    for sel, rows, _ in seg.buckets():
        block = m[rows]
        out[sel] = block[:, 0] if block.shape[1] == 1 else red.reduce(block, axis=1)
    return out


def _scatter(op, m, seg: Segments):
    """The segment reduction as one scatter of the rows into their segments (the GPU path:
    atomic updates through ``backend.index_reduce``)."""
    xp = xp_of(m)
    shape = (seg.n,) + m.shape[1:]
    if op == "add":
        out = xp.zeros(shape, dtype=m.dtype)
        backend.index_add(out, seg.ids, m)
        return out
    if m.dtype.kind == "f":
        init = -np.inf if op == "max" else np.inf
    else:
        info = np.iinfo(m.dtype)
        init = info.min if op == "max" else info.max
    out = xp.full(shape, init, dtype=m.dtype)
    backend.index_reduce("maximum" if op == "max" else "minimum", out, seg.ids, m)
    out[seg.count == 0] = 0
    return out


def divide_by_count(s, count):
    """``s / count`` per row, empty rows staying 0; integers divide truncating toward zero."""
    xp = xp_of(s)
    c = count.reshape((-1,) + (1,) * (s.ndim - 1))
    if s.dtype.kind in "iu":
        c = xp.maximum(c, 1).astype(s.dtype)
        q = xp.abs(s) // c
        return xp.where(s < 0, -q, q)
    return s / xp.maximum(c, 1).astype(s.dtype)


def inverse_count(count, dtype, ndim):
    """1 / count as a column of ``dtype`` broadcasting over ``ndim`` dims (0 for empty rows)."""
    xp = xp_of(count)
    inv = 1.0 / xp.maximum(count, 1).astype(dtype)
    return inv.reshape((-1,) + (1,) * (ndim - 1))
