"""framework: Tensor, Parameter, dtypes, places, the op wrapper and the autograd engine.

Paddle code also reaches a few public helpers through ``paddle.framework`` (``ParamAttr``,
``in_dynamic_mode``, ``get_default_dtype``, ...): those resolve to the top-level names, which the
top-level namespace installs here when it loads (this package imports nothing above it).
"""

__all__ = []
