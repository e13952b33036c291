"""One fused CuPy elementwise kernel per optimizer update (GPU only).

On NumPy an update is a few in-place vectorised passes; on a GPU each pass would be a kernel
launch and a trip through memory, so every optimizer's whole per-element update runs as one
``cupy.ElementwiseKernel`` that reads the gradient once and writes the parameter and its
accumulators in place. Kernels are compiled on first use and cached by CuPy.
"""

from __future__ import annotations

import functools

__all__ = []

_SOURCES = {
    "sgd": ("T g, T lr", "T p", "p -= lr * g;"),
    "momentum": (
        "T g, T lr, T mu, T nesterov", "T p, T v",
        "v = mu * v + g; p -= nesterov != 0 ? lr * (g + mu * v) : lr * v;"),
    "adamw": (
        "T g, T lr_t, T b1, T b2, T eps_hat, T decay", "T p, T m, T v",
        "p *= decay; m = b1 * m + (1 - b1) * g; v = b2 * v + (1 - b2) * g * g;"
        "p -= lr_t * m / (sqrt(v) + eps_hat);"),
    "adamax": (
        "T g, T lr_t, T b1, T b2, T eps", "T p, T m, T inf",
        "m = b1 * m + (1 - b1) * g; inf = max(b2 * inf + eps, fabs(g)); p -= lr_t * m / inf;"),
    "adagrad": ("T g, T lr, T eps", "T p, T m", "m += g * g; p -= lr * g / (sqrt(m) + eps);"),
    "adadelta": (
        "T g, T lr, T rho, T eps", "T p, T sq_g, T sq_u",
        "sq_g = rho * sq_g + (1 - rho) * g * g;"
        "T upd = -sqrt((sq_u + eps) / (sq_g + eps)) * g;"
        "sq_u = rho * sq_u + (1 - rho) * upd * upd; p += lr * upd;"),
    "rmsprop": (
        "T g, T lr, T rho, T eps, T mom_c", "T p, T ms, T mom",
        "ms = rho * ms + (1 - rho) * g * g; mom = mom_c * mom + lr * g / sqrt(ms + eps);"
        "p -= mom;"),
    "rmsprop_centered": (
        "T g, T lr, T rho, T eps, T mom_c", "T p, T ms, T mg, T mom",
        "ms = rho * ms + (1 - rho) * g * g; mg = rho * mg + (1 - rho) * g;"
        "mom = mom_c * mom + lr * g / sqrt(ms - mg * mg + eps); p -= mom;"),
}


@functools.cache
def _kernel(name):
    from .. import backend

    cp = backend.cupy_module()
    ins, outs, body = _SOURCES[name]
    return cp.ElementwiseKernel(ins, outs, body, f"paddle_hl_{name}")


def run(name, grad, scalars, outputs):
    """Run update ``name``: ``grad`` and the Python-number ``scalars`` in, ``outputs``
    (the parameter first, then its accumulators) updated in place."""
    dt = outputs[0].dtype
    _kernel(name)(grad.astype(dt, copy=False), *(dt.type(s) for s in scalars), *outputs)
