"""Worker processes of the DataLoader and the shared-memory transport of their batches.

A worker receives ``(task_id, indices)`` on its own index queue, fetches and collates the samples
into a nested structure of NumPy arrays, moves every array into a POSIX shared-memory segment
and puts ``(task_id, payload)`` on the common result queue. The main process copies the arrays
out and unlinks the segments, so nothing but names and shapes travels through pickles.
"""

from __future__ import annotations

import mmap
import os
import queue
import random
import sys
import traceback
import uuid
from multiprocessing import resource_tracker, shared_memory

import numpy as np

__all__ = []


class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker: id, num_workers, dataset, seed."""

    def __init__(self, id, num_workers, dataset, seed):  # noqa: A002  (Paddle's name)
        self.id = id
        self.num_workers = num_workers
        self.dataset = dataset
        self.seed = seed

    def __repr__(self):
        return (f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, "
                f"seed={self.seed})")


_worker_info = None


def get_worker_info():
    """Inside a DataLoader worker: its WorkerInfo; in the main process: None."""
    return _worker_info


class WorkerError:
    """An exception raised in a worker, carried to the main process with its traceback."""

    def __init__(self, worker_id, exc):
        self.worker_id = worker_id
        self.type_name = type(exc).__name__
        self.text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))

    def reraise(self):
        raise RuntimeError(f"DataLoader worker {self.worker_id} raised {self.type_name}:\n"
                           f"{self.text}")


class _Shm:
    """A picklable handle on one array moved into shared memory."""

    __slots__ = ("name", "shape", "dtype")

    def __init__(self, name, shape, dtype):
        self.name, self.shape, self.dtype = name, shape, dtype


class ShmAllocator:
    """Allocates batch arrays directly in shared memory (Linux ``/dev/shm``), so a worker's
    collation writes each batch once, into memory the main process then maps."""

    def __init__(self):
        self._made = {}  # id(array) -> (array, _Shm)

    def __call__(self, shape, dtype):
        dtype = np.dtype(dtype)
        n = int(np.prod(shape))
        if n == 0 or dtype.kind == "O":
            return np.empty(shape, dtype)
        name = f"psm_hl_{os.getpid()}_{uuid.uuid4().hex[:12]}"
        fd = os.open(os.path.join("/dev/shm", name), os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        try:
            os.ftruncate(fd, n * dtype.itemsize)
            mapping = mmap.mmap(fd, n * dtype.itemsize)
        finally:
            os.close(fd)
        arr = np.frombuffer(mapping, dtype=dtype, count=n).reshape(shape)
        self._made[id(arr)] = (arr, _Shm(name, tuple(shape), dtype.str))
        return arr

    def handle(self, arr):
        """The shared-memory handle of an array this allocator made (and forget it)."""
        entry = self._made.pop(id(arr), None)
        return None if entry is None or entry[0] is not arr else entry[1]

    def discard(self):
        """Unlink whatever was allocated but never sent (a failed collation)."""
        for _, h in self._made.values():
            _unlink_name(h.name)
        self._made.clear()


_allocator = None


def allocator():
    """The shared-memory allocator inside a worker that uses shared memory, else None."""
    return _allocator


def _unlink_name(name):
    try:
        os.unlink(os.path.join("/dev/shm", name.lstrip("/")))
    except FileNotFoundError:
        pass


def _to_shm(obj):
    if isinstance(obj, np.ndarray) and _allocator is not None:
        handle = _allocator.handle(obj)
        if handle is not None:  # collated straight into shared memory: nothing to copy
            return handle
    if isinstance(obj, np.ndarray) and obj.nbytes > 0 and obj.dtype.kind != "O":
        seg = shared_memory.SharedMemory(create=True, size=obj.nbytes)
        np.ndarray(obj.shape, obj.dtype, buffer=seg.buf)[...] = obj
        name = seg.name
        seg.close()
        # the main process unlinks it; keep this process's tracker from doing it too
        resource_tracker.unregister("/" + name if not name.startswith("/") else name,
                                    "shared_memory")
        return _Shm(name, obj.shape, obj.dtype.str)
    if isinstance(obj, dict):
        return {k: _to_shm(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_shm(v) for v in obj) if not _is_namedtuple(obj) else \
            type(obj)(*(_to_shm(v) for v in obj))
    return obj


def _is_namedtuple(obj):
    return isinstance(obj, tuple) and hasattr(obj, "_fields")


def from_shm(obj):
    """Arrays out of their shared-memory segments, which are unlinked at once.

    On Linux the segment is mapped into this process and the array uses the mapping directly
    (no copy); the pages are freed when the array is. Elsewhere the data are copied out.
    """
    if isinstance(obj, _Shm):
        return _map_or_copy(obj)
    if isinstance(obj, dict):
        return {k: from_shm(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(from_shm(v) for v in obj) if not _is_namedtuple(obj) else \
            type(obj)(*(from_shm(v) for v in obj))
    return obj


def _map_or_copy(obj):
    dtype = np.dtype(obj.dtype)
    path = os.path.join("/dev/shm", obj.name.lstrip("/"))
    if os.path.exists(path):
        fd = os.open(path, os.O_RDWR)
        try:
            size = os.fstat(fd).st_size
            mapping = mmap.mmap(fd, size)
        finally:
            os.close(fd)
            os.unlink(path)  # the mapping stays valid; the name is gone
        n = int(np.prod(obj.shape))
        # the array keeps the mmap alive; it is unmapped when the array is freed
        return np.frombuffer(mapping, dtype=dtype, count=n).reshape(obj.shape)
    seg = shared_memory.SharedMemory(name=obj.name)
    try:
        arr = np.ndarray(obj.shape, dtype, buffer=seg.buf).copy()
    finally:
        seg.close()
        _unlink(seg)
    return arr


def _unlink(seg):
    try:
        seg.unlink()
    except FileNotFoundError:
        pass


def discard_shm(obj):
    """Unlink the segments of a payload that will never be read (loader shut down early)."""
    if isinstance(obj, _Shm):
        try:
            seg = shared_memory.SharedMemory(name=obj.name)
            seg.close()
            _unlink(seg)
        except FileNotFoundError:
            pass
    elif isinstance(obj, dict):
        for v in obj.values():
            discard_shm(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            discard_shm(v)


def worker_loop(dataset, fetch, index_queue, result_queue, done_event, worker_id, num_workers,
                seed, worker_init_fn, use_shm, iterable):
    """The body of one worker process."""
    global _worker_info, _allocator
    try:
        _worker_info = WorkerInfo(worker_id, num_workers, dataset, seed)
        if use_shm and os.path.isdir("/dev/shm"):
            _allocator = ShmAllocator()
        random.seed(seed)
        np.random.seed(seed % (2 ** 32))
        from ..framework import random as _random

        _random.seed(seed)
        if worker_init_fn is not None:
            worker_init_fn(worker_id)
        it = iter(dataset) if iterable else None
    except Exception as e:  # the init failed: report it on the first task
        init_error = WorkerError(worker_id, e)
    else:
        init_error = None
    while not done_event.is_set():
        try:
            task = index_queue.get(timeout=0.5)
        except queue.Empty:
            if os.getppid() == 1:  # the main process is gone
                break
            continue
        if task is None:
            break
        task_id, indices = task
        if init_error is not None:
            result_queue.put((task_id, init_error))
            continue
        try:
            batch = fetch(dataset, indices, it)
            payload = _to_shm(batch) if use_shm else batch
        except StopIteration:
            payload = StopIteration
        except Exception as e:
            payload = WorkerError(worker_id, e)
        finally:
            if _allocator is not None:
                _allocator.discard()
        result_queue.put((task_id, payload))
    sys.stdout.flush()
