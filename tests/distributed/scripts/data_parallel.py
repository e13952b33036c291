"""Run on N ranks: DataParallel gives the same parameters after several steps as one process
training on the concatenated batches (checked on every rank against a local replay)."""

import copy
import os
import sys

import numpy as np

import paddle_hl as paddle
import paddle_hl.distributed as dist

dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
opt_name = sys.argv[1] if len(sys.argv) > 1 else "sgd"


class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.a = paddle.nn.Linear(6, 16, bias_attr=False)  # BatchNorm follows
        self.bn = paddle.nn.BatchNorm1D(16)
        self.b = paddle.nn.Linear(16, 3)
        self.unused = paddle.nn.Linear(3, 3)  # gets no gradient

    def forward(self, x):
        return self.b(paddle.nn.functional.relu(self.bn(self.a(x))))


def make_opt(params):
    if opt_name == "adam":
        return paddle.optimizer.Adam(learning_rate=0.01, parameters=params)
    return paddle.optimizer.SGD(learning_rate=0.1, parameters=params)


paddle.seed(100 + rank)  # different initial weights per rank: the wrap broadcasts rank 0's
net = Net()
reference = copy.deepcopy(net)
# tiny buckets (in MB): several buckets, sent while backward runs
model = paddle.DataParallel(net, comm_buffer_size=0.0002, last_comm_buffer_size=0.0001)
# after the wrap every rank holds rank 0's weights
w0 = []
dist.all_gather(w0, net.a.weight)
for w in w0:
    np.testing.assert_array_equal(w.numpy(), w0[0].numpy())
reference.set_state_dict(net.state_dict())
# the buckets live in memory shared by the ranks unless PADDLE_HL_DP_SHM=0 (MPI's all-reduce)
shared = os.environ.get("PADDLE_HL_DP_SHM", "1") != "0"
assert (model._reducer.shm is not None) == shared, model._reducer.shm
assert all(model._reducer.shared) == shared
opt = make_opt(model.parameters())
absorbed = []  # what the reducer's engine hook answered: True when it took the gradient
reducer_absorb = model._reducer.absorb
model._reducer.absorb = lambda entry: absorbed.append(reducer_absorb(entry)) or absorbed[-1]
ref_opt = make_opt(reference.parameters())
loss_fn = paddle.nn.CrossEntropyLoss()
rng = np.random.default_rng(0)
per_rank = 4
for step in range(5):
    x = rng.standard_normal((per_rank * n, 6)).astype("float32")
    y = rng.integers(0, 3, (per_rank * n,)).astype("int64")
    mine = slice(rank * per_rank, (rank + 1) * per_rank)
    if step == 2:
        # gradient accumulation: two half-batches, the first without synchronisation
        half = per_rank // 2
        lo = slice(rank * per_rank, rank * per_rank + half)
        hi = slice(rank * per_rank + half, (rank + 1) * per_rank)
        with model.no_sync():
            (loss_fn(model(paddle.to_tensor(x[lo])), paddle.to_tensor(y[lo])) / 2).backward()
        (loss_fn(model(paddle.to_tensor(x[hi])), paddle.to_tensor(y[hi])) / 2).backward()
    else:
        loss = loss_fn(model(paddle.to_tensor(x[mine])), paddle.to_tensor(y[mine]))
        loss.backward()
    assert net.unused.weight.grad is None
    opt.step()
    opt.clear_grad()
    # the single-process replay: the mean of the per-rank losses on the whole batch
    if step == 2:
        total = 0
        for r in range(n):
            for part in (slice(r * per_rank, r * per_rank + per_rank // 2),
                         slice(r * per_rank + per_rank // 2, (r + 1) * per_rank)):
                total = total + loss_fn(reference(paddle.to_tensor(x[part])),
                                        paddle.to_tensor(y[part])) / 2
    else:
        total = 0
        for r in range(n):
            part = slice(r * per_rank, (r + 1) * per_rank)
            total = total + loss_fn(reference(paddle.to_tensor(x[part])),
                                    paddle.to_tensor(y[part]))
    (total / n).backward()
    ref_opt.step()
    ref_opt.clear_grad()

for (name, p), q in zip(net.named_parameters(), reference.parameters()):
    if p.stop_gradient:
        continue  # BatchNorm's running statistics: the replay runs it n times per step
    np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, atol=1e-6,
                               err_msg=f"{name} rank {rank}")
# float16 parameters (summed in float32 in shared memory, through float64 by MPI): a second
# backward without clearing adds to the averaged gradients, and the sum of both passes is
# averaged again
net16 = paddle.nn.Linear(4, 2)
net16.to(dtype="float16")
m16 = paddle.DataParallel(net16)
x16 = paddle.to_tensor(np.full((2, 4), rank + 1.0, dtype="float16"))
m16(x16).sum().backward()
m16(x16).sum().backward()
mean_grad = 2 * np.mean([r + 1.0 for r in range(n)])  # d(sum)/dW over 2 rows of rank + 1
np.testing.assert_allclose(net16.weight.grad.numpy().astype("float64"),
                           np.full((4, 2), 2 * mean_grad), rtol=1e-3)

assert any(absorbed)  # final gradients went straight into the buckets
assert len(model._reducer.buckets) >= 3, model._reducer.buckets
assert model._reducer.early > 0  # some buckets went out before the backward pass ended
# a gradient handed out by one pass is not overwritten by the next (the buckets' two slots)
kept = net.b.weight.grad.numpy().copy()
held = net.b.weight.grad
opt.clear_grad(set_to_zero=False)
loss_fn(model(paddle.to_tensor(x[mine] * 2)), paddle.to_tensor(y[mine])).backward()
np.testing.assert_array_equal(held.numpy(), kept)
assert not np.array_equal(net.b.weight.grad.numpy(), kept)
print(f"OK rank {rank} of {n} ({opt_name}, {len(model._reducer.buckets)} buckets, "
      f"{model._reducer.early} sent during backward, shared={shared})", flush=True)
