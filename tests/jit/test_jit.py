"""paddle_hl.jit: to_static in dygraph meaning, save/load through a traced program, and the
``.pdiparams`` byte layout checked against real Paddle."""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.static import InputSpec

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = paddle.nn.Conv2D(1, 4, 3, padding=1)
        self.bn = paddle.nn.BatchNorm2D(4)
        self.fc = paddle.nn.Linear(4 * 4 * 4, 3)

    def forward(self, x):
        y = paddle.nn.functional.relu(self.bn(self.conv(x)))
        y = paddle.nn.functional.max_pool2d(y, 2)
        return self.fc(paddle.flatten(y, 1))


def test_to_static_runs_as_written_and_checks_specs():
    calls = []

    @paddle.jit.to_static(input_spec=[InputSpec([None, 3], "float32", "x")])
    def f(x, scale=2.0):
        calls.append(1)
        if x.sum() > 0:  # a data-dependent Python branch runs eagerly
            return x * scale
        return x - 1

    out = f(paddle.ones([4, 3]))
    np.testing.assert_allclose(out.numpy(), np.full([4, 3], 2.0))
    np.testing.assert_allclose(f(-paddle.ones([1, 3])).numpy(), np.full([1, 3], -2.0))
    assert len(calls) == 2 and f.input_spec[0].shape == (-1, 3)
    with pytest.raises(ValueError, match=r"shape \[4, 2\].*\[-1, 3\]"):
        f(paddle.ones([4, 2]))
    with pytest.raises(TypeError, match="dtype"):
        f(paddle.ones([4, 3], "float64"))
    paddle.jit.enable_to_static(False)
    try:
        f(paddle.ones([4, 2]))  # checks are off with to_static disabled
    finally:
        paddle.jit.enable_to_static(True)
    net = paddle.jit.to_static(paddle.nn.Linear(3, 2), input_spec=[InputSpec([None, 3])])
    assert isinstance(net, paddle.nn.Linear) and net(paddle.ones([5, 3])).shape == [5, 2]
    assert paddle.jit.to_static(f) is f
    plain = paddle.jit.to_static(lambda x: x + 1)
    assert plain(paddle.ones([2])).numpy().tolist() == [2.0, 2.0]
    assert paddle.jit.not_to_static(len) is len
    paddle.jit.ignore_module([np])
    paddle.jit.set_code_level(50)
    paddle.jit.set_verbosity(3)
    with pytest.raises(TypeError):
        paddle.jit.ignore_module(np)
    with pytest.raises(TypeError):
        paddle.jit.enable_to_static(1)


def test_save_load_roundtrip_with_free_batch(tmp_path):
    net = Net()
    net.eval()
    path = str(tmp_path / "inference" / "net")
    paddle.jit.save(net, path, [InputSpec([None, 1, 8, 8], "float32", "image")])
    assert sorted(os.listdir(tmp_path / "inference")) == ["net.pdiparams", "net.pdiparams.info",
                                                          "net.pdmodel"]
    loaded = paddle.jit.load(path)
    assert isinstance(loaded, paddle.jit.TranslatedLayer)
    for b in (1, 6):
        x = paddle.rand([b, 1, 8, 8])
        np.testing.assert_allclose(loaded(x).numpy(), net(x).numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="input_spec"):
        loaded(paddle.rand([2, 1, 4, 4]))
    # the loaded layer trains: gradients reach its parameters
    out = loaded(paddle.rand([2, 1, 8, 8])).sum()
    out.backward()
    assert all(p.grad is not None for p in loaded.parameters() if not p.stop_gradient)


def test_save_uses_to_static_spec_and_keeps_training_mode(tmp_path):
    net = paddle.jit.to_static(Net(), input_spec=[InputSpec([2, 1, 8, 8], "float32")])
    net.train()
    net.bn.eval()  # a frozen BatchNorm inside a training model keeps its mode
    paddle.jit.save(net, str(tmp_path / "m"))
    assert net.training and net.conv.training and not net.bn.training
    with pytest.raises(ValueError, match="input_spec is required"):
        paddle.jit.save(Net(), str(tmp_path / "n"))
    with pytest.raises(ValueError, match="unknown configs"):
        paddle.jit.save(net, str(tmp_path / "m"), bogus=1)


def test_save_refuses_forward_it_cannot_capture(tmp_path):
    class Branchy(paddle.nn.Layer):
        def forward(self, x):
            # the number of rows kept depends on the data: no single program reproduces it
            return x[: int((x > 0).sum().item()) % 3 + 1]

    with pytest.raises(ValueError, match="does not reproduce the forward"):
        paddle.jit.save(Branchy(), str(tmp_path / "b"), [InputSpec([6], "float32")])


def test_slices_comparisons_and_free_dims(tmp_path):
    class Mixed(paddle.nn.Layer):
        def forward(self, x):
            head = x[:, 1:3] * 2 + x[:, -1:]
            pos = paddle.where(head > 0, paddle.exp(-head), paddle.abs(head))
            return paddle.reshape(pos, [-1]), paddle.zeros([x.shape[0], 2]) + 1.5

    net = Mixed()
    paddle.jit.save(net, str(tmp_path / "m"), [InputSpec([None, 6], "float32")])
    loaded = paddle.jit.load(str(tmp_path / "m"))
    for b in (1, 7):
        x = paddle.randn([b, 6])
        for got, want in zip(loaded(x), net(x)):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_load_refuses_programs_calling_non_kernels(tmp_path):
    from paddle_hl.framework.io import write_files
    from paddle_hl.jit import _program
    from paddle_hl.jit._save_load import _own_format, trace

    # paddle_hl's older program format (jit.save writes it for forwards without a Paddle form)
    net = paddle.nn.Linear(2, 2)
    files = _own_format(*trace(net, [InputSpec([1, 2], "float32")]))
    write_files({str(tmp_path / "n") + k: w for k, w in files.items()})
    prog = _program.loads((tmp_path / "n.pdmodel").read_bytes(), "n")
    prog["ops"][0]["fn"] = "paddle_hl.utils.download:get_path_from_url"
    (tmp_path / "n.pdmodel").write_bytes(_program.dumps(prog))
    with pytest.raises(ValueError, match="kernel modules"):
        paddle.jit.load(str(tmp_path / "n"))
    # and the program file holds plain data only
    (tmp_path / "n.pdmodel").write_bytes(_program.MAGIC + pickle.dumps(os.system))
    with pytest.raises(pickle.UnpicklingError, match="unexpected object"):
        paddle.jit.load(str(tmp_path / "n"))


def test_load_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        paddle.jit.load(str(tmp_path / "missing"))
    (tmp_path / "fake.pdmodel").write_bytes(b"\x0a\x05hello")
    with pytest.raises(ValueError, match="ProgramDesc"):
        paddle.jit.load(str(tmp_path / "fake"))


@pytest.mark.parity
def test_pdiparams_bytes_equal_paddles_and_real_paddle_runs_them(pd, tmp_path):
    """Real paddle.jit.save and ours write identical .pdiparams bytes for the same weights, and
    real Paddle runs its own program on the parameters file paddle_hl wrote."""
    pd.seed(1)
    ref = pd.nn.Sequential(pd.nn.Conv2D(1, 4, 3, padding=1), pd.nn.BatchNorm2D(4), pd.nn.ReLU(),
                           pd.nn.Flatten(), pd.nn.Linear(4 * 8 * 8, 3))
    ref.eval()
    # give BN running stats that are not the defaults
    ref[1]._mean.set_value(pd.to_tensor(np.linspace(-1, 1, 4).astype("float32")))
    ref[1]._variance.set_value(pd.to_tensor(np.linspace(0.5, 2, 4).astype("float32")))
    real_dir = tmp_path / "real"
    pd.jit.save(ref, str(real_dir / "m"), input_spec=[pd.static.InputSpec([None, 1, 8, 8],
                                                                          "float32", "x")])
    ours = paddle.nn.Sequential(paddle.nn.Conv2D(1, 4, 3, padding=1), paddle.nn.BatchNorm2D(4),
                                paddle.nn.ReLU(), paddle.nn.Flatten(),
                                paddle.nn.Linear(4 * 8 * 8, 3))
    ours.set_state_dict({k: paddle.to_tensor(v.numpy()) for k, v in ref.state_dict().items()})
    # same variable names as the Paddle process gave its parameters
    ref_sd = ref.state_dict()
    for k, v in ours.state_dict().items():
        v.name = ref_sd[k].name
    ours.eval()
    hl_dir = tmp_path / "hl"
    paddle.jit.save(ours, str(hl_dir / "m"), [InputSpec([None, 1, 8, 8], "float32", "x")])
    real_bytes = (real_dir / "m.pdiparams").read_bytes()
    assert (hl_dir / "m.pdiparams").read_bytes() == real_bytes
    with open(real_dir / "m.pdiparams.info", "rb") as f:
        real_info = pickle.load(f)
    with open(hl_dir / "m.pdiparams.info", "rb") as f:
        assert pickle.load(f) == real_info
    # real Paddle: its program + our parameters file
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    shutil.copy(real_dir / "m.pdmodel", mixed / "m.pdmodel")
    shutil.copy(hl_dir / "m.pdiparams", mixed / "m.pdiparams")
    shutil.copy(hl_dir / "m.pdiparams.info", mixed / "m.pdiparams.info")
    x = np.random.default_rng(0).standard_normal([3, 1, 8, 8]).astype("float32")
    got_real = pd.jit.load(str(mixed / "m"))(pd.to_tensor(x)).numpy()
    got_hl = paddle.jit.load(str(hl_dir / "m"))(paddle.to_tensor(x)).numpy()
    np.testing.assert_allclose(got_real, ref(pd.to_tensor(x)).numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_hl, got_real, rtol=1e-5, atol=1e-5)
    # the loaded layers name their parameters alike
    ours_loaded = paddle.jit.load(str(hl_dir / "m"))
    real_loaded = pd.jit.load(str(mixed / "m"))
    assert list(ours_loaded.state_dict()) == list(real_loaded.state_dict())
    for (k, a), b in zip(ours_loaded.state_dict().items(), real_loaded.state_dict().values()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        assert a.stop_gradient == b.stop_gradient, k
    # and paddle_hl reads the parameters real Paddle wrote, with our program
    shutil.copy(real_dir / "m.pdiparams", hl_dir / "m.pdiparams")
    np.testing.assert_allclose(paddle.jit.load(str(hl_dir / "m"))(paddle.to_tensor(x)).numpy(),
                               got_real, rtol=1e-5, atol=1e-5)
    # a program written by real Paddle runs through the program interpreter ...
    np.testing.assert_allclose(paddle.jit.load(str(real_dir / "m"))(paddle.to_tensor(x)).numpy(),
                               got_real, rtol=1e-5, atol=1e-5)
    # ... and its parameters read by structured name, as real paddle.load(prefix) reads them
    from paddle_hl.jit._save_load import read_state_dict

    ours_sd = read_state_dict(str(real_dir / "m"))
    real_sd = pd.load(str(real_dir / "m"))
    assert list(ours_sd) == list(real_sd)
    for k in real_sd:
        np.testing.assert_array_equal(ours_sd[k], real_sd[k])
    fresh = paddle.nn.Sequential(paddle.nn.Conv2D(1, 4, 3, padding=1), paddle.nn.BatchNorm2D(4),
                                 paddle.nn.ReLU(), paddle.nn.Flatten(),
                                 paddle.nn.Linear(4 * 8 * 8, 3))
    fresh.set_state_dict(read_state_dict(str(real_dir / "m"), return_numpy=False))
    fresh.eval()
    np.testing.assert_allclose(fresh(paddle.to_tensor(x)).numpy(), got_real, rtol=1e-5,
                               atol=1e-5)


def test_load_in_fresh_process_without_the_class(tmp_path):
    net = Net()
    net.eval()
    path = str(tmp_path / "net")
    paddle.jit.save(net, path, [InputSpec([None, 1, 8, 8], "float32")])
    x = np.random.default_rng(1).standard_normal([4, 1, 8, 8]).astype("float32")
    np.save(tmp_path / "x.npy", x)
    code = textwrap.dedent(f"""
        import numpy as np
        import paddle_hl as paddle
        layer = paddle.jit.load({path!r})
        y = layer(paddle.to_tensor(np.load({str(tmp_path / 'x.npy')!r})))
        np.save({str(tmp_path / 'y.npy')!r}, y.numpy())
        assert 'Net' not in globals()
    """)
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=120)
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), net(paddle.to_tensor(x)).numpy(),
                               rtol=1e-5, atol=1e-6)


def test_lstm_classifier_roundtrip(tmp_path):
    class Cls(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.emb = paddle.nn.Embedding(50, 8)
            self.lstm = paddle.nn.LSTM(8, 16)
            self.fc = paddle.nn.Linear(16, 2)

        def forward(self, ids):
            _, (h, _) = self.lstm(self.emb(ids))
            return paddle.nn.functional.softmax(self.fc(h[-1]))

    net = Cls()
    paddle.jit.save(net, str(tmp_path / "c"), [InputSpec([None, 7], "int64", "ids")])
    loaded = paddle.jit.load(str(tmp_path / "c"))
    ids = paddle.randint(0, 50, [5, 7])
    net.eval()
    np.testing.assert_allclose(loaded(ids).numpy(), net(ids).numpy(), rtol=1e-5, atol=1e-6)


def test_two_free_axes_fit_products_of_sizes(tmp_path):
    class Tokens(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = paddle.nn.Linear(4, 3)

        def forward(self, x):
            b, t = x.shape[0], x.shape[1]
            flat = paddle.reshape(x, [b * t, 4])  # a size that is a product of both symbols
            y = self.fc(flat).reshape([b, t, 3])
            shape = paddle.shape(y)  # a shape read as a tensor, used as data
            return y[:, -1] + paddle.arange(t, dtype="float32").sum() + shape[0].astype("float32")

    net = Tokens()
    paddle.jit.save(net, str(tmp_path / "t"), [InputSpec([None, None, 4], "float32", "x")])
    loaded = paddle.jit.load(str(tmp_path / "t"))
    for shape in ([1, 1, 4], [3, 8, 4], [6, 2, 4]):
        x = paddle.randn(shape)
        np.testing.assert_allclose(loaded(x).numpy(), net(x).numpy(), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="at most two"):
        paddle.jit.save(net, str(tmp_path / "u"), [InputSpec([None, None, None], "float32")])


def test_inputs_sharing_a_free_axis_must_agree(tmp_path):
    class Add(paddle.nn.Layer):
        def forward(self, a, b):
            return a + b

    paddle.jit.save(Add(), str(tmp_path / "a"), [InputSpec([None, 2], "float32"),
                                                 InputSpec([None, 2], "float32")])
    loaded = paddle.jit.load(str(tmp_path / "a"))
    assert loaded(paddle.ones([3, 2]), paddle.ones([3, 2])).shape == [3, 2]
    # a Paddle program does not tie the free dims of two inputs (-1 each, as Paddle writes
    # them): the operator that meets the mismatch names it
    with pytest.raises(ValueError, match=r"\[3, 2\] and y \[4, 2\]"):
        loaded(paddle.ones([3, 2]), paddle.ones([4, 2]))


def test_shape_dependent_branch_is_refused_with_the_op_named(tmp_path):
    class ByBatch(paddle.nn.Layer):
        def forward(self, x):
            if x.shape[0] > 2:  # a Python branch on the free dim: no single program
                x = paddle.exp(x)
            return x * 2

    with pytest.raises(ValueError, match=r"different ops .*exp"):
        paddle.jit.save(ByBatch(), str(tmp_path / "b"), [InputSpec([None, 3], "float32")])
    # with the dim fixed the same forward saves
    paddle.jit.save(ByBatch(), str(tmp_path / "b"), [InputSpec([4, 3], "float32")])
