"""paddle_hl.text side by side with Paddle 2.6.2 and PyTorch CPU, in one process, interleaved.

1. ``viterbi_decode`` on batch 64 x length 128 x 32 tags (random lengths, start/stop tags on):
   paddle_hl against ``paddle.text.viterbi_decode``; PyTorch has no Viterbi decoder, so the
   same batched algorithm written in torch ops is timed as a third reference.
2. One training step (forward, backward, Adam) of the notebook's sentiment classifier:
   Embedding(5000, 128) -> LSTM(128, 256) -> Linear(256, 2) on batch 64 x length 200, in
   paddle_hl, PyTorch and Paddle.

The LSTM section also times paddle_hl with NumPy's BLAS held to one thread (threadpoolctl,
when installed), which shows how much of its time goes to BLAS threading on the machine.
``--single-thread`` runs the whole benchmark again in a fresh process with every library held
to one thread (OMP / OpenBLAS / MKL thread variables set before NumPy loads, torch's intra-op
threads set to 1).

Each round runs every library once, in turn, so a slow spell of a shared machine hits them
alike. Per library the median and the range (min-max) of the wall-clock times are printed, the
ratio of the medians, and the median and range of the per-round ratios (paddle_hl's time over
the other library's in the same round: the steadiest figure on a shared machine). Next to the
wall-clock times the CPU time (``time.process_time``) is printed.

Run: python benchmarks/text.py [--rounds 15] [--lstm-rounds 7] [--threads N] [--lstm-only]
     [--single-thread] [--profile]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
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


def _interleaved(cases, rounds, warmup=1):
    for fn in cases.values():
        for _ in range(warmup):
            fn()
    wall = {k: [] for k in cases}
    cpu = {k: [] for k in cases}
    for _ in range(rounds):
        for name, fn in cases.items():
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
    args = ap.parse_args(argv)
    if args.single_thread and os.environ.get("_PADDLE_HL_BENCH_ONE_THREAD") != "1":
        # thread pools are sized when the libraries load: start over with the variables set
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
                   MKL_NUM_THREADS="1", _PADDLE_HL_BENCH_ONE_THREAD="1")
        rest = [a for a in (sys.argv[1:] if argv is None else argv) if a != "--single-thread"]
        cmd = [sys.executable, str(pathlib.Path(__file__).resolve()), "--threads", "1"] + rest
        os.execve(sys.executable, cmd, env)

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


def _lstm_section(paddle_hl, paddle, torch, args):
    cases = {"paddle_hl": _paddle_like_classifier(paddle_hl)}
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        threadpool_limits = None
    if threadpool_limits is not None and os.environ.get("OPENBLAS_NUM_THREADS") != "1":
        # the same step with NumPy's BLAS held to one thread: the 2 x 200 small recurrent GEMMs
        # of a step gain little from threads, and lose much when the cores are oversubscribed
        one_thread_step = _paddle_like_classifier(paddle_hl)

        def hl_one_blas_thread():
            with threadpool_limits(1, user_api="blas"):
                return one_thread_step()

        cases["paddle_hl, BLAS 1 thread"] = hl_one_blas_thread
    if torch is not None:
        cases["torch"] = _torch_classifier(torch)
    if paddle is not None:
        cases["paddle 2.6.2"] = _paddle_like_classifier(paddle)
    wall, cpu = _interleaved(cases, args.lstm_rounds)
    _report("LSTM classifier train step, batch 64 x length 200, emb 128, hidden 256 "
            "(target: hl <= 1.0x torch)", wall, cpu)

    if args.profile:
        import cProfile
        import pstats

        prof = cProfile.Profile()
        step = cases["paddle_hl"]
        prof.enable()
        for _ in range(3):
            step()
        prof.disable()
        print("\npaddle_hl LSTM step, 3 steps, by own time:")
        pstats.Stats(prof).sort_stats("tottime").print_stats(10)


if __name__ == "__main__":
    main()
