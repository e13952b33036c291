"""``paddle.jit.save`` and ``Model.save(training=False)`` write Paddle's inference format (a
ProgramDesc ``.pdmodel``); a forward without a Paddle program form falls back to paddle_hl's
older program format with a warning naming the kernels."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.jit import _interpreter
from paddle_hl.static import InputSpec


def _cnn():
    paddle.seed(0)
    return paddle.nn.Sequential(paddle.nn.Conv2D(1, 2, 3, padding=1), paddle.nn.BatchNorm2D(2),
                                paddle.nn.ReLU(), paddle.nn.Flatten(), paddle.nn.Linear(32, 3))


def test_jit_save_writes_a_program_desc_with_free_dims(tmp_path):
    net = _cnn()
    net.eval()
    prefix = str(tmp_path / "m")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback for a mapped network
        paddle.jit.save(net, prefix, [InputSpec([None, 1, 4, 4], "float32", "x")])
    assert _interpreter.is_program_desc(prefix + ".pdmodel")
    prog = _interpreter.read_program(prefix + ".pdmodel")
    assert prog.feeds == [("x", [-1, 1, 4, 4], "float32")]
    loaded = paddle.jit.load(prefix)
    assert isinstance(loaded, paddle.jit.TranslatedLayer)
    assert [tuple(s.shape) for s in loaded._specs] == [(-1, 1, 4, 4)]
    for b in (1, 5):
        x = paddle.randn([b, 1, 4, 4])
        np.testing.assert_allclose(loaded(x).numpy(), net(x).numpy(), rtol=1e-5, atol=1e-6)
    # batch-norm statistics stay out of training, as the .pdiparams.info records
    frozen = {p.name for p in loaded.parameters() if p.stop_gradient}
    assert frozen == {net[1]._mean.name, net[1]._variance.name}
    loaded(paddle.randn([2, 1, 4, 4])).sum().backward()
    assert all(p.grad is not None for p in loaded.parameters() if not p.stop_gradient)


def test_jit_save_of_a_training_model_runs_it_in_eval_mode_and_keeps_its_statistics(tmp_path):
    """Checking the written program called the layer in its own (training) mode: batch
    statistics made the check fail and updated the running statistics."""
    net = _cnn()
    net.train()
    mean = net[1]._mean.numpy().copy()
    paddle.jit.save(net, str(tmp_path / "m"), [InputSpec([None, 1, 4, 4], "float32")])
    assert net.training and net[1].training
    np.testing.assert_array_equal(net[1]._mean.numpy(), mean)
    x = paddle.randn([3, 1, 4, 4])
    net.eval()
    np.testing.assert_allclose(paddle.jit.load(str(tmp_path / "m"))(x).numpy(), net(x).numpy(),
                               rtol=1e-5, atol=1e-6)


def test_model_save_for_inference_writes_a_program_desc(tmp_path):
    net = _cnn()
    model = paddle.Model(net, inputs=[InputSpec([None, 1, 4, 4], "float32", "x")])
    model.save(str(tmp_path / "inf"), training=False)
    assert _interpreter.is_program_desc(str(tmp_path / "inf.pdmodel"))
    x = paddle.randn([2, 1, 4, 4])
    net.eval()
    np.testing.assert_allclose(paddle.jit.load(str(tmp_path / "inf"))(x).numpy(),
                               net(x).numpy(), rtol=1e-5, atol=1e-6)


def test_forward_without_paddle_form_falls_back_with_the_kernels_named(tmp_path):
    class Odd(paddle.nn.Layer):
        def forward(self, x):
            return paddle.cumsum(x, axis=1) * 2

    prefix = str(tmp_path / "o")
    with pytest.warns(UserWarning, match=r"real Paddle cannot read.*cumsum") as rec:
        paddle.jit.save(Odd(), prefix, [InputSpec([None, 3], "float32")])
    assert prefix + ".pdmodel" in str(rec[0].message)
    assert not _interpreter.is_program_desc(prefix + ".pdmodel")
    x = paddle.randn([4, 3])
    np.testing.assert_allclose(paddle.jit.load(prefix)(x).numpy(), Odd()(x).numpy())
