"""paddle.incubate.multiprocessing: Python's ``multiprocessing`` with paddle tensors registered
for its queues and pipes.

Every name of :mod:`multiprocessing` is here (``get_context``, ``Process``, ``Queue``, ...).
Tensors put on a queue arrive as tensors with the same values, dtype, ``stop_gradient`` and name;
they travel by value (the receiving process gets its own copy), not as shared memory.
"""

from __future__ import annotations

import multiprocessing as _mp
from multiprocessing import *  # noqa: F403  (Paddle re-exports the standard module)

from . import reductions

reductions.init_reductions()

__all__ = []


def __getattr__(name):
    return getattr(_mp, name)
