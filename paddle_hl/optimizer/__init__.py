"""paddle_hl.optimizer: optimizers and learning-rate schedulers (``lr``)."""

from . import lr
from .lr import LRScheduler

__all__ = []
