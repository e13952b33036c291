"""paddle_hl.text: built in its own issue."""

__all__ = []
