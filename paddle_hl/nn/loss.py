"""Module path ``paddle.nn.loss``: the loss layers (``paddle.nn.loss.CrossEntropyLoss``).

In Paddle this name is the module ``paddle.nn.layer.loss``; its public classes are re-exported.
"""

from .layer import loss as _loss

__all__ = sorted(k for k, v in vars(_loss).items() if not k.startswith("_")
                 and isinstance(v, type) and v.__module__ == _loss.__name__)
globals().update({k: getattr(_loss, k) for k in __all__})
