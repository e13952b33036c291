"""The optimizer :func:`distributed_optimizer` returns: gradient merge and stage-1 sharding of
the optimizer states over the wrapped optimizer."""

from __future__ import annotations

import numpy as np

from ...framework import state
from ...framework.tensor import Tensor
from .. import collective as _coll

__all__ = []


def _owners(params, nranks):
    """Deal parameters to ranks, largest first, each to the rank holding the fewest elements
    so far (ties: the lowest rank); the same on every rank."""
    sizes = [0] * nranks
    owner = {}
    order = sorted(range(len(params)), key=lambda i: (-int(np.prod(params[i].shape)), i))
    for i in order:
        r = min(range(nranks), key=lambda k: (sizes[k], k))
        owner[id(params[i])] = r
        sizes[r] += int(np.prod(params[i].shape))
    return owner


class HybridParallelOptimizer:
    """Wraps an optimizer for a fleet job.

    - gradient merge (``strategy.gradient_merge``): ``step()`` adds the current gradients to an
      accumulator and updates the parameters only every ``k_steps`` calls, with the sum (or the
      mean, ``avg=True``) of the accumulated gradients;
    - stage-1 sharding (``sharding_degree`` > 1): each rank keeps optimizer states for, and
      updates, only the parameters it owns (dealt by size); the new values are then broadcast
      from their owners. Gradients are averaged over all ranks beforehand (by the
      DataParallel wrapper of :func:`distributed_model`); clipping by global norm sees every
      gradient.

    Every other attribute is the wrapped optimizer's.
    """

    def __init__(self, optimizer, strategy, sharding_degree):
        self._inner_opt = optimizer
        self._strategy = strategy
        gm = strategy.gradient_merge_configs if strategy is not None else {}
        self._k = int(gm.get("k_steps", 1)) if strategy is not None and \
            strategy.gradient_merge else 1
        if self._k < 1:
            raise ValueError(f"fleet.distributed_optimizer: gradient_merge_configs['k_steps'] "
                             f"must be >= 1, got {self._k}")
        self._avg = bool(gm.get("avg", True))
        self._calls = 0
        self._acc = {}
        self._sharding = sharding_degree > 1
        self._owner = None
        if self._sharding:
            if optimizer._parameter_list is None:
                raise ValueError("fleet.distributed_optimizer: sharding needs an optimizer "
                                 "built with parameters=model.parameters()")
            params = list(optimizer._parameter_list)
            self._all = params
            self._owner = _owners(params, sharding_degree)
            self._rank = _coll.get_rank()

    def __getattr__(self, name):
        if name == "_inner_opt":  # not set yet (copying, unpickling)
            raise AttributeError(name)
        return getattr(self._inner_opt, name)

    # ---------------------------------------------------------------- gradient merge
    def _merge(self):
        """Accumulate this call's gradients; True when the parameters should update now."""
        if self._k == 1:
            return True
        self._calls += 1
        for p in self._params():
            if p.stop_gradient or p._grad is None:
                continue
            acc = self._acc.get(id(p))
            g = p._grad._data
            if acc is None:
                self._acc[id(p)] = (p, g.astype(np.float32) if g.dtype.itemsize < 4
                                    else g.copy())
            else:
                acc[1][...] += g
        if self._calls % self._k:
            return False
        for p, acc in self._acc.values():
            if self._avg:
                acc /= self._k
            p._grad = Tensor(acc.astype(p._grad._data.dtype, copy=False))
        self._acc = {}
        return True

    def _params(self):
        return self._all if self._sharding else self._inner_opt._all_params()

    # ---------------------------------------------------------------- update
    def step(self):
        """Update the parameters (see the class doc)."""
        if not self._merge():
            return
        if not self._sharding:
            self._inner_opt.step()
            return
        opt = self._inner_opt
        with state.no_grad():
            pairs = [(p, p._grad) for p in self._all
                     if not p.stop_gradient and p._grad is not None]
            clip = opt._grad_clip
            if clip is not None:  # over every gradient, as without sharding
                pairs = [(p, g) for p, g in clip(pairs) if g is not None]
            mine = [(p, g) for p, g in pairs if self._owner[id(p)] == self._rank]
            saved = [(grp, grp.get("grad_clip")) for grp in opt._param_groups]
            opt._grad_clip = None
            for grp, _ in saved:
                grp["grad_clip"] = None
            try:
                opt._apply(mine, None)
            finally:
                opt._grad_clip = clip
                for grp, c in saved:
                    grp["grad_clip"] = c
            if _coll.get_world_size() > 1:
                for p in self._all:
                    _coll.broadcast(p, self._owner[id(p)])

    def minimize(self, loss, startup_program=None, parameters=None, no_grad_set=None):
        """Update from the gradients of an earlier ``loss.backward()`` (as Paddle's dygraph
        ``minimize``); returns ``(None, None)``."""
        self.step()
        return None, None

    def clear_grad(self, set_to_zero=True):
        """Clear the gradients of every parameter (on a gradient-merge call that did not
        update, the accumulator keeps them). The wrapped optimizer holds every parameter, also
        with sharding, and clears them its way (DataParallel's gradient buckets included)."""
        self._inner_opt.clear_grad(set_to_zero)

    clear_gradients = clear_grad

    def state_dict(self):
        """The wrapped optimizer's states (with sharding: those of this rank's parameters)."""
        return self._inner_opt.state_dict()

    def set_state_dict(self, state_dict):
        return self._inner_opt.set_state_dict(state_dict)

    def owned_parameters(self):
        """With sharding, the parameters this rank updates (all of them otherwise)."""
        if not self._sharding:
            return list(self._inner_opt._all_params())
        return [p for p in self._all if self._owner[id(p)] == self._rank]
