"""Paddle's Adam formula is stated once (``optimizer/adam.py``: ``adam_scalars`` and
``adam_passes``); the compiled kernels restate it for their language. Each is held to it here:
the numba kernel and the GPU's "adamw" source give the passes' numbers bit for bit, and the
GPU's "adam" source (bias corrections on the device) matches them to the compute dtype's
rounding. The CUDA sources run on the CuPy stand-in, which evaluates them as NumPy
expressions with the kernel's own types and order of operations."""

from __future__ import annotations

import numpy as np
import pytest

from paddle_hl.backend import _cuda_kernels
from paddle_hl.optimizer.adam import adam_passes, adam_scalars
from tests.gpu_standin import fakecupy

RNG = np.random.default_rng(7)

# (lr, beta1, beta2, epsilon, step, decay): Adam's defaults late and early in training, and
# AdamW with larger betas' complements
CASES = [(1e-3, 0.9, 0.999, 1e-8, 7, 1.0), (1e-2, 0.5, 0.99, 1e-3, 1, 1.0),
         (3e-3, 0.9, 0.999, 1e-8, 120, 1.0 - 3e-3 * 0.01)]


def _state(dtype, n=4099):
    p = RNG.standard_normal(n).astype(dtype)
    g = (RNG.standard_normal(n) * 10.0 ** RNG.integers(-6, 2, n)).astype(dtype)
    m = (RNG.standard_normal(n) * 1e-2).astype(dtype)
    v = (RNG.random(n) * 1e-3).astype(dtype)
    return p, g, m, v


def _passes(state, scalars):
    p, g, m, v = (a.copy() for a in state)
    adam_passes(np, p, g, m, v, np.empty_like(p), *scalars)
    return p, m, v


def _scalars(case):
    lr, b1, b2, eps, step, decay = case
    return adam_scalars(lr, b1, b2, eps, b1 ** step, b2 ** step) + (decay,)


def test_adam_scalars_state_paddles_bias_correction():
    lr_t, b1, b2, c1, c2, eps_t = adam_scalars(0.1, 0.9, 0.999, 1e-8, 0.9 ** 3, 0.999 ** 3)
    assert (b1, b2, c1, c2) == (0.9, 0.999, 1 - 0.9, 1 - 0.999)
    assert lr_t == 0.1 * np.sqrt(1 - 0.999 ** 3) / (1 - 0.9 ** 3)
    assert eps_t == 1e-8 * np.sqrt(1 - 0.999 ** 3)


def test_the_passes_compute_the_formula():
    state = _state(np.float64)
    scalars = _scalars(CASES[2])
    lr_t, b1, b2, c1, c2, eps_t, decay = scalars
    p, g, m, v = state
    m_ref = b1 * m + c1 * g
    v_ref = b2 * v + c2 * g * g
    p_ref = decay * p - lr_t * m_ref / (np.sqrt(v_ref) + eps_t)
    for got, ref in zip(_passes(state, scalars), (p_ref, m_ref, v_ref)):
        np.testing.assert_allclose(got, ref, rtol=1e-13, atol=1e-300)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES)
def test_the_numba_kernel_gives_the_passes_bits(dtype, case):
    pytest.importorskip("numba")
    from paddle_hl.backend import _numba

    if not _numba.enabled():
        pytest.skip("the numba extra is switched off in this run")
    state = _state(dtype)
    scalars = _scalars(case)
    p, g, m, v = (a.copy() for a in state)
    assert _numba.optim.adam_update(p, g, m, v, *scalars) is True
    for got, ref in zip((p, m, v), _passes(state, scalars)):
        np.testing.assert_array_equal(got, ref)


def _cuda(name, dtype, grad, scalars, outputs):
    """Run the GPU's update ``name`` on the stand-in as the backend calls it (scalars in the
    compute dtype, beta powers as device arrays)."""
    cp = fakecupy.standin()[0]
    ins, outs, body, kname = _cuda_kernels.update_kernel(name)
    kernel = cp.ElementwiseKernel(ins, outs, body, kname)
    ct = np.float64 if dtype == np.float64 else np.float32
    dev = [cp.asarray(a) for a in outputs]
    args = [cp.asarray(s) if isinstance(s, np.ndarray) else ct(s) for s in scalars]
    kernel(cp.asarray(grad), *args, *dev)
    return [a.get() for a in dev]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES)
def test_the_gpu_adamw_source_gives_the_passes_bits(dtype, case):
    # the GPU kernel once divided after multiplying by lr_t and formed 1 - beta in the
    # compute dtype: float32 results then differed from the CPU's in the last bits
    state = _state(dtype)
    scalars = _scalars(case)
    p, g, m, v = state
    got = _cuda("adamw", dtype, g, scalars, (p, m, v))
    for a, ref in zip(got, _passes(state, scalars)):
        np.testing.assert_array_equal(a, ref)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES)
def test_the_gpu_adam_source_matches_the_passes(dtype, case):
    # "adam" reads the beta powers on the device and forms lr_t and eps_t there, in the
    # compute dtype: float64 is exact, float32 differs only by that rounding of the scalars
    lr, b1, b2, eps, step, decay = case
    state = _state(dtype)
    p, g, m, v = state
    b1p, b2p = np.array([b1 ** step], dtype), np.array([b2 ** step], dtype)
    got = _cuda("adam", dtype, g, (b1p, b2p, lr, b1, b2, 1 - b1, 1 - b2, eps, decay),
                (p, m, v))
    scalars = adam_scalars(lr, b1, b2, eps, float(b1p[0]), float(b2p[0])) + (decay,)
    ref = _passes(state, scalars)
    if dtype == np.float64:
        for a, r in zip(got, ref):
            np.testing.assert_array_equal(a, r)
    else:
        np.testing.assert_array_equal(got[1], ref[1])  # the moments take no bias correction
        np.testing.assert_array_equal(got[2], ref[2])
        step_got, step_ref = (p * np.float32(decay) - got[0]), (p * np.float32(decay) - ref[0])
        np.testing.assert_allclose(step_got, step_ref, rtol=2e-6, atol=1e-7 * np.abs(p).max())
