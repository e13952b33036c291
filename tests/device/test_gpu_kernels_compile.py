"""Every fused update kernel compiles and runs on the GPU for float16, bfloat16, float32 and
float64 parameters (CuPy compiles it with NVRTC for the card), and computes what its CUDA
source says: the result is checked against the same source evaluated by NumPy (the CPU
stand-in's kernel runner, tests/gpu_standin)."""

from __future__ import annotations

import numpy as np
import pytest

from paddle_hl import backend
from paddle_hl.backend import _cuda_kernels
from tests.gpu_standin import fakecupy

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(backend.cupy_module() is None, reason="needs CuPy and a GPU")]

DTYPES = ("float16", "bfloat16", "float32", "float64")
# hyperparameters in a range every kernel takes (rates, decays, epsilons, flags)
SCALAR = {"lr": 0.01, "lr_t": 0.01, "mu": 0.9, "nesterov": 1.0, "b1": 0.9, "b2": 0.999,
          "c1": 0.1, "c2": 0.001, "eps": 1e-6, "eps_t": 1e-6, "decay": 0.999, "rho": 0.95,
          "c_rho": 0.05, "mom_c": 0.5}


def _args(kname, dtype, acc, rng):
    ins, outs, _, _ = _cuda_kernels.update_kernel(kname)
    compute = np.float64 if dtype == "float64" else np.float32
    host = []
    for t, n in (item.split() for item in (ins + ", " + outs).split(",")):
        if t == "C":
            host.append(compute(SCALAR[n]))
        elif t == "P":
            host.append(np.full(1, 0.9, dtype=acc))
        else:
            dt = {"T": dtype, "G": dtype, "A": acc}[t]
            v = rng.uniform(0.1, 1.0, (4, 5)) if n not in ("g",) else rng.standard_normal(
                (4, 5))
            if n == "mg":  # centered RMSProp's mean gradient: its square below ms
                v = v * 0.1
            host.append(v.astype(dt))
    return host


@pytest.mark.parametrize("kname", sorted(_cuda_kernels.UPDATES))
def test_update_kernel_runs_on_the_card_for_every_dtype(kname):
    cp = backend.cupy_module()
    gpu = backend.gpu_backend()
    ref_cp = fakecupy.standin()[0]
    ins, outs, body, name = _cuda_kernels.update_kernel(kname)
    n_out = len(outs.split(","))
    for dtype in DTYPES:
        accs = sorted({dtype, "float64" if dtype == "float64" else "float32"})
        for acc in accs:
            host = _args(kname, dtype, acc, np.random.default_rng(0))
            dev = [cp.asarray(a) if isinstance(a, np.ndarray) else a for a in host]
            grad, scalars, outputs = dev[0], dev[1:-n_out], dev[-n_out:]
            assert gpu.fused_update(kname, grad, tuple(scalars), tuple(outputs))
            ref = [ref_cp.asarray(a) if isinstance(a, np.ndarray) else a for a in host]
            ref_cp.ElementwiseKernel(ins, outs, body, name)(*ref)
            for got, want in zip(outputs, ref[-n_out:]):
                assert got.dtype == want.dtype
                g = backend.to_numpy(got).astype(np.float64)
                w = want.get().astype(np.float64)
                assert np.isfinite(g).all(), (kname, dtype, acc)
                tol = {"float16": 2e-3, "bfloat16": 1.6e-2}.get(
                    dtype if got.dtype.itemsize == 2 else "", 1e-5)
                np.testing.assert_allclose(g, w, rtol=tol, atol=tol,
                                           err_msg=f"{kname} {dtype} (accumulators {acc})")
