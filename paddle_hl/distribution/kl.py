"""KL divergence between distributions, dispatched on the pair of their types."""

from __future__ import annotations

import functools
import warnings

from ..framework.tensor import Tensor
from .bernoulli import Bernoulli, _kl_bernoulli_bernoulli
from .beta import Beta, _kl_beta_beta
from .categorical import Categorical, _kl_categorical_categorical
from .cauchy import Cauchy, _kl_cauchy_cauchy
from .dirichlet import Dirichlet, _kl_dirichlet_dirichlet
from .distribution import Distribution
from .exponential_family import ExponentialFamily, NoKLRuleError, _kl_expfamily_expfamily
from .geometric import Geometric, _kl_geometric_geometric
from .laplace import Laplace, _kl_laplace_laplace
from .lognormal import LogNormal, _kl_lognormal_lognormal
from .normal import Normal, _kl_normal_normal
from .uniform import Uniform, _kl_uniform_uniform

__all__ = []

_REGISTER_TABLE: dict = {}


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
        _REGISTER_TABLE[cls_p, cls_q] = f
        _dispatch.cache_clear()
        return f

    return decorator


def _mro_rank(cls, base):
    return cls.__mro__.index(base)


@functools.cache
def _dispatch(type_p, type_q):
    matches = [(sp, sq) for sp, sq in _REGISTER_TABLE
               if issubclass(type_p, sp) and issubclass(type_q, sq)]
    if not matches:
        return None
    # most specific: nearest to type_p in its MRO, ties broken by nearness to type_q
    by_p = min(matches, key=lambda m: (_mro_rank(type_p, m[0]), _mro_rank(type_q, m[1])))
    by_q = min(matches, key=lambda m: (_mro_rank(type_q, m[1]), _mro_rank(type_p, m[0])))
    if by_p != by_q:
        warnings.warn(f"kl_divergence: the rules for ({by_p[0].__name__}, {by_p[1].__name__}) "
                      f"and ({by_q[0].__name__}, {by_q[1].__name__}) both match "
                      f"({type_p.__name__}, {type_q.__name__}); using the first. Register "
                      "a rule for the exact pair to choose.", RuntimeWarning, stacklevel=3)
    return _REGISTER_TABLE[by_p]


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
    fn = _dispatch(type(p), type(q))
    if fn is None:
        raise NoKLRuleError(
            f"kl_divergence: no KL divergence rule is registered for ({type(p).__name__}, "
            f"{type(q).__name__}); register one with paddle.distribution.register_kl")
    return fn(p, q)


register_kl(Bernoulli, Bernoulli)(_kl_bernoulli_bernoulli)
register_kl(Beta, Beta)(_kl_beta_beta)
register_kl(Dirichlet, Dirichlet)(_kl_dirichlet_dirichlet)
register_kl(Categorical, Categorical)(_kl_categorical_categorical)
register_kl(Cauchy, Cauchy)(_kl_cauchy_cauchy)
register_kl(Normal, Normal)(_kl_normal_normal)
register_kl(Uniform, Uniform)(_kl_uniform_uniform)
register_kl(Laplace, Laplace)(_kl_laplace_laplace)
register_kl(Geometric, Geometric)(_kl_geometric_geometric)
register_kl(ExponentialFamily, ExponentialFamily)(_kl_expfamily_expfamily)
register_kl(LogNormal, LogNormal)(_kl_lognormal_lognormal)
