"""ParamAttr: how a layer creates one of its parameters."""

from __future__ import annotations

__all__ = []


class ParamAttr:
    """Options for a parameter a layer creates.

    Args:
        name (str, optional): the parameter's name.
        initializer (Initializer, optional): how to fill it.
        learning_rate (float): multiplier of the optimizer's learning rate for it.
        regularizer (L1Decay|L2Decay, optional): its own weight decay.
        trainable (bool): whether it is updated (``stop_gradient = not trainable``).
        do_model_average (bool): whether model averaging includes it.
        need_clip (bool): whether gradient clipping applies to it.

    Example:
        >>> w = paddle.ParamAttr(initializer=paddle.nn.initializer.Constant(0.5))
        >>> fc = paddle.nn.Linear(4, 2, weight_attr=w)
    """

    def __init__(self, name=None, initializer=None, learning_rate=1.0, regularizer=None,
                 trainable=True, do_model_average=True, need_clip=True):
        if name is not None and not isinstance(name, str):
            raise TypeError(f"ParamAttr: name must be a str, got {type(name).__name__}")
        if isinstance(learning_rate, bool) or not isinstance(learning_rate, (int, float)):
            raise TypeError(f"ParamAttr: learning_rate must be a float, got "
                            f"{type(learning_rate).__name__}")
        if not isinstance(trainable, bool):
            raise TypeError(f"ParamAttr: trainable must be a bool, got {trainable!r}")
        if initializer is not None and not callable(initializer):
            raise TypeError(f"ParamAttr: initializer must be an Initializer, got "
                            f"{type(initializer).__name__}")
        self.name = name
        self.initializer = initializer
        self.learning_rate = float(learning_rate)
        self.regularizer = regularizer
        self.trainable = trainable
        self.do_model_average = do_model_average
        self.need_clip = need_clip

    def __repr__(self):
        return (f"ParamAttr(name={self.name!r}, initializer={self.initializer!r}, "
                f"learning_rate={self.learning_rate}, trainable={self.trainable})")

    @staticmethod
    def _to_attr(arg):
        """Normalise a ``weight_attr``/``bias_attr`` argument: None, a ParamAttr, a name, an
        initializer, a regularizer, True (defaults) or False (no parameter -> None)."""
        from ..regularizer import WeightDecayRegularizer

        if arg is None or arg is True:
            return ParamAttr()
        if arg is False:
            return None
        if isinstance(arg, ParamAttr):
            return arg
        if isinstance(arg, str):
            return ParamAttr(name=arg)
        if isinstance(arg, WeightDecayRegularizer):
            return ParamAttr(regularizer=arg)
        if callable(arg):
            return ParamAttr(initializer=arg)
        raise TypeError(f"expected a ParamAttr, str, initializer, regularizer, bool or None for "
                        f"a parameter attribute, got {type(arg).__name__}")
