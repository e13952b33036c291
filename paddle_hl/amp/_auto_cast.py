"""``auto_cast`` and the device capability checks."""

from __future__ import annotations

import functools
import warnings

import numpy as np

from .. import backend
from ..framework import dtype as _dt
from ..framework import place as _pl
from . import _hook

__all__ = []

_LEVELS = ("O0", "OD", "O1", "O2")


def _dtype_name(dtype, where) -> str:
    if isinstance(dtype, str):
        name = dtype.lower()
    else:
        try:
            name = _dt.convert(dtype, where).name
        except (TypeError, ValueError):
            name = repr(dtype)
    if name not in ("float16", "bfloat16"):
        raise ValueError(f"If enable amp, dtype should be 'float16' or 'bfloat16'. "
                         f"({where} got dtype={dtype!r})")
    return name


def _op_names(ops, arg):
    if ops is None:
        return frozenset()
    if isinstance(ops, str):
        return frozenset({ops})
    try:
        names = frozenset(ops)
    except TypeError:
        raise TypeError(f"auto_cast: {arg} must be a set/list/tuple of op names, got "
                        f"{type(ops).__name__}") from None
    bad = [n for n in names if not isinstance(n, str)]
    if bad:
        raise TypeError(f"auto_cast: {arg} must contain op names (str), got {bad!r}")
    return names


class _AutoCast:
    """The context manager (and decorator) returned by :func:`auto_cast`."""

    def __init__(self, enable, custom_white_list, custom_black_list, level, dtype, use_promote):
        if not isinstance(level, str) or level.upper() not in _LEVELS:
            raise ValueError(f"level should be O0, OD, O1 or O2. (auto_cast got level={level!r})")
        level = level.upper()
        dtype = _dtype_name(dtype, "auto_cast")
        white = _op_names(custom_white_list, "custom_white_list")
        black = _op_names(custom_black_list, "custom_black_list")
        overlap = white & black
        if overlap:
            raise ValueError(f"Custom white list overlap custom black list: {sorted(overlap)}")
        self._args = (enable, custom_white_list, custom_black_list, level, dtype, use_promote)
        self._dtype = dtype
        enable = bool(enable) and level != "O0"
        if enable and dtype == "bfloat16" and _pl.current_place().kind == "gpu" and \
                not is_bfloat16_supported():
            warnings.warn("For bfloat16, amp only supports NVIDIA GPUs with Compute Capability "
                          "8.0 or higher; auto_cast makes no effect on this GPU.", stacklevel=3)
            enable = False
        self._cfg = _hook.Config(level, dtype, white, black, bool(use_promote)) if enable \
            else None

    def __enter__(self):
        tls = _hook._tls
        self._prev = tls.cfg
        # Paddle keeps the dtype of the last auto_cast entered (GradScaler consults it)
        _hook.last_dtype[0] = self._dtype
        tls.cfg = self._cfg
        self._quiet = None
        if self._cfg is not None:
            _hook.retain()
            # Low precision overflows by design (GradScaler detects and reports it): NumPy's
            # overflow / invalid-value warnings from the casts and matmuls inside the block
            # would only repeat that, so they are off here, as in Paddle
            self._quiet = np.errstate(over="ignore", invalid="ignore")
            self._quiet.__enter__()
        return self

    def __exit__(self, *exc):
        _hook._tls.cfg = self._prev
        if self._cfg is not None:
            _hook.release()
        if self._quiet is not None:
            self._quiet.__exit__(*exc)
        return False

    def __call__(self, func):
        args = self._args

        @functools.wraps(func)
        def wrapper(*a, **kw):
            with _AutoCast(*args):
                return func(*a, **kw)

        return wrapper


def auto_cast(enable=True, custom_white_list=None, custom_black_list=None, level="O1",
              dtype="float16", use_promote=True):
    """Run the ops of a block in mixed precision (``with paddle.amp.auto_cast():``).

    Ops of the white list (matmul, conv2d, einsum, ...) run in ``dtype``; ops of the black list
    (exp/log, softmax, reductions, losses, layer/group norm, ...) run in float32; any other op
    runs in float32 when one of its floating inputs is float32 and in ``dtype`` otherwise
    (promotion). O2 runs every op outside the black list in low precision (with
    ``use_promote=False`` even ops fed float32 inputs); OD runs only the white list in low
    precision. Inputs are cast with differentiable casts, so gradients come back in the dtype of
    each input. The setting is per thread; blocks nest (the innermost wins). On the CPU the low-
    precision ops run in NumPy float16/bfloat16 (for correctness, not speed).

    Args:
        enable (bool): turn AMP on. Default True.
        custom_white_list (set|list, optional): op names (Paddle's, e.g. ``'elementwise_add'``,
            or paddle_hl's, e.g. ``'add'``) to run in low precision.
        custom_black_list (set|list, optional): op names to keep in float32.
        level (str): 'O0' (off), 'OD', 'O1' or 'O2'. Default 'O1'.
        dtype (str): 'float16' or 'bfloat16'. Default 'float16'.
        use_promote (bool): in O2, keep an op in float32 when one input is float32.

    Returns:
        A context manager, also usable as a decorator.

    Example:
        >>> conv = paddle.nn.Conv2D(3, 2, 3, bias_attr=False)
        >>> with paddle.amp.auto_cast():
        ...     y = conv(paddle.rand([1, 3, 8, 8]))   # y.dtype == paddle.float16
    """
    return _AutoCast(enable, custom_white_list, custom_black_list, level, dtype, use_promote)


def _device_kind(device, where):
    if device is None:
        return _pl.current_place()
    if isinstance(device, _pl.Place):
        return device
    if isinstance(device, str):
        s = device.strip().lower()
        if s == "cpu":
            return _pl.CPUPlace()
        if s.startswith(("gpu", "cuda")):
            if not backend.gpu_available():
                raise ValueError(f"{where}: The device should not be {device}, since paddle_hl "
                                 f"has no GPU backend here ({backend.gpu_error()})")
            return _pl.parse_place(device)
    raise ValueError(f"{where}: Paddle supports CPUPlace, CUDAPlace and CUDAPinnedPlace, but "
                     f"received {device!r}")


def _capability(place):
    return backend.gpu_backend().compute_capability(place.index)


def is_float16_supported(device=None) -> bool:
    """Whether auto_cast can run float16 ops on ``device`` (None: the current device).

    On the CPU paddle_hl runs float16 in NumPy, so this is True (real Paddle's CPU build ignores
    AMP and says False); an NVIDIA GPU needs compute capability 5.3 or higher.

    Args:
        device (str|Place, optional): 'cpu', 'gpu', 'gpu:N' or a Place.

    Returns:
        bool
    """
    place = _device_kind(device, "is_float16_supported")
    if place.kind != "gpu":
        return True
    return _capability(place) >= (5, 3)


def is_bfloat16_supported(device=None) -> bool:
    """Whether auto_cast can run bfloat16 ops on ``device`` (None: the current device).

    True on the CPU (NumPy with ml_dtypes' bfloat16); an NVIDIA GPU needs compute capability
    8.0 or higher.

    Args:
        device (str|Place, optional): 'cpu', 'gpu', 'gpu:N' or a Place.

    Returns:
        bool
    """
    place = _device_kind(device, "is_bfloat16_supported")
    if place.kind != "gpu":
        return True
    return _capability(place) >= (8, 0)
