"""paddle_hl on an NVIDIA GPU (CuPy) side by side with PyTorch CUDA, in one run.

Cases (each library runs each case in its own process, so neither holds the other's memory):

- ``resnet50``: one ResNet-50 training step (forward, backward, Momentum step), batch 64,
  3x224x224, 1000 classes, float32.
- ``resnet50_amp``: the same step under AMP O1 (float16 autocast with a dynamic loss scaler:
  ``paddle.amp.auto_cast`` + ``GradScaler`` / ``torch.autocast`` + ``torch.amp.GradScaler``).
- ``resnet50_bf16``: the same step under AMP O1 in bfloat16 (no loss scaling, in either
  library: bfloat16 has float32's range).
- ``resnet50_o2``: the same step under AMP O2 (``paddle.amp.decorate`` to float16 parameters
  with float32 master weights). PyTorch has no O2 level: its column is the O1 step again.
- ``encoder``: one Transformer encoder layer (d_model 768, 12 heads, feed-forward 3072,
  dropout 0), batch 32, length 512, forward and backward.
- ``overhead``: 200 tiny ops (``b = b * 1.0001 + 0.0001`` 100 times on an 8x8 float32 tensor)
  forward and backward: the Python and launch cost per op, in microseconds.

For each paddle_hl case one more step is profiled: the CUDA kernels it launched and the share
of their time spent in GEMMs and convolutions (from CUPTI through ``torch.profiler``, which
sees every kernel of the process, CuPy's included; '-' without PyTorch), and the host
synchronisations CuPy detected (each wait of the host for the device: a value read back, a
size learnt from the device).

Times are medians of ``--steps`` steps after ``--warmup`` steps (the first steps compile
CuPy's kernels; they are cached on disk for later runs), with the device synchronised around
each step. Peak GPU memory is measured in one extra step: for paddle_hl the bytes in use in
CuPy's memory pool, tracked at every allocation; for PyTorch ``torch.cuda.max_memory_allocated``.

Run: python benchmarks/gpu.py [--cases resnet50,resnet50_amp,encoder,overhead] [--steps 10]
      [--warmup 3] [--batch 64] [--libs paddle_hl,torch]

It needs CuPy and a CUDA GPU (``pip install 'paddle_hl[gpu]'``) and exits with a message saying
what is missing otherwise; PyTorch with CUDA is optional (its columns show '-' without it).
"""

from __future__ import annotations

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
# run from a checkout without installing: python benchmarks/gpu.py
sys.path.insert(0, str(ROOT))

import argparse  # noqa: E402
import collections  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

CASES = ("resnet50", "resnet50_amp", "resnet50_bf16", "resnet50_o2", "encoder", "overhead")


# --------------------------------------------------------------------------- availability
def gpu_missing():
    """Why paddle_hl cannot run on a GPU here, or None when it can."""
    from paddle_hl import backend

    if backend.cupy_module() is None:
        return backend.cupy_error()
    return None


def torch_cuda_missing():
    """Why the PyTorch columns cannot be measured, or None."""
    try:
        import torch
    except ImportError:
        return "PyTorch is not installed"
    if not torch.cuda.is_available():
        return f"PyTorch {torch.__version__} has no CUDA device here"
    return None


# --------------------------------------------------------------------------- paddle_hl cases
def _hl_sync():
    from paddle_hl import backend

    backend.cupy_module().cuda.Device().synchronize()


def _hl_case(case, batch):
    import paddle_hl as paddle

    paddle.set_device("gpu")
    rng = np.random.default_rng(0)
    if case.startswith("resnet50"):
        net = paddle.vision.models.resnet50(num_classes=1000)
        opt = paddle.optimizer.Momentum(learning_rate=0.01, momentum=0.9,
                                        parameters=net.parameters())
        loss_fn = paddle.nn.CrossEntropyLoss()
        x = paddle.to_tensor(rng.standard_normal((batch, 3, 224, 224)).astype("float32"))
        y = paddle.to_tensor(rng.integers(0, 1000, (batch,)).astype("int64"))
        if case == "resnet50":
            def step():
                loss = loss_fn(net(x), y)
                loss.backward()
                opt.step()
                opt.clear_grad()
        elif case == "resnet50_bf16":
            def step():
                with paddle.amp.auto_cast(level="O1", dtype="bfloat16"):
                    loss = loss_fn(net(x), y)
                loss.backward()
                opt.step()
                opt.clear_grad()
        else:
            level = "O2" if case == "resnet50_o2" else "O1"
            if level == "O2":
                net, opt = paddle.amp.decorate(models=net, optimizers=opt, level="O2")
            scaler = paddle.amp.GradScaler(init_loss_scaling=1024.0)

            def step():
                with paddle.amp.auto_cast(level=level, dtype="float16"):
                    loss = loss_fn(net(x), y)
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
                opt.clear_grad()
        return step
    if case == "encoder":
        layer = paddle.nn.TransformerEncoderLayer(768, 12, 3072, dropout=0.0)
        x = paddle.to_tensor(rng.standard_normal((batch, 512, 768)).astype("float32"),
                             stop_gradient=False)

        def step():
            layer(x).mean().backward()
            layer.clear_gradients()
            x.clear_grad()
        return step
    a = paddle.to_tensor(rng.standard_normal((8, 8)).astype("float32"), stop_gradient=False)

    def step():
        b = a
        for _ in range(100):
            b = b * 1.0001 + 0.0001
        b.sum().backward()
        a.clear_grad()
    return step


def _hl_peak(step):
    """Peak bytes in use in CuPy's pool during one step, tracked at every allocation."""
    from paddle_hl import backend

    cp = backend.cupy_module()
    pool = cp.get_default_memory_pool()
    peak = [int(pool.used_bytes())]

    def alloc(size):
        mem = pool.malloc(size)
        used = pool.used_bytes()
        if used > peak[0]:
            peak[0] = used
        return mem

    cp.cuda.set_allocator(alloc)
    try:
        step()
        _hl_sync()
    finally:
        cp.cuda.set_allocator(pool.malloc)
    return peak[0]


_GEMM_WORDS = ("gemm", "conv", "cudnn", "cutlass", "xmma", "implicit_convolve", "wgrad",
               "dgrad", "fprop", "sm90_", "sm80_")


def _hl_profile(step):
    """One more step, profiled: ``{"kernels", "gemm_share", "syncs", "sync_sites"}``."""
    from paddle_hl import backend

    out = {"kernels": None, "gemm_share": None, "syncs": None, "sync_sites": []}
    # the host waits CuPy declares (a value read back, an output size learnt from the device)
    try:
        import traceback

        from cupy._core import syncdetect

        count = [0]
        sites = collections.Counter()
        orig = syncdetect._is_allowed

        def counting():
            count[0] += 1
            frames = [f for f in traceback.extract_stack()[:-3] if "paddle_hl" in f.filename]
            if frames:
                f = frames[-1]
                sites[f"{f.filename.rsplit('paddle_hl/', 1)[-1]}:{f.lineno}"] += 1
            return True

        syncdetect._is_allowed = counting
        try:
            step()
            _hl_sync()
        finally:
            syncdetect._is_allowed = orig
        out["syncs"] = count[0]
        out["sync_sites"] = [f"{k} x{v}" for k, v in sites.most_common(6)]
    except Exception as e:  # noqa: BLE001  (a CuPy without syncdetect: report, go on)
        out["sync_sites"] = [f"not measured ({type(e).__name__}: {e})"]
    # every kernel of the process, CuPy's included, through CUPTI
    try:
        import torch
        from torch.profiler import ProfilerActivity, profile

        if not torch.cuda.is_available():
            return out
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            step()
            _hl_sync()
            torch.cuda.synchronize()
        kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
                   and "memcpy" not in e.name.lower() and "memset" not in e.name.lower()]
        total = sum(e.device_time for e in kernels) or 1.0
        gemm = sum(e.device_time for e in kernels
                   if any(w in e.name.lower() for w in _GEMM_WORDS))
        out["kernels"] = len(kernels)
        out["gemm_share"] = gemm / total
    except Exception as e:  # noqa: BLE001
        out["sync_sites"].append(f"kernels not counted ({type(e).__name__}: {e})")
    backend.cupy_module()  # (the GPU stays the device of later steps)
    return out


# --------------------------------------------------------------------------- PyTorch cases
def _torch_resnet50(torch):
    """ResNet-50 (v1.5: the stride on the 3x3 convolution, as Paddle's) in plain torch.nn,
    so the benchmark does not need torchvision."""
    nn = torch.nn

    class Bottleneck(nn.Module):
        def __init__(self, cin, width, stride):
            super().__init__()
            cout = width * 4
            self.body = nn.Sequential(
                nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
                nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width),
                nn.ReLU(), nn.Conv2d(width, cout, 1, bias=False), nn.BatchNorm2d(cout))
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                          nn.BatchNorm2d(cout))

        def forward(self, x):
            return torch.relu(self.body(x) + (x if self.down is None else self.down(x)))

    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
              nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for i in range(blocks):
            layers.append(Bottleneck(cin, width, stride if i == 0 else 1))
            cin = width * 4
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2048, 1000)]
    return nn.Sequential(*layers)


def _torch_step(case, batch):
    import torch

    dev = torch.device("cuda")
    rng = np.random.default_rng(0)
    if case.startswith("resnet50"):
        net = _torch_resnet50(torch).to(dev)
        opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
        loss_fn = torch.nn.CrossEntropyLoss()
        x = torch.from_numpy(rng.standard_normal((batch, 3, 224, 224)).astype("float32")).to(dev)
        y = torch.from_numpy(rng.integers(0, 1000, (batch,)).astype("int64")).to(dev)
        if case == "resnet50":
            def step():
                loss = loss_fn(net(x), y)
                loss.backward()
                opt.step()
                opt.zero_grad()
        elif case == "resnet50_bf16":
            def step():
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = loss_fn(net(x), y)
                loss.backward()
                opt.step()
                opt.zero_grad()
        else:
            scaler = torch.amp.GradScaler("cuda", init_scale=1024.0)

            def step():
                with torch.autocast("cuda", dtype=torch.float16):
                    loss = loss_fn(net(x), y)
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
                opt.zero_grad()
        return step
    if case == "encoder":
        layer = torch.nn.TransformerEncoderLayer(768, 12, 3072, dropout=0.0,
                                                 batch_first=True).to(dev)
        x = torch.from_numpy(rng.standard_normal((batch, 512, 768)).astype("float32")).to(dev)
        x.requires_grad_(True)

        def step():
            layer(x).mean().backward()
            layer.zero_grad()
            x.grad = None
        return step
    a = torch.from_numpy(rng.standard_normal((8, 8)).astype("float32")).to(dev)
    a.requires_grad_(True)

    def step():
        b = a
        for _ in range(100):
            b = b * 1.0001 + 0.0001
        b.sum().backward()
        a.grad = None
    return step


# --------------------------------------------------------------------------- workers
def _worker(lib, case, steps, warmup, batch):
    if lib == "torch":
        import torch

        step = _torch_step(case, batch)

        def sync():
            torch.cuda.synchronize()
    else:
        step = _hl_case(case, batch)
        sync = _hl_sync
    for _ in range(warmup):
        step()
    sync()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        sync()
        times.append(time.perf_counter() - t0)
    if lib == "torch":
        torch.cuda.reset_peak_memory_stats()
        step()
        sync()
        peak = int(torch.cuda.max_memory_allocated())
        prof = {}
    else:
        peak = _hl_peak(step)
        prof = _hl_profile(step)
    print(json.dumps({"ms": statistics.median(times) * 1e3, "min_ms": min(times) * 1e3,
                      "peak_mb": peak / 2**20, **prof}))


def _device_line():
    from paddle_hl import backend

    cp = backend.cupy_module()
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    line = f"device: {name}; CuPy {cp.__version__}, CUDA runtime {backend.cuda_runtime_version()}"
    why = torch_cuda_missing()
    if why is None:
        import torch

        line += f"; PyTorch {torch.__version__} (CUDA {torch.version.cuda})"
    return line, why


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--batch", type=int, default=0,
                    help="batch size (default: 64 for ResNet-50, 32 for the encoder)")
    ap.add_argument("--libs", default="paddle_hl,torch")
    ap.add_argument("--log-dir", default="",
                    help="write each worker's stderr to LOG_DIR/LIB-CASE.log")
    ap.add_argument("--worker", nargs=2, metavar=("LIB", "CASE"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    cases = [c for c in args.cases.split(",") if c]
    bad = [c for c in cases if c not in CASES]
    if bad:
        ap.error(f"unknown case(s) {bad}; choose from {list(CASES)}")

    def batch_of(case):
        return args.batch or {"encoder": 32}.get(case, 64)

    if args.worker:
        lib, case = args.worker
        _worker(lib, case, args.steps, args.warmup, batch_of(case))
        return 0
    why = gpu_missing()
    if why is not None:
        print(f"benchmarks/gpu.py needs CuPy and a CUDA GPU: {why}.\n"
              "Install the GPU extra on a machine with an NVIDIA driver: "
              "pip install 'paddle_hl[gpu]'", file=sys.stderr)
        return 2
    line, torch_why = _device_line()
    print(line)
    libs = [lib for lib in args.libs.split(",") if lib]
    if torch_why is not None and "torch" in libs:
        print(f"PyTorch columns skipped: {torch_why}")
        libs.remove("torch")
    rows = []
    for case in cases:
        res = {}
        for lib in libs:
            r = subprocess.run([sys.executable, __file__, "--steps", str(args.steps),
                                "--warmup", str(args.warmup), "--batch", str(batch_of(case)),
                                "--worker", lib, case], capture_output=True, text=True)
            if args.log_dir:
                log = pathlib.Path(args.log_dir)
                log.mkdir(parents=True, exist_ok=True)
                (log / f"{lib}-{case}.log").write_text(r.stderr)
            out = r.stdout.strip().splitlines()
            try:
                res[lib] = json.loads(out[-1])
            except (IndexError, json.JSONDecodeError):
                res[lib] = None
                err = r.stderr.strip().splitlines()[-1:] or ["no output"]
                print(f"{lib}/{case} did not run: {err[0]}")
        rows.append((case, res))
    print(f"{'case':<14}{'batch':>6}{'paddle_hl':>12}{'torch':>10}{'hl/torch':>10}"
          f"{'peak MB hl':>12}{'peak MB torch':>15}{'mem hl/torch':>14}")
    for case, res in rows:
        hl, th = res.get("paddle_hl"), res.get("torch")
        unit = "us/op" if case == "overhead" else "ms"
        scale = 1e3 / 200 if case == "overhead" else 1.0

        def t(r, unit=unit, scale=scale):
            return f"{r['ms'] * scale:.1f}{unit}" if r else "-"

        ratio = f"{hl['ms'] / th['ms']:.2f}x" if hl and th else "-"
        mem = f"{hl['peak_mb'] / th['peak_mb']:.2f}x" if hl and th and th["peak_mb"] else "-"
        peak_hl = f"{hl['peak_mb']:.0f}" if hl else "-"
        peak_th = f"{th['peak_mb']:.0f}" if th else "-"
        batch = batch_of(case) if case != "overhead" else 1
        print(f"{case:<14}{batch:>6}{t(hl):>12}{t(th):>10}{ratio:>10}{peak_hl:>12}"
              f"{peak_th:>15}{mem:>14}")
    print("\nwhere paddle_hl's step goes (one profiled step per case):")
    print(f"{'case':<14}{'kernels':>9}{'GEMM/conv share':>17}{'host syncs':>12}  sync sites")
    for case, res in rows:
        hl = res.get("paddle_hl") or {}
        k = hl.get("kernels")
        share = hl.get("gemm_share")
        syncs = hl.get("syncs")
        print(f"{case:<14}{'-' if k is None else k:>9}"
              f"{'-' if share is None else f'{share:.0%}':>17}"
              f"{'-' if syncs is None else syncs:>12}  {'; '.join(hl.get('sync_sites', []))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
