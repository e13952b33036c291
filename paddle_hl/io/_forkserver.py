"""How DataLoader workers start: from a fork server, never by forking the main process.

Forking a process while another of its threads is inside an OpenBLAS call hangs for ever:
OpenBLAS's fork handler shuts its thread pool down and waits for workers that are busy with the
other thread's product. Forking the main process of a training script (where the model, a
prefetch thread or a notebook's background work may be running matrix products at any time) is
therefore never safe. Instead, the first DataLoader with workers starts one small server
process of its own: a fresh interpreter started by fork+exec in one step (which runs no fork
handlers), single-threaded, that imports ``paddle_hl.io._worker`` once. Each worker is a fork of
that server, so it starts with paddle_hl imported (a few ms) and the fork happens in a process
where no other thread can hold a lock.

What a worker runs (the dataset, the fetcher, worker_init_fn) travels to it pickled once, by
``_pickle.dumps``, which pickles classes and functions defined in ``__main__`` (a script or a
notebook) by value. The worker never imports the main module, so a script that builds its
DataLoader at top level without an ``if __name__ == "__main__":`` guard works as it does under
fork. The server keeps the environment and working directory it started with; each worker then
moves to the parent's current working directory.

The server is private to paddle_hl (the standard library's shared fork server and its preload
list are left alone) and ends when the main process does.
"""

from __future__ import annotations

import io
import multiprocessing as mp
import os
import threading
from multiprocessing import context, forkserver, popen_forkserver, reduction, spawn, util

__all__ = []

PRELOAD = ["paddle_hl.io._worker"]

_lock = threading.Lock()
_server = None


def available() -> bool:
    """Whether this platform has fork servers (POSIX)."""
    return "forkserver" in mp.get_all_start_methods()


def get_context():
    """The multiprocessing context the workers' queues, events and shared arrays come from."""
    return mp.get_context("forkserver")


def _get_server():
    global _server
    with _lock:
        if _server is None:
            server = forkserver.ForkServer()
            server.set_forkserver_preload(PRELOAD)
            _server = server
        return _server


_starting = []


def start_server_soon():
    """Start the server in the background, once (the first worker start waits for it)."""
    if not available():
        return
    with _lock:
        if _starting:
            return
        _starting.append(True)

    def run():
        try:
            _get_server().ensure_running()
        except Exception:  # noqa: BLE001  (the first worker start retries and reports it)
            pass

    threading.Thread(target=run, name="paddle_hl DataLoader fork server", daemon=True).start()


class _Popen(popen_forkserver.Popen):
    """A worker forked from paddle_hl's server, told not to import the main module."""

    def _launch(self, process_obj):
        prep = spawn.get_preparation_data(process_obj._name)
        # what the worker runs comes by value (see _pickle); importing the user's script
        # again would run its top-level code in every worker
        prep.pop("init_main_from_path", None)
        prep.pop("init_main_from_name", None)
        buf = io.BytesIO()
        context.set_spawning_popen(self)
        try:
            reduction.dump(prep, buf)
            reduction.dump(process_obj, buf)
        finally:
            context.set_spawning_popen(None)
        self.sentinel, w = _get_server().connect_to_new_process(self._fds)
        # a duplicate of the data pipe's write end tells the worker when this process is gone
        parent_w = os.dup(w)
        self.finalizer = util.Finalize(self, util.close_fds, (parent_w, self.sentinel))
        with open(w, "wb", closefd=True) as f:
            f.write(buf.getbuffer())
        self.pid = forkserver.read_signed(self.sentinel)


class WorkerProcess(context.ForkServerProcess):
    """A DataLoader worker process started from paddle_hl's fork server."""

    @staticmethod
    def _Popen(process_obj):  # noqa: N802  (multiprocessing's name)
        return _Popen(process_obj)
