"""The process topology of a fleet job: CommunicateTopology and HybridCommunicateGroup, for the
data-parallel (and stage-1 sharding) layouts paddle_hl runs."""

from __future__ import annotations

import itertools

from ... import collective as _coll

__all__ = []


class ParallelMode:
    """The kind of parallelism of a job (``hcg.get_parallel_mode()``)."""

    DATA_PARALLEL = 0
    TENSOR_PARALLEL = 1
    PIPELINE_PARALLEL = 2
    SHARDING_PARALLEL = 3
    SEGMENT_PARALLEL = 4


class CommunicateTopology:
    """Ranks laid out on a grid of named axes (data, pipe, sharding, sep, model).

    Args:
        hybrid_group_names (list[str]): the axes' names.
        dims (list[int]): the axes' sizes; their product is the number of ranks.
    """

    def __init__(self, hybrid_group_names=("data", "pipe", "sharding", "sep", "model"),
                 dims=(1, 1, 1, 1, 1)):
        if len(hybrid_group_names) != len(dims):
            raise ValueError(f"CommunicateTopology: {len(hybrid_group_names)} names but "
                             f"{len(dims)} dims")
        self._parallel_names = list(hybrid_group_names)
        self._dims = [int(d) for d in dims]
        self._coords = list(itertools.product(*(range(d) for d in self._dims)))
        self._world_size = len(self._coords)

    def get_hybrid_group_names(self):
        return list(self._parallel_names)

    def get_dim(self, axis_name):
        return self._dims[self._parallel_names.index(axis_name)]

    def world_size(self):
        return self._world_size

    def get_rank(self, **coords):
        """The rank at the given coordinates (every axis named)."""
        key = tuple(coords[n] for n in self._parallel_names)
        return self._coords.index(key)

    def get_coord(self, rank):
        return self._coords[rank]

    def get_axis_list(self, axis_name, index):
        """The ranks whose coordinate on ``axis_name`` is ``index``."""
        axis = self._parallel_names.index(axis_name)
        return [r for r, c in enumerate(self._coords) if c[axis] == index]

    def get_comm_list(self, axis_name):
        """The groups of ranks that differ only on ``axis_name``."""
        axis = self._parallel_names.index(axis_name)
        groups = {}
        for r, c in enumerate(self._coords):
            groups.setdefault(c[:axis] + c[axis + 1:], []).append(r)
        return list(groups.values())

    def get_rank_from_stage(self, global_rank, **kwargs):
        coord = list(self._coords[global_rank])
        for name, v in kwargs.items():
            coord[self._parallel_names.index(name)] = v
        return self._coords.index(tuple(coord))


class HybridCommunicateGroup:
    """The communication groups of each parallel axis, for this rank.

    In paddle_hl the model, pipeline and sep axes have one rank each; the data axis (or the
    sharding axis, for stage-1 sharding) spans every rank, and its group is the global group.
    """

    def __init__(self, topology):
        self._topo = topology
        self.nranks = topology.world_size()
        self.global_rank = _coll.get_rank()
        self._dp_degree = topology.get_dim("data")
        self._mp_degree = topology.get_dim("model")
        self._pp_degree = topology.get_dim("pipe")
        self._sharding_degree = topology.get_dim("sharding")
        self._sep_degree = (topology.get_dim("sep")
                            if "sep" in topology.get_hybrid_group_names() else 1)
        world = _coll.get_group(0) if _coll.is_initialized() else None
        self._dp_group = world if self._dp_degree > 1 else None
        self._sharding_group = world if self._sharding_degree > 1 else None

    def get_parallel_mode(self):
        if self._sharding_degree > 1:
            return ParallelMode.SHARDING_PARALLEL
        return ParallelMode.DATA_PARALLEL

    def topology(self):
        return self._topo

    def get_global_rank(self):
        return self.global_rank

    # data parallel
    def get_data_parallel_rank(self):
        return self.global_rank if self._dp_degree > 1 else 0

    def get_data_parallel_world_size(self):
        return self._dp_degree

    def get_data_parallel_group(self):
        return self._dp_group

    def get_data_parallel_group_src_rank(self):
        return 0

    # sharding
    def get_sharding_parallel_rank(self):
        return self.global_rank if self._sharding_degree > 1 else 0

    def get_sharding_parallel_world_size(self):
        return self._sharding_degree

    def get_sharding_parallel_group(self):
        return self._sharding_group

    def get_sharding_parallel_group_src_rank(self):
        return 0

    # the axes with one rank in paddle_hl
    def get_model_parallel_rank(self):
        return 0

    def get_model_parallel_world_size(self):
        return 1

    def get_model_parallel_group(self):
        return None

    def get_model_parallel_group_src_rank(self):
        return self.global_rank

    def get_stage_id(self):
        return 0

    def get_pipe_parallel_world_size(self):
        return 1

    def get_pipe_parallel_group(self):
        return None

    def get_sep_parallel_rank(self):
        return 0

    def get_sep_parallel_world_size(self):
        return 1

    def get_sep_parallel_group(self):
        return None

    def get_check_parallel_group(self, sharding=False):
        return self._sharding_group if sharding else self._dp_group

    def is_first_stage(self):
        return True

    def is_last_stage(self):
        return True
