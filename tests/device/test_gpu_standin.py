"""The GPU path on the CPU: the strict stand-in for CuPy (tests/gpu_standin) refuses what CuPy
refuses and counts host transfers; under it the gpu-marked tests pass and a training step
(ResNet-18 with Adam and with Momentum, AMP O1 and O2) keeps to its transfer budget."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from tests.gpu_standin import fakecupy

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cp():
    return fakecupy.standin()[0]  # the modules alone: not installed as cupy here


def test_numpy_cannot_take_a_device_array(cp):
    a = cp.arange(3.0)
    with pytest.raises(TypeError, match="Implicit conversion"):
        np.asarray(a)
    with pytest.raises(TypeError):
        np.ones(3) + a  # noqa: B018
    with pytest.raises(TypeError):
        cp.concatenate([a, np.ones(2)])
    assert isinstance(a + 1, cp.ndarray) and isinstance(a.sum(), cp.ndarray)


def test_every_device_to_host_transfer_is_counted(cp):
    a = cp.arange(4.0)
    fakecupy.stats.reset()
    a.get(), cp.asnumpy(a), a[0].item(), a.tolist(), float(a[1]), int(a[2]), bool(a[3])
    assert fakecupy.stats.d2h == {"get": 1, "asnumpy": 1, "item": 1, "tolist": 1, "float": 1,
                                  "int": 1, "bool": 1}
    fakecupy.stats.reset()
    b = (a * 2 + 1).sum()  # device work only
    assert fakecupy.stats.transfers == 0 and isinstance(b, cp.ndarray)
    a[a > 1]  # noqa: B018  (CuPy waits for the device to size a masked result)
    assert fakecupy.stats.implicit == {"mask_getitem": 1}


def test_what_cupy_lacks_for_bfloat16_is_refused(cp):
    a = cp.asarray(np.ones(3)).astype("bfloat16")
    for fn in (cp.sort, cp.argsort, cp.unique, cp.cumsum, cp.cumprod):
        with pytest.raises(TypeError, match="bfloat16"):
            fn(a)
    assert cp.cumsum(a, dtype="float32").dtype == np.float32  # a float32 scan is fine
    k = cp.ElementwiseKernel("T g, T lr", "T p", "p -= lr * g;", "old_sgd")
    with pytest.raises(TypeError, match="compound assignment"):
        k(a, a.dtype.type(0.1), a.copy())
    k(cp.ones(3, dtype="float16"), np.float16(0.5), cp.ones(3, dtype="float16"))  # float16 has


def test_kernels_run_their_own_source(cp):
    from paddle_hl.backend import _cuda_kernels

    ins, outs, body, name = _cuda_kernels.update_kernel("momentum")
    k = cp.ElementwiseKernel(ins, outs, body, name)
    p, v = cp.ones(3, dtype="bfloat16"), cp.zeros(3, dtype="float32")
    f32 = np.float32
    k(cp.full(3, 2.0, dtype="float32"), f32(0.5), f32(0.9), f32(0.0), p, v)
    np.testing.assert_array_equal(v.get(), 2.0)
    np.testing.assert_array_equal(p.astype("float32").get(), 0.0)
    with pytest.raises(TypeError, match="bound to"):  # one placeholder, two dtypes
        k(cp.ones(3), f32(0.5), np.float64(0.9), f32(0.0), p, v)


def _env():
    env = dict(os.environ, PADDLE_HL_TEST_DEVICE="cpu", PYTHONPATH=str(ROOT))
    for k in list(env):
        if k.startswith(("PYTEST_XDIST", "PYTEST_CURRENT")):
            del env[k]
    return env


def test_gpu_marked_tests_pass_on_the_standin():
    # the gpu-marked core (update kernels, backend kernels, GPU-against-CPU op families and
    # the GPU-path fixes) with the stand-in as CuPy; the model zoo's GPU runs are left to a
    # real GPU (benchmarks/gpu_check.sh)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "tests.gpu_standin.plugin", "-p",
           "no:randomly", "-n", "0", "-m", "gpu", "-k", "not vision_zoo",
           "tests/optimizer/test_gpu_kernels.py", "tests/backend/test_kernels.py",
           "tests/device/test_gpu_matches_cpu.py", "tests/device/test_gpu_path_fixes.py",
           "tests/device/test_device.py", "tests/device/test_gpu_kernels_compile.py"]
    # two stand-in GPUs: the multi-device paths run too
    out = subprocess.run(cmd, cwd=ROOT, env=dict(_env(), PADDLE_HL_FAKE_GPUS="2"),
                         capture_output=True, text=True, timeout=540)
    tail = out.stdout[-4000:] + out.stderr[-2000:]
    assert out.returncode == 0, tail
    assert " passed" in out.stdout and "failed" not in out.stdout, tail


def test_training_step_reads_nothing_back_from_the_gpu():
    out = subprocess.run([sys.executable, "-m", "tests.gpu_standin.step_budget"], cwd=ROOT,
                         env=_env(), capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    rows = {r["case"]: r for r in map(json.loads, out.stdout.split("\n")[:-1])}
    assert set(rows) == {"adam", "momentum", "amp_o1", "amp_o2"}, out.stdout
    for case, r in rows.items():
        assert r["implicit"] == {}, r
        assert r["launches"] == 62, r  # one fused update kernel per ResNet-18 parameter
        assert np.isfinite(r["loss"]), r
        if case.startswith("amp"):
            # GradScaler's one read: whether the step is skipped (found_inf), as in Paddle
            assert r["d2h"] == {"get": 1}, r
        else:
            assert r["d2h"] == {}, r


@pytest.mark.slow
def test_suite_parts_pass_with_the_standin_gpu_as_default_device():
    # a broad part of the suite with the stand-in GPU as the default device (tests that name a
    # device or are marked cpu keep theirs)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "tests.gpu_standin.plugin", "-p",
           "no:randomly", "-n", "0", "tests/tensor", "tests/nn", "tests/optimizer", "tests/amp",
           "tests/reliability/test_low_precision.py"]
    out = subprocess.run(cmd, cwd=ROOT, env=dict(_env(), PADDLE_HL_TEST_DEVICE="gpu"),
                         capture_output=True, text=True, timeout=900)
    tail = out.stdout[-4000:] + out.stderr[-2000:]
    assert out.returncode == 0, tail
