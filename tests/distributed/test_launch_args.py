"""The multi-machine launcher's argument errors (no namespaces needed; the jobs themselves are
tested on simulated hosts in test_hosts.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from paddle_hl.distributed.launch import _nodes
from paddle_hl.distributed.launch._job import JobError


def _launch(tmp_path, *args):
    script = tmp_path / "s.py"
    script.write_text("print('ran')\n")
    return subprocess.run([sys.executable, "-m", "paddle_hl.distributed.launch", *args,
                           str(script)], capture_output=True, text=True, timeout=60)


def test_elastic_nnodes_is_refused(tmp_path):
    r = _launch(tmp_path, "--nnodes", "2:4")
    assert r.returncode == 1 and "ran" not in r.stdout
    assert "--nnodes must be a number of machines" in r.stderr and "'2:4'" in r.stderr


def test_ips_without_this_machine(tmp_path):
    # documentation addresses, checked not to be this machine's (a machine may use them): the
    # launcher then refuses before it sends anything anywhere
    ips = [a for a in ("203.0.113.7", "198.51.100.7", "203.0.113.9", "198.51.100.9")
           if not _nodes._is_local(a)][:2]
    if len(ips) < 2:
        pytest.skip("this machine has the documentation addresses the test needs")
    r = _launch(tmp_path, "--ips", ",".join(ips), "--nproc_per_node", "1")
    assert r.returncode == 1
    assert f"none of --ips {','.join(ips)} is an address of this machine" in r.stderr


def test_ips_and_nnodes_disagree():
    with pytest.raises(JobError, match="--nnodes 3 but --ips lists 2 machines"):
        _nodes.run_nodes(3, ["127.0.0.1", "192.0.2.1"], None, 1, {}, [], "/nonexistent")


@pytest.mark.parametrize("master", ["h1", "h1:port", ":6170"])
def test_malformed_master(master):
    with pytest.raises(JobError, match="--master must be HOST:PORT"):
        _nodes._split_master(master, [])


def test_master_forms():
    assert _nodes._split_master("h1:7000", []) == ("h1", 7000)
    assert _nodes._split_master("etcd://10.0.0.1:2379", []) == ("10.0.0.1", 2379)
    assert _nodes._split_master(None, ["h1", "h2"]) == ("h1", _nodes.DEFAULT_PORT)


def test_mpiexec_sigpipe_after_every_rank_ended_cleanly_is_not_a_failure():
    import signal

    from paddle_hl.distributed.launch._job import teardown_only

    clean = {0: "0", 1: "0", 2: "0", 3: "0"}
    assert teardown_only(-signal.SIGPIPE, clean, 4)
    # a rank that failed, one that never reported, or another signal: the job failed
    assert not teardown_only(-signal.SIGPIPE, {**clean, 2: "1"}, 4)
    assert not teardown_only(-signal.SIGPIPE, {0: "0", 1: "0", 2: "0"}, 4)
    assert not teardown_only(-signal.SIGKILL, clean, 4)
    assert not teardown_only(1, clean, 4)
