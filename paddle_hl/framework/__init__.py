"""framework."""

__all__ = []
