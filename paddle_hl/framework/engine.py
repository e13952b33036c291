"""Reverse-mode autograd: graph nodes and the iterative backward pass.

A Node is created by the op wrapper for every op that records the graph. It keeps the op's
backward closure (raw arrays in, raw arrays out) — or :data:`GRAD` with the input arrays and
the output (and the kernel's residuals, see :class:`Saved`), when the op's declared gradient
rule computes the gradient — one *edge* per input
(``(node, output_index)`` for an input made by another op, the leaf Tensor itself for a leaf
that needs grad, or None) and version stamps of the inputs whose values backward reads.

The pass has two phases, both iterative (no recursion, so graphs of any depth work):

1. :func:`_collect` walks the graph once from the roots and counts, for every reachable node, how
   many edges feed it a gradient.
2. Nodes run when their count drops to zero (Kahn's order), so each node's backward sees the sum
   of all gradients for its outputs exactly once.

With ``create_graph=True`` the engine runs each op's *higher-order rule* instead: the same
gradient written with public Tensor ops, so that the gradient is itself differentiable.
"""

from __future__ import annotations

import sys
import weakref

import numpy as np

from .. import backend
from ..backend.arrays import NUMPY_OPS, ArrayOps
from . import state
from .tensor import Tensor, _HookHandle, _wrap, attach_autograd, is_lazy_zero

__all__ = []


class GraphFreedError(RuntimeError, SystemError):
    """Backward ran a second time through a graph whose saved values were freed.

    Paddle raises ``SystemError`` here; subclassing ``RuntimeError`` as well lets code written
    for either convention catch it.
    """


class AutogradArgumentError(ValueError, AssertionError):
    """Bad arguments to backward (Paddle raises ``AssertionError``; this is also a ValueError)."""


class NoHigherOrderRuleError(RuntimeError):
    """``create_graph=True`` met an op that has no higher-order gradient rule."""


class Saved(tuple):
    """The residuals a kernel hands its gradient rule: ``return out, GRAD.save(a, b)``.

    A tuple (arrays and plain Python values) that the graph node keeps as ``Node.saved`` and
    passes to the rule ``grad(M, *inputs, out, saved, *grads, **attrs)`` of a kernel declared
    with ``@op(..., residuals=True)`` (see ``paddle_hl.framework.op``).
    """

    __slots__ = ()


class _GradRule:
    """The type of :data:`GRAD`."""

    __slots__ = ()

    def __repr__(self):
        return "GRAD"

    @staticmethod
    def save(*residuals):
        """``GRAD`` with residuals: the kernel's gradient rule also receives ``residuals``."""
        return Saved(residuals)


GRAD = _GradRule()
"""A kernel's backward (and a node's ``bw``) that says: the op's declared gradient rule
``fn.grad(M, *inputs, out, *grads, **attrs)`` computes the gradient. A node with it keeps the
input arrays in ``in_data``, the output in ``out`` and the residuals of ``GRAD.save(...)``, if
any, in ``saved``."""


def _bound(node):
    """``bw(*grads)`` of a :data:`GRAD` node (for the profiler, which times a callable)."""
    o = node.out
    ns = NUMPY_OPS if type(o) is np.ndarray else ArrayOps.of(o)
    grad, data, attrs, saved = node.fn.grad, node.in_data, node.attrs, node.saved

    if saved is not None:
        def saved_bw(*grads):
            return grad(ns, *data, o, saved, *grads, **attrs)

        return saved_bw

    def bw(*grads):
        return grad(ns, *data, o, *grads, **attrs)

    return bw


class Node:
    """One recorded op in the autograd graph (Paddle's ``GradNode``)."""

    __slots__ = ("fn", "bw", "edges", "checks", "n_out", "hooks", "retained", "in_data",
                 "attrs", "out_meta", "out", "saved", "__weakref__")

    def __init__(self, fn, bw, edges, checks, n_out, in_data, attrs, out_meta, saved=None):
        self.fn = fn
        self.bw = bw
        self.edges = edges
        self.checks = checks
        self.n_out = n_out
        self.hooks = None
        self.retained = None
        self.in_data = in_data
        self.attrs = attrs
        self.out_meta = out_meta
        self.saved = saved  # the kernel's residuals (GRAD.save), or None

    @property
    def name(self):
        return getattr(self.fn, "op_name", None) or self.fn.__name__.strip("_")

    def add_hook(self, idx, hook):
        if self.hooks is None:
            self.hooks = {}
        return _HookHandle(self.hooks.setdefault(idx, {}), hook)

    def retain(self, idx, tensor):
        if self.retained is None:
            self.retained = {}
        self.retained[idx] = weakref.ref(tensor)

    def __repr__(self):
        return f"<GradNode {self.name}>"


def _version_error(node, i, got, expected):
    return RuntimeError(
        f"paddle_hl: input {i} of op '{node.name}', which its backward needs, was modified by an "
        f"inplace operation after it was used: its version is {got} but the expected version is "
        f"{expected}. Use an out-of-place op, or clone() the tensor before changing it.")


def _freed_error(node):
    return GraphFreedError(
        f"backward: trying to run backward through op '{node.name}' a second time, but its saved "
        "values were freed by the first backward. Pass retain_graph=True to the first "
        "backward/grad call if you need to run backward twice through the same graph.")


def _check_versions(node):
    for i, vbox, v in node.checks:
        if vbox.v != v:
            raise _version_error(node, i, vbox.v, v)


def _zeros_for(meta):
    shape, dt, xp = meta
    return xp.zeros(shape, dtype=dt)


def _collect(roots, blocked):
    """Count, for each node reachable from ``roots``, the edges that feed it a gradient.

    Every node is pushed exactly once (when first discovered), so no separate visited set is
    needed. Edges in ``blocked`` (paddle.grad's no_grad_vars) are not followed.
    """
    deps = dict.fromkeys(roots, 0)
    stack = list(deps)
    pop, push = stack.pop, stack.append
    while stack:
        for e in pop().edges:
            if type(e) is tuple:
                if blocked and e in blocked:
                    continue
                child = e[0]
                if child in deps:
                    deps[child] += 1
                else:
                    deps[child] = 1
                    push(child)
    return deps


def _useful(roots, deps, targets, blocked):
    """Nodes from which a paddle.grad target can be reached (the rest need not run)."""
    pending = dict(deps)
    order = []
    ready = [n for n in roots if pending[n] == 0]
    while ready:
        node = ready.pop()
        order.append(node)
        for e in node.edges:
            if type(e) is tuple and not (blocked and e in blocked):
                child = e[0]
                pending[child] -= 1
                if pending[child] == 0:
                    ready.append(child)
    useful = set()
    for node in reversed(order):  # children before parents; a target's node need not run
        for e in node.edges:
            if e is None or (blocked and (e in blocked if type(e) is tuple else id(e) in blocked)):
                continue
            if type(e) is tuple:
                if e[0] in useful or e in targets:
                    useful.add(node)
                    break
            elif id(e) in targets:
                useful.add(node)
                break
    return useful


def _as_grad_array(g, t, create_graph, where):
    """The initial gradient for root ``t`` as an array (or a Tensor under create_graph)."""
    xp = backend.get_array_module(t._data)
    if g is None:
        arr = xp.ones(t._data.shape, dtype=t._data.dtype)
    elif isinstance(g, Tensor):
        arr = g._data
    else:
        arr = xp.asarray(g, dtype=t._data.dtype)
    if tuple(arr.shape) != t._data.shape:
        raise AutogradArgumentError(
            f"{where}: the shape of grad_tensor {list(arr.shape)} does not match the shape of "
            f"the tensor it belongs to {list(t._data.shape)}")
    if create_graph:
        return g if isinstance(g, Tensor) else _wrap(arr)
    return arr


# Tensor-level ops that create_graph=True needs (the gradient sum and the un-broadcast of a
# gradient, built from differentiable ops). The op library sits above the engine: it hands
# them over when it attaches its operators to Tensor (see attach_tensor_ops).
_tensor_add = None
_unbroadcast_tensor = None


def attach_tensor_ops(add, unbroadcast_tensor):
    """Called once by ``paddle_hl.tensor``: the differentiable ``add`` and
    ``unbroadcast_tensor(g, shape)`` used when the backward pass builds a graph."""
    global _tensor_add, _unbroadcast_tensor
    _tensor_add = add
    _unbroadcast_tensor = unbroadcast_tensor


def _add(a, b, create_graph):
    if create_graph:
        return _tensor_add(a, b)
    return a + b


def run_backward(tensors, grad_tensors, retain_graph=False, create_graph=False, inputs=None,
                 allow_unused=False, accumulate=True, blocked=None, where="backward"):
    """Backward from several roots at once.

    Args:
        tensors: the root Tensors.
        grad_tensors: one initial gradient per root (None means ones).
        retain_graph: keep the saved values so that backward can run again.
        create_graph: build a differentiable graph of the gradient computation.
        inputs: for paddle.grad, the tensors whose gradients are returned. Only the part of the
            graph that leads to them is run, and ``.grad`` fields are not touched.
        allow_unused: return None instead of raising for an input the outputs do not reach.
        accumulate: accumulate into leaf ``.grad`` (plain backward).
        blocked: set of edge keys not to follow: ``(node, idx)`` or ``id(leaf)``.
        where: the API name used in error messages.

    Returns:
        None for plain backward, else the list of gradients of ``inputs``.
    """
    prof = state.prof_bw
    if prof is not None:  # the profiler times the whole pass as one "Backward" span
        return prof.span(_run_backward, tensors, grad_tensors, retain_graph, create_graph,
                         inputs, allow_unused, accumulate, blocked, where)
    return _run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs,
                         allow_unused, accumulate, blocked, where)


def _run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs, allow_unused,
                  accumulate, blocked, where):
    roots = []
    seen_roots = set()
    for t, g in zip(tensors, grad_tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{where}: expected Tensors to run backward from, got "
                            f"{type(t).__name__}")
        if id(t) in seen_roots and where == "autograd.backward":
            raise AutogradArgumentError(
                f"{where}: the argument 'tensors' contains the same Tensor twice")
        seen_roots.add(id(t))
        if t.stop_gradient:
            continue  # nothing to do, as in Paddle
        roots.append((t, _as_grad_array(g, t, create_graph, where)))

    grad_mode = inputs is not None
    targets = {}
    if grad_mode:
        for i, x in enumerate(inputs):
            if not isinstance(x, Tensor):
                raise TypeError(f"{where}: inputs must be Tensors, got {type(x).__name__}")
            targets[id(x) if x._node is None else (x._node, x._idx)] = i
    results = [None] * (len(inputs) if grad_mode else 0)

    leaf_grads = {}
    buffers = {}
    root_nodes = []
    for t, g in roots:
        node = t._node
        if node is None:
            if grad_mode and id(t) in targets:
                _set_result(results, targets[id(t)], g, create_graph)
            elif not grad_mode:
                _leaf_add(leaf_grads, t, g, create_graph)
            continue
        if node.n_out == 1:
            prev = buffers.get(node)
            buffers[node] = g if prev is None else _add(prev, g, create_graph)
        else:
            buf = buffers.get(node)
            if buf is None:
                buf = buffers[node] = [None] * node.n_out
            buf[t._idx] = g if buf[t._idx] is None else _add(buf[t._idx], g, create_graph)
        if node not in root_nodes:
            root_nodes.append(node)

    blocked = blocked or None
    deps = _collect(root_nodes, blocked)
    useful = _useful(root_nodes, deps, targets, blocked) if grad_mode else None
    if useful is not None:
        # nodes whose bw runs, plus the nodes of non-leaf targets (they only collect gradients)
        wanted = useful | {k[0] for k in targets if type(k) is tuple}
    else:
        wanted = None
    limited = useful is not None or blocked is not None
    ready = [n for n in root_nodes if deps[n] == 0]
    sync = state.tls.grad_sync
    if sync is not None and (grad_mode or create_graph or limited or not accumulate):
        sync = None  # only a plain backward into .grad is synchronised
    prev_mode = state.set_grad(create_graph)
    try:
        if grad_mode or create_graph or limited:
            _run_general(ready, buffers, deps, leaf_grads, retain_graph, create_graph, targets,
                         results, useful, wanted, blocked)
        elif sync is None:
            _run_plain(ready, buffers, deps, leaf_grads, retain_graph)
        else:
            state.tls.grad_sync = None
            _run_plain(ready, buffers, deps, leaf_grads, retain_graph,
                       _LeafWatch(deps, leaf_grads, sync))
    finally:
        state.set_grad(prev_mode)

    if not grad_mode:
        if accumulate:
            _finish_leaves(leaf_grads, create_graph)
        if sync is not None:
            sync.done()
        return None
    out = []
    for i, r in enumerate(results):
        if r is None:
            if not allow_unused:
                raise ValueError(
                    f"{where}: the {i}-th input does not appear in the backward graph of the "
                    "outputs, so it has no gradient. Check the inputs, or pass "
                    "allow_unused=True to get None for it.")
            out.append(None)
        elif isinstance(r, Tensor):
            out.append(r)
        else:
            out.append(_wrap(r))
    return out


class _LeafWatch:
    """Finalises each leaf's gradient as soon as the last edge into it has delivered, and
    tells ``sync`` (see ``state.tls.grad_sync``)."""

    __slots__ = ("pending", "leaf_grads", "sync", "absorb")

    def __init__(self, deps, leaf_grads, sync):
        pending = {}
        for node in deps:
            for e in node.edges:
                if e is not None and type(e) is not tuple:
                    pending[id(e)] = pending.get(id(e), 0) + 1
        self.pending = pending
        self.leaf_grads = leaf_grads
        self.sync = sync
        # a sync may store a leaf's final gradient itself (DataParallel: into its bucket)
        self.absorb = getattr(sync, "absorb", None)

    def delivered(self, leaf):
        k = id(leaf)
        left = self.pending[k] - 1
        self.pending[k] = left
        if left == 0:
            entry = self.leaf_grads.pop(k, None)
            if entry is not None:
                if self.absorb is None or not self.absorb(entry):
                    _finish_leaves({k: entry}, False)
                self.sync.ready(leaf)


def _run_plain(ready, buffers, deps, leaf_grads, retain_graph, watch=None):
    """The main loop of a plain ``backward()``: the hot path, kept free of rarely used cases.

    A node whose single consumer has just delivered its gradient runs next directly, with that
    gradient in hand, so long chains skip the ready stack and the gradient buffers. ``watch``
    (a _LeafWatch) hears of every gradient delivered to a leaf.
    """
    pop, push = ready.pop, ready.append
    prof = state.prof_bw  # read once: a local None check per node when the profiler is off
    while ready:
        node = pop()
        g = buffers.pop(node, None)
        while node is not None:
            if g is None:
                in_grads = _nones(node)
            else:
                bw = node.bw
                if bw is None:
                    raise _freed_error(node)
                if node.checks:
                    _check_versions(node)
                if node.hooks is not None or node.retained is not None:
                    g = _node_outputs(node, g, None, None, False)
                if node.n_out == 1:
                    if bw is GRAD:
                        if prof is None:
                            # the op's gradient rule on the kept arrays (see framework.op);
                            # one- and two-input rules skip the argument unpacking
                            o, d = node.out, node.in_data
                            ns = NUMPY_OPS if type(o) is np.ndarray else ArrayOps.of(o)
                            if node.saved is not None:  # a kernel with residuals
                                in_grads = node.fn.grad(ns, *d, o, node.saved, g, **node.attrs)
                            elif node.attrs:
                                in_grads = node.fn.grad(ns, *d, o, g, **node.attrs)
                            elif len(d) == 1:
                                in_grads = node.fn.grad(ns, d[0], o, g)
                            elif len(d) == 2:
                                in_grads = node.fn.grad(ns, d[0], d[1], o, g)
                            else:
                                in_grads = node.fn.grad(ns, *d, o, g)
                        else:
                            in_grads = prof.node(node, _bound(node), (g,))
                    else:
                        in_grads = bw(g) if prof is None else prof.node(node, bw, (g,))
                else:
                    if node.out_meta is not None and any(x is None for x in g):
                        g = [_zeros_for(m) if x is None else x for x, m in zip(g, node.out_meta)]
                    in_grads = bw(*g) if prof is None else prof.node(node, bw, g)
                if not retain_graph:
                    node.bw = None
                    node.in_data = None
                    node.saved = None
            nxt = None
            for e, gi in zip(node.edges, in_grads):
                if e is None:
                    continue
                if type(e) is tuple:
                    child = e[0]
                    d = deps[child] - 1
                    deps[child] = d
                    if gi is not None:
                        if child.n_out == 1:
                            if d == 0 and nxt is None and child not in buffers:
                                nxt, g = child, gi
                                continue
                            prev = buffers.get(child)
                            buffers[child] = gi if prev is None else prev + gi
                        else:
                            buf = buffers.get(child)
                            if buf is None:
                                buf = buffers[child] = [None] * child.n_out
                            idx = e[1]
                            buf[idx] = gi if buf[idx] is None else buf[idx] + gi
                    if d == 0:
                        if nxt is None:
                            nxt = child
                            g = buffers.pop(child, None)
                        else:
                            push(child)
                else:
                    if gi is not None:
                        _leaf_add(leaf_grads, e, gi, False)
                    if watch is not None:
                        watch.delivered(e)
            node = nxt


def _nones(node):
    return (None,) * len(node.edges)


def _run_general(ready, buffers, deps, leaf_grads, retain_graph, create_graph, targets, results,
                 useful, wanted, blocked):
    """The main loop for paddle.grad, create_graph and no_grad_vars."""
    grad_mode = useful is not None
    prof = state.prof_bw
    while ready:
        node = ready.pop()
        g = buffers.pop(node, None)
        in_grads = None
        if g is not None and (useful is None or node in useful):
            bw = node.bw
            if bw is None:
                raise _freed_error(node)
            if node.checks:
                _check_versions(node)
            if node.hooks is not None or node.retained is not None or grad_mode:
                g = _node_outputs(node, g, targets, results, create_graph)
            if create_graph:
                in_grads = _higher_order(node, g)
            elif node.n_out == 1:
                if bw is GRAD:
                    bw = _bound(node)
                in_grads = bw(g) if prof is None else prof.node(node, bw, (g,))
            else:
                if node.out_meta is not None and any(x is None for x in g):
                    g = [_zeros_for(m) if x is None else x for x, m in zip(g, node.out_meta)]
                in_grads = bw(*g) if prof is None else prof.node(node, bw, g)
            if not retain_graph:
                node.bw = None
                node.in_data = None
                node.saved = None
        elif grad_mode and g is not None:
            _node_outputs(node, g, targets, results, create_graph)
        if in_grads is None:
            in_grads = _nones(node)
        for e, gi in zip(node.edges, in_grads):
            if e is None:
                continue
            if type(e) is tuple:
                if (blocked and e in blocked) or (wanted is not None and e[0] not in wanted):
                    continue
                child, idx = e
                if gi is not None:
                    if child.n_out == 1:
                        prev = buffers.get(child)
                        buffers[child] = gi if prev is None else _add(prev, gi, create_graph)
                    else:
                        buf = buffers.get(child)
                        if buf is None:
                            buf = buffers[child] = [None] * child.n_out
                        buf[idx] = gi if buf[idx] is None else _add(buf[idx], gi, create_graph)
                d = deps[child] - 1
                deps[child] = d
                if d == 0:
                    ready.append(child)
            elif gi is not None:
                if blocked and id(e) in blocked:
                    continue
                if grad_mode:
                    k = targets.get(id(e))
                    if k is not None:
                        _set_result(results, k, gi, create_graph, add=True)
                else:
                    _leaf_add(leaf_grads, e, gi, create_graph)


def _set_result(results, k, g, create_graph, add=False):
    prev = results[k]
    results[k] = g if prev is None or not add else _add(prev, g, create_graph)


def _node_outputs(node, grads, targets, results, create_graph):
    """Retained grads (before hooks), tensor hooks, then paddle.grad targets (after hooks)."""
    single = node.n_out == 1
    glist = [grads] if single else list(grads)
    for idx in range(node.n_out):
        g = glist[idx]
        if g is None:
            continue
        if node.retained is not None and idx in node.retained:
            t = node.retained[idx]()
            if t is not None:
                # Paddle keeps the gradient of the last backward (not a sum), before hooks
                t._grad = _wrap((g._data if create_graph else g).copy())
        if node.hooks is not None and idx in node.hooks:
            for hook in list(node.hooks[idx].values()):
                g = _run_hook(hook, g, create_graph)
            glist[idx] = g
        k = targets.get((node, idx)) if targets else None
        if k is not None:
            results[k] = g
    return glist[0] if single else glist


def _run_hook(hook, g, create_graph):
    gt = g if create_graph else _wrap(g)
    r = hook(gt)
    if r is None:
        return g
    if not isinstance(r, Tensor):
        raise TypeError(f"register_hook: a hook must return a Tensor or None, got "
                        f"{type(r).__name__}")
    if list(r._data.shape) != list(gt._data.shape):
        raise ValueError(f"register_hook: the hook returned a gradient of shape {r.shape}, "
                         f"but the tensor's gradient has shape {gt.shape}")
    return r if create_graph else r._data


def _leaf_add(leaf_grads, leaf, g, create_graph):
    if leaf.stop_gradient:
        return
    entry = leaf_grads.get(id(leaf))
    if entry is None:
        # The array may be aliased (a root's grad, a value returned for several inputs, a view
        # of another gradient): mark it not owned, so it is copied before being stored.
        leaf_grads[id(leaf)] = [leaf, g, False]
    else:
        entry[1] = _add(entry[1], g, create_graph)
        entry[2] = True  # a fresh sum: owned, no copy needed


def _sole_refs():
    """The reference counts ``_finish_leaves`` sees for a gradient array nothing else holds,
    and for the base of a reshaped one (the same code shape; Python versions count
    differently)."""
    entries = {0: [None, np.empty(2).reshape(1, 2), False]}
    for _, g, _ in entries.values():
        return sys.getrefcount(g), _base_refs(g)


def _base_refs(g):
    b = g.base
    return sys.getrefcount(b)


_SOLE_REFS, _SOLE_BASE_REFS = _sole_refs()


def _sole_base(g) -> bool:
    """Whether ``g`` is a whole-buffer view (a reshape) of a fresh array only it holds."""
    b = g.base
    if type(b) is not np.ndarray or b.base is not None or b.size != g.size:
        return False
    del b  # counted by _base_refs alone, as in the calibration
    return _base_refs(g) <= _SOLE_BASE_REFS


def _finish_leaves(leaf_grads, create_graph):
    for leaf, g, owned in leaf_grads.values():
        if (not owned and type(g) is np.ndarray and sys.getrefcount(g) <= _SOLE_REFS
                and (g.base is None or _sole_base(g))):
            # a fresh array the op made for this leaf alone (or a reshape of one; not a view
            # into other data, not handed to another leaf or kept by anyone): stored as it is
            owned = True
        if leaf._hooks:
            for hook in list(leaf._hooks.values()):
                g = _run_hook(hook, g, create_graph)
                owned = False
        if create_graph:
            gt = g if isinstance(g, Tensor) else _wrap(g)
            leaf._grad = gt if leaf._grad is None else _add(leaf._grad, gt, True)
            continue
        if g.dtype != leaf._data.dtype:
            g = g.astype(leaf._data.dtype)
            owned = True
        cur = None if leaf._grad is None else leaf._grad._data
        if cur is None:
            if not owned:
                g = g.copy()
            leaf._grad = _wrap(g)
        elif cur.shape == g.shape and is_lazy_zero(cur):
            # a cleared gradient: the sum is g itself, stored in the same tensor (a Tensor the
            # user took from x.grad sees it, as when summing in place)
            leaf._grad._data = g if owned else g.copy()
        elif cur.shape == g.shape and getattr(cur.flags, "writeable", True):
            # in place, as Paddle: a Tensor the user took from x.grad sees the sum
            cur += g
        else:
            leaf._grad = _wrap(cur + g)


def _higher_order(node, grads):
    """Run the op's Tensor-level gradient rule so that the gradient stays differentiable."""
    rule = getattr(node.fn, "hi", None)
    if rule is None or node.in_data is None:
        raise NoHigherOrderRuleError(
            f"paddle_hl: op '{node.name}' has no higher-order gradient rule, so create_graph=True "
            "cannot differentiate through its gradient. Compute this gradient with "
            "create_graph=False, or restructure the computation with ops that support it.")
    if node.n_out == 1:
        gts = [grads if isinstance(grads, Tensor) else _wrap(grads)]
    else:
        gts = []
        for g, m in zip(grads, node.out_meta or (None,) * node.n_out):
            if g is None and m is not None:
                g = _zeros_for(m)
            gts.append(g if g is None or isinstance(g, Tensor) else _wrap(g))
    if not node.in_data and node.in_data is not None and node.edges:
        # rules that need no input values (PyLayer): grads in, one grad per edge out
        return rule((), gts)
    inputs = []
    for e, d in zip(node.edges, node.in_data):
        d = d.get() if type(d) is Packed else d
        if e is None:
            inputs.append(_wrap(d) if backend.is_array(d) else d)
        elif type(e) is tuple:
            t = _wrap(d, False)
            t._node, t._idx = e
            inputs.append(t)
        else:
            inputs.append(e)
    if node.saved is not None:
        # residuals as constants: the rule recomputes those whose derivative it needs
        saved = tuple(_wrap(v) if backend.is_array(v) else v
                      for v in (v.get() if type(v) is Packed else v for v in node.saved))
        out = rule(inputs, gts, saved, **node.attrs)
    else:
        out = rule(inputs, gts, **node.attrs) if node.attrs else rule(inputs, gts)
    unbroadcast_tensor = _unbroadcast_tensor
    fixed = []
    for x, g in zip(inputs, out):
        if g is None or not isinstance(x, Tensor):
            fixed.append(None if not isinstance(x, Tensor) else g)
            continue
        fixed.append(unbroadcast_tensor(g, x._data.shape))
    return fixed


class Packed:
    """A value packed by saved_tensors_hooks; ``get()`` unpacks it (at backward)."""

    __slots__ = ("packed", "unpack")

    def __init__(self, packed, unpack):
        self.packed = packed
        self.unpack = unpack

    def get(self):
        r = self.unpack(self.packed)
        return r._data if isinstance(r, Tensor) else r


def backward(tensors, grad_tensors=None, retain_graph=False):
    """Compute the gradients of several tensors at once, accumulating into leaf ``.grad``.

    Args:
        tensors (Tensor|list[Tensor]): the tensors to run backward from; no duplicates.
        grad_tensors (Tensor|list[Tensor|None], optional): the initial gradient of each tensor;
            None (or a None entry) means ones. Defaults to None.
        retain_graph (bool, optional): keep the graph so that backward can run again through
            it. Defaults to False.

    Returns:
        None

    Example:
        >>> x = paddle.to_tensor([1., 2.], stop_gradient=False)
        >>> y = x * 2
        >>> paddle.autograd.backward([y, y * 3], [None, paddle.to_tensor([1., 10.])])
        >>> x.grad  # [8., 62.]
    """
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    tensors = list(tensors)
    if grad_tensors is None:
        grad_tensors = [None] * len(tensors)
    elif isinstance(grad_tensors, Tensor):
        grad_tensors = [grad_tensors]
    grad_tensors = list(grad_tensors)
    if len(grad_tensors) != len(tensors):
        raise AutogradArgumentError(
            f"autograd.backward: the length of grad_tensors ({len(grad_tensors)}) must be equal "
            f"to the length of tensors ({len(tensors)})")
    run_backward(tensors, grad_tensors, retain_graph=retain_graph, where="autograd.backward")


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=False, no_grad_vars=None):
    """Gradients of ``outputs`` with respect to ``inputs`` (``paddle.grad``).

    Unlike ``backward`` this leaves every ``.grad`` untouched, and only runs the part of the
    graph that leads to ``inputs``.

    Args:
        outputs (Tensor|list[Tensor]): the differentiated tensors.
        inputs (Tensor|list[Tensor]): the tensors to differentiate with respect to.
        grad_outputs (Tensor|list[Tensor|None], optional): the cotangent of each output; None
            means ones. Defaults to None.
        retain_graph (bool, optional): keep the graph for another backward; defaults to
            ``create_graph``.
        create_graph (bool, optional): make the returned gradients differentiable (for higher
            order derivatives). Defaults to False.
        only_inputs (bool, optional): kept for compatibility; must be True.
        allow_unused (bool, optional): return None for inputs that the outputs do not depend
            on, instead of raising. Defaults to False.
        no_grad_vars (Tensor|list[Tensor], optional): tensors through which no gradient flows.

    Returns:
        list[Tensor|None]: one gradient per input.

    Example:
        >>> x = paddle.to_tensor([1., 2.], stop_gradient=False)
        >>> (dx,) = paddle.grad((x * x).sum(), x, create_graph=True)
        >>> (ddx,) = paddle.grad(dx.sum(), x)  # [2., 2.]
    """
    if not only_inputs:
        raise ValueError("grad: only_inputs=False is not supported (as in Paddle)")
    outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    elif isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs]
    grad_outputs = list(grad_outputs)
    if len(grad_outputs) != len(outputs):
        raise AutogradArgumentError(
            f"grad: the length of grad_outputs ({len(grad_outputs)}) must be equal to the length "
            f"of outputs ({len(outputs)})")
    if retain_graph is None:
        retain_graph = create_graph
    blocked = None
    if no_grad_vars is not None:
        nv = [no_grad_vars] if isinstance(no_grad_vars, Tensor) else list(no_grad_vars)
        blocked = set()
        for v in nv:
            if not isinstance(v, Tensor):
                raise TypeError(f"grad: no_grad_vars must be Tensors, got {type(v).__name__}")
            blocked.add(id(v) if v._node is None else (v._node, v._idx))
    res = run_backward(outputs, grad_outputs, retain_graph=retain_graph,
                       create_graph=create_graph, inputs=inputs, allow_unused=allow_unused,
                       accumulate=False, blocked=blocked, where="grad")
    out = []
    given = {id(g) for g in grad_outputs if g is not None}
    for r in res:
        if r is not None:
            if id(r) in given or (r._node is None and not r.stop_gradient):
                r = _wrap(r._data)  # never hand back (or re-flag) a tensor the caller owns
            r.stop_gradient = not create_graph
        out.append(r)
    return out


attach_autograd(run_backward=run_backward)
