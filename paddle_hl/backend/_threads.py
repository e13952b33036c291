"""A small thread pool for the CPU backend's large NumPy kernels.

NumPy releases the GIL inside its ufunc, copy and reduction loops, so a kernel that splits its
work over the batch or channel axis and hands the pieces to threads runs them on several cores
at once (BLAS already does so for the GEMMs; everything around them -- im2col/col2im copies,
batch norm, optimizer updates -- would otherwise run on one core).

- Size: ``backend.settings.num_threads()``: the number of CPUs this process may run on, or
  the environment variable ``PADDLE_HL_NUM_THREADS`` (``1`` disables the pool: every kernel
  runs inline, as without it). :func:`set_num_threads` (public as
  ``paddle_hl.device.set_num_threads``) changes it at run time.
- Work below :data:`MIN_BYTES` (bytes touched) runs inline: waking a thread costs tens of
  microseconds, more than a small op takes.
- Fork safety: a child process (a DataLoader worker) never inherits the parent's threads; the
  pool is dropped in the child at fork and made again, lazily, on the child's first large
  kernel.
- Nesting: a task that itself calls :func:`run` runs its pieces inline.
- Shared machines: work is cut into a few more pieces than threads, and the calling thread,
  once done with its own piece, takes over every piece no worker has started yet. A worker
  that the OS is slow to wake (other processes busy on every core) then costs nothing: the
  call degrades to the one-thread time instead of waiting for it.

Every split here is over an axis whose elements are computed independently (no reduction
across pieces), so results are bit-identical with any number of threads.
"""

from __future__ import annotations

import collections
import os
import queue
import threading

from . import settings, tuning

__all__ = []

# total bytes an op must touch before it is split over threads
MIN_BYTES = tuning.value("threads.min_bytes")
# pieces per thread (see the module docstring: the caller takes over pieces not yet started)
PIECES_PER_THREAD = tuning.value("threads.pieces_per_thread")

_lock = threading.Lock()
_workers = None  # list of (thread, task queue) once made
_local = threading.local()

# threads in use including the caller (1: no pool), and its setter; idle workers beyond a
# smaller size just wait, more are made on demand
num_threads = settings.num_threads
set_num_threads = settings.set_num_threads


def _worker(tasks):
    _local.inside = True
    while True:
        item = tasks.get()
        if item is None:
            return
        fn, pending, reply = item
        while True:
            try:
                args = pending.popleft()
            except IndexError:  # none left: the caller or another worker took the rest
                break
            try:
                fn(*args)
                reply.put(None)
            except BaseException as e:  # handed to the caller, which re-raises it
                reply.put(e)


def _stop_workers():
    global _workers
    if _workers:
        for _, q in _workers:
            q.put(None)
    _workers = None


def _get_workers(n):
    global _workers
    with _lock:
        if _workers is None or len(_workers) < n:
            _stop_workers()
            made = []
            for i in range(n):
                q = queue.SimpleQueue()
                t = threading.Thread(target=_worker, args=(q,), daemon=True,
                                     name=f"paddle_hl-cpu-{i}")
                t.start()
                made.append((t, q))
            _workers = made
        return _workers


def _after_fork_in_child():
    # the parent's threads do not exist in the child: forget them (and a lock another thread
    # may have held at the fork) and make new ones on first use
    global _workers, _lock
    _workers = None
    _lock = threading.Lock()
    _local.__dict__.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def pool_alive() -> bool:
    """Whether worker threads exist in this process (for tests)."""
    return bool(_workers) and all(t.is_alive() for t, _ in _workers)


def parts(nbytes, extent):
    """How many pieces an op touching ``nbytes`` bytes, split along an axis of ``extent``,
    should run as: 1 when small, on one thread, or inside a pool task."""
    if nbytes < MIN_BYTES or extent < 2 or getattr(_local, "inside", False):
        return 1
    n = num_threads()
    return 1 if n == 1 else min(n * PIECES_PER_THREAD, extent)


def ranges(extent, n):
    """``n`` contiguous ``(lo, hi)`` ranges covering ``range(extent)`` as evenly as possible."""
    base, extra = divmod(extent, n)
    out, lo = [], 0
    for i in range(n):
        hi = lo + base + (i < extra)
        out.append((lo, hi))
        lo = hi
    return out


def run(fn, arg_list):
    """Call ``fn(*args)`` for every ``args`` in ``arg_list`` and wait for all; re-raises the
    first exception. The calling thread runs the first piece, then every piece that no pool
    worker has started; the workers take the others."""
    if len(arg_list) <= 1 or getattr(_local, "inside", False) or num_threads() == 1:
        for args in arg_list:
            fn(*args)
        return
    pending = collections.deque(arg_list[1:])
    helpers = min(num_threads() - 1, len(pending))
    reply = getattr(_local, "reply", None)
    if reply is None:
        reply = _local.reply = queue.SimpleQueue()
    for _, q in _get_workers(helpers)[:helpers]:
        q.put((fn, pending, reply))
    err = None
    taken = 0  # pieces of ``pending`` the caller removed (run, or dropped after an error)
    _local.inside = True
    try:
        fn(*arg_list[0])
        while True:
            try:
                args = pending.popleft()
            except IndexError:
                break
            taken += 1
            fn(*args)
    except BaseException as e:
        err = e
        while True:  # drop what nobody started
            try:
                pending.popleft()
            except IndexError:
                break
            taken += 1
    finally:
        _local.inside = False
    for _ in range(len(arg_list) - 1 - taken):
        e = reply.get()
        if err is None and e is not None:
            err = e
    if err is not None:
        raise err


def split(fn, extent, nbytes):
    """Run ``fn(lo, hi)`` over ``range(extent)``: one call when the op is small (see
    :func:`parts`), else one contiguous range per thread."""
    n = parts(nbytes, extent)
    if n == 1:
        fn(0, extent)
    else:
        run(fn, ranges(extent, n))


def map_items(fn, items):
    """``[fn(item) for item in items]``, the items run as pieces of :func:`run` (the caller
    takes the first and every piece no worker has started), whatever their size: for work
    known to be large (the RNN's row shards, the sparse kernels' column blocks)."""
    out = [None] * len(items)

    def one(i):
        out[i] = fn(items[i])

    run(one, [(i,) for i in range(len(items))])
    return out


def copyto(dst, src, axis=0):
    """``dst[...] = src`` (same shapes, any strides), split along ``axis``."""
    import numpy as np  # noqa: PLC0415  (NumPy only; kept local to make the module light)

    ext = dst.shape[axis] if dst.ndim else 1
    pre = (slice(None),) * axis

    def part(lo, hi):
        np.copyto(dst[pre + (slice(lo, hi),)], src[pre + (slice(lo, hi),)])

    split(part, ext, dst.nbytes * 2)


def ascontiguous(src, axis=0):
    """A C-contiguous copy of ``src`` (NumPy), the copy split along ``axis``."""
    import numpy as np  # noqa: PLC0415

    if src.flags.c_contiguous or parts(src.nbytes * 2, src.shape[axis] if src.ndim else 1) == 1:
        return np.ascontiguousarray(src)
    out = np.empty(src.shape, dtype=src.dtype)
    copyto(out, src, axis)
    return out
