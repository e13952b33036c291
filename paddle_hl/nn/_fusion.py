"""Declared fusion chains: one module runs them, with one guard and one switch.

Model code keeps Paddle's text. A block names the chains its ``forward`` runs, as data::

    class BasicBlock(nn.Layer):
        _fusions = (("conv1", "bn1", "relu"), ("conv2", "bn2"))

        def forward(self, x):
            out = self.conv1(x)
            out = self.bn1(out)
            out = self.relu(out)
            ...

A chain lists sublayers by attribute name or, in a Sequential, by child index; the
declaration may be a class attribute or an instance attribute set in ``__init__``. A
:class:`~paddle_hl.nn.Sequential` that declares nothing gets one chain for each convolution
directly followed by a batch norm (:data:`SEQUENTIAL_PAIRS`).

How a chain runs: when the block is called, each member of a chain keeps a small role object
(instance attribute ``_fusion``) read by ``Layer.__call__``. The first member of a span that can
fuse computes the whole span and marks its output; the next member, called on that marked
output, hands it back unchanged. No layer is replaced, so parameters, ``state_dict`` keys,
``sublayers()`` and printing stay Paddle's. The spans:

- **conv + batch norm folded (inference).** A ``Conv1D/2D/3D`` followed by a batch norm runs
  as one convolution with the norm folded into its weights (:func:`_fold_bn`): both layers in
  eval mode, the norm normalizing with its running statistics, no gradient wanted, matching
  float32/float64 dtypes and channel layouts. The folded weight and bias are kept on the
  convolution and recomputed whenever any of the six tensors changes (a new array or an
  inplace version bump) or epsilon changes. The result equals the two layers' up to float
  rounding.
- **batch norm + ReLU/ReLU6 (training).** A batch norm using batch statistics followed by
  ``nn.ReLU`` or ``nn.ReLU6`` runs as one op that applies the activation inside the norm's
  passes, forward and backward (``nn.functional.norm._batch_norm`` with ``act``).

The guard, in one place (:func:`_fold` and :func:`_bn_act`): a span runs fused only when the
block's ``forward`` is the one the declaration was written for (not overridden by a subclass
or an instance attribute), no member of the chain has a forward pre- or post-hook (a hook sees
exactly what it sees without fusion), no AMP ``auto_cast`` is active, neither layer's
``forward`` is overridden, the input is one Tensor, and the mode, dtype, layout and grad-mode
rules above hold. Anything else calls the layers in turn.

The switch: ``PADDLE_HL_FUSE_CONV_BN=0`` in the environment (read once, by
``backend.settings.fuse_conv_bn``) or :func:`set_enabled` turns every declared fusion off.

The contract a declaration makes: while the block's ``forward`` runs, it calls the chain's
members in the declared order, each through ``__call__`` on the previous member's output.
A forward that breaks it raises ``RuntimeError`` naming the block and the chain, rather than
return a wrong value. ``paddle_hl.nn.utils.fused(model)`` lists the chains found.
"""

from __future__ import annotations

import threading

import numpy as np

from .. import backend
from ..backend import settings
from ..framework import state
from ..framework.tensor import Tensor, _wrap
from .functional import norm as _fnorm
from .layer.activation import ReLU, ReLU6
from .layer.conv import _Conv
from .layer.layers import Layer
from .layer.norm import _BatchNormBase

__all__ = []

#: The declaration ``nn.Sequential`` carries: each convolution followed by a batch norm.
SEQUENTIAL_PAIRS = "convolution-batch norm pairs"

_FOLD_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))

_tls = threading.local()

_ACTS = {ReLU: "relu", ReLU6: "relu6"}  # exact types: a subclass may compute otherwise


def enabled() -> bool:
    """Whether declared fusion chains run fused (``PADDLE_HL_FUSE_CONV_BN``, default on)."""
    return settings.fuse_conv_bn()


def set_enabled(flag: bool) -> None:
    """Turn every declared fusion on or off for this process (the setting
    ``backend.settings.set_fuse_conv_bn``).

    Args:
        flag (bool): False runs every layer on its own, as written.
    """
    settings.set_fuse_conv_bn(flag)


# ---------------------------------------------------------------- the runtime

class _Frame:
    """One running block: the marked output of a fused span and the member it is for."""

    __slots__ = ("block", "out", "next")

    def __init__(self, block):
        self.block = block
        self.out = None
        self.next = None


class _Member:
    """The role of one chain member (``layer._fusion``): which block, which chain, which
    span it starts (``kind``: ``'fold'``, ``'bn_act'`` or None)."""

    __slots__ = ("block", "chain", "index", "kind")

    def __init__(self, block, chain, index, kind):
        self.block = block
        self.chain = chain
        self.index = index
        self.kind = kind

    def call(self, layer, inputs, kwargs):
        stack = getattr(_tls, "stack", None)
        if not stack:
            return layer._dygraph_call_func(*inputs, **kwargs)
        frame = stack[-1]
        if frame.next is not None:
            if frame.next is layer and len(inputs) == 1 and not kwargs \
                    and inputs[0] is frame.out:
                out = frame.out
                frame.out = frame.next = None
                return out
            if self.block is frame.block:
                raise _broken(frame, layer)
        if self.kind is None or self.block is not frame.block or len(inputs) != 1 or kwargs:
            return layer._dygraph_call_func(*inputs, **kwargs)
        nxt = self.chain[self.index + 1]
        if "_fusion" not in nxt.__dict__:  # its role was dropped: it could not hand back
            return layer._dygraph_call_func(*inputs, **kwargs)
        fuse = _fold if self.kind == "fold" else _bn_act
        out = fuse(layer, nxt, self.chain, inputs[0])
        if out is None:
            return layer._dygraph_call_func(*inputs, **kwargs)
        frame.out, frame.next = out, nxt
        return out


class _Block:
    """The role of a declaring block class (``cls._fusion``): plans its chains and keeps a
    frame on this thread's stack while its forward runs."""

    __slots__ = ()

    def call(self, block, inputs, kwargs):
        if not settings.fuse_conv_bn() or not _trusted(block):
            return block._dygraph_call_func(*inputs, **kwargs)
        if not _plan(block):
            return block._dygraph_call_func(*inputs, **kwargs)
        stack = getattr(_tls, "stack", None)
        if stack is None:
            stack = _tls.stack = []
        frame = _Frame(block)
        stack.append(frame)
        try:
            out = block._dygraph_call_func(*inputs, **kwargs)
        finally:
            stack.pop()
        if frame.next is not None:
            raise _broken(frame, None)
        return out


BLOCK = _Block()


def _broken(frame, layer):
    block, nxt = frame.block, frame.next
    names = {id(v): k for k, v in block._sub_layers.items()}
    want = names.get(id(nxt), type(nxt).__name__)
    got = "returned" if layer is None else \
        f"called {names.get(id(layer), type(layer).__name__)!r}"
    return RuntimeError(
        f"{type(block).__name__}._fusions: the forward {got} before passing the output of the "
        f"fused span to {want!r}; a declared chain's members must be called in order, each on "
        f"the previous one's output (declared: {block._fusions!r})")


def _owner(cls):
    for c in cls.__mro__:
        if "_fusions" in c.__dict__:
            return c
    return None


_TRUSTED: dict = {}


def _trusted(block):
    """Whether ``block`` runs the forward its declaration was written for."""
    cls = type(block)
    ok = _TRUSTED.get(cls)
    if ok is None:
        owner = _owner(cls)
        ok = _TRUSTED[cls] = owner is not None and cls.forward is owner.forward
    if not ok:
        return False
    f = block.__dict__.get("forward")
    if f is None:
        return True
    # paddle.jit.to_static wraps the bound forward itself: the same code runs
    bound = getattr(f, "dygraph_function", None)
    return getattr(bound, "__self__", None) is block and \
        getattr(bound, "__func__", None) is cls.forward


# ---------------------------------------------------------------- planning

def _plan(block):
    """The chains of ``block`` (tuples of member layers), kept until its sublayers or its
    declaration change; the members' roles are set here."""
    decl = block._fusions
    key = (decl, tuple(block._sub_layers.values()))
    cached = block.__dict__.get("_fusion_plan")
    if cached is not None and cached[0] == key:
        return cached[1]
    if cached is not None:
        for chain in cached[1]:
            for m in chain:
                role = m.__dict__.get("_fusion")
                if role is not None and role.block is block:
                    del m.__dict__["_fusion"]
    chains = tuple(c for c in _chains(block, decl, key[1]) if _valid(c))
    for chain in chains:
        for i, m in enumerate(chain):
            m.__dict__["_fusion"] = _Member(block, chain, i, _kind(chain, i))
    block.__dict__["_fusion_plan"] = (key, chains)
    return chains


def _chains(block, decl, children):
    if decl == SEQUENTIAL_PAIRS:
        return [(a, b) for a, b in zip(children, children[1:])
                if isinstance(a, _Conv) and isinstance(b, _BatchNormBase)]
    if not isinstance(decl, (tuple, list)):
        raise TypeError(f"{type(block).__name__}._fusions: expected a tuple of chains, got "
                        f"{type(decl).__name__}")
    return [tuple(_member(block, ref, children) for ref in chain) for chain in decl]


def _member(block, ref, children):
    kind = type(block).__name__
    if isinstance(ref, int) and not isinstance(ref, bool):
        if not -len(children) <= ref < len(children):
            raise ValueError(f"{kind}._fusions: child index {ref} out of range for "
                             f"{len(children)} sublayers")
        return children[ref]
    if isinstance(ref, str):
        if ref not in block._sub_layers:
            raise ValueError(f"{kind}._fusions: no sublayer {ref!r} (sublayers: "
                             f"{list(block._sub_layers)})")
        return block._sub_layers[ref]
    raise TypeError(f"{kind}._fusions: a chain member is a sublayer name or a child index, "
                    f"got {ref!r}")


def _valid(chain):
    """Members are distinct non-block layers and at least one span can fuse."""
    if len(chain) < 2 or len({id(m) for m in chain}) != len(chain):
        return False
    if any(m is None or type(m)._fusion is not None for m in chain):
        return False
    return any(_kind(chain, i) for i in range(len(chain) - 1))


def _kind(chain, i):
    if i + 1 >= len(chain):
        return None
    a, b = chain[i], chain[i + 1]
    if isinstance(a, _Conv) and isinstance(b, _BatchNormBase):
        return "fold"
    if isinstance(a, _BatchNormBase):
        return "bn_act"
    return None


def _hooked(chain):
    return any(m._forward_pre_hooks or m._forward_post_hooks for m in chain)


# ---------------------------------------------------------------- the two fusions

def _fold(conv, bn, chain, x):
    """``bn(conv(x))`` as ONE convolution with the batch norm folded into its weights, or
    None where that would not be the same computation (see the module docstring)."""
    if (conv.training or bn.training or type(conv).forward is not _Conv.forward
            or type(bn).forward is not _BatchNormBase.forward
            or bn._use_global_stats is False or state.amp_hook is not None
            or _hooked(chain) or not isinstance(x, Tensor)):
        return None
    last = conv._data_format[-1] == "C"
    bn_last = bn._data_format[-1] == "C" and bn._data_format != "NC"
    tensors = (conv.weight, conv.bias, bn.weight, bn.bias, bn._mean, bn._variance)
    if (last != bn_last or bn._num_features != conv._out_channels
            or conv.weight._data.dtype not in _FOLD_DTYPES
            or any(t is not None and t._data.dtype != conv.weight._data.dtype
                   for t in tensors)):
        return None
    if state.tls.grad_enabled and not all(t is None or t.stop_gradient
                                          for t in (x, *tensors)):
        return None
    conv._check_input(x)
    key = (bn._epsilon,) + tuple(None if t is None else (id(t._data), t._ver.v)
                                 for t in tensors)
    cached = conv.__dict__.get("_bn_fold")
    if cached is None or cached[0] != key or cached[1] is not bn:
        cached = (key, bn, *_fold_bn(conv, bn))
        conv.__dict__["_bn_fold"] = cached
    out = conv._conv(x, cached[2], cached[3])
    bn._check_input(out)  # the norm's own checks (rank, format) on the same shape
    return out


def _fold_bn(conv, bn):
    """The weight and bias Tensors of ``conv`` with the batch norm ``bn`` folded in:
    ``w * s`` and ``(b - mean) * s + beta`` with ``s = gamma / sqrt(var + eps)``, computed in
    float64 and cast to the weight's dtype."""
    w = conv.weight._data
    xp = backend.get_array_module(w)
    dt = w.dtype
    var = bn._variance._data.astype(np.float64)
    s = 1.0 / xp.sqrt(var + float(np.float32(bn._epsilon)))
    if bn.weight is not None:
        s = s * bn.weight._data.astype(np.float64)
    shift = -bn._mean._data.astype(np.float64)
    if conv.bias is not None:
        shift = shift + conv.bias._data.astype(np.float64)
    shift = shift * s
    if bn.bias is not None:
        shift = shift + bn.bias._data.astype(np.float64)
    wf = (w.astype(np.float64) * s.reshape((-1,) + (1,) * (w.ndim - 1))).astype(dt)
    return _wrap(wf), _wrap(shift.astype(dt))


def _bn_act(bn, act, chain, x):
    """``act(bn(x))`` as one op with batch statistics and ReLU/ReLU6, or None."""
    name = _ACTS.get(type(act))
    if (name is None or not bn.training or type(bn).forward is not _BatchNormBase.forward
            or bn._use_global_stats or state.amp_hook is not None or _hooked(chain)
            or not isinstance(x, Tensor)):
        return None
    bn._check_input(x)
    return _fnorm._batch_norm(x, bn._mean, bn._variance, bn.weight, bn.bias, True,
                              bn._momentum, bn._epsilon, bn._format_for(x), None, name)


# ---------------------------------------------------------------- listing

def fused(model):
    """The fusion chains declared in ``model`` and its sublayers, as sublayer names.

    A paddle_hl extra (Paddle has no counterpart). A chain is listed when its block's forward
    is the one the declaration was written for and its members are of kinds that fuse; at
    run time each span still passes the guard (mode, hooks, AMP, dtype, layout, grad mode)
    and the switch (:func:`set_enabled`) before it runs fused.

    Args:
        model (nn.Layer): the network.

    Returns:
        list[tuple[str, ...]]: one tuple of structured names per chain, in sublayer order,
        e.g. ``('layer1.0.conv1', 'layer1.0.bn1', 'layer1.0.relu')``.

    Example:
        >>> m = paddle.vision.models.resnet18()
        >>> paddle.nn.utils.fused(m)[0]
        ('conv1', 'bn1', 'relu')
    """
    if not isinstance(model, Layer):
        raise TypeError(f"fused: model must be an nn.Layer, got {type(model).__name__}")
    found = []
    for prefix, layer in model.named_sublayers(include_self=True):
        if type(layer)._fusion is not BLOCK or not _trusted(layer):
            continue
        names = {id(v): k for k, v in layer._sub_layers.items()}
        for chain in _plan(layer):
            found.append(tuple(f"{prefix}.{names[id(m)]}" if prefix else names[id(m)]
                               for m in chain))
    return found


Layer._fusion_block = BLOCK
