"""paddle_hl.incubate.nn.functional: Paddle's fused ops, as the math they fuse.

Paddle runs these as single GPU kernels. Here each is composed from paddle_hl ops (so autograd,
AMP and every device work), with the arguments, defaults and outputs of Paddle 2.6.
"""

from __future__ import annotations

from .fused_ops import (
    fused_bias_dropout_residual_layer_norm,
    fused_dropout_add,
    fused_feedforward,
    fused_layer_norm,
    fused_linear,
    fused_linear_activation,
    fused_matmul_bias,
    fused_multi_head_attention,
    fused_rms_norm,
    fused_rotary_position_embedding,
)

__all__ = ["fused_multi_head_attention", "fused_feedforward", "fused_matmul_bias",
           "fused_linear", "fused_linear_activation", "fused_bias_dropout_residual_layer_norm",
           "fused_dropout_add", "fused_rms_norm", "fused_layer_norm",
           "fused_rotary_position_embedding"]
