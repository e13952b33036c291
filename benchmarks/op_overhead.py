"""Per-op Python overhead: 100 chained ``b = b * 1.0001 + 0.0001`` on an 8x8 float32 tensor,
then ``b.sum().backward()``. Timed side by side with PyTorch CPU and Paddle 2.6.2 when installed.

Run: python benchmarks/op_overhead.py [--repeat N]
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


def _time(fn, repeat):
    fn()  # warm up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=200)
    args = ap.parse_args(argv)
    init = np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32)
    results = {}

    import paddle_hl

    results["paddle_hl"] = _time(lambda: _chain(paddle_hl, lambda: paddle_hl.to_tensor(
        init, stop_gradient=False)), args.repeat)
    try:
        import torch

        torch.set_num_threads(1)
        results["torch"] = _time(lambda: _chain(torch, lambda: torch.tensor(
            init, requires_grad=True)), args.repeat)
    except ImportError:
        print("torch not installed: pip install torch==2.13.0")
    try:
        import zlib  # noqa: F401

        import numpy.random  # noqa: F401  (paddle 2.6.2 crashes under NumPy 2 without these first)
        import paddle

        results["paddle"] = _time(lambda: _chain(paddle, lambda: paddle.to_tensor(
            init, stop_gradient=False)), args.repeat)
    except ImportError:
        print("paddle not installed: pip install paddlepaddle==2.6.2")

    print(f"{'library':<12}{'ms / chain':>12}{'us / op':>10}")
    for k, v in results.items():
        print(f"{k:<12}{v * 1e3:>12.3f}{v * 1e6 / 400:>10.2f}")
    base = results["paddle_hl"]
    for k in ("torch", "paddle"):
        if k in results:
            print(f"paddle_hl / {k}: {base / results[k]:.2f}x time")


if __name__ == "__main__":
    main()
