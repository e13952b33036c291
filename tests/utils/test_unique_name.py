"""paddle.utils.unique_name and the names real code reaches through paddle.framework and the
top-level build queries."""

from __future__ import annotations

import pytest

import paddle_hl as paddle


def _names(lib):
    u = lib.utils.unique_name
    out = []
    with u.guard():
        out += [u.generate("fc"), u.generate("fc"), u.generate("conv")]
        out.append(lib.nn.Linear(2, 2).weight.name)
        with u.guard("pre_"):
            out.append(u.generate("fc"))
        out.append(u.generate("fc"))
    old = u.switch()
    out.append(u.generate("fc"))
    u.switch(*old)  # switch returns (generator, name checker)
    return out


def test_generate_guard_switch():
    assert _names(paddle) == ["fc_0", "fc_1", "conv_0", "linear_0.w_0", "pre_fc_0", "fc_2",
                              "fc_0"]
    with pytest.raises(TypeError, match="generate: key must be a str"):
        paddle.utils.unique_name.generate(3)


@pytest.mark.parity
def test_generate_guard_switch_parity(pd):
    assert _names(paddle) == _names(pd)


def test_framework_and_build_queries():
    from paddle_hl.framework import ParamAttr

    assert ParamAttr is paddle.ParamAttr
    assert paddle.framework.in_dynamic_mode() is True
    assert paddle.is_compiled_with_xpu() is False and paddle.is_compiled_with_rocm() is False
    assert paddle.is_compiled_with_custom_device("npu") is False
    with pytest.raises(AttributeError):
        paddle.framework.no_such_name  # noqa: B018
