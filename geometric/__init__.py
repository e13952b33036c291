"""paddle_hl.geometric: built in its own issue."""

__all__ = []
