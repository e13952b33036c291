"""Run Paddle's inference programs (a ``.pdmodel`` ProgramDesc with its ``.pdiparams``).

:func:`read_program` decodes the file (see ``_proto``) into a :class:`Program`: the feed
variables in column order with their saved shapes and dtypes, the fetched variables, the
persistable variables (the parameters file holds them in sorted-name order) and the operators of
the main block. Every operator type is looked up in :data:`OPS` before anything runs, so a model
with an operator this module does not implement fails at load time with the op types and the
file named. :class:`ProgramLayer` (what ``paddle.jit.load`` returns for such a file) runs the
operators in order on paddle_hl Tensors through the public functional ops, in eval mode: the
program is the inference program Paddle saved (dropout in test mode, batch norm on its running
statistics).

Each entry of :data:`OPS` maps one Paddle op type onto paddle_hl ops, reading the op's inputs and
attributes by the names Paddle's op definitions give them. Nothing from the file is executed:
the file names op types, variables and attribute values, all plain data.
"""

from __future__ import annotations

import math
import os

import numpy as np

from .. import tensor as T
from ..framework.tensor import Tensor
from ..nn import functional as F
from ..nn.layer.layers import Layer
from ..tensor.linalg import norm as _norm
from . import _proto
from ._traced import TranslatedLayer

__all__ = []

# VarType.Type element types -> paddle_hl dtype names
DTYPES = {0: "bool", 1: "int16", 2: "int32", 3: "int64", 4: "float16", 5: "float32",
          6: "float64", 20: "uint8", 21: "int8", 22: "bfloat16", 23: "complex64",
          24: "complex128"}
DTYPE_CODES = {v: k for k, v in DTYPES.items()}
# attributes every op carries for Paddle's own bookkeeping; never meaningful to the computation
_BOOKKEEPING = {"op_role", "op_role_var", "op_namescope", "op_callstack", "op_device",
                "with_quant_attr"}


class Op:
    """One operator: its type, its inputs/outputs (parameter -> variable names) and attrs."""

    __slots__ = ("type", "inputs", "outputs", "attrs")

    def __init__(self, type_, inputs, outputs, attrs):
        self.type, self.inputs, self.outputs, self.attrs = type_, inputs, outputs, attrs

    def __repr__(self):
        return f"Op({self.type}, in={self.inputs}, out={self.outputs})"


class Program:
    """A decoded inference program (main block).

    Attributes:
        feeds (list[tuple]): ``(name, shape, dtype)`` per input, in feed column order; -1 in a
            shape is a free dim.
        fetches (list[str]): the fetched variable names, in fetch column order.
        persistables (list[str]): persistable variable names, sorted (the parameters file order).
        var_info (dict): variable name -> ``(shape, dtype)`` as declared.
        ops (list[Op]): the operators other than feed and fetch, in program order.
    """

    def __init__(self, desc: dict, path: str):
        self.path = path
        blocks = _proto.field(desc, "ProgramDesc", "blocks")
        if not blocks:
            raise ValueError(f"jit.load: {path} holds a ProgramDesc without blocks")
        self.version = _proto.field(desc, "ProgramDesc", "version") or {}
        block = blocks[0]
        self.var_info, persist = {}, []
        for v in _proto.field(block, "BlockDesc", "vars"):
            name = v.get("name", "")
            vt = v.get("type") or {}
            kind = vt.get("type", _proto.LOD_TENSOR)
            if kind in (_proto.FEED_MINIBATCH, _proto.FETCH_LIST):
                continue
            td = (vt.get("lod_tensor") or {}).get("tensor") or vt.get("selected_rows") or {}
            self.var_info[name] = (list(td.get("dims", [])), DTYPES.get(td.get("data_type")))
            if v.get("persistable"):
                persist.append(name)
        self.persistables = sorted(persist)
        feeds, fetches, self.ops = {}, {}, []
        for od in _proto.field(block, "BlockDesc", "ops"):
            op = _op(od, path)
            if op.type == "feed":
                feeds[op.attrs.get("col", 0)] = op.outputs["Out"][0]
            elif op.type == "fetch":
                fetches[op.attrs.get("col", 0)] = op.inputs["X"][0]
            else:
                self.ops.append(op)
        self.feeds = []
        for c in sorted(feeds):
            shape, dtype = self.var_info.get(feeds[c], ([], None))
            self.feeds.append((feeds[c], shape, dtype or "float32"))
        self.fetches = [fetches[c] for c in sorted(fetches)]
        if not self.fetches:
            raise ValueError(f"jit.load: {path} has no fetch ops: it is not an inference "
                             "program saved by paddle.jit.save / save_inference_model")
        # hl_* operators are paddle_hl's own pairings (fuse_conv_bn), never read from a file
        unknown = sorted({op.type for op in self.ops} - (set(OPS) - _INTERNAL))
        for b in blocks[1:]:
            unknown += sorted({o.get("type", "") for o in _proto.field(b, "BlockDesc", "ops")}
                              - set(OPS) - set(unknown))
        if not unknown:
            self._check_dataflow()
        else:
            raise ValueError(
                f"jit.load: {path} uses operator type(s) {', '.join(unknown)} that paddle_hl "
                "cannot run (control flow in sub-blocks and C++-only post-processing ops are "
                f"not supported); supported: {len(OPS) - len(_INTERNAL)} op types, see "
                "paddle_hl.jit._interpreter.OPS")


    def _check_dataflow(self):
        """Every variable an op reads is a feed, a persistable or an earlier op's output."""
        known = {n for n, _, _ in self.feeds} | set(self.persistables)
        for op in self.ops:
            for key, names in op.inputs.items():
                for n in names:
                    if n not in known:
                        raise ValueError(f"jit.load: {self.path}: operator {op.type} reads "
                                         f"variable '{n}' (input {key}) that no earlier "
                                         "operator writes and no parameter holds")
            for names in op.outputs.values():
                known.update(names)
        missing = [n for n in self.fetches if n not in known]
        if missing:
            raise ValueError(f"jit.load: {self.path}: the fetched variables {missing} are "
                             "never written")


def _op(od: dict, path: str) -> Op:
    def vars_(key):
        return {v.get("parameter", ""): list(v.get("arguments", []))
                for v in _proto.field(od, "OpDesc", key)}

    attrs = {}
    for a in _proto.field(od, "OpDesc", "attrs"):
        name = a.get("name", "")
        if name in _BOOKKEEPING:
            continue
        try:
            attrs[name] = _proto.attr_value(a)
        except _proto.ProtoError as e:
            raise ValueError(f"jit.load: {path}: operator {od.get('type', '')}: {e}") from None
    return Op(od.get("type", ""), vars_("inputs"), vars_("outputs"), attrs)


def read_program(path: str) -> Program:
    """Decode the ``.pdmodel`` at ``path`` into a :class:`Program` (no op runs)."""
    with open(path, "rb") as f:
        buf = f.read()
    if not buf:
        raise ValueError(f"jit.load: {path} is empty (0 bytes)")
    try:
        desc = _proto.decode(buf, "ProgramDesc", path)
    except _proto.ProtoError as e:
        raise _proto.ProtoError(f"jit.load: {e} (read as a Paddle ProgramDesc)") from None
    return Program(desc, path)


def is_program_desc(path: str) -> bool:
    """True when the file at ``path`` starts like a ProgramDesc (field 1, a block, length
    delimited) rather than paddle_hl's own program format (a pickle, which starts with 0x80)."""
    with open(path, "rb") as f:
        head = f.read(1)
    return head == b"\x0a"


# ==================================================================================== running
class _Ctx:
    """The values of one run: variable name -> Tensor."""

    __slots__ = ("env", "op")

    def __init__(self, env):
        self.env = env

    def x(self, op, key, required=True):
        names = op.inputs.get(key) or []
        if not names:
            if required:
                raise ValueError(f"operator {op.type}: its input '{key}' is missing")
            return None
        return self.env[names[0]]

    def xs(self, op, key):
        return [self.env[n] for n in op.inputs.get(key) or []]

    def set(self, op, key, value, i=0):
        names = op.outputs.get(key) or []
        if len(names) > i:
            self.env[names[i]] = value

    def set_all(self, op, key, values):
        for n, v in zip(op.outputs.get(key) or [], values):
            self.env[n] = v


def run(program: Program, inputs: list, params: dict, ops=None, drops=None) -> list:
    """Run ``program`` on ``inputs`` (Tensors, in feed order) with ``params`` (name -> Tensor);
    returns the fetched Tensors. ``ops``: the operators to run instead of ``program.ops``
    (the program with convolutions and batch norms paired by :func:`fuse_conv_bn`);
    ``drops``: per operator, the values to release after it (:func:`last_uses`)."""
    env = dict(params)
    for (name, _, _), x in zip(program.feeds, inputs):
        env[name] = x
    ctx = _Ctx(env)
    if drops is None:
        for op in program.ops if ops is None else ops:
            OPS[op.type](ctx, op, op.attrs)
    else:
        for op, gone in zip(ops, drops):
            OPS[op.type](ctx, op, op.attrs)
            for n in gone:
                env.pop(n, None)
    return [env[n] for n in program.fetches]


def last_uses(program: Program, ops: list) -> list:
    """Per operator of ``ops``, the intermediate values no later operator reads (nor the
    fetch): released after it, so a run holds only the live activations, not all of them."""
    keep = set(program.fetches) | set(program.persistables)
    last = {}
    for i, op in enumerate(ops):
        for names in op.inputs.values():
            for n in names:
                last[n] = i
        if op.type == "hl_conv_bn":  # its inner operators' values live and die inside it
            for inner in (op.attrs["add"], op.attrs["bn"]):
                if inner is not None:
                    for names in inner.inputs.values():
                        for n in names:
                            last[n] = i
        for names in op.outputs.values():
            for n in names:
                last.setdefault(n, i)
    drops = [[] for _ in ops]
    for n, i in last.items():
        if n not in keep:
            drops[i].append(n)
    return drops


# ------------------------------------------------------------------- conv + batch norm folding
_CONV_ND = {"conv2d": 2, "depthwise_conv2d": 2, "conv3d": 3}
_INTERNAL = {"hl_conv_bn"}


def fuse_conv_bn(program: Program) -> list:
    """The program's operators with each convolution followed by an inference batch norm (with
    Paddle's bias ``elementwise_add`` between them or not) paired into one ``hl_conv_bn``
    operator, which runs as ONE convolution with the norm folded into its weights when no
    gradient is wanted (see :func:`_conv_bn`) -- what paddle_hl's layers do for ``Conv2D`` +
    ``BatchNorm2D`` in eval mode. A pair is made only when the values between the two are read
    by nothing else (nor fetched), the filter, bias and statistics are persistable, and both
    ops use the channels-first layout. ``program.ops`` stays as read."""
    persist = set(program.persistables)
    uses = {}
    for op in program.ops:
        for names in op.inputs.values():
            for n in names:
                uses[n] = uses.get(n, 0) + 1
    for n in program.fetches:
        uses[n] = uses.get(n, 0) + 1
    by_input = {}
    for i, op in enumerate(program.ops):
        for names in op.inputs.values():
            for n in names:
                by_input.setdefault(n, []).append(i)

    def only_reader(name):
        readers = by_input.get(name, [])
        return program.ops[readers[0]] if uses.get(name) == 1 and len(readers) == 1 else None

    out, skip = [], set()
    for i, op in enumerate(program.ops):
        if i in skip:
            continue
        pair = None
        if (op.type in _CONV_ND and not op.inputs.get("Bias")
                and (op.inputs.get("Filter") or [None])[0] in persist
                and _layout(op.attrs, "data_format", _CONV_ND[op.type]) in ("NCHW", "NCDHW")):
            nxt = only_reader(op.outputs["Output"][0])
            add = None
            if (nxt is not None and nxt.type == "elementwise_add"
                    and nxt.inputs.get("X") == op.outputs["Output"]
                    and (nxt.inputs.get("Y") or [None])[0] in persist
                    and int(nxt.attrs.get("axis", -1)) == 1):
                add, nxt = nxt, only_reader(nxt.outputs["Out"][0])
            if (nxt is not None and nxt.type == "batch_norm"
                    and nxt.inputs.get("X") == (add or op).outputs["Out" if add else "Output"]
                    and nxt.attrs.get("data_layout", "NCHW") == "NCHW"
                    and all((nxt.inputs.get(k) or [None])[0] in persist
                            for k in ("Mean", "Variance"))
                    and all(n in persist for k in ("Scale", "Bias")
                            for n in nxt.inputs.get(k) or [])):
                pair = (op, add, nxt)
        if pair is None:
            out.append(op)
            continue
        conv, add, bn = pair
        skip.update(program.ops.index(o) for o in (add, bn) if o is not None)
        out.append(Op("hl_conv_bn", conv.inputs, bn.outputs,
                      {"conv": conv, "add": add, "bn": bn, "cache": []}))
    return out


def _fold_conv_bn(w, b, gamma, beta, mean, var, eps):
    """``w * s`` and ``(b - mean) * s + beta`` with ``s = gamma / sqrt(var + eps)``, computed
    in float64 and cast to the filter's dtype (arrays in, arrays out)."""
    from .. import backend

    xp = backend.get_array_module(w)
    s = 1.0 / xp.sqrt(var.astype(np.float64) + float(np.float32(eps)))
    if gamma is not None:
        s = s * gamma.astype(np.float64)
    shift = -mean.astype(np.float64)
    if b is not None:
        shift = shift + b.reshape(-1).astype(np.float64)
    shift = shift * s
    if beta is not None:
        shift = shift + beta.astype(np.float64)
    wf = (w.astype(np.float64) * s.reshape((-1,) + (1,) * (w.ndim - 1))).astype(w.dtype)
    return wf, shift.astype(w.dtype)


def _conv_bn(c, op, a):
    """A convolution (+ bias) + inference batch norm paired by :func:`fuse_conv_bn`: one
    convolution with the folded filter and bias (cached until one of the tensors changes)
    when no gradient is wanted and the dtypes match; otherwise the operators in turn."""
    from ..framework import state
    from ..framework.tensor import _wrap

    conv, add, bn = a["conv"], a["add"], a["bn"]
    x = c.x(conv, "Input")
    tensors = (c.x(conv, "Filter"), None if add is None else c.x(add, "Y"),
               c.x(bn, "Scale", False), c.x(bn, "Bias", False), c.x(bn, "Mean"),
               c.x(bn, "Variance"))
    w = tensors[0]
    foldable = (w.dtype.name in ("float32", "float64") and x.dtype == w.dtype
                and all(t is None or t.dtype == w.dtype for t in tensors)
                and w.shape[0] == tensors[4].shape[0]
                and (tensors[1] is None or tensors[1].size == w.shape[0]))
    if foldable and state.tls.grad_enabled and not all(
            t is None or t.stop_gradient for t in (x, *tensors)):
        foldable = False
    if not foldable:
        for o in (conv, add, bn):
            if o is not None:
                OPS[o.type](c, o, o.attrs)
        return
    eps = float(bn.attrs.get("epsilon", 1e-5))
    key = tuple(None if t is None else (id(t._data), t._ver.v) for t in tensors)
    cache = a["cache"]
    if not cache or cache[0] != key:
        wf, bf = _fold_conv_bn(*(None if t is None else t._data for t in tensors), eps)
        cache[:] = [key, _wrap(wf), _wrap(bf)]
    y = _conv_call(_CONV_ND[conv.type], x, cache[1], cache[2], conv.attrs)
    c.set(op, "Y", y)


def _ints(t) -> list:
    """A shape-like Tensor (or list of 0-D/1-D Tensors) as Python ints."""
    if isinstance(t, (list, tuple)):
        out = []
        for v in t:
            out.extend(_ints(v))
        return out
    return [int(v) for v in np.asarray(t.numpy()).reshape(-1)]


def _scalar(t) -> float:
    return np.asarray(t.numpy()).reshape(-1)[0].item()


def _input_or_attr(c, op, a, slot, attr, default, cast):
    """An operand Paddle may give as a one-element input tensor (``slot``) or else as an
    attribute (``attr``, ``default``), converted by ``cast``."""
    t = c.x(op, slot, False)
    return cast(_scalar(t) if t is not None else a.get(attr, default))


# =============================================================================== op library
OPS: dict = {}


def _reg(*names):
    def deco(fn):
        for n in names:
            OPS[n] = fn
        return fn
    return deco


# ------------------------------------------------------------------------------ plumbing
@_reg("assign", "share_data", "memcpy", "memcpy_d2h", "memcpy_h2d")
def _assign(c, op, a):
    c.set(op, "Out", c.x(op, "X"))


@_reg("scale")
def _scale(c, op, a):
    x = c.x(op, "X")
    s = _input_or_attr(c, op, a, "ScaleTensor", "scale", 1.0, float)
    b = float(a.get("bias", 0.0))
    if s == 1.0 and b == 0.0:
        c.set(op, "Out", x)
        return
    if x.dtype.name.startswith(("int", "uint")):
        y = T.scale(T.cast(x, "float64"), s, b, bool(a.get("bias_after_scale", True)))
        c.set(op, "Out", T.cast(y, x.dtype))
        return
    c.set(op, "Out", T.scale(x, s, b, bool(a.get("bias_after_scale", True))))


@_reg("dropout")
def _dropout(c, op, a):
    x = c.x(op, "X")
    if a.get("dropout_implementation", "downgrade_in_infer") == "downgrade_in_infer":
        x = T.scale(x, 1.0 - float(a.get("dropout_prob", 0.5)))
    c.set(op, "Out", x)


@_reg("cast")
def _cast(c, op, a):
    c.set(op, "Out", T.cast(c.x(op, "X"), DTYPES[a["out_dtype"]]))


@_reg("shape", "shape64")
def _shape(c, op, a):
    c.set(op, "Out", T.to_tensor(c.x(op, "Input").shape,
                                 "int64" if op.type == "shape64" else "int32"))


def _fill_value(a, dtype):
    s = a.get("str_value", "")
    if s:
        try:
            v = int(s)
        except ValueError:
            v = float(s)
    else:
        v = a.get("value", 0.0)
    if dtype.startswith(("int", "uint")):
        return int(v)
    if dtype == "bool":
        return bool(v)
    return float(v)


@_reg("fill_constant")
def _fill_constant(c, op, a):
    dtype = DTYPES[a.get("dtype", 5)]
    vt = c.x(op, "ValueTensor", False)
    if c.x(op, "ShapeTensor", False) is not None:
        shape = _ints(c.x(op, "ShapeTensor"))
    elif op.inputs.get("ShapeTensorList"):
        shape = _ints(c.xs(op, "ShapeTensorList"))
    else:
        shape = [int(d) for d in a.get("shape", [])]
    value = _scalar(vt) if vt is not None else _fill_value(a, dtype)
    c.set(op, "Out", T.full(shape, value, dtype))


@_reg("fill_any_like", "fill_zeros_like", "full_like")
def _fill_like(c, op, a):
    x = c.x(op, "X")
    code = a.get("dtype", -1)
    dtype = x.dtype.name if code in (-1, None) else DTYPES[code]
    value = 0 if op.type == "fill_zeros_like" else _fill_value(a, dtype)
    c.set(op, "Out", T.full(x.shape, value, dtype))


@_reg("assign_value")
def _assign_value(c, op, a):
    dtype = DTYPES[a.get("dtype", 5)]
    for key in ("fp32_values", "fp64_values", "int32_values", "int64_values", "bool_values",
                "values"):
        if a.get(key):
            vals = a[key]
            break
    else:
        vals = []
    c.set(op, "Out", T.to_tensor(np.array(vals, dtype=dtype).reshape(a.get("shape", []))))


@_reg("range", "arange")
def _range(c, op, a):
    start, end, step = (_scalar(c.x(op, k)) for k in ("Start", "End", "Step"))
    c.set(op, "Out", T.arange(start, end, step, c.x(op, "Start").dtype))


# ---------------------------------------------------------------------------- elementwise
def _align(x, y, axis):
    """Paddle's elementwise ``axis``: ``y``'s dims line up with ``x``'s from ``axis`` on."""
    if axis == -1 or x.ndim == y.ndim:
        return x, y
    if y.ndim < x.ndim:
        return x, T.reshape(y, list(y.shape) + [1] * (x.ndim - axis - y.ndim))
    return T.reshape(x, list(x.shape) + [1] * (y.ndim - axis - x.ndim)), y


def _binary(fn):
    def run_(c, op, a):
        x, y = _align(c.x(op, "X"), c.x(op, "Y"), a.get("axis", -1))
        c.set(op, "Out", fn(x, y))
    return run_


for _name, _fn in {
        "elementwise_add": T.add, "elementwise_sub": T.subtract, "elementwise_mul": T.multiply,
        "elementwise_div": T.divide, "elementwise_max": T.maximum, "elementwise_min": T.minimum,
        "elementwise_pow": T.pow, "elementwise_floordiv": T.floor_divide,
        "elementwise_mod": T.remainder, "equal": T.equal, "not_equal": T.not_equal,
        "less_than": T.less_than, "less_equal": T.less_equal, "greater_than": T.greater_than,
        "greater_equal": T.greater_equal, "logical_and": T.logical_and,
        "logical_or": T.logical_or, "logical_xor": T.logical_xor}.items():
    OPS[_name] = _binary(_fn)


def _unary(fn):
    def run_(c, op, a):
        c.set(op, "Out", fn(c.x(op, "X")))
    return run_


for _name, _fn in {
        "relu": F.relu, "sigmoid": F.sigmoid, "tanh": T.tanh, "exp": T.exp, "log": T.log,
        "sqrt": T.sqrt, "rsqrt": T.rsqrt, "abs": T.abs, "square": T.square,
        "reciprocal": T.reciprocal, "floor": T.floor, "ceil": T.ceil, "round": T.round,
        "sin": T.sin, "cos": T.cos, "erf": T.erf, "sign": T.sign, "silu": F.silu,
        "mish": F.mish, "logsigmoid": F.log_sigmoid, "softsign": F.softsign,
        "tanh_shrink": F.tanhshrink, "logical_not": T.logical_not, "isnan_v2": T.isnan,
        "isinf_v2": T.isinf}.items():
    OPS[_name] = _unary(_fn)


def _x_with_float_attrs(fn, *attrs):
    """The op of an activation that takes X and float attributes ``(name, default)``, passed
    to ``fn`` in order."""
    def run(c, op, a):
        c.set(op, "Out", fn(c.x(op, "X"), *(float(a.get(n, d)) for n, d in attrs)))
    return run


# activations with float attributes, passed in the order of paddle_hl's functional
for _type, _fn, _attrs in (
        ("leaky_relu", F.leaky_relu, (("alpha", 0.02),)),
        ("elu", F.elu, (("alpha", 1.0),)),
        ("celu", F.celu, (("alpha", 1.0),)),
        ("hard_sigmoid", F.hardsigmoid, (("slope", 0.2), ("offset", 0.5))),
        ("softplus", F.softplus, (("beta", 1.0), ("threshold", 20.0))),
        ("hard_shrink", F.hardshrink, (("threshold", 0.5),)),
        ("softshrink", F.softshrink, (("lambda", 0.5),)),
        ("thresholded_relu", F.thresholded_relu, (("threshold", 1.0),)),
        ("selu", F.selu, (("scale", 1.0507009873554805), ("alpha", 1.6732632423543772)))):
    OPS[_type] = _x_with_float_attrs(_fn, *_attrs)


@_reg("relu6")
def _relu6(c, op, a):
    c.set(op, "Out", T.clip(c.x(op, "X"), 0.0, float(a.get("threshold", 6.0))))


@_reg("gelu")
def _gelu(c, op, a):
    c.set(op, "Out", F.gelu(c.x(op, "X"), bool(a.get("approximate", False))))


@_reg("swish")
def _swish(c, op, a):
    x = c.x(op, "X")
    beta = float(a.get("beta", 1.0))
    c.set(op, "Out", F.swish(x) if beta == 1.0 else x * F.sigmoid(T.scale(x, beta)))


@_reg("hard_swish")
def _hard_swish(c, op, a):
    x = c.x(op, "X")
    t, s, o = (float(a.get(k, d)) for k, d in (("threshold", 6.0), ("scale", 6.0),
                                               ("offset", 3.0)))
    if (t, s, o) == (6.0, 6.0, 3.0):
        c.set(op, "Out", F.hardswish(x))
    else:
        c.set(op, "Out", x * T.clip(T.scale(x, 1.0, o), 0.0, t) / s)


@_reg("hardtanh", "brelu")
def _hardtanh(c, op, a):
    c.set(op, "Out", T.clip(c.x(op, "X"), float(a.get("t_min", -1.0)),
                            float(a.get("t_max", 1.0))))


@_reg("prelu")
def _prelu(c, op, a):
    x, w = c.x(op, "X"), c.x(op, "Alpha")
    fmt = a.get("data_format", "NCHW")
    if a.get("mode", "all") == "element":
        c.set(op, "Out", T.maximum(x, T.zeros_like(x)) + T.minimum(x, T.zeros_like(x)) *
              T.reshape(w, [1] + list(x.shape[1:])))
        return
    c.set(op, "Out", F.prelu(x, T.reshape(w, [-1]), data_format=fmt))


@_reg("pow")
def _pow(c, op, a):
    f = _input_or_attr(c, op, a, "FactorTensor", "factor", 1.0, float)
    c.set(op, "Out", T.pow(c.x(op, "X"), f))


@_reg("clip")
def _clip(c, op, a):
    lo = _input_or_attr(c, op, a, "Min", "min", -math.inf, float)
    hi = _input_or_attr(c, op, a, "Max", "max", math.inf, float)
    c.set(op, "Out", T.clip(c.x(op, "X"), lo, hi))


@_reg("softmax")
def _softmax(c, op, a):
    c.set(op, "Out", F.softmax(c.x(op, "X"), int(a.get("axis", -1))))


@_reg("log_softmax")
def _log_softmax(c, op, a):
    c.set(op, "Out", F.log_softmax(c.x(op, "X"), int(a.get("axis", -1))))


@_reg("sum", "add_n")
def _sum(c, op, a):
    xs = c.xs(op, "X")
    out = xs[0]
    for x in xs[1:]:
        out = out + x
    c.set(op, "Out", out)


@_reg("where")
def _where(c, op, a):
    c.set(op, "Out", T.where(c.x(op, "Condition"), c.x(op, "X"), c.x(op, "Y")))


@_reg("cumsum")
def _cumsum(c, op, a):
    x = c.x(op, "X")
    if a.get("flatten", False):
        x = T.reshape(x, [-1])
    axis = int(a.get("axis", -1))
    if a.get("reverse", False):
        x = T.flip(x, [axis])
    y = T.cumsum(x, axis)
    if a.get("exclusive", False):
        y = y - x
    if a.get("reverse", False):
        y = T.flip(y, [axis])
    c.set(op, "Out", y)


# ---------------------------------------------------------------------------------- linear
@_reg("matmul_v2")
def _matmul_v2(c, op, a):
    c.set(op, "Out", T.matmul(c.x(op, "X"), c.x(op, "Y"), bool(a.get("trans_x", False)),
                              bool(a.get("trans_y", False))))


@_reg("matmul")
def _matmul(c, op, a):
    y = T.matmul(c.x(op, "X"), c.x(op, "Y"), bool(a.get("transpose_X", False)),
                 bool(a.get("transpose_Y", False)))
    alpha = float(a.get("alpha", 1.0))
    c.set(op, "Out", y if alpha == 1.0 else T.scale(y, alpha))


@_reg("mul")
def _mul(c, op, a):
    x, y = c.x(op, "X"), c.x(op, "Y")
    xn, yn = int(a.get("x_num_col_dims", 1)), int(a.get("y_num_col_dims", 1))
    x2 = T.reshape(x, [math.prod(x.shape[:xn]), math.prod(x.shape[xn:])])
    y2 = T.reshape(y, [math.prod(y.shape[:yn]), math.prod(y.shape[yn:])])
    c.set(op, "Out", T.reshape(T.matmul(x2, y2), list(x.shape[:xn]) + list(y.shape[yn:])))


@_reg("bmm")
def _bmm(c, op, a):
    c.set(op, "Out", T.bmm(c.x(op, "X"), c.x(op, "Y")))


@_reg("lookup_table_v2", "lookup_table")
def _lookup(c, op, a):
    ids = c.x(op, "Ids")
    if op.type == "lookup_table" and ids.ndim > 1 and ids.shape[-1] == 1:
        ids = T.squeeze(ids, [-1])
    pad = int(a.get("padding_idx", -1))
    c.set(op, "Out", F.embedding(ids, c.x(op, "W"), padding_idx=None if pad == -1 else pad))


# ------------------------------------------------------------------------------ conv/pool
def _padding(a, nd):
    algo = a.get("padding_algorithm", "EXPLICIT")
    if algo in ("SAME", "VALID"):
        return algo
    p = [int(v) for v in a.get("paddings", [0] * nd)]
    return p


def _layout(a, key, nd):
    fmt = a.get(key, "NCHW")
    last = fmt in ("NHWC", "NDHWC", "NLC")
    return ("NHWC" if last else "NCHW") if nd == 2 else ("NDHWC" if last else "NCDHW")


def _conv_call(nd, x, w, b, a):
    fn = F.conv2d if nd == 2 else F.conv3d
    return fn(x, w, b, stride=a.get("strides", [1] * nd), padding=_padding(a, nd),
              dilation=a.get("dilations", [1] * nd), groups=int(a.get("groups", 1)),
              data_format=_layout(a, "data_format", nd))


def _conv(nd):
    def run_(c, op, a):
        c.set(op, "Output", _conv_call(nd, c.x(op, "Input"), c.x(op, "Filter"),
                                       c.x(op, "Bias", False), a))
    return run_


def _conv_transpose(nd):
    fn = F.conv2d_transpose if nd == 2 else F.conv3d_transpose

    def run_(c, op, a):
        x = c.x(op, "Input")
        out_size = list(a.get("output_size", []) or [])
        out_pad = list(a.get("output_padding", []) or [])
        y = fn(x, c.x(op, "Filter"), c.x(op, "Bias", False), stride=a.get("strides", [1] * nd),
               padding=_padding(a, nd), output_padding=out_pad if any(out_pad) else 0,
               dilation=a.get("dilations", [1] * nd), groups=int(a.get("groups", 1)),
               output_size=out_size or None, data_format=_layout(a, "data_format", nd))
        c.set(op, "Output", y)
    return run_


OPS["conv2d"] = OPS["depthwise_conv2d"] = _conv(2)
OPS["conv3d"] = _conv(3)
OPS["conv2d_transpose"] = OPS["depthwise_conv2d_transpose"] = _conv_transpose(2)
OPS["conv3d_transpose"] = _conv_transpose(3)


def _pool(nd):
    def run_(c, op, a):
        x = c.x(op, "X")
        fmt = _layout(a, "data_format", nd)
        spatial = list(range(2, 2 + nd)) if fmt.startswith("NC") else list(range(1, 1 + nd))
        kind = a.get("pooling_type", "max")
        ks = [int(k) for k in a.get("ksize", [1] * nd)]
        if a.get("global_pooling", False) or (
                a.get("adaptive", False) and all(k == 1 for k in ks)):
            y = T.max(x, spatial, True) if kind == "max" else T.mean(x, spatial, True)
        elif a.get("adaptive", False):
            if kind == "max":
                if fmt.startswith("NC"):
                    y = (F.adaptive_max_pool2d if nd == 2 else F.adaptive_max_pool3d)(x, ks)
                else:
                    perm = [0, nd + 1] + list(range(1, nd + 1))
                    back = [0] + list(range(2, nd + 2)) + [1]
                    y = (F.adaptive_max_pool2d if nd == 2 else F.adaptive_max_pool3d)(
                        T.transpose(x, perm), ks)
                    y = T.transpose(y, back)
            else:
                y = (F.adaptive_avg_pool2d if nd == 2 else F.adaptive_avg_pool3d)(
                    x, ks, data_format=fmt)
        else:
            pad = _padding(a, nd)
            strides = a.get("strides", [1] * nd)
            ceil = bool(a.get("ceil_mode", False))
            if kind == "max":
                y = (F.max_pool2d if nd == 2 else F.max_pool3d)(
                    x, ks, strides, pad, ceil_mode=ceil, data_format=fmt)
            else:
                y = (F.avg_pool2d if nd == 2 else F.avg_pool3d)(
                    x, ks, strides, pad, ceil_mode=ceil, exclusive=bool(a.get("exclusive", True)),
                    data_format=fmt)
        c.set(op, "Out", y)
    return run_


OPS["pool2d"] = _pool(2)
OPS["pool3d"] = _pool(3)


def _max_pool_with_index(nd):
    def run_(c, op, a):
        x = c.x(op, "X")
        ks = [int(k) for k in a.get("ksize", [1] * nd)]
        if a.get("global_pooling", False):
            ks, adaptive = [1] * nd, True
        else:
            adaptive = bool(a.get("adaptive", False))
        if adaptive:
            fn = F.adaptive_max_pool2d if nd == 2 else F.adaptive_max_pool3d
            y, mask = fn(x, ks, return_mask=True)
        else:
            fn = F.max_pool2d if nd == 2 else F.max_pool3d
            y, mask = fn(x, ks, a.get("strides", [1] * nd),
                         [int(p) for p in a.get("paddings", [0] * nd)], return_mask=True)
        c.set(op, "Out", y)
        c.set(op, "Mask", T.cast(mask, "int32"))
    return run_


OPS["max_pool2d_with_index"] = _max_pool_with_index(2)
OPS["max_pool3d_with_index"] = _max_pool_with_index(3)


# ---------------------------------------------------------------------------- normalization
@_reg("batch_norm", "sync_batch_norm")
def _batch_norm(c, op, a):
    x = c.x(op, "X")
    last = a.get("data_layout", "NCHW") in ("NHWC", "NDHWC", "NLC")
    fmt = {2: "NC", 3: "NLC" if last else "NCL", 4: "NHWC" if last else "NCHW",
           5: "NDHWC" if last else "NCDHW"}.get(x.ndim, "NCHW")
    y = F.batch_norm(x, c.x(op, "Mean"), c.x(op, "Variance"), c.x(op, "Scale", False),
                     c.x(op, "Bias", False), training=False,
                     epsilon=float(a.get("epsilon", 1e-5)), data_format=fmt)
    c.set(op, "Y", y)


@_reg("layer_norm")
def _layer_norm(c, op, a):
    x = c.x(op, "X")
    begin = int(a.get("begin_norm_axis", 1))
    shape = list(x.shape[begin:])
    w, b = c.x(op, "Scale", False), c.x(op, "Bias", False)
    w = None if w is None else T.reshape(w, shape)
    b = None if b is None else T.reshape(b, shape)
    c.set(op, "Y", F.layer_norm(x, shape, w, b, float(a.get("epsilon", 1e-5))))


@_reg("instance_norm")
def _instance_norm(c, op, a):
    c.set(op, "Y", F.instance_norm(c.x(op, "X"), weight=c.x(op, "Scale", False),
                                   bias=c.x(op, "Bias", False),
                                   eps=float(a.get("epsilon", 1e-5))))


@_reg("group_norm")
def _group_norm(c, op, a):
    x = c.x(op, "X")
    g = int(a.get("groups", 1))
    eps = float(a.get("epsilon", 1e-5))
    last = a.get("data_layout", "NCHW") == "NHWC"
    if last:
        x = T.transpose(x, [0, x.ndim - 1] + list(range(1, x.ndim - 1)))
    n, ch = x.shape[0], x.shape[1]
    xg = T.reshape(x, [n, g, -1])
    mean = T.mean(xg, -1, True)
    var = T.mean(T.square(xg - mean), -1, True)
    y = T.reshape((xg - mean) * T.rsqrt(var + eps), x.shape)
    bshape = [1, ch] + [1] * (x.ndim - 2)
    w, b = c.x(op, "Scale", False), c.x(op, "Bias", False)
    if w is not None:
        y = y * T.reshape(w, bshape)
    if b is not None:
        y = y + T.reshape(b, bshape)
    if last:
        y = T.transpose(y, [0] + list(range(2, y.ndim)) + [1])
    c.set(op, "Y", y)


@_reg("p_norm")
def _p_norm(c, op, a):
    x = c.x(op, "X")
    p = float(a.get("porder", 2.0))
    axis = None if a.get("asvector", False) else int(a.get("axis", -1))
    c.set(op, "Out", _norm(x, p, axis, bool(a.get("keepdim", False))))


# ------------------------------------------------------------------------------- reductions
def _reduce(fn):
    def run_(c, op, a):
        x = c.x(op, "X")
        axis = None if a.get("reduce_all", False) else [int(d) for d in a.get("dim", [])]
        if axis is not None and (not axis or len(axis) == x.ndim):
            axis = None if not axis or sorted(d % max(x.ndim, 1) for d in axis) == list(
                range(x.ndim)) else axis
        y = fn(x, axis, bool(a.get("keep_dim", False)))
        out = a.get("out_dtype", -1)
        if out not in (-1, None) and DTYPES.get(out) and y.dtype.name != DTYPES[out]:
            y = T.cast(y, DTYPES[out])
        c.set(op, "Out", y)
    return run_


def _sum_fn(x, axis, keep):
    return T.sum(x, axis, keepdim=keep)


for _name, _fn in {"reduce_mean": T.mean, "reduce_sum": _sum_fn, "reduce_max": T.max,
                   "reduce_min": T.min, "reduce_all": T.all, "reduce_any": T.any}.items():
    OPS[_name] = _reduce(_fn)


@_reg("reduce_prod")
def _reduce_prod(c, op, a):
    x = c.x(op, "X")
    axis = None if a.get("reduce_all", False) else [int(d) for d in a.get("dim", [])] or None
    c.set(op, "Out", T.prod(x, axis, bool(a.get("keep_dim", False))))


@_reg("mean")
def _mean(c, op, a):
    c.set(op, "Out", T.mean(c.x(op, "X")))


@_reg("arg_max", "arg_min")
def _arg(c, op, a):
    x = c.x(op, "X")
    fn = T.argmax if op.type == "arg_max" else T.argmin
    flat = bool(a.get("flatten", False))
    y = fn(x, None if flat else int(a.get("axis", -1)), bool(a.get("keepdims", False)),
           DTYPES[a.get("dtype", 3)])
    c.set(op, "Out", y)


@_reg("top_k_v2")
def _top_k(c, op, a):
    k = _input_or_attr(c, op, a, "K", "k", 1, int)
    v, i = T.topk(c.x(op, "X"), k, int(a.get("axis", -1)), bool(a.get("largest", True)),
                  bool(a.get("sorted", True)))
    c.set(op, "Out", v)
    c.set(op, "Indices", i)


# ---------------------------------------------------------------------------- manipulation
def _target_shape(x, shape):
    """Paddle's reshape: 0 copies the input dim at that position, -1 is inferred."""
    return [x.shape[i] if d == 0 else int(d) for i, d in enumerate(shape)]


@_reg("reshape2", "reshape")
def _reshape(c, op, a):
    x = c.x(op, "X")
    if c.x(op, "Shape", False) is not None:
        shape = _ints(c.x(op, "Shape"))
    elif op.inputs.get("ShapeTensor"):
        shape = _ints(c.xs(op, "ShapeTensor"))
    else:
        shape = list(a.get("shape", []))
    c.set(op, "Out", T.reshape(x, _target_shape(x, shape)))


@_reg("transpose2", "transpose")
def _transpose(c, op, a):
    c.set(op, "Out", T.transpose(c.x(op, "X"), [int(v) for v in a["axis"]]))


@_reg("flatten_contiguous_range")
def _flatten_range(c, op, a):
    c.set(op, "Out", T.flatten(c.x(op, "X"), int(a.get("start_axis", 1)),
                               int(a.get("stop_axis", -1))))


@_reg("flatten2", "flatten")
def _flatten2(c, op, a):
    x = c.x(op, "X")
    ax = int(a.get("axis", 1))
    c.set(op, "Out", T.reshape(x, [math.prod(x.shape[:ax]), math.prod(x.shape[ax:])]))


@_reg("squeeze2", "squeeze")
def _squeeze(c, op, a):
    x = c.x(op, "X")
    axes = [int(v) for v in a.get("axes", [])]
    c.set(op, "Out", T.squeeze(x, axes if axes else None))


@_reg("unsqueeze2", "unsqueeze")
def _unsqueeze(c, op, a):
    x = c.x(op, "X")
    if c.x(op, "AxesTensor", False) is not None:
        axes = _ints(c.x(op, "AxesTensor"))
    elif op.inputs.get("AxesTensorList"):
        axes = _ints(c.xs(op, "AxesTensorList"))
    else:
        axes = [int(v) for v in a.get("axes", [])]
    c.set(op, "Out", T.unsqueeze(x, axes))


@_reg("concat")
def _concat(c, op, a):
    axis = _input_or_attr(c, op, a, "AxisTensor", "axis", 0, int)
    c.set(op, "Out", T.concat(c.xs(op, "X"), axis))


@_reg("split")
def _split(c, op, a):
    x = c.x(op, "X")
    axis = _input_or_attr(c, op, a, "AxisTensor", "axis", 0, int)
    if op.inputs.get("SectionsTensorList"):
        sections = _ints(c.xs(op, "SectionsTensorList"))
    else:
        sections = [int(s) for s in a.get("sections", [])]
    parts = T.split(x, sections if sections else int(a.get("num", 0)), axis)
    c.set_all(op, "Out", parts)


@_reg("stack")
def _stack(c, op, a):
    c.set(op, "Y", T.stack(c.xs(op, "X"), int(a.get("axis", 0))))


@_reg("unstack")
def _unstack(c, op, a):
    c.set_all(op, "Y", T.unstack(c.x(op, "X"), int(a.get("axis", 0))))


def _slice_args(c, op, a, key):
    if c.x(op, key + "Tensor", False) is not None:
        return _ints(c.x(op, key + "Tensor"))
    if op.inputs.get(key + "TensorList"):
        return _ints(c.xs(op, key + "TensorList"))
    return [int(v) for v in a.get(key.lower(), [])]


@_reg("slice", "strided_slice")
def _slice(c, op, a):
    x = c.x(op, "Input")
    axes = [int(v) for v in a.get("axes", [])]
    starts = _slice_args(c, op, a, "Starts")
    ends = _slice_args(c, op, a, "Ends")
    steps = (_slice_args(c, op, a, "Strides") if op.type == "strided_slice"
             else [1] * len(axes))
    idx = [slice(None)] * x.ndim
    for ax, s, e, st in zip(axes, starts, ends, steps):
        n = x.shape[ax]
        if st > 0:
            s = min(max(s + n if s < 0 else s, 0), n)
            e = min(max(e + n if e < 0 else e, 0), n)
            idx[ax] = slice(s, max(e, s), st)
        else:
            s = min(max(s + n if s < 0 else s, -1), n - 1)
            e = min(max(e + n if e < 0 else e, -1), n - 1)
            idx[ax] = slice(s, e if e >= 0 else None, st)
    y = x[tuple(idx)]
    dec = [int(d) for d in a.get("decrease_axis", [])]
    if dec:
        y = T.squeeze(y, dec) if len(dec) < x.ndim or y.ndim else y
    c.set(op, "Out", y)


@_reg("gather")
def _gather(c, op, a):
    axis = _input_or_attr(c, op, a, "Axis", "axis", 0, int)
    c.set(op, "Out", T.gather(c.x(op, "X"), c.x(op, "Index"), axis))


@_reg("gather_nd")
def _gather_nd(c, op, a):
    c.set(op, "Out", T.gather_nd(c.x(op, "X"), c.x(op, "Index")))


@_reg("index_select")
def _index_select(c, op, a):
    c.set(op, "Out", T.index_select(c.x(op, "X"), c.x(op, "Index"), int(a.get("dim", 0))))


@_reg("expand_v2")
def _expand(c, op, a):
    x = c.x(op, "X")
    if c.x(op, "Shape", False) is not None:
        shape = _ints(c.x(op, "Shape"))
    elif op.inputs.get("expand_shapes_tensor"):
        shape = _ints(c.xs(op, "expand_shapes_tensor"))
    else:
        shape = [int(v) for v in a.get("shape", [])]
    lead = len(shape) - x.ndim
    shape = [x.shape[i - lead] if d == -1 else d for i, d in enumerate(shape)]
    c.set(op, "Out", T.expand(x, shape))


@_reg("expand_as_v2")
def _expand_as(c, op, a):
    y = c.x(op, "Y", False)
    shape = y.shape if y is not None else [int(v) for v in a.get("target_shape", [])]
    c.set(op, "Out", T.expand(c.x(op, "X"), shape))


@_reg("tile")
def _tile(c, op, a):
    if c.x(op, "RepeatTimes", False) is not None:
        reps = _ints(c.x(op, "RepeatTimes"))
    elif op.inputs.get("repeat_times_tensor"):
        reps = _ints(c.xs(op, "repeat_times_tensor"))
    else:
        reps = [int(v) for v in a.get("repeat_times", [])]
    c.set(op, "Out", T.tile(c.x(op, "X"), reps))


@_reg("affine_grid")
def _affine_grid(c, op, a):
    st = c.x(op, "OutputShape", False)
    shape = _ints(st) if st is not None else [int(v) for v in a.get("output_shape", [])]
    c.set(op, "Output", F.affine_grid(c.x(op, "Theta"), shape,
                                      bool(a.get("align_corners", True))))


@_reg("grid_sampler")
def _grid_sampler(c, op, a):
    c.set(op, "Output", F.grid_sample(c.x(op, "X"), c.x(op, "Grid"), a.get("mode", "bilinear"),
                                      a.get("padding_mode", "zeros"),
                                      bool(a.get("align_corners", True))))


@_reg("argsort")
def _argsort(c, op, a):
    x = c.x(op, "X")
    axis, desc = int(a.get("axis", -1)), bool(a.get("descending", False))
    idx = T.argsort(x, axis, desc)
    c.set(op, "Indices", idx)
    c.set(op, "Out", T.take_along_axis(x, idx, axis))


@_reg("take_along_axis")
def _take_along_axis(c, op, a):
    c.set(op, "Result", T.take_along_axis(c.x(op, "Input"), c.x(op, "Index"),
                                          int(a.get("Axis", 0))))


@_reg("tril_triu")
def _tril_triu(c, op, a):
    fn = T.tril if a.get("lower", True) else T.triu
    c.set(op, "Out", fn(c.x(op, "X"), int(a.get("diagonal", 0))))


@_reg("logsumexp")
def _logsumexp(c, op, a):
    x = c.x(op, "X")
    axis = None if a.get("reduce_all", False) else [int(d) for d in a.get("axis", [])] or None
    c.set(op, "Out", T.logsumexp(x, axis, bool(a.get("keepdim", False))))


@_reg("roll")
def _roll(c, op, a):
    st = c.x(op, "ShiftsTensor", False)
    shifts = _ints(st) if st is not None else [int(v) for v in a.get("shifts", [])]
    axis = [int(v) for v in a.get("axis", [])]
    c.set(op, "Out", T.roll(c.x(op, "X"), shifts, axis or None))


@_reg("linspace")
def _linspace(c, op, a):
    start, stop = (_scalar(c.x(op, k)) for k in ("Start", "Stop"))
    c.set(op, "Out", T.linspace(start, stop, int(_scalar(c.x(op, "Num"))),
                                DTYPES[a.get("dtype", 5)]))


@_reg("size")
def _size(c, op, a):
    c.set(op, "Out", T.numel(c.x(op, "Input")))


@_reg("meshgrid")
def _meshgrid(c, op, a):
    c.set_all(op, "Out", T.meshgrid(*c.xs(op, "X")))


@_reg("flip")
def _flip(c, op, a):
    c.set(op, "Out", T.flip(c.x(op, "X"), [int(v) for v in a.get("axis", [])]))


@_reg("one_hot_v2")
def _one_hot(c, op, a):
    depth = _input_or_attr(c, op, a, "depth_tensor", "depth", -1, int)
    c.set(op, "Out", F.one_hot(c.x(op, "X"), depth))


@_reg("pixel_shuffle")
def _pixel_shuffle(c, op, a):
    c.set(op, "Out", F.pixel_shuffle(c.x(op, "X"), int(a.get("upscale_factor", 1)),
                                     a.get("data_format", "NCHW")))


@_reg("pad3d")
def _pad3d(c, op, a):
    x = c.x(op, "X")
    pt = c.x(op, "Paddings", False)
    pads = _ints(pt) if pt is not None else [int(v) for v in a.get("paddings", [0] * 6)]
    c.set(op, "Out", F.pad(x, pads, a.get("mode", "constant"), float(a.get("value", 0.0)),
                           a.get("data_format", "NCDHW")))


@_reg("pad2d")
def _pad2d(c, op, a):
    x = c.x(op, "X")
    pt = c.x(op, "Paddings", False)
    p = _ints(pt) if pt is not None else [int(v) for v in a.get("paddings", [0] * 4)]
    # pad2d lists [top, bottom, left, right]; F.pad takes [left, right, top, bottom]
    c.set(op, "Out", F.pad(x, [p[2], p[3], p[0], p[1]], a.get("mode", "constant"),
                           float(a.get("pad_value", 0.0)), a.get("data_format", "NCHW")))


@_reg("pad")
def _pad(c, op, a):
    x = c.x(op, "X")
    p = [int(v) for v in a.get("paddings", [])]
    c.set(op, "Out", F.pad(x, p, "constant", float(a.get("pad_value", 0.0))))


# --------------------------------------------------------------------------- interpolation
def _interp(c, op, a):
    x = c.x(op, "X")
    nd = x.ndim - 2
    method = a.get("interp_method", op.type.split("_")[0])
    mode = {"bilinear": "bilinear", "nearest": "nearest", "bicubic": "bicubic",
            "linear": "linear", "trilinear": "trilinear"}[method]
    fmt = a.get("data_layout", "NCHW")
    if nd == 1:
        fmt = "NWC" if fmt in ("NHWC", "NWC") else "NCW"
    elif nd == 3:
        fmt = "NDHWC" if fmt in ("NHWC", "NDHWC") else "NCDHW"
    size = scale = None
    if op.inputs.get("SizeTensor"):
        size = _ints(c.xs(op, "SizeTensor"))
    elif c.x(op, "OutSize", False) is not None:
        size = _ints(c.x(op, "OutSize"))
    else:
        st = c.x(op, "Scale", False)
        sc = ([float(v) for v in np.asarray(st.numpy()).reshape(-1)] if st is not None
              else [float(v) for v in a.get("scale", []) or []])
        if sc and all(v > 0 for v in sc):
            scale = sc[0] if len(sc) == 1 else sc[:nd]
        else:
            size = [int(a.get(k, -1)) for k in ("out_d", "out_h", "out_w")][3 - nd:]
    c.set(op, "Out", F.interpolate(x, size=size, scale_factor=scale, mode=mode,
                                   align_corners=bool(a.get("align_corners", True)),
                                   align_mode=int(a.get("align_mode", 1)), data_format=fmt))


for _name in ("bilinear_interp_v2", "nearest_interp_v2", "bicubic_interp_v2",
              "linear_interp_v2", "trilinear_interp_v2"):
    OPS[_name] = _interp


# ------------------------------------------------------------------------------- recurrent
@_reg("rnn")
def _rnn(c, op, a):
    """Paddle's fused multi-layer RNN: time-major input, weights listed as all [w_ih, w_hh]
    pairs (layer by layer, direction by direction) and then all [b_ih, b_hh] pairs."""
    from ..framework.op import apply
    from ..nn.functional.rnn import _seq_kernel

    x = c.x(op, "Input")
    mode = a.get("mode", "LSTM")
    layers, bidi = int(a.get("num_layers", 1)), bool(a.get("is_bidirec", False))
    dirs = 2 if bidi else 1
    ws = c.xs(op, "WeightList")
    half = len(ws) // 2
    states = c.xs(op, "PreState")
    h0 = states[0]
    c0 = states[1] if mode == "LSTM" else None
    mask = None
    sl = c.x(op, "SequenceLength", False)
    if sl is not None:
        lens = np.asarray(sl.numpy()).reshape(-1)
        mask = np.arange(x.shape[0])[None, :] < lens[:, None]
    hs, cs = [], []
    for layer in range(layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            w_ih, w_hh = ws[2 * k], ws[2 * k + 1]
            b_ih, b_hh = ws[half + 2 * k], ws[half + 2 * k + 1]
            res = apply(_seq_kernel, x, h0[k], None if c0 is None else c0[k], w_ih, w_hh,
                        b_ih, b_hh, mask, mode=mode, reverse=d == 1, time_major=True,
                        zero_pad=True)
            outs.append(res[0])
            hs.append(res[1])
            if mode == "LSTM":
                cs.append(res[2])
        x = outs[0] if dirs == 1 else T.concat(outs, -1)
    c.set(op, "Out", x)
    c.set(op, "State", T.stack(hs, 0), 0)
    if mode == "LSTM":
        c.set(op, "State", T.stack(cs, 0), 1)


# ================================================================================ the layer
OPS["hl_conv_bn"] = _conv_bn


class ProgramLayer(TranslatedLayer):
    """A Paddle inference program loaded by ``paddle.jit.load``: calling it runs the program.

    The persistable variables are the layer's parameters, registered as ``param_0``,
    ``param_1``, ... in the order of the parameters file (sorted variable names), each keeping
    its variable name, as Paddle's loaded layers do; with a ``.pdiparams.info`` beside the
    parameters file, each keeps the ``stop_gradient`` recorded there (buffers such as batch
    norm statistics stay out of training), as in Paddle. The program runs in eval mode (it is
    the inference program Paddle saved); inputs are checked against the saved feed shapes (free
    dims, -1, take any size) and dtypes before anything runs. It is a ``TranslatedLayer``, what
    ``jit.load`` returns in Paddle.

    Args:
        program (Program): the decoded program.
        arrays (dict): variable name -> array (the parameters file's content).
        stop_gradient (dict, optional): variable name -> stop_gradient (from the info file).
    """

    def __init__(self, program: Program, arrays: dict, stop_gradient=None):
        Layer.__init__(self)
        from ..framework.parameter import Parameter
        from ..static.input import InputSpec

        self._prog = program
        self._vars = {}
        stop_gradient = stop_gradient or {}
        for i, name in enumerate(program.persistables):
            arr = arrays[name]
            frozen = stop_gradient.get(name, np.issubdtype(arr.dtype, np.integer))
            p = Parameter(arr, name=name, trainable=not frozen)
            self.add_parameter(f"param_{i}", p)
            self._vars[name] = f"param_{i}"
        self._specs = [InputSpec(shape, dtype, name) for name, shape, dtype in program.feeds]
        # convolutions + batch norms run folded into one convolution when no gradient is wanted
        self._ops = fuse_conv_bn(program)
        self._drops = last_uses(program, self._ops)
        self.eval()

    @property
    def input_names(self) -> list:
        return [n for n, _, _ in self._prog.feeds]

    @property
    def output_names(self) -> list:
        return list(self._prog.fetches)

    def program(self, method_name="forward"):
        """The decoded :class:`Program`."""
        return self._prog

    def forward(self, *inputs):
        feeds = self._prog.feeds
        if len(inputs) != len(feeds):
            raise ValueError(f"{type(self).__name__} ({self._prog.path}): expected "
                             f"{len(feeds)} inputs ({', '.join(n for n, _, _ in feeds)}), got "
                             f"{len(inputs)}")
        xs = []
        for (name, shape, dtype), x in zip(feeds, inputs):
            x = x if isinstance(x, Tensor) else Tensor(np.asarray(x))
            ok = x.ndim == len(shape) and all(
                s < 0 or s == v for s, v in zip(shape, x.shape))
            if not ok:
                raise ValueError(f"{type(self).__name__} ({self._prog.path}): input '{name}' "
                                 f"has shape {x.shape}, the program's input_spec is {shape} "
                                 "(-1: any size)")
            if x.dtype.name != dtype:
                raise TypeError(f"{type(self).__name__} ({self._prog.path}): input '{name}' "
                                f"has dtype {x.dtype.name}, the program expects {dtype}")
            xs.append(x)
        params = {n: getattr(self, k) for n, k in self._vars.items()}
        outs = run(self._prog, xs, params, self._ops, self._drops)
        return outs[0] if len(outs) == 1 else outs


def load_program(model_file: str, params_file: str) -> ProgramLayer:
    """Read a Paddle inference model (``.pdmodel`` + ``.pdiparams``) into a ProgramLayer."""
    from . import _pdiparams

    program = read_program(model_file)
    if program.persistables:
        if not os.path.exists(params_file):
            raise FileNotFoundError(f"jit.load: {params_file} does not exist ({model_file} "
                                    f"has {len(program.persistables)} persistable variables "
                                    "to read from it)")
        arrays = _pdiparams.read(params_file, program.persistables)
    else:
        arrays = {}
    for name in program.persistables:
        shape, _ = program.var_info.get(name, (None, None))
        got = list(arrays[name].shape)
        if shape is not None and got != shape and not (shape == [] and got == [1]):
            raise ValueError(f"jit.load: {params_file}: variable '{name}' has shape {got}, "
                             f"{model_file} declares {shape}")
    return ProgramLayer(program, arrays, _info_stop_gradient(params_file + ".info"))


def _info_stop_gradient(info_file):
    """``{variable: stop_gradient}`` from a ``.pdiparams.info`` file (plain data only), or
    None when there is none."""
    if not os.path.exists(info_file):
        return None
    import pickle

    from ._traced import _InfoUnpickler

    with open(info_file, "rb") as f:
        try:
            info = _InfoUnpickler(f).load()
        except pickle.UnpicklingError:
            raise
        except Exception as e:
            raise ValueError(f"jit.load: {info_file} is not a readable .pdiparams.info file "
                             f"({type(e).__name__}: {e})") from None
    if not isinstance(info, dict):
        raise ValueError(f"jit.load: {info_file} is not a .pdiparams.info mapping")
    return {k: bool(v["stop_gradient"]) for k, v in info.items()
            if isinstance(v, dict) and "stop_gradient" in v}


def load_paddle(path: str, configs: dict):
    """``jit.load``'s reader for Paddle's format: the ProgramLayer of the model at ``path``
    (a prefix, or a folder with ``model_filename``/``params_filename`` configs), or None when
    the model file is not a Paddle ProgramDesc (paddle_hl's own program format, or missing:
    the caller reports that)."""
    if configs.get("model_filename") or configs.get("params_filename"):
        model = os.path.join(path, configs.get("model_filename") or "__model__")
        prefix = model[: -len(".pdmodel")] if model.endswith(".pdmodel") else model
        params = (os.path.join(path, configs["params_filename"])
                  if configs.get("params_filename") else prefix + ".pdiparams")
    else:
        model, params = path + ".pdmodel", path + ".pdiparams"
    if not os.path.isfile(model) or not is_program_desc(model):
        return None
    return load_program(model, params)
