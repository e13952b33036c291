"""paddle_hl.utils.dlpack and paddle_hl.utils helpers (run_check, try_import, ...)."""

from __future__ import annotations

import gc
import warnings

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.utils import dlpack


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "int16", "int32",
                                   "int64", "uint8", "bool", "complex64", "complex128"])
@pytest.mark.cpu
@pytest.mark.parametrize("shape", [[], [0], [5], [2, 3]])
def test_round_trip_shares_memory(dtype, shape):
    x = paddle.to_tensor((np.arange(int(np.prod(shape))).reshape(shape) % 2).astype(dtype))
    y = dlpack.from_dlpack(dlpack.to_dlpack(x))
    assert y.dtype == x.dtype and y.shape == x.shape
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    if x.size:
        # zero copy (the raw arrays: Tensor.numpy() returns a copy, as in Paddle)
        assert np.shares_memory(x._data, y._data)


def test_thousand_calls_in_a_loop():
    """1000 to_dlpack calls keep their memory alive; each round trip equals x."""
    x = paddle.to_tensor(np.random.rand(64, 32).astype("float32"))
    capsules = [dlpack.to_dlpack(x) for _ in range(1000)]
    for c in capsules:
        np.testing.assert_array_equal(dlpack.from_dlpack(c).numpy(), x.numpy())
    # capsules of temporaries keep the memory alive after the tensor itself is gone
    caps = [dlpack.to_dlpack(paddle.to_tensor(np.full(1000, i, np.int64))) for i in range(1000)]
    gc.collect()
    for i, c in enumerate(caps):
        got = dlpack.from_dlpack(c).numpy()
        assert got[0] == i and got[-1] == i


def test_writes_are_shared():
    x = paddle.to_tensor([1.0, 2.0, 3.0])
    y = dlpack.from_dlpack(dlpack.to_dlpack(x))
    y._data[0] = 10.0
    np.testing.assert_array_equal(x.numpy(), [10.0, 2.0, 3.0])


def test_non_contiguous_and_objects_with_dlpack():
    base = np.arange(12.0).reshape(3, 4)
    t = paddle.to_tensor(base)
    t._data = t._data.T
    np.testing.assert_array_equal(dlpack.from_dlpack(dlpack.to_dlpack(t)).numpy(), base.T)
    arr = np.arange(5, dtype=np.int32)
    np.testing.assert_array_equal(dlpack.from_dlpack(arr).numpy(), arr)  # __dlpack__ object
    np.testing.assert_array_equal(dlpack.from_dlpack(np.arange(3, dtype=np.uint32)).numpy(),
                                  [0, 1, 2])
    np.testing.assert_array_equal(dlpack.from_dlpack(t).numpy(), base.T)


def test_torch_interop():
    torch = pytest.importorskip("torch")
    x = paddle.to_tensor([1.0, 2.0])
    tt = torch.utils.dlpack.from_dlpack(dlpack.to_dlpack(x))
    assert tt.tolist() == [1.0, 2.0]
    back = dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(torch.arange(4.0)))
    np.testing.assert_array_equal(back.numpy(), [0.0, 1.0, 2.0, 3.0])
    np.testing.assert_array_equal(dlpack.from_dlpack(torch.arange(3)).numpy(), [0, 1, 2])


@pytest.mark.cpu
def test_errors():
    x = paddle.to_tensor([1.0])
    c = dlpack.to_dlpack(x)
    dlpack.from_dlpack(c)
    with pytest.raises(ValueError, match="already consumed"):
        dlpack.from_dlpack(c)
    with pytest.raises(TypeError, match="must be paddle.Tensor"):
        dlpack.to_dlpack(np.ones(2))
    with pytest.raises(TypeError, match="PyCapsule"):
        dlpack.from_dlpack([1, 2])
    with pytest.raises(TypeError, match="bfloat16"):
        dlpack.to_dlpack(x.astype("bfloat16"))


@pytest.mark.parity
def test_interop_with_paddle(pd):
    x = paddle.to_tensor(np.arange(6.0).reshape(2, 3))
    y = pd.utils.dlpack.from_dlpack(dlpack.to_dlpack(x))
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    p = pd.to_tensor(np.arange(4, dtype=np.int32))
    z = dlpack.from_dlpack(pd.utils.dlpack.to_dlpack(p))
    assert z.dtype == paddle.int32
    np.testing.assert_array_equal(z.numpy(), [0, 1, 2, 3])


# ---------------------------------------------------------------------------- utils
def test_run_check_without_gpu_warns_and_checks_dygraph(capsys):
    """No GPU -> a warning, not a failure, and the dynamic graph is still checked."""
    from paddle_hl import backend

    if backend.device_count() > 0:
        pytest.skip("this machine has a GPU")
    with pytest.warns(UserWarning, match="CPU"):
        paddle.utils.run_check()
    out = capsys.readouterr().out
    assert "works well on 1 CPU" in out and "installed successfully" in out


def test_run_check_detects_a_broken_backward(monkeypatch):
    from paddle_hl import utils

    real_mean = paddle.mean

    def wrong_mean(x, *a, **k):
        return real_mean(x, *a, **k) * 2.0

    monkeypatch.setattr(paddle, "mean", wrong_mean)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(AssertionError):
            utils._check_dygraph("cpu")


def test_utils_helpers():
    from paddle_hl import utils

    assert utils.try_import("json").dumps([1]) == "[1]"
    with pytest.raises(ImportError, match="pip install no_such_mod"):
        utils.try_import("no_such_mod_xyz".replace("_xyz", ""))
    utils.require_version("2.0")
    utils.require_version("2.6.0", "2.6.9")
    with pytest.raises(Exception, match="VersionError"):
        utils.require_version("3.0")
    with pytest.raises(TypeError):
        utils.require_version(2.0)

    @utils.deprecated(update_to="paddle.new_api", since="2.0")
    def old():
        return 1

    with pytest.warns(DeprecationWarning, match="paddle.new_api"):
        assert old() == 1
    assert paddle.utils.dlpack is dlpack
    with pytest.raises(AttributeError):
        paddle.utils.no_such_thing  # noqa: B018
