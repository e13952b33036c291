"""Where the views run: Jupyter detection, the lazy optional imports and shared formatting.

ipywidgets, matplotlib and IPython are optional: they are imported here, only when a view is
built, and a missing one raises an ImportError that says what to install. This module imports
nothing else from paddle_hl, so the text progress bar, the profiler and AMP can all ask it
whether they run in a notebook.
"""

from __future__ import annotations

import importlib
import sys

__all__ = []

_INSTALL_HINT = "pip install 'paddle_hl[notebook]'"


_IN_NOTEBOOK = None


def in_notebook() -> bool:
    """True inside a Jupyter kernel with a front end that renders widgets (decided once per
    process; IPython is only looked at when something already imported it)."""
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


def require(module: str, feature: str):
    """Import an optional dependency or raise an ImportError naming the install command.

    Args:
        module (str): the module to import, e.g. ``'ipywidgets'``.
        feature (str): what needs it, for the message.

    Returns:
        module: the imported module.
    """
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(f"{feature} needs {module.split('.')[0]} ({e}); install the notebook "
                          f"extras with: {_INSTALL_HINT}") from e


def display(obj) -> None:
    """Show ``obj`` in the current Jupyter output (IPython's ``display``)."""
    require("IPython.display", "paddle_hl.notebook").display(obj)
