"""A layer's forward traced into paddle_hl's program form, and that program replayed as a layer
(TranslatedLayer): shared by jit.save/jit.load, the Paddle-format writer and reader, and the
ONNX export."""

from __future__ import annotations

import pickle

import numpy as np

from ..framework import dtype as _dt
from ..framework.tensor import Tensor, _wrap
from ..nn.layer.layers import Layer
from ..static.input import InputSpec
from . import _program
from ._to_static import StaticFunction, _specs

__all__ = []


def _flat_specs(layer, input_spec, where):
    specs = _specs(input_spec, where)
    if specs is None:
        fwd = layer if isinstance(layer, StaticFunction) else getattr(layer, "forward", None)
        if isinstance(fwd, StaticFunction):
            specs = fwd.concrete_input_spec(where)  # to_static's, else the last call's
    if not specs:
        raise ValueError(f"{where}: input_spec is required (a list of InputSpec), or decorate "
                         "the forward with paddle.jit.to_static(input_spec=...)")
    if any(not isinstance(s, InputSpec) for s in specs):
        raise TypeError(f"{where}: nested input_spec lists are not supported; pass one "
                        "InputSpec per forward argument")
    return specs


def _example(specs, dims, rng):
    """Random inputs for ``specs`` with the free dims at axis j sized ``dims[axes.index(j)]``."""
    axes = _program.free_axes(specs)
    out = []
    for s in specs:
        shape = [dims[axes.index(j)] if n == -1 else n for j, n in enumerate(s.shape)]
        npd = _dt.to_np(s.dtype)
        if npd.kind == "f" or npd.kind == "V":
            a = rng.standard_normal(shape).astype(npd)
        elif npd.kind == "b":
            a = rng.random(shape) < 0.5
        elif npd.kind == "c":
            a = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(npd)
        else:
            # small non-negative ints: valid for embedding lookups and class labels
            a = rng.integers(0, 2, size=shape).astype(npd)
        out.append(Tensor(a))
    return out


def symbol_sizes(specs, xs, where):
    """The free-dim symbol sizes of one call, read off the inputs (they must agree)."""
    axes = _program.free_axes(specs)
    dims = [None] * len(axes)
    for s, x in zip(specs, xs):
        for j, (n, v) in enumerate(zip(s.shape, x.shape)):
            if n == -1:
                i = axes.index(j)
                if dims[i] is not None and dims[i] != v:
                    raise ValueError(f"{where}: the inputs disagree on the size of free axis "
                                     f"{j} ({dims[i]} vs {v}); free dims at one axis position "
                                     "are one size (e.g. the batch)")
                dims[i] = v
    return tuple(dims)


def trace(layer, specs, where="jit.save"):
    """Trace ``layer`` for ``specs`` into a program; checks the replay against eager outputs."""
    from ..nn.layer.layers import Layer

    if isinstance(layer, Layer):
        named = [(k, v) for k, v in layer.state_dict().items() if isinstance(v, Tensor)]
        call = layer
        # eval mode for the trace; every sublayer gets its own mode back afterwards
        modes = [(sub, sub.training) for sub in layer.sublayers(include_self=True)]
        layer.eval()
    else:
        named, call, modes = [], layer, []
    k = len(_program.free_axes(specs))
    rng = np.random.default_rng(0)
    # traced with grad recording on: some kernels take inference-only shortcuts without it,
    # and the loaded program must stay differentiable
    try:
        sizes = _program.trace_points(k)
        traces = []
        for d in sizes:
            xs = _example(specs, d, rng)
            for x in xs:
                # ops take shortcuts around the op wrapper for inputs that need no gradient;
                # traced inputs that need one make every op go through it (and get recorded)
                if x._data.dtype.kind in "fc":
                    x.stop_gradient = False
            prog, _ = _program.trace_once(call, xs, named)
            traces.append(prog)
        program = _program.merge_traces(traces, sizes) if k else {
            **traces[0], "consts": [("c", c) for c in traces[0]["consts"]]}
        d = _program.check_point(k)
        xs = _example(specs, d, rng)
        want = call(*xs)
        want = [want] if isinstance(want, Tensor) else list(want)
        params = {name: v._data for name, v in named}
        got = _program.run(program, [x._data for x in xs], params, d)
    except _program.TraceError as e:
        raise ValueError(f"{where}: cannot capture the forward as a program: {e}") from None
    finally:
        for sub, training in modes:
            sub.training = training
    for i, (w, g) in enumerate(zip(want, got)):
        if w._data.shape != g.shape or not np.allclose(
                np.asarray(w.numpy(), np.float64) if w._data.dtype.kind in "fc" else w.numpy(),
                np.asarray(_to_host(g), np.float64) if g.dtype.kind in "fc" else _to_host(g),
                rtol=1e-4, atol=1e-5, equal_nan=True):
            raise ValueError(
                f"{where}: the traced program does not reproduce the forward on new inputs "
                f"(output {i}); the forward likely computes a value outside paddle_hl's ops "
                "or takes a data-dependent Python branch, which a program cannot capture")
    program["specs"] = [(list(s.shape), s.dtype.name, s.name) for s in specs]
    return program, named


def _to_host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


class _InfoUnpickler(pickle.Unpickler):
    """``.pdiparams.info`` is a dict of plain values: refuse anything else."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"jit: unexpected object {module}.{name} in a "
                                     ".pdiparams.info file")


class TranslatedLayer(Layer):
    """A layer loaded by :func:`load`: the saved program with its parameters.

    Parameters are ``param_0``, ``param_1``, ... (Paddle's naming, in the order of the
    parameters file); trainable ones stay trainable, so the layer can be fine-tuned
    (gradients flow through the replayed kernels); buffers such as BatchNorm's running
    statistics have ``stop_gradient=True``.

    Args:
        programs (dict): the program read from ``.pdmodel``.
        persistable_vars (dict): variable name -> array (the ``.pdiparams`` content).
    """

    def __init__(self, programs, persistable_vars):
        super().__init__()
        from ..framework.parameter import Parameter

        self._program = programs
        # as in Paddle, parameters are registered as param_0, param_1, ... in the order of
        # the parameters file (sorted variable names), under their saved variable names
        structured = dict(programs["params"])
        self._keys = {}
        for i, var in enumerate(programs["param_order"]):
            arr = persistable_vars[var]
            k = structured[var]
            trainable = programs.get("trainable", {}).get(
                k, not np.issubdtype(arr.dtype, np.integer))
            p = Parameter(arr, name=var, trainable=trainable)
            self._keys[k] = f"param_{i}"
            self.add_parameter(f"param_{i}", p)
        self._specs = [InputSpec(s, dt, n) for s, dt, n in programs["specs"]]

    def program(self, method_name="forward"):
        """The loaded program (paddle_hl's plain-data form)."""
        return self._program

    def forward(self, *inputs):
        from ..jit._to_static import check_args

        xs = [x if isinstance(x, Tensor) else Tensor(np.asarray(x)) for x in inputs]
        if len(xs) != len(self._specs):
            raise ValueError(f"TranslatedLayer: expected {len(self._specs)} inputs, got "
                             f"{len(xs)}")
        check_args(self._specs, xs, "TranslatedLayer")
        d = symbol_sizes(self._specs, xs, "TranslatedLayer")
        params = {k: getattr(self, key) for k, key in self._keys.items()}
        outs = _replay(self._program, xs, params, d)
        return outs[0] if self._program["single"] else outs


def _replay(program, xs, params, d):
    """Run the program on Tensors through the op wrapper (autograd works)."""
    from ..framework.op import apply
    from ..tensor.manipulation import as_strided, reshape

    vals = {}
    from .. import backend

    xp = backend.get_array_module(xs[0]._data) if xs else np
    consts = [_wrap(xp.array(_program.const_array(c, d, xp))) for c in program["consts"]]

    get = _program.resolver(
        vals, xs, params, consts, d, seq_item=lambda t: t._data,
        reshape=lambda t, shape: reshape(t, list(shape)),
        view=lambda t, off, shape, strides: as_strided(reshape(t, [-1]), list(shape),
                                                        list(strides), off),
        error=lambda msg: ValueError(f"TranslatedLayer: {msg}"))
    for op in program["ops"]:
        fn = _program._resolve(op["fn"])
        args = [get(r) for r in op["ins"]]
        attrs = _program._bind_sym(op["attrs"], d)
        out = apply(fn, *args, **attrs)
        outs = out if op["tuple"] else (out,)
        for k, o in zip(op["outs"], outs):
            vals[k] = o
    return [get(r) for r in program["outs"]]

