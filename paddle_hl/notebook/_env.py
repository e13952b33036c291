"""Where the notebook views run: Jupyter detection and the lazy optional imports.

ipywidgets, matplotlib and IPython are optional: they are imported here, only when a view is
built, and a missing one raises an ImportError that says what to install.
"""

from __future__ import annotations

import importlib

__all__ = []

_INSTALL_HINT = "pip install 'paddle_hl[notebook]'"


def in_notebook() -> bool:
    """True inside a Jupyter kernel (decided once per process by ``hapi.progressbar``)."""
    from ..hapi.progressbar import in_notebook as detect

    return detect()


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
