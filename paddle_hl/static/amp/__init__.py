"""paddle_hl.static.amp: static-graph AMP names, in the meaning they have in dygraph code.

Model code written for both modes calls these while it runs eagerly. As in Paddle's dygraph mode:

- :func:`fp16_guard` marks a region for static fp16 rewriting; eagerly it changes nothing (ops
  inside run in the dtype of their inputs, or as ``paddle.amp.auto_cast`` decides);
- :class:`AutoMixedPrecisionLists` / :class:`CustomOpLists` hold the static white/black lists
  with the custom lists applied;
- :func:`decorate` wraps an optimizer so that ``minimize(loss)`` scales the loss, runs backward
  and steps through a :class:`paddle_hl.amp.GradScaler` (dynamic loss scaling).

Example:
    >>> with paddle.static.amp.fp16_guard():
    ...     y = conv(x)
"""

from __future__ import annotations

from ...amp import debugging  # noqa: F401  (Paddle exposes it here too)
from . import bf16  # noqa: F401
from ._decorate import (
    AutoMixedPrecisionLists,
    CustomOpLists,
    OptimizerWithMixedPrecision,
    decorate,
    fp16_guard,
)

__all__ = ["decorate", "fp16_guard", "AutoMixedPrecisionLists", "CustomOpLists", "bf16",
           "OptimizerWithMixedPrecision"]
