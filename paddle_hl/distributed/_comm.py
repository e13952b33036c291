"""The communication engine under paddle_hl.distributed: MPI through mpi4py.

Every collective of the public API comes down to one of the calls here, on NumPy arrays passed
through the buffer protocol (no pickling, no copies for contiguous arrays of a type MPI knows).
Process groups are MPI communicators. Blocking calls are issued as non-blocking requests and
polled, so that a rank that died or hangs turns into a clear error after a timeout instead of a
job that never ends.

The timeout is ``PADDLE_HL_COLLECTIVE_TIMEOUT`` seconds (default 1800, as Paddle's process
groups). Under the project's launcher a rank also learns at once when another rank of the job
has ended (its exit status comes from the launcher's monitor, see ``launch._worker``): a wait
that still needs that rank then stops with an error saying so, instead of running out the
timeout.
"""

from __future__ import annotations

import os
import threading
import time
import zlib

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


def op_name(op) -> str:
    """``ReduceOp.SUM``'s name, ``'SUM'``, for the errors."""
    return _OP_NAMES.get(op, str(op))


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


# global rank -> how it ended ("0", "1", ... its exit status, or "died"), as the launcher
# reports it while this rank still runs (see launch._worker)
_ENDED: dict = {}
_ENDED_LOCK = threading.Lock()
# seconds a wait goes on after learning that a peer ended: the peer may have finished its part
# of this very operation just before exiting, so the data can still be arriving
_GRACE = 1.0


def note_peer_end(rank: int, status: str) -> None:
    """Record that global rank ``rank`` of the job has ended with ``status`` (called by the
    rank's link to the launcher)."""
    with _ENDED_LOCK:
        _ENDED.setdefault(int(rank), str(status))


def _ended_peer(group, peers):
    """The first (rank, status) among ``peers`` (global ranks; the group's other members when
    None) that has ended, or None."""
    if not _ENDED:
        return None
    me = group.ranks[group.rank] if 0 <= group.rank < len(group.ranks) else None
    for r in (group.ranks if peers is None else peers):
        if r != me and r in _ENDED:
            return r, _ENDED[r]
    return None


def _ended_message(what, group, peer):
    rank, status = peer
    me = group.ranks[group.rank] if 0 <= group.rank < len(group.ranks) else group.rank
    how = ("died (killed by a signal)" if status == "died"
           else f"exited with code {status}")
    hint = (" (it finished its script without taking part in this operation: every rank must "
            "make the same collective calls)" if status == "0" else "")
    return (f"paddle_hl.distributed.{what}: rank {rank} {how} while rank {me} was waiting for "
            f"it in {what}{hint}; group {group.id} (ranks {group.ranks})")


def _test(req, what, group, peers=None, status=None):
    try:
        return req.Test(status)
    except mpi().Exception as e:  # the communicators return errors (set at init)
        if e.Get_error_class() == mpi().ERR_TRUNCATE:
            raise ValueError(
                f"paddle_hl.distributed.{what}: rank {group.rank} of group {group.id} (ranks "
                f"{group.ranks}) received more data than its tensor holds: the ranks passed "
                f"tensors of different shapes or dtypes (with {CHECK_ENV}=1, the default, the "
                f"collectives name them) ({e})") from None
        peer = _ended_peer(group, peers)
        if peer is not None:
            raise PeerLost(_ended_message(what, group, peer)) from None
        hint = ("" if checks_on() else
                f" (or the ranks passed tensors of different shapes or dtypes: {CHECK_ENV}=0 "
                "turned off the check that names them)")
        raise PeerLost(f"paddle_hl.distributed.{what}: rank {group.rank} of group {group.id} "
                       f"(ranks {group.ranks}) lost contact with another rank, which probably "
                       f"died{hint}: {e}") from None


def wait(req, what: str, group, peers=None, status=None) -> None:
    """Wait for an MPI request, raising a clear error when the other ranks do not answer.

    A non-blocking collective advances only while this process is inside an MPI call, so the
    wait keeps polling: a large all-reduce moves through the shared-memory transport in many
    small steps, and a sleep between two polls would stall every one of them. Between polls
    the core is offered to other processes (``sched_yield``), which costs nothing when each
    rank has its own core and keeps an oversubscribed machine usable. After a second (a rank
    far behind, or stuck) the polls come in bursts separated by 1 ms sleeps, so a long wait
    does not hold a core while the transfer still moves once the others arrive; the wait
    gives up after the timeout, or soon after the launcher reports that a rank it waits for
    (``peers``, global ranks; every other member of ``group`` when None) has ended.
    """
    if _test(req, what, group, peers, status):
        return
    limit = timeout()
    start = time.monotonic()
    deadline = start + limit
    spin_until = start + 1.0
    polls = 0
    ended_at = None
    while not _test(req, what, group, peers, status):
        polls += 1
        if polls & 63:
            continue
        now = time.monotonic()
        if _ENDED and ended_at is None and _ended_peer(group, peers) is not None:
            ended_at = now
        if ended_at is not None and now > ended_at + _GRACE:
            raise PeerLost(_ended_message(what, group, _ended_peer(group, peers)))
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


CHECK_ENV = "PADDLE_HL_CHECK_COLLECTIVES"


def checks_on() -> bool:
    """Whether collectives compare their arguments across ranks (``PADDLE_HL_CHECK_COLLECTIVES``,
    on by default; ``0`` saves one small all-gather per call)."""
    value = os.environ.get(CHECK_ENV)
    if value is None:
        return True
    value = value.strip().lower()
    if value in ("0", "false", "off", "no"):
        return False
    if value in ("", "1", "true", "on", "yes"):
        return True
    raise ValueError(f"paddle_hl.distributed: {CHECK_ENV} must be 0 or 1, got {value!r}")


def digest(desc) -> int:
    """A 63-bit fingerprint of ``desc`` (its ``repr``), equal on every rank for equal values."""
    data = repr(desc).encode()
    return (zlib.crc32(data) << 31) ^ zlib.adler32(data)


def describe_tensor(a) -> str:
    """``[2, 3] float32``: an array's shape and dtype as the errors name them."""
    return f"{list(a.shape)} {a.dtype}"


def agree(group, what: str, desc: dict, force=False) -> None:
    """Check that every rank of ``group`` passes the same arguments ``desc`` to ``what``.

    The ranks all-gather a 64-bit fingerprint of ``desc`` (one small non-blocking all-gather,
    under the collective timeout); only when the fingerprints differ are the descriptions
    themselves gathered, for the error. Every rank raises the same error, naming each rank's
    arguments. Skipped when ``PADDLE_HL_CHECK_COLLECTIVES=0`` unless ``force``.

    Args:
        group: the group (with an MPI communicator and more than one rank).
        what: the operation, as the errors name it.
        desc: argument name -> a value that must be the same on every rank.
        force: check even when the switch is off.

    Raises:
        ValueError: the ranks passed different arguments.
    """
    if not force and not checks_on():
        return
    _gather_check(group, what, digest(desc), lambda: desc)


def agree_tensor(group, what: str, arr, **more) -> None:
    """:func:`agree` on an array's shape and dtype and the arguments ``more``; the fingerprint
    of a combination already seen comes from a small cache (a training loop repeats the same
    few)."""
    if not checks_on():
        return
    key = (what, arr.shape, arr.dtype, *more.items())
    d = _DIGESTS.get(key)
    if d is None:
        d = digest({"tensor": describe_tensor(arr), **more})
        if len(_DIGESTS) > 4096:
            _DIGESTS.clear()
        _DIGESTS[key] = d
    _gather_check(group, what, d, lambda: {"tensor": describe_tensor(arr), **more})


_DIGESTS: dict = {}


def differ(group, what, fingerprint) -> bool:
    """All-gather ``fingerprint`` (an int64) over ``group``: True when the ranks' differ."""
    mine = np.array([fingerprint], np.int64)
    every = np.empty(group.nranks, np.int64)
    wait(group.comm.Iallgather(mine, every), what, group)
    return not (every == every[0]).all()


def _gather_check(group, what, fingerprint, describe):
    """All-gather ``fingerprint`` over ``group``; when they differ, gather ``describe()`` from
    every rank and raise the error naming them."""
    if not differ(group, what, fingerprint):
        return
    descs = group.comm.allgather(describe())  # every rank is here: the lists are small
    raise ValueError(mismatch_message(what, group, descs))


def mismatch_message(what, group, descs) -> str:
    """The error for ranks of ``group`` that passed different arguments ``descs`` (one dict per
    rank) to ``what``: the arguments that differ, rank by rank."""
    keys = [k for k in descs[0] if any(d.get(k) != descs[0][k] for d in descs)]
    keys += [k for d in descs for k in d if k not in descs[0] and k not in keys]
    per_rank = "; ".join(
        f"rank {group.ranks[i]}: " + ", ".join(f"{k} {d.get(k, '(none)')}" for k in keys)
        for i, d in enumerate(descs))
    named = " and ".join(_PHRASES.get(k, k) for k in keys)
    return (f"paddle_hl.distributed.{what}: every rank of group {group.id} must pass the same "
            f"{named}, got {per_rank}")


_PHRASES = {"tensor": "tensor shape and dtype"}


class Task:
    """The handle of an asynchronous collective (``sync_op=False``, ``isend``, ``irecv``)."""

    def __init__(self, requests, what, group, finish=None, peers=None):
        self._requests = list(requests)
        self._what = what
        self._group = group
        self._finish = finish
        self._peers = peers  # the global ranks it waits for (None: the whole group)
        self._done = False

    def is_completed(self) -> bool:
        """True once the communication has finished (and its result is in place)."""
        if self._done:
            return True
        if all(_test(r, self._what, self._group, self._peers) for r in self._requests):
            self._complete()
        return self._done

    def wait(self) -> bool:
        """Block until the communication has finished; the result is then in place."""
        if not self._done:
            for r in self._requests:
                wait(r, self._what, self._group, self._peers)
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
