"""Normalization layers: BatchNorm family, SyncBatchNorm, LayerNorm, GroupNorm, InstanceNorm,
LocalResponseNorm and SpectralNorm.

Parameter names, state_dict keys (``weight``, ``bias``, ``_mean``, ``_variance``, ``scale``,
``weight_u``/``weight_v``), default initializers and reprs are Paddle 2.6's, so checkpoints load
unchanged. Running statistics are non-trainable Parameters, as in Paddle (they appear in
``parameters()`` with ``stop_gradient=True``).
"""

from __future__ import annotations

import inspect

import numpy as np

from ... import backend
from ...framework import dtype as _dt
from ...framework.engine import GRAD
from ...framework.op import apply, op
from ...framework.tensor import Tensor
from ...tensor._helpers import name_suffix as _name_suffix
from ...tensor._helpers import positive_int as _positive_int
from .. import functional as F
from ..functional import norm as _fnorm
from ..initializer import Constant, Normal
from ..param_attr import ParamAttr
from .layers import Layer

__all__ = []


def _stat_attr(attr_name):
    return ParamAttr(name=attr_name, initializer=None, trainable=False)


class _FormatDefault:
    """A norm family whose classes differ only in the default ``data_format``: each class
    states it as the class attribute ``_default_format`` and inherits ``__init__`` (which
    takes ``data_format=None`` as "the class default"); the class's signature shows its own
    default, as Paddle's does."""

    _default_format = "NCHW"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            cls.__signature__ = None  # its own __init__ states its own signature
            return
        sig = inspect.signature(cls.__init__)
        params = [p.replace(default=cls._default_format) if p.name == "data_format" else p
                  for p in list(sig.parameters.values())[1:]]
        cls.__signature__ = sig.replace(parameters=params)


# ---------------------------------------------------------------- batch norm

class _BatchNormBase(_FormatDefault, Layer):
    """Shared machinery of BatchNorm1D/2D/3D and SyncBatchNorm."""

    _formats: tuple = ()
    _ndims: tuple = ()

    def __init__(self, num_features, momentum=0.9, epsilon=1e-05, weight_attr=None,
                 bias_attr=None, data_format=None, use_global_stats=None, name=None):
        super().__init__()
        if data_format is None:
            data_format = self._default_format
        kind = type(self).__name__
        num_features = _positive_int(num_features, kind, "num_features")
        # the default dtype in force at construction is the parameters' dtype for good
        self._dtype = _dt.get_default_dtype()
        self._num_features = num_features
        self._momentum = momentum
        self._epsilon = epsilon
        self._weight_attr = weight_attr
        self._bias_attr = bias_attr
        self._data_format = data_format
        self._use_global_stats = use_global_stats
        self._name = name
        shape = [num_features]
        self.weight = None
        self.bias = None
        if weight_attr is not False:
            self.weight = self.create_parameter(shape=shape, attr=weight_attr,
                                                dtype=self._dtype,
                                                default_initializer=Constant(1.0))
        if bias_attr is not False:
            self.bias = self.create_parameter(shape=shape, attr=bias_attr, dtype=self._dtype,
                                              is_bias=True)
        self._mean = self.create_parameter(
            shape=shape, dtype=self._dtype, default_initializer=Constant(0.0),
            attr=_stat_attr(f"{name}_mean" if name else None))
        self._variance = self.create_parameter(
            shape=shape, dtype=self._dtype, default_initializer=Constant(1.0),
            attr=_stat_attr(f"{name}_variance" if name else None))
        self._mean.stop_gradient = True
        self._variance.stop_gradient = True

    def _check_input(self, x):
        kind = type(self).__name__
        if not isinstance(x, Tensor):
            raise TypeError(f"{kind}: input must be a Tensor, got {type(x).__name__}")
        if self._ndims and x.ndim not in self._ndims:
            want = " or ".join(f"{d}D" for d in self._ndims)
            raise ValueError(f"{kind}: expected {want} input (got {x.ndim}D input of shape "
                             f"{x.shape})")
        if self._formats and self._data_format not in self._formats:
            raise ValueError(f"{kind}: expected {' or '.join(self._formats)} for data_format "
                             f"input, got {self._data_format!r}")
        last = self._data_format[-1] == "C" and self._data_format != "NC"
        c = x.shape[-1] if last else (x.shape[1] if x.ndim > 1 else None)
        if c != self._num_features:
            raise ValueError(f"{kind}: expected {self._num_features} channels (num_features) "
                             f"on axis {x.ndim - 1 if last else 1} of the input, got input of "
                             f"shape {x.shape} with data_format {self._data_format}")

    def _format_for(self, x):
        # the functional form takes any channel-first name for any rank
        last = self._data_format[-1] == "C" and self._data_format != "NC"
        return ("NC", "NCL", "NCHW", "NCDHW", "NCDHW")[min(x.ndim, 5) - 1] if not last \
            else "NHWC"

    def forward(self, input):  # noqa: A002  (Paddle's argument name)
        self._check_input(input)
        return F.batch_norm(input, self._mean, self._variance, weight=self.weight,
                            bias=self.bias, training=self.training, momentum=self._momentum,
                            epsilon=self._epsilon, data_format=self._format_for(input),
                            use_global_stats=self._use_global_stats)

    def extra_repr(self):
        # Paddle shows the data format only when it is not the 'NCHW' default
        fmt = "" if self._data_format == "NCHW" else f", data_format={self._data_format}"
        return (f"num_features={self._num_features}, momentum={self._momentum}, "
                f"epsilon={self._epsilon}{fmt}{_name_suffix(self._name)}")


class BatchNorm1D(_BatchNormBase):
    """Batch normalization over a [N, C] or [N, C, L] input.

    Args:
        num_features (int): C.
        momentum (float): running = momentum * running + (1 - momentum) * batch. Default 0.9.
        epsilon (float): added to the variance. Default 1e-5.
        weight_attr (ParamAttr|bool, optional): scale (ones); False: no scale.
        bias_attr (ParamAttr|bool, optional): shift (zeros); False: no shift.
        data_format (str): 'NC', 'NCL' or 'NLC'. Default 'NCL'.
        use_global_stats (bool, optional): None: batch stats in training, running in eval.
        name (str, optional): prefix of the running-statistics names; shown in the repr.

    Example:
        >>> bn = paddle.nn.BatchNorm1D(3)
        >>> bn(paddle.rand([4, 3, 5])).shape
        [4, 3, 5]
    """

    _formats = ("NC", "NCL", "NLC")
    _ndims = (2, 3)
    _default_format = "NCL"


class BatchNorm2D(_BatchNormBase):
    """Batch normalization over a [N, C, H, W] (or NHWC) input.

    Args:
        num_features (int): C.
        momentum (float): Default 0.9.
        epsilon (float): Default 1e-5.
        weight_attr (ParamAttr|bool, optional): scale; False: none.
        bias_attr (ParamAttr|bool, optional): shift; False: none.
        data_format (str): 'NCHW' or 'NHWC'.
        use_global_stats (bool, optional): see :class:`BatchNorm1D`.
        name (str, optional): shown in the repr.
    """

    _formats = ("NCHW", "NHWC")
    _ndims = (4,)
    _default_format = "NCHW"


class BatchNorm3D(_BatchNormBase):
    """Batch normalization over a [N, C, D, H, W] (or NDHWC) input.

    Args:
        num_features (int): C.
        momentum (float): Default 0.9.
        epsilon (float): Default 1e-5.
        weight_attr (ParamAttr|bool, optional): scale; False: none.
        bias_attr (ParamAttr|bool, optional): shift; False: none.
        data_format (str): 'NCDHW' or 'NDHWC'.
        use_global_stats (bool, optional): see :class:`BatchNorm1D`.
        name (str, optional): shown in the repr.
    """

    _formats = ("NCDHW", "NDHWC")
    _ndims = (5,)
    _default_format = "NCDHW"


class SyncBatchNorm(_BatchNormBase):
    """Cross-device batch normalization. With one process (the only case here) it is exactly
    batch normalization over a 2-D to 5-D input.

    Args:
        num_features (int): C.
        momentum (float): Default 0.9.
        epsilon (float): Default 1e-5.
        weight_attr (ParamAttr|bool, optional): scale; False: none.
        bias_attr (ParamAttr|bool, optional): shift; False: none.
        data_format (str): 'NC', 'NCL', 'NCHW', 'NCDHW' or a channel-last form.
        name (str, optional): shown in the repr.
    """

    _formats = ("NC", "NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC")
    _ndims = (2, 3, 4, 5)

    def __init__(self, num_features, momentum=0.9, epsilon=1e-05, weight_attr=None,
                 bias_attr=None, data_format="NCHW", name=None):
        super().__init__(num_features, momentum, epsilon, weight_attr, bias_attr, data_format,
                         None, name)

    @classmethod
    def convert_sync_batchnorm(cls, layer):
        """Replace every BatchNorm1D/2D/3D inside ``layer`` by a SyncBatchNorm sharing its
        parameters and running statistics; returns the converted layer.

        Args:
            layer (Layer): a model (or a single batch norm layer).

        Returns:
            Layer: ``layer`` with its batch norms converted (a new layer when ``layer`` itself
            is one).
        """
        out = layer
        if isinstance(layer, _BatchNormBase) and not isinstance(layer, SyncBatchNorm):
            out = SyncBatchNorm(layer._num_features, layer._momentum, layer._epsilon,
                                layer._weight_attr, layer._bias_attr, layer._data_format,
                                layer._name)
            if layer.weight is not None and out.weight is not None:
                out.weight = layer.weight
            if layer.bias is not None and out.bias is not None:
                out.bias = layer.bias
            out._mean = layer._mean
            out._variance = layer._variance
            out.training = layer.training
        for name, sub in list(layer._sub_layers.items()):
            if sub is not None:
                out.add_sublayer(name, cls.convert_sync_batchnorm(sub))
        return out


class BatchNorm(Layer):
    """Batch normalization, the Paddle 1.x-style layer (``paddle.nn.BatchNorm``).

    Args:
        num_channels (int): C.
        act (str, optional): activation applied to the output ('relu', 'sigmoid', ...).
        is_test (bool): start in evaluation mode.
        momentum (float): Default 0.9.
        epsilon (float): Default 1e-5.
        param_attr (ParamAttr|bool, optional): scale (ones); False: none.
        bias_attr (ParamAttr|bool, optional): shift (zeros); False: none.
        dtype (str): parameter dtype. Default 'float32'.
        data_layout (str): 'NCHW' (channel second, any rank 2-5) or 'NHWC'.
        in_place (bool): accepted; the output is a new tensor.
        moving_mean_name (str, optional): name of the running mean.
        moving_variance_name (str, optional): name of the running variance.
        do_model_average_for_mean_and_var (bool): accepted.
        use_global_stats (bool): always normalize with the running statistics.
        trainable_statistics (bool): use batch statistics in evaluation mode too.
    """

    def __init__(self, num_channels, act=None, is_test=False, momentum=0.9, epsilon=1e-05,
                 param_attr=None, bias_attr=None, dtype="float32", data_layout="NCHW",
                 in_place=False, moving_mean_name=None, moving_variance_name=None,
                 do_model_average_for_mean_and_var=True, use_global_stats=False,
                 trainable_statistics=False):
        super().__init__(None, dtype)
        num_channels = _positive_int(num_channels, "BatchNorm", "num_channels")
        if data_layout not in ("NCHW", "NHWC"):
            raise ValueError(f"BatchNorm: data_layout must be 'NCHW' or 'NHWC', got "
                             f"{data_layout!r}")
        if act is not None and not callable(getattr(F, act, None)):
            raise ValueError(f"BatchNorm: unknown activation act={act!r}")
        self._num_channels = num_channels
        self._act = act
        self._momentum = momentum
        self._epsilon = epsilon
        self._data_layout = data_layout
        self._use_global_stats = use_global_stats
        self._trainable_statistics = trainable_statistics
        self._dtype = _dt.convert(dtype).name
        shape = [num_channels]
        self.weight = None
        self.bias = None
        if param_attr is not False:
            self.weight = self.create_parameter(shape=shape, attr=param_attr, dtype=self._dtype,
                                                default_initializer=Constant(1.0))
        if bias_attr is not False:
            self.bias = self.create_parameter(shape=shape, attr=bias_attr, dtype=self._dtype,
                                              is_bias=True)
        self._mean = self.create_parameter(shape=shape, dtype=self._dtype,
                                           attr=_stat_attr(moving_mean_name),
                                           default_initializer=Constant(0.0))
        self._variance = self.create_parameter(shape=shape, dtype=self._dtype,
                                               attr=_stat_attr(moving_variance_name),
                                               default_initializer=Constant(1.0))
        self._mean.stop_gradient = True
        self._variance.stop_gradient = True
        if is_test:
            self.training = False

    def forward(self, input):  # noqa: A002
        if not isinstance(input, Tensor):
            raise TypeError(f"BatchNorm: input must be a Tensor, got {type(input).__name__}")
        if not 2 <= input.ndim <= 5:
            raise ValueError(f"BatchNorm: expected a 2-D to 5-D input, got shape {input.shape}")
        last = self._data_layout == "NHWC"
        c = input.shape[-1] if last else input.shape[1]
        if c != self._num_channels:
            raise ValueError(f"BatchNorm: expected {self._num_channels} channels (num_channels)"
                             f" on axis {input.ndim - 1 if last else 1}, got input of shape "
                             f"{input.shape} with data_layout {self._data_layout}")
        global_stats = self._use_global_stats or (not self.training
                                                  and not self._trainable_statistics)
        out = F.batch_norm(input, self._mean, self._variance, weight=self.weight,
                           bias=self.bias, training=not global_stats, momentum=self._momentum,
                           epsilon=self._epsilon, data_format="NHWC" if last else "NCHW",
                           use_global_stats=global_stats)
        if self._act:
            out = getattr(F, self._act)(out)
        return out


# ---------------------------------------------------------------- layer / group / instance

class LayerNorm(Layer):
    """Layer normalization over the trailing ``normalized_shape`` dims.

    Args:
        normalized_shape (int|list[int]): the trailing dims normalized together.
        epsilon (float): Default 1e-5.
        weight_attr (ParamAttr|bool, optional): scale ``[prod(normalized_shape)]`` (ones);
            False: none.
        bias_attr (ParamAttr|bool, optional): shift (zeros); False: none.
        name (str, optional): unused.

    Example:
        >>> ln = paddle.nn.LayerNorm([3, 4])
        >>> ln(paddle.rand([2, 3, 4])).shape
        [2, 3, 4]
    """

    def __init__(self, normalized_shape, epsilon=1e-05, weight_attr=None, bias_attr=None,
                 name=None):
        super().__init__()
        self._normalized_shape = _fnorm._shape_list(normalized_shape, "LayerNorm")
        self._epsilon = epsilon
        self._weight_attr = weight_attr
        self._bias_attr = bias_attr
        self._dtype = _dt.get_default_dtype()
        shape = [int(np.prod(self._normalized_shape, dtype=np.int64))]
        self.weight = None
        self.bias = None
        if weight_attr is not False:
            self.weight = self.create_parameter(shape=shape, attr=weight_attr,
                                                dtype=self._dtype,
                                                default_initializer=Constant(1.0))
        if bias_attr is not False:
            self.bias = self.create_parameter(shape=shape, attr=bias_attr, dtype=self._dtype,
                                              is_bias=True)

    def forward(self, input):  # noqa: A002
        ns = self._normalized_shape
        if not isinstance(input, Tensor):
            raise TypeError(f"LayerNorm: input must be a Tensor, got {type(input).__name__}")
        if len(ns) > input.ndim or input.shape[input.ndim - len(ns):] != ns:
            raise ValueError(f"LayerNorm: given normalized_shape is {ns}, expected input with "
                             f"shape [*, {str(ns)[1:-1]}], but got input shape {input.shape}")
        return F.layer_norm(input, ns, weight=self.weight, bias=self.bias,
                            epsilon=self._epsilon)

    def extra_repr(self):
        return f"normalized_shape={self._normalized_shape}, epsilon={self._epsilon}"


class GroupNorm(Layer):
    """Group normalization: the channels are split into ``num_groups`` groups, each
    normalized (per sample) over its channels and spatial positions.

    Args:
        num_groups (int): number of groups; must divide the channel count.
        num_channels (int): C.
        epsilon (float): Default 1e-5.
        weight_attr (ParamAttr|bool, optional): scale [C] (ones); False: a frozen ones.
        bias_attr (ParamAttr|bool, optional): shift [C] (zeros); False: a frozen zeros.
        data_format (str): 'NCHW'-family (channel second) or 'NHWC'-family (channel last).
        name (str, optional): unused.
    """

    _FORMATS = ("NCHW", "NHWC", "NCDHW", "NDHWC")

    def __init__(self, num_groups, num_channels, epsilon=1e-05, weight_attr=None,
                 bias_attr=None, data_format="NCHW", name=None):
        super().__init__()
        self._num_groups = _positive_int(num_groups, "GroupNorm", "num_groups")
        self._num_channels = _positive_int(num_channels, "GroupNorm", "num_channels")
        if data_format not in self._FORMATS:
            raise ValueError(f"unsupported data layout:{data_format}")
        self._epsilon = epsilon
        self._weight_attr = weight_attr
        self._bias_attr = bias_attr
        self._data_format = data_format
        self._dtype = _dt.get_default_dtype()
        shape = [self._num_channels]
        # Paddle keeps a frozen parameter when the attr is False
        self.weight = self.create_parameter(
            shape=shape, attr=None if weight_attr is False else weight_attr, dtype=self._dtype,
            default_initializer=Constant(1.0))
        self.bias = self.create_parameter(
            shape=shape, attr=None if bias_attr is False else bias_attr, dtype=self._dtype,
            is_bias=True)
        if weight_attr is False:
            self.weight.stop_gradient = True
        if bias_attr is False:
            self.bias.stop_gradient = True

    def forward(self, input):  # noqa: A002
        return _fnorm._group_norm(input, self._num_groups, self.weight, self.bias,
                                  self._epsilon, self._data_format, op="GroupNorm")

    def extra_repr(self):
        return (f"num_groups={self._num_groups}, num_channels={self._num_channels}, "
                f"epsilon={self._epsilon}")


class _InstanceNormBase(_FormatDefault, Layer):
    _ndims: tuple = ()

    def __init__(self, num_features, epsilon=1e-05, momentum=0.9, weight_attr=None,
                 bias_attr=None, data_format=None, name=None):
        super().__init__()
        if data_format is None:
            data_format = self._default_format
        kind = type(self).__name__
        if (weight_attr is False) != (bias_attr is False):
            raise AssertionError("weight_attr and bias_attr must be set to False at the same "
                                 "time in InstanceNorm")
        self._num_features = _positive_int(num_features, kind, "num_features")
        self._epsilon = epsilon
        self._momentum = momentum
        self._weight_attr = weight_attr
        self._bias_attr = bias_attr
        self._data_format = data_format
        self._dtype = _dt.get_default_dtype()
        self.scale = None
        self.bias = None
        if weight_attr is not False:
            self.scale = self.create_parameter(shape=[self._num_features], attr=weight_attr,
                                               dtype=self._dtype,
                                               default_initializer=Constant(1.0))
            self.bias = self.create_parameter(shape=[self._num_features], attr=bias_attr,
                                              dtype=self._dtype, is_bias=True)

    def forward(self, input):  # noqa: A002
        kind = type(self).__name__
        if not isinstance(input, Tensor):
            raise TypeError(f"{kind}: input must be a Tensor, got {type(input).__name__}")
        if input.ndim not in self._ndims:
            want = " or ".join(f"{d}D" for d in self._ndims)
            raise ValueError(f"{kind}: expected {want} input (got {input.ndim}D input of "
                             f"shape {input.shape})")
        if self.scale is not None and input.shape[1] != self._num_features:
            raise ValueError(f"{kind}: expected {self._num_features} channels (num_features) "
                             f"on axis 1, got input of shape {input.shape}")
        return F.instance_norm(input, weight=self.scale, bias=self.bias, eps=self._epsilon)

    def extra_repr(self):
        return f"num_features={self._num_features}, epsilon={self._epsilon}"


class InstanceNorm1D(_InstanceNormBase):
    """Instance normalization of a [N, C] or [N, C, L] input.

    Args:
        num_features (int): C.
        epsilon (float): Default 1e-5.
        momentum (float): accepted (unused, as in Paddle).
        weight_attr (ParamAttr|bool, optional): ``scale`` [C] (ones); False (with bias_attr
            False): no affine parameters.
        bias_attr (ParamAttr|bool, optional): ``bias`` [C] (zeros).
        data_format (str): 'NCL'.
        name (str, optional): unused.
    """

    _ndims = (2, 3)
    _default_format = "NCL"


class InstanceNorm2D(_InstanceNormBase):
    """Instance normalization of a [N, C, H, W] input (see :class:`InstanceNorm1D`)."""

    _ndims = (4,)
    _default_format = "NCHW"


class InstanceNorm3D(_InstanceNormBase):
    """Instance normalization of a [N, C, D, H, W] input (see :class:`InstanceNorm1D`)."""

    _ndims = (5,)
    _default_format = "NCDHW"


class LocalResponseNorm(Layer):
    """Local response normalization across channels (see
    :func:`paddle.nn.functional.local_response_norm`).

    Args:
        size (int): channels in the window.
        alpha (float): Default 1e-4.
        beta (float): Default 0.75.
        k (float): Default 1.0.
        data_format (str): 'NCL', 'NLC', 'NCHW', 'NHWC', 'NCDHW' or 'NDHWC'.
        name (str, optional): shown in the repr.
    """

    def __init__(self, size, alpha=0.0001, beta=0.75, k=1.0, data_format="NCHW", name=None):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k
        self.data_format = data_format
        self.name = name

    def forward(self, input):  # noqa: A002
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k,
                                     self.data_format)

    def extra_repr(self):
        fmt = "" if self.data_format == "NCHW" else f", data_format={self.data_format}"
        return (f"size={self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}{fmt}"
                f"{_name_suffix(self.name)}")


# ---------------------------------------------------------------- spectral norm

def _spectral_perm(ndim, dim):
    return [dim] + [k for k in range(ndim) if k != dim]


def _spectral_uv(mat, u, v, power_iters, eps, xp):
    uu, vv = u.astype(mat.dtype), v.astype(mat.dtype)
    for _ in range(power_iters):
        vv = mat.T @ uu
        vv = vv / (xp.sqrt((vv * vv).sum()) + eps)
        uu = mat @ vv
        uu = uu / (xp.sqrt((uu * uu).sum()) + eps)
    return uu, vv


def _spectral_k(w, u, v, dim, power_iters, eps):
    """``w / sigma`` with sigma = u^T W v after power iteration from (u, v). u and v are
    treated as constants (Paddle's layer does not write them back in dynamic mode)."""
    xp = backend.get_array_module(w)
    perm = _spectral_perm(w.ndim, dim)
    wm = w.transpose(perm)
    mat = wm.reshape(wm.shape[0], -1)
    uu, vv = _spectral_uv(mat, u, v, power_iters, eps, xp)
    sigma = uu @ mat @ vv
    return w / sigma, GRAD.save(xp.outer(uu, vv), sigma)


def _spectral_grad(M, w, u, v, out, saved, g, dim, power_iters, eps):
    """With sigma = sum(W * u v^T) (u, v the power iteration's vectors, constants):
    ``dW = G / sigma - u v^T * sum(G * W) / sigma^2`` on W seen as a matrix."""
    uv, sigma = saved  # uv: a constant; sigma: differentiable, recomputed on Tensors
    perm = _spectral_perm(M.value(w).ndim, dim)
    wm = M.transpose(w, perm)
    mshape = M.value(wm).shape
    mat = M.reshape(wm, (mshape[0], -1))
    if M.tensor:
        sigma = M.sum(mat * uv)
    gm = M.reshape(M.transpose(g, perm), (mshape[0], -1))
    gmat = gm / sigma - uv * (M.sum(gm * mat) / (sigma * sigma))
    inv = tuple(int(k) for k in np.argsort(perm))
    return M.transpose(M.reshape(gmat, mshape), inv), None, None


op("spectral_norm", grad=_spectral_grad, residuals=True)(_spectral_k)


class SpectralNorm(Layer):
    """Spectral normalization of a weight: ``weight / sigma(weight)``, sigma the largest
    singular value of the weight seen as a matrix [weight_shape[dim], -1], estimated with
    ``power_iters`` power iterations from the vectors ``weight_u`` and ``weight_v``.

    The backward holds the iterated u, v constant, so with W the weight matrix, G the output
    gradient and sigma = u^T W v, the weight gets ``G / sigma - sum(G * W) / sigma**2 * u v^T``,
    the derivative of ``W / sigma``. Paddle 2.6.2's backward gives
    ``G / sigma - sum(W) * (u v^T * G) / sigma**2`` instead (the sum taken over W alone and
    the product with G elementwise), which is not the derivative of its own forward: a bug
    there, not copied. The forward and the buffers agree with Paddle.

    Args:
        weight_shape (list[int]): shape of the weights this layer normalizes.
        dim (int): the axis that becomes the matrix rows, 0 or 1. Default 0.
        power_iters (int): power iterations per call. Default 1.
        eps (float): added to vector norms. Default 1e-12.
        dtype (str): dtype of ``weight_u`` / ``weight_v``. Default 'float32'.

    Example:
        >>> sn = paddle.nn.SpectralNorm([4, 5])
        >>> sn(paddle.rand([4, 5])).shape
        [4, 5]
    """

    def __init__(self, weight_shape, dim=0, power_iters=1, eps=1e-12, dtype="float32"):
        super().__init__()
        self._weight_shape = [int(s) for s in weight_shape]
        if not 0 <= dim < len(self._weight_shape):
            raise AssertionError(f"The input `dim` should be less than the length of "
                                 f"`weight_shape`, but received dim={dim}")
        if dim not in (0, 1):
            raise ValueError(f"SpectralNorm: dim can only be 0 or 1 (as in Paddle), got {dim}")
        self._dim = int(dim)
        self._power_iters = int(power_iters)
        self._eps = float(eps)
        self._dtype = _dt.convert(dtype).name
        h = self._weight_shape[self._dim]
        w = int(np.prod(self._weight_shape, dtype=np.int64)) // h
        self.weight_u = self.create_parameter(shape=[h], attr=ParamAttr(trainable=False),
                                              dtype=self._dtype,
                                              default_initializer=Normal(0.0, 1.0))
        self.weight_v = self.create_parameter(shape=[w], attr=ParamAttr(trainable=False),
                                              dtype=self._dtype,
                                              default_initializer=Normal(0.0, 1.0))
        self.weight_u.stop_gradient = True
        self.weight_v.stop_gradient = True

    def forward(self, x):
        if not isinstance(x, Tensor):
            raise TypeError(f"SpectralNorm: input must be a Tensor, got {type(x).__name__}")
        if list(x.shape) != self._weight_shape:
            raise ValueError(f"SpectralNorm: the weight must have the shape "
                             f"{self._weight_shape} given at construction, got {x.shape}")
        if not x.dtype.is_floating_point:
            raise TypeError(f"SpectralNorm: the weight must be floating point, got {x.dtype}")
        return apply(_spectral_k, x, self.weight_u, self.weight_v, dim=self._dim,
                     power_iters=self._power_iters, eps=self._eps)
