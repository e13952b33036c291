"""Loss functions (``paddle.nn.functional`` loss family).

The heavy losses are single fused kernels on raw arrays: cross entropy (log-softmax, label
gather and the reduction in one pass; backward ``softmax - target`` without a one-hot matrix),
NLL, binary cross entropy (with and without logits), KL divergence, Huber, hierarchical sigmoid,
margin cross entropy, and the CTC / RNN-T forward-backward recursions (vectorised over the batch
and the label positions, looping only over time). The small elementwise losses are written with
the public tensor ops, so their gradients come from those ops.

Losses with ``reduction='mean'`` or ``'sum'`` return 0-D tensors (shape ``[]``).
"""

from __future__ import annotations

import math as _math

import numpy as np

from ... import backend
from ...backend import get_array_module as _xp
from ...backend.arrays import sigmoid as _sigmoid
from ...framework import dtype as _dt
from ...framework.op import apply, op
from ...framework.tensor import Tensor, _wrap
from ...tensor import linalg as _la
from ...tensor import manipulation as _mp
from ...tensor import math as _m
from ...tensor import search as _se
from ...tensor import stat as _st
from ...tensor._helpers import cast_to, tensor_arg
from ...tensor._helpers import float_arg as _float_arg
from ...tensor._helpers import int_tensor_arg as _int_arg
from . import activation as _act
from .activation import _softmax_arr, _softplus_arr

__all__ = []

_REDUCTIONS = ("none", "mean", "sum")


# ---------------------------------------------------------------------------------- helpers
def _arr(v, dtype, xp):
    """A real array of ``dtype`` (NumPy reductions return scalars, kernels must return arrays)."""
    return xp.asarray(v, dtype=dtype)


def _work(a):
    """The dtype a kernel computes in: float16/bfloat16 are lifted to float32."""
    return np.dtype(np.float32) if a.dtype in _dt.LOW_FLOATS else a.dtype


def _check_reduction(reduction, op, allowed=_REDUCTIONS):
    if reduction not in allowed:
        raise ValueError(f"{op}: 'reduction' should be one of {', '.join(map(repr, allowed))}, "
                         f"but received {reduction!r}")


def _like(y, x, op, arg):
    """``y`` as a Tensor with ``x``'s dtype (labels given as ints or another float dtype)."""
    y = tensor_arg(y, op, arg)
    if y._data.dtype != x._data.dtype:
        y = cast_to(y, x._data.dtype)
    return y


def _same_shape(a, b, op, na, nb):
    if a.shape != b.shape:
        raise ValueError(f"{op}: '{na}' and '{nb}' must have the same shape, but got {na} "
                         f"{a.shape} and {nb} {b.shape}")


def _broadcastable(a, b, op, na="input", nb="label"):
    """Report a shape mismatch in the loss's own terms rather than from an inner op."""
    if a.shape != b.shape:
        try:
            np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
        except ValueError:
            raise ValueError(f"{op}: {na} {a.shape} and {nb} {b.shape} have incompatible "
                             f"shapes; expected the same shape (or shapes that broadcast)") \
                from None


def _f32(v):
    """A Python float rounded through float32: Paddle builds these margins as float32
    constants, so float64 losses see the rounded value."""
    return float(np.float32(v))


def _reduce(loss, reduction):
    if reduction == "mean":
        return _st.mean(loss)
    if reduction == "sum":
        return _st.sum(loss)
    return loss


def _split3(shape, axis):
    """``(pre, C, post)``: the shape seen as ``[pre, C, post]`` around the class axis."""
    pre = int(np.prod(shape[:axis], dtype=np.int64))
    post = int(np.prod(shape[axis + 1:], dtype=np.int64))
    return pre, shape[axis], post


def _grid(pre, post, xp):
    """Row/column index grids that, with a ``[pre, post]`` class index, address ``[pre, C,
    post]`` (64-bit indices, so tensors with more than 2**31 elements are fine)."""
    return xp.arange(pre, dtype=np.int64)[:, None], xp.arange(post, dtype=np.int64)[None, :]


def _check_labels(idx, valid, n_class, op, on_device=False):
    """Hard labels must lie in ``[0, n_class)`` except where ignored (IndexError, as Paddle).

    ``on_device=True`` (cross_entropy, the loss of every training step): for GPU arrays the
    check is not made on the host, where it would stop the host until the GPU answers, every
    step. The mask of the out-of-range labels is returned instead, and the caller makes their
    losses NaN (Paddle's GPU kernel stops the device with an assertion there). Returns None
    when the check was made on the host.
    """
    bad = valid & ((idx < 0) | (idx >= n_class))
    if on_device and backend.is_gpu_array(bad):
        return bad
    if bool(bad.any()):
        v = int(backend.to_numpy(idx[bad]).reshape(-1)[0])
        if v < 0:
            raise IndexError(f"{op}: label value should be >= 0 when it is not ignore_index, "
                             f"but received label value {v}")
        raise IndexError(f"{op}: label value should be less than the number of classes "
                         f"({n_class}) when it is not ignore_index, but received label value {v}")


def _div_or_zero(a, denom, xp):
    """``a / denom``, or zeros like ``a`` when the (0-d) ``denom`` is 0 (every label ignored).
    On a GPU the choice is made on the device: asking whether ``denom`` is 0 would stop the
    host until the GPU answers."""
    if xp is np:
        return a / denom if denom != 0 else a * 0
    nz = denom != 0
    return xp.where(nz, a / xp.where(nz, denom, 1), a * 0)


# ------------------------------------------------------------------ dtypes of the targets
def _float_target(y, x, op, arg, xname="input"):
    """``y`` as a Tensor of ``x``'s dtype; an integer or bool ``y`` is refused.

    Paddle documents these targets as float32/float64 and its kernels refuse an integer one
    (a dtype mismatch); another float dtype is cast to ``x``'s.
    """
    y = tensor_arg(y, op, arg)
    if not y.dtype.is_floating_point:
        raise TypeError(f"{op}: '{arg}' must be a floating point tensor like '{xname}' "
                        f"({x.dtype.name}), but got {y.dtype.name}")
    if y._data.dtype != x._data.dtype:
        y = cast_to(y, x._data.dtype)
    return y


def _lenient_input(x, op, arg="input"):
    """``x`` as a floating Tensor where Paddle computes with an integer input: an integer ``x``
    is computed in the default float dtype (Paddle's arithmetic on it gives that dtype); bool
    is refused."""
    x = tensor_arg(x, op, arg)
    kind = x._data.dtype.kind
    if kind in "iu":
        return cast_to(x, _dt.default_np())
    if kind == "b":
        raise TypeError(f"{op}: '{arg}' must be a floating point (or integer) tensor, but got "
                        f"{x.dtype.name}")
    return _float_arg(x, op, arg)


# ------------------------------------------------------------------- regression losses
def mse_loss(input: Tensor, label: Tensor, reduction: str = "mean", name=None) -> Tensor:
    """Mean squared error ``(input - label) ** 2``.

    Args:
        input (Tensor): predictions, any shape, float32/float64.
        label (Tensor): targets, same shape as ``input``.
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.

    Returns:
        Tensor: the elementwise losses for ``'none'``, else a 0-D tensor.

    Example:
        >>> F.mse_loss(paddle.to_tensor([1.5]), paddle.to_tensor([1.7]))   # 0.04, shape []
    """
    op = "mse_loss"
    _check_reduction(reduction, op)
    input = _float_arg(input, op, "input")
    label = _float_target(label, input, op, "label")
    _broadcastable(input, label, op)
    return _reduce(_m.square(_m.subtract(input, label)), reduction)


def square_error_cost(input: Tensor, label: Tensor) -> Tensor:
    """Elementwise squared error ``(input - label) ** 2`` (no reduction).

    Args:
        input (Tensor): predictions.
        label (Tensor): targets (broadcast against ``input``).

    Returns:
        Tensor: the squared errors.
    """
    op = "square_error_cost"
    input = _float_arg(input, op, "input")
    label = _like(label, input, op, "label")
    _broadcastable(input, label, op)
    return _m.square(_m.subtract(input, label))


def l1_loss(input: Tensor, label: Tensor, reduction: str = "mean", name=None) -> Tensor:
    """Mean absolute error ``|input - label|``.

    Args:
        input (Tensor): predictions, any shape.
        label (Tensor): targets, same shape.
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.

    Returns:
        Tensor: elementwise losses (``'none'``) or a 0-D tensor.
    """
    op = "l1_loss"
    _check_reduction(reduction, op)
    input = _float_arg(input, op, "input")
    label = _float_target(label, input, op, "label")
    _broadcastable(input, label, op)
    return _reduce(_m.abs(_m.subtract(input, label)), reduction)


@op("smooth_l1_loss")
def _huber_kernel(x, y, delta):
    xp = _xp(x)
    r = y.astype(_work(x), copy=False) - x.astype(_work(x), copy=False)
    a = xp.abs(r)
    small = a <= delta
    out = xp.where(small, 0.5 * r * r, delta * (a - 0.5 * delta)).astype(x.dtype, copy=False)

    def bw(g):
        # d/dr: r inside the quadratic zone, delta*sign(r) outside
        dr = g * xp.where(small, r, delta * xp.sign(r))
        return ((-dr).astype(x.dtype, copy=False), dr.astype(y.dtype, copy=False))

    return out, bw


def smooth_l1_loss(input: Tensor, label: Tensor, reduction: str = "mean", delta: float = 1.0,
                   name=None) -> Tensor:
    """Huber loss: ``0.5 * d**2`` where ``|d| <= delta``, else ``delta * (|d| - 0.5 * delta)``.

    Args:
        input (Tensor): predictions, any shape.
        label (Tensor): targets, same shape.
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.
        delta (float): where the quadratic zone ends.

    Returns:
        Tensor: elementwise losses (``'none'``) or a 0-D tensor.
    """
    op = "smooth_l1_loss"
    _check_reduction(reduction, op)
    input = _float_arg(input, op, "input")
    label = _float_target(label, input, op, "label")
    _same_shape(input, label, op, "input", "label")
    return _reduce(apply(_huber_kernel, input, label, delta=_f32(delta)), reduction)


def log_loss(input: Tensor, label: Tensor, epsilon: float = 1e-4, name=None) -> Tensor:
    """Negative log likelihood of a probability: ``-y*log(p+eps) - (1-y)*log(1-p+eps)``.

    Args:
        input (Tensor): probabilities ``[N, 1]``.
        label (Tensor): targets in ``[0, 1]``, same shape.
        epsilon (float): added inside the logs.

    Returns:
        Tensor: elementwise losses, same shape as ``input``.
    """
    op = "log_loss"
    input = _float_arg(input, op, "input")
    # the label is a constant here (Paddle's log_loss kernel gives it no gradient)
    label = _wrap(_like(label, input, op, "label")._data)
    _broadcastable(input, label, op)
    pos = _m.multiply(label, _m.log(_m.add(input, epsilon)))
    neg = _m.multiply(_m.scale(label, -1.0, 1.0),
                      _m.log(_m.add(_m.scale(input, -1.0, 1.0), epsilon)))
    return _m.neg(_m.add(pos, neg))


def poisson_nll_loss(input: Tensor, label: Tensor, log_input: bool = True, full: bool = False,
                     epsilon: float = 1e-8, reduction: str = "mean", name=None) -> Tensor:
    """Poisson negative log likelihood.

    ``exp(input) - label * input`` when ``log_input``, else ``input - label * log(input +
    epsilon)``; with ``full`` the Stirling term ``label*log(label) - label + 0.5*log(2*pi*label)``
    is added where ``label > 1``.

    ``input`` must be floating point, as Paddle documents: an integer one raises TypeError.
    Paddle 2.6.2 does not check that in dynamic mode and casts the label to the integer
    input's dtype, truncating it (and without ``log_input`` returns an integer loss): a bug
    there, not copied.

    Args:
        input (Tensor): the predicted rate (or its log when ``log_input``).
        label (Tensor): observed counts, same shape.
        log_input (bool): whether ``input`` is a log rate.
        full (bool): add the Stirling approximation term.
        epsilon (float): keeps ``log`` finite when ``log_input`` is False; must be > 0.
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.

    Returns:
        Tensor: elementwise losses (``'none'``) or a 0-D tensor.
    """
    op = "poisson_nll_loss"
    _check_reduction(reduction, op)
    if epsilon <= 0:
        raise ValueError(f"{op}: 'epsilon' must be positive, but received {epsilon}")
    input = _float_arg(input, op, "input")
    label = _like(label, input, op, "label")
    _broadcastable(input, label, op)
    if log_input:
        loss = _m.subtract(_m.exp(input), _m.multiply(label, input))
    else:
        loss = _m.subtract(input, _m.multiply(label, _m.log(_m.add(input, epsilon))))
    if full:
        big = _wrap(label._data > 1)
        # log of a label <= 1 is replaced by log(2): finite, and masked out below
        safe = _se.where(big, label, _m.add(_m.scale(label, 0.0), 2.0))
        stirling = _m.add(_m.subtract(_m.multiply(safe, _m.log(safe)), safe),
                          _m.scale(_m.log(_m.scale(safe, 2 * _math.pi)), 0.5))
        loss = _m.add(loss, _se.where(big, stirling, _m.scale(stirling, 0.0)))
    return _reduce(loss, reduction)


def gaussian_nll_loss(input: Tensor, label: Tensor, variance: Tensor, full: bool = False,
                      epsilon: float = 1e-6, reduction: str = "mean", name=None) -> Tensor:
    """Gaussian negative log likelihood ``0.5 * (log(var) + (input - label)**2 / var)``.

    The variance is clamped to at least ``epsilon`` (the clamp passes gradients through
    unchanged); with ``full`` the constant ``0.5 * log(2*pi)`` is added.

    The variance gets a gradient, so a network can learn it. Paddle 2.6.2 computes the same
    loss but gives ``variance`` no gradient at all (its clamp cuts the graph); that is not
    copied.

    Args:
        input (Tensor): predicted means ``[N, *]``.
        label (Tensor): targets: the shape of ``input``, or that shape with some dims 1
            (broadcast), as Paddle allows.
        variance (Tensor): predicted variances: same shape as ``input``, or with the last dim
            1, or with the last dim dropped (one variance per sample). Must be >= 0.
        full (bool): include the constant term.
        epsilon (float): lower bound for the variance.
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.

    Returns:
        Tensor: losses (``'none'``) or a 0-D tensor.
    """
    op = "gaussian_nll_loss"
    _check_reduction(reduction, op)
    input = _float_arg(input, op, "input")
    label = _float_target(label, input, op, "label")
    variance = _float_target(variance, input, op, "variance")
    xs, vs = input.shape, variance.shape
    ls = label.shape
    if ls != xs and not (len(ls) == len(xs) and all(b in (a, 1) for a, b in zip(xs, ls))):
        raise ValueError(f"{op}: 'label' must have the shape of 'input' ({xs}) or that shape "
                         f"with some dims 1, but got {ls}")
    if vs != xs:
        if xs[:-1] == vs:
            variance = _mp.unsqueeze(variance, -1)
        elif not (len(vs) == len(xs) and vs[-1] == 1 and vs[:-1] == xs[:-1]):
            raise ValueError(f"{op}: 'variance' of shape {vs} does not match 'input' of shape "
                             f"{xs}; expected the same shape, the last dim 1, or the last dim "
                             "dropped")
    if bool((variance._data < 0).any()):
        raise ValueError(f"{op}: 'variance' has negative values")
    # clamp the value only: the gradient flows to the variance as if unclamped
    lo = _xp(variance._data).maximum(variance._data, epsilon) - variance._data
    var = _m.add(variance, _wrap(lo.astype(variance._data.dtype, copy=False)))
    loss = _m.scale(_m.add(_m.log(var), _m.divide(_m.square(_m.subtract(input, label)), var)),
                    0.5)
    if full:
        loss = _m.add(loss, _f32(0.5 * _math.log(2 * _math.pi)))
    return _reduce(loss, reduction)


# --------------------------------------------------------------- binary classification
@op("binary_cross_entropy")
def _bce_kernel(x, y):
    xp = _xp(x)
    w = x.astype(_work(x), copy=False)
    yw = y.astype(w.dtype, copy=False)
    # logs are floored at -100, so p = 0 or 1 gives a large finite loss, not inf
    with np.errstate(divide="ignore"):
        out = -(yw * xp.maximum(xp.log(w), -100) + (1 - yw) * xp.maximum(xp.log1p(-w), -100))

    def bw(g):
        return ((g * (w - yw) / xp.maximum((1 - w) * w, 1e-12)).astype(x.dtype, copy=False),
                None)

    return out.astype(x.dtype, copy=False), bw


def binary_cross_entropy(input: Tensor, label: Tensor, weight=None, reduction: str = "mean",
                         name=None) -> Tensor:
    """Binary cross entropy of probabilities: ``-w * (y*log(p) + (1-y)*log(1-p))``.

    Args:
        input (Tensor): probabilities in ``[0, 1]``, any shape.
        label (Tensor): targets, same shape.
        weight (Tensor, optional): rescales each element (broadcast to ``input``).
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.

    Returns:
        Tensor: elementwise losses (``'none'``) or a 0-D tensor.

    Example:
        >>> F.binary_cross_entropy(paddle.to_tensor([0.5, 0.6]), paddle.to_tensor([1., 0.]))
    """
    op = "binary_cross_entropy"
    _check_reduction(reduction, op)
    input = _float_arg(input, op, "input")
    label = _like(label, input, op, "label")
    _same_shape(input, label, op, "input", "label")
    d, t = input._data, label._data
    # min/max reductions: no temporaries, a small fraction of the logs' cost (NaN passes)
    if d.size and (d.min() < 0 or d.max() > 1):
        raise ValueError(f"{op}: every value of 'input' must lie in [0, 1] (it is a "
                         "probability); apply sigmoid first or use "
                         "binary_cross_entropy_with_logits")
    if t.size and (t.min() < 0 or t.max() > 1):
        raise ValueError(f"{op}: every value of 'label' must lie in [0, 1] (a target "
                         f"probability), got values in [{float(t.min())}, {float(t.max())}]")
    loss = apply(_bce_kernel, input, label)
    if weight is not None:
        loss = _m.multiply(loss, _like(weight, input, op, "weight"))
    return _reduce(loss, reduction)


@op("binary_cross_entropy_with_logits")
def _bce_logits_kernel(x, y, pw):
    xp = _xp(x)
    w = x.astype(_work(x), copy=False)
    yw = y.astype(w.dtype, copy=False)
    sp_neg = _softplus_arr(-w, xp)
    lw = 1 if pw is None else 1 + (pw.astype(w.dtype, copy=False) - 1) * yw
    out = (1 - yw) * w + lw * sp_neg
    keep = y != -100      # Paddle's kernel ignores label -100
    out = xp.where(keep, out, 0)

    def bw(g):
        gx = g * ((1 - yw) - lw * _sigmoid(-w)) * keep
        return (gx.astype(x.dtype, copy=False), None, None)

    return out.astype(x.dtype, copy=False), bw


def binary_cross_entropy_with_logits(logit: Tensor, label: Tensor, weight=None,
                                     reduction: str = "mean", pos_weight=None,
                                     name=None) -> Tensor:
    """Sigmoid + binary cross entropy in one numerically stable kernel.

    ``loss = (1 - y) * x + (1 + (pos_weight - 1) * y) * log(1 + exp(-x))``, then times
    ``weight``: ``pos_weight`` scales the whole positive term ``-y * log(sigmoid(x))``, as
    Paddle's documentation describes. Paddle 2.6.2's CPU kernel scales only the
    ``log(1 + exp(-|x|))`` part of it, so for negative logits of positive labels its loss
    is smaller than the documented one (x = -2, y = 1, pos_weight = 3: 2.38 instead of 6.38);
    that is a bug there and is not copied. Without ``pos_weight`` (or where ``x >= 0`` or
    ``y = 0``) the two agree.

    Args:
        logit (Tensor): raw scores, any shape.
        label (Tensor): targets in ``[0, 1]``, same shape.
        weight (Tensor, optional): per-element weights (broadcast).
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.
        pos_weight (Tensor, optional): weight of positive examples, broadcast along the last
            dim (``[C]``).

    Returns:
        Tensor: elementwise losses (``'none'``) or a 0-D tensor.
    """
    op = "binary_cross_entropy_with_logits"
    _check_reduction(reduction, op)
    logit = _float_arg(logit, op, "logit")
    label = _float_target(label, logit, op, "label", "logit")
    _same_shape(logit, label, op, "logit", "label")
    pw = None
    if pos_weight is not None:
        pw = _like(pos_weight, logit, op, "pos_weight")
        try:
            np.broadcast_shapes(tuple(pw.shape), tuple(logit.shape))
        except ValueError:
            raise ValueError(f"{op}: 'pos_weight' of shape {pw.shape} does not broadcast to "
                             f"'logit' of shape {logit.shape}") from None
    loss = apply(_bce_logits_kernel, logit, label, pw)
    if weight is not None:
        loss = _m.multiply(loss, _like(weight, logit, op, "weight"))
    return _reduce(loss, reduction)


def sigmoid_focal_loss(logit: Tensor, label: Tensor, normalizer=None, alpha: float = 0.25,
                       gamma: float = 2.0, reduction: str = "sum", name=None) -> Tensor:
    """Focal loss on logits: ``alpha_t * (1 - p_t) ** gamma * BCE(logit, label)``.

    Args:
        logit (Tensor): raw scores ``[N, *]``.
        label (Tensor): targets in ``{0, 1}``, same shape.
        normalizer (Tensor, optional): a 1-element tensor the loss is divided by (typically
            the number of positives).
        alpha (float): weight of the positive class (``1 - alpha`` for negatives).
        gamma (float): focusing exponent.
        reduction (str): ``'none'``, ``'mean'`` or ``'sum'`` (default).

    Returns:
        Tensor: elementwise losses (``'none'``) or a 0-D tensor.
    """
    op = "sigmoid_focal_loss"
    _check_reduction(reduction, op)
    logit = _float_arg(logit, op, "logit")
    label = _like(label, logit, op, "label")
    _same_shape(logit, label, op, "logit", "label")
    if normalizer is not None:
        normalizer = _like(normalizer, logit, op, "normalizer")
        if normalizer.size != 1 or normalizer.ndim > 1:
            raise ValueError(f"{op}: 'normalizer' must be a tensor of shape [1] or [], but got "
                             f"{normalizer.shape}")
    pred = _act.sigmoid(logit)
    loss = binary_cross_entropy_with_logits(logit, label, reduction="none")
    one_minus_label = _m.scale(label, -1.0, 1.0)
    p_t = _m.add(_m.multiply(pred, label),
                 _m.multiply(_m.scale(pred, -1.0, 1.0), one_minus_label))
    loss = _m.multiply(_m.pow(_m.scale(p_t, -1.0, 1.0), float(gamma)), loss)
    if alpha != 0:
        alpha_t = _m.add(_m.scale(label, float(alpha)),
                         _m.scale(one_minus_label, 1.0 - float(alpha)))
        loss = _m.multiply(alpha_t, loss)
    if normalizer is not None:
        loss = _m.divide(loss, normalizer.reshape([]) if normalizer.ndim else normalizer)
    return _reduce(loss, reduction)


@op("kl_div")
def _kl_kernel(x, y):
    xp = _xp(x)
    w = x.astype(_work(x), copy=False)
    yw = y.astype(w.dtype, copy=False)
    pos = yw > 0
    # target * (log(target) - input) where target > 0, and 0 where it is not (0 * log 0 = 0)
    out = xp.where(pos, yw * (xp.log(xp.where(pos, yw, 1)) - w), 0)

    def bw(g):
        return ((-g * yw * pos).astype(x.dtype, copy=False), None)

    return out.astype(x.dtype, copy=False), bw


def kl_div(input: Tensor, label: Tensor, reduction: str = "mean", name=None) -> Tensor:
    """Kullback-Leibler divergence ``label * (log(label) - input)`` with ``input`` a log-prob.

    Args:
        input (Tensor): log-probabilities ``[N, *]``.
        label (Tensor): probabilities, same shape (entries <= 0 contribute 0).
        reduction (str): ``'none'``, ``'batchmean'`` (sum / N), ``'mean'`` (default, mean over
            every element) or ``'sum'``.

    Returns:
        Tensor: elementwise losses (``'none'``) or a 0-D tensor.
    """
    op = "kl_div"
    _check_reduction(reduction, op, ("none", "batchmean", "mean", "sum"))
    input = _float_arg(input, op, "input")
    label = _float_target(label, input, op, "label")
    _same_shape(input, label, op, "input", "label")
    loss = apply(_kl_kernel, input, label)
    if reduction == "batchmean":
        n = input.shape[0] if input.ndim else 1
        return _m.scale(_st.sum(loss), 1.0 / n) if n else _st.sum(loss)
    return _reduce(loss, reduction)


# ------------------------------------------------------------------ margin-based losses
def margin_ranking_loss(input: Tensor, other: Tensor, label: Tensor, margin: float = 0.0,
                        reduction: str = "mean", name=None) -> Tensor:
    """``max(0, -label * (input - other) + margin)``.

    Args:
        input (Tensor): first scores.
        other (Tensor): second scores (broadcast).
        label (Tensor): 1 when ``input`` should rank higher, -1 otherwise.
        margin (float): the margin.
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.

    Returns:
        Tensor: elementwise losses (``'none'``) or a 0-D tensor.
    """
    op = "margin_ranking_loss"
    _check_reduction(reduction, op)
    input = _float_arg(input, op, "input")
    other = _float_target(other, input, op, "other")
    label = _float_target(label, input, op, "label")
    _broadcastable(input, other, op, "input", "other")
    _broadcastable(input, label, op)
    out = _m.add(_m.multiply(_m.neg(label), _m.subtract(input, other)), float(margin))
    return _reduce(_act.relu(out), reduction)


def hinge_embedding_loss(input: Tensor, label: Tensor, margin: float = 1.0,
                         reduction: str = "mean", name=None) -> Tensor:
    """``input`` where ``label == 1`` and ``max(0, margin - input)`` where ``label == -1``.

    Args:
        input (Tensor): distances, any shape.
        label (Tensor): 1 or -1, same shape.
        margin (float): the margin for dissimilar pairs.
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.

    Returns:
        Tensor: elementwise losses (``'none'``) or a 0-D tensor.
    """
    op = "hinge_embedding_loss"
    _check_reduction(reduction, op)
    input = _float_arg(input, op, "input")
    label = tensor_arg(label, op, "label")
    _broadcastable(input, label, op)
    lab = label._data
    zero = _m.scale(input, 0.0)
    pos = _se.where(_wrap(lab == 1), input, zero)
    neg = _se.where(_wrap(lab == -1), _act.relu(_m.scale(input, -1.0, _f32(margin))), zero)
    return _reduce(_m.add(pos, neg), reduction)


def soft_margin_loss(input: Tensor, label: Tensor, reduction: str = "mean",
                     name=None) -> Tensor:
    """Two-class logistic loss ``log(1 + exp(-label * input))``.

    An integer ``input`` is computed in the default float dtype, as Paddle does (the label,
    -1 or 1, is cast to it).

    Args:
        input (Tensor): scores, any shape.
        label (Tensor): 1 or -1, same shape.
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.

    Returns:
        Tensor: elementwise losses (``'none'``) or a 0-D tensor.
    """
    op = "soft_margin_loss"
    _check_reduction(reduction, op)
    input = _lenient_input(input, op)
    label = _like(label, input, op, "label")
    _same_shape(input, label, op, "input", "label")
    # log(1 + exp(z)) at every z (no linear cut-off above a threshold)
    z = _m.neg(_m.multiply(label, input))
    return _reduce(_act.softplus(z, threshold=np.inf), reduction)


def multi_label_soft_margin_loss(input: Tensor, label: Tensor, weight=None,
                                 reduction: str = "mean", name=None) -> Tensor:
    """Multi-label one-versus-all logistic loss, averaged over the classes.

    ``-(y * log_sigmoid(x) + (1 - y) * log_sigmoid(-x)) * weight``, mean over the last dim.

    ``label`` must be floating point, as Paddle documents (float32/float64): an integer one
    raises TypeError. Paddle 2.6.2 does not check that in dynamic mode and returns an integer
    loss, its float terms truncated to integers on the way (0 for labels in {0, 1}): a bug
    there, not copied.

    Args:
        input (Tensor): scores ``[N, C]``.
        label (Tensor): 0/1 targets ``[N, C]``.
        weight (Tensor, optional): per-class weights (broadcast).
        reduction (str): ``'none'`` (shape ``[N]``), ``'mean'`` (default) or ``'sum'``.

    Returns:
        Tensor: per-sample losses (``'none'``) or a 0-D tensor.
    """
    op = "multi_label_soft_margin_loss"
    _check_reduction(reduction, op)
    input = _float_arg(input, op, "input")
    label = _float_target(label, input, op, "label")
    _same_shape(input, label, op, "input", "label")
    pos = _m.multiply(label, _act.log_sigmoid(input))
    neg = _m.multiply(_m.scale(label, -1.0, 1.0), _act.log_sigmoid(_m.neg(input)))
    loss = _m.neg(_m.add(pos, neg))
    if weight is not None:
        loss = _m.multiply(loss, _like(weight, input, op, "weight"))
    return _reduce(_st.mean(loss, axis=-1), reduction)


def multi_margin_loss(input: Tensor, label: Tensor, p: int = 1, margin: float = 1.0,
                      weight=None, reduction: str = "mean", name=None) -> Tensor:
    """Multi-class hinge loss ``sum_{j != y} max(0, w[y] * (margin - x[y] + x[j])) ** p / C``
    (``w[y] = 1`` without ``weight``), the formula Paddle documents.

    With ``weight`` and ``p = 2`` Paddle 2.6.2 computes something else: it sums every class
    and then takes off ``w[y] * margin**p / C`` for the target class where its term is
    ``(w[y] * margin)**p / C``, and it broadcasts that [N, 1] correction against the [N]
    sums (a [N, N] result for ``reduction='none'``, and the mean over every sample's weight
    in the others' losses); with a negative ``margin`` it also takes off ``margin**p / C``
    where the target's term is 0. Those are bugs there and are not copied. Otherwise the two
    agree, and the target class's share is taken off as Paddle's float32 constant, so float64
    losses agree with Paddle's to the last digit.

    An integer ``input`` is computed in the default float dtype, as Paddle does.

    Args:
        input (Tensor): scores ``[N, C]``.
        label (Tensor): class indices ``[N]`` (int).
        p (int): 1 or 2.
        margin (float): the margin.
        weight (Tensor, optional): per-class weights ``[C]``, applied by the target class.
        reduction (str): ``'none'`` (shape ``[N]``), ``'mean'`` (default) or ``'sum'``.

    Returns:
        Tensor: per-sample losses (``'none'``) or a 0-D tensor.
    """
    op = "multi_margin_loss"
    _check_reduction(reduction, op)
    if p not in (1, 2):
        raise ValueError(f"{op}: 'p' should be 1 or 2, but received {p}")
    input = _lenient_input(input, op)
    label = _int_arg(label, op, "label")
    if input.ndim != 2 or label.shape not in ([input.shape[0]], [input.shape[0], 1]):
        raise ValueError(f"{op}: expected 'input' [N, C] and 'label' [N], but got input "
                         f"{input.shape} and label {label.shape}")
    n, c = input.shape
    lab = label._data.reshape(n, 1).astype(np.int64)
    _check_labels(lab, lab == lab, c, op)
    target = _mp.take_along_axis(input, _wrap(lab), 1)
    diff = _m.add(_m.subtract(input, target), _f32(margin))   # margin - x[y] + x[j]
    if weight is not None:
        weight = _float_target(weight, input, op, "weight")
        if weight.shape != [c]:
            raise ValueError(f"{op}: 'weight' must have shape [{c}] (one weight per class), "
                             f"but got {weight.shape}")
        w_y = _mp.reshape(_mp.gather(weight, _wrap(lab.reshape(n))), [n, 1])
        diff = _m.multiply(diff, w_y)
    hinge = _act.relu(diff)
    if p == 2:
        hinge = _m.square(hinge)
    # every class is summed, then the target's own term max(0, w[y] * margin)**p is taken off
    # (its gradient cancels: x[y] - x[y] = 0)
    loss = _st.mean(hinge, axis=1)
    if weight is None:
        own = np.float32(max(float(margin), 0.0) ** p) / np.float32(c)
        return _reduce(_m.subtract(loss, float(own)), reduction)
    own = _act.relu(_m.scale(w_y, _f32(margin)))
    if p == 2:
        own = _m.square(own)
    return _reduce(_m.subtract(loss, _m.scale(_mp.reshape(own, [n]), 1.0 / c)), reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, label: Tensor, margin: float = 0,
                          reduction: str = "mean", name=None) -> Tensor:
    """``1 - cos(x1, x2)`` where ``label == 1`` and ``max(0, cos(x1, x2) - margin)`` where
    ``label == -1``.

    Args:
        input1 (Tensor): ``[N, M]`` or ``[M]``.
        input2 (Tensor): same shape.
        label (Tensor): 1 or -1, ``[N]`` (or ``[]`` for 1-D inputs).
        margin (float): in ``[-1, 1]``.
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.

    Returns:
        Tensor: per-pair losses (``'none'``) or a 0-D tensor.
    """
    op = "cosine_embedding_loss"
    _check_reduction(reduction, op)
    input1 = _float_arg(input1, op, "input1")
    input2 = _like(input2, input1, op, "input2")
    label = tensor_arg(label, op, "label")
    if label.ndim > 1:
        raise ValueError(f"{op}: 1-D 'label' expected (multi-target is not supported), but got "
                         f"shape {label.shape}")
    _same_shape(input1, input2, op, "input1", "input2")
    if input1.ndim > 2 or input1.ndim == 0:
        raise ValueError(f"{op}: 'input1' and 'input2' must be 1-D or 2-D, but got shape "
                         f"{input1.shape}")
    if input1.ndim == 2 and label.shape != [input1.shape[0]]:
        raise ValueError(f"{op}: 'label' of shape {label.shape} does not match the batch of "
                         f"'input1' {input1.shape}")
    prod = _st.sum(_m.multiply(input1, input2), axis=-1)
    m1 = _m.add(_st.sum(_m.square(input1), axis=-1), 1e-11)
    m2 = _m.add(_st.sum(_m.square(input2), axis=-1), 1e-11)
    cos = _m.divide(prod, _m.sqrt(_m.multiply(m1, m2)))
    lab = label._data
    zero = _m.scale(cos, 0.0)
    pos = _se.where(_wrap(lab == 1), _m.scale(cos, -1.0, 1.0), zero)
    neg = _se.where(_wrap(lab == -1), _act.relu(_m.add(cos, -_f32(margin))), zero)
    return _reduce(_m.add(pos, neg), reduction)


def triplet_margin_loss(input: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, epsilon: float = 1e-6, swap: bool = False,
                        reduction: str = "mean", name=None) -> Tensor:
    """``max(d(a, pos) - d(a, neg) + margin, 0)`` with ``d`` the p-norm distance.

    Args:
        input (Tensor): anchors ``[N, D]``.
        positive (Tensor): positives, same shape.
        negative (Tensor): negatives, same shape.
        margin (float): the margin.
        p (float): the norm degree.
        epsilon (float): added to the differences before the norm.
        swap (bool): use ``min(d(a, neg), d(pos, neg))`` as the negative distance.
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.

    Returns:
        Tensor: per-triplet losses (``'none'``) or a 0-D tensor.
    """
    from .distance import pairwise_distance

    op = "triplet_margin_loss"
    _check_reduction(reduction, op)
    input = _float_arg(input, op, "input")
    positive = _float_target(positive, input, op, "positive")
    negative = _float_target(negative, input, op, "negative")
    if not input.shape == positive.shape == negative.shape:
        raise ValueError(f"{op}: 'input', 'positive' and 'negative' must have the same shape, "
                         f"but got {input.shape}, {positive.shape} and {negative.shape}")
    d_pos = pairwise_distance(input, positive, p, epsilon)
    d_neg = pairwise_distance(input, negative, p, epsilon)
    if swap:
        d_neg = _m.minimum(d_neg, pairwise_distance(positive, negative, p, epsilon))
    return _reduce(_act.relu(_m.add(_m.subtract(d_pos, d_neg), float(margin))), reduction)


def triplet_margin_with_distance_loss(input: Tensor, positive: Tensor, negative: Tensor,
                                      distance_function=None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean",
                                      name=None) -> Tensor:
    """Triplet margin loss with a custom distance: ``max(d(a, p) - d(a, n) + margin, 0)``.

    Args:
        input (Tensor): anchors ``[N, *]``.
        positive (Tensor): positives, same shape.
        negative (Tensor): negatives, same shape.
        distance_function (callable, optional): ``d(x, y) -> Tensor`` of non-negative
            distances (default: :func:`pairwise_distance`).
        margin (float): the margin.
        swap (bool): use ``min(d(a, n), d(p, n))`` as the negative distance.
        reduction (str): ``'none'``, ``'mean'`` (default) or ``'sum'``.

    Returns:
        Tensor: per-triplet losses (``'none'``) or a 0-D tensor.
    """
    from .distance import pairwise_distance

    op = "triplet_margin_with_distance_loss"
    _check_reduction(reduction, op)
    input = _float_arg(input, op, "input")
    positive = _float_target(positive, input, op, "positive")
    negative = _float_target(negative, input, op, "negative")
    dist = pairwise_distance if distance_function is None else distance_function
    d_pos = tensor_arg(dist(input, positive), op, "distance_function(input, positive)")
    d_neg = tensor_arg(dist(input, negative), op, "distance_function(input, negative)")
    if swap:
        d_neg = _m.minimum(d_neg, tensor_arg(dist(positive, negative), op,
                                             "distance_function(positive, negative)"))
    if bool((d_pos._data < 0).any()) or bool((d_neg._data < 0).any()):
        raise ValueError(f"{op}: the positive and negative distances must be non-negative; "
                         "check the distance function")
    return _reduce(_act.relu(_m.add(_m.subtract(d_pos, d_neg), float(margin))), reduction)


# ------------------------------------------------------------------------ cross entropy
# Paddle's softmax cross entropy floors the shifted logits x - max(x) at -64 before taking
# log(sum(exp)) off them, in float32 and float64 alike: a confidently wrong class costs at
# most 64 + log(sum(exp(x - max)))
_LOGP_FLOOR = -64.0


@op("cross_entropy")
def _ce_hard_kernel(x, label, weight, axis, ignore_index, use_softmax, smoothing, reduction,
                    out_shape):
    """Fused (log-)softmax + label pick + weighting + reduction for integer labels.

    ``x`` is seen as ``[pre, C, post]`` around the class axis and ``label`` as ``[pre, post]``;
    the label is gathered with fancy indexing (no one-hot). Backward is ``p * g - g * target``
    with the target's mass added at the label positions only.
    """
    xp = _xp(x)
    pre, c, post = _split3(x.shape, axis)
    wd = _work(x)
    x3 = x.reshape(pre, c, post).astype(wd, copy=False)
    lab = label.reshape(pre, post).astype(np.int64, copy=False)
    valid = (lab != ignore_index) if not smoothing else xp.ones(lab.shape, dtype=bool)
    bad = _check_labels(lab, valid, c, "cross_entropy", on_device=True)
    idx = xp.where(valid if bad is None else valid & ~bad, lab, 0)
    rows, cols = _grid(pre, post, xp)
    picked = x3[rows, idx, cols]
    # The smoothed target is ``off`` everywhere plus ``on`` at the label. Paddle builds it in
    # float32 whatever the input's dtype (label_smooth on a float32 one-hot, then a cast), so
    # the same rounded values are used here: float64 losses agree with Paddle's
    on, off = 1.0, 0.0
    if smoothing:
        off = float(np.float32(smoothing) / np.float32(c))
        on = float(np.float32(np.float32(1) - np.float32(smoothing)) + np.float32(off)) - off
    if use_softmax:
        m = x3.max(axis=1, keepdims=True) if c else xp.zeros((pre, 1, post), wd)
        e = x3 - m
        xp.exp(e, out=e)
        s = e.sum(axis=1, keepdims=True)
        log_s = xp.log(s)[:, 0, :]
        e /= s                     # e now holds the softmax, kept for backward
        probs = e
        # Paddle's kernel floors each shifted logit x - max at -64 before subtracting
        # log(sum(exp)); the gradient stays softmax - target
        logp_t = xp.maximum(picked - m[:, 0, :], _LOGP_FLOOR) - log_s
        if smoothing:
            logp_sum = xp.maximum(x3 - m, _LOGP_FLOOR).sum(axis=1) - c * log_s
    else:
        probs = None
        with np.errstate(divide="ignore"):    # probability 0: an infinite loss, clamped below
            logp_t = xp.log(picked)
            if smoothing:
                logp_sum = xp.log(x3).sum(axis=1)
    if smoothing:
        nll = -(on * logp_t + off * logp_sum)
    else:
        nll = -logp_t
    if not use_softmax:
        # Paddle's kernel maps an infinite loss (probability 0) to 1e20
        nll = xp.where(xp.isinf(nll), xp.copysign(wd.type(1e20), nll), nll)
    if bad is not None:  # out-of-range labels on a GPU: NaN losses (see _check_labels)
        nll = xp.where(bad, wd.type(np.nan), nll)
    if weight is not None:
        wv = weight.astype(wd, copy=False)
        coef = wv[idx]
        if smoothing:
            coef = on * coef + off * wv.sum()
        coef = coef * valid
    else:
        coef = valid.astype(wd)
    loss = nll * coef
    if reduction == "none":
        out = loss.reshape(out_shape)
        denom = None
    else:
        total = loss.sum()
        denom = coef.sum() if reduction == "mean" else None
        if reduction == "mean":
            total = _div_or_zero(total, denom, xp)
        out = _arr(total, wd, xp)

    def bw(g):
        if reduction == "none":
            gl = g.reshape(pre, post).astype(wd, copy=False) * coef
        elif reduction == "sum":
            gl = g.astype(wd) * coef
        else:
            gl = _div_or_zero(g.astype(wd), denom, xp) * coef
        if use_softmax:
            gx = probs * gl[:, None, :]
            if smoothing:
                gx -= (gl * off)[:, None, :]
            gx[rows, idx, cols] -= gl * on
        else:
            gx = xp.zeros_like(x3)
            if smoothing:
                gx -= (gl * off)[:, None, :] / x3
            gx[rows, idx, cols] -= gl * on / picked
        gw = None
        if weight is not None:
            # d loss / d weight: each sample's nll (minus the mean, for 'mean') per its class
            if reduction == "none":
                r = g.reshape(pre, post).astype(wd, copy=False) * nll
            elif reduction == "sum":
                r = g.astype(wd) * nll
            else:
                r = (_div_or_zero(g.astype(wd) * (nll - out.astype(wd)), denom, xp)
                     if xp is not np or denom != 0 else xp.zeros_like(nll))
            r = r * valid
            gw = xp.bincount(idx[valid].reshape(-1), weights=(r[valid] * on).reshape(-1),
                             minlength=c)[:c]
            if smoothing:
                gw = gw + off * r.sum()
            gw = gw.astype(weight.dtype, copy=False)
        return gx.reshape(x.shape).astype(x.dtype, copy=False), None, gw

    return out.astype(x.dtype, copy=False), bw


@op("cross_entropy")
def _ce_soft_kernel(x, y, weight, axis, use_softmax, reduction):
    """Fused cross entropy against a soft (probability) label of x's shape."""
    xp = _xp(x)
    pre, c, post = _split3(x.shape, axis)
    wd = _work(x)
    x3 = x.reshape(pre, c, post).astype(wd, copy=False)
    y3 = y.reshape(pre, c, post).astype(wd, copy=False)
    if use_softmax:
        m = x3.max(axis=1, keepdims=True) if c else xp.zeros((pre, 1, post), wd)
        e = x3 - m
        xp.exp(e, out=e)
        s = e.sum(axis=1, keepdims=True)
        e /= s
        probs = e
        nll = -(y3 * (xp.maximum(x3 - m, _LOGP_FLOOR) - xp.log(s))).sum(axis=1)
    else:
        probs = None
        nll = -(y3 * xp.log(x3)).sum(axis=1)
    if weight is not None:
        coef = (y3 * weight.astype(wd, copy=False)[None, :, None]).sum(axis=1)
    else:
        coef = None
    loss = nll if coef is None else nll * coef
    oshape = list(x.shape)
    oshape[axis] = 1
    denom = None
    if reduction == "none":
        out = loss.reshape(oshape)
    else:
        total = loss.sum()
        if reduction == "mean":
            denom = coef.sum() if coef is not None else loss.size
            total = total / denom if denom != 0 else total * 0
        out = _arr(total, wd, xp)

    def bw(g):
        if reduction == "none":
            gl = g.reshape(pre, post).astype(wd, copy=False)
        else:
            gl = g.astype(wd) / (denom if reduction == "mean" and denom != 0 else 1)
            if reduction == "mean" and denom == 0:
                gl = gl * 0
            gl = xp.broadcast_to(gl, (pre, post))
        glc = gl if coef is None else gl * coef
        if use_softmax:
            gx = probs * (glc * y3.sum(axis=1))[:, None, :] - glc[:, None, :] * y3
        else:
            gx = -glc[:, None, :] * y3 / x3
        gw = None
        if weight is not None:
            r = gl * nll if reduction != "mean" else gl * (nll - out.astype(wd))
            gw = (r[:, None, :] * y3).sum(axis=(0, 2)).astype(weight.dtype, copy=False)
        return gx.reshape(x.shape).astype(x.dtype, copy=False), None, gw

    return out.astype(x.dtype, copy=False), bw


def _hard_label(input, label, axis, op):
    """Validate a hard label against ``input`` and return ``(label, out_shape)``.

    The label has input's shape with 1 at ``axis``, or input's shape without ``axis``.
    """
    label = tensor_arg(label, op, "label")
    if label._data.dtype.kind not in "iu":
        raise TypeError(f"{op}: 'label' must be an integer tensor (int16, int32 or int64) when "
                        f"soft_label is False, but got {label.dtype.name}")
    xs, ls = input.shape, label.shape
    keep = xs[:axis] + [1] + xs[axis + 1:]
    drop = xs[:axis] + xs[axis + 1:]
    if ls != keep and ls != drop:
        raise ValueError(f"{op}: 'label' of shape {ls} does not match 'input' of shape {xs} "
                         f"(class axis {axis}); expected {keep} or {drop}")
    return label, ls


def cross_entropy(input: Tensor, label: Tensor, weight=None, ignore_index: int = -100,
                  reduction: str = "mean", soft_label: bool = False, axis: int = -1,
                  use_softmax: bool = True, label_smoothing: float = 0.0,
                  name=None) -> Tensor:
    """Softmax cross entropy (or plain cross entropy on probabilities) in one fused kernel.

    Args:
        input (Tensor): logits (or probabilities when ``use_softmax=False``), classes along
            ``axis``.
        label (Tensor): class indices (int16/int32/int64) with input's shape without ``axis``
            or with 1 at ``axis``; or, with ``soft_label``, a distribution of input's shape.
        weight (Tensor, optional): per-class weights ``[C]``.
        ignore_index (int): hard-label value that contributes nothing (and is not counted by
            ``'mean'``).
        reduction (str): ``'none'``, ``'mean'`` (default; a weighted mean with ``weight``) or
            ``'sum'``.
        soft_label (bool): whether ``label`` is a distribution.
        axis (int): the class axis.
        use_softmax (bool): apply softmax to ``input`` first.
        label_smoothing (float): mixes hard labels with the uniform distribution (the
            smoothed targets are rounded to float32, as Paddle builds them).

    Returns:
        Tensor: per-sample losses (``'none'``: label's shape for hard labels, input's shape with
        1 at ``axis`` for soft labels) or a 0-D tensor.

    Example:
        >>> x = paddle.to_tensor([[2., 1., 0.1]])
        >>> F.cross_entropy(x, paddle.to_tensor([0]))   # shape []
    """
    op = "cross_entropy"
    _check_reduction(reduction, op)
    input = _float_arg(input, op, "input")
    if input.ndim == 0:
        raise ValueError(f"{op}: 'input' must have at least 1 dim (the classes), got a 0-D "
                         "tensor")
    ax = axis + input.ndim if axis < 0 else axis
    if not 0 <= ax < input.ndim:
        raise ValueError(f"{op}: 'axis' = {axis} is out of range for 'input' of rank "
                         f"{input.ndim}")
    c = input.shape[ax]
    if weight is not None:
        weight = _like(weight, input, op, "weight")
        if weight.shape != [c]:
            raise ValueError(f"{op}: 'weight' must have shape [{c}] (one weight per class), but "
                             f"got {weight.shape}")
    if not 0 <= label_smoothing <= 1:
        raise ValueError(f"{op}: 'label_smoothing' must be in [0, 1], got {label_smoothing}")
    if soft_label:
        label = _float_target(label, input, op, "label")
        _same_shape(input, label, op, "input", "label")
        return apply(_ce_soft_kernel, input, label, weight, axis=ax,
                     use_softmax=bool(use_softmax), reduction=reduction)
    label, out_shape = _hard_label(input, label, ax, op)
    if label_smoothing:
        # smoothed labels are soft labels: the loss keeps the class axis, as with soft_label
        out_shape = input.shape[:ax] + [1] + input.shape[ax + 1:]
    return apply(_ce_hard_kernel, input, label, weight, axis=ax, ignore_index=int(ignore_index),
                 use_softmax=bool(use_softmax), smoothing=float(label_smoothing),
                 reduction=reduction, out_shape=tuple(out_shape))


@op("softmax_with_cross_entropy")
def _swce_kernel(x, label, axis, ignore_index, soft):
    """softmax_with_cross_entropy with the softmax as a second, differentiable output."""
    xp = _xp(x)
    oshape = list(x.shape)
    oshape[axis] = 1
    if soft:
        loss, lbw = _ce_soft_kernel(x, label, None, axis, True, "none")
    else:
        loss, lbw = _ce_hard_kernel(x, label, None, axis, ignore_index, True, 0.0, "none",
                                    tuple(oshape))
    pre, c, post = _split3(x.shape, axis)
    p = _softmax_arr(x.reshape(pre, c, post).astype(_work(x), copy=False), 1, xp)

    def bw(gl, gp):
        gx = lbw(gl)[0] if gl is not None else xp.zeros(x.shape, x.dtype)
        if gp is not None:
            gp3 = gp.reshape(pre, c, post).astype(p.dtype, copy=False)
            gs = p * (gp3 - (gp3 * p).sum(axis=1, keepdims=True))
            gx = gx + gs.reshape(x.shape).astype(x.dtype, copy=False)
        return gx, None

    return (loss, p.reshape(x.shape).astype(x.dtype, copy=False)), bw


def softmax_with_cross_entropy(logits: Tensor, label: Tensor, soft_label: bool = False,
                               ignore_index: int = -100, numeric_stable_mode: bool = True,
                               return_softmax: bool = False, axis: int = -1):
    """Softmax followed by cross entropy, unreduced: the loss keeps the class axis as size 1.

    Args:
        logits (Tensor): unscaled scores, classes along ``axis``.
        label (Tensor): hard labels (int, input's shape with 1 at ``axis`` or without
            ``axis``) or, with ``soft_label``, a distribution of logits' shape.
        soft_label (bool): whether ``label`` is a distribution.
        ignore_index (int): hard-label value whose loss is 0.
        numeric_stable_mode (bool): kept for compatibility (always stable).
        return_softmax (bool): also return the softmax.
        axis (int): the class axis.

    Returns:
        Tensor, or ``(loss, softmax)`` with ``return_softmax``.
    """
    op = "softmax_with_cross_entropy"
    logits = _float_arg(logits, op, "logits")
    if logits.ndim == 0:
        raise ValueError(f"{op}: 'logits' must have at least 1 dim, got a 0-D tensor")
    ax = axis + logits.ndim if axis < 0 else axis
    if not 0 <= ax < logits.ndim:
        raise ValueError(f"{op}: 'axis' = {axis} is out of range for rank {logits.ndim}")
    if soft_label:
        label = _float_target(label, logits, op, "label", "logits")
        _same_shape(logits, label, op, "logits", "label")
    else:
        label, _ = _hard_label(logits, label, ax, op)
    if return_softmax:
        return apply(_swce_kernel, logits, label, axis=ax, ignore_index=int(ignore_index),
                     soft=bool(soft_label))
    if soft_label:
        return apply(_ce_soft_kernel, logits, label, None, axis=ax, use_softmax=True,
                     reduction="none")
    oshape = list(logits.shape)
    oshape[ax] = 1
    return apply(_ce_hard_kernel, logits, label, None, axis=ax, ignore_index=int(ignore_index),
                 use_softmax=True, smoothing=0.0, reduction="none", out_shape=tuple(oshape))


@op("nll_loss")
def _nll_kernel(x, label, weight, ignore_index, reduction):
    """Pick ``-x[n, label]`` along axis 1, weight, reduce; x is ``[N, C, *]``."""
    xp = _xp(x)
    pre, c, post = _split3(x.shape, 1)
    wd = _work(x)
    x3 = x.reshape(pre, c, post)
    lab = label.reshape(pre, post).astype(np.int64, copy=False)
    valid = lab != ignore_index
    idx = xp.where(valid, lab, 0)
    _check_labels(lab, valid, c, "nll_loss")
    rows, cols = _grid(pre, post, xp)
    picked = x3[rows, idx, cols].astype(wd, copy=False)
    coef = (weight.astype(wd, copy=False)[idx] if weight is not None else 1) * valid
    coef = coef.astype(wd, copy=False)
    loss = -picked * coef
    denom = None
    if reduction == "none":
        out = loss.reshape(label.shape)
    else:
        total = loss.sum()
        if reduction == "mean":
            denom = coef.sum()
            total = total / denom if denom != 0 else total * 0
        out = _arr(total, wd, xp)

    def bw(g):
        if reduction == "none":
            gl = g.reshape(pre, post).astype(wd, copy=False)
        elif reduction == "sum":
            gl = xp.broadcast_to(g.astype(wd), (pre, post))
        else:
            gl = xp.broadcast_to(g.astype(wd) / denom if denom != 0 else g.astype(wd) * 0,
                                 (pre, post))
        gx = xp.zeros((pre, c, post), dtype=x.dtype)
        gx[rows, idx, cols] = (-gl * coef).astype(x.dtype, copy=False)
        # Paddle's nll_loss gives no gradient to the class weights
        return gx.reshape(x.shape), None, None

    return out.astype(x.dtype, copy=False), bw


def nll_loss(input: Tensor, label: Tensor, weight=None, ignore_index: int = -100,
             reduction: str = "mean", name=None) -> Tensor:
    """Negative log likelihood of log-probabilities: ``-weight[y] * input[n, y]``.

    Args:
        input (Tensor): log-probabilities ``[N, C]`` or ``[N, C, d1, ...]``.
        label (Tensor): class indices ``[N]`` or ``[N, d1, ...]`` (int).
        weight (Tensor, optional): per-class weights ``[C]``.
        ignore_index (int): label value that contributes nothing.
        reduction (str): ``'none'``, ``'mean'`` (default; weighted mean) or ``'sum'``.

    Returns:
        Tensor: per-element losses (``'none'``, label's shape) or a 0-D tensor.
    """
    op = "nll_loss"
    _check_reduction(reduction, op)
    input = _float_arg(input, op, "input")
    label = _int_arg(label, op, "label")
    if input.ndim < 2:
        raise ValueError(f"{op}: 'input' must be [N, C] or [N, C, d1, ...], but got shape "
                         f"{input.shape}")
    expected = [input.shape[0]] + input.shape[2:]
    if label.shape != expected:
        raise ValueError(f"{op}: 'label' of shape {label.shape} does not match 'input' of "
                         f"shape {input.shape}; expected {expected}")
    if weight is not None:
        weight = _like(weight, input, op, "weight")
        if weight.shape != [input.shape[1]]:
            raise ValueError(f"{op}: 'weight' must have shape [{input.shape[1]}], but got "
                             f"{weight.shape}")
    return apply(_nll_kernel, input, label, weight, ignore_index=int(ignore_index),
                 reduction=reduction)


def dice_loss(input: Tensor, label: Tensor, epsilon: float = 1e-5, name=None) -> Tensor:
    """Dice loss ``1 - 2 * |X ∩ Y| / (|X| + |Y| + eps)``, averaged over the batch.

    Args:
        input (Tensor): class probabilities ``[N, *, C]``.
        label (Tensor): class indices ``[N, *, 1]`` (int).
        epsilon (float): smoothing term in the denominator.

    Returns:
        Tensor: 0-D mean dice loss.
    """
    op = "dice_loss"
    input = _float_arg(input, op, "input")
    label = _int_arg(label, op, "label")
    if input.ndim < 2 or label.ndim != input.ndim or label.shape[-1] != 1 \
            or label.shape[:-1] != input.shape[:-1]:
        raise ValueError(f"{op}: expected 'input' [N, *, C] and 'label' [N, *, 1], but got "
                         f"input {input.shape} and label {label.shape}")
    c = input.shape[-1]
    lab = label._data.astype(np.int64)
    _check_labels(lab, lab == lab, c, op)
    dims = list(range(1, input.ndim))
    # |X ∩ Y| picks the labelled class; |Y| is the number of positions (one label each)
    inse = _st.sum(_mp.take_along_axis(input, _wrap(lab), -1), axis=dims)
    count = float(np.prod(input.shape[1:-1], dtype=np.int64))
    denom = _m.add(_st.sum(input, axis=dims), count + _f32(epsilon))
    return _st.mean(_m.scale(_m.divide(inse, denom), -2.0, 1.0))


def npair_loss(anchor: Tensor, positive: Tensor, labels: Tensor, l2_reg: float = 0.002):
    """N-pair loss: softmax cross entropy of anchor·positiveᵀ against same-label targets, plus
    an L2 penalty on the embeddings.

    Args:
        anchor (Tensor): embeddings ``[N, D]``.
        positive (Tensor): embeddings ``[N, D]``.
        labels (Tensor): ``[N]`` class labels.
        l2_reg (float): weight of the L2 penalty.

    Returns:
        Tensor: 0-D loss.
    """
    op = "npair_loss"
    anchor = _float_arg(anchor, op, "anchor")
    positive = _like(positive, anchor, op, "positive")
    labels = tensor_arg(labels, op, "labels")
    if anchor.ndim != 2 or positive.shape != anchor.shape:
        raise ValueError(f"{op}: 'anchor' and 'positive' must both be [N, D], but got "
                         f"{anchor.shape} and {positive.shape}")
    n = anchor.shape[0]
    if labels.size != n:
        raise ValueError(f"{op}: 'labels' must have {n} entries, but got shape {labels.shape}")
    lab = labels._data.reshape(n, 1)
    same = (lab == lab.T).astype(np.float32)
    target = (same / same.sum(axis=1, keepdims=True)).astype(anchor._data.dtype)
    t = _wrap(target)
    l2 = _m.add(_st.mean(_st.sum(_m.square(anchor), axis=1)),
                _st.mean(_st.sum(_m.square(positive), axis=1)))
    l2 = _m.scale(l2, 0.25 * float(l2_reg))
    sim = _la.matmul(anchor, positive, transpose_y=True)
    ce = softmax_with_cross_entropy(sim, t, soft_label=True)
    ce = _st.mean(_st.sum(_m.multiply(t, ce), axis=0))
    return _m.add(l2, ce)


# ---------------------------------------------------------------- hierarchical sigmoid
def _scatter_rows(dst, idx, vals):
    """``dst[idx[k]] += vals[k]`` with repeated indices accumulated (vectorised)."""
    backend.index_add(dst, idx, vals)
    return dst


@op("hsigmoid_loss")
def _hsig_kernel(x, w, b, label, ptable, pcode, num_classes):
    xp = _xp(x)
    wd = _work(x)
    xw = x.astype(wd, copy=False)
    ww = w.astype(wd, copy=False)
    if ptable is None:
        # the default complete binary tree: node codes c = label + num_classes, read bit by bit
        code = label.reshape(-1).astype(np.int64) + num_classes
        nbits = int(num_classes - 1).bit_length()
        j = xp.arange(nbits, dtype=np.int64)[None, :]
        length = xp.frexp(code.astype(np.float64))[1].astype(np.int64) - 1
        index = (code[:, None] >> (j + 1)) - 1
        bits = ((code[:, None] >> j) & 1).astype(wd)
        mask = j < length[:, None]
    else:
        index = ptable.astype(np.int64, copy=False)
        bits = pcode.astype(wd)
        mask = xp.cumprod(index >= 0, axis=1).astype(bool)
    index = xp.where(mask, index, 0)
    if index.size and bool(((index >= w.shape[0]) & mask).any()):
        raise ValueError(f"hsigmoid_loss: a path index reaches {int(index.max())}, but "
                         f"'weight' has only {w.shape[0]} rows")
    wsel = ww[index]                                  # [N, L, D]
    pre = xp.einsum("nd,nld->nl", xw, wsel)
    if b is not None:
        pre = pre + b.astype(wd, copy=False).reshape(-1)[index]
    pre = xp.clip(xp.where(mask, pre, 0), -40.0, 40.0)
    # unused path slots keep pre = 0 and so add log(2) each, as Paddle's kernel does
    sp = _softplus_arr(pre, xp)
    out = (sp.sum(axis=1) - (bits * pre * mask).sum(axis=1))[:, None]

    def bw(g):
        dpre = (_sigmoid(pre) - bits) * mask * g.astype(wd, copy=False)
        gx = xp.einsum("nl,nld->nd", dpre, wsel).astype(x.dtype, copy=False)
        sel = mask.reshape(-1)
        rows_ = index.reshape(-1)[sel]
        contrib = (dpre[:, :, None] * xw[:, None, :]).reshape(-1, xw.shape[1])[sel]
        gw = _scatter_rows(xp.zeros(w.shape, wd), rows_, contrib).astype(w.dtype, copy=False)
        gb = None
        if b is not None:
            gb = _scatter_rows(xp.zeros(b.size, wd), rows_, dpre.reshape(-1)[sel])
            gb = gb.reshape(b.shape).astype(b.dtype, copy=False)
        return gx, gw, gb, None, None, None

    return out.astype(x.dtype, copy=False), bw


def hsigmoid_loss(input: Tensor, label: Tensor, num_classes: int, weight: Tensor, bias=None,
                  path_table=None, path_code=None, is_sparse: bool = False,
                  name=None) -> Tensor:
    """Hierarchical sigmoid loss over a binary tree of classes.

    With the default tree, class ``y`` is the leaf with code ``y + num_classes``; each bit of
    the code below the root is one sigmoid decision with weight row ``(code >> (j + 1)) - 1``.
    A custom tree gives the node rows (``path_table``, padded with -1) and the decisions
    (``path_code``) per sample.

    Args:
        input (Tensor): features ``[N, D]``.
        label (Tensor): class indices ``[N]`` or ``[N, 1]`` (int64).
        num_classes (int): number of classes (>= 2).
        weight (Tensor): node weights ``[num_classes - 1, D]`` (default tree) or
            ``[num_nodes, D]``.
        bias (Tensor, optional): node biases ``[num_classes - 1, 1]``.
        path_table (Tensor, optional): ``[N, L]`` node ids per sample, -1 padded.
        path_code (Tensor, optional): ``[N, L]`` 0/1 decisions per sample.
        is_sparse (bool): accepted for compatibility (gradients are dense).

    Returns:
        Tensor: per-sample losses ``[N, 1]``.
    """
    op = "hsigmoid_loss"
    input = _float_arg(input, op, "input")
    weight = _like(weight, input, op, "weight")
    label = _int_arg(label, op, "label")
    if input.ndim != 2:
        raise ValueError(f"{op}: 'input' must be [N, D], but got shape {input.shape}")
    n, d = input.shape
    if label.size != n:
        raise ValueError(f"{op}: 'label' must have {n} entries, but got shape {label.shape}")
    if weight.ndim != 2 or weight.shape[1] != d:
        raise ValueError(f"{op}: 'weight' must be [num_nodes, {d}], but got {weight.shape}")
    custom = path_table is not None or path_code is not None
    if custom and (path_table is None or path_code is None):
        raise ValueError(f"{op}: 'path_table' and 'path_code' must be given together")
    if not custom:
        if num_classes < 2:
            raise ValueError(f"{op}: 'num_classes' must be >= 2, but got {num_classes}")
        lab = label._data
        if lab.size and bool(((lab < 0) | (lab >= num_classes)).any()):
            raise ValueError(f"{op}: labels must lie in [0, {num_classes}), but got values in "
                             f"[{int(lab.min())}, {int(lab.max())}]")
        pt = pc = None
    else:
        pt = _int_arg(path_table, op, "path_table")
        pc = tensor_arg(path_code, op, "path_code")
        if pt.ndim != 2 or pt.shape[0] != n or pc.shape != pt.shape:
            raise ValueError(f"{op}: 'path_table' and 'path_code' must both be [{n}, L], but "
                             f"got {pt.shape} and {pc.shape}")
    if bias is not None:
        bias = _like(bias, input, op, "bias")
        if bias.size != weight.shape[0]:
            raise ValueError(f"{op}: 'bias' must have {weight.shape[0]} entries (one per node), "
                             f"but got shape {bias.shape}")
    return apply(_hsig_kernel, input, weight, bias, label, pt, pc, num_classes=int(num_classes))


# ----------------------------------------------------------------- margin cross entropy
@op("margin_cross_entropy")
def _margin_ce_kernel(x, label, m1, m2, m3, scale, reduction):
    xp = _xp(x)
    n, c = x.shape
    wd = _work(x)
    xw = x.astype(wd, copy=False)
    idx = label.reshape(-1).astype(np.int64)
    rows = xp.arange(n, dtype=np.int64)
    t = xp.clip(xw[rows, idx], -1.0, 1.0)
    theta = xp.arccos(t)
    z = xw.copy()
    z[rows, idx] = xp.cos(m1 * theta + m2) - m3
    z *= scale
    mx = z.max(axis=1, keepdims=True)
    p = xp.exp(z - mx)
    s = p.sum(axis=1, keepdims=True)
    p /= s
    loss = (xp.log(s) + mx)[:, 0] - z[rows, idx]
    if reduction is None:
        out = loss[:, None]
    elif reduction == "sum":
        out = _arr(loss.sum(), wd, xp)
    else:
        out = _arr(loss.mean(), wd, xp)

    def bw(g, gp):
        if reduction is None:
            gl = g.reshape(n).astype(wd, copy=False)
        else:
            gl = xp.broadcast_to(g.astype(wd) / (n if reduction == "mean" else 1), (n,))
        gz = p * gl[:, None]
        gz[rows, idx] -= gl
        if gp is not None:
            gpw = gp.astype(wd, copy=False)
            gz += p * (gpw - (gpw * p).sum(axis=1, keepdims=True))
        gx = gz * scale
        if m1 != 1.0 or m2 != 0.0:
            # chain rule through cos(m1 * acos(t) + m2) at the target logit
            den = xp.sqrt(xp.maximum(1 - t * t, 1e-30))
            gx[rows, idx] *= m1 * xp.sin(m1 * theta + m2) / den
        return gx.astype(x.dtype, copy=False), None

    return (out.astype(x.dtype, copy=False), p.astype(x.dtype, copy=False)), bw


def margin_cross_entropy(logits: Tensor, label: Tensor, margin1: float = 1.0,
                         margin2: float = 0.5, margin3: float = 0.0, scale: float = 64.0,
                         group=None, return_softmax: bool = False, reduction: str = "mean"):
    """Additive/angular margin softmax loss (ArcFace, CosFace, SphereFace family).

    The target logit ``cos(theta)`` becomes ``cos(margin1 * theta + margin2) - margin3``, every
    logit is multiplied by ``scale``, then softmax cross entropy is taken.

    Args:
        logits (Tensor): cosine similarities ``[N, C]`` (normalised features times normalised
            class centres), in ``[-1, 1]``.
        label (Tensor): class indices ``[N]`` or ``[N, 1]``.
        margin1 (float): multiplicative angular margin.
        margin2 (float): additive angular margin.
        margin3 (float): additive cosine margin.
        scale (float): logit scale.
        group: model-parallel communication group; only the single-process case (None or
            False) is supported.
        return_softmax (bool): also return the softmax of the margined logits.
        reduction (str|None): ``'mean'`` (default), ``'sum'`` or None (per-sample ``[N, 1]``).

    Returns:
        Tensor, or ``(loss, softmax)`` with ``return_softmax``.
    """
    op = "margin_cross_entropy"
    _check_reduction(reduction, op, ("mean", "sum", None))
    if group not in (None, False) and getattr(group, "nranks", 1) != 1:
        raise ValueError(f"{op}: model-parallel groups with more than one rank are not "
                         "supported; pass group=None")
    logits = _float_arg(logits, op, "logits")
    label = _int_arg(label, op, "label")
    if logits.ndim != 2:
        raise ValueError(f"{op}: 'logits' must be [N, C], but got shape {logits.shape}")
    n, c = logits.shape
    if label.shape not in ([n], [n, 1]):
        raise ValueError(f"{op}: 'label' must be [{n}] or [{n}, 1], but got {label.shape}")
    lab = label._data.astype(np.int64)
    _check_labels(lab, lab == lab, c, op)
    loss, sm = apply(_margin_ce_kernel, logits, label, m1=float(margin1), m2=float(margin2),
                     m3=float(margin3), scale=float(scale), reduction=reduction)
    return (loss, sm) if return_softmax else loss


# ---------------------------------------------------------------------------- CTC loss
@op("ctc_loss")
def _ctc_kernel(logits, labels, in_len, lab_len, blank, reduction, norm_by_times):
    """CTC on softmax(logits) ``[T, B, C]``: alpha/beta in log space, one step per time frame,
    vectorised over the batch and the extended label positions.

    alpha and beta live in arrays padded with two -inf columns, so the three predecessors
    (same, previous, and - where allowed - second previous label position) are plain views and
    each frame costs a handful of ufunc calls; ``logaddexp`` handles the -inf of unreachable
    states exactly.
    """
    xp = _xp(logits)
    t_max, bsz, c = logits.shape
    lmax = labels.shape[1]
    s_max = 2 * lmax + 1
    neg = -np.inf
    x = logits.astype(np.float64)
    lp = x - x.max(axis=2, keepdims=True)
    lp -= xp.log(xp.exp(lp).sum(axis=2, keepdims=True))           # log-softmax [T, B, C]
    tl = in_len.reshape(-1).astype(np.int64)
    ll = lab_len.reshape(-1).astype(np.int64)
    lab = labels.astype(np.int64)
    # extended labels: blank, l1, blank, l2, ..., blank
    ext = xp.full((bsz, s_max), blank, dtype=np.int64)
    ext[:, 1::2] = lab
    s_len = 2 * ll + 1
    s_idx = xp.arange(s_max, dtype=np.int64)[None, :]
    in_seq = s_idx < s_len[:, None]
    prev2 = xp.concatenate([xp.full((bsz, 2), -1, np.int64), ext[:, :-2]], axis=1)[:, :s_max]
    # 0 where the skip over a blank is allowed (a new, different label), -inf elsewhere
    skip = xp.where((ext != blank) & (ext != prev2) & (s_idx >= 2), 0.0, neg)
    brow = xp.arange(bsz, dtype=np.int64)[:, None]
    emit = xp.where(in_seq[None], lp[:, brow, ext], neg)            # [T, B, S]
    alpha = xp.full((t_max, bsz, s_max + 2), neg)                   # 2 -inf pad columns left
    if t_max:
        alpha[0, :, 2] = emit[0, :, 0]
        if s_max > 1:
            alpha[0, :, 3] = emit[0, :, 1]
    tmp = xp.empty((bsz, s_max))
    for t in range(1, t_max):
        a = alpha[t - 1]
        xp.logaddexp(a[:, 2:], a[:, 1:-1], out=tmp)
        cur = alpha[t, :, 2:]
        xp.logaddexp(tmp, a[:, :-2] + skip, out=cur)
        cur += emit[t]
    alpha = alpha[:, :, 2:]
    bidx = xp.arange(bsz, dtype=np.int64)
    last_t = xp.maximum(tl - 1, 0)
    a_end = alpha[last_t, bidx] if t_max else xp.full((bsz, s_max), neg)
    end1 = a_end[bidx, s_len - 1]
    end2 = xp.where(ll > 0, a_end[bidx, xp.maximum(s_len - 2, 0)], neg)
    loglik = xp.logaddexp(end1, end2)
    # a label sequence longer than the frames allow (repeats need a blank in between) has no
    # alignment; Paddle (warp-ctc) reports loss 0 and gradient 0 for it
    repeats = ((lab[:, 1:] == lab[:, :-1]) &
               (xp.arange(1, lmax, dtype=np.int64)[None, :] < ll[:, None])).sum(axis=1) \
        if lmax > 1 else xp.zeros(bsz, np.int64)
    feasible = (ll + repeats <= tl) & xp.isfinite(loglik) & (tl > 0)
    nll = xp.where(feasible, -loglik, 0.0)
    if reduction == "none":
        out = nll
    elif reduction == "sum":
        out = _arr(nll.sum(), np.float64, xp)
    else:
        out = _arr((nll / xp.maximum(ll, 1)).mean(), np.float64, xp)

    def bw(g):
        # beta[t, s]: log-probability of the rest after frame t (its own emission excluded),
        # started at each sequence's last frame; 2 -inf pad columns on the right
        beta = xp.full((t_max, bsz, s_max + 2), neg)
        term = xp.full((bsz, s_max), neg)
        term[bidx, s_len - 1] = 0.0
        term[bidx, xp.maximum(s_len - 2, 0)] = xp.where(ll > 0, 0.0, term[bidx, 0])
        # skip into position s + 2 is allowed when skip[s + 2] is
        nskip = xp.concatenate([skip[:, 2:], xp.full((bsz, 2), neg)], axis=1)[:, :s_max]
        is_last = (xp.arange(t_max, dtype=np.int64)[:, None] == (tl - 1)[None, :])
        be = xp.full((bsz, s_max + 2), neg)
        for t in range(t_max - 1, -1, -1):
            cur = beta[t, :, :-2]
            if t + 1 < t_max:
                be[:, :-2] = beta[t + 1, :, :-2] + emit[t + 1]
                xp.logaddexp(be[:, :-2], be[:, 1:-1], out=tmp)
                xp.logaddexp(tmp, be[:, 2:] + nskip, out=cur)
            cur[is_last[t]] = term[is_last[t]]
        beta = beta[:, :, :-2]
        ll_safe = xp.where(feasible, loglik, 0.0)
        with np.errstate(over="ignore"):
            occ = xp.exp(alpha + beta - ll_safe[None, :, None])    # [T, B, S] occupancies
        occ = xp.where(xp.isfinite(occ), occ, 0.0)
        # sum the occupancies of each class: bincount over (t, b, class) keys
        key = (xp.arange(t_max, dtype=np.int64)[:, None, None] * bsz
               + bidx[None, :, None]) * c + ext[None, :, :]
        post = xp.bincount(key.reshape(-1), weights=occ.reshape(-1),
                           minlength=t_max * bsz * c).reshape(t_max, bsz, c)
        grad = xp.exp(lp) - post
        tmask = xp.arange(t_max, dtype=np.int64)[:, None] < tl[None, :]
        if reduction == "none":
            gb = g.astype(np.float64).reshape(bsz)
        elif reduction == "sum":
            gb = xp.full(bsz, float(g))
        else:
            gb = float(g) / (bsz * xp.maximum(ll, 1).astype(np.float64))
        scale_b = gb * feasible
        if norm_by_times:
            scale_b = scale_b / xp.maximum(tl, 1)
        grad *= (tmask * scale_b[None, :])[:, :, None]
        return grad.astype(logits.dtype), None, None, None

    return out.astype(logits.dtype), bw


def _lengths(v, op, arg, n):
    v = _int_arg(v, op, arg)
    if v.size != n:
        raise ValueError(f"{op}: '{arg}' must have {n} entries (one per sequence), but got "
                         f"shape {v.shape}")
    return v


def ctc_loss(log_probs: Tensor, labels: Tensor, input_lengths: Tensor, label_lengths: Tensor,
             blank: int = 0, reduction: str = "mean", norm_by_times: bool = False) -> Tensor:
    """Connectionist Temporal Classification loss (as Paddle's warp-ctc: softmax is applied to
    ``log_probs`` over the class dim, so log-probabilities and raw logits give the same loss).

    Args:
        log_probs (Tensor): ``[T, B, C]`` scores, padded in time.
        labels (Tensor): ``[B, L]`` label ids (int32/int64), padded.
        input_lengths (Tensor): ``[B]`` valid frames per sequence.
        label_lengths (Tensor): ``[B]`` valid labels per sequence.
        blank (int): the blank class id.
        reduction (str): ``'none'`` (shape ``[B]``), ``'mean'`` (default: each loss divided by
            its label length, then averaged) or ``'sum'``.
        norm_by_times (bool): scale each sequence's gradient by ``1 / input_length`` (the loss
            value is unchanged).

    Returns:
        Tensor: per-sequence losses (``'none'``) or a 0-D tensor. Sequences with no valid
        alignment (too many labels for the frames) have loss 0.
    """
    op = "ctc_loss"
    _check_reduction(reduction, op)
    log_probs = _float_arg(log_probs, op, "log_probs")
    labels = _int_arg(labels, op, "labels")
    if log_probs.ndim != 3:
        raise ValueError(f"{op}: 'log_probs' must be [T, B, C], but got shape {log_probs.shape}")
    t_max, bsz, c = log_probs.shape
    if labels.ndim != 2 or labels.shape[0] != bsz:
        raise ValueError(f"{op}: 'labels' must be [{bsz}, L], but got shape {labels.shape}")
    in_len = _lengths(input_lengths, op, "input_lengths", bsz)
    lab_len = _lengths(label_lengths, op, "label_lengths", bsz)
    if not 0 <= blank < c:
        raise ValueError(f"{op}: 'blank' = {blank} must be in [0, {c})")
    il, lbl = in_len._data, lab_len._data
    if bsz and (bool((il < 0).any()) or bool((il > t_max).any())):
        raise ValueError(f"{op}: 'input_lengths' must lie in [0, {t_max}], but got "
                         f"{backend.to_numpy(il).tolist()}")
    if bsz and (bool((lbl < 0).any()) or bool((lbl > labels.shape[1]).any())):
        raise ValueError(f"{op}: 'label_lengths' must lie in [0, {labels.shape[1]}], but got "
                         f"{backend.to_numpy(lbl).tolist()}")
    lab = labels._data
    used = _xp(lab).arange(lab.shape[1])[None, :] < lbl.reshape(-1, 1)
    if bool((used & ((lab < 0) | (lab >= c))).any()):
        raise ValueError(f"{op}: label ids must lie in [0, {c})")
    return apply(_ctc_kernel, log_probs, labels, in_len, lab_len, blank=int(blank),
                 reduction=reduction, norm_by_times=bool(norm_by_times))


# --------------------------------------------------------------------------- RNN-T loss
def _lcse(a, xp):
    """Log-cumsum-exp along the last axis, exact for -inf entries and wide value ranges."""
    if xp is np:
        return np.logaddexp.accumulate(a, axis=-1)
    # CuPy ufuncs have no general accumulate: one vectorised step per position instead
    out = a.copy()
    for u in range(1, a.shape[-1]):
        xp.logaddexp(out[..., u - 1], a[..., u], out=out[..., u])
    return out


def _rev_lcse(a, xp):
    """Reverse log-cumsum-exp along the last axis."""
    return _lcse(a[..., ::-1], xp)[..., ::-1]


@op("rnnt_loss")
def _rnnt_kernel(acts, labels, in_len, lab_len, blank, fastemit_lambda, reduction):
    """RNN-T loss on log-probabilities ``[B, T, U+1, V]`` (used as given, as Paddle's CPU
    warp-rnnt does). Each time step is one vectorised update over the batch and every label
    position: within a frame the label recursion is a log-space prefix sum, so
    ``alpha[t, u] = S[u] + logcumsumexp_k(alpha[t-1, k] + blank[t-1, k] - S[k])``."""
    xp = _xp(acts)
    bsz, t_max, u1, v = acts.shape
    x = acts.astype(np.float64)
    tl = in_len.reshape(-1).astype(np.int64)
    ul = lab_len.reshape(-1).astype(np.int64)
    lab = labels.astype(np.int64).reshape(bsz, u1 - 1)
    blk = x[..., blank]                                             # [B, T, U+1]
    emit = xp.take_along_axis(x[:, :, :-1, :], xp.broadcast_to(
        lab[:, None, :, None], (bsz, t_max, u1 - 1, 1)), axis=3)[..., 0]   # [B, T, U]
    u_idx = xp.arange(u1, dtype=np.int64)[None, :]
    u_ok = u_idx <= ul[:, None]                                     # [B, U+1]
    neg = -xp.inf
    # prefix sums of the emissions along u (emissions past the label length are masked later)
    emit_ok = xp.where((u_idx[:, :-1] < ul[:, None])[:, None, :], emit, 0.0)
    s = xp.concatenate([xp.zeros((bsz, t_max, 1)), xp.cumsum(emit_ok, axis=2)], axis=2)
    alpha = xp.full((bsz, t_max, u1), neg)
    if t_max:
        alpha[:, 0] = xp.where(u_ok, s[:, 0], neg)
    for t in range(1, t_max):
        term = alpha[:, t - 1] + blk[:, t - 1] - s[:, t]
        alpha[:, t] = xp.where(u_ok, s[:, t] + _lcse(term, xp), neg)
    bidx = xp.arange(bsz, dtype=np.int64)
    last_t = xp.maximum(tl - 1, 0)
    loglik = alpha[bidx, last_t, ul] + blk[bidx, last_t, ul]
    nll = -loglik
    if reduction == "none":
        out = nll
    elif reduction == "sum":
        out = _arr(nll.sum(), np.float64, xp)
    else:
        out = _arr(nll.mean(), np.float64, xp)

    def bw(g):
        beta = xp.full((bsz, t_max, u1), neg)
        cur = xp.full((bsz, u1), neg)
        final = xp.where(u_idx == ul[:, None], 0.0, neg)          # after the last blank
        for t in range(t_max - 1, -1, -1):
            nxt = xp.where((t == tl - 1)[:, None], final, cur)
            term = nxt + blk[:, t] + s[:, t]
            row = xp.where(u_ok & (t < tl)[:, None], _rev_lcse(term, xp) - s[:, t], neg)
            beta[:, t] = row
            cur = row
        # blank transitions (t, u) -> (t + 1, u); the last frame's blank ends the sequence
        nxt_beta = xp.concatenate([beta[:, 1:], xp.full((bsz, 1, u1), neg)], axis=1)
        at_end = (xp.arange(t_max, dtype=np.int64)[None, :] == (tl - 1)[:, None])
        nxt_beta = xp.where(at_end[:, :, None], final[:, None, :], nxt_beta)
        gblank = -xp.exp(alpha + blk + nxt_beta - loglik[:, None, None])
        gemit = -xp.exp(alpha[:, :, :-1] + emit + beta[:, :, 1:] - loglik[:, None, None])
        gblank = xp.where(xp.isfinite(gblank), gblank, 0.0)
        gemit = xp.where(xp.isfinite(gemit), gemit, 0.0) * (1.0 + fastemit_lambda)
        if reduction == "none":
            gb = g.astype(np.float64).reshape(bsz)
        else:
            gb = xp.full(bsz, float(g) / (bsz if reduction == "mean" else 1))
        grad = xp.zeros(x.shape)
        grad[..., blank] = gblank
        # emissions go to each position's label column (fancy indexing, unique per row)
        bb, tt, uu = xp.meshgrid(bidx, xp.arange(t_max, dtype=np.int64),
                                 xp.arange(u1 - 1, dtype=np.int64), indexing="ij")
        grad[bb, tt, uu, xp.broadcast_to(lab[:, None, :], bb.shape)] += gemit
        grad *= gb[:, None, None, None]
        return grad.astype(acts.dtype), None, None, None

    return out.astype(acts.dtype), bw


def rnnt_loss(input: Tensor, label: Tensor, input_lengths: Tensor, label_lengths: Tensor,
              blank: int = 0, fastemit_lambda: float = 0.001, reduction: str = "mean",
              name=None) -> Tensor:
    """RNN-Transducer loss (as Paddle's warp-rnnt on CPU: ``input`` is used as the joint
    network's log-probabilities, without another log-softmax).

    Args:
        input (Tensor): ``[B, T, U + 1, V]`` log-probabilities.
        label (Tensor): ``[B, U]`` label ids (int32), padded.
        input_lengths (Tensor): ``[B]`` valid frames.
        label_lengths (Tensor): ``[B]`` valid labels.
        blank (int): the blank id.
        fastemit_lambda (float): FastEmit regularisation; scales the gradient of label
            emissions by ``1 + fastemit_lambda`` (the loss value is unchanged).
        reduction (str): ``'none'`` (shape ``[B]``), ``'mean'`` (default) or ``'sum'``.

    Returns:
        Tensor: per-sequence losses (``'none'``) or a 0-D tensor.
    """
    op = "rnnt_loss"
    _check_reduction(reduction, op)
    input = _float_arg(input, op, "input")
    label = _int_arg(label, op, "label")
    if input.ndim != 4:
        raise ValueError(f"{op}: 'input' must be [B, T, U + 1, V], but got shape {input.shape}")
    bsz, t_max, u1, v = input.shape
    if label.shape != [bsz, u1 - 1]:
        raise ValueError(f"{op}: 'label' must be [{bsz}, {u1 - 1}] for 'input' of shape "
                         f"{input.shape}, but got {label.shape}")
    in_len = _lengths(input_lengths, op, "input_lengths", bsz)
    lab_len = _lengths(label_lengths, op, "label_lengths", bsz)
    if not 0 <= blank < v:
        raise ValueError(f"{op}: 'blank' = {blank} must be in [0, {v})")
    il, lbl = in_len._data, lab_len._data
    if bsz and (bool((il < 1).any()) or bool((il > t_max).any())):
        raise ValueError(f"{op}: 'input_lengths' must lie in [1, {t_max}], but got "
                         f"{backend.to_numpy(il).tolist()}")
    if bsz and (bool((lbl < 0).any()) or bool((lbl > u1 - 1).any())):
        raise ValueError(f"{op}: 'label_lengths' must lie in [0, {u1 - 1}], but got "
                         f"{backend.to_numpy(lbl).tolist()}")
    lab = label._data
    if lab.size and bool(((lab < 0) | (lab >= v)).any()):
        raise ValueError(f"{op}: label ids must lie in [0, {v})")
    return apply(_rnnt_kernel, input, label, in_len, lab_len, blank=int(blank),
                 fastemit_lambda=float(fastemit_lambda), reduction=reduction)
