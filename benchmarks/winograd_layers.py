"""Winograd F(2x2, 3x3) against the im2col forms, per 3x3 stride-1 layer, for inference.

Layers: ResNet-50's 3x3 stride-1 geometries at batch 8 (224x224 input: 64 channels at 56x56,
128 at 28x28, 256 at 14x14, 512 at 7x7) and ResNet-18's at batch 32 on CIFAR sizes (64 at
32x32 ... 512 at 4x4), all with padding 1. For each layer and each form of the CPU backend
(NumPy alone, and with the numba extra's kernels):

- ``im2col``: the im2col columns and one GEMM (``windows.im2col_forward``), bias added;
- ``nin``: the batch-innermost columns (``windows.conv_forward_nin``; the inference rule
  uses it on stride-1 planes of at most 256 pixels), bias added;
- ``wino``: ``backend.winograd.conv3x3_forward`` with the weight's transform kept;
- ``wino+wt``: the same with the weight transformed in each call;
- and PyTorch's ``torch.nn.functional.conv2d`` where torch is importable (no gradient).

The host may be shared and noisy, so the forms are interleaved: each repeat runs every form
once, in an order rotated from repeat to repeat, with a short pause between calls (idle BLAS
or OpenMP threads of one form must not spin into the next one's time). Reported per form: the
median time of the repeats with its range, and the median with range of the per-repeat ratio
to ``im2col`` (and to the faster of ``im2col``/``nin``), which is what a noisy host disturbs
least.

With ``--one-thread`` every form runs on one thread (the CPU thread pool, OpenBLAS and
PyTorch held to one) and is timed in CPU time of that thread: the work each form does, which
other processes on a shared host disturb far less than wall time (only through the caches).

Run: python benchmarks/winograd_layers.py [--repeats 7] [--nets resnet50,resnet18]
     [--one-thread] [--no-torch] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import numpy as np

LAYERS = {
    # name: (batch, channels in = out, plane)
    "resnet50": [(8, 64, 56), (8, 128, 28), (8, 256, 14), (8, 512, 7)],
    "resnet18": [(32, 64, 32), (32, 128, 16), (32, 256, 8), (32, 512, 4)],
}
PADS = ((1, 1), (1, 1))
PAUSE_S = 0.005


def _forms(x, w, b, torch):
    """``{name: callable}`` of every form on one layer (NumPy arrays ``x``, ``w``, ``b``)."""
    from paddle_hl.backend import windows, winograd

    u = winograd.weight_transform(w)
    osz = (x.shape[2], x.shape[3])
    forms = {
        "im2col": lambda: windows.from_cf(
            windows.im2col_forward(x, w, (1, 1), PADS, (1, 1), 1, osz)[0], False, b),
        "wino": lambda: winograd.conv3x3_forward(x, u, PADS, b),
        "wino+wt": lambda: winograd.conv3x3_forward(x, winograd.weight_transform(w), PADS, b),
    }
    if hasattr(windows, "conv_forward_nin"):
        def nin():
            y, _ = windows.conv_forward_nin(x, w, (1, 1), PADS, (1, 1), 1, osz)
            return windows.from_cf(y, False, b)

        forms["nin"] = nin
    if torch is not None:
        xt, wt, bt = (torch.from_numpy(a) for a in (x, w, b))

        def conv():
            with torch.no_grad():
                return torch.nn.functional.conv2d(xt, wt, bt, padding=1)

        forms["torch"] = conv
    return forms


def _check(forms):
    """Every form's result against im2col's (the forms must compute the same layer)."""
    ref = np.asarray(forms["im2col"]())
    scale = float(np.abs(ref).max())
    for name, fn in forms.items():
        got = np.asarray(fn())
        err = float(np.abs(got - ref).max()) / scale
        if err > 1e-4:
            raise AssertionError(f"{name}: relative error {err:.1e} against im2col")


def _time_layer(forms, repeats, clock=time.perf_counter):
    """``{name: [seconds per repeat]}``, the forms interleaved in a rotating order."""
    names = list(forms)
    times = {n: [] for n in names}
    for fn in forms.values():  # warm up (numba compiles, BLAS threads start)
        fn()
    for r in range(repeats):
        order = names[r % len(names):] + names[:r % len(names)]
        for n in order:
            time.sleep(PAUSE_S)
            t0 = clock()
            forms[n]()
            times[n].append(clock() - t0)
    return times


def _summary(values):
    return statistics.median(values), min(values), max(values)


def _ratios(times, name, ref):
    return [a / b for a, b in zip(times[name], ref)]


def run(nets, repeats, use_torch, one_thread=False):
    """Time every layer of ``nets`` in both backend forms; returns the rows of the table."""
    import contextlib

    import paddle_hl  # noqa: F401  (tunes the process as the library does)
    from paddle_hl import backend, device

    torch = None
    if use_torch:
        try:
            import torch
        except ImportError:
            torch = None
    hold = contextlib.nullcontext()
    clock = time.perf_counter
    if one_thread:
        device.set_num_threads(1)
        hold = backend.blas_one_thread()
        clock = time.thread_time
        if torch is not None:
            torch.set_num_threads(1)
    with hold:
        return _run(nets, repeats, torch, clock)


def _run(nets, repeats, torch, clock):
    from paddle_hl import backend, device
    rng = np.random.default_rng(0)
    rows = []
    for net in nets:
        for n, c, size in LAYERS[net]:
            x = rng.standard_normal((n, c, size, size)).astype(np.float32)
            w = (rng.standard_normal((c, c, 3, 3)) / np.sqrt(9 * c)).astype(np.float32)
            b = rng.standard_normal(c).astype(np.float32)
            for numba in (False, True):
                device.set_numba(numba)
                if numba and not backend.compiled_kernels_in_use():
                    continue
                forms = _forms(x, w, b, torch if not numba else None)
                _check(forms)
                times = _time_layer(forms, repeats, clock)
                rows.append(_row(net, (n, c, size), numba, times))
            device.set_numba(True)
    return rows


def _row(net, layer, numba, times):
    base = times["im2col"]
    best = [min(a, b) for a, b in zip(base, times.get("nin", base))]
    row = {"net": net, "layer": layer, "numba": numba, "ms": {}, "vs_im2col": {},
           "vs_best": {}}
    for name, ts in times.items():
        row["ms"][name] = [t * 1e3 for t in _summary(ts)]
        row["vs_im2col"][name] = list(_summary(_ratios(times, name, base)))
        row["vs_best"][name] = list(_summary(_ratios(times, name, best)))
    return row


def _print(rows):
    print(f"{'layer':<22}{'form':<8}" + "".join(f"{n:>22}" for n in
                                                ("im2col", "nin", "wino", "wino+wt", "torch")))
    for row in rows:
        n, c, size = row["layer"]
        label = f"{row['net']} {n}x{c}x{size}x{size}"
        cells = []
        for name in ("im2col", "nin", "wino", "wino+wt", "torch"):
            if name not in row["ms"]:
                cells.append(f"{'-':>22}")
                continue
            med, lo, hi = row["ms"][name]
            cells.append(f"{med:8.1f} [{lo:5.1f}-{hi:5.1f}]".rjust(22))
        print(f"{label:<22}{'numba' if row['numba'] else 'numpy':<8}" + "".join(cells))
        parts = []
        for name in ("wino", "wino+wt", "torch"):
            if name in row["vs_best"]:
                med, lo, hi = row["vs_best"][name]
                parts.append(f"{name} {med:.2f}x [{lo:.2f}-{hi:.2f}]")
        print(f"{'':<30}vs the faster im2col form (per repeat): " + ", ".join(parts))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--nets", default="resnet50,resnet18")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--one-thread", action="store_true",
                    help="one thread everywhere, timed in the thread's CPU time")
    ap.add_argument("--json", help="also write the rows to this file")
    args = ap.parse_args(argv)
    nets = [n for n in args.nets.split(",") if n]
    unknown = [n for n in nets if n not in LAYERS]
    if unknown:
        ap.error(f"unknown nets {unknown}; known: {sorted(LAYERS)}")
    t0 = time.perf_counter()
    rows = run(nets, args.repeats, not args.no_torch, args.one_thread)
    _print(rows)
    what = "CPU ms of one thread" if args.one_thread else "wall ms"
    print(f"({time.perf_counter() - t0:.0f} s, {args.repeats} repeats; {what}: median "
          "[min-max])")
    if args.json:
        with open(args.json + ".tmp", "w") as f:
            json.dump(rows, f, indent=1)
        import os

        os.replace(args.json + ".tmp", args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
