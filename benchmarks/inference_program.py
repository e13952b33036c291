"""Inference programs: a ``.pdmodel`` run by paddle_hl's ``jit.load`` against the same model built
as paddle_hl layers, beside real Paddle Inference on the CPU running the same program.

ResNet-50 and MobileNetV3-Small (scale 1.0) in eval mode on 224x224 images, batch 8. The parent
writes each model once as a Paddle inference model with real Paddle 2.6.2's ``jit.save`` (the
weights are paddle_hl's, batch-norm statistics randomized so that folding them matters); without
Paddle installed it writes the program with paddle_hl's own ``jit.save`` and says so. Then, by
interleaved blocks in long-lived workers (``_blocks.py``):

- ``paddle_hl`` (the reference): the model built from ``paddle_hl.vision.models`` layers with
  the weights set, called under ``no_grad``;
- ``paddle_hl-program``: the program loaded by ``paddle_hl.jit.load``, called under ``no_grad``;
- ``paddle``: real Paddle Inference (``paddle.inference.create_predictor``, CPU, IR optimized)
  on the same program, input copied in and output copied out each pass.

The figure of merit is program/layers per block (issue 32's bound: at most 1.1x); the
self-check row (a second layers worker against the first) says how far this run's ratios can be
trusted on a busy host. The outputs of the three are checked to agree.

Run: python benchmarks/inference_program.py [--quick] [--batch 8]
      [--models resnet50,mobilenet_v3_small] [--blocks N] [--json F]
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
import subprocess
import tempfile

import numpy as np

PROGRAM = "paddle_hl-program"

_WRITE_WITH_PADDLE = """
import sys, zlib, numpy.random  # noqa: E401  (paddle 2.6.2 under NumPy 2 needs these first)
import numpy as np, paddle
name, data, prefix = sys.argv[1:4]
d = np.load(data)
net = getattr(paddle.vision.models, name)()
net.set_state_dict({k: paddle.to_tensor(d[k]) for k in d.files if k != "__input__"})
net.eval()
paddle.jit.save(net, prefix, [paddle.static.InputSpec([None, 3, 224, 224], "float32", "x")])
"""


def _library_env(lib, twin_of="paddle_hl"):
    """The harness's environments, plus the loaded-program worker (paddle_hl with numba)."""

    if lib == PROGRAM:
        return dict(_ORIGINAL_ENV("paddle_hl"), BENCH_PROGRAM="1")
    return _ORIGINAL_ENV(lib, twin_of)


_ORIGINAL_ENV = None


def build(lib, workload):
    """``workload`` is ``MODEL@DATA@PREFIX``: the weights and input in the ``DATA`` npz, the
    inference program at ``PREFIX``; the output is saved beside the data for the check."""
    from _blocks import import_library

    name, data_path, prefix = workload.split("@", 2)
    mod = import_library(lib)
    data = np.load(data_path)
    x = data["__input__"]
    if lib == "paddle":
        cfg = mod.inference.Config(prefix + ".pdmodel", prefix + ".pdiparams")
        cfg.disable_gpu()
        cfg.disable_glog_info()
        cfg.set_cpu_math_library_num_threads(int(os.environ.get("OMP_NUM_THREADS", "0"))
                                             or os.cpu_count())
        pred = mod.inference.create_predictor(cfg)
        h_in = pred.get_input_handle(pred.get_input_names()[0])
        h_out = pred.get_output_handle(pred.get_output_names()[0])

        def run():
            h_in.reshape(list(x.shape))
            h_in.copy_from_cpu(x)
            pred.run()
            return h_out.copy_to_cpu()
        tag = "paddle"
    elif os.environ.get("BENCH_PROGRAM") == "1":
        model = mod.jit.load(prefix)
        lib_x = mod.to_tensor(x)

        def run():
            with mod.no_grad():
                return model(lib_x).numpy()
        tag = "program"
    else:
        model = getattr(mod.vision.models, name)()
        model.set_state_dict({k: mod.to_tensor(data[k]) for k in data.files if k != "__input__"})
        model.eval()
        lib_x = mod.to_tensor(x)

        def run():
            with mod.no_grad():
                return model(lib_x).numpy()
        tag = "layers"
    np.save(f"{data_path}.{tag}.npy", run())
    return run


def _randomized_state(model, seed=0):
    """The model's weights with non-trivial batch-norm statistics and biases."""
    rng = np.random.default_rng(seed)
    state = {k: v.numpy() for k, v in model.state_dict().items()}
    for k, a in state.items():
        if k.endswith("_mean") or (k.endswith(".bias") and a.ndim == 1):
            state[k] = rng.normal(0, 0.1, a.shape).astype(a.dtype)
        elif k.endswith("_variance"):
            state[k] = rng.uniform(0.5, 1.5, a.shape).astype(a.dtype)
    return state


def _check_outputs(name, data_path):
    ref = np.load(f"{data_path}.layers.npy")
    for path in sorted(glob.glob(f"{data_path}.*.npy")):
        err = float(np.abs(np.load(path) - ref).max() / (np.abs(ref).max() + 1e-12))
        if err > 1e-3:
            raise AssertionError(f"{name}: {path} differs from the layers' output (rel {err:.2e})")


def main(argv=None):
    global _ORIGINAL_ENV
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--models", default="resnet50,mobilenet_v3_small")
    ap.add_argument("--blocks", type=int, default=9)
    ap.add_argument("--block-s", type=float, default=1.0)
    ap.add_argument("--pause", type=float, default=0.1)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--no-paddle", action="store_true", help="leave real Paddle Inference out")
    ap.add_argument("--quick", action="store_true", help="4 blocks")
    ap.add_argument("--json", help="also write the results to this file")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    import _blocks

    if args.serve:
        _blocks.serve(build)
        return
    if args.quick:
        args.blocks = 4
    _ORIGINAL_ENV = _blocks.library_env
    _blocks.library_env = _library_env
    from paddle_hl.vision import models

    import paddle_hl

    libs = _blocks.available(["paddle_hl", PROGRAM] + ([] if args.no_paddle else ["paddle"]))
    if "paddle_hl" not in libs:  # no numba: both paddle_hl workers on the NumPy path
        raise SystemExit("paddle_hl's reference worker needs numba here")
    writer = "real Paddle 2.6.2" if "paddle" in libs else "paddle_hl (Paddle not installed)"
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            x = np.random.default_rng(0).standard_normal((args.batch, 3, 224, 224)).astype(
                np.float32)
            hl_model = getattr(models, name)()
            state = _randomized_state(hl_model)
            data_path = os.path.join(tmp, f"{name}.npz")
            np.savez(data_path, __input__=x, **state)
            prefix = os.path.join(tmp, name)
            if "paddle" in libs:
                subprocess.run([sys.executable, "-c", _WRITE_WITH_PADDLE, name, data_path,
                                prefix], check=True, stdout=subprocess.DEVNULL)
            else:
                hl_model.set_state_dict({k: paddle_hl.to_tensor(v) for k, v in state.items()})
                paddle_hl.jit.save(hl_model, prefix, [paddle_hl.static.InputSpec(
                    [None, 3, 224, 224], "float32", "x")])
            r = _blocks.run_workload(
                __file__, f"{name}@{data_path}@{prefix}", libs, blocks=args.blocks,
                block_s=args.block_s, pause_s=args.pause, threads=args.threads,
                ref="paddle_hl", self_check=True,
                log=lambda m: print(m, file=sys.stderr, flush=True))
            r["workload"] = name
            _check_outputs(name, data_path)
            results.append(r)
    env = _blocks.environment()
    print(f"eval-mode inference, batch {args.batch}, 3x224x224, program written by {writer}; "
          f"{args.blocks} interleaved blocks of {args.block_s} s per library; load average "
          f"{', '.join(f'{v:.1f}' for v in env['load_avg'])} on {env['cpus']} CPUs")
    print("\n".join(_blocks.table(results, unit="ms per pass")))
    for r in results:
        import statistics

        for lib in (PROGRAM, "paddle"):
            if lib in r["ratios"]:
                print(f"{r['workload']}: {lib} / paddle_hl layers = "
                      f"{statistics.median(r['ratios'][lib]):.2f}x (blocks "
                      f"{_blocks.spread(r['ratios'][lib])})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"benchmark": "inference_program", "args": vars(args), "environment": env,
                       "writer": writer, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
