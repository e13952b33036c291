"""paddle_hl.incubate.nn: Paddle's fused layers (same parameters and state_dict keys)."""

from __future__ import annotations

from . import functional  # noqa: F401
from .layers import (
    FusedBiasDropoutResidualLayerNorm,
    FusedDropout,
    FusedDropoutAdd,
    FusedFeedForward,
    FusedLinear,
    FusedMultiHeadAttention,
    FusedTransformerEncoderLayer,
)

__all__ = ["FusedLinear", "FusedMultiHeadAttention", "FusedFeedForward",
           "FusedTransformerEncoderLayer", "FusedDropoutAdd", "FusedDropout",
           "FusedBiasDropoutResidualLayerNorm"]
