"""Sparse COO and CSR tensors (the storage behind ``Tensor.to_sparse_coo`` / ``to_sparse_csr``).

A sparse tensor keeps its indices and values; dense ops that receive one see its dense form,
computed on first use and cached, so every Tensor op accepts sparse input.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from . import dtype as _dt
from ._printing import format_values
from .tensor import Tensor, _wrap, init_slots

__all__ = []


class _SparseBase(Tensor):
    _dense = None

    @property
    def _data(self):
        if self._dense is None:
            self._dense = self._to_dense_array()
        return self._dense

    @_data.setter
    def _data(self, value):
        self._dense = value

    def is_sparse(self) -> bool:
        return True

    def is_dense(self) -> bool:
        return False

    def to_dense(self) -> Tensor:
        """The dense tensor with the same values."""
        return _wrap(self._to_dense_array().copy(), self.stop_gradient)

    def values(self) -> Tensor:
        """The stored non-zero values, 1-D (or ``[nnz, *dense_dims]``)."""
        return _wrap(self._values)

    def nnz(self) -> int:
        """Number of stored entries."""
        return int(self._values.shape[0])

    @property
    def shape(self):
        return list(self._shape)

    @property
    def dtype(self):
        return _dt.from_np(self._values.dtype)


class SparseCooTensor(_SparseBase):
    """COO layout: ``indices`` of shape ``[sparse_dim, nnz]`` and ``values`` ``[nnz, ...]``."""

    def __init__(self, indices, values, shape, stop_gradient=True):
        self._indices = indices
        self._values = values
        self._shape = tuple(shape)
        init_slots(self, None, stop_gradient)  # the dense form is computed on first use

    def is_sparse_coo(self) -> bool:
        return True

    def is_sparse_csr(self) -> bool:
        return False

    def indices(self) -> Tensor:
        """The ``[sparse_dim, nnz]`` int64 index matrix."""
        return _wrap(self._indices)

    def _to_dense_array(self):
        xp = backend.get_array_module(self._values)
        out = xp.zeros(self._shape, dtype=self._values.dtype)
        if self._values.shape[0]:
            idx = tuple(self._indices[i] for i in range(self._indices.shape[0]))
            if xp is np:
                np.add.at(out, idx, self._values)
            else:
                out.scatter_add(idx, self._values)
        return out

    def coalesce(self, name=None) -> SparseCooTensor:
        """Sort the indices and merge duplicates (their values are summed)."""
        xp = backend.get_array_module(self._values)
        sd = self._indices.shape[0]
        flat = xp.ravel_multi_index(tuple(self._indices), self._shape[:sd])
        uniq, inv = xp.unique(flat, return_inverse=True)
        vals = xp.zeros((uniq.shape[0],) + self._values.shape[1:], dtype=self._values.dtype)
        if xp is np:
            np.add.at(vals, inv.ravel(), self._values)
        else:
            vals.scatter_add(inv.ravel(), self._values)
        idx = xp.stack(xp.unravel_index(uniq, self._shape[:sd])).astype(np.int64)
        return SparseCooTensor(idx, vals, self._shape, self.stop_gradient)

    def to_sparse_csr(self) -> SparseCsrTensor:
        return dense_to_csr(self._to_dense_array(), self.stop_gradient)

    def __repr__(self):
        head = (f"Tensor(shape={self.shape}, dtype={self.dtype}, place={self.place}, "
                f"stop_gradient={self.stop_gradient}, \n       ")
        ind = format_values(backend.to_numpy(self._indices), 15)
        val = format_values(backend.to_numpy(self._values), 14)
        return head + f"indices={ind}, \n       values={val})"

    __str__ = __repr__


class SparseCsrTensor(_SparseBase):
    """CSR layout for 2-D (or batched 3-D) tensors: ``crows``, ``cols`` and ``values``."""

    def __init__(self, crows, cols, values, shape, stop_gradient=True):
        self._crows = crows
        self._cols = cols
        self._values = values
        SparseCooTensor.__init__(self, None, values, shape, stop_gradient)

    def is_sparse_coo(self) -> bool:
        return False

    def is_sparse_csr(self) -> bool:
        return True

    def crows(self) -> Tensor:
        return _wrap(self._crows)

    def cols(self) -> Tensor:
        return _wrap(self._cols)

    def _to_dense_array(self):
        xp = backend.get_array_module(self._values)
        rows_per = self._shape[-2]
        out = xp.zeros(self._shape, dtype=self._values.dtype)
        flat = out.reshape(-1, rows_per, self._shape[-1])
        nb = flat.shape[0]
        crows = self._crows.reshape(nb, rows_per + 1)
        counts = xp.diff(crows, axis=1)
        batch = xp.repeat(xp.arange(nb), counts.sum(axis=1))
        rows = xp.repeat(xp.tile(xp.arange(rows_per), nb), counts.ravel())
        flat[batch, rows, self._cols] = self._values
        return out

    def to_sparse_coo(self, sparse_dim) -> SparseCooTensor:
        return dense_to_coo(self._to_dense_array(), sparse_dim, self.stop_gradient)

    def __repr__(self):
        head = (f"Tensor(shape={self.shape}, dtype={self.dtype}, place={self.place}, "
                f"stop_gradient={self.stop_gradient}, \n       ")
        parts = [f"crows={format_values(backend.to_numpy(self._crows), 13)}",
                 f"cols={format_values(backend.to_numpy(self._cols), 12)}",
                 f"values={format_values(backend.to_numpy(self._values), 14)}"]
        return head + ", \n       ".join(parts) + ")"

    __str__ = __repr__


def dense_to_coo(arr, sparse_dim, stop_gradient=True) -> SparseCooTensor:
    xp = backend.get_array_module(arr)
    if not 0 < sparse_dim <= arr.ndim:
        raise ValueError(f"to_sparse_coo: sparse_dim must be in [1, {arr.ndim}] for a tensor of "
                         f"shape {list(arr.shape)}, got {sparse_dim}")
    lead = arr.reshape(arr.shape[:sparse_dim] + (-1,))
    mask = (lead != 0).any(axis=-1)
    idx = xp.stack(xp.nonzero(mask)).astype(np.int64)
    vals = arr[tuple(idx)]
    return SparseCooTensor(idx, vals, arr.shape, stop_gradient)


def dense_to_csr(arr, stop_gradient=True) -> SparseCsrTensor:
    xp = backend.get_array_module(arr)
    if arr.ndim not in (2, 3):
        raise ValueError(f"to_sparse_csr: expected a 2-D or 3-D tensor, got shape "
                         f"{list(arr.shape)}")
    flat = arr.reshape(-1, arr.shape[-2], arr.shape[-1])
    mask = flat != 0
    counts = mask.sum(axis=2)
    crows = xp.concatenate([xp.zeros((flat.shape[0], 1), dtype=np.int64),
                            xp.cumsum(counts, axis=1)], axis=1).astype(np.int64).ravel()
    b, _, c = xp.nonzero(mask)
    return SparseCsrTensor(crows, c.astype(np.int64), flat[mask], arr.shape, stop_gradient)


def to_sparse_coo(self, sparse_dim) -> SparseCooTensor:
    """Convert a dense tensor to COO with ``sparse_dim`` sparse leading dims."""
    return dense_to_coo(self._data, int(sparse_dim), self.stop_gradient)


def to_sparse_csr(self) -> SparseCsrTensor:
    """Convert a dense 2-D/3-D tensor to CSR."""
    return dense_to_csr(self._data, self.stop_gradient)
