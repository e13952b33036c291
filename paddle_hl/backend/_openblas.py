"""Control of the OpenBLAS that NumPy runs its matrix products on (CPU backend, Linux).

Two process settings live here:

- :func:`thread_control` / :func:`one_thread`: OpenBLAS's thread count, held to one thread
  while kernels run their own threads (the RNN step loops), restored afterwards.
- :func:`tune_thread_timeout`: how long OpenBLAS's idle worker threads spin after a parallel
  product before they go to sleep. OpenBLAS's default is 2**28 CPU cycles, about 0.1 s: for
  that long after every multi-threaded GEMM its workers keep every core busy doing nothing,
  so whatever runs next on those cores -- this package's own thread pool (im2col, batch norm,
  optimizer updates), the RNN step loops, a DataLoader worker, another library in the same
  process -- runs at a fraction of its speed. A ResNet-18 CIFAR training step took 84 ms with
  the default and 72 ms with 2**18 cycles (about 0.1 ms), the LSTM step loops 77 ms against
  44 ms. Back-to-back products still find the workers awake.

The OpenBLAS library is found among the libraries the process has loaded, NumPy's own copy
first; any other BLAS (MKL, Accelerate) or another platform leaves both settings untouched.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading

from . import settings

__all__ = []

# log2 of the CPU cycles an idle OpenBLAS worker spins before it sleeps
DEFAULT_TIMEOUT = settings.DEFAULT_BLAS_TIMEOUT

_lib = None  # the ctypes library, False when none was found
_control = None  # (set_num_threads, get_num_threads), or False
_lock = threading.Lock()
_users = 0
_saved = 1
_timeout_tuned = None


def _candidates():
    """Paths of the loaded OpenBLAS libraries, the ones shipped with NumPy first."""
    try:
        with open("/proc/self/maps") as f:
            paths = {ln.split()[-1] for ln in f if "openblas" in ln.rsplit("/", 1)[-1].lower()}
    except OSError:
        return []
    return sorted(paths, key=lambda p: ("numpy" not in p and "scipy_openblas" not in p, p))


def library():
    """The ctypes handle of NumPy's OpenBLAS, or None."""
    global _lib, _control
    if _lib is None:
        _lib, _control = False, False
        for path in _candidates():
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            for pre, suf in (("scipy_openblas_", "64_"), ("scipy_openblas_", ""),
                             ("openblas_", "64_"), ("openblas_", "")):
                set_n = getattr(lib, f"{pre}set_num_threads{suf}", None)
                get_n = getattr(lib, f"{pre}get_num_threads{suf}", None)
                if set_n is not None and get_n is not None:
                    set_n.argtypes, set_n.restype = (ctypes.c_int,), None
                    get_n.argtypes, get_n.restype = (), ctypes.c_int
                    _lib, _control = lib, (set_n, get_n)
                    break
            if _lib:
                break
    return _lib or None


def thread_control():
    """``(set_num_threads, get_num_threads)`` of NumPy's OpenBLAS, or False."""
    library()
    return _control


@contextlib.contextmanager
def one_thread():
    """Hold NumPy's OpenBLAS to one thread inside the block (nesting- and thread-safe: the
    count in effect before the outermost block is restored when the last one ends)."""
    global _users, _saved
    ctl = thread_control()
    if not ctl:
        yield
        return
    set_n, get_n = ctl
    with _lock:
        if _users == 0:
            _saved = get_n()
            set_n(1)
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0:
                set_n(_saved)


def held_to_one_thread() -> bool:
    """Whether a :func:`one_thread` block is running in some thread."""
    return _users > 0


def _timeout_setting():
    return settings.blas_thread_timeout()


def tune_thread_timeout():
    """Make OpenBLAS's idle workers sleep after about 2**18 cycles instead of 2**28 (see the
    module docstring). Done once per process; OpenBLAS reads the timeout when it starts its
    threads, so its threads are stopped here and start again on the next parallel product.

    Skipped when ``PADDLE_HL_BLAS_THREAD_TIMEOUT=0``, when the user set OpenBLAS's own
    ``OPENBLAS_THREAD_TIMEOUT`` / ``GOTO_THREAD_TIMEOUT``, or when the loaded OpenBLAS does not
    export what this needs. Returns the timeout now in effect (log2 cycles), or None.
    """
    global _timeout_tuned
    if _timeout_tuned is not None:
        return _timeout_tuned or None
    _timeout_tuned = 0
    n = _timeout_setting()
    if n == 0 or any(os.environ.get(k) for k in ("OPENBLAS_THREAD_TIMEOUT",
                                                 "GOTO_THREAD_TIMEOUT")):
        return None
    lib = library()
    needed = ("openblas_read_env", "openblas_thread_timeout", "blas_thread_shutdown_")
    if lib is None or not all(hasattr(lib, name) for name in needed):
        return None
    read_env, current, shutdown = (getattr(lib, name) for name in needed)
    current.restype = ctypes.c_int
    with _lock:
        if _users:  # a kernel is running its own threads on top of BLAS: not now
            _timeout_tuned = None
            return None
        os.environ["OPENBLAS_THREAD_TIMEOUT"] = str(n)
        try:
            read_env()  # OpenBLAS copies its environment variables into its own settings
        finally:
            # the setting is OpenBLAS's now; child processes and other libraries see the
            # environment the user gave
            del os.environ["OPENBLAS_THREAD_TIMEOUT"]
        if current() != n:
            return None
        shutdown()  # the workers restart, with the new timeout, on the next parallel GEMM
    _timeout_tuned = n
    return n
