"""Notebook display of a distribution: a small plot of its first batch element's law.

matplotlib is imported here only, when a notebook asks for the picture.
"""

from __future__ import annotations

import io

import numpy as np

__all__ = []

_GRID = 201
_DRAWS = 4000


def _first(t):
    """The first batch element of an array of shape ``[G] + batch_shape``."""
    a = np.asarray(t.numpy(), dtype=np.float64)
    return a.reshape(a.shape[0], -1)[:, 0] if a.ndim > 1 else a


def _moment_range(dist):
    m = float(_first(dist.mean.reshape([1] + list(dist.mean.shape)))[0])
    s = float(np.sqrt(_first(dist.variance.reshape([1] + list(dist.variance.shape)))[0]))
    return m - 4 * s, m + 4 * s


def _range(dist, pad=0.1):
    """A plotting interval for the first batch element: central quantiles of draws (at most
    about a million numbers drawn), or mean +- 4 standard deviations for large batches."""
    from ..framework import random as _fr

    nb = int(np.prod(dist.batch_shape)) if dist.batch_shape else 1
    draws = min(_DRAWS, 1_000_000 // max(nb, 1))
    if draws < 200:
        try:
            return _moment_range(dist)
        except (NotImplementedError, ValueError):
            draws = 200
    # the draws must not move the user's stream: save both devices' (sample draws on the
    # current device, which may be a GPU)
    cpu = _fr.get_rng_state("cpu")
    gpu = _fr.get_cuda_rng_state()
    try:
        x = dist.sample([draws])
    finally:
        _fr.set_rng_state(cpu, "cpu")
        if gpu:
            _fr.set_cuda_rng_state(gpu)
    x = np.asarray(x.numpy(), dtype=np.float64).reshape(draws, -1)[:, 0]
    x = x[np.isfinite(x)]
    if x.size:
        lo, hi = np.quantile(x, [0.005, 0.995])
        if hi > lo or pad == 0:
            return lo - pad * (hi - lo), hi + pad * (hi - lo)
    return _moment_range(dist)


def _curve(dist):
    """(x, y, discrete) for the first batch element."""
    from .. import to_tensor

    bars = getattr(dist, "_bar_probs", None)
    if bars is not None:
        p = np.asarray(bars(), dtype=np.float64)
        p = p.reshape(-1, p.shape[-1])[0]
        return np.arange(p.size), p, True
    if dist.event_shape:
        raise ValueError("no single-curve plot for a multivariate distribution")
    discrete = bool(getattr(dist, "_discrete", False))
    lo, hi = _range(dist, pad=0.0 if discrete else 0.1)
    if discrete:
        # the integers the draws cover (at most 200 bars)
        x = np.arange(np.floor(lo), min(np.ceil(hi), np.floor(lo) + 199) + 1)
    else:
        x = np.linspace(lo, hi, _GRID)
    dtype = getattr(dist, "_dtype", np.float32)
    v = to_tensor(x.astype(dtype).reshape([-1] + [1] * len(dist.batch_shape)))
    # points outside the support (a padded range below 0 for a Beta) have no density
    with np.errstate(invalid="ignore", divide="ignore"):
        y = np.nan_to_num(np.exp(_first(dist.log_prob(v))), nan=0.0)
    return x, y, discrete


def plot_png(dist) -> bytes:
    """PNG bytes of the density (or mass) of ``dist``'s first batch element."""
    # a bare Figure renders through Agg without touching pyplot or the notebook's backend
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    x, y, discrete = _curve(dist)
    fig = Figure(figsize=(3.6, 2.2), dpi=90)
    ax = fig.add_subplot(1, 1, 1)
    if discrete:
        ax.bar(x, y, width=0.8, color="#4c72b0")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel("mass")
    else:
        ax.plot(x, y, color="#4c72b0")
        ax.fill_between(x, y, alpha=0.25, color="#4c72b0")
        ax.set_ylabel("density")
    title = type(dist).__name__
    if dist.batch_shape:
        title += f" (first of batch {list(dist.batch_shape)})"
    ax.set_title(title, fontsize=9)
    ax.tick_params(labelsize=7)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()
