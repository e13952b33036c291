"""Automatic mixed precision (``paddle.amp``).

- :func:`auto_cast` runs a block's ops in float16/bfloat16 per Paddle 2.6's white/black lists
  and promotion rule (levels O1, O2, OD);
- :func:`decorate` casts models to low precision for O2, keeping normalization layers in
  float32, and gives the optimizers float32 master weights;
- :class:`GradScaler` scales the loss and skips steps whose gradients overflow;
- :mod:`paddle_hl.amp.debugging` checks tensors for NaN/Inf and counts ops per dtype.

Example:
    >>> model = paddle.nn.Linear(4, 4)
    >>> opt = paddle.optimizer.SGD(parameters=model.parameters())
    >>> scaler = paddle.amp.GradScaler(init_loss_scaling=1024)
    >>> with paddle.amp.auto_cast():
    ...     loss = model(paddle.rand([2, 4])).mean()
    >>> scaler.scale(loss).backward()
    >>> scaler.minimize(opt, loss)
"""

from __future__ import annotations

from . import amp_lists, debugging  # noqa: F401  (submodules, as in Paddle)
from ._auto_cast import auto_cast, is_bfloat16_supported, is_float16_supported
from ._decorate import decorate
from .amp_lists import black_list, white_list  # noqa: F401
from .grad_scaler import GradScaler, OptimizerState  # noqa: F401

__all__ = ["auto_cast", "GradScaler", "decorate", "is_float16_supported",
           "is_bfloat16_supported"]
