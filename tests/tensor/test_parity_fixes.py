"""astype/cast, integer divide, maximum/minimum with NaN and as_strided, against Paddle 2.6.2."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import paddle_hl


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float16", "float32", "int64", "bfloat16"])
def test_astype_to_own_dtype_is_a_copy_parity(pd, dtype):
    for lib in (pd, paddle_hl):
        x = lib.to_tensor([1.0, 2.0]).astype(dtype)
        y = x.astype(dtype)
        z = lib.cast(x, dtype)
        assert y is not x and z is not x
        y[0] = 5
        z[1] = 7
        np.testing.assert_array_equal(x.astype("float32").numpy(), [1.0, 2.0])


@pytest.mark.parity
def test_astype_float16_round_trips_parity(pd):
    # values float16 holds exactly, and float16 values cast to every dtype and back
    rng = np.random.RandomState(0)
    h = (rng.randn(500) * 10 ** rng.uniform(-6, 4, 500)).astype("float16")
    h = np.concatenate([h, np.array([0, -0.0, 65504, -65504, 6e-8, np.inf, -np.inf, np.nan],
                                    "float16")])
    for src in ("float32", "float64"):
        for lib in (pd, paddle_hl):
            x = lib.to_tensor(h.astype(src))
            back = x.astype("float16")
            assert str(back.dtype) == "paddle.float16"
            np.testing.assert_array_equal(back.numpy(), h)
            np.testing.assert_array_equal(back.astype(src).numpy(), h.astype(src))
    for dst in ("float32", "float64", "int32", "int64", "bool", "int16"):
        a = pd.to_tensor(h).astype(dst)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no NumPy cast warnings for inf/nan
            b = paddle_hl.to_tensor(h).astype(dst)
        assert str(b.dtype) == str(a.dtype)
        if dst in ("int32", "int64", "int16"):
            finite = np.isfinite(h)  # inf/nan to int is undefined in C
            np.testing.assert_array_equal(b.numpy()[finite], a.numpy()[finite])
        else:
            np.testing.assert_array_equal(b.numpy(), a.numpy())


@pytest.mark.parity
def test_astype_float16_rounding_differs_only_by_paddle_cpu_truncation(pd):
    # Paddle's CPU kernel truncates toward zero; ours rounds to nearest (IEEE, as Paddle's
    # GPU kernel): the two are at most one float16 ulp apart, and ours is the nearest value
    rng = np.random.RandomState(1)
    v = (rng.randn(2000) * 10 ** rng.uniform(-3, 4, 2000)).astype("float32")
    a = pd.to_tensor(v).astype("float16").numpy()
    b = paddle_hl.to_tensor(v).astype("float16").numpy()
    np.testing.assert_array_equal(b, v.astype("float16"))
    ulp = np.abs(np.spacing(np.abs(a)))
    assert np.all(np.abs(b.astype("float64") - a.astype("float64")) <= ulp.astype("float64"))
    assert np.all(np.abs(b.astype("float64") - v) <= np.abs(a.astype("float64") - v))


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["int32", "int64", "int16", "int8", "uint8"])
def test_integer_divide_truncates_parity(pd, dtype):
    a = np.array([7, -7, 7, -7, 0, 9, -1, 100], "int64")
    b = np.array([2, 2, -2, -2, 3, 3, 5, 7], "int64")
    if dtype == "uint8":
        a, b = np.abs(a), np.abs(b)
    res = {}
    for lib in (pd, paddle_hl):
        x, y = lib.to_tensor(a.astype(dtype)), lib.to_tensor(b.astype(dtype))
        r1, r2, r3 = lib.divide(x, y), x.divide(y), x / y
        res[lib.__name__] = [(str(r.dtype), r.numpy().tolist()) for r in (r1, r2)] + [
            (str(r3.dtype), r3.numpy())]
    assert res["paddle_hl"][:2] == res["paddle"][:2]
    assert res["paddle_hl"][2][0] == res["paddle"][2][0] == "paddle.float32"
    np.testing.assert_allclose(res["paddle_hl"][2][1], res["paddle"][2][1], rtol=1e-6)


@pytest.mark.parity
def test_integer_divide_by_zero_raises_parity(pd):
    for lib in (pd, paddle_hl):
        with pytest.raises(Exception, match="(?i)division by zero"):
            lib.divide(lib.to_tensor([7, 1]), lib.to_tensor([0, 1]))


@pytest.mark.parity
@pytest.mark.parametrize("fn", ["maximum", "minimum"])
def test_maximum_minimum_nan_parity(pd, fn):
    x = np.array([np.nan, 1.0, 3.0, np.nan, 2.0, 1.0, np.inf, -np.inf, 5.0], "float32")
    y = np.array([1.0, np.nan, 3.0, np.nan, 1.0, 2.0, np.nan, np.nan, -np.inf], "float32")
    res = {}
    for lib in (pd, paddle_hl):
        a = lib.to_tensor(x, stop_gradient=False)
        b = lib.to_tensor(y, stop_gradient=False)
        out = getattr(lib, fn)(a, b)
        (out * lib.to_tensor(np.arange(1, 10, dtype="float32"))).sum().backward()
        scal = getattr(lib, fn)(lib.to_tensor(x[:3]), lib.to_tensor(np.float32(0.5)))
        res[lib.__name__] = (out.numpy(), a.grad.numpy(), b.grad.numpy(), scal.numpy())
    for p, h in zip(res["paddle"], res["paddle_hl"]):
        np.testing.assert_array_equal(h, p)


@pytest.mark.parity
def test_as_strided_offset_in_bytes_parity(pd):
    cases = [([3, 4], [4, 1], 0), ([2, 2], [1, 3], 4), ([4], [2], 0), ([2], [4], 4),
             ([2, 3], [0, 1], 8), ([3, 2], [2, 1], 8)]
    for shape, stride, offset in cases:
        outs = []
        for lib in (pd, paddle_hl):
            x = lib.arange(12, dtype="float32")
            outs.append(lib.as_strided(x, shape, stride, offset).numpy())
        np.testing.assert_array_equal(outs[1], outs[0], err_msg=str((shape, stride, offset)))
    outs = [lib.as_strided(lib.arange(6, dtype="int64"), [2], [2], 16).numpy()
            for lib in (pd, paddle_hl)]
    np.testing.assert_array_equal(outs[1], outs[0])


@pytest.mark.parity
def test_as_strided_is_a_view_parity(pd):
    for lib in (pd, paddle_hl):
        x = lib.arange(12, dtype="float32").reshape([3, 4])
        lib.as_strided(x, [2, 2], [4, 1], 4)[0, 0] = 100.0
        assert x.numpy()[0, 1] == 100.0


def test_as_strided_offset_checks():
    x = paddle_hl.arange(6, dtype="float32")
    with pytest.raises(ValueError, match="multiple of the element size"):
        paddle_hl.as_strided(x, [2], [1], 2)
    with pytest.raises(ValueError, match="beyond the 6 elements"):
        paddle_hl.as_strided(x, [3], [2], 8)


def test_as_strided_overlapping_gradients_add_up():
    # Paddle 2.6.2 keeps one overlapping contribution ([1, 3, 5, 6, 0, 0]); the sum is right
    x = paddle_hl.arange(6, dtype="float32")
    x.stop_gradient = False
    w = paddle_hl.to_tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    (paddle_hl.as_strided(x, [3, 2], [1, 1]) * w).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 5.0, 9.0, 6.0, 0.0, 0.0])
