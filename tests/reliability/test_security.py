"""Loading a file never runs code it names: one crafted file for each loader.

- ``jit.load``: a ``.pdmodel`` names kernels by registry name; a name that is not a declared
  paddle_hl kernel (a shell call reached through module attributes, ``eval``, a non-kernel
  paddle_hl function) is refused before anything runs, and the program's pickle rebuilds plain
  data only (GLOBAL/STACK_GLOBAL + REDUCE of any other callable is refused).
- ``paddle.load`` / ``Model.load`` / ``.pdiparams.info``: restricted unpicklers; every file real
  Paddle 2.6 writes with ``paddle.save`` still loads.
- Archives (downloads, hub caches, dataset archives): members escaping the target folder
  (``..``, absolute paths, links pointing outside) are refused before anything is written.
"""

from __future__ import annotations

import io
import os
import pickle
import subprocess
import tarfile
import zipfile

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.jit import _program
from paddle_hl.static import InputSpec


class _Call:
    """Pickles as a call of ``fn(*args)``: GLOBAL/STACK_GLOBAL of ``fn``, then REDUCE."""

    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


def _saved_model(tmp_path):
    """A model in paddle_hl's older program format (the pickle ``jit.save`` still writes for a
    forward without a Paddle program form)."""
    from paddle_hl.framework.io import write_files
    from paddle_hl.jit._save_load import _own_format, trace

    net = paddle.nn.Linear(2, 3)
    prefix = str(tmp_path / "net")
    files = _own_format(*trace(net, [InputSpec([1, 2], "float32")]))
    write_files({prefix + k: w for k, w in files.items()})
    return prefix


def _marker_cmd(marker):
    return f"touch {marker}"


# ----------------------------------------------------------------------------- jit.load
@pytest.mark.parametrize("ref, arg", [
    # a shell command through an attribute chain from a kernel module (os.popen is a Python
    # function, so a check for "a function" alone let it through)
    ("paddle_hl.nn.functional.rnn:os.popen", "shell"),
    ("paddle_hl.nn.layer.conv:os.system", "shell"),
    ("subprocess:getoutput", "shell"),
    ("paddle_hl.tensor.creation:builtins.eval", "eval"),
    # paddle_hl functions that are not kernels
    ("paddle_hl.tensor.creation:to_tensor", "value"),
    ("paddle_hl.jit._save_load:save", "value"),
    ("paddle_hl.utils.download:get_path_from_url", "value"),
    # a kernel's name with a path after it, and malformed names
    ("paddle_hl.tensor.math:add.__globals__", "value"),
    ("paddle_hl.tensor.math", "value"),
])
def test_pdmodel_naming_a_non_kernel_is_refused_before_anything_runs(tmp_path, ref, arg):
    prefix = _saved_model(tmp_path)
    model = prefix + ".pdmodel"
    marker = tmp_path / "ran"
    prog = _program.loads(open(model, "rb").read(), model)
    value = {"shell": _marker_cmd(marker), "eval": f"open({str(marker)!r}, 'w')",
             "value": [1.0, 2.0]}[arg]
    prog["ops"].insert(0, {"fn": ref, "ins": [("lit", value)], "attrs": {}, "outs": [1000],
                           "tuple": False})
    with open(model, "wb") as f:
        f.write(_program.dumps(prog))
    with pytest.raises(ValueError) as info:
        layer = paddle.jit.load(prefix)
        layer(paddle.ones([1, 2]))  # only reached when the load was not refused
    assert not marker.exists()
    msg = str(info.value)
    assert model in msg and repr(ref) in msg and "op 0" in msg, msg


@pytest.mark.parametrize("payload", ["subprocess.getoutput", "os.system", "builtins.eval",
                                     "paddle_hl.jit._save_load.save"])
@pytest.mark.parametrize("where", ["top", "attrs"])
def test_pdmodel_pickle_naming_a_callable_is_refused(tmp_path, payload, where):
    import builtins

    prefix = _saved_model(tmp_path)
    model = prefix + ".pdmodel"
    marker = tmp_path / "ran"
    fn = {"subprocess.getoutput": subprocess.getoutput, "os.system": os.system,
          "builtins.eval": builtins.eval,
          "paddle_hl.jit._save_load.save": paddle.jit.save}[payload]
    arg = f"open({str(marker)!r}, 'w')" if payload == "builtins.eval" else _marker_cmd(marker)
    call = _Call(fn, arg)
    if where == "top":
        body = pickle.dumps(call, protocol=4)
    else:
        prog = _program.loads(open(model, "rb").read(), model)
        prog["ops"][0]["attrs"] = {"x": call}
        body = pickle.dumps(prog, protocol=4)
    with open(model, "wb") as f:
        f.write(_program.MAGIC + body)
    with pytest.raises(pickle.UnpicklingError) as info:
        paddle.jit.load(prefix)
    assert not marker.exists()
    msg = str(info.value)
    assert model in msg and fn.__name__ in msg, msg


def test_pdmodel_protocol_0_global_reduce_is_refused(tmp_path):
    prefix = _saved_model(tmp_path)
    marker = tmp_path / "ran"
    body = f"cos\nsystem\n(V{_marker_cmd(marker)}\ntR.".encode()
    with open(prefix + ".pdmodel", "wb") as f:
        f.write(_program.MAGIC + body)
    with pytest.raises(pickle.UnpicklingError, match="os.system|posix.system"):
        paddle.jit.load(prefix)
    assert not marker.exists()


def test_every_kernel_a_saved_program_calls_is_in_the_registry(tmp_path):
    """The registry covers the kernels of a real network (conv, batch norm, pooling, linear,
    activations, reshapes) and a fresh process resolves them."""
    net = paddle.nn.Sequential(paddle.nn.Conv2D(1, 2, 3, padding=1), paddle.nn.BatchNorm2D(2),
                               paddle.nn.ReLU(), paddle.nn.MaxPool2D(2), paddle.nn.Flatten(),
                               paddle.nn.Linear(2 * 2 * 2, 3), paddle.nn.Softmax())
    prefix = str(tmp_path / "cnn")
    paddle.jit.save(net, prefix, [InputSpec([None, 1, 4, 4], "float32")])
    x = paddle.randn([2, 1, 4, 4])
    net.eval()
    np.testing.assert_allclose(paddle.jit.load(prefix)(x).numpy(), net(x).numpy(), rtol=1e-5)
    from ._helpers import run

    np.save(tmp_path / "x.npy", x.numpy())
    r = run("""
        import sys, numpy as np, paddle_hl as paddle
        y = paddle.jit.load(sys.argv[1])(paddle.to_tensor(np.load(sys.argv[2])))
        np.save(sys.argv[3], y.numpy())
        """, prefix, tmp_path / "x.npy", tmp_path / "y.npy")
    assert r.returncode == 0, r.stderr
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), net(x).numpy(), rtol=1e-5)


def test_pdiparams_info_naming_a_callable_is_refused(tmp_path):
    from paddle_hl.jit._save_load import read_state_dict

    prefix = _saved_model(tmp_path)
    marker = tmp_path / "ran"
    with open(prefix + ".pdiparams.info", "wb") as f:
        pickle.dump(_Call(os.system, _marker_cmd(marker)), f, protocol=2)
    with pytest.raises(pickle.UnpicklingError, match="system"):
        read_state_dict(prefix)
    assert not marker.exists()


# ----------------------------------------------------------------------------- paddle.load
@pytest.mark.parametrize("payload", ["subprocess.getoutput", "os.system", "builtins.eval"])
def test_paddle_load_refuses_callables_in_pdparams(tmp_path, payload):
    import builtins

    marker = tmp_path / "ran"
    fn = {"subprocess.getoutput": subprocess.getoutput, "os.system": os.system,
          "builtins.eval": builtins.eval}[payload]
    arg = f"open({str(marker)!r}, 'w')" if payload == "builtins.eval" else _marker_cmd(marker)
    path = tmp_path / "m.pdparams"
    with open(path, "wb") as f:
        pickle.dump({"w": np.ones(2, np.float32), "evil": _Call(fn, arg)}, f, protocol=2)
    with pytest.raises(pickle.UnpicklingError, match=fn.__name__):
        paddle.load(str(path))
    assert not marker.exists()


def test_model_load_goes_through_the_restricted_loader(tmp_path):
    net = paddle.nn.Linear(2, 2)
    model = paddle.Model(net)
    opt = paddle.optimizer.Adam(parameters=net.parameters())
    model.prepare(opt)
    net(paddle.ones([1, 2])).mean().backward()
    opt.step()  # so that there is an optimizer state (.pdopt) to save
    prefix = str(tmp_path / "ckpt")
    model.save(prefix)
    marker = tmp_path / "ran"
    for suffix in (".pdopt", ".pdparams"):
        good = open(prefix + suffix, "rb").read()
        save_id = good[good.rindex(b"\n#paddle_hl save id "):]  # the pair's shared save id
        with open(prefix + suffix, "wb") as f:
            pickle.dump({"evil": _Call(os.system, _marker_cmd(marker))}, f, protocol=2)
            f.write(save_id)
        with pytest.raises(pickle.UnpicklingError, match="system"):
            model.load(prefix)
        assert not marker.exists()
        with open(prefix + suffix, "wb") as f:
            f.write(good)
    model.load(prefix)


@pytest.mark.parity
def test_every_file_real_paddle_saves_still_loads(pd, tmp_path):
    """state_dicts, nested containers, optimizer and LR scheduler states, and single values
    written by real ``paddle.save`` load through the restricted unpickler."""
    pd.seed(0)
    net = pd.nn.Sequential(pd.nn.Linear(3, 4), pd.nn.BatchNorm1D(4), pd.nn.Linear(4, 2))
    sched = pd.optimizer.lr.StepDecay(0.1, step_size=2)
    opt = pd.optimizer.Adam(sched, parameters=net.parameters())
    net(pd.randn([5, 3])).mean().backward()
    opt.step()
    sched.step()
    objs = {
        "state.pdparams": net.state_dict(),
        "opt.pdopt": opt.state_dict(),
        "sched.pdparams": sched.state_dict(),
        "nested.pd": {"a": [net.state_dict(), {"b": (1, "x", 2.5)}], "c": [pd.ones([2])]},
        "tensor.pd": pd.to_tensor([[1.0, 2.0]]),
        "bf16.pd": pd.ones([2]).astype("bfloat16"),
        "ndarray.pd": np.arange(6, dtype=np.int64).reshape(2, 3),
        "int.pd": 7, "str.pd": "hello", "none.pd": None,
    }
    for name, obj in objs.items():
        for protocol in (2, 4):
            path = str(tmp_path / f"p{protocol}_{name}")
            pd.save(obj, path, protocol=protocol)
            got = paddle.load(path)
            want = pd.load(path)
            _same(got, want, f"{name} (protocol {protocol})")


def _same(got, want, where):
    if hasattr(want, "numpy") and not isinstance(want, np.ndarray):
        assert isinstance(got, paddle.Tensor), where
        w = want.astype("float32").numpy() if str(want.dtype).endswith("bfloat16") else \
            want.numpy()
        g = got.astype("float32").numpy() if got.dtype == paddle.bfloat16 else got.numpy()
        np.testing.assert_array_equal(g, w, err_msg=where)
    elif isinstance(want, dict):
        assert set(got) == set(want), where
        for k in want:
            _same(got[k], want[k], f"{where}[{k!r}]")
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{where}[{i}]")
    elif isinstance(want, np.ndarray):
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=where)
    else:
        assert got == want, where


# ----------------------------------------------------------------------------- archives
def _tar(members):
    """members: (name, kind, data_or_target) with kind 'file', 'sym' or 'hard'."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, kind, x in members:
            ti = tarfile.TarInfo(name)
            if kind == "file":
                ti.size = len(x)
                tf.addfile(ti, io.BytesIO(x))
            else:
                ti.type = tarfile.SYMTYPE if kind == "sym" else tarfile.LNKTYPE
                ti.linkname = x
                tf.addfile(ti)
    return buf.getvalue()


def _zip(members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, _, data in members:
            zf.writestr(name, data)
    return buf.getvalue()


_ESCAPES = {
    "dotdot": [("pkg/ok.txt", "file", b"ok"), ("pkg/../../escaped.txt", "file", b"x")],
    "absolute": [("pkg/ok.txt", "file", b"ok"), ("{abs}", "file", b"x")],
    "symlink_out": [("pkg/link", "sym", "../../.."), ("pkg/ok.txt", "file", b"ok")],
    "symlink_abs": [("pkg/link", "sym", "/etc/passwd"), ("pkg/ok.txt", "file", b"ok")],
    "hardlink_out": [("pkg/link", "hard", "../outside.txt"), ("pkg/ok.txt", "file", b"ok")],
}


def _members(case, tmp_path):
    return [(n.format(abs=str(tmp_path / "abs_escaped.txt")), k, x) for n, k, x in _ESCAPES[case]]


# zip archives carry no links (zipfile writes a link member as a plain file)
@pytest.mark.parametrize("case, fmt", [(c, "tar") for c in sorted(_ESCAPES)]
                         + [("dotdot", "zip"), ("absolute", "zip")])
def test_archive_extraction_refuses_members_escaping_the_folder(tmp_path, case, fmt):
    from paddle_hl.utils.download import extract_archive

    members = _members(case, tmp_path)
    archive = tmp_path / f"a.{'tar.gz' if fmt == 'tar' else 'zip'}"
    archive.write_bytes(_tar(members) if fmt == "tar" else _zip(members))
    dest = tmp_path / "deep" / "dest"
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    with pytest.raises(ValueError, match="refusing to extract"):
        extract_archive(str(archive), str(dest))
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before  # nothing written anywhere


@pytest.mark.parametrize("case", ["dotdot", "absolute", "symlink_out"])
def test_hub_cache_unpack_refuses_escaping_members(tmp_path, case):
    from hub import _repo

    members = [("repo-main/hubconf.py", "file", b"dependencies = []\n")] + _members(case,
                                                                                    tmp_path)
    archive = tmp_path / "main.tar.gz"
    archive.write_bytes(_tar(members))
    staging = tmp_path / "hub" / "staging"
    with pytest.raises(RuntimeError, match="refusing"):
        _repo.unpack(str(archive), str(staging), "https://example.invalid/main.tar.gz")
    assert not (tmp_path / "escaped.txt").exists()
    assert not (tmp_path / "abs_escaped.txt").exists()
    assert not staging.exists() or not any(staging.rglob("*"))


@pytest.mark.parametrize("which", ["0.metadata", "0_0.distcp"])
def test_distributed_checkpoint_refuses_callables(tmp_path, which):
    """distributed.load_state_dict reads its metadata and shard files through the restricted
    loader: a crafted file naming os.system is refused, and nothing runs."""
    import paddle_hl.distributed as dist

    net = paddle.nn.Linear(3, 2)
    state = {"model": net.state_dict()}
    dist.save_state_dict(state, str(tmp_path))
    marker = tmp_path / "ran"
    with open(tmp_path / which, "wb") as f:
        pickle.dump({"format": _Call(os.system, _marker_cmd(marker))}, f, protocol=4)
    with pytest.raises(pickle.UnpicklingError, match="refusing to load 'posix.system'"):
        dist.load_state_dict(state, str(tmp_path))
    assert not marker.exists()
