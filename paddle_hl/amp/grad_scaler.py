"""GradScaler: dynamic loss scaling for float16 training."""

from __future__ import annotations

import enum
import warnings

import numpy as np

from .. import backend
from ..framework import place as _pl
from ..framework import state
from ..framework.tensor import Tensor, _wrap, writable
from . import _hook

__all__ = []

_F32 = np.dtype(np.float32)
_HISTORY = 10000  # update records kept for the notebook chart


class OptimizerState(enum.Enum):
    """Where one optimizer is between two ``update()`` calls."""

    INIT = 0
    UNSCALED = 1
    STEPPED = 2


def _scale_tensor(value) -> Tensor:
    xp = _pl.xp_for(_pl.current_place())
    return _wrap(xp.asarray(np.asarray(value, dtype=_F32).reshape(1)))


def _params_of(optimizer):
    groups = getattr(optimizer, "_param_groups", None)
    if groups:
        return [p for g in groups for p in g["params"]]
    return list(getattr(optimizer, "_parameter_list", None) or [])


def _check_optimizer(optimizer, where):
    if not (hasattr(optimizer, "step") and callable(optimizer.step)):
        raise TypeError(f"GradScaler.{where}: expected a paddle.optimizer.Optimizer, got "
                        f"{type(optimizer).__name__}")


class GradScaler:
    """Dynamic loss scaling (``paddle.amp.GradScaler``).

    ``scale(loss)`` multiplies the loss by the current scale so that small float16 gradients do
    not underflow; ``step``/``minimize`` unscale the gradients and skip the update when one of
    them is inf/NaN; ``update`` adapts the scale: it is multiplied by ``decr_ratio`` after
    ``decr_every_n_nan_or_inf`` bad steps in a row and by ``incr_ratio`` after
    ``incr_every_n_steps`` clean steps in a row.

    Args:
        enable (bool): when False every method passes through. Default True.
        init_loss_scaling (float): the initial scale. Default 65536.0.
        incr_ratio (float): growth factor (> 1). Default 2.0.
        decr_ratio (float): shrink factor (< 1). Default 0.5.
        incr_every_n_steps (int): clean steps before growing. Default 2000.
        decr_every_n_nan_or_inf (int): bad steps before shrinking. Default 1.
        use_dynamic_loss_scaling (bool): adapt the scale. Default True.

    Example:
        >>> scaler = paddle.amp.GradScaler(init_loss_scaling=1024)
        >>> with paddle.amp.auto_cast():
        ...     loss = model(x).mean()
        >>> scaler.scale(loss).backward()
        >>> scaler.step(opt); scaler.update(); opt.clear_grad()
    """

    def __init__(self, enable=True, init_loss_scaling=65536.0, incr_ratio=2.0, decr_ratio=0.5,
                 incr_every_n_steps=2000, decr_every_n_nan_or_inf=1,
                 use_dynamic_loss_scaling=True):
        self._enable = bool(enable)
        if self._enable:
            assert incr_ratio > 1.0, "The incr_ratio must be > 1.0."
            assert decr_ratio < 1.0, "The decr_ratio must be < 1.0."
        self._init_loss_scaling = init_loss_scaling
        self._incr_ratio = incr_ratio
        self._decr_ratio = decr_ratio
        self._incr_every_n_steps = incr_every_n_steps
        self._decr_every_n_nan_or_inf = decr_every_n_nan_or_inf
        self._use_dynamic_loss_scaling = bool(use_dynamic_loss_scaling)
        self._incr_count = 0
        self._decr_count = 0
        self._set_scale(init_loss_scaling)
        self._found_inf = False
        self._cache_found_inf = None
        self._states = {}
        self._history = []  # (update number, scale after it, skipped) for the chart
        self._steps = 0
        self._listeners = []  # live notebook views (paddle_hl.notebook.amp.watch)

    # ------------------------------------------------------------------ the training step
    def scale(self, var):
        """Multiply ``var`` (the loss) by the current scale; returns it unchanged if disabled.

        Loss scaling is for float16: when the last auto_cast used another dtype (bfloat16, or
        none at all) a dynamic scaler disables itself with a warning, as Paddle's does.

        Args:
            var (Tensor): the loss.

        Returns:
            Tensor: ``var * scale`` (shape [1] for a 0-D loss, as in Paddle).
        """
        if not isinstance(var, Tensor):
            raise TypeError(f"The type of 'var' in GradScaler.scale() must be paddle.Tensor, "
                            f"but received {type(var).__name__}.")
        if self._enable and self._use_dynamic_loss_scaling and \
                _hook.last_dtype[0] != "float16":
            self._enable = False
            self._use_dynamic_loss_scaling = False
            warnings.warn(f"It is not recommended to use dynamic loss scaling for "
                          f"{_hook.last_dtype[0]}, so GradScaler is disable by default.",
                          stacklevel=2)
        if not self._enable:
            return var
        # a float16 loss is promoted to float32 by the product, as in Paddle
        return var * self._scale

    def unscale_(self, optimizer):
        """Divide the optimizer's gradients by the scale (once per step), e.g. before clipping.

        Args:
            optimizer (Optimizer): the optimizer whose parameters' gradients are unscaled.

        Raises:
            RuntimeError: when called twice before ``update()``, or after ``step()``.
        """
        return self._unscale(optimizer)

    def _unscale(self, optimizer):
        if not self._enable:
            return
        _check_optimizer(optimizer, "unscale_")
        st = self._states.get(id(optimizer), OptimizerState.INIT)
        if st is OptimizerState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if st is OptimizerState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        scale = self._scale_value()  # the host's copy: no read from the device
        finite = []  # one 0-d flag per gradient, read together: one device sync per step
        for p in _params_of(optimizer):
            g = p._grad
            if p.stop_gradient or g is None:
                continue
            a = writable(g)
            xp = backend.get_array_module(a)
            # the check looks at the unscaled values: a scale of 0 (or one that makes
            # 1/scale overflow) turns finite scaled gradients into NaN/inf here
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                if a.dtype == np.float64:
                    a *= 1.0 / scale if scale else np.inf
                elif a.dtype == _F32:
                    a *= np.float32(1.0) / np.float32(scale) if scale else np.float32(np.inf)
                else:  # float16/bfloat16: unscale in float32, as Paddle's kernel does
                    inv = np.float32(1.0) / np.float32(scale) if scale else np.float32(np.inf)
                    a[...] = (a.astype(_F32) * inv).astype(a.dtype)
            g._ver.v += 1
            finite.append(xp.isfinite(a).all())
        self._found_inf = not all(bool(f) for f in backend.host_values(finite))
        self._states[id(optimizer)] = OptimizerState.UNSCALED

    def step(self, optimizer):
        """Unscale (unless ``unscale_`` ran) and update the parameters, unless a gradient is
        inf/NaN; call ``update()`` afterwards.

        Args:
            optimizer (Optimizer): the optimizer to step.

        Raises:
            RuntimeError: when called twice before ``update()``.
        """
        _check_optimizer(optimizer, "step")
        if not self._enable:
            return optimizer.step()
        st = self._states.get(id(optimizer), OptimizerState.INIT)
        if st is OptimizerState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if st is OptimizerState.INIT:
            self._unscale(optimizer)
        if self._found_inf:
            self._cache_found_inf = True
        else:
            optimizer.step()
            self._cache_found_inf = False
        self._states[id(optimizer)] = OptimizerState.STEPPED
        return None

    def update(self):
        """Adapt the scale from the last step and reset the per-optimizer states."""
        if not self._enable:
            return
        if self._use_dynamic_loss_scaling:
            self._update()
        self._record()
        self._states = {}

    def minimize(self, optimizer, *args, **kwargs):
        """``step`` and ``update`` in one call (Paddle's ``minimize``).

        The gradients must already be computed (``scaler.scale(loss).backward()``); as in
        Paddle's dynamic graph, ``minimize`` does not run backward again.

        Args:
            optimizer (Optimizer): the optimizer.
            *args: ``Optimizer.minimize``'s arguments (loss, startup_program, parameters,
                no_grad_set); ``parameters`` and ``no_grad_set`` choose what is updated.
            **kwargs: the same, by name.

        Returns:
            tuple: ``([], params_grads)``, the (parameter, gradient) pairs.
        """
        _check_optimizer(optimizer, "minimize")
        names = ("loss", "startup_program", "parameters", "no_grad_set")
        opts = dict(zip(names, args))
        opts.update(kwargs)
        pairs = self._pairs(optimizer, opts.get("parameters"), opts.get("no_grad_set"))
        if not self._enable:
            self._apply(optimizer, pairs, opts)
            return [], pairs
        st = self._states.get(id(optimizer), OptimizerState.INIT)
        if st is OptimizerState.INIT:
            self._unscale(optimizer)
        if self._found_inf:
            self._cache_found_inf = True
        else:
            self._apply(optimizer, pairs, opts)
            self._cache_found_inf = False
        if self._use_dynamic_loss_scaling:
            self._update()
        self._record()
        self._states = {}
        return [], pairs

    @staticmethod
    def _pairs(optimizer, parameters, no_grad_set):
        params = list(parameters) if parameters is not None else _params_of(optimizer)
        skip = set()
        for t in no_grad_set or ():
            skip.add(t if isinstance(t, str) else getattr(t, "name", None))
        return [(p, p._grad) for p in params if not p.stop_gradient and p._grad is not None
                and p.name not in skip]

    @staticmethod
    def _apply(optimizer, pairs, opts):
        if opts.get("parameters") is None and not opts.get("no_grad_set"):
            optimizer.step()
            return
        with state.no_grad():
            optimizer.apply_gradients(pairs)

    def _update(self):
        """Paddle's rule: count consecutive bad/good steps and rescale on the n-th."""
        if not self._enable:
            return
        if self._cache_found_inf:
            self._incr_count = 0
            self._decr_count += 1
            if self._decr_count == self._decr_every_n_nan_or_inf:
                cur = self._scale_value()
                print(f"Found inf or nan, current scale is: {cur}, decrease to: "
                      f"{cur}*{float(self._decr_ratio)}" + (" (kept at the minimum 1.0)"
                                                            if cur * self._decr_ratio < 1 else ""))
                self._rescale(self._decr_ratio)
                self._decr_count = 0
        else:
            self._decr_count = 0
            self._incr_count += 1
            if self._incr_count == self._incr_every_n_steps:
                self._rescale(self._incr_ratio)
                self._incr_count = 0

    def _rescale(self, ratio):
        # As Paddle's update_loss_scaling: a decreased scale never goes below 1 (a long run of
        # overflowing steps would otherwise reach 0 and turn every later update into NaN), and
        # an increase that would overflow float32 keeps the current scale. Computed on the
        # host's float32 copy of the scale (the same float32 product as on the device), so no
        # step reads the scale back from a GPU.
        with np.errstate(over="ignore"):
            new = np.float32(self._scale_f * np.float32(ratio))
        if ratio < 1.0:
            new = max(new, np.float32(1.0))
        elif not np.isfinite(new):
            return
        self._set_scale(new)

    def _set_scale(self, value):
        """Make ``value`` (rounded to float32) the scale: a shape-[1] tensor on the current
        device for ``scale()``, and its host copy ``_scale_f`` for everything that reads it."""
        self._scale_f = np.float32(value)
        self._scale = _scale_tensor(self._scale_f)

    def _scale_value(self) -> float:
        return float(self._scale_f)

    def _record(self):
        self._steps += 1
        self._history.append((self._steps, self._scale_value(), bool(self._cache_found_inf)))
        if len(self._history) > _HISTORY:
            del self._history[: len(self._history) - _HISTORY]
        for listener in list(self._listeners):
            listener(self)

    # ------------------------------------------------------------------ getters and setters
    def is_enable(self) -> bool:
        """Whether loss scaling is on."""
        return self._enable

    def is_use_dynamic_loss_scaling(self) -> bool:
        """Whether the scale adapts to inf/NaN gradients."""
        return self._use_dynamic_loss_scaling

    def get_init_loss_scaling(self) -> float:
        """The initial loss scale (as last set)."""
        return self._init_loss_scaling

    def set_init_loss_scaling(self, new_init_loss_scaling):
        """Set the initial loss scale; the current scale restarts from it."""
        self._init_loss_scaling = new_init_loss_scaling
        self._set_scale(new_init_loss_scaling)

    def get_incr_ratio(self) -> float:
        """The growth factor."""
        return self._incr_ratio

    def set_incr_ratio(self, new_incr_ratio):
        """Set the growth factor (must be > 1)."""
        assert new_incr_ratio > 1.0, "The new_incr_ratio must be > 1.0."
        self._incr_ratio = new_incr_ratio

    def get_decr_ratio(self) -> float:
        """The shrink factor."""
        return self._decr_ratio

    def set_decr_ratio(self, new_decr_ratio):
        """Set the shrink factor (must be < 1)."""
        assert new_decr_ratio < 1.0, "The new_decr_ratio must be < 1.0."
        self._decr_ratio = new_decr_ratio

    def get_incr_every_n_steps(self) -> int:
        """Clean steps in a row before the scale grows."""
        return self._incr_every_n_steps

    def set_incr_every_n_steps(self, new_incr_every_n_steps):
        """Set the clean steps in a row before the scale grows."""
        self._incr_every_n_steps = new_incr_every_n_steps

    def get_decr_every_n_nan_or_inf(self) -> int:
        """Bad steps in a row before the scale shrinks."""
        return self._decr_every_n_nan_or_inf

    def set_decr_every_n_nan_or_inf(self, new_decr_every_n_nan_or_inf):
        """Set the bad steps in a row before the scale shrinks."""
        self._decr_every_n_nan_or_inf = new_decr_every_n_nan_or_inf

    # ------------------------------------------------------------------ state
    def state_dict(self) -> dict:
        """The scaler's state (empty when disabled), as Paddle saves it in ``.pdscaler``."""
        if not self._enable:
            return {}
        return {
            "scale": np.full(1, self._scale_f, dtype=_F32),
            "incr_ratio": self._incr_ratio,
            "decr_ratio": self._decr_ratio,
            "incr_every_n_steps": self._incr_every_n_steps,
            "decr_every_n_nan_or_inf": self._decr_every_n_nan_or_inf,
            "incr_count": self._incr_count,
            "decr_count": self._decr_count,
            "use_dynamic_loss_scaling": self._use_dynamic_loss_scaling,
        }

    def load_state_dict(self, state_dict):
        """Restore a state from :meth:`state_dict` (ignored when disabled).

        Raises:
            RuntimeError: the dict is empty (saved from a disabled scaler).
        """
        if not self._enable:
            return
        if not state_dict:
            raise RuntimeError("The input state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        scale = state_dict["scale"]
        scale = scale.numpy() if isinstance(scale, Tensor) else np.asarray(scale)
        scale = scale.astype(_F32).reshape(-1)
        self._init_loss_scaling = float(scale[0])
        self._set_scale(scale[0])
        self._incr_ratio = state_dict["incr_ratio"]
        self._decr_ratio = state_dict["decr_ratio"]
        self._incr_every_n_steps = state_dict["incr_every_n_steps"]
        self._decr_every_n_nan_or_inf = state_dict["decr_every_n_nan_or_inf"]
        self._incr_count = state_dict["incr_count"]
        self._decr_count = state_dict["decr_count"]
        self._use_dynamic_loss_scaling = state_dict["use_dynamic_loss_scaling"]

    # ------------------------------------------------------------------ display
    def __repr__(self):
        if not self._enable:
            return "GradScaler(enable=False)"
        skipped = sum(1 for _, _, s in self._history if s)
        return (f"GradScaler(scale={self._scale_value():g}, dynamic="
                f"{self._use_dynamic_loss_scaling}, steps={self._steps}, skipped={skipped})")

    def _repr_html_(self):
        from ..notebook.amp import scaler_html

        return scaler_html(self)
