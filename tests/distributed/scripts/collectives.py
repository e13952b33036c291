"""Run on N ranks: every collective, for several dtypes, checked against NumPy on each rank."""

import sys

import numpy as np

import paddle_hl as paddle
import paddle_hl.distributed as dist

env = dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
assert (env.rank, env.world_size) == (rank, n)
assert dist.is_initialized() and dist.get_backend() == "MPI"
DTYPES = sys.argv[1].split(",") if len(sys.argv) > 1 else ["float32"]


def val(r, dtype, shape=(2, 3)):
    base = np.arange(np.prod(shape)).reshape(shape) + 10 * r + 1
    if dtype == "bool":
        return (base % 2 == r % 2)
    return base.astype("float32").astype(dtype) if dtype == "bfloat16" else base.astype(dtype)


def t(a):
    return paddle.to_tensor(a)


def close(a, b, what):
    a = np.asarray(a.numpy() if hasattr(a, "numpy") else a)
    b = np.asarray(b)
    if a.dtype.name == "bfloat16" or b.dtype.name == "bfloat16":
        a, b = a.astype("float32"), b.astype("float32")
    np.testing.assert_allclose(a.astype("float64"), b.astype("float64"), rtol=1e-2,
                               err_msg=f"{what} rank {rank}")


everyone = [val(r, "float64") for r in range(n)]
for dt in DTYPES:
    vals = [val(r, dt) for r in range(n)]
    mine = vals[rank]
    # all_reduce: every op
    ops = {dist.ReduceOp.SUM: np.sum, dist.ReduceOp.MAX: np.max, dist.ReduceOp.MIN: np.min,
           dist.ReduceOp.PROD: np.prod}
    if dt != "bool":
        ops[dist.ReduceOp.AVG] = np.mean
    for op, ref in ops.items():
        x = t(mine)
        dist.all_reduce(x, op=op)
        expect = ref(np.stack([v.astype("float64") for v in vals]), axis=0)
        if dt in ("int32", "int64") and op == dist.ReduceOp.AVG:
            expect = np.trunc(expect)
        if dt == "bool":
            expect = expect.astype(bool)
        assert x.dtype == t(mine).dtype, (x.dtype, dt)
        close(x, expect, f"all_reduce {op} {dt}")
    # asynchronous all_reduce
    x = t(mine)
    task = dist.all_reduce(x, sync_op=False)
    task.wait()
    assert task.is_completed()
    if dt != "bool":
        close(x, np.sum(np.stack([v.astype("float64") for v in vals]), 0), f"async {dt}")
    # broadcast from the last rank
    x = t(mine)
    dist.broadcast(x, src=n - 1)
    close(x, vals[n - 1], f"broadcast {dt}")
    # reduce to rank 0: the others keep their input
    if dt != "bool":
        x = t(mine)
        dist.reduce(x, dst=0)
        close(x, sum(v.astype("float64") for v in vals) if rank == 0 else mine, f"reduce {dt}")
    # all_gather into an empty list and into a list of tensors
    out = []
    dist.all_gather(out, t(mine))
    assert len(out) == n
    for r in range(n):
        close(out[r], vals[r], f"all_gather {dt}")
    pre = [t(np.zeros_like(mine)) for _ in range(n)]
    dist.all_gather(pre, t(mine))
    close(pre[n - 1], vals[n - 1], f"all_gather into tensors {dt}")
    # gather to the last rank
    got = [] if rank == n - 1 else None
    dist.gather(t(mine), got, dst=n - 1)
    if rank == n - 1:
        for r in range(n):
            close(got[r], vals[r], f"gather {dt}")
    # scatter from rank 0
    x = t(np.zeros_like(mine))
    dist.scatter(x, [t(val(r, dt)) for r in range(n)] if rank == 0 else None, src=0)
    close(x, mine, f"scatter {dt}")
    # alltoall: rank r sends val(10*r + j) to rank j
    ins = [t(val(10 * rank + j, dt)) for j in range(n)]
    outs = []
    dist.alltoall(ins, outs)
    for j in range(n):
        close(outs[j], val(10 * j + rank, dt), f"alltoall {dt}")
    # reduce_scatter
    if dt != "bool":
        x = t(np.zeros_like(mine))
        dist.reduce_scatter(x, [t(val(10 * rank + j, dt)) for j in range(n)])
        close(x, sum(val(10 * r + rank, "float64") for r in range(n)), f"reduce_scatter {dt}")

# alltoall_single with uneven splits: rank r sends r+1 rows to every rank
rows_in = np.full((n * (rank + 1), 2), rank, dtype="float32")
out = t(np.zeros((sum(r + 1 for r in range(n)), 2), dtype="float32"))
dist.alltoall_single(t(rows_in), out, in_split_sizes=[rank + 1] * n,
                     out_split_sizes=[r + 1 for r in range(n)])
expect = np.concatenate([np.full((r + 1, 2), r, dtype="float32") for r in range(n)])
close(out, expect, "alltoall_single")

# objects
objs = []
dist.all_gather_object(objs, {"rank": rank, "name": f"r{rank}"})
assert objs == [{"rank": r, "name": f"r{r}"} for r in range(n)], objs
lst = [f"from {rank}", rank]
dist.broadcast_object_list(lst, src=1)
assert lst == ["from 1", 1], lst
got = []
dist.scatter_object_list(got, [("obj", r) for r in range(n)] if rank == 0 else None, src=0)
assert got == [("obj", rank)], got

# point to point: a ring
right, left = (rank + 1) % n, (rank - 1) % n
buf = t(np.zeros(4, dtype="int64"))
task = dist.irecv(buf, src=left)
dist.send(t(np.full(4, rank, dtype="int64")), dst=right)
task.wait()
close(buf, np.full(4, left), "ring")
if rank == 0:
    dist.isend(t(np.arange(3.0)), dst=1).wait()
elif rank == 1:
    z = t(np.zeros(3))
    dist.recv(z, src=0)
    close(z, np.arange(3.0), "recv")

# a sub-group of the even ranks
evens = list(range(0, n, 2))
g = dist.new_group(evens)
assert g.nranks == len(evens) and g.is_member() == (rank in evens)
x = t(np.array([float(rank)]))
dist.all_reduce(x, group=g)
if rank in evens:
    close(x, [float(sum(evens))], "group all_reduce")
    assert g.rank == evens.index(rank) and g.get_group_rank(rank) == g.rank
else:
    close(x, [float(rank)], "non-member keeps its tensor")
assert dist.get_group(g.id) is g
dist.barrier()
dist.wait(x)
dist.destroy_process_group(g)
print(f"OK rank {rank} of {n}", flush=True)
