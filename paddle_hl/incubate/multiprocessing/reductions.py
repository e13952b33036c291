"""How paddle tensors cross process boundaries in :mod:`paddle_hl.incubate.multiprocessing`:
by value, as host arrays, rebuilt on the device they came from when it exists there."""

from __future__ import annotations

from multiprocessing.reduction import ForkingPickler

import numpy as np

from ... import backend
from ...framework.parameter import Parameter
from ...framework.tensor import Tensor

__all__ = []


def _rebuild_tensor(arr, on_gpu, stop_gradient, name):
    if on_gpu and backend.gpu_available():
        arr = backend.gpu_backend().xp.asarray(arr)
    t = Tensor(arr, stop_gradient=stop_gradient)
    t.name = name
    return t


def _reduce_tensor(t):
    on_gpu = not isinstance(t._data, np.ndarray)
    return _rebuild_tensor, (backend.to_numpy(t._data), on_gpu, t.stop_gradient, t.name)


def _rebuild_param(arr, on_gpu, trainable, name):
    if on_gpu and backend.gpu_available():
        arr = backend.gpu_backend().xp.asarray(arr)
    return Parameter(arr, name=name, trainable=trainable)


def _reduce_param(p):
    on_gpu = not isinstance(p._data, np.ndarray)
    return _rebuild_param, (backend.to_numpy(p._data), on_gpu, p.trainable, p.name)


def init_reductions():
    """Register the tensor and parameter reducers with multiprocessing's pickler."""
    ForkingPickler.register(Tensor, _reduce_tensor)
    ForkingPickler.register(Parameter, _reduce_param)
