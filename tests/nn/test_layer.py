"""The Layer base class, containers and ParamAttr (paddle_hl/nn/layer/layers.py,
nn/layer/container.py, nn/param_attr.py)."""

import copy
import inspect
import warnings

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl import nn


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 2)
        self.b = nn.Sequential(nn.Linear(2, 2), self.a)
        self.register_buffer("buf", paddle.ones([1]))
        self.register_buffer("tmp", paddle.ones([1]), persistable=False)

    def forward(self, x):
        return self.b(self.a(x))


class Small(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.drop = nn.Dropout(0.0)
        self.fc2 = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc2(self.drop(self.fc1(x)))


def _make_pd_net(pd):
    class PNet(pd.nn.Layer):
        def __init__(self):
            super().__init__()
            self.a = pd.nn.Linear(2, 2)
            self.b = pd.nn.Sequential(pd.nn.Linear(2, 2), self.a)
            self.register_buffer("buf", pd.ones([1]))
            self.register_buffer("tmp", pd.ones([1]), persistable=False)

        def forward(self, x):
            return self.b(self.a(x))

    return PNet()


# ------------------------------------------------------------------------- registration
def test_registration_and_traversal():
    m = Net()
    assert [n for n, _ in m.named_sublayers()] == ["a", "b", "b.0"]
    assert [n for n, _ in m.named_parameters()] == ["a.weight", "a.bias", "b.0.weight",
                                                    "b.0.bias"]
    assert len(m.parameters()) == 4
    assert [n for n, _ in m.named_buffers()] == ["buf", "tmp"]
    # shared layers appear under both names in state_dict, as in Paddle
    assert list(m.state_dict()) == ["buf", "a.weight", "a.bias", "b.0.weight", "b.0.bias",
                                    "b.1.weight", "b.1.bias"]
    assert [n for n, _ in m.named_children()] == ["a", "b"]
    assert len(list(m.children())) == 2
    assert m.parameters(include_sublayers=False) == []
    assert m.full_name().startswith("net_")
    assert "a" in dir(m) and "buf" in dir(m)


@pytest.mark.parity
def test_structure_parity(pd):
    ours, theirs = Net(), _make_pd_net(pd)
    assert [n for n, _ in ours.named_sublayers()] == [n for n, _ in theirs.named_sublayers()]
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in
                                                       theirs.named_parameters()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert repr(ours).replace("Net(", "") == repr(theirs).replace("PNet(", "")
    sd = {k: v.numpy() for k, v in theirs.state_dict().items()}
    ours.set_state_dict(sd)
    x = np.random.default_rng(0).standard_normal((4, 2)).astype("float32")
    np.testing.assert_allclose(ours(paddle.to_tensor(x)).numpy(),
                               theirs(pd.to_tensor(x)).numpy(), rtol=1e-5,
                               atol=1e-6)


def test_sublayers_include_self():
    m = Net()
    subs = m.sublayers()
    assert m not in subs and len(subs) == 3
    with_self = m.sublayers(include_self=True)
    assert with_self[0] is m and with_self[1:] == subs
    assert "include_sublayers" not in inspect.signature(m.named_sublayers).parameters
    named = list(m.named_sublayers(prefix="root", include_self=True))
    assert named[0] == ("root", m) and named[1][0] == "root.a"


def test_attribute_semantics():
    m = nn.Layer()
    m.fc = nn.Linear(2, 2)
    m.w = paddle.create_parameter([2], "float32")
    m.t = paddle.ones([3])  # a Tensor attribute becomes a non-persistable buffer (Paddle)
    assert [n for n, _ in m.named_buffers()] == ["t"]
    assert list(m.state_dict()) == ["w", "fc.weight", "fc.bias"]
    with pytest.raises(TypeError, match="buffer 't'"):
        m.t = 3
    m.t = None
    assert m.t is None
    with pytest.raises(TypeError, match="parameter 'w'"):
        m.w = paddle.ones([2])
    m.w = None
    assert m.parameters() == list(m.fc.parameters())
    with pytest.raises(TypeError, match="sublayer 'fc'"):
        m.fc = 3
    del m.fc
    with pytest.raises(AttributeError, match="fc"):
        m.fc  # noqa: B018
    m.plain = 5
    assert m.plain == 5 and "plain" not in m._buffers
    with pytest.raises(ValueError, match="super"):
        class Bad(nn.Layer):
            def __init__(self):
                self.fc = nn.Linear(1, 1)
        Bad()


def test_add_and_register_errors():
    m = nn.Layer()
    with pytest.raises(TypeError, match="add_sublayer"):
        m.add_sublayer("x", 3)
    with pytest.raises(KeyError, match="add_parameter"):
        m.add_parameter("a.b", paddle.create_parameter([1], "float32"))
    with pytest.raises(TypeError, match="register_buffer"):
        m.register_buffer("b", np.ones(2))
    m.add_sublayer("s", nn.Linear(1, 1))
    with pytest.raises(KeyError, match="register_buffer"):
        m.register_buffer("s", paddle.ones([1]))
    with pytest.raises(ValueError, match="backward"):
        m.backward()


# ---------------------------------------------------------------------------- state dicts
def test_state_dict_round_trip_and_errors(tmp_path):
    a, b = Small(), Small()
    missing, unexpected = b.set_state_dict(a.state_dict())
    assert missing == [] and unexpected == []
    for va, vb in zip(a.state_dict().values(), b.state_dict().values()):
        np.testing.assert_array_equal(va.numpy(), vb.numpy())
    path = str(tmp_path / "small.pdparams")
    paddle.save(a.state_dict(), path)
    c = Small()
    c.set_dict(paddle.load(path))
    np.testing.assert_array_equal(c.fc1.weight.numpy(), a.fc1.weight.numpy())
    sd = {k: v.numpy() for k, v in a.state_dict().items()}
    sd["extra"] = np.ones(1)
    del sd["fc2.bias"]
    with pytest.warns(UserWarning, match="fc2.bias"):
        missing, unexpected = c.set_state_dict(sd)
    assert missing == ["fc2.bias"] and unexpected == ["extra"]
    before = c.fc1.weight.numpy().copy()
    sd = {k: v.numpy() for k, v in a.state_dict().items()}
    sd["fc1.weight"] = np.ones([5, 5], "float32")
    with pytest.warns(UserWarning, match=r"fc1.weight receives a shape \[5, 5\]"):
        missing, unexpected = c.set_state_dict(sd)
    assert missing == ["fc1.weight"] and unexpected == ["fc1.weight"]
    np.testing.assert_array_equal(c.fc1.weight.numpy(), before)
    # by parameter name
    d = Small()
    named = {p.name: p.numpy() for p in a.parameters()}
    d.fc1.weight.name = a.fc1.weight.name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d.set_state_dict(named, use_structured_name=False)
    np.testing.assert_array_equal(d.fc1.weight.numpy(), a.fc1.weight.numpy())


@pytest.mark.parity
def test_set_state_dict_mismatch_parity(pd):
    sd = {"weight": np.ones([3, 3], "float32"), "extra": np.ones(1, "float32")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = nn.Linear(2, 3).set_state_dict(sd)
        theirs = pd.nn.Linear(2, 3).set_state_dict(sd)
    assert (list(ours[0]), list(ours[1])) == (list(theirs[0]), list(theirs[1]))


def test_state_dict_hooks_and_buffers():
    # Set_state_dict does not fire state_dict hooks
    m = Net()
    calls = []
    h = m.register_state_dict_hook(lambda sd: calls.append(len(sd)))
    sd = m.state_dict()
    assert calls == [len(sd)]
    m.set_state_dict(sd)
    assert calls == [len(sd)]
    m.state_dict(use_hook=False)
    assert len(calls) == 1
    h.remove()
    m.state_dict()
    assert len(calls) == 1
    assert "tmp" not in sd and "buf" in sd
    sd2 = m.state_dict(structured_name_prefix="net.")
    assert list(sd2)[0] == "net.buf"
    assert list(m.state_dict(include_sublayers=False)) == ["buf"]


# -------------------------------------------------------------------------- modes / hooks
def test_train_eval_chaining_and_independence():
    m1, m2 = Small(), Small()
    assert m1.eval() is m1 and m1.train() is m1
    m1.eval()
    assert not m1.training and not m1.fc1.training and not m1.drop.training
    assert m2.training and m2.drop.training
    m1.train()
    assert m1.drop.training


def test_eval_still_records_graph():
    m = Small().eval()
    x = paddle.ones([2, 3])
    out = m(x)
    assert not out.stop_gradient
    out.sum().backward()
    assert m.fc1.weight.grad is not None
    with paddle.no_grad():
        out = m(x)
    assert out.stop_gradient


def test_forward_hooks():
    m = nn.Linear(2, 2)
    seen = []
    pre = m.register_forward_pre_hook(lambda layer, inp: (inp[0] * 0,))
    post = m.register_forward_post_hook(lambda layer, inp, out: seen.append(out.shape))
    out = m(paddle.ones([3, 2]))
    np.testing.assert_allclose(out.numpy(), np.broadcast_to(m.bias.numpy(), (3, 2)))
    assert seen == [[3, 2]]
    pre.remove()
    post.remove()
    out = m(paddle.ones([3, 2]))
    assert seen == [[3, 2]]
    assert not np.allclose(out.numpy(), np.broadcast_to(m.bias.numpy(), (3, 2)))
    h = m.register_forward_post_hook(lambda layer, inp, out: out * 2)
    np.testing.assert_allclose(m(paddle.ones([1, 2])).numpy(), out.numpy()[:1] * 2, rtol=1e-6)
    h.remove()
    h.remove()  # removing twice is harmless


def test_apply_and_clear_gradients():
    m = Small()
    visited = []
    assert m.apply(lambda layer: visited.append(type(layer).__name__)) is m
    assert visited == ["Linear", "Dropout", "Linear", "Small"]

    def init(layer):
        if isinstance(layer, nn.Linear):
            nn.initializer.Constant(0.5)(layer.weight)

    m.apply(init)
    np.testing.assert_array_equal(m.fc2.weight.numpy(), np.full([4, 2], 0.5))
    m(paddle.ones([1, 3])).sum().backward()
    m.clear_gradients()
    np.testing.assert_array_equal(m.fc1.weight.grad.numpy(), np.zeros([3, 4]))


# ---------------------------------------------------------------------------- conversions
def test_to_dtype_and_float16():
    # To(...) converts in place and returns self
    m = Small()
    ids = [id(p) for p in m.parameters()]
    assert m.to(dtype="float64") is m
    assert all(p.dtype == paddle.float64 for p in m.parameters())
    assert [id(p) for p in m.parameters()] == ids
    assert m.to(device="cpu", dtype="float32") is m
    assert m.fc1.weight.dtype == paddle.float32
    assert m.float16() is m and m.fc1.weight.dtype == paddle.float16
    assert m.float() is m and m.fc1.weight.dtype == paddle.float32
    assert m.astype("float64") is m and m.fc2.bias.dtype == paddle.float64
    m.float16(excluded_layers=[nn.Dropout])
    assert m.fc2.weight.dtype == paddle.float16
    m.float()
    m.bfloat16(excluded_layers=[nn.Linear])
    assert m.fc1.weight.dtype == paddle.float32
    nb = nn.Linear(2, 2, bias_attr=False)
    nb.to(dtype="float64")  # None parameters are skipped
    assert nb.weight.dtype == paddle.float64
    net = Net()
    net.to(dtype="float64")
    assert net.buf.dtype == paddle.float64


def test_to_device(device):
    m = Small()
    m.to(device=device)
    assert m.fc1.weight.place.is_gpu_place() == (device == "gpu")
    out = m(paddle.ones([2, 3]))
    assert out.shape == [2, 2]


def test_deepcopy_and_print():
    m = Net()
    m2 = copy.deepcopy(m)
    assert m2.a is not m.a and m2.b[1] is m2.a  # sharing is preserved
    np.testing.assert_array_equal(m2.a.weight.numpy(), m.a.weight.numpy())
    m2.a.weight.set_value(np.zeros([2, 2], "float32"))
    assert not np.array_equal(m.a.weight.numpy(), m2.a.weight.numpy())
    text = repr(Small())
    assert text.splitlines()[0] == "Small("
    assert "  (fc1): Linear(in_features=3, out_features=4, dtype=float32)" in text
    nested = repr(nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.Identity(), nn.Dropout())))
    assert nested == ("Sequential(\n  (0): Linear(in_features=2, out_features=3, "
                      "dtype=float32)\n  (1): Sequential(\n    (0): Identity()\n    (1): "
                      "Dropout(p=0.5, axis=None, mode=upscale_in_train)\n  )\n)")
    assert nn.Identity is paddle.nn.Identity


# ------------------------------------------------------------------- parameters / ParamAttr
def test_create_parameter_and_param_attr():
    layer = nn.Layer()
    w = layer.create_parameter([2, 3])
    assert w.name.startswith(layer.full_name() + ".w_")
    assert w.dtype == paddle.float32 and not w.stop_gradient and w.persistable
    assert layer.create_parameter([2], attr=False) is None
    reg = paddle.regularizer.L2Decay(0.1)
    attr = paddle.ParamAttr(name="my_w", learning_rate=0.5, regularizer=reg, trainable=False,
                            need_clip=False)
    p = layer.create_parameter([2], attr=attr)
    assert p.name == "my_w" and p.stop_gradient and not p.trainable
    assert p.optimize_attr["learning_rate"] == 0.5 and p.regularizer is reg
    assert p.need_clip is False
    p = layer.create_parameter([2], attr="named_w")
    assert p.name == "named_w"
    p = layer.create_parameter([2], attr=nn.initializer.Constant(3.0))
    np.testing.assert_array_equal(p.numpy(), [3.0, 3.0])
    with pytest.raises(TypeError, match="ParamAttr"):
        paddle.ParamAttr(trainable="yes")
    with pytest.raises(TypeError, match="parameter attribute"):
        layer.create_parameter([2], attr=3)
    with pytest.raises(ValueError, match="negative"):
        layer.create_parameter([-1, 2])


def test_paddle_create_parameter_names():
    p = paddle.create_parameter([2], "float32", name="q2")
    assert p.name == "q2"
    p = paddle.create_parameter([2], "float32", name="q",
                                attr=paddle.ParamAttr(learning_rate=0.5))
    assert p.name.startswith("q.w_")
    p = paddle.create_parameter([2], "float32", attr=paddle.ParamAttr(name="abc"))
    assert p.name == "abc"
    b = paddle.create_parameter([2], "float32", is_bias=True)
    assert b.name.startswith("create_parameter_") and b.name.endswith(".b_0")
    np.testing.assert_array_equal(b.numpy(), [0.0, 0.0])


def test_trainable_false_not_updated():
    fc = nn.Linear(2, 2, weight_attr=paddle.ParamAttr(trainable=False))
    before = fc.weight.numpy().copy()
    opt = paddle.optimizer.SGD(0.1, parameters=fc.parameters())
    fc(paddle.ones([1, 2])).sum().backward()
    opt.step()
    np.testing.assert_array_equal(fc.weight.numpy(), before)
    assert fc.weight.grad is None


def test_param_attr_learning_rate_scales_update():
    attr = paddle.ParamAttr(learning_rate=0.0)
    fc = nn.Linear(2, 2, weight_attr=attr)
    before = fc.weight.numpy().copy()
    opt = paddle.optimizer.SGD(0.1, parameters=fc.parameters())
    fc(paddle.ones([1, 2])).sum().backward()
    opt.step()
    np.testing.assert_array_equal(fc.weight.numpy(), before)


# ------------------------------------------------------------------------------ containers
def test_sequential():
    s = nn.Sequential(nn.Linear(1, 2), nn.ReLU() if hasattr(nn, "ReLU") else nn.Identity(),
                      nn.Linear(2, 3))
    assert len(s) == 3 and len(list(s)) == 3
    assert s[-1] is s[2]
    assert isinstance(s[0:2], nn.Sequential) and len(s[0:2]) == 2
    del s[1]
    assert len(s) == 2 and s[-1].weight.shape == [2, 3]
    assert [n for n, _ in s.named_children()] == ["0", "2"]
    assert s[1] is s[-1]
    s[0] = nn.Linear(1, 2)
    assert s(paddle.ones([4, 1])).shape == [4, 3]
    with pytest.raises(IndexError, match="Sequential"):
        s[5]  # noqa: B018
    named = nn.Sequential(("first", nn.Linear(1, 1)), ("second", nn.Identity()))
    assert [n for n, _ in named.named_children()] == ["first", "second"]
    assert named["first"] is named[0]
    with pytest.raises(TypeError, match="Sequential"):
        nn.Sequential(3)


def test_layer_list():
    ll = nn.LayerList([nn.Linear(1, 2), nn.Identity()])
    assert ll[-1] is ll[1]
    ll.insert(1, nn.Linear(2, 2))
    assert [type(x).__name__ for x in ll] == ["Linear", "Linear", "Identity"]
    del ll[0]
    assert [n for n, _ in ll.named_children()] == ["0", "1"]
    assert ll.append(nn.Linear(1, 1)) is ll and len(ll) == 3
    ll.extend([nn.Identity(), nn.Identity()])
    assert len(ll) == 5 and len(ll.parameters()) == 4
    assert len(nn.LayerList([None])) == 1
    with pytest.raises(IndexError, match="LayerList"):
        ll[10]  # noqa: B018
    assert len(ll[1:3]) == 2


def test_layer_dict_and_parameter_list():
    # Insertion order is kept
    d = nn.LayerDict({"z": nn.Identity(), "a": nn.Linear(1, 1)})
    d["m"] = nn.Identity()
    assert list(d.keys()) == ["z", "a", "m"]
    assert "a" in d and len(d) == 3
    assert isinstance(d.pop("z"), nn.Identity)
    d.update([("q", nn.Identity())])
    assert list(d) == ["a", "m", "q"]
    assert [k for k, _ in d.items()] == ["a", "m", "q"]
    d.clear()
    assert len(d) == 0
    with pytest.raises(ValueError, match="LayerDict"):
        d.update([("a", nn.Identity(), 3)])
    ps = nn.ParameterList([paddle.create_parameter([1], "float32") for _ in range(2)])
    ps.append(paddle.create_parameter([2], "float32"))
    assert len(ps) == 3 and ps[-1].shape == [2]
    assert [n for n, _ in ps.named_parameters()] == ["0", "1", "2"]
    assert len(list(ps)) == 3


@pytest.mark.parity
def test_container_repr_parity(pd):
    def build(lib):
        return lib.nn.Sequential(
            lib.nn.Linear(2, 3),
            lib.nn.LayerList([lib.nn.Identity(), lib.nn.Dropout(0.1)]),
            lib.nn.LayerDict({"b": lib.nn.Flatten(), "a": lib.nn.Linear(3, 1)}))

    ours, theirs = build(paddle), build(pd)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
