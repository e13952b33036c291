"""The one op wrapper.

A *kernel* is a function on raw backend arrays (and Python scalars) that returns
``(out, backward)``: ``out`` is an array or a tuple of arrays, ``backward(*grads)`` takes one
gradient array per output and returns one gradient (or None) per input. ``backward`` may be None
for ops that are not differentiable. Optional kernel attributes:

- ``saves``: indices of the inputs whose *values* backward reads (default: all). Only those get
  an inplace-version check.
- ``hi``: the higher-order rule, ``hi(inputs, grads, **attrs)`` written with public Tensor ops,
  used when ``create_graph=True``.
- ``broadcast``: True for elementwise ops whose inputs broadcast; the wrapper then sums each
  input gradient back to that input's shape.
- ``op_name``: the name used in errors and the profiler (default: the function name).

:func:`apply` turns a kernel call into Tensor outputs and, when grad mode is on and an input needs
grad, one graph node. AMP casting and profiler events cost one attribute check each when off.
"""

from __future__ import annotations

import time

from .. import backend
from . import dtype as _dt
from . import state
from .engine import Node
from .tensor import Tensor, _wrap

__all__ = []

_perf = time.perf_counter


def _unbroadcast(g, shape):
    """Sum ``g`` down to ``shape`` (the inverse of NumPy broadcasting)."""
    if g.shape == shape:
        return g
    nd = g.ndim - len(shape)
    if nd:
        g = g.sum(axis=tuple(range(nd)))
    axes = tuple(i for i, s in enumerate(shape) if s == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g.reshape(shape)


def _broadcasting(bw, shapes):
    def unbroadcast_bw(*grads):
        return tuple(None if g is None or s is None else _unbroadcast(g, s)
                     for g, s in zip(bw(*grads), shapes))

    return unbroadcast_bw


def apply(fn, *inputs, **attrs):
    """Run kernel ``fn`` on the arrays of ``inputs`` and wrap the result (see module doc)."""
    arrays = []
    need = False
    for t in inputs:
        if isinstance(t, Tensor):
            arrays.append(t._data)
            if not t.stop_gradient:
                need = True
        else:
            arrays.append(t)
    if state.amp_hook is not None:
        arrays = state.amp_hook(fn, arrays)
    if state.prof_hook is not None:
        t0 = _perf()
        out, bw = fn(*arrays, **attrs)
        state.prof_hook(fn, t0, _perf(), arrays)
    else:
        out, bw = fn(*arrays, **attrs)
    if not need or bw is None or not state.grad_enabled:
        if type(out) is tuple:
            return tuple(_wrap(o) for o in out)
        return _wrap(out)
    return _record(fn, inputs, arrays, attrs, out, bw)


def _record(fn, inputs, arrays, attrs, out, bw):
    edges = []
    checks = []
    saves = getattr(fn, "saves", None)
    for i, t in enumerate(inputs):
        if isinstance(t, Tensor):
            if t.stop_gradient:
                edges.append(None)
            else:
                edges.append(t if t._node is None else (t._node, t._idx))
            if saves is None or i in saves:
                checks.append((i, t._ver, t._ver.v))
        else:
            edges.append(None)
    if getattr(fn, "broadcast", False):
        shapes = tuple(a.shape if e is not None else None for a, e in zip(arrays, edges))
        if any(s is not None and s != _shape(out) for s in shapes):
            bw = _broadcasting(bw, shapes)
    in_data = tuple(arrays) if getattr(fn, "hi", None) is not None else None
    multi = type(out) is tuple
    if state.saved_hooks:
        bw = _with_saved_hooks(bw)
    if multi:
        meta = tuple((o.shape, o.dtype, backend.get_array_module(o)) for o in out)
        node = Node(fn, bw, tuple(edges), tuple(checks), len(out), in_data, attrs, meta)
        res = []
        for i, o in enumerate(out):
            t = _wrap(o, not _dt.is_inexact_np(o.dtype))
            t._node, t._idx = node, i
            res.append(t)
        return tuple(res)
    node = Node(fn, bw, tuple(edges), tuple(checks), 1, in_data, attrs, None)
    t = _wrap(out, False)
    t._node = node
    return t


def _shape(out):
    return out[0].shape if type(out) is tuple else out.shape


def _with_saved_hooks(bw):
    """saved_tensors_hooks: pack the closure at forward time, unpack it at backward time."""
    pack, unpack = state.saved_hooks[-1]
    cells = bw.__closure__ or ()
    packed = []
    for c in cells:
        v = c.cell_contents
        if hasattr(v, "shape") and hasattr(v, "dtype"):
            packed.append((c, pack(_wrap(v))))
    for c, _ in packed:
        c.cell_contents = None

    def unpacking_bw(*grads):
        for c, p in packed:
            r = unpack(p)
            c.cell_contents = r._data if isinstance(r, Tensor) else r
        return bw(*grads)

    return unpacking_bw


def check_inplace(x: Tensor, op: str):
    """Inplace ops on a leaf that needs grad are refused, as in Paddle."""
    if x._node is None and not x.stop_gradient and state.grad_enabled:
        raise RuntimeError(
            f"{op}: Leaf Tensor ({x.name}) that doesn't stop gradient can't use inplace "
            "strategy. Wrap the update in paddle.no_grad(), or use the out-of-place op.")


def apply_(fn, x: Tensor, *others, **attrs):
    """Run kernel ``fn`` and write its result into ``x`` in place; returns ``x``.

    The result is cast to x's dtype and shape (the other inputs broadcast to x). When grad is
    recorded, x is rebound to a new graph node whose input is x's previous state.
    """
    name = getattr(fn, "op_name", fn.__name__.strip("_")) + "_"
    check_inplace(x, name)
    need = state.grad_enabled and (not x.stop_gradient or any(
        isinstance(o, Tensor) and not o.stop_gradient for o in others))
    if need:
        saves = getattr(fn, "saves", None)
        old = _wrap(x._data.copy() if saves is None or 0 in saves else x._data, x.stop_gradient)
        old._node, old._idx = x._node, x._idx
        res = apply(fn, old, *others, **attrs)
        if res.shape != x.shape:
            raise ValueError(f"{name}: the result has shape {res.shape}, which cannot be "
                             f"written into x of shape {x.shape}")
        x._data[...] = res._data
        x._ver.v += 1
        if res._node is not None:
            # checks against x's version must allow the bump just made
            x._node, x._idx = res._node, res._idx
            x.stop_gradient = False
        return x
    prev = state.grad_enabled
    state.grad_enabled = False
    try:
        res = apply(fn, x, *others, **attrs)
    finally:
        state.grad_enabled = prev
    out = res._data
    if out.shape != x._data.shape:
        if out.size == x._data.size and out.ndim != x._data.ndim:
            out = out.reshape(x._data.shape)
        else:
            raise ValueError(f"{name}: the result has shape {list(out.shape)}, which cannot be "
                             f"written into x of shape {x.shape}")
    x._data[...] = out
    x._ver.v += 1
    return x
