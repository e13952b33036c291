"""Comparison, logical, bitwise and predicate ops (paddle_hl/tensor/logic.py) against Paddle
2.6.2 and NumPy."""

import numpy as np
import pytest

import paddle_hl as paddle
from tests.op_check import check_op, check_parity

RNG = np.random.default_rng(7)
CMP = ["equal", "not_equal", "greater_than", "greater_equal", "less_than", "less_equal"]
NP_CMP = {"equal": np.equal, "not_equal": np.not_equal, "greater_than": np.greater,
          "greater_equal": np.greater_equal, "less_than": np.less, "less_equal": np.less_equal}
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


def _arr(shape, dtype):
    a = RNG.integers(0, 3, size=shape)
    return (a > 0) if dtype == "bool" else a.astype(dtype)


# ---------------------------------------------------------------- comparisons

@pytest.mark.parity
@pytest.mark.parametrize("op", CMP)
@pytest.mark.parametrize("dtype", DTYPES)
def test_comparison_parity(pd, op, dtype):
    """every dtype including int16; broadcasting as NumPy."""
    x, y = _arr((3, 4), dtype), _arr((3, 4), dtype)
    check_parity(lambda P, a, b: getattr(P, op)(a, b), [x, y], pd, grad=False)
    check_parity(lambda P, a, b: getattr(P, op)(a, b), [_arr((3, 1), dtype),
                                                        _arr((1, 4), dtype)], pd, grad=False)


@pytest.mark.parity
def test_comparison_broadcast_b58(pd):
    x = np.array([[1], [2], [3]], "int64")
    y = np.array([[0, 1, 2, 3]], "int64")
    res = check_parity(lambda P, a, b: P.less_than(a, b), [x, y], pd, grad=False)
    assert res["hl"][3][0] == [3, 4] and res["hl"][2][0] == "bool"


@pytest.mark.parametrize("op", CMP)
@pytest.mark.parametrize("shapes", [((), ()), ((0, 2), (2,)), ((2, 3), ()), ((4,), (2, 1))],
                         ids=str)
def test_comparison_shapes_and_scalars(op, shapes):
    a = RNG.standard_normal(shapes[0]).astype("float32")
    b = RNG.standard_normal(shapes[1]).astype("float32")
    check_op(lambda P, x, y: getattr(P, op)(x, y), NP_CMP[op], [a, b])
    check_op(lambda P, x: getattr(P, op)(x, 0.25), lambda x: NP_CMP[op](x, 0.25), [a])


def test_comparison_mixed_dtypes_and_float_scalar():
    x = paddle.to_tensor([1, 2])
    # a float scalar compares exactly against an integer tensor (as the == operator does)
    np.testing.assert_array_equal((x == 1.5).numpy(), [False, False])
    np.testing.assert_array_equal((x < 1.5).numpy(), [True, False])
    np.testing.assert_array_equal((1 < x).numpy(), [False, True])
    # the operator promotes an int tensor against a float one; the function refuses, as Paddle
    np.testing.assert_array_equal((x == paddle.to_tensor([1., 3.])).numpy(), [True, False])
    with pytest.raises(ValueError, match=r"equal: .*int64.*float32"):
        paddle.equal(x, paddle.to_tensor([1., 3.]))
    np.testing.assert_array_equal(paddle.greater_than(x.astype("int32"), x).numpy(),
                                  [False, False])
    # int8 against a scalar outside its range
    np.testing.assert_array_equal((paddle.to_tensor([1, 2], dtype="int8") < 1000).numpy(),
                                  [True, True])


def test_comparison_result_has_no_grad():
    x = paddle.to_tensor([1., 2.], stop_gradient=False)
    for op in CMP:
        out = getattr(paddle, op)(x, paddle.to_tensor([1., 3.]))
        assert out.dtype == paddle.bool and out.stop_gradient


def test_operators():
    x = paddle.to_tensor([1., 2., 3.])
    y = paddle.to_tensor([3., 2., 1.])
    for res, ref in ((x == y, [False, True, False]), (x != y, [True, False, True]),
                     (x < y, [True, False, False]), (x <= y, [True, True, False]),
                     (x > y, [False, False, True]), (x >= y, [False, True, True])):
        assert res.dtype == paddle.bool
        np.testing.assert_array_equal(res.numpy(), ref)
    b = paddle.to_tensor([True, False])
    np.testing.assert_array_equal((~b).numpy(), [False, True])
    np.testing.assert_array_equal((b & paddle.to_tensor([True, True])).numpy(), [True, False])
    np.testing.assert_array_equal((b | False).numpy(), [True, False])
    np.testing.assert_array_equal((True ^ b).numpy(), [False, True])
    i = paddle.to_tensor([6, 5])
    np.testing.assert_array_equal((i & 3).numpy(), [2, 1])
    np.testing.assert_array_equal((3 | i).numpy(), [7, 7])
    np.testing.assert_array_equal((~i).numpy(), [-7, -6])


def test_comparison_errors():
    x = paddle.to_tensor([1., 2.])
    with pytest.raises(TypeError, match="None"):
        paddle.equal(x, None)
    with pytest.raises(ValueError, match=r"\[2\].*\[3\]"):
        paddle.less_than(x, paddle.to_tensor([1., 2., 3.]))
    with pytest.raises(TypeError, match="complex"):
        paddle.greater_than(paddle.to_tensor([1 + 1j]), paddle.to_tensor([1 + 0j]))


# ---------------------------------------------------------------- inplace

INPLACE_BOOL = ["equal_", "not_equal_", "greater_than_", "greater_equal_", "less_than_",
                "less_equal_", "logical_and_", "logical_or_", "logical_xor_"]


@pytest.mark.parametrize("name", INPLACE_BOOL)
def test_inplace_bool_ops_b28(name):
    base = np.array([1., 0., 3.], "float32")
    other = np.array([1., 2., 0.], "float32")
    x = paddle.to_tensor(base)
    v0 = x.inplace_version
    out = getattr(x, name)(paddle.to_tensor(other))
    assert out is x
    assert x.dtype == paddle.bool and x.inplace_version == v0 + 1
    ref = getattr(paddle, name[:-1])(paddle.to_tensor(base), paddle.to_tensor(other))
    np.testing.assert_array_equal(x.numpy(), ref.numpy())
    if name not in ("not_equal_", "logical_xor_"):  # Tensor methods only in Paddle 2.6
        x2 = paddle.to_tensor(base)
        assert getattr(paddle, name)(x2, paddle.to_tensor(other)) is x2


def test_inplace_bool_errors():
    x = paddle.to_tensor([1., 2.])
    with pytest.raises(ValueError, match="shape"):
        x.less_than_(paddle.to_tensor([[1.], [3.]]))
    leaf = paddle.to_tensor([1., 2.], stop_gradient=False)
    with pytest.raises((RuntimeError, ValueError), match="Leaf"):
        leaf.equal_(paddle.to_tensor([1., 2.]))


def test_logical_not_and_bitwise_inplace():
    x = paddle.to_tensor([3., 0.])
    assert paddle.logical_not_(x) is x
    np.testing.assert_array_equal(x.numpy(), [False, True])
    i = paddle.to_tensor([5, 3])
    v0 = i.inplace_version
    assert i.bitwise_and_(paddle.to_tensor([1, 2])) is i
    np.testing.assert_array_equal(i.numpy(), [1, 2])
    assert i.dtype == paddle.int64 and i.inplace_version == v0 + 1
    paddle.bitwise_or_(i, 4)
    np.testing.assert_array_equal(i.numpy(), [5, 6])
    i.bitwise_xor_(paddle.to_tensor([1, 1]))
    np.testing.assert_array_equal(i.numpy(), [4, 7])
    paddle.bitwise_not_(i)
    np.testing.assert_array_equal(i.numpy(), [-5, -8])


# ---------------------------------------------------------------- equal_all / allclose / isclose

@pytest.mark.parity
def test_equal_all_parity(pd):
    a = np.array([1., 2.], "float32")
    check_parity(lambda P, x, y: P.equal_all(x, y), [a, a.copy()], pd, grad=False)
    check_parity(lambda P, x, y: P.equal_all(x, y), [a, a + 1], pd, grad=False)
    check_parity(lambda P, x, y: P.equal_all(x, y), [a, np.array([1., 2., 3.], "float32")], pd,
                 grad=False)
    check_parity(lambda P, x, y: P.equal_all(x, y), [a[None], a], pd, grad=False)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("equal_nan", [False, True])
def test_isclose_allclose_parity(pd, dtype, equal_nan):
    x = np.array([1., np.nan, np.inf, -np.inf, 1e-9, 2.0, 0.], dtype)
    y = np.array([1.00001, np.nan, np.inf, np.inf, 0., 2.0000001, 1e-7], dtype)
    for rtol, atol in ((1e-5, 1e-8), (1e-3, 0.0), (0.0, 1e-6)):
        kw = dict(rtol=rtol, atol=atol, equal_nan=equal_nan)
        check_parity(lambda P, a, b: P.isclose(a, b, **kw), [x, y], pd, grad=False)
        check_parity(lambda P, a, b: P.allclose(a, b, **kw), [x, y], pd, grad=False)
        check_parity(lambda P, a, b: P.allclose(a, b, **kw), [x[[0, 4, 5]], y[[0, 4, 5]]], pd,
                     grad=False)


def test_allclose_details():
    x = paddle.to_tensor([1., 2.])
    out = paddle.allclose(x, paddle.to_tensor([1., 2.000001]), rtol=paddle.to_tensor(1e-5))
    assert out.shape == [] and out.dtype == paddle.bool and bool(out)
    # broadcasting
    assert bool(paddle.allclose(paddle.to_tensor([[1., 2.]]), x))
    np.testing.assert_array_equal(paddle.isclose(paddle.to_tensor([[1.], [2.]]), x).numpy(),
                                  [[True, False], [False, True]])
    with pytest.raises(TypeError, match="float"):
        paddle.allclose(paddle.to_tensor([1, 2]), paddle.to_tensor([1, 2]))
    assert x.allclose(x).item() and x.isclose(x).numpy().all()


# ---------------------------------------------------------------- isnan / isinf / isfinite

@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("op", ["isnan", "isinf", "isfinite"])
def test_isnan_family_parity(pd, dtype, op):
    x = np.array([1., np.nan, np.inf, -np.inf, 0.]) if dtype.startswith("float") else \
        np.array([1, -2, 0])
    check_parity(lambda P, a: getattr(P, op)(a), [x.astype(dtype)], pd, grad=False)


def test_isnan_bfloat16_and_0d():
    x = paddle.to_tensor([1., np.nan, np.inf]).astype("bfloat16")
    np.testing.assert_array_equal(paddle.isnan(x).numpy(), [False, True, False])
    np.testing.assert_array_equal(paddle.isfinite(x).numpy(), [True, False, False])
    out = paddle.isinf(paddle.to_tensor(np.inf))
    assert out.shape == [] and bool(out)
    assert paddle.isnan(paddle.to_tensor([1.], stop_gradient=False)).stop_gradient


# ---------------------------------------------------------------- logical / bitwise

@pytest.mark.parity
@pytest.mark.parametrize("op", ["logical_and", "logical_or", "logical_xor"])
@pytest.mark.parametrize("dtype", ["bool", "int32", "int64", "float32", "float64"])
def test_logical_parity(pd, op, dtype):
    check_parity(lambda P, a, b: getattr(P, op)(a, b), [_arr((3, 4), dtype),
                                                        _arr((3, 4), dtype)], pd, grad=False)
    check_parity(lambda P, a, b: getattr(P, op)(a, b), [_arr((2, 1), dtype),
                                                        _arr((3,), dtype)], pd, grad=False)
    check_parity(lambda P, a: P.logical_not(a), [_arr((3, 4), dtype)], pd, grad=False)


def test_logical_scalars_and_out():
    x = paddle.to_tensor([1, 0])
    np.testing.assert_array_equal(paddle.logical_and(x, True).numpy(), [True, False])
    np.testing.assert_array_equal(paddle.logical_or(paddle.to_tensor(0.), 0).numpy(), False)
    out = paddle.zeros([2], dtype="bool")
    res = paddle.logical_or(x, paddle.to_tensor([False, True]), out=out)
    assert res is out
    np.testing.assert_array_equal(out.numpy(), [True, True])
    res = paddle.logical_not(x, out=out)
    np.testing.assert_array_equal(out.numpy(), [False, True])


@pytest.mark.parity
@pytest.mark.parametrize("op", ["bitwise_and", "bitwise_or", "bitwise_xor"])
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64"])
def test_bitwise_parity(pd, op, dtype):
    def arr(shape):
        a = RNG.integers(-50, 50, size=shape)
        return (a > 0) if dtype == "bool" else a.astype(dtype)

    check_parity(lambda P, a, b: getattr(P, op)(a, b), [arr((3, 4)), arr((3, 4))], pd,
                 grad=False)
    check_parity(lambda P, a, b: getattr(P, op)(a, b), [arr((3, 1)), arr((4,))], pd,
                 grad=False)
    check_parity(lambda P, a: P.bitwise_not(a), [arr((5,))], pd, grad=False)


def test_bitwise_errors_and_promotion():
    with pytest.raises(TypeError, match="bitwise_and.*float32"):
        paddle.bitwise_and(paddle.to_tensor([1.]), paddle.to_tensor([1.]))
    with pytest.raises(TypeError, match="bitwise_not"):
        ~paddle.to_tensor([1.5])
    with pytest.raises(TypeError, match="integer"):
        paddle.bitwise_or(paddle.to_tensor([1]), 1.5)
    out = paddle.bitwise_or(paddle.to_tensor([1], dtype="int32"), paddle.to_tensor([2]))
    assert out.dtype == paddle.int64
    np.testing.assert_array_equal(out.numpy(), [3])
    with pytest.raises(ValueError):  # the inplace result cannot grow x
        paddle.to_tensor([1]).bitwise_and_(paddle.to_tensor([[1], [2]]))


# ---------------------------------------------------------------- predicates

def test_predicates():
    f = paddle.to_tensor([1.])
    assert paddle.is_tensor(f) is True and paddle.is_tensor([1.]) is False
    assert paddle.is_floating_point(f) is True
    assert paddle.is_floating_point(f.astype("bfloat16")) is True
    assert paddle.is_floating_point(paddle.to_tensor([1])) is False
    assert paddle.is_integer(paddle.to_tensor([1], dtype="uint8")) is True
    assert paddle.is_integer(paddle.to_tensor([True])) is False
    assert paddle.is_complex(paddle.to_tensor([1 + 2j])) is True
    assert paddle.is_complex(f) is False
    assert f.is_floating_point() and not f.is_integer() and not f.is_complex()
    for fn in (paddle.is_complex, paddle.is_floating_point, paddle.is_integer):
        with pytest.raises(TypeError, match="(?i)expected a Tensor"):
            fn(np.array([1.]))


@pytest.mark.parity
def test_is_empty_parity(pd):
    for shape in ([0, 2], [1, 2], []):
        check_parity(lambda P, a: P.is_empty(a), [np.zeros(shape, "float32")], pd, grad=False)


def test_is_same_shape():
    x = paddle.to_tensor([1., 2.])
    assert x.is_same_shape(paddle.to_tensor([3, 4])) is True
    assert x.is_same_shape(paddle.to_tensor([[3, 4]])) is False
    with pytest.raises(ValueError, match="Tensor"):
        x.is_same_shape([1, 2])
    assert not hasattr(paddle, "is_same_shape")


def test_methods_are_attached():
    for name in ("equal", "less_than_", "not_equal_", "logical_xor_", "bitwise_not", "isnan",
                 "allclose", "equal_all", "is_empty"):
        assert callable(getattr(paddle.Tensor, name))
    assert paddle.Tensor.equal is paddle.equal
    assert not hasattr(paddle, "not_equal_") and not hasattr(paddle, "logical_xor_")


def test_logic_on_device(device):
    """Comparisons and logical ops run on the current device (gpu skips without CuPy)."""
    x = paddle.to_tensor([[1., 2.], [3., np.nan]])
    y = paddle.to_tensor([2., 2.])
    out = x < y
    assert out.place == x.place
    np.testing.assert_array_equal(out.numpy(), [[True, False], [False, False]])
    np.testing.assert_array_equal(paddle.isnan(x).numpy(), [[False, False], [False, True]])
    np.testing.assert_array_equal(paddle.logical_xor(x > 1, y > 1).numpy(),
                                  [[True, False], [False, True]])
    assert bool(paddle.allclose(x, x, equal_nan=True))
    np.testing.assert_array_equal((paddle.to_tensor([6]) & 3).numpy(), [2])
