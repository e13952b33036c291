"""paddle_hl writes real Paddle inference programs (``jit._export.save``): real Paddle 2.6.2's
``jit.load`` and ``paddle.inference`` run them with paddle_hl's outputs, and a program Paddle
saved goes Paddle -> paddle_hl -> Paddle with the same outputs."""

from __future__ import annotations

import os

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.jit import _export, _interpreter, _proto
from paddle_hl.static import InputSpec
from tests import pdmodel_zoo as zoo

pytestmark = pytest.mark.parity

MODELS = ["LeNet", "resnet18", "mobilenet_v2", "mobilenet_v3_small", "shufflenet_v2_swish",
          "squeezenet1_1", "densenet121", "googlenet"]


def _real_outputs(pd, prefix, inputs):
    """Outputs of real Paddle's jit.load and of real Paddle Inference on ``inputs``."""
    layer = pd.jit.load(str(prefix))
    out = layer(*[pd.to_tensor(a) for a in inputs])
    loaded = [o.numpy() for o in (out if isinstance(out, (list, tuple)) else [out])]
    cfg = pd.inference.Config(str(prefix) + ".pdmodel", str(prefix) + ".pdiparams")
    cfg.disable_glog_info()
    pred = pd.inference.create_predictor(cfg)
    for name, a in zip(pred.get_input_names(), inputs):
        h = pred.get_input_handle(name)
        h.reshape(list(a.shape))
        h.copy_from_cpu(a)
    pred.run()
    infer = [pred.get_output_handle(n).copy_to_cpu() for n in pred.get_output_names()]
    return loaded, infer


def _assert_matches_paddle(pd, net, prefix, inputs, where="", inference=True):
    """``net``'s outputs on ``inputs`` against real Paddle's jit.load and Paddle Inference
    running the program saved at ``prefix``, output by output (``inference=False`` skips the
    Paddle Inference comparison); returns ``net``'s outputs."""
    with paddle.no_grad():
        out = net(*[paddle.to_tensor(a) for a in inputs])
    want = [o.numpy() for o in (out if isinstance(out, (list, tuple)) else [out])]
    loaded, infer = _real_outputs(pd, prefix, inputs)
    assert len(loaded) == len(infer) == len(want)
    for i, w in enumerate(want):
        zoo.assert_close(loaded[i], w, f"jit.load output {i}{where}")
        if inference:
            zoo.assert_close(infer[i], w, f"inference output {i}{where}")
    return want


@pytest.mark.parametrize("name", MODELS)
def test_real_paddle_runs_paddle_hl_exports(pd, tmp_path, name):
    paddle.seed(0)
    size = {"LeNet": 28, "googlenet": 192}.get(name, 64)
    ch = 1 if name == "LeNet" else 3
    kwargs = {} if name == "LeNet" else {"num_classes": 10}
    net = getattr(paddle.vision.models, name)(**kwargs)
    net.eval()
    _export.save(net, str(tmp_path / "m"), [InputSpec([None, ch, size, size], "float32",
                                                      "image")])
    x = np.random.default_rng(1).standard_normal([3, ch, size, size]).astype(np.float32)
    want = _assert_matches_paddle(pd, net, tmp_path / "m", [x])
    # the parameters file is Paddle's layout, and paddle_hl reads its own program back
    back = paddle.jit.load(str(tmp_path / "m"))
    zoo.assert_close(back(paddle.to_tensor(x[:1])).numpy() if len(want) == 1 else
                     back(paddle.to_tensor(x[:1]))[0].numpy(), want[0][:1])


@pytest.mark.parametrize("build", [zoo.zoo_model("mobilenet_v3_small"),
                                   zoo.zoo_model("shufflenet_v2_x0_25")],
                         ids=["mobilenet_v3_small", "shufflenet_v2_x0_25"])
def test_round_trip_paddle_to_paddle_hl_to_paddle(pd, tmp_path, build):
    inputs, want = zoo.save_real(pd, build, tmp_path / "a")
    loaded = paddle.jit.load(str(tmp_path / "a"))
    _export.save(loaded, str(tmp_path / "b"),
                 [InputSpec([None, 3, 64, 64], "float32", "x")])
    got, infer = _real_outputs(pd, tmp_path / "b", inputs)
    zoo.assert_close(got[0], want[0], "Paddle -> paddle_hl -> Paddle (jit.load)")
    zoo.assert_close(infer[0], want[0], "Paddle -> paddle_hl -> Paddle (inference)")


def test_free_batch_dim_is_free_in_the_program(tmp_path):
    net = paddle.vision.models.LeNet()
    net.eval()
    _export.save(net, str(tmp_path / "m"), [InputSpec([None, 1, 28, 28], "float32", "x")])
    desc = _proto.decode((tmp_path / "m.pdmodel").read_bytes())
    var = {v["name"]: v for v in desc["blocks"][0]["vars"]}
    assert var["x"]["type"]["lod_tensor"]["tensor"]["dims"] == [-1, 1, 28, 28]
    ops = [o["type"] for o in desc["blocks"][0]["ops"]]
    assert ops[0] == "feed" and ops[-1] == "fetch"
    assert {"conv2d", "pool2d", "relu", "matmul_v2", "reshape2"} <= set(ops)
    for batch in (1, 5):
        x = np.random.default_rng(batch).standard_normal([batch, 1, 28, 28]).astype("float32")
        with paddle.no_grad():
            want = net(paddle.to_tensor(x)).numpy()
        zoo.assert_close(paddle.jit.load(str(tmp_path / "m"))(paddle.to_tensor(x)).numpy(),
                         want)


def test_kernel_without_paddle_form_is_named_and_nothing_is_written(tmp_path):
    class Net(paddle.nn.Layer):
        def forward(self, x):
            return paddle.cumsum(x, axis=1)

    with pytest.raises(ValueError, match=r"kernels without a Paddle operator form here: "
                                         r"paddle_hl\.tensor\.\w+:\w*cumsum"):
        _export.save(Net(), str(tmp_path / "m"), [InputSpec([None, 4], "float32", "x")])
    assert not os.listdir(tmp_path)


def test_transformer_encoder_with_mask_two_inputs(pd, tmp_path):
    """Layer norm, attention with an additive mask, GELU; two inputs in their order (Paddle's
    loader takes the feed ops last column first)."""
    paddle.seed(0)
    nn = paddle.nn

    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.1, activation="gelu",
                                               normalize_before=True)
            self.enc = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(32))
            self.head = nn.Linear(32, 3)

        def forward(self, x, mask):
            return nn.functional.softmax(self.head(self.enc(x, mask).mean(axis=1)), -1)

    net = Net()
    net.eval()
    _export.save(net, str(tmp_path / "m"), [InputSpec([None, 6, 32], "float32", "x"),
                                            InputSpec([None, 4, 6, 6], "float32", "mask")])
    x = np.random.default_rng(1).standard_normal([2, 6, 32]).astype(np.float32)
    mask = np.zeros([2, 4, 6, 6], np.float32)
    mask[..., -1] = -1e9
    _assert_matches_paddle(pd, net, tmp_path / "m", [x, mask])
    ops = {o["type"] for o in _proto.decode((tmp_path / "m.pdmodel").read_bytes())["blocks"][0][
        "ops"]}
    assert {"layer_norm", "softmax", "gelu", "matmul_v2", "transpose2"} <= ops


def _lstm_net(nn):
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(50, 16, padding_idx=0)
            self.lstm = nn.LSTM(16, 24, num_layers=2, direction="bidirect")
            self.fc = nn.Linear(48, 5)

        def forward(self, ids):
            y, (h, c) = self.lstm(self.emb(ids))
            return self.fc(y[:, -1]), h, c

    ids = np.random.default_rng(1).integers(0, 50, (3, 7)).astype(np.int64)
    ids[0, :2] = 0  # padding ids embed to zeros
    return Net(), [InputSpec([None, 7], "int64", "ids")], [ids]


def _gru_net(nn):
    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(8, 12, num_layers=2)
            self.rnn = nn.SimpleRNN(12, 6, direction="bidirect", activation="relu")

        def forward(self, x):
            y, _ = self.gru(x)
            z, h = self.rnn(y)
            return z, h

    x = np.random.default_rng(1).standard_normal([3, 5, 8]).astype(np.float32)
    return Net(), [InputSpec([None, 5, 8], "float32", "x")], [x]


@pytest.mark.parametrize("make", [_lstm_net, _gru_net], ids=["lstm_bidirect", "gru_simple_rnn"])
def test_rnn_programs(pd, tmp_path, make):
    """Each direction of each layer becomes Paddle's rnn op (the reverse one between time
    flips); the zero initial states are sized by the run-time batch."""
    paddle.seed(0)
    net, spec, inputs = make(paddle.nn)
    net.eval()
    _export.save(net, str(tmp_path / "m"), spec)
    _assert_matches_paddle(pd, net, tmp_path / "m", inputs)
    # another batch size: the states follow it
    more = [np.concatenate([a, a[:1]]) for a in inputs]
    with paddle.no_grad():
        want = [o.numpy() for o in net(*[paddle.to_tensor(a) for a in more])]
    loaded, _ = _real_outputs(pd, tmp_path / "m", more)
    zoo.assert_close(loaded[0], want[0], "batch + 1")


def test_transposed_and_depthwise_convolutions_and_padding(pd, tmp_path):
    paddle.seed(0)
    nn, F = paddle.nn, paddle.nn.functional

    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.up = nn.Conv2DTranspose(4, 6, 3, stride=2, padding=1, output_padding=1)
            self.dw = nn.Conv2D(6, 6, 3, groups=6, padding=1)
            self.bn = nn.BatchNorm2D(6)
            self.up2 = nn.Conv2DTranspose(6, 2, 2, stride=2, groups=2, bias_attr=False)

        def forward(self, x):
            y = self.bn(self.dw(self.up(x)))
            y = F.pad(y, [1, 2, 0, 1], mode="reflect")
            z = F.pad(self.up2(y), [1, 1, 2, 0], value=0.5)
            return F.leaky_relu(y, 0.1) + F.sigmoid(y) * paddle.tanh(y), paddle.clip(z, -1, 1)

    net = Net()
    net.eval()
    _export.save(net, str(tmp_path / "m"), [InputSpec([None, 4, 5, 5], "float32", "x")])
    x = np.random.default_rng(1).standard_normal([2, 4, 5, 5]).astype(np.float32)
    _assert_matches_paddle(pd, net, tmp_path / "m", [x])


# every zoo model not in MODELS: one per family fast, the others slow
_MORE_FAST = ["resnext50_32x4d", "vgg11", "mobilenet_v1", "mobilenet_v3_large",
              "shufflenet_v2_x0_25"]
_MORE_SLOW = ["resnet34", "resnet50", "resnet101", "resnet152", "resnext50_64x4d",
              "resnext101_32x4d", "resnext101_64x4d", "resnext152_32x4d", "resnext152_64x4d",
              "wide_resnet50_2", "wide_resnet101_2", "vgg13", "vgg16", "vgg19",
              "mobilenet_v3_small", "densenet161", "densenet169", "densenet201", "densenet264",
              "alexnet", "inception_v3", "squeezenet1_0", "shufflenet_v2_x0_33",
              "shufflenet_v2_x0_5", "shufflenet_v2_x1_0", "shufflenet_v2_x1_5",
              "shufflenet_v2_x2_0"]


def test_the_lists_cover_the_zoo():
    zoo_names = {n for n in paddle.vision.models.__all__ if n[0].islower() or n == "LeNet"}
    assert zoo_names == set(MODELS) | set(_MORE_FAST) | set(_MORE_SLOW)


@pytest.mark.parametrize("name", _MORE_FAST + [pytest.param(n, marks=pytest.mark.slow)
                                               for n in _MORE_SLOW])
def test_every_zoo_model_exports_through_jit_save(pd, tmp_path, name):
    """``paddle.jit.save`` (the public path) writes Paddle's format for every zoo model, without
    a fallback, and real Paddle's jit.load and Paddle Inference reproduce the outputs."""
    import warnings

    paddle.seed(0)
    size = {"alexnet": 224, "inception_v3": 96}.get(name, 64)
    net = getattr(paddle.vision.models, name)(num_classes=10)
    net.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        paddle.jit.save(net, str(tmp_path / "m"), [InputSpec([None, 3, size, size], "float32",
                                                             "image")])
    x = np.random.default_rng(1).standard_normal([2, 3, size, size]).astype(np.float32)
    _assert_matches_paddle(pd, net, tmp_path / "m", [x])


_INTERP = [dict(mode="bilinear", align_corners=False, align_mode=0),
           dict(mode="bilinear", align_corners=False, align_mode=1),
           dict(mode="bilinear", align_corners=True), dict(mode="nearest"),
           dict(mode="bicubic", align_corners=False), dict(mode="bicubic", align_corners=True)]


@pytest.mark.parametrize("kw", _INTERP, ids=lambda kw: "-".join(str(v) for v in kw.values()))
def test_interpolation_modes_and_alignments(pd, tmp_path, kw):
    """The mode and alignment are read off the traced taps; by size and by scale factor, on
    channels-first and channels-last inputs."""
    F = paddle.nn.functional

    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.conv = paddle.nn.Conv2D(2, 3, 3, padding=1)

        def forward(self, x):
            y = self.conv(x)
            a = F.interpolate(y, size=[11, 7], **kw)
            b = F.interpolate(y.transpose([0, 2, 3, 1]), scale_factor=2, data_format="NHWC",
                              **kw)
            return a, b

    paddle.seed(0)
    net = Net()
    net.eval()
    paddle.jit.save(net, str(tmp_path / "m"), [InputSpec([None, 2, 5, 6], "float32", "x")])
    assert _interpreter.is_program_desc(str(tmp_path / "m.pdmodel"))
    ops = {o.type for o in paddle.jit.load(str(tmp_path / "m")).program().ops}
    assert f"{'bilinear' if kw['mode'] == 'bilinear' else kw['mode']}_interp_v2" in ops
    x = np.random.default_rng(0).standard_normal([3, 2, 5, 6]).astype(np.float32)
    # Paddle Inference 2.6.2 on the CPU resizes 'nearest' differently from Paddle itself, on a
    # program Paddle wrote as well (same attributes as this one): no oracle there
    _assert_matches_paddle(pd, net, tmp_path / "m", [x], inference=kw["mode"] != "nearest")


def test_strided_views_and_small_constants(pd, tmp_path):
    """Slices taken as strided views become strided_slice ops; small constants are written as
    assign_value ops (a persistable constant missing from .pdiparams.info made Paddle's
    jit.load refuse the model)."""

    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.conv = paddle.nn.Conv2D(2, 4, 1)

        def forward(self, x):
            y = self.conv(x)
            return (y[:, :1] + 1, y[:, 1:3] * 2 + y[:, -1:], y[..., ::2] * 1.5,
                    y[:, :, 1:4, 2:5] - 1, paddle.chunk(y, 2, axis=1)[1] * 3)

    paddle.seed(0)
    net = Net()
    net.eval()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        paddle.jit.save(net, str(tmp_path / "m"), [InputSpec([None, 2, 5, 6], "float32", "x")])
    x = np.random.default_rng(0).standard_normal([3, 2, 5, 6]).astype(np.float32)
    _assert_matches_paddle(pd, net, tmp_path / "m", [x])


@pytest.mark.parametrize("fmt", ["NCHW", "NHWC"])
def test_group_and_instance_norm(pd, tmp_path, fmt):
    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.conv = paddle.nn.Conv2D(2, 6, 3, padding=1)
            self.gn = paddle.nn.GroupNorm(3, 6, data_format=fmt)
            self.inorm = paddle.nn.InstanceNorm2D(6)

        def forward(self, x):
            y = self.conv(x)
            g = self.gn(y if fmt == "NCHW" else y.transpose([0, 2, 3, 1]))
            return g, self.inorm(y) * 2

    paddle.seed(0)
    net = Net()
    net.eval()
    rng = np.random.default_rng(0)
    for p in (net.gn.weight, net.gn.bias, net.inorm.scale, net.inorm.bias):
        p.set_value(rng.uniform(0.5, 1.5, p.shape).astype("float32"))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        paddle.jit.save(net, str(tmp_path / "m"), [InputSpec([None, 2, 5, 6], "float32", "x")])
    ops = {o.type for o in paddle.jit.load(str(tmp_path / "m")).program().ops}
    assert {"group_norm", "instance_norm"} <= ops
    x = rng.standard_normal([3, 2, 5, 6]).astype(np.float32)
    _assert_matches_paddle(pd, net, tmp_path / "m", [x])


def test_position_ids_over_a_free_sequence_length(pd, tmp_path):
    """An arange sized by a free dim (position ids) becomes Paddle's range op with its end read
    off the input at run time (it fell back to paddle_hl's older format)."""
    import warnings

    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.tok = paddle.nn.Embedding(20, 8)
            self.pos = paddle.nn.Embedding(32, 8)
            self.lin = paddle.nn.Linear(8, 3)

        def forward(self, ids):
            pos = paddle.arange(ids.shape[1]).unsqueeze(0)
            return self.lin(self.tok(ids) + self.pos(pos))

    paddle.seed(0)
    net = Net()
    net.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        paddle.jit.save(net, str(tmp_path / "m"), [InputSpec([None, None], "int64", "ids")])
    for shape in ((2, 5), (3, 9)):
        ids = np.random.default_rng(0).integers(0, 20, shape).astype(np.int64)
        _assert_matches_paddle(pd, net, tmp_path / "m", [ids], f" at {shape}")


def test_encoder_with_batch_and_sequence_free(pd, tmp_path):
    """A Transformer encoder file with input_spec [None, None]: reshapes with two free sizes
    become reshape2 with a ShapeTensor read off the input, position ids a range op; real
    Paddle runs the program at several batch sizes and sequence lengths."""
    import warnings

    from tests.compat._alias import load_model_file

    net = load_model_file("nlp_fused", as_paddle_hl=True).build()
    net.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        paddle.jit.save(net, str(tmp_path / "enc"))
    rng = np.random.default_rng(4)
    for shape in ((1, 3), (2, 6), (4, 9)):
        ids = rng.integers(0, 50, shape).astype(np.int64)
        _assert_matches_paddle(pd, net, tmp_path / "enc", [ids], f" at {shape}")


def test_elementwise_math_comparisons_and_reductions(pd, tmp_path):
    """where, comparisons with a number, abs/neg/sqrt/rsqrt/log/square/pow, minimum/maximum,
    sum/max/min reductions, log_softmax, elu, softplus, mish and casts (these fell back to
    paddle_hl's older format)."""
    import warnings

    F = paddle.nn.functional

    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.lin = paddle.nn.Linear(4, 4)

        def forward(self, x):
            x = self.lin(x)
            h = paddle.where(x > 0, paddle.exp(-x), paddle.abs(x))
            s = (paddle.sum(h, axis=1, keepdim=True) + paddle.sqrt(paddle.abs(x))
                 + paddle.log(paddle.abs(x) + 1) + paddle.rsqrt(paddle.abs(x) + 1))
            m = paddle.max(x, axis=-1) + (x ** 2).mean(-1) + paddle.min(x, axis=1)
            c = paddle.where(x <= 0.5, x, h) + x.astype("float64").astype("float32")
            return (s, m, paddle.minimum(x, h), paddle.maximum(x, h), paddle.square(x),
                    F.log_softmax(x, -1), F.elu(x), F.softplus(x), F.mish(x), c, paddle.sum(x))

    paddle.seed(0)
    net = Net()
    net.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        paddle.jit.save(net, str(tmp_path / "m"), [InputSpec([None, 4], "float32", "x")])
    x = np.random.default_rng(0).standard_normal([3, 4]).astype(np.float32)
    _assert_matches_paddle(pd, net, tmp_path / "m", [x])
