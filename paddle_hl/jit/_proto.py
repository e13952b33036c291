"""Paddle's ``.pdmodel``: the protobuf wire format of a ProgramDesc, read and written here.

A ``.pdmodel`` written by Paddle is one serialized ``ProgramDesc`` message (blocks of variables
and operators, each operator with typed attributes). This module reads and writes it with a
small codec for that one fixed schema instead of depending on the ``protobuf`` package:

- no new runtime dependency (paddle_hl installs with NumPy, ml_dtypes, Pillow, tqdm, requests
  and filelock only) and no generated code to keep in step with a protobuf release;
- decoding is plain data handling: varints, fixed-width numbers and length-delimited bytes turned
  into dicts, lists, ints, floats and strings. Nothing from the file is executed or imported;
- it can be strict where a general parser is lenient: a length that runs past its enclosing
  message or past the end of the file names the byte it stops at, the size of the file and the
  field being read; a known field with the wrong wire type is refused by name.

A decoded message is a dict holding only the fields present in the bytes (repeated fields as
lists, sub-messages as dicts); :func:`field` reads one with its schema default. :func:`encode`
writes fields in field-number order, unpacked repeated scalars, as Paddle's writer does, so a
decoded file re-encodes to the same bytes. Unknown fields are skipped on reading (they carry
their length), so files from a newer writer with extra fields still load.
"""

from __future__ import annotations

import struct

__all__ = []

# Field kinds: varint-coded ints (int32, int64, enum, bool), fixed-width floats (float is 32-bit,
# double 64-bit), strings (UTF-8) and sub-messages (a schema name).
_VARINT = {"int32", "int64", "enum", "bool"}

# message -> {field number: (name, kind, repeated)}; field numbers and enum values are those of
# Paddle 2.6's framework schema.
SCHEMA = {
    "ProgramDesc": {1: ("blocks", "BlockDesc", True), 4: ("version", "Version", False),
                    5: ("op_version_map", "OpVersionMap", False)},
    "Version": {1: ("version", "int64", False)},
    "OpVersionMap": {1: ("pair", "OpVersionPair", True)},
    "OpVersionPair": {1: ("op_name", "string", False), 2: ("op_version", "OpVersion", False)},
    "OpVersion": {1: ("version", "int32", False)},
    "BlockDesc": {1: ("idx", "int32", False), 2: ("parent_idx", "int32", False),
                  3: ("vars", "VarDesc", True), 4: ("ops", "OpDesc", True),
                  5: ("forward_block_idx", "int32", False)},
    "VarDesc": {1: ("name", "string", False), 2: ("type", "VarType", False),
                3: ("persistable", "bool", False), 4: ("need_check_feed", "bool", False),
                5: ("is_parameter", "bool", False), 6: ("stop_gradient", "bool", False),
                7: ("attrs", "VarAttr", True)},
    "VarAttr": {1: ("name", "string", False), 2: ("type", "enum", False),
                3: ("i", "int32", False), 4: ("s", "string", False), 5: ("ints", "int32", True)},
    "VarType": {1: ("type", "enum", False), 2: ("selected_rows", "TensorDesc", False),
                3: ("lod_tensor", "LoDTensorDesc", False),
                4: ("tensor_array", "LoDTensorDesc", False),
                5: ("reader", "ReaderDesc", False), 7: ("tuple", "Tuple", False),
                8: ("string", "TensorDesc", False), 9: ("strings", "TensorDesc", False),
                10: ("vocab", "TensorDesc", False), 11: ("sparse_coo", "TensorDesc", False),
                12: ("sparse_csr", "TensorDesc", False)},
    "TensorDesc": {1: ("data_type", "enum", False), 2: ("dims", "int64", True)},
    "LoDTensorDesc": {1: ("tensor", "TensorDesc", False), 2: ("lod_level", "int32", False)},
    "ReaderDesc": {1: ("lod_tensor", "LoDTensorDesc", True)},
    "Tuple": {1: ("element_type", "enum", True)},
    "OpDesc": {3: ("type", "string", False), 1: ("inputs", "OpVar", True),
               2: ("outputs", "OpVar", True), 4: ("attrs", "OpAttr", True),
               5: ("is_target", "bool", False)},
    "OpVar": {1: ("parameter", "string", False), 2: ("arguments", "string", True)},
    "OpAttr": {1: ("name", "string", False), 2: ("type", "enum", False),
               3: ("i", "int32", False), 4: ("f", "float", False), 5: ("s", "string", False),
               6: ("ints", "int32", True), 7: ("floats", "float", True),
               8: ("strings", "string", True), 10: ("b", "bool", False),
               11: ("bools", "bool", True), 12: ("block_idx", "int32", False),
               13: ("l", "int64", False), 14: ("blocks_idx", "int32", True),
               15: ("longs", "int64", True), 16: ("float64s", "double", True),
               17: ("var_name", "string", False), 18: ("vars_name", "string", True),
               19: ("float64", "double", False), 20: ("scalar", "Scalar", False),
               21: ("scalars", "Scalar", True)},
    "Scalar": {1: ("type", "enum", False), 2: ("b", "bool", False), 3: ("i", "int64", False),
               4: ("r", "double", False), 5: ("c", "Complex", False)},
    "Complex": {1: ("r", "double", False), 2: ("i", "double", False)},
}
_DEFAULTS = {"int32": 0, "int64": 0, "enum": 0, "bool": False, "float": 0.0, "double": 0.0,
             "string": ""}
# proto2 defaults other than the zero of the kind
_SPECIAL_DEFAULTS = {("BlockDesc", "forward_block_idx"): -1}

# AttrType: the attribute kinds and the OpAttr field holding each one's value
ATTR_FIELDS = {0: "i", 1: "f", 2: "s", 3: "ints", 4: "floats", 5: "strings", 6: "b", 7: "bools",
               8: "block_idx", 9: "l", 10: "blocks_idx", 11: "longs", 12: "float64s",
               13: "var_name", 14: "vars_name", 15: "float64", 16: "scalar", 17: "scalars"}
ATTR_TYPES = {v: k for k, v in ATTR_FIELDS.items()}
# Scalar.Type
SCALAR_BOOLEAN, SCALAR_LONG, SCALAR_FLOAT64, SCALAR_COMPLEX128 = 1, 2, 3, 4
# VarType.Type values that name a kind of variable rather than an element type
LOD_TENSOR, FEED_MINIBATCH, FETCH_LIST = 7, 9, 10

_BY_NAME = {m: {name: (num, kind, rep) for num, (name, kind, rep) in f.items()}
            for m, f in SCHEMA.items()}


class ProtoError(ValueError):
    """A ``.pdmodel`` that is truncated or does not follow the ProgramDesc schema."""


def field(msg: dict, message: str, name: str):
    """The value of field ``name`` of a decoded ``message``, with the schema default when the
    bytes did not hold it (``[]`` for a repeated field, None for an absent sub-message)."""
    if name in msg:
        return msg[name]
    _, kind, rep = _BY_NAME[message][name]
    if rep:
        return []
    return _SPECIAL_DEFAULTS.get((message, name), _DEFAULTS.get(kind))


def attr_value(attr: dict):
    """The Python value of a decoded ``OpAttr`` (by its declared AttrType)."""
    t = attr.get("type", 0)
    key = ATTR_FIELDS.get(t)
    if key is None:
        raise ProtoError(f"attribute '{attr.get('name', '')}' has unknown AttrType {t}")
    v = field(attr, "OpAttr", key)
    if key == "scalar":
        return None if v is None else scalar_value(v)
    if key == "scalars":
        return [scalar_value(s) for s in v]
    return v


def scalar_value(s: dict):
    """The Python value of a decoded ``Scalar``."""
    t = s.get("type", 0)
    if t == SCALAR_BOOLEAN:
        return bool(s.get("b", False))
    if t == SCALAR_LONG:
        return int(s.get("i", 0))
    if t == SCALAR_FLOAT64:
        return float(s.get("r", 0.0))
    if t == SCALAR_COMPLEX128:
        c = s.get("c", {})
        return complex(c.get("r", 0.0), c.get("i", 0.0))
    raise ProtoError(f"Scalar attribute with unknown type {t}")


# ----------------------------------------------------------------------------------- decoding
def decode(buf: bytes, message: str = "ProgramDesc", where: str = "the model") -> dict:
    """Decode ``buf`` as ``message``; errors name ``where``, the byte and the field.

    Raises:
        ProtoError: the bytes end inside a field (truncated) or break the schema.
    """
    buf = memoryview(buf).cast("B") if not isinstance(buf, bytes) else buf
    return _Decoder(buf, where).message(message, 0, len(buf))


class _Decoder:
    def __init__(self, buf, where):
        self.buf, self.where, self.size = buf, where, len(buf)

    def fail(self, pos, what):
        if pos >= self.size:
            raise ProtoError(f"{self.where} is truncated at byte {self.size}: {what} (the file "
                             "is incomplete: an interrupted download or copy)")
        raise ProtoError(f"{self.where} is corrupt at byte {pos} of {self.size}: {what}")

    def varint(self, pos, end, what):
        buf = self.buf
        result = shift = 0
        while True:
            if pos >= end:
                self.fail(pos, f"a number of {what} runs past its end")
            b = buf[pos]
            pos += 1
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result, pos
            shift += 7
            if shift >= 70:
                self.fail(pos, f"a number of {what} is longer than 10 bytes")

    def message(self, message, pos, end):
        fields = SCHEMA[message]
        out = {}
        while pos < end:
            start = pos
            key, pos = self.varint(pos, end, f"a {message} field key")
            num, wire = key >> 3, key & 7
            spec = fields.get(num)
            what = f"{message}.{spec[0]}" if spec else f"{message} field {num}"
            if wire == 0:
                val, pos = self.varint(pos, end, what)
                raw = None
            elif wire == 1 or wire == 5:
                n = 8 if wire == 1 else 4
                if pos + n > end:
                    self.fail(self.size if end >= self.size else start,
                              f"{what} needs {n} bytes from byte {pos}")
                raw, val = self.buf[pos:pos + n], None
                pos += n
            elif wire == 2:
                n, pos = self.varint(pos, end, what)
                if pos + n > end:
                    if end >= self.size:
                        self.fail(self.size, f"{what} declares {n} bytes from byte {pos}, "
                                  f"so the file should hold at least {pos + n} bytes")
                    self.fail(start, f"{what} declares {n} bytes from byte {pos}, past the end "
                              f"of its enclosing {message} at byte {end}")
                raw, val = (pos, pos + n), None
                pos += n
            else:
                self.fail(start, f"{what} has the invalid wire type {wire}")
            if spec is None:
                continue  # a field this schema does not know: skipped (its size is known)
            name, kind, rep = spec
            vals = self.value(kind, wire, val, raw, what, start, rep)
            if rep:
                out.setdefault(name, []).extend(vals)
            else:
                out[name] = vals[-1]
        return out

    def value(self, kind, wire, val, raw, what, start, rep):
        """The values a field occurrence carries (a packed repeated field carries several)."""
        if kind in SCHEMA:
            if wire != 2:
                self.fail(start, f"{what} should be a message, got wire type {wire}")
            return [self.message(kind, *raw)]
        if kind == "string":
            if wire != 2:
                self.fail(start, f"{what} should be a string, got wire type {wire}")
            try:
                return [bytes(self.buf[raw[0]:raw[1]]).decode("utf-8")]
            except UnicodeDecodeError:
                pass
            self.fail(start, f"{what} is not valid UTF-8 text")
        want = 0 if kind in _VARINT else (5 if kind == "float" else 1)
        if wire == 2 and rep:  # packed repeated scalars
            pos, end, out = raw[0], raw[1], []
            while pos < end:
                if want == 0:
                    v, pos = self.varint(pos, end, what)
                    out.append(_int(kind, v))
                else:
                    n = 4 if want == 5 else 8
                    if pos + n > end:
                        self.fail(start, f"a packed {what} does not hold whole numbers")
                    out.append(_float(kind, self.buf[pos:pos + n]))
                    pos += n
            return out
        if wire != want:
            self.fail(start, f"{what} should have wire type {want}, got {wire}")
        return [_int(kind, val) if want == 0 else _float(kind, raw)]


def _int(kind, v):
    if kind == "bool":
        return v != 0
    if kind in ("int32", "enum"):
        v &= 0xFFFFFFFF
        return v - (1 << 32) if v >= 1 << 31 else v
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >= 1 << 63 else v


def _float(kind, raw):
    return struct.unpack("<f" if kind == "float" else "<d", bytes(raw))[0]


# ----------------------------------------------------------------------------------- encoding
def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # negative numbers take ten bytes (two's complement), as protobuf does
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def encode(msg: dict, message: str = "ProgramDesc") -> bytes:
    """Encode a dict of ``message`` fields (the shape :func:`decode` returns).

    Raises:
        ProtoError: a key that is not a field of ``message``.
    """
    by_name = _BY_NAME[message]
    bad = set(msg) - set(by_name)
    if bad:
        raise ProtoError(f"encode: {sorted(bad)} are not fields of {message}")
    out = bytearray()
    for num in sorted(SCHEMA[message]):
        name, kind, rep = SCHEMA[message][num]
        if name not in msg:
            continue
        vals = msg[name] if rep else [msg[name]]
        for v in vals:
            if kind in SCHEMA:
                body = encode(v, kind)
                out += _varint(num << 3 | 2) + _varint(len(body)) + body
            elif kind == "string":
                body = v.encode("utf-8")
                out += _varint(num << 3 | 2) + _varint(len(body)) + body
            elif kind == "float":
                out += _varint(num << 3 | 5) + struct.pack("<f", v)
            elif kind == "double":
                out += _varint(num << 3 | 1) + struct.pack("<d", v)
            else:
                out += _varint(num << 3) + _varint(int(v))
    return bytes(out)
