"""The download cache under concurrency, kills and hostile archives: real processes fetching
the same archive from tests/http_server.py at once, a download killed with SIGKILL, a zip bomb,
truncated archives."""

from __future__ import annotations

import os
import signal
import sys
import time
import zipfile

import pytest

from paddle_hl.utils import download as dl
from tests.http_server import serve_directory

from ._helpers import popen, run, tar_gz, zip_of

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and flock")

N_FILES = 300
MEMBERS = {f"data/part{i // 50}/f{i}.txt": (f"{i}\n" * 200).encode() for i in range(N_FILES)}

FETCH = """
import sys
from paddle_hl.utils.download import get_path_from_url
url, root, check = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
for _ in range(int(sys.argv[4])):
    path = get_path_from_url(url, root, check_exist=check)
print(path)
"""


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    # the locks live in the cache home; child processes inherit it through the environment
    monkeypatch.setenv("PADDLE_HL_HOME", str(tmp_path / "home"))


@pytest.fixture
def server(tmp_path):
    with serve_directory(tmp_path / "www") as srv:
        yield srv


def _count_files(top):
    return sum(len(files) for _, _, files in os.walk(top))


def test_concurrent_fetch_and_extract_of_one_archive(server, tmp_path):
    url = server.put("data.tar.gz", tar_gz(MEMBERS))
    root = tmp_path / "cache"
    procs = [popen(FETCH, url, root, 1, 1) for _ in range(3)]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert out.strip() == str(root / "data")
    assert server.hits("data.tar.gz") == 1  # one process downloaded, the others waited
    assert os.path.isfile(dl._lock_path(str(root / "data.tar.gz")))
    assert sorted(os.listdir(root)) == ["data", "data.tar.gz"]  # the cache holds only data
    assert _count_files(root / "data") == N_FILES
    assert [n for n in os.listdir(root) if n.endswith((".part", ".extract"))] == []


@pytest.mark.slow  # several seconds of real processes re-publishing
def test_readers_never_see_a_half_published_tree(server, tmp_path):
    url = server.put("data.tar.gz", tar_gz(MEMBERS))
    root = tmp_path / "cache"
    dl.get_path_from_url(url, str(root))
    # two processes keep re-downloading and re-publishing the tree (check_exist=False)
    procs = [popen(FETCH, url, root, 0, 3) for _ in range(2)]
    seen, checked = set(), 0
    deadline = time.monotonic() + 120
    while any(p.poll() is None for p in procs) and time.monotonic() < deadline:
        # A walk during which the folder stayed the same one (same inode) must find it whole:
        # nothing is ever written into or deleted from a published tree in place. (Absent for
        # an instant, or swapped for a new whole tree during the walk, is fine.)
        try:
            before = os.stat(root / "data").st_ino
            n = _count_files(root / "data")
            after = os.stat(root / "data").st_ino
        except FileNotFoundError:
            continue
        if before == after:
            seen.add(n)
            checked += 1
        time.sleep(0.002)  # leave the two cores to the publishers
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
    assert checked and seen == {N_FILES}, f"a reader saw a partial tree: {sorted(seen)} files"
    assert _count_files(root / "data") == N_FILES


KILLED = """
import os, sys, time
from paddle_hl.utils import download as dl

class Stall:
    def __init__(self):
        self.n = 0
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        return False
    def update(self, n):
        self.n += n
        if self.n > 100000:
            open(sys.argv[3], "w").close()
            time.sleep(600)

dl._progress = lambda total, desc: Stall()
dl.get_path_from_url(sys.argv[1], sys.argv[2])
"""


def test_killed_download_leaves_a_part_file_that_the_next_download_removes(server, tmp_path):
    big = server.put("big.bin", os.urandom(1 << 20))
    small = server.put("small.bin", b"small file")
    root = tmp_path / "cache"
    ready = tmp_path / "ready"
    proc = popen(KILLED, big, root, ready)
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline, "the download never started"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    parts = [n for n in os.listdir(root) if n.endswith(".part")]
    assert len(parts) == 1 and parts[0].startswith("big.bin.")
    # another file into the same cache clears the orphan (its process is dead)
    assert dl.get_path_from_url(small, str(root)) == str(root / "small.bin")
    assert [n for n in os.listdir(root) if n.endswith(".part")] == []
    # the killed process's lock was released by the OS: the same file downloads fine
    res = run(FETCH, big, root, 1, 1, timeout=60)
    assert res.returncode == 0, res.stderr
    assert os.path.getsize(root / "big.bin") == 1 << 20


def test_part_file_of_a_live_process_is_kept(tmp_path):
    root = tmp_path / "cache"
    root.mkdir()
    live = root / f"x.bin.{os.getppid()}.0123abcd.part"
    dead_pid = 2 ** 22 + 12345  # above Linux's default pid_max: no such process
    dead = root / f"x.bin.{dead_pid}.0123abcd.part"
    old = root / f"y.bin.{os.getppid()}.89abcdef.part"
    for p in (live, dead, old):
        p.write_bytes(b"partial")
    os.utime(old, (time.time() - 2 * 86400,) * 2)
    dl._clean_stale_partials(str(root))
    assert sorted(os.listdir(root)) == [live.name]


def _bomb(nbytes):
    """A deflated zip of ``nbytes`` zeros, written in 1 MiB pieces."""
    import io

    buf = io.BytesIO()
    chunk = bytes(1 << 20)
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf, zf.open("zeros.bin", "w") as f:
        for _ in range(nbytes >> 20):
            f.write(chunk)
    return buf.getvalue()


def test_zip_bomb_refused_with_clear_error(server, tmp_path):
    data = _bomb(200 << 20)
    assert len(data) < 250_000  # about 199 KB
    url = server.put("bomb.zip", data)
    root = tmp_path / "cache"
    with pytest.raises(ValueError) as info:
        dl.get_path_from_url(url, str(root))
    msg = str(info.value)
    assert "zip bomb" in msg and "bomb.zip" in msg and str(200 << 20) in msg
    assert "PADDLE_HL_MAX_COMPRESSION_RATIO" in msg
    assert not (root / "zeros.bin").exists()
    assert [n for n in os.listdir(root) if n.endswith(".extract")] == []


def test_extraction_limits_can_be_raised(server, tmp_path, monkeypatch):
    url = server.put("zeros.zip", _bomb(2 << 20))
    monkeypatch.setattr(dl, "_RATIO_FLOOR", 1 << 20)  # so that a 2 MiB archive is judged
    with pytest.raises(ValueError, match="zip bomb"):
        dl.get_path_from_url(url, str(tmp_path / "a"))
    monkeypatch.setenv("PADDLE_HL_MAX_COMPRESSION_RATIO", "1e9")
    path = dl.get_path_from_url(url, str(tmp_path / "b"))
    assert os.path.getsize(path) == 2 << 20
    monkeypatch.setattr(dl, "MAX_EXTRACT_SIZE", 1 << 20)
    with pytest.raises(ValueError, match=r"more than the limit of 1048576 bytes"):
        dl.get_path_from_url(url, str(tmp_path / "c"))


@pytest.mark.parametrize("name,make", [("data.tar.gz", tar_gz), ("data.zip", zip_of)])
def test_truncated_cached_archive_is_named_removed_and_fetched_again(server, tmp_path, name,
                                                                     make):
    good = make(MEMBERS)
    url = server.put(name, good)
    root = tmp_path / "cache"
    root.mkdir()
    (root / name).write_bytes(good[: len(good) // 2])  # an interrupted copy by hand
    with pytest.warns(RuntimeWarning) as rec:
        path = dl.get_path_from_url(url, str(root))
    msg = str(rec[0].message)
    assert str(root / name) in msg and url in msg and "downloaded again" in msg
    assert path == str(root / "data")
    assert _count_files(root / "data") == N_FILES
    assert server.hits(name) == 1


@pytest.mark.parametrize("name,make", [("data.tar.gz", tar_gz), ("data.zip", zip_of)])
def test_truncated_archive_from_server_raises_naming_it(server, tmp_path, name, make):
    good = make(MEMBERS)
    url = server.put(name, good[: len(good) // 2])  # the server's own copy is cut short
    root = tmp_path / "cache"
    with pytest.raises(RuntimeError) as info:
        dl.get_path_from_url(url, str(root))
    msg = str(info.value)
    assert str(root / name) in msg and url in msg and "corrupt or truncated" in msg
    assert "removed from the cache" in msg
    assert not (root / name).exists()



def test_cache_where_no_lock_can_be_created_still_works(server, tmp_path, monkeypatch):
    import filelock

    def refuse(self, *a, **k):  # a read-only cache, or one owned by another user
        raise PermissionError(13, "Permission denied", self.lock_file)

    monkeypatch.setattr(filelock.FileLock, "acquire", refuse)
    url = server.put("data.tar.gz", tar_gz(MEMBERS))
    assert dl.get_path_from_url(url, str(tmp_path / "c")) == str(tmp_path / "c" / "data")
    assert _count_files(tmp_path / "c" / "data") == N_FILES
    assert not os.path.exists(dl._lock_path(str(tmp_path / "c" / "data.tar.gz")))  # none taken


def test_corrupt_tar_gz_is_caught_by_its_checksum(server, tmp_path):
    # a flipped byte inside the compressed data: the tar headers may still parse, the gzip
    # checksum does not
    data = bytearray(tar_gz({f"t/f{i}": os.urandom(2000) for i in range(50)}))
    data[len(data) // 2] ^= 0xFF
    url = server.put("flip.tar.gz", bytes(data))
    root = tmp_path / "cache"
    with pytest.raises(RuntimeError, match=r"flip\.tar\.gz .*is corrupt or truncated"):
        dl.get_path_from_url(url, str(root))
    assert not (root / "t").exists() and not (root / "flip.tar.gz").exists()
