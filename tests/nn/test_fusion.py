"""Declared fusion chains (nn/_fusion.py): a block names its conv -> batch norm (-> activation)
chains as data, its forward keeps Paddle's text, and one module runs the chains: inference
folding of the norm into the convolution, training batch norm + ReLU/ReLU6 in one op. Same
numbers as the layers called in turn (bit for bit where nothing is fused), never used where it
would differ, one switch, and ``paddle.nn.utils.fused`` lists the chains."""

import ast
import copy
import pathlib

import numpy as np
import pytest
from paddle_hl.vision.models import resnet18
from paddle_hl.vision.models._utils import ConvNormActivation
from paddle_hl.vision.models.resnet import BasicBlock

import paddle_hl as paddle
from paddle_hl import nn
from paddle_hl.backend import settings
from paddle_hl.nn import _fusion
from paddle_hl.nn.functional import norm as fnorm

ZOO = pathlib.Path(__file__).resolve().parents[2] / "vision" / "models"


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


def _folded(conv):
    return "_bn_fold" in conv.__dict__


class _ConvBnRelu(nn.Layer):
    """A block written as in Paddle, with its chain declared."""

    _fusions = (("conv", "bn", "act"),)

    def __init__(self, act=None):
        super().__init__()
        self.conv, self.bn = _pair()
        self.act = act or nn.ReLU()

    def forward(self, x):
        out = self.conv(x)
        out = self.bn(out)
        out = self.act(out)
        return out


def _spy_batch_norm(monkeypatch):
    """Record the ``act`` argument of every batch-norm op the layers run."""
    acts = []
    real = fnorm._batch_norm

    def spy(*args, **kwargs):
        acts.append(args[10] if len(args) > 10 else kwargs.get("act"))
        return real(*args, **kwargs)

    monkeypatch.setattr(fnorm, "_batch_norm", spy)
    return acts


# ---------------------------------------------------------------- folding (inference)

@pytest.mark.parametrize("groups,bias,fmt,k", [(1, True, "NCHW", 3), (1, False, "NCHW", 1),
                                               (8, False, "NCHW", 3), (1, True, "NHWC", 3)])
def test_folded_matches_unfused(groups, bias, fmt, k):
    conv, bn = _pair(groups, bias, fmt, k=k)
    seq = nn.Sequential(conv, bn)
    seq.eval()
    x = _x((2, 10, 10, 8) if fmt == "NHWC" else (2, 8, 10, 10))
    want = bn(conv(x)).numpy()  # called on their own: no block, no fusion
    assert not _folded(conv)
    with paddle.no_grad():
        got = seq(x).numpy()
    assert _folded(conv)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_refolded_when_weights_or_stats_change():
    conv, bn = _pair()
    seq = nn.Sequential(conv, bn)
    seq.eval()
    x = _x()
    with paddle.no_grad():
        seq(x)
        conv.weight.set_value(conv.weight.numpy() * 2)
        np.testing.assert_allclose(seq(x).numpy(), bn(conv(x)).numpy(), rtol=1e-5, atol=1e-5)
        _randomize(bn, 7)  # new running statistics
        np.testing.assert_allclose(seq(x).numpy(), bn(conv(x)).numpy(), rtol=1e-5, atol=1e-5)
        conv.weight.scale_(0.5)  # an inplace op on a parameter bumps its version too
        np.testing.assert_allclose(seq(x).numpy(), bn(conv(x)).numpy(), rtol=1e-5, atol=1e-5)
        bn._epsilon = 0.5
        np.testing.assert_allclose(seq(x).numpy(), bn(conv(x)).numpy(), rtol=1e-5, atol=1e-5)


def test_training_mode_is_the_layers_in_turn():
    conv, bn = _pair()
    seq = nn.Sequential(conv, bn)
    x = _x()
    y = seq(x)
    np.testing.assert_array_equal(y.numpy(), bn(conv(x)).numpy())
    assert not _folded(conv)
    y.sum().backward()
    assert conv.weight.grad is not None and bn.weight.grad is not None
    seq.eval()
    conv.train()  # only one of the two in eval mode: not folded
    with paddle.no_grad():
        np.testing.assert_array_equal(seq(x).numpy(), bn(conv(x)).numpy())
    assert not _folded(conv)


def test_not_folded_where_it_would_differ():
    conv, bn = _pair()
    seq = nn.Sequential(conv, bn)
    seq.eval()
    x = _x()
    seq(x)  # a gradient is wanted for the weights: the layers run as they are
    assert not _folded(conv)
    bn2 = nn.BatchNorm2D(8, use_global_stats=False)  # batch statistics even in eval mode
    seq2 = nn.Sequential(conv, bn2)
    seq2.eval()
    with paddle.no_grad():
        np.testing.assert_array_equal(seq2(x).numpy(), bn2(conv(x)).numpy())
        assert not _folded(conv)
        with paddle.amp.auto_cast():  # AMP decides each op's dtype: the layers run
            seq(x)
        assert not _folded(conv)
        seq64 = nn.Sequential(*_pair())
        seq64.eval()
        seq64[1].to(dtype="float64")  # mixed dtypes
        seq64(x)
        assert not _folded(seq64[0])


def test_hooks_on_any_member_see_paddles_values():
    """A hook on a member turns its chain's fusion off: it sees exactly the value it sees
    when the layers are called on their own, and the output is bit for bit that."""
    block = _ConvBnRelu()
    block.eval()
    x = _x()
    with paddle.no_grad():
        want_conv = block.conv(x)
        want_bn = block.bn(want_conv)
        want = block.act(want_bn).numpy()
        for member, want_in in ((block.conv, x), (block.bn, want_conv), (block.act, want_bn)):
            block.conv.__dict__.pop("_bn_fold", None)
            seen = []
            h = member.register_forward_post_hook(
                lambda layer, inputs, out: seen.append((inputs[0].numpy(), out.numpy())))
            got = block(x).numpy()
            h.remove()
            assert not _folded(block.conv)
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(seen[0][0], want_in.numpy())
        pre = block.bn.register_forward_pre_hook(lambda layer, inputs: None)
        block(x)
        assert not _folded(block.conv)
        pre.remove()
        block(x)  # no hook left: folded again
        assert _folded(block.conv)


def test_bn_act_in_training(monkeypatch):
    """Training: the batch norm and its ReLU/ReLU6 run as one op (F.norm's ``act``), with
    the same numbers as the two layers; a hook, AMP or another activation calls them in turn."""
    acts = _spy_batch_norm(monkeypatch)
    x = _x()
    for act, name in ((nn.ReLU(), "relu"), (nn.ReLU6(), "relu6")):
        block = _ConvBnRelu(act)
        acts.clear()
        got = block(x)
        assert acts == [name]
        ref = _ConvBnRelu(type(act)())
        acts.clear()
        want = ref.act(ref.bn(ref.conv(x)))
        assert acts == [None]
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-5, atol=2e-5)
        np.testing.assert_allclose(block.bn._mean.numpy(), ref.bn._mean.numpy(), rtol=1e-6)
    block = _ConvBnRelu(nn.Hardswish())
    acts.clear()
    block(x)
    assert acts == [None]
    block = _ConvBnRelu()
    seen = []
    block.bn.register_forward_post_hook(lambda layer, i, o: seen.append(o.numpy().min()))
    acts.clear()
    y = block(x)
    assert acts == [None] and seen[0] < 0 and y.numpy().min() == 0
    block = _ConvBnRelu()
    acts.clear()
    with paddle.amp.auto_cast():
        block(x)
    assert acts == [None]


def test_the_switch(monkeypatch):
    acts = _spy_batch_norm(monkeypatch)
    block = _ConvBnRelu()
    x = _x()
    monkeypatch.setitem(settings._values, settings.FUSE_CONV_BN_ENV, _fusion.enabled())
    _fusion.set_enabled(False)
    assert not _fusion.enabled()
    block(x)
    assert acts == [None]
    block.eval()
    with paddle.no_grad():
        got = block(x).numpy()
        assert not _folded(block.conv)
        np.testing.assert_array_equal(got, block.act(block.bn(block.conv(x))).numpy())
        _fusion.set_enabled(True)
        block(x)
        assert _folded(block.conv)


def test_the_switch_reads_the_environment_once():
    import subprocess
    import sys

    code = ("import os, paddle_hl as paddle\nfrom paddle_hl.nn import _fusion\n"
            "a = _fusion.enabled()\nos.environ['PADDLE_HL_FUSE_CONV_BN'] = '1'\n"
            "print(a, _fusion.enabled())")
    for env, want in (("0", "False False"), ("1", "True True")):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env={**__import__("os").environ, "PADDLE_HL_FUSE_CONV_BN": env},
                             check=True)
        assert out.stdout.strip() == want


# ---------------------------------------------------------------- the guard and the contract

def test_an_overridden_forward_is_never_fused():
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

    class Scaled(_ConvBnRelu):  # a subclass forward the declaration was not written for
        def forward(self, x):
            return self.act(self.bn(self.conv(x) * 2))

    block = Scaled()
    block.eval()
    with paddle.no_grad():
        got = block(x).numpy()
        np.testing.assert_array_equal(got, block.act(block.bn(block.conv(x) * 2)).numpy())
        assert not _folded(block.conv)
        assert paddle.nn.utils.fused(block) == []
        block.forward = lambda t: t  # an instance forward
        assert paddle.nn.utils.fused(block) == []


def test_a_forward_that_breaks_its_declaration_raises():
    class Broken(_ConvBnRelu):
        _fusions = (("conv", "bn"),)

        def forward(self, x):
            return self.bn(self.conv(x) + 1)

    block = Broken()
    block.eval()
    with paddle.no_grad(), pytest.raises(RuntimeError, match=r"Broken\._fusions.*'bn'"):
        block(_x())

    class Skips(_ConvBnRelu):
        _fusions = (("conv", "bn"),)

        def forward(self, x):
            return self.conv(x)

    block = Skips()
    block.eval()
    with paddle.no_grad(), pytest.raises(RuntimeError, match="returned"):
        block(_x())
    block.train()
    block(_x())  # nothing fuses in training: the forward is just run


def test_bad_declarations_name_the_block():
    class Typo(_ConvBnRelu):
        _fusions = (("conv", "bnn"),)

    with pytest.raises(ValueError, match=r"Typo\._fusions: no sublayer 'bnn'"):
        Typo()(_x())


def test_members_called_alone_and_norm_checks():
    block = _ConvBnRelu()
    block.eval()
    x = _x()
    with paddle.no_grad():
        block(x)
        assert _folded(block.conv)
        # outside its block's forward a member is just the layer
        np.testing.assert_array_equal(block.conv(x).numpy(),
                                      nn.functional.conv2d(x, block.conv.weight,
                                                           block.conv.bias, padding=1).numpy())
        seq = nn.Sequential(nn.Conv2D(8, 8, 3, padding=1), nn.BatchNorm1D(8))
        seq.eval()
        with pytest.raises(ValueError, match="BatchNorm1D"):  # the norm's own checks hold
            seq(x)


def test_replaced_children_are_replanned():
    conv, bn = _pair()
    seq = nn.Sequential(conv, bn)
    seq.eval()
    x = _x()
    with paddle.no_grad():
        seq(x)
        assert paddle.nn.utils.fused(seq) == [("0", "1")]
        seq[1] = nn.Identity()
        np.testing.assert_array_equal(seq(x).numpy(), conv(x).numpy())
        assert paddle.nn.utils.fused(seq) == []
        bn2 = nn.BatchNorm2D(8)
        _randomize(bn2, 4)
        seq[1] = bn2
        np.testing.assert_allclose(seq(x).numpy(), bn2(conv(x)).numpy(), rtol=1e-5, atol=1e-5)


def test_state_dict_copy_and_resnet():
    paddle.seed(0)
    m = resnet18(num_classes=10)
    rng = np.random.default_rng(3)
    for layer in m.sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            _randomize(layer, int(rng.integers(100)))
    keys = list(m.state_dict())
    m.eval()
    xi = _x((2, 3, 32, 32))
    with paddle.no_grad():
        fused = m(xi).numpy()
        assert list(m.state_dict()) == keys
        twin = copy.deepcopy(m)
        np.testing.assert_array_equal(twin(xi).numpy(), fused)
        before = _fusion.enabled()
        _fusion.set_enabled(False)
        try:
            plain = m(xi).numpy()
        finally:
            _fusion.set_enabled(before)
    np.testing.assert_allclose(fused, plain, rtol=1e-4, atol=1e-4)


def test_fused_lists_the_chains():
    paddle.seed(0)
    m = resnet18(num_classes=10)
    chains = paddle.nn.utils.fused(m)
    assert chains[0] == ("conv1", "bn1", "relu")
    assert ("layer1.0.conv1", "layer1.0.bn1", "layer1.0.relu") in chains
    assert ("layer1.0.conv2", "layer1.0.bn2") in chains
    assert ("layer2.0.downsample.0", "layer2.0.downsample.1") in chains
    assert len(chains) == 1 + 8 * 2 + 3
    cna = ConvNormActivation(3, 4)
    assert paddle.nn.utils.fused(cna) == [("0", "1", "2")]
    assert paddle.nn.utils.fused(ConvNormActivation(3, 4, norm_layer=None)) == []
    assert paddle.nn.utils.fused(nn.Sequential(nn.Linear(2, 2), nn.ReLU())) == []
    assert BasicBlock._fusions == (("conv1", "bn1", "relu"), ("conv2", "bn2"))
    # every declaring class got the block role when it was defined
    assert nn.Sequential._fusion is BasicBlock._fusion is _fusion.BLOCK is not None
    assert nn.Conv2D._fusion is None
    with pytest.raises(TypeError, match="fused: model must be an nn.Layer"):
        paddle.nn.utils.fused("resnet")


# ---------------------------------------------------------------- model code stays Paddle's

def test_zoo_forward_text_names_no_fusion_helper():
    """No zoo module imports the fusion module or the old helpers, or calls a function of
    nn/_fusion.py; the helpers are gone from the layer modules; Sequential calls its
    layers in order."""
    from paddle_hl.nn.layer import container, conv, norm

    helpers = {n for n, v in vars(_fusion).items()
               if callable(v) and getattr(v, "__module__", None) == _fusion.__name__}
    assert {"fused", "_fold", "_bn_act", "_fold_bn", "set_enabled"} <= helpers
    helpers |= {"conv_bn", "conv_bn_act", "norm_act", "_fused_bn_forward"}
    files = sorted(ZOO.glob("*.py"))
    assert len(files) > 10
    for path in files:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)
                assert name not in helpers, f"{path.name}:{node.lineno} calls {name}"
            if isinstance(node, ast.ImportFrom):
                assert "_fusion" not in (node.module or ""), path.name
                assert not {a.name for a in node.names} & helpers, path.name
    for mod in (conv, norm):
        assert not {"conv_bn", "conv_bn_act", "norm_act"} & set(vars(mod)), mod.__name__
    assert not hasattr(nn.Conv2D, "_fused_bn_forward")
    src = ast.parse(pathlib.Path(container.__file__).read_text())
    seq = next(n for n in src.body if isinstance(n, ast.ClassDef) and n.name == "Sequential")
    fwd = next(n for n in seq.body if isinstance(n, ast.FunctionDef) and n.name == "forward")
    assert len(fwd.body) == 2  # for layer in ...: input = layer(input); return input


def test_to_static_keeps_the_declaration():
    """``paddle.jit.to_static`` wraps the block's own bound forward: the chains still run;
    any other instance forward is not trusted."""
    block = paddle.jit.to_static(_ConvBnRelu())
    block.eval()
    x = _x()
    with paddle.no_grad():
        block(x)
    assert _folded(block.conv)
    assert paddle.nn.utils.fused(block) == [("conv", "bn", "act")]
    other = _ConvBnRelu()
    other.forward = paddle.jit.to_static(lambda t: other.act(other.bn(other.conv(t))))
    assert paddle.nn.utils.fused(other) == []
