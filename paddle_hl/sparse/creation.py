"""Building sparse tensors from their parts: ``sparse_coo_tensor`` and ``sparse_csr_tensor``."""

from __future__ import annotations

import numpy as np

from paddle_hl import backend
from paddle_hl.framework import dtype as _dt
from paddle_hl.framework.tensor import Tensor, to_array

from ._tensor import SparseCooTensor, SparseCsrTensor

__all__ = []


def _index_array(a, where, arg, place):
    arr = to_array(a, None, place, where)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{where}: {arg} must hold integers, got dtype {arr.dtype}")
    return arr.astype(np.int64, copy=False)


def _values_tensor(values, dtype, place, where, stop_gradient):
    if isinstance(values, Tensor):
        v = values if dtype is None or values.dtype == _dt.convert(dtype) else values.astype(dtype)
        if place is not None:
            v = Tensor(v._data, place=place, stop_gradient=v.stop_gradient) if \
                str(v.place) != str(place) else v
        return v if not stop_gradient else v.detach()
    return Tensor(to_array(values, dtype, place, where), stop_gradient=stop_gradient)


def sparse_coo_tensor(indices, values, shape=None, dtype=None, place=None, stop_gradient=True):
    """A sparse COO tensor from its ``indices`` and ``values``.

    Entries are kept as given (duplicates and order included); call ``coalesce`` to sort and merge.

    Args:
        indices (list|ndarray|Tensor): ``[sparse_dim, nnz]`` integer indices.
        values (list|ndarray|Tensor): ``[nnz]`` or ``[nnz, *dense_dims]`` values. A Tensor that
            needs gradients keeps its graph when ``stop_gradient`` is False.
        shape (list, optional): the dense shape; inferred from the largest index when None.
        dtype (str|paddle.dtype, optional): the values' dtype.
        place (Place, optional): where to keep the tensor.
        stop_gradient (bool): Default True.

    Returns:
        Tensor: a sparse COO tensor.

    Example:
        >>> x = paddle.sparse.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 2])
        >>> x.to_dense().numpy().tolist()
        [[0.0, 1.0], [2.0, 0.0]]
    """
    where = "sparse_coo_tensor"
    idx = _index_array(indices, where, "indices", place)
    if idx.ndim != 2:
        raise ValueError(f"{where}: indices must be 2-D [sparse_dim, nnz], got shape "
                         f"{list(idx.shape)}")
    v = _values_tensor(values, dtype, place, where, stop_gradient)
    nnz = idx.shape[1]
    if v.ndim == 0 or v.shape[0] != nnz:
        raise ValueError(f"{where}: values must have nnz={nnz} rows (one per column of "
                         f"indices), got shape {v.shape}")
    sd = idx.shape[0]
    xp = backend.get_array_module(idx)
    if shape is None:
        if nnz == 0:
            raise ValueError(f"{where}: shape is required when there are no entries")
        shape = [int(m) + 1 for m in xp.max(idx, axis=1).tolist()] + v.shape[1:]
    shape = [int(s) for s in shape]
    if len(shape) != sd + v.ndim - 1:
        raise ValueError(f"{where}: shape {shape} has {len(shape)} dims but indices give "
                         f"{sd} sparse dims and values {v.ndim - 1} dense dims")
    if list(v.shape[1:]) != shape[sd:]:
        raise ValueError(f"{where}: values shape {v.shape} does not match the dense dims "
                         f"{shape[sd:]} of shape {shape}")
    if nnz:
        lo = xp.min(idx, axis=1)
        hi = xp.max(idx, axis=1)
        for d in range(sd):
            if int(lo[d]) < 0 or int(hi[d]) >= shape[d]:
                raise ValueError(f"{where}: indices of dim {d} must be in [0, {shape[d]}) for "
                                 f"shape {shape}, got values in [{int(lo[d])}, {int(hi[d])}]")
    return SparseCooTensor(idx, v, shape, v.stop_gradient)


def sparse_csr_tensor(crows, cols, values, shape, dtype=None, place=None, stop_gradient=True):
    """A sparse CSR tensor (2-D, or batched 3-D) from ``crows``, ``cols`` and ``values``.

    Args:
        crows (list|ndarray|Tensor): row pointers, ``[M + 1]`` or ``[B * (M + 1)]``.
        cols (list|ndarray|Tensor): ``[nnz]`` column indices, increasing within each row.
        values (list|ndarray|Tensor): ``[nnz]`` values.
        shape (list): ``[M, N]`` or ``[B, M, N]``.
        dtype (str|paddle.dtype, optional): the values' dtype.
        place (Place, optional): where to keep the tensor.
        stop_gradient (bool): Default True.

    Returns:
        Tensor: a sparse CSR tensor.

    Example:
        >>> x = paddle.sparse.sparse_csr_tensor([0, 1, 2], [1, 0], [1.0, 2.0], [2, 2])
        >>> x.to_dense().numpy().tolist()
        [[0.0, 1.0], [2.0, 0.0]]
    """
    where = "sparse_csr_tensor"
    cr = _index_array(crows, where, "crows", place)
    cl = _index_array(cols, where, "cols", place)
    v = _values_tensor(values, dtype, place, where, stop_gradient)
    shape = [int(s) for s in shape]
    if len(shape) not in (2, 3):
        raise ValueError(f"{where}: shape must be 2-D [M, N] or 3-D [B, M, N], got {shape}")
    if cr.ndim != 1 or cl.ndim != 1 or v.ndim != 1:
        raise ValueError(f"{where}: crows, cols and values must be 1-D, got shapes "
                         f"{list(cr.shape)}, {list(cl.shape)}, {v.shape}")
    m, n = shape[-2], shape[-1]
    nb = shape[0] if len(shape) == 3 else 1
    if cr.shape[0] != nb * (m + 1):
        raise ValueError(f"{where}: crows must have {nb} x (M + 1) = {nb * (m + 1)} entries for "
                         f"shape {shape}, got {cr.shape[0]}")
    if cl.shape[0] != v.shape[0]:
        raise ValueError(f"{where}: cols ({cl.shape[0]}) and values ({v.shape[0]}) must have "
                         "the same length")
    xp = backend.get_array_module(cr)
    per = cr.reshape(nb, m + 1)
    if bool((per[:, 0] != 0).any()) or bool((xp.diff(per, axis=1) < 0).any()):
        raise ValueError(f"{where}: crows must start at 0 and be non-decreasing in each batch, "
                         f"got {backend.to_numpy(cr).tolist()[:20]}")
    if int(per[:, -1].sum()) != cl.shape[0]:
        raise ValueError(f"{where}: the last row pointer(s) say {int(per[:, -1].sum())} entries "
                         f"but cols has {cl.shape[0]}")
    if cl.shape[0]:
        if int(cl.min()) < 0 or int(cl.max()) >= n:
            raise ValueError(f"{where}: cols must be in [0, {n}) for shape {shape}, got values "
                             f"in [{int(cl.min())}, {int(cl.max())}]")
        counts = xp.diff(per, axis=1).ravel()
        row = xp.repeat(xp.arange(nb * m), counts)
        key = row * n + cl
        if bool((xp.diff(key) <= 0).any()):
            raise ValueError(f"{where}: cols must be sorted and unique within each row "
                             "(unsorted CSR input)")
    return SparseCsrTensor(cr, cl, v, shape, v.stop_gradient)
