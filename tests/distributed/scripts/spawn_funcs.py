"""Functions run by paddle_hl.distributed.spawn in the tests (importable by the new processes)."""

import numpy as np

import paddle_hl as paddle
import paddle_hl.distributed as dist


def rank_times(x):
    dist.init_parallel_env()
    t = paddle.to_tensor(np.array([float(dist.get_rank())]))
    dist.all_reduce(t)
    return dist.get_rank() * x, float(t.numpy()[0]), dist.ParallelEnv().world_size


def fails_on_rank_one():
    dist.init_parallel_env()
    if dist.get_rank() == 1:
        raise ValueError("rank one refuses")
    dist.barrier()
