"""A loaded program runs each convolution + inference batch norm as ONE convolution with the norm
folded in when no gradient is wanted (as paddle_hl's layers do in eval mode), and as the two
operators otherwise."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.jit import _interpreter
from paddle_hl.static import InputSpec


def _saved(tmp_path, bias):
    paddle.seed(0)
    net = paddle.nn.Sequential(paddle.nn.Conv2D(3, 4, 3, padding=1, bias_attr=None if bias
                                                else False),
                               paddle.nn.BatchNorm2D(4), paddle.nn.ReLU(),
                               paddle.nn.Conv2D(4, 2, 1, groups=2), paddle.nn.BatchNorm2D(2))
    rng = np.random.default_rng(0)
    for bn in (net[1], net[4]):
        bn._mean.set_value(rng.normal(0, 0.5, bn._mean.shape).astype("float32"))
        bn._variance.set_value(rng.uniform(0.5, 2, bn._variance.shape).astype("float32"))
        bn.weight.set_value(rng.uniform(0.5, 2, bn.weight.shape).astype("float32"))
    net.eval()
    paddle.jit.save(net, str(tmp_path / "m"), [InputSpec([None, 3, 6, 6], "float32")])
    return net, paddle.jit.load(str(tmp_path / "m"))


@pytest.mark.parametrize("bias", [True, False])
def test_conv_bn_pairs_fold_without_grad_and_match(tmp_path, bias):
    net, loaded = _saved(tmp_path, bias)
    assert [op.type for op in loaded._ops].count("hl_conv_bn") == 2
    assert "batch_norm" not in [op.type for op in loaded._ops]
    x = paddle.randn([2, 3, 6, 6])
    with paddle.no_grad():
        got = loaded(x).numpy()
    np.testing.assert_allclose(got, net(x).numpy(), rtol=1e-5, atol=1e-5)
    # the folded filters are cached, and recomputed when a tensor changes in place
    scale = next(p for p in loaded.parameters() if p.name == net[4].weight.name)
    scale.set_value(scale.numpy() * 3)
    net[4].weight.set_value(net[4].weight.numpy() * 3)
    with paddle.no_grad():
        np.testing.assert_allclose(loaded(x).numpy(), net(x).numpy(), rtol=1e-5, atol=1e-5)


def test_with_grad_the_operators_run_in_turn_and_gradients_reach_the_norm(tmp_path):
    net, loaded = _saved(tmp_path, True)
    x = paddle.randn([2, 3, 6, 6])
    out = loaded(x)
    np.testing.assert_allclose(out.numpy(), net(x).numpy(), rtol=1e-5, atol=1e-5)
    out.sum().backward()
    scale = next(p for p in loaded.parameters() if p.name == net[1].weight.name)
    assert scale.grad is not None and np.abs(scale.grad.numpy()).sum() > 0


def test_a_file_naming_the_internal_operator_is_refused(tmp_path):
    from paddle_hl.jit import _proto

    _saved(tmp_path, True)
    desc = _proto.decode((tmp_path / "m.pdmodel").read_bytes(), "ProgramDesc", "m")
    for op in desc["blocks"][0]["ops"]:
        if op["type"] == "batch_norm":
            op["type"] = "hl_conv_bn"
    (tmp_path / "m.pdmodel").write_bytes(_proto.encode(desc))
    with pytest.raises(Exception, match="hl_conv_bn"):
        paddle.jit.load(str(tmp_path / "m"))
    assert "hl_conv_bn" in _interpreter.OPS


def test_intermediate_values_are_released_after_their_last_reader(tmp_path):
    """A run held every activation of the program until it ended (twice the layers' peak
    memory on ResNet-50); each is now released after the last operator reading it."""
    net, loaded = _saved(tmp_path, True)
    drops = _interpreter.last_uses(loaded.program(), loaded._ops)
    released = {n for names in drops for n in names}
    prog = loaded.program()
    assert not released & (set(prog.fetches) | set(prog.persistables))
    produced = {n for op in loaded._ops for names in op.outputs.values() for n in names}
    assert released >= produced - set(prog.fetches) - set(prog.persistables) - {"fetch"}
    seen = []
    orig = _interpreter._Ctx.__init__

    def spy(self, env):
        orig(self, env)
        seen.append(env)

    _interpreter._Ctx.__init__ = spy
    try:
        x = paddle.randn([2, 3, 6, 6])
        with paddle.no_grad():
            got = loaded(x).numpy()
    finally:
        _interpreter._Ctx.__init__ = orig
    np.testing.assert_allclose(got, net(x).numpy(), rtol=1e-5, atol=1e-5)
    left = set(seen[0]) - set(prog.persistables)
    assert left == set(prog.fetches), left
