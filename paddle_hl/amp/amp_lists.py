"""Paddle 2.6's AMP op lists, and the names under which paddle_hl's kernels appear in them.

The lists use Paddle's operator names (the names of its static-graph ops: ``matmul_v2``,
``elementwise_add``, ``reduce_sum``, ``lookup_table_v2`` ...), which is also what
``custom_white_list`` / ``custom_black_list`` and the operator-stats table use. A paddle_hl kernel
is matched by its Paddle name and by its own op name (``matmul``, ``add``, ``sum``), so custom
lists may use either.

Rules (Paddle 2.6, ``paddle.amp.auto_cast``):

- white list: inputs cast to the AMP dtype (float16 or bfloat16);
- black list: inputs cast to float32 (in O2 only the extra black list below applies);
- any other op ("promote"): float32 when one floating input is float32, else the AMP dtype.
"""

from __future__ import annotations

__all__ = []

# ops that are numerically safe and fast in float16: always run in low precision
FP16_WHITE_LIST = frozenset({
    "conv2d", "einsum", "matmul", "matmul_v2", "max_pool2d_with_index", "mul",
    "fused_gemm_epilogue",
    # float16 only (no bfloat16 kernel in Paddle)
    "fake_quantize_dequantize_abs_max", "fake_quantize_dequantize_moving_average_abs_max",
    "fused_attention", "fused_feedforward",
})
ONLY_FP16_WHITE_LIST = frozenset({
    "fake_quantize_dequantize_abs_max", "fake_quantize_dequantize_moving_average_abs_max",
    "fused_attention", "fused_feedforward",
})
BF16_WHITE_LIST = FP16_WHITE_LIST - ONLY_FP16_WHITE_LIST

# ops whose results lose too much in low precision (exp/log, reductions, softmax, losses, norms)
FP16_BLACK_LIST = frozenset({
    "tan", "acos", "asin", "sinh", "cosh", "atanh", "tanh_shrink", "erfinv", "exp", "expm1",
    "log", "log10", "log2", "reciprocal", "rsqrt", "pow", "square", "reduce_sum", "mean",
    "reduce_mean", "reduce_prod", "cumprod", "cumsum", "dist", "pnorm", "frobenius_norm",
    "renorm", "group_norm", "layer_norm", "softmax", "softmin", "softplus", "log_softmax",
    "softmax_with_cross_entropy", "sigmoid_cross_entropy_with_logits",
    "c_softmax_with_cross_entropy", "cross_entropy", "cross_entropy2", "nll_loss", "huber_loss",
    "triplet_margin_loss", "log_loss", "hsigmoid_loss", "margin_cross_entropy",
})
BF16_BLACK_LIST = FP16_BLACK_LIST

# ops whose low-precision gradients are slow or inaccurate: float32 at every level
EXTRA_BLACK_LIST = frozenset({
    "lookup_table", "lookup_table_v2", "scatter", "linear_interp_v2", "nearest_interp_v2",
    "bilinear_interp_v2", "bicubic_interp_v2", "trilinear_interp_v2",
})

# ops without a low-precision kernel: they stay in float32 when AMP would pick float16/bfloat16
# (Paddle has no float16 kernels for its dense linear-algebra solvers and decompositions)
UNSUPPORTED_LOW_PRECISION = frozenset({
    "inverse", "determinant", "slogdeterminant", "cholesky", "cholesky_solve", "qr", "svd",
    "eig", "eigh", "eigvalsh", "lstsq", "lu", "lu_unpack", "pinv", "solve", "triangular_solve",
    "householder_product", "matrix_rank", "fft_c2c", "fft_r2c", "fft_c2r",
})

_LEVELS = ("O0", "OD", "O1", "O2")


def white_list() -> dict:
    """Paddle's default white lists: ``{dtype: {level: set of op names}}``.

    Returns:
        dict: keyed by ``'float16'`` / ``'bfloat16'`` then by ``'OD'``, ``'O1'``, ``'O2'``.
    """
    out = {}
    for dtype, ops in (("float16", FP16_WHITE_LIST), ("bfloat16", BF16_WHITE_LIST)):
        out[dtype] = {"OD": set(ops), "O1": set(ops), "O2": set(ops)}
    return out


def black_list() -> dict:
    """Paddle's default black lists: ``{dtype: {level: set of op names}}``.

    OD has none (everything outside the white list runs in float32 anyway); O2 only keeps the
    extra black list (embedding, interpolation, scatter).

    Returns:
        dict: keyed by ``'float16'`` / ``'bfloat16'`` then by ``'OD'``, ``'O1'``, ``'O2'``.
    """
    out = {}
    for dtype, ops in (("float16", FP16_BLACK_LIST), ("bfloat16", BF16_BLACK_LIST)):
        out[dtype] = {"OD": set(), "O1": set(ops | EXTRA_BLACK_LIST),
                      "O2": set(EXTRA_BLACK_LIST)}
    return out


# ---------------------------------------------------------------- kernel names -> Paddle names

# paddle_hl op name -> Paddle operator name, where they differ
PADDLE_NAME = {
    "add": "elementwise_add", "subtract": "elementwise_sub", "multiply": "elementwise_mul",
    "divide": "elementwise_div", "floor_divide": "elementwise_floordiv",
    "remainder": "elementwise_mod", "maximum": "elementwise_max", "minimum": "elementwise_min",
    "fmax": "elementwise_fmax", "fmin": "elementwise_fmin",
    "heaviside": "elementwise_heaviside", "matmul": "matmul_v2", "sum": "reduce_sum",
    "mean": "reduce_mean", "prod": "reduce_prod", "max": "reduce_max", "min": "reduce_min",
    "amax": "reduce_amax", "amin": "reduce_amin", "all": "reduce_all", "any": "reduce_any",
    "reshape": "reshape2", "transpose": "transpose2", "expand": "expand_v2",
    "embedding": "lookup_table_v2", "smooth_l1_loss": "huber_loss",
    "binary_cross_entropy": "bce_loss",
    "binary_cross_entropy_with_logits": "sigmoid_cross_entropy_with_logits",
    "cross_entropy": "softmax_with_cross_entropy", "tanhshrink": "tanh_shrink",
    "kl_div": "kldiv_loss", "scaled_dot_product_attention": "flash_attn",
    "matrix_norm": "frobenius_norm", "pad": "pad3d", "clone": "assign",
    "log_sigmoid": "logsigmoid", "hardswish": "hard_swish", "hardsigmoid": "hard_sigmoid",
    "hardshrink": "hard_shrink", "bilinear": "bilinear_tensor_product", "det": "determinant",
    "slogdet": "slogdeterminant", "renorm_max": "renorm", "cdist": "dist",
    "pairwise_distance": "dist", "gelu": "gelu", "interpolate": "interp_v2",
    "interpolate_grad": "interp_v2",
}

# every interpolation mode: paddle_hl's one resampling kernel matches all of them
INTERP_NAMES = ("linear_interp_v2", "nearest_interp_v2", "bilinear_interp_v2",
                "bicubic_interp_v2", "trilinear_interp_v2")

# kernels AMP leaves alone: the cast AMP itself inserts
EXEMPT = frozenset({"cast"})
