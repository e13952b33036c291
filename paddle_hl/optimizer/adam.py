"""The Adam family: Adam, AdamW (decoupled decay), Adamax and Lamb.

Accumulators have Paddle's dtypes: the parameter's for float32 and float64 parameters; for
float16 and bfloat16 parameters the moments and Adam's beta powers are float32 (Adamax keeps
its beta power in the parameter's dtype, as Paddle does), and the update computes in float32.
Beta powers are shape-[1] tensors as in Paddle's state_dict. On a GPU the fused kernels read
the beta powers on the device, so a step reads nothing back to the host.
"""

from __future__ import annotations

import math

import numpy as np

from .. import backend
from ..framework import dtype as _dt
from ..framework.tensor import Tensor
from .optimizer import Optimizer

__all__ = []


def _check_betas(where, beta1, beta2, epsilon):
    for name, v in (("beta1", beta1), ("beta2", beta2)):
        if isinstance(v, Tensor):
            continue
        if not 0 <= v < 1:
            raise ValueError(f"{where}: {name} must be in [0, 1), got {v}")
    if not isinstance(epsilon, Tensor) and epsilon < 0:
        raise ValueError(f"{where}: epsilon must be >= 0, got {epsilon}")


def _f(v):
    return float(v.item()) if isinstance(v, Tensor) else float(v)


# ---------------------------------------------------------------- Paddle's Adam formula, once
# The compiled kernels restate the elementwise update for their language, each operation
# rounded as adam_passes rounds it: backend/_numba/optim.py::adam (bit for bit the passes'
# numbers) and the GPU's "adamw" and "adam" in backend/_cuda_kernels.py ("adam" also restates
# adam_scalars, on the device). tests/optimizer/test_adam_formula.py holds them to these two.
def adam_scalars(lr, b1, b2, eps, b1_pow, b2_pow):
    """The scalars of one Adam step, with Paddle's bias corrections folded into the learning
    rate and epsilon: ``(lr_t, b1, b2, c1, c2, eps_t)`` with ``c = 1 - b``,
    ``lr_t = lr·√(1 - β₂ᵗ) / (1 - β₁ᵗ)`` and ``eps_t = eps·√(1 - β₂ᵗ)`` (``b1_pow`` and
    ``b2_pow`` are ``β₁ᵗ`` and ``β₂ᵗ``). The order is the fused "adamw" kernels' (after the
    gradient, before AdamW's ``decay``)."""
    bc2 = math.sqrt(1 - b2_pow)
    return lr * bc2 / (1 - b1_pow), b1, b2, 1 - b1, 1 - b2, eps * bc2


def adam_passes(xp, p, g, m, v, t, lr_t, b1, b2, c1, c2, eps_t, decay):
    """Paddle's Adam update of parameter ``p`` and its moments ``m``, ``v`` in place::

        m = b1·m + c1·g;  v = b2·v + (c2·g)·g;  p = decay·p - (m / (√v + eps_t))·lr_t

    (``decay`` is AdamW's ``1 - lr·coeff``, 1 for Adam), evaluated as in-place passes through
    one scratch array ``t``: the same roundings as the expression form, without allocating
    five parameter-sized temporaries per parameter per step."""
    if decay != 1.0:
        p *= decay
    xp.multiply(g, c1, out=t)
    m *= b1
    m += t
    xp.multiply(g, c2, out=t)
    t *= g
    v *= b2
    v += t
    xp.sqrt(v, out=t)
    t += eps_t
    xp.divide(m, t, out=t)
    t *= lr_t
    p -= t


class _AdamBase(Optimizer):
    _acc_names = ("moment1", "moment2", "beta1_pow_acc", "beta2_pow_acc")

    def _group_defaults(self):
        return {"beta1": self._beta1, "beta2": self._beta2, "epsilon": self._epsilon}

    def _moments(self, p, parr, b1, b2):
        m = self._acc("moment1", p, parr, wide=True)
        v = self._acc("moment2", p, parr, wide=True)
        b1p = self._acc("beta1_pow_acc", p, parr, fill=b1, shape=(1,), wide=True)
        b2p = self._acc("beta2_pow_acc", p, parr, fill=b2, shape=(1,), wide=True)
        return m, v, b1p, b2p

    def _adam_step(self, p, parr, garr, lr, grp, decay=1.0):
        """One Adam update; ``decay`` (AdamW's ``1 - lr * coeff``) scales the parameter
        first."""
        xp = backend.get_array_module(parr)
        b1, b2 = _f(grp.get("beta1", self._beta1)), _f(grp.get("beta2", self._beta2))
        eps = _f(grp.get("epsilon", self._epsilon))
        m, v, b1p, b2p = self._moments(p, parr, b1, b2)
        # the GPU's kernel reads the beta powers where they are, on the device
        if backend.fused_update("adam", garr, (b1p, b2p, lr, b1, b2, 1 - b1, 1 - b2, eps, decay),
                                (parr, m, v)):
            b1p *= b1
            b2p *= b2
            return
        # host arrays: no transfer
        scalars = adam_scalars(lr, b1, b2, eps, float(b1p[0]), float(b2p[0])) + (decay,)
        if not backend.fused_update("adamw", garr, scalars, (parr, m, v)):
            self._blockwise(lambda *arrays: adam_passes(xp, *arrays, *scalars),
                            (parr, garr, m, v))
        b1p *= b1
        b2p *= b2


class Adam(_AdamBase):
    """Adam (Kingma & Ba) with bias correction, as Paddle's kernel computes it.

    Args:
        learning_rate (float|LRScheduler): step size (default 0.001).
        beta1, beta2 (float): decay rates of the moment estimates.
        epsilon (float): numerical stabiliser.
        weight_decay (float|regularizer): L2 (coupled) decay added to the gradient.
        lazy_mode (bool): accepted; with dense gradients every row is updated.
        multi_precision (bool): keep float32 master weights for float16/bfloat16 parameters.
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-08,
                 parameters=None, weight_decay=None, grad_clip=None, lazy_mode=False,
                 multi_precision=False, use_multi_tensor=False, name=None):
        _check_betas("Adam", beta1, beta2, epsilon)
        self._beta1, self._beta2, self._epsilon = beta1, beta2, epsilon
        self._lazy_mode = bool(lazy_mode)
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._multi_precision = bool(multi_precision)

    def _update(self, p, parr, garr, lr, grp):
        self._adam_step(p, parr, garr, lr, grp)


class AdamW(_AdamBase):
    """Adam with decoupled weight decay: ``p -= lr * coeff * p`` before the Adam step.

    ``apply_decay_param_fun(name) -> bool`` selects the parameters that decay;
    ``lr_ratio(param) -> float`` scales the learning rate per parameter.
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 parameters=None, weight_decay=0.01, lr_ratio=None, apply_decay_param_fun=None,
                 grad_clip=None, lazy_mode=False, multi_precision=False, name=None):
        _check_betas("AdamW", beta1, beta2, epsilon)
        if not isinstance(weight_decay, (int, float, Tensor)) or isinstance(weight_decay, bool):
            raise TypeError(f"AdamW: weight_decay must be a float or a Tensor, got "
                            f"{type(weight_decay).__name__}")
        if lr_ratio is not None and not callable(lr_ratio):
            raise TypeError("AdamW: lr_ratio must be a callable or None")
        self._beta1, self._beta2, self._epsilon = beta1, beta2, epsilon
        self._coeff = weight_decay
        self._lr_ratio = lr_ratio
        self._apply_decay_param_fun = apply_decay_param_fun
        super().__init__(learning_rate, parameters, None, grad_clip, name)
        self._multi_precision = bool(multi_precision)

    def _add_param_group(self, group):
        coeff = group.pop("weight_decay", None)
        super()._add_param_group(group)
        group["weight_decay"] = None
        group["coeff"] = self._coeff if coeff is None else coeff

    def _update(self, p, parr, garr, lr, grp):
        if self._lr_ratio is not None:
            lr = lr * self._lr_ratio(p)
        coeff = _f(grp.get("coeff", self._coeff))
        decay = self._apply_decay_param_fun is None or self._apply_decay_param_fun(p.name)
        factor = 1.0 - lr * coeff if decay and coeff != 0.0 else 1.0
        self._adam_step(p, parr, garr, lr, grp, decay=factor)


class Adamax(Optimizer):
    """Adamax: Adam with the infinity norm of past gradients."""

    _acc_names = ("moment", "inf_norm", "beta1_pow_acc")

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-08,
                 parameters=None, weight_decay=None, grad_clip=None, name=None):
        _check_betas("Adamax", beta1, beta2, epsilon)
        self._beta1, self._beta2, self._epsilon = beta1, beta2, epsilon
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)

    def _group_defaults(self):
        return {"beta1": self._beta1, "beta2": self._beta2, "epsilon": self._epsilon}

    def _update(self, p, parr, garr, lr, grp):
        xp = backend.get_array_module(parr)
        b1, b2 = _f(grp.get("beta1", self._beta1)), _f(grp.get("beta2", self._beta2))
        eps = _f(grp.get("epsilon", self._epsilon))
        m = self._acc("moment", p, parr, wide=True)
        inf = self._acc("inf_norm", p, parr, wide=True)
        # Paddle keeps this one in the parameter's dtype
        b1p = self._acc("beta1_pow_acc", p, parr, fill=b1, shape=(1,))
        if backend.fused_update("adamax", garr, (b1p, lr, b1, b2, 1 - b1, eps), (parr, m, inf)):
            # the kernel read the beta power on the device; advance it there, in float32
            b1p[...] = (b1p.astype(np.float32) * np.float32(b1)).astype(b1p.dtype) \
                if b1p.dtype in _dt.LOW_FLOATS else b1p * b1
            return
        m *= b1
        m += (1 - b1) * garr
        xp.maximum(b2 * inf + eps, xp.abs(garr), out=inf)
        parr -= (lr / (1 - float(b1p[0]))) * (m / inf)
        b1p *= b1


class Lamb(_AdamBase):
    """LAMB: Adam moments with a layer-wise trust ratio ``||p|| / ||r||``."""

    _fused = False  # no fused kernel: low-precision parameters update on float32 copies

    def __init__(self, learning_rate=0.001, lamb_weight_decay=0.01, beta1=0.9, beta2=0.999,
                 epsilon=1e-6, parameters=None, grad_clip=None, exclude_from_weight_decay_fn=None,
                 multi_precision=False, always_adapt=False, name=None):
        _check_betas("Lamb", beta1, beta2, epsilon)
        self._beta1, self._beta2, self._epsilon = beta1, beta2, epsilon
        self._lamb_weight_decay = float(lamb_weight_decay)
        self._exclude_fn = exclude_from_weight_decay_fn
        self._always_adapt = bool(always_adapt)
        super().__init__(learning_rate, parameters, None, grad_clip, name)
        self._multi_precision = bool(multi_precision)

    def _group_defaults(self):
        d = super()._group_defaults()
        d["lamb_weight_decay"] = self._lamb_weight_decay
        return d

    def _update(self, p, parr, garr, lr, grp):
        xp = backend.get_array_module(parr)
        b1, b2 = _f(grp.get("beta1", self._beta1)), _f(grp.get("beta2", self._beta2))
        eps = _f(grp.get("epsilon", self._epsilon))
        wd = grp.get("lamb_weight_decay", self._lamb_weight_decay)
        if self._exclude_fn is not None and self._exclude_fn(p):
            wd = 0.0
        m, v, b1p, b2p = self._moments(p, parr, b1, b2)
        m *= b1
        m += (1 - b1) * garr
        v *= b2
        v += (1 - b2) * garr * garr
        if xp is np:  # host arrays: read the beta powers directly
            bc1, bc2 = 1 - float(b1p[0]), 1 - float(b2p[0])
        else:  # device arrays: stay on the device (shape [1], broadcast)
            bc1, bc2 = 1 - b1p, 1 - b2p
        m_hat = m / bc1
        v_hat = v / bc2
        r = m_hat / (xp.sqrt(v_hat) + eps) + wd * parr
        if wd == 0.0 and not self._always_adapt:
            parr -= lr * r
        elif xp is np:
            p_norm = float(xp.sqrt((parr.astype("float64") ** 2).sum()))
            r_norm = float(xp.sqrt((r.astype("float64") ** 2).sum()))
            trust = p_norm / r_norm if p_norm > 0 and r_norm > 0 else 1.0
            parr -= lr * trust * r
        else:  # the trust ratio as a device scalar: no host read
            p_norm = xp.sqrt((parr.astype("float64") ** 2).sum())
            r_norm = xp.sqrt((r.astype("float64") ** 2).sum())
            ok = (p_norm > 0) & (r_norm > 0)
            trust = xp.where(ok, p_norm / xp.where(ok, r_norm, 1.0), 1.0)
            parr -= (lr * trust).astype(r.dtype) * r
        b1p *= b1
        b2p *= b2
