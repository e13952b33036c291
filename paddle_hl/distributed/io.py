"""``paddle.distributed.io``: Paddle's static-program persistence helpers.

They save and load the variables of a static ``Program`` through an executor. paddle_hl runs
in dygraph only, where Paddle itself refuses these calls; the same refusal here says what to
use instead: ``paddle.save(layer.state_dict(), path)`` / ``paddle.load`` for one process, and
``paddle.distributed.save_state_dict`` / ``load_state_dict`` for sharded checkpoints.
"""

from __future__ import annotations

__all__ = []  # the public names are re-exported by paddle_hl.distributed


def _static_only(fn):
    raise RuntimeError(
        f"paddle_hl.distributed.io.{fn}: saving and loading the variables of a static Program "
        "needs Paddle's static graph, which paddle_hl does not have (Paddle refuses it in "
        "dygraph mode too). Use paddle.save(layer.state_dict(), path) and paddle.load, or "
        "paddle.distributed.save_state_dict / load_state_dict for sharded checkpoints.")


def is_persistable(var) -> bool:
    """True when ``var`` is kept across steps (parameters and persistable buffers)."""
    from ..framework.tensor import Tensor

    if not isinstance(var, Tensor):
        raise TypeError(f"paddle_hl.distributed.io.is_persistable: var must be a Tensor, got "
                        f"{type(var).__name__}")
    return bool(getattr(var, "persistable", False))


def save_persistables(executor, dirname, main_program=None, filename=None):
    """Static graph only: raises (see the module notes)."""
    _static_only("save_persistables")


def load_persistables(executor, dirname, main_program=None, filename=None):
    """Static graph only: raises (see the module notes)."""
    _static_only("load_persistables")


def load_inference_model_distributed(dirname, executor, model_filename=None,
                                     params_filename=None, pserver_endpoints=None):
    """Static graph only: raises (see the module notes)."""
    _static_only("load_inference_model_distributed")
