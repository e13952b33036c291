"""framework: Tensor, Parameter, dtypes, places, the op wrapper and the autograd engine.

Paddle code also reaches a few public helpers through ``paddle.framework`` (``ParamAttr``,
``in_dynamic_mode``, ``get_default_dtype``, ...): those resolve to the top-level names.
"""

__all__ = []

_PUBLIC = frozenset({
    "ParamAttr", "in_dynamic_mode", "get_default_dtype", "set_default_dtype", "no_grad",
    "set_grad_enabled", "is_grad_enabled", "enable_grad", "seed", "CPUPlace", "CUDAPlace",
    "CUDAPinnedPlace", "save", "load", "create_parameter", "get_flags", "set_flags",
})


def __getattr__(name):
    if name in _PUBLIC:
        import paddle_hl

        return getattr(paddle_hl, name)
    raise AttributeError(f"module 'paddle_hl.framework' has no attribute '{name}'")
