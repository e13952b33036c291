"""parameters_to_vector and vector_to_parameters: all parameters as one flat vector and back."""

from __future__ import annotations

from ...framework.tensor import Tensor
from ...tensor.manipulation import concat, reshape

__all__ = []


def _check_params(parameters, where):
    params = list(parameters)
    if not params:
        raise ValueError(f"{where}: parameters must not be empty")
    for p in params:
        if not isinstance(p, Tensor):
            raise TypeError(f"{where}: parameters must be Tensors, got {type(p).__name__}")
    dts = {p.dtype.name for p in params}
    if len(dts) > 1:
        raise ValueError(f"{where}: all parameters must have the same dtype, got "
                         f"{sorted(dts)}")
    return params


def parameters_to_vector(parameters, name=None):
    """Flatten and concatenate parameters into one 1-D Tensor (differentiable).

    Args:
        parameters (list[Tensor]): tensors of one dtype.
        name (str, optional): unused.

    Returns:
        Tensor: 1-D, with ``sum(p.size)`` elements.

    Example:
        >>> vec = paddle.nn.utils.parameters_to_vector(linear.parameters())
    """
    params = _check_params(parameters, "parameters_to_vector")
    return concat([reshape(p, [-1]) for p in params], axis=0)


def vector_to_parameters(vec, parameters, name=None):
    """Copy the consecutive pieces of a 1-D ``vec`` into ``parameters``, in place.

    Args:
        vec (Tensor): 1-D, with exactly ``sum(p.size)`` elements.
        parameters (list[Tensor]): the tensors to overwrite (their shapes and dtypes are kept).
        name (str, optional): unused.

    Returns:
        None
    """
    params = _check_params(parameters, "vector_to_parameters")
    if not isinstance(vec, Tensor):
        raise TypeError(f"vector_to_parameters: vec must be a Tensor, got "
                        f"{type(vec).__name__}")
    if vec.ndim != 1:
        raise ValueError(f"vector_to_parameters: vec must be 1-D, got shape {vec.shape}")
    sizes = [p.size for p in params]
    if sum(sizes) != vec.shape[0]:
        raise ValueError(f"vector_to_parameters: vec has {vec.shape[0]} elements but the "
                         f"parameters need {sum(sizes)} ({sizes})")
    arr = vec._data
    start = 0
    for p, n in zip(params, sizes):
        piece = arr[start:start + n].reshape(p._data.shape)
        p._data[...] = piece.astype(p._data.dtype, copy=False)
        p._ver.v += 1
        start += n
    return None
