"""Sparse layers: convolutions, max pooling, batch norm and activations (``paddle.sparse.nn``).

Parameter shapes and ``state_dict`` keys are Paddle's: a conv weight is
``[*kernel, C_in, C_out]`` with ``bias`` ``[C_out]``; batch norm keeps ``weight``, ``bias``,
``_mean`` and ``_variance``.
"""

from __future__ import annotations

import math

from paddle_hl import nn
from paddle_hl.nn import functional as dense_F
from paddle_hl.nn.initializer import Normal

from ..unary import require_sparse
from . import functional as F
from .functional.conv import _ntuple

__all__ = []


class _SparseConv(nn.Layer):
    _nd = 3
    _subm = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, padding_mode="zeros", key=None, weight_attr=None, bias_attr=None,
                 data_format="NDHWC"):
        super().__init__()
        op, nd = type(self).__name__, self._nd
        for arg, v in (("in_channels", in_channels), ("out_channels", out_channels)):
            if not isinstance(v, int) or v <= 0:
                raise ValueError(f"paddle.sparse.nn.{op}: {arg} must be a positive int, got "
                                 f"{v!r}")
        if groups != 1:
            raise ValueError(f"paddle.sparse.nn.{op}: only groups=1 is supported (as in "
                             f"Paddle), got {groups}")
        if padding_mode != "zeros":
            raise ValueError(f"paddle.sparse.nn.{op}: only padding_mode='zeros' is supported, "
                             f"got {padding_mode!r}")
        fmt = "NDHWC" if nd == 3 else "NHWC"
        if data_format != fmt:
            raise ValueError(f"paddle.sparse.nn.{op}: data_format must be {fmt!r}, got "
                             f"{data_format!r}")
        self._in_channels = in_channels
        self._out_channels = out_channels
        self._kernel_size = _ntuple(kernel_size, nd, op, "kernel_size")
        self._stride = _ntuple(stride, nd, op, "stride")
        self._padding = padding
        _ntuple(padding, nd, op, "padding")
        self._dilation = _ntuple(dilation, nd, op, "dilation")
        self._groups = groups
        self._key = key
        self._data_format = data_format
        fan_in = in_channels * math.prod(self._kernel_size)
        self.weight = self.create_parameter(
            self._kernel_size + [in_channels, out_channels], attr=weight_attr,
            default_initializer=Normal(0.0, (2.0 / fan_in) ** 0.5))
        self.bias = self.create_parameter([out_channels], attr=bias_attr, is_bias=True)

    def forward(self, x):
        if self._subm:
            fn = F.subm_conv3d if self._nd == 3 else F.subm_conv2d
            return fn(x, self.weight, self.bias, self._stride, self._padding, self._dilation,
                      self._groups, self._data_format, key=self._key)
        fn = F.conv3d if self._nd == 3 else F.conv2d
        return fn(x, self.weight, self.bias, self._stride, self._padding, self._dilation,
                  self._groups, self._data_format)

    def extra_repr(self):
        s = f"{self._in_channels}, {self._out_channels}, kernel_size={self._kernel_size}"
        if self._stride != [1] * self._nd:
            s += f", stride={self._stride}"
        if self._padding != 0:
            s += f", padding={self._padding}"
        if self._dilation != [1] * self._nd:
            s += f", dilation={self._dilation}"
        return s + f", data_format={self._data_format}"


class Conv3D(_SparseConv):
    """Sparse 3-D convolution layer on ``[N, D, H, W, C]`` COO input (see
    :func:`paddle_hl.sparse.nn.functional.conv3d`).

    Args:
        in_channels (int): C_in.
        out_channels (int): C_out.
        kernel_size (int|list): kernel size.
        stride (int|list): Default 1.
        padding (int|list): Default 0.
        dilation (int|list): Default 1.
        groups (int): must be 1.
        padding_mode (str): 'zeros'.
        weight_attr (ParamAttr, optional): the ``[kd, kh, kw, C_in, C_out]`` weight.
        bias_attr (ParamAttr|bool, optional): the ``[C_out]`` bias; False for none.
        data_format (str): 'NDHWC'.

    Example:
        >>> conv = paddle.sparse.nn.Conv3D(3, 8, 3, padding=1)
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, padding_mode="zeros", weight_attr=None, bias_attr=None,
                 data_format="NDHWC"):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, padding_mode, None, weight_attr, bias_attr, data_format)


class SubmConv3D(_SparseConv):
    """Submanifold sparse 3-D convolution layer: outputs at the input's sites only.

    Args:
        in_channels (int): C_in.
        out_channels (int): C_out.
        kernel_size (int|list): kernel size.
        stride (int|list): Default 1.
        padding (int|list): accepted for Paddle's signature (the kernel is centred).
        dilation (int|list): Default 1.
        groups (int): must be 1.
        padding_mode (str): 'zeros'.
        key (str, optional): share the rulebook with other layers using this key.
        weight_attr (ParamAttr, optional): the ``[kd, kh, kw, C_in, C_out]`` weight.
        bias_attr (ParamAttr|bool, optional): the ``[C_out]`` bias; False for none.
        data_format (str): 'NDHWC'.

    Example:
        >>> conv = paddle.sparse.nn.SubmConv3D(3, 8, 3, padding=1, key='block1')
    """

    _subm = True


class Conv2D(_SparseConv):
    """Sparse 2-D convolution layer on ``[N, H, W, C]`` COO input.

    Args:
        in_channels (int): C_in.
        out_channels (int): C_out.
        kernel_size (int|list): kernel size.
        stride (int|list): Default 1.
        padding (int|list): Default 0.
        dilation (int|list): Default 1.
        groups (int): must be 1.
        padding_mode (str): 'zeros'.
        weight_attr (ParamAttr, optional): the ``[kh, kw, C_in, C_out]`` weight.
        bias_attr (ParamAttr|bool, optional): the ``[C_out]`` bias; False for none.
        data_format (str): 'NHWC'.

    Example:
        >>> conv = paddle.sparse.nn.Conv2D(3, 8, 3)
    """

    _nd = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, padding_mode="zeros", weight_attr=None, bias_attr=None,
                 data_format="NHWC"):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, padding_mode, None, weight_attr, bias_attr, data_format)


class SubmConv2D(_SparseConv):
    """Submanifold sparse 2-D convolution layer.

    Args:
        in_channels (int): C_in.
        out_channels (int): C_out.
        kernel_size (int|list): kernel size.
        stride (int|list): Default 1.
        padding (int|list): accepted for Paddle's signature (the kernel is centred).
        dilation (int|list): Default 1.
        groups (int): must be 1.
        padding_mode (str): 'zeros'.
        key (str, optional): share the rulebook with other layers using this key.
        weight_attr (ParamAttr, optional): the ``[kh, kw, C_in, C_out]`` weight.
        bias_attr (ParamAttr|bool, optional): the ``[C_out]`` bias; False for none.
        data_format (str): 'NHWC'.

    Example:
        >>> conv = paddle.sparse.nn.SubmConv2D(3, 8, 3, padding=1)
    """

    _nd = 2
    _subm = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, padding_mode="zeros", key=None, weight_attr=None, bias_attr=None,
                 data_format="NHWC"):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, padding_mode, key, weight_attr, bias_attr, data_format)


class MaxPool3D(nn.Layer):
    """Sparse 3-D max pooling layer (see :func:`paddle_hl.sparse.nn.functional.max_pool3d`).

    Args:
        kernel_size (int|list): window size.
        stride (int|list, optional): Default: kernel_size.
        padding (int|list): Default 0.
        return_mask (bool): accepted for Paddle's signature; as in Paddle, sparse pooling
            returns the pooled tensor only.
        ceil_mode (bool): Default False.
        data_format (str): 'NDHWC'.
        name (str, optional): unused.

    Example:
        >>> pool = paddle.sparse.nn.MaxPool3D(2, 2)
    """

    def __init__(self, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False,
                 data_format="NDHWC", name=None):
        super().__init__()
        self.return_mask = return_mask  # kept for Paddle's signature: no mask, as in Paddle
        self.ksize = kernel_size
        self.stride = stride
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.data_format = data_format
        self.name = name

    def forward(self, x):
        return F.max_pool3d(x, self.ksize, self.stride, self.padding, self.ceil_mode,
                            self.data_format)

    def extra_repr(self):
        return f"kernel_size={self.ksize}, stride={self.stride}, padding={self.padding}"


class BatchNorm(nn.BatchNorm1D):
    """Batch normalization of a sparse ``[N, ..., C]`` COO tensor over its stored values.

    Statistics are over the active sites only (the ``[nnz, C]`` values), as Paddle's.

    Args:
        num_features (int): C.
        momentum (float): Default 0.9.
        epsilon (float): Default 1e-5.
        weight_attr (ParamAttr|bool, optional): scale; False for none.
        bias_attr (ParamAttr|bool, optional): shift; False for none.
        data_format (str): 'NDHWC' (channel last).
        use_global_stats (bool, optional): force running (True) or batch (False) statistics.
        name (str, optional): shown in the repr.

    Example:
        >>> bn = paddle.sparse.nn.BatchNorm(16)
    """

    def __init__(self, num_features, momentum=0.9, epsilon=1e-05, weight_attr=None,
                 bias_attr=None, data_format="NDHWC", use_global_stats=None, name=None):
        super().__init__(num_features, momentum, epsilon, weight_attr, bias_attr, "NC",
                         use_global_stats, name)
        if data_format not in ("NDHWC", "NHWC", "NC"):
            raise ValueError(f"paddle.sparse.nn.{type(self).__name__}: data_format must be "
                             f"channel-last ('NDHWC'), got {data_format!r}")
        self._data_format = data_format

    def forward(self, input):  # noqa: A002  (Paddle's argument name)
        op = f"paddle.sparse.nn.{type(self).__name__}"
        require_sparse(input, type(self).__name__, "input")
        if not input.is_sparse_coo() or input.dense_dim() != 1:
            raise ValueError(f"{op}: input must be a COO tensor with one dense (channel) dim, "
                             f"got shape {input.shape}")
        if input.shape[-1] != self._num_features:
            raise ValueError(f"{op}: expected {self._num_features} channels (num_features), got "
                             f"input of shape {input.shape}")
        out = dense_F.batch_norm(input._vt, self._mean, self._variance, weight=self.weight,
                                 bias=self.bias, training=self.training,
                                 momentum=self._momentum, epsilon=self._epsilon,
                                 data_format="NC", use_global_stats=self._use_global_stats)
        return input._with_values(out)


class SyncBatchNorm(BatchNorm):
    """Cross-device sparse batch normalization; in one process it is :class:`BatchNorm`.

    Args:
        num_features (int): C.
        momentum (float): Default 0.9.
        epsilon (float): Default 1e-5.
        weight_attr (ParamAttr|bool, optional): scale; False for none.
        bias_attr (ParamAttr|bool, optional): shift; False for none.
        data_format (str): accepted for Paddle's signature; the values are channel-last.
        name (str, optional): shown in the repr.

    Example:
        >>> bn = paddle.sparse.nn.SyncBatchNorm(16)
    """

    def __init__(self, num_features, momentum=0.9, epsilon=1e-05, weight_attr=None,
                 bias_attr=None, data_format="NCHW", name=None):
        super().__init__(num_features, momentum, epsilon, weight_attr, bias_attr, "NDHWC", None,
                         name)
        self._data_format = data_format

    @classmethod
    def convert_sync_batchnorm(cls, layer):
        """Replace every sparse BatchNorm inside ``layer`` by a sparse SyncBatchNorm sharing
        its parameters and running statistics; returns the converted layer (a new layer when
        ``layer`` itself is one).

        Args:
            layer (Layer): a model (or a single sparse batch norm layer).

        Returns:
            Layer: the converted layer.
        """
        out = layer
        if isinstance(layer, BatchNorm) and not isinstance(layer, SyncBatchNorm):
            out = cls(layer._num_features, layer._momentum, layer._epsilon, layer._weight_attr,
                      layer._bias_attr, layer._data_format, layer._name)
            if layer.weight is not None and out.weight is not None:
                out.weight = layer.weight
            if layer.bias is not None and out.bias is not None:
                out.bias = layer.bias
            out._mean, out._variance = layer._mean, layer._variance
            out.training = layer.training
        for name, sub in list(layer._sub_layers.items()):
            if sub is not None:
                out.add_sublayer(name, cls.convert_sync_batchnorm(sub))
        return out


class ReLU(nn.Layer):
    """Sparse ReLU on the stored values.

    Args:
        name (str, optional): unused.

    Example:
        >>> relu = paddle.sparse.nn.ReLU()
    """

    def __init__(self, name=None):
        super().__init__()
        self._name = name

    def forward(self, x):
        return F.relu(x)

    def extra_repr(self):
        return f"name={self._name}" if self._name else ""


class ReLU6(ReLU):
    """Sparse ReLU6 on the stored values.

    Args:
        name (str, optional): unused.

    Example:
        >>> relu6 = paddle.sparse.nn.ReLU6()
    """

    def forward(self, x):
        return F.relu6(x)


class LeakyReLU(nn.Layer):
    """Sparse leaky ReLU on the stored values.

    Args:
        negative_slope (float): Default 0.01.
        name (str, optional): unused.

    Example:
        >>> act = paddle.sparse.nn.LeakyReLU(0.1)
    """

    def __init__(self, negative_slope=0.01, name=None):
        super().__init__()
        self._negative_slope = negative_slope
        self._name = name

    def forward(self, x):
        return F.leaky_relu(x, self._negative_slope)

    def extra_repr(self):
        return f"name={self._name}" if self._name else ""


class Softmax(nn.Layer):
    """Sparse softmax over the stored entries of each row (last axis).

    Args:
        axis (int): -1.
        name (str, optional): unused.

    Example:
        >>> sm = paddle.sparse.nn.Softmax()
    """

    def __init__(self, axis=-1, name=None):
        super().__init__()
        self._axis = axis
        self._name = name

    def forward(self, x):
        return F.softmax(x, self._axis)

    def extra_repr(self):
        return f"name={self._name}" if self._name else ""
