"""Sparse linear algebra: ``pca_lowrank`` on a sparse matrix."""

from __future__ import annotations

import numbers

from paddle_hl import linalg as _linalg
from paddle_hl import tensor as _ops

from .binary import matmul
from .unary import require_sparse, sum, transpose

__all__ = []


def pca_lowrank(x, q=None, center=True, niter=2, name=None):
    """Randomised low-rank PCA of a sparse matrix: ``x - mean ≈ U diag(S) Vᵀ``.

    The centring is applied implicitly (``(x - 1 cᵀ) @ B = x @ B - 1 (cᵀ B)``), so ``x`` stays
    sparse; only products of x with thin dense matrices are formed.

    Args:
        x (Tensor): a sparse COO or CSR matrix ``[M, N]``.
        q (int, optional): the rank to estimate (default ``min(6, M, N)``).
        center (bool): subtract the column means. Default True.
        niter (int): subspace (power) iterations. Default 2.
        name (str, optional): unused.

    Returns:
        tuple[Tensor, Tensor, Tensor]: dense U ``[M, q]``, S ``[q]``, V ``[N, q]``.

    Example:
        >>> x = paddle.rand([20, 8]).to_sparse_csr()
        >>> u, s, v = paddle.sparse.pca_lowrank(x, q=3)
    """
    require_sparse(x, "pca_lowrank")
    if len(x.shape) != 2:
        raise ValueError(f"paddle.sparse.pca_lowrank: x must be a 2-D sparse matrix, got shape "
                         f"{x.shape}")
    m, n = x.shape
    if q is None:
        q = min(6, m, n)
    if not isinstance(q, numbers.Integral) or not 0 <= q <= min(m, n):
        raise ValueError(f"paddle.sparse.pca_lowrank: q must be an int in [0, min(M, N)] = "
                         f"[0, {min(m, n)}], got {q}")
    if not isinstance(niter, numbers.Integral) or niter < 0:
        raise ValueError(f"paddle.sparse.pca_lowrank: niter must be a non-negative int, got "
                         f"{niter}")
    xt = transpose(x.to_sparse_coo(2) if x.is_sparse_csr() else x, [1, 0])
    if x.is_sparse_csr():
        xt = xt.to_sparse_csr()
    if center:
        c = _ops.reshape(sum(x.to_sparse_coo(2) if x.is_sparse_csr() else x, axis=0,
                                  keepdim=True).to_dense(), [1, n]) / m
    ones_m = _ops.ones([m, 1], dtype=x.dtype)
    ones_n = _ops.ones([1, m], dtype=x.dtype)

    def a_mul(b):  # (x - 1 c) @ b
        out = matmul(x, b)
        return out - _ops.matmul(ones_m, _ops.matmul(c, b)) if center else out

    def at_mul(b):  # (x - 1 c).T @ b
        out = matmul(xt, b)
        return out - _ops.matmul(c, _ops.matmul(ones_n, b), transpose_x=True) \
            if center else out

    r = _ops.randn([n, q], dtype=x.dtype)  # paddle.seed makes it reproducible
    basis = _linalg.qr(a_mul(r))[0]
    for _ in range(niter):
        basis = _linalg.qr(at_mul(basis))[0]
        basis = _linalg.qr(a_mul(basis))[0]
    b = _ops.transpose(at_mul(basis), [1, 0])  # basis.T @ A, [q, N]
    u, s, vh = _linalg.svd(b)
    return _ops.matmul(basis, u), s, _ops.transpose(vh, [1, 0])
