"""Recurrent layers: cells (SimpleRNNCell, LSTMCell, GRUCell), the RNN / BiRNN wrappers, the
multi-layer SimpleRNN / LSTM / GRU networks (beam search decoding is in ``nn/decode.py``).

A built-in cell run over a sequence goes through the fused kernel of
``paddle_hl.nn.functional.rnn`` (where the math and the speed notes are); a user cell (or a
built-in one with hooks) is stepped through generically with Tensor ops.
"""

from __future__ import annotations

import math

import numpy as np

from ... import backend
from ...framework import dtype as _dt
from ...framework.op import apply
from ...framework.tensor import Tensor, _wrap
from ...tensor.manipulation import concat, stack
from ..functional.flash_attention import _dropout
from ..functional.rnn import _cell_kernel, _seq_kernel
from .container import LayerList
from .layers import Layer

__all__ = []


_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# ============================================================================ structures
def _flatten(s):
    if isinstance(s, (list, tuple)):
        out = []
        for v in s:
            out.extend(_flatten(v))
        return out
    return [s]


def _pack(structure, flat, pos=0):
    """Rebuild ``structure``'s nesting from the flat list (returns value, next position)."""
    if isinstance(structure, (list, tuple)):
        vals = []
        for v in structure:
            r, pos = _pack(v, flat, pos)
            vals.append(r)
        return _rebuild(structure, vals), pos
    return flat[pos], pos + 1


def _rebuild(like, vals):
    if hasattr(like, "_fields"):  # a namedtuple takes its fields positionally
        return type(like)(*vals)
    return type(like)(vals)


def _map(fn, *structs):
    flats = [_flatten(s) for s in structs]
    return _pack(structs[0], [fn(*xs) for xs in zip(*flats)])[0]


def _is_shape(s):
    return isinstance(s, (list, tuple)) and all(isinstance(v, (int, np.integer)) for v in s)


def _seq_mask(sequence_length, steps, batch, where):
    """Bool ``[batch, steps]`` array, True where the step is inside the sequence."""
    if sequence_length is None:
        return None
    if not isinstance(sequence_length, Tensor):
        raise TypeError(f"{where}: sequence_length must be a Tensor, got "
                        f"{type(sequence_length).__name__}")
    sl = sequence_length._data
    if sl.ndim != 1 or sl.shape[0] != batch:
        raise ValueError(f"{where}: sequence_length must have shape [batch_size] = [{batch}], "
                         f"got {list(sl.shape)}")
    xp = backend.get_array_module(sl)
    return xp.arange(steps)[None, :] < sl[:, None]


# ============================================================================ cells
class RNNCellBase(Layer):
    """Base class of recurrent cells: ``forward(inputs, states)`` returns ``(outputs,
    new_states)``; subclasses describe their states with :attr:`state_shape`."""

    def get_initial_states(self, batch_ref, shape=None, dtype=None, init_value=0.0,
                           batch_dim_idx=0):
        """Initial states filled with ``init_value``, their batch size taken from ``batch_ref``.

        Args:
            batch_ref (Tensor): a tensor whose ``batch_dim_idx`` axis is the batch size.
            shape (list|tuple, optional): a (nested structure of) shape(s) without the batch
                axis (a leading -1 stands for it); default :attr:`state_shape`.
            dtype (str, optional): a dtype or a structure of dtypes matching ``shape``; default
                :attr:`state_dtype`, or the global default dtype when the cell has none.
            init_value (float): the fill value.
            batch_dim_idx (int): which axis of ``batch_ref`` is the batch.

        Returns:
            Tensor or a structure of Tensors shaped ``[batch] + shape``.
        """
        from ...tensor.creation import full  # noqa: PLC0415

        ref = _flatten(batch_ref)[0]
        if not isinstance(ref, Tensor):
            raise TypeError(f"{type(self).__name__}.get_initial_states: batch_ref must be a "
                            f"Tensor, got {type(ref).__name__}")
        batch = ref.shape[batch_dim_idx]
        shape = self.state_shape if shape is None else shape
        if dtype is None:
            try:
                dtype = self.state_dtype
            except NotImplementedError:
                dtype = _dt.get_default_dtype()

        def one(shp, dt):
            shp = [int(v) for v in shp]
            if not shp or shp[0] != -1:
                shp = [-1] + shp
            if any(v < 0 for v in shp[1:]):
                raise ValueError(f"{type(self).__name__}.get_initial_states: shape {shp} may "
                                 "only hold -1 (the batch axis) first")
            return full([batch] + shp[1:], init_value, dtype=dt)

        shapes = [shape] if _is_shape(shape) else _shape_list(shape)
        if not isinstance(dtype, (list, tuple)):
            dtypes = [dtype] * len(shapes)
        else:
            dtypes = _flatten(dtype)
        states = [one(s, d) for s, d in zip(shapes, dtypes)]
        if _is_shape(shape):
            return states[0]
        return _pack_shapes(shape, states)

    @property
    def state_shape(self):
        """The shape(s) of the cell's states, without the batch axis."""
        raise NotImplementedError(f"{type(self).__name__} must define the state_shape property "
                                  "(the shape of each state without the batch axis)")

    @property
    def state_dtype(self):
        """The dtype(s) of the cell's states."""
        raise NotImplementedError(f"{type(self).__name__} must define the state_dtype property "
                                  "(the dtype of each state)")


def _shape_list(struct):
    if _is_shape(struct):
        return [struct]
    out = []
    for s in struct:
        out.extend(_shape_list(s))
    return out


def _pack_shapes(struct, flat):
    it = iter(flat)

    def rec(s):
        if _is_shape(s):
            return next(it)
        return _rebuild(s, [rec(v) for v in s])

    return rec(struct)


class _BuiltinCell(RNNCellBase):
    """Shared construction and forward of the three built-in cells."""

    _mode = "RNN_TANH"

    def __init__(self, input_size, hidden_size, weight_ih_attr, weight_hh_attr, bias_ih_attr,
                 bias_hh_attr, name=None):
        super().__init__()
        cls = type(self).__name__
        for arg, v in (("input_size", input_size), ("hidden_size", hidden_size)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"{cls}: {arg} must be an int, got {type(v).__name__}")
            if v <= 0:
                raise ValueError(f"{arg} of {cls} must be greater than 0, but now equals to "
                                 f"{v}")
        from ..initializer import Constant, Uniform  # noqa: PLC0415

        std = 1.0 / math.sqrt(hidden_size)
        init = Uniform(-std, std)
        g = _GATES[self._mode] * hidden_size
        self.weight_ih = self._param((g, input_size), weight_ih_attr, False, init, Constant(1.0))
        self.weight_hh = self._param((g, hidden_size), weight_hh_attr, False, init,
                                     Constant(1.0))
        self.bias_ih = self._param((g,), bias_ih_attr, True, init, Constant(0.0))
        self.bias_hh = self._param((g,), bias_hh_attr, True, init, Constant(0.0))
        self.input_size = int(input_size)
        self.hidden_size = int(hidden_size)

    def _param(self, shape, attr, is_bias, init, off_init):
        # attr=False keeps the parameter (so state_dict keys stay Paddle's) as a frozen constant:
        # ones for a weight, zeros for a bias, as Paddle does
        # parameters take the global default dtype at construction, as Paddle's cells do
        dtype = _dt.get_default_dtype()
        if attr is False:
            p = self.create_parameter(list(shape), None, dtype, is_bias=is_bias,
                                      default_initializer=off_init)
            p.stop_gradient = True
            return p
        return self.create_parameter(list(shape), attr, dtype, is_bias=is_bias,
                                     default_initializer=init)

    def _check_input(self, inputs):
        cls = type(self).__name__
        if not isinstance(inputs, Tensor):
            raise TypeError(f"{cls}: inputs must be a Tensor, got {type(inputs).__name__}")
        if inputs.ndim != 2 or inputs.shape[-1] != self.input_size:
            raise ValueError(f"{cls}: expected inputs of shape [batch_size, input_size="
                             f"{self.input_size}], got {inputs.shape}")
        if inputs._data.dtype != self.weight_ih._data.dtype:
            raise ValueError(f"{cls}: inputs dtype {inputs.dtype} does not match the cell's "
                             f"parameters ({self.weight_ih.dtype})")

    def _check_state(self, st, batch, what):
        if not isinstance(st, Tensor):
            raise TypeError(f"{type(self).__name__}: {what} must be a Tensor, got "
                            f"{type(st).__name__}")
        if st.shape != [batch, self.hidden_size]:
            raise ValueError(f"{type(self).__name__}: expected {what} of shape [batch_size="
                             f"{batch}, hidden_size={self.hidden_size}], got {st.shape}")
        _check_state_dtype(st, type(self).__name__, what)

    def _zeros(self, inputs):
        xp = backend.get_array_module(inputs._data)
        return _wrap(xp.zeros((inputs.shape[0], self.hidden_size), dtype=inputs._data.dtype))

    @property
    def state_shape(self):
        return (self.hidden_size,)

    def extra_repr(self):
        return f"{self.input_size}, {self.hidden_size}"


class SimpleRNNCell(_BuiltinCell):
    """Elman RNN cell: ``h = act(x W_ihᵀ + b_ih + h₀ W_hhᵀ + b_hh)``.

    Args:
        input_size (int): size of the input features.
        hidden_size (int): size of the hidden state.
        activation (str): ``'tanh'`` (default) or ``'relu'``.
        weight_ih_attr, weight_hh_attr (ParamAttr, optional): weights ``[hidden, input]`` and
            ``[hidden, hidden]``; False freezes them at ones.
        bias_ih_attr, bias_hh_attr (ParamAttr, optional): biases ``[hidden]``; False freezes
            them at zeros.
        name (str, optional): unused.

    Inputs: ``inputs [batch, input_size]``, ``states [batch, hidden_size]`` (zeros if None).
    Returns: ``(h, h)``.

    Example:
        >>> cell = paddle.nn.SimpleRNNCell(16, 32)
        >>> y, h = cell(paddle.randn([4, 16]))
    """

    def __init__(self, input_size, hidden_size, activation="tanh", weight_ih_attr=None,
                 weight_hh_attr=None, bias_ih_attr=None, bias_hh_attr=None, name=None):
        if activation not in ("tanh", "relu"):
            raise ValueError(f"activation for SimpleRNNCell should be tanh or relu, but get "
                             f"{activation}")
        self._mode = "RNN_TANH" if activation == "tanh" else "RNN_RELU"
        super().__init__(input_size, hidden_size, weight_ih_attr, weight_hh_attr, bias_ih_attr,
                         bias_hh_attr, name)
        self.activation = activation

    def forward(self, inputs, states=None):
        self._check_input(inputs)
        if states is None:
            states = self._zeros(inputs)
        self._check_state(states, inputs.shape[0], "states")
        h = apply(_cell_kernel, inputs, states, None, self.weight_ih, self.weight_hh,
                  self.bias_ih, self.bias_hh, mode=self._mode)
        return h, h

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.activation != "tanh":
            s += f", activation={self.activation}"
        return s


class LSTMCell(_BuiltinCell):
    """Long short-term memory cell (gates i, f, g, o).

    Args:
        input_size (int): size of the input features.
        hidden_size (int): size of the hidden and cell states.
        weight_ih_attr, weight_hh_attr (ParamAttr, optional): weights ``[4*hidden, input]`` and
            ``[4*hidden, hidden]``.
        bias_ih_attr, bias_hh_attr (ParamAttr, optional): biases ``[4*hidden]``.
        name (str, optional): unused.

    Inputs: ``inputs [batch, input_size]``, ``states (h, c)`` each ``[batch, hidden_size]``
    (an integer c is taken as the float values it holds, as Paddle does; an integer h raises).
    Returns: ``(h, (h, c))``.

    Example:
        >>> cell = paddle.nn.LSTMCell(16, 32)
        >>> y, (h, c) = cell(paddle.randn([4, 16]))
    """

    _mode = "LSTM"

    def __init__(self, input_size, hidden_size, weight_ih_attr=None, weight_hh_attr=None,
                 bias_ih_attr=None, bias_hh_attr=None, name=None):
        super().__init__(input_size, hidden_size, weight_ih_attr, weight_hh_attr, bias_ih_attr,
                         bias_hh_attr, name)

    def forward(self, inputs, states=None):
        self._check_input(inputs)
        if states is None:
            states = (self._zeros(inputs), self._zeros(inputs))
        if not isinstance(states, (list, tuple)) or len(states) != 2:
            raise TypeError("LSTMCell: states must be a pair (h, c)")
        h0, c0 = states
        self._check_state(h0, inputs.shape[0], "states[0] (h)")
        if isinstance(c0, Tensor) and c0._data.dtype.kind in "iu":
            # Paddle's cell takes an integer c as the float values it holds (only h is refused)
            c0 = _wrap(c0._data.astype(self.weight_ih._data.dtype))
        self._check_state(c0, inputs.shape[0], "states[1] (c)")
        h, c = apply(_cell_kernel, inputs, h0, c0, self.weight_ih, self.weight_hh,
                     self.bias_ih, self.bias_hh, mode="LSTM")
        return h, (h, c)

    @property
    def state_shape(self):
        return ((self.hidden_size,), (self.hidden_size,))


class GRUCell(_BuiltinCell):
    """Gated recurrent unit cell (gates r, z, c).

    Args:
        input_size (int): size of the input features.
        hidden_size (int): size of the hidden state.
        weight_ih_attr, weight_hh_attr (ParamAttr, optional): weights ``[3*hidden, input]`` and
            ``[3*hidden, hidden]``.
        bias_ih_attr, bias_hh_attr (ParamAttr, optional): biases ``[3*hidden]``.
        name (str, optional): unused.

    Inputs: ``inputs [batch, input_size]``, ``states [batch, hidden_size]``.
    Returns: ``(h, h)``.

    Example:
        >>> cell = paddle.nn.GRUCell(16, 32)
        >>> y, h = cell(paddle.randn([4, 16]))
    """

    _mode = "GRU"

    def __init__(self, input_size, hidden_size, weight_ih_attr=None, weight_hh_attr=None,
                 bias_ih_attr=None, bias_hh_attr=None, name=None):
        super().__init__(input_size, hidden_size, weight_ih_attr, weight_hh_attr, bias_ih_attr,
                         bias_hh_attr, name)

    def forward(self, inputs, states=None):
        self._check_input(inputs)
        if states is None:
            states = self._zeros(inputs)
        self._check_state(states, inputs.shape[0], "states")
        h = apply(_cell_kernel, inputs, states, None, self.weight_ih, self.weight_hh,
                  self.bias_ih, self.bias_hh, mode="GRU")
        return h, h


_BUILTIN_FORWARDS = {SimpleRNNCell: SimpleRNNCell.forward, LSTMCell: LSTMCell.forward,
                     GRUCell: GRUCell.forward}


def _fusable(cell):
    """True when running ``cell`` over a sequence may use the fused kernel: a built-in cell
    whose forward is not overridden and that has no forward hooks to honour."""
    fwd = _BUILTIN_FORWARDS.get(type(cell))
    return (fwd is not None and type(cell).forward is fwd and not cell._forward_pre_hooks
            and not cell._forward_post_hooks)


def _check_state_dtype(st, where, what):
    """A recurrent state is floating point, as Paddle requires (an integer one is refused)."""
    if not _dt.is_inexact_np(st._data.dtype):
        raise ValueError(f"{where}: {what} must be a floating-point Tensor, got dtype "
                         f"{st.dtype}")


# ============================================================================ RNN drivers
def _run_fused(cell, inputs, initial_states, mask, reverse, time_major, zero_pad, where):
    """Run a built-in cell over ``inputs`` with :func:`_seq_kernel`."""
    lstm = cell._mode == "LSTM"
    batch = inputs.shape[1 if time_major else 0]
    if inputs.shape[-1] != cell.input_size:
        raise ValueError(f"{where}: expected inputs with input_size={cell.input_size} "
                         f"features, got shape {inputs.shape}")
    if inputs._data.dtype != cell.weight_ih._data.dtype:
        raise ValueError(f"{where}: inputs dtype {inputs.dtype} does not match the "
                         f"parameters' dtype {cell.weight_ih.dtype}")
    if initial_states is None:
        xp = backend.get_array_module(inputs._data)
        z = _wrap(xp.zeros((batch, cell.hidden_size), dtype=inputs._data.dtype))
        h0, c0 = z, (z if lstm else None)
    elif lstm:
        if not isinstance(initial_states, (list, tuple)) or len(initial_states) != 2:
            raise TypeError(f"{where}: initial_states of an LSTM cell must be a pair (h, c)")
        h0, c0 = initial_states
    else:
        h0, c0 = initial_states, None
    for what, st in (("h", h0), ("c", c0)):
        if st is None:
            continue
        if not isinstance(st, Tensor):
            raise TypeError(f"{where}: initial state {what} must be a Tensor, got "
                            f"{type(st).__name__}")
        if st.shape != [batch, cell.hidden_size]:
            raise ValueError(f"{where}: expected initial state {what} of shape [batch_size="
                             f"{batch}, hidden_size={cell.hidden_size}], got {st.shape}")
        _check_state_dtype(st, where, f"initial state {what}")
    res = apply(_seq_kernel, inputs, h0, c0, cell.weight_ih, cell.weight_hh, cell.bias_ih,
                cell.bias_hh, mask, mode=cell._mode, reverse=bool(reverse),
                time_major=bool(time_major), zero_pad=bool(zero_pad))
    if lstm:
        return res[0], (res[1], res[2])
    return res[0], res[1]


def _run_generic(cell, inputs, initial_states, sequence_length, reverse, time_major, where,
                 **kwargs):
    """Step any cell through time with Tensor ops (masking the states past each length)."""
    flat_in = _flatten(inputs)
    for t in flat_in:
        if not isinstance(t, Tensor) or t.ndim < 2:
            raise ValueError(f"{where}: inputs must be Tensors of rank >= 2 [batch, time, ...]"
                             f", got {getattr(t, 'shape', type(t).__name__)}")
    tax = 0 if time_major else 1
    steps = flat_in[0].shape[tax]
    batch = flat_in[0].shape[1 - tax]
    if initial_states is None:
        try:
            dtype = cell.state_dtype
        except (NotImplementedError, AttributeError):
            # Paddle would use the global default dtype here, which breaks float64 inputs
            dtype = flat_in[0].dtype
        initial_states = cell.get_initial_states(batch_ref=flat_in[0], dtype=dtype,
                                                 batch_dim_idx=1 - tax)
    mask = _seq_mask(sequence_length, steps, batch, where)
    if mask is not None:
        mask = _wrap(mask.astype(flat_in[0]._data.dtype))
    states = initial_states
    outs = [None] * steps
    order = range(steps - 1, -1, -1) if reverse else range(steps)
    for t in order:
        x_t = _map(lambda a, t=t: a[t] if time_major else a[:, t], inputs)
        out, new_states = cell(x_t, states, **kwargs)
        if mask is not None:
            m = mask[:, t:t + 1]
            new_states = _map(lambda new, old, m=m: _mask_state(new, old, m), new_states,
                              states)
        states = new_states
        outs[t] = out
    if steps == 0:
        raise ValueError(f"{where}: inputs have no time steps (shape {flat_in[0].shape})")
    outputs = _map(lambda *o: stack(list(o), axis=tax), *outs)
    return outputs, states


def _mask_state(new, old, m):
    # m is [batch, 1]; broadcast over the state's trailing axes
    mm = m.reshape([m.shape[0]] + [1] * (new.ndim - 1)) if new.ndim != 2 else m
    return new * mm + old * (1.0 - mm)


class RNN(Layer):
    """Run a cell over a sequence.

    Args:
        cell (RNNCellBase): the cell; ``cell(x_t, states)`` returns ``(out_t, new_states)``.
        is_reverse (bool): process the sequence from the last step to the first.
        time_major (bool): inputs are ``[time, batch, ...]`` instead of ``[batch, time, ...]``.

    ``forward(inputs, initial_states=None, sequence_length=None, **kwargs)`` returns
    ``(outputs, final_states)``. With ``sequence_length`` the states stop changing past each
    sequence's length, so ``final_states`` are those of its last valid step.

    Example:
        >>> rnn = paddle.nn.RNN(paddle.nn.GRUCell(16, 32))
        >>> y, h = rnn(paddle.randn([4, 23, 16]))   # y: [4, 23, 32], h: [4, 32]
    """

    def __init__(self, cell, is_reverse=False, time_major=False):
        super().__init__()
        if not isinstance(cell, Layer):
            raise TypeError(f"RNN: cell must be a Layer (an RNNCellBase), got "
                            f"{type(cell).__name__}")
        self.cell = cell
        if not hasattr(self.cell, "call"):
            # Paddle cells expose ``call`` as an alias of ``forward``
            self.cell.call = self.cell.forward
        self.is_reverse = is_reverse
        self.time_major = time_major

    def forward(self, inputs, initial_states=None, sequence_length=None, **kwargs):
        where = "RNN"
        if isinstance(inputs, Tensor) and _fusable(self.cell) and not kwargs:
            if inputs.ndim != 3:
                raise ValueError(f"{where}: expected 3-D inputs [batch, time, input_size] "
                                 f"(time-major: [time, batch, input_size]), got {inputs.shape}")
            tax = 0 if self.time_major else 1
            mask = _seq_mask(sequence_length, inputs.shape[tax], inputs.shape[1 - tax], where)
            return _run_fused(self.cell, inputs, initial_states, mask, self.is_reverse,
                              self.time_major, False, where)
        return _run_generic(self.cell, inputs, initial_states, sequence_length,
                            self.is_reverse, self.time_major, where, **kwargs)


class BiRNN(Layer):
    """A bidirectional RNN: ``cell_fw`` runs forward, ``cell_bw`` backward, outputs concatenated.

    Args:
        cell_fw (RNNCellBase): the forward cell.
        cell_bw (RNNCellBase): the backward cell.
        time_major (bool): inputs are ``[time, batch, ...]``.

    ``forward(inputs, initial_states=None, sequence_length=None, **kwargs)``:
    ``initial_states`` is ``(states_fw, states_bw)``; returns ``(outputs, (final_fw,
    final_bw))`` with outputs concatenated on the last axis.

    Example:
        >>> birnn = paddle.nn.BiRNN(paddle.nn.LSTMCell(16, 32), paddle.nn.LSTMCell(16, 32))
        >>> y, (fw, bw) = birnn(paddle.randn([4, 23, 16]))   # y: [4, 23, 64]
    """

    def __init__(self, cell_fw, cell_bw, time_major=False):
        super().__init__()
        self.cell_fw = cell_fw
        self.cell_bw = cell_bw
        fw_in, bw_in = getattr(cell_fw, "input_size", None), getattr(cell_bw, "input_size", None)
        if fw_in is not None and bw_in is not None and fw_in != bw_in:
            raise ValueError(f"input size of forward cell({fw_in}) does not equals that of "
                             f"backward cell({bw_in})")
        for cell in (self.cell_fw, self.cell_bw):
            if not hasattr(cell, "call"):
                cell.call = cell.forward
        self.time_major = time_major

    def forward(self, inputs, initial_states=None, sequence_length=None, **kwargs):
        if initial_states is None:
            st_fw = st_bw = None
        else:
            if not isinstance(initial_states, (list, tuple)) or len(initial_states) != 2:
                raise ValueError("BiRNN: initial_states must be a pair (states_fw, states_bw)")
            st_fw, st_bw = initial_states
        outs, finals = [], []
        for cell, st, rev in ((self.cell_fw, st_fw, False), (self.cell_bw, st_bw, True)):
            if isinstance(inputs, Tensor) and _fusable(cell) and not kwargs:
                if inputs.ndim != 3:
                    raise ValueError(f"BiRNN: expected 3-D inputs [batch, time, input_size], "
                                     f"got {inputs.shape}")
                tax = 0 if self.time_major else 1
                mask = _seq_mask(sequence_length, inputs.shape[tax], inputs.shape[1 - tax],
                                 "BiRNN")
                o, f = _run_fused(cell, inputs, st, mask, rev, self.time_major, False, "BiRNN")
            else:
                o, f = _run_generic(cell, inputs, st, sequence_length, rev, self.time_major,
                                    "BiRNN", **kwargs)
            outs.append(o)
            finals.append(f)
        outputs = _map(lambda a, b: concat([a, b], axis=-1), outs[0], outs[1])
        return outputs, tuple(finals)


# ============================================================================ networks
class RNNBase(LayerList):
    """Multi-layer (bi)directional networks built from one cell type (SimpleRNN, LSTM, GRU).

    The parameters of layer ``l`` are also registered as ``weight_ih_l{l}``, ``weight_hh_l{l}``,
    ``bias_ih_l{l}``, ``bias_hh_l{l}`` (``_reverse`` for the backward direction), the same
    Parameter objects as the cells', so state_dict keys are Paddle's.
    """

    def __init__(self, mode, input_size, hidden_size, num_layers=1, direction="forward",
                 time_major=False, dropout=0.0, weight_ih_attr=None, weight_hh_attr=None,
                 bias_ih_attr=None, bias_hh_attr=None, activation="tanh"):
        super().__init__()
        cls = type(self).__name__
        bidirect = {"forward": False, "bidirect": True, "bidirectional": True}
        if direction not in bidirect:
            raise ValueError(f"direction should be forward or bidirect (or bidirectional), "
                             f"received direction = {direction}")
        if mode == "RNN" and activation not in ("tanh", "relu"):
            raise ValueError(f"Unknown activation '{activation}'")
        if isinstance(num_layers, bool) or not isinstance(num_layers, (int, np.integer)) \
                or num_layers < 1:
            raise ValueError(f"{cls}: num_layers must be a positive int, got {num_layers!r}")
        if not isinstance(dropout, (int, float)) or not 0.0 <= dropout <= 1.0:
            raise ValueError(f"{cls}: dropout must be a float in [0, 1], got {dropout!r}")
        self.mode = mode if mode != "RNN" else ("RNN_TANH" if activation == "tanh"
                                                else "RNN_RELU")
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.dropout = dropout
        self.num_directions = 2 if bidirect[direction] else 1
        self.time_major = time_major
        self.num_layers = num_layers
        self.state_components = 2 if mode == "LSTM" else 1

        attrs = dict(weight_ih_attr=weight_ih_attr, weight_hh_attr=weight_hh_attr,
                     bias_ih_attr=bias_ih_attr, bias_hh_attr=bias_hh_attr)

        def make(in_size):
            if mode == "LSTM":
                return LSTMCell(in_size, hidden_size, **attrs)
            if mode == "GRU":
                return GRUCell(in_size, hidden_size, **attrs)
            return SimpleRNNCell(in_size, hidden_size, activation, **attrs)

        for layer in range(num_layers):
            in_size = input_size if layer == 0 else hidden_size * self.num_directions
            if self.num_directions == 1:
                self.append(RNN(make(in_size), is_reverse=False, time_major=time_major))
            else:
                self.append(BiRNN(make(in_size), make(in_size), time_major=time_major))

        off = {"weight_ih": weight_ih_attr, "weight_hh": weight_hh_attr,
               "bias_ih": bias_ih_attr, "bias_hh": bias_hh_attr}
        for layer in range(num_layers):
            for d, cell in enumerate(self._cells(layer)):
                suffix = "_reverse" if d else ""
                for pname in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                    if off[pname] is False:
                        continue  # a frozen constant is not part of the flat weights
                    self.add_parameter(f"{pname}_l{layer}{suffix}", getattr(cell, pname))
        self.could_use_cudnn = True

    def _cells(self, layer):
        sub = self[layer]
        return (sub.cell,) if self.num_directions == 1 else (sub.cell_fw, sub.cell_bw)

    def forward(self, inputs, initial_states=None, sequence_length=None):
        cls = type(self).__name__
        if not isinstance(inputs, Tensor):
            raise TypeError(f"{cls}: inputs must be a Tensor, got {type(inputs).__name__}")
        if inputs.ndim != 3:
            layout = "[time, batch, input_size]" if self.time_major else \
                "[batch, time, input_size]"
            raise ValueError(f"{cls}: expected 3-D inputs {layout}, got shape {inputs.shape}")
        if inputs.shape[-1] != self.input_size:
            raise ValueError(f"{cls}: expected inputs with input_size={self.input_size} "
                             f"features, got shape {inputs.shape}")
        tax = 0 if self.time_major else 1
        steps, batch = inputs.shape[tax], inputs.shape[1 - tax]
        n_states = self.num_layers * self.num_directions
        lstm = self.state_components == 2
        sshape = [n_states, batch, self.hidden_size]
        if initial_states is None:
            xp = backend.get_array_module(inputs._data)
            z = _wrap(xp.zeros(sshape, dtype=inputs._data.dtype))
            init = [z, z] if lstm else [z]
        else:
            init = list(initial_states) if lstm else [initial_states]
            if lstm and len(init) != 2:
                raise ValueError(f"{cls}: initial_states must be a pair (h, c), got "
                                 f"{len(init)} tensors")
            for st in init:
                if not isinstance(st, Tensor) or st.shape != sshape:
                    got = st.shape if isinstance(st, Tensor) else type(st).__name__
                    raise ValueError(f"{cls}: expected initial states of shape [num_layers * "
                                     f"num_directions, batch_size, hidden_size] = {sshape}, "
                                     f"got {got}")
        mask = _seq_mask(sequence_length, steps, batch, cls)
        x = inputs
        finals = [[] for _ in init]
        for layer in range(self.num_layers):
            outs = []
            for d, cell in enumerate(self._cells(layer)):
                idx = layer * self.num_directions + d
                st = (init[0][idx], init[1][idx]) if lstm else init[0][idx]
                o, f = _run_fused(cell, x, st, mask, d == 1, self.time_major, True, cls)
                outs.append(o)
                for k, t in enumerate(f if lstm else (f,)):
                    finals[k].append(t)
            x = outs[0] if len(outs) == 1 else concat(outs, axis=-1)
            if layer < self.num_layers - 1 and self.dropout > 0:
                x = _dropout(x, float(self.dropout), self.training)
        states = [stack(f, axis=0) for f in finals]
        return x, (tuple(states) if lstm else states[0])

    def flatten_parameters(self):
        """Paddle packs the weights into one contiguous block for cuDNN here (model code calls
        it after moving or loading weights). paddle_hl's recurrent kernels read each parameter
        where it is, so there is nothing to pack: the parameters, their values, their
        gradients and ``state_dict`` stay as they are, as they do in Paddle.

        Returns:
            None
        """
        return None

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.time_major:
            s += f", time_major={self.time_major}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        return s


class SimpleRNN(RNNBase):
    """Multi-layer Elman RNN.

    Args:
        input_size (int): input features.
        hidden_size (int): hidden features.
        num_layers (int): stacked layers.
        direction (str): ``'forward'`` or ``'bidirect'`` / ``'bidirectional'``.
        time_major (bool): inputs are ``[time, batch, input_size]``.
        dropout (float): dropout on the outputs of every layer but the last (training only).
        activation (str): ``'tanh'`` or ``'relu'``.
        weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr (ParamAttr, optional):
            parameter attributes shared by all cells.
        name (str, optional): unused.

    ``forward(inputs, initial_states=None, sequence_length=None)`` returns ``(outputs,
    final_states)``: outputs ``[batch, time, num_directions * hidden_size]`` (zeros past each
    sequence's length), final states ``[num_layers * num_directions, batch, hidden_size]``.

    Example:
        >>> rnn = paddle.nn.SimpleRNN(16, 32, 2)
        >>> y, h = rnn(paddle.randn([4, 23, 16]))   # y: [4, 23, 32], h: [2, 4, 32]
    """

    def __init__(self, input_size, hidden_size, num_layers=1, direction="forward",
                 time_major=False, dropout=0.0, activation="tanh", weight_ih_attr=None,
                 weight_hh_attr=None, bias_ih_attr=None, bias_hh_attr=None, name=None):
        super().__init__("RNN", input_size, hidden_size, num_layers, direction, time_major,
                         dropout, weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr,
                         activation)
        self.activation = activation


class LSTM(RNNBase):
    """Multi-layer long short-term memory network.

    Args: as :class:`SimpleRNN`, without ``activation``.

    ``forward(inputs, initial_states=None, sequence_length=None)`` returns ``(outputs, (h, c))``
    with ``h`` and ``c`` of shape ``[num_layers * num_directions, batch, hidden_size]``.

    Example:
        >>> lstm = paddle.nn.LSTM(16, 32, 2, direction='bidirect')
        >>> y, (h, c) = lstm(paddle.randn([4, 23, 16]))   # y: [4, 23, 64], h: [4, 4, 32]
    """

    def __init__(self, input_size, hidden_size, num_layers=1, direction="forward",
                 time_major=False, dropout=0.0, weight_ih_attr=None, weight_hh_attr=None,
                 bias_ih_attr=None, bias_hh_attr=None, name=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, direction, time_major,
                         dropout, weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr)


class GRU(RNNBase):
    """Multi-layer gated recurrent unit network.

    Args: as :class:`SimpleRNN`, without ``activation``.

    ``forward(inputs, initial_states=None, sequence_length=None)`` returns ``(outputs, h)``.

    Example:
        >>> gru = paddle.nn.GRU(16, 32, time_major=True)
        >>> y, h = gru(paddle.randn([23, 4, 16]))   # y: [23, 4, 32], h: [1, 4, 32]
    """

    def __init__(self, input_size, hidden_size, num_layers=1, direction="forward",
                 time_major=False, dropout=0.0, weight_ih_attr=None, weight_hh_attr=None,
                 bias_ih_attr=None, bias_hh_attr=None, name=None):
        super().__init__("GRU", input_size, hidden_size, num_layers, direction, time_major,
                         dropout, weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr)
