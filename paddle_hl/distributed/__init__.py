"""paddle_hl.distributed: data-parallel training across processes and machines.

Processes talk through MPI (mpi4py; ``pip install 'paddle_hl[distributed]'`` brings it with the
mpich wheel): collectives move NumPy buffers directly, without pickling. Tensors on GPUs go
through NCCL (``cupy.cuda.nccl``), one GPU per process, and stay on the GPU. Start a job with
``python -m paddle_hl.distributed.launch --nproc_per_node N train.py``, with :func:`spawn`
(also from a notebook), or with ``mpiexec -n N python train.py``; in it, call
:func:`init_parallel_env`, wrap the model in ``paddle.DataParallel`` and shard the data with
``paddle.io.DistributedBatchSampler``. A single process needs none of this: every collective
is then the identity.

Beyond data parallelism: :func:`split` (tensor model parallelism for linear and embedding
layers), the semi-automatic names (:class:`ProcessMesh`, placements, :func:`shard_tensor`,
:func:`reshard`, :func:`shard_layer`, :func:`shard_optimizer`; see
:mod:`paddle_hl.distributed.auto_parallel` for what each rank keeps in memory) and sharded
checkpoints (:func:`save_state_dict` / :func:`load_state_dict`).
"""

from . import _compat, collective, io
from ._unsupported import (
    CountFilterEntry,
    InMemoryDataset,
    ProbabilityEntry,
    QueueDataset,
    ShowClickEntry,
)
from .auto_parallel import (
    DistAttr,
    ParallelMode,
    Partial,
    Placement,
    ProcessMesh,
    ReduceType,
    Replicate,
    Shard,
    Strategy,
    dtensor_from_fn,
    reshard,
    shard_layer,
    shard_optimizer,
    shard_tensor,
    to_static,
)
from .checkpoint import load_state_dict, save_state_dict
from .collective import (
    ReduceOp,
    all_gather,
    all_gather_object,
    all_reduce,
    alltoall,
    alltoall_single,
    barrier,
    broadcast,
    broadcast_object_list,
    destroy_process_group,
    gather,
    get_backend,
    get_group,
    gloo_barrier,
    gloo_init_parallel_env,
    gloo_release,
    irecv,
    is_available,
    is_initialized,
    isend,
    new_group,
    recv,
    reduce,
    reduce_scatter,
    scatter,
    scatter_object_list,
    send,
    wait,
)
from .launch import launch
from .model_parallel import split
from .parallel import DataParallel, ParallelEnv, get_rank, get_world_size, init_parallel_env
from .spawn import spawn

_compat.install()


def __getattr__(name):
    # fleet and the stream collectives load on first use
    if name in ("fleet", "stream"):
        import importlib

        mod = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = mod
        return mod
    raise AttributeError(f"module 'paddle_hl.distributed' has no attribute '{name}'")

__all__ = [
    "ReduceOp", "all_gather", "all_gather_object", "all_reduce", "alltoall", "alltoall_single",
    "barrier", "broadcast", "broadcast_object_list", "destroy_process_group", "gather",
    "get_backend", "get_group", "gloo_barrier", "gloo_init_parallel_env", "gloo_release",
    "irecv", "is_available", "is_initialized", "isend", "new_group", "recv", "reduce",
    "reduce_scatter", "scatter", "scatter_object_list", "send", "wait", "launch",
    "DataParallel", "ParallelEnv", "get_rank", "get_world_size", "init_parallel_env", "spawn",
    "InMemoryDataset", "QueueDataset", "CountFilterEntry", "ProbabilityEntry",
    "ShowClickEntry", "io", "split", "save_state_dict", "load_state_dict", "to_static",
    "ProcessMesh", "Placement", "Shard", "Replicate", "Partial", "ReduceType", "ParallelMode",
    "shard_tensor", "dtensor_from_fn", "reshard", "shard_layer", "shard_optimizer", "DistAttr",
    "Strategy",
]
