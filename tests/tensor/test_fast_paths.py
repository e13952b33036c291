"""Fast paths of the common small ops (plain-int shapes/axes, Tensors of one dtype) against the
general paths they skip: same values, dtypes, shapes, views, gradients and errors."""

import numpy as np
import pytest

import paddle_hl as paddle

RNG = np.random.default_rng(7)


def _t(shape, dtype="float32", grad=False):
    return paddle.to_tensor(RNG.standard_normal(shape).astype(dtype), stop_gradient=not grad)


@pytest.mark.cpu
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("axis", [None, 0, -1, 1, [0, 1], (1,), np.int64(1)])
def test_mean_matches_numpy_mean(dtype, axis):
    a = RNG.standard_normal((7, 13)).astype(dtype)
    ax = tuple(axis) if isinstance(axis, list) else axis
    ref = np.mean(a.astype(np.float32) if dtype == "float16" else a, axis=ax).astype(dtype)
    out = paddle.mean(paddle.to_tensor(a), axis=axis)
    assert out.dtype == paddle.to_tensor(a).dtype
    np.testing.assert_array_equal(out.numpy(), ref)  # bit-exact: sum / n == np.mean


def test_mean_int_and_complex_and_grad():
    x = paddle.to_tensor(np.arange(12).reshape(3, 4))
    np.testing.assert_allclose(paddle.mean(x, axis=1).numpy(), [1.5, 5.5, 9.5])
    assert paddle.mean(x).dtype == paddle.float32
    c = paddle.to_tensor(np.array([1 + 2j, 3 - 1j], dtype=np.complex64))
    np.testing.assert_allclose(paddle.mean(c).numpy(), np.mean(c.numpy()))
    g = _t((3, 4), grad=True)
    paddle.mean(g, axis=0).sum().backward()
    np.testing.assert_allclose(g.grad.numpy(), np.full((3, 4), 1 / 3, np.float32), rtol=1e-6)


@pytest.mark.parametrize("axis", [1, -2, (0, 1), [1], None])
def test_sum_max_axis_kinds(axis):
    a = RNG.standard_normal((4, 5)).astype(np.float32)
    ax = tuple(axis) if isinstance(axis, list) else axis
    np.testing.assert_allclose(paddle.sum(paddle.to_tensor(a), axis=axis).numpy(),
                               a.sum(axis=ax), rtol=1e-6)
    np.testing.assert_array_equal(paddle.max(paddle.to_tensor(a), axis=axis).numpy(),
                                  a.max(axis=ax))


def test_reduction_axis_errors_unchanged():
    x = _t((2, 3))
    with pytest.raises(ValueError, match="out of range"):
        paddle.sum(x, axis=2)
    with pytest.raises(TypeError, match="must be an int"):
        paddle.sum(x, axis=1.5)
    with pytest.raises(TypeError, match="must be an int"):
        paddle.max(x, axis=True)
    assert paddle.sum(paddle.to_tensor([[True, False]]), axis=1).dtype == paddle.int64
    assert paddle.sum(paddle.to_tensor(np.float32(2.0)), axis=0).shape == []


def test_reshape_fast_and_general_paths():
    x = _t((4, 6))
    assert x.reshape([3, 8]).shape == [3, 8]
    assert x.reshape((2, 12)).shape == [2, 12]
    assert x.reshape([0, -1]).shape == [4, 6]
    assert x.reshape([np.int64(6), 4]).shape == [6, 4]
    assert x.reshape(paddle.to_tensor([8, 3])).shape == [8, 3]
    assert x.reshape([paddle.to_tensor(2), 12]).shape == [2, 12]
    with pytest.raises(ValueError, match="cannot reshape"):
        x.reshape([5, 5])
    with pytest.raises(TypeError, match="must contain ints"):
        x.reshape([2.0, 12])
    v = x.reshape([24])
    v[0] = 100.0  # a view: writes go through
    assert float(x[0, 0]) == 100.0
    g = _t((2, 3), grad=True)
    g.reshape([3, 2]).sum().backward()
    np.testing.assert_array_equal(g.grad.numpy(), np.ones((2, 3), np.float32))


def test_unsqueeze_flatten_paths():
    x = _t((2, 3))
    assert x.unsqueeze(0).shape == [1, 2, 3]
    assert x.unsqueeze(-1).shape == [2, 3, 1]
    assert x.unsqueeze([0, 3]).shape == [1, 2, 3, 1]
    assert x.unsqueeze(np.int64(1)).shape == [2, 1, 3]
    assert x.unsqueeze(paddle.to_tensor(2)).shape == [2, 3, 1]
    with pytest.raises(ValueError, match="out of range"):
        x.unsqueeze(4)
    assert x.flatten().shape == [6]
    assert _t((2, 3, 4)).flatten(1).shape == [2, 12]
    assert paddle.to_tensor(1.0).flatten().shape == [1]
    g = _t((2, 3), grad=True)
    (g.unsqueeze(1).flatten() * 2).sum().backward()
    np.testing.assert_array_equal(g.grad.numpy(), np.full((2, 3), 2, np.float32))


def test_expand_paths():
    a = RNG.standard_normal((1, 3)).astype(np.float32)
    x = paddle.to_tensor(a)
    out = x.expand([4, 2, 3])
    np.testing.assert_array_equal(out.numpy(), np.broadcast_to(a, (4, 2, 3)))
    assert out.numpy().flags.c_contiguous
    assert x.expand([-1, 3]).shape == [1, 3]
    assert x.expand((np.int64(2), 3)).shape == [2, 3]
    assert x.expand([0, 3]).shape == [0, 3]
    with pytest.raises(ValueError, match=r"cannot expand x of shape \[1, 3\]"):
        x.expand([2, 4])
    with pytest.raises(ValueError, match=r"fewer dims than x's shape \[1, 3\]"):
        x.expand([3])
    g = _t((1, 3), grad=True)
    g.expand([5, 3]).sum().backward()
    np.testing.assert_array_equal(g.grad.numpy(), np.full((1, 3), 5, np.float32))


def test_concat_stack_mixed_inputs():
    a = _t((2, 3))
    b = _t((2, 3), "float64")
    out = paddle.concat([a, b])
    assert out.dtype == paddle.float64 and out.shape == [4, 3]
    out = paddle.concat([a, a.numpy()], axis=1)  # a non-Tensor element takes the general path
    assert out.shape == [2, 6]
    assert paddle.stack([a, b]).dtype == paddle.float64
    with pytest.raises(ValueError, match=r"x\[1\] has shape \[2, 4\]"):
        paddle.concat([a, _t((2, 4))])
    with pytest.raises(ValueError, match=r"x\[1\] has shape \[2, 3, 1\]"):
        paddle.concat([a, _t((2, 3, 1))], axis=1)
    with pytest.raises(ValueError, match="same shape"):
        paddle.stack([a, _t((3, 2))])
    g = _t((2, 3), grad=True)
    paddle.concat([g, g * 2], axis=1).sum().backward()
    np.testing.assert_array_equal(g.grad.numpy(), np.full((2, 3), 3, np.float32))


@pytest.mark.parametrize("sections", [2, [1, 3], [2, -1], [0, 4], (4,)])
def test_split_sections(sections):
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    parts = paddle.split(paddle.to_tensor(a), sections, axis=1)
    sizes = [4 // sections] * sections if isinstance(sections, int) else \
        [4 - sum(s for s in sections if s != -1) if s == -1 else s for s in sections]
    ref = np.split(a, np.cumsum(sizes)[:-1], axis=1)
    assert len(parts) == len(ref)
    for p, r in zip(parts, ref):
        np.testing.assert_array_equal(p.numpy(), r)
        assert p.numpy().base is None or not np.shares_memory(p.numpy(), a)


def test_argmax_dtypes_and_nan():
    a = np.array([[1.0, np.nan, 3.0], [5.0, 2.0, 0.0]], np.float32)
    x = paddle.to_tensor(a)
    np.testing.assert_array_equal(x.argmax(axis=1).numpy(), [2, 0])
    np.testing.assert_array_equal(x.argmin(axis=1).numpy(), [0, 2])
    assert x.argmax(axis=1).dtype == paddle.int64
    assert x.argmax(axis=1, dtype="int32").dtype == paddle.int32
    assert x.argmax(axis=1, dtype=paddle.int64).dtype == paddle.int64
    assert x.argmax(axis=0, keepdim=True).shape == [1, 3]
    with pytest.raises(ValueError, match="int32 or int64"):
        x.argmax(axis=1, dtype="float32")


def test_matmul_paths():
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    b = RNG.standard_normal((4, 2)).astype(np.float64)
    out = paddle.matmul(paddle.to_tensor(a), paddle.to_tensor(b))  # mixed dtypes promote
    assert out.dtype == paddle.float64
    np.testing.assert_allclose(out.numpy(), a.astype(np.float64) @ b, rtol=1e-12)
    v = paddle.to_tensor(a[0])
    assert paddle.matmul(v, paddle.to_tensor(a.T)).shape == [3]
    assert paddle.matmul(_t((2, 3, 4)), _t((4, 5))).shape == [2, 3, 5]
    with pytest.raises(ValueError, match="batch dims"):
        paddle.matmul(_t((2, 3, 4)), _t((3, 4, 5)))
    with pytest.raises(ValueError, match="inner dims"):
        paddle.matmul(_t((3, 4)), _t((3, 4)))
