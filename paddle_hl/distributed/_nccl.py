"""Collectives on GPU (CuPy) arrays through NCCL, with ``cupy.cuda.nccl``.

Every process group gets its own NCCL communicator, made the first time the group needs one
(at ``init_parallel_env`` / ``new_group`` when the default device is a GPU, else at the first
collective on GPU tensors). Its members first agree over MPI that each of them can use NCCL
and that no two of them share a GPU (NCCL needs one GPU per rank); then the group's rank 0
draws the unique id (``nccl.get_unique_id()``), MPI broadcasts it, and every member builds
``NcclCommunicator(nranks, id, rank)`` on its device. When they cannot agree, GPU tensors go
through host memory and MPI instead, and a warning says why, once.

Operations keep the order of the current CUDA stream: a communicator runs its NCCL calls on a
stream of its own (one stream keeps them in issue order, the same on every rank), which first
waits for the kernels already queued on the current stream; the current stream then waits for
the call, so the kernels queued after it see the result. The call returns without waiting for
the GPU (Paddle's ``sync_op`` on the calculation stream).
A :class:`GpuTask`'s ``wait()`` blocks the host until the operation has finished on the GPU,
and gives up with a clear error after the collective timeout. ``isend`` / ``irecv`` are held
back and issued together with the next operation on the communicator, in one NCCL group, so
that exchanges such as a ring (every rank receives from its left and sends to its right) do
not deadlock on NCCL's in-order execution.

CuPy is imported lazily: nothing here runs on a machine without a GPU.
"""

from __future__ import annotations

import socket
import time
import warnings

import numpy as np

from ..backend import cupy_module
from . import _comm
from ._comm import PeerLost, ReduceOp

__all__ = []

# NCCL 2.10 brought ncclAvg and bfloat16
_AVG_VERSION = 21000
_WARNED = [False]
_NCCL = [None, ""]  # the cupy.cuda.nccl module once checked, or None and why not


def nccl_module():
    """``cupy.cuda.nccl`` when CuPy, a GPU and the NCCL library are all usable, else None."""
    if _NCCL[0] is None and not _NCCL[1]:
        cp = cupy_module()
        if cp is None:
            _NCCL[1] = "CuPy or a CUDA GPU is missing"
            return None
        try:
            from cupy.cuda import nccl
        except ImportError as e:
            _NCCL[1] = f"CuPy was built without NCCL ({e})"
            return None
        if not getattr(nccl, "available", True):
            _NCCL[1] = "CuPy cannot load the NCCL library"
            return None
        _NCCL[0] = nccl
    return _NCCL[0]


def unavailable_reason() -> str:
    nccl_module()
    return _NCCL[1]


def default_is_gpu() -> bool:
    from ..framework.place import current_place

    return current_place().kind == "gpu"


def backend_name(group) -> str:
    """'nccl' when the group's collectives on the default device go through NCCL, else 'mpi'."""
    if not default_is_gpu():
        return "mpi"
    if group.nccl is False:
        return "mpi"
    return "nccl" if group.nccl is not None or nccl_module() is not None else "mpi"


def warn_fallback(reason: str) -> None:
    if not _WARNED[0]:
        _WARNED[0] = True
        warnings.warn(
            "paddle_hl.distributed: NCCL cannot be used (" + reason + "); collectives on GPU "
            "tensors go through host memory and MPI instead, which is much slower",
            RuntimeWarning, stacklevel=4)


def _device_identity(cp, device: int):
    """What tells two GPUs apart across processes: the UUID, else the PCI location."""
    props = cp.cuda.runtime.getDeviceProperties(device)
    uuid = props.get("uuid")
    if uuid:
        return bytes(uuid)
    return (props.get("pciDomainID"), props.get("pciBusID"), props.get("pciDeviceID"))


def communicator(group, device=None):
    """The group's :class:`Communicator`, made now if needed (every member must call this in
    the same collective), or None when NCCL cannot be used (warned once)."""
    if group.nccl is not None:
        return group.nccl or None
    cp = cupy_module()
    if device is None:
        device = cp.cuda.Device().id if cp is not None else 0
    nccl = nccl_module()
    ok, why, ident = nccl is not None, _NCCL[1], None
    if ok:
        try:
            ident = (socket.gethostname(), _device_identity(cp, device))
        except Exception as e:  # a CUDA error: this rank cannot use its GPU
            ok, why = False, f"GPU {device} cannot be queried ({type(e).__name__}: {e})"
    # every member learns every other's answer, so that all of them take the same path
    infos = group.comm.allgather((ok, why, ident))
    reason = None
    for r, (ok_r, why, _) in enumerate(infos):
        if not ok_r:
            reason = f"on rank {group.ranks[r]}: {why}"
            break
    if reason is None:
        idents = [i for _, _, i in infos]
        if len(set(idents)) < len(idents):
            shared = [group.ranks[r] for r, i in enumerate(idents) if idents.count(i) > 1]
            reason = (f"ranks {shared} use the same GPU, and NCCL needs one GPU per rank: start "
                      "at most as many processes per machine as it has GPUs")
    if reason is not None:
        group.nccl = False
        warn_fallback(reason)
        return None
    uid = nccl.get_unique_id() if group.rank == 0 else None
    uid = group.comm.bcast(uid, root=0)
    try:
        with cp.cuda.Device(device):
            nc = nccl.NcclCommunicator(group.nranks, uid, group.rank)
    except Exception as e:
        raise RuntimeError(f"paddle_hl.distributed: rank {group.ranks[group.rank]} could not "
                           f"create the NCCL communicator of group {group.id} on GPU {device}: "
                           f"{e}") from e
    group.nccl = Communicator(group, nc, device, nccl)
    return group.nccl


class GpuTask:
    """The handle of an NCCL operation (``sync_op=False``, ``isend``, ``irecv``): ``wait()``
    blocks until it has finished on the GPU."""

    def __init__(self, comm, what, event=None):
        self._comm = comm
        self._what = what
        self._event = event

    def _flush(self):
        if self._event is None:
            self._comm.flush()
            self._event = self._comm.last_event
        return self._event

    def is_completed(self) -> bool:
        return self._flush().done

    def wait(self) -> bool:
        self._comm.wait_event(self._flush(), self._what)
        return True


class Communicator:
    """One process group's NCCL communicator, bound to one GPU."""

    def __init__(self, group, nc, device, nccl):
        cp = cupy_module()
        self.cp = cp
        self.group = group
        self.nc = nc
        self.device = int(device)
        self.nccl = nccl
        self.nranks = group.nranks
        self.rank = group.rank
        version = nccl.get_version()
        new = version >= _AVG_VERSION
        types = {np.int8: nccl.NCCL_INT8, np.uint8: nccl.NCCL_UINT8,
                 np.int32: nccl.NCCL_INT32, np.uint32: nccl.NCCL_UINT32,
                 np.int64: nccl.NCCL_INT64, np.uint64: nccl.NCCL_UINT64,
                 np.float16: nccl.NCCL_FLOAT16, np.float32: nccl.NCCL_FLOAT32,
                 np.float64: nccl.NCCL_FLOAT64}
        self.types = {np.dtype(k): v for k, v in types.items()}
        if new and hasattr(nccl, "NCCL_BFLOAT16"):
            from ml_dtypes import bfloat16

            self.types[np.dtype(bfloat16)] = nccl.NCCL_BFLOAT16
        self.ops = {ReduceOp.SUM: nccl.NCCL_SUM, ReduceOp.MAX: nccl.NCCL_MAX,
                    ReduceOp.MIN: nccl.NCCL_MIN, ReduceOp.PROD: nccl.NCCL_PROD}
        self.avg = nccl.NCCL_AVG if new and hasattr(nccl, "NCCL_AVG") else None
        self.pending = []  # isend / irecv held back until the next operation
        self.last_event = None
        self._side = None

    # ------------------------------------------------------------------ plumbing
    def _check_device(self, a, what):
        if a.device.id != self.device:
            raise ValueError(f"paddle_hl.distributed.{what}: the tensor is on gpu:{a.device.id} "
                             f"but this rank's NCCL communicator uses gpu:{self.device}; every "
                             "rank works on one GPU (paddle.set_device before "
                             "init_parallel_env)")

    def comm_stream(self):
        """The stream every NCCL call of this communicator runs on: one stream keeps them in
        the order they were issued, on every rank, and lets them overlap the kernels of the
        current stream."""
        if self._side is None:
            with self.cp.cuda.Device(self.device):
                self._side = self.cp.cuda.Stream(non_blocking=True)
        return self._side

    def _event(self, stream):
        ev = self.cp.cuda.Event(block=False, disable_timing=True)
        ev.record(stream)
        return ev

    def _issue(self, issue, stream):
        """``issue(stream_ptr)`` after the held-back point-to-point operations, in one NCCL
        group with them. Returns their follow-up work."""
        if not self.pending:
            if issue is not None:
                issue(stream.ptr)
            return []
        pending, self.pending = self.pending, []
        self.nccl.groupStart()
        try:
            for op, _ in pending:
                op(stream.ptr)
            if issue is not None:
                issue(stream.ptr)
        finally:
            self.nccl.groupEnd()
        return [after for _, after in pending if after is not None]

    def _run(self, issue, what, after=None):
        """Run ``issue(stream_ptr)`` on the communication stream once the kernels queued on the
        current stream are done; the current stream then waits for it and runs ``after()``
        (the work on the result). Returns a task whose event follows all of it."""
        cp = self.cp
        with cp.cuda.Device(self.device):
            cur = cp.cuda.get_current_stream()
            side = self.comm_stream()
            side.wait_event(self._event(cur))
            follow = self._issue(issue, side)
            cur.wait_event(self._event(side))
            for f in follow:
                f()
            if after is not None:
                after()
            ev = self._event(cur)
        self.last_event = ev
        return GpuTask(self, what, ev)

    def flush(self):
        """Issue the held-back point-to-point operations now."""
        if self.pending:
            self._run(None, "flush")

    def wait_event(self, event, what):
        """Block until ``event`` has happened, raising a clear error after the timeout."""
        if event.done:
            return
        limit = _comm.timeout()
        deadline = time.monotonic() + limit
        delay = 1e-5
        while not event.done:
            self._check_async(what)
            if time.monotonic() > deadline:
                self.nc.abort()
                self.group.nccl = False
                raise PeerLost(
                    f"paddle_hl.distributed.{what}: rank {self.rank} of group {self.group.id} "
                    f"(ranks {self.group.ranks}) waited {limit:g} s for the other ranks on "
                    f"NCCL: one of them died or is stuck. Set {_comm.TIMEOUT_ENV} to wait "
                    "longer.")
            time.sleep(delay)
            delay = min(delay * 2, 1e-3)

    def _check_async(self, what):
        try:
            self.nc.check_async_error()
        except RuntimeError as e:
            if "not available" in str(e):
                return  # an NCCL older than 2.4 cannot report asynchronous errors
            raise PeerLost(f"paddle_hl.distributed.{what}: rank {self.rank} of group "
                           f"{self.group.id} (ranks {self.group.ranks}): NCCL failed, probably "
                           f"because another rank died: {e}") from None

    def _contiguous(self, a):
        return a if a.flags.c_contiguous else self.cp.ascontiguousarray(a)

    def _reducible(self, buf, op=ReduceOp.SUM, what="all_reduce"):
        """``buf`` (or a view of it) and its NCCL type, or a wider copy when NCCL cannot reduce
        its dtype."""
        t = self.types.get(buf.dtype)
        if t is not None:
            return buf, t
        if buf.dtype.kind == "c":  # sums of complex numbers are sums of their parts
            if op not in (ReduceOp.SUM, ReduceOp.AVG):
                raise TypeError(f"paddle_hl.distributed.{what}: complex tensors ({buf.dtype}) "
                                "reduce only with ReduceOp.SUM or AVG on NCCL")
            part = np.dtype(f"f{buf.dtype.itemsize // 2}")
            return buf.reshape(-1).view(part), self.types[part]
        if buf.dtype == np.bool_:
            wide = np.dtype(np.int32)
        else:
            wide = np.dtype(np.float64 if buf.dtype.itemsize > 4 else np.float32)
        return buf.astype(wide), self.types[wide]

    def _op(self, op, dtype):
        """The NCCL operation for ``op``, and whether the average is left to divide after."""
        if op == ReduceOp.AVG:
            if self.avg is not None and dtype.kind == "f":
                return self.avg, False
            return self.nccl.NCCL_SUM, True
        return self.ops[op], False

    def _average(self, red):
        """Divide a summed buffer by the group size, as the MPI path does (integers truncate
        toward zero)."""
        if red.dtype.kind == "f":
            red /= self.nranks
            return red
        return self.cp.trunc(red / self.nranks)

    @staticmethod
    def _write(dst, src):
        """Put ``src`` into ``dst`` unless it already is ``dst``'s memory."""
        if src is not dst and not (src.data.ptr == dst.data.ptr and src.nbytes == dst.nbytes):
            dst[...] = src.astype(dst.dtype, copy=False).reshape(dst.shape)

    def _bytes(self, a):
        return a.reshape(-1).view(self.cp.uint8)

    # ------------------------------------------------------------------ reductions
    def _reduction(self, a, op, what, call, root=None):
        """All-reduce (``root`` None) or reduce ``a`` in place with ``call(ptr, n, type, op,
        stream_ptr)``."""
        self._check_device(a, what)
        buf = self._contiguous(a)
        red, dt = self._reducible(buf, op, what)
        ncop, divide = self._op(op, red.dtype)
        n = red.size

        def issue(s):
            if n:
                call(red.data.ptr, n, dt, ncop, s)

        def after():
            if root is None or self.rank == root:
                self._write(buf, self._average(red) if divide else red)
                self._write(a, buf)

        return self._run(issue, what, after)

    def all_reduce(self, a, op, what="all_reduce"):
        return self._reduction(a, op, what,
                               lambda p, n, t, o, s: self.nc.allReduce(p, p, n, t, o, s))

    def reduce(self, a, root, op, what="reduce"):
        return self._reduction(a, op, what,
                               lambda p, n, t, o, s: self.nc.reduce(p, p, n, t, o, root, s),
                               root=root)

    def reduce_scatter(self, out, inputs, op, what="reduce_scatter"):
        cp = self.cp
        self._check_device(out, what)
        send = cp.stack([cp.asarray(x, dtype=out.dtype) for x in inputs])
        red, dt = self._reducible(send, op, what)
        ncop, divide = self._op(op, red.dtype)
        red = red.reshape(self.nranks, -1)
        recv = cp.empty(red.shape[1:], red.dtype)
        n = recv.size

        def issue(s):
            if n:
                self.nc.reduceScatter(red.data.ptr, recv.data.ptr, n, dt, ncop, s)

        def after():
            res = self._average(recv) if divide else recv
            if out.dtype.kind == "c":
                res = res.view(out.dtype)
            self._write(out, res)

        return self._run(issue, what, after)

    # ------------------------------------------------------------------ data movement
    def broadcast(self, a, root, what="broadcast"):
        self._check_device(a, what)
        buf = self._contiguous(a)
        raw = self._bytes(buf)

        def issue(s):
            if raw.size:
                self.nc.broadcast(raw.data.ptr, raw.data.ptr, raw.size, self.nccl.NCCL_UINT8,
                                  root, s)

        return self._run(issue, what, lambda: self._write(a, buf))

    def all_gather(self, a, what="all_gather"):
        """Every rank's ``a`` stacked along a new first axis."""
        self._check_device(a, what)
        buf = self._contiguous(a)
        out = self.cp.empty((self.nranks,) + buf.shape, buf.dtype)
        src, dst = self._bytes(buf), self._bytes(out)

        def issue(s):
            if src.size:
                self.nc.allGather(src.data.ptr, dst.data.ptr, src.size, self.nccl.NCCL_UINT8,
                                  s)

        return out, self._run(issue, what)

    def _exchange(self, sends, recvs, what, after=None):
        """Grouped point-to-point: ``sends`` and ``recvs`` are (peer, uint8 array) pairs."""
        u8 = self.nccl.NCCL_UINT8

        def issue(s):
            self.nccl.groupStart()
            try:
                for peer, arr in sends:
                    if arr.size:
                        self.nc.send(arr.data.ptr, arr.size, u8, peer, s)
                for peer, arr in recvs:
                    if arr.size:
                        self.nc.recv(arr.data.ptr, arr.size, u8, peer, s)
            finally:
                self.nccl.groupEnd()

        return self._run(issue, what, after)

    def gather(self, a, root, what="gather"):
        """Every rank's ``a`` stacked on ``root`` (None elsewhere)."""
        self._check_device(a, what)
        buf = self._contiguous(a)
        if self.rank != root:
            return None, self._exchange([(root, self._bytes(buf))], [], what)
        out = self.cp.empty((self.nranks,) + buf.shape, buf.dtype)
        out[root] = buf
        recvs = [(r, self._bytes(out[r])) for r in range(self.nranks) if r != root]
        return out, self._exchange([], recvs, what)

    def scatter(self, a, parts, root, what="scatter"):
        """Rank r's ``a`` gets ``parts[r]`` of ``root`` (``parts`` stacked, only on root)."""
        self._check_device(a, what)
        buf = self._contiguous(a)
        if self.rank == root:
            parts = self._contiguous(parts.astype(buf.dtype, copy=False))
            buf[...] = parts[root]
            sends = [(r, self._bytes(parts[r])) for r in range(self.nranks) if r != root]
            return self._exchange(sends, [], what, lambda: self._write(a, buf))
        return self._exchange([], [(root, self._bytes(buf))], what,
                              lambda: self._write(a, buf))

    def alltoall(self, send, what="alltoall"):
        """``send`` stacked (one part per rank) -> the parts received, stacked by sender."""
        self._check_device(send, what)
        send = self._contiguous(send)
        recv = self.cp.empty_like(send)
        recv[self.rank] = send[self.rank]
        others = [r for r in range(self.nranks) if r != self.rank]
        task = self._exchange([(r, self._bytes(send[r])) for r in others],
                              [(r, self._bytes(recv[r])) for r in others], what)
        return recv, task

    def alltoall_single(self, src, dst, ins, outs, what="alltoall_single"):
        """Rows ``ins[r]`` of ``src`` go to rank r; rows ``outs[r]`` of ``dst`` come from it."""
        self._check_device(src, what)
        self._check_device(dst, what)
        s = self._contiguous(src)
        d = self._contiguous(dst)
        so = [0, *np.cumsum(ins).tolist()]
        do = [0, *np.cumsum(outs).tolist()]
        me = self.rank
        d[do[me]:do[me + 1]] = s[so[me]:so[me + 1]]
        others = [r for r in range(self.nranks) if r != me]
        return self._exchange([(r, self._bytes(s[so[r]:so[r + 1]])) for r in others],
                              [(r, self._bytes(d[do[r]:do[r + 1]])) for r in others], what,
                              lambda: self._write(dst, d))

    def send(self, a, peer, what="send", defer=False):
        self._check_device(a, what)
        raw = self._bytes(self._contiguous(a))
        u8 = self.nccl.NCCL_UINT8

        def issue(s):
            if raw.size:
                self.nc.send(raw.data.ptr, raw.size, u8, peer, s)

        if defer:
            self.pending.append((issue, None))
            return GpuTask(self, what)
        return self._run(issue, what)

    def recv(self, a, peer, what="recv", defer=False):
        self._check_device(a, what)
        contiguous = a.flags.c_contiguous
        buf = a if contiguous else self.cp.empty(a.shape, a.dtype)
        raw = self._bytes(buf)
        u8 = self.nccl.NCCL_UINT8

        def issue(s):
            if raw.size:
                self.nc.recv(raw.data.ptr, raw.size, u8, peer, s)

        def after():
            a[...] = buf  # on the current stream, after the receive

        if defer:
            self.pending.append((issue, None if contiguous else after))
            return GpuTask(self, what)
        return self._run(issue, what, None if contiguous else after)

    def barrier(self, what="barrier"):
        one = self.cp.ones(1, self.cp.int32)
        self._run(lambda s: self.nc.allReduce(one.data.ptr, one.data.ptr, 1,
                                              self.nccl.NCCL_INT32, self.nccl.NCCL_SUM, s),
                  what).wait()

    # ------------------------------------------------------------------ DataParallel
    def start_sum(self, buf):
        """Start summing ``buf`` across the group on the communication stream, once the
        kernels already queued on the current stream (those that computed ``buf``) are done.
        Returns the handle :meth:`finish_sum` takes; the host does not wait."""
        cp = self.cp
        red, dt = self._reducible(buf)
        with cp.cuda.Device(self.device):
            cur = cp.cuda.get_current_stream()
            side = self.comm_stream()
            side.wait_event(self._event(cur))
            follow = self._issue(
                lambda s: self.nc.allReduce(red.data.ptr, red.data.ptr, red.size, dt,
                                            self.nccl.NCCL_SUM, s), side)
            done = self._event(side)
        return done, buf, red, follow

    def finish_sum(self, handle):
        """Make the current stream wait for a sum started by :meth:`start_sum` (the result is
        then in its buffer)."""
        done, buf, red, follow = handle
        cur = self.cp.cuda.get_current_stream()
        cur.wait_event(done)
        for f in follow:
            f()
        self._write(buf, red)

    def destroy(self):
        self.pending = []
        try:
            self.nc.destroy()
        except Exception:  # a communicator aborted after a failure is already gone
            pass


_comm.backend_of = backend_name
