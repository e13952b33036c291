"""Worker processes of the DataLoader and the shared-memory transport of their batches.

A worker receives ``(task_id, indices)`` on its own index queue, fetches and collates the samples
into a nested structure of NumPy arrays written straight into POSIX shared-memory segments, and
puts ``(task_id, payload)`` on the common result queue. The main process maps the segments (no
copy) and hands each back to its worker's pool once the arrays using it are freed, so nothing but
names and shapes travels through pickles.
"""

from __future__ import annotations

import errno
import mmap
import os
import queue
import random
import sys
import traceback
import uuid
import weakref
from multiprocessing import resource_tracker, shared_memory

import numpy as np

from ..backend import tuning

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


# A worker keeps the shared-memory segments of the batches it sent in a small pool: when the
# main process frees the last array using a segment, the segment goes back to its worker, which
# collates a later batch of the same size into it. Both sides keep their pages mapped, so a
# steady-state batch costs no page faults. The slot table (one byte per slot, shared by all
# processes) says who holds each pooled segment; each transition has a single writer.
EMPTY, LIVE, FREE, DROPPED = 0, 1, 2, 3
POOL_SLOTS = tuning.value("io.pool_slots")
INLINE_BYTES = tuning.value("io.inline_bytes")
_POPULATE = getattr(mmap, "MAP_POPULATE", 0)


class _Shm:
    """A picklable handle on one array in shared memory. ``name`` is set when the segment is
    new (the receiver opens it, keeps a descriptor and unlinks the name); ``slot`` is -1 for a
    one-shot segment that is not pooled."""

    __slots__ = ("name", "shape", "dtype", "owner", "slot", "nbytes")

    def __init__(self, name, shape, dtype, owner=-1, slot=-1, nbytes=0):
        self.name, self.shape, self.dtype = name, shape, dtype
        self.owner, self.slot, self.nbytes = owner, slot, nbytes


class _NoSpace(Exception):
    """/dev/shm cannot hold another segment: the batch travels in the pickle instead."""


def _create_segment(nbytes):
    """A new named segment of ``nbytes`` and this process's mapping of it. The space is
    reserved up front, so a full /dev/shm (a container's 64 MB default) is an error here, not
    a SIGBUS when the pages are first written."""
    name = f"psm_hl_{os.getpid()}_{uuid.uuid4().hex[:12]}"
    path = os.path.join("/dev/shm", name)
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
    try:
        try:
            os.posix_fallocate(fd, 0, nbytes)
        except OSError as e:
            if e.errno in (errno.ENOSPC, errno.ENOMEM, errno.EFBIG):
                os.unlink(path)
                raise _NoSpace(path) from e
            os.ftruncate(fd, nbytes)  # no fallocate on this filesystem
        mapping = mmap.mmap(fd, nbytes, flags=mmap.MAP_SHARED | _POPULATE)
    finally:
        os.close(fd)
    return name, mapping


class ShmAllocator:
    """Allocates batch arrays directly in shared memory (Linux ``/dev/shm``), so a worker's
    collation writes each batch once, into memory the main process then maps. With a slot
    ``table`` it reuses the segments the main process has handed back."""

    def __init__(self, table=None, owner=-1, keep=4):
        self._made = {}  # id(array) -> (array, _Shm), allocated but not sent yet
        self._table, self._owner, self._keep = table, owner, keep
        self._base = owner * POOL_SLOTS
        self._segs = {}  # slot -> (mapping, nbytes): this worker's pooled segments

    def __call__(self, shape, dtype):
        dtype = np.dtype(dtype)
        n = int(np.prod(shape))
        nbytes = n * dtype.itemsize
        if nbytes < INLINE_BYTES or dtype.kind == "O":
            return np.empty(shape, dtype)
        try:
            slot, mapping, name = self._segment(nbytes)
        except _NoSpace:
            return np.empty(shape, dtype)
        arr = np.frombuffer(mapping, dtype=dtype, count=n).reshape(shape)
        self._made[id(arr)] = (arr, _Shm(name, tuple(shape), dtype.str, self._owner, slot,
                                         nbytes))
        return arr

    def _segment(self, nbytes):
        t, base = self._table, self._base
        if t is not None:
            free = [s for s in self._segs if t[base + s] == FREE]
            for s in free:
                if self._segs[s][1] == nbytes:
                    t[base + s] = LIVE
                    return s, self._segs[s][0], None
            for s in free[max(self._keep - 1, 0):]:  # bound what the pool holds
                self._drop(s)
            for s in range(POOL_SLOTS):
                if s not in self._segs and t[base + s] == EMPTY:
                    name, mapping = _create_segment(nbytes)
                    self._segs[s] = (mapping, nbytes)
                    t[base + s] = LIVE
                    return s, mapping, name
        name, mapping = _create_segment(nbytes)
        return -1, mapping, name

    def _drop(self, slot, state=DROPPED):
        mapping, _ = self._segs.pop(slot)
        try:
            mapping.close()
        except BufferError:  # an array of this worker still uses it: freed with that array
            pass
        self._table[self._base + slot] = state

    def handle(self, arr):
        """The shared-memory handle of an array this allocator made (and forget it)."""
        entry = self._made.pop(id(arr), None)
        return None if entry is None or entry[0] is not arr else entry[1]

    def discard(self):
        """Give back whatever was allocated but never sent (a failed collation)."""
        for _, h in self._made.values():
            if h.name is not None:  # never seen by the main process
                _unlink_name(h.name)
                if h.slot >= 0:
                    self._drop(h.slot, EMPTY)
            elif h.slot >= 0:
                self._table[self._base + h.slot] = FREE
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


def _release(table, key):
    if table[key] == LIVE:
        table[key] = FREE


class ShmReceiver:
    """The main process's side of the transport: maps every array of a payload without a copy.
    A pooled segment is opened once (its name is unlinked at once) and mapped afresh for each
    batch; when the last array using that mapping is freed, the segment goes back to its
    worker. ``close()`` drops the descriptors; arrays still alive keep their own mappings."""

    def __init__(self, table):
        self.table = table
        self.fds = {}

    def receive(self, obj):
        if isinstance(obj, _Shm):
            return self._map(obj) if obj.slot >= 0 and self.table is not None else \
                _map_or_copy(obj)
        if isinstance(obj, dict):
            return {k: self.receive(v) for k, v in obj.items()}
        if isinstance(obj, (list, tuple)):
            return type(obj)(self.receive(v) for v in obj) if not _is_namedtuple(obj) else \
                type(obj)(*(self.receive(v) for v in obj))
        return obj

    def _map(self, h):
        key = h.owner * POOL_SLOTS + h.slot
        if h.name is not None:
            self._reap(h.owner)
            old = self.fds.pop(key, None)
            if old is not None:
                os.close(old)
            path = os.path.join("/dev/shm", h.name)
            self.fds[key] = os.open(path, os.O_RDWR)
            os.unlink(path)  # the descriptor keeps the segment; no name is left behind
        mapping = mmap.mmap(self.fds[key], h.nbytes, flags=mmap.MAP_SHARED | _POPULATE)
        weakref.finalize(mapping, _release, self.table, key)
        dtype = np.dtype(h.dtype)
        return np.frombuffer(mapping, dtype=dtype, count=h.nbytes // dtype.itemsize).reshape(
            h.shape)

    def _reap(self, owner):
        """Close the descriptors of segments the worker has dropped from its pool."""
        t, base = self.table, owner * POOL_SLOTS
        for s in range(POOL_SLOTS):
            if t[base + s] == DROPPED:
                fd = self.fds.pop(base + s, None)
                if fd is not None:
                    os.close(fd)
                t[base + s] = EMPTY

    def close(self):
        for fd in self.fds.values():
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds.clear()


def _to_shm(obj):
    """A collated batch made transportable: its large arrays as shared-memory handles."""
    if isinstance(obj, np.ndarray) and (obj.nbytes < INLINE_BYTES or obj.dtype.kind == "O"):
        return obj
    if isinstance(obj, np.ndarray) and _allocator is not None:
        handle = _allocator.handle(obj)
        if handle is not None:  # collated straight into shared memory: nothing to copy
            return handle
        out = _allocator(obj.shape, obj.dtype)  # e.g. a user collate_fn's output
        out[...] = obj
        handle = _allocator.handle(out)
        return obj if handle is None else handle
    if isinstance(obj, np.ndarray):  # no /dev/shm: Python's portable shared memory
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


def _map_or_copy(obj):
    """A one-shot segment: on Linux mapped (no copy) and unlinked at once, its pages freed
    with the array; elsewhere copied out."""
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
    """Unlink the segments of a payload that will never be read (loader shut down early); a
    reused pooled segment has no name left and goes with its worker and the receiver."""
    if isinstance(obj, _Shm):
        if obj.name is None:
            return
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


def worker_loop(job, index_queue, result_queue, done_event, worker_id, num_workers, seed,
                use_shm, iterable, table=None):
    """The body of one worker process. ``job`` is ``("pickled", bytes)`` (``_pickle.dumps``
    of the dataset, the fetcher and worker_init_fn) or ``("objects", (dataset, fetch,
    worker_init_fn))`` when the worker was forked."""
    global _worker_info, _allocator
    try:
        kind, what = job
        if kind == "pickled":
            from . import _pickle

            what = _pickle.loads(what)
        dataset, fetch, worker_init_fn = what
        _worker_info = WorkerInfo(worker_id, num_workers, dataset, seed)
        if use_shm and os.path.isdir("/dev/shm"):
            _allocator = ShmAllocator(table, worker_id)
        random.seed(seed)
        np.random.seed(seed % (2 ** 32))
        from ..framework import place as _place
        from ..framework import random as _random

        # a worker makes CPU tensors, as Paddle's do: the batches reach the GPU in the main
        # process
        _place.set_device("cpu")

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


def worker_main(*args):
    """The process target: run the loop, flush what it sent, and leave without the
    interpreter's slow teardown (the main process joins workers at the end of every epoch)."""
    worker_loop(*args)
    result_queue = args[2]
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    result_queue.close()
    result_queue.join_thread()
    os._exit(0)
