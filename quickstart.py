"""paddle_hl quick start: tensors, autograd, and a small model trained from scratch.

Run: python quickstart.py
It builds a few tensors, then fits a 2-layer MLP to a noisy 2-D function with hand-written SGD
on paddle_hl's autograd engine, printing the loss as it falls.
"""

from __future__ import annotations

import time

import numpy as np

import paddle_hl as paddle


def tensors_tour():
    x = paddle.to_tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    print(x)
    print("x.sum() ->", x.sum().item(), "  shape of a full reduction:", x.sum().shape)
    print("int / int is true division:", (paddle.to_tensor([327]) / paddle.to_tensor([80])).numpy())
    w = paddle.to_tensor(5.0, stop_gradient=False)
    paddle.pow(w, 4.0).backward()
    print("d/dw w**4 at w=5 ->", w.grad.item())


def make_data(n=512, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, size=(n, 2)).astype("float32")
    y = (np.sin(x[:, :1] * 1.5) + 0.5 * x[:, 1:] ** 2 + 0.05 * rng.standard_normal((n, 1)))
    return paddle.to_tensor(x), paddle.to_tensor(y.astype("float32"))


def init_params(sizes, seed=0):
    rng = np.random.default_rng(seed)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        limit = np.sqrt(6.0 / (fan_in + fan_out))  # Xavier uniform, as Paddle's Linear default
        w = rng.uniform(-limit, limit, size=(fan_in, fan_out)).astype("float32")
        params.append(paddle.to_tensor(w, stop_gradient=False))
        params.append(paddle.zeros([fan_out]))
        params[-1].stop_gradient = False
    return params


def forward(params, x):
    w1, b1, w2, b2 = params
    h = paddle.tanh(paddle.matmul(x, w1) + b1)
    return paddle.matmul(h, w2) + b2


def train(epochs=300, lr=0.1):
    x, y = make_data()
    params = init_params([2, 64, 1])
    t0 = time.perf_counter()
    first = None
    for epoch in range(1, epochs + 1):
        loss = ((forward(params, x) - y) ** 2).mean()
        loss.backward()
        with paddle.no_grad():
            for p in params:
                p.subtract_(p.grad * lr)
                p.clear_grad()
        if first is None:
            first = loss.item()
        if epoch == 1 or epoch % 50 == 0:
            print(f"epoch {epoch:4d}  loss {loss.item():.5f}")
    last = loss.item()
    print(f"loss {first:.4f} -> {last:.4f} in {time.perf_counter() - t0:.2f}s")
    return first, last


if __name__ == "__main__":
    tensors_tour()
    first, last = train()
    if not last < first * 0.2:
        raise SystemExit("training did not converge")
