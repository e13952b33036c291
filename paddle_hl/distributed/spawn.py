"""``spawn``: run a function on N processes of a data-parallel job (from a script or a notebook)."""

from __future__ import annotations

import atexit
import io
import os
import pickle
import shutil
import sys
import tempfile
import threading

from .. import backend
from .launch._job import JobError, run

__all__ = []  # the public names are re-exported by paddle_hl.distributed


def _dumps(func, args):
    """Pickle ``(func, args)``; a function defined in ``__main__`` (a notebook cell, a script)
    cannot be found by name in the new processes, so it travels by value through cloudpickle."""
    if getattr(func, "__module__", None) == "__main__" or "<locals>" in getattr(
            func, "__qualname__", ""):
        try:
            import cloudpickle
        except ImportError:
            raise ImportError(
                f"paddle_hl.distributed.spawn: {getattr(func, '__qualname__', func)!r} is "
                "defined in __main__ (a notebook or the running script), so the new processes "
                "cannot import it: pip install cloudpickle (part of 'paddle_hl[distributed]'), "
                "or define it in a module file") from None
        return cloudpickle.dumps((func, tuple(args)))
    try:
        return pickle.dumps((func, tuple(args)))
    except (pickle.PicklingError, AttributeError, TypeError) as e:
        raise TypeError(f"paddle_hl.distributed.spawn: func and args must be picklable ({e})") \
            from None


class MultiprocessContext:
    """The running job of :func:`spawn`.

    Attributes:
        nprocs (int): the number of processes.
        return_values (list): after ``join()``, what ``func`` returned on each rank.
        progress: the per-rank progress display (None when not shown); its ``history`` holds
            the merged metrics of every epoch and evaluation.
    """

    def __init__(self, nprocs, payload, options):
        self.nprocs = nprocs
        self.return_values = None
        self._run_dir = tempfile.mkdtemp(prefix="paddle_hl_spawn_")
        path = os.path.join(self._run_dir, "payload.pkl")
        with open(path, "wb") as f:
            f.write(payload)
        env = dict(os.environ)
        # the new processes find modules where this one does (a notebook's folder, paths
        # added to sys.path), as multiprocessing's spawn does
        env["PYTHONPATH"] = os.pathsep.join(
            dict.fromkeys(os.path.abspath(p or os.curdir) for p in sys.path
                          if os.path.isdir(p or os.curdir)))
        env.update({k: str(v) for k, v in options.get("env", {}).items()})
        self._error = None
        self._code = None
        self._joined = False
        out = _NotebookSafeOut()
        self.progress = None
        show = options.get("progress")
        if show is None:
            from ..notebook._env import in_notebook

            show = in_notebook()
        if show:
            from ._progress import REPORT_ENV, SpawnProgress

            # the ranks report Model.fit's progress as tagged lines; this draws them
            self.progress = out = SpawnProgress(nprocs, out, display=options.get("display"))
            env[REPORT_ENV] = "1"

        def target():
            try:
                self._code = run(nprocs, ["--run-dir", self._run_dir, "--spawn", path], env,
                                 self._run_dir, out=out)
            except Exception as e:  # reported by join()
                self._error = e

        self._thread = threading.Thread(target=target, daemon=True)
        self._thread.start()

    def join(self, timeout=None) -> bool:
        """Wait for the job (at most ``timeout`` seconds); True when it has finished.

        Raises:
            JobError: a rank failed: the message names it and, when it raised an exception,
                ends with that rank's traceback.
        """
        self._thread.join(timeout)
        if self._thread.is_alive():
            return False
        if self._joined:
            return True
        self._joined = True
        try:
            if self._error is not None:
                e = self._error
                if isinstance(e, JobError) and e.traceback:
                    raise JobError(f"{e}\n\nThe rank's exception:\n\n{e.traceback.rstrip()}",
                                   e.exit_code, e.traceback) from None
                raise e
            values = []
            for r in range(self.nprocs):
                with open(os.path.join(self._run_dir, f"rank{r}.result"), "rb") as f:
                    values.append(pickle.load(f))
            self.return_values = values
        finally:
            shutil.rmtree(self._run_dir, ignore_errors=True)
        return True


class _NotebookSafeOut(io.TextIOBase):
    """Write the ranks' output to whatever ``sys.stdout`` is now (a notebook cell's stream)."""

    def write(self, s):
        return sys.stdout.write(s)

    def flush(self):
        sys.stdout.flush()


def spawn(func, args=(), nprocs=-1, join=True, daemon=False, **options):
    """Run ``func(*args)`` on ``nprocs`` new processes that form one data-parallel job.

    Each process has Paddle's launcher environment, so ``func`` calls
    ``paddle.distributed.init_parallel_env()`` and trains as under
    ``python -m paddle_hl.distributed.launch``. Works from a notebook: a function defined in a
    cell is sent by value (cloudpickle), and the ranks' output appears in the cell.

    Args:
        func (callable): the function to run on every rank.
        args (tuple, optional): its arguments.
        nprocs (int, optional): the number of processes (-1: the CPUs this process may use).
        join (bool, optional): wait for the job to end. Default: True.
        daemon (bool, optional): with ``join=False``, whether the caller's exit may end the
            job (True) or waits for it (False, the default). The ranks never outlive the
            process that started them.
        **options: ``env`` (dict): extra environment variables of the ranks;
            ``progress`` (bool): show ``Model.fit``'s progress as one row per rank with the
            merged metrics (default: when running in Jupyter); ``display`` (callable): what
            shows that widget (IPython's ``display`` by default).

    Returns:
        MultiprocessContext: the job; ``return_values`` holds each rank's result after
        ``join()``.

    Raises:
        JobError: a rank failed (``join``), with its rank and how it ended.

    Examples:
        >>> import paddle_hl.distributed as dist
        >>> def work(x):
        ...     dist.init_parallel_env()
        ...     return dist.get_rank() * x
        >>> dist.spawn(work, args=(10,), nprocs=2).return_values  # doctest: +SKIP
        [0, 10]
    """
    if nprocs == -1:
        nprocs = backend.cpu_count()
    if not isinstance(nprocs, int) or nprocs < 1:
        raise ValueError(f"paddle_hl.distributed.spawn: nprocs must be a positive int or -1, "
                         f"got {nprocs!r}")
    if not callable(func):
        raise TypeError(f"paddle_hl.distributed.spawn: func must be callable, got "
                        f"{type(func).__name__}")
    ctx = MultiprocessContext(nprocs, _dumps(func, args), options)
    if join:
        ctx.join()
    elif not daemon:
        # as non-daemonic processes: the caller's exit waits for the job (the ranks end with
        # the process that started them)
        atexit.register(_join_at_exit, ctx)
    return ctx


def _join_at_exit(ctx):
    try:
        ctx.join()
    except Exception as e:  # noqa: BLE001  (nobody is left to catch it: say it)
        print(e, file=sys.stderr)


