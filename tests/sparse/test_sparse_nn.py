"""paddle_hl.sparse.nn layers and functional ops against paddle 2.6.2 (and NumPy references)."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle

sp = paddle.sparse


def _points(rng, batch, spatial, n, c):
    """Random distinct active sites [1 + nd, n] and features [n, c]."""
    grid = batch * int(np.prod(spatial))
    # sorted (coalesced) sites: Paddle 2.6.2's SubmConv input gradient is wrong for unsorted
    # input (checked against finite differences), ours is order-independent
    flat = np.sort(rng.choice(grid, size=n, replace=False))
    ix = np.stack(np.unravel_index(flat, (batch, *spatial))).astype(np.int64)
    return ix, rng.standard_normal((n, c)).astype(np.float32)


def _pair(mod, ix, vals, shape):
    x = mod.sparse.sparse_coo_tensor(ix, vals, shape)
    x.stop_gradient = False
    return x


def _check(o, t, rtol=1e-5, atol=1e-5):
    assert o.shape == list(t.shape)
    np.testing.assert_array_equal(o.indices().numpy(), t.indices().numpy())
    np.testing.assert_allclose(o.values().numpy(), t.values().numpy(), rtol=rtol, atol=atol)


CONV_CASES = [
    # (layer, nd, kwargs)
    ("Conv3D", 3, dict(kernel_size=3, padding=1)),
    ("Conv3D", 3, dict(kernel_size=2, stride=2)),
    ("Conv3D", 3, dict(kernel_size=3, stride=2, padding=1, dilation=1)),
    ("Conv3D", 3, dict(kernel_size=[1, 3, 3], padding=[0, 1, 1], dilation=[1, 2, 1])),
    ("SubmConv3D", 3, dict(kernel_size=3, padding=1)),
    ("SubmConv3D", 3, dict(kernel_size=3, padding=0)),
    ("SubmConv3D", 3, dict(kernel_size=[3, 1, 3], padding=[1, 0, 1], key="k")),
    ("Conv2D", 2, dict(kernel_size=3)),
    ("Conv2D", 2, dict(kernel_size=3, stride=2, padding=1)),
    ("SubmConv2D", 2, dict(kernel_size=3, padding=1)),
]


@pytest.mark.parity
@pytest.mark.parametrize("layer,nd,kw", CONV_CASES)
def test_conv_parity(pd, layer, nd, kw):
    rng = np.random.default_rng(0)
    spatial = (5, 6, 4) if nd == 3 else (7, 6)
    ix, vals = _points(rng, 2, spatial, 30, 3)
    shape = [2, *spatial, 3]
    ours_l = getattr(sp.nn, layer)(3, 4, **kw)
    theirs_l = getattr(pd.sparse.nn, layer)(3, 4, **kw)
    assert list(ours_l.state_dict()) == list(theirs_l.state_dict())
    for k, v in theirs_l.state_dict().items():
        assert ours_l.state_dict()[k].shape == list(v.shape)
    ours_l.set_state_dict({k: v.numpy() for k, v in theirs_l.state_dict().items()})
    xo, xt = _pair(paddle, ix, vals, shape), _pair(pd, ix, vals, shape)
    yo, yt = ours_l(xo), theirs_l(xt)
    _check(yo, yt)
    gw = rng.standard_normal(yt.values().shape).astype(np.float32)
    (yo.values() * paddle.to_tensor(gw)).sum().backward()
    (yt.values() * pd.to_tensor(gw)).sum().backward()
    _check(xo.grad, xt.grad)
    np.testing.assert_allclose(ours_l.weight.grad.numpy(), theirs_l.weight.grad.numpy(),
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(ours_l.bias.grad.numpy(), theirs_l.bias.grad.numpy(), rtol=1e-5,
                               atol=1e-5)


def test_subm_conv_keeps_sites_and_shares_rulebook():
    rng = np.random.default_rng(1)
    ix, vals = _points(rng, 1, (8, 8, 8), 40, 2)
    x = sp.sparse_coo_tensor(ix, vals, [1, 8, 8, 8, 2])
    a = sp.nn.SubmConv3D(2, 4, 3, padding=1, key="blk")
    b = sp.nn.SubmConv3D(4, 4, 3, padding=1, key="blk")
    h = sp.nn.ReLU()(a(x))
    built = h._rulebooks["blk"]
    y = b(h)
    np.testing.assert_array_equal(y.indices().numpy(), sp.coalesce(x).indices().numpy())
    assert y._rulebooks["blk"] is built  # the second layer reused the first one's rulebook
    with pytest.raises(ValueError, match="key 'blk'"):
        sp.nn.SubmConv3D(4, 4, 5, padding=2, key="blk")(h)


def test_conv_matches_dense_reference():
    # a sparse conv equals the dense conv of the densified input at the output sites
    rng = np.random.default_rng(2)
    ix, vals = _points(rng, 1, (6, 6, 6), 25, 2)
    x = sp.sparse_coo_tensor(ix, vals, [1, 6, 6, 6, 2])
    w = rng.standard_normal((3, 3, 3, 2, 3)).astype(np.float32)
    y = sp.nn.functional.conv3d(x, paddle.to_tensor(w), stride=2, padding=1)
    dense = paddle.nn.functional.conv3d(
        paddle.to_tensor(x.to_dense().numpy().transpose(0, 4, 1, 2, 3)),
        paddle.to_tensor(w.transpose(4, 3, 0, 1, 2)), stride=2, padding=1).numpy()
    dense = dense.transpose(0, 2, 3, 4, 1)
    got = y.to_dense().numpy()
    mask = np.zeros(dense.shape[:-1], bool)
    mask[tuple(y.indices().numpy())] = True
    np.testing.assert_allclose(got[mask], dense[mask], rtol=1e-4, atol=1e-4)
    assert np.all(got[~mask] == 0)


@pytest.mark.parity
def test_pool_bn_activations_parity(pd):
    rng = np.random.default_rng(3)
    ix, vals = _points(rng, 2, (6, 5, 4), 40, 3)
    shape = [2, 6, 5, 4, 3]
    for make in [lambda m: m.sparse.nn.MaxPool3D(2, 2), lambda m: m.sparse.nn.MaxPool3D(3, 2, 1),
                 lambda m: m.sparse.nn.ReLU(), lambda m: m.sparse.nn.ReLU6(),
                 lambda m: m.sparse.nn.LeakyReLU(0.2)]:
        xo, xt = _pair(paddle, ix, vals * 4, shape), _pair(pd, ix, vals * 4, shape)
        yo, yt = make(paddle)(xo), make(pd)(xt)
        _check(yo, yt)
        yo.backward()
        yt.backward()
        _check(xo.grad, xt.grad)
    bo, bt = sp.nn.BatchNorm(3), pd.sparse.nn.BatchNorm(3)
    assert list(bo.state_dict()) == list(bt.state_dict())
    xo, xt = _pair(paddle, ix, vals, shape), _pair(pd, ix, vals, shape)
    yo, yt = bo(xo), bt(xt)
    _check(yo, yt)
    g = rng.standard_normal(vals.shape).astype(np.float32)
    (yo.values() * paddle.to_tensor(g)).sum().backward()
    (yt.values() * pd.to_tensor(g)).sum().backward()
    _check(xo.grad, xt.grad, rtol=1e-4, atol=1e-4)
    for k in ["_mean", "_variance"]:
        np.testing.assert_allclose(bo.state_dict()[k].numpy(), bt.state_dict()[k].numpy(),
                                   rtol=1e-5, atol=1e-6)
    # Paddle 2.6.2 freezes use_global_stats=False at the first training call, so its eval
    # mode keeps using batch statistics; the documented behaviour (running statistics) is
    # checked against NumPy instead
    bo.eval()
    m, var = bo._mean.numpy(), bo._variance.numpy()
    want = (vals - m) / np.sqrt(var + 1e-5)
    np.testing.assert_allclose(bo(xo).values().numpy(), want, rtol=1e-5, atol=1e-5)
    sync = sp.nn.SyncBatchNorm(3)
    sync.set_state_dict(bo.state_dict())
    sync.eval()
    np.testing.assert_allclose(sync(xo).values().numpy(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parity
def test_softmax_parity(pd):
    rng = np.random.default_rng(4)
    a = (rng.standard_normal((2, 4, 5)) * (rng.random((2, 4, 5)) > 0.4)).astype(np.float32)
    for conv in [lambda m: m.to_tensor(a).to_sparse_csr(),
                 lambda m: m.to_tensor(a[0]).to_sparse_csr(),
                 lambda m: m.to_tensor(a).to_sparse_coo(3)]:
        xo, xt = conv(paddle), conv(pd)
        xo.stop_gradient = xt.stop_gradient = False
        yo, yt = sp.nn.Softmax()(xo), pd.sparse.nn.Softmax()(xt)
        np.testing.assert_allclose(yo.values().numpy(), yt.values().numpy(), rtol=1e-5,
                                   atol=1e-6)
        g = rng.standard_normal(xt.shape).astype(np.float32) * (xo.to_dense().numpy() != 0)
        gt = paddle.to_tensor(g)
        sp.multiply(yo, gt.to_sparse_csr() if xo.is_sparse_csr() else gt.to_sparse_coo(3)
                    ).backward()
        # NumPy reference for the gradient: y * (g - sum(g * y)) over each row's entries.
        # (Paddle 2.6.2 has no COO softmax backward on CPU and returns zeros for every batch but
        # the first of a 3-D CSR tensor, so only the 2-D CSR case is also compared with it.)
        yd = yo.to_dense().numpy()
        want = yd * (g - (g * yd).sum(-1, keepdims=True))
        np.testing.assert_allclose(xo.grad.to_dense().numpy(), want, rtol=1e-5, atol=1e-6)
        if xt.is_sparse_csr() and len(xt.shape) == 2:
            pd.sparse.multiply(yt, pd.to_tensor(g).to_sparse_csr()).backward()
            np.testing.assert_allclose(xo.grad.values().numpy(), xt.grad.values().numpy(),
                                       rtol=1e-5, atol=1e-6)


def test_attention_matches_dense_reference():
    # Paddle 2.6.2 has no CPU kernel for sparse attention: a dense NumPy reference instead
    rng = np.random.default_rng(5)
    b, h, s, d = 2, 2, 5, 4
    q, k, v = (rng.standard_normal((b, h, s, d)).astype(np.float32) for _ in range(3))
    m = (rng.random((b * h, s, s)) > 0.4).astype(np.float32)
    m[:, np.arange(s), np.arange(s)] = 1
    kp = np.ones((b, s), np.float32)
    kp[1, -1] = 0
    am = np.tril(np.ones((s, s), np.float32))
    qt, kt, vt = (paddle.to_tensor(t, stop_gradient=False) for t in (q, k, v))
    out = sp.nn.functional.attention(qt, kt, vt, paddle.to_tensor(m).to_sparse_csr(),
                                     paddle.to_tensor(kp), paddle.to_tensor(am))
    keep = (m.reshape(b, h, s, s) > 0) & (kp[:, None, None, :] > 0) & (am[None, None] > 0)
    sc = np.where(keep, q @ k.transpose(0, 1, 3, 2) / np.sqrt(d), -np.inf)
    p = np.exp(sc - sc.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    np.testing.assert_allclose(out.numpy(), p @ v, rtol=1e-5, atol=1e-5)
    out.sum().backward()
    np.testing.assert_allclose(vt.grad.numpy(), p.transpose(0, 1, 3, 2) @ np.ones_like(v),
                               rtol=1e-5, atol=1e-5)
    assert qt.grad.shape == [b, h, s, d] and np.isfinite(qt.grad.numpy()).all()


def test_bad_input_nn():
    x = paddle.rand([2, 3, 3, 3, 2]).to_sparse_coo(4)
    with pytest.raises(ValueError, match="channels"):
        sp.nn.SubmConv3D(3, 4, 3)(x)
    with pytest.raises(TypeError, match="sparse COO or CSR"):
        sp.nn.Conv3D(2, 4, 3)(paddle.rand([2, 3, 3, 3, 2]))
    with pytest.raises(ValueError, match="groups"):
        sp.nn.Conv3D(2, 4, 3, groups=2)
    with pytest.raises(ValueError, match="axis=-1"):
        sp.nn.functional.softmax(paddle.rand([2, 3]).to_sparse_csr(), axis=0)
    with pytest.raises(ValueError, match="NDHWC"):
        sp.nn.functional.max_pool3d(x, 2, data_format="NCDHW")


@pytest.mark.parametrize("subm", [True, False])
def test_patch_and_pair_kernels_agree(monkeypatch, subm):
    # the dense-patch GEMM and the per-offset pair GEMMs are two routes to one result
    from paddle_hl.sparse.nn.functional import conv as conv_mod

    rng = np.random.default_rng(6)
    ix, vals = _points(rng, 2, (6, 5, 7), 80, 3)
    w = rng.standard_normal((3, 3, 3, 3, 4)).astype(np.float32)
    fn = sp.nn.functional.subm_conv3d if subm else sp.nn.functional.conv3d
    res = []
    for threshold in (0.0, 1.1):  # never / always the pair lists
        monkeypatch.setattr(conv_mod, "_PAIRS_BELOW", threshold)
        x = _pair(paddle, ix, vals, [2, 6, 5, 7, 3])
        wt = paddle.to_tensor(w, stop_gradient=False)
        y = fn(x, wt, padding=1)
        (y.values() * paddle.to_tensor(np.arange(y.values().size, dtype=np.float32).reshape(
            y.values().shape) / 100)).sum().backward()
        res.append((y.values().numpy(), x.grad.values().numpy(), wt.grad.numpy()))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def _fd_case(name):
    from tests.op_check import gradcheck

    rng = np.random.default_rng(10)
    ix, vals = _points(rng, 2, (4, 5, 4), 18, 2)
    shape = [2, 4, 5, 4, 2]
    F = sp.nn.functional

    def sparse_in(v):
        return sp.sparse_coo_tensor(ix, v, shape, stop_gradient=False)

    if name == "subm_even":  # an even kernel: not centred, the scatter backward
        gradcheck(lambda v, w: F.subm_conv3d(sparse_in(v), w).values(),
                  [vals, rng.standard_normal((2, 2, 2, 2, 3))])
    elif name == "conv_stride":
        gradcheck(lambda v, w, b: F.conv3d(sparse_in(v), w, b, stride=2, padding=1).values(),
                  [vals, rng.standard_normal((3, 3, 3, 2, 3)), rng.standard_normal(3)])
    elif name == "pool":
        gradcheck(lambda v: F.max_pool3d(sparse_in(v), 3, 2, 1).values(), [vals])
    elif name == "softmax":
        a = rng.standard_normal((3, 4, 5)) * (rng.random((3, 4, 5)) > 0.4)
        mask = paddle.to_tensor(a).to_sparse_csr()
        gradcheck(lambda v: F.softmax(mask._with_values(v)).values(), [mask.values().numpy()])
    else:  # attention, through masked_matmul, softmax and CSR @ dense
        m = paddle.to_tensor((rng.random((2, 4, 4)) > 0.3) + np.eye(4)).to_sparse_csr()
        gradcheck(lambda q, k, v: F.attention(q, k, v, m),
                  [rng.standard_normal((1, 2, 4, 3)) for _ in range(3)])


@pytest.mark.parametrize("name", ["subm_even", "conv_stride", "pool", "softmax", "attention"])
@pytest.mark.parametrize("pairs_below", [0.0, 1.1])  # patch-matrix GEMM / per-offset pairs
def test_float64_finite_differences(monkeypatch, name, pairs_below):
    from paddle_hl.sparse.nn.functional import conv as conv_mod

    monkeypatch.setattr(conv_mod, "_PAIRS_BELOW", pairs_below)
    _fd_case(name)
