"""The bootstrap each rank runs under mpiexec: set Paddle's launcher environment from MPI's,
report to the launcher's monitor (so that a rank that dies can be named), then run the user's
script or the spawned function.

The connection to the monitor is also the rank's tie to the launcher: a thread reads it for the
monitor's notices that another rank has ended (a collective waiting for that rank then stops
with an error saying so), and when it closes without the rank having ended, the launcher has
died (mpiexec runs in a session of its own, so nothing else would stop the ranks): the rank
removes the job's folder and the shared-memory files it maps, and exits. The rank also asks
the kernel to stop it when its parent (MPI's process manager) dies.

MPICH keeps the name of its shared-memory segment (``/dev/shm/mpich_shm_*``, made in
``MPI_Init``) until ``MPI_Finalize``, so a rank that is killed would leave it (and its memory)
behind; and when a launcher dies, MPI's process manager on each machine kills its ranks with
SIGKILL within milliseconds, often before the rank's own clean-up has run. So each rank removes
the segment's name as soon as every rank of its machine maps it (see
:func:`unlink_segment_when_mapped`): the memory stays for the ranks, and goes with the last of
them however they end.
"""

from __future__ import annotations

import os
import pickle
import runpy
import shutil
import signal
import socket
import sys
import threading
import time
import traceback

from ._protocol import error_path, messages, socket_name

__all__ = []


def _first(names, default):
    for n in names:
        v = os.environ.get(n)
        if v not in (None, ""):
            return int(v)
    return default


def rank_environment():
    """Paddle's launcher variables for this rank, derived from the MPI launcher's."""
    rank = _first(("PMI_RANK", "OMPI_COMM_WORLD_RANK"), 0)
    size = _first(("PMI_SIZE", "OMPI_COMM_WORLD_SIZE"), 1)
    local = _first(("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK"), rank)
    local_size = _first(("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE"), size)
    base = int(os.environ.get("PADDLE_HL_BASE_PORT", "6170"))
    ips = os.environ.get("PADDLE_HL_IPS", "127.0.0.1").split(",")
    slots = os.environ.get("PADDLE_HL_SLOTS")  # ranks per machine, when the launcher knows
    if slots:
        endpoints = [f"{ip}:{base + k}" for ip, n in zip(ips, slots.split(","))
                     for k in range(int(n))][:size]
    else:
        per_node = max(1, size // len(ips))
        endpoints = [f"{ips[min(i // per_node, len(ips) - 1)]}:{base + i % per_node}"
                     for i in range(size)]
    endpoints += [endpoints[-1]] * (size - len(endpoints))
    return {
        "PADDLE_TRAINER_ID": str(rank), "PADDLE_TRAINERS_NUM": str(size),
        "PADDLE_GLOBAL_RANK": str(rank), "PADDLE_GLOBAL_SIZE": str(size),
        "PADDLE_LOCAL_RANK": str(local), "PADDLE_LOCAL_SIZE": str(local_size),
        "PADDLE_RANK_IN_NODE": str(local), "PADDLE_NNODES": str(len(ips)),
        "PADDLE_CURRENT_ENDPOINT": endpoints[rank],
        "PADDLE_TRAINER_ENDPOINTS": ",".join(endpoints),
        "PADDLE_MASTER": os.environ.get("PADDLE_HL_MASTER") or endpoints[0],
        "PADDLE_DISTRI_BACKEND": "mpi",
        "FLAGS_selected_gpus": str(local), "FLAGS_selected_cpus": str(local),
    }


def _redirect(log_dir, rank):
    os.makedirs(log_dir, exist_ok=True)
    fd = os.open(os.path.join(log_dir, f"workerlog.{rank}"), os.O_WRONLY | os.O_CREAT |
                 os.O_TRUNC, 0o644)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


def main(argv):
    # whole lines, one write each: mpiexec merges the ranks' output, and unbuffered text would
    # interleave mid-line; line buffering still shows every line as soon as it is printed
    # (write_through off: under PYTHONUNBUFFERED, which a machine's launcher may pass on to
    # MPI's proxy there, every piece of a print would be a write of its own)
    sys.stdout.reconfigure(line_buffering=True, write_through=False)
    sys.stderr.reconfigure(line_buffering=True, write_through=False)
    run_dir = argv[argv.index("--run-dir") + 1]
    env = rank_environment()
    os.environ.update(env)
    rank = int(env["PADDLE_TRAINER_ID"])
    _die_with_parent()
    if os.path.isdir("/proc"):
        threading.Thread(target=unlink_segment_when_mapped,
                         args=(int(env["PADDLE_LOCAL_SIZE"]),), daemon=True,
                         name="paddle_hl shared-memory name").start()
    monitor = _connect(rank)
    if monitor is not None:
        threading.Thread(target=_watch, args=(monitor, rank, run_dir), daemon=True,
                         name="paddle_hl launcher watch").start()
    if "--log-dir" in argv:
        log_dir = argv[argv.index("--log-dir") + 1]
        if rank != 0:
            _redirect(log_dir, rank)
    status = 1
    try:
        if "--spawn" in argv:
            with open(argv[argv.index("--spawn") + 1], "rb") as f:
                func, args = _loads(f.read())
            result = func(*args)
            tmp = os.path.join(run_dir, f"rank{rank}.result.part")
            with open(tmp, "wb") as f:
                pickle.dump(result, f)
            os.replace(tmp, os.path.join(run_dir, f"rank{rank}.result"))
            status = 0
        else:
            script = argv[argv.index("--script") + 1]
            sys.argv = [script] + argv[argv.index("--script") + 2:]
            sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
            try:
                runpy.run_path(script, run_name="__main__")
                status = 0
            except SystemExit as e:
                status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
                if e.code is not None and not isinstance(e.code, int):
                    print(e.code, file=sys.stderr)
    except BaseException as e:
        if monitor is not None and _closed(monitor):
            # the launcher died (and this rank's peers with it): clean up before anything
            # else, as writing to the output may end this process (the pipe is gone)
            _launcher_gone(rank, run_dir)
        traceback.print_exc()
        _save_error(run_dir, rank)
        if _lost_peer(e):
            # not this rank's own failure: another rank died; the launcher names that one
            status = "lost"
        else:
            print(f"paddle_hl.distributed: rank {rank} failed (see the traceback above)",
                  file=sys.stderr)
            status = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        if monitor is not None:
            _ENDING.set()  # from now on a closed connection is not the launcher's death
            try:
                monitor.sendall(f"exit {status}\n".encode())
            except OSError:
                pass
    if status == "lost":
        os._exit(1)
    if status:
        # a failed rank skips the interpreter's teardown: MPI's finalisation would wait for the
        # other ranks; exiting non-zero makes mpiexec stop them instead
        os._exit(status)
    sys.exit(0)


def _connect(rank):
    """Report to the launcher's monitor; the connection stays open until this process ends, so
    the launcher learns at once if it is killed."""

    path = os.environ.get("PADDLE_HL_JOB_MONITOR")
    if not path:
        return None
    line = f"start {rank} {os.getpid()} {socket.gethostname().split()[0] or '?'}"
    if path.startswith("tcp:"):  # the job spans machines: "tcp:ADDRESS:PORT:TOKEN"
        _, host, port, token = path.split(":", 3)
        try:
            s = socket.create_connection((host, int(port)), timeout=30)
            s.settimeout(None)
        except (OSError, ValueError):
            return None
        line += f" {token}"
    else:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        if not path.startswith("tcp:"):
            s.connect(socket_name(path))
        s.sendall(f"{line}\n".encode())
    except OSError:
        s.close()
        return None
    return s


_ENDING = threading.Event()  # set once this rank reports its own end
_PR_SET_PDEATHSIG = 1


def _die_with_parent():
    """Linux: have the kernel send SIGTERM to this rank when its parent (the MPI process manager
    that started it) dies; elsewhere nothing (the launcher watch still applies)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        parent = os.getppid()
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the request: act on it now
            os.kill(os.getpid(), signal.SIGTERM)
    except (OSError, AttributeError):
        pass


_SEGMENT = "mpich_shm_"


def _named_segments(maps):
    """The MPI shared-memory files that the process of ``maps`` (a ``/proc/PID/maps`` path)
    maps and that still have their name; None when it cannot be read."""
    found = set()
    try:
        with open(maps, encoding="utf-8", errors="replace") as f:
            for line in f:
                if _SEGMENT not in line:
                    continue
                parts = line.split(None, 5)
                path = parts[5].strip() if len(parts) == 6 else ""
                if os.path.basename(path).startswith(_SEGMENT) and \
                        not path.endswith(" (deleted)"):
                    found.add(path)
    except OSError:
        return None
    return found


def _siblings(proc="/proc"):
    """The pids of this process's parent's children (this machine's ranks, under MPI's process
    manager), this process included; None when the kernel does not list them."""
    ppid = os.getppid()
    kids = set()
    try:
        for tid in os.listdir(f"{proc}/{ppid}/task"):
            with open(f"{proc}/{ppid}/task/{tid}/children") as f:
                kids.update(int(k) for k in f.read().split())
    except (OSError, ValueError):
        return None
    return kids


def unlink_segment_when_mapped(local_size, proc="/proc", first=0.02, longest=1.0, rounds=None):
    """Remove the name of MPICH's shared-memory segment once all ``local_size`` ranks of this
    machine map it; the ranks keep using the memory, which the kernel frees when the last of
    them ends, however it ends (even killed by SIGKILL, which no clean-up of the rank's own
    can outrun). MPICH's own removal at ``MPI_Finalize`` then finds nothing to remove, which it
    accepts.

    Polls this process's mappings (and, once a segment appears, its sibling ranks'), first
    every ``first`` seconds, then less often up to every ``longest`` seconds (a rank may import
    for a while before ``MPI_Init``); returns the paths removed once one was, or after
    ``rounds`` polls (None: until then). A segment is only removed when exactly the ranks
    of this machine map it: a rank that has not attached yet keeps the name."""
    delay = first
    n = 0
    while rounds is None or n < rounds:
        n += 1
        mine = _named_segments(f"{proc}/self/maps")
        peers = _siblings(proc) if mine else None
        if mine and peers:
            counts = dict.fromkeys(mine, 0)
            for pid in peers:
                theirs = _named_segments(f"{proc}/{pid}/maps") or ()
                for path in theirs:
                    if path in counts:
                        counts[path] += 1
            removed = []
            for path, holders in counts.items():
                if holders >= local_size:
                    try:
                        os.unlink(path)
                        removed.append(path)
                    except FileNotFoundError:
                        removed.append(path)  # another rank of this machine was first
                    except OSError:
                        pass
            if removed:
                return removed
        time.sleep(delay)
        delay = min(delay * 1.5, longest)
    return []


def _watch(monitor, rank, run_dir):
    """Read the monitor's notices (another rank ended); when the connection closes while this
    rank still runs, the launcher is gone: clean up and end this rank."""
    from paddle_hl.distributed import _comm

    for word, rest in messages(monitor):
        if word == "ended":
            other, _, status = rest.partition(" ")
            try:
                _comm.note_peer_end(int(other), status)
            except ValueError:
                pass
    if _ENDING.is_set():
        return
    _launcher_gone(rank, run_dir)


def _launcher_gone(rank, run_dir):
    """The launcher died: remove what the job leaves on this machine and end at once (the
    other ranks do the same; each removal tolerates the others')."""
    remove_job_files(run_dir)  # first: writing to the output may end this process
    try:
        os.write(2, f"paddle_hl.distributed: rank {rank} (pid {os.getpid()}): the launcher "
                    "ended without stopping the job; this rank stops\n".encode())
    except OSError:
        pass
    os._exit(1)


def _closed(monitor):
    """Whether the launcher's end of the monitor connection has closed (without waiting)."""
    try:
        return monitor.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def remove_job_files(run_dir, maps="/proc/self/maps"):
    """Remove the job's folder and the shared-memory files this process maps (MPI's segments,
    DataParallel's buckets), which a job that does not end normally would leave behind.
    Returns the shared-memory files removed."""
    shutil.rmtree(run_dir, ignore_errors=True)
    removed = []
    try:
        with open(maps, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return removed
    for line in lines:
        parts = line.split(None, 5)
        if len(parts) < 6:
            continue
        path = parts[5].strip()
        name = os.path.basename(path)
        if path.endswith(" (deleted)") or not name.startswith(("mpich_shm_", "paddle_hl_dp_")):
            continue
        if path in removed:
            continue
        try:
            os.unlink(path)
            removed.append(path)
        except OSError:
            pass
    return removed


def _save_error(run_dir, rank):
    """Leave this rank's traceback in the job's folder, for the error the caller gets."""

    path = error_path(run_dir, rank)
    try:
        tmp = f"{path}.{os.getpid()}.part"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(traceback.format_exc())
        os.replace(tmp, path)
    except OSError:
        pass


def _lost_peer(e):
    from paddle_hl.distributed._comm import PeerLost

    if isinstance(e, PeerLost):
        return True
    mpi = sys.modules.get("mpi4py.MPI")
    return mpi is not None and isinstance(e, mpi.Exception)


def _loads(data):
    try:
        return pickle.loads(data)
    except Exception:
        import cloudpickle  # the spawning side used it for functions defined in __main__

        return cloudpickle.loads(data)


if __name__ == "__main__":
    main(sys.argv[1:])
