"""device."""

__all__ = []
