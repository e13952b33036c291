"""The one op wrapper, and the one way to declare a kernel.

A *kernel* is a function on raw backend arrays (and Python scalars) that returns
``(out, backward)``: ``out`` is an array or a tuple of arrays. ``backward`` is one of

- :data:`GRAD`: the op's declared gradient rule (below) computes the gradient;
- ``GRAD.save(*residuals)``: the same, and the rule also reads these *residuals*, values the
  forward pass computed anyway (an argmax, batch statistics, a mask, a float32 output) that the
  gradient would otherwise recompute (see "Residuals" below);
- a function ``backward(*grads)`` taking one gradient array per output and returning one gradient
  (or None) per input: the hand-written backward of a fused kernel, paired with an explicit
  higher-order rule ``hi``;
- None, for ops that are not differentiable.

Kernels are declared with the :func:`op` decorator, which sets their attributes:

- ``op_name``: the name used in errors and the profiler.
- ``saves``: indices of the inputs whose *values* the gradient reads (default: all). Only those
  get an inplace-version check.
- ``broadcast``: True for elementwise ops whose inputs broadcast; the wrapper then sums each
  input gradient back to that input's shape.
- ``grad``: the gradient rule, written ONCE over an operator namespace ``M``:
  ``grad(M, *inputs, out, *grads, **attrs)`` returns one gradient (or None) per input, given
  one output gradient per output (``out`` is the output, or the tuple of outputs). On the
  first-order path ``M`` is the array namespace (``paddle_hl.backend.arrays.ArrayOps``) and
  everything is a raw array. The forward pass binds nothing: the graph node keeps the input
  arrays and the output, and backward calls the rule with them, so a rule costs one call at
  backward, as a hand-written backward closure does, and no closure is built at forward. Under
  ``create_graph=True`` the same rule runs with ``M`` the Tensor namespace
  (``paddle_hl.tensor._tensor_ops``) and Tensors everywhere, so the gradient is itself
  differentiable; there ``out`` is recomputed from the inputs when the rule declares
  ``uses_out``, and is None otherwise. Names such as ``M.cos``, ``M.where`` or ``M.reshape``
  exist in both namespaces; ``M.tensor`` tells them apart. A rule calls another kernel with
  ``M.op(kernel, *args, **attrs)``: the kernel's output on arrays, a recorded (differentiable)
  op on Tensors. A fused kernel's adjoint (a convolution's data gradient, a resample's
  transpose) is such a kernel, with its own rule, so the derivative is written once and is
  differentiable to any order.
- ``hi``: the higher-order rule, ``hi(inputs, grads, **attrs)`` written with public Tensor ops,
  used when ``create_graph=True``; derived from ``grad`` when there is one, hand-written only
  for fused kernels that still pair it with a backward closure (batch/layer norm, whose
  threaded or compiled backward is nonlinear in x, so an adjoint kernel would need a
  second-order rule of its own). An op without one raises a clear error under create_graph.

Residuals. A kernel declared with ``@op(name, grad=rule, residuals=True)`` returns
``(out, GRAD.save(r0, r1, ...))`` and its rule takes the residuals as one tuple between the
output and the gradients: ``grad(M, *inputs, out, saved, *grads, **attrs)``. This is the
forward/backward split of a custom VJP: the forward hands the rule what it already computed,
the rule reads it instead of recomputing it. The graph node keeps ``saved`` beside the input
arrays (``Node.saved``), and saved-tensor hooks pack and unpack the arrays in it as they do the
inputs (so ``saved`` is a flat tuple of arrays and plain Python values). Under
``create_graph=True`` the rule receives the SAME residuals as constants: each array is a
no-grad Tensor, Python values stay as they are. That is exact when a residual depends on the
inputs only through a choice whose derivative is zero (an argmax, a sort order, an indicator
mask, an integer count); a residual that is a differentiable function of the inputs (a batch
mean, a normalised output) must be recomputed from the Tensor inputs when ``M.tensor`` is
True, so that its derivative reaches the gradient, e.g.::

    def _rule(M, x, out, saved, g):
        mask, y = saved     # mask: a 0/1 choice, a constant under create_graph
        if M.tensor:        # y = exp(x) is differentiable: recomputed from the Tensor x
            y = M.exp(x)
        return (g * mask * y,)

Only the residual is recomputed there; the derivative itself is still one text. Residuals the
rule does not read cost nothing but memory until backward (the node frees them with the
inputs). A residual may also be a plain Python value the forward worked out (a divisor, a
kept-dims shape, a grouping of indices), which spares the rule recomputing it.

:func:`apply` turns a kernel call into Tensor outputs and, when grad mode is on and an input needs
grad, one graph node. AMP casting and profiler events cost one attribute check each when off.
:func:`apply_` is the inplace variant.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..backend.arrays import NUMPY_OPS, ArrayOps
from . import dtype as _dt
from . import state
from .engine import GRAD, Node, Packed, Saved
from .tensor import Tensor, _wrap, attach_autograd, writable

_tls = state.tls  # per-thread switches (grad mode)
_grad_off = state.grad_off  # empty while no thread has grad off: no thread-local read

__all__ = []

_ALL = object()

# The Tensor operator namespace of gradient rules, installed by paddle_hl.tensor (which sits above
# this module) when it is imported.
_tensor_ops = None


def set_tensor_ops(ns):
    """Install the Tensor namespace that gradient rules receive as ``M`` under create_graph."""
    global _tensor_ops
    _tensor_ops = ns


def tensor_ops():
    """The installed Tensor op namespace (``tensor_ops().sum`` is ``paddle.sum``).

    The op categories of ``paddle_hl.tensor`` import each other in one order only (manipulation,
    stat, math, random, linalg; creation above manipulation). The few calls that run the other
    way, mostly inside higher-order gradient rules, reach the op through this namespace, which
    is complete once ``paddle_hl.tensor`` has loaded every category.
    """
    return _tensor_ops


def op(name, *, saves=_ALL, broadcast=False, grad=None, uses_out=False, hi=None,
       const_grad=None, residuals=False):
    """Declare a kernel (see the module doc): ``@op("sin", grad=rule)``.

    Args:
        name (str): the op's name in errors and the profiler.
        saves (tuple[int], optional): the inputs whose values the gradient reads; all by default.
        broadcast (bool, optional): the inputs broadcast; input gradients are summed back.
        grad (callable, optional): the gradient rule ``grad(M, *inputs, out, *grads,
            **attrs)`` returning one gradient per input, run on arrays for first-order
            gradients and on Tensors under create_graph.
        uses_out (bool, optional): ``grad`` reads ``out`` (recomputed under create_graph).
        hi (callable, optional): a hand-written higher-order rule, for fused kernels whose
            backward is a hand-written array function.
        const_grad (callable, optional): for ops whose gradient reads neither the inputs nor
            the output (add, subtract): the backward ``bw(*grads)`` itself, written with
            operators only, so one function serves arrays and Tensors without a rule call.
        residuals (bool, optional): the kernel returns ``(out, GRAD.save(...))`` and ``grad``
            takes the residuals as one tuple after ``out``: ``grad(M, *inputs, out, saved,
            *grads, **attrs)`` (see the module doc).

    Returns:
        The decorator, which returns the kernel itself (no wrapper: no call overhead).
    """
    if grad is None and const_grad is not None:
        grad = _const_rule(const_grad)
    if grad is not None and hi is not None:
        raise ValueError(f"op {name!r}: give the gradient rule once, as grad= (the kernel "
                         "returning GRAD) or as a fused backward with hi=, not both")
    if residuals and (grad is None or const_grad is not None):
        raise ValueError(f"op {name!r}: residuals=True needs the gradient rule that reads them, "
                         "grad=rule(M, *inputs, out, saved, *grads, **attrs)")

    def declare(fn):
        fn.op_name = name
        if saves is not _ALL:
            fn.saves = tuple(saves)
        if broadcast:
            fn.broadcast = True
        if grad is not None:
            fn.grad = grad
            fn.grad_uses_out = uses_out
            fn.residuals = residuals
            fn.hi = tensor_rule(fn, grad, uses_out, residuals)
        elif hi is not None:
            fn.hi = hi
        return fn

    return declare


def _const_rule(bw):
    def grad(M, *args, **attrs):
        raise AssertionError("a constant backward is called directly")

    grad.const = bw
    return grad


def tensor_rule(fn, grad, uses_out=False, residuals=False):
    """The create_graph form of gradient rule ``grad``: ``hi(inputs, grads, **attrs)``, or
    ``hi(inputs, grads, saved, **attrs)`` for a kernel with residuals (``saved`` the node's
    residuals, arrays as constant Tensors)."""
    const = getattr(grad, "const", None)
    if residuals:
        def hi(inputs, grads, saved, **attrs):
            out = apply(fn, *inputs, **attrs) if uses_out else None
            return grad(_tensor_ops, *inputs, out, saved, *grads, **attrs)
    else:
        def hi(inputs, grads, **attrs):
            if const is not None:
                return const(*grads)
            out = apply(fn, *inputs, **attrs) if uses_out else None
            return grad(_tensor_ops, *inputs, out, *grads, **attrs)

    hi.rule = grad
    hi.residuals = residuals
    return hi


class _Held:
    """A value a bound rule passes along without saving it (saved-tensor hooks pack arrays held
    in a closure directly or in a list/tuple, not inside this)."""

    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v


def array_rule(fn, arrays, out, attrs=None, saved=None):
    """The first-order backward ``bw(*grads)`` of a kernel that returned :data:`GRAD` (or
    ``GRAD.save(...)``): its ``grad`` rule bound to the array namespace, the input arrays, the
    output and the residuals ``saved``.

    The hot path does not build it (backward calls the rule directly with what the node
    keeps); it serves the broadcasting wrapper, multi-output nodes and saved-tensor hooks. Only
    the inputs in ``saves`` (and the output, for a rule that reads it) are held where the hooks
    look for saved values; the others ride along unsaved.
    """
    grad = fn.grad
    const = getattr(grad, "const", None)
    if const is not None:
        return const
    o = out[0] if type(out) is tuple else out
    ns = NUMPY_OPS if type(o) is np.ndarray else ArrayOps.of(o)
    attrs = attrs or {}
    saves = _meta(fn)[0]
    uses_out = getattr(fn, "grad_uses_out", False)
    if saved is not None:
        # the residuals are held in a tuple cell of their own, which saved-tensor hooks pack
        res = tuple(saved)
        if saves is None and uses_out:
            def saved_bw(*grads):
                return grad(ns, *arrays, out, res, *grads, **attrs)

            return saved_bw
        if saves is False and not uses_out:
            # no input value is saved (normal log_prob): inputs and output ride along unsaved
            held = _Held((arrays, out))

            def residual_bw(*grads):
                a, o = held.v
                return grad(ns, *a, o, res, *grads, **attrs)

            return residual_bw
    if saves is None and uses_out:
        def bw(*grads):
            return grad(ns, *arrays, out, *grads, **attrs)

        return bw
    kept = [a if saves is None or (saves and i in saves) else None
            for i, a in enumerate(arrays)]
    rest = _Held(([None if k is not None else a for k, a in zip(kept, arrays)],
                  None if uses_out else out))
    saved_out = out if uses_out else None

    if saved is not None:
        def bound_saved_bw(*grads):
            others, o = rest.v
            args = [a if k is None else k for k, a in zip(kept, others)]
            return grad(ns, *args, o if saved_out is None else saved_out, res, *grads, **attrs)

        return bound_saved_bw

    def bound_bw(*grads):
        others, o = rest.v
        args = [a if k is None else k for k, a in zip(kept, others)]
        return grad(ns, *args, o if saved_out is None else saved_out, *grads, **attrs)

    return bound_bw


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


def _rule(fn, bw):
    """``(saves, has_hi, broadcast, bw, saved)`` of a kernel call that is recorded: its cached
    meta (see :func:`_meta`), the backward it returned made concrete (a constant rule for
    ``GRAD`` where the kernel has one) and its residuals (a ``Saved`` result)."""
    m = getattr(fn, "_hl_meta", None)
    saves, has_hi, bcast, _, const = m if m is not None else _meta(fn)
    if bw is GRAD:
        return saves, has_hi, bcast, (bw if const is None else const), None
    if type(bw) is Saved:
        return saves, has_hi, bcast, GRAD, _residuals(fn, bw)
    return saves, has_hi, bcast, bw, None


def apply(fn, *inputs, **attrs):
    """Run kernel ``fn`` on the arrays of ``inputs`` and wrap the result (see module doc).

    Args:
        fn: the kernel.
        *inputs: Tensors (unwrapped to their arrays) and constants (passed as they are).
        **attrs: keyword attributes passed to the kernel (and to its ``hi`` rule).

    Returns:
        Tensor, or a tuple of Tensors for a kernel with several outputs.
    """
    if state.amp_hook is not None:
        # AMP casting, operator stats and the tensor checker (paddle_hl.amp); the hook returns
        # the inputs to use, or an object whose ``value`` is the result when it ran the op
        inputs = state.amp_hook(fn, inputs, attrs)
        if type(inputs) is not tuple:
            return inputs.value
    if not _grad_off or _tls.grad_enabled:
        # one pass gathers the arrays and, in case the op is recorded, the graph edges
        arrays = []
        edges = []
        need = False
        for t in inputs:
            if isinstance(t, Tensor):
                arrays.append(t._data)
                if t.stop_gradient:
                    edges.append(None)
                else:
                    need = True
                    edges.append(t if t._node is None else (t._node, t._idx))
            else:
                arrays.append(t)
                edges.append(None)
    else:
        arrays = [t._data if isinstance(t, Tensor) else t for t in inputs]
        need = False
    if state.prof_hook is not None:
        out, bw = state.prof_hook(fn, arrays, attrs)
    elif attrs:
        out, bw = fn(*arrays, **attrs)
    else:
        out, bw = fn(*arrays)
    if not need or bw is None:
        if type(out) is tuple:
            return tuple([_wrap(o) for o in out])
        return _wrap(out)

    # -- record one graph node (inlined: this is the hot path of every differentiable op)
    saves, has_hi, bcast, bw, saved = _rule(fn, bw)
    checks = ()
    if saves is None:
        checks = []
        for i, t in enumerate(inputs):
            if isinstance(t, Tensor):
                v = t._ver
                checks.append((i, v, v.v))
    elif saves:
        checks = []
        for i in saves:
            t = inputs[i] if i < len(inputs) else None
            if isinstance(t, Tensor):
                v = t._ver
                checks.append((i, v, v.v))
    in_data = arrays if has_hi else None
    if state.saved_hooks:
        if bw is GRAD:
            bw = array_rule(fn, arrays, out, attrs, saved)
        bw, in_data, saved = _pack_saved(fn, bw, inputs, arrays, in_data, saved)
    if type(out) is tuple:
        if bw is GRAD:
            bw = array_rule(fn, arrays, out, attrs, saved)
        return _record_multi(fn, bw, edges, checks, in_data, attrs, out, arrays, bcast, saved)
    if bcast:
        oshape = out.shape
        for a, e in zip(arrays, edges):
            if e is not None and a.shape != oshape:
                if bw is GRAD:
                    bw = array_rule(fn, arrays, out, attrs, saved)
                bw = _broadcasting(bw, tuple(None if e is None else a.shape
                                             for a, e in zip(arrays, edges)))
                break
    t = _wrap(out, False)
    node = t._node = Node(fn, bw, edges, checks, 1, in_data, attrs, None, saved)
    if bw is GRAD:
        # backward calls the rule with the kept input arrays and this output (engine)
        node.out = out
    return t


def apply_scalar(fn, x, s):
    """:func:`apply` for a float Tensor ``x`` and a Python number ``s``, for a kernel with one
    output (``x * 2.0``, ``x + 1.0``): the same result and graph node, without the generic
    loops over inputs and outputs, which are most of a tiny op's time (a chain of such ops on
    an 8x8 tensor, forward and backward: 1.95 -> 1.6 us per op). Anything else that
    :func:`apply` watches for (AMP, the profiler, saved-tensor hooks) takes :func:`apply`."""
    if state.amp_hook is not None or state.prof_hook is not None or state.saved_hooks:
        return apply(fn, x, s)
    out, bw = fn(x._data, s)
    if x.stop_gradient or bw is None or (_grad_off and not _tls.grad_enabled):
        return _wrap(out)
    saves, has_hi, _, bw, saved = _rule(fn, bw)
    checks = ()
    if saves is None or (saves and 0 in saves):
        v = x._ver
        checks = [(0, v, v.v)]
    t = _wrap(out, False)
    edge = x if x._node is None else (x._node, x._idx)
    node = t._node = Node(fn, bw, [edge, None], checks, 1, [x._data, s] if has_hi else None,
                          {}, None, saved)
    if bw is GRAD:
        node.out = out
    return t


def _meta(fn):
    """``(saves, has_hi, broadcast, grad, const_grad)`` of a kernel, read once and cached on
    the function.

    ``saves`` is None (all inputs), False (no input) or a frozenset of indices. Kernel attributes
    are set next to the kernel's definition, before its first call, so the cache never goes
    stale; kernels that cannot take attributes (bound methods) are simply read every time.
    """
    saves = getattr(fn, "saves", None)
    if saves is not None:
        saves = frozenset(saves) or False
    grad = getattr(fn, "grad", None)
    m = (saves, getattr(fn, "hi", None) is not None, bool(getattr(fn, "broadcast", False)),
         grad, getattr(grad, "const", None))
    try:
        fn._hl_meta = m
    except AttributeError:
        pass
    return m


def _residuals(fn, saved):
    """The residuals a kernel returned with ``GRAD.save``, checked against its declaration."""
    if not getattr(fn, "residuals", False):
        name = getattr(fn, "op_name", None) or fn.__name__
        raise TypeError(f"op {name!r}: the kernel returned GRAD.save(...) but was not declared "
                        "with residuals=True, so its gradient rule cannot read them")
    return saved


def _record_multi(fn, bw, edges, checks, in_data, attrs, out, arrays, bcast, saved=None):
    if bcast:
        oshape = out[0].shape
        if any(e is not None and a.shape != oshape for a, e in zip(arrays, edges)):
            bw = _broadcasting(bw, tuple(None if e is None else a.shape
                                         for a, e in zip(arrays, edges)))
    meta = tuple((o.shape, o.dtype, backend.get_array_module(o)) for o in out)
    node = Node(fn, bw, edges, checks, len(out), in_data, attrs, meta, saved)
    res = []
    for i, o in enumerate(out):
        t = _wrap(o, not _dt.is_inexact_np(o.dtype))
        t._node = node
        t._idx = i
        res.append(t)
    return tuple(res)


def _is_array(v):
    return type(v) is np.ndarray or backend.is_gpu_array(v)


def _pack_saved(fn, bw, inputs, arrays, in_data, saved=None):
    """saved_tensors_hooks: pack what backward keeps at forward time, unpack it at backward.

    A kernel's backward closure holds the arrays it saved in its closure cells (directly, or in
    a tuple/list). Each such array is passed through ``pack`` (as the input Tensor it came from,
    when it is one) and the cell is emptied, so the hook fully owns the saved value; at backward
    the cells are refilled from ``unpack`` for the duration of the call and emptied again. The
    input values and residuals kept for higher-order rules are packed the same way (one pack
    per array: the closure's copy and the node's share it). Returns ``(bw, in_data, saved)``.
    """
    pack, unpack = state.saved_hooks[-1]
    by_id = {id(t._data): t for t in inputs if isinstance(t, Tensor)}
    memo = {}

    def packed(a):
        p = memo.get(id(a))
        if p is None:
            src = by_id.get(id(a))
            p = memo[id(a)] = Packed(pack(src if src is not None else _wrap(a)), unpack)
        return p

    cells = []
    for c in bw.__closure__ or ():
        try:
            v = c.cell_contents
        except ValueError:  # an empty cell
            continue
        if _is_array(v):
            cells.append((c, packed(v), None))
        elif type(v) in (tuple, list) and any(_is_array(x) for x in v):
            cells.append((c, [packed(x) if _is_array(x) else x for x in v], type(v)))
    in_data = _pack_in_data(fn, in_data, packed)
    if saved is not None:
        saved = Saved(packed(v) if _is_array(v) else v for v in saved)
    if not cells:
        return bw, in_data, saved
    for c, _, _ in cells:
        c.cell_contents = None

    def unpacking_bw(*grads):
        seen = {}

        def get(p):
            r = seen.get(id(p))
            if r is None:
                r = seen[id(p)] = p.get()
            return r

        for c, p, kind in cells:
            c.cell_contents = get(p) if kind is None else kind(
                get(x) if type(x) is Packed else x for x in p)
        try:
            return bw(*grads)
        finally:
            for c, _, _ in cells:
                c.cell_contents = None

    return unpacking_bw, in_data, saved


def _pack_in_data(fn, in_data, packed):
    if in_data is None:
        return None
    # inputs whose values backward reads are packed; the others only lend their shape
    saves = _meta(fn)[0]
    return tuple(packed(d) if _is_array(d) and (saves is None or (saves and i in saves))
                 else d for i, d in enumerate(in_data))


def check_inplace(x: Tensor, op: str):
    """Inplace ops on a leaf that needs grad are refused while grad is recorded, as in Paddle."""
    if x._node is None and not x.stop_gradient and _tls.grad_enabled:
        raise ValueError(
            f"{op}: Leaf Tensor ({x.name}) that doesn't stop gradient can't use inplace "
            "strategy. Wrap the update in paddle.no_grad(), or use the out-of-place op.")


def inplace(x: Tensor, name: str, compute, others=(), *, write=True, keep_old=True,
            same_dtype=False):
    """The one inplace rebinding: x takes the result of ``compute(src)``, where ``src`` stands
    for x's previous state; returns x.

    With ``write`` (ops that keep x's shape and storage) the result is written into x's buffer
    (cast to x's dtype; a result of x's size is reshaped to x's shape) and, when grad is
    recorded, ``src`` is a snapshot of x that carries x's graph position (a copy of the values
    when ``keep_old``: backward may read them and x's buffer is overwritten). Without ``write``
    (shape- and dtype-changing ops) x takes the result's array itself and ``src`` is x. Either
    way x's version counter (shared with its views) is bumped and, when the result is recorded,
    x moves to the result's graph position; the tensors x is a view of keep their own graph, as
    in Paddle 2.6. An inplace op on a leaf that needs grad is refused while grad is recorded.

    Args:
        x (Tensor): the tensor updated in place.
        name (str): the op's name (``"exp_"``) for errors.
        compute (callable): ``compute(src) -> Tensor``.
        others (tuple): the op's other inputs, to tell whether grad is recorded.
        write (bool): write into x's buffer (True) or rebind x to the result's array.
        keep_old (bool): the snapshot copies x's values (backward reads them).
        same_dtype (bool): refuse a result whose dtype differs from x's (instead of casting).
    """
    check_inplace(x, name)
    if not write:
        res = compute(x)
        x._data = res._data
        if res._node is not None:
            x._node, x._idx = res._node, res._idx
            x.stop_gradient = False
        x._ver.v += 1
        return x
    need = _tls.grad_enabled and (not x.stop_gradient or any(
        isinstance(o, Tensor) and not o.stop_gradient for o in others))
    if need:
        old = _wrap(x._data.copy() if keep_old else x._data, x.stop_gradient)
        old._node, old._idx = x._node, x._idx
        res = compute(old)
    else:
        prev = state.set_grad(False)
        try:
            res = compute(x)
        finally:
            state.set_grad(prev)
    out = res._data
    if out.shape != x._data.shape:
        if out.size == x._data.size:
            if res._node is not None:  # x's new graph position is the reshaped result
                res = res.reshape(list(x._data.shape))
            out = res._data.reshape(x._data.shape)
        else:
            raise ValueError(f"{name}: the result has shape {list(out.shape)}, which cannot be "
                             f"written into x of shape {list(x._data.shape)}")
    if same_dtype and out.dtype != x._data.dtype:
        raise TypeError(f"{name}: the result has dtype {res.dtype}, which differs from x's dtype "
                        f"{x.dtype}")
    writable(x)[...] = out
    x._ver.v += 1
    if need and res._node is not None:
        x._node, x._idx = res._node, res._idx
        x.stop_gradient = False
    return x


def apply_(fn, x: Tensor, *others, **attrs):
    """Run kernel ``fn`` and write its result into ``x`` in place (see :func:`inplace`);
    returns ``x``. The other inputs broadcast to x; the result is cast to x's dtype.

    Args:
        fn: the kernel.
        x (Tensor): the tensor written in place.
        *others: the kernel's other inputs.
        **attrs: keyword attributes for the kernel.

    Returns:
        Tensor: x.
    """
    saves = getattr(fn, "saves", None)
    return inplace(x, getattr(fn, "op_name", fn.__name__.strip("_")) + "_",
                   lambda src: apply(fn, src, *others, **attrs), others,
                   keep_old=saves is None or 0 in saves)


attach_autograd(apply=apply)
