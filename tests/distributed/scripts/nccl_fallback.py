"""Run on 2 ranks sharing one GPU: NCCL cannot work (it needs a GPU per rank), so collectives
on GPU tensors go through host memory and MPI, after one warning that says why."""

import warnings

import cupy
import numpy as np

import paddle_hl as paddle
import paddle_hl.distributed as dist

paddle.set_device("gpu")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
msgs = [str(w.message) for w in caught if "NCCL cannot be used" in str(w.message)]
assert len(msgs) == 1 and "same GPU" in msgs[0], [str(w.message) for w in caught]
assert dist.get_backend() == "MPI"
x = paddle.to_tensor(np.arange(4.0, dtype="float32") + rank, place=paddle.get_device())
with warnings.catch_warnings():
    warnings.simplefilter("error")  # warned once, not at every collective
    dist.all_reduce(x)
assert isinstance(x._data, cupy.ndarray)
np.testing.assert_allclose(x.numpy(), sum(np.arange(4.0) + r for r in range(n)))
net = paddle.nn.Linear(3, 2)
model = paddle.DataParallel(net)
model(paddle.to_tensor(np.full((2, 3), rank + 1.0, dtype="float32"))).sum().backward()
assert isinstance(net.weight.grad._data, cupy.ndarray)
np.testing.assert_allclose(net.weight.grad.numpy(),
                           np.full((3, 2), 2 * np.mean([r + 1.0 for r in range(n)])), rtol=1e-6)
print(f"OK rank {rank} of {n}", flush=True)
