"""The inference-models tutorial runs top to bottom in a real Jupyter kernel: a LeNet trained a
few steps is exported with ``paddle.jit.save`` and reloaded through ``paddle.inference``, and an
inference model written by real Paddle 2.6.2 in the test (with Paddle's output on a reference
input) runs through the predictor with Paddle's output."""

from __future__ import annotations

import re
import time

import numpy as np
import pytest

from tests.notebook_runner import run_notebook


@pytest.mark.parity
def test_inference_models_notebook(pd, tmp_path, monkeypatch):
    pd.seed(3)
    net = pd.vision.models.mobilenet_v3_small(scale=0.5, num_classes=10)
    net.eval()
    prefix = str(tmp_path / "paddle_written" / "inference")
    pd.jit.save(net, prefix, [pd.static.InputSpec([None, 3, 64, 64], "float32", "x")])
    x = np.random.default_rng(0).standard_normal([2, 3, 64, 64]).astype("float32")
    np.savez(prefix + ".check.npz", x=x, out=net(pd.to_tensor(x)).numpy())
    monkeypatch.setenv("PADDLE_HL_TUTORIAL_MODEL", prefix)
    t0 = time.monotonic()
    run = run_notebook("14_inference_models.ipynb")
    took = time.monotonic() - t0
    assert not run.stderr, f"unexpected stderr output: {run.stderr}"
    text = run.text
    assert "1500 training and 300 test images" in text
    assert float(re.search(r"test accuracy after 3 epochs: ([0-9.]+)", text).group(1)) > 0.6
    assert "['inference.pdiparams', 'inference.pdiparams.info', 'inference.pdmodel']" in text
    assert "inputs: [('image', [-1, 1, 28, 28], 'float32')]" in text
    assert "'conv2d'" in text and "'matmul_v2'" in text
    assert text.count("matches the layer: True") == 2
    assert "a model written by real Paddle: inference.pdmodel" in text
    assert "input x [-1, 3, 64, 64]" in text
    assert "matches Paddle's own output: True" in text
    assert took < 60, f"the tutorial took {took:.0f} s"


@pytest.mark.slow
def test_inference_models_notebook_without_paddle(monkeypatch):
    """Without Paddle's model the last section writes one with paddle_hl's export and says so."""
    monkeypatch.delenv("PADDLE_HL_TUTORIAL_MODEL", raising=False)
    run = run_notebook("14_inference_models.ipynb")
    assert not run.stderr, f"unexpected stderr output: {run.stderr}"
    assert "written here with paddle_hl's own export instead" in run.text
    assert "input x [-1, 3, 64, 64]" in run.text
    assert re.search(r"output \[2, 10\] top class per image: \[\d, \d\]", run.text)
