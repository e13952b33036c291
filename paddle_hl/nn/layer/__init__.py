"""Layer classes, one module per family."""

__all__ = []
