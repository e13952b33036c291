"""Per-op Python overhead: 100 chained ``b = b * 1.0001 + 0.0001`` on an 8x8 float32 tensor,
then ``b.sum().backward()`` (about 400 ops with the backward pass), side by side with PyTorch
CPU and Paddle 2.6.2.

The libraries are timed by interleaved blocks in long-lived workers (``_blocks.py``): the table
gives each library's time per chain and per op, and the median of the per-block ratios to
PyTorch with their range; the self-check row (a second paddle_hl worker against the first) must
read 1.0x.

Run: python benchmarks/op_overhead.py [--quick] [--blocks 15] [--libs ...] [--json F]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import sys

import numpy as np

BENCH = pathlib.Path(__file__).resolve().parent
OPS_PER_CHAIN = 400  # 100 x (mul, add) forward, and their backward


def build(lib, workload="chain"):
    """One chain in library ``lib`` (the worker's step function)."""
    from _blocks import import_library

    mod = import_library(lib)
    init = np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32)
    if lib == "torch":
        mod.set_num_threads(1)  # tiny tensors: one thread, as the others use

        def make():
            return mod.tensor(init, requires_grad=True)
    else:
        def make():
            return mod.to_tensor(init, stop_gradient=False)

    def chain():
        a = make()
        b = a
        for _ in range(100):
            b = b * 1.0001 + 0.0001
        b.sum().backward()
        return a

    return chain


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sys.path.insert(0, str(BENCH))
    import _blocks

    _blocks.add_arguments(ap, blocks=15, block_s=0.3, quick_blocks=5, quick_block_s=0.2)
    args = ap.parse_args(argv)
    if args.serve:
        _blocks.serve(build)
        return
    libs = _blocks.libraries(args)
    r = _blocks.run_workload(__file__, "chain", libs, blocks=args.blocks, block_s=args.block_s,
                             pause_s=args.pause, self_check=not args.no_self_check)
    env = _blocks.environment()
    print(f"op overhead: a chain of {OPS_PER_CHAIN} ops on 8x8 float32, {args.blocks} "
          f"interleaved blocks of {args.block_s} s per library")
    print("\n".join(_blocks.table([r], unit="ms per chain")))
    for lib in r["libs"]:
        print(f"  {lib}: {statistics.median(r['ms'][lib]) * 1e3 / OPS_PER_CHAIN:.2f} us per op")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"benchmark": "op_overhead", "args": vars(args), "environment": env,
                       "results": [r]}, f, indent=1)


if __name__ == "__main__":
    main()
