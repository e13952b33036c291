"""``checkpoint.py save DIR`` on 2 ranks writes a sharded checkpoint (a Shard(0) weight, a
replicated bias, sharded Adam states, a Partial tensor, a dense tensor, a scheduler's state)
and the expected global values; ``checkpoint.py load DIR`` on 1 or 3 ranks loads it with other
placements and checks every value."""

import os
import sys

import numpy as np

import paddle_hl as paddle
import paddle_hl.distributed as dist

dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
mode, path = sys.argv[1], sys.argv[2]
mesh = dist.ProcessMesh(list(range(n)), dim_names=["x"])


def build():
    paddle.seed(11)
    net = paddle.nn.Linear(5, 4)  # the same initial weights on every rank
    sched = paddle.optimizer.lr.StepDecay(0.1, step_size=1)
    return net, sched


if mode == "save":
    net, sched = build()
    ref = paddle.nn.Linear(5, 4)
    ref.set_state_dict(net.state_dict())
    net.weight = dist.shard_tensor(net.weight, mesh, [dist.Shard(0)])  # rows 3 + 2
    dist.shard_layer(net, mesh)
    opt = dist.shard_optimizer(paddle.optimizer.Adam(sched, parameters=net.parameters()))
    ref_opt = paddle.optimizer.Adam(0.1, parameters=ref.parameters())
    xb = paddle.to_tensor(np.linspace(-1, 1, 10, dtype=np.float32).reshape(2, 5))
    for m, o in ((net, opt), (ref, ref_opt)):
        m(xb).pow(2).sum().backward()
        o.step()
    sched.step()
    part = dist.shard_tensor(np.zeros([3], np.float32), mesh, [dist.Partial()])
    part._local_value().add_(paddle.full([3], float(rank + 1)))  # value: 1 + 2 = 3
    state = {"model": net.state_dict(), "opt": opt.state_dict(), "partial": part,
             "dense": paddle.to_tensor(np.arange(6, dtype=np.int64).reshape(2, 3))}
    moment = opt.state_dict()[net.weight.name + "_moment1_0"]
    assert moment.shape == [3 if rank == 0 else 2, 4]  # saved from this rank's shard only
    dist.save_state_dict(state, path)
    if rank == 0:
        np.savez(os.path.join(path, "expected.npz"), weight=ref.weight.numpy(),
                 bias=ref.bias.numpy(),
                 moment=ref_opt.state_dict()[ref.weight.name + "_moment1_0"].numpy())
    files = sorted(f for f in os.listdir(path) if f.endswith(".distcp"))
    assert files == ["0_0.distcp", "1_0.distcp"], files
else:
    net, sched = build()
    want = np.load(os.path.join(path, "expected.npz"))
    # other placements on another number of ranks: the weight split by columns
    net.weight = dist.shard_tensor(net.weight, mesh, [dist.Shard(1)])
    moment = dist.shard_tensor(np.zeros([5, 4], np.float32), mesh, [dist.Shard(0)])
    part = dist.shard_tensor(np.zeros([3], np.float32), mesh, [dist.Replicate()])
    dense = paddle.zeros([2, 3], dtype="int64")
    state = {"model": net.state_dict(), "opt": {net.weight.name + "_moment1_0": moment},
             "partial": part, "dense": dense}
    dist.load_state_dict(state, path)
    np.testing.assert_allclose(net.weight.numpy(), want["weight"], rtol=1e-6)
    np.testing.assert_allclose(net.bias.numpy(), want["bias"], rtol=1e-6)
    np.testing.assert_allclose(moment.numpy(), want["moment"], rtol=1e-6)
    cols = np.array_split(np.arange(4), n)[rank]
    np.testing.assert_allclose(net.weight._local_value().numpy(), want["weight"][:, cols],
                               rtol=1e-6)
    np.testing.assert_array_equal(part.numpy(), [3.0, 3.0, 3.0])
    np.testing.assert_array_equal(dense.numpy(), np.arange(6).reshape(2, 3))
    assert state["opt"]["LR_Scheduler"]["last_epoch"] == 1  # non-tensor values come back
    # bad input
    for call, kind, words in [
        (lambda: dist.load_state_dict({"nope": paddle.zeros([1])}, path), KeyError,
         "['nope'] not in the checkpoint"),
        (lambda: dist.load_state_dict({"dense": paddle.zeros([3, 2])}, path), ValueError,
         "has global shape [3, 2] here but [2, 3] in the checkpoint"),
        (lambda: dist.load_state_dict({}, path + "_missing"), FileNotFoundError,
         "does not exist"),
        (lambda: dist.save_state_dict([1], path), TypeError, "state_dict must be a dict"),
    ]:
        try:
            call()
        except kind as e:
            assert words in str(e), str(e)
        else:
            raise AssertionError(words)
print(f"OK rank {rank} of {n}", flush=True)
