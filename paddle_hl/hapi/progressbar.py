"""How ProgBarLogger shows progress: Paddle's text log (verbose=2), Paddle's one-line progress
bar (verbose=1) in a terminal, or the live notebook widget in Jupyter. The choice is made once
per process. :class:`ProgressBar` is Paddle's ``paddle.hapi.progressbar.ProgressBar``."""

from __future__ import annotations

import numbers
import os
import shutil
import sys
import time

import numpy as np

from ..notebook._env import in_notebook

__all__ = []

def _fmt_number(v) -> str:
    """Paddle's number format in progress lines: 4 decimals, scientific below 1e-3."""
    if isinstance(v, (bool, np.bool_)):
        return str(v)
    if isinstance(v, (numbers.Integral, np.integer)):
        return str(int(v))
    v = float(v)
    return f"{v:.4f}" if abs(v) > 1e-3 else f"{v:.4e}"


def _fmt_value(val) -> str:
    if isinstance(val, np.ndarray):
        val = val.reshape(-1).tolist()
    if isinstance(val, (list, tuple)):
        return " ".join(_fmt_value(v) for v in val)
    if isinstance(val, (numbers.Number, np.generic)):
        return _fmt_number(val)
    return str(val)


def _fmt_eta(seconds: float) -> str:
    seconds = int(seconds)
    if seconds > 3600:
        return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
    if seconds > 60:
        return f"{seconds // 60}:{seconds % 60:02d}"
    return f"{seconds}s"


def _terminal_columns(file) -> int | None:
    """The width of the terminal ``file`` writes to (None when it is not a terminal)."""
    isatty = getattr(file, "isatty", None)
    if not (isatty and isatty()):
        return None
    return shutil.get_terminal_size((80, 24)).columns


class ProgressBar:
    """Paddle's text progress bar: ``step 3/10 [======>......] - loss: 0.1234 - ETA: 2s -
    5ms/step``.

    With ``verbose=1`` one line is redrawn in place (a carriage return before each update) and
    ends with a newline at the last step; with ``verbose=2`` every update prints its own line
    (``step 3/10 - loss: 0.1234 - 5ms/step``), as log files and their parsers expect. In a
    terminal narrower than the line, the bar shrinks first, then goes, so that every value
    stays visible.

    Args:
        num (int, optional): the number of steps (None when unknown: the step count only).
        width (int, optional): the bar's width in characters. Default 30.
        verbose (int, optional): 1 (one redrawn line) or 2 (a line per update). Default 1.
        start (bool, optional): start the clock now. Default True.
        file (file, optional): where to write (``sys.stdout`` at the time of writing by
            default).
        name (str, optional): the word before the counter. Default ``'step'``.

    Example:
        >>> bar = ProgressBar(num=2, verbose=2)
        >>> bar.update(1, [("loss", 0.5)])  # doctest: +ELLIPSIS
        step 1/2 - loss: 0.5000 - ...step
    """

    def __init__(self, num=None, width=30, verbose=1, start=True, file=None, name="step"):
        if num is not None and (not isinstance(num, numbers.Integral) or num < 0):
            raise ValueError(f"ProgressBar: num must be a non-negative int or None, got {num!r}")
        if not isinstance(width, numbers.Integral) or width < 1:
            raise ValueError(f"ProgressBar: width must be a positive int, got {width!r}")
        if verbose not in (0, 1, 2, 3):
            raise ValueError(f"ProgressBar: verbose must be 0, 1, 2 or 3, got {verbose!r}")
        self._num = num
        self._width = int(width)
        self._verbose = verbose
        self.file = file
        self.name = name
        self._last_len = 0
        self._start_time = time.time() if start else None
        self._last_update = 0.0

    def start(self):
        """(Re)start the clock that the step time and the ETA are measured from."""
        self._start_time = time.time()

    @property
    def _out(self):
        return self.file or sys.stdout

    def _counter(self, current):
        if self._num is None:
            return f"{self.name} {current:3d}"
        digits = len(str(self._num))
        return f"{self.name} {current:{digits}d}/{self._num}"

    def _bar(self, current, width):
        if not self._num or width <= 0:
            return ""
        filled = min(int(width * current / self._num), width)
        if filled == 0:
            return " [" + "." * width + "]"
        head = "=" if current >= self._num else ">"
        return " [" + "=" * (filled - 1) + head + "." * (width - filled) + "]"

    def _timing(self, current):
        now = time.time()
        if self._start_time is None:
            self._start_time = now
        per_step = (now - self._start_time) / current if current else 0.0
        if per_step >= 1:
            step_text = f"{per_step:.0f}s/step"
        elif per_step >= 1e-3:
            step_text = f"{per_step * 1e3:.0f}ms/step"
        else:
            step_text = f"{per_step * 1e6:.0f}us/step"
        eta = None
        if self._num is not None and current < self._num:
            eta = _fmt_eta(per_step * (self._num - current))
        return eta, step_text

    def line(self, current_num, values=(), columns=None) -> str:
        """The text of one update (without carriage return or newline).

        Args:
            current_num (int): the current step.
            values (list[tuple[str, object]] | dict): the values to show.
            columns (int, optional): fit the line in this many columns (the bar shrinks,
                then goes).

        Returns:
            str: the line.
        """
        items = list(values.items()) if isinstance(values, dict) else list(values or ())
        for i, item in enumerate(items):
            if not (isinstance(item, (tuple, list)) and len(item) == 2):
                raise ValueError(f"ProgressBar.update: values must be (name, value) pairs, "
                                 f"got item {i}: {item!r}")
        tail = "".join(f" - {k}: {_fmt_value(v)}" for k, v in items)
        eta, step_text = self._timing(current_num)
        dynamic = self._verbose == 1
        if dynamic and eta is not None:
            tail += f" - ETA: {eta}"
        tail += f" - {step_text}"
        head = self._counter(current_num)
        if not dynamic:
            return head + tail
        width = self._width
        if columns is not None:
            room = columns - 1 - len(head) - len(tail) - 3
            width = min(width, room) if room >= 10 else 0
        return head + self._bar(current_num, width) + tail

    def update(self, current_num, values=()):
        """Show step ``current_num`` with ``values``.

        Args:
            current_num (int): the current step (1-based).
            values (list[tuple[str, object]] | dict): ``[('loss', 0.25), ('acc', 0.9)]``;
                floats print with 4 decimals, lists as their values separated by spaces.
        """
        if self._verbose == 0:
            return
        out = self._out
        finished = self._num is not None and current_num >= self._num
        if self._verbose == 1:
            columns = _terminal_columns(out)
            text = self.line(current_num, values, columns)
            if columns is not None and len(text) >= columns:
                # too wide even without the bar: a redrawn line would wrap and pile up, so
                # print whole lines instead (every couple of seconds, and the last step)
                now = time.time()
                if finished or now - self._last_update >= 2.0:
                    out.write(text + "\n")
                    self._last_update = now
                out.flush()
                return
            pad = " " * max(self._last_len - len(text), 0)
            self._last_len = len(text)
            out.write("\r" + text + pad + ("\n" if finished else ""))
            if finished:
                self._last_len = 0
        else:
            out.write(self.line(current_num, values) + "\n")
        out.flush()


def make_display(verbose):
    if in_notebook():
        try:
            from ..notebook.progress import NotebookDisplay

            # with verbose=2 the widget also prints Paddle's log lines, written by the text
            # display handed to it
            return NotebookDisplay(verbose, log=TextDisplay(2) if verbose == 2 else None)
        except ImportError:  # ipywidgets missing: fall back to text
            pass
    return TextDisplay(verbose)


class TextDisplay:
    """Paddle's terminal output: with verbose=1 a :class:`ProgressBar` line per epoch or phase,
    redrawn in place in a terminal; in a log file (not a terminal) one full line per epoch and
    phase plus one every ``log_interval`` seconds, so logs stay readable and parseable. With
    verbose=2 a line every ``log_freq`` steps.

    Args:
        verbose (int): 1 or 2.
        file (file, optional): where to write (``sys.stdout`` by default).
        log_interval (float, optional): seconds between two lines in a log file. Default 10.
    """

    def __init__(self, verbose, file=None, log_interval=10.0):
        self.verbose = verbose
        self.file = file
        self.log_interval = log_interval
        self._bar = None
        self._tty = False
        self._last = 0.0

    def _print(self, *parts):
        print(*parts, file=self.file or sys.stdout, flush=True)

    def train_begin(self, epochs, params):
        self._print("The loss value printed in the log is the current step, and the metric is "
                    "the average value of previous steps.")

    def epoch_begin(self, epoch, epochs, steps):
        if epochs is not None:
            self._print(f"Epoch {epoch + 1}/{epochs}")
        self._new_bar(steps)

    def phase_begin(self, mode, steps):
        self._print("Eval begin..." if mode == "eval" else "Predict begin...")
        self._new_bar(steps)

    def _new_bar(self, steps):
        out = self.file or sys.stdout
        self._tty = _terminal_columns(out) is not None or bool(os.environ.get("PYCHARM_HOSTED"))
        self._bar = ProgressBar(num=steps, verbose=1 if self.verbose == 1 else 2, file=out)
        self._last = time.time()

    def update(self, mode, step, steps, items, per_step, logs, force=False):
        if self._bar is None:
            self._new_bar(steps)
        bar = self._bar
        if steps and bar._num is None:
            bar._num = steps
        if self.verbose == 1 and not self._tty:
            now = time.time()
            if not (force or (steps and step >= steps) or now - self._last >= self.log_interval):
                return
            self._last = now
            (self.file or sys.stdout).write(bar.line(step, items) + "\n")
            (self.file or sys.stdout).flush()
            return
        if self.verbose == 1:
            # a terminal redraws in place: ten times a second is plenty (and the last step)
            now = time.time()
            if not (force or (steps and step >= steps) or now - self._last >= 0.1):
                return
            self._last = now
        bar.update(step, items)

    def epoch_end(self, epoch, logs):
        self._bar = None

    def phase_end(self, mode, samples, logs):
        self._bar = None
        self._print(f"{'Eval' if mode == 'eval' else 'Predict'} samples: {samples}")

    def train_end(self, logs):
        self._bar = None
