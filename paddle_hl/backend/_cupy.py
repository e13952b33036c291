"""CuPy (GPU) kernels for the window ops, under the same names as ``backend/_numpy.py``.

The window algorithms of ``_numpy`` are written against the array module of their inputs
(``for_array(arr).xp``): strided views, one contiguous copy per im2col and one vectorised
strided add per kernel offset map one-to-one onto CuPy's element-wise kernels and cuBLAS, so
they are shared. What differs per backend lives here: the strided-view constructor and the
scatter-add (``cupyx.scatter_add``, an atomic add, instead of NumPy's ``bincount``).

This module is imported only when a CuPy array reaches a window op, so importing paddle_hl never
imports CuPy.
"""

from __future__ import annotations

import sys

import cupy
import cupyx

from . import _numpy as _np_kernels

__all__ = []

xp = cupy

out_slices = _np_kernels.out_slices
kernel_offsets = _np_kernels.kernel_offsets
pad = _np_kernels.pad
crop = _np_kernels.crop
windows = _np_kernels.windows
im2col = _np_kernels.im2col
col2im = _np_kernels.col2im
col2im_flat = _np_kernels.col2im_flat
im2col_nin = _np_kernels.im2col_nin
col2im_nin = _np_kernels.col2im_nin
depthwise_forward = _np_kernels.depthwise_forward
depthwise_input_grad = _np_kernels.depthwise_input_grad
depthwise_weight_grad = _np_kernels.depthwise_weight_grad
max_pool = _np_kernels.max_pool
max_pool_grad = _np_kernels.max_pool_grad
sum_pool = _np_kernels.sum_pool
sum_pool_grad = _np_kernels.sum_pool_grad


def for_array(arr):
    """The kernel module for ``arr`` (this one for CuPy arrays)."""
    if isinstance(arr, cupy.ndarray):
        return sys.modules[__name__]
    return _np_kernels


def _as_strided(a, shape, strides):
    # CuPy views carry byte strides exactly as NumPy's do
    return cupy.lib.stride_tricks.as_strided(a, shape=shape, strides=strides)


def scatter_add(size, index, values):
    """A length-``size`` vector with ``values`` summed at ``index`` (atomic adds on the GPU)."""
    out = cupy.zeros(size, dtype=values.dtype)
    cupyx.scatter_add(out, index, values)
    return out


_np_kernels._gpu_kernels = sys.modules[__name__]
