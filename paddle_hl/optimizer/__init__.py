"""paddle_hl.optimizer: optimizers and learning-rate schedulers (``lr``)."""

from . import lr
from .adam import Adam, Adamax, AdamW, Lamb
from .lbfgs import LBFGS
from .lr import LRScheduler
from .optimizer import Optimizer
from .sgd import SGD, Adadelta, Adagrad, Momentum, RMSProp

__all__ = ["Optimizer", "SGD", "Momentum", "Adam", "AdamW", "Adamax", "Adagrad", "Adadelta",
           "RMSProp", "Lamb", "LBFGS", "lr"]
