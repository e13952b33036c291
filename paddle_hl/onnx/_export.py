"""Traced program -> ONNX graph."""

from __future__ import annotations

import math

import numpy as np

from ..framework.io import write_file
from ..jit import _program
from ..jit._traced import _example, _flat_specs, _to_host, trace

__all__ = []

MIN_OPSET = 13
MAX_OPSET = 17


def _onnx():
    try:
        import onnx
        from onnx import helper, numpy_helper
    except ImportError:
        raise ImportError("paddle.onnx.export needs the 'onnx' package: "
                          "pip install 'paddle_hl[onnx]' (or pip install onnx)") from None
    return onnx, helper, numpy_helper


class _Graph:
    """Builds nodes and initializers; knows every program value's dtype and shape."""

    def __init__(self, program, params, specs, meta, opset):
        self.onnx, self.helper, self.nh = _onnx()
        self.program = program
        self.params = params
        self.specs = specs
        self.meta = meta  # value ref -> (dtype, shape at the check size)
        self.opset = opset
        self.nodes = []
        self.inits = {}
        self.names = {}
        self.n = 0
        self._d = {}
        self.in_names = [s.name or f"x{i}" for i, s in enumerate(specs)]

    # -- naming
    def tmp(self, hint="t"):
        self.n += 1
        return f"{hint}_{self.n}"

    def const(self, arr, hint="c"):
        arr = np.asarray(arr)
        name = self.tmp(hint)
        self.inits[name] = self.nh.from_array(arr, name)
        return name

    def i64(self, values, hint="shape"):
        return self.const(np.asarray(values, dtype=np.int64), hint)

    def node(self, op, inputs, n_out=1, **attrs):
        outs = [self.tmp(op.lower()) for _ in range(n_out)]
        self.nodes.append(self.helper.make_node(op, list(inputs), outs, **attrs))
        return outs[0] if n_out == 1 else outs

    # -- the free-dim symbols as 1-element int64 tensors, read off the first input having them
    def free_dim(self, i):
        if i not in self._d:
            axis = _program.free_axes(self.specs)[i]
            for n, s in enumerate(self.specs):
                if len(s.shape) > axis and s.shape[axis] == -1:
                    shp = self.node("Shape", [self.in_names[n]])
                    self._d[i] = self.node("Gather", [shp, self.i64([axis])], axis=0)
                    break
        return self._d[i]

    def int_vec(self, items):
        """An int64 1-D tensor from ints and Syms (Syms become expressions of the symbols)."""
        if not any(type(v) is _program.Sym for v in items):
            return self.i64([int(v) for v in items])
        parts = []
        for v in items:
            if type(v) is not _program.Sym:
                parts.append(self.i64([int(v)]))
                continue
            acc = None
            for coef, mono in v.terms():
                term = None
                for i in mono:
                    term = self.free_dim(i) if term is None else self.node(
                        "Mul", [term, self.free_dim(i)])
                if term is None:
                    term = self.i64([coef])
                elif coef != 1:
                    term = self.node("Mul", [term, self.i64([coef])])
                acc = term if acc is None else self.node("Add", [acc, term])
            parts.append(self.i64([0]) if acc is None else acc)
        return self.node("Concat", parts, axis=0)

    # -- program values
    def value(self, ref):
        kind = ref[0]
        if kind == "v":
            return self.names[ref[1]]
        if kind == "in":
            return self.in_names[ref[1]]
        if kind == "p":
            name = f"param::{ref[1]}"
            if name not in self.inits:
                self.inits[name] = self.nh.from_array(np.asarray(self.params[ref[1]]), name)
            return name
        if kind == "c":
            c = self.program["consts"][ref[1]]
            if c[0] == "c":
                return self.const(c[1], "const")
            if c[0] == "ints":
                vec = self.int_vec(list(c[1]))
                if np.dtype(c[3]) != np.int64:
                    vec = self.node("Cast", [vec], to=_onnx_type(self, c[3]))
                return self.node("Reshape", [vec, self.i64(list(c[2]))])
            if c[0] == "fill":
                shape, fill, dt = c[1], c[2], np.dtype(c[3])
                tensor = self.nh.from_array(np.asarray([fill], dtype=dt))
                return self.node("ConstantOfShape", [self.int_vec(shape)], value=tensor)
            shape, start, step, dt = c[1], c[2], c[3], np.dtype(c[4])
            size = self.node("ReduceProd", [self.int_vec(shape)], keepdims=0)
            rng = self.node("Range", [self.const(np.asarray(start, dt)), self.node(
                "Add", [self.const(np.asarray(start, dt)), self.node(
                    "Mul", [self.node("Cast", [size], to=_onnx_type(self, dt)),
                            self.const(np.asarray(step, dt))])]),
                self.const(np.asarray(step, dt))])
            return self.node("Reshape", [rng, self.int_vec(shape)])
        if kind == "reshape":
            return self.node("Reshape", [self.value(ref[1]), self.int_vec(ref[2])])
        if kind == "view":
            return self._view(ref)
        raise ValueError(f"onnx.export: cannot express the value {ref[0]!r} in ONNX")

    def meta_of(self, ref):
        m = self.meta.get(_key(ref))
        if m is None:
            raise ValueError(f"onnx.export: internal error: no dtype for {ref!r}")
        return m

    def scalar(self, v, like_ref):
        dt = self.meta_of(like_ref)[0]
        return self.const(np.asarray(v, dtype=dt), "scalar")

    def _view(self, ref):
        src, off, shape, strides = ref[1], ref[2], ref[3], ref[4]
        dt, bshape = self.meta_of(src)
        cont = [int(np.prod(bshape[k + 1:])) for k in range(len(bshape))]
        if len(shape) != len(bshape) or any(type(o) is _program.Sym for o in (off,)):
            raise ValueError("onnx.export: a view that changes rank or moves with the free dim "
                             "cannot be written as an ONNX Slice")
        if any(type(s) is not _program.Sym and int(s) != c and shape[k] != 1
               for k, (s, c) in enumerate(zip(strides, cont))):
            raise ValueError("onnx.export: a strided (stepped) view cannot be written as an "
                             "ONNX Slice")
        starts, ends, axes = [], [], []
        rem = int(off)
        for k, c in enumerate(cont):
            st = rem // c if c else 0
            rem -= st * c
            size = shape[k]
            if type(size) is _program.Sym:
                if st:
                    raise ValueError("onnx.export: unsupported view along the free dim")
                continue
            if st == 0 and size == bshape[k]:
                continue
            starts.append(st)
            ends.append(st + int(size))
            axes.append(k)
        if not axes:
            return self.value(src)
        return self.node("Slice", [self.value(src), self.i64(starts), self.i64(ends),
                                   self.i64(axes)])


def _onnx_type(g, dt):
    return g.helper.np_dtype_to_tensor_dtype(np.dtype(dt))


def _key(ref):
    return ref if ref[0] != "lit" else None


def _lit(ref):
    return ref[1] if ref[0] == "lit" else _NOT_LIT


_NOT_LIT = object()


# ----------------------------------------------------------------------------- op handlers
def _binary(onnx_op):
    def h(g, ins, attrs, outs):
        a, b = ins
        an = g.value(a) if a[0] != "lit" else g.scalar(a[1], b)
        bn = g.value(b) if b[0] != "lit" else g.scalar(b[1], a)
        return [g.node(onnx_op, [an, bn])]
    return h


def _unary(onnx_op, **kw):
    def h(g, ins, attrs, outs):
        return [g.node(onnx_op, [g.value(ins[0])], **kw)]
    return h


def _relu6(g, ins, attrs, outs):
    return [g.node("Clip", [g.value(ins[0]), g.scalar(0.0, ins[0]), g.scalar(6.0, ins[0])])]


def _gelu(g, ins, attrs, outs):
    x = g.value(ins[0])
    half, one = g.scalar(0.5, ins[0]), g.scalar(1.0, ins[0])
    if attrs.get("approximate"):
        c = g.scalar(math.sqrt(2 / math.pi), ins[0])
        k = g.scalar(0.044715, ins[0])
        inner = g.node("Mul", [c, g.node("Add", [x, g.node("Mul", [k, g.node(
            "Mul", [x, g.node("Mul", [x, x])])])])])
        t = g.node("Tanh", [inner])
    else:
        t = g.node("Erf", [g.node("Div", [x, g.scalar(math.sqrt(2.0), ins[0])])])
    return [g.node("Mul", [g.node("Mul", [half, x]), g.node("Add", [one, t])])]


def _leaky(g, ins, attrs, outs):
    return [g.node("LeakyRelu", [g.value(ins[0])], alpha=float(attrs["slope"]))]


def _hardswish(g, ins, attrs, outs):
    x = g.value(ins[0])
    return [g.node("Mul", [x, g.node("HardSigmoid", [x], alpha=1.0 / 6, beta=0.5)])]


def _hardsigmoid(g, ins, attrs, outs):
    return [g.node("HardSigmoid", [g.value(ins[0])], alpha=float(attrs["slope"]),
                   beta=float(attrs["offset"]))]


def _silu(g, ins, attrs, outs):
    x = g.value(ins[0])
    return [g.node("Mul", [x, g.node("Sigmoid", [x])])]


def _softmax(g, ins, attrs, outs):
    return [g.node("Softmax", [g.value(ins[0])], axis=int(attrs["axis"]))]


def _pow(g, ins, attrs, outs):
    a, b = ins
    return [g.node("Pow", [g.value(a), g.value(b) if b[0] != "lit" else g.scalar(b[1], a)])]


def _conv(g, ins, attrs, outs):
    if attrs.get("cl"):
        raise ValueError("onnx.export: channels-last convolution is not supported; use NCHW")
    pads = [p[0] for p in attrs["pads"]] + [p[1] for p in attrs["pads"]]
    inputs = [g.value(ins[0]), g.value(ins[1])]
    if ins[2][0] != "lit":
        inputs.append(g.value(ins[2]))
    return [g.node("Conv", inputs, strides=list(attrs["stride"]), pads=pads,
                   dilations=list(attrs["dil"]), group=int(attrs["groups"]))]


def _maxpool(g, ins, attrs, outs):
    if attrs.get("cl") or attrs.get("mask"):
        raise ValueError("onnx.export: channels-last or index-returning max pooling is not "
                         "supported")
    ext = attrs["ext"]
    return [g.node("MaxPool", [g.value(ins[0])], kernel_shape=list(attrs["ksize"]),
                   strides=list(attrs["stride"]),
                   pads=[e[0] for e in ext] + [e[1] for e in ext])]


def _avgpool(g, ins, attrs, outs):
    if attrs.get("cl") or attrs.get("divisor"):
        raise ValueError("onnx.export: channels-last or divisor_override average pooling is "
                         "not supported")
    pads, ext = attrs["pads"], attrs["ext"]
    if attrs["exclusive"]:
        total = [e for e in ext]
        include = 0
    else:
        if any(a != b for a, b in zip(pads, ext)):
            raise ValueError("onnx.export: ceil_mode average pooling with exclusive=False is "
                             "not supported")
        total, include = pads, 1
    return [g.node("AveragePool", [g.value(ins[0])], kernel_shape=list(attrs["ksize"]),
                   strides=list(attrs["stride"]), count_include_pad=include,
                   pads=[e[0] for e in total] + [e[1] for e in total])]


def _adaptive_avg(g, ins, attrs, outs):
    if attrs.get("cl"):
        raise ValueError("onnx.export: channels-last adaptive pooling is not supported")
    osz = attrs["osz"]
    x = g.value(ins[0])
    if all(o == 1 for o in osz):
        return [g.node("GlobalAveragePool", [x])]
    from ..nn.functional.pooling import _avg_matrix

    dt, shape = g.meta_of(ins[0])
    size = shape[2:]
    if all(n % o == 0 for n, o in zip(size, osz)):
        k = [n // o for n, o in zip(size, osz)]
        return [g.node("AveragePool", [x], kernel_shape=k, strides=k)]
    # uneven windows: contract each spatial dim with its averaging matrix (as the kernel does)
    nd = len(shape)
    for d, (n, o) in enumerate(zip(size, osz)):
        m = g.const(_avg_matrix(n, o).astype(dt), "avgmat")
        ax = 2 + d
        perm = list(range(nd))
        perm[ax], perm[-2] = perm[-2], perm[ax]
        moved = g.node("Transpose", [x], perm=perm) if ax != nd - 2 else x
        y = g.node("MatMul", [m, moved])
        x = g.node("Transpose", [y], perm=perm) if ax != nd - 2 else y
    return [x]


def _batchnorm(g, ins, attrs, outs):
    dt, shape = g.meta_of(ins[0])
    pshape = attrs["pshape"]
    if len(pshape) < 2 or pshape[0] != 1 or any(p != 1 for p in pshape[2:]) or len(shape) < 2:
        raise ValueError("onnx.export: only channel-first batch norm is supported")
    c = pshape[1]
    x = g.value(ins[0])
    w = g.value(ins[1]) if ins[1][0] != "lit" else g.const(np.ones(c, dt))
    b = g.value(ins[2]) if ins[2][0] != "lit" else g.const(np.zeros(c, dt))
    if len(shape) == 2:
        x = g.node("Unsqueeze", [x, g.i64([2])])
        y = g.node("BatchNormalization", [x, w, b, g.value(ins[3]), g.value(ins[4])],
                   epsilon=float(attrs["eps"]))
        return [g.node("Squeeze", [y, g.i64([2])])]
    return [g.node("BatchNormalization", [x, w, b, g.value(ins[3]), g.value(ins[4])],
                   epsilon=float(attrs["eps"]))]


def _scale(g, ins, attrs, outs):
    x = g.value(ins[0])
    sc, b = g.scalar(attrs["s"], ins[0]), g.scalar(attrs["b"], ins[0])
    if attrs["after"]:
        return [g.node("Add", [g.node("Mul", [x, sc]), b])]
    return [g.node("Mul", [g.node("Add", [x, b]), sc])]


def _norm(g, ins, attrs, outs):
    """Normalization over ``raxes`` of x viewed as ``view`` (layer/group/instance norm)."""
    dt, shape = g.meta_of(ins[0])
    x = g.value(ins[0])
    xv = g.node("Reshape", [x, g.int_vec(list(attrs["view"]))])
    axes = [int(a) for a in attrs["raxes"]]
    mean = g.node("ReduceMean", [xv], axes=axes, keepdims=1)
    xc = g.node("Sub", [xv, mean])
    var = g.node("ReduceMean", [g.node("Mul", [xc, xc])], axes=axes, keepdims=1)
    y = g.node("Div", [xc, g.node("Sqrt", [g.node("Add", [var, g.scalar(attrs["eps"],
                                                                          ins[0])])])])
    pshape = g.i64([int(p) for p in attrs["pshape"]])
    if ins[1][0] != "lit":
        y = g.node("Mul", [y, g.node("Reshape", [g.value(ins[1]), pshape])])
    if ins[2][0] != "lit":
        y = g.node("Add", [y, g.node("Reshape", [g.value(ins[2]), pshape])])
    y = g.node("Reshape", [y, g.node("Shape", [x])])
    return [y, g.node("Squeeze", [mean, g.i64(axes)]), g.node("Squeeze", [var, g.i64(axes)])]


def _cast(g, ins, attrs, outs):
    return [g.node("Cast", [g.value(ins[0])], to=_onnx_type(g, np.dtype(attrs["dtype"])))]


def _where(g, ins, attrs, outs):
    c, x, y = ins
    xn = g.value(x) if x[0] != "lit" else g.scalar(x[1], y)
    yn = g.value(y) if y[0] != "lit" else g.scalar(y[1], x)
    return [g.node("Where", [g.value(c), xn, yn])]


def _compare(onnx_op):
    def h(g, ins, attrs, outs):
        a, b = ins
        an = g.value(a) if a[0] != "lit" else g.scalar(a[1], b)
        bn = g.value(b) if b[0] != "lit" else g.scalar(b[1], a)
        return [g.node(onnx_op, [an, bn])]
    return h


def _linear(g, ins, attrs, outs):
    y = g.node("MatMul", [g.value(ins[0]), g.value(ins[1])])
    if len(ins) > 2 and ins[2][0] != "lit":
        y = g.node("Add", [y, g.value(ins[2])])
    return [y]


def _matmul(g, ins, attrs, outs):
    a, b = g.value(ins[0]), g.value(ins[1])

    def t(name, ref):
        nd = len(g.meta_of(ref)[1])
        perm = list(range(nd - 2)) + [nd - 1, nd - 2]
        return g.node("Transpose", [name], perm=perm)

    if attrs.get("tx"):
        a = t(a, ins[0])
    if attrs.get("ty"):
        b = t(b, ins[1])
    return [g.node("MatMul", [a, b])]


def _reshape(g, ins, attrs, outs):
    return [g.node("Reshape", [g.value(ins[0]), g.int_vec(list(attrs["shape"]))])]


def _transpose(g, ins, attrs, outs):
    return [g.node("Transpose", [g.value(ins[0])], perm=[int(p) for p in attrs["perm"]])]


def _concat(g, ins, attrs, outs):
    return [g.node("Concat", [g.value(r) for r in ins], axis=int(attrs["axis"]))]


def _shuffle(g, ins, attrs, outs):
    """Pixel/channel shuffles: reshape(pre) -> transpose(perm) -> reshape(post)."""
    y = g.node("Reshape", [g.value(ins[0]), g.int_vec(list(attrs["pre"]))])
    y = g.node("Transpose", [y], perm=[int(p) for p in attrs["perm"]])
    return [g.node("Reshape", [y, g.int_vec(list(attrs["post"]))])]


def _split(g, ins, attrs, outs):
    sections = list(attrs["sections"])
    if any(type(n) is _program.Sym for n in sections):
        raise ValueError("onnx.export: split sizes that follow a free dim are not supported")
    res = g.node("Split", [g.value(ins[0]), g.i64(sections)], n_out=len(sections),
                 axis=int(attrs["axis"]))
    return [res] if len(sections) == 1 else list(res)


def _stack(g, ins, attrs, outs):
    ax = int(attrs["axis"])
    parts = [g.node("Unsqueeze", [g.value(r), g.i64([ax])]) for r in ins]
    return [parts[0] if len(parts) == 1 else g.node("Concat", parts, axis=ax)]


def _reduce(onnx_op):
    def h(g, ins, attrs, outs):
        if attrs.get("dtype") is not None:
            raise ValueError(f"onnx.export: {onnx_op} with a dtype is not supported")
        nd = len(g.meta_of(ins[0])[1])
        axes = attrs["axis"]
        axes = list(range(nd)) if axes is None else [int(a) % max(nd, 1) for a in axes]
        keep = int(bool(attrs["keepdim"]))
        if onnx_op == "ReduceSum" or g.opset >= 18:
            return [g.node(onnx_op, [g.value(ins[0]), g.i64(axes)], keepdims=keep)]
        return [g.node(onnx_op, [g.value(ins[0])], axes=axes, keepdims=keep)]
    return h


def _embedding(g, ins, attrs, outs):
    pad = ins[2][1] if len(ins) > 2 and ins[2][0] == "lit" else -1
    if pad is not None and pad >= 0:
        raise ValueError("onnx.export: embedding with padding_idx is not supported")
    return [g.node("Gather", [g.value(ins[1]), g.value(ins[0])], axis=0)]


def _getitem(g, ins, attrs, outs):
    idx = attrs["idx"]
    idx = idx if isinstance(idx, tuple) else (idx,)
    shape = g.meta_of(ins[0])[1]
    x = g.value(ins[0])
    n_real = sum(1 for i in idx if i is not None and i is not Ellipsis)
    axis = 0
    squeeze, unsqueeze = [], []
    starts, ends, axes, steps = [], [], [], []
    out_axis = 0
    for i in idx:
        if i is Ellipsis:
            skip = len(shape) - n_real
            axis += skip
            out_axis += skip
        elif i is None:
            unsqueeze.append(out_axis)
            out_axis += 1
        elif isinstance(i, (int, np.integer)) and not isinstance(i, bool):
            starts.append(int(i))
            ends.append(int(i) + 1 if int(i) != -1 else np.iinfo(np.int64).max)
            axes.append(axis)
            steps.append(1)
            squeeze.append(axis)
            axis += 1
        elif isinstance(i, slice):
            st = 1 if i.step is None else int(i.step)
            big = np.iinfo(np.int64).max
            starts.append((0 if st > 0 else -1) if i.start is None else int(i.start))
            ends.append((big if st > 0 else -big) if i.stop is None else int(i.stop))
            axes.append(axis)
            steps.append(st)
            axis += 1
            out_axis += 1
        else:
            raise ValueError(f"onnx.export: advanced indexing ({type(i).__name__}) is not "
                             "supported")
    if axes:
        x = g.node("Slice", [x, g.i64(starts), g.i64(ends), g.i64(axes), g.i64(steps)])
    if squeeze:
        x = g.node("Squeeze", [x, g.i64(squeeze)])
    if unsqueeze:
        x = g.node("Unsqueeze", [x, g.i64(unsqueeze)])
    return [x]


_GATES = {"LSTM": (4, [0, 3, 1, 2]), "GRU": (3, [1, 0, 2]), "RNN_TANH": (1, [0]),
          "RNN_RELU": (1, [0])}


def _rnn(g, ins, attrs, outs):
    mode = attrs["mode"]
    if ins[7][0] != "lit" or ins[7][1] is not None:
        raise ValueError("onnx.export: RNNs with sequence_length are not supported")
    n_gates, order = _GATES[mode]

    def weights(ref, bias=False):
        if ref[0] == "lit":
            return None
        if ref[0] != "p":
            raise ValueError("onnx.export: RNN weights must be parameters")
        w = np.asarray(g.params[ref[1]])
        h = w.shape[0] // n_gates
        # Paddle orders gates i,f,c,o (LSTM) and r,z,c (GRU); ONNX i,o,f,c and z,r,h
        return np.concatenate([w[k * h:(k + 1) * h] for k in order], axis=0)

    w_ih, w_hh = weights(ins[3]), weights(ins[4])
    hidden = w_hh.shape[1]
    b_ih, b_hh = weights(ins[5]), weights(ins[6])
    zeros = np.zeros(n_gates * hidden, w_ih.dtype)
    bias = np.concatenate([zeros if b_ih is None else b_ih, zeros if b_hh is None else b_hh])
    x = g.value(ins[0])
    if not attrs["time_major"]:
        x = g.node("Transpose", [x], perm=[1, 0, 2])
    h0 = g.node("Unsqueeze", [g.value(ins[1]), g.i64([0])])
    inputs = [x, g.const(w_ih[None], "W"), g.const(w_hh[None], "R"), g.const(bias[None], "B"),
              "", h0]
    kw = {"hidden_size": int(hidden), "direction": "reverse" if attrs["reverse"] else "forward"}
    if mode == "LSTM":
        inputs.append(g.node("Unsqueeze", [g.value(ins[2]), g.i64([0])]))
        y, yh, yc = g.node("LSTM", inputs, n_out=3, **kw)
    elif mode == "GRU":
        y, yh = g.node("GRU", inputs, n_out=2, linear_before_reset=1, **kw)
    else:
        y, yh = g.node("RNN", inputs, n_out=2,
                       activations=["Tanh" if mode == "RNN_TANH" else "Relu"], **kw)
    y = g.node("Squeeze", [y, g.i64([1])])
    if not attrs["time_major"]:
        y = g.node("Transpose", [y], perm=[1, 0, 2])
    res = [y, g.node("Squeeze", [yh, g.i64([0])])]
    if mode == "LSTM":
        res.append(g.node("Squeeze", [yc, g.i64([0])]))
    return res


_M = "paddle_hl.tensor.math"
_A = "paddle_hl.nn.functional.activation"
HANDLERS = {
    f"{_M}:_add": _binary("Add"), f"{_M}:_sub": _binary("Sub"), f"{_M}:_mul": _binary("Mul"),
    f"{_M}:_div": _binary("Div"), f"{_M}:_mul_scalar": _binary("Mul"),
    f"{_M}:_maximum": _binary("Max"), f"{_M}:_minimum": _binary("Min"), f"{_M}:_pow": _pow,
    f"{_M}:_abs": _unary("Abs"), f"{_M}:exp#kernel": _unary("Exp"),
    f"{_M}:neg#kernel": _unary("Neg"), f"{_M}:sqrt#kernel": _unary("Sqrt"),
    f"{_M}:tanh#kernel": _unary("Tanh"), f"{_M}:sigmoid#kernel": _unary("Sigmoid"),
    f"{_M}:log#kernel": _unary("Log"),
    f"{_A}:_relu_k": _unary("Relu"), f"{_A}:_relu6_k": _relu6, f"{_A}:_gelu_k": _gelu,
    f"{_A}:_leaky_k": _leaky, f"{_A}:_hardswish_k": _hardswish, f"{_A}:_silu_k": _silu,
    f"{_A}:_hardsigmoid_k": _hardsigmoid,
    f"{_A}:_softmax_k": _softmax,
    "paddle_hl.nn.functional.conv:_conv_kernel": _conv,
    "paddle_hl.nn.functional.pooling:_maxpool_kernel": _maxpool,
    "paddle_hl.nn.functional.pooling:_avgpool_kernel": _avgpool,
    "paddle_hl.nn.functional.pooling:_adaptive_avg_kernel": _adaptive_avg,
    "paddle_hl.nn.functional.norm:_affine_k": _batchnorm,
    "paddle_hl.nn.functional.norm:_norm_k": _norm,
    f"{_M}:_scale_k": _scale,
    "paddle_hl.tensor._helpers:_cast_kernel": _cast,
    "paddle_hl.tensor.search:_where_kernel": _where,
    "paddle_hl.tensor.logic:greater_than#kernel": _compare("Greater"),
    "paddle_hl.tensor.logic:less_than#kernel": _compare("Less"),
    "paddle_hl.tensor.logic:equal#kernel": _compare("Equal"),
    "paddle_hl.nn.functional.common:_linear_kernel": _linear,
    "paddle_hl.tensor.linalg:_matmul_kernel": _matmul,
    "paddle_hl.tensor.manipulation:_reshape_kernel": _reshape,
    "paddle_hl.tensor.manipulation:_transpose_kernel": _transpose,
    "paddle_hl.tensor.manipulation:_concat_kernel": _concat,
    "paddle_hl.tensor.manipulation:_stack_kernel": _stack,
    "paddle_hl.tensor.manipulation:_split_kernel": _split,
    "paddle_hl.nn.functional.vision:_shuffle_kernel": _shuffle,
    "paddle_hl.tensor.manipulation:_gather_kernel": _getitem,
    "paddle_hl.tensor.stat:_mean_kernel": _reduce("ReduceMean"),
    "paddle_hl.tensor.stat:_sum_kernel": _reduce("ReduceSum"),
    "paddle_hl.nn.functional.input:_embedding_kernel": _embedding,
    "paddle_hl.nn.functional.rnn:_seq_kernel": _rnn,
    "paddle_hl.nn.layer.rnn:_seq_kernel": _rnn,
}


def _record_meta(program, specs, params, d):
    """Replay once, keeping each value's dtype and shape (for scalars, slices, pooling)."""
    rng = np.random.default_rng(1)
    xs = [_to_host(x._data) for x in _example(specs, d, rng)]  # the replay runs on the host
    meta = {}
    vals = {}
    consts = [_program.const_array(c, d) for c in program["consts"]]
    get = _program.resolver(vals, xs, params, consts, d)

    for op in program["ops"]:
        args = []
        for r in op["ins"]:
            if r[0] == "lit":
                args.append(_program._bind_sym(r[1], d))
                continue
            if r[0] == "seq":
                raise ValueError(f"onnx.export: op {op['fn']} takes a list of tensors, which "
                                 "the exporter does not handle")
            a = get(r)
            meta[_key(r)] = (np.dtype(a.dtype), tuple(a.shape))
            args.append(a)
        fn = _program._resolve(op["fn"])
        attrs = _program._bind_sym(op["attrs"], d)
        out, _ = fn(*args, **attrs) if attrs else fn(*args)
        outs = out if op["tuple"] else (out,)
        for k, o in zip(op["outs"], outs):
            vals[k] = o
            meta[("v", k)] = (np.dtype(o.dtype), tuple(o.shape))
    for r in program["outs"]:
        if r[0] != "lit":
            a = get(r)
            meta[_key(r)] = (np.dtype(a.dtype), tuple(a.shape))
    return meta


def export(layer, path, input_spec=None, opset_version=9, **configs):
    """Export ``layer`` to ``path + '.onnx'``.

    The forward is traced in eval mode for ``input_spec`` (as :func:`paddle_hl.jit.save` does;
    free dims stay dynamic in the ONNX model) and every kernel is written as ONNX operators
    (Conv, BatchNormalization, MaxPool/AveragePool, MatMul, Gemm-style linear, LSTM/GRU/RNN,
    elementwise math and activations, reshape/transpose/concat/slice, reductions, Gather).
    A kernel without an ONNX form raises ValueError naming it.

    Args:
        layer (Layer): the layer to export.
        path (str): path prefix; the file is ``path + '.onnx'``.
        input_spec (list[InputSpec|Tensor], optional): the forward's inputs (defaults to the
            forward's to_static input_spec).
        opset_version (int): ONNX opset; values below 13 (Paddle's default is 9) are raised to
            13, the lowest opset this exporter writes; at most 17.
        **configs: ``output_spec`` (must be None), ``enable_onnx_checker`` (default True).

    Returns:
        str: the written file's path.

    Example:
        >>> paddle.onnx.export(net, 'net', [InputSpec([None, 1, 28, 28], 'float32', 'image')])
    """
    onnx, helper, _ = _onnx()
    bad = set(configs) - {"output_spec", "enable_onnx_checker", "verbose"}
    if bad:
        raise ValueError(f"onnx.export: unknown configs {sorted(bad)}")
    if configs.get("output_spec") is not None:
        raise ValueError("onnx.export: output_spec pruning is not supported")
    if not isinstance(opset_version, int) or opset_version > MAX_OPSET:
        raise ValueError(f"onnx.export: opset_version must be an int <= {MAX_OPSET}, got "
                         f"{opset_version!r}")
    # Paddle's default is 9; the operators written here (Unsqueeze/Squeeze/ReduceSum with axes
    # inputs, Slice with steps) need 13, so lower requests get 13, as documented above
    opset_version = max(opset_version, MIN_OPSET)
    specs = _flat_specs(layer, input_spec, "onnx.export")
    program, named = trace(layer, specs, "onnx.export")
    params = {k: _to_host(v._data) for k, v in named}
    free = bool(_program.free_axes(specs))
    d = _program.check_point(len(_program.free_axes(specs)))
    meta = _record_meta(program, specs, params, d)
    g = _Graph(program, params, specs, meta, opset_version)
    for k, op in enumerate(program["ops"]):
        h = HANDLERS.get(op["fn"])
        if h is None:
            raise ValueError(f"onnx.export: op {k} ({op['fn']}) has no ONNX conversion")
        attrs = op["attrs"]
        outs = h(g, op["ins"], attrs, op["outs"])
        for vid, name in zip(op["outs"], outs):
            g.names[vid] = name
    inputs = []
    for s, name in zip(specs, g.in_names):
        dims = [f"d{i}" if n == -1 else int(n) for i, n in enumerate(s.shape)]
        elem = helper.np_dtype_to_tensor_dtype(np.dtype(_np_dtype(s.dtype)))
        inputs.append(helper.make_tensor_value_info(name, elem, dims))
    outputs = []
    for i, r in enumerate(program["outs"]):
        src = g.value(r)
        name = f"output_{i}"
        g.nodes.append(helper.make_node("Identity", [src], [name]))
        dt, shape = meta[_key(r)]
        # with a free dim the output dims are left symbolic (ONNX Runtime infers them)
        dims = [f"out{i}_{k}" for k in range(len(shape))] if free else list(shape)
        outputs.append(helper.make_tensor_value_info(
            name, helper.np_dtype_to_tensor_dtype(dt), dims))
    graph = helper.make_graph(g.nodes, "paddle_hl", inputs, outputs,
                              initializer=list(g.inits.values()))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset_version)],
                              producer_name="paddle_hl")
    model.ir_version = min(model.ir_version, 8)
    if configs.get("enable_onnx_checker", True):
        onnx.checker.check_model(model)
    out = path + ".onnx"
    # written under a temporary name and renamed: a failure (a full disk) keeps the previous
    # file. export reads no file: its inputs are the layer and the specs in this process
    write_file(out, lambda f: f.write(model.SerializeToString()))
    return out


def _np_dtype(dt):
    from ..framework import dtype as _dt

    return _dt.to_np(dt)
