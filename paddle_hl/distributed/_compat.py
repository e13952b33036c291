"""Private helpers that model code imports from Paddle's module paths in paddle.distributed:
``parallel.sync_params_buffers``, ``parallel._global_parallel_env``,
``parallel.parallel_helper._is_parallel_ctx_initialized`` and ``collective._get_default_group``.
:func:`install` places them on those modules (the package calls it when it loads)."""

from __future__ import annotations

import sys
import types

from . import collective as _coll

__all__ = []


def _get_default_group():
    """The global communication group (all ranks); :func:`init_parallel_env` must have run."""
    if not _coll.is_initialized():
        raise RuntimeError("paddle.distributed.collective._get_default_group: the default group "
                           "does not exist yet; call paddle.distributed.init_parallel_env() "
                           "first")
    return _coll.get_group(0)


def _is_parallel_ctx_initialized():
    """Whether the parallel environment (the global group) has been initialised."""
    return _coll.is_initialized()


def sync_params_buffers(model, comm_group=None, src_rank=0, is_model_parallel=False,
                        fuse_params=True):
    """Broadcast a layer's parameters and buffers from ``src_rank`` to every rank of
    ``comm_group`` (the global group by default), so all ranks start from the same values.

    Args:
        model (Layer): the layer.
        comm_group (Group, optional): the ranks to synchronise.
        src_rank (int): the global rank whose values are sent.
        is_model_parallel (bool): skip parameters marked ``is_distributed`` (split across
            ranks by model parallelism).
        fuse_params (bool): accepted for Paddle's signature; each tensor is broadcast in place.
    """
    from ..nn.layer.layers import Layer

    if not isinstance(model, Layer):
        raise TypeError("sync_params_buffers: model must be a paddle.nn.Layer, got "
                        f"{type(model).__name__}")
    group = comm_group
    nranks = group.nranks if group is not None else _coll.get_world_size()
    if nranks <= 1:
        return
    tensors = [p for p in model.parameters()
               if not (is_model_parallel and getattr(p, "is_distributed", False))]
    tensors += [b for b in model.buffers() if b is not None]
    for t in tensors:
        _coll.broadcast(t, src_rank, group=group)


def _global_parallel_env():
    return _coll.ParallelEnv() if _coll.is_initialized() else None


def install():
    """Attach the helpers to ``paddle_hl.distributed.parallel`` and ``.collective``."""
    from . import parallel

    helper = types.ModuleType(f"{parallel.__name__}.parallel_helper",
                              "paddle.distributed.parallel.parallel_helper (its one helper).")
    helper._is_parallel_ctx_initialized = _is_parallel_ctx_initialized
    helper.__all__ = []
    sys.modules[helper.__name__] = helper
    parallel.parallel_helper = helper
    parallel.sync_params_buffers = sync_params_buffers
    _coll._get_default_group = _get_default_group
    previous = parallel.__dict__.get("__getattr__")

    def module_getattr(name):
        # the environment object exists once init_parallel_env has run, as in Paddle
        if name == "_global_parallel_env":
            return _global_parallel_env()
        if previous is not None:
            return previous(name)
        raise AttributeError(f"module '{parallel.__name__}' has no attribute '{name}'")

    parallel.__getattr__ = module_getattr
