"""The fused CuPy update kernels give the same parameters as the NumPy updates (GPU only)."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl import backend

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(backend.cupy_module() is None, reason="needs CuPy and a GPU")]

CASES = [("SGD", {}), ("Momentum", {}), ("Momentum", {"use_nesterov": True}),
         ("Adagrad", {}), ("Adadelta", {"learning_rate": 1.0}), ("RMSProp", {}),
         ("RMSProp", {"centered": True, "momentum": 0.5}), ("Adam", {}), ("AdamW", {}),
         ("Adamax", {}), ("Lamb", {}), ("SGD", {"weight_decay": 0.01}),
         ("Momentum", {"weight_decay": 0.01, "rescale_grad": 0.5}),
         ("AdamW", {"weight_decay": 0.1}), ("Adagrad", {"initial_accumulator_value": 0.1}),
         ("RMSProp", {"centered": True})]


def _run(device, name, kwargs, dtype="float32"):
    paddle.set_device(device)
    try:
        rng = np.random.default_rng(0)
        p = paddle.to_tensor(rng.standard_normal((64, 33)).astype(dtype), stop_gradient=False)
        opt = getattr(paddle.optimizer, name)(parameters=[p], **{"learning_rate": 0.01,
                                                                 **kwargs})
        for _ in range(3):
            g = paddle.to_tensor(rng.standard_normal((64, 33)).astype(dtype))
            (p * g).sum().backward()
            opt.step()
            opt.clear_grad()
        return p.numpy()
    finally:
        paddle.set_device("cpu")


@pytest.mark.parametrize("name,kwargs", CASES)
def test_gpu_update_matches_cpu(name, kwargs):
    np.testing.assert_allclose(_run("gpu", name, kwargs), _run("cpu", name, kwargs),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,kwargs", CASES[::3])
def test_gpu_update_matches_cpu_float64(name, kwargs):
    gpu = _run("gpu", name, kwargs, "float64")
    assert gpu.dtype == np.float64
    np.testing.assert_allclose(gpu, _run("cpu", name, kwargs, "float64"), rtol=1e-12,
                               atol=1e-14)

