"""Data-parallel scaling on CPU: ResNet-18 (10 classes, 3x32x32 CIFAR-sized inputs), batch 32
per process, one training step = forward, backward (gradients averaged across processes) and
an SGD step. paddle_hl (DataParallel over MPI, launched with ``python -m
paddle_hl.distributed.launch``) side by side with PyTorch DDP on gloo, each on 1 and 2
processes, runs interleaved and repeated.

Every process is pinned to its own core and runs its math on one thread, so 2 processes use 2
cores and 1 process uses 1: the scaling efficiency (2-process throughput / (2 x 1-process
throughput)) then measures what communication and synchronisation cost. For paddle_hl the
share of a step spent in gradient communication outside backward (packing the buckets, waiting
for the all-reduces still in flight when backward ends, writing the averages back) is printed
too; the all-reduces started during backward overlap with it.

Prints images/s (median and range over the repeats), speed-ups, efficiencies, the load
average (the machine may be shared: read the figures with it), and a baseline of 2 paddle_hl
processes training apart without communicating: on a busy machine (or 2 vCPUs that are one
physical core) that is already below 2x, and it bounds what any data-parallel run can reach.

Run: python benchmarks/data_parallel.py [--steps 8] [--repeats 3] [--libs paddle_hl,torch]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
BATCH = 32
NO_COMM = "PADDLE_HL_BENCH_NO_COMM"
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _pin(rank):
    cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpus[rank % len(cpus)]})


def _data(rank):
    import numpy as np

    rng = np.random.default_rng(rank)
    return (rng.standard_normal((BATCH, 3, 32, 32)).astype("float32"),
            rng.integers(0, 10, (BATCH,)).astype("int64"))


def _time_steps(step, steps, barrier, on_start=None):
    for _ in range(2):  # warm-up
        step()
    barrier()
    if on_start is not None:
        on_start()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return times


def _worker_paddle_hl(steps):
    sys.path.insert(0, str(ROOT))
    import paddle_hl as paddle
    import paddle_hl.distributed as dist
    from paddle_hl.distributed import parallel

    rank, world = dist.get_rank(), dist.get_world_size()
    _pin(rank)
    dist.init_parallel_env()
    comm = [0.0]
    for name in ("_launch", "done"):  # time the communication calls outside the math
        orig = getattr(parallel._Reducer, name)

        def timed(self, *a, _orig=orig):
            t0 = time.perf_counter()
            try:
                return _orig(self, *a)
            finally:
                comm[0] += time.perf_counter() - t0

        setattr(parallel._Reducer, name, timed)
    paddle.seed(0)
    net = paddle.vision.models.resnet18(num_classes=10)
    # the no-communication baseline: 2 processes training apart (what 2 processes on this
    # machine can reach at best, whatever the communication)
    model = paddle.DataParallel(net) if world > 1 and not os.environ.get(NO_COMM) else net
    opt = paddle.optimizer.SGD(0.01, parameters=net.parameters())
    loss_fn = paddle.nn.CrossEntropyLoss()
    xs, ys = _data(rank)
    x, y = paddle.to_tensor(xs), paddle.to_tensor(ys)

    def step():
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()

    times = _time_steps(step, steps, dist.barrier if world > 1 else lambda: None,
                        on_start=lambda: comm.__setitem__(0, 0.0))
    comm_per_step = comm[0] / steps
    if rank == 0:
        print(json.dumps({"step_s": statistics.median(times), "comm_s": comm_per_step}),
              flush=True)


def _worker_torch(steps):
    import torch
    import torch.distributed as tdist

    torch.set_num_threads(1)
    rank, world = int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
    _pin(rank)
    from train_step import _torch_resnet18

    torch.manual_seed(0)
    net = _torch_resnet18(torch)
    if world > 1:
        tdist.init_process_group("gloo", rank=rank, world_size=world)
        model = torch.nn.parallel.DistributedDataParallel(net)
    else:
        model = net
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    loss_fn = torch.nn.CrossEntropyLoss()
    xs, ys = _data(rank)
    x, y = torch.from_numpy(xs), torch.from_numpy(ys)

    def step():
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()

    times = _time_steps(step, steps, tdist.barrier if world > 1 else lambda: None)
    if rank == 0:
        print(json.dumps({"step_s": statistics.median(times), "comm_s": None}), flush=True)
    if world > 1:
        tdist.destroy_process_group()


def _run(lib, nprocs, steps, port):
    env = dict(os.environ, **ONE_THREAD)
    if lib == "no-comm":
        lib, env[NO_COMM] = "paddle_hl", "1"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    me = [str(pathlib.Path(__file__).resolve()), "--worker", lib, "--steps", str(steps)]
    if lib == "paddle_hl" and nprocs > 1:
        procs = [subprocess.Popen([sys.executable, "-m", "paddle_hl.distributed.launch",
                                   "--nproc_per_node", str(nprocs), *me], env=env, cwd=ROOT,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)]
    else:
        procs = []
        for r in range(nprocs):
            e = dict(env, RANK=str(r), WORLD_SIZE=str(nprocs), MASTER_ADDR="127.0.0.1",
                     MASTER_PORT=str(port))
            procs.append(subprocess.Popen([sys.executable, *me], env=e, cwd=ROOT,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True))
    outs = [p.communicate() for p in procs]
    for p, (_out, err) in zip(procs, outs):
        if p.returncode:
            raise RuntimeError(f"{lib} on {nprocs} process(es) failed:\n{err[-2000:]}")
    for out, _ in outs:
        for line in out.splitlines():
            if line.startswith("{"):
                r = json.loads(line)
                r["ips"] = nprocs * BATCH / r["step_s"]
                return r
    raise RuntimeError(f"{lib} on {nprocs} process(es) printed no result")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--libs", default="paddle_hl,torch")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        (_worker_paddle_hl if args.worker == "paddle_hl" else _worker_torch)(args.steps)
        return
    libs = args.libs.split(",")
    res = {(lib, n): [] for lib in libs for n in (1, 2)}
    if "paddle_hl" in libs:
        res[("no-comm", 2)] = []
    load0 = os.getloadavg()
    port = 29500 + os.getpid() % 1000
    for rep in range(args.repeats):  # interleaved: every configuration once per round
        for lib, n in res:
            port += 1
            r = _run(lib, n, args.steps, port)
            res[(lib, n)].append(r)
            print(f"round {rep + 1} {lib:<9} {n} proc: {r['ips']:6.1f} images/s "
                  f"(step {r['step_s'] * 1e3:.0f} ms)", flush=True)
    load1 = os.getloadavg()
    print(f"\nResNet-18, batch {BATCH} per process, one core and one thread per process, "
          f"{args.steps} timed steps x {args.repeats} repeats; load average "
          f"{load0[0]:.1f} before, {load1[0]:.1f} after, on {os.cpu_count()} CPUs")
    print(f"{'library':<10}{'1 proc img/s':>22}{'2 procs img/s':>22}{'speed-up':>10}"
          f"{'efficiency':>12}{'comm share':>12}")
    eff = {}
    for lib in libs:
        one = [r["ips"] for r in res[(lib, 1)]]
        two = [r["ips"] for r in res[(lib, 2)]]
        m1, m2 = statistics.median(one), statistics.median(two)
        eff[lib] = m2 / (2 * m1)
        share = [r["comm_s"] / r["step_s"] for r in res[(lib, 2)] if r["comm_s"] is not None]
        share_s = f"{100 * statistics.median(share):.1f}%" if share else "-"
        print(f"{lib:<10}{m1:>8.1f} [{min(one):.1f}-{max(one):.1f}]".ljust(32)
              + f"{m2:>8.1f} [{min(two):.1f}-{max(two):.1f}]".ljust(22)
              + f"{m2 / m1:>8.2f}x{100 * eff[lib]:>11.0f}%{share_s:>12}")
    if ("no-comm", 2) in res:
        base = statistics.median(r["ips"] for r in res[("paddle_hl", 1)])
        nc = [r["ips"] for r in res[("no-comm", 2)]]
        print(f"2 paddle_hl processes training apart (no communication): "
              f"{statistics.median(nc):.1f} images/s [{min(nc):.1f}-{max(nc):.1f}], "
              f"{statistics.median(nc) / base:.2f}x one process: the most 2 processes reach "
              "on this machine now")
    if "paddle_hl" in eff and "torch" in eff:
        print(f"paddle_hl efficiency / torch efficiency: {eff['paddle_hl'] / eff['torch']:.2f}")


if __name__ == "__main__":
    main()
