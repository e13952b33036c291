"""``paddle_hl.linalg``: the linear-algebra namespace of Paddle 2.6.

The functions are the very same objects as the top-level / Tensor-method ones where those exist
(``paddle_hl.linalg.norm is paddle_hl.Tensor.norm``); ``inv`` is ``inverse``.
"""

from __future__ import annotations

from .tensor.linalg import (
    cholesky,
    cholesky_solve,
    cond,
    corrcoef,
    cov,
    det,
    eig,
    eigh,
    eigvals,
    eigvalsh,
    householder_product,
    lstsq,
    lu,
    lu_unpack,
    matrix_power,
    matrix_rank,
    multi_dot,
    norm,
    pca_lowrank,
    pinv,
    qr,
    slogdet,
    solve,
    svd,
    triangular_solve,
)
from .tensor.linalg import inverse as inv

__all__ = ["cholesky", "cholesky_solve", "cond", "corrcoef", "cov", "det", "eig", "eigh",
           "eigvals", "eigvalsh", "householder_product", "inv", "lstsq", "lu", "lu_unpack",
           "matrix_power", "matrix_rank", "multi_dot", "norm", "pca_lowrank", "pinv", "qr",
           "slogdet", "solve", "svd", "triangular_solve"]
