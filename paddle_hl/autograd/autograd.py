"""Lazy Jacobian and Hessian matrices (``paddle.autograd.jacobian`` / ``hessian``).

A :class:`Jacobian` computes nothing when it is built. Slicing it computes only the rows it
needs — one reverse pass per row of ``ys`` (per output element; with a batch axis, per output
feature for the whole batch at once) — and caches them. Rows are built with
``create_graph=True`` when every op allows it, so a Jacobian can be differentiated again; that is
how :class:`Hessian` is made (the Jacobian of the gradient).
"""

from __future__ import annotations

import functools

import numpy as np

from ..framework import state
from ..framework.engine import NoHigherOrderRuleError, grad
from ..framework.tensor import Tensor, _wrap
from ..tensor._helpers import check_tensor

__all__ = []


_check_tensor = functools.partial(check_tensor, what="a Tensor or a tuple of Tensors")


class Jacobian:
    """The Jacobian of ``ys`` with respect to ``xs``, evaluated lazily on slicing.

    Shape: ``[M, N]`` for ``ys`` of shape ``[M]`` and ``xs`` of shape ``[N]`` (a 0-D ys or xs
    drops its dim); with ``is_batched``, ``[B, M, N]`` for ``ys`` ``[B, M]`` and ``xs`` ``[B, N]``.
    ``J[i, j]`` is d ys[i] / d xs[j].
    """

    def __init__(self, ys: Tensor, xs: Tensor, is_batched: bool = False):
        _check_tensor(ys, "jacobian", "ys")
        _check_tensor(xs, "jacobian", "xs")
        lo, hi = (1, 2) if is_batched else (0, 1)
        for name, t in (("xs", xs), ("ys", ys)):
            if not lo <= t.ndim <= hi:
                raise ValueError(f"{name}.ndim should be {lo} or {hi} when is_batched="
                                 f"{is_batched} but got {t.ndim}")
        if is_batched and ys.shape[0] != xs.shape[0]:
            raise ValueError(f"jacobian: ys and xs must have the same batch size on axis 0, got "
                             f"{ys.shape[0]} and {xs.shape[0]}")
        self._ys = ys
        self._xs = xs
        self._batched = is_batched
        self._has_row = ys.ndim == hi
        self._has_col = xs.ndim == hi
        self._m = ys.shape[-1] if self._has_row else 1
        self._rows = {}
        shape = [xs.shape[0]] if is_batched else []
        if self._has_row:
            shape.append(self._m)
        if self._has_col:
            shape.append(xs.shape[-1])
        self._shape = shape

    @property
    def shape(self) -> list:
        """The Jacobian's shape (see the class doc)."""
        return list(self._shape)

    def _row(self, m: int) -> Tensor:
        """d ys[..., m] / d xs, shaped like xs (computed once)."""
        r = self._rows.get(m)
        if r is not None:
            return r
        ys, xs = self._ys, self._xs
        xp_arr = ys._data
        if self._has_row:
            onehot = np.zeros(ys.shape[-1], dtype=np.dtype(xp_arr.dtype))
            onehot[m] = 1
            from .. import backend

            xp = backend.get_array_module(xp_arr)
            cot = _wrap(xp.broadcast_to(xp.asarray(onehot), xp_arr.shape).copy())
        else:
            cot = None
        r = None
        if not ys.stop_gradient:
            try:
                (r,) = grad(ys, xs, grad_outputs=cot, retain_graph=True, create_graph=True,
                            allow_unused=True)
            except NoHigherOrderRuleError:
                # an op without a second-order rule: first-order values are still right
                (r,) = grad(ys, xs, grad_outputs=cot, retain_graph=True, allow_unused=True)
        if r is None:
            from .. import backend

            xp = backend.get_array_module(xs._data)
            dt = xs._data.dtype if xs._data.dtype.kind in "fc" else ys._data.dtype
            r = _wrap(xp.zeros(xs._data.shape, dtype=dt))
        self._rows[m] = r
        return r

    def __getitem__(self, indexes):
        if not self._shape:
            raise IndexError("0-D tensor can not be indexed.")
        idx = indexes if isinstance(indexes, tuple) else (indexes,)
        if any(i is Ellipsis for i in idx):
            raise IndexError("Ellipsis index currently is not supported.")
        if any(i is None for i in idx):
            raise IndexError("None (newaxis) index is not supported on a Jacobian.")
        if len(idx) > len(self._shape):
            raise IndexError(f"too many indices for a Jacobian of shape {self._shape}: "
                             f"{len(idx)} given")
        from ..tensor.manipulation import stack

        row_axis = 1 if self._batched else 0
        if not self._has_row:
            return self._row(0)[idx]
        sel = idx[row_axis] if len(idx) > row_axis else slice(None)
        if isinstance(sel, Tensor):
            sel = sel.numpy()
        try:
            picked = np.arange(self._m)[sel]
        except IndexError as e:
            raise IndexError(f"Jacobian index {sel!r} is out of range for {self._m} rows: "
                             f"{e}") from None
        if picked.ndim == 0:
            mat = self._row(int(picked))
            rest = idx[:row_axis] + idx[row_axis + 1:]
            return mat[rest] if rest else mat
        if picked.size == 0:
            full = stack([self._row(0)], axis=row_axis)
            return full[idx[:row_axis] + (slice(0, 0),) + idx[row_axis + 1:]]
        mat = stack([self._row(int(m)) for m in picked], axis=row_axis)
        rest = idx[:row_axis] + (slice(None),) + idx[row_axis + 1:]
        return mat[rest]

    def __repr__(self):
        return f"Jacobian(shape={self._shape}, evaluated_rows={len(self._rows)})"


class Hessian(Jacobian):
    """The Hessian of a scalar ``ys`` (per batch item with ``is_batched``) w.r.t. ``xs``.

    It is the :class:`Jacobian` of the gradient of ``ys``, evaluated lazily on slicing. Shape
    ``[N, N]`` (``[B, N, N]`` batched).
    """

    def __init__(self, ys: Tensor, xs: Tensor, is_batched: bool = False, _xs_grad=None):
        _check_tensor(ys, "hessian", "ys")
        _check_tensor(xs, "hessian", "xs")
        if _xs_grad is None:
            _xs_grad = _first_grads(ys, (xs,), is_batched)[0]
        super().__init__(_xs_grad, xs, is_batched)

    def __repr__(self):
        return f"Hessian(shape={self._shape}, evaluated_rows={len(self._rows)})"


def _first_grads(ys, xs, is_batched):
    """d ys / d xs (summed over the batch when batched), kept differentiable."""
    if is_batched:
        if not (ys.ndim == 1 or (ys.ndim == 2 and ys.shape[1] == 1)):
            raise ValueError(f"Only support ys.shape == [B] or [B, 1] when batch_axis is 0, but "
                             f"got ys.shape == {ys.shape}.")
    elif ys.size != 1:
        raise ValueError(f"Only support ys.numel()({ys.size})==1 when batch_axis is None.")
    out = []
    gs = [None] * len(xs)
    if not ys.stop_gradient:
        from ..tensor.stat import sum as _sum

        root = _sum(ys) if is_batched else ys
        prev = state.set_grad(True)
        try:
            gs = grad(root, list(xs), retain_graph=True, create_graph=True, allow_unused=True)
        finally:
            state.set_grad(prev)
    for x, g in zip(xs, gs):
        if g is None:
            from .. import backend

            xp = backend.get_array_module(x._data)
            g = _wrap(xp.zeros(x._data.shape, dtype=x._data.dtype))
        out.append(g)
    return out


def _batch_flag(batch_axis):
    if batch_axis is None:
        return False
    if batch_axis == 0 and not isinstance(batch_axis, bool):
        return True
    raise ValueError(f"batch_axis should be None or 0, but got {batch_axis}.")


def jacobian(ys, xs, batch_axis=None):
    """The Jacobian of ``ys`` with respect to ``xs``, as lazy :class:`Jacobian` objects.

    Args:
        ys (Tensor|tuple[Tensor]): outputs, each 0-D or 1-D (1-D or 2-D with a batch axis).
        xs (Tensor|tuple[Tensor]): inputs, each 0-D or 1-D (1-D or 2-D with a batch axis).
        batch_axis (int, optional): None, or 0 when axis 0 of every ys and xs is a batch of
            independent samples. Defaults to None.

    Returns:
        Jacobian | tuple[Jacobian] | tuple[tuple[Jacobian]]: one Jacobian, a tuple over the
        tuple argument, or a tuple (over ys) of tuples (over xs).

    Example:
        >>> x = paddle.to_tensor([1., 2.], stop_gradient=False)
        >>> J = paddle.autograd.jacobian(x * x, x)
        >>> J[:]  # [[2., 0.], [0., 4.]]
    """
    batched = _batch_flag(batch_axis)
    y_seq = isinstance(ys, (tuple, list))
    x_seq = isinstance(xs, (tuple, list))
    yl = list(ys) if y_seq else [ys]
    xl = list(xs) if x_seq else [xs]
    table = tuple(tuple(Jacobian(y, x, batched) for x in xl) for y in yl)
    if y_seq and x_seq:
        return table
    if y_seq:
        return tuple(r[0] for r in table)
    if x_seq:
        return table[0]
    return table[0][0]


def hessian(ys, xs, batch_axis=None):
    """The Hessian of a scalar ``ys`` with respect to ``xs``, as lazy :class:`Hessian` objects.

    Args:
        ys (Tensor): a tensor with one element (shape ``[B]`` or ``[B, 1]`` with a batch axis).
        xs (Tensor|tuple[Tensor]): inputs, each 0-D or 1-D (1-D or 2-D with a batch axis).
        batch_axis (int, optional): None or 0. Defaults to None.

    Returns:
        Hessian | tuple[tuple[Hessian]]: ``H[i][j]`` is d2 ys / (d xs[i] d xs[j]) for a tuple.

    Example:
        >>> A = paddle.to_tensor([[1., 2.], [3., 4.]])
        >>> x = paddle.to_tensor([1., 1.], stop_gradient=False)
        >>> H = paddle.autograd.hessian(paddle.dot(x, paddle.mv(A, x)), x)
        >>> H[:]  # A + A^T
    """
    batched = _batch_flag(batch_axis)
    _check_tensor(ys, "hessian", "ys")
    x_seq = isinstance(xs, (tuple, list))
    xl = list(xs) if x_seq else [xs]
    for x in xl:
        _check_tensor(x, "hessian", "xs")
    grads = _first_grads(ys, xl, batched)
    if not x_seq:
        return Hessian(ys, xl[0], batched, _xs_grad=grads[0])
    return tuple(tuple(Hessian(ys, xj, batched, _xs_grad=gi) for xj in xl) for gi in grads)
