"""Common layers: Linear, Bilinear, Embedding, Identity, Flatten, Unflatten, the dropouts
and the pads."""

from __future__ import annotations

import numbers

from ...framework import dtype as _dt
from ...framework import state
from ...tensor import manipulation as _manip
from ...tensor._helpers import name_suffix as _name_suffix
from ...tensor._helpers import positive_int as _positive_int
from .. import functional as F
from .layers import Layer

__all__ = []


class Identity(Layer):
    """A layer that returns its input unchanged (arguments are accepted and ignored).

    Example:
        >>> paddle.nn.Identity()(x) is x
        True
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):  # noqa: A002  (Paddle's argument name)
        return input


class Linear(Layer):
    """Fully connected layer: ``y = x @ weight + bias``.

    Args:
        in_features (int): size of the last input dim.
        out_features (int): size of the last output dim.
        weight_attr (ParamAttr, optional): weight ``[in_features, out_features]``
            (Xavier-uniform by default).
        bias_attr (ParamAttr|bool, optional): bias ``[out_features]`` (zeros by default);
            False: no bias.
        name (str, optional): shown in the repr.

    Shape:
        input ``[..., in_features]`` -> output ``[..., out_features]``.

    Example:
        >>> fc = paddle.nn.Linear(4, 2)
        >>> fc(paddle.ones([3, 4])).shape
        [3, 2]
    """

    def __init__(self, in_features, out_features, weight_attr=None, bias_attr=None, name=None):
        super().__init__()
        in_features = _positive_int(in_features, "Linear", "in_features")
        out_features = _positive_int(out_features, "Linear", "out_features")
        self._dtype = _dt.get_default_dtype()
        self._weight_attr = weight_attr
        self._bias_attr = bias_attr
        self.weight = self.create_parameter(shape=[in_features, out_features],
                                            attr=self._weight_attr, dtype=self._dtype,
                                            is_bias=False)
        self.bias = self.create_parameter(shape=[out_features], attr=self._bias_attr,
                                          dtype=self._dtype, is_bias=True)
        self.name = name

    def forward(self, input):  # noqa: A002
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.weight.shape[0]}, out_features={self.weight.shape[1]}, "
                f"dtype={self._dtype}{_name_suffix(self.name)}")


class Bilinear(Layer):
    """Bilinear layer: ``out[n, o] = x1[n] @ weight[o] @ x2[n] + bias[0, o]``.

    Args:
        in1_features (int): features of the first input.
        in2_features (int): features of the second input.
        out_features (int): output features.
        weight_attr (ParamAttr, optional): weight ``[out, in1, in2]`` (Xavier-uniform).
        bias_attr (ParamAttr|bool, optional): bias ``[1, out]`` (zeros); False: no bias.
        name (str, optional): unused.
    """

    def __init__(self, in1_features, in2_features, out_features, weight_attr=None,
                 bias_attr=None, name=None):
        super().__init__()
        self._in1_features = _positive_int(in1_features, "Bilinear", "in1_features")
        self._in2_features = _positive_int(in2_features, "Bilinear", "in2_features")
        self._out_features = _positive_int(out_features, "Bilinear", "out_features")
        self._dtype = _dt.get_default_dtype()
        self._weight_attr = weight_attr
        self._bias_attr = bias_attr
        self._name = name
        self.weight = self.create_parameter(
            shape=[self._out_features, self._in1_features, self._in2_features],
            attr=self._weight_attr, dtype=self._dtype, is_bias=False)
        self.bias = self.create_parameter(shape=[1, self._out_features], attr=self._bias_attr,
                                          dtype=self._dtype, is_bias=True)

    def forward(self, x1, x2):
        return F.bilinear(x1, x2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self._in1_features}, in2_features={self._in2_features}, "
                f"out_features={self._out_features}, dtype={self._dtype}"
                f"{_name_suffix(self._name)}")


class Embedding(Layer):
    """Lookup table: maps integer ids to rows of ``weight``.

    Args:
        num_embeddings (int): the vocabulary size.
        embedding_dim (int): the size of each embedding vector.
        padding_idx (int, optional): an id whose row is zero at creation, always looked up as
            zeros and never updated; negative values count from the end.
        sparse (bool): accepted for compatibility (gradients are dense).
        weight_attr (ParamAttr, optional): weight ``[num_embeddings, embedding_dim]``
            (Xavier-uniform by default).
        name (str, optional): shown in the repr.

    Example:
        >>> emb = paddle.nn.Embedding(10, 3, padding_idx=0)
        >>> emb(paddle.to_tensor([[1, 0]])).shape
        [1, 2, 3]
    """

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, sparse=False,
                 weight_attr=None, name=None):
        super().__init__()
        self._num_embeddings = _positive_int(num_embeddings, "Embedding", "num_embeddings")
        self._embedding_dim = _positive_int(embedding_dim, "Embedding", "embedding_dim")
        self._sparse = sparse
        self._is_distributed = False
        n = self._num_embeddings
        if padding_idx is not None:
            if isinstance(padding_idx, bool) or not isinstance(padding_idx, numbers.Integral):
                raise TypeError(f"Embedding: padding_idx must be an int or None, got "
                                f"{type(padding_idx).__name__}")
            if not -n <= padding_idx < n:
                raise ValueError(f"Embedding: padding_idx must be within [{-n}, {n}), got "
                                 f"{padding_idx}")
        self._padding_idx_arg = padding_idx
        self._padding_idx = -1 if padding_idx is None else int(padding_idx) % n
        self._size = [self._num_embeddings, self._embedding_dim]
        self._weight_attr = weight_attr
        self._dtype = _dt.get_default_dtype()
        self._name = name
        self.weight = self.create_parameter(attr=self._weight_attr, shape=self._size,
                                            dtype=self._dtype, is_bias=False)
        if self._padding_idx != -1:
            with state.no_grad():
                self.weight._data[self._padding_idx] = 0
                self.weight._ver.v += 1

    def forward(self, x):
        return F.embedding(x, weight=self.weight, padding_idx=self._padding_idx_arg,
                           sparse=self._sparse)

    def extra_repr(self):
        s = f"{self._num_embeddings}, {self._embedding_dim}"
        if self._padding_idx_arg is not None:
            s += f", padding_idx={self._padding_idx_arg}"
        s += f", sparse={self._sparse}"
        return s + _name_suffix(self._name)


class Flatten(Layer):
    """Flatten the dims ``start_axis..stop_axis`` into one.

    Args:
        start_axis (int): first dim flattened (default 1, keeping the batch dim).
        stop_axis (int): last dim flattened (default -1).
    """

    def __init__(self, start_axis=1, stop_axis=-1):
        super().__init__()
        self.start_axis = start_axis
        self.stop_axis = stop_axis

    def forward(self, input):  # noqa: A002
        return _manip.flatten(input, start_axis=self.start_axis, stop_axis=self.stop_axis)


class Unflatten(Layer):
    """Split dim ``axis`` into ``shape``.

    Args:
        axis (int): the dim to split.
        shape (list|tuple|Tensor): the new dims (one may be -1); their product must equal the
            size of ``axis``.
        name (str, optional): shown in the repr.
    """

    def __init__(self, axis, shape, name=None):
        super().__init__()
        self.axis = axis
        self.shape = shape
        self.name = name

    def forward(self, input):  # noqa: A002
        return _manip.unflatten(input, axis=self.axis, shape=self.shape)

    def extra_repr(self):
        return f"axis={self.axis}, shape={self.shape}{_name_suffix(self.name)}"


def _check_dropout_p(p, layer):
    """Refuse a drop probability outside [0, 1] when the layer is built, not at its first
    forward (a Tensor p is checked by the functional form)."""
    if isinstance(p, numbers.Real) and not isinstance(p, bool) and not 0.0 <= p <= 1.0:
        raise ValueError(f"{layer}: p must be between 0 and 1 (a drop probability), got {p}")


class Dropout(Layer):
    """Dropout (see :func:`paddle.nn.functional.dropout`); identity-like in eval mode.

    Args:
        p (float): the drop probability.
        axis (int|list[int], optional): dims the mask varies along (shared along the others).
        mode (str): 'upscale_in_train' or 'downscale_in_infer'.
        name (str, optional): shown in the repr.
    """

    def __init__(self, p=0.5, axis=None, mode="upscale_in_train", name=None):
        super().__init__()
        _check_dropout_p(p, "Dropout")
        self.p = p
        self.axis = axis
        self.mode = mode
        self.name = name

    def forward(self, input):  # noqa: A002
        return F.dropout(input, p=self.p, axis=self.axis, training=self.training,
                         mode=self.mode)

    def extra_repr(self):
        return f"p={self.p}, axis={self.axis}, mode={self.mode}{_name_suffix(self.name)}"


class _ChannelDropout(Layer):
    """Dropout2D/3D: ``_fn`` zeroes whole channels; the layer keeps p and data_format."""

    _fn = None

    def __init__(self, p, data_format, name):
        super().__init__()
        _check_dropout_p(p, type(self).__name__)
        self.p = p
        self.data_format = data_format
        self.name = name

    def forward(self, input):  # noqa: A002
        return self._fn(input, p=self.p, training=self.training, data_format=self.data_format)

    def extra_repr(self):
        return f"p={self.p}, data_format={self.data_format}{_name_suffix(self.name)}"


class Dropout2D(_ChannelDropout):
    """Channel dropout on 4-D input (see :func:`paddle.nn.functional.dropout2d`).

    Args:
        p (float): the drop probability.
        data_format (str): 'NCHW' or 'NHWC'.
        name (str, optional): shown in the repr.
    """

    _fn = staticmethod(F.dropout2d)

    def __init__(self, p=0.5, data_format="NCHW", name=None):
        super().__init__(p, data_format, name)


class Dropout3D(_ChannelDropout):
    """Channel dropout on 5-D input (see :func:`paddle.nn.functional.dropout3d`).

    Args:
        p (float): the drop probability.
        data_format (str): 'NCDHW' or 'NDHWC'.
        name (str, optional): shown in the repr.
    """

    _fn = staticmethod(F.dropout3d)

    def __init__(self, p=0.5, data_format="NCDHW", name=None):
        super().__init__(p, data_format, name)


class AlphaDropout(Layer):
    """Alpha dropout for SELU networks (see :func:`paddle.nn.functional.alpha_dropout`).

    Args:
        p (float): the drop probability.
        name (str, optional): shown in the repr.
    """

    def __init__(self, p=0.5, name=None):
        super().__init__()
        _check_dropout_p(p, "AlphaDropout")
        self.p = p
        self.name = name

    def forward(self, input):  # noqa: A002
        return F.alpha_dropout(input, p=self.p, training=self.training)

    def extra_repr(self):
        return f"p={self.p}{_name_suffix(self.name)}"


class _PadNd(Layer):
    _n = 1
    _default_format = "NCL"

    def __init__(self, padding, mode="constant", value=0.0, data_format=None, name=None):
        super().__init__()
        # an int pads every side; a list/tuple/Tensor is kept as given (and shown so)
        if isinstance(padding, (numbers.Real,)) and not isinstance(padding, bool):
            padding = [padding] * (2 * self._n)
        self._pad = padding
        self._mode = mode
        self._value = value
        self._data_format = data_format or self._default_format
        self._name = name

    def forward(self, x):
        return F.pad(x, pad=self._pad, mode=self._mode, value=self._value,
                     data_format=self._data_format)

    def extra_repr(self):
        return (f"padding={self._pad}, mode={self._mode}, value={self._value}, "
                f"data_format={self._data_format}{_name_suffix(self._name)}")


class Pad1D(_PadNd):
    """Pad the last dim of a 3-D input.

    Args:
        padding (int|list[int]): ``[left, right]``; an int pads both sides.
        mode (str): 'constant', 'reflect', 'replicate' or 'circular'.
        value (float): the fill value of 'constant'.
        data_format (str): 'NCL' or 'NLC'.
        name (str, optional): shown in the repr.
    """

    _n = 1

    def __init__(self, padding, mode="constant", value=0.0, data_format="NCL", name=None):
        super().__init__(padding, mode, value, data_format, name)


class Pad2D(_PadNd):
    """Pad the two spatial dims of a 4-D input (a tuple padding works).

    Args:
        padding (int|list[int]|tuple): ``[left, right, top, bottom]``; an int pads every side.
        mode (str): 'constant', 'reflect', 'replicate' or 'circular'.
        value (float): the fill value of 'constant'.
        data_format (str): 'NCHW' or 'NHWC'.
        name (str, optional): shown in the repr.
    """

    _n = 2

    def __init__(self, padding, mode="constant", value=0.0, data_format="NCHW", name=None):
        super().__init__(padding, mode, value, data_format, name)


class Pad3D(_PadNd):
    """Pad the three spatial dims of a 5-D input.

    Args:
        padding (int|list[int]): ``[left, right, top, bottom, front, back]``; an int pads
            every side.
        mode (str): 'constant', 'reflect', 'replicate' or 'circular'.
        value (float): the fill value of 'constant'.
        data_format (str): 'NCDHW' or 'NDHWC'.
        name (str, optional): shown in the repr.
    """

    _n = 3

    def __init__(self, padding, mode="constant", value=0.0, data_format="NCDHW", name=None):
        super().__init__(padding, mode, value, data_format, name)


class ZeroPad2D(Layer):
    """Zero-pad the two spatial dims of a 4-D input.

    Args:
        padding (int|list[int]|tuple): ``[left, right, top, bottom]``; an int pads every side.
        data_format (str): 'NCHW' or 'NHWC'.
        name (str, optional): shown in the repr.
    """

    def __init__(self, padding, data_format="NCHW", name=None):
        super().__init__()
        if isinstance(padding, numbers.Real) and not isinstance(padding, bool):
            padding = [padding] * 4
        self._pad = padding
        self._mode = "constant"
        self._value = 0.0
        self._data_format = data_format
        self._name = name

    def forward(self, x):
        return F.zeropad2d(x, padding=self._pad, data_format=self._data_format)

    def extra_repr(self):
        return f"padding={self._pad}, data_format={self._data_format}{_name_suffix(self._name)}"
