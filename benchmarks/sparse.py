"""Sparse kernels side by side with PyTorch CPU and Paddle 2.6.2, in one process, interleaved.

1. CSR x dense ``matmul``: a 10k x 10k CSR matrix at 1% density times a dense [10k, 256]
   matrix, forward + backward, (a) with gradients for the dense operand only and (b) for the
   sparse values too. Paddle 2.6.2's CPU build has no sparse matmul kernel, so it is reported as
   unsupported.
2. ``SubmConv3D`` 16 -> 32 channels, 3x3x3 kernel, on 50k active voxels of a 128^3 grid,
   forward + backward; the rulebook build (spconv's "indice pairs") is timed on its own.
   PyTorch has no sparse convolution, so this one is against Paddle only.

Each round runs every library once, in turn; the median, the range and the ratios to
paddle_hl are printed. The machine may be shared: read the ranges. Importing Paddle 2.6.2 starts
its own thread pools, which slows every library in the process on a small machine: compare with a
run without it (``--libs paddle_hl,torch``).

Run: python benchmarks/sparse.py [--rounds 5] [--conv-rounds 3] [--threads N]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))


def _csr_data(n=10_000, k=256, density=0.01, seed=0):
    rng = np.random.default_rng(seed)
    flat = np.unique(rng.integers(0, n * n, int(n * n * density)))
    rows, cols = flat // n, flat % n
    vals = rng.standard_normal(flat.size).astype(np.float32)
    crows = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))]).astype(np.int64)
    y = rng.standard_normal((n, k)).astype(np.float32)
    return crows, cols.astype(np.int64), vals, y, n


def _voxels(grid=128, n=50_000, cin=16, seed=0):
    rng = np.random.default_rng(seed)
    flat = np.sort(rng.choice(grid ** 3, n, replace=False))
    ix = np.stack(np.unravel_index(flat, (1, grid, grid, grid))).astype(np.int64)
    return ix, rng.standard_normal((n, cin)).astype(np.float32), [1, grid, grid, grid, cin]


def _matmul_cases(libs, both):
    crows, cols, vals, y, n = _csr_data()
    cases = {}
    if "paddle_hl" in libs:
        hl = libs["paddle_hl"]
        x = hl.sparse.sparse_csr_tensor(crows, cols, vals, [n, n], stop_gradient=not both)
        yt = hl.to_tensor(y, stop_gradient=False)

        def run_hl():
            hl.sparse.matmul(x, yt).sum().backward()
            yt.clear_grad()
            if both:
                x.clear_grad()

        cases["paddle_hl"] = run_hl
    if "torch" in libs:
        torch = libs["torch"]
        tx = torch.sparse_csr_tensor(torch.from_numpy(crows), torch.from_numpy(cols),
                                     torch.from_numpy(vals), (n, n)).requires_grad_(both)
        ty = torch.from_numpy(y).requires_grad_()

        def run_torch():
            (tx @ ty).sum().backward()
            ty.grad = None
            if both:
                tx.grad = None

        cases["torch"] = run_torch
    return cases


def _conv_cases(libs):
    ix, vals, shape = _voxels()
    cases = {}
    for name in ("paddle_hl", "paddle"):
        if name not in libs:
            continue
        lib = libs[name]
        layer = lib.sparse.nn.SubmConv3D(16, 32, 3, padding=1)

        def run(lib=lib, layer=layer):
            x = lib.sparse.sparse_coo_tensor(ix, vals, shape)
            x.stop_gradient = False
            layer(x).values().sum().backward()
            layer.clear_gradients()

        cases[name] = run
    return cases


def _rulebook_time(rounds):
    from paddle_hl.sparse.nn.functional import _rulebook

    ix, _, shape = _voxels()
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        rb = _rulebook.build(ix, 1, shape[1:4], [3, 3, 3], [1, 1, 1], [1, 1, 1], [1, 1, 1], True)
        rb.pairs()
        times.append(time.perf_counter() - t)
    return times, int((rb.table < rb.n_in).sum())


def _bench(cases, rounds):
    times = {k: [] for k in cases}
    for fn in cases.values():  # warm-up (imports, caches, allocator)
        fn()
    for _ in range(rounds):
        for name, fn in cases.items():
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    return times


def _report(title, times, unsupported=()):
    print(f"\n{title}")
    base = statistics.median(times["paddle_hl"]) if "paddle_hl" in times else None
    for name, ts in times.items():
        med = statistics.median(ts)
        ratio = f"  {med / base:6.2f}x paddle_hl" if base else ""
        print(f"  {name:10s} median {med * 1e3:9.1f} ms  range [{min(ts) * 1e3:.1f}, "
              f"{max(ts) * 1e3:.1f}]{ratio}")
    for name, why in unsupported:
        print(f"  {name:10s} {why}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--conv-rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--libs", default="paddle_hl,torch,paddle")
    args = ap.parse_args(argv)
    if args.threads:
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(args.threads)
    wanted = args.libs.split(",")
    libs = {}
    if "paddle" in wanted:
        try:
            import zlib  # noqa: F401  (paddle 2.6.2 under NumPy 2 needs these first)

            import numpy.random  # noqa: F401
            import paddle

            paddle.disable_signal_handler()
            libs["paddle"] = paddle
        except ImportError:
            print("paddle not installed: skipped")
    if "torch" in wanted:
        try:
            import torch

            if args.threads:
                torch.set_num_threads(args.threads)
            libs["torch"] = torch
        except ImportError:
            print("torch not installed: skipped")
    import paddle_hl

    libs["paddle_hl"] = paddle_hl
    import warnings

    warnings.filterwarnings("ignore")
    no_pd = [("paddle", "no CPU kernel for sparse matmul in 2.6.2")] if "paddle" in libs else []
    for both in (False, True):
        what = "dense and sparse-values gradients" if both else "dense-operand gradient"
        _report(f"CSR [10k x 10k, 1%] @ dense [10k, 256], forward + backward ({what})",
                _bench(_matmul_cases(libs, both), args.rounds), no_pd)
    rb, pairs = _rulebook_time(args.rounds)
    print(f"\nSubmConv3D rulebook build (50k voxels, 128^3, 3^3 kernel, {pairs} pairs): median "
          f"{statistics.median(rb) * 1e3:.1f} ms, range [{min(rb) * 1e3:.1f}, "
          f"{max(rb) * 1e3:.1f}]")
    _report("SubmConv3D 16 -> 32, 3^3, 50k voxels in 128^3, forward + backward (rulebook "
            "included)", _bench(_conv_cases(libs), args.conv_rounds),
            [("torch", "no sparse convolution in PyTorch")] if "torch" in libs else [])


if __name__ == "__main__":
    main()
