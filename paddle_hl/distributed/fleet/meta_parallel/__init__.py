"""paddle.distributed.fleet.meta_parallel: the tensor-parallel layers and random-state tracker
that model code (GPT, ERNIE, ...) is written with.

paddle_hl runs tensor- and pipeline-parallel degree 1 only (see
:func:`paddle_hl.distributed.fleet.init`). At that degree the parallel layers are their plain
counterparts, with Paddle's parameter shapes: ``ColumnParallelLinear`` and
``RowParallelLinear`` are Linear layers, ``VocabParallelEmbedding`` an Embedding and
``ParallelCrossEntropy`` the per-sample softmax cross entropy; so such model code runs
unchanged on one model-parallel rank. The tracker gives named, independent random streams.
"""

from __future__ import annotations

import contextlib

from ....framework import random as _random
from ....nn import functional as F
from ....nn.layer.layers import Layer

__all__ = []

MODEL_PARALLEL_RNG = "model_parallel_rng"


class RNGStatesTracker:
    """Named random states: ``add(name, seed)`` creates one; inside ``rng_state(name)`` random
    ops draw from it (and advance it), outside from the global state, which it leaves alone."""

    def __init__(self):
        self.states_ = {}
        self.seeds_ = set()

    def reset(self):
        self.states_ = {}
        self.seeds_ = set()

    def add(self, name, seed):
        if seed in self.seeds_:
            raise ValueError(f"RNGStatesTracker.add: seed {seed} is already in use")
        if name in self.states_:
            raise ValueError(f"RNGStatesTracker.add: state {name!r} already exists")
        self.seeds_.add(seed)
        saved = _random.get_rng_state()
        try:
            _random.seed(seed)
            self.states_[name] = _random.get_rng_state()
        finally:
            _random.set_rng_state(saved)

    def get_states_tracker(self):
        return dict(self.states_)

    def set_states_tracker(self, states):
        self.states_ = dict(states)

    @contextlib.contextmanager
    def rng_state(self, name=MODEL_PARALLEL_RNG):
        if name not in self.states_:
            raise ValueError(f"RNGStatesTracker.rng_state: state {name!r} does not exist; "
                             "add it first")
        saved = _random.get_rng_state()
        _random.set_rng_state(self.states_[name])
        try:
            yield
        finally:
            self.states_[name] = _random.get_rng_state()
            _random.set_rng_state(saved)


_TRACKER = RNGStatesTracker()


def get_rng_state_tracker():
    """The process's :class:`RNGStatesTracker`."""
    return _TRACKER


class ColumnParallelLinear(Layer):
    """``y = x W + b`` with ``W`` of shape ``[in_features, out_features]`` (the whole matrix:
    tensor-parallel degree 1).

    Args:
        in_features (int), out_features (int): the sizes.
        weight_attr (ParamAttr, optional): the weight's attribute.
        has_bias (bool, optional): add a bias (no bias when None or False, as in Paddle).
        gather_output (bool): accepted; with one rank the output is whole.
        fuse_matmul_bias (bool): accepted; the product and bias run as one linear op.
        mp_group, name: accepted for Paddle's signature.
    """

    def __init__(self, in_features, out_features, weight_attr=None, has_bias=None,
                 gather_output=True, fuse_matmul_bias=False, mp_group=None, name=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.gather_output = gather_output
        self.is_mp = False
        self.weight = self.create_parameter([in_features, out_features], attr=weight_attr)
        self.weight.is_distributed = False
        self.bias = self.create_parameter([out_features], is_bias=True) if has_bias else None

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)


class RowParallelLinear(ColumnParallelLinear):
    """``y = x W + b`` (tensor-parallel degree 1; see :class:`ColumnParallelLinear`).

    Args:
        has_bias (bool): add a bias (default True).
        input_is_parallel (bool): accepted; with one rank the input is whole.
    """

    def __init__(self, in_features, out_features, weight_attr=None, has_bias=True,
                 input_is_parallel=False, fuse_matmul_bias=False, mp_group=None, name=None):
        super().__init__(in_features, out_features, weight_attr, has_bias, True,
                         fuse_matmul_bias, mp_group, name)
        self.input_is_parallel = input_is_parallel


class VocabParallelEmbedding(Layer):
    """An embedding table ``[num_embeddings, embedding_dim]`` (tensor-parallel degree 1)."""

    def __init__(self, num_embeddings, embedding_dim, weight_attr=None, mp_group=None,
                 name=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.weight = self.create_parameter([num_embeddings, embedding_dim], attr=weight_attr)
        self.weight.is_distributed = False

    def forward(self, x):
        return F.embedding(x, self.weight)


class ParallelCrossEntropy(Layer):
    """Softmax cross entropy per sample, ``[..., 1]`` (tensor-parallel degree 1), with
    ``ignore_index`` giving a loss of 0."""

    def __init__(self, mp_group=None, name=None, ignore_index=-100):
        super().__init__()
        self.ignore_index = ignore_index

    def forward(self, input, label):  # noqa: A002  (Paddle's argument name)
        return F.softmax_with_cross_entropy(input, label, ignore_index=self.ignore_index)
