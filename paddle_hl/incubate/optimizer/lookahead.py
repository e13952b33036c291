"""LookAhead: slow weights that follow the inner optimizer's fast weights every k steps."""

from __future__ import annotations

from ...framework.state import no_grad

__all__ = []


class LookAhead:
    """Lookahead optimizer (Zhang et al., 2019) around ``inner_optimizer``.

    After each inner step the step counter grows; on the first step the slow weights take the
    parameters' values; every ``k`` steps ``slow = slow + alpha * (fast - slow)`` and the
    parameters are reset to ``slow``.

    Args:
        inner_optimizer (Optimizer): the optimizer that makes the fast updates.
        alpha (float): slow-weight step size in [0, 1]. Default 0.5.
        k (int): fast steps between slow updates (positive). Default 5.
        name (str, optional): unused.

    Example:
        >>> sgd = paddle.optimizer.SGD(0.1, parameters=net.parameters())
        >>> opt = paddle.incubate.LookAhead(sgd, alpha=0.2, k=5)
        >>> loss.backward(); opt.step(); opt.clear_grad()
    """

    def __init__(self, inner_optimizer, alpha=0.5, k=5, name=None):
        if inner_optimizer is None or not hasattr(inner_optimizer, "step"):
            raise TypeError("LookAhead: inner_optimizer must be an Optimizer, got "
                            f"{type(inner_optimizer).__name__}")
        if not isinstance(alpha, (int, float)) or not 0.0 <= alpha <= 1.0:
            raise ValueError(f"LookAhead: alpha should be in [0.0, 1.0], got {alpha!r}")
        if not isinstance(k, int) or k <= 0:
            raise ValueError(f"LookAhead: k should be a positive integer, got {k!r}")
        self.inner_optimizer = inner_optimizer
        self.alpha = float(alpha)
        self.k = k
        self.name = name
        self._step = 0
        self._slow = {}
        self._parameter_list = list(inner_optimizer._all_params()) if hasattr(
            inner_optimizer, "_all_params") else list(inner_optimizer._parameter_list)

    def __getattr__(self, name):
        return getattr(self.__dict__["inner_optimizer"], name)

    @no_grad()
    def _lookahead(self):
        self._step += 1
        for p in self._parameter_list:
            if not p.trainable:
                continue
            key = id(p)
            if self._step == 1:
                self._slow[key] = (p, p._data.copy())
            if self._step % self.k == 0:
                _, slow = self._slow.setdefault(key, (p, p._data.copy()))
                slow += self.alpha * (p._data - slow)
                p._data[...] = slow
                p._ver.v += 1

    def step(self):
        """One inner step, then the lookahead bookkeeping."""
        self.inner_optimizer.step()
        self._lookahead()

    def minimize(self, loss, startup_program=None, parameters=None, no_grad_set=None):
        """Backward on ``loss``, then :meth:`step`."""
        loss.backward()
        self.step()

    def clear_grad(self, set_to_zero=True):
        """Clear the parameters' gradients (the inner optimizer's)."""
        self.inner_optimizer.clear_grad(set_to_zero)

    def state_dict(self):
        """The inner optimizer's state plus the slow weights (``<param name>_slow_0``)."""
        from ...framework.tensor import Tensor

        sd = dict(self.inner_optimizer.state_dict())
        for p, slow in self._slow.values():
            sd[f"{p.name}_slow_0"] = Tensor(slow.copy())
        sd["lookahead_step"] = self._step
        return sd

    def set_state_dict(self, state_dict):
        """Restore :meth:`state_dict`'s output."""
        sd = dict(state_dict)
        self._step = int(sd.pop("lookahead_step", 0))
        for p in self._parameter_list:
            v = sd.pop(f"{p.name}_slow_0", None)
            if v is not None:
                arr = v._data if hasattr(v, "_data") else v
                self._slow[id(p)] = (p, _like(arr, p._data))
        self.inner_optimizer.set_state_dict(sd)


def _like(arr, ref):
    from ...backend import get_array_module

    xp = get_array_module(ref)
    return xp.asarray(arr, dtype=ref.dtype).copy()
