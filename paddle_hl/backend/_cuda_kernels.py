"""The CUDA sources of the GPU backend's kernels, as plain strings (no CuPy needed).

``backend/_cupy.py`` builds its CuPy kernels from these; the test suite compiles every one of
them with NVRTC for float16, bfloat16, float32 and float64 on machines without a GPU
(``tests/device/test_nvrtc_compile.py``), so a source that a dtype cannot compile fails CI
rather than a first step on a GPU.

Each elementwise kernel is ``(in_params, out_params, operation)`` in CuPy's
``ElementwiseKernel`` notation. The one-letter names are type placeholders bound by the
arguments' dtypes:

- ``T``: the parameter (float16, bfloat16, float32 or float64);
- ``G``: the gradient (the parameter's dtype, or float32 for a low-precision parameter);
- ``A``: the accumulators (moments, velocity ...): float32 or the parameter's dtype;
- ``P``: the beta-power accumulators, read on the device (shape [1], broadcast);
- ``C``: the compute type, float64 for float64 parameters and float32 otherwise; every
  hyperparameter is passed in it.

Every update loads its operands into ``C`` locals, computes there and stores each result once
with a cast: CuPy's bfloat16 device type has no compound assignment (``-=``, ``+=``, ``*=``)
and float16 arithmetic would round every intermediate, so no operation touches a ``T`` or
``A`` value except the loads and the final stores.
"""

from __future__ import annotations

__all__ = []

# Adam's elementwise step, shared by "adamw" and "adam": Paddle's formula as
# optimizer/adam.py::adam_passes states it, restated in CUDA with the same order of operations
# (tests/optimizer/test_adam_formula.py runs it against the passes)
_ADAM_STEP = ("C gc = (C)g; C pc = (C)p * decay;"
              "C mc = b1 * (C)m + c1 * gc; C vc = b2 * (C)v + c2 * gc * gc;"
              "pc = pc - (mc / (sqrt(vc) + eps_t)) * lr_t;"
              "p = (T)pc; m = (A)mc; v = (A)vc;")

# One fused elementwise kernel per optimizer update. On a GPU each in-place pass of the NumPy
# form would be a kernel launch and a trip through memory; here the whole per-element update
# reads the gradient once and writes the parameter and its accumulators in place.
UPDATES = {
    "sgd": (
        "G g, C lr", "T p",
        "C pc = (C)p; pc = pc - lr * (C)g; p = (T)pc;"),
    "momentum": (
        "G g, C lr, C mu, C nesterov", "T p, A v",
        "C gc = (C)g; C vc = mu * (C)v + gc; C pc = (C)p;"
        "pc = pc - (nesterov != 0 ? lr * (gc + mu * vc) : lr * vc);"
        "v = (A)vc; p = (T)pc;"),
    # Adam and AdamW with the step's scalars computed on the host (optimizer/adam.py's
    # adam_scalars: the scalars of the CPU's numba kernel of the same name)
    "adamw": (
        "G g, C lr_t, C b1, C b2, C c1, C c2, C eps_t, C decay", "T p, A m, A v",
        _ADAM_STEP),
    # Adam and AdamW reading the beta powers on the device: no host read per parameter (the
    # bias corrections restate adam_scalars, on the device)
    "adam": (
        "G g, P b1p, P b2p, C lr, C b1, C b2, C c1, C c2, C eps, C decay", "T p, A m, A v",
        "C bc2 = sqrt((C)1 - (C)b2p);"
        "C lr_t = lr * bc2 / ((C)1 - (C)b1p); C eps_t = eps * bc2;" + _ADAM_STEP),
    "adamax": (
        "G g, P b1p, C lr, C b1, C b2, C c1, C eps", "T p, A m, A inf",
        "C gc = (C)g; C lr_t = lr / ((C)1 - (C)b1p);"
        "C mc = b1 * (C)m + c1 * gc; C ic = max(b2 * (C)inf + eps, fabs(gc));"
        "C pc = (C)p - lr_t * (mc / ic);"
        "p = (T)pc; m = (A)mc; inf = (A)ic;"),
    "adagrad": (
        "G g, C lr, C eps", "T p, A m",
        "C gc = (C)g; C mc = (C)m + gc * gc; C pc = (C)p - lr * gc / (sqrt(mc) + eps);"
        "p = (T)pc; m = (A)mc;"),
    "adadelta": (
        "G g, C lr, C rho, C c_rho, C eps", "T p, A sq_g, A sq_u",
        "C gc = (C)g; C sg = rho * (C)sq_g + c_rho * gc * gc;"
        "C upd = -sqrt(((C)sq_u + eps) / (sg + eps)) * gc;"
        "C su = rho * (C)sq_u + c_rho * upd * upd; C pc = (C)p + lr * upd;"
        "p = (T)pc; sq_g = (A)sg; sq_u = (A)su;"),
    "rmsprop": (
        "G g, C lr, C rho, C c_rho, C eps, C mom_c", "T p, A ms, A mom",
        "C gc = (C)g; C msc = rho * (C)ms + c_rho * gc * gc;"
        "C mo = mom_c * (C)mom + lr * gc / sqrt(msc + eps); C pc = (C)p - mo;"
        "p = (T)pc; ms = (A)msc; mom = (A)mo;"),
    "rmsprop_centered": (
        "G g, C lr, C rho, C c_rho, C eps, C mom_c", "T p, A ms, A mg, A mom",
        "C gc = (C)g; C msc = rho * (C)ms + c_rho * gc * gc; C mgc = rho * (C)mg + c_rho * gc;"
        "C mo = mom_c * (C)mom + lr * gc / sqrt(msc - mgc * mgc + eps); C pc = (C)p - mo;"
        "p = (T)pc; ms = (A)msc; mg = (A)mgc; mom = (A)mo;"),
}


def update_kernel(name):
    """``(in_params, out_params, operation, kernel_name)`` of the fused update ``name``."""
    try:
        ins, outs, body = UPDATES[name]
    except KeyError:
        raise ValueError(f"update_kernel: no fused update named {name!r}; the kernels are "
                         f"{sorted(UPDATES)}") from None
    return ins, outs, body, f"paddle_hl_{name}"


def elementwise_kernels():
    """Every elementwise kernel the GPU backend builds: ``{kernel_name: (in_params,
    out_params, operation)}``."""
    return {f"paddle_hl_{n}": spec for n, spec in UPDATES.items()}
