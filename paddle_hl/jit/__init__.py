"""paddle_hl.jit: ``to_static`` in dygraph meaning, and saving a layer for inference.

- :func:`to_static` marks a function or layer for static conversion in Paddle. paddle_hl runs
  eagerly, so the decorated code runs as written; ``input_spec`` is kept (``jit.save`` uses it)
  and each call's Tensor arguments are checked against it (rank, fixed dims, dtype).
- :func:`save` traces the layer's forward for the given specs and writes Paddle's inference
  model: ``path.pdmodel`` (a ProgramDesc of Paddle operators, free dims -1), ``path.pdiparams``
  (Paddle's byte layout) and ``path.pdiparams.info``; real Paddle's ``jit.load`` and
  ``paddle.inference`` run it. A forward calling a kernel that has no Paddle operator form here
  is written in paddle_hl's older program format instead, with a warning naming the kernels
  (real Paddle cannot read that file; the format is kept only for such forwards).
- :func:`load` reads, in any process and without the model's Python class, a Paddle
  ProgramDesc (written by Paddle or by paddle_hl) into a layer that interprets its operators,
  or a file of paddle_hl's older format into a :class:`TranslatedLayer`.

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
