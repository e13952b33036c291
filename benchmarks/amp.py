"""Mixed precision step time: ResNet-18 training steps in float32, AMP O1 and AMP O2.

On a GPU (CuPy) this measures the speed-up of float16 (or bfloat16) kernels. On the CPU the
low-precision ops run in NumPy float16/bfloat16, which is for correctness, not speed (NumPy has
no fast half-precision GEMM), so expect O1/O2 to be slower there; the script says so.

Each step: forward under auto_cast, cross-entropy, GradScaler.scale(loss).backward(),
scaler.step(opt), scaler.update(). Reported: median seconds per step and the ratio to float32.

Run: python benchmarks/amp.py [--batch 8] [--size 64] [--steps 5] [--dtype float16]
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


def _sync(paddle):
    if paddle.get_device().startswith("gpu"):
        from paddle_hl import backend

        backend.cupy_module().cuda.Device().synchronize()


def _run(paddle, mode, args):
    paddle.seed(0)
    net = paddle.vision.models.resnet18(num_classes=10)
    opt = paddle.optimizer.Momentum(0.01, parameters=net.parameters())
    if mode == "O2":
        net, opt = paddle.amp.decorate(net, opt, level="O2", dtype=args.dtype)
    amp = {"enable": mode != "fp32", "level": "O1" if mode == "fp32" else mode,
           "dtype": args.dtype}
    scaler = paddle.amp.GradScaler(enable=mode != "fp32", init_loss_scaling=1024.0)
    rng = np.random.default_rng(0)
    x = paddle.to_tensor(rng.standard_normal((args.batch, 3, args.size, args.size),
                                             dtype=np.float32))
    if mode == "O2":
        # the decorated network takes its input in the low-precision dtype
        x = x.astype(args.dtype)
    y = paddle.to_tensor(rng.integers(0, 10, (args.batch, 1)))
    times = []
    for i in range(args.steps + 1):
        t0 = time.perf_counter()
        with paddle.amp.auto_cast(**amp):
            loss = paddle.nn.functional.cross_entropy(net(x), y)
        if mode == "fp32":
            loss.backward()
            opt.step()
        else:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        opt.clear_grad()
        _sync(paddle)
        if i:  # the first step warms up (kernels, caches)
            times.append(time.perf_counter() - t0)
    return statistics.median(times), float(loss.astype("float32").numpy())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--dtype", default="float16", choices=["float16", "bfloat16"])
    ap.add_argument("--device", default=None, help="cpu or gpu (default: gpu when available)")
    args = ap.parse_args(argv)

    import paddle_hl as paddle

    device = args.device or ("gpu" if paddle.is_compiled_with_cuda() else "cpu")
    paddle.set_device(device)
    print(f"ResNet-18 training step, batch {args.batch}, {args.size}x{args.size}, "
          f"AMP dtype {args.dtype}, device {paddle.get_device()}")
    if device == "cpu":
        print("note: on the CPU, float16/bfloat16 run in NumPy for correctness, not speed; "
              "the GPU (CuPy) numbers are the ones that show AMP's speed-up.")
    base = None
    for mode in ("fp32", "O1", "O2"):
        try:
            sec, loss = _run(paddle, mode, args)
        except (TypeError, ValueError) as e:
            # F.conv2d/F.linear refusing mixed dtypes before AMP casts them (see the report)
            print(f"  {mode:>4}: not run: {e}")
            continue
        base = base or sec
        print(f"  {mode:>4}: {sec * 1e3:9.1f} ms/step   x{base / sec:5.2f} vs float32   "
              f"(last loss {loss:.4f})")


if __name__ == "__main__":
    main()
