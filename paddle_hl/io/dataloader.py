"""DataLoader: batching, collation and multi-process prefetching."""

from __future__ import annotations

import itertools
import multiprocessing as mp
import numbers
import queue
import time
import warnings
import weakref
from collections.abc import Mapping, Sequence

import numpy as np

from .. import backend
from ..framework import place as _place
from ..framework.tensor import Tensor, _wrap
from . import _forkserver, _pickle, _worker
from .dataset import IterableDataset
from .sampler import BatchSampler

__all__ = []


# ---------------------------------------------------------------- collation

def _stack(arrays):
    """np.stack, written straight into shared memory inside a worker that uses it."""
    alloc = _worker.allocator()
    if alloc is None or any(a.shape != arrays[0].shape for a in arrays):
        return np.stack(arrays)
    out = alloc((len(arrays),) + arrays[0].shape, np.result_type(*arrays))
    return np.stack(arrays, out=out)


def _check_shapes(arrays, path):
    """Name the field, the entries and their shapes when samples cannot be stacked."""
    s0 = arrays[0].shape
    for i, a in enumerate(arrays):
        if a.shape != s0:
            raise ValueError(
                f"default_collate_fn: cannot stack field {path} of the batch: it has shape "
                f"{list(s0)} at entry 0 and {list(a.shape)} at entry {i}; every sample in a "
                "batch must have equal shapes (pad or resize them in the dataset, or pass a "
                "collate_fn)")


def _collate_np(batch, path="sample"):
    """Stack a list of samples into NumPy arrays, recursing into dicts and sequences."""
    first = batch[0]
    if isinstance(first, Tensor):
        # the raw arrays: _stack copies them into the batch anyway
        arrays = [backend.to_numpy(b._data) for b in batch]
        _check_shapes(arrays, path)
        return _stack(arrays)
    if isinstance(first, np.ndarray):
        _check_shapes(batch, path)
        return _stack(batch)
    if isinstance(first, (bool, np.bool_)):
        return np.asarray(batch, dtype=np.bool_)
    if isinstance(first, numbers.Number) or isinstance(first, np.generic):
        arr = np.asarray(batch)
        # NumPy scalars keep their dtype (np.int32 -> int32, np.float32 -> float32), as in
        # Paddle; Python ints are int64 on every platform
        if arr.dtype.kind in "iu" and arr.dtype != np.int64 and all(type(b) is int for b in batch):
            arr = arr.astype(np.int64)
        return arr
    if isinstance(first, (str, bytes)):
        return list(batch)
    if isinstance(first, Mapping):
        return {k: _collate_np([b[k] for b in batch], f"{path}[{k!r}]") for k in first}
    if isinstance(first, Sequence):
        n = len(first)
        if any(len(b) != n for b in batch):
            raise RuntimeError("default_collate_fn: every sample in a batch must have the same "
                               f"number of fields; got {[len(b) for b in batch]}")
        return [_collate_np(list(f), f"{path}[{i}]") for i, f in enumerate(zip(*batch))]
    raise TypeError(f"default_collate_fn: cannot batch samples of type {type(first).__name__};"
                    " expected numbers, numpy arrays, Tensors, str, dicts or sequences of them")


def _to_tensors(obj):
    """Turn the NumPy leaves of a collated batch into Tensors: no copy on the CPU; on a GPU
    device, copies through pinned memory that overlap with the GPU's work (as Paddle's
    DataLoader places batches on the current device)."""
    if isinstance(obj, np.ndarray):
        arr = obj if obj.dtype.kind != "u" or obj.dtype == np.uint8 else obj.astype(np.int64)
        where = _place.current_place()
        if where.kind == "gpu":
            arr = backend.to_gpu(arr, where.index)
        return _wrap(arr)
    if isinstance(obj, dict):
        return {k: _to_tensors(v) for k, v in obj.items()}
    if isinstance(obj, list) and obj and not isinstance(obj[0], (str, bytes)):
        return [_to_tensors(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_to_tensors(v) for v in obj)
    return obj


def default_collate_fn(batch):
    """Collate a list of samples: arrays/tensors/numbers are stacked into Tensors, strings
    gathered into lists, dicts and sequences collated field by field."""
    return _to_tensors(_collate_np(batch))


def default_convert_fn(sample):
    """The identity on structure, with NumPy arrays turned into Tensors (batch_size=None)."""
    if isinstance(sample, np.ndarray):
        return _wrap(sample)
    if isinstance(sample, np.generic):
        return _wrap(np.asarray(sample))
    if isinstance(sample, Mapping):
        return {k: default_convert_fn(v) for k, v in sample.items()}
    if isinstance(sample, (list, tuple)) and not isinstance(sample, str):
        return [default_convert_fn(v) for v in sample]
    return sample


def _numpy_leaves(obj):
    """Collated output of a user collate_fn, made transportable: Tensors become arrays."""
    if isinstance(obj, Tensor):
        return obj.numpy()
    if isinstance(obj, dict):
        return {k: _numpy_leaves(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_numpy_leaves(v) for v in obj)
    return obj


# ---------------------------------------------------------------- fetchers

class _MapFetch:
    """Fetch and collate a batch of indices (picklable, runs in workers)."""

    def __init__(self, collate_fn, auto_collation):
        self.collate_fn = collate_fn
        self.auto = auto_collation

    def __call__(self, dataset, indices, _it):
        if not self.auto:
            sample = dataset[indices]
            return _numpy_leaves(sample) if self.collate_fn is None else \
                _numpy_leaves(self.collate_fn(sample))
        samples = [dataset[i] for i in indices]
        if self.collate_fn is None:
            return _collate_np(samples)
        return _numpy_leaves(self.collate_fn(samples))


class _IterFetch:
    def __init__(self, collate_fn, batch_size, drop_last):
        self.collate_fn = collate_fn
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __call__(self, dataset, _indices, it):
        if self.batch_size is None:
            sample = next(it)
            return _numpy_leaves(sample if self.collate_fn is None else self.collate_fn(sample))
        samples = list(itertools.islice(it, self.batch_size))
        if not samples or (self.drop_last and len(samples) < self.batch_size):
            raise StopIteration
        if self.collate_fn is None:
            return _collate_np(samples)
        return _numpy_leaves(self.collate_fn(samples))


# ---------------------------------------------------------------- the loader

class DataLoader:
    """Iterate over a dataset in batches, optionally with worker processes.

    Args:
        dataset (Dataset|IterableDataset): the data.
        return_list (bool): yield lists of Tensors (the only mode in dynamic graph).
        batch_sampler (BatchSampler, optional): overrides batch_size/shuffle/drop_last.
        batch_size (int|None): samples per batch; None yields single samples.
        shuffle (bool): shuffle every epoch.
        drop_last (bool): drop the last incomplete batch.
        collate_fn (callable, optional): turns a list of samples into a batch.
        num_workers (int): worker processes; 0 loads in the main process. Workers are forked
            from a small server process, never from this one (a fork beside a thread in
            a BLAS call can hang); the dataset, collate_fn and worker_init_fn reach them
            pickled once per iterator, code from ``__main__`` or a notebook by value.
        use_shared_memory (bool): move batches from workers through shared memory.
        prefetch_factor (int): batches each worker prepares ahead.
        timeout (float): seconds to wait for a batch before raising; 0 waits forever.
        worker_init_fn (callable, optional): called with the worker id in each worker.
        persistent_workers (bool): keep the workers alive between epochs.

    Example:
        >>> loader = paddle.io.DataLoader(dataset, batch_size=32, shuffle=True)
        >>> for images, labels in loader:
        ...     ...
    """

    # Paddle's loader reports whether it pins host memory for GPU copies; this one never does
    pin_memory = False

    def __init__(self, dataset, feed_list=None, places=None, return_list=True,
                 batch_sampler=None, batch_size=1, shuffle=False, drop_last=False,
                 collate_fn=None, num_workers=0, use_buffer_reader=True, prefetch_factor=2,
                 use_shared_memory=True, timeout=0, worker_init_fn=None,
                 persistent_workers=False):
        self.dataset = dataset
        self.return_list = return_list
        self.collate_fn = collate_fn
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(f"DataLoader: num_workers must be a non-negative int, got "
                             f"{num_workers!r}")
        if timeout < 0:
            raise ValueError(f"DataLoader: timeout must be >= 0, got {timeout}")
        if not isinstance(prefetch_factor, int) or prefetch_factor <= 0:
            raise ValueError(f"DataLoader: prefetch_factor must be a positive int, got "
                             f"{prefetch_factor!r}")
        self.num_workers = num_workers
        if num_workers > 0:
            _forkserver.start_server_soon()  # its start overlaps what runs before iter()
        self.prefetch_factor = prefetch_factor
        self.use_shared_memory = bool(use_shared_memory)
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.persistent_workers = bool(persistent_workers) and num_workers > 0
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if batch_sampler is not None:
                raise ValueError("DataLoader: an IterableDataset takes no batch_sampler")
            if shuffle:
                raise ValueError("DataLoader: an IterableDataset cannot be shuffled")
            self.batch_sampler = None
            self.batch_size = batch_size
            self.drop_last = drop_last
        elif batch_sampler is not None:
            if batch_size != 1 or shuffle or drop_last:
                raise ValueError("DataLoader: batch_sampler is mutually exclusive with "
                                 "batch_size, shuffle and drop_last")
            self.batch_sampler = batch_sampler
            self.batch_size = getattr(batch_sampler, "batch_size", None)
            self.drop_last = getattr(batch_sampler, "drop_last", False)
        elif batch_size is None:
            self.batch_sampler = None
            self.batch_size = None
            self.drop_last = False
            self._shuffle = shuffle
        else:
            if not isinstance(batch_size, int) or batch_size <= 0:
                raise ValueError(f"DataLoader: batch_size must be a positive int or None, got "
                                 f"{batch_size!r}")
            self.batch_sampler = BatchSampler(dataset=dataset, batch_size=batch_size,
                                              shuffle=shuffle, drop_last=drop_last)
            self.batch_size = batch_size
            self.drop_last = drop_last
        self._persistent_iter = None

    def __len__(self):
        if self._iterable:
            raise TypeError("DataLoader: a loader over an IterableDataset has no length")
        if self.batch_sampler is None:
            return len(self.dataset)
        return len(self.batch_sampler)

    def _index_iter(self):
        if self._iterable:
            return itertools.count()
        if self.batch_sampler is not None:
            return iter(self.batch_sampler)
        from .sampler import RandomSampler, SequenceSampler

        s = RandomSampler(self.dataset) if getattr(self, "_shuffle", False) else \
            SequenceSampler(self.dataset)
        return iter(s)

    def _fetcher(self):
        if self._iterable:
            return _IterFetch(self.collate_fn, self.batch_size, self.drop_last)
        return _MapFetch(self.collate_fn, self.batch_sampler is not None)

    def __iter__(self):
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        if self.persistent_workers:
            if self._persistent_iter is None:
                self._persistent_iter = _MultiProcessIter(self)
            else:
                self._persistent_iter._reset()
            return self._persistent_iter
        return _MultiProcessIter(self)

    def __call__(self):
        return self.__iter__()


class _SingleProcessIter:
    def __init__(self, loader):
        self._loader = loader
        self._indices = loader._index_iter()
        self._fetch = loader._fetcher()
        self._it = iter(loader.dataset) if loader._iterable else None
        self._auto = loader.batch_sampler is not None or (loader._iterable and
                                                          loader.batch_size is not None)

    def __iter__(self):
        return self

    def __next__(self):
        idx = next(self._indices)
        batch = self._fetch(self._loader.dataset, idx, self._it)
        if not self._auto and self._loader.collate_fn is None:
            return default_convert_fn(batch)
        return _to_tensors(batch)

    def __len__(self):
        return len(self._loader)


_fork_warned = []


def _worker_start(loader, fetch):
    """(context, Process class, job) for starting ``loader``'s workers.

    Workers start from paddle_hl's fork server (see ``_forkserver``: forking the main process
    hangs when another thread is inside an OpenBLAS call) and receive the dataset, the fetcher
    and worker_init_fn pickled once (``_pickle``: ``__main__`` code by value). A dataset that
    cannot be pickled (an open file handle, a lock, a generator ...) falls back to forking the
    main process, with a warning, as before; so does a platform without fork servers where
    fork exists. Elsewhere (Windows) the workers are spawned.
    """
    what = (loader.dataset, fetch, loader.worker_init_fn)
    if _forkserver.available():
        try:
            job = ("pickled", _pickle.dumps(what))
        except Exception as e:  # noqa: BLE001  (anything pickling can raise)
            reason = f"{type(e).__name__}: {e}"
        else:
            return _forkserver.get_context(), _forkserver.WorkerProcess, job
    else:
        reason = "this platform has no fork server"
    if "fork" in mp.get_all_start_methods():
        if not _fork_warned:
            _fork_warned.append(True)
            warnings.warn(
                f"DataLoader: the dataset cannot be sent to worker processes ({reason}), so "
                "the workers are forked from this process; a fork while another thread runs "
                "a NumPy/OpenBLAS matrix product can hang. Make the dataset picklable (open "
                "files in __getitem__ or worker_init_fn) to start workers safely.",
                RuntimeWarning, stacklevel=4)
        ctx = mp.get_context("fork")
        return ctx, ctx.Process, ("objects", what)
    ctx = mp.get_context()
    return ctx, ctx.Process, ("objects", what)


class _MultiProcessIter:
    """Prefetching iterator over worker processes; batches come back in sampler order."""

    _POLL = 0.2

    def __init__(self, loader):
        self._loader = loader
        n = loader.num_workers
        fetch = loader._fetcher()
        ctx, process, job = _worker_start(loader, fetch)
        self._result_queue = ctx.Queue()
        self._done = ctx.Event()
        self._index_queues = []
        self._workers = []
        from ..framework import random as _random
        from ..framework.place import CPUPlace

        base_seed = int(_random.generator(CPUPlace()).integers(0, 2 ** 62))
        table = ctx.RawArray("B", n * _worker.POOL_SLOTS) if loader.use_shared_memory else None
        self._receiver = _worker.ShmReceiver(table)
        for wid in range(n):
            iq = ctx.Queue()
            w = process(target=_worker.worker_main,
                        args=(job, iq, self._result_queue, self._done, wid, n, base_seed + wid,
                              loader.use_shared_memory, loader._iterable, table),
                        daemon=True)
            w.start()
            self._index_queues.append(iq)
            self._workers.append(w)
        self._shutdown = False
        self._buffer = {}  # out-of-order payloads; shut-down unlinks what is left in it
        self._finalizer = weakref.finalize(self, _shutdown_workers, self._workers,
                                           self._index_queues, self._result_queue, self._done,
                                           self._buffer, self._receiver)
        self._reset()

    def _reset(self):
        self._indices = self._loader._index_iter()
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_worker = {}
        self._buffer.clear()
        self._worker_cycle = itertools.cycle(range(len(self._workers)))
        self._exhausted = False
        self._active_workers = set(range(len(self._workers)))
        for _ in range(self._loader.prefetch_factor * len(self._workers)):
            self._send()

    def _send(self):
        if self._exhausted:
            return
        if self._loader._iterable:
            if not self._active_workers:
                return
            wid = next(self._worker_cycle)
            while wid not in self._active_workers:
                wid = next(self._worker_cycle)
            idx = None
        else:
            try:
                idx = next(self._indices)
            except StopIteration:
                self._exhausted = True
                return
            wid = next(self._worker_cycle)
        self._index_queues[wid].put((self._send_idx, idx))
        self._task_worker[self._send_idx] = wid
        self._send_idx += 1

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._loader)

    def __next__(self):
        while True:
            if self._rcvd_idx >= self._send_idx:
                if not self._loader.persistent_workers:
                    self._close()
                raise StopIteration
            if self._rcvd_idx in self._buffer:
                payload = self._buffer.pop(self._rcvd_idx)
            else:
                payload = self._get(self._rcvd_idx)
                if payload is None:
                    continue
            task = self._rcvd_idx
            self._rcvd_idx += 1
            if payload is StopIteration:
                # an iterable dataset's worker ran dry: it gets no more tasks
                self._active_workers.discard(self._task_worker.pop(task, None))
                self._send()
                continue
            self._task_worker.pop(task, None)
            if isinstance(payload, _worker.WorkerError):
                self._close()
                payload.reraise()
            self._send()
            batch = self._receiver.receive(payload) if self._loader.use_shared_memory else \
                payload
            if self._loader.batch_sampler is None and not self._loader._iterable and \
                    self._loader.collate_fn is None:
                return default_convert_fn(batch)
            return _to_tensors(batch)

    def _get(self, want):
        """Wait for task ``want``; buffer others. Checks worker health and the timeout."""
        timeout = self._loader.timeout
        start = time.monotonic()
        while True:
            try:
                task, payload = self._result_queue.get(timeout=self._POLL)
            except queue.Empty:
                dead = [w for w in self._workers if not w.is_alive()]
                if dead:
                    codes = ", ".join(f"pid {w.pid} exit code {w.exitcode}" for w in dead)
                    self._close()
                    raise RuntimeError(
                        f"DataLoader worker(s) exited unexpectedly ({codes})") from None
                if timeout and time.monotonic() - start > timeout:
                    self._close()
                    raise RuntimeError(f"DataLoader timed out: no batch arrived from the "
                                       f"workers in {timeout} seconds") from None
                continue
            if task == want:
                return payload
            self._buffer[task] = payload

    def _close(self):
        if not self._shutdown:
            self._shutdown = True
            self._finalizer()

    def __del__(self):
        try:
            self._close()
        except Exception:
            pass


def _shutdown_workers(workers, index_queues, result_queue, done, buffered, receiver):
    """Stop the workers, then unlink every shared-memory batch nobody will read."""
    done.set()
    for q in index_queues:
        try:
            q.put(None)
        except (OSError, ValueError):
            pass
    deadline = time.monotonic() + 1
    for w in workers:
        w.join(timeout=max(0.0, deadline - time.monotonic()))
    for w in workers:
        if w.is_alive():
            w.terminate()
            w.join(timeout=1)
    # workers that exited normally flushed their queues: what is left is already in the pipe
    _drain(result_queue, 0.05 if any(w.exitcode != 0 for w in workers) else 0.0)
    for payload in buffered.values():
        _worker.discard_shm(payload)
    buffered.clear()
    receiver.close()
    for q in index_queues + [result_queue]:
        try:
            q.cancel_join_thread()
            q.close()
        except (OSError, ValueError):
            pass


def _drain(result_queue, wait):
    while True:
        try:
            _, payload = result_queue.get(timeout=wait) if wait else result_queue.get_nowait()
        except (queue.Empty, OSError, ValueError, EOFError):
            return
        _worker.discard_shm(payload)
