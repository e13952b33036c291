"""Weight-decay regularizers (``paddle.regularizer``): added to a parameter's gradient."""

from __future__ import annotations

from . import backend

__all__ = ["L1Decay", "L2Decay"]


class WeightDecayRegularizer:
    """Base class: ``apply(param_array, grad_array)`` returns the regularized gradient."""

    def __init__(self, coeff=0.0):
        if isinstance(coeff, bool) or not isinstance(coeff, (int, float)):
            raise TypeError(f"{type(self).__name__}: coeff must be a float, got "
                            f"{type(coeff).__name__}")
        self._coeff = float(coeff)

    @property
    def coeff(self):
        return self._coeff

    def __repr__(self):
        return f"{type(self).__name__}(coeff={self._coeff})"


class L2Decay(WeightDecayRegularizer):
    """L2 weight decay: adds ``coeff * param`` to the gradient.

    Example:
        >>> opt = paddle.optimizer.SGD(0.1, parameters=net.parameters(),
        ...                            weight_decay=paddle.regularizer.L2Decay(1e-4))
    """

    def apply(self, p, g):
        return g + self._coeff * p


class L1Decay(WeightDecayRegularizer):
    """L1 weight decay: adds ``coeff * sign(param)`` to the gradient."""

    def apply(self, p, g):
        return g + self._coeff * backend.get_array_module(p).sign(p)
