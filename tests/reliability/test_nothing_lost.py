"""Nothing lost: a failed write keeps the previous file, a cut file is named with the byte it
stops at, and a corrupt numba cache is discarded and rebuilt instead of switching the compiled
kernels off.

Writers under test: ``jit.save`` (three files written as one), ``onnx.export`` and
``paddle.save``, through a writer that fails after writing part of a file and through a real
full disk (a 64 KiB tmpfs, where the test can mount one).
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess

import numpy as np
import pytest

import paddle_hl as paddle
from paddle_hl.static import InputSpec

from ._helpers import run


def _net(n_in, n_out, seed):
    paddle.seed(seed)
    return paddle.nn.Linear(n_in, n_out)


def _files(folder):
    return {name: (folder / name).read_bytes() for name in sorted(os.listdir(folder))}


def _jit_save(net, prefix):
    paddle.jit.save(net, str(prefix), [InputSpec([None, net.weight.shape[0]], "float32")])


def _onnx_export(net, prefix):
    pytest.importorskip("onnx")
    paddle.onnx.export(net, str(prefix), [InputSpec([None, net.weight.shape[0]], "float32")])


def _paddle_save(net, prefix):
    paddle.save(net.state_dict(), str(prefix) + ".pdparams")


WRITERS = {"jit.save": _jit_save, "onnx.export": _onnx_export, "paddle.save": _paddle_save}


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_failure_after_a_partial_write_keeps_the_previous_files(tmp_path, monkeypatch, writer):
    """The disk fills up after part of the new files was written (the fsync that makes them
    durable fails): the previous model is intact and no temporary file is left."""
    save = WRITERS[writer]
    folder = tmp_path / "out"
    folder.mkdir()
    save(_net(3, 2, 0), folder / "model")
    before = _files(folder)

    def full_disk(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space left"):
        save(_net(3, 2, 1), folder / "model")
    monkeypatch.undo()
    assert _files(folder) == before


@contextlib.contextmanager
def _small_disk(folder, size="64k"):
    folder.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {r.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_full_disk_keeps_the_previous_files(tmp_path, writer):
    """A real full disk: the second, larger model (80 KB of weights) does not fit in 64 KiB."""
    save = WRITERS[writer]
    with _small_disk(tmp_path / "disk") as disk:
        small = _net(4, 3, 0)
        save(small, disk / "model")
        before = _files(disk)
        with pytest.raises(OSError) as info:
            save(_net(200, 100, 1), disk / "model")
        assert info.value.errno == errno.ENOSPC
        assert _files(disk) == before
        if writer == "jit.save":
            x = paddle.randn([2, 4])
            np.testing.assert_allclose(paddle.jit.load(str(disk / "model"))(x).numpy(),
                                       small(x).numpy(), rtol=1e-6)


# ----------------------------------------------------------------------------- cut files
@pytest.fixture
def saved(tmp_path):
    net = paddle.nn.Sequential(paddle.nn.Linear(4, 8), paddle.nn.ReLU(), paddle.nn.Linear(8, 2))
    prefix = tmp_path / "m"
    paddle.jit.save(net, str(prefix), [InputSpec([None, 4], "float32")])
    return prefix


def _cut(path, n):
    data = path.read_bytes()
    path.write_bytes(data[:n])
    return len(data)


@pytest.mark.parametrize("at", [0, 7, 12, 20, 30, "first data", "mid", "last"])
def test_truncated_pdiparams_names_the_file_and_the_byte(saved, at):
    path = saved.with_suffix(".pdiparams")
    size = path.stat().st_size
    # each tensor starts with a 20-byte header and a short TensorDesc; "first data" cuts
    # inside the data of the first one (a [4, 8] or [8] float32 parameter)
    n = {"first data": 40, "mid": size // 2, "last": size - 1}.get(at, at)
    _cut(path, n)
    with pytest.raises(ValueError) as info:
        paddle.jit.load(str(saved))
    msg = str(info.value)
    assert str(path) in msg and f"truncated at byte {n}" in msg, msg
    if at in ("first data", "mid", "last"):
        assert "expected" in msg and "bytes for tensor" in msg and "float32" in msg, msg


@pytest.mark.parametrize("at", [0, 5, 8, 9, 40, "mid", "last"])
def test_truncated_pdmodel_names_the_file_and_the_byte(saved, at):
    path = saved.with_suffix(".pdmodel")
    size = path.stat().st_size
    n = {"mid": size // 2, "last": size - 1}.get(at, at)
    _cut(path, n)
    with pytest.raises(ValueError) as info:
        paddle.jit.load(str(saved))
    msg = str(info.value)
    assert str(path) in msg and f"truncated at byte {n}" in msg, msg


@pytest.mark.parametrize("at", [0, 1, 2, 30, "mid", "last"])
def test_truncated_pdparams_names_the_file_and_the_byte(tmp_path, at):
    path = tmp_path / "w.pdparams"
    paddle.save(_net(30, 20, 0).state_dict(), str(path))
    size = path.stat().st_size
    n = {"mid": size // 2, "last": size - 1}.get(at, at)
    _cut(path, n)
    with pytest.raises(ValueError) as info:
        paddle.load(str(path))
    msg = str(info.value)
    assert str(path) in msg and f"truncated at byte {n}" in msg, msg


def test_whole_files_still_load(saved):
    x = paddle.randn([3, 4])
    layer = paddle.jit.load(str(saved))
    assert layer(x).shape == [3, 2]


# ----------------------------------------------------------------------------- numba cache
def test_corrupt_cache_entries_are_found_and_only_they_are_removed(tmp_path):
    """The check reads opcodes only: whole pickles stay, empty and garbled files go."""
    import pickle

    from paddle_hl.backend import _numba

    good_index = pickle.dumps("0.0.0") + pickle.dumps(("stamp", {"sig": "x.1.nbc"}))
    good_data = pickle.dumps((b"\x00" * 100, {"k": 1}), protocol=5)
    files = {
        "norm.k-1.py311.nbi": good_index, "norm.k-1.py311.1.nbc": good_data,
        "norm.e-2.py311.nbi": b"", "norm.e-2.py311.1.nbc": b"",
        "norm.g-3.py311.nbi": pickle.dumps("0.0.0") + b"garbage", "norm.g-3.py311.1.nbc":
            b"garbagegarbage", "norm.t-4.py311.1.nbc": good_data[:len(good_data) // 2],
        "other.f-5.py311.nbi": b"",  # another module's entry is left alone
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    assert _numba._discard_cache({str(tmp_path)}) == 5
    assert sorted(os.listdir(tmp_path)) == ["norm.k-1.py311.1.nbc", "norm.k-1.py311.nbi",
                                            "other.f-5.py311.nbi"]


_CHECK_KERNELS = """
import warnings
warnings.simplefilter("always")
import numpy as np
from paddle_hl.backend import _numba
print("ENABLED", _numba.enabled(), _numba.unavailable_reason())
# the compiled Adam update is bit for bit the NumPy passes
p, g, m, v = (np.linspace(-1, 1, 50).astype(np.float32) for _ in range(4))
v = np.abs(v)
want = [a.copy() for a in (p, m, v)]
lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-8
want[1] = b1 * want[1] + (1 - b1) * g
want[2] = b2 * want[2] + (1 - b2) * g * g
want[0] = want[0] - lr * want[1] / (np.sqrt(want[2]) + eps)
# the scalars of a step whose bias corrections are 1: lr_t = lr, eps_t = eps
used = _numba.optim.adam_update(p, g, m, v, lr, b1, b2, 1 - b1, 1 - b2, eps, 1.0)
print("CLOSE", used and np.allclose(p, want[0], rtol=1e-5, atol=1e-7))
"""


@pytest.mark.slow
def test_corrupt_numba_cache_is_discarded_and_rebuilt(tmp_path):
    """Warm a private cache, empty one entry and garble others, run again: the kernels stay
    on, with one warning naming the count and the folder; the next run warns no more."""
    pytest.importorskip("numba")
    cache = tmp_path / "numba"
    env = {"NUMBA_CACHE_DIR": str(cache), "PADDLE_HL_NUMBA": "1"}
    first = run(_CHECK_KERNELS, timeout=300, **env)
    assert "ENABLED True None" in first.stdout, first.stdout + first.stderr
    entries = sorted(p for p in cache.rglob("*.*") if p.suffix in (".nbi", ".nbc")
                     and p.name.startswith(("optim.", "norm.")))
    index = [p for p in entries if p.suffix == ".nbi" and "adam" in p.name]
    data = [p for p in entries if p.suffix == ".nbc" and "bn_forward" in p.name]
    assert index and data, entries
    index[0].write_bytes(b"")
    for p in data:
        p.write_bytes(b"garbage" * 10)
    second = run(_CHECK_KERNELS, timeout=300, **env)
    out = second.stdout + second.stderr
    assert "ENABLED True None" in second.stdout and "CLOSE True" in second.stdout, out
    assert f"discarded {1 + len(data)} corrupt cache entries in {index[0].parent}" in out, out
    third = run(_CHECK_KERNELS, timeout=300, **env)
    assert "ENABLED True None" in third.stdout and "CLOSE True" in third.stdout, third.stderr
    assert "discarded" not in third.stdout + third.stderr


# ------------------------------------------------------------- the other files the library writes


def _profile(n_ops):
    prof = paddle.profiler.Profiler(targets=[paddle.profiler.ProfilerTarget.CPU])
    prof.start()
    x = paddle.ones([2, 2])
    for _ in range(n_ops):
        x = x + 1
    prof.stop()
    return prof


def _profiler_json(size, path):
    _profile(size).export(str(path), format="json")


def _timeline_html(size, path):
    _profile(size * 10).timeline().save(str(path))


def _audio_wav(size, path):
    paddle.audio.save(str(path), paddle.to_tensor(np.zeros((1, size * 400), np.float32)), 8000)


def _wave_backend_wav(size, path):
    from paddle_hl.audio.backends import wave_backend

    wave_backend.save(str(path), paddle.to_tensor(np.zeros((1, size * 400), np.float32)), 8000)


SMALL_WRITERS = {"profiler export": _profiler_json, "timeline save": _timeline_html,
                 "audio save": _audio_wav, "audio save (wave backend)": _wave_backend_wav}


@pytest.mark.parametrize("writer", sorted(SMALL_WRITERS))
def test_full_disk_keeps_the_previous_profile_page_and_sound(tmp_path, writer):
    """The profiler's trace, the timeline page and a WAV file go through a temporary file too:
    a disk that fills up while the larger second file is written keeps the first one whole and
    leaves no temporary file behind."""
    write = SMALL_WRITERS[writer]
    with _small_disk(tmp_path / "disk") as disk:
        target = disk / "out.wav"
        write(2, target)
        before = _files(disk)
        with pytest.raises(OSError) as info:
            write(400, target)
        # soundfile reports a short write without an errno; the others say ENOSPC
        assert info.value.errno in (errno.ENOSPC, None)
        assert _files(disk) == before
