"""Model.fit / evaluate / predict take what Paddle takes: besides a Dataset or DataLoader, any
iterable of batches (lists of NumPy arrays or Tensors, generators)."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle


def _batches(n=3):
    rng = np.random.default_rng(0)
    return [(rng.standard_normal((4, 3)).astype("float32"),
             rng.integers(0, 2, (4, 1)).astype("int64")) for _ in range(n)]


def _model(lib, net):
    m = lib.Model(net, inputs=[lib.static.InputSpec([None, 3], "float32", "x")],
                  labels=[lib.static.InputSpec([None, 1], "int64", "y")])
    m.prepare(lib.optimizer.SGD(0.1, parameters=net.parameters()), lib.nn.CrossEntropyLoss(),
              lib.metric.Accuracy())
    return m


def _net(lib):
    net = lib.nn.Linear(3, 2)
    net.weight.set_value(np.arange(6, dtype="float32").reshape(3, 2) / 10)
    net.bias.set_value(np.zeros(2, "float32"))
    return net


def _run(lib, data):
    net = _net(lib)
    m = _model(lib, net)
    m.fit(data, epochs=2, verbose=0)
    ev = m.evaluate(data, verbose=0)
    out = m.predict([(b[0],) for b in _batches()], verbose=0, stack_outputs=True)
    return net.weight.numpy(), ev, np.asarray(out[0])


def test_numpy_batches_train_like_a_dataloader():
    batches = _batches()
    xs = np.concatenate([b[0] for b in batches])
    ys = np.concatenate([b[1] for b in batches])
    loader = paddle.io.DataLoader(paddle.io.TensorDataset([paddle.to_tensor(xs),
                                                           paddle.to_tensor(ys)]),
                                  batch_size=4, shuffle=False)
    w_np, ev_np, out_np = _run(paddle, batches)
    w_dl, ev_dl, out_dl = _run(paddle, loader)
    np.testing.assert_allclose(w_np, w_dl, rtol=1e-6)
    assert ev_np["acc"] == ev_dl["acc"] and out_np.shape == (12, 2)
    tensors = [tuple(paddle.to_tensor(a) for a in b) for b in batches]
    np.testing.assert_allclose(_run(paddle, tensors)[0], w_np, rtol=1e-6)
    # a generator is one pass of batches
    m = _model(paddle, _net(paddle))
    m.fit((b for b in batches), epochs=1, verbose=0)
    with pytest.raises(TypeError, match="iterable of batches"):
        m.fit(3, verbose=0)
    with pytest.raises(TypeError, match="iterable of batches"):
        m.evaluate("data.txt", verbose=0)


@pytest.mark.parity
def test_numpy_batches_match_paddle(pd):
    w, ev, out = _run(paddle, _batches())
    w_ref, ev_ref, out_ref = _run(pd, _batches())
    np.testing.assert_allclose(w, w_ref, rtol=1e-6)
    np.testing.assert_allclose(ev["loss"], ev_ref["loss"], rtol=1e-6)
    assert ev["acc"] == ev_ref["acc"]
    np.testing.assert_allclose(out, out_ref, rtol=1e-6)
