"""Layer: the base class of every network building block (``paddle.nn.Layer``).

Parameters, buffers and sublayers register themselves through attribute assignment; state_dict
keys are Paddle's structured names (``fc.weight``, ``bn._mean``), so Paddle checkpoints load
unchanged.
"""

from __future__ import annotations

import collections
import itertools
import re
import warnings

import numpy as np

from ...framework import dtype as _dt
from ...framework import place as _pl
from ...framework.parameter import Parameter, unique_name
from ...framework.tensor import Tensor, _wrap

__all__ = []


def _snake(name: str) -> str:
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", s).lower()  # Conv2D -> conv2d, as Paddle


class HookRemoveHelper:
    """Handle returned by hook registration; ``remove()`` unregisters the hook."""

    _ids = itertools.count()

    def __init__(self, hooks: dict):
        self._hooks = hooks
        self._id = next(self._ids)

    def remove(self):
        self._hooks.pop(self._id, None)


class Layer:
    """Base class for layers. Subclasses build sublayers/parameters in ``__init__`` and compute
    in ``forward``.

    Args:
        name_scope (str, optional): prefix of the layer's full name (default: the class name in
            snake_case).
        dtype (str): the dtype of parameters the layer creates.

    Example:
        >>> class MLP(paddle.nn.Layer):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc = paddle.nn.Linear(4, 2)
        ...     def forward(self, x):
        ...         return self.fc(x)
    """

    # Declared fusion chains (see nn/_fusion.py): ``_fusions`` names the chains a block's
    # forward runs; ``_fusion`` is the role ``__call__`` defers to (the block role on a
    # declaring class, a member role on a chain member), None for every other layer.
    # nn/_fusion.py puts its block role in ``_fusion_block`` when it loads (nn/__init__
    # loads it before any declaring class exists); this module does not import it.
    _fusions = ()
    _fusion = None
    _fusion_block = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("_fusions"):
            cls._fusion = Layer._fusion_block

    def __init__(self, name_scope=None, dtype="float32"):
        object.__setattr__(self, "_parameters", collections.OrderedDict())
        object.__setattr__(self, "_sub_layers", collections.OrderedDict())
        object.__setattr__(self, "_buffers", collections.OrderedDict())
        self.training = True
        self._non_persistable_buffer_names_set = set()
        self._forward_pre_hooks = collections.OrderedDict()
        self._forward_post_hooks = collections.OrderedDict()
        self._state_dict_hooks = collections.OrderedDict()
        self._full_name = unique_name(name_scope or _snake(type(self).__name__))
        self._helper_name = self._full_name
        self._dtype = dtype
        self._init_in_dynamic_mode = True

    # ------------------------------------------------------------------ attributes
    def __getattr__(self, name):
        d = self.__dict__
        for table in ("_parameters", "_sub_layers", "_buffers"):
            t = d.get(table)
            if t is not None and name in t:
                return t[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise ValueError("super().__init__() must be called before assigning "
                                 "parameters to a Layer")
            self._forget_name(name)
            params[name] = value
        elif isinstance(value, Layer):
            if params is None:
                raise ValueError("super().__init__() must be called before assigning "
                                 "sublayers to a Layer")
            self._forget_name(name)
            d["_sub_layers"][name] = value
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"{type(self).__name__}: assigning a {type(value).__name__} "
                                f"to parameter '{name}'; assign a Parameter or None")
            params[name] = None
        elif params is not None and name in d["_sub_layers"]:
            if value is not None:
                raise TypeError(f"{type(self).__name__}: assigning a {type(value).__name__} "
                                f"to sublayer '{name}'; assign a Layer or None")
            d["_sub_layers"][name] = None
        elif params is not None and name in d["_buffers"]:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"{type(self).__name__}: assigning a {type(value).__name__} "
                                f"to buffer '{name}'; assign a Tensor or None")
            d["_buffers"][name] = value
        elif params is not None and isinstance(value, Tensor):
            # as in Paddle: a Tensor attribute becomes a non-persistable buffer (moved by
            # ``to``, listed by ``buffers``, left out of ``state_dict``)
            d.pop(name, None)
            d["_buffers"][name] = value
            self._non_persistable_buffer_names_set.add(name)
        else:
            object.__setattr__(self, name, value)

    def _forget_name(self, name):
        d = self.__dict__
        d.pop(name, None)
        for table in ("_parameters", "_sub_layers", "_buffers"):
            d[table].pop(name, None)
        self._non_persistable_buffer_names_set.discard(name)

    def __delattr__(self, name):
        d = self.__dict__
        for table in ("_parameters", "_sub_layers", "_buffers"):
            if name in d[table]:
                del d[table][name]
                self._non_persistable_buffer_names_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._sub_layers)
                      | set(self._buffers))

    # ------------------------------------------------------------------ calling
    def forward(self, *inputs, **kwargs):
        """The computation; every subclass overrides it."""
        raise NotImplementedError(f"{type(self).__name__}.forward is not implemented")

    def backward(self, *inputs):
        raise ValueError("Layer shouldn't implement backward: gradients come from autograd")

    def __call__(self, *inputs, **kwargs):
        if self._fusion is not None:  # a declared fusion chain's block or member
            return self._fusion.call(self, inputs, kwargs)
        # the body of _dygraph_call_func, inline: this is every layer call's overhead
        if self._forward_pre_hooks:
            inputs = self._run_pre_hooks(inputs)
        out = self.forward(*inputs, **kwargs)
        if self._forward_post_hooks:
            out = self._run_post_hooks(inputs, out)
        return out

    def _dygraph_call_func(self, *inputs, **kwargs):
        """What a call does: the forward pre-hooks, ``forward``, the post-hooks (Paddle's
        name for this step)."""
        if self._forward_pre_hooks:
            inputs = self._run_pre_hooks(inputs)
        out = self.forward(*inputs, **kwargs)
        if self._forward_post_hooks:
            out = self._run_post_hooks(inputs, out)
        return out

    def _run_pre_hooks(self, inputs):
        for hook in list(self._forward_pre_hooks.values()):
            res = hook(self, inputs)
            if res is not None:
                inputs = res if isinstance(res, tuple) else (res,)
        return inputs

    def _run_post_hooks(self, inputs, out):
        for hook in list(self._forward_post_hooks.values()):
            res = hook(self, inputs, out)
            if res is not None:
                out = res
        return out

    def register_forward_pre_hook(self, hook):
        """``hook(layer, inputs)`` runs before forward and may return replacement inputs."""
        h = HookRemoveHelper(self._forward_pre_hooks)
        self._forward_pre_hooks[h._id] = hook
        return h

    def register_forward_post_hook(self, hook):
        """``hook(layer, inputs, output)`` runs after forward and may return a new output."""
        h = HookRemoveHelper(self._forward_post_hooks)
        self._forward_post_hooks[h._id] = hook
        return h

    def register_state_dict_hook(self, hook):
        """``hook(state_dict)`` runs on the result of ``state_dict()``."""
        h = HookRemoveHelper(self._state_dict_hooks)
        self._state_dict_hooks[h._id] = hook
        return h

    # ------------------------------------------------------------------ building
    def create_parameter(self, shape, attr=None, dtype=None, is_bias=False,
                         default_initializer=None):
        """Create a Parameter of ``shape`` initialised as ``attr`` / ``default_initializer``
        say (Xavier-uniform for weights and zeros for biases by default).

        Returns None when ``attr`` is False (e.g. ``bias_attr=False``).
        """
        from ..param_attr import ParamAttr

        attr = ParamAttr._to_attr(attr)
        if attr is None:
            return None
        dtype = dtype or self._dtype
        suffix = "b" if is_bias else "w"
        name = attr.name or unique_name(f"{self._full_name}.{suffix}")
        return _make_parameter(shape, dtype, name, attr, is_bias, default_initializer,
                               f"{type(self).__name__}.create_parameter")

    def create_variable(self, name=None, persistable=None, dtype=None):
        """A new empty Tensor owned by the layer (Paddle's temporary variable)."""
        t = _wrap(np.zeros([0], dtype=_dt.to_np(dtype or self._dtype)))
        t.name = name or unique_name(f"{self._full_name}.tmp")
        t.persistable = bool(persistable)
        return t

    create_tensor = create_variable

    def add_sublayer(self, name, sublayer):
        """Register ``sublayer`` under ``name``; returns it."""
        if not isinstance(sublayer, Layer) and sublayer is not None:
            raise TypeError(f"add_sublayer: expected a Layer, got {type(sublayer).__name__}")
        # Paddle takes any name here (EfficientNet registers '_blocks.0.'); the layer is then
        # reached through named_sublayers/getattr and its state_dict keys carry the name as is
        if not isinstance(name, str):
            raise TypeError(f"add_sublayer: the name must be a str, got {type(name).__name__}")
        self._sub_layers[name] = sublayer
        return sublayer

    def add_parameter(self, name, parameter):
        """Register ``parameter`` under ``name``; returns it."""
        if "_parameters" not in self.__dict__:
            raise RuntimeError("super().__init__() must be called before add_parameter")
        if not isinstance(name, str) or "." in name or not name:
            raise KeyError(f"add_parameter: invalid parameter name {name!r}")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"add_parameter: attribute '{name}' already exists")
        if parameter is not None and not isinstance(parameter, Parameter):
            raise TypeError(f"add_parameter: expected a Parameter, got "
                            f"{type(parameter).__name__}")
        self._parameters[name] = parameter
        return parameter

    def register_buffer(self, name, tensor, persistable=True):
        """Register a Tensor that is state but not a parameter (e.g. BatchNorm's running mean).

        Non-persistable buffers are left out of ``state_dict``.
        """
        if not isinstance(name, str) or "." in name or not name:
            raise KeyError(f"register_buffer: invalid buffer name {name!r}")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"register_buffer: buffer '{name}' must be a Tensor, got "
                            f"{type(tensor).__name__}")
        if name in self._parameters or name in self._sub_layers:
            raise KeyError(f"register_buffer: '{name}' is already a parameter or sublayer")
        self.__dict__.pop(name, None)
        self._buffers[name] = tensor
        if persistable:
            self._non_persistable_buffer_names_set.discard(name)
        else:
            self._non_persistable_buffer_names_set.add(name)
        return tensor

    # ------------------------------------------------------------------ traversal
    def full_name(self) -> str:
        return self._full_name

    def named_parameters(self, prefix="", include_sublayers=True):
        """(structured name, Parameter) pairs, each parameter once."""
        seen = set()
        layers = self.named_sublayers(prefix=prefix, include_self=True) if include_sublayers \
            else [(prefix, self)]
        for lp, layer in layers:
            for name, p in layer._parameters.items():
                if p is None or id(p) in seen:
                    continue
                seen.add(id(p))
                yield (f"{lp}.{name}" if lp else name), p

    def parameters(self, include_sublayers=True):
        """Every Parameter of the layer (and its sublayers), each once."""
        return [p for _, p in self.named_parameters(include_sublayers=include_sublayers)]

    def named_sublayers(self, prefix="", include_self=False, layers_set=None):
        """(structured name, Layer) pairs of all descendants, depth first."""
        if layers_set is None:
            layers_set = set()
        if include_self and id(self) not in layers_set:
            layers_set.add(id(self))
            yield prefix, self
        for name, layer in self._sub_layers.items():
            if layer is None or id(layer) in layers_set:
                continue
            p = f"{prefix}.{name}" if prefix else name
            yield from layer.named_sublayers(prefix=p, include_self=True, layers_set=layers_set)

    def sublayers(self, include_self=False):
        return [layer for _, layer in self.named_sublayers(include_self=include_self)]

    def named_children(self):
        seen = set()
        for name, layer in self._sub_layers.items():
            if layer is not None and id(layer) not in seen:
                seen.add(id(layer))
                yield name, layer

    def children(self):
        for _, layer in self.named_children():
            yield layer

    def named_buffers(self, prefix="", include_sublayers=True):
        seen = set()
        layers = self.named_sublayers(prefix=prefix, include_self=True) if include_sublayers \
            else [(prefix, self)]
        for lp, layer in layers:
            for name, b in layer._buffers.items():
                if b is None or id(b) in seen:
                    continue
                seen.add(id(b))
                yield (f"{lp}.{name}" if lp else name), b

    def buffers(self, include_sublayers=True):
        return [b for _, b in self.named_buffers(include_sublayers=include_sublayers)]

    def apply(self, fn):
        """Call ``fn(layer)`` on every sublayer and then on self; returns self."""
        for layer in self.children():
            layer.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------------ modes
    def train(self):
        """Training mode for this layer and its sublayers (dropout on, batch stats); returns self.
        """
        for layer in self.sublayers(include_self=True):
            layer.training = True
        return self

    def eval(self):
        """Evaluation mode (the graph is still recorded; use paddle.no_grad to stop it)."""
        for layer in self.sublayers(include_self=True):
            layer.training = False
        return self

    def clear_gradients(self, set_to_zero=True):
        for p in self.parameters():
            if not p.stop_gradient:
                p.clear_gradient(set_to_zero)

    # ------------------------------------------------------------------ state
    def _state_items(self, include_sublayers=True, structured_name_prefix=""):
        # as Paddle: a layer shared under two names is listed under both (no de-duplication)
        for name, p in self._parameters.items():
            if p is not None:
                yield structured_name_prefix + name, p
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistable_buffer_names_set:
                yield structured_name_prefix + name, b
        if include_sublayers:
            for name, layer in self._sub_layers.items():
                if layer is not None:
                    yield from layer._state_items(True, f"{structured_name_prefix}{name}.")

    def state_dict(self, destination=None, include_sublayers=True, structured_name_prefix="",
                   use_hook=True):
        """Parameters and persistable buffers keyed by structured name (``fc.weight``)."""
        dest = collections.OrderedDict() if destination is None else destination
        for k, v in self._state_items(include_sublayers, structured_name_prefix):
            dest[k] = v
        if use_hook:
            for hook in self._state_dict_hooks.values():
                res = hook(dest)
                if res is not None:
                    dest = res
        return dest

    def to_static_state_dict(self, destination=None, include_sublayers=True,
                             structured_name_prefix="", use_hook=True):
        return self.state_dict(destination, include_sublayers, structured_name_prefix,
                               use_hook)

    def set_state_dict(self, state_dict, use_structured_name=True):
        """Load values in place. Returns ``(missing_keys, unexpected_keys)``; an entry whose shape
        does not match is skipped with a warning."""
        own = collections.OrderedDict(self._state_items())
        if not use_structured_name:
            own = collections.OrderedDict((t.name, t) for t in own.values())
        missing, matched = [], set()
        for key, target in own.items():
            if key not in state_dict:
                warnings.warn(f"Skip loading for {key}. {key} is not found in the provided "
                              "dict.", stacklevel=2)
                missing.append(key)
                continue
            value = state_dict[key]
            arr = value._data if isinstance(value, Tensor) else value
            if not hasattr(arr, "shape") or not hasattr(arr, "dtype"):
                arr = np.asarray(arr)
            if tuple(arr.shape) != tuple(target._data.shape):
                # as Paddle: the entry is reported both missing and unexpected
                warnings.warn(f"Skip loading for {key}. {key} receives a shape "
                              f"{list(arr.shape)}, but the expected shape is {target.shape}.",
                              stacklevel=2)
                missing.append(key)
                continue
            matched.add(key)
            target._data[...] = _pl.move(arr, _pl.place_of(target._data)).astype(
                target._data.dtype, copy=False)
            target._ver.v += 1
        unexpected = [k for k in state_dict if k not in matched]
        return missing, unexpected

    set_dict = set_state_dict
    load_dict = set_state_dict

    # ------------------------------------------------------------------ conversion
    def to(self, device=None, dtype=None, blocking=None):
        """Move parameters and buffers to ``device`` and/or cast floating ones to ``dtype``, in
        place (the Parameter objects stay the same); returns self."""
        place = _pl.parse_place(device) if device is not None else None
        npd = _dt.to_np(dtype) if dtype is not None else None
        for t in itertools.chain(self.parameters(), self.buffers()):
            arr = t._data
            if npd is not None and _dt.is_float_np(arr.dtype):
                arr = arr.astype(npd)
            if place is not None and _pl.place_of(arr) != place:
                arr = _pl.move(arr, place)
            if arr is not t._data:
                t._data = arr
                if t._grad is not None:
                    g = t._grad._data
                    if npd is not None and _dt.is_float_np(g.dtype):
                        g = g.astype(npd)
                    if place is not None:
                        g = _pl.move(g, place)
                    t._grad = _wrap(g)
        if npd is not None:
            for layer in self.sublayers(include_self=True):
                layer._dtype = _dt.from_np(npd).name
        return self

    def astype(self, dtype=None):
        """Cast floating parameters and buffers to ``dtype``; returns self."""
        return self.to(dtype=dtype)

    def _cast_except(self, dtype, excluded_layers):
        excluded = tuple(excluded_layers or ())
        for layer in self.sublayers(include_self=True):
            if excluded and isinstance(layer, excluded):
                continue
            for t in itertools.chain(layer._parameters.values(), layer._buffers.values()):
                if t is not None and _dt.is_float_np(t._data.dtype):
                    t._data = t._data.astype(_dt.to_np(dtype))
            layer._dtype = dtype
        return self

    def float(self, excluded_layers=None):
        return self._cast_except("float32", excluded_layers)

    def float16(self, excluded_layers=None):
        return self._cast_except("float16", excluded_layers)

    def bfloat16(self, excluded_layers=None):
        return self._cast_except("bfloat16", excluded_layers)

    # ------------------------------------------------------------------ printing
    def extra_repr(self) -> str:
        """The text between the parentheses of this layer's repr."""
        return ""

    def __repr__(self):
        lines = []
        for name, layer in self._sub_layers.items():
            if layer is None:
                continue
            sub = repr(layer).split("\n")
            sub = [sub[0]] + ["  " + s for s in sub[1:]]
            lines.append(f"  ({name}): " + "\n".join(sub))
        extra = self.extra_repr()
        if "\n" in extra:  # a multi-line extra_repr goes on its own indented lines
            lines = ["  " + e for e in extra.split("\n")] + lines
            extra = ""
        head = f"{type(self).__name__}({extra}"
        if not lines:
            return head + ")"
        return head + "\n" + "\n".join(lines) + "\n)"


def _make_parameter(shape, dtype, name, attr, is_bias, default_initializer, where):
    from ..initializer import _default_initializer_for, _global_initializer

    shape = [int(s.item()) if isinstance(s, Tensor) else int(s) for s in shape]
    if any(s < 0 for s in shape):
        raise ValueError(f"{where}: shape {shape} must not contain negative dims")
    # precedence as in Paddle: the ParamAttr's initializer, then the global initializer (it
    # overrides a layer's built-in default), then the layer's default, then the generic one
    init = attr.initializer or _global_initializer(is_bias) or default_initializer or \
        _default_initializer_for(is_bias, dtype)
    p = Parameter(np.zeros(shape, dtype=_dt.to_np(dtype)), name=name,
                  trainable=attr.trainable, learning_rate=attr.learning_rate,
                  regularizer=attr.regularizer, need_clip=attr.need_clip,
                  do_model_average=attr.do_model_average)
    if _pl.current_place().kind == "gpu":
        p._data = _pl.move(p._data, _pl.current_place())
    init(p)
    return p


def create_parameter(shape, dtype, name=None, attr=None, is_bias=False,
                     default_initializer=None):
    """A standalone Parameter (``paddle.create_parameter``)."""
    from ..param_attr import ParamAttr

    if attr is None:
        attr = ParamAttr(name=name)
        pname = name or unique_name("create_parameter") + (".b_0" if is_bias else ".w_0")
    else:
        attr = ParamAttr._to_attr(attr) or ParamAttr()
        prefix = name or unique_name("create_parameter")
        pname = attr.name or unique_name(f"{prefix}.{'b' if is_bias else 'w'}")
    return _make_parameter(shape, dtype, pname, attr, is_bias, default_initializer,
                           "create_parameter")
