"""pytest plugin: run the suite's GPU path on the CPU stand-in for CuPy.

    PADDLE_HL_TEST_DEVICE=gpu python -m pytest -p tests.gpu_standin.plugin tests/...

Loaded with ``-p`` it installs the stand-in (``tests/gpu_standin/fakecupy.py``) as ``cupy``
before the suite's conftest looks for a GPU, so the gpu-marked tests run and, with
``PADDLE_HL_TEST_DEVICE=gpu``, every test that does not name a device runs with the stand-in
GPU as the default device. ``PADDLE_HL_FAKE_GPUS`` sets the number of stand-in devices (1 by
default, as on the GPU machine; 2 runs the multi-device code paths).
"""

from __future__ import annotations

import os

import pytest

from . import fakecupy

fakecupy.install(n_devices=int(os.environ.get("PADDLE_HL_FAKE_GPUS", "1")))


@pytest.fixture
def gpu_transfers():
    """The stand-in's counters, reset for the test."""
    fakecupy.stats.reset()
    return fakecupy.stats
