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
    "paddle_hl.nn.functional.norm._norm_k":
        "threaded 4-pass (compiled: 2-pass) backward; one M rule is ~8 passes, and a fused "
        "adjoint kernel is nonlinear in x, so it would need a second-order rule of its own",
    "paddle_hl.nn.functional.norm._norm_act_k":
        "batch norm and ReLU/ReLU6 in the compiled kernels' two passes each way (as _norm_k)",
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
