"""Run on 2 ranks: Model.fit trains data parallel (DataParallel, sharded loader) to the same
parameters as one process on the whole batches; evaluate reports the global accuracy on every
rank (padding samples dropped); only rank 0 logs and saves."""

import copy
import os
import sys

import numpy as np

import paddle_hl as paddle
import paddle_hl.distributed as dist

save_dir = sys.argv[1]
n = dist.get_world_size()
rank = dist.get_rank()
rng = np.random.default_rng(0)
X = rng.standard_normal((32, 6)).astype(np.float32)
Y = rng.integers(0, 3, (32, 1)).astype(np.int64)
EX = rng.standard_normal((11, 6)).astype(np.float32)  # 11: the sampler pads to 12
EY = rng.integers(0, 3, (11, 1)).astype(np.int64)


class Data(paddle.io.Dataset):
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __getitem__(self, i):
        return self.x[i], self.y[i]

    def __len__(self):
        return len(self.x)


paddle.seed(100 + rank)  # different initial weights: the wrap broadcasts rank 0's
net = paddle.nn.Sequential(paddle.nn.Linear(6, 8), paddle.nn.ReLU(), paddle.nn.Linear(8, 3))
model = paddle.Model(net)
model.prepare(paddle.optimizer.SGD(0.1, parameters=net.parameters()),
              paddle.nn.CrossEntropyLoss(), paddle.metric.Accuracy())
ref = copy.deepcopy(net)  # after prepare: rank 0's weights
model.fit(Data(X, Y), batch_size=4, epochs=2, shuffle=False, verbose=1, save_dir=save_dir)

# one process on the concatenated batches (2 ranks x 4 samples)
opt = paddle.optimizer.SGD(0.1, parameters=ref.parameters())
for _ in range(2):
    for i in range(0, 32, 8):
        loss = paddle.nn.CrossEntropyLoss()(ref(paddle.to_tensor(X[i:i + 8])),
                                           paddle.to_tensor(Y[i:i + 8]))
        loss.backward()
        opt.step()
        opt.clear_grad()
for a, b in zip(net.parameters(), ref.parameters()):
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)

res = model.evaluate(Data(EX, EY), batch_size=2, verbose=0)
pred = ref(paddle.to_tensor(EX)).numpy().argmax(-1)
np.testing.assert_allclose(res["acc"], float((pred == EY[:, 0]).mean()), rtol=1e-6)
# predict: every rank gets the predictions of all 11 samples, in order
preds = model.predict(Data(EX, EY), batch_size=2, verbose=0, stack_outputs=True)[0]
assert preds.shape == (11, 3), preds.shape
# (each step: rank 0's 2 samples then rank 1's 2; the 12th is the padding, cut)
np.testing.assert_allclose(preds, ref(paddle.to_tensor(EX)).numpy(), rtol=1e-5, atol=1e-6)
dist.barrier()
assert os.path.exists(os.path.join(save_dir, "final.pdparams"))
print(f"OK rank {rank} of {n} acc {res['acc']:.4f}", flush=True)
