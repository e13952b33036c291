"""NumPy's OpenBLAS settings: the idle-worker timeout and the one-thread hold."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest

import paddle_hl  # noqa: F401  (the import applies the process settings)
from paddle_hl.backend import _openblas

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

needs_openblas = pytest.mark.skipif(
    _openblas.library() is None or not hasattr(_openblas.library(), "blas_thread_shutdown_"),
    reason="NumPy does not run on an OpenBLAS that exports its thread controls")


def _run(code, **env):
    full = {k: v for k, v in os.environ.items()
            if k not in ("OPENBLAS_THREAD_TIMEOUT", "GOTO_THREAD_TIMEOUT",
                         "PADDLE_HL_BLAS_THREAD_TIMEOUT")}
    full.update(env)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=full, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


_REPORT = ("import os, numpy as np; a = np.ones((300, 300), 'f4'); a @ a; "
           "import paddle_hl; from paddle_hl.backend import _openblas as B; "
           "lib = B.library(); import ctypes; lib.openblas_thread_timeout.restype = ctypes.c_int; "
           "a @ a; print(B.tune_thread_timeout(), lib.openblas_thread_timeout(), "
           "'OPENBLAS_THREAD_TIMEOUT' in os.environ)")


@needs_openblas
def test_import_shortens_the_idle_spin_and_leaves_the_environment_alone():
    # numpy was imported (and its BLAS threads started) before paddle_hl: still tuned
    tuned, in_lib, in_env = _run(_REPORT).split()
    assert tuned == in_lib == str(_openblas.DEFAULT_TIMEOUT)
    assert in_env == "False"  # child processes see the user's environment


@needs_openblas
@pytest.mark.parametrize("env", [{"PADDLE_HL_BLAS_THREAD_TIMEOUT": "0"},
                                 {"OPENBLAS_THREAD_TIMEOUT": "25"}])
def test_timeout_tuning_opt_out(env):
    tuned, in_lib, _ = _run(_REPORT, **env).split()
    assert tuned == "None"
    assert in_lib == env.get("OPENBLAS_THREAD_TIMEOUT", "0")


@needs_openblas
def test_timeout_setting_by_environment():
    tuned, in_lib, _ = _run(_REPORT, PADDLE_HL_BLAS_THREAD_TIMEOUT="12").split()
    assert tuned == in_lib == "12"


def test_bad_timeout_setting_names_the_variable():
    from paddle_hl.backend import settings

    with pytest.raises(ValueError, match="PADDLE_HL_BLAS_THREAD_TIMEOUT.*4 to 30.*'40'"):
        settings._parse_timeout("40")
    with pytest.raises(ValueError, match="'fast'"):
        settings._parse_timeout("fast")


@needs_openblas
def test_products_stay_right_after_the_workers_restart():
    # the tuning stops OpenBLAS's workers; products after it (threaded and not) are exact
    rng = np.random.default_rng(0)
    a = rng.standard_normal((512, 384))
    b = rng.standard_normal((384, 256))
    ref = np.einsum("ik,kj->ij", a, b)
    np.testing.assert_allclose(a @ b, ref, rtol=1e-10, atol=1e-10)
    with _openblas.one_thread():
        np.testing.assert_allclose(a @ b, ref, rtol=1e-10, atol=1e-10)
    time.sleep(0.01)  # workers asleep: the next product wakes them
    np.testing.assert_allclose(a @ b, ref, rtol=1e-10, atol=1e-10)


def test_tuning_is_idempotent():
    first = _openblas.tune_thread_timeout()
    assert _openblas.tune_thread_timeout() == first
