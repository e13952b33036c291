"""paddle_hl.vision.models against Paddle 2.6's zoo: names and signatures, state_dict keys and
shapes, eval outputs with Paddle's weights copied in, training smoke tests, and the pretrained
download path served from a local HTTP server."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import http.server
import inspect
import io
import json
import pathlib
import threading

import numpy as np
import pytest
from paddle_hl.vision import models

import paddle_hl

_API = pathlib.Path(__file__).resolve().parents[3] / "shared" / "api" / "paddle-2.6-api.json"

# Input [C, H, W] per constructor: the smallest convenient size each architecture accepts.
_INPUT = {name: (3, 64, 64) for name in models.MODEL_REGISTRY}
_INPUT.update(alexnet=(3, 224, 224), googlenet=(3, 224, 224), inception_v3=(3, 75, 75),
              LeNet=(1, 28, 28))

# Built and compared on every run; the others (big or deep) are marked slow.
_FAST = {"LeNet", "resnet18", "resnet50", "mobilenet_v1", "mobilenet_v2", "mobilenet_v3_small",
         "mobilenet_v3_large", "densenet121", "squeezenet1_0", "squeezenet1_1",
         "shufflenet_v2_x0_25", "shufflenet_v2_swish", "googlenet", "inception_v3"}


def _case(name, **kwargs):
    marks = () if name in _FAST and not kwargs else (pytest.mark.slow,)
    ident = name + "".join(f"-{k}={v}" for k, v in kwargs.items())
    return pytest.param(name, kwargs, marks=marks, id=ident)


_ALL_CASES = [_case("LeNet")] + [_case(n) for n in models.MODEL_REGISTRY]
_ALL_CASES += [_case(n, batch_norm=True) for n in ("vgg11", "vgg13", "vgg16", "vgg19")]


def _api_entries():
    if not _API.exists():
        pytest.skip(f"{_API} not found (it lives in ../shared beside the checkout)")
    return json.loads(_API.read_text())["paddle_hl.vision.models"]


# --------------------------------------------------------------------------- helpers


def _randomize(pd, pd_model, seed=0):
    """Give the oracle's batch norms non-trivial statistics and affine terms (fresh ones are
    the identity in eval mode) and return the state as NumPy arrays."""
    rng = np.random.default_rng(seed)
    state = {k: v.numpy() for k, v in pd_model.state_dict().items()}
    bn = {k[: -len("_mean")] for k in state if k.endswith("_mean")}
    for k, a in state.items():
        prefix, leaf = k[: k.rfind(".") + 1], k[k.rfind(".") + 1:]
        if prefix not in bn:
            continue
        if leaf in ("weight", "_variance"):
            state[k] = rng.uniform(0.5, 1.5, a.shape).astype(a.dtype)
        else:
            state[k] = rng.normal(0.0, 0.1, a.shape).astype(a.dtype)
    pd_model.set_state_dict({k: pd.to_tensor(a) for k, a in state.items()})
    return state


def _flat(out):
    if isinstance(out, (list, tuple)):
        return [o for x in out for o in _flat(x)]
    return [out]


def _assert_close(got, ref, rtol=2e-4):
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol * float(np.abs(ref).max()) + 1e-6)


def _build_pair(pd, name, kwargs):
    hl_model = getattr(models, name)(**kwargs)
    pd_model = getattr(pd.vision.models, name)(**kwargs)
    return hl_model, pd_model


def _numel(model):
    return sum(int(np.prod(p.shape)) for p in model.parameters())


# --------------------------------------------------------------------------- names


def test_names_and_signatures_match_paddle():
    entries = _api_entries()
    assert sorted(models.__all__) == sorted(entries)
    assert set(models.MODEL_REGISTRY) == {k for k, v in entries.items()
                                          if v["kind"] == "function"}
    for name, entry in entries.items():
        obj = getattr(models, name)
        assert inspect.isclass(obj) == (entry["kind"] == "class"), name
        sig = inspect.signature(obj)
        plain = ", ".join(
            ("**" if p.kind is p.VAR_KEYWORD else "") + p.name
            + ("" if p.default is p.empty else f"={p.default!r}")
            for p in sig.parameters.values())
        assert f"({plain})" == entry["signature"].replace('"', "'"), name


def test_registry_builds_the_public_constructors():
    for name, fn in models.MODEL_REGISTRY.items():
        assert fn is getattr(models, name)
        assert fn.__doc__ and fn.__name__ == name


# --------------------------------------------------------------------------- parity


@pytest.mark.parity
@pytest.mark.parametrize("name, kwargs", _ALL_CASES)
def test_matches_paddle(pd, name, kwargs):
    """Same state_dict keys (in order), shapes and dtypes; same parameter count; same eval
    outputs once Paddle's weights are copied in."""
    hl_model, pd_model = _build_pair(pd, name, kwargs)
    hl_sd, pd_sd = hl_model.state_dict(), pd_model.state_dict()
    assert list(hl_sd) == list(pd_sd)
    for k in pd_sd:
        assert hl_sd[k].shape == list(pd_sd[k].shape), k
        assert str(hl_sd[k].dtype) == str(pd_sd[k].dtype), k
    assert _numel(hl_model) == _numel(pd_model)

    state = _randomize(pd, pd_model)
    missing, unexpected = hl_model.set_state_dict(state)
    assert not missing and not unexpected
    hl_model.eval()
    pd_model.eval()
    x = np.random.default_rng(1).standard_normal((1, *_INPUT[name])).astype("float32")
    got = _flat(hl_model(paddle_hl.to_tensor(x)))
    ref = _flat(pd_model(pd.to_tensor(x)))
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        assert g.shape == list(r.shape)
        _assert_close(g.numpy(), r.numpy())


# Head variants: without classifier and/or without pooling, and a custom class count.
_VARIANTS = [
    ("LeNet", {"num_classes": 0}, (1, 28, 28)),
    ("resnet18", {"num_classes": 10}, (3, 64, 64)),
    ("resnet18", {"num_classes": 0, "with_pool": False}, (3, 64, 64)),
    ("resnet18", {"num_classes": 0}, (3, 64, 64)),
    ("mobilenet_v1", {"scale": 0.25, "num_classes": 7}, (3, 64, 64)),
    ("mobilenet_v2", {"scale": 0.5, "with_pool": False, "num_classes": 0}, (3, 64, 64)),
    ("mobilenet_v2", {"scale": 1.4}, (3, 64, 64)),
    ("mobilenet_v3_small", {"scale": 0.5, "num_classes": 0}, (3, 64, 64)),
    ("mobilenet_v3_large", {"scale": 0.75, "num_classes": 5}, (3, 64, 64)),
    ("vgg11", {"num_classes": 0, "with_pool": False}, (3, 64, 64)),
    ("densenet121", {"num_classes": 0}, (3, 64, 64)),
    ("densenet121", {"bn_size": 2, "num_classes": 3}, (3, 64, 64)),
    ("squeezenet1_1", {"num_classes": 10, "with_pool": False}, (3, 64, 64)),
    ("shufflenet_v2_x0_5", {"num_classes": 0}, (3, 64, 64)),
    ("alexnet", {"num_classes": 0}, (3, 96, 96)),
    ("googlenet", {"num_classes": 0}, (3, 96, 96)),
    ("googlenet", {"num_classes": 0, "with_pool": False}, (3, 96, 96)),
    ("inception_v3", {"num_classes": 0, "with_pool": False}, (3, 75, 75)),
]
_SLOW_VARIANTS = {("googlenet", 0, False), ("inception_v3", 0, False), ("mobilenet_v2", 1000, True),
                  ("densenet121", 0, True)}


@pytest.mark.parity
@pytest.mark.parametrize("name, kwargs, chw", [
    pytest.param(n, k, c, id=f"{n}-{k}", marks=(pytest.mark.slow,) if (
        n, k.get("num_classes", 1000), k.get("with_pool", True)) in _SLOW_VARIANTS else ())
    for n, k, c in _VARIANTS])
def test_head_variants_match_paddle(pd, name, kwargs, chw):
    hl_model, pd_model = _build_pair(pd, name, kwargs)
    assert [(k, v.shape) for k, v in hl_model.state_dict().items()] == \
        [(k, list(v.shape)) for k, v in pd_model.state_dict().items()]
    hl_model.set_state_dict(_randomize(pd, pd_model))
    hl_model.eval()
    pd_model.eval()
    x = np.random.default_rng(2).standard_normal((2, *chw)).astype("float32")
    got, ref = _flat(hl_model(paddle_hl.to_tensor(x))), _flat(pd_model(pd.to_tensor(x)))
    for g, r in zip(got, ref, strict=True):
        assert g.shape == list(r.shape)
        _assert_close(g.numpy(), r.numpy())


@pytest.mark.parity
def test_resnet_class_with_blocks_matches_paddle(pd):
    from paddle_hl.vision.models.resnet import BasicBlock, BottleneckBlock

    # Resnext50_32x4d is ResNet(BottleneckBlock, 50, width=4, groups=32); its own
    # width/groups win over the caller's, as in Paddle.
    ours = models.ResNet(BottleneckBlock, 50, width=4, groups=32)
    factory = models.resnext50_32x4d(groups=2, width=64)
    assert factory.groups == 32 and factory.base_width == 4
    assert _numel(ours) == _numel(factory) == _numel(pd.vision.models.resnext50_32x4d())
    net = models.ResNet(BasicBlock, 34, num_classes=3)
    ref = pd.vision.models.ResNet(pd.vision.models.resnet.BasicBlock, 34, num_classes=3)
    assert list(net.state_dict()) == list(ref.state_dict())


# --------------------------------------------------------------------------- behaviour


def test_googlenet_returns_main_and_aux_logits():
    model = models.googlenet(num_classes=4)
    model.eval()
    with paddle_hl.no_grad():
        out = model(paddle_hl.rand([1, 3, 224, 224]))
    assert isinstance(out, list) and len(out) == 3
    assert [o.shape for o in out] == [[1, 4]] * 3


def test_factories_take_pretrained_and_kwargs():
    for name, fn in models.MODEL_REGISTRY.items():
        params = inspect.signature(fn).parameters
        assert list(params)[0] == "pretrained" and params["pretrained"].default is False
        assert list(params.values())[-1].kind is inspect.Parameter.VAR_KEYWORD, name


def test_resnet_without_head_returns_features():
    plain = models.resnet18(num_classes=0, with_pool=False)
    out = plain(paddle_hl.rand([1, 3, 64, 64]))
    assert out.shape == [1, 512, 2, 2]


@pytest.mark.parametrize("call, match", [
    (lambda: models.ResNet(models.resnet.BasicBlock, 20), "depth"),
    (lambda: models.DenseNet(layers=100), "supported layers"),
    (lambda: models.SqueezeNet("2.0"), "supported versions"),
    (lambda: models.ShuffleNetV2(scale=0.75), "scale"),
    (lambda: models.ShuffleNetV2(act="gelu"), "act"),
])
def test_bad_configuration_raises_clear_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("call, arch", [
    (lambda: models.vgg11(pretrained=True), "vgg11"),
    (lambda: models.vgg16(pretrained=True, batch_norm=True), "vgg16_bn"),
    (lambda: models.mobilenet_v2(pretrained=True, scale=0.5), "mobilenetv2_0.5"),
    (lambda: models.mobilenet_v3_small(pretrained=True, scale=0.75),
     "mobilenet_v3_small_x0.75"),
])
def test_pretrained_without_published_weights_raises(call, arch):
    with pytest.raises(ValueError, match=f"{arch} model does not have pretrained weights"):
        call()


def test_shufflenet_channel_shuffle_interleaves_groups():
    from paddle_hl.vision.models.shufflenetv2 import channel_shuffle

    x = paddle_hl.to_tensor(np.arange(6, dtype="float32").reshape(1, 6, 1, 1))
    np.testing.assert_array_equal(channel_shuffle(x, 2).numpy().ravel(), [0, 3, 1, 4, 2, 5])


def test_intermediate_layer_getter_returns_chosen_features():
    from paddle_hl.vision.models._utils import IntermediateLayerGetter

    net = models.resnet18(num_classes=5)
    getter = IntermediateLayerGetter(net, {"layer2": "feat2", "layer4": "feat4"})
    out = getter(paddle_hl.rand([1, 3, 64, 64]))
    assert list(out) == ["feat2", "feat4"]
    assert out["feat2"].shape == [1, 128, 8, 8] and out["feat4"].shape == [1, 512, 2, 2]
    with pytest.raises(ValueError, match="return_layers"):
        IntermediateLayerGetter(net, {"nope": "x"})


# --------------------------------------------------------------------------- training smoke

# One representative per family: (constructor, kwargs, input [C, H, W]).
_FAMILIES = [
    ("LeNet", {}, (1, 28, 28)),
    ("alexnet", {"num_classes": 10}, (3, 224, 224)),
    ("vgg11", {"batch_norm": True, "num_classes": 10}, (3, 32, 32)),
    ("resnet18", {"num_classes": 10}, (3, 32, 32)),
    ("mobilenet_v1", {"scale": 0.25, "num_classes": 10}, (3, 32, 32)),
    ("mobilenet_v2", {"scale": 0.25, "num_classes": 10}, (3, 32, 32)),
    ("mobilenet_v3_small", {"scale": 0.5, "num_classes": 10}, (3, 32, 32)),
    ("densenet121", {"num_classes": 10, "dropout": 0.1}, (3, 32, 32)),
    ("googlenet", {"num_classes": 10}, (3, 224, 224)),
    ("inception_v3", {"num_classes": 10}, (3, 75, 75)),
    ("squeezenet1_1", {"num_classes": 10}, (3, 64, 64)),
    ("shufflenet_v2_x0_25", {"num_classes": 10}, (3, 32, 32)),
]
_SLOW_FAMILIES = {"alexnet", "vgg11", "googlenet", "inception_v3", "densenet121"}


@pytest.mark.parametrize(
    "name, kwargs, chw",
    [pytest.param(*f, marks=(pytest.mark.slow,) if f[0] in _SLOW_FAMILIES else (), id=f[0])
     for f in _FAMILIES])
def test_family_trains_and_round_trips(tmp_path, name, kwargs, chw):
    """Forward in train mode, backward, one SGD step; then save/load the state_dict."""
    model = getattr(models, name)(**kwargs)
    model.train()
    x = paddle_hl.rand([2, *chw])
    label = paddle_hl.to_tensor(np.array([[1], [3]], dtype="int64"))
    outs = _flat(model(x))
    loss = sum(paddle_hl.nn.functional.cross_entropy(o, label) for o in outs)
    assert loss.shape == []
    loss.backward()
    trainable = [p for p in model.parameters() if not p.stop_gradient]
    assert trainable and all(p.grad is not None for p in trainable)
    before = [p.numpy().copy() for p in trainable]
    opt = paddle_hl.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
    opt.step()
    opt.clear_grad()
    assert any(not np.array_equal(b, p.numpy()) for b, p in zip(before, trainable))

    path = str(tmp_path / "model.pdparams")
    paddle_hl.save(model.state_dict(), path)
    fresh = getattr(models, name)(**kwargs)
    missing, unexpected = fresh.set_state_dict(paddle_hl.load(path))
    assert not missing and not unexpected
    for (k, a), b in zip(model.state_dict().items(), fresh.state_dict().values(), strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)
    # Train mode (batch statistics; eval statistics after one step are meaningless) with the
    # same dropout masks: the reloaded model computes the same outputs.
    outs = []
    for net in (model, fresh):
        paddle_hl.seed(5)
        with paddle_hl.no_grad():
            outs.append(_flat(net(x)))
    for a, b in zip(*outs, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parity
@pytest.mark.parametrize("name, kwargs, chw", [
    ("LeNet", {}, (1, 28, 28)),
    ("resnet18", {}, (3, 64, 64)),
    ("mobilenet_v2", {}, (3, 64, 64)),
    ("shufflenet_v2_x0_25", {}, (3, 64, 64)),
    ("squeezenet1_0", {}, (3, 64, 64)),
], ids=lambda v: v if isinstance(v, str) else "")
def test_summary_parameter_count_matches_paddle(pd, name, kwargs, chw):
    hl_model, pd_model = _build_pair(pd, name, kwargs)
    with contextlib.redirect_stdout(io.StringIO()):
        ref = pd.summary(pd_model, (1, *chw))
    assert _numel(hl_model) == ref["total_params"]
    summary = getattr(paddle_hl, "summary", None)
    if summary is None:
        pytest.skip("paddle_hl.summary is not available yet; parameter totals checked directly")
    with contextlib.redirect_stdout(io.StringIO()):
        got = summary(hl_model, (1, *chw))
    assert got["total_params"] == ref["total_params"]
    assert got["trainable_params"] == ref["trainable_params"]


# --------------------------------------------------------------------------- pretrained


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def weights_server(tmp_path, monkeypatch):
    """Serve tmp_path/srv on 127.0.0.1 and point the weight cache into tmp_path."""
    root = tmp_path / "srv"
    root.mkdir()
    monkeypatch.setenv("PADDLE_HL_HOME", str(tmp_path / "cache"))
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}", server
    server.shutdown()
    server.server_close()


def _publish(pd, root, base, pd_model, filename):
    state = _randomize(pd, pd_model)
    path = root / filename
    pd.save(pd_model.state_dict(), str(path))
    md5 = hashlib.md5(path.read_bytes()).hexdigest()
    return state, (f"{base}/{filename}", md5)


@pytest.mark.parity
@pytest.mark.parametrize("name, module, arch, kwargs, chw", [
    ("squeezenet1_1", "squeezenet", "squeezenet1_1", {}, (3, 64, 64)),
    ("mobilenet_v3_small", "mobilenetv3", "mobilenet_v3_small_x1.0", {}, (3, 64, 64)),
    ("resnet18", "resnet", "resnet18", {}, (3, 64, 64)),
], ids=["squeezenet1_1", "mobilenet_v3_small", "resnet18"])
def test_pretrained_downloads_and_loads_paddle_weights(pd, weights_server, monkeypatch, name,
                                                       module, arch, kwargs, chw):
    root, base, server = weights_server
    pd_model = getattr(pd.vision.models, name)(**kwargs)
    state, entry = _publish(pd, root, base, pd_model, f"{arch}.pdparams")
    table = getattr(models, module).model_urls
    monkeypatch.setitem(table, arch, entry)

    model = getattr(models, name)(pretrained=True, **kwargs)
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), state[k], err_msg=k)
    model.eval()
    pd_model.eval()
    x = np.random.default_rng(3).standard_normal((1, *chw)).astype("float32")
    _assert_close(model(paddle_hl.to_tensor(x)).numpy(), pd_model(pd.to_tensor(x)).numpy())

    # The second build reads the md5-checked cache: no server needed.
    server.shutdown()
    again = getattr(models, name)(pretrained=True, **kwargs)
    np.testing.assert_array_equal(list(again.state_dict().values())[0].numpy(),
                                  list(model.state_dict().values())[0].numpy())


@pytest.mark.parity
def test_pretrained_with_wrong_md5_fails(pd, weights_server, monkeypatch):
    root, base, _ = weights_server
    _, (url, _md5) = _publish(pd, root, base, pd.vision.models.squeezenet1_1(),
                              "sq.pdparams")
    monkeypatch.setitem(models.squeezenet.model_urls, "squeezenet1_1", (url, "0" * 32))
    with pytest.raises(Exception, match="(?i)md5"):
        models.squeezenet1_1(pretrained=True)
