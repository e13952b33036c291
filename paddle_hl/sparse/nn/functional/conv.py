"""Sparse convolutions: ``conv2d``/``conv3d`` and the submanifold ``subm_conv2d``/``subm_conv3d``.

Inputs are COO tensors in channel-last layout (``NHWC`` / ``NDHWC``): indices over
``[batch, *spatial]`` and values ``[nnz, C]``. The weight is ``[*kernel, C_in, C_out]`` as
Paddle's. Each op builds (or reuses, through ``key``) a rulebook, gathers the ``[n_out, K, C_in]``
patches in one indexing call and multiplies them by the ``[K * C_in, C_out]`` weight in one GEMM;
when most (site, offset) slots are empty it runs one small GEMM per offset over the connected
pairs instead (spconv's gather-GEMM-scatter).
"""

from __future__ import annotations

import numpy as np

from paddle_hl import backend
from paddle_hl import tensor as _ops
from paddle_hl.backend import tuning
from paddle_hl.framework.op import apply, op
from paddle_hl.framework.state import is_grad_enabled
from paddle_hl.framework.tensor import Tensor

from ..._tensor import SparseCooTensor
from ...unary import coalesce, require_sparse
from . import _rulebook

__all__ = []


def _ntuple(v, nd, where, arg):
    if isinstance(v, Tensor):
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        if len(v) != nd or not all(isinstance(i, (int, np.integer)) for i in v):
            raise ValueError(f"{where}: {arg} must be an int or {nd} ints, got {v!r}")
        return [int(i) for i in v]
    if not isinstance(v, (int, np.integer)):
        raise ValueError(f"{where}: {arg} must be an int or {nd} ints, got {v!r}")
    return [int(v)] * nd


@op("conv_kernel", saves=(1,))
def _conv_kernel(v, w, table, n_in, symmetric, need_v=True):
    xp = backend.get_array_module(v)
    kk, cin, cout = w.shape
    n_out = table.shape[0]
    vp = xp.concatenate([v, xp.zeros((1, cin), dtype=v.dtype)])
    col = vp[table].reshape(n_out, kk * cin)
    wf = w.reshape(kk * cin, cout)
    out = col @ wf

    def bw(g):
        # a broadcast gradient (from a sum) has zero strides, which BLAS cannot take
        g = xp.ascontiguousarray(g)
        gw = (col.T @ g).reshape(w.shape)
        if not need_v:  # e.g. the first layer: its input features need no gradient
            gv = None
        elif symmetric:
            # submanifold with a centred kernel: input p meets output q at offset k exactly
            # when q meets p at the mirrored offset, so the input gradient is a gather through
            # the mirrored table times the transposed taps: one more GEMM, no scatter
            gp = xp.concatenate([g, xp.zeros((1, cout), dtype=g.dtype)])
            gcol = gp[table[:, ::-1]].reshape(n_in, kk * cout)
            gv = gcol @ xp.ascontiguousarray(w.transpose(0, 2, 1)).reshape(kk * cout, cin)
        else:
            # a transposed (F-ordered) right operand sends NumPy off its fast BLAS path for
            # these shapes: make it contiguous first
            gcol = (g @ xp.ascontiguousarray(wf.T)).reshape(n_out, kk, cin)
            gvp = xp.zeros((n_in + 1, cin), dtype=g.dtype)
            for k in range(kk):
                # per offset every input row occurs at most once; only the padding row repeats
                gvp[table[:, k]] += gcol[:, k]
            gv = gvp[:n_in]
        return gv, gw, None, None, None, None

    return out, bw


def _conv_pairs_kernel(v, w, pairs, n_out, need_v=True):
    xp = backend.get_array_module(v)
    out = xp.zeros((n_out, w.shape[2]), dtype=xp.result_type(v, w))
    for k, (i, o) in enumerate(pairs):
        if i.shape[0]:
            # one output row per input row at a given offset: a plain fancy += is exact
            out[o] += v[i] @ w[k]

    def bw(g):
        g = xp.ascontiguousarray(g)  # zero strides (a broadcast gradient) defeat BLAS
        gw = xp.zeros_like(w)
        gv = xp.zeros_like(v) if need_v else None
        wt = xp.ascontiguousarray(w.transpose(0, 2, 1))  # F-ordered operands are slow here
        for k, (i, o) in enumerate(pairs):
            if i.shape[0]:
                go = g[o]
                gw[k] = v[i].T @ go
                if need_v:
                    gv[i] += go @ wt[k]
        return gv, gw, None, None, None

    return out, bw


# below this share of filled (output, offset) slots the per-offset pair lists beat the dense
# [n_out, K, C] patch matrix: most of its rows would be the zero padding row
_PAIRS_BELOW = tuning.value("sparse.pairs_below")


def _conv(x, weight, bias, stride, padding, dilation, groups, data_format, key, nd, subm, op):
    require_sparse(x, op)
    fmt = "NDHWC" if nd == 3 else "NHWC"
    if data_format != fmt:
        raise ValueError(f"paddle.sparse.nn.functional.{op}: data_format must be {fmt!r}, got "
                         f"{data_format!r}")
    if not x.is_sparse_coo() or x.sparse_dim() != nd + 1 or len(x.shape) != nd + 2:
        raise ValueError(f"paddle.sparse.nn.functional.{op}: x must be a COO tensor [N, "
                         f"{'D, ' if nd == 3 else ''}H, W, C] sparse in its first {nd + 1} dims, "
                         f"got shape {x.shape}" + (f" with sparse_dim {x.sparse_dim()}"
                                                   if x.is_sparse_coo() else " (CSR)"))
    if groups != 1:
        raise ValueError(f"paddle.sparse.nn.functional.{op}: only groups=1 is supported (as in "
                         f"Paddle), got {groups}")
    if not isinstance(weight, Tensor) or weight.ndim != nd + 2:
        raise ValueError(f"paddle.sparse.nn.functional.{op}: weight must be a dense "
                         f"[{'kd, ' if nd == 3 else ''}kh, kw, C_in, C_out] tensor, got "
                         f"{getattr(weight, 'shape', type(weight).__name__)}")
    cin = x.shape[-1]
    if weight.shape[-2] != cin:
        raise ValueError(f"paddle.sparse.nn.functional.{op}: x has {cin} channels but weight "
                         f"{weight.shape} expects {weight.shape[-2]}")
    ksize = weight.shape[:nd]
    stride = _ntuple(stride, nd, op, "stride")
    if isinstance(padding, str):
        raise ValueError(f"paddle.sparse.nn.functional.{op}: padding must be an int or {nd} "
                         f"ints, got {padding!r}")
    padding = _ntuple(padding, nd, op, "padding")
    dilation = _ntuple(dilation, nd, op, "dilation")
    x = coalesce(x)
    rb = x._rulebooks.get(key) if (subm and key is not None) else None
    if rb is not None and rb.table.shape[1] != int(np.prod(ksize)):
        raise ValueError(f"paddle.sparse.nn.functional.{op}: the rulebook stored under key "
                         f"{key!r} is for a {rb.table.shape[1]}-tap kernel, this weight has "
                         f"{int(np.prod(ksize))} taps ({ksize}); use another key")
    if rb is None:
        rb = _rulebook.build(x._ix, x.shape[0], x.shape[1:1 + nd], ksize, stride, padding,
                             dilation, subm)
        if subm and key is not None:
            x._rulebooks[key] = rb
    w = _ops.reshape(weight, [-1, cin, weight.shape[-1]])
    need_v = not x._vt.stop_gradient and is_grad_enabled()
    if rb.fill() < _PAIRS_BELOW:
        vals = apply(_conv_pairs_kernel, x._vt, w, rb.pairs(), rb.table.shape[0], need_v)
    else:
        vals = apply(_conv_kernel, x._vt, w, rb.table, rb.n_in, rb.symmetric, need_v)
    if bias is not None:
        vals = _ops.add(vals, bias)
    shape = [x.shape[0]] + list(rb.out_spatial) + [weight.shape[-1]]
    out = SparseCooTensor(rb.out_ix, vals, shape, vals.stop_gradient)
    if subm:
        out._rulebooks = x._rulebooks  # same sites: later layers may reuse the rulebook
    return out


def conv3d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format="NDHWC",
           name=None):
    """Sparse 3-D convolution: an output site wherever the kernel covers an input site.

    Args:
        x (Tensor): sparse COO ``[N, D, H, W, C_in]`` (sparse in N, D, H, W).
        weight (Tensor): ``[kd, kh, kw, C_in, C_out]``.
        bias (Tensor, optional): ``[C_out]``.
        stride (int|list): Default 1.
        padding (int|list): Default 0.
        dilation (int|list): Default 1.
        groups (int): must be 1.
        data_format (str): 'NDHWC'.
        name (str, optional): unused.

    Returns:
        Tensor: sparse COO ``[N, D_out, H_out, W_out, C_out]``, coalesced.

    Example:
        >>> x = paddle.sparse.sparse_coo_tensor([[0], [1], [1], [1]], [[1.0]], [1, 3, 3, 3, 1])
        >>> y = paddle.sparse.nn.functional.conv3d(x, paddle.ones([3, 3, 3, 1, 2]), padding=1)
    """
    return _conv(x, weight, bias, stride, padding, dilation, groups, data_format, None, 3, False,
                 "conv3d")


def subm_conv3d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1,
                data_format="NDHWC", key=None, name=None):
    """Submanifold sparse 3-D convolution: outputs only at the input's active sites.

    Args:
        x (Tensor): sparse COO ``[N, D, H, W, C_in]``.
        weight (Tensor): ``[kd, kh, kw, C_in, C_out]``.
        bias (Tensor, optional): ``[C_out]``.
        stride (int|list): Default 1 (the sites do not move).
        padding (int|list): accepted for Paddle's signature; as in Paddle the kernel is
            centred on each site whatever the padding.
        dilation (int|list): Default 1.
        groups (int): must be 1.
        data_format (str): 'NDHWC'.
        key (str, optional): reuse the rulebook built under this key for the same sites.
        name (str, optional): unused.

    Returns:
        Tensor: sparse COO with x's indices and ``C_out`` channels.

    Example:
        >>> x = paddle.sparse.sparse_coo_tensor([[0], [1], [1], [1]], [[1.0]], [1, 3, 3, 3, 1])
        >>> y = paddle.sparse.nn.functional.subm_conv3d(x, paddle.ones([3, 3, 3, 1, 2]),
        ...                                             padding=1)
    """
    return _conv(x, weight, bias, stride, padding, dilation, groups, data_format, key, 3, True,
                 "subm_conv3d")


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format="NHWC",
           name=None):
    """Sparse 2-D convolution (see :func:`conv3d`) on ``[N, H, W, C]`` COO input.

    Args:
        x (Tensor): sparse COO ``[N, H, W, C_in]``.
        weight (Tensor): ``[kh, kw, C_in, C_out]``.
        bias (Tensor, optional): ``[C_out]``.
        stride (int|list): Default 1.
        padding (int|list): Default 0.
        dilation (int|list): Default 1.
        groups (int): must be 1.
        data_format (str): 'NHWC'.
        name (str, optional): unused.

    Returns:
        Tensor: sparse COO ``[N, H_out, W_out, C_out]``.

    Example:
        >>> x = paddle.sparse.sparse_coo_tensor([[0], [1], [1]], [[1.0]], [1, 3, 3, 1])
        >>> y = paddle.sparse.nn.functional.conv2d(x, paddle.ones([3, 3, 1, 2]))
    """
    return _conv(x, weight, bias, stride, padding, dilation, groups, data_format, None, 2, False,
                 "conv2d")


def subm_conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1,
                data_format="NHWC", key=None, name=None):
    """Submanifold sparse 2-D convolution (see :func:`subm_conv3d`).

    Args:
        x (Tensor): sparse COO ``[N, H, W, C_in]``.
        weight (Tensor): ``[kh, kw, C_in, C_out]``.
        bias (Tensor, optional): ``[C_out]``.
        stride (int|list): Default 1.
        padding (int|list): accepted for Paddle's signature (the kernel is centred).
        dilation (int|list): Default 1.
        groups (int): must be 1.
        data_format (str): 'NHWC'.
        key (str, optional): reuse the rulebook built under this key.
        name (str, optional): unused.

    Returns:
        Tensor: sparse COO with x's indices and ``C_out`` channels.

    Example:
        >>> x = paddle.sparse.sparse_coo_tensor([[0], [1], [1]], [[1.0]], [1, 3, 3, 1])
        >>> y = paddle.sparse.nn.functional.subm_conv2d(x, paddle.ones([3, 3, 1, 2]), padding=1)
    """
    return _conv(x, weight, bias, stride, padding, dilation, groups, data_format, key, 2, True,
                 "subm_conv2d")
