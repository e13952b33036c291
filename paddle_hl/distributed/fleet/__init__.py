"""paddle.distributed.fleet: Paddle's distributed-training entry point, in collective mode on
paddle_hl's data-parallel engine (MPI, and NCCL on GPUs).

A script written for fleet runs unchanged on one process and, started with
``python -m paddle_hl.distributed.launch --nproc_per_node N train.py``, on N::

    fleet.init(is_collective=True, strategy=strategy)
    model = fleet.distributed_model(model)          # DataParallel on several ranks
    optimizer = fleet.distributed_optimizer(optimizer)
    scaler = fleet.distributed_scaler(paddle.amp.GradScaler())

Supported: data parallelism (``hybrid_configs`` ``dp_degree``), gradient merge, stage-1
sharding of the optimizer states, ``fleet.utils.recompute``, the rank and role queries and
``get_hybrid_communicate_group``. Tensor, pipeline and sep parallelism, sharding stages 2/3 and
parameter-server training raise an error that says so. See
:mod:`paddle_hl.distributed.fleet.base.distributed_strategy` for what each strategy setting
does here.
"""

from __future__ import annotations

from . import base, meta_parallel, recompute, utils  # noqa: F401
from ._fleet import Fleet, PaddleCloudRoleMaker, Role, UserDefinedRoleMaker, UtilBase
from ._optimizer import HybridParallelOptimizer  # noqa: F401
from .base.distributed_strategy import DistributedStrategy
from .base.topology import CommunicateTopology, HybridCommunicateGroup, ParallelMode

fleet = Fleet()

init = fleet.init
is_first_worker = fleet.is_first_worker
worker_index = fleet.worker_index
worker_num = fleet.worker_num
node_num = fleet.node_num
local_rank = fleet.local_rank
local_device_ids = fleet.local_device_ids
world_device_ids = fleet.world_device_ids
is_worker = fleet.is_worker
is_server = fleet.is_server
is_coordinator = fleet.is_coordinator
worker_endpoints = fleet.worker_endpoints
server_num = fleet.server_num
server_index = fleet.server_index
server_endpoints = fleet.server_endpoints
barrier_worker = fleet.barrier_worker
util = fleet.util
init_worker = fleet.init_worker
stop_worker = fleet.stop_worker
init_server = fleet.init_server
run_server = fleet.run_server
distributed_model = fleet.distributed_model
distributed_optimizer = fleet.distributed_optimizer
distributed_scaler = fleet.distributed_scaler
get_hybrid_communicate_group = fleet.get_hybrid_communicate_group
save_persistables = fleet.save_persistables

# Paddle's list; fleet's functions (init, worker_index, ...) are module attributes as in Paddle
__all__ = ["CommunicateTopology", "UtilBase", "HybridCommunicateGroup", "UserDefinedRoleMaker",
           "DistributedStrategy", "Role", "PaddleCloudRoleMaker", "Fleet"]
