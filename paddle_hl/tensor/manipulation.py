"""Shape and layout ops, gather/scatter, indexing and ``__setitem__`` (Paddle's
``tensor/manipulation.py``).

reshape, squeeze, unsqueeze, flatten, view, as_strided, unfold, unbind, transpose and basic
indexing return *views*: they share storage and the inplace version counter with their input,
as in Paddle 2.6. Gathers (advanced indexing, gather, index_select, take, ...) return copies.

Most gathers and scatters are written with two kernel pairs on a NumPy index tuple: ``x[idx]``
(:func:`_gather_kernel`) and the write ``x[idx] = v`` / ``x[idx] += v`` (:func:`_put_kernel`).
Their gradients are each other, so every op built on them gets a higher-order rule for free.

Every kernel here is linear in its differentiable inputs, so its gradient rule is an adjoint op
written once over the rule namespace ``M`` (``M.op(kernel, ...)`` or M's functions): the same
formula serves first-order gradients on arrays and create_graph gradients on Tensors.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import backend
from ..backend import get_array_module as _xp
from ..framework import dtype as _dt
from ..framework import state
from ..framework.op import GRAD, apply, apply_, check_inplace, inplace, op, tensor_ops
from ..framework.tensor import Tensor, _wrap, writable
from ._helpers import (
    cast_to,
    check_tensor_kinds,
    norm_axes,
    norm_axis,
    result_type,
    shape_arg,
    tensor_arg,
)

__all__ = []

# ``slice`` is also a Paddle op defined below; keep the builtin under another name.
_pyslice = slice


class OutOfRangeError(IndexError, ValueError):
    """An index value outside a dim. Paddle raises IndexError for some ops and ValueError for
    others, so (like NumPy's AxisError) this is both."""


def _view_of(out: Tensor, x: Tensor) -> Tensor:
    """Mark ``out`` as a view of ``x``: writes through either bump the same version counter."""
    if backend.view_of(out._data, x._data):
        out._ver = x._ver
    return out


def _add_at(a, idx, v):
    """``a[idx] += v`` with repeated indices accumulating."""
    if any(getattr(i, "dtype", None) == np.bool_ for i in idx):
        # only 0-D bools are left here (others became nonzero()); they cannot repeat a position
        a[idx] += v
    else:
        backend.index_add(a, idx, v)


def _int_index(index, op, arg="index"):
    """An integer index as a backend array (Tensors, lists and ndarrays accepted)."""
    t = tensor_arg(index, op, arg)
    if t._data.dtype.kind not in "iu":
        raise TypeError(f"{op}: '{arg}' must be an integer tensor (int32 or int64), got "
                        f"{t.dtype}")
    return t._data


def _check_range(idx, n, op, arg="index", negative=True, where="axis"):
    """Check index values against a dim of size ``n``; negative values wrap when allowed."""
    if idx.size == 0:
        return idx
    lo, hi = int(idx.min()), int(idx.max())
    low = -n if negative else 0
    if lo < low or hi >= n:
        bad = lo if lo < low else hi
        raise OutOfRangeError(f"{op}: '{arg}' contains {bad}, which is out of range for {where} "
                              f"of size {n}; expected values in [{low}, {n})")
    if negative and lo < 0:
        idx = idx % n if n else idx
    return idx


def _tuple_arg(v):
    if isinstance(v, Tensor):
        return v.tolist() if v.ndim else [v.item()]
    if isinstance(v, numbers.Integral):
        return [int(v)]
    return list(v)


def _same_value_dtype(v, x: Tensor, op, arg="value"):
    """A value for x: Tensors are cast to x's dtype (differentiably), others become arrays."""
    xp = _xp(x._data)
    if isinstance(v, Tensor):
        return cast_to(v, x._data.dtype)
    if v is None:
        raise TypeError(f"{op}: '{arg}' must be a number or a Tensor, got None")
    try:
        return xp.asarray(v).astype(x._data.dtype)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{op}: '{arg}' must be a number, array or Tensor ({e})") from None


# ---------------------------------------------------------------- gather / put kernels

def _shape(a):
    """The shape of an array or a Tensor, as a tuple."""
    return tuple(a.shape)


def _sum_to(M, g, shape):
    """Sum ``g`` down to ``shape`` (the adjoint of broadcasting), over either namespace."""
    gs = _shape(g)
    if gs == shape:
        return g
    nd = len(gs) - len(shape)
    if nd < 0:
        return M.reshape(g, shape)
    if nd:
        g = M.sum(g, axis=tuple(range(nd)))
    axes = tuple(i for i, s in enumerate(shape) if s == 1 and gs[nd + i] != 1)
    if axes:
        g = M.sum(g, axis=axes, keepdim=True)
    return g if _shape(g) == shape else M.reshape(g, shape)


def _is_basic(idx):
    return all(i is None or i is Ellipsis or isinstance(i, (_pyslice, int)) for i in idx)


# a gather and the scatter of its gradient are each other's adjoint
@op("gather", saves=(), grad=lambda M, x, out, g, idx: (
    M.op(_scatter_grad_kernel, g, idx=idx, shape=_shape(x)),))
def _gather_kernel(x, idx):
    """``x[idx]`` for an index tuple; backward scatters the gradient back (adding repeats)."""
    xp = _xp(x)
    out = x[idx]
    if not isinstance(out, xp.ndarray):
        out = xp.asarray(out)
    return out, GRAD


@op("gather_grad", saves=(), grad=lambda M, g, out, gg, idx, shape: (
    M.op(_gather_kernel, gg, idx=idx),))
def _scatter_grad_kernel(g, idx, shape):
    """The gradient of a gather as an op of its own, so that it can be differentiated again."""
    full = _xp(g).zeros(shape, dtype=g.dtype)
    if _is_basic(idx):
        full[idx] = g
    else:
        _add_at(full, idx, g)
    return full, GRAD


def _value_grad(M, g, v):
    """Reduce the gradient of ``x[idx]`` to the shape of the value ``v`` written there (None
    for a Python scalar)."""
    if not hasattr(v, "shape"):
        return None
    shape = _shape(v)
    gs = _shape(g)
    if len(gs) < len(shape):
        if int(np.prod(gs)) == int(np.prod(shape)):
            return M.reshape(g, shape)
        return M.reshape(M.sum(g), shape)
    return _sum_to(M, g, shape)


def _put_grad(M, x, v, out, g, idx, mode, gmask=None):
    # the written positions take v's gradient; the others keep x's (all of it for 'add')
    gx = g if mode == "add" else M.op(_put_kernel, g, 0, idx=idx, mode="set")
    gv = M.op(_gather_kernel, g, idx=idx)
    if gmask is not None:
        gv = gv * M.mask(gmask, gv)
    return gx, _value_grad(M, gv, v)


@op("scatter", saves=(), grad=_put_grad)
def _put_kernel(x, v, idx, mode, gmask=None):
    """Out-of-place ``x[idx] = v`` (mode 'set'), ``x[idx] += v`` ('add', repeats add up) or
    ``x[idx] = 0; x[idx] += v`` ('zero_add'). ``gmask`` (optional) keeps only some of the
    written elements' gradients, e.g. the last writer of a repeated position."""
    xp = _xp(x)
    out = x.copy()
    if mode == "set" and gmask is not None and xp is not np:
        # a GPU writes repeated positions in no fixed order: write the last writers only,
        # which NumPy's C-order assignment (and the gradient's mask) picks
        m = xp.asarray(gmask)
        sel = tuple(a[m] for a in xp.broadcast_arrays(*idx))
        out[sel] = xp.broadcast_to(v, m.shape)[m]
    elif mode == "set":
        out[idx] = v
    else:
        if mode == "zero_add":
            out[idx] = 0
        _add_at(out, idx, xp.broadcast_to(v, out[idx].shape) if not _is_basic(idx) else v)
    return out, GRAD


def _put(x, v, idx, mode, op, gmask=None):
    """Out-of-place write of ``v`` into ``x`` at ``idx``."""
    return apply(_named(_put_kernel, op), x, v, idx=idx, mode=mode, gmask=gmask)


def _put_inplace(x, v, idx, mode, op, gmask=None):
    return apply_(_named(_put_kernel, op), x, v, idx=idx, mode=mode, gmask=gmask)


_NAMED = {}


def _named(kernel, name):
    """The same kernel under another op name (for errors and the profiler); cached."""
    key = (kernel, name)
    k = _NAMED.get(key)
    if k is None:
        def k(*a, **kw):
            return kernel(*a, **kw)

        for a in ("saves", "broadcast", "grad", "grad_uses_out", "hi"):
            if hasattr(kernel, a):
                setattr(k, a, getattr(kernel, a))
        k.op_name = name
        _NAMED[key] = k
    return k


def _gather(x, idx, op):
    return apply(_named(_gather_kernel, op), x, idx=idx)


def _axis_idx(axis, index, ndim=None):
    """The index tuple selecting ``index`` along ``axis`` (all of every other dim)."""
    return (_pyslice(None),) * axis + (index,)


def _grid_idx(shape, axis, index):
    """A full index tuple for take/put_along_axis: ``index`` on ``axis``, aranges elsewhere."""
    xp = _xp(index)
    nd = index.ndim
    out = []
    for d in range(nd):
        if d == axis:
            out.append(index)
        else:
            s = [1] * nd
            s[d] = index.shape[d]
            out.append(xp.arange(index.shape[d]).reshape(s))
    return tuple(out)


# ---------------------------------------------------------------- reshape family

@op("reshape", saves=(), grad=lambda M, x, out, g, shape: (M.reshape(g, x.shape),))
def _reshape_kernel(x, shape):
    return x.reshape(shape), GRAD


def _infer_shape(shape, size, op, src):
    shape = list(shape)
    for i, s in enumerate(shape):
        if s == 0:
            if i >= len(src):
                raise ValueError(f"{op}: shape {shape} has 0 at position {i}, but the input has "
                                 f"only {len(src)} dims")
            shape[i] = src[i]
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise ValueError(f"{op}: shape {shape} may contain at most one -1")
    if any(s < -1 for s in shape):
        raise ValueError(f"{op}: shape {shape} contains an invalid negative dim")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if neg:
        if known == 0 or size % known:
            raise ValueError(f"{op}: cannot reshape a tensor of shape {list(src)} "
                             f"({size} elements) into {shape}")
        shape[neg[0]] = size // known
    elif known != size:
        raise ValueError(f"{op}: cannot reshape a tensor of shape {list(src)} ({size} elements) "
                         f"into {shape} ({known} elements)")
    return tuple(shape)


def _positive_shape(shape, size):
    """``shape`` as a tuple when it is a list/tuple of positive ints holding ``size`` elements
    (then 0 and -1 need no resolving and the shape is valid), else None (the general path)."""
    if type(shape) is not list and type(shape) is not tuple:
        return None
    n = 1
    for s in shape:
        if type(s) is not int or s <= 0:
            return None
        n *= s
    return tuple(shape) if n == size else None


def reshape(x, shape, name=None):
    """Return x with a new shape (a view when possible). ``0`` keeps a dim, ``-1`` infers one.

    Args:
        x (Tensor): input.
        shape (list|tuple|Tensor): target shape; may mix ints and 0-D tensors.

    Returns:
        Tensor: a view of x with the new shape.

    Example:
        >>> paddle.reshape(paddle.arange(6), [2, -1]).shape
        [2, 3]
    """
    if type(x) is not Tensor:
        x = tensor_arg(x, "reshape")
    shp = _positive_shape(shape, x._data.size)
    if shp is None:
        shp = _infer_shape(shape_arg(shape, "reshape"), x.size, "reshape", x._data.shape)
    if shp == x._data.shape and x.stop_gradient:
        out = _wrap(x._data.view())
        return _view_of(out, x)
    return _view_of(apply(_reshape_kernel, x, shape=shp), x)


def _reshape_to(x: Tensor, shape) -> Tensor:
    """Reshape to a literal shape (a 0 is an empty dim here, not "keep the input's dim")."""
    shp = tuple(int(s) for s in shape)
    return _reshape_tuple(x, shp)


def _reshape_tuple(x: Tensor, shp: tuple) -> Tensor:
    """:func:`_reshape_to` for a shape already given as a tuple of Python ints."""
    if shp == x._data.shape and x.stop_gradient:
        return _view_of(_wrap(x._data.view()), x)
    return _view_of(apply(_reshape_kernel, x, shape=shp), x)


def reshape_(x, shape, name=None):
    """Inplace :func:`reshape`: x itself takes the new shape (returns x)."""
    x = tensor_arg(x, "reshape_")
    return inplace(x, "reshape_", lambda src: reshape(src, shape), write=False)


def view(x, shape_or_dtype, name=None):
    """A view of x with another shape, or its bytes reinterpreted as another dtype.

    Args:
        x (Tensor): input.
        shape_or_dtype (list|tuple|Tensor|str|dtype): a new shape (as :func:`reshape`), or a
            dtype; with a dtype of another size the last dim scales by the size ratio.

    Returns:
        Tensor: a view sharing x's storage.
    """
    x = tensor_arg(x, "view")
    if isinstance(shape_or_dtype, (list, tuple, Tensor)):
        return reshape(x, shape_or_dtype)
    npd = _dt.to_np(shape_or_dtype)
    a = x._data
    if a.ndim == 0 and npd.itemsize != a.dtype.itemsize:
        raise ValueError(f"view: cannot view a 0-D tensor of {x.dtype} as {npd}: the sizes "
                         "differ")
    try:
        out = a.view(npd)
    except ValueError as e:
        raise ValueError(f"view: cannot view a tensor of shape {x.shape} and dtype {x.dtype} "
                         f"as {npd}: {e}") from None
    return _view_of(_wrap(out), x)


def view_as(x, other, name=None):
    """A view of x with the shape of ``other``."""
    other = tensor_arg(other, "view_as", "other")
    x = tensor_arg(x, "view_as")
    if x.size != other.size:
        raise ValueError(f"view_as: x of shape {x.shape} cannot be viewed as shape {other.shape}")
    return _reshape_to(x, other.shape)


def _as_strided_grad(M, x, out, g, shape, stride, offset):
    # every read position takes its gradient back, overlapping windows adding up
    pos = _strided_positions(_xp(M.value(g)), shape, stride, offset)
    full = M.op(_scatter_grad_kernel, M.reshape(g, [-1]), idx=(pos.reshape(-1),),
                shape=(int(np.prod(_shape(x))),))
    return (M.reshape(full, _shape(x)),)


@op("as_strided", saves=(), grad=_as_strided_grad)
def _as_strided_kernel(x, shape, stride, offset):
    xp = _xp(x)
    flat = x.reshape(-1)
    isz = x.dtype.itemsize
    out = xp.lib.stride_tricks.as_strided(flat[offset:], shape,
                                          tuple(s * isz for s in stride))
    return out, GRAD


def _strided_positions(xp, shape, stride, offset):
    pos = xp.full(shape, offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(shape, stride)):
        r = [1] * len(shape)
        r[d] = n
        pos = pos + (xp.arange(n, dtype=np.int64) * s).reshape(r)
    return pos


def as_strided(x, shape, stride, offset=0, name=None):
    """A view of x's (contiguous) storage with the given shape, element strides and offset.

    As in Paddle, ``offset`` is counted in bytes from the start of x's storage (it is the
    holder offset), while ``stride`` is counted in elements: ``as_strided(x, [2], [4], 4)``
    on float32 starts at element 1. The offset must be a multiple of the element size.
    Gradients of overlapping windows add up; Paddle 2.6.2 keeps only one of the overlapping
    contributions, which is not copied here.

    Args:
        x (Tensor): input.
        shape (list|tuple): shape of the view.
        stride (list|tuple): stride of each dim, in elements.
        offset (int): start of the view, in bytes from the start of x.

    Returns:
        Tensor: a view sharing x's storage.

    Example:
        >>> x = paddle.arange(6, dtype='float32')
        >>> paddle.as_strided(x, [2, 2], [1, 1], 4)  # [[1, 2], [2, 3]]
    """
    x = tensor_arg(x, "as_strided")
    shp = tuple(shape_arg(shape, "as_strided"))
    st = tuple(shape_arg(stride, "as_strided", "stride"))
    if len(shp) != len(st):
        raise ValueError(f"as_strided: shape {list(shp)} and stride {list(st)} must have the "
                         "same length")
    if any(s < 0 for s in shp) or any(s < 0 for s in st) or offset < 0:
        raise ValueError("as_strided: shape, stride and offset must be non-negative")
    itemsize = x._data.dtype.itemsize
    if offset % itemsize:
        raise ValueError(f"as_strided: offset {offset} is in bytes and must be a multiple of "
                         f"the element size of x ({x.dtype.name}: {itemsize} bytes)")
    offset //= itemsize
    last = offset + sum((n - 1) * s for n, s in zip(shp, st)) if all(shp) else offset - 1
    if last >= x.size:
        raise ValueError(f"as_strided: shape {list(shp)}, stride {list(st)} and offset "
                         f"{offset * itemsize} (bytes) reach element {last}, beyond the "
                         f"{x.size} elements of x")
    if not x._data.flags.c_contiguous:
        x = _wrap(_xp(x._data).ascontiguousarray(x._data), x.stop_gradient) \
            if x.stop_gradient else x
    return _view_of(apply(_as_strided_kernel, x, shape=shp, stride=st, offset=int(offset)), x)


def unsqueeze(x, axis, name=None):
    """Insert size-1 dims at ``axis`` (int or list, positions in the output); a view."""
    if type(x) is not Tensor:
        x = tensor_arg(x, "unsqueeze")
    if type(axis) is int:
        src = x._data.shape
        n = len(src) + 1
        if -n <= axis < n:
            a = axis % n
            return _reshape_tuple(x, src[:a] + (1,) + src[a:])
    axes = [int(a) for a in _tuple_arg(axis)]
    shape = list(x._data.shape)
    for a in axes:
        n = len(shape) + 1
        if not -n <= a < n:
            raise ValueError(f"unsqueeze: axis {a} is out of range for a result of rank {n}")
        shape.insert(a % n, 1)
    return _reshape_to(x, shape)


def unsqueeze_(x, axis, name=None):
    """Inplace :func:`unsqueeze` (returns x)."""
    x = tensor_arg(x, "unsqueeze_")
    return inplace(x, "unsqueeze_", lambda src: unsqueeze(src, axis), write=False)


def squeeze(x, axis=None, name=None):
    """Remove size-1 dims (all of them, or those in ``axis``; others are left alone); a view."""
    x = tensor_arg(x, "squeeze")
    shape = x._data.shape
    if axis is None:
        keep = [s for s in shape if s != 1]
    else:
        axes = norm_axes(axis, x.ndim, "squeeze")
        keep = [s for i, s in enumerate(shape) if not (i in axes and s == 1)]
    return _reshape_to(x, keep)


def squeeze_(x, axis=None, name=None):
    """Inplace :func:`squeeze` (returns x)."""
    x = tensor_arg(x, "squeeze_")
    return inplace(x, "squeeze_", lambda src: squeeze(src, axis), write=False)


def flatten(x, start_axis=0, stop_axis=-1, name=None):
    """Flatten dims ``start_axis..stop_axis`` into one; a view."""
    if type(x) is not Tensor:
        x = tensor_arg(x, "flatten")
    if x._data.ndim == 0:
        return _reshape_to(x, [1])
    s = norm_axis(start_axis, x.ndim, "flatten", "start_axis")
    e = norm_axis(stop_axis, x.ndim, "flatten", "stop_axis")
    if s > e:
        raise ValueError(f"flatten: start_axis ({start_axis}) must not be after stop_axis "
                         f"({stop_axis}) for shape {x.shape}")
    shape = x._data.shape
    n = 1
    for d in shape[s:e + 1]:
        n *= d
    return _reshape_tuple(x, shape[:s] + (int(n),) + shape[e + 1:])


def flatten_(x, start_axis=0, stop_axis=-1, name=None):
    """Inplace :func:`flatten` (a Tensor method; returns x)."""
    x = tensor_arg(x, "flatten_")
    return inplace(x, "flatten_", lambda src: flatten(src, start_axis, stop_axis), write=False)


def unflatten(x, axis, shape, name=None):
    """Split dim ``axis`` into ``shape`` (one -1 allowed); a view.

    Args:
        x (Tensor): input.
        axis (int): the dim to unflatten.
        shape (list|tuple|Tensor): sizes replacing that dim; their product must equal it.
    """
    x = tensor_arg(x, "unflatten")
    ax = norm_axis(axis, x.ndim, "unflatten")
    shp = shape_arg(shape, "unflatten")
    if not shp:
        raise ValueError("unflatten: 'shape' must not be empty")
    n = x.shape[ax]
    part = list(shp)
    if part.count(-1) > 1 or any(s < -1 for s in part):
        raise ValueError(f"unflatten: shape {shp} may contain one -1 and no other negative")
    if -1 in part:
        known = int(np.prod([s for s in part if s != -1]))
        if known == 0 or n % known:
            raise ValueError(f"unflatten: shape {shp} cannot split dim {ax} of size {n}")
        part[part.index(-1)] = n // known
    if int(np.prod(part)) != n:
        raise ValueError(f"unflatten: shape {shp} does not multiply to the size {n} of dim {ax} "
                         f"of x (shape {x.shape})")
    return _reshape_to(x, x.shape[:ax] + list(part) + x.shape[ax + 1:])


def _atleast(inputs, nd, op):
    outs = []
    for i, v in enumerate(inputs):
        t = tensor_arg(v, op, f"inputs[{i}]")
        s = t.shape
        if t.ndim < nd:
            if nd == 3 and t.ndim == 2:
                s = s + [1]
            elif nd == 3 and t.ndim == 1:
                s = [1] + s + [1]
            else:
                s = [1] * (nd - t.ndim) + s
            t = _reshape_to(t, s)
        outs.append(t)
    return outs[0] if len(outs) == 1 else outs


def atleast_1d(*inputs, name=None):
    """Each input with at least 1 dim (0-D -> [1]); one tensor, or a list for several."""
    return _atleast(inputs, 1, "atleast_1d")


def atleast_2d(*inputs, name=None):
    """Each input with at least 2 dims ([N] -> [1, N]); one tensor, or a list for several."""
    return _atleast(inputs, 2, "atleast_2d")


def atleast_3d(*inputs, name=None):
    """Each input with at least 3 dims ([N] -> [1, N, 1], [M, N] -> [M, N, 1])."""
    return _atleast(inputs, 3, "atleast_3d")


# ---------------------------------------------------------------- permutations

def _inverse_perm(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return inv


@op("transpose", saves=(), grad=lambda M, x, out, g, perm: (
    M.transpose(g, _inverse_perm(perm)),))
def _transpose_kernel(x, perm):
    return x.transpose(perm), GRAD


def transpose(x, perm, name=None):
    """Permute the dims of x according to ``perm`` (a view).

    Args:
        x (Tensor): input.
        perm (list|tuple): a permutation of ``range(x.ndim)``.
    """
    x = tensor_arg(x, "transpose")
    perm = _tuple_arg(perm) if not isinstance(perm, (list, tuple)) else list(perm)
    if len(perm) != x.ndim:
        raise ValueError(f"transpose: perm {perm} has {len(perm)} entries but x has shape "
                         f"{x.shape} ({x.ndim} dims)")
    p = tuple(norm_axis(a, x.ndim, "transpose", "perm") for a in perm)
    if len(set(p)) != len(p):
        raise ValueError(f"transpose: perm {perm} repeats an axis")
    return _view_of(apply(_transpose_kernel, x, perm=p), x)


def transpose_(x, perm, name=None):
    """Inplace :func:`transpose` (returns x)."""
    x = tensor_arg(x, "transpose_")
    return inplace(x, "transpose_", lambda src: transpose(src, perm), write=False)


def t(input, name=None):  # noqa: A002  (Paddle's name)
    """Transpose a tensor of at most 2 dims (0-D and 1-D tensors come back unchanged)."""
    x = tensor_arg(input, "t", "input")
    if x.ndim > 2:
        raise ValueError(f"t: input must have at most 2 dims, got shape {x.shape}; use "
                         "paddle.transpose instead")
    if x.ndim < 2:
        return _reshape_to(x, x.shape)
    return transpose(x, [1, 0])


def t_(input, name=None):  # noqa: A002
    """Inplace :func:`t` (returns input)."""
    x = tensor_arg(input, "t_", "input")
    return inplace(x, "t_", lambda src: t(src), write=False)


def moveaxis(x, source, destination, name=None):
    """Move dims ``source`` to positions ``destination`` (other dims keep their order)."""
    x = tensor_arg(x, "moveaxis")
    src = _tuple_arg(source)
    dst = _tuple_arg(destination)
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: source {src} and destination {dst} must have the same "
                         "number of elements")
    nd = x.ndim
    s = [norm_axis(a, nd, "moveaxis", "source") for a in src]
    d = [norm_axis(a, nd, "moveaxis", "destination") for a in dst]
    if len(set(s)) != len(s) or len(set(d)) != len(d):
        raise ValueError(f"moveaxis: source {src} and destination {dst} must not repeat axes")
    rest = [a for a in range(nd) if a not in s]
    perm = [None] * nd
    for a, b in zip(s, d):
        perm[b] = a
    it = iter(rest)
    perm = [p if p is not None else next(it) for p in perm]
    return transpose(x, perm)


# flipping is its own adjoint; no axes is the identity
@op("flip", saves=(), grad=lambda M, x, out, g, axes: (M.flip(g, axes) if axes else g,))
def _flip_kernel(x, axes):
    xp = _xp(x)
    if not axes:
        return x.copy(), GRAD
    return xp.ascontiguousarray(xp.flip(x, axes)), GRAD


def flip(x, axis, name=None):
    """Reverse the order of elements along ``axis`` (an int or a list); returns a copy."""
    x = tensor_arg(x, "flip")
    axes = _tuple_arg(axis)
    if x.ndim == 0 and axes:
        raise ValueError(f"flip: axis {axes} is out of range for a 0-D tensor")
    ax = tuple(norm_axis(a, x.ndim, "flip") for a in axes)
    if len(set(ax)) != len(ax):
        raise ValueError(f"flip: axis {axes} repeats an axis")
    if not ax:
        return apply(_flip_kernel, x, axes=())
    return apply(_flip_kernel, x, axes=ax)


def reverse(x, axis, name=None):
    """Same as :func:`flip`."""
    return flip(x, axis)


def rot90(x, k=1, axes=[0, 1], name=None):  # noqa: B006  (Paddle's default)
    """Rotate by 90 degrees ``k`` times in the plane of ``axes`` (from the first toward the
    second axis)."""
    x = tensor_arg(x, "rot90")
    axes = _tuple_arg(axes)
    if len(axes) != 2:
        raise ValueError(f"rot90: axes must have 2 elements, got {axes}")
    if x.ndim < 2:
        raise ValueError(f"rot90: x must have at least 2 dims, got shape {x.shape}")
    a0 = norm_axis(axes[0], x.ndim, "rot90", "axes")
    a1 = norm_axis(axes[1], x.ndim, "rot90", "axes")
    if a0 == a1:
        raise ValueError(f"rot90: expected rotation axes to be different, got {axes}")
    k = int(k) % 4
    if k == 0:
        return apply(_flip_kernel, x, axes=())
    if k == 2:
        return flip(x, [a0, a1])
    perm = list(range(x.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return transpose(flip(x, [a1]), perm)
    return flip(transpose(x, perm), [a1])


# the adjoint of a cyclic shift is the opposite shift (over the flattened tensor for axes=None)
@op("roll", saves=(), grad=lambda M, x, out, g, shifts, axes: (M.op(
    _roll_kernel, g, shifts=-shifts if axes is None else tuple(-s for s in shifts),
    axes=axes),))
def _roll_kernel(x, shifts, axes):
    xp = _xp(x)
    if axes is None:
        return xp.roll(x.reshape(-1), shifts).reshape(x.shape), GRAD
    return xp.roll(x, shifts, axes), GRAD


def roll(x, shifts, axis=None, name=None):
    """Shift elements cyclically along ``axis`` (or over the flattened tensor when None).

    Args:
        x (Tensor): input.
        shifts (int|list|tuple|Tensor): shift per axis.
        axis (int|list|tuple|None): axes to roll.
    """
    x = tensor_arg(x, "roll")
    sh = [int(s) for s in _tuple_arg(shifts)]
    if axis is None:
        if len(sh) != 1:
            raise ValueError(f"roll: with axis=None, shifts must be one int, got {sh}")
        return apply(_roll_kernel, x, shifts=sh[0], axes=None)
    ax = [norm_axis(a, x.ndim, "roll") for a in _tuple_arg(axis)]
    if len(ax) != len(sh):
        raise ValueError(f"roll: shifts {sh} and axis {ax} must have the same length")
    return apply(_roll_kernel, x, shifts=tuple(sh), axes=tuple(ax))


def _diag_idx(shape, offset, a1, a2, xp):
    """Index tuple reading the ``offset`` diagonal of dims (a1, a2), appended as the last dim."""
    n1, n2 = shape[a1], shape[a2]
    r0, c0 = max(-offset, 0), max(offset, 0)
    length = max(0, min(n1 - r0, n2 - c0))
    rest = [d for d in range(len(shape)) if d not in (a1, a2)]
    nout = len(rest) + 1
    idx = [None] * len(shape)
    for k, d in enumerate(rest):
        s = [1] * nout
        s[k] = shape[d]
        idx[d] = xp.arange(shape[d]).reshape(s)
    diag = xp.arange(length).reshape([1] * (nout - 1) + [length])
    idx[a1] = diag + r0
    idx[a2] = diag + c0
    return tuple(idx), length


def _diag_axes(x, offset, axis1, axis2, op, a1n="axis1", a2n="axis2"):
    if x.ndim < 2:
        raise ValueError(f"{op}: x must have at least 2 dims, got shape {x.shape}")
    a1 = norm_axis(axis1, x.ndim, op, a1n)
    a2 = norm_axis(axis2, x.ndim, op, a2n)
    if a1 == a2:
        raise ValueError(f"{op}: {a1n} and {a2n} must differ, got {axis1} and {axis2}")
    return a1, a2, int(offset)


def diagonal(x, offset=0, axis1=0, axis2=1, name=None):
    """The diagonals of the (axis1, axis2) planes of x, as a new last dim.

    Args:
        x (Tensor): input with at least 2 dims.
        offset (int): diagonal offset (> 0 above the main diagonal).
        axis1 (int): first dim of the planes.
        axis2 (int): second dim of the planes.

    Returns:
        Tensor: the other dims of x followed by the diagonal (a copy).
    """
    x = tensor_arg(x, "diagonal")
    a1, a2, off = _diag_axes(x, offset, axis1, axis2, "diagonal")
    idx, _ = _diag_idx(x.shape, off, a1, a2, _xp(x._data))
    return _gather(x, idx, "diagonal")


# ---------------------------------------------------------------- broadcasting

# the adjoint of broadcasting sums over the broadcast dims
@op("expand", saves=(), grad=lambda M, x, out, g, shape: (_sum_to(M, g, _shape(x)),))
def _expand_kernel(x, shape):
    xp = _xp(x)
    # the shape was checked by the caller: a C-ordered copy broadcast into a fresh array is
    # what ascontiguousarray(broadcast_to(...)) gives, without broadcast_to's Python layer
    out = xp.empty(shape, dtype=x.dtype)
    out[...] = x
    return out, GRAD


def _expand(x, shape, op):
    if type(x) is not Tensor:
        x = tensor_arg(x, op)
    shp = shape_arg(shape, op)
    src = x._data.shape
    if len(shp) < len(src):
        raise ValueError(f"{op}: shape {shp} has fewer dims than x's shape {list(src)}")
    off = len(shp) - len(src)
    out = []
    for i, s in enumerate(shp):
        if i >= off and s == -1:
            s = src[i - off]
        elif s < 0:
            raise ValueError(f"{op}: shape {shp} has invalid dim {s} at position {i}")
        if i >= off and src[i - off] not in (1, s):
            raise ValueError(f"{op}: cannot expand x of shape {list(src)} to {shp}: dim {i - off} "
                             f"has size {src[i - off]}, expected 1 or {s}")
        out.append(s)
    return apply(_named(_expand_kernel, op), x, shape=tuple(out))


def expand(x, shape, name=None):
    """Broadcast x to ``shape`` (-1 keeps a dim; extra leading dims are prepended).

    Args:
        x (Tensor): input.
        shape (list|tuple|Tensor): target shape; may contain 0-D tensors.

    Returns:
        Tensor: x broadcast to ``shape`` (a copy), with x's dtype.
    """
    return _expand(x, shape, "expand")


def broadcast_to(x, shape, name=None):
    """Same as :func:`expand`."""
    return _expand(x, shape, "broadcast_to")


def expand_as(x, y, name=None):
    """Broadcast x to the shape of ``y`` (only y's shape is used)."""
    y = tensor_arg(y, "expand_as", "y")
    return _expand(x, y.shape, "expand_as")


def broadcast_shape(x_shape, y_shape):
    """The shape two shapes broadcast to, as a list."""
    a, b = shape_arg(x_shape, "broadcast_shape", "x_shape"), shape_arg(
        y_shape, "broadcast_shape", "y_shape")
    try:
        return list(np.broadcast_shapes(tuple(a), tuple(b)))
    except ValueError:
        raise ValueError(f"broadcast_shape: shapes {a} and {b} cannot be broadcast together")\
            from None


def broadcast_tensors(input, name=None):  # noqa: A002
    """Broadcast a list of tensors to their common shape; returns a list."""
    if not isinstance(input, (list, tuple)) or not input:
        raise TypeError("broadcast_tensors: 'input' must be a non-empty list of Tensors")
    ts = [tensor_arg(v, "broadcast_tensors", f"input[{i}]") for i, v in enumerate(input)]
    check_tensor_kinds(ts, "broadcast_tensors", "input")
    try:
        shp = list(np.broadcast_shapes(*[tuple(v.shape) for v in ts]))
    except ValueError:
        raise ValueError(f"broadcast_tensors: shapes {[v.shape for v in ts]} cannot be "
                         "broadcast together") from None
    return [v if v.shape == shp else _expand(v, shp, "broadcast_tensors") for v in ts]


def _tile_grad(M, x, out, g, reps):
    # each output dim is (repeat, source) interleaved: sum the repeats away
    inter = []
    for r, s in zip(reps, _shape(x)):
        inter += [r, s]
    return (M.sum(M.reshape(g, inter), axis=tuple(range(0, 2 * len(reps), 2))),)


@op("tile", saves=(), grad=_tile_grad)
def _tile_kernel(x, reps):
    return _xp(x).tile(x, reps), GRAD


def tile(x, repeat_times, name=None):
    """Repeat x ``repeat_times[i]`` times along each dim (shorter lists apply to trailing dims).

    Args:
        x (Tensor): input.
        repeat_times (list|tuple|Tensor): positive repeat counts.
    """
    x = tensor_arg(x, "tile")
    reps = shape_arg(repeat_times, "tile", "repeat_times")
    if any(r <= 0 for r in reps):
        raise ValueError(f"tile: every element of repeat_times must be positive, got {reps}")
    nd = max(len(reps), x.ndim)
    reps = [1] * (nd - len(reps)) + reps
    if x.ndim < nd:
        x = _reshape_to(x, [1] * (nd - x.ndim) + x.shape)
    return apply(_tile_kernel, x, reps=tuple(reps))


def repeat_interleave(x, repeats, axis=None, name=None):
    """Repeat each element (along ``axis``, or of the flattened x) ``repeats`` times.

    Args:
        x (Tensor): input.
        repeats (int|Tensor): one count, or a 1-D tensor with one count per element of the dim.
        axis (int|None): the dim; None flattens x first.
    """
    x = tensor_arg(x, "repeat_interleave")
    if axis is None:
        x = reshape(x, [-1])
        axis = 0
    ax = norm_axis(axis, x.ndim, "repeat_interleave")
    n = x.shape[ax] if x.ndim else 1
    xp = _xp(x._data)
    if isinstance(repeats, Tensor) and repeats.ndim == 0:
        repeats = int(repeats.item())
    if isinstance(repeats, numbers.Integral):
        if repeats < 0:
            raise ValueError(f"repeat_interleave: repeats must be non-negative, got {repeats}")
        index = xp.repeat(xp.arange(n), int(repeats))
    else:
        r = _int_index(repeats, "repeat_interleave", "repeats").reshape(-1)
        if r.shape[0] != n:
            raise ValueError(f"repeat_interleave: repeats has {r.shape[0]} elements but dim {ax}"
                             f" of x (shape {x.shape}) has {n}")
        if r.size and int(r.min()) < 0:
            raise ValueError("repeat_interleave: repeats must be non-negative")
        index = xp.repeat(xp.arange(n), xp.asarray(r))
    if x.ndim == 0:
        x = _reshape_to(x, [1])
    return _gather(x, _axis_idx(ax, index), "repeat_interleave")


# ---------------------------------------------------------------- joining and splitting

def _concat_grad(M, *args, axis):
    # each input takes back its slice of the gradient along the axis
    xs, g = args[:-2], args[-1]
    pre = (_pyslice(None),) * axis
    grads = []
    start = 0
    for x in xs:
        n = _shape(x)[axis]
        grads.append(g[pre + (_pyslice(start, start + n),)])
        start += n
    return tuple(grads)


@op("concat", saves=(), grad=_concat_grad)
def _concat_kernel(*xs, axis):
    return _xp(xs[0]).concatenate(xs, axis=axis), GRAD


def _tensor_list(xs, op):
    if isinstance(xs, Tensor):
        return list(unbind(xs, 0)) if xs.ndim else [xs]
    if not isinstance(xs, (list, tuple)) or not xs:
        raise TypeError(f"{op}: 'x' must be a non-empty list or tuple of Tensors")
    if isinstance(xs[0], Tensor):
        # the common case: Tensors of one dtype need no conversion
        d0 = xs[0]._data.dtype
        for v in xs:
            if not isinstance(v, Tensor) or v._data.dtype != d0:
                break
        else:
            return list(xs)
    ts = [tensor_arg(v, op, f"x[{i}]") for i, v in enumerate(xs)]
    d0 = ts[0]._data.dtype
    if any(v._data.dtype != d0 for v in ts):
        check_tensor_kinds(ts, op)
        common = d0
        for v in ts[1:]:
            common = result_type(common, v._data.dtype)
        ts = [cast_to(v, common) for v in ts]
    return ts


def concat(x, axis=0, name=None):
    """Join tensors along an existing axis.

    Args:
        x (list|tuple): tensors with equal shapes outside ``axis``.
        axis (int|Tensor): the axis to join along.
    """
    ts = _tensor_list(x, "concat")
    s0 = ts[0]._data.shape
    nd = len(s0)
    if nd == 0:
        raise ValueError("concat: 0-D tensors cannot be concatenated; use stack")
    ax = norm_axis(axis, nd, "concat")
    pre, post = s0[:ax], s0[ax + 1:]
    for i, v in enumerate(ts):
        s = v._data.shape
        if len(s) != nd or s[:ax] != pre or s[ax + 1:] != post:
            raise ValueError(f"concat: x[{i}] has shape {v.shape}, which does not match x[0]'s "
                             f"shape {ts[0].shape} outside axis {ax}")
    return apply(_concat_kernel, *ts, axis=ax)


def stack(x, axis=0, name=None):
    """Join tensors of equal shape along a new axis (any axis in ``[-(ndim+1), ndim]``)."""
    ts = _tensor_list(x, "stack")
    nd = ts[0]._data.ndim + 1
    if isinstance(axis, Tensor):
        axis = int(axis.item())
    if not -nd <= axis < nd:
        raise ValueError(f"stack: axis {axis} is out of range for a result of rank {nd}")
    s0 = ts[0]._data.shape
    for i, v in enumerate(ts):
        if v._data.shape != s0:
            raise ValueError(f"stack: all inputs must have the same shape; x[{i}] has "
                             f"{v.shape}, x[0] has {ts[0].shape}")
    return apply(_stack_kernel, *ts, axis=axis % nd)


# input i takes back the slice i of the gradient along the new axis
@op("stack", saves=(), grad=lambda M, *args, axis: tuple(
    args[-1][(_pyslice(None),) * axis + (i,)] for i in range(len(args) - 2)))
def _stack_kernel(*xs, axis):
    return _xp(xs[0]).stack(xs, axis=axis), GRAD


# the adjoint of splitting (or unbinding) joins the output gradients back
@op("split", saves=(), grad=lambda M, x, out, *gs, sections, axis: (
    M.concat(list(gs), axis=axis),))
def _split_kernel(x, sections, axis):
    pre = (_pyslice(None),) * axis
    outs = []
    start = 0
    for n in sections:
        outs.append(x[pre + (_pyslice(start, start + n),)].copy())
        start += n
    return tuple(outs), GRAD


def _split(x, num_or_sections, axis, op):
    x = tensor_arg(x, op)
    if x._data.ndim == 0:
        raise ValueError(f"{op}: cannot split a 0-D tensor")
    ax = norm_axis(axis, x._data.ndim, op)
    n = x._data.shape[ax]
    if isinstance(num_or_sections, Tensor) and num_or_sections.ndim == 0:
        num_or_sections = int(num_or_sections.item())
    if type(num_or_sections) is int or isinstance(num_or_sections, numbers.Integral):
        k = int(num_or_sections)
        if k <= 0:
            raise ValueError(f"{op}: the number of sections must be positive, got {k}")
        if n % k:
            raise ValueError(f"{op}: dim {ax} of x (shape {x.shape}) has size {n}, which cannot"
                             f" be split into {k} equal parts")
        sections = [n // k] * k
    else:
        sections = shape_arg(num_or_sections, op, "num_or_sections")
        if sections.count(-1) > 1:
            raise ValueError(f"{op}: num_or_sections may contain at most one -1")
        if -1 in sections:
            sections[sections.index(-1)] = n - (sum(sections) + 1)
        if sum(sections) != n or any(s < 0 for s in sections):
            raise ValueError(f"{op}: sections {sections} do not add up to the size {n} of dim "
                             f"{ax} of x (shape {x.shape})")
    return list(apply(_named(_split_kernel, op), x, sections=tuple(sections), axis=ax))


def split(x, num_or_sections, axis=0, name=None):
    """Split x into equal parts (an int) or parts of the given sizes (a list; one -1 allowed).

    Args:
        x (Tensor): input.
        num_or_sections (int|list|tuple): number of equal parts, or the size of each part
            (zero-size parts are allowed).
        axis (int|Tensor): the axis to split.

    Returns:
        list[Tensor]: the parts (copies).
    """
    return _split(x, num_or_sections, axis, "split")


def chunk(x, chunks, axis=0, name=None):
    """Split x into ``chunks`` equal parts along ``axis``."""
    return _split(x, chunks, axis, "chunk")


def vsplit(x, num_or_sections, name=None):
    """Split a tensor with at least 2 dims along axis 0."""
    x = tensor_arg(x, "vsplit")
    if x.ndim < 2:
        raise ValueError(f"vsplit: x must have at least 2 dims, got shape {x.shape}")
    return _split(x, num_or_sections, 0, "vsplit")


@op("unbind", saves=(), grad=lambda M, x, out, *gs, axis: (M.stack(list(gs), axis=axis),))
def _unbind_kernel(x, axis):
    n = x.shape[axis]
    pre = (_pyslice(None),) * axis
    return tuple(x[pre + (i, Ellipsis)] for i in range(n)), GRAD


def _unbind(x, axis, op, num=None):
    x = tensor_arg(x, op)
    if x.ndim == 0:
        raise ValueError(f"{op}: cannot unbind a 0-D tensor")
    ax = norm_axis(axis, x.ndim, op)
    n = x.shape[ax]
    if num is not None and num != n:
        raise ValueError(f"{op}: num = {num} does not match the size {n} of dim {ax} of x "
                         f"(shape {x.shape})")
    if n == 0:
        return []
    outs = apply(_named(_unbind_kernel, op), x, axis=ax)
    if not isinstance(outs, tuple):
        outs = (outs,)
    return [_view_of(o, x) for o in outs]


def unbind(input, axis=0):  # noqa: A002
    """Remove dim ``axis``, returning the slices along it as a list of views."""
    return _unbind(input, axis, "unbind")


def unstack(x, axis=0, num=None):
    """Same as :func:`unbind`; ``num``, when given, must equal the size of the dim."""
    return _unbind(x, axis, "unstack", num)


def _unfold_grad(M, x, out, g, axis, size, step):
    # window element (w, k) read position w * step + k: scatter back, overlaps adding up
    shape = _shape(x)
    count = (shape[axis] - size) // step + 1
    xp = _xp(M.value(g))
    win = xp.arange(count)[:, None] * step + xp.arange(size)[None, :]
    return (M.op(_scatter_grad_kernel, M.moveaxis(g, -1, axis + 1), idx=_axis_idx(axis, win),
                 shape=shape),)


@op("unfold", saves=(), grad=_unfold_grad)
def _unfold_kernel(x, axis, size, step):
    xp = _xp(x)
    n = x.shape[axis]
    count = (n - size) // step + 1
    st = x.strides
    shape = x.shape[:axis] + (count,) + x.shape[axis + 1:] + (size,)
    strides = st[:axis] + (st[axis] * step,) + st[axis + 1:] + (st[axis],)
    return xp.lib.stride_tricks.as_strided(x, shape, strides), GRAD


def unfold(x, axis, size, step, name=None):
    """Sliding windows of ``size`` elements, ``step`` apart, along ``axis`` (a view).

    Returns:
        Tensor: x's shape with dim ``axis`` replaced by the number of windows, plus a last dim
        of length ``size``.
    """
    x = tensor_arg(x, "unfold")
    ax = norm_axis(axis, x.ndim, "unfold") if x.ndim else 0
    if x.ndim == 0:
        x = _reshape_to(x, [1])
    n = x.shape[ax]
    if size < 0 or size > n:
        raise ValueError(f"unfold: size ({size}) must be in [0, {n}] for dim {ax} of x "
                         f"(shape {x.shape})")
    if step <= 0:
        raise ValueError(f"unfold: step must be positive, got {step}")
    return _view_of(apply(_unfold_kernel, x, axis=ax, size=int(size), step=int(step)), x)


def _norm_bounds(v, n):
    return max(v + n, 0) if v < 0 else min(v, n)


def _slice_list(v, op, arg):
    if isinstance(v, Tensor):
        return [int(e) for e in v.numpy().reshape(-1).tolist()]
    return [int(e.item()) if isinstance(e, Tensor) else int(e) for e in v]


def slice(input, axes, starts, ends):  # noqa: A001,A002  (Paddle's name)
    """Slice ``input`` along ``axes`` from ``starts`` to ``ends`` (a view).

    Negative starts and ends count from the end and out-of-range values are clamped, as Python
    slicing does. ``starts``/``ends`` may be lists of ints and 0-D tensors, or a 1-D tensor.
    """
    x = tensor_arg(input, "slice", "input")
    axes = _tuple_arg(axes)
    st = _slice_list(starts, "slice", "starts")
    en = _slice_list(ends, "slice", "ends")
    if not len(axes) == len(st) == len(en):
        raise ValueError(f"slice: axes {axes}, starts {st} and ends {en} must have the same "
                         "length")
    idx = [_pyslice(None)] * x.ndim
    for a, s, e in zip(axes, st, en):
        a = norm_axis(a, x.ndim, "slice", "axes")
        n = x.shape[a]
        s, e = _norm_bounds(s, n), _norm_bounds(e, n)
        if e < s:
            raise ValueError(f"slice: end ({e}) must not be less than start ({s}) on axis {a} "
                             f"(size {n})")
        idx[a] = _pyslice(s, e)
    return getitem(x, tuple(idx))


def strided_slice(x, axes, starts, ends, strides, name=None):
    """Slice with a stride per axis (a negative stride walks backwards); a view.

    Starts and ends are normalised as in Paddle: negative values count from the end and are
    clamped to the dim.
    """
    x = tensor_arg(x, "strided_slice")
    axes = _tuple_arg(axes)
    st = _slice_list(starts, "strided_slice", "starts")
    en = _slice_list(ends, "strided_slice", "ends")
    sd = _slice_list(strides, "strided_slice", "strides")
    if not len(axes) == len(st) == len(en) == len(sd):
        raise ValueError("strided_slice: axes, starts, ends and strides must have the same "
                         "length")
    idx = [_pyslice(None)] * x.ndim
    for a, s, e, k in zip(axes, st, en, sd):
        a = norm_axis(a, x.ndim, "strided_slice", "axes")
        n = x.shape[a]
        if k == 0:
            raise ValueError("strided_slice: a stride cannot be 0")
        if k > 0:
            s, e = _norm_bounds(s, n), _norm_bounds(e, n)
            if e < s:
                raise ValueError(f"strided_slice: start ({s}) and end ({e}) on axis {a} are "
                                 f"invalid for stride {k}")
            idx[a] = _pyslice(s, e, k)
        else:
            s = s + n if s < 0 else s
            e = e + n if e < 0 else e
            if s < 0:
                idx[a] = _pyslice(0, 0)
                continue
            s = min(s, n - 1)
            e = min(max(e, 0), n)
            idx[a] = _pyslice(s, e, k)
    return getitem(x, tuple(idx))


def crop(x, shape=None, offsets=None, name=None):
    """Cut a block of ``shape`` starting at ``offsets`` (-1 in shape: up to the end).

    Args:
        x (Tensor): input.
        shape (list|tuple|Tensor|None): block shape (default: x's shape).
        offsets (list|tuple|Tensor|None): start of the block in each dim (default: zeros).
    """
    x = tensor_arg(x, "crop")
    shp = x.shape if shape is None else shape_arg(shape, "crop")
    off = [0] * x.ndim if offsets is None else shape_arg(offsets, "crop", "offsets")
    if len(shp) != x.ndim or len(off) != x.ndim:
        raise ValueError(f"crop: shape {shp} and offsets {off} must each have {x.ndim} "
                         f"elements for x of shape {x.shape}")
    idx = []
    for d, (s, o, n) in enumerate(zip(shp, off, x.shape)):
        if o < 0:
            raise ValueError(f"crop: offsets must be non-negative, got {off}")
        if s == -1:
            s = n - o
        if s < 0 or o + s > n:
            raise ValueError(f"crop: offset {o} plus size {s} exceeds dim {d} of x (size {n})")
        idx.append(_pyslice(o, o + s))
    return getitem(x, tuple(idx))


# ---------------------------------------------------------------- gathers

def gather(x, index, axis=None, name=None):
    """Select the entries of ``index`` along ``axis`` (default 0).

    Args:
        x (Tensor): input.
        index (Tensor): 0-D (the axis is removed), 1-D, or 2-D of shape [N, 1] int tensor.
        axis (int|Tensor|None): the axis.
    """
    x = tensor_arg(x, "gather")
    idx = _int_index(index, "gather")
    if idx.ndim == 2 and idx.shape[1] == 1:
        idx = idx.reshape(-1)
    elif idx.ndim > 1:
        raise ValueError(f"gather: index must be 0-D, 1-D or of shape [N, 1], got shape "
                         f"{list(idx.shape)}")
    ax = 0 if axis is None else norm_axis(axis, x.ndim, "gather")
    idx = _check_range(idx, x.shape[ax], "gather", negative=False, where=f"axis {ax}")
    return _gather(x, _axis_idx(ax, idx), "gather")


def index_select(x, index, axis=0, name=None):
    """Select the entries of the 1-D ``index`` along ``axis`` (an empty index gives an empty
    dim)."""
    x = tensor_arg(x, "index_select")
    idx = _int_index(index, "index_select")
    if idx.ndim > 1 and not (idx.ndim == 2 and idx.shape[1] == 1):
        raise ValueError(f"index_select: index must be 1-D, got shape {list(idx.shape)}")
    idx = idx.reshape(-1)
    ax = norm_axis(axis, x.ndim, "index_select")
    idx = _check_range(idx, x.shape[ax], "index_select", negative=False, where=f"axis {ax}")
    return _gather(x, _axis_idx(ax, idx), "index_select")


def index_sample(x, index):
    """Per row i, pick ``x[i, index[i, j]]``: x is [N, D], index [N, K], the result [N, K]."""
    x = tensor_arg(x, "index_sample")
    idx = _int_index(index, "index_sample")
    if x.ndim != 2 or idx.ndim != 2 or idx.shape[0] != x.shape[0]:
        raise ValueError(f"index_sample: x must be [N, D] and index [N, K], got {x.shape} and "
                         f"{list(idx.shape)}")
    idx = _check_range(idx, x.shape[1], "index_sample", negative=False, where="dim 1")
    xp = _xp(idx)
    return _gather(x, (xp.arange(x.shape[0])[:, None], idx), "index_sample")


def take(x, index, mode="raise", name=None):
    """Entries of the flattened x at ``index``; the result has index's shape.

    Args:
        x (Tensor): input.
        index (Tensor): int tensor of any shape.
        mode (str): 'raise' (index must be in [-n, n); negatives count from the end), 'wrap'
            (modulo n) or 'clip' (clamped to [0, n-1]).
    """
    x = tensor_arg(x, "take")
    t_idx = tensor_arg(index, "take", "index")
    if t_idx.dtype.name not in ("int32", "int64"):
        raise TypeError(f"take: the data type of 'index' must be int32 or int64, got "
                        f"{t_idx.dtype}")
    idx = t_idx._data
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"take: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    n = x.size
    xp = _xp(idx)
    if mode == "raise":
        idx = _check_range(idx, n, "take", where="the flattened x")
    elif mode == "wrap":
        idx = idx % n if n else idx
    else:
        idx = xp.clip(idx, 0, max(n - 1, 0))
    return _gather(reshape(x, [-1]), (idx,), "take")


def _along_axis_idx(arr, idx, axis, op, broadcast):
    if idx.ndim != arr.ndim:
        raise ValueError(f"{op}: indices and arr must have the same number of dims, got "
                         f"{list(idx.shape)} and {arr.shape}")
    return norm_axis(axis, arr.ndim, op)


def take_along_axis(arr, indices, axis, broadcast=True):
    """``out[..., j, ...] = arr[..., indices[..., j, ...], ...]`` along ``axis``.

    With ``broadcast`` the index is broadcast against arr's other dims (and arr against an
    index that is larger there).
    """
    arr = tensor_arg(arr, "take_along_axis", "arr")
    idx = _int_index(indices, "take_along_axis", "indices")
    ax = _along_axis_idx(arr, idx, axis, "take_along_axis", broadcast)
    xp = _xp(idx)
    if broadcast:
        ashape = arr.shape
        if any(a < b for a, b in zip(ashape, idx.shape)):
            bshape = list(idx.shape)
        else:
            bshape = list(ashape)
            bshape[ax] = idx.shape[ax]
        try:
            idx = xp.broadcast_to(idx, bshape)
        except ValueError:
            raise ValueError(f"take_along_axis: indices of shape {list(idx.shape)} cannot be "
                             f"broadcast to {bshape}") from None
        target = list(bshape)
        target[ax] = ashape[ax]
        if target != ashape:
            arr = _expand(arr, target, "take_along_axis")
    else:
        for d in range(arr.ndim):
            if d != ax and idx.shape[d] > arr.shape[d]:
                raise ValueError(f"take_along_axis: indices shape {list(idx.shape)} exceeds "
                                 f"arr shape {arr.shape} in dim {d}")
    idx = _check_range(idx, arr.shape[ax], "take_along_axis", "indices", where=f"axis {ax}")
    return _gather(arr, _grid_idx(arr.shape, ax, idx), "take_along_axis")


def gather_nd(x, index, name=None):
    """Gather slices of x addressed by the last dim of ``index``.

    ``index`` of shape [..., k] addresses x's first k dims; the result has shape
    ``index.shape[:-1] + x.shape[k:]``.
    """
    x = tensor_arg(x, "gather_nd")
    idx = _int_index(index, "gather_nd")
    if idx.ndim == 0:
        raise ValueError("gather_nd: index must have at least 1 dim")
    k = idx.shape[-1]
    if k > x.ndim:
        raise ValueError(f"gather_nd: the last dim of index ({k}) exceeds the rank of x "
                         f"(shape {x.shape})")
    if k == 0:
        return _expand(x, list(idx.shape[:-1]) + x.shape, "gather_nd")
    tup = tuple(_check_range(idx[..., j], x.shape[j], "gather_nd", where=f"dim {j}")
                for j in range(k))
    return _gather(x, tup, "gather_nd")


def combinations(x, r=2, with_replacement=False, name=None):
    """All length-``r`` combinations of the elements of the 1-D tensor x (as rows).

    Args:
        x (Tensor): 1-D input.
        r (int): combination length.
        with_replacement (bool): allow an element to repeat within a combination.

    Returns:
        Tensor: shape [number of combinations, r] (shape [0] for r == 0).
    """
    x = tensor_arg(x, "combinations")
    if x.ndim != 1:
        raise TypeError(f"combinations: expected a 1-D vector, got x of shape {x.shape}")
    if not isinstance(r, numbers.Integral) or r < 0:
        raise ValueError(f"combinations: r must be a non-negative int, got {r!r}")
    n = x.shape[0]
    if r == 0:
        return _gather(x, (np.zeros(0, dtype=np.int64),), "combinations")
    combos = _combo_index(n, int(r), bool(with_replacement))
    xp = _xp(x._data)
    return _gather(x, (xp.asarray(combos),), "combinations")


def _combo_index(n, r, repl):
    """Index rows of all combinations, in lexicographic order, built column by column."""
    rows = np.arange(n, dtype=np.int64)[:, None]
    for _ in range(r - 1):
        last = rows[:, -1]
        start = last if repl else last + 1
        counts = np.maximum(n - start, 0)
        total = int(counts.sum())
        rep = np.repeat(rows, counts, axis=0)
        first = np.repeat(np.cumsum(counts) - counts, counts)
        col = np.arange(total, dtype=np.int64) - first + np.repeat(start, counts)
        rows = np.concatenate([rep, col[:, None]], axis=1)
    return rows.reshape(-1, r)


# ---------------------------------------------------------------- scatters

def _scatter_prep(x, index, updates, op):
    x = tensor_arg(x, op)
    idx = _int_index(index, op)
    upd = updates if isinstance(updates, Tensor) else tensor_arg(updates, op, "updates")
    if x.ndim == 0:
        raise ValueError(f"{op}: x must have at least 1 dim")
    if idx.ndim == 2 and idx.shape[1] == 1:
        idx = idx.reshape(-1)
    if idx.ndim > 1:
        raise ValueError(f"{op}: index must be 0-D or 1-D, got shape {list(idx.shape)}")
    want = ([] if idx.ndim == 0 else [idx.shape[0]]) + x.shape[1:]
    if upd.shape != want:
        raise ValueError(f"{op}: updates has shape {upd.shape}, expected {want} for x of shape "
                         f"{x.shape} and index of shape {list(idx.shape)}")
    idx = _check_range(idx, x.shape[0], op, negative=False, where="dim 0 of x")
    return x, idx, cast_to(upd, x._data.dtype)


def scatter(x, index, updates, overwrite=True, name=None):
    """Write (``overwrite``) or accumulate the rows of ``updates`` into x at rows ``index``.

    With ``overwrite=False`` the indexed rows are first zeroed, then every update is added, so
    repeated indices sum up.

    Args:
        x (Tensor): input with at least 1 dim.
        index (Tensor): 1-D int tensor of row numbers in [0, x.shape[0]).
        updates (Tensor): shape ``[len(index)] + x.shape[1:]``.
        overwrite (bool): overwrite or accumulate.

    Raises:
        IndexError: an index value is out of range.
    """
    x, idx, upd = _scatter_prep(x, index, updates, "scatter")
    return _put(x, upd, (idx,), "set" if overwrite else "zero_add", "scatter")


def scatter_(x, index, updates, overwrite=True, name=None):
    """Inplace :func:`scatter` (returns x)."""
    x, idx, upd = _scatter_prep(x, index, updates, "scatter_")
    return _put_inplace(x, upd, (idx,), "set" if overwrite else "zero_add", "scatter")


def _nd_prep(x, index, updates, op):
    idx = _int_index(index, op)
    if idx.ndim == 0:
        raise ValueError(f"{op}: index must have at least 1 dim")
    k = idx.shape[-1]
    if k > x.ndim:
        raise ValueError(f"{op}: the last dim of index ({k}) exceeds the rank of x "
                         f"({x.ndim})")
    want = list(idx.shape[:-1]) + x.shape[k:]
    upd = tensor_arg(updates, op, "updates")
    if upd.shape != want:
        raise ValueError(f"{op}: updates has shape {upd.shape}, expected {want} (index shape "
                         f"{list(idx.shape)}, x shape {x.shape})")
    upd = cast_to(upd, x._data.dtype)
    if k == 0:
        # an empty address is the whole of x: every update lands on all of it
        _sum = tensor_ops().sum

        lead = list(range(idx.ndim - 1))
        return (Ellipsis,), (_sum(upd, axis=lead) if lead else upd)
    tup = tuple(_check_range(idx[..., j], x.shape[j], op, where=f"dim {j}") for j in range(k))
    return tup, upd


def scatter_nd_add(x, index, updates, name=None):
    """Add ``updates`` into x at the slices addressed by the last dim of ``index``
    (repeats accumulate).

    Args:
        x (Tensor): input.
        index (Tensor): int tensor of shape [..., k].
        updates (Tensor): shape ``index.shape[:-1] + x.shape[k:]``.
    """
    x = tensor_arg(x, "scatter_nd_add")
    tup, upd = _nd_prep(x, index, updates, "scatter_nd_add")
    return _put(x, upd, tup, "add", "scatter_nd_add")


def scatter_nd(index, updates, shape, name=None):
    """:func:`scatter_nd_add` into zeros of ``shape`` (with updates' dtype)."""
    upd = tensor_arg(updates, "scatter_nd", "updates")
    shp = shape_arg(shape, "scatter_nd")
    zeros = _wrap(_xp(upd._data).zeros(shp, dtype=upd._data.dtype))
    tup, upd = _nd_prep(zeros, index, upd, "scatter_nd")
    return _put(zeros, upd, tup, "add", "scatter_nd")


def _index_axis_prep(x, index, axis, op):
    x = tensor_arg(x, op)
    idx = _int_index(index, op)
    if idx.ndim > 1:
        raise ValueError(f"{op}: index must be 1-D, got shape {list(idx.shape)}")
    idx = idx.reshape(-1)
    ax = norm_axis(axis, x.ndim, op)
    idx = _check_range(idx, x.shape[ax], op, where=f"axis {ax}")
    return x, idx, ax


def _index_add_args(x, index, axis, value, op):
    x, idx, ax = _index_axis_prep(x, index, axis, op)
    v = tensor_arg(value, op, "value")
    want = list(x.shape)
    want[ax] = idx.shape[0]
    if v.shape != want:
        raise ValueError(f"{op}: value has shape {v.shape}, expected {want}")
    return x, _axis_idx(ax, idx), cast_to(v, x._data.dtype)


def index_add(x, index, axis, value, name=None):
    """Add the slices of ``value`` into x at positions ``index`` along ``axis``.

    Args:
        x (Tensor): input.
        index (Tensor): 1-D int tensor.
        axis (int): the axis.
        value (Tensor): x's shape with dim ``axis`` of size ``len(index)``.
    """
    x, idx, v = _index_add_args(x, index, axis, value, "index_add")
    return _put(x, v, idx, "add", "index_add")


def index_add_(x, index, axis, value, name=None):
    """Inplace :func:`index_add` (returns x)."""
    x, idx, v = _index_add_args(x, index, axis, value, "index_add_")
    return _put_inplace(x, v, idx, "add", "index_add")


def _fill_value(x, value, op):
    if isinstance(value, Tensor):
        if value.size != 1:
            raise ValueError(f"{op}: value must be a scalar or a 1-element tensor, got shape "
                             f"{value.shape}")
        return cast_to(_reshape_to(value, []), x._data.dtype)
    if isinstance(value, (bool, numbers.Number, np.generic)):
        return _xp(x._data).asarray(value).astype(x._data.dtype)
    raise TypeError(f"{op}: value must be a number or a Tensor, got {type(value).__name__}")


def index_fill(x, index, axis, value, name=None):
    """Set the slices of x at positions ``index`` along ``axis`` to ``value``.

    Args:
        x (Tensor): input.
        index (Tensor): 1-D int tensor.
        axis (int): the axis.
        value (float|int|Tensor): the fill value (cast to x's dtype).
    """
    x, idx, ax = _index_axis_prep(x, index, axis, "index_fill")
    # repeated positions are filled once (so the value's gradient counts each once)
    idx = _xp(idx).unique(idx)
    return _put(x, _fill_value(x, value, "index_fill"), _axis_idx(ax, idx), "set", "index_fill")


def index_fill_(x, index, axis, value, name=None):
    """Inplace :func:`index_fill` (returns x)."""
    x, idx, ax = _index_axis_prep(x, index, axis, "index_fill_")
    idx = _xp(idx).unique(idx)
    return _put_inplace(x, _fill_value(x, value, "index_fill_"), _axis_idx(ax, idx), "set",
                        "index_fill")


def _index_put_args(x, indices, value, op):
    x = tensor_arg(x, op)
    if isinstance(indices, Tensor) or not isinstance(indices, (list, tuple)):
        raise TypeError(f"{op}: indices must be a tuple or list of Tensors")
    if len(indices) > x.ndim:
        raise ValueError(f"{op}: got {len(indices)} index tensors for x of rank {x.ndim}")
    parts = []
    d = 0
    for i, it in enumerate(indices):
        t = tensor_arg(it, op, f"indices[{i}]")
        a = t._data
        if a.dtype.kind == "b":
            if a.ndim == 0:
                raise ValueError(f"{op}: bool index tensors must have at least 1 dim")
            if list(a.shape) != x.shape[d:d + a.ndim]:
                raise ValueError(f"{op}: bool index of shape {list(a.shape)} does not match x's "
                                 f"dims {x.shape[d:d + a.ndim]}")
            nz = a.nonzero()
            parts.extend(nz)
            d += a.ndim
        elif a.dtype.kind in "iu":
            parts.append(_check_range(a, x.shape[d], op, f"indices[{i}]", where=f"dim {d}"))
            d += 1
        else:
            raise TypeError(f"{op}: indices[{i}] must be an int or bool tensor, got {t.dtype}")
    if isinstance(value, Tensor):
        if value._data.dtype != x._data.dtype:
            raise ValueError(f"{op}: value has dtype {value.dtype}, but x has {x.dtype}; they "
                             "must match")
        v = value
    else:
        v = _same_value_dtype(value, x, op)
    try:
        tgt = np.broadcast_shapes(*[tuple(p.shape) for p in parts]) + tuple(x.shape[d:])
        np.broadcast_shapes(tuple(v.shape), tgt)
    except ValueError:
        raise ValueError(f"{op}: value of shape {list(v.shape)} cannot be broadcast to the "
                         f"indexed positions of x (shape {x.shape})") from None
    return x, tuple(parts), v


def index_put(x, indices, value, accumulate=False, name=None):
    """Write (or with ``accumulate`` add) ``value`` at ``x[indices]``.

    Args:
        x (Tensor): input.
        indices (tuple|list): int or bool tensors, one per leading dim of x (bool tensors
            cover as many dims as they have); they broadcast together as in NumPy.
        value (Tensor): broadcast to the indexed positions; must have x's dtype.
        accumulate (bool): add instead of overwriting (repeated positions add up).
    """
    x, tup, v = _index_put_args(x, indices, value, "index_put")
    return _put(x, v, tup, "add" if accumulate else "set", "index_put")


def index_put_(x, indices, value, accumulate=False, name=None):
    """Inplace :func:`index_put` (returns x)."""
    x, tup, v = _index_put_args(x, indices, value, "index_put_")
    return _put_inplace(x, v, tup, "add" if accumulate else "set", "index_put")


def _masked_fill_grad(M, x, mask, value, out, g):
    # x keeps the gradient where the mask is off, the fill value takes the rest
    m = M.value(mask)
    gx = M.op(_masked_fill_kernel, g, m, 0)
    if not hasattr(value, "shape"):
        return gx, None, None
    return gx, None, M.op(_masked_fill_kernel, g, _xp(m).logical_not(m), 0)


@op("masked_fill", saves=(1,), broadcast=True, grad=_masked_fill_grad)
def _masked_fill_kernel(x, mask, value):
    # astype: CuPy promotes bfloat16 with a Python scalar to float32
    return _xp(x).where(mask, value, x).astype(x.dtype, copy=False), GRAD


def _masked_fill_args(x, mask, value, op):
    x = tensor_arg(x, op)
    m = tensor_arg(mask, op, "mask")
    if m._data.dtype.kind != "b":
        m = _wrap(m._data.astype(bool))
    try:
        np.broadcast_shapes(tuple(x.shape), tuple(m.shape))
    except ValueError:
        raise ValueError(f"{op}: mask of shape {m.shape} cannot be broadcast with x of shape "
                         f"{x.shape}") from None
    return x, m, _fill_value(x, value, op)


def masked_fill(x, mask, value, name=None):
    """Where ``mask`` is True, replace x by ``value`` (the mask broadcasts with x).

    Args:
        x (Tensor): input.
        mask (Tensor): bool tensor broadcastable with x.
        value (float|int|Tensor): the fill value (cast to x's dtype).
    """
    x, m, v = _masked_fill_args(x, mask, value, "masked_fill")
    return apply(_masked_fill_kernel, x, m, v)


def masked_fill_(x, mask, value, name=None):
    """Inplace :func:`masked_fill` (the mask must broadcast to x's shape; returns x)."""
    x, m, v = _masked_fill_args(x, mask, value, "masked_fill_")
    return apply_(_masked_fill_kernel, x, m, v)


def select_scatter(x, values, axis, index, name=None):
    """x with the slice at ``index`` along ``axis`` replaced by ``values``.

    Args:
        x (Tensor): input.
        values (Tensor): shape of x without dim ``axis``.
        axis (int): the axis.
        index (int): position along the axis.
    """
    x = tensor_arg(x, "select_scatter")
    ax = norm_axis(axis, x.ndim, "select_scatter")
    n = x.shape[ax]
    index = int(index)
    if not -n <= index < n:
        raise OutOfRangeError(f"select_scatter: index {index} is out of range for axis {ax} of "
                              f"size {n}")
    v = tensor_arg(values, "select_scatter", "values")
    want = x.shape[:ax] + x.shape[ax + 1:]
    if v.shape != want:
        raise ValueError(f"select_scatter: values has shape {v.shape}, expected the slice "
                         f"shape {want}")
    return _put(x, cast_to(v, x._data.dtype), _axis_idx(ax, index % n), "set",
                "select_scatter")


def _diag_put_args(x, y, offset, a1, a2, op, a1n, a2n):
    x = tensor_arg(x, op)
    a1, a2, off = _diag_axes(x, offset, a1, a2, op, a1n, a2n)
    idx, length = _diag_idx(x.shape, off, a1, a2, _xp(x._data))
    y = tensor_arg(y, op, "y")
    want = [s for d, s in enumerate(x.shape) if d not in (a1, a2)] + [length]
    if y.shape != want:
        raise ValueError(f"{op}: y has shape {y.shape}, expected {want} (the diagonal of x "
                         f"of shape {x.shape} with offset {off})")
    return x, cast_to(y, x._data.dtype), idx


def diagonal_scatter(x, y, offset=0, axis1=0, axis2=1, name=None):
    """x with the ``offset`` diagonal of the (axis1, axis2) planes replaced by ``y``.

    ``y`` has the shape :func:`diagonal` returns for the same arguments.
    """
    x, y, idx = _diag_put_args(x, y, offset, axis1, axis2, "diagonal_scatter", "axis1", "axis2")
    return _put(x, y, idx, "set", "diagonal_scatter")


def fill_diagonal_tensor(x, y, offset=0, dim1=0, dim2=1, name=None):
    """x with the diagonal of the (dim1, dim2) planes replaced by ``y`` (a Tensor method)."""
    x, y, idx = _diag_put_args(x, y, offset, dim1, dim2, "fill_diagonal_tensor", "dim1", "dim2")
    return _put(x, y, idx, "set", "fill_diagonal_tensor")


def fill_diagonal_tensor_(x, y, offset=0, dim1=0, dim2=1, name=None):
    """Inplace :func:`fill_diagonal_tensor` (returns x)."""
    x, y, idx = _diag_put_args(x, y, offset, dim1, dim2, "fill_diagonal_tensor_", "dim1",
                               "dim2")
    return _put_inplace(x, y, idx, "set", "fill_diagonal_tensor")


def fill_diagonal_(x, value, offset=0, wrap=False, name=None):
    """Fill the main diagonal of x with ``value`` in place (a Tensor method; returns x).

    For 2-D x, ``offset`` selects another diagonal and ``wrap`` continues the diagonal below
    the first ``ncols`` rows of a tall matrix (as numpy.fill_diagonal). For more dims the
    positions ``(i, i, ..., i)`` for ``i < min(x.shape)`` are filled.
    """
    x = tensor_arg(x, "fill_diagonal_")
    if x.ndim < 2:
        raise ValueError(f"fill_diagonal_: x must have at least 2 dims, got shape {x.shape}")
    xp = _xp(x._data)
    if x.ndim == 2:
        nr, nc = x.shape
        if wrap and nr > nc and offset == 0:
            flat = xp.arange(0, x.size, nc + 1)
            idx = (flat // nc, flat % nc)
        else:
            idx, _ = _diag_idx(x.shape, int(offset), 0, 1, xp)
    else:
        m = min(x.shape)
        d = xp.arange(m)
        idx = (d,) * x.ndim
    v = _fill_value(x, value, "fill_diagonal_")
    return _put_inplace(x, v, idx, "set", "fill_diagonal")


def _put_along_args(arr, indices, values, axis, op, broadcast):
    arr = tensor_arg(arr, op, "arr")
    idx = _int_index(indices, op, "indices")
    ax = _along_axis_idx(arr, idx, axis, op, broadcast)
    xp = _xp(idx)
    vals = values if isinstance(values, Tensor) else _wrap(xp.asarray(values))
    vals = cast_to(vals, arr._data.dtype) if vals._data.dtype != arr._data.dtype else vals
    if broadcast:
        if all(a >= b for a, b in zip(arr.shape, idx.shape)):
            bshape = list(arr.shape)
            bshape[ax] = idx.shape[ax]
            try:
                idx = xp.broadcast_to(idx, bshape)
            except ValueError:
                raise ValueError(f"{op}: indices of shape {list(idx.shape)} cannot be "
                                 f"broadcast to {bshape}") from None
        if vals.shape != list(idx.shape):
            vals = _expand(vals, list(idx.shape), op)
    else:
        if vals.ndim != idx.ndim:
            raise ValueError(f"{op}: indices and values must have the same number of dims")
        for d in range(arr.ndim):
            if vals.shape[d] < idx.shape[d]:
                raise ValueError(f"{op}: values of shape {vals.shape} is smaller than indices "
                                 f"of shape {list(idx.shape)} in dim {d}")
        if vals.shape != list(idx.shape):
            vals = getitem(vals, tuple(_pyslice(0, n) for n in idx.shape))
    for d in range(arr.ndim):
        if d != ax and idx.shape[d] > arr.shape[d]:
            raise ValueError(f"{op}: indices of shape {list(idx.shape)} is larger than arr of "
                             f"shape {arr.shape} in dim {d}")
    idx = _check_range(idx, arr.shape[ax], op, "indices", where=f"axis {ax}")
    return arr, _grid_idx(arr.shape, ax, idx), vals


def _last_writer_mask(idx, shape):
    """For each written element, whether it is the last write to its position (C order)."""
    xp = _xp(idx[-1])
    lin = xp.ravel_multi_index(xp.broadcast_arrays(*idx), shape).reshape(-1)
    order = xp.arange(lin.size)
    last = xp.full(int(np.prod(shape)), -1, dtype=order.dtype)
    backend.index_reduce("maximum", last, lin, order)
    return (last[lin] == order).reshape(np.broadcast_shapes(*[tuple(i.shape) for i in idx]))


# fused: the reductions' backward needs the forward's touched and tie counts, and has no
# higher-order rule
@op("put_along_axis")
def _reduce_kernel(x, v, idx, reduce, include_self):
    """put_along_axis with reduce 'mul', 'mean', 'amax' or 'amin' (no higher-order rule)."""
    xp = _xp(x)
    shape = x.shape
    lin = xp.ravel_multi_index(xp.broadcast_arrays(*idx), shape).reshape(-1)
    vals = v.reshape(-1)
    size = x.size
    cnt = xp.bincount(lin, minlength=size)
    touched = cnt > 0
    flat = x.reshape(-1)
    out = flat.copy()
    if reduce == "mul":
        pv = xp.ones(size, dtype=x.dtype)
        _ufunc_at(xp, "multiply", pv, lin, vals)
        out = flat * pv if include_self else xp.where(touched, pv, flat)
    elif reduce == "mean":
        tot = xp.zeros(size, dtype=np.float64 if x.dtype.kind in "iub" else x.dtype)
        _add_at(tot, lin, vals)
        den = cnt + (1 if include_self else 0)
        num = tot + flat if include_self else tot
        mean = num / xp.maximum(den, 1)
        if x.dtype.kind in "iu":
            mean = xp.trunc(mean)
        out = xp.where(touched, mean.astype(x.dtype), flat)
    else:
        ufunc = "maximum" if reduce == "amax" else "minimum"
        if not include_self:
            init = _extreme(x.dtype, reduce == "amax")
            out[lin] = init
        _ufunc_at(xp, ufunc, out, lin, vals)
    out = out.reshape(shape)

    def bw(g):
        gf = g.reshape(-1)
        if reduce == "mul":
            gx = gf * pv if include_self else xp.where(touched, 0, gf)
            gv = gf[lin] * out.reshape(-1)[lin] / vals
        elif reduce == "mean":
            den_f = xp.maximum(den, 1).astype(g.dtype)
            gx = gf / den_f if include_self else gf.copy()
            if not include_self:
                gx[touched] = 0
            gv = gf[lin] / den_f[lin]
        else:
            of = out.reshape(-1)
            hit_v = (vals == of[lin])
            ties = xp.bincount(lin, weights=hit_v.astype(np.float64), minlength=size)
            hit_x = (flat == of) & (touched if include_self else xp.zeros_like(touched))
            ties = ties + hit_x
            safe = xp.maximum(ties, 1).astype(g.dtype)
            gx = xp.where(touched, xp.where(hit_x, gf / safe, 0), gf)
            gv = xp.where(hit_v, gf[lin] / safe[lin], 0)
        return gx.reshape(shape).astype(g.dtype), gv.reshape(v.shape).astype(g.dtype)

    return out, bw


def _ufunc_at(xp, name, a, lin, vals):
    backend.index_reduce(name, a, lin, vals)


def _extreme(dt, for_max):
    if dt.kind == "f" or dt == _dt.BFLOAT16_NP:
        return -np.inf if for_max else np.inf
    if dt.kind == "b":
        return not for_max
    info = np.iinfo(dt)
    return info.min if for_max else info.max




_REDUCES = ("assign", "add", "mul", "multiply", "mean", "amax", "amin")


def _put_along(arr, indices, values, axis, reduce, include_self, broadcast, inplace):
    op = "put_along_axis_" if inplace else "put_along_axis"
    if reduce not in _REDUCES:
        raise ValueError(f"{op}: reduce must be one of {list(_REDUCES)}, got {reduce!r}")
    arr, idx, vals = _put_along_args(arr, indices, values, axis, op, broadcast)
    run = apply_ if inplace else apply
    if reduce == "assign":
        keep = _last_writer_mask(idx, tuple(arr.shape))
        gmask = None if bool(keep.all()) else keep
        return run(_named(_put_kernel, "put_along_axis"), arr, vals, idx=idx, mode="set",
                   gmask=gmask)
    if reduce == "add":
        mode = "add" if include_self else "zero_add"
        return run(_named(_put_kernel, "put_along_axis"), arr, vals, idx=idx, mode=mode)
    red = "mul" if reduce == "multiply" else reduce
    return run(_reduce_kernel, arr, vals, idx=idx, reduce=red, include_self=bool(include_self))


def put_along_axis(arr, indices, values, axis, reduce="assign", include_self=True,
                   broadcast=True):
    """Write ``values`` into arr at ``indices`` along ``axis``, combining with ``reduce``.

    Args:
        arr (Tensor): input.
        indices (Tensor): int tensor with arr's rank.
        values (float|Tensor): broadcast to the indices' shape.
        axis (int): the axis.
        reduce (str): 'assign', 'add', 'mul'/'multiply', 'mean', 'amax' or 'amin'.
        include_self (bool): whether arr's own value takes part in the reduction.
        broadcast (bool): broadcast indices against arr's other dims.
    """
    return _put_along(arr, indices, values, axis, reduce, include_self, broadcast, False)


def put_along_axis_(arr, indices, values, axis, reduce="assign", include_self=True,
                    broadcast=True):
    """Inplace :func:`put_along_axis` (a Tensor method; returns arr)."""
    return _put_along(arr, indices, values, axis, reduce, include_self, broadcast, True)


def shard_index(input, index_num, nshards, shard_id, ignore_value=-1):  # noqa: A002
    """Map global ids to ids within shard ``shard_id``; ids of other shards become
    ``ignore_value``.

    The shard size is ``ceil(index_num / nshards)``; an id v belongs to shard
    ``v // shard_size`` and maps to ``v % shard_size`` there.
    """
    x = tensor_arg(input, "shard_index", "input")
    if x.dtype.name not in ("int32", "int64"):
        raise TypeError(f"shard_index: input must be int32 or int64, got {x.dtype}")
    if x.ndim < 2 or x.shape[-1] != 1:
        raise ValueError(f"shard_index: input must have shape [..., 1] with at least 2 dims, "
                         f"got {x.shape}")
    if nshards <= 0 or not 0 <= shard_id < nshards:
        raise ValueError(f"shard_index: shard_id must be in [0, nshards), got shard_id="
                         f"{shard_id}, nshards={nshards}")
    size = (index_num + nshards - 1) // nshards
    a = x._data
    xp = _xp(a)
    out = xp.where(a // size == shard_id, a % size, ignore_value).astype(a.dtype)
    return _wrap(out)


# ---------------------------------------------------------------- indexing

def _index_arrays(item, xp, op="__getitem__"):
    """Turn Paddle index objects into a NumPy/CuPy index tuple; True if it is basic indexing.

    Bool arrays with at least one dim become their ``nonzero()`` index arrays (NumPy's own
    meaning for them), so that gradients can scatter with ``add.at``.
    """
    if not isinstance(item, tuple):
        item = (item,)
    out = []
    basic = True
    for it in item:
        if isinstance(it, Tensor):
            if it.ndim == 0 and it._data.dtype.kind in "iu":
                out.append(int(it.item()))
                continue
            arr = it._data
            if arr.dtype.kind not in "iub":
                raise IndexError(f"{op}: tensor indices must be integer or bool, got {it.dtype}")
        elif isinstance(it, (list, np.ndarray)) or backend.is_gpu_array(it):
            if isinstance(it, list) and any(isinstance(e, Tensor) for e in it):
                it = [e.item() if isinstance(e, Tensor) else e for e in it]
            arr = xp.asarray(it)
            if arr.dtype.kind == "f" and arr.size == 0:
                arr = arr.astype(np.int64)
            if arr.dtype.kind not in "iub":
                raise IndexError(f"{op}: list indices must be integers or bools, got "
                                 f"{arr.dtype}")
        elif isinstance(it, (bool, np.bool_)):
            arr = xp.asarray(bool(it))
        elif it is None or it is Ellipsis or isinstance(it, numbers.Integral):
            out.append(it if it is None or it is Ellipsis else int(it))
            continue
        elif isinstance(it, _pyslice):
            it = _pyslice(*(int(v.item()) if isinstance(v, Tensor) else v
                            for v in (it.start, it.stop, it.step)))
            if it.step == 0:
                raise ValueError(f"{op}: slice step cannot be zero")
            out.append(it)
            continue
        else:
            raise IndexError(f"{op}: unsupported index type {type(it).__name__}; use ints, "
                             "slices, None, Ellipsis, lists or Tensors")
        basic = False
        if arr.dtype.kind == "b" and arr.ndim:
            out.extend(arr.nonzero())
        else:
            out.append(arr)
    if basic and Ellipsis not in out:
        # a trailing Ellipsis makes NumPy return a 0-d *view* for all-int indices
        out.append(Ellipsis)
    return tuple(out), basic


def _check_bool_shapes(item, shape, op):
    """NumPy requires a bool index to match the dims it covers; say so clearly."""
    items = item if isinstance(item, tuple) else (item,)
    d = 0
    for it in items:
        a = it._data if isinstance(it, Tensor) else it
        if it is None:
            continue
        if it is Ellipsis:
            return
        if hasattr(a, "dtype") and a.dtype.kind == "b" and a.ndim:
            if list(a.shape) != list(shape[d:d + a.ndim]):
                raise IndexError(f"{op}: bool index of shape {list(a.shape)} does not match "
                                 f"the indexed dims {list(shape[d:d + a.ndim])} of the tensor "
                                 f"(shape {list(shape)})")
            d += a.ndim
        else:
            d += 1


def _check_gpu_bounds(idx, shape):
    """CuPy wraps out-of-range integer array indices around instead of raising: check them
    against the dims they index (one reduction and sync per index array), as NumPy does."""
    ndim = len(shape)
    used = sum(1 for it in idx if it is not None and it is not Ellipsis)
    d = 0
    for it in idx:
        if it is None:
            continue
        if it is Ellipsis:
            d += ndim - used
            continue
        if backend.is_gpu_array(it) and it.dtype.kind in "iu" and it.size and d < ndim:
            n = shape[d]
            if bool(((it < -n) | (it >= n)).any()):
                lo, hi = int(it.min()), int(it.max())
                raise IndexError(f"index out of range for dim {d} of size {n} (indices span "
                                 f"[{lo}, {hi}])")
        d += 1


def getitem(x: Tensor, item):
    """``x[item]``: basic indices give a view; lists, tensors and masks give a copy."""
    xp = _xp(x._data)
    idx, basic = _index_arrays(item, xp)
    try:
        if not basic and xp is not np:
            _check_gpu_bounds(idx, x.shape)
        if basic and x.stop_gradient:
            res = _wrap(x._data[idx])
        else:
            if not basic:
                _check_bool_shapes(item, x.shape, "Tensor.__getitem__")
            res = apply(_getitem_kernel, x, idx=idx)
    except IndexError as e:
        raise OutOfRangeError(f"Tensor.__getitem__: index {item!r} is invalid for a tensor of "
                              f"shape {x.shape}: {e}") from None
    if basic:
        _view_of(res, x)
    return res


_getitem_kernel = _named(_gather_kernel, "slice")


def setitem(x: Tensor, item, value):
    """``x[item] = value`` in place; differentiable w.r.t. both x and value."""
    check_inplace(x, "Tensor.__setitem__")
    xp = _xp(x._data)
    idx, basic = _index_arrays(item, xp, "Tensor.__setitem__")
    need = state.tls.grad_enabled and (not x.stop_gradient or
                                   (isinstance(value, Tensor) and not value.stop_gradient))
    try:
        if not basic and xp is not np:
            _check_gpu_bounds(idx, x.shape)
        if not basic:
            _check_bool_shapes(item, x.shape, "Tensor.__setitem__")
        if not need:
            v = value._data if isinstance(value, Tensor) else value
            if backend.is_array(v):
                v = xp.asarray(v).astype(x._data.dtype, copy=False)
            writable(x)[idx] = v
            x._ver.v += 1
            return
        v = value if isinstance(value, Tensor) else _wrap(xp.asarray(value, dtype=x._data.dtype))
        v = cast_to(v, x._data.dtype)
        apply_(_named(_put_kernel, "set_value"), x, v, idx=idx, mode="set")
    except (IndexError, ValueError) as e:
        vs = value.shape if isinstance(value, Tensor) else list(np.shape(value))
        cls = OutOfRangeError if isinstance(e, IndexError) else ValueError
        raise cls(f"Tensor.__setitem__: cannot assign a value of shape {vs} to index "
                  f"{item!r} of a tensor of shape {x.shape}: {e}") from None


# ---------------------------------------------------------------- dtype

def cast(x, dtype):
    """Return x converted to ``dtype`` (differentiable between floating dtypes).

    The result is always a new tensor, as in Paddle: a cast to x's own dtype is a copy, so
    writing to it leaves x alone. Narrowing float casts round to nearest (NumPy and CUDA);
    Paddle 2.6.2's CPU kernel truncates float16/bfloat16 mantissas toward zero instead, and
    its GPU kernel rounds to nearest like this one (values can differ by one float16 ulp from
    Paddle on CPU). Out-of-range values give inf, silently.

    Args:
        x (Tensor): input.
        dtype (str|paddle.dtype|np.dtype): target dtype.

    Returns:
        Tensor: x's values in ``dtype``.

    Example:
        >>> paddle.to_tensor([1.5, 2.5]).astype('float16')
    """
    x = tensor_arg(x, "cast")
    npd = _dt.to_np(dtype)
    if x._data.dtype == npd:
        clone = tensor_ops().clone

        return clone(x)
    if x._data.dtype.kind == "f" and npd.itemsize < x._data.dtype.itemsize or \
            npd.kind in "iub":
        # NumPy warns on overflow / NaN in a narrowing cast; Paddle does not
        with np.errstate(over="ignore", invalid="ignore"):
            return cast_to(x, npd)
    return cast_to(x, npd)


def cast_(x, dtype):
    """Inplace :func:`cast`: x itself takes the new dtype (returns x)."""
    x = tensor_arg(x, "cast_")
    check_inplace(x, "cast_")
    if x._data.dtype == _dt.to_np(dtype):
        x._ver.v += 1
        return x
    res = cast(x, dtype)
    if res._node is None:
        # a cast to an integer dtype (or under no_grad) leaves the graph
        x._node, x._idx = None, 0
        x.stop_gradient = res.stop_gradient
    return inplace(x, "cast_", lambda src: res, write=False)


def tolist(x):
    """x as nested Python lists (a 0-D tensor gives a Python scalar)."""
    return tensor_arg(x, "tolist").tolist()


API = ["cast", "cast_", "reshape", "reshape_", "transpose", "transpose_", "unsqueeze",
       "unsqueeze_", "squeeze", "squeeze_", "flatten", "expand", "expand_as", "broadcast_to",
       "broadcast_shape", "broadcast_tensors", "concat", "stack", "split", "chunk", "vsplit",
       "unbind", "unstack", "tile", "repeat_interleave", "flip", "reverse", "rot90", "roll",
       "moveaxis", "t", "t_", "diagonal", "diagonal_scatter", "select_scatter", "gather",
       "gather_nd", "index_select", "index_sample", "take", "take_along_axis",
       "put_along_axis", "scatter", "scatter_", "scatter_nd", "scatter_nd_add", "index_add",
       "index_add_", "index_fill", "index_fill_", "index_put", "index_put_", "masked_fill",
       "masked_fill_", "slice", "strided_slice", "crop", "shard_index", "combinations",
       "as_strided", "view", "view_as", "unflatten", "unfold", "atleast_1d", "atleast_2d",
       "atleast_3d", "tolist"]
METHODS = [n for n in API if n not in ("crop", "tolist")] + [
    "flatten_", "put_along_axis_", "fill_diagonal_", "fill_diagonal_tensor",
    "fill_diagonal_tensor_", ("astype", cast)]
