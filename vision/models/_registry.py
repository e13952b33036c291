"""The registry of the model zoo's public constructors.

Every public constructor (``resnet50``, ``mobilenet_v2``, ...) is a plain module-level function
decorated with :func:`register_model`; ``MODEL_REGISTRY`` is then filled as the family modules
are imported, so a new constructor is listed (by ``paddle_hl.hub``'s ``hubconf.py`` and the
tests) the moment it is defined, with no second list to keep in step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

__all__ = []

F = TypeVar("F", bound=Callable)

# name -> constructor, in registration (import) order.
MODEL_REGISTRY: dict[str, Callable] = {}


def register_model(fn: F | None = None, *, name: str | None = None):
    """Add a model constructor to :data:`MODEL_REGISTRY` and return it unchanged.

    Usable bare (``@register_model``) or with a name (``@register_model(name="resnet50")``);
    the default name is the function's ``__name__``.

    Args:
        fn (callable, optional): the constructor, a function ``(pretrained=False, **kwargs)``.
        name (str, optional): registry key. Default: ``fn.__name__``.

    Returns:
        callable: ``fn`` itself (or, called with only ``name``, the decorator).

    Raises:
        ValueError: when the name is already registered to another function, or the
            function does not take ``pretrained`` first and ``**kwargs`` last.

    Examples:
        >>> from paddle_hl.vision.models._registry import MODEL_REGISTRY, register_model
        >>> @register_model
        ... def tiny_net(pretrained=False, **kwargs):
        ...     '''A tiny model.'''
        >>> MODEL_REGISTRY["tiny_net"] is tiny_net
        True
        >>> del MODEL_REGISTRY["tiny_net"]
    """
    def wrap(f: F) -> F:
        key = name or f.__name__
        _check_constructor(f, key)
        old = MODEL_REGISTRY.get(key)
        if old is not None and old is not f:
            raise ValueError(
                f"register_model: a model named {key!r} is already registered "
                f"({old.__module__}.{old.__qualname__}); pick another name")
        MODEL_REGISTRY[key] = f
        return f

    return wrap if fn is None else wrap(fn)


def _check_constructor(f: Callable, key: str) -> None:
    import inspect

    params = list(inspect.signature(f).parameters.values())
    ok = (len(params) >= 2 and params[0].name == "pretrained" and params[0].default is False
          and params[-1].kind is inspect.Parameter.VAR_KEYWORD)
    if not ok:
        raise ValueError(
            f"register_model: constructor {key!r} must have the signature "
            f"(pretrained=False, ..., **kwargs); got {inspect.signature(f)}")


def list_models() -> list[str]:
    """Names of the registered constructors, sorted.

    Returns:
        list[str]: the keys of :data:`MODEL_REGISTRY`.

    Examples:
        >>> from paddle_hl.vision.models._registry import list_models
        >>> "resnet50" in list_models()
        True
    """
    return sorted(MODEL_REGISTRY)


def get_model_builder(name: str) -> Callable:
    """The constructor registered as ``name``.

    Args:
        name (str): a key of :data:`MODEL_REGISTRY` (e.g. ``'resnet18'``).

    Returns:
        callable: the constructor.

    Raises:
        ValueError: for an unknown name, listing the known ones.

    Examples:
        >>> from paddle_hl.vision.models._registry import get_model_builder
        >>> model = get_model_builder("resnet18")(num_classes=10)
    """
    try:
        return MODEL_REGISTRY[name]
    except KeyError:
        raise ValueError(
            f"get_model_builder: unknown model {name!r}; registered: "
            f"{', '.join(list_models())}") from None
