"""paddle_hl.framework.io: save/load round trips, Paddle 2.6 file compatibility (both ways),
the restricted loader, atomic writes and argument errors."""

from __future__ import annotations

import collections
import io
import os
import pickle

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.framework import io as pio
from paddle_hl.framework.io import load, save

NAME_TABLE = "StructuredToParameterName@@"


def _t(values, dtype=None, name=None):
    t = paddle.to_tensor(values, dtype=dtype)
    if name is not None:
        t.name = name
    return t


# ---------------------------------------------------------------------------- round trips
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32", "int64",
                                   "uint8", "int8", "bool", "complex64", "complex128"])
@pytest.mark.parametrize("shape", [[], [0], [3], [2, 3]])
def test_tensor_round_trip(tmp_path, dtype, shape):
    arr = (np.arange(int(np.prod(shape))).reshape(shape) % 3).astype("float32")
    t = paddle.to_tensor(arr).astype(dtype)
    path = tmp_path / "t.pdtensor"
    save(t, str(path))
    back = load(str(path))
    assert isinstance(back, paddle.Tensor)
    assert back.dtype == t.dtype and back.shape == shape
    assert back.name == t.name
    np.testing.assert_array_equal(back.astype("float64").numpy() if dtype == "bfloat16"
                                  else back.numpy(),
                                  t.astype("float64").numpy() if dtype == "bfloat16"
                                  else t.numpy())


def test_state_dict_round_trip(tmp_path):
    sd = collections.OrderedDict(weight=_t(np.random.rand(2, 3).astype("float32"), name="w0"),
                                 bias=_t([0.0, 1.0, 2.0], name="b0"))
    path = tmp_path / "sub" / "dir" / "model.pdparams"  # parent dirs are created
    save(sd, path)
    assert os.listdir(path.parent) == ["model.pdparams"]  # exact name, no temp file left
    back = load(path)
    assert list(back) == ["weight", "bias"]
    assert back["weight"].name == "w0" and back["bias"].name == "b0"
    np.testing.assert_array_equal(back["weight"].numpy(), sd["weight"].numpy())
    raw = load(path, return_numpy=True, keep_name_table=True)
    assert raw[NAME_TABLE] == {"weight": "w0", "bias": "b0"}
    assert isinstance(raw["bias"], np.ndarray)
    with open(path, "rb") as f:
        plain = pickle.load(f)
    assert isinstance(plain["weight"], np.ndarray)  # Paddle's state-dict layout
    assert plain[NAME_TABLE] == {"weight": "w0", "bias": "b0"}


def test_nested_structures_round_trip(tmp_path):
    a = _t([1, 2])
    obj = {"a": [a, 3, "x", None, 2.5, True], "b": (_t(1.5),), "c": {"d": {"e": _t([1.0])}},
           "f": np.arange(3), "g": b"bytes", "h": {1, 2}, "i": 1 + 2j}
    save(obj, tmp_path / "n.pd")
    back = load(tmp_path / "n.pd")
    assert isinstance(back["a"][0], paddle.Tensor) and back["a"][1:] == [3, "x", None, 2.5, True]
    assert isinstance(back["b"], tuple) and back["b"][0].shape == []
    np.testing.assert_array_equal(back["c"]["d"]["e"].numpy(), [1.0])
    assert isinstance(back["f"], np.ndarray)  # a raw array next to tensors stays an array
    assert back["g"] == b"bytes" and back["h"] == {1, 2} and back["i"] == 1 + 2j
    raw = load(tmp_path / "n.pd", return_numpy=True)
    assert isinstance(raw["a"][0], np.ndarray)


def test_optimizer_like_state_dict(tmp_path):
    sd = {"linear_0.w_0_moment1_0": _t([0.1, 0.2]), "LR_Scheduler": {"last_epoch": 3,
                                                                     "last_lr": 0.01}}
    save(sd, tmp_path / "opt.pdopt")
    back = load(tmp_path / "opt.pdopt")
    assert back["LR_Scheduler"] == {"last_epoch": 3, "last_lr": 0.01}
    np.testing.assert_allclose(back["linear_0.w_0_moment1_0"].numpy(), [0.1, 0.2])


def test_plain_values_and_arrays(tmp_path):
    for obj in (3, "text", [1, "a", 2.5, None], {"k": 1}):
        save(obj, tmp_path / "v.pd")
        assert load(tmp_path / "v.pd") == obj
    save(np.ones(3), tmp_path / "a.pd")
    back = load(tmp_path / "a.pd")  # as Paddle: a bare ndarray loads as a Tensor
    assert isinstance(back, paddle.Tensor) and back.dtype == paddle.float64
    assert isinstance(load(tmp_path / "a.pd", return_numpy=True), np.ndarray)


def test_non_contiguous_tensor_saves_logical_values(tmp_path):
    """A strided tensor is saved with its logical values."""
    base = np.arange(12.0).reshape(3, 4)
    t = paddle.to_tensor(base)
    strided = paddle.Tensor.__new__(paddle.Tensor)
    strided.__init__(base)
    strided._data = t._data.T  # a transposed view: non-contiguous storage
    assert not strided.is_contiguous()
    save(strided, tmp_path / "s.pd")
    np.testing.assert_array_equal(load(tmp_path / "s.pd").numpy(), base.T)


def test_bytesio_and_protocols(tmp_path):
    for protocol in (2, 3, 4):
        buf = io.BytesIO()
        save({"w": _t([1.0, 2.0])}, buf, protocol=protocol)
        buf.seek(0)
        np.testing.assert_array_equal(load(buf)["w"].numpy(), [1.0, 2.0])
        save(_t([3.0]), tmp_path / f"p{protocol}.pd", protocol=protocol)
        np.testing.assert_array_equal(load(tmp_path / f"p{protocol}.pd").numpy(), [3.0])


def test_empty_state_dict_warns(tmp_path):
    with pytest.warns(UserWarning, match="empty"):
        save({}, tmp_path / "e.pd")
    assert load(tmp_path / "e.pd") == {}


def test_same_tensor_twice(tmp_path):
    t = _t([1.0])
    save([t, t], tmp_path / "twice.pd")
    a, b = load(tmp_path / "twice.pd")
    np.testing.assert_array_equal(a.numpy(), b.numpy())


# ---------------------------------------------------------------------------- errors
def test_save_argument_errors(tmp_path):
    t = _t([1.0])
    with pytest.raises(ValueError, match="filename is empty"):
        save(t, "")
    with pytest.raises(ValueError, match="filename is empty"):
        save(t, str(tmp_path) + os.sep)
    with pytest.raises(IsADirectoryError):
        save(t, tmp_path)
    for bad in (1, 5, 0):
        with pytest.raises(ValueError, match="protocol"):
            save(t, tmp_path / "x.pd", protocol=bad)
    for bad in ("4", 4.0, None):
        with pytest.raises(ValueError, match="MUST be `int`"):
            save(t, tmp_path / "x.pd", protocol=bad)
    with pytest.raises(ValueError, match="only supports saving objects to file"):
        save(t, 3)
    with pytest.raises(ValueError, match=r"config \(foo\)"):
        save(t, tmp_path / "x.pd", foo=1)
    with pytest.raises(ValueError, match="use_binary_format"):
        save(t, tmp_path / "x.pd", use_binary_format=True)
    with pytest.raises(TypeError, match="cannot save an object of type"):
        save({"f": object()}, tmp_path / "x.pd")
    with pytest.raises(TypeError, match="dtype object"):
        save(np.array([object()]), tmp_path / "x.pd")
    assert not (tmp_path / "x.pd").exists()


def test_save_refuses_layer(tmp_path):
    class Layer:  # stands in for paddle_hl.nn.Layer (matched by class name and package)
        pass

    Layer.__module__ = "paddle_hl.nn.layer.layers"

    class Net(Layer):
        pass

    with pytest.raises(ValueError, match="Layer"):
        save(Net(), tmp_path / "net.pd")
    assert not (tmp_path / "net.pd").exists()  # Paddle leaves an empty file; we leave nothing


def test_load_argument_errors(tmp_path):
    with pytest.raises(ValueError, match="not exists"):
        load(tmp_path / "missing.pd")
    with pytest.raises(ValueError, match="not exists"):
        load("")
    with pytest.raises(ValueError, match="directory"):
        load(tmp_path)
    save(_t([1.0]), tmp_path / "ok.pd")
    with pytest.raises(ValueError, match=r"config \(foo\)"):
        load(tmp_path / "ok.pd", foo=1)
    (tmp_path / "junk.pd").write_bytes(b"not a pickle at all")
    with pytest.raises(ValueError, match="not a file written by paddle.save"):
        load(tmp_path / "junk.pd")
    (tmp_path / "empty.pd").write_bytes(b"")
    with pytest.raises(ValueError, match="not a file written by paddle.save"):
        load(tmp_path / "empty.pd")


class _Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned > /dev/null",))


def test_restricted_loader_refuses_other_classes(tmp_path):
    path = tmp_path / "evil.pd"
    with open(path, "wb") as f:
        pickle.dump({"x": _Evil()}, f)
    with pytest.raises(pickle.UnpicklingError, match=r"refusing to load '(posix|os|nt)\.system'"):
        load(path)
    with open(path, "wb") as f:
        pickle.dump(collections.Counter("ab"), f)
    with pytest.raises(pickle.UnpicklingError, match="collections.Counter"):
        load(path)


def test_numpy1_module_names_and_ordered_dict(tmp_path):
    data = pickle.dumps(collections.OrderedDict(a=np.ones(2, np.float32)), protocol=2)
    data = data.replace(b"numpy._core.multiarray", b"numpy.core.multiarray")
    back = load(io.BytesIO(data))
    assert isinstance(back, collections.OrderedDict)
    np.testing.assert_array_equal(back["a"].numpy(), [1.0, 1.0])
    assert load(io.BytesIO(pickle.dumps(np.float32(2.5)))) == np.float32(2.5)


def test_atomic_write_keeps_old_file_on_failure(tmp_path, monkeypatch):
    path = tmp_path / "model.pdparams"
    save({"w": _t([1.0, 2.0])}, path)
    before = path.read_bytes()

    def broken_dump(obj, f, protocol=None):
        f.write(b"partial garbage")
        raise KeyboardInterrupt  # a crash in the middle of writing

    monkeypatch.setattr(pio.pickle, "dump", broken_dump)
    with pytest.raises(KeyboardInterrupt):
        save({"w": _t([9.0, 9.0])}, path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["model.pdparams"]  # the temporary file was removed
    np.testing.assert_array_equal(load(path)["w"].numpy(), [1.0, 2.0])


def test_saved_file_permissions(tmp_path):
    save(_t([1.0]), tmp_path / "perm.pd")
    mask = os.umask(0)
    os.umask(mask)
    assert (os.stat(tmp_path / "perm.pd").st_mode & 0o777) == (0o666 & ~mask)


# ---------------------------------------------------------------------------- oracle
def _pd_tensor(pd, arr, name):
    t = pd.to_tensor(arr)
    t.name = name
    return t


@pytest.mark.parity
def test_files_are_byte_identical_to_paddle(pd, tmp_path):
    w = np.random.rand(2, 3).astype("float32")
    cases = [
        (lambda lib, mk: {"weight": mk(w, "linear_0.w_0"), "bias": mk(np.zeros(3, "float32"),
                                                                       "linear_0.b_0")}),
        (lambda lib, mk: mk(np.array([1.0, 2.0], "float32"), "generated_tensor_0")),
        (lambda lib, mk: {"a": [mk(np.array([1, 2]), "t1"), 3, "x"],
                          "b": (mk(np.array(1.5, "float32"), "t2"),)}),
        (lambda lib, mk: {"a": mk(w, "t3"), "n": {"lr": 0.1, "x": [1]}}),
    ]
    for i, make in enumerate(cases):
        for protocol in (2, 4):
            hp, pp = tmp_path / f"hl{i}_{protocol}", tmp_path / f"pd{i}_{protocol}"
            save(make(paddle, lambda a, n: _t(a, name=n)), hp, protocol=protocol)
            pd.save(make(pd, lambda a, n: _pd_tensor(pd, a, n)), str(pp), protocol=protocol)
            assert hp.read_bytes() == pp.read_bytes(), (i, protocol)


@pytest.mark.parity
def test_bfloat16_file_is_byte_identical(pd, tmp_path):
    ours = _t([1.0, 2.0]).astype("bfloat16")
    ours.name = "bf"
    save(ours, tmp_path / "hl.pd")
    t = pd.to_tensor([1.0, 2.0]).astype("bfloat16")
    t.name = "bf"
    pd.save(t, str(tmp_path / "pd.pd"))
    assert (tmp_path / "hl.pd").read_bytes() == (tmp_path / "pd.pd").read_bytes()
    back = pd.load(str(tmp_path / "hl.pd"))
    assert str(back.dtype) == "paddle.bfloat16"


@pytest.mark.parity
def test_paddle_hl_files_load_in_paddle(pd, tmp_path):
    w = np.random.rand(3, 4).astype("float32")
    save({"weight": _t(w), "bias": _t(np.ones(4, "float32"))}, tmp_path / "m.pdparams")
    back = pd.load(str(tmp_path / "m.pdparams"))
    np.testing.assert_array_equal(back["weight"].numpy(), w)
    lin = pd.nn.Linear(3, 4)
    lin.set_state_dict(back)
    np.testing.assert_array_equal(lin.weight.numpy(), w)
    save({"a": [_t([1, 2]), "s"], "b": (_t(2.0),)}, tmp_path / "n.pd")
    nested = pd.load(str(tmp_path / "n.pd"))
    assert nested["a"][1] == "s"
    np.testing.assert_array_equal(nested["a"][0].numpy(), [1, 2])
    assert nested["b"][0].shape == []


@pytest.mark.parity
def test_paddle_files_load_in_paddle_hl(pd, tmp_path):
    lin = pd.nn.Linear(2, 3)
    pd.save(lin.state_dict(), str(tmp_path / "lin.pdparams"))
    back = load(tmp_path / "lin.pdparams")
    np.testing.assert_array_equal(back["weight"].numpy(), lin.weight.numpy())
    assert back["weight"].name == lin.weight.name
    assert NAME_TABLE not in back
    assert load(tmp_path / "lin.pdparams", keep_name_table=True)[NAME_TABLE] == {
        "weight": lin.weight.name, "bias": lin.bias.name}
    opt = pd.optimizer.Adam(parameters=lin.parameters(),
                            learning_rate=pd.optimizer.lr.StepDecay(0.1, 2))
    lin(pd.rand([4, 2])).sum().backward()
    opt.step()
    pd.save(opt.state_dict(), str(tmp_path / "adam.pdopt"))
    sd = load(tmp_path / "adam.pdopt")
    ref = opt.state_dict()
    for k, v in ref.items():
        if isinstance(v, pd.Tensor):
            np.testing.assert_array_equal(sd[k].numpy(), v.numpy(), err_msg=k)
    assert sd["LR_Scheduler"]["last_epoch"] == ref["LR_Scheduler"]["last_epoch"]
    pd.save({"a": [pd.to_tensor([1, 2]), 3], "b": pd.to_tensor(1.5).astype("bfloat16"),
             "c": np.ones(2)}, str(tmp_path / "n.pd"))
    nested = load(tmp_path / "n.pd")
    assert nested["b"].dtype == paddle.bfloat16 and nested["b"].shape == []
    np.testing.assert_array_equal(nested["a"][0].numpy(), [1, 2])
    assert isinstance(nested["c"], np.ndarray)
    for i, obj in enumerate([{"a": {"b": np.ones(2)}, "d": np.ones(1)}, [np.ones(1)],
                             np.ones(1, np.uint16), ("a", np.ones(1), 3)]):
        with open(tmp_path / f"raw{i}.pd", "wb") as f:
            pickle.dump(obj, f, protocol=4)
        for ret in (False, True):
            ours, theirs = load(tmp_path / f"raw{i}.pd", return_numpy=ret), pd.load(
                str(tmp_path / f"raw{i}.pd"), return_numpy=ret)
            assert _structure(ours) == _structure(theirs), (i, ret)


def _structure(obj):
    """A type skeleton of a loaded object (Tensor classes compared by role, not identity)."""
    if isinstance(obj, dict):
        return {k: _structure(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_structure(v) for v in obj)
    if hasattr(obj, "stop_gradient"):
        return ("Tensor", str(obj.dtype).split(".")[-1], list(obj.shape))
    if isinstance(obj, np.ndarray):
        return ("ndarray", str(obj.dtype), list(obj.shape))
    return obj
