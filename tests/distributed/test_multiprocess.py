"""Multi-process runs on MPI: every collective and dtype on 2 and 3 ranks (started by the
project's launcher and by mpiexec), DataParallel against one process on the concatenated batch,
spawn, and failures (a killed, a raising and a hanging rank) ending the job with an error that
names the rank."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import time

import pytest

pytest.importorskip("mpi4py")

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPTS = pathlib.Path(__file__).resolve().parent / "scripts"
DTYPES = "float32,float64,int32,int64,float16,bfloat16,bool"


def _mpiexec():
    from paddle_hl.distributed.launch._job import find_mpiexec

    try:
        return find_mpiexec()
    except RuntimeError:
        pytest.skip("no mpiexec (pip install 'paddle_hl[distributed]' brings the mpich wheel)")


def _env(**extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


def _launch(n, script, *args, timeout=120, **env):
    _mpiexec()
    cmd = [sys.executable, "-m", "paddle_hl.distributed.launch", "--nproc_per_node", str(n),
           str(SCRIPTS / script), *args]
    return subprocess.run(cmd, cwd=ROOT, env=_env(**env), capture_output=True, text=True,
                          timeout=timeout)


def _ok(res, n):
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    for r in range(n):
        assert f"OK rank {r} of {n}" in out, out


def test_collectives_two_ranks_every_dtype():
    _ok(_launch(2, "collectives.py", DTYPES), 2)


def test_collectives_three_ranks_under_mpiexec():
    cmd = [_mpiexec(), "-n", "3", sys.executable, str(SCRIPTS / "collectives.py"),
           "float32,int64,bfloat16"]
    res = subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True, text=True,
                         timeout=120)
    _ok(res, 3)


@pytest.mark.parametrize("n,opt,shm", [(2, "sgd", "1"), (3, "adam", "1"), (2, "sgd", "0"),
                                       (3, "adam", "0")])
def test_data_parallel_matches_one_process(n, opt, shm):
    # shm=1: the ranks average their buckets in shared memory; 0: MPI's all-reduce
    before = _dp_files()
    res = _launch(n, "data_parallel.py", opt, PADDLE_HL_DP_SHM=shm)
    _ok(res, n)
    assert "sent during backward" in res.stdout
    assert f"shared={shm == '1'}" in res.stdout
    assert not _left_since(before)  # the shared file is removed once mapped


def _dp_files():
    folder = pathlib.Path("/dev/shm")
    return set(folder.glob("paddle_hl_dp_*")) if folder.is_dir() else set()


def _left_since(before, wait=10.0):
    """The shared bucket files that appeared since ``before`` and stay. A job running in
    another test worker has its own file for the moment until all its ranks have mapped it:
    such a file goes within the wait, one left behind does not."""
    new = _dp_files() - before
    deadline = time.monotonic() + wait
    while new and time.monotonic() < deadline:
        time.sleep(0.1)
        new &= _dp_files()
    return new


def test_shared_buckets_fall_back_to_mpi():
    _ok(_launch(2, "shm_fallback.py"), 2)


def test_killed_rank_ends_the_job_naming_it():
    before = _dp_files()
    res = _launch(3, "faults.py", "kill")
    assert res.returncode == 1
    assert "rank 1 (pid" in res.stderr and "died without an error of its own" in res.stderr
    assert "finished" not in res.stdout
    assert not _left_since(before)  # no shared bucket memory left behind


def test_raising_rank_ends_the_job_naming_it():
    res = _launch(3, "faults.py", "raise")
    assert res.returncode == 1
    out = res.stdout + res.stderr
    assert "ValueError: a bad batch on rank 1" in out
    assert "rank 1 (pid" in res.stderr and "failed with exit status 1" in res.stderr


def test_hanging_rank_times_out():
    res = _launch(2, "faults.py", "hang", PADDLE_HL_COLLECTIVE_TIMEOUT="2")
    assert res.returncode == 1
    out = res.stdout + res.stderr
    assert "waited 2 s for the other ranks" in out
    assert "PADDLE_HL_COLLECTIVE_TIMEOUT" in out


def test_launcher_sets_paddles_environment(tmp_path):
    script = tmp_path / "env.py"
    script.write_text(
        "import os\n"
        "keys = ['PADDLE_TRAINER_ID', 'PADDLE_TRAINERS_NUM', 'PADDLE_LOCAL_RANK',\n"
        "        'PADDLE_CURRENT_ENDPOINT', 'PADDLE_TRAINER_ENDPOINTS', 'PADDLE_RANK_IN_NODE']\n"
        "print('ENV', ' '.join(os.environ[k] for k in keys), flush=True)\n")
    res = _launch(2, str(script))
    assert res.returncode == 0, res.stdout + res.stderr
    lines = sorted(line for line in res.stdout.splitlines() if line.startswith("ENV"))
    eps = "127.0.0.1:6170,127.0.0.1:6171"
    assert lines == [f"ENV 0 2 0 127.0.0.1:6170 {eps} 0", f"ENV 1 2 1 127.0.0.1:6171 {eps} 1"]


def test_log_dir_keeps_other_ranks_logs(tmp_path):
    script = tmp_path / "hello.py"
    script.write_text("import os\nprint('hello from', os.environ['PADDLE_TRAINER_ID'])\n")
    _mpiexec()
    cmd = [sys.executable, "-m", "paddle_hl.distributed.launch", "--nproc_per_node", "2",
           "--log_dir", str(tmp_path / "log"), str(script)]
    res = subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "hello from 0" in res.stdout and "hello from 1" not in res.stdout
    assert (tmp_path / "log" / "workerlog.1").read_text().strip() == "hello from 1"


def test_script_exit_status_is_the_jobs(tmp_path):
    script = tmp_path / "exit.py"
    script.write_text("import os, sys\nsys.exit(3 if os.environ['PADDLE_TRAINER_ID'] == '1' "
                      "else 0)\n")
    res = _launch(2, str(script))
    assert res.returncode == 1
    assert "rank 1 (pid" in res.stderr and "exit status 3" in res.stderr


def _spawn_in_subprocess(code):
    _mpiexec()
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_env(), text=True,
                          capture_output=True, timeout=120)


def test_spawn_returns_each_ranks_result():
    res = _spawn_in_subprocess(
        "import sys; sys.path.insert(0, 'tests/distributed/scripts')\n"
        "import paddle_hl.distributed as dist\n"
        "from spawn_funcs import rank_times\n"
        "ctx = dist.spawn(rank_times, args=(10,), nprocs=3)\n"
        "print('RESULT', ctx.return_values)\n")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "RESULT [(0, 3.0, 3), (10, 3.0, 3), (20, 3.0, 3)]" in res.stdout


def test_spawn_sends_a_main_function_by_value():
    pytest.importorskip("cloudpickle")
    res = _spawn_in_subprocess(
        "import paddle_hl.distributed as dist\n"
        "def work(scale):\n"
        "    dist.init_parallel_env()\n"
        "    print('rank', dist.get_rank(), 'says hi', flush=True)\n"
        "    return dist.get_rank() * scale\n"
        "print('RESULT', dist.spawn(work, args=(2.5,), nprocs=2).return_values)\n")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "RESULT [0.0, 2.5]" in res.stdout
    assert "rank 1 says hi" in res.stdout  # the ranks' output reaches the caller


def test_spawn_failure_names_the_rank():
    res = _spawn_in_subprocess(
        "import sys; sys.path.insert(0, 'tests/distributed/scripts')\n"
        "import paddle_hl.distributed as dist\n"
        "from spawn_funcs import fails_on_rank_one\n"
        "try:\n"
        "    dist.spawn(fails_on_rank_one, nprocs=2)\n"
        "except Exception as e:\n"
        "    print('CAUGHT', type(e).__name__, e)\n")
    assert "ValueError: rank one refuses" in res.stdout + res.stderr
    assert "CAUGHT JobError" in res.stdout and "rank 1 (pid" in res.stdout


def test_sweep_removes_only_unmapped_new_segments(tmp_path):
    import mmap
    import time

    from paddle_hl.distributed.launch._job import sweep_shm

    since = time.time()
    paths = {k: tmp_path / f"mpich_shm_{k}" for k in ("old", "mapped", "left")}
    for p in paths.values():
        p.write_bytes(b"\0" * 4096)
    os.utime(paths["old"], (since - 100, since - 100))  # before the job: not its own
    other = tmp_path / "other_file"
    other.write_bytes(b"x")
    with open(paths["mapped"], "r+b") as f:
        live = mmap.mmap(f.fileno(), 4096)  # a live job's segment: mapped by its ranks
    try:
        removed = sweep_shm(since, folder=str(tmp_path))
    finally:
        live.close()
    assert removed == [str(paths["left"])]
    assert paths["old"].exists() and paths["mapped"].exists() and other.exists()
    assert not paths["left"].exists()
    assert sweep_shm(since, folder=str(tmp_path / "missing")) == []


def test_segment_name_is_removed_only_once_every_local_rank_maps_it(tmp_path):
    from paddle_hl.distributed.launch._worker import unlink_segment_when_mapped

    seg = tmp_path / "mpich_shm_job_0"
    seg.write_bytes(b"\0" * 64)
    proc = tmp_path / "proc"
    ppid = os.getppid()
    (proc / "self").mkdir(parents=True)
    (proc / str(ppid) / "task" / str(ppid)).mkdir(parents=True)
    (proc / str(ppid) / "task" / str(ppid) / "children").write_text("101 102 103")
    line = f"7f00-7f01 rw-s 00000000 00:1a 42 {seg}\n"
    other = "7f02-7f03 r-xp 00000000 08:01 7 /usr/lib/libc.so.6\n"
    for pid, text in (("self", line + other), ("101", line), ("102", other), ("103", other)):
        (proc / pid).mkdir(exist_ok=True)
        (proc / pid / "maps").write_text(text)
    # 2 ranks on this machine, only one maps the segment (the other has not attached yet)
    assert unlink_segment_when_mapped(2, proc=str(proc), first=0.001, rounds=3) == []
    assert seg.exists()
    # an unlinked segment, or an unrelated process's file, is not counted
    (proc / "102" / "maps").write_text(f"7f00-7f01 rw-s 00000000 00:1a 42 {seg} (deleted)\n")
    assert unlink_segment_when_mapped(2, proc=str(proc), first=0.001, rounds=2) == []
    assert seg.exists()
    (proc / "102" / "maps").write_text(line)  # now both ranks map it: the name goes
    assert unlink_segment_when_mapped(2, proc=str(proc), first=0.001, rounds=2) == [str(seg)]
    assert not seg.exists()
    # another rank of the machine removed it first: done all the same
    assert unlink_segment_when_mapped(2, proc=str(proc), first=0.001, rounds=2) == [str(seg)]
