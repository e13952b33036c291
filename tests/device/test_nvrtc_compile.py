"""Every CUDA kernel the GPU backend builds compiles with NVRTC for float16, bfloat16, float32
and float64 (no GPU needed: NVRTC compiles to PTX on any machine).

The kernels are wrapped as CuPy wraps an ElementwiseKernel (see ``tests/device/nvrtc.py``),
with CuPy's own float16/bfloat16 device classes: a body that CuPy could not compile for a dtype
(bfloat16 has no compound assignment there) fails here before it fails on a GPU.
"""

from __future__ import annotations

import itertools

import pytest

from paddle_hl.backend import _cuda_kernels

from . import nvrtc

pytestmark = pytest.mark.skipif(bool(nvrtc.missing()), reason=nvrtc.missing() or "ready")

DTYPES = ("float16", "bfloat16", "float32", "float64")


def _instantiations(dtype):
    """The placeholder bindings a parameter of ``dtype`` can meet: the gradient in the
    parameter's dtype or in float32, the accumulators and beta powers likewise."""
    compute = "float64" if dtype == "float64" else "float32"
    kinds = sorted({dtype, compute})
    for g, a in itertools.product(kinds, kinds):
        yield {"T": dtype, "G": g, "A": a, "P": a, "C": compute}


def _program(kname, spec, dtypes):
    ins, outs, body = spec
    src = nvrtc.HEADER
    for dt in dtypes:
        for i, types in enumerate(_instantiations(dt)):
            src += nvrtc.elementwise_source(kname, ins, outs, body, types, f"{kname}_{dt}_{i}")
    return src


@pytest.mark.parametrize("kname", sorted(_cuda_kernels.elementwise_kernels()))
def test_update_kernel_compiles_for_every_float_dtype(kname):
    spec = _cuda_kernels.elementwise_kernels()[kname]
    ok, log = nvrtc.compile_program(_program(kname, spec, DTYPES))
    assert ok, f"{kname} does not compile for one of {DTYPES}:\n{log[:4000]}"


def test_check_rejects_compound_assignment_on_bfloat16():
    # the check itself: the form every update kernel had (compound assignment on a T value)
    # compiles for float16 and fails for CuPy's bfloat16, as it does on a GPU
    spec = ("T g, T lr", "T p", "p -= lr * g;")
    ok16, log16 = nvrtc.compile_program(
        nvrtc.HEADER + nvrtc.elementwise_source("k", *spec, {"T": "float16"}, "a"))
    ok_bf, log_bf = nvrtc.compile_program(
        nvrtc.HEADER + nvrtc.elementwise_source("k", *spec, {"T": "bfloat16"}, "b"))
    assert ok16, log16
    assert not ok_bf and '"-="' in log_bf


def test_every_kernel_source_of_the_backend_is_checked():
    # the GPU backend builds its kernels from _cuda_kernels only: no CUDA source of its own
    import pathlib

    from paddle_hl import backend

    src = (pathlib.Path(backend.__file__).parent / "_cupy.py").read_text()
    for cls in ("ElementwiseKernel", "ReductionKernel", "RawKernel", "RawModule"):
        uses = src.count(f"cupy.{cls}(")
        assert uses == (1 if cls == "ElementwiseKernel" else 0), (cls, uses)
    root = pathlib.Path(backend.__file__).parents[1]
    for f in root.rglob("*.py"):
        if f.name in ("_cupy.py",):
            continue
        text = f.read_text(encoding="utf-8")
        assert not any(f"{c}(" in text for c in ("ElementwiseKernel", "ReductionKernel",
                                                 "RawKernel", "RawModule")), f
