"""paddle_hl.static: the static-graph names dygraph code touches, in dygraph meaning.

paddle_hl runs eagerly only. Model code still imports a few ``paddle.static`` names while it runs
eagerly: :class:`InputSpec` (for ``jit.to_static``/``jit.save`` and ``Model``), ``static.amp``
(``fp16_guard`` around a forward, ``decorate``, the op lists) and the program/block objects that
``Tensor.block`` and initializers pass around. Those are provided here; building and running
static programs (``Executor``, ``static.data``, ``static.nn``) is not.
"""

from __future__ import annotations

from . import amp  # noqa: F401  (subpackage, as in Paddle)
from ._program import (
    Block,
    Program,
    cpu_places,
    cuda_places,
    default_main_program,
    default_startup_program,
    device_guard,
    name_scope,
    program_guard,
)
from .input import InputSpec

__all__ = ["InputSpec", "Program", "Block", "default_main_program", "default_startup_program",
           "program_guard", "name_scope", "device_guard", "cpu_places", "cuda_places"]
