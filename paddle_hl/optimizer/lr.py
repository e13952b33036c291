"""Learning-rate schedulers (``paddle.optimizer.lr``), with Paddle 2.6's arithmetic.

A scheduler is called (``sched()``) for the current rate and advanced with ``step()``; building
one performs the first step, so ``last_epoch`` starts at 0.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from .. import backend

__all__ = []


def _num(v, where, name):
    if isinstance(v, bool) or not isinstance(v, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"{where}: '{name}' must be a number, got {type(v).__name__}")
    return float(v)


class LRScheduler:
    """Base class: subclasses implement ``get_lr()`` for ``self.last_epoch``.

    Args:
        learning_rate (float): the initial learning rate.
        last_epoch (int): the epoch to resume from; -1 starts fresh.
        verbose (bool): print the rate at every step.
    """

    def __init__(self, learning_rate=0.1, last_epoch=-1, verbose=False):
        self.base_lr = _num(learning_rate, type(self).__name__, "learning_rate")
        self.last_lr = self.base_lr
        self.last_epoch = last_epoch
        self.verbose = verbose
        self._var_name = None
        self.step()

    def __call__(self):
        return self.last_lr

    def step(self, epoch=None):
        """Advance one epoch (or jump to ``epoch``) and update ``last_lr``."""
        if epoch is None:
            self.last_epoch += 1
            self.last_lr = self.get_lr()
        else:
            self.last_epoch = epoch
            closed = getattr(self, "_get_closed_form_lr", None)
            self.last_lr = closed() if closed is not None else self.get_lr()
        if self.verbose:
            print(f"Epoch {self.last_epoch}: {type(self).__name__} set learning rate to "
                  f"{self.last_lr}.")

    def get_lr(self):
        """The rate for ``self.last_epoch`` (overridden by every scheduler)."""
        return self.base_lr

    def state_keys(self):
        """Names of the attributes saved by ``state_dict``."""
        self.keys = ["last_epoch", "last_lr"]

    def state_dict(self):
        """The scheduler state as a dict of plain numbers."""
        self.state_keys()
        out = {}
        for k in self.keys:
            v = getattr(self, k)
            if hasattr(v, "item") and not isinstance(v, (int, float)):
                v = v.item()
            out[k] = v
        return out

    def set_state_dict(self, state_dict):
        """Restore a state produced by ``state_dict``."""
        self.state_keys()
        for k in self.keys:
            if k in state_dict:
                setattr(self, k, state_dict[k])
            else:
                raise RuntimeError(f"{type(self).__name__}.set_state_dict: the state_dict has "
                                   f"no key {k!r}")
        extra = set(state_dict) - set(self.keys)
        if extra:
            warnings.warn(f"{type(self).__name__}.set_state_dict: ignoring unknown keys "
                          f"{sorted(extra)}", stacklevel=2)

    set_dict = set_state_dict


class NoamDecay(LRScheduler):
    """``lr * d_model**-0.5 * min(epoch**-0.5, epoch * warmup_steps**-1.5)`` (Transformer)."""

    def __init__(self, d_model, warmup_steps, learning_rate=1.0, last_epoch=-1, verbose=False):
        if d_model <= 0:
            raise ValueError(f"NoamDecay: d_model must be positive, got {d_model}")
        self.d_model = d_model
        self.warmup_steps = warmup_steps
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        a = 1.0 if self.last_epoch == 0 else self.last_epoch ** -0.5
        b = self.warmup_steps ** -1.5 * self.last_epoch
        return self.base_lr * self.d_model ** -0.5 * min(a, b)


class PiecewiseDecay(LRScheduler):
    """``values[i]`` while ``epoch < boundaries[i]``, then ``values[-1]``."""

    def __init__(self, boundaries, values, last_epoch=-1, verbose=False):
        if len(values) != len(boundaries) + 1:
            raise ValueError(f"PiecewiseDecay: len(values) must be len(boundaries) + 1, got "
                             f"{len(values)} values for {len(boundaries)} boundaries")
        if any(b2 <= b1 for b1, b2 in zip(boundaries, boundaries[1:])):
            raise ValueError(f"PiecewiseDecay: boundaries must increase, got {boundaries}")
        self.boundaries = list(boundaries)
        self.values = list(values)
        super().__init__(float(values[0]), last_epoch, verbose)

    def get_lr(self):
        for b, v in zip(self.boundaries, self.values):
            if self.last_epoch < b:
                return v
        return self.values[-1]


class NaturalExpDecay(LRScheduler):
    """``lr * exp(-gamma * epoch)``."""

    def __init__(self, learning_rate, gamma, last_epoch=-1, verbose=False):
        if gamma <= 0:
            raise ValueError(f"NaturalExpDecay: gamma must be > 0, got {gamma}")
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        return self.base_lr * math.exp(-1 * self.gamma * self.last_epoch)


class InverseTimeDecay(LRScheduler):
    """``lr / (1 + gamma * epoch)``."""

    def __init__(self, learning_rate, gamma, last_epoch=-1, verbose=False):
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        return self.base_lr / (1 + self.gamma * self.last_epoch)


class PolynomialDecay(LRScheduler):
    """``(lr - end_lr) * (1 - epoch / decay_steps)**power + end_lr``; with ``cycle`` the decay
    restarts every ``decay_steps`` (never dividing by zero, even at epoch 0)."""

    def __init__(self, learning_rate, decay_steps, end_lr=0.0001, power=1.0, cycle=False,
                 last_epoch=-1, verbose=False):
        if not isinstance(decay_steps, int) or decay_steps <= 0:
            raise ValueError(f"PolynomialDecay: decay_steps must be a positive int, got "
                             f"{decay_steps!r}")
        self.decay_steps = decay_steps
        self.end_lr = _num(end_lr, "PolynomialDecay", "end_lr")
        if power <= 0:
            raise ValueError(f"PolynomialDecay: power must be > 0, got {power}")
        self.power = power
        self.cycle = bool(cycle)
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        epoch = self.last_epoch
        steps = self.decay_steps
        if self.cycle:
            steps = steps * max(1, math.ceil(epoch / self.decay_steps))
        else:
            epoch = min(epoch, steps)
        return (self.base_lr - self.end_lr) * (1 - epoch / steps) ** self.power + self.end_lr


class LinearWarmup(LRScheduler):
    """Linear warm-up from ``start_lr`` to ``end_lr`` over ``warmup_steps``, then
    ``learning_rate`` (a float or another scheduler, which then steps on its own)."""

    def __init__(self, learning_rate, warmup_steps, start_lr, end_lr, last_epoch=-1,
                 verbose=False):
        if not isinstance(learning_rate, (float, int, LRScheduler)) or isinstance(
                learning_rate, bool):
            raise TypeError(f"LinearWarmup: learning_rate must be a float or an LRScheduler, "
                            f"got {type(learning_rate).__name__}")
        self.learning_rate = learning_rate
        if not isinstance(warmup_steps, int) or warmup_steps <= 0:
            raise ValueError(f"LinearWarmup: warmup_steps must be a positive int, got "
                             f"{warmup_steps!r}")
        self.warmup_steps = warmup_steps
        self.start_lr = start_lr
        self.end_lr = end_lr
        if end_lr <= start_lr:
            raise ValueError(f"LinearWarmup: end_lr ({end_lr}) must be greater than start_lr "
                             f"({start_lr})")
        super().__init__(start_lr, last_epoch, verbose)

    def get_lr(self):
        if self.last_epoch < self.warmup_steps:
            return (self.end_lr - self.start_lr) * self.last_epoch / self.warmup_steps + \
                self.start_lr
        if isinstance(self.learning_rate, LRScheduler):
            self.learning_rate.step(self.last_epoch - self.warmup_steps)
            return self.learning_rate()
        return float(self.learning_rate)

    def state_dict(self):
        state = super().state_dict()
        if isinstance(self.learning_rate, LRScheduler):
            state["LinearWarmup_LR"] = self.learning_rate.state_dict()
        return state

    def set_state_dict(self, state_dict):
        inner = state_dict.get("LinearWarmup_LR")
        super().set_state_dict({k: v for k, v in state_dict.items() if k != "LinearWarmup_LR"})
        if inner is not None and isinstance(self.learning_rate, LRScheduler):
            self.learning_rate.set_state_dict(inner)

    set_dict = set_state_dict


class ExponentialDecay(LRScheduler):
    """``lr * gamma**epoch``."""

    def __init__(self, learning_rate, gamma, last_epoch=-1, verbose=False):
        if gamma <= 0 or gamma >= 1:
            raise ValueError(f"ExponentialDecay: gamma must be in (0, 1), got {gamma}")
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        return self.base_lr * self.gamma ** self.last_epoch


class MultiStepDecay(LRScheduler):
    """Multiply by ``gamma`` at each milestone epoch."""

    def __init__(self, learning_rate, milestones, gamma=0.1, last_epoch=-1, verbose=False):
        if not isinstance(milestones, (tuple, list)):
            raise TypeError(f"MultiStepDecay: milestones must be a list or tuple, got "
                            f"{type(milestones).__name__}")
        if any(b <= a for a, b in zip(milestones, milestones[1:])):
            raise ValueError(f"MultiStepDecay: milestones must increase, got {milestones}")
        if gamma >= 1.0:
            raise ValueError(f"MultiStepDecay: gamma must be < 1.0, got {gamma}")
        self.milestones = list(milestones)
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        passed = sum(1 for m in self.milestones if self.last_epoch >= m)
        return self.base_lr * self.gamma ** passed


class StepDecay(LRScheduler):
    """Multiply by ``gamma`` every ``step_size`` epochs."""

    def __init__(self, learning_rate, step_size, gamma=0.1, last_epoch=-1, verbose=False):
        if not isinstance(step_size, int) or isinstance(step_size, bool) or step_size <= 0:
            raise TypeError(f"StepDecay: step_size must be a positive int, got {step_size!r}")
        if gamma >= 1.0:
            raise ValueError(f"StepDecay: gamma must be < 1.0, got {gamma}")
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        return self.base_lr * self.gamma ** (self.last_epoch // self.step_size)


class LambdaDecay(LRScheduler):
    """``lr * lr_lambda(epoch)``."""

    def __init__(self, learning_rate, lr_lambda, last_epoch=-1, verbose=False):
        if not callable(lr_lambda):
            raise TypeError(f"LambdaDecay: lr_lambda must be callable, got "
                            f"{type(lr_lambda).__name__}")
        self.lr_lambda = lr_lambda
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        return self.base_lr * self.lr_lambda(self.last_epoch)


class MultiplicativeDecay(LRScheduler):
    """Multiply the previous rate by ``lr_lambda(epoch)`` at every step."""

    def __init__(self, learning_rate, lr_lambda, last_epoch=-1, verbose=False):
        if not callable(lr_lambda):
            raise TypeError(f"MultiplicativeDecay: lr_lambda must be callable, got "
                            f"{type(lr_lambda).__name__}")
        self.lr_lambda = lr_lambda
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        if self.last_epoch > 0:
            return self.last_lr * self.lr_lambda(self.last_epoch)
        return self.base_lr


class ReduceOnPlateau(LRScheduler):
    """Multiply the rate by ``factor`` when ``metrics`` (passed to ``step``) stops improving for
    ``patience`` epochs."""

    def __init__(self, learning_rate, mode="min", factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode="rel", cooldown=0, min_lr=0, epsilon=1e-8, verbose=False):
        mode = mode.lower()
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceOnPlateau: mode must be 'min' or 'max', got {mode!r}")
        if factor >= 1.0:
            raise ValueError(f"ReduceOnPlateau: factor must be < 1.0, got {factor}")
        threshold_mode = threshold_mode.lower()
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"ReduceOnPlateau: threshold_mode must be 'rel' or 'abs', got "
                             f"{threshold_mode!r}")
        self.mode, self.factor, self.patience = mode, factor, patience
        self.threshold, self.threshold_mode = threshold, threshold_mode
        self.cooldown, self.min_lr, self.epsilon = cooldown, min_lr, epsilon
        self.cooldown_counter = 0
        self.best = None
        self.num_bad_epochs = 0
        self.base_lr = _num(learning_rate, "ReduceOnPlateau", "learning_rate")
        self.last_lr = self.base_lr
        self.last_epoch = 0
        self.verbose = verbose
        self._var_name = None

    def state_keys(self):
        self.keys = ["cooldown_counter", "best", "num_bad_epochs", "last_epoch", "last_lr"]

    def step(self, metrics, epoch=None):
        """Record this epoch's ``metrics`` (a number, or a one-element Tensor/array)."""
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        current, origin = _metric_value(metrics)
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            return
        if self.best is None or self._better(current, origin, self.best,
                                             self.__dict__.get("_best_origin", "float")):
            self.best = current
            self._best_origin = origin
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.num_bad_epochs > self.patience:
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
            new_lr = max(self.last_lr * self.factor, self.min_lr)
            if self.last_lr - new_lr > self.epsilon:
                self.last_lr = new_lr
                if self.verbose:
                    print(f"Epoch {self.last_epoch}: ReduceOnPlateau set learning rate to "
                          f"{self.last_lr}.")

    def _better(self, current, origin, best, best_origin):
        # Metrics keep their kind, as Paddle keeps the object it is given: a Tensor or an
        # array is a NumPy scalar of its dtype here, so the bound is computed in that dtype
        # (a float32 loss gives a float32 bound) and an array meets a Python float with
        # NumPy's rules; a Tensor meets a Python float as Paddle's tensor ops do, by making
        # the float a float32 tensor first.
        if self.mode == "min":
            bound = best - best * self.threshold if self.threshold_mode == "rel" else \
                best - self.threshold
        else:
            bound = best + best * self.threshold if self.threshold_mode == "rel" else \
                best + self.threshold
        if origin == "tensor" and best_origin == "float":
            bound = np.float32(bound)
        elif best_origin == "tensor" and origin == "float":
            current = np.float32(current)
        return bool(current < bound) if self.mode == "min" else bool(current > bound)


def _metric_value(m):
    """The metric as (value, kind): kind 'tensor' and 'array' values are NumPy scalars of
    their dtype, 'float' values Python floats."""
    tensor = hasattr(m, "numpy") and hasattr(m, "_data")
    arr = np.asarray(backend.to_numpy(m._data) if tensor else
                     (m.numpy() if hasattr(m, "numpy") else m))
    if arr.size != 1:
        raise ValueError(f"ReduceOnPlateau.step: metrics must hold one value, got shape "
                         f"{list(arr.shape)}")
    if isinstance(m, (np.ndarray, np.generic)) or tensor:
        if arr.dtype.kind == "f":
            return arr.reshape(())[()], "tensor" if tensor else "array"
    return float(arr.reshape(())), "float"


class CosineAnnealingDecay(LRScheduler):
    """Cosine annealing from ``learning_rate`` to ``eta_min`` over ``T_max`` epochs."""

    def __init__(self, learning_rate, T_max, eta_min=0, last_epoch=-1, verbose=False):  # noqa: N803
        if not isinstance(T_max, int) or T_max <= 0:
            raise ValueError(f"CosineAnnealingDecay: T_max must be a positive int, got {T_max!r}")
        self.T_max = T_max
        self.eta_min = float(eta_min)
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        e, t = self.last_epoch, self.T_max
        if e == 0:
            return self.base_lr
        if (e - 1 - t) % (2 * t) == 0:
            return self.last_lr + (self.base_lr - self.eta_min) * (1 - math.cos(math.pi / t)) / 2
        return (1 + math.cos(math.pi * e / t)) / (1 + math.cos(math.pi * (e - 1) / t)) * (
            self.last_lr - self.eta_min) + self.eta_min

    def _get_closed_form_lr(self):
        return self.eta_min + (self.base_lr - self.eta_min) * (
            1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2


class LinearLR(LRScheduler):
    """Scale the rate linearly from ``start_factor`` to ``end_factor`` over ``total_steps``."""

    def __init__(self, learning_rate, total_steps, start_factor=1.0 / 3, end_factor=1.0,
                 last_epoch=-1, verbose=False):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(f"LinearLR: start_factor must be in (0, 1], got {start_factor}")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError(f"LinearLR: end_factor must be in [0, 1], got {end_factor}")
        if total_steps <= 0:
            raise ValueError(f"LinearLR: total_steps must be positive, got {total_steps}")
        self.start_factor, self.end_factor = start_factor, end_factor
        self.total_steps = total_steps
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        e = self.last_epoch
        if e == 0:
            return self.base_lr * self.start_factor
        if e > self.total_steps:
            return self.last_lr
        span = self.end_factor - self.start_factor
        # ratio of consecutive factors: f(e) / f(e - 1)
        return self.last_lr * (1.0 + span / (self.total_steps * self.start_factor
                                             + (e - 1) * span))


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing with warm restarts every ``T_0 * T_mult**i`` epochs (SGDR)."""

    def __init__(self, learning_rate, T_0, T_mult=1, eta_min=0, last_epoch=-1,  # noqa: N803
                 verbose=False):
        if not isinstance(T_0, int) or T_0 <= 0:
            raise ValueError(f"CosineAnnealingWarmRestarts: T_0 must be a positive int, got "
                             f"{T_0!r}")
        if not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(f"CosineAnnealingWarmRestarts: T_mult must be an int >= 1, got "
                             f"{T_mult!r}")
        self.T_0, self.T_i, self.T_mult = T_0, T_0, T_mult
        self.eta_min = float(eta_min)
        self.T_cur = last_epoch
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        return self.eta_min + (self.base_lr - self.eta_min) * (
            1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2

    def step(self, epoch=None):
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur -= self.T_i
                self.T_i *= self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"CosineAnnealingWarmRestarts.step: epoch must be >= 0, got "
                                 f"{epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self.last_lr = self.get_lr()
        if self.verbose:
            print(f"Epoch {self.last_epoch}: CosineAnnealingWarmRestarts set learning rate to "
                  f"{self.last_lr}.")


class OneCycleLR(LRScheduler):
    """The one-cycle policy: warm up to ``max_learning_rate``, then anneal to
    ``end_learning_rate`` (optionally in three phases)."""

    def __init__(self, max_learning_rate, total_steps, divide_factor=25.0,
                 end_learning_rate=0.0001, phase_pct=0.3, anneal_strategy="cos",
                 three_phase=False, last_epoch=-1, verbose=False):
        if not isinstance(total_steps, int) or total_steps <= 0:
            raise ValueError(f"OneCycleLR: total_steps must be a positive int, got "
                             f"{total_steps!r}")
        if not 0 <= phase_pct <= 1:
            raise ValueError(f"OneCycleLR: phase_pct must be in [0, 1], got {phase_pct}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"OneCycleLR: anneal_strategy must be 'cos' or 'linear', got "
                             f"{anneal_strategy!r}")
        max_lr = _num(max_learning_rate, "OneCycleLR", "max_learning_rate")
        initial = max_lr / float(divide_factor)
        end = float(end_learning_rate)
        self.total_steps = total_steps
        if three_phase:
            self._phases = [(float(phase_pct * total_steps) - 1, initial, max_lr),
                            (float(2 * phase_pct * total_steps) - 2, max_lr, initial),
                            (total_steps - 1.0, initial, end)]
        else:
            self._phases = [(float(phase_pct * total_steps) - 1, initial, max_lr),
                            (total_steps - 1.0, max_lr, end)]
        self.anneal_func = self._cos if anneal_strategy == "cos" else self._linear
        super().__init__(initial, last_epoch, verbose)

    @staticmethod
    def _cos(start, end, pct):
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    @staticmethod
    def _linear(start, end, pct):
        return (end - start) * pct + start

    def get_lr(self):
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"OneCycleLR: stepped {step} times, more than total_steps "
                             f"({self.total_steps})")
        start_step = 0.0
        for i, (end_step, lo, hi) in enumerate(self._phases):
            if step <= end_step or i == len(self._phases) - 1:
                pct = (step - start_step) / (end_step - start_step)
                return self.anneal_func(lo, hi, pct)
            start_step = end_step
        return self.last_lr


class CyclicLR(LRScheduler):
    """Cycle the rate between ``base_learning_rate`` and ``max_learning_rate`` (triangular,
    triangular2 or exp_range, or a custom ``scale_fn``)."""

    def __init__(self, base_learning_rate, max_learning_rate, step_size_up, step_size_down=None,
                 mode="triangular", exp_gamma=1.0, scale_fn=None, scale_mode="cycle",
                 last_epoch=-1, verbose=False):
        if not isinstance(step_size_up, int) or step_size_up <= 0:
            raise ValueError(f"CyclicLR: step_size_up must be a positive int, got "
                             f"{step_size_up!r}")
        if step_size_down is not None and (not isinstance(step_size_down, int)
                                           or step_size_down <= 0):
            raise ValueError(f"CyclicLR: step_size_down must be a positive int, got "
                             f"{step_size_down!r}")
        if scale_fn is None and mode not in ("triangular", "triangular2", "exp_range"):
            raise ValueError(f"CyclicLR: mode must be 'triangular', 'triangular2' or "
                             f"'exp_range', got {mode!r}")
        if scale_mode not in ("cycle", "iterations"):
            raise ValueError(f"CyclicLR: scale_mode must be 'cycle' or 'iterations', got "
                             f"{scale_mode!r}")
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.cycle_size = up + down
        self.step_up_ratio = up / self.cycle_size
        self.max_lr = _num(max_learning_rate, "CyclicLR", "max_learning_rate")
        self.amplitude = self.max_lr - float(base_learning_rate)
        self.mode, self.gamma = mode, exp_gamma
        if scale_fn is not None:
            self.scale_fn, self.scale_mode = scale_fn, scale_mode
        elif mode == "triangular":
            self.scale_fn, self.scale_mode = (lambda x: 1.0), "cycle"
        elif mode == "triangular2":
            self.scale_fn, self.scale_mode = (lambda x: 1 / (2.0 ** (x - 1))), "cycle"
        else:
            self.scale_fn, self.scale_mode = (lambda x: self.gamma ** x), "iterations"
        super().__init__(base_learning_rate, last_epoch, verbose)

    def get_lr(self):
        it = self.last_epoch
        cycle = 1 + it // self.cycle_size
        pct = 1.0 + it / self.cycle_size - cycle
        if pct <= self.step_up_ratio:
            factor = pct / self.step_up_ratio
        else:
            factor = (1 - pct) / (1 - self.step_up_ratio)
        x = cycle if self.scale_mode == "cycle" else it
        return self.base_lr + self.amplitude * factor * self.scale_fn(x)
