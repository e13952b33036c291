"""Tensor arrays in dygraph: Paddle's ``create_array`` / ``array_write`` / ``array_read`` /
``array_length`` on a Python list of tensors (what they are in Paddle's dynamic mode)."""

from __future__ import annotations

from ..framework.tensor import Tensor

__all__ = []


def _index(i, where):
    if not isinstance(i, Tensor) or list(i.shape) != [1]:
        raise TypeError(f"{where}: i must be a Tensor of shape [1], got "
                        f"{list(i.shape) if isinstance(i, Tensor) else type(i).__name__}")
    if i._data.dtype.kind not in "iu":
        raise TypeError(f"{where}: i must be an integer tensor, got dtype {i._data.dtype}")
    return int(i._data.reshape(-1)[0])


def create_array(dtype, initialized_list=None):
    """A tensor array: a Python list of tensors, optionally holding ``initialized_list``.

    Args:
        dtype (str|paddle.dtype): the elements' dtype (kept for Paddle's signature).
        initialized_list (list, optional): tensors to start with (copied into a new list).

    Returns:
        list: the array.
    """
    items = list(initialized_list) if initialized_list is not None else []
    for v in items:
        if not isinstance(v, Tensor):
            raise TypeError("create_array: every value in initialized_list must be a Tensor, "
                            f"got {type(v).__name__}")
    return items


def array_write(x, i, array=None):
    """Write ``x`` at position ``i`` (a [1] int tensor) of ``array``; ``i`` may be its length,
    which appends. Returns the array (a new one when ``array`` is None)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"array_write: x must be a Tensor, got {type(x).__name__}")
    k = _index(i, "array_write")
    if array is None:
        array = create_array(x.dtype)
    if not 0 <= k <= len(array):
        raise IndexError(f"array_write: index {k} is beyond the array's length {len(array)}")
    if k < len(array):
        array[k] = x
    else:
        array.append(x)
    return array


def array_read(array, i):
    """The tensor at position ``i`` (a [1] int tensor) of ``array``."""
    return array[_index(i, "array_read")]


def array_length(array):
    """The number of tensors in ``array`` (a Python int, as in Paddle's dynamic mode)."""
    return len(array)
