"""Tensor object: metadata, conversion, printing, pickling, devices, dtype rules."""

from __future__ import annotations

import copy
import pickle
import weakref

import numpy as np
import pytest

import paddle_hl as paddle


@pytest.mark.cpu
def test_repr_matches_paddle_layout():
    x = paddle.to_tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert repr(x) == ("Tensor(shape=[2, 3], dtype=float32, place=Place(cpu), "
                       "stop_gradient=True,\n       [[1., 2., 3.],\n        [4., 5., 6.]])")
    assert repr(paddle.to_tensor(3.0)).endswith("stop_gradient=True,\n       3.)")


@pytest.mark.parametrize("make", [lambda: paddle.to_tensor([]), lambda: paddle.zeros([0, 3]),
                                  lambda: paddle.to_tensor([1.5, 2.0], dtype="bfloat16")])
def test_print_empty_and_bfloat16(make):
    s = str(make())
    assert s.startswith("Tensor(shape=")


@pytest.mark.parity
@pytest.mark.parametrize("data", [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], 3.0, [1, 2, 3], [],
                                  [1.5, -2.25], [[0.1, 0.2], [0.3, 0.4]], [1, 100, -5],
                                  [[1.5, float("nan")], [float("inf"), -2.0]], [True, False],
                                  [[[1, 2], [3, 4]], [[5, 6], [7, 8]]], [1e10, 1.0],
                                  list(np.arange(2000.0)), [[0.5] * 40] * 3, [0.5] * 40,
                                  [[[0.25] * 13] * 2] * 2])
def test_repr_parity(pd, data):
    assert repr(paddle.to_tensor(data)) == repr(pd.to_tensor(data))


def test_dtype_objects():
    x = paddle.to_tensor([1.0])
    assert str(x.dtype) == "paddle.float32"
    assert x.dtype == paddle.float32
    assert x.dtype == "float32"
    assert paddle.int64 != paddle.float32
    info = paddle.iinfo(paddle.int32)
    assert (info.min, info.max, info.bits, info.dtype) == (-2**31, 2**31 - 1, 32, "int32")
    f = paddle.finfo(paddle.float32)
    assert f.eps == np.finfo(np.float32).eps and f.bits == 32
    assert paddle.finfo(paddle.bfloat16).bits == 16
    with pytest.raises(TypeError, match="iinfo"):
        paddle.iinfo(paddle.float32)


@pytest.mark.parity
def test_iinfo_finfo_parity(pd):
    for name in ["int8", "int16", "int32", "int64", "uint8"]:
        a, b = paddle.iinfo(getattr(paddle, name)), pd.iinfo(getattr(pd, name))
        assert (a.min, a.max, a.bits) == (b.min, b.max, b.bits)
    for name in ["float16", "bfloat16", "float32", "float64"]:
        a, b = paddle.finfo(getattr(paddle, name)), pd.finfo(getattr(pd, name))
        for field in ["min", "max", "eps", "resolution", "smallest_normal", "tiny", "bits"]:
            assert getattr(a, field) == pytest.approx(getattr(b, field)), (name, field)


def test_to_tensor_dtype_rules():
    assert paddle.to_tensor(3).dtype == paddle.int64
    assert paddle.to_tensor(3.0).dtype == paddle.float32
    assert paddle.to_tensor(True).dtype == paddle.bool
    assert paddle.to_tensor([1, 2.5]).dtype == paddle.float32
    assert paddle.to_tensor(np.array([1.0, 2.0])).dtype == paddle.float64
    assert paddle.to_tensor(1 + 2j).dtype == paddle.complex64
    assert paddle.to_tensor([]).dtype == paddle.float32
    paddle.set_default_dtype("float64")
    assert paddle.to_tensor(3.0).dtype == paddle.float64
    paddle.set_default_dtype("float32")
    x = paddle.to_tensor([1.0, 2.0])
    assert paddle.to_tensor([1, 2], dtype=x.dtype).dtype == paddle.float32
    assert paddle.to_tensor(3.0).shape == []


def test_set_default_dtype_rejects_int():
    with pytest.raises(TypeError, match="set_default_dtype"):
        paddle.set_default_dtype("int32")
    assert paddle.get_default_dtype() == "float32"


def test_true_division_and_scalar_promotion():
    r = paddle.to_tensor([327]) / paddle.to_tensor([80])
    assert r.dtype == paddle.float32
    np.testing.assert_allclose(r.numpy(), [4.0875])
    h = paddle.to_tensor([1, 2]) * 0.5
    assert h.dtype == paddle.float32
    np.testing.assert_allclose(h.numpy(), [0.5, 1.0])
    b = paddle.to_tensor([True]) + paddle.to_tensor([1.5])
    assert b.dtype == paddle.float32
    np.testing.assert_allclose(b.numpy(), [2.5])
    assert (paddle.to_tensor([1, 2]) + 1).dtype == paddle.int64
    assert (paddle.to_tensor([1.0], dtype="float16") * 2.5).dtype == paddle.float16
    assert (paddle.to_tensor([1, 2], dtype="int32") * 2).dtype == paddle.int32


def test_numpy_interop():
    t = paddle.to_tensor([[1.0, 2.0]])
    assert isinstance(np.array(t), np.ndarray)
    np.testing.assert_array_equal(np.asarray(t), [[1.0, 2.0]])
    assert paddle.to_tensor(2.5).item() == 2.5
    assert isinstance(paddle.to_tensor(7).item(), int)
    with pytest.raises(ValueError, match="one element"):
        t.item()
    assert t.item(0, 1) == 2.0
    np.testing.assert_allclose((t + np.array([1.0, 1.0], dtype=np.float32)).numpy(), [[2.0, 3.0]])
    assert t.element_size() == 4
    assert paddle.to_tensor([1], dtype="int64").element_size() == 8
    assert isinstance(t.data_ptr(), int) and t.data_ptr() != 0
    assert paddle.to_tensor(0.0).numpy().shape == ()


def test_scalar_conversions():
    assert float(paddle.to_tensor([2.5])) == 2.5
    assert int(paddle.to_tensor(3)) == 3
    assert bool(paddle.to_tensor(True)) is True
    with pytest.raises(TypeError):
        float(paddle.to_tensor([1.0, 2.0]))
    assert [1, 2, 3][paddle.to_tensor(1)] == 2
    with pytest.raises(TypeError):
        len(paddle.to_tensor(1.0))
    assert len(paddle.to_tensor([[1, 2], [3, 4], [5, 6]])) == 3
    rows = list(paddle.to_tensor([[1, 2], [3, 4]]))
    assert [r.tolist() for r in rows] == [[1, 2], [3, 4]]


def test_pickle_and_weakref_and_deepcopy():
    t = paddle.to_tensor([[1.0, 2.0], [3.0, 4.0]], dtype="float64", stop_gradient=False)
    u = pickle.loads(pickle.dumps(t))
    assert u.dtype == paddle.float64 and u.shape == [2, 2] and u.stop_gradient is False
    np.testing.assert_array_equal(u.numpy(), t.numpy())
    r = weakref.ref(t)
    assert r() is t
    d = copy.deepcopy(t)
    with paddle.no_grad():
        d[0, 0] = 100
    assert t.numpy()[0, 0] == 1.0
    b = paddle.to_tensor([1.5], dtype="bfloat16")
    assert pickle.loads(pickle.dumps(b)).dtype == paddle.bfloat16


@pytest.mark.cpu
def test_metadata():
    x = paddle.zeros([2, 3, 4])
    assert x.shape == [2, 3, 4] and isinstance(x.shape, list)
    assert x.ndim == 3 and x.dim() == 3 and x.ndimension() == 3 and x.size == 24
    assert x.numel().item() == 24
    assert x.place == paddle.CPUPlace() and str(x.place) == "Place(cpu)"
    assert x.stop_gradient is True and x.grad is None and x.is_leaf
    assert x.name.startswith("generated_tensor")
    assert x.is_contiguous()
    assert paddle.to_tensor(1.0).shape == []


def test_astype_cast_clone_detach():
    x = paddle.to_tensor([1.5, 2.5], stop_gradient=False)
    assert x.astype("int32").dtype == paddle.int32
    assert x.astype(paddle.float64).dtype == paddle.float64
    d = x.detach()
    assert d.stop_gradient and d.is_leaf
    d[0] = 9.0  # detach shares storage
    assert x.numpy()[0] == 9.0
    a = x.numpy()  # numpy() is a copy, as in Paddle
    a[1] = 7.0
    assert x.numpy()[1] == 2.5


@pytest.mark.cpu
def test_to_and_cpu():
    x = paddle.to_tensor([1.0, 2.0])
    assert x.cpu() is x
    assert x.to("cpu").place == paddle.CPUPlace()
    assert x.to("float64").dtype == paddle.float64
    assert x.to("cpu", "int64").dtype == paddle.int64
    assert x.to(dtype="float16").dtype == paddle.float16
    assert x.pin_memory().place == paddle.CPUPlace()


@pytest.mark.cpu
def test_devices_without_gpu():
    from paddle_hl import backend

    assert paddle.get_device() == "cpu"
    assert paddle.set_device("cpu") == paddle.CPUPlace()
    if backend.cupy_module() is None:
        assert paddle.is_compiled_with_cuda() is False
        with pytest.raises(ValueError, match="gpu"):
            paddle.set_device("gpu")
        with pytest.raises(ValueError):
            paddle.to_tensor([1.0]).cuda()
        assert paddle.get_device() == "cpu"
    with pytest.raises(ValueError):
        paddle.set_device("tpu")


def test_places():
    assert str(paddle.CUDAPlace(1)) == "Place(gpu:1)"
    assert str(paddle.CUDAPinnedPlace()) == "Place(gpu_pinned)"
    assert paddle.CPUPlace() == paddle.CPUPlace()
    assert paddle.CUDAPlace(0) != paddle.CPUPlace()


def test_set_printoptions():
    x = paddle.to_tensor([1.123456789])
    paddle.set_printoptions(precision=3)
    try:
        assert "1.123]" in str(x)
    finally:
        paddle.set_printoptions(precision=8)
    with pytest.raises(TypeError):
        paddle.set_printoptions(sci_mode="yes")


def test_bad_to_tensor_input():
    with pytest.raises(TypeError, match="to_tensor"):
        paddle.to_tensor("abc")
    with pytest.raises(ValueError, match="ragged"):
        paddle.to_tensor([[1, 2], [3]])
    with pytest.raises(TypeError, match="unknown dtype"):
        paddle.to_tensor([1], dtype="float31")


def test_set_value_and_grad_setter():
    x = paddle.zeros([2])
    x.set_value(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0])
    with pytest.raises(ValueError, match="set_value"):
        x.set_value(np.zeros(3))
