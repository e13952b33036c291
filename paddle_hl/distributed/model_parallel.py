"""``paddle.distributed.split``: a linear or embedding layer whose weight is partitioned over
the processes (tensor model parallelism), with the collectives of :mod:`collective` made
differentiable."""

from __future__ import annotations

import sys

import numpy as np

from .. import backend
from ..autograd import PyLayer
from ..framework.tensor import Tensor, _wrap
from ..nn.layer.layers import Layer
from . import collective as _coll

__all__ = []  # the public names are re-exported by paddle_hl.distributed


def _all_reduce_copy(t):
    out = _wrap(t._data.copy())
    _coll.all_reduce(out)
    return out


class _ReduceSum(PyLayer):
    """Forward: sum over the ranks; backward: every rank's gradient passes unchanged."""

    @staticmethod
    def forward(ctx, x):
        return _all_reduce_copy(x)

    @staticmethod
    def backward(ctx, dy):
        return dy


class _CopyIn(PyLayer):
    """Forward: unchanged; backward: the gradients of the ranks are summed (the input feeds
    every rank's partition)."""

    @staticmethod
    def forward(ctx, x):
        return _wrap(x._data)

    @staticmethod
    def backward(ctx, dy):
        return _all_reduce_copy(dy)


class _SplitLast(PyLayer):
    """Forward: this rank's slice of the last dimension; backward: the slices' gradients are
    gathered back into the full input's."""

    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.lo, ctx.hi = lo, hi
        return _wrap(np.ascontiguousarray(x._data[..., lo:hi]) if isinstance(x._data, np.ndarray)
                     else x._data[..., lo:hi].copy())

    @staticmethod
    def backward(ctx, dy):
        return _gather_last(dy)


class _GatherLast(PyLayer):
    """Forward: the ranks' outputs concatenated along the last dimension; backward: this
    rank's slice of the gradient."""

    @staticmethod
    def forward(ctx, x):
        ctx.n = x.shape[-1]
        return _gather_last(x)

    @staticmethod
    def backward(ctx, dy):
        r = _coll.get_rank()
        return _wrap(dy._data[..., r * ctx.n:(r + 1) * ctx.n].copy())


def _gather_last(t):
    parts = []
    _coll.all_gather(parts, _wrap(np.ascontiguousarray(t._data)
                                  if isinstance(t._data, np.ndarray) else t._data))
    xp = backend.get_array_module(t._data)
    return _wrap(xp.concatenate([p._data for p in parts], axis=-1))


class _ParallelLinear(Layer):
    """A linear layer with its weight split by rows (``axis=0``: input features) or columns
    (``axis=1``: output features) across ``nranks`` processes."""

    def __init__(self, size, axis, nranks, gather_out, weight_attr, bias_attr, name):
        super().__init__()
        rank = _coll.get_rank()
        in_f, out_f = size
        self.axis, self.nranks, self.gather_out = axis, nranks, gather_out
        per = (in_f if axis == 0 else out_f) // nranks
        self.lo, self.hi = rank * per, (rank + 1) * per
        wshape = [per, out_f] if axis == 0 else [in_f, per]
        self.weight = self.create_parameter(wshape, attr=weight_attr)
        self.weight.is_distributed = nranks > 1
        # row parallel: the bias is added once, after the sum; column parallel: split with the
        # output features
        self.bias = self.create_parameter([out_f if axis == 0 else per], attr=bias_attr,
                                          is_bias=True)
        if self.bias is not None:
            self.bias.is_distributed = axis == 1 and nranks > 1

    def forward(self, x):
        from ..nn import functional as F

        if self.axis == 0:
            xl = _SplitLast.apply(x, self.lo, self.hi) if self.nranks > 1 else x
            y = F.linear(xl, self.weight)
            if self.nranks > 1:
                y = _ReduceSum.apply(y)
            return y + self.bias if self.bias is not None else y
        xi = _CopyIn.apply(x) if self.nranks > 1 else x
        y = F.linear(xi, self.weight, self.bias)
        if self.gather_out and self.nranks > 1:
            y = _GatherLast.apply(y)
        return y


class _ParallelEmbedding(Layer):
    """An embedding whose rows (the vocabulary) are split across ``nranks`` processes: each
    looks up the ids in its range, and the results are summed."""

    def __init__(self, size, nranks, weight_attr, name):
        super().__init__()
        vocab, dim = size
        per = vocab // nranks
        rank = _coll.get_rank()
        self.lo, self.hi, self.nranks = rank * per, (rank + 1) * per, nranks
        self.weight = self.create_parameter([per, dim], attr=weight_attr)
        self.weight.is_distributed = nranks > 1

    def forward(self, x):
        from ..nn import functional as F

        ids = x._data
        xp = backend.get_array_module(ids)
        inside = (ids >= self.lo) & (ids < self.hi)
        local = _wrap(xp.where(inside, ids - self.lo, 0).astype(ids.dtype))
        y = F.embedding(local, self.weight)
        y = y * _wrap(inside[..., None].astype(y._data.dtype))
        return _ReduceSum.apply(y) if self.nranks > 1 else y


_LAYERS: dict = {}


def split(x, size, operation, axis=0, num_partitions=1, gather_out=True, weight_attr=None,
          bias_attr=None, name=None):
    """Apply a linear or embedding layer whose weight is split over the processes.

    ``operation='linear'`` with ``size=(in_features, out_features)``: ``axis=0`` splits the
    weight by rows (each rank multiplies its slice of ``x``'s last dimension, the partial
    products are all-reduced, then the bias is added); ``axis=1`` splits it by columns (each
    rank computes its slice of the output features, all-gathered when ``gather_out``).
    ``operation='embedding'`` with ``size=(vocab, dim)`` and ``axis=0`` splits the vocabulary:
    each rank looks up the ids it holds and the results are all-reduced. Gradients flow
    through the collectives. ``num_partitions`` must equal the number of processes.

    In dygraph the layer a call creates is kept and reused by later calls with the same
    ``name`` (or from the same line of code, when ``name`` is None), so a training loop
    trains one set of weights; ``split.layers`` maps those keys to the layers (for their
    ``parameters()``). Each rank holds only its partition of the weight.

    Args:
        x (Tensor): the input (ids for an embedding).
        size (tuple[int, int]): the full weight's shape.
        operation (str): ``'linear'`` or ``'embedding'``.
        axis (int, optional): 0 (rows) or 1 (columns; linear only). Default: 0.
        num_partitions (int, optional): the number of partitions (= processes). Default: 1.
        gather_out (bool, optional): all-gather a column-split output. Default: True.
        weight_attr, bias_attr (ParamAttr, optional): parameter attributes (``bias_attr=False``:
            no bias).
        name (str, optional): the key under which the layer is kept.

    Returns:
        Tensor: the output.

    Examples:
        >>> import paddle_hl as paddle
        >>> import paddle_hl.distributed as dist
        >>> x = paddle.ones([2, 4])
        >>> dist.split(x, (4, 3), "linear", axis=1, num_partitions=1).shape
        [2, 3]
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"paddle_hl.distributed.split: x must be a Tensor, got "
                        f"{type(x).__name__}")
    if operation not in ("linear", "embedding"):
        raise ValueError(f"paddle_hl.distributed.split: operation must be 'linear' or "
                         f"'embedding', got {operation!r}")
    if (not isinstance(size, (list, tuple)) or len(size) != 2
            or not all(isinstance(s, int) and s > 0 for s in size)):
        raise ValueError(f"paddle_hl.distributed.split: size must be two positive ints (the "
                         f"full weight's shape), got {size!r}")
    if axis not in (0, 1) or (operation == "embedding" and axis != 0):
        raise ValueError(f"paddle_hl.distributed.split: axis must be 0 or 1 for 'linear' and 0 "
                         f"for 'embedding', got axis={axis!r} with {operation!r}")
    world = _coll.get_world_size()
    if not isinstance(num_partitions, int) or num_partitions != world:
        raise ValueError(f"paddle_hl.distributed.split: num_partitions must equal the number "
                         f"of processes ({world}), got {num_partitions!r}")
    if world > 1 and not _coll.is_initialized():
        raise RuntimeError("paddle_hl.distributed.split: call "
                           "paddle.distributed.init_parallel_env() first")
    split_dim = size[axis] if operation == "linear" else size[0]
    if split_dim % num_partitions:
        raise ValueError(f"paddle_hl.distributed.split: size[{axis}]={split_dim} is not "
                         f"divisible by num_partitions={num_partitions}")
    if operation == "linear" and x.shape[-1] != size[0]:
        raise ValueError(f"paddle_hl.distributed.split: x's last dimension is {x.shape[-1]} "
                         f"but size[0] (in_features) is {size[0]}")
    if operation == "embedding" and x.dtype.name not in ("int32", "int64"):
        raise TypeError(f"paddle_hl.distributed.split: embedding ids must be int32 or int64, "
                        f"got {x.dtype}")
    if name is None:
        frame = sys._getframe(1)
        key = f"{frame.f_code.co_filename}:{frame.f_lineno}"
    else:
        key = name
    sig = (operation, tuple(size), axis, num_partitions, bool(gather_out))
    entry = _LAYERS.get(key)
    if entry is None or entry[0] != sig:
        if operation == "linear":
            layer = _ParallelLinear(size, axis, num_partitions, bool(gather_out), weight_attr,
                                    bias_attr, name)
        else:
            layer = _ParallelEmbedding(size, num_partitions, weight_attr, name)
        entry = _LAYERS[key] = (sig, layer)
    return entry[1](x)


class _Layers(dict):
    """The layers :func:`split` keeps, by name or call site."""

    def __getitem__(self, key):
        return _LAYERS[key][1]

    def __iter__(self):
        return iter(_LAYERS)

    def __len__(self):
        return len(_LAYERS)

    def items(self):
        return [(k, v[1]) for k, v in _LAYERS.items()]

    def values(self):
        return [v[1] for v in _LAYERS.values()]

    def keys(self):
        return list(_LAYERS)

    def __contains__(self, key):
        return key in _LAYERS


split.layers = _Layers()
