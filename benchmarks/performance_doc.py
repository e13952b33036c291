"""Write ``docs/performance.md`` from the benchmarks' own output, so its figures are never typed
by hand: runs ``train_step.py``, ``vision_inference.py`` and ``op_overhead.py`` (each with
``--json``), or renders JSON files they wrote earlier, and writes the tables with the machine,
the versions, the BLAS settings and the load average they were measured under.

Run: python benchmarks/performance_doc.py [--quick] [--out docs/performance.md]
     python benchmarks/performance_doc.py --from train.json infer.json ops.json

For figures comparable with other machines, unset the OpenBLAS core override for every library
alike: ``env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/performance_doc.py``
(the document records whether they were set).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

BENCH = pathlib.Path(__file__).resolve().parent
SCRIPTS = ("train_step", "vision_inference", "op_overhead")
TITLES = {"train_step": "Training step (forward, backward, Adam)",
          "vision_inference": "Inference (eval mode, batch 8, 224x224)",
          "op_overhead": "Per-op overhead (a chain of 400 ops on an 8x8 tensor)"}
UNITS = {"train_step": "ms per step", "vision_inference": "ms per pass",
         "op_overhead": "ms per chain"}


# What a user can set; the figures below it come from the benchmarks' output.
SETTINGS = """## Settings that change speed

- `pip install 'paddle_hl[numba]'` compiles the kernels where NumPy needs many passes over
  memory: batch norm's training forward and backward (with a following ReLU or ReLU6 in the
  zoo's blocks), the 2-D max pool and its gradient, depthwise convolutions, thin first layers
  (computed from the padded input without im2col), im2col and col2im in the batch-innermost
  layout, the Winograd transforms of inference 3x3 convolutions, and the Adam update. The first
  process compiles them and caches them on disk; later
  processes load them in well under a second. Without numba, or with
  `paddle.device.set_numba(False)` (`PADDLE_HL_NUMBA=0`), the NumPy forms run; the two agree to
  float rounding (Adam's bit for bit).
- `paddle.device.set_num_threads(n)` (`PADDLE_HL_NUM_THREADS`): the CPU thread pool that splits
  the large copies and passes (im2col/col2im, batch norm, depthwise convolution, optimizer
  updates) over the batch or channel axis; `1` runs everything inline. Results do not depend on
  it. The default is the CPUs this process may run on.
- `PADDLE_HL_BLAS_THREAD_TIMEOUT`: how long (log2 of CPU cycles, default 18, about 0.1 ms) the
  idle threads of NumPy's OpenBLAS spin after a matrix product before they sleep. OpenBLAS's own
  default keeps every core busy for about 0.1 s after each product, which slows the work that
  follows. `0` leaves OpenBLAS as it is, and so does setting `OPENBLAS_THREAD_TIMEOUT` yourself.
- `PADDLE_HL_MALLOC_TUNING=0` keeps glibc's allocator defaults. By default freed
  activation-sized blocks stay in the process, so the next step does not page-fault them in
  again. PyTorch and Paddle use glibc's defaults; to give every library the same allocator in a
  comparison, set `MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=1073741824`.
- Which algorithm each convolution and pooling layer runs (im2col, the batch-innermost layout,
  direct thin kernels, Winograd for inference 3x3 layers, depthwise forms) is chosen once per
  layer geometry from the thresholds of `paddle_hl/backend/tuning.py`, each with the
  measurement behind it; `paddle.nn.utils.explain(model, x)` lists the choice per layer and the
  profiler's timeline shows it on each convolution and its gradient. A channel-first network
  keeps channels last in memory from its first depthwise layer that runs channels last on
  (`keeps-cl` in the label): its 1x1 layers then run as one GEMM on `[N*L, C]` rows and batch
  norm on the same rows, with no transposing copy between layers. Data that is channels last
  already (`data_format="NHWC"`) runs its depthwise layers channels last at every plane size.
- `PADDLE_HL_FUSE_CONV_BN=0` turns off the fusion chains the zoo's blocks declare: a batch norm
  folded into the convolution before it at inference (eval mode without gradients; refolded
  when weights or statistics change), and a batch norm with its ReLU or ReLU6 in one op in
  training. `paddle.nn.utils.fused(model)` lists a model's chains.
"""


def _load(env):
    return ", ".join(f"{v:.2f}" for v in env["load_avg"])


def _sections(runs, before_is, _blocks, suffix=""):
    lines = []
    for run in runs:
        name = run["benchmark"]
        args = run["args"]
        before = ""
        if args.get("before"):
            before = (" Rows `@before` time an earlier checkout of paddle_hl in the same run "
                      f"(`--before DIR`: {before_is}), with and without numba.")
        lines += ["", f"## {TITLES.get(name, name)}{suffix}", "",
                  f"{args['blocks']} blocks of {args['block_s']} s per library, "
                  f"{args['pause']} s pauses.{before}", ""]
        if suffix:
            lines[-1:-1] = [f"Load average at its start: {_load(run['environment'])}.", ""]
        lines += _blocks.table(run["results"], unit=UNITS.get(name, "ms"))
        if run.get("roofline"):
            lines += ["", "Roofline (the step's GEMMs at NumPy's SGEMM speed on this machine):", ""]
            lines += [f"- {text}" for text in run["roofline"]]
    return lines


def render(runs, command, before_is="an earlier version of the code", loaded=(),
           load_cmd=None) -> str:
    """The document from the benchmarks' JSON ``runs``; ``loaded``: runs of the same benchmarks
    measured while ``load_cmd`` kept the CPUs busy, rendered after them."""
    sys.path.insert(0, str(BENCH))
    import _blocks

    env = runs[0]["environment"]
    lines = ["# Performance", "",
             "Generated by `benchmarks/performance_doc.py` from the benchmarks' output; do not "
             "edit "
             "by hand. Each table compares the libraries by interleaved blocks in long-lived "
             "worker processes (`benchmarks/_blocks.py`): the ratio column is the median of the "
             "per-block ratios of step times to PyTorch's, with their range; below 1 is faster "
             "than PyTorch. `paddle_hl` runs with the numba extra, `paddle_hl-numpy` without it "
             "(what `pip install paddle_hl` gives). The self-check row times a second paddle_hl "
             "worker against the first: it reads 1.0x when the method holds on this host.", "",
             f"Measured {time.strftime('%Y-%m-%d', time.gmtime())} with `{command}` on "
             f"{env.get('cpu', '?')}, {env.get('cpus', '?')} CPUs; Python {env['python']}, "
             f"NumPy {env['numpy']}, PyTorch {env.get('torch', '-')}, Paddle "
             f"{env.get('paddle', '-')}, numba {env.get('numba', '-')}; OPENBLAS_CORETYPE "
             f"{env['OPENBLAS_CORETYPE']}, OPENBLAS_L2_SIZE {env['OPENBLAS_L2_SIZE']}; load "
             f"average at the start {_load(env)}."]
    lines += ["", SETTINGS.rstrip()]
    lines += _sections(runs, before_is, _blocks)
    if loaded:
        lines += ["", "# Under load", "",
                  "The same benchmarks while other processes kept the CPUs busy"
                  + (f" (`{load_cmd}`)" if load_cmd else "") + ": the step times grow and "
                  "spread, the per-block ratios and the self-check row should not."]
        lines += _sections(loaded, before_is, _blocks, suffix=", under load")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(BENCH.parent / "docs" / "performance.md"))
    ap.add_argument("--from", dest="inputs", nargs="+", help="render these JSON files")
    ap.add_argument("--loaded", nargs="+", default=(),
                    help="also render these JSON files, measured under load")
    ap.add_argument("--load-cmd", help="the command that made the load (said in the document)")
    ap.add_argument("--before-is", default="an earlier version of the code",
                    help="what the @before rows' checkout is (said in the document)")
    args = ap.parse_args(argv)
    command = "python benchmarks/performance_doc.py" + (" --quick" if args.quick else "")
    if args.inputs:
        runs = [json.load(open(p)) for p in args.inputs]
    else:
        runs = []
        with tempfile.TemporaryDirectory() as tmp:
            for script in SCRIPTS:
                path = os.path.join(tmp, f"{script}.json")
                cmd = [sys.executable, str(BENCH / f"{script}.py"), "--json", path]
                subprocess.run(cmd + (["--quick"] if args.quick else []), check=True)
                runs.append(json.load(open(path)))
    loaded = [json.load(open(p)) for p in args.loaded]
    text = render(runs, command, args.before_is, loaded, args.load_cmd)
    tmp_out = f"{args.out}.tmp"
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(tmp_out, "w") as f:
        f.write(text)
    os.replace(tmp_out, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
