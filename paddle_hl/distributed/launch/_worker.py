"""The bootstrap each rank runs under mpiexec: set Paddle's launcher environment from MPI's,
report to the launcher's monitor (so that a rank that dies can be named), then run the user's
script or the spawned function."""

from __future__ import annotations

import os
import pickle
import runpy
import socket
import sys
import traceback

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
    per_node = max(1, size // len(ips))
    endpoints = [f"{ips[min(i // per_node, len(ips) - 1)]}:{base + i % per_node}"
                 for i in range(size)]
    return {
        "PADDLE_TRAINER_ID": str(rank), "PADDLE_TRAINERS_NUM": str(size),
        "PADDLE_GLOBAL_RANK": str(rank), "PADDLE_GLOBAL_SIZE": str(size),
        "PADDLE_LOCAL_RANK": str(local), "PADDLE_LOCAL_SIZE": str(local_size),
        "PADDLE_RANK_IN_NODE": str(local), "PADDLE_NNODES": str(len(ips)),
        "PADDLE_CURRENT_ENDPOINT": endpoints[rank],
        "PADDLE_TRAINER_ENDPOINTS": ",".join(endpoints),
        "PADDLE_MASTER": endpoints[0], "PADDLE_DISTRI_BACKEND": "mpi",
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
    run_dir = argv[argv.index("--run-dir") + 1]
    # whole lines: each line reaches mpiexec in one write, so the ranks' lines do not
    # interleave mid-line (unbuffered, print() writes every piece on its own)
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(line_buffering=True)
    env = rank_environment()
    os.environ.update(env)
    rank = int(env["PADDLE_TRAINER_ID"])
    monitor = _connect(rank)
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
        traceback.print_exc()
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
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        s.sendall(f"start {rank} {os.getpid()}\n".encode())
    except OSError:
        s.close()
        return None
    return s


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
