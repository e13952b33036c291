"""paddle_hl.onnx: export a layer to an ONNX model (``paddle.onnx.export``).

The layer is traced exactly as :func:`paddle_hl.jit.save` traces it (same program, same checks)
and each recorded kernel is written as ONNX operators; parameters become initializers. Needs the
``onnx`` package (``pip install 'paddle_hl[onnx]'``).
"""

from __future__ import annotations

from ._export import export

__all__ = ["export"]
