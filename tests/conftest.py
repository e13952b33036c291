"""Shared fixtures: the real-Paddle oracle, devices, and a fresh random seed per test."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl
from tests.layer_check import real_paddle


@pytest.fixture(scope="session")
def pd():
    """Real paddlepaddle==2.6.2, the oracle for `parity` tests (skips when not installed)."""
    mod = real_paddle()
    if mod is None:
        pytest.skip("paddlepaddle==2.6.2 is not installed (pip install '.[parity]')")
    return mod


@pytest.fixture(scope="session")
def oracle():
    """Real Paddle, or None: the layer checker's parts that need it are skipped, the others
    run (tests/layer_check.py)."""
    return real_paddle()


def _gpu_available():
    from paddle_hl import backend

    return backend.cupy_module() is not None


# PADDLE_HL_TEST_DEVICE=gpu runs the whole suite with the GPU as the default device (tests that
# name a device keep it); the run refuses to start without CuPy and a GPU rather than
# quietly testing the CPU again.
TEST_DEVICE = __import__("os").environ.get("PADDLE_HL_TEST_DEVICE", "cpu").lower()


def pytest_configure(config):
    if TEST_DEVICE not in ("cpu", "gpu"):
        raise pytest.UsageError(f"PADDLE_HL_TEST_DEVICE must be 'cpu' or 'gpu', got "
                                f"{TEST_DEVICE!r}")
    if TEST_DEVICE == "gpu" and not _gpu_available():
        raise pytest.UsageError("PADDLE_HL_TEST_DEVICE=gpu needs CuPy and a CUDA GPU "
                                "(pip install 'paddle_hl[gpu]')")


DEVICES = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)]


@pytest.fixture(params=DEVICES)
def device(request):
    """Run a test on each device; 'gpu' skips cleanly without CuPy and a GPU."""
    if request.param == "gpu" and not _gpu_available():
        pytest.skip("needs CuPy and a CUDA GPU")
    prev = paddle_hl.get_device()
    paddle_hl.set_device(request.param)
    yield request.param
    paddle_hl.set_device(prev)


@pytest.fixture(autouse=True)
def _fresh_state(request):
    """Each test starts with the default dtype, grad mode on, the suite's device (CPU unless
    PADDLE_HL_TEST_DEVICE says otherwise; always the CPU for tests marked ``cpu``) and a
    fixed seed."""
    from paddle_hl.framework import state

    paddle_hl.set_default_dtype("float32")
    state.set_grad(True)
    paddle_hl.set_device("cpu" if request.node.get_closest_marker("cpu") else TEST_DEVICE)
    np.random.seed(0)
    seed = getattr(paddle_hl, "seed", None)
    if seed is not None:
        seed(0)
    yield
    paddle_hl.set_default_dtype("float32")
    state.set_grad(True)
    _reset_global_state()


def _reset_global_state():
    """Undo process-wide settings a test may leave behind, in paddle_hl and in the oracle."""
    import sys

    init = sys.modules.get("paddle_hl.nn.initializer")
    if init is not None:
        init.set_global_initializer(None, None)
    pd = sys.modules.get("paddle")
    if pd is not None and hasattr(pd, "set_default_dtype"):
        pd.set_default_dtype("float32")
        pd.nn.initializer.set_global_initializer(None, None)
