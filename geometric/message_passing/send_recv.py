"""Message passing: gather node features along edges, combine them with edge or node features,
and reduce them into the destination nodes.

Each public function checks its arguments, then runs one kernel through the core's op wrapper
(``paddle_hl.framework.op.apply``), which records the backward. The kernels work on the array
module of their inputs (NumPy or CuPy) and keep in their backward closures only what the
gradient needs: the index arrays and, for max/min, the gathered messages and the output.
"""

from __future__ import annotations

import math

import numpy as np

from paddle_hl.framework.engine import GRAD
from paddle_hl.framework.op import apply, op

from .. import _checks as ck
from .. import _kernels as K

__all__ = []  # the public names are exported by paddle_hl.geometric

_REDUCE = ("sum", "mean", "max", "min")
_MESSAGE = ("add", "sub", "mul", "div")
_X_DTYPES = ("float16", "bfloat16", "float32", "float64", "int32", "int64")
_DIV_EPS = 1e-12


def _flat(a):
    """[E, ...] -> [E, F] (a view; size-0 blocks too, which reshape(-1) refuses)."""
    return a.reshape(a.shape[0], math.prod(a.shape[1:]))


def _unbroadcast_feat(M, g, shape):
    """Sum a gradient of feature shape g.shape[1:] down to ``shape`` (same rank, dims of 1), in
    either rule namespace."""
    gs = M.value(g).shape
    if gs[1:] == tuple(shape[1:]):
        return g
    axes = tuple(i for i in range(1, len(gs)) if shape[i] == 1 and gs[i] != 1)
    return M.sum(g, axis=axes, keepdim=True) if axes else g


# Rows gathered by an index array and rows summed into a table by one: each is the other's
# adjoint, so rules written with them are differentiable to any order. _row_dots is the
# per-edge dot product of two gathered row sets (the gradient of a per-edge scalar weight).

@op("gather_rows", saves=(), grad=lambda M, a, out, g, ids: (
    M.op(_scatter_rows, g, ids=ids, n=M.value(a).shape[0]),))
def _gather_rows(a, ids):
    """``a[ids]``."""
    return a[ids], GRAD


@op("scatter_rows", saves=(), grad=lambda M, m, out, g, ids, n: (
    M.op(_gather_rows, g, ids=ids),))
def _scatter_rows(m, ids, n):
    """Row e of ``m`` added into row ``ids[e]`` of an ``n``-row table of zeros."""
    return K.segment_sum(_flat(m), K.Segments(ids, n)).reshape((n,) + m.shape[1:]), GRAD


def _row_dots_grad(M, a, b, out, u, ia, ib):
    uc = M.reshape(u, (-1, 1))
    return (M.op(_scatter_rows, uc * M.op(_gather_rows, b, ids=ib), ids=ia,
                 n=M.value(a).shape[0]),
            M.op(_scatter_rows, uc * M.op(_gather_rows, a, ids=ia), ids=ib,
                 n=M.value(b).shape[0]))


@op("row_dots", grad=_row_dots_grad)
def _row_dots(a, b, ia, ib):
    """``sum_f a[ia[e], f] * b[ib[e], f]`` per edge e, for 2-D a and b (one pass, no product
    block)."""
    return K.xp_of(a).einsum("ef,ef->e", a[ia], b[ib]), GRAD


# ----------------------------------------------------------------------------- send_u_recv

def _u_recv_linear_grad(M, x, out, saved, g, src, dst, reduce_op, n_out):
    # residuals: the destination grouping (reused by the adjoint, which then builds nothing)
    # and, for a mean, the inverse counts; both depend on the indices only (constants)
    seg, inv = saved
    if inv is not None:
        g = g * inv
    return (M.op(_u_recv_adjoint, g, src=src, dst=dst, seg=seg, n_in=M.value(x).shape[0]),)


@op("send_u_recv", saves=(), grad=_u_recv_linear_grad, residuals=True)
def _u_recv_linear(x, src, dst, reduce_op, n_out):
    """sum / mean of ``x[src]`` into ``dst``; the gradient is the transposed scatter."""
    seg = K.Segments(dst, n_out)
    out = K.gather_sum(_flat(x), src, seg)
    inv = None
    if reduce_op == "mean":
        out = K.divide_by_count(out, seg.count)
        inv = K.inverse_count(seg.count, out.dtype, x.ndim)
    return out.reshape((n_out,) + x.shape[1:]), GRAD.save(seg, inv)


@op("send_u_recv_grad", saves=(), grad=lambda M, g, out, gg, src, dst, seg, n_in: (
    M.op(_u_recv_linear, gg, src=src, dst=dst, reduce_op="sum", n_out=M.value(g).shape[0]),))
def _u_recv_adjoint(g, src, dst, seg, n_in):
    """The adjoint of the sum of ``x[src]`` into ``dst`` (grouped by ``seg``): each
    destination's gradient sent back along the edges to the sources."""
    r = K.gather_sum_adjoint(_flat(g), src, seg, n_in)
    return r.reshape((n_in,) + g.shape[1:]), GRAD


def _u_recv_extreme_grad(M, x, out, saved, g, src, dst, reduce_op, n_out):
    # residual: which messages equal their destination's result (a choice: a constant under
    # create_graph); each receives that destination's whole gradient
    (hit,) = saved
    gm = M.op(_gather_rows, g, ids=dst) * hit
    return (M.op(_scatter_rows, gm, ids=src, n=M.value(x).shape[0]),)


@op("send_u_recv", saves=(), grad=_u_recv_extreme_grad, residuals=True)
def _u_recv_extreme(x, src, dst, reduce_op, n_out):
    """max / min of ``x[src]`` into ``dst``. Every message equal to its destination's result
    receives that destination's whole gradient (ties are not split, as in Paddle)."""
    seg = K.Segments(dst, n_out)
    msg = _flat(x)[src]
    out = K.segment_extreme(msg, seg, reduce_op)
    hit = (msg == out[dst]).reshape((msg.shape[0],) + x.shape[1:])
    return out.reshape((n_out,) + x.shape[1:]), GRAD.save(hit)

def send_u_recv(x, src_index, dst_index, reduce_op="sum", out_size=None, name=None):
    """Gather ``x[src_index]`` along the edges and reduce the messages into ``dst_index``.

    Destinations that receive no message are 0 for every ``reduce_op``.

    Args:
        x (Tensor): node features [N, ...], float16/bfloat16/float32/float64/int32/int64.
        src_index (Tensor): source node of each edge, int32 or int64, [E] (or [E, 1]).
        dst_index (Tensor): destination node of each edge, int32 or int64, [E].
        reduce_op (str): 'sum', 'mean', 'max' or 'min'.
        out_size (int|Tensor, optional): the number of output rows. None (or <= 0) means
            ``x.shape[0]``; otherwise it must exceed every destination index.
        name (str, optional): unused, for Paddle compatibility.

    Returns:
        Tensor: [out_size or N, ...], of x's dtype. Integer means truncate toward zero.

    Example:
        >>> x = paddle.to_tensor([[0., 2., 3.], [1., 4., 5.], [2., 6., 7.]])
        >>> src = paddle.to_tensor([0, 1, 2, 0]); dst = paddle.to_tensor([1, 2, 1, 0])
        >>> paddle.geometric.send_u_recv(x, src, dst, reduce_op="sum")
        Tensor(shape=[3, 3], ... [[0., 2., 3.], [2., 8., 10.], [1., 4., 5.]])
    """
    op = "send_u_recv"
    reduce_op = ck.choice(reduce_op, _REDUCE, op, "reduce_op")
    x = ck.as_tensor(x, op, "x")
    ck.check_values(x, op, "x", _X_DTYPES)
    if x.ndim == 0:
        raise ValueError(f"{op}: 'x' must have at least one dim (nodes first), got a 0-D tensor")
    src = ck.index_array(src_index, op, "src_index")
    dst = ck.index_array(dst_index, op, "dst_index")
    ck.same_length(src, dst, op, "src_index", "dst_index")
    ck.check_range(src, x.shape[0], op, "src_index", "x's dim 0")
    n_out = ck.output_rows(dst, x.shape[0], out_size, op)
    kernel = _u_recv_linear if reduce_op in ("sum", "mean") else _u_recv_extreme
    return apply(kernel, x, src=src, dst=dst, reduce_op=reduce_op, n_out=n_out)


# ------------------------------------------------------------------ send_ue_recv / send_uv

def _align(x, y):
    """Paddle's alignment of node and edge features: a 1-D tensor becomes a column, and the
    one with fewer dims gets ones inserted after its first dim."""
    if x.ndim == 1:
        x = x.reshape(-1, 1)
    if y.ndim == 1:
        y = y.reshape(-1, 1)
    if x.ndim < y.ndim:
        x = x.reshape((x.shape[0],) + (1,) * (y.ndim - x.ndim) + x.shape[1:])
    elif y.ndim < x.ndim:
        y = y.reshape((y.shape[0],) + (1,) * (x.ndim - y.ndim) + y.shape[1:])
    return x, y


def _message(xs, ys, message_op):
    """The per-edge message ``xs op ys`` (both already gathered and aligned)."""
    if message_op == "add":
        return xs + ys
    if message_op == "sub":
        return xs - ys
    if message_op == "mul":
        return xs * ys
    # Paddle multiplies by 1 / (y + 1e-12): a zero edge feature gives a large finite value
    return xs * _reciprocal(ys)


def _reciprocal(y):
    return 1.0 / (y + y.dtype.type(_DIV_EPS))


def _message_grads(M, g, xs, ys, message_op, need_x, need_y):
    """Gradients of the per-edge message with respect to the gathered x and to the (gathered
    or edge) y, in either rule namespace."""
    gx = gy = None
    if message_op == "add":
        gx, gy = (g if need_x else None), (g if need_y else None)
    elif message_op == "sub":
        gx, gy = (g if need_x else None), (-g if need_y else None)
    elif message_op == "mul":
        gx = g * ys if need_x else None
        gy = g * xs if need_y else None
    else:
        r = 1.0 / (ys + _DIV_EPS)
        gx = g * r if need_x else None
        gy = -(g * xs) * (r * r) if need_y else None
    return gx, gy


def _aligned(M, x, y):
    """:func:`_align` in either rule namespace (reshapes only)."""
    xs, ys = _align(np.empty(M.value(x).shape, np.bool_), np.empty(M.value(y).shape, np.bool_))
    return M.reshape(x, xs.shape), M.reshape(y, ys.shape)

def _check_pair(x, y, op):
    x = ck.as_tensor(x, op, "x")
    y = ck.as_tensor(y, op, "y")
    ck.check_values(x, op, "x", _X_DTYPES)
    ck.check_values(y, op, "y", _X_DTYPES)
    if x.dtype != y.dtype:
        raise ck.GraphDtypeError(f"{op}: 'x' and 'y' must have the same dtype, got "
                                 f"{x.dtype.name} and {y.dtype.name}")
    if x.ndim == 0 or y.ndim == 0:
        raise ValueError(f"{op}: 'x' and 'y' must have at least one dim, got shapes "
                         f"{x.shape} and {y.shape}")
    return x, y


def _check_message_op(message_op, x, op):
    message_op = ck.choice(message_op, _MESSAGE, op, "message_op")
    if message_op == "div" and x.dtype.name in ("int32", "int64"):
        raise ck.GraphDtypeError(f"{op}: message_op='div' needs floating 'x' and 'y', got "
                                 f"{x.dtype.name}")
    return message_op


def _feature_shape(xa, ya, op):
    try:
        return np.broadcast_shapes(xa.shape[1:], ya.shape[1:])
    except ValueError:
        raise ValueError(f"{op}: the feature shapes of 'x' {list(xa.shape[1:])} and 'y' "
                         f"{list(ya.shape[1:])} do not broadcast") from None


def _edge_scalar(ya):
    """y holds one value per edge (all its feature dims are 1)."""
    return all(d == 1 for d in ya.shape[1:])


def _ue_recv_grad(M, x, y, out, saved, g, src, dst, message_op, reduce_op, n_out, need_x=True,
                  need_y=True):
    # residuals, all constants under create_graph except the gathered x (recomputed there):
    # the destination grouping, a mean's inverse counts, max/min's hit mask, the gathered x
    seg, inv, hit, xs, weighted = saved
    n_in = M.value(x).shape[0]
    xa, ya = _aligned(M, x, y)
    if weighted:
        # one scalar per edge times x[src], summed: the weighted sparse product's transpose
        # for x, one dot product per edge for y
        gf = M.reshape(g, (n_out, -1))
        if inv is not None:
            gf = gf * inv
        wy = M.reshape(ya, (-1,))
        w = wy if message_op == "mul" else 1.0 / (wy + _DIV_EPS)
        gx = gy = None
        if need_x:
            gx = M.reshape(M.op(_wsum_adjoint, gf, w, src=src, seg=seg, n_in=n_in),
                           M.value(x).shape)
        if need_y:
            dw = M.op(_row_dots, gf, M.reshape(xa, (n_in, -1)), ia=dst, ib=src)
            if message_op == "div":
                dw = -dw * (w * w)
            gy = M.reshape(dw, M.value(y).shape)
        return gx, gy
    if inv is not None:
        g = g * inv
    gm = M.op(_gather_rows, g, ids=dst)
    if hit is not None:
        gm = gm * hit
    if M.tensor and xs is not None:
        xs = M.op(_gather_rows, xa, ids=src)
    gx, gy = _message_grads(M, gm, xs, ya, message_op, need_x, need_y)
    if gx is not None:
        gx = M.reshape(M.op(_scatter_rows, _unbroadcast_feat(M, gx, M.value(xa).shape), ids=src,
                            n=n_in), M.value(x).shape)
    if gy is not None:
        gy = M.reshape(_unbroadcast_feat(M, gy, M.value(ya).shape), M.value(y).shape)
    return gx, gy


@op("send_ue_recv", saves=(0, 1), grad=_ue_recv_grad, residuals=True)
def _ue_recv(x, y, src, dst, message_op, reduce_op, n_out, need_x=True, need_y=True):
    """op(x[src], y) per edge, reduced into ``dst``."""
    xa, ya = _align(x, y)
    feat = _feature_shape(xa, ya, "send_ue_recv")
    seg = K.Segments(dst, n_out)
    if (reduce_op in ("sum", "mean") and message_op in ("mul", "div") and _edge_scalar(ya)
            and K._sparse_ok(x)):
        # mul/div by one scalar per edge, then sum/mean: one weighted sparse product (the GCN
        # pattern), without the [E, F] message block
        w = ya.reshape(-1)
        if message_op == "div":
            w = _reciprocal(w)
        out = K.gather_sum(_flat(xa), src, seg, weight=w)
        inv = None
        if reduce_op == "mean":
            out = K.divide_by_count(out, seg.count)
            inv = K.inverse_count(seg.count, out.dtype, 2)
        return out.reshape((n_out,) + feat), GRAD.save(seg, inv, None, None, True)
    xs = xa[src]
    msg = _message(xs, ya, message_op)
    msg = msg.reshape((msg.shape[0],) + feat) if msg.shape[1:] != feat else msg
    flat = _flat(msg)
    inv = hit = None
    if reduce_op in ("sum", "mean"):
        out = K.segment_sum(flat, seg)
        if reduce_op == "mean":
            out = K.divide_by_count(out, seg.count)
            inv = K.inverse_count(seg.count, out.dtype, len(feat) + 1)
    else:
        out = K.segment_extreme(flat, seg, reduce_op)
        hit = (flat == out[dst]).reshape(msg.shape)
    keep_xs = xs if message_op in ("mul", "div") else None
    return out.reshape((n_out,) + feat), GRAD.save(seg, inv, hit, keep_xs, False)


def _wsum_grad(M, x, w, out, g, src, seg, n_out):
    # out[t] = sum over edges e into t of w_e x[src_e]
    gx = M.op(_wsum_adjoint, g, w, src=src, seg=seg, n_in=M.value(x).shape[0])
    return gx, M.op(_row_dots, g, x, ia=seg.ids, ib=src)


@op("send_ue_recv_weighted", grad=_wsum_grad)
def _wsum(x, w, src, seg, n_out):
    """``sum over edges e into t of w[e] * x[src[e]]`` for x [N, F] and w [E]."""
    return K.gather_sum(x, src, seg, weight=w), GRAD


def _wsum_adjoint_grad(M, g, w, out, u, src, seg, n_in):
    # out = A^T g with A[dst_e, src_e] = w_e: its transpose is _wsum, its w-gradient per edge
    # the dot product of u[src_e] and g[dst_e]
    gg = M.op(_wsum, u, w, src=src, seg=seg, n_out=M.value(g).shape[0])
    return gg, M.op(_row_dots, u, g, ia=src, ib=seg.ids)


@op("send_ue_recv_weighted_grad", grad=_wsum_adjoint_grad)
def _wsum_adjoint(g, w, src, seg, n_in):
    """The transpose of :func:`_wsum`: ``w[e] * g[dst[e]]`` summed into the sources."""
    return K.gather_sum_adjoint(g, src, seg, n_in, weight=w), GRAD

def send_ue_recv(x, y, src_index, dst_index, message_op="add", reduce_op="sum", out_size=None,
                 name=None):
    """Combine ``x[src_index]`` with the edge features ``y``, then reduce into ``dst_index``.

    Node and edge features broadcast against each other: a 1-D tensor is read as a column, and
    the one with fewer dims gets dims of 1 inserted after its first dim. ``div`` multiplies by
    ``1 / (y + 1e-12)``, as Paddle does.

    Args:
        x (Tensor): node features [N, ...].
        y (Tensor): edge features [E, ...], of x's dtype.
        src_index (Tensor): source node of each edge, int32 or int64, [E].
        dst_index (Tensor): destination node of each edge, int32 or int64, [E].
        message_op (str): 'add', 'sub', 'mul' or 'div'.
        reduce_op (str): 'sum', 'mean', 'max' or 'min'.
        out_size (int|Tensor, optional): the number of output rows (None or <= 0: N).
        name (str, optional): unused, for Paddle compatibility.

    Returns:
        Tensor: [out_size or N, broadcast feature shape].

    Example:
        >>> x = paddle.to_tensor([[0., 2., 3.], [1., 4., 5.], [2., 6., 7.]])
        >>> y = paddle.ones([4, 1])
        >>> src = paddle.to_tensor([0, 1, 2, 0]); dst = paddle.to_tensor([1, 2, 1, 0])
        >>> paddle.geometric.send_ue_recv(x, y, src, dst, "add", "sum")
        Tensor(shape=[3, 3], ... [[1., 3., 4.], [4., 10., 12.], [2., 5., 6.]])
    """
    op = "send_ue_recv"
    message_op = ck.choice(message_op, _MESSAGE, op, "message_op")
    reduce_op = ck.choice(reduce_op, _REDUCE, op, "reduce_op")
    x, y = _check_pair(x, y, op)
    message_op = _check_message_op(message_op, x, op)
    src = ck.index_array(src_index, op, "src_index")
    dst = ck.index_array(dst_index, op, "dst_index")
    ck.same_length(src, dst, op, "src_index", "dst_index")
    if y.shape[0] != src.shape[0]:
        raise ValueError(f"{op}: 'y' must have one row per edge: y.shape[0] is {y.shape[0]} "
                         f"but 'src_index' has {src.shape[0]} edges")
    ck.check_range(src, x.shape[0], op, "src_index", "x's dim 0")
    n_out = ck.output_rows(dst, x.shape[0], out_size, op)
    return apply(_ue_recv, x, y, src=src, dst=dst, message_op=message_op, reduce_op=reduce_op,
                 n_out=n_out, need_x=not x.stop_gradient, need_y=not y.stop_gradient)


def _uv_grad(M, x, y, out, saved, g, src, dst, message_op, need_x=True, need_y=True):
    # residuals: the gathered copies for mul/div (recomputed from the Tensors under
    # create_graph, being differentiable)
    xs, ys = saved
    xa, ya = _aligned(M, x, y)
    if M.tensor and xs is not None:
        xs, ys = M.op(_gather_rows, xa, ids=src), M.op(_gather_rows, ya, ids=dst)
    gx, gy = _message_grads(M, g, xs, ys, message_op, need_x, need_y)
    if gx is not None:
        gx = M.reshape(M.op(_scatter_rows, _unbroadcast_feat(M, gx, M.value(xa).shape), ids=src,
                            n=M.value(x).shape[0]), M.value(x).shape)
    if gy is not None:
        gy = M.reshape(M.op(_scatter_rows, _unbroadcast_feat(M, gy, M.value(ya).shape), ids=dst,
                            n=M.value(y).shape[0]), M.value(y).shape)
    return gx, gy


@op("send_uv", saves=(), grad=_uv_grad, residuals=True)
def _uv(x, y, src, dst, message_op, need_x=True, need_y=True):
    """op(x[src], y[dst]) per edge."""
    xa, ya = _align(x, y)
    feat = _feature_shape(xa, ya, "send_uv")
    xs, ys = xa[src], ya[dst]
    out = _message(xs, ys, message_op)
    if out.shape[1:] != feat:
        out = out.reshape((out.shape[0],) + feat)
    keep = message_op in ("mul", "div")
    return out, GRAD.save(xs if keep else None, ys if keep else None)

def send_uv(x, y, src_index, dst_index, message_op="add", name=None):
    """Per edge, combine the source's features ``x[src]`` with the destination's ``y[dst]``.

    Feature shapes broadcast as in :func:`send_ue_recv` (so 1-D inputs give an [E, 1] result).

    Args:
        x (Tensor): source node features [N, ...].
        y (Tensor): destination node features [M, ...], of x's dtype.
        src_index (Tensor): source node of each edge, int32 or int64, [E].
        dst_index (Tensor): destination node of each edge, int32 or int64, [E].
        message_op (str): 'add', 'sub', 'mul' or 'div'.
        name (str, optional): unused, for Paddle compatibility.

    Returns:
        Tensor: [E, broadcast feature shape].

    Example:
        >>> x = paddle.to_tensor([[0., 2., 3.], [1., 4., 5.], [2., 6., 7.]])
        >>> src = paddle.to_tensor([0, 1, 2, 0]); dst = paddle.to_tensor([1, 2, 1, 0])
        >>> paddle.geometric.send_uv(x, x, src, dst, "add")
        Tensor(shape=[4, 3], ... [[1., 6., 8.], [3., 10., 12.], [3., 10., 12.], [0., 4., 6.]])
    """
    op = "send_uv"
    message_op = ck.choice(message_op, _MESSAGE, op, "message_op")
    x, y = _check_pair(x, y, op)
    message_op = _check_message_op(message_op, x, op)
    src = ck.index_array(src_index, op, "src_index")
    dst = ck.index_array(dst_index, op, "dst_index")
    ck.same_length(src, dst, op, "src_index", "dst_index")
    ck.check_range(src, x.shape[0], op, "src_index", "x's dim 0")
    ck.check_range(dst, y.shape[0], op, "dst_index", "y's dim 0")
    return apply(_uv, x, y, src=src, dst=dst, message_op=message_op,
                 need_x=not x.stop_gradient, need_y=not y.stop_gradient)
