"""spectral_norm: divide a weight by its largest singular value, estimated by power iteration.
"""

from __future__ import annotations

import numbers

from ... import backend
from ...framework import place as _pl
from ...framework import random as _rnd
from ...framework import state
from ...framework.tensor import _wrap
from ...tensor.linalg import dot, mv
from ...tensor.manipulation import moveaxis, reshape

__all__ = []

# layers whose weight keeps its output channels in dim 1 (Linear is [in, out])
_DIM1_LAYERS = ("Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose", "Linear")


def _normalize(a, eps):
    xp = backend.get_array_module(a)
    n = xp.sqrt(xp.vdot(a, a).real)
    return a / xp.maximum(n, eps).astype(a.dtype)


class SpectralNorm:
    """The forward pre-hook that recomputes ``layer.<name>`` as ``<name>_orig / sigma``.

    In training mode each call first runs ``n_power_iterations`` steps of power iteration,
    updating the buffers ``<name>_u`` and ``<name>_v`` in place; in eval mode the stored
    vectors are used as they are.
    """

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name = name
        self.dim = dim
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        """``weight`` with ``dim`` moved to the front, as a ``[h, -1]`` matrix."""
        mat = moveaxis(weight, self.dim, 0) if self.dim != 0 else weight
        return reshape(mat, [mat.shape[0], -1])

    def compute_weight(self, layer, do_power_iteration):
        weight = getattr(layer, self.name + "_orig")
        u = getattr(layer, self.name + "_u")
        v = getattr(layer, self.name + "_v")
        mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration and self.n_power_iterations > 0:
            m = mat._data
            ua, va = u._data, v._data
            for _ in range(self.n_power_iterations):
                va[...] = _normalize(m.T @ ua, self.eps)
                ua[...] = _normalize(m @ va, self.eps)
            u._ver.v += 1
            v._ver.v += 1
        # constant copies: the next power iteration rewrites the buffers in place, which must
        # not invalidate a graph that still waits for backward
        uc = _wrap(u._data.copy())
        vc = _wrap(v._data.copy())
        sigma = dot(uc, mv(mat, vc))
        return weight / sigma

    def __call__(self, layer, inputs):
        setattr(layer, self.name, self.compute_weight(layer, do_power_iteration=layer.training))

    @staticmethod
    def apply(layer, name, n_power_iterations, dim, eps):
        for hook in layer._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"spectral_norm: cannot register two spectral_norm hooks on "
                                   f"the same parameter '{name}' of {type(layer).__name__}")
        weight = layer._parameters.get(name)
        if weight is None:
            raise ValueError(f"spectral_norm: {type(layer).__name__} has no parameter "
                             f"'{name}'")
        if weight.ndim < 1:
            raise ValueError(f"spectral_norm: the weight must have at least 1 dim, got shape "
                             f"{weight.shape}")
        if dim is None:
            names = {c.__name__ for c in type(layer).__mro__}
            dim = 1 if names & set(_DIM1_LAYERS) else 0
        if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or \
                not -weight.ndim <= dim < weight.ndim:
            raise ValueError(f"spectral_norm: dim must be an int in [{-weight.ndim}, "
                             f"{weight.ndim}) for a weight of shape {weight.shape}, got {dim!r}")
        fn = SpectralNorm(name, n_power_iterations, int(dim) % weight.ndim, eps)
        with state.no_grad():
            h = weight.shape[fn.dim]
            w = weight.size // h if h else 0
            place = _pl.place_of(weight._data)
            dt = weight._data.dtype
            u = _normalize(_rnd.normal_array((h,), dt, 0.0, 1.0, place), fn.eps)
            v = _normalize(_rnd.normal_array((w,), dt, 0.0, 1.0, place), fn.eps)
            del layer._parameters[name]
            layer.add_parameter(name + "_orig", weight)
            setattr(layer, name, weight * 1.0)
            layer.register_buffer(name + "_u", _wrap(u))
            layer.register_buffer(name + "_v", _wrap(v))
        layer.register_forward_pre_hook(fn)
        return fn


def spectral_norm(layer, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Normalise ``layer.<name>`` by its spectral norm (Miyato et al., 2018).

    The parameter is renamed ``<name>_orig``; buffers ``<name>_u`` and ``<name>_v`` hold the
    power-iteration vectors, and a forward pre-hook sets ``<name> = <name>_orig / sigma`` with
    ``sigma = u^T W v`` before every forward (W: the weight with ``dim`` moved to the front,
    flattened to a matrix).

    Args:
        layer (Layer): the layer to change.
        name (str): the parameter's name (default 'weight').
        n_power_iterations (int): power-iteration steps per training forward (default 1).
        eps (float): added stability in the normalisations.
        dim (int, optional): the output-channel axis; by default 1 for Linear and transposed
            convs, else 0.

    Returns:
        Layer: ``layer``.

    Example:
        >>> fc = paddle.nn.utils.spectral_norm(paddle.nn.Linear(3, 4))
        >>> sorted(fc.state_dict())
        ['bias', 'weight_orig', 'weight_u', 'weight_v']
    """
    from ..layer.layers import Layer

    if not isinstance(layer, Layer):
        raise TypeError(f"spectral_norm: layer must be a Layer, got {type(layer).__name__}")
    if isinstance(n_power_iterations, bool) or not isinstance(n_power_iterations,
                                                              numbers.Integral) \
            or n_power_iterations < 0:
        raise ValueError(f"spectral_norm: n_power_iterations must be a non-negative int, got "
                         f"{n_power_iterations!r}")
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or eps < 0:
        raise ValueError(f"spectral_norm: eps must be a non-negative float, got {eps!r}")
    SpectralNorm.apply(layer, name, int(n_power_iterations), dim, float(eps))
    return layer
