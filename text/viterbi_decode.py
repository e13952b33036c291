"""Viterbi decoding of linear-chain CRF scores: ``viterbi_decode`` and the ``ViterbiDecoder`` layer.

The dynamic programme runs once over the time axis and is vectorised over the batch and the
tags: each step is one ``[B, T, T]`` broadcast add, a max and an argmax. Sequences shorter than
the longest one keep their scores frozen after their last step (a mask, not a Python loop over
sequences). Everything is written against the array module of the input, so GPU tensors stay on
the GPU.
"""

from __future__ import annotations

import numpy as np

import paddle_hl as paddle
from paddle_hl import backend, nn

__all__ = []  # the package exports the public names


def _array(t):
    """The backend array of a Tensor without a copy (NumPy on CPU, CuPy on GPU)."""
    if t.__dlpack_device__()[0] == 2:  # kDLCUDA
        return backend.gpu_backend().from_dlpack(t)
    return t.numpy()


def _on(xp, arr):
    """``arr`` as an array of module ``xp`` (a host copy for NumPy, a device copy for CuPy)."""
    return xp.asarray(backend.to_numpy(arr)) if xp is np else xp.asarray(arr)


def _tensor_arg(x, fn: str, arg: str):
    if isinstance(x, paddle.Tensor):
        return x
    if backend.is_array(x):
        return paddle.utils.dlpack.from_dlpack(x) if backend.is_gpu_array(x) else \
            paddle.to_tensor(x)
    raise TypeError(f"{fn}: {arg} must be a paddle.Tensor, but got {type(x).__name__}")


def _check(potentials, transition_params, lengths, fn):
    potentials = _tensor_arg(potentials, fn, "potentials")
    transition_params = _tensor_arg(transition_params, fn, "transition_params")
    lengths = _tensor_arg(lengths, fn, "lengths")
    if potentials.ndim != 3:
        raise ValueError(f"{fn}: potentials must be 3-D [batch_size, seq_len, num_tags], but got "
                         f"shape {potentials.shape}")
    if transition_params.ndim != 2 or transition_params.shape[0] != transition_params.shape[1]:
        raise ValueError(f"{fn}: transition_params must be a square 2-D [num_tags, num_tags] "
                         f"tensor, but got shape {transition_params.shape}")
    b, _, n_tags = potentials.shape
    if transition_params.shape[0] != n_tags:
        raise ValueError(f"{fn}: the tag counts of potentials and transition_params differ: "
                         f"potentials has shape {potentials.shape} ({n_tags} tags), "
                         f"transition_params has shape {transition_params.shape}")
    for name, t in (("potentials", potentials), ("transition_params", transition_params)):
        if t.dtype not in (paddle.float32, paddle.float64):
            raise TypeError(f"{fn}: {name} must be float32 or float64, but got {t.dtype}")
    if potentials.dtype != transition_params.dtype:
        raise TypeError(f"{fn}: potentials ({potentials.dtype}) and transition_params "
                        f"({transition_params.dtype}) must have the same dtype")
    if lengths.dtype != paddle.int64:
        raise TypeError(f"{fn}: lengths must be an int64 tensor, but got {lengths.dtype}")
    if lengths.ndim != 1 or lengths.shape[0] != b:
        raise ValueError(f"{fn}: lengths must be 1-D with batch_size={b} elements, but got shape "
                         f"{lengths.shape}")
    return potentials, transition_params, lengths


def viterbi_decode(potentials, transition_params, lengths, include_bos_eos_tag: bool = True,
                   name=None):
    """Decode the highest scoring tag sequence of each item of a batch (Viterbi algorithm).

    The score of a path ``y`` of a sequence of length ``n`` is
    ``sum_t potentials[t, y_t] + sum_t transition_params[y_{t-1}, y_t]``; with
    ``include_bos_eos_tag`` the start score ``transition_params[-1, y_0]`` and the stop score
    ``transition_params[-2, y_{n-1}]`` are added too (the last row is the start tag, the second
    to last row the stop tag, as in Paddle).

    Args:
        potentials (Tensor): Unary scores, shape [batch_size, seq_len, num_tags], float32 or
            float64.
        transition_params (Tensor): Transition scores ``[from_tag, to_tag]``, shape
            [num_tags, num_tags], same dtype as ``potentials``.
        lengths (Tensor): The real length of each sequence, shape [batch_size], int64, each
            at most ``seq_len``.
        include_bos_eos_tag (bool, optional): Add the start and stop transitions. Default: True.
        name (str, optional): Unused; kept for Paddle compatibility.

    Returns:
        tuple[Tensor, Tensor]: ``scores`` of shape [batch_size] (the dtype of ``potentials``) and
        int64 ``paths`` of shape [batch_size, max(lengths)], zero after each sequence's end.

    Examples:
        >>> import paddle_hl as paddle
        >>> emit = paddle.to_tensor([[[1.0, 0.0], [0.0, 2.0]]])
        >>> trans = paddle.zeros([2, 2])
        >>> scores, path = paddle.text.viterbi_decode(emit, trans, paddle.to_tensor([2]), False)
        >>> path.numpy().tolist(), float(scores)
        ([[0, 1]], 3.0)
    """
    fn = "viterbi_decode"
    potentials, transition_params, lengths = _check(potentials, transition_params, lengths, fn)
    pot = _array(potentials)
    xp = backend.get_array_module(pot)
    # the transitions and lengths follow the potentials' device
    trans = _on(xp, _array(transition_params))
    lens = _on(xp, _array(lengths))
    b, seq_len, n_tags = pot.shape
    lens_host = backend.to_numpy(lens)
    if b and (lens_host.max() > seq_len or lens_host.min() < 0):
        raise ValueError(f"{fn}: every element of lengths must be in [0, seq_len={seq_len}] "
                         f"(the second dimension of potentials), but got lengths "
                         f"{lens_host.tolist()}")
    max_len = int(lens_host.max()) if b else 0
    if max_len == 0:
        return (paddle.utils.dlpack.from_dlpack(xp.zeros((b,), pot.dtype)),
                paddle.utils.dlpack.from_dlpack(xp.zeros((b, 0), np.int64)))

    alpha = pot[:, 0].copy()
    if include_bos_eos_tag:
        alpha += trans[-1][None, :]
    # backpointers[t - 1, b, j]: best previous tag of tag j at step t
    backpointers = xp.empty((max_len - 1, b, n_tags), dtype=np.int64)
    identity = xp.broadcast_to(xp.arange(n_tags, dtype=np.int64), (b, n_tags))
    trans_b = trans[None]
    for t in range(1, max_len):
        cand = alpha[:, :, None] + trans_b  # [B, from, to]
        best = cand.argmax(axis=1)
        new = xp.take_along_axis(cand, best[:, None, :], axis=1)[:, 0] + pot[:, t]
        live = (lens > t)[:, None]
        # finished sequences keep their score; their backpointer is the identity, so the
        # final tag is carried back unchanged to the sequence's last real step
        alpha = xp.where(live, new, alpha)
        backpointers[t - 1] = xp.where(live, best, identity)
    if include_bos_eos_tag:
        alpha = alpha + trans[-2][None, :]
    last = alpha.argmax(axis=1)
    scores = xp.take_along_axis(alpha, last[:, None], axis=1)[:, 0]
    paths = xp.empty((b, max_len), dtype=np.int64)
    paths[:, max_len - 1] = last
    cur = last[:, None]
    for t in range(max_len - 1, 0, -1):
        cur = xp.take_along_axis(backpointers[t - 1], cur, axis=1)
        paths[:, t - 1] = cur[:, 0]
    paths *= xp.arange(max_len)[None, :] < lens[:, None]
    # a zero-length sequence has no path and a zero score
    scores = xp.where(lens > 0, scores, xp.zeros((), scores.dtype))
    return paddle.utils.dlpack.from_dlpack(scores), paddle.utils.dlpack.from_dlpack(paths)


class ViterbiDecoder(nn.Layer):
    """Layer form of :func:`viterbi_decode` holding the transition scores.

    Args:
        transitions (Tensor): Transition scores ``[from_tag, to_tag]``, shape
            [num_tags, num_tags].
        include_bos_eos_tag (bool, optional): Add the start (last tag) and stop (second to last
            tag) transitions. Default: True.
        name (str, optional): Unused; kept for Paddle compatibility.

    Returns:
        Layer: ``decoder(potentials, lengths)`` returns ``(scores, paths)`` as
        :func:`viterbi_decode` does.

    Examples:
        >>> import paddle_hl as paddle
        >>> decoder = paddle.text.ViterbiDecoder(paddle.zeros([3, 3]), include_bos_eos_tag=False)
        >>> scores, path = decoder(paddle.rand([2, 4, 3]), paddle.to_tensor([4, 2]))
        >>> path.shape
        [2, 4]
    """

    def __init__(self, transitions, include_bos_eos_tag: bool = True, name=None):
        super().__init__()
        self.transitions = transitions
        self.include_bos_eos_tag = include_bos_eos_tag
        self.name = name

    def forward(self, potentials, lengths):
        """Decode ``potentials`` [batch_size, seq_len, num_tags] with ``lengths`` [batch_size]."""
        return viterbi_decode(potentials, self.transitions, lengths, self.include_bos_eos_tag,
                              self.name)
