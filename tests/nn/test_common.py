"""Common layers and functionals (paddle_hl/nn/layer/common.py, nn/functional/common.py,
nn/functional/input.py)."""

import copy

import numpy as np
import pytest

import paddle_hl as paddle
import paddle_hl.nn.functional as F
from tests.op_check import check_op, check_parity, gradcheck

rng = np.random.default_rng(0)


def f64(*shape):
    return rng.standard_normal(shape)


def f32(*shape):
    return rng.standard_normal(shape).astype("float32")


# ----------------------------------------------------------------------- functional parity
FUNC_CASES = {
    "linear": (lambda P, x, w, b: P.nn.functional.linear(x, w, b), [f32(4, 3), f32(3, 5),
                                                                     f32(5)]),
    "linear_3d": (lambda P, x, w: P.nn.functional.linear(x, w), [f64(2, 3, 4), f64(4, 2)]),
    "linear_1d_x": (lambda P, x, w, b: P.nn.functional.linear(x, w, b), [f32(3), f32(3, 2),
                                                                         f32(2)]),
    "linear_bias_2d": (lambda P, x, w, b: P.nn.functional.linear(x, w, b),
                       [f32(2, 3), f32(3, 4), f32(2, 4)]),
    "bilinear": (lambda P, a, b, w, c: P.nn.functional.bilinear(a, b, w, c),
                 [f32(4, 2), f32(4, 3), f32(5, 2, 3), f32(1, 5)]),
    "bilinear_nobias": (lambda P, a, b, w: P.nn.functional.bilinear(a, b, w),
                        [f64(3, 2), f64(3, 4), f64(2, 2, 4)]),
    "cosine_similarity": (lambda P, a, b: P.nn.functional.cosine_similarity(a, b),
                          [f32(3, 4), f32(3, 4)]),
    "cosine_similarity_bcast": (
        lambda P, a, b: P.nn.functional.cosine_similarity(a, b, axis=-1, eps=1e-6),
        [f64(2, 3, 4), f64(3, 4)]),
    "cosine_similarity_1d": (lambda P, a, b: P.nn.functional.cosine_similarity(a, b, axis=0),
                             [f32(4), f32(4)]),
    "normalize": (lambda P, x: P.nn.functional.normalize(x), [f32(3, 4)]),
    "normalize_p1": (lambda P, x: P.nn.functional.normalize(x, p=1, axis=0), [f64(3, 4)]),
    "normalize_inf": (lambda P, x: P.nn.functional.normalize(x, p=float("inf"), axis=-1),
                      [f64(3, 4)]),
    "normalize_p3": (lambda P, x: P.nn.functional.normalize(x, p=3, axis=1), [f64(2, 3, 2)]),
    "label_smooth": (lambda P, x: P.nn.functional.label_smooth(x), [f32(2, 5)]),
    "label_smooth_prior": (lambda P, x, p: P.nn.functional.label_smooth(x, p, epsilon=0.3),
                           [f64(2, 3, 4), np.abs(f64(1, 4))]),
    "pad_constant_all": (lambda P, x: P.nn.functional.pad(x, [1, 0, 0, 2], value=1.5),
                         [f32(2, 3)]),
    "pad_ncl": (lambda P, x: P.nn.functional.pad(x, [2, 1], data_format="NCL"),
                [f32(2, 3, 4)]),
    "pad_nlc": (lambda P, x: P.nn.functional.pad(x, (1, 2), value=-1.0, data_format="NLC"),
                [f32(2, 3, 4)]),
    "pad_nchw": (lambda P, x: P.nn.functional.pad(x, [1, 2, 0, 1]), [f64(1, 2, 3, 4)]),
    "pad_nhwc": (lambda P, x: P.nn.functional.pad(x, [1, 2, 3, 0], data_format="NHWC"),
                 [f64(1, 3, 4, 2)]),
    "pad_crop": (lambda P, x: P.nn.functional.pad(x, [-1, 2], data_format="NCL"),
                 [f32(2, 3, 4)]),
    "pad_reflect_ncl": (lambda P, x: P.nn.functional.pad(x, [3, 1], "reflect",
                                                         data_format="NCL"), [f64(2, 3, 4)]),
    "pad_reflect_nchw": (lambda P, x: P.nn.functional.pad(x, [1, 2, 2, 1], "reflect"),
                         [f64(1, 2, 3, 4)]),
    "pad_reflect_crop": (lambda P, x: P.nn.functional.pad(x, [-1, 1], "reflect",
                                                          data_format="NCL"), [f64(2, 3, 4)]),
    "pad_replicate": (lambda P, x: P.nn.functional.pad(x, [5, 1], "replicate",
                                                       data_format="NCL"), [f64(2, 3, 4)]),
    "pad_replicate_nhwc": (lambda P, x: P.nn.functional.pad(x, [2, 1, 1, 3], "replicate",
                                                            data_format="NHWC"),
                           [f64(1, 3, 4, 2)]),
    "pad_circular": (lambda P, x: P.nn.functional.pad(x, [5, 1], "circular",
                                                      data_format="NCL"), [f64(2, 3, 4)]),
    "pad_circular_3d": (lambda P, x: P.nn.functional.pad(x, [1, 1, 2, 0, 0, 1], "circular",
                                                         data_format="NCDHW"),
                        [f64(1, 2, 2, 3, 3)]),
    "pad_reflect_ndhwc": (lambda P, x: P.nn.functional.pad(x, [1, 1, 1, 0, 0, 1], "reflect",
                                                           data_format="NDHWC"),
                          [f64(1, 2, 3, 3, 2)]),
    "zeropad2d": (lambda P, x: P.nn.functional.zeropad2d(x, [1, 0, 2, 1]), [f32(1, 2, 3, 3)]),
    "dropout_eval_down": (
        lambda P, x: P.nn.functional.dropout(x, 0.3, training=False, mode="downscale_in_infer"),
        [f32(3, 4)]),
    "dropout_eval_up": (lambda P, x: P.nn.functional.dropout(x, 0.3, training=False),
                        [f32(3, 4)]),
    "dropout_p0": (lambda P, x: P.nn.functional.dropout(x, 0.0), [f32(3, 4)]),
    "dropout_p1": (lambda P, x: P.nn.functional.dropout(x, 1.0), [f32(3, 4)]),
    "dropout_p1_down": (lambda P, x: P.nn.functional.dropout(x, 1, mode="downscale_in_infer"),
                        [f32(3, 4)]),
    "alpha_dropout_eval": (lambda P, x: P.nn.functional.alpha_dropout(x, 0.4, training=False),
                           [f32(3, 4)]),
    "alpha_dropout_p0": (lambda P, x: P.nn.functional.alpha_dropout(x, 0.0), [f32(3, 4)]),
    "alpha_dropout_p1": (lambda P, x: P.nn.functional.alpha_dropout(x, 1.0), [f32(3, 4)]),
    "embedding": (lambda P, i, w: P.nn.functional.embedding(i, w),
                  [np.array([[0, 2], [1, 2]]), f32(4, 3)]),
    "embedding_pad": (lambda P, i, w: P.nn.functional.embedding(i, w, padding_idx=2),
                      [np.array([[0, 2], [1, 2]]), f64(4, 3)]),
    "embedding_pad_neg": (lambda P, i, w: P.nn.functional.embedding(i, w, padding_idx=-1),
                          [np.array([3, 0, 3], dtype="int32"), f32(4, 3)]),
    "embedding_0d": (lambda P, i, w: P.nn.functional.embedding(i, w),
                     [np.array(1), f32(4, 3)]),
    "one_hot": (lambda P, i: P.nn.functional.one_hot(i, 4), [np.array([[0, 3], [2, 1]])]),
    "one_hot_int32": (lambda P, i: P.nn.functional.one_hot(i, 3),
                      [np.array([2, 0], dtype="int32")]),
    "one_hot_0d": (lambda P, i: P.nn.functional.one_hot(i, 3), [np.array(1)]),
}


@pytest.mark.parity
@pytest.mark.parametrize("case", sorted(FUNC_CASES))
def test_functional_parity(case, pd):
    fn, inputs = FUNC_CASES[case]
    check_parity(fn, inputs, pd, rtol=1e-5, atol=1e-5)


GRAD_CASES = {
    "linear": (lambda x, w, b: F.linear(x, w, b), [f64(4, 3), f64(3, 5), f64(5)]),
    "linear_3d": (lambda x, w: F.linear(x, w), [f64(2, 3, 4), f64(4, 2)]),
    "bilinear": (lambda a, b, w, c: F.bilinear(a, b, w, c),
                 [f64(3, 2), f64(3, 3), f64(4, 2, 3), f64(1, 4)]),
    "cosine_similarity": (lambda a, b: F.cosine_similarity(a, b, axis=0), [f64(3, 2),
                                                                           f64(3, 2)]),
    "normalize": (lambda x: F.normalize(x, p=3, axis=0), [np.abs(f64(3, 2)) + 0.1]),
    "pad_reflect": (lambda x: F.pad(x, [2, 1, 1, 2], "reflect"), [f64(1, 2, 3, 4)]),
    "pad_circular": (lambda x: F.pad(x, [4, 1], "circular", data_format="NCL"),
                     [f64(1, 2, 3)]),
    "pad_replicate": (lambda x: F.pad(x, [2, 0, 1, 3], "replicate", data_format="NHWC"),
                      [f64(1, 2, 3, 2)]),
    "pad_constant": (lambda x: F.pad(x, [1, -1, 0, 2]), [f64(3, 4)]),
    "pad_circular_crop": (lambda x: F.pad(x, [-1, 3], "circular", data_format="NCL"),
                          [f64(1, 2, 4)]),
    "pad_reflect_crop": (lambda x: F.pad(x, [2, -1, -1, 1], "reflect"), [f64(1, 1, 3, 4)]),
    "embedding": (lambda w: F.embedding(paddle.to_tensor([[0, 2, 2], [1, 2, 3]]), w,
                                        padding_idx=1), [f64(4, 3)]),
    "label_smooth": (lambda x: F.label_smooth(x, epsilon=0.2), [f64(2, 3)]),
    "alpha_dropout_eval": (lambda x: F.alpha_dropout(x, 0.5, training=False), [f64(2, 3)]),
}


@pytest.mark.parametrize("case", sorted(GRAD_CASES))
def test_functional_gradcheck(case):
    fn, inputs = GRAD_CASES[case]
    gradcheck(fn, inputs)


def test_linear_matches_numpy_and_higher_order():
    x, w, b = f64(2, 3), f64(3, 4), f64(4)
    check_op(lambda P, x, w, b: P.nn.functional.linear(x, w, b), lambda x, w, b: x @ w + b,
             [x, w, b])
    xt = paddle.to_tensor(x, stop_gradient=False)
    wt = paddle.to_tensor(w, stop_gradient=False)
    y = (F.linear(xt, wt) ** 2).sum()
    (gx,) = paddle.grad(y, [xt], create_graph=True)
    (ggw,) = paddle.grad(gx.sum(), [wt])
    # sum(gx) = 2 sum_ik (xw)_ik s_k with s_k = sum_j w_jk
    expected = 2 * (np.outer(x.sum(0), w.sum(0)) + np.ones((3, 1)) * (x @ w).sum(0))
    np.testing.assert_allclose(ggw.numpy(), expected, rtol=1e-10)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_linear_dtypes(dtype):
    x = paddle.to_tensor(f32(4, 3)).astype(dtype)
    w = paddle.to_tensor(f32(3, 2)).astype(dtype)
    x.stop_gradient = False
    w.stop_gradient = False
    out = F.linear(x, w)
    assert out.dtype == x.dtype
    out.sum().backward()
    assert x.grad.dtype == x.dtype and w.grad.dtype == w.dtype
    ref = x.astype("float32").numpy() @ w.astype("float32").numpy()
    tol = {"float16": 1e-2, "bfloat16": 5e-2}.get(dtype, 1e-5)
    np.testing.assert_allclose(out.astype("float32").numpy(), ref, rtol=tol, atol=tol)


def test_functional_errors():
    x = paddle.ones([2, 3])
    with pytest.raises(ValueError, match=r"linear.*\[2, 3\].*\[2, 4\]"):
        F.linear(x, paddle.ones([2, 4]))
    with pytest.raises(ValueError, match="dtype"):
        F.linear(x, paddle.ones([3, 4], dtype="float64"))
    with pytest.raises(ValueError, match="bias"):
        F.linear(x, paddle.ones([3, 4]), paddle.ones([5]))
    with pytest.raises(TypeError, match="linear"):
        F.linear(paddle.ones([2, 3], dtype="int64"), paddle.ones([3, 4]))
    with pytest.raises(ValueError, match="bilinear.*batch"):
        F.bilinear(x, paddle.ones([3, 4]), paddle.ones([5, 3, 4]))
    with pytest.raises(ValueError, match="bilinear.*weight"):
        F.bilinear(x, paddle.ones([2, 4]), paddle.ones([5, 3, 3]))
    with pytest.raises(ValueError, match="bilinear.*bias"):
        F.bilinear(x, paddle.ones([2, 4]), paddle.ones([5, 3, 4]), paddle.ones([5]))
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout(x, 1.5)
    with pytest.raises(TypeError, match="p must be"):
        F.dropout(x, "a")
    with pytest.raises(ValueError, match="mode"):
        F.dropout(x, 0.5, mode="foo")
    with pytest.raises(ValueError, match="axis"):
        F.dropout(x, 0.5, axis=2)
    with pytest.raises(TypeError, match="axis"):
        F.dropout(x, 0.5, axis=1.5)
    with pytest.raises(TypeError, match="floating"):
        F.dropout(paddle.to_tensor([1, 2, 3]), 0.5)
    with pytest.raises(ValueError, match="4-D"):
        F.dropout2d(paddle.ones([2, 3, 4]))
    with pytest.raises(ValueError, match="data_format"):
        F.dropout2d(paddle.ones([2, 3, 4, 5]), data_format="NCL")
    with pytest.raises(ValueError, match="5-D"):
        F.dropout3d(paddle.ones([2, 3, 4, 5]))
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.alpha_dropout(x, -0.1)
    with pytest.raises(ValueError, match=r"embedding.*\[0, 5\).*7"):
        F.embedding(paddle.to_tensor([0, 7]), paddle.ones([5, 3]))
    with pytest.raises(ValueError, match=r"\[-5, 5\)"):
        F.embedding(paddle.to_tensor([0, 1]), paddle.ones([5, 3]), padding_idx=6)
    with pytest.raises(TypeError, match="int32 or int64"):
        F.embedding(paddle.to_tensor([0.0, 1.0]), paddle.ones([5, 3]))
    with pytest.raises(ValueError, match="2-D"):
        F.embedding(paddle.to_tensor([0, 1]), paddle.ones([5, 3, 2]))
    with pytest.raises(ValueError, match=r"one_hot.*\[0, 3\)"):
        F.one_hot(paddle.to_tensor([0, 3]), 3)
    with pytest.raises(ValueError, match="one_hot"):
        F.one_hot(paddle.to_tensor([-1]), 3)
    with pytest.raises(TypeError, match="one_hot"):
        F.one_hot(paddle.to_tensor([1.0]), 3)
    with pytest.raises(ValueError, match="epsilon"):
        F.label_smooth(paddle.ones([1, 3]), epsilon=1.2)
    with pytest.raises(ValueError, match="normalize"):
        F.normalize(paddle.ones([3]))
    with pytest.raises(ValueError, match="cosine_similarity.*broadcast"):
        F.cosine_similarity(paddle.ones([2, 2]), paddle.ones([1, 3]))


def test_pad_errors():
    x3 = paddle.ones([2, 3, 4])
    x4 = paddle.ones([2, 3, 4, 5])
    with pytest.raises(ValueError, match="mode"):
        F.pad(x3, [1, 1], mode="foo", data_format="NCL")
    with pytest.raises(ValueError, match="data_format 'NCL' or 'NLC'"):
        F.pad(x3, [1, 1])
    with pytest.raises(ValueError, match="3-D, 4-D or 5-D"):
        F.pad(paddle.ones([2, 3]), [1, 1], mode="reflect")
    with pytest.raises(ValueError, match="needs 4 pad values"):
        F.pad(x4, [1, 1])
    with pytest.raises(ValueError, match="reflect.*smaller"):
        F.pad(x3, [4, 1], mode="reflect", data_format="NCL")
    # Replicate on a zero-size dim raises a clear error
    with pytest.raises(ValueError, match="replicate.*size 0"):
        F.pad(paddle.zeros([1, 2, 0]), [1, 1], mode="replicate", data_format="NCL")
    with pytest.raises(ValueError, match="crop"):
        F.pad(x3, [-5, 0], data_format="NCL")
    with pytest.raises(TypeError, match="pad must contain ints"):
        F.pad(x3, [1.5, 1], data_format="NCL")
    with pytest.raises(ValueError, match="zeropad2d"):
        F.zeropad2d(x3, [1, 1, 1, 1])


def test_pad_values_and_dtypes():
    x = paddle.arange(6).reshape([1, 2, 3])
    out = F.pad(x, [1, 1], value=2.5, data_format="NCL")
    assert out.dtype == paddle.int64
    np.testing.assert_array_equal(out.numpy()[0, 0], [2, 0, 1, 2, 2])
    # size-0 dims pad fine in constant mode; replicate along a non-empty dim is fine too
    assert F.pad(paddle.zeros([1, 2, 0]), [1, 1], data_format="NCL").shape == [1, 2, 2]
    assert F.pad(paddle.zeros([1, 0, 3]), [1, 1], mode="replicate",
                 data_format="NCL").shape == [1, 0, 5]
    # a Tensor pad works (tuple and Tensor forms are accepted)
    assert F.pad(paddle.ones([1, 1, 2, 2]), paddle.to_tensor([1, 1, 0, 0])).shape == [1, 1, 2,
                                                                                         4]
    xh = paddle.ones([1, 1, 2, 2], dtype="float16")
    assert F.pad(xh, (1, 1, 1, 1), mode="reflect").dtype == paddle.float16
    # no-op padding returns the input itself
    y = paddle.ones([1, 2, 3])
    assert F.pad(y, [0, 0], data_format="NCL") is y


# ----------------------------------------------------------------------------------- dropout
def test_dropout_statistics_and_scaling():
    x = paddle.ones([200, 300])
    y = F.dropout(x, 0.3).numpy()
    np.testing.assert_allclose(np.unique(y), [0.0, 1 / 0.7], rtol=1e-6)
    np.testing.assert_allclose((y == 0).mean(), 0.3, atol=0.01)
    y = F.dropout(x, 0.3, mode="downscale_in_infer").numpy()
    assert set(np.unique(y)) <= {0.0, 1.0}
    np.testing.assert_allclose(F.dropout(x, 0.3, training=False,
                                         mode="downscale_in_infer").numpy(), 0.7, rtol=1e-6)
    assert F.dropout(x, 0.3, training=False) is x


def test_dropout_axis_shares_mask():
    # With axis=k the mask is shared along the dims not listed
    x = paddle.ones([4, 50, 6])
    y = F.dropout(x, 0.5, axis=1).numpy()
    for i in range(4):
        np.testing.assert_array_equal(y[i], y[0])
    for j in range(6):
        np.testing.assert_array_equal(y[:, :, j], y[:, :, 0])
    assert 0 < (y[0, :, 0] == 0).sum() < 50
    y = F.dropout(x, 0.5, axis=[0, 2]).numpy()
    for k in range(50):
        np.testing.assert_array_equal(y[:, k, :], y[:, 0, :])


def test_dropout_gradient_uses_mask():
    x = paddle.to_tensor(f32(30, 40), stop_gradient=False)
    y = F.dropout(x, 0.4)
    y.sum().backward()
    mask = (y.numpy() != 0).astype("float32")
    np.testing.assert_allclose(x.grad.numpy(), mask / 0.6, rtol=1e-6)


def test_dropout2d_3d_channels():
    x = paddle.ones([4, 8, 5, 5])
    y = F.dropout2d(x, 0.5).numpy()
    per_channel = y.reshape(4, 8, -1)
    assert np.all(per_channel.min(-1) == per_channel.max(-1))
    y = F.dropout2d(paddle.ones([4, 5, 5, 8]), 0.5, data_format="NHWC").numpy()
    per_channel = y.transpose(0, 3, 1, 2).reshape(4, 8, -1)
    assert np.all(per_channel.min(-1) == per_channel.max(-1))
    y = F.dropout3d(paddle.ones([2, 6, 2, 3, 3]), 0.5).numpy().reshape(2, 6, -1)
    assert np.all(y.min(-1) == y.max(-1))
    x = paddle.ones([2, 3, 4, 4])
    assert F.dropout2d(x, 0.5, training=False) is x


def test_alpha_dropout_keeps_moments():
    x = paddle.to_tensor(rng.standard_normal((400, 500)).astype("float32"))
    y = F.alpha_dropout(x, 0.2).numpy()
    np.testing.assert_allclose(y.mean(), 0.0, atol=0.02)
    np.testing.assert_allclose(y.std(), 1.0, atol=0.02)
    x = paddle.ones([3])
    assert F.alpha_dropout(x, 0.5, training=False) is x


def test_dropout_seeded():
    paddle.seed(5)
    a = F.dropout(paddle.ones([10, 10]), 0.5).numpy()
    paddle.seed(5)
    b = F.dropout(paddle.ones([10, 10]), 0.5).numpy()
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("shape", [[], [0, 3], [2, 0]])
def test_dropout_edge_shapes(shape):
    x = paddle.ones(shape)
    assert F.dropout(x, 0.5).shape == shape


def test_linear_empty_batch():
    x = paddle.zeros([0, 3])
    x.stop_gradient = False
    fc = paddle.nn.Linear(3, 2)
    out = fc(x)
    assert out.shape == [0, 2]
    out.backward(paddle.zeros([0, 2]))
    np.testing.assert_array_equal(fc.weight.grad.numpy(), np.zeros([3, 2]))


def test_embedding_grad_accumulates_repeats():
    w = paddle.to_tensor(f64(4, 2), stop_gradient=False)
    ids = paddle.to_tensor([0, 0, 3, 0])
    F.embedding(ids, w).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [[3, 3], [0, 0], [0, 0], [1, 1]])
    # many repeats of one id (beyond the ranked fast path) still accumulate exactly
    ids = np.concatenate([np.zeros(40, dtype="int64"), np.arange(4), np.full(9, 2)])
    g = rng.standard_normal((ids.size, 2))
    w = paddle.to_tensor(f64(4, 2), stop_gradient=False)
    F.embedding(paddle.to_tensor(ids), w).backward(paddle.to_tensor(g))
    expected = np.zeros((4, 2))
    np.add.at(expected, ids, g)
    np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-12)


# ------------------------------------------------------------------------------------ layers
def _copy_state(pd_layer, hl_layer):
    sd = {k: v.numpy() for k, v in pd_layer.state_dict().items()}
    missing, unexpected = hl_layer.set_state_dict(sd)
    assert missing == [] and unexpected == []


def _layer_parity(pd, make, inputs, *, train=True, rtol=1e-5, atol=1e-6):
    """Build a layer in Paddle and paddle_hl, copy Paddle's state, compare state_dict keys and
    shapes, outputs and gradients (inputs and parameters)."""
    pl = make(pd)
    hl = make(paddle)
    psd, hsd = pl.state_dict(), hl.state_dict()
    assert list(psd) == list(hsd)
    assert [list(v.shape) for v in psd.values()] == [list(v.shape) for v in hsd.values()]
    _copy_state(pl, hl)
    for layer in (pl, hl):
        layer.train() if train else layer.eval()
    outs = []
    for lib, layer in ((pd, pl), (paddle, hl)):
        ts = [lib.to_tensor(a, stop_gradient=a.dtype.kind != "f") for a in inputs]
        out = layer(*ts)
        w = np.random.default_rng(1).standard_normal(out.shape).astype(out.numpy().dtype)
        (out * lib.to_tensor(w)).sum().backward()
        grads = [t.grad.numpy() for t in ts if not t.stop_gradient]
        pgrads = [p.grad.numpy() for p in layer.parameters()]
        outs.append((out.numpy(), grads, pgrads))
    (po, pg, ppg), (ho, hg, hpg) = outs
    np.testing.assert_allclose(ho, po, rtol=rtol, atol=atol)
    for a, b in zip(hg + hpg, pg + ppg):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    assert repr(hl) == repr(pl)
    return hl


LAYER_CASES = {
    "linear": (lambda P: P.nn.Linear(3, 4), [f32(2, 3)]),
    "linear_nobias": (lambda P: P.nn.Linear(3, 4, bias_attr=False), [f32(2, 5, 3)]),
    "bilinear": (lambda P: P.nn.Bilinear(3, 2, 4), [f32(5, 3), f32(5, 2)]),
    "embedding": (lambda P: P.nn.Embedding(6, 3, padding_idx=1),
                  [np.array([[0, 1, 5], [1, 2, 2]])]),
    "flatten": (lambda P: P.nn.Flatten(), [f32(2, 3, 4)]),
    "unflatten": (lambda P: P.nn.Unflatten(-1, [2, -1]), [f32(2, 3, 4)]),
    "identity": (lambda P: P.nn.Identity(), [f32(2, 3)]),
    "pad1d": (lambda P: P.nn.Pad1D([2, 1], mode="reflect"), [f32(2, 3, 4)]),
    "pad2d_tuple": (lambda P: P.nn.Pad2D((1, 2, 0, 1), mode="replicate"), [f32(1, 2, 3, 4)]),
    "pad3d": (lambda P: P.nn.Pad3D(1, value=0.5), [f32(1, 2, 2, 3, 3)]),
    "zeropad2d": (lambda P: P.nn.ZeroPad2D([1, 0, 0, 2], data_format="NHWC"),
                  [f32(1, 3, 3, 2)]),
    "cosine_similarity": (lambda P: P.nn.CosineSimilarity(axis=0), [f32(3, 4), f32(3, 4)]),
    "dropout_p0": (lambda P: P.nn.Dropout(0.0), [f32(3, 4)]),
    "alpha_dropout_p0": (lambda P: P.nn.AlphaDropout(0.0), [f32(3, 4)]),
}


@pytest.mark.parity
@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("case", sorted(LAYER_CASES))
def test_layer_parity(case, train, pd):
    make, inputs = LAYER_CASES[case]
    _layer_parity(pd, make, inputs, train=train)


@pytest.mark.parity
@pytest.mark.parametrize("train", [True, False])
def test_dropout_layers_eval_parity(train, pd):
    x = f32(3, 4, 2, 2)
    for make in (lambda P: P.nn.Dropout(0.4, mode="downscale_in_infer"),
                 lambda P: P.nn.Dropout2D(0.4), lambda P: P.nn.AlphaDropout(0.3)):
        if train:
            hl = make(paddle)
            out = hl(paddle.to_tensor(x))
            assert out.shape == list(x.shape)
        else:
            _layer_parity(pd, make, [x], train=False)


def test_dropout_layer_modes():
    d = paddle.nn.Dropout(0.5)
    x = paddle.ones([50, 50])
    assert (d(x).numpy() == 0).any()
    assert d.eval() is d
    assert d(x) is x
    assert d.train() is d
    d3 = paddle.nn.Dropout3D(0.5, data_format="NDHWC")
    y = d3(paddle.ones([2, 2, 2, 2, 6])).numpy()
    per = y.transpose(0, 4, 1, 2, 3).reshape(2, 6, -1)
    assert np.all(per.min(-1) == per.max(-1))


def test_linear_layer_defaults_and_names():
    paddle.seed(3)
    fc = paddle.nn.Linear(30, 40)
    w = fc.weight.numpy()
    limit = np.sqrt(6.0 / 70)
    assert np.abs(w).max() <= limit and np.abs(w).max() > 0.8 * limit
    np.testing.assert_array_equal(fc.bias.numpy(), np.zeros(40))
    assert fc.weight.name.endswith(".w_0") and fc.bias.name.endswith(".b_0")
    assert fc.weight.name.split(".")[0] == fc.full_name()
    paddle.set_default_dtype("float64")
    assert paddle.nn.Linear(2, 3).weight.dtype == paddle.float64
    paddle.set_default_dtype("float32")
    attr = paddle.ParamAttr(initializer=paddle.nn.initializer.Constant(0.5),
                            learning_rate=0.1, trainable=False)
    fc = paddle.nn.Linear(2, 3, weight_attr=attr, bias_attr=False)
    np.testing.assert_array_equal(fc.weight.numpy(), np.full([2, 3], 0.5))
    assert fc.bias is None and fc.weight.stop_gradient
    assert fc.weight.optimize_attr["learning_rate"] == 0.1
    assert list(fc.state_dict()) == ["weight"]


def test_embedding_layer():
    emb = paddle.nn.Embedding(5, 3, padding_idx=-1)
    np.testing.assert_array_equal(emb.weight.numpy()[4], np.zeros(3))
    out = emb(paddle.to_tensor([[4, 0]]))
    np.testing.assert_array_equal(out.numpy()[0, 0], np.zeros(3))
    out.sum().backward()
    np.testing.assert_array_equal(emb.weight.grad.numpy()[4], np.zeros(3))
    np.testing.assert_array_equal(emb.weight.grad.numpy()[0], np.ones(3))


def test_layer_construction_errors():
    with pytest.raises(ValueError, match="Linear: in_features must be greater than 0"):
        paddle.nn.Linear(0, 3)
    with pytest.raises(TypeError, match="Linear: in_features must be an int"):
        paddle.nn.Linear(2.5, 3)
    with pytest.raises(ValueError, match="Embedding: num_embeddings"):
        paddle.nn.Embedding(0, 3)
    with pytest.raises(ValueError, match="Embedding: embedding_dim"):
        paddle.nn.Embedding(3, 0)
    with pytest.raises(ValueError, match=r"Embedding: padding_idx must be within \[-3, 3\)"):
        paddle.nn.Embedding(3, 2, padding_idx=3)
    with pytest.raises(ValueError, match="Bilinear: out_features"):
        paddle.nn.Bilinear(2, 3, 0)


def test_layer_forward_errors_name_shapes():
    fc = paddle.nn.Linear(3, 2)
    with pytest.raises(ValueError, match=r"linear.*\[2, 4\].*\[3, 2\]"):
        fc(paddle.ones([2, 4]))
    bil = paddle.nn.Bilinear(2, 3, 4)
    with pytest.raises(ValueError, match=r"bilinear.*\[4, 2, 3\]"):
        bil(paddle.ones([5, 3]), paddle.ones([5, 3]))
    with pytest.raises(ValueError, match="embedding"):
        paddle.nn.Embedding(3, 2)(paddle.to_tensor([3]))
    with pytest.raises(ValueError, match="pad"):
        paddle.nn.Pad2D([1, 2])(paddle.ones([1, 1, 2, 2]))
    with pytest.raises(ValueError, match="between 0 and 1"):
        paddle.nn.Dropout(1.5)(paddle.ones([2]))


@pytest.mark.parametrize("make", [lambda: paddle.nn.Linear(3, 2),
                                  lambda: paddle.nn.Bilinear(2, 3, 4),
                                  lambda: paddle.nn.Embedding(4, 3)])
def test_state_dict_round_trip(make, tmp_path):
    a, b = make(), make()
    b.set_state_dict(a.state_dict())
    for (ka, va), (kb, vb) in zip(a.state_dict().items(), b.state_dict().items()):
        assert ka == kb
        np.testing.assert_array_equal(va.numpy(), vb.numpy())
    path = str(tmp_path / "m.pdparams")
    paddle.save(a.state_dict(), path)
    c = make()
    c.set_state_dict(paddle.load(path))
    for va, vc in zip(a.state_dict().values(), c.state_dict().values()):
        np.testing.assert_array_equal(va.numpy(), vc.numpy())
    d = copy.deepcopy(a)
    for va, vd in zip(a.state_dict().values(), d.state_dict().values()):
        np.testing.assert_array_equal(va.numpy(), vd.numpy())


def test_linear_one_training_step_reduces_loss():
    paddle.seed(0)
    fc = paddle.nn.Linear(4, 1)
    x = paddle.to_tensor(f32(16, 4))
    y = paddle.to_tensor(f32(16, 1))
    opt = paddle.optimizer.SGD(0.1, parameters=fc.parameters())
    losses = []
    for _ in range(3):
        loss = ((fc(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss.numpy()))
    assert losses[2] < losses[0]


def test_flatten_unflatten_identity():
    x = paddle.ones([2, 3, 4])
    assert paddle.nn.Flatten()(x).shape == [2, 12]
    assert paddle.nn.Flatten(0, 1)(x).shape == [6, 4]
    assert paddle.nn.Unflatten(1, (3, 1))(x).shape == [2, 3, 1, 4]
    assert paddle.nn.Identity(5, foo=1)(x) is x
    with pytest.raises(ValueError):
        paddle.nn.Flatten(2, 1)(x)
    with pytest.raises(ValueError):
        paddle.nn.Unflatten(1, [2, 2])(x)
