"""Recompute (activation checkpointing): a block's forward runs without keeping its
activations; backward runs the block's forward again, with the random state and mixed-precision
setting it had the first time, and backpropagates through that.

Memory: only the block's inputs (and outputs) are kept between forward and backward, instead of
every intermediate result; the price is a second forward of the block in backward.
"""

from __future__ import annotations

import warnings

import numpy as np

from ....amp import _hook as _amp_hook
from ....autograd.py_layer import PyLayer
from ....framework import engine, state
from ....framework import random as _random
from ....framework.tensor import Tensor

__all__ = []


def _rng_state(on_gpu):
    """The CPU random state, and the GPUs' when the block's inputs live on a GPU."""
    return _random.get_rng_state("cpu"), (_random.get_cuda_rng_state() if on_gpu else None)


def _set_rng_state(saved):
    cpu, gpu = saved
    _random.set_rng_state(cpu, "cpu")
    if gpu is not None:
        _random.set_cuda_rng_state(gpu)


class _RecomputeFunction(PyLayer):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, kwargs, anchored, *args):
        # ``anchored``: the last argument is a tensor that needs a gradient, added only so that
        # the block is recorded (use_reentrant=False with no input needing a gradient)
        ctx.anchored = anchored
        if anchored:
            args = args[:-1]
        ctx.run_function = run_function
        ctx.kwargs = kwargs
        ctx.preserve = preserve_rng_state
        ctx.amp_cfg = _amp_hook._tls.cfg
        # keep the inputs only: non-tensor arguments as they are, tensors for backward
        ctx.layout = [isinstance(a, Tensor) for a in args]
        ctx.others = [None if t else a for a, t in zip(args, ctx.layout)]
        tensors = [a for a in args if isinstance(a, Tensor)]
        ctx.on_gpu = any(not isinstance(t._data, np.ndarray) for t in tensors)
        if preserve_rng_state:
            ctx.rng = _rng_state(ctx.on_gpu)
        ctx.needs = [not a.stop_gradient for a in tensors]
        ctx.save_for_backward(*tensors)
        with state.no_grad():
            return run_function(*args, **kwargs)

    @staticmethod
    def backward(ctx, *grads):
        saved = ctx.saved_tensor() or ()
        inputs, it = [], iter(saved)
        detached = []
        for is_t, other in zip(ctx.layout, ctx.others):
            if is_t:
                t = next(it)
                d = t.detach()
                d.stop_gradient = t.stop_gradient
                detached.append(d)
                inputs.append(d)
            else:
                inputs.append(other)
        here = _rng_state(ctx.on_gpu) if ctx.preserve else None
        prev_cfg = _amp_hook._tls.cfg
        try:
            if ctx.preserve:
                _set_rng_state(ctx.rng)
            _amp_hook._tls.cfg = ctx.amp_cfg
            with state.enable_grad():
                outputs = ctx.run_function(*inputs, **ctx.kwargs)
        finally:
            _amp_hook._tls.cfg = prev_cfg
            if here is not None:
                _set_rng_state(here)
        outs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
        pairs = [(o, g) for o, g in zip(outs, grads)
                 if isinstance(o, Tensor) and not o.stop_gradient and g is not None]
        if pairs:
            engine.backward([o for o, _ in pairs], [g for _, g in pairs])
        result = tuple(d.grad if need else None for d, need in zip(detached, ctx.needs))
        if ctx.anchored:
            result += (None,)
        return result if len(result) != 1 else result[0]


def recompute(function, *args, **kwargs):
    """Run ``function(*args, **kwargs)`` without keeping its activations for backward; backward
    runs it again (recomputes) and backpropagates through the second run.

    The gradients are the same as without recompute, also with dropout inside the block: the
    random state (CPU and GPU) and the ``auto_cast`` setting of the first run are restored for
    the second.

    Args:
        function (callable): the block (a Layer or a function of tensors).
        *args: its positional arguments; gradients flow to the Tensor ones.
        preserve_rng_state (bool, keyword): restore the random state for the second run
            (default True).
        use_reentrant (bool, keyword): default True. With False, the block's parameters get
            gradients even when none of its inputs needs one (as Paddle's non-reentrant
            recompute); with True they do not (see the note). Either way the block's backward
            runs as a nested backward pass over the recomputed forward.
        **kwargs: the block's keyword arguments (not differentiated).

    Returns:
        What ``function`` returns.

    Note:
        As in Paddle, with ``use_reentrant=True`` the parameters of the block get gradients only
        when one of its Tensor inputs needs a gradient; otherwise a warning is given.

    Example:
        >>> block = paddle.nn.Sequential(paddle.nn.Linear(8, 8), paddle.nn.ReLU())
        >>> x = paddle.rand([4, 8])
        >>> x.stop_gradient = False
        >>> y = recompute(block, x)
        >>> y.sum().backward()
    """
    preserve = kwargs.pop("preserve_rng_state", True)
    reentrant = kwargs.pop("use_reentrant", True)
    if not callable(function):
        raise TypeError(f"recompute: function must be callable, got {type(function).__name__}")
    anchored = False
    if state.tls.grad_enabled and not any(isinstance(a, Tensor) and not a.stop_gradient
                                          for a in args):
        if reentrant:
            warnings.warn("[Recompute]: None of the inputs to current recompute block need "
                          "grad, therefore there is NO need to recompute this block in "
                          "backward!", stacklevel=2)
        else:
            anchored = True
            args = (*args, Tensor(np.zeros((), np.float32), stop_gradient=False))
    return _RecomputeFunction.apply(function, bool(preserve), kwargs, anchored, *args)


def recompute_sequential(ctx, functions, *args, **kwargs):
    """Recompute a ``Sequential`` in segments: ``ctx["segments"]`` pieces (default 1), each
    kept as inputs only; ``ctx["preserve_rng_state"]`` as in :func:`recompute`.

    Args:
        ctx (dict): ``segments`` and ``preserve_rng_state``.
        functions (Sequential|list): the layers, run in order.
        *args: the first layer's inputs.

    Returns:
        The last layer's output.
    """
    segments = int(ctx.get("segments", 1))
    preserve = ctx.get("preserve_rng_state", True)
    layers = list(functions.children()) if hasattr(functions, "children") else list(functions)
    if segments < 1:
        raise ValueError(f"recompute_sequential: segments must be >= 1, got {segments}")
    size = max(1, (len(layers) + segments - 1) // segments)

    def run(begin, end):
        def seg(*inputs):
            for layer in layers[begin:end]:
                inputs = layer(*inputs) if isinstance(inputs, tuple) else layer(inputs)
            return inputs
        return seg

    out = args if len(args) != 1 else args[0]
    for begin in range(0, len(layers), size):
        end = min(begin + size, len(layers))
        ins = out if isinstance(out, tuple) else (out,)
        out = recompute(run(begin, end), *ins, preserve_rng_state=preserve, **kwargs)
    return out
