"""paddle_hl.nn.initializer: how parameters get their first values.

Each initializer is a callable ``init(param, block=None)`` that fills the parameter in place, on
its device and in its dtype. ``paddle.seed`` makes the random ones repeat.
"""

from __future__ import annotations

from ._base import (
    Initializer,
    _global_initializer,
    calculate_gain,
    compute_fans,
    set_global_initializer,
)
from .common import (
    Assign,
    Constant,
    KaimingNormal,
    KaimingUniform,
    Normal,
    TruncatedNormal,
    Uniform,
    XavierNormal,
    XavierUniform,
    _default_initializer_for,
)
from .structured import Bilinear, Dirac, Orthogonal

__all__ = ["Assign", "Bilinear", "Constant", "Dirac", "KaimingNormal", "KaimingUniform",
           "Normal", "Orthogonal", "TruncatedNormal", "Uniform", "XavierNormal", "XavierUniform",
           "calculate_gain", "set_global_initializer", "Initializer"]
