"""Run on N ranks with a GPU each: every collective on GPU tensors goes through NCCL and gives
what the same collective gives on CPU tensors (through MPI), and DataParallel on GPU
parameters (NCCL buckets on the GPU) trains as DataParallel on CPU parameters."""

import copy
import warnings

import cupy
import numpy as np

import paddle_hl as paddle
import paddle_hl.distributed as dist

paddle.set_device("gpu")
with warnings.catch_warnings():
    warnings.simplefilter("error")  # a fallback to host copies would warn: make it fail
    dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
assert paddle.get_device() == f"gpu:{rank}", paddle.get_device()
assert dist.get_backend() == "NCCL", dist.get_backend()
world = dist.get_group(0)
assert world.nccl and world.backend == "nccl"
GPU, CPU = paddle.CUDAPlace(rank), paddle.CPUPlace()


def val(r, dtype, shape=(3, 4)):
    base = np.arange(np.prod(shape)).reshape(shape) + 10 * r + 1
    if dtype == "bool":
        return base % 2 == r % 2
    return base.astype(dtype)


def pair(a):
    """The same values as a GPU tensor and as a CPU tensor."""
    return paddle.to_tensor(a, place=GPU), paddle.to_tensor(a, place=CPU)


def same(g, c, what):
    assert isinstance(g._data, cupy.ndarray), f"{what}: the result left the GPU"
    assert g.dtype == c.dtype, (what, g.dtype, c.dtype)
    a, b = g.numpy(), c.numpy()
    tol = 2e-3 if a.dtype == np.float16 else 1e-6
    np.testing.assert_allclose(a.astype("float64"), b.astype("float64"), rtol=tol,
                               err_msg=f"{what} rank {rank}")


def both(fn, *arrays):
    """Run ``fn`` on GPU tensors and on CPU tensors made of ``arrays``; compare what it
    returns (a tensor or a list of tensors)."""
    outs = []
    for place in (GPU, CPU):
        ts = [paddle.to_tensor(a, place=place) for a in arrays]
        outs.append(fn(*ts))
    return outs


for dt in ["float32", "float64", "float16", "int32", "int64", "bool"]:
    mine = val(rank, dt)
    ops = [dist.ReduceOp.SUM, dist.ReduceOp.MAX, dist.ReduceOp.MIN, dist.ReduceOp.PROD]
    if dt != "bool":
        ops.append(dist.ReduceOp.AVG)
    for op in ops:
        def red(x, op=op):
            dist.all_reduce(x, op=op)
            return x
        g, c = both(red, mine)
        same(g, c, f"all_reduce {op} {dt}")
        if dt != "bool":
            def red_to(x, op=op):
                dist.reduce(x, dst=n - 1, op=op)
                return x
            g, c = both(red_to, mine)
            same(g, c, f"reduce {op} {dt}")

            def rs(x, op=op):
                out = paddle.zeros_like(x)
                dist.reduce_scatter(out, [x * (j + 1) for j in range(n)], op=op)
                return out
            if dt != "float16":
                g, c = both(rs, mine)
                same(g, c, f"reduce_scatter {op} {dt}")

    x, _ = pair(mine)
    task = dist.all_reduce(x, sync_op=False)
    task.wait()
    assert task.is_completed()

    def bc(x):
        dist.broadcast(x, src=n - 1)
        return x
    g, c = both(bc, mine)
    same(g, c, f"broadcast {dt}")

    def ag(x):
        out = []
        dist.all_gather(out, x)
        pre = [paddle.zeros_like(x) for _ in range(n)]
        dist.all_gather(pre, x)
        return out + pre
    for g, c in zip(*both(ag, mine)):
        same(g, c, f"all_gather {dt}")

    def ga(x):
        out = [] if rank == 0 else None
        dist.gather(x, out, dst=0)
        return out or []
    for g, c in zip(*both(ga, mine)):
        same(g, c, f"gather {dt}")

    def sc(x):
        out = paddle.zeros_like(x)
        dist.scatter(out, [x + j if dt != "bool" else x for j in range(n)] if rank == 0
                     else None, src=0)
        return out
    g, c = both(sc, mine)
    same(g, c, f"scatter {dt}")

    def a2a(*xs):
        out = []
        dist.alltoall(list(xs), out)
        return out
    for g, c in zip(*both(a2a, *[val(10 * rank + j, dt) for j in range(n)])):
        same(g, c, f"alltoall {dt}")

# a non-contiguous tensor (every other column) is reduced in place, the rest untouched
def strided(x):
    v = x[:, ::2]
    dist.all_reduce(v)
    return x
g, c = both(strided, val(rank, "float32"))
same(g, c, "all_reduce on a strided view")

# alltoall_single with uneven splits: rank r sends r+1 rows to every rank
def a2a_single(x):
    out = paddle.zeros([sum(r + 1 for r in range(n)), 2], dtype="float32")
    out = paddle.to_tensor(out.numpy(), place=x.place)
    dist.alltoall_single(x, out, in_split_sizes=[rank + 1] * n,
                         out_split_sizes=[r + 1 for r in range(n)])
    return out
g, c = both(a2a_single, np.full((n * (rank + 1), 2), rank, dtype="float32"))
same(g, c, "alltoall_single")

# point to point: a ring (irecv first on every rank: held back, then issued with the send in
# one NCCL group), and a blocking pair
right, left = (rank + 1) % n, (rank - 1) % n
buf, _ = pair(np.zeros(4, dtype="int64"))
task = dist.irecv(buf, src=left)
dist.send(pair(np.full(4, rank, dtype="int64"))[0], dst=right)
task.wait()
np.testing.assert_array_equal(buf.numpy(), np.full(4, left))
if rank == 0:
    dist.isend(pair(np.arange(3.0))[0], dst=1).wait()
elif rank == 1:
    z, _ = pair(np.zeros(3))
    dist.recv(z, src=0)
    np.testing.assert_array_equal(z.numpy(), np.arange(3.0))

# a sub-group has its own communicator
g = dist.new_group(list(range(n)))
assert g.nccl and g.nccl is not world.nccl
x, _ = pair(np.array([float(rank)], dtype="float32"))
dist.all_reduce(x, group=g)
np.testing.assert_allclose(x.numpy(), [float(sum(range(n)))])
dist.barrier()
dist.destroy_process_group(g)

# DataParallel: the same model and data on the GPU (NCCL buckets) and on the CPU (MPI)
paddle.seed(7)
cpu_net = paddle.nn.Sequential(paddle.nn.Linear(6, 32), paddle.nn.ReLU(),
                               paddle.nn.Linear(32, 3))
gpu_net = copy.deepcopy(cpu_net)
gpu_net.to(f"gpu:{rank}")
cpu_net.to("cpu")
models = {}
for name, net in (("gpu", gpu_net), ("cpu", cpu_net)):
    model = paddle.DataParallel(net, comm_buffer_size=0.002, last_comm_buffer_size=0.001)
    models[name] = (model, paddle.optimizer.SGD(0.1, parameters=model.parameters()))
gpu_red = models["gpu"][0]._reducer
assert gpu_red.nccl is not None and all(gpu_red.on_gpu), gpu_red.on_gpu
rng = np.random.default_rng(rank)
for _step in range(3):
    xs = rng.standard_normal((8, 6)).astype("float32")
    ys = rng.integers(0, 3, (8,)).astype("int64")
    for name, place in (("gpu", GPU), ("cpu", CPU)):
        model, opt = models[name]
        loss = paddle.nn.functional.cross_entropy(model(paddle.to_tensor(xs, place=place)),
                                                  paddle.to_tensor(ys, place=place))
        loss.backward()
        if name == "gpu":
            for p in model.parameters():
                assert isinstance(p.grad._data, cupy.ndarray)
            for buf, _ in gpu_red.views.values():
                assert isinstance(buf, cupy.ndarray)  # the buckets never left the GPU
        opt.step()
        opt.clear_grad()
for (name, p), q in zip(gpu_net.named_parameters(), cpu_net.parameters()):
    np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-4, atol=1e-5,
                               err_msg=f"DataParallel {name} rank {rank}")
print(f"OK rank {rank} of {n}", flush=True)
