"""Array-level sparse kernels: CSR x dense, sampled dense-dense products, CSR x CSR.

SciPy's compiled CSR routines do the heavy work when SciPy is installed (the ``sparse`` extra);
without it the CSR x dense products fall back to vectorised NumPy and the sparse x sparse product
raises an ImportError naming the extra. Each product first asks the backend of its arrays
(``backend.for_array(...).csr_dense`` and friends): the GPU backend computes it with cuSPARSE,
the CPU backend answers None and the kernels here run.
"""

from __future__ import annotations

import numpy as np

from paddle_hl import backend
from paddle_hl.backend import tuning

__all__ = []

_EXTRA = "pip install 'paddle_hl[sparse]'"
_SCIPY = None
_CHUNK = tuning.value("sparse.chunk")
_PARALLEL_MIN = tuning.value("sparse.parallel_min")


def _threads():
    return min(8, backend.num_threads())


def _map(fn, items):
    """``[fn(i) for i in items]`` on the CPU thread pool (SciPy's sparse products and NumPy's
    einsum release the GIL, so the pieces run in parallel)."""
    return backend.parallel_map(fn, items)


def _by_columns(fn, y, nnz):
    """``fn(y)`` computed on column blocks of the dense ``y`` in parallel (one per thread)."""
    t = _threads()
    k = y.shape[1]
    if t < 2 or k < 2 * 16 or nnz * k < _PARALLEL_MIN:
        return fn(y)
    edges = np.linspace(0, k, t + 1).astype(int)
    parts = _map(lambda se: fn(y[:, se[0]:se[1]]), list(zip(edges[:-1], edges[1:])))
    return np.concatenate(parts, axis=1)


def scipy_sparse(required=False):
    """``scipy.sparse``, imported on first use; None (or an ImportError) when missing."""
    global _SCIPY
    if _SCIPY is None:
        try:
            import scipy.sparse as sps
        except ImportError:
            _SCIPY = False
        else:
            _SCIPY = sps
    if _SCIPY is False:
        if required:
            raise ImportError("paddle.sparse: a sparse x sparse matmul needs SciPy; install it "
                              f"with {_EXTRA}")
        return None
    return _SCIPY


def csr_dense(vals, crows, cols, m, n, y):
    """``A @ y`` for the 2-D CSR matrix A ``[m, n]`` and dense y ``[n, k]``."""
    out = backend.for_array(y).csr_dense(vals, crows, cols, m, n, y)
    if out is not None:
        return out
    sps = scipy_sparse()
    if sps is not None:
        a = sps.csr_matrix((vals, cols, crows), shape=(m, n))
        return _by_columns(lambda part: np.asarray(a @ part, dtype=np.result_type(vals, y)), y,
                           vals.shape[0])
    out = np.zeros((m, y.shape[1]), dtype=np.result_type(vals, y))
    if vals.shape[0]:
        counts = np.diff(crows)
        nonempty = np.nonzero(counts)[0]
        prod = vals[:, None] * y[cols]
        out[nonempty] = np.add.reduceat(prod, crows[nonempty], axis=0)
    return out


def csr_t_dense(vals, crows, cols, m, n, g):
    """``A.T @ g`` for the 2-D CSR matrix A ``[m, n]`` and dense g ``[m, k]``."""
    out = backend.for_array(g).csr_t_dense(vals, crows, cols, m, n, g)
    if out is not None:
        return out
    sps = scipy_sparse()
    if sps is not None:
        # A.T of a CSR matrix is a CSC matrix over the same arrays: no copy, a fast product
        at = sps.csc_matrix((vals, cols, crows), shape=(n, m))
        return _by_columns(lambda part: np.asarray(at @ part, dtype=np.result_type(vals, g)), g,
                           vals.shape[0])
    out = np.zeros((n, g.shape[1]), dtype=np.result_type(vals, g))
    rows = np.repeat(np.arange(m), np.diff(crows))
    np.add.at(out, cols, vals[:, None] * g[rows])
    return out


def sddmm(a, b, rows, cols):
    """``(a @ b.T)[rows, cols]`` without forming the product: a ``[m, k]``, b ``[n, k]``."""
    xp = backend.get_array_module(a)
    nnz = rows.shape[0]
    out = xp.empty(nnz, dtype=xp.result_type(a, b))
    step = max(1, _CHUNK // max(1, a.shape[1]))

    def block(s):
        e = min(nnz, s + step)
        # einsum reads each gathered pair once; no [nnz, k] product is kept
        out[s:e] = xp.einsum("ij,ij->i", a[rows[s:e]], b[cols[s:e]])

    starts = range(0, nnz, step)
    if xp is np and len(starts) > 1 and nnz * a.shape[1] >= _PARALLEL_MIN:
        _map(block, starts)
    else:
        for s in starts:
            block(s)
    return out


def csr_csr(av, acr, acol, bv, bcr, bcol, m, k, n):
    """``A @ B`` of CSR matrices ``[m, k]`` and ``[k, n]``: (values, crows, cols), sorted."""
    out = backend.for_array(av).csr_csr(av, acr, acol, bv, bcr, bcol, m, k, n)
    if out is not None:
        return out
    sps = scipy_sparse(required=True)
    a = sps.csr_matrix((av, acol, acr), shape=(m, k))
    b = sps.csr_matrix((bv, bcol, bcr), shape=(k, n))
    c = (a @ b).tocsr()
    c.sum_duplicates()
    c.sort_indices()
    dt = np.result_type(av, bv)
    return (c.data.astype(dt, copy=False), c.indptr.astype(np.int64),
            c.indices.astype(np.int64))


def sample_csr(vals, crows, cols, m, n, rows_q, cols_q):
    """Entries ``M[rows_q, cols_q]`` of the CSR matrix M (zeros where M has none)."""
    xp = backend.get_array_module(vals)
    mrows = xp.repeat(xp.arange(m), xp.diff(crows))
    keys = mrows * n + cols
    q = rows_q * n + cols_q
    pos = xp.searchsorted(keys, q)
    pos_c = xp.minimum(pos, max(keys.shape[0] - 1, 0))
    hit = (pos < keys.shape[0]) & (keys[pos_c] == q) if keys.shape[0] else \
        xp.zeros(q.shape, dtype=bool)
    out = xp.zeros(q.shape, dtype=vals.dtype)
    if keys.shape[0]:
        out[hit] = vals[pos_c[hit]]
    return out


def csr_transpose(vals, crows, cols, m, n):
    """CSR arrays of A.T (``[n, m]``) and the permutation taking A's entries to A.T's."""
    xp = backend.get_array_module(vals)
    rows = xp.repeat(xp.arange(m), xp.diff(crows))
    order = xp.lexsort(xp.stack([rows, cols]))
    counts = xp.bincount(cols, minlength=n)
    tcrows = xp.concatenate([xp.zeros(1, dtype=np.int64), xp.cumsum(counts)]).astype(np.int64)
    return vals[order], tcrows, rows[order].astype(np.int64), order
