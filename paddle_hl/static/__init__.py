"""paddle_hl.static: the static-graph names dygraph code touches, in dygraph meaning.

paddle_hl runs eagerly only. Model code still imports a few ``paddle.static`` names while it runs
eagerly: :class:`InputSpec` (for ``jit.to_static``/``jit.save`` and ``Model``), ``static.amp``
(``fp16_guard`` around a forward, ``decorate``, the op lists) and the program/block objects that
``Tensor.block`` and initializers pass around. Those are provided here; building and running
static programs (``Executor``, ``static.data``, ``static.nn``) is not.
"""

from __future__ import annotations

from ..framework.parameter import Parameter
from ..framework.program import (
    Block,
    Program,
    default_main_program,
    default_startup_program,
    program_guard,
)
from ..framework.tensor import Tensor as Variable
from . import amp  # noqa: F401  (subpackage, as in Paddle)
from ._program import cpu_places, cuda_places, device_guard, name_scope
from .input import InputSpec

__all__ = ["InputSpec", "Program", "Block", "default_main_program", "default_startup_program",
           "program_guard", "name_scope", "device_guard", "cpu_places", "cuda_places", "data",
           "Variable", "Parameter"]


def data(name, shape, dtype=None, lod_level=0):
    """A static-graph input variable: only in static graph mode, which paddle_hl does not have.

    Raises:
        AssertionError: always (as Paddle raises in dygraph mode); feed Tensors to the model,
            and describe inputs with :class:`InputSpec` for ``jit.save`` / ``Model``.
    """
    raise AssertionError(
        "paddle.static.data: paddle_hl runs in dynamic graph mode only, and 'data()' is only "
        f"supported in static graph mode; describe the input '{name}' with "
        f"paddle.static.InputSpec({list(shape)!r}, {dtype!r}, {name!r}) instead")
