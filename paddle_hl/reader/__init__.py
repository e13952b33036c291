"""paddle.reader: composable sample readers (a reader is a function that returns an iterator).

Older Paddle data pipelines build readers from these decorators (``buffered``, ``xmap_readers``,
``shuffle``, ...) and batch them with :func:`paddle_hl.batch`.
"""

from .decorator import (  # noqa: F401  (Paddle's paths: paddle.reader.<name>)
    ComposeNotAligned,
    buffered,
    cache,
    chain,
    compose,
    firstn,
    map_readers,
    multiprocess_reader,
    shuffle,
    xmap_readers,
)

__all__ = []
