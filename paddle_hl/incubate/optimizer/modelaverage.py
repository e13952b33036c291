"""ModelAverage: a sliding-window average of the parameters, swapped in for evaluation."""

from __future__ import annotations

import contextlib

from ...framework.state import no_grad

__all__ = []

# the running sum is folded into a second accumulator this often, to bound rounding error
_FOLD_EVERY = 16384


class ModelAverage:
    """Average the parameters over a window of recent steps; evaluate with the average.

    Each :meth:`step` adds the current parameters to a running sum. When at least
    ``min_average_window`` steps are summed and also at least
    ``min(max_average_window, num_updates * average_window_rate)``, the window closes: its sum
    becomes the previous window and a new one starts. The average is over the previous and the
    current window. :meth:`apply` (a context manager) swaps the averages in, :meth:`restore`
    puts the trained values back.

    Args:
        average_window_rate (float): window length relative to the number of updates.
        parameters (list[Tensor], optional): the parameters to average.
        min_average_window (int): smallest window. Default 10000.
        max_average_window (int): largest window. Default 10000.
        name (str, optional): unused.

    Example:
        >>> ma = paddle.incubate.ModelAverage(0.15, parameters=net.parameters())
        >>> opt.step(); ma.step()
        >>> with ma.apply():
        ...     evaluate(net)
    """

    def __init__(self, average_window_rate, parameters=None, min_average_window=10000,
                 max_average_window=10000, name=None):
        if not isinstance(average_window_rate, (int, float)) or average_window_rate <= 0:
            raise ValueError(f"ModelAverage: average_window_rate must be a positive number, got "
                             f"{average_window_rate!r}")
        if not isinstance(min_average_window, int) or not isinstance(max_average_window, int) \
                or min_average_window <= 0 or max_average_window < min_average_window:
            raise ValueError("ModelAverage: need 0 < min_average_window <= max_average_window, "
                             f"got {min_average_window!r} and {max_average_window!r}")
        if parameters is None:
            raise ValueError("ModelAverage: parameters must be given in dygraph mode")
        self._params = [p for p in parameters if getattr(p, "do_model_average", True) is not
                        False]
        self.average_window = float(average_window_rate)
        self.min_average_window = min_average_window
        self.max_average_window = max_average_window
        self.name = name
        self._acc = {}
        self._backup = None

    def _state(self, p):
        s = self._acc.get(id(p))
        if s is None:
            z = p._data.astype("float64") * 0
            s = self._acc[id(p)] = {"sum_1": z.copy(), "sum_2": z.copy(), "sum_3": z.copy(),
                                    "num_accumulates": 0, "old_num_accumulates": 0,
                                    "num_updates": 0}
        return s

    @no_grad()
    def step(self):
        """Add the current parameter values to the window."""
        for p in self._params:
            s = self._state(p)
            s["num_updates"] += 1
            s["num_accumulates"] += 1
            s["sum_1"] += p._data
            if s["num_updates"] % _FOLD_EVERY == 0:
                s["sum_2"] += s["sum_1"]
                s["sum_1"][...] = 0
            if s["num_accumulates"] >= self.min_average_window and s["num_accumulates"] >= min(
                    self.max_average_window, s["num_updates"] * self.average_window):
                s["sum_3"][...] = s["sum_1"] + s["sum_2"]
                s["sum_1"][...] = 0
                s["sum_2"][...] = 0
                s["old_num_accumulates"] = s["num_accumulates"]
                s["num_accumulates"] = 0

    def minimize(self, loss, startup_program=None, parameters=None, no_grad_set=None):
        """Accumulate the parameters (the loss is not differentiated here, as in Paddle)."""
        self.step()

    def _average(self, p):
        s = self._state(p)
        n = s["num_accumulates"] + s["old_num_accumulates"]
        if n == 0:
            return p._data.copy()
        return ((s["sum_1"] + s["sum_2"] + s["sum_3"]) / n).astype(p._data.dtype)

    @contextlib.contextmanager
    def apply(self, executor=None, need_restore=True):
        """Swap the averaged values into the parameters inside the block; restore them on
        exit when ``need_restore``."""
        with no_grad():
            self._backup = [(p, p._data.copy()) for p in self._params]
            for p in self._params:
                p._data[...] = self._average(p)
                p._ver.v += 1
        try:
            yield
        finally:
            if need_restore:
                self.restore()

    @no_grad()
    def restore(self, executor=None):
        """Put back the parameter values saved by :meth:`apply`."""
        if not self._backup:
            return
        for p, v in self._backup:
            p._data[...] = v
            p._ver.v += 1
        self._backup = None

    def clear_grad(self, set_to_zero=True):
        """Clear the averaged parameters' gradients."""
        for p in self._params:
            p.clear_gradient(set_to_zero)
