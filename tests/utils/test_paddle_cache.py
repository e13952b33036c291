"""Datasets, pretrained weights and hub repositories live in Paddle's cache folders
(``~/.cache/paddle/dataset``, ``~/.cache/paddle/hapi/weights``, ``~/.cache/paddle/hub``), so
what Paddle downloaded is used without a request, and Paddle finds what paddle_hl downloaded.

Every test runs with ``HOME`` in a temporary folder (no test touches the real home), and counts
the requests a local HTTP server receives.
"""

from __future__ import annotations

import hashlib
import os
import sys

import pytest

import paddle_hl
from paddle_hl.utils import download as dl
from tests.http_server import serve_directory
from tests.hub._repos import SIBLING, repo_files

PAYLOAD = bytes(range(256)) * 64


def _md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A fresh home folder and none of paddle_hl's cache variables."""
    home = tmp_path / "user"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in ("PADDLE_HL_HOME", "PADDLE_HL_HUB_DIR"):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def server(tmp_path):
    with serve_directory(tmp_path / "www") as srv:
        yield srv


def _place(path, data: bytes):
    """Leave a file where Paddle's downloader leaves it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_default_folders_are_paddles(home):
    from hub import _repo

    assert dl.WEIGHTS_HOME == str(home / ".cache" / "paddle" / "hapi" / "weights")
    assert dl.DATA_HOME == str(home / ".cache" / "paddle" / "dataset")
    assert paddle_hl.dataset.common.DATA_HOME == dl.DATA_HOME
    assert _repo.hub_dir() == str(home / ".cache" / "paddle" / "hub")


def test_paddle_hl_home_overrides_everything(home, tmp_path, monkeypatch):
    from hub import _repo

    monkeypatch.setenv("PADDLE_HL_HOME", str(tmp_path / "elsewhere"))
    assert dl.WEIGHTS_HOME == str(tmp_path / "elsewhere" / "hapi" / "weights")
    assert dl.DATA_HOME == str(tmp_path / "elsewhere" / "dataset")
    assert _repo.hub_dir() == str(tmp_path / "elsewhere" / "hub")
    assert dl._lock_path("x").startswith(str(tmp_path / "elsewhere" / ".locks"))


def test_read_only_home_puts_datasets_in_the_temporary_folder(home, tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, *a, **k: (
        False if os.fspath(p) == str(home) else real_access(p, mode, *a, **k)))
    assert dl.DATA_HOME == str(tmp_path / "tmp" / ".cache" / "paddle" / "dataset")


def test_weights_paddle_downloaded_are_used_without_a_request(home, server):
    url = server.put("models/resnet_tiny.pdparams", PAYLOAD)
    placed = _place(home / ".cache/paddle/hapi/weights/resnet_tiny.pdparams", PAYLOAD)
    assert dl.get_weights_path_from_url(url, _md5(PAYLOAD)) == str(placed)
    assert server.requests == []
    # a copy with the wrong md5 (damaged) is replaced by a checked download
    placed.write_bytes(b"damaged")
    assert dl.get_weights_path_from_url(url, _md5(PAYLOAD)) == str(placed)
    assert placed.read_bytes() == PAYLOAD and server.hits("models/resnet_tiny.pdparams") == 1
    # the lock stays in the root's .locks folder, never beside Paddle's files
    assert os.listdir(placed.parent) == ["resnet_tiny.pdparams"]
    assert os.path.isdir(home / ".cache/paddle/.locks")


def test_dataset_paddle_downloaded_is_used_without_a_request(home, server):
    rows = "\n".join(" ".join(str(float(i * 14 + j)) for j in range(14)) for i in range(20))
    data = (rows + "\n").encode()
    url = server.put("uci_housing/housing.data", data)
    placed = _place(home / ".cache/paddle/dataset/uci_housing/housing.data", data)
    from paddle_hl.text.datasets import uci_housing

    orig = uci_housing.URL, uci_housing.MD5
    uci_housing.URL, uci_housing.MD5 = url, _md5(data)
    try:
        ds = paddle_hl.text.datasets.UCIHousing(mode="train")
    finally:
        uci_housing.URL, uci_housing.MD5 = orig
    assert ds.data_file == str(placed) and len(ds) > 0
    # paddle.dataset.common.download finds the same file
    found = paddle_hl.dataset.common.download(url, "uci_housing", _md5(data))
    assert found == str(placed)
    assert server.requests == []


def test_dataset_common_download_is_checked_and_locked(home, server):
    url = server.put("d/mnist.gz", PAYLOAD)
    path = paddle_hl.dataset.common.download(url, "mnist", _md5(PAYLOAD))
    assert path == str(home / ".cache/paddle/dataset/mnist/mnist.gz")
    assert os.listdir(os.path.dirname(path)) == ["mnist.gz"]  # nothing but the file
    server.corrupt("d/other.gz", times=5)
    server.put("d/other.gz", PAYLOAD)
    with pytest.raises(RuntimeError, match="md5"):
        paddle_hl.dataset.common.download(server.url("d/other.gz"), "mnist", _md5(PAYLOAD))
    assert sorted(os.listdir(os.path.dirname(path))) == ["mnist.gz"]  # no half file published


@pytest.fixture
def _forget_repo_modules():
    yield
    sys.modules.pop(SIBLING, None)


def test_hub_repository_paddle_downloaded_is_used(home, server, monkeypatch,
                                                  _forget_repo_modules):
    monkeypatch.setenv("PADDLE_HL_HUB_GITHUB_URL", server.base_url)
    # Paddle's layout: <hub>/<owner>_<repo>_<branch>, the archive's top folder renamed to it
    repo = home / ".cache/paddle/hub/alice_models_main"
    for rel, data in repo_files(version=7).items():
        _place(repo / rel, data)
    out = paddle_hl.hub.load("alice/models", "tiny", trust_repo=True)
    assert out["version"] == 7
    assert paddle_hl.hub.list("alice/models", trust_repo=True)
    assert server.requests == []


@pytest.mark.parity
def test_same_folders_as_paddle(pd):
    # Paddle fixes its folders at import time from the real home; ours, without overrides,
    # are the same strings
    env = {k: os.environ.pop(k) for k in ("PADDLE_HL_HOME", "PADDLE_HL_HUB_DIR")
           if k in os.environ}
    try:
        from hub import _repo

        assert dl.WEIGHTS_HOME == pd.utils.download.WEIGHTS_HOME
        assert dl.DATA_HOME == pd.dataset.common.DATA_HOME
        assert _repo.hub_dir() == pd.hapi.hub.HUB_DIR
    finally:
        os.environ.update(env)


@pytest.mark.parity
def test_paddle_uses_what_paddle_hl_downloaded(pd, home, server, monkeypatch):
    # point Paddle's folders at the temporary home, as they would be for that user
    monkeypatch.setattr(pd.utils.download, "WEIGHTS_HOME", dl.WEIGHTS_HOME)
    monkeypatch.setattr(pd.dataset.common, "DATA_HOME", dl.DATA_HOME)
    url = server.put("w/net.pdparams", PAYLOAD)
    ours = dl.get_weights_path_from_url(url, _md5(PAYLOAD))
    assert pd.utils.download.get_weights_path_from_url(url, _md5(PAYLOAD)) == ours
    durl = server.put("d/train.txt", PAYLOAD)
    ours = paddle_hl.dataset.common.download(durl, "toy", _md5(PAYLOAD))
    assert pd.dataset.common.download(durl, "toy", _md5(PAYLOAD)) == ours
    assert len(server.requests) == 2  # one each, by paddle_hl; Paddle fetched nothing
    # and the other way round: what Paddle leaves is what paddle_hl reads
    placed = _place(home / ".cache/paddle/dataset/toy/more.txt", b"abc")
    murl = server.put("d/more.txt", b"abc")
    assert pd.dataset.common.download(murl, "toy", _md5(b"abc")) == str(placed)
    assert paddle_hl.dataset.common.download(murl, "toy", _md5(b"abc")) == str(placed)
    assert len(server.requests) == 2
