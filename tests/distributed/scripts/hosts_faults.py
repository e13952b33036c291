"""A data-parallel loop for the multi-host fault tests: trains a small model step after step,
printing ``step N on HOST`` on every rank, until STEPS steps are done.

Usage: hosts_faults.py STEPS [PAUSE]   (PAUSE: seconds to sleep after each step)
"""

import socket
import sys
import time

import numpy as np

import paddle_hl as paddle
import paddle_hl.distributed as dist

steps = int(sys.argv[1])
pause = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
dist.init_parallel_env()
rank = dist.get_rank()
paddle.seed(1)
net = paddle.nn.Sequential(paddle.nn.Linear(8, 32), paddle.nn.ReLU(), paddle.nn.Linear(32, 2))
model = paddle.DataParallel(net)
opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
rng = np.random.default_rng(rank)
for step in range(steps):
    x = paddle.to_tensor(rng.standard_normal((4, 8)).astype("float32"))
    model(x).mean().backward()
    opt.step()
    opt.clear_grad()
    print(f"step {step} rank {rank} on {socket.gethostname()}", flush=True)
    time.sleep(pause)
