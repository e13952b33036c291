"""Model-zoo inference speed: ResNet-50 and MobileNetV2 in eval mode on 224x224 images, batch 8,
in images per second, side by side with PyTorch CPU and Paddle 2.6.2 (when installed).

The PyTorch networks are built here with the same architecture and module names as Paddle's
zoo and receive paddle_hl's weights, so all libraries run the same numbers; the script checks
that their outputs agree before timing.

Every library runs in its own process, a fresh one per round, and the rounds are interleaved;
each process times ``PASSES`` forward passes after two warm-up passes. Next to the wall-clock
rates, each library's CPU time per forward pass (``time.process_time``, all its threads) is
printed: on a machine shared with other processes it is the steadier number.

Run: python benchmarks/vision_inference.py [--batch 8] [--repeat 5] [--models resnet50,...]
      [--threads N]

``--threads N`` limits every library to N threads: BLAS/OpenMP, torch's intra-op pool and
paddle_hl's CPU thread pool (``PADDLE_HL_NUM_THREADS``); the script re-runs itself with those
settings in its environment. ``--threads 1`` compares single-core work.
"""

from __future__ import annotations

import pathlib
import sys

# run from a checkout without installing: python benchmarks/<name>.py
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import tempfile

import numpy as np

# --------------------------------------------------------------------------- torch twins


def _torch_resnet50():
    """ResNet-50 in torch with Paddle's module names (conv1, bn1, layerN.i.convK/bnK,
    downsample.0/1, fc)."""
    from torch import nn

    class Bottleneck(nn.Module):
        def __init__(self, cin, planes, stride):
            super().__init__()
            out = planes * 4
            self.conv1 = nn.Conv2d(cin, planes, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.conv3 = nn.Conv2d(planes, out, 1, bias=False)
            self.bn3 = nn.BatchNorm2d(out)
            self.relu = nn.ReLU()
            self.downsample = None
            if stride != 1 or cin != out:
                self.downsample = nn.Sequential(nn.Conv2d(cin, out, 1, stride, bias=False),
                                                nn.BatchNorm2d(out))

        def forward(self, x):
            idt = x if self.downsample is None else self.downsample(x)
            y = self.relu(self.bn1(self.conv1(x)))
            y = self.relu(self.bn2(self.conv2(y)))
            return self.relu(self.bn3(self.conv3(y)) + idt)

    class ResNet50(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU()
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            cin = 64
            for i, (planes, n, stride) in enumerate(((64, 3, 1), (128, 4, 2), (256, 6, 2),
                                                     (512, 3, 2)), start=1):
                blocks = []
                for j in range(n):
                    blocks.append(Bottleneck(cin, planes, stride if j == 0 else 1))
                    cin = planes * 4
                setattr(self, f"layer{i}", nn.Sequential(*blocks))
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(2048, 1000)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(self.avgpool(x).flatten(1))

    return ResNet50()


def _torch_mobilenet_v2():
    """MobileNetV2 (scale 1.0) in torch with Paddle's module names (features.i.conv.j...)."""
    from torch import nn

    def cna(cin, cout, k=3, stride=1, groups=1):
        return nn.Sequential(nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups,
                                       bias=False),
                             nn.BatchNorm2d(cout), nn.ReLU6())

    class InvertedResidual(nn.Module):
        def __init__(self, cin, cout, stride, t):
            super().__init__()
            hidden = int(round(cin * t))
            self.use_res = stride == 1 and cin == cout
            layers = [cna(cin, hidden, 1)] if t != 1 else []
            layers += [cna(hidden, hidden, 3, stride, hidden),
                       nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout)]
            self.conv = nn.Sequential(*layers)

        def forward(self, x):
            return x + self.conv(x) if self.use_res else self.conv(x)

    class MobileNetV2(nn.Module):
        def __init__(self):
            super().__init__()
            feats = [cna(3, 32, 3, 2)]
            cin = 32
            for t, c, n, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                               (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)):
                for i in range(n):
                    feats.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                    cin = c
            feats.append(cna(cin, 1280, 1))
            self.features = nn.Sequential(*feats)
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, 1000))

        def forward(self, x):
            return self.classifier(self.pool(self.features(x)).flatten(1))

    return MobileNetV2()


def _load_into_torch(torch_model, hl_state):
    """Copy a paddle_hl state_dict into the torch twin (BN stat names, Linear transposed)."""
    import torch

    target = torch_model.state_dict()
    new = {}
    for k, v in hl_state.items():
        a = v.numpy() if hasattr(v, "numpy") else np.asarray(v)
        tk = k.replace("._mean", ".running_mean").replace("._variance", ".running_var")
        if tk not in target:
            raise KeyError(f"torch twin has no parameter for {k}")
        if a.ndim == 2:  # Linear: Paddle stores [in, out], torch [out, in]
            a = a.T
        new[tk] = torch.from_numpy(np.ascontiguousarray(a))
    missing = [k for k in target if k not in new and not k.endswith("num_batches_tracked")]
    if missing:
        raise KeyError(f"torch twin parameters left unset: {missing[:5]}")
    torch_model.load_state_dict(new, strict=False)
    return torch_model.eval()


# --------------------------------------------------------------------------- timing


def _randomize_bn(hl_model, seed=0):
    """Non-trivial BN statistics so the cross-library check means something."""
    rng = np.random.default_rng(seed)
    state = {k: v.numpy() for k, v in hl_model.state_dict().items()}
    for k, a in state.items():
        if k.endswith("_mean") or k.endswith(".bias") and a.ndim == 1:
            state[k] = rng.normal(0, 0.1, a.shape).astype(a.dtype)
        elif k.endswith("_variance"):
            state[k] = rng.uniform(0.5, 1.5, a.shape).astype(a.dtype)
    hl_model.set_state_dict(state)
    return state


PASSES = 3  # timed passes per worker process (after two warm-up passes); their median counts


def _worker(lib_name, name, data_path, out_path, threads):
    """One library's forward passes in this process: loads the weights and input that the
    parent saved, prints one JSON line (median ms and CPU ms of the timed passes) and saves the
    output for the cross-library check."""
    data = np.load(data_path)
    x = data["__input__"]
    state = {k: data[k] for k in data.files if k != "__input__"}
    if lib_name == "torch":
        import torch

        if threads:
            torch.set_num_threads(threads)
        twin = {"resnet50": _torch_resnet50, "mobilenet_v2": _torch_mobilenet_v2}[name]()
        model = _load_into_torch(twin, state)
        t_x = torch.from_numpy(x)

        def run():
            with torch.inference_mode():
                return model(t_x)
    else:
        if lib_name == "paddle":
            import zlib  # noqa: F401  (paddle 2.6.2 under NumPy 2 needs these first)

            import numpy.random  # noqa: F401
            import paddle as lib
        else:
            import paddle_hl as lib
        model = getattr(lib.vision.models, name)()
        model.set_state_dict({k: lib.to_tensor(v) for k, v in state.items()})
        model.eval()
        lib_x = lib.to_tensor(x)

        def run():
            with lib.no_grad():
                return model(lib_x)

    out = run().numpy()
    run()
    from _timing import timed

    wall, cpu = timed(run, PASSES)
    np.save(out_path, out)
    print(json.dumps({"ms": statistics.median(wall) * 1e3,
                      "cpu_ms": statistics.median(cpu) * 1e3}))


def bench(name, batch, repeat, threads=0):
    """images/s of each library per round and paddle_hl's GEMM floor.

    Every library runs in its own process, a fresh one per round, the rounds interleaved:
    libraries in one process share the allocator and each other's idle thread pools, which
    slowed whichever ran after another. All of them run the weights and input saved here,
    and their outputs are checked against paddle_hl's."""
    from paddle_hl.vision import models

    import paddle_hl

    x = np.random.default_rng(0).standard_normal((batch, 3, 224, 224)).astype(np.float32)
    hl_model = getattr(models, name)()
    state = _randomize_bn(hl_model)
    hl_model.eval()
    libs = ["paddle_hl"]
    for lib, mod in (("torch", "torch"), ("paddle", "paddle")):
        if importlib.util.find_spec(mod) is not None:
            libs.append(lib)
    rates = {lib: [] for lib in libs}
    cpu = {lib: [] for lib in libs}
    with tempfile.TemporaryDirectory() as tmp:
        data_path = os.path.join(tmp, "data.npz")
        np.savez(data_path, __input__=x, **state)
        outputs = {}
        for rnd in range(repeat):
            for lib in libs:
                out_path = os.path.join(tmp, f"{lib}.npy")
                cmd = [sys.executable, __file__, "--worker", lib, name, data_path, out_path,
                       "--threads", str(threads)]
                r = subprocess.run(cmd, capture_output=True, text=True)
                try:
                    res = json.loads(r.stdout.strip().splitlines()[-1])
                except (IndexError, json.JSONDecodeError):
                    raise RuntimeError(f"{lib}/{name} did not run: {r.stderr[-2000:]}") from None
                rates[lib].append(batch / (res["ms"] / 1e3))
                cpu[lib].append(res["cpu_ms"])
                if rnd == 0:
                    outputs[lib] = np.load(out_path)
    ref = outputs["paddle_hl"]
    for lib, out in outputs.items():
        err = float(np.abs(out - ref).max() / (np.abs(ref).max() + 1e-12))
        if err > 1e-3:
            raise AssertionError(f"{name}: {lib} output differs from paddle_hl (rel {err:.2e})")
    from _roofline import gemm_floor, gemm_plan

    floor = gemm_floor(gemm_plan(paddle_hl, hl_model, paddle_hl.to_tensor(x), train=False))
    return rates, floor, {lib: statistics.median(v) for lib, v in cpu.items()}


def _spread(values):
    return f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--models", default="resnet50,mobilenet_v2")
    ap.add_argument("--threads", type=int, default=0,
                    help="threads per library (BLAS/OpenMP, torch, paddle_hl's pool); 0: default")
    ap.add_argument("--worker", nargs=4, metavar=("LIB", "MODEL", "DATA", "OUT"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        _worker(*args.worker, args.threads)
        return
    if args.threads and os.environ.get("_VISION_INFERENCE_THREADS") != str(args.threads):
        # thread counts of BLAS and OpenMP are read when the libraries load: start again with
        # them in the environment
        env = dict(os.environ, _VISION_INFERENCE_THREADS=str(args.threads),
                   PADDLE_HL_NUM_THREADS=str(args.threads))
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = str(args.threads)
        os.execve(sys.executable, [sys.executable, __file__, *sys.argv[1:]], env)
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    from _roofline import line as roofline_line

    print(f"eval-mode inference, batch {args.batch}, 3x224x224: images/s, median (range) of "
          f"{args.repeat} interleaved rounds (higher is better); time ratios hl/other; threads: "
          f"{args.threads or 'default'}")
    print(f"{'model':<14}{'paddle_hl':>22}{'torch':>22}{'paddle':>22}"
          f"{'time hl/torch':>24}{'time hl/paddle':>24}{'cpu ms hl/torch/paddle':>26}")
    floors = []
    for name in args.models.split(","):
        r, floor, cpu = bench(name, args.batch, args.repeat, args.threads)
        hl = r["paddle_hl"]
        cols = [_spread(r[k]) if k in r else "-" for k in ("paddle_hl", "torch", "paddle")]
        ratios = []
        for k in ("torch", "paddle"):
            if k not in r:
                ratios.append("-")
                continue
            qs = [b / a for a, b in zip(hl, r[k])]  # time ratio = other's rate / ours
            ratios.append(f"{statistics.median(qs):.2f}x ({min(qs):.2f}-{max(qs):.2f})")
        cpus = "/".join(f"{cpu[k]:.0f}" if k in cpu else "-" for k in ("paddle_hl", "torch",
                                                                         "paddle"))
        print(f"{name:<14}{cols[0]:>22}{cols[1]:>22}{cols[2]:>22}{ratios[0]:>24}"
              f"{ratios[1]:>24}{cpus:>26}")
        floors.append((name, args.batch / statistics.median(hl) * 1e3, *floor))
    print("roofline (paddle_hl, one forward pass):")
    for name, ms, gflop, gemm_s in floors:
        print("  " + roofline_line(name, ms, gflop, gemm_s).replace("step", "pass"))


if __name__ == "__main__":
    main()
