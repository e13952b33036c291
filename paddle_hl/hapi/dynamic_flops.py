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


def count_conv(m, x, y):
    x = _first(x)
    kernel_ops = int(np.prod(m.weight.shape[2:]))
    bias_ops = 1 if m.bias is not None else 0
    in_per_group = x.shape[1] / m._groups
    return abs(int(_numel(y) * (in_per_group * kernel_ops + bias_ops)))


def count_linear(m, x, y):
    return m.weight.shape[0] * _numel(y)


def count_bn(m, x, y):
    return 2 * _numel(_first(x))


def count_zero(m, x, y):
    return 0


def count_elementwise(m, x, y):
    return _numel(_first(x))


def count_avgpool(m, x, y):
    return _numel(y)


def count_adaptive_avgpool(m, x, y):
    x = _first(x)
    kernel = np.array(x.shape[2:]) // np.array(y.shape[2:])
    return int((np.prod(kernel) + 1) * _numel(y))


def _rules():
    from .. import nn

    return {
        nn.Conv1D: count_conv, nn.Conv2D: count_conv, nn.Conv3D: count_conv,
        nn.Conv1DTranspose: count_conv, nn.Conv2DTranspose: count_conv,
        nn.Conv3DTranspose: count_conv,
        nn.BatchNorm2D: count_bn, nn.BatchNorm: count_bn,
        nn.ReLU: count_zero, nn.ReLU6: count_zero, nn.Dropout: count_zero,
        nn.LeakyReLU: count_elementwise,
        nn.Linear: count_linear,
        nn.AvgPool1D: count_avgpool, nn.AvgPool2D: count_avgpool, nn.AvgPool3D: count_avgpool,
        nn.AdaptiveAvgPool1D: count_adaptive_avgpool,
        nn.AdaptiveAvgPool2D: count_adaptive_avgpool,
        nn.AdaptiveAvgPool3D: count_adaptive_avgpool,
    }


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
            fn, is_custom = count_zero, False
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
