"""Run on 2 ranks: paddle.distributed.split (row and column parallel linear, vocabulary
parallel embedding) against the same layer on one process, forward and backward."""

import numpy as np

import paddle_hl as paddle
import paddle_hl.distributed as dist

dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
rng = np.random.default_rng(0)  # the same input on every rank
xv = rng.standard_normal((3, 8)).astype(np.float32)


def gathered(t, axis):
    parts = []
    dist.all_gather(parts, t)
    return np.concatenate([p.numpy() for p in parts], axis=axis)


def close(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


# row parallel: weight rows split, partial products summed, bias added once
x = paddle.to_tensor(xv, stop_gradient=False)
y = dist.split(x, (8, 4), "linear", axis=0, num_partitions=n, name="row")
layer = dist.split.layers["row"]
assert layer.weight.shape == [4, 4] and layer.weight.is_distributed
w = gathered(layer.weight, 0)
close(y.numpy(), xv @ w + layer.bias.numpy())
y.sum().backward()
close(x.grad.numpy(), np.ones((3, 4)) @ w.T)  # the full input's gradient on every rank
close(layer.weight.grad.numpy(), (xv.T @ np.ones((3, 4)))[rank * 4:(rank + 1) * 4])

# column parallel, gathered output
x = paddle.to_tensor(xv, stop_gradient=False)
y = dist.split(x, (8, 6), "linear", axis=1, num_partitions=n, name="col")
layer = dist.split.layers["col"]
assert layer.weight.shape == [8, 3] and layer.bias.shape == [3]
w, b = gathered(layer.weight, 1), gathered(layer.bias, 0)
close(y.numpy(), xv @ w + b)
(y * y).sum().backward()
close(x.grad.numpy(), (2 * (xv @ w + b)) @ w.T)

# column parallel without gathering: this rank's output features
y = dist.split(paddle.to_tensor(xv), (8, 6), "linear", axis=1, num_partitions=n,
               gather_out=False, name="col_local")
layer = dist.split.layers["col_local"]
close(y.numpy(), xv @ layer.weight.numpy() + layer.bias.numpy())
assert y.shape == [3, 3]

# vocabulary parallel embedding
ids = paddle.to_tensor(np.array([[0, 5, 9], [3, 4, 7]], dtype=np.int64))
e = dist.split(ids, (10, 4), "embedding", num_partitions=n, name="emb")
table = gathered(dist.split.layers["emb"].weight, 0)
close(e.numpy(), table[ids.numpy()])

# a training loop reuses the layer of its call site
before = len(dist.split.layers)
for _ in range(3):
    dist.split(paddle.to_tensor(xv), (8, 2), "linear", axis=0, num_partitions=n)
assert len(dist.split.layers) == before + 1

for call, words in [
    (lambda: dist.split(x, (8, 4), "linear", num_partitions=3), "must equal the number"),
    (lambda: dist.split(x, (8, 4), "conv", num_partitions=n), "'linear' or 'embedding'"),
    (lambda: dist.split(x, (6, 4), "linear", num_partitions=n), "x's last dimension is 8"),
    (lambda: dist.split(x, (8, 5), "linear", axis=1, num_partitions=n), "not divisible"),
    (lambda: dist.split(ids, (10, 4), "embedding", axis=1, num_partitions=n), "axis must be"),
]:
    try:
        call()
    except ValueError as err:
        assert words in str(err), str(err)
    else:
        raise AssertionError(words)
print(f"OK rank {rank} of {n}", flush=True)
