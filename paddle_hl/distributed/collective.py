"""Process groups and collective communication, with Paddle 2.6's names and arguments.

Ranks given to the collectives (``src``, ``dst``, ``new_group(ranks)``) are global ranks, as in
Paddle. Results are written into the tensors passed in (``all_reduce`` reduces ``tensor`` in
place) and lists given for outputs are filled. With ``sync_op=False`` a :class:`Task` is
returned; its ``wait()`` puts the result in place.

A world of one process needs no MPI at all: every collective is then the identity.

Before it communicates, every collective on several ranks checks that the ranks passed the
same arguments (shapes, dtypes, the operation, the root): the ranks all-gather a 64-bit
fingerprint of them, and when they differ every rank raises the same error naming each rank's
arguments, instead of reducing mismatched buffers into garbage or waiting for a transfer that
never matches. ``send`` sends a small header before the data, so ``recv`` names both sides
when they differ. ``PADDLE_HL_CHECK_COLLECTIVES=0`` turns the collectives' check off (the same
setting on every rank: the launchers pass the environment on). The check costs one small
all-gather per call: on 2 ranks of one machine about 9 us (an all-reduce of 4 floats takes
16 us instead of 7), nothing that shows beside a transfer of megabytes.

Tensors on a GPU go through NCCL (see :mod:`paddle_hl.distributed._nccl`): the operation is
queued on the current CUDA stream and the call returns without waiting for the GPU. Every rank
of a group must then pass tensors on its GPU, as every rank passes tensors of the same shape.
"""

from __future__ import annotations

import datetime
import functools
import inspect
import os

import numpy as np

from .. import backend
from ..framework.tensor import writable
from ..tensor._helpers import check_tensor
from . import _comm, _nccl
from ._comm import Group, PeerLost, ReduceOp, Task

__all__ = []  # the public names are re-exported by paddle_hl.distributed

# process groups by id; 0 is the global group
_GROUPS: dict[int, Group] = {}
_NEXT_ID = [1]

# the variables launchers set, in the order they are read: Paddle's, then MPICH's, Open MPI's
_RANK_VARS = ("PADDLE_TRAINER_ID", "PMI_RANK", "OMPI_COMM_WORLD_RANK")
_SIZE_VARS = ("PADDLE_TRAINERS_NUM", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE")


def _env_int(names, default):
    for n in names:
        v = os.environ.get(n)
        if v not in (None, ""):
            try:
                return int(v)
            except ValueError:
                raise ValueError(f"paddle_hl.distributed: the environment variable {n} must be "
                                 f"an integer, got {v!r}") from None
    return default


def env_rank() -> int:
    """This process's rank as the launcher announced it (0 when not launched in parallel)."""
    return _env_int(_RANK_VARS, 0)


def env_world_size() -> int:
    """The number of processes the launcher started (1 when not launched in parallel)."""
    return _env_int(_SIZE_VARS, 1)


class ParallelEnv:
    """The trainer environment as the launcher describes it (Paddle's variables, or MPI's),
    read from the environment as Paddle does, whatever groups this process has made."""

    @property
    def rank(self) -> int:
        return env_rank()

    @property
    def world_size(self) -> int:
        return env_world_size()

    @property
    def device_id(self) -> int:
        return int(os.environ.get("FLAGS_selected_gpus", "0").split(",")[0])

    @property
    def device_type(self) -> str:
        return "gpu" if _nccl.default_is_gpu() else "cpu"

    @property
    def current_endpoint(self) -> str:
        return os.environ.get("PADDLE_CURRENT_ENDPOINT", "")

    @property
    def trainer_endpoints(self) -> list:
        eps = os.environ.get("PADDLE_TRAINER_ENDPOINTS", "")
        return eps.split(",") if eps else []

    @property
    def nrings(self) -> int:
        return 1

    @property
    def pg_timeout(self) -> int:
        return int(_comm.timeout() * 1000)

    local_rank = rank
    nranks = world_size
    dev_id = device_id


def init_parallel_env():
    """Join the other processes of the job and create the global group.

    With one process this needs nothing; with several (started by
    ``python -m paddle_hl.distributed.launch``, :func:`spawn` or ``mpiexec``) it initialises MPI
    and checks that MPI sees as many processes as the launcher announced.

    Returns:
        ParallelEnv: the environment (rank, world size).

    Examples:
        >>> import paddle_hl.distributed as dist
        >>> env = dist.init_parallel_env()
        >>> env.world_size
        1
    """
    if 0 in _GROUPS:
        return ParallelEnv()
    size = env_world_size()
    if size > 1 and _nccl.default_is_gpu():
        _use_local_gpu()
    if size <= 1:
        _GROUPS[0] = Group(0, 0, [0], None)
        return ParallelEnv()
    MPI = _comm.mpi()
    world = MPI.COMM_WORLD
    if world.Get_size() != size:
        raise RuntimeError(
            f"paddle_hl.distributed.init_parallel_env: the launcher announced {size} processes "
            f"but MPI sees {world.Get_size()}: start the job with "
            "'python -m paddle_hl.distributed.launch --nproc_per_node N script.py', "
            "paddle_hl.distributed.spawn or mpiexec, not as separate processes")
    rank = world.Get_rank()
    if rank != env_rank():
        raise RuntimeError(f"paddle_hl.distributed.init_parallel_env: this process has MPI rank "
                           f"{rank} but the launcher gave it rank {env_rank()}")
    # errors come back as exceptions (a rank that died becomes a clear error on the others,
    # not an abort that hides which rank failed first)
    world.Set_errhandler(MPI.ERRORS_RETURN)
    _GROUPS[0] = Group(rank, 0, range(size), world)
    if _nccl.default_is_gpu():
        _nccl.communicator(_GROUPS[0])  # as Paddle: the GPU job's communicator is made now
    return ParallelEnv()


def _use_local_gpu():
    """Make this rank's GPU (``FLAGS_selected_gpus``, its rank on the machine) the default
    device, as Paddle's init_parallel_env does: ``set_device('gpu')`` in every rank of a job
    would otherwise put them all on GPU 0."""
    from ..framework.place import set_device
    n = backend.device_count()
    if n:
        set_device(f"gpu:{ParallelEnv().device_id % n}")


def is_initialized() -> bool:
    """True once :func:`init_parallel_env` has created the global group."""
    return 0 in _GROUPS


def is_available() -> bool:
    """True: collectives are available (MPI is loaded when a job has several processes)."""
    return True


def _group(group, fn) -> Group:
    if group is None:
        g = _GROUPS.get(0)
        if g is None:
            raise RuntimeError(f"paddle_hl.distributed.{fn}: the global group is not "
                               "initialized: call paddle.distributed.init_parallel_env() first")
        return g
    if not isinstance(group, Group):
        raise TypeError(f"paddle_hl.distributed.{fn}: group must be a Group from new_group() "
                        f"or None, got {type(group).__name__}")
    return group


def get_group(id=0):  # noqa: A002  (Paddle's name)
    """The process group with the given id (0: the global group), or None."""
    return _GROUPS.get(id)


def get_backend(group=None) -> str:
    """The communication backend of ``group``: ``'NCCL'`` when the default device is a GPU and
    NCCL can be used there, else ``'MPI'``."""
    return _group(group, "get_backend").backend.upper()


def get_rank(group=None) -> int:
    """This process's rank in ``group`` (the global rank when ``group`` is None)."""
    if group is None:
        g = _GROUPS.get(0)
        return g.rank if g is not None else env_rank()
    return _group(group, "get_rank").rank


def get_world_size(group=None) -> int:
    """The number of processes in ``group`` (all of them when ``group`` is None)."""
    if group is None:
        g = _GROUPS.get(0)
        return g.nranks if g is not None else env_world_size()
    return _group(group, "get_world_size").nranks


def new_group(ranks=None, backend=None, timeout=datetime.timedelta(seconds=1800)):
    """Create a process group of some of the ranks. Every process must call it, in the same order.

    Args:
        ranks (list[int], optional): global ranks of the members (all ranks when None).
        backend (str, optional): accepted for compatibility; the engine is MPI.
        timeout (datetime.timedelta, optional): accepted for compatibility; the collective
            timeout is ``PADDLE_HL_COLLECTIVE_TIMEOUT``.

    Returns:
        Group: the group (with ``rank == -1`` on processes that are not members).
    """
    world = _group(None, "new_group")
    ranks = list(range(world.nranks)) if ranks is None else sorted(int(r) for r in ranks)
    bad = [r for r in ranks if not 0 <= r < world.nranks]
    if bad or len(set(ranks)) != len(ranks) or not ranks:
        raise ValueError(f"paddle_hl.distributed.new_group: ranks must be distinct ranks in "
                         f"[0, {world.nranks}), got {ranks}")
    gid = _NEXT_ID[0]
    _NEXT_ID[0] += 1
    if world.comm is None:
        comm = None
    else:
        comm = world.comm.Create(world.comm.Get_group().Incl(ranks))
        if comm == _comm.mpi().COMM_NULL:
            comm = None
    rank = ranks.index(world.rank) if world.rank in ranks else -1
    g = Group(rank, gid, ranks, comm)
    _GROUPS[gid] = g
    if comm is not None and g.nranks > 1 and _nccl.default_is_gpu():
        _nccl.communicator(g)  # the members make the group's own NCCL communicator
    return g


def destroy_process_group(group=None):
    """Free ``group``'s communicator; with None, every group (the global one included)."""
    groups = list(_GROUPS.values()) if group is None else [_group(group, "destroy_process_group")]
    for g in groups:
        if g.nccl:
            g.nccl.destroy()
        g.nccl = None
        if g.comm is not None and g.id != 0:
            g.comm.Free()
        g.comm = None
        _GROUPS.pop(g.id, None)


# ------------------------------------------------------------------ helpers


def _host(t):
    """A C-contiguous NumPy array with ``t``'s values, and whether it is ``t``'s own memory."""
    a = t._data
    if isinstance(a, np.ndarray):
        if a.flags.c_contiguous:
            return a, True
        return np.ascontiguousarray(a), False
    return np.ascontiguousarray(a.get()), False  # a CuPy array: through the host


def _store(t, values):
    """Write ``values`` into ``t`` in place (keeping its dtype, shape and device)."""
    if isinstance(t._data, np.ndarray):
        writable(t)[...] = _host_array(values).reshape(t._data.shape)
    else:
        t._data[...] = _to_device(values, t._data).reshape(t._data.shape)


def _host_array(values):
    return values if isinstance(values, np.ndarray) else np.asarray(
        values.get() if hasattr(values, "get") else values)


def _to_device(values, like):
    return backend.get_array_module(like).asarray(values, dtype=like.dtype)


def _gpu(g, tensor):
    """The group's NCCL communicator when ``tensor`` is on a GPU and NCCL can be used there
    (None: the MPI path, through host memory for a GPU tensor)."""
    a = tensor._data
    if isinstance(a, np.ndarray):
        return None
    return _nccl.communicator(g, a.device.id)


def _root(g, rank, fn, arg):
    r = g.get_group_rank(int(rank))
    if r < 0:
        raise ValueError(f"paddle_hl.distributed.{fn}: {arg}={rank} is not a rank of the group "
                         f"(ranks {g.ranks})")
    return r


def _done(task, sync_op):
    if sync_op:
        if not isinstance(task, _nccl.GpuTask):  # NCCL work stays queued on the stream
            task.wait()
        return None
    return task


def _finished(sync_op, g, what):
    """The result of a collective that had nothing to communicate."""
    return None if sync_op else Task([], what, g)


def _agree(g, fn, tensor, **more):
    """Every rank must pass a tensor of the same shape and dtype (and the same ``more``
    arguments): check, naming each rank's (see ``_comm.agree``)."""
    _comm.agree_tensor(g, fn, tensor._data, **more)


def _collective(*tensors, lists=(), reduces=False):
    """The preamble every collective shares, as one decorator.

    Before the body runs: each argument named in ``tensors`` must be a Tensor and each named
    in ``lists`` a list, ``op`` (when ``reduces``) must be a ReduceOp, and ``group`` is
    resolved (the global group when None). On a rank outside the group the call does nothing
    (it returns None, or a finished Task when ``sync_op`` is False). The body gets the
    resolved :class:`Group` as ``group`` and the checked ``op``.
    """

    def wrap(body):
        fn = body.__name__
        params = inspect.signature(body).parameters
        names = tuple(params)
        defaults = {k: v.default for k, v in params.items() if v.default is not v.empty}

        @functools.wraps(body)
        def collective(*args, **kwargs):
            # the arguments by name, bound as Python binds them (inspect's bind costs about
            # 15 us a call); a call Python refuses goes to the body, which raises Python's
            # TypeError before it runs
            a = dict(defaults)
            a.update(zip(names, args))
            if kwargs:
                if any(k not in names or k in names[:len(args)] for k in kwargs):
                    body(*args, **kwargs)
                a.update(kwargs)
            if len(args) > len(names) or len(a) < len(names):
                body(*args, **kwargs)
            for arg in tensors:
                check_tensor(a[arg], f"paddle_hl.distributed.{fn}", arg)
            for arg in lists:
                _check_list(a[arg], fn, arg)
            if reduces:
                a["op"] = _comm.check_op(a["op"], fn)
            g = a["group"] = _group(a["group"], fn)
            if not g.is_member():
                return _finished(a.get("sync_op", True), g, fn)
            return body(**a)

        return collective

    return wrap


def _fill_list(out_list, parts, fn, arg, like=None):
    """Put the received tensors into the caller's list: extend an empty list, else write into
    the tensors it holds."""
    from ..framework.tensor import _wrap

    if not isinstance(out_list, list):
        raise TypeError(f"paddle_hl.distributed.{fn}: {arg} must be a list, got "
                        f"{type(out_list).__name__}")
    if not out_list:
        for p in parts:
            out_list.append(_wrap(p if like is None or isinstance(like, np.ndarray)
                                  else _to_device(p, like)))
        return
    if len(out_list) != len(parts):
        raise ValueError(f"paddle_hl.distributed.{fn}: {arg} holds {len(out_list)} tensors; it "
                         f"must be empty or hold one per rank ({len(parts)})")
    for t, p in zip(out_list, parts):
        check_tensor(t, f"paddle_hl.distributed.{fn}", arg)
        if tuple(t.shape) != p.shape:
            raise ValueError(f"paddle_hl.distributed.{fn}: a tensor of {arg} has shape "
                             f"{list(t.shape)}, expected {list(p.shape)}")
        _store(t, p)


# ------------------------------------------------------------------ reductions


@_collective("tensor", reduces=True)
def all_reduce(tensor, op=ReduceOp.SUM, group=None, sync_op=True):
    """Reduce ``tensor`` across the ranks of ``group``; every rank gets the result in place.

    Args:
        tensor (Tensor): input and output.
        op (ReduceOp, optional): SUM, MAX, MIN, PROD or AVG. Default: SUM.
        group (Group, optional): the group (the global group when None).
        sync_op (bool, optional): wait for the result (else return a Task). Default: True.

    Returns:
        None, or a Task when ``sync_op`` is False.

    Examples:
        >>> import paddle_hl as paddle
        >>> import paddle_hl.distributed as dist
        >>> _ = dist.init_parallel_env()
        >>> x = paddle.to_tensor([1.0, 2.0])
        >>> dist.all_reduce(x)
        >>> x.numpy()   # with one process
        array([1., 2.], dtype=float32)
    """
    g = group
    if g.nranks == 1:
        return _finished(sync_op, g, "all_reduce")
    _agree(g, "all_reduce", tensor, op=_comm.op_name(op))
    nc = _gpu(g, tensor)
    if nc is not None:
        return _done(nc.all_reduce(tensor._data, op), sync_op)
    arr, own = _host(tensor)
    buf = _comm.reducible(arr)
    req = g.comm.Iallreduce(_comm.mpi().IN_PLACE, buf, op=_comm.mpi_op(op))

    def finish():
        out = buf
        if op == ReduceOp.AVG:
            out = buf / g.nranks
        if out is not arr:
            if out.dtype != arr.dtype and arr.dtype.kind in "biu":
                out = np.trunc(out) if op == ReduceOp.AVG else out
            arr[...] = out.astype(arr.dtype, copy=False)
        if not own:
            _store(tensor, arr)

    return _done(Task([req], "all_reduce", g, finish), sync_op)


@_collective("tensor", reduces=True)
def reduce(tensor, dst, op=ReduceOp.SUM, group=None, sync_op=True):
    """Reduce ``tensor`` across the ranks of ``group`` into rank ``dst``'s ``tensor``.

    Args:
        tensor (Tensor): the input; on ``dst`` also the output.
        dst (int): the global rank that receives the result.
        op (ReduceOp, optional): Default: SUM.
        group (Group, optional): Default: the global group.
        sync_op (bool, optional): Default: True.
    """
    g = group
    root = _root(g, dst, "reduce", "dst")
    if g.nranks == 1:
        return _finished(sync_op, g, "reduce")
    _agree(g, "reduce", tensor, op=_comm.op_name(op), dst=int(dst))
    nc = _gpu(g, tensor)
    if nc is not None:
        return _done(nc.reduce(tensor._data, root, op), sync_op)
    MPI = _comm.mpi()
    arr, own = _host(tensor)
    buf = _comm.reducible(arr)
    if g.rank == root:
        req = g.comm.Ireduce(MPI.IN_PLACE, buf, op=_comm.mpi_op(op), root=root)
    else:
        req = g.comm.Ireduce(buf, None, op=_comm.mpi_op(op), root=root)

    def finish():
        if g.rank != root:
            return
        out = buf / g.nranks if op == ReduceOp.AVG else buf
        if out is not arr:
            arr[...] = out.astype(arr.dtype, copy=False)
        if not own:
            _store(tensor, arr)

    return _done(Task([req], "reduce", g, finish), sync_op)


@_collective("tensor", reduces=True)
def reduce_scatter(tensor, tensor_list, op=ReduceOp.SUM, group=None, sync_op=True):
    """Reduce ``tensor_list`` element-wise across ranks; rank i gets the i-th reduced tensor.

    Args:
        tensor (Tensor): the output, shaped as each element of ``tensor_list``.
        tensor_list (list[Tensor]): one tensor per rank of the group.
        op (ReduceOp, optional): Default: SUM.
        group (Group, optional): Default: the global group.
        sync_op (bool, optional): Default: True.
    """
    g = group
    if not isinstance(tensor_list, (list, tuple)) or len(tensor_list) != g.nranks:
        raise ValueError(f"paddle_hl.distributed.reduce_scatter: tensor_list must hold one tensor "
                         f"per rank of the group ({g.nranks})")
    for t in tensor_list:
        check_tensor(t, "paddle_hl.distributed.reduce_scatter", "tensor_list")
        if tuple(t.shape) != tuple(tensor.shape):
            raise ValueError(f"paddle_hl.distributed.reduce_scatter: every tensor of tensor_list "
                             f"must have the output's shape {list(tensor.shape)}, got "
                             f"{list(t.shape)}")
    if g.nranks > 1:
        _agree(g, "reduce_scatter", tensor, op=_comm.op_name(op))
    nc = _gpu(g, tensor) if g.nranks > 1 else None
    if nc is not None:
        return _done(nc.reduce_scatter(tensor._data, [t._data for t in tensor_list], op),
                         sync_op)
    arr, own = _host(tensor)
    send = _comm.reducible(np.stack([_host(t)[0] for t in tensor_list]).astype(arr.dtype))
    if g.nranks == 1:
        arr[...] = send[0].astype(arr.dtype)
        if not own:
            _store(tensor, arr)
        return _finished(sync_op, g, "reduce_scatter")
    recv = np.empty_like(send[0])
    req = g.comm.Ireduce_scatter_block(send, recv, op=_comm.mpi_op(op))

    def finish():
        out = recv / g.nranks if op == ReduceOp.AVG else recv
        arr[...] = out.astype(arr.dtype, copy=False)
        if not own:
            _store(tensor, arr)

    return _done(Task([req], "reduce_scatter", g, finish), sync_op)


# ------------------------------------------------------------------ data movement


@_collective("tensor")
def broadcast(tensor, src, group=None, sync_op=True):
    """Copy rank ``src``'s ``tensor`` into ``tensor`` on every rank of ``group``.

    Args:
        tensor (Tensor): the input on ``src``, the output elsewhere (same shape and dtype).
        src (int): the global rank that sends.
        group (Group, optional): Default: the global group.
        sync_op (bool, optional): Default: True.
    """
    g = group
    root = _root(g, src, "broadcast", "src")
    if g.nranks == 1:
        return _finished(sync_op, g, "broadcast")
    _agree(g, "broadcast", tensor, src=int(src))
    nc = _gpu(g, tensor)
    if nc is not None:
        return _done(nc.broadcast(tensor._data, root), sync_op)
    arr, own = _host(tensor)
    req = g.comm.Ibcast(_comm.as_bytes(arr), root=root)
    finish = None if own else (lambda: _store(tensor, arr))
    return _done(Task([req], "broadcast", g, finish), sync_op)


@_collective("tensor")
def all_gather(tensor_list, tensor, group=None, sync_op=True):
    """Gather every rank's ``tensor`` into ``tensor_list`` on every rank.

    Args:
        tensor_list (list[Tensor]): the output: an empty list is extended with one tensor per
            rank; a list of one tensor per rank is written into.
        tensor (Tensor): this rank's input (same shape and dtype on every rank).
        group (Group, optional): Default: the global group.
        sync_op (bool, optional): Default: True.
    """
    g = group
    arr = tensor._data
    if g.nranks == 1:
        _fill_list(tensor_list, [arr.copy()], "all_gather", "tensor_list", tensor._data)
        return _finished(sync_op, g, "all_gather")
    _agree(g, "all_gather", tensor)
    nc = _gpu(g, tensor)
    if nc is not None:
        out, task = nc.all_gather(tensor._data)
        _fill_list(tensor_list, list(out), "all_gather", "tensor_list", tensor._data)
        return _done(task, sync_op)
    arr, _ = _host(tensor)
    out = np.empty((g.nranks,) + arr.shape, arr.dtype)
    req = g.comm.Iallgather(_comm.as_bytes(arr), _comm.as_bytes(out))
    finish = lambda: _fill_list(tensor_list, list(out), "all_gather",  # noqa: E731
                                "tensor_list", tensor._data)
    return _done(Task([req], "all_gather", g, finish), sync_op)


@_collective("tensor")
def gather(tensor, gather_list=None, dst=0, group=None, sync_op=True):
    """Gather every rank's ``tensor`` into ``gather_list`` on rank ``dst``.

    Args:
        tensor (Tensor): this rank's input (same shape and dtype on every rank).
        gather_list (list[Tensor], optional): the output on ``dst`` (ignored elsewhere).
        dst (int, optional): the global rank that receives. Default: 0.
        group (Group, optional): Default: the global group.
        sync_op (bool, optional): Default: True.
    """
    g = group
    root = _root(g, dst, "gather", "dst")
    if g.rank == root and gather_list is None:
        raise ValueError("paddle_hl.distributed.gather: gather_list must be a list on the dst "
                         "rank")
    arr = tensor._data
    if g.nranks == 1:
        _fill_list(gather_list, [arr.copy()], "gather", "gather_list", tensor._data)
        return _finished(sync_op, g, "gather")
    _agree(g, "gather", tensor, dst=int(dst))
    nc = _gpu(g, tensor)
    if nc is not None:
        out, task = nc.gather(arr, root)
        if out is not None:
            _fill_list(gather_list, list(out), "gather", "gather_list", arr)
        return _done(task, sync_op)
    arr, _ = _host(tensor)
    out = np.empty((g.nranks,) + arr.shape, arr.dtype) if g.rank == root else None
    req = g.comm.Igather(_comm.as_bytes(arr), None if out is None else _comm.as_bytes(out),
                         root=root)

    def finish():
        if out is not None:
            _fill_list(gather_list, list(out), "gather", "gather_list", tensor._data)

    return _done(Task([req], "gather", g, finish), sync_op)


@_collective("tensor")
def scatter(tensor, tensor_list=None, src=0, group=None, sync_op=True):
    """Send the i-th tensor of rank ``src``'s ``tensor_list`` to rank i's ``tensor``.

    Args:
        tensor (Tensor): the output on every rank.
        tensor_list (list[Tensor], optional): on ``src``, one tensor per rank, shaped as
            ``tensor``.
        src (int, optional): the global rank that sends. Default: 0.
        group (Group, optional): Default: the global group.
        sync_op (bool, optional): Default: True.
    """
    g = group
    root = _root(g, src, "scatter", "src")
    arr = tensor._data
    send = None
    if g.rank == root:
        if not isinstance(tensor_list, (list, tuple)) or len(tensor_list) != g.nranks:
            raise ValueError(f"paddle_hl.distributed.scatter: on the src rank tensor_list must "
                             f"hold one tensor per rank ({g.nranks})")
        for t in tensor_list:
            check_tensor(t, "paddle_hl.distributed.scatter", "tensor_list")
            if tuple(t.shape) != arr.shape:
                raise ValueError(f"paddle_hl.distributed.scatter: every tensor of tensor_list "
                                 f"must have the output's shape {list(arr.shape)}, got "
                                 f"{list(t.shape)}")
    if g.nranks > 1:
        _agree(g, "scatter", tensor, src=int(src))
    nc = _gpu(g, tensor) if g.nranks > 1 else None
    if nc is not None:
        if g.rank == root:
            send = backend.get_array_module(arr).stack([_to_device(t._data, arr)
                                                        for t in tensor_list])
        return _done(nc.scatter(arr, send, root), sync_op)
    arr, own = _host(tensor)
    if g.rank == root:
        send = np.stack([_host(t)[0] for t in tensor_list]).astype(arr.dtype)
    if g.nranks == 1:
        arr[...] = send[0]
        if not own:
            _store(tensor, arr)
        return _finished(sync_op, g, "scatter")
    req = g.comm.Iscatter(None if send is None else _comm.as_bytes(send), _comm.as_bytes(arr),
                          root=root)
    finish = None if own else (lambda: _store(tensor, arr))
    return _done(Task([req], "scatter", g, finish), sync_op)


@_collective()
def alltoall(in_tensor_list, out_tensor_list, group=None, sync_op=True):
    """Rank i sends its j-th input tensor to rank j, which puts it at position i of its output.

    Args:
        in_tensor_list (list[Tensor]): one tensor per rank (all the same shape and dtype).
        out_tensor_list (list[Tensor]): the output: extended when empty, else written into.
        group (Group, optional): Default: the global group.
        sync_op (bool, optional): Default: True.
    """
    g = group
    if not isinstance(in_tensor_list, (list, tuple)) or len(in_tensor_list) != g.nranks:
        raise ValueError(f"paddle_hl.distributed.alltoall: in_tensor_list must hold one tensor "
                         f"per rank of the group ({g.nranks})")
    for t in in_tensor_list:
        check_tensor(t, "paddle_hl.distributed.alltoall", "in_tensor_list")
    arrays = [t._data for t in in_tensor_list]
    if any(a.shape != arrays[0].shape or a.dtype != arrays[0].dtype for a in arrays):
        raise ValueError("paddle_hl.distributed.alltoall: the tensors of in_tensor_list must "
                         "share one shape and dtype, got "
                         f"{[(list(a.shape), str(a.dtype)) for a in arrays]}")
    like = in_tensor_list[0]._data
    if g.nranks == 1:
        _fill_list(out_tensor_list, [like.copy()], "alltoall", "out_tensor_list", like)
        return _finished(sync_op, g, "alltoall")
    _agree(g, "alltoall", in_tensor_list[0], tensors=len(in_tensor_list))
    nc = _gpu(g, in_tensor_list[0])
    if nc is not None:
        xp = backend.get_array_module(like)
        recv, task = nc.alltoall(xp.stack([_to_device(a, like) for a in arrays]))
        _fill_list(out_tensor_list, list(recv), "alltoall", "out_tensor_list", like)
        return _done(task, sync_op)
    send = np.stack([_host(t)[0] for t in in_tensor_list])
    recv = np.empty_like(send)
    req = g.comm.Ialltoall(_comm.as_bytes(send), _comm.as_bytes(recv))
    finish = lambda: _fill_list(out_tensor_list, list(recv), "alltoall",  # noqa: E731
                                "out_tensor_list", like)
    return _done(Task([req], "alltoall", g, finish), sync_op)


@_collective("in_tensor", "out_tensor")
def alltoall_single(in_tensor, out_tensor, in_split_sizes=None, out_split_sizes=None,
                    group=None, sync_op=True):
    """All-to-all on one tensor split along axis 0: rank i's j-th slice goes to rank j.

    Args:
        in_tensor (Tensor): the input, split along axis 0 into ``in_split_sizes`` (equal parts
            when None).
        out_tensor (Tensor): the output, split along axis 0 into ``out_split_sizes``.
        in_split_sizes (list[int], optional): rows sent to each rank.
        out_split_sizes (list[int], optional): rows received from each rank.
        group (Group, optional): Default: the global group.
        sync_op (bool, optional): Default: True.
    """
    g = group
    src, dst = in_tensor._data, out_tensor._data
    if src.dtype != dst.dtype or src.shape[1:] != dst.shape[1:]:
        raise ValueError(f"paddle_hl.distributed.alltoall_single: in_tensor {list(src.shape)} "
                         f"{src.dtype} and out_tensor {list(dst.shape)} {dst.dtype} must share "
                         "dtype and trailing dimensions")

    def sizes(given, rows, arg):
        if given is None:
            if rows % g.nranks:
                raise ValueError(f"paddle_hl.distributed.alltoall_single: {rows} rows do not "
                                 f"split evenly over {g.nranks} ranks; pass {arg}")
            return [rows // g.nranks] * g.nranks
        given = [int(s) for s in given]
        if len(given) != g.nranks or sum(given) != rows or min(given) < 0:
            raise ValueError(f"paddle_hl.distributed.alltoall_single: {arg} must give one "
                             f"non-negative size per rank ({g.nranks}) summing to {rows}, got "
                             f"{given}")
        return given

    ins = sizes(in_split_sizes, src.shape[0], "in_split_sizes")
    outs = sizes(out_split_sizes, dst.shape[0], "out_split_sizes")
    if g.nranks > 1:
        _splits_agree(g, src, ins, outs)
    nc = _gpu(g, out_tensor) if g.nranks > 1 else None
    if nc is not None:
        return _done(nc.alltoall_single(_to_device(src, dst), dst, ins, outs), sync_op)
    src, _ = _host(in_tensor)
    dst, own = _host(out_tensor)
    if g.nranks == 1:
        dst[...] = src
        if not own:
            _store(out_tensor, dst)
        return _finished(sync_op, g, "alltoall_single")
    row = int(np.prod(src.shape[1:], dtype=np.int64)) * src.dtype.itemsize
    counts_in = [s * row for s in ins]
    counts_out = [s * row for s in outs]
    displ_in = np.concatenate([[0], np.cumsum(counts_in)[:-1]]).tolist()
    displ_out = np.concatenate([[0], np.cumsum(counts_out)[:-1]]).tolist()
    MPI = _comm.mpi()
    req = g.comm.Ialltoallv([_comm.as_bytes(src), (counts_in, displ_in), MPI.BYTE],
                            [_comm.as_bytes(dst), (counts_out, displ_out), MPI.BYTE])
    finish = None if own else (lambda: _store(out_tensor, dst))
    return _done(Task([req], "alltoall_single", g, finish), sync_op)


def _splits_agree(g, src, ins, outs):
    """alltoall_single: every rank must pass the same dtype and trailing dimensions, and the
    rows rank i sends to rank j must be the rows rank j expects from rank i."""
    if not _comm.checks_on():
        return
    n = g.nranks
    kind = {"dtype and trailing dimensions": f"{src.dtype} {list(src.shape[1:])}"}
    mine = np.array([_comm.digest(kind), *ins, *outs], np.int64)
    every = np.empty((n, mine.size), np.int64)
    _comm.wait(g.comm.Iallgather(mine, every), "alltoall_single", g)
    if not (every[:, 0] == every[0, 0]).all():
        raise ValueError(_comm.mismatch_message("alltoall_single", g, g.comm.allgather(kind)))
    sent, expected = every[:, 1:n + 1], every[:, n + 1:]
    bad = [(i, j) for i in range(n) for j in range(n) if sent[i, j] != expected[j, i]]
    if bad:
        i, j = bad[0]
        raise ValueError(
            f"paddle_hl.distributed.alltoall_single: rank {g.ranks[i]} sends {sent[i, j]} rows "
            f"to rank {g.ranks[j]}, which expects {expected[j, i]} (in_split_sizes of every "
            f"rank: {sent.tolist()}; out_split_sizes: {expected.tolist()})")


# ------------------------------------------------------------------ objects


def _check_list(obj, fn, arg):
    if not isinstance(obj, list):
        raise TypeError(f"paddle_hl.distributed.{fn}: {arg} must be a list, got "
                        f"{type(obj).__name__}")


# Objects travel pickled, as bytes, in non-blocking collectives (their lengths first), so that
# they wait under the collective timeout and stop when a rank they need has ended, as tensors do.


def _pickled(obj):
    import pickle

    return np.frombuffer(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL), np.uint8)


def _unpickled(buf):
    import pickle

    return pickle.loads(buf.tobytes())


def _displacements(sizes):
    return np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64).tolist()


@_collective(lists=("object_list",))
def all_gather_object(object_list, obj, group=None):
    """Gather a picklable object from every rank into ``object_list`` (one per rank)."""
    g = group
    if g.nranks == 1:
        object_list[:] = [obj]
        return
    MPI = _comm.mpi()
    data = _pickled(obj)
    sizes = np.empty(g.nranks, np.int64)
    _comm.wait(g.comm.Iallgather(np.array([data.size], np.int64), sizes),
               "all_gather_object", g)
    out = np.empty(int(sizes.sum()), np.uint8)
    displ = _displacements(sizes)
    _comm.wait(g.comm.Iallgatherv([data, MPI.BYTE], [out, (sizes.tolist(), displ), MPI.BYTE]),
               "all_gather_object", g)
    object_list[:] = [_unpickled(out[d:d + n]) for d, n in zip(displ, sizes.tolist())]


@_collective(lists=("object_list",))
def broadcast_object_list(object_list, src, group=None):
    """Replace ``object_list``'s contents on every rank with rank ``src``'s."""
    g = group
    root = _root(g, src, "broadcast_object_list", "src")
    if g.nranks == 1:
        return
    data = _pickled(list(object_list)) if g.rank == root else None
    size = np.array([0 if data is None else data.size], np.int64)
    _comm.wait(g.comm.Ibcast(size, root=root), "broadcast_object_list", g)
    if data is None:
        data = np.empty(int(size[0]), np.uint8)
    _comm.wait(g.comm.Ibcast(data, root=root), "broadcast_object_list", g)
    if g.rank != root:
        object_list[:] = _unpickled(data)


@_collective(lists=("out_object_list",))
def scatter_object_list(out_object_list, in_object_list=None, src=0, group=None):
    """Send the i-th object of rank ``src``'s ``in_object_list`` to rank i's
    ``out_object_list`` (which then holds that one object)."""
    g = group
    root = _root(g, src, "scatter_object_list", "src")
    if g.rank == root and (not isinstance(in_object_list, (list, tuple))
                           or len(in_object_list) != g.nranks):
        raise ValueError(f"paddle_hl.distributed.scatter_object_list: on the src rank "
                         f"in_object_list must hold one object per rank ({g.nranks})")
    if g.nranks == 1:
        out_object_list[:] = [in_object_list[0]]
        return
    MPI = _comm.mpi()
    parts = [_pickled(o) for o in in_object_list] if g.rank == root else None
    sizes = np.array([p.size for p in parts], np.int64) if parts is not None else None
    mine = np.empty(1, np.int64)
    _comm.wait(g.comm.Iscatter(sizes, mine, root=root), "scatter_object_list", g)
    buf = np.empty(int(mine[0]), np.uint8)
    send = None
    if parts is not None:
        send = [np.concatenate(parts) if parts else np.empty(0, np.uint8),
                (sizes.tolist(), _displacements(sizes)), MPI.BYTE]
    _comm.wait(g.comm.Iscatterv(send, [buf, MPI.BYTE], root=root), "scatter_object_list", g)
    out_object_list[:] = [_unpickled(buf)]


# ------------------------------------------------------------------ point to point

_TAG = 7  # the data of a send
_HEAD_TAG = 8  # the header sent before it: the shape and dtype sent
_DTYPES = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
           "float16", "float32", "float64", "bfloat16", "complex64", "complex128")
_MAX_DIMS = 8
_HEAD_LEN = 4 + _MAX_DIMS
# group id -> receives whose data receive waits for their header (see _Recv)
_DEFERRED: dict = {}


def _header(arr):
    """What a send announces: [fingerprint of shape and dtype, bytes, dtype code, ndim,
    dims...] (a fresh array: MPI reads it while the send is in flight)."""
    key = (arr.shape, arr.dtype)
    h = _HEADERS.get(key)
    if h is None:
        if len(_HEADERS) > 4096:
            _HEADERS.clear()
        h = _HEADERS[key] = _make_header(arr)
    return h.copy()


_HEADERS: dict = {}


def _make_header(arr):
    h = np.zeros(_HEAD_LEN, np.int64)
    h[0] = _comm.digest((tuple(arr.shape), str(arr.dtype)))
    h[1] = arr.nbytes
    name = str(arr.dtype)
    h[2] = _DTYPES.index(name) + 1 if name in _DTYPES else 0
    h[3] = arr.ndim
    h[4:4 + min(arr.ndim, _MAX_DIMS)] = arr.shape[:_MAX_DIMS]
    return h


def _header_text(h):
    dtype = _DTYPES[h[2] - 1] if 0 < h[2] <= len(_DTYPES) else "(a dtype not named here)"
    ndim = int(h[3])
    shape = [int(d) for d in h[4:4 + ndim]] if ndim <= _MAX_DIMS else f"({ndim} dimensions)"
    return f"{shape} {dtype}"


class _Recv(Task):
    """A receive: the sender's header (shape and dtype) comes first and is checked against the
    tensor received into, so a mismatch is an error naming both sides, not garbage.

    With a known sender the data receive is posted at once, beside the header's (MPI matches
    both in the order they were posted). A receive from any rank learns its sender from the
    header, so its data receive is posted only then; receives posted after it wait in
    ``_DEFERRED`` and post theirs in order, so no data message can reach the wrong receive.
    """

    def __init__(self, g, fn, tensor, arr, own, source):
        MPI = _comm.mpi()
        self.tensor, self.arr, self.own = tensor, arr, own
        self.expected = _header(arr)
        self.head = np.zeros(_HEAD_LEN, np.int64)
        self.status = MPI.Status()
        self.head_done = False
        self.source = source  # the sender's rank in the group; None: not known yet
        self.data_req = None
        self.orphan = None  # where a mismatched message is received, to be discarded
        self.head_req = g.comm.Irecv(self.head, source=MPI.ANY_SOURCE if source is None
                                     else source, tag=_HEAD_TAG)
        super().__init__([], fn, g, None, None if source is None else [g.ranks[source]])
        queue = _DEFERRED.setdefault(g.id, [])
        if source is not None and not queue:
            self.data_req = g.comm.Irecv(_comm.as_bytes(arr), source=source, tag=_TAG)
        else:
            queue.append(self)

    def _test_head(self):
        if not self.head_done:
            self.head_done = _comm._test(self.head_req, self._what, self._group, self._peers,
                                         self.status)
        return self.head_done

    def _post_data(self):
        g = self._group
        if self.source is None:
            self.source = self.status.Get_source()
            self._peers = [g.ranks[self.source]]
        target = self.arr
        if self.head[0] != self.expected[0]:  # received and dropped, so the sender completes
            target = self.orphan = np.empty(int(self.head[1]), np.uint8)
        self.data_req = g.comm.Irecv(_comm.as_bytes(target), source=self.source, tag=_TAG)

    def _check(self):
        if self.head[0] == self.expected[0]:
            return
        g = self._group
        try:  # take the sender's data off the wire (dropped), so nothing is left pending
            _comm.wait(self.data_req, self._what, g, self._peers)
        except (PeerLost, ValueError):
            pass  # a message longer than this tensor: MPI reports it truncated
        raise ValueError(
            f"paddle_hl.distributed.{self._what}: rank {g.ranks[self.source]} sent a tensor of "
            f"shape and dtype {_header_text(self.head)}, but rank {g.ranks[g.rank]} receives "
            f"into {_comm.describe_tensor(self.arr)}: the sender's and the receiver's tensors "
            "must have the same shape and dtype")

    def is_completed(self) -> bool:
        if self._done:
            return True
        _advance(self._group)
        if self.data_req is None or not self._test_head():
            return False
        self._check()
        if _comm._test(self.data_req, self._what, self._group, self._peers):
            self._complete()
        return self._done

    def wait(self) -> bool:
        if self._done:
            return True
        g = self._group
        if self.data_req is None:
            _comm.wait(_Posted(self), self._what, g, self._peers)
        if not self.head_done:
            _comm.wait(self.head_req, self._what, g, self._peers, self.status)
            self.head_done = True
        self._check()
        _comm.wait(self.data_req, self._what, g, self._peers)
        self._complete()
        return True

    def _complete(self):
        self._done = True
        if not self.own:
            _store(self.tensor, self.arr)


class _Posted:
    """Stands for a request in ``_comm.wait``: done once the receive's data receive is
    posted (the deferred receives advance on each test)."""

    def __init__(self, recv):
        self.recv = recv

    def Test(self, status=None):  # noqa: N802  (MPI's name)
        _advance(self.recv._group)
        return self.recv.data_req is not None


def _advance(g):
    """Post the data receives of the deferred receives whose headers are in, in the order the
    receives were made: one still waiting for its header holds back the later ones that could
    take a message from the same sender (all of them when it takes any sender's)."""
    queue = _DEFERRED.get(g.id)
    if not queue:
        return
    blocked, all_blocked, keep = set(), False, []
    for t in queue:
        done = t._test_head()
        source = t.status.Get_source() if done else t.source
        if done and not all_blocked and source not in blocked:
            t._post_data()
            continue
        keep.append(t)
        if source is None:
            all_blocked = True
        else:
            blocked.add(source)
    queue[:] = keep


def _p2p(tensor, peer, group, fn, arg, sending):
    check_tensor(tensor, f"paddle_hl.distributed.{fn}", "tensor")
    g = _group(group, fn)
    if peer is None and not sending:
        source = None
    else:
        source = _root(g, peer, fn, arg)
        if source == g.rank:
            raise ValueError(f"paddle_hl.distributed.{fn}: {arg}={peer} is this process's own "
                             "rank")
    if g.nranks == 1:
        raise ValueError(f"paddle_hl.distributed.{fn}: the group has a single rank: there is "
                         "no other process to talk to")
    nc = _gpu(g, tensor)
    if nc is not None:
        if peer is None and not sending:
            raise ValueError(f"paddle_hl.distributed.{fn}: a GPU tensor travels through NCCL, "
                             "which needs the sending rank: pass src (src=None, any rank, works "
                             "for CPU tensors only)")
        # isend / irecv are issued with the next operation, in one NCCL group (see _nccl)
        transfer = nc.send if sending else nc.recv
        return transfer(tensor._data, source, fn, defer=fn in ("isend", "irecv"))
    arr, own = _host(tensor)
    if sending:
        head = g.comm.Isend(_header(arr), dest=source, tag=_HEAD_TAG)
        req = g.comm.Isend(_comm.as_bytes(arr), dest=source, tag=_TAG)
        return Task([head, req], fn, g, peers=[g.ranks[source]])
    return _Recv(g, fn, tensor, arr, own, source)


def send(tensor, dst=0, group=None, sync_op=True):
    """Send ``tensor`` to the process with global rank ``dst``."""
    return _done(_p2p(tensor, dst, group, "send", "dst", True), sync_op)


def recv(tensor, src=0, group=None, sync_op=True):
    """Receive into ``tensor`` (same shape and dtype as the sender's) from rank ``src``."""
    return _done(_p2p(tensor, src, group, "recv", "src", False), sync_op)


def isend(tensor, dst, group=None):
    """Start sending ``tensor`` to rank ``dst``; returns a Task to ``wait()`` on."""
    return _p2p(tensor, dst, group, "isend", "dst", True)


def irecv(tensor, src=None, group=None):
    """Start receiving into ``tensor`` from rank ``src`` (any rank when None)."""
    return _p2p(tensor, src, group, "irecv", "src", False)


def wait(tensor, group=None, use_calc_stream=True):
    """Wait for the communication on ``tensor`` to finish.

    Synchronous collectives on CPU tensors have finished when they return, and those on GPU
    tensors are queued on the current CUDA stream, ahead of the kernels that read the result,
    so this only checks its arguments; ``Task.wait()`` waits for an asynchronous one.
    """
    check_tensor(tensor, "paddle_hl.distributed.wait", "tensor")
    _group(group, "wait")


def barrier(group=None):
    """Block until every rank of ``group`` has reached this call."""
    g = _group(group, "barrier")
    if g.is_member() and g.nranks > 1:
        nc = _nccl.communicator(g) if _nccl.default_is_gpu() else None
        if nc is not None:
            nc.barrier()  # also waits for the GPU work queued before it
            return
        _comm.wait(g.comm.Ibarrier(), "barrier", g)


# ------------------------------------------------------------------ gloo names


def gloo_init_parallel_env(rank_id, rank_num, server_endpoint):
    """Paddle's CPU (gloo) initialisation, on the same MPI engine: ``rank_id`` and ``rank_num``
    must match the launched job; ``server_endpoint`` is not needed by MPI."""
    init_parallel_env()
    g = _GROUPS[0]
    if (int(rank_id), int(rank_num)) != (g.rank, g.nranks):
        raise ValueError(f"paddle_hl.distributed.gloo_init_parallel_env: rank_id={rank_id}, "
                         f"rank_num={rank_num} do not match the launched job (rank {g.rank} of "
                         f"{g.nranks})")


def gloo_barrier():
    """A barrier on the global group (Paddle's gloo name)."""
    barrier()


def gloo_release():
    """Release the gloo context: nothing to free on MPI, kept for compatibility."""
    _group(None, "gloo_release")
