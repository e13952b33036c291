"""A minimal MATLAB 5 (and v7, compressed) MAT-file reader, so that datasets need no SciPy.

It reads the variables that label files hold: numeric arrays (double, single, the integer
classes; real or complex), logical arrays (as uint8) and char arrays. Cells, structs, objects
and sparse matrices raise a clear error. Arrays come back with MATLAB's shape (at least 2-D,
column-major data reordered) and the dtype of their MATLAB class, as ``scipy.io.loadmat``
returns them.
"""

from __future__ import annotations

import os
import struct
import zlib

__all__ = []
import numpy as np

# data types of the element tags (MAT-file format, table 1-1)
_MI_INT8, _MI_UINT8, _MI_INT16, _MI_UINT16, _MI_INT32, _MI_UINT32 = 1, 2, 3, 4, 5, 6
_MI_SINGLE, _MI_DOUBLE, _MI_INT64, _MI_UINT64 = 7, 9, 12, 13
_MI_MATRIX, _MI_COMPRESSED, _MI_UTF8, _MI_UTF16, _MI_UTF32 = 14, 15, 16, 17, 18

_MI_DTYPES = {
    _MI_INT8: "i1", _MI_UINT8: "u1", _MI_INT16: "i2", _MI_UINT16: "u2", _MI_INT32: "i4",
    _MI_UINT32: "u4", _MI_SINGLE: "f4", _MI_DOUBLE: "f8", _MI_INT64: "i8", _MI_UINT64: "u8",
    _MI_UTF8: "u1", _MI_UTF16: "u2", _MI_UTF32: "u4",
}

# array classes (table 1-3) -> dtype of the returned array
_MX_CHAR = 4
_MX_NUMERIC = {6: "f8", 7: "f4", 8: "i1", 9: "u1", 10: "i2", 11: "u2", 12: "i4", 13: "u4",
               14: "i8", 15: "u8"}
_MX_NAMES = {1: "cell", 2: "struct", 3: "object", 4: "char", 5: "sparse", 16: "function"}

_FLAG_COMPLEX = 0x0800


def loadmat(file) -> dict:
    """Read the variables of a MAT-file (level 5 / v6 / v7).

    Args:
        file (str | os.PathLike | file-like): The MAT-file.

    Returns:
        dict[str, numpy.ndarray]: Variable name -> array.

    Raises:
        ValueError: The file is not a level-5 MAT-file, is damaged, or holds a variable of an
            unsupported class (cell, struct, object, sparse).
    """
    if hasattr(file, "read"):
        buf = file.read()
        where = getattr(file, "name", "<file object>")
    else:
        where = os.fspath(file)
        with open(where, "rb") as f:
            buf = f.read()
    if len(buf) < 128 or buf[124:128][2:] not in (b"IM", b"MI"):
        raise ValueError(f"loadmat: {where!r} is not a MATLAB 5.0 (or v7) MAT-file; MATLAB v4 "
                         "and v7.3 (HDF5) files are not supported")
    order = "<" if buf[126:128] == b"IM" else ">"
    out: dict[str, np.ndarray] = {}
    try:
        _read_elements(buf, 128, order, out)
    except (struct.error, zlib.error, IndexError) as e:
        raise ValueError(f"loadmat: {where!r} is damaged or truncated ({e})") from None
    return out


def _read_elements(buf, pos, order, out):
    while pos + 8 <= len(buf):
        mtype, payload, pos = _read_tag(buf, pos, order)
        if mtype == _MI_COMPRESSED:
            inner = zlib.decompress(payload)
            _read_elements(inner, 0, order, out)
        elif mtype == _MI_MATRIX:
            name, arr = _read_matrix(payload, order)
            out[name] = arr


def _read_tag(buf, pos, order):
    """(type, payload bytes, position of the next element) of the element at ``pos``."""
    (first,) = struct.unpack_from(order + "I", buf, pos)
    if first >> 16:
        # small data element: 2-byte size, 2-byte type and up to 4 bytes of data in 8 bytes
        nbytes, mtype = first >> 16, first & 0xFFFF
        return mtype, buf[pos + 4:pos + 4 + nbytes], pos + 8
    mtype = first
    (nbytes,) = struct.unpack_from(order + "I", buf, pos + 4)
    end = pos + 8 + nbytes
    if end > len(buf):
        raise IndexError(f"element of {nbytes} bytes at offset {pos} runs past the end")
    payload = buf[pos + 8:end]
    if mtype != _MI_COMPRESSED:
        end += -end % 8  # elements are padded to 8 bytes (compressed ones are not)
    return mtype, payload, end


def _numbers(mtype, payload, order):
    code = _MI_DTYPES.get(mtype)
    if code is None:
        raise ValueError(f"loadmat: unexpected data type {mtype} in a numeric array")
    return np.frombuffer(payload, dtype=np.dtype(code).newbyteorder(order))


def _read_matrix(payload, order):
    if not payload:
        return "", np.empty((0, 0))
    _, flags_raw, pos = _read_tag(payload, 0, order)
    flags = struct.unpack_from(order + "I", flags_raw, 0)[0]
    cls = flags & 0xFF
    mtype, dims_raw, pos = _read_tag(payload, pos, order)
    dims = tuple(int(d) for d in _numbers(mtype, dims_raw, order))
    _, name_raw, pos = _read_tag(payload, pos, order)
    name = bytes(name_raw).decode("ascii", "replace")
    if cls == _MX_CHAR:
        mtype, data, pos = _read_tag(payload, pos, order)
        if mtype == _MI_UTF8:
            codes = np.frombuffer(bytes(data).decode("utf-8").encode("utf-32-le"), "<u4")
        else:
            codes = _numbers(mtype, data, order).astype(np.uint32)
        chars = codes.reshape(dims, order="F")
        if chars.ndim == 2 and chars.shape[1] > 0:
            # each row of a 2-D char array is one string, as scipy returns it
            rows = np.ascontiguousarray(chars).astype("<u4").view(f"<U{chars.shape[1]}")
            return name, rows.reshape(chars.shape[0])
        return name, chars.astype("<u4").view("<U1")
    if cls not in _MX_NUMERIC:
        kind = _MX_NAMES.get(cls, f"class {cls}")
        raise ValueError(f"loadmat: variable {name!r} is a MATLAB {kind} array; this reader "
                         "supports numeric, logical and char arrays only")
    mtype, data, pos = _read_tag(payload, pos, order)
    arr = _numbers(mtype, data, order).astype(_MX_NUMERIC[cls])
    if flags & _FLAG_COMPLEX:
        mtype, data, pos = _read_tag(payload, pos, order)
        imag = _numbers(mtype, data, order).astype(_MX_NUMERIC[cls])
        arr = arr + 1j * imag
    if arr.size != int(np.prod(dims)):
        raise ValueError(f"loadmat: variable {name!r} declares shape {dims} but holds "
                         f"{arr.size} values")
    # logical arrays keep their uint8 storage, as scipy.io.loadmat returns them
    return name, np.ascontiguousarray(arr.reshape(dims, order="F"))
