"""Random sampling ops (Paddle's ``tensor/random.py``) and the seed / rng-state API.

Every op draws from the global generators of :mod:`paddle_hl.framework.random`, so one
``paddle.seed(s)`` makes them repeat. Sampling runs on the device of the output (NumPy's PCG64
on the CPU, cuRAND through CuPy on a GPU). Indexing is 64-bit throughout.
"""

from __future__ import annotations

import numpy as np

from ..backend import get_array_module as _xp
from ..framework import dtype as _dt
from ..framework import random as _fr
from ..framework.op import apply, apply_, check_inplace, op
from ..framework.random import (
    generator,
    generator_for,
    local_generator,
    normal_array,
    randint_array,
    uniform_array,
)
from ..framework.tensor import Tensor, _wrap
from ._helpers import cast_to, float_arg, int_arg, number_arg, shape_arg, tensor_arg

__all__ = []


class _ProbabilityError(ValueError, IndexError):
    """A probability outside [0, 1]: a ValueError that also matches Paddle's IndexError."""


def _shape(shape, op):
    if shape is None:
        raise TypeError(f"{op}: 'shape' is required (a list/tuple of ints or a Tensor)")
    shp = shape_arg(shape, op)
    if any(s < 0 for s in shp):
        raise ValueError(f"{op}: each value of 'shape' must be non-negative, got {shp}")
    return tuple(shp)


def _float_dtype(dtype, op, default=None):
    npd = (default or _dt.default_np()) if dtype is None else _dt.to_np(dtype)
    if not _dt.is_float_np(npd):
        raise TypeError(f"{op}: dtype must be a floating dtype (float16, bfloat16, float32 or "
                        f"float64), got {_dt.from_np(npd)}")
    return npd


def _int_number(v, op, arg):
    # an int given as a number, a NumPy scalar or a one-element Tensor; 3.0 counts as 3
    return int_arg(number_arg(v, op, arg), op, arg, integral_float=True)


# ---------------------------------------------------------------- factories

def rand(shape, dtype=None, name=None) -> Tensor:
    """Samples from U[0, 1).

    Args:
        shape (list|tuple|Tensor|int): output shape; may mix ints and 0-D tensors.
        dtype (str|paddle.dtype, optional): a float dtype (default float).

    Returns:
        Tensor: the samples.

    Example:
        >>> paddle.seed(1); paddle.rand([2, 3]).shape
        [2, 3]
    """
    shp = _shape(shape, "rand")
    return _wrap(uniform_array(shp, _float_dtype(dtype, "rand")))


def uniform(shape, dtype=None, min=-1.0, max=1.0, seed=0, name=None) -> Tensor:  # noqa: A002
    """Samples from U[min, max).

    Args:
        shape (list|tuple|Tensor|int): output shape.
        dtype (str|paddle.dtype, optional): a float dtype (default float).
        min (float|Tensor): lower bound.
        max (float|Tensor): upper bound.
        seed (int): 0 uses the global generator; another value uses a private generator with
            that seed, so the call repeats.

    Returns:
        Tensor: the samples.
    """
    shp = _shape(shape, "uniform")
    npd = _float_dtype(dtype, "uniform")
    lo, hi = float(number_arg(min, "uniform", "min")), float(number_arg(max, "uniform", "max"))
    s = _int_number(seed, "uniform", "seed")
    gen = local_generator(s) if s else None
    return _wrap(uniform_array(shp, npd, lo, hi, gen=gen))


def randn(shape, dtype=None, name=None) -> Tensor:
    """Samples from the standard normal distribution N(0, 1).

    Args:
        shape (list|tuple|Tensor|int): output shape.
        dtype (str|paddle.dtype, optional): a float dtype (default float).

    Returns:
        Tensor: the samples.
    """
    return _wrap(normal_array(_shape(shape, "randn"), _float_dtype(dtype, "randn")))


def standard_normal(shape, dtype=None, name=None) -> Tensor:
    """Samples from N(0, 1) (same as :func:`randn`).

    Args:
        shape (list|tuple|Tensor|int): output shape.
        dtype (str|paddle.dtype, optional): a float dtype (default float).

    Returns:
        Tensor: the samples.
    """
    return _wrap(normal_array(_shape(shape, "standard_normal"),
                              _float_dtype(dtype, "standard_normal")))


def normal(mean=0.0, std=1.0, shape=None, name=None) -> Tensor:
    """Samples from N(mean, std**2); ``mean`` and ``std`` may be tensors (then differentiable).

    With a tensor ``mean`` the output has its shape and dtype (a tensor ``std`` is reshaped to
    it); with only a tensor ``std``, std's. With two numbers, ``shape`` gives the shape.

    Args:
        mean (float|Tensor): the mean.
        std (float|Tensor): the standard deviation.
        shape (list|tuple|Tensor, optional): output shape when mean and std are numbers.

    Returns:
        Tensor: the samples.
    """
    from .manipulation import reshape
    from .math import add, multiply

    tm, ts = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not tm and not ts:
        m, s = float(number_arg(mean, "normal", "mean")), float(number_arg(std, "normal", "std"))
        return _wrap(normal_array(_shape(shape, "normal"), _dt.default_np(), m, s))
    if tm:
        mean = float_arg(mean, "normal", "mean")
        ref = mean
        if ts:
            std = float_arg(std, "normal", "std")
            if std.size != mean.size:
                raise ValueError(f"normal: std (shape {std.shape}) must have as many elements "
                                 f"as mean (shape {mean.shape})")
            std = reshape(cast_to(std, mean._data.dtype), mean.shape)
        else:
            std = float(number_arg(std, "normal", "std"))
    else:
        std = float_arg(std, "normal", "std")
        ref = std
        mean = float(number_arg(mean, "normal", "mean"))
    noise = _wrap(normal_array(ref._data.shape, ref._data.dtype, place=ref.place))
    return add(multiply(noise, std), mean)


def randint(low=0, high=None, shape=[1], dtype=None, name=None) -> Tensor:  # noqa: B006
    """Integers uniform in ``[low, high)`` (``[0, low)`` when high is None).

    Args:
        low (int): lower bound (included).
        high (int, optional): upper bound (excluded).
        shape (list|tuple|Tensor|int): output shape (default ``[1]``).
        dtype (str|paddle.dtype, optional): int32 or int64 (default int64).

    Returns:
        Tensor: the samples.
    """
    low = _int_number(low, "randint", "low")
    if high is None:
        if low <= 0:
            raise ValueError(f"randint: if high is None, low must be greater than 0, got "
                             f"low = {low}")
        low, high = 0, low
    else:
        high = _int_number(high, "randint", "high")
    if low >= high:
        raise ValueError(f"randint: low must be less than high, got low = {low}, high = {high}")
    npd = np.dtype(np.int64) if dtype is None else _dt.to_np(dtype)
    if npd not in (np.int32, np.int64):
        raise TypeError(f"randint: dtype must be int32 or int64, got {_dt.from_np(npd)}")
    return _wrap(randint_array(low, high, _shape(shape, "randint"), npd))


def randint_like(x, low=0, high=None, dtype=None, name=None) -> Tensor:
    """Integers uniform in ``[low, high)`` with x's shape (and x's dtype unless ``dtype``).

    Args:
        x (Tensor): gives the shape (and the default dtype, which may be a float dtype).
        low (int): lower bound.
        high (int, optional): upper bound (``[0, low)`` when None).
        dtype (str|paddle.dtype, optional): output dtype.

    Returns:
        Tensor: the samples.
    """
    x = tensor_arg(x, "randint_like")
    low = _int_number(low, "randint_like", "low")
    if high is None:
        if low <= 0:
            raise ValueError(f"randint_like: if high is None, low must be greater than 0, got "
                             f"low = {low}")
        low, high = 0, low
    else:
        high = _int_number(high, "randint_like", "high")
    if low >= high:
        raise ValueError(f"randint_like: low must be less than high, got low = {low}, "
                         f"high = {high}")
    npd = x._data.dtype if dtype is None else _dt.to_np(dtype)
    if npd.kind in "bc":
        raise TypeError(f"randint_like: dtype {_dt.from_np(npd)} is not supported")
    return _wrap(randint_array(low, high, x._data.shape, npd, place=x.place))


def randperm(n, dtype="int64", name=None) -> Tensor:
    """A random permutation of ``0 .. n-1``.

    Args:
        n (int): how many values (>= 0).
        dtype (str|paddle.dtype): int32, int64, float32 or float64.

    Returns:
        Tensor: 1-D tensor of length n.
    """
    n = _int_number(n, "randperm", "n")
    if n < 0:
        raise ValueError(f"randperm: n must be non-negative, got {n}")
    npd = _dt.to_np(dtype)
    if npd not in (np.int32, np.int64, np.float32, np.float64):
        raise TypeError(f"randperm: dtype must be int32, int64, float32 or float64, got "
                        f"{_dt.from_np(npd)}")
    return _wrap(generator().permutation(n).astype(npd))


# ---------------------------------------------------------------- sampling from tensors

def bernoulli(x, name=None) -> Tensor:
    """0/1 samples: each element is 1 with probability ``x[i]``.

    Args:
        x (Tensor): probabilities in [0, 1] (float32 or float64).

    Returns:
        Tensor: x's shape and dtype, stop_gradient=True.

    Raises:
        ValueError: a probability is outside [0, 1] or NaN (also an IndexError, as Paddle).
    """
    x = float_arg(x, "bernoulli")
    p = x._data
    xp = _xp(p)
    if p.size:
        lo, hi = p.min(), p.max()
        if bool(xp.isnan(p).any()) or float(lo) < 0 or float(hi) > 1:
            bad = float(lo) if float(lo) < 0 else float(hi)
            raise _ProbabilityError(f"bernoulli: every probability must be in [0, 1], got "
                                    f"{bad if not bool(xp.isnan(p).any()) else 'nan'}")
    u = uniform_array(p.shape, np.float64 if p.dtype == np.float64 else np.float32,
                      place=x.place)
    return _wrap((u < p).astype(p.dtype))


@op("poisson", saves=())
def _poisson_kernel(lam, samples):
    xp = _xp(lam)
    return samples, lambda g: (xp.zeros_like(g), None)


def poisson(x, name=None) -> Tensor:
    """Poisson samples with rates ``x``; the gradient with respect to x is zero.

    Args:
        x (Tensor): non-negative rates (float32 or float64).

    Returns:
        Tensor: x's shape and dtype.
    """
    x = float_arg(x, "poisson")
    lam = x._data
    xp = _xp(lam)
    if lam.size and (bool(xp.isnan(lam).any()) or float(lam.min()) < 0):
        raise ValueError("poisson: every rate in x must be non-negative")
    samples = xp.asarray(generator_for(lam).poisson(lam.astype(np.float64))).astype(lam.dtype)
    return apply(_poisson_kernel, x, _wrap(samples))


def multinomial(x, num_samples=1, replacement=False, name=None) -> Tensor:
    """Draw category indices from the (unnormalised) probabilities in each row of x.

    Args:
        x (Tensor): 1-D ``[C]`` or 2-D ``[B, C]`` non-negative weights (float32/float64).
        num_samples (int): samples per row.
        replacement (bool): sample with replacement; without it, num_samples must not exceed
            the number of non-zero categories of any row.

    Returns:
        Tensor: int64, shape ``[num_samples]`` or ``[B, num_samples]``.
    """
    x = float_arg(x, "multinomial")
    n = _int_number(num_samples, "multinomial", "num_samples")
    if x.ndim not in (1, 2):
        raise ValueError(f"multinomial: x must be 1-D or 2-D, got shape {x.shape}")
    if n <= 0:
        raise ValueError(f"multinomial: num_samples must be positive, got {n}")
    p = x._data.astype(np.float64).reshape(-1, x.shape[-1])
    xp = _xp(p)
    rows, c = p.shape
    if c == 0:
        raise ValueError("multinomial: x has no categories")
    if bool(xp.isnan(p).any()) or bool((p < 0).any()):
        raise ValueError("multinomial: the probabilities in x must be non-negative numbers")
    total = p.sum(axis=1)
    if bool((total <= 0).any()):
        raise ValueError("multinomial: the probabilities of each distribution must sum to a "
                         "positive value")
    gen = generator_for(p)
    if replacement:
        cdf = xp.cumsum(p / total[:, None], axis=1)
        cdf[:, -1] = 1.0
        u = gen.random((rows, n))
        # one searchsorted over all rows: row r lives in [r, r + 1]
        off = xp.arange(rows, dtype=np.float64)[:, None]
        flat = xp.searchsorted((cdf + off).ravel(), (u + off).ravel(), side="right")
        idx = flat.reshape(rows, n) - xp.arange(rows)[:, None] * c
        idx = xp.minimum(idx, c - 1)
    else:
        nonzero = (p > 0).sum(axis=1)
        if bool((nonzero < n).any()):
            raise ValueError(f"multinomial: without replacement num_samples ({n}) must not "
                             f"exceed the number of non-zero categories "
                             f"({int(nonzero.min())})")
        # exponential race: the n smallest E_i / p_i are a draw without replacement
        with np.errstate(divide="ignore"):
            keys = gen.exponential(1.0, (rows, c)) / p
        idx = xp.argsort(keys, axis=1)[:, :n]
    out = idx.astype(np.int64)
    return _wrap(out.reshape(n) if x.ndim == 1 else out)


# ---------------------------------------------------------------- inplace fills

@op("random_fill", saves=())
def _replace_kernel(x, v):
    xp = _xp(x)
    return v.astype(x.dtype, copy=False), lambda g: (xp.zeros_like(g), None)


def _fill_random(x, arr, op):
    """Write samples ``arr`` into x in place; x's gradient through this op is zero."""
    check_inplace(x, op)
    return apply_(_replace_kernel, x, _wrap(arr))


def _inplace_target(x, op):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: x must be a Tensor, got {type(x).__name__}")
    if not _dt.is_float_np(x._data.dtype):
        raise TypeError(f"{op}: x must be a floating tensor, got {x.dtype}")
    return x


def uniform_(x, min=-1.0, max=1.0, seed=0, name=None) -> Tensor:  # noqa: A002
    """Fill x in place with U[min, max) samples (Tensor method); returns x.

    Args:
        x (Tensor): a floating tensor.
        min (float): lower bound.
        max (float): upper bound.
        seed (int): 0 for the global generator, else a private generator with that seed.

    Returns:
        Tensor: x.
    """
    x = _inplace_target(x, "uniform_")
    lo, hi = float(number_arg(min, "uniform_", "min")), float(number_arg(max, "uniform_", "max"))
    s = _int_number(seed, "uniform_", "seed")
    gen = local_generator(s, x.place) if s else None
    arr = uniform_array(x._data.shape, x._data.dtype, lo, hi, place=x.place, gen=gen)
    return _fill_random(x, arr, "uniform_")


def normal_(x, mean=0.0, std=1.0, name=None) -> Tensor:
    """Fill x in place with N(mean, std**2) samples; returns x.

    Args:
        x (Tensor): a floating tensor.
        mean (float): the mean.
        std (float): the standard deviation.

    Returns:
        Tensor: x.
    """
    x = _inplace_target(x, "normal_")
    m, s = float(number_arg(mean, "normal_", "mean")), float(number_arg(std, "normal_", "std"))
    arr = normal_array(x._data.shape, x._data.dtype, m, s, place=x.place)
    return _fill_random(x, arr, "normal_")


def exponential_(x, lam=1.0, name=None) -> Tensor:
    """Fill x in place with Exp(lam) samples (mean 1/lam; Tensor method); returns x.

    Args:
        x (Tensor): a floating tensor.
        lam (float): the rate (> 0).

    Returns:
        Tensor: x.
    """
    x = _inplace_target(x, "exponential_")
    lam = float(number_arg(lam, "exponential_", "lam"))
    if not lam > 0:
        raise ValueError(f"exponential_: lam must be positive, got {lam}")
    arr = generator(x.place).exponential(1.0 / lam, tuple(x._data.shape))
    return _fill_random(x, arr, "exponential_")


def cauchy_(x, loc=0, scale=1, name=None) -> Tensor:
    """Fill x in place with Cauchy(loc, scale) samples; returns x.

    Args:
        x (Tensor): a floating tensor.
        loc (float): the location (median).
        scale (float): the scale (> 0).

    Returns:
        Tensor: x.
    """
    x = _inplace_target(x, "cauchy_")
    loc = float(number_arg(loc, "cauchy_", "loc"))
    scale = float(number_arg(scale, "cauchy_", "scale"))
    if not scale > 0:
        raise ValueError(f"cauchy_: scale must be positive, got {scale}")
    arr = generator(x.place).standard_cauchy(tuple(x._data.shape)) * scale + loc
    return _fill_random(x, arr, "cauchy_")


def geometric_(x, probs, name=None) -> Tensor:
    """Fill x in place with Geometric(probs) samples: trials up to the first success (>= 1).

    Args:
        x (Tensor): a floating tensor.
        probs (float|Tensor): success probability in (0, 1]; a tensor broadcasts to x.

    Returns:
        Tensor: x (mean 1/probs).
    """
    x = _inplace_target(x, "geometric_")
    xp = _xp(x._data)
    if isinstance(probs, Tensor):
        p = probs._data.astype(np.float64)
    else:
        p = xp.asarray(float(number_arg(probs, "geometric_", "probs")))
    if p.size and (bool(xp.isnan(p).any()) or float(p.min()) <= 0 or float(p.max()) > 1):
        raise ValueError("geometric_: probs must be in (0, 1]")
    p = xp.broadcast_to(p, x._data.shape)
    arr = xp.asarray(generator(x.place).geometric(p, tuple(x._data.shape)))
    return _fill_random(x, arr, "geometric_")


# The seed / rng-state API lives with the generators; exported here at the top level.
seed = _fr.seed
get_rng_state = _fr.get_rng_state
set_rng_state = _fr.set_rng_state
get_cuda_rng_state = _fr.get_cuda_rng_state
set_cuda_rng_state = _fr.set_cuda_rng_state

API = ["seed", "get_rng_state", "set_rng_state", "get_cuda_rng_state", "set_cuda_rng_state",
       "rand", "uniform", "randn", "standard_normal", "normal", "randint", "randint_like",
       "randperm", "bernoulli", "poisson", "multinomial", "normal_", "cauchy_", "geometric_"]
METHODS = ["multinomial", "uniform_", "normal_", "exponential_", "cauchy_", "geometric_"]
