"""paddle.dataset: the helpers of Paddle's legacy dataset package (``paddle.dataset.common``).

The datasets themselves live in :mod:`paddle_hl.vision.datasets`, :mod:`paddle_hl.text` and
:mod:`paddle_hl.audio.datasets`.
"""

from . import common  # noqa: F401  (paddle.dataset.common)

__all__ = []
