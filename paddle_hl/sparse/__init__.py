"""Sparse COO and CSR tensors, sparse math and ``sparse.nn`` (as ``paddle.sparse``).

Sparse tensors store their indices as backend arrays and their values as a dense Tensor, so the
ordinary autograd engine differentiates every sparse op through the values.
"""

from . import nn  # noqa: F401
from .binary import add, addmm, divide, is_same_shape, masked_matmul, matmul, multiply, mv, subtract
from .creation import sparse_coo_tensor, sparse_csr_tensor
from .multiary import pca_lowrank
from .unary import (
                     abs,
                     asin,
                     asinh,
                     atan,
                     atanh,
                     cast,
                     coalesce,
                     deg2rad,
                     expm1,
                     isnan,
                     log1p,
                     neg,
                     pow,
                     rad2deg,
                     reshape,
                     sin,
                     sinh,
                     slice,
                     sqrt,
                     square,
                     sum,
                     tan,
                     tanh,
                     transpose,
)

__all__ = ["abs", "add", "addmm", "asin", "asinh", "atan", "atanh", "cast", "coalesce",
           "deg2rad", "divide", "expm1", "is_same_shape", "isnan", "log1p", "masked_matmul",
           "matmul", "multiply", "mv", "neg", "pca_lowrank", "pow", "rad2deg", "reshape", "sin",
           "sinh", "slice", "sparse_coo_tensor", "sparse_csr_tensor", "sqrt", "square", "subtract",
           "sum", "tan", "tanh", "transpose"]
