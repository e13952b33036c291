"""Data parallel across hosts, on simulated hosts (see ``_hosts``): Paddle's launcher commands
run on every host, the hierarchical gradient average (shared memory within a host, MPI across)
gives the parameters of one host and of one process on the global batch, and the failures a
cluster has end as documented in docs/distributed.md.

Needs root and ``ip netns`` (the tests skip, saying so, elsewhere). Every job is bounded by a
collective or rendezvous timeout and a subprocess timeout, so a hang fails instead of stalling.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest

from . import _hosts

pytest.importorskip("mpi4py")
_WHY = _hosts.missing()
pytestmark = pytest.mark.skipif(_WHY is not None, reason=str(_WHY))

SCRIPTS = os.path.join(os.path.dirname(__file__), "scripts")
PY = sys.executable
# the one-host data path and the 1-rank reference sum in a different order than the
# hierarchical one ((a + b) + (c + d) against ((a + b) + c) + d): float32 rounding, a few ulp
# of the gradients per step, grown by the optimizer over the steps
RTOL, ATOL = 1e-5, 1e-6


def _env(**more):
    env = dict(os.environ)
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    env.pop("PADDLE_TRAINER_ID", None)
    env.update({k: str(v) for k, v in more.items()})
    return env


@pytest.fixture
def cluster():
    c = _hosts.Cluster(2)
    try:
        yield c
    finally:
        c.close()


def _launch(host, args, env):
    return host.popen([PY, "-m", "paddle_hl.distributed.launch", *args], env=env,
                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _launch_all(cluster, args, env, hosts=None):
    return [_launch(h, args, env) for h in (hosts or cluster.hosts)]


def _finish(procs, timeout=120):
    outs = []
    for p in procs:
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            out += "\n<timed out>"
        outs.append(out)
    return [p.returncode for p in procs], outs


def _wait_for(proc, text, timeout=60):
    """Read the launcher's output until a line contains ``text``; returns what was read."""
    seen = []
    deadline = time.monotonic() + timeout
    for line in proc.stdout:
        seen.append(line)
        if text in line or time.monotonic() > deadline:
            break
    return "".join(seen)


def _clean(cluster, survivors):
    """No process left on any host, and no shared-memory file on the hosts that survived."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(h.pids() for h in cluster.hosts):
        time.sleep(0.1)
    for h in cluster.hosts:
        assert h.pids() == [], (h.name, h.pids())
    for h in survivors:
        assert h.shm_files() == [], (h.name, h.shm_files())


# --------------------------------------------------------------------- the simulated hosts
def test_hosts_are_separate_machines(cluster):
    h1, h2 = cluster.hosts
    names = [h.run(["hostname"], capture_output=True, text=True).stdout.strip() for h in (h1, h2)]
    assert names == ["h1", "h2"]
    # one host's shared memory is invisible on the other
    h1.run(["sh", "-c", "echo x > /dev/shm/phl_probe"], check=True)
    assert "phl_probe" in h1.shm_files() and "phl_probe" not in h2.shm_files()
    assert not os.path.exists("/dev/shm/phl_probe")
    # h2 reaches h1 by name over the bridge
    code = ("import socket; s = socket.create_connection(('h1', 9)); print('connected')")
    listener = h1.popen([PY, "-c", "import socket, time; s = socket.socket(); "
                         "s.bind(('0.0.0.0', 9)); s.listen(); print('up', flush=True); "
                         "c, a = s.accept(); print(a[0], flush=True)"],
                        stdout=subprocess.PIPE, text=True)
    assert listener.stdout.readline().strip() == "up"
    r = h2.run([PY, "-c", code], capture_output=True, text=True, timeout=20)
    assert r.stdout.strip() == "connected", r.stderr
    assert listener.communicate(timeout=20)[0].strip() == h2.address
    # the host's address is not on this machine's own network
    assert h1.address not in subprocess.run(["ip", "-4", "addr"], capture_output=True,
                                            text=True).stdout


# --------------------------------------------------------------------------- the launcher
ENV_SCRIPT = """
import os, socket
import numpy as np
import paddle_hl as paddle
import paddle_hl.distributed as dist
dist.init_parallel_env()
t = paddle.to_tensor(np.full([3], dist.get_rank() + 1, np.float32))
dist.all_reduce(t)
names = ("PADDLE_TRAINER_ID PADDLE_TRAINERS_NUM PADDLE_CURRENT_ENDPOINT PADDLE_TRAINER_ENDPOINTS "
         "PADDLE_LOCAL_RANK PADDLE_LOCAL_SIZE PADDLE_GLOBAL_RANK PADDLE_GLOBAL_SIZE "
         "PADDLE_RANK_IN_NODE PADDLE_NNODES PADDLE_MASTER").split()
print("ENV", socket.gethostname(), dist.get_rank(), dist.get_world_size(),
      float(t.numpy()[0]), *(os.environ[n] for n in names), flush=True)
"""


def _env_lines(outs):
    rows = {}
    for out in outs:
        for line in out.splitlines():
            if line.startswith("ENV "):
                f = line.split()
                rows[int(f[2])] = f[1:]
    return rows


@pytest.mark.parametrize("mode", ["ips", "master"])
def test_launcher_on_every_host(cluster, tmp_path, mode):
    script = tmp_path / "env.py"
    script.write_text(ENV_SCRIPT)
    args = (["--ips", "h1,h2"] if mode == "ips" else ["--master", "h1:7012", "--nnodes", "2"])
    codes, outs = _finish(_launch_all(cluster, [*args, "--nproc_per_node", "2", str(script)],
                                      _env(PADDLE_HL_COLLECTIVE_TIMEOUT=60)), timeout=90)
    assert codes == [0, 0], outs
    rows = _env_lines(outs)
    assert sorted(rows) == [0, 1, 2, 3], outs
    endpoints = "10.213.0.1:6170,10.213.0.1:6171,10.213.0.2:6170,10.213.0.2:6171"
    for r, (host, rank, size, total, tid, num, cur, eps, local, lsize, grank, gsize, in_node,
            nnodes, master) in rows.items():
        assert host == ("h1" if r < 2 else "h2")
        assert (int(rank), int(size), float(total)) == (r, 4, 10.0)
        assert (tid, num, grank, gsize) == (str(r), "4", str(r), "4")
        assert (local, in_node, lsize, nnodes) == (str(r % 2), str(r % 2), "2", "2")
        assert eps == endpoints and cur == endpoints.split(",")[r]
        assert master == ("h1:6170" if mode == "ips" else "h1:7012")


def test_late_host_is_awaited(cluster, tmp_path):
    script = tmp_path / "env.py"
    script.write_text(ENV_SCRIPT)
    env = _env(PADDLE_HL_RENDEZVOUS_TIMEOUT=30, PADDLE_HL_COLLECTIVE_TIMEOUT=60)
    args = ["--ips", "h1,h2", "--nproc_per_node", "1", str(script)]
    first = _launch(cluster[0], args, env)
    time.sleep(2.0)  # h2 starts late: the master waits for it
    codes, outs = _finish([first, _launch(cluster[1], args, env)], timeout=90)
    assert codes == [0, 0], outs
    assert sorted(_env_lines(outs)) == [0, 1]


@pytest.mark.parametrize("mode", ["ips", "master"])
def test_missing_host_is_named(cluster, tmp_path, mode):
    script = tmp_path / "env.py"
    script.write_text(ENV_SCRIPT)
    args = (["--ips", "h1,h2"] if mode == "ips" else ["--master", "h1:7013", "--nnodes", "2"])
    start = time.monotonic()
    codes, outs = _finish([_launch(cluster[0], [*args, "--nproc_per_node", "1", str(script)],
                                   _env(PADDLE_HL_RENDEZVOUS_TIMEOUT=2))], timeout=60)
    assert codes == [1]
    assert time.monotonic() - start < 30
    assert "waited 2 s (PADDLE_HL_RENDEZVOUS_TIMEOUT) for 2 machines" in outs[0], outs
    assert "joined: h1 (master)" in outs[0]
    assert ("missing: h2" if mode == "ips" else "1 more machine(s) did not join") in outs[0]
    _clean(cluster, cluster.hosts)


def test_master_port_in_use(cluster, tmp_path):
    script = tmp_path / "env.py"
    script.write_text(ENV_SCRIPT)
    holder = cluster[0].popen([PY, "-c", "import socket, time; s = socket.socket(); "
                               "s.bind(('0.0.0.0', 7014)); s.listen(); print('up', flush=True); "
                               "time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "up"
    try:
        codes, outs = _finish([_launch(cluster[0], ["--master", "h1:7014", "--nnodes", "2",
                                                    "--nproc_per_node", "1", str(script)],
                                       _env(PADDLE_HL_RENDEZVOUS_TIMEOUT=5))], timeout=60)
    finally:
        holder.kill()
        holder.wait()
    assert codes == [1]
    assert "the master port 7014 on h1 (10.213.0.1) is in use" in outs[0], outs
    assert "--master h1:PORT" in outs[0]


# -------------------------------------------------------------------- the cross-host data path
def _train(cluster, tmp_path, model, steps, timeout=240):
    """Parameters after ``steps`` steps: 2 hosts x 2 ranks, 1 host x 4 ranks, 1 process."""
    script = os.path.join(SCRIPTS, "dp_hosts.py")
    env = _env(PADDLE_HL_COLLECTIVE_TIMEOUT=120)
    out = {k: str(tmp_path / f"{k}.npz") for k in ("hosts", "host", "one")}
    sent = _tx_bytes(cluster[1])
    codes, outs = _finish(_launch_all(cluster, ["--ips", "h1,h2", "--nproc_per_node", "2",
                                                script, model, str(steps), out["hosts"]], env),
                          timeout=timeout)
    sent = _tx_bytes(cluster[1]) - sent
    assert codes == [0, 0], outs
    assert outs[0].count("across hosts True") == 4, outs[0]
    # h2's gradients went to h1 over the network: each step, h2's two ranks send their halves
    # of every bucket (the whole gradient, float32) through h2's interface
    nbytes = sum(a.nbytes for k, a in np.load(out["hosts"]).items() if "_mean" not in k
                 and "_variance" not in k)
    assert sent > steps * nbytes, (sent, nbytes)
    r = cluster[0].run([PY, "-m", "paddle_hl.distributed.launch", "--nproc_per_node", "4",
                        script, model, str(steps), out["host"]], env=env, capture_output=True,
                       text=True, timeout=timeout)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("across hosts False") == 4, r.stdout
    r = subprocess.run([PY, script, model, str(steps), out["one"]], env=env,
                       capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stdout + r.stderr
    return {k: np.load(v) for k, v in out.items()}


def _tx_bytes(host):
    """Bytes sent so far through ``host``'s interface."""
    r = host.run(["cat", "/sys/class/net/eth0/statistics/tx_bytes"], capture_output=True,
                 text=True, check=True)
    return int(r.stdout)


def _same(a, b):
    assert a.files == b.files
    for k in a.files:
        np.testing.assert_allclose(a[k], b[k], rtol=RTOL, atol=ATOL, err_msg=k)


def test_encoder_across_hosts_matches_one_host_and_one_process(cluster, tmp_path):
    got = _train(cluster, tmp_path, "encoder", 3)
    _same(got["hosts"], got["host"])
    _same(got["hosts"], got["one"])
    # the steps moved the parameters (a comparison of untouched weights proves nothing)
    start = _train_start(tmp_path, "encoder")
    assert max(np.abs(got["hosts"][k] - start[k]).max() for k in start.files) > 1e-3


@pytest.mark.slow
def test_resnet18_across_hosts_matches_one_host_and_one_process(cluster, tmp_path):
    got = _train(cluster, tmp_path, "resnet18", 2, timeout=400)
    _same(got["hosts"], got["host"])
    _same(got["hosts"], got["one"])


def _train_start(tmp_path, model):
    """The parameters before training (the script run for 0 steps)."""
    path = str(tmp_path / "start.npz")
    r = subprocess.run([PY, os.path.join(SCRIPTS, "dp_hosts.py"), model, "0", path],
                       env=_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return np.load(path)


def test_models_that_differ_across_hosts_are_named(cluster, tmp_path):
    script = tmp_path / "differ.py"
    script.write_text(
        "import socket\n"
        "import paddle_hl as paddle\n"
        "import paddle_hl.distributed as dist\n"
        "dist.init_parallel_env()\n"
        "width = 9 if socket.gethostname() == 'h2' else 8\n"
        "net = paddle.nn.Sequential(paddle.nn.Linear(4, 4), paddle.nn.Linear(4, width))\n"
        "paddle.DataParallel(net)\n")
    codes, outs = _finish(_launch_all(cluster, ["--ips", "h1,h2", "--nproc_per_node", "2",
                                                str(script)],
                                      _env(PADDLE_HL_COLLECTIVE_TIMEOUT=60)))
    assert codes[0] == 1, outs
    text = outs[0]
    assert "every rank must wrap the same model" in text, text
    assert "entry 2 differs" in text
    assert "rank 0 (host h1): parameter '1.weight' of shape [4, 8]" in text
    assert "rank 2 (host h2): parameter '1.weight' of shape [4, 9]" in text
    _clean(cluster, cluster.hosts)


# ------------------------------------------------------------------ checkpoints across hosts
CKPT = os.path.join(SCRIPTS, "ckpt_hosts.py")


def _writers(folder):
    """The metadata's record of who wrote each shard file: {file: (rank, host)}."""
    from paddle_hl.distributed.checkpoint import _load

    meta = _load(os.path.join(folder, "0.metadata"))
    return {f: (i["rank"], i["host"]) for f, i in meta["files"].items()}


def test_checkpoint_saved_on_two_hosts_loads_on_one_and_back(cluster, tmp_path):
    """save_state_dict on 2 hosts x 2 ranks: each rank writes its own shard from its own host
    into the folder the hosts share; it loads on 1 host x 2 ranks and on 1 process, and one
    saved on 1 host x 2 ranks loads on 2 x 2, every value bit for bit. A shard truncated or
    missing is an error naming the file and the rank and host that wrote it."""
    env = _env(PADDLE_HL_COLLECTIVE_TIMEOUT=60)
    wide, narrow = str(tmp_path / "wide"), str(tmp_path / "narrow")
    two_by_two = ["--ips", "h1,h2", "--nproc_per_node", "2", CKPT]
    codes, outs = _finish(_launch_all(cluster, [*two_by_two, "save", wide], env))
    assert codes == [0, 0], outs
    assert sorted(re.findall(r"SAVED rank (\d) on (h\d)", outs[0])) == [
        ("0", "h1"), ("1", "h1"), ("2", "h2"), ("3", "h2")], outs[0]
    assert _writers(wide) == {"0_0.distcp": (0, "h1"), "1_0.distcp": (1, "h1"),
                              "2_0.distcp": (2, "h2"), "3_0.distcp": (3, "h2")}
    assert not [f for f in os.listdir(wide) if f.endswith(".tmp")]  # renamed into place

    def on_one_host(host, *args, n=2):
        cmd = [PY, "-m", "paddle_hl.distributed.launch", "--nproc_per_node", str(n), CKPT,
               *args] if n > 1 else [PY, CKPT, *args]
        return host.run(cmd, env=env, capture_output=True, text=True, timeout=120)

    r = on_one_host(cluster[0], "load", wide)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("of 2 on h1") == 2, r.stdout
    r = on_one_host(cluster[1], "load", wide, n=1)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "LOADED rank 0 of 1 on h2" in r.stdout
    # the reverse: saved on one host, loaded on two
    r = on_one_host(cluster[0], "save", narrow)
    assert r.returncode == 0, r.stdout + r.stderr
    assert _writers(narrow) == {"0_0.distcp": (0, "h1"), "1_0.distcp": (1, "h1")}
    codes, outs = _finish(_launch_all(cluster, [*two_by_two, "load", narrow], env))
    assert codes == [0, 0], outs
    assert sorted(re.findall(r"LOADED rank (\d) of 4 on (h\d)", outs[0])) == [
        ("0", "h1"), ("1", "h1"), ("2", "h2"), ("3", "h2")], outs[0]
    # a shard cut short, then one missing: the error names the file, its rank and host
    with open(os.path.join(wide, "3_0.distcp"), "r+b") as f:
        f.truncate(os.path.getsize(f.name) - 7)
    r = on_one_host(cluster[0], "load", wide, n=1)
    assert r.returncode != 0
    assert "the shard file 3_0.distcp of rank 3 (host h2)" in r.stderr, r.stderr
    assert "truncated" in r.stderr
    os.remove(os.path.join(wide, "2_0.distcp"))
    r = on_one_host(cluster[0], "load", wide, n=1)
    assert r.returncode != 0
    assert "the shard file 2_0.distcp of rank 2 (host h2)" in r.stderr, r.stderr
    assert "is missing" in r.stderr


def test_checkpoint_folder_not_shared_is_named(cluster):
    """A folder each host has its own of (here each host's private /dev/shm) cannot hold a
    checkpoint of both: save_state_dict fails on every rank, naming the files each host does
    not see, and writes no metadata."""
    folder = f"/dev/shm/{cluster.tag}_ckpt"
    codes, outs = _finish(_launch_all(cluster, ["--ips", "h1,h2", "--nproc_per_node", "2",
                                                CKPT, "save", folder],
                                      _env(PADDLE_HL_COLLECTIVE_TIMEOUT=60)))
    assert codes[0] == 1, outs
    text = outs[0]
    assert "must be one that every rank's machine shares" in text, text
    assert ("rank 0 (host h1) does not see 2_0.distcp (rank 2's, written on host h2), "
            "3_0.distcp (rank 3's, written on host h2)") in text, text
    assert ("rank 2 (host h2) does not see 0_0.distcp (rank 0's, written on host h1), "
            "1_0.distcp (rank 1's, written on host h1)") in text
    for h in cluster.hosts:
        r = h.run(["ls", "-A", folder], capture_output=True, text=True)
        assert not [f for f in r.stdout.split() if f.endswith(".metadata")], (h.name, r.stdout)
    assert "SAVED" not in text


# --------------------------------------------------------------------------------- failures
FAULTS = os.path.join(SCRIPTS, "hosts_faults.py")


def test_host_killed_mid_step(cluster):
    env = _env(PADDLE_HL_COLLECTIVE_TIMEOUT=60)
    procs = _launch_all(cluster, ["--ips", "h1,h2", "--nproc_per_node", "2", FAULTS, "100000",
                                  "0.02"], env)
    seen = _wait_for(procs[0], "step 3 rank 0")
    assert "step 3 rank 0" in seen, seen + procs[0].stdout.read()
    start = time.monotonic()
    cluster[1].kill()  # h2 goes down: its launcher, MPI's proxy and both ranks
    codes, outs = _finish(procs[:1], timeout=60)
    took = time.monotonic() - start
    assert codes == [1], outs
    # the ranks on h1 learn it from the monitor at once (well within the collective timeout)
    assert took < 30, took
    assert "died without an error of its own" in outs[0], outs
    assert " on host h2)" in outs[0] and ("rank 2 (pid" in outs[0] or "rank 3 (pid" in outs[0])
    assert "[mpiexec@" not in outs[0] and "[proxy:" not in outs[0], outs[0]  # held back
    # h2 is down: its /dev/shm went with it (a real host's RAM); h1 is clean
    _clean(cluster, [cluster[0]])
    for p in procs[1:]:
        p.wait(timeout=10)


def test_rank_killed_on_other_host_leaves_nothing(cluster):
    """One rank on h2 is killed (say, out of memory) while its host stays up: the job ends
    naming it and h2, and no process or shared-memory file is left on either host (h2's
    launcher removes what the job left there)."""
    env = _env(PADDLE_HL_COLLECTIVE_TIMEOUT=60)
    procs = _launch_all(cluster, ["--ips", "h1,h2", "--nproc_per_node", "2", FAULTS, "100000",
                                  "0.02"], env)
    seen = _wait_for(procs[0], "step 3 rank 0")
    assert "step 3 rank 0" in seen, seen + procs[0].stdout.read()
    ranks = [p for p in cluster[1].pids() if "launch._worker" in _cmdline(p)]
    assert len(ranks) == 2, [_cmdline(p) for p in cluster[1].pids()]
    victim = max(ranks)
    os.kill(victim, 9)
    codes, outs = _finish(procs, timeout=60)
    assert codes[0] == 1 and codes[1] != 0, outs
    assert "died without an error of its own" in outs[0] and " on host h2)" in outs[0], outs
    assert "the job of 4 processes failed" in outs[1], outs[1]
    _clean(cluster, cluster.hosts)


@pytest.mark.parametrize("who", ["master", "node"])
def test_launcher_killed_or_stopped(cluster, who):
    """The master's launcher is killed (SIGKILL), or h2's is stopped (SIGTERM): every process
    of the job ends on both hosts and no shared memory is left on either.

    When the master's launcher dies, mpiexec dies of SIGPIPE at its next line of output and
    MPI's proxy on h1 then SIGKILLs h1's ranks, often before their own clean-up has run; MPI's
    segment is not left behind because the ranks removed its name once they all mapped it."""
    env = _env(PADDLE_HL_COLLECTIVE_TIMEOUT=60)
    procs = _launch_all(cluster, ["--ips", "h1,h2", "--nproc_per_node", "2", FAULTS, "100000",
                                  "0.02"], env)
    seen = _wait_for(procs[0], "step 3 rank 0")
    assert "step 3 rank 0" in seen, seen + procs[0].stdout.read()
    if who == "master":
        procs[0].kill()
    else:
        procs[1].terminate()
    codes, outs = _finish(procs, timeout=60)
    assert all(c != 0 for c in codes), (codes, outs)
    if who == "node":
        assert "this machine's launcher (h2) received SIGTERM" in outs[1], outs[1]
        # the master names h2 whichever report reaches it first: the monitor's ("rank 2 (pid
        # N on host h2) died ...") or MPI's ("the process with pid N on h2 ended ...")
        assert re.search(r"\bon (host )?h2\b", outs[0]), outs[0]
    else:
        assert "the master at h1:6170 went away" in outs[1], outs[1]
    _clean(cluster, cluster.hosts)


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def test_hung_host_times_out(cluster):
    env = _env(PADDLE_HL_COLLECTIVE_TIMEOUT=2)
    procs = _launch_all(cluster, ["--ips", "h1,h2", "--nproc_per_node", "2", FAULTS, "100000",
                                  "0.02"], env)
    seen = _wait_for(procs[0], "step 3 rank 0")
    assert "step 3 rank 0" in seen, seen + procs[0].stdout.read()
    frozen = cluster[1].freeze()  # h2 hangs: every process on it stops answering
    assert frozen
    codes, outs = _finish(procs[:1], timeout=60)
    assert codes == [1], outs
    assert "waited 2 s for the other ranks" in outs[0], outs
    assert "rank(s) [0, 1] gave up waiting for the others" in outs[0]
    assert "rank(s) [2, 3]" in outs[0] and "on host h2) were stuck" in outs[0]
    cluster[1].kill()
    for p in procs[1:]:
        p.wait(timeout=10)
    _clean(cluster, [cluster[0]])


def test_resume_on_fewer_hosts_after_a_host_is_lost(cluster, tmp_path):
    """The recipe of docs/distributed.md: checkpoint every 2 steps; h2 is lost after step 4;
    the job relaunched on h1 alone resumes from the last checkpoint, and its losses are those
    of an uninterrupted run (one process on the global batch) from that step on."""
    script = os.path.join(SCRIPTS, "resume.py")
    ckpt, ref = tmp_path / "ckpt", tmp_path / "ref"
    ckpt.mkdir()
    ref.mkdir()
    env = _env(PADDLE_HL_COLLECTIVE_TIMEOUT=60)
    r = subprocess.run([PY, script, str(ref), "10", "2"], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    expected = _losses(r.stdout)
    procs = _launch_all(cluster, ["--ips", "h1,h2", "--nproc_per_node", "2", script, str(ckpt),
                                  "10", "2", "0.3"], env)
    seen = _wait_for(procs[0], "loss 4 ")
    assert "loss 4 " in seen, seen + procs[0].stdout.read()
    cluster[1].kill()
    codes, outs = _finish(procs[:1], timeout=60)
    assert codes == [1], outs
    first = _losses(seen + outs[0])
    latest = int((ckpt / "latest").read_text())
    assert 4 <= latest < 10, latest
    r = cluster[0].run([PY, "-m", "paddle_hl.distributed.launch", "--nproc_per_node", "2",
                        script, str(ckpt), "10", "2"], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    resumed = _losses(r.stdout)
    assert sorted(resumed) == list(range(latest, 10)), resumed
    for step, value in {**first, **resumed}.items():
        assert value == pytest.approx(expected[step], rel=1e-5, abs=1e-6), step


def _losses(text):
    out = {}
    for line in text.splitlines():
        if line.startswith("loss "):
            _, step, value = line.split()
            out[int(step)] = float(value)
    return out


def test_three_hosts_match_one_process(tmp_path):
    """3 hosts x 2 ranks: every rank ends with the same bits (the script checks it) and the
    parameters of one process on the global batch."""
    cluster = _hosts.Cluster(3)
    try:
        script = os.path.join(SCRIPTS, "dp_hosts.py")
        env = _env(PADDLE_HL_COLLECTIVE_TIMEOUT=120)
        hosts, one = str(tmp_path / "hosts.npz"), str(tmp_path / "one.npz")
        codes, outs = _finish(_launch_all(cluster, ["--ips", "h1,h2,h3", "--nproc_per_node",
                                                    "2", script, "mlp", "5", hosts], env))
        assert codes == [0, 0, 0], outs
        assert outs[0].count("across hosts True") == 6, outs[0]
        r = subprocess.run([PY, script, "mlp", "5", one], env=env, capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        _same(np.load(hosts), np.load(one))
    finally:
        cluster.close()
