"""Where a ResNet-50 training step's time goes on an NVIDIA GPU, in float32 and under AMP O1.

Prints CuPy's float32 and float16 GEMM rates on the card (the ceiling the convolutions'
products can reach), then for each precision: the step's wall time, the time the host spent
issuing it, and per op the device time (CUDA events around each kernel and each backward
rule) and the host time, heaviest first. A step whose host time equals its wall time is bound
by Python dispatch; one whose op device times add up to the wall time is bound by the kernels.

Run: python benchmarks/gpu_profile.py [--batch 64] [--top 22]

It needs CuPy and a CUDA GPU (``pip install 'paddle_hl[gpu]'``).
"""

from __future__ import annotations

import argparse
import collections
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import numpy as np  # noqa: E402

import paddle_hl as paddle  # noqa: E402
from paddle_hl import backend  # noqa: E402


def _gemm_rates(cp, sync):
    for dt in ("float32", "float16"):
        a = cp.random.standard_normal((8192, 8192), dtype=cp.float32).astype(dt)
        a @ a
        sync()
        t = time.perf_counter()
        for _ in range(5):
            a @ a
        sync()
        rate = 5 * 2 * 8192 ** 3 / (time.perf_counter() - t) / 1e12
        print(f"CuPy matmul 8192^3 {dt}: {rate:.1f} TFLOP/s")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--top", type=int, default=22, help="ops listed per precision")
    args = ap.parse_args(argv)
    cp = backend.cupy_module()
    if cp is None:
        print(f"benchmarks/gpu_profile.py needs CuPy and a CUDA GPU: {backend.cupy_error()}.",
              file=sys.stderr)
        return 2
    sync = cp.cuda.Device().synchronize
    _gemm_rates(cp, sync)
    paddle.set_device("gpu")
    rng = np.random.default_rng(0)
    net = paddle.vision.models.resnet50(num_classes=1000)
    opt = paddle.optimizer.Momentum(learning_rate=0.01, momentum=0.9,
                                    parameters=net.parameters())
    x = paddle.to_tensor(rng.standard_normal((args.batch, 3, 224, 224)).astype("float32"))
    y = paddle.to_tensor(rng.integers(0, 1000, (args.batch,)))
    loss_fn = paddle.nn.CrossEntropyLoss()
    scaler = paddle.amp.GradScaler(init_loss_scaling=1024.0)

    def step(amp):
        if amp:
            with paddle.amp.auto_cast(level="O1"):
                loss = loss_fn(net(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss = loss_fn(net(x), y)
            loss.backward()
            opt.step()
        opt.clear_grad()

    P = paddle.profiler
    for amp in (False, True):
        for _ in range(2):  # the first steps compile CuPy's kernels
            step(amp)
        sync()
        t = time.perf_counter()
        step(amp)
        host = time.perf_counter() - t
        sync()
        wall = time.perf_counter() - t
        with P.Profiler(targets=[P.ProfilerTarget.CPU, P.ProfilerTarget.GPU],
                        on_trace_ready=lambda p: None) as prof:
            step(amp)
        sync()
        per_op = collections.defaultdict(lambda: [0, 0.0, 0.0])
        for e in prof.profiler_result.events:
            if e.type in ("Kernel", "Operator"):
                row = per_op[e.name]
                ms = (e.end_ns - e.start_ns) / 1e6
                if e.type == "Kernel":
                    row[0] += 1
                    row[1] += ms
                else:
                    row[2] += ms
        dev = sum(r[1] for r in per_op.values())
        hst = sum(r[2] for r in per_op.values())
        pool = cp.get_default_memory_pool().total_bytes() / 2 ** 20
        print(f"\n{'AMP O1' if amp else 'float32'}, batch {args.batch}: wall {wall * 1e3:.1f} ms, "
              f"host {host * 1e3:.1f} ms; ops: device {dev:.1f} ms, host {hst:.1f} ms; "
              f"memory pool {pool:.0f} MB")
        for name, (n, gm, cm) in sorted(per_op.items(), key=lambda kv: -kv[1][1])[:args.top]:
            print(f"  {name:<28} calls {n:>4}  device {gm:8.2f} ms  host {cm:8.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
