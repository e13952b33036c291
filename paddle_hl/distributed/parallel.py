"""DataParallel and the trainer environment."""

from __future__ import annotations

import contextlib
import os

import numpy as np

from ..framework import state
from ..nn.layer.layers import Layer

__all__ = []


class ParallelEnv:
    """The trainer environment as Paddle's launcher describes it."""

    @property
    def rank(self) -> int:
        return int(os.environ.get("PADDLE_TRAINER_ID", "0"))

    @property
    def world_size(self) -> int:
        return int(os.environ.get("PADDLE_TRAINERS_NUM", "1"))

    @property
    def device_id(self) -> int:
        return int(os.environ.get("FLAGS_selected_gpus", "0").split(",")[0])

    local_rank = rank
    nranks = world_size
    dev_id = device_id


def get_rank(group=None) -> int:
    """This process's rank (0 when not launched in parallel)."""
    return ParallelEnv().rank


def get_world_size(group=None) -> int:
    """The number of trainer processes (1 when not launched in parallel)."""
    return ParallelEnv().world_size


_COMM = [None]


def _comm():
    if _COMM[0] is None:
        try:
            from mpi4py import MPI
        except ImportError:
            raise RuntimeError(
                f"paddle_hl: {get_world_size()} trainer processes were launched, and "
                "data-parallel gradient averaging needs mpi4py (pip install mpi4py)") from None
        _COMM[0] = MPI.COMM_WORLD
    return _COMM[0]


def init_parallel_env():
    """Initialise the parallel environment (MPI when more than one process)."""
    if get_world_size() > 1:
        _comm()
    return ParallelEnv()


class DataParallel(Layer):
    """Run ``layers`` in data parallel: each process computes gradients on its batch and
    ``apply_collective_grads`` averages them across processes before the optimizer step.

    With one process it is a transparent wrapper (state_dict keys are the wrapped layer's).
    """

    def __init__(self, layers, strategy=None, comm_buffer_size=25, last_comm_buffer_size=1,
                 find_unused_parameters=False, group=None):
        if not isinstance(layers, Layer):
            raise TypeError(f"DataParallel: layers must be a paddle.nn.Layer, got "
                            f"{type(layers).__name__}")
        super().__init__(layers.full_name() + "_data_parallel")
        self._layers = layers
        self.find_unused_parameters = find_unused_parameters
        self.comm_buffer_size = comm_buffer_size
        self.last_comm_buffer_size = last_comm_buffer_size
        self.group = group
        self._grad_need_sync = True
        self._nranks = get_world_size()
        if self._nranks > 1:
            self._sync_params()

    def forward(self, *inputs, **kwargs):
        return self._layers(*inputs, **kwargs)

    def _sync_params(self):
        comm = _comm()
        for p in self._layers.parameters():
            p._data[...] = comm.bcast(np.asarray(p._data), root=0)

    @contextlib.contextmanager
    def no_sync(self):
        """Skip gradient averaging inside the block (gradient accumulation)."""
        prev = self._grad_need_sync
        self._grad_need_sync = False
        try:
            yield
        finally:
            self._grad_need_sync = prev

    def scale_loss(self, loss):
        """Kept for Paddle compatibility: the loss is returned unchanged."""
        return loss

    def init_reducer(self):
        """Prepare gradient averaging (nothing to allocate with MPI)."""
        if self._nranks > 1:
            _comm()

    def apply_collective_grads(self):
        """Average every parameter gradient across the trainer processes."""
        if self._nranks <= 1 or not self._grad_need_sync:
            return
        comm = _comm()
        prev = state.grad_enabled
        state.grad_enabled = False
        try:
            from mpi4py import MPI

            for p in self._layers.parameters():
                if p.stop_gradient or p._grad is None:
                    continue
                g = np.ascontiguousarray(p._grad.numpy())
                out = np.empty_like(g)
                comm.Allreduce(g, out, op=MPI.SUM)
                p._grad._data[...] = out / self._nranks
        finally:
            state.grad_enabled = prev

    def state_dict(self, destination=None, include_sublayers=True, structured_name_prefix="",
                   use_hook=True):
        return self._layers.state_dict(destination, include_sublayers, structured_name_prefix,
                                       use_hook)

    def set_state_dict(self, state_dict, use_structured_name=True):
        return self._layers.set_state_dict(state_dict, use_structured_name)

    set_dict = set_state_dict
    load_dict = set_state_dict
