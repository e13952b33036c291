"""The communication engine under paddle_hl.distributed: MPI through mpi4py.

Every collective of the public API comes down to one of the calls here, on NumPy arrays passed
through the buffer protocol (no pickling, no copies for contiguous arrays of a type MPI knows).
Process groups are MPI communicators. Blocking calls are issued as non-blocking requests and
polled, so that a rank that died or hangs turns into a clear error after a timeout instead of a
job that never ends.

The timeout is ``PADDLE_HL_COLLECTIVE_TIMEOUT`` seconds (default 1800, as Paddle's process
groups).
"""

from __future__ import annotations

import os
import time

import numpy as np

__all__ = []

TIMEOUT_ENV = "PADDLE_HL_COLLECTIVE_TIMEOUT"
_MPI = [None]


def mpi():
    """The ``mpi4py.MPI`` module, imported on first use with a clear error when missing."""
    if _MPI[0] is None:
        try:
            from mpi4py import MPI
        except ImportError as e:
            raise ImportError(
                "paddle_hl.distributed: running on several processes needs mpi4py and an MPI "
                "library: pip install 'paddle_hl[distributed]' (mpi4py with the mpich wheel) "
                f"({e})") from None
        _MPI[0] = MPI
    return _MPI[0]


def timeout() -> float:
    """Seconds a collective may wait for the other ranks before it raises."""
    value = os.environ.get(TIMEOUT_ENV, "1800")
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"paddle_hl.distributed: {TIMEOUT_ENV} must be a number of seconds, "
                         f"got {value!r}") from None


class ReduceOp:
    """Reduction operations of the collectives (``all_reduce``, ``reduce``, ...)."""

    SUM = 0
    MAX = 1
    MIN = 2
    PROD = 3
    AVG = 4


_OP_NAMES = {ReduceOp.SUM: "SUM", ReduceOp.MAX: "MAX", ReduceOp.MIN: "MIN",
             ReduceOp.PROD: "PROD", ReduceOp.AVG: "AVG"}


def check_op(op, fn: str) -> int:
    try:
        op = int(op)
    except (TypeError, ValueError):
        op = None
    if op not in _OP_NAMES:
        raise ValueError(f"paddle_hl.distributed.{fn}: op must be one of ReduceOp.SUM, MAX, MIN, "
                         "PROD or AVG")
    return op


def mpi_op(op: int):
    MPI = mpi()
    return {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.MAX: MPI.MAX,
            ReduceOp.MIN: MPI.MIN, ReduceOp.PROD: MPI.PROD}[op]


# dtypes MPI reduces natively; the rest (float16, bfloat16, bool) reduce through a wider copy
_NATIVE = frozenset("bBhHiIlLqQfd") | {"F", "D"}


def reducible(a: np.ndarray):
    """``a`` itself when MPI can reduce its dtype, else a float64/int64 copy to reduce."""
    if a.dtype.char in _NATIVE and a.dtype.kind != "V":
        return a
    if a.dtype == np.bool_:
        return a.astype(np.int32)
    return a.astype(np.float64)


def as_bytes(a: np.ndarray) -> np.ndarray:
    """A uint8 view of a contiguous array: moves any dtype (bfloat16 included) unchanged."""
    return a.reshape(-1).view(np.uint8)


class PeerLost(RuntimeError):
    """Another rank of the group died or stopped answering during a collective."""


def _test(req, what, group):
    try:
        return req.Test()
    except mpi().Exception as e:  # the communicators return errors (set at init)
        raise PeerLost(f"paddle_hl.distributed.{what}: rank {group.rank} of group {group.id} "
                       f"(ranks {group.ranks}) lost contact with another rank, which probably "
                       f"died: {e}") from None


def wait(req, what: str, group) -> None:
    """Wait for an MPI request, raising a clear error when the other ranks do not answer.

    A non-blocking collective advances only while this process is inside an MPI call, so the
    wait keeps polling: a large all-reduce moves through the shared-memory transport in many
    small steps, and a sleep between two polls would stall every one of them. Between polls
    the core is offered to other processes (``sched_yield``), which costs nothing when each
    rank has its own core and keeps an oversubscribed machine usable. After a second (a rank
    far behind, or stuck) the polls come in bursts separated by 1 ms sleeps, so a long wait
    does not hold a core while the transfer still moves once the others arrive; the wait
    gives up after the timeout.
    """
    if _test(req, what, group):
        return
    limit = timeout()
    start = time.monotonic()
    deadline = start + limit
    spin_until = start + 1.0
    polls = 0
    while not _test(req, what, group):
        polls += 1
        if polls & 63:
            continue
        now = time.monotonic()
        if now > deadline:
            raise PeerLost(
                f"paddle_hl.distributed.{what}: rank {group.rank} of group {group.id} "
                f"(ranks {group.ranks}) waited {limit:g} s for the other ranks: one of them "
                f"died or is stuck. Set {TIMEOUT_ENV} to wait longer.")
        if now < spin_until or polls & 1023:
            _yield()
        else:
            time.sleep(1e-3)


_yield = getattr(os, "sched_yield", lambda: time.sleep(0))


class Task:
    """The handle of an asynchronous collective (``sync_op=False``, ``isend``, ``irecv``)."""

    def __init__(self, requests, what, group, finish=None):
        self._requests = list(requests)
        self._what = what
        self._group = group
        self._finish = finish
        self._done = False

    def is_completed(self) -> bool:
        """True once the communication has finished (and its result is in place)."""
        if self._done:
            return True
        if all(_test(r, self._what, self._group) for r in self._requests):
            self._complete()
        return self._done

    def wait(self) -> bool:
        """Block until the communication has finished; the result is then in place."""
        if not self._done:
            for r in self._requests:
                wait(r, self._what, self._group)
            self._complete()
        return True

    def _complete(self):
        self._done = True
        if self._finish is not None:
            finish, self._finish = self._finish, None
            finish()


# The NCCL module (``_nccl``, which builds on this one) installs here how a group names its
# backend when it is imported; until then every group runs on MPI.
backend_of = None


class Group:
    """A process group: the ranks taking part in a collective, on one MPI communicator.

    Attributes:
        rank (int): this process's rank in the group (-1 when it is not a member).
        nranks (int): the number of processes in the group.
        ranks (list[int]): the global ranks of the members.
        id (int): the group's id (0 is the global group).
    """

    def __init__(self, rank, gid, ranks, comm, name=None):
        self.rank = rank
        self.id = gid
        self.ranks = list(ranks)
        self.nranks = len(self.ranks)
        self.comm = comm
        self.name = name or f"_default_pg{gid}"
        # the group's NCCL communicator (see _nccl): None until needed, False when unusable
        self.nccl = None

    world_size = property(lambda self: self.nranks)
    process_group = property(lambda self: self.comm)

    @property
    def backend(self) -> str:
        """'nccl' when collectives on the default device (a GPU) go through NCCL, else 'mpi'."""
        return "mpi" if backend_of is None else backend_of(self)

    def is_member(self) -> bool:
        return self.rank >= 0

    def get_group_rank(self, rank: int) -> int:
        """The rank in this group of the process with global rank ``rank`` (-1 if absent)."""
        return self.ranks.index(rank) if rank in self.ranks else -1

    def __repr__(self):
        return (f"Group(id={self.id}, rank={self.rank}, nranks={self.nranks}, "
                f"ranks={self.ranks}, backend={self.backend})")
