"""paddle_hl.distributed: the process environment and data-parallel training.

paddle_hl runs one process per device. The trainer environment comes from Paddle's launcher
variables (``PADDLE_TRAINERS_NUM``, ``PADDLE_TRAINER_ID``); with more than one process the
gradients of ``DataParallel`` are averaged with MPI (``mpi4py``) on CPU.
"""

from .parallel import DataParallel, ParallelEnv, get_rank, get_world_size, init_parallel_env

__all__ = ["DataParallel", "ParallelEnv", "get_rank", "get_world_size", "init_parallel_env"]
