"""InputSpec: the shape, dtype and name of a model input (``paddle.static.InputSpec``)."""

from __future__ import annotations

import numpy as np

from ..framework import dtype as _dt
from ..framework.tensor import Tensor

__all__ = []


class InputSpec:
    """Describes a model input: its shape (None or -1 for a free dim), dtype and name.

    Example:
        >>> image = paddle.static.InputSpec([None, 1, 28, 28], 'float32', 'image')
    """

    def __init__(self, shape, dtype="float32", name=None, stop_gradient=False):
        if isinstance(shape, int):
            shape = [shape]
        if not isinstance(shape, (list, tuple)):
            raise TypeError(f"InputSpec: shape must be a list or tuple, got "
                            f"{type(shape).__name__}")
        self.shape = tuple(-1 if s is None else int(s) for s in shape)
        self.dtype = _dt.convert(dtype, "InputSpec")
        self.name = name
        self.stop_gradient = stop_gradient

    @classmethod
    def from_tensor(cls, tensor, name=None):
        """The spec of an existing Tensor."""
        if not isinstance(tensor, Tensor):
            raise TypeError(f"InputSpec.from_tensor: expected a Tensor, got "
                            f"{type(tensor).__name__}")
        return cls(tensor.shape, tensor.dtype, name or tensor.name)

    @classmethod
    def from_numpy(cls, ndarray, name=None):
        """The spec of a NumPy array."""
        return cls(ndarray.shape, np.asarray(ndarray).dtype, name)

    def batch(self, batch_size):
        """A new spec with ``batch_size`` prepended."""
        if isinstance(batch_size, (list, tuple)):
            if len(batch_size) != 1:
                raise ValueError(f"InputSpec.batch: expected one batch size, got {batch_size}")
            batch_size = batch_size[0]
        return InputSpec((int(batch_size),) + self.shape, self.dtype, self.name,
                         self.stop_gradient)

    def unbatch(self):
        """A new spec without the leading dim."""
        if not self.shape:
            raise ValueError("InputSpec.unbatch: the spec has no dims to remove")
        return InputSpec(self.shape[1:], self.dtype, self.name, self.stop_gradient)

    def __repr__(self):
        return (f"InputSpec(shape={self.shape}, dtype={self.dtype}, name={self.name}, "
                f"stop_gradient={self.stop_gradient})")

    def __eq__(self, other):
        return isinstance(other, InputSpec) and (self.shape, self.dtype, self.name) == (
            other.shape, other.dtype, other.name)

    def __hash__(self):
        return hash((self.shape, self.dtype.name, self.name))
