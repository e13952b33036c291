"""Run on 2 ranks: where the shared bucket memory cannot be had (no folder for it; one rank
unable to map it), every rank falls back to MPI's all-reduce together, the file made for it is
removed, and the gradients are still the averages."""

import os

import numpy as np

import paddle_hl as paddle
import paddle_hl.distributed as dist
from paddle_hl.distributed import _shm

dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()


def averaged(model, net):
    x = paddle.to_tensor(np.full((1, 4), rank + 1.0, "float32"))
    model(x).sum().backward()
    want = np.full((4, 2), np.mean([r + 1.0 for r in range(n)]), "float32")
    np.testing.assert_allclose(net.weight.grad.numpy(), want, rtol=1e-6)


# no folder for the file: rank 0 cannot make it, and says so to the others
real_folder = _shm._folder
_shm._folder = lambda: "/nonexistent-paddle-hl-folder"
net = paddle.nn.Linear(4, 2)
model = paddle.DataParallel(net)
assert model._reducer.shm is None and not any(model._reducer.shared)
averaged(model, net)
_shm._folder = real_folder

# rank 1 cannot map it: both fall back, and the file rank 0 made is gone
made = []
real_open = os.open


def spy_open(path, flags, *a):
    if "paddle_hl_dp_" in str(path):
        made.append(path)
    return real_open(path, flags, *a)


_shm.os.open = spy_open
real_mmap = _shm.mmap.mmap


class NoMap:
    def __init__(self, *a, **k):
        raise OSError("cannot map")


if rank == 1:
    _shm.mmap.mmap = NoMap
net = paddle.nn.Linear(4, 2)
model = paddle.DataParallel(net)
_shm.mmap.mmap = real_mmap
_shm.os.open = real_open
assert model._reducer.shm is None
averaged(model, net)
dist.barrier()
assert made and not any(os.path.exists(p) for p in made), made

# and where it can be had, it is used
net = paddle.nn.Linear(4, 2)
model = paddle.DataParallel(net)
assert model._reducer.shm is not None and all(model._reducer.shared)
averaged(model, net)
print(f"OK rank {rank} of {n}", flush=True)
