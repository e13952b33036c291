"""Run on N ranks: rank 1 fails in the way argv[1] names while the others train."""

import os
import signal
import sys
import time

import numpy as np

import paddle_hl as paddle
import paddle_hl.distributed as dist

dist.init_parallel_env()
rank = dist.get_rank()
mode = sys.argv[1]
model = paddle.DataParallel(paddle.nn.Linear(4, 2))
opt = paddle.optimizer.SGD(parameters=model.parameters())
for step in range(3):
    if rank == 1 and step == 1:
        if mode == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        elif mode == "hang":
            time.sleep(600)
        elif mode == "raise":
            raise ValueError("a bad batch on rank 1")
    model(paddle.to_tensor(np.ones((2, 4), "float32"))).sum().backward()
    opt.step()
    opt.clear_grad()
print("finished", rank)
