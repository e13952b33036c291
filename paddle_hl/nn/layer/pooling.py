"""Pooling layers: MaxPool/AvgPool 1-D/2-D/3-D, the adaptive pools and MaxUnPool.

Each layer stores its arguments and calls the functional form; a layer built with
``kernel_size`` alone pools with ``stride = kernel_size`` and no padding.
"""

from __future__ import annotations

from ..functional import pooling as F
from .layers import Layer

__all__ = []


class _MaxPool(Layer):
    _fn = staticmethod(F.max_pool2d)
    _fmt = "NCHW"

    def __init__(self, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False,
                 data_format=None, name=None):
        super().__init__()
        self.ksize = kernel_size
        self.stride = stride
        self.padding = padding
        self.return_mask = return_mask
        self.ceil_mode = ceil_mode
        self.data_format = data_format or self._fmt
        self.name = name

    def forward(self, x):
        return self._fn(x, self.ksize, self.stride, self.padding, self.return_mask,
                        self.ceil_mode, self.data_format)

    def extra_repr(self):
        return f"kernel_size={self.ksize}, stride={self.stride}, padding={self.padding}"


class MaxPool1D(_MaxPool):
    """1-D max pooling layer over ``[N, C, L]`` (see :func:`~paddle_hl.nn.functional.max_pool1d`).

    Args:
        kernel_size (int|list): the window length.
        stride (int|list, optional): the step (default: kernel_size).
        padding (int|str|list): an int, 'same'/'valid', ``[p]`` or ``[lo, hi]``.
        return_mask (bool): also return the int32 index of each maximum.
        ceil_mode (bool): round the output length up.
        name (str, optional): unused.

    Example:
        >>> paddle.nn.MaxPool1D(2)(paddle.ones([1, 3, 8])).shape
        [1, 3, 4]
    """

    def __init__(self, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False,
                 name=None):
        Layer.__init__(self)
        # Paddle's attribute names for the 1-D pool (no ksize / data_format)
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.return_mask = return_mask
        self.name = name

    def forward(self, x):
        return F.max_pool1d(x, self.kernel_size, self.stride, self.padding, self.return_mask,
                            self.ceil_mode)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxPool2D(_MaxPool):
    """2-D max pooling layer (see :func:`~paddle_hl.nn.functional.max_pool2d`).

    Args:
        kernel_size (int|list): ``k`` or ``[kh, kw]``.
        stride (int|list, optional): the step (default: kernel_size).
        padding (int|str|list): the padding (see max_pool2d).
        return_mask (bool): also return the int32 flat index of each maximum.
        ceil_mode (bool): round the output size up.
        data_format (str): 'NCHW' or 'NHWC'.
        name (str, optional): unused.

    Example:
        >>> paddle.nn.MaxPool2D(3, 2, 1)(paddle.ones([1, 64, 112, 112])).shape
        [1, 64, 56, 56]
    """

    _fn = staticmethod(F.max_pool2d)
    _fmt = "NCHW"

    def __init__(self, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False,
                 data_format="NCHW", name=None):
        super().__init__(kernel_size, stride, padding, return_mask, ceil_mode, data_format,
                         name)


class MaxPool3D(_MaxPool):
    """3-D max pooling layer (see :func:`~paddle_hl.nn.functional.max_pool3d`).

    Args:
        kernel_size (int|list): ``k`` or ``[kd, kh, kw]``.
        stride (int|list, optional): the step (default: kernel_size).
        padding (int|str|list): the padding (see max_pool3d).
        return_mask (bool): also return the int32 flat index of each maximum.
        ceil_mode (bool): round the output size up.
        data_format (str): 'NCDHW' or 'NDHWC'.
        name (str, optional): unused.
    """

    _fn = staticmethod(F.max_pool3d)
    _fmt = "NCDHW"

    def __init__(self, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False,
                 data_format="NCDHW", name=None):
        super().__init__(kernel_size, stride, padding, return_mask, ceil_mode, data_format,
                         name)


class _AvgPool(Layer):
    _fn = staticmethod(F.avg_pool2d)
    _fmt = "NCHW"

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True,
                 divisor_override=None, data_format=None, name=None):
        super().__init__()
        self.ksize = kernel_size
        self.stride = stride
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.exclusive = exclusive
        self.divisor = divisor_override
        self.data_format = data_format or self._fmt
        self.name = name

    def forward(self, x):
        return self._fn(x, self.ksize, self.stride, self.padding, self.ceil_mode,
                        self.exclusive, self.divisor, self.data_format)

    def extra_repr(self):
        return f"kernel_size={self.ksize}, stride={self.stride}, padding={self.padding}"


class AvgPool1D(_AvgPool):
    """1-D average pooling layer over ``[N, C, L]`` (see
    :func:`~paddle_hl.nn.functional.avg_pool1d`).

    Args:
        kernel_size (int|list): the window length.
        stride (int|list, optional): the step (default: kernel_size).
        padding (int|str|list): an int, 'same'/'valid', ``[p]`` or ``[lo, hi]``.
        exclusive (bool): leave padding out of the divisor.
        ceil_mode (bool): round the output length up.
        name (str, optional): unused.
    """

    def __init__(self, kernel_size, stride=None, padding=0, exclusive=True, ceil_mode=False,
                 name=None):
        Layer.__init__(self)
        # Paddle's attribute names for the 1-D pool (no ksize / divisor / data_format)
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.exclusive = exclusive
        self.name = name

    def forward(self, x):
        return F.avg_pool1d(x, self.kernel_size, self.stride, self.padding, self.exclusive,
                            self.ceil_mode)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2D(_AvgPool):
    """2-D average pooling layer (see :func:`~paddle_hl.nn.functional.avg_pool2d`).

    Args:
        kernel_size (int|list): ``k`` or ``[kh, kw]``.
        stride (int|list, optional): the step (default: kernel_size).
        padding (int|str|list): the padding (see avg_pool2d).
        ceil_mode (bool): round the output size up.
        exclusive (bool): leave padding out of the divisor.
        divisor_override (int, optional): see avg_pool2d.
        data_format (str): 'NCHW' or 'NHWC'.
        name (str, optional): unused.

    Example:
        >>> paddle.nn.AvgPool2D(2)(paddle.ones([1, 3, 8, 8])).shape
        [1, 3, 4, 4]
    """

    _fn = staticmethod(F.avg_pool2d)
    _fmt = "NCHW"

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True,
                 divisor_override=None, data_format="NCHW", name=None):
        super().__init__(kernel_size, stride, padding, ceil_mode, exclusive, divisor_override,
                         data_format, name)


class AvgPool3D(_AvgPool):
    """3-D average pooling layer (see :func:`~paddle_hl.nn.functional.avg_pool3d`).

    Args:
        kernel_size (int|list): ``k`` or ``[kd, kh, kw]``.
        stride (int|list, optional): the step (default: kernel_size).
        padding (int|str|list): the padding (see avg_pool3d).
        ceil_mode (bool): round the output size up.
        exclusive (bool): leave padding out of the divisor.
        divisor_override (int, optional): see avg_pool3d.
        data_format (str): 'NCDHW' or 'NDHWC'.
        name (str, optional): unused.
    """

    _fn = staticmethod(F.avg_pool3d)
    _fmt = "NCDHW"

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True,
                 divisor_override=None, data_format="NCDHW", name=None):
        super().__init__(kernel_size, stride, padding, ceil_mode, exclusive, divisor_override,
                         data_format, name)


class _AdaptiveAvgPool(Layer):
    _fn = staticmethod(F.adaptive_avg_pool2d)
    _fmt = "NCHW"

    def __init__(self, output_size, data_format=None, name=None):
        super().__init__()
        self._output_size = output_size
        self._data_format = data_format or self._fmt
        self._name = name

    def forward(self, x):
        return self._fn(x, self._output_size, self._data_format)

    def extra_repr(self):
        return f"output_size={self._output_size}"


class AdaptiveAvgPool1D(_AdaptiveAvgPool):
    """Adaptive average pooling over ``[N, C, L]`` to ``output_size``.

    Args:
        output_size (int): the output length.
        name (str, optional): unused.
    """

    def __init__(self, output_size, name=None):
        Layer.__init__(self)
        self.output_size = output_size  # public in Paddle's 1-D adaptive pools
        self.name = name

    def forward(self, x):
        return F.adaptive_avg_pool1d(x, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool2D(_AdaptiveAvgPool):
    """Adaptive average pooling to ``output_size`` (``1`` is global average pooling).

    Args:
        output_size (int|list): ``s`` or ``[oh, ow]``; None keeps that dim.
        data_format (str): 'NCHW' or 'NHWC'.
        name (str, optional): unused.

    Example:
        >>> paddle.nn.AdaptiveAvgPool2D(1)(paddle.ones([2, 512, 7, 7])).shape
        [2, 512, 1, 1]
    """

    _fn = staticmethod(F.adaptive_avg_pool2d)
    _fmt = "NCHW"

    def __init__(self, output_size, data_format="NCHW", name=None):
        super().__init__(output_size, data_format, name)


class AdaptiveAvgPool3D(_AdaptiveAvgPool):
    """Adaptive average pooling over ``[N, C, D, H, W]`` to ``output_size``.

    Args:
        output_size (int|list): ``s`` or ``[od, oh, ow]``; None keeps that dim.
        data_format (str): 'NCDHW' or 'NDHWC'.
        name (str, optional): unused.
    """

    _fn = staticmethod(F.adaptive_avg_pool3d)
    _fmt = "NCDHW"

    def __init__(self, output_size, data_format="NCDHW", name=None):
        super().__init__(output_size, data_format, name)


class _AdaptiveMaxPool(Layer):
    _fn = staticmethod(F.adaptive_max_pool2d)

    def __init__(self, output_size, return_mask=False, name=None):
        super().__init__()
        self._output_size = output_size
        self._return_mask = return_mask
        self._name = name

    def forward(self, x):
        return self._fn(x, self._output_size, self._return_mask)

    def extra_repr(self):
        return f"output_size={self._output_size}, return_mask={self._return_mask}"


class AdaptiveMaxPool1D(_AdaptiveMaxPool):
    """Adaptive max pooling over ``[N, C, L]`` to ``output_size``.

    Args:
        output_size (int): the output length.
        return_mask (bool): also return the int32 index of each maximum.
        name (str, optional): unused.
    """

    def __init__(self, output_size, return_mask=False, name=None):
        Layer.__init__(self)
        self.output_size = output_size  # public in Paddle's 1-D adaptive pools
        self.return_mask = return_mask
        self.name = name

    def forward(self, x):
        return F.adaptive_max_pool1d(x, self.output_size, self.return_mask)

    def extra_repr(self):
        return f"output_size={self.output_size}, return_mask={self.return_mask}"


class AdaptiveMaxPool2D(_AdaptiveMaxPool):
    """Adaptive max pooling over ``[N, C, H, W]`` to ``output_size``.

    Args:
        output_size (int|list): ``s`` or ``[oh, ow]``; None keeps that dim.
        return_mask (bool): also return the int32 flat index of each maximum.
        name (str, optional): unused.
    """

    _fn = staticmethod(F.adaptive_max_pool2d)


class AdaptiveMaxPool3D(_AdaptiveMaxPool):
    """Adaptive max pooling over ``[N, C, D, H, W]`` to ``output_size``.

    Args:
        output_size (int|list): ``s`` or ``[od, oh, ow]``; None keeps that dim.
        return_mask (bool): also return the int32 flat index of each maximum.
        name (str, optional): unused.
    """

    _fn = staticmethod(F.adaptive_max_pool3d)


class _MaxUnPool(Layer):
    _fn = staticmethod(F.max_unpool2d)

    def __init__(self, kernel_size, stride=None, padding=0, data_format="NCHW",
                 output_size=None, name=None):
        super().__init__()
        self.ksize = kernel_size
        self.stride = stride
        self.padding = padding
        self.data_format = data_format
        self.output_size = output_size
        self.name = name

    def forward(self, x, indices):
        return self._fn(x, indices, self.ksize, self.stride, self.padding, self.data_format,
                        self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class MaxUnPool1D(_MaxUnPool):
    """Partial inverse of MaxPool1D (see :func:`~paddle_hl.nn.functional.max_unpool1d`).

    Args:
        kernel_size (int|list): the pool's window.
        stride (int|list, optional): the pool's step (default: kernel_size).
        padding (int|list): the pool's padding.
        data_format (str): 'NCL'.
        output_size (list, optional): the exact output length.
        name (str, optional): unused.

    ``forward(x, indices)`` takes the pooled values and the pool's mask.
    """

    _fn = staticmethod(F.max_unpool1d)

    def __init__(self, kernel_size, stride=None, padding=0, data_format="NCL",
                 output_size=None, name=None):
        super().__init__(kernel_size, stride, padding, data_format, output_size, name)


class MaxUnPool2D(_MaxUnPool):
    """Partial inverse of MaxPool2D (see :func:`~paddle_hl.nn.functional.max_unpool2d`).

    Args:
        kernel_size (int|list): the pool's window.
        stride (int|list, optional): the pool's step (default: kernel_size).
        padding (int|list): the pool's padding.
        data_format (str): 'NCHW'.
        output_size (list, optional): the exact output size.
        name (str, optional): unused.

    ``forward(x, indices)`` takes the pooled values and the pool's mask.
    """

    _fn = staticmethod(F.max_unpool2d)


class MaxUnPool3D(_MaxUnPool):
    """Partial inverse of MaxPool3D (see :func:`~paddle_hl.nn.functional.max_unpool3d`).

    Args:
        kernel_size (int|list): the pool's window.
        stride (int|list, optional): the pool's step (default: kernel_size).
        padding (int|list): the pool's padding.
        data_format (str): 'NCDHW'.
        output_size (list, optional): the exact output size.
        name (str, optional): unused.

    ``forward(x, indices)`` takes the pooled values and the pool's mask.
    """

    _fn = staticmethod(F.max_unpool3d)

    def __init__(self, kernel_size, stride=None, padding=0, data_format="NCDHW",
                 output_size=None, name=None):
        super().__init__(kernel_size, stride, padding, data_format, output_size, name)
