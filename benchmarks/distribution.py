"""Normal distribution speed: ``rsample`` + ``log_prob`` over 1M float32 elements.

Each step builds ``Normal(loc, scale)`` from 1M-element parameters, draws ``x = rsample()`` and
evaluates ``log_prob(x)``; the ``grad`` case also backpropagates ``log_prob(x).sum()`` to loc and
scale. paddle_hl, torch.distributions (CPU) and Paddle 2.6.2 take turns (interleaved rounds),
and the median and range of each are printed with the ratios to paddle_hl.

Run: python benchmarks/distribution.py [--n 1000000] [--rounds 15] [--threads 1]
"""

from __future__ import annotations

import pathlib
import sys

# run from a checkout without installing: python benchmarks/<name>.py
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import argparse
import statistics
import time

import numpy as np


def _paddle_like(lib, loc_np, scale_np, grad):
    loc = lib.to_tensor(loc_np, stop_gradient=not grad)
    scale = lib.to_tensor(scale_np, stop_gradient=not grad)

    def step():
        d = lib.distribution.Normal(loc, scale)
        lp = d.log_prob(d.rsample())
        if grad:
            lp.sum().backward()
            loc.clear_grad()
            scale.clear_grad()
        return lp

    return step


def _torch(torch, loc_np, scale_np, grad):
    loc = torch.tensor(loc_np, requires_grad=grad)
    scale = torch.tensor(scale_np, requires_grad=grad)

    def step():
        d = torch.distributions.Normal(loc, scale)
        lp = d.log_prob(d.rsample())
        if grad:
            lp.sum().backward()
            loc.grad = None
            scale.grad = None
        return lp

    return step


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    loc_np = rng.standard_normal(args.n).astype(np.float32)
    scale_np = (rng.random(args.n) + 0.5).astype(np.float32)

    libs = {}
    import paddle_hl

    libs["paddle_hl"] = lambda g: _paddle_like(paddle_hl, loc_np, scale_np, g)
    try:
        import torch

        torch.set_num_threads(args.threads)
        libs["torch"] = lambda g: _torch(torch, loc_np, scale_np, g)
    except ImportError:
        print("torch not installed: pip install torch")
    try:
        import zlib  # noqa: F401

        import numpy.random  # noqa: F401  (paddle 2.6.2 crashes under NumPy 2 without these first)
        import paddle

        libs["paddle"] = lambda g: _paddle_like(paddle, loc_np, scale_np, g)
    except ImportError:
        print("paddle not installed: pip install paddlepaddle==2.6.2")

    print(f"n = {args.n:,} float32 elements, {args.rounds} interleaved rounds, "
          f"torch threads = {args.threads}")
    for grad in (False, True):
        steps = {k: make(grad) for k, make in libs.items()}
        for f in steps.values():
            f()  # warm up
        times = {k: [] for k in steps}
        for _ in range(args.rounds):
            for k, f in steps.items():
                t0 = time.perf_counter()
                f()
                times[k].append(time.perf_counter() - t0)
        title = "rsample + log_prob + backward" if grad else "rsample + log_prob"
        print(f"\n{title}")
        print(f"{'library':<12}{'median ms':>11}{'min ms':>9}{'max ms':>9}")
        med = {}
        for k, ts in times.items():
            med[k] = statistics.median(ts)
            print(f"{k:<12}{med[k] * 1e3:>11.2f}{min(ts) * 1e3:>9.2f}{max(ts) * 1e3:>9.2f}")
        for k in ("torch", "paddle"):
            if k in med:
                print(f"paddle_hl / {k}: {med['paddle_hl'] / med[k]:.2f}x time")


if __name__ == "__main__":
    main()
