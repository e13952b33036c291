"""``paddle.utils.unique_name``: the names layers and parameters get (``linear_0``, ``fc_1``).

``guard`` gives a block its own counters, so models built inside it get the same names every
time (what Paddle's model code uses to build a second copy of a network with matching
parameter names).
"""

from __future__ import annotations

import contextlib

from ..framework import parameter as _param

__all__ = ["generate", "generate_with_ignorable_key", "guard", "switch"]


def generate(key: str) -> str:
    """A new name ``key_N``: N counts from 0 for each key.

    Examples:
        >>> import paddle_hl as paddle
        >>> with paddle.utils.unique_name.guard():
        ...     paddle.utils.unique_name.generate('fc')
        'fc_0'
    """
    if not isinstance(key, str):
        raise TypeError(f"unique_name.generate: key must be a str, got {type(key).__name__}")
    return _param.unique_name(key)


def generate_with_ignorable_key(key: str) -> str:
    """As :func:`generate` (Paddle marks such names as safe to drop when saving)."""
    return generate(key)


def switch(new_generator=None, new_para_name_checker=None):
    """Make ``new_generator`` (a fresh one when None) the current generator.

    Returns:
        tuple: ``(previous_generator, previous_name_checker)``, as Paddle returns them:
        ``switch(*old)`` restores them. (paddle_hl keeps no separate parameter-name checker;
        its slot is None.)
    """
    old = _param.name_generator[0]
    if new_generator is None:
        new_generator = _param.NameGenerator()
    elif not isinstance(new_generator, _param.NameGenerator):
        raise TypeError("unique_name.switch: new_generator must be a generator returned by "
                        f"switch(), got {type(new_generator).__name__}")
    _param.name_generator[0] = new_generator
    return old, None


@contextlib.contextmanager
def guard(new_generator=None):
    """Use fresh name counters inside the block (``new_generator`` may be a str prefix added
    to every name, or a generator from :func:`switch`); the previous ones come back after."""
    if isinstance(new_generator, str):
        new_generator = _param.NameGenerator(new_generator)
    elif isinstance(new_generator, bytes):
        new_generator = _param.NameGenerator(new_generator.decode())
    old = switch(new_generator)
    try:
        yield
    finally:
        switch(*old)
