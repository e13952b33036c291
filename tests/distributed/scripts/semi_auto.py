"""Run on 2 ranks: shard_tensor / dtensor_from_fn local values, every reshard direction (with
collectives), gradients through reshard, shard_layer + shard_optimizer against one process,
and bad input."""

import copy

import numpy as np

import paddle_hl as paddle
import paddle_hl.distributed as dist
from paddle_hl.framework.parameter import Parameter

dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
assert n == 2
mesh = dist.ProcessMesh([0, 1], dim_names=["x"])
g = np.arange(30, dtype=np.float32).reshape(5, 6)
rows = [(0, 3), (3, 5)][rank]  # 5 rows over 2 ranks: 3 and 2
cols = [(0, 3), (3, 6)][rank]

# shard_tensor: the global value everywhere, this rank's shard as the local value
x = dist.shard_tensor(g, mesh, [dist.Shard(0)])
assert x.is_dist() and x.placements == [dist.Shard(0)] and x.shape == [5, 6]
np.testing.assert_array_equal(x.numpy(), g)
np.testing.assert_array_equal(x._local_value().numpy(), g[rows[0]:rows[1]])
y = dist.shard_tensor(paddle.to_tensor(g), mesh, [dist.Shard(1)])
np.testing.assert_array_equal(y._local_value().numpy(), g[:, cols[0]:cols[1]])

# dtensor_from_fn
z = dist.dtensor_from_fn(paddle.ones, mesh, [dist.Shard(0)], shape=[4, 2])
assert z._local_value().shape == [2, 2] and z.placements == [dist.Shard(0)]

# Shard -> Replicate gathers the shards: a rank's update of its own shard reaches everyone
x._local_value().scale_(10.0)
r = dist.reshard(x, mesh, [dist.Replicate()])
want = g * 10  # each rank scaled its own rows
np.testing.assert_array_equal(r.numpy(), want)
assert r.placements == [dist.Replicate()]

# Replicate -> Partial: the value on coordinate 0, zeros elsewhere; Partial -> Replicate sums
p = dist.reshard(r, mesh, [dist.Partial()])
np.testing.assert_array_equal(p._local_value().numpy(), want if rank == 0 else 0 * want)
back = dist.reshard(p, mesh, [dist.Replicate()])
np.testing.assert_array_equal(back.numpy(), want)

# a Partial of per-rank contributions: all-reduced by reshard (sum, max, avg)
c = dist.shard_tensor(np.zeros([4, 2], np.float32), mesh, [dist.Partial()])
c._local_value().add_(paddle.full([4, 2], float(rank + 1)))
np.testing.assert_array_equal(dist.reshard(c, mesh, [dist.Replicate()]).numpy(), 3.0)
s = dist.reshard(c, mesh, [dist.Shard(0)])
np.testing.assert_array_equal(s._local_value().numpy(), np.full([2, 2], 3.0))
cm = dist.shard_tensor(np.zeros([3], np.float32), mesh,
                       [dist.Partial(dist.ReduceType.kRedMax)])
cm._local_value().add_(paddle.full([3], float(rank + 5)))
np.testing.assert_array_equal(dist.reshard(cm, mesh, [dist.Replicate()]).numpy(), 6.0)
ca = dist.shard_tensor(np.zeros([3], np.float32), mesh,
                       [dist.Partial(dist.ReduceType.kRedAvg)])
ca._local_value().add_(paddle.full([3], float(rank * 2)))
np.testing.assert_array_equal(dist.reshard(ca, mesh, [dist.Replicate()]).numpy(), 1.0)

# Shard(0) -> Shard(1)
s1 = dist.reshard(dist.shard_tensor(g, mesh, [dist.Shard(0)]), mesh, [dist.Shard(1)])
np.testing.assert_array_equal(s1._local_value().numpy(), g[:, cols[0]:cols[1]])

# a 2-D mesh [1, 2]: replicate on the first dim, shard on the second
mesh2 = dist.ProcessMesh([[0, 1]], dim_names=["dp", "mp"])
t2 = dist.shard_tensor(g, mesh2, [dist.Replicate(), dist.Shard(1)])
np.testing.assert_array_equal(t2._local_value().numpy(), g[:, cols[0]:cols[1]])
np.testing.assert_array_equal(dist.reshard(t2, mesh2, [dist.Shard(0), dist.Replicate()]).numpy(),
                              g)

# a sub-mesh: only rank 1 holds the tensor; moving it to the whole mesh broadcasts it
sub = dist.ProcessMesh([1], dim_names=["x"])
only1 = dist.shard_tensor(g * (7 if rank == 1 else 0), sub, [dist.Replicate()])
assert only1._local_value().shape == ([5, 6] if rank == 1 else [0, 0])
moved = dist.reshard(only1, mesh, [dist.Shard(0)])
np.testing.assert_array_equal(moved.numpy(), 7 * g)

# gradients flow through reshard
xs = dist.shard_tensor(g, mesh, [dist.Shard(0)], stop_gradient=False)
out = dist.reshard(xs, mesh, [dist.Replicate()])
(out * out).sum().backward()
np.testing.assert_allclose(xs.grad.numpy(), 2 * g)

# shard_layer + shard_optimizer: the same parameters as one process after three Adam steps
paddle.seed(7)
net = paddle.nn.Sequential(paddle.nn.Linear(6, 5), paddle.nn.ReLU(), paddle.nn.Linear(5, 3))
ref = copy.deepcopy(net)


def shard_fn(name, layer, pmesh):
    if isinstance(layer, paddle.nn.Linear):
        layer.weight = dist.shard_tensor(layer.weight, pmesh, [dist.Shard(1)])


dist.shard_layer(net, mesh, shard_fn,
                 input_fn=lambda inputs, pm: tuple(dist.shard_tensor(i, pm, [dist.Shard(0)])
                                                   for i in inputs))
assert net[0].weight.placements == [dist.Shard(1)] and net[0].bias.placements == \
    [dist.Replicate()]
assert isinstance(net[0].weight, Parameter) and net[0].weight.trainable
opt = dist.shard_optimizer(paddle.optimizer.Adam(0.05, parameters=net.parameters()))
ref_opt = paddle.optimizer.Adam(0.05, parameters=ref.parameters())
rng = np.random.default_rng(3)
for _ in range(3):
    xb = paddle.to_tensor(rng.standard_normal((4, 6)).astype(np.float32))
    for model, o in ((net, opt), (ref, ref_opt)):
        model(xb).pow(2).mean().backward()
        o.step()
        o.clear_grad()
for a, b in zip(net.parameters(), ref.parameters()):
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
state = opt.state_dict()
m1 = state[net[0].weight.name + "_moment1_0"]
assert m1.shape == [6, 3 if rank == 0 else 2], m1.shape  # only this rank's shard is kept
np.testing.assert_allclose(
    m1.numpy(), ref_opt.state_dict()[ref[0].weight.name + "_moment1_0"].numpy()[
        :, [(0, 3), (3, 5)][rank][0]:[(0, 3), (3, 5)][rank][1]], rtol=1e-5, atol=1e-7)

# bad input names the function and what was expected
for call, kind, words in [
    (lambda: dist.reshard(paddle.ones([2]), mesh, [dist.Replicate()]), TypeError,
     "reshard: dist_tensor must be a distributed tensor"),
    (lambda: dist.shard_tensor(g, dist.ProcessMesh([0, 1, 2]), [dist.Shard(0)]), ValueError,
     "the job has 2 processes"),
    (lambda: dist.shard_tensor(g, mesh, [dist.Shard(0), dist.Shard(1)]), ValueError,
     "2 placements for a mesh of 1 dimension"),
    (lambda: dist.shard_tensor(g, mesh, [dist.Shard(2)]), ValueError, "Shard(dim=2)"),
    (lambda: dist.shard_tensor(g, [0, 1], [dist.Shard(0)]), TypeError, "mesh must be a"),
]:
    try:
        call()
    except kind as e:
        assert words in str(e), str(e)
    else:
        raise AssertionError(f"no error for {words}")
print(f"OK rank {rank} of {n}", flush=True)
