"""Notebook views (progress widgets, live charts, profiler timeline, AMP monitor, tables) and the
data-to-diagnosis tools: :func:`show_batch` (the data as the model sees it), :func:`lr_find`
(the learning rate range test behind ``Model.lr_find``) and :func:`interpret` (what a trained
model gets wrong).

Everything here is imported lazily by the rest of paddle_hl and only inside Jupyter; the optional
dependencies (ipywidgets, matplotlib) are imported by the submodules that need them, and every
view falls back to text in a terminal.
"""

# a paddle_hl extra, not a Paddle namespace: nothing is exported by ``import *``; the tools are
# reached as attributes (paddle_hl.notebook.show_batch ...)
__all__ = []

# show_batch is a view; lr_find and interpret run a model, so they live with Model in hapi
# and are forwarded here on first use (importing the package stays cheap and imports nothing
# of the library)
_LAZY = {"show_batch": "data_view", "BatchView": "data_view", "lr_find": "lr_range",
         "LRFindResult": "lr_range", "interpret": "diagnosis", "Interpretation": "diagnosis"}


def __getattr__(name):
    where = _LAZY.get(name)
    if where == "data_view":
        from . import data_view as module
    elif where == "lr_range":
        from ..hapi import lr_range as module
    elif where == "diagnosis":
        from ..hapi import diagnosis as module
    else:
        raise AttributeError(f"module 'paddle_hl.notebook' has no attribute {name!r}")
    return getattr(module, name)


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
