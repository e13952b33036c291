"""paddle_hl: PaddlePaddle 2.6's high-level API on NumPy (CPU) and CuPy (GPU).

Use it as ``import paddle_hl as paddle``.
"""

from __future__ import annotations

import importlib as _importlib
import sys as _sys

from .framework._printing import set_printoptions
from .framework.dtype import DType as dtype
from .framework.dtype import (
    bfloat16,
    complex64,
    complex128,
    finfo,
    float16,
    float32,
    float64,
    get_default_dtype,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    set_default_dtype,
    uint8,
)
from .framework.dtype import bool_ as bool  # noqa: A001  (Paddle's name)
from .framework.engine import grad
from .framework.flags import get_flags, set_flags
from .framework.misc import (
    LazyGuard,
    batch,
    check_shape,
    disable_signal_handler,
    disable_static,
    enable_static,
    in_dynamic_mode,
)
from .framework.place import (
    CPUPlace,
    CUDAPinnedPlace,
    CUDAPlace,
    get_device,
    is_compiled_with_cuda,
    set_device,
)
from .framework.state import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .framework.tensor import Tensor
from .tensor import __all__ as _tensor_names
from .tensor import (
    abs,
    abs_,
    acos,
    acos_,
    acosh,
    add,
    add_n,
    addmm,
    addmm_,
    all,
    allclose,
    amax,
    amin,
    angle,
    any,
    arange,
    argmax,
    argmin,
    argsort,
    as_complex,
    as_real,
    as_strided,
    asin,
    asinh,
    assign,
    atan,
    atan2,
    atan_,
    atanh,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    bernoulli,
    bincount,
    bitwise_and,
    bitwise_and_,
    bitwise_not,
    bitwise_not_,
    bitwise_or,
    bitwise_or_,
    bitwise_xor,
    bitwise_xor_,
    bmm,
    broadcast_shape,
    broadcast_tensors,
    broadcast_to,
    bucketize,
    cast,
    cast_,
    cauchy_,
    cdist,
    ceil,
    chunk,
    clip,
    clone,
    combinations,
    complex,
    concat,
    conj,
    cos,
    cos_,
    cosh,
    count_nonzero,
    crop,
    cross,
    cummax,
    cummin,
    cumprod,
    cumprod_,
    cumsum,
    cumsum_,
    cumulative_trapezoid,
    deg2rad,
    diag,
    diag_embed,
    diagflat,
    diagonal,
    diagonal_scatter,
    diff,
    digamma,
    digamma_,
    dist,
    divide,
    divide_,
    dot,
    einsum,
    empty,
    empty_like,
    equal,
    equal_,
    equal_all,
    erf,
    erf_,
    erfinv,
    exp,
    expand,
    expand_as,
    expm1,
    expm1_,
    eye,
    flatten,
    flip,
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
    full,
    full_like,
    gather,
    gather_nd,
    gcd,
    gcd_,
    geometric_,
    get_cuda_rng_state,
    get_rng_state,
    greater_equal,
    greater_equal_,
    greater_than,
    greater_than_,
    heaviside,
    histogram,
    hypot,
    hypot_,
    i0,
    i0_,
    i0e,
    i1,
    i1e,
    imag,
    increment,
    index_add,
    index_add_,
    index_fill,
    index_fill_,
    index_put,
    index_put_,
    index_sample,
    index_select,
    inner,
    is_complex,
    is_empty,
    is_floating_point,
    is_integer,
    is_tensor,
    isclose,
    isfinite,
    isinf,
    isnan,
    kron,
    kthvalue,
    lcm,
    lcm_,
    ldexp,
    ldexp_,
    lerp,
    less_equal,
    less_equal_,
    less_than,
    less_than_,
    lgamma,
    lgamma_,
    linspace,
    log,
    log1p,
    log2,
    log2_,
    log10,
    log10_,
    log_,
    logaddexp,
    logcumsumexp,
    logical_and,
    logical_and_,
    logical_not,
    logical_not_,
    logical_or,
    logical_or_,
    logical_xor,
    logit,
    logit_,
    logspace,
    logsumexp,
    masked_fill,
    masked_fill_,
    masked_select,
    matmul,
    max,
    maximum,
    mean,
    median,
    meshgrid,
    min,
    minimum,
    mm,
    mod,
    mod_,
    mode,
    moveaxis,
    multigammaln,
    multigammaln_,
    multinomial,
    multiplex,
    multiply,
    multiply_,
    mv,
    nan_to_num,
    nan_to_num_,
    nanmean,
    nanmedian,
    nanquantile,
    nansum,
    neg,
    neg_,
    nextafter,
    nonzero,
    normal,
    normal_,
    not_equal,
    numel,
    ones,
    ones_like,
    outer,
    poisson,
    polar,
    polygamma,
    polygamma_,
    pow,
    pow_,
    prod,
    put_along_axis,
    quantile,
    rad2deg,
    rand,
    randint,
    randint_like,
    randn,
    randperm,
    rank,
    real,
    reciprocal,
    remainder,
    remainder_,
    renorm,
    renorm_,
    repeat_interleave,
    reshape,
    reshape_,
    reverse,
    roll,
    rot90,
    round,
    rsqrt,
    scale,
    scatter,
    scatter_,
    scatter_nd,
    scatter_nd_add,
    searchsorted,
    seed,
    select_scatter,
    set_cuda_rng_state,
    set_rng_state,
    sgn,
    shape,
    shard_index,
    sign,
    sin,
    sin_,
    sinh,
    sinh_,
    slice,
    sort,
    split,
    sqrt,
    square,
    square_,
    squeeze,
    squeeze_,
    stack,
    standard_normal,
    stanh,
    std,
    strided_slice,
    subtract,
    sum,
    t,
    t_,
    take,
    take_along_axis,
    tan,
    tan_,
    tanh,
    tanh_,
    tensordot,
    tile,
    to_tensor,
    tolist,
    topk,
    trace,
    transpose,
    transpose_,
    trapezoid,
    tril,
    tril_,
    tril_indices,
    triu,
    triu_,
    triu_indices,
    trunc,
    trunc_,
    unbind,
    unflatten,
    unfold,
    uniform,
    unique,
    unique_consecutive,
    unsqueeze,
    unsqueeze_,
    unstack,
    vander,
    var,
    view,
    view_as,
    vsplit,
    where,
    where_,
    zeros,
    zeros_like,
)

# Paddle code branches on ``paddle.__version__``: report the Paddle release whose API this is, and
# keep paddle_hl's own release in ``__hl_version__`` (see paddle_hl/version.py)
__version__ = "2.6.2"
__hl_version__ = "0.1.0"



def _attach_tensor_methods():
    """Tensor methods whose code lives above the op library (signal, nn, sparse): attached
    here, at the top of the stack, and loading their module on first call."""

    def stft(self, *args, **kwargs):
        from .signal import stft

        return stft(self, *args, **kwargs)

    def istft(self, *args, **kwargs):
        from .signal import istft

        return istft(self, *args, **kwargs)

    def create_parameter(*args, **kwargs):
        """``Tensor.create_parameter`` is ``paddle.create_parameter``."""
        from .nn.layer.layers import create_parameter as create

        return create(*args, **kwargs)

    def to_sparse_coo(self, sparse_dim):
        """This tensor in sparse COO layout with ``sparse_dim`` sparse leading dims."""
        from .sparse._tensor import dense_to_coo

        return dense_to_coo(self, int(sparse_dim))

    def to_sparse_csr(self):
        """This 2-D/3-D tensor in sparse CSR layout."""
        from .sparse._tensor import dense_to_csr

        return dense_to_csr(self)

    Tensor.stft, Tensor.istft = stft, istft
    Tensor.create_parameter = staticmethod(create_parameter)
    Tensor.to_sparse_coo, Tensor.to_sparse_csr = to_sparse_coo, to_sparse_csr


_attach_tensor_methods()


def _alias_framework_names():
    """``paddle.framework.<name>`` for Paddle's public helpers that live above the framework
    (ParamAttr, seed, save, create_parameter, ...): the framework package imports nothing above
    it, so this namespace, which holds them all, answers them there on first access."""
    from . import framework

    public = frozenset({
        "ParamAttr", "in_dynamic_mode", "get_default_dtype", "set_default_dtype", "no_grad",
        "set_grad_enabled", "is_grad_enabled", "enable_grad", "seed", "CPUPlace", "CUDAPlace",
        "CUDAPinnedPlace", "save", "load", "create_parameter", "get_flags", "set_flags",
    })

    def __getattr__(name):
        if name in public:
            return getattr(_sys.modules[__name__], name)
        raise AttributeError(f"module 'paddle_hl.framework' has no attribute '{name}'")

    framework.__getattr__ = __getattr__


_alias_framework_names()

# Domains and heavier subpackages load on first attribute access.
_LAZY = {"vision", "audio", "text", "geometric", "hub", "nn", "optimizer", "io", "metric",
         "amp", "profiler", "sparse", "fft", "signal", "linalg", "distribution", "autograd",
         "distributed", "utils", "device", "callbacks", "static", "jit", "hapi", "notebook",
         "regularizer", "incubate", "framework", "backend", "onnx", "version"}


# Top-level names defined in subpackages, resolved on first use: "module:attribute".
_LAZY_NAMES = {
    "ParamAttr": "nn.param_attr:ParamAttr",
    "create_parameter": "nn.layer.layers:create_parameter",
    "Model": "hapi.model:Model",
    "DataParallel": "distributed.parallel:DataParallel",
    "summary": "hapi.model_summary:summary",
    "flops": "hapi.dynamic_flops:flops",
    "save": "framework.io:save",
    "load": "framework.io:load",
    "get_cudnn_version": "device:get_cudnn_version",
    "is_compiled_with_xpu": "device:is_compiled_with_xpu",
    "is_compiled_with_rocm": "device:is_compiled_with_rocm",
    "is_compiled_with_ipu": "device:is_compiled_with_ipu",
    "is_compiled_with_cinn": "device:is_compiled_with_cinn",
    "is_compiled_with_distribute": "device:is_compiled_with_distribute",
    "is_compiled_with_custom_device": "device:is_compiled_with_custom_device",
}


__all__ = [
    "Tensor", "dtype", "bool", "bfloat16", "float16", "float32", "float64", "int8", "int16",
    "int32", "int64", "uint8", "complex64", "complex128", "finfo", "iinfo", "get_default_dtype",
    "set_default_dtype", "set_printoptions", "grad", "get_flags", "set_flags", "LazyGuard",
    "batch", "check_shape", "disable_signal_handler", "disable_static", "enable_static",
    "in_dynamic_mode", "CPUPlace", "CUDAPinnedPlace", "CUDAPlace", "get_device",
    "is_compiled_with_cuda", "set_device", "enable_grad", "is_grad_enabled", "no_grad",
    "set_grad_enabled", *_LAZY_NAMES, *_tensor_names,
]


def __getattr__(name):
    target = _LAZY_NAMES.get(name)
    if target is not None:
        mod, attr = target.split(":")
        value = getattr(_importlib.import_module(f"{__name__}.{mod}"), attr)
        globals()[name] = value
        return value
    if name in _LAZY:
        mod = _importlib.import_module(f"{__name__}.{name}")
        globals()[name] = mod
        return mod
    raise AttributeError(f"module 'paddle_hl' has no attribute '{name}'")
