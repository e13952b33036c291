"""Elementwise math (paddle_hl/tensor/math.py): values, dtypes, gradients (first, second and third
order), inplace forms, and Paddle's documented dtype, NaN and broadcasting behaviours."""

import numpy as np
import pytest

import paddle_hl as paddle
from tests.op_check import check_op, check_parity, gradcheck

RNG = np.random.default_rng(1234)

SHAPES = [(), (0,), (3,), (2, 3)]


def _rand(shape, lo=-2.0, hi=2.0, dtype="float64"):
    return RNG.uniform(lo, hi, size=shape).astype(dtype)


# ---------------------------------------------------------------- unary ops

# name -> (domain low, domain high)
UNARY = {
    "exp": (-2, 2), "expm1": (-2, 2), "log": (0.2, 3), "log2": (0.2, 3), "log10": (0.2, 3),
    "log1p": (-0.5, 3), "sqrt": (0.2, 3), "rsqrt": (0.2, 3), "reciprocal": (0.5, 3),
    "square": (-2, 2), "neg": (-2, 2), "sin": (-2, 2), "cos": (-2, 2), "tan": (-1, 1),
    "sinh": (-2, 2), "cosh": (-2, 2), "tanh": (-2, 2), "asin": (-0.8, 0.8),
    "acos": (-0.8, 0.8), "atan": (-2, 2), "asinh": (-2, 2), "acosh": (1.2, 3),
    "atanh": (-0.8, 0.8), "deg2rad": (-90, 90), "rad2deg": (-2, 2), "abs": (-2, 2),
    "stanh": (-2, 2), "logit": (0.1, 0.9), "frac": (-3, 3),
}
UNARY_NP = {
    "exp": np.exp, "expm1": np.expm1, "log": np.log, "log2": np.log2, "log10": np.log10,
    "log1p": np.log1p, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x),
    "reciprocal": lambda x: 1 / x, "square": np.square, "neg": np.negative, "sin": np.sin,
    "cos": np.cos, "tan": np.tan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "deg2rad": np.deg2rad, "rad2deg": np.rad2deg,
    "abs": np.abs, "stanh": lambda x: 1.7159 * np.tanh(0.67 * x),
    "logit": lambda x: np.log(x / (1 - x)), "frac": lambda x: x - np.trunc(x),
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_numpy(name, shape):
    lo, hi = UNARY[name]
    x = _rand(shape, lo, hi, "float32")
    out = check_op(lambda P, t: getattr(P, name)(t), UNARY_NP[name], [x], rtol=2e-5, atol=2e-5)
    assert out[0].dtype == paddle.float32
    assert out[0].shape == list(shape)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_parity(name, dtype, pd):
    lo, hi = UNARY[name]
    x = _rand((2, 3), lo, hi, dtype)
    check_parity(lambda P, t: getattr(P, name)(t), [x], pd)


@pytest.mark.parity
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # log(-3) is NaN, as in Paddle
@pytest.mark.parametrize("name", ["abs", "neg", "sign", "square", "trunc", "frac", "exp",
                                  "log", "expm1", "deg2rad", "cumsum", "conj"])
def test_int_input_dtypes_parity(name, pd):
    x = np.array([1, 2, -3, 4], dtype="int64")
    check_parity(lambda P, t: getattr(P, name)(t), [x], pd, grad=False)


@pytest.mark.parametrize("name", ["sin", "sqrt", "tanh", "sigmoid", "reciprocal", "rsqrt"])
def test_int_input_lifts_to_default_float(name):
    t = paddle.to_tensor([1, 2, 3])
    f = getattr(paddle, name, None) or getattr(paddle.Tensor, name)
    assert f(t).dtype == paddle.float32
    paddle.set_default_dtype("float64")
    assert f(t).dtype == paddle.float64


@pytest.mark.parametrize("name", ["exp", "sin", "tanh", "sqrt", "abs", "neg", "square"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_unary_low_precision_keeps_dtype(name, dtype):
    x = paddle.to_tensor([0.5, 1.0, 1.5], dtype=dtype)
    out = getattr(paddle, name)(x)
    assert out.dtype == x.dtype
    ref = UNARY_NP[name](np.array([0.5, 1.0, 1.5]))
    np.testing.assert_allclose(out.astype("float32").numpy(), ref, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_gradcheck(name):
    lo, hi = UNARY[name]
    gradcheck(lambda t: getattr(paddle, name)(t), [_rand((2, 3), lo, hi)], rtol=1e-4, atol=1e-6)


def test_sigmoid_method_and_values():
    x = np.array([-800.0, -1.0, 0.0, 2.0, 800.0], dtype="float32")
    t = paddle.to_tensor(x)
    out = t.sigmoid()
    ref = np.exp(-np.logaddexp(0, -x.astype("float64")))
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6)
    assert not np.any(np.isnan(out.numpy()))
    gradcheck(lambda a: a.sigmoid(), [_rand((4,))])


@pytest.mark.parity
def test_step_functions_parity(pd):
    x = np.array([-2.5, -1.5, -0.5, 0.49999997, 0.5, 1.5, 2.5, 3.7], dtype="float32")
    for name in ("ceil", "floor", "round", "trunc", "sign"):
        check_parity(lambda P, t: getattr(P, name)(t), [x], pd)


def test_round_half_away_from_zero():
    t = paddle.to_tensor([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997])
    np.testing.assert_array_equal(paddle.round(t).numpy(), [1, 2, 3, -1, -3, 0])


def test_sign_nan_and_int():
    np.testing.assert_array_equal(paddle.sign(paddle.to_tensor([-2.0, 0.0, np.nan])).numpy(),
                                  [-1, 0, np.nan])
    out = paddle.sign(paddle.to_tensor([-3, 0, 5], dtype="int32"))
    assert out.dtype == paddle.int32
    with pytest.raises(TypeError, match="sign"):
        paddle.sign(paddle.to_tensor([True]))


# ---------------------------------------------------------------- binary ops

BINARY = {
    "add": None, "subtract": None, "multiply": None, "divide": None, "maximum": None,
    "minimum": None, "fmax": None, "fmin": None, "atan2": None, "hypot": None,
    "logaddexp": None, "pow": "pos",
}
BIN_SHAPES = [((3, 4), (3, 4)), ((4,), (3, 4)), ((3, 1), (1, 4)), ((), (2, 3)), ((2, 3), ())]


@pytest.mark.parity
@pytest.mark.parametrize("shapes", BIN_SHAPES)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_parity(name, shapes, pd):
    if name == "atan2" and shapes[0] != shapes[1]:
        pytest.skip("Paddle's atan2 needs inputs of equal rank")
    lo = 0.5 if BINARY[name] == "pos" else -2.0
    x = _rand(shapes[0], lo, 2.0, "float32")
    y = _rand(shapes[1], 0.5, 2.0, "float32")
    check_parity(lambda P, a, b: getattr(P, name)(a, b), [x, y], pd, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", sorted(BINARY) + ["remainder", "lerp_w"])
def test_binary_gradcheck(name):
    x = _rand((3, 4), 0.5, 2.0)
    y = _rand((4,), 0.3, 1.7) + 0.05  # distinct from x, so max/min have no ties
    if name == "lerp_w":
        w = _rand((3, 4), 0, 1)
        gradcheck(lambda a, b, c: paddle.lerp(a, b, c), [x, y, w])
        return
    gradcheck(lambda a, b: getattr(paddle, name)(a, b), [x, y], rtol=1e-4)


@pytest.mark.parity
@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin"])
def test_minmax_tie_gradient_parity(name, pd):
    x = np.array([1.0, 2.0, 3.0, 2.0], dtype="float32")
    y = np.array([2.0, 2.0, 1.0, 2.0], dtype="float32")
    check_parity(lambda P, a, b: getattr(P, name)(a, b), [x, y], pd)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_floor_divide_remainder_parity(dtype, pd):
    x = np.array([-7, -3, 3, 7, 5, 0], dtype=dtype)
    y = np.array([2, 2, -2, -2, 3, 4], dtype=dtype)
    if dtype.startswith("float"):
        x = x + 0.5
    for fn in ("floor_divide", "remainder", "mod", "floor_mod"):
        check_parity(lambda P, a, b: getattr(P, fn)(a, b), [x, y], pd, grad=False)
    check_parity(lambda P, a, b: a // b, [x, y], pd, grad=False)
    check_parity(lambda P, a, b: a % b, [x, y], pd, grad=False)


def test_integer_division_by_zero_raises():
    with pytest.raises(ZeroDivisionError, match="floor_divide"):
        paddle.floor_divide(paddle.to_tensor([1]), paddle.to_tensor([0]))
    with pytest.raises(ZeroDivisionError, match="remainder"):
        paddle.remainder(paddle.to_tensor([1]), paddle.to_tensor([0]))


@pytest.mark.parity
def test_gcd_lcm_parity(pd):
    x = np.array([0, -12, 0, 4, 17], dtype="int64")
    y = np.array([5, 18, 0, -6, 5], dtype="int64")
    check_parity(lambda P, a, b: P.gcd(a, b), [x, y], pd, grad=False)
    check_parity(lambda P, a, b: P.lcm(a, b), [x, y], pd, grad=False)
    with pytest.raises(TypeError, match="gcd"):
        paddle.gcd(paddle.to_tensor([1.0]), paddle.to_tensor([2.0]))


@pytest.mark.parity
def test_pow_parity(pd):
    x = _rand((2, 3), 0.5, 2.0, "float32")
    check_parity(lambda P, a: P.pow(a, 3), [x], pd)
    check_parity(lambda P, a: P.pow(a, 2.5), [x], pd)
    check_parity(lambda P, a: a ** 2, [x], pd)
    check_parity(lambda P, a: 2.0 ** a, [x], pd)
    i = np.array([1, 2, -3], dtype="int64")
    check_parity(lambda P, a: a ** 2, [i], pd, grad=False)
    check_parity(lambda P, a: 2 ** a, [i], pd, grad=False)
    check_parity(lambda P, a: a ** 2.0, [i], pd, grad=False)


def test_int_pow_negative_exponent_truncates():
    out = paddle.pow(paddle.to_tensor([1, -1, 2, -1]), paddle.to_tensor([-2, -3, -1, -2]))
    assert out.dtype == paddle.int64
    np.testing.assert_array_equal(out.numpy(), [1, -1, 0, 1])


@pytest.mark.parity
def test_heaviside_ldexp_nextafter_parity(pd):
    x = np.array([0.0, 1.5, -2.0, 0.0], dtype="float32")
    y = np.array([0.5, 2.0, 3.0, 7.0], dtype="float32")
    check_parity(lambda P, a, b: P.heaviside(a, b), [x, y], pd)
    e = np.array([1, -2, 3, 70], dtype="int64")
    check_parity(lambda P, a, b: P.ldexp(a, b), [y, e], pd)
    check_parity(lambda P, a, b: P.ldexp(a, b), [e, e], pd, grad=False)
    check_parity(lambda P, a, b: P.nextafter(a, b), [x, y], pd, grad=False)
    # integer atan2 is computed in float32 and returned as float64: compare in float32 ulps
    check_parity(lambda P, a, b: P.atan2(a, b), [e, e], pd, grad=False, precision="float32")


def test_heaviside_int_and_gradcheck():
    out = paddle.heaviside(paddle.to_tensor([-2, 0, 3]), paddle.to_tensor([7, 7, 7]))
    assert out.dtype == paddle.int64
    np.testing.assert_array_equal(out.numpy(), [0, 7, 1])
    gradcheck(lambda a, b: paddle.ldexp(a, b), [_rand((3,)), np.array([1, 2, -1])])


def test_binary_broadcast_error_names_op():
    with pytest.raises(ValueError, match=r"add.*\[2, 2\].*\[3\]"):
        paddle.add(paddle.ones([2, 2]), paddle.ones([3]))
    with pytest.raises(ValueError, match="hypot"):
        paddle.hypot(paddle.ones([2, 2]), paddle.ones([3]))


# ---------------------------------------------------------------- dtype rules

def test_b3_true_division():
    out = paddle.to_tensor([327]) / paddle.to_tensor([80])
    assert out.dtype == paddle.float32
    np.testing.assert_allclose(out.numpy(), [4.0875], rtol=1e-6)
    out = paddle.to_tensor([1, 2, -3], dtype="int32") / 2
    assert out.dtype == paddle.float32
    np.testing.assert_allclose(out.numpy(), [0.5, 1.0, -1.5])


def test_b5_scalar_promotion():
    out = paddle.to_tensor([1, 2]) * 0.5
    assert out.dtype == paddle.float32
    np.testing.assert_allclose(out.numpy(), [0.5, 1.0])
    out = paddle.to_tensor([True]) + paddle.to_tensor([1.5])
    assert out.dtype == paddle.float32
    np.testing.assert_allclose(out.numpy(), [2.5])
    assert (paddle.to_tensor([1, 2]) * 3).dtype == paddle.int64
    assert (paddle.to_tensor([1, 2], dtype="int32") + 1).dtype == paddle.int32
    assert (paddle.to_tensor([1.5], dtype="float16") * 2.5).dtype == paddle.float16
    h = paddle.to_tensor([1.5], dtype="float16") + paddle.to_tensor([1.0])
    assert h.dtype == paddle.float32
    assert (paddle.to_tensor([1, 2]) // 2.0).dtype == paddle.float32
    assert (paddle.to_tensor([1, 2]) + True).dtype == paddle.int64


@pytest.mark.parity
def test_scalar_ops_parity(pd):
    i = np.array([1, 2, -3], dtype="int64")
    f = np.array([1.5, -2.5, 0.5], dtype="float32")
    # Paddle has no gradient for % and //; paddle_hl differentiates % (d/dx = 1)
    cases = [(lambda P, a: a * 0.5, True), (lambda P, a: a + 1, True), (lambda P, a: a - 2, True),
             (lambda P, a: a / 2, True), (lambda P, a: 3 - a, True), (lambda P, a: 1 / a, True),
             (lambda P, a: a % 2, False), (lambda P, a: a // 2, False)]
    for fn, grad in cases:
        check_parity(fn, [i], pd, grad=False)
        check_parity(fn, [f], pd, grad=grad)


# ---------------------------------------------------------------- complex

def _cplx(shape):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype("complex64")


def test_b8_complex_round_trip_and_abs():
    x = np.array([[1.0, 2.0], [3.0, 4.0]], dtype="float32")
    z = paddle.as_complex(paddle.to_tensor(x))
    assert z.dtype == paddle.complex64 and z.shape == [2]
    np.testing.assert_allclose(z.numpy(), [1 + 2j, 3 + 4j])
    back = paddle.as_real(z)
    assert back.dtype == paddle.float32
    np.testing.assert_array_equal(back.numpy(), x)
    a = paddle.abs(z)
    assert a.dtype == paddle.float32
    np.testing.assert_allclose(a.numpy(), [np.sqrt(5), 5.0], rtol=1e-6)
    np.testing.assert_allclose(paddle.angle(z).numpy(), np.angle([1 + 2j, 3 + 4j]), rtol=1e-6)
    assert paddle.real(z).dtype == paddle.float32 and paddle.imag(z).dtype == paddle.float32
    np.testing.assert_allclose(paddle.conj(z).numpy(), [1 - 2j, 3 - 4j])
    z128 = paddle.to_tensor(np.array([3 + 4j]))
    assert paddle.abs(z128).dtype == paddle.float64
    assert paddle.angle(z128).dtype == paddle.float64


@pytest.mark.parity
@pytest.mark.parametrize("name", ["abs", "angle", "real", "imag", "sgn"])
def test_complex_to_real_grad_parity(name, pd):
    z = np.array([3 + 4j, 1 - 2j, -0.5 + 0.25j], dtype="complex128")
    check_parity(lambda P, t: getattr(P, name)(t) if name != "sgn" else P.real(P.sgn(t)),
                 [z], pd)


@pytest.mark.parity
@pytest.mark.parametrize("name", ["multiply", "divide", "add", "subtract"])
def test_complex_binary_grad_parity(name, pd):
    z = _cplx((3,)).astype("complex128")
    w = _cplx((3,)).astype("complex128")
    check_parity(lambda P, a, b: P.real(getattr(P, name)(a, b)), [z, w], pd)
    check_parity(lambda P, a, b: P.imag(getattr(P, name)(a, b)), [z, w], pd)


@pytest.mark.parity
@pytest.mark.parametrize("name", ["exp", "tanh", "sin", "cos", "conj", "sgn"])
def test_complex_unary_grad_parity(name, pd):
    z = _cplx((4,)).astype("complex128")
    # Paddle's complex exp/sin kernels are accurate to about 1e-7 only
    check_parity(lambda P, t: P.real(getattr(P, name)(t)) + 2 * P.imag(getattr(P, name)(t)),
                 [z], pd, rtol=1e-6, atol=1e-6)


def test_complex_as_real_grad_and_accumulation():
    z = paddle.to_tensor(np.array([3 + 4j, 1 - 2j]), stop_gradient=False)
    r = paddle.as_real(z)
    (r * paddle.to_tensor([[3.0, 1.0], [3.0, 1.0]], dtype="float64")).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), [3 + 1j, 3 + 1j])
    paddle.real(z).sum().backward()  # gradients of complex tensors accumulate
    np.testing.assert_allclose(z.grad.numpy(), [4 + 1j, 4 + 1j])
    x = paddle.to_tensor(np.array([[1.0, 2.0], [3.0, 4.0]]), stop_gradient=False)
    c = paddle.as_complex(x)
    (paddle.real(c) + 2 * paddle.imag(c)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[1, 2], [1, 2]])


def test_complex_multiply_by_complex_scalar():
    z = paddle.to_tensor(np.array([1 + 1j]), stop_gradient=False)
    out = z * (2 - 1j)
    np.testing.assert_allclose(out.numpy(), [(1 + 1j) * (2 - 1j)])
    paddle.real(out).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), [2 + 1j])


def test_as_complex_errors():
    with pytest.raises(ValueError, match="as_complex"):
        paddle.as_complex(paddle.ones([2, 3]))
    with pytest.raises(TypeError, match="as_real"):
        paddle.as_real(paddle.ones([2, 2]))


# ---------------------------------------------------------------- inplace

TOP_INPLACE = ["abs_", "acos_", "atan_", "cos_", "log_", "log10_", "log2_", "neg_", "sin_",
               "sinh_", "tan_", "tanh_", "trunc_", "frac_", "expm1_", "square_"]
METHOD_ONLY = ["add_", "subtract_", "clip_", "scale_", "ceil_", "floor_", "exp_",
               "reciprocal_", "round_", "sqrt_", "rsqrt_", "sigmoid_"]


def test_b29_method_only_inplace():
    for n in METHOD_ONLY:
        assert not hasattr(paddle, n), n
        assert hasattr(paddle.Tensor, n), n
    t = paddle.to_tensor([1.0, 2.0])
    out = t.add_(paddle.to_tensor(3.0))
    assert out is t
    np.testing.assert_allclose(t.numpy(), [4.0, 5.0])
    with pytest.raises(ValueError, match="add_"):
        t.add_(paddle.ones([2, 2]))


def test_b28_inplace_exists_top_and_method():
    for n in TOP_INPLACE + ["multiply_", "divide_", "pow_", "remainder_", "cumsum_"]:
        assert hasattr(paddle, n), n
    for n in ("expm1_", "square_"):
        assert not hasattr(paddle.Tensor, n)
    assert paddle.sin_ is paddle.Tensor.sin_


@pytest.mark.parametrize("name", TOP_INPLACE + METHOD_ONLY)
def test_inplace_matches_out_of_place(name):
    base = name[:-1]
    x = _rand((2, 3), 0.2, 0.9, "float32")
    t = paddle.to_tensor(x)
    v0 = t.inplace_version
    args = {"clip": (0.3, 0.6), "scale": (2.0, 1.0), "add": (paddle.to_tensor(1.5),),
            "subtract": (paddle.to_tensor([1.0, 2.0, 3.0]),)}.get(base, ())
    f = getattr(paddle.Tensor, name, None) or getattr(paddle, name)
    ref = (getattr(paddle, base, None) or getattr(paddle.Tensor, base))(paddle.to_tensor(x),
                                                                         *args)
    out = f(t, *args)
    assert out is t
    assert t.inplace_version == v0 + 1
    np.testing.assert_allclose(t.numpy(), ref.numpy(), rtol=1e-6)


@pytest.mark.parametrize("name,args", [
    ("multiply_", (2.0,)), ("divide_", (4.0,)), ("pow_", (2,)), ("remainder_", (0.5,)),
    ("floor_divide_", (0.25,)), ("hypot_", (1.0,)), ("cumsum_", (0,)), ("cumprod_", (1,)),
    ("logit_", ()), ("nan_to_num_", ()), ("renorm_", (2, 0, 0.5)), ("lerp_", (1.0, 0.5)),
    ("mod_", (0.3,)), ("floor_mod_", (0.3,)),
])
def test_inplace_binary_and_compound(name, args):
    x = _rand((2, 3), 0.2, 0.9, "float32")
    t = paddle.to_tensor(x)
    base = name[:-1]
    conv = [paddle.to_tensor(np.full((2, 3), a, "float32")) if name == "lerp_" and k == 0
            else a for k, a in enumerate(args)]
    ref = getattr(paddle, base)(paddle.to_tensor(x), *conv)
    out = (getattr(paddle, name, None) or getattr(paddle.Tensor, name))(t, *conv)
    assert out is t
    np.testing.assert_allclose(t.numpy(), ref.numpy(), rtol=1e-6)


def test_inplace_integer_ops():
    t = paddle.to_tensor([12, 18])
    assert paddle.gcd_(t, paddle.to_tensor([8, 12])) is t
    np.testing.assert_array_equal(t.numpy(), [4, 6])
    paddle.lcm_(t, paddle.to_tensor([6, 4]))
    np.testing.assert_array_equal(t.numpy(), [12, 12])
    a = paddle.to_tensor([1.0, 2.0])
    paddle.ldexp_(a, paddle.to_tensor([2, 3]))
    np.testing.assert_array_equal(a.numpy(), [4.0, 16.0])
    with pytest.raises(TypeError, match="sqrt_"):
        paddle.to_tensor([1, 2]).sqrt_()


def test_inplace_keeps_graph_and_refuses_leaf():
    x = paddle.to_tensor([0.5, 1.0, 1.5], stop_gradient=False)
    with pytest.raises((RuntimeError, ValueError), match="inplace"):
        x.exp_()
    y = x * 2
    y.exp_()
    y.sin_()
    y.sum().backward()
    xa = np.array([0.5, 1.0, 1.5])
    np.testing.assert_allclose(x.grad.numpy(), np.cos(np.exp(2 * xa)) * np.exp(2 * xa) * 2,
                               rtol=1e-5)
    x2 = paddle.to_tensor([0.5, 1.0, 1.5], stop_gradient=False)
    y2 = x2 * 1
    paddle.cumsum_(y2, 0)
    y2.sum().backward()
    np.testing.assert_allclose(x2.grad.numpy(), [3, 2, 1])


def test_inplace_higher_order_through_exp_():
    x = paddle.to_tensor([0.3, 0.7], dtype="float64", stop_gradient=False)
    y = x * 1
    y.exp_()
    (g,) = paddle.grad(y.sum(), x, create_graph=True)
    np.testing.assert_allclose(g.numpy(), np.exp([0.3, 0.7]))
    (g2,) = paddle.grad(g.sum(), x)
    np.testing.assert_allclose(g2.numpy(), np.exp([0.3, 0.7]))


# ---------------------------------------------------------------- higher order

def _grad_fd(f, x, eps=1e-6):
    """Central differences of scalar f at x (float64)."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp_, xm = x.copy(), x.copy()
        xp_[i] += eps
        xm[i] -= eps
        g[i] = (f(xp_) - f(xm)) / (2 * eps)
    return g


def _nth_grad(fn, xs, wrt, order, weights, create_last=False):
    """d/d xs[wrt] of sum(w_k * ...) applied ``order`` times (each level weighted)."""
    ts = [paddle.to_tensor(a, stop_gradient=False) for a in xs]
    cur = fn(*ts)
    for k in range(order):
        last = k == order - 1
        (cur,) = paddle.grad((cur * paddle.to_tensor(weights[k])).sum(), ts[wrt],
                             create_graph=not last or create_last, allow_unused=True)
        if cur is None:  # this derivative vanishes identically
            return paddle.zeros(xs[wrt].shape, dtype="float64")
    return cur


def _check_order(fn, xs, wrt=0, order=2, rtol=1e-4, atol=1e-5):
    rng = np.random.default_rng(7)
    out_shape = fn(*[paddle.to_tensor(a) for a in xs]).shape
    shapes = [out_shape] + [xs[wrt].shape] * (order - 1)
    weights = [rng.standard_normal(s) for s in shapes]
    ana = _nth_grad(fn, xs, wrt, order, weights).numpy()
    w_last = weights[order - 1]

    def lower(a):
        ys = list(xs)
        ys[wrt] = a
        return float(np.sum(_nth_grad(fn, ys, wrt, order - 1, weights).numpy() * w_last))

    num = _grad_fd(lower, np.array(xs[wrt], dtype=np.float64))
    np.testing.assert_allclose(ana, num, rtol=rtol, atol=atol)


@pytest.mark.parametrize("order", [2, 3])
@pytest.mark.parametrize("op", ["add", "multiply", "subtract", "divide"])
def test_b39_binary_double_triple_backward(op, order):
    x = _rand((2, 3), 0.5, 2.0)
    y = _rand((3,), 0.5, 2.0)
    f = getattr(paddle, op)

    def fn(a, b):
        return f(a, b) * f(a, b) * a  # nonlinear, so higher derivatives are non-zero
    for wrt in (0, 1):
        _check_order(fn, [x, y], wrt=wrt, order=order)


def test_b39_tanh_double_backward():
    _check_order(paddle.tanh, [_rand((2, 3))], order=2)


@pytest.mark.parametrize("name", sorted(UNARY) + ["sigmoid"])
def test_unary_second_order(name):
    lo, hi = UNARY.get(name, (-2, 2))
    f = getattr(paddle, name, None) or getattr(paddle.Tensor, name)
    _check_order(lambda t: f(t) * t, [_rand((3,), lo, hi)], order=2, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["exp", "sin", "tanh", "log", "sqrt", "sigmoid", "atan"])
def test_unary_third_order(name):
    lo, hi = UNARY.get(name, (-2, 2))
    f = getattr(paddle, name, None) or getattr(paddle.Tensor, name)
    _check_order(f, [_rand((3,), max(lo, 0.3), hi)], order=3, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin", "pow", "atan2",
                                  "hypot", "logaddexp", "remainder"])
def test_binary_second_order(name, ):
    x = _rand((2, 3), 0.5, 2.0)
    y = _rand((3,), 0.3, 1.7) + 0.05
    f = getattr(paddle, name)
    for wrt in (0, 1):
        _check_order(lambda a, b: f(a, b) * a * b, [x, y], wrt=wrt, order=2)


@pytest.mark.parametrize("case", [
    "cumsum", "cumprod", "cumprod_zero", "cummax", "logcumsumexp", "clip", "diff", "trace",
    "lerp", "addmm", "renorm", "multiplex", "stanh", "nan_to_num", "frexp", "scale",
    "trapezoid", "cumulative_trapezoid", "add_n", "abs", "pow_scalar", "logit_eps",
])
def test_compound_second_order(case):
    x = _rand((3, 4), 0.3, 1.5)
    fns = {
        "cumsum": lambda t: paddle.cumsum(t, 1) * t,
        "cumprod": lambda t: paddle.cumprod(t, 1),
        "cumprod_zero": lambda t: paddle.cumprod(t * paddle.to_tensor(
            np.array([1.0, 0.0, 1.0, 1.0])), 1) * t,
        "cummax": lambda t: paddle.cummax(t, 1)[0] * t,
        "logcumsumexp": lambda t: paddle.logcumsumexp(t, 0),
        "clip": lambda t: paddle.clip(t, 0.5, 1.2) * t,
        "diff": lambda t: paddle.diff(t, axis=0) ** 2,
        "trace": lambda t: paddle.trace(t * t, 1),
        "lerp": lambda t: paddle.lerp(t, t * t, t),
        "addmm": lambda t: paddle.addmm(t, t[:, :3], t[:3] * t[:3], 0.5, 2.0),
        "renorm": lambda t: paddle.renorm(t, 2.0, 0, 1.0),
        "multiplex": lambda t: paddle.multiplex([t * t, t], paddle.to_tensor([[1], [0], [1]])),
        "stanh": lambda t: paddle.stanh(t, 0.5, 2.0),
        "nan_to_num": lambda t: paddle.nan_to_num(t * t),
        "frexp": lambda t: paddle.frexp(t * t)[0],
        "scale": lambda t: paddle.scale(t * t, 3.0, 1.0),
        "trapezoid": lambda t: paddle.trapezoid(t * t, axis=0),
        "cumulative_trapezoid": lambda t: paddle.cumulative_trapezoid(t * t, dx=0.5),
        "add_n": lambda t: paddle.add_n([t * t, t, t ** 3]),
        "abs": lambda t: paddle.abs(t - 1.0) * t,
        "pow_scalar": lambda t: paddle.pow(t, 3.5),
        "logit_eps": lambda t: paddle.logit(t * 0.5, 0.2),
    }
    _check_order(fns[case], [x], order=2)


def test_floor_divide_is_not_differentiable():
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    y = paddle.floor_divide(x, paddle.to_tensor([2.0, 2.0]))
    assert y.stop_gradient


# ---------------------------------------------------------------- broadcast grads

@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide"])
def test_b40_broadcast_grad_shapes(op):
    x = paddle.to_tensor(_rand((4,), 0.5, 2, "float32"), stop_gradient=False)
    y = paddle.to_tensor(_rand((3, 4), 0.5, 2, "float32"), stop_gradient=False)
    getattr(paddle, op)(x, y).sum().backward()
    assert x.grad.shape == [4]
    assert y.grad.shape == [3, 4]
    gradcheck(lambda a, b: getattr(paddle, op)(a, b), [_rand((4,), 0.5, 2), _rand((3, 4), 0.5, 2)])


# ---------------------------------------------------------------- cumulative ops

@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64", "bool"])
@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4), (1, 5), (0, 3)])
def test_b50_cumsum_matches_numpy(shape, dtype):
    x = (RNG.integers(-5, 5, size=shape) if dtype != "bool"
         else RNG.integers(0, 2, size=shape)).astype(dtype)
    t = paddle.to_tensor(x)
    for axis in [None] + list(range(-len(shape), len(shape))):
        out = paddle.cumsum(t, axis=axis)
        np.testing.assert_array_equal(out.numpy(), np.cumsum(x, axis=axis))
        if dtype in ("int32", "int64", "float32", "float64"):
            assert out.dtype == t.dtype
    one = paddle.to_tensor(np.ones((3, 1), dtype="float32") * 7)
    np.testing.assert_array_equal(paddle.cumsum(one, axis=1).numpy(), one.numpy())


def test_cumsum_0d_and_dtype():
    s = paddle.to_tensor(3.0)
    assert paddle.cumsum(s).shape == [1]
    assert paddle.cumsum(s, axis=0).shape == []
    out = paddle.cumsum(paddle.to_tensor([1, 2, 3]), dtype="float64")
    assert out.dtype == paddle.float64
    with pytest.raises(IndexError, match="cumsum"):
        paddle.cumsum(paddle.ones([2, 2]), axis=2)


@pytest.mark.parity
@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_cumulative_parity(axis, pd):
    x = _rand((3, 4), 0.5, 2.0, "float32")
    check_parity(lambda P, t: P.cumsum(t, axis=axis), [x], pd)
    check_parity(lambda P, t: P.logcumsumexp(t, axis=axis), [x], pd)
    if axis is not None:
        check_parity(lambda P, t: P.cumprod(t, dim=axis), [x], pd)
    check_parity(lambda P, t: P.cummax(t, axis=axis), [x], pd)
    check_parity(lambda P, t: P.cummin(t, axis=axis), [x], pd)


@pytest.mark.parity
def test_cumprod_zeros_gradient_parity(pd):
    x = np.array([[1.0, 0.0, 3.0, 2.0], [1.0, 0.0, 3.0, 0.0], [0.0, 2.0, 0.5, 4.0]],
                 dtype="float64")
    check_parity(lambda P, t: P.cumprod(t, dim=1), [x], pd)
    gradcheck(lambda t: paddle.cumprod(t, 1), [x])


@pytest.mark.parity
def test_b66_cummax_cummin(pd):
    x = np.array([1.0, 3.0, 3.0, 2.0, 5.0, np.nan, 1.0, np.nan], dtype="float32")
    v, i = paddle.cummax(paddle.to_tensor(x))
    assert i.dtype == paddle.int64
    np.testing.assert_array_equal(i.numpy(), [0, 1, 2, 2, 4, 5, 5, 7])
    np.testing.assert_array_equal(v.numpy(), [1, 3, 3, 3, 5, np.nan, np.nan, np.nan])
    y = np.array([3.0, 1.0, 1.0, 2.0, 0.0], dtype="float32")
    check_parity(lambda P, t: P.cummin(t), [y], pd)
    check_parity(lambda P, t: P.cummax(t), [y], pd)
    xi = RNG.integers(-9, 9, size=(4, 6)).astype("int32")
    check_parity(lambda P, t: P.cummax(t, axis=1), [xi], pd, grad=False)
    check_parity(lambda P, t: P.cummin(t, axis=0, dtype="int32"), [xi], pd, grad=False)
    ref_v = np.maximum.accumulate(xi, axis=1)
    np.testing.assert_array_equal(paddle.cummax(paddle.to_tensor(xi), 1)[0].numpy(), ref_v)
    gradcheck(lambda t: paddle.cummin(t, 1)[0], [_rand((3, 5))])


def test_cummax_empty_and_0d():
    v, i = paddle.cummax(paddle.zeros([0, 3]), axis=0)
    assert v.shape == [0, 3] and i.shape == [0, 3]
    v, i = paddle.cummax(paddle.to_tensor(2.0))
    assert v.shape == [1] and i.numpy().tolist() == [0]


@pytest.mark.parity
def test_b64_logcumsumexp_matches_numpy(pd):
    x = _rand((3, 5), -3, 3, "float64")
    for axis in (0, 1):
        ref = np.log(np.cumsum(np.exp(x), axis=axis))
        np.testing.assert_allclose(paddle.logcumsumexp(paddle.to_tensor(x), axis).numpy(), ref,
                                   rtol=1e-12)
    big = np.array([1000.0, 1000.0, -1000.0, 2000.0])
    out = paddle.logcumsumexp(paddle.to_tensor(big)).numpy()
    np.testing.assert_allclose(out, [1000, 1000 + np.log(2), 1000 + np.log(2), 2000])
    t = paddle.to_tensor(big, stop_gradient=False)
    paddle.logcumsumexp(t).sum().backward()
    assert np.all(np.isfinite(t.grad.numpy()))
    gradcheck(lambda a: paddle.logcumsumexp(a, 1), [_rand((2, 4))])
    check_parity(lambda P, a: P.logcumsumexp(a), [big.astype("float32")], pd)


# ---------------------------------------------------------------- diff / trapezoid

@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
@pytest.mark.parametrize("axis", [0, -1])
def test_b63_diff_matches_numpy(dtype, axis):
    x = RNG.integers(0, 5, size=(3, 4)).astype(dtype)
    pre = RNG.integers(0, 5, size=(1, 4) if axis == 0 else (3, 1)).astype(dtype)
    app = RNG.integers(0, 5, size=(2, 4) if axis == 0 else (3, 2)).astype(dtype)
    t = paddle.to_tensor(x)
    np.testing.assert_array_equal(paddle.diff(t, axis=axis).numpy(), np.diff(x, axis=axis))
    out = paddle.diff(t, axis=axis, prepend=paddle.to_tensor(pre), append=paddle.to_tensor(app))
    np.testing.assert_array_equal(out.numpy(), np.diff(x, axis=axis, prepend=pre, append=app))
    assert str(out.dtype).endswith(dtype)


@pytest.mark.parity
def test_diff_parity_and_grad(pd):
    x = _rand((3, 4), -2, 2, "float32")
    p = _rand((3, 1), -2, 2, "float32")
    check_parity(lambda P, a, b: P.diff(a, prepend=b), [x, p], pd)
    check_parity(lambda P, a: P.diff(a, axis=0), [x], pd)
    gradcheck(lambda a, b: paddle.diff(a, prepend=b, append=b), [_rand((3, 4)), _rand((3, 1))])


@pytest.mark.parity
def test_trapezoid_parity(pd):
    y = _rand((3, 4), -2, 2, "float32")
    x = np.sort(_rand((3, 4), 0, 5, "float32"), axis=1)
    # values only: Paddle 2.6's trapezoid gradient repeats row 0's for every row (a bug);
    # the gradients are checked against finite differences below
    for fn in ("trapezoid", "cumulative_trapezoid"):
        check_parity(lambda P, a: getattr(P, fn)(a), [y], pd, grad=False)
        check_parity(lambda P, a: getattr(P, fn)(a, dx=0.5, axis=0), [y], pd, grad=False)
        check_parity(lambda P, a, b: getattr(P, fn)(a, x=b), [y, x], pd, grad=False)
        f = getattr(paddle, fn)
        gradcheck(lambda a: f(a), [y.astype("float64")])
        gradcheck(lambda a: f(a, dx=0.5, axis=0), [y.astype("float64")])
        gradcheck(lambda a, b: f(a, x=b), [y.astype("float64"), x.astype("float64")])
    out = paddle.trapezoid(paddle.to_tensor(y), x=paddle.to_tensor(x[0]))
    np.testing.assert_allclose(out.numpy(), np.trapezoid(y, x=x[0]) if hasattr(
        np, "trapezoid") else np.trapz(y, x=x[0]), rtol=1e-5)
    assert paddle.trapezoid(paddle.to_tensor(y[0])).shape == []
    with pytest.raises(ValueError, match="trapezoid"):
        paddle.trapezoid(paddle.to_tensor(y), x=paddle.to_tensor(x), dx=1.0)
    with pytest.raises(TypeError, match="trapezoid"):
        paddle.trapezoid(paddle.to_tensor([1, 2, 3]))


# ---------------------------------------------------------------- clip, fmax/fmin

@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_b58_clip_keeps_dtype(dtype, pd):
    x = np.array([1, 5, 9, -3], dtype=dtype)
    out = paddle.clip(paddle.to_tensor(x), 3, 6)
    assert out.dtype == paddle.to_tensor(x).dtype
    np.testing.assert_array_equal(out.numpy(), np.clip(x, 3, 6))
    check_parity(lambda P, t: P.clip(t, 3.7, 6.2), [x], pd, grad=dtype.startswith("float"))
    check_parity(lambda P, t: P.clip(t, min=2), [x], pd, grad=dtype.startswith("float"))
    check_parity(lambda P, t: P.clip(t, max=2), [x], pd, grad=dtype.startswith("float"))


@pytest.mark.parity
def test_clip_boundary_grad_and_tensor_bounds(pd):
    x = np.array([1.0, 1.5, 2.0, 3.0], dtype="float32")
    check_parity(lambda P, t: P.clip(t, 1.5, 2.0), [x], pd)
    out = paddle.clip(paddle.to_tensor(x), paddle.to_tensor(1.2), paddle.to_tensor([2.5]))
    np.testing.assert_allclose(out.numpy(), np.clip(x, 1.2, 2.5))
    with pytest.raises(ValueError, match="clip"):
        paddle.clip(paddle.to_tensor(x), 3.0, 2.0)
    np.testing.assert_array_equal(paddle.clip(paddle.to_tensor(x)).numpy(), x)


def test_b59_fmax_fmin_nan():
    a = paddle.to_tensor([np.nan, 1.0, np.nan, 2.0])
    b = paddle.to_tensor([2.0, np.nan, np.nan, 1.0])
    np.testing.assert_array_equal(paddle.fmax(a, b).numpy(), [2.0, 1.0, np.nan, 2.0])
    np.testing.assert_array_equal(paddle.fmin(a, b).numpy(), [2.0, 1.0, np.nan, 1.0])
    # Paddle's maximum is x > y ? x : y: a NaN in x gives y
    np.testing.assert_array_equal(paddle.maximum(a, b).numpy(), [2.0, np.nan, np.nan, 2.0])
    xi = paddle.to_tensor([1, 5], dtype="int32")
    assert paddle.fmax(xi, paddle.to_tensor([3, 2], dtype="int32")).dtype == paddle.int32


@pytest.mark.parity
def test_fmax_nan_grad_parity(pd):
    a = np.array([np.nan, 1.0, 3.0], dtype="float32")
    b = np.array([1.0, np.nan, 2.0], dtype="float32")
    check_parity(lambda P, x, y: P.fmax(x, y), [a, b], pd)
    check_parity(lambda P, x, y: P.fmin(x, y), [a, b], pd)


# ---------------------------------------------------------------- extras

def test_b64_heaviside_frac_sgn():
    x = paddle.to_tensor([-1.5, 0.0, 2.0, 0.0])
    y = paddle.to_tensor([9.0, 0.25, 9.0, 0.75])
    np.testing.assert_array_equal(paddle.heaviside(x, y).numpy(), [0.0, 0.25, 1.0, 0.75])
    v = np.array([-2.75, -0.5, 0.0, 1.25, 3.0], dtype="float32")
    np.testing.assert_allclose(paddle.frac(paddle.to_tensor(v)).numpy(), v - np.trunc(v))
    z = np.array([3 + 4j, 0j, -1j], dtype="complex64")
    out = paddle.sgn(paddle.to_tensor(z))
    assert out.dtype == paddle.complex64
    np.testing.assert_allclose(out.numpy(), [0.6 + 0.8j, 0j, -1j], rtol=1e-6)
    np.testing.assert_array_equal(paddle.sgn(paddle.to_tensor([-2.0, 0.0, 3.0])).numpy(),
                                  [-1.0, 0.0, 1.0])
    with pytest.raises(TypeError, match="sgn"):
        paddle.sgn(paddle.to_tensor([1, 2]))


@pytest.mark.parity
def test_b65_logaddexp_stable(pd):
    a = np.array([1000.0, -1000.0, 0.0, 88.0], dtype="float32")
    b = np.array([1000.0, -1000.0, 0.0, -88.0], dtype="float32")
    out = paddle.logaddexp(paddle.to_tensor(a), paddle.to_tensor(b)).numpy()
    np.testing.assert_allclose(out, np.logaddexp(a.astype("float64"), b), rtol=1e-6)
    assert np.all(np.isfinite(out))
    # Paddle's logaddexp gradient overflows to 0 for large inputs; compare values there
    check_parity(lambda P, x, y: P.logaddexp(x, y), [a, b], pd, grad=False)
    # (Paddle's gradient at x == y is a subgradient split 0 / 1; use distinct values here)
    check_parity(lambda P, x, y: P.logaddexp(x, y), [a / 100, b / 100 + 0.3], pd)
    t = paddle.to_tensor(a, stop_gradient=False)
    paddle.logaddexp(t, paddle.to_tensor(b)).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), [0.5, 0.5, 0.5, 1.0], rtol=1e-6)
    assert paddle.logaddexp(paddle.to_tensor([1]), paddle.to_tensor([2])).dtype == paddle.float32


@pytest.mark.parity
def test_b66_hypot(pd):
    x = _rand((3, 4), -3, 3, "float32")
    y = _rand((4,), -3, 3, "float32")
    np.testing.assert_allclose(paddle.hypot(paddle.to_tensor(x), paddle.to_tensor(y)).numpy(),
                               np.hypot(x, y), rtol=1e-6)
    check_parity(lambda P, a, b: P.hypot(a, b), [x, y], pd)
    t = paddle.to_tensor([3.0, 5.0])
    assert paddle.hypot_(t, paddle.to_tensor([4.0, 12.0])) is t
    np.testing.assert_allclose(t.numpy(), [5.0, 13.0])


# ---------------------------------------------------------------- multiplex

@pytest.mark.parity
def test_b55_multiplex(pd):
    a = np.arange(12, dtype="float32").reshape(3, 2, 2)
    b = -np.arange(12, dtype="float32").reshape(3, 2, 2)
    c = np.full((3, 2, 2), 7.0, dtype="float32")
    idx = np.array([[0], [2], [0]], dtype="int32")
    out = paddle.multiplex([paddle.to_tensor(v) for v in (a, b, c)], paddle.to_tensor(idx))
    np.testing.assert_array_equal(out.numpy(), np.stack([a[0], c[1], a[2]]))
    check_parity(lambda P, x, y, z: P.multiplex([x, y, z], P.to_tensor(idx)), [a, b, c], pd)
    zeros = paddle.multiplex([paddle.to_tensor(a), paddle.to_tensor(b)],
                             paddle.to_tensor(np.zeros((3, 1), dtype="int32")))
    np.testing.assert_array_equal(zeros.numpy(), a)
    with pytest.raises(IndexError, match="multiplex"):
        paddle.multiplex([paddle.to_tensor(a)], paddle.to_tensor(idx))
    with pytest.raises(ValueError, match="multiplex"):
        paddle.multiplex([paddle.to_tensor(a), paddle.to_tensor(b[:2])], paddle.to_tensor(idx))


# ---------------------------------------------------------------- the rest

@pytest.mark.parity
def test_misc_parity(pd):
    m = _rand((3, 4), -2, 2, "float32")
    check_parity(lambda P, t: P.trace(t), [m], pd)
    check_parity(lambda P, t: P.trace(t, offset=1), [m], pd)
    check_parity(lambda P, t: P.trace(t, offset=-2), [m], pd)
    check_parity(lambda P, t: P.trace(t, 0, 1, 2), [_rand((2, 3, 4), -2, 2, "float32")], pd)
    check_parity(lambda P, a, b: P.add_n([a, b, a]), [m, m * 2], pd)
    x = _rand((2, 3), -1, 1, "float32")
    y = _rand((3, 4), -1, 1, "float32")
    check_parity(lambda P, i, a, b: P.addmm(i, a, b, 0.5, 2.0), [m[:2], x, y], pd)
    check_parity(lambda P, i, a, b: P.addmm(i, a, b), [m[0], x, y], pd)
    check_parity(lambda P, a, b: P.lerp(a, b, 0.3), [m, m * 3], pd)
    check_parity(lambda P, a: P.renorm(a, 2, 0, 1.5), [m], pd)
    check_parity(lambda P, a: P.renorm(a, 1, 1, 2.0), [m], pd)
    check_parity(lambda P, a: P.scale(a, 2.0, 1.0, False), [m], pd)
    check_parity(lambda P, a: P.scale(a, 2.0, 1.0, act="tanh"), [m], pd)
    check_parity(lambda P, a: P.stanh(a, 1.0, 2.0), [m], pd)
    check_parity(lambda P, a: P.logit(a * 0.4 + 0.5, 0.3), [m], pd)
    check_parity(lambda P, a: P.frexp(a), [m], pd)
    i = np.array([1, -2, 3], dtype="int64")
    check_parity(lambda P, a: P.scale(a, 2.5, 1.0), [i], pd, grad=False)
    check_parity(lambda P, a: P.trace(P.reshape(a, [1, 3])), [i], pd, grad=False)


@pytest.mark.parity
def test_nan_to_num_parity(pd):
    for dtype in ("float32", "float64"):
        x = np.array([1.0, np.nan, np.inf, -np.inf], dtype=dtype)
        check_parity(lambda P, t: P.nan_to_num(t), [x], pd)
        check_parity(lambda P, t: P.nan_to_num(t, nan=1.0, posinf=2.0, neginf=-3.0), [x], pd)
    with pytest.raises(TypeError, match="nan_to_num"):
        paddle.nan_to_num(paddle.to_tensor([1, 2]))


def test_increment_inplace():
    x = paddle.to_tensor([1.0])
    y = paddle.increment(x, 2.0)
    assert y is x
    np.testing.assert_allclose(x.numpy(), [3.0])
    i = paddle.to_tensor([1], dtype="int32")
    paddle.increment(i)
    assert i.dtype == paddle.int32 and i.numpy().tolist() == [2]
    with pytest.raises(ValueError, match="increment"):
        paddle.increment(paddle.ones([3]))


def test_frexp_values_and_grad():
    x = np.array([0.0, 8.0, -3.0, 0.3], dtype="float64")
    m, e = paddle.frexp(paddle.to_tensor(x))
    rm, re = np.frexp(x)
    np.testing.assert_array_equal(m.numpy(), rm)
    np.testing.assert_array_equal(e.numpy(), re)
    assert e.dtype == paddle.float64
    gradcheck(lambda t: paddle.frexp(t)[0], [np.array([0.3, 5.0, -3.0])])
    with pytest.raises(TypeError, match="frexp"):
        paddle.frexp(paddle.to_tensor([1, 2]))


def test_compound_gradchecks():
    m = _rand((3, 4), 0.3, 1.5)
    gradcheck(lambda t: paddle.renorm(t, 2.0, 1, 1.0), [m])
    gradcheck(lambda t: paddle.renorm(t, 3.0, 0, 0.5), [m])
    gradcheck(lambda t: paddle.trace(t, 1), [m])
    gradcheck(lambda a, b, c: paddle.addmm(a, b, c, 0.3, 1.7),
              [m[:2], _rand((2, 5)), _rand((5, 4))])
    gradcheck(lambda t: paddle.stanh(t), [m])
    gradcheck(lambda t: paddle.cumulative_trapezoid(t, x=paddle.to_tensor(
        np.array([0.0, 0.5, 2.0, 2.5]))), [m])
    gradcheck(lambda t: paddle.multiplex([t, t * t], paddle.to_tensor([[1], [0], [1]])), [m])


def test_errors_name_the_op():
    with pytest.raises(TypeError, match="abs"):
        paddle.abs(paddle.to_tensor([True]))
    with pytest.raises(ValueError, match="add_n"):
        paddle.add_n([paddle.ones([2]), paddle.ones([2, 1])])
    with pytest.raises(ValueError, match="addmm"):
        paddle.addmm(paddle.ones([2, 2]), paddle.ones([2, 3]), paddle.ones([2, 2]))
    with pytest.raises(ValueError, match="trace"):
        paddle.trace(paddle.ones([3]))
    with pytest.raises(ValueError, match="diff"):
        paddle.diff(paddle.to_tensor(1.0))
    with pytest.raises(TypeError, match="ldexp"):
        paddle.ldexp(paddle.ones([2]), paddle.ones([2]))
    with pytest.raises(TypeError, match="cummax"):
        paddle.cummax(paddle.ones([2]), dtype="float32")
    with pytest.raises(TypeError, match="exp"):
        paddle.exp(None)


def test_operators_attached():
    a = paddle.to_tensor([7, -7])
    np.testing.assert_array_equal((a // 2).numpy(), [3, -4])
    np.testing.assert_array_equal((a % 3).numpy(), [1, 2])
    np.testing.assert_array_equal(abs(a).numpy(), [7, 7])
    np.testing.assert_array_equal((-a).numpy(), [-7, 7])


def test_methods_are_same_functions():
    for n in ("exp", "cumsum", "clip", "trace", "remainder", "floor_mod", "mod"):
        assert getattr(paddle.Tensor, n) is getattr(paddle, n)
    t = paddle.to_tensor([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(t.trace().numpy(), 5.0)
    np.testing.assert_allclose(t.cumsum(1).numpy(), [[1, 3], [3, 7]])


# ---------------------------------------------------------------- devices

DEVICE_CASES = {
    "exp": (lambda P, t: P.exp(t), np.exp),
    "logaddexp": (lambda P, t: P.logaddexp(t, t * 2), lambda a: np.logaddexp(a, a * 2)),
    "cumsum": (lambda P, t: P.cumsum(t, 1), lambda a: np.cumsum(a, 1)),
    "cumprod": (lambda P, t: P.cumprod(t, 1), lambda a: np.cumprod(a, 1)),
    "cummax": (lambda P, t: P.cummax(t, 1)[0], lambda a: np.maximum.accumulate(a, 1)),
    "logcumsumexp": (lambda P, t: P.logcumsumexp(t, 0),
                     lambda a: np.log(np.cumsum(np.exp(a), 0))),
    "clip": (lambda P, t: P.clip(t, -0.5, 0.5), lambda a: np.clip(a, -0.5, 0.5)),
    "trace": (lambda P, t: P.trace(t), np.trace),
    "diff": (lambda P, t: P.diff(t), lambda a: np.diff(a)),
    "round": (lambda P, t: P.round(t * 3), lambda a: np.trunc(a * 3 + np.copysign(0.5, a))),
    "renorm": (lambda P, t: P.renorm(t, 2.0, 0, 0.5),
               lambda a: a * np.minimum(1, 0.5 / np.linalg.norm(a, axis=1, keepdims=True))),
}


@pytest.mark.parametrize("case", sorted(DEVICE_CASES))
def test_ops_on_device(case, device):
    fn, ref = DEVICE_CASES[case]
    x = _rand((3, 4), -1, 1)
    t = paddle.to_tensor(x, stop_gradient=False)
    out = fn(paddle, t)
    assert out.place == t.place
    np.testing.assert_allclose(out.numpy(), ref(x), rtol=1e-10, atol=1e-12)
    out.sum().backward()
    assert t.grad is not None and t.grad.shape == [3, 4]
