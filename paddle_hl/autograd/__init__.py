"""autograd."""

__all__ = []
