"""Inference folding of a batch norm into the convolution before it (Conv2D._fused_bn_forward,
used by Sequential and the ResNet blocks): same numbers as the two layers up to rounding,
recomputed when weights or statistics change, and never used where it would differ."""

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl import nn
from paddle_hl.nn.layer import conv as conv_layer


def _randomize(bn, seed):
    rng = np.random.default_rng(seed)
    c = bn._num_features
    bn.weight.set_value(rng.uniform(0.5, 1.5, c).astype(np.float32))
    bn.bias.set_value(rng.normal(0, 0.3, c).astype(np.float32))
    bn._mean.set_value(rng.normal(0, 0.3, c).astype(np.float32))
    bn._variance.set_value(rng.uniform(0.5, 2.0, c).astype(np.float32))


def _pair(groups=1, bias=True, fmt="NCHW", cin=8, cout=8, k=3):
    paddle.seed(0)
    conv = nn.Conv2D(cin, cout, k, padding=k // 2, groups=groups, data_format=fmt,
                     bias_attr=None if bias else False)
    bn = nn.BatchNorm2D(cout, data_format=fmt)
    _randomize(bn, 1)
    return conv, bn


def _x(shape=(2, 8, 10, 10), seed=2):
    return paddle.to_tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


@pytest.mark.parametrize("groups,bias,fmt,k", [(1, True, "NCHW", 3), (1, False, "NCHW", 1),
                                               (8, False, "NCHW", 3), (1, True, "NHWC", 3)])
def test_folded_matches_unfused(groups, bias, fmt, k):
    conv, bn = _pair(groups, bias, fmt, k=k)
    seq = nn.Sequential(conv, bn)
    seq.eval()
    x = _x((2, 10, 10, 8) if fmt == "NHWC" else (2, 8, 10, 10))
    want = bn(conv(x)).numpy()
    with paddle.no_grad():
        assert conv._fused_bn_forward(x, bn) is not None
        got = seq(x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_refolded_when_weights_or_stats_change():
    conv, bn = _pair()
    seq = nn.Sequential(conv, bn)
    seq.eval()
    x = _x()
    with paddle.no_grad():
        seq(x)
        conv.weight.set_value(conv.weight.numpy() * 2)
        got = seq(x).numpy()
        np.testing.assert_allclose(got, bn(conv(x)).numpy(), rtol=1e-5, atol=1e-5)
        _randomize(bn, 7)
        got = seq(x).numpy()
        np.testing.assert_allclose(got, bn(conv(x)).numpy(), rtol=1e-5, atol=1e-5)
        # an inplace op on a parameter bumps its version too
        conv.weight.scale_(0.5)
        got = seq(x).numpy()
        np.testing.assert_allclose(got, bn(conv(x)).numpy(), rtol=1e-5, atol=1e-5)


def test_training_mode_untouched():
    conv, bn = _pair()
    seq = nn.Sequential(conv, bn)
    x = _x()
    assert conv._fused_bn_forward(x, bn) is None  # train mode: batch statistics
    y = seq(x)
    want = bn(conv(x))
    np.testing.assert_array_equal(y.numpy(), want.numpy())
    y.sum().backward()
    assert conv.weight.grad is not None and bn.weight.grad is not None
    seq.eval()
    conv.train()  # only one of the two in eval mode: not folded
    assert conv._fused_bn_forward(x, bn) is None


def test_not_folded_where_it_would_differ(monkeypatch):
    conv, bn = _pair()
    seq = nn.Sequential(conv, bn)
    seq.eval()
    x = _x()
    # a gradient is wanted for the weights: the layers run as they are
    assert conv._fused_bn_forward(x, bn) is None
    with paddle.no_grad():
        assert conv._fused_bn_forward(x, bn) is not None
        # forward hooks must see the intermediate output
        seen = []
        h = conv.register_forward_post_hook(lambda layer, i, o: seen.append(o.shape))
        assert conv._fused_bn_forward(x, bn) is None
        seq(x)
        assert seen == [[2, 8, 10, 10]]
        h.remove()
        # batch statistics even in eval mode
        bn2 = nn.BatchNorm2D(8, use_global_stats=False)
        bn2.eval()
        assert conv._fused_bn_forward(x, bn2) is None
        # not a batch norm
        assert conv._fused_bn_forward(x, nn.ReLU()) is None
        # switched off
        monkeypatch.setenv("PADDLE_HL_FUSE_CONV_BN", "0")
        assert conv._fused_bn_forward(x, bn) is None


def test_norm_checks_still_apply():
    conv = nn.Conv2D(8, 8, 3, padding=1)
    bn = nn.BatchNorm1D(8)  # a 1-D norm after a 2-D convolution: rejected as without fusion
    seq = nn.Sequential(conv, bn)
    seq.eval()
    with paddle.no_grad(), pytest.raises(ValueError, match="BatchNorm1D"):
        seq(_x())


def test_subclass_forward_is_respected():
    class Doubled(nn.Conv2D):
        def forward(self, x):
            return super().forward(x) * 2

    paddle.seed(0)
    conv = Doubled(8, 8, 3, padding=1)
    bn = nn.BatchNorm2D(8)
    _randomize(bn, 1)
    seq = nn.Sequential(conv, bn)
    seq.eval()
    x = _x()
    with paddle.no_grad():
        np.testing.assert_array_equal(seq(x).numpy(), bn(conv(x)).numpy())


def test_conv_bn_helper_and_resnet_eval():
    conv, bn = _pair()
    conv.eval()
    bn.eval()
    x = _x()
    with paddle.no_grad():
        np.testing.assert_allclose(conv_layer.conv_bn(conv, bn, x).numpy(),
                                   bn(conv(x)).numpy(), rtol=1e-5, atol=1e-5)
    from paddle_hl.vision.models import resnet18

    paddle.seed(0)
    m = resnet18(num_classes=10)
    rng = np.random.default_rng(3)
    for layer in m.sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            _randomize(layer, int(rng.integers(100)))
    m.eval()
    xi = _x((2, 3, 32, 32))
    with paddle.no_grad():
        fused = m(xi).numpy()
    import os

    os.environ["PADDLE_HL_FUSE_CONV_BN"] = "0"
    try:
        with paddle.no_grad():
            plain = m(xi).numpy()
    finally:
        del os.environ["PADDLE_HL_FUSE_CONV_BN"]
    np.testing.assert_allclose(fused, plain, rtol=1e-4, atol=1e-4)
