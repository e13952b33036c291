"""Process settings of paddle_hl: each read from the environment once, on first use, and
changed at run time by its setter (public as ``paddle_hl.device.set_num_threads`` and
friends).

========================================  ==================================================
``PADDLE_HL_NUM_THREADS``                 threads of the CPU thread pool, the caller included
                                          (default: the CPUs this process may run on; ``1``
                                          runs every kernel inline): :func:`num_threads`
``PADDLE_HL_NUMBA``                       ``0`` switches the compiled kernels of the numba
                                          extra off (default on where numba is installed):
                                          :func:`numba`
``PADDLE_HL_MALLOC_TUNING``               ``0`` leaves glibc's malloc thresholds as they are
                                          (see ``backend._numpy.tune_malloc``)
``PADDLE_HL_BLAS_THREAD_TIMEOUT``         log2 of the CPU cycles idle OpenBLAS workers spin
                                          (4 to 30, default 18; ``0`` leaves OpenBLAS as it
                                          is; see ``backend._openblas``)
``PADDLE_HL_FUSE_CONV_BN``                ``0`` turns off the declared fusion chains
                                          (``nn/_fusion.py``): batch norm folded into the
                                          convolution before it at inference, and batch norm
                                          with its activation in one op in training:
                                          :func:`fuse_conv_bn`
========================================  ==================================================

The process tuning (malloc, OpenBLAS) is applied once, by ``import paddle_hl``
(``backend.tune_process``). The CPU count is computed here once (:func:`cpu_count`) for the
thread pool, the RNN row shards, the sparse kernels and the distributed launchers.

Variables that stay with the subsystem that owns them, read once per use there:
``PADDLE_HL_HOME``, ``PADDLE_HL_MAX_EXTRACT_SIZE``, ``PADDLE_HL_MAX_COMPRESSION_RATIO``
(``utils/download.py``); ``PADDLE_HL_HUB_DIR``, ``PADDLE_HL_HUB_GITHUB_URL``,
``PADDLE_HL_HUB_GITEE_URL`` (``hub``); ``PADDLE_HL_IPS``, ``PADDLE_HL_BASE_PORT``,
``PADDLE_HL_SLOTS``, ``PADDLE_HL_JOB_MONITOR`` (``distributed/launch``);
``PADDLE_HL_CHECK_COLLECTIVES``, ``PADDLE_HL_COLLECTIVE_TIMEOUT``, ``PADDLE_HL_DP_CHECK``,
``PADDLE_HL_DP_SHM`` (``distributed``); ``PADDLE_HL_PROGRESS_REPORT`` (between a launched
rank and ``hapi``); ``PADDLE_HL_TEST_DEVICE`` (the test suite).
"""

from __future__ import annotations

import os
import threading

__all__ = []

NUM_THREADS_ENV = "PADDLE_HL_NUM_THREADS"
NUMBA_ENV = "PADDLE_HL_NUMBA"
MALLOC_ENV = "PADDLE_HL_MALLOC_TUNING"
BLAS_TIMEOUT_ENV = "PADDLE_HL_BLAS_THREAD_TIMEOUT"
FUSE_CONV_BN_ENV = "PADDLE_HL_FUSE_CONV_BN"

# log2 of the CPU cycles an idle OpenBLAS worker spins before it sleeps (see backend._openblas)
DEFAULT_BLAS_TIMEOUT = 18

_values = {}
_lock = threading.RLock()


def _setting(name, parse):
    """The value of setting ``name``: set by its setter, else ``parse(environment value)``,
    read once."""
    try:
        return _values[name]
    except KeyError:
        pass
    with _lock:
        if name not in _values:
            _values[name] = parse(os.environ.get(name, "").strip())
        return _values[name]


def _flag(name, default):
    def parse(v):
        if not v:
            return default
        if v.lower() in ("1", "true", "yes", "on"):
            return True
        if v.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"{name} must be 0 or 1, got {os.environ[name]!r}")

    return parse


def cpu_count() -> int:
    """The CPUs this process may run on (its affinity mask on Linux, else ``os.cpu_count``)."""
    return _setting("cpu_count", lambda _: _cpus())


def _cpus():
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def _parse_threads(v):
    if not v:
        return cpu_count()
    try:
        n = int(v)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"{NUM_THREADS_ENV} must be a positive integer, got {v!r}")
    return n


def num_threads() -> int:
    """Threads the CPU kernels split their work over, the caller included (1: no pool)."""
    return _setting(NUM_THREADS_ENV, _parse_threads)


def set_num_threads(n: int) -> None:
    """Use ``n`` threads (the calling one included) for the CPU kernels from now on; 1 runs
    every kernel inline. Results do not depend on it."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"set_num_threads: n must be a positive int, got {n!r}")
    _values[NUM_THREADS_ENV] = n


_parse_numba = _flag(NUMBA_ENV, True)


def numba() -> bool:
    """Whether the compiled kernels are wanted (they run where numba is installed)."""
    return _setting(NUMBA_ENV, _parse_numba)


def set_numba(flag: bool) -> None:
    """Want the compiled kernels of the numba extra (True) or NumPy's forms (False)."""
    _values[NUMBA_ENV] = bool(flag)


def malloc_tuning() -> bool:
    """Whether glibc's malloc thresholds may be tuned (``PADDLE_HL_MALLOC_TUNING``)."""
    return _setting(MALLOC_ENV, lambda v: v != "0")


def _parse_timeout(v):
    if not v:
        return DEFAULT_BLAS_TIMEOUT
    try:
        n = int(v)
    except ValueError:
        n = -1
    if n != 0 and not 4 <= n <= 30:
        raise ValueError(f"{BLAS_TIMEOUT_ENV} must be 0 (leave OpenBLAS as it is) or the log2 "
                         f"of the spin cycles, an integer from 4 to 30; got {v!r}")
    return n


def blas_thread_timeout() -> int:
    """log2 of the cycles idle OpenBLAS workers spin (0: leave OpenBLAS as it is)."""
    return _setting(BLAS_TIMEOUT_ENV, _parse_timeout)


def fuse_conv_bn() -> bool:
    """Whether inference may fold batch norm into the convolution before it."""
    return _setting(FUSE_CONV_BN_ENV, lambda v: v != "0")


def set_fuse_conv_bn(flag: bool) -> None:
    """Let inference fold batch norm into the convolution before it (True) or not."""
    _values[FUSE_CONV_BN_ENV] = bool(flag)


def _after_fork_in_child():
    global _lock
    _lock = threading.RLock()  # another thread may have held it at the fork


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
