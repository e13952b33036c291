"""Random graphs for the geometric tests."""

from __future__ import annotations

import numpy as np


def graph(n, e, feat, dtype, index_dtype, seed=0, distinct=False):
    """Node features [n, *feat] (distinct values, so max/min have no ties) and e random edges
    (``distinct``: no repeated (src, dst) pair, which would tie with itself under max/min)."""
    rng = np.random.default_rng(seed)
    size = n * int(np.prod(feat))
    vals = rng.permutation(size).reshape((n,) + tuple(feat))
    if np.dtype(dtype).kind == "f":
        x = (vals + rng.uniform(0.1, 0.9, vals.shape)) / size - 0.5
    else:
        x = vals - size // 2
    if distinct:
        pair = rng.choice(n * (n - 1), e, replace=False)
        src, dst = (pair // (n - 1)).astype(index_dtype), (pair % (n - 1)).astype(index_dtype)
    else:
        src = rng.integers(0, n, e).astype(index_dtype)
        dst = rng.integers(0, n - 1, e).astype(index_dtype)  # the last node receives nothing
    return x.astype(dtype), src, dst


def csc_graph(n, avg_deg, seed=0, max_deg=None):
    """A random graph in CSC form (row, colptr) with skewed in-degrees."""
    rng = np.random.default_rng(seed)
    deg = rng.zipf(1.8, n) if max_deg is None else rng.integers(0, max_deg + 1, n)
    deg = np.minimum(deg * avg_deg // 3, n - 1).astype(np.int64)
    colptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(deg, out=colptr[1:])
    row = np.concatenate([rng.choice(n, d, replace=False) for d in deg]) if deg.sum() else \
        np.zeros(0, dtype=np.int64)
    return row.astype(np.int64), colptr
