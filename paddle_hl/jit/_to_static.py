"""to_static and its switches, in dygraph meaning (the code runs eagerly, as written)."""

from __future__ import annotations

import functools
import inspect
import types
import weakref

from ..framework.tensor import Tensor
from ..static.input import InputSpec

__all__ = []

_state = {"enabled": True, "code_level": 100, "verbosity": 0, "ignored": []}


def _specs(input_spec, where):
    if input_spec is None:
        return None
    if not isinstance(input_spec, (list, tuple)):
        raise TypeError(f"{where}: input_spec must be a list/tuple of InputSpec or Tensor, got "
                        f"{type(input_spec).__name__}")
    out = []
    for s in input_spec:
        if isinstance(s, Tensor):
            s = InputSpec.from_tensor(s)
        elif isinstance(s, (list, tuple)):
            s = _specs(s, where)
        elif not isinstance(s, InputSpec) and s is not None:
            raise TypeError(f"{where}: input_spec items must be InputSpec or Tensor, got "
                            f"{type(s).__name__}")
        out.append(s)
    return out


def check_args(specs, args, where):
    """Check each Tensor argument against its InputSpec (rank, fixed dims, dtype)."""
    for i, (spec, a) in enumerate(zip(specs, args)):
        if isinstance(spec, list):
            if isinstance(a, (list, tuple)):
                check_args(spec, a, where)
            continue
        if spec is None or not isinstance(a, Tensor):
            continue
        shape = a.shape
        ok = len(shape) == len(spec.shape) and all(
            s == -1 or s == d for s, d in zip(spec.shape, shape))
        if not ok:
            raise ValueError(f"{where}: input {i} ({spec.name or 'unnamed'}) has shape {shape}, "
                             f"which does not match input_spec shape {list(spec.shape)} "
                             "(-1 is a free dim)")
        if a.dtype != spec.dtype:
            raise TypeError(f"{where}: input {i} ({spec.name or 'unnamed'}) has dtype "
                            f"{a.dtype}, but input_spec says {spec.dtype}")


class StaticFunction:
    """A function (or bound forward) marked by :func:`to_static`; calling it runs the code as
    written after checking Tensor arguments against ``input_spec``.

    Without an ``input_spec``, each call remembers the signature of its Tensor arguments
    (concrete shapes and dtypes); :func:`paddle_hl.jit.save` then saves with the last one, as
    Paddle saves with the program of the latest call. For a method the signature is kept per
    instance.
    """

    def __init__(self, function, input_spec=None, build_strategy=None, backend=None, **kwargs):
        self.dygraph_function = function
        self._input_spec = _specs(input_spec, "to_static")
        self.build_strategy = build_strategy
        self.backend = backend
        self._kwargs = kwargs
        # the last call's signature: here for a plain function (or a bound forward set on a
        # layer), in the unbound method's per-instance table for a method bound by __get__
        self._seen_spec = None
        self._seen_table = weakref.WeakKeyDictionary()
        self._seen_key = None
        functools.update_wrapper(self, function)

    @property
    def input_spec(self):
        return self._input_spec

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        bound = StaticFunction(types.MethodType(self.dygraph_function, instance),
                               self._input_spec, self.build_strategy, self.backend)
        try:
            weakref.ref(instance)
            bound._seen_table, bound._seen_key = self._seen_table, instance
        except TypeError:  # an instance without weak references shares the function's slot
            bound._seen_table, bound._seen_key = self._seen_table, self
        return bound

    def __call__(self, *args, **kwargs):
        if self._input_spec:
            if _state["enabled"]:
                check_args(self._input_spec, args, f"to_static({self.__name__})")
        else:
            self._remember(args)
        return self.dygraph_function(*args, **kwargs)

    def _remember(self, args):
        specs = tuple(InputSpec(a.shape, a.dtype) if isinstance(a, Tensor) else type(a)
                      for a in args)
        if self._seen_key is None:
            self._seen_spec = specs
        else:
            self._seen_table[self._seen_key] = specs

    def concrete_input_spec(self, where):
        """The InputSpecs of the last call (named after the parameters), for saving.

        Raises:
            ValueError: the function was never called, or the last call had non-Tensor
                positional arguments (which a saved program cannot take as inputs).
        """
        if self._input_spec:
            return self._input_spec
        seen = (self._seen_spec if self._seen_key is None
                else self._seen_table.get(self._seen_key))
        name = getattr(self, "__qualname__", None) or repr(self.dygraph_function)
        if seen is None:
            raise ValueError(
                f"{where}: {name} is decorated with to_static without input_spec and was never "
                "called, so its input signature is unknown. Pass input_spec (a list of "
                "InputSpec) to to_static or to this call, or call the function once with "
                "example inputs before saving.")
        try:
            params = [p.name for p in inspect.signature(self.dygraph_function).parameters
                      .values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        except (TypeError, ValueError):
            params = []
        out = []
        for i, s in enumerate(seen):
            if not isinstance(s, InputSpec):
                raise ValueError(
                    f"{where}: the last call of {name} passed a {s.__name__} as positional "
                    f"argument {i}; only Tensor arguments can be inputs of a saved program. "
                    "Pass input_spec (a list of InputSpec) for the Tensor inputs.")
            out.append(InputSpec(s.shape, s.dtype, params[i] if i < len(params) else f"x{i}"))
        return out

    def rollback(self):
        """The plain function (Paddle returns the dygraph function)."""
        return self.dygraph_function

    def __repr__(self):
        return f"<StaticFunction {getattr(self, '__qualname__', self.dygraph_function)}>"


def to_static(function=None, input_spec=None, build_strategy=None, backend=None, **kwargs):
    """Mark a function or Layer for static conversion; here it keeps running eagerly.

    Args:
        function (callable|Layer, optional): the function or layer; omitted when used as
            ``@to_static(input_spec=...)``.
        input_spec (list[InputSpec|Tensor], optional): the inputs' shapes/dtypes, checked on
            every call and used by :func:`paddle_hl.jit.save`.
        build_strategy, backend: static-graph options; accepted (``backend`` must be None,
            'CINN' or 'inference').

    Returns:
        The decorated function, or the layer with its forward wrapped.

    Example:
        >>> @paddle.jit.to_static(input_spec=[InputSpec([None, 4], 'float32')])
        ... def f(x):
        ...     return x * 2
    """
    if backend not in (None, "CINN", "inference"):
        raise ValueError(f"to_static: backend must be None, 'CINN' or 'inference', got "
                         f"{backend!r}")
    _specs(input_spec, "to_static")

    def decorate(fn):
        from ..nn.layer.layers import Layer

        if isinstance(fn, Layer):
            fwd = fn.forward
            if isinstance(fwd, StaticFunction):
                fwd = fwd.dygraph_function
            fn.forward = StaticFunction(fwd, input_spec, build_strategy, backend, **kwargs)
            return fn
        if isinstance(fn, StaticFunction):
            return fn
        if not callable(fn):
            raise TypeError(f"to_static: expected a function or Layer, got {type(fn).__name__}")
        return StaticFunction(fn, input_spec, build_strategy, backend, **kwargs)

    if function is None:
        return decorate
    return decorate(function)


def not_to_static(func=None):
    """Mark ``func`` to stay in dygraph inside a to_static function (it always does here)."""
    if func is None:
        return not_to_static
    try:
        func._not_to_static = True
    except (AttributeError, TypeError):
        pass  # builtins take no attributes; they are never converted anyway
    return func


def ignore_module(modules):
    """Modules whose functions static conversion should not transcribe; recorded.

    Args:
        modules (list[module]): the modules.
    """
    if not isinstance(modules, (list, tuple)):
        raise TypeError(f"ignore_module: modules must be a list of modules, got "
                        f"{type(modules).__name__}")
    for m in modules:
        if not inspect.ismodule(m):
            raise TypeError(f"ignore_module: expected modules, got {type(m).__name__}")
    _state["ignored"].extend(modules)


def enable_to_static(enable_to_static_bool):
    """Turn to_static's input_spec checks on or off (the code runs eagerly either way)."""
    if not isinstance(enable_to_static_bool, bool):
        raise TypeError(f"enable_to_static: expected a bool, got "
                        f"{type(enable_to_static_bool).__name__}")
    _state["enabled"] = enable_to_static_bool


def _level(level, where):
    if not isinstance(level, int) or isinstance(level, bool):
        raise TypeError(f"{where}: level must be an int, got {type(level).__name__}")
    return level


def set_code_level(level=100, also_to_stdout=False):
    """Level of transformed-code logging; there is no transformed code here, so it is stored."""
    _state["code_level"] = _level(level, "set_code_level")


def set_verbosity(level=0, also_to_stdout=False):
    """Verbosity of conversion logging; stored (no conversion happens)."""
    _state["verbosity"] = _level(level, "set_verbosity")
