"""Inference models written by real Paddle 2.6.2 for the ``.pdmodel`` reader's tests.

Each builder takes the real ``paddle`` module and returns ``(layer, input_specs, inputs)``:
a small network in eval mode, the InputSpecs it is saved with (free dims as ``None``) and NumPy
inputs to run. :func:`save_real` saves it with real ``paddle.jit.save`` and returns its outputs
on the inputs (the reference).
"""

from __future__ import annotations

import numpy as np

paddle = F = None  # real paddle and its functional module, set by save_real


def _img(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def zoo_model(name, num_classes=10, size=64):
    """A builder for the paddle.vision.models constructor ``name``."""

    def build(pd):
        models = pd.vision.models
        fn = getattr(models, name)
        kwargs = {"num_classes": num_classes}
        if name.startswith("vgg"):
            kwargs["batch_norm"] = True
        if name in ("mobilenet_v1", "mobilenet_v2", "mobilenet_v3_small", "mobilenet_v3_large"):
            kwargs["scale"] = 0.5
        net = fn(**kwargs) if name != "LeNet" else fn(num_classes=num_classes)
        ch = 1 if name == "LeNet" else 3
        s = 28 if name == "LeNet" else size
        spec = [pd.static.InputSpec([None, ch, s, s], "float32", "x")]
        return net, spec, [_img([2, ch, s, s])]
    return build


def lstm_program(pd):
    nn = pd.nn

    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(50, 16)
            self.lstm = nn.LSTM(16, 24, num_layers=2, direction="bidirect")
            self.fc = nn.Linear(48, 5)

        def forward(self, ids):
            y, (h, c) = self.lstm(self.emb(ids))
            return self.fc(y[:, -1]), h, c

    ids = np.random.default_rng(1).integers(0, 50, (3, 7)).astype(np.int64)
    return Net(), [pd.static.InputSpec([None, 7], "int64", "ids")], [ids]


def gru_program(pd):
    nn = pd.nn

    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(8, 12, num_layers=2)
            self.rnn = nn.SimpleRNN(12, 6, direction="bidirect", activation="relu")

        def forward(self, x):
            y, _ = self.gru(x)
            z, h = self.rnn(y)
            return z, h

    return Net(), [pd.static.InputSpec([None, 5, 8], "float32", "x")], [_img([3, 5, 8])]


def transformer_program(pd):
    nn = pd.nn

    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.1, activation="gelu",
                                               normalize_before=True)
            self.enc = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(32))
            self.head = nn.Linear(32, 3)
            self.softmax = nn.Softmax(-1)

        def forward(self, x, mask):
            # (the forward is converted from its source: only its own names are in reach)
            y = self.enc(x, mask)
            return self.softmax(self.head(y.mean(axis=1)))

    mask = np.zeros([2, 4, 6, 6], np.float32)
    mask[..., -1] = -1e9  # the last position is padding
    return (Net(), [pd.static.InputSpec([None, 6, 32], "float32", "x"),
                    pd.static.InputSpec([None, 4, 6, 6], "float32", "mask")],
            [_img([2, 6, 32]), mask])


def conv_interp_program(pd):
    nn = pd.nn

    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.up = nn.Conv2DTranspose(4, 6, 3, stride=2, padding=1, output_padding=1)
            self.dw = nn.Conv2D(6, 6, 3, groups=6, padding="SAME")
            self.pw = nn.Conv2D(6, 4, 1, data_format="NCHW")
            self.bn = nn.BatchNorm2D(4)
            self.ln = nn.LayerNorm([4])

        def forward(self, x):
            y = self.dw(self.up(x))
            y = F.interpolate(y, scale_factor=2, mode="bilinear")
            y = F.interpolate(y, size=[10, 12], mode="nearest")
            y = F.interpolate(y, size=[9, 11], mode="bilinear", align_corners=True)
            y = F.pad(y, [1, 2, 0, 1], mode="reflect")
            y = self.bn(self.pw(y))
            y = F.leaky_relu(y, 0.1) + F.sigmoid(y) * F.tanh(y)
            z = self.ln(y.transpose([0, 2, 3, 1]))
            w = paddle.clip(y, -1, 1)
            return (w.argmax(axis=1), F.gelu(w).sum(axis=[2, 3]),
                    paddle.stack([w[:, 0], w[:, 1]], 1), z.max(axis=-1), F.log_softmax(z, 1))

    return Net(), [pd.static.InputSpec([None, 4, 5, 5], "float32", "x")], [_img([2, 4, 5, 5])]


def save_real(pd, build, prefix):
    """Save ``build(pd)``'s layer with real Paddle under ``prefix``; returns (inputs, outputs
    of the layer on them as NumPy arrays)."""
    # Paddle converts each forward from its source, which then sees this module's globals but
    # not the builders' local names
    globals().update(paddle=pd, F=pd.nn.functional)
    pd.seed(0)
    net, spec, inputs = build(pd)
    net.eval()
    pd.jit.save(net, str(prefix), input_spec=spec)
    out = net(*[pd.to_tensor(a) for a in inputs])
    out = list(out) if isinstance(out, (list, tuple)) else [out]
    return inputs, [o.numpy() for o in out]


def assert_close(got, want, what=""):
    """2e-5 relative to the output's scale (float), exact (integer)."""
    got = np.asarray(got)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    if want.dtype.kind in "fc":
        scale = float(np.abs(want).max()) if want.size else 1.0
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5 * scale, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)
