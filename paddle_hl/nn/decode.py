"""Decoding with a recurrent cell: :class:`BeamSearchDecoder` and :func:`dynamic_decode`
(``paddle.nn.BeamSearchDecoder``, ``paddle.nn.dynamic_decode``; Paddle's ``paddle/nn/decode.py``).
"""

from __future__ import annotations

import collections

import numpy as np

from .. import backend
from ..framework.tensor import Tensor, _wrap
from ..tensor.manipulation import stack
from .functional.activation import log_softmax
from .functional.extension import gather_tree
from .layer.rnn import _flatten, _map, _pack

__all__ = ["BeamSearchDecoder", "dynamic_decode"]

_KINF = 1e9  # "infinite" log-probability gap used to block beams, as Paddle's decoder


def _ops():
    import paddle_hl  # noqa: PLC0415  (the decoder is built from public ops)

    return paddle_hl


class BeamSearchDecoder:
    """Beam search over a cell, for use with :func:`dynamic_decode`.

    Each step runs ``cell`` on the ``batch * beam_size`` live hypotheses, turns the outputs
    (through ``output_fn``) into log-probabilities over the vocabulary, and keeps the
    ``beam_size`` best continuations of each batch entry. A finished beam can only be extended
    by ``end_token`` at no cost.

    Args:
        cell (RNNCellBase): the step cell; ``cell(inputs, states)`` returns ``(outputs,
            new_states)``.
        start_token (int): the id fed at the first step.
        end_token (int): the id that finishes a hypothesis.
        beam_size (int): hypotheses kept per batch entry.
        embedding_fn (callable, optional): maps token ids ``[batch, beam]`` to cell inputs.
        output_fn (callable, optional): maps cell outputs to vocabulary logits.

    Example:
        >>> cell = paddle.nn.GRUCell(16, 32)
        >>> emb, proj = paddle.nn.Embedding(100, 16), paddle.nn.Linear(32, 100)
        >>> dec = paddle.nn.BeamSearchDecoder(cell, 0, 1, 4, emb, proj)
        >>> ids, _ = paddle.nn.dynamic_decode(dec, cell.get_initial_states(
        ...     paddle.zeros([2, 16])), max_step_num=10)   # ids: [2, T, 4]
    """

    OutputWrapper = collections.namedtuple("OutputWrapper",
                                           ("scores", "predicted_ids", "parent_ids"))
    StateWrapper = collections.namedtuple("StateWrapper",
                                          ("cell_states", "log_probs", "finished", "lengths"))

    def __init__(self, cell, start_token, end_token, beam_size, embedding_fn=None,
                 output_fn=None):
        if isinstance(beam_size, bool) or not isinstance(beam_size, (int, np.integer)) \
                or beam_size < 1:
            raise ValueError(f"BeamSearchDecoder: beam_size must be a positive int, got "
                             f"{beam_size!r}")
        self.cell = cell
        self.embedding_fn = embedding_fn
        self.output_fn = output_fn
        self.start_token = start_token
        self.end_token = end_token
        self.beam_size = int(beam_size)

    @property
    def tracks_own_finished(self):
        """The decoder keeps its own ``finished`` flags and lengths (dynamic_decode reads
        the lengths from its states)."""
        return True

    # -------------------------------------------------------------- batch/beam reshapes
    @staticmethod
    def tile_beam_merge_with_batch(x, beam_size):
        """Repeat each batch entry ``beam_size`` times: ``[batch, ...]`` -> ``[batch *
        beam_size, ...]`` (entry ``b`` occupies rows ``b*beam_size`` to ``(b+1)*beam_size -
        1``). Applies to every Tensor of a nested structure."""
        p = _ops()

        def one(t):
            if not isinstance(t, Tensor) or t.ndim < 1:
                raise ValueError("BeamSearchDecoder.tile_beam_merge_with_batch: x must hold "
                                 f"Tensors with a batch axis, got {getattr(t, 'shape', t)}")
            shape = t.shape
            tiled = p.tile(p.unsqueeze(t, 1), [1, beam_size] + [1] * (t.ndim - 1))
            return p.reshape(tiled, [shape[0] * beam_size] + shape[1:])

        return _map(one, x)

    def _split_batch_beams(self, x):
        return _ops().reshape(x, [-1, self.beam_size] + x.shape[1:])

    def _merge_batch_beams(self, x):
        return _ops().reshape(x, [-1] + x.shape[2:])

    def _expand_to_beam_size(self, x):
        p = _ops()
        return p.tile(p.unsqueeze(x, 1), [1, self.beam_size] + [1] * (x.ndim - 1))

    def _mask_probs(self, probs, finished):
        """Finished beams get log-prob 0 for ``end_token`` and -1e9 for every other token."""
        p = _ops()
        xp = backend.get_array_module(probs._data)
        noend = xp.full((probs.shape[-1],), -_KINF, dtype=probs._data.dtype)
        noend[self.end_token] = 0
        fin = p.unsqueeze(p.cast(finished, probs.dtype), 2)
        return fin * _wrap(noend) + (1.0 - fin) * probs

    def _gather(self, x, indices, batch_size):
        """``out[b, k] = x[b, indices[b, k]]`` for ``x`` of shape ``[batch, n, ...]``."""
        p = _ops()
        n = x.shape[1]
        xp = backend.get_array_module(indices._data)
        offsets = (xp.arange(batch_size, dtype=np.int64) * n)[:, None]
        flat_idx = _wrap((indices._data.astype(np.int64) + offsets).reshape(-1))
        flat = p.reshape(x, [batch_size * n] + x.shape[2:])
        out = p.index_select(flat, flat_idx, axis=0)
        return p.reshape(out, list(indices.shape) + x.shape[2:])

    # -------------------------------------------------------------- decoding protocol
    def initialize(self, initial_cell_states):
        """Start the search from ``initial_cell_states`` (``[batch, ...]`` each).

        Returns:
            tuple: ``(initial_inputs, initial_states, finished)``; the inputs are the start
            tokens ``[batch, beam]`` (embedded when ``embedding_fn`` is set), the states a
            :attr:`StateWrapper` with beam 0 at log-prob 0 and the others at -1e9.
        """
        p = _ops()
        flat = _flatten(initial_cell_states)
        if not flat or not isinstance(flat[0], Tensor):
            raise TypeError("BeamSearchDecoder.initialize: initial_cell_states must be a Tensor "
                            "or a structure of Tensors")
        states = _map(self._expand_to_beam_size, initial_cell_states)
        batch = flat[0].shape[0]
        self.batch_size = batch  # Paddle keeps it on the decoder; subclasses' steps read it
        beam = self.beam_size
        inputs = p.full([batch, beam], self.start_token, dtype="int64")
        if self.embedding_fn is not None:
            inputs = self.embedding_fn(inputs)
        xp = backend.get_array_module(flat[0]._data)
        lp = xp.full((batch, beam), -_KINF, dtype=np.float32)
        lp[:, 0] = 0.0
        finished = _wrap(xp.zeros((batch, beam), dtype=bool))
        lengths = _wrap(xp.zeros((batch, beam), dtype=np.int64))
        return inputs, self.StateWrapper(states, _wrap(lp), finished, lengths), finished

    def _beam_search_step(self, time, logits, next_cell_states, beam_state):
        p = _ops()

        batch = logits.shape[0]
        vocab = logits.shape[-1]
        beam = self.beam_size
        step_lp = self._mask_probs(log_softmax(logits), beam_state.finished)
        log_probs = step_lp + p.unsqueeze(p.cast(beam_state.log_probs, step_lp.dtype), 2)
        scores = p.reshape(log_probs, [-1, beam * vocab])
        top_scores, top_idx = p.topk(scores, k=beam)
        beam_idx = _wrap(top_idx._data // vocab)
        token_idx = _wrap(top_idx._data % vocab)
        next_lp = self._gather(scores, top_idx, batch)
        next_cell_states = _map(lambda t: self._gather(t, beam_idx, batch), next_cell_states)
        next_finished = self._gather(beam_state.finished, beam_idx, batch)
        next_lengths = self._gather(beam_state.lengths, beam_idx, batch)
        next_lengths = _wrap(next_lengths._data + (~next_finished._data).astype(np.int64))
        next_finished = _wrap(next_finished._data | (token_idx._data == self.end_token))
        out = self.OutputWrapper(top_scores, token_idx, beam_idx)
        return out, self.StateWrapper(next_cell_states, next_lp, next_finished, next_lengths)

    def step(self, time, inputs, states, **kwargs):
        """One search step.

        Returns:
            tuple: ``(outputs, next_states, next_inputs, finished)``; ``outputs`` is an
            :attr:`OutputWrapper` of ``[batch, beam]`` tensors.
        """
        inputs = _map(self._merge_batch_beams, inputs)
        cell_states = _map(self._merge_batch_beams, states.cell_states)
        cell_out, next_cell_states = self.cell(inputs, cell_states, **kwargs)
        cell_out = _map(self._split_batch_beams, cell_out)
        next_cell_states = _map(self._split_batch_beams, next_cell_states)
        if self.output_fn is not None:
            cell_out = self.output_fn(cell_out)
        out, state = self._beam_search_step(time, cell_out, next_cell_states, states)
        ids = out.predicted_ids
        ids.stop_gradient = True
        next_inputs = self.embedding_fn(ids) if self.embedding_fn is not None else ids
        return out, state, next_inputs, state.finished

    def finalize(self, outputs, final_states, sequence_lengths):
        """Backtrack the parent pointers: returns ``(predicted_ids [time, batch, beam],
        final_states)``."""

        return gather_tree(outputs.predicted_ids, outputs.parent_ids), final_states


def dynamic_decode(decoder, inits=None, max_step_num=None, output_time_major=False,
                   impute_finished=False, is_test=False, return_length=False, **kwargs):
    """Run ``decoder`` step by step until every sequence is finished (or ``max_step_num``).

    Args:
        decoder: a decoder with ``initialize``, ``step`` and optionally ``finalize`` and
            ``tracks_own_finished`` (e.g. :class:`BeamSearchDecoder`).
        inits: passed to ``decoder.initialize`` (e.g. the initial cell states).
        max_step_num (int, optional): stop after ``max_step_num + 1`` steps at most.
        output_time_major (bool): outputs ``[time, batch, ...]`` instead of ``[batch, time,
            ...]``.
        impute_finished (bool): for decoders that do not track their own finished flags, keep
            the states of finished sequences unchanged.
        is_test (bool): unused in dynamic mode.
        return_length (bool): also return the decoded lengths.
        **kwargs: passed to ``decoder.step``.

    Returns:
        tuple: ``(final_outputs, final_states)`` or, with ``return_length``,
        ``(final_outputs, final_states, sequence_lengths)``.
    """
    p = _ops()
    inputs, states, finished = decoder.initialize(inits)
    if not isinstance(finished, Tensor):
        raise TypeError("dynamic_decode: decoder.initialize must return a finished Tensor")
    lengths = _wrap(backend.get_array_module(finished._data).zeros(finished._data.shape,
                                                                  dtype=np.int64))
    own = getattr(decoder, "tracks_own_finished", False)
    collected = None
    step = 0
    while not bool(finished._data.all()):
        step_t = p.full([1], step, dtype="int64")
        outs, next_states, next_inputs, next_finished = decoder.step(step_t, inputs, states,
                                                                     **kwargs)
        if not own:
            next_finished = _wrap(next_finished._data | finished._data)
            next_lengths = _wrap(lengths._data + (~finished._data).astype(np.int64))
            if impute_finished:
                next_states = _map(lambda old, new, fin=finished: _keep_finished(old, new, fin),
                                   states, next_states)
        else:
            next_lengths = getattr(next_states, "lengths", lengths)
        flat = _flatten(outs)
        if collected is None:
            collected = [[o] for o in flat]
        else:
            for lst, o in zip(collected, flat):
                lst.append(o)
        template = outs
        inputs, states, finished, lengths = next_inputs, next_states, next_finished, next_lengths
        step += 1
        if max_step_num is not None and step > max_step_num:
            break
    if collected is None:
        raise ValueError("dynamic_decode: every sequence is finished before the first step")
    final_outputs = _pack(template, [stack(lst, axis=0) for lst in collected])[0]
    final_states = states
    if hasattr(decoder, "finalize"):
        try:
            final_outputs, final_states = decoder.finalize(final_outputs, final_states, lengths)
        except NotImplementedError:
            pass
    if not output_time_major:
        final_outputs = _map(
            lambda t: p.transpose(t, [1, 0] + list(range(2, t.ndim))), final_outputs)
    if return_length:
        return final_outputs, final_states, lengths
    return final_outputs, final_states


def _keep_finished(old, new, finished):
    m = finished._data.reshape(finished._data.shape + (1,) * (new.ndim - finished.ndim))
    mt = _wrap(m.astype(new._data.dtype))
    return old * mt + new * (1.0 - mt)
