"""The gradients of relu6 and hardtanh at their boundaries (a mask product, as Paddle)."""

import numpy as np
import pytest

import paddle_hl as paddle
import paddle_hl.nn.functional as F

# inputs on and around the kinks, and non-finite ones
XS = np.array([-1.0, -0.0, 0.0, 1e-30, 3.0, 6.0 - 1e-6, 6.0, 7.0, np.inf, -np.inf, np.nan])
# upstream gradients whose product with a 0 mask is not +0.0 (NaN, inf, negative, -0.0)
GS = np.array([1.0, -1.0, np.nan, np.inf, -np.inf, -0.0, 0.0, 2.5])


def _grid(dtype):
    return (np.repeat(XS, len(GS)).astype(dtype), np.tile(GS, len(XS)).astype(dtype))


def _grad(lib, x, g):
    t = lib.to_tensor(x, stop_gradient=False)
    y = lib.nn.functional.relu6(t)
    (dx,) = lib.grad([y], [t], [lib.to_tensor(g)])
    return y.numpy(), dx.numpy()


def _same_bits(a, b):
    """Equal values, NaN where the other has NaN, and equal signs on every non-NaN value."""
    np.testing.assert_array_equal(a, b)
    keep = ~np.isnan(a)
    np.testing.assert_array_equal(np.signbit(a[keep]), np.signbit(b[keep]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_relu6_grad_is_mask_product(dtype):
    """``g * (0 < out < 6)``: the mask is a 0/1 factor, so non-finite g gives NaN outside
    (0, 6) and a negative g gives -0.0 there; inside, g passes unchanged."""
    x, g = _grid(dtype)
    _, dx = _grad(paddle, x, g)
    o = np.clip(x, 0, 6)
    with np.errstate(invalid="ignore"):
        ref = g * ((o > 0) & (o < 6)).astype(dtype)
    assert dx.dtype == np.dtype(dtype)
    _same_bits(dx, ref)
    inside = (o > 0) & (o < 6)
    _same_bits(dx[inside], g[inside])
    # exactly at 0 and 6 the gradient is (signed) zero for finite g
    edge = ((x == 0) | (x == 6)) & np.isfinite(g)
    assert edge.any() and (dx[edge] == 0).all()


def test_relu6_grad_low_precision():
    """float16 inputs: the mask product computed in float32 and rounded back."""
    x, g = _grid("float16")
    _, dx = _grad(paddle, x, g)
    o = np.clip(x.astype("float32"), 0, 6)
    with np.errstate(invalid="ignore"):
        ref = (g.astype("float32") * ((o > 0) & (o < 6))).astype("float16")
    assert dx.dtype == np.float16
    _same_bits(dx, ref)


def test_relu6_double_grad_matches_first_order():
    """With create_graph the rule runs on Tensors: same values, and differentiable in g."""
    x, g = _grid("float64")
    _, dx_arr = _grad(paddle, x, g)
    t = paddle.to_tensor(x, stop_gradient=False)
    gt = paddle.to_tensor(g, stop_gradient=False)
    with np.errstate(invalid="ignore"):  # inf * 0 in the Tensor multiply
        (dx,) = paddle.grad([F.relu6(t)], [t], [gt], create_graph=True)
    _same_bits(dx.numpy(), dx_arr)
    # d(sum(dx * v))/dg = v * mask
    v = np.linspace(-1.0, 1.0, g.size)
    (dg,) = paddle.grad([(dx * paddle.to_tensor(v)).sum()], [gt])
    o = np.clip(x, 0, 6)
    np.testing.assert_array_equal(dg.numpy(), v * ((o > 0) & (o < 6)))


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_relu6_boundary_parity(dtype, pd):
    """Outputs and gradients equal Paddle 2.6.2's bit for bit (signs of zeros included) at
    0, 6, +-inf, NaN and with non-finite or negative upstream gradients."""
    x, g = _grid(dtype)
    with np.errstate(invalid="ignore"):
        y_pd, dx_pd = _grad(pd, x, g)
    y, dx = _grad(paddle, x, g)
    _same_bits(y, y_pd)
    _same_bits(dx, dx_pd)


def _hardtanh_grad(lib, x, g):
    t = lib.to_tensor(x, stop_gradient=False)
    y = lib.nn.functional.hardtanh(t, -1.0, 6.0)
    (dx,) = lib.grad([y], [t], [lib.to_tensor(g)])
    return y.numpy(), dx.numpy()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_hardtanh_grad_is_the_same_mask_product(dtype):
    """hardtanh's gradient is ``g * (min < x < max)`` in the same way as relu6's."""
    x, g = _grid(dtype)
    x = x - 1.0  # the grid shifted down, plus rows exactly on both bounds
    x = np.concatenate([x, np.full_like(g, -1.0), np.full_like(g, 6.0)])
    g = np.concatenate([g, g, g])
    _, dx = _hardtanh_grad(paddle, x, g)
    with np.errstate(invalid="ignore"):
        ref = g * ((x > -1) & (x < 6)).astype(dtype)
    _same_bits(dx, ref)


@pytest.mark.parity
def test_hardtanh_boundary_parity(pd):
    x, g = _grid("float32")
    x = np.concatenate([x - 1.0, np.full_like(g, -1.0)])
    g = np.concatenate([g, g])
    with np.errstate(invalid="ignore"):
        y_pd, dx_pd = _hardtanh_grad(pd, x, g)
    y, dx = _hardtanh_grad(paddle, x, g)
    _same_bits(y, y_pd)
    _same_bits(dx, dx_pd)


@pytest.mark.parity
@pytest.mark.parametrize("name", ["hardsigmoid", "hardswish"])
def test_saturating_activations_boundary_parity(name, pd):
    """hardsigmoid and hardswish: their gradients are 0 factors (not selections) where they
    saturate, so NaN, inf and negative upstream gradients give what Paddle gives there."""
    xs = np.array([-4.0, -3.0, -2.5, 0.0, 2.5, 3.0, 4.0, 6.0, -6.0])
    x, g = np.repeat(xs, len(GS)).astype("float32"), np.tile(GS, len(xs)).astype("float32")
    res = []
    for lib in (pd, paddle):
        t = lib.to_tensor(x, stop_gradient=False)
        y = getattr(lib.nn.functional, name)(t)
        with np.errstate(invalid="ignore"):
            (dx,) = lib.grad([y], [t], [lib.to_tensor(g)])
        res.append(dx.numpy())
    _same_bits(res[1], res[0])
