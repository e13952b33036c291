"""Extension functionals: sequence_mask, gather_tree, temporal_shift, class_center_sample,
diag_embed."""

from __future__ import annotations

import numpy as np

from ... import backend
from ...framework import dtype as _dt
from ...framework.op import apply, op
from ...framework.tensor import Tensor, _wrap
from ...tensor._helpers import int_tensor_arg as _int_arg
from ...tensor._helpers import tensor_arg
from ...tensor.creation import diag_embed  # noqa: F401  (re-exported as F.diag_embed)
from ...tensor.random import randperm

__all__ = []


def sequence_mask(x: Tensor, maxlen=None, dtype="int64", name=None) -> Tensor:
    """Mask of valid positions: ``out[..., j] = j < x[...]``.

    Args:
        x (Tensor): sequence lengths (integer), any shape.
        maxlen (int|Tensor, optional): the mask length; default ``max(x)``.
        dtype (str|paddle.dtype): output dtype (default int64).

    Returns:
        Tensor: shape ``x.shape + [maxlen]``, 1 where the position is inside the sequence.

    Example:
        >>> F.sequence_mask(paddle.to_tensor([1, 3, 2]))
        ... # [[1, 0, 0], [1, 1, 1], [1, 1, 0]]
    """
    op = "sequence_mask"
    x = _int_arg(x, op, "x")
    xp = backend.get_array_module(x._data)
    if isinstance(maxlen, Tensor):
        if maxlen.size != 1:
            raise ValueError(f"{op}: 'maxlen' as a Tensor must hold one value, got shape "
                             f"{maxlen.shape}")
        maxlen = int(maxlen.item())
    if maxlen is None:
        maxlen = int(x._data.max()) if x._data.size else 0
    maxlen = int(maxlen)
    if maxlen < 0:
        raise ValueError(f"{op}: 'maxlen' must be >= 0, but received {maxlen}")
    out = xp.arange(maxlen, dtype=np.int64) < x._data[..., None].astype(np.int64)
    return _wrap(out.astype(_dt.to_np(dtype)))


def gather_tree(ids: Tensor, parents: Tensor) -> Tensor:
    """Backtrace full beam-search paths from per-step ids and parent beam indices.

    Starting from the last step, ``out[t, b, k] = ids[t, b, p]`` where ``p`` follows
    ``parents`` back from beam ``k``. One vectorised gather per time step.

    Args:
        ids (Tensor): ``[T, B, beam]`` selected ids (int32/int64).
        parents (Tensor): ``[T, B, beam]`` parent beam of each id, same dtype.

    Returns:
        Tensor: ``[T, B, beam]`` full sequences, dtype of ``ids``.
    """
    op = "gather_tree"
    ids = _int_arg(ids, op, "ids")
    parents = _int_arg(parents, op, "parents")
    if ids.ndim != 3 or parents.shape != ids.shape:
        raise ValueError(f"{op}: 'ids' and 'parents' must both be [T, B, beam], but got "
                         f"{ids.shape} and {parents.shape}")
    a, par = ids._data, parents._data
    xp = backend.get_array_module(a)
    t_max, _, beam = a.shape
    if par.size and bool(((par < 0) | (par >= beam)).any()):
        raise ValueError(f"{op}: 'parents' must lie in [0, {beam}), but got values in "
                         f"[{int(par.min())}, {int(par.max())}]")
    out = xp.empty_like(a)
    if t_max == 0:
        return _wrap(out)
    out[-1] = a[-1]
    beam_idx = par[-1].astype(np.int64)
    for t in range(t_max - 2, -1, -1):
        out[t] = xp.take_along_axis(a[t], beam_idx, axis=1)
        beam_idx = xp.take_along_axis(par[t], beam_idx, axis=1).astype(np.int64)
    return _wrap(out)


@op("temporal_shift", saves=())
def _tshift_kernel(x, seg_num, c1, c2, nhwc):
    xp = backend.get_array_module(x)
    v = x.reshape((x.shape[0] // seg_num, seg_num) + x.shape[1:])   # [N, T, ...]
    ca = 4 if nhwc else 2

    def at(t, lo, hi):
        idx = [slice(None)] * v.ndim
        idx[1], idx[ca] = t, slice(lo, hi)
        return tuple(idx)

    def shift(src, reverse):
        # forward: channels [0, c1) take the previous frame, [c1, c2) the next one; the
        # gradient (reverse) moves them back the other way
        prev_grp, next_grp = ((0, c1), (c1, c2)) if not reverse else ((c1, c2), (0, c1))
        out = xp.zeros_like(src)
        out[at(slice(None), c2, None)] = src[at(slice(None), c2, None)]
        out[at(slice(1, None), *prev_grp)] = src[at(slice(None, -1), *prev_grp)]
        out[at(slice(None, -1), *next_grp)] = src[at(slice(1, None), *next_grp)]
        return out

    res = shift(v, False).reshape(x.shape)

    def bw(g):
        return (shift(g.reshape(v.shape), True).reshape(x.shape),)

    return res, bw


def temporal_shift(x: Tensor, seg_num: int, shift_ratio: float = 0.25, name=None,
                   data_format: str = "NCHW") -> Tensor:
    """Temporal Shift Module: shift part of the channels one frame along time.

    ``x`` holds ``N`` clips of ``seg_num`` frames each. The first ``C * shift_ratio`` channels
    take the previous frame's values, the next ``C * shift_ratio`` the next frame's (zeros at
    the clip ends), and the rest are unchanged.

    Args:
        x (Tensor): ``[N * seg_num, C, H, W]`` (NCHW) or ``[N * seg_num, H, W, C]`` (NHWC).
        seg_num (int): frames per clip.
        shift_ratio (float): fraction of channels shifted each way, in ``[0, 0.5)``.
        data_format (str): ``'NCHW'`` or ``'NHWC'``.

    Returns:
        Tensor: same shape and dtype as ``x``.
    """
    op = "temporal_shift"
    x = tensor_arg(x, op, "x")
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"{op}: 'data_format' must be 'NCHW' or 'NHWC', but received "
                         f"{data_format!r}")
    if x.ndim != 4:
        raise ValueError(f"{op}: 'x' must be 4-D, but got shape {x.shape}")
    seg_num = int(seg_num)
    if seg_num <= 0 or x.shape[0] % seg_num:
        raise ValueError(f"{op}: the first dim of 'x' ({x.shape[0]}) must be a multiple of "
                         f"'seg_num' ({seg_num})")
    if not 0 <= shift_ratio < 0.5:
        raise ValueError(f"{op}: 'shift_ratio' must be in [0, 0.5), but received {shift_ratio}")
    c = x.shape[3 if data_format == "NHWC" else 1]
    c1 = int(c * shift_ratio)
    c2 = int(c * 2 * shift_ratio)
    return apply(_tshift_kernel, x, seg_num=seg_num, c1=c1, c2=c2,
                 nhwc=data_format == "NHWC")


def class_center_sample(label: Tensor, num_classes: int, num_samples: int, group=None):
    """Sample class centres for partial-FC training: every positive class in ``label`` plus
    random negative classes, ``num_samples`` in all.

    The positive classes come first in ascending order, then the negatives in random order
    (drawn from paddle_hl's global generator, so ``paddle.seed`` makes it reproducible).

    Args:
        label (Tensor): ``[N]`` class ids (int32/int64) in ``[0, num_classes)``.
        num_classes (int): number of classes.
        num_samples (int): number of centres to keep (all positives are kept even when there
            are more of them).
        group: communication group; only the single-process case (None or False) is
            supported.

    Returns:
        tuple(Tensor, Tensor): ``remapped_label`` (each label's index into the sampled
        centres, ``[N]``) and ``sampled_class_center`` (the kept class ids), both of label's
        dtype.
    """
    op = "class_center_sample"
    label = _int_arg(label, op, "label")
    if label.ndim > 1:
        raise ValueError(f"{op}: 'label' must be 1-D, but got shape {label.shape}")
    if group not in (None, False) and getattr(group, "nranks", 1) != 1:
        raise ValueError(f"{op}: groups with more than one rank are not supported; pass "
                         "group=None")
    if not 0 < num_samples <= num_classes:
        raise ValueError(f"{op}: expected num_samples less than or equal to {num_classes}, "
                         f"got num_samples {num_samples}")
    lab = backend.to_numpy(label._data).astype(np.int64)
    if lab.size and (lab.min() < 0 or lab.max() >= num_classes):
        raise ValueError(f"{op}: labels must lie in [0, {num_classes}), but got values in "
                         f"[{lab.min()}, {lab.max()}]")
    pos = np.unique(lab)
    n_neg = max(num_samples - pos.size, 0)
    if n_neg:
        free = np.ones(num_classes, dtype=bool)
        free[pos] = False
        perm = _random_permutation(num_classes)
        neg = perm[free[perm]][:n_neg]
        sampled = np.concatenate([pos, neg])
    else:
        sampled = pos
    remapped = np.searchsorted(pos, lab)
    xp = backend.get_array_module(label._data)
    dt = label._data.dtype
    return (_wrap(xp.asarray(remapped.astype(dt))), _wrap(xp.asarray(sampled.astype(dt))))


def _random_permutation(n):
    """A permutation of ``range(n)`` from paddle_hl's seeded global generator."""
    return backend.to_numpy(randperm(n, dtype="int64")._data)
