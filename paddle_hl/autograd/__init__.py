"""``paddle_hl.autograd``: backward, custom ops (PyLayer), saved-tensor hooks, Jacobians.

Same names as ``paddle.autograd`` in Paddle 2.6, grad-mode switches included.
"""

from __future__ import annotations

from ..framework.engine import backward, grad
from ..framework.state import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .autograd import Hessian, Jacobian, hessian, jacobian
from .py_layer import PyLayer, PyLayerContext
from .saved_tensors_hooks import saved_tensors_hooks

__all__ = ["PyLayer", "PyLayerContext", "backward", "jacobian", "hessian", "saved_tensors_hooks",
           "no_grad", "enable_grad", "grad", "is_grad_enabled", "set_grad_enabled", "Jacobian",
           "Hessian"]
