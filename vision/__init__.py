"""paddle_hl.vision: built in its own issue."""

__all__ = []
