"""One full training step (forward, backward, Adam step) side by side with PyTorch CPU and
Paddle 2.6.2: an MLP (784-512-512-10, batch 128), LeNet (batch 64, 1x28x28), ResNet-18 with
10 classes (batch 32, 3x32x32) and MobileNetV2 with 10 classes (batch 16, 3x64x64: depthwise
convolutions; not in the default ``--models``). Prints ms per step, the ratios, and each run's
peak memory.

Each (library, model) pair runs in its own process, so peak RSS is that run's alone. The
libraries' runs are interleaved over ``--rounds`` rounds (each round runs every library once per
model); the table prints the median over rounds of each run's median step time, with the
range, so one busy moment on a shared machine shows as a wide range rather than a wrong ratio.

Below the table a roofline line per model says how much of paddle_hl's step is GEMM: the step's
matrix products (Linear and im2col convolution, forward and backward) timed as plain NumPy
SGEMM on this machine, their GFLOP/s, and the time the step spends outside them.

Run: python benchmarks/train_step.py [--steps 20] [--rounds 5] [--models mlp,lenet,resnet18]
      [--threads N] [--libs paddle_hl,torch,paddle]

``--threads N`` limits BLAS/OpenMP (and torch's intra-op pool, and paddle_hl's CPU thread pool)
to N threads in every worker, for
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

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHAPES = {"mlp": ((128, 784), 128), "lenet": ((64, 1, 28, 28), 64),
          "resnet18": ((32, 3, 32, 32), 32), "mobilenet_v2": ((16, 3, 64, 64), 16)}


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
    elif model == "mobilenet_v2":
        net = lib.vision.models.mobilenet_v2(num_classes=10)
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

    step.net, step.x = net, x
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
    elif model == "mobilenet_v2":
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from vision_inference import _torch_mobilenet_v2

        net = _torch_mobilenet_v2()
        net.classifier[1] = nn.Linear(1280, 10)
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


def _worker(lib, model, steps, threads, roofline=False):
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
    from _timing import timed

    times, cpu = timed(step, steps)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    res = {"ms": statistics.median(times) * 1e3, "min_ms": min(times) * 1e3,
           "cpu_ms": statistics.median(cpu) * 1e3, "peak_mb": peak_mb}
    if lib == "paddle_hl" and roofline:
        from _roofline import gemm_floor, gemm_plan

        import paddle_hl

        res["gflop"], res["gemm_s"] = gemm_floor(gemm_plan(paddle_hl, step.net, step.x))
    print(json.dumps(res))


def _spread(values):
    """``median (min-max)`` of a list of numbers."""
    return f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--models", default="mlp,lenet,resnet18")
    ap.add_argument("--threads", type=int, default=0,
                    help="BLAS/OpenMP/torch threads per worker (0: the libraries' default)")
    ap.add_argument("--libs", default="paddle_hl,torch,paddle")
    ap.add_argument("--worker", nargs=2, metavar=("LIB", "MODEL"), help=argparse.SUPPRESS)
    ap.add_argument("--roofline", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        _worker(args.worker[0], args.worker[1], args.steps, args.threads, args.roofline)
        return
    env = dict(os.environ)
    if args.threads:
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "PADDLE_HL_NUM_THREADS"):
            env[var] = str(args.threads)
    models, libs = args.models.split(","), args.libs.split(",")
    runs = {(m, lib): [] for m in models for lib in libs}
    for rnd in range(args.rounds):
        for model in models:
            for lib in libs:
                cmd = [sys.executable, __file__, "--steps", str(args.steps), "--threads",
                       str(args.threads), "--worker", lib, model]
                if rnd == 0 and lib == "paddle_hl":
                    cmd.append("--roofline")
                r = subprocess.run(cmd, capture_output=True, text=True, env=env)
                line = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
                try:
                    runs[model, lib].append(json.loads(line))
                except json.JSONDecodeError:
                    print(f"{lib}/{model} did not run: {r.stderr.strip().splitlines()[-1:]}")
    print(f"ms per training step, median (range) of {args.rounds} interleaved rounds of "
          f"{args.steps} steps; threads: {args.threads or 'default'}")
    print(f"{'model':<10}{'paddle_hl':>24}{'torch':>24}{'paddle':>24}{'hl/torch':>22}"
          f"{'hl/paddle':>11}{'cpu ms hl/torch/paddle':>26}{'peak MB hl/torch/paddle':>26}")
    for model in models:
        res = {lib: runs[model, lib] for lib in libs}

        def col(lib, res=res):
            rs = res.get(lib)
            return _spread([r["ms"] for r in rs]) if rs else "-"

        def med(lib, key="ms", res=res):
            rs = res.get(lib)
            return statistics.median(r[key] for r in rs) if rs else None

        def ratio(a, b, res=res):
            ra, rb = res.get(a), res.get(b)
            if not ra or not rb:
                return "-"
            # ratios of the runs of the same round: the range says how steady the ratio is
            qs = [x["ms"] / y["ms"] for x, y in zip(ra, rb)]
            return f"{statistics.median(qs):.2f}x ({min(qs):.2f}-{max(qs):.2f})"

        cpus = "/".join(f"{med(k, 'cpu_ms'):.1f}" if res.get(k) else "-"
                        for k in ("paddle_hl", "torch", "paddle"))
        peaks = "/".join(f"{med(k, 'peak_mb'):.0f}" if res.get(k) else "-"
                         for k in ("paddle_hl", "torch", "paddle"))
        print(f"{model:<10}{col('paddle_hl'):>24}{col('torch'):>24}{col('paddle'):>24}"
              f"{ratio('paddle_hl', 'torch'):>22}{ratio('paddle_hl', 'paddle'):>11}"
              f"{cpus:>26}{peaks:>26}")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _roofline import line as roofline_line

    print("roofline (paddle_hl):")
    for model in models:
        rs = runs.get((model, "paddle_hl")) or []
        first = next((r for r in rs if "gflop" in r), None)
        if first:
            step_ms = statistics.median(r["ms"] for r in rs)
            print("  " + roofline_line(model, step_ms, first["gflop"], first["gemm_s"]))


if __name__ == "__main__":
    main()
