"""The float16 side of ``paddle_hl.static.amp``: the op lists, the guard and the decorated
optimizer (the bfloat16 names in ``bf16.py`` build on them)."""

from __future__ import annotations

import contextlib

from ...amp import amp_lists as _lists

__all__ = []


@contextlib.contextmanager
def fp16_guard():
    """Mark ops for static float16 rewriting; in dygraph a no-op scope, as in Paddle.

    Example:
        >>> with paddle.static.amp.fp16_guard():
        ...     out = layer(x)
    """
    yield


def _names(ops, where, arg):
    if ops is None:
        return set()
    if isinstance(ops, str):
        raise TypeError(f"{where}: {arg} must be a list/set of op names, got the string {ops!r}")
    out = set()
    for op in ops:
        if not isinstance(op, str):
            raise TypeError(f"{where}: {arg} must hold op names (str), got "
                            f"{type(op).__name__}")
        out.add(op)
    return out


class AutoMixedPrecisionLists:
    """The op lists of static AMP: white (run in low precision), black (float32), gray (follow
    the inputs) and unsupported, with the custom lists applied.

    Args:
        custom_white_list (list[str], optional): ops moved to the white list.
        custom_black_list (list[str], optional): ops moved to the black list.
        custom_black_varnames (list[str], optional): variable names kept in float32.
        dtype (str): ``'float16'`` or ``'bfloat16'``. Default ``'float16'``.

    Example:
        >>> lists = paddle.static.amp.CustomOpLists(custom_white_list=['pool2d'])
        >>> 'pool2d' in lists.white_list
        True
    """

    def __init__(self, custom_white_list=None, custom_black_list=None,
                 custom_black_varnames=None, dtype="float16"):
        where = type(self).__name__
        if dtype not in ("float16", "bfloat16"):
            raise ValueError(f"{where}: dtype must be 'float16' or 'bfloat16', got {dtype!r}")
        self.amp_dtype = dtype
        self._custom_white_list = _names(custom_white_list, where, "custom_white_list")
        self._custom_black_list = _names(custom_black_list, where, "custom_black_list")
        both = self._custom_white_list & self._custom_black_list
        if both:
            raise ValueError(f"{where}: ops {sorted(both)} are in both custom_white_list and "
                             "custom_black_list")
        white = _lists.FP16_WHITE_LIST if dtype == "float16" else _lists.BF16_WHITE_LIST
        black = _lists.FP16_BLACK_LIST if dtype == "float16" else _lists.BF16_BLACK_LIST
        self.white_list = set(white)
        self.black_list = set(black) | set(_lists.EXTRA_BLACK_LIST)
        self.gray_list = set()
        self.unsupported_list = set(_lists.UNSUPPORTED_LOW_PRECISION)
        self.black_varnames = _names(custom_black_varnames, where, "custom_black_varnames")
        self._update_list()
        self.all_list = self.white_list | self.black_list | self.gray_list

    def _update_list(self):
        for op in self._custom_white_list:
            self.black_list.discard(op)
            self.gray_list.discard(op)
            self.unsupported_list.discard(op)
            self.white_list.add(op)
        for op in self._custom_black_list:
            self.white_list.discard(op)
            self.gray_list.discard(op)
            self.black_list.add(op)


CustomOpLists = AutoMixedPrecisionLists


class OptimizerWithMixedPrecision:
    """An optimizer whose ``minimize`` scales the loss, runs backward and steps (dygraph meaning
    of a static AMP-decorated optimizer). Other attributes come from the wrapped optimizer."""

    def __init__(self, optimizer, amp_lists, level, dtype, init_loss_scaling,
                 use_dynamic_loss_scaling, incr_every_n_steps, decr_every_n_nan_or_inf,
                 incr_ratio, decr_ratio, use_promote):
        from ...amp import GradScaler

        self._optimizer = optimizer
        self._amp_lists = amp_lists or AutoMixedPrecisionLists(dtype=dtype)
        self._amp_level = level
        self._amp_dtype = dtype
        self._use_promote = use_promote
        # bfloat16 has float32's range: Paddle does not scale it
        self._scaler = GradScaler(
            enable=dtype == "float16", init_loss_scaling=init_loss_scaling,
            incr_ratio=incr_ratio, decr_ratio=decr_ratio, incr_every_n_steps=incr_every_n_steps,
            decr_every_n_nan_or_inf=decr_every_n_nan_or_inf,
            use_dynamic_loss_scaling=use_dynamic_loss_scaling)

    def __getattr__(self, name):
        return getattr(self.__dict__["_optimizer"], name)

    def get_loss_scaling(self):
        """The current loss scale as a 0-D float32 Tensor."""
        import numpy as np

        from ...framework.tensor import Tensor

        return Tensor(np.asarray(self._scaler._scale_value(), np.float32))

    def amp_init(self, place, scope=None, test_program=None, use_fp16_test=False):
        """Static-graph parameter casting; eager parameters keep their dtype (use
        ``paddle.amp.decorate`` to cast a model), so this only checks its arguments."""
        if place is None:
            raise ValueError("amp_init: place must be given")

    def backward(self, loss, startup_program=None, parameter_list=None, no_grad_set=None,
                 callbacks=None):
        """Scale ``loss`` and run backward; returns the scaled loss."""
        scaled = self._scaler.scale(loss)
        scaled.backward()
        return scaled

    def minimize(self, loss, startup_program=None, parameter_list=None, no_grad_set=None):
        """Backward on the scaled loss, then an unscaled, overflow-checked step."""
        scaled = self.backward(loss)
        return self._scaler.minimize(self._optimizer, scaled)

    def step(self):
        """Unscale gradients (from a previous ``backward``) and step, skipping on inf/NaN."""
        self._scaler.step(self._optimizer)
        self._scaler.update()


def decorate(optimizer, amp_lists=None, init_loss_scaling=2**15, incr_every_n_steps=1000,
             decr_every_n_nan_or_inf=2, incr_ratio=2.0, decr_ratio=0.8,
             use_dynamic_loss_scaling=True, use_pure_fp16=False, use_fp16_guard=None,
             use_bf16=False, use_promote=False):
    """Wrap ``optimizer`` for mixed precision: ``minimize(loss)`` scales, backpropagates and
    steps with dynamic loss scaling (float16) as ``paddle.static.amp.decorate`` does.

    Args:
        optimizer (Optimizer): the optimizer to wrap.
        amp_lists (AutoMixedPrecisionLists, optional): the op lists.
        init_loss_scaling (float): initial loss scale. Default 2**15.
        incr_every_n_steps (int): clean steps before the scale grows. Default 1000.
        decr_every_n_nan_or_inf (int): bad steps before it shrinks. Default 2.
        incr_ratio (float): growth factor. Default 2.0.
        decr_ratio (float): shrink factor. Default 0.8.
        use_dynamic_loss_scaling (bool): adapt the scale. Default True.
        use_pure_fp16 (bool): O2 level. Default False.
        use_fp16_guard (bool, optional): static-only; accepted.
        use_bf16 (bool): bfloat16 instead of float16 (no loss scaling). Default False.
        use_promote (bool): static-only promotion rule; accepted.

    Returns:
        OptimizerWithMixedPrecision: the wrapped optimizer.

    Example:
        >>> opt = paddle.static.amp.decorate(paddle.optimizer.SGD(parameters=m.parameters()))
        >>> opt.minimize(loss)
    """
    if not hasattr(optimizer, "step"):
        raise TypeError(f"static.amp.decorate: optimizer must be an Optimizer, got "
                        f"{type(optimizer).__name__}")
    if amp_lists is not None and not isinstance(amp_lists, AutoMixedPrecisionLists):
        raise TypeError(f"static.amp.decorate: amp_lists must be AutoMixedPrecisionLists, got "
                        f"{type(amp_lists).__name__}")
    dtype = "bfloat16" if use_bf16 else "float16"
    return OptimizerWithMixedPrecision(
        optimizer, amp_lists, "O2" if use_pure_fp16 else "O1", dtype, init_loss_scaling,
        use_dynamic_loss_scaling, incr_every_n_steps, decr_every_n_nan_or_inf, incr_ratio,
        decr_ratio, use_promote)
