"""Shared fixtures: the real-Paddle oracle, devices, and a fresh random seed per test."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import paddle_hl


def _real_paddle():
    if importlib.util.find_spec("paddle") is None:
        return None
    # paddle 2.6.2 under NumPy 2 crashes unless these are imported first (docs/architecture.md)
    import zlib  # noqa: F401

    import numpy.random  # noqa: F401
    import paddle

    # Paddle's own signal handlers allocate memory; a signal that lands inside malloc (a test
    # timeout, a crash in the oracle) then deadlocks the process instead of ending it
    paddle.disable_signal_handler()
    return paddle


@pytest.fixture(scope="session")
def pd():
    """Real paddlepaddle==2.6.2, the oracle for `parity` tests (skips when not installed)."""
    mod = _real_paddle()
    if mod is None:
        pytest.skip("paddlepaddle==2.6.2 is not installed (pip install '.[parity]')")
    return mod


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
