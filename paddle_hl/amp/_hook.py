"""The op-wrapper hook behind auto_cast, the operator-stats table and the tensor checker.

``framework.op.apply`` calls ``state.amp_hook(kernel, inputs, attrs)`` before it runs a kernel,
but only while one of those features is on (otherwise the hook is None and the wrapper pays one
attribute check). The hook

1. names the op as Paddle does (``matmul_v2``, ``elementwise_add``, ``conv2d`` ...);
2. under auto_cast, picks the dtype the op runs in from the white/black lists and the promotion
   rule, and casts the floating inputs with differentiable cast ops, so that gradients flow back
   to the original dtypes;
3. counts the op per dtype when operator stats are collected;
4. when the tensor checker is on, runs the op itself and checks its outputs for NaN/Inf.

AMP settings are per thread (``_tls.cfg``); stats and the checker are process-wide, as in Paddle.
"""

from __future__ import annotations

import threading

import numpy as np

from ..framework import dtype as _dt
from ..framework import state
from ..framework.op import apply
from ..framework.tensor import Tensor
from . import amp_lists as _lists

__all__ = []

F16 = np.dtype(np.float16)
BF16 = _dt.BFLOAT16_NP
F32 = np.dtype(np.float32)
_CASTABLE = (F16, BF16, F32)
_KIND = {F16: "fp16", BF16: "bf16", F32: "fp32"}

WHITE, BLACK, GRAY = "white", "black", "gray"


class _Ran:
    """What the hook returns when it ran the op itself: the wrapper returns ``value``."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class _Tls(threading.local):
    def __init__(self):
        self.cfg = None  # innermost auto_cast setting of this thread (a Config) or None
        self.busy = False  # True while the hook runs ops itself (casts, composite parts)


_tls = _Tls()
_lock = threading.Lock()
_users = 0  # active reasons for the hook: auto_cast blocks (all threads), stats, checker

# process-wide debugging state (paddle_hl.amp.debugging)
stats = None  # {(op name, 'fp16'|'bf16'|'fp32'|'other'): count} while collecting
checker = None  # the active TensorCheckerConfig

# the dtype of the last auto_cast entered (Paddle's global AMP dtype); GradScaler reads it
last_dtype = ["float32"]


def retain():
    """Install the hook (one more user)."""
    global _users
    with _lock:
        _users += 1
        state.amp_hook = _hook


def release():
    """One user fewer; the hook goes when none is left, so the wrapper is back to one check."""
    global _users
    with _lock:
        _users = max(0, _users - 1)
        if _users == 0:
            state.amp_hook = None


class Config:
    """One auto_cast setting: level, low-precision dtype, effective lists, promotion."""

    __slots__ = ("level", "dtype", "npd", "white", "black", "custom_white", "custom_black",
                 "use_promote", "_cache")

    def __init__(self, level, dtype, custom_white, custom_black, use_promote):
        self.level = level
        self.dtype = dtype
        self.npd = F16 if dtype == "float16" else BF16
        self.white = _lists.white_list()[dtype][level]
        self.black = _lists.black_list()[dtype][level]
        self.custom_white = frozenset(custom_white)
        self.custom_black = frozenset(custom_black)
        self.use_promote = use_promote
        self._cache = {}

    def category(self, names):
        """WHITE, BLACK or GRAY for an op known under ``names``; custom lists win."""
        cat = self._cache.get(names)
        if cat is None:
            if any(n in self.custom_white for n in names):
                cat = WHITE
            elif any(n in self.custom_black for n in names):
                cat = BLACK
            elif any(n in self.white for n in names):
                cat = WHITE
            elif any(n in self.black for n in names):
                cat = BLACK
            else:
                cat = GRAY
            self._cache[names] = cat
        return cat


# ---------------------------------------------------------------- naming ops

class Op:
    """How the hook sees one kernel call: its Paddle name and its AMP particulars."""

    __slots__ = ("name", "names", "only_x", "bias", "unsupported", "exempt")

    def __init__(self, name, own, only_x=False, bias=False, extra=()):
        self.name = name  # the Paddle name (stats, checker, messages)
        self.names = tuple(dict.fromkeys((name, own) + tuple(extra)))  # matched by the lists
        self.only_x = only_x  # batch_norm / layer_norm: only X is cast and decides
        self.bias = bias  # linear / conv: input 2 is a bias added after the main op
        self.unsupported = name in _lists.UNSUPPORTED_LOW_PRECISION
        self.exempt = own in _lists.EXEMPT


_ops = {}


def _op(name, own, **kw):
    key = (name, own, tuple(sorted(kw.items())))
    op = _ops.get(key)
    if op is None:
        op = _ops[key] = Op(name, own, **kw)
    return op


def _norm(inputs, attrs):
    # one fused kernel serves every normalization; its layout tells which one was called
    view, raxes = attrs.get("view", ()), attrs.get("raxes", ())
    if 0 in raxes:
        return _op("batch_norm", "norm", only_x=True)
    if len(view) == 4:
        return _op("group_norm", "norm")
    if len(view) == 3:
        return _op("instance_norm", "norm")
    return _op("layer_norm", "norm", only_x=True)


def _conv(inputs, attrs):
    w = inputs[1]
    shape = w.shape if isinstance(w, Tensor) else ()
    nd = len(shape) - 2
    groups = attrs.get("groups", 1)
    if nd == 3:
        return _op("conv3d", "conv", bias=True)
    cin = shape[1] * groups if nd > 0 else 0
    # Paddle picks its depthwise kernel when every input channel is its own group
    if cin > 1 and groups == cin and shape[0] % cin == 0:
        return _op("depthwise_conv2d", "conv", bias=True)
    return _op("conv2d", "conv", bias=True)


def _conv_t(inputs, attrs):
    w = inputs[1]
    nd = (w.ndim if isinstance(w, Tensor) else 4) - 2
    return _op("conv3d_transpose" if nd == 3 else "conv2d_transpose", "conv_transpose",
               bias=True)


def _pool_dims(attrs):
    k = attrs.get("ksize", attrs.get("osz", ()))
    return len(k) if isinstance(k, (tuple, list)) else 2


def _max_pool(inputs, attrs):
    nd = _pool_dims(attrs)
    if attrs.get("mask"):
        return _op("max_pool3d_with_index" if nd == 3 else "max_pool2d_with_index", "max_pool")
    return _op("pool3d" if nd == 3 else "pool2d", "max_pool")


def _adaptive_max_pool(inputs, attrs):
    # Paddle runs adaptive max pooling through its indexed max-pool kernel, mask or not
    nd = _pool_dims(attrs)
    return _op("max_pool3d_with_index" if nd == 3 else "max_pool2d_with_index",
               "adaptive_max_pool")


def _avg_pool(own):
    def resolve(inputs, attrs):
        return _op("pool3d" if _pool_dims(attrs) == 3 else "pool2d", own)

    return resolve


def _pow(inputs, attrs):
    if len(inputs) > 1 and isinstance(inputs[1], Tensor):
        return _op("elementwise_pow", "pow")
    return _op("pow", "pow")


_RESOLVERS = {
    "norm": _norm, "conv": _conv, "conv_transpose": _conv_t, "max_pool": _max_pool,
    "adaptive_max_pool": _adaptive_max_pool, "avg_pool": _avg_pool("avg_pool"),
    "adaptive_avg_pool": _avg_pool("adaptive_avg_pool"), "pow": _pow,
}


def own_name(fn) -> str:
    """paddle_hl's name of a kernel (``op_name``, else the function name without underscores)."""
    name = getattr(fn, "op_name", None)
    if name is None:
        name = getattr(fn, "__name__", type(fn).__name__).strip("_")
        for suffix in ("_kernel", "_k"):
            if name.endswith(suffix):
                name = name[: -len(suffix)]
    return name


def _describe(fn):
    """The Op of a kernel, or a resolver ``(inputs, attrs) -> Op`` when its name depends on
    the call."""
    own = own_name(fn)
    res = _RESOLVERS.get(own)
    if res is not None:
        return res
    if own == "linear":
        return _op("matmul_v2", "linear", bias=True)
    if own in ("batch_norm", "layer_norm"):  # inference-mode kernels: only X is cast
        return _op(own, own, only_x=True)
    extra = _lists.INTERP_NAMES if own.startswith("interpolate") else ()
    return _op(_lists.PADDLE_NAME.get(own, own), own, extra=extra)


def op_of(fn, inputs, attrs) -> Op:
    """Resolve (and cache on the kernel) how the hook sees this call."""
    d = getattr(fn, "_hl_amp", None)
    if d is None:
        d = _describe(fn)
        try:
            fn._hl_amp = d
        except AttributeError:  # a kernel that takes no attributes: resolved every call
            pass
    if type(d) is not Op:
        d = d(inputs, attrs)
    return d


# ---------------------------------------------------------------- the hook

def _hook(fn, inputs, attrs):
    tls = _tls
    if tls.busy:
        return inputs
    op = op_of(fn, inputs, attrs)
    cfg = tls.cfg
    if cfg is not None and not op.exempt:
        inputs, bias = _autocast(cfg, op, inputs)
        if bias is not None:
            return _Ran(_composite(fn, op, inputs, attrs, bias))
    if stats is not None:
        count(op.name, inputs, attrs)
    chk = checker
    if chk is not None and chk.wants(op.names):
        return _Ran(chk.run_checked(op.name, _run, fn, inputs, attrs))
    return inputs


def _run(fn, inputs, attrs):
    """Run the op through the wrapper without the hook seeing it again."""
    tls = _tls
    tls.busy = True
    try:
        return apply(fn, *inputs, **attrs)
    finally:
        tls.busy = False


def dst_dtype(cfg: Config, op: Op, dtypes) -> np.dtype:
    """The dtype Paddle 2.6 runs ``op`` in under ``cfg``, given its floating input dtypes."""
    low = cfg.npd
    cat = cfg.category(op.names)
    if cfg.level == "O2" and not cfg.use_promote:
        dst = F32 if cat is BLACK else low
    elif cat is WHITE:
        dst = low
    elif cat is BLACK or cfg.level == "OD":
        dst = F32
    else:  # promotion: one float32 input keeps the op in float32
        dst = F32 if any(d == F32 for d in dtypes) else low
    if dst is low and op.unsupported:
        dst = F32
    return dst


def _autocast(cfg, op, inputs):
    """Cast the castable floating inputs of one call; returns (inputs, bias-to-add-after)."""
    idx = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t._data.dtype in _CASTABLE]
    if op.only_x:
        idx = [i for i in idx if i == 0]
    if not idx:
        return inputs, None
    bias = None
    if op.bias and 2 in idx:
        idx.remove(2)
    dst = dst_dtype(cfg, op, [inputs[i]._data.dtype for i in idx])
    if op.bias and len(inputs) > 2 and isinstance(inputs[2], Tensor):
        b = inputs[2]
        if b._data.dtype != dst and dst != F32:
            # Paddle adds the bias with a separate (promoting) add after the low-precision op
            bias = b
        elif b._data.dtype in _CASTABLE:
            idx.append(2)
    if all(inputs[i]._data.dtype == dst for i in idx):
        return inputs, bias
    new = list(inputs)
    tls = _tls
    tls.busy = True
    try:
        from ..tensor._helpers import cast_to

        for i in idx:
            t = new[i]
            if t._data.dtype != dst:
                if stats is not None:
                    count("cast", (t,), {})
                new[i] = cast_to(t, dst)
    finally:
        tls.busy = False
    return tuple(new), bias


def _composite(fn, op, inputs, attrs, bias):
    """linear/conv whose bias keeps another dtype: main op in low precision, then the add."""
    from ..tensor.manipulation import reshape
    from ..tensor.math import add

    main = inputs[:2] + (None,) + inputs[3:]
    if stats is not None:
        count(op.name, main, attrs)
    chk = checker
    if chk is not None and chk.wants(op.names):
        out = chk.run_checked(op.name, _run, fn, main, attrs)
    else:
        out = _run(fn, main, attrs)
    if op.name != "matmul_v2" and not attrs.get("cl", False):
        # channel-first conv output [N, C, *spatial]: the bias broadcasts over the channel axis
        bias = reshape(bias, [1, -1] + [1] * (out.ndim - 2))
    return add(out, bias)


def dtype_kind(npd) -> str:
    """'fp16', 'bf16', 'fp32' or 'other' (the operator-stats columns)."""
    return _KIND.get(npd, "other")


def count(name, inputs, attrs):
    """Count one call of ``name`` under the dtype its kernel runs in (its first Tensor input's
    dtype; for an op without Tensor inputs, its ``dtype`` attribute)."""
    table = stats
    if table is None:
        return
    kind = None
    first = None
    for t in inputs:
        if isinstance(t, Tensor):
            d = t._data.dtype
            if d in _CASTABLE:
                kind = _KIND[d]
                break
            if first is None:
                first = d
    if kind is None:
        if first is not None:
            kind = "other"
        else:
            d = attrs.get("dtype")
            kind = _KIND.get(np.dtype(d), "other") if isinstance(d, (np.dtype, type)) else \
                "other"
    key = (name, kind)
    table[key] = table.get(key, 0) + 1


# ---------------------------------------------------------------- the AMP state of a thread

def current():
    """This thread's AMP setting (a Config or None): captured by code that must replay it."""
    return _tls.cfg


class restored:  # noqa: N801  (a small context manager)
    """Run a block under a captured AMP setting (e.g. a PyLayer backward under its forward's
    auto_cast)."""

    def __init__(self, cfg):
        self._cfg = cfg

    def __enter__(self):
        self._prev = _tls.cfg
        _tls.cfg = self._cfg
        if self._cfg is not None:
            retain()
        return self

    def __exit__(self, *exc):
        _tls.cfg = self._prev
        if self._cfg is not None:
            release()
        return False


def casting() -> bool:
    """Whether auto_cast casts op inputs in this thread (ops may then take mixed dtypes)."""
    return state.amp_hook is not None and _tls.cfg is not None
