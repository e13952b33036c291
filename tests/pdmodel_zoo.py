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


def tensor_ops_program(pd):
    """Conv1D, GroupNorm, InstanceNorm, PReLU, PixelShuffle, adaptive and ceil-mode pools,
    flip/strided slices, where, cumsum, arange, topk, split/unstack, embedding with padding,
    gather, one_hot, full_like, activations, index_select, argmin, constant pad, reductions."""
    nn = pd.nn

    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv1D(4, 6, 3, padding=1)
            self.mp1 = nn.MaxPool1D(2)
            self.gn = nn.GroupNorm(2, 6)
            self.inorm = nn.InstanceNorm2D(6)
            self.prelu = nn.PReLU(6)
            self.ps = nn.PixelShuffle(2)
            self.emb = nn.Embedding(10, 6, padding_idx=0)

        def forward(self, x, ids):
            y = self.mp1(self.c1(x))  # [B, 6, L/2]
            y = self.gn(y)
            z = y.unsqueeze(-1).expand([-1, 6, 4, 4])  # [B, 6, 4, 4]
            z = self.prelu(self.inorm(z))
            p = self.ps(paddle.tile(z[:, :4], [1, 2, 1, 1]))  # [B, 2, 8, 8]
            p = F.avg_pool2d(p, 3, 2, 1, ceil_mode=True, exclusive=False)
            p = F.adaptive_avg_pool2d(p, [2, 3]) + F.adaptive_max_pool2d(p, 2).mean()
            a = paddle.flip(y, [2])[:, ::2, 1:-1]
            b = paddle.where(a > 0, paddle.exp(-a), paddle.sqrt(paddle.abs(a)) ** 1.5)
            c = paddle.cumsum(b, axis=-1) / (1.0 + paddle.arange(b.shape[-1], dtype='float32'))
            v, i = paddle.topk(c.flatten(1), 3)
            s1, s2 = paddle.split(y, [2, 4], axis=1)
            u = paddle.unstack(s1, axis=1)[0]
            e = self.emb(ids).sum(1) * paddle.cast(ids > 3, 'float32').mean(1, keepdim=True)
            g = paddle.gather(s2, paddle.to_tensor([3, 0, 1]), axis=1)
            oh = F.one_hot(ids[:, 0], 10)
            m = paddle.full_like(u, 2.0) * paddle.zeros_like(u) + paddle.ones([1])
            w = (F.hardtanh(g) + F.softplus(g) + F.elu(g) + F.mish(g) + F.silu(g)
                 + F.log_sigmoid(g))
            ww = paddle.index_select(w, paddle.to_tensor([1, 0]), axis=2)
            r = (paddle.matmul(ww, ww, transpose_y=True).max(axis=-1)
                 + paddle.argmin(ww, axis=-1).astype('float32'))
            q = F.pad(p, [1, 1, 2, 0], value=0.5)
            return (p, c, v, i, e, oh, m, r, q, paddle.prod(y, 1), paddle.any(y > 2, axis=1),
                    paddle.minimum(u, m).pow(2))

    x = np.random.default_rng(2).standard_normal([2, 4, 8]).astype(np.float32)
    ids = np.random.default_rng(3).integers(0, 10, [2, 5]).astype(np.int64)
    return Net(), [pd.static.InputSpec([None, 4, 8], "float32", "x"),
                   pd.static.InputSpec([None, 5], "int64", "ids")], [x, ids]


def dynamic_heads_program(pd):
    """Free height and width: a DB-style head (transposed conv, nearest upsample, concat,
    sigmoid), a segmentation upsample to the input's runtime size (SizeTensor), a CRNN-style
    BiLSTM with softmax, and a detection-style decode (reshape by the runtime batch, split,
    meshgrid anchors)."""
    nn = pd.nn

    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2D(3, 8, 3, 2, 1), nn.BatchNorm2D(8), nn.Hardswish())
            self.down = nn.Conv2D(8, 16, 3, 2, 1)
            self.up = nn.Conv2DTranspose(16, 8, 2, 2)
            self.head = nn.Conv2D(16, 2, 1)
            self.rnn = nn.LSTM(16, 8, direction="bidirect")
            self.fc = nn.Linear(16, 5)
            self.cls = nn.Conv2D(8, 4, 1)

        def forward(self, x):
            f1 = self.stem(x)
            f2 = F.relu(self.down(f1))
            u = F.interpolate(f2, scale_factor=2, mode="nearest")
            cat = paddle.concat([self.up(f2), u[:, :8]], axis=1)
            db = F.sigmoid(self.head(cat))
            # segmentation head: upsample to the input's size, read from the input at run time
            seg = F.interpolate(db, size=paddle.shape(x)[2:], mode="bilinear",
                                align_corners=False)
            # CRNN-style: pool height away, sequence over width, BiLSTM, per-step softmax
            seq = f2.mean(axis=2).transpose([0, 2, 1])
            y, _ = self.rnn(seq)
            ctc = F.softmax(self.fc(y), axis=-1)
            # detection-style: flatten anchors with the batch from the input, split, decode
            b = paddle.shape(x)[0]
            logits = self.cls(f1).reshape([b, 4, -1]).transpose([0, 2, 1])
            s, reg = paddle.split(logits, [1, 3], axis=-1)
            h, w = paddle.shape(f1)[2], paddle.shape(f1)[3]
            yy, xx = paddle.meshgrid(paddle.arange(h, dtype="float32"),
                                     paddle.arange(w, dtype="float32"))
            anchors = paddle.stack([xx.flatten(), yy.flatten()], -1)
            boxes = anchors.unsqueeze(0) + reg[..., :2] * paddle.exp(reg[..., 2:])
            return seg, ctc, F.sigmoid(s).squeeze(-1), boxes, seg.argmax(1)

    x = np.random.default_rng(2).standard_normal([2, 3, 32, 48]).astype(np.float32)
    return Net(), [pd.static.InputSpec([None, 3, None, None], "float32", "x")], [x]


def more_ops_program(pd):
    """An OCR-style spatial transformer (affine_grid + grid_sample), normalize, logsumexp,
    argsort + take_along_axis, tril/triu, shrink/selu/celu activations, elementwise math,
    logical ops, roll, chunk + bmm, linspace, 1-D linear, bicubic and trilinear resizes,
    Conv3D/Conv3DTranspose with 3-D pools, 1-D pools and numel."""
    nn = pd.nn

    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.loc = nn.Linear(64, 6)
            self.c3 = nn.Conv3D(2, 3, 3, padding=1)
            self.ct3 = nn.Conv3DTranspose(3, 2, 2, stride=2)

        def forward(self, x, v):
            # spatial transformer (OCR rectification): affine grid + grid_sample
            theta = self.loc(x.mean(axis=1).flatten(1)).reshape([-1, 2, 3])
            grid = F.affine_grid(theta, [2, 3, 4, 4], align_corners=False)
            st = F.grid_sample(x, grid, align_corners=False)
            a = F.normalize(v, axis=-1)
            b = paddle.logsumexp(v, axis=1)
            idx = paddle.argsort(v, axis=-1, descending=True)
            c = paddle.take_along_axis(v, idx, axis=-1)
            d = paddle.tril(v[:, :4, :4]) - paddle.triu(v[:, :4, :4], 1)
            e = (F.hardshrink(v) + F.softshrink(v) + F.thresholded_relu(v) + F.relu6(v)
                 + F.selu(v) + F.celu(v) + F.softsign(v) + F.tanhshrink(v))
            f = (paddle.floor(v) + paddle.ceil(v) + paddle.round(v) + paddle.sign(v)
                 + paddle.cos(v) * paddle.sin(v) + paddle.erf(v) + paddle.rsqrt(paddle.abs(v) + 1)
                 + paddle.reciprocal(paddle.square(v) + 1))
            g = paddle.logical_and(v > 0, paddle.logical_not(v >= 0.5)).astype("float32")
            h = paddle.roll(v, 1, axis=1) + paddle.expand_as(v[:, :1], v)
            i1, i2 = paddle.chunk(v, 2, axis=-1)
            j = paddle.bmm(i1, i2.transpose([0, 2, 1]))
            k = paddle.linspace(0, 1, 6, dtype="float32") * v
            lin = F.interpolate(v, size=[9], mode="linear", align_corners=True, data_format="NCW")
            bic = F.interpolate(x, scale_factor=1.5, mode="bicubic", align_corners=False)
            vol = self.ct3(F.relu(self.c3(x.unsqueeze(1).tile([1, 2, 1, 1, 1]))))
            vol = F.max_pool3d(vol, 2) + F.avg_pool3d(vol, 2)
            tri = F.interpolate(vol, size=[3, 4, 5], mode="trilinear",
                                data_format="NCDHW")
            m = F.avg_pool1d(v, 2) + F.max_pool1d(v, 3, 1, 1)[..., ::2]
            return st, a, b, c, d, e, f, g, h, j, k, lin, bic, tri, m, paddle.numel(v)

    x = np.random.default_rng(2).standard_normal([2, 4, 8, 8]).astype(np.float32)
    v = np.random.default_rng(3).standard_normal([2, 5, 6]).astype(np.float32)
    return Net(), [pd.static.InputSpec([None, 4, 8, 8], "float32", "x"),
                   pd.static.InputSpec([None, 5, 6], "float32", "v")], [x, v]


def activations_program(pd):
    """The activations that carry float attributes, each with non-default values."""
    class Net(pd.nn.Layer):
        def forward(self, x):
            return (F.leaky_relu(x, 0.3), F.elu(x, 0.7), F.celu(x, 1.3),
                    F.hardsigmoid(x, 0.25, 0.4), F.softplus(x, 2.0, 5.0),
                    F.hardshrink(x, 0.3), F.softshrink(x, 0.2),
                    F.thresholded_relu(x, 0.4), F.selu(x, 1.1, 1.5))

    return Net(), [pd.static.InputSpec([None, 16], "float32", "x")], [_img([3, 16], 4) * 2]


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
