"""The resume recipe of docs/distributed.md: checkpoint every EVERY steps (rank 0 writes the
model's and the optimizer's state, then names it in ``latest``, each through a temporary file
and a rename), and on start resume from the checkpoint ``latest`` names, if any. The global
batch of step k depends on k only, and is split evenly across however many ranks run, so a
job relaunched on fewer hosts continues the same loss curve.

Usage: resume.py CKPT_DIR STEPS EVERY [PAUSE]
Prints ``loss STEP VALUE`` (the global batch's loss) on rank 0.
"""

import os
import sys
import time

import numpy as np

import paddle_hl as paddle
import paddle_hl.distributed as dist

ckpt, steps, every = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
pause = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
GLOBAL = 8
paddle.seed(5)
net = paddle.nn.Sequential(paddle.nn.Linear(12, 32), paddle.nn.Tanh(), paddle.nn.Linear(32, 3))
opt = paddle.optimizer.Momentum(learning_rate=0.1, momentum=0.9, parameters=net.parameters())
start = 0
latest = os.path.join(ckpt, "latest")
if os.path.exists(latest):  # resume: every rank loads the same checkpoint
    with open(latest) as f:
        start = int(f.read())
    net.set_state_dict(paddle.load(os.path.join(ckpt, f"step{start}.pdparams")))
    opt.set_state_dict(paddle.load(os.path.join(ckpt, f"step{start}.pdopt")))
model = paddle.DataParallel(net) if n > 1 else net


def save(step):
    for suffix, obj in (("pdparams", net.state_dict()), ("pdopt", opt.state_dict())):
        path = os.path.join(ckpt, f"step{step}.{suffix}")
        paddle.save(obj, path + ".part")
        os.replace(path + ".part", path)
    with open(latest + ".part", "w") as f:
        f.write(str(step))
    os.replace(latest + ".part", latest)


per = GLOBAL // n
for step in range(start, steps):
    rng = np.random.default_rng(step)
    x = rng.standard_normal((GLOBAL, 12)).astype("float32")
    y = rng.integers(0, 3, (GLOBAL, 1)).astype("int64")
    loss = paddle.nn.functional.cross_entropy(
        model(paddle.to_tensor(x[rank * per:(rank + 1) * per])),
        paddle.to_tensor(y[rank * per:(rank + 1) * per]))
    loss.backward()
    opt.step()
    opt.clear_grad()
    total = loss.detach()
    if n > 1:
        dist.all_reduce(total)
        total = total / n
    if rank == 0:
        if (step + 1) % every == 0:
            save(step + 1)
        print(f"loss {step} {float(total)!r}", flush=True)
    time.sleep(pause)
