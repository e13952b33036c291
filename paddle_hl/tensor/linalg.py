"""Matrix products (Paddle's ``tensor/linalg.py`` category)."""

from __future__ import annotations

from .. import backend
from ..framework.op import _unbroadcast, apply
from ._helpers import promote_pair, tensor_arg

__all__ = []


def _matmul_kernel(x, y):
    """x @ y with x, y at least 2-D (1-D cases are reshaped by the public function)."""
    xp = backend.get_array_module(x)
    out = xp.matmul(x, y)

    def bw(g):
        gx = xp.matmul(g, xp.swapaxes(y, -1, -2))
        gy = xp.matmul(xp.swapaxes(x, -1, -2), g)
        return _unbroadcast(gx, x.shape), _unbroadcast(gy, y.shape)

    return out, bw


def _matmul_hi(i, g):
    from ._unbroadcast import unbroadcast_tensor

    x, y = i
    gx = matmul(g[0], y, transpose_y=True)
    gy = matmul(x, g[0], transpose_x=True)
    return unbroadcast_tensor(gx, x.shape), unbroadcast_tensor(gy, y.shape)


_matmul_kernel.op_name = "matmul"
_matmul_kernel.hi = _matmul_hi


def matmul(x, y, transpose_x=False, transpose_y=False, name=None):
    """Matrix product with NumPy's broadcasting rules for batch dims.

    Args:
        x (Tensor): ``[..., M, K]`` (or ``[K]``).
        y (Tensor): ``[..., K, N]`` (or ``[K]``).
        transpose_x, transpose_y (bool): transpose the last two dims first.

    Returns:
        Tensor: ``[..., M, N]``; 1-D operands drop their dim as in NumPy.
    """
    from .manipulation import reshape, transpose

    x = tensor_arg(x, "matmul", "x")
    y = tensor_arg(y, "matmul", "y")
    if x.ndim == 0 or y.ndim == 0:
        raise ValueError(f"matmul: inputs must be at least 1-D, got shapes {x.shape} and "
                         f"{y.shape}")
    x, y = promote_pair(x, y, "matmul")
    if transpose_x and x.ndim >= 2:
        x = transpose(x, list(range(x.ndim - 2)) + [x.ndim - 1, x.ndim - 2])
    if transpose_y and y.ndim >= 2:
        y = transpose(y, list(range(y.ndim - 2)) + [y.ndim - 1, y.ndim - 2])
    x1, y1 = x.ndim == 1, y.ndim == 1
    if x1:
        x = reshape(x, [1, x.shape[0]])
    if y1:
        y = reshape(y, [y.shape[0], 1])
    if x.shape[-1] != y.shape[-2]:
        raise ValueError(f"matmul: the inner dims do not match: x has shape {x.shape}, y has "
                         f"shape {y.shape} (after transpose_x={transpose_x}, "
                         f"transpose_y={transpose_y})")
    try:
        out = apply(_matmul_kernel, x, y)
    except ValueError as e:
        raise ValueError(f"matmul: cannot broadcast the batch dims of x {x.shape} and y "
                         f"{y.shape}: {e}") from None
    if x1 or y1:
        shape = out.shape
        if x1:
            shape = shape[:-2] + shape[-1:]
        if y1:
            shape = shape[:-1]
        out = reshape(out, shape)
    return out


API = ["matmul"]
METHODS = ["matmul"]
