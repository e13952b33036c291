"""Optimizer base class: parameter groups, learning rates, regularization, clipping, state.

Subclasses implement ``_update(p, g, lr, group)`` on raw backend arrays, in place, one fused pass
per parameter. Accumulators are named as Paddle names them (``{param}_{acc}_0``) so that
``state_dict()`` round-trips with Paddle's ``.pdopt`` files.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..backend import tuning
from ..framework import dtype as _dt
from ..framework import state
from ..framework.tensor import Tensor, _wrap, _zero_grad
from ..regularizer import L2Decay, WeightDecayRegularizer
from .lr import LRScheduler

__all__ = []

# elements per cache block of the NumPy in-place updates (see Optimizer._blockwise): the blocks
# of the operands and the scratch stay in cache through all of an update's passes (measured on
# ResNet-18's parameters, Adam: 18.6 ms whole-array, 16.1 ms at 32K, 15.7 ms at 64K elements)
_BLOCK = tuning.value("optimizer.block")


def _check_params(parameters, where):
    if parameters is None:
        # as Paddle in dygraph mode (paddle_hl always executes eagerly): an optimizer without
        # parameters could never update anything, so say so when it is built
        raise AttributeError(f"{where}: parameters argument given to the Optimizer should not "
                             "be None in dygraph mode; pass parameters=model.parameters()")
    if isinstance(parameters, Tensor):
        raise TypeError(f"{where}: 'parameters' must be a list of Tensors or of param-group "
                        "dicts, not a single Tensor")
    if isinstance(parameters, dict):
        raise TypeError(f"{where}: 'parameters' must be a list; wrap the dict in a list")
    return list(parameters)


class Optimizer:
    """Base optimizer (``paddle.optimizer.Optimizer``).

    Args:
        learning_rate (float|LRScheduler): the global learning rate.
        parameters (list): Tensors to update, or a list of param-group dicts
            ``{'params': [...], 'learning_rate': multiplier, 'weight_decay': ...}``.
        weight_decay (float|L1Decay|L2Decay, optional): a float means L2Decay(float).
        grad_clip (ClipGradBy*, optional): gradient clipping applied before the update.
    """

    _acc_names = ()
    # whether every update of the class has a fused backend kernel (see _update_param)
    _fused = True
    # the float32 copies of low-precision accumulators during an _update_low (else None)
    _low_copies = None

    def __init__(self, learning_rate, parameters=None, weight_decay=None, grad_clip=None,
                 name=None):
        where = type(self).__name__
        if not isinstance(learning_rate, (int, float, LRScheduler)) or isinstance(
                learning_rate, bool):
            raise TypeError(f"{where}: learning_rate must be a float or an LRScheduler, got "
                            f"{type(learning_rate).__name__}")
        if isinstance(learning_rate, (int, float)) and learning_rate < 0:
            raise ValueError(f"{where}: learning_rate must be >= 0, got {learning_rate}")
        self._learning_rate = learning_rate if isinstance(learning_rate, LRScheduler) else \
            float(learning_rate)
        self._name = name
        self.regularization = self._as_regularizer(weight_decay, where)
        if grad_clip is not None and not callable(grad_clip):
            raise TypeError(f"{where}: grad_clip must be a ClipGradBy* object, got "
                            f"{type(grad_clip).__name__}")
        self._grad_clip = grad_clip
        params = _check_params(parameters, where)
        self._param_groups = []
        self._parameter_list = []
        self._plain_lr = {}
        if params is None:
            self._parameter_list = None
        elif params and isinstance(params[0], dict):
            for group in params:
                self._add_param_group(dict(group))
        else:
            self._add_param_group({"params": params})
        self._accumulators = {}  # acc name -> {param name: array}
        self._pending_state = {}  # accumulators loaded before they were created
        self._master_weights = {}
        self._multi_precision = False
        self._step_count = 0

    @staticmethod
    def _as_regularizer(weight_decay, where):
        if weight_decay is None:
            return None
        if isinstance(weight_decay, WeightDecayRegularizer):
            return weight_decay
        if isinstance(weight_decay, (int, float)) and not isinstance(weight_decay, bool):
            return L2Decay(float(weight_decay))
        raise TypeError(f"{where}: weight_decay must be a float or a regularizer, got "
                        f"{type(weight_decay).__name__}")

    def _add_param_group(self, group):
        params = group.get("params")
        if isinstance(params, Tensor):
            params = [params]
        params = list(params or [])
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"{type(self).__name__}: parameters must be Tensors, got "
                                f"{type(p).__name__}")
            if "learning_rate" in group:
                if hasattr(p, "optimize_attr"):
                    p.optimize_attr["learning_rate"] = float(group["learning_rate"])
                else:  # a plain Tensor: the optimizer keeps its multiplier
                    self._plain_lr[id(p)] = float(group["learning_rate"])
        group["params"] = params
        if "weight_decay" in group:
            group["weight_decay"] = self._as_regularizer(group["weight_decay"],
                                                         type(self).__name__)
        else:
            group["weight_decay"] = self.regularization
        group.setdefault("learning_rate", 1.0)
        group.setdefault("grad_clip", self._grad_clip)
        for key, default in self._group_defaults().items():
            group.setdefault(key, default)
        self._param_groups.append(group)
        self._parameter_list.extend(params)

    def _group_defaults(self) -> dict:
        """Per-group options a subclass accepts (e.g. beta1 for Adam)."""
        return {}

    # ------------------------------------------------------------------ learning rate
    def get_lr(self) -> float:
        """The current global learning rate."""
        lr = self._learning_rate
        return float(lr()) if isinstance(lr, LRScheduler) else float(lr)

    def set_lr(self, value):
        """Set a float learning rate (not allowed while an LRScheduler is in use)."""
        if isinstance(self._learning_rate, LRScheduler):
            raise RuntimeError("set_lr: the optimizer uses an LRScheduler; step the scheduler "
                               "or call set_lr_scheduler instead")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"set_lr: value must be a float, got {type(value).__name__}")
        self._learning_rate = float(value)

    def set_lr_scheduler(self, scheduler):
        """Replace the learning rate with an LRScheduler."""
        if not isinstance(scheduler, LRScheduler):
            raise TypeError(f"set_lr_scheduler: expected an LRScheduler, got "
                            f"{type(scheduler).__name__}")
        self._learning_rate = scheduler

    # ------------------------------------------------------------------ gradients
    def clear_grad(self, set_to_zero=True):
        """Zero every parameter's gradient (or drop it when ``set_to_zero`` is False)."""
        for p in self._all_params():
            if p._grad is not None:
                if set_to_zero:
                    _zero_grad(p)
                else:
                    p._grad = None

    clear_gradients = clear_grad

    def _all_params(self):
        if self._parameter_list is None:
            raise ValueError(f"{type(self).__name__}: no parameters were given; pass "
                             "parameters=model.parameters() when building the optimizer")
        return self._parameter_list

    def backward(self, loss, startup_program=None, parameters=None, no_grad_set=None,
                 callbacks=None):
        """The (param, grad) pairs of the parameters that have gradients.

        As in Paddle's dynamic graph, gradients come from an earlier ``loss.backward()``; this
        does not run backward again.
        """
        params = parameters if parameters is not None else self._all_params()
        return [(p, p._grad) for p in params if not p.stop_gradient and p._grad is not None]

    def apply_gradients(self, params_grads):
        """Update parameters from explicit (param, grad) pairs."""
        self._apply(list(params_grads), {id(p): g for p, g in params_grads})

    def minimize(self, loss, startup_program=None, parameters=None, no_grad_set=None):
        """Apply the gradients already computed by ``loss.backward()``; returns
        (None, params_grads)."""
        pg = self.backward(loss, parameters=parameters, no_grad_set=no_grad_set)
        self.apply_gradients(pg)
        return None, pg

    def append_regularization_ops(self, parameters_and_grads, regularization=None):
        """Return (param, grad) pairs with weight decay added to the gradients."""
        reg = self._as_regularizer(regularization, type(self).__name__) or self.regularization
        out = []
        for p, g in parameters_and_grads:
            r = getattr(p, "regularizer", None) or reg
            out.append((p, g if r is None or g is None else _wrap(r.apply(p._data, g._data))))
        return out

    def step(self):
        """Update every parameter that has a gradient."""
        self._all_params()
        with state.no_grad():
            pairs = []
            for group in self._param_groups:
                for p in group["params"]:
                    if not p.stop_gradient and p._grad is not None:
                        pairs.append((p, p._grad))
            self._apply(pairs, None)

    def _apply(self, pairs, _explicit):
        group_of = {}
        for group in self._param_groups:
            for p in group["params"]:
                group_of[id(p)] = group
        by_group = {}
        for p, g in pairs:
            grp = group_of.get(id(p))
            if grp is None:
                grp = self._param_groups[0] if self._param_groups else \
                    {"weight_decay": self.regularization, "grad_clip": self._grad_clip,
                     **self._group_defaults()}
            by_group.setdefault(id(grp), (grp, []))[1].append((p, g))
        base_lr = self.get_lr()
        self._step_count += 1
        for grp, items in by_group.values():
            clip = grp.get("grad_clip", self._grad_clip)
            if clip is not None:
                items = [(p, g) for p, g in clip([(p, g) for p, g in items]) if g is not None]
            for p, g in items:
                garr = g._data if isinstance(g, Tensor) else g
                attr = getattr(p, "optimize_attr", None)
                mult = attr["learning_rate"] if attr is not None else \
                    self._plain_lr.get(id(p), 1.0)
                lr = base_lr * mult
                self._update_param(p, garr, lr, grp)

    def _regularize(self, p, parr, garr, grp):
        if not self._has_decay(p, grp):
            return garr
        reg = getattr(p, "regularizer", None) or grp.get("weight_decay")
        return reg.apply(parr, garr)

    def _update_param(self, p, garr, lr, grp):
        parr = p._data
        low = parr.dtype in _dt.LOW_FLOATS
        if low and self._multi_precision:
            master = self._master(p)
            garr = garr.astype(np.float32, copy=False)
            self._update(p, master, self._regularize(p, master, garr, grp), lr, grp)
            p._data[...] = master.astype(parr.dtype)
        elif low and self._fused and backend.for_array(parr).has_fused_updates:
            # the backend's fused kernels load float16/bfloat16 values into float32 and
            # compute there: the parameter and its accumulators are updated in place
            if garr.dtype not in (parr.dtype, np.dtype(np.float32)):
                garr = garr.astype(np.float32)
            if self._has_decay(p, grp):
                garr = self._regularize(p, parr.astype(np.float32),
                                        garr.astype(np.float32, copy=False), grp)
            self._update(p, parr, garr, lr, grp)
        elif low:
            self._update_low(p, parr, garr, lr, grp)
        else:
            garr = garr.astype(parr.dtype, copy=False) if garr.dtype != parr.dtype else garr
            garr = self._regularize(p, parr, garr, grp)
            self._update(p, parr, garr, lr, grp)
        p._ver.v += 1

    def _update_low(self, p, parr, garr, lr, grp):
        """The update of a float16/bfloat16 parameter without master weights, as Paddle's
        kernels make it: every operation in float32 on float32 copies of the parameter, the
        gradient and the low-precision accumulators (``_acc`` hands those out), each stored
        back once, rounded, at the end."""
        work = parr.astype(np.float32)
        garr = self._regularize(p, work, garr.astype(np.float32), grp)
        self._low_copies = []
        try:
            self._update(p, work, garr, lr, grp)
        finally:
            copies, self._low_copies = self._low_copies, None
        for stored, tmp in copies:
            stored[...] = tmp.astype(stored.dtype)
        parr[...] = work.astype(parr.dtype)

    def _has_decay(self, p, grp):
        reg = getattr(p, "regularizer", None) or grp.get("weight_decay")
        return not (reg is None or (isinstance(reg, WeightDecayRegularizer)
                                    and reg.coeff == 0.0))

    def _update(self, p, parr, garr, lr, grp):
        """Subclass hook: update ``parr`` in place from ``garr`` with learning rate ``lr``."""
        parr -= lr * garr

    def _scratch(self, xp, like):
        """A work array shaped and typed like ``like``: a view of one flat buffer per
        (array module, dtype), grown to the largest parameter and reused across parameters."""
        bufs = self.__dict__.setdefault("_work", {})
        key = (xp.__name__, like.dtype)
        buf = bufs.get(key)
        if buf is None or buf.size < like.size:
            buf = bufs[key] = xp.empty(like.size, dtype=like.dtype)
        return buf[:like.size].reshape(like.shape)

    def _blockwise(self, fn, arrays):
        """``fn(*arrays, scratch)``: an in-place elementwise update of same-shaped arrays, with
        one scratch array like them.

        On NumPy a large update runs block by block (``_BLOCK`` elements of every operand at a
        time), so its several passes read and write cache instead of memory, and the blocks are
        shared out over the CPU thread pool, each thread with its own scratch. Every element
        goes through the same operations as in one whole-array call, so the numbers are
        identical.
        """
        a0 = arrays[0]
        xp = backend.get_array_module(a0)
        n = a0.size
        if (xp is not np or n <= 2 * _BLOCK
                or not all(a.flags.c_contiguous and a.shape == a0.shape and a.dtype == a0.dtype
                           for a in arrays)):
            fn(*arrays, self._scratch(xp, a0))
            return
        flat = [a.reshape(-1) for a in arrays]
        nblocks = -(-n // _BLOCK)
        ranges = backend.work_ranges(2 * n * a0.itemsize * len(arrays), nblocks)
        k = len(ranges)
        bufs = self.__dict__.setdefault("_work", {})
        scratch = []
        for t in range(k):
            key = ("block", t, a0.dtype)
            if key not in bufs or bufs[key].size < _BLOCK:
                bufs[key] = np.empty(_BLOCK, dtype=a0.dtype)
            scratch.append(bufs[key])

        def part(t, b0, b1):
            tmp = scratch[t]
            for b in range(b0, b1):
                s = b * _BLOCK
                e = min(n, s + _BLOCK)
                fn(*[f[s:e] for f in flat], tmp[:e - s])

        backend.run_pieces(part, [(t, lo, hi) for t, (lo, hi) in enumerate(ranges)])

    # ------------------------------------------------------------------ accumulators
    def _master(self, p):
        m = self._master_weights.get(p.name)
        if m is None:
            pending = self._pending_state.get(("master_weights", p.name))
            m = backend.get_array_module(p._data).asarray(
                pending if pending is not None else p._data, dtype=np.float32).copy()
            self._master_weights[p.name] = m
        return m

    def _acc(self, name, p, like, fill=0.0, shape=None, wide=False):
        """The accumulator ``name`` of parameter ``p`` (created on first use), shaped like
        ``like`` (or ``shape``).

        Its dtype is Paddle's: the parameter's, except for a float16/bfloat16 parameter with
        float32 master weights (float32), or when ``wide`` (the accumulators Paddle keeps in
        float32 for such parameters: Adam's moments and beta powers, Adamax's moments).
        During a low-precision update on float32 copies (``_update_low``) a low-precision
        accumulator is handed out as a float32 copy, stored back when the update ends.
        """
        table = self._accumulators.setdefault(name, {})
        owner = self._acc_owner(p)
        arr = table.get(owner)
        if arr is None:
            arr = self._new_acc(name, p, owner, like, fill, shape, wide)
            table[owner] = arr
        if self._low_copies is not None and arr.dtype in _dt.LOW_FLOATS:
            tmp = arr.astype(np.float32)
            self._low_copies.append((arr, tmp))
            return tmp
        return arr

    def _acc_owner(self, p):
        """The name Paddle keys ``p``'s accumulators by: the parameter's, or for a float16/
        bfloat16 parameter with float32 master weights its master's
        (``{name}_fp32_master_0``, whose accumulators they are)."""
        if self._multi_precision and p._data.dtype in _dt.LOW_FLOATS:
            return f"{p.name}_fp32_master_0"
        return p.name

    def _new_acc(self, name, p, owner, like, fill, shape, wide):
        pdt = p._data.dtype
        if pdt in _dt.LOW_FLOATS:
            dtype = np.dtype(np.float32) if wide or self._multi_precision else pdt
        else:
            dtype = like.dtype
        xp = backend.get_array_module(like)
        pending = self._pending_state.pop((name, owner), None)
        if pending is not None:
            arr = xp.asarray(pending, dtype=dtype).reshape(
                like.shape if shape is None else shape).copy()
        else:
            loaded = self.__dict__.get("_loaded_params")
            if loaded and owner not in loaded:
                # a loaded state that names none of this parameter's accumulators was
                # saved for other parameters (e.g. a model rebuilt under new names):
                # starting from zeros would silently not resume, so refuse, as Paddle does
                raise ValueError(
                    f"{type(self).__name__}.set_state_dict: the loaded state has no "
                    f"accumulators of parameter {p.name!r} (expected a key "
                    f"'{owner}_{name}_0'); it holds the parameters "
                    f"{sorted(loaded)[:4]}... Parameter names must match the ones the "
                    "state was saved with")
            arr = xp.full(like.shape if shape is None else shape, fill, dtype=dtype)
        return arr

    def get_opti_var_name_list(self):
        """Names of every accumulator variable, as in ``state_dict``."""
        return [f"{pname}_{acc}_0" for acc, table in self._accumulators.items()
                for pname in table]

    def state_dict(self):
        """Accumulators keyed ``{param}_{acc}_0``, plus ``master_weights`` and
        ``LR_Scheduler`` when present."""
        out = {}
        for acc, table in self._accumulators.items():
            for pname, arr in table.items():
                t = _wrap(arr)
                t.name = f"{pname}_{acc}_0"
                out[t.name] = t
        if self._master_weights:
            out["master_weights"] = {k: _wrap(v) for k, v in self._master_weights.items()}
        if isinstance(self._learning_rate, LRScheduler):
            out["LR_Scheduler"] = self._learning_rate.state_dict()
        return out

    def set_state_dict(self, state_dict):
        """Load a state produced by ``state_dict`` (or by Paddle)."""
        if not isinstance(state_dict, dict):
            raise TypeError(f"set_state_dict: expected a dict, got "
                            f"{type(state_dict).__name__}")
        if "LR_Scheduler" in state_dict and isinstance(self._learning_rate, LRScheduler):
            self._learning_rate.set_state_dict(state_dict["LR_Scheduler"])
        # the accumulators' owners (a parameter, or its float32 master), and each parameter's
        # own name for its master's: a state keyed by the parameter loads too
        owners = {}
        for p in self._parameter_list or []:
            owners[p.name] = owners[self._acc_owner(p)] = self._acc_owner(p)
        names = set(owners)
        for key, val in state_dict.items():
            if key == "LR_Scheduler":
                continue
            if key == "master_weights":
                for pname, arr in val.items():
                    arr = _as_array(arr)
                    if pname in self._master_weights:
                        self._master_weights[pname][...] = arr
                    else:
                        self._pending_state[("master_weights", pname)] = arr.copy()
                continue
            pname, acc = _split_acc_key(key, (), self._acc_names)
            if pname is not None:
                self.__dict__.setdefault("_loaded_params", set()).add(owners.get(pname, pname))
            pname, acc = _split_acc_key(key, names, self._acc_names)
            if pname is None:
                continue
            pname = owners[pname]
            arr = _as_array(val)
            table = self._accumulators.setdefault(acc, {})
            if pname in table:
                if table[pname].size != arr.size:
                    raise ValueError(f"set_state_dict: accumulator {key} has {arr.size} "
                                     f"elements, expected {table[pname].size}")
                table[pname][...] = arr.reshape(table[pname].shape)
            else:
                self._pending_state[(acc, pname)] = arr.copy()

    set_dict = set_state_dict


def _as_array(v):
    if isinstance(v, Tensor):
        return v._data
    return np.asarray(v)


def _split_acc_key(key, param_names, acc_names):
    """'linear_0.w_0_moment1_0' -> ('linear_0.w_0', 'moment1')."""
    for acc in sorted(acc_names, key=len, reverse=True):
        marker = f"_{acc}_"
        pos = key.rfind(marker)
        if pos > 0 and key[pos + len(marker):].isdigit():
            pname = key[:pos]
            if not param_names or pname in param_names:
                return pname, acc
    return None, None
