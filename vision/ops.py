"""Detection ops (``paddle.vision.ops``): NMS, RoI pooling, deformable convolution, box coding,
anchors, YOLOv3 heads, RPN proposals, FPN routing and JPEG I/O.

The arithmetic runs in NumPy on the host (``Tensor.numpy()``); results go back to the input's
place. Ops that Paddle differentiates (``roi_align``, ``roi_pool``, ``psroi_pool``,
``deform_conv2d``, ``yolo_loss``) are ``paddle.autograd.PyLayer`` subclasses whose backward is
written next to their forward; the others return tensors with ``stop_gradient=True``.

Everything is vectorised over boxes: RoI ops gather whole windows at once (RoIAlign is two
matrix products per image, because bilinear sampling is separable), greedy NMS resolves blocks of
boxes with a fixed-point iteration, and gradients are scattered with ``np.bincount``. Python
loops run only over images, classes, blocks of boxes, or pyramid levels.
"""

from __future__ import annotations

import math

import numpy as np

import paddle_hl as paddle
from paddle_hl import nn
from paddle_hl.autograd import PyLayer
from paddle_hl.backend import tuning

__all__ = ["yolo_loss", "yolo_box", "prior_box", "box_coder", "deform_conv2d", "DeformConv2D",
           "distribute_fpn_proposals", "generate_proposals", "read_file", "decode_jpeg",
           "roi_pool", "RoIPool", "psroi_pool", "PSRoIPool", "roi_align", "RoIAlign", "nms",
           "matrix_nms"]

# Largest number of elements one gathered block may hold before work is split into chunks.
_CHUNK_ELEMS = tuning.value("vision.chunk_elems")
_NMS_BLOCK = tuning.value("vision.nms_block")
_BBOX_CLIP = math.log(1000.0 / 16.0)


def __getattr__(name):
    # Paddle also exposes ConvNormActivation here (not in __all__); share the zoo's class.
    if name == "ConvNormActivation":
        from .models._utils import ConvNormActivation

        return ConvNormActivation
    raise AttributeError(f"module 'paddle_hl.vision.ops' has no attribute '{name}'")


# ----------------------------------------------------------------------------- argument helpers

def _tensor(x, op, arg):
    if not isinstance(x, paddle.Tensor):
        raise TypeError(f"{op}: {arg} must be a Tensor, got {type(x).__name__}")
    return x


def _dtype_name(t):
    return str(t.dtype).split(".")[-1]


def _float_tensor(x, op, arg):
    _tensor(x, op, arg)
    if _dtype_name(x) not in ("float16", "bfloat16", "float32", "float64"):
        raise TypeError(f"{op}: {arg} must be a floating-point Tensor, got {_dtype_name(x)}")
    return x


def _work(t):
    """The NumPy value of a float Tensor in the dtype the op computes in (f64 stays f64)."""
    a = t.numpy()
    return a if a.dtype in (np.float32, np.float64) else a.astype(np.float32)


def _int_np(t, op, arg):
    a = _tensor(t, op, arg).numpy()
    if a.dtype.kind not in "iu":
        raise TypeError(f"{op}: {arg} must be an integer Tensor, got {_dtype_name(t)}")
    return a.astype(np.int64)


def _ndim(a, nd, op, arg, last=None):
    if a.ndim != nd or (last is not None and a.shape[-1] != last):
        want = f"{nd}-D" + (f" with last dimension {last}" if last is not None else "")
        raise ValueError(f"{op}: {arg} must be {want}, got shape {list(a.shape)}")


def _out(a, like, dtype=None):
    """A stop-gradient Tensor holding ``a`` on ``like``'s place (in ``dtype`` or like's)."""
    return paddle.to_tensor(a, dtype=dtype if dtype is not None else like.dtype,
                            place=like.place)


def _pair(v, op, arg):
    if isinstance(v, (list, tuple)):
        if len(v) != 2:
            raise ValueError(f"{op}: {arg} must be an int or a pair of ints, got {v!r}")
        return int(v[0]), int(v[1])
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return int(v), int(v)
    raise TypeError(f"{op}: {arg} must be an int or a pair of ints, got {v!r}")


def _f32(v):
    """A float attribute as Paddle stores it (32-bit): spatial scales like 0.9 are not exact."""
    return float(np.float32(v))


def _round_half_away(v):
    """C's round(): halves go away from zero (NumPy's round goes to even)."""
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def _roi_batch(boxes_num, n_boxes, n_images, op):
    """Offsets [n_images + 1] of each image's boxes, from ``boxes_num``."""
    if boxes_num is None:
        if n_images != 1:
            raise ValueError(f"{op}: boxes_num is required when the batch has {n_images} "
                             "images")
        return np.array([0, n_boxes], dtype=np.int64)
    counts = _int_np(boxes_num, op, "boxes_num").reshape(-1)
    if counts.shape[0] != n_images:
        raise ValueError(f"{op}: boxes_num has {counts.shape[0]} entries but x has a batch of "
                         f"{n_images} images")
    if np.any(counts < 0) or int(counts.sum()) != n_boxes:
        raise ValueError(f"{op}: boxes_num must be non-negative and sum to the number of boxes "
                         f"({n_boxes}), got {counts.tolist()}")
    return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)


def _roi_inputs(x, boxes, boxes_num, op):
    _float_tensor(x, op, "x")
    _float_tensor(boxes, op, "boxes")
    if len(x.shape) != 4:
        raise ValueError(f"{op}: x must be a 4-D Tensor [N, C, H, W], got shape {x.shape}")
    if len(boxes.shape) != 2 or boxes.shape[1] != 4:
        raise ValueError(f"{op}: boxes must have shape [num_boxes, 4], got {boxes.shape}")
    offs = _roi_batch(boxes_num, boxes.shape[0], x.shape[0], op)
    return offs


def _output_size(output_size, op):
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != 2:
            raise ValueError(f"{op}: output_size must be an int or a pair, got {output_size!r}")
        ph, pw = (int(v) for v in output_size)
    elif isinstance(output_size, (int, np.integer)) and not isinstance(output_size, bool):
        ph = pw = int(output_size)
    else:
        raise TypeError(f"{op}: output_size must be an int or a tuple of two ints, got "
                        f"{output_size!r}")
    if ph <= 0 or pw <= 0:
        raise ValueError(f"{op}: output_size must be positive, got {output_size!r}")
    return ph, pw


def _chunks(n, per_item):
    """Split ``range(n)`` into slices whose gathered blocks stay under ``_CHUNK_ELEMS``."""
    step = max(1, _CHUNK_ELEMS // max(1, per_item))
    return [slice(s, min(n, s + step)) for s in range(0, n, step)]


def _grad_out(g, like_shape, dtype, like):
    return paddle.to_tensor(g.reshape(like_shape), dtype=dtype, place=like)


# ----------------------------------------------------------------------------- box overlap / NMS

def _area(b, offset):
    w = b[..., 2] - b[..., 0]
    h = b[..., 3] - b[..., 1]
    area = (w + offset) * (h + offset)
    return np.where((w < 0) | (h < 0), 0, area)


def _jaccard(a, b, normalized=True):
    """IoU of every box of ``a`` [n, 4] with every box of ``b`` [m, 4] -> [n, m].

    ``normalized=False`` counts pixels (+1 on widths and heights), as Paddle's detection ops do
    for pixel coordinates. Disjoint boxes have IoU 0.
    """
    off = 0.0 if normalized else 1.0
    a = a[:, None, :]
    b = b[None, :, :]
    disjoint = ((b[..., 0] > a[..., 2]) | (b[..., 2] < a[..., 0]) |
                (b[..., 1] > a[..., 3]) | (b[..., 3] < a[..., 1]))
    iw = np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]) + off
    ih = np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]) + off
    inter = iw * ih
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = inter / (_area(a, off) + _area(b, off) - inter)
    return np.where(disjoint, 0, iou)


def _nms_keep(boxes, thresh, normalized=True, eta=1.0):
    """Greedy NMS over ``boxes`` [n, 4] taken in the given order: indices of the kept boxes.

    A box is dropped when its IoU with an already kept box exceeds the threshold. Boxes are
    resolved in blocks: a block is first filtered against all boxes kept before it, then the
    greedy rule inside the block is solved by iterating ``keep = alive & ~any(keep_i & S_ij)``
    to its fixed point (the suppression graph is acyclic, so the iteration converges to the
    greedy answer). With ``eta < 1`` the threshold shrinks after every kept box (adaptive
    NMS), which makes each decision depend on the count before it; that rare mode goes box by
    box.
    """
    n = boxes.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if eta < 1.0:
        return _nms_adaptive(boxes, thresh, normalized, eta)
    keep = np.zeros(n, dtype=bool)
    kept = boxes[:0]
    for s in range(0, n, _NMS_BLOCK):
        blk = boxes[s:s + _NMS_BLOCK]
        alive = np.ones(blk.shape[0], dtype=bool)
        if kept.shape[0]:
            alive = ~np.any(_jaccard(kept, blk, normalized) > thresh, axis=0)
        sup = np.triu(_jaccard(blk, blk, normalized) > thresh, 1)
        k = alive.copy()
        while True:
            new = alive & ~np.any(sup & k[:, None], axis=0)
            if np.array_equal(new, k):
                break
            k = new
        keep[s:s + blk.shape[0]] = k
        kept = np.concatenate([kept, blk[k]])
    return np.nonzero(keep)[0]


def _nms_adaptive(boxes, thresh, normalized, eta):
    kept = []
    for i in range(boxes.shape[0]):
        if kept and np.any(_jaccard(boxes[i:i + 1], boxes[kept], normalized) > thresh):
            continue
        kept.append(i)
        if thresh > 0.5:
            thresh *= eta
    return np.asarray(kept, dtype=np.int64)


def _desc(scores):
    """Indices that sort ``scores`` from high to low, ties in input order."""
    return np.argsort(-scores, kind="stable")


def nms(boxes, iou_threshold=0.3, scores=None, category_idxs=None, categories=None,
        top_k=None):
    """Non-maximum suppression: the indices of the boxes that survive.

    Without ``scores`` boxes are visited in their given order. With ``scores`` they are visited
    from the highest score down; with ``category_idxs`` and ``categories`` suppression runs
    within each listed category only, and the survivors of all categories are returned by
    descending score. ``top_k`` keeps at most that many.

    Args:
        boxes (Tensor): [num_boxes, 4] boxes as (x1, y1, x2, y2).
        iou_threshold (float, optional): a box is dropped when its IoU with a kept box is
            larger than this. Default: 0.3.
        scores (Tensor, optional): [num_boxes] box scores.
        category_idxs (Tensor, optional): [num_boxes] category id of each box (needs scores).
        categories (list, optional): the category ids to process (needed with category_idxs).
        top_k (int, optional): keep at most this many boxes (needs scores). As documented,
            it applies with or without categories; Paddle 2.6.2 applies it only with
            ``category_idxs`` and silently returns every kept box otherwise, which is not
            copied here (with categories, or with top_k >= the kept count, the two agree).

    Returns:
        Tensor: int64 indices into ``boxes`` of the kept boxes.

    Example:
        >>> boxes = paddle.to_tensor([[0., 0., 1., 1.], [0., 0., 1., 2.], [5., 5., 6., 6.]])
        >>> paddle.vision.ops.nms(boxes, 0.4).tolist()
        [0, 2]
    """
    op = "nms"
    b = _float_tensor(boxes, op, "boxes").numpy().astype(np.float64)
    _ndim(b, 2, op, "boxes", last=4)
    thr = _f32(iou_threshold)
    if scores is None:
        keep = _nms_keep(b, thr)
    else:
        s = _float_tensor(scores, op, "scores").numpy().astype(np.float64).reshape(-1)
        if s.shape[0] != b.shape[0]:
            raise ValueError(f"{op}: scores has {s.shape[0]} entries but there are "
                             f"{b.shape[0]} boxes")
        if category_idxs is None:
            order = _desc(s)
            keep = order[_nms_keep(b[order], thr)]
        else:
            if categories is None:
                raise ValueError(f"{op}: categories (the list of category ids) is required "
                                 "when category_idxs is given")
            if top_k is not None and top_k > b.shape[0]:
                raise ValueError(f"{op}: top_k ({top_k}) must not exceed the number of boxes "
                                 f"({b.shape[0]})")
            cats = _int_np(category_idxs, op, "category_idxs").reshape(-1)
            if cats.shape[0] != b.shape[0]:
                raise ValueError(f"{op}: category_idxs has {cats.shape[0]} entries but there "
                                 f"are {b.shape[0]} boxes")
            mask = np.zeros(b.shape[0], dtype=bool)
            for c in categories:  # one greedy pass per category
                idx = np.nonzero(cats == int(c))[0]
                order = idx[_desc(s[idx])]
                mask[order[_nms_keep(b[order], thr)]] = True
            keep = np.nonzero(mask)[0]
            keep = keep[_desc(s[keep])]
        if top_k is not None:
            keep = keep[:int(top_k)]
    return paddle.to_tensor(keep.astype(np.int64), place=boxes.place)


def matrix_nms(bboxes, scores, score_threshold, post_threshold, nms_top_k, keep_top_k,
               use_gaussian=False, gaussian_sigma=2.0, background_label=0, normalized=True,
               return_index=False, return_rois_num=True, name=None):
    """Matrix NMS (SOLOv2): decay the scores of overlapping boxes instead of dropping them.

    Per image and class, boxes scoring above ``score_threshold`` (the best ``nms_top_k``) get
    their score multiplied by ``min_j decay(iou_ij, max_iou_j)`` over higher-scored boxes j,
    where decay is ``(1 - iou) / (1 - max_iou)`` or, with ``use_gaussian``,
    ``exp((max_iou**2 - iou**2) * gaussian_sigma)``. Boxes whose decayed score is above
    ``post_threshold`` are kept; each image keeps its best ``keep_top_k``, by score.

    Args:
        bboxes (Tensor): [N, M, 4] boxes (x1, y1, x2, y2).
        scores (Tensor): [N, C, M] per-class scores.
        score_threshold (float): minimum score before decay.
        post_threshold (float): minimum score after decay.
        nms_top_k (int): candidates per class (-1: all).
        keep_top_k (int): detections per image (-1: all).
        use_gaussian (bool, optional): Gaussian decay. Default: False.
        gaussian_sigma (float, optional): Gaussian decay factor. Default: 2.0.
        background_label (int, optional): class to skip (-1: none). Default: 0.
        normalized (bool, optional): coordinates are normalized (no +1 on sizes). Default: True.
        return_index (bool, optional): also return the kept indices. Default: False.
        return_rois_num (bool, optional): also return the per-image counts. Default: True.

    Returns:
        tuple: ``(out, rois_num, index)``: out [No, 6] rows ``[label, score, x1, y1, x2, y2]``;
        rois_num [N] int32 (None unless return_rois_num); index [No, 1] int32 indices into the
        flattened ``[N * M]`` boxes (None unless return_index).
    """
    op = "matrix_nms"
    _float_tensor(bboxes, op, "bboxes")
    _float_tensor(scores, op, "scores")
    bx = _work(bboxes)
    sc = _work(scores)
    _ndim(bx, 3, op, "bboxes", last=4)
    _ndim(sc, 3, op, "scores")
    if sc.shape[0] != bx.shape[0] or sc.shape[2] != bx.shape[1]:
        raise ValueError(f"{op}: scores must have shape [N, C, M] = [{bx.shape[0]}, C, "
                         f"{bx.shape[1]}] to match bboxes {list(bx.shape)}, got "
                         f"{list(sc.shape)}")
    n_img, n_cls, m = sc.shape
    score_threshold, post_threshold = _f32(score_threshold), _f32(post_threshold)
    gaussian_sigma = _f32(gaussian_sigma)
    outs, idxs, counts = [], [], []
    for i in range(n_img):
        rows, sel = [], []
        for c in range(n_cls):
            if c == background_label:
                continue
            s = sc[i, c]
            cand = np.nonzero(s > score_threshold)[0]
            order = cand[_desc(s[cand])]
            if nms_top_k > -1:
                order = order[:nms_top_k]
            if order.size == 0:
                continue
            decayed = s[order] * _matrix_decay(bx[i, order], use_gaussian, gaussian_sigma,
                                               normalized)
            ok = decayed > post_threshold
            k = order[ok]
            rows.append(np.concatenate([np.full((k.size, 1), c, dtype=sc.dtype),
                                        decayed[ok, None].astype(sc.dtype), bx[i, k]], axis=1))
            sel.append(k + i * m)
        if rows:
            r = np.concatenate(rows)
            ix = np.concatenate(sel)
            order = _desc(r[:, 1])
            if keep_top_k > -1:
                order = order[:keep_top_k]
            outs.append(r[order])
            idxs.append(ix[order])
        counts.append(len(idxs[-1]) if rows else 0)
    out = np.concatenate(outs) if outs else np.zeros((0, 6), dtype=sc.dtype)
    index = (np.concatenate(idxs) if idxs else np.zeros(0, dtype=np.int64)).reshape(-1, 1)
    out_t = _out(out, bboxes)
    num_t = paddle.to_tensor(np.asarray(counts, dtype=np.int32), place=bboxes.place)
    idx_t = paddle.to_tensor(index.astype(np.int32), place=bboxes.place)
    return out_t, num_t if return_rois_num else None, idx_t if return_index else None


def _matrix_decay(boxes, use_gaussian, sigma, normalized):
    """min over higher-scored boxes of the Matrix-NMS decay, for boxes sorted by score."""
    n = boxes.shape[0]
    iou = np.tril(_jaccard(boxes, boxes, normalized), -1)  # iou[i, j] for j < i
    iou_max = iou.max(axis=1) if n else iou[:, 0]
    lower = np.tril(np.ones((n, n), dtype=bool), -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        if use_gaussian:
            decay = np.exp((iou_max[None, :] ** 2 - iou ** 2) * sigma)
        else:
            decay = (1 - iou) / (1 - iou_max[None, :])
    # NaN (a duplicate box: 0/0) never wins the minimum, as with std::min in Paddle
    decay = np.where(lower & ~np.isnan(decay), decay, 1.0)
    return np.minimum(decay.min(axis=1, initial=1.0), 1.0)


# ----------------------------------------------------------------------------- RoIAlign

def _interp_matrix(start, bin_size, grid, pooled, size):
    """Per RoI, the [pooled, size] matrix of summed 1-D bilinear weights of a bin's samples.

    Sample ``s`` of bin ``p`` sits at ``start + p * bin + (s + 0.5) * bin / grid``; samples
    outside ``[-1, size]`` contribute nothing; others are clamped at 0 and at the last pixel.
    """
    k = start.shape[0]
    g_max = max(int(grid.max()) if k else 1, 1)
    p = np.arange(pooled)[None, :, None]
    s = np.arange(g_max)[None, None, :]
    st, bs, gr = start[:, None, None], bin_size[:, None, None], grid[:, None, None]
    y = st + p * bs + (s + 0.5) * bs / np.maximum(gr, 1)
    use = (s < gr) & (y >= -1) & (y <= size)
    y = np.maximum(y, 0)
    low = np.floor(y).astype(np.int64)
    top = low >= size - 1
    low = np.where(top, size - 1, low)
    high = np.where(top, size - 1, low + 1)
    frac = np.where(top, 0.0, y - low)
    row = (np.arange(k)[:, None, None] * pooled + p) * size
    idx = np.concatenate([(row + low).ravel(), (row + high).ravel()])
    w = np.concatenate([((1 - frac) * use).ravel(), (frac * use).ravel()])
    return np.bincount(idx, w, minlength=k * pooled * size).reshape(k, pooled, size)


def _roi_align_weights(b, x_shape, ph, pw, scale, ratio, aligned, dt):
    _, _, h, w = x_shape
    off = 0.5 if aligned else 0.0
    x1, y1, x2, y2 = (b[:, i].astype(dt) * dt(scale) - dt(off) for i in range(4))
    rw, rh = x2 - x1, y2 - y1
    if not aligned:  # legacy mode: RoIs are at least one pixel
        rw, rh = np.maximum(rw, 1), np.maximum(rh, 1)
    bh, bw = rh / dt(ph), rw / dt(pw)
    if ratio > 0:
        gh = np.full(b.shape[0], ratio, dtype=np.int64)
        gw = gh
    else:
        gh = np.ceil(rh / dt(ph)).astype(np.int64)
        gw = np.ceil(rw / dt(pw)).astype(np.int64)
    count = np.maximum(gh * gw, 1).astype(np.float64)
    wy = _interp_matrix(y1.astype(np.float64), bh.astype(np.float64), gh, ph, h)
    wx = _interp_matrix(x1.astype(np.float64), bw.astype(np.float64), gw, pw, w)
    return (wy / count[:, None, None]).astype(dt), wx.astype(dt)


class _RoIAlign(PyLayer):
    @staticmethod
    def forward(ctx, x, boxes, offs, ph, pw, scale, ratio, aligned):
        xa = _work(x)
        n, c, h, w = xa.shape
        wy, wx = _roi_align_weights(boxes.numpy(), xa.shape, ph, pw, scale, ratio, aligned,
                                    xa.dtype.type)
        k = wy.shape[0]
        # every operand in the input's float type, so the products below run in BLAS
        out = np.zeros((k, c, ph, pw), dtype=xa.dtype)
        for i in range(n):  # per image: [k*ph, H] @ [H, C*W], then a batched [W] contraction
            s, e = offs[i], offs[i + 1]
            if s == e:
                continue
            t = (wy[s:e].reshape(-1, h) @ xa[i].transpose(1, 0, 2).reshape(h, c * w))
            # the per-RoI contraction is many small products: einsum's plain loop beats a
            # stack of tiny threaded BLAS calls (which stall badly on a busy machine)
            t = np.einsum("kaw,kqw->kaq", t.reshape(e - s, ph * c, w), wx[s:e])
            out[s:e] = t.reshape(e - s, ph, c, pw).transpose(0, 2, 1, 3)
        ctx.geo = (wy, wx, offs, xa.shape, x.dtype, x.place)
        return _out(out, x)

    @staticmethod
    def backward(ctx, dout):
        wy, wx, offs, (n, c, h, w), dtype, place = ctx.geo
        g = dout.numpy().astype(wy.dtype)
        ph, pw = g.shape[2], g.shape[3]
        dx = np.zeros((n, c, h, w), dtype=wy.dtype)
        for i in range(n):
            s, e = offs[i], offs[i + 1]
            if s == e:
                continue
            t = np.einsum("kaq,kqw->kaw", g[s:e].transpose(0, 2, 1, 3).reshape(e - s, ph * c, pw),
                          wx[s:e])
            t = wy[s:e].reshape(-1, h).T @ t.reshape((e - s) * ph, c * w)
            dx[i] = t.reshape(h, c, w).transpose(1, 0, 2)
        return _grad_out(dx, (n, c, h, w), dtype, place), None


def roi_align(x, boxes, boxes_num, output_size, spatial_scale=1.0, sampling_ratio=-1,
              aligned=True, name=None):
    """RoIAlign: average of bilinearly sampled points in each bin of each region.

    Args:
        x (Tensor): [N, C, H, W] feature map (float32/float64).
        boxes (Tensor): [num_boxes, 4] regions (x1, y1, x2, y2) in input coordinates, grouped by
            image.
        boxes_num (Tensor): [N] int32 number of boxes of each image.
        output_size (int|tuple): pooled (height, width).
        spatial_scale (float, optional): factor from box to feature coordinates. Default: 1.0.
        sampling_ratio (int, optional): samples per bin side; -1 uses
            ``ceil(roi_size / output_size)``. Default: -1.
        aligned (bool, optional): shift boxes by -0.5 pixel (pixel centers). Default: True.

    Returns:
        Tensor: [num_boxes, C, pooled_h, pooled_w], differentiable with respect to ``x``.

    Example:
        >>> x = paddle.rand([1, 8, 16, 16])
        >>> boxes = paddle.to_tensor([[1., 2., 9., 12.]])
        >>> paddle.vision.ops.roi_align(x, boxes, paddle.to_tensor([1], 'int32'), 3).shape
        [1, 8, 3, 3]
    """
    op = "roi_align"
    ph, pw = _output_size(output_size, op)
    offs = _roi_inputs(x, boxes, boxes_num, op)
    return _RoIAlign.apply(x, boxes, offs, ph, pw, _f32(spatial_scale), int(sampling_ratio),
                           bool(aligned))


class RoIAlign(nn.Layer):
    """Layer form of :func:`roi_align`.

    Args:
        output_size (int|tuple): pooled (height, width).
        spatial_scale (float, optional): factor from box to feature coordinates. Default: 1.0.
    """

    def __init__(self, output_size, spatial_scale=1.0):
        super().__init__()
        self._output_size = output_size
        self._spatial_scale = spatial_scale

    def forward(self, x, boxes, boxes_num, aligned=True):
        """Pool ``boxes`` of ``x``; see :func:`roi_align`."""
        return roi_align(x, boxes, boxes_num, self._output_size, self._spatial_scale,
                         aligned=aligned)


# ----------------------------------------------------------------------------- RoIPool

def _bins(start, length, pooled, size, dt):
    """Integer [start, end) of every bin along one axis, as Paddle's RoI pooling computes them
    (bin sizes in the input's float type), clipped to ``[0, size]``."""
    bsz = length.astype(dt) / dt(pooled)
    p = np.arange(pooled, dtype=dt)[None, :]
    lo = np.floor(p * bsz[:, None]).astype(np.int64) + start[:, None]
    hi = np.ceil((p + 1) * bsz[:, None]).astype(np.int64) + start[:, None]
    return np.clip(lo, 0, size), np.clip(hi, 0, size)


def _window(lo, hi, size):
    """Row indices [k, pooled, L] covering each bin; short bins repeat their last row (harmless
    for a max) and empty bins point at a valid row (masked afterwards)."""
    span = max(int((hi - lo).max()) if lo.size else 1, 1)
    r = lo[..., None] + np.arange(span)
    return np.clip(np.minimum(r, hi[..., None] - 1), 0, size - 1)


class _RoIPool(PyLayer):
    @staticmethod
    def forward(ctx, x, boxes, offs, ph, pw, scale):
        xa = x.numpy()
        n, c, h, w = xa.shape
        dt = xa.dtype.type if xa.dtype in (np.float32, np.float64) else np.float32
        b = boxes.numpy().astype(dt)
        k = b.shape[0]
        bidx = np.repeat(np.arange(n), np.diff(offs))
        xs, ys, xe, ye = (_round_half_away(b[:, i] * dt(scale)).astype(np.int64)
                          for i in range(4))
        hs, he = _bins(ys, np.maximum(ye - ys + 1, 1), ph, h, dt)
        ws, we = _bins(xs, np.maximum(xe - xs + 1, 1), pw, w, dt)
        rows, cols = _window(hs, he, h), _window(ws, we, w)
        lh, lw = rows.shape[2], cols.shape[2]
        # channels last and contiguous: each gathered pixel is one block copy of C values
        xt = np.ascontiguousarray(xa.transpose(0, 2, 3, 1))
        out = np.zeros((k, ph, pw, c), dtype=xa.dtype)
        arg = np.zeros((k, ph, pw, c), dtype=np.int64)
        for sl in _chunks(k, ph * pw * lh * lw * c):
            r = rows[sl][:, :, None, :, None]
            q = cols[sl][:, None, :, None, :]
            win = xt[bidx[sl][:, None, None, None, None], r, q]  # [k, ph, pw, lh, lw, C]
            win = win.reshape(win.shape[0], ph, pw, lh * lw, c)
            # max, then the first position reaching it (cheaper than argmax along axis 3)
            top = win.max(axis=3)
            a = (win == top[:, :, :, None]).argmax(axis=3)
            out[sl] = top
            kk = np.arange(win.shape[0])[:, None, None, None]
            hh = rows[sl][kk, np.arange(ph)[None, :, None, None], a // lw]
            ww = cols[sl][kk, np.arange(pw)[None, None, :, None], a % lw]
            arg[sl] = hh * w + ww
        empty = ((he <= hs)[:, :, None] | (we <= ws)[:, None, :])[..., None]
        out = np.where(empty, 0, out).transpose(0, 3, 1, 2)
        arg = np.where(empty, -1, arg).transpose(0, 3, 1, 2)
        ctx.geo = (arg, bidx, xa.shape, x.dtype, x.place)
        return _out(np.ascontiguousarray(out), x)

    @staticmethod
    def backward(ctx, dout):
        arg, bidx, (n, c, h, w), dtype, place = ctx.geo
        g = dout.numpy().astype(np.float64)
        hit = arg >= 0
        plane = (bidx[:, None, None, None] * c + np.arange(c)[None, :, None, None]) * (h * w)
        idx = (plane + arg)[hit]
        dx = np.bincount(idx, g[hit], minlength=n * c * h * w)
        return _grad_out(dx, (n, c, h, w), dtype, place), None


def roi_pool(x, boxes, boxes_num, output_size, spatial_scale=1.0, name=None):
    """RoIPool: the maximum of each bin of each region (Fast R-CNN).

    Box corners are scaled by ``spatial_scale`` and rounded to pixels; each region of
    ``(x2 - x1 + 1) x (y2 - y1 + 1)`` pixels is split into ``output_size`` bins. Empty bins
    give 0.

    Args:
        x (Tensor): [N, C, H, W] feature map.
        boxes (Tensor): [num_boxes, 4] regions (x1, y1, x2, y2), grouped by image.
        boxes_num (Tensor): [N] int32 number of boxes of each image.
        output_size (int|tuple): pooled (height, width).
        spatial_scale (float, optional): factor from box to feature coordinates. Default: 1.0.

    Returns:
        Tensor: [num_boxes, C, pooled_h, pooled_w]; its gradient flows to the max elements.
    """
    op = "roi_pool"
    ph, pw = _output_size(output_size, op)
    offs = _roi_inputs(x, boxes, boxes_num, op)
    return _RoIPool.apply(x, boxes, offs, ph, pw, _f32(spatial_scale))


class RoIPool(nn.Layer):
    """Layer form of :func:`roi_pool`.

    Args:
        output_size (int|tuple): pooled (height, width).
        spatial_scale (float, optional): factor from box to feature coordinates. Default: 1.0.
    """

    def __init__(self, output_size, spatial_scale=1.0):
        super().__init__()
        self._output_size = output_size
        self._spatial_scale = spatial_scale

    def forward(self, x, boxes, boxes_num):
        """Pool ``boxes`` of ``x``; see :func:`roi_pool`."""
        return roi_pool(x, boxes, boxes_num, self._output_size, self._spatial_scale)

    def extra_repr(self):
        return f"output_size={self._output_size}, spatial_scale={self._spatial_scale}"


# ----------------------------------------------------------------------------- PSRoIPool

class _PSRoIPool(PyLayer):
    @staticmethod
    def forward(ctx, x, boxes, offs, ph, pw, scale):
        xa = x.numpy()
        n, c_in, h, w = xa.shape
        oc = c_in // (ph * pw)
        dt = xa.dtype.type if xa.dtype in (np.float32, np.float64) else np.float32
        b = boxes.numpy().astype(dt)
        k = b.shape[0]
        bidx = np.repeat(np.arange(n), np.diff(offs))
        sx, sy = (_round_half_away(b[:, i]).astype(dt) * dt(scale) for i in (0, 1))
        ex, ey = ((_round_half_away(b[:, i]).astype(dt) + dt(1)) * dt(scale) for i in (2, 3))
        rh = np.maximum(ey - sy, dt(0.1))
        rw = np.maximum(ex - sx, dt(0.1))
        hs, he = _ps_bins(sy, rh / dt(ph), ph, h, dt)
        ws, we = _ps_bins(sx, rw / dt(pw), pw, w, dt)
        # the input channel of output channel o at bin (p, q) is (o * ph + p) * pw + q
        chan = (np.arange(oc)[:, None, None] * ph + np.arange(ph)[None, :, None]) * pw + \
            np.arange(pw)[None, None, :]
        plane = bidx[:, None, None, None] * c_in + chan[None]  # [k, oc, ph, pw]
        top, bot = hs[:, None, :, None], he[:, None, :, None]
        lef, rig = ws[:, None, None, :], we[:, None, None, :]
        # integral image (float64): any bin sum is four lookups
        sat = np.zeros((n * c_in, h + 1, w + 1))
        sat[:, 1:, 1:] = xa.reshape(n * c_in, h, w).astype(np.float64).cumsum(1).cumsum(2)
        tot = sat[plane, bot, rig] - sat[plane, top, rig] - sat[plane, bot, lef] + \
            sat[plane, top, lef]
        area = ((bot - top) * (rig - lef)).astype(np.float64)
        empty = (bot <= top) | (rig <= lef)
        out = np.where(empty, 0.0, tot / np.where(empty, 1.0, area))
        out = np.broadcast_to(out, (k, oc, ph, pw))
        ctx.geo = (plane, top, bot, lef, rig, np.where(empty, 0.0, 1.0 / np.where(
            empty, 1.0, area)), xa.shape, x.dtype, x.place)
        return _out(out.astype(xa.dtype), x)

    @staticmethod
    def backward(ctx, dout):
        plane, top, bot, lef, rig, inv, (n, c, h, w), dtype, place = ctx.geo
        g = dout.numpy().astype(np.float64) * inv
        shape = g.shape
        # a box filter's adjoint: +g at two corners, -g at the other two, then 2-D prefix sums
        corners = [(top, lef, 1.0), (top, rig, -1.0), (bot, lef, -1.0), (bot, rig, 1.0)]
        idx = np.concatenate([((np.broadcast_to(plane, shape) * (h + 1) +
                                np.broadcast_to(r, shape)) * (w + 1) +
                               np.broadcast_to(q, shape)).ravel() for r, q, _ in corners])
        wts = np.concatenate([(g * sgn).ravel() for _, _, sgn in corners])
        d = np.bincount(idx, wts, minlength=n * c * (h + 1) * (w + 1))
        d = d.reshape(n * c, h + 1, w + 1).cumsum(1).cumsum(2)[:, :h, :w]
        return _grad_out(d, (n, c, h, w), dtype, place), None


def _ps_bins(start, bsz, pooled, size, dt):
    p = np.arange(pooled, dtype=dt)[None, :]
    lo = np.floor(bsz[:, None] * p + start[:, None]).astype(np.int64)
    hi = np.ceil(bsz[:, None] * (p + 1) + start[:, None]).astype(np.int64)
    return np.clip(lo, 0, size), np.clip(hi, 0, size)


def psroi_pool(x, boxes, boxes_num, output_size, spatial_scale=1.0, name=None):
    """Position-sensitive RoI pooling (R-FCN): bin (i, j) of output channel c averages input
    channel ``(c * ph + i) * pw + j``.

    Args:
        x (Tensor): [N, C, H, W] feature map; C must be a multiple of ``ph * pw``.
        boxes (Tensor): [num_boxes, 4] regions (x1, y1, x2, y2), grouped by image.
        boxes_num (Tensor): [N] int32 number of boxes of each image.
        output_size (int|tuple): pooled (height, width).
        spatial_scale (float, optional): factor from box to feature coordinates. Default: 1.0.

    Returns:
        Tensor: [num_boxes, C / (ph * pw), ph, pw], differentiable with respect to ``x``.
    """
    op = "psroi_pool"
    ph, pw = _output_size(output_size, op)
    offs = _roi_inputs(x, boxes, boxes_num, op)
    if x.shape[1] % (ph * pw):
        raise ValueError(f"{op}: the channels of x ({x.shape[1]}) must be a multiple of "
                         f"output_size[0] * output_size[1] ({ph * pw})")
    return _PSRoIPool.apply(x, boxes, offs, ph, pw, _f32(spatial_scale))


class PSRoIPool(nn.Layer):
    """Layer form of :func:`psroi_pool`.

    Args:
        output_size (int|tuple): pooled (height, width).
        spatial_scale (float, optional): factor from box to feature coordinates. Default: 1.0.
    """

    def __init__(self, output_size, spatial_scale=1.0):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale

    def forward(self, x, boxes, boxes_num):
        """Pool ``boxes`` of ``x``; see :func:`psroi_pool`."""
        return psroi_pool(x, boxes, boxes_num, self.output_size, self.spatial_scale)


# ----------------------------------------------------------------------------- deformable conv

def _deform_taps(xa, off, geo):
    """Bilinear taps of every deformable sample.

    Returns ``(idx, wts, oks, (lh, lw, hh, hw))``: for the four corners, the flat pixel index
    [N, dg, K*L], its weight (0 where the corner lies outside the image) and whether it counts,
    plus the fractional parts the offset gradient needs.
    """
    n, _, h, w = xa.shape
    sh, sw, ph, pw, dh, dw, kh, kw, dg, ho, wo = geo
    kk = kh * kw
    ki, kj = np.divmod(np.arange(kk), kw)
    off = off.reshape(n, dg, kk, 2, ho, wo)
    ys = (np.arange(ho) * sh - ph)[None, :, None] + (ki * dh)[:, None, None] + off[:, :, :, 0]
    xs = (np.arange(wo) * sw - pw)[None, None, :] + (kj * dw)[:, None, None] + off[:, :, :, 1]
    ys = ys.reshape(n, dg, -1)
    xs = xs.reshape(n, dg, -1)
    inside = (ys > -1) & (xs > -1) & (ys < h) & (xs < w)
    y0 = np.floor(ys)
    x0 = np.floor(xs)
    lh, lw = ys - y0, xs - x0
    hh, hw = 1 - lh, 1 - lw
    y0 = y0.astype(np.int64)
    x0 = x0.astype(np.int64)
    idx, wts, oks = [], [], []
    for dy, dx, wt in ((0, 0, hh * hw), (0, 1, hh * lw), (1, 0, lh * hw), (1, 1, lh * lw)):
        yy, xx = y0 + dy, x0 + dx
        ok = inside & (yy >= 0) & (yy <= h - 1) & (xx >= 0) & (xx <= w - 1)
        idx.append(np.clip(yy, 0, h - 1) * w + np.clip(xx, 0, w - 1))
        wts.append(np.where(ok, wt, 0).astype(xa.dtype))
        oks.append(ok)
    return idx, wts, oks, (lh, lw, hh, hw)


class _DeformSample(PyLayer):
    """Deformable im2col: x [N, C, H, W] -> columns [N, C*kh*kw, Ho*Wo] (column c*K + k)."""

    @staticmethod
    def forward(ctx, x, offset, mask, geo):
        xa = _work(x)
        n, c, h, w = xa.shape
        dg = geo[8]
        off = offset.numpy().astype(xa.dtype)
        idx, wts, *_ = _deform_taps(xa, off, geo)
        xr = xa.reshape(n, dg, c // dg, h * w)
        val = sum(np.take_along_axis(xr, i[:, :, None, :], axis=3) * wt[:, :, None, :]
                  for i, wt in zip(idx, wts))  # [N, dg, C/dg, K*L]
        m = None
        cols = val
        if mask is not None:
            m = mask.numpy().astype(xa.dtype).reshape(n, dg, 1, -1)
            cols = val * m
        ctx.keep = (xa, off, m, geo, [t is not None and not t.stop_gradient
                                      for t in (x, offset, mask)],
                    [(t.shape, t.dtype) for t in (x, offset, mask) if t is not None], x.place)
        kk = geo[6] * geo[7]
        return _out(cols.reshape(n, c * kk, -1), x)

    @staticmethod
    def backward(ctx, dcols):
        xa, off, m, geo, needs, metas, place = ctx.keep
        n, c, h, w = xa.shape
        dg = geo[8]
        cg = c // dg
        g = dcols.numpy().astype(xa.dtype).reshape(n, dg, cg, -1)
        idx, wts, oks, (lh, lw, hh, hw) = _deform_taps(xa, off, geo)
        xr = xa.reshape(n, dg, cg, h * w)
        gm = g if m is None else g * m
        grads = []
        if needs[0]:
            base = (np.arange(n * dg * cg) * (h * w)).reshape(n, dg, cg, 1)
            flat = np.concatenate([(base + i[:, :, None, :]).ravel() for i in idx])
            vals = np.concatenate([(gm * wt[:, :, None, :]).ravel() for wt in wts])
            grads.append(np.bincount(flat, vals, minlength=n * c * h * w))
        else:
            grads.append(None)
        # corner values, zero where a corner lies outside the image
        corner = [np.take_along_axis(xr, i[:, :, None, :], axis=3) * ok[:, :, None, :]
                  for i, ok in zip(idx, oks)]
        if needs[1]:
            # derivatives of the four bilinear weights hh*hw, hh*lw, lh*hw, lh*lw
            dy = (corner[2] - corner[0]) * hw[:, :, None] + (corner[3] - corner[1]) * \
                lw[:, :, None]
            dx = (corner[1] - corner[0]) * hh[:, :, None] + (corner[3] - corner[2]) * \
                lh[:, :, None]
            kk = geo[6] * geo[7]
            ho, wo = geo[9], geo[10]
            goy = (gm * dy).sum(axis=2).reshape(n, dg, kk, 1, ho, wo)
            gox = (gm * dx).sum(axis=2).reshape(n, dg, kk, 1, ho, wo)
            grads.append(np.concatenate([goy, gox], axis=3))
        else:
            grads.append(None)
        if m is not None:
            if needs[2]:
                val = sum(cv * wt[:, :, None, :] for cv, wt in zip(corner, wts))
                grads.append((g * val).sum(axis=2))
            else:
                grads.append(None)
        return tuple(None if gr is None else _grad_out(gr, meta[0], meta[1], place)
                     for gr, meta in zip(grads, metas))


def deform_conv2d(x, offset, weight, bias=None, stride=1, padding=0, dilation=1,
                  deformable_groups=1, groups=1, mask=None, name=None):
    """Deformable convolution v1 (``mask=None``) and v2 (modulated by ``mask``).

    Each kernel tap of each output position samples ``x`` bilinearly at its regular position
    plus a learned offset (zero outside the image), optionally scaled by the mask, before the
    usual weighted sum.

    Args:
        x (Tensor): [N, C, H, W] input (float32/float64).
        offset (Tensor): [N, 2 * deformable_groups * kh * kw, Ho, Wo] offsets, (dy, dx) per tap.
        weight (Tensor): [M, C / groups, kh, kw] filters.
        bias (Tensor, optional): [M] bias.
        stride (int|list, optional): Default: 1.
        padding (int|list, optional): Default: 0.
        dilation (int|list, optional): Default: 1.
        deformable_groups (int, optional): channel groups sharing one set of offsets.
            Default: 1.
        groups (int, optional): convolution groups. Default: 1.
        mask (Tensor, optional): [N, deformable_groups * kh * kw, Ho, Wo] modulation (v2).

    Returns:
        Tensor: [N, M, Ho, Wo]; differentiable with respect to x, offset, mask, weight, bias.

    Example:
        >>> x = paddle.rand([1, 2, 5, 5])
        >>> w = paddle.rand([4, 2, 3, 3])
        >>> off = paddle.zeros([1, 18, 3, 3])
        >>> paddle.vision.ops.deform_conv2d(x, off, w).shape
        [1, 4, 3, 3]
    """
    op = "deform_conv2d"
    _float_tensor(x, op, "x")
    _float_tensor(offset, op, "offset")
    _float_tensor(weight, op, "weight")
    if len(x.shape) != 4 or len(weight.shape) != 4 or len(offset.shape) != 4:
        raise ValueError(f"{op}: x, offset and weight must be 4-D, got shapes {x.shape}, "
                         f"{offset.shape} and {weight.shape}")
    sh, sw = _pair(stride, op, "stride")
    ph, pw = _pair(padding, op, "padding")
    dh, dw = _pair(dilation, op, "dilation")
    n, c, h, w = x.shape
    m_out, cpg, kh, kw = weight.shape
    dg, groups = int(deformable_groups), int(groups)
    if groups <= 0 or dg <= 0:
        raise ValueError(f"{op}: groups and deformable_groups must be positive, got {groups} "
                         f"and {dg}")
    if c != cpg * groups or m_out % groups:
        raise ValueError(f"{op}: weight {weight.shape} does not fit x with {c} channels and "
                         f"groups={groups} (expected [M, C/groups, kh, kw], M divisible by "
                         "groups)")
    if c % dg:
        raise ValueError(f"{op}: the channels of x ({c}) must be divisible by "
                         f"deformable_groups ({dg})")
    ho = (h + 2 * ph - (dh * (kh - 1) + 1)) // sh + 1
    wo = (w + 2 * pw - (dw * (kw - 1) + 1)) // sw + 1
    if ho <= 0 or wo <= 0:
        raise ValueError(f"{op}: the output would be empty ({ho} x {wo}) for input {x.shape}, "
                         f"kernel {[kh, kw]}, padding {[ph, pw]} and dilation {[dh, dw]}")
    kk = kh * kw
    if list(offset.shape) != [n, 2 * dg * kk, ho, wo]:
        raise ValueError(f"{op}: offset must have shape {[n, 2 * dg * kk, ho, wo]}, got "
                         f"{offset.shape}")
    if mask is not None:
        _float_tensor(mask, op, "mask")
        if list(mask.shape) != [n, dg * kk, ho, wo]:
            raise ValueError(f"{op}: mask must have shape {[n, dg * kk, ho, wo]}, got "
                             f"{mask.shape}")
    geo = (sh, sw, ph, pw, dh, dw, kh, kw, dg, ho, wo)
    cols = _DeformSample.apply(x, offset, mask, geo=geo)  # [N, C*K, L]
    cols = cols.reshape([n, groups, cpg * kk, ho * wo])
    wmat = weight.reshape([groups, m_out // groups, cpg * kk])
    out = paddle.matmul(wmat, cols).reshape([n, m_out, ho, wo])
    if bias is not None:
        out = out + bias.reshape([1, m_out, 1, 1])
    return out


class DeformConv2D(nn.Layer):
    """Deformable 2-D convolution layer (v1, or v2 when ``forward`` gets a mask).

    Parameters are ``weight`` [out, in/groups, kh, kw] (normal, std ``sqrt(2 / (kh*kw*in))``)
    and ``bias`` [out] (zeros), the state_dict keys of Paddle's layer.

    Args:
        in_channels (int): input channels.
        out_channels (int): output channels.
        kernel_size (int|list): kernel size.
        stride (int|list, optional): Default: 1.
        padding (int|list, optional): Default: 0.
        dilation (int|list, optional): Default: 1.
        deformable_groups (int, optional): Default: 1.
        groups (int, optional): Default: 1.
        weight_attr (ParamAttr, optional): weight attribute (cannot be False).
        bias_attr (ParamAttr|bool, optional): bias attribute; False for no bias.
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 deformable_groups=1, groups=1, weight_attr=None, bias_attr=None):
        super().__init__()
        op = "DeformConv2D"
        if weight_attr is False:
            raise ValueError(f"{op}: weight_attr should not be False")
        if in_channels % groups:
            raise ValueError(f"{op}: in_channels ({in_channels}) must be divisible by groups "
                             f"({groups})")
        self._weight_attr = weight_attr
        self._bias_attr = bias_attr
        self._deformable_groups = deformable_groups
        self._groups = groups
        self._in_channels = in_channels
        self._out_channels = out_channels
        self._channel_dim = 1
        self._stride = list(_pair(stride, op, "stride"))
        self._dilation = list(_pair(dilation, op, "dilation"))
        self._kernel_size = list(_pair(kernel_size, op, "kernel_size"))
        self._padding = list(_pair(padding, op, "padding"))
        shape = [out_channels, in_channels // groups] + self._kernel_size
        std = (2.0 / (self._kernel_size[0] * self._kernel_size[1] * in_channels)) ** 0.5
        self.weight = self.create_parameter(shape=shape, attr=weight_attr,
                                            default_initializer=nn.initializer.Normal(0.0, std))
        self.bias = self.create_parameter(attr=bias_attr, shape=[out_channels], is_bias=True)

    def forward(self, x, offset, mask=None):
        """Apply the layer; see :func:`deform_conv2d`."""
        return deform_conv2d(x, offset, self.weight, self.bias, self._stride, self._padding,
                             self._dilation, self._deformable_groups, self._groups, mask)


# ----------------------------------------------------------------------------- box coding

def box_coder(prior_box, prior_box_var, target_box, code_type="encode_center_size",
              box_normalized=True, axis=0, name=None):
    """Encode boxes as offsets from prior boxes, or decode such offsets back to boxes.

    With ``box_normalized=False`` widths and heights count pixels (+1). Encoding gives, for
    every target i and prior j, ``((tx - px) / pw, (ty - py) / ph, log(tw / pw), log(th / ph))``
    divided by the variance (centers, widths, heights); decoding inverts it, so
    ``decode(encode(b)) == b`` for normalized boxes. As in Paddle, the target center is the
    midpoint of its corners even in pixel mode, so there the round trip shifts by half a pixel.

    Args:
        prior_box (Tensor): [M, 4] priors (x1, y1, x2, y2).
        prior_box_var (Tensor|list|tuple): [M, 4] per-prior variances or 4 shared ones.
        target_box (Tensor): [N, 4] boxes to encode, or [N, M, 4] offsets to decode.
        code_type (str, optional): 'encode_center_size' or 'decode_center_size'.
        box_normalized (bool, optional): coordinates are normalized. Default: True.
        axis (int, optional): when decoding, the axis of target_box that indexes the priors:
            0 means prior j goes with ``target_box[:, j]``, 1 with ``target_box[j]``.
            Default: 0.

    Returns:
        Tensor: [N, M, 4] encoded offsets or decoded boxes (no gradient).

    Example:
        >>> priors = paddle.to_tensor([[0., 0., 4., 4.]])
        >>> boxes = paddle.to_tensor([[1., 1., 3., 5.]])
        >>> enc = paddle.vision.ops.box_coder(priors, [1., 1., 1., 1.], boxes)
        >>> paddle.vision.ops.box_coder(priors, [1., 1., 1., 1.], enc,
        ...                             code_type='decode_center_size').numpy()[0, 0]
        array([1., 1., 3., 5.], dtype=float32)
    """
    op = "box_coder"
    pb = _float_tensor(prior_box, op, "prior_box").numpy().astype(np.float64)
    tb = _float_tensor(target_box, op, "target_box").numpy().astype(np.float64)
    _ndim(pb, 2, op, "prior_box", last=4)
    if isinstance(prior_box_var, paddle.Tensor):
        var = _float_tensor(prior_box_var, op, "prior_box_var").numpy().astype(np.float64)
        if list(var.shape) != list(pb.shape):
            raise ValueError(f"{op}: prior_box_var must have the shape of prior_box "
                             f"{list(pb.shape)}, got {list(var.shape)}")
    elif isinstance(prior_box_var, (list, tuple)):
        if len(prior_box_var) != 4:
            raise ValueError(f"{op}: prior_box_var as a list must have 4 elements, got "
                             f"{len(prior_box_var)}")
        # a 32-bit float attribute in Paddle
        var = np.broadcast_to(np.asarray(prior_box_var, dtype=np.float32).astype(np.float64),
                              pb.shape)
    else:
        raise TypeError(f"{op}: prior_box_var must be a Tensor or a list/tuple of 4 floats, "
                        f"got {type(prior_box_var).__name__}")
    norm = 0.0 if box_normalized else 1.0
    pw = pb[:, 2] - pb[:, 0] + norm
    ph = pb[:, 3] - pb[:, 1] + norm
    pcx = pb[:, 0] + pw / 2
    pcy = pb[:, 1] + ph / 2
    if code_type == "encode_center_size":
        _ndim(tb, 2, op, "target_box", last=4)
        tw = (tb[:, 2] - tb[:, 0] + norm)[:, None]
        th = (tb[:, 3] - tb[:, 1] + norm)[:, None]
        # Paddle takes the target's center as the corner midpoint (no +1 in pixel mode),
        # unlike the prior's; kept so encoded targets match boxes trained with Paddle
        tcx = ((tb[:, 0] + tb[:, 2]) / 2)[:, None]
        tcy = ((tb[:, 1] + tb[:, 3]) / 2)[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.stack([(tcx - pcx) / pw, (tcy - pcy) / ph, np.log(np.abs(tw / pw)),
                            np.log(np.abs(th / ph))], axis=-1) / var[None]
    elif code_type == "decode_center_size":
        _ndim(tb, 3, op, "target_box", last=4)
        if axis not in (0, 1):
            raise ValueError(f"{op}: axis must be 0 or 1, got {axis}")
        if tb.shape[1 - axis] != pb.shape[0]:
            raise ValueError(f"{op}: target_box {list(tb.shape)} must have {pb.shape[0]} "
                             f"priors along dimension {1 - axis} (axis={axis})")

        def per_prior(a):  # line a prior-indexed [M] or [M, 4] array up with target_box
            return a[None] if axis == 0 else a[:, None]

        v = per_prior(var)
        pw_, ph_, pcx_, pcy_ = (per_prior(a) for a in (pw, ph, pcx, pcy))
        cx = v[..., 0] * tb[..., 0] * pw_ + pcx_
        cy = v[..., 1] * tb[..., 1] * ph_ + pcy_
        bw = np.exp(v[..., 2] * tb[..., 2]) * pw_
        bh = np.exp(v[..., 3] * tb[..., 3]) * ph_
        out = np.stack([cx - bw / 2, cy - bh / 2, cx + bw / 2 - norm, cy + bh / 2 - norm],
                       axis=-1)
    else:
        raise ValueError(f"{op}: code_type must be 'encode_center_size' or "
                         f"'decode_center_size', got {code_type!r}")
    return _out(out, target_box)


def _expand_ratios(aspect_ratios, flip):
    out = [1.0]
    for ar in (float(np.float32(a)) for a in aspect_ratios):
        if any(abs(ar - r) < 1e-6 for r in out):
            continue
        out.append(ar)
        if flip:
            out.append(float(np.float32(1.0 / ar)))
    return out


def prior_box(input, image, min_sizes, max_sizes=None, aspect_ratios=[1.0],  # noqa: B006
              variance=[0.1, 0.1, 0.2, 0.2], flip=False, clip=False,  # noqa: B006
              steps=[0.0, 0.0], offset=0.5, min_max_aspect_ratios_order=False,  # noqa: B006
              name=None):
    """SSD prior (anchor) boxes for every position of a feature map.

    Args:
        input (Tensor): [N, C, H, W] feature map (only its size is used).
        image (Tensor): [N, C, H_img, W_img] image (only its size is used).
        min_sizes (list|float): prior sizes.
        max_sizes (list|float, optional): one per min size; adds a ``sqrt(min*max)`` prior.
        aspect_ratios (list|float, optional): ratios (1.0 is always included). Default: [1.].
        variance (list, optional): the 4 variances. Default: [0.1, 0.1, 0.2, 0.2].
        flip (bool, optional): also use 1/ratio. Default: False.
        clip (bool, optional): clip boxes to [0, 1]. Default: False.
        steps (list, optional): (step_w, step_h); 0 means image size / feature size.
        offset (float, optional): center offset in cells. Default: 0.5.
        min_max_aspect_ratios_order (bool, optional): order priors as min, max, then ratios
            (Caffe's order). Default: False.

    Returns:
        tuple: ``(boxes, variances)``, each [H, W, num_priors, 4], normalized by image size.
    """
    op = "prior_box"
    _float_tensor(input, op, "input")
    _tensor(image, op, "image")
    if len(input.shape) != 4 or len(image.shape) != 4:
        raise ValueError(f"{op}: input and image must be 4-D, got {input.shape} and "
                         f"{image.shape}")
    listy = (list, tuple)
    min_sizes = [float(v) for v in (min_sizes if isinstance(min_sizes, listy) else [min_sizes])]
    ratios = [float(v) for v in (aspect_ratios if isinstance(aspect_ratios, listy)
                                 else [aspect_ratios])]
    steps = list(steps) if isinstance(steps, listy) else [steps]
    if len(steps) != 2:
        raise ValueError(f"{op}: steps should be (step_w, step_h), got {steps!r}")
    if max_sizes is not None and not isinstance(max_sizes, listy):
        max_sizes = [max_sizes]
    max_sizes = [float(v) for v in (max_sizes or [])]
    if max_sizes and len(max_sizes) != len(min_sizes):
        raise ValueError(f"{op}: max_sizes must have one entry per min size ({len(min_sizes)}),"
                         f" got {len(max_sizes)}")
    if len(variance) != 4:
        raise ValueError(f"{op}: variance must have 4 elements, got {variance!r}")
    ratios = _expand_ratios(ratios, flip)
    fh, fw = input.shape[2], input.shape[3]
    ih, iw = image.shape[2], image.shape[3]
    # Mirror Paddle's arithmetic: attributes are 32-bit floats, the per-prior half sizes are
    # computed in float32, positions and the final division in the input's dtype.
    f = np.float32
    t = np.float64 if _dtype_name(input) == "float64" else np.float32
    ratios = [f(r) for r in ratios]
    step_w = t(f(steps[0])) if steps[0] > 0 else t(iw) / t(fw)
    step_h = t(f(steps[1])) if steps[1] > 0 else t(ih) / t(fh)
    half = []  # (half width, half height) of every prior at one position, in Paddle's order
    for s, mn in enumerate(f(v) for v in min_sizes):
        by_ratio = [(mn * np.sqrt(r) / f(2), mn / np.sqrt(r) / f(2)) for r in ratios]
        big = [(np.sqrt(mn * f(max_sizes[s])) / f(2),) * 2] if max_sizes else []
        if min_max_aspect_ratios_order:
            rest = [hw for r, hw in zip(ratios, by_ratio) if abs(r - 1.0) >= 1e-6]
            half += [(mn / f(2), mn / f(2))] + big + rest
        else:
            half += by_ratio + big
    half = np.asarray(half, dtype=f).astype(t)
    off = t(f(offset))
    cx = ((np.arange(fw, dtype=t) + off) * step_w)[None, :, None]
    cy = ((np.arange(fh, dtype=t) + off) * step_h)[:, None, None]
    hw, hh = half[:, 0], half[:, 1]
    boxes = np.stack(np.broadcast_arrays((cx - hw) / t(iw), (cy - hh) / t(ih), (cx + hw) / t(iw),
                                         (cy + hh) / t(ih)), axis=-1)
    if clip:
        boxes = np.clip(boxes, t(0), t(1))
    var = np.broadcast_to(np.asarray(variance, dtype=f).astype(t), boxes.shape)
    return _out(boxes, input), _out(np.ascontiguousarray(var), input)


# ----------------------------------------------------------------------------- YOLOv3

def _sigmoid(v):
    return 0.5 * (np.tanh(0.5 * v) + 1.0)  # stable for large |v|


def _anchor_pairs(anchors, op):
    a = np.asarray(anchors, dtype=np.float64).reshape(-1)
    if a.size == 0 or a.size % 2:
        raise ValueError(f"{op}: anchors must hold (width, height) pairs, got {anchors!r}")
    return a.reshape(-1, 2)


def yolo_box(x, img_size, anchors, class_num, conf_thresh, downsample_ratio, clip_bbox=True,
             name=None, scale_x_y=1.0, iou_aware=False, iou_aware_factor=0.5):
    """Decode a YOLOv3 head into boxes and per-class scores.

    For anchor a at cell (i, j): ``cx = (j + s*sigmoid(tx) - (s-1)/2) * img_w / W``,
    ``w = exp(tw) * anchor_w * img_w / (downsample_ratio * W)`` (likewise y, h), with
    ``s = scale_x_y``. Confidence is ``sigmoid(obj)``, or with ``iou_aware``
    ``sigmoid(obj)**(1-f) * sigmoid(iou)**f``; positions below ``conf_thresh`` give zero boxes
    and scores. Scores are ``conf * sigmoid(class logits)``.

    Args:
        x (Tensor): [N, S*(5+class_num), H, W] head output (S anchors), or
            [N, S*(6+class_num), H, W] with ``iou_aware`` (the S IoU maps first).
        img_size (Tensor): [N, 2] int32 image (height, width).
        anchors (list): anchor (w, h) pairs, S of them.
        class_num (int): number of classes.
        conf_thresh (float): confidence threshold.
        downsample_ratio (int): stride of the head.
        clip_bbox (bool, optional): clip boxes to the image. Default: True.
        scale_x_y (float, optional): center scale. Default: 1.0.
        iou_aware (bool, optional): the head predicts IoU too. Default: False.
        iou_aware_factor (float, optional): the IoU exponent f. Default: 0.5.

    Returns:
        tuple: ``(boxes, scores)``: [N, S*H*W, 4] boxes (x1, y1, x2, y2) and
        [N, S*H*W, class_num] scores, anchor-major.
    """
    op = "yolo_box"
    _float_tensor(x, op, "x")
    xa = _work(x)
    _ndim(xa, 4, op, "x")
    an = _anchor_pairs(anchors, op)
    s = an.shape[0]
    n, c, h, w = xa.shape
    per = 6 + class_num if iou_aware else 5 + class_num
    if c != s * per:
        raise ValueError(f"{op}: x must have {s} x ({per}) = {s * per} channels for {s} "
                         f"anchors and class_num={class_num}, got {c}")
    isz = _tensor(img_size, op, "img_size").numpy().astype(np.float64)
    if list(isz.shape) != [n, 2]:
        raise ValueError(f"{op}: img_size must have shape [{n}, 2], got {list(isz.shape)}")
    # Paddle's float attributes are 32-bit
    scale_x_y, conf_thresh, f = _f32(scale_x_y), _f32(conf_thresh), _f32(iou_aware_factor)
    if iou_aware:
        iou = _sigmoid(xa[:, :s])
        p = xa[:, s:].reshape(n, s, 5 + class_num, h, w)
    else:
        p = xa.reshape(n, s, 5 + class_num, h, w)
    conf = _sigmoid(p[:, :, 4])
    if iou_aware:
        conf = conf ** (1 - f) * iou ** f
    img_h = isz[:, 0, None, None, None]
    img_w = isz[:, 1, None, None, None]
    bias = _f32(-0.5 * (scale_x_y - 1.0))
    cx = (np.arange(w) + _sigmoid(p[:, :, 0]) * scale_x_y + bias) * img_w / w
    cy = (np.arange(h)[:, None] + _sigmoid(p[:, :, 1]) * scale_x_y + bias) * img_h / h
    bw = np.exp(p[:, :, 2]) * an[None, :, 0, None, None] * img_w / (downsample_ratio * w)
    bh = np.exp(p[:, :, 3]) * an[None, :, 1, None, None] * img_h / (downsample_ratio * h)
    boxes = np.stack([cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2], axis=-1)
    if clip_bbox:
        lim = np.stack([img_w - 1, img_h - 1], axis=-1)
        boxes[..., :2] = np.maximum(boxes[..., :2], 0)
        boxes[..., 2:] = np.minimum(boxes[..., 2:], lim)
    keep = (conf >= conf_thresh)[..., None]
    scores = _sigmoid(p[:, :, 5:]).transpose(0, 1, 3, 4, 2) * conf[..., None]
    boxes = np.where(keep, boxes, 0).reshape(n, -1, 4)
    scores = np.where(keep, scores, 0).reshape(n, -1, class_num)
    return _out(boxes.astype(xa.dtype), x), _out(scores.astype(xa.dtype), x)


def _sce(v, label):
    """Sigmoid cross-entropy with logits, elementwise."""
    return np.maximum(v, 0) - v * label + np.log1p(np.exp(-np.abs(v)))


def _center_iou(ax, ay, aw, ah, bx, by, bw, bh):
    iw = np.minimum(ax + aw / 2, bx + bw / 2) - np.maximum(ax - aw / 2, bx - bw / 2)
    ih = np.minimum(ay + ah / 2, by + bh / 2) - np.maximum(ay - ah / 2, by - bh / 2)
    inter = np.where((iw < 0) | (ih < 0), 0.0, iw * ih)
    with np.errstate(divide="ignore", invalid="ignore"):
        return inter / (aw * ah + bw * bh - inter)


class _YoloLoss(PyLayer):
    @staticmethod
    def forward(ctx, x, gt, cfg):
        gt_box, gt_label, gt_score = gt
        anchors, mask, class_num, ignore_thresh, ratio, smooth, scale_xy = cfg
        xa = _work(x).astype(np.float64)
        n, _, h, w = xa.shape
        s = len(mask)
        p = xa.reshape(n, s, 5 + class_num, h, w)
        gb = gt_box.numpy().astype(np.float64)
        gl = gt_label.numpy().astype(np.int64)
        gs = np.ones(gl.shape) if gt_score is None else gt_score.numpy().astype(np.float64)
        in_size = float(ratio * h)
        man = anchors[mask]  # anchors of this head
        bias = _f32(-0.5 * (scale_xy - 1.0))
        gx, gy, gw, gh = (gb[..., i] for i in range(4))  # [N, B]
        valid = (gw >= 1e-6) & (gh >= 1e-6)
        # predictions that already overlap some ground truth well are not negatives
        px = (np.arange(w) + _sigmoid(p[:, :, 0]) * scale_xy + bias) / h
        py = (np.arange(h)[:, None] + _sigmoid(p[:, :, 1]) * scale_xy + bias) / h
        pw = np.exp(p[:, :, 2]) * man[None, :, 0, None, None] / in_size
        ph = np.exp(p[:, :, 3]) * man[None, :, 1, None, None] / in_size
        e = (slice(None), None, None, None, slice(None))  # gt axis last: [N, 1, 1, 1, B]
        iou = _center_iou(px[..., None], py[..., None], pw[..., None], ph[..., None],
                          gx[e], gy[e], gw[e], gh[e])
        iou = np.where(valid[e], np.nan_to_num(iou, nan=0.0), 0.0)
        best = iou.max(axis=-1) if iou.shape[-1] else np.zeros(px.shape)
        obj_mask = np.where(best > ignore_thresh, -1.0, 0.0)
        # each ground truth goes to its best anchor (by shape) if this head owns that anchor
        aiou = _center_iou(0.0, 0.0, gw[..., None], gh[..., None], 0.0, 0.0,
                           anchors[:, 0] / in_size, anchors[:, 1] / in_size)
        best_n = np.argmax(np.nan_to_num(aiou, nan=0.0), axis=-1)
        lookup = np.full(anchors.shape[0], -1)
        lookup[np.asarray(mask)] = np.arange(s)
        midx = lookup[best_n]
        pos = valid & (midx >= 0)
        bi, ti = np.nonzero(pos)
        m = midx[bi, ti]
        gi = np.clip((gx[bi, ti] * w).astype(np.int64), 0, w - 1)
        gj = np.clip((gy[bi, ti] * h).astype(np.int64), 0, h - 1)
        an = anchors[best_n[bi, ti]]
        sc = gs[bi, ti]
        tgt = np.stack([gx[bi, ti] * h - gi, gy[bi, ti] * h - gj,
                        np.log(gw[bi, ti] * in_size / an[:, 0]),
                        np.log(gh[bi, ti] * in_size / an[:, 1])], axis=1)
        wbox = (2.0 - gw[bi, ti] * gh[bi, ti]) * sc
        cell = p[bi, m, :, gj, gi]  # [P, 5 + class_num]
        loc = (_sce(cell[:, 0], tgt[:, 0]) + _sce(cell[:, 1], tgt[:, 1]) +
               np.abs(cell[:, 2] - tgt[:, 2]) + np.abs(cell[:, 3] - tgt[:, 3])) * wbox
        pos_v, neg_v = 1.0, 0.0
        if smooth:
            sw = min(1.0 / class_num, 1.0 / 40)
            pos_v, neg_v = 1.0 - sw, sw
        onehot = np.where(np.arange(class_num) == gl[bi, ti, None], pos_v, neg_v)
        cls = (_sce(cell[:, 5:], onehot).sum(axis=1)) * sc
        loss = np.bincount(bi, loc + cls, minlength=n).astype(np.float64)
        # the objectness target of a matched cell is its score; a later gt overwrites
        order = np.arange(bi.size)[::-1]
        key = ((bi * s + m) * h + gj) * w + gi
        _, first = np.unique(key[order], return_index=True)
        last = order[first]
        obj_mask[bi[last], m[last], gj[last], gi[last]] = sc[last]
        obj = p[:, :, 4]
        loss += np.where(obj_mask > 1e-5, _sce(obj, 1.0) * obj_mask,
                         np.where(obj_mask > -0.5, _sce(obj, 0.0), 0.0)).sum(axis=(1, 2, 3))
        ctx.keep = (p, bi, m, gj, gi, tgt, wbox, onehot, sc, obj_mask, x.shape, x.dtype,
                    x.place)
        return _out(loss.astype(_work(x).dtype), x)

    @staticmethod
    def backward(ctx, dloss):
        p, bi, m, gj, gi, tgt, wbox, onehot, sc, obj_mask, shape, dtype, place = ctx.keep
        dl = dloss.numpy().astype(np.float64)
        g = np.zeros_like(p)
        obj = p[:, :, 4]
        g[:, :, 4] = np.where(obj_mask > 1e-5, (_sigmoid(obj) - 1.0) * obj_mask,
                              np.where(obj_mask > -0.5, _sigmoid(obj), 0.0)) * \
            dl[:, None, None, None]
        cell = p[bi, m, :, gj, gi]
        d = np.empty_like(cell)
        d[:, 0] = (_sigmoid(cell[:, 0]) - tgt[:, 0]) * wbox
        d[:, 1] = (_sigmoid(cell[:, 1]) - tgt[:, 1]) * wbox
        d[:, 2] = np.where(cell[:, 2] > tgt[:, 2], 1.0, -1.0) * wbox
        d[:, 3] = np.where(cell[:, 3] > tgt[:, 3], 1.0, -1.0) * wbox
        d[:, 4] = 0.0
        d[:, 5:] = (_sigmoid(cell[:, 5:]) - onehot) * sc[:, None]
        # several ground truths may share a cell: accumulate
        np.add.at(g, (bi[:, None], m[:, None], np.arange(p.shape[2])[None], gj[:, None],
                      gi[:, None]), d * dl[bi, None])
        return _grad_out(g, shape, dtype, place)


def yolo_loss(x, gt_box, gt_label, anchors, anchor_mask, class_num, ignore_thresh,
              downsample_ratio, gt_score=None, use_label_smooth=True, name=None,
              scale_x_y=1.0):
    """YOLOv3 loss of one detection head, per image.

    Each valid ground truth (w, h > 0) is assigned to the anchor whose shape fits it best; if
    this head owns that anchor, its cell pays a location loss (sigmoid cross-entropy on x, y,
    L1 on log w, log h, weighted by ``(2 - w*h) * score``), a class loss (sigmoid
    cross-entropy, targets smoothed to ``1 - 1/K`` / ``1/K`` with K = max(class_num, 40) when
    ``use_label_smooth``) and is the objectness positive. Other cells are objectness
    negatives, unless their predicted box overlaps a ground truth by more than
    ``ignore_thresh``.

    Args:
        x (Tensor): [N, S*(5+class_num), H, W] head output, S = len(anchor_mask).
        gt_box (Tensor): [N, B, 4] ground truths (cx, cy, w, h), normalized to [0, 1].
        gt_label (Tensor): [N, B] int32 class ids.
        anchors (list): all anchor (w, h) pairs, in input pixels.
        anchor_mask (list): indices of the anchors this head predicts.
        class_num (int): number of classes.
        ignore_thresh (float): IoU above which a prediction is not a negative.
        downsample_ratio (int): stride of the head.
        gt_score (Tensor, optional): [N, B] ground-truth weights (mixup). Default: ones.
        use_label_smooth (bool, optional): smooth class targets. Default: True.
        scale_x_y (float, optional): center scale used when predicting boxes. Default: 1.0.

    Returns:
        Tensor: [N] loss of each image, differentiable with respect to ``x``.
    """
    op = "yolo_loss"
    _float_tensor(x, op, "x")
    if len(x.shape) != 4:
        raise ValueError(f"{op}: x must be 4-D [N, C, H, W], got shape {x.shape}")
    an = _anchor_pairs(anchors, op)
    mask = [int(v) for v in anchor_mask]
    if not mask or min(mask) < 0 or max(mask) >= an.shape[0]:
        raise ValueError(f"{op}: anchor_mask {anchor_mask!r} must index the {an.shape[0]} "
                         "anchors")
    n, c, h, w = x.shape
    if c != len(mask) * (5 + class_num):
        raise ValueError(f"{op}: x must have len(anchor_mask) x (5 + class_num) = "
                         f"{len(mask) * (5 + class_num)} channels, got {c}")
    _float_tensor(gt_box, op, "gt_box")
    _tensor(gt_label, op, "gt_label")
    if len(gt_box.shape) != 3 or gt_box.shape[0] != n or gt_box.shape[2] != 4:
        raise ValueError(f"{op}: gt_box must have shape [{n}, B, 4], got {gt_box.shape}")
    if list(gt_label.shape) != gt_box.shape[:2]:
        raise ValueError(f"{op}: gt_label must have shape {gt_box.shape[:2]}, got "
                         f"{gt_label.shape}")
    if gt_score is not None and list(_tensor(gt_score, op, "gt_score").shape) != \
            gt_box.shape[:2]:
        raise ValueError(f"{op}: gt_score must have shape {gt_box.shape[:2]}, got "
                         f"{gt_score.shape}")
    cfg = (an, mask, int(class_num), _f32(ignore_thresh), int(downsample_ratio),
           bool(use_label_smooth), _f32(scale_x_y))
    return _YoloLoss.apply(x, gt=(gt_box, gt_label, gt_score), cfg=cfg)


# ----------------------------------------------------------------------------- RPN / FPN

def _decode_anchors(anchors, deltas, variances, offset):
    """RPN box decoding (sizes count pixels when ``offset`` is 1); exp() is capped."""
    aw = anchors[:, 2] - anchors[:, 0] + offset
    ah = anchors[:, 3] - anchors[:, 1] + offset
    acx = anchors[:, 0] + 0.5 * aw
    acy = anchors[:, 1] + 0.5 * ah
    cx = variances[:, 0] * deltas[:, 0] * aw + acx
    cy = variances[:, 1] * deltas[:, 1] * ah + acy
    bw = np.exp(np.minimum(variances[:, 2] * deltas[:, 2], _BBOX_CLIP)) * aw
    bh = np.exp(np.minimum(variances[:, 3] * deltas[:, 3], _BBOX_CLIP)) * ah
    return np.stack([cx - bw / 2, cy - bh / 2, cx + bw / 2 - offset, cy + bh / 2 - offset],
                    axis=1)


def _proposals_one(sc, dl, im_hw, anchors, variances, pre_n, post_n, nms_thresh, min_size,
                   eta, pixel_offset):
    offset = 1.0 if pixel_offset else 0.0
    order = _desc(sc)
    if 0 < pre_n < sc.size:
        order = order[:pre_n]
    props = _decode_anchors(anchors[order], dl[order], variances[order], offset)
    im_h, im_w = im_hw
    props[:, 0::2] = np.maximum(np.minimum(props[:, 0::2], im_w - offset), 0)
    props[:, 1::2] = np.maximum(np.minimum(props[:, 1::2], im_h - offset), 0)
    s = sc[order]
    ws = props[:, 2] - props[:, 0] + offset
    hs = props[:, 3] - props[:, 1] + offset
    min_size = max(min_size, 1.0)
    keep = (ws >= min_size) & (hs >= min_size)
    if pixel_offset:
        keep &= (props[:, 0] + ws / 2 <= im_w) & (props[:, 1] + hs / 2 <= im_h)
    if not keep.any():  # Paddle then emits a single all-zero proposal for the image
        return np.zeros((1, 4), props.dtype), np.zeros(1, s.dtype)
    props, s = props[keep], s[keep]
    if nms_thresh > 0:
        k = _nms_keep(props, nms_thresh, normalized=not pixel_offset, eta=eta)
        if 0 < post_n < k.size:
            k = k[:post_n]
        props, s = props[k], s[k]
    return props, s


def generate_proposals(scores, bbox_deltas, img_size, anchors, variances, pre_nms_top_n=6000,
                       post_nms_top_n=1000, nms_thresh=0.5, min_size=0.1, eta=1.0,
                       pixel_offset=False, return_rois_num=False, name=None):
    """RPN proposals: decode anchors by the predicted deltas, clip, drop small boxes, NMS.

    Per image: the ``pre_nms_top_n`` best-scored anchors are decoded
    (``exp`` capped at ``log(1000/16)``), clipped to the image, boxes smaller than
    ``max(min_size, 1)`` are dropped, NMS with ``nms_thresh`` (adaptive with ``eta < 1``)
    keeps at most ``post_nms_top_n``. An image with nothing left gets one all-zero proposal.

    Args:
        scores (Tensor): [N, A, H, W] objectness.
        bbox_deltas (Tensor): [N, 4*A, H, W] box deltas.
        img_size (Tensor): [N, 2] image (height, width).
        anchors (Tensor): [H, W, A, 4] anchors (x1, y1, x2, y2).
        variances (Tensor): [H, W, A, 4] anchor variances.
        pre_nms_top_n (int, optional): candidates per image before NMS. Default: 6000.
        post_nms_top_n (int, optional): proposals per image after NMS. Default: 1000.
        nms_thresh (float, optional): NMS IoU threshold. Default: 0.5.
        min_size (float, optional): minimum box side. Default: 0.1.
        eta (float, optional): adaptive-NMS factor. Default: 1.0.
        pixel_offset (bool, optional): sizes count pixels (+1). Default: False.
        return_rois_num (bool, optional): also return the per-image counts. Default: False.

    Returns:
        tuple: ``(rpn_rois, rpn_roi_probs, rpn_rois_num)``: [M, 4] proposals, [M, 1] scores
        and [N] int32 counts (None unless ``return_rois_num``).
    """
    op = "generate_proposals"
    for t, arg in ((scores, "scores"), (bbox_deltas, "bbox_deltas"), (img_size, "img_size"),
                   (anchors, "anchors"), (variances, "variances")):
        _float_tensor(t, op, arg)
    sc, dl = _work(scores), _work(bbox_deltas)
    _ndim(sc, 4, op, "scores")
    n, a, h, w = sc.shape
    if list(dl.shape) != [n, 4 * a, h, w]:
        raise ValueError(f"{op}: bbox_deltas must have shape {[n, 4 * a, h, w]}, got "
                         f"{list(dl.shape)}")
    an = anchors.numpy().astype(sc.dtype)
    va = variances.numpy().astype(sc.dtype)
    if an.size != h * w * a * 4 or va.size != an.size:
        raise ValueError(f"{op}: anchors and variances must have shape {[h, w, a, 4]}, got "
                         f"{anchors.shape} and {variances.shape}")
    isz = img_size.numpy().astype(sc.dtype)
    if list(isz.shape) != [n, 2]:
        raise ValueError(f"{op}: img_size must have shape [{n}, 2], got {list(isz.shape)}")
    an, va = an.reshape(-1, 4), va.reshape(-1, 4)
    rois, probs, nums = [], [], []
    for i in range(n):  # one image at a time (NMS is per image)
        r, p = _proposals_one(sc[i].transpose(1, 2, 0).reshape(-1),
                              dl[i].transpose(1, 2, 0).reshape(-1, 4), isz[i], an, va,
                              int(pre_nms_top_n), int(post_nms_top_n), _f32(nms_thresh),
                              _f32(min_size), _f32(eta), bool(pixel_offset))
        rois.append(r)
        probs.append(p)
        nums.append(r.shape[0])
    rois_t = _out(np.concatenate(rois).reshape(-1, 4), scores)
    probs_t = _out(np.concatenate(probs).reshape(-1, 1), scores)
    num_t = paddle.to_tensor(np.asarray(nums, dtype=np.int32), place=scores.place)
    return rois_t, probs_t, num_t if return_rois_num else None


def distribute_fpn_proposals(fpn_rois, min_level, max_level, refer_level, refer_scale,
                             pixel_offset=False, rois_num=None, name=None):
    """Route RoIs to FPN levels by size: ``floor(log2(sqrt(area) / refer_scale) +
    refer_level)``, clipped to ``[min_level, max_level]``.

    Args:
        fpn_rois (Tensor): [R, 4] RoIs (x1, y1, x2, y2), grouped by image.
        min_level (int): lowest level.
        max_level (int): highest level.
        refer_level (int): level of a RoI of size ``refer_scale``.
        refer_scale (int): reference size.
        pixel_offset (bool, optional): sizes count pixels (+1). Default: False.
        rois_num (Tensor, optional): [B] int32 RoIs per image.

    Returns:
        tuple: ``(multi_rois, restore_ind, rois_num_per_level)``: one [M_l, 4] Tensor per level
        (RoIs in their original order); [R, 1] int32 ``restore_ind`` such that
        ``concat(multi_rois)[restore_ind[:, 0]]`` is ``fpn_rois``; and per level a [B] int32
        count per image (None when ``rois_num`` is None).
    """
    op = "distribute_fpn_proposals"
    if min_level <= 0 or max_level <= 0:
        raise ValueError(f"{op}: min_level and max_level should be greater than 0, got "
                         f"{min_level} and {max_level}")
    if max_level <= min_level:
        raise ValueError(f"{op}: max_level ({max_level}) should be greater than min_level "
                         f"({min_level})")
    _float_tensor(fpn_rois, op, "fpn_rois")
    r = _work(fpn_rois)
    _ndim(r, 2, op, "fpn_rois", last=4)
    dt = r.dtype.type
    w = r[:, 2] - r[:, 0]
    h = r[:, 3] - r[:, 1]
    off = dt(1) if pixel_offset else dt(0)
    area = np.where((w < 0) | (h < 0), dt(0), (w + off) * (h + off))
    with np.errstate(divide="ignore"):
        lvl = np.floor(np.log2(np.sqrt(area) / dt(refer_scale) + dt(1e-8)) + dt(refer_level))
    lvl = np.clip(lvl, min_level, max_level).astype(np.int64) - min_level
    n_lvl = max_level - min_level + 1
    order = np.argsort(lvl, kind="stable")  # level by level, original order inside a level
    restore = np.empty(r.shape[0], dtype=np.int32)
    restore[order] = np.arange(r.shape[0], dtype=np.int32)
    counts = np.bincount(lvl, minlength=n_lvl)
    bounds = np.concatenate([[0], np.cumsum(counts)])
    multi = [_out(np.ascontiguousarray(r[order[bounds[i]:bounds[i + 1]]]), fpn_rois)
             for i in range(n_lvl)]
    restore_t = paddle.to_tensor(restore.reshape(-1, 1), place=fpn_rois.place)
    per_level = None
    if rois_num is not None:
        counts_img = _int_np(rois_num, op, "rois_num").reshape(-1)
        if int(counts_img.sum()) != r.shape[0]:
            raise ValueError(f"{op}: rois_num must sum to the number of RoIs ({r.shape[0]}), "
                             f"got {counts_img.tolist()}")
        img = np.repeat(np.arange(counts_img.size), counts_img)
        table = np.bincount(lvl * counts_img.size + img,
                            minlength=n_lvl * counts_img.size).reshape(n_lvl, -1)
        per_level = [paddle.to_tensor(table[i].astype(np.int32), place=fpn_rois.place)
                     for i in range(n_lvl)]
    return multi, restore_t, per_level


# ----------------------------------------------------------------------------- image I/O

def read_file(filename, name=None):
    """Read a file's raw bytes into a 1-D uint8 Tensor (on the CPU).

    Args:
        filename (str): path of the file.

    Returns:
        Tensor: [num_bytes] uint8.
    """
    if not isinstance(filename, (str, bytes)) and not hasattr(filename, "__fspath__"):
        raise TypeError(f"read_file: filename must be a path, got {type(filename).__name__}")
    with open(filename, "rb") as f:
        data = np.frombuffer(f.read(), dtype=np.uint8)
    return paddle.to_tensor(data.copy(), place="cpu")


def decode_jpeg(x, mode="unchanged", name=None):
    """Decode JPEG bytes (from :func:`read_file`) into a [C, H, W] uint8 image.

    Args:
        x (Tensor): 1-D uint8 Tensor of JPEG bytes.
        mode (str, optional): 'unchanged' keeps the file's channels (1 for grayscale, 3 for
            color), 'gray' gives 1 channel, 'rgb' 3. Default: 'unchanged'.

    Returns:
        Tensor: [C, H, W] uint8.
    """
    import io

    from PIL import Image, UnidentifiedImageError

    op = "decode_jpeg"
    _tensor(x, op, "x")
    if _dtype_name(x) != "uint8" or len(x.shape) != 1:
        raise TypeError(f"{op}: x must be a 1-D uint8 Tensor of JPEG bytes, got "
                        f"{_dtype_name(x)} with shape {x.shape}")
    modes = {"unchanged": None, "gray": "L", "rgb": "RGB"}
    if mode not in modes:
        raise ValueError(f"{op}: mode must be one of {list(modes)}, got {mode!r}")
    try:
        img = Image.open(io.BytesIO(x.numpy().tobytes()))
        img.load()
    except (UnidentifiedImageError, OSError) as e:
        raise ValueError(f"{op}: x does not hold a decodable image ({e})") from None
    target = modes[mode] or ("L" if img.mode in ("L", "1", "I;16") else "RGB")
    arr = np.asarray(img.convert(target))
    arr = arr[None] if arr.ndim == 2 else arr.transpose(2, 0, 1)
    return paddle.to_tensor(np.ascontiguousarray(arr))
