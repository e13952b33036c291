"""Gradient averaging through shared memory, for the ranks of a group on one machine.

When every rank of a DataParallel group runs on the same machine, an all-reduce through MPI
moves each gradient byte several times: out of the sender's buffer into MPI's shared cells, into
the receiver's, and back out for the all-gather, on the one core each rank has. Here the
buckets themselves live in memory all the ranks of the group map:

* each rank packs its gradients into its own region (as it would into a private bucket);
* when a bucket is complete, the rank tells the others with a small MPI message;
* once it has heard from all of them, each rank averages its own ``1/n`` slice of the bucket
  over all the ranks' regions, in cache-sized chunks, and writes the average back into every
  rank's region; it tells the others it is done;
* once it has heard that from all of them, its own region holds the full average: the
  gradients become views of it.

Each byte is read once and written ``n`` times across the group, with no intermediate copy,
and the division by the number of ranks happens in the same chunk as the sum. MPI carries only
the zero-byte messages, so the collective timeout and the error naming a lost rank apply as
for any collective.

The memory is one file in ``/dev/shm`` (or the temporary folder), reserved in full before use
(so a full file system is an error here, not a crash later), mapped by every rank and removed
as soon as all have mapped it: nothing is left behind when a rank dies. Each bucket has two
slots used in turn, so a gradient handed out by one backward pass is not overwritten by the
next one.

``PADDLE_HL_DP_SHM=0`` turns it off (gradients then go through MPI's all-reduce).
"""

from __future__ import annotations

import mmap
import os
import tempfile
import uuid

import numpy as np

from . import _comm

__all__ = []

ENV = "PADDLE_HL_DP_SHM"
_ALIGN = 4096  # every region starts on its own page
_CHUNK_BYTES = 1 << 18  # bytes of one rank's buffer averaged per step (a few fit in L2)
_EMPTY = np.empty(0, np.uint8)
_WHAT = "DataParallel gradient all_reduce"


def enabled() -> bool:
    value = os.environ.get(ENV, "1").strip().lower()
    if value in ("0", "false", "off", "no"):
        return False
    if value in ("", "1", "true", "on", "yes"):
        return True
    raise ValueError(f"paddle_hl.distributed.DataParallel: {ENV} must be 0 or 1, got {value!r}")


def _round(n: int) -> int:
    return -(-n // _ALIGN) * _ALIGN


def _folder():
    return "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()


def _accumulator(dtype):
    """The dtype a chunk is summed in: float32 for 16-bit floats, int64 for integers."""
    if dtype.kind == "f" and dtype.itemsize < 4 or dtype.kind == "V":
        return np.dtype(np.float32)
    if dtype.kind in "iub":
        return np.dtype(np.int64)
    return dtype


class SharedBuckets:
    """Buckets of one group in shared memory, with the averaging protocol above.

    Made by :meth:`create` (collectively, by every rank of the group), which returns None where
    the ranks do not share one machine or the memory cannot be had.
    """

    def __init__(self, group, comm, mem, specs, region):
        self.group = group  # named by the errors of a lost rank
        self.comm = comm
        self.n = comm.size
        self.rank = comm.rank
        self.mem = mem  # the mapping: kept alive as long as any view of it
        # bucket -> slot -> one array per rank (index = rank in the group)
        self.views = []
        off = 0
        for size, dtype in specs:
            slots = []
            for _ in range(2):
                slots.append([np.frombuffer(mem, dtype=dtype, count=size,
                                            offset=k * region + off) for k in range(self.n)])
                off += _round(size * dtype.itemsize)
            self.views.append(slots)
        self.slot = [1] * len(specs)  # the slot of the current pass (flipped on each pass)
        self.posted = {}  # bucket -> (slot, receive requests of the others' "packed" messages)
        self.reduced = {}  # bucket -> receive requests of the others' "averaged" messages
        self.sends = []

    @classmethod
    def create(cls, group, specs):
        """Shared buckets for ``specs`` (``(number of elements, dtype)`` per bucket), or None.

        Collective over ``group``: every rank calls it at the same point."""
        if not enabled() or group.nranks < 2:
            return None
        MPI = _comm.mpi()
        node = group.comm.Split_type(MPI.COMM_TYPE_SHARED, key=group.rank)
        if node.size != group.nranks:
            node.Free()
            return None  # the group spans machines: MPI's all-reduce
        specs = [(int(s), np.dtype(d)) for s, d in specs]
        region = sum(2 * _round(s * d.itemsize) for s, d in specs) or _ALIGN
        total = region * node.size
        path = None
        if node.rank == 0:
            path = os.path.join(_folder(), f"paddle_hl_dp_{os.getpid()}_{uuid.uuid4().hex}")
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
                try:
                    # reserve every page now: a tmpfs too small fails here, not with SIGBUS later
                    if hasattr(os, "posix_fallocate"):
                        os.posix_fallocate(fd, 0, total)
                    else:
                        os.ftruncate(fd, total)
                finally:
                    os.close(fd)
            except OSError:
                _unlink(path)
                path = None
        path = node.bcast(path, root=0)
        mem = None
        if path is not None:
            try:
                fd = os.open(path, os.O_RDWR)
                try:
                    mem = mmap.mmap(fd, total)
                finally:
                    os.close(fd)
            except OSError:
                mem = None
        ok = node.allreduce(1 if mem is not None else 0, op=MPI.MIN)
        if node.rank == 0 and path is not None:
            _unlink(path)  # every rank has mapped it (or given up): the name is not needed
        if not ok:
            if mem is not None:
                mem.close()
            node.Free()
            return None
        return cls(group, node, mem, specs, region)

    # ----------------------------------------------------------------- one pass
    def next_buffer(self, b):
        """This rank's buffer of bucket ``b`` for the pass that starts filling it: the other
        slot than the last pass's."""
        s = self.slot[b] ^ 1
        self.slot[b] = s
        return self.views[b][s][self.rank]

    def buffer(self, b):
        """This rank's buffer of bucket ``b`` in the current pass's slot."""
        return self.views[b][self.slot[b]][self.rank]

    def post(self, b):
        """This rank's part of bucket ``b`` is packed: tell the others."""
        comm = self.comm
        recvs = []
        for k in range(self.n):
            if k != self.rank:
                self.sends.append(comm.Isend([_EMPTY, _comm.mpi().BYTE], k, 2 * b))
                recvs.append(comm.Irecv([_EMPTY, _comm.mpi().BYTE], k, 2 * b))
        self.posted[b] = recvs

    def progress(self):
        """Average every posted bucket whose other parts are all packed (called while the
        backward pass still runs, so a rank does its share as soon as it can)."""
        for b in [b for b, reqs in self.posted.items() if b not in self.reduced]:
            reqs = self.posted[b]
            if all(_comm._test(r, _WHAT, self.group) for r in reqs):
                self._average(b)

    def finish(self, b):
        """Wait until bucket ``b`` holds the average in this rank's buffer, and return it."""
        # every posted bucket is averaged before any wait for the others' averages: a wait
        # for packing depends only on the others having posted (which they do before any
        # finish), so ranks that finish their buckets in different orders cannot deadlock
        for c in sorted(self.posted):
            if c not in self.reduced:
                for r in self.posted[c]:
                    _comm.wait(r, _WHAT, self.group)
                self._average(c)
        for r in self.reduced.pop(b):
            _comm.wait(r, _WHAT, self.group)
        del self.posted[b]
        return self.buffer(b)

    def end_pass(self):
        """Complete the sends of the pass (they finished when their messages were received)."""
        for r in self.sends:
            _comm.wait(r, _WHAT, self.group)
        self.sends = []

    def abandon(self):
        """Forget a pass that raised half-way (its messages are cancelled where possible)."""
        for reqs in list(self.posted.values()) + list(self.reduced.values()):
            for r in reqs:
                _cancel(r)
        for r in self.sends:
            _cancel(r)
        self.posted, self.reduced, self.sends = {}, {}, []

    # ----------------------------------------------------------------- the average
    def _average(self, b):
        parts = self.views[b][self.slot[b]]
        size = parts[0].size
        lo, hi = size * self.rank // self.n, size * (self.rank + 1) // self.n
        average_into(parts, lo, hi)
        comm = self.comm
        recvs = []
        for k in range(self.n):
            if k != self.rank:
                self.sends.append(comm.Isend([_EMPTY, _comm.mpi().BYTE], k, 2 * b + 1))
                recvs.append(comm.Irecv([_EMPTY, _comm.mpi().BYTE], k, 2 * b + 1))
        self.reduced[b] = recvs


def average_into(parts, lo, hi):
    """``parts[k][lo:hi] = mean over k of parts[k][lo:hi]`` for every k, in chunks that stay in
    cache (integers: the floor of the mean, as MPI's path gives)."""
    dtype = parts[0].dtype
    acc = _accumulator(dtype)
    n = len(parts)
    step = max(1, _CHUNK_BYTES // dtype.itemsize)
    tmp = np.empty(min(step, max(hi - lo, 1)), dtype=acc)
    integer = acc.kind in "iu"
    scale = None if integer else acc.type(1.0 / n)
    with np.errstate(all="ignore"):  # inf and NaN gradients pass through, as through MPI
        _average_chunks(parts, lo, hi, step, tmp, acc, dtype, integer, scale)


def _average_chunks(parts, lo, hi, step, tmp, acc, dtype, integer, scale):
    n = len(parts)
    for c in range(lo, hi, step):
        e = min(c + step, hi)
        t = tmp[:e - c]
        if acc == dtype:
            if not integer:  # floats: straight into the first rank's buffer, then copied
                first = parts[0][c:e]
                np.add(first, parts[1][c:e], out=first)
                for k in range(2, n):
                    first += parts[k][c:e]
                first *= scale
                for k in range(1, n):
                    parts[k][c:e] = first
                continue
            np.add(parts[0][c:e], parts[1][c:e], out=t)
        else:
            t[...] = parts[0][c:e]
            t += parts[1][c:e]
        for k in range(2, n):
            t += parts[k][c:e]
        if integer:
            t //= n
        else:
            t *= scale
        for p in parts:
            p[c:e] = t


def _cancel(req):
    try:
        req.Cancel()
        req.Free()
    except Exception:  # noqa: BLE001  (already complete or freed: nothing to undo)
        pass


def _unlink(path):
    try:
        os.unlink(path)
    except OSError:
        pass
