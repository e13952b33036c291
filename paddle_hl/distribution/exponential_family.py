"""The base class of exponential-family distributions."""

from __future__ import annotations

from ..framework.tensor import Tensor
from .distribution import Distribution, NoKLRuleError, register_kl

__all__ = []


class ExponentialFamily(Distribution):
    r"""Base of the exponential family :math:`p(x) = h(x) e^{\theta \cdot t(x) - A(\theta)}`.

    A subclass gives its natural parameters :math:`\theta` (``_natural_parameters``), its
    log-normalizer :math:`A` (``_log_normalizer``) and the mean log carrier measure
    :math:`E[\log h(x)]` (``_mean_carrier_measure``). The entropy then follows from the Bregman
    divergence of :math:`A`: :math:`H = A(\theta) - \theta \cdot \nabla A(\theta) - E[\log h]`,
    with :math:`\nabla A` taken by ``paddle.grad``; KL divergences between two members of the
    same family follow the same way.

    Example:
        >>> b = paddle.distribution.Beta(2.0, 3.0)
        >>> paddle.distribution.ExponentialFamily.entropy(b)  # same as b.entropy()
    """

    @property
    def _natural_parameters(self):
        self._undefined("its natural parameters")

    def _log_normalizer(self, *natural_parameters):
        self._undefined("its log-normalizer")

    @property
    def _mean_carrier_measure(self):
        self._undefined("its mean carrier measure")

    def _log_normalizer_and_grads(self, params=None):
        """A(theta) and its gradients at detached copies of the natural parameters."""
        from .. import enable_grad, grad

        params = self._natural_parameters if params is None else params
        nat = []
        for p in params:
            p = p.detach()
            p.stop_gradient = False
            nat.append(p)
        with enable_grad():
            log_norm = self._log_normalizer(*nat)
            grads = grad(log_norm.sum(), nat)
        return nat, log_norm.detach(), grads

    def entropy(self) -> Tensor:
        """The entropy, through the Bregman divergence of the log-normalizer.

        Returns:
            Tensor: one value per distribution of the batch.
        """
        nat, log_norm, grads = self._log_normalizer_and_grads()
        ent = log_norm - self._mean_carrier_measure
        for p, g in zip(nat, grads):
            term = p.detach() * g
            extra = term.ndim - ent.ndim
            if extra > 0:
                term = term.sum(axis=list(range(term.ndim - extra, term.ndim)))
            ent = ent - term
        return ent


def _kl_expfamily_expfamily(p: ExponentialFamily, q: ExponentialFamily) -> Tensor:
    """Bregman divergence of the log-normalizer: A(tq) - A(tp) - (tq - tp) . grad A(tp)."""
    if type(p) is not type(q):
        raise NoKLRuleError(
            f"kl_divergence: no rule for two different exponential families "
            f"({type(p).__name__}, {type(q).__name__}); register one with register_kl")
    nat_p, lp, grads = p._log_normalizer_and_grads()
    nat_q = [t.detach() for t in q._natural_parameters]
    lq = q._log_normalizer(*nat_q)
    kl = lq - lp
    for a, b, g in zip(nat_p, nat_q, grads):
        term = (b - a.detach()) * g
        extra = term.ndim - kl.ndim
        if extra > 0:
            term = term.sum(axis=list(range(term.ndim - extra, term.ndim)))
        kl = kl - term
    return kl


register_kl(ExponentialFamily, ExponentialFamily)(_kl_expfamily_expfamily)
