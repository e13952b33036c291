"""Normalization: paddle_hl/nn/functional/norm.py and paddle_hl/nn/layer/norm.py."""

import numpy as np
import pytest

import paddle_hl as paddle
import paddle_hl.nn as nn
import paddle_hl.nn.functional as F
from tests.op_check import check_parity, gradcheck

rng = np.random.default_rng(0)


def randn(*shape, dtype="float64"):
    return rng.standard_normal(shape).astype(dtype)


# ----------------------------------------------------------------------- functional parity
@pytest.mark.parity
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape,fmt", [((4, 3), "NC"), ((4, 3, 5), "NCL"), ((4, 5, 3), "NLC"),
                                       ((2, 3, 4, 5), "NCHW"), ((2, 4, 5, 3), "NHWC"),
                                       ((2, 3, 2, 3, 2), "NCDHW"), ((2, 2, 3, 2, 3), "NDHWC")])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_batch_norm_parity(training, shape, fmt, dtype, pd):
    x = randn(*shape, dtype=dtype)
    w, b = randn(3, dtype=dtype), randn(3, dtype=dtype)
    rm, rv = randn(3, dtype=dtype), rng.uniform(0.5, 2, 3).astype(dtype)

    def f(P, x, w, b):
        m, v = P.to_tensor(rm), P.to_tensor(rv)
        y = P.nn.functional.batch_norm(x, m, v, w, b, training=training, momentum=0.7,
                                       epsilon=1e-4, data_format=fmt)
        return [y, m, v]

    check_parity(f, [x, w, b], pd, rtol=1e-4 if dtype == "float32" else None)


# eval-mode batch_norm computes x * scale + shift in one of three ways: per-channel vectors
# expanded over short planes (N > 1, H*W < 512), a per-row broadcast on long planes (with NumPy's
# ufunc buffer disabled), or the plain broadcast (N == 1, channels last)
EVAL_BN_CASES = [((4, 6, 7, 7), "NCHW"), ((2, 5, 24, 24), "NCHW"), ((1, 4, 5, 6), "NCHW"),
                 ((3, 4, 600), "NCL"), ((2, 5, 6, 4), "NHWC"), ((1, 3, 30, 20), "NCHW")]


@pytest.mark.parity
@pytest.mark.parametrize("shape,fmt", EVAL_BN_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_eval_paths_parity(shape, fmt, dtype, affine, pd):
    c = shape[-1] if fmt[-1] == "C" else shape[1]
    x = randn(*shape, dtype=dtype) * 3 + 1
    rm, rv = randn(c, dtype=dtype), rng.uniform(0.5, 2, c).astype(dtype)
    params = [randn(c, dtype=dtype), randn(c, dtype=dtype)] if affine else []

    def f(P, x, *wb):
        w, b = wb if wb else (None, None)
        return P.nn.functional.batch_norm(x, P.to_tensor(rm), P.to_tensor(rv), w, b,
                                          training=False, data_format=fmt)

    tol = 1e-5 if dtype == "float32" else None
    check_parity(f, [x, *params], pd, rtol=tol, atol=tol)


@pytest.mark.parametrize("shape,fmt", EVAL_BN_CASES)
def test_batch_norm_eval_formula_and_bufsize(shape, fmt):
    c = shape[-1] if fmt[-1] == "C" else shape[1]
    x, w, b = randn(*shape), randn(c), randn(c)
    rm, rv = randn(c), rng.uniform(0.5, 2, c)
    before = np.getbufsize()
    y = F.batch_norm(paddle.to_tensor(x), paddle.to_tensor(rm), paddle.to_tensor(rv),
                     paddle.to_tensor(w), paddle.to_tensor(b), data_format=fmt).numpy()
    assert np.getbufsize() == before
    cs = (1, c) + (1,) * (len(shape) - 2) if fmt[-1] != "C" else (c,)
    ref = (x - rm.reshape(cs)) / np.sqrt(rv.reshape(cs) + 1e-5) * w.reshape(cs) + b.reshape(cs)
    np.testing.assert_allclose(y, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parity
@pytest.mark.parametrize("ugs", [True, False])
def test_batch_norm_use_global_stats(ugs, pd):
    x = randn(4, 3, 5)

    def f(P, x):
        m, v = P.to_tensor(np.array([0.1, 0.2, 0.3])), P.to_tensor(np.array([1.0, 2.0, 3.0]))
        y = P.nn.functional.batch_norm(x, m, v, training=not ugs, use_global_stats=ugs)
        return [y, m, v]

    check_parity(f, [x], pd)


@pytest.mark.parity
def test_batch_norm_single_value_per_channel_is_identity(pd):
    x = randn(1, 3, 1, 1)
    w, b = randn(3), randn(3)

    def f(P, x, w, b):
        m, v = P.zeros([3], "float64"), P.ones([3], "float64")
        return [P.nn.functional.batch_norm(x, m, v, w, b, training=True), m, v]

    check_parity(f, [x, w, b], pd)


@pytest.mark.parity
@pytest.mark.parametrize("shape,ns", [((2, 3, 4, 5), [4, 5]), ((3, 7), 7), ((2, 3, 4), [3, 4]),
                                      ((0, 4), [4])])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_parity(shape, ns, dtype, affine, pd):
    x = randn(*shape, dtype=dtype)
    d = int(np.prod(ns))
    if affine:
        check_parity(lambda P, x, w, b: P.nn.functional.layer_norm(x, ns, w, b),
                     [x, randn(d, dtype=dtype), randn(d, dtype=dtype)], pd,
                     rtol=1e-4 if dtype == "float32" else None)
    else:
        check_parity(lambda P, x: P.nn.functional.layer_norm(x, ns), [x], pd,
                     rtol=1e-4 if dtype == "float32" else None)


@pytest.mark.parity
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (2, 3, 6), (3, 3, 2, 2, 2), (2, 3)])
@pytest.mark.parametrize("affine", [True, False])
def test_instance_norm_parity(shape, affine, pd):
    x = randn(*shape)
    if affine:
        check_parity(lambda P, x, w, b: P.nn.functional.instance_norm(x, weight=w, bias=b),
                     [x, randn(3), randn(3)], pd)
    else:
        check_parity(lambda P, x: P.nn.functional.instance_norm(x), [x], pd)


@pytest.mark.parity
@pytest.mark.parametrize("shape,fmt", [((2, 5, 4, 3), "NCHW"), ((2, 4, 3, 5), "NHWC"),
                                       ((1, 6, 4), "NCL"), ((3, 4, 6), "NLC"),
                                       ((1, 4, 2, 3, 2), "NCDHW"), ((2, 2, 2, 3, 4), "NDHWC")])
@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_b80_local_response_norm_parity(shape, fmt, size, pd):
    x = randn(*shape)
    check_parity(lambda P, x: P.nn.functional.local_response_norm(
        x, size, alpha=0.1, beta=0.6, k=1.5, data_format=fmt), [x], pd, rtol=1e-7, atol=1e-8)


# ----------------------------------------------------------------------- gradchecks
@pytest.mark.parametrize("fmt,shape", [("NCHW", (3, 2, 2, 3)), ("NHWC", (3, 2, 3, 2)),
                                       ("NC", (5, 2))])
def test_batch_norm_gradcheck(fmt, shape):
    c = shape[-1] if fmt == "NHWC" else shape[1]
    for training in (True, False):
        gradcheck(lambda x, w, b: F.batch_norm(x, paddle.zeros([c], "float64"),
                                               paddle.ones([c], "float64") * 2, w, b,
                                               training=training, data_format=fmt),
                  [randn(*shape), randn(c), randn(c)], rtol=1e-5, atol=1e-6)


def test_norm_functional_gradchecks():
    gradcheck(lambda x, w, b: F.layer_norm(x, [3, 2], w, b), [randn(2, 3, 2), randn(6),
                                                             randn(6)])
    gradcheck(lambda x, w, b: F.instance_norm(x, weight=w, bias=b),
              [randn(2, 3, 4), randn(3), randn(3)])
    gradcheck(lambda x: F.local_response_norm(x, 3, alpha=0.5, k=1.0), [randn(2, 4, 3)])
    from paddle_hl.nn.functional.norm import _group_norm

    gradcheck(lambda x, w, b: _group_norm(x, 2, w, b), [randn(2, 4, 3), randn(4), randn(4)])
    gradcheck(lambda x, w, b: _group_norm(x, 2, w, b, data_format="NHWC"),
              [randn(2, 3, 4), randn(4), randn(4)])


@pytest.mark.parametrize("fn", ["layer_norm", "batch_norm", "batch_norm_eval", "group_norm"])
def test_norm_second_order(fn):
    """create_graph=True through the fused kernels matches finite differences."""
    from paddle_hl.nn.functional.norm import _group_norm

    x0, w0 = randn(4, 4), randn(4)
    gw = randn(4, 4)

    def run(x, w):
        if fn == "layer_norm":
            return F.layer_norm(x, 4, w)
        if fn == "group_norm":
            return _group_norm(x, 2, w)
        m, v = paddle.zeros([4], "float64"), paddle.ones([4], "float64") * 2
        return F.batch_norm(x, m, v, w, training=fn == "batch_norm")

    def first(xa):
        x = paddle.to_tensor(xa, stop_gradient=False)
        w = paddle.to_tensor(w0, stop_gradient=False)
        y = run(x, w)
        gx, gwt = paddle.grad((y * paddle.to_tensor(gw)).sum(), [x, w])
        return gx.numpy().sum() + (gwt.numpy() ** 2).sum()

    x = paddle.to_tensor(x0, stop_gradient=False)
    w = paddle.to_tensor(w0, stop_gradient=False)
    gx, gwt = paddle.grad((run(x, w) * paddle.to_tensor(gw)).sum(), [x, w], create_graph=True)
    (hx,) = paddle.grad(gx.sum() + (gwt ** 2).sum(), x)
    num = np.zeros_like(x0)
    for idx in np.ndindex(x0.shape):
        a, b = x0.copy(), x0.copy()
        a[idx] += 1e-6
        b[idx] -= 1e-6
        num[idx] = (first(a) - first(b)) / 2e-6
    np.testing.assert_allclose(hx.numpy(), num, rtol=1e-4, atol=1e-6)


# ----------------------------------------------------------------------- layer parity
def _layer_parity(ours, theirs, x, pd, modes=("train", "eval"), tol=1e-4):
    sd = theirs.state_dict()
    assert list(ours.state_dict()) == list(sd)
    for k, v in ours.state_dict().items():
        assert v.shape == sd[k].shape, k
    ours.set_state_dict({k: v.numpy() for k, v in sd.items()})
    assert repr(ours) == repr(theirs)
    for mode in modes:
        getattr(ours, mode)()
        getattr(theirs, mode)()
        a = paddle.to_tensor(x, stop_gradient=False)
        b = pd.to_tensor(x, stop_gradient=False)
        ya, yb = ours(a), theirs(b)
        np.testing.assert_allclose(ya.numpy(), yb.numpy(), rtol=tol, atol=tol)
        w = rng.standard_normal(x.shape if ya.shape == list(x.shape) else ya.shape)
        (ya * paddle.to_tensor(w, dtype=ya.dtype)).sum().backward()
        (yb * pd.to_tensor(w, dtype=yb.dtype)).sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=tol, atol=tol)
        theirs_p = dict(theirs.named_parameters())
        for k, p in ours.named_parameters():
            q = theirs_p[k]
            if p.grad is None or q.grad is None:
                # Paddle drops the weight gradient of a BatchNorm without bias; ours keeps it
                continue
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=tol, atol=tol,
                                       err_msg=k)
            p.clear_grad()
            q.clear_grad()
        for k, v in ours.state_dict().items():
            np.testing.assert_allclose(v.numpy(), theirs.state_dict()[k].numpy(), rtol=tol,
                                       atol=tol, err_msg=f"{k} after {mode}")


BN_LAYERS = [
    ("BatchNorm1D", (3,), {}, (4, 3, 5)), ("BatchNorm1D", (3,), {"data_format": "NC"}, (6, 3)),
    ("BatchNorm1D", (3,), {"data_format": "NLC", "momentum": 0.5}, (4, 5, 3)),
    ("BatchNorm2D", (3,), {}, (2, 3, 4, 4)),
    ("BatchNorm2D", (3,), {"data_format": "NHWC", "epsilon": 1e-3}, (2, 4, 4, 3)),
    ("BatchNorm2D", (3,), {"weight_attr": False, "bias_attr": False}, (2, 3, 2, 2)),
    ("BatchNorm2D", (3,), {"use_global_stats": True}, (2, 3, 2, 2)),
    ("BatchNorm2D", (3,), {"bias_attr": False}, (2, 3, 2, 2)),
    ("BatchNorm3D", (3,), {}, (2, 3, 2, 2, 3)),
    ("BatchNorm3D", (3,), {"data_format": "NDHWC"}, (2, 2, 2, 3, 3)),
    ("BatchNorm", (3,), {}, (4, 3, 2, 2)), ("BatchNorm", (3,), {"act": "relu"}, (4, 3)),
    ("BatchNorm", (3,), {"data_layout": "NHWC"}, (2, 2, 2, 3)),
    ("LayerNorm", ([3, 4],), {}, (2, 5, 3, 4)), ("LayerNorm", (4,), {"epsilon": 1e-3},
                                                 (3, 4)),
    ("LayerNorm", (4,), {"weight_attr": False}, (3, 4)),
    ("GroupNorm", (2, 4), {}, (2, 4, 3, 3)), ("GroupNorm", (4, 4), {"epsilon": 1e-3}, (2, 4, 5)),
    ("GroupNorm", (2, 4), {"data_format": "NHWC"}, (2, 3, 3, 4)),
    ("GroupNorm", (1, 4), {"weight_attr": False}, (2, 4)),
    ("InstanceNorm1D", (3,), {}, (2, 3, 5)), ("InstanceNorm2D", (3,), {}, (2, 3, 4, 4)),
    ("InstanceNorm3D", (3,), {}, (2, 3, 2, 2, 2)),
    ("InstanceNorm2D", (3,), {"weight_attr": False, "bias_attr": False}, (2, 3, 2, 2)),
    ("LocalResponseNorm", (3,), {}, (2, 5, 3, 3)),
    ("LocalResponseNorm", (3,), {"data_format": "NHWC", "alpha": 1e-2, "k": 2.0},
     (2, 3, 3, 5)),
]


@pytest.mark.parity
@pytest.mark.parametrize("cls,args,kw,shape", BN_LAYERS)
def test_norm_layer_parity(cls, args, kw, shape, pd):
    ours, theirs = getattr(nn, cls)(*args, **kw), getattr(pd.nn, cls)(*args, **kw)
    x = rng.standard_normal(shape).astype("float32")
    # randomize the parameters and running statistics before copying them over
    for p in theirs.parameters():
        p.set_value(pd.to_tensor(rng.uniform(0.5, 1.5, p.shape).astype("float32")))
    _layer_parity(ours, theirs, x, pd)


@pytest.mark.parity
def test_norm_layer_names_and_reprs(pd):
    cases = [("BatchNorm2D", (3,), {"name": "bnx"}), ("SyncBatchNorm", (3,), {}),
             ("SyncBatchNorm", (3,), {"data_format": "NHWC", "name": "sy"}),
             ("LayerNorm", ([2, 3],), {}), ("GroupNorm", (2, 4), {"epsilon": 1e-3}),
             ("InstanceNorm2D", (3,), {}), ("LocalResponseNorm", (5,), {"name": "l"}),
             ("SpectralNorm", ([4, 5],), {}), ("BatchNorm", (3,), {})]
    for cls, args, kw in cases:
        ours, theirs = getattr(nn, cls)(*args, **kw), getattr(pd.nn, cls)(*args, **kw)
        assert repr(ours) == repr(theirs)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        assert [p.stop_gradient for p in ours.parameters()] == \
            [p.stop_gradient for p in theirs.parameters()]
    bn = nn.BatchNorm2D(3, name="bny")
    assert bn._mean.name == "bny_mean" and bn._variance.name == "bny_variance"
    old = nn.BatchNorm(3, moving_mean_name="mm", moving_variance_name="vv")
    assert [p.name for p in old.parameters()][2:] == ["mm", "vv"]


@pytest.mark.parity
def test_spectral_norm_forward_parity(pd):
    for shape, dim, iters in [([4, 5], 0, 1), ([4, 3, 2], 1, 2), ([3, 2, 2, 2], 0, 3)]:
        theirs = pd.nn.SpectralNorm(shape, dim=dim, power_iters=iters)
        ours = nn.SpectralNorm(shape, dim=dim, power_iters=iters)
        ours.set_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
        w = rng.standard_normal(shape).astype("float32")
        np.testing.assert_allclose(ours(paddle.to_tensor(w)).numpy(),
                                   theirs(pd.to_tensor(w)).numpy(), rtol=1e-5, atol=1e-6)


def test_spectral_norm_gradient_treats_u_v_as_constants():
    sn = nn.SpectralNorm([3, 4], dim=0, power_iters=2, dtype="float64")
    w0 = randn(3, 4)
    u, v = sn.weight_u.numpy(), sn.weight_v.numpy()
    for _ in range(2):
        v = w0.T @ u
        v /= np.linalg.norm(v) + 1e-12
        u = w0 @ v
        u /= np.linalg.norm(u) + 1e-12
    sigma = u @ w0 @ v
    g = randn(3, 4)
    w = paddle.to_tensor(w0, stop_gradient=False)
    y = sn(w)
    np.testing.assert_allclose(y.numpy(), w0 / sigma, rtol=1e-12)
    (y * paddle.to_tensor(g)).sum().backward()
    ref = g / sigma - np.outer(u, v) * (g * w0).sum() / sigma ** 2
    np.testing.assert_allclose(w.grad.numpy(), ref, rtol=1e-10)
    # the second-order rule reproduces the same first gradient
    w2 = paddle.to_tensor(w0, stop_gradient=False)
    (gw,) = paddle.grad((sn(w2) * paddle.to_tensor(g)).sum(), w2, create_graph=True)
    np.testing.assert_allclose(gw.numpy(), ref, rtol=1e-10)
    with pytest.raises(ValueError, match=r"SpectralNorm.*\[3, 4\]"):
        sn(paddle.rand([3, 5]))
    with pytest.raises(AssertionError, match="dim"):
        nn.SpectralNorm([3, 4], dim=2)
    with pytest.raises(ValueError, match="0 or 1"):
        nn.SpectralNorm([3, 4, 2], dim=2)


# ------------------------------------------------ the dtype is fixed when a layer is built
def test_b79_dtype_fixed_at_construction():
    paddle.set_default_dtype("float64")
    bn64 = nn.BatchNorm2D(3)
    paddle.set_default_dtype("float32")
    bn32 = nn.BatchNorm2D(3)
    assert bn64.weight.dtype == paddle.float64 and bn64._mean.dtype == paddle.float64
    assert bn32.weight.dtype == paddle.float32 and bn32._variance.dtype == paddle.float32
    y = bn64(paddle.rand([2, 3, 2, 2], "float64"))
    assert y.dtype == paddle.float64 and bn64._mean.dtype == paddle.float64


def test_b79_nhwc_backward_matches_nchw():
    x = randn(2, 3, 4, 5, dtype="float32")
    a = paddle.to_tensor(x, stop_gradient=False)
    b = paddle.to_tensor(x.transpose(0, 2, 3, 1).copy(), stop_gradient=False)
    m1, m2 = nn.BatchNorm2D(3), nn.BatchNorm2D(3, data_format="NHWC")
    g = randn(2, 3, 4, 5, dtype="float32")
    (m1(a) * paddle.to_tensor(g)).sum().backward()
    (m2(b) * paddle.to_tensor(g.transpose(0, 2, 3, 1).copy())).sum().backward()
    np.testing.assert_allclose(b.grad.numpy().transpose(0, 3, 1, 2), a.grad.numpy(),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(m2.weight.grad.numpy(), m1.weight.grad.numpy(), rtol=1e-4)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("layer", ["bn", "ln", "gn"])
def test_b79_low_precision_grads_stay_low(dtype, layer):
    x = randn(4, 4, 3, 3, dtype="float32")
    m = {"bn": lambda: nn.BatchNorm2D(4), "ln": lambda: nn.LayerNorm([3, 3]),
         "gn": lambda: nn.GroupNorm(2, 4)}[layer]()
    ref = m(paddle.to_tensor(x)).numpy()
    t = paddle.to_tensor(x).astype(dtype)
    t.stop_gradient = False
    y = m(t)
    assert y.dtype == t.dtype
    tol = 2e-2 if dtype == "float16" else 1e-1
    np.testing.assert_allclose(y.astype("float32").numpy(), ref, rtol=tol, atol=tol)
    y.sum().backward()
    assert t.grad.dtype == t.dtype
    assert m.weight.grad.dtype == paddle.float32


def test_b79_batchnorm1d_huge_batch():
    n = 300000
    x = (rng.standard_normal((n, 4)) * 3 + 100).astype("float32")
    bn = nn.BatchNorm1D(4, data_format="NC")
    y = bn(paddle.to_tensor(x)).numpy()
    np.testing.assert_allclose(y.mean(0), np.zeros(4), atol=1e-3)
    np.testing.assert_allclose(y.std(0), np.ones(4), rtol=1e-3)
    np.testing.assert_allclose(bn._mean.numpy(), 0.1 * x.astype("float64").mean(0), rtol=1e-4)


# ------------------------------------------------------------- LayerNorm in float64
@pytest.mark.parity
def test_b80_layernorm_float64(pd):
    paddle.set_default_dtype("float64")
    try:
        ours = nn.LayerNorm([3, 4])
    finally:
        paddle.set_default_dtype("float32")
    pd.set_default_dtype("float64")
    try:
        theirs = pd.nn.LayerNorm([3, 4])
    finally:
        pd.set_default_dtype("float32")
    x = randn(2, 3, 4) * 1e3 + 5
    _layer_parity(ours, theirs, x, pd, modes=("train",), tol=1e-10)


def test_b80_instance_norm_without_affine_and_repr():
    x = randn(2, 3, 4)
    y = F.instance_norm(paddle.to_tensor(x), weight=None, bias=None).numpy()
    ref = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(y, ref, rtol=1e-10)
    assert repr(nn.InstanceNorm2D(3, epsilon=1e-3)) == \
        "InstanceNorm2D(num_features=3, epsilon=0.001)"


@pytest.mark.parametrize("n", [1, 2, 7])
def test_b80_local_response_norm_any_batch(n):
    x = randn(n, 6, 3, 3)
    y = F.local_response_norm(paddle.to_tensor(x), 5).numpy()
    sq = np.pad(x ** 2, ((0, 0), (2, 2), (0, 0), (0, 0)))
    win = sum(sq[:, j:j + 6] for j in range(5)) / 5
    np.testing.assert_allclose(y, x / (1.0 + 1e-4 * win) ** 0.75, rtol=1e-6)


# ----------------------------------------------------------------------- state, sync, errors
def test_state_dict_roundtrip_and_running_stats():
    bn = nn.BatchNorm2D(3, momentum=0.8)
    x = randn(4, 3, 2, 2, dtype="float32")
    bn(paddle.to_tensor(x))
    np.testing.assert_allclose(bn._mean.numpy(), 0.2 * x.mean((0, 2, 3)), rtol=1e-5)
    np.testing.assert_allclose(bn._variance.numpy(), 0.8 + 0.2 * x.var((0, 2, 3)), rtol=1e-5)
    bn2 = nn.BatchNorm2D(3)
    missing, unexpected = bn2.set_state_dict(bn.state_dict())
    assert missing == [] and unexpected == []
    bn.eval()
    bn2.eval()
    np.testing.assert_allclose(bn2(paddle.to_tensor(x)).numpy(), bn(paddle.to_tensor(x)).numpy())
    before = bn._mean.numpy().copy()
    bn(paddle.to_tensor(x))
    np.testing.assert_allclose(bn._mean.numpy(), before)
    assert [p.stop_gradient for p in bn.parameters()] == [False, False, True, True]


def test_sync_batchnorm_and_convert():
    model = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1D(3),
                          nn.Sequential(nn.BatchNorm2D(3, data_format="NHWC")))
    conv = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert isinstance(conv[1], nn.SyncBatchNorm) and isinstance(conv[2][0], nn.SyncBatchNorm)
    assert conv[1].weight is model[1].weight if conv is not model else True
    assert repr(conv[2][0]).endswith("data_format=NHWC)")
    x = randn(5, 3, dtype="float32")
    ref = nn.BatchNorm1D(3)(paddle.to_tensor(x)).numpy()
    np.testing.assert_allclose(nn.SyncBatchNorm(3)(paddle.to_tensor(x)).numpy(), ref,
                               rtol=1e-6)
    single = nn.SyncBatchNorm.convert_sync_batchnorm(nn.BatchNorm2D(4))
    assert isinstance(single, nn.SyncBatchNorm) and single._num_features == 4


@pytest.mark.parametrize("make,shape,exc,msg", [
    (lambda: nn.BatchNorm2D(3), [2, 3, 4], ValueError, r"BatchNorm2D.*4D.*\[2, 3, 4\]"),
    (lambda: nn.BatchNorm1D(4), [2, 3, 5], ValueError, r"BatchNorm1D.*4 channels.*\[2, 3, 5\]"),
    (lambda: nn.BatchNorm2D(3, data_format="NCL"), [2, 3, 2, 2], ValueError, "NCHW or NHWC"),
    (lambda: nn.LayerNorm(4), [2, 3, 5], ValueError, r"LayerNorm.*\[2, 3, 5\]"),
    (lambda: nn.GroupNorm(2, 4), [2, 6, 3], ValueError, r"GroupNorm.*\[2, 6, 3\]"),
    (lambda: nn.GroupNorm(3, 6), [2, 4, 3], ValueError, "GroupNorm"),
    (lambda: nn.InstanceNorm1D(3), [2, 3, 4, 4], ValueError, r"InstanceNorm1D.*2D or 3D"),
    (lambda: nn.InstanceNorm2D(4), [2, 3, 4, 4], ValueError, r"InstanceNorm2D.*\[2, 3, 4, 4\]"),
    (lambda: nn.LocalResponseNorm(3), [2, 3], ValueError, "3D or higher"),
    (lambda: nn.BatchNorm(3), [2, 4], ValueError, r"BatchNorm.*\[2, 4\]"),
])
def test_layer_errors(make, shape, exc, msg):
    with pytest.raises(exc, match=msg):
        make()(paddle.rand(shape))


def test_construction_errors():
    with pytest.raises(ValueError, match="unsupported data layout"):
        nn.GroupNorm(2, 4, data_format="NCL")
    with pytest.raises(AssertionError, match="at the same time"):
        nn.InstanceNorm2D(3, weight_attr=False)
    with pytest.raises(ValueError, match="num_features"):
        nn.BatchNorm2D(0)
    with pytest.raises(ValueError, match="data_format"):
        F.batch_norm(paddle.rand([2, 3]), paddle.zeros([3]), paddle.ones([3]),
                     data_format="XY")
    with pytest.raises(ValueError, match="running_mean"):
        F.batch_norm(paddle.rand([2, 3]), paddle.zeros([4]), paddle.ones([3]))
    with pytest.raises(ValueError, match="normalized_shape"):
        F.layer_norm(paddle.rand([2, 3]), [4])
    with pytest.raises(ValueError, match="leading"):
        F.layer_norm(paddle.rand([2, 3]), [2, 3])
    with pytest.raises(TypeError, match="layer_norm"):
        F.layer_norm(paddle.to_tensor([[1, 2]]), 2)
