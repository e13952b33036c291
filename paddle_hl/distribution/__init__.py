"""Probability distributions, transforms of random variables and KL divergence (Paddle's
``paddle.distribution``).

Every distribution is built from paddle_hl's differentiable tensor ops, so gradients flow from
``log_prob``, ``entropy``, ``rsample`` and ``kl_divergence`` to the parameters, and every
sampler draws from paddle_hl's global generator (``paddle.seed`` makes draws repeat). In a
notebook a distribution displays as a small plot of its first batch element's law.
"""

from .bernoulli import Bernoulli
from .beta import Beta
from .categorical import Categorical
from .cauchy import Cauchy
from .dirichlet import Dirichlet
from .distribution import Distribution, kl_divergence, register_kl
from .exponential_family import ExponentialFamily
from .geometric import Geometric
from .gumbel import Gumbel
from .independent import Independent
from .laplace import Laplace
from .lognormal import LogNormal
from .multinomial import Multinomial
from .normal import Normal
from .transform import (
    AbsTransform,
    AffineTransform,
    ChainTransform,
    ExpTransform,
    IndependentTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
)
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform

__all__ = [
    "Bernoulli", "Beta", "Categorical", "Cauchy", "Dirichlet", "Distribution",
    "ExponentialFamily", "Geometric", "Gumbel", "Independent", "Laplace", "LogNormal",
    "Multinomial", "Normal", "TransformedDistribution", "Uniform",
    "Transform", "AbsTransform", "AffineTransform", "ChainTransform", "ExpTransform",
    "IndependentTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform",
    "SoftmaxTransform", "StackTransform", "StickBreakingTransform", "TanhTransform",
    "kl_divergence", "register_kl",
]
