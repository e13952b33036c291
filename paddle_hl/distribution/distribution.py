"""The base class of every distribution, and its notebook display."""

from __future__ import annotations

import numpy as np

from ..framework.tensor import Tensor
from . import _utils
from . import kl as _kl

__all__ = []


class NoKLRuleError(NotImplementedError):
    """kl_divergence has no rule for a pair of distribution types.

    A NotImplementedError, as Paddle raises there, so ``except NotImplementedError`` catches it.
    """


class Distribution:
    """The abstract base of probability distributions.

    A distribution holds a batch of independent laws (``batch_shape``), each over events of
    ``event_shape``. Samples have shape ``sample_shape + batch_shape + event_shape``.

    Args:
        batch_shape (Sequence[int]): the batch shape.
        event_shape (Sequence[int]): the event shape.

    Example:
        >>> import paddle_hl as paddle
        >>> d = paddle.distribution.Normal(paddle.zeros([2]), 1.0)
        >>> d.batch_shape, d.event_shape
        ((2,), ())
    """

    def __init__(self, batch_shape=(), event_shape=()):
        self._batch_shape = _utils.shape_tuple(batch_shape, type(self).__name__, "batch_shape")
        self._event_shape = _utils.shape_tuple(event_shape, type(self).__name__, "event_shape")

    @property
    def batch_shape(self) -> tuple:
        """The shape of the batch of independent distributions."""
        return self._batch_shape

    @property
    def event_shape(self) -> tuple:
        """The shape of one event (one draw of one distribution of the batch)."""
        return self._event_shape

    @property
    def mean(self) -> Tensor:
        """The mean of each distribution of the batch."""
        raise NotImplementedError(f"{type(self).__name__} does not define a mean")

    @property
    def variance(self) -> Tensor:
        """The variance of each distribution of the batch."""
        raise NotImplementedError(f"{type(self).__name__} does not define a variance")

    def sample(self, shape=()) -> Tensor:
        """Draw samples of shape ``shape + batch_shape + event_shape`` (no gradient)."""
        raise NotImplementedError(f"{type(self).__name__} does not define sample")

    def rsample(self, shape=()) -> Tensor:
        """Reparameterised samples: differentiable with respect to the parameters."""
        raise NotImplementedError(
            f"{type(self).__name__} has no reparameterised sampler (rsample); use sample")

    def entropy(self) -> Tensor:
        """The entropy of each distribution of the batch."""
        raise NotImplementedError(f"{type(self).__name__} does not define entropy")

    def log_prob(self, value) -> Tensor:
        """The log density (or log mass) at ``value``."""
        raise NotImplementedError(f"{type(self).__name__} does not define log_prob")

    def prob(self, value) -> Tensor:
        """The density (or mass) at ``value``: ``exp(log_prob(value))``.

        Args:
            value (Tensor): the points.

        Returns:
            Tensor: the densities.
        """
        return self.log_prob(value).exp()

    def probs(self, value) -> Tensor:
        """Same as :meth:`prob` (Paddle's older name)."""
        return self.prob(value)

    def kl_divergence(self, other) -> Tensor:
        """KL(self || other), through the rules of :func:`paddle.distribution.kl_divergence`.

        Args:
            other (Distribution): the second distribution.

        Returns:
            Tensor: the divergence, of the batch shape.
        """
        return kl_divergence(self, other)

    def _undefined(self, what: str):
        """Raise for an abstract part a subclass must define (used by the abstract bases)."""
        raise NotImplementedError(f"{type(self).__name__} does not define {what}")

    def _probs_to_logits(self, probs, is_binary=False) -> Tensor:
        """Logits of probabilities: ``log p - log(1 - p)`` when binary, else ``log p``."""
        e = float(np.finfo(probs._data.dtype).eps)
        p = probs.clip(e, 1 - e) if is_binary else probs.clip(e, None)
        return p.log() - (1 - p).log() if is_binary else p.log()

    def _logits_to_probs(self, logits, is_binary=False) -> Tensor:
        """Probabilities of logits: ``sigmoid`` when binary, else ``softmax`` over the last
        axis."""
        from ..nn.functional import sigmoid, softmax

        return sigmoid(logits) if is_binary else softmax(logits, axis=-1)

    def _extend_shape(self, sample_shape) -> tuple:
        return tuple(sample_shape) + self._batch_shape + self._event_shape

    def _sample_shape(self, shape, op="sample") -> tuple:
        return _utils.shape_tuple(shape, f"{type(self).__name__}.{op}")

    # ------------------------------------------------------------------ display

    def _param_summary(self) -> str:
        parts = []
        for name in getattr(self, "_display_params", ()):
            v = getattr(self, name, None)
            if isinstance(v, Tensor):
                if v.size <= 4:
                    txt = np.array2string(np.asarray(v.numpy()), precision=4, separator=", ")
                else:
                    txt = f"Tensor(shape={v.shape})"
                parts.append(f"{name}={txt}")
            elif v is not None:
                parts.append(f"{name}={v!r}")
        return ", ".join(parts)

    def __repr__(self):
        inner = self._param_summary()
        shapes = f"batch_shape={list(self.batch_shape)}, event_shape={list(self.event_shape)}"
        return f"{type(self).__name__}({inner + ', ' if inner else ''}{shapes})"

    def _repr_png_(self):
        """A small plot of the density (or mass) of the first distribution of the batch.

        Returns PNG bytes, or None (Jupyter then shows the text repr) when matplotlib is not
        installed or the distribution cannot be drawn as one curve.
        """
        try:
            from ._display import plot_png
        except ImportError:
            return None
        try:
            return plot_png(self)
        except (ImportError, NotImplementedError, ValueError, TypeError):
            return None


def register_kl(cls_p, cls_q):
    """Decorator registering a KL divergence rule for the pair ``(cls_p, cls_q)``.

    :func:`kl_divergence` picks, among the registered pairs that both arguments are instances
    of, the most specific one (closest to ``type(p)`` first, then to ``type(q)``).

    Args:
        cls_p (type): a Distribution subclass, the type of the first argument.
        cls_q (type): a Distribution subclass, the type of the second argument.

    Returns:
        callable: the decorator; it returns the function unchanged.

    Example:
        >>> @paddle.distribution.register_kl(MyDist, MyDist)
        ... def _kl(p, q):
        ...     return ...
    """
    for name, c in (("cls_p", cls_p), ("cls_q", cls_q)):
        if not (isinstance(c, type) and issubclass(c, Distribution)):
            raise TypeError(f"register_kl: '{name}' must be a subclass of Distribution, got "
                            f"{c!r}")

    def decorator(f):
        _kl.add_rule(cls_p, cls_q, f)
        return f

    return decorator


def kl_divergence(p, q) -> Tensor:
    r"""The Kullback-Leibler divergence KL(p || q) = E_p[log p(x) - log q(x)].

    Args:
        p (Distribution): the first distribution.
        q (Distribution): the second distribution.

    Returns:
        Tensor: the divergence for each distribution of the batch.

    Raises:
        NotImplementedError: no rule is registered for the pair of types (a NoKLRuleError).

    Example:
        >>> p = paddle.distribution.Normal(0.0, 1.0)
        >>> q = paddle.distribution.Normal(1.0, 2.0)
        >>> paddle.distribution.kl_divergence(p, q)  # 0.4431
    """
    for name, d in (("p", p), ("q", q)):
        if not isinstance(d, Distribution):
            raise TypeError(f"kl_divergence: '{name}' must be a Distribution, got "
                            f"{type(d).__name__}")
    fn = _kl.rule_for(type(p), type(q))
    if fn is None:
        raise NoKLRuleError(
            f"kl_divergence: no KL divergence rule is registered for ({type(p).__name__}, "
            f"{type(q).__name__}); register one with paddle.distribution.register_kl")
    return fn(p, q)
