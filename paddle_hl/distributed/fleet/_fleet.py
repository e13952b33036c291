"""The Fleet object behind ``paddle.distributed.fleet``'s functions."""

from __future__ import annotations

import os
import warnings

from .. import collective as _coll
from ..parallel import DataParallel
from .base.distributed_strategy import DistributedStrategy
from .base.topology import CommunicateTopology, HybridCommunicateGroup

__all__ = []

_SUPPORTED = ("paddle_hl's fleet runs collective data parallelism (hybrid_configs dp_degree = "
              "the number of ranks) and stage-1 sharding of the optimizer states "
              "(sharding_degree = the number of ranks with dp_degree 1, or strategy.sharding "
              "with sharding_configs stage 1)")


class Role:
    """The role of a process: WORKER (a trainer), SERVER, HETER_WORKER, ALL, COORDINATOR."""

    WORKER = 1
    SERVER = 2
    HETER_WORKER = 3
    ALL = 4
    COORDINATOR = 5


class PaddleCloudRoleMaker:
    """Reads the process's role from the launcher's environment.

    Args:
        is_collective (bool): collective (data-parallel) training; paddle_hl supports only
            this (``fleet.init`` raises for parameter-server roles).
    """

    def __init__(self, is_collective=False, **kwargs):
        self._is_collective = bool(is_collective)
        self._kwargs = kwargs

    def _worker_index(self):
        return _coll.env_rank()

    def _worker_num(self):
        return _coll.env_world_size()

    def _is_worker(self):
        return True

    def _is_server(self):
        return False


class UserDefinedRoleMaker(PaddleCloudRoleMaker):
    """A role given by the caller (``current_id``, ``role``, ``worker_num``,
    ``server_endpoints``); only workers of a collective job are supported."""

    def __init__(self, is_collective=False, init_gloo=False, **kwargs):
        super().__init__(is_collective, **kwargs)
        self._role = kwargs.get("role", Role.WORKER)


class UtilBase:
    """Small collective helpers for scripts (``fleet.util``): all-reduce, all-gather and barrier
    of Python numbers and arrays across the workers, and splitting a file list among them."""

    def all_reduce(self, input, mode="sum", comm_world="worker"):  # noqa: A002
        """``input`` (a number or array) reduced over the workers with ``mode`` ('sum',
        'max' or 'min'); returns a NumPy array."""
        import numpy as np

        from ...tensor.creation import to_tensor

        ops = {"sum": _coll.ReduceOp.SUM, "max": _coll.ReduceOp.MAX, "min": _coll.ReduceOp.MIN}
        if mode not in ops:
            raise ValueError(f"fleet.util.all_reduce: mode must be 'sum', 'max' or 'min', got "
                             f"{mode!r}")
        arr = np.asarray(input)
        if not _coll.is_initialized() or _coll.get_world_size() == 1:
            return arr.copy()
        t = to_tensor(arr)
        _coll.all_reduce(t, op=ops[mode])
        return t.numpy()

    def barrier(self, comm_world="worker"):
        """Wait for every worker."""
        if _coll.is_initialized() and _coll.get_world_size() > 1:
            _coll.barrier()

    def all_gather(self, input, comm_world="worker"):  # noqa: A002
        """Every worker's ``input`` (any picklable object), in rank order, as a list."""
        if not _coll.is_initialized() or _coll.get_world_size() == 1:
            return [input]
        out = []
        _coll.all_gather_object(out, input)
        return out

    def get_file_shard(self, files):
        """This worker's share of ``files``: contiguous blocks, the first ``len(files) %
        worker_num`` workers taking one file more."""
        if not isinstance(files, list):
            raise TypeError(f"fleet.util.get_file_shard: files must be a list, got "
                            f"{type(files).__name__}")
        n = _coll.get_world_size() if _coll.is_initialized() else _coll.env_world_size()
        rank = _coll.get_rank() if _coll.is_initialized() else _coll.env_rank()
        base, extra = divmod(len(files), n)
        start = rank * base + min(rank, extra)
        return files[start:start + base + (1 if rank < extra else 0)]

    def print_on_rank(self, message, rank_id):
        """Print ``message`` on worker ``rank_id`` only."""
        me = _coll.get_rank() if _coll.is_initialized() else _coll.env_rank()
        if me == rank_id:
            print(message)


class Fleet:
    """Paddle's fleet in collective mode (see :func:`init`)."""

    def __init__(self):
        self._initialized = False
        self._strategy = None
        self._hcg = None
        self._sharding_degree = 1
        self._is_collective = False
        self.util = UtilBase()

    # ---------------------------------------------------------------- set-up
    def init(self, role_maker=None, is_collective=False, strategy=None, log_level="INFO"):
        """Start the job: the parallel environment (when launched on several processes) and the
        topology the strategy asks for.

        Args:
            role_maker (PaddleCloudRoleMaker, optional): its ``is_collective`` wins.
            is_collective (bool): must be True (collective training); parameter-server
                training is not supported.
            strategy (DistributedStrategy, optional): the settings (defaults when None).
            log_level (str|int): accepted for Paddle's signature.

        Raises:
            ValueError: for parameter-server mode, and for tensor, pipeline, sep or sharding
                parallelism paddle_hl does not run (the message says what it runs).
        """
        if role_maker is not None:
            if not isinstance(role_maker, PaddleCloudRoleMaker):
                raise TypeError("fleet.init: role_maker must be a PaddleCloudRoleMaker or "
                                f"UserDefinedRoleMaker, got {type(role_maker).__name__}")
            is_collective = role_maker._is_collective
        if not is_collective:
            raise ValueError(
                "fleet.init: parameter-server training (is_collective=False) is not supported; "
                f"{_SUPPORTED}. Call fleet.init(is_collective=True).")
        if strategy is None:
            strategy = DistributedStrategy()
        elif not isinstance(strategy, DistributedStrategy):
            raise TypeError("fleet.init: strategy must be a fleet.DistributedStrategy, got "
                            f"{type(strategy).__name__}")
        world = _coll.env_world_size()
        if world > 1 and not _coll.is_initialized():
            _coll.init_parallel_env()
        world = _coll.get_world_size()
        hc = strategy.hybrid_configs
        for key, what in (("mp_degree", "tensor (model) parallelism"),
                          ("pp_degree", "pipeline parallelism"),
                          ("sep_degree", "sequence (sep) parallelism")):
            if int(hc.get(key, 1)) not in (1, -1):
                raise ValueError(f"fleet.init: hybrid_configs {key}={hc[key]} asks for "
                                          f"{what}, which paddle_hl does not run; {_SUPPORTED}.")
        for flag, what in (("pipeline", "pipeline parallelism"),
                           ("tensor_parallel", "tensor parallelism")):
            if getattr(strategy, flag):
                raise ValueError(f"fleet.init: strategy.{flag} asks for {what}, which "
                                          f"paddle_hl does not run; {_SUPPORTED}.")
        sharding = int(hc.get("sharding_degree", 1))
        if strategy.sharding:
            stage = int(strategy.sharding_configs.get("stage", 1))
            if stage != 1:
                raise ValueError(f"fleet.init: sharding stage {stage} is not "
                                          f"supported; {_SUPPORTED}.")
            sharding = world if sharding in (1, -1) else sharding
        dp = int(hc.get("dp_degree", -1))
        if sharding > 1:
            if sharding != world or dp not in (1, -1):
                raise ValueError(
                    f"fleet.init: sharding_degree={sharding} with dp_degree={dp} on {world} "
                    f"ranks is not supported; {_SUPPORTED}.")
            dp = 1
        else:
            sharding = 1
            if dp == -1:
                dp = world
            if dp != world:
                raise ValueError(
                    f"fleet.init: dp_degree={dp} does not match the {world} ranks of this job "
                    f"and paddle_hl runs no other parallelism to make up the difference; "
                    f"{_SUPPORTED}.")
        self._strategy = strategy
        self._sharding_degree = sharding
        self._topology = CommunicateTopology(["data", "pipe", "sharding", "sep", "model"],
                                             [dp, 1, sharding, 1, 1])
        self._hcg = HybridCommunicateGroup(self._topology)
        self._is_collective = True
        self._initialized = True
        return None

    def _check(self, what):
        if not self._initialized:
            raise RuntimeError(f"fleet.{what}: call fleet.init(is_collective=True) first")

    # ---------------------------------------------------------------- roles and ranks
    def is_first_worker(self):
        """Whether this is worker 0."""
        return self.worker_index() == 0

    def worker_index(self):
        """This worker's index (its global rank)."""
        return _coll.get_rank() if _coll.is_initialized() else _coll.env_rank()

    def worker_num(self):
        """The number of workers."""
        return _coll.get_world_size() if _coll.is_initialized() else _coll.env_world_size()

    def node_num(self):
        """The number of machines the workers run on."""
        eps = self.worker_endpoints()
        hosts = {e.split(":")[0] for e in eps if e}
        return max(1, len(hosts)) if hosts else int(os.environ.get("PADDLE_NNODES", 1))

    def local_rank(self):
        """This worker's index among the workers of its machine."""
        for name in ("PADDLE_LOCAL_RANK", "PADDLE_RANK_IN_NODE"):
            if os.environ.get(name, "").strip():
                return int(os.environ[name])
        return self.worker_index()

    def local_device_ids(self):
        """The GPU ids of this machine's workers."""
        n = int(os.environ.get("PADDLE_LOCAL_SIZE", self.worker_num()))
        return list(range(n))

    def world_device_ids(self):
        """The GPU ids of every worker, per machine."""
        return [self.local_device_ids()] * self.node_num()

    def is_worker(self):
        return True

    def is_server(self):
        return False

    def is_coordinator(self):
        return False

    def worker_endpoints(self, to_string=False):
        """The ``ip:port`` of every worker (from the launcher)."""
        eps = _coll.ParallelEnv().trainer_endpoints or \
            [f"127.0.0.1:{6170 + i}" for i in range(self.worker_num())]
        return ",".join(eps) if to_string else list(eps)

    def server_num(self):
        return 0

    def server_index(self):
        return 0

    def server_endpoints(self, to_string=False):
        return "" if to_string else []

    def barrier_worker(self):
        """Wait until every worker gets here."""
        if _coll.is_initialized() and _coll.get_world_size() > 1:
            _coll.barrier()

    def _ps_only(self, name):
        raise RuntimeError(f"fleet.{name} belongs to parameter-server training, which "
                                  f"paddle_hl does not support; {_SUPPORTED}.")

    def init_worker(self, scopes=None):
        """Parameter-server only: with collective training there is nothing to start."""
        if not self._is_collective:
            self._ps_only("init_worker")

    def stop_worker(self):
        """Parameter-server only: with collective training there is nothing to stop."""
        if not self._is_collective:
            self._ps_only("stop_worker")

    def init_server(self, *args, **kwargs):
        self._ps_only("init_server")

    def run_server(self):
        self._ps_only("run_server")

    # ---------------------------------------------------------------- wrapping
    def get_hybrid_communicate_group(self):
        """The job's HybridCommunicateGroup (data-parallel / sharding axes)."""
        self._check("get_hybrid_communicate_group")
        return self._hcg

    @property
    def user_defined_strategy(self):
        return self._strategy

    def distributed_model(self, model):
        """Wrap ``model`` for the job: in DataParallel when there are several ranks (gradients
        averaged during backward, parameters broadcast from rank 0), else unchanged.

        The strategy's ``find_unused_parameters``, ``fuse_grad_size_in_MB`` and
        ``last_comm_group_size_MB`` configure the wrapper.
        """
        self._check("distributed_model")
        if self.worker_num() <= 1:
            return model
        s = self._strategy
        return DataParallel(model, comm_buffer_size=s.fuse_grad_size_in_MB,
                            last_comm_buffer_size=max(1, int(s.last_comm_group_size_MB)),
                            find_unused_parameters=s.find_unused_parameters)

    def distributed_optimizer(self, optimizer, strategy=None):
        """Wrap ``optimizer`` for the job (gradient merge and stage-1 sharding from the
        strategy; see HybridParallelOptimizer)."""
        from ._optimizer import HybridParallelOptimizer

        self._check("distributed_optimizer")
        if strategy is not None:
            if not isinstance(strategy, DistributedStrategy):
                raise TypeError("fleet.distributed_optimizer: strategy must be a "
                                f"DistributedStrategy, got {type(strategy).__name__}")
            warnings.warn("fleet.distributed_optimizer: the strategy given to fleet.init is "
                          "used in dynamic mode; this one is ignored", stacklevel=2)
        return HybridParallelOptimizer(optimizer, self._strategy, self._sharding_degree)

    def distributed_scaler(self, scaler):
        """Make a GradScaler skip a step on every rank when any rank found inf/nan gradients
        (its flag is combined across ranks after unscaling)."""
        self._check("distributed_scaler")
        original = scaler._unscale

        def unscale_everywhere(optimizer):
            original(optimizer)
            if _coll.is_initialized() and _coll.get_world_size() > 1 and scaler._enable:
                from ...tensor.creation import to_tensor

                flag = to_tensor([1 if scaler._found_inf else 0], dtype="int32")
                _coll.all_reduce(flag, op=_coll.ReduceOp.MAX)
                scaler._found_inf = bool(flag.numpy()[0])

        scaler._unscale = unscale_everywhere
        return scaler

    # ---------------------------------------------------------------- saving
    def save_persistables(self, executor=None, dirname=None, main_program=None, mode=0):
        raise RuntimeError("fleet.save_persistables saves a static program; in dynamic "
                                  "mode use paddle.save(model.state_dict(), path)")
