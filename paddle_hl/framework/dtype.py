"""Paddle dtypes on top of NumPy dtypes (bfloat16 from ml_dtypes)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

__all__ = []


class DType:
    """A Paddle data type: prints as ``paddle.float32``, equals its name and NumPy dtype."""

    __slots__ = ("name", "np")

    def __init__(self, name: str, np_dtype):
        self.name = name
        self.np = np.dtype(np_dtype)

    def __repr__(self):
        return "paddle." + self.name

    __str__ = __repr__

    def __eq__(self, other):
        if isinstance(other, DType):
            return self.np == other.np
        try:
            return self.np == to_np(other)
        except (TypeError, ValueError):
            return False

    def __hash__(self):
        return hash(self.np)

    def __reduce__(self):
        return (_lookup_name, (self.name,))

    @property
    def itemsize(self):
        return self.np.itemsize

    @property
    def is_floating_point(self):
        return self.name in _FLOAT_NAMES

    @property
    def is_complex(self):
        return self.np.kind == "c"

    @property
    def is_integer(self):
        return self.np.kind in "iu"


bool_ = DType("bool", np.bool_)
uint8 = DType("uint8", np.uint8)
int8 = DType("int8", np.int8)
int16 = DType("int16", np.int16)
int32 = DType("int32", np.int32)
int64 = DType("int64", np.int64)
float16 = DType("float16", np.float16)
bfloat16 = DType("bfloat16", ml_dtypes.bfloat16)
float32 = DType("float32", np.float32)
float64 = DType("float64", np.float64)
complex64 = DType("complex64", np.complex64)
complex128 = DType("complex128", np.complex128)

ALL = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64,
       complex128)
_FLOAT_NAMES = {"float16", "bfloat16", "float32", "float64"}
_BY_NP = {d.np: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}
_BY_NAME.update({"bool_": bool_, "float": float32, "double": float64, "half": float16,
                 "int": int64, "long": int64, "uint16": bfloat16, "fp16": float16, "fp32": float32,
                 "fp64": float64, "bf16": bfloat16})

BFLOAT16_NP = bfloat16.np
LOW_FLOATS = (np.dtype(np.float16), BFLOAT16_NP)

_default = [float32]


def _lookup_name(name):
    return _BY_NAME[name]


def get_default_dtype() -> str:
    """Return the default floating dtype name, e.g. ``'float32'``."""
    return _default[0].name


def set_default_dtype(d) -> None:
    """Set the default floating dtype (float16, bfloat16, float32 or float64)."""
    dt = convert(d, "set_default_dtype")
    if dt.name not in _FLOAT_NAMES:
        raise TypeError(
            f"set_default_dtype only supports float16, bfloat16, float32 and float64, got {dt}")
    _default[0] = dt


def default() -> DType:
    return _default[0]


def default_np() -> np.dtype:
    return _default[0].np


def convert(d, where="dtype") -> DType:
    """Turn a DType, a dtype name, a NumPy dtype or a Python type into a DType."""
    if isinstance(d, DType):
        return d
    if isinstance(d, str):
        dt = _BY_NAME.get(d.replace("paddle.", ""))
        if dt is None:
            raise TypeError(f"{where}: unknown dtype {d!r}; expected one of "
                            f"{sorted(x.name for x in ALL)}")
        return dt
    if d is float:
        return _default[0]
    if d is int:
        return int64
    if d is bool:
        return bool_
    if d is complex:
        return complex64
    try:
        npd = np.dtype(d)
    except TypeError:
        raise TypeError(f"{where}: cannot interpret {d!r} as a dtype") from None
    dt = _BY_NP.get(npd)
    if dt is None:
        raise TypeError(f"{where}: dtype {npd} is not supported by paddle_hl")
    return dt


def to_np(d) -> np.dtype:
    """NumPy dtype of ``d`` (any form accepted by :func:`convert`)."""
    if isinstance(d, DType):
        return d.np
    return convert(d).np


def from_np(npd) -> DType:
    dt = _BY_NP.get(npd)
    if dt is None:
        dt = _BY_NP.get(np.dtype(npd))
        if dt is None:
            raise TypeError(f"dtype {npd} is not supported by paddle_hl")
    return dt


def is_float_np(npd) -> bool:
    return npd.kind == "f" or npd == BFLOAT16_NP


def is_inexact_np(npd) -> bool:
    return npd.kind in "fc" or npd == BFLOAT16_NP


class iinfo:
    """Machine limits of an integer dtype: ``min``, ``max``, ``bits``, ``dtype``."""

    def __init__(self, dtype):
        dt = convert(dtype, "iinfo")
        if not dt.is_integer and dt is not bool_:
            raise TypeError(f"iinfo: expected an integer dtype, got {dt}")
        info = np.iinfo(dt.np)
        self.min, self.max, self.bits, self.dtype = int(info.min), int(info.max), info.bits, dt.name

    def __repr__(self):
        return f"paddle.iinfo(min={self.min}, max={self.max}, bits={self.bits}, dtype={self.dtype})"


class finfo:
    """Machine limits of a floating dtype (Paddle's fields)."""

    def __init__(self, dtype):
        dt = convert(dtype, "finfo")
        if not (dt.is_floating_point or dt.is_complex):
            raise TypeError(f"finfo: expected a floating point dtype, got {dt}")
        info = ml_dtypes.finfo(dt.np) if dt is bfloat16 else np.finfo(dt.np)
        self.min = float(info.min)
        self.max = float(info.max)
        self.eps = float(info.eps)
        self.resolution = 10.0 ** -int(info.precision)
        self.smallest_normal = float(info.smallest_normal)
        self.tiny = self.smallest_normal
        self.bits = info.bits
        self.dtype = dt.name if not dt.is_complex else ("float32" if dt is complex64 else "float64")

    def __repr__(self):
        return (f"paddle.finfo(min={self.min}, max={self.max}, eps={self.eps}, "
                f"resolution={self.resolution}, smallest_normal={self.smallest_normal}, "
                f"tiny={self.tiny}, bits={self.bits}, dtype={self.dtype})")
