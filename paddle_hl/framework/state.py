"""Global switches read on the hot path (grad mode, AMP and profiler hooks).

They are plain module attributes so the op wrapper pays one attribute load per check.
"""

from __future__ import annotations

import contextlib
import functools

__all__ = []

grad_enabled = True
# Set by paddle_hl.amp while auto_cast, operator stats or the tensor checker is active: a
# callable (kernel, inputs, attrs) -> inputs, called by the op wrapper before it unwraps the
# inputs (a tuple of Tensors and constants; attrs the keyword attributes). It returns the inputs
# to run the kernel on (Tensors cast by differentiable cast ops), or, when it ran the op itself
# (a composite such as linear = matmul + add, or a checked op), an object whose ``value`` is the
# result. The op name is getattr(kernel, "op_name", kernel.__name__).
amp_hook = None
# Set by paddle_hl.profiler while it records: a callable (kernel, arrays, attrs) -> (out, backward)
# that runs the kernel itself, so that it can time it (host clock; CUDA events on GPU).
prof_hook = None
# Set by paddle_hl.profiler while it records: an object whose ``node(node, bw, grads)`` runs one
# backward closure (``grads`` a tuple) and times it, and whose ``span(run, *args)`` times a whole
# backward pass (engine.run_backward).
prof_bw = None
# saved_tensors_hooks stack: list of (pack, unpack).
saved_hooks = []
# Set by paddle_hl.distributed.DataParallel for the next plain backward pass: an object whose
# ``ready(leaf)`` is called as soon as a leaf's gradient is final (its .grad updated), while the
# rest of the pass still runs, and whose ``done()`` is called once the pass has ended. It lets
# gradient all-reduce overlap with the backward pass. An optional ``absorb(entry)`` may store a
# leaf's final gradient itself (True) instead of the engine.
grad_sync = None


def is_grad_enabled() -> bool:
    """Whether operations record the autograd graph."""
    return grad_enabled


def _set(flag: bool):
    global grad_enabled
    grad_enabled = bool(flag)


class _GradMode:
    """Context manager and decorator that sets grad mode and restores it."""

    _mode = True

    def __enter__(self):
        self._prev = grad_enabled
        _set(self._mode)
        return self

    def __exit__(self, *exc):
        _set(self._prev)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with type(self)():
                return func(*args, **kwargs)

        return wrapper


class no_grad(_GradMode):  # noqa: N801  (Paddle's name)
    """Disable graph recording. Use as ``with paddle.no_grad():`` or as ``@paddle.no_grad()``."""

    _mode = False

    def __new__(cls, func=None):
        self = super().__new__(cls)
        if callable(func):  # used as a bare decorator: @paddle.no_grad
            return self(func)
        return self

    def __init__(self, func=None):
        pass


class enable_grad(no_grad):  # noqa: N801
    """Enable graph recording inside a no_grad block; context manager or decorator."""

    _mode = True


class set_grad_enabled:  # noqa: N801
    """Set grad mode on or off; usable as a function, context manager or decorator."""

    def __init__(self, mode: bool):
        self._prev = grad_enabled
        _set(mode)
        self._mode = bool(mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _set(self._prev)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            prev = grad_enabled
            _set(self._mode)
            try:
                return func(*args, **kwargs)
            finally:
                _set(prev)

        return wrapper


@contextlib.contextmanager
def _grad_mode(flag):
    prev = grad_enabled
    _set(flag)
    try:
        yield
    finally:
        _set(prev)
