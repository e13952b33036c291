"""The BLAS floor of a workload: how much of a step is GEMM, and how fast that GEMM can be.

:func:`gemm_plan` runs one forward pass of a paddle_hl network with hooks on its Linear and
Conv2D layers and lists every matrix product a training (or inference) step of that network
needs: for a Linear layer ``x[M, K] @ W[K, N]``, for a convolution the im2col product per group
(``W[Cout/g, Cin/g*kh*kw] @ cols[.., B*Ho*Wo]``); in training also the weight gradient and,
where the layer's input needs a gradient, the input gradient. Depthwise convolutions are not
GEMMs and count as work outside GEMM.

:func:`gemm_floor` times each distinct product with NumPy's SGEMM on this machine (median of a
few runs, with the thread settings of the calling process) and returns the total FLOPs and
seconds: the time a step would take if it did nothing but its GEMMs at NumPy's speed. The
difference between a measured step and that floor is the time spent outside GEMM (im2col and
col2im copies, normalisation, activations, the optimizer, allocation, Python).
"""

from __future__ import annotations

import statistics
import time
from collections import Counter

import numpy as np


def gemm_plan(lib, net, x, train=True):
    """``Counter`` of ``(m, k, n)`` products one step of ``net`` on ``x`` performs."""
    nn = lib.nn
    plan = Counter()
    hooks = []

    def on_linear(layer, inputs, output):
        a = inputs[0]
        k, n = layer.weight.shape
        m = int(np.prod(a.shape[:-1]))
        plan[(m, k, n)] += 1
        if train:
            plan[(k, m, n)] += 1  # dW = x^T @ g
            if not a.stop_gradient:
                plan[(m, n, k)] += 1  # dx = g @ W^T

    def on_conv(layer, inputs, output):
        a = inputs[0]
        w = layer.weight
        groups = layer._groups
        cout, cin_g = w.shape[0], w.shape[1]
        if groups > 1 and cin_g == 1:
            return  # depthwise: a per-tap loop, not a GEMM
        kk = cin_g * int(np.prod(w.shape[2:]))
        cout_g = cout // groups
        cols = output.shape[0] * int(np.prod(output.shape[2:]))
        plan[(cout_g, kk, cols)] += groups
        if train:
            plan[(cout_g, cols, kk)] += groups  # dW = g @ cols^T
            if not a.stop_gradient:
                plan[(kk, cout_g, cols)] += groups  # dcols = W^T @ g

    for layer in net.sublayers(include_self=True):
        if isinstance(layer, nn.Linear):
            hooks.append(layer.register_forward_post_hook(on_linear))
        elif isinstance(layer, nn.Conv2D):
            hooks.append(layer.register_forward_post_hook(on_conv))
    try:
        if train:
            net(x)
        else:
            with lib.no_grad():
                net(x)
    finally:
        for h in hooks:
            h.remove()
    return plan


def gemm_floor(plan, repeat=5):
    """``(gflop, seconds)``: the plan's FLOPs and its time as plain NumPy float32 products."""
    rng = np.random.default_rng(0)
    flops = 0.0
    seconds = 0.0
    for (m, k, n), count in plan.items():
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        a @ b  # warm-up (page faults, BLAS thread start)
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            a @ b
            times.append(time.perf_counter() - t0)
        seconds += statistics.median(times) * count
        flops += 2.0 * m * k * n * count
    return flops / 1e9, seconds


def line(name, step_ms, gflop, gemm_s):
    """One printed roofline line for a workload measured at ``step_ms`` per step."""
    gemm_ms = gemm_s * 1e3
    share = min(gemm_ms / step_ms, 1.0) if step_ms else 0.0
    return (f"{name:<14} GEMM {gflop:6.2f} GFLOP/step at {gflop / gemm_s:6.1f} GFLOP/s "
            f"(NumPy SGEMM) = floor {gemm_ms:7.1f} ms; paddle_hl step {step_ms:7.1f} ms: "
            f"{share:4.0%} GEMM, {max(step_ms - gemm_ms, 0.0):7.1f} ms outside GEMM")
