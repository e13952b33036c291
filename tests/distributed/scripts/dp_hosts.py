"""Train a model data parallel for a few steps on the global batch split across the ranks;
rank 0 writes the parameters to ``out`` (an .npz). Run with one process it trains on the whole
global batch: the reference the multi-rank runs must match.

Usage: dp_hosts.py MODEL STEPS OUT   (MODEL: resnet18 | encoder | mlp)

Every rank also checks that its parameters are bitwise those of rank 0 (the hierarchical
average gives every rank the same bits, on every host).
"""

import os
import socket
import sys

import numpy as np

import paddle_hl as paddle
import paddle_hl.distributed as dist

model_name, steps, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
GLOBAL = 24 if model_name == "mlp" else 8  # mlp: 2 or 3 hosts x 2 ranks
paddle.seed(7)
if model_name == "resnet18":
    net = paddle.vision.models.resnet18(num_classes=10)
    # BatchNorm on running statistics (eval mode), so that a sample's gradient is its own and
    # one process on the global batch is comparable; the statistics are first set from one
    # batch (momentum 0), the same on every rank, so that activations keep their scale
    bns = [m for m in net.sublayers() if isinstance(m, paddle.nn.BatchNorm2D)]
    for m in bns:
        m._momentum = 0.0
    with paddle.no_grad():
        net(paddle.to_tensor(np.random.default_rng(1).standard_normal((16, 3, 32, 32))
                             .astype("float32")))
    for m in bns:
        m._momentum = 0.9
    net.eval()
    shape, classes = (GLOBAL, 3, 32, 32), 10
elif model_name == "encoder":
    layer = paddle.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0)
    net = paddle.nn.Sequential(paddle.nn.TransformerEncoder(layer, 2), paddle.nn.Flatten(),
                               paddle.nn.Linear(32 * 6, 5))
    shape, classes = (GLOBAL, 6, 32), 5
else:
    net = paddle.nn.Sequential(paddle.nn.Linear(16, 64), paddle.nn.ReLU(),
                               paddle.nn.Linear(64, 5))
    shape, classes = (GLOBAL, 16), 5
model = paddle.DataParallel(net, comm_buffer_size=1, last_comm_buffer_size=0.25) if n > 1 \
    else net
if n > 1:
    reducer = model._reducer
    print(f"rank {rank} on {socket.gethostname()}: shared buckets "
          f"{reducer.shm is not None}, across hosts "
          f"{reducer.shm is not None and reducer.shm.cross is not None}", flush=True)
lr = 0.001 if model_name == "resnet18" else 0.05  # eval-mode BatchNorm: small steps
opt = paddle.optimizer.Momentum(learning_rate=lr, momentum=0.9, parameters=model.parameters())
rng = np.random.default_rng(3)
per = GLOBAL // n
losses = []
for _ in range(steps):
    x = rng.standard_normal(shape).astype("float32")
    y = rng.integers(0, classes, (GLOBAL, 1)).astype("int64")
    xs, ys = x[rank * per:(rank + 1) * per], y[rank * per:(rank + 1) * per]
    loss = paddle.nn.functional.cross_entropy(model(paddle.to_tensor(xs)), paddle.to_tensor(ys))
    loss.backward()
    opt.step()
    opt.clear_grad()
    losses.append(float(loss))
params = {k: v.numpy() for k, v in net.state_dict().items()}
if n > 1:
    flat = np.concatenate([v.reshape(-1).astype(np.float64) for v in params.values()])
    mine = paddle.to_tensor(flat)
    every = []
    dist.all_gather(every, mine)
    for r, other in enumerate(every):
        assert np.array_equal(other.numpy(), flat), f"rank {r}'s parameters differ from {rank}'s"
if rank == 0:
    tmp = out + ".part.npz"
    np.savez(tmp, **params)
    os.replace(tmp, out)
print(f"rank {rank} done, losses {losses}", flush=True)
