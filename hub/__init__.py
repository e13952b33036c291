"""paddle_hl.hub: built in its own issue."""

__all__ = []
