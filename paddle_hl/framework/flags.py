"""Global flags (``paddle.get_flags`` / ``paddle.set_flags``).

paddle_hl keeps the FLAGS_* names that change what Python code observes; each is validated on
set. Flags only meaningful to Paddle's C++ runtime are accepted and remembered so that code
written for Paddle runs unchanged.
"""

from __future__ import annotations

__all__ = []

_FLAGS = {
    "FLAGS_check_nan_inf": False,
    "FLAGS_check_nan_inf_level": 0,
    "FLAGS_cudnn_deterministic": False,
    "FLAGS_cudnn_exhaustive_search": False,
    "FLAGS_conv_workspace_size_limit": 512,
    "FLAGS_embedding_deterministic": 0,
    "FLAGS_eager_delete_tensor_gb": 0.0,
    "FLAGS_fraction_of_gpu_memory_to_use": 0.92,
    "FLAGS_allocator_strategy": "auto_growth",
    "FLAGS_use_mkldnn": False,
    "FLAGS_benchmark": False,
    "FLAGS_call_stack_level": 1,
    "FLAGS_enable_api_kernel_fallback": True,
    "FLAGS_print_extra_attrs": False,
    "FLAGS_low_precision_op_list": 0,
    "FLAGS_use_stride_kernel": True,
    "FLAGS_set_to_1d": False,
}


def _check_name(name, where):
    if not isinstance(name, str):
        raise TypeError(f"{where}: flag names must be strings, got {type(name).__name__}")
    if name not in _FLAGS:
        raise ValueError(f"{where}: flag {name!r} is not supported; known flags: "
                         f"{sorted(_FLAGS)}")


def get_flags(flags):
    """Return ``{name: value}`` for one flag name or a list/tuple of names."""
    names = [flags] if isinstance(flags, str) else flags
    if not isinstance(names, (list, tuple)):
        raise TypeError(f"get_flags: 'flags' must be a str, list or tuple, got "
                        f"{type(flags).__name__}")
    out = {}
    for n in names:
        _check_name(n, "get_flags")
        out[n] = _FLAGS[n]
    return out


def set_flags(flags):
    """Set flags from a ``{name: value}`` dict; values are converted to the flag's type."""
    if not isinstance(flags, dict):
        raise TypeError(f"set_flags: 'flags' must be a dict, got {type(flags).__name__}")
    for n, v in flags.items():
        _check_name(n, "set_flags")
        cur = _FLAGS[n]
        try:
            _FLAGS[n] = type(cur)(v) if not isinstance(cur, bool) else bool(v)
        except (TypeError, ValueError):
            raise TypeError(f"set_flags: flag {n!r} expects a {type(cur).__name__}, got "
                            f"{v!r}") from None


def flag(name):
    return _FLAGS[name]
