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
from .tensor import *  # noqa: F403  (the op library, listed once: paddle_hl.tensor.__all__)
from .tensor import __all__ as _tensor_names
from .tensor.linalg import cholesky, inverse, norm  # noqa: F401  (Paddle's top-level aliases)

# Paddle code branches on ``paddle.__version__``: report the Paddle release whose API this is, and
# keep paddle_hl's own release in ``__hl_version__`` (see paddle_hl/version.py)
__version__ = "2.6.2"
__hl_version__ = "0.1.0"
# Paddle's build commit; paddle_hl is not a build of Paddle (see version.commit)
__git_commit__ = "paddle_hl"



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

    own = framework.__getattr__  # the framework's own lazy names (Parameter)

    def __getattr__(name):
        if name in public:
            return getattr(_sys.modules[__name__], name)
        return own(name)

    framework.__getattr__ = __getattr__


_alias_framework_names()

# run from a plain checkout (no install), vision/, audio/, ... beside the package are its
# subpackages (see _checkout.py)
_importlib.import_module(f"{__name__}._checkout").install(__file__)

# Domains and heavier subpackages load on first attribute access.
_LAZY = {"vision", "audio", "text", "geometric", "hub", "nn", "optimizer", "io", "metric",
         "amp", "profiler", "sparse", "fft", "signal", "linalg", "distribution", "autograd",
         "distributed", "utils", "device", "callbacks", "static", "jit", "hapi", "notebook",
         "regularizer", "incubate", "framework", "backend", "onnx", "version", "reader",
         "dataset", "base", "inference"}


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
