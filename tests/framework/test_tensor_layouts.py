"""Sparse COO/CSR conversions on Tensor, copy_/reconstruct_from_, vocab and string tensors."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_hl as paddle

DENSE = [[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]]


def test_coo_round_trip():
    x = paddle.to_tensor(DENSE)
    c = x.to_sparse_coo(2)
    assert c.is_sparse() and c.is_sparse_coo() and not c.is_sparse_csr()
    assert c.shape == [2, 3] and c.dtype == paddle.float32 and c.nnz() == 3
    np.testing.assert_array_equal(c.indices().numpy(), [[0, 1, 1], [1, 0, 2]])
    np.testing.assert_array_equal(c.values().numpy(), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(c.to_dense().numpy(), DENSE)
    np.testing.assert_array_equal((c + 1).numpy(), np.array(DENSE) + 1)
    c1 = x.to_sparse_coo(1)
    np.testing.assert_array_equal(c1.indices().numpy(), [[0, 1]])
    assert c1.values().shape == [2, 3]


def test_coalesce_merges_duplicates():
    from paddle_hl.sparse._tensor import SparseCooTensor

    idx = np.array([[1, 0, 1], [2, 1, 2]], dtype=np.int64)
    c = SparseCooTensor(idx, np.array([1.0, 2.0, 3.0], dtype=np.float32), (2, 3)).coalesce()
    np.testing.assert_array_equal(c.indices().numpy(), [[0, 1], [1, 2]])
    np.testing.assert_array_equal(c.values().numpy(), [2.0, 4.0])


def test_csr_round_trip_batched():
    x = paddle.to_tensor([DENSE, [[4.0, 0.0, 0.0], [0.0, 0.0, 5.0]]])
    s = x.to_sparse_csr()
    assert s.is_sparse_csr()
    np.testing.assert_array_equal(s.crows().numpy(), [0, 1, 3, 0, 1, 2])
    np.testing.assert_array_equal(s.cols().numpy(), [1, 0, 2, 0, 2])
    np.testing.assert_array_equal(s.to_dense().numpy(), x.numpy())
    np.testing.assert_array_equal(s.to_sparse_coo(3).to_dense().numpy(), x.numpy())


@pytest.mark.parity
def test_sparse_parity(pd):
    ours, theirs = paddle.to_tensor(DENSE), pd.to_tensor(DENSE)
    assert repr(ours.to_sparse_coo(2)) == repr(theirs.to_sparse_coo(2))
    assert repr(ours.to_sparse_csr()) == repr(theirs.to_sparse_csr())
    for m in ["crows", "cols", "values"]:
        np.testing.assert_array_equal(getattr(ours.to_sparse_csr(), m)().numpy(),
                                      getattr(theirs.to_sparse_csr(), m)().numpy())


def test_dense_tensor_sparse_accessors_raise():
    x = paddle.to_tensor(DENSE)
    assert x.to_dense() is x and not x.is_sparse()
    for m in ["indices", "values", "crows", "cols", "nnz", "coalesce"]:
        with pytest.raises(TypeError, match="sparse"):
            getattr(x, m)()
    with pytest.raises(ValueError, match="sparse_dim"):
        x.to_sparse_coo(3)


def test_copy_and_reconstruct():
    x = paddle.to_tensor(DENSE)
    y = paddle.zeros([2, 3], dtype="float64")
    v = y.inplace_version
    assert y.copy_(x, False) is None
    np.testing.assert_array_equal(y.numpy(), DENSE)
    assert y.dtype == paddle.float64 and y.inplace_version == v + 1
    with pytest.raises(ValueError, match="copy_"):
        y.copy_(paddle.zeros([3]))
    z = paddle.zeros([1])
    z.reconstruct_from_(x)
    assert z.shape == [2, 3]
    x[0, 0] = 7  # a deep copy
    assert z.numpy()[0, 0] == 0
    e = paddle.Tensor.create_tensor("int32")
    assert e.dtype == paddle.int32 and e.shape == [0]


def test_vocab_and_string_tensors():
    t = paddle.to_tensor([0])
    t.set_vocab({"a": 0, "b": 1})
    assert t.get_map_tensor() == {"a": 0, "b": 1}
    s = paddle.to_tensor([0])
    s.set_string_list(["x", "y"])
    with pytest.raises(TypeError, match="vocabulary"):
        s.get_map_tensor()
    with pytest.raises(TypeError):
        t.set_vocab(["a"])
    with pytest.raises(TypeError, match="SelectedRows"):
        t.get_selected_rows()
