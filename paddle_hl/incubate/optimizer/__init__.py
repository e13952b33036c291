"""paddle_hl.incubate.optimizer: optimizer wrappers (LookAhead, ModelAverage)."""

from __future__ import annotations

from .lookahead import LookAhead
from .modelaverage import ModelAverage

__all__ = ["LookAhead", "ModelAverage"]
