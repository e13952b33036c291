"""paddle_hl.jit: ``to_static`` in dygraph meaning, and saving a layer for inference.

- :func:`to_static` marks a function or layer for static conversion in Paddle. paddle_hl runs
  eagerly, so the decorated code runs as written; ``input_spec`` is kept (``jit.save`` uses it)
  and each call's Tensor arguments are checked against it (rank, fixed dims, dtype).
- :func:`save` traces the layer's forward for the given specs into a program of paddle_hl
  kernels (``path.pdmodel``, paddle_hl's own format) and writes the parameters in Paddle's
  ``.pdiparams`` byte layout (plus ``.pdiparams.info`` as Paddle writes it).
- :func:`load` reads both back, in any process, into a :class:`TranslatedLayer` that runs the
  program without the model's Python class.

Example:
    >>> net = paddle.nn.Linear(4, 2)
    >>> paddle.jit.save(net, '/tmp/net', [paddle.static.InputSpec([None, 4], 'float32')])
    >>> loaded = paddle.jit.load('/tmp/net')
"""

from __future__ import annotations

from ._save_load import TranslatedLayer, load, save
from ._to_static import (
    enable_to_static,
    ignore_module,
    not_to_static,
    set_code_level,
    set_verbosity,
    to_static,
)

__all__ = ["to_static", "not_to_static", "ignore_module", "enable_to_static", "set_code_level",
           "set_verbosity", "save", "load", "TranslatedLayer"]
