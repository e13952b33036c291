"""The high-level API: Model, callbacks, progress display, summary and flops."""

from . import callbacks, progressbar  # noqa: F401  (paddle.hapi.progressbar.ProgressBar)
from .model import Model

__all__ = ["Model"]
