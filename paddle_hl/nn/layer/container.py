"""Containers: Sequential, LayerList, LayerDict, ParameterList."""

from __future__ import annotations

import collections
from collections.abc import Iterable, Mapping

from ...framework.parameter import Parameter
from .._fusion import SEQUENTIAL_PAIRS
from .layers import Layer

__all__ = []


class Sequential(Layer):
    """Run sublayers in order. Build from layers, ``(name, layer)`` pairs or an OrderedDict.

    Supports ``len``, iteration, indexing (negative too) and slicing.

    paddle_hl runs each convolution directly followed by a batch norm as one convolution in
    inference (declared fusion chains, see ``paddle_hl.nn.utils.fused``); the layers and
    their outputs are Paddle's.
    """

    # each convolution directly followed by a batch norm is a fusion chain (nn/_fusion.py)
    _fusions = SEQUENTIAL_PAIRS

    def __init__(self, *layers):
        super().__init__()
        if len(layers) == 1 and isinstance(layers[0], collections.OrderedDict):
            items = list(layers[0].items())
        elif layers and all(isinstance(x, (list, tuple)) and len(x) == 2 for x in layers):
            items = [(str(n), layer) for n, layer in layers]
        else:
            items = [(str(i), layer) for i, layer in enumerate(layers)]
        for name, layer in items:
            if not isinstance(layer, Layer):
                raise TypeError(f"Sequential: expected Layers, got {type(layer).__name__}")
            self.add_sublayer(name, layer)

    def _key(self, idx):
        keys = list(self._sub_layers)
        n = len(keys)
        if not -n <= idx < n:
            raise IndexError(f"Sequential: index {idx} out of range for {n} layers")
        return keys[idx % n]

    def __getitem__(self, name):
        if isinstance(name, slice):
            return Sequential(*list(self._sub_layers.values())[name])
        if isinstance(name, str):
            return self._sub_layers[name]
        return self._sub_layers[self._key(name)]

    def __setitem__(self, name, layer):
        if not isinstance(layer, Layer):
            raise TypeError(f"Sequential: expected a Layer, got {type(layer).__name__}")
        key = name if isinstance(name, str) else self._key(name)
        self._sub_layers[key] = layer

    def __delitem__(self, name):
        if isinstance(name, slice):
            for k in list(self._sub_layers)[name]:
                del self._sub_layers[k]
            return
        key = name if isinstance(name, str) else self._key(name)
        del self._sub_layers[key]

    def __len__(self):
        return len(self._sub_layers)

    def __iter__(self):
        return iter(self._sub_layers.values())

    def forward(self, input):  # noqa: A002  (Paddle's argument name)
        for layer in self._sub_layers.values():
            input = layer(input)
        return input


class LayerList(Layer):
    """A list of sublayers (registered, so their parameters are found)."""

    def __init__(self, sublayers=None):
        super().__init__()
        if sublayers is not None:
            for i, layer in enumerate(sublayers):
                self.add_sublayer(str(i), layer)

    def _abs(self, idx):
        n = len(self)
        if not -n <= idx < n:
            raise IndexError(f"LayerList: index {idx} out of range for {n} layers")
        return idx % n

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._sub_layers.values())[idx])
        return self._sub_layers[str(self._abs(idx))]

    def __setitem__(self, idx, sublayer):
        self._sub_layers[str(self._abs(idx))] = sublayer

    def __delitem__(self, idx):
        layers = list(self._sub_layers.values())
        if isinstance(idx, slice):
            del layers[idx]
        else:
            del layers[self._abs(idx)]
        self._sub_layers.clear()
        for i, layer in enumerate(layers):
            self._sub_layers[str(i)] = layer

    def __len__(self):
        return len(self._sub_layers)

    def __iter__(self):
        return iter(self._sub_layers.values())

    def append(self, sublayer):
        """Add a layer at the end; returns self."""
        self.add_sublayer(str(len(self)), sublayer)
        return self

    def insert(self, index, sublayer):
        """Insert a layer before ``index``."""
        layers = list(self._sub_layers.values())
        n = len(layers)
        if not -n <= index <= n:
            raise IndexError(f"LayerList.insert: index {index} out of range for {n} layers")
        layers.insert(index if index >= 0 else index + n, sublayer)
        self._sub_layers.clear()
        for i, layer in enumerate(layers):
            self._sub_layers[str(i)] = layer

    def extend(self, sublayers):
        """Append every layer of ``sublayers``; returns self."""
        for layer in sublayers:
            self.append(layer)
        return self


class LayerDict(Layer):
    """An ordered dict of sublayers (insertion order kept)."""

    def __init__(self, sublayers=None):
        super().__init__()
        if sublayers is not None:
            self.update(sublayers)

    def __getitem__(self, key):
        return self._sub_layers[key]

    def __setitem__(self, key, sublayer):
        self.add_sublayer(key, sublayer)

    def __delitem__(self, key):
        del self._sub_layers[key]

    def __len__(self):
        return len(self._sub_layers)

    def __iter__(self):
        return iter(self._sub_layers)

    def __contains__(self, key):
        return key in self._sub_layers

    def clear(self):
        self._sub_layers.clear()

    def pop(self, key):
        """Remove ``key`` and return its layer."""
        return self._sub_layers.pop(key)

    def keys(self):
        return self._sub_layers.keys()

    def items(self):
        return self._sub_layers.items()

    def values(self):
        return self._sub_layers.values()

    def update(self, sublayers):
        """Add layers from a mapping or an iterable of (key, layer) pairs."""
        if isinstance(sublayers, (Mapping, LayerDict)):
            items = sublayers.items()
        elif isinstance(sublayers, Iterable):
            items = []
            for i, kv in enumerate(sublayers):
                if not isinstance(kv, (list, tuple)) or len(kv) != 2:
                    raise ValueError(f"LayerDict.update: element {i} must be a (key, layer) "
                                     f"pair, got {kv!r}")
                items.append(kv)
        else:
            raise TypeError(f"LayerDict.update: expected a mapping or an iterable of pairs, got "
                            f"{type(sublayers).__name__}")
        for k, v in items:
            self.add_sublayer(k, v)


class ParameterList(Layer):
    """A list of Parameters registered with the layer."""

    def __init__(self, parameters=None):
        super().__init__()
        if parameters is not None:
            for i, p in enumerate(parameters):
                self.add_parameter(str(i), p)

    def __getitem__(self, idx):
        n = len(self)
        if not -n <= idx < n:
            raise IndexError(f"ParameterList: index {idx} out of range for {n} parameters")
        return self._parameters[str(idx % n)]

    def __setitem__(self, idx, param):
        if not isinstance(param, Parameter):
            raise TypeError(f"ParameterList: expected a Parameter, got {type(param).__name__}")
        self._parameters[str(idx % len(self))] = param

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def append(self, parameter):
        """Add a parameter at the end; returns self."""
        self.add_parameter(str(len(self)), parameter)
        return self
