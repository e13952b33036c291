"""``paddle.audio.datasets``: ESC-50 and TESS."""

from .esc50 import ESC50
from .tess import TESS

__all__ = ["ESC50", "TESS"]
