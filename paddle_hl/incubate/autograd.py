"""paddle_hl.incubate.autograd: functional derivatives (``jvp``, ``vjp``, ``Jacobian``,
``Hessian``) of a function of Tensors, as in Paddle 2.6's ``paddle.incubate.autograd``.

Every result is computed with paddle_hl's reverse mode: ``vjp`` is one reverse pass, ``jvp``
is the double-vjp construction (differentiate the vjp with respect to its cotangent), and the
Jacobian is built row by row (each row one reverse pass), the Hessian as the Jacobian of the
gradient.
"""

from __future__ import annotations

import paddle_hl as _T

from ..framework.engine import grad as _grad
from ..framework.tensor import Tensor

__all__ = ["jvp", "vjp", "Jacobian", "Hessian"]


def _as_list(xs, where, arg):
    single = isinstance(xs, Tensor)
    seq = [xs] if single else list(xs) if isinstance(xs, (list, tuple)) else None
    if seq is None or not all(isinstance(t, Tensor) for t in seq):
        raise TypeError(f"{where}: {arg} must be a Tensor or a sequence of Tensors, got "
                        f"{type(xs).__name__}")
    return seq, single


def _leaves(xs):
    out = []
    for x in xs:
        t = x.detach()
        t.stop_gradient = False
        out.append(t)
    return out


def _check_v(v, like, where):
    if v is None:
        return [_T.ones_like(t) for t in like]
    vs, _ = _as_list(v, where, "v")
    if len(vs) != len(like):
        raise ValueError(f"{where}: v has {len(vs)} tensors, expected {len(like)}")
    for i, (a, b) in enumerate(zip(vs, like)):
        if a.shape != b.shape:
            raise ValueError(f"{where}: v[{i}] has shape {a.shape}, expected {b.shape}")
    return vs


def _grads(ys, xs, cot, create_graph=False, retain_graph=None):
    gs = _grad(ys, xs, cot, retain_graph=retain_graph, create_graph=create_graph,
               allow_unused=True)
    return [_T.zeros_like(x) if g is None else g for g, x in zip(gs, xs)]


def vjp(func, xs, v=None):
    """Vector-Jacobian product: ``(func(xs), v^T J)``.

    Args:
        func (callable): Tensors -> Tensor or sequence of Tensors.
        xs (Tensor|Sequence[Tensor]): the inputs.
        v (Tensor|Sequence[Tensor], optional): cotangents shaped like the outputs (ones).

    Returns:
        tuple: ``(func_out, vjp_result)``, each a Tensor or tuple like the outputs / ``xs``.

    Example:
        >>> out, g = paddle.incubate.autograd.vjp(lambda x: x * x, paddle.ones([2]))
    """
    xl, xs_single = _as_list(xs, "vjp", "xs")
    xl = _leaves(xl)
    ys = func(*xl)
    yl, ys_single = _as_list(ys, "vjp", "func's output")
    cot = _check_v(v, yl, "vjp")
    gs = _grads(yl, xl, cot)
    ys_out = yl[0].detach() if ys_single else tuple(y.detach() for y in yl)
    return ys_out, gs[0] if xs_single else tuple(gs)


def jvp(func, xs, v=None):
    """Jacobian-vector product: ``(func(xs), J v)``.

    Args:
        func (callable): Tensors -> Tensor or sequence of Tensors.
        xs (Tensor|Sequence[Tensor]): the inputs.
        v (Tensor|Sequence[Tensor], optional): tangents shaped like ``xs`` (ones).

    Returns:
        tuple: ``(func_out, jvp_result)`` shaped like the outputs.

    Example:
        >>> out, t = paddle.incubate.autograd.jvp(lambda x: x * x, paddle.ones([2]))
    """
    xl, _ = _as_list(xs, "jvp", "xs")
    xl = _leaves(xl)
    tang = _check_v(v, xl, "jvp")
    ys = func(*xl)
    yl, ys_single = _as_list(ys, "jvp", "func's output")
    # u -> J^T u is linear in u, so its vjp with cotangent v is J v
    us = [_T.zeros_like(y) for y in yl]
    for u in us:
        u.stop_gradient = False
    gs = _grad(yl, xl, us, create_graph=True, allow_unused=True)
    pairs = [(g, t) for g, t in zip(gs, tang) if g is not None]
    if not pairs:
        jv = [_T.zeros_like(y) for y in yl]
    else:
        jv = _grad([g for g, _ in pairs], us, [t for _, t in pairs], allow_unused=True)
        jv = [_T.zeros_like(y) if j is None else j for j, y in zip(jv, yl)]
    ys_out = yl[0].detach() if ys_single else tuple(y.detach() for y in yl)
    return ys_out, jv[0] if ys_single else tuple(jv)


class Jacobian:
    """The Jacobian of ``func`` at ``xs``, as a matrix you index.

    Shape ``(M, N)``: M the number of output elements, N the total number of input elements
    (inputs concatenated in order); with ``is_batched`` the first axis of every input/output is
    the batch and the shape is ``(B, M, N)``. Rows are computed on first access and cached.

    Example:
        >>> J = paddle.incubate.autograd.Jacobian(lambda x: x * x, paddle.ones([3]))
        >>> J[:].shape
        [3, 3]
    """

    def __init__(self, func, xs, is_batched=False):
        xl, _ = _as_list(xs, "Jacobian", "xs")
        self._xs = _leaves(xl)
        self._batched = bool(is_batched)
        ys = func(*self._xs)
        if not isinstance(ys, Tensor):
            raise TypeError(f"Jacobian: func must return one Tensor, got {type(ys).__name__}")
        if self._batched:
            b = ys.shape[0] if ys.ndim else None
            for i, x in enumerate(self._xs):
                if x.ndim == 0 or x.shape[0] != b:
                    raise ValueError(f"Jacobian: with is_batched the inputs and output share "
                                     f"axis 0; xs[{i}] has shape {x.shape}, output {ys.shape}")
            self._ys = _T.reshape(ys, [b, -1])
            self._m = self._ys.shape[1]
            self._n = sum(int(x.size // b) for x in self._xs)
            self._shape = (b, self._m, self._n)
        else:
            self._ys = _T.reshape(ys, [-1])
            self._m = self._ys.shape[0]
            self._n = sum(int(x.size) for x in self._xs)
            self._shape = (self._m, self._n)
        self._rows = {}
        self._full = None

    @property
    def shape(self):
        """``(M, N)`` or ``(B, M, N)``."""
        return self._shape

    def _row(self, m):
        r = self._rows.get(m)
        if r is None:
            y = self._ys[:, m] if self._batched else self._ys[m]
            # every row runs backward through the same graph: keep it
            gs = _grads([y], self._xs, None, retain_graph=True)
            if self._batched:
                b = self._shape[0]
                r = _T.concat([_T.reshape(g, [b, -1]) for g in gs], axis=1)
            else:
                r = _T.concat([_T.reshape(g, [-1]) for g in gs], axis=0)
            self._rows[m] = r
        return r

    def _matrix(self):
        if self._full is None:
            rows = [self._row(m) for m in range(self._m)]
            self._full = _T.stack(rows, axis=1 if self._batched else 0)
        return self._full

    def __getitem__(self, indexes):
        return self._matrix()[indexes]

    def __repr__(self):
        return f"Jacobian(shape={self._shape}, is_batched={self._batched})"


class Hessian(Jacobian):
    """The Hessian of a scalar ``func`` (``[B, 1]`` per batch with ``is_batched``) at ``xs``:
    the Jacobian of its gradient. Shape ``(N, N)`` or ``(B, N, N)``.

    Example:
        >>> H = paddle.incubate.autograd.Hessian(lambda x: (x ** 3).sum(), paddle.ones([2]))
        >>> H[:].shape
        [2, 2]
    """

    def __init__(self, func, xs, is_batched=False):
        batched = bool(is_batched)

        def gradient(*xl):
            y = func(*xl)
            if not isinstance(y, Tensor) or (y.size != (y.shape[0] if batched and y.ndim
                                                        else 1)):
                raise ValueError(f"Hessian: func must return a scalar (one value per batch "
                                 f"row with is_batched), got shape "
                                 f"{getattr(y, 'shape', type(y).__name__)}")
            gs = _grads([_T.sum(y)], list(xl), None, create_graph=True)
            if batched:
                b = xl[0].shape[0]
                return _T.concat([_T.reshape(g, [b, -1]) for g in gs], axis=1)
            return _T.concat([_T.reshape(g, [-1]) for g in gs], axis=0)

        super().__init__(gradient, xs, is_batched)

    def __repr__(self):
        return f"Hessian(shape={self._shape}, is_batched={self._batched})"
