"""Notebook views (progress widgets, live charts, profiler timeline, AMP monitor, tables).

Everything here is imported lazily by the rest of paddle_hl and only inside Jupyter; the optional
dependencies (ipywidgets, matplotlib) are imported by the submodules that need them.
"""

__all__ = []
