"""jit.save of a layer whose forward is decorated with to_static without an input_spec: it saves
with the signature of the last call (concrete shapes and dtypes), as Paddle saves with the
program of its latest call, and refuses clearly when the forward was never called."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle


class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(8, 3)

    @paddle.jit.to_static
    def forward(self, x):
        return paddle.nn.functional.relu(self.fc(x))


def _x(*shape):
    return paddle.to_tensor(np.random.default_rng(0).standard_normal(shape).astype("float32"))


def test_saves_with_the_last_calls_signature(tmp_path):
    net = Net()
    net(_x(4, 8))
    x = _x(6, 8)
    want = net(x).numpy()
    paddle.jit.save(net, str(tmp_path / "m"))
    loaded = paddle.jit.load(str(tmp_path / "m"))
    assert [(s.shape, s.dtype, s.name) for s in loaded._specs] == [((6, 8), paddle.float32,
                                                                    "x")]
    np.testing.assert_allclose(loaded(x).numpy(), want, rtol=1e-6, atol=1e-6)


def test_signature_is_per_instance(tmp_path):
    a, b = Net(), Net()
    a(_x(2, 8))
    with pytest.raises(ValueError, match=r"jit\.save: .*forward.*never called.*input_spec"):
        paddle.jit.save(b, str(tmp_path / "b"))
    paddle.jit.save(a, str(tmp_path / "a"))
    assert paddle.jit.load(str(tmp_path / "a"))._specs[0].shape == (2, 8)


def test_never_called_raises_clearly(tmp_path):
    with pytest.raises(ValueError, match="never called") as info:
        paddle.jit.save(Net(), str(tmp_path / "m"))
    assert "input_spec" in str(info.value)
    assert not (tmp_path / "m.pdmodel").exists()


def test_to_static_on_a_layer_and_on_a_function(tmp_path):
    net = paddle.jit.to_static(paddle.nn.Linear(8, 2))
    net(_x(3, 8))
    paddle.jit.save(net, str(tmp_path / "layer"))
    assert paddle.jit.load(str(tmp_path / "layer"))._specs[0].shape == (3, 8)


def test_non_tensor_argument_is_named(tmp_path):
    class Flag(paddle.nn.Layer):
        @paddle.jit.to_static
        def forward(self, x, scale):
            return x * scale

    net = Flag()
    net(_x(2, 8), 2.0)
    with pytest.raises(ValueError, match="float as positional argument 1"):
        paddle.jit.save(net, str(tmp_path / "m"))
    # an explicit input_spec still wins
    paddle.jit.save(paddle.jit.to_static(paddle.nn.Linear(8, 2)), str(tmp_path / "n"),
                    input_spec=[paddle.static.InputSpec([None, 8], "float32", "x")])


@pytest.mark.parity
def test_same_signature_as_paddle(pd, tmp_path):
    class PNet(pd.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = pd.nn.Linear(8, 3)

        @pd.jit.to_static
        def forward(self, x):
            return self.fc(x)

    ref = PNet()
    with pytest.raises(ValueError):
        pd.jit.save(ref, str(tmp_path / "never"))  # Paddle refuses too
    ours = Net()
    for shape in ((4, 8), (6, 8)):
        ref(pd.randn(list(shape)))
        ours(_x(*shape))
    pd.jit.save(ref, str(tmp_path / "p"))
    paddle.jit.save(ours, str(tmp_path / "o"))
    theirs = pd.jit.load(str(tmp_path / "p"))._input_spec()
    mine = paddle.jit.load(str(tmp_path / "o"))._specs
    assert [tuple(s.shape) for s in theirs] == [tuple(s.shape) for s in mine] == [(6, 8)]
    assert [str(s.dtype) for s in theirs] == [str(s.dtype) for s in mine]
