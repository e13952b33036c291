"""Small top-level utilities of Paddle 2.6: batch, check_shape, LazyGuard, static-mode switches."""

from __future__ import annotations

import warnings

from .tensor import Tensor

__all__ = []

_lazy_init = [False]


def batch(reader, batch_size, drop_last=False):
    """Wrap a sample reader (a callable returning an iterable) into a batch reader.

    Args:
        reader (callable): returns an iterator over samples.
        batch_size (int): samples per batch, > 0.
        drop_last (bool): drop the last batch when it is smaller than batch_size.

    Returns:
        callable: a reader yielding lists of ``batch_size`` samples.
    """
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
        raise ValueError(f"batch: batch_size should be a positive integer, got {batch_size!r}")
    if not callable(reader):
        raise TypeError(f"batch: reader must be callable, got {type(reader).__name__}")

    def batch_reader():
        b = []
        for sample in reader():
            b.append(sample)
            if len(b) == batch_size:
                yield b
                b = []
        if b and not drop_last:
            yield b

    return batch_reader


def check_shape(shape, op_name, expected_shape_type=(list, tuple, Tensor),
                expected_element_type=(int, Tensor), expected_tensor_dtype=("int32", "int64")):
    """Validate a ``shape`` argument the way Paddle's ops do; raises TypeError on a bad one."""
    if isinstance(shape, Tensor):
        if shape.dtype.name not in expected_tensor_dtype:
            raise TypeError(f"{op_name}: the dtype of 'shape' must be one of "
                            f"{list(expected_tensor_dtype)}, got {shape.dtype.name}")
        return
    if not isinstance(shape, tuple(t for t in expected_shape_type if isinstance(t, type))):
        raise TypeError(f"{op_name}: 'shape' must be one of {expected_shape_type}, got "
                        f"{type(shape).__name__}")
    for item in shape:
        if isinstance(item, Tensor):
            if item.dtype.name not in expected_tensor_dtype:
                raise TypeError(f"{op_name}: tensors in 'shape' must have dtype in "
                                f"{list(expected_tensor_dtype)}, got {item.dtype.name}")
        elif not isinstance(item, tuple(t for t in expected_element_type
                                         if isinstance(t, type))) or isinstance(item, bool):
            raise TypeError(f"{op_name}: elements of 'shape' must be ints or Tensors, got "
                            f"{item!r}")


class LazyGuard:
    """Context manager: layers built inside it create their parameters lazily.

    Parameter initialisation is deferred until first use (or ``layer.init``), which keeps
    building very large models cheap. paddle_hl's nn layers consult :func:`lazy_init_enabled`.
    """

    def __enter__(self):
        self._prev = _lazy_init[0]
        _lazy_init[0] = True
        return self

    def __exit__(self, *exc):
        _lazy_init[0] = self._prev
        return False


def lazy_init_enabled() -> bool:
    return _lazy_init[0]


def enable_static():
    """Paddle's switch to static-graph mode. paddle_hl executes eagerly only, so this warns and
    leaves execution eager (high-level code written for both modes keeps working)."""
    warnings.warn("paddle_hl runs in dynamic (eager) mode only; enable_static() has no effect",
                  UserWarning, stacklevel=2)


def disable_static(place=None):
    """Switch to dynamic mode (already the only mode); sets the device when ``place`` is given."""
    if place is not None:
        from .place import parse_place, set_device

        p = parse_place(place)
        set_device("cpu" if p.kind == "cpu" else f"gpu:{p.index}")


def in_dynamic_mode() -> bool:
    """Always True: paddle_hl executes eagerly."""
    return True


def disable_signal_handler():
    """Paddle installs C++ signal handlers and lets users remove them; paddle_hl installs none,
    so there is nothing to remove."""
    return None
