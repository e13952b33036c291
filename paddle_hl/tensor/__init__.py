"""The tensor op library, grouped by Paddle's category files (``paddle.tensor``).

The public functions are imported here by name and re-exported at the top level
(``paddle_hl.add``). Each category module also lists ``METHODS``: names attached to ``Tensor``
as methods (the very same functions; a ``(method_name, function)`` pair attaches a function
under another name).

This module attaches the methods and Python operators once, at import, and hands the engine the
differentiable ops it needs for ``create_graph``.
"""

from __future__ import annotations

import types

from ..framework import engine
from ..framework.op import set_tensor_ops
from ..framework.tensor import Tensor
from . import creation, linalg, logic, manipulation, math, random, search, special, stat
from ._helpers import OPERATOR
from ._tensor_ops import TensorOps
from ._unbroadcast import unbroadcast_tensor
from .array import array_length, array_read, array_write, create_array  # noqa: F401
from .creation import (
    arange,
    assign,
    clone,
    complex,
    diag,
    diag_embed,
    diagflat,
    empty,
    empty_like,
    eye,
    full,
    full_like,
    linspace,
    logspace,
    meshgrid,
    ones,
    ones_like,
    polar,
    to_tensor,
    tril,
    tril_,
    tril_indices,
    triu,
    triu_,
    triu_indices,
    vander,
    zeros,
    zeros_like,
)
from .linalg import (
    bmm,
    cdist,
    cross,
    dist,
    dot,
    einsum,
    inner,
    kron,
    matmul,
    mm,
    mv,
    outer,
    tensordot,
)
from .logic import (
    allclose,
    bitwise_and,
    bitwise_and_,
    bitwise_not,
    bitwise_not_,
    bitwise_or,
    bitwise_or_,
    bitwise_xor,
    bitwise_xor_,
    equal,
    equal_,
    equal_all,
    greater_equal,
    greater_equal_,
    greater_than,
    greater_than_,
    is_complex,
    is_empty,
    is_floating_point,
    is_integer,
    is_tensor,
    isclose,
    isfinite,
    isinf,
    isnan,
    less_equal,
    less_equal_,
    less_than,
    less_than_,
    logical_and,
    logical_and_,
    logical_not,
    logical_not_,
    logical_or,
    logical_or_,
    logical_xor,
    not_equal,
)
from .manipulation import (
    as_strided,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    broadcast_shape,
    broadcast_tensors,
    broadcast_to,
    cast,
    cast_,
    chunk,
    combinations,
    concat,
    crop,
    diagonal,
    diagonal_scatter,
    expand,
    expand_as,
    flatten,
    flip,
    gather,
    gather_nd,
    index_add,
    index_add_,
    index_fill,
    index_fill_,
    index_put,
    index_put_,
    index_sample,
    index_select,
    masked_fill,
    masked_fill_,
    moveaxis,
    put_along_axis,
    repeat_interleave,
    reshape,
    reshape_,
    reverse,
    roll,
    rot90,
    scatter,
    scatter_,
    scatter_nd,
    scatter_nd_add,
    select_scatter,
    shard_index,
    slice,
    split,
    squeeze,
    squeeze_,
    stack,
    strided_slice,
    t,
    t_,
    take,
    take_along_axis,
    tile,
    tolist,
    transpose,
    transpose_,
    unbind,
    unflatten,
    unfold,
    unsqueeze,
    unsqueeze_,
    unstack,
    view,
    view_as,
    vsplit,
)
from .math import (
    abs,
    abs_,
    acos,
    acos_,
    acosh,
    add,
    add_n,
    addmm,
    addmm_,
    angle,
    as_complex,
    as_real,
    asin,
    asinh,
    atan,
    atan2,
    atan_,
    atanh,
    ceil,
    clip,
    conj,
    cos,
    cos_,
    cosh,
    cummax,
    cummin,
    cumprod,
    cumprod_,
    cumsum,
    cumsum_,
    cumulative_trapezoid,
    deg2rad,
    diff,
    divide,
    divide_,
    exp,
    expm1,
    expm1_,
    floor,
    floor_divide,
    floor_divide_,
    floor_mod,
    floor_mod_,
    fmax,
    fmin,
    frac,
    frac_,
    frexp,
    gcd,
    gcd_,
    heaviside,
    hypot,
    hypot_,
    imag,
    increment,
    lcm,
    lcm_,
    ldexp,
    ldexp_,
    lerp,
    log,
    log1p,
    log2,
    log2_,
    log10,
    log10_,
    log_,
    logaddexp,
    logcumsumexp,
    logit,
    logit_,
    maximum,
    minimum,
    mod,
    mod_,
    multiplex,
    multiply,
    multiply_,
    nan_to_num,
    nan_to_num_,
    neg,
    neg_,
    nextafter,
    pow,
    pow_,
    rad2deg,
    real,
    reciprocal,
    remainder,
    remainder_,
    renorm,
    renorm_,
    round,
    rsqrt,
    scale,
    sgn,
    sign,
    sin,
    sin_,
    sinh,
    sinh_,
    sqrt,
    square,
    square_,
    stanh,
    subtract,
    tan,
    tan_,
    tanh,
    tanh_,
    trace,
    trapezoid,
    trunc,
    trunc_,
)
from .random import (
    bernoulli,
    cauchy_,
    geometric_,
    get_cuda_rng_state,
    get_rng_state,
    multinomial,
    normal,
    normal_,
    poisson,
    rand,
    randint,
    randint_like,
    randn,
    randperm,
    seed,
    set_cuda_rng_state,
    set_rng_state,
    standard_normal,
    uniform,
)
from .search import (
    argmax,
    argmin,
    argsort,
    bucketize,
    kthvalue,
    masked_select,
    mode,
    nonzero,
    searchsorted,
    sort,
    topk,
    unique,
    unique_consecutive,
    where,
    where_,
)
from .special import (
    digamma,
    digamma_,
    erf,
    erf_,
    erfinv,
    i0,
    i0_,
    i0e,
    i1,
    i1e,
    lgamma,
    lgamma_,
    multigammaln,
    multigammaln_,
    polygamma,
    polygamma_,
)
from .stat import (
    all,
    amax,
    amin,
    any,
    bincount,
    count_nonzero,
    histogram,
    logsumexp,
    max,
    mean,
    median,
    min,
    nanmean,
    nanmedian,
    nanquantile,
    nansum,
    numel,
    prod,
    quantile,
    rank,
    shape,
    std,
    sum,
    var,
)

CATEGORIES = [creation, math, stat, manipulation, linalg, logic, search, random, special]

# every public op, listed once: each category module's API list
__all__ = [*creation.API, *math.API, *stat.API, *manipulation.API, *linalg.API, *logic.API,
           *search.API, *random.API, *special.API]

set_tensor_ops(TensorOps())


def _attach():
    for category in CATEGORIES:
        for entry in category.METHODS:
            if isinstance(entry, tuple):
                name, fn = entry
            else:
                name, fn = entry, getattr(category, entry)
            setattr(Tensor, name, fn)
    _attach_operators()
    engine.attach_tensor_ops(math.add, unbroadcast_tensor)


def _swap(fn):
    def reflected(x, y):
        return fn(y, x)

    reflected.__name__ = f"r{fn.__name__}"
    return reflected


def _as_operator(fn):
    """A copy of ``fn`` whose ``name`` argument defaults to ``_helpers.OPERATOR``.

    Paddle's Python operators promote mixed float/int tensors (``x @ y``) where its functions
    refuse them (``paddle.matmul(x, y)``). The functions tell the two apart by that default,
    which costs nothing per call, unlike a wrapper around every operator.
    """
    code = fn.__code__
    names = code.co_varnames[:code.co_argcount]
    if "name" not in names or not fn.__defaults__:
        return fn
    defaults = list(fn.__defaults__)
    defaults[names.index("name") - (code.co_argcount - len(defaults))] = OPERATOR
    op = types.FunctionType(code, fn.__globals__, fn.__name__, tuple(defaults), fn.__closure__)
    op.__kwdefaults__ = fn.__kwdefaults__
    op.__qualname__, op.__doc__, op.__module__ = fn.__qualname__, fn.__doc__, fn.__module__
    return op


def _attach_operators():
    from .manipulation import getitem, setitem

    add_op, sub_op, mul_op = _as_operator(math.add), _as_operator(math.subtract), \
        _as_operator(math.multiply)
    div_op, pow_op, mm_op = _as_operator(math.true_divide), _as_operator(math.pow), \
        _as_operator(linalg.matmul)
    ops = {
        "__add__": add_op, "__radd__": _swap(add_op),
        "__sub__": sub_op, "__rsub__": _swap(sub_op),
        "__mul__": mul_op, "__rmul__": _swap(mul_op),
        "__truediv__": div_op, "__rtruediv__": _swap(div_op),
        "__pow__": pow_op, "__rpow__": _swap(pow_op),
        "__matmul__": mm_op, "__rmatmul__": _swap(mm_op),
        "__neg__": math.neg,
        "__getitem__": getitem, "__setitem__": setitem,
    }
    by_function = {
        "__floordiv__": (floor_divide, False), "__rfloordiv__": (floor_divide, True),
        "__mod__": (remainder, False), "__rmod__": (remainder, True),
        "__abs__": (abs, False), "__invert__": (bitwise_not, False),
        "__eq__": (equal, False), "__ne__": (not_equal, False),
        "__lt__": (less_than, False), "__le__": (less_equal, False),
        "__gt__": (greater_than, False), "__ge__": (greater_equal, False),
        "__and__": (bitwise_and, False), "__rand__": (bitwise_and, True),
        "__or__": (bitwise_or, False), "__ror__": (bitwise_or, True),
        "__xor__": (bitwise_xor, False), "__rxor__": (bitwise_xor, True),
    }
    for dunder, (fn, reflected) in by_function.items():
        fn = _as_operator(fn)
        ops[dunder] = _swap(fn) if reflected else fn
    for k, v in ops.items():
        setattr(Tensor, k, v)
    Tensor.__hash__ = lambda self: id(self)


_attach()
