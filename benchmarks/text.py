"""paddle_hl.text side by side with Paddle 2.6.2 and PyTorch CPU, in one process, interleaved.

1. ``viterbi_decode`` on batch 64 x length 128 x 32 tags (random lengths, start/stop tags on):
   paddle_hl against ``paddle.text.viterbi_decode``; PyTorch has no Viterbi decoder, so the
   same batched algorithm written in torch ops is timed as a third reference.
2. One training step (forward, backward, Adam) of the notebook's sentiment classifier:
   Embedding(5000, 128) -> LSTM(128, 256) -> Linear(256, 2) on batch 64 x length 200, in
   paddle_hl, PyTorch and Paddle.

``--single-thread`` runs the whole benchmark again in a fresh process with every library held
to one thread (OMP / OpenBLAS / MKL thread variables set before NumPy loads, torch's intra-op
threads set to 1).

Each round runs every library once, in turn, so a slow spell of a shared machine hits them
alike. Per library the median and the range (min-max) of the wall-clock times are printed, the
ratio of the medians, and the median and range of the per-round ratios (paddle_hl's time over
the other library's in the same round: the steadiest figure on a shared machine). Next to the
wall-clock times the CPU time (``time.process_time``) is printed.

The LSTM step runs each library in its own process (one per library and round, interleaved),
with ``--lstm-steps`` timed steps after a warm-up; the Viterbi section runs in this process.

Run: python benchmarks/text.py [--rounds 15] [--lstm-rounds 7] [--lstm-steps 5] [--threads N]
     [--lstm-only] [--single-thread] [--profile]
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

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
VOCAB, EMB, HIDDEN, BATCH, LENGTH = 5000, 128, 256, 64, 200


def _viterbi_inputs():
    rng = np.random.default_rng(0)
    pot = rng.standard_normal((64, 128, 32)).astype("float32")
    trans = rng.standard_normal((32, 32)).astype("float32")
    lens = rng.integers(64, 129, 64).astype("int64")
    lens[0] = 128
    return pot, trans, lens


def _torch_viterbi(torch, pot, trans, lens):
    # the batched algorithm of paddle_hl in torch ops: a reference point, not a library API
    b, seq_len, n = pot.shape
    alpha = pot[:, 0] + trans[-1]
    bps = []
    ident = torch.arange(n).expand(b, n)
    for t in range(1, seq_len):
        best, arg = (alpha[:, :, None] + trans[None]).max(dim=1)
        live = (lens > t)[:, None]
        alpha = torch.where(live, best + pot[:, t], alpha)
        bps.append(torch.where(live, arg, ident))
    alpha = alpha + trans[-2]
    score, last = alpha.max(dim=1)
    path = [last]
    for bp in reversed(bps):
        last = bp.gather(1, last[:, None])[:, 0]
        path.append(last)
    paths = torch.stack(path[::-1], 1) * (torch.arange(seq_len)[None] < lens[:, None])
    return score, paths


def _paddle_like_classifier(lib):
    nn = lib.nn

    class Classifier(nn.Layer):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(VOCAB, EMB)
            self.lstm = nn.LSTM(EMB, HIDDEN)
            self.fc = nn.Linear(HIDDEN, 2)

        def forward(self, ids):
            _, (h, _) = self.lstm(self.embedding(ids))
            return self.fc(h[-1])

    lib.seed(0)
    net = Classifier()
    opt = lib.optimizer.Adam(learning_rate=1e-3, parameters=net.parameters())
    loss_fn = nn.CrossEntropyLoss()
    ids, labels = _batch()
    x, y = lib.to_tensor(ids), lib.to_tensor(labels)

    def step():
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    return step


def _torch_classifier(torch):
    nn = torch.nn

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(VOCAB, EMB)
            self.lstm = nn.LSTM(EMB, HIDDEN, batch_first=True)
            self.fc = nn.Linear(HIDDEN, 2)

        def forward(self, ids):
            _, (h, _) = self.lstm(self.embedding(ids))
            return self.fc(h[-1])

    torch.manual_seed(0)
    net = Classifier()
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    ids, labels = _batch()
    x, y = torch.from_numpy(ids), torch.from_numpy(labels)

    def step():
        loss = nn.functional.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    return step


def _blas_kernels():
    """The kernel set OpenBLAS picked for this CPU (best effort, Linux only): the GEMMs of
    the LSTM step run about 1.8x faster on AVX-512 kernels than on AVX2 ones, so the name
    matters when comparing machines (OPENBLAS_CORETYPE, set before NumPy loads, overrides
    it)."""
    import ctypes

    try:
        with open("/proc/self/maps") as f:
            paths = {ln.split()[-1] for ln in f if "openblas" in ln.rsplit("/", 1)[-1]}
    except OSError:
        return "-"
    for path in paths:
        lib = ctypes.CDLL(path)
        for name in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename",
                     "openblas_get_corename64_", "openblas_get_corename"):
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                return f"OpenBLAS {fn().decode()}"
    return "-"


def _batch():
    rng = np.random.default_rng(1)
    return (rng.integers(0, VOCAB, (BATCH, LENGTH)).astype("int64"),
            rng.integers(0, 2, (BATCH,)).astype("int64"))


def _time(fn):
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


# pause before each timed run: the thread pools of the library that ran before (OpenMP,
# OpenBLAS workers) spin for a while after their last task and would slow whichever library
# runs next in this process
SETTLE_S = 0.3


def _interleaved(cases, rounds, warmup=1):
    for fn in cases.values():
        for _ in range(warmup):
            fn()
    wall = {k: [] for k in cases}
    cpu = {k: [] for k in cases}
    for _ in range(rounds):
        for name, fn in cases.items():
            time.sleep(SETTLE_S)
            w, c = _time(fn)
            wall[name].append(w)
            cpu[name].append(c)
    return wall, cpu


def _report(title, wall, cpu, base="paddle_hl"):
    print(f"\n{title}")
    print(f"  {'library':<26}{'median ms':>10}{'range ms':>18}{'cpu ms':>9}"
          f"{'hl/lib (medians)':>18}{'hl/lib per round: median, range':>34}")
    hl_wall = statistics.median(wall[base])
    for name in wall:
        med, med_cpu = statistics.median(wall[name]), statistics.median(cpu[name])
        rng = f"{min(wall[name]) * 1e3:.1f}-{max(wall[name]) * 1e3:.1f}"
        ratio = paired = ""
        if name != base:
            ratio = f"{hl_wall / med:.2f}x"
            per = [a / b for a, b in zip(wall[base], wall[name])]
            paired = f"{statistics.median(per):.2f}x, {min(per):.2f}-{max(per):.2f}"
        print(f"  {name:<26}{med * 1e3:>10.1f}{rng:>18}{med_cpu * 1e3:>9.1f}{ratio:>18}"
              f"{paired:>34}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=15, help="rounds of the Viterbi benchmark")
    ap.add_argument("--lstm-rounds", type=int, default=7, help="rounds of the LSTM step")
    ap.add_argument("--threads", type=int, default=0,
                    help="torch intra-op threads (0: its default); set OMP_NUM_THREADS / "
                         "OPENBLAS_NUM_THREADS in the environment for the others")
    ap.add_argument("--lstm-only", action="store_true", help="skip the Viterbi benchmark")
    ap.add_argument("--single-thread", action="store_true",
                    help="run in a fresh process with every library held to one thread")
    ap.add_argument("--profile", action="store_true",
                    help="also print where paddle_hl's LSTM step spends its time (cProfile)")
    ap.add_argument("--lstm-steps", type=int, default=5, help="timed LSTM steps per process")
    ap.add_argument("--lstm-worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.lstm_worker:
        if args.threads and args.lstm_worker == "torch":
            import torch

            torch.set_num_threads(args.threads)
        _lstm_worker(args.lstm_worker, args.lstm_steps, args.profile)
        return
    if args.single_thread and os.environ.get("_PADDLE_HL_BENCH_ONE_THREAD") != "1":
        # thread pools are sized when the libraries load: start over with the variables set
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
                   MKL_NUM_THREADS="1", _PADDLE_HL_BENCH_ONE_THREAD="1")
        rest = [a for a in (sys.argv[1:] if argv is None else argv) if a != "--single-thread"]
        cmd = [sys.executable, str(pathlib.Path(__file__).resolve()), "--threads", "1"] + rest
        os.execve(sys.executable, cmd, env)

    args.env = dict(os.environ)  # for the workers: importing paddle sets OMP_NUM_THREADS=1
    sys.path.insert(0, str(ROOT))
    import zlib  # noqa: F401

    import numpy.random  # noqa: F401  (paddle 2.6.2 crashes under NumPy 2 without these)

    import paddle_hl

    try:
        import paddle

        paddle.disable_signal_handler()
    except ImportError:
        paddle = None
        print("paddle 2.6.2 is not installed: its columns are left out")
    try:
        import torch
    except ImportError:
        torch = None
        print("torch is not installed: its columns are left out")
    if torch is not None and args.threads:
        torch.set_num_threads(args.threads)
    print(f"paddle_hl {paddle_hl.__file__}; paddle {getattr(paddle, '__version__', '-')}; torch "
          f"{getattr(torch, '__version__', '-')} (threads "
          f"{torch.get_num_threads() if torch else '-'}); CPUs {os.cpu_count()}; "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '-')} "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '-')}; NumPy BLAS "
          f"kernels: {_blas_kernels()}")
    if not args.lstm_only:
        _viterbi_section(paddle_hl, paddle, torch, args.rounds)
    _lstm_section(paddle_hl, paddle, torch, args)


def _viterbi_section(paddle_hl, paddle, torch, rounds):
    pot, trans, lens = _viterbi_inputs()
    hl_args = [paddle_hl.to_tensor(a) for a in (pot, trans, lens)]
    cases = {"paddle_hl": lambda: paddle_hl.text.viterbi_decode(*hl_args)}
    if paddle is not None:
        pd_args = [paddle.to_tensor(a) for a in (pot, trans, lens)]
        ref = paddle.text.viterbi_decode(*pd_args)
        out = paddle_hl.text.viterbi_decode(*hl_args)
        np.testing.assert_array_equal(out[1].numpy(), ref[1].numpy())
        cases["paddle 2.6.2"] = lambda: paddle.text.viterbi_decode(*pd_args)
    if torch is not None:
        th_args = [torch.from_numpy(a) for a in (pot, trans, lens)]
        cases["torch (same algorithm)"] = lambda: _torch_viterbi(torch, *th_args)
        with torch.no_grad():
            wall, cpu = _interleaved(cases, rounds, warmup=2)
    else:
        wall, cpu = _interleaved(cases, rounds, warmup=2)
    _report("viterbi_decode, batch 64 x length 128 x 32 tags (target: hl <= 1.5x paddle)",
            wall, cpu)


def _lstm_worker(lib_name, steps, profile):
    """One library's LSTM steps in this process (a worker of :func:`_lstm_section`): warm-up,
    then ``steps`` timed steps; prints one JSON line with the wall and CPU times."""
    if lib_name == "torch":
        import torch

        step = _torch_classifier(torch)
    else:
        if lib_name == "paddle":
            import zlib  # noqa: F401

            import numpy.random  # noqa: F401  (paddle 2.6.2 crashes under NumPy 2 without)
            import paddle as lib

            lib.disable_signal_handler()
        else:
            sys.path.insert(0, str(ROOT))
            import paddle_hl as lib
        step = _paddle_like_classifier(lib)
    for _ in range(3):  # warm-up: allocator, thread pools, caches
        step()
    wall, cpu = [], []
    for _ in range(steps):
        w, c = _time(step)
        wall.append(w)
        cpu.append(c)
    if profile:
        import cProfile
        import pstats

        prof = cProfile.Profile()
        prof.enable()
        for _ in range(3):
            step()
        prof.disable()
        print(f"\n{lib_name} LSTM step, 3 steps, by own time:", file=sys.stderr)
        pstats.Stats(prof, stream=sys.stderr).sort_stats("tottime").print_stats(10)
    print(json.dumps({"wall": statistics.median(wall), "cpu": statistics.median(cpu)}))


def _lstm_section(paddle_hl, paddle, torch, args):
    """Each library runs in its own process, one fresh process per library and round, the
    rounds interleaved: libraries in one process share the allocator and each other's idle
    thread pools, which slows whichever runs after another."""
    libs = ["paddle_hl"] + [name for name, mod in (("torch", torch), ("paddle", paddle))
                            if mod is not None]
    labels = {"paddle_hl": "paddle_hl", "torch": "torch", "paddle": "paddle 2.6.2"}
    wall = {labels[k]: [] for k in libs}
    cpu = {labels[k]: [] for k in libs}
    for rnd in range(args.lstm_rounds):
        for lib in libs:
            cmd = [sys.executable, str(pathlib.Path(__file__).resolve()), "--lstm-worker", lib,
                   "--lstm-steps", str(args.lstm_steps), "--threads", str(args.threads)]
            if args.profile and rnd == 0 and lib == "paddle_hl":
                cmd.append("--profile")
            r = subprocess.run(cmd, capture_output=True, text=True, env=args.env)
            if r.stderr.strip() and args.profile:
                print(r.stderr)
            try:
                res = json.loads(r.stdout.strip().splitlines()[-1])
            except (IndexError, json.JSONDecodeError):
                print(f"{lib} did not run: {r.stderr.strip().splitlines()[-1:]}")
                continue
            wall[labels[lib]].append(res["wall"])
            cpu[labels[lib]].append(res["cpu"])
    _report(f"LSTM classifier train step, batch 64 x length 200, emb 128, hidden 256, median "
            f"of {args.lstm_steps} steps per process, {args.lstm_rounds} rounds "
            f"(target: hl <= 1.0x torch)", wall, cpu)


if __name__ == "__main__":
    main()
