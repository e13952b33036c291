"""``PyLayer``: custom ops with a Python forward and backward (``paddle.autograd.PyLayer``)."""

from __future__ import annotations

from ..backend import get_array_module as _xp
from ..framework import state
from ..framework.engine import Node
from ..framework.tensor import Tensor, _wrap

__all__ = []


class PyLayerContext:
    """The ``ctx`` object passed to ``PyLayer.forward`` and ``PyLayer.backward``.

    It carries tensors from forward to backward (:meth:`save_for_backward`,
    :meth:`saved_tensor`); any other attribute can be set on it freely (``ctx.alpha = 2``).

    Example:
        >>> class Tanh(paddle.autograd.PyLayer):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         y = paddle.tanh(x)
        ...         ctx.save_for_backward(y)
        ...         return y
        ...     @staticmethod
        ...     def backward(ctx, dy):
        ...         (y,) = ctx.saved_tensor()
        ...         return dy * (1 - y * y)
    """

    # class-level defaults: a context is created per call, and most calls set few of these
    _saved = None
    _not_inplace = ()
    _non_diff = ()
    _materialize = True

    def save_for_backward(self, *tensors: Tensor) -> None:
        """Keep ``tensors`` for backward; read them back with :meth:`saved_tensor`.

        Call it at most once, inside forward. Under ``saved_tensors_hooks`` each tensor goes
        through the pack hook now and the unpack hook when backward reads it.

        Args:
            *tensors (Tensor): the tensors backward needs.
        """
        if state.saved_hooks:
            pack, unpack = state.saved_hooks[-1]
            self._saved = tuple(_PackedTensor(pack(t), unpack) if isinstance(t, Tensor) else t
                                for t in tensors)
        else:
            self._saved = tensors

    def saved_tensor(self):
        """The tensors given to :meth:`save_for_backward`, as a tuple (None if none were saved).

        Returns:
            tuple[Tensor] | None
        """
        if self._saved is None:
            return None
        return tuple(t.get() if type(t) is _PackedTensor else t for t in self._saved)

    def mark_not_inplace(self, *args: Tensor) -> None:
        """Declare that forward does not modify these input tensors in place.

        If forward returns one of them as it is, PyLayer then hands back a new Tensor (sharing
        the data) instead of rebinding the input's autograd history to this op.

        Args:
            *args (Tensor): input tensors of forward.
        """
        self._not_inplace = tuple(args)

    def mark_non_differentiable(self, *args: Tensor) -> None:
        """Declare outputs of forward that have no gradient.

        They come out with ``stop_gradient=True``, and backward receives zeros for them.

        Args:
            *args (Tensor): output tensors of forward.
        """
        self._non_diff = tuple(args)

    def set_materialize_grads(self, value: bool) -> None:
        """Whether backward receives zeros (True, the default) or None for outputs without grad.

        Args:
            value (bool): materialize missing output gradients as zeros.
        """
        self._materialize = bool(value)


class _PackedTensor:
    __slots__ = ("packed", "unpack")

    def __init__(self, packed, unpack):
        self.packed = packed
        self.unpack = unpack

    def get(self):
        r = self.unpack(self.packed)
        if not isinstance(r, Tensor):
            raise TypeError(f"saved_tensors_hooks: unpack_hook must return a Tensor, got "
                            f"{type(r).__name__}")
        return r


class PyLayer:
    """Base class of custom ops whose forward and backward are written in Python.

    Subclasses define two static methods:

    - ``forward(ctx, *args, **kwargs)`` computes the outputs (a Tensor, or a tuple/list whose
      Tensor items are the differentiable outputs). It runs without recording the graph.
    - ``backward(ctx, *grads)`` gets one gradient per Tensor output of forward and returns one
      gradient per Tensor input of forward (a list of gradients for an input that is a list of
      Tensors), or None for an input that needs no gradient.

    Run the op with ``MyLayer.apply(*args, **kwargs)``. Tensors passed positionally, directly or
    inside a list/tuple, are tracked.

    Example:
        >>> class Double(paddle.autograd.PyLayer):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         return x * 2
        ...     @staticmethod
        ...     def backward(ctx, dy):
        ...         return dy * 2
        >>> x = paddle.to_tensor([1., 2.], stop_gradient=False)
        >>> Double.apply(x).sum().backward()  # x.grad == [2., 2.]
    """

    @staticmethod
    def forward(ctx, *args, **kwargs):
        """Compute the outputs; subclasses must define it (a static method)."""
        raise TypeError("PyLayer.forward: define a static forward(ctx, ...) in your subclass")

    @staticmethod
    def backward(ctx, *args):
        """Compute the input gradients; subclasses must define it (a static method)."""
        raise TypeError("PyLayer.backward: define a static backward(ctx, ...) in your subclass")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward and, when an input needs grad, record the op in the autograd graph.

        Args:
            *args: forward's positional arguments (Tensors, lists of Tensors, anything else).
            **kwargs: forward's keyword arguments (not tracked).

        Returns:
            What forward returns, with its Tensor outputs attached to the graph.
        """
        if cls.forward is PyLayer.forward or cls.backward is PyLayer.backward:
            raise TypeError(f"{cls.__name__}: a PyLayer subclass must define static forward and "
                            "backward methods")
        slots, flat, tracked = _tracked_inputs(args)
        ctx = PyLayerContext()
        recording = state.tls.grad_enabled and any(not t.stop_gradient for t in tracked)
        # edges are taken before forward runs: forward may change an input in place
        edges = [_edge(t) for t in tracked] if recording else None
        with state.no_grad():
            outs = cls.forward(ctx, *args, **kwargs)
        if not recording:
            return outs
        return _record(cls, ctx, slots, flat, tracked, edges, outs)


def _edge(t):
    if t.stop_gradient:
        return None
    return t if t._node is None else (t._node, t._idx)


def _tracked_inputs(args):
    """Find the Tensors that PyLayer tracks among forward's positional arguments.

    Returns ``slots``: per Tensor-carrying argument, ``(start, None)`` for a Tensor or
    ``(start, n)`` for a list/tuple of n items, where ``start`` indexes ``flat``; ``flat``: those
    items in order, None standing for list items that are not Tensors; and ``tracked``: the
    Tensors of ``flat``.
    """
    slots = []
    flat = []
    for a in args:
        if isinstance(a, Tensor):
            slots.append((len(flat), None))
            flat.append(a)
        elif isinstance(a, (list, tuple)) and any(isinstance(x, Tensor) for x in a):
            slots.append((len(flat), len(a)))
            flat.extend(x if isinstance(x, Tensor) else None for x in a)
    return slots, flat, [t for t in flat if t is not None]


def _record(cls, ctx, slots, flat, tracked, edges, outs):
    single = not isinstance(outs, (tuple, list))
    items = [outs] if single else list(outs)
    ids = {id(t): t for t in tracked}
    not_inplace = {id(t) for t in ctx._not_inplace}
    non_diff = {id(t) for t in ctx._non_diff}
    out_pos = []
    for k, o in enumerate(items):
        if not isinstance(o, Tensor):
            continue
        if id(o) in ids:
            if id(o) in not_inplace:
                fresh = _wrap(o._data)
                fresh._ver = o._ver
                items[k] = o = fresh
            elif o._node is None and not o.stop_gradient:
                raise ValueError(
                    f"{cls.__name__}.apply: forward returned its input Leaf Tensor ({o.name}) "
                    "that doesn't stop gradient, which would change it inplace; a leaf tensor "
                    "can't use inplace strategy. Return a new tensor, or call "
                    "ctx.mark_not_inplace(x) in forward.")
            else:
                o._ver.v += 1  # the input is now this op's output, as an inplace op
        out_pos.append(k)
    if not out_pos:
        return outs
    outputs = [items[k] for k in out_pos]
    checks = []
    if ctx._saved:
        for i, t in enumerate(ctx._saved):
            if isinstance(t, Tensor):
                checks.append((i, t._ver, t._ver.v))
    meta = tuple((o._data.shape, o._data.dtype, _xp(o._data)) for o in outputs)
    rule = _Rule(cls, ctx, slots, flat, meta)
    node = Node(rule, rule.bw, edges, checks, len(outputs), (), {},
                meta if ctx._materialize else None)
    for i, o in enumerate(outputs):
        if id(o) in non_diff:
            o.stop_gradient = True
            continue
        o._node = node
        o._idx = i
        o.stop_gradient = False
    if single:
        return items[0]
    return type(outs)(items)


def _amp_setting():
    """The active auto_cast setting (None when AMP is off: one attribute check)."""
    from ..framework import state

    if state.amp_hook is None:
        return None
    from ..amp import _hook

    return _hook.current()




class _Rule:
    """The graph node's op for one PyLayer call: runs the user's backward."""

    __slots__ = ("cls", "ctx", "slots", "flat", "meta", "op_name", "amp")

    def __init__(self, cls, ctx, slots, flat, meta):
        self.cls = cls
        # backward runs under the auto_cast setting that was active in forward, as in Paddle
        self.amp = _amp_setting()
        self.ctx = ctx
        self.slots = slots
        # what is checked on each returned gradient; the input tensors themselves are not kept
        self.flat = [None if t is None else (not t.stop_gradient, t._data.shape, t._data.dtype)
                     for t in flat]
        self.meta = meta
        self.op_name = cls.__name__

    def bw(self, *grads):
        """Array gradients in, array gradients out (plain backward)."""
        gts = [None if g is None else _wrap(g) for g in grads]
        return [None if g is None else g._data for g in self._call(gts)]

    def hi(self, inputs, grads):
        """Tensor gradients in and out (create_graph=True): the user's backward is recorded."""
        return self._call(grads)

    def _call(self, grads):
        if self.amp is None:
            return self._match(self.cls.backward(self.ctx, *grads))
        from ..amp import _hook

        with _hook.restored(self.amp):
            return self._match(self.cls.backward(self.ctx, *grads))

    def _match(self, res):
        """One gradient per tracked input Tensor, from backward's result (see PyLayer doc)."""
        name = f"{self.op_name}.backward"
        if res is None or isinstance(res, Tensor):
            res = (res,)
        elif not isinstance(res, (list, tuple)):
            raise TypeError(f"{name}: must return a Tensor, None, or a list/tuple of them, got "
                            f"{type(res).__name__}")
        res = list(res)
        n_slots = len(self.slots)
        structured = len(res) == n_slots and all(
            (n is None and not isinstance(r, (list, tuple))) or
            (n is not None and (r is None or isinstance(r, (list, tuple))))
            for (_, n), r in zip(self.slots, res))
        flat_grads = [None] * len(self.flat)
        if structured:
            for (start, n), r in zip(self.slots, res):
                if n is None:
                    flat_grads[start] = r
                elif r is not None:
                    if len(r) != n:
                        raise ValueError(f"{name}: returned {len(r)} gradients for an input list "
                                         f"of {n} items")
                    flat_grads[start:start + n] = list(r)
        elif len(res) == sum(1 for f in self.flat if f is not None):
            it = iter(res)
            flat_grads = [None if f is None else next(it) for f in self.flat]
        else:
            raise ValueError(f"{name}: the number of outputs of PyLayer.backward should be "
                             f"{n_slots} (one per Tensor input of forward), but received "
                             f"{len(res)}")
        out = []
        for k, (g, f) in enumerate(zip(flat_grads, self.flat)):
            if f is None:
                if g is not None and not isinstance(g, Tensor):
                    raise TypeError(f"{name}: gradient {k} must be a Tensor or None")
                continue  # a non-Tensor item of an input list
            needs, shape, dtype = f
            if g is None:
                out.append(None)
                continue
            if not isinstance(g, Tensor):
                raise TypeError(f"{name}: gradient {k} must be a Tensor or None, got "
                                f"{type(g).__name__}")
            if not needs:
                raise ValueError(
                    f"{name}: backward should return None at position {k}, because the "
                    "corresponding forward input Tensor has stop_gradient=True")
            if tuple(g._data.shape) != tuple(shape):
                raise ValueError(f"{name}: gradient {k} has shape {g.shape}, but the input "
                                 f"has shape {list(shape)}")
            if g._data.dtype != dtype:
                from ..tensor._helpers import cast_to

                g = cast_to(g, dtype)
            out.append(g)
        return out
