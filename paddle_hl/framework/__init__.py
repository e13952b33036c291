"""framework: Tensor, Parameter, dtypes, places, the op wrapper and the autograd engine.

Paddle code also reaches a few public helpers through ``paddle.framework`` (``ParamAttr``,
``in_dynamic_mode``, ``get_default_dtype``, ...): those resolve to the top-level names, which the
top-level namespace installs here when it loads (this package imports nothing above it).
"""

__all__ = []


def use_pir_api() -> bool:
    """Whether Paddle's new intermediate representation is on: never in paddle_hl (dygraph
    only)."""
    return False


def in_dynamic_or_pir_mode() -> bool:
    """True: paddle_hl always runs in dynamic (dygraph) mode."""
    return True


def _current_expected_place():
    """The place new tensors are created on (the device chosen with ``set_device``)."""
    from .place import current_place

    return current_place()


def dygraph_only(func):
    """Decorator marking a function as dygraph-only; every paddle_hl call is dygraph, so it
    returns ``func`` unchanged."""
    return func


def __getattr__(name):
    # Parameter loads on first use: this package's __init__ imports none of its modules
    if name == "Parameter":
        from .parameter import Parameter

        return Parameter
    if name == "io":  # paddle.framework.io (save/load and EagerParamBase), on first access
        import importlib

        return importlib.import_module(f"{__name__}.io")
    raise AttributeError(f"module 'paddle_hl.framework' has no attribute '{name}'")
