"""``python -m paddle_hl.distributed.launch``: start a data-parallel job.

Example::

    python -m paddle_hl.distributed.launch --nproc_per_node 2 train.py --epochs 3

starts two processes of ``train.py`` through MPI's launcher (``mpiexec``, from the mpich wheel
of the ``distributed`` extra or the cluster's MPI). Each process sees Paddle's launcher
variables (``PADDLE_TRAINER_ID``, ``PADDLE_TRAINERS_NUM``, ``PADDLE_CURRENT_ENDPOINT``,
``PADDLE_TRAINER_ENDPOINTS``, ``PADDLE_LOCAL_RANK``, ...), so a script written for Paddle's
launcher runs unchanged. If a rank fails, the others are stopped and the launcher exits with
an error naming the rank; collectives waiting on a dead rank give up after
``PADDLE_HL_COLLECTIVE_TIMEOUT`` seconds (at once when the rank ended on this machine). SIGINT,
SIGTERM and SIGHUP are forwarded to the ranks (the launcher then exits with 128 + the signal's
number); if the launcher dies, however it dies, the ranks on this machine end themselves and
remove the job's folder and shared memory.

Several machines, as with Paddle's launcher: run the same command on each of them, with
``--ips 10.0.0.1,10.0.0.2`` (the first is the master) or ``--master 10.0.0.1:PORT --nnodes 2``
(see ``_nodes``: the machines meet at the master, which starts the job; no ssh needed).

Options (Paddle's that apply): ``--nproc_per_node`` (processes on this machine; default: the
number of CPUs this process may use, or of ``--devices``), ``--nnodes``, ``--ips``,
``--devices`` /
``--gpus`` (one process per listed device), ``--log_dir`` (ranks other than 0 write
``workerlog.N`` there; rank 0 prints to the terminal), ``--job_id``, ``--master``,
``--run_mode`` (``collective`` only).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

from ... import backend
from ._job import JobError, run

__all__ = []  # the public names are re-exported by paddle_hl.distributed


def _parser():
    p = argparse.ArgumentParser(
        prog="python -m paddle_hl.distributed.launch",
        description="Start a data-parallel job of N processes of a training script.")
    p.add_argument("--nproc_per_node", type=int, default=None,
                   help="processes on this machine")
    p.add_argument("--nnodes", type=str, default="1", help="number of machines")
    p.add_argument("--ips", type=str, default=None, help="comma-separated machine addresses")
    p.add_argument("--devices", "--gpus", "--cpus", dest="devices", type=str, default=None,
                   help="comma-separated device ids: one process per device")
    p.add_argument("--log_dir", type=str, default=None,
                   help="folder for workerlog.N of ranks other than 0")
    p.add_argument("--job_id", type=str, default="default")
    p.add_argument("--master", type=str, default=None,
                   help="HOST:PORT where the machines of a multi-machine job meet")
    p.add_argument("--rank", type=int, default=-1, help="accepted for compatibility")
    p.add_argument("--run_mode", type=str, default="collective",
                   choices=["collective"], help="only collective (data parallel) training")
    p.add_argument("training_script", help="the script to run on every rank")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def launch():
    """Parse the launcher's command line (``sys.argv``) and run the job.

    Returns:
        int: the exit status (0 when every rank succeeded); errors end the process with
        status 1 when run as ``python -m``.
    """
    args = _parser().parse_args(sys.argv[1:])
    if not os.path.isfile(args.training_script):
        raise SystemExit(f"paddle_hl.distributed.launch: training script "
                         f"{args.training_script!r} not found")
    ips = [ip for ip in (args.ips or "").split(",") if ip]
    per_node = args.nproc_per_node
    if per_node is None:
        per_node = len(args.devices.split(",")) if args.devices else backend.cpu_count()
    if per_node < 1:
        raise SystemExit(f"paddle_hl.distributed.launch: --nproc_per_node must be >= 1, got "
                         f"{per_node}")
    try:
        nnodes = int(args.nnodes)
    except ValueError:
        raise SystemExit(f"paddle_hl.distributed.launch: --nnodes must be a number of machines "
                         f"(elastic ranges such as 2:4 are not supported), got "
                         f"{args.nnodes!r}") from None
    nnodes = max(nnodes, len(ips), 1)
    env = dict(os.environ)
    env["PADDLE_HL_IPS"] = ",".join(ips) if ips else "127.0.0.1"
    env["PADDLE_JOB_ID"] = args.job_id
    with tempfile.TemporaryDirectory(prefix="paddle_hl_job_") as run_dir:
        worker = ["--run-dir", run_dir]
        if args.log_dir:
            os.makedirs(args.log_dir, exist_ok=True)
            worker += ["--log-dir", os.path.abspath(args.log_dir)]
        worker += ["--script", args.training_script, *args.training_script_args]
        try:
            if nnodes > 1:
                from ._nodes import run_nodes

                return run_nodes(nnodes, ips, args.master, per_node, env, worker, run_dir)
            return run(per_node, worker, env, run_dir)
        except JobError as e:
            print(str(e), file=sys.stderr)
            return e.exit_code
