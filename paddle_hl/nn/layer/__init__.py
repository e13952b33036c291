"""Layer classes, one module per family.

As in Paddle, ``paddle.nn.layer`` also offers every layer class directly
(``from paddle.nn.layer import Conv2D``); they resolve on first use from ``paddle_hl.nn``.
"""

__all__ = []


def __getattr__(name):
    import importlib

    nn = importlib.import_module("paddle_hl.nn")
    value = nn.__dict__.get(name)
    if isinstance(value, type):
        globals()[name] = value
        return value
    raise AttributeError(f"module 'paddle_hl.nn.layer' has no attribute '{name}'")
