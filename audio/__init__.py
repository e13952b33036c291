"""paddle_hl.audio: built in its own issue."""

__all__ = []
