"""Data-parallel scaling on CPU: ResNet-18 (10 classes, 3x32x32 CIFAR-sized inputs), batch 32
per process, one training step = forward, backward (gradients averaged across processes) and
an SGD step. paddle_hl (DataParallel over MPI, launched with ``python -m
paddle_hl.distributed.launch``) side by side with PyTorch DDP on gloo, each on 1 and 2
processes, runs interleaved and repeated.

Every process is pinned to its own core and runs its math on one thread (the 1-process
baselines too), so 2 processes use 2 cores and 1 process uses 1: the scaling efficiency
(2-process throughput / (2 x 1-process throughput)) then measures what communication and
synchronisation cost. Each worker reports the core it is pinned to and how many threads it
runs, so oversubscription shows.

For paddle_hl on 2 processes it also prints where the step goes:

- the gradient-communication time of a step, outside the math: packing what is not in the
  buckets yet and starting their averaging (``pack``), the polls from the backward pass's hook,
  which average every bucket all ranks have packed (``polls``), and waiting at the end of
  backward for the rest (``wait``); their sum over the step time is the communication share.
  The time the engine's hook spends summing each final gradient straight into its bucket is
  printed apart: it replaces the accumulation into ``.grad`` that one process does too;
- the buckets (MB) and the time averaging each takes alone on these 2 processes (``alone``):
  with the buckets in shared memory (the default on one machine), this rank's slice averaged
  over both ranks' buffers; with ``PADDLE_HL_DP_SHM=0``, an in-place MPI all-reduce. Their sum
  over the step time is the averaging share, the cost the data movement itself puts on each
  step;
- how many buckets had already been averaged (or all-reduced) when backward ended (the
  overlap).

A baseline of 2 paddle_hl processes training apart (no communication) shows what the machine
allows 2 processes at all: memory-bandwidth contention, or 2 vCPUs that are one physical core,
or other load (the load average is printed), already keep it under 2x.

No thread is involved in the overlap: each bucket is averaged from the backward pass's hook as
soon as every rank has packed it (or, through MPI, its non-blocking all-reduce moves while the
rank polls), and the end of backward waits for the rest, so compute and communication never
compete for the GIL.

Across hosts (``--hosts N``, as root with ``ip netns``): paddle_hl on N simulated hosts (network,
UTS and mount namespaces on a private bridge, see tests/distributed/_hosts.py) with
``--per-host P`` ranks each, launched with ``--ips`` on every host as on a cluster, beside the
same N x P ranks on one host; it prints the throughput of both, the bytes the first host sent
per step (its interface's counter) and the gradient-communication time of a step. The hosts
share this machine's cores and memory: the figures measure the cross-host data path's cost
(TCP through the kernel instead of shared memory), not a network's.

Run: python benchmarks/data_parallel.py [--steps 8] [--repeats 3] [--libs paddle_hl,torch]
     python benchmarks/data_parallel.py --hosts 2 [--per-host 1] [--steps 8] [--repeats 3]
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
_CPU_TIMES = []  # CPU seconds of each timed step of this process
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _pin(rank):
    cpus = sorted(os.sched_getaffinity(0))
    cpu = cpus[rank % len(cpus)]
    os.sched_setaffinity(0, {cpu})
    return cpu


def _threads():
    """The threads this process runs now (BLAS, MPI, gloo, ...)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return None


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
    from _timing import timed

    times, cpu = timed(step, steps)
    _CPU_TIMES[:] = cpu
    return times


def _worker_paddle_hl(steps):
    sys.path.insert(0, str(ROOT))
    import numpy as np

    import paddle_hl as paddle
    import paddle_hl.distributed as dist
    from paddle_hl.distributed import _comm, parallel

    rank, world = dist.get_rank(), dist.get_world_size()
    cpu = _pin(rank)
    dist.init_parallel_env()
    t = {"absorb": 0.0, "pack": 0.0, "poll": 0.0, "wait": 0.0, "finished": 0, "ends": 0}

    def timed(name, orig):
        # the time of ``orig`` less the packing it started (which counts as "pack")
        def call(self, *a):
            t0, packed = time.perf_counter(), t["pack"]
            try:
                return orig(self, *a)
            finally:
                t[name] += time.perf_counter() - t0 - (t["pack"] - packed)
        return call

    orig_done = parallel._Reducer.done

    def done(self):
        # how many buckets finished while backward ran (tested before the end waits; a
        # bucket in shared memory counts once this rank has averaged its slice)
        t["finished"] += sum(
            (b in self.shm.reduced) if self.shared[b]
            else bool(_comm._test(req, "bench", self.group))
            for b, (req, _) in self.inflight.items())
        t["ends"] += 1
        return orig_done(self)

    parallel._Reducer.absorb = timed("absorb", parallel._Reducer.absorb)
    parallel._Reducer._launch = timed("pack", parallel._Reducer._launch)
    parallel._Reducer.ready = timed("poll", parallel._Reducer.ready)
    parallel._Reducer.done = timed("wait", done)
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

    def reset():
        t.update(absorb=0.0, pack=0.0, poll=0.0, wait=0.0, finished=0, ends=0)

    tx = []

    def start():
        reset()
        tx.append(_tx_bytes())

    times = _time_steps(step, steps, dist.barrier if world > 1 else lambda: None,
                        on_start=start)
    after = _tx_bytes()
    out = {"step_s": statistics.median(times), "cpu_s": statistics.median(_CPU_TIMES),
           "cpu": cpu, "threads": _threads()}
    if tx and tx[0] is not None and after is not None:
        out["tx_bytes_per_step"] = (after - tx[0]) / steps  # this host's interface, all ranks
    reducer = getattr(model, "_reducer", None)
    if reducer is not None:
        out.update(absorb_s=t["absorb"] / steps, pack_s=t["pack"] / steps,
                   poll_s=t["poll"] / steps, wait_s=t["wait"] / steps,
                   comm_s=(t["pack"] + t["poll"] + t["wait"]) / steps,
                   finished=t["finished"] / max(t["ends"], 1))
        # each bucket's averaging alone, on a float32 buffer of its size: in shared memory,
        # this rank's slice averaged over both ranks' buffers (then a barrier); otherwise an
        # in-place MPI all-reduce
        from paddle_hl.distributed import _shm

        MPI, comm = _comm.mpi(), reducer.group.comm
        sizes, alone = [], []
        for bi, b in enumerate(reducer.buckets):
            n = sum(int(np.prod(reducer.params[i].shape)) for i in b)
            buf = np.ones(n, np.float32)
            runs = []
            for _ in range(5):
                comm.Barrier()
                t0 = time.perf_counter()
                if reducer.shared[bi]:
                    parts = reducer.shm.views[bi][0]
                    _shm.average_into(parts, n * rank // world, n * (rank + 1) // world)
                    comm.Barrier()
                else:
                    comm.Allreduce(MPI.IN_PLACE, buf, op=MPI.SUM)
                runs.append(time.perf_counter() - t0)
            sizes.append(buf.nbytes / 2**20)
            alone.append(statistics.median(runs))
        out.update(bucket_mb=sizes, bucket_alone_s=alone, shared=bool(reducer.shm))
    if rank == 0:
        print(json.dumps(out), flush=True)


def _tx_bytes(dev="eth0"):
    """Bytes sent so far by this host's network interface (None without one: one host)."""
    try:
        with open(f"/sys/class/net/{dev}/statistics/tx_bytes") as f:
            return int(f.read())
    except OSError:
        return None


def _run_hosts(nhosts, per_host, steps):
    """paddle_hl on ``nhosts`` simulated hosts of ``per_host`` ranks: rank 0's result."""
    sys.path.insert(0, str(ROOT / "tests" / "distributed"))
    import _hosts

    why = _hosts.missing()
    if why:
        raise SystemExit(f"data_parallel.py --hosts: {why}")
    env = dict(os.environ, **ONE_THREAD)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    me = [str(pathlib.Path(__file__).resolve()), "--worker", "paddle_hl", "--steps", str(steps)]
    ips = ",".join(f"h{i + 1}" for i in range(nhosts))
    cluster = _hosts.Cluster(nhosts)
    try:
        procs = [h.popen([sys.executable, "-m", "paddle_hl.distributed.launch", "--ips", ips,
                          "--nproc_per_node", str(per_host), *me], env=env, cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                 for h in cluster.hosts]
        outs = [p.communicate(timeout=600)[0] for p in procs]
    finally:
        cluster.close()
    if any(p.returncode for p in procs):
        raise RuntimeError(f"paddle_hl on {nhosts} hosts failed:\n{outs[0][-2000:]}")
    for line in outs[0].splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            r["ips"] = nhosts * per_host * BATCH / r["step_s"]
            return r
    raise RuntimeError(f"paddle_hl on {nhosts} hosts printed no result:\n{outs[0][-2000:]}")


def _main_hosts(args):
    n, p = args.hosts, args.per_host
    res = {"one host": [], f"{n} hosts": []}
    for rep in range(args.repeats):
        for key in res:
            r = (_run("paddle_hl", n * p, args.steps, 0) if key == "one host"
                 else _run_hosts(n, p, args.steps))
            res[key].append(r)
            print(f"round {rep + 1} {key:<9} {n * p} ranks: {r['ips']:6.1f} images/s "
                  f"(step {r['step_s'] * 1e3:.0f} ms)", flush=True)
    print(f"\nResNet-18, batch {BATCH} per rank, {n * p} ranks ({n} hosts x {p} or one host), "
          f"{args.steps} timed steps x {args.repeats} repeats, one core and thread per rank")
    print(f"{'where':<10}{'img/s':>10}{'step ms':>10}{'comm ms':>10}{'comm share':>12}"
          f"{'MB sent/step by h1':>21}")
    for key, runs in res.items():
        def med(k, runs=runs):
            vals = [r[k] for r in runs if k in r]
            return statistics.median(vals) if vals else None

        tx = med("tx_bytes_per_step") if key != "one host" else None  # no network there
        print(f"{key:<10}{med('ips'):>10.1f}{med('step_s') * 1e3:>10.1f}"
              f"{med('comm_s') * 1e3:>10.1f}{100 * med('comm_s') / med('step_s'):>11.1f}%"
              + (f"{tx / 2**20:>21.2f}" if tx is not None else f"{'-':>21}"))
    grads = sum(res[f"{n} hosts"][0]["bucket_mb"])
    print(f"gradients per step: {grads:.2f} MB per rank; across hosts each rank sends its "
          f"1/{p} slice of every bucket through MPI's all-reduce over TCP, within a host the "
          "buckets are averaged in shared memory")


def _worker_torch(steps):
    import torch
    import torch.distributed as tdist

    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    rank, world = int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
    cpu = _pin(rank)
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
        print(json.dumps({"step_s": statistics.median(times),
                          "cpu_s": statistics.median(_CPU_TIMES), "cpu": cpu,
                          "threads": _threads()}), flush=True)
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
    ap.add_argument("--hosts", type=int, default=1,
                    help="N > 1: paddle_hl on N simulated hosts beside one host (root)")
    ap.add_argument("--per-host", type=int, default=1, help="ranks per host with --hosts")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        (_worker_paddle_hl if args.worker == "paddle_hl" else _worker_torch)(args.steps)
        return
    if args.hosts > 1:
        _main_hosts(args)
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
        share = [r["comm_s"] / r["step_s"] for r in res[(lib, 2)] if "comm_s" in r]
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
    if ("paddle_hl", 2) in res:
        runs = res[("paddle_hl", 2)]

        def med(key):
            return statistics.median(r[key] for r in runs)

        step = med("step_s")
        alone = [statistics.median(r["bucket_alone_s"][b] for r in runs)
                 for b in range(len(runs[0]["bucket_alone_s"]))]
        how = ("buckets in shared memory" if runs[0].get("shared")
               else "buckets all-reduced by MPI")
        print(f"paddle_hl, 2 processes, {how}, per step (medians): step {step * 1e3:.1f} ms; "
              f"gradient communication outside the math {med('comm_s') * 1e3:.1f} ms "
              f"(pack and start {med('pack_s') * 1e3:.1f} ms, polls and averaging during "
              f"backward {med('poll_s') * 1e3:.1f} ms, wait at the end of backward and "
              f"average {med('wait_s') * 1e3:.1f} ms); gradients summed straight into the "
              f"buckets {med('absorb_s') * 1e3:.1f} ms (in place of the engine's "
              "own accumulation)")
        print(f"  buckets {', '.join(f'{mb:.2f}' for mb in runs[0]['bucket_mb'])} MB; "
              f"averaging each alone: {', '.join(f'{a * 1e3:.2f}' for a in alone)} ms, "
              f"{sum(alone) * 1e3:.1f} ms in all = averaging share "
              f"{100 * sum(alone) / step:.1f}% of the step; buckets finished before backward "
              f"ended: {med('finished'):.1f} of {len(alone)}")
    # CPU time is stretched less than wall time by other processes' load: the CPU time of a
    # 1-process step over a 2-process one counts what communication adds to each rank's work
    # (memory contention included). Waiting for a late peer polls, so it counts too: on a
    # loaded machine this ratio is lower than a quiet machine's efficiency.
    for lib in libs:
        c1 = statistics.median(r["cpu_s"] for r in res[(lib, 1)])
        c2 = statistics.median(r["cpu_s"] for r in res[(lib, 2)])
        print(f"{lib}: CPU time of a step on rank 0: {c1 * 1e3:.1f} ms on 1 process, "
              f"{c2 * 1e3:.1f} ms on 2 (ratio {100 * c1 / c2:.0f}%)")
    for (lib, n), runs in res.items():
        r = runs[-1]
        print(f"  {lib} on {n} process(es): rank 0 pinned to CPU {r['cpu']}, "
              f"{r['threads']} threads in the process")
    if "paddle_hl" in eff and "torch" in eff:
        print(f"paddle_hl efficiency / torch efficiency: {eff['paddle_hl'] / eff['torch']:.2f}")


if __name__ == "__main__":
    main()
