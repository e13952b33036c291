"""Sparse layers (``paddle.sparse.nn``)."""

from . import functional  # noqa: F401
