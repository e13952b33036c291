"""Tensor ``__getitem__`` / ``__setitem__``: views, NumPy result shapes, gradients."""

import numpy as np
import pytest

import paddle_hl as paddle
from tests.op_check import check_parity, gradcheck

rng = np.random.default_rng(1)
X = rng.standard_normal((3, 4, 5))
MASK = rng.random((3, 4)) > 0.5

# each index is given as a function of the library, so tensor indices are built by each
READS = {
    "int": lambda P: 1,
    "neg_int": lambda P: -1,
    "int_int": lambda P: (1, 2),
    "all_ints": lambda P: (1, 2, 3),
    "slice": lambda P: slice(1, 3),
    "slice_step": lambda P: (slice(None), slice(None, None, 2)),
    "slice_neg_step": lambda P: (slice(None, None, -1), slice(3, 0, -2)),
    "none_ellipsis": lambda P: (None, Ellipsis, 1),
    "ellipsis_none": lambda P: (Ellipsis, None),
    "tensor_0d": lambda P: P.to_tensor(1),
    "list": lambda P: [0, 2],
    "list_slice": lambda P: ([0, 2], slice(1, 3)),
    "slice_list": lambda P: (slice(None), [1, 0]),
    "slice_from_list": lambda P: (slice(1, None), [0, 1]),
    "lists_broadcast": lambda P: ([[0, 1]], [[1], [2]]),
    "split_advanced": lambda P: ([0, 2], slice(None), [1, 3]),
    "int_tensor": lambda P: P.to_tensor([[0, 2], [1, 1]]),
    "repeated": lambda P: P.to_tensor([0, 0, 2]),
    "mask": lambda P: P.to_tensor(MASK),
    "mask_list": lambda P: [True, False, True],
    "mask_then_slice": lambda P: (P.to_tensor([True, False, True]), slice(1, 3)),
    "mask_all_false": lambda P: P.to_tensor(np.zeros((3, 4), bool)),
    "bool_0d_true": lambda P: P.to_tensor(True),
    "bool_0d_false": lambda P: P.to_tensor(False),
    "empty_slice": lambda P: slice(2, 2),
    "empty_slice_end": lambda P: slice(3, 3),
    "full_slice": lambda P: slice(None),
    "tail_slice": lambda P: slice(2, None),
    "tensor_slice_bounds": lambda P: slice(P.to_tensor(1), P.to_tensor(3)),
}

# empty results: paddle_hl's sum refuses empty tensors, so check_parity cannot form the
# weighted-sum gradient; values and shapes are still compared
NO_GRAD_PARITY = {"mask_all_false", "bool_0d_false", "empty_slice", "empty_slice_end"}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(READS))
def test_getitem_parity(name, pd):
    """every index kind gives Paddle's (NumPy's) values, shapes and gradients."""
    check_parity(lambda P, x: x[READS[name](P)], [X], pd, grad=name not in NO_GRAD_PARITY)


@pytest.mark.parametrize("name", sorted(READS))
def test_getitem_numpy(name, device):
    def as_np(i):
        if isinstance(i, paddle.Tensor):
            return i.numpy()
        if isinstance(i, slice):
            return slice(*(int(v) if isinstance(v, paddle.Tensor) else v
                           for v in (i.start, i.stop, i.step)))
        if isinstance(i, tuple):
            return tuple(as_np(e) for e in i)
        return np.asarray(i) if isinstance(i, list) else i

    idx = READS[name](paddle)
    out = paddle.to_tensor(X)[idx]
    ref = X[as_np(idx)]
    assert out.shape == list(ref.shape)
    np.testing.assert_array_equal(out.numpy(), ref)


@pytest.mark.parametrize("name", ["repeated", "mask", "slice_neg_step", "lists_broadcast",
                                  "split_advanced", "bool_0d_true", "mask_then_slice"])
def test_getitem_gradcheck(name):
    gradcheck(lambda x: x[READS[name](paddle)], [X])


def test_basic_index_is_a_view():
    """basic indexing shares storage; inplace changes through the view show in the base."""
    x = paddle.zeros([3, 4])
    v = x[1:3]
    v.add_(paddle.ones([2, 4]))
    np.testing.assert_array_equal(x.numpy()[1:3], np.ones((2, 4)))
    v[:] = 5.0
    assert x.numpy()[1:3].sum() == 40
    assert x.inplace_version == v.inplace_version == 2
    row = x[paddle.to_tensor(2)]
    row[0] = -1.0
    assert x.numpy()[2, 0] == -1
    e = x[0, 1]
    assert e.shape == []
    e.add_(paddle.to_tensor(7.0))
    assert x.numpy()[0, 1] == 7
    assert paddle.to_tensor([1.0, 2.0, 3.0])[1].shape == []


def test_advanced_index_is_a_copy():
    """advanced-index results are copies."""
    x = paddle.zeros([3, 4])
    for idx in ([0, 2], (slice(None), [1]), paddle.to_tensor(MASK)):
        c = x[idx]
        c[...] = 9.0
        assert x.numpy().sum() == 0


def test_out_of_range_int_raises():
    """an out-of-range int index raises IndexError; zero-size slices are legal."""
    x = paddle.ones([3, 4])
    for idx in (3, -4, (0, 4), (slice(None), 4)):
        with pytest.raises(IndexError, match="__getitem__"):
            x[idx]
    with pytest.raises(IndexError):
        x[[0, 3]]
    with pytest.raises(IndexError, match="bool index"):
        x[paddle.to_tensor([True, False])]
    with pytest.raises(IndexError, match="unsupported index"):
        x[1.5]
    with pytest.raises(IndexError, match="integer or bool"):
        x[paddle.to_tensor([0.0])]
    with pytest.raises(ValueError, match="step"):
        x[::0]
    assert x[2:2].shape == [0, 4] and x[3:3].shape == [0, 4]


def test_bool_indexing_shapes():
    """all-False mask gives [0, ...]; 0-D bool True adds a dim, False gives size 0."""
    x = paddle.to_tensor(X)
    assert x[paddle.to_tensor(np.zeros(3, bool))].shape == [0, 4, 5]
    assert x[x > 100].shape == [0]
    assert x[paddle.to_tensor(True)].shape == [1, 3, 4, 5]
    assert x[paddle.to_tensor(False)].shape == [0, 3, 4, 5]


# ---------------------------------------------------------------- __setitem__

V5, V245, V34 = rng.standard_normal(5), rng.standard_normal((2, 4, 5)), rng.standard_normal(
    (3, 4))
WRITES = {
    "int_scalar": (lambda P: 1, lambda P: 3.0),
    "slice_bcast_row": (lambda P: slice(0, 2), lambda P: P.to_tensor(V5)),
    "slice_step": (lambda P: (slice(None), slice(None, None, 2)), lambda P: 0.5),
    "neg_step": (lambda P: (slice(None, None, -2), 1), lambda P: P.to_tensor(
        np.arange(10.0).reshape(2, 5))),
    "tensor_index": (lambda P: P.to_tensor([2, 0]), lambda P: P.to_tensor(V245)),
    "mask": (lambda P: P.to_tensor(MASK), lambda P: -1.0),
    "mask_tensor_value": (lambda P: P.to_tensor(MASK), lambda P: P.to_tensor(V5)),
    "ndarray_value": (lambda P: (0, slice(1, 3)), lambda P: np.ones((2, 5))),
    "ellipsis": (lambda P: (Ellipsis, 0), lambda P: P.to_tensor(V34)),
    "none": (lambda P: (None, 1), lambda P: 2.0),
    "adv_mixed": (lambda P: ([0, 2], slice(1, 3)), lambda P: 4.0),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(WRITES))
def test_setitem_parity(name, pd):
    """writes with every index and value kind, and the gradient of x and value."""
    idx_fn, val_fn = WRITES[name]

    def fn(P, x):
        y = x * 1.0
        y[idx_fn(P)] = val_fn(P)
        return y

    check_parity(fn, [X], pd)


@pytest.mark.parity
@pytest.mark.parametrize("name", ["slice", "mask", "neg_step", "tensor", "int"])
def test_setitem_value_grad_parity(name, pd):
    """the assigned value gets the gradient of the positions it lands on."""
    idx = {"slice": lambda P: slice(1, 3), "mask": lambda P: P.to_tensor(MASK),
           "neg_step": lambda P: slice(None, None, -2), "tensor": lambda P: P.to_tensor([2, 0]),
           "int": lambda P: 1}[name]
    shape = {"slice": (5,), "mask": (5,), "neg_step": (4, 5), "tensor": (4, 5), "int": (4, 1)}

    def fn(P, x, v):
        y = x * 1.0
        y[idx(P)] = v
        return y

    check_parity(fn, [X, rng.standard_normal(shape[name])], pd)


def test_setitem_gradient_zero_on_overwritten():
    """untouched elements pass the gradient, overwritten ones get zero."""
    x = paddle.to_tensor(np.ones((2, 3)), stop_gradient=False)
    v = paddle.to_tensor(np.array([2.0, 3.0]), stop_gradient=False)
    y = x * 1.0
    y[:, 1] = v
    (y * paddle.to_tensor(np.arange(6.0).reshape(2, 3))).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 0, 2], [3, 0, 5]])
    np.testing.assert_array_equal(v.grad.numpy(), [1, 4])
    gradcheck(lambda a, b: _set(a, (slice(None, None, -1), 0), b), [X, rng.standard_normal(5)])


def _set(a, idx, b):
    y = a * 1.0
    y[idx] = b
    return y


def test_setitem_bumps_version_and_is_inplace():
    x = paddle.zeros([3, 4])
    v0 = x.inplace_version
    ptr = x.data_ptr()
    x[0] = 1.0
    x[paddle.to_tensor([1])] = paddle.ones([1, 4])
    x[x > 0] = 2.0
    assert x.inplace_version == v0 + 3
    assert x.data_ptr() == ptr
    y = paddle.ones([2])
    y.stop_gradient = False
    z = y * 1.0
    z[0] = 5.0
    assert z.inplace_version == 1


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool", "float16", "uint8"])
def test_setitem_mask_on_other_dtypes(dtype):
    """bool-mask assignment works on int and bool tensors."""
    a = (np.arange(6).reshape(2, 3) % 4).astype(dtype)
    x = paddle.to_tensor(a)
    x[x.astype("bool")] = 0
    ref = a.copy()
    ref[a.astype(bool)] = 0
    np.testing.assert_array_equal(x.numpy(), ref)
    x = paddle.to_tensor(a)
    x[paddle.to_tensor([True, False])] = paddle.to_tensor(np.ones(3, dtype))
    ref = a.copy()
    ref[0] = 1
    np.testing.assert_array_equal(x.numpy(), ref)


def test_setitem_negative_step_numpy(device):
    """negative-step slices write the right elements."""
    a = np.arange(10.0)
    x = paddle.to_tensor(a)
    x[::-3] = paddle.to_tensor([1.0, 2.0, 3.0, 4.0])
    a[::-3] = [1.0, 2.0, 3.0, 4.0]
    np.testing.assert_array_equal(x.numpy(), a)
    x[7:2:-2] = -1.0
    a[7:2:-2] = -1.0
    np.testing.assert_array_equal(x.numpy(), a)


def test_setitem_errors():
    x = paddle.zeros([3, 4])
    with pytest.raises(IndexError, match="__setitem__"):
        x[5] = 1.0
    with pytest.raises(ValueError, match="__setitem__"):
        x[0] = paddle.ones([3])
    w = paddle.ones([2])
    w.stop_gradient = False
    with pytest.raises((RuntimeError, ValueError), match="inplace"):
        w[0] = 1.0


def test_strided_views_feed_ops():
    """non-contiguous views are valid inputs and give the contiguous copy's values."""
    x = paddle.to_tensor(X)
    v = x.transpose([2, 0, 1])[:, ::2]
    c = paddle.to_tensor(np.ascontiguousarray(X.transpose(2, 0, 1)[:, ::2]))
    for fn in (lambda t: paddle.reshape(t, [-1]), lambda t: paddle.flip(t, 1),
               lambda t: paddle.gather(t, paddle.to_tensor([1, 0]), 1),
               lambda t: paddle.as_strided(t, [2, 2], [1, 2]),
               lambda t: paddle.unfold(t, 2, 2, 1), lambda t: t[[0, 1], 1],
               lambda t: paddle.split(t, 2, 1)[1], lambda t: paddle.tile(t, [2, 1, 1])):
        np.testing.assert_array_equal(fn(v).numpy(), fn(c).numpy())
