"""L-BFGS with an optional strong-Wolfe line search (Nocedal & Wright, Algorithms 7.4 and 3.5).

The model is re-evaluated through ``closure`` (which clears the gradients, computes the loss and
calls ``backward``), so ``step(closure)`` may evaluate it several times.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..framework import state as _state
from .optimizer import Optimizer

__all__ = []


def _cubic_min(x1, f1, g1, x2, f2, g2, bounds=None):
    """Minimiser of the cubic interpolating (x1, f1, g1) and (x2, f2, g2), clipped to bounds."""
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_sq = d1 * d1 - g1 * g2
    if d2_sq >= 0:
        d2 = np.sqrt(d2_sq)
        if x1 <= x2:
            t = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            t = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return float(min(max(t, lo), hi))
    return (lo + hi) / 2.0


def _strong_wolfe(obj, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """Find a step ``t`` satisfying the strong Wolfe conditions along direction ``d``."""
    d_norm = float(np.abs(d).max())
    f_new, g_new = obj(x, t, d)
    evals = 1
    gtd_new = float(g_new.dot(d))
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done = False
    it = 0
    while it < max_ls:
        if f_new > f + c1 * t * gtd or (it > 1 and f_new >= f_prev):
            bracket = [t_prev, t]
            bf = [f_prev, f_new]
            bg = [g_prev, g_new.copy()]
            bgtd = [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bf, bg = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket = [t_prev, t]
            bf = [f_prev, f_new]
            bg = [g_prev, g_new.copy()]
            bgtd = [gtd_prev, gtd_new]
            break
        # extrapolate
        lo, hi = t + 0.01 * (t - t_prev), t * 10
        tmp = t
        t = _cubic_min(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(lo, hi))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj(x, t, d)
        evals += 1
        gtd_new = float(g_new.dot(d))
        it += 1
    if it == max_ls:
        bracket, bf, bg = [0.0, t], [f, f_new], [g, g_new]
        bgtd = [gtd, gtd_new]

    # zoom
    insuf_progress = False
    low, high = (0, 1) if len(bf) == 1 or bf[0] <= bf[-1] else (1, 0)
    while not done and it < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_min(bracket[0], bf[0], bgtd[0], bracket[1], bf[1], bgtd[1])
        span = max(bracket) - min(bracket)
        eps = 0.1 * span
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) \
                    else min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj(x, t, d)
        evals += 1
        gtd_new = float(g_new.dot(d))
        it += 1
        if f_new > f + c1 * t * gtd or f_new >= bf[low]:
            bracket[high], bf[high], bg[high], bgtd[high] = t, f_new, g_new.copy(), gtd_new
            low, high = (0, 1) if bf[0] <= bf[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bf[high], bg[high], bgtd[high] = (
                    bracket[low], bf[low], bg[low], bgtd[low])
            bracket[low], bf[low], bg[low], bgtd[low] = t, f_new, g_new.copy(), gtd_new
    if len(bracket) == 1:
        return bf[0], bg[0], bracket[0], evals
    return bf[low], bg[low], bracket[low], evals


def _host64(a):
    """A flat float64 host copy of a parameter's or gradient's values (the L-BFGS history and
    line search run on the host in float64, whatever the device)."""
    return backend.to_numpy(a).astype(np.float64, copy=False).reshape(-1)


class LBFGS(Optimizer):
    """Limited-memory BFGS.

    Example:
        >>> opt = paddle.optimizer.LBFGS(parameters=[x], line_search_fn='strong_wolfe')
        >>> def closure():
        ...     opt.clear_grad()
        ...     loss = f(x)
        ...     loss.backward()
        ...     return loss
        >>> opt.step(closure)
    """

    def __init__(self, learning_rate=1.0, max_iter=20, max_eval=None, tolerance_grad=1e-07,
                 tolerance_change=1e-09, history_size=100, line_search_fn=None, parameters=None,
                 weight_decay=None, grad_clip=None, name=None):
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(f"LBFGS: line_search_fn must be None or 'strong_wolfe', got "
                             f"{line_search_fn!r}")
        self.max_iter, self.max_eval = int(max_iter), int(max_eval)
        self.tolerance_grad, self.tolerance_change = tolerance_grad, tolerance_change
        self.history_size = int(history_size)
        self.line_search_fn = line_search_fn
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self.state = {"func_evals": 0, "n_iter": 0}

    def _params(self):
        return [p for p in self._all_params() if not p.stop_gradient]

    def _flat_grad(self):
        parts = []
        for p in self._params():
            g = _host64(p._grad._data) if p._grad is not None else np.zeros(p._data.size)
            reg = getattr(p, "regularizer", None) or self.regularization
            if reg is not None:
                g = np.asarray(reg.apply(_host64(p._data), g))
            parts.append(g)
        return np.concatenate(parts) if parts else np.zeros(0)

    def _flat_params(self):
        return np.concatenate([_host64(p._data) for p in self._params()])

    def _set_flat(self, flat):
        off = 0
        for p in self._params():
            n = p._data.size
            part = flat[off:off + n].reshape(p._data.shape).astype(p._data.dtype)
            p._data[...] = backend.get_array_module(p._data).asarray(part)
            p._ver.v += 1
            off += n

    def _add(self, t, d):
        self._set_flat(self._flat_params() + t * d)

    def _evaluate(self, closure):
        with _state.enable_grad():
            return closure()

    def step(self, closure=None):
        """Run up to ``max_iter`` L-BFGS iterations; returns the loss of the first evaluation."""
        if closure is None or not callable(closure):
            raise ValueError("LBFGS.step: a closure that clears the gradients, computes the "
                             "loss, calls backward() and returns the loss is required")
        st = self.state
        lr = self.get_lr()
        orig_loss = self._evaluate(closure)
        loss = float(np.asarray(orig_loss.numpy() if hasattr(orig_loss, "numpy")
                                else orig_loss))
        current_evals = 1
        st["func_evals"] += 1
        g = self._flat_grad()
        if np.abs(g).max(initial=0.0) <= self.tolerance_grad:
            return orig_loss
        d, t = st.get("d"), st.get("t")
        old_yk, old_sk, ro = st.get("old_yk", []), st.get("old_sk", []), st.get("ro", [])
        h_diag, prev_g, prev_loss = st.get("H_diag", 1.0), st.get("prev_flat_grad"), \
            st.get("prev_loss")
        n_iter = 0
        while n_iter < self.max_iter:
            n_iter += 1
            st["n_iter"] += 1
            if st["n_iter"] == 1:
                d = -g
                old_yk, old_sk, ro, h_diag = [], [], [], 1.0
            else:
                y = g - prev_g
                s = d * t
                ys = float(y.dot(s))
                if ys > 1e-10:
                    if len(old_yk) == self.history_size:
                        old_yk.pop(0)
                        old_sk.pop(0)
                        ro.pop(0)
                    old_yk.append(y)
                    old_sk.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / float(y.dot(y))
                q = -g
                al = [0.0] * len(old_yk)
                for i in range(len(old_yk) - 1, -1, -1):
                    al[i] = float(old_sk[i].dot(q)) * ro[i]
                    q = q - al[i] * old_yk[i]
                r = q * h_diag
                for i in range(len(old_yk)):
                    be = float(old_yk[i].dot(r)) * ro[i]
                    r = r + old_sk[i] * (al[i] - be)
                d = r
            prev_g = g.copy()
            prev_loss = loss
            t = min(1.0, 1.0 / np.abs(g).sum()) * lr if st["n_iter"] == 1 else lr
            gtd = float(g.dot(d))
            if gtd > -self.tolerance_change:
                break
            ls_evals = 0
            if self.line_search_fn is not None:
                x0 = self._flat_params()

                def obj(x, step, direction):
                    self._set_flat(x + step * direction)
                    val = self._evaluate(closure)
                    fv = float(np.asarray(val.numpy() if hasattr(val, "numpy") else val))
                    return fv, self._flat_grad()

                loss, g, t, ls_evals = _strong_wolfe(obj, x0, t, d, loss, g, gtd,
                                                     tolerance_change=self.tolerance_change)
                self._set_flat(x0 + t * d)
            else:
                self._add(t, d)
                if n_iter != self.max_iter:
                    val = self._evaluate(closure)
                    loss = float(np.asarray(val.numpy() if hasattr(val, "numpy") else val))
                    g = self._flat_grad()
                    ls_evals = 1
            current_evals += ls_evals
            st["func_evals"] += ls_evals
            if n_iter == self.max_iter or current_evals >= self.max_eval:
                break
            if np.abs(g).max(initial=0.0) <= self.tolerance_grad:
                break
            if np.abs(d * t).max(initial=0.0) <= self.tolerance_change:
                break
            if abs(loss - prev_loss) < self.tolerance_change:
                break
        st.update(d=d, t=t, old_yk=old_yk, old_sk=old_sk, ro=ro, H_diag=h_diag,
                  prev_flat_grad=prev_g, prev_loss=prev_loss)
        return orig_loss

    def minimize(self, loss, startup_program=None, parameters=None, no_grad_set=None):
        """L-BFGS must re-evaluate the model, which a fixed ``loss`` cannot do: use
        ``step(closure)``."""
        raise TypeError("LBFGS.minimize: L-BFGS re-evaluates the loss several times per step; "
                        "call opt.step(closure) with a closure that computes and returns it")

    def state_dict(self):
        out = super().state_dict()
        out["state"] = {k: v for k, v in self.state.items()}
        return out

    def set_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        if "state" in state_dict:
            self.state = dict(state_dict.pop("state"))
        super().set_state_dict(state_dict)
