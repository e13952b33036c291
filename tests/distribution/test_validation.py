"""Invalid parameters and arguments raise clear errors naming the class and the argument."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl

D = paddle_hl.distribution


@pytest.mark.parametrize("make,match", [
    (lambda: D.Normal(0.0, -1.0), r"Normal: every value of 'scale' must be positive"),
    (lambda: D.Normal(paddle_hl.to_tensor([0.0, 1.0]), paddle_hl.to_tensor([1.0, 0.0])),
     r"Normal: .*'scale'.*got 0.0"),
    (lambda: D.LogNormal(0.0, -1.0), r"LogNormal: every value of 'scale'"),
    (lambda: D.Cauchy(0.0, -2.0), r"Cauchy: .*'scale'"),
    (lambda: D.Laplace(0.0, float("nan")), r"Laplace: .*'scale'.*nan"),
    (lambda: D.Gumbel(0.0, -1.0), r"Gumbel: .*'scale'"),
    (lambda: D.Uniform(2.0, 1.0), r"Uniform: .*low < high"),
    (lambda: D.Beta(-1.0, 1.0), r"Beta: .*'alpha'"),
    (lambda: D.Beta(1.0, 0.0), r"Beta: .*'beta'"),
    (lambda: D.Dirichlet(paddle_hl.to_tensor([1.0, -0.5])), r"Dirichlet: .*'concentration'"),
    (lambda: D.Bernoulli(1.5), r"Bernoulli: every value of 'probs' must be in \[0, 1\]"),
    (lambda: D.Geometric(0.0), r"Geometric: .*'probs' must be in \(0, 1\]"),
    (lambda: D.Geometric(1.3), r"Geometric: .*'probs'"),
    (lambda: D.Multinomial(3, paddle_hl.to_tensor([0.5, -0.2, 0.7])),
     r"Multinomial: .*'probs' must be non-negative"),
    (lambda: D.Multinomial(3, paddle_hl.to_tensor([0.0, 0.0])), r"Multinomial: .*positive"),
    (lambda: D.Multinomial(0, paddle_hl.to_tensor([0.5, 0.5])), r"'total_count'"),
    (lambda: D.Categorical(paddle_hl.to_tensor([1.0, float("inf")])), r"Categorical: .*finite"),
    (lambda: D.Independent(D.Normal(0.0, 1.0), 1), r"0 < reinterpreted_batch_rank <= 0"),
    (lambda: D.Normal(paddle_hl.zeros([2]), paddle_hl.ones([3])), r"cannot be broadcast"),
])
def test_invalid_parameters(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_probabilities_are_normalised_and_type_errors():
    m = D.Multinomial(4, paddle_hl.to_tensor([1.0, 1.0, 2.0]))  # normalised, as Paddle documents
    np.testing.assert_allclose(m.probs.numpy(), [0.25, 0.25, 0.5])
    with pytest.raises(TypeError, match="Normal: 'loc'"):
        D.Normal("zero", 1.0)
    with pytest.raises(TypeError, match="Normal.sample: 'shape'"):
        D.Normal(0.0, 1.0).sample("3")
    with pytest.raises(ValueError, match=r"Categorical.log_prob: every index .* \[0, 3\)"):
        D.Categorical(paddle_hl.to_tensor([1.0, 2.0, 3.0])).log_prob(paddle_hl.to_tensor([3]))
    with pytest.raises(ValueError, match="temperature"):
        D.Bernoulli(0.5).rsample([2], temperature=0.0)
    with pytest.raises(ValueError, match="Cauchy distribution has no mean"):
        D.Cauchy(0.0, 1.0).mean  # noqa: B018
    with pytest.raises(NotImplementedError, match="Categorical has no reparameterised"):
        D.Categorical(paddle_hl.to_tensor([1.0, 2.0])).rsample([2])


def test_probs_logits_helpers():
    d = D.Normal(0.0, 1.0)
    p = paddle_hl.to_tensor([0.2, 0.5, 0.3])
    np.testing.assert_allclose(d._probs_to_logits(p).numpy(), np.log([0.2, 0.5, 0.3]), rtol=1e-6)
    np.testing.assert_allclose(d._logits_to_probs(d._probs_to_logits(p)).numpy(), p.numpy(),
                               rtol=1e-6)
    b = paddle_hl.to_tensor([0.2, 0.9])
    np.testing.assert_allclose(d._logits_to_probs(d._probs_to_logits(b, True), True).numpy(),
                               b.numpy(), rtol=1e-6)
