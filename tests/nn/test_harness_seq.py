"""Recurrent and transformer layers through the layer checker (tests/layer_check.py): each id is
one configuration, checked against real Paddle (when installed) and float64 finite
differences."""

from __future__ import annotations

import numpy as np
import pytest

from tests.layer_check import case, input_makers, run_case

x, ints = input_makers(2)


def _rnn(ident, cls, shape, *args, slow=False, call=None, extra=(), known=None, **kw):
    return case(ident, lambda L: getattr(L.nn, cls)(*args, **kw), [x(*shape), *extra],
                slow=slow, call=call, known=known)


def _with_states(layer, v, *states):
    return layer(v, states[0] if len(states) == 1 else tuple(states))


def _cell(L, kind, *args, **kw):
    return getattr(L.nn, kind)(*args, **kw)


RNN = [
    *_rnn("SimpleRNN", "SimpleRNN", (2, 4, 3), 3, 5),
    *_rnn("SimpleRNN-relu", "SimpleRNN", (2, 4, 3), 3, 5, activation="relu"),
    *_rnn("SimpleRNN-2layers-bidirect", "SimpleRNN", (2, 4, 3), 3, 4, num_layers=2,
          direction="bidirect"),
    *_rnn("SimpleRNN-time_major", "SimpleRNN", (4, 2, 3), 3, 4, time_major=True),
    *_rnn("LSTM", "LSTM", (2, 4, 3), 3, 5),
    *_rnn("LSTM-initial-states", "LSTM", (2, 4, 3), 3, 5, call=_with_states,
          extra=(x(1, 2, 5), x(1, 2, 5))),
    *_rnn("LSTM-bidirect", "LSTM", (2, 4, 3), 3, 4, direction="bidirect"),
    *_rnn("LSTM-2layers", "LSTM", (2, 3, 3), 3, 4, num_layers=2, slow=True),
    *_rnn("LSTM-sequence_length", "LSTM", (3, 4, 3), 3, 4,
          call=lambda layer, v, n: layer(v, None, n), extra=(np.array([4, 2, 3]),)),
    *_rnn("GRU", "GRU", (2, 4, 3), 3, 5),
    *_rnn("GRU-initial-state", "GRU", (2, 4, 3), 3, 5, call=_with_states,
          extra=(x(1, 2, 5),)),
    *_rnn("GRU-bidirect-time_major", "GRU", (4, 2, 3), 3, 4, direction="bidirect",
          time_major=True),
    *case("SimpleRNNCell", lambda L: L.nn.SimpleRNNCell(3, 4), [x(2, 3), x(2, 4)]),
    # a zero initial state gives weight_hh no gradient on the first step
    *case("SimpleRNNCell-no-state", lambda L: L.nn.SimpleRNNCell(3, 4), [x(2, 3)],
          frozen=("weight_hh",)),
    *case("LSTMCell", lambda L: L.nn.LSTMCell(3, 4), [x(2, 3), x(2, 4), x(2, 4)],
          call=lambda layer, v, h, c: layer(v, (h, c))),
    *case("GRUCell", lambda L: L.nn.GRUCell(3, 4), [x(2, 3), x(2, 4)]),
    *case("RNN-LSTMCell", lambda L: L.nn.RNN(L.nn.LSTMCell(3, 4)), [x(2, 4, 3)]),
    *case("RNN-GRUCell-reverse", lambda L: L.nn.RNN(L.nn.GRUCell(3, 4), is_reverse=True),
          [x(2, 4, 3)]),
    *case("BiRNN", lambda L: L.nn.BiRNN(L.nn.SimpleRNNCell(3, 4), L.nn.SimpleRNNCell(3, 4)),
          [x(2, 4, 3)]),
]


def _mha(L, **kw):
    return L.nn.MultiHeadAttention(8, 2, **kw)


def _enc_layer(L, **kw):
    return L.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, **kw)


def _dec_layer(L, **kw):
    return L.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, **kw)


_CAUSAL = np.triu(np.full((3, 3), -1e9, np.float32), 1)

TRANSFORMER = [
    *case("MultiHeadAttention-self", lambda L: _mha(L), [x(2, 3, 8)]),
    *case("MultiHeadAttention-qkv", lambda L: _mha(L, kdim=6, vdim=5),
          [x(2, 3, 8), x(2, 4, 6), x(2, 4, 5)]),
    *case("MultiHeadAttention-weights-mask", lambda L: _mha(L, need_weights=True),
          [x(2, 3, 8), _CAUSAL], call=lambda layer, q, m: layer(q, q, q, attn_mask=m)),
    *case("MultiHeadAttention-no-bias", lambda L: _mha(L, bias_attr=False), [x(2, 3, 8)]),
    *case("MultiHeadAttention-dropout-eval", lambda L: _mha(L, dropout=0.5), [x(2, 3, 8)],
          mode="eval"),
    *case("TransformerEncoderLayer", lambda L: _enc_layer(L), [x(2, 3, 8)]),
    *case("TransformerEncoderLayer-pre-norm-gelu",
          lambda L: _enc_layer(L, normalize_before=True, activation="gelu"), [x(2, 3, 8)]),
    *case("TransformerEncoderLayer-mask", lambda L: _enc_layer(L), [x(2, 3, 8), _CAUSAL]),
    *case("TransformerEncoderLayer-dropout-eval",
          lambda L: L.nn.TransformerEncoderLayer(8, 2, 16), [x(2, 3, 8)], mode="eval"),
    *case("TransformerDecoderLayer", lambda L: _dec_layer(L), [x(2, 3, 8), x(2, 4, 8)]),
    *case("TransformerDecoderLayer-pre-norm-mask",
          lambda L: _dec_layer(L, normalize_before=True), [x(2, 3, 8), x(2, 4, 8), _CAUSAL]),
    *case("TransformerEncoder-2layers-norm",
          lambda L: L.nn.TransformerEncoder(_enc_layer(L), 2, norm=L.nn.LayerNorm(8)),
          [x(2, 3, 8)], slow=True),
    *case("TransformerDecoder-2layers",
          lambda L: L.nn.TransformerDecoder(_dec_layer(L), 2), [x(2, 3, 8), x(2, 4, 8)],
          slow=True),
    *case("Transformer", lambda L: L.nn.Transformer(
        8, 2, 1, 1, 16, dropout=0.0), [x(2, 4, 8), x(2, 3, 8)], slow=True),
]


@pytest.mark.parametrize("make, inputs, kw", RNN + TRANSFORMER)
def test_layer(oracle, make, inputs, kw):
    run_case(oracle, make, inputs, kw)


def test_lstm_cell_takes_an_integer_c_as_floats():
    """An integer c state is computed as the float values it holds (as Paddle's cell does);
    an integer h is refused."""
    import paddle_hl

    cell = paddle_hl.nn.LSTMCell(3, 4)
    v = paddle_hl.to_tensor(x(2, 3))
    h = paddle_hl.to_tensor(x(2, 4))
    c = np.array([[1, -2, 0, 3], [2, 1, -1, 0]])
    out_i, (_, ci) = cell(v, (h, paddle_hl.to_tensor(c)))
    out_f, (_, cf) = cell(v, (h, paddle_hl.to_tensor(c.astype(np.float32))))
    assert out_i.dtype == paddle_hl.float32 and ci.dtype == paddle_hl.float32
    np.testing.assert_array_equal(out_i.numpy(), out_f.numpy())
    np.testing.assert_array_equal(ci.numpy(), cf.numpy())
    with pytest.raises(ValueError, match=r"LSTMCell: states\[0\] \(h\)"):
        cell(v, (paddle_hl.to_tensor(c), h))
