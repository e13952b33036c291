"""paddle_hl.utils.download against a real HTTP server on 127.0.0.1 (tests/http_server.py)."""

from __future__ import annotations

import hashlib
import io
import os
import re
import sys
import tarfile
import zipfile

import pytest

from paddle_hl.utils import download as dl
from tests.http_server import serve_directory


def _md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def _tar(members, mode="w:gz", dirs=()):
    """Bytes of a tar archive holding ``members`` ({name: bytes}) and directory entries."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tf:
        for d in dirs:
            ti = tarfile.TarInfo(d)
            ti.type = tarfile.DIRTYPE
            ti.mode = 0o755
            tf.addfile(ti)
        for name, data in members.items():
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            tf.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


def _zip(members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _leftovers(root):
    """Temporary download/extraction files left in ``root``."""
    if not os.path.isdir(root):
        return []
    return [n for n in os.listdir(root) if n.endswith((".part", ".extract"))]


@pytest.fixture
def file_server(tmp_path):
    with serve_directory(tmp_path / "www") as srv:
        yield srv


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("PADDLE_HL_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


PAYLOAD = bytes(range(256)) * 1200  # ~300 KB: several chunks


# --- plain downloads ----------------------------------------------------------------------------

def test_download_verifies_and_caches(file_server, tmp_path):
    url = file_server.put("models/w.pdparams", PAYLOAD)
    root = tmp_path / "cache"
    path = dl.get_path_from_url(url, str(root), _md5(PAYLOAD))
    assert path == str(root / "w.pdparams")
    with open(path, "rb") as f:
        assert f.read() == PAYLOAD
    # found in the cache: no second request
    assert dl.get_path_from_url(url, str(root), _md5(PAYLOAD)) == path
    assert file_server.hits("models/w.pdparams") == 1
    assert _leftovers(root) == []


def test_weights_home_follows_environment(file_server, home):
    url = file_server.put("w.pdparams", PAYLOAD)
    assert dl.WEIGHTS_HOME == str(home / "hapi" / "weights")
    assert dl.DATA_HOME == str(home / "dataset")
    path = dl.get_weights_path_from_url(url, _md5(PAYLOAD))
    assert path == os.path.join(str(home), "hapi", "weights", "w.pdparams")
    assert os.path.getsize(path) == len(PAYLOAD)


def test_default_home_is_user_cache(monkeypatch):
    monkeypatch.delenv("PADDLE_HL_HOME", raising=False)
    expected = os.path.expanduser(os.path.join("~", ".cache", "paddle", "hapi", "weights"))
    assert dl.WEIGHTS_HOME == expected


def test_md5_none_skips_check(file_server, tmp_path):
    url = file_server.put("a.bin", b"abc")
    path = dl.get_path_from_url(url, str(tmp_path / "c"))
    assert open(path, "rb").read() == b"abc"


def test_stale_cached_file_is_downloaded_again(file_server, tmp_path):
    url = file_server.put("a.bin", PAYLOAD)
    root = tmp_path / "c"
    root.mkdir()
    (root / "a.bin").write_bytes(b"old and wrong")
    path = dl.get_path_from_url(url, str(root), _md5(PAYLOAD))
    assert open(path, "rb").read() == PAYLOAD
    assert file_server.hits("a.bin") == 1


def test_check_exist_false_downloads_again(file_server, tmp_path):
    url = file_server.put("a.bin", PAYLOAD)
    root = str(tmp_path / "c")
    dl.get_path_from_url(url, root, _md5(PAYLOAD))
    dl.get_path_from_url(url, root, _md5(PAYLOAD), check_exist=False)
    assert file_server.hits("a.bin") == 2


def test_url_query_is_not_part_of_the_file_name(file_server, tmp_path):
    file_server.put("a.bin", b"xyz")
    path = dl.get_path_from_url(file_server.url("a.bin") + "?token=1", str(tmp_path / "c"))
    assert os.path.basename(path) == "a.bin"


def test_without_content_length(tmp_path):
    with serve_directory(tmp_path / "www", send_length=False) as srv:
        url = srv.put("a.bin", PAYLOAD)
        path = dl.get_path_from_url(url, str(tmp_path / "c"), _md5(PAYLOAD))
        assert open(path, "rb").read() == PAYLOAD
        # a cut-short body cannot be seen by its size here, but the md5 catches it
        srv.truncate("a.bin", times=1)
        path = dl.get_path_from_url(url, str(tmp_path / "d"), _md5(PAYLOAD))
        assert open(path, "rb").read() == PAYLOAD
        assert srv.hits("a.bin") == 3


# --- failures: retried once, then a clear error, never a corrupt cached file ---------------------

@pytest.mark.parametrize("fault", ["truncate", "corrupt", "drop", "fail"])
def test_one_failure_is_retried(file_server, tmp_path, fault):
    url = file_server.put("a.bin", PAYLOAD)
    getattr(file_server, fault)("a.bin", times=1)
    root = tmp_path / "c"
    path = dl.get_path_from_url(url, str(root), _md5(PAYLOAD))
    assert open(path, "rb").read() == PAYLOAD
    assert file_server.hits("a.bin") == 2
    assert _leftovers(root) == []


@pytest.mark.parametrize("fault,words", [
    # urllib3 2.x reports a short body itself (IncompleteRead); under urllib3 1.x the size check
    # after the stream catches it ("truncated")
    ("truncate", "IncompleteRead|truncated"), ("corrupt", "md5 mismatch"), ("drop", "aborted"),
    ("fail", "HTTP status 500")])
def test_two_failures_raise_and_leave_nothing(file_server, tmp_path, fault, words):
    url = file_server.put("a.bin", PAYLOAD)
    getattr(file_server, fault)("a.bin", times=2)
    root = tmp_path / "c"
    with pytest.raises(RuntimeError) as info:
        dl.get_path_from_url(url, str(root), _md5(PAYLOAD))
    msg = str(info.value)
    assert url in msg and re.search(words, msg)
    assert str(root / "a.bin") in msg and "by hand" in msg
    assert file_server.hits("a.bin") == 2
    assert os.listdir(root) == []


def test_truncated_download_detected_by_size_without_md5(file_server, tmp_path):
    url = file_server.put("a.bin", PAYLOAD)
    file_server.truncate("a.bin", times=2)
    with pytest.raises(RuntimeError, match="Download from .* failed after 2 attempts"):
        dl.get_path_from_url(url, str(tmp_path / "c"))
    assert not (tmp_path / "c" / "a.bin").exists()


def test_failed_refresh_keeps_the_good_cached_file(file_server, tmp_path):
    url = file_server.put("a.bin", PAYLOAD)
    root = tmp_path / "c"
    path = dl.get_path_from_url(url, str(root), _md5(PAYLOAD))
    file_server.truncate("a.bin", times=2)
    with pytest.raises(RuntimeError):
        dl.get_path_from_url(url, str(root), _md5(PAYLOAD), check_exist=False)
    assert open(path, "rb").read() == PAYLOAD
    assert _leftovers(root) == []


def test_not_found(file_server, tmp_path):
    with pytest.raises(RuntimeError, match="HTTP status 404"):
        dl.get_path_from_url(file_server.url("missing.bin"), str(tmp_path / "c"))


def test_unreachable_server_says_where_to_put_the_file(tmp_path):
    with serve_directory(tmp_path / "www") as srv:
        url = srv.put("w.pdparams", b"x")
    # the server is gone: connection refused
    with pytest.raises(RuntimeError) as info:
        dl.get_path_from_url(url, str(tmp_path / "c"), "0" * 32)
    msg = str(info.value)
    assert url in msg and "offline" in msg
    assert os.path.join(str(tmp_path / "c"), "w.pdparams") in msg and "0" * 32 in msg


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="not a url"):
        dl.get_path_from_url("/local/file.tar", str(tmp_path))
    # Paddle asserts here: the error is an AssertionError too
    with pytest.raises(AssertionError):
        dl.get_path_from_url("ftp://host/file.tar", str(tmp_path))
    with pytest.raises(ValueError, match="method"):
        dl.get_path_from_url("http://127.0.0.1:1/a.bin", str(tmp_path), method="wget")
    assert dl.is_url("https://x/y") and not dl.is_url("x/y") and not dl.is_url(None)


def test_progress_bar_only_in_a_terminal(file_server, tmp_path, monkeypatch):
    url = file_server.put("a.bin", PAYLOAD)

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    dl.get_path_from_url(url, str(tmp_path / "c"))
    assert "a.bin" in term.getvalue() and "100%" in term.getvalue()

    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stderr", pipe)
    dl.get_path_from_url(url, str(tmp_path / "d"))
    assert pipe.getvalue() == ""


# --- archives -----------------------------------------------------------------------------------

def test_single_file_archive(file_server, tmp_path):
    url = file_server.put("one.tar.gz", _tar({"f.txt": b"hello"}))
    path = dl.get_path_from_url(url, str(tmp_path / "c"))
    assert path == str(tmp_path / "c" / "f.txt")
    assert open(path, "rb").read() == b"hello"


@pytest.mark.parametrize("dirs", [("top", "top/b"), ()])
def test_single_directory_archive(file_server, tmp_path, dirs):
    data = _tar({"top/a.txt": b"a", "top/b/c.txt": b"c"}, dirs=dirs)
    url = file_server.put("dir.tgz", data)
    path = dl.get_path_from_url(url, str(tmp_path / "c"))
    assert path == str(tmp_path / "c" / "top")
    assert open(os.path.join(path, "b", "c.txt"), "rb").read() == b"c"


@pytest.mark.parametrize("name,maker", [("multi.tar.gz", _tar), ("multi.zip", _zip),
                                        ("multi.tar", lambda m: _tar(m, mode="w"))])
def test_multi_file_archive_goes_to_a_named_directory(file_server, tmp_path, name, maker):
    url = file_server.put(name, maker({"a.txt": b"a", "sub/b.txt": b"b"}))
    root = tmp_path / "c"
    path = dl.get_path_from_url(url, str(root))
    assert path == str(root / "multi")
    assert sorted(os.listdir(path)) == ["a.txt", "sub"]
    assert (root / "multi" / "sub" / "b.txt").read_bytes() == b"b"
    assert _leftovers(root) == []


def test_archive_extracted_in_one_extractall_call(file_server, tmp_path, monkeypatch):
    """A multi-file archive is extracted by one extractall call, then the path returned."""
    calls = []
    real = tarfile.TarFile.extractall

    def counting(self, *args, **kwargs):
        calls.append(args)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(tarfile.TarFile, "extractall", counting)
    members = {f"d{i}/f{j}.txt": bytes([i, j]) for i in range(3) for j in range(4)}
    url = file_server.put("many.tar.gz", _tar(members))
    path = dl.get_path_from_url(url, str(tmp_path / "c"))
    assert len(calls) == 1
    assert path == str(tmp_path / "c" / "many")
    assert (tmp_path / "c" / "many" / "d2" / "f3.txt").read_bytes() == bytes([2, 3])


def test_decompress_false_returns_the_archive(file_server, tmp_path):
    data = _tar({"a.txt": b"a", "b.txt": b"b"})
    url = file_server.put("m.tar.gz", data)
    path = dl.get_path_from_url(url, str(tmp_path / "c"), _md5(data), decompress=False)
    assert path == str(tmp_path / "c" / "m.tar.gz")
    assert os.listdir(tmp_path / "c") == ["m.tar.gz"]


def test_cached_archive_not_extracted_again_unless_forced(file_server, tmp_path):
    data = _tar({"a.txt": b"a", "b.txt": b"b"})
    url = file_server.put("m.tar.gz", data)
    root = str(tmp_path / "c")
    path = dl.get_path_from_url(url, root, _md5(data))
    with open(os.path.join(path, "a.txt"), "wb") as f:
        f.write(b"edited")
    dl.get_path_from_url(url, root, _md5(data))
    assert open(os.path.join(path, "a.txt"), "rb").read() == b"edited"
    dl.get_path_from_url(url, root, _md5(data), check_exist=False)
    assert open(os.path.join(path, "a.txt"), "rb").read() == b"a"


def _evil_tar(kind):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        if kind == "dotdot":
            ti = tarfile.TarInfo("../evil.txt")
            ti.size = 4
            tf.addfile(ti, io.BytesIO(b"evil"))
        elif kind == "absolute":
            ti = tarfile.TarInfo("/tmp/evil.txt")
            ti.size = 4
            tf.addfile(ti, io.BytesIO(b"evil"))
        elif kind == "symlink":
            ti = tarfile.TarInfo("d/link")
            ti.type = tarfile.SYMTYPE
            ti.linkname = "../../outside"
            tf.addfile(ti)
        elif kind == "device":
            ti = tarfile.TarInfo("dev")
            ti.type = tarfile.CHRTYPE
            tf.addfile(ti)
    return buf.getvalue()


@pytest.mark.parametrize("kind", ["dotdot", "absolute", "symlink", "device"])
def test_unsafe_tar_members_are_refused(file_server, tmp_path, kind):
    url = file_server.put(f"evil-{kind}.tar", _evil_tar(kind))
    root = tmp_path / "deep" / "c"
    with pytest.raises(ValueError, match="refusing to extract"):
        dl.get_path_from_url(url, str(root))
    assert not (tmp_path / "deep" / "evil.txt").exists()
    assert sorted(os.listdir(root)) == [f"evil-{kind}.tar"]


def test_unsafe_zip_member_is_refused(file_server, tmp_path):
    url = file_server.put("evil.zip", _zip({"ok.txt": b"1", "../evil.txt": b"2"}))
    with pytest.raises(ValueError, match="outside the target directory"):
        dl.get_path_from_url(url, str(tmp_path / "c"))
    assert not (tmp_path / "evil.txt").exists()


def test_symlink_inside_archive_is_allowed(file_server, tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        ti = tarfile.TarInfo("top/real.txt")
        ti.size = 2
        tf.addfile(ti, io.BytesIO(b"ok"))
        ti = tarfile.TarInfo("top/link.txt")
        ti.type = tarfile.SYMTYPE
        ti.linkname = "real.txt"
        tf.addfile(ti)
    url = file_server.put("links.tar", buf.getvalue())
    path = dl.get_path_from_url(url, str(tmp_path / "c"))
    assert open(os.path.join(path, "link.txt"), "rb").read() == b"ok"


def test_extract_archive_replaces_entries(tmp_path):
    archive = tmp_path / "a.tar.gz"
    archive.write_bytes(_tar({"x/1.txt": b"new", "y.txt": b"y"}))
    dest = tmp_path / "out"
    (dest / "x").mkdir(parents=True)
    (dest / "x" / "stale.txt").write_bytes(b"stale")
    (dest / "keep.txt").write_bytes(b"keep")
    assert dl.extract_archive(str(archive), str(dest)) == str(dest)
    assert sorted(os.listdir(dest)) == ["keep.txt", "x", "y.txt"]
    assert os.listdir(dest / "x") == ["1.txt"]
    assert [n for n in os.listdir(tmp_path) if n.endswith(".extract")] == []
    with pytest.raises(ValueError, match="neither a tar nor a zip"):
        dl.extract_archive(str(dest / "y.txt"), str(dest))


# --- parity with Paddle 2.6.2 -------------------------------------------------------------------

@pytest.mark.parity
@pytest.mark.parametrize("name,members,dirs", [
    ("one.tar.gz", {"f.txt": b"x"}, ()),
    ("dir.tgz", {"top/a.txt": b"a", "top/b/c.txt": b"c"}, ("top", "top/b")),
    ("plain.pdparams", None, ()),
])
def test_parity_returned_paths(pd, file_server, tmp_path, name, members, dirs):
    from paddle.utils.download import get_path_from_url as pd_get

    data = _tar(members, dirs=dirs) if members else PAYLOAD
    url = file_server.put(name, data)
    ours = dl.get_path_from_url(url, str(tmp_path / "ours"), _md5(data))
    theirs = pd_get(url, str(tmp_path / "theirs"), _md5(data))
    assert os.path.relpath(ours, tmp_path / "ours") == os.path.relpath(theirs,
                                                                       tmp_path / "theirs")
    assert sorted(os.listdir(tmp_path / "ours")) == sorted(os.listdir(tmp_path / "theirs"))


@pytest.mark.parity
def test_parity_signatures(pd):
    import inspect

    from paddle.utils import download as theirs

    for name in ("get_path_from_url", "get_weights_path_from_url", "is_url"):
        a = inspect.signature(getattr(dl, name)).parameters.values()
        b = inspect.signature(getattr(theirs, name)).parameters.values()
        assert [(p.name, p.default) for p in a] == [(p.name, p.default) for p in b], name
    assert dl.__all__ == theirs.__all__


def test_cached_file_has_default_permissions(file_server, tmp_path):
    url = file_server.put("a.bin", b"abc")
    path = dl.get_path_from_url(url, str(tmp_path / "c"))
    probe = tmp_path / "probe"
    probe.write_bytes(b"")
    assert os.stat(path).st_mode & 0o777 == os.stat(probe).st_mode & 0o777
    url = file_server.put("m.tar.gz", _tar({"a.txt": b"a", "b.txt": b"b"}))
    path = dl.get_path_from_url(url, str(tmp_path / "c"))
    (tmp_path / "probe_dir").mkdir()
    assert os.stat(path).st_mode & 0o777 == os.stat(tmp_path / "probe_dir").st_mode & 0o777
