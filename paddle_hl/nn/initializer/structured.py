"""Initializers with structure: Orthogonal, Dirac and Bilinear."""

from __future__ import annotations

import math
import numbers

import numpy as np

from ...framework import place as _pl
from ...framework import random as _rnd
from ._base import Initializer

__all__ = []


class Orthogonal(Initializer):
    """An (semi-)orthogonal matrix scaled by ``gain``.

    The parameter is viewed as a ``[shape[0], prod(shape[1:])]`` matrix W; then
    ``W^T W = gain^2 I`` for tall matrices and ``W W^T = gain^2 I`` for wide ones.

    Args:
        gain (float): the scale (default 1.0).
        name (str, optional): unused.
    """

    def __init__(self, gain=1.0, name=None):
        if isinstance(gain, bool) or not isinstance(gain, numbers.Real):
            raise TypeError(f"Orthogonal: gain must be a number, got {type(gain).__name__}")
        self._gain = float(gain)

    def _values(self, shape, dtype, place):
        if len(shape) < 2:
            raise ValueError(f"Orthogonal: only tensors with 2 or more dimensions can be "
                             f"initialised, got shape {list(shape)}")
        xp = _pl.xp_for(place)
        rows = shape[0]
        cols = int(np.prod(shape[1:]))
        if rows == 0 or cols == 0:
            return xp.zeros(shape, dtype=dtype)
        tall = (max(rows, cols), min(rows, cols))
        a = _rnd.normal_array(tall, np.float64, 0.0, 1.0, place)
        q, r = xp.linalg.qr(a)
        # fix the sign ambiguity of QR so that the result is uniformly distributed
        d = xp.sign(xp.diagonal(r))
        d[d == 0] = 1
        q *= d
        if rows < cols:
            q = q.T
        q *= self._gain
        return q.reshape(shape)


class Dirac(Initializer):
    """Identity-preserving conv weights: a conv with these weights copies its input channels
    (per group) to its output channels.

    The weight ``[out, in/groups, *kernel]`` (3-D, 4-D or 5-D) is 1 at the kernel centre where
    the output channel's index within its group equals the input channel, 0 elsewhere.

    Args:
        groups (int): the conv's groups; ``shape[0]`` must be divisible by it.
        name (str, optional): unused.
    """

    def __init__(self, groups=1, name=None):
        if isinstance(groups, bool) or not isinstance(groups, numbers.Integral) or groups < 1:
            raise ValueError(f"Dirac: groups must be a positive int, got {groups!r}")
        self._groups = int(groups)

    def _values(self, shape, dtype, place):
        if len(shape) not in (3, 4, 5):
            raise ValueError(f"Dirac: only tensors with 3, 4 or 5 dimensions can be "
                             f"initialised, got shape {list(shape)}")
        if shape[0] % self._groups:
            raise ValueError(f"Dirac: dim 0 of the weight ({shape[0]}) must be divisible by "
                             f"groups ({self._groups})")
        xp = _pl.xp_for(place)
        out = xp.zeros(shape, dtype=dtype)
        per_group = shape[0] // self._groups
        n = min(per_group, shape[1])
        within = np.arange(n)
        rows = (np.arange(self._groups)[:, None] * per_group + within[None, :]).ravel()
        cols = np.tile(within, self._groups)
        centre = tuple(k // 2 for k in shape[2:])
        out[(xp.asarray(rows), xp.asarray(cols)) + centre] = 1
        return out


class Bilinear(Initializer):
    """Bilinear-interpolation kernels, for a transposed conv that upsamples.

    The weight must be 4-D ``[C_out, C_in, K, K]``; every (out, in) pair gets the same K x K
    bilinear kernel ``w[y, x] = (1 - |x/f - c|) (1 - |y/f - c|)`` with ``f = ceil(K/2)`` and
    ``c = (2f - 1 - f % 2) / (2f)``: the separable, symmetric interpolation kernel Paddle's
    documentation describes (row 0 of the 4 x 4 kernel is ``[1, 3, 3, 1] / 16``).

    Paddle 2.6.2 computes the row coordinate with a true division (``y = i / K`` of the flat
    index instead of ``i // K``), which gives a kernel that is neither separable nor
    symmetric (row 0 of its 4 x 4 kernel is ``[0.0625, 0.28125, 0.375, 0.15625]``); that bug
    is not copied. Kernels of size 1 agree.

    Example:
        >>> w = paddle.ParamAttr(initializer=paddle.nn.initializer.Bilinear())
        >>> up = paddle.nn.Conv2DTranspose(3, 3, 4, stride=2, padding=1, weight_attr=w)
    """

    def __init__(self):
        pass

    def _values(self, shape, dtype, place):
        if len(shape) != 4:
            raise ValueError(f"Bilinear: the weight must be 4-D, got shape {list(shape)}")
        if shape[2] != shape[3]:
            raise ValueError(f"Bilinear: shape[2] must equal shape[3], got shape {list(shape)}")
        size = shape[3]
        f = math.ceil(size / 2.0)
        c = (2 * f - 1 - f % 2) / (2.0 * f)
        w1 = 1.0 - np.abs(np.arange(size) / f - c)
        kernel = np.outer(w1, w1)
        xp = _pl.xp_for(place)
        return xp.broadcast_to(xp.asarray(kernel.astype(np.float64)), shape).astype(dtype)
