"""utils."""

__all__ = []
