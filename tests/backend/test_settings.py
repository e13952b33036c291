"""Process settings (backend/settings.py): read from the environment once, changed by their
setters (public in paddle_hl.device), bad values named; and the numba cache's stale entries."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import paddle_hl as paddle
from paddle_hl.backend import settings


def _child(code, **env):
    e = {k: v for k, v in os.environ.items() if not k.startswith("PADDLE_HL_")}
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e,
                          timeout=120)


def test_each_setting_is_read_once_then_set_by_its_setter():
    code = ("import os, paddle_hl as paddle\n"
            "from paddle_hl.backend import settings\n"
            "a = (settings.num_threads(), settings.numba(), settings.fuse_conv_bn())\n"
            "os.environ.update(PADDLE_HL_NUM_THREADS='5', PADDLE_HL_NUMBA='1', "
            "PADDLE_HL_FUSE_CONV_BN='1')\n"
            "b = (settings.num_threads(), settings.numba(), settings.fuse_conv_bn())\n"
            "paddle.device.set_num_threads(2); paddle.device.set_numba(True)\n"
            "settings.set_fuse_conv_bn(True)\n"
            "c = (paddle.device.get_num_threads(), settings.numba(), settings.fuse_conv_bn())\n"
            "print(a, b, c)")
    r = _child(code, PADDLE_HL_NUM_THREADS="3", PADDLE_HL_NUMBA="0", PADDLE_HL_FUSE_CONV_BN="0")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[0] == "(3, False, False) (3, False, False) (2, True, True)"


def test_bad_values_name_the_variable():
    for var, value, words in [("PADDLE_HL_NUM_THREADS", "0", "must be a positive integer, got '0'"),
                              ("PADDLE_HL_NUMBA", "maybe", "must be 0 or 1, got 'maybe'")]:
        r = _child("import paddle_hl as p; print(p.device.get_num_threads(), "
                   "p.device.get_numba())", **{var: value})
        assert r.returncode != 0 and f"{var} {words}" in r.stderr, r.stderr
    with pytest.raises(ValueError, match="PADDLE_HL_BLAS_THREAD_TIMEOUT.*4 to 30.*'40'"):
        settings._parse_timeout("40")


@pytest.mark.parametrize("bad", [0, -1, 2.0, True, "4"])
def test_set_num_threads_takes_a_positive_int(bad):
    with pytest.raises(ValueError, match="set_num_threads: n must be a positive int"):
        paddle.device.set_num_threads(bad)


def test_numba_switch_through_the_device_module():
    before = paddle.device.get_numba()
    try:
        paddle.device.set_numba(False)
        assert paddle.device.get_numba() is False
        paddle.device.set_numba(True)
        assert paddle.device.get_numba() is (pytest.importorskip("numba") is not None)
    finally:
        settings.set_numba(before)


def test_cpu_count_is_the_affinity():
    if not hasattr(os, "sched_getaffinity"):
        pytest.skip("no CPU affinity on this platform")
    assert paddle.backend.cpu_count() == len(os.sched_getaffinity(0))


def test_stale_cache_entries_are_dropped(tmp_path):
    # numba checks a kernel's cache entry against the kernel's own file only; the kernels
    # inline helpers from _planes.py, so an entry older than any source of the package goes
    from paddle_hl.backend import _numba

    old = ["pool.pool_max-10.py311.nbi", "pool.pool_max-10.py311.1.nbc"]
    new = ["depthwise.dwp_forward-20.py311.nbi", "depthwise.dwp_forward-20.py311.1.nbc"]
    other = "elsewhere.f-1.py311.nbi"  # not this package's: left alone, however old
    for name in old + new + [other]:
        (tmp_path / name).write_bytes(b"x")
    newest = max(os.stat(os.path.join(os.path.dirname(_numba.__file__), f"{m}.py")).st_mtime
                 for m in _numba.FAMILIES)
    for name in old + [other]:
        os.utime(tmp_path / name, (newest - 100, newest - 100))
    for name in new:
        os.utime(tmp_path / name, (newest + 100, newest + 100))
    assert _numba._discard_stale({str(tmp_path)}) == 2
    assert sorted(os.listdir(tmp_path)) == sorted(new + [other])
