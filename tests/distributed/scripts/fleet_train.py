"""A training script in PaddleClas's style: fleet.init with a strategy (AMP settings, recompute,
data-parallel degree), a backbone whose blocks run under fleet.utils.recompute, the model and
optimizer wrapped by fleet, a GradScaler wrapped by fleet.distributed_scaler, and a
DistributedBatchSampler sharding the data.

    python fleet_train.py MODE [--amp] [--lib paddle|paddle_hl] [--out losses.json]

MODE ``dp``: data parallel; ``sharding``: stage-1 sharding of Adam's states. Under the launcher
each rank also replays the training on the whole batch in one process (the same initial
weights, the mean of the ranks' losses) and checks that the parameters agree, so the gradients
were averaged across ranks. With ``--lib paddle`` it runs on real Paddle 2.6.2 (one process):
real Paddle's fleet.init cannot read its strategy under the installed protobuf (it reads
FieldDescriptor.label, gone in protobuf 7), and on one process fleet's wrappers leave the model
and optimizer unchanged, so there the script calls the model and optimizer directly and keeps
fleet.utils.recompute.
"""

import argparse
import json
import os
import sys

import numpy as np

p = argparse.ArgumentParser()
p.add_argument("mode", choices=["dp", "sharding"])
p.add_argument("--amp", action="store_true")
p.add_argument("--lib", default="paddle_hl")
p.add_argument("--out", default=None)
p.add_argument("--steps", type=int, default=6)
p.add_argument("--init", default=None, help="an .npz of initial weights: loaded when it "
               "exists, else written (so both libraries start from the same weights)")
args = p.parse_args()

if args.lib == "paddle":
    import zlib  # noqa: F401  (paddle 2.6.2 under NumPy 2 needs these first)

    import numpy.random  # noqa: F401
    import paddle

    paddle.disable_signal_handler()
else:
    import paddle_hl as paddle
from_fleet = __import__(f"{paddle.__name__}.distributed.fleet", fromlist=["fleet"])
fleet = from_fleet
recompute = from_fleet.utils.recompute
on_fleet = args.lib != "paddle"

strategy = fleet.DistributedStrategy() if on_fleet else None
if on_fleet:
    strategy.amp = args.amp
    strategy.amp_configs = {"init_loss_scaling": 1024.0, "use_dynamic_loss_scaling": True,
                            "level": "O1"}
    strategy.recompute = True
    world = int(os.environ.get("PADDLE_TRAINERS_NUM", "1"))
    if args.mode == "sharding":
        strategy.hybrid_configs = {"dp_degree": 1, "sharding_degree": world}
    else:
        strategy.hybrid_configs = {"dp_degree": world}
    strategy.find_unused_parameters = False
    strategy.fuse_grad_size_in_MB = 1
    fleet.init(is_collective=True, strategy=strategy)
    rank, nranks = fleet.worker_index(), fleet.worker_num()
else:
    rank, nranks = 0, 1


class Block(paddle.nn.Layer):
    """A residual conv block (conv-BN-ReLU-conv-BN plus the input)."""

    def __init__(self, c):
        super().__init__()
        self.conv1 = paddle.nn.Conv2D(c, c, 3, padding=1, bias_attr=False)
        self.bn1 = paddle.nn.BatchNorm2D(c)
        self.conv2 = paddle.nn.Conv2D(c, c, 3, padding=1, bias_attr=False)
        self.bn2 = paddle.nn.BatchNorm2D(c)

    def forward(self, x):
        y = paddle.nn.functional.relu(self.bn1(self.conv1(x)))
        return paddle.nn.functional.relu(x + self.bn2(self.conv2(y)))


class Net(paddle.nn.Layer):
    def __init__(self, use_recompute=True):
        super().__init__()
        self.stem = paddle.nn.Conv2D(3, 8, 3, padding=1)
        self.blocks = paddle.nn.LayerList([Block(8) for _ in range(2)])
        self.pool = paddle.nn.AdaptiveAvgPool2D(1)
        self.fc = paddle.nn.Linear(8, 5)
        self.use_recompute = use_recompute

    def forward(self, x):
        x = self.stem(x)
        for b in self.blocks:
            x = recompute(b, x) if self.use_recompute and self.training else b(x)
        return self.fc(paddle.flatten(self.pool(x), 1))


class Data(paddle.io.Dataset):
    def __init__(self, n):
        rng = np.random.default_rng(7)
        self.x = rng.standard_normal((n, 3, 8, 8)).astype("float32")
        self.y = rng.integers(0, 5, (n,)).astype("int64")

    def __getitem__(self, i):
        return self.x[i], self.y[i]

    def __len__(self):
        return len(self.x)


per_rank = 4
data = Data(per_rank * nranks * args.steps)
paddle.seed(2024)
np.random.seed(2024)
net = Net()
if args.init and os.path.exists(args.init):
    with np.load(args.init) as f:
        net.set_state_dict({k: paddle.to_tensor(f[k]) for k in f.files})
elif args.init:
    tmp = f"{args.init}.{os.getpid()}.tmp.npz"
    np.savez(tmp, **{k: v.numpy() for k, v in net.state_dict().items()})
    os.replace(tmp, args.init)
# the same start on every rank for the replay below (distributed_model broadcasts rank 0's)
init_state = {k: v.numpy().copy() for k, v in net.state_dict().items()}
model = fleet.distributed_model(net) if on_fleet else net


def make_opt(params):
    if args.mode == "sharding":
        return paddle.optimizer.Adam(learning_rate=0.01, parameters=params,
                                     grad_clip=paddle.nn.ClipGradByGlobalNorm(1.0))
    return paddle.optimizer.Momentum(learning_rate=0.05, momentum=0.9, parameters=params,
                                     weight_decay=1e-4)


opt = make_opt(model.parameters())
if on_fleet:
    opt = fleet.distributed_optimizer(opt)
# AMP as the strategy sets it (in dynamic mode the script applies it, as PaddleClas does)
use_amp = strategy.amp if on_fleet else args.amp
amp_cfg = strategy.amp_configs if on_fleet else {"init_loss_scaling": 1024.0, "level": "O1"}
scaler = paddle.amp.GradScaler(init_loss_scaling=amp_cfg["init_loss_scaling"]) \
    if use_amp else None
if scaler is not None and on_fleet:
    scaler = fleet.distributed_scaler(scaler)
if on_fleet and nranks > 1:
    sampler = paddle.io.DistributedBatchSampler(data, batch_size=per_rank, shuffle=False)
else:
    sampler = paddle.io.BatchSampler(data, batch_size=per_rank * nranks, shuffle=False)
loader = paddle.io.DataLoader(data, batch_sampler=sampler)
loss_fn = paddle.nn.CrossEntropyLoss()

losses = []
model.train()
for x, y in loader:
    with paddle.amp.auto_cast(enable=use_amp, level=amp_cfg["level"]):
        out = model(x)
        loss = loss_fn(out, y)
    if scaler is not None:
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    else:
        loss.backward()
        opt.step()
    opt.clear_grad()
    losses.append(float(loss.numpy()))

if args.out:
    tmp = f"{args.out}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(losses, f)
    os.replace(tmp, args.out)

if on_fleet and nranks > 1:
    import paddle_hl.distributed as dist

    # every rank holds the same parameters (BatchNorm's running statistics are each rank's own)
    for name, prm in net.named_parameters():
        if prm.stop_gradient:
            continue
        got = []
        dist.all_gather(got, prm)
        for g in got:
            np.testing.assert_array_equal(g.numpy(), prm.numpy(), err_msg=name)
    if args.mode == "sharding":
        # each rank keeps optimizer states for its own parameters only
        owned = {q.name for q in opt.owned_parameters()}
        states = [k for k in opt.state_dict() if k.endswith("moment1_0")]
        assert states and all(any(k.startswith(n + "_") for n in owned) for k in states), \
            (owned, states)
        counts = []
        dist.all_gather_object(counts, len(owned))
        assert sum(counts) == len(list(net.parameters())) and max(counts) < sum(counts), counts
    # the topology, and averaging gradients by hand (a model not wrapped in DataParallel)
    hcg = fleet.get_hybrid_communicate_group()
    if args.mode == "sharding":
        assert hcg.get_sharding_parallel_world_size() == nranks
        assert hcg.get_sharding_parallel_group().nranks == nranks
        assert hcg.get_data_parallel_world_size() == 1
    else:
        assert hcg.get_data_parallel_world_size() == nranks
        assert hcg.get_data_parallel_group().nranks == nranks
        assert hcg.get_data_parallel_rank() == rank
    from paddle_hl.distributed.fleet.utils import hybrid_parallel_util

    plain = paddle.nn.Linear(3, 2)
    (plain(paddle.full([1, 3], float(rank + 1))).sum()).backward()
    hybrid_parallel_util.fused_allreduce_gradients(list(plain.parameters()), hcg)
    mean = np.mean([r + 1.0 for r in range(nranks)])
    np.testing.assert_allclose(plain.weight.grad.numpy(), np.full((3, 2), mean), rtol=1e-6)
    np.testing.assert_allclose(plain.bias.grad.numpy(), np.ones(2), rtol=1e-6)
    fleet.barrier_worker()
    # the replay: one process, the whole batch, the mean of the ranks' losses
    ref = Net()
    ref.set_state_dict({k: paddle.to_tensor(v) for k, v in init_state.items()})
    ref_opt = make_opt(ref.parameters())
    ref_scaler = paddle.amp.GradScaler(init_loss_scaling=amp_cfg["init_loss_scaling"]) \
        if use_amp else None
    ref.train()
    step = per_rank * nranks
    for i in range(args.steps):
        total = 0
        for r in range(nranks):
            lo = i * step + r * per_rank
            bx = paddle.to_tensor(data.x[lo:lo + per_rank])
            by = paddle.to_tensor(data.y[lo:lo + per_rank])
            with paddle.amp.auto_cast(enable=use_amp, level=amp_cfg["level"]):
                total = total + loss_fn(ref(bx), by)
        total = total / nranks
        if ref_scaler is not None:
            ref_scaler.scale(total).backward()
            ref_scaler.step(ref_opt)
            ref_scaler.update()
        else:
            total.backward()
            ref_opt.step()
        ref_opt.clear_grad()
    tol = 5e-3 if use_amp else 1e-4
    for (name, prm), q in zip(net.named_parameters(), ref.parameters()):
        if prm.stop_gradient:
            continue
        np.testing.assert_allclose(prm.numpy(), q.numpy(), rtol=tol, atol=tol,
                                   err_msg=f"{name} rank {rank}")
print(f"losses rank {rank}: {[round(v, 5) for v in losses]}")
print(f"OK rank {rank} of {nranks}")
sys.stdout.flush()
