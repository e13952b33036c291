"""CuPy versions of the CSR kernels in ``_kernels`` (``cupyx.scipy.sparse``, cuSPARSE).

Only reached with CuPy arrays, so CuPy is imported here and nowhere else.
"""

from __future__ import annotations

import numpy as np

__all__ = []


def _sps():
    import cupyx.scipy.sparse as sps

    return sps


def csr_dense(vals, crows, cols, m, n, y):
    return _sps().csr_matrix((vals, cols, crows), shape=(m, n)) @ y


def csr_t_dense(vals, crows, cols, m, n, g):
    return _sps().csr_matrix((vals, cols, crows), shape=(m, n)).T @ g


def csr_csr(av, acr, acol, bv, bcr, bcol, m, k, n):
    sps = _sps()
    c = (sps.csr_matrix((av, acol, acr), shape=(m, k))
         @ sps.csr_matrix((bv, bcol, bcr), shape=(k, n))).tocsr()
    c.sum_duplicates()
    c.sort_indices()
    return c.data, c.indptr.astype(np.int64), c.indices.astype(np.int64)
