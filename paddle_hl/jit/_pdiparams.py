"""Paddle's combined parameter file (``.pdiparams``): one serialized LoDTensor per variable,
in sorted variable-name order, as Paddle's ``save_combine`` writes them.

Per tensor: uint32 LoD version (0), uint64 LoD level count (0 here), uint32 tensor version (0),
int32 size of the TensorDesc protobuf, the TensorDesc (field 1: data type enum, field 2: each
dim), then the raw little-endian data.
"""

from __future__ import annotations

import struct

import ml_dtypes
import numpy as np

__all__ = []

_CODES = {np.dtype(np.bool_): 0, np.dtype(np.int16): 1, np.dtype(np.int32): 2,
          np.dtype(np.int64): 3, np.dtype(np.float16): 4, np.dtype(np.float32): 5,
          np.dtype(np.float64): 6, np.dtype(np.uint8): 20, np.dtype(np.int8): 21,
          np.dtype(ml_dtypes.bfloat16): 22, np.dtype(np.complex64): 23,
          np.dtype(np.complex128): 24}
_DTYPES = {v: k for k, v in _CODES.items()}


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # protobuf encodes negative int64 as 10-byte two's complement
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _read_varint(buf, pos):
    shift = result = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
    if result >= 1 << 63:
        result -= 1 << 64
    return result, pos


def tensor_bytes(arr: np.ndarray) -> bytes:
    """One tensor in Paddle's LoDTensor stream layout."""
    arr = np.ascontiguousarray(arr)
    code = _CODES.get(arr.dtype)
    if code is None:
        raise TypeError(f"jit.save: dtype {arr.dtype} has no Paddle tensor type")
    desc = b"\x08" + _varint(code) + b"".join(b"\x10" + _varint(int(d)) for d in arr.shape)
    head = struct.pack("<IQI", 0, 0, 0) + struct.pack("<i", len(desc)) + desc
    return head + arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()


def write(f, named: dict) -> list:
    """Write ``{var_name: array}`` to the binary file ``f`` in sorted name order; returns the
    order."""
    names = sorted(named)
    for n in names:
        f.write(tensor_bytes(named[n]))
    return names


def read(path: str, names: list) -> dict:
    """Read a combined file whose variables are ``names`` (in file order).

    A file that ends early is named with the byte it stops at and what was being read there
    (the header of a variable, or the data of a tensor of a given shape and dtype).
    """
    with open(path, "rb") as f:
        buf = f.read()
    size = len(buf)
    out = {}

    def need(pos, n, what):
        if pos + n > size:
            raise ValueError(f"jit.load: {path} is truncated at byte {size}: {what} needs bytes "
                             f"{pos} to {pos + n} (an interrupted copy, or a full disk when it "
                             "was written)")

    pos = 0
    for n in names:
        where = f"the header of variable '{n}'"
        need(pos, 12, where)
        _, lod_levels = struct.unpack_from("<IQ", buf, pos)
        pos += 12
        if lod_levels > size:
            raise ValueError(f"jit.load: {path}: variable '{n}' declares {lod_levels} LoD "
                             "levels; the file is not a Paddle parameters file or is corrupt")
        for _ in range(lod_levels):
            need(pos, 8, where)
            (lsize,) = struct.unpack_from("<Q", buf, pos)
            need(pos + 8, lsize, where)
            pos += 8 + lsize
        need(pos, 8, where)
        _, dsize = struct.unpack_from("<Ii", buf, pos)
        pos += 8
        if dsize < 0:
            raise ValueError(f"jit.load: {path}: variable '{n}' has a TensorDesc of {dsize} "
                             "bytes; the file is not a Paddle parameters file or is corrupt")
        need(pos, dsize, f"the TensorDesc of variable '{n}'")
        desc_end = pos + dsize
        code, dims = None, []
        try:
            while pos < desc_end:
                key = buf[pos]
                pos += 1
                val, pos = _read_varint(buf, pos)
                if key == 0x08:
                    code = val
                elif key == 0x10:
                    dims.append(val)
                elif key == 0x12:  # packed dims: val is the byte length of the packed run
                    end = pos + val
                    while pos < end:
                        d, pos = _read_varint(buf, pos)
                        dims.append(d)
                else:
                    raise ValueError(f"jit.load: unexpected TensorDesc field {key:#x} for "
                                     f"'{n}' in {path}")
        except IndexError:
            raise ValueError(f"jit.load: {path}: the TensorDesc of variable '{n}' runs past "
                             "its declared size; the file is corrupt") from None
        dt = _DTYPES.get(code)
        if dt is None:
            raise ValueError(f"jit.load: unknown Paddle data type {code} for '{n}' in {path}")
        if any(d < 0 for d in dims):
            raise ValueError(f"jit.load: {path}: variable '{n}' has the shape {dims}")
        count = int(np.prod(dims, dtype=object)) if dims else 1
        nbytes = count * dt.itemsize
        if pos + nbytes > size:
            raise ValueError(f"jit.load: {path} is truncated at byte {size}: expected {nbytes} "
                             f"bytes for tensor '{n}' of shape {dims} dtype {dt.name} from byte "
                             f"{pos}, the file has {size - pos}")
        out[n] = np.frombuffer(buf, dtype=dt.newbyteorder("<"), count=count,
                               offset=pos).astype(dt).reshape(dims)
        pos += nbytes
    if pos != size:
        raise ValueError(f"jit.load: {path} has {size - pos} bytes after the last variable")
    return out
