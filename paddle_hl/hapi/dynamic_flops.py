"""paddle.flops: count the floating-point operations of one forward pass, per Paddle's rules."""

from __future__ import annotations

import numpy as np

from ..framework import state
from ..framework.tensor import Tensor
from ..tensor.creation import to_tensor

__all__ = []


def _numel(t):
    return int(np.prod(t.shape)) if isinstance(t, Tensor) else 0


def _first(x):
    return x[0] if isinstance(x, (list, tuple)) else x


def _count_conv(m, x, y):
    x = _first(x)
    kernel_ops = int(np.prod(m.weight.shape[2:]))
    bias_ops = 1 if m.bias is not None else 0
    in_per_group = x.shape[1] / m._groups
    return abs(int(_numel(y) * (in_per_group * kernel_ops + bias_ops)))


def _count_linear(m, x, y):
    return m.weight.shape[0] * _numel(y)


def _count_bn(m, x, y):
    return 2 * _numel(_first(x))


def _count_zero(m, x, y):
    return 0


def _count_elementwise(m, x, y):
    return _numel(_first(x))


def _count_avgpool(m, x, y):
    return _numel(y)


def _count_adaptive_avgpool(m, x, y):
    x = _first(x)
    kernel = np.array(x.shape[2:]) // np.array(y.shape[2:])
    return int((np.prod(kernel) + 1) * _numel(y))


def _add_ops(m, n):
    """Add ``n`` to the layer's ``total_ops`` counter (created when missing), as Paddle's hooks
    do."""
    total = getattr(m, "total_ops", None)
    if isinstance(total, Tensor):
        total._data[...] = total._data + int(n)
    else:
        m.total_ops = to_tensor([int(n) + int(total or 0)], dtype="int64")


# Paddle's per-layer counting hooks: ``fn(layer, inputs, output)`` adds the layer's FLOPs to
# ``layer.total_ops`` and returns None (so it can be a forward post hook).


def count_convNd(m, x, y):  # noqa: N802  (Paddle's name)
    """Add a convolution's FLOPs to ``m.total_ops``."""
    _add_ops(m, _count_conv(m, x, y))


def count_linear(m, x, y):
    """Add a linear layer's FLOPs to ``m.total_ops``."""
    _add_ops(m, _count_linear(m, x, y))


def count_bn(m, x, y):
    """Add a batch norm's FLOPs (2 per input element) to ``m.total_ops``."""
    _add_ops(m, _count_bn(m, x, y))


def count_leaky_relu(m, x, y):
    """Add a LeakyReLU's FLOPs (1 per input element) to ``m.total_ops``."""
    _add_ops(m, _count_elementwise(m, x, y))


def count_zero_ops(m, x, y):
    """A layer counted as free: ``m.total_ops`` gains 0."""
    _add_ops(m, 0)


def count_avgpool(m, x, y):
    """Add an average pool's FLOPs (1 per output element) to ``m.total_ops``."""
    _add_ops(m, _count_avgpool(m, x, y))


def count_adap_avgpool(m, x, y):
    """Add an adaptive average pool's FLOPs to ``m.total_ops``."""
    _add_ops(m, _count_adaptive_avgpool(m, x, y))


def count_parameters(m, x, y):
    """Set ``m.total_params`` to the number of elements of the layer's own parameters."""
    n = sum(int(np.prod(p.shape)) for p in m.parameters(include_sublayers=False))
    total = getattr(m, "total_params", None)
    if isinstance(total, Tensor):
        total._data[...] = n
    else:
        m.total_params = to_tensor([n], dtype="int64")


def count_io_info(m, x, y):
    """Record the layer's input and output shapes as int64 buffers ``input_shape`` and
    ``output_shape``."""
    m.register_buffer("input_shape", to_tensor(list(_first(x).shape), dtype="int64"))
    m.register_buffer("output_shape", to_tensor(list(_first(y).shape), dtype="int64"))


def __getattr__(name):
    # Paddle's table of layer type -> counting hook, built on first use (it names nn classes,
    # which load after this module)
    if name == "register_hooks":
        table = {t: _PUBLIC_HOOKS[fn] for t, fn in _rules().items()}
        globals()[name] = table
        return table
    raise AttributeError(f"module 'paddle_hl.hapi.dynamic_flops' has no attribute '{name}'")


def _rules():
    from .. import nn

    return {
        nn.Conv1D: _count_conv, nn.Conv2D: _count_conv, nn.Conv3D: _count_conv,
        nn.Conv1DTranspose: _count_conv, nn.Conv2DTranspose: _count_conv,
        nn.Conv3DTranspose: _count_conv,
        nn.BatchNorm2D: _count_bn, nn.BatchNorm: _count_bn,
        nn.ReLU: _count_zero, nn.ReLU6: _count_zero, nn.Dropout: _count_zero,
        nn.LeakyReLU: _count_elementwise,
        nn.Linear: _count_linear,
        nn.AvgPool1D: _count_avgpool, nn.AvgPool2D: _count_avgpool, nn.AvgPool3D: _count_avgpool,
        nn.AdaptiveAvgPool1D: _count_adaptive_avgpool,
        nn.AdaptiveAvgPool2D: _count_adaptive_avgpool,
        nn.AdaptiveAvgPool3D: _count_adaptive_avgpool,
    }


_PUBLIC_HOOKS = {_count_conv: count_convNd, _count_linear: count_linear, _count_bn: count_bn,
                 _count_zero: count_zero_ops, _count_elementwise: count_leaky_relu,
                 _count_avgpool: count_avgpool, _count_adaptive_avgpool: count_adap_avgpool}


def _table(rows):
    headers = ["Layer Name", "Input Shape", "Output Shape", "Params", "Flops"]
    cells = [[str(c) for c in r] for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) + 2 for i, h in enumerate(headers)]
    border = "+" + "+".join("-" * w for w in widths) + "+"
    out = [border, "|" + "|".join(h.center(w) for h, w in zip(headers, widths)) + "|", border]
    for r in cells:
        out.append("|" + "|".join(c.center(w) for c, w in zip(r, widths)) + "|")
    out.append(border)
    return "\n".join(out)


def flops(net, input_size, custom_ops=None, print_detail=False):
    """FLOPs of one forward pass of ``net`` on a random input of ``input_size``.

    Convolutions, linear layers, batch norms, pooling and a few activations are counted with
    Paddle's rules; ``custom_ops`` maps other layer types to ``fn(layer, inputs, output)``
    returning (or adding to ``layer.total_ops``) their count. Layers without a rule count 0.

    Returns:
        int: the total FLOPs.
    """
    from ..nn.layer.layers import Layer

    if not isinstance(net, Layer):
        raise TypeError(f"flops: net must be a paddle.nn.Layer, got {type(net).__name__}")
    rules = _rules()
    custom = dict(custom_ops or {})
    records = []
    hooks = []
    seen_types = set()

    def make_hook(fn, is_custom):
        def hook(layer, inp, out):
            if is_custom:
                layer.total_ops = 0
                res = fn(layer, inp, out)
                ops = int(res) if res is not None else int(layer.total_ops)
            else:
                ops = int(fn(layer, inp, out))
            params = sum(int(np.prod(t.shape)) for t in
                         layer.state_dict(include_sublayers=False).values())
            records.append((layer.full_name(), [list(i.shape) for i in inp
                                                 if isinstance(i, Tensor)],
                            list(out.shape) if isinstance(out, Tensor) else
                            [list(o.shape) for o in out if isinstance(o, Tensor)],
                            params, ops))
        return hook

    for layer in net.sublayers(include_self=True):
        if list(layer.children()):
            continue
        t = type(layer)
        if t in custom:
            fn, is_custom = custom[t], True
            if t not in seen_types:
                print(f"Customize Function has been applied to {t}")
        elif t in rules:
            fn, is_custom = rules[t], False
            if t not in seen_types:
                print(f"{t}'s flops has been counted")
        else:
            fn, is_custom = _count_zero, False
            if t not in seen_types:
                print(f"Cannot find suitable count function for {t}. Treat it as zero FLOPs.")
        seen_types.add(t)
        hooks.append(layer.register_forward_post_hook(make_hook(fn, is_custom)))
    shape = [1 if d is None or d == -1 else int(d) for d in input_size]
    # on the current device, as Paddle's input
    x = to_tensor(np.random.default_rng(0).standard_normal(shape).astype(np.float32))
    modes = [(layer, layer.training) for layer in net.sublayers(include_self=True)]
    try:
        with state.no_grad():
            net(x)
    finally:
        for h in hooks:
            h.remove()
        for layer, training in modes:
            layer.training = training
    total_ops = sum(r[4] for r in records)
    total_params = sum(r[3] for r in records)
    if print_detail:
        print(_table(records))
    print(f"Total Flops: {total_ops}     Total Params: {total_params}")
    return total_ops
