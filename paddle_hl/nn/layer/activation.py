"""Activation layers: thin Layer wrappers around ``paddle.nn.functional`` activations, with
Paddle's constructor arguments and reprs (``ELU(alpha=-0.2)``, ``ReLU(name=r)``)."""

from __future__ import annotations

from ...framework import dtype as _dt
from ...framework.tensor import Tensor
from .. import functional as F
from ..initializer import Constant
from .layers import Layer

__all__ = []


def _name_repr(name):
    return f"name={name}" if name else ""


def _name_suffix(name):
    return f", name={name}" if name else ""


class CELU(Layer):
    """CELU ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` (B90).

    Args:
        alpha (float): Default 1.0.
        name (str, optional): shown in the repr.
    """

    def __init__(self, alpha=1.0, name=None):
        super().__init__()
        self._alpha = alpha
        self._name = name

    def forward(self, x):
        return F.celu(x, self._alpha)

    def extra_repr(self):
        return f"alpha={self._alpha}{_name_suffix(self._name)}"


class ELU(Layer):
    """ELU: ``x`` for x > 0, ``alpha * (exp(x) - 1)`` otherwise, any alpha (B69).

    Args:
        alpha (float): Default 1.0.
        name (str, optional): shown in the repr.

    Example:
        >>> paddle.nn.ELU(-0.2)(paddle.to_tensor([-1., 6.]))  # [0.12642412, 6.]
    """

    def __init__(self, alpha=1.0, name=None):
        super().__init__()
        self._alpha = alpha
        self._name = name

    def forward(self, x):
        return F.elu(x, self._alpha)

    def extra_repr(self):
        return f"alpha={self._alpha}{_name_suffix(self._name)}"


class GELU(Layer):
    """GELU with the erf formula, or the tanh formula when ``approximate`` (B77).

    Args:
        approximate (bool): Default False.
        name (str, optional): shown in the repr.
    """

    def __init__(self, approximate=False, name=None):
        super().__init__()
        self._approximate = approximate
        self._name = name

    def forward(self, x):
        return F.gelu(x, self._approximate)

    def extra_repr(self):
        return f"approximate={self._approximate}{_name_suffix(self._name)}"


class GLU(Layer):
    """Gated linear unit ``a * sigmoid(b)`` with ``a, b`` the halves of x along axis (B89).

    Args:
        axis (int): Default -1.
        name (str, optional): shown in the repr.
    """

    def __init__(self, axis=-1, name=None):
        super().__init__()
        self._axis = axis
        self._name = name

    def forward(self, x):
        return F.glu(x, self._axis)

    def extra_repr(self):
        return f"axis={self._axis}{_name_suffix(self._name)}"


class Hardshrink(Layer):
    """Hard shrinkage: ``x`` where ``|x| > threshold``, else 0.

    Args:
        threshold (float): Default 0.5.
        name (str, optional): shown in the repr.
    """

    def __init__(self, threshold=0.5, name=None):
        super().__init__()
        self._threshold = threshold
        self._name = name

    def forward(self, x):
        return F.hardshrink(x, self._threshold)

    def extra_repr(self):
        return f"threshold={self._threshold}{_name_suffix(self._name)}"


class Softshrink(Layer):
    """Soft shrinkage (see :func:`paddle.nn.functional.softshrink`).

    Args:
        threshold (float): Default 0.5.
        name (str, optional): shown in the repr.
    """

    def __init__(self, threshold=0.5, name=None):
        super().__init__()
        self._threshold = threshold
        self._name = name

    def forward(self, x):
        return F.softshrink(x, self._threshold)

    def extra_repr(self):
        return f"threshold={self._threshold}{_name_suffix(self._name)}"


class ThresholdedReLU(Layer):
    """Thresholded ReLU: ``x`` where ``x > threshold``, else 0.

    Args:
        threshold (float): Default 1.0.
        name (str, optional): shown in the repr.
    """

    def __init__(self, threshold=1.0, name=None):
        super().__init__()
        self._threshold = threshold
        self._name = name

    def forward(self, x):
        return F.thresholded_relu(x, self._threshold)

    def extra_repr(self):
        return f"threshold={self._threshold}{_name_suffix(self._name)}"


class Hardtanh(Layer):
    """Hard tanh ``clip(x, min, max)``.

    Args:
        min (float): Default -1.0.
        max (float): Default 1.0.
        name (str, optional): shown in the repr.
    """

    def __init__(self, min=-1.0, max=1.0, name=None):  # noqa: A002  (Paddle's names)
        super().__init__()
        self._min = min
        self._max = max
        self._name = name

    def forward(self, x):
        return F.hardtanh(x, self._min, self._max)

    def extra_repr(self):
        return f"min={self._min}, max={self._max}{_name_suffix(self._name)}"


class LeakyReLU(Layer):
    """Leaky ReLU: ``x`` for x > 0, ``negative_slope * x`` otherwise.

    Args:
        negative_slope (float): Default 0.01.
        name (str, optional): shown in the repr.
    """

    def __init__(self, negative_slope=0.01, name=None):
        super().__init__()
        self._negative_slope = negative_slope
        self._name = name

    def forward(self, x):
        return F.leaky_relu(x, self._negative_slope)

    def extra_repr(self):
        return f"negative_slope={self._negative_slope}{_name_suffix(self._name)}"


class LogSoftmax(Layer):
    """Log-softmax along ``axis``.

    Args:
        axis (int): Default -1.
        name (str, optional): shown in the repr.
    """

    def __init__(self, axis=-1, name=None):
        super().__init__()
        self._axis = axis
        self._name = name

    def forward(self, x):
        return F.log_softmax(x, self._axis)

    def extra_repr(self):
        return f"axis={self._axis}{_name_suffix(self._name)}"


class Softmax(Layer):
    """Softmax along ``axis`` (B47).

    Args:
        axis (int): Default -1.
        name (str, optional): shown in the repr.
    """

    def __init__(self, axis=-1, name=None):
        super().__init__()
        self._axis = axis
        self._name = name

    def forward(self, x):
        return F.softmax(x, self._axis)

    def extra_repr(self):
        return f"axis={self._axis}{_name_suffix(self._name)}"


class Softmax2D(Layer):
    """Softmax over the channel axis (-3) of a [C, H, W] or [N, C, H, W] input (B90).

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


class Maxout(Layer):
    """Maxout over groups of ``groups`` channels of a 4-D input.

    Args:
        groups (int): channels per group.
        axis (int): channel axis, 1, -1 or 3. Default 1.
        name (str, optional): shown in the repr.
    """

    def __init__(self, groups, axis=1, name=None):
        super().__init__()
        self._groups = groups
        self._axis = axis
        self._name = name

    def forward(self, x):
        return F.maxout(x, self._groups, self._axis)

    def extra_repr(self):
        return f"groups={self._groups}, axis={self._axis}{_name_suffix(self._name)}"


class PReLU(Layer):
    """PReLU with a learnable slope: one for all elements (num_parameters=1) or one per
    channel (B78: the channel axis is the last one for channel-last data formats).

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
    ``(lower + upper) / 2`` in evaluation (B90).

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


class SELU(Layer):
    """SELU ``scale * (x if x > 0 else alpha * (exp(x) - 1))``.

    Args:
        scale (float): Default 1.0507009873554805.
        alpha (float): Default 1.6732632423543772.
        name (str, optional): shown in the repr.
    """

    def __init__(self, scale=1.0507009873554805, alpha=1.6732632423543772, name=None):
        super().__init__()
        self._scale = scale
        self._alpha = alpha
        self._name = name

    def forward(self, x):
        return F.selu(x, self._scale, self._alpha)

    def extra_repr(self):
        return f"scale={self._scale}, alpha={self._alpha}{_name_suffix(self._name)}"


class Softplus(Layer):
    """Softplus ``log(1 + exp(beta * x)) / beta`` (x itself above ``threshold``).

    Args:
        beta (float): Default 1.
        threshold (float): Default 20.
        name (str, optional): shown in the repr.
    """

    def __init__(self, beta=1, threshold=20, name=None):
        super().__init__()
        self._beta = beta
        self._threshold = threshold
        self._name = name

    def forward(self, x):
        return F.softplus(x, self._beta, self._threshold)

    def extra_repr(self):
        return f"beta={self._beta}, threshold={self._threshold}{_name_suffix(self._name)}"


class Hardsigmoid(Layer):
    """Hard sigmoid ``clip(x / 6 + 0.5, 0, 1)``.

    Args:
        name (str, optional): shown in the repr.

    Shape:
        any shape; the output has the input's shape and dtype.
    """

    def __init__(self, name=None):
        super().__init__()
        self._name = name

    def forward(self, x):
        return F.hardsigmoid(x)

    def extra_repr(self):
        return _name_repr(self._name)


class Hardswish(Layer):
    """Hard swish ``x * min(max(x + 3, 0), 6) / 6``.

    Args:
        name (str, optional): shown in the repr.

    Shape:
        any shape; the output has the input's shape and dtype.
    """

    def __init__(self, name=None):
        super().__init__()
        self._name = name

    def forward(self, x):
        return F.hardswish(x)

    def extra_repr(self):
        return _name_repr(self._name)


class LogSigmoid(Layer):
    """Log-sigmoid ``log(1 / (1 + exp(-x)))``.

    Args:
        name (str, optional): shown in the repr.

    Shape:
        any shape; the output has the input's shape and dtype.
    """

    def __init__(self, name=None):
        super().__init__()
        self._name = name

    def forward(self, x):
        return F.log_sigmoid(x)

    def extra_repr(self):
        return _name_repr(self._name)


class Mish(Layer):
    """Mish ``x * tanh(softplus(x))``.

    Args:
        name (str, optional): shown in the repr.

    Shape:
        any shape; the output has the input's shape and dtype.
    """

    def __init__(self, name=None):
        super().__init__()
        self._name = name

    def forward(self, x):
        return F.mish(x)

    def extra_repr(self):
        return _name_repr(self._name)


class ReLU(Layer):
    """ReLU ``max(x, 0)``.

    Args:
        name (str, optional): shown in the repr.

    Shape:
        any shape; the output has the input's shape and dtype.
    """

    def __init__(self, name=None):
        super().__init__()
        self._name = name

    def forward(self, x):
        return F.relu(x)

    def extra_repr(self):
        return _name_repr(self._name)


class ReLU6(Layer):
    """ReLU6 ``min(max(x, 0), 6)``.

    Args:
        name (str, optional): shown in the repr.

    Shape:
        any shape; the output has the input's shape and dtype.
    """

    def __init__(self, name=None):
        super().__init__()
        self._name = name

    def forward(self, x):
        return F.relu6(x)

    def extra_repr(self):
        return _name_repr(self._name)


class Sigmoid(Layer):
    """Sigmoid ``1 / (1 + exp(-x))``.

    Args:
        name (str, optional): shown in the repr.

    Shape:
        any shape; the output has the input's shape and dtype.
    """

    def __init__(self, name=None):
        super().__init__()
        self._name = name

    def forward(self, x):
        return F.sigmoid(x)

    def extra_repr(self):
        return _name_repr(self._name)


class Silu(Layer):
    """SiLU ``x * sigmoid(x)``.

    Args:
        name (str, optional): shown in the repr.

    Shape:
        any shape; the output has the input's shape and dtype.
    """

    def __init__(self, name=None):
        super().__init__()
        self._name = name

    def forward(self, x):
        return F.silu(x)

    def extra_repr(self):
        return _name_repr(self._name)


class Softsign(Layer):
    """Softsign ``x / (1 + |x|)``.

    Args:
        name (str, optional): shown in the repr.

    Shape:
        any shape; the output has the input's shape and dtype.
    """

    def __init__(self, name=None):
        super().__init__()
        self._name = name

    def forward(self, x):
        return F.softsign(x)

    def extra_repr(self):
        return _name_repr(self._name)


class Swish(Layer):
    """Swish ``x * sigmoid(x)``.

    Args:
        name (str, optional): shown in the repr.

    Shape:
        any shape; the output has the input's shape and dtype.
    """

    def __init__(self, name=None):
        super().__init__()
        self._name = name

    def forward(self, x):
        return F.swish(x)

    def extra_repr(self):
        return _name_repr(self._name)


class Tanh(Layer):
    """Tanh.

    Args:
        name (str, optional): shown in the repr.

    Shape:
        any shape; the output has the input's shape and dtype.
    """

    def __init__(self, name=None):
        super().__init__()
        self._name = name

    def forward(self, x):
        return F.tanh(x)

    def extra_repr(self):
        return _name_repr(self._name)


class Tanhshrink(Layer):
    """Tanh shrink ``x - tanh(x)``.

    Args:
        name (str, optional): shown in the repr.

    Shape:
        any shape; the output has the input's shape and dtype.
    """

    def __init__(self, name=None):
        super().__init__()
        self._name = name

    def forward(self, x):
        return F.tanhshrink(x)

    def extra_repr(self):
        return _name_repr(self._name)


API = ["CELU", "ELU", "GELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh",
       "LeakyReLU", "LogSigmoid", "LogSoftmax", "Maxout", "Mish", "PReLU", "RReLU", "ReLU",
       "ReLU6", "SELU", "Sigmoid", "Silu", "Softmax", "Softmax2D", "Softplus", "Softshrink",
       "Softsign", "Swish", "Tanh", "Tanhshrink", "ThresholdedReLU"]
