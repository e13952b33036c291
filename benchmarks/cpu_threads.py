"""What paddle_hl's CPU thread pool gains per kernel: each pooled kernel timed with the pool off
(1 thread) and on (``--threads``, default: the CPUs this process may use), interleaved over
``--rounds``, median ms and the speedup. BLAS is limited to one thread so that only the pool's
work is compared.

Kernels (shapes of a ResNet-18 CIFAR step at batch 32 and MobileNetV2 at batch 16, 64x64):
the batch-innermost im2col copy and its col2im, batch norm forward + backward (training), the
depthwise convolution forward + both gradients, and one Adam step over ResNet-18-sized
parameters.

Run: python benchmarks/cpu_threads.py [--threads N] [--rounds 15]

Wall-clock speedups from threads are only meaningful on an otherwise idle machine: the script
prints the load average before and after.
"""

from __future__ import annotations

import os
import pathlib
import sys

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
# run from a checkout without installing: python benchmarks/<name>.py
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import argparse  # noqa: E402  (after the thread settings above: BLAS reads them on load)
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402


def _kernels():
    import paddle_hl as paddle
    import paddle_hl.nn.functional as F
    from paddle_hl.backend import windows

    rng = np.random.default_rng(0)
    ks = {}

    x = rng.standard_normal((32, 128, 16, 16)).astype(np.float32)
    pads = ((1, 1), (1, 1))
    ks["im2col_nin 32x128x16x16 k3"] = lambda: windows.im2col_nin(
        x, (3, 3), (1, 1), (1, 1), pads, (16, 16))
    cols = windows.im2col_nin(x, (3, 3), (1, 1), (1, 1), pads, (16, 16))
    ks["col2im_nin 32x128x16x16 k3"] = lambda: windows.col2im_nin(
        cols, (32, 128, 18, 18), (3, 3), (1, 1), (1, 1), (16, 16))

    bn = paddle.nn.BatchNorm2D(96)
    xb = paddle.to_tensor(rng.standard_normal((16, 96, 32, 32)).astype(np.float32),
                          stop_gradient=False)
    gb = paddle.to_tensor(rng.standard_normal((16, 96, 32, 32)).astype(np.float32))
    ks["batch_norm fwd+bwd 16x96x32x32"] = lambda: bn(xb).backward(gb)

    xd = paddle.to_tensor(rng.standard_normal((16, 144, 16, 16)).astype(np.float32),
                          stop_gradient=False)
    wd = paddle.to_tensor(rng.standard_normal((144, 1, 3, 3)).astype(np.float32),
                          stop_gradient=False)
    ks["depthwise fwd+bwd 16x144x16x16"] = lambda: F.conv2d(
        xd, wd, padding=1, groups=144).sum().backward()

    params = [paddle.create_parameter(list(s), "float32") for s in
              [(512, 512, 3, 3)] * 3 + [(256, 256, 3, 3)] * 3 + [(128, 128, 3, 3)] * 3]
    for p in params:
        p.grad = paddle.to_tensor(rng.standard_normal(p.shape).astype(np.float32))
    opt = paddle.optimizer.Adam(1e-3, parameters=params)
    ks["Adam step 9.7M params"] = opt.step
    return ks


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--threads", type=int, default=0, help="pool size to compare (0: CPUs)")
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args(argv)
    from paddle_hl.backend import _threads

    n = args.threads or _threads.num_threads()
    print(f"load average before: {os.getloadavg()[0]:.2f}; pool of {n} vs 1 thread "
          f"(BLAS 1 thread), median of {args.rounds} interleaved rounds")
    kernels = _kernels()
    print(f"{'kernel':<34}{'1 thread ms':>13}{f'{n} threads ms':>15}{'speedup':>9}")
    for name, fn in kernels.items():
        times = {1: [], n: []}
        for k in times:
            _threads.set_num_threads(k)
            fn()  # warm-up
        for _ in range(args.rounds):
            for k in times:
                _threads.set_num_threads(k)
                t0 = time.perf_counter()
                fn()
                times[k].append(time.perf_counter() - t0)
        one, many = statistics.median(times[1]), statistics.median(times[n])
        print(f"{name:<34}{one * 1e3:>13.2f}{many * 1e3:>15.2f}{one / many:>8.2f}x")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
