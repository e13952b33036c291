"""Start N ranks under MPI's own launcher (mpiexec), forward their output and signals, and turn a
failed rank into a clear error naming it.

On one machine each rank holds a connection to a small monitor in the launcher (a UNIX socket
in the job's folder). A rank reports its rank and pid when it starts and its exit status when it
ends; a rank killed by a signal simply closes the connection. The monitor sees these events in
the order they happen, so the rank that failed first is known exactly, and the launcher then
stops the whole job. Across machines mpiexec's own clean-up does this, and its report names the
process.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

__all__ = []

MONITOR_ENV = "PADDLE_HL_JOB_MONITOR"
_BAD_PID = re.compile(r"PID (\d+) RUNNING AT (\S+)")
_EXIT = re.compile(r"(EXIT CODE|KILLED BY SIGNAL):\s*(\d+)")


def find_mpiexec() -> str:
    """The mpiexec of the MPI that mpi4py uses (the mpich wheel puts it beside python)."""
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.path.isfile(here) and os.access(here, os.X_OK):
        return here
    found = shutil.which("mpiexec")
    if found is None:
        raise RuntimeError(
            "paddle_hl.distributed: starting several processes needs MPI's launcher mpiexec, "
            "which was not found: pip install 'paddle_hl[distributed]' (mpi4py with the mpich "
            "wheel), or install your cluster's MPI")
    return found


class JobError(RuntimeError):
    """A rank of a parallel job failed; the message names it."""


class _Monitor:
    """Collects the ranks' start and exit reports; a closed connection without an exit report
    is a rank that died."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(256)
        self.lock = threading.Lock()
        self.failure = None  # (kind, rank, pid, detail) of the first failure
        self.lost = []  # ranks that only lost contact with a failed rank
        self.running = {}  # rank -> pid of the ranks that started and have not ended
        self.stopping = False  # set when the launcher ends the job: later ends are its doing
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        rank = pid = status = None
        buf = b""
        with conn:
            while True:
                try:
                    chunk = conn.recv(4096)
                except OSError:
                    chunk = b""
                if not chunk:
                    break
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    word, _, rest = line.decode().partition(" ")
                    if word == "start":
                        rank, pid = (int(v) for v in rest.split())
                        with self.lock:
                            self.running[rank] = pid
                    elif word == "exit":
                        status = rest
        with self.lock:
            self.running.pop(rank, None)
            if status == "lost":
                self.lost.append(rank)
            elif status not in ("0", None):
                self._first(("failed", rank, pid, status))
            elif status is None and rank is not None and not self.stopping:
                self._first(("died", rank, pid, None))

    def ended_badly(self):
        """True once the job cannot succeed: a rank failed, died or lost its peers."""
        return self.failure is not None or bool(self.lost)

    def _first(self, event):
        if self.failure is None:
            self.failure = event

    def close(self):
        self.sock.close()


def run(nprocs: int, worker_args: list, env: dict, run_dir: str, hosts=None,
        out=None) -> int:
    """Run ``python -m paddle_hl.distributed.launch._worker *worker_args`` on ``nprocs`` ranks.

    Args:
        nprocs: the number of processes.
        worker_args: arguments of the per-rank bootstrap.
        env: the environment of the ranks.
        run_dir: a private folder for the job (the monitor's socket).
        hosts: a list of ``host:slots`` (several machines), or None (this machine).
        out: where the ranks' output goes (default: this process's stdout).

    Returns:
        int: 0 when every rank succeeded.

    Raises:
        JobError: a rank failed (the message names the rank and how it ended).
    """
    cmd = [find_mpiexec(), "-n", str(nprocs)]
    started = time.time()
    monitor = None
    env = dict(env)
    # the ranks write line-buffered (see _worker.main); unbuffered output would split lines
    env.pop("PYTHONUNBUFFERED", None)
    if hosts:
        cmd += ["-hosts", ",".join(hosts)]
    else:
        # this launcher watches the ranks and stops the job itself, after learning which
        # rank failed first; mpiexec's clean-up would kill the others at once
        cmd += ["-disable-auto-cleanup"]
        monitor = _Monitor(os.path.join(run_dir, "monitor.sock"))
        env[MONITOR_ENV] = monitor.path
    cmd += [sys.executable, "-m", "paddle_hl.distributed.launch._worker", *worker_args]
    out = out or sys.stdout
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, text=True, bufsize=1,
                            start_new_session=True)
    report = []
    stopping = threading.Event()

    def forward():
        for line in proc.stdout:
            report.append(line)
            del report[:-40]
            if not stopping.is_set():  # mpiexec's own complaints while we stop the job
                out.write(line)
                out.flush()

    reader = threading.Thread(target=forward, daemon=True)
    reader.start()
    previous = {}

    def relay(signum, frame):
        try:
            os.killpg(proc.pid, signum)
        except ProcessLookupError:
            pass

    if threading.current_thread() is threading.main_thread():
        for s in (signal.SIGINT, signal.SIGTERM):
            previous[s] = signal.signal(s, relay)
    stop_at = None
    stuck = {}
    try:
        while True:
            try:
                code = proc.wait(timeout=0.05)
                break
            except subprocess.TimeoutExpired:
                pass
            if monitor is not None and stop_at is None and monitor.ended_badly():
                stop_at = time.monotonic() + 1.0  # let the ranks' last output arrive
            if stop_at is not None and time.monotonic() > stop_at:
                stopping.set()
                with monitor.lock:
                    stuck = dict(monitor.running)  # still running when the job was stopped
                    monitor.stopping = True
                _stop(proc)
        reader.join(timeout=5)
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
        if monitor is not None:
            time.sleep(0.05)  # the last exit reports
            monitor.close()
    if monitor is None:
        if code == 0:
            return 0
        raise JobError(_describe(code, "".join(report), nprocs, None, [], {}))
    if code == 0 and not monitor.ended_badly():
        return 0
    sweep_shm(started)
    raise JobError(_describe(code, "".join(report), nprocs, monitor.failure, monitor.lost,
                             stuck))


def sweep_shm(since, folder="/dev/shm", prefix="mpich_shm_"):
    """Remove the shared-memory files MPI left behind when a job on this machine was stopped.

    MPICH names each segment only until every rank of the job has called ``MPI_Finalize``; a
    rank that is killed never does, so the files (their memory included: ``/dev/shm`` is RAM)
    would stay until reboot. A file is removed only when it is this user's, was made since
    ``since`` (the job's start), and no running process maps it: a segment of another live job
    is always mapped by its ranks. Returns the paths removed."""
    try:
        names = [n for n in os.listdir(folder) if n.startswith(prefix)]
    except OSError:
        return []
    uid = os.getuid() if hasattr(os, "getuid") else None
    fresh = []
    for name in names:
        path = os.path.join(folder, name)
        try:
            st = os.stat(path)
        except OSError:
            continue
        if st.st_uid == uid and st.st_mtime >= since - 1.0:
            fresh.append(path)
    if not fresh:
        return []
    mapped = _mapped_files(prefix)
    if mapped is None:
        return []  # cannot tell which files are in use: leave them all
    removed = []
    for path in fresh:
        if os.path.realpath(path) in mapped:
            continue
        try:
            os.unlink(path)
            removed.append(path)
        except OSError:
            pass
    return removed


def _mapped_files(prefix):
    """The paths containing ``prefix`` that some process maps (None without ``/proc``)."""
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return None
    mapped = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as f:
                for line in f:
                    if prefix in line:
                        path = line.split(None, 5)[-1].strip()
                        mapped.add(path.removesuffix(" (deleted)"))
        except OSError:
            continue  # ended meanwhile, or another user's (it cannot map this user's files)
    return mapped


def _stop(proc):
    """End the whole job: mpiexec and every rank (they share its process group)."""
    for sig, wait in ((signal.SIGTERM, 3.0), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _describe(code, text, nprocs, failure, lost, stuck):
    if failure is not None:
        kind, rank, pid, status = failure
        if kind == "failed":
            what = f"rank {rank} (pid {pid}) failed with exit status {status} (its error is above)"
        else:
            what = (f"rank {rank} (pid {pid}) died without an error of its own (killed by a "
                    "signal, e.g. out of memory)")
    elif lost:
        what = f"rank(s) {sorted(lost)} gave up waiting for the others"
        if stuck:
            what += (f"; rank(s) {sorted(stuck)} (pid {', '.join(map(str, stuck.values()))}) "
                     "were stuck and did not answer")
    else:
        m = _BAD_PID.search(text)
        if m:
            e = _EXIT.search(text, m.end())
            how = f" ({e.group(1).lower()} {e.group(2)})" if e else ""
            what = f"the process with pid {m.group(1)} on {m.group(2)} ended abnormally{how}"
        else:
            what = f"mpiexec exited with code {code}"
    return (f"paddle_hl.distributed: the job of {nprocs} processes failed: {what}. The other "
            "ranks were stopped.")
