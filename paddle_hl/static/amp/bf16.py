"""paddle_hl.static.amp.bf16: the bfloat16 names of static AMP, in dygraph meaning."""

from __future__ import annotations

import contextlib

from ._decorate import AutoMixedPrecisionLists, decorate

__all__ = ["AutoMixedPrecisionListsBF16", "bf16_guard", "decorate_bf16"]


@contextlib.contextmanager
def bf16_guard():
    """Mark ops for static bfloat16 rewriting; in dygraph a no-op scope, as in Paddle."""
    yield


class AutoMixedPrecisionListsBF16:
    """Static bfloat16 op lists with custom additions.

    Args:
        custom_bf16_list (list[str], optional): ops run in bfloat16.
        custom_fp32_list (list[str], optional): ops kept in float32.
        custom_fp32_varnames (list[str], optional): variables kept in float32.
    """

    def __init__(self, custom_bf16_list=None, custom_fp32_list=None, custom_fp32_varnames=None):
        lists = AutoMixedPrecisionLists(custom_bf16_list, custom_fp32_list,
                                        custom_fp32_varnames, dtype="bfloat16")
        self.bf16_list = lists.white_list
        self.fp32_list = lists.black_list
        self.gray_list = lists.gray_list
        self.unsupported_list = lists.unsupported_list
        self.fp32_varnames = lists.black_varnames


def decorate_bf16(optimizer, amp_lists=None, use_pure_bf16=False, use_bf16_guard=None):
    """Wrap ``optimizer`` for bfloat16 training (no loss scaling: bfloat16 has float32's range).

    Returns:
        OptimizerWithMixedPrecision: the wrapped optimizer.
    """
    return decorate(optimizer, use_pure_fp16=use_pure_bf16, use_bf16=True)
