"""DataParallel and the trainer environment."""

from __future__ import annotations

import contextlib
import os
import socket
import weakref

import numpy as np

from .. import backend
from ..framework import state
from ..framework.tensor import is_lazy_zero, writable
from ..nn.layer.layers import Layer
from . import _comm, _nccl, _shm
from . import collective as _coll
from .collective import ParallelEnv  # noqa: F401  (paddle.distributed.parallel.ParallelEnv)

__all__ = []

DEBUG_ENV = "PADDLE_HL_DP_CHECK"


def _debug_buckets() -> bool:
    """Whether every gradient bucket is compared across ranks before it is summed
    (``PADDLE_HL_DP_CHECK=1``; off by default: it costs one small all-gather per bucket)."""
    value = os.environ.get(DEBUG_ENV, "0").strip().lower()
    if value in ("", "0", "false", "off", "no"):
        return False
    if value in ("1", "true", "on", "yes"):
        return True
    raise ValueError(f"paddle_hl.distributed.DataParallel: {DEBUG_ENV} must be 0 or 1, got "
                     f"{value!r}")


def _xp(on_gpu):
    """The array module of a gradient bucket: the GPU backend's or NumPy."""
    return backend.gpu_backend().xp if on_gpu else np


def get_rank(group=None) -> int:
    """This process's rank (0 when not launched in parallel)."""
    return _coll.get_rank(group)


def get_world_size(group=None) -> int:
    """The number of trainer processes (1 when not launched in parallel)."""
    return _coll.get_world_size(group)


def init_parallel_env():
    """Initialise the parallel environment (see :func:`paddle_hl.distributed.init_parallel_env`)."""
    return _coll.init_parallel_env()


class _Reducer:
    """All-reduces the gradients of a DataParallel layer in buckets while backward runs.

    Parameters are bucketed in reverse order of registration (roughly the order backward
    finishes them); a bucket holds parameters of one dtype and one device. Each pass gives a
    bucket a new flat buffer: a parameter's final gradient goes straight into it, divided by
    the number of ranks (``absorb``, called by the engine), so the all-reduce's sum is the
    average; the bucket is all-reduced (non-blocking, in place) as soon as all its parameters'
    gradients are final, and the pass's end waits for the buckets and makes the gradients
    views of them. Parameters that got no gradient on this rank count as zeros, so every rank
    takes part in every bucket.

    Buckets of GPU parameters stay on the GPU: they are summed by NCCL on a stream of their
    own, which waits for the kernels that computed the gradients and which the current stream
    waits for at the end of the pass, so nothing goes through the host. Without NCCL they go
    through host memory and MPI. Buckets of CPU parameters live in memory shared by the ranks
    when the whole group runs on one machine (see ``_shm``): each rank averages its slice of
    every rank's bucket as soon as all have packed it, and the division by the number of ranks
    happens there instead of while packing. Across machines with the same number of ranks on
    each, the buckets are shared within each machine and the slices are summed across machines
    by MPI (hierarchically, see ``_shm``); otherwise (``PADDLE_HL_DP_SHM=0``, uneven machines)
    they are summed by MPI's non-blocking all-reduce, in place on the flat float buffer; MPI
    advances it while this process is in an MPI call. Either way, every finished gradient also
    polls the buckets in flight.
    """

    def __init__(self, params, group, bucket_mb, last_bucket_mb):
        self.group = group
        self.params = params
        self.index = {id(p): i for i, p in enumerate(params)}
        # Groups are formed in registration order, the first (the parameters nearest the
        # input) holding at most ``last_bucket_mb``: backward finishes those gradients last,
        # so a small group leaves little to send once backward has ended. Buckets are then
        # numbered in the order backward fills them (the output side first).
        groups = []
        cur, size = [], 0
        limit = last_bucket_mb * (1 << 20)
        for i, p in enumerate(params):
            nbytes = int(np.prod(p.shape, dtype=np.int64)) * p._data.dtype.itemsize
            if cur and (size + nbytes > limit or _kind(p) != _kind(params[cur[0]])):
                groups.append(cur)
                cur, size, limit = [], 0, bucket_mb * (1 << 20)
            cur.append(i)
            size += nbytes
        if cur:
            groups.append(cur)
        self.buckets = [idx[::-1] for idx in reversed(groups)]  # lists of parameter indices
        self.bucket_of = {i: b for b, idx in enumerate(self.buckets) for i in idx}
        self.early = 0  # buckets sent while backward was still running (a measure of overlap)
        # compare each bucket across the ranks before summing it (a debugging aid)
        self.debug = _debug_buckets()
        # bucket -> (buffer, weak references to the gradient views made of it by the last
        # pass): weak, so that ``clear_grad`` sees nothing else holding a gradient and need
        # not zero-fill it
        self.views = {}
        self.nccl = None  # the group's NCCL communicator, for GPU parameters
        gpu = [p for p in params if not isinstance(p._data, np.ndarray)]
        if gpu:
            self.nccl = _nccl.communicator(group, gpu[0]._data.device.id)
        self.on_gpu = [self.nccl is not None and not isinstance(params[b[0]]._data, np.ndarray)
                       for b in self.buckets]
        self.offsets = {}  # parameter index -> (offset, size) in its bucket's buffer
        self.sizes = []
        for idx in self.buckets:
            off = 0
            for i in idx:
                n = int(np.prod(params[i].shape, dtype=np.int64))
                self.offsets[i] = (off, n)
                off += n
            self.sizes.append(off)
        # CPU buckets in shared memory when the group is on one machine (None otherwise)
        cpu = [not self.on_gpu[b] and isinstance(params[idx[0]]._data, np.ndarray)
               for b, idx in enumerate(self.buckets)]
        self.shm = _shm.SharedBuckets.create(group, [
            (self.sizes[b] if cpu[b] else 0, params[idx[0]]._data.dtype)
            for b, idx in enumerate(self.buckets)]) if any(cpu) else None
        self.shared = [self.shm is not None and c for c in cpu]
        # a float bucket summed by MPI or NCCL is divided by the number of ranks while it is
        # packed, so the sum is the average: no pass of its own over the gradients (MPI's
        # float16 / bfloat16 sums go through float64 and are divided after, as before); a
        # shared bucket is divided as it is averaged
        self.scale = []
        for b, idx in enumerate(self.buckets):
            dtype = params[idx[0]]._data.dtype
            pre = (dtype.kind == "f" and (self.on_gpu[b] or dtype.char in "fd")
                   and not self.shared[b])
            self.scale.append(dtype.type(1.0 / group.nranks) if pre else None)
        self._reset()

    def _prescaled(self, b):
        return self.scale[b] is not None

    def _buffer(self, b):
        if self.shared[b]:
            return self.shm.next_buffer(b)
        xp = _xp(self.on_gpu[b])
        return xp.empty(self.sizes[b], dtype=self.params[self.buckets[b][0]]._data.dtype)

    def _reset(self):
        if self.shm is not None:
            self.shm.abandon()
        self.waiting = [len(b) for b in self.buckets]
        self.inflight = {}  # bucket -> (MPI request or NCCL event, buffer)
        self.filling = {}  # bucket -> (this pass's buffer, parameter indices already in it)

    def absorb(self, entry) -> bool:
        """Finish a parameter's gradient straight into its bucket: the engine hands over the
        final gradient ``g`` of this backward pass, and the bucket gets ``(grad + g) / nranks``
        in one pass, instead of the gradient being summed in place and then copied into the
        bucket. False leaves the gradient to the engine (hooks, a dtype to convert, a bucket
        that is not divided while packed); ``_launch`` then packs it."""
        leaf, g, _ = entry
        i = self.index.get(id(leaf))
        if i is None or leaf._hooks or g.dtype != leaf._data.dtype or g.shape != leaf._data.shape:
            return False
        b = self.bucket_of[i]
        fill = self.filling.get(b)
        if fill is None:
            if not (self._prescaled(b) or self.shared[b]):
                return False
            fill = self.filling[b] = (self._buffer(b), set())
        buf, absorbed = fill
        off, n = self.offsets[i]
        part = buf[off:off + n].reshape(leaf._data.shape)
        xp = _xp(self.on_gpu[b])
        if not isinstance(g, xp.ndarray):
            return False
        cur = leaf._grad
        scale = self.scale[b]
        if cur is not None and (not isinstance(cur._data, xp.ndarray)
                                or cur._data.shape != part.shape):
            return False
        if cur is None or is_lazy_zero(cur._data):  # none yet, or cleared: the sum is g
            if scale is None:
                xp.copyto(part, g)
            else:
                xp.multiply(g, scale, out=part)
        else:
            xp.add(cur._data, g, out=part)
            if scale is not None:
                part *= scale  # the parameter's slice, still in cache
        if cur is None:
            leaf._grad = _wrap_grad(part)
        else:
            cur._data = part
        absorbed.add(i)
        return True

    # state.tls.grad_sync protocol -------------------------------------------------
    def ready(self, leaf):
        i = self.index.get(id(leaf))
        if i is None:
            return
        b = self.bucket_of[i]
        self.waiting[b] -= 1
        if self.waiting[b] == 0:
            self._launch(b)
            self.early += 1
        polled = False
        for c, (req, _) in self.inflight.items():
            if self.shared[c]:
                if not polled:
                    self.shm.progress()  # average what every rank has packed
                    polled = True
            elif not self.on_gpu[c]:
                _comm._test(req, "DataParallel gradient all_reduce", self.group)  # progress

    def done(self):
        try:
            for b in range(len(self.buckets)):
                if b not in self.inflight:
                    self._launch(b)
            for b, (req, buf) in self.inflight.items():
                if self.shared[b]:
                    buf = self.shm.finish(b)
                elif self.on_gpu[b]:
                    self.nccl.finish_sum(req)
                else:
                    _comm.wait(req, "DataParallel gradient all_reduce", self.group)
                self._unpack(b, buf)
            if self.shm is not None:
                self.shm.end_pass()
        finally:
            self._reset()

    # -------------------------------------------------------------------------
    def _launch(self, b):
        idx = self.buckets[b]
        if self.debug:
            self._check_bucket(b)
        gpu = self.on_gpu[b]
        pre = self._prescaled(b)
        scale = self.scale[b]
        fill = self.filling.pop(b, None)
        views = self.views.get(b)
        if fill is None and views is not None and not self.shared[b] and all(
                self.params[i]._grad is not None and self.params[i]._grad._data is v()
                for i, v in zip(idx, views[1])):
            # the gradients still are the views of the last pass's buffer (accumulated in
            # place): they are packed already
            buf = views[0]
            if pre:
                buf *= scale
            self._start(b, buf)
            return
        buf, absorbed = fill if fill is not None else (self._buffer(b), ())
        xp = _xp(gpu)
        for i in idx:
            if i in absorbed:
                continue
            off, n = self.offsets[i]
            part = buf[off:off + n]
            g = self.params[i]._grad
            if g is None:
                part[...] = 0
                continue
            g = g._data if gpu or isinstance(g._data, np.ndarray) else g._data.get()
            if pre:
                xp.multiply(g.reshape(-1), scale, out=part)
            else:
                part[...] = g.reshape(-1)
        self._start(b, buf if gpu or self.shared[b] else _comm.reducible(buf))

    def _check_bucket(self, b):
        """Debug mode: every rank must be about to sum the same bucket (same parameters'
        shapes and dtype), in the same order; else every rank raises naming them."""
        idx = self.buckets[b]
        _comm.agree(self.group, "DataParallel gradient all_reduce", {
            "bucket": b, "dtype": str(self.params[idx[0]]._data.dtype),
            "parameter shapes": [list(self.params[i].shape) for i in idx]}, force=True)

    def _start(self, b, buf):
        if self.shared[b]:
            self.shm.post(b)
            self.inflight[b] = (None, buf)
        elif self.on_gpu[b]:
            self.inflight[b] = (self.nccl.start_sum(buf), buf)
        else:
            MPI = _comm.mpi()
            self.inflight[b] = (self.group.comm.Iallreduce(MPI.IN_PLACE, buf, op=MPI.SUM), buf)

    def _unpack(self, b, buf):
        from ..framework.tensor import _wrap

        # the bucket buffer is this pass's own (a new one per pass): the gradients of
        # parameters on its device become views of it, instead of copies of the averages
        # (saves a pass over every gradient byte per step)
        if not (self._prescaled(b) or self.shared[b]):
            if buf.dtype.kind == "f":
                buf *= buf.dtype.type(1.0 / self.group.nranks)
            else:
                buf //= self.group.nranks
        xp = _xp(self.on_gpu[b])
        off = 0
        views = []
        for i in self.buckets[b]:
            p = self.params[i]
            n = int(np.prod(p.shape, dtype=np.int64))
            avg = buf[off:off + n].reshape(p._data.shape).astype(p._data.dtype, copy=False)
            views.append(_ref(avg))
            off += n
            same_device = isinstance(p._data, xp.ndarray)
            if p._grad is None:
                if xp.any(avg):
                    p._grad = _wrap(avg if same_device else _coll._to_device(avg, p._data))
                continue
            cur = p._grad._data
            if same_device and cur.shape == avg.shape and cur.dtype == avg.dtype:
                p._grad._data = avg
            elif same_device:
                writable(p._grad)[...] = avg
            else:
                cur[...] = _coll._to_device(avg, cur)
        if buf.dtype == self.params[self.buckets[b][0]]._data.dtype:
            self.views[b] = (buf, views)
        else:
            # reduced in a wider type: the gradients are copies, not views of the buffer
            self.views.pop(b, None)


def _ref(arr):
    """A weak reference to an array (a strong one for array types that refuse weak ones)."""
    try:
        return weakref.ref(arr)
    except TypeError:
        return lambda: arr


def _kind(p):
    """What a bucket must share: dtype and device."""
    a = p._data
    return a.dtype, (None if isinstance(a, np.ndarray) else a.device.id)


def _check_same_model(layers, g, comm_buffer_size, last_comm_buffer_size):
    """Every rank must wrap the same model: the same parameters and buffers, in the same order,
    with the same shapes, dtypes and trainability, and the same bucket sizes (the buckets are
    summed position by position). One all-gather of a fingerprint of all of them; when they
    differ, every rank raises an error naming the first entry that differs and each rank's
    version of it."""
    entries = [("parameter", name, list(p.shape), str(p._data.dtype),
                "trainable" if not p.stop_gradient else "frozen")
               for name, p in layers.named_parameters()]
    entries += [("buffer", name, list(t.shape), str(t._data.dtype), "")
                for name, t in layers.named_buffers()]
    sizes = (float(comm_buffer_size), float(last_comm_buffer_size))
    mine = (sizes, entries)
    if not _comm.differ(g, "DataParallel", _comm.digest(mine)):
        return
    gathered = g.comm.allgather((mine, socket.gethostname()))  # every rank is here
    every = [m for m, _ in gathered]
    names = [h for _, h in gathered]
    # across machines, the errors say where each rank runs
    ranks = ([f"{r} (host {h})" for r, h in zip(g.ranks, names)] if len(set(names)) > 1
             else g.ranks)
    if any(s != every[0][0] for s, _ in every):
        got = "; ".join(f"rank {ranks[i]}: comm_buffer_size {s[0]:g}, last_comm_buffer_size "
                        f"{s[1]:g}" for i, (s, _) in enumerate(every))
        raise ValueError(f"paddle_hl.distributed.DataParallel: every rank must use the same "
                         f"bucket sizes, got {got}")
    lists = [e for _, e in every]
    counts = [len(e) for e in lists]
    for k in range(max(counts)):
        versions = [e[k] if k < len(e) else None for e in lists]
        if all(v == versions[0] for v in versions):
            continue
        got = "; ".join(
            f"rank {ranks[i]}: " + ("nothing (it has only " + str(counts[i]) + " entries)"
                                    if v is None else f"{v[0]} {v[1]!r} of shape {v[2]} {v[3]}"
                                    + (f" ({v[4]})" if v[4] else ""))
            for i, v in enumerate(versions))
        raise ValueError(f"paddle_hl.distributed.DataParallel: every rank must wrap the same "
                         f"model (the same parameters and buffers, in the same order, shapes "
                         f"and dtypes); entry {k} differs: {got}")


def _wrap_grad(arr):
    from ..framework.tensor import _wrap

    return _wrap(arr)


class DataParallel(Layer):
    """Run ``layers`` data parallel: each process trains on its own batches and the gradients
    are averaged across processes during the backward pass.

    At wrap time the parameters and buffers of rank 0 are broadcast to every rank. During
    ``loss.backward()`` gradients are all-reduced in buckets of ``comm_buffer_size`` MB,
    overlapping with the rest of the backward pass; the last bucket sent (the parameters
    nearest the input, whose gradients come last) holds at most ``last_comm_buffer_size`` MB,
    so little is left to send when backward ends. ``no_sync()`` skips the averaging (gradient
    accumulation). With one process it is a transparent wrapper.

    Every rank must wrap the same model: at wrap time the ranks compare a fingerprint of their
    parameters and buffers (names, shapes, dtypes, trainability) and bucket sizes, and a
    difference is an error on every rank naming the first entry that differs. The buckets
    themselves are not compared on each pass (that would cost one small all-gather per
    bucket); ``PADDLE_HL_DP_CHECK=1`` turns that on, to find ranks that sum different buckets
    (e.g. parameters changed after wrapping).

    Args:
        layers (Layer): the model.
        strategy: accepted for compatibility.
        comm_buffer_size (int, optional): bucket size in MB. Default: 25.
        last_comm_buffer_size (int, optional): size of the last bucket sent, in MB. Default: 1.
        find_unused_parameters (bool, optional): parameters without a gradient on some rank are
            handled in every case (they count as zeros); kept for compatibility. Default: False.
        group (Group, optional): the process group (the global group when None).

    Examples:
        >>> import paddle_hl as paddle
        >>> dist = paddle.distributed
        >>> _ = dist.init_parallel_env()
        >>> model = paddle.DataParallel(paddle.nn.Linear(4, 2))
        >>> model(paddle.ones([3, 4])).sum().backward()   # gradients averaged across ranks
    """

    def __init__(self, layers, strategy=None, comm_buffer_size=25, last_comm_buffer_size=1,
                 find_unused_parameters=False, group=None):
        if not isinstance(layers, Layer):
            raise TypeError(f"DataParallel: layers must be a paddle.nn.Layer, got "
                            f"{type(layers).__name__}")
        for name, v in (("comm_buffer_size", comm_buffer_size),
                        ("last_comm_buffer_size", last_comm_buffer_size)):
            if not isinstance(v, (int, float)) or v <= 0:
                raise ValueError(f"DataParallel: {name} must be a positive number of MB, got "
                                 f"{v!r}")
        super().__init__(layers.full_name() + "_data_parallel")
        self._layers = layers
        self.find_unused_parameters = find_unused_parameters
        self.comm_buffer_size = comm_buffer_size
        self.last_comm_buffer_size = last_comm_buffer_size
        self.group = group
        self._grad_need_sync = True
        self._nranks = get_world_size(group) if group is not None else get_world_size()
        self._reducer = None
        if self._nranks > 1:
            g = _coll._group(group, "DataParallel")
            _check_same_model(layers, g, comm_buffer_size, last_comm_buffer_size)
            self._sync_params(g)
            params = [p for p in layers.parameters() if not p.stop_gradient]
            self._reducer = _Reducer(params, g, comm_buffer_size, last_comm_buffer_size)

    def forward(self, *inputs, **kwargs):
        if self._reducer is not None and self._grad_need_sync and state.tls.grad_enabled:
            if not self._reducer.inflight:
                self._reducer._reset()  # nothing left over from a pass that raised
            state.tls.grad_sync = self._reducer  # the next backward averages the gradients
        return self._layers(*inputs, **kwargs)

    def _sync_params(self, g):
        src = g.ranks[0]
        for t in list(self._layers.parameters()) + list(self._layers.buffers()):
            _coll.broadcast(t, src, group=g if g.id != 0 else None)

    @contextlib.contextmanager
    def no_sync(self):
        """Skip gradient averaging for the backward passes inside the block (gradient
        accumulation); the first backward after it averages the accumulated gradients."""
        prev = self._grad_need_sync
        self._grad_need_sync = False
        try:
            yield
        finally:
            self._grad_need_sync = prev

    def scale_loss(self, loss):
        """Kept for Paddle compatibility: the loss is returned unchanged."""
        return loss

    def init_reducer(self):
        """Kept for Paddle compatibility: the reducer is made at wrap time."""

    def apply_collective_grads(self):
        """Average every gradient across the processes now (for gradients computed without the
        wrapper's forward, e.g. with ``paddle.grad``); a backward through the wrapper has
        already done it."""
        if self._reducer is None or not self._grad_need_sync:
            return
        self._reducer.done()

    def state_dict(self, destination=None, include_sublayers=True, structured_name_prefix="",
                   use_hook=True):
        return self._layers.state_dict(destination, include_sublayers, structured_name_prefix,
                                       use_hook)

    def set_state_dict(self, state_dict, use_structured_name=True):
        return self._layers.set_state_dict(state_dict, use_structured_name)

    set_dict = set_state_dict
    load_dict = set_state_dict
