"""DistributedStrategy: the settings of a fleet job.

paddle_hl runs fleet in collective (data-parallel) mode on its DataParallel engine. What each
setting does here:

- ``hybrid_configs``: ``dp_degree`` (the number of data-parallel ranks; -1 or the world size)
  and ``sharding_degree`` (stage-1 sharding of the optimizer states across all ranks, with
  ``dp_degree`` 1); ``mp_degree``, ``pp_degree`` and ``sep_degree`` above 1 raise at
  ``fleet.init``, as do tensor, pipeline and sharding stages 2/3.
- ``sharding`` with ``sharding_configs["stage"] == 1``: the same stage-1 sharding.
- ``find_unused_parameters``, ``fuse_grad_size_in_MB`` (the gradient bucket size) and
  ``last_comm_group_size_MB`` go to the DataParallel wrapper of :func:`distributed_model`.
- ``gradient_merge`` / ``gradient_merge_configs`` (``k_steps``, ``avg``): the optimizer of
  :func:`distributed_optimizer` steps once every ``k_steps`` calls, on the sum (or mean) of the
  gradients accumulated since its last step.
- ``amp`` / ``amp_configs`` and ``recompute`` / ``recompute_configs``: recorded for the script
  to read. In dynamic mode, as in Paddle, mixed precision is turned on by
  ``paddle.amp.auto_cast`` and a ``GradScaler`` (pass it to :func:`distributed_scaler`), and
  recomputation by calling :func:`paddle.distributed.fleet.utils.recompute` in the model.
- everything else (``nccl_comm_num``, ``fuse_all_reduce_ops``, ``sync_nccl_allreduce``,
  ``build_strategy``, ...) concerns Paddle's static-graph executor: accepted, kept, and
  without effect. ``a_sync`` (parameter server) is refused by ``fleet.init``.
"""

from __future__ import annotations

import copy

__all__ = []


class _ArgumentError(ValueError, AssertionError):
    """A bad setting. Paddle asserts here, so this is both a ValueError and an
    AssertionError."""


_CONFIG_DEFAULTS = {
    "amp_configs": {
        "init_loss_scaling": 32768.0, "incr_every_n_steps": 1000,
        "decr_every_n_nan_or_inf": 2, "incr_ratio": 2.0, "decr_ratio": 0.8,
        "use_dynamic_loss_scaling": True, "custom_white_list": [], "custom_black_list": [],
        "custom_black_varnames": [], "use_pure_fp16": False, "use_fp16_guard": True,
        "use_optimizer_fp16": False, "use_pure_bf16": False, "use_bf16_guard": True,
        "dtype": "float16", "level": "O1",
    },
    "recompute_configs": {"checkpoints": [], "enable_offload": False, "checkpoint_shape": []},
    "gradient_merge_configs": {"k_steps": 1, "avg": True},
    "hybrid_configs": {
        "dp_degree": -1, "mp_degree": 1, "pp_degree": 1, "sharding_degree": 1,
        "sep_degree": 1, "order": ["dp", "pp", "sharding", "sep", "mp"],
        "mp_configs": {}, "pp_configs": {}, "sharding_configs": {},
    },
    "sharding_configs": {
        "sharding_segment_strategy": "segment_broadcast_MB", "segment_broadcast_MB": 32.0,
        "segment_anchors": [], "sharding_degree": 8, "gradient_merge_acc_step": 1,
        "optimize_offload": False, "pp_allreduce_in_optimize": False, "mp_degree": 1,
        "dp_degree": 1, "hybrid_dp": False, "pp_degree": 1, "optimize_cast": False,
        "stage": 1,
    },
    "pipeline_configs": {"micro_batch_size": 1, "accumulate_steps": 1,
                         "schedule_mode": "1F1B", "p2p_cache_shape": True},
    "tensor_parallel_configs": {"tensor_parallel_degree": 1, "tensor_init_seed": -1},
    "lamb_configs": {"lamb_weight_decay": 0.01, "exclude_from_weight_decay": []},
    "lars_configs": {"lars_coeff": 0.001, "lars_weight_decay": 0.0005, "epsilon": 0.0,
                     "exclude_from_weight_decay": []},
    "dgc_configs": {"rampup_begin_step": 0, "rampup_step": 1, "sparsity": [0.999]},
    "localsgd_configs": {"k_steps": 1, "begin_step": 1},
    "adaptive_localsgd_configs": {"init_k_steps": 1, "begin_step": 1},
    "a_sync_configs": {"k_steps": -1},
    "gradient_scale_configs": {"scale_strategy": "avg", "scale_gradient": False},
    "qat_configs": {"channel_wise_abs_max": True, "weight_bits": 8, "activation_bits": 8,
                    "not_quant_pattern": [], "algo": ""},
}

_FLAG_DEFAULTS = {
    "amp": False, "recompute": False, "gradient_merge": False, "sharding": False,
    "pipeline": False, "tensor_parallel": False, "lamb": False, "lars": False, "dgc": False,
    "localsgd": False, "adaptive_localsgd": False, "a_sync": True, "fp16_allreduce": False,
    "sync_batch_norm": False, "find_unused_parameters": False, "fuse_all_reduce_ops": True,
    "fuse_grad_size_in_MB": 32, "fuse_grad_size_in_num": 8, "last_comm_group_size_MB": 1.0,
    "nccl_comm_num": 1, "sync_nccl_allreduce": True, "use_hierarchical_allreduce": False,
    "hierarchical_allreduce_inter_nranks": 1, "without_graph_optimization": True,
    "fuse_grad_merge": False, "heter_ccl_mode": False, "qat": False, "asp": False,
    "semi_auto": False, "auto": False, "auto_search": False, "elastic": False,
    "split_data": True, "conv_workspace_size_limit": 512,
    "cudnn_exhaustive_search": False, "cudnn_batchnorm_spatial_persistent": False,
    "adam_d2sum": False, "is_fl_ps_mode": False, "is_with_coordinator": False,
}

_TYPES = {bool: (bool,), int: (int,), float: (int, float)}


class _StaticSettings:
    """Paddle's BuildStrategy / ExecutionStrategy: static-executor settings, kept as given."""

    def __init__(self, kind):
        object.__setattr__(self, "_kind", kind)

    def __repr__(self):
        items = {k: v for k, v in self.__dict__.items() if k != "_kind"}
        return f"{self._kind}({items})"


class DistributedStrategy:
    """The settings of a fleet job (see the module doc for what each does in paddle_hl).

    Boolean and number settings are attributes (``strategy.amp = True``); ``*_configs`` are
    dicts: assigning one updates the defaults with the given keys, and an unknown key raises.

    Example:
        >>> strategy = fleet.DistributedStrategy()
        >>> strategy.hybrid_configs = {"dp_degree": 2}
        >>> strategy.amp = True
        >>> strategy.amp_configs = {"init_loss_scaling": 1024}
    """

    def __init__(self):
        object.__setattr__(self, "_flags", dict(_FLAG_DEFAULTS))
        object.__setattr__(self, "_configs", copy.deepcopy(_CONFIG_DEFAULTS))
        object.__setattr__(self, "build_strategy", _StaticSettings("BuildStrategy"))
        object.__setattr__(self, "execution_strategy", _StaticSettings("ExecutionStrategy"))
        object.__setattr__(self, "hybrid_parallel_order", ["dp", "pp", "sharding", "sep", "mp"])

    def __setattr__(self, name, value):
        if name in ("build_strategy", "execution_strategy", "hybrid_parallel_order") or \
                isinstance(getattr(type(self), name, None), property):
            object.__setattr__(self, name, value)
            return
        raise AttributeError(f"DistributedStrategy has no setting {name!r}")

    def save_to_prototxt(self, output):
        """Write the settings to ``output`` as ``name: value`` lines (written to a temporary
        file and renamed)."""
        import os

        lines = [f"{k}: {v!r}" for k, v in sorted(self._flags.items())]
        lines += [f"{k}: {v!r}" for k, v in sorted(self._configs.items())]
        tmp = f"{output}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.replace(tmp, output)

    def load_from_prototxt(self, pb_file):
        """Read settings written by :meth:`save_to_prototxt`."""
        import ast

        with open(pb_file) as f:
            for line in f:
                if ": " not in line:
                    continue
                key, value = line.rstrip("\n").split(": ", 1)
                setattr(self, key, ast.literal_eval(value))

    def __repr__(self):
        changed = {k: v for k, v in self._flags.items() if v != _FLAG_DEFAULTS[k]}
        changed.update({k: v for k, v in self._configs.items() if v != _CONFIG_DEFAULTS[k]})
        return f"DistributedStrategy({changed})"


def _flag_property(name):
    default = _FLAG_DEFAULTS[name]
    ok = _TYPES[type(default)]

    def get(self):
        return self._flags[name]

    def put(self, value):
        if not isinstance(value, ok) or (type(default) is not bool and isinstance(value, bool)):
            raise _ArgumentError(f"DistributedStrategy.{name} must be a "
                                 f"{type(default).__name__}, got {type(value).__name__} "
                                 f"{value!r}")
        self._flags[name] = value if type(default) is bool else type(default)(value)

    return property(get, put, doc=f"``{name}`` (default {default!r}).")


def _config_property(name):
    def get(self):
        return self._configs[name]

    def put(self, value):
        if not isinstance(value, dict):
            raise _ArgumentError(f"DistributedStrategy.{name} must be a dict, got "
                                 f"{type(value).__name__}")
        current = self._configs[name]
        for key, v in value.items():
            if key not in _CONFIG_DEFAULTS[name]:
                raise _ArgumentError(f"DistributedStrategy.{name}: unknown key {key!r}; the "
                                     f"keys are {sorted(_CONFIG_DEFAULTS[name])}")
            current[key] = copy.deepcopy(v)

    return property(get, put, doc=f"``{name}``: a dict; assigning one updates the given keys.")


for _name in _FLAG_DEFAULTS:
    setattr(DistributedStrategy, _name, _flag_property(_name))
for _name in _CONFIG_DEFAULTS:
    setattr(DistributedStrategy, _name, _config_property(_name))
del _name
