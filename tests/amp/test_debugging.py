"""amp.debugging: check_numerics, the tensor checker (stop at the first op producing
NaN/Inf, naming it) and the operator-stats table."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.amp import debugging as D
from paddle_hl.framework import state

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

VALUES = [1.0, 0.0, float("nan"), float("inf"), -float("inf"), 2.0]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_check_numerics_counts(dtype):
    x = paddle.to_tensor(np.array(VALUES, np.float32)).astype(dtype)
    stats, values = D.check_numerics(x, "my_op", "x", D.DebugMode.CHECK_NAN_INF)
    assert stats.dtype == paddle.int64 and values.dtype == paddle.float32
    np.testing.assert_array_equal(stats.numpy(), [1, 2, 1])
    v = values.numpy()
    assert v[0] == np.inf and v[1] == -np.inf and np.isnan(v[2])


def test_check_numerics_clean_and_0d():
    stats, values = D.check_numerics(paddle.to_tensor([1.0, 0.0], dtype="float64"), "op", "v")
    np.testing.assert_array_equal(stats.numpy(), [0, 0, 1])
    np.testing.assert_allclose(values.numpy(), [1.0, 0.0, 0.5])
    stats, values = D.check_numerics(paddle.to_tensor(3.0), "op", "v", D.DebugMode.CHECK_ALL)
    np.testing.assert_allclose(values.numpy(), [3.0, 3.0, 3.0])
    stats, values = D.check_numerics(paddle.zeros([0]), "op", "v")
    np.testing.assert_array_equal(stats.numpy(), [0, 0, 0])


@pytest.mark.cpu
def test_check_numerics_abort_and_reports(capsys):
    x = paddle.to_tensor(VALUES)
    with pytest.raises(RuntimeError, match=r"There are NAN or INF \(num_nan=1, num_inf=2, "
                                           r"num_zero=1\) in \[device=cpu, op=myop, tensor=x, "
                                           r"dtype=fp32\]"):
        D.check_numerics(x, "myop", "x")
    err = capsys.readouterr().err
    assert "[PRECISION] [ERROR] in [device=cpu, op=myop, tensor=x, dtype=fp32], numel=6" in err
    D.check_numerics(paddle.to_tensor([3.0]), "op", "v", D.DebugMode.CHECK_ALL)
    assert "[PRECISION] in [device=cpu, op=op, tensor=v, dtype=fp32], numel=1" in \
        capsys.readouterr().err
    D.check_numerics(paddle.to_tensor([1e5]), "op", "v", D.DebugMode.CHECK_ALL_FOR_OVERFLOW)
    assert "num_overflow=1" in capsys.readouterr().err


def test_check_numerics_bad_input():
    with pytest.raises(TypeError, match="int64"):
        D.check_numerics(paddle.to_tensor([1, 2]), "op", "v")
    with pytest.raises(TypeError):
        D.check_numerics(np.ones(2), "op", "v")
    with pytest.raises(TypeError):
        D.check_numerics(paddle.ones([2]), "op", "v", debug_mode=0)


@pytest.mark.parity
def test_check_numerics_matches_paddle(pd):
    a = np.array([1.0, 0.0, 65504.0, -3.5, 0.0], np.float32)
    mode = pd.amp.debugging.DebugMode.CHECK_NAN_INF
    ts, tv = pd.amp.debugging.check_numerics(pd.to_tensor(a), "op", "v", mode)
    s, v = D.check_numerics(paddle.to_tensor(a), "op", "v", D.DebugMode.CHECK_NAN_INF)
    np.testing.assert_array_equal(s.numpy(), ts.numpy())
    np.testing.assert_allclose(v.numpy(), tv.numpy(), rtol=1e-5, atol=1e-6)


def test_tensor_checker_stops_at_first_bad_op():
    cfg = D.TensorCheckerConfig(enable=True)
    x = paddle.to_tensor([1.0, 0.0])
    D.enable_tensor_checker(cfg)
    try:
        y = paddle.exp(x)  # fine
        with pytest.raises(RuntimeError, match=r"op=log"):
            paddle.log(x)
        np.testing.assert_allclose(y.numpy(), np.exp([1.0, 0.0]), rtol=1e-6)
    finally:
        D.disable_tensor_checker()
    assert state.amp_hook is None
    assert np.isinf(paddle.log(x).numpy()[1])  # unchecked again


def test_tensor_checker_names_op_under_auto_cast_and_in_layers():
    cfg = D.TensorCheckerConfig(enable=True, stack_height_limit=2)
    lin = paddle.nn.Linear(2, 2)
    lin.weight.set_value(np.full((2, 2), 1e4, np.float32))
    D.enable_tensor_checker(cfg)
    try:
        with paddle.amp.auto_cast():
            with pytest.raises(RuntimeError, match=r"op=matmul_v2.*dtype=fp16") as e:
                lin(paddle.full([1, 2], 100.0))
        assert "test_debugging.py" in str(e.value)  # the user's frame
    finally:
        D.disable_tensor_checker()


def test_tensor_checker_modes_and_lists(capsys):
    x = paddle.to_tensor([1.0, 0.0])
    cfg = D.TensorCheckerConfig(enable=True, debug_mode=D.DebugMode.CHECK_NAN_INF)
    D.enable_tensor_checker(cfg)
    try:
        out = 1.0 / x  # reported, not raised
    finally:
        D.disable_tensor_checker()
    assert np.isinf(out.numpy()[1])
    assert "[PRECISION] [ERROR]" in capsys.readouterr().err
    cfg = D.TensorCheckerConfig(enable=True, skipped_op_list=["log"])
    D.enable_tensor_checker(cfg)
    try:
        paddle.log(x)
    finally:
        D.disable_tensor_checker()
    cfg = D.TensorCheckerConfig(enable=True, checked_op_list=["exp"])
    D.enable_tensor_checker(cfg)
    try:
        paddle.log(x)
        with pytest.raises(RuntimeError, match="op=exp"):
            paddle.exp(paddle.to_tensor([1000.0]))
    finally:
        D.disable_tensor_checker()


def test_tensor_checker_debug_step(tmp_path):
    cfg = D.TensorCheckerConfig(enable=True, debug_step=[1, 2],
                                debug_mode=D.DebugMode.CHECK_NAN_INF, output_dir=str(tmp_path))
    x = paddle.to_tensor([0.0])
    for _ in range(3):
        D.enable_tensor_checker(cfg)
        paddle.log(x)
        D.disable_tensor_checker()
    logs = list(tmp_path.iterdir())
    assert len(logs) == 1 and logs[0].read_text().count("[PRECISION] [ERROR]") == 1


@pytest.mark.parametrize("kw", [{"debug_step": [2, 1]}, {"debug_step": 3},
                                {"stack_height_limit": -1}])
def test_tensor_checker_config_errors(kw):
    with pytest.raises(ValueError):
        D.TensorCheckerConfig(enable=True, **kw)
    with pytest.raises(TypeError):
        D.TensorCheckerConfig(enable=True, debug_mode="abort")
    with pytest.raises(TypeError):
        D.enable_tensor_checker({"enable": True})


def test_checker_config_seeds():
    D.TensorCheckerConfig(enable=True)
    a = paddle.rand([3]).numpy()
    D.TensorCheckerConfig(enable=True)
    np.testing.assert_array_equal(paddle.rand([3]).numpy(), a)


def test_operator_stats_table(capsys):
    x = paddle.rand([4, 4])
    with D.collect_operator_stats() as st:
        with paddle.amp.auto_cast():
            y = paddle.matmul(x, x)
            z = paddle.nn.functional.softmax(y)
            (z + x).sum()
        paddle.to_tensor([1, 2]) + 1
    counts = st.counts
    assert counts["matmul_v2"] == {"fp16": 1, "bf16": 0, "fp32": 0, "other": 0}
    assert counts["softmax"]["fp32"] == 1
    assert counts["cast"]["fp32"] == 2 and counts["cast"]["fp16"] == 1
    assert counts["elementwise_add"]["fp32"] == 1 and counts["elementwise_add"]["other"] == 1
    assert counts["reduce_sum"]["fp32"] == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("<") and "op list" in out[0]
    assert "Op Name" in out[1] and "FP16 Calls" in out[1] and "Other Calls" in out[1]
    assert all(len(line) == 122 for line in out)
    assert any(line.startswith("  matmul_v2") for line in out)
    assert "op count: 5" in out[-1]
    assert state.amp_hook is None


def test_operator_stats_enable_disable(capsys):
    D.enable_operator_stats_collection()
    paddle.exp(paddle.ones([2]).astype("bfloat16"))
    D.disable_operator_stats_collection()
    out = capsys.readouterr().out
    row = [line for line in out.splitlines() if line.startswith("  exp")][0]
    assert [c.strip() for c in row.split("|")] == ["exp", "0", "1", "0", "0"]
    D.disable_operator_stats_collection()  # no-op when not collecting
    assert state.amp_hook is None


def test_operator_stats_html():
    with D.collect_operator_stats() as st:
        paddle.matmul(paddle.ones([2, 2]), paddle.ones([2, 2]))
    html = st._repr_html_()
    assert "<table" in html and "matmul_v2" in html and "op count: 1" in html


def test_check_layer_numerics():
    class Net(paddle.nn.Layer):
        @D.check_layer_numerics
        def forward(self, x):
            return paddle.log(x)

    net = Net()
    net(paddle.to_tensor([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="op=Net, tensor=output_0"):
        net(paddle.to_tensor([0.0]))
