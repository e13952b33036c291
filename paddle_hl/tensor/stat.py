"""Reductions and statistics (Paddle's ``tensor/stat.py`` and the reductions of ``math.py``).

Rules shared by every reduction here (Paddle 2.6):

- ``axis=None`` (or ``[]``) reduces over all axes and gives a 0-D tensor (shape ``[]``);
  ``keepdim=True`` keeps each reduced axis with length 1.
- An empty input raises ``ValueError``, as Paddle's reduce kernels do.
- float16 / bfloat16 inputs are accumulated in float32 and the result is cast back.
- Each differentiable kernel declares one gradient rule (``@op(..., grad=rule)``, written over
  the rule namespace ``M``), which gives first-order gradients on arrays and differentiable ones
  under ``paddle_hl.grad(..., create_graph=True)``.
"""

from __future__ import annotations

import builtins as _b
import numbers

import numpy as np

from .. import backend
from ..backend import get_array_module as _xp
from ..framework import dtype as _dt
from ..framework.op import GRAD, apply, op
from ..framework.tensor import Tensor, _wrap
from ._helpers import _cast_kernel, as_float, cast_to, norm_axes, tensor_arg

__all__ = []

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_I64 = np.dtype(np.int64)
# element counts that a float of each itemsize holds exactly (the mean fast path needs it)
_EXACT_COUNT = {2: 1 << 11, 4: 1 << 24, 8: 1 << 53}


def _acc(x):
    """x as the array to accumulate in: float16/bfloat16 are widened to float32."""
    return x.astype(np.float32) if x.dtype in _dt.LOW_FLOATS else x


def _count(shape, axes) -> int:
    n = 1
    for a in axes:
        n *= shape[a]
    return n


def _axis_arg(axis):
    """An axis given as a Tensor, as Python ints (read directly from its array)."""
    if isinstance(axis, Tensor):
        return backend.to_numpy(axis._data).tolist()
    return axis


def _prep(x, axis, op):
    """Common argument handling: a Tensor, its sorted reduce axes, and the empty-input check."""
    if type(x) is not Tensor:
        x = tensor_arg(x, op)
    nd = x._data.ndim
    if axis is None:
        axes = tuple(range(nd))
    elif type(axis) is int and -nd <= axis < nd:
        # the common single-axis case, without norm_axes' general handling
        axes = (axis % nd,)
    else:
        axes = norm_axes(_axis_arg(axis), nd, op)
    if x._data.size == 0:
        raise ValueError(f"{op}: the input has shape {x.shape} and no elements; Paddle's "
                         "reductions need a non-empty tensor")
    return x, axes


def _check_numeric(x, op, bool_ok=False):
    k = x._data.dtype.kind
    if k == "b" and not bool_ok:
        raise TypeError(f"{op}: argument 'x' has dtype bool, expected an integer or floating "
                        "point tensor")
    if k == "c":
        raise TypeError(f"{op}: argument 'x' has dtype {x.dtype.name}; complex tensors are not "
                        "supported")


def _np_axis(axes, ndim):
    """NumPy's axis argument: None when every axis is reduced (NumPy's fastest path)."""
    return None if len(axes) == ndim and ndim else axes


def _kept_shape(shape, axes):
    return [1 if a in axes else s for a, s in enumerate(shape)]


def _regrow(M, g, shape, axes, keepdim):
    """A reduction's output gradient ``g`` with the reduced axes of ``shape`` re-inserted as
    length 1 (so it broadcasts against the input), in either rule namespace."""
    if not keepdim and axes:
        return M.reshape(g, _kept_shape(shape, axes))
    return g


def _spread(M, g, x, axes, keepdim):
    """``g`` broadcast back over the reduced axes to x's shape, in x's dtype."""
    g = M.expand(_regrow(M, g, x.shape, axes, keepdim), x.shape)
    return g if M.tensor else g.astype(x.dtype, copy=False)


def _out(a, dtype):
    """A reduction result as an array of ``dtype`` (NumPy hands back scalars for 0-D)."""
    if type(a) is not np.ndarray:
        xp = _xp(a)
        if not isinstance(a, xp.ndarray):
            a = xp.asarray(a)
    return a.astype(dtype, copy=False)


# ---------------------------------------------------------------- sum / nansum

@op("sum", saves=(), grad=lambda M, x, out, g, axis, keepdim, dtype: (
    _spread(M, g, x, axis, keepdim),))
def _sum_kernel(x, axis, keepdim, dtype):
    # the array method (NumPy and CuPy) skips np.sum's dispatch layer (_wrapreduction)
    if x.dtype in _dt.LOW_FLOATS:
        out = _out(x.astype(np.float32).sum(axis=_np_axis(axis, x.ndim), keepdims=keepdim),
                   x.dtype)
    else:
        out = _out(x.sum(axis=_np_axis(axis, x.ndim), keepdims=keepdim, dtype=dtype),
                   dtype or x.dtype)
    return out, GRAD


def _sum_dtype(x, dtype, op):
    """Paddle's sum dtype rule: bool and int32 give int64 unless ``dtype`` is given.

    Returns ``(x, acc)``: x possibly cast to a requested dtype, and the integer accumulator.
    """
    src = x._data.dtype
    if dtype is None:
        return x, (_I64 if src.kind == "b" or src == np.int32 else None)
    npd = _dt.to_np(dtype)
    if npd == src:
        return x, None
    if _dt.is_inexact_np(npd) or src.kind in "fc" or src == _dt.BFLOAT16_NP:
        return cast_to(x, npd), None
    return x, npd


def sum(x, axis=None, dtype=None, keepdim=False, name=None):  # noqa: A001
    """Sum of the elements over ``axis``.

    Args:
        x (Tensor): input of any numeric dtype.
        axis (int|list|tuple|None): axes to reduce; None reduces all axes (0-D result).
        dtype (str|dtype|None): output dtype. By default bool and int32 sum to int64 and other
            dtypes keep theirs. float16/bfloat16 accumulate in float32.
        keepdim (bool): keep the reduced axes with length 1.

    Returns:
        Tensor: the sums.

    Example:
        >>> paddle.sum(paddle.to_tensor([[1, 2], [3, 4]]), axis=0)   # int64 [4, 6]
    """
    x, axes = _prep(x, axis, "sum")
    x, acc = _sum_dtype(x, dtype, "sum")
    return apply(_sum_kernel, x, axis=axes, keepdim=bool(keepdim), dtype=acc)


def _nansum_grad(M, x, out, g, axis, keepdim):
    xd = M.value(x)
    keep = M.mask(~_xp(xd).isnan(xd), x)
    return (_spread(M, g, x, axis, keepdim) * keep,)


@op("nansum", grad=_nansum_grad)
def _nansum_kernel(x, axis, keepdim):
    xp = _xp(x)
    keep = ~xp.isnan(x)
    return _out(xp.sum(xp.where(keep, _acc(x), 0), axis=axis, keepdims=keepdim), x.dtype), GRAD


def nansum(x, axis=None, dtype=None, keepdim=False, name=None):
    """Sum over ``axis`` treating NaN as zero; same dtype rules as :func:`sum`.

    Args:
        x (Tensor): input.
        axis (int|list|tuple|None): axes to reduce (None: all, 0-D result).
        dtype (str|dtype|None): output dtype.
        keepdim (bool): keep the reduced axes with length 1.

    Returns:
        Tensor: the sums of the non-NaN elements.
    """
    x, axes = _prep(x, axis, "nansum")
    x, acc = _sum_dtype(x, dtype, "nansum")
    if not _dt.is_inexact_np(x._data.dtype) or x._data.dtype.kind == "c":
        return apply(_sum_kernel, x, axis=axes, keepdim=bool(keepdim), dtype=acc)
    return apply(_nansum_kernel, x, axis=axes, keepdim=bool(keepdim))


# ---------------------------------------------------------------- mean / nanmean

@op("mean", saves=(), grad=lambda M, x, out, g, axis, keepdim: (
    _spread(M, g / _count(x.shape, axis), x, axis, keepdim),))
def _mean_kernel(x, axis, keepdim):
    xp = _xp(x)
    n = _count(x.shape, axis)
    a = _acc(x)
    if a.dtype.kind == "f" and n <= _EXACT_COUNT.get(a.dtype.itemsize, 0):
        # sum / n in a's dtype equals np.mean (which divides in float64 and rounds back: a
        # double rounding that is exact for a quotient) and skips its Python layers
        out = _out(a.sum(axis=_np_axis(axis, x.ndim), keepdims=keepdim) / n, x.dtype)
    else:
        out = _out(xp.mean(a, axis=_np_axis(axis, x.ndim), keepdims=keepdim), x.dtype)
    return out, GRAD


def mean(x, axis=None, keepdim=False, name=None):
    """Arithmetic mean over ``axis``.

    Args:
        x (Tensor): input. Integer and bool inputs are averaged in the default float dtype;
            float16/bfloat16 accumulate in float32.
        axis (int|list|tuple|None): axes to reduce (None: all, 0-D result).
        keepdim (bool): keep the reduced axes with length 1.

    Returns:
        Tensor: the means.

    Example:
        >>> paddle.mean(paddle.to_tensor([[1., 2.], [3., 4.]]))   # 2.5, shape []
    """
    x, axes = _prep(x, axis, "mean")
    return apply(_mean_kernel, as_float(x), axis=axes, keepdim=bool(keepdim))


def _nanmean_grad(M, x, out, g, axis, keepdim):
    xd = M.value(x)
    keep = ~_xp(xd).isnan(xd)
    with np.errstate(invalid="ignore", divide="ignore"):
        w = (keep / keep.sum(axis=axis, keepdims=True)).astype(xd.dtype, copy=False)
    return (_regrow(M, g, x.shape, axis, keepdim) * M.const(w),)


@op("nanmean", grad=_nanmean_grad)
def _nanmean_kernel(x, axis, keepdim):
    xp = _xp(x)
    keep = ~xp.isnan(x)
    cnt = xp.sum(keep, axis=axis, keepdims=True)
    tot = xp.sum(xp.where(keep, _acc(x), 0), axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        res = tot / cnt  # an all-NaN group gives 0/0 = NaN, as in Paddle
    if not keepdim and axis:
        res = xp.squeeze(res, axis)
    return _out(res, x.dtype), GRAD


def nanmean(x, axis=None, keepdim=False, name=None):
    """Mean over ``axis`` ignoring NaN; an all-NaN group gives NaN.

    Args:
        x (Tensor): input (integers are averaged in the default float dtype).
        axis (int|list|tuple|None): axes to reduce (None: all, 0-D result).
        keepdim (bool): keep the reduced axes with length 1.

    Returns:
        Tensor: the means of the non-NaN elements.
    """
    x, axes = _prep(x, axis, "nanmean")
    x = as_float(x)
    if x._data.dtype.kind == "c":
        return apply(_mean_kernel, x, axis=axes, keepdim=bool(keepdim))
    return apply(_nanmean_kernel, x, axis=axes, keepdim=bool(keepdim))


# ---------------------------------------------------------------- prod

def _prod_others(x, axes):
    """For each element, the product of the *other* elements of its reduction group.

    Without zeros this is ``prod / x``; with zeros it uses exclusive cumulative products from
    both ends, so the gradient at a zero is the product of the rest (not NaN).
    """
    xp = _xp(x)
    if not axes:
        return xp.ones_like(x)
    if bool(xp.all(x != 0)):
        return xp.prod(x, axis=axes, keepdims=True) / x
    rest = [a for a in range(x.ndim) if a not in axes]
    perm = rest + list(axes)
    xt = xp.transpose(x, perm)
    flat = xt.reshape(xt.shape[:len(rest)] + (-1,))
    ones = xp.ones(flat.shape[:-1] + (1,), dtype=x.dtype)
    left = xp.cumprod(xp.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    rflat = xp.flip(flat, axis=-1)
    right = xp.flip(xp.cumprod(xp.concatenate([ones, rflat[..., :-1]], axis=-1), axis=-1),
                    axis=-1)
    others = (left * right).reshape(xt.shape)
    return xp.transpose(others, tuple(int(i) for i in np.argsort(perm)))


def _prod_grad(M, x, out, g, axis, keepdim):
    g = _regrow(M, g, x.shape, axis, keepdim)
    if M.tensor:
        # differentiable form prod / x: exact wherever x has no zero
        return (g * M.prod(x, list(axis), keepdim=True) / x,)
    return ((g * _prod_others(_acc(x), axis)).astype(x.dtype, copy=False),)


@op("prod", grad=_prod_grad)
def _prod_kernel(x, axis, keepdim):
    return _out(_xp(x).prod(_acc(x), axis=axis, keepdims=keepdim), x.dtype), GRAD


def prod(x, axis=None, keepdim=False, dtype=None, name=None):
    """Product of the elements over ``axis``.

    Args:
        x (Tensor): input (integer or floating point).
        axis (int|list|tuple|None): axes to reduce (None: all, 0-D result).
        keepdim (bool): keep the reduced axes with length 1.
        dtype (str|dtype|None): cast x to this dtype before multiplying.

    Returns:
        Tensor: the products. The gradient at a zero element is the product of the others.
    """
    x, axes = _prep(x, axis, "prod")
    if dtype is not None:
        x = cast_to(x, _dt.to_np(dtype))
    _check_numeric(x, "prod")
    return apply(_prod_kernel, x, axis=axes, keepdim=bool(keepdim))


# ---------------------------------------------------------------- max / min / amax / amin

def _extreme(name, fn, split):
    """Kernel for max/min (gradient to every tied element) or amax/amin (shared evenly)."""

    def mask_of(x, axis):
        xp = _xp(x)
        m = (x == getattr(xp, fn)(x, axis=axis, keepdims=True)).astype(x.dtype)
        if split:
            m = m / xp.sum(m, axis=axis, keepdims=True)
        return m

    def grad(M, x, out, g, axis, keepdim):
        return (_regrow(M, g, x.shape, axis, keepdim) * M.const(mask_of(M.value(x), axis)),)

    @op(name, grad=grad)
    def kernel(x, axis, keepdim):
        # the array method (x.max / x.min) skips np.max's dispatch layer; same NaN handling
        return _out(getattr(x, fn)(axis=_np_axis(axis, x.ndim), keepdims=keepdim), x.dtype), GRAD

    kernel.__name__ = f"_{name}_kernel"

    def public(x, axis=None, keepdim=False, name=None):
        x, axes = _prep(x, axis, kernel.op_name)
        _check_numeric(x, kernel.op_name)
        return apply(kernel, x, axis=axes, keepdim=bool(keepdim))

    public.__name__ = public.__qualname__ = name
    tie = ("the gradient is shared evenly among tied extreme elements" if split else
           "every element equal to the result receives the full gradient")
    public.__doc__ = (
        f"{'Maximum' if fn == 'max' else 'Minimum'} over ``axis`` (NaN propagates).\n\n"
        "    Args:\n"
        "        x (Tensor): input (integer or floating point).\n"
        "        axis (int|list|tuple|None): axes to reduce (None: all, 0-D result).\n"
        "        keepdim (bool): keep the reduced axes with length 1.\n\n"
        "    Returns:\n"
        f"        Tensor: same dtype as x; {tie}.\n")
    return public


max = _extreme("max", "max", False)  # noqa: A001
min = _extreme("min", "min", False)  # noqa: A001
amax = _extreme("amax", "max", True)
amin = _extreme("amin", "min", True)


# ---------------------------------------------------------------- all / any / count_nonzero

@op("all")
def _all_kernel(x, axis, keepdim):
    return _out(_xp(x).all(x, axis=axis, keepdims=keepdim), np.bool_), None


@op("any")
def _any_kernel(x, axis, keepdim):
    return _out(_xp(x).any(x, axis=axis, keepdims=keepdim), np.bool_), None


@op("count_nonzero")
def _count_nonzero_kernel(x, axis, keepdim):
    xp = _xp(x)
    return _out(xp.sum(x != 0, axis=axis, keepdims=keepdim), np.int64), None



def all(x, axis=None, keepdim=False, name=None):  # noqa: A001
    """Whether every element over ``axis`` is nonzero / True.

    Args:
        x (Tensor): input of any dtype (nonzero counts as True).
        axis (int|list|tuple|None): axes to reduce (None: all, 0-D result).
        keepdim (bool): keep the reduced axes with length 1.

    Returns:
        Tensor: bool.
    """
    x, axes = _prep(x, axis, "all")
    return apply(_all_kernel, x, axis=axes, keepdim=bool(keepdim))


def any(x, axis=None, keepdim=False, name=None):  # noqa: A001
    """Whether any element over ``axis`` is nonzero / True.

    Args:
        x (Tensor): input of any dtype (nonzero counts as True).
        axis (int|list|tuple|None): axes to reduce (None: all, 0-D result).
        keepdim (bool): keep the reduced axes with length 1.

    Returns:
        Tensor: bool.
    """
    x, axes = _prep(x, axis, "any")
    return apply(_any_kernel, x, axis=axes, keepdim=bool(keepdim))


def count_nonzero(x, axis=None, keepdim=False, name=None):
    """Number of nonzero elements over ``axis``.

    Args:
        x (Tensor): input of any dtype.
        axis (int|list|tuple|None): axes to reduce (None: all, 0-D result).
        keepdim (bool): keep the reduced axes with length 1.

    Returns:
        Tensor: int64 counts.
    """
    x, axes = _prep(x, axis, "count_nonzero")
    return apply(_count_nonzero_kernel, x, axis=axes, keepdim=bool(keepdim))


# ---------------------------------------------------------------- logsumexp

def _lse_grad(M, x, out, g, axis, keepdim):
    # softmax weights exp(x - out), from the output as Paddle's kernel computes them
    full = _regrow(M, out, x.shape, axis, keepdim)
    with np.errstate(invalid="ignore", over="ignore"):
        return (_regrow(M, g, x.shape, axis, keepdim) * M.exp(x - full),)


@op("logsumexp", uses_out=True, grad=_lse_grad)
def _lse_kernel(x, axis, keepdim):
    xp = _xp(x)
    a = _acc(x)
    m = xp.max(a, axis=axis, keepdims=True)
    # The max is subtracted as is (no special case for infinite maxima): a group that is all
    # -inf gives NaN, as in Paddle 2.6.
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        full = xp.log(xp.sum(xp.exp(a - m), axis=axis, keepdims=True)) + m
    res = full if keepdim or not axis else xp.squeeze(full, axis)
    return _out(res, x.dtype), GRAD


def logsumexp(x, axis=None, keepdim=False, name=None):
    """``log(sum(exp(x)))`` over ``axis``, computed stably by subtracting the maximum.

    Args:
        x (Tensor): input (integers are computed in the default float dtype).
        axis (int|list|tuple|None): axes to reduce (None: all, 0-D result).
        keepdim (bool): keep the reduced axes with length 1.

    Returns:
        Tensor: the log-sum-exp values.
    """
    x, axes = _prep(x, axis, "logsumexp")
    _check_numeric(x, "logsumexp", bool_ok=True)
    return apply(_lse_kernel, as_float(x), axis=axes, keepdim=bool(keepdim))


# ---------------------------------------------------------------- var / std

def _var_div(n, unbiased):
    # Paddle divides by max(n - 1, 1) when unbiased, so a single element has variance 0.
    return _b.max(n - 1, 1) if unbiased else n


def _as_dtype(M, t, dt):
    """``t`` in dtype ``dt`` (a recorded cast on Tensors), in either rule namespace."""
    return t if M.value(t).dtype == dt else M.op(_cast_kernel, t, dtype=dt)


def _moments(x, axis, unbiased):
    """``(d, div, kept)`` of a variance over ``axis``: the centred values (accumulation dtype),
    the divisor, and the kept-dims shape a dropped-dims gradient is reshaped to."""
    a = _acc(x)
    d = a - _xp(a).mean(a, axis=axis, keepdims=True)
    return d, _var_div(_count(x.shape, axis), unbiased), _kept_shape(x.shape, axis)


def _var_grad(M, x, out, saved, g, axis, unbiased, keepdim):
    # residuals: the centred values (differentiable in x: recomputed from the Tensor x under
    # create_graph), the divisor and the kept-dims shape (constants)
    d, div, kept = saved
    if M.tensor:
        d = x - mean(x, list(axis), keepdim=True)
    if not keepdim and axis:
        g = M.reshape(g, kept)
    with np.errstate(invalid="ignore"):  # std of a constant: inf * 0 = NaN, as Paddle
        r = g * (2.0 / div) * d
    # on arrays d is in the accumulation dtype (float32 for float16/bfloat16)
    return (r if M.tensor else r.astype(x.dtype, copy=False),)


# the kernel hands its centred values to the rule (recentring x was 40% slower)
@op("var", grad=_var_grad, residuals=True)
def _var_kernel(x, axis, unbiased, keepdim):
    d, div, kept = _moments(x, axis, unbiased)
    out = _out(_xp(d).sum(d * d, axis=axis, keepdims=keepdim) / div, x.dtype)
    return out, GRAD.save(d, div, kept)


def _std_grad(M, x, out, saved, g, axis, unbiased, keepdim):
    # residuals as var's, and the std with the reduced axes kept (recomputed, differentiably,
    # from the Tensor x under create_graph)
    d, div, kept, full = saved
    if M.tensor:
        d = x - mean(x, list(axis), keepdim=True)
        full = M.op(_std_kernel, x, axis=axis, unbiased=unbiased, keepdim=True)
    if not keepdim and axis:
        g = M.reshape(g, kept)
    # a constant group has std 0: 0 / 0 = NaN, as in Paddle
    with np.errstate(invalid="ignore", divide="ignore"):
        r = g * d / (full * div)
    return (r if M.tensor else r.astype(x.dtype, copy=False),)


# the kernel hands its centred values and the std to the rule (one rule recomputing them was
# slower)
@op("std", grad=_std_grad, residuals=True)
def _std_kernel(x, axis, unbiased, keepdim):
    xp = _xp(x)
    d, div, kept = _moments(x, axis, unbiased)
    full = xp.sqrt(xp.sum(d * d, axis=axis, keepdims=True) / div)
    out = _out(full if keepdim or not axis else xp.squeeze(full, axis), x.dtype)
    return out, GRAD.save(d, div, kept, full)


def var(x, axis=None, unbiased=True, keepdim=False, name=None):
    """Variance over ``axis``.

    Args:
        x (Tensor): input (integers are computed in the default float dtype).
        axis (int|list|tuple|None): axes to reduce (None: all, 0-D result).
        unbiased (bool): divide by ``N - 1`` (at least 1) instead of ``N``.
        keepdim (bool): keep the reduced axes with length 1.

    Returns:
        Tensor: the variances.
    """
    x, axes = _prep(x, axis, "var")
    _check_numeric(x, "var")
    return apply(_var_kernel, as_float(x), axis=axes, unbiased=bool(unbiased),
                 keepdim=bool(keepdim))


def std(x, axis=None, unbiased=True, keepdim=False, name=None):
    """Standard deviation over ``axis`` (the square root of :func:`var`).

    Args:
        x (Tensor): input (integers are computed in the default float dtype).
        axis (int|list|tuple|None): axes to reduce (None: all, 0-D result).
        unbiased (bool): divide by ``N - 1`` (at least 1) instead of ``N``.
        keepdim (bool): keep the reduced axes with length 1.

    Returns:
        Tensor: the standard deviations.
    """
    x, axes = _prep(x, axis, "std")
    _check_numeric(x, "std")
    return apply(_std_kernel, as_float(x), axis=axes, unbiased=bool(unbiased),
                 keepdim=bool(keepdim))


# ---------------------------------------------------------------- median / quantile

def _order_weights(x, axes, qs, kind, ignore_nan):
    """Order statistics of ``x`` over ``axes`` as a weighted pick of sorted elements.

    Returns ``(values, w)``: ``values`` has shape ``[nq, *rest]`` (float64 for quantiles), and
    ``w`` has shape ``[nq, *x.shape]`` holding, for every element of x, its weight in each
    result: the result is linear in the picked elements, so ``w`` is also the Jacobian.
    """
    xp = _xp(x)
    nd = x.ndim
    rest = [a for a in range(nd) if a not in axes]
    perm = rest + list(axes)
    xt = xp.transpose(x, perm)
    lead = xt.shape[:len(rest)]
    flat = xt.reshape(lead + (-1,))
    n = flat.shape[-1]
    order = xp.argsort(flat, axis=-1, kind="stable")  # NaN sorts last
    srt = xp.take_along_axis(flat, order, axis=-1)
    inexact = _dt.is_inexact_np(x.dtype)
    nan_rows = xp.isnan(flat).any(axis=-1) if inexact else None
    if ignore_nan and inexact:
        cnt = n - xp.sum(xp.isnan(flat), axis=-1)
    else:
        cnt = xp.full(lead, n, dtype=np.int64)
    empty = cnt == 0
    if kind == "median":
        lo = xp.maximum((cnt - 1) // 2, 0)[None]
        hi = (cnt // 2)[None]
        wl = xp.full(lo.shape, 0.5)
        wh = xp.full(lo.shape, 0.5)
    else:
        q = xp.asarray(qs, dtype=np.float64).reshape((-1,) + (1,) * len(lead))
        pos = q * (cnt - 1)
        lo = xp.maximum(xp.floor(pos), 0).astype(np.int64)
        hi = xp.maximum(xp.ceil(pos), 0).astype(np.int64)
        wh = pos - xp.floor(pos)
        wl = 1.0 - wh
    s_lo = xp.take_along_axis(srt[None], lo[..., None], axis=-1)[..., 0]
    s_hi = xp.take_along_axis(srt[None], hi[..., None], axis=-1)[..., 0]
    if kind == "median":
        cdt = np.float64 if x.dtype.kind in "biu" else s_lo.dtype
        vals = (s_lo.astype(cdt) + s_hi.astype(cdt)) / 2
    else:
        s_lo, s_hi = s_lo.astype(np.float64), s_hi.astype(np.float64)
        vals = s_lo + wh * (s_hi - s_lo)  # Paddle's lerp form
    bad = empty if nan_rows is None or ignore_nan else (empty | nan_rows)
    if bool(xp.any(bad)):
        vals = xp.where(bad[None], xp.nan, vals)
        wl = xp.where(bad[None], 0.0, wl)
        wh = xp.where(bad[None], 0.0, wh)
    idx = xp.arange(n)
    w_sorted = (idx == lo[..., None]) * wl[..., None] + (idx == hi[..., None]) * wh[..., None]
    # back from sorted order to the original positions (the inverse permutation of order)
    w_flat = xp.take_along_axis(w_sorted, xp.argsort(order, axis=-1)[None], axis=-1)
    w = w_flat.reshape((w_flat.shape[0],) + xt.shape)
    inv = tuple(int(i) + 1 for i in np.argsort(perm))
    return vals, xp.transpose(w, (0,) + inv)


def _order_grad(M, x, out, saved, g, axes, keepdim, qs, kind, ignore_nan, scalar_q):
    # the pick weights depend on x only through the sort order (a piecewise-constant choice):
    # a constant under create_graph, so the residual serves both paths
    (w,) = saved
    xv = M.value(x)
    gk = M.reshape(g, [M.value(w).shape[0]] + _kept_shape(xv.shape, axes))
    return (_as_dtype(M, M.sum(gk * w, axis=0), xv.dtype),)


# the kernel hands the pick weights of its sort to the rule (a rule would sort again)
@op("median", grad=_order_grad, residuals=True)
def _order_kernel(x, axes, keepdim, qs, kind, ignore_nan, scalar_q):
    vals, w = _order_weights(x, axes, qs, kind, ignore_nan)
    nq = vals.shape[0]
    kept = _kept_shape(x.shape, axes)
    shape = kept if keepdim else [s for a, s in enumerate(x.shape) if a not in axes]
    shape = shape if scalar_q else [nq] + shape
    odt = x.dtype if kind == "median" else _F64
    return _out(vals.reshape(shape), odt), GRAD.save(w)


def _median_common(x, axis, keepdim, op, ignore_nan):
    if x._data.size == 0:
        raise ValueError(f"{op}: the size of input x should not be 0 (got shape {x.shape})")
    if isinstance(axis, (list, tuple)) and len(axis) == 0:
        raise ValueError(f"{op}: axis list should not be empty")
    axes = norm_axes(_axis_arg(axis), x.ndim, op)
    return apply(_order_kernel, x, axes=axes, keepdim=bool(keepdim), qs=None, kind="median",
                 ignore_nan=ignore_nan, scalar_q=True)


def median(x, axis=None, keepdim=False, name=None):
    """Median over one axis (or all elements); an even count averages the two middle values.

    Args:
        x (Tensor): input. A group containing NaN gives NaN.
        axis (int|None): the axis to reduce; None reduces all elements (0-D result).
        keepdim (bool): keep the reduced axis with length 1.

    Returns:
        Tensor: float64 for a float64 input, float32 otherwise. The gradient goes to the
        middle element(s) (half each for an even count).

    Example:
        >>> paddle.median(paddle.to_tensor([1., 3., 5., 2.]))   # 2.5
    """
    x = tensor_arg(x, "median")
    axis = _axis_arg(axis)
    if axis is not None and (not isinstance(axis, numbers.Integral) or isinstance(axis, bool)):
        raise ValueError(f"median: axis should be None or an int in range [-rank(x), rank(x)), "
                         f"got {axis!r}")
    if x._data.dtype.kind == "c":
        _check_numeric(x, "median")
    x = cast_to(x, _F64 if x._data.dtype == _F64 else _F32)
    return _median_common(x, axis, keepdim, "median", False)


def nanmedian(x, axis=None, keepdim=False, name=None):
    """Median over ``axis`` ignoring NaN; an all-NaN group gives NaN.

    Args:
        x (Tensor): input (integers give an integer result, truncated).
        axis (int|list|tuple|None): axes to reduce (None: all elements, 0-D result).
        keepdim (bool): keep the reduced axes with length 1.

    Returns:
        Tensor: same dtype as x.
    """
    x = tensor_arg(x, "nanmedian")
    _check_numeric(x, "nanmedian")
    src = x._data.dtype
    if src in _dt.LOW_FLOATS:
        return cast_to(_median_common(cast_to(x, _F32), axis, keepdim, "nanmedian", True), src)
    return _median_common(x, axis, keepdim, "nanmedian", True)


def _q_list(q, op):
    if isinstance(q, Tensor):
        raise TypeError(f"{op}: q should be an int, float, list or tuple, got a Tensor")
    qs = [q] if isinstance(q, numbers.Real) and not isinstance(q, bool) else q
    if not isinstance(qs, (list, tuple)):
        raise TypeError(f"{op}: q should be an int, float, list or tuple, got {type(q).__name__}")
    if len(qs) == 0:
        raise ValueError(f"{op}: q should not be empty")
    out = []
    for v in qs:
        if not isinstance(v, numbers.Real) or isinstance(v, bool):
            raise TypeError(f"{op}: q should contain numbers, got {v!r}")
        if not 0 <= v <= 1:
            raise ValueError(f"{op}: q should be in range [0, 1], got {v}")
        out.append(float(v))
    # a one-element list gives the same shape as a scalar q, as in Paddle
    return tuple(out), len(out) == 1


def _quantile_common(x, q, axis, keepdim, op, ignore_nan):
    x = tensor_arg(x, op)
    _check_numeric(x, op)
    qs, scalar = _q_list(q, op)
    if x._data.size == 0:
        raise ValueError(f"{op}: the input has shape {x.shape} and no elements")
    if isinstance(axis, (list, tuple)) and len(axis) == 0:
        raise ValueError(f"{op}: axis list should not be empty")
    axes = norm_axes(_axis_arg(axis), x.ndim, op)
    if x._data.dtype in _dt.LOW_FLOATS:
        x = cast_to(x, _F32)
    return apply(_order_kernel, x, axes=axes, keepdim=bool(keepdim), qs=qs, kind="quantile",
                 ignore_nan=ignore_nan, scalar_q=scalar)


def quantile(x, q, axis=None, keepdim=False):
    """Quantiles over ``axis`` by linear interpolation between the neighbouring order statistics.

    Args:
        x (Tensor): input (float or integer). A group containing NaN gives NaN.
        q (float|list|tuple): quantile(s) in ``[0, 1]``. A list adds a leading output axis.
        axis (int|list|tuple|None): axes to reduce (None: all elements).
        keepdim (bool): keep the reduced axes with length 1.

    Returns:
        Tensor: float64 (as in Paddle 2.6), shape ``[len(q), ...]`` for a list q.

    Example:
        >>> paddle.quantile(paddle.to_tensor([1., 2., 3., 4.]), 0.5)   # 2.5 (float64)
    """
    return _quantile_common(x, q, axis, keepdim, "quantile", False)


def nanquantile(x, q, axis=None, keepdim=False):
    """Like :func:`quantile` but ignoring NaN; an all-NaN group gives NaN.

    Args:
        x (Tensor): input (float or integer).
        q (float|list|tuple): quantile(s) in ``[0, 1]``.
        axis (int|list|tuple|None): axes to reduce (None: all elements).
        keepdim (bool): keep the reduced axes with length 1.

    Returns:
        Tensor: float64.
    """
    return _quantile_common(x, q, axis, keepdim, "nanquantile", True)


# ---------------------------------------------------------------- histogram / bincount

@op("histogram")
def _histogram_kernel(x, bins, lo, hi):
    xp = _xp(x)
    v = _acc(x.reshape(-1))
    if v.size == 0:
        return xp.zeros(bins, dtype=np.int64), None
    if v.dtype.kind == "f":
        if lo == 0 and hi == 0:
            lo, hi = xp.nanmin(v).item(), xp.nanmax(v).item()
        if lo == hi:
            lo, hi = lo - 1, hi + 1
        lo_t, hi_t = v.dtype.type(lo), v.dtype.type(hi)
        v = v[(v >= lo_t) & (v <= hi_t)]  # NaN fails both tests and is dropped
        idx = xp.floor((v - lo_t) * bins / (hi_t - lo_t)).astype(np.int64)
    else:
        v = v.astype(np.int64)
        if lo == 0 and hi == 0:
            lo, hi = int(v.min()), int(v.max())
        if lo == hi:
            lo, hi = lo - 1, hi + 1
        v = v[(v >= lo) & (v <= hi)]
        if isinstance(lo, int) and isinstance(hi, int):
            idx = (v - lo) * bins // (hi - lo)
        else:
            idx = xp.floor((v - lo) * bins / (hi - lo)).astype(np.int64)
    idx = xp.minimum(idx, bins - 1)  # x == max belongs to the last bin
    return xp.bincount(idx, minlength=bins)[:bins].astype(np.int64), None



def histogram(input, bins=100, min=0, max=0, name=None):  # noqa: A002
    """Histogram of the values of ``input`` in ``bins`` equal-width bins over ``[min, max]``.

    Args:
        input (Tensor): input of any real dtype (flattened).
        bins (int): number of bins (at least 1).
        min (int|float): lower end of the range.
        max (int|float): upper end. When min and max are both 0 the data's range is used; an
            empty range ``[a, a]`` is widened to ``[a - 1, a + 1]``.

    Returns:
        Tensor: int64 counts of shape ``[bins]``; values outside the range and NaN are ignored.
    """
    x = tensor_arg(input, "histogram", "input")
    _check_numeric(x, "histogram")
    if not isinstance(bins, numbers.Integral) or isinstance(bins, bool) or bins < 1:
        raise ValueError(f"histogram: bins should be an int >= 1, got {bins!r}")
    for arg, v in (("min", min), ("max", max)):
        if not isinstance(v, numbers.Real) or isinstance(v, bool):
            raise TypeError(f"histogram: '{arg}' should be a number, got {type(v).__name__}")
    if max < min:
        raise ValueError(f"histogram: max must be larger or equal to min, got min={min}, "
                         f"max={max}")
    lo = int(min) if float(min).is_integer() else float(min)
    hi = int(max) if float(max).is_integer() else float(max)
    return apply(_histogram_kernel, x, bins=int(bins), lo=lo, hi=hi)


@op("bincount")
def _bincount_kernel(x, w, minlength):
    xp = _xp(x)
    if w is None:
        return xp.bincount(x, minlength=minlength).astype(np.int64), None
    odt = w.dtype if _dt.is_inexact_np(w.dtype) else _F64
    out = xp.bincount(x, weights=w.astype(np.float64), minlength=minlength)
    return out.astype(odt), None



def bincount(x, weights=None, minlength=0, name=None):
    """Count the occurrences of each non-negative integer in a 1-D tensor.

    Args:
        x (Tensor): 1-D integer tensor of non-negative values.
        weights (Tensor|None): same shape as x; each occurrence adds its weight.
        minlength (int): minimum length of the result.

    Returns:
        Tensor: int64 counts, or weighted sums (float32/float64 weights keep their dtype,
        integer weights give float64), of length ``max(max(x) + 1, minlength)``.
    """
    x = tensor_arg(x, "bincount")
    if x._data.dtype.kind not in "iu":
        raise TypeError(f"bincount: x should be an integer tensor, got dtype {x.dtype.name}")
    if x.ndim != 1:
        raise ValueError(f"bincount: x should be a 1-D tensor, got shape {x.shape}")
    if isinstance(minlength, Tensor):
        minlength = int(minlength.item())
    if not isinstance(minlength, numbers.Integral) or minlength < 0:
        raise ValueError(f"bincount: minlength should be a non-negative int, got {minlength!r}")
    if x._data.size and int(x._data.min()) < 0:
        raise ValueError("bincount: the elements of x must be non-negative ints")
    w = None
    if weights is not None:
        w = tensor_arg(weights, "bincount", "weights")
        if w.shape != x.shape:
            raise ValueError(f"bincount: weights shape {w.shape} should equal x shape {x.shape}")
        w = w._data
    return apply(_bincount_kernel, x, w, minlength=int(minlength))


# ---------------------------------------------------------------- numel / rank / shape

def numel(x, name=None):
    """Number of elements of ``x`` as an int64 0-D tensor.

    Args:
        x (Tensor): input.

    Returns:
        Tensor: int64, shape ``[]``.
    """
    x = tensor_arg(x, "numel")
    return _wrap(_xp(x._data).asarray(x._data.size, dtype=np.int64))


def rank(input):  # noqa: A002
    """Number of dimensions of ``input`` as an int32 0-D tensor.

    Args:
        input (Tensor): input.

    Returns:
        Tensor: int32, shape ``[]``.
    """
    x = tensor_arg(input, "rank", "input")
    return _wrap(_xp(x._data).asarray(x._data.ndim, dtype=np.int32))


def shape(input):  # noqa: A002
    """The shape of ``input`` as an int32 1-D tensor (no gradient flows through it).

    Args:
        input (Tensor): input.

    Returns:
        Tensor: int32 of shape ``[input.ndim]``.

    Example:
        >>> paddle.shape(paddle.zeros([2, 3]))   # [2, 3], int32
    """
    x = tensor_arg(input, "shape", "input")
    return _wrap(_xp(x._data).asarray(x._data.shape, dtype=np.int32).reshape(-1))


API = ["sum", "mean", "prod", "max", "min", "amax", "amin", "all", "any", "logsumexp", "std",
       "var", "median", "nanmedian", "quantile", "nanquantile", "nansum", "nanmean",
       "count_nonzero", "histogram", "bincount", "numel", "rank", "shape"]
# Tensor.shape is a property, so ``shape`` is top-level only.
METHODS = [n for n in API if n != "shape"]
