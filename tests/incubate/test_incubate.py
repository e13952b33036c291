"""paddle_hl.incubate: autograd functionals, LookAhead/ModelAverage and the graph aliases."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import paddle_hl as paddle

ia = paddle.incubate.autograd


def _pair(pd):
    x = np.arange(6, dtype="float32").reshape(2, 3) / 5
    y = np.arange(6, dtype="float32").reshape(3, 2) / 3
    return x, y


@pytest.mark.parity
def test_vjp_jvp_match_paddle(pd):
    x, y = _pair(pd)
    f_hl = lambda a, b: paddle.tanh(paddle.matmul(a, b))  # noqa: E731
    f_pd = lambda a, b: pd.tanh(pd.matmul(a, b))  # noqa: E731
    v = np.linspace(-1, 1, 4, dtype="float32").reshape(2, 2)
    o, g = ia.vjp(f_hl, [paddle.to_tensor(x), paddle.to_tensor(y)], paddle.to_tensor(v))
    ro, rg = pd.incubate.autograd.vjp(f_pd, [pd.to_tensor(x), pd.to_tensor(y)], pd.to_tensor(v))
    np.testing.assert_allclose(o.numpy(), ro.numpy(), rtol=1e-5, atol=1e-6)
    assert isinstance(g, tuple) and len(g) == 2
    for a, b in zip(g, rg):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    tx, ty = np.ones_like(x) * 0.5, np.full_like(y, -0.25)
    o, t = ia.jvp(f_hl, [paddle.to_tensor(x), paddle.to_tensor(y)],
                  [paddle.to_tensor(tx), paddle.to_tensor(ty)])
    ro, rt = pd.incubate.autograd.jvp(f_pd, [pd.to_tensor(x), pd.to_tensor(y)],
                                      [pd.to_tensor(tx), pd.to_tensor(ty)])
    np.testing.assert_allclose(t.numpy(), rt.numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="v\\[0\\]"):
        ia.vjp(lambda a: a * a, paddle.to_tensor(x), paddle.ones([3]))


@pytest.mark.parity
def test_jacobian_hessian_match_paddle(pd):
    x, y = _pair(pd)
    J = ia.Jacobian(lambda a, b: paddle.matmul(a, b) ** 2, [paddle.to_tensor(x),
                                                             paddle.to_tensor(y)])
    R = pd.incubate.autograd.Jacobian(lambda a, b: pd.matmul(a, b) ** 2,
                                      [pd.to_tensor(x), pd.to_tensor(y)])
    assert J.shape == tuple(R.shape) == (4, 12)
    np.testing.assert_allclose(J[:].numpy(), R[:].numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(J[1].numpy(), R[1].numpy(), rtol=1e-5, atol=1e-6)
    Jb = ia.Jacobian(lambda a: paddle.sin(a) * a, paddle.to_tensor(x), is_batched=True)
    Rb = pd.incubate.autograd.Jacobian(lambda a: pd.sin(a) * a, pd.to_tensor(x), is_batched=True)
    assert Jb.shape == tuple(Rb.shape) == (2, 3, 3)
    np.testing.assert_allclose(Jb[:].numpy(), Rb[:].numpy(), rtol=1e-5, atol=1e-6)
    H = ia.Hessian(lambda a: (a * a * a).sum(), paddle.to_tensor(x))
    Rh = pd.incubate.autograd.Hessian(lambda a: (a * a * a).sum(), pd.to_tensor(x))
    np.testing.assert_allclose(H[:].numpy(), Rh[:].numpy(), rtol=1e-5, atol=1e-6)
    Hb = ia.Hessian(lambda a: (a ** 3).sum(axis=1, keepdim=True), paddle.to_tensor(x), True)
    Rb = pd.incubate.autograd.Hessian(lambda a: (a ** 3).sum(axis=1, keepdim=True),
                                      pd.to_tensor(x), True)
    np.testing.assert_allclose(Hb[:].numpy(), Rb[:].numpy(), rtol=1e-5, atol=1e-6)


def _train(mod, opt_cls, wrap, steps):
    w = mod.create_parameter([3], "float32",
                             default_initializer=mod.nn.initializer.Assign(
                                 np.array([1.0, -2.0, 0.5], "float32")))
    inner = mod.optimizer.Momentum(learning_rate=0.1, momentum=0.5, parameters=[w])
    opt = wrap(mod, inner, w)
    seen = []
    for i in range(steps):
        loss = (w * w * (i + 1)).sum()
        loss.backward()
        opt.step()
        opt.clear_grad()
        seen.append(w.numpy().copy())
    return np.array(seen)


@pytest.mark.parity
def test_lookahead_matches_paddle(pd):
    def wrap(mod, inner, w):
        return mod.incubate.LookAhead(inner, alpha=0.3, k=3)

    np.testing.assert_allclose(_train(paddle, None, wrap, 8), _train(pd, None, wrap, 8),
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="alpha"):
        paddle.incubate.LookAhead(paddle.optimizer.SGD(parameters=[]), alpha=2.0)
    with pytest.raises(ValueError, match="k should"):
        paddle.incubate.LookAhead(paddle.optimizer.SGD(parameters=[]), k=0)


def _average_run(mod):
    w = mod.create_parameter([2], "float32",
                             default_initializer=mod.nn.initializer.Constant(1.0))
    sgd = mod.optimizer.SGD(learning_rate=0.1, parameters=[w])
    ma = mod.incubate.ModelAverage(0.15, parameters=[w], min_average_window=2,
                                   max_average_window=4)
    out = []
    for i in range(9):
        (w * w * (1 + i % 3)).sum().backward()
        sgd.step()
        ma.step()
        sgd.clear_grad()
        with ma.apply():
            avg = w.numpy().copy()
        out.append((w.numpy().copy(), avg))
    with ma.apply(need_restore=False):
        pass
    applied = w.numpy().copy()
    ma.restore()
    out.append((w.numpy().copy(), applied))
    return np.array(out)


@pytest.mark.parity
def test_model_average_matches_paddle(pd):
    np.testing.assert_allclose(_average_run(paddle), _average_run(pd), rtol=1e-5, atol=1e-6)


def test_identity_loss():
    x = paddle.to_tensor([1.0, 2.0, 3.0])
    np.testing.assert_allclose(paddle.incubate.identity_loss(x, "sum").numpy(), 6.0)
    np.testing.assert_allclose(paddle.incubate.identity_loss(x, 1).numpy(), 2.0)
    assert paddle.incubate.identity_loss(x).shape == [3]
    with pytest.raises(ValueError, match="reduction"):
        paddle.incubate.identity_loss(x, "max")


def _geometric_has(*names):
    geo = importlib.import_module("paddle_hl.geometric")
    missing = [n for n in names if not hasattr(geo, n)]
    if missing:
        pytest.skip(f"paddle_hl.geometric does not have {missing} in this checkout")
    return geo


def test_segment_aliases():
    _geometric_has("segment_sum", "segment_mean", "segment_max", "segment_min")
    data = paddle.to_tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    ids = paddle.to_tensor([0, 0, 1], "int32")
    np.testing.assert_allclose(paddle.incubate.segment_sum(data, ids).numpy(),
                               [[4.0, 6.0], [5.0, 6.0]])
    np.testing.assert_allclose(paddle.incubate.segment_mean(data, ids).numpy(),
                               [[2.0, 3.0], [5.0, 6.0]])
    np.testing.assert_allclose(paddle.incubate.segment_max(data, ids).numpy(),
                               [[3.0, 4.0], [5.0, 6.0]])
    np.testing.assert_allclose(paddle.incubate.segment_min(data, ids).numpy(),
                               [[1.0, 2.0], [5.0, 6.0]])


def test_graph_send_recv_alias():
    _geometric_has("send_u_recv")
    x = paddle.to_tensor([[0.0, 2.0, 3.0], [1.0, 4.0, 5.0], [2.0, 6.0, 7.0]])
    src = paddle.to_tensor([0, 1, 2, 0], "int32")
    dst = paddle.to_tensor([1, 2, 1, 0], "int32")
    np.testing.assert_allclose(
        paddle.incubate.graph_send_recv(x, src, dst, pool_type="sum").numpy(),
        [[0, 2, 3], [2, 8, 10], [1, 4, 5]])
    with pytest.raises(ValueError, match="pool_type"):
        paddle.incubate.graph_send_recv(x, src, dst, pool_type="prod")


def test_graph_sampling_aliases():
    _geometric_has("sample_neighbors", "reindex_graph")
    row = paddle.to_tensor([3, 7, 0, 9, 1, 4, 2, 9, 3, 9, 1, 9, 7], "int64")
    colptr = paddle.to_tensor([0, 2, 3, 5, 6, 8, 10, 11, 12, 13], "int64")
    nodes = paddle.to_tensor([0, 8], "int64")
    nb, cnt = paddle.incubate.graph_sample_neighbors(row, colptr, nodes, sample_size=-1)
    np.testing.assert_array_equal(cnt.numpy(), [2, 1])
    np.testing.assert_array_equal(np.sort(nb.numpy()[:2]), [3, 7])
    src, dst, out_nodes = paddle.incubate.graph_reindex(nodes, nb, cnt)
    np.testing.assert_array_equal(out_nodes.numpy()[:2], [0, 8])
    # every neighbor is renumbered to its position in out_nodes
    np.testing.assert_array_equal(out_nodes.numpy()[src.numpy()], nb.numpy())
    # two full hops: the neighbors' neighbors are reached, edges listed hop by hop
    es, ed, idx, rn = paddle.incubate.graph_khop_sampler(row, colptr, nodes, [-1, -1])
    ids = idx.numpy()
    np.testing.assert_array_equal(ids[rn.numpy()], [0, 8])
    edges = {(int(ids[s]), int(ids[d])) for s, d in zip(es.numpy()[:, 0], ed.numpy()[:, 0])}
    assert edges == {(3, 0), (7, 0), (7, 8), (4, 3), (9, 7)}


INCUBATE_NAMES = {
    "incubate": ["softmax_mask_fuse", "softmax_mask_fuse_upper_triangle", "segment_sum",
                 "segment_mean", "segment_max", "segment_min", "graph_send_recv",
                 "graph_khop_sampler", "graph_sample_neighbors", "graph_reindex",
                 "identity_loss", "LookAhead", "ModelAverage"],
    "incubate.nn": ["FusedLinear", "FusedMultiHeadAttention", "FusedFeedForward",
                    "FusedTransformerEncoderLayer", "FusedDropoutAdd", "FusedDropout",
                    "FusedBiasDropoutResidualLayerNorm"],
    "incubate.nn.functional": ["fused_linear", "fused_matmul_bias", "fused_multi_head_attention",
                               "fused_feedforward", "fused_bias_dropout_residual_layer_norm",
                               "fused_rms_norm", "fused_layer_norm",
                               "fused_rotary_position_embedding", "fused_dropout_add",
                               "fused_linear_activation"],
    "incubate.autograd": ["jvp", "vjp", "Jacobian", "Hessian"],
    "incubate.optimizer": ["LookAhead", "ModelAverage"],
}


@pytest.mark.parity
@pytest.mark.parametrize("mod", sorted(INCUBATE_NAMES))
def test_signatures_match_paddle(pd, mod):
    import inspect

    ours, ref = paddle, pd
    for part in mod.split("."):
        ours, ref = getattr(ours, part), getattr(ref, part)
    for name in INCUBATE_NAMES[mod]:
        a, b = getattr(ours, name), getattr(ref, name)
        sa, sb = inspect.signature(a), inspect.signature(b)
        assert [(p.name, p.default) for p in sa.parameters.values()] == [
            (p.name, p.default) for p in sb.parameters.values()], f"{mod}.{name}"
        if inspect.isclass(b) and hasattr(b, "forward"):
            fa, fb = inspect.signature(a.forward), inspect.signature(b.forward)
            assert list(fa.parameters) == list(fb.parameters), f"{mod}.{name}.forward"
