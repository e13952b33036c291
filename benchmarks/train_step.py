"""One full training step (forward, backward, Adam step) side by side with PyTorch CPU and
Paddle 2.6.2: an MLP (784-512-512-10, batch 128), LeNet (batch 64, 1x28x28), ResNet-18 with
10 classes (batch 32, 3x32x32) and MobileNetV2 with 10 classes (batch 16, 3x64x64: depthwise
convolutions).

The libraries are timed by interleaved blocks in long-lived workers (``_blocks.py``): per
workload the median of the per-block ratios to PyTorch with their range, each library's
wall-clock and CPU time per step and its peak memory, for paddle_hl with numba (``paddle_hl``)
and without (``paddle_hl-numpy``, what ``pip install paddle_hl`` gives), and a self-check row:
a second paddle_hl worker against the first, which must read 1.0x.

Below the table a roofline line per model says how much of paddle_hl's step is GEMM: the step's
matrix products (Linear and im2col convolution, forward and backward) timed as plain NumPy
SGEMM on this machine, their GFLOP/s, and the time the step spends outside them.

Run: python benchmarks/train_step.py [--quick] [--models mlp,lenet,resnet18,mobilenet_v2]
      [--libs torch,paddle_hl,paddle_hl-numpy,paddle] [--blocks 15] [--threads N] [--json F]

``--threads N`` limits BLAS/OpenMP (and torch's intra-op pool, and paddle_hl's CPU thread pool)
to N threads in every worker.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
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


def build(lib, model):
    """One training step of ``model`` in library ``lib`` (the worker's step function)."""
    from _blocks import import_library

    mod = import_library(lib)
    return _torch(model) if lib == "torch" else _paddle_like(mod, model)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="mlp,lenet,resnet18,mobilenet_v2")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import _blocks

    _blocks.add_arguments(ap, blocks=15, block_s=0.4, quick_blocks=5, quick_block_s=0.25)
    args = ap.parse_args(argv)
    if args.serve:
        _blocks.serve(build)
        return
    libs = _blocks.libraries(args)
    results = []
    for model in args.models.split(","):
        results.append(_blocks.run_workload(
            __file__, model, libs, blocks=args.blocks, block_s=args.block_s, pause_s=args.pause,
            threads=args.threads, self_check=not args.no_self_check,
            log=lambda m: print(m, file=sys.stderr, flush=True)))
    env = _blocks.environment()
    print(f"training step (forward, backward, Adam), {args.blocks} interleaved blocks of "
          f"{args.block_s} s per library, {args.pause} s pauses; threads: "
          f"{args.threads or 'default'}; OPENBLAS_CORETYPE {env['OPENBLAS_CORETYPE']}, "
          f"OPENBLAS_L2_SIZE {env['OPENBLAS_L2_SIZE']}")
    print("\n".join(_blocks.table(results)))
    roof = []
    if any(lib.startswith("paddle_hl") for lib in libs):
        from _roofline import gemm_floor, gemm_plan
        from _roofline import line as roofline_line

        import paddle_hl

        print("roofline (paddle_hl):")
        for r in results:
            step = _paddle_like(paddle_hl, r["workload"])
            gflop, gemm_s = gemm_floor(gemm_plan(paddle_hl, step.net, step.x))
            for lib in ("paddle_hl", "paddle_hl-numpy"):
                if lib in r["ms"]:
                    text = roofline_line(f"{r['workload']} ({lib})",
                                         statistics.median(r["ms"][lib]), gflop, gemm_s)
                    roof.append(text)
                    print("  " + text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"benchmark": "train_step", "args": vars(args), "environment": env,
                       "results": results, "roofline": roof}, f, indent=1)


if __name__ == "__main__":
    main()
