"""Parameter: a trainable Tensor with the attributes optimizers and layers read.

Parameters are leaves with ``stop_gradient=False`` and ``persistable=True``; ``trainable`` is the
negation of ``stop_gradient``. Names are unique, in Paddle's ``prefix.w_N`` form when a layer
creates them.
"""

from __future__ import annotations

import collections
import itertools

from .tensor import Tensor, init_slots, to_array

__all__ = []

class NameGenerator:
    """Hands out ``prefix_N`` names, N counting per key from 0 (``paddle.utils.unique_name``
    switches between generators)."""

    def __init__(self, prefix: str | None = None):
        self.prefix = prefix or ""
        self.ids = collections.defaultdict(itertools.count)

    def __call__(self, key: str) -> str:
        return f"{self.prefix}{key}_{next(self.ids[key])}"


# the current generator (a one-element list so that it can be switched in place)
name_generator = [NameGenerator()]


def unique_name(prefix: str) -> str:
    """``prefix_N`` with N counting per prefix, as Paddle's unique_name.generate."""
    return name_generator[0](prefix)


def _filled_at_creation(param, block):
    """The pending "initializer" of a parameter built under LazyGuard: its values are already
    there, so there is nothing to do."""


class Parameter(Tensor):
    """A trainable tensor owned by a layer (Paddle's ``EagerParamBase``).

    Args:
        data: initial value (array-like or Tensor); copied.
        name (str, optional): a unique name; generated when omitted.
        trainable (bool): whether optimizers update it.
        learning_rate (float): per-parameter learning-rate multiplier.
        regularizer: a weight-decay regularizer for this parameter only.
        need_clip (bool): whether gradient clipping applies to it.
    """

    def __init__(self, data, dtype=None, name=None, trainable=True, learning_rate=1.0,
                 regularizer=None, need_clip=True, do_model_average=True):
        init_slots(self, to_array(data, dtype, None, "Parameter"), not trainable)
        self._name = name or unique_name("param")
        self.persistable = True
        self.optimize_attr = {"learning_rate": float(learning_rate)}
        self.regularizer = regularizer
        self.need_clip = need_clip
        self.do_model_average = do_model_average
        self.is_distributed = False
        from .misc import lazy_init_enabled

        if lazy_init_enabled():
            # built under LazyGuard: paddle_hl fills it at once with its initializer, so the
            # initialize() that Paddle code calls afterwards has nothing left to do
            self._init_func = _filled_at_creation

    #: what :meth:`initialize` runs, ``init_func(param, block)``; None when nothing is pending
    _init_func = None

    def set_init_func(self, obj):
        """Set the function :meth:`initialize` runs, called as ``obj(param, None)`` (Paddle sets
        the parameter's initializer here for a parameter built under ``LazyGuard``).

        Args:
            obj (callable): ``obj(param, block)`` fills ``param`` in place.
        """
        self._init_func = obj

    def initialize(self):
        """Run the pending initializer once (see :meth:`set_init_func`), then forget it.

        Raises:
            AssertionError: nothing is pending: the parameter was built outside ``LazyGuard``
                and has no function set, or ``initialize()`` already ran (as in Paddle).
        """
        if self._init_func is None:
            raise AssertionError(
                f"Parameter.initialize: no initializer is pending for parameter {self._name} "
                "(it was built outside LazyGuard without set_init_func, or initialize() "
                "already ran); required self._init_func is not None")
        func, self._init_func = self._init_func, None
        func(self, None)

    def _is_initialized(self) -> bool:
        return self._init_func is not _filled_at_creation

    @classmethod
    def from_tensor(cls, tensor, **kwargs):
        """A parameter sharing ``tensor``'s memory (Paddle's ``EagerParamBase.from_tensor``).

        Args:
            tensor (Tensor): the value; later in-place writes to it show in the parameter.
            **kwargs: ``name``, ``trainable``, ``learning_rate``, ``regularizer``,
                ``need_clip``, ``do_model_average`` as for the constructor; an
                ``optimize_attr`` dict may give the learning rate.

        Returns:
            Parameter: trainable unless ``trainable=False``.
        """
        if not isinstance(tensor, Tensor):
            raise TypeError("EagerParamBase.from_tensor: tensor must be a paddle.Tensor, got "
                            f"{type(tensor).__name__}")
        opt = kwargs.pop("optimize_attr", None) or {}
        kwargs.setdefault("learning_rate", opt.get("learning_rate", 1.0))
        for ignored in ("process_mesh", "placements", "is_distributed", "stop_gradient",
                        "shape", "dtype", "type"):
            kwargs.pop(ignored, None)
        param = cls(tensor._data.reshape(-1)[:0], **kwargs)
        param._data = tensor._data  # shares the buffer, as Paddle's from_tensor does
        return param

    def _copy_gradient_from(self, other):
        """Make this parameter's gradient a copy of ``other`` (a Tensor of the same shape)."""
        src = other._data if isinstance(other, Tensor) else other
        if tuple(src.shape) != tuple(self._data.shape):
            raise ValueError(f"_copy_gradient_from: gradient of shape {list(src.shape)} does "
                             f"not match the parameter's shape {list(self._data.shape)}")
        self.grad = Tensor(src.astype(self._data.dtype, copy=True))

    @property
    def trainable(self) -> bool:
        return not self.stop_gradient

    @trainable.setter
    def trainable(self, value):
        self.stop_gradient = not bool(value)

    @property
    def block(self):
        """The global block of the default main program, which initializers take as ``block``."""
        from .program import default_main_program

        return default_main_program().global_block()

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo):
        p = Parameter(self._data.copy(), name=self._name, trainable=self.trainable,
                      learning_rate=self.optimize_attr["learning_rate"],
                      regularizer=self.regularizer, need_clip=self.need_clip,
                      do_model_average=self.do_model_average)
        if self._grad is not None:
            p._grad = Tensor(self._grad._data)
        memo[id(self)] = p
        return p

    def __reduce_ex__(self, protocol):
        return (_rebuild_param, (self.numpy(), self._name, self.trainable,
                                 self.optimize_attr["learning_rate"], self.need_clip))


def _rebuild_param(arr, name, trainable, lr, need_clip):
    return Parameter(arr, name=name, trainable=trainable, learning_rate=lr, need_clip=need_clip)
