"""How ProgBarLogger shows progress: Paddle's text log (verbose=2), a tqdm bar (verbose=1) in a
terminal, or the live notebook widget in Jupyter. The choice is made once per process."""

from __future__ import annotations

import sys

__all__ = []

_IN_NOTEBOOK = None


def in_notebook() -> bool:
    """True inside a Jupyter kernel with a front end that renders widgets."""
    global _IN_NOTEBOOK
    if _IN_NOTEBOOK is None:
        _IN_NOTEBOOK = False
        ipy = sys.modules.get("IPython")
        if ipy is not None:
            try:
                shell = ipy.get_ipython()
            except Exception:
                shell = None
            _IN_NOTEBOOK = shell is not None and type(shell).__name__ == "ZMQInteractiveShell"
    return _IN_NOTEBOOK


def format_time(seconds_per_step: float) -> str:
    """Paddle's step time: ``30ms/step``, ``975us/step`` or ``2s/step``."""
    if seconds_per_step >= 1:
        return f"{seconds_per_step:.0f}s/step"
    if seconds_per_step >= 1e-3:
        return f"{seconds_per_step * 1e3:.0f}ms/step"
    return f"{seconds_per_step * 1e6:.0f}us/step"


def make_display(verbose):
    if in_notebook():
        try:
            from ..notebook.progress import NotebookDisplay

            return NotebookDisplay(verbose)
        except ImportError:  # ipywidgets / matplotlib missing: fall back to text
            pass
    return TextDisplay(verbose)


class TextDisplay:
    """Paddle's terminal output; verbose=1 draws a tqdm bar per epoch or phase."""

    def __init__(self, verbose, file=None):
        self.verbose = verbose
        self.file = file
        self._bar = None

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
        self._close_bar()
        if self.verbose == 1:
            from tqdm.auto import tqdm

            out = self.file or sys.stdout
            # redraws are throttled by tqdm; a log file (not a terminal) gets few, not one per step
            interval = 0.1 if getattr(out, "isatty", lambda: False)() else 10.0
            self._bar = tqdm(total=steps, file=out, leave=True, dynamic_ncols=True, unit="step",
                             mininterval=interval)

    def _close_bar(self):
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def update(self, mode, step, steps, items, per_step, logs, force=False):
        text = " - ".join(f"{k}: {v}" for k, v in items)
        if self._bar is not None:
            self._bar.set_postfix_str(text, refresh=False)
            self._bar.update(step - self._bar.n)  # tqdm redraws at most every mininterval
            if force:
                self._bar.refresh()
            return
        total = "" if steps is None else f"/{steps}"
        line = f"step {step}{total}"
        if text:
            line += " - " + text
        self._print(f"{line} - {format_time(per_step)}")

    def epoch_end(self, epoch, logs):
        self._close_bar()

    def phase_end(self, mode, samples, logs):
        self._close_bar()
        self._print(f"{'Eval' if mode == 'eval' else 'Predict'} samples: {samples}")

    def train_end(self, logs):
        self._close_bar()
