"""The high-level API: Model, callbacks, progress display, summary and flops."""

from .model import Model

__all__ = ["Model"]
