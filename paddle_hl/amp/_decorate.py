"""``amp.decorate``: pure low-precision (O2) models and master weights."""

from __future__ import annotations

import collections
import weakref

from .. import backend
from ..framework import dtype as _dt
from ..framework.tensor import _wrap

__all__ = []

_SAVE_DTYPES = ("float16", "bfloat16", "float32", "float64")


def _norm_types():
    """Normalization layers whose parameters O2 keeps in float32 (their statistics need it)."""
    from ..nn.layer import norm

    return (norm._BatchNormBase, norm.BatchNorm, norm.LayerNorm, norm.GroupNorm,
            norm._InstanceNormBase)


def _is_data_parallel(model) -> bool:
    return any(c.__name__ == "DataParallel" for c in type(model).__mro__)


def _as_list(obj):
    if isinstance(obj, (list, tuple)):
        return list(obj), True
    return [obj], False


def _excluded(excluded_layers, layer_cls):
    """(layer classes, layer instances) named by ``excluded_layers``."""
    if excluded_layers is None:
        return (), ()
    items = list(excluded_layers) if isinstance(excluded_layers, (list, tuple)) else \
        [excluded_layers]
    types, insts = [], []
    for it in items:
        if isinstance(it, type) and issubclass(it, layer_cls):
            types.append(it)
        elif isinstance(it, layer_cls):
            insts.append(it)
        else:
            raise TypeError("decorate: excluded_layers must be a Layer type or instance, or a "
                            f"list of them, got {it!r}")
    return tuple(types), tuple(insts)


def _cast_layer(layer, npd):
    """Cast one layer's own floating parameters and buffers (not its sublayers) in place."""
    for t in list(layer._parameters.values()) + list(layer._buffers.values()):
        if t is None or not _dt.is_float_np(t._data.dtype) or t._data.dtype == npd:
            continue
        t._data = t._data.astype(npd)
        t._ver.v += 1
        if t._grad is not None:
            t._grad = _wrap(t._grad._data.astype(npd))
    layer._dtype = _dt.from_np(npd).name


def _keep_fp32(model, norm_types, ex_types, ex_insts):
    """ids of the layers O2 leaves in float32: norms, and excluded layers with their subtrees."""
    keep = set()
    for layer in model.sublayers(include_self=True):
        if isinstance(layer, norm_types):
            keep.add(id(layer))
        if (ex_types and isinstance(layer, ex_types)) or any(layer is e for e in ex_insts):
            keep.update(id(sub) for sub in layer.sublayers(include_self=True))
    return keep


def _save_hook(npd):
    def cast_state(state_dict):
        out = collections.OrderedDict()
        for k, v in state_dict.items():
            arr = getattr(v, "_data", None)
            if arr is not None and _dt.is_float_np(arr.dtype) and arr.dtype != npd:
                c = _wrap(arr.astype(npd))
                c.name = getattr(v, "name", k)
                out[k] = c
            else:
                out[k] = v
        return out

    return cast_state


def _master_grad_hook(param):
    ref = weakref.ref(param)

    def keep_fp32_grad(grad):
        # the engine adds each gradient into an existing .grad in place, so a float32 .grad
        # accumulates the low-precision gradients in float32 (Paddle's master_grad)
        p = ref()
        if p is not None and p._grad is None:
            xp = backend.get_array_module(p._data)
            p._grad = _wrap(xp.zeros(p._data.shape, dtype="float32"))

    return keep_fp32_grad


def decorate(models, optimizers=None, level="O1", dtype="float16", master_weight=None,
             save_dtype=None, master_grad=False, excluded_layers=None):
    """Prepare models (and optimizers) for AMP; O2 casts the parameters to low precision.

    O1 returns its arguments unchanged (auto_cast casts per op). O2 casts the parameters and
    buffers of every nested sublayer to ``dtype``, except normalization layers (BatchNorm*,
    SyncBatchNorm, LayerNorm, GroupNorm, InstanceNorm*) and ``excluded_layers``, which stay
    float32; the optimizers keep float32 master weights (``multi_precision``) unless
    ``master_weight=False``.

    Args:
        models (Layer|list[Layer]): the models, decorated in place.
        optimizers (Optimizer|list[Optimizer], optional): their optimizers.
        level (str): 'O1' or 'O2'. Default 'O1'.
        dtype (str): 'float16' or 'bfloat16'. Default 'float16'.
        master_weight (bool, optional): O2 master weights; None means True.
        save_dtype (str, optional): dtype of the tensors ``state_dict`` returns (float16,
            bfloat16, float32, float64); the parameters keep theirs.
        master_grad (bool): O2: keep the parameters' gradients in float32.
        excluded_layers (Layer|type|list, optional): layers (instances or types) kept in
            float32 with their sublayers.

    Returns:
        The models, or ``(models, optimizers)`` when optimizers are given, in the form passed.

    Raises:
        RuntimeError: a model is already wrapped in DataParallel (decorate it first).

    Example:
        >>> model = paddle.nn.Sequential(paddle.nn.Linear(4, 4), paddle.nn.BatchNorm1D(4))
        >>> opt = paddle.optimizer.Adam(parameters=model.parameters())
        >>> model, opt = paddle.amp.decorate(model, opt, level='O2')
        >>> model[0].weight.dtype, model[1].weight.dtype   # float16, float32
    """
    from ..nn.layer.layers import Layer

    if level not in ("O1", "O2"):
        raise ValueError("level should be O1 or O2, O1 represent AMP train mode, O2 represent "
                         f"Pure fp16 train mode. (decorate got level={level!r})")
    name = dtype if isinstance(dtype, str) else getattr(dtype, "name", repr(dtype))
    if name not in ("float16", "bfloat16"):
        raise ValueError(f"dtype only support float16 or bfloat16. (decorate got {dtype!r})")
    if save_dtype is not None:
        sname = save_dtype if isinstance(save_dtype, str) else getattr(save_dtype, "name", None)
        if sname not in _SAVE_DTYPES:
            raise ValueError("save_dtype can only be float16, bfloat16, float32 or float64, "
                             f"but your input save_dtype is {save_dtype!r}.")
        save_dtype = sname
    model_list, models_seq = _as_list(models)
    for m in model_list:
        if not isinstance(m, Layer):
            raise TypeError("decorate: models should be paddle.nn.Layer or a list of them, "
                            f"but received {type(m).__name__}.")
        if _is_data_parallel(m):
            raise RuntimeError("For distributed AMP training, you should first use "
                               "paddle.amp.decorate() to decotate origin model, and then call "
                               "paddle.DataParallel get distributed model.")
    opt_list, opts_seq = ([], False) if optimizers is None else _as_list(optimizers)
    for o in opt_list:
        if not (hasattr(o, "step") and hasattr(o, "_multi_precision")):
            raise TypeError("decorate: optimizers should be paddle.optimizer.Optimizer or a "
                            f"list of them, but received {type(o).__name__}.")
    if level == "O2":
        npd = _dt.to_np(name)
        ex_types, ex_insts = _excluded(excluded_layers, Layer)
        norms = _norm_types()
        for m in model_list:
            keep = _keep_fp32(m, norms, ex_types, ex_insts)
            for layer in m.sublayers(include_self=True):
                if id(layer) not in keep:
                    _cast_layer(layer, npd)
            m._casted_by_pure_fp16 = True
            if master_grad:
                for p in m.parameters():
                    if not p.stop_gradient and p._data.dtype in _dt.LOW_FLOATS:
                        p.register_hook(_master_grad_hook(p))
        use_master = True if master_weight is None else bool(master_weight)
        for o in opt_list:
            o._multi_precision = use_master
        if save_dtype is not None:
            hook = _save_hook(_dt.to_np(save_dtype))
            for m in model_list:
                m.register_state_dict_hook(hook)
    out_models = model_list if models_seq else model_list[0]
    if optimizers is None:
        return out_models
    return out_models, (opt_list if opts_seq else opt_list[0])
