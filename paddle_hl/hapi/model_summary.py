"""paddle.summary: a per-layer table of input/output shapes and parameter counts."""

from __future__ import annotations

import collections
import numbers

import numpy as np

from ..framework import dtype as _dt
from ..framework import state
from ..framework.tensor import Tensor
from ..static import InputSpec
from ..tensor.creation import to_tensor

__all__ = []


def _shape_of(x):
    if isinstance(x, Tensor):
        return list(x.shape)
    if isinstance(x, (list, tuple)):
        return [_shape_of(v) for v in x]
    return list(np.shape(x)) if hasattr(x, "shape") else []


def _numel(shape):
    if shape and isinstance(shape[0], list):
        return sum(_numel(s) for s in shape)
    return int(np.prod(shape)) if shape else 0


def _is_shape(x):
    return isinstance(x, (list, tuple)) and all(
        isinstance(v, numbers.Integral) or v is None for v in x)


def _inputs_from_size(input_size, dtypes):
    if isinstance(input_size, InputSpec):
        input_size = [input_size]
    if isinstance(input_size, dict):
        input_size = list(input_size.values())
    if _is_shape(input_size):
        sizes = [input_size]
    elif isinstance(input_size, (list, tuple)):
        sizes = list(input_size)
    else:
        raise TypeError(f"summary: input_size must be a shape tuple, a list of shapes or "
                        f"InputSpecs, got {type(input_size).__name__}")
    if dtypes is None:
        dtypes = [None] * len(sizes)
    elif isinstance(dtypes, (str, _dt.DType)):
        dtypes = [dtypes] * len(sizes)
    dtypes = list(dtypes)
    if len(dtypes) != len(sizes):
        raise ValueError(f"summary: got {len(sizes)} input sizes but {len(dtypes)} dtypes")
    tensors, shapes = [], []
    for size, dt in zip(sizes, dtypes):
        if isinstance(size, InputSpec):
            dt = dt or size.dtype
            size = size.shape
        if not _is_shape(size):
            raise TypeError(f"summary: each input size must be a list or tuple of ints, got "
                            f"{size!r}")
        shape = [1 if (d is None or d == -1) else int(d) for d in size]
        npd = _dt.to_np(dt or "float32")
        arr = np.ones(shape, dtype=npd) if npd.kind in "biu" else \
            np.random.default_rng(0).standard_normal(shape).astype(npd)
        tensors.append(to_tensor(arr))  # on the current device, where Paddle puts them
        shapes.append(shape)
    return tensors, shapes


def _summary_rows(net, inputs):
    from ..nn import LayerList, Sequential

    rows = collections.OrderedDict()
    hooks = []
    depth = len(list(net.sublayers()))

    def hook(layer, inp, out):
        try:
            idx = int(layer.full_name().rsplit("_", 1)[-1])
        except ValueError:
            idx = len(rows)
        key = f"{type(layer).__name__}-{idx + 1}"
        params = trainable = 0
        for t in layer.state_dict(include_sublayers=False).values():
            n = int(np.prod(t.shape))
            params += n
            if getattr(t, "trainable", False) and not t.stop_gradient:
                trainable += n
        rows[key] = {"input_shape": _shape_of(list(inp)), "output_shape": _shape_of(out),
                     "nb_params": params, "trainable_params": trainable}

    for layer in net.sublayers(include_self=True):
        if isinstance(layer, (Sequential, LayerList)):
            continue
        if layer is net and depth >= 1:
            continue
        hooks.append(layer.register_forward_post_hook(hook))
    modes = [(layer, layer.training) for layer in net.sublayers(include_self=True)]
    net.eval()
    try:
        with state.no_grad():
            net(*inputs)
    finally:
        for h in hooks:
            h.remove()
        for layer, training in modes:
            layer.training = training
    return rows


def summary_string(net, input_size=None, dtypes=None, input=None):  # noqa: A002
    """The summary table as a string, and the parameter totals."""
    if input is not None:
        inputs = list(input.values()) if isinstance(input, dict) else (
            list(input) if isinstance(input, (list, tuple)) else [input])
        in_shapes = [list(t.shape) for t in inputs]
    elif input_size is not None:
        inputs, in_shapes = _inputs_from_size(input_size, dtypes)
    else:
        raise ValueError("summary: give input_size or input")
    rows = _summary_rows(net, inputs)
    widths = {"layer": 15, "input": 20, "output": 20, "params": 15}
    for key, r in rows.items():
        widths["layer"] = max(widths["layer"], len(key))
        widths["input"] = max(widths["input"], len(str(r["input_shape"])))
        widths["output"] = max(widths["output"], len(str(r["output_shape"])))
    table = sum(widths.values()) + 5  # the three column gaps and the side margins
    fmt = "{:^{}} {:^{}} {:^{}} {:^{}}"
    lines = ["-" * table,
             fmt.format("Layer (type)", widths["layer"], "Input Shape", widths["input"],
                        "Output Shape", widths["output"], "Param #", widths["params"]),
             "=" * table]
    total = trainable = 0
    total_output = 0
    for key, r in rows.items():
        lines.append(fmt.format(key, widths["layer"], str(r["input_shape"]), widths["input"],
                                str(r["output_shape"]), widths["output"],
                                f"{r['nb_params']:,}", widths["params"]))
        total += r["nb_params"]
        trainable += r["trainable_params"]
        total_output += _numel(r["output_shape"])
    in_size = abs(sum(int(np.prod(s)) for s in in_shapes) * 4.0 / 1024 ** 2)
    out_size = abs(2.0 * total_output * 4.0 / 1024 ** 2)
    par_size = abs(total * 4.0 / 1024 ** 2)
    lines += ["=" * table, f"Total params: {total:,}", f"Trainable params: {trainable:,}",
              f"Non-trainable params: {total - trainable:,}", "-" * table,
              f"Input size (MB): {in_size:0.2f}",
              f"Forward/backward pass size (MB): {out_size:0.2f}",
              f"Params size (MB): {par_size:0.2f}",
              f"Estimated Total Size (MB): {in_size + out_size + par_size:0.2f}",
              "-" * table]
    info = {"total_params": total, "trainable_params": trainable}
    return "\n".join(lines) + "\n", info, rows


class _SummaryInfo(dict):
    """``{'total_params': int, 'trainable_params': int}``, as Paddle returns it. In Jupyter the
    call already displayed the HTML table, so the dict does not show itself again as the cell's
    result; shown in a later cell it displays as the plain dict."""

    _shown_in = None

    def _ipython_display_(self):
        from IPython import get_ipython
        from IPython.display import display

        ip = get_ipython()
        if self._shown_in is not None and ip is not None and \
                ip.execution_count == self._shown_in:
            self._shown_in = None  # the table of this very call is the cell's picture
            return
        display(dict(self))


def summary(net, input_size=None, dtypes=None, input=None):  # noqa: A002
    """Print a table of the network's layers (type, input and output shapes, parameters) and
    return ``{'total_params': int, 'trainable_params': int}``. In Jupyter the table is shown
    once, as HTML, instead of the text.

    Args:
        net (Layer): the network.
        input_size (tuple|list|InputSpec): the input shape(s); None/-1 dims become 1.
        dtypes (str|list, optional): input dtypes (default float32).
        input (Tensor|list, optional): real inputs instead of input_size.

    Returns:
        dict: ``{'total_params': int, 'trainable_params': int}``.

    Example:
        >>> paddle.summary(paddle.vision.models.LeNet(), (1, 1, 28, 28))
    """
    text, info, rows = summary_string(net, input_size, dtypes, input)
    info = _SummaryInfo(info)
    from ..notebook._env import in_notebook

    if in_notebook():
        try:
            from ..notebook.tables import show_summary

            show_summary(rows, info)
        except ImportError:  # no IPython display: print the text table as in a terminal
            print(text)
            return info
        try:
            from IPython import get_ipython

            ip = get_ipython()
            info._shown_in = ip.execution_count if ip is not None else None
        except ImportError:
            pass
        return info
    print(text)
    return info
