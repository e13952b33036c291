"""The Adam/AdamW update of one parameter in one pass (NumPy's form takes ten), compiled
without fastmath, so its numbers are bit for bit the NumPy passes'."""

from __future__ import annotations

import numpy as np

from .. import _threads
from ._njit import exact

__all__ = []

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


# the optimizer update rounds exactly as the NumPy passes do (exact: no fastmath), and
# divides as NumPy does (no zero-divisor check, which would keep the loop from vectorising)
@exact
def adam(p, g, m, v, lr_t, b1, b2, c1, c2, eps_t, decay):
    # 1-D C-contiguous slices of one parameter, one pass: Paddle's Adam formula as
    # optimizer/adam.py::adam_passes states it, restated per element with the same roundings
    if decay != 1.0:
        for i in range(p.shape[0]):
            p[i] = p[i] * decay
    for i in range(p.shape[0]):
        gi = g[i]
        mi = m[i] * b1 + gi * c1
        vi = v[i] * b2 + (gi * c2) * gi
        m[i] = mi
        v[i] = vi
        p[i] = p[i] - (mi / (np.sqrt(vi) + eps_t)) * lr_t



def adam_update(p, g, m, v, lr_t, b1, b2, c1, c2, eps_t, decay):
    """One Adam (AdamW: ``decay`` ``!= 1`` scales the parameter first) update of parameter ``p``
    and its moments ``m``, ``v`` in place, in one pass: the same numbers as the optimizer's
    NumPy passes (each operation rounded in the arrays' dtype, in the same order), about
    twice as fast. The scalars are ``optimizer.adam.adam_scalars``'s, then ``decay``.
    Returns False, changing nothing, where the kernel does not apply: arrays that are not
    C-contiguous float32/float64 of one dtype and shape."""
    dt = p.dtype
    if (dt not in _FLOATS
            or any(type(a) is not np.ndarray or a.dtype != dt or a.shape != p.shape
                   or not a.flags.c_contiguous for a in (g, m, v))
            or not p.flags.c_contiguous):
        return False
    t = dt.type
    scalars = (t(lr_t), t(b1), t(b2), t(c1), t(c2), t(eps_t), t(decay))
    fp, fg, fm, fv = (a.reshape(-1) for a in (p, g, m, v))
    _threads.split(lambda lo, hi: adam(fp[lo:hi], fg[lo:hi], fm[lo:hi], fv[lo:hi], *scalars),
                   fp.size, 7 * p.nbytes)
    return True
