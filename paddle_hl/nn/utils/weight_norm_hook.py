"""weight_norm / remove_weight_norm: reparameterise a weight as ``g * v / ||v||``."""

from __future__ import annotations

import numbers

from ...framework import state
from ...tensor.manipulation import reshape
from ...tensor.math import maximum, sqrt
from ...tensor.stat import sum as _sum

__all__ = []

_EPS = 1e-12


def _norm_except_dim(v, dim):
    """The L2 norm of ``v`` over every axis but ``dim`` (all axes when dim is -1), keeping
    dims so that it broadcasts against ``v``."""
    if dim == -1:
        return sqrt(_sum(v * v))
    axes = [a for a in range(v.ndim) if a != dim]
    if not axes:
        return sqrt(v * v)
    return sqrt(_sum(v * v, axis=axes, keepdim=True))


def _compute(v, g, dim):
    if dim == -1:
        # the whole-tensor case adds eps to the norm, the per-slice case clamps it (Paddle)
        return v * (g / (_norm_except_dim(v, dim) + _EPS))
    n = maximum(_norm_except_dim(v, dim), _EPS)
    bshape = [1] * v.ndim
    bshape[dim] = v.shape[dim]
    return v / n * reshape(g, bshape)


class WeightNorm:
    """The forward pre-hook that recomputes ``layer.<name>`` from ``<name>_g`` and
    ``<name>_v``."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = dim

    def compute_weight(self, layer):
        g = getattr(layer, self.name + "_g")
        v = getattr(layer, self.name + "_v")
        return _compute(v, g, self.dim)

    def __call__(self, layer, inputs):
        setattr(layer, self.name, self.compute_weight(layer))

    @staticmethod
    def apply(layer, name, dim):
        for hook in layer._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"weight_norm: cannot register two weight_norm hooks on the "
                                   f"same parameter '{name}' of {type(layer).__name__}")
        w = layer._parameters.get(name)
        if w is None:
            raise ValueError(f"weight_norm: {type(layer).__name__} has no parameter '{name}'")
        ndim = w.ndim
        if dim is None:
            dim = -1
        if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or \
                not -ndim <= dim < ndim:
            raise ValueError(f"weight_norm: dim must be None or an int in [{-ndim}, {ndim}) for "
                             f"a weight of shape {w.shape}, got {dim!r}")
        if dim < -1:
            dim += ndim
        fn = WeightNorm(name, int(dim))
        from ..initializer import Assign

        with state.no_grad():
            g_val = _norm_except_dim(w, fn.dim)
            if fn.dim != -1:
                g_val = reshape(g_val, [w.shape[fn.dim]])
            v = layer.create_parameter(w.shape, dtype=w.dtype,
                                       default_initializer=Assign(w._data))
            g = layer.create_parameter(g_val.shape, dtype=w.dtype,
                                       default_initializer=Assign(g_val._data))
        del layer._parameters[name]
        layer.add_parameter(name + "_v", v)
        layer.add_parameter(name + "_g", g)
        setattr(layer, name, fn.compute_weight(layer))
        layer.register_forward_pre_hook(fn)
        return fn

    def remove(self, layer):
        with state.no_grad():
            value = self.compute_weight(layer)
        from ..initializer import Assign

        if self.name in layer._buffers:
            del layer._buffers[self.name]
            layer._non_persistable_buffer_names_set.discard(self.name)
        layer.__dict__.pop(self.name, None)
        del layer._parameters[self.name + "_g"]
        del layer._parameters[self.name + "_v"]
        w = layer.create_parameter(value.shape, dtype=value.dtype,
                                   default_initializer=Assign(value._data))
        layer.add_parameter(self.name, w)


def weight_norm(layer, name="weight", dim=0):
    """Reparameterise ``layer.<name>`` as ``g * v / ||v||`` (Salimans & Kingma, 2016).

    The parameter is replaced by ``<name>_g`` (the norms, one per slice along ``dim``, or a
    0-D tensor when ``dim`` is None) and ``<name>_v`` (the direction); a forward pre-hook
    recomputes ``<name>`` before every forward.

    Args:
        layer (Layer): the layer to change.
        name (str): the parameter's name (default 'weight').
        dim (int|None): the axis kept by the norm; None normalises the whole tensor.

    Returns:
        Layer: ``layer``.

    Example:
        >>> fc = paddle.nn.utils.weight_norm(paddle.nn.Linear(3, 4))
        >>> sorted(fc.state_dict())
        ['bias', 'weight_g', 'weight_v']
    """
    from ..layer.layers import Layer

    if not isinstance(layer, Layer):
        raise TypeError(f"weight_norm: layer must be a Layer, got {type(layer).__name__}")
    WeightNorm.apply(layer, name, dim)
    return layer


def remove_weight_norm(layer, name="weight"):
    """Undo :func:`weight_norm`: ``<name>`` becomes a plain parameter again (with the current
    value of ``g * v / ||v||``).

    Args:
        layer (Layer): the layer.
        name (str): the parameter's name (default 'weight').

    Returns:
        Layer: ``layer``.
    """
    for k, hook in list(layer._forward_pre_hooks.items()):
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(layer)
            del layer._forward_pre_hooks[k]
            return layer
    raise ValueError(f"remove_weight_norm: weight_norm of '{name}' not found in {layer}")

