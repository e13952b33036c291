"""paddle.distributed.fleet.meta_parallel: the random-state tracker model code uses with
tensor parallelism. paddle_hl runs tensor- and pipeline-parallel degree 1 only (see
:func:`paddle_hl.distributed.fleet.init`); the tracker still gives named, independent random
streams, which is what the layers using it need on one model-parallel rank."""

from __future__ import annotations

import contextlib

from ....framework import random as _random

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
