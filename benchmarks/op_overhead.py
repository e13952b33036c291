"""Per-op Python overhead: 100 chained ``b = b * 1.0001 + 0.0001`` on an 8x8 float32 tensor,
then ``b.sum().backward()``. Timed side by side with PyTorch CPU and Paddle 2.6.2 when installed.

The libraries' runs are interleaved over ``--rounds`` rounds; the median over rounds and the
range are printed. Run: python benchmarks/op_overhead.py [--repeat N] [--rounds R]
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


def _chain(lib, make):
    a = make()
    b = a
    for _ in range(100):
        b = b * 1.0001 + 0.0001
    b.sum().backward()
    return a


def _median_time(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=200, help="chains timed per round")
    ap.add_argument("--rounds", type=int, default=7, help="interleaved rounds (at least 5)")
    args = ap.parse_args(argv)
    init = np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32)
    chains = {}

    import paddle_hl

    chains["paddle_hl"] = lambda: _chain(paddle_hl, lambda: paddle_hl.to_tensor(
        init, stop_gradient=False))
    try:
        import torch

        torch.set_num_threads(1)
        chains["torch"] = lambda: _chain(torch, lambda: torch.tensor(init, requires_grad=True))
    except ImportError:
        print("torch not installed: pip install torch==2.13.0")
    try:
        import zlib  # noqa: F401

        import numpy.random  # noqa: F401  (paddle 2.6.2 crashes under NumPy 2 without these first)
        import paddle

        chains["paddle"] = lambda: _chain(paddle, lambda: paddle.to_tensor(
            init, stop_gradient=False))
    except ImportError:
        print("paddle not installed: pip install paddlepaddle==2.6.2")

    for fn in chains.values():  # warm up every library before the first timed round
        for _ in range(20):
            fn()
    # each round times every library once, in turn, so a busy moment of the shared machine
    # lands on all of them; the per-round medians are summarised below
    per_round = {k: [] for k in chains}
    for _ in range(max(1, args.rounds)):
        for k, fn in chains.items():
            per_round[k].append(_median_time(fn, args.repeat))

    def summary(values, scale):
        return (f"{statistics.median(values) * scale:.3f} "
                f"({min(values) * scale:.3f}-{max(values) * scale:.3f})")

    print(f"{args.rounds} interleaved rounds, each the median of {args.repeat} chains; "
          "median (range) over rounds")
    print(f"{'library':<12}{'ms / chain':>26}{'us / op':>26}")
    for k, v in per_round.items():
        print(f"{k:<12}{summary(v, 1e3):>26}{summary(v, 1e6 / 400):>26}")
    base = per_round["paddle_hl"]
    for k in ("torch", "paddle"):
        if k in per_round:
            ratios = [a / b for a, b in zip(base, per_round[k])]
            ratio = statistics.median(base) / statistics.median(per_round[k])
            print(f"paddle_hl / {k}: {ratio:.2f}x time"
                  f" (per-round ratios {min(ratios):.2f}-{max(ratios):.2f})")


if __name__ == "__main__":
    main()
