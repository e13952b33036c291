"""Matrix products and linear algebra (Paddle's ``tensor/linalg.py`` category).

Every op is a kernel on raw backend arrays (NumPy or CuPy, through ``xp``) whose backward sits
next to it. Batched inputs (leading dims) are supported wherever Paddle supports them. Half
precision (float16 on NumPy, bfloat16 everywhere) is computed in float32 and cast back, which is
both faster (BLAS) and the accumulation Paddle documents. Complex gradients follow Paddle's
convention (``d(x @ y)/dx = g @ conj(y)^T``).
"""

from __future__ import annotations

import numbers
import string

import numpy as np

from .. import backend
from ..backend import get_array_module as _xp
from ..backend.arrays import up as _up
from ..framework import dtype as _dt
from ..framework.op import GRAD, _unbroadcast, apply, op
from ..framework.tensor import Tensor, _wrap
from ._helpers import OPERATOR, float_arg, norm_axis, promote_pair, tensor_arg

__all__ = []


# --------------------------------------------------------------------------- array helpers
def _mT(a):  # noqa: N802  (matrix transpose of the last two dims)
    return a.swapaxes(-1, -2)


def _mH(a):  # noqa: N802  (conjugate transpose)
    a = a.swapaxes(-1, -2)
    return a.conj() if a.dtype.kind == "c" else a


def _cj(a):
    return a.conj() if a.dtype.kind == "c" else a


def _low(dt) -> bool:
    return dt in _dt.LOW_FLOATS


def _mT_m(M, a):  # noqa: N802  (matrix transpose in either gradient-rule namespace)
    nd = len(a.shape)
    return M.transpose(a, list(range(nd - 2)) + [nd - 1, nd - 2])


def _fit(M, g, like):
    """An array-path gradient summed over broadcast batch dims to ``like``'s shape (the Tensor
    path's engine does this itself)."""
    if M.tensor or g.shape == like.shape:
        return g
    return _unbroadcast(g, like.shape)


def _diag_embed(v):
    xp = _xp(v)
    n = v.shape[-1]
    return v[..., :, None] * xp.eye(n, dtype=v.dtype)


def _diagonal(a):
    return a.diagonal(axis1=-2, axis2=-1)


def _solve(a, b):
    """a^{-1} b with NumPy 2 batched semantics (b always a stack of matrices)."""
    return _xp(a).linalg.solve(a, b)


def _rsolve(b, a):
    """b a^{-1}."""
    return _mT(_solve(_mT(a), _mT(b)))


# --------------------------------------------------------------------------- argument helpers
def _matrix_arg(x, op, arg="x", square=False, complex_ok=True):
    x = float_arg(x, op, arg, complex_ok=complex_ok)
    if x.ndim < 2:
        raise ValueError(f"{op}: argument '{arg}' must be a matrix or a batch of matrices "
                         f"(at least 2-D), got shape {x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{op}: argument '{arg}' must be a square matrix (or a batch of them), "
                         f"got shape {x.shape}")
    return x


def _same_float(x, y, op):
    """Two float tensors promoted to one dtype."""
    return promote_pair(x, y, op, True)


# --------------------------------------------------------------------------- conj (private op)
@op("conj", saves=(), grad=lambda M, x, out, g: (M.conj(g),))
def _conj_kernel(x):
    return x.conj(), GRAD


def _conj(x: Tensor) -> Tensor:
    """Differentiable conjugate; real tensors pass through unchanged."""
    if x._data.dtype.kind != "c":
        return x
    return apply(_conj_kernel, x)


# --------------------------------------------------------------------------- matmul family
def _mm(M, a, b, tx, ty):
    """The matmul kernel in a gradient rule: recorded under create_graph, called directly (no
    keyword forwarding) on arrays, where the rule runs at every backward."""
    if M.tensor:
        return M.op(_matmul_kernel, a, b, tx=tx, ty=ty)
    return _matmul_kernel(a, b, tx, ty)[0]


def _matmul_grad(M, x, y, out, g, tx=False, ty=False):
    # the adjoints are matmuls again (with conj(x), conj(y) for complex operands)
    cx, cy = M.conj(x), M.conj(y)
    gx = _mm(M, cy, g, ty, True) if tx else _mm(M, g, cy, False, not ty)
    gy = _mm(M, g, cx, True, tx) if ty else _mm(M, cx, g, not tx, False)
    return _fit(M, gx, x), _fit(M, gy, y)


@op("matmul", grad=_matmul_grad)
def _matmul_kernel(x, y, tx=False, ty=False):
    """op(x) @ op(y) with x, y at least 2-D (1-D cases are reshaped by the public function)."""
    a = x.swapaxes(-1, -2) if tx else x
    b = y.swapaxes(-1, -2) if ty else y
    dt = x.dtype
    # bf16 has no BLAS anywhere; fp16 has none in NumPy: accumulate in fp32
    if dt.itemsize == 2 and (dt == _dt.BFLOAT16_NP or (_low(dt) and _xp(x) is np)):
        return (a.astype(np.float32) @ b.astype(np.float32)).astype(dt), GRAD
    return a @ b, GRAD


def matmul(x, y, transpose_x=False, transpose_y=False, name=None):
    """Matrix product with NumPy's broadcasting rules for the batch dims.

    Args:
        x (Tensor): ``[..., M, K]`` (or ``[K]``).
        y (Tensor): ``[..., K, N]`` (or ``[K]``).
        transpose_x (bool): transpose the last two dims of x first (ignored for 1-D x).
        transpose_y (bool): transpose the last two dims of y first (ignored for 1-D y).
        name (str, optional): unused.

    Returns:
        Tensor: ``[..., M, N]``; a 1-D operand drops its dim as in NumPy (two 1-D operands give
        a 0-D result).

    Example:
        >>> paddle.matmul(paddle.ones([2, 3]), paddle.ones([3, 4])).shape
        [2, 4]
    """
    if type(x) is not Tensor:
        x = tensor_arg(x, "matmul", "x")
    if type(y) is not Tensor:
        y = tensor_arg(y, "matmul", "y")
    if x._data.ndim == 0 or y._data.ndim == 0:
        raise ValueError(f"matmul: inputs must be at least 1-D, got shapes {x.shape} and "
                         f"{y.shape}")
    if x._data.dtype != y._data.dtype:
        x, y = promote_pair(x, y, "matmul", name is not OPERATOR)
    x1, y1 = x._data.ndim == 1, y._data.ndim == 1
    if x1 or y1:
        from .manipulation import reshape  # noqa: PLC0415  (a 1-D operand only)
    if x1:
        x = reshape(x, [1, x._data.shape[0]])
        transpose_x = False
    if y1:
        y = reshape(y, [y._data.shape[0], 1])
        transpose_y = False
    xs, ys = x._data.shape, y._data.shape
    kx = xs[-2] if transpose_x else xs[-1]
    ky = ys[-1] if transpose_y else ys[-2]
    if kx != ky:
        raise ValueError(f"matmul: the inner dims do not match: x has shape {x.shape}, y has "
                         f"shape {y.shape} (transpose_x={transpose_x}, "
                         f"transpose_y={transpose_y})")
    if len(xs) > 2 and len(ys) > 2:  # batch dims on both sides: they must broadcast
        try:
            np.broadcast_shapes(xs[:-2], ys[:-2])
        except ValueError:
            raise ValueError(f"matmul: cannot broadcast the batch dims of x {x.shape} and y "
                             f"{y.shape}") from None
    out = apply(_matmul_kernel, x, y, tx=bool(transpose_x), ty=bool(transpose_y))
    if x1 or y1:
        shape = out.shape
        if x1:
            shape = shape[:-2] + shape[-1:]
        if y1:
            shape = shape[:-1]
        out = reshape(out, shape)
    return out


def bmm(x, y, name=None):
    """Batched matrix product of two 3-D tensors ``[B, M, K] @ [B, K, N] -> [B, M, N]``.

    Args:
        x (Tensor): ``[B, M, K]``.
        y (Tensor): ``[B, K, N]``.
        name (str, optional): unused.

    Returns:
        Tensor: ``[B, M, N]``.
    """
    x = tensor_arg(x, "bmm", "x")
    y = tensor_arg(y, "bmm", "y")
    if x.ndim != 3 or y.ndim != 3:
        raise ValueError(f"bmm: x and y must be 3-D, got shapes {x.shape} and {y.shape}")
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"bmm: the batch sizes differ: x has shape {x.shape}, y has shape "
                         f"{y.shape}")
    if x.shape[2] != y.shape[1]:
        raise ValueError(f"bmm: x's last dim must equal y's middle dim, got shapes {x.shape} "
                         f"and {y.shape}")
    return matmul(x, y)


def mm(input, mat2, name=None):  # noqa: A002  (Paddle's argument name)
    """Matrix product ``input @ mat2`` (same rules as :func:`matmul`).

    Args:
        input (Tensor): ``[..., M, K]``.
        mat2 (Tensor): ``[..., K, N]``.
        name (str, optional): unused.

    Returns:
        Tensor: ``[..., M, N]``.
    """
    return matmul(input, mat2)


def mv(x, vec, name=None):
    """Matrix-vector product ``[M, N] @ [N] -> [M]``.

    Args:
        x (Tensor): a 2-D matrix ``[M, N]``.
        vec (Tensor): a 1-D vector ``[N]``.
        name (str, optional): unused.

    Returns:
        Tensor: ``[M]``.
    """
    x = tensor_arg(x, "mv", "x")
    vec = tensor_arg(vec, "mv", "vec")
    if x.ndim != 2 or vec.ndim != 1:
        raise ValueError(f"mv: x must be 2-D and vec 1-D, got shapes {x.shape} and {vec.shape}")
    if x.shape[1] != vec.shape[0]:
        raise ValueError(f"mv: x's second dim must equal vec's length, got shapes {x.shape} "
                         f"and {vec.shape}")
    return matmul(x, vec)


def _dot_grad(M, x, y, out, g):
    g = M.reshape(g, list(g.shape) + [1])
    return g * M.conj(y), g * M.conj(x)


@op("dot", grad=_dot_grad)
def _dot_kernel(x, y):
    xp = _xp(x)
    return xp.asarray(xp.sum(_up(x) * _up(y), axis=-1).astype(x.dtype)), GRAD


def dot(x, y, name=None):
    """Inner product of two vectors, or row-wise inner products of two 2-D tensors.

    Args:
        x (Tensor): ``[N]`` or ``[B, N]``.
        y (Tensor): same shape as x.
        name (str, optional): unused.

    Returns:
        Tensor: 0-D for 1-D inputs, ``[B]`` for 2-D inputs.
    """
    x = tensor_arg(x, "dot", "x")
    y = tensor_arg(y, "dot", "y")
    if x.ndim not in (1, 2) or x.shape != y.shape:
        raise ValueError(f"dot: x and y must be 1-D or 2-D tensors of the same shape, got "
                         f"shapes {x.shape} and {y.shape}")
    x, y = promote_pair(x, y, "dot", True)
    return apply(_dot_kernel, x, y)


def outer(x, y, name=None):
    """Outer product of the flattened x and y: ``[N] x [M] -> [N, M]``.

    Args:
        x (Tensor): any shape (flattened).
        y (Tensor): any shape (flattened).
        name (str, optional): unused.

    Returns:
        Tensor: ``[x.size, y.size]``.
    """
    from .manipulation import reshape

    x = tensor_arg(x, "outer", "x")
    y = tensor_arg(y, "outer", "y")
    return matmul(reshape(x, [-1, 1]), reshape(y, [1, -1]))


def inner(x, y, name=None):
    """Inner product over the last axis: ``[..., K] x [..., K] -> x.shape[:-1] + y.shape[:-1]``.

    Args:
        x (Tensor): ``[..., K]`` (a 0-D tensor multiplies elementwise).
        y (Tensor): ``[..., K]``.
        name (str, optional): unused.

    Returns:
        Tensor: ``x.shape[:-1] + y.shape[:-1]``.
    """
    from .manipulation import reshape

    x = tensor_arg(x, "inner", "x")
    y = tensor_arg(y, "inner", "y")
    if x.ndim == 0 or y.ndim == 0:
        from .math import multiply

        return multiply(x, y)
    if x.shape[-1] != y.shape[-1]:
        raise ValueError(f"inner: the last dims of x and y must match, got shapes {x.shape} "
                         f"and {y.shape}")
    k = x.shape[-1]
    out = matmul(reshape(x, [-1, k]), reshape(y, [-1, k]), transpose_y=True)
    return reshape(out, x.shape[:-1] + y.shape[:-1])


def _tensordot_axes(axes, xs, ys):
    """Paddle's axes forms -> (x_axes, y_axes) as lists of non-negative ints."""
    op = "tensordot"
    if isinstance(axes, Tensor):
        axes = axes.numpy().tolist()
    if isinstance(axes, numbers.Integral) and not isinstance(axes, bool):
        n = int(axes)
        if n < 0 or n > len(xs) or n > len(ys):
            raise ValueError(f"tensordot: axes={n} must be in [0, min(x.ndim, y.ndim)] for "
                             f"shapes {list(xs)} and {list(ys)}")
        xa, ya = list(range(len(xs) - n, len(xs))), list(range(n))
    elif isinstance(axes, (list, tuple)):
        axes = list(axes)
        if len(axes) == 0:
            xa, ya = [], []
        elif all(isinstance(a, numbers.Integral) for a in axes):
            xa, ya = list(axes), list(axes)
        else:
            if len(axes) > 2:
                raise ValueError(f"tensordot: axes {axes} must hold at most two axis lists")
            xa = list(axes[0]) if isinstance(axes[0], (list, tuple)) else [axes[0]]
            ya = (list(axes[1]) if isinstance(axes[1], (list, tuple)) else [axes[1]]) \
                if len(axes) == 2 else list(xa)
            # the shorter list is completed with the longer one's trailing entries (as Paddle)
            if len(xa) < len(ya):
                xa = xa + ya[len(xa):]
            elif len(ya) < len(xa):
                ya = ya + xa[len(ya):]
    else:
        raise TypeError(f"tensordot: axes must be an int, a list/tuple or a Tensor, got "
                        f"{type(axes).__name__}")
    xa = [norm_axis(a, len(xs), op, "axes") for a in xa]
    ya = [norm_axis(a, len(ys), op, "axes") for a in ya]
    if len(set(xa)) != len(xa) or len(set(ya)) != len(ya):
        raise ValueError(f"tensordot: axes {xa} / {ya} repeat an axis")
    for a, b in zip(xa, ya):
        if xs[a] != ys[b]:
            raise ValueError(f"tensordot: the contracted dims do not match: x has size {xs[a]} "
                             f"in dim {a}, y has size {ys[b]} in dim {b} (shapes {list(xs)} "
                             f"and {list(ys)})")
    return xa, ya


def tensordot(x, y, axes=2, name=None):
    """Contract x and y over the given axes.

    Args:
        x (Tensor): first operand.
        y (Tensor): second operand.
        axes (int | list | tuple | Tensor): an int N contracts x's last N dims with y's first N;
            ``[x_axes, y_axes]`` names the dims (a single list is used for both, and a shorter
            list is completed from the longer one).
        name (str, optional): unused.

    Returns:
        Tensor: x's free dims followed by y's free dims.
    """
    from .manipulation import reshape, transpose

    x = tensor_arg(x, "tensordot", "x")
    y = tensor_arg(y, "tensordot", "y")
    x, y = promote_pair(x, y, "tensordot", True)
    xa, ya = _tensordot_axes(axes, x.shape, y.shape)
    xf = [i for i in range(x.ndim) if i not in xa]
    yf = [i for i in range(y.ndim) if i not in ya]
    k = int(np.prod([x.shape[i] for i in xa])) if xa else 1
    xm = transpose(x, xf + xa) if xf + xa != list(range(x.ndim)) else x
    ym = transpose(y, ya + yf) if ya + yf != list(range(y.ndim)) else y
    mx = int(np.prod([x.shape[i] for i in xf])) if xf else 1
    ny = int(np.prod([y.shape[i] for i in yf])) if yf else 1
    out = matmul(reshape(xm, [mx, k]), reshape(ym, [k, ny]))
    return reshape(out, [x.shape[i] for i in xf] + [y.shape[i] for i in yf])


def _kron_shapes(xs, ys):
    nd = max(len(xs), len(ys))
    xs = (1,) * (nd - len(xs)) + tuple(xs)
    ys = (1,) * (nd - len(ys)) + tuple(ys)
    return xs, ys


def _kron_grad(M, x, y, out, g):
    xs, ys = _kron_shapes(x.shape, y.shape)
    nd = len(xs)
    # the interleaved view of the kernel: g[x0, y0, x1, y1, ...]
    ge = M.reshape(g, [v for a, b in zip(xs, ys) for v in (a, b)])
    xe = M.reshape(x, [v for s in xs for v in (s, 1)])
    ye = M.reshape(y, [v for s in ys for v in (1, s)])
    gx = M.sum(ge * M.conj(ye), axis=tuple(range(1, 2 * nd, 2)))
    gy = M.sum(ge * M.conj(xe), axis=tuple(range(0, 2 * nd, 2)))
    return M.reshape(gx, list(x.shape)), M.reshape(gy, list(y.shape))


@op("kron", grad=_kron_grad)
def _kron_kernel(x, y):
    xs, ys = _kron_shapes(x.shape, y.shape)
    # interleave: x -> (x0, 1, x1, 1, ...), y -> (1, y0, 1, y1, ...)
    xe = x.reshape(tuple(v for s in xs for v in (s, 1)))
    ye = y.reshape(tuple(v for s in ys for v in (1, s)))
    return (xe * ye).reshape(tuple(a * b for a, b in zip(xs, ys))), GRAD


def kron(x, y, name=None):
    """Kronecker product; the shorter operand is padded with leading 1 dims.

    Args:
        x (Tensor): first operand (real or complex).
        y (Tensor): second operand.
        name (str, optional): unused.

    Returns:
        Tensor: shape ``[x.shape[i] * y.shape[i] ...]``.
    """
    x = tensor_arg(x, "kron", "x")
    y = tensor_arg(y, "kron", "y")
    x, y = promote_pair(x, y, "kron", True)
    return apply(_kron_kernel, x, y)


@op("cross", grad=lambda M, x, y, out, g, axis: (M.op(_cross_kernel, y, g, axis=axis),
                                                 M.op(_cross_kernel, g, x, axis=axis)))
def _cross_kernel(x, y, axis):
    return _xp(x).cross(x, y, axis=axis), GRAD


def cross(x, y, axis=9, name=None):
    """Cross product of 3-vectors along ``axis``.

    Args:
        x (Tensor): a tensor with a dim of size 3.
        y (Tensor): same shape as x.
        axis (int): the dim of size 3; the default 9 picks the first dim of size 3.
        name (str, optional): unused.

    Returns:
        Tensor: same shape as x.
    """
    x = tensor_arg(x, "cross", "x")
    y = tensor_arg(y, "cross", "y")
    if x.shape != y.shape:
        raise ValueError(f"cross: x and y must have the same shape, got {x.shape} and "
                         f"{y.shape}")
    if axis == 9 and not (-x.ndim <= 9 < x.ndim):
        axes = [i for i, s in enumerate(x.shape) if s == 3]
        if not axes:
            raise ValueError(f"cross: x and y need a dim of size 3, got shape {x.shape}")
        axis = axes[0]
    else:
        axis = norm_axis(axis, x.ndim, "cross")
        if x.shape[axis] != 3:
            raise ValueError(f"cross: dim {axis} of x and y must have size 3, got shape "
                             f"{x.shape}")
    x, y = promote_pair(x, y, "cross", True)
    return apply(_cross_kernel, x, y, axis=axis)


def multi_dot(x, name=None):
    """Product of a chain of matrices, in the cheapest multiplication order.

    Args:
        x (list[Tensor]): two or more tensors; all 2-D except that the first and the last may
            be 1-D (a row and a column vector).
        name (str, optional): unused.

    Returns:
        Tensor: the chained product (1-D ends drop their dim).
    """
    from .manipulation import reshape

    op = "multi_dot"
    if isinstance(x, Tensor) or not isinstance(x, (list, tuple)):
        raise TypeError(f"{op}: x must be a list or tuple of Tensors, got {type(x).__name__}")
    if len(x) < 2:
        raise ValueError(f"{op}: needs at least two tensors, got {len(x)}")
    ts = [tensor_arg(t, op, f"x[{i}]") for i, t in enumerate(x)]
    dts = {t.dtype for t in ts}
    if len(dts) > 1:
        raise TypeError(f"{op}: all tensors must have the same dtype, got "
                        f"{[str(t.dtype) for t in ts]}")
    first1, last1 = ts[0].ndim == 1, ts[-1].ndim == 1
    for i, t in enumerate(ts):
        ok = t.ndim == 2 or (t.ndim == 1 and i in (0, len(ts) - 1))
        if not ok:
            raise ValueError(f"{op}: tensor {i} must be 2-D (the first and the last may be "
                             f"1-D), got shape {t.shape}")
    if first1:
        ts[0] = reshape(ts[0], [1, -1])
    if last1:
        ts[-1] = reshape(ts[-1], [-1, 1])
    for i in range(len(ts) - 1):
        if ts[i].shape[1] != ts[i + 1].shape[0]:
            raise ValueError(f"{op}: tensors {i} and {i + 1} cannot be multiplied: shapes "
                             f"{ts[i].shape} and {ts[i + 1].shape}")
    out = _chain(ts, _chain_order([t.shape[0] for t in ts] + [ts[-1].shape[1]]), 0,
                 len(ts) - 1)
    shape = out.shape
    if first1:
        shape = shape[1:]
    if last1:
        shape = shape[:-1]
    return reshape(out, shape) if shape != out.shape else out


def _chain_order(dims):
    """Classic matrix-chain dynamic programme; returns the split table."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            best = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if best is None or c < best:
                    best, split[i][j] = c, k
            cost[i][j] = best
    return split


def _chain(ts, split, i, j):
    if i == j:
        return ts[i]
    k = split[i][j]
    return matmul(_chain(ts, split, i, k), _chain(ts, split, k + 1, j))


def matrix_power(x, n, name=None):
    """The n-th power of square matrices (n < 0 uses the inverse; n == 0 gives identities).

    Args:
        x (Tensor): ``[..., M, M]`` float32/float64.
        n (int): the exponent.
        name (str, optional): unused.

    Returns:
        Tensor: ``[..., M, M]``.
    """
    op = "matrix_power"
    x = _matrix_arg(x, op, square=True)
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise TypeError(f"{op}: n must be an int, got {type(n).__name__}")
    n = int(n)
    if n == 0:
        xp = _xp(x._data)
        m = x.shape[-1]
        return _wrap(xp.broadcast_to(xp.eye(m, dtype=x._data.dtype), x._data.shape).copy())
    base = inverse(x) if n < 0 else x
    n = abs(n)
    result = None
    # binary exponentiation keeps the product count at O(log n)
    while True:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if not n:
            break
        base = matmul(base, base)
    return result


# --------------------------------------------------------------------------- einsum
def _einsum_parse(equation, shapes):
    """Parse an einsum equation against operand shapes.

    Returns (subs, out, squeeze): per-operand subscript strings with the ellipsis expanded to
    explicit letters, the output subscripts, and per operand the shape to reshape it to first
    (dropping size-1 dims that broadcast against a larger size elsewhere), or None.
    """
    op = "einsum"
    if not isinstance(equation, str):
        raise TypeError(f"{op}: equation must be a str, got {type(equation).__name__}")
    eq = equation.replace(" ", "")
    if eq.count("->") > 1:
        raise ValueError(f"{op}: equation '{equation}' has more than one '->'")
    lhs, rhs = (eq.split("->") + [None])[:2] if "->" in eq else (eq, None)
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"{op}: equation '{equation}' has {len(terms)} operand terms but "
                         f"{len(shapes)} operands were given")
    for t in terms + ([rhs] if rhs is not None else []):
        bad = set(t.replace("...", "")) - set(string.ascii_letters)
        if bad or t.count("...") > 1:
            raise ValueError(f"{op}: invalid subscripts '{t}' in '{equation}' (use letters and "
                             "at most one '...')")
    used = set(eq) & set(string.ascii_letters)
    free = [c for c in string.ascii_letters if c not in used]
    ell = []
    for t, s in zip(terms, shapes):
        nl = len(t.replace("...", ""))
        if "..." in t:
            if nl > len(s):
                raise ValueError(f"{op}: term '{t}' names more dims than the operand of shape "
                                 f"{list(s)} has")
            ell.append(len(s) - nl)
        else:
            if nl != len(s):
                raise ValueError(f"{op}: term '{t}' has {nl} subscripts but the operand has "
                                 f"shape {list(s)}")
            ell.append(0)
    ne = max(ell) if ell else 0
    if ne > len(free):
        raise ValueError(f"{op}: too many dims for the available subscript letters")
    eletters = "".join(free[:ne])
    subs = []
    for t, k in zip(terms, ell):
        subs.append(t.replace("...", eletters[ne - k:]) if "..." in t else t)
    sizes = {}
    for sub, s in zip(subs, shapes):
        for c, d in zip(sub, s):
            if c not in sizes or sizes[c] == 1:
                sizes[c] = d
            elif d != 1 and d != sizes[c]:
                raise ValueError(f"{op}: subscript '{c}' has inconsistent sizes {sizes[c]} and "
                                 f"{d} (operand shapes {[list(x) for x in shapes]})")
    for sub, s in zip(subs, shapes):
        seen = {}
        for c, d in zip(sub, s):
            if c in seen and seen[c] != d:
                raise ValueError(f"{op}: repeated subscript '{c}' in one operand needs equal "
                                 f"dims, got shape {list(s)}")
            seen[c] = d
    squeeze = []
    new_subs = []
    for sub, s in zip(subs, shapes):
        keep = [i for i, (c, d) in enumerate(zip(sub, s)) if not (d == 1 and sizes[c] != 1)]
        if len(keep) != len(sub):
            squeeze.append([s[i] for i in keep])
            sub = "".join(sub[i] for i in keep)
        else:
            squeeze.append(None)
        new_subs.append(sub)
    if rhs is None:
        counts = {}
        for sub in subs:
            for c in sub:
                counts[c] = counts.get(c, 0) + 1
        out = eletters + "".join(sorted(c for c, v in counts.items()
                                        if v == 1 and c not in eletters))
    else:
        if "..." in rhs:
            out = rhs.replace("...", eletters)
        else:
            out = rhs
        if len(set(out)) != len(out):
            raise ValueError(f"{op}: output subscripts '{rhs}' repeat a letter")
        missing = set(out) - set("".join(subs))
        if missing:
            raise ValueError(f"{op}: output subscripts {sorted(missing)} do not appear in any "
                             f"input term of '{equation}'")
    return tuple(new_subs), out, squeeze, sizes


def _einsum_raw(eq, ops):
    xp = _xp(ops[0])
    if xp is np:
        return np.einsum(eq, *ops, optimize=len(ops) > 2)
    return xp.einsum(eq, *ops)


def _einsum_grad_spec(subs, out, i, sizes):
    """How to write the gradient of operand i as one einsum of g, the other operands and
    constant helpers (ones for letters only operand i has, identities for repeated letters)."""
    sizes = dict(sizes)
    s = subs[i]
    others = [subs[j] for j in range(len(subs)) if j != i]
    used = set("".join(subs)) | set(out)
    fresh = [c for c in string.ascii_letters if c not in used]
    target, extra = [], []
    seen = set()
    for c in s:
        if c in seen:
            f = fresh.pop(0)
            target.append(f)
            extra.append(("eye", c + f, sizes[c]))
        else:
            seen.add(c)
            target.append(c)
    present = set(out) | set("".join(others))
    for c in dict.fromkeys(s):
        if c not in present:
            extra.append(("ones", c, sizes[c]))
    eq = ",".join([out] + others + [e[1] for e in extra]) + "->" + "".join(target)
    return eq, extra


def _einsum_extras(extra, like):
    xp = _xp(like)
    return [xp.eye(n, dtype=like.dtype) if kind == "eye" else xp.ones(n, dtype=like.dtype)
            for kind, _, n in extra]


def _einsum_grad(M, *args, subs, out, sizes):
    # each operand's gradient is one einsum of g, the other operands and constant helpers
    ops, g = args[:-2], args[-1]
    grads = []
    for i in range(len(ops)):
        eq, extra = _einsum_grad_spec(subs, out, i, sizes)
        lhs, rhs = eq.split("->")
        terms = ([g] + [M.conj(ops[j]) for j in range(len(ops)) if j != i]
                 + [M.const(a) for a in _einsum_extras(extra, M.value(g))])
        gsubs = tuple(lhs.split(","))
        gsizes = {c: n for sb, t in zip(gsubs, terms) for c, n in zip(sb, t.shape)}
        grads.append(M.op(_einsum_kernel, *terms, subs=gsubs, out=rhs,
                          sizes=tuple(sorted(gsizes.items()))))
    return tuple(grads)


@op("einsum", grad=_einsum_grad)
def _einsum_kernel(*ops, subs, out, sizes):
    dt = ops[0].dtype
    low = _low(dt) and (dt == _dt.BFLOAT16_NP or _xp(ops[0]) is np)
    ups = [_up(o) for o in ops] if low else list(ops)
    res = _einsum_raw(",".join(subs) + "->" + out, ups)
    return _xp(ops[0]).asarray(res).astype(dt, copy=False), GRAD


def einsum(equation, *operands):
    """Einstein summation over the operands, as ``numpy.einsum``.

    Supports explicit (``'ij,jk->ik'``) and implicit (``'ij,jk'``) output, ``...`` for
    broadcast dims, repeated subscripts (diagonals/traces) and size-1 broadcasting.

    Args:
        equation (str): the subscripts, e.g. ``'bij,bjk->bik'``.
        *operands (Tensor): the operands (a single list/tuple of tensors is accepted too).

    Returns:
        Tensor: the contraction; differentiable in every operand.

    Example:
        >>> paddle.einsum('ij,jk->ik', paddle.ones([2, 3]), paddle.ones([3, 4])).shape
        [2, 4]
    """
    from .manipulation import reshape

    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ValueError("einsum: at least one operand is required")
    ts = [tensor_arg(t, "einsum", f"operands[{k}]") for k, t in enumerate(operands)]
    subs, out, squeeze, sizes = _einsum_parse(equation, [tuple(t.shape) for t in ts])
    if len({t._data.dtype for t in ts}) > 1:
        first = ts[0]
        for k in range(1, len(ts)):
            first, ts[k] = promote_pair(first, ts[k], "einsum", True)
        ts = [promote_pair(t, first, "einsum")[0] for t in ts]
    ts = [reshape(t, s) if s is not None else t for t, s in zip(ts, squeeze)]
    return apply(_einsum_kernel, *ts, subs=subs, out=out, sizes=tuple(sorted(sizes.items())))


# --------------------------------------------------------------------------- norms, distances
def _pnorm_fwd(a, p, axis):
    """The p-norm of ``a`` over ``axis`` (keepdims); a is already float32/64."""
    xp = _xp(a)
    ab = xp.abs(a)
    if p == np.inf:
        return xp.max(ab, axis=axis, keepdims=True)
    if p == -np.inf:
        return xp.min(ab, axis=axis, keepdims=True)
    if p == 0:
        return xp.sum(ab != 0, axis=axis, keepdims=True).astype(ab.dtype)
    if p == 1:
        return xp.sum(ab, axis=axis, keepdims=True)
    if p == 2:
        return xp.sqrt(xp.sum(ab * ab, axis=axis, keepdims=True))
    return xp.sum(ab ** p, axis=axis, keepdims=True) ** (1.0 / p)


def _pnorm_dir(M, a, n, p):
    """d norm / d a for each element (n has keepdims), in either rule namespace; a zero norm
    gives a zero gradient."""
    if p == 0:
        return M.zeros_like(a)
    nd = M.value(n)
    if p in (np.inf, -np.inf):
        return M.sign(a) * M.mask(_xp(nd).abs(M.value(a)) == nd, a)
    if p == 1:
        return M.sign(a)
    safe = n + M.mask(nd == 0, n)  # 1 where the norm is 0
    if p == 2:
        d = a / safe
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            d = M.sign(a) * M.abs(a) ** (p - 1) / safe ** (p - 1)
    return M.select(nd != 0, d)


def _pnorm_grad(M, x, out, g, p, axis, keepdim):
    kept = [1 if i in axis else s for i, s in enumerate(x.shape)]
    if M.tensor:
        return (_pnorm_dir(M, x, M.reshape(out, kept), p) * M.reshape(g, kept),)
    # arrays: float16/bfloat16 in float32, as the forward
    d = _pnorm_dir(M, _up(x), _up(out).reshape(kept), p)
    return ((d * _up(g).reshape(kept)).astype(x.dtype, copy=False),)


@op("p_norm", uses_out=True, grad=_pnorm_grad)
def _pnorm_kernel(x, p, axis, keepdim):
    n = _pnorm_fwd(_up(x), p, axis)
    out = n if keepdim else n.reshape(tuple(s for i, s in enumerate(n.shape) if i not in axis))
    return out.astype(x.dtype, copy=False), GRAD


def _norm_axes(axis, ndim, op):
    if isinstance(axis, Tensor):
        axis = axis.numpy().tolist()
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (list, tuple)):
        if len(axis) > 2 or len(axis) == 0:
            raise ValueError(f"{op}: axis must be an int or a list of at most two ints, got "
                             f"{list(axis)}")
        axes = tuple(norm_axis(a, ndim, op, "axis") for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"{op}: axis {list(axis)} repeats a dim")
        return axes
    return (norm_axis(axis, ndim, op, "axis"),)


def _p_value(p, op):
    if isinstance(p, str):
        if p != "fro":
            raise ValueError(f"{op}: the only valid string value of p is 'fro', got '{p}'")
        return 2.0
    if isinstance(p, Tensor):
        p = p.item()
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise TypeError(f"{op}: p must be a number or 'fro', got {type(p).__name__}")
    return float(p)


def norm(x, p="fro", axis=None, keepdim=False, name=None):
    """Vector p-norm (or Frobenius norm) of x over ``axis``.

    Args:
        x (Tensor): float16/bfloat16/float32/float64 input.
        p (float | str): ``'fro'`` (the 2-norm of the elements), 0 (count of non-zeros), 1, 2,
            ``inf``, ``-inf`` or any real number.
        axis (int | list[int] | None): one or two dims; None reduces over all dims.
        keepdim (bool): keep the reduced dims as size 1.
        name (str, optional): unused.

    Returns:
        Tensor: the norm (0-D for a full reduction). The gradient of a zero vector is 0.

    Example:
        >>> float(paddle.norm(paddle.to_tensor([3.0, 4.0])))
        5.0
    """
    op = "norm"
    x = float_arg(x, op)
    pv = _p_value(p, op)
    axes = _norm_axes(axis, x.ndim, op)
    if x.size == 0 and any(x.shape[a] == 0 for a in axes):
        raise ValueError(f"{op}: cannot reduce an empty tensor of shape {x.shape} over axis "
                         f"{list(axes)}")
    return apply(_pnorm_kernel, x, p=pv, axis=axes, keepdim=bool(keepdim))


def dist(x, y, p=2, name=None):
    """The p-norm of ``x - y`` (broadcast) over all elements.

    Args:
        x (Tensor): float tensor.
        y (Tensor): float tensor broadcastable with x.
        p (float): 0, inf, -inf or any real number.
        name (str, optional): unused.

    Returns:
        Tensor: 0-D. ``dist(x, x)`` has a zero (not NaN) gradient.
    """
    from .math import subtract

    op = "dist"
    x = float_arg(x, op, "x")
    y = float_arg(y, op, "y")
    try:
        np.broadcast_shapes(tuple(x.shape), tuple(y.shape))
    except ValueError:
        raise ValueError(f"{op}: x of shape {x.shape} and y of shape {y.shape} do not "
                         "broadcast") from None
    d = subtract(x, y)
    pv = _p_value(p, op)
    return apply(_pnorm_kernel, d, p=pv, axis=tuple(range(d.ndim)), keepdim=False)


def _cdist_grad(M, x, y, out, g, p, use_mm):
    xs, ys, dt = list(x.shape), list(y.shape), x.dtype
    if not M.tensor:  # float16/bfloat16 arrays in float32, as the forward
        x, y, out, g = _up(x), _up(y), _up(out), _up(g)
    # diff[..., i, j, :] = x[..., i, :] - y[..., j, :]
    diff = M.reshape(x, xs[:-1] + [1, xs[-1]]) - M.reshape(y, ys[:-2] + [1] + ys[-2:])
    kept = list(out.shape) + [1]
    gd = _pnorm_dir(M, diff, M.reshape(out, kept), p) * M.reshape(g, kept)
    gx, gy = M.sum(gd, axis=-2), -M.sum(gd, axis=-3)
    if M.tensor:
        return gx, gy
    return (_unbroadcast(gx, tuple(xs)).astype(dt, copy=False),
            _unbroadcast(gy, tuple(ys)).astype(dt, copy=False))


@op("cdist", uses_out=True, grad=_cdist_grad)
def _cdist_kernel(x, y, p, use_mm):
    xp = _xp(x)
    a, b = _up(x), _up(y)
    if use_mm:
        xn = xp.sum(a * a, axis=-1)[..., :, None]
        yn = xp.sum(b * b, axis=-1)[..., None, :]
        out = xp.sqrt(xp.maximum(xn + yn - 2 * xp.matmul(a, _mT(b)), 0))
    else:
        diff = a[..., :, None, :] - b[..., None, :, :]
        out = _pnorm_fwd(diff, p, -1)[..., 0]
    return out.astype(x.dtype, copy=False), GRAD


def cdist(x, y, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary", name=None):
    """p-norm distances between each pair of rows of x and y.

    Args:
        x (Tensor): ``[..., P, M]``.
        y (Tensor): ``[..., R, M]`` (batch dims broadcast with x's).
        p (float): the norm order, ``p >= 0``.
        compute_mode (str): ``'use_mm_for_euclid_dist_if_necessary'`` (matrix products for
            p == 2 when P or R exceeds 25), ``'use_mm_for_euclid_dist'`` or
            ``'donot_use_mm_for_euclid_dist'``.
        name (str, optional): unused.

    Returns:
        Tensor: ``[..., P, R]``.
    """
    op = "cdist"
    x = float_arg(x, op, "x")
    y = float_arg(y, op, "y")
    if x.ndim < 2 or y.ndim < 2:
        raise ValueError(f"{op}: x and y must be at least 2-D, got shapes {x.shape} and "
                         f"{y.shape}")
    if x.shape[-1] != y.shape[-1]:
        raise ValueError(f"{op}: x and y must have the same last dim, got shapes {x.shape} and "
                         f"{y.shape}")
    try:
        np.broadcast_shapes(tuple(x.shape[:-2]), tuple(y.shape[:-2]))
    except ValueError:
        raise ValueError(f"{op}: the batch dims of x {x.shape} and y {y.shape} do not "
                         "broadcast") from None
    pv = _p_value(p, op)
    if pv < 0:
        raise ValueError(f"{op}: p must be >= 0, got {p}")
    modes = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
             "donot_use_mm_for_euclid_dist")
    if compute_mode not in modes:
        raise ValueError(f"{op}: compute_mode must be one of {list(modes)}, got "
                         f"'{compute_mode}'")
    x, y = promote_pair(x, y, op)
    use_mm = pv == 2 and (compute_mode == "use_mm_for_euclid_dist" or (
        compute_mode == modes[0] and (x.shape[-2] > 25 or y.shape[-2] > 25)))
    return apply(_cdist_kernel, x, y, p=pv, use_mm=use_mm)


def _clip_grad(M, x, out, g, lo, hi):
    xd = M.value(x)
    return (g * M.mask((xd >= lo) & (xd <= hi), g),)


@op("clip", grad=_clip_grad)
def _clip_kernel(x, lo, hi):
    return _xp(x).clip(x, lo, hi), GRAD


def cov(x, rowvar=True, ddof=True, fweights=None, aweights=None, name=None):
    """Covariance matrix of the variables in x (as ``numpy.cov``).

    Args:
        x (Tensor): ``[N]`` or ``[V, N]`` (variables in rows when ``rowvar``).
        rowvar (bool): True when each row is a variable, False when each column is.
        ddof (bool): True divides by ``N - 1`` (unbiased), False by ``N``.
        fweights (Tensor, optional): ``[N]`` integer frequency weights.
        aweights (Tensor, optional): ``[N]`` non-negative observation weights.
        name (str, optional): unused.

    Returns:
        Tensor: ``[V, V]`` (0-D for a single variable).
    """
    from ._helpers import cast_to
    from .manipulation import reshape, squeeze, transpose, unsqueeze
    from .math import divide, multiply, subtract
    from .stat import sum as _sum

    op = "cov"
    x = tensor_arg(x, op)
    if x._data.dtype.kind in "biu":
        from ._helpers import as_float

        x = as_float(x)
    x = float_arg(x, op, complex_ok=True)
    if x.ndim > 2:
        raise ValueError(f"{op}: x must be 1-D or 2-D, got shape {x.shape}")
    xx = reshape(x, [1, -1]) if x.ndim == 1 else x
    if not rowvar and x.ndim == 2:
        xx = transpose(xx, [1, 0])
    n = xx.shape[1]
    w = None
    aw = None
    for arg, val in (("fweights", fweights), ("aweights", aweights)):
        if val is None:
            continue
        v = tensor_arg(val, op, arg)
        if v.ndim != 1 or v.shape[0] != n:
            raise ValueError(f"{op}: {arg} must be 1-D with {n} entries (one per observation), "
                             f"got shape {v.shape}")
        if arg == "fweights" and v._data.dtype.kind not in "iu":
            raise TypeError(f"{op}: fweights must be an integer Tensor, got {v.dtype}")
        if bool((v._data < 0).any()):
            raise ValueError(f"{op}: {arg} must be non-negative")
        # aweights may carry a gradient (as in Paddle); fweights are integer counts
        v = cast_to(v, x._data.dtype)
        if arg == "aweights":
            aw = v
        w = v if w is None else multiply(w, v)
    if w is None:
        w_sum = float(n)
        avg = _sum(xx, axis=1) * (1.0 / n)
    else:
        w_sum = _sum(w)
        avg = divide(_sum(multiply(xx, w), axis=1), w_sum)
    if not ddof:
        fact = w_sum
    elif aw is None:
        fact = w_sum - 1
    else:
        fact = w_sum - divide(_sum(multiply(w, aw)), w_sum)
    xm = subtract(xx, unsqueeze(avg, 1))
    xw = xm if w is None else multiply(xm, w)
    c = matmul(xw, _conj(xm), transpose_y=True)
    c = c * (1.0 / fact) if isinstance(fact, float) else divide(c, fact)
    if c.shape == [1, 1]:
        c = squeeze(c, [0, 1])
    return c


def corrcoef(x, rowvar=True, name=None):
    """Pearson correlation coefficients of the variables in x (as ``numpy.corrcoef``).

    Args:
        x (Tensor): ``[N]`` or ``[V, N]``.
        rowvar (bool): True when each row is a variable.
        name (str, optional): unused.

    Returns:
        Tensor: ``[V, V]`` with entries clipped to [-1, 1] (0-D for a single variable).
    """
    from .manipulation import unsqueeze
    from .math import divide, sqrt

    op = "corrcoef"
    x = tensor_arg(x, op)
    if x.ndim > 2:
        raise ValueError(f"{op}: x must be 1-D or 2-D, got shape {x.shape}")
    c = cov(x, rowvar)
    if c.ndim == 0:
        return divide(c, c)
    d = sqrt(einsum("ii->i", c))
    c = divide(divide(c, unsqueeze(d, 1)), unsqueeze(d, 0))
    if c._data.dtype.kind == "c":
        return c
    return apply(_clip_kernel, c, lo=-1.0, hi=1.0)


# --------------------------------------------------------------------------- inverse, det, solve
def _inv_raw(a, op):
    xp = _xp(a)
    try:
        return xp.linalg.inv(a)
    except np.linalg.LinAlgError as e:
        raise ValueError(f"{op}: the input matrix is not invertible ({e}); shape "
                         f"{list(a.shape)}") from None


def _inverse_grad(M, x, out, g):
    # d inv(A) = -inv(A)^H g inv(A)^H
    co = M.conj(out)
    return (-_mm(M, _mm(M, co, g, True, False), co, False, True),)


@op("inverse", saves=(), uses_out=True, grad=_inverse_grad)
def _inverse_kernel(x):
    inv = _inv_raw(_up(x), "inverse")
    if _xp(x) is not np and not bool(_xp(x).isfinite(inv).all()):
        raise ValueError(f"inverse: the input matrix is not invertible; shape {list(x.shape)}")
    return inv.astype(x.dtype, copy=False), GRAD


@op("inverse", saves=(), uses_out=True, grad=_inverse_grad)
def _inverse_or_nan_kernel(x):
    """inv(x), NaN for a singular matrix (for gradients that are undefined there)."""
    xp = _xp(x)
    with np.errstate(all="ignore"):
        try:
            inv = xp.linalg.inv(_up(x))
        except np.linalg.LinAlgError:
            inv = xp.full(x.shape, np.nan, dtype=_up(x).dtype)
    return inv.astype(x.dtype, copy=False), GRAD


def inverse(x, name=None):
    """Inverse of square matrices (``paddle.linalg.inv``).

    Args:
        x (Tensor): ``[..., M, M]`` float or complex.
        name (str, optional): unused.

    Returns:
        Tensor: ``[..., M, M]``. A singular matrix raises ValueError.
    """
    x = _matrix_arg(x, "inverse", square=True)
    return apply(_inverse_kernel, x)


def _adjugate_t(a):
    """Transposed adjugate det(A) * A^{-T}, computed from the SVD so that it is also right for
    singular matrices (where det(A) * inv(A)^T is undefined but the gradient is not)."""
    xp = _xp(a)
    u, s, vh = xp.linalg.svd(a)
    n = s.shape[-1]
    # prod_{j != i} s_j for every i without dividing by s_i
    idx = np.array([[j for j in range(n) if j != i] for i in range(n)], dtype=np.int64)
    sp = xp.prod(s[..., idx], axis=-1) if n > 1 else xp.ones_like(s)
    du = xp.linalg.det(u)
    dv = xp.linalg.det(vh)
    # adj(A) = det(U) det(V) V diag(sp) U^H ; we need adj(A)^T
    adj = (du * dv)[..., None, None] * (_mH(vh) @ (sp[..., :, None] * _mH(u)))
    return _mT(adj)


def _det_grad(M, x, out, g):
    # d det(A) = det(A) inv(A)^T, the transposed adjugate
    shape = list(out.shape) + [1, 1]
    if bool((M.value(out) != 0).all()):
        cof = M.reshape(out, shape) * _mT_m(M, M.op(_inverse_kernel, x))
    else:
        # singular: the adjugate from the SVD (finite there; a constant of the rule)
        xd = M.value(x)
        cof = M.const(_adjugate_t(_up(xd)).astype(xd.dtype, copy=False))
    return (M.conj(cof) * M.reshape(g, shape),)


@op("det", uses_out=True, grad=_det_grad)
def _det_kernel(x):
    xp = _xp(x)
    return xp.asarray(xp.linalg.det(_up(x))).astype(x.dtype, copy=False), GRAD


def det(x, name=None):
    """Determinant of square matrices.

    Args:
        x (Tensor): ``[..., M, M]``.
        name (str, optional): unused.

    Returns:
        Tensor: ``[...]`` (0-D for one matrix). Its gradient is det(A)·inv(A)ᵀ (the transposed
        adjugate, which stays finite for singular matrices).
    """
    x = _matrix_arg(x, "det", square=True)
    return apply(_det_kernel, x)


def _slogdet_grad(M, x, out, g):
    # d log|det A| / dA = inv(A)^-H; a singular matrix has no finite gradient (NaN)
    gl = g[1]
    inv = M.op(_inverse_or_nan_kernel, x)
    return (M.conj(_mT_m(M, inv)) * M.reshape(gl, list(gl.shape) + [1, 1]),)


@op("slogdet", saves=(0,), grad=_slogdet_grad)
def _slogdet_kernel(x):
    xp = _xp(x)
    sign, logabs = xp.linalg.slogdet(_up(x))
    out = xp.stack([xp.asarray(sign).astype(logabs.dtype), xp.asarray(logabs)])
    return out.astype(x.dtype, copy=False), GRAD


def slogdet(x, name=None):
    """Sign and natural log of the absolute determinant.

    Args:
        x (Tensor): ``[..., M, M]``.
        name (str, optional): unused.

    Returns:
        Tensor: ``[2, ...]``: ``out[0]`` is the sign, ``out[1]`` is log|det(x)|.
    """
    x = _matrix_arg(x, "slogdet", square=True)
    return apply(_slogdet_kernel, x)


def _solve_grad(M, x, y, out, g, vec):
    # A out = b: gb = A^-H g solves the adjoint system, gA = -gb out^H
    gb = M.op(_solve_kernel, M.conj(_mT_m(M, x)), g, vec=vec)
    co = M.conj(out)
    if vec:
        n = co.shape[-1]
        ga = -(M.reshape(gb, list(gb.shape) + [1]) * M.reshape(co, list(co.shape[:-1]) + [1, n]))
    else:
        ga = -_mm(M, gb, co, False, True)
    return _fit(M, ga, x), _fit(M, gb, y)


@op("solve", uses_out=True, grad=_solve_grad)
def _solve_kernel(x, y, vec):
    xp = _xp(x)
    dt = x.dtype
    a, b = _up(x), _up(y)
    if vec:
        b = b[..., None]
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    ab = xp.broadcast_to(a, batch + a.shape[-2:])
    bb = xp.broadcast_to(b, batch + b.shape[-2:])
    try:
        out = xp.linalg.solve(ab, bb)
    except np.linalg.LinAlgError as e:
        raise ValueError(f"solve: the matrix x is not invertible ({e}); x has shape "
                         f"{list(x.shape)}") from None
    if xp is not np and not bool(xp.isfinite(out).all()) and bool(xp.isfinite(ab).all()) \
            and bool(xp.isfinite(bb).all()):
        # CuPy's solver returns inf/NaN for a singular matrix instead of raising
        raise ValueError(f"solve: the matrix x is not invertible (singular matrix); x has "
                         f"shape {list(x.shape)}")

    res = out[..., 0] if vec else out
    return res.astype(dt, copy=False), GRAD


def solve(x, y, name=None):
    """Solve ``x @ out = y`` for out.

    Args:
        x (Tensor): ``[..., M, M]`` square matrices.
        y (Tensor): ``[..., M, K]`` (batch dims broadcast with x's) or a vector ``[M]``.
        name (str, optional): unused.

    Returns:
        Tensor: the solution, shaped like the broadcast y.
    """
    op = "solve"
    x = _matrix_arg(x, op, "x", square=True)
    y = float_arg(y, op, "y", complex_ok=True)
    x, y = _same_float(x, y, op)
    vec = y.ndim == 1
    if y.ndim == 0 or y.shape[-1 if vec else -2] != x.shape[-1]:
        raise ValueError(f"solve: y's rows must match x's size: x has shape {x.shape}, y has "
                         f"shape {y.shape}")
    if not vec:
        try:
            np.broadcast_shapes(tuple(x.shape[:-2]), tuple(y.shape[:-2]))
        except ValueError:
            raise ValueError(f"solve: the batch dims of x {x.shape} and y {y.shape} do not "
                             "broadcast") from None
    return apply(_solve_kernel, x, y, vec=vec)


def _tri_matrix(a, upper, unit):
    xp = _xp(a)
    t = xp.triu(a) if upper else xp.tril(a)
    if unit:
        n = a.shape[-1]
        t = t * (1 - xp.eye(n, dtype=a.dtype)) + xp.eye(n, dtype=a.dtype)
    return t


def _tri_mask(shape, upper, unit, xp, dtype):
    n = shape[-1]
    m = xp.triu(xp.ones((n, n), dtype=dtype)) if upper else xp.tril(xp.ones((n, n), dtype=dtype))
    if unit:
        m = m * (1 - xp.eye(n, dtype=dtype))
    return m


# fused (no higher-order rule): LAPACK-based backward written on the forward's factors
@op("triangular_solve")
def _trisolve_kernel(x, y, upper, transpose, unit):
    xp = _xp(x)
    dt = x.dtype
    t = _tri_matrix(_up(x), upper, unit)
    b = _up(y)
    batch = np.broadcast_shapes(t.shape[:-2], b.shape[:-2])
    tb = xp.broadcast_to(t, batch + t.shape[-2:])
    opt = _mT(tb) if transpose else tb
    bb = xp.broadcast_to(b, batch + b.shape[-2:])
    try:
        out = xp.linalg.solve(opt, bb)
    except np.linalg.LinAlgError as e:
        raise ValueError(f"triangular_solve: the triangular matrix x is singular ({e}); shape "
                         f"{list(x.shape)}") from None

    def bw(g):
        gb = xp.linalg.solve(_mH(opt), _up(g))
        gop = -(gb @ _mH(out))
        gt = _mT(gop) if transpose else gop
        gt = gt * _tri_mask(t.shape, upper, unit, xp, gt.dtype)
        return (_unbroadcast(gt, t.shape).astype(dt, copy=False),
                _unbroadcast(gb, b.shape).astype(dt, copy=False))

    return out.astype(dt, copy=False), bw


def triangular_solve(x, y, upper=True, transpose=False, unitriangular=False, name=None):
    """Solve ``op(x) @ out = y`` with x triangular.

    Args:
        x (Tensor): ``[..., M, M]``; only its upper (or lower) triangle is read.
        y (Tensor): ``[..., M, K]`` (batch dims broadcast).
        upper (bool): use the upper triangle of x (else the lower).
        transpose (bool): solve with ``x^T``.
        unitriangular (bool): assume a unit diagonal (the stored diagonal is ignored).
        name (str, optional): unused.

    Returns:
        Tensor: ``[..., M, K]``.
    """
    op = "triangular_solve"
    x = _matrix_arg(x, op, "x", square=True)
    y = _matrix_arg(y, op, "y")
    x, y = _same_float(x, y, op)
    if y.shape[-2] != x.shape[-1]:
        raise ValueError(f"{op}: y's rows must match x's size: x has shape {x.shape}, y has "
                         f"shape {y.shape}")
    try:
        np.broadcast_shapes(tuple(x.shape[:-2]), tuple(y.shape[:-2]))
    except ValueError:
        raise ValueError(f"{op}: the batch dims of x {x.shape} and y {y.shape} do not "
                         "broadcast") from None
    return apply(_trisolve_kernel, x, y, upper=bool(upper), transpose=bool(transpose),
                 unit=bool(unitriangular))


def cholesky_solve(x, y, upper=False, name=None):
    """Solve ``A @ out = x`` given the Cholesky factor y of A.

    Args:
        x (Tensor): the right-hand side ``[..., M, K]``.
        y (Tensor): the Cholesky factor ``[..., M, M]`` (lower: A = y yᵀ; upper: A = yᵀ y).
        upper (bool): whether y is upper triangular.
        name (str, optional): unused.

    Returns:
        Tensor: ``[..., M, K]``.
    """
    op = "cholesky_solve"
    x = _matrix_arg(x, op, "x")
    y = _matrix_arg(y, op, "y", square=True)
    if x.shape[-2] != y.shape[-1]:
        raise ValueError(f"{op}: x's rows must match y's size: x has shape {x.shape}, y has "
                         f"shape {y.shape}")
    if upper:
        z = triangular_solve(y, x, upper=True, transpose=True)
        return triangular_solve(y, z, upper=True)
    z = triangular_solve(y, x, upper=False)
    return triangular_solve(y, z, upper=False, transpose=True)


# --------------------------------------------------------------------------- decompositions
# fused (no higher-order rule): LAPACK-based backward written on the forward's factors
@op("cholesky")
def _cholesky_kernel(x, upper):
    xp = _xp(x)
    dt = x.dtype
    a = _up(x)
    try:
        low = xp.linalg.cholesky(a)
    except np.linalg.LinAlgError as e:
        raise ValueError(f"cholesky: the decomposition failed ({e}); the input of shape "
                         f"{list(x.shape)} must be symmetric positive definite") from None
    if xp is not np and not bool(xp.isfinite(low).all()):
        raise ValueError(f"cholesky: the input of shape {list(x.shape)} must be symmetric "
                         "positive definite")

    def bw(g):
        gl = _mH(_up(g)) if upper else _up(g)
        phi = xp.tril(_mH(low) @ gl)
        phi = phi - 0.5 * _diag_embed(_diagonal(phi))
        # S = L^{-H} phi L^{-1}, then the symmetric part (the input is symmetric)
        s = _solve(_mH(low), _rsolve(phi, low))
        return (0.5 * (s + _mH(s))).astype(dt, copy=False),

    out = _mH(low) if upper else low
    return out.astype(dt, copy=False), bw


def cholesky(x, upper=False, name=None):
    """Cholesky factor of symmetric (Hermitian) positive-definite matrices.

    Args:
        x (Tensor): ``[..., M, M]``.
        upper (bool): return the upper factor U (A = Uᴴ U) instead of the lower L (A = L Lᴴ).
        name (str, optional): unused.

    Returns:
        Tensor: ``[..., M, M]``.
    """
    x = _matrix_arg(x, "cholesky", square=True)
    return apply(_cholesky_kernel, x, upper=bool(upper))


def _qr_backward(gq, gr, q, r):
    """Gradient of A = QR (reduced, m >= n) for real and complex inputs."""
    xp = _xp(q)
    m = gr @ _mH(r) - _mH(q) @ gq
    # copy the upper triangle onto the lower one, Hermitian style
    b = xp.triu(m) + _mH(xp.triu(m, 1))
    if b.dtype.kind == "c":
        d = _diagonal(b)
        b = b - _diag_embed(d) + _diag_embed(d.real.astype(b.dtype))
    return _rsolve(gq + q @ b, _mH(r))


# fused (no higher-order rule): LAPACK-based backward written on the forward's factors
@op("qr")
def _qr_kernel(x, mode):
    xp = _xp(x)
    dt = x.dtype
    a = _up(x)
    m, n = a.shape[-2:]
    k = min(m, n)
    if mode == "complete":
        q, r = xp.linalg.qr(a, mode="complete")
    else:
        q, r = xp.linalg.qr(a, mode="reduced")

    def bw(*grads):
        if mode == "r":
            gq, gr = None, grads[0]
        else:
            gq, gr = grads
        if mode == "complete" and m > n:
            raise RuntimeError(f"qr: the gradient is not defined for mode='complete' when the "
                               f"matrix has more rows than columns ({m} > {n})")
        gq = xp.zeros_like(q) if gq is None else _up(gq)
        gr = xp.zeros_like(r) if gr is None else _up(gr)
        if m >= n:
            ga = _qr_backward(gq, gr, q, r)
        else:
            # A = Q [R1 R2]: R2 = Q^H A2 feeds back into the gradient of Q
            r1 = r[..., :, :k]
            gr1, gr2 = gr[..., :, :k], gr[..., :, k:]
            a2 = a[..., :, k:]
            ga1 = _qr_backward(gq + a2 @ _mH(gr2), gr1, q, r1)
            ga2 = q @ gr2
            ga = xp.concatenate([ga1, ga2], axis=-1)
        return (ga.astype(dt, copy=False),)

    if mode == "r":
        return r.astype(dt, copy=False), bw
    return (q.astype(dt, copy=False), r.astype(dt, copy=False)), bw


def qr(x, mode="reduced", name=None):
    """QR decomposition.

    Args:
        x (Tensor): ``[..., M, N]``.
        mode (str): ``'reduced'`` (Q ``[..., M, K]``, R ``[..., K, N]``, K = min(M, N)),
            ``'complete'`` (Q ``[..., M, M]``, R ``[..., M, N]``) or ``'r'`` (R only).
        name (str, optional): unused.

    Returns:
        tuple[Tensor, Tensor] | Tensor: (Q, R), or R for ``mode='r'``.
    """
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr: mode must be 'reduced', 'complete' or 'r', got '{mode}'")
    x = _matrix_arg(x, "qr")
    return apply(_qr_kernel, x, mode=mode)


def _svd_backward(u, s, vh, gu, gs, gvh):
    """Gradient of A = U diag(S) Vh (thin factors) for real inputs (and complex without the
    phase term); see Townsend, "Differentiating the singular value decomposition" (2016)."""
    xp = _xp(s)
    m, n = u.shape[-2], vh.shape[-1]
    k = s.shape[-1]
    v = _mH(vh)
    sd = s.astype(u.dtype)
    if gu is None and gvh is None:
        return u @ (_diag_embed(gs.astype(u.dtype)) if gs is not None else 0) @ vh
    s2 = s * s
    e = s2[..., None, :] - s2[..., :, None]
    eye = xp.eye(k, dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        f = xp.where(eye, 0, 1 / xp.where(eye, 1, e)).astype(u.dtype)
    inner = xp.zeros(s.shape[:-1] + (k, k), dtype=u.dtype)
    if gu is not None:
        j = _mH(u) @ gu
        inner = inner + (f * (j - _mH(j))) * sd[..., None, :]
    if gvh is not None:
        gv = _mH(gvh)
        kk = _mH(v) @ gv
        inner = inner + sd[..., :, None] * (f * (kk - _mH(kk)))
    if gs is not None:
        inner = inner + _diag_embed(gs.astype(u.dtype))
    ga = u @ inner @ vh
    with np.errstate(divide="ignore", invalid="ignore"):
        sinv = xp.where(s == 0, 0, 1 / xp.where(s == 0, 1, s)).astype(u.dtype)
    if gu is not None and m > k:
        gus = gu * sinv[..., None, :]
        ga = ga + (gus - u @ (_mH(u) @ gus)) @ vh
    if gvh is not None and n > k:
        gvs = _mH(gvh) * sinv[..., None, :]
        ga = ga + u @ _mH(gvs - v @ (_mH(v) @ gvs))
    return ga


# fused (no higher-order rule): LAPACK-based backward written on the forward's factors
@op("svd")
def _svd_kernel(x, full):
    xp = _xp(x)
    dt = x.dtype
    a = _up(x)
    m, n = a.shape[-2:]
    k = min(m, n)
    u, s, vh = xp.linalg.svd(a, full_matrices=full)
    real_dt = s.dtype

    def bw(gu, gs, gvh):
        gu = None if gu is None else _up(gu)
        gvh = None if gvh is None else _up(gvh)
        if full and m != n:
            # only the first k singular vectors are determined by A
            extra = []
            if gu is not None and m > k:
                extra.append(gu[..., :, k:])
            if gvh is not None and n > k:
                extra.append(gvh[..., k:, :])
            if any(bool(xp.any(t != 0)) for t in extra):
                raise RuntimeError("svd: the gradient is not defined through the extra singular "
                                   "vectors of full_matrices=True; use full_matrices=False")
            gu = None if gu is None else gu[..., :, :k]
            gvh = None if gvh is None else gvh[..., :k, :]
        uk, vhk = u[..., :, :k], vh[..., :k, :]
        ga = _svd_backward(uk, s, vhk, gu, None if gs is None else _up(gs), gvh)
        return (ga.astype(dt, copy=False),)

    return (u.astype(dt, copy=False), s.astype(real_dt if dt.kind == "c" else dt, copy=False),
            vh.astype(dt, copy=False)), bw


def svd(x, full_matrices=False, name=None):
    """Singular value decomposition ``x = U diag(S) VH``.

    Args:
        x (Tensor): ``[..., M, N]``.
        full_matrices (bool): return square U ``[..., M, M]`` and VH ``[..., N, N]`` instead
            of the thin ``[..., M, K]`` and ``[..., K, N]`` (K = min(M, N)).
        name (str, optional): unused.

    Returns:
        tuple[Tensor, Tensor, Tensor]: (U, S, VH), S descending ``[..., K]``.
    """
    x = _matrix_arg(x, "svd")
    return apply(_svd_kernel, x, full=bool(full_matrices))


def _eigh_raw(a, uplo):
    xp = _xp(a)
    return xp.linalg.eigh(a, UPLO=uplo)


def _eigh_backward(w, v, gw, gv):
    xp = _xp(v)
    inner = xp.zeros(v.shape, dtype=v.dtype)
    if gv is not None:
        k = w.shape[-1]
        e = w[..., None, :] - w[..., :, None]
        eye = xp.eye(k, dtype=bool)
        with np.errstate(divide="ignore", invalid="ignore"):
            f = xp.where(eye, 0, 1 / xp.where(eye, 1, e))
        inner = inner + f * (_mH(v) @ gv)
    if gw is not None:
        inner = inner + _diag_embed(gw.astype(v.dtype))
    ga = v @ inner @ _mH(v)
    return 0.5 * (ga + _mH(ga))


# fused (no higher-order rule): LAPACK-based backward written on the forward's factors
@op("eigh")
def _eigh_kernel(x, uplo):
    dt = x.dtype
    w, v = _eigh_raw(_up(x), uplo)
    wdt = w.dtype if dt.kind == "c" else dt

    def bw(gw, gv):
        ga = _eigh_backward(w, v, None if gw is None else _up(gw),
                            None if gv is None else _up(gv))
        return (ga.astype(dt, copy=False),)

    return (w.astype(wdt, copy=False), v.astype(dt, copy=False)), bw


def _uplo(uplo, op):
    if uplo not in ("L", "U"):
        raise ValueError(f"{op}: UPLO must be 'L' or 'U', got '{uplo}'")
    return uplo


def eigh(x, UPLO="L", name=None):  # noqa: N803  (Paddle's argument name)
    """Eigenvalues (ascending) and eigenvectors of Hermitian/symmetric matrices.

    Args:
        x (Tensor): ``[..., M, M]``; only the triangle named by UPLO is read.
        UPLO (str): ``'L'`` (lower triangle) or ``'U'``.
        name (str, optional): unused.

    Returns:
        tuple[Tensor, Tensor]: eigenvalues ``[..., M]`` (real) and eigenvectors ``[..., M, M]``
        (in columns).
    """
    x = _matrix_arg(x, "eigh", square=True)
    return apply(_eigh_kernel, x, uplo=_uplo(UPLO, "eigh"))


# fused (no higher-order rule): LAPACK-based backward written on the forward's factors
@op("eigvalsh")
def _eigvalsh_kernel(x, uplo):
    dt = x.dtype
    w, v = _eigh_raw(_up(x), uplo)
    wdt = w.dtype if dt.kind == "c" else dt

    def bw(gw):
        return (_eigh_backward(w, v, _up(gw), None).astype(dt, copy=False),)

    return w.astype(wdt, copy=False), bw


def eigvalsh(x, UPLO="L", name=None):  # noqa: N803
    """Eigenvalues (ascending) of Hermitian/symmetric matrices.

    Args:
        x (Tensor): ``[..., M, M]``.
        UPLO (str): ``'L'`` or ``'U'``: the triangle that is read.
        name (str, optional): unused.

    Returns:
        Tensor: ``[..., M]`` real eigenvalues.
    """
    x = _matrix_arg(x, "eigvalsh", square=True)
    return apply(_eigvalsh_kernel, x, uplo=_uplo(UPLO, "eigvalsh"))


def _eig_raw(a):
    """General eigendecomposition; CuPy has none, so GPU arrays take a trip through the host."""
    xp = _xp(a)
    if xp is np:
        w, v = np.linalg.eig(a)
    else:
        w, v = np.linalg.eig(backend.to_numpy(a))
        w, v = xp.asarray(w), xp.asarray(v)
    cdt = np.result_type(a.dtype, np.complex64)
    return w.astype(cdt, copy=False), v.astype(cdt, copy=False)


# fused (no higher-order rule): LAPACK-based backward written on the forward's factors
@op("eig")
def _eig_kernel(x):
    xp = _xp(x)
    dt = x.dtype
    w, v = _eig_raw(_up(x))

    def bw(gw, gv):
        vh = _mH(v)
        k = w.shape[-1]
        if gv is not None:
            vhgv = vh @ gv
            re = _diagonal(vhgv).real
            ga = vhgv - vh @ (v * re[..., None, :].astype(v.dtype))
            wc = w.conj()
            e = wc[..., None, :] - wc[..., :, None]
            eye = xp.eye(k, dtype=bool)
            ga = ga / xp.where(eye, 1, e)
            if gw is not None:
                ga = ga - _diag_embed(_diagonal(ga)) + _diag_embed(gw)
        else:
            ga = _diag_embed(gw)
        ga = xp.linalg.solve(vh, ga @ vh)
        if dt.kind != "c":
            ga = ga.real
        return (ga.astype(dt, copy=False),)

    return (w, v), bw


def eig(x, name=None):
    """Eigenvalues and right eigenvectors of general square matrices.

    Args:
        x (Tensor): ``[..., M, M]`` float or complex.
        name (str, optional): unused.

    Returns:
        tuple[Tensor, Tensor]: complex eigenvalues ``[..., M]`` and unit-norm eigenvectors
        ``[..., M, M]`` (in columns).
    """
    x = _matrix_arg(x, "eig", square=True)
    return apply(_eig_kernel, x)


def eigvals(x, name=None):
    """Eigenvalues of general square matrices (not differentiable, as in Paddle).

    Args:
        x (Tensor): ``[..., M, M]``.
        name (str, optional): unused.

    Returns:
        Tensor: complex ``[..., M]``.
    """
    x = _matrix_arg(x, "eigvals", square=True)
    w, _ = _eig_raw(_up(x._data))
    return _wrap(w)


def _lu_factor(a, pivot):
    """Batched LU with partial pivoting (LAPACK getrf semantics): returns packed LU, 1-based
    int32 pivots and int32 infos. The loop runs over columns; each step is vectorised over the
    batch and the trailing block."""
    xp = _xp(a)
    lu = a.copy()
    shape = lu.shape
    m, n = shape[-2:]
    k = min(m, n)
    lu = lu.reshape((-1, m, n))
    nb = lu.shape[0]
    piv = xp.zeros((nb, k), dtype=np.int32)
    info = xp.zeros(nb, dtype=np.int32)
    rows = xp.arange(nb)
    for j in range(k):
        if pivot:
            p = xp.argmax(xp.abs(lu[:, j:, j]), axis=1) + j
            piv[:, j] = (p + 1).astype(np.int32)
            rj = lu[rows, j, :].copy()
            lu[rows, j, :] = lu[rows, p, :]
            lu[rows, p, :] = rj
        else:
            piv[:, j] = j + 1
        d = lu[:, j, j]
        zero = d == 0
        info = xp.where(zero & (info == 0), j + 1, info).astype(np.int32)
        dsafe = xp.where(zero, 1, d)
        lu[:, j + 1:, j] = xp.where(zero[:, None], lu[:, j + 1:, j], lu[:, j + 1:, j]
                                    / dsafe[:, None])
        lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j, None] * lu[:, j, None, j + 1:]
    return lu.reshape(shape), piv.reshape(shape[:-2] + (k,)), info.reshape(shape[:-2])


def _perm_from_pivots(piv, m):
    """Row permutation ``perm`` with ``(P^T A)[i] = A[perm[i]]`` from 1-based pivots."""
    xp = _xp(piv)
    batch = piv.shape[:-1]
    p = piv.reshape((-1, piv.shape[-1])).astype(np.int64) - 1
    nb = p.shape[0]
    perm = xp.broadcast_to(xp.arange(m), (nb, m)).copy()
    rows = xp.arange(nb)
    for j in range(p.shape[1]):
        a = perm[:, j].copy()
        perm[:, j] = perm[rows, p[:, j]]
        perm[rows, p[:, j]] = a
    return perm.reshape(batch + (m,))


def _perm_matrix(perm, dtype):
    xp = _xp(perm)
    m = perm.shape[-1]
    # P[perm[i], i] = 1
    return (perm[..., None, :] == xp.arange(m)[:, None]).astype(dtype)


def _lu_split(lu):
    xp = _xp(lu)
    m, n = lu.shape[-2:]
    k = min(m, n)
    low = xp.tril(lu[..., :, :k], -1) + xp.eye(m, k, dtype=lu.dtype)
    upp = xp.triu(lu[..., :k, :])
    return low, upp


def _lu_backward(low, upp, pm, glu):
    """Gradient of the packed LU factor of A = P L U (square, tall and wide)."""
    xp = _xp(low)
    m, k = low.shape[-2:]
    n = upp.shape[-1]
    gl = xp.tril(glu[..., :, :k], -1)
    gu = xp.triu(glu[..., :k, :])
    if m == n:
        phi = xp.tril(_mH(low) @ gl, -1) + xp.triu(gu @ _mH(upp))
        gb = _solve(_mH(low), _rsolve(phi, _mH(upp)))
    elif m > n:
        l1, l2 = low[..., :k, :], low[..., k:, :]
        gl1, gl2 = gl[..., :k, :], gl[..., k:, :]
        ga2 = _rsolve(gl2, _mH(upp))
        gu_eff = gu - _mH(l2) @ ga2
        phi = xp.tril(_mH(l1) @ gl1, -1) + xp.triu(gu_eff @ _mH(upp))
        ga1 = _solve(_mH(l1), _rsolve(phi, _mH(upp)))
        gb = xp.concatenate([ga1, ga2], axis=-2)
    else:
        u1, u2 = upp[..., :, :k], upp[..., :, k:]
        gu1, gu2 = gu[..., :, :k], gu[..., :, k:]
        ga2 = _solve(_mH(low), gu2)
        gl_eff = gl - ga2 @ _mH(u2)
        phi = xp.tril(_mH(low) @ gl_eff, -1) + xp.triu(gu1 @ _mH(u1))
        ga1 = _solve(_mH(low), _rsolve(phi, _mH(u1)))
        gb = xp.concatenate([ga1, ga2], axis=-1)
    return pm @ gb


# fused (no higher-order rule): LAPACK-based backward written on the forward's factors
@op("lu")
def _lu_kernel(x, pivot, infos):
    dt = x.dtype
    a = _up(x)
    lu, piv, info = _lu_factor(a, pivot)
    m = a.shape[-2]

    def bw(glu, *_):
        low, upp = _lu_split(lu)
        pm = _perm_matrix(_perm_from_pivots(piv, m), low.dtype)
        return (_lu_backward(low, upp, pm, _up(glu)).astype(dt, copy=False),)

    outs = (lu.astype(dt, copy=False), piv)
    return (outs + (info,) if infos else outs), bw


def lu(x, pivot=True, get_infos=False, name=None):
    """LU decomposition with partial pivoting, ``x = P L U`` (LAPACK getrf layout).

    Args:
        x (Tensor): ``[..., M, N]``.
        pivot (bool): use partial pivoting (False factors without row exchanges).
        get_infos (bool): also return the int32 status per matrix (k > 0: ``U[k-1, k-1]`` is 0).
        name (str, optional): unused.

    Returns:
        tuple: (LU, pivots) or (LU, pivots, infos): L (unit diagonal, not stored) and U packed in
        one ``[..., M, N]`` tensor, and 1-based int32 pivots ``[..., min(M, N)]``.
    """
    x = _matrix_arg(x, "lu")
    return apply(_lu_kernel, x, pivot=bool(pivot), infos=bool(get_infos))


@op("lu_unpack", saves=())
def _lu_unpack_kernel(x, y, unpack_ludata, unpack_pivots):
    xp = _xp(x)
    m, n = x.shape[-2:]
    k = min(m, n)
    if unpack_ludata:
        low, upp = _lu_split(x)
    else:
        low = xp.zeros((0,), dtype=x.dtype)
        upp = xp.zeros((0,), dtype=x.dtype)
    if unpack_pivots:
        pm = _perm_matrix(_perm_from_pivots(y, m), x.dtype)
    else:
        pm = xp.zeros((0,), dtype=x.dtype)

    def bw(gp, gl, gu):
        g = xp.zeros_like(x)
        if unpack_ludata:
            if gl is not None:
                g[..., :, :k] += xp.tril(gl, -1)
            if gu is not None:
                g[..., :k, :] += xp.triu(gu)
        return g, None

    return (pm, low, upp), bw


def lu_unpack(x, y, unpack_ludata=True, unpack_pivots=True, name=None):
    """Unpack the output of :func:`lu` into P, L and U with ``A = P @ L @ U``.

    Args:
        x (Tensor): the packed LU ``[..., M, N]``.
        y (Tensor): the int32 1-based pivots ``[..., min(M, N)]``.
        unpack_ludata (bool): compute L and U (else they are empty).
        unpack_pivots (bool): compute P (else it is empty).
        name (str, optional): unused.

    Returns:
        tuple[Tensor, Tensor, Tensor]: P ``[..., M, M]``, L ``[..., M, K]``, U ``[..., K, N]``.
    """
    op = "lu_unpack"
    x = _matrix_arg(x, op, "x")
    y = tensor_arg(y, op, "y")
    if y._data.dtype.kind not in "iu":
        raise TypeError(f"{op}: y (the pivots) must be an integer Tensor, got {y.dtype}")
    k = min(x.shape[-2:])
    if y.shape != x.shape[:-2] + [k]:
        raise ValueError(f"{op}: the pivots must have shape {x.shape[:-2] + [k]} for x of shape "
                         f"{x.shape}, got {y.shape}")
    return apply(_lu_unpack_kernel, x, y, unpack_ludata=bool(unpack_ludata),
                 unpack_pivots=bool(unpack_pivots))


# fused (no higher-order rule): the backward replays the forward's reflectors
@op("householder_product")
def _householder_kernel(x, tau):
    xp = _xp(x)
    dt = x.dtype
    a, t = _up(x), _up(tau)
    m, n = a.shape[-2:]
    k = t.shape[-1]
    eye = xp.eye(m, dtype=a.dtype)
    vs = []
    for i in range(k):
        v = a[..., :, i].copy()
        v[..., :i] = 0
        v[..., i] = 1
        vs.append(v)
    hs = [eye - t[..., i, None, None] * (vs[i][..., :, None] * _cj(vs[i])[..., None, :])
          for i in range(k)]
    prefix = [xp.broadcast_to(eye, a.shape[:-2] + (m, m))]
    for h in hs:
        prefix.append(prefix[-1] @ h)
    q = prefix[-1][..., :, :n]

    def bw(g):
        gfull = xp.zeros(a.shape[:-2] + (m, m), dtype=a.dtype)
        gfull[..., :, :n] = _up(g)
        ga = xp.zeros_like(a)
        gt = xp.zeros_like(t)
        suffix = xp.broadcast_to(eye, a.shape[:-2] + (m, m))  # H_{i+1} ... H_k
        for i in range(k - 1, -1, -1):
            gh = _mH(prefix[i]) @ gfull @ _mH(suffix)
            v = vs[i]
            ti = t[..., i]
            # H = I - tau v v^H
            ghv = (gh @ v[..., :, None])[..., 0]
            ghhv = (_mH(gh) @ v[..., :, None])[..., 0]
            vgv = (_cj(v)[..., None, :] @ ghv[..., :, None])[..., 0, 0]
            gt[..., i] = -_cj(vgv)
            gv = -(_cj(ti)[..., None] * ghv + ti[..., None] * ghhv)
            ga[..., i + 1:, i] = gv[..., i + 1:] if dt.kind != "c" else _cj(gv[..., i + 1:])
            suffix = hs[i] @ suffix
        if dt.kind != "c":
            gt = gt.real if gt.dtype.kind == "c" else gt
        return ga.astype(dt, copy=False), gt.astype(dt, copy=False)

    return q.astype(dt, copy=False), bw


def householder_product(x, tau, name=None):
    """Product of Householder reflectors ``H_1 ... H_k`` (LAPACK orgqr), first N columns.

    Args:
        x (Tensor): ``[..., M, N]``; column i below the diagonal holds reflector i's vector.
        tau (Tensor): ``[..., K]`` scaling factors, K <= N.
        name (str, optional): unused.

    Returns:
        Tensor: ``[..., M, N]``.
    """
    op = "householder_product"
    x = _matrix_arg(x, op, "x")
    tau = float_arg(tau, op, "tau", complex_ok=True)
    m, n = x.shape[-2:]
    if m < n:
        raise ValueError(f"{op}: x must have at least as many rows as columns, got shape "
                         f"{x.shape}")
    if tau.ndim != x.ndim - 1 or tau.shape[:-1] != x.shape[:-2] or tau.shape[-1] > n:
        raise ValueError(f"{op}: tau must have shape {x.shape[:-2] + ['K']} with K <= {n}, got "
                         f"{tau.shape}")
    x, tau = _same_float(x, tau, op)
    return apply(_householder_kernel, x, tau)


# --------------------------------------------------------------------------- pinv, lstsq, rank
def _pinv_raw(a, rcond, hermitian):
    xp = _xp(a)
    if hermitian:
        w, v = xp.linalg.eigh(a)
        aw = xp.abs(w)
        cut = rcond[..., None] * xp.max(aw, axis=-1, keepdims=True)
        winv = xp.where(aw > cut, 1 / xp.where(aw > cut, w, 1), 0).astype(v.dtype)
        return (v * winv[..., None, :]) @ _mH(v)
    u, s, vh = xp.linalg.svd(a, full_matrices=False)
    cut = rcond[..., None] * xp.max(s, axis=-1, keepdims=True) if s.shape[-1] else s
    sinv = xp.where(s > cut, 1 / xp.where(s > cut, s, 1), 0).astype(u.dtype)
    return (_mH(vh) * sinv[..., None, :]) @ _mH(u)


def _pinv_backward(a, p, g):
    """Gradient of the pseudo-inverse (constant rank): see Golub & Pereyra (1973)."""
    xp = _xp(a)
    m, n = a.shape[-2:]
    ph = _mH(p)
    gh = _mH(g)
    ga = -(ph @ g @ ph)
    ga = ga + (xp.eye(m, dtype=a.dtype) - a @ p) @ gh @ (p @ ph)
    ga = ga + (ph @ p) @ gh @ (xp.eye(n, dtype=a.dtype) - p @ a)
    return ga


# fused (no higher-order rule): LAPACK-based backward written on the forward's factors
@op("pinv")
def _pinv_kernel(x, rcond, hermitian):
    dt = x.dtype
    a = _up(x)
    p = _pinv_raw(a, rcond, hermitian)

    def bw(g):
        ga = _pinv_backward(a, p, _up(g))
        if hermitian:
            # only a Hermitian input is meaningful: keep the gradient in that space
            ga = 0.5 * (ga + _mH(ga))
        return (ga.astype(dt, copy=False),)

    return p.astype(dt, copy=False), bw


def _rcond_arr(rcond, batch, xp, op):
    if isinstance(rcond, Tensor):
        r = xp.asarray(rcond._data, dtype=np.float64)
    elif isinstance(rcond, numbers.Real) and not isinstance(rcond, bool):
        r = xp.asarray(float(rcond))
    else:
        raise TypeError(f"{op}: rcond must be a float or a Tensor, got {type(rcond).__name__}")
    try:
        return xp.broadcast_to(r, batch)
    except ValueError:
        raise ValueError(f"{op}: rcond of shape {list(r.shape)} does not broadcast with the "
                         f"batch shape {list(batch)}") from None


def pinv(x, rcond=1e-15, hermitian=False, name=None):
    """Moore-Penrose pseudo-inverse (through the SVD, or eigh when ``hermitian``).

    Args:
        x (Tensor): ``[..., M, N]``.
        rcond (float | Tensor): singular values below ``rcond * max(S)`` are treated as zero.
        hermitian (bool): x is Hermitian (symmetric): use the faster eigendecomposition.
        name (str, optional): unused.

    Returns:
        Tensor: ``[..., N, M]``.
    """
    op = "pinv"
    x = _matrix_arg(x, op, square=bool(hermitian))
    r = _rcond_arr(rcond, tuple(x.shape[:-2]), _xp(x._data), op)
    return apply(_pinv_kernel, x, rcond=r, hermitian=bool(hermitian))


# fused (no higher-order rule): LAPACK-based backward written on the forward's factors
@op("lstsq")
def _lstsq_kernel(x, y, rcond, driver):
    xp = _xp(x)
    dt = x.dtype
    a, b = _up(x), _up(y)
    m, n = a.shape[-2:]
    u, s, vh = xp.linalg.svd(a, full_matrices=False)
    cut = rcond * xp.max(s, axis=-1, keepdims=True) if s.shape[-1] else s
    keep = s > cut
    sinv = xp.where(keep, 1 / xp.where(keep, s, 1), 0).astype(u.dtype)
    p = (_mH(vh) * sinv[..., None, :]) @ _mH(u)
    sol = p @ b
    rank = xp.sum(keep, axis=-1).astype(np.int32)
    if m > n and bool(xp.all(rank == n)):
        r = a @ sol - b
        res = xp.sum(xp.abs(r) ** 2, axis=-2).astype(s.dtype)
    else:
        res = xp.zeros((0,), dtype=s.dtype)
    if driver == "gels":
        rank_out = xp.zeros((0,), dtype=np.int32)
    else:
        rank_out = rank
    sv = s if driver in ("gelsd", "gelss") else xp.zeros((0,), dtype=s.dtype)

    def bw(gsol, *_):
        gs = _up(gsol)
        gb = _mH(p) @ gs
        ga = _pinv_backward(a, p, gs @ _mH(b))
        return ga.astype(dt, copy=False), gb.astype(dt, copy=False)

    rdt = dt if dt.kind != "c" else s.dtype
    return (sol.astype(dt, copy=False), res.astype(rdt, copy=False), rank_out,
            sv.astype(rdt, copy=False)), bw


def lstsq(x, y, rcond=None, driver=None, name=None):
    """Least-squares solution of ``x @ out = y`` (minimum norm for rank-deficient x).

    Args:
        x (Tensor): ``[..., M, N]``.
        y (Tensor): ``[..., M, K]``.
        rcond (float, optional): relative cut-off for small singular values (default: machine
            precision times max(M, N)).
        driver (str, optional): ``'gels'``, ``'gelsy'`` (default), ``'gelsd'`` or ``'gelss'``;
            it selects which extra outputs are filled in, as in Paddle.
        name (str, optional): unused.

    Returns:
        tuple: (solution ``[..., N, K]``, residuals ``[..., K]`` (squared, only when M > N and x
        has full rank, else empty), rank (int32 ``[...]``, empty for 'gels'), singular values
        ``[..., min(M, N)]`` (only for 'gelsd'/'gelss', else empty)).
    """
    op = "lstsq"
    x = _matrix_arg(x, op, "x")
    y = _matrix_arg(y, op, "y")
    x, y = _same_float(x, y, op)
    if driver is None:
        driver = "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise ValueError(f"{op}: driver must be one of 'gels', 'gelsy', 'gelsd', 'gelss' on CPU,"
                         f" got '{driver}'")
    if x.shape[:-2] != y.shape[:-2] or x.shape[-2] != y.shape[-2]:
        raise ValueError(f"{op}: x and y must have the same batch dims and rows, got shapes "
                         f"{x.shape} and {y.shape}")
    m, n = x.shape[-2:]
    if rcond is None:
        eps = np.finfo(_up(x._data[..., :0, :0]).dtype).eps
        rcond = float(eps) * max(m, n)
    return apply(_lstsq_kernel, x, y, rcond=float(rcond), driver=driver)


def matrix_rank(x, tol=None, hermitian=False, name=None):
    """Numerical rank: the number of singular values above a tolerance.

    Args:
        x (Tensor): ``[..., M, N]``.
        tol (float | Tensor, optional): absolute tolerance (a Tensor broadcasts with the batch
            dims and may be float64). Default ``max(S) * max(M, N) * eps``.
        hermitian (bool): x is Hermitian: use the eigenvalue magnitudes.
        name (str, optional): unused.

    Returns:
        Tensor: int32 ``[...]`` (0-D for one matrix), as Paddle.
    """
    op = "matrix_rank"
    x = _matrix_arg(x, op, square=bool(hermitian))
    xp = _xp(x._data)
    a = _up(x._data)
    if hermitian:
        s = xp.abs(xp.linalg.eigvalsh(a))
    else:
        s = xp.linalg.svd(a, compute_uv=False)
    smax = xp.max(s, axis=-1) if s.shape[-1] else xp.zeros(s.shape[:-1], dtype=s.dtype)
    if tol is None:
        eps = np.finfo(s.dtype).eps
        t = smax * max(x.shape[-2:]) * eps
    elif isinstance(tol, Tensor):
        t = xp.asarray(tol._data)
    elif isinstance(tol, numbers.Real) and not isinstance(tol, bool):
        t = xp.asarray(float(tol))
    else:
        raise TypeError(f"{op}: tol must be a float or a Tensor, got {type(tol).__name__}")
    try:
        t = xp.broadcast_to(t, s.shape[:-1]) if t.ndim <= len(s.shape[:-1]) else t
        rank = xp.sum(s > t[..., None], axis=-1)
    except ValueError:
        raise ValueError(f"{op}: tol of shape {list(t.shape)} does not broadcast with the batch "
                         f"shape {list(s.shape[:-1])}") from None
    return _wrap(rank.astype(np.int32))


def cond(x, p=None, name=None):
    """Condition number of matrices in the norm ``p``.

    Args:
        x (Tensor): ``[..., M, N]`` (square unless p is None, 2 or -2).
        p (None | float | str): None or 2 (ratio of the largest and the smallest singular
            values), -2 (the inverse ratio), ``'fro'``, ``'nuc'``, ``inf``, ``-inf``, 1 or -1.
        name (str, optional): unused.

    Returns:
        Tensor: ``[...]`` (0-D for one matrix).
    """
    from .math import divide, multiply

    op = "cond"
    x = _matrix_arg(x, op, complex_ok=False)
    if p is None or (isinstance(p, numbers.Real) and not isinstance(p, bool) and p in (2, -2)):
        s = svd(x)[1]
        big, small = s[..., 0], s[..., -1]
        return divide(small, big) if p == -2 else divide(big, small)
    allowed = ("fro", "nuc", np.inf, -np.inf, 1, -1)
    if not any(p == q and type(p) is type(q) or (not isinstance(p, str) and not isinstance(
            q, str) and p == q) for q in allowed):
        raise ValueError(f"{op}: p must be None, 2, -2, 'fro', 'nuc', inf, -inf, 1 or -1, got "
                         f"{p!r}")
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{op}: x must be square for p={p!r}, got shape {x.shape}")
    return multiply(_matrix_norm(x, p), _matrix_norm(inverse(x), p))


def _mat_abs_norm_grad(M, x, out, g, p):
    # the gradient goes through the column (p=1) or row (p=inf) whose |x| sum is picked
    xd = M.value(x)
    axis = -1 if p in (np.inf, -np.inf) else -2
    pick = _xp(xd).abs(xd).sum(axis=axis) == M.value(out)[..., None]
    pick = pick[..., :, None] if axis == -1 else pick[..., None, :]
    return (M.sign(x) * M.mask(pick, x) * M.reshape(g, list(g.shape) + [1, 1]),)


@op("matrix_norm", uses_out=True, grad=_mat_abs_norm_grad)
def _mat_abs_norm_kernel(x, p):
    xp = _xp(x)
    sums = xp.sum(xp.abs(x), axis=-1 if p in (np.inf, -np.inf) else -2)
    return (xp.max(sums, axis=-1) if p > 0 else xp.min(sums, axis=-1)), GRAD


def _matrix_norm(x, p):
    from .stat import sum as _sum

    if p == "fro":
        return norm(x, "fro", axis=[-2, -1])
    if p == "nuc":
        return _sum(svd(x)[1], axis=-1)
    return apply(_mat_abs_norm_kernel, x, p=float(p))


def pca_lowrank(x, q=None, center=True, niter=2, name=None):
    """Randomised low-rank PCA (Halko et al.): ``x ≈ U diag(S) Vᵀ``.

    Args:
        x (Tensor): ``[..., M, N]``.
        q (int, optional): the rank to estimate (default ``min(6, M, N)``).
        center (bool): subtract the column means first.
        niter (int): subspace (power) iterations.
        name (str, optional): unused.

    Returns:
        tuple[Tensor, Tensor, Tensor]: U ``[..., M, q]``, S ``[..., q]``, V ``[..., N, q]``.
    """
    from .manipulation import transpose
    from .math import subtract
    from .stat import mean

    op = "pca_lowrank"
    x = _matrix_arg(x, op, complex_ok=False)
    m, n = x.shape[-2:]
    if q is None:
        q = min(6, m, n)
    if not isinstance(q, numbers.Integral) or not 0 <= q <= min(m, n):
        raise ValueError(f"{op}: q must be an int in [0, min(M, N)] = [0, {min(m, n)}], got {q}")
    if not isinstance(niter, numbers.Integral) or niter < 0:
        raise ValueError(f"{op}: niter must be a non-negative int, got {niter}")
    if center:
        x = subtract(x, mean(x, axis=-2, keepdim=True))
    perm = list(range(x.ndim - 2)) + [x.ndim - 1, x.ndim - 2]
    r = _wrap(_randn(x._data, x.shape[:-2] + [n, q]))
    basis = qr(matmul(x, r))[0]
    for _ in range(niter):
        basis = qr(matmul(x, basis, transpose_x=True))[0]
        basis = qr(matmul(x, basis))[0]
    b = matmul(basis, x, transpose_x=True)
    u, s, vh = svd(b)
    return matmul(basis, u), s, transpose(vh, perm)


def _randn(like, shape):
    """Standard normal draws from paddle_hl's generator when it has one, else NumPy's."""
    xp = _xp(like)
    try:
        from . import random as _random  # optional category module

        gen = getattr(_random, "randn", None)
    except ImportError:
        gen = None
    if gen is not None:
        return xp.asarray(gen(shape, dtype=str(like.dtype) if like.dtype.kind == "f" and not _low(
            like.dtype) else "float32")._data).astype(like.dtype)
    return xp.asarray(np.random.standard_normal(shape)).astype(like.dtype)


API = ["matmul", "bmm", "mm", "mv", "dot", "einsum", "tensordot", "outer", "inner", "kron",
       "cross", "cdist", "dist"]
METHODS = API[:] + [
    "norm", "cholesky", "cholesky_solve", "cond", "corrcoef", "cov", "eig", "eigvals",
    "eigvalsh", "householder_product", "inverse", "lstsq", "lu", "lu_unpack", "matrix_power",
    "multi_dot", "pca_lowrank", "pinv", "qr", "solve"]
METHODS.remove("einsum")
