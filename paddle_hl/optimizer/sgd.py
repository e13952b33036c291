"""SGD, Momentum, Adagrad, Adadelta and RMSProp: in-place updates on the backend arrays."""

from __future__ import annotations

from .. import backend
from .optimizer import Optimizer

__all__ = []


class SGD(Optimizer):
    """Plain stochastic gradient descent: ``p -= lr * g``.

    Example:
        >>> opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
        >>> loss.backward(); opt.step(); opt.clear_grad()
    """

    def __init__(self, learning_rate=0.001, parameters=None, weight_decay=None, grad_clip=None,
                 multi_precision=False, name=None):
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._multi_precision = bool(multi_precision)

    def _update(self, p, parr, garr, lr, grp):
        if backend.fused_update("sgd", garr, (lr,), (parr,)):
            return
        xp = backend.get_array_module(parr)

        def update(parr, garr, t):
            xp.multiply(garr, lr, out=t)
            parr -= t

        self._blockwise(update, (parr, garr))


class Momentum(Optimizer):
    """SGD with momentum: ``v = mu * v + g``; ``p -= lr * v`` (Nesterov: ``lr * (g + mu * v)``).
    A float ``weight_decay`` is L2 decay (added to the gradient), as in Paddle."""

    _acc_names = ("velocity",)

    def __init__(self, learning_rate=0.001, momentum=0.9, parameters=None, use_nesterov=False,
                 weight_decay=None, grad_clip=None, multi_precision=False, rescale_grad=1.0,
                 use_multi_tensor=False, name=None):
        if learning_rate is None:
            raise ValueError("Momentum: learning_rate is not set")
        if momentum is None:
            raise ValueError("Momentum: momentum is not set")
        self._momentum = float(momentum)
        self._use_nesterov = bool(use_nesterov)
        self._rescale_grad = float(rescale_grad)
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._multi_precision = bool(multi_precision)

    def _group_defaults(self):
        return {"momentum": self._momentum, "use_nesterov": self._use_nesterov,
                "rescale_grad": self._rescale_grad}

    def _update(self, p, parr, garr, lr, grp):
        mu = grp.get("momentum", self._momentum)
        if grp.get("rescale_grad", 1.0) != 1.0:
            garr = garr * grp["rescale_grad"]
        v = self._acc("velocity", p, parr)
        nesterov = grp.get("use_nesterov", self._use_nesterov)
        if backend.fused_update("momentum", garr, (lr, mu, float(nesterov)), (parr, v)):
            return
        xp = backend.get_array_module(parr)

        # in place through one scratch array, the same roundings as the expression form
        def update(parr, garr, v, t):
            v *= mu
            v += garr
            if nesterov:
                xp.multiply(v, mu, out=t)
                t += garr
                t *= lr
            else:
                xp.multiply(v, lr, out=t)
            parr -= t

        self._blockwise(update, (parr, garr, v))


class Adagrad(Optimizer):
    """Adagrad: ``moment += g**2``; ``p -= lr * g / (sqrt(moment) + epsilon)``."""

    _acc_names = ("moment",)

    def __init__(self, learning_rate, epsilon=1.0e-6, parameters=None, weight_decay=None,
                 grad_clip=None, name=None, initial_accumulator_value=0.0):
        self._epsilon = float(epsilon)
        self._initial = float(initial_accumulator_value)
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)

    def _group_defaults(self):
        return {"epsilon": self._epsilon, "initial_accumulator_value": self._initial}

    def _update(self, p, parr, garr, lr, grp):
        xp = backend.get_array_module(parr)
        m = self._acc("moment", p, parr, fill=grp.get("initial_accumulator_value", 0.0))
        eps = grp.get("epsilon", self._epsilon)
        if backend.fused_update("adagrad", garr, (lr, eps), (parr, m)):
            return
        m += garr * garr
        parr -= lr * garr / (xp.sqrt(m) + eps)


class Adadelta(Optimizer):
    """Adadelta with Paddle 2.6's learning-rate scaling of the update."""

    _acc_names = ("_avg_squared_grad", "_avg_squared_update")

    def __init__(self, learning_rate=0.001, epsilon=1.0e-6, rho=0.95, parameters=None,
                 weight_decay=None, grad_clip=None, name=None):
        if learning_rate is None or epsilon is None or rho is None:
            raise ValueError("Adadelta: learning_rate, epsilon and rho must be set")
        self._epsilon = float(epsilon)
        self._rho = float(rho)
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)

    def _group_defaults(self):
        return {"epsilon": self._epsilon, "rho": self._rho}

    def _update(self, p, parr, garr, lr, grp):
        xp = backend.get_array_module(parr)
        rho, eps = grp.get("rho", self._rho), grp.get("epsilon", self._epsilon)
        sq_g = self._acc("_avg_squared_grad", p, parr)
        sq_u = self._acc("_avg_squared_update", p, parr)
        if backend.fused_update("adadelta", garr, (lr, rho, 1 - rho, eps), (parr, sq_g, sq_u)):
            return
        sq_g *= rho
        sq_g += (1 - rho) * garr * garr
        update = -xp.sqrt((sq_u + eps) / (sq_g + eps)) * garr
        sq_u *= rho
        sq_u += (1 - rho) * update * update
        parr += lr * update


class RMSProp(Optimizer):
    """RMSProp (optionally centered, with momentum)."""

    _acc_names = ("momentum", "mean_square", "mean_grad")

    def __init__(self, learning_rate, rho=0.95, epsilon=1.0e-6, momentum=0.0, centered=False,
                 parameters=None, weight_decay=None, grad_clip=None, name=None):
        if learning_rate is None:
            raise ValueError("RMSProp: learning_rate is not set")
        if not 0.0 <= rho:
            raise ValueError(f"RMSProp: rho must be >= 0, got {rho}")
        if not 0.0 <= epsilon:
            raise ValueError(f"RMSProp: epsilon must be >= 0, got {epsilon}")
        if not 0.0 <= momentum:
            raise ValueError(f"RMSProp: momentum must be >= 0, got {momentum}")
        self._rho, self._epsilon = float(rho), float(epsilon)
        self._momentum, self._centered = float(momentum), bool(centered)
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)

    def _group_defaults(self):
        return {"rho": self._rho, "epsilon": self._epsilon, "momentum": self._momentum,
                "centered": self._centered}

    def _update(self, p, parr, garr, lr, grp):
        xp = backend.get_array_module(parr)
        rho, eps = grp.get("rho", self._rho), grp.get("epsilon", self._epsilon)
        mom_c = grp.get("momentum", self._momentum)
        ms = self._acc("mean_square", p, parr)
        mom = self._acc("momentum", p, parr)
        # created even when not centered: Paddle's state_dict always has it, and Paddle's
        # set_state_dict refuses a state without it
        mg = self._acc("mean_grad", p, parr)
        centered = grp.get("centered", self._centered)
        if centered:
            fused = backend.fused_update("rmsprop_centered", garr,
                                         (lr, rho, 1 - rho, eps, mom_c), (parr, ms, mg, mom))
        else:
            fused = backend.fused_update("rmsprop", garr, (lr, rho, 1 - rho, eps, mom_c),
                                         (parr, ms, mom))
        if fused:
            return
        ms *= rho
        ms += (1 - rho) * garr * garr
        if centered:
            mg *= rho
            mg += (1 - rho) * garr
            denom = xp.sqrt(ms - mg * mg + eps)
        else:
            denom = xp.sqrt(ms + eps)
        mom *= mom_c
        mom += lr * garr / denom
        parr -= mom
