"""Sparse 3-D max pooling over the rulebook of a strided sparse convolution."""

from __future__ import annotations

from paddle_hl import backend
from paddle_hl.framework.op import apply, op

from ..._tensor import SparseCooTensor
from ...unary import coalesce, require_sparse
from . import _rulebook
from .conv import _ntuple

__all__ = []


@op("pool_kernel", saves=())
def _pool_kernel(v, table, n_in):
    xp = backend.get_array_module(v)
    c = v.shape[1]
    vp = xp.concatenate([v, xp.full((1, c), -xp.inf, dtype=v.dtype)])
    col = vp[table]  # [n_out, K, C]; a missing tap reads -inf
    am = col.argmax(axis=1)
    out = xp.take_along_axis(col, am[:, None, :], axis=1)[:, 0]

    def bw(g):
        src = xp.take_along_axis(table, am, axis=1)  # input row of each output's maximum
        flat = (src * c + xp.arange(c)).ravel()
        gv = xp.bincount(flat, weights=g.ravel(), minlength=(n_in + 1) * c)
        return gv[: n_in * c].reshape(n_in, c).astype(g.dtype), None, None

    return out, bw


def max_pool3d(x, kernel_size, stride=None, padding=0, ceil_mode=False, data_format="NDHWC",
               name=None):
    """Max pooling of a sparse ``[N, D, H, W, C]`` COO tensor over its active sites.

    An output site exists where the window covers at least one active input site; its value is
    the maximum over the active sites in the window (absent sites do not count as zeros).

    Args:
        x (Tensor): sparse COO ``[N, D, H, W, C]``.
        kernel_size (int|list): window size.
        stride (int|list, optional): Default: kernel_size.
        padding (int|list): Default 0.
        ceil_mode (bool): round the output size up. Default False.
        data_format (str): 'NDHWC'.
        name (str, optional): unused.

    Returns:
        Tensor: sparse COO ``[N, D_out, H_out, W_out, C]``.

    Example:
        >>> x = paddle.rand([1, 4, 4, 4, 2]).to_sparse_coo(4)
        >>> y = paddle.sparse.nn.functional.max_pool3d(x, 2)
    """
    op = "max_pool3d"
    require_sparse(x, op)
    if data_format != "NDHWC":
        raise ValueError(f"paddle.sparse.nn.functional.{op}: data_format must be 'NDHWC', got "
                         f"{data_format!r}")
    if not x.is_sparse_coo() or x.sparse_dim() != 4 or len(x.shape) != 5:
        raise ValueError(f"paddle.sparse.nn.functional.{op}: x must be a COO tensor "
                         f"[N, D, H, W, C] sparse in its first 4 dims, got shape {x.shape}")
    ksize = _ntuple(kernel_size, 3, op, "kernel_size")
    stride = ksize if stride is None else _ntuple(stride, 3, op, "stride")
    padding = _ntuple(padding, 3, op, "padding")
    x = coalesce(x)
    spatial = list(x.shape[1:4])
    if ceil_mode:
        # extra right padding so that a last partial window counts
        for d in range(3):
            rem = (spatial[d] + 2 * padding[d] - ksize[d]) % stride[d]
            if rem:
                spatial[d] += stride[d] - rem
    rb = _rulebook.build(x._ix, x.shape[0], spatial, ksize, stride, padding, [1, 1, 1], False)
    vals = apply(_pool_kernel, x._vt, rb.table, rb.n_in)
    shape = [x.shape[0]] + list(rb.out_spatial) + [x.shape[-1]]
    return SparseCooTensor(rb.out_ix, vals, shape, vals.stop_gradient)
