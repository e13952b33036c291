"""Faults of multi-process jobs: ranks passing mismatched tensors to a collective, a launcher
that dies or is signalled, a long temporary folder, and what ``spawn``'s caller is told when a
rank fails or ends early.

Each scenario is one small job of 2 ranks (a few seconds), bounded by a collective timeout and
a subprocess timeout so that a hang fails the test instead of stalling it."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from ._helpers import ROOT, env

pytest.importorskip("mpi4py")


def _mpiexec():
    from paddle_hl.distributed.launch._job import find_mpiexec

    try:
        return find_mpiexec()
    except RuntimeError:
        pytest.skip("no mpiexec (pip install 'paddle_hl[distributed]' brings the mpich wheel)")


def _script(tmp_path, name, code):
    path = tmp_path / name
    path.write_text(textwrap.dedent(code))
    return path


def _launch_cmd(script, *args, n=2):
    _mpiexec()
    return [sys.executable, "-m", "paddle_hl.distributed.launch", "--nproc_per_node", str(n),
            str(script), *map(str, args)]


def _launch(script, *args, timeout=60, **extra):
    extra.setdefault("PADDLE_HL_COLLECTIVE_TIMEOUT", "20")
    return subprocess.run(_launch_cmd(script, *args), cwd=ROOT, env=env(**extra),
                          capture_output=True, text=True, timeout=timeout)


# ------------------------------------------------------------------ mismatched arguments

MISMATCH = """
import os, sys
import numpy as np
import paddle_hl as paddle
import paddle_hl.distributed as dist

dist.init_parallel_env()
r = dist.get_rank()

def T(shape, dtype="float32"):
    return paddle.to_tensor(np.ones(shape, dtype))

cases = {
    "all_reduce_shape": lambda: dist.all_reduce(T(3 + r)),
    "all_reduce_dtype": lambda: dist.all_reduce(T(3, "float64" if r == 0 else "float32")),
    "all_reduce_op": lambda: dist.all_reduce(T(3), op=dist.ReduceOp.MAX if r else
                                             dist.ReduceOp.SUM),
    "broadcast": lambda: dist.broadcast(T([2, 3 + r]), src=0),
    "all_gather": lambda: dist.all_gather([], T(3, "int64" if r else "int32")),
    "reduce": lambda: dist.reduce(T(3 + r), dst=0),
    "reduce_scatter": lambda: dist.reduce_scatter(T(3 + r), [T(3 + r), T(3 + r)]),
    "alltoall": lambda: dist.alltoall([T(3 + r), T(3 + r)], []),
    "scatter": lambda: dist.scatter(T(3 + r), [T(3), T(3)] if r == 0 else None, src=0),
    "alltoall_single": lambda: dist.alltoall_single(
        T([4, 2]), T([4, 2]), [1, 3] if r == 0 else [2, 2], [2, 2]),
    "send_recv": lambda: dist.send(T([2, 2]), 1) if r == 0 else dist.recv(T(4), 0),
    "send_recv_longer": lambda: dist.send(T(300000), 1) if r == 0 else dist.recv(T(4), 0),
    "isend_irecv_any": lambda: (dist.isend(T(4, "int64"), 1) if r == 0
                                else dist.irecv(T(4), None)).wait(),
    "data_parallel": lambda: paddle.DataParallel(paddle.nn.Linear(4, 2 + r)),
}
for name, call in cases.items():
    try:
        call()
        print(f"CASE {name} rank {r}: no error", flush=True)
    except ValueError as e:
        print(f"CASE {name} rank {r}: {e}", flush=True)
# receives from any rank and from a given one, mixed, still get their own messages in order
# (the second pair is large enough to go by rendezvous, not eagerly)
for n in (5, 200000):
    if r == 0:
        a, b = T(n), T(2)
        first = dist.irecv(a, None)
        second = dist.irecv(b, 1)
        dist.send(T(3) * 7, 1)
        second.wait()
        first.wait()
        print(f"ORDER {n} rank 0: {a.numpy()[:2].tolist()} {b.numpy().tolist()}", flush=True)
    else:
        got = T(3)
        dist.send(T(n) * 3, 0)
        dist.send(T(2) * 5, 0)
        dist.recv(got, 0)
        print(f"ORDER {n} rank 1: {got.numpy().tolist()}", flush=True)
# the ranks agree again: a matching all-reduce still sums
t = T(3)
dist.all_reduce(t)
print(f"SUM rank {r}: {t.numpy().tolist()}", flush=True)
# debug mode: each gradient bucket is compared before it is summed
os.environ["PADDLE_HL_DP_CHECK"] = "1"
net = paddle.nn.Sequential(paddle.nn.Linear(4, 4), paddle.nn.Linear(4, 4))
model = paddle.DataParallel(net, comm_buffer_size=1e-5, last_comm_buffer_size=1e-5)
model(T([2, 4])).sum().backward()  # the same buckets on both ranks: fine
red = model._reducer
if r == 1:  # this rank now sums its buckets in another order
    red.buckets[0], red.buckets[1] = red.buckets[1], red.buckets[0]
try:
    model(T([2, 4])).sum().backward()
    print(f"CASE buckets rank {r}: no error", flush=True)
except ValueError as e:
    print(f"CASE buckets rank {r}: {e}", flush=True)
"""


@pytest.fixture(scope="module")
def mismatch_output(tmp_path_factory):
    script = _script(tmp_path_factory.mktemp("mismatch"), "mismatch.py", MISMATCH)
    res = _launch(script, PADDLE_HL_COLLECTIVE_TIMEOUT="10", timeout=120)
    return res, res.stdout + res.stderr


def _case(out, name, rank):
    m = re.search(rf"^CASE {name} rank {rank}: (.*)$", out, re.M)
    assert m, out
    return m.group(1)


@pytest.mark.parametrize("name,fn,parts", [
    ("all_reduce_shape", "all_reduce",
     ["rank 0: tensor [3] float32", "rank 1: tensor [4] float32"]),
    ("all_reduce_dtype", "all_reduce",
     ["rank 0: tensor [3] float64", "rank 1: tensor [3] float32"]),
    ("all_reduce_op", "all_reduce", ["rank 0: op SUM", "rank 1: op MAX"]),
    ("broadcast", "broadcast", ["rank 0: tensor [2, 3] float32", "rank 1: tensor [2, 4] float32"]),
    ("all_gather", "all_gather", ["rank 0: tensor [3] int32", "rank 1: tensor [3] int64"]),
    ("reduce", "reduce", ["rank 0: tensor [3] float32", "rank 1: tensor [4] float32"]),
    ("reduce_scatter", "reduce_scatter", ["rank 0: tensor [3]", "rank 1: tensor [4]"]),
    ("alltoall", "alltoall", ["rank 0: tensor [3]", "rank 1: tensor [4]"]),
    ("scatter", "scatter", ["rank 0: tensor [3]", "rank 1: tensor [4]"]),
    ("alltoall_single", "alltoall_single", ["rank 0 sends 1 rows to rank 0, which expects 2"]),
    ("data_parallel", "DataParallel",
     ["rank 0: parameter 'weight' of shape [4, 2] float32",
      "rank 1: parameter 'weight' of shape [4, 3] float32"]),
    ("buckets", "DataParallel gradient all_reduce", ["rank 0: ", "rank 1: ", "[4, 4]"]),
])
def test_mismatched_collective_names_ranks_shapes_dtypes_on_every_rank(mismatch_output, name,
                                                                       fn, parts):
    res, out = mismatch_output
    for rank in (0, 1):
        msg = _case(out, name, rank)
        assert msg.startswith(f"paddle_hl.distributed.{fn}: "), msg
        for p in parts:
            assert p in msg, msg
    assert res.returncode == 0, out


@pytest.mark.parametrize("name,fn,sent,got", [
    ("send_recv", "recv", "[2, 2] float32", "[4] float32"),
    ("send_recv_longer", "recv", "[300000] float32", "[4] float32"),
    ("isend_irecv_any", "irecv", "[4] int64", "[4] float32"),
])
def test_mismatched_send_is_named_by_the_receiver(mismatch_output, name, fn, sent, got):
    _, out = mismatch_output
    assert _case(out, name, 0) == "no error"  # the sender cannot know
    msg = _case(out, name, 1)
    assert msg.startswith(f"paddle_hl.distributed.{fn}: rank 0 sent a tensor of shape and "
                          f"dtype {sent}, but rank 1 receives into {got}"), msg


def test_after_a_mismatch_the_ranks_still_agree(mismatch_output):
    _, out = mismatch_output
    for rank in (0, 1):
        assert f"SUM rank {rank}: [2.0, 2.0, 2.0]" in out, out


@pytest.mark.parametrize("n", [5, 200000])
def test_receives_from_any_rank_keep_their_messages_in_order(mismatch_output, n):
    _, out = mismatch_output
    assert f"ORDER {n} rank 0: [3.0, 3.0] [5.0, 5.0]" in out, out
    assert f"ORDER {n} rank 1: [7.0, 7.0, 7.0]" in out, out


# ------------------------------------------------------------------ the launcher's end

LOOP = """
import os, time
import numpy as np
import paddle_hl as paddle
import paddle_hl.distributed as dist

dist.init_parallel_env()
model = paddle.DataParallel(paddle.nn.Linear(4, 2))  # shared gradient buckets too
print(f"PID {dist.get_rank()} {os.getpid()}", flush=True)
t = paddle.to_tensor(np.ones(3, "float32"))
end = time.time() + 60
while time.time() < end:
    dist.all_reduce(t)
    time.sleep(0.01)
"""


# when each rank this file learned of started (clock ticks since boot): the kernel reuses pids
# (pid_max may be 32768, and the suite starts many processes), so a pid that names another
# process now is one whose rank has ended, and must not be killed by the clean-up
_STARTS = {}


def _stat(pid):
    """``(state, start time)`` of process ``pid``, or None when there is none."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return fields[0], fields[19]


def _note(pid):
    """Remember when rank ``pid`` started (see _STARTS); returns pid."""
    st = _stat(pid)
    if st is not None:
        _STARTS.setdefault(pid, st[1])
    return pid


def _gone(pid):
    """True once ``pid`` has ended (a zombie waiting for its parent counts as ended, and so
    does a pid the kernel has given to another process since)."""
    st = _stat(pid)
    if st is None or st[0] == "Z":
        return True
    return pid in _STARTS and st[1] != _STARTS[pid]


def _start_loop(tmp_path):
    """Start a 2-rank job looping on all-reduces; return the launcher and the ranks' pids."""
    script = _script(tmp_path, "loop.py", LOOP)
    proc = subprocess.Popen(_launch_cmd(script), cwd=ROOT, env=env(), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pids = {}
    deadline = time.monotonic() + 60
    while len(pids) < 2 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if line.startswith("PID "):
            _, rank, pid = line.split()
            pids[int(rank)] = _note(int(pid))
    if len(pids) < 2:
        proc.kill()
        pytest.fail(f"the job did not start: {proc.communicate(timeout=10)}")
    return proc, pids


def _job_files(pid, named=True):
    """The job's folder and the shared-memory files rank ``pid`` maps (this job's own names,
    so that other jobs running beside this test do not matter): those that still have their
    name, or with ``named=False`` all of them (an unlinked one without its " (deleted)")."""
    with open(f"/proc/{pid}/cmdline") as f:
        argv = f.read().split("\0")
    run_dir = argv[argv.index("--run-dir") + 1]
    shm = set()
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            path = line.split(None, 5)[-1].strip()
            if not os.path.basename(path).startswith(("mpich_shm_", "paddle_hl_dp_")):
                continue
            if not path.endswith("(deleted)"):
                shm.add(path)
            elif not named:
                shm.add(path.removesuffix(" (deleted)"))
    return run_dir, shm


def _children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigkilled_launcher_takes_ranks_mpiexec_folder_and_shm_along(tmp_path):
    proc, pids = _start_loop(tmp_path)
    try:
        run_dir, shm = _job_files(pids[0], named=False)
        assert os.path.isdir(run_dir) and any("mpich_shm_" in p for p in shm), (run_dir, shm)
        mpiexec = [_note(p) for p in _children(proc.pid)]
        assert mpiexec
        proc.kill()  # SIGKILL: no handler, no clean-up of its own
        proc.wait(timeout=10)
        deadline = time.monotonic() + 5
        watched = list(pids.values()) + mpiexec
        while time.monotonic() < deadline and not all(_gone(p) for p in watched):
            time.sleep(0.05)
        assert all(_gone(p) for p in pids.values()), pids
        while time.monotonic() < deadline and (os.path.exists(run_dir)
                                                or any(os.path.exists(p) for p in shm)):
            time.sleep(0.05)
        assert not os.path.exists(run_dir)
        assert not [p for p in shm if os.path.exists(p)]
        assert all(_gone(p) for p in mpiexec), mpiexec
    finally:
        for pid in pids.values():
            if not _gone(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_mpi_segment_loses_its_name_once_every_rank_maps_it(tmp_path):
    """MPICH keeps its segment's name until MPI_Finalize; a rank killed outright (MPI's process
    manager SIGKILLs the ranks when the launcher dies) would leave it in /dev/shm. The ranks
    remove the name once all of them map it: the memory stays theirs, and nothing is left
    however they end."""
    proc, pids = _start_loop(tmp_path)
    try:
        segments = {}
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            segments = {r: {p for p in _job_files(pid, named=False)[1] if "mpich_shm_" in p}
                        for r, pid in pids.items()}
            named = {r: {p for p in _job_files(pid)[1] if "mpich_shm_" in p}
                     for r, pid in pids.items()}
            if all(segments.values()) and not any(named.values()):
                break
            time.sleep(0.05)
        assert all(segments.values()), segments  # every rank maps MPI's segment ...
        assert segments[0] == segments[1], segments  # ... the same one ...
        assert not any(named.values()), named  # ... which no longer has a name
        assert not [p for p in segments[0] if os.path.exists(p)]
    finally:
        proc.kill()
        for pid in pids.values():
            if not _gone(pid):
                os.kill(pid, signal.SIGKILL)


def test_sigterm_to_the_launcher_is_named_not_out_of_memory(tmp_path):
    proc, pids = _start_loop(tmp_path)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "the launcher received SIGTERM and passed it on to the 2 ranks" in err, err
    assert "out of memory" not in err and "died" not in err, err
    assert all(_gone(p) for p in pids.values())


def test_long_tmpdir_does_not_break_the_launcher(tmp_path):
    long_dir = tmp_path / ("d" * 100)
    long_dir.mkdir()
    assert len(str(long_dir)) > 108
    script = _script(tmp_path, "sum.py", """
        import numpy as np
        import paddle_hl as paddle
        import paddle_hl.distributed as dist
        dist.init_parallel_env()
        t = paddle.to_tensor(np.ones(2, "float32"))
        dist.all_reduce(t)
        print("SUM", dist.get_rank(), t.numpy().tolist(), flush=True)
        """)
    res = _launch(script, TMPDIR=str(long_dir))
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    assert "SUM 0 [2.0, 2.0]" in out and "SUM 1 [2.0, 2.0]" in out


@pytest.mark.parametrize("what", ["all_reduce", "all_gather_object"])
def test_rank_exiting_early_is_named_at_once(tmp_path, what):
    script = _script(tmp_path, "early.py", """
        import sys
        import numpy as np
        import paddle_hl as paddle
        import paddle_hl.distributed as dist
        dist.init_parallel_env()
        if dist.get_rank() == 0:
            if sys.argv[1] == "all_reduce":
                dist.all_reduce(paddle.to_tensor(np.ones(2, "float32")))
            else:
                dist.all_gather_object([], {"rank": 0})
        """)
    start = time.monotonic()
    res = _launch(script, what, PADDLE_HL_COLLECTIVE_TIMEOUT="60", timeout=90)
    took = time.monotonic() - start
    out = res.stdout + res.stderr
    assert res.returncode == 1, out
    assert (f"paddle_hl.distributed.{what}: rank 1 exited with code 0 while rank 0 was "
            f"waiting for it in {what}") in out, out
    assert "rank(s) [1] exited with code 0 while rank(s) [0] still waited" in res.stderr, out
    assert "died or is stuck" not in out and "out of memory" not in out, out
    assert took < 30, took  # not the collective timeout


# ------------------------------------------------------------------ spawn's errors

SPAWN_FUNCS = """
import numpy as np
import paddle_hl as paddle
import paddle_hl.distributed as dist


def raises_on_rank_one():
    dist.init_parallel_env()
    if dist.get_rank() == 1:
        raise KeyError("no such batch on rank one")
    dist.barrier()


def loop_forever():
    import os, time
    dist.init_parallel_env()
    print(f"PID {dist.get_rank()} {os.getpid()}", flush=True)
    t = paddle.to_tensor(np.ones(3, "float32"))
    end = time.time() + 60
    while time.time() < end:
        dist.all_reduce(t)
        time.sleep(0.01)


def rank_one_returns_early():
    dist.init_parallel_env()
    if dist.get_rank() == 0:
        dist.all_reduce(paddle.to_tensor(np.ones(2, "float32")))
"""

SPAWN_CALLER = """
import sys
sys.path.insert(0, sys.argv[1])
import paddle_hl.distributed as dist
import spawned
try:
    dist.spawn(getattr(spawned, sys.argv[2]), nprocs=2)
    print("CAUGHT nothing")
except Exception as e:
    print("CAUGHT", type(e).__name__, repr(str(e)))
"""


def _spawn_caught(tmp_path, func):
    _mpiexec()
    _script(tmp_path, "spawned.py", SPAWN_FUNCS)
    res = subprocess.run([sys.executable, "-c", SPAWN_CALLER, str(tmp_path), func], cwd=ROOT,
                         env=env(PADDLE_HL_COLLECTIVE_TIMEOUT="60"), capture_output=True,
                         text=True, timeout=90)
    m = re.search(r"^CAUGHT (\w+) (.*)$", res.stdout, re.M)
    assert m, res.stdout + res.stderr
    return m.group(1), eval(m.group(2))  # the repr of the message: one line


def test_spawn_error_carries_the_ranks_exception_and_traceback(tmp_path):
    kind, msg = _spawn_caught(tmp_path, "raises_on_rank_one")
    assert kind == "JobError"
    assert "rank 1 (pid" in msg and "failed with exit status 1" in msg, msg
    assert "Traceback (most recent call last)" in msg, msg
    assert "in raises_on_rank_one" in msg, msg
    assert "KeyError: 'no such batch on rank one'" in msg, msg


def test_spawn_rank_returning_early_is_named(tmp_path):
    start = time.monotonic()
    kind, msg = _spawn_caught(tmp_path, "rank_one_returns_early")
    assert kind == "JobError"
    assert "rank(s) [1] exited with code 0 while rank(s) [0] still waited" in msg, msg
    assert "rank 1 exited with code 0 while rank 0 was waiting for it in all_reduce" in msg, msg
    assert "died or is stuck" not in msg, msg
    assert time.monotonic() - start < 30


def test_spawn_without_join_is_waited_for_at_exit_and_join_twice_is_fine(tmp_path):
    _mpiexec()
    _script(tmp_path, "spawned.py", SPAWN_FUNCS + textwrap.dedent("""
        def slow_result(path):
            import time
            dist.init_parallel_env()
            time.sleep(1.0)
            dist.barrier()
            if dist.get_rank() == 0:
                open(path, "w").write("done")
            return dist.get_rank()
        """))
    marker = tmp_path / "marker"
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import paddle_hl.distributed as dist
        import spawned
        ctx = dist.spawn(spawned.slow_result, args=({str(marker)!r},), nprocs=2, join=False)
        if sys.argv[1] == "join":
            ctx.join()
            ctx.join()
            print("VALUES", ctx.return_values)
        """)
    for mode in ("join", "exit"):
        marker.unlink(missing_ok=True)
        res = subprocess.run([sys.executable, "-c", code, mode], cwd=ROOT, env=env(),
                             capture_output=True, text=True, timeout=90)
        assert res.returncode == 0, res.stdout + res.stderr
        assert marker.read_text() == "done"  # the job ran to its end
        if mode == "join":
            assert "VALUES [0, 1]" in res.stdout


def test_monitor_address_fits_a_unix_socket(tmp_path, monkeypatch):
    from paddle_hl.distributed.launch import _job

    long_dir = str(tmp_path / ("d" * 120))
    address, folder = _job._address(long_dir)
    if sys.platform.startswith("linux"):
        assert address.startswith("@") and folder is None  # abstract: no file, no length limit
        assert _job.socket_name(address) == "\0" + address[1:]
    monkeypatch.setattr(_job.sys, "platform", "darwin")  # the socket-file form
    address, folder = _job._address(long_dir)
    try:
        assert len(os.fsencode(address)) < 100 and os.path.isdir(folder)
        assert _job.socket_name(address) == address
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    short = os.path.join(str(tmp_path), "monitor.sock")
    if len(os.fsencode(short)) < 100:  # the job's own folder when the path fits
        assert _job._address(str(tmp_path)) == (short, None)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigkilled_spawn_caller_takes_its_ranks_and_files_along(tmp_path):
    _mpiexec()
    _script(tmp_path, "spawned.py", SPAWN_FUNCS)
    caller = subprocess.Popen([sys.executable, "-c", SPAWN_CALLER, str(tmp_path),
                               "loop_forever"], cwd=ROOT, env=env(), text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pids = {}
    deadline = time.monotonic() + 60
    while len(pids) < 2 and time.monotonic() < deadline:
        line = caller.stdout.readline()
        if not line:
            break
        if line.startswith("PID "):
            _, rank, pid = line.split()
            pids[int(rank)] = _note(int(pid))
    try:
        assert len(pids) == 2, caller.communicate(timeout=10) if caller.poll() is not None else ""
        run_dir, shm = _job_files(pids[0])
        caller.kill()
        caller.wait(timeout=10)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not (
                all(_gone(p) for p in pids.values()) and not os.path.exists(run_dir)
                and not any(os.path.exists(p) for p in shm)):
            time.sleep(0.05)
        assert all(_gone(p) for p in pids.values()), pids
        assert not os.path.exists(run_dir)
        assert not [p for p in shm if os.path.exists(p)]
    finally:
        caller.kill()
        for pid in pids.values():
            if not _gone(pid):
                os.kill(pid, signal.SIGKILL)
