"""The categorical distribution."""

from __future__ import annotations

import numpy as np

from .. import backend
from ..framework import random as _fr
from ..framework.tensor import Tensor, _wrap, to_array
from . import _utils
from .distribution import Distribution, register_kl

__all__ = []


class Categorical(Distribution):
    r"""The categorical distribution over ``K`` categories, parameterised by logits.

    The probabilities are ``softmax(logits)`` over the last axis, which is the category axis;
    the other axes are batch axes. Samples are int64 category indices.

    Real Paddle 2.6 samples and computes the entropy and KL divergence from
    ``softmax(logits)``, but its ``probs`` / ``log_prob`` divide ``logits`` by their sum
    instead, so they disagree with its own sampler (and break for negative logits). Here every
    method uses ``softmax(logits)``, the law the sampler draws from. It also sets
    ``batch_shape`` (Paddle 2.6 leaves it undefined) and returns KL divergences with the batch
    shape.

    Args:
        logits (list|numpy.ndarray|Tensor): unnormalised log-probabilities, at least 1-D.
        name (str, optional): unused, for Paddle compatibility.

    Example:
        >>> c = paddle.distribution.Categorical(paddle.to_tensor([0.0, 0.0]))
        >>> c.entropy()  # log 2 = 0.6931
    """

    _display_params = ("logits",)
    _discrete = True

    def __init__(self, logits, name=None):
        self.logits = _utils.to_param(logits, "Categorical", "logits")
        if self.logits.ndim < 1:
            raise ValueError(f"Categorical: 'logits' must be at least 1-D, got shape "
                             f"{self.logits.shape}")
        a = self.logits._data
        xp = backend.get_array_module(a)
        _utils.check(~xp.isinf(a), a, "Categorical", "logits", "finite")
        self.name = name if name is not None else "Categorical"
        self._dtype = a.dtype
        from ..nn.functional import log_softmax

        self._logp = log_softmax(self.logits, axis=-1)
        self._probs = self._logp.exp()
        super().__init__(tuple(self.logits.shape[:-1]), ())

    @property
    def num_categories(self) -> int:
        return self.logits.shape[-1]

    def sample(self, shape=()) -> Tensor:
        """Draw category indices (int64).

        Args:
            shape (Sequence[int]): the sample shape.

        Returns:
            Tensor: shape ``shape + batch_shape``.
        """
        shape = self._sample_shape(shape)
        p = self._probs._data.astype(np.float64)
        xp = backend.get_array_module(p)
        k = p.shape[-1]
        rows = p.reshape(-1, k)
        cdf = xp.cumsum(rows, axis=1)
        cdf /= cdf[:, -1:]
        n = int(np.prod(shape)) if shape else 1
        u = _fr.uniform_array((n, rows.shape[0]), np.float64, place=self.logits.place)
        # inverse CDF for every row in one search: row r's CDF is shifted into [r, r + 1]
        off = xp.arange(rows.shape[0], dtype=np.float64)
        flat = xp.searchsorted((cdf + off[:, None]).ravel(), (u + off).ravel(), side="right")
        idx = flat.reshape(u.shape) - xp.arange(rows.shape[0]) * k
        idx = xp.clip(idx, 0, k - 1).astype(np.int64)
        return _wrap(idx.reshape(shape + self.batch_shape))

    def _index(self, value):
        if not isinstance(value, Tensor):
            value = _wrap(to_array(value, where="Categorical.log_prob"))
        v = value._data
        if v.dtype.kind == "f":
            xp = backend.get_array_module(v)
            if not bool((v == xp.floor(v)).all()):
                raise ValueError("Categorical.log_prob: 'value' must hold category indices "
                                 "(integers)")
        elif v.dtype.kind not in "iu":
            raise TypeError(f"Categorical.log_prob: 'value' must be an integer tensor, got "
                            f"{value.dtype}")
        k = self.num_categories
        if v.size and (int(v.min()) < 0 or int(v.max()) >= k):
            raise ValueError(f"Categorical.log_prob: every index in 'value' must be in "
                             f"[0, {k}), got values in [{int(v.min())}, {int(v.max())}]")
        return value.astype("int64")

    def log_prob(self, value) -> Tensor:
        """The log probability of category indices ``value``.

        For 1-D logits, ``value`` may have any shape. For batched logits, a 1-D ``value`` is
        evaluated under every distribution of the batch (shape ``batch_shape + [n]``), a
        ``value`` of shape ``batch_shape + [m]`` picks ``m`` indices per distribution, and any
        other shape broadcasts against ``batch_shape``.

        Args:
            value (Tensor): category indices.

        Returns:
            Tensor: the log probabilities.
        """
        from .. import broadcast_to, take_along_axis

        idx = self._index(value)
        logp = self._logp
        if logp.ndim == 1:
            return logp[idx.reshape([-1])].reshape(idx.shape) if idx.ndim else logp[idx]
        batch = list(self.batch_shape)
        if idx.ndim == 1:
            return take_along_axis(logp, broadcast_to(idx, batch + [idx.shape[0]]), axis=-1)
        if idx.ndim == logp.ndim and list(idx.shape[:-1]) == batch:
            return take_along_axis(logp, idx, axis=-1)
        from .. import broadcast_shape

        try:
            out_shape = broadcast_shape(idx.shape, batch)
        except ValueError:
            raise ValueError(f"Categorical.log_prob: 'value' of shape {idx.shape} does not "
                             f"broadcast against the batch shape {batch}") from None
        lp = broadcast_to(logp, list(out_shape) + [self.num_categories])
        return take_along_axis(lp, broadcast_to(idx, out_shape).unsqueeze(-1),
                               axis=-1).squeeze(-1)

    def prob(self, value) -> Tensor:
        """The probability of category indices ``value`` (see :meth:`log_prob` for shapes)."""
        return self.log_prob(value).exp()

    def probs(self, value) -> Tensor:
        """Same as :meth:`prob`."""
        return self.prob(value)

    def entropy(self) -> Tensor:
        """``-sum p log p`` over the categories."""
        return -(self._probs * self._logp).sum(axis=-1)

    def _bar_probs(self):
        """The probabilities as an array: a notebook draws them as bars (see _display)."""
        return self._probs.numpy()


def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Tensor:
    return (p._probs * (p._logp - q._logp)).sum(axis=-1)


register_kl(Categorical, Categorical)(_kl_categorical_categorical)
