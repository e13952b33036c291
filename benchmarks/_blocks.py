"""Interleaved blocks in long-lived workers: the timing method the CPU benchmarks share.

On a shared two-core host one library's step time can move 2-10x between moments, so timing
each library in turn over a whole run, or in a fresh process per round, compares different
moments rather than different libraries. This module compares libraries at the same moment:

- one **worker process per library and workload** lives for the whole workload: it imports
  its library once, builds the workload once and warms it up, then waits for orders on a pipe;
- the parent runs **blocks**: in each block every worker in turn times a small number of steps
  (sized to about ``block_s`` seconds from its warm-up), the order rotating from block to block;
- between two workers' turns the parent **pauses** (``pause_s``), so that the idle BLAS or
  OpenMP threads a library leaves spinning after its turn are asleep before the next one starts;
- the figure of merit is the **per-block ratio**: a library's step time in a block divided by
  the reference library's in the same block. A block's step time is its fastest step, as
  ``timeit`` takes the best of its repeats: on a shared host the other processes only ever add
  time, so the fastest step of a short block is the one least disturbed. The report gives the
  median of the per-block ratios with their range, beside each library's wall-clock and CPU
  time per step (the median over blocks of each block's median, what a user sees on this host)
  and its peak memory.

The method is checked by its own control: with ``self_check`` a second worker of the first
library runs beside it, and the ratio of the two must come out at 1.0x with a narrow range,
however busy the host is.

A benchmark script provides ``build(lib, workload)``, returning a step function (called with
no arguments; a step's result is not used), and runs ``serve(build)`` when started with
``--serve``. Library names: ``torch``, ``paddle`` (Paddle 2.6.2), ``paddle_hl`` (with numba when
it is installed) and ``paddle_hl-numpy`` (``PADDLE_HL_NUMBA=0``: the default install's NumPy
path). ``paddle_hl'`` is the self-check's twin; ``paddle_hl@NAME`` another build registered
with :func:`add_tree` (the code before a change, timed beside the code after it).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH_DIR)
TWIN = "paddle_hl'"


# another build of paddle_hl to time beside this one, e.g. the code before a change:
# ``paddle_hl@before`` runs the paddle_hl installed in TREES["before"] (a folder made by
# ``pip install --no-deps --target DIR <checkout>``)
TREES: dict[str, str] = {}


def add_tree(name: str, site_dir: str) -> None:
    """Make ``paddle_hl@name`` and ``paddle_hl-numpy@name`` run the build in ``site_dir``."""
    if not os.path.isdir(os.path.join(site_dir, "paddle_hl")):
        raise SystemExit(f"{site_dir} holds no installed paddle_hl (pip install --no-deps "
                         f"--target {site_dir} <checkout>)")
    TREES[name] = os.path.abspath(site_dir)


def library_env(lib: str, twin_of: str = "paddle_hl") -> dict:
    """Environment overrides of a library's worker."""
    if lib == TWIN:
        lib = twin_of
    base, _, tree = lib.partition("@")
    env = {"BENCH_HL_SITE": TREES[tree]} if tree else {}
    if base == "paddle_hl-numpy":
        env["PADDLE_HL_NUMBA"] = "0"
    elif base == "paddle_hl":
        env["PADDLE_HL_NUMBA"] = "1"
    return env


def available(libs):
    """The libraries of ``libs`` installed here (paddle_hl with numba needs numba)."""
    need = {"torch": "torch", "paddle": "paddle", "paddle_hl": "numba"}
    out = []
    for lib in libs:
        mod = need.get(lib.partition("@")[0])
        if mod is None or importlib.util.find_spec(mod) is not None:
            out.append(lib)
        else:
            print(f"# {lib}: not installed ({mod}), left out", file=sys.stderr)
    return out


def import_library(lib: str):
    """Import a library the way its worker uses it."""
    if lib == "torch":
        import torch

        return torch
    if lib == "paddle":
        import zlib  # noqa: F401  (paddle 2.6.2 under NumPy 2 crashes unless these come first)

        import numpy.random  # noqa: F401
        import paddle

        paddle.disable_signal_handler()
        return paddle
    site = os.environ.get("BENCH_HL_SITE")
    if site:
        # another build: first on the path, and no editable install's finder mapping the
        # domain folders of this checkout into it
        sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
        sys.path.insert(0, site)
    else:
        sys.path.insert(0, ROOT)  # a plain checkout runs without installing
    import paddle_hl

    return paddle_hl


# ------------------------------------------------------------------------------ the command line


def add_arguments(ap, blocks, block_s, quick_blocks, quick_block_s=None,
                  libs="torch,paddle_hl,paddle_hl-numpy,paddle"):
    """The options every blocks benchmark takes (a script adds its own workload options)."""
    ap.add_argument("--libs", default=libs)
    ap.add_argument("--blocks", type=int, default=blocks, help="interleaved blocks per workload")
    ap.add_argument("--block-s", type=float, default=block_s,
                    help="seconds per library per block")
    ap.add_argument("--pause", type=float, default=0.1, help="seconds between two turns")
    ap.add_argument("--threads", type=int, default=0,
                    help="BLAS/OpenMP/torch threads per worker (0: the libraries' default)")
    ap.add_argument("--no-self-check", action="store_true",
                    help="leave out the second paddle_hl worker that checks the method (1.0x)")
    ap.add_argument("--quick", action="store_true",
                    help=f"{quick_blocks} blocks (the figures of docs/performance.md)")
    ap.add_argument("--json", help="also write the results to this file")
    ap.add_argument("--before", metavar="DIR",
                    help="also time the paddle_hl installed in DIR (pip install --no-deps "
                         "--target DIR <older checkout>), with and without numba")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    ap.set_defaults(_quick=(quick_blocks, quick_block_s))


def libraries(args):
    """The libraries to time, from ``--libs`` and ``--before`` (installed ones only); applies
    ``--quick`` to the block settings."""
    if args.quick:
        args.blocks = args._quick[0]
        if args._quick[1] is not None:
            args.block_s = args._quick[1]
    libs = args.libs.split(",")
    if args.before:
        add_tree("before", args.before)
        libs += [f"{lib}@before" for lib in libs if lib.startswith("paddle_hl")]
    return available(libs)


# ------------------------------------------------------------------------------ the worker


def _peak_mb() -> float:
    """This process's peak resident memory in MB. ``VmHWM`` belongs to the program's own
    address space; ``ru_maxrss`` would also count the parent's resident size at the fork that
    started this worker (Linux keeps it across exec), which a parent holding models inflates."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def serve(build):
    """Worker loop: read orders as JSON lines on stdin, answer on the original stdout.

    Orders: ``{"setup": [lib, workload, threads]}`` builds and warms up (answers the warm-up
    step time); ``{"run": n}`` times n steps (answers per-step wall and CPU seconds);
    ``{"stats": 1}`` answers peak RSS; ``{"quit": 1}`` ends. Anything the libraries print goes
    to stderr, so it cannot garble the answers."""
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    step = None
    for line in sys.stdin:
        order = json.loads(line)
        try:
            if "setup" in order:
                lib, workload, threads = order["setup"]
                if threads and lib == "torch":
                    import torch

                    torch.set_num_threads(threads)
                step = build(lib, workload)
                for _ in range(2):
                    step()
                t0 = time.perf_counter()
                step()
                answer = {"warm_s": time.perf_counter() - t0}
            elif "run" in order:
                wall, cpu = [], []
                for _ in range(order["run"]):
                    t0, c0 = time.perf_counter(), time.process_time()
                    step()
                    wall.append(time.perf_counter() - t0)
                    cpu.append(time.process_time() - c0)
                answer = {"wall": wall, "cpu": cpu}
            elif "stats" in order:
                answer = {"peak_mb": _peak_mb()}
            else:
                return
        except Exception as e:  # reported by the parent, which stops the workload
            answer = {"error": f"{type(e).__name__}: {e}"}
        out.write(json.dumps(answer) + "\n")


class _Worker:
    def __init__(self, script, lib, workload, threads, twin_of="paddle_hl"):
        env = dict(os.environ, **library_env(lib, twin_of))
        if threads:
            for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                        "PADDLE_HL_NUM_THREADS"):
                env[var] = str(threads)
        env["PYTHONPATH"] = os.pathsep.join([ROOT, BENCH_DIR, env.get("PYTHONPATH", "")])
        self.lib = lib
        self.proc = subprocess.Popen([sys.executable, script, "--serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env, text=True, bufsize=1)
        # the twin and the NumPy-path worker build paddle_hl; only their environment differs
        built = "paddle_hl" if lib.startswith("paddle_hl") else lib
        self.warm_s = self.ask({"setup": [built, workload, threads]})["warm_s"]

    def ask(self, order):
        self.proc.stdin.write(json.dumps(order) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.lib}: worker ended (exit {self.proc.wait()}); its "
                               "stderr is above")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"{self.lib}: {answer['error']}")
        return answer

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write('{"quit": 1}\n')
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def run_workload(script, workload, libs, blocks=15, block_s=0.4, pause_s=0.1, threads=0,
                 ref="torch", self_check=False, log=None, max_steps=2000):
    """Time one workload in every library by interleaved blocks; returns a result dict:
    per library ``ms`` (per-block medians), ``cpu_ms``, ``peak_mb``, and per library the list of
    per-block ratios to ``ref`` (``ratios``), plus the twin's ratios to the first library
    when ``self_check``."""
    libs = list(libs)
    # the twin copies paddle_hl (with numba where it is installed, else the NumPy path)
    original = next((lib for lib in ("paddle_hl", "paddle_hl-numpy") if lib in libs), None)
    self_check = self_check and original is not None
    if self_check:
        libs.append(TWIN)
    workers = {}
    try:
        for lib in libs:
            workers[lib] = _Worker(script, lib, workload, threads, original)
        steps = {lib: max(3, min(max_steps, round(block_s / max(w.warm_s, 1e-6))))
                 for lib, w in workers.items()}
        ms = {lib: [] for lib in libs}  # each block's median step
        best = {lib: [] for lib in libs}  # each block's fastest step
        cpu = {lib: [] for lib in libs}
        for b in range(blocks):
            order = libs[b % len(libs):] + libs[:b % len(libs)]
            for lib in order:
                time.sleep(pause_s)
                ans = workers[lib].ask({"run": steps[lib]})
                ms[lib].append(statistics.median(ans["wall"]) * 1e3)
                best[lib].append(min(ans["wall"]) * 1e3)
                cpu[lib].append(statistics.median(ans["cpu"]) * 1e3)
            if log:
                log(f"  {workload} block {b + 1}/{blocks}: " + ", ".join(
                    f"{lib} {ms[lib][-1]:.2f}" for lib in libs))
        peak = {lib: w.ask({"stats": 1})["peak_mb"] for lib, w in workers.items()}
    finally:
        for w in workers.values():
            w.close()
    res = {"workload": workload, "libs": libs, "ms": ms, "best_ms": best, "cpu_ms": cpu,
           "peak_mb": peak,
           "steps_per_block": steps, "ref": ref, "ratios": {}}
    if ref in ms:
        for lib in libs:
            if lib != ref:
                res["ratios"][lib] = [a / b for a, b in zip(best[lib], best[ref])]
    if self_check:
        res["self_ratios"] = [a / b for a, b in zip(best[TWIN], best[original])]
        res["twin_of"] = original
    return res


# ------------------------------------------------------------------------------ reporting


def spread(values, fmt="{:.2f}"):
    """``median (min-max)``."""
    return (fmt.format(statistics.median(values)) + " (" + fmt.format(min(values)) + "-"
            + fmt.format(max(values)) + ")")


def environment() -> dict:
    """What the figures depend on: the machine, the versions, the BLAS settings, the load."""
    import numpy

    info = {"python": platform.python_version(), "numpy": numpy.__version__,
            "cpus": os.cpu_count(), "load_avg": os.getloadavg()}
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu"] = next((ln.split(":", 1)[1].strip() for ln in f
                                if ln.startswith("model name")), platform.processor())
    except OSError:
        info["cpu"] = platform.processor()
    for mod in ("torch", "paddle", "numba"):
        spec = importlib.util.find_spec(mod)
        if spec is not None:
            try:
                from importlib.metadata import version

                info[mod] = version("paddlepaddle" if mod == "paddle" else mod)
            except Exception:
                info[mod] = "installed"
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        info[var] = os.environ.get(var, "unset")
    return info


def table(results, unit="ms per step", libs_order=None) -> list[str]:
    """Markdown rows: per workload and library the block-best step time (median and range over
    blocks: the figure the ratios use), the typical step time (median of the blocks' medians),
    the CPU time per step, the peak memory and the median (range) of the per-block ratios to the
    reference library."""
    ref = results[0]["ref"] if results else "torch"
    lines = [f"| workload | library | {unit}, best of block | typical | CPU ms | peak MB | "
             f"ratio to {ref} |", "|---|---|---|---|---|---|---|"]
    for r in results:
        for lib in libs_order or r["libs"]:
            if lib not in r["ms"]:
                continue
            if lib in r["ratios"]:
                ratio = spread(r["ratios"][lib]) + "x"
            else:
                ratio = "1 (reference)" if lib == r["ref"] else "-"
            lines.append(f"| {r['workload']} | {lib} | {spread(r['best_ms'][lib])} | "
                         f"{statistics.median(r['ms'][lib]):.2f} | "
                         f"{statistics.median(r['cpu_ms'][lib]):.2f} | "
                         f"{r['peak_mb'][lib]:.0f} | {ratio} |")
        if "self_ratios" in r:
            lines.append(f"| {r['workload']} | self-check ({TWIN} / {r['twin_of']}) | | | | | "
                         f"{spread(r['self_ratios'])}x |")
    return lines
