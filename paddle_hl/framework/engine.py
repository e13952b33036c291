"""Reverse-mode autograd: graph nodes and the iterative backward pass.

A Node is created by the op wrapper for every op that records the graph. It keeps the op's
backward closure (raw arrays in, raw arrays out), one *edge* per input — ``(node, output_index)``
for an input made by another op, the leaf Tensor itself for a leaf that needs grad, or None — and
version stamps of the inputs whose values backward reads.

With ``create_graph=True`` the engine runs each op's *higher-order rule* instead: the same
gradient written with public Tensor ops, so that the gradient is itself differentiable.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from . import state
from .tensor import Tensor, _HookHandle, _wrap

__all__ = []


class Node:
    __slots__ = ("fn", "bw", "edges", "checks", "n_out", "hooks", "retained", "in_data",
                 "attrs", "out_meta", "__weakref__")

    def __init__(self, fn, bw, edges, checks, n_out, in_data, attrs, out_meta):
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
        import weakref

        self.retained[idx] = weakref.ref(tensor)

    def __repr__(self):
        return f"<GradNode {self.name}>"


def _version_error(node, i, got, expected):
    return RuntimeError(
        f"paddle_hl: input {i} of op '{node.name}', which its backward needs, was modified by an "
        f"inplace operation after it was used: its version is {got} but the expected version is "
        f"{expected}. Use an out-of-place op, or clone() the tensor before changing it.")


def _check_versions(node):
    for i, vbox, v in node.checks:
        if vbox.v != v:
            raise _version_error(node, i, vbox.v, v)


def _zeros_for(meta):
    shape, dt, xp = meta
    return xp.zeros(shape, dtype=dt)


def _collect(roots):
    """Nodes reachable from the roots and, for each, how many consumers feed it a gradient."""
    deps = {}
    stack = [n for n in roots if n is not None]
    seen = set()
    for n in stack:
        deps.setdefault(n, 0)
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        for e in node.edges:
            if type(e) is tuple:
                child = e[0]
                deps[child] = deps.get(child, 0) + 1
                if child not in seen:
                    stack.append(child)
    return deps


def _as_grad_array(g, t, create_graph):
    """The initial gradient for root ``t`` as an array (or a Tensor under create_graph)."""
    xp = backend.get_array_module(t._data)
    if g is None:
        arr = xp.ones(t._data.shape, dtype=t._data.dtype)
    elif isinstance(g, Tensor):
        if create_graph:
            return g
        arr = g._data
    else:
        arr = xp.asarray(g, dtype=t._data.dtype)
    if tuple(arr.shape) != t._data.shape:
        raise ValueError(f"backward: grad_tensor shape {list(arr.shape)} does not match the "
                         f"tensor's shape {list(t._data.shape)}")
    return _wrap(arr) if create_graph else arr


def _add(a, b, create_graph):
    if create_graph:
        from ..tensor.math import add

        return add(a, b)
    return a + b


def run_backward(tensors, grad_tensors, retain_graph=False, create_graph=False, inputs=None,
                 allow_unused=False, accumulate=True):
    """Backward from several roots.

    With ``inputs`` (paddle.grad), returns the gradients of those tensors and, when ``accumulate``
    is False, leaves every ``.grad`` untouched.
    """
    roots = []
    for t, g in zip(tensors, grad_tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"backward: expected Tensors, got {type(t).__name__}")
        if t.stop_gradient:
            if inputs is None and len(tensors) == 1:
                raise RuntimeError(
                    "backward: the tensor has stop_gradient=True, so there is no graph to run "
                    "backward through; set stop_gradient=False on the inputs that need gradients")
            continue
        roots.append((t, _as_grad_array(g, t, create_graph)))

    targets = {}  # key -> slot index in results
    if inputs is not None:
        for i, x in enumerate(inputs):
            if not isinstance(x, Tensor):
                raise TypeError(f"grad: inputs must be Tensors, got {type(x).__name__}")
            key = id(x) if x._node is None else (x._node, x._idx)
            targets[key] = i
    results = [None] * (0 if inputs is None else len(inputs))

    leaf_grads = {}  # id(leaf) -> [leaf, grad]
    buffers = {}  # node -> list of grads per output
    root_nodes = []
    for t, g in roots:
        if t._node is None:
            _leaf_add(leaf_grads, t, g, create_graph)
        else:
            buf = buffers.setdefault(t._node, [None] * t._node.n_out)
            buf[t._idx] = g if buf[t._idx] is None else _add(buf[t._idx], g, create_graph)
            root_nodes.append(t._node)

    deps = _collect(root_nodes)
    ready = [n for n in set(root_nodes) if deps[n] == 0]
    prev_mode = state.grad_enabled
    state.grad_enabled = create_graph
    try:
        while ready:
            node = ready.pop()
            grads = buffers.pop(node, None)
            if grads is None:
                continue
            if node.bw is None:
                raise RuntimeError(
                    f"backward: trying to run backward through op '{node.name}' a second time "
                    "(its saved values were freed). Pass retain_graph=True to the first "
                    "backward call if you need to backward twice.")
            if node.checks:
                _check_versions(node)
            if node.hooks or node.retained or targets:
                grads = _node_outputs(node, grads, targets, results, create_graph)
            if node.n_out > 1 and any(g is None for g in grads):
                grads = [(_wrap(_zeros_for(m)) if create_graph else _zeros_for(m))
                         if g is None else g for g, m in zip(grads, node.out_meta)]
            if create_graph:
                in_grads = _higher_order(node, grads)
            else:
                in_grads = node.bw(*grads)
            if not retain_graph and not create_graph:
                node.bw = None
                node.in_data = None
            for e, g in zip(node.edges, in_grads):
                if e is None or g is None:
                    continue
                if type(e) is tuple:
                    child, idx = e
                    buf = buffers.get(child)
                    if buf is None:
                        buf = buffers[child] = [None] * child.n_out
                    buf[idx] = g if buf[idx] is None else _add(buf[idx], g, create_graph)
                    deps[child] -= 1
                    if deps[child] == 0:
                        ready.append(child)
                else:
                    _leaf_add(leaf_grads, e, g, create_graph)
    finally:
        state.grad_enabled = prev_mode

    _finish_leaves(leaf_grads, targets, results, inputs is None or accumulate, create_graph,
                   [g for _, g in roots])
    if inputs is not None:
        for i, r in enumerate(results):
            if r is None and not allow_unused:
                raise RuntimeError(
                    f"grad: input {i} is not reachable from the outputs (its gradient would be "
                    "None); pass allow_unused=True to get None for it")
        return [r if r is None or isinstance(r, Tensor) else _wrap(r) for r in results]
    return None


def _node_outputs(node, grads, targets, results, create_graph):
    grads = list(grads)
    for idx in range(node.n_out):
        g = grads[idx]
        if g is None:
            continue
        if node.hooks and idx in node.hooks:
            for hook in list(node.hooks[idx].values()):
                g = _run_hook(hook, g, create_graph)
            grads[idx] = g
        if node.retained and idx in node.retained:
            t = node.retained[idx]()
            if t is not None:
                prev = t._grad
                gt = g if create_graph else _wrap(g.copy())
                t._grad = gt if prev is None else _wrap(prev._data + gt._data)
        key = (node, idx)
        if key in targets:
            results[targets[key]] = g
    return grads


def _run_hook(hook, g, create_graph):
    gt = g if create_graph else _wrap(g)
    r = hook(gt)
    if r is None:
        return g
    if not isinstance(r, Tensor):
        raise TypeError(f"register_hook: a hook must return a Tensor or None, got "
                        f"{type(r).__name__}")
    return r if create_graph else r._data


def _leaf_add(leaf_grads, leaf, g, create_graph):
    if leaf.stop_gradient:  # e.g. listed in paddle.grad's no_grad_vars
        return
    entry = leaf_grads.get(id(leaf))
    if entry is None:
        leaf_grads[id(leaf)] = [leaf, g, False]
    else:
        entry[1] = _add(entry[1], g, create_graph)
        entry[2] = True  # a fresh sum: owned, no copy needed


def _finish_leaves(leaf_grads, targets, results, accumulate, create_graph, root_grads):
    stored = {id(g) for g in root_grads}
    for leaf, g, owned in leaf_grads.values():
        if leaf._hooks:
            for hook in list(leaf._hooks.values()):
                g = _run_hook(hook, g, create_graph)
                owned = False
        key = id(leaf)
        if key in targets:
            results[targets[key]] = g
            continue
        if not accumulate:
            continue
        if create_graph:
            leaf._grad = g if leaf._grad is None else _add(leaf._grad, g, True)
            continue
        if g.dtype != leaf._data.dtype:
            g = g.astype(leaf._data.dtype)
            owned = True
        if leaf._grad is None:
            if not owned and (id(g) in stored or not getattr(g.flags, "writeable", True)):
                g = g.copy()
            stored.add(id(g))
            leaf._grad = _wrap(g)
        else:
            cur = leaf._grad._data
            if cur.shape == g.shape and getattr(cur.flags, "writeable", True):
                cur += g
            else:
                leaf._grad = _wrap(cur + g)


def _higher_order(node, grads):
    """Run the op's Tensor-level gradient rule so that the gradient stays differentiable."""
    rule = getattr(node.fn, "hi", None)
    if rule is None or node.in_data is None:
        raise RuntimeError(
            f"paddle_hl: op '{node.name}' has no higher-order gradient rule, so create_graph=True "
            "cannot differentiate through its gradient. Compute this gradient with "
            "create_graph=False, or restructure the computation with ops that support it.")
    inputs = []
    for e, d in zip(node.edges, node.in_data):
        if e is None:
            inputs.append(_wrap(d) if isinstance(d, np.ndarray) or backend.is_gpu_array(d) else d)
        elif type(e) is tuple:
            t = _wrap(d, False)
            t._node, t._idx = e
            inputs.append(t)
        else:
            inputs.append(e)
    gts = [g if isinstance(g, Tensor) else _wrap(g) for g in grads]
    out = rule(inputs, gts, **node.attrs) if node.attrs else rule(inputs, gts)
    from ..tensor._unbroadcast import unbroadcast_tensor

    fixed = []
    for x, g in zip(inputs, out):
        if g is None or not isinstance(x, Tensor):
            fixed.append(None if not isinstance(x, Tensor) else g)
            continue
        fixed.append(unbroadcast_tensor(g, x._data.shape))
    return fixed


def backward(tensors, grad_tensors=None, retain_graph=False):
    """Backward from several tensors at once (``paddle.autograd.backward``)."""
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    tensors = list(tensors)
    if grad_tensors is None:
        grad_tensors = [None] * len(tensors)
    elif isinstance(grad_tensors, Tensor):
        grad_tensors = [grad_tensors]
    grad_tensors = list(grad_tensors)
    if len(grad_tensors) != len(tensors):
        raise ValueError(f"autograd.backward: got {len(tensors)} tensors but "
                         f"{len(grad_tensors)} grad_tensors")
    run_backward(tensors, grad_tensors, retain_graph=retain_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=False, no_grad_vars=None):
    """Gradients of ``outputs`` w.r.t. ``inputs``, returned as a list (``paddle.grad``).

    Unlike ``backward`` this leaves every ``.grad`` untouched. With ``create_graph=True`` the
    returned gradients are part of the graph and can be differentiated again.
    """
    single = isinstance(inputs, Tensor)
    outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    inputs = [inputs] if single else list(inputs)
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    elif isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs]
    grad_outputs = list(grad_outputs)
    if len(grad_outputs) != len(outputs):
        raise ValueError(f"grad: got {len(outputs)} outputs but {len(grad_outputs)} grad_outputs")
    if retain_graph is None:
        retain_graph = create_graph
    if no_grad_vars is not None:
        nv = [no_grad_vars] if isinstance(no_grad_vars, Tensor) else list(no_grad_vars)
        saved = [(v, v.stop_gradient) for v in nv]
        for v in nv:
            v.stop_gradient = True
    else:
        saved = []
    try:
        res = run_backward(outputs, grad_outputs, retain_graph=retain_graph,
                           create_graph=create_graph, inputs=inputs, allow_unused=allow_unused,
                           accumulate=False)
    finally:
        for v, sg in saved:
            v.stop_gradient = sg
    if not create_graph:
        for r in res:
            if r is not None:
                r.stop_gradient = True
    else:
        for r in res:
            if r is not None and r._node is None:
                r.stop_gradient = True
    return res
