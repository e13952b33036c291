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

When the group spans several machines with the same number of ranks on each (machines are
told apart by hostname), the buckets are shared by the ranks of each machine and the average
is hierarchical: each rank sums its slice over its machine's ranks, the ranks holding the same
slice on every machine all-reduce it through MPI (one communicator per bucket, so buckets that
finish in different orders on different ranks cannot cross), and each rank writes the
average back into every region of its machine. Only ``1/k`` of each bucket leaves a machine
per rank (``k`` ranks per machine), instead of every rank's whole bucket.

``PADDLE_HL_DP_SHM=0`` turns it off (gradients then go through MPI's all-reduce).
"""

from __future__ import annotations

import mmap
import os
import socket
import tempfile
import uuid

import numpy as np

from ..backend import tuning
from . import _comm

__all__ = []

ENV = "PADDLE_HL_DP_SHM"
_ALIGN = 4096  # every region starts on its own page
_CHUNK_BYTES = tuning.value("dp.shm_chunk_bytes")
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

    def __init__(self, group, comm, mem, specs, region, cross=None):
        self.group = group  # named by the errors of a lost rank
        # several machines: per bucket, the communicator of the ranks holding the same slice
        # on every machine (None: the whole group is on this machine)
        self.cross = cross
        self.crossing = {}  # bucket -> (request, local sum of this rank's slice, lo, hi)
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
        names = group.comm.allgather(socket.gethostname())
        color = names.index(names[group.rank])
        node = group.comm.Split(color, key=group.rank)
        cross = None
        if node.size != group.nranks:
            sizes = {names.count(h) for h in names}
            if len(sizes) != 1 or node.size < 2:
                node.Free()
                return None  # uneven machines, or one rank per machine: MPI's all-reduce
            across = group.comm.Split(node.rank, key=group.rank)
            cross = [across.Dup() for _ in specs]
            across.Free()
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
        if cross is not None:  # every machine must have its shared memory
            ok = group.comm.allreduce(ok, op=MPI.MIN)
        if not ok:
            if mem is not None:
                mem.close()
            node.Free()
            for c in cross or ():
                c.Free()
            return None
        return cls(group, node, mem, specs, region, cross)

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
        for b in [b for b in self.posted if b not in self.reduced and b not in self.crossing]:
            reqs = self.posted[b]
            if all(_comm._test(r, _WHAT, self.group) for r in reqs):
                self._average(b)
        for b in list(self.crossing):
            self._settle(b, wait=False)

    def finish(self, b):
        """Wait until bucket ``b`` holds the average in this rank's buffer, and return it."""
        # every posted bucket is averaged before any wait for the others' averages: a wait
        # for packing depends only on the others having posted (which they do before any
        # finish), so ranks that finish their buckets in different orders cannot deadlock
        for c in sorted(self.posted):
            if c not in self.reduced and c not in self.crossing:
                for r in self.posted[c]:
                    _comm.wait(r, _WHAT, self.group)
                self._average(c)
        # then every sum across machines: each depends only on the other machines having
        # started it, which they do before waiting for anything but their own machine's packing
        for c in sorted(self.crossing):
            self._settle(c, wait=True)
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
        self.posted, self.reduced, self.sends, self.crossing = {}, {}, [], {}

    # ----------------------------------------------------------------- the average
    def _average(self, b):
        parts = self.views[b][self.slot[b]]
        size = parts[0].size
        lo, hi = size * self.rank // self.n, size * (self.rank + 1) // self.n
        if self.cross is not None:
            # several machines: this machine's sum of the slice, then the sum across machines
            total = sum_slice(parts, lo, hi)
            MPI = _comm.mpi()
            self.crossing[b] = (self.cross[b].Iallreduce(MPI.IN_PLACE, total, op=MPI.SUM),
                                total, lo, hi)
            return
        average_into(parts, lo, hi)
        self._announce(b)

    def _settle(self, b, wait):
        """Bucket ``b``'s slice summed across machines: write its average into every region of
        this machine and tell the others (False: not arrived yet, when not ``wait``)."""
        req, total, lo, hi = self.crossing[b]
        if wait:
            _comm.wait(req, _WHAT, self.group)
        elif not _comm._test(req, _WHAT, self.group):
            return False
        del self.crossing[b]
        parts = self.views[b][self.slot[b]]
        with np.errstate(all="ignore"):
            if total.dtype.kind in "iu":
                total //= self.group.nranks
            else:
                total *= total.dtype.type(1.0 / self.group.nranks)
            for p in parts:
                p[lo:hi] = total
        self._announce(b)
        return True

    def _announce(self, b):
        """This rank's slice of bucket ``b`` holds the average: tell the others."""
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


def sum_slice(parts, lo, hi):
    """``sum over k of parts[k][lo:hi]`` in the accumulator dtype (float32 for 16-bit floats),
    summed in rank order as :func:`average_into` does."""
    acc = _accumulator(parts[0].dtype)
    total = np.empty(hi - lo, dtype=acc)
    with np.errstate(all="ignore"):
        if len(parts) > 1 and acc == parts[0].dtype:
            np.add(parts[0][lo:hi], parts[1][lo:hi], out=total)
            rest = parts[2:]
        else:
            total[...] = parts[0][lo:hi]
            rest = parts[1:]
        for p in rest:
            total += p[lo:hi]
    return total


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
