"""check_numerics and the tensor checker (stop at the first op that produces NaN/Inf)."""

from __future__ import annotations

import enum
import functools
import os
import sys
import traceback

import numpy as np

from ... import backend
from ...framework import dtype as _dt
from ...framework import place as _pl
from ...framework.tensor import Tensor, _wrap
from .. import _hook

__all__ = []

_SHORT = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64"}
_FP16_MAX = 65504.0
_PKG_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class DebugMode(enum.Enum):
    """What the checks report.

    - CHECK_NAN_INF_AND_ABORT: report a tensor with NaN/Inf and raise (the default);
    - CHECK_NAN_INF: report tensors with NaN/Inf and continue;
    - CHECK_ALL_FOR_OVERFLOW: also report float32 results outside float16's range;
    - CHECK_ALL: report every checked tensor.
    """

    CHECK_NAN_INF_AND_ABORT = 0
    CHECK_NAN_INF = 1
    CHECK_ALL_FOR_OVERFLOW = 2
    CHECK_ALL = 3


def _stats(arr):
    """(num_nan, num_inf, num_zero, num_overflow, max, min, mean) of a floating array."""
    xp = backend.get_array_module(arr)
    a = arr if arr.dtype in (np.float32, np.float64) else arr.astype(np.float32)
    if a.size == 0:
        return 0, 0, 0, 0, 0.0, 0.0, 0.0
    nan = xp.isnan(a)
    inf = xp.isinf(a)
    n_nan, n_inf = int(nan.sum()), int(inf.sum())
    n_zero = int((a == 0).sum())
    big = xp.abs(a) > _FP16_MAX
    n_over = int(big.sum()) - n_inf
    if n_nan:
        rest = a[~nan]
        mx = float(rest.max()) if rest.size else float("nan")
        mn = float(rest.min()) if rest.size else float("nan")
    else:
        mx, mn = float(a.max()), float(a.min())
    mean = float(a.mean())
    return n_nan, n_inf, n_zero, n_over, mx, mn, mean


def _where(op_type, var_name, arr):
    place = _pl.place_of(arr)
    device = "cpu" if place.kind == "cpu" else f"gpu:{place.index}"
    dt = _SHORT.get(_dt.from_np(arr.dtype).name, str(arr.dtype))
    return f"[device={device}, op={op_type}, tensor={var_name}, dtype={dt}]"


def _emit(line, output_dir=None):
    if output_dir:
        os.makedirs(output_dir, exist_ok=True)
        path = os.path.join(output_dir, f"worker_{os.getpid()}.log")
        with open(path, "a", encoding="utf-8") as f:
            f.write(line + "\n")
    else:
        print(line, file=sys.stderr)


def _report(arr, op_type, var_name, mode, output_dir=None, stack=""):
    """Check one array; print what ``mode`` asks for; raise in abort mode on NaN/Inf.

    Returns the stats tuple of :func:`_stats`.
    """
    st = _stats(arr)
    n_nan, n_inf, n_zero, n_over, mx, mn, mean = st
    where = _where(op_type, var_name, arr)
    numel = int(arr.size)
    if n_nan or n_inf:
        _emit(f"[PRECISION] [ERROR] in {where}, numel={numel}, num_nan={n_nan}, "
              f"num_inf={n_inf}, num_zero={n_zero}, max={mx:e}, min={mn:e}, mean={mean:e}",
              output_dir)
        if mode is DebugMode.CHECK_NAN_INF_AND_ABORT:
            raise RuntimeError(f"There are NAN or INF (num_nan={n_nan}, num_inf={n_inf}, "
                               f"num_zero={n_zero}) in {where}.{stack}")
    elif mode is DebugMode.CHECK_ALL_FOR_OVERFLOW and n_over and arr.dtype == np.float32:
        _emit(f"[PRECISION] [WARNING] in {where}, numel={numel}, num_overflow={n_over} (values "
              f"outside float16's range), max={mx:e}, min={mn:e}, mean={mean:e}", output_dir)
    elif mode is DebugMode.CHECK_ALL:
        _emit(f"[PRECISION] in {where}, numel={numel}, num_zero={n_zero}, max={mx:e}, "
              f"min={mn:e}, mean={mean:e}", output_dir)
    return st


def _mode(debug_mode, where):
    if not isinstance(debug_mode, DebugMode):
        raise TypeError(f"{where}: debug_mode must be a paddle.amp.debugging.DebugMode, got "
                        f"{debug_mode!r}")
    return debug_mode


def check_numerics(tensor, op_type, var_name, debug_mode=DebugMode.CHECK_NAN_INF_AND_ABORT):
    """Count the NaN, Inf and zero elements of a floating tensor, and report per ``debug_mode``.

    Args:
        tensor (Tensor): the tensor to check (float16, bfloat16, float32 or float64).
        op_type (str): the op name shown in the report.
        var_name (str): the tensor name shown in the report.
        debug_mode (DebugMode): CHECK_NAN_INF_AND_ABORT (default) raises on NaN/Inf.

    Returns:
        tuple: ``(stats, values)``: int64 Tensor ``[num_nan, num_inf, num_zero]`` and float32
        Tensor ``[max, min, mean]`` (max and min ignore NaN).

    Raises:
        RuntimeError: NaN or Inf found with CHECK_NAN_INF_AND_ABORT.

    Example:
        >>> x = paddle.to_tensor([1.0, 0.0, float('nan')])
        >>> stats, values = paddle.amp.debugging.check_numerics(
        ...     x, 'my_op', 'x', paddle.amp.debugging.DebugMode.CHECK_NAN_INF)
        >>> stats.numpy()   # [1, 0, 1]
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"check_numerics: tensor must be a paddle.Tensor, got "
                        f"{type(tensor).__name__}")
    mode = _mode(debug_mode, "check_numerics")
    arr = tensor._data
    if not _dt.is_float_np(arr.dtype):
        raise TypeError(f"check_numerics: tensor '{var_name}' of op '{op_type}' has dtype "
                        f"{tensor.dtype.name}; expected float16, bfloat16, float32 or float64")
    n_nan, n_inf, n_zero, _, mx, mn, mean = _report(arr, op_type, var_name, mode)
    xp = backend.get_array_module(arr)
    stats = _wrap(xp.asarray([n_nan, n_inf, n_zero], dtype=np.int64))
    values = _wrap(xp.asarray([mx, mn, mean], dtype=np.float32))
    return stats, values


def _names(ops, arg):
    if ops is None:
        return None
    if isinstance(ops, str):
        return frozenset({ops})
    if not isinstance(ops, (list, tuple, set, frozenset)) or \
            not all(isinstance(o, str) for o in ops):
        raise TypeError(f"TensorCheckerConfig: {arg} must be a list of op names, got {ops!r}")
    return frozenset(ops)


class TensorCheckerConfig:
    """Settings of the tensor checker (:func:`enable_tensor_checker`).

    Args:
        enable (bool): turn checking on.
        debug_mode (DebugMode): what to report; the default raises at the first op whose output
            has NaN/Inf, naming that op.
        output_dir (str, optional): write the reports to files there instead of stderr.
        checked_op_list (list[str], optional): check only these ops (Paddle names such as
            ``'elementwise_div'``, or paddle_hl names such as ``'divide'``).
        skipped_op_list (list[str], optional): never check these ops.
        debug_step (list[int], optional): ``[start, end)``: check only during these steps (one
            step per :func:`enable_tensor_checker` call).
        stack_height_limit (int): Python frames shown with an error (0: none). Default 1.
    """

    def __init__(self, enable, debug_mode=DebugMode.CHECK_NAN_INF_AND_ABORT, output_dir=None,
                 checked_op_list=None, skipped_op_list=None, debug_step=None,
                 stack_height_limit=1):
        self.enable = bool(enable)
        self.debug_mode = _mode(debug_mode, "TensorCheckerConfig")
        if output_dir is not None and not isinstance(output_dir, (str, os.PathLike)):
            raise TypeError(f"TensorCheckerConfig: output_dir must be a path, got "
                            f"{output_dir!r}")
        self.output_dir = None if output_dir is None else os.fspath(output_dir)
        self.checked_op_list = _names(checked_op_list, "checked_op_list")
        self.skipped_op_list = _names(skipped_op_list, "skipped_op_list")
        self.start_step = self.end_step = None
        if debug_step is not None:
            if not isinstance(debug_step, (list, tuple)) or len(debug_step) != 2 or \
                    not all(isinstance(s, int) and not isinstance(s, bool) for s in debug_step):
                raise ValueError(f"TensorCheckerConfig: debug_step must be [start_step, "
                                 f"end_step], two ints, got {debug_step!r}")
            if not 0 <= debug_step[0] < debug_step[1]:
                raise ValueError(f"TensorCheckerConfig: debug_step [start_step, end_step) needs "
                                 f"0 <= start_step < end_step, got {list(debug_step)}")
            self.start_step, self.end_step = debug_step
        self.debug_step = debug_step
        if not isinstance(stack_height_limit, int) or stack_height_limit < 0:
            raise ValueError(f"TensorCheckerConfig: stack_height_limit must be an int >= 0, got "
                             f"{stack_height_limit!r}")
        self.stack_height_limit = stack_height_limit
        self.current_step_id = 0
        self.seed = 123
        if self.enable:
            # as Paddle: a fixed seed, so that a run with the checker is reproducible
            from ...framework.random import seed

            seed(self.seed)

    def update_and_check_step_id(self) -> bool:
        """Advance one step; True when this step is checked."""
        if not self.enable:
            return False
        step = self.current_step_id
        self.current_step_id += 1
        if self.start_step is None:
            return True
        return self.start_step <= step < self.end_step

    def wants(self, names) -> bool:
        """Whether an op known under ``names`` (its Paddle and paddle_hl names) is checked."""
        if isinstance(names, str):
            names = (names,)
        if self.skipped_op_list is not None and any(n in self.skipped_op_list for n in names):
            return False
        return self.checked_op_list is None or any(n in self.checked_op_list for n in names)

    def _stack(self) -> str:
        if not self.stack_height_limit:
            return ""
        frames = [f for f in traceback.extract_stack()
                  if not os.path.abspath(f.filename).startswith(_PKG_DIR)]
        frames = frames[-self.stack_height_limit:]
        if not frames:
            return ""
        return "\n  Python stack (most recent call last):\n" + "".join(
            traceback.format_list(frames)).rstrip()

    def run_checked(self, name, run, fn, inputs, attrs):
        """Run one op and check its floating outputs (called by the AMP hook)."""
        out = run(fn, inputs, attrs)
        outs = out if type(out) is tuple else (out,)
        for i, t in enumerate(outs):
            if not isinstance(t, Tensor) or not _dt.is_float_np(t._data.dtype):
                continue
            var = "out" if len(outs) == 1 else f"out_{i}"
            mode = self.debug_mode
            if mode is DebugMode.CHECK_NAN_INF_AND_ABORT:
                a = t._data
                xp = backend.get_array_module(a)
                if bool(xp.isfinite(a).all()):  # the common case: one pass, no report
                    continue
                _report(a, name, var, mode, self.output_dir, self._stack())
            else:
                _report(t._data, name, var, mode, self.output_dir)
        return out


def enable_tensor_checker(checker_config):
    """Check the outputs of every op from now on (for the current step of ``checker_config``).

    Call it at the start of each training step and :func:`disable_tensor_checker` at the end;
    ``debug_step`` selects the steps. With the default mode the first op whose output has NaN or
    Inf raises a RuntimeError naming it.

    Args:
        checker_config (TensorCheckerConfig): the settings.
    """
    if not isinstance(checker_config, TensorCheckerConfig):
        raise TypeError(f"enable_tensor_checker: expected a TensorCheckerConfig, got "
                        f"{type(checker_config).__name__}")
    on = checker_config.update_and_check_step_id()
    if on:
        if _hook.checker is None:
            _hook.retain()
        _hook.checker = checker_config
    else:
        disable_tensor_checker()


def disable_tensor_checker():
    """Stop checking op outputs."""
    if _hook.checker is not None:
        _hook.checker = None
        _hook.release()


def check_layer_numerics(func):
    """Decorator for a Layer's ``forward``: check its floating Tensor inputs and outputs for
    NaN/Inf (raising a RuntimeError that names the layer).

    Args:
        func (callable): ``forward(self, *inputs)``.

    Returns:
        The decorated forward.
    """
    @functools.wraps(func)
    def forward(self, *args, **kwargs):
        name = type(self).__name__
        for i, a in enumerate(args):
            if isinstance(a, Tensor) and _dt.is_float_np(a._data.dtype):
                check_numerics(a, name, f"input_{i}")
        out = func(self, *args, **kwargs)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        for i, o in enumerate(outs):
            if isinstance(o, Tensor) and _dt.is_float_np(o._data.dtype):
                check_numerics(o, name, f"output_{i}")
        return out

    return forward
