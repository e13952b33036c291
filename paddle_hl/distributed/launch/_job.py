"""Start N ranks under MPI's own launcher (mpiexec), forward their output and signals, and turn a
failed rank into a clear error naming it.

On one machine each rank holds a connection to a small monitor in the launcher (a UNIX socket:
an abstract one on Linux, so that no path length limit applies whatever ``TMPDIR`` is). A rank
reports its rank and pid when it starts and its exit status when it ends; a rank killed by a
signal simply closes the connection. The monitor sees these events in the order they happen, so
the rank that failed first is known exactly, and the launcher then stops the whole job. The
monitor also tells every rank when another one has ended, so a rank waiting for it in a
collective stops at once with an error saying so. When the launcher itself dies, however it
dies, the ranks see their connection close and end themselves (see ``_worker``), removing the
job's folder and shared memory. Across machines mpiexec's own clean-up does this, and its
report names the process.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import uuid

from ._protocol import error_path, messages, socket_name

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
    """A rank of a parallel job failed; the message names it.

    Attributes:
        exit_code (int): the status the launcher exits with (1, or 128 + the signal number
            when the launcher was stopped by a signal).
        traceback (str | None): the failed rank's traceback, when it raised an exception.
    """

    def __init__(self, message, exit_code=1, traceback=None):
        super().__init__(message)
        self.exit_code = exit_code
        self.traceback = traceback


def _address(run_dir):
    """Where the monitor listens: a Linux abstract socket (no file, no path length limit: the
    name is written ``@name`` in the ranks' environment), elsewhere a socket file in the job's
    folder, or in a short private folder when that path is too long for a UNIX socket."""
    if sys.platform.startswith("linux"):
        return f"@paddle_hl_job_{os.getpid()}_{uuid.uuid4().hex}", None
    path = os.path.join(run_dir, "monitor.sock")
    if len(os.fsencode(path)) < 100:
        return path, None
    short = tempfile.mkdtemp(prefix="phl_", dir="/tmp" if os.path.isdir("/tmp") else None)
    return os.path.join(short, "m.sock"), short



class _Monitor:
    """Collects the ranks' start and exit reports; a closed connection without an exit report
    is a rank that died. Tells the ranks still running when one has ended (``ended R STATUS``
    lines), so that one waiting for it in a collective knows at once."""

    def __init__(self, run_dir, bind=None):
        self.token = None
        if bind is None:
            self.path, self._folder = _address(run_dir)
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.bind(socket_name(self.path))
        else:
            # several machines: TCP on the address the other machines reach this one at; a
            # random token in the ranks' environment stands in for the peer's user check
            self._folder = None
            self.token = uuid.uuid4().hex
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.sock.bind((bind, 0))
            self.path = f"tcp:{bind}:{self.sock.getsockname()[1]}:{self.token}"
        self.sock.listen(256)
        self.hosts = {}  # rank -> the machine it runs on (its hostname)
        self.lock = threading.Lock()
        self.failure = None  # (kind, rank, pid, detail) of the first failure
        self.lost = []  # ranks that only lost contact with a failed rank
        self.running = {}  # rank -> pid of the ranks that started and have not ended
        self.ended = {}  # rank -> exit status ("died": closed without one), in order
        self.conns = {}  # rank -> connection of the ranks still running
        self.pids = {}  # rank -> pid of every rank that started
        self.stopping = False  # set when the launcher ends the job: later ends are its doing
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            if self.token is None and not _same_user(conn):  # an abstract socket has no
                # file permissions; a TCP peer shows the token instead (see _serve)
                conn.close()
                continue
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        rank = pid = status = None
        with conn:
            for word, rest in messages(conn):
                if word == "start":
                    fields = rest.split()
                    if self.token is not None and fields[3:4] != [self.token]:
                        return  # not a rank of this job
                    rank, pid = int(fields[0]), int(fields[1])
                    with self.lock:
                        if len(fields) > 2:
                            self.hosts[rank] = fields[2]
                        self.running[rank] = pid
                        self.pids[rank] = pid
                        self.conns[rank] = conn
                elif word == "exit":
                    status = rest
                    self._tell_others(rank, "1" if status == "lost" else status)
        with self.lock:
            self.running.pop(rank, None)
            self.conns.pop(rank, None)
            if rank is not None:
                self.ended.setdefault(rank, "died" if status is None else status)
            if status == "lost":
                self.lost.append(rank)
            elif status not in ("0", None):
                self._first(("failed", rank, pid, status))
            elif status is None and rank is not None and not self.stopping:
                self._first(("died", rank, pid, None))
        if status is None and rank is not None:
            self._tell_others(rank, "died")

    def _tell_others(self, rank, status):
        """Tell the ranks still running that ``rank`` has ended with ``status``."""
        if rank is None:
            return
        line = f"ended {rank} {status}\n".encode()
        with self.lock:
            self.ended.setdefault(rank, status)
            others = [c for r, c in self.conns.items() if r != rank]
        for c in others:
            try:
                c.sendall(line)
            except OSError:
                pass  # that rank has ended too

    def ended_badly(self):
        """True once the job cannot succeed: a rank failed, died or lost its peers."""
        return self.failure is not None or bool(self.lost)

    def _first(self, event):
        if self.failure is None:
            self.failure = event

    def close(self):
        self.sock.close()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)


def _same_user(conn):
    """Whether the process at the other end of ``conn`` runs as this user (Linux), else True."""
    opt = getattr(socket, "SO_PEERCRED", None)
    if opt is None:
        return True
    try:
        _, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, opt,
                                                        struct.calcsize("3i")))
    except OSError:
        return False
    return uid == os.getuid()


def run(nprocs: int, worker_args: list, env: dict, run_dir: str, hosts=None,
        out=None, monitor_host=None, manual=None) -> int:
    """Run ``python -m paddle_hl.distributed.launch._worker *worker_args`` on ``nprocs`` ranks.

    Args:
        nprocs: the number of processes.
        worker_args: arguments of the per-rank bootstrap.
        env: the environment of the ranks.
        run_dir: a private folder for the job (the monitor's socket).
        hosts: a list of ``host:slots`` (several machines), or None (this machine).
        out: where the ranks' output goes (default: this process's stdout).
        monitor_host: with ``hosts``, the address of this machine that the others reach: the
            ranks' monitor then listens there (TCP), so ranks on every machine are watched.
        manual: with ``hosts``, a function that starts MPI's proxies itself: it gets the list
            of proxy command lines (one per host, in the order of ``hosts``) from mpiexec's
            manual launcher, instead of mpiexec reaching the hosts over ssh.

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
        if manual is not None:
            cmd += ["-launcher", "manual"]
    if not hosts or monitor_host:
        # this launcher watches the ranks and stops the job itself, after learning which
        # rank failed first; mpiexec's clean-up would kill the others at once
        cmd += ["-disable-auto-cleanup"]
        monitor = _Monitor(run_dir, bind=monitor_host if hosts else None)
        env[MONITOR_ENV] = monitor.path
    cmd += [sys.executable, "-m", "paddle_hl.distributed.launch._worker", *worker_args]
    out = out or sys.stdout
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, text=True, bufsize=1,
                            start_new_session=True)
    report = []
    held = []  # MPI's process manager's messages, across machines (see forward)
    stopping = threading.Event()

    def forward():
        if manual is not None:  # the proxies' command lines come first
            proxies = []
            for line in proc.stdout:
                if line.startswith("HYDRA_LAUNCH:"):
                    proxies.append(line.split(":", 1)[1].strip())
                elif line.startswith("HYDRA_LAUNCH_END"):
                    manual(proxies)
                    break
                else:
                    out.write(line)
        for line in proc.stdout:
            report.append(line)
            del report[:-40]
            if manual is not None and line.startswith(_HYDRA):
                # across machines, a machine that goes down makes MPI's process manager
                # complain before the monitor has named the rank: held back, and shown only
                # when the monitor cannot explain the failure
                held.append(line)
                del held[:-40]
                continue
            if not stopping.is_set():  # mpiexec's own complaints while we stop the job
                out.write(line)
                out.flush()

    reader = threading.Thread(target=forward, daemon=True)
    reader.start()
    previous = {}
    received = []  # the signals the launcher received and passed on to the ranks

    def relay(signum, frame):
        received.append(signum)
        stopping.set()
        if monitor is not None:
            with monitor.lock:
                monitor.stopping = True  # the ranks' ends from now on are this signal's doing
        try:
            os.killpg(proc.pid, signum)
        except ProcessLookupError:
            pass

    if threading.current_thread() is threading.main_thread():
        for s in _RELAYED:
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
    if received:
        if monitor is not None:
            _sweep_after(monitor, started)
        name = signal.Signals(received[0]).name
        raise JobError(f"paddle_hl.distributed: the launcher received {name} and passed it on "
                       f"to the {nprocs} ranks, which were stopped (mpiexec exited with code "
                       f"{code}).", exit_code=128 + received[0])
    if monitor is None:
        if code == 0:
            return 0
        raise JobError(_describe(code, "".join(report), nprocs, None, [], {}))
    hosts_of = dict(monitor.hosts) if hosts else None
    with monitor.lock:
        ended = dict(monitor.ended)
    if teardown_only(code, ended, nprocs) and not monitor.ended_badly():
        code = 0
    if code == 0 and not monitor.ended_badly():
        return 0
    _sweep_after(monitor, started)
    failure = monitor.failure
    if failure is None and not monitor.lost and held:
        out.write("".join(held))
        out.flush()
    tb = None
    if failure is not None and failure[0] == "failed":
        tb = _read_error(run_dir, failure[1])
    elif failure is None and monitor.lost:
        tb = _read_error(run_dir, sorted(monitor.lost)[0])  # what it waited for, and why
    raise JobError(_describe(code, "".join(report), nprocs, failure, monitor.lost,
                             stuck, monitor.ended, hosts_of), traceback=tb)


_HYDRA = ("[mpiexec@", "[proxy:")
_RELAYED = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP")
                 if hasattr(signal, n))



def _read_error(run_dir, rank):
    try:
        with open(error_path(run_dir, rank), encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def _sweep_after(monitor, since, wait=3.0):
    """Sweep the job's shared memory once its ranks are gone: mpiexec can exit while a rank it
    signalled is still ending, and a file that rank still maps would be left alone."""
    pids = list(monitor.pids.values())
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.02)
    return sweep_shm(since)


def _alive(pid):
    """Whether process ``pid`` still runs (a zombie does not: its memory is released)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except OSError:
            return True
        return not os.path.isdir("/proc")  # no /proc: only the signal can tell


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


def _on(hosts, ranks):
    """`` on host h2``: where ranks ran, when the job spans machines."""
    names = sorted({hosts[r] for r in ranks if r in hosts}) if hosts else []
    return f" on host {', '.join(names)}" if names else ""


def teardown_only(code, ended, nprocs):
    """Whether mpiexec's exit ``code`` is a fault of its own teardown after a job that
    succeeded: every one of the ``nprocs`` ranks reported a clean exit (``ended``: rank ->
    status) and mpiexec then died of SIGPIPE, which happens across machines when it writes to
    a proxy that has already ended."""
    return (code == -signal.SIGPIPE and len(ended) == nprocs
            and all(s == "0" for s in ended.values()))


def _describe(code, text, nprocs, failure, lost, stuck, ended=None, hosts=None):
    early = sorted(r for r, s in (ended or {}).items() if s == "0")
    if failure is not None:
        kind, rank, pid, status = failure
        if kind == "failed":
            what = (f"rank {rank} (pid {pid}{_on(hosts, [rank])}) failed with exit status "
                    f"{status} (its error is above)")
        else:
            what = (f"rank {rank} (pid {pid}{_on(hosts, [rank])}) died without an error of its "
                    "own (killed by a signal, e.g. out of memory, or its host went down)")
    elif lost and early:
        what = (f"rank(s) {early} exited with code 0 while rank(s) {sorted(lost)} still "
                "waited for them in a collective (every rank must make the same collective "
                "calls)")
    elif lost:
        what = f"rank(s) {sorted(lost)} gave up waiting for the others"
        if stuck:
            what += (f"; rank(s) {sorted(stuck)} (pid {', '.join(map(str, stuck.values()))}"
                     f"{_on(hosts, stuck)}) were stuck and did not answer")
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
