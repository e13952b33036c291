"""Distributions built the same way in paddle_hl and in real Paddle, with test points."""

from __future__ import annotations

import numpy as np

# name -> (builder(lib, t), values); t(array) makes a tensor of the test dtype in lib
LOC = np.array([[0.0, 1.0, -2.0]])
SCALE = np.array([[1.0], [0.5]])  # broadcasts with LOC to a [2, 3] batch
POINTS = np.array([0.3, -1.2, 2.5])


def _d(lib):
    return lib.distribution


SPECS = {
    "Normal": (lambda lib, t: _d(lib).Normal(t(LOC), t(SCALE)), POINTS),
    "Uniform": (lambda lib, t: _d(lib).Uniform(t([-1.0, 0.0, 0.5]), t([[1.0], [3.0]])),
                np.array([-0.5, 0.25, 0.75])),
    "Bernoulli": (lambda lib, t: _d(lib).Bernoulli(t([0.2, 0.5, 0.9])),
                  np.array([[0.0], [1.0]])),
    "Beta": (lambda lib, t: _d(lib).Beta(t([0.5, 2.0, 3.0]), t([[1.5], [4.0]])),
             np.array([0.2, 0.5, 0.9])),
    "Cauchy": (lambda lib, t: _d(lib).Cauchy(t(LOC), t(SCALE)), POINTS),
    "Dirichlet": (lambda lib, t: _d(lib).Dirichlet(t([[1.0, 2.0, 3.0], [0.5, 0.7, 4.0]])),
                  np.array([0.2, 0.3, 0.5])),
    "Geometric": (lambda lib, t: _d(lib).Geometric(t([0.2, 0.5, 0.9])),
                  np.array([[0.0], [3.0]])),
    "Gumbel": (lambda lib, t: _d(lib).Gumbel(t(LOC[0]), t([1.0, 0.5, 2.0])), POINTS),
    "Laplace": (lambda lib, t: _d(lib).Laplace(t(LOC), t(SCALE)), POINTS),
    "LogNormal": (lambda lib, t: _d(lib).LogNormal(t(LOC[0]), t([1.0, 0.5, 2.0])),
                  np.array([0.3, 1.2, 2.5])),
    "Multinomial": (lambda lib, t: _d(lib).Multinomial(6, t([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])),
                    np.array([1.0, 2.0, 3.0])),
}
