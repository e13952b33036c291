"""The switches the op wrapper reads on every op: grad mode, AMP, profiler and tracing hooks.

Which switches are per thread and which are process-wide follows Paddle 2.6:

Per thread (``tls``, a ``threading.local`` whose class attributes are the defaults, so a new
thread starts from them whatever the thread that started it had set):

- ``tls.grad_enabled``: grad mode (``no_grad``, ``enable_grad``, ``set_grad_enabled``). A new
  thread starts with grad on, also when it is started inside a ``no_grad`` block.
- ``tls.grad_sync``: the gradient synchroniser ``DataParallel.forward`` sets for the next plain
  backward pass of the same thread (see below).
- ``tls.tracer``: the hook through which ``jit`` records the kernels one forward call runs.
- AMP's auto_cast level, dtype and lists live in ``paddle_hl.amp`` (per thread as well); only
  the dispatching hook below is process-wide.

Process-wide, as in Paddle:

- ``amp_hook``: installed while any thread uses auto_cast, or while operator stats or the
  tensor checker (process-wide in Paddle) are on; it looks up the calling thread's setting.
- the profiler (``prof_hook``/``prof_bw``): a profiler records the ops of every thread, each
  event tagged with its thread.
- ``saved_hooks``: ``saved_tensors_hooks`` registered in one thread apply to ops in all threads.
- outside this module: the current device (``set_device``), the default dtype
  (``set_default_dtype``), the global random generator (``seed``), flags and global initializers.

The op wrapper reads the module attributes ``amp_hook``, ``prof_hook`` and ``saved_hooks`` (one
module attribute load each) per op, and grad mode as ``not grad_off or tls.grad_enabled``: while
no thread has grad off (training), one check of a list it holds; otherwise one thread-local
attribute load more.
"""

from __future__ import annotations

import contextlib
import functools
import threading

__all__ = []


class _PerThread(threading.local):
    """Per-thread switches; the class attributes are what every new thread starts from."""

    # graph recording (grad mode); read it freely, change it only through set_grad (or the
    # context managers below), which keeps grad_off up to date
    grad_enabled = True
    # while this thread's grad mode is off: its entry in grad_off (see _OffEntry)
    off_entry = None
    # Set by paddle_hl.distributed.DataParallel.forward for the next plain backward pass of this
    # thread: an object whose ``ready(leaf)`` is called as soon as a leaf's gradient is final
    # (its .grad updated), while the rest of the pass still runs, and whose ``done()`` is called
    # once the pass has ended. It lets gradient all-reduce overlap with the backward pass. An
    # optional ``absorb(entry)`` may store a leaf's final gradient itself (True) instead of the
    # engine.
    grad_sync = None
    # jit tracing of this thread: a callable (kernel, arrays, attrs) -> (out, backward) that runs
    # the kernel (through the profiler when one records) and records the call; see op_tracer.
    tracer = None


tls = _PerThread()

# One entry per thread whose grad mode is off. While it is empty, every thread records the
# graph and the op wrapper needs no thread-local read (``if not grad_off or
# tls.grad_enabled``). list.append and list.pop are atomic, so it takes no lock. Entries are
# added before a thread turns grad off and removed after it turns grad back on, so a non-empty
# list is only ever a false alarm (the thread-local read then decides). Never rebind it: the op
# wrapper holds the list itself.
grad_off = []


class _OffEntry:
    """A thread's entry in ``grad_off`` for as long as this object lives: it is held by the
    thread's ``tls.off_entry`` while its grad mode is off, and goes when grad is turned on again
    or when the thread ends (its thread-local state is dropped then)."""

    __slots__ = ()

    def __init__(self):
        grad_off.append(None)

    def __del__(self):
        try:
            grad_off.pop()
        except Exception:  # noqa: BLE001  (interpreter shutdown)
            pass


def set_grad(flag) -> bool:
    """Set the calling thread's grad mode; returns the previous mode."""
    t = tls
    prev = t.grad_enabled
    if flag:
        if not prev:
            t.grad_enabled = True
            t.off_entry = None  # after the mode: grad_off may only over-report
    elif prev:
        t.off_entry = _OffEntry()  # before the mode
        t.grad_enabled = False
    return prev

# Set by paddle_hl.amp while auto_cast (in any thread), operator stats or the tensor checker is
# active: a callable (kernel, inputs, attrs) -> inputs, called by the op wrapper before it unwraps
# the inputs (a tuple of Tensors and constants; attrs the keyword attributes). It returns the
# inputs to run the kernel on (Tensors cast by differentiable cast ops), or, when it ran the op
# itself (a composite such as linear = matmul + add, or a checked op), an object whose ``value``
# is the result. The op name is getattr(kernel, "op_name", kernel.__name__).
amp_hook = None
# The op wrapper's kernel hook: a callable (kernel, arrays, attrs) -> (out, backward) that runs
# the kernel itself, so that it can time it (host clock; CUDA events on GPU) or record it for
# jit. None when no profiler records and no thread traces. Set only through set_profiler and
# op_tracer, which keep it consistent.
prof_hook = None
# Set by paddle_hl.profiler (through set_profiler) while it records: an object whose
# ``node(node, bw, grads)`` runs one backward closure (``grads`` a tuple) and times it, and whose
# ``span(run, *args)`` times a whole backward pass (engine.run_backward).
prof_bw = None
# saved_tensors_hooks stack: list of (pack, unpack); the innermost (last) applies.
saved_hooks = []

_lock = threading.Lock()
_profiler_hook = None  # the recording profiler's op hook, or None
_tracing = 0  # threads inside op_tracer, counted per entry


def __getattr__(name):
    if name in ("grad_enabled", "grad_sync"):
        raise AttributeError(
            f"paddle_hl.framework.state.{name} is kept per thread: read or set "
            f"state.tls.{name} (or use is_grad_enabled / no_grad / enable_grad)")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _update_prof_hook():
    global prof_hook
    prof_hook = _dispatch if _tracing else _profiler_hook


def _dispatch(fn, arrays, attrs):
    """The op hook while some thread traces: that thread's tracer, else the profiler's hook."""
    tracer = tls.tracer
    if tracer is not None:
        return tracer(fn, arrays, attrs)
    return run_kernel(fn, arrays, attrs)


def run_kernel(fn, arrays, attrs):
    """Run a kernel as the op wrapper does when no thread traces: timed by the recording
    profiler if there is one. What a tracer calls to run the kernel it records."""
    hook = _profiler_hook
    if hook is not None:
        return hook(fn, arrays, attrs)
    if attrs:
        return fn(*arrays, **attrs)
    return fn(*arrays)


def set_profiler(op_hook, bw):
    """Install (or, with None, None, remove) the recording profiler's hooks, for all threads.

    Args:
        op_hook: callable (kernel, arrays, attrs) -> (out, backward), or None.
        bw: the backward recorder (``node`` and ``span`` methods), or None.
    """
    global _profiler_hook, prof_bw
    with _lock:
        _profiler_hook = op_hook
        prof_bw = bw
        _update_prof_hook()


def profiler_hook():
    """The recording profiler's op hook, or None."""
    return _profiler_hook


@contextlib.contextmanager
def op_tracer(hook):
    """Route every kernel the current thread runs through ``hook`` (other threads unaffected).

    Args:
        hook: callable (kernel, arrays, attrs) -> (out, backward); it runs the kernel itself,
            normally through the tracer that was active before it or :func:`run_kernel`.
    """
    global _tracing
    with _lock:
        _tracing += 1
        _update_prof_hook()
    prev = tls.tracer
    tls.tracer = hook
    try:
        yield
    finally:
        tls.tracer = prev
        with _lock:
            _tracing -= 1
            _update_prof_hook()


def is_grad_enabled() -> bool:
    """Whether operations record the autograd graph (in the calling thread)."""
    return tls.grad_enabled


def _set(flag: bool):
    set_grad(bool(flag))


class _GradMode:
    """Context manager and decorator that sets the calling thread's grad mode and restores it.

    One instance may be entered by several threads, and re-entered, at once: the modes to
    restore are kept per thread.
    """

    _mode = True

    def _push(self):
        prevs = self.__dict__.setdefault("_prevs", {})
        prevs.setdefault(threading.get_ident(), []).append(tls.grad_enabled)

    def _pop(self):
        ident = threading.get_ident()
        stack = self._prevs[ident]
        prev = stack.pop()
        if not stack:
            self._prevs.pop(ident, None)
        set_grad(prev)

    def __enter__(self):
        self._push()
        set_grad(self._mode)
        return self

    def __exit__(self, *exc):
        self._pop()
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with type(self)():
                return func(*args, **kwargs)

        return wrapper


class no_grad(_GradMode):  # noqa: N801  (Paddle's name)
    """Disable graph recording in the calling thread. Use as ``with paddle.no_grad():`` or as
    ``@paddle.no_grad()``; other threads keep their own grad mode, as in Paddle."""

    _mode = False

    def __new__(cls, func=None):
        self = super().__new__(cls)
        if callable(func):  # used as a bare decorator: @paddle.no_grad
            return self(func)
        return self

    def __init__(self, func=None):
        pass


class enable_grad(no_grad):  # noqa: N801
    """Enable graph recording inside a no_grad block (calling thread only); context manager or
    decorator."""

    _mode = True


class set_grad_enabled:  # noqa: N801
    """Set the calling thread's grad mode on or off; usable as a function, context manager or
    decorator."""

    def __init__(self, mode: bool):
        self._prev = tls.grad_enabled
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
            prev = tls.grad_enabled
            _set(self._mode)
            try:
                return func(*args, **kwargs)
            finally:
                _set(prev)

        return wrapper


@contextlib.contextmanager
def _grad_mode(flag):
    prev = tls.grad_enabled
    _set(flag)
    try:
        yield
    finally:
        _set(prev)
