"""``explain``: which algorithm each convolution and pooling layer of a model runs (a paddle_hl
extra; Paddle has no counterpart)."""

from __future__ import annotations

from ...backend import plans as _plans
from ...framework import state
from ...framework.tensor import Tensor
from ...notebook.tables import HTMLTable

__all__ = []

_COLUMNS = ("layer", "op", "input shape", "plan")


class Explanation(HTMLTable):
    """The table :func:`explain` returns: a row per op, ``rows`` as lists of (layer name, op
    name, input shape, plan label); ``repr`` is text, Jupyter shows HTML."""

    def __init__(self, rows, title):
        super().__init__(_COLUMNS, rows, title=title)

    def __len__(self):
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __getitem__(self, i):
        return self.rows[i]


def explain(model, *inputs, all_ops=False):
    """Run one forward pass of ``model`` under ``no_grad`` and list the algorithm each
    convolution and pooling op chose (``backend/plans.py``): im2col, the batch-innermost
    layout, pointwise, depthwise (and how), direct, compiled pooling, ...

    The plans depend on the batch and input sizes, on the compiled kernels being on
    (``paddle.device.set_numba``) and on whether a gradient is wanted: a training step may plan
    differently from this no-grad pass (the batch-innermost layout weighs its backward pass).
    The layers run one by one here (forward hooks turn declared conv + batch norm fusions off),
    so a folded convolution is listed as its convolution, whose geometry is the same.

    Args:
        model (nn.Layer): the network.
        *inputs: its forward's arguments.
        all_ops (bool): list every op, not only those that run a plan.

    Returns:
        Explanation: a table (a list of rows ``[layer, op, input shape, plan]``; text in a
        terminal, HTML in Jupyter).

    Example:
        >>> m = paddle.vision.models.LeNet()
        >>> paddle.nn.utils.explain(m, paddle.zeros([64, 1, 28, 28]))[2]
        ['features.3', 'conv', [64, 6, 14, 14], 'conv2d nin 5x5 s1']
    """
    from ..layer.layers import Layer  # noqa: PLC0415  (nn.layer imports nn.utils' siblings)

    if not isinstance(model, Layer):
        raise TypeError(f"explain: model must be an nn.Layer, got {type(model).__name__}")
    names = {id(layer): name for name, layer in model.named_sublayers(include_self=True)}
    stack = []
    rows = []

    def pre(layer, _inputs):
        stack.append(names.get(id(layer), type(layer).__name__) or type(layer).__name__)

    def post(layer, _inputs, _out):
        stack.pop()

    prev = state.tls.tracer

    def tracer(fn, arrays, attrs):
        out = prev(fn, arrays, attrs) if prev is not None else state.run_kernel(fn, arrays,
                                                                                attrs)
        labelled = fn in _plans.LABELLED
        label = _plans.take_label() if labelled else None
        if labelled or all_ops:
            shape = next((list(a.shape) for a in arrays if hasattr(a, "shape")), None)
            rows.append([stack[-1] if stack else type(model).__name__,
                         getattr(fn, "op_name", None) or fn.__name__.strip("_"), shape,
                         label or ""])
        return out

    handles = []
    for layer in model.sublayers(include_self=True):
        handles.append(layer.register_forward_pre_hook(pre))
        handles.append(layer.register_forward_post_hook(post))
    try:
        with state.no_grad(), state.op_tracer(tracer):
            model(*inputs)
    finally:
        for h in handles:
            h.remove()
    shapes = [list(t.shape) for t in inputs if isinstance(t, Tensor)]
    return Explanation(rows, f"{type(model).__name__} on {shapes}: the algorithm of each op")
