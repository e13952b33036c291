"""Model-zoo inference speed: ResNet-50 and MobileNetV2 in eval mode on 224x224 images, batch 8,
side by side with PyTorch CPU and Paddle 2.6.2 (when installed).

The PyTorch networks are built here with the same architecture and module names as Paddle's
zoo and receive paddle_hl's weights, so all libraries run the same numbers; the script checks
that their outputs agree.

The libraries are timed by interleaved blocks in long-lived workers (``_blocks.py``): per model
the median of the per-block ratios to PyTorch with their range, the wall-clock and CPU time per
pass and peak memory, for paddle_hl with numba and without (``paddle_hl-numpy``), and the
self-check row (a second paddle_hl worker against the first: 1.0x). A roofline line per model
gives the pass's GEMM floor at NumPy's SGEMM speed.

Run: python benchmarks/vision_inference.py [--quick] [--batch 8] [--models resnet50,...]
      [--libs ...] [--threads N] [--json F]
"""

from __future__ import annotations

import pathlib
import sys

# run from a checkout without installing: python benchmarks/<name>.py
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import argparse
import glob
import json
import os
import statistics
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


def build(lib, workload):
    """``workload`` is ``MODEL@DATA``: the model's forward pass in eval mode without gradients
    on the weights and input saved in the ``DATA`` npz; the first output is saved beside it
    (``DATA.<lib>.npy``) for the cross-library check."""
    from _blocks import import_library

    name, data_path = workload.split("@", 1)
    mod = import_library(lib)
    data = np.load(data_path)
    x = data["__input__"]
    state = {k: data[k] for k in data.files if k != "__input__"}
    if lib == "torch":
        twin = {"resnet50": _torch_resnet50, "mobilenet_v2": _torch_mobilenet_v2}[name]()
        model = _load_into_torch(twin, state)
        t_x = mod.from_numpy(x)

        def run():
            with mod.inference_mode():
                return model(t_x)
    else:
        model = getattr(mod.vision.models, name)()
        model.set_state_dict({k: mod.to_tensor(v) for k, v in state.items()})
        model.eval()
        lib_x = mod.to_tensor(x)

        def run():
            with mod.no_grad():
                return model(lib_x)

    tag = lib + ("-numpy" if os.environ.get("PADDLE_HL_NUMBA") == "0" else "")
    np.save(f"{data_path}.{tag}.npy", run().numpy())
    return run


def _check_outputs(name, data_path):
    """Every library's output against paddle_hl's (relative to its largest value)."""
    ref = np.load(f"{data_path}.paddle_hl.npy")
    for path in sorted(glob.glob(f"{data_path}.*.npy")):
        out = np.load(path)
        err = float(np.abs(out - ref).max() / (np.abs(ref).max() + 1e-12))
        if err > 1e-3:
            raise AssertionError(f"{name}: {path} differs from paddle_hl's output "
                                 f"(rel {err:.2e})")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--models", default="resnet50,mobilenet_v2")
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    import _blocks

    _blocks.add_arguments(ap, blocks=11, block_s=1.0, quick_blocks=5)
    args = ap.parse_args(argv)
    if args.serve:
        _blocks.serve(build)
        return
    from _roofline import gemm_floor, gemm_plan
    from _roofline import line as roofline_line
    from paddle_hl.vision import models

    import paddle_hl

    libs = _blocks.libraries(args)
    results, roof = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            x = np.random.default_rng(0).standard_normal((args.batch, 3, 224, 224)).astype(
                np.float32)
            hl_model = getattr(models, name)()
            state = _randomize_bn(hl_model)
            hl_model.eval()
            data_path = os.path.join(tmp, f"{name}.npz")
            np.savez(data_path, __input__=x, **state)
            r = _blocks.run_workload(
                __file__, f"{name}@{data_path}", libs, blocks=args.blocks,
                block_s=args.block_s, pause_s=args.pause, threads=args.threads,
                self_check=not args.no_self_check,
                log=lambda m: print(m, file=sys.stderr, flush=True))
            r["workload"] = name
            _check_outputs(name, data_path)
            results.append(r)
            gflop, gemm_s = gemm_floor(gemm_plan(paddle_hl, hl_model, paddle_hl.to_tensor(x),
                                                 train=False))
            for lib in ("paddle_hl", "paddle_hl-numpy"):
                if lib in r["ms"]:
                    roof.append(roofline_line(f"{name} ({lib})", statistics.median(r["ms"][lib]),
                                              gflop, gemm_s).replace("step", "pass"))
    env = _blocks.environment()
    print(f"eval-mode inference, batch {args.batch}, 3x224x224, {args.blocks} interleaved blocks "
          f"of {args.block_s} s per library; threads: {args.threads or 'default'}; "
          f"OPENBLAS_CORETYPE {env['OPENBLAS_CORETYPE']}, OPENBLAS_L2_SIZE "
          f"{env['OPENBLAS_L2_SIZE']}")
    print("\n".join(_blocks.table(results, unit="ms per pass")))
    print("roofline (one forward pass):")
    for text in roof:
        print("  " + text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"benchmark": "vision_inference", "args": vars(args), "environment": env,
                       "results": results, "roofline": roof}, f, indent=1)


if __name__ == "__main__":
    main()
