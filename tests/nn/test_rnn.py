"""Recurrent layers: cells, RNN/BiRNN, SimpleRNN/LSTM/GRU, BeamSearchDecoder, dynamic_decode."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import paddle_hl
from paddle_hl.backend import _openblas
from paddle_hl.framework.op import apply
from paddle_hl.nn.functional import rnn as rnn_kernels
from paddle_hl.nn.functional.rnn import _cell_kernel, _seq_kernel
from tests.op_check import gradcheck

nn = paddle_hl.nn


# ---------------------------------------------------------------------------- helpers
def _copy_state(src, dst):
    """Copy a real-Paddle layer's state into ours; the keys must be identical."""
    theirs, ours = src.state_dict(), dst.state_dict()
    assert list(theirs) == list(ours)
    missing, unexpected = dst.set_state_dict({k: v.numpy() for k, v in theirs.items()})
    assert not missing and not unexpected


def _weights(shapes, dtype, seed=1):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def _run(lib, layer, arrays, kwargs, train=True, grad=True):
    """Forward + backward of a weighted sum of every output; returns outputs and grads."""
    layer.train() if train else layer.eval()
    ts = [lib.to_tensor(a, stop_gradient=False) if a is not None else None for a in arrays]
    kw = {k: lib.to_tensor(v) for k, v in kwargs.items()}
    if len(ts) > 1:
        st = ts[1] if len(ts) == 2 else tuple(ts[1:])
        y, states = layer(ts[0], st, **kw)
    else:
        y, states = layer(ts[0], **kw)
    flat = [y] + (list(_flat(states)))
    ws = _weights([o.shape for o in flat], arrays[0].dtype)
    loss = None
    for o, w in zip(flat, ws):
        term = (o * lib.to_tensor(w)).sum()
        loss = term if loss is None else loss + term
    if not grad:
        return [o.numpy() for o in flat]
    loss.backward()
    return ([o.numpy() for o in flat] + [t.grad.numpy() for t in ts if t is not None]
            + [p.grad.numpy() if p.grad is not None else np.zeros(p.shape)
               for p in layer.parameters()])


def _flat(s):
    if isinstance(s, (list, tuple)):
        for v in s:
            yield from _flat(v)
    else:
        yield s


def _compare(a, b, tol=1e-4):
    assert len(a) == len(b)
    for i, (u, v) in enumerate(zip(a, b)):
        assert u.shape == v.shape, f"item {i}: {u.shape} vs {v.shape}"
        np.testing.assert_allclose(v, u, rtol=tol, atol=tol, err_msg=f"item {i}")


# ---------------------------------------------------------------------------- networks
NET_CONFIGS = [
    dict(),
    dict(num_layers=2),
    dict(direction="bidirect"),
    dict(num_layers=2, direction="bidirectional", time_major=True),
    dict(num_layers=3, dropout=0.3),
]


@pytest.mark.parity
@pytest.mark.parametrize("name", ["SimpleRNN", "LSTM", "GRU"])
@pytest.mark.parametrize("cfg", NET_CONFIGS)
@pytest.mark.parametrize("seq", [False, True])
def test_network_parity(pd, name, cfg, seq):
    pd.seed(7)
    theirs = getattr(pd.nn, name)(3, 5, **cfg)
    ours = getattr(nn, name)(3, 5, **cfg)
    _copy_state(theirs, ours)
    assert repr(ours) == repr(theirs)
    rng = np.random.default_rng(0)
    shape = (6, 4, 3) if cfg.get("time_major") else (4, 6, 3)
    x = rng.standard_normal(shape).astype("float32")
    kw = {"sequence_length": np.array([6, 2, 1, 4], dtype="int64")} if seq else {}
    # dropout's random stream differs: compare in eval mode, forward only (Paddle's rnn op
    # cannot run backward in eval mode with dropout > 0)
    train = not cfg.get("dropout")
    _compare(_run(pd, theirs, [x], kw, train, grad=train),
             _run(paddle_hl, ours, [x], kw, train, grad=train))


@pytest.mark.parity
@pytest.mark.parametrize("name", ["SimpleRNN", "LSTM", "GRU"])
def test_network_initial_states_parity(pd, name):
    cfg = dict(num_layers=2, direction="bidirect")
    theirs = getattr(pd.nn, name)(3, 4, **cfg)
    ours = getattr(nn, name)(3, 4, **cfg)
    _copy_state(theirs, ours)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 5, 3)).astype("float32")
    h0 = rng.standard_normal((4, 2, 4)).astype("float32")
    arrays = [x, h0] + ([rng.standard_normal((4, 2, 4)).astype("float32")]
                        if name == "LSTM" else [])
    _compare(_run(pd, theirs, arrays, {}), _run(paddle_hl, ours, arrays, {}))
    # with sequence_length, Paddle 2.6.2's weight gradients of the reverse direction disagree
    # with its own finite differences when h0 != 0: compare the forward pass only (the
    # gradients are checked numerically in test_multilayer_parameter_grads_match_numeric)
    kw = {"sequence_length": np.array([3, 5])}
    _compare(_run(pd, theirs, arrays, kw, grad=False),
             _run(paddle_hl, ours, arrays, kw, grad=False))


@pytest.mark.parity
def test_simple_rnn_relu_parity(pd):
    theirs = pd.nn.SimpleRNN(3, 4, activation="relu", direction="bidirect")
    ours = nn.SimpleRNN(3, 4, activation="relu", direction="bidirect")
    _copy_state(theirs, ours)
    x = np.random.default_rng(3).standard_normal((3, 4, 3)).astype("float32")
    _compare(_run(pd, theirs, [x], {}), _run(paddle_hl, ours, [x], {}))


@pytest.mark.parity
def test_network_float64_parity(pd):
    pd.set_default_dtype("float64")
    try:
        theirs = pd.nn.GRU(3, 4, num_layers=2)
    finally:
        pd.set_default_dtype("float32")
    paddle_hl.set_default_dtype("float64")
    ours = nn.GRU(3, 4, num_layers=2)
    paddle_hl.set_default_dtype("float32")
    _copy_state(theirs, ours)
    x = np.random.default_rng(4).standard_normal((2, 5, 3))
    a, b = _run(pd, theirs, [x], {}), _run(paddle_hl, ours, [x], {})
    assert b[0].dtype == np.float64
    _compare(a, b, tol=1e-10)


def test_network_state_dict_keys_and_unique_params():
    m = nn.LSTM(3, 4, num_layers=2, direction="bidirect")
    keys = list(m.state_dict())
    flat = [f"{w}_l{layer}{s}" for layer in range(2) for s in ("", "_reverse")
            for w in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
    assert keys[:16] == flat
    assert keys[16:20] == ["0.cell_fw.weight_ih", "0.cell_fw.weight_hh", "0.cell_fw.bias_ih",
                           "0.cell_fw.bias_hh"]
    # each parameter is created once with a unique name (the flat keys alias the cells')
    params = m.parameters()
    assert len(params) == 16
    assert len({p.name for p in params}) == 16
    assert m.weight_ih_l1_reverse is m[1].cell_bw.weight_ih
    assert m.state_dict()["weight_hh_l0"] is m.state_dict()["0.cell_fw.weight_hh"]
    assert [p.shape for p in params[:4]] == [[16, 3], [16, 4], [16], [16]]
    assert params[4].shape == [16, 3] and m.weight_ih_l1.shape == [16, 8]


def test_network_state_dict_round_trip():
    a = nn.GRU(3, 4, num_layers=2, direction="bidirect")
    b = nn.GRU(3, 4, num_layers=2, direction="bidirect")
    b.set_state_dict(a.state_dict())
    x = paddle_hl.randn([2, 5, 3])
    np.testing.assert_array_equal(a(x)[0].numpy(), b(x)[0].numpy())
    c = copy.deepcopy(a)
    np.testing.assert_array_equal(a(x)[1].numpy(), c(x)[1].numpy())


def test_network_repr():
    assert repr(nn.SimpleRNN(3, 4, dropout=0.5, activation="relu")) == (
        "SimpleRNN(3, 4, dropout=0.5\n  (0): RNN(\n    (cell): SimpleRNNCell(3, 4, "
        "activation=relu)\n  )\n)")
    assert nn.GRU(3, 4, num_layers=3, time_major=True, dropout=0.1).extra_repr() == \
        "3, 4, num_layers=3, time_major=True, dropout=0.1"
    assert nn.LSTM(3, 4, direction="bidirect").extra_repr() == "3, 4"
    assert isinstance(nn.LSTM(3, 4), nn.LayerList)


def test_network_shapes_and_masking():
    m = nn.LSTM(3, 4, num_layers=2, direction="bidirect", time_major=True)
    x = paddle_hl.randn([6, 2, 3])
    y, (h, c) = m(x, sequence_length=paddle_hl.to_tensor([6, 3]))
    assert y.shape == [6, 2, 8] and h.shape == [4, 2, 4] and c.shape == [4, 2, 4]
    np.testing.assert_array_equal(y.numpy()[3:, 1], 0)  # padded steps give zero outputs
    # the final state of a padded sequence equals the state of the truncated run
    y2, (h2, _) = m(x[:3, 1:2])
    np.testing.assert_allclose(h.numpy()[:, 1], h2.numpy()[:, 0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(y.numpy()[:3, 1], y2.numpy()[:, 0], rtol=1e-5, atol=1e-6)


def test_network_dropout_train_and_eval():
    paddle_hl.seed(1)
    m = nn.SimpleRNN(3, 4, num_layers=2, dropout=0.5)
    x = paddle_hl.randn([2, 5, 3])
    m.eval()
    e1, e2 = m(x)[0].numpy(), m(x)[0].numpy()
    np.testing.assert_array_equal(e1, e2)
    m.train()
    t1 = m(x)[0].numpy()
    assert not np.allclose(t1, e1)  # dropout is active between the layers
    m1 = nn.SimpleRNN(3, 4, num_layers=1, dropout=0.5)  # nothing between layers to drop
    np.testing.assert_array_equal(m1(x)[0].numpy(), m1.eval()(x)[0].numpy())


def test_network_empty_batch():
    m = nn.GRU(3, 4)
    y, h = m(paddle_hl.zeros([0, 5, 3]))
    assert y.shape == [0, 5, 4] and h.shape == [1, 0, 4]


def test_network_errors():
    with pytest.raises(ValueError, match="direction should be forward or bidirect"):
        nn.LSTM(3, 4, direction="backward")
    with pytest.raises(ValueError, match="Unknown activation"):
        nn.SimpleRNN(3, 4, activation="sigmoid")
    m = nn.LSTM(3, 4)
    with pytest.raises(ValueError, match=r"LSTM: expected 3-D inputs.*\[4, 3\]"):
        m(paddle_hl.randn([4, 3]))
    with pytest.raises(ValueError, match=r"LSTM: expected inputs with input_size=3"):
        m(paddle_hl.randn([2, 4, 5]))
    with pytest.raises(ValueError, match=r"initial states of shape .*\[1, 2, 4\]"):
        m(paddle_hl.randn([2, 4, 3]), (paddle_hl.zeros([1, 3, 4]), paddle_hl.zeros([1, 2, 4])))
    with pytest.raises(ValueError, match=r"sequence_length must have shape \[batch_size\]"):
        m(paddle_hl.randn([2, 4, 3]), sequence_length=paddle_hl.to_tensor([1, 2, 3]))
    with pytest.raises(ValueError, match="dtype"):
        m(paddle_hl.randn([2, 4, 3], dtype="float64"))


def test_param_attr_false_freezes_constants():
    cell = nn.LSTMCell(2, 3, weight_ih_attr=False, bias_hh_attr=False)
    assert list(cell.state_dict()) == ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]
    assert cell.weight_ih.stop_gradient and cell.bias_hh.stop_gradient
    np.testing.assert_array_equal(cell.weight_ih.numpy(), 1)
    np.testing.assert_array_equal(cell.bias_hh.numpy(), 0)
    m = nn.GRU(2, 3, bias_ih_attr=False)
    assert list(m.state_dict())[:3] == ["weight_ih_l0", "weight_hh_l0", "bias_hh_l0"]
    assert len(m.parameters()) == 4
    y, _ = m(paddle_hl.randn([2, 4, 2]))
    y.sum().backward()
    assert m[0].cell.bias_ih.grad is None


def test_network_parameter_init_range():
    m = nn.GRU(3, 16)
    bound = 1.0 / np.sqrt(16)
    for p in m.parameters():
        assert np.all(np.abs(p.numpy()) <= bound)
        assert p.numpy().std() > bound / 4


# ---------------------------------------------------------------------------- cells
@pytest.mark.parity
@pytest.mark.parametrize("name,kw", [("SimpleRNNCell", {}), ("SimpleRNNCell",
                                                          {"activation": "relu"}),
                                     ("LSTMCell", {}), ("GRUCell", {})])
@pytest.mark.parametrize("with_states", [False, True])
def test_cell_parity(pd, name, kw, with_states):
    theirs = getattr(pd.nn, name)(3, 4, **kw)
    ours = getattr(nn, name)(3, 4, **kw)
    _copy_state(theirs, ours)
    assert repr(ours) == repr(theirs)
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal((5, 3)).astype("float32")]
    if with_states:
        n = 2 if name == "LSTMCell" else 1
        arrays += [rng.standard_normal((5, 4)).astype("float32") for _ in range(n)]
    _compare(_run(pd, theirs, arrays, {}), _run(paddle_hl, ours, arrays, {}))


def test_cell_outputs_and_state_shape():
    cell = nn.LSTMCell(3, 4)
    y, (h, c) = cell(paddle_hl.randn([2, 3]))
    assert y is h and y.shape == [2, 4] and c.shape == [2, 4]
    assert cell.state_shape == ((4,), (4,))
    assert nn.GRUCell(3, 4).state_shape == (4,)
    assert nn.SimpleRNNCell(3, 4).extra_repr() == "3, 4"


def test_cell_get_initial_states():
    cell = nn.LSTMCell(2, 3)
    st = cell.get_initial_states(paddle_hl.randn([5, 7]), init_value=2.0, batch_dim_idx=1)
    assert [s.shape for s in st] == [[7, 3], [7, 3]]
    np.testing.assert_array_equal(st[0].numpy(), 2.0)
    assert st[0].dtype == paddle_hl.float32
    g = nn.GRUCell(2, 3).get_initial_states(paddle_hl.randn([5, 7]), dtype="float64")
    assert g.shape == [5, 3] and g.dtype == paddle_hl.float64
    base = nn.RNNCellBase()
    assert base.get_initial_states(paddle_hl.randn([4, 2]), shape=[-1, 3]).shape == [4, 3]
    nested = base.get_initial_states(paddle_hl.randn([4, 2]), shape=[[3], [2, 2]])
    assert [t.shape for t in nested] == [[4, 3], [4, 2, 2]]
    with pytest.raises(NotImplementedError, match="state_shape"):
        _ = base.state_shape
    with pytest.raises(NotImplementedError, match="state_dtype"):
        _ = base.state_dtype


def test_cell_errors():
    with pytest.raises(ValueError, match="hidden_size of LSTMCell must be greater than 0"):
        nn.LSTMCell(3, -1)
    with pytest.raises(ValueError, match="activation for SimpleRNNCell should be tanh or relu"):
        nn.SimpleRNNCell(3, 4, activation="sigmoid")
    cell = nn.GRUCell(3, 4)
    with pytest.raises(ValueError, match=r"GRUCell: expected inputs of shape .*\[2, 5\]"):
        cell(paddle_hl.randn([2, 5]))
    with pytest.raises(ValueError, match=r"GRUCell: expected states of shape .*\[2, 3\]"):
        cell(paddle_hl.randn([2, 3]), paddle_hl.randn([2, 3]))
    with pytest.raises(TypeError, match="pair"):
        nn.LSTMCell(3, 4)(paddle_hl.randn([2, 3]), paddle_hl.randn([2, 4]))


def test_cell_float64_default_states():
    cell = nn.LSTMCell(2, 3)
    cell.to(dtype="float64")
    y, (h, c) = cell(paddle_hl.randn([4, 2], dtype="float64"))
    assert y.dtype == paddle_hl.float64


# ---------------------------------------------------------------------------- RNN / BiRNN
@pytest.mark.parity
@pytest.mark.parametrize("cell_name", ["SimpleRNNCell", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize("is_reverse", [False, True])
@pytest.mark.parametrize("time_major", [False, True])
def test_rnn_wrapper_parity(pd, cell_name, is_reverse, time_major):
    theirs = pd.nn.RNN(getattr(pd.nn, cell_name)(3, 4), is_reverse=is_reverse,
                       time_major=time_major)
    ours = nn.RNN(getattr(nn, cell_name)(3, 4), is_reverse=is_reverse, time_major=time_major)
    _copy_state(theirs, ours)
    assert repr(ours) == repr(theirs)
    x = np.random.default_rng(6).standard_normal((5, 5, 3)).astype("float32")
    kw = {"sequence_length": np.array([5, 2, 3, 1, 4])}
    # outputs past a sequence's end are the cell's outputs from the held state (not zeros)
    _compare(_run(pd, theirs, [x], kw), _run(paddle_hl, ours, [x], kw))


@pytest.mark.parity
@pytest.mark.parametrize("cell_name", ["LSTMCell", "GRUCell"])
def test_birnn_parity(pd, cell_name):
    theirs = pd.nn.BiRNN(getattr(pd.nn, cell_name)(3, 4), getattr(pd.nn, cell_name)(3, 4))
    ours = nn.BiRNN(getattr(nn, cell_name)(3, 4), getattr(nn, cell_name)(3, 4))
    _copy_state(theirs, ours)
    assert repr(ours) == repr(theirs)
    x = np.random.default_rng(7).standard_normal((3, 4, 3)).astype("float32")
    kw = {"sequence_length": np.array([4, 1, 3])}
    _compare(_run(pd, theirs, [x], kw), _run(paddle_hl, ours, [x], kw))


class _PlainLSTMCell(nn.LSTMCell):
    """A user cell: the same math written with public ops, stepped by the generic loop."""

    def forward(self, inputs, states=None):
        h, c = states
        gates = paddle_hl.matmul(inputs, self.weight_ih, transpose_y=True) + self.bias_ih
        gates = gates + paddle_hl.matmul(h, self.weight_hh, transpose_y=True) + self.bias_hh
        i, f, g, o = paddle_hl.split(gates, 4, axis=-1)
        sig = nn.functional.sigmoid
        c = sig(f) * c + sig(i) * paddle_hl.tanh(g)
        h = sig(o) * paddle_hl.tanh(c)
        return h, (h, c)


@pytest.mark.parametrize("is_reverse", [False, True])
def test_generic_loop_matches_fused(is_reverse):
    fused = nn.RNN(nn.LSTMCell(3, 4), is_reverse=is_reverse)
    plain = nn.RNN(_PlainLSTMCell(3, 4), is_reverse=is_reverse)
    plain.set_state_dict(fused.state_dict())
    x = np.random.default_rng(8).standard_normal((3, 5, 3)).astype("float32")
    kw = {"sequence_length": np.array([5, 2, 4])}
    _compare(_run(paddle_hl, fused, [x], kw), _run(paddle_hl, plain, [x], kw), tol=1e-5)


def test_cell_hooks_are_honoured():
    cell = nn.GRUCell(3, 4)
    calls = []
    cell.register_forward_post_hook(lambda layer, inp, out: calls.append(1))
    y, h = nn.RNN(cell)(paddle_hl.randn([2, 5, 3]))
    assert len(calls) == 5 and y.shape == [2, 5, 4]


def test_birnn_errors():
    with pytest.raises(ValueError, match="input size of forward cell"):
        nn.BiRNN(nn.GRUCell(3, 4), nn.GRUCell(5, 4))
    b = nn.BiRNN(nn.GRUCell(3, 4), nn.GRUCell(3, 4))
    with pytest.raises(ValueError, match="pair"):
        b(paddle_hl.randn([2, 5, 3]), initial_states=paddle_hl.zeros([2, 4]))


# ---------------------------------------------------------------------------- gradients
@pytest.mark.parametrize("mode", ["RNN_TANH", "RNN_RELU", "LSTM", "GRU"])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("time_major", [False, True])
@pytest.mark.parametrize("zero_pad,masked", [(True, False), (True, True), (False, True),
                                             (False, False)])
def test_seq_kernel_gradcheck(mode, reverse, time_major, zero_pad, masked):
    rng = np.random.default_rng(9)
    g = {"LSTM": 4, "GRU": 3}.get(mode, 1) * 3
    batch, steps = 3, 4
    xshape = (steps, batch, 2) if time_major else (batch, steps, 2)
    mask = (np.arange(steps)[None, :] < np.array([4, 2, 1])[:, None]) if masked else None
    lstm = mode == "LSTM"
    arrays = [rng.standard_normal(xshape), rng.standard_normal((batch, 3)),
              rng.standard_normal((batch, 3)) if lstm else None,
              rng.standard_normal((g, 2)) * 0.5, rng.standard_normal((g, 3)) * 0.5,
              rng.standard_normal(g) * 0.5, rng.standard_normal(g) * 0.5]

    def fn(x, h0, c0, w_ih, w_hh, b_ih, b_hh):
        return apply(_seq_kernel, x, h0, c0, w_ih, w_hh, b_ih, b_hh, mask, mode=mode,
                     reverse=reverse, time_major=time_major, zero_pad=zero_pad)

    gradcheck(fn, arrays, rtol=1e-5, atol=1e-7)


def _lstm_gradcheck(seed, lengths, reverse, time_major, zero_pad, masked, steps=5, hid=2):
    """Finite-difference gradients of the fused LSTM sequence kernel for every input (initial
    states included), one sample per entry of ``lengths`` (its valid steps when masked)."""
    rng = np.random.default_rng(seed)
    batch = len(lengths)
    xshape = (steps, batch, 3) if time_major else (batch, steps, 3)
    mask = (np.arange(steps)[None, :] < np.array(lengths)[:, None]) if masked else None
    arrays = [rng.standard_normal(xshape), rng.standard_normal((batch, hid)),
              rng.standard_normal((batch, hid)), rng.standard_normal((4 * hid, 3)),
              rng.standard_normal((4 * hid, hid)), rng.standard_normal(4 * hid),
              rng.standard_normal(4 * hid)]

    def fn(x, h0, c0, w_ih, w_hh, b_ih, b_hh):
        return apply(_seq_kernel, x, h0, c0, w_ih, w_hh, b_ih, b_hh, mask, mode="LSTM",
                     reverse=reverse, time_major=time_major, zero_pad=zero_pad)

    gradcheck(fn, arrays, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("time_major", [False, True])
@pytest.mark.parametrize("zero_pad,masked", [(True, False), (True, True), (False, True)])
def test_lstm_seq_kernel_gradcheck_every_layout(reverse, time_major, zero_pad, masked):
    """The fused LSTM (gates reordered and halved inside, buffers in the layout of x) has
    finite-difference gradients for every input, initial states included, in each layout."""
    _lstm_gradcheck(21, [5, 3, 1], reverse, time_major, zero_pad, masked)


def _lstm_reference(x, h, c, w_ih, w_hh, b_ih, b_hh, lengths, reverse):
    """Plain NumPy LSTM over batch-major ``x`` (Paddle's gate order i, f, g, o), holding
    the state past each length and zeroing those outputs."""
    steps = x.shape[1]
    ys = np.zeros(x.shape[:2] + (h.shape[1],), dtype=x.dtype)
    sig = lambda a: 1.0 / (1.0 + np.exp(-a))  # noqa: E731
    for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
        a = x[:, t] @ w_ih.T + b_ih + h @ w_hh.T + b_hh
        i, f, g, o = np.split(a, 4, axis=1)
        c_new = sig(f) * c + sig(i) * np.tanh(g)
        h_new = sig(o) * np.tanh(c_new)
        live = (t < lengths)[:, None]
        h, c = np.where(live, h_new, h), np.where(live, c_new, c)
        ys[:, t] = np.where(live, h_new, 0)
    return ys, h, c


@pytest.mark.parametrize("direction", ["forward", "bidirect"])
def test_lstm_network_matches_numpy_reference(direction):
    """Two layers, float32, sequence lengths and initial states: the outputs and final states
    of the fused stack match a plain NumPy LSTM run layer by layer."""
    rng = np.random.default_rng(22)
    paddle_hl.seed(23)
    net = nn.LSTM(6, 5, num_layers=2, direction=direction)
    nd = 2 if direction == "bidirect" else 1
    x = rng.standard_normal((4, 7, 6)).astype("float32")
    lengths = np.array([7, 4, 1, 6])
    h0 = rng.standard_normal((2 * nd, 4, 5)).astype("float32")
    c0 = rng.standard_normal((2 * nd, 4, 5)).astype("float32")
    y, (h, c) = net(paddle_hl.to_tensor(x), (paddle_hl.to_tensor(h0), paddle_hl.to_tensor(c0)),
                    sequence_length=paddle_hl.to_tensor(lengths))
    sd = {k: v.numpy() for k, v in net.state_dict().items()}
    inp = x
    hs, cs = [], []
    for layer in range(2):
        outs = []
        for d in range(nd):
            suf = f"_l{layer}" + ("_reverse" if d else "")
            k = layer * nd + d
            ys, hl, cl = _lstm_reference(inp, h0[k], c0[k], sd["weight_ih" + suf],
                                         sd["weight_hh" + suf], sd["bias_ih" + suf],
                                         sd["bias_hh" + suf], lengths, d == 1)
            outs.append(ys)
            hs.append(hl)
            cs.append(cl)
        inp = np.concatenate(outs, axis=-1)
    np.testing.assert_allclose(y.numpy(), inp, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(h.numpy(), np.stack(hs), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(c.numpy(), np.stack(cs), rtol=1e-5, atol=1e-5)


def test_lstm_seq_kernel_leaves_inputs_and_outputs_independent():
    """The fused LSTM keeps private copies of what its backward reads: changing the returned
    outputs in place does not change the gradients."""
    rng = np.random.default_rng(24)
    arrays = [rng.standard_normal(s).astype("float32") for s in
              [(2, 4, 3), (2, 2), (2, 2), (8, 3), (8, 2), (8,), (8,)]]

    def grads(scribble):
        ts = [paddle_hl.to_tensor(a, stop_gradient=False) for a in arrays]
        y, h, c = apply(_seq_kernel, *ts, None, mode="LSTM", reverse=False, time_major=False,
                        zero_pad=True)
        loss = (h * 2.0).sum() + c.sum()
        if scribble:
            y._data[...] = 7.0
            h._data[...] = 7.0
        loss.backward()
        return [t.grad.numpy() for t in ts]

    for a, b in zip(grads(False), grads(True)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("masked", [False, True])
def test_lstm_backward_twice_with_retain_graph(masked):
    """The first backward overwrites the saved activations with gate gradients; a second
    backward through the same graph recomputes them and gets the same gradients."""
    paddle_hl.seed(25)
    net = nn.LSTM(3, 4, direction="bidirect")
    x = paddle_hl.to_tensor(np.random.default_rng(26).standard_normal((2, 5, 3)),
                            dtype="float32", stop_gradient=False)
    kw = {"sequence_length": paddle_hl.to_tensor([5, 2])} if masked else {}
    y, (h, c) = net(x, **kw)
    loss = (y * y).sum() + h.sum() + (c * 0.5).sum()
    loss.backward(retain_graph=True)
    first = [p.grad.numpy().copy() for p in net.parameters()] + [x.grad.numpy().copy()]
    loss.backward()
    second = [p.grad.numpy() for p in net.parameters()] + [x.grad.numpy()]
    for a, b in zip(first, second):
        np.testing.assert_allclose(b, 2 * a, rtol=1e-5, atol=1e-6)


def _forced_shards(bounds):
    return lambda xp, batch, hidden, steps: [slice(a, b) for a, b in zip(bounds[:-1],
                                                                        bounds[1:])]


@pytest.mark.parametrize("reverse,time_major,masked", [(False, False, False),
                                                       (True, True, True), (False, True, True)])
def test_lstm_row_shards_gradcheck(monkeypatch, reverse, time_major, masked):
    """The LSTM loops split over row shards run on threads: finite-difference gradients hold
    for every input with uneven shards."""
    monkeypatch.setattr(rnn_kernels, "_row_shards", _forced_shards([0, 1, 3, 5]))
    _lstm_gradcheck(27, [4, 1, 3, 2, 4], reverse, time_major, True, masked, steps=4)


def _bidirect_lstm_grads(seed):
    """Outputs, states, input and parameter gradients of a two-layer bidirectional float64
    LSTM over sequences of several lengths, backward run twice (``retain_graph``)."""
    paddle_hl.seed(seed)
    net = nn.LSTM(4, 6, num_layers=2, direction="bidirect")
    net.to(dtype="float64")
    x = paddle_hl.to_tensor(np.random.default_rng(seed + 1).standard_normal((7, 5, 4)),
                            stop_gradient=False)
    y, (h, c) = net(x, sequence_length=paddle_hl.to_tensor([5, 3, 5, 1, 4, 2, 5]))
    loss = (y * y).sum() + (h * c).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    return [y.numpy(), h.numpy(), c.numpy(), x.grad.numpy()] + [
        p.grad.numpy() for p in net.parameters()]


def test_lstm_row_shards_match_one_shard(monkeypatch):
    """Sharded and unsharded runs of a bidirectional network agree, backward twice included."""
    one = _bidirect_lstm_grads(28)
    monkeypatch.setattr(rnn_kernels, "_row_shards", _forced_shards([0, 3, 7]))
    for a, b in zip(one, _bidirect_lstm_grads(28)):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("reverse,time_major,masked,zero_pad", [
    (True, False, True, False), (False, True, False, True), (True, False, False, True),
    (False, False, True, False)])
def test_lstm_row_shards_gradcheck_every_mode(monkeypatch, reverse, time_major, masked,
                                              zero_pad):
    """Uneven row shards (each running its own forward, backward, dW and dx): finite-difference
    gradients for every input in both directions, both layouts, with and without masks and
    zero padding."""
    monkeypatch.setattr(rnn_kernels, "_row_shards", _forced_shards([0, 2, 3, 5]))
    _lstm_gradcheck(31, [3, 4, 1, 4, 2], reverse, time_major, zero_pad, masked, steps=4)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("time_major", [False, True])
def test_lstm_row_shards_match_numpy_reference_float64(monkeypatch, reverse, time_major):
    """float64, uneven shards, sequence lengths: outputs and final states match a plain NumPy
    LSTM to float64 rounding."""
    monkeypatch.setattr(rnn_kernels, "_row_shards", _forced_shards([0, 1, 4, 6]))
    rng = np.random.default_rng(32)
    batch, steps, isz, hid = 6, 7, 3, 5
    lengths = np.array([7, 3, 1, 6, 7, 2])
    x = rng.standard_normal((batch, steps, isz))
    h0, c0 = rng.standard_normal((batch, hid)), rng.standard_normal((batch, hid))
    w = [rng.standard_normal(s) * 0.5 for s in [(4 * hid, isz), (4 * hid, hid), (4 * hid,),
                                                (4 * hid,)]]
    mask = np.arange(steps)[None, :] < lengths[:, None]
    xin = np.ascontiguousarray(x.transpose(1, 0, 2)) if time_major else x
    y, h, c = apply(_seq_kernel, *[paddle_hl.to_tensor(a) for a in [xin, h0, c0] + w], mask,
                    mode="LSTM", reverse=reverse, time_major=time_major, zero_pad=True)
    ys, hr, cr = _lstm_reference(x, h0, c0, *w, lengths, reverse)
    y = y.numpy().transpose(1, 0, 2) if time_major else y.numpy()
    np.testing.assert_allclose(y, ys, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(h.numpy(), hr, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(c.numpy(), cr, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("fused_min_rows", [1, 3])
@pytest.mark.parametrize("reverse,time_major,masked,zero_pad", [
    (False, False, False, True), (True, True, True, True), (False, False, True, False),
    (True, False, True, True)])
def test_lstm_fused_step_gemm_gradcheck(monkeypatch, fused_min_rows, reverse, time_major,
                                        masked, zero_pad):
    """Shards of many rows run one GEMM per step on [x|1|h] (here forced with a low row
    bound; with 3, shards of 1 and 2 rows project their inputs first in the same run):
    finite-difference gradients for every input."""
    monkeypatch.setattr(rnn_kernels, "_FUSED_MIN_ROWS", fused_min_rows)
    monkeypatch.setattr(rnn_kernels, "_row_shards", _forced_shards([0, 1, 4, 6]))
    _lstm_gradcheck(37, [4, 1, 3, 2, 4, 3], reverse, time_major, zero_pad, masked, steps=4)


def test_lstm_fused_and_projected_steps_agree(monkeypatch):
    """One GEMM per step of [x|1|h] and the inputs projected first give the same outputs and
    gradients to float64 rounding, bidirectional, two layers, lengths, backward twice."""
    monkeypatch.setattr(rnn_kernels, "_row_shards", _forced_shards([0, 3, 7]))
    monkeypatch.setattr(rnn_kernels, "_FUSED_MIN_ROWS", 100)
    projected = _bidirect_lstm_grads(38)
    monkeypatch.setattr(rnn_kernels, "_FUSED_MIN_ROWS", 1)
    for a, b in zip(projected, _bidirect_lstm_grads(38)):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


def _lstm_kernel_grads(arrays, reverse=False, keep=False):
    """Outputs and input gradients of one fused LSTM call on float32 ``arrays``; with
    ``keep`` the graph is returned alive (not yet differentiated) instead."""
    ts = [paddle_hl.to_tensor(a, stop_gradient=False) for a in arrays]
    y, h, c = apply(_seq_kernel, *ts, None, mode="LSTM", reverse=reverse, time_major=False,
                    zero_pad=True)
    loss = (y * y).sum() + (h * 2.0).sum() + c.sum()
    if keep:
        return ts, (y, h, c), loss
    loss.backward()
    return [o.numpy().copy() for o in (y, h, c)] + [t.grad.numpy().copy() for t in ts]


def _lstm_kernel_arrays(seed, batch=5, steps=6, isz=3, hid=4):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype("float32") for s in
            [(batch, steps, isz), (batch, hid), (batch, hid), (4 * hid, isz), (4 * hid, hid),
             (4 * hid,), (4 * hid,)]]


@pytest.mark.cpu
def test_lstm_work_buffers_reused_only_after_the_graph_is_freed(monkeypatch):
    """The kernel's buffers go back to a free list when their graph is freed and the next call
    of the same shapes takes them: results are identical to fresh buffers, and a graph that is
    still alive keeps its own buffers while other calls run."""
    monkeypatch.setattr(rnn_kernels, "_row_shards", _forced_shards([0, 2, 5]))
    rnn_kernels._work_clear()
    a, b = _lstm_kernel_arrays(33), _lstm_kernel_arrays(34)
    fresh_a = _lstm_kernel_grads(a)
    kept = rnn_kernels._work_bytes
    assert kept > 0  # the graph is gone: its buffers are on the free list
    ts, outs, loss = _lstm_kernel_grads(a, keep=True)
    assert rnn_kernels._work_bytes < kept  # taken again
    fresh_b = _lstm_kernel_grads(b)  # runs while the first graph is alive ...
    _lstm_kernel_grads(b, reverse=True)
    loss.backward()  # ... whose backward still reads its own activations
    alive_a = [o.numpy() for o in outs] + [t.grad.numpy() for t in ts]
    for x, y in zip(alive_a, fresh_a):
        np.testing.assert_array_equal(x, y)
    for x, y in zip(_lstm_kernel_grads(b), fresh_b):
        np.testing.assert_array_equal(x, y)


def test_lstm_work_buffers_bounded(monkeypatch):
    """Buffers that would take the free list past its bound are left to the allocator."""
    rnn_kernels._work_clear()
    monkeypatch.setattr(rnn_kernels, "_WORK_MAX_BYTES", 2000)
    arrays = _lstm_kernel_arrays(35, batch=3, steps=20)
    first = _lstm_kernel_grads(arrays)
    assert rnn_kernels._work_bytes <= 2000
    for x, y in zip(_lstm_kernel_grads(arrays), first):
        np.testing.assert_array_equal(x, y)
    rnn_kernels._work_clear()


def test_lstm_seq_kernel_zero_steps():
    """An empty sequence: empty outputs, the initial states as final states, and their
    gradients passed straight through."""
    arrays = _lstm_kernel_arrays(36, batch=2, steps=0)
    ts = [paddle_hl.to_tensor(a, stop_gradient=False) for a in arrays]
    y, h, c = apply(_seq_kernel, *ts, None, mode="LSTM", reverse=False, time_major=False,
                    zero_pad=True)
    assert y.shape == [2, 0, 4]
    np.testing.assert_array_equal(h.numpy(), arrays[1])
    np.testing.assert_array_equal(c.numpy(), arrays[2])
    ((h * 3.0).sum() + c.sum()).backward()
    np.testing.assert_array_equal(ts[1].grad.numpy(), np.full((2, 4), 3.0, "float32"))
    np.testing.assert_array_equal(ts[2].grad.numpy(), np.ones((2, 4), "float32"))
    assert ts[0].grad.shape == [2, 0, 3]
    np.testing.assert_array_equal(ts[4].grad.numpy(), np.zeros((16, 4), "float32"))


def test_blas_one_thread_restores_the_thread_count():
    ctl = _openblas.thread_control()
    if not ctl:
        pytest.skip("NumPy does not run on an OpenBLAS found in the process")
    before = ctl[1]()
    with _openblas.one_thread():
        with _openblas.one_thread():
            assert ctl[1]() == 1
        assert ctl[1]() == 1
    assert ctl[1]() == before


def test_row_shards_only_for_big_loops_on_several_threads():
    assert rnn_kernels._row_shards(np, 64, 4, 10) == [slice(0, 64)]
    assert rnn_kernels._row_shards(np, 4, 512, 200) == [slice(0, 4)]
    assert rnn_kernels._row_shards(np, 16, 32, 100000) == [slice(0, 16)]
    shards = rnn_kernels._row_shards(np, 64, 256, 200)
    assert shards[0].start == 0 and shards[-1].stop == 64
    assert all(a.stop == b.start for a, b in zip(shards[:-1], shards[1:]))
    ctl = _openblas.thread_control()
    if ctl and ctl[1]() >= 2 and paddle_hl.backend.num_threads() >= 2:
        assert len(shards) >= 2
        before = ctl[1]()
        ctl[0](1)  # BLAS held to one thread by the user: the loop stays on one thread too
        try:
            assert rnn_kernels._row_shards(np, 64, 256, 200) == [slice(0, 64)]
        finally:
            ctl[0](before)


@pytest.mark.parametrize("mode", ["RNN_TANH", "LSTM", "GRU"])
def test_cell_kernel_gradcheck(mode):
    rng = np.random.default_rng(10)
    g = {"LSTM": 4, "GRU": 3}.get(mode, 1) * 3
    lstm = mode == "LSTM"
    arrays = [rng.standard_normal((2, 2)), rng.standard_normal((2, 3)),
              rng.standard_normal((2, 3)) if lstm else None, rng.standard_normal((g, 2)),
              rng.standard_normal((g, 3)), rng.standard_normal(g), rng.standard_normal(g)]

    def fn(x, h, c, w_ih, w_hh, b_ih, b_hh):
        return apply(_cell_kernel, x, h, c, w_ih, w_hh, b_ih, b_hh, mode=mode)

    gradcheck(fn, arrays, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", ["SimpleRNN", "LSTM", "GRU"])
def test_multilayer_parameter_grads_match_numeric(name):
    """Multi-layer (bidirectional) networks with dropout=0 get numerically right grads
    for every parameter."""
    paddle_hl.seed(11)
    m = getattr(nn, name)(2, 3, num_layers=2, direction="bidirect", dropout=0.0)
    m.to(dtype="float64")
    x = paddle_hl.to_tensor(np.random.default_rng(12).standard_normal((2, 4, 2)))
    sl = paddle_hl.to_tensor([4, 2])
    w = np.random.default_rng(13).standard_normal((2, 4, 6))
    h0 = paddle_hl.to_tensor(np.random.default_rng(15).standard_normal((4, 2, 3)))
    init = (h0, h0 * 0.5) if name == "LSTM" else h0

    def loss():
        y, _ = m(x, init, sequence_length=sl)
        return (y * paddle_hl.to_tensor(w)).sum()

    loss().backward()
    rng = np.random.default_rng(14)
    eps = 1e-6
    for p in m.parameters():
        ana = p.grad.numpy()
        flat = p._data.reshape(-1)
        for idx in rng.choice(flat.size, size=3, replace=False):
            orig = float(flat[idx])  # a value: CuPy's flat[idx] is a view of the element
            with paddle_hl.no_grad():
                flat[idx] = orig + eps
                fp = float(loss().numpy())
                flat[idx] = orig - eps
                fm = float(loss().numpy())
            flat[idx] = orig
            np.testing.assert_allclose(ana.reshape(-1)[idx], (fp - fm) / (2 * eps), rtol=1e-5,
                                       atol=1e-7, err_msg=f"{name} {p.name}[{idx}]")


# ---------------------------------------------------------------------------- decoding
def _paddle_float_patch(pd):
    # paddle 2.6.2 calls float() on a 1-element tensor, which NumPy 2 refuses
    if not getattr(pd.Tensor, "_hl_float_patched", False):
        pd.Tensor.__float__ = lambda self: float(self.numpy().reshape(-1)[0])
        pd.Tensor._hl_float_patched = True


@pytest.mark.parity
@pytest.mark.parametrize("end_token,max_step", [(1, 6), (8, 10), (3, 0)])
def test_beam_search_parity(pd, end_token, max_step):
    _paddle_float_patch(pd)
    res = {}
    state = None
    for lib in (pd, paddle_hl):
        lib.seed(0)
        cell, emb, proj = lib.nn.GRUCell(4, 8), lib.nn.Embedding(10, 4), lib.nn.Linear(8, 10)
        if state is None:
            state = [{k: v.numpy() for k, v in m.state_dict().items()}
                     for m in (cell, emb, proj)]
        else:
            for m, sd in zip((cell, emb, proj), state):
                m.set_state_dict(sd)
        dec = lib.nn.BeamSearchDecoder(cell, start_token=0, end_token=end_token, beam_size=3,
                                       embedding_fn=emb, output_fn=proj)
        h0 = lib.to_tensor(np.random.default_rng(1).standard_normal((2, 8)).astype("float32"))
        ids, st, lengths = lib.nn.dynamic_decode(dec, inits=h0, max_step_num=max_step,
                                                 return_length=True)
        res[lib] = [ids.numpy(), st.log_probs.numpy(), st.finished.numpy(), lengths.numpy(),
                    st.cell_states.numpy()]
    a, b = res[pd], res[paddle_hl]
    np.testing.assert_array_equal(b[0], a[0])
    np.testing.assert_allclose(b[1], a[1], rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(b[2], a[2])
    np.testing.assert_array_equal(b[3], a[3])
    np.testing.assert_allclose(b[4], a[4], rtol=1e-5, atol=1e-5)


def test_beam_search_helpers_and_time_major():
    x = paddle_hl.to_tensor(np.arange(6.0).reshape(2, 3).astype("float32"))
    tiled = nn.BeamSearchDecoder.tile_beam_merge_with_batch(x, 2)
    np.testing.assert_array_equal(tiled.numpy(), np.repeat(x.numpy(), 2, axis=0))
    cell = nn.LSTMCell(4, 5)
    dec = nn.BeamSearchDecoder(cell, 0, 1, 2, nn.Embedding(7, 4), nn.Linear(5, 7))
    assert dec.tracks_own_finished
    assert nn.BeamSearchDecoder.OutputWrapper._fields == ("scores", "predicted_ids",
                                                          "parent_ids")
    h0 = (paddle_hl.zeros([3, 5]), paddle_hl.zeros([3, 5]))
    ids, states = nn.dynamic_decode(dec, h0, max_step_num=4, output_time_major=True)
    assert ids.shape[1:] == [3, 2] and ids.shape[0] <= 5
    assert ids.dtype == paddle_hl.int64
    assert [t.shape for t in states.cell_states] == [[3, 2, 5], [3, 2, 5]]
    with pytest.raises(ValueError, match="beam_size"):
        nn.BeamSearchDecoder(cell, 0, 1, 0)


class _GreedyDecoder:
    """A decoder that does not track its own finished flags (dynamic_decode does)."""

    def __init__(self, cell, proj, stop_after):
        self.cell, self.proj, self.stop_after = cell, proj, stop_after

    def initialize(self, inits):
        batch = inits.shape[0]
        return (paddle_hl.zeros([batch, 3]), inits,
                paddle_hl.to_tensor(np.zeros(batch, dtype=bool)))

    def step(self, time, inputs, states, **kwargs):
        out, new = self.cell(inputs, states)
        logits = self.proj(out)
        t = int(time.numpy()[0])
        finished = paddle_hl.to_tensor(np.arange(states.shape[0]) < t - self.stop_after + 2)
        return logits, new, paddle_hl.zeros([states.shape[0], 3]), finished


def test_dynamic_decode_untracked_finished():
    dec = _GreedyDecoder(nn.GRUCell(3, 4), nn.Linear(4, 5), stop_after=2)
    out, st, lengths = dynamic_out = nn.dynamic_decode(
        dec, paddle_hl.zeros([3, 4]), impute_finished=True, return_length=True)
    assert len(dynamic_out) == 3
    assert out.shape[0] == 3 and out.shape[2] == 5 and st.shape == [3, 4]
    # sequence i finishes at step i + 1 -> its length counts the steps before it finished
    np.testing.assert_array_equal(lengths.numpy(), [2, 3, 4])
