"""Sparse COO and CSR tensors: storage, layout conversions and notebook display.

A sparse tensor keeps its index arrays (plain backend arrays) and its values as an ordinary dense
:class:`~_ops.Tensor`. Every sparse op computes its output pattern from the input indices and
its output values with differentiable dense ops on the input values, so gradients reach the values
(and from there any tensor they were built from) through the normal autograd engine. A sparse
leaf's ``.grad`` is the gradient of its values, shown in the same layout and pattern, as Paddle's.

Dense ops that receive a sparse tensor see its dense form (computed on first use and cached).
"""

from __future__ import annotations

import html

import numpy as np

from paddle_hl import backend
from paddle_hl import tensor as _ops
from paddle_hl.backend import get_array_module as _xp
from paddle_hl.framework import dtype as _dt
from paddle_hl.framework import state
from paddle_hl.framework._printing import format_values
from paddle_hl.framework.op import apply, op
from paddle_hl.framework.tensor import Tensor, _wrap, init_slots

__all__ = []


def _as_values(values, stop_gradient):
    """The values Tensor of a new sparse tensor (a raw array is wrapped, a Tensor kept)."""
    if isinstance(values, Tensor):
        return values.detach() if stop_gradient else values
    return _wrap(values, stop_gradient)


# ---------------------------------------------------------------------- differentiable kernels
@op("gather_kernel", saves=())
def _gather_kernel(v, pos):
    """``v[pos]`` along the first axis; backward scatter-adds into v's shape."""
    n = v.shape[0]

    def bw(g):
        xp = _xp(g)
        out = xp.zeros((n,) + g.shape[1:], dtype=g.dtype)
        _scatter_add(out, pos, g)
        return out, None

    return v[pos], bw


@op("scatter_kernel", saves=())
def _scatter_kernel(v, pos, n):
    """Rows of v placed at ``pos`` of an ``n``-row zero array (duplicates summed)."""
    xp = _xp(v)
    out = xp.zeros((n,) + v.shape[1:], dtype=v.dtype)
    _scatter_add(out, pos, v)

    def bw(g):
        return g[pos], None, None

    return out, bw


def _scatter_add(out, pos, v):
    xp = _xp(out)
    if xp is np:
        if out.ndim == 1 and out.dtype.kind == "f":
            # bincount is an order of magnitude faster than np.add.at on 1-D float data
            out += np.bincount(pos, weights=v, minlength=out.shape[0]).astype(out.dtype)
        else:
            np.add.at(out, pos, v)
    else:
        backend.index_add(out, pos, v)


def gather_values(values: Tensor, pos) -> Tensor:
    """Differentiable ``values[pos]`` (pos: int array)."""
    return apply(_gather_kernel, values, pos)


def scatter_values(values: Tensor, pos, n: int) -> Tensor:
    """Differentiable scatter of ``values`` rows to ``pos`` in ``n`` rows (duplicates summed)."""
    return apply(_scatter_kernel, values, pos, n)


@op("copy_kernel", saves=())
def _copy_kernel(v):
    return v.copy(), lambda g: (g,)


@op("dense_to_values_kernel", saves=())
def _dense_to_values_kernel(arr, idx):
    shape = arr.shape

    def bw(g):
        xp = _xp(g)
        out = xp.zeros(shape, dtype=g.dtype)
        out[idx] = g
        return out, None

    return arr[idx], bw


@op("values_to_dense_kernel", saves=())
def _values_to_dense_kernel(v, idx, shape):
    xp = _xp(v)
    out = xp.zeros(shape, dtype=v.dtype)
    if v.shape[0]:
        backend.index_add(out, idx, v)

    def bw(g):
        return g[idx], None, None

    return out, bw


# ---------------------------------------------------------------------- the classes
class _SparseBase(Tensor):
    """What COO and CSR share: values as a Tensor, autograd through them, dense fallback."""

    _dense = None
    _layout = ""

    def _init(self, values, shape, stop_gradient):
        self._vt = _as_values(values, stop_gradient)
        self._shape = tuple(int(s) for s in shape)
        self._rulebooks = {}  # sparse conv rulebooks, shared by tensors with these indices
        init_slots(self, None, self._vt.stop_gradient)

    # -- storage the dense Tensor machinery reads
    @property
    def _data(self):
        if self._dense is None:
            self._dense = self._to_dense_array(self._vt._data)
        return self._dense

    @_data.setter
    def _data(self, value):
        self._dense = value

    @property
    def _values(self):
        return self._vt._data

    # -- autograd lives on the values tensor
    @property
    def _node(self):
        # A dense op that takes this tensor sees its dense form; so that its gradient reaches
        # the values, that dense form is the (cached) differentiable to_dense() of this tensor
        # and its graph node stands in for ours.
        vt = self._vt
        if vt.stop_gradient or not state.tls.grad_enabled:
            return None
        d = self.__dict__.get("_dense_t")
        if d is None:
            d = self.to_dense()
            self.__dict__["_dense_t"] = d
            self._dense = d._data
        return d._node

    @_node.setter
    def _node(self, value):
        pass  # a sparse tensor is never an op output itself: its values tensor is

    @property
    def _idx(self):
        d = self.__dict__.get("_dense_t")
        return 0 if d is None else d._idx

    @_idx.setter
    def _idx(self, value):
        pass

    @property
    def stop_gradient(self):
        return self._vt.stop_gradient

    @stop_gradient.setter
    def stop_gradient(self, value):
        self._vt.stop_gradient = bool(value)

    @property
    def is_leaf(self) -> bool:
        return self._vt.is_leaf

    @property
    def grad(self):
        g = self._vt.grad
        return None if g is None else self._with_values(g)

    @grad.setter
    def grad(self, value):
        self._vt.grad = None if value is None else value.values() if value.is_sparse() else value

    def backward(self, grad_tensor=None, retain_graph=False):
        """Backpropagate from this sparse tensor (ones on its pattern when no grad is given)."""
        if grad_tensor is not None and isinstance(grad_tensor, _SparseBase):
            grad_tensor = grad_tensor._vt
        self._vt.backward(grad_tensor, retain_graph)

    def clear_gradient(self, *args, **kwargs):
        self._vt.clear_gradient(*args, **kwargs)

    def clear_grad(self, set_to_zero=True):
        self._vt.clear_gradient(set_to_zero)

    def gradient(self):
        g = self.grad
        return None if g is None else g.to_dense().numpy()

    def detach(self):
        return self._with_values(self._vt.detach())

    def register_hook(self, hook):
        """Call ``hook(grad)`` with the gradient of the values when it is computed."""
        return self._vt.register_hook(hook)

    # -- metadata
    @property
    def shape(self) -> list:
        return list(self._shape)

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def dim(self) -> int:
        return len(self._shape)

    @property
    def dtype(self):
        return _dt.from_np(self._values.dtype)

    @property
    def place(self):
        return self._vt.place

    @property
    def type(self):
        return "SPARSE_COO_TENSOR" if self._layout == "coo" else "SPARSE_CSR_TENSOR"

    def is_sparse(self) -> bool:
        return True

    def is_dense(self) -> bool:
        return False

    def nnz(self) -> int:
        """Number of stored entries."""
        return int(self._values.shape[0])

    # -- conversions
    def to_dense(self) -> Tensor:
        """The dense tensor with the same values (differentiable w.r.t. the values)."""
        return apply(_values_to_dense_kernel, self._vt, self._dense_index(), self._shape)

    def values(self) -> Tensor:
        """The stored values, ``[nnz]`` (or ``[nnz, *dense_dims]`` for a hybrid COO tensor)."""
        return apply(_copy_kernel, self._vt)

    def is_same_shape(self, y) -> bool:
        return self.shape == list(y.shape)

    def _to_dense_array(self, values):
        xp = _xp(values)
        out = xp.zeros(self._shape, dtype=values.dtype)
        if values.shape[0]:
            backend.index_add(out, self._dense_index(), values)
        return out

    def density(self) -> float:
        """Stored entries over the number of positions of the sparse dims."""
        n = int(np.prod(self._shape[:self.sparse_dim()])) or 1
        return self.nnz() / n

    # -- notebook display
    def _repr_html_(self):
        name = "COO" if self._layout == "coo" else "CSR"
        head = (f"<b>paddle sparse {name}</b> shape={self.shape} dtype={self.dtype} "
                f"place={html.escape(str(self.place))} stop_gradient={self.stop_gradient}<br>"
                f"nnz={self.nnz()}, density={self.density():.4%}")
        return f"<div>{head}<br>{self._pattern_svg()}</div>"

    def _pattern_svg(self, cells=48):
        """A small SVG of the non-zero pattern: rows x cols of the last two sparse dims, pooled."""
        rows, cols, nr, nc = self._pattern_rc()
        gr, gc = min(nr, cells), min(nc, cells)
        if gr == 0 or gc == 0:
            return ""
        grid = np.zeros((gr, gc), dtype=np.int64)
        np.add.at(grid, (rows * gr // nr, cols * gc // nc), 1)
        px = max(2, 192 // max(gr, gc))
        rects = "".join(f'<rect x="{c * px}" y="{r * px}" width="{px}" height="{px}"/>'
                        for r, c in zip(*np.nonzero(grid)))
        return (f'<svg width="{gc * px}" height="{gr * px}" style="border:1px solid '
                f'var(--jp-border-color1, #999)"><g fill="var(--jp-brand-color1, #1976d2)">'
                f"{rects}</g></svg>")


class SparseCooTensor(_SparseBase):
    """COO layout: ``indices`` ``[sparse_dim, nnz]`` (int64) and ``values`` ``[nnz, ...]``.

    Build one with :func:`paddle_hl.sparse.sparse_coo_tensor` or ``Tensor.to_sparse_coo``.
    """

    _layout = "coo"

    def __init__(self, indices, values, shape, stop_gradient=True):
        self._ix = indices
        self._init(values, shape, stop_gradient)

    def _with_values(self, vt):
        out = SparseCooTensor(self._ix, vt, self._shape, vt.stop_gradient)
        out._rulebooks = self._rulebooks
        return out

    @property
    def _indices(self):
        return self._ix

    def sparse_dim(self) -> int:
        return int(self._ix.shape[0])

    def dense_dim(self) -> int:
        return len(self._shape) - self.sparse_dim()

    def is_sparse_coo(self) -> bool:
        return True

    def is_sparse_csr(self) -> bool:
        return False

    def indices(self) -> Tensor:
        """The ``[sparse_dim, nnz]`` int64 index matrix."""
        return _wrap(self._ix.copy())

    def _dense_index(self):
        return tuple(self._ix[i] for i in range(self._ix.shape[0]))

    def crows(self):
        raise TypeError("Tensor.crows() is defined for sparse CSR tensors; this one is COO "
                        "(convert it with to_sparse_csr)")

    cols = crows

    def coalesce(self, name=None) -> SparseCooTensor:
        """Sort the indices (row-major) and merge duplicates, summing their values."""
        return coalesce_coo(self)

    def to_sparse_csr(self) -> SparseCsrTensor:
        """This COO tensor (sparse in all dims, 2-D or 3-D) in CSR layout."""
        return coo_to_csr(self)

    def to_sparse_coo(self, sparse_dim) -> SparseCooTensor:
        if int(sparse_dim) == self.sparse_dim():
            return self
        return dense_to_coo(self.to_dense(), int(sparse_dim))

    def _pattern_rc(self):
        ix = backend.to_numpy(self._ix)
        sd = ix.shape[0]
        if sd == 1:
            return np.zeros_like(ix[0]), ix[0], 1, self._shape[0]
        lead = int(np.prod(self._shape[:sd - 1]))
        rows = np.ravel_multi_index(tuple(ix[:-1]), self._shape[:sd - 1]) if sd > 2 else ix[0]
        return rows, ix[-1], lead, self._shape[sd - 1]

    def __repr__(self):
        head = (f"Tensor(shape={self.shape}, dtype={self.dtype}, place={self.place}, "
                f"stop_gradient={self.stop_gradient}, \n       ")
        ind = format_values(backend.to_numpy(self._ix), 15)
        val = format_values(backend.to_numpy(self._values), 14)
        return head + f"indices={ind}, \n       values={val})"

    __str__ = __repr__


class SparseCsrTensor(_SparseBase):
    """CSR layout for 2-D (or batched 3-D) tensors: ``crows``, ``cols`` and ``values``.

    For a 3-D tensor ``[B, M, N]`` ``crows`` holds ``B`` row-pointer arrays of ``M + 1`` entries
    one after the other, and ``cols`` / ``values`` the batches' entries in order.
    """

    _layout = "csr"

    def __init__(self, crows, cols, values, shape, stop_gradient=True):
        self._crows = crows
        self._cols = cols
        self._init(values, shape, stop_gradient)

    def _with_values(self, vt):
        return SparseCsrTensor(self._crows, self._cols, vt, self._shape, vt.stop_gradient)

    def sparse_dim(self) -> int:
        return len(self._shape)

    def is_sparse_coo(self) -> bool:
        return False

    def is_sparse_csr(self) -> bool:
        return True

    def crows(self) -> Tensor:
        """Row pointers: ``[M + 1]`` (2-D) or ``[B * (M + 1)]`` (3-D), int64."""
        return _wrap(self._crows.copy())

    def cols(self) -> Tensor:
        """Column index of every stored entry, int64."""
        return _wrap(self._cols.copy())

    def indices(self):
        raise TypeError("Tensor.indices() is defined for sparse COO tensors; this one is CSR "
                        "(convert it with to_sparse_coo)")

    def _rows(self):
        """(batch, row) of every stored entry."""
        xp = _xp(self._cols)
        m = self._shape[-2]
        nb = len(self._shape) == 3 and self._shape[0] or 1
        crows = self._crows.reshape(nb, m + 1)
        counts = xp.diff(crows, axis=1)
        batch = xp.repeat(xp.arange(nb), counts.sum(axis=1))
        rows = xp.repeat(xp.tile(xp.arange(m), nb), counts.ravel())
        return batch, rows

    def _dense_index(self):
        batch, rows = self._rows()
        if len(self._shape) == 3:
            return (batch, rows, self._cols)
        return (rows, self._cols)

    def to_sparse_coo(self, sparse_dim) -> SparseCooTensor:
        """This CSR tensor in COO layout with ``sparse_dim`` sparse dims."""
        sparse_dim = int(sparse_dim)
        if sparse_dim == len(self._shape):
            xp = _xp(self._cols)
            ix = xp.stack(self._dense_index()).astype(np.int64)
            return SparseCooTensor(ix, self._vt, self._shape, self._vt.stop_gradient)
        return dense_to_coo(self.to_dense(), sparse_dim)

    def to_sparse_csr(self) -> SparseCsrTensor:
        return self

    def coalesce(self, name=None):
        return self

    def _pattern_rc(self):
        batch, rows = (backend.to_numpy(a) for a in self._rows())
        m = self._shape[-2]
        return batch * m + rows, backend.to_numpy(self._cols), \
            m * (self._shape[0] if len(self._shape) == 3 else 1), self._shape[-1]

    def __repr__(self):
        head = (f"Tensor(shape={self.shape}, dtype={self.dtype}, place={self.place}, "
                f"stop_gradient={self.stop_gradient}, \n       ")
        parts = [f"crows={format_values(backend.to_numpy(self._crows), 13)}",
                 f"cols={format_values(backend.to_numpy(self._cols), 12)}",
                 f"values={format_values(backend.to_numpy(self._values), 14)}"]
        return head + ", \n       ".join(parts) + ")"

    __str__ = __repr__


# ---------------------------------------------------------------------- conversions
def _check_dense(x, where):
    if not isinstance(x, Tensor):
        x = _ops.to_tensor(x)
    return x


def dense_to_coo(x: Tensor, sparse_dim: int) -> SparseCooTensor:
    """COO form of dense ``x`` with ``sparse_dim`` sparse leading dims (differentiable)."""
    arr = x._data
    xp = _xp(arr)
    if not 0 < sparse_dim <= arr.ndim:
        raise ValueError(f"to_sparse_coo: sparse_dim must be in [1, {arr.ndim}] for a tensor of "
                         f"shape {list(arr.shape)}, got {sparse_dim}")
    lead = arr.reshape(arr.shape[:sparse_dim] + (-1,))
    mask = (lead != 0).any(axis=-1)
    idx = xp.stack(xp.nonzero(mask)).astype(np.int64)
    vals = apply(_dense_to_values_kernel, x, tuple(idx))
    return SparseCooTensor(idx, vals, arr.shape, x.stop_gradient)


def csr_from_keys(keys, shape):
    """crows / cols of a CSR tensor from sorted flat positions ``keys`` in ``shape``."""
    xp = _xp(keys)
    m, n = shape[-2], shape[-1]
    nb = shape[0] if len(shape) == 3 else 1
    rowkey = keys // n
    counts = xp.bincount(rowkey, minlength=nb * m).reshape(nb, m)
    crows = xp.concatenate([xp.zeros((nb, 1), dtype=np.int64),
                            xp.cumsum(counts, axis=1)], axis=1).astype(np.int64).ravel()
    return crows, (keys % n).astype(np.int64)


def dense_to_csr(x: Tensor) -> SparseCsrTensor:
    """CSR form of a dense 2-D or 3-D tensor (differentiable)."""
    arr = x._data
    xp = _xp(arr)
    if arr.ndim not in (2, 3):
        raise ValueError(f"to_sparse_csr: expected a 2-D or 3-D tensor, got shape "
                         f"{list(arr.shape)}")
    keys = xp.flatnonzero(arr)
    crows, cols = csr_from_keys(keys, arr.shape)
    vals = apply(_dense_to_values_kernel, x, xp.unravel_index(keys, arr.shape))
    return SparseCsrTensor(crows, cols, vals, arr.shape, x.stop_gradient)


def coo_to_csr(x: SparseCooTensor) -> SparseCsrTensor:
    """CSR form of a COO tensor that is sparse in all of its 2 or 3 dims."""
    if len(x._shape) not in (2, 3) or x.sparse_dim() != len(x._shape):
        raise ValueError(f"to_sparse_csr: the COO tensor must be 2-D or 3-D and sparse in every "
                         f"dim, got shape {x.shape} with sparse_dim {x.sparse_dim()}")
    c = coalesce_coo(x)
    xp = _xp(c._ix)
    keys = xp.ravel_multi_index(tuple(c._ix), c._shape) if c.nnz() else c._ix[0]
    crows, cols = csr_from_keys(keys, c._shape)
    return SparseCsrTensor(crows, cols, c._vt, c._shape, c._vt.stop_gradient)


def flat_keys(x):
    """Row-major flat position (over the sparse dims) of every stored entry of ``x``."""
    xp = _xp(x._values)
    if x.nnz() == 0:
        return xp.zeros([0], dtype=np.int64)
    sd = x.sparse_dim()
    return xp.ravel_multi_index(x._dense_index(), x._shape[:sd]).astype(np.int64)


def coalesce_coo(x: SparseCooTensor) -> SparseCooTensor:
    """``x`` with its indices sorted (row-major) and duplicates merged, their values summed;
    ``x`` itself when it is already so (gradients flow back to x's values)."""
    keys = flat_keys(x)
    xp = _xp(keys)
    uniq, inv = xp.unique(keys, return_inverse=True)
    if uniq.shape[0] == keys.shape[0] and bool((xp.diff(keys) > 0).all()):
        return x
    vals = scatter_values(x._vt, inv.ravel(), int(uniq.shape[0]))
    return from_keys(uniq, vals, x)


def from_keys(keys, values, like, shape=None):
    """A tensor of ``like``'s layout with entries at sorted flat ``keys`` and ``values``."""
    shape = tuple(like._shape if shape is None else shape)
    xp = _xp(keys)
    if like._layout == "csr":
        crows, cols = csr_from_keys(keys, shape)
        return SparseCsrTensor(crows, cols, values, shape, values.stop_gradient)
    sd = like.sparse_dim()
    ix = xp.stack(xp.unravel_index(keys, shape[:sd])).astype(np.int64) if keys.size else \
        xp.zeros((sd, 0), dtype=np.int64)
    return SparseCooTensor(ix, values, shape, values.stop_gradient)


def to_sparse_coo(self, sparse_dim) -> SparseCooTensor:
    """Convert a dense tensor to COO with ``sparse_dim`` sparse leading dims."""
    return dense_to_coo(self, int(sparse_dim))


def to_sparse_csr(self) -> SparseCsrTensor:
    """Convert a dense 2-D/3-D tensor to CSR."""
    return dense_to_csr(self)
