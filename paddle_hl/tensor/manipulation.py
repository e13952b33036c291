"""Shape and layout ops, indexing and ``__setitem__`` (Paddle's ``tensor/manipulation.py``).

reshape, squeeze, unsqueeze, flatten and basic indexing return *views*: they share storage and
the inplace version counter with their input, as in Paddle 2.6.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import backend
from ..framework import state
from ..framework.op import apply, check_inplace
from ..framework.tensor import Tensor, _wrap
from ._helpers import norm_axes, norm_axis, shape_arg, tensor_arg

__all__ = []


def _xp(a):
    return backend.get_array_module(a)


def _view_of(out: Tensor, x: Tensor) -> Tensor:
    """Mark ``out`` as a view of ``x``: writes through either bump the same version counter."""
    if out._data.base is not None or out._data is x._data:
        out._ver = x._ver
    return out


# ---------------------------------------------------------------- reshape family

def _reshape_kernel(x, shape):
    src = x.shape
    return x.reshape(shape), lambda g: (g.reshape(src),)


_reshape_kernel.op_name = "reshape"
_reshape_kernel.saves = ()
_reshape_kernel.hi = lambda i, g, shape: (reshape(g[0], i[0].shape),)


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


def reshape(x, shape, name=None):
    """Return x with a new shape (a view when possible). ``0`` keeps a dim, ``-1`` infers one.

    Args:
        x (Tensor): input.
        shape (list|tuple|Tensor): target shape; may mix ints and 0-D tensors.
    """
    x = tensor_arg(x, "reshape")
    shp = _infer_shape(shape_arg(shape, "reshape"), x.size, "reshape", x._data.shape)
    if shp == x._data.shape and x.stop_gradient:
        out = _wrap(x._data.view())
        return _view_of(out, x)
    return _view_of(apply(_reshape_kernel, x, shape=shp), x)


def _transpose_kernel(x, perm):
    inv = tuple(np.argsort(perm))
    return x.transpose(perm), lambda g: (g.transpose(inv),)


_transpose_kernel.op_name = "transpose"
_transpose_kernel.saves = ()
_transpose_kernel.hi = lambda i, g, perm: (transpose(g[0], list(np.argsort(perm))),)


def transpose(x, perm, name=None):
    """Permute the dims of x according to ``perm``."""
    x = tensor_arg(x, "transpose")
    if isinstance(perm, Tensor):
        perm = perm.tolist()
    perm = list(perm)
    if len(perm) != x.ndim:
        raise ValueError(f"transpose: perm {perm} has {len(perm)} entries but x has shape "
                         f"{x.shape} ({x.ndim} dims)")
    p = tuple(norm_axis(a, x.ndim, "transpose", "perm") for a in perm)
    if len(set(p)) != len(p):
        raise ValueError(f"transpose: perm {perm} repeats an axis")
    return apply(_transpose_kernel, x, perm=p)


def unsqueeze(x, axis, name=None):
    """Insert size-1 dims at ``axis`` (int or list, positions in the output)."""
    x = tensor_arg(x, "unsqueeze")
    if isinstance(axis, Tensor):
        axis = axis.tolist()
    axes = [axis] if isinstance(axis, numbers.Integral) else list(axis)
    shape = list(x._data.shape)
    for a in axes:
        a = int(a)
        n = len(shape) + 1
        if not -n <= a < n:
            raise ValueError(f"unsqueeze: axis {a} is out of range for a result of rank {n}")
        shape.insert(a % n, 1)
    return reshape(x, shape)


def squeeze(x, axis=None, name=None):
    """Remove size-1 dims (all of them, or those in ``axis``; others are left alone)."""
    x = tensor_arg(x, "squeeze")
    shape = x._data.shape
    if axis is None:
        keep = [s for s in shape if s != 1]
    else:
        axes = norm_axes(axis, x.ndim, "squeeze")
        keep = [s for i, s in enumerate(shape) if not (i in axes and s == 1)]
    return reshape(x, keep)


def flatten(x, start_axis=0, stop_axis=-1, name=None):
    """Flatten dims ``start_axis..stop_axis`` into one."""
    x = tensor_arg(x, "flatten")
    if x.ndim == 0:
        return reshape(x, [1])
    s = norm_axis(start_axis, x.ndim, "flatten", "start_axis")
    e = norm_axis(stop_axis, x.ndim, "flatten", "stop_axis")
    if s > e:
        raise ValueError(f"flatten: start_axis ({start_axis}) must not be after stop_axis "
                         f"({stop_axis}) for shape {x.shape}")
    shape = x.shape
    n = 1
    for d in shape[s:e + 1]:
        n *= d
    return reshape(x, shape[:s] + [n] + shape[e + 1:])


# ---------------------------------------------------------------- broadcasting

def _expand_kernel(x, shape):
    xp = _xp(x)
    src = x.shape
    out = xp.ascontiguousarray(xp.broadcast_to(x, shape))

    def bw(g):
        from ..framework.op import _unbroadcast

        return (_unbroadcast(g, src),)

    return out, bw


def _expand_hi(i, g, shape):
    from ._unbroadcast import unbroadcast_tensor

    return (unbroadcast_tensor(g[0], i[0].shape),)


_expand_kernel.op_name = "expand"
_expand_kernel.saves = ()
_expand_kernel.hi = _expand_hi


def expand(x, shape, name=None):
    """Broadcast x to ``shape`` (-1 keeps a dim; extra leading dims are prepended)."""
    x = tensor_arg(x, "expand")
    shp = shape_arg(shape, "expand")
    src = x.shape
    if len(shp) < len(src):
        raise ValueError(f"expand: shape {shp} has fewer dims than x's shape {src}")
    off = len(shp) - len(src)
    out = []
    for i, s in enumerate(shp):
        if i >= off and s == -1:
            s = src[i - off]
        elif s < 0:
            raise ValueError(f"expand: shape {shp} has invalid dim {s} at position {i}")
        if i >= off and src[i - off] not in (1, s):
            raise ValueError(f"expand: cannot expand x of shape {src} to {shp}: dim {i - off} "
                             f"has size {src[i - off]}, expected 1 or {s}")
        out.append(s)
    return apply(_expand_kernel, x, shape=tuple(out))


# ---------------------------------------------------------------- joining

def _concat_kernel(*xs, axis):
    xp = _xp(xs[0])
    sizes = [a.shape[axis] for a in xs]
    out = xp.concatenate(xs, axis=axis)

    def bw(g):
        idx = np.cumsum(sizes)[:-1].tolist()
        return tuple(xp.split(g, idx, axis=axis))

    return out, bw


def _concat_hi(i, g, axis):
    return tuple(split(g[0], [t.shape[axis] for t in i], axis=axis))


_concat_kernel.op_name = "concat"
_concat_kernel.saves = ()
_concat_kernel.hi = _concat_hi


def _tensor_list(xs, op):
    if isinstance(xs, Tensor):
        return list(xs.unbind(0)) if xs.ndim else [xs]
    if not isinstance(xs, (list, tuple)) or not xs:
        raise TypeError(f"{op}: 'x' must be a non-empty list or tuple of Tensors")
    ts = [tensor_arg(t, op, f"x[{i}]") for i, t in enumerate(xs)]
    d0 = ts[0]._data.dtype
    if any(t._data.dtype != d0 for t in ts):
        from ._helpers import cast_to, result_type

        common = d0
        for t in ts[1:]:
            common = result_type(common, t._data.dtype)
        ts = [cast_to(t, common) for t in ts]
    return ts


def concat(x, axis=0, name=None):
    """Join tensors along an existing axis."""
    ts = _tensor_list(x, "concat")
    nd = ts[0].ndim
    if nd == 0:
        raise ValueError("concat: 0-D tensors cannot be concatenated; use stack")
    ax = norm_axis(axis, nd, "concat")
    for i, t in enumerate(ts):
        if t.ndim != nd or any(a != b for j, (a, b) in enumerate(zip(t.shape, ts[0].shape))
                               if j != ax):
            raise ValueError(f"concat: x[{i}] has shape {t.shape}, which does not match x[0]'s "
                             f"shape {ts[0].shape} outside axis {ax}")
    return apply(_concat_kernel, *ts, axis=ax)


def stack(x, axis=0, name=None):
    """Join tensors of equal shape along a new axis."""
    ts = _tensor_list(x, "stack")
    nd = ts[0].ndim + 1
    if not -nd <= axis < nd:
        raise ValueError(f"stack: axis {axis} is out of range for a result of rank {nd}")
    for i, t in enumerate(ts):
        if t.shape != ts[0].shape:
            raise ValueError(f"stack: all inputs must have the same shape; x[{i}] has "
                             f"{t.shape}, x[0] has {ts[0].shape}")
    ax = axis % nd
    return concat([unsqueeze(t, ax) for t in ts], axis=ax)


def _split_kernel(x, sections, axis):
    xp = _xp(x)
    idx = np.cumsum(sections)[:-1].tolist()
    outs = tuple(xp.split(x, idx, axis=axis))

    def bw(*gs):
        return (xp.concatenate(gs, axis=axis),)

    return outs, bw


_split_kernel.op_name = "split"
_split_kernel.saves = ()
_split_kernel.hi = lambda i, g, sections, axis: (concat(list(g), axis=axis),)


def split(x, num_or_sections, axis=0, name=None):
    """Split x into equal parts (an int) or parts of the given sizes (a list; one -1 allowed)."""
    x = tensor_arg(x, "split")
    ax = norm_axis(axis, x.ndim, "split")
    n = x.shape[ax]
    if isinstance(num_or_sections, numbers.Integral):
        k = int(num_or_sections)
        if k <= 0 or n % k:
            raise ValueError(f"split: dim {ax} of x (shape {x.shape}) has size {n}, which cannot"
                             f" be split into {k} equal parts")
        sections = [n // k] * k
    else:
        sections = shape_arg(num_or_sections, "split", "num_or_sections")
        if sections.count(-1) > 1:
            raise ValueError("split: num_or_sections may contain at most one -1")
        if -1 in sections:
            sections[sections.index(-1)] = n - (sum(sections) + 1)
        if sum(sections) != n or any(s < 0 for s in sections):
            raise ValueError(f"split: sections {sections} do not add up to the size {n} of dim "
                             f"{ax} of x (shape {x.shape})")
    return list(apply(_split_kernel, x, sections=tuple(sections), axis=ax))


# ---------------------------------------------------------------- indexing

def _index_arrays(item, xp, op="__getitem__"):
    """Turn Paddle index objects into a NumPy/CuPy index tuple; True if it is basic indexing."""
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
            out.append(arr)
            basic = False
        elif isinstance(it, (list, np.ndarray)) or backend.is_gpu_array(it):
            arr = xp.asarray(it)
            if arr.dtype.kind == "f" and arr.size == 0:
                arr = arr.astype(np.int64)
            if arr.dtype.kind not in "iub":
                raise IndexError(f"{op}: list indices must be integers or bools, got "
                                 f"{arr.dtype}")
            out.append(arr)
            basic = False
        elif it is None or it is Ellipsis or isinstance(it, (slice, numbers.Integral)):
            if isinstance(it, slice):
                it = slice(*(int(v.item()) if isinstance(v, Tensor) else v
                             for v in (it.start, it.stop, it.step)))
                if it.step == 0:
                    raise ValueError(f"{op}: slice step cannot be zero")
            elif isinstance(it, bool):
                out.append(np.asarray(it))
                basic = False
                continue
            out.append(it)
        else:
            raise IndexError(f"{op}: unsupported index type {type(it).__name__}; use ints, "
                             "slices, None, Ellipsis, lists or Tensors")
    return tuple(out), basic


def _getitem_kernel(x, idx):
    xp = _xp(x)
    src, dt = x.shape, x.dtype
    out = x[idx]
    if not isinstance(out, xp.ndarray):
        out = xp.asarray(out)

    def bw(g):
        full = xp.zeros(src, dtype=dt)
        if _is_basic(idx):
            full[idx] = g
        else:
            xp.add.at(full, idx, g) if xp is np else full.scatter_add(idx, g)
        return (full,)

    return out, bw


def _is_basic(idx):
    return all(i is None or i is Ellipsis or isinstance(i, (slice, int)) for i in idx)


def _getitem_hi(i, g, idx):
    return (apply(_scatter_grad_kernel, g[0], idx=idx, shape=tuple(i[0].shape)),)


_getitem_kernel.op_name = "slice"
_getitem_kernel.saves = ()
_getitem_kernel.hi = _getitem_hi


def _scatter_grad_kernel(g, idx, shape):
    """The gradient of indexing as an op of its own, so that it can be differentiated again."""
    xp = _xp(g)
    full = xp.zeros(shape, dtype=g.dtype)
    if _is_basic(idx):
        full[idx] = g
    else:
        xp.add.at(full, idx, g) if xp is np else full.scatter_add(idx, g)
    return full, lambda gg: (gg[idx],)


_scatter_grad_kernel.op_name = "slice_grad"
_scatter_grad_kernel.saves = ()
_scatter_grad_kernel.hi = lambda i, g, idx, shape: (getitem(g[0], idx),)


def getitem(x: Tensor, item):
    """``x[item]``: basic indices give a view; lists, tensors and masks give a copy."""
    idx, basic = _index_arrays(item, _xp(x._data))
    try:
        if basic and x.stop_gradient:
            out = x._data[idx]
            if not isinstance(out, _xp(x._data).ndarray):
                out = _xp(x._data).asarray(out)
            res = _wrap(out)
        else:
            res = apply(_getitem_kernel, x, idx=idx)
    except IndexError as e:
        raise IndexError(f"Tensor.__getitem__: index {item!r} is invalid for a tensor of shape "
                         f"{x.shape}: {e}") from None
    if basic:
        _view_of(res, x)
    return res


def _setitem_kernel(x, v, idx):
    out = x.copy()
    out[idx] = v
    vshape = v.shape

    def bw(g):
        gx = g.copy()
        gx[idx] = 0
        from ..framework.op import _unbroadcast

        gv = g[idx]
        if not hasattr(gv, "shape"):
            gv = _xp(g).asarray(gv)
        return gx, _unbroadcast_to(gv, vshape, _unbroadcast)

    return out, bw


def _unbroadcast_to(g, shape, unb):
    if g.shape == shape:
        return g
    if g.size == int(np.prod(shape)) and g.ndim < len(shape):
        return g.reshape(shape)
    return unb(g, shape) if g.ndim >= len(shape) else g.sum().reshape(shape)


_setitem_kernel.op_name = "set_value"
_setitem_kernel.saves = ()


def setitem(x: Tensor, item, value):
    """``x[item] = value`` in place; differentiable w.r.t. both x and value."""
    check_inplace(x, "Tensor.__setitem__")
    xp = _xp(x._data)
    idx, _ = _index_arrays(item, xp, "Tensor.__setitem__")
    need = state.grad_enabled and (not x.stop_gradient or
                                   (isinstance(value, Tensor) and not value.stop_gradient))
    try:
        if not need:
            v = value._data if isinstance(value, Tensor) else value
            if isinstance(v, np.ndarray) or backend.is_gpu_array(v):
                v = xp.asarray(v).astype(x._data.dtype, copy=False)
            x._data[idx] = v
            x._ver.v += 1
            return
        from ..framework.op import apply_
        from ._helpers import cast_to

        v = value if isinstance(value, Tensor) else _wrap(xp.asarray(value, dtype=x._data.dtype))
        v = cast_to(v, x._data.dtype)
        apply_(_setitem_kernel, x, v, idx=idx)
    except (IndexError, ValueError) as e:
        vs = value.shape if isinstance(value, Tensor) else list(np.shape(value))
        raise type(e)(f"Tensor.__setitem__: cannot assign a value of shape {vs} to index "
                      f"{item!r} of a tensor of shape {x.shape}: {e}") from None


def cast(x, dtype):
    """Return x converted to ``dtype`` (differentiable between floating dtypes)."""
    from ..framework import dtype as _dt
    from ._helpers import cast_to

    x = tensor_arg(x, "cast")
    return cast_to(x, _dt.to_np(dtype))


API = ["cast", "reshape", "transpose", "unsqueeze", "squeeze", "flatten", "expand", "concat",
       "stack", "split"]
METHODS = list(API) + [("astype", cast)]
