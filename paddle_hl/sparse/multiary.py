"""Sparse linear algebra: ``pca_lowrank`` on a sparse matrix."""

from __future__ import annotations

import numbers

import paddle_hl

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
        c = paddle_hl.reshape(sum(x.to_sparse_coo(2) if x.is_sparse_csr() else x, axis=0,
                                  keepdim=True).to_dense(), [1, n]) / m
    ones_m = paddle_hl.ones([m, 1], dtype=x.dtype)
    ones_n = paddle_hl.ones([1, m], dtype=x.dtype)

    def a_mul(b):  # (x - 1 c) @ b
        out = matmul(x, b)
        return out - paddle_hl.matmul(ones_m, paddle_hl.matmul(c, b)) if center else out

    def at_mul(b):  # (x - 1 c).T @ b
        out = matmul(xt, b)
        return out - paddle_hl.matmul(c, paddle_hl.matmul(ones_n, b), transpose_x=True) \
            if center else out

    r = paddle_hl.randn([n, q], dtype=x.dtype)  # paddle.seed makes it reproducible
    basis = paddle_hl.linalg.qr(a_mul(r))[0]
    for _ in range(niter):
        basis = paddle_hl.linalg.qr(at_mul(basis))[0]
        basis = paddle_hl.linalg.qr(a_mul(basis))[0]
    b = paddle_hl.transpose(at_mul(basis), [1, 0])  # basis.T @ A, [q, N]
    u, s, vh = paddle_hl.linalg.svd(b)
    return paddle_hl.matmul(basis, u), s, paddle_hl.transpose(vh, [1, 0])
