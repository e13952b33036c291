"""One full training step (forward, backward, Adam step) side by side with PyTorch CPU and
Paddle 2.6.2: an MLP (784-512-512-10, batch 128), LeNet (batch 64, 1x28x28) and ResNet-18 with
10 classes (batch 32, 3x32x32). Prints ms per step, the ratios, and each run's peak memory.

Each (library, model) pair runs in its own process, so peak RSS is that run's alone.

Run: python benchmarks/train_step.py [--steps 20] [--models mlp,lenet,resnet18] [--threads N]
      [--libs paddle_hl,torch,paddle]

``--threads N`` limits BLAS/OpenMP (and torch's intra-op pool) to N threads in every worker, for
comparisons that are not distorted by thread oversubscription on a busy machine. Next to the
wall-clock median, the CPU time per step (``time.process_time``, all threads of the worker) is
printed: on a machine shared with other processes it is the steadier number.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHAPES = {"mlp": ((128, 784), 128), "lenet": ((64, 1, 28, 28), 64),
          "resnet18": ((32, 3, 32, 32), 32)}


def _data(model):
    shape, n = SHAPES[model]
    rng = np.random.default_rng(0)
    return rng.standard_normal(shape).astype("float32"), rng.integers(0, 10, (n,)).astype("int64")


def _paddle_like(lib, model):
    nn = lib.nn
    if model == "mlp":
        net = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                            nn.Linear(512, 10))
    elif model == "lenet":
        net = lib.vision.models.LeNet()
    else:
        net = lib.vision.models.resnet18(num_classes=10)
    opt = lib.optimizer.Adam(learning_rate=1e-3, parameters=net.parameters())
    loss_fn = nn.CrossEntropyLoss()
    xs, ys = _data(model)
    x, y = lib.to_tensor(xs), lib.to_tensor(ys)

    def step():
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    return step


def _torch_resnet18(torch):
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                          nn.BatchNorm2d(cout))

        def forward(self, x):
            out = torch.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return torch.relu(out + (x if self.down is None else self.down(x)))

    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
              nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 10)]
    return nn.Sequential(*layers)


def _torch(model):
    import torch

    nn = torch.nn
    if model == "mlp":
        net = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                            nn.Linear(512, 10))
    elif model == "lenet":
        net = nn.Sequential(nn.Conv2d(1, 6, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2, 2),
                            nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2, 2), nn.Flatten(),
                            nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, 10))
    else:
        net = _torch_resnet18(torch)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    xs, ys = _data(model)
    x, y = torch.from_numpy(xs), torch.from_numpy(ys)

    def step():
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    return step


def _worker(lib, model, steps, threads):
    if lib == "torch":
        if threads:
            import torch

            torch.set_num_threads(threads)
        step = _torch(model)
    elif lib == "paddle":
        import zlib  # noqa: F401

        import numpy.random  # noqa: F401  (paddle 2.6.2 crashes under NumPy 2 without these)
        import paddle

        step = _paddle_like(paddle, model)
    else:
        sys.path.insert(0, str(ROOT))
        import paddle_hl

        step = _paddle_like(paddle_hl, model)
    for _ in range(3):  # warm-up
        step()
    times, cpu = [], []
    for _ in range(steps):
        t0, c0 = time.perf_counter(), time.process_time()
        step()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"ms": statistics.median(times) * 1e3, "min_ms": min(times) * 1e3,
                      "cpu_ms": statistics.median(cpu) * 1e3, "peak_mb": peak_mb}))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--models", default="mlp,lenet,resnet18")
    ap.add_argument("--threads", type=int, default=0,
                    help="BLAS/OpenMP/torch threads per worker (0: the libraries' default)")
    ap.add_argument("--libs", default="paddle_hl,torch,paddle")
    ap.add_argument("--worker", nargs=2, metavar=("LIB", "MODEL"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        _worker(args.worker[0], args.worker[1], args.steps, args.threads)
        return
    env = dict(os.environ)
    if args.threads:
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = str(args.threads)
    rows = []
    for model in args.models.split(","):
        res = {}
        for lib in args.libs.split(","):
            r = subprocess.run([sys.executable, __file__, "--steps", str(args.steps), "--threads",
                                str(args.threads), "--worker", lib, model],
                               capture_output=True, text=True, env=env)
            line = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
            try:
                res[lib] = json.loads(line)
            except json.JSONDecodeError:
                res[lib] = None
                print(f"{lib}/{model} did not run: {r.stderr.strip().splitlines()[-1:]}")
        rows.append((model, res))
    print(f"{'model':<10}{'paddle_hl ms':>14}{'torch ms':>10}{'paddle ms':>11}"
          f"{'hl/torch':>10}{'hl/paddle':>11}{'cpu ms hl/torch/paddle':>26}"
          f"{'peak MB hl/torch/paddle':>26}")
    for model, res in rows:
        hl, th, pd = (res.get(k) for k in ("paddle_hl", "torch", "paddle"))

        def ms(r):
            return f"{r['ms']:.1f}" if r else "-"

        def ratio(a, b):
            return f"{a['ms'] / b['ms']:.2f}x" if a and b else "-"

        cpus = "/".join(f"{r['cpu_ms']:.1f}" if r else "-" for r in (hl, th, pd))
        peaks = "/".join(f"{r['peak_mb']:.0f}" if r else "-" for r in (hl, th, pd))
        print(f"{model:<10}{ms(hl):>14}{ms(th):>10}{ms(pd):>11}{ratio(hl, th):>10}"
              f"{ratio(hl, pd):>11}{cpus:>26}{peaks:>26}")


if __name__ == "__main__":
    main()
