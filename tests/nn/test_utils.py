"""paddle_hl.nn.utils: clip_grad_norm_, clip_grad_value_, parameters <-> vector, weight_norm,
spectral_norm."""

import math

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.nn.utils import (
    clip_grad_norm_,
    clip_grad_value_,
    parameters_to_vector,
    remove_weight_norm,
    spectral_norm,
    vector_to_parameters,
    weight_norm,
)

rng = np.random.default_rng(0)


def _model_with_grads(lib, state=None):
    fc = lib.nn.Linear(3, 2)
    if state is not None:
        fc.set_state_dict(state)
    x = lib.to_tensor(np.array([[1.0, 2.0, 3.0]] * 4, dtype="float32"))
    (fc(x) * 10).sum().backward()
    return fc


# --------------------------------------------------------------------------- clip_grad_norm_
@pytest.mark.parametrize("norm_type", [2.0, 1, 0, float("inf")])
def test_clip_grad_norm(norm_type):
    # Grads scaled in place so that the total norm is <= max_norm; returns the norm before
    fc = _model_with_grads(paddle)
    g = np.concatenate([p.grad.numpy().ravel() for p in fc.parameters()])
    expected = {2.0: np.linalg.norm(g), 1: np.abs(g).sum(), float("inf"): np.abs(g).max(),
                0: 2.0}[norm_type]
    total = clip_grad_norm_(fc.parameters(), 1.0, norm_type=norm_type)
    assert total.shape == [] and total.dtype == paddle.float32
    np.testing.assert_allclose(total.numpy(), expected, rtol=1e-5)
    g2 = np.concatenate([p.grad.numpy().ravel() for p in fc.parameters()])
    np.testing.assert_allclose(g2, g / (expected + 1e-6), rtol=1e-5)
    if norm_type == 2.0:
        assert np.linalg.norm(g2) <= 1.0 + 1e-6


def test_clip_grad_norm_no_clip_needed_and_edge_cases():
    fc = _model_with_grads(paddle)
    before = [p.grad.numpy().copy() for p in fc.parameters()]
    total = clip_grad_norm_(fc.parameters(), 1e6)
    assert float(total.numpy()) > 0
    for p, b in zip(fc.parameters(), before):
        np.testing.assert_array_equal(p.grad.numpy(), b)
    # a single Tensor is accepted
    clip_grad_norm_(fc.weight, 1.0)
    assert np.linalg.norm(fc.weight.grad.numpy()) <= 1.0 + 1e-5
    # no gradients: 0
    fresh = paddle.nn.Linear(3, 2)
    total = clip_grad_norm_(fresh.parameters(), 1.0)
    assert total.shape == [] and float(total.numpy()) == 0.0
    with pytest.raises(ValueError, match="norm_type"):
        clip_grad_norm_(fc.parameters(), 1.0, norm_type=3)
    with pytest.raises(TypeError, match="clip_grad_norm_"):
        clip_grad_norm_(fc.parameters(), "1")


def test_clip_grad_norm_nonfinite():
    fc = _model_with_grads(paddle)
    fc.weight.grad._data[0, 0] = np.nan
    with pytest.raises(RuntimeError, match="non-finite"):
        clip_grad_norm_(fc.parameters(), 1.0, error_if_nonfinite=True)
    total = clip_grad_norm_(fc.parameters(), 1.0)
    assert math.isnan(float(total.numpy()))


def test_clip_grad_norm_fp16():
    p = paddle.create_parameter([2], "float16")
    p.grad = paddle.to_tensor(np.array([3000.0, 4000.0], dtype="float16"))
    total = clip_grad_norm_([p], 1.0)
    np.testing.assert_allclose(total.astype("float32").numpy(), 5000.0, rtol=1e-3)
    np.testing.assert_allclose(p.grad.astype("float32").numpy(), [0.6, 0.8], rtol=1e-2)


@pytest.mark.parity
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 0.0, float("inf")])
@pytest.mark.parametrize("max_norm", [0.1, 1e4])
def test_clip_grad_norm_parity(norm_type, max_norm, pd):
    state = {"weight": rng.standard_normal((3, 2)).astype("float32"),
             "bias": rng.standard_normal(2).astype("float32")}
    res = []
    for lib in (paddle, pd):
        fc = _model_with_grads(lib, state)
        total = lib.nn.utils.clip_grad_norm_(fc.parameters(), max_norm, norm_type=norm_type)
        res.append([total.numpy()] + [p.grad.numpy() for p in fc.parameters()])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-5)


def test_clip_grad_value():
    fc = _model_with_grads(paddle)
    assert clip_grad_value_(fc.parameters(), 1.5) is None
    for p in fc.parameters():
        assert np.abs(p.grad.numpy()).max() <= 1.5
    fc = _model_with_grads(paddle)
    clip_grad_value_(fc.bias, 1.5)
    np.testing.assert_array_equal(fc.bias.grad.numpy(), [1.5, 1.5])
    assert fc.weight.grad.numpy().max() > 1.5


# ---------------------------------------------------------------------- vector <-> params
def test_parameters_vector_round_trip():
    fc = paddle.nn.Linear(3, 2)
    vec = parameters_to_vector(fc.parameters())
    assert vec.shape == [8] and not vec.stop_gradient
    np.testing.assert_array_equal(vec.numpy()[:6], fc.weight.numpy().ravel())
    other = paddle.nn.Linear(3, 2)
    vector_to_parameters(vec, other.parameters())
    np.testing.assert_array_equal(other.weight.numpy(), fc.weight.numpy())
    np.testing.assert_array_equal(other.bias.numpy(), fc.bias.numpy())
    vector_to_parameters(paddle.arange(8, dtype="float32"), fc.parameters())
    np.testing.assert_array_equal(fc.weight.numpy(), np.arange(6).reshape(3, 2))
    np.testing.assert_array_equal(fc.bias.numpy(), [6, 7])
    # differentiable
    vec = parameters_to_vector(fc.parameters())
    (vec * paddle.arange(8, dtype="float32")).sum().backward()
    np.testing.assert_array_equal(fc.bias.grad.numpy(), [6, 7])
    with pytest.raises(ValueError, match="7 elements.*8"):
        vector_to_parameters(paddle.arange(7, dtype="float32"), fc.parameters())
    with pytest.raises(ValueError, match="same dtype"):
        parameters_to_vector([paddle.ones([2], dtype="float64"), paddle.ones([2])])
    with pytest.raises(ValueError, match="1-D"):
        vector_to_parameters(paddle.ones([2, 4]), fc.parameters())


@pytest.mark.parity
def test_parameters_to_vector_parity(pd):
    state = {"weight": rng.standard_normal((3, 2)).astype("float32"),
             "bias": rng.standard_normal(2).astype("float32")}
    res = []
    for lib in (paddle, pd):
        fc = lib.nn.Linear(3, 2)
        fc.set_state_dict(state)
        res.append(lib.nn.utils.parameters_to_vector(fc.parameters()).numpy())
    np.testing.assert_array_equal(*res)


# -------------------------------------------------------------------------------- weight_norm
def test_weight_norm_structure():
    fc = weight_norm(paddle.nn.Linear(3, 4))
    sd = fc.state_dict()
    assert list(sd) == ["bias", "weight_v", "weight_g"]
    assert sd["weight_g"].shape == [3] and sd["weight_v"].shape == [3, 4]
    assert [n for n, _ in fc.named_buffers()] == ["weight"]
    assert [n for n, _ in fc.named_parameters()] == ["bias", "weight_v", "weight_g"]
    assert weight_norm(paddle.nn.Linear(3, 4), dim=None).weight_g.shape == []
    assert weight_norm(paddle.nn.Linear(3, 4), dim=1).weight_g.shape == [4]
    assert weight_norm(paddle.nn.Linear(3, 4), dim=-1).weight_g.shape == []
    with pytest.raises(RuntimeError, match="two weight_norm"):
        weight_norm(fc)
    with pytest.raises(ValueError, match="no parameter 'foo'"):
        weight_norm(paddle.nn.Linear(3, 4), name="foo")
    with pytest.raises(ValueError, match="dim"):
        weight_norm(paddle.nn.Linear(3, 4), dim=2)


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_keeps_function_and_trains(dim):
    fc = paddle.nn.Linear(3, 4)
    x = paddle.to_tensor(rng.standard_normal((5, 3)).astype("float32"))
    ref = fc(x).numpy()
    weight_norm(fc, dim=dim)
    np.testing.assert_allclose(fc(x).numpy(), ref, rtol=1e-5, atol=1e-6)
    fc(x).sum().backward()
    assert fc.weight_g.grad is not None and fc.weight_v.grad is not None
    opt = paddle.optimizer.SGD(0.1, parameters=fc.parameters())
    opt.step()
    out = fc(x).numpy()
    assert not np.allclose(out, ref)
    remove_weight_norm(fc)
    assert list(fc.state_dict()) == ["bias", "weight"]
    assert not fc._forward_pre_hooks
    np.testing.assert_allclose(fc(x).numpy(), out, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        remove_weight_norm(fc)


def test_weight_norm_gradcheck():
    from paddle_hl.nn.utils.weight_norm_hook import _compute
    from tests.op_check import gradcheck

    for dim in (0, 2, -1):
        gshape = (3,) if dim == 0 else (4,) if dim == 2 else ()
        gradcheck(lambda v, g: _compute(v, g, dim),
                  [rng.standard_normal((3, 2, 4)), rng.standard_normal(gshape) + 2])


@pytest.mark.parity
@pytest.mark.parametrize("make,dim,shape", [
    (lambda P: P.nn.Linear(3, 4), 0, (5, 3)),
    (lambda P: P.nn.Linear(3, 4), 1, (5, 3)),
    (lambda P: P.nn.Linear(3, 4), None, (5, 3)),
    (lambda P: P.nn.Bilinear(3, 2, 4), 2, None),
])
def test_weight_norm_parity(make, dim, shape, pd):
    pl = pd.nn.utils.weight_norm(make(pd), dim=dim)
    hl = weight_norm(make(paddle), dim=dim)
    psd = pl.state_dict()
    assert list(hl.state_dict()) == list(psd)
    assert [v.shape for v in hl.state_dict().values()] == [v.shape for v in psd.values()]
    hl.set_state_dict({k: v.numpy() for k, v in psd.items()})
    if shape is None:
        xs = [rng.standard_normal((5, 3)).astype("float32"),
              rng.standard_normal((5, 2)).astype("float32")]
    else:
        xs = [rng.standard_normal(shape).astype("float32")]
    res = []
    for lib, layer in ((paddle, hl), (pd, pl)):
        out = layer(*[lib.to_tensor(x) for x in xs])
        (out * out).sum().backward()
        res.append([out.numpy()] + [p.grad.numpy() for p in layer.parameters()])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------------------ spectral_norm
def test_spectral_norm_structure_and_sigma():
    fc = spectral_norm(paddle.nn.Linear(6, 5), n_power_iterations=30)
    assert list(fc.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    assert fc.weight_u.shape == [5] and fc.weight_v.shape == [6]  # Linear: dim 1
    assert [n for n, _ in fc.named_buffers()] == ["weight", "weight_u", "weight_v"]
    assert [n for n, _ in fc.named_parameters()] == ["bias", "weight_orig"]
    fc(paddle.ones([2, 6]))
    sv = np.linalg.svd(fc.weight.numpy(), compute_uv=False)
    np.testing.assert_allclose(sv[0], 1.0, rtol=1e-3)
    with pytest.raises(RuntimeError, match="two spectral_norm"):
        spectral_norm(fc)
    with pytest.raises(ValueError, match="n_power_iterations"):
        spectral_norm(paddle.nn.Linear(2, 2), n_power_iterations=-1)


def test_spectral_norm_eval_keeps_vectors():
    fc = spectral_norm(paddle.nn.Linear(4, 3))
    u = fc.weight_u.numpy().copy()
    fc.eval()
    fc(paddle.ones([1, 4]))
    np.testing.assert_array_equal(fc.weight_u.numpy(), u)
    fc.train()
    fc(paddle.ones([1, 4]))
    assert not np.array_equal(fc.weight_u.numpy(), u)


def test_spectral_norm_two_forwards_then_backward():
    # the power iteration rewrites u, v in place; an earlier graph must still backward
    fc = spectral_norm(paddle.nn.Linear(4, 3))
    a = fc(paddle.ones([1, 4]))
    b = fc(paddle.ones([1, 4]))
    (a.sum() + b.sum()).backward()
    assert fc.weight_orig.grad is not None


@pytest.mark.parity
@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("make,kw,shape", [
    (lambda P: P.nn.Linear(6, 5), {}, (3, 6)),
    (lambda P: P.nn.Linear(6, 5), {"n_power_iterations": 3, "dim": 1}, (3, 6)),
    (lambda P: P.nn.Conv2D(2, 3, 3), {}, (1, 2, 5, 5)),
    (lambda P: P.nn.Conv2DTranspose(2, 3, 3), {}, (1, 2, 4, 4)),
])
def test_spectral_norm_parity(make, kw, shape, train, pd):
    try:
        hl_layer = make(paddle)
    except AttributeError:
        pytest.skip("layer family not available")
    pl = pd.nn.utils.spectral_norm(make(pd), **kw)
    hl = spectral_norm(hl_layer, **kw)
    psd = pl.state_dict()
    assert list(hl.state_dict()) == list(psd)
    assert [v.shape for v in hl.state_dict().values()] == [v.shape for v in psd.values()]
    hl.set_state_dict({k: v.numpy() for k, v in psd.items()})
    for layer in (pl, hl):
        layer.train() if train else layer.eval()
    x = rng.standard_normal(shape).astype("float32")
    res = []
    for lib, layer in ((paddle, hl), (pd, pl)):
        out = layer(lib.to_tensor(x))
        (out * out).sum().backward()
        res.append([out.numpy(), layer.weight_u.numpy(), layer.weight_v.numpy()]
                   + [p.grad.numpy() for p in layer.parameters()])
    for a, b in zip(*res):
        # float32 gradients reach 1e5-1e6 here and cancel: the tolerance follows their scale
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5 * max(1.0, np.abs(b).max()))
