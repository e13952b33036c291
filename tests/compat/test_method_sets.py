"""The public methods and attributes of every ``paddle.nn`` layer class, of ``Tensor`` and of
``Parameter`` are Paddle 2.6.2's, found by introspection (``dir()``, names not starting with
``_``, compared both ways) on the classes and on instances built with the same arguments, and
the methods model code calls behave as Paddle's (``flatten_parameters``, the 1-D pools'
attributes, ``Parameter.initialize`` after ``LazyGuard``)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import paddle_hl as paddle

# Differences that stay, as {(class name, attribute): why}. Empty today: every difference the
# audit found was fixed. A name added here must say why model code cannot notice it (for
# instance a method that only has a meaning for Paddle's static graph).
KNOWN_DIFFERENCES: dict[tuple[str, str], str] = {}

# constructor arguments tried in turn; the first that Paddle accepts is used for both
_ARG_SETS = [(), (4,), (4, 4), (4, 4, 3), (2, 4, 4), (4, 2)]


def _special(m):
    """Layers that none of the argument sets above builds."""
    return {
        "BiRNN": lambda: m.nn.BiRNN(m.nn.SimpleRNNCell(4, 4), m.nn.SimpleRNNCell(4, 4)),
        "RNN": lambda: m.nn.RNN(m.nn.LSTMCell(4, 4)),
        "SpectralNorm": lambda: m.nn.SpectralNorm([4, 4]),
        "TransformerEncoder": lambda: m.nn.TransformerEncoder(
            m.nn.TransformerEncoderLayer(8, 2, 16), 2),
        "TransformerDecoder": lambda: m.nn.TransformerDecoder(
            m.nn.TransformerDecoderLayer(8, 2, 16), 2),
    }


def _public(obj) -> set[str]:
    return {n for n in dir(obj) if not n.startswith("_")}


def _diff(label, theirs, ours, out):
    for name in sorted(theirs - ours):
        if (label, name) not in KNOWN_DIFFERENCES:
            out.append(f"{label}: missing {name}")
    for name in sorted(ours - theirs):
        if (label, name) not in KNOWN_DIFFERENCES:
            out.append(f"{label}: extra {name}")


def _layer_classes(pd):
    return sorted(n for n in dir(pd.nn) if inspect.isclass(getattr(pd.nn, n))
                  and issubclass(getattr(pd.nn, n), pd.nn.Layer))


@pytest.mark.parity
def test_layer_method_sets_match_paddle(pd):
    names = _layer_classes(pd)
    assert len(names) >= 127  # the audit covers every layer class of paddle.nn
    special_pd, special_hl = _special(pd), _special(paddle)
    problems, compared = [], 0
    for name in names:
        theirs_cls, ours_cls = getattr(pd.nn, name), getattr(paddle.nn, name, None)
        if ours_cls is None:
            problems.append(f"{name}: class missing")
            continue
        _diff(name, _public(theirs_cls), _public(ours_cls), problems)
        if name in special_pd:
            theirs, ours = special_pd[name](), special_hl[name]()
        else:
            for args in _ARG_SETS:
                try:
                    theirs = theirs_cls(*args)
                except Exception:  # noqa: BLE001 - the next argument set is tried
                    continue
                ours = ours_cls(*args)
                break
            else:
                problems.append(f"{name}: no argument set builds Paddle's layer; add a builder")
                continue
        _diff(name, _public(theirs), _public(ours), problems)
        compared += 1
    assert problems == []
    assert compared == len(names)
    stale = [k for k in KNOWN_DIFFERENCES if k[0] not in names + ["Tensor", "Parameter"]]
    assert stale == []


@pytest.mark.parity
def test_tensor_and_parameter_method_sets_match_paddle(pd):
    problems = []
    _diff("Tensor", _public(type(pd.to_tensor([1.0]))), _public(paddle.Tensor), problems)
    for make in (lambda m: m.to_tensor([1.0, 2.0]), lambda m: m.to_tensor([1, 2]),
                 lambda m: m.to_tensor([1.0], stop_gradient=False)):
        _diff("Tensor", _public(make(pd)), _public(make(paddle)), problems)
    theirs = pd.nn.Linear(2, 3).weight
    ours = paddle.nn.Linear(2, 3).weight
    _diff("Parameter", _public(type(theirs)), _public(type(ours)), problems)
    _diff("Parameter", _public(theirs), _public(ours), problems)
    assert problems == []


# --- behaviour of what the audit added -----------------------------------------------------------

@pytest.mark.parametrize("cls", ["SimpleRNN", "LSTM", "GRU"])
def test_flatten_parameters_keeps_parameters_and_training(cls):
    paddle.seed(0)
    rnn = getattr(paddle.nn, cls)(4, 5, num_layers=2, direction="bidirect")
    x = paddle.randn([3, 6, 4])
    before = {k: v.numpy().copy() for k, v in rnn.state_dict().items()}
    params = rnn.parameters()
    out0 = rnn(x)[0]
    out0.sum().backward()
    g0 = [p.grad.numpy().copy() for p in params]
    rnn.clear_gradients()
    assert rnn.flatten_parameters() is None
    after = rnn.state_dict()
    assert list(after) == list(before)
    for k in before:
        np.testing.assert_array_equal(after[k].numpy(), before[k])
    assert all(a is b for a, b in zip(rnn.parameters(), params))
    out1 = rnn(x)[0]
    out1.sum().backward()
    np.testing.assert_array_equal(out1.numpy(), out0.numpy())
    for p, g in zip(params, g0):
        np.testing.assert_array_equal(p.grad.numpy(), g)


@pytest.mark.parity
def test_flatten_parameters_like_paddle(pd):
    rnn = pd.nn.LSTM(4, 5, num_layers=2, direction="bidirect")
    ours = paddle.nn.LSTM(4, 5, num_layers=2, direction="bidirect")
    ours.set_state_dict({k: paddle.to_tensor(v.numpy()) for k, v in rnn.state_dict().items()})
    assert rnn.flatten_parameters() is None and ours.flatten_parameters() is None
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype("float32")
    np.testing.assert_allclose(ours(paddle.to_tensor(x))[0].numpy(),
                               rnn(pd.to_tensor(x))[0].numpy(), rtol=1e-5, atol=1e-6)
    assert list(ours.state_dict()) == list(rnn.state_dict())


def test_one_d_pools_read_paddles_attributes():
    x = paddle.arange(16, dtype="float32").reshape([1, 2, 8])
    pool = paddle.nn.MaxPool1D(2)
    assert pool.kernel_size == 2 and not hasattr(pool, "ksize")
    pool.kernel_size = 4  # model code adjusting a layer after building it
    assert pool(x).shape == [1, 2, 2]
    avg = paddle.nn.AvgPool1D(4)
    assert avg.kernel_size == 4 and avg.exclusive is True
    np.testing.assert_allclose(avg(x).numpy()[0, 0], [1.5, 5.5])
    ada = paddle.nn.AdaptiveAvgPool1D(2)
    assert ada.output_size == 2 and ada.name is None
    ada.output_size = 4
    assert ada(x).shape == [1, 2, 4]
    amax = paddle.nn.AdaptiveMaxPool1D(2, return_mask=True)
    out, mask = amax(x)
    assert amax.output_size == 2 and amax.return_mask is True
    np.testing.assert_array_equal(mask.numpy()[0, 0], [3, 7])
    assert paddle.nn.Sigmoid(name="s").name == "s" and paddle.nn.Hardsigmoid().name is None
    loss = paddle.nn.PoissonNLLLoss(full=True)
    assert not hasattr(loss, "full") and loss._full is True


@pytest.mark.parity
def test_one_d_pools_like_paddle(pd):
    x = np.random.default_rng(1).standard_normal((2, 3, 9)).astype("float32")
    for name, args, kw in [("MaxPool1D", (3,), {"stride": 2, "padding": 1}),
                           ("AvgPool1D", (3,), {"stride": 2, "padding": 1, "exclusive": False}),
                           ("AdaptiveAvgPool1D", (4,), {}),
                           ("AdaptiveMaxPool1D", (4,), {})]:
        theirs = getattr(pd.nn, name)(*args, **kw)
        ours = getattr(paddle.nn, name)(*args, **kw)
        def attrs(layer):
            return {k: v for k, v in vars(layer).items()
                    if not k.startswith("_") and k != "training"}

        assert attrs(ours) == attrs(theirs)
        np.testing.assert_allclose(ours(paddle.to_tensor(x)).numpy(),
                                   theirs(pd.to_tensor(x)).numpy(), rtol=1e-6, atol=1e-6)
        assert repr(ours) == repr(theirs)


def test_parameter_initialize_after_lazy_guard():
    with paddle.LazyGuard():
        lazy = paddle.nn.Linear(3, 2)
    w = lazy.weight
    assert not w._is_initialized()
    value = w.numpy().copy()
    w.initialize()  # what Paddle code runs after building under LazyGuard
    assert w._is_initialized()
    np.testing.assert_array_equal(w.numpy(), value)
    with pytest.raises(AssertionError, match=r"initialize: no initializer is pending"):
        w.initialize()
    eager = paddle.nn.Linear(3, 2).weight
    assert eager._is_initialized() and paddle.to_tensor(1.0)._is_initialized()
    with pytest.raises(AssertionError, match=r"outside LazyGuard"):
        eager.initialize()
    calls = []
    eager.set_init_func(lambda param, block: calls.append((param, block)))
    eager.initialize()
    assert calls == [(eager, None)]


@pytest.mark.parity
def test_parameter_initialize_like_paddle(pd):
    for m in (pd, paddle):
        with m.LazyGuard():
            w = m.nn.Linear(3, 2).weight
        assert not w._is_initialized()
        w.initialize()
        assert w._is_initialized() and tuple(w.shape) == (3, 2)
        with pytest.raises(AssertionError):
            w.initialize()
        with pytest.raises(AssertionError):
            m.nn.Linear(3, 2).weight.initialize()
