"""The names Paddle code touches on first use: version, missing attributes, Tensor attributes,
sublayer/parameter naming, initializers with ``block``, static/static.amp in dygraph meaning,
and the module paths tutorials import."""

from __future__ import annotations

import importlib
import json
import os

import numpy as np
import pytest

import paddle_hl as paddle

API = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "api",
                   "paddle-2.6-api.json")


# ----------------------------------------------------------------------------- version
def test_version_takes_paddle_26_path(capsys):
    assert paddle.__version__ == "2.6.2"
    v = paddle.version
    assert (v.full_version, v.major, v.minor, v.patch, v.rc) == ("2.6.2", "2", "6", "2", "0")
    assert tuple(int(p) for p in paddle.__version__.split(".")[:2]) >= (2, 6)
    assert paddle.__hl_version__ == v.hl_version == "0.1.0"
    v.show()
    out = capsys.readouterr().out
    assert "full_version: 2.6.2" in out and "paddle_hl: 0.1.0" in out
    assert v.cudnn() is False and v.mkl() in ("ON", "OFF")


@pytest.mark.parity
def test_version_fields_match_paddle(pd):
    for name in ("full_version", "major", "minor", "patch", "rc", "istaged"):
        assert getattr(paddle.version, name) == getattr(pd.version, name), name
    assert paddle.__version__ == pd.__version__


# ----------------------------------------------------------------------------- missing names
def test_missing_names_raise_attribute_error(monkeypatch):
    assert not hasattr(paddle, "no_such_name")
    assert getattr(paddle, "no_such_name", 7) == 7
    with pytest.raises(AttributeError, match="no_such_name"):
        paddle.no_such_name  # noqa: B018
    for name in ("incubate", "jit", "onnx", "static", "version"):
        assert importlib.import_module(f"paddle_hl.{name}") is getattr(paddle, name)


def test_errors_inside_a_present_subpackage_are_not_hidden(monkeypatch, tmp_path):
    pkg = tmp_path / "broken_sub"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("import a_module_that_does_not_exist_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(paddle, "__path__", list(paddle.__path__) + [str(tmp_path)])
    monkeypatch.setattr(paddle, "_LAZY", paddle._LAZY | {"broken_sub"})
    with pytest.raises(ModuleNotFoundError, match="a_module_that_does_not_exist_xyz"):
        paddle.broken_sub  # noqa: B018


# ----------------------------------------------------------------------------- Tensor
SPARSE_ONLY = {"to_sparse_coo", "to_sparse_csr", "indices", "values", "crows", "cols",
               "is_sparse", "is_sparse_coo", "is_sparse_csr", "coalesce", "nnz"}


def test_every_target_tensor_name_exists():
    if not os.path.exists(API):
        pytest.skip("the API listing is not beside the checkout")
    with open(API) as f:
        names = json.load(f)["paddle_hl.Tensor"]
    missing = sorted(n for n in names if n not in SPARSE_ONLY and not hasattr(paddle.Tensor, n))
    assert missing == []


@pytest.mark.parity
def test_tensor_dygraph_attributes_match_paddle(pd):
    a = np.arange(24, dtype="float32").reshape(2, 3, 4)
    for mod in (pd, paddle):
        t = mod.to_tensor(a)
        assert t.layout == "NCHW"
        assert t.dist_attr is None and t.placements is None
        assert t.process_mesh is None and t.num_shard is None
    ours, ref = paddle.to_tensor(a), pd.to_tensor(a)
    assert ours.strides == ref.strides == [12, 4, 1]
    assert ours.transpose([2, 0, 1]).strides == ref.transpose([2, 0, 1]).strides
    assert ours.offset == ref.offset == 0
    assert paddle.to_tensor(a[0, 0])[1:].offset == pd.to_tensor(a[0, 0])[1:].offset == 4
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    y = x * 3
    assert x.grad_fn is None and y.grad_fn is not None
    assert x.grad_ is None
    y.sum().backward()
    np.testing.assert_allclose(x.grad_.numpy(), [3.0, 3.0])
    assert x.block.idx == 0 and x.block is paddle.static.default_main_program().global_block()


# ----------------------------------------------------------------------------- layers
@pytest.mark.parity
def test_add_sublayer_and_add_parameter_names_match_paddle(pd):
    keys = {}
    for mod in (pd, paddle):
        layer = mod.nn.Layer()
        layer.add_sublayer("_blocks.0.", mod.nn.Linear(2, 2))
        layer.add_sublayer("a b", mod.nn.Linear(2, 1))
        layer.add_parameter("w", mod.create_parameter([2], "float32"))
        keys[mod] = list(layer.state_dict())
        for bad in ("w.x", ""):
            with pytest.raises(KeyError):
                layer.add_parameter(bad, mod.create_parameter([2], "float32"))
    assert keys[paddle] == keys[pd]
    with pytest.raises(TypeError, match="str"):
        paddle.nn.Layer().add_sublayer(3, paddle.nn.Linear(2, 2))


def test_dotted_sublayer_roundtrip():
    layer = paddle.nn.Layer()
    block = layer.add_sublayer("_blocks.0.", paddle.nn.Linear(2, 2))
    sd = {k: v.numpy() + 1 for k, v in layer.state_dict().items()}
    layer.set_state_dict(sd)
    np.testing.assert_allclose(block.weight.numpy(), sd["_blocks.0..weight"])
    assert [n for n, _ in layer.named_sublayers()] == ["_blocks.0."]


INITS = [("Constant", {"value": 0.5}), ("Normal", {}), ("TruncatedNormal", {}),
         ("Uniform", {}), ("XavierNormal", {}), ("XavierUniform", {}), ("KaimingNormal", {}),
         ("KaimingUniform", {}), ("Orthogonal", {}), ("Assign", {"value": np.ones([4, 4])})]


@pytest.mark.parametrize("name,kw", INITS)
def test_initializers_accept_param_block(name, kw):
    p = paddle.create_parameter([4, 4], "float32")
    init = getattr(paddle.nn.initializer, name)(**kw)
    init(p, p.block)
    init(p, None)
    assert p.shape == [4, 4] and np.isfinite(p.numpy()).all()
    if name == "Constant":
        np.testing.assert_array_equal(p.numpy(), np.full([4, 4], 0.5, "float32"))


# ----------------------------------------------------------------------------- static
def test_static_names_in_dygraph():
    from paddle_hl.static import InputSpec

    assert InputSpec([None, 3]).shape == (-1, 3)
    main = paddle.static.Program()
    with paddle.static.program_guard(main, paddle.static.Program()):
        assert paddle.static.default_main_program() is main
    assert paddle.static.default_main_program() is not main
    assert len(paddle.static.cpu_places(2)) == 2
    with paddle.static.name_scope("block"), paddle.static.device_guard("cpu"):
        pass
    with pytest.raises(TypeError, match="Program"):
        with paddle.static.program_guard("main"):
            pass
    # dygraph tensors and parameters are static Variables / Parameters, as in Paddle
    assert isinstance(paddle.to_tensor([1.0]), paddle.static.Variable)
    p = paddle.create_parameter([1], "float32")
    assert isinstance(p, paddle.static.Parameter) and isinstance(p, paddle.static.Variable)
    with pytest.raises(AssertionError, match="InputSpec"):
        paddle.static.data("x", [None, 3], "float32")


def test_static_amp_in_dygraph(monkeypatch):
    from paddle_hl.amp import _hook

    # GradScaler's warning depends on the dtype of the last auto_cast entered in the process
    # (as in Paddle): start from a process that entered none
    monkeypatch.setattr(_hook, "last_dtype", ["float32"])
    amp = paddle.static.amp
    net = paddle.nn.Linear(3, 2)
    x = paddle.rand([4, 3])
    with amp.fp16_guard():
        y = net(x)
    assert y.dtype == paddle.float32  # a no-op scope eagerly, as in Paddle
    with amp.bf16.bf16_guard():
        assert net(x).dtype == paddle.float32
    ref = paddle.nn.Linear(3, 2)
    ref.set_state_dict(net.state_dict())
    opt = amp.decorate(paddle.optimizer.SGD(0.1, parameters=net.parameters()))
    plain = paddle.optimizer.SGD(0.1, parameters=ref.parameters())
    with pytest.warns(UserWarning):
        opt.minimize((net(x) ** 2).mean())
    (ref(x) ** 2).mean().backward()
    plain.step()
    np.testing.assert_allclose(net.weight.numpy(), ref.weight.numpy(), rtol=1e-6)
    assert float(opt.get_loss_scaling()) == 2.0 ** 15
    assert opt.get_lr() == 0.1  # other attributes come from the wrapped optimizer
    with pytest.raises(TypeError):
        amp.decorate("sgd")
    bf = amp.bf16.decorate_bf16(paddle.optimizer.SGD(parameters=net.parameters()))
    assert bf._amp_dtype == "bfloat16"


@pytest.mark.parity
def test_custom_op_lists_match_paddle(pd):
    ours = paddle.static.amp.CustomOpLists(custom_white_list=["softmax"],
                                           custom_black_list=["matmul_v2"])
    ref = pd.static.amp.CustomOpLists(custom_white_list=["softmax"],
                                      custom_black_list=["matmul_v2"])
    for lists in (ours, ref):
        assert "softmax" in lists.white_list and "softmax" not in lists.black_list
        assert "matmul_v2" in lists.black_list and "matmul_v2" not in lists.white_list
        assert "conv2d" in lists.white_list and "exp" in lists.black_list
    with pytest.raises(ValueError):
        pd.static.amp.CustomOpLists(custom_white_list=["exp"], custom_black_list=["exp"])
    with pytest.raises(ValueError, match="both"):
        paddle.static.amp.CustomOpLists(custom_white_list=["exp"], custom_black_list=["exp"])


# ----------------------------------------------------------------------------- module paths
@pytest.mark.parametrize("path,name", [
    ("paddle_hl.nn.loss", "CrossEntropyLoss"),
    ("paddle_hl.nn.layer", "Layer"),
    ("paddle_hl.nn.layer.conv", "Conv2D"),
    ("paddle_hl.nn.layer.norm", "BatchNorm2D"),
    ("paddle_hl.nn.layer.loss", "MSELoss"),
    ("paddle_hl.nn.layer.activation", "ReLU"),
    ("paddle_hl.nn.layer.common", "Linear"),
    ("paddle_hl.nn.layer.pooling", "MaxPool2D"),
    ("paddle_hl.nn.layer.rnn", "LSTM"),
    ("paddle_hl.nn.layer.transformer", "TransformerEncoderLayer"),
    ("paddle_hl.nn.layer.container", "Sequential"),
    ("paddle_hl.nn.layer.layers", "Layer"),
    ("paddle_hl.nn.functional.loss", "cross_entropy"),
    ("paddle_hl.nn.initializer.xavier", "XavierUniform"),
    ("paddle_hl.nn.initializer.kaiming", "KaimingNormal"),
    ("paddle_hl.nn.initializer.constant", "Constant"),
    ("paddle_hl.nn.initializer.normal", "TruncatedNormal"),
    ("paddle_hl.nn.initializer.uniform", "Uniform"),
    ("paddle_hl.nn.initializer.assign", "Assign"),
    ("paddle_hl.nn.initializer.orthogonal", "Orthogonal"),
    ("paddle_hl.nn.initializer.dirac", "Dirac"),
    ("paddle_hl.nn.initializer.initializer", "Initializer"),
    ("paddle_hl.hapi.callbacks", "EarlyStopping"),
    ("paddle_hl.static.amp", "fp16_guard"),
    ("paddle_hl.static.amp.bf16", "bf16_guard"),
    ("paddle_hl.incubate.nn.functional", "fused_rms_norm"),
])
def test_module_paths(path, name):
    mod = importlib.import_module(path)
    assert hasattr(mod, name)
    top = path.replace("paddle_hl.", "", 1).split(".")
    obj = paddle
    for part in top:
        obj = getattr(obj, part)
    assert obj is mod or getattr(obj, name) is getattr(mod, name)


def test_nn_loss_is_the_loss_layers():
    assert paddle.nn.loss.CrossEntropyLoss is paddle.nn.CrossEntropyLoss
    assert "MSELoss" in paddle.nn.loss.__all__
