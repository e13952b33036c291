"""One gradient rule per op: a kernel may keep a hand-written higher-order rule (``hi=``, paired
with a hand-written array backward) only when it is a listed fused kernel.

Every module of paddle_hl is imported, and every kernel function alive afterwards (module-level
or built by a factory) whose ``hi`` was not derived from a ``grad=`` rule (a derived rule carries
``hi.rule``) must appear in :data:`FUSED`, each with the reason it stays fused. Entries that are
no longer hand-written must leave the list, so it never hides a converted op.
"""

from __future__ import annotations

import gc
import importlib
import os
import pkgutil
import types

import paddle_hl

# "module.kernel name" -> why the array backward is hand-written and the create_graph rule apart
FUSED = {
    "paddle_hl.nn.functional.conv._conv_kernel":
        "im2col/GEMM convolution whose backward calls the data- and filter-gradient kernels",
    "paddle_hl.nn.functional.conv._convt_kernel":
        "transposed convolution computed as a data gradient; backward is a conv plus filter grad",
    "paddle_hl.nn.functional.conv._convw_kernel":
        "filter-gradient kernel (used by conv's create_graph rule), backward by GEMM layouts",
    "paddle_hl.nn.functional.conv._unfold_kernel":
        "window gather whose backward is a scatter-add over overlapping windows",
    "paddle_hl.nn.functional.conv._fold_kernel":
        "window scatter-add whose backward is the window gather",
    "paddle_hl.nn.functional.norm._norm_k":
        "one-pass statistics and normalization with the closed-form batch/layer-norm backward",
    "paddle_hl.nn.functional.norm._norm_act_k":
        "batch norm and ReLU/ReLU6 in the compiled kernels' two passes each way",
    "paddle_hl.nn.functional.pooling._maxpool_kernel":
        "window maximum whose backward routes g to the argmax positions found at forward",
    "paddle_hl.nn.functional.pooling._maxpool_route_kernel":
        "max-pool gradient as an op of (x, g), so create_graph can differentiate it",
    "paddle_hl.nn.functional.pooling._maxpool_gather_kernel":
        "adjoint of the max-pool route: each window reads h at its maximum",
    "paddle_hl.nn.functional.pooling._avgpool_kernel":
        "window mean with padding/divisor rules; backward spreads g over the windows",
    "paddle_hl.nn.functional.pooling._avgpool_adj_kernel":
        "adjoint of avg_pool as an op of g",
    "paddle_hl.nn.functional.pooling._adaptive_avg_kernel":
        "adaptive window means with a hand-written spread-back backward",
    "paddle_hl.nn.functional.pooling._adaptive_avg_adj_kernel":
        "adjoint of adaptive_avg_pool as an op of g",
    "paddle_hl.nn.functional.pooling._adaptive_max_kernel":
        "adaptive window maximum routing g to the argmax found at forward",
    "paddle_hl.nn.functional.pooling._amax_route_kernel":
        "adaptive-max gradient as an op of (x, g)",
    "paddle_hl.nn.functional.pooling._amax_gather_kernel":
        "adjoint of the adaptive-max route",
    "paddle_hl.nn.functional.pooling._unpool_kernel":
        "scatter of pooled values to their indices; backward is the gather kernel",
    "paddle_hl.nn.functional.pooling._unpool_gather_kernel":
        "adjoint of max_unpool: reads g at the indices",
}

def _import_all():
    for m in pkgutil.walk_packages(paddle_hl.__path__, "paddle_hl."):
        try:
            importlib.import_module(m.name)
        except ImportError:
            # an optional extra (CuPy, ...) that is not installed: its kernels are not checked
            pass


_PACKAGE_DIR = os.path.dirname(paddle_hl.__file__) + os.sep


def _hand_written():
    """``{"module.name": kernel}`` for every live kernel with a hand-written ``hi`` whose code is
    paddle_hl's own (kernels that tests or user code define are not the library's)."""
    _import_all()
    found = {}
    for o in gc.get_objects():
        if type(o) is not types.FunctionType or getattr(o, "op_name", None) is None:
            continue
        if not o.__code__.co_filename.startswith(_PACKAGE_DIR):
            continue
        hi = getattr(o, "hi", None)
        if hi is not None and getattr(hi, "rule", None) is None:
            found[f"{o.__module__}.{o.__name__}"] = o
    return found


def test_the_scan_sees_derived_and_hand_written_rules():
    from paddle_hl.nn.functional import activation, common

    found = _hand_written()
    assert "paddle_hl.nn.functional.norm._norm_k" in found
    # a converted op's hi is derived from its grad rule, so the scan does not report it
    assert activation._gelu_k.hi.rule is activation._gelu_k.grad
    assert not any(k.startswith("paddle_hl.nn.functional.activation._gelu") for k in found)
    assert common._mask_kernel.grad is not None


def test_every_allow_listed_kernel_is_still_fused_and_has_a_reason():
    found = _hand_written()
    stale = sorted(k for k in FUSED if k not in found)
    assert not stale, f"no longer hand-written, remove from FUSED: {stale}"
    for k, why in FUSED.items():
        assert why.strip() and "\n" not in why, k


def test_no_unlisted_hand_written_rule():
    extra = sorted(k for k in _hand_written() if k not in FUSED)
    assert not extra, ("kernels with a hand-written hi= that are not listed as fused: convert "
                       f"them to one grad= rule, or list them in FUSED with a reason: {extra}")
