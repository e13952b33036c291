"""jit.save / jit.load / TranslatedLayer."""

from __future__ import annotations

import os
import pickle
import warnings

from ..framework.io import write_files
from ..framework.tensor import Tensor
from . import _pdiparams, _program
from ._traced import (  # noqa: F401  (their names here too: onnx and the tests use them)
    TranslatedLayer,
    _example,
    _flat_specs,
    _InfoUnpickler,
    _to_host,
    symbol_sizes,
    trace,
)

__all__ = []


def save(layer, path, input_spec=None, **configs):
    """Save ``layer`` for inference as Paddle does: ``path.pdmodel`` (Paddle's ProgramDesc),
    ``path.pdiparams`` (the parameters in Paddle's combined byte layout) and
    ``path.pdiparams.info``. Real Paddle's ``jit.load`` and ``paddle.inference`` run the files.

    The forward is traced in eval mode for ``input_spec`` (free dims, ``None``/-1, are traced
    at several sizes and stay -1 in the program); each traced kernel is written as the Paddle
    operator(s) computing it, and the written program is run once to check it reproduces the
    eager forward. The three files are written as one (temporaries renamed together).

    A forward that calls a kernel without a Paddle operator form here is written instead in
    paddle_hl's older program format (a traced kernel list), with a warning naming the
    kernel(s): ``paddle_hl.jit.load`` runs such a file, real Paddle cannot read it. That format
    is kept only for such forwards.

    Args:
        layer (Layer|callable): the layer (or function) to save.
        path (str): path prefix, e.g. ``'inference/model'``.
        input_spec (list[InputSpec|Tensor], optional): the forward's inputs; defaults to the
            to_static input_spec of the forward.
        **configs: ``output_spec``, ``with_hook``, ``combine_params``, ``clip_extra``,
            ``skip_forward``, ``input_names_after_prune`` are accepted; ``output_spec`` and
            ``input_names_after_prune`` other than None are refused.

    Example:
        >>> paddle.jit.save(net, 'inference/net', [InputSpec([None, 4], 'float32', 'x')])
    """
    allowed = {"output_spec", "with_hook", "combine_params", "clip_extra", "skip_forward",
               "input_names_after_prune", "skip_prune_program"}
    bad = set(configs) - allowed
    if bad:
        raise ValueError(f"jit.save: unknown configs {sorted(bad)} (allowed: {sorted(allowed)})")
    if configs.get("output_spec") is not None or configs.get("input_names_after_prune"):
        raise ValueError("jit.save: output_spec / input_names_after_prune pruning is not "
                         "supported; every forward output is saved")
    if not isinstance(path, str) or not path or os.path.basename(path) == "":
        raise ValueError(f"jit.save: path must be a file prefix like 'dir/model', got {path!r}")
    from . import _export

    specs = _flat_specs(layer, input_spec, "jit.save")
    program, named = trace(layer, specs)
    try:
        files = _export.writers(layer, specs, (program, named))
    except _export.Unmapped as e:
        warnings.warn(
            f"jit.save: {path}.pdmodel is written in paddle_hl's own program format, which "
            "real Paddle cannot read (only paddle_hl.jit.load runs it): the forward computes "
            f"{', '.join(e.kernels)} without a Paddle operator form here ({e})", stacklevel=2)
        files = _own_format(program, named)
    # the three files are written in full under temporary names, then renamed into place
    # together: a failure (a full disk) leaves the previous model's files as they were
    write_files({path + k: w for k, w in files.items()})


def _own_format(program, named):
    """paddle_hl's older program format (a traced kernel list) for a forward that has no Paddle
    program form: ``{suffix: write(f)}``."""
    var_names = {}
    for k, v in named:
        n = v.name
        var_names[k] = n if n not in var_names.values() else f"{n}@{k}"
    arrays = {var_names[k]: _to_host(v._data) for k, v in named}
    info = {var_names[k]: {"structured_name": k, "stop_gradient": bool(v.stop_gradient),
                           "trainable": not v.stop_gradient} for k, v in named}
    program["params"] = [(var_names[k], k) for k, _ in named]
    program["trainable"] = {k: not v.stop_gradient for k, v in named}
    program["param_order"] = sorted(arrays)
    model = _program.dumps(program)
    return {
        ".pdiparams": lambda f: _pdiparams.write(f, arrays),
        ".pdiparams.info": lambda f: pickle.dump(info, f, protocol=2),
        ".pdmodel": lambda f: f.write(model),
    }


def _read_program(path):
    model = path + ".pdmodel"
    if not os.path.exists(model):
        raise FileNotFoundError(f"jit.load: {model} does not exist (path is the prefix given "
                                "to jit.save)")
    with open(model, "rb") as f:
        return _program.loads(f.read(), model)


def load(path, **configs):
    """Load a layer saved by :func:`save` as a :class:`TranslatedLayer` (no Python class needed).

    Args:
        path (str): the prefix given to :func:`save`.
        **configs: ``model_filename`` / ``params_filename`` override the file names.

    Returns:
        TranslatedLayer: a callable layer with the saved parameters.

    Example:
        >>> net = paddle.jit.load('inference/net')
        >>> y = net(x)
    """
    bad = set(configs) - {"model_filename", "params_filename"}
    if bad:
        raise ValueError(f"jit.load: unknown configs {sorted(bad)}")
    from ._interpreter import load_paddle  # a ProgramDesc written by Paddle: interpreted

    layer = load_paddle(path, configs)
    if layer is not None:
        return layer
    if configs.get("model_filename") or configs.get("params_filename"):
        base = path
        model = os.path.join(base, configs.get("model_filename") or "__model__")
        prefix = model[: -len(".pdmodel")] if model.endswith(".pdmodel") else model
        program = _read_program(prefix)
        params_file = os.path.join(base, configs["params_filename"]) if configs.get(
            "params_filename") else prefix + ".pdiparams"
    else:
        program = _read_program(path)
        params_file = path + ".pdiparams"
    # _read_program has checked every kernel the program calls against the kernel registry
    arrays = _pdiparams.read(params_file, program["param_order"])
    return TranslatedLayer(program, arrays)


def read_state_dict(path, return_numpy=True):
    """The parameters of an inference model saved by ``jit.save`` -- by Paddle or paddle_hl --
    as ``{structured name: array}``, read from ``path.pdiparams`` and ``path.pdiparams.info``
    (what Paddle's ``paddle.load(path)`` returns for such a prefix).

    Args:
        path (str): the prefix given to ``jit.save``.
        return_numpy (bool): NumPy arrays (default) or Tensors.

    Returns:
        dict: structured name -> array/Tensor, in the parameters file's order.
    """
    info_file, params_file = path + ".pdiparams.info", path + ".pdiparams"
    for f in (params_file, info_file):
        if not os.path.exists(f):
            raise FileNotFoundError(f"jit: {f} does not exist (needed to read the parameters "
                                    "of an inference model by structured name)")
    with open(info_file, "rb") as f:
        info = _InfoUnpickler(f).load()
    if not isinstance(info, dict) or not all(
            isinstance(v, dict) and "structured_name" in v for v in info.values()):
        raise ValueError(f"jit: {info_file} is not a .pdiparams.info mapping")
    arrays = _pdiparams.read(params_file, sorted(info))
    out = {}
    for var in sorted(info):
        arr = arrays[var]
        out[info[var]["structured_name"]] = arr if return_numpy else Tensor(arr)
    return out

