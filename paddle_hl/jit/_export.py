"""Write a layer as a Paddle inference program: a real ProgramDesc ``.pdmodel`` that Paddle's
``jit.load`` and ``paddle.inference`` run, beside the ``.pdiparams`` it reads.

The layer's forward is traced into paddle_hl kernel calls (the trace ``jit.save`` makes, free
dims included); each kernel call becomes the Paddle operator(s) computing the same thing
(:data:`_EMIT`), parameters become persistable variables under their names, and traced
constants become persistable variables too. A kernel without a Paddle counterpart here fails
the export with its name before any file is written. The program written is run once by
paddle_hl's own program interpreter at two sizes of the free dims, to declare each variable's
shape (-1 for the free dims) and to check that it reproduces the eager forward.
"""

from __future__ import annotations

import pickle

import numpy as np

from .. import backend
from . import _interpreter, _pdiparams, _proto

__all__ = []


class Unmapped(ValueError):
    """The traced forward computes something without a Paddle operator form here.

    Attributes:
        kernels (list[str]): the paddle_hl kernels (or constructs, e.g. a strided view) that
            have no Paddle form.
    """

    def __init__(self, message, kernels):
        super().__init__(message)
        self.kernels = list(kernels)


class _Floats(list):
    """A list attribute Paddle declares as FLOATS (kept so even when empty)."""


class _Long(int):
    """An int attribute Paddle declares as LONG (int64)."""


def _attr(name, value):
    """An OpDesc attribute from a Python value (bool, int, float, str, or a list of one)."""
    if isinstance(value, _Long):
        return {"name": name, "type": 9, "l": int(value)}
    if isinstance(value, bool):
        return {"name": name, "type": 6, "b": value}
    if isinstance(value, (int, np.integer)):
        v = int(value)
        if -(1 << 31) <= v < (1 << 31):
            return {"name": name, "type": 0, "i": v}
        return {"name": name, "type": 9, "l": v}
    if isinstance(value, (float, np.floating)):
        return {"name": name, "type": 1, "f": float(value)}
    if isinstance(value, str):
        return {"name": name, "type": 2, "s": value}
    if isinstance(value, _Longs):
        return {"name": name, "type": 11, "longs": [int(v) for v in value]}
    if isinstance(value, _Floats):
        return {"name": name, "type": 4, "floats": [float(v) for v in value]}
    vals = list(value)
    if vals and all(isinstance(v, _Long) for v in vals):
        return {"name": name, "type": 11, "longs": [int(v) for v in vals]}
    if all(isinstance(v, str) for v in vals) and vals:
        return {"name": name, "type": 5, "strings": vals}
    if all(isinstance(v, (float, np.floating)) for v in vals) and vals:
        return {"name": name, "type": 4, "floats": [float(v) for v in vals]}
    return {"name": name, "type": 3, "ints": [int(v) for v in vals]}


# assign_value's attribute per dtype of a small constant
_ASSIGN_VALUES = {"float32": "fp32_values", "int32": "int32_values", "int64": "int64_values"}


def _assign_list(arr):
    vals = arr.reshape(-1).tolist()
    if arr.dtype.name == "float32":
        return _Floats(vals)
    if arr.dtype.name == "int64":
        return [_Long(v) for v in vals] if vals else _Longs()
    return [int(v) for v in vals]


class _Longs(list):
    """An empty list attribute Paddle declares as LONGS."""


class _Builder:
    def __init__(self, program, named, specs, where):
        from ._program import const_array

        self.where = where
        self.ops = []
        self.arrays = {}  # persistable name -> array
        self.names = {}  # structured parameter name -> variable name
        self.tmp = 0
        for k, v in named:
            n = v.name
            self.names[k] = n if n not in self.names.values() else f"{n}@{k}"
            self.arrays[self.names[k]] = backend.to_numpy(v._data)
        self.feeds = [s.name or f"x{i}" for i, s in enumerate(specs)]
        self.shape_of = None  # set by build(): the traced shape of a value reference
        from ._program import free_axes

        self.sizes = (3,) * len(free_axes(specs))
        self.specs = specs
        self.vals = {}
        self.consts = []
        for i, c in enumerate(program["consts"]):
            name = f"hl_const_{i}"
            try:
                arr = np.asarray(const_array(c, None, np))
                if arr.size <= 256 and arr.dtype.name in _ASSIGN_VALUES:
                    # a small constant is written into the program, as Paddle writes one
                    self.op("assign_value", {}, {"Out": [name]}, shape=list(arr.shape),
                            dtype=_interpreter.DTYPE_CODES[arr.dtype.name],
                            **{_ASSIGN_VALUES[arr.dtype.name]: _assign_list(arr)})
                else:
                    self.arrays[name] = arr
            except Exception:
                # a constant sized by the free dims (an RNN's zero initial state): filled at
                # run time with its shape read off the input
                if c[0] == "arange":
                    self.arange_by_shape(name, *c[1:])
                elif c[0] != "fill":
                    raise ValueError(f"{where}: a constant of the forward depends on the free "
                                     "dims of the input; a Paddle program cannot hold it") from None
                else:
                    self.fill_by_shape(name, c[1], c[2], np.dtype(c[3]).name)
            self.consts.append(name)

    def free_dim(self, sym):
        """An int32 [1] variable holding the run-time size of a free-dim symbol."""
        from ._program import free_axes

        terms = sym.terms()
        if len(terms) != 1 or terms[0][0] != 1 or len(terms[0][1]) != 1:
            raise ValueError(f"{self.where}: a size {sym!r} that is not a plain free dim "
                             "cannot be read off the input in a Paddle program")
        axis = free_axes(self.specs)[terms[0][1][0]]
        feed = next(n for n, s in zip(self.feeds, self.specs) if len(s.shape) > axis
                    and s.shape[axis] == -1)
        shape, dim = self.new("shape"), self.new("dim")
        self.op("shape", {"Input": [feed]}, {"Out": [shape]})
        self.op("slice", {"Input": [shape]}, {"Out": [dim]}, axes=[0], starts=[axis],
                ends=[axis + 1], infer_flags=[1], decrease_axis=[])
        return dim

    def arange_by_shape(self, name, shape, start, step, dtype):
        """Position ids: ``start + step * arange(n)`` of a shape with one free dim (the rest
        1), as Paddle's ``range`` op with its end read off the input at run time."""
        from ._program import Sym

        dtype = np.dtype(dtype).name
        free = [d for d in shape if isinstance(d, Sym)]
        if len(free) != 1 or any(not isinstance(d, Sym) and int(d) != 1 for d in shape) \
                or dtype not in ("int32", "int64", "float32"):
            raise ValueError(f"{self.where}: an arange of shape {shape} ({dtype}) has no "
                             "Paddle range form here")
        code = _interpreter.DTYPE_CODES[dtype]
        n = self.free_dim(free[0])
        if dtype != "int32":
            cast = self.new("cast")
            self.op("cast", {"X": [n]}, {"Out": [cast]}, in_dtype=2, out_dtype=code)
            n = cast
        end, lo, st = self.new("end"), self.new("start"), self.new("step")
        self.op("scale", {"X": [n]}, {"Out": [end]}, scale=float(step), bias=float(start),
                bias_after_scale=True)
        for var, v in ((lo, start), (st, step)):
            self.op("fill_constant", {}, {"Out": [var]}, shape=[_Long(1)], dtype=code,
                    value=float(v), str_value=str(v))
        flat = name if len(shape) == 1 else self.new("range")
        self.op("range", {"Start": [lo], "End": [end], "Step": [st]}, {"Out": [flat]})
        if flat != name:
            self.op("reshape2", {"X": [flat]}, {"Out": [name], "XShape": [self.new("xshape")]},
                    shape=[-1 if isinstance(d, Sym) else 1 for d in shape])

    def fill_by_shape(self, name, shape, value, dtype):
        from ._program import Sym

        dims = []
        for d in shape:
            if isinstance(d, Sym):
                dims.append(self.free_dim(d))
            else:
                v = self.new("dim")
                self.op("fill_constant", {}, {"Out": [v]}, shape=[_Long(1)], dtype=2,
                        value=float(d), str_value=str(int(d)))
                dims.append(v)
        self.op("fill_constant", {"ShapeTensorList": dims}, {"Out": [name]},
                shape=[_Long(-1)] * len(dims), dtype=_interpreter.DTYPE_CODES[dtype],
                value=float(value), str_value=repr(float(value)))

    def new(self, hint="tmp"):
        self.tmp += 1
        return f"{hint}_{self.tmp}.tmp_0"

    def op(self, type_, inputs, outputs, **attrs):
        self.ops.append({
            "type": type_,
            "inputs": [{"parameter": k, "arguments": list(v)} for k, v in inputs.items()],
            "outputs": [{"parameter": k, "arguments": list(v)} for k, v in outputs.items()],
            "attrs": [_attr(k, v) for k, v in attrs.items()]})

    def ref(self, r):
        """A value reference of the trace: a variable name, or a Python literal."""
        kind = r[0]
        if kind == "in":
            return self.feeds[r[1]]
        if kind == "p":
            return self.names[r[1]]
        if kind == "c":
            return self.consts[r[1]]
        if kind == "v":
            return self.vals[r[1]]
        if kind == "lit":
            return _Lit(r[1])
        if kind == "reshape":
            src = self.ref(r[1])
            out = self.new("reshape2")
            self.op("reshape2", {"X": [src]}, {"Out": [out], "XShape": [self.new("xshape")]},
                    shape=_shape(r[2], self.where))
            return out
        if kind == "view" and self.shape_of is not None:
            return self.view(r)
        raise ValueError(f"{self.where}: the forward takes a strided view ({kind!r}) that a "
                         "Paddle program cannot express")

    def view(self, r):
        """A strided view of a (contiguous) value as one ``strided_slice``: each view axis
        steps along one source axis, in order; the source axes it does not keep are indexed
        at one position (dropped). Anything else (broadcast or reordered strides, offsets that
        move with the free dims) has no such form."""
        from ._program import Sym

        src_ref, off, shape, strides = r[1], r[2], r[3], r[4]
        bad = ValueError(f"{self.where}: the forward takes a strided view that one Paddle "
                         "strided_slice cannot express")
        if type(off) is Sym or any(type(v) is Sym for v in strides):
            raise bad
        src = self.ref(src_ref)
        S = [int(v) for v in self.shape_of(src_ref)]
        d3 = self.sizes
        n_view = [int(v.at(d3)) if type(v) is Sym else int(v) for v in shape]
        cs = [int(np.prod(S[j + 1:], dtype=np.int64)) for j in range(len(S))]
        starts, rem = [], int(off)
        for j in range(len(S)):
            starts.append(rem // cs[j])
            rem -= starts[-1] * cs[j]
        if rem or any(st >= n for st, n in zip(starts, S)) and S:
            raise bad
        axes_of, j0 = [], 0
        for i, (n, st) in enumerate(zip(n_view, strides)):
            st = int(st)
            j = next((j for j in range(j0, len(S)) if st > 0 and st % cs[j] == 0
                      and (n == 1 or starts[j] + (st // cs[j]) * (n - 1) < S[j])
                      and (j == 0 or st // cs[j] * (n - 1) < S[j] or n == 1)), None)
            if j is None or n < 1:
                raise bad
            if type(shape[i]) is Sym and not (starts[j] == 0 and st == cs[j]
                                                and n == S[j]):
                raise bad
            axes_of.append((j, st // cs[j], n, type(shape[i]) is Sym))
            j0 = j + 1
        kept = {j for j, _, _, _ in axes_of}
        axes, st_, en, sp, dec = [], [], [], [], []
        for j in range(len(S)):
            if j in kept:
                _, step, n, free = next(a for a in axes_of if a[0] == j)
                if free or (starts[j] == 0 and step == 1 and n == S[j]):
                    continue
                axes.append(j)
                st_.append(starts[j])
                en.append(starts[j] + step * (n - 1) + 1)
                sp.append(step)
            else:
                axes.append(j)
                st_.append(starts[j])
                en.append(starts[j] + 1)
                sp.append(1)
                dec.append(j)
        out = self.new("view")
        if not axes:
            self.op("assign", {"X": [src]}, {"Out": [out]})
            return out
        self.op("strided_slice", {"Input": [src]}, {"Out": [out]}, axes=axes, starts=st_,
                ends=en, strides=sp, infer_flags=[1] * len(axes), decrease_axis=dec)
        return out


class _Lit:
    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v


def _shape(shape, where):
    """A traced shape for reshape2: its one free-dim entry becomes -1."""
    from ._program import Sym

    out, free = [], 0
    for d in shape:
        if isinstance(d, Sym):
            free += 1
            out.append(-1)
        else:
            out.append(int(d))
    if free > 1:
        raise ValueError(f"{where}: a reshape to {shape} has several sizes that depend on the "
                         "free dims; a Paddle reshape2 can infer only one")
    return out


# ------------------------------------------------------------------------------ emitters
def _conv(b, ins, attrs, outs):
    x, w, bias = ins
    nd = len(attrs["stride"])
    cl = bool(attrs.get("cl", False))
    pads = [int(p) for pair in attrs["pads"] for p in pair]
    fmt = ("NHWC" if cl else "NCHW") if nd == 2 else ("NDHWC" if cl else "NCDHW")
    if nd not in (2, 3):
        raise ValueError(f"{b.where}: a {nd}-D convolution has no Paddle conv op here")
    y = outs[0] if isinstance(bias, _Lit) else b.new("conv")
    b.op("conv2d" if nd == 2 else "conv3d", {"Input": [x], "Filter": [w]}, {"Output": [y]},
         strides=list(attrs["stride"]), paddings=pads, padding_algorithm="EXPLICIT",
         groups=int(attrs["groups"]), dilations=list(attrs["dil"]), data_format=fmt)
    if not isinstance(bias, _Lit):
        b.op("elementwise_add", {"X": [y], "Y": [bias]}, {"Out": [outs[0]]},
             axis=-1 if cl else 1)


def _conv_transpose(b, ins, attrs, outs):
    x, w, bias = ins
    nd = len(attrs["stride"])
    cl = bool(attrs.get("cl", False))
    if nd not in (2, 3) or any(not isinstance(d, (int, np.integer)) for d in attrs["size"]):
        raise ValueError(f"{b.where}: this transposed convolution has no Paddle form here")
    y = outs[0] if isinstance(bias, _Lit) else b.new("conv_transpose")
    # the output size pins the output padding down exactly
    b.op("conv2d_transpose" if nd == 2 else "conv3d_transpose", {"Input": [x], "Filter": [w]},
         {"Output": [y]}, strides=list(attrs["stride"]),
         paddings=[int(p) for pair in attrs["pads"] for p in pair],
         padding_algorithm="EXPLICIT", groups=int(attrs["groups"]),
         dilations=list(attrs["dil"]), output_size=[int(d) for d in attrs["size"]],
         output_padding=[], data_format=_fmt(nd, cl))
    if not isinstance(bias, _Lit):
        b.op("elementwise_add", {"X": [y], "Y": [bias]}, {"Out": [outs[0]]},
             axis=-1 if cl else 1)


def _pad(b, ins, attrs, outs):
    x, pads, mode, value = (ins[0],) + tuple(i.v for i in ins[1:])
    pairs = [(int(lo), int(hi)) for lo, hi in pads]
    if any(lo < 0 or hi < 0 for lo, hi in pairs):
        raise ValueError(f"{b.where}: a crop (negative padding) has no Paddle pad form here")
    spatial = len(pairs) == 4 and pairs[0] == (0, 0) and pairs[1] == (0, 0)
    if mode == "constant" and not spatial:
        b.op("pad", {"X": [x]}, {"Out": [outs[0]]},
             paddings=[p for pair in pairs for p in pair], pad_value=float(value))
        return
    # the last two axes of a 4-D input: pad3d on a unit depth axis, as Paddle writes F.pad
    # (Paddle Inference's IR passes crash on a 4-D ``pad`` op)
    if not spatial:
        raise ValueError(f"{b.where}: {mode} padding of other than the last two axes of a "
                         "4-D input has no Paddle form here")
    mid, padded = b.new("unsqueeze"), b.new("pad3d")
    b.op("unsqueeze2", {"X": [x]}, {"Out": [mid], "XShape": [b.new("xshape")]}, axes=[2])
    b.op("pad3d", {"X": [mid]}, {"Out": [padded]},
         paddings=[pairs[3][0], pairs[3][1], pairs[2][0], pairs[2][1], 0, 0],
         mode={"edge": "replicate", "wrap": "circular"}.get(mode, mode),
         value=float(value), data_format="NCDHW")
    b.op("squeeze2", {"X": [padded]}, {"Out": [outs[0]], "XShape": [b.new("xshape")]},
         axes=[2])


def _clip(b, ins, attrs, outs):
    big = float(np.finfo(np.float32).max)
    lo, hi = attrs.get("lo"), attrs.get("hi")
    b.op("clip", {"X": [ins[0]]}, {"Out": [outs[0]]},
         min=-big if lo is None else float(lo), max=big if hi is None else float(hi))


def _batch_norm(b, ins, attrs, outs):
    x, w, bias, mean, var = ins
    if isinstance(w, _Lit) or isinstance(bias, _Lit):
        raise ValueError(f"{b.where}: a batch norm without weight or bias has no Paddle "
                         "batch_norm form here")
    pshape = list(attrs["pshape"])
    layout = "NHWC" if len(pshape) > 2 and pshape[-1] != 1 and pshape[1] == 1 else "NCHW"
    b.op("batch_norm", {"X": [x], "Scale": [w], "Bias": [bias], "Mean": [mean],
                        "Variance": [var]},
         {"Y": [outs[0]], "MeanOut": [mean], "VarianceOut": [var],
          "SavedMean": [b.new("saved_mean")], "SavedVariance": [b.new("saved_var")]},
         epsilon=float(attrs["eps"]), is_test=True, use_global_stats=True,
         data_layout=layout, momentum=0.9, trainable_statistics=False)


def _unary(type_, **fixed):
    def emit(b, ins, attrs, outs):
        b.op(type_, {"X": [ins[0]]}, {"Out": [outs[0]]}, **fixed)
    return emit


def _hardsigmoid(b, ins, attrs, outs):
    b.op("hard_sigmoid", {"X": [ins[0]]}, {"Out": [outs[0]]}, slope=float(attrs["slope"]),
         offset=float(attrs["offset"]))


def _binary(type_, scale_of):
    def emit(b, ins, attrs, outs):
        x, y = ins
        if isinstance(x, _Lit) and not isinstance(y, _Lit) and type_ in (
                "elementwise_add", "elementwise_mul"):
            x, y = y, x
        if isinstance(y, _Lit):
            s, bias = scale_of(float(y.v))
            b.op("scale", {"X": [x]}, {"Out": [outs[0]]}, scale=s, bias=bias,
                 bias_after_scale=True)
            return
        if isinstance(x, _Lit):
            raise ValueError(f"{b.where}: {type_} of a Python number by a tensor has no "
                             "Paddle form here")
        b.op(type_, {"X": [x], "Y": [y]}, {"Out": [outs[0]]}, axis=-1)
    return emit


def _maxpool(b, ins, attrs, outs):
    nd = len(attrs["ksize"])
    cl = bool(attrs.get("cl", False))
    pads = [int(p) for pair in attrs["ext"] for p in pair]
    # a max pool's padding never wins, so the ceil-mode extension is padding as well
    b.op("pool2d" if nd == 2 else "pool3d", {"X": [ins[0]]}, {"Out": [outs[0]]},
         pooling_type="max", ksize=list(attrs["ksize"]), strides=list(attrs["stride"]),
         paddings=pads, padding_algorithm="EXPLICIT", global_pooling=False, adaptive=False,
         ceil_mode=False, exclusive=True, data_format=_fmt(nd, cl))


def _avgpool(b, ins, attrs, outs):
    nd = len(attrs["ksize"])
    if attrs.get("divisor"):
        raise ValueError(f"{b.where}: avg pooling with divisor_override has no Paddle pool op")
    pads = [int(p) for pair in attrs["pads"] for p in pair]
    ceil = [tuple(e) for e in attrs["ext"]] != [tuple(p) for p in attrs["pads"]]
    b.op("pool2d" if nd == 2 else "pool3d", {"X": [ins[0]]}, {"Out": [outs[0]]},
         pooling_type="avg", ksize=list(attrs["ksize"]), strides=list(attrs["stride"]),
         paddings=pads, padding_algorithm="EXPLICIT", global_pooling=False, adaptive=False,
         ceil_mode=bool(ceil), exclusive=bool(attrs["exclusive"]),
         data_format=_fmt(nd, bool(attrs.get("cl", False))))


def _adaptive_avg(b, ins, attrs, outs):
    nd = len(attrs["osz"])
    b.op("pool2d" if nd == 2 else "pool3d", {"X": [ins[0]]}, {"Out": [outs[0]]},
         pooling_type="avg", ksize=list(attrs["osz"]), strides=[1] * nd, paddings=[0] * nd,
         padding_algorithm="EXPLICIT", global_pooling=False, adaptive=True, ceil_mode=False,
         exclusive=True, data_format=_fmt(nd, bool(attrs.get("cl", False))))


def _fmt(nd, cl):
    return ("NHWC" if cl else "NCHW") if nd == 2 else ("NDHWC" if cl else "NCDHW")


def _reshape(b, ins, attrs, outs):
    from ._program import Sym

    shape = attrs["shape"]
    if sum(isinstance(d, Sym) for d in shape) > 1:
        # several sizes follow the free dims: the target shape as a ShapeTensor list, each
        # free size read off the input at run time
        dims = []
        for d in shape:
            if isinstance(d, Sym):
                dims.append(b.free_dim(d))
            else:
                v = b.new("dim")
                b.op("fill_constant", {}, {"Out": [v]}, shape=[_Long(1)], dtype=2,
                     value=float(d), str_value=str(int(d)))
                dims.append(v)
        b.op("reshape2", {"X": [ins[0]], "ShapeTensor": dims},
             {"Out": [outs[0]], "XShape": [b.new("xshape")]}, shape=[-1] * len(shape))
        return
    b.op("reshape2", {"X": [ins[0]]}, {"Out": [outs[0]], "XShape": [b.new("xshape")]},
         shape=_shape(shape, b.where))


def _transpose(b, ins, attrs, outs):
    b.op("transpose2", {"X": [ins[0]]}, {"Out": [outs[0]], "XShape": [b.new("xshape")]},
         axis=[int(p) for p in attrs["perm"]])


def _concat(b, ins, attrs, outs):
    b.op("concat", {"X": list(ins)}, {"Out": [outs[0]]}, axis=int(attrs["axis"]))


def _split(b, ins, attrs, outs):
    b.op("split", {"X": [ins[0]]}, {"Out": list(outs)}, axis=int(attrs["axis"]), num=0,
         sections=[int(s) for s in attrs["sections"]])


def _linear(b, ins, attrs, outs):
    x, w, bias = ins[:3]
    y = outs[0] if isinstance(bias, _Lit) else b.new("linear")
    b.op("matmul_v2", {"X": [x], "Y": [w]}, {"Out": [y]}, trans_x=False, trans_y=False)
    if not isinstance(bias, _Lit):
        b.op("elementwise_add", {"X": [y], "Y": [bias]}, {"Out": [outs[0]]}, axis=-1)


def _matmul(b, ins, attrs, outs):
    b.op("matmul_v2", {"X": [ins[0]], "Y": [ins[1]]}, {"Out": [outs[0]]},
         trans_x=bool(attrs.get("tx", False)), trans_y=bool(attrs.get("ty", False)))


def _layer_norm(b, ins, attrs, outs, x_shape):
    x, w, bias = ins
    view, raxes = list(attrs["view"]), tuple(attrs["raxes"])
    n = view[-1]
    begin = next((k for k in range(len(x_shape) + 1)
                  if int(np.prod(x_shape[k:], dtype=np.int64)) == n), None)
    pshape = tuple(attrs.get("pshape", ()))
    if raxes in ((2,), (2, 3), (1, 3)) and len(view) in (3, 4) and len(x_shape) >= 3:
        if _group_or_instance_norm(b, ins, attrs, outs, x_shape, view, raxes, pshape):
            return
    if raxes != (len(view) - 1,) or not isinstance(n, (int, np.integer)) or begin is None:
        raise ValueError(f"{b.where}: a normalization over axes {raxes} of {view} (group or "
                         "instance norm) has no Paddle operator form here")
    inputs = {"X": [x]}
    for key, t in (("Scale", w), ("Bias", bias)):
        if not isinstance(t, _Lit):
            flat = b.new("flat")
            b.op("reshape2", {"X": [t]}, {"Out": [flat], "XShape": [b.new("xshape")]},
                 shape=[-1])
            inputs[key] = [flat]
    b.op("layer_norm", inputs, {"Y": [outs[0]], "Mean": [outs[1]], "Variance": [outs[2]]},
         epsilon=float(attrs["eps"]), begin_norm_axis=int(begin))


def _group_or_instance_norm(b, ins, attrs, outs, x_shape, view, raxes, pshape):
    """Instance norm (``[N, C, S]`` over S) and group norm (``[N, G, C/G, S]`` over the last
    two, or ``[N, S, G, C/G]`` over S and C/G channels-last) as Paddle's operators; False for
    another normalization."""
    x, w, bias = ins
    inputs = {"X": [x]}
    for key, t in (("Scale", w), ("Bias", bias)):
        if not isinstance(t, _Lit):
            inputs[key] = [t]
    eps = float(attrs["eps"])
    if raxes == (2,) and len(view) == 3 and tuple(pshape) == (1, view[1], 1):
        b.op("instance_norm", inputs, {"Y": [outs[0]], "SavedMean": [b.new("saved_mean")],
                                       "SavedVariance": [b.new("saved_var")]}, epsilon=eps)
        return True
    if len(view) == 4 and raxes == (2, 3) and tuple(pshape) == (1, view[1], view[2], 1):
        layout, groups = "NCHW", view[1]
    elif len(view) == 4 and raxes == (1, 3) and tuple(pshape) == (1, 1, view[2], view[3]):
        layout, groups = "NHWC", view[2]
    else:
        return False
    b.op("group_norm", inputs, {"Y": [outs[0]], "Mean": [b.new("mean")],
                                "Variance": [b.new("variance")]},
         epsilon=eps, groups=int(groups), data_layout=layout)
    return True


def _attention(b, ins, attrs, outs):
    q, k, v, mask, keep = ins
    if not isinstance(keep, _Lit) or keep.v is not None:
        raise ValueError(f"{b.where}: attention with dropout has no Paddle form in an "
                         "inference program")
    s = b.new("qk")
    b.op("matmul_v2", {"X": [q], "Y": [k]}, {"Out": [s]}, trans_x=False, trans_y=True)
    scaled = b.new("scale")
    b.op("scale", {"X": [s]}, {"Out": [scaled]}, scale=float(attrs["scale"]), bias=0.0,
         bias_after_scale=True)
    if not (isinstance(mask, _Lit) and mask.v is None):
        if isinstance(mask, _Lit):
            raise ValueError(f"{b.where}: an attention mask given as a Python number has no "
                             "Paddle form here")
        masked = b.new("masked")
        b.op("elementwise_add", {"X": [scaled], "Y": [mask]}, {"Out": [masked]}, axis=-1)
        scaled = masked
    b.op("softmax", {"X": [scaled]}, {"Out": [outs[1]]}, axis=-1)
    b.op("matmul_v2", {"X": [outs[1]], "Y": [v]}, {"Out": [outs[0]]}, trans_x=False,
         trans_y=False)


def _rnn(b, ins, attrs, outs):
    """One direction of one layer: Paddle's rnn op (time-major, one layer, one direction),
    with the time axis flipped around it for the reverse direction."""
    x, h0, c0, w_ih, w_hh, b_ih, b_hh, mask = ins
    if not (isinstance(mask, _Lit) and mask.v is None):
        raise ValueError(f"{b.where}: an RNN with sequence lengths has no Paddle form here")
    if any(isinstance(t, _Lit) for t in (w_ih, w_hh, b_ih, b_hh)):
        raise ValueError(f"{b.where}: an RNN cell without biases has no Paddle rnn form here")
    mode = attrs["mode"]
    lstm = mode == "LSTM"

    def unary(type_, src, hint, **kw):
        out = b.new(hint)
        outputs = {"Out": [out]}
        if type_ in ("transpose2", "unsqueeze2", "squeeze2"):
            outputs["XShape"] = [b.new("xshape")]
        b.op(type_, {"X": [src]}, outputs, **kw)
        return out

    xt = x if attrs["time_major"] else unary("transpose2", x, "time_major", axis=[1, 0, 2])
    if attrs["reverse"]:
        xt = unary("flip", xt, "reversed", axis=[0])
    states = [unary("unsqueeze2", h0, "h0", axes=[0])]
    if lstm:
        states.append(unary("unsqueeze2", c0, "c0", axes=[0]))
    out, hn = b.new("rnn"), b.new("h")
    finals = [hn] + ([b.new("c")] if lstm else [])
    w = b.arrays[w_hh]
    b.op("rnn", {"Input": [xt], "PreState": states, "WeightList": [w_ih, w_hh, b_ih, b_hh]},
         {"Out": [out], "State": finals, "Reserve": [b.new("reserve")],
          "DropoutState": [b.new("dropout_state")]},
         mode=mode, hidden_size=int(w.shape[1]), input_size=int(b.arrays[w_ih].shape[1]),
         num_layers=1, is_bidirec=False, dropout_prob=0.0, is_test=True, seed=0)
    if attrs["reverse"]:
        out = unary("flip", out, "reversed", axis=[0])
    if attrs["time_major"]:
        b.op("assign", {"X": [out]}, {"Out": [outs[0]]})
    else:
        b.op("transpose2", {"X": [out]}, {"Out": [outs[0]], "XShape": [b.new("xshape")]},
             axis=[1, 0, 2])
    for state, name in zip(finals, outs[1:]):
        b.op("squeeze2", {"X": [state]}, {"Out": [name], "XShape": [b.new("xshape")]},
             axes=[0])


def _embedding(b, ins, attrs, outs):
    ids, w, pad = ins
    b.op("lookup_table_v2", {"Ids": [ids], "W": [w]}, {"Out": [outs[0]]},
         padding_idx=_Long(pad.v if isinstance(pad, _Lit) and pad.v is not None else -1))


def _stack(b, ins, attrs, outs):
    b.op("stack", {"X": list(ins)}, {"Y": [outs[0]]}, axis=int(attrs["axis"]))


def _index(b, ins, attrs, outs, x_shape):
    """Basic indexing (ints, positive-step slices, Ellipsis) as one strided_slice."""
    idx = attrs["idx"]
    idx = idx if isinstance(idx, tuple) else (idx,)
    if sum(i is Ellipsis for i in idx) > 1 or any(i is None for i in idx):
        raise ValueError(f"{b.where}: indexing with {idx!r} has no Paddle slice form here")
    if Ellipsis in idx:
        k = idx.index(Ellipsis)
        idx = idx[:k] + (slice(None),) * (len(x_shape) - len(idx) + 1) + idx[k + 1:]
    axes, starts, ends, strides, dec = [], [], [], [], []
    for ax, i in enumerate(idx):
        if isinstance(i, (int, np.integer)):
            axes.append(ax)
            starts.append(int(i))
            ends.append(int(i) + 1 if int(i) != -1 else 2147483647)
            strides.append(1)
            dec.append(ax)
        elif isinstance(i, slice):
            if i == slice(None):
                continue
            step = 1 if i.step is None else int(i.step)
            if step <= 0:
                raise ValueError(f"{b.where}: a slice with step {step} has no Paddle form here")
            axes.append(ax)
            starts.append(0 if i.start is None else int(i.start))
            ends.append(2147483647 if i.stop is None else int(i.stop))
            strides.append(step)
        else:
            raise ValueError(f"{b.where}: indexing with {i!r} has no Paddle slice form here")
    b.op("strided_slice", {"Input": [ins[0]]}, {"Out": [outs[0]]}, axes=axes, starts=starts,
         ends=ends, strides=strides, infer_flags=[1] * len(axes), decrease_axis=dec)


def _resample(b, ins, attrs, outs, x_shape):
    """An interpolation as Paddle's ``*_interp_v2`` operator: the traced plan holds each resized
    axis's taps and weights; the mode and the alignment settings are the ones whose taps,
    recomputed by the resampling kernel's own rules for the traced sizes, equal the plan's."""
    from ..nn.functional import vision as V

    plan = attrs["plan"]
    if not plan:
        b.op("assign", {"X": [ins[0]]}, {"Out": [outs[0]]})
        return
    nd = len(x_shape) - 2
    axes = sorted(a for a, _, _, _ in plan)
    if 1 in axes:
        channel_last = True
    elif nd + 1 in axes or nd == 1:
        channel_last = False
    else:
        raise ValueError(f"{b.where}: an interpolation of axes {axes} of a {len(x_shape)}-D "
                         "input has no unambiguous Paddle layout here")
    spatial = list(range(1, nd + 1)) if channel_last else list(range(2, nd + 2))
    if any(a not in spatial for a in axes):
        raise ValueError(f"{b.where}: an interpolation of axes {axes} has no Paddle form here")
    out_sizes = list(x_shape)
    for a, idx, _, _ in plan:
        out_sizes[a] = int(idx.shape[0])
    if any(not isinstance(out_sizes[a], (int, np.integer)) for a in spatial):
        raise ValueError(f"{b.where}: an interpolation of a free spatial dim has no fixed "
                         "Paddle output size here")
    k = plan[0][1].shape[1]
    modes = {1: ["nearest"], 2: ["bilinear"], 4: ["bicubic"]}.get(k)
    if modes is None:
        raise ValueError(f"{b.where}: an area interpolation has no Paddle interp op")
    found = None
    for mode in modes:
        for ac, am, double in ((False, 0, False), (False, 1, False), (True, 1, False),
                               (False, 0, True), (False, 1, True), (True, 1, True)):
            if mode == "nearest" and (ac or am):
                continue
            ok = True
            for _axis, idx, w, n_in in plan:
                i2, w2 = V._TAPS[mode](n_in, int(idx.shape[0]),
                                       V._ratio(n_in, int(idx.shape[0]), None, ac), ac, am,
                                       double)
                if not (np.array_equal(i2, idx) and (w is None) == (w2 is None)
                        and (w is None or np.array_equal(w2, w))):
                    ok = False
                    break
            if ok:
                found = (mode, ac, am)
                break
        if found:
            break
    if found is None:
        raise ValueError(f"{b.where}: an interpolation whose taps follow from a scale factor "
                         "rather than the sizes has no Paddle form here")
    mode, ac, am = found
    name = {1: "linear", 2: "bilinear", 3: "trilinear"}[nd] if mode == "bilinear" else mode
    sizes = dict(zip(("out_d", "out_h", "out_w")[3 - nd:], (int(out_sizes[a]) for a in spatial)))
    b.op(f"{name}_interp_v2", {"X": [ins[0]]}, {"Out": [outs[0]]},
         out_d=sizes.get("out_d", -1), out_h=sizes.get("out_h", -1), out_w=sizes["out_w"],
         scale=_Floats(), interp_method=name, align_corners=ac, align_mode=am,
         data_layout=("NWC" if nd == 1 else "NHWC" if nd == 2 else "NDHWC") if channel_last
         else ("NCW" if nd == 1 else "NCHW" if nd == 2 else "NCDHW"))


def _scale(b, ins, attrs, outs):
    b.op("scale", {"X": [ins[0]]}, {"Out": [outs[0]]}, scale=float(attrs["s"]),
         bias=float(attrs["b"]), bias_after_scale=bool(attrs["after"]))


def _mul_scalar(b, ins, attrs, outs):
    x, y = ins
    if not isinstance(y, _Lit):
        raise ValueError(f"{b.where}: a scalar product by a tensor has no Paddle form here")
    b.op("scale", {"X": [x]}, {"Out": [outs[0]]}, scale=float(y.v), bias=0.0,
         bias_after_scale=True)


def _softmax(b, ins, attrs, outs):
    b.op("softmax", {"X": [ins[0]]}, {"Out": [outs[0]]}, axis=int(attrs["axis"]))


def _gelu(b, ins, attrs, outs):
    b.op("gelu", {"X": [ins[0]]}, {"Out": [outs[0]]},
         approximate=bool(attrs.get("approximate", False)))


def _leaky(b, ins, attrs, outs):
    b.op("leaky_relu", {"X": [ins[0]]}, {"Out": [outs[0]]}, alpha=float(attrs["slope"]))


def _mean(b, ins, attrs, outs):
    axis = attrs.get("axis")
    b.op("reduce_mean", {"X": [ins[0]]}, {"Out": [outs[0]]},
         dim=[] if axis is None else [int(a) for a in axis],
         keep_dim=bool(attrs.get("keepdim", False)), reduce_all=axis is None)


_F = "paddle_hl.nn.functional."
_M = "paddle_hl.tensor.math:"
_EMIT = {
    _F + "conv:_conv_kernel": _conv,
    _F + "conv:_convt_kernel": _conv_transpose,
    _F + "common:_pad_kernel": _pad,
    _M + "_clip": _clip,
    _F + "norm:_affine_k": _batch_norm,
    _F + "activation:_relu_k": _unary("relu"),
    _F + "activation:_hardswish_k": _unary("hard_swish", threshold=6.0, scale=6.0,
                                           offset=3.0),
    _F + "activation:_hardsigmoid_k": _hardsigmoid,
    _F + "pooling:_maxpool_kernel": _maxpool,
    _F + "pooling:_avgpool_kernel": _avgpool,
    _F + "pooling:_adaptive_avg_kernel": _adaptive_avg,
    _F + "common:_linear_kernel": _linear,
    _F + "activation:_relu6_k": _unary("relu6", threshold=6.0),
    _F + "activation:_swish_k": _unary("swish", beta=1.0),
    _F + "activation:_silu_k": _unary("silu"),
    _F + "activation:_gelu_k": _gelu,
    _F + "activation:_leaky_k": _leaky,
    _F + "activation:_softmax_k": _softmax,
    _M + "sigmoid#kernel": _unary("sigmoid"),
    _M + "tanh#kernel": _unary("tanh"),
    _M + "exp#kernel": _unary("exp"),
    _M + "_scale_k": _scale,
    _M + "_mul_scalar": _mul_scalar,
    _M + "_add": _binary("elementwise_add", lambda v: (1.0, v)),
    _M + "_sub": _binary("elementwise_sub", lambda v: (1.0, -v)),
    _M + "_mul": _binary("elementwise_mul", lambda v: (v, 0.0)),
    _M + "_div": _binary("elementwise_div", lambda v: (1.0 / v, 0.0)),
    "paddle_hl.tensor.stat:_mean_kernel": _mean,
    "paddle_hl.tensor.linalg:_matmul_kernel": _matmul,
    _F + "norm:_norm_k": _layer_norm,
    _F + "flash_attention:_attention": _attention,
    _F + "rnn:_seq_kernel": _rnn,
    _F + "vision:_resample_kernel": _resample,
    _F + "input:_embedding_kernel": _embedding,
    "paddle_hl.tensor.manipulation:_stack_kernel": _stack,
    "paddle_hl.tensor.manipulation:_gather_kernel": _index,
    "paddle_hl.tensor.manipulation:_reshape_kernel": _reshape,
    "paddle_hl.tensor.manipulation:_transpose_kernel": _transpose,
    "paddle_hl.tensor.manipulation:_concat_kernel": _concat,
    "paddle_hl.tensor.manipulation:_split_kernel": _split,
}


def _tensor_of(b, v, like):
    """A literal as a [1] tensor of the dtype of the value reference ``like``."""
    dtype = b.shape_of.dtype(like)
    out = b.new("literal")
    b.op("fill_constant", {}, {"Out": [out]}, shape=[_Long(1)],
         dtype=_interpreter.DTYPE_CODES[dtype], value=float(v.v), str_value=str(v.v))
    return out


def _compare(type_):
    def emit(b, ins, attrs, outs, refs):
        x, y = ins
        if isinstance(x, _Lit):
            raise ValueError(f"{b.where}: {type_} of a Python number by a tensor has no "
                             "Paddle form here")
        if isinstance(y, _Lit):
            y = _tensor_of(b, y, refs[0])
        b.op(type_, {"X": [x], "Y": [y]}, {"Out": [outs[0]]}, axis=-1)
    return emit


def _elementwise_ref(type_):
    def emit(b, ins, attrs, outs, refs):
        x, y = ins
        if isinstance(x, _Lit):
            x = _tensor_of(b, x, refs[1])
        if isinstance(y, _Lit):
            y = _tensor_of(b, y, refs[0])
        b.op(type_, {"X": [x], "Y": [y]}, {"Out": [outs[0]]}, axis=-1)
    return emit


def _where(b, ins, attrs, outs, refs):
    cond, x, y = ins
    if isinstance(x, _Lit):
        x = _tensor_of(b, x, refs[2])
    if isinstance(y, _Lit):
        y = _tensor_of(b, y, refs[1])
    b.op("where", {"Condition": [cond], "X": [x], "Y": [y]}, {"Out": [outs[0]]})


def _pow(b, ins, attrs, outs, refs):
    x, y = ins
    if not isinstance(y, _Lit) or isinstance(x, _Lit):
        raise ValueError(f"{b.where}: a power with a tensor exponent has no Paddle form here")
    b.op("pow", {"X": [x]}, {"Out": [outs[0]]}, factor=float(y.v))


def _reduce(type_):
    def emit(b, ins, attrs, outs):
        axis = attrs.get("axis")
        if attrs.get("dtype") is not None:
            raise ValueError(f"{b.where}: {type_} with a dtype has no Paddle form here")
        b.op(type_, {"X": [ins[0]]}, {"Out": [outs[0]]},
             dim=[] if axis is None else [int(a) for a in axis],
             keep_dim=bool(attrs.get("keepdim", False)), reduce_all=axis is None)
    return emit


def _cast(b, ins, attrs, outs, refs):
    name = np.dtype(attrs["dtype"]).name
    if name not in _interpreter.DTYPE_CODES:
        raise ValueError(f"{b.where}: a cast to {name} has no Paddle dtype here")
    b.op("cast", {"X": [ins[0]]}, {"Out": [outs[0]]},
         in_dtype=_interpreter.DTYPE_CODES[b.shape_of.dtype(refs[0])],
         out_dtype=_interpreter.DTYPE_CODES[name])


def _log_softmax(b, ins, attrs, outs):
    b.op("log_softmax", {"X": [ins[0]]}, {"Out": [outs[0]]}, axis=int(attrs["axis"]))


def _elu(b, ins, attrs, outs):
    b.op("elu", {"X": [ins[0]]}, {"Out": [outs[0]]}, alpha=float(attrs["alpha"]))


def _softplus(b, ins, attrs, outs):
    b.op("softplus", {"X": [ins[0]]}, {"Out": [outs[0]]}, beta=float(attrs["beta"]),
         threshold=float(attrs["threshold"]))


_EMIT.update({
    _M + "_abs": _unary("abs"),
    _M + "neg#kernel": _unary("scale", scale=-1.0, bias=0.0, bias_after_scale=True),
    _M + "sqrt#kernel": _unary("sqrt"),
    _M + "rsqrt#kernel": _unary("rsqrt"),
    _M + "log#kernel": _unary("log"),
    _M + "square#kernel": _unary("square"),
    _M + "_pow": _pow,
    _M + "_maximum": _elementwise_ref("elementwise_max"),
    _M + "_minimum": _elementwise_ref("elementwise_min"),
    "paddle_hl.tensor.search:_where_kernel": _where,
    "paddle_hl.tensor.stat:_sum_kernel": _reduce("reduce_sum"),
    "paddle_hl.tensor.stat:max#kernel": _reduce("reduce_max"),
    "paddle_hl.tensor.stat:min#kernel": _reduce("reduce_min"),
    _F + "activation:_log_softmax_k": _log_softmax,
    _F + "activation:_elu_k": _elu,
    _F + "activation:_softplus_k": _softplus,
    _F + "activation:_mish_k": _unary("mish", threshold=20.0),
    "paddle_hl.tensor.creation:_clone_kernel": _unary("assign"),
    "paddle_hl.tensor._helpers:_cast_kernel": _cast,
})
for _name in ("greater_than", "greater_equal", "less_than", "less_equal", "equal",
              "not_equal"):
    _EMIT[f"paddle_hl.tensor.logic:{_name}#kernel"] = _compare(_name)

# emitters that take the trace's value references of their inputs (to read their dtypes)
_NEEDS_REFS = (_where, _pow, _cast) + tuple(
    e for e in _EMIT.values() if getattr(e, "__name__", "") == "emit"
    and e.__qualname__.startswith(("_compare", "_elementwise_ref")))

# emitters that also take the traced shape of their first input
_NEEDS_SHAPE = (_layer_norm, _index, _resample)


# ------------------------------------------------------------------------------- program
def build(layer, specs, where="jit.save", traced=None):
    """The ProgramDesc (a dict for :func:`_proto.encode`) and persistable arrays of ``layer``
    traced for ``specs`` (``traced``: the ``(program, named)`` of a trace already made).

    Raises:
        Unmapped: a kernel (or a strided view) of the trace has no Paddle form here; the
            kernels are named, and nothing is written.
    """
    from ._traced import trace

    program, named = traced if traced is not None else trace(layer, specs, where)
    unknown = sorted({op["fn"] for op in program["ops"]} - set(_EMIT))
    if unknown:
        raise Unmapped(f"{where}: the forward calls kernels without a Paddle operator form "
                       f"here: {', '.join(unknown)}; the model cannot be written as a Paddle "
                       "program", unknown)
    try:
        b = _Builder(program, named, specs, where)
    except ValueError as e:
        raise Unmapped(str(e), ["a constant sized by the free dims"]) from None
    shape_of = _replay_shapes(program, named, specs)
    b.shape_of = shape_of
    for op in program["ops"]:
        try:
            ins = [b.ref(r) for r in op["ins"]]
        except ValueError as e:
            raise Unmapped(str(e), [f"a strided view into {op['fn']}"]) from None
        kind = op["fn"].rsplit(":", 1)[1].strip("_").split("_")[0]
        outs = [b.new(kind) for _ in op["outs"]]
        try:
            if _EMIT[op["fn"]] in _NEEDS_REFS:
                _EMIT[op["fn"]](b, ins, op["attrs"], outs, op["ins"])
            elif _EMIT[op["fn"]] in _NEEDS_SHAPE:
                _EMIT[op["fn"]](b, ins, op["attrs"], outs, shape_of(op["ins"][0]))
            else:
                _EMIT[op["fn"]](b, ins, op["attrs"], outs)
        except Unmapped:
            raise
        except ValueError as e:
            raise Unmapped(str(e), [op["fn"]]) from None
        for k, name in zip(op["outs"], outs):
            b.vals[k] = name
    fetch = []
    for r in program["outs"]:
        try:
            v = b.ref(r)
        except ValueError as e:
            raise Unmapped(str(e), ["a strided view as an output"]) from None
        if isinstance(v, _Lit) or v in b.feeds or v in b.arrays:
            # fetch a fresh variable, as Paddle's saved programs do
            out = b.new("save_infer_model/scale")
            b.op("scale", {"X": [v]}, {"Out": [out]}, scale=1.0, bias=0.0,
                 bias_after_scale=True)
            v = out
        fetch.append(v)
    # feed ops come last column first, as Paddle writes them (its loader reverses them)
    ops = ([_feed(n, i) for i, n in reversed(list(enumerate(b.feeds)))] + b.ops
           + [_fetch(n, i) for i, n in enumerate(fetch)])
    shapes = _var_shapes(b, ops, specs, fetch, layer, where)
    for op in ops:  # outputs the interpreter does not produce (XShape, saved statistics)
        first = next((a for v in op["inputs"] for a in v["arguments"] if a in shapes), None)
        dims, dtype = shapes.get(first, ([-1], "float32"))
        for v in op["outputs"]:
            for a in v["arguments"]:
                if a not in shapes and a not in ("fetch",):
                    shapes[a] = ([0] + list(dims) if v["parameter"] == "XShape" else [-1],
                                 dtype)
    vars_ = [{"name": "feed", "type": {"type": _proto.FEED_MINIBATCH}, "persistable": True},
             {"name": "fetch", "type": {"type": _proto.FETCH_LIST}, "persistable": True}]
    for name, (dims, dtype) in shapes.items():
        v = {"name": name, "type": {"type": _proto.LOD_TENSOR, "lod_tensor": {"tensor": {
            "data_type": _interpreter.DTYPE_CODES[dtype], "dims": dims}}}}
        if name in b.arrays:
            v["persistable"] = True
        if name in b.feeds:
            v["need_check_feed"] = True
        vars_.append(v)
    desc = {"blocks": [{"idx": 0, "parent_idx": -1, "vars": vars_, "ops": ops}],
            "version": {"version": 2006002}}
    return desc, b.arrays, named, b.names


def _replay_shapes(program, named, specs):
    """Run the trace once (free dims at 3) and answer the shape of any value reference."""
    from . import _program as P

    k = len(P.free_axes(specs))
    d = (3,) * k if k else None
    rng = np.random.default_rng(0)
    xs = []
    for s in specs:
        shape = [3 if n == -1 else n for n in s.shape]
        xs.append(rng.standard_normal(shape).astype(s.dtype.name) if s.dtype.name.startswith(
            ("float", "bfloat")) else np.zeros(shape, s.dtype.name))
    params = {name: backend.to_numpy(v._data) for name, v in named}
    consts = [P.const_array(c, d, np) for c in program["consts"]]
    vals = {}
    get = P.resolver(vals, xs, params, consts, d)

    for op in program["ops"]:
        attrs = P._bind_sym(op["attrs"], d) if d else op["attrs"]
        out, _ = P._resolve(op["fn"])(*[get(r) for r in op["ins"]], **attrs)
        for key, o in zip(op["outs"], out if op["tuple"] else (out,)):
            vals[key] = o
    def shape_of(r):
        return list(np.shape(get(r)))

    shape_of.dtype = lambda r: np.asarray(get(r)).dtype.name
    return shape_of


def _feed(name, col):
    return {"type": "feed", "inputs": [{"parameter": "X", "arguments": ["feed"]}],
            "outputs": [{"parameter": "Out", "arguments": [name]}], "attrs": [_attr("col", col)]}


def _fetch(name, col):
    return {"type": "fetch", "inputs": [{"parameter": "X", "arguments": [name]}],
            "outputs": [{"parameter": "Out", "arguments": ["fetch"]}],
            "attrs": [_attr("col", col)]}


def _var_shapes(b, ops, specs, fetch, layer, where):
    """Run the written program with paddle_hl's interpreter at two sizes of the free dims:
    each variable's dims (-1 where they follow the free dims) and dtype; the outputs must
    match the eager forward."""
    from ..framework.state import no_grad
    from ..framework.tensor import Tensor

    seen = {}
    rng = np.random.default_rng(0)
    for size in (2, 3):
        desc = {"blocks": [{"idx": 0, "parent_idx": -1, "ops": ops, "vars": [
            {"name": n, "persistable": True, "type": {"type": _proto.LOD_TENSOR}}
            for n in b.arrays] + [
            {"name": n, "type": {"type": _proto.LOD_TENSOR, "lod_tensor": {"tensor": {
                "data_type": _interpreter.DTYPE_CODES[s.dtype.name],
                "dims": list(s.shape)}}}} for n, s in zip(b.feeds, specs)]}]}
        prog = _interpreter.Program(desc, where)
        xs = []
        for s in specs:
            shape = [size if d == -1 else d for d in s.shape]
            if s.dtype.name.startswith(("int", "uint")):
                xs.append(Tensor(rng.integers(0, 2, shape).astype(s.dtype.name)))
            else:
                xs.append(Tensor(rng.standard_normal(shape).astype(s.dtype.name)))
        env = {n: Tensor(a) for n, a in b.arrays.items()}
        with no_grad():
            for (name, _, _), x in zip(prog.feeds, xs):
                env[name] = x
            ctx = _interpreter._Ctx(env)
            for op in prog.ops:
                _interpreter.OPS[op.type](ctx, op, op.attrs)
            want = _eval_call(layer, xs)
        want = [want] if isinstance(want, Tensor) else list(want)
        for i, (w, n) in enumerate(zip(want, fetch)):
            g = env[n].numpy()
            if g.shape != tuple(w.shape) or not _same(g, w.numpy()):
                raise ValueError(f"{where}: the Paddle program written for the forward does "
                                 f"not reproduce output {i}; the model cannot be exported")
        for n, v in env.items():
            if isinstance(v, Tensor):
                seen.setdefault(n, []).append((list(v.shape), v.dtype.name))
    out = {}
    for n, obs in seen.items():
        if n in b.arrays:
            out[n] = (list(b.arrays[n].shape), obs[0][1])
            continue
        dims = [d if all(o[0][k] == d for o in obs) else -1
                for k, d in enumerate(obs[0][0])] if len({len(o[0]) for o in obs}) == 1 \
            else obs[0][0]
        out[n] = (dims, obs[0][1])
    for n, s in zip(b.feeds, specs):
        out[n] = (list(s.shape), s.dtype.name)
    return out


def writers(layer, specs, traced=None, where="jit.save"):
    """The three files of Paddle's inference model for ``layer`` as ``{suffix: write(f)}``
    (``.pdmodel``, ``.pdiparams``, ``.pdiparams.info``), for one atomic ``write_files``.

    Raises:
        Unmapped: the forward has no Paddle program form here (the kernels are named).
    """
    desc, arrays, named, names = build(layer, specs, where, traced)
    model = _proto.encode(desc)
    info = {names[k]: {"structured_name": k, "stop_gradient": bool(v.stop_gradient),
                       "trainable": not v.stop_gradient} for k, v in named}
    for name in arrays:  # larger traced constants: persistable buffers Paddle's loader reads
        if name not in info:
            info[name] = {"structured_name": name, "stop_gradient": True, "trainable": False}
    return {
        ".pdmodel": lambda f: f.write(model),
        ".pdiparams": lambda f: _pdiparams.write(f, arrays),
        ".pdiparams.info": lambda f: pickle.dump(info, f, protocol=2),
    }


def _same(got, want):
    """Equal up to float rounding: elementwise within 1e-4 relative, or within 1e-5 of the
    output's largest magnitude (rounding differences between the program's operators and the
    layers' kernels -- e.g. a batch norm folded into a convolution -- grow with the values'
    scale through a deep network, not with each element's size)."""
    if got.dtype.kind not in "fc":
        return np.array_equal(got, want)
    g, w = got.astype(np.float64), want.astype(np.float64)
    scale = float(np.nanmax(np.abs(w))) if w.size and not np.isnan(w).all() else 0.0
    return bool(np.all((np.abs(g - w) <= 1e-4 * np.abs(w) + 1e-5 * max(scale, 1.0))
                       | (np.isnan(g) & np.isnan(w))))


def _eval_call(layer, xs):
    """``layer(*xs)`` in eval mode, every sublayer's mode restored afterwards (a layer in
    training mode would give batch statistics and update its running ones)."""
    from ..nn.layer.layers import Layer

    subs = layer.sublayers(include_self=True) if isinstance(layer, Layer) else []
    modes = [(sub, sub.training) for sub in subs]
    for sub in subs:
        sub.training = False
    try:
        return layer(*xs)
    finally:
        for sub, training in modes:
            sub.training = training


def save(layer, path, input_spec=None):
    """Write ``layer`` as Paddle's inference model: ``path.pdmodel`` (a ProgramDesc),
    ``path.pdiparams`` and ``path.pdiparams.info``, which real Paddle's ``jit.load`` and
    ``paddle.inference`` read (``paddle.jit.save`` writes through this, falling back to
    paddle_hl's own program format only for a forward without a Paddle program form).

    Args:
        layer (Layer): the layer; its forward is traced in eval mode.
        path (str): the path prefix.
        input_spec (list[InputSpec]): the forward's inputs (``None`` dims stay free).

    Raises:
        Unmapped: the forward calls a kernel without a Paddle operator form here (named).
    """
    from ..framework.io import write_files
    from ._traced import _flat_specs

    specs = _flat_specs(layer, input_spec, "jit.save")
    write_files({path + k: w for k, w in writers(layer, specs).items()})
