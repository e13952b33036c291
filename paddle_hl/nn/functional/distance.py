"""Distance functions (``paddle.nn.functional.pairwise_distance``)."""

from __future__ import annotations

import math

import numpy as np

from ... import backend
from ...framework import dtype as _dt
from ...framework.op import _unbroadcast, apply, op
from ...framework.tensor import Tensor
from ...tensor._helpers import cast_to, tensor_arg

__all__ = []


@op("pairwise_distance")
def _pdist_kernel(x, y, p, epsilon, keepdim):
    """``||x - y + epsilon||_p`` over the last axis (x and y broadcast)."""
    xp = backend.get_array_module(x)
    wd = np.dtype(np.float32) if x.dtype in _dt.LOW_FLOATS else x.dtype
    d = x.astype(wd, copy=False) - y.astype(wd, copy=False) + epsilon
    a = xp.abs(d)
    if d.shape[-1] == 0:
        norm = xp.zeros(d.shape[:-1] + (1,), wd)
    elif p == math.inf:
        norm = a.max(axis=-1, keepdims=True)
    elif p == -math.inf:
        norm = a.min(axis=-1, keepdims=True)
    elif p == 0:
        norm = (d != 0).sum(axis=-1, keepdims=True).astype(wd)
    elif p == 1:
        norm = a.sum(axis=-1, keepdims=True)
    elif p == 2:
        norm = xp.sqrt((d * d).sum(axis=-1, keepdims=True))
    else:
        # Paddle's p_norm takes the root with 1/p rounded to float32; float64 results agree
        norm = ((a ** p).sum(axis=-1, keepdims=True)) ** float(np.float32(1.0 / p))
    out = norm if keepdim else norm[..., 0]

    def bw(g):
        gk = g.astype(wd, copy=False)
        if not keepdim:
            gk = gk[..., None]
        if p == 0 or d.shape[-1] == 0:
            gd = xp.zeros(d.shape, wd)
        elif p in (math.inf, -math.inf):
            # every entry equal to the extreme gets the gradient, as Paddle's p_norm grad does
            gd = xp.sign(d) * (a == norm) * gk
        elif p == 1:
            gd = xp.sign(d) * gk
        else:
            safe = xp.where(norm > 0, norm, 1)
            gd = xp.sign(d) * a ** (p - 1) / safe ** (p - 1) * gk * (norm > 0)
        gd = gd.astype(x.dtype, copy=False)
        return _unbroadcast(gd, x.shape), _unbroadcast(-gd, y.shape)

    return out.astype(x.dtype, copy=False), bw


def pairwise_distance(x: Tensor, y: Tensor, p: float = 2.0, epsilon: float = 1e-6,
                      keepdim: bool = False, name=None) -> Tensor:
    """The p-norm distance ``||x - y + epsilon||_p`` between rows of ``x`` and ``y``.

    Args:
        x (Tensor): ``[N, D]`` or ``[D]``, float32/float64.
        y (Tensor): same dtype; broadcast against ``x``.
        p (float): the norm degree (``inf``, ``-inf`` and ``0`` included).
        epsilon (float): added to the difference, avoiding a zero norm.
        keepdim (bool): keep the reduced last dim with size 1.

    Returns:
        Tensor: ``[N]`` (``[N, 1]`` with ``keepdim``); a 0-D tensor for 1-D inputs.

    Example:
        >>> x = paddle.to_tensor([[1., 3.], [3., 5.]])
        >>> y = paddle.to_tensor([[5., 6.], [7., 8.]])
        >>> F.pairwise_distance(x, y)   # [4.99999860, 4.99999860]
    """
    op = "pairwise_distance"
    x = tensor_arg(x, op, "x")
    y = tensor_arg(y, op, "y")
    if not x.dtype.is_floating_point:
        raise TypeError(f"{op}: 'x' must be a float tensor, but got {x.dtype.name}")
    if y._data.dtype != x._data.dtype:
        if not y.dtype.is_floating_point:
            raise TypeError(f"{op}: 'y' must be a float tensor, but got {y.dtype.name}")
        y = cast_to(y, x._data.dtype)
    if x.ndim == 0 or y.ndim == 0:
        raise ValueError(f"{op}: 'x' and 'y' must have at least 1 dim, but got shapes "
                         f"{x.shape} and {y.shape}")
    try:
        np.broadcast_shapes(tuple(x.shape), tuple(y.shape))
    except ValueError:
        raise ValueError(f"{op}: the shapes of 'x' {x.shape} and 'y' {y.shape} do not "
                         "broadcast") from None
    return apply(_pdist_kernel, x, y, p=float(p), epsilon=float(epsilon), keepdim=bool(keepdim))
