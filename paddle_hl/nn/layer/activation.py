"""Activation layers: thin Layer wrappers around ``paddle.nn.functional`` activations, with
Paddle's constructor arguments and reprs (``ELU(alpha=-0.2)``, ``ReLU(name=r)``)."""

from __future__ import annotations

from ...framework import dtype as _dt
from ...framework.tensor import Tensor
from ...tensor._helpers import name_suffix as _name_suffix
from .. import functional as F
from ..initializer import Constant
from .layers import Layer

__all__ = []


def _name_repr(name):
    return f"name={name}" if name else ""


class _Activation(Layer):
    """Base of the activation layers: ``forward`` calls ``_fn(x, *params)`` and ``extra_repr``
    lists the params then the name, in the order the subclass passed them."""

    _fn = None

    def __init__(self, name=None, **params):
        super().__init__()
        self._params = tuple(params)
        for key, value in params.items():
            setattr(self, "_" + key, value)
        self._name = name

    def forward(self, x):
        return self._fn(x, *[getattr(self, "_" + key) for key in self._params])

    def extra_repr(self):
        shown = ", ".join(f"{key}={getattr(self, '_' + key)}" for key in self._params)
        return shown + _name_suffix(self._name) if shown else _name_repr(self._name)


class _NameOnly(_Activation):
    """An activation whose only constructor argument is ``name``."""

    def __init__(self, name=None):
        super().__init__(name)

    def forward(self, x):
        return self._fn(x)


class CELU(_Activation):
    """CELU ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Args:
        alpha (float): Default 1.0.
        name (str, optional): shown in the repr.
    """

    _fn = staticmethod(F.celu)

    def __init__(self, alpha=1.0, name=None):
        super().__init__(name, alpha=alpha)


class ELU(_Activation):
    """ELU: ``x`` for x > 0, ``alpha * (exp(x) - 1)`` otherwise, any alpha.

    Args:
        alpha (float): Default 1.0.
        name (str, optional): shown in the repr.

    Example:
        >>> paddle.nn.ELU(-0.2)(paddle.to_tensor([-1., 6.]))  # [0.12642412, 6.]
    """

    _fn = staticmethod(F.elu)

    def __init__(self, alpha=1.0, name=None):
        super().__init__(name, alpha=alpha)


class GELU(_Activation):
    """GELU with the erf formula, or the tanh formula when ``approximate``.

    Args:
        approximate (bool): Default False.
        name (str, optional): shown in the repr.
    """

    _fn = staticmethod(F.gelu)

    def __init__(self, approximate=False, name=None):
        super().__init__(name, approximate=approximate)


class GLU(_Activation):
    """Gated linear unit ``a * sigmoid(b)`` with ``a, b`` the halves of x along axis.

    Args:
        axis (int): Default -1.
        name (str, optional): shown in the repr.
    """

    _fn = staticmethod(F.glu)

    def __init__(self, axis=-1, name=None):
        super().__init__(name, axis=axis)


class Hardshrink(_Activation):
    """Hard shrinkage: ``x`` where ``|x| > threshold``, else 0.

    Args:
        threshold (float): Default 0.5.
        name (str, optional): shown in the repr.
    """

    _fn = staticmethod(F.hardshrink)

    def __init__(self, threshold=0.5, name=None):
        super().__init__(name, threshold=threshold)


class Softshrink(_Activation):
    """Soft shrinkage (see :func:`paddle.nn.functional.softshrink`).

    Args:
        threshold (float): Default 0.5.
        name (str, optional): shown in the repr.
    """

    _fn = staticmethod(F.softshrink)

    def __init__(self, threshold=0.5, name=None):
        super().__init__(name, threshold=threshold)


class ThresholdedReLU(_Activation):
    """Thresholded ReLU: ``x`` where ``x > threshold``, else 0.

    Args:
        threshold (float): Default 1.0.
        name (str, optional): shown in the repr.
    """

    _fn = staticmethod(F.thresholded_relu)

    def __init__(self, threshold=1.0, name=None):
        super().__init__(name, threshold=threshold)


class Hardtanh(_Activation):
    """Hard tanh ``clip(x, min, max)``.

    Args:
        min (float): Default -1.0.
        max (float): Default 1.0.
        name (str, optional): shown in the repr.
    """

    _fn = staticmethod(F.hardtanh)

    def __init__(self, min=-1.0, max=1.0, name=None):  # noqa: A002  (Paddle's names)
        super().__init__(name, min=min, max=max)


class LeakyReLU(_Activation):
    """Leaky ReLU: ``x`` for x > 0, ``negative_slope * x`` otherwise.

    Args:
        negative_slope (float): Default 0.01.
        name (str, optional): shown in the repr.
    """

    _fn = staticmethod(F.leaky_relu)

    def __init__(self, negative_slope=0.01, name=None):
        super().__init__(name, negative_slope=negative_slope)


class LogSoftmax(_Activation):
    """Log-softmax along ``axis``.

    Args:
        axis (int): Default -1.
        name (str, optional): shown in the repr.
    """

    _fn = staticmethod(F.log_softmax)

    def __init__(self, axis=-1, name=None):
        super().__init__(name, axis=axis)


class Softmax(_Activation):
    """Softmax along ``axis``.

    Args:
        axis (int): Default -1.
        name (str, optional): shown in the repr.
    """

    _fn = staticmethod(F.softmax)

    def __init__(self, axis=-1, name=None):
        super().__init__(name, axis=axis)


class Softmax2D(Layer):
    """Softmax over the channel axis (-3) of a [C, H, W] or [N, C, H, W] input.

    Args:
        name (str, optional): shown in the repr.
    """

    def __init__(self, name=None):
        super().__init__()
        self._dtype = None
        self._name = name

    def forward(self, x):
        if not isinstance(x, Tensor) or x.ndim not in (3, 4):
            got = f"{x.ndim}D" if isinstance(x, Tensor) else type(x).__name__
            raise AssertionError(f"Softmax2D requires a 3D or 4D tensor as input. Received: "
                                 f"{got}.")
        return F.softmax(x, axis=-3)

    def extra_repr(self):
        return _name_repr(self._name)


class Maxout(_Activation):
    """Maxout over groups of ``groups`` channels of a 4-D input.

    Args:
        groups (int): channels per group.
        axis (int): channel axis, 1, -1 or 3. Default 1.
        name (str, optional): shown in the repr.
    """

    _fn = staticmethod(F.maxout)

    def __init__(self, groups, axis=1, name=None):
        super().__init__(name, groups=groups, axis=axis)


class PReLU(Layer):
    """PReLU with a learnable slope: one for all elements (num_parameters=1) or one per
    channel (the channel axis is the last one for channel-last data formats).

    Args:
        num_parameters (int): 1 or the number of channels. Default 1.
        init (float): initial slope. Default 0.25.
        weight_attr (ParamAttr, optional): the slope parameter ``_weight`` [num_parameters].
        data_format (str): 'NC', 'NCL', 'NCHW', 'NCDHW', 'NLC', 'NHWC' or 'NDHWC'.
        name (str, optional): shown in the repr.

    Example:
        >>> m = paddle.nn.PReLU(3, data_format='NHWC')
        >>> m(paddle.rand([2, 4, 4, 3])).shape
        [2, 4, 4, 3]
    """

    def __init__(self, num_parameters=1, init=0.25, weight_attr=None, data_format="NCHW",
                 name=None):
        super().__init__()
        self._num_parameters = num_parameters
        self._init = init
        self._weight_attr = weight_attr
        self._data_format = data_format
        self._name = name
        self._dtype = _dt.get_default_dtype()
        self._weight = self.create_parameter(attr=weight_attr, shape=[num_parameters],
                                             dtype=self._dtype, is_bias=False,
                                             default_initializer=Constant(init))

    def forward(self, x):
        return F.prelu(x, self._weight, data_format=self._data_format)

    def extra_repr(self):
        return (f"num_parameters={self._num_parameters}, data_format={self._data_format}, "
                f"init={self._init}, dtype={self._dtype}{_name_suffix(self._name)}")


class RReLU(Layer):
    """Randomized leaky ReLU: random slopes in ``[lower, upper]`` in training, their mean
    ``(lower + upper) / 2`` in evaluation.

    Args:
        lower (float): Default 1/8.
        upper (float): Default 1/3.
        name (str, optional): shown in the repr.
    """

    def __init__(self, lower=1.0 / 8.0, upper=1.0 / 3.0, name=None):
        super().__init__()
        self._lower = lower
        self._upper = upper
        self._name = name
        self._dtype = _dt.get_default_dtype()

    def forward(self, x):
        return F.rrelu(x, lower=self._lower, upper=self._upper, training=self.training)

    def extra_repr(self):
        return (f"lower={self._lower}, upper={self._upper}, training={self.training}, "
                f"dtype={self._dtype}{_name_suffix(self._name)}")


class SELU(_Activation):
    """SELU ``scale * (x if x > 0 else alpha * (exp(x) - 1))``.

    Args:
        scale (float): Default 1.0507009873554805.
        alpha (float): Default 1.6732632423543772.
        name (str, optional): shown in the repr.
    """

    _fn = staticmethod(F.selu)

    def __init__(self, scale=1.0507009873554805, alpha=1.6732632423543772, name=None):
        super().__init__(name, scale=scale, alpha=alpha)


class Softplus(_Activation):
    """Softplus ``log(1 + exp(beta * x)) / beta`` (x itself above ``threshold``).

    Args:
        beta (float): Default 1.
        threshold (float): Default 20.
        name (str, optional): shown in the repr.
    """

    _fn = staticmethod(F.softplus)

    def __init__(self, beta=1, threshold=20, name=None):
        super().__init__(name, beta=beta, threshold=threshold)


class Hardsigmoid(_NameOnly):
    """Hard sigmoid ``clip(x / 6 + 0.5, 0, 1)``.

    Only ``name`` (str, optional; shown in the repr); output shape and dtype are x's.
    """

    _fn = staticmethod(F.hardsigmoid)

    def __init__(self, name=None):
        super().__init__(name)
        self.name = name  # a public attribute of this layer in Paddle


class Hardswish(_NameOnly):
    """Hard swish ``x * min(max(x + 3, 0), 6) / 6``.

    Only ``name`` (str, optional; shown in the repr); output shape and dtype are x's.
    """

    _fn = staticmethod(F.hardswish)


class LogSigmoid(_NameOnly):
    """Log-sigmoid ``log(1 / (1 + exp(-x)))``.

    Only ``name`` (str, optional; shown in the repr); output shape and dtype are x's.
    """

    _fn = staticmethod(F.log_sigmoid)


class Mish(_NameOnly):
    """Mish ``x * tanh(softplus(x))``.

    Only ``name`` (str, optional; shown in the repr); output shape and dtype are x's.
    """

    _fn = staticmethod(F.mish)


class ReLU(_NameOnly):
    """ReLU ``max(x, 0)``.

    Only ``name`` (str, optional; shown in the repr); output shape and dtype are x's.
    """

    _fn = staticmethod(F.relu)


class ReLU6(_NameOnly):
    """ReLU6 ``min(max(x, 0), 6)``.

    Only ``name`` (str, optional; shown in the repr); output shape and dtype are x's.
    """

    _fn = staticmethod(F.relu6)


class Sigmoid(_NameOnly):
    """Sigmoid ``1 / (1 + exp(-x))``.

    Only ``name`` (str, optional; shown in the repr); output shape and dtype are x's.
    """

    _fn = staticmethod(F.sigmoid)

    def __init__(self, name=None):
        super().__init__(name)
        self.name = name  # a public attribute of this layer in Paddle


class Silu(_NameOnly):
    """SiLU ``x * sigmoid(x)``.

    Only ``name`` (str, optional; shown in the repr); output shape and dtype are x's.
    """

    _fn = staticmethod(F.silu)


class Softsign(_NameOnly):
    """Softsign ``x / (1 + |x|)``.

    Only ``name`` (str, optional; shown in the repr); output shape and dtype are x's.
    """

    _fn = staticmethod(F.softsign)


class Swish(_NameOnly):
    """Swish ``x * sigmoid(x)``.

    Only ``name`` (str, optional; shown in the repr); output shape and dtype are x's.
    """

    _fn = staticmethod(F.swish)


class Tanh(_NameOnly):
    """Tanh.

    Only ``name`` (str, optional; shown in the repr); output shape and dtype are x's.
    """

    _fn = staticmethod(F.tanh)


class Tanhshrink(_NameOnly):
    """Tanh shrink ``x - tanh(x)``.

    Only ``name`` (str, optional; shown in the repr); output shape and dtype are x's.
    """

    _fn = staticmethod(F.tanhshrink)
