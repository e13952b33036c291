"""``paddle.utils.download``: fetch datasets and pretrained weights into a local cache.

Files are streamed with ``requests`` into a temporary file next to their final place, checked
against the announced size (``Content-Length``) and the expected md5, and only then renamed into
the cache, so an interrupted or corrupt download never shows up as a cached file. A failed attempt
is retried once. Archives (tar, tar.gz, zip, ...) are extracted safely: members that would land
outside the target directory, links that point outside it and device files are refused, and so
is an archive whose expanded size or compression ratio is absurd (a "zip bomb"; see
``MAX_EXTRACT_SIZE`` and ``MAX_COMPRESSION_RATIO``). A truncated or corrupt archive is removed
from the cache, with its path and URL named, and downloaded again.

Several processes may fetch the same file into the same cache at once (DataLoader workers,
notebooks, data-parallel ranks): one of them downloads and extracts it while holding a file lock
(``filelock``, in the ``.locks`` folder of the cache root), the others wait and then use the
result.
Extracted trees are staged beside their final place and renamed into it, so a reader never sees
a half-written tree. The partial ``.part`` files of downloads whose process died are removed by
the next download into the same directory.

The cache root is Paddle's, ``~/.cache/paddle``: weights go to ``~/.cache/paddle/hapi/weights``
(``WEIGHTS_HOME``) and datasets to ``~/.cache/paddle/dataset`` (``DATA_HOME``), with the same
file names as Paddle's, so a file Paddle downloaded before is found (its md5 checked) instead of
fetched again, and Paddle finds what paddle_hl downloads. Sharing the folders is safe because a
file only ever appears complete and checked (renamed into place), and the locks live in a
``.locks`` folder of the root that Paddle never looks at. As in Paddle, when the home folder is
not writable the datasets go to ``<temporary folder>/.cache/paddle/dataset``. Setting the
environment variable ``PADDLE_HL_HOME`` moves the whole cache (``$PADDLE_HL_HOME/hapi/weights``,
``$PADDLE_HL_HOME/dataset``, ``$PADDLE_HL_HOME/.locks``); it is read on each access.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import logging
import lzma
import os
import os.path as osp
import posixpath
import re
import shutil
import sys
import tarfile
import time
import uuid
import warnings
import zipfile
import zlib

__all__ = ["get_weights_path_from_url"]

logger = logging.getLogger(__name__)

#: How many times a failed download (network error, truncated body, wrong md5) is tried again.
DOWNLOAD_RETRY_LIMIT = 1
#: (connect, read) timeouts in seconds for one HTTP request.
TIMEOUT = (15, 120)
_CHUNK = 1 << 16
_ARCHIVE_SUFFIXES = (".tar.gz", ".tar.bz2", ".tar.xz", ".tgz", ".tbz2", ".txz", ".tar", ".zip")
#: Largest total size (bytes) an archive may expand to; ``PADDLE_HL_MAX_EXTRACT_SIZE`` overrides.
MAX_EXTRACT_SIZE = 64 << 30
#: Largest ratio of expanded size to archive size, checked once the expanded size passes
#: ``_RATIO_FLOOR`` (small files of zeros compress well and are harmless);
#: ``PADDLE_HL_MAX_COMPRESSION_RATIO`` overrides.
MAX_COMPRESSION_RATIO = 200
_RATIO_FLOOR = 64 << 20
#: A partial download older than this is removed even when its process cannot be checked
#: (another host or container sharing the cache).
_STALE_PART_AGE = 24 * 3600
# "<file>.<pid>.<8 hex>.part" (downloads) and ".<dir>.<pid>.<8 hex>.extract" (staged trees)
_PARTIAL_RE = re.compile(r"^(?P<stem>.+)\.(?P<pid>\d+)\.[0-9a-f]{8}\.(?:part|extract)$")
# what reading a damaged archive raises (not OSError at large: a full disk is no corrupt file)
_CORRUPT = (EOFError, zlib.error, zipfile.BadZipFile, tarfile.TarError, gzip.BadGzipFile,
            lzma.LZMAError)


class _ArgumentError(ValueError, AssertionError):
    """Bad argument. Paddle asserts here, so this is both a ValueError and an AssertionError."""


def _cache_home() -> str:
    """``$PADDLE_HL_HOME`` when set, else Paddle's cache root ``~/.cache/paddle``."""
    return osp.expanduser(os.environ.get("PADDLE_HL_HOME") or osp.join("~", ".cache", "paddle"))


def _data_home() -> str:
    if os.environ.get("PADDLE_HL_HOME"):
        return osp.join(_cache_home(), "dataset")
    home = osp.expanduser("~")
    if not os.access(home, os.W_OK):  # Paddle's fallback for a read-only home folder
        import tempfile

        home = tempfile.gettempdir()
    return osp.join(home, ".cache", "paddle", "dataset")


def __getattr__(name):
    # Computed on access so that PADDLE_HL_HOME set after import (e.g. in tests) is honoured.
    if name == "WEIGHTS_HOME":
        return osp.join(_cache_home(), "hapi", "weights")
    if name == "DATA_HOME":
        return _data_home()
    raise AttributeError(f"module 'paddle_hl.utils.download' has no attribute '{name}'")


def _get_unique_endpoints(trainer_endpoints):
    """The first endpoint of each host among ``trainer_endpoints`` ("ip:port" strings), as a
    set: the processes that download for their machine while the others wait."""
    seen, unique = set(), set()
    for ep in trainer_endpoints:
        host = ep.split(":")[0]
        if host not in seen:
            seen.add(host)
            unique.add(ep)
    return unique


def is_url(path) -> bool:
    """Whether ``path`` is an http(s) URL.

    Args:
        path (str): A URL or a local path.

    Returns:
        bool: True for ``http://`` and ``https://`` addresses.
    """
    return isinstance(path, str) and path.startswith(("http://", "https://"))


def get_weights_path_from_url(url: str, md5sum: str | None = None) -> str:
    """Path of pretrained weights in the weights cache, downloading them when missing.

    Args:
        url (str): Download URL of the weights file.
        md5sum (str, optional): Expected md5 of the file; None skips the check. Default: None.

    Returns:
        str: Local path of the weights (under ``WEIGHTS_HOME``).

    Examples:
        >>> from paddle_hl.utils.download import get_weights_path_from_url
        >>> url = 'https://paddle-hapi.bj.bcebos.com/models/resnet18.pdparams'
        >>> path = get_weights_path_from_url(url)  # doctest: +SKIP
    """
    # an explicitly assigned module attribute (download.WEIGHTS_HOME = ...) wins over the
    # environment-derived default
    home = globals().get("WEIGHTS_HOME") or __getattr__("WEIGHTS_HOME")
    return get_path_from_url(url, home, md5sum)


def get_path_from_url(url: str, root_dir: str, md5sum: str | None = None,
                      check_exist: bool = True, decompress: bool = True,
                      method: str = "get") -> str:
    """Download ``url`` into ``root_dir`` (unless already there) and return the local path.

    A cached file whose md5 matches is used as is (when ``check_exist``); otherwise the file is
    downloaded to a temporary file, its size and md5 are verified, and it is renamed into place.
    A tar or zip archive is then extracted into ``root_dir`` in one pass and the path of what it
    holds is returned: the file itself for a one-file archive, the top directory when every
    member lies under one, else a directory named after the archive.

    Args:
        url (str): http(s) URL to download.
        root_dir (str): Directory to download into (created when missing).
        md5sum (str, optional): Expected md5 hex digest; None skips the check. Default: None.
        check_exist (bool, optional): Reuse a cached file that passes the md5 check. False always
            downloads again. Default: True.
        decompress (bool, optional): Extract tar and zip archives. Default: True.
        method (str, optional): Download method; only ``'get'`` (HTTP GET) exists. Default: 'get'.

    Returns:
        str: Local path of the downloaded file, or of the extracted content.

    Raises:
        ValueError: ``url`` is not an http(s) URL, or ``method`` is unknown, or an archive member
            would be extracted outside ``root_dir``.
        RuntimeError: The download failed twice (unreachable, HTTP error, truncated, wrong md5).
            The message names the URL and the path to put the file at by hand.

    Examples:
        >>> from paddle_hl.utils.download import get_path_from_url
        >>> path = get_path_from_url('https://paddle-hapi.bj.bcebos.com/models/resnet18.pdparams',
        ...                          '/tmp/weights')  # doctest: +SKIP
    """
    if not is_url(url):
        raise _ArgumentError(f"get_path_from_url: downloading from {url!r} is not possible, it "
                             "is not a url (expected one starting with http:// or https://)")
    if method not in _DOWNLOAD_METHODS:
        raise _ArgumentError(f"get_path_from_url: method must be one of "
                             f"{sorted(_DOWNLOAD_METHODS)}, but received {method!r}")
    root_dir = osp.expanduser(os.fspath(root_dir))
    fullpath = osp.join(root_dir, _url_basename(url))
    os.makedirs(root_dir, exist_ok=True)
    # One process at a time fetches and extracts this file; the others wait, then find it
    # cached. The lock is an OS lock on an open file, so a killed holder releases it.
    with _lock(fullpath):
        _clean_stale_partials(root_dir)
        fresh = False
        if check_exist and osp.isfile(fullpath) and _md5check(fullpath, md5sum):
            logger.info("Found %s", fullpath)
        else:
            fullpath = _download(url, root_dir, md5sum, method)
            fresh = True
        if not decompress:
            return fullpath
        try:
            return _decompress_checked(fullpath, url, force=fresh or not check_exist)
        except _CorruptArchive as e:
            if fresh:
                raise RuntimeError(str(e)) from e.__cause__
            # a cached copy went bad (interrupted copy by hand, disk trouble): fetch it again
            warnings.warn(f"{e}; downloading it again", RuntimeWarning, stacklevel=2)
            fullpath = _download(url, root_dir, md5sum, method)
            try:
                return _decompress_checked(fullpath, url, force=True)
            except _CorruptArchive as e2:
                raise RuntimeError(str(e2)) from e2.__cause__


class _CorruptArchive(Exception):
    """A downloaded archive could not be read; the message names it, its URL and what next."""


def _decompress_checked(fullpath: str, url: str, force: bool) -> str:
    """Extract ``fullpath`` when it is an archive; a corrupt one is removed from the cache."""
    named_archive = fullpath.lower().endswith(_ARCHIVE_SUFFIXES)
    try:
        is_archive = tarfile.is_tarfile(fullpath) or zipfile.is_zipfile(fullpath)
        if not is_archive:
            if named_archive:  # e.g. a zip cut short has no central directory left
                raise zipfile.BadZipFile("not a readable tar or zip file (truncated?)")
            return fullpath
        return _decompress(fullpath, force=force)
    except _CORRUPT as e:
        with _suppress_oserror():
            os.remove(fullpath)
        raise _CorruptArchive(
            f"the archive {fullpath} downloaded from {url} is corrupt or truncated "
            f"({type(e).__name__}: {e or 'unexpected end of data'}); it was removed from the "
            "cache and will be downloaded again") from e


class _suppress_oserror:
    def __enter__(self):
        return self

    def __exit__(self, typ, exc, tb):
        return typ is not None and issubclass(typ, OSError)


def _lock_path(path: str) -> str:
    """Where the lock for fetching ``path`` lives: ``.locks`` in the cache root
    (``~/.cache/paddle`` or ``$PADDLE_HL_HOME``), named after the file and a hash of its absolute
    path. Not beside the file: a lock file stays after use (it must, for the lock to stay
    correct), and the dataset folders, shared with Paddle, should hold only data."""
    key = hashlib.sha1(osp.abspath(path).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", osp.basename(path))[:80]
    return osp.join(_cache_home(), ".locks", f"{name}.{key}.lock")


@contextlib.contextmanager
def _lock(path: str):
    """An inter-process lock (``filelock``) for fetching ``path``: processes of this machine
    sharing the cache home fetch a given file one at a time.

    Where the lock file cannot be created (a read-only or another user's cache home), the fetch
    goes on without it: publishing by rename keeps concurrent fetches safe, only less economical.
    """
    from filelock import FileLock

    lock = FileLock(_lock_path(path))
    try:
        os.makedirs(osp.dirname(lock.lock_file), exist_ok=True)
        lock.acquire()
    except OSError as e:
        logger.info("No lock for %s (%s); fetching without one", path, e)
        yield
        return
    try:
        yield
    finally:
        lock.release()


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists, owned by someone else (or cannot tell): leave it
    return True


def _clean_stale_partials(directory: str) -> None:
    """Remove the partial downloads and staged trees left in ``directory`` by processes that
    died (killed mid-download), or that are older than a day."""
    try:
        entries = os.listdir(directory)
    except OSError:
        return
    now = time.time()
    for entry in entries:
        m = _PARTIAL_RE.match(entry)
        if m is None:
            continue
        path = osp.join(directory, entry)
        try:
            old = now - os.lstat(path).st_mtime > _STALE_PART_AGE
        except OSError:
            continue
        if _pid_alive(int(m.group("pid"))) and not old:
            continue
        logger.info("Removing %s, left by an interrupted download", path)
        if osp.isdir(path) and not osp.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            with _suppress_oserror():
                os.remove(path)


def _url_basename(url: str) -> str:
    name = url.split("?", 1)[0].split("#", 1)[0].rstrip("/").split("/")[-1]
    if not name or name in (".", ".."):
        raise _ArgumentError(f"get_path_from_url: cannot derive a file name from url {url!r}")
    return name


def _md5check(fullname: str, md5sum: str | None = None) -> bool:
    if md5sum is None:
        return True
    ok = _md5file(fullname) == md5sum
    if not ok:
        logger.info("File %s md5 check failed (expected %s)", fullname, md5sum)
    return ok


def _md5file(fullname: str) -> str:
    md5 = hashlib.md5()
    with open(fullname, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            md5.update(chunk)
    return md5.hexdigest()


class DownloadError(Exception):
    """One failed download attempt. ``status`` is the HTTP status when the server answered
    with an error, else None (a broken connection, a truncated body, a wrong md5)."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


_DownloadError = DownloadError


def stream_to_file(url: str, f, md5sum: str | None = None, desc: str | None = None) -> None:
    """Stream ``url`` into the open binary file ``f``, checking the announced size and, when
    given, the md5; raises :class:`DownloadError` on any failure. Used by the dataset and
    weight downloads here and by paddle_hl.hub."""
    import requests

    try:
        with requests.get(url, stream=True, timeout=TIMEOUT, allow_redirects=True) as r:
            if r.status_code != 200:
                raise DownloadError(f"HTTP status {r.status_code} {r.reason}", r.status_code)
            expected = _content_length(r)
            md5 = hashlib.md5()
            with _progress(expected, desc or _url_basename(url)) as bar:
                for chunk in r.iter_content(chunk_size=_CHUNK):
                    f.write(chunk)
                    md5.update(chunk)
                    bar.update(len(chunk))
            # Content-Length counts the bytes on the wire (before any Content-Encoding is
            # undone), which is what urllib3's tell() reports.
            received = r.raw.tell()
    except requests.RequestException as e:
        raise DownloadError(f"{type(e).__name__}: {e}") from None
    if expected is not None and received != expected:
        raise DownloadError(f"truncated: received {received} of {expected} bytes")
    if md5sum is not None and md5.hexdigest() != md5sum:
        raise DownloadError(f"md5 mismatch: got {md5.hexdigest()}, expected {md5sum}")


def _download(url: str, root_dir: str, md5sum: str | None, method: str) -> str:
    os.makedirs(root_dir, exist_ok=True)
    fullname = osp.join(root_dir, _url_basename(url))
    errors = []
    for attempt in range(DOWNLOAD_RETRY_LIMIT + 1):
        logger.info("Downloading %s from %s (attempt %d)", osp.basename(fullname), url,
                    attempt + 1)
        try:
            _DOWNLOAD_METHODS[method](url, fullname, md5sum)
        except _DownloadError as e:
            errors.append(str(e))
            continue
        return fullname
    if len(set(errors)) == 1:
        tried = f"each attempt: {errors[0]}"
    else:
        tried = "; ".join(f"attempt {i + 1}: {e}" for i, e in enumerate(errors))
    md5_hint = f" with md5 {md5sum}" if md5sum else ""
    raise RuntimeError(
        f"Download from {url} failed after {len(errors)} attempts ({tried}). If this machine is "
        f"offline, download the file elsewhere and copy it by hand to {fullname}{md5_hint}.")


def _get_download(url: str, fullname: str, md5sum: str | None) -> None:
    """Stream ``url`` to a temporary file, verify it, then rename it to ``fullname``."""
    # a unique name opened with plain open(): mkstemp would leave the cached file mode 0600
    tmp = f"{fullname}.{os.getpid()}.{uuid.uuid4().hex[:8]}.part"
    try:
        with open(tmp, "xb") as f:
            stream_to_file(url, f, md5sum, osp.basename(fullname))
        os.replace(tmp, fullname)
    finally:
        if osp.exists(tmp):
            os.remove(tmp)


_DOWNLOAD_METHODS = {"get": _get_download}


def _content_length(r):
    value = r.headers.get("Content-Length")
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


class _NoBar:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n):
        pass


def _progress(total, desc):
    """A tqdm bar in a terminal; silent otherwise (logs, notebooks' captured stderr)."""
    isatty = getattr(sys.stderr, "isatty", None)
    if isatty is None or not isatty():
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="B", unit_scale=True, unit_divisor=1024,
                file=sys.stderr)


# ---------------------------------------------------------------------------------------------
# archives


def _member_names(archive: str):
    """(kind, normalized member names) of a tar or zip archive, refusing unsafe members."""
    if tarfile.is_tarfile(archive):
        with tarfile.open(archive, "r:*") as tf:
            members = tf.getmembers()
            # Listing the members decompressed the whole stream except its tail; reading that
            # too makes gzip/xz/bz2 verify their checksum, so corrupt data is caught here
            # rather than extracted.
            while tf.fileobj.read(_CHUNK):
                pass
        _check_expansion(archive, sum(m.size for m in members if m.isfile()))
        names = []
        for m in members:
            name = _safe_name(m.name, archive)
            if m.issym() or m.islnk():
                _check_link(m, name, archive)
            elif not (m.isfile() or m.isdir()):
                raise _ArgumentError(f"refusing to extract {archive!r}: member {m.name!r} is a "
                                     "device, fifo or other special file")
            if name:
                names.append(name)
        return "tar", names
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            infos = zf.infolist()
        # zipfile stops each member at its declared size (and checks its CRC), so the
        # declared sizes bound what extraction writes
        _check_expansion(archive, sum(i.file_size for i in infos))
        return "zip", [n for n in (_safe_name(i.filename, archive) for i in infos) if n]
    raise _ArgumentError(f"{archive!r} is neither a tar nor a zip archive")


def _limit(env: str, default):
    value = os.environ.get(env)
    if not value:
        return default
    try:
        return float(value)
    except ValueError:
        raise _ArgumentError(f"${env}={value!r} is not a number") from None


def _check_expansion(archive: str, expanded: int) -> None:
    """Refuse an archive that would expand to an absurd size, or by an absurd ratio."""
    max_size = _limit("PADDLE_HL_MAX_EXTRACT_SIZE", MAX_EXTRACT_SIZE)
    max_ratio = _limit("PADDLE_HL_MAX_COMPRESSION_RATIO", MAX_COMPRESSION_RATIO)
    packed = max(osp.getsize(archive), 1)
    how = ("raise the limits with the environment variables PADDLE_HL_MAX_EXTRACT_SIZE "
           "(bytes) and PADDLE_HL_MAX_COMPRESSION_RATIO, or the attributes of "
           "paddle_hl.utils.download of the same names, if you trust this archive")
    if expanded > max_size:
        raise _ArgumentError(f"refusing to extract {archive!r}: it would expand to {expanded} "
                             f"bytes, more than the limit of {int(max_size)} bytes; {how}")
    if expanded > _RATIO_FLOOR and expanded / packed > max_ratio:
        raise _ArgumentError(f"refusing to extract {archive!r}: {packed} bytes would expand to "
                             f"{expanded} bytes (ratio {expanded / packed:.0f}, limit "
                             f"{max_ratio:g}), which looks like a zip bomb; {how}")


def _safe_name(name: str, archive: str) -> str:
    """The member's path relative to the extraction root; raises when it would escape it."""
    unified = name.replace("\\", "/")
    norm = posixpath.normpath(unified) if unified else ""
    if (unified.startswith("/") or (len(unified) > 1 and unified[1] == ":")
            or norm == ".." or norm.startswith("../")):
        raise _ArgumentError(f"refusing to extract {archive!r}: member {name!r} would be written "
                             "outside the target directory (absolute path or '..')")
    return "" if norm == "." else norm


def _check_link(member, name: str, archive: str) -> None:
    target = member.linkname.replace("\\", "/")
    if member.issym():
        # symlink targets are relative to the link's own directory
        target = posixpath.join(posixpath.dirname(name), target)
    norm = posixpath.normpath(target)
    if target.startswith("/") or norm == ".." or norm.startswith("../"):
        raise _ArgumentError(f"refusing to extract {archive!r}: link {member.name!r} points "
                             f"outside the target directory ({member.linkname!r})")


def _archive_stem(path: str) -> str:
    base = osp.basename(path)
    for suffix in _ARCHIVE_SUFFIXES:
        if base.lower().endswith(suffix) and len(base) > len(suffix):
            return base[:-len(suffix)]
    return osp.splitext(base)[0] or base


def _decompress(fname: str, force: bool = True) -> str:
    """Extract a downloaded archive beside it; returns the path of its content (see above)."""
    root = osp.dirname(fname)
    kind, names = _member_names(fname)
    tops = {n.split("/", 1)[0] for n in names}
    if len(names) == 1 and "/" not in names[0]:
        result, target = osp.join(root, names[0]), root
    elif len(tops) == 1:
        result, target = osp.join(root, tops.pop()), root
    else:
        result = osp.join(root, _archive_stem(fname))
        target = result
    if force or not osp.exists(result):
        logger.info("Decompressing %s...", fname)
        _extract(fname, kind, target)
    return result


def extract_archive(archive: str, dest_dir: str) -> str:
    """Safely extract a tar or zip archive into ``dest_dir``, all at once.

    Members go to a temporary directory beside ``dest_dir`` first and are moved in once every
    one has been written, so an interrupted extraction leaves nothing half-written behind.
    Top-level entries already in ``dest_dir`` with the same names are replaced.

    Args:
        archive (str): Path of a tar (optionally gz/bz2/xz compressed) or zip file.
        dest_dir (str): Directory to extract into (created when missing).

    Returns:
        str: ``dest_dir``.

    Raises:
        ValueError: The file is not an archive, or a member would be written outside
            ``dest_dir`` (absolute path, ``..``, outside link) or is a special file.
    """
    kind, _ = _member_names(archive)
    _extract(archive, kind, dest_dir)
    return dest_dir


def _publish(src: str, dst: str) -> None:
    """Move the finished ``src`` to ``dst`` with renames only, so that a reader sees the old
    entry, briefly nothing, or the new one, never a half-deleted or half-written tree. When
    another process publishes ``dst`` at the same moment, its copy is kept."""
    trash = None
    if osp.lexists(dst):
        trash = osp.join(osp.dirname(dst), f".{osp.basename(dst)}.{os.getpid()}."
                                           f"{uuid.uuid4().hex[:8]}.extract")
        try:
            os.replace(dst, trash)
        except FileNotFoundError:  # moved away by a concurrent publisher
            trash = None
    try:
        os.replace(src, dst)
    except OSError:
        if not osp.lexists(dst):
            raise
        # a concurrent publisher put its (equivalent) copy there first: keep that one
    if trash is not None:
        if osp.isdir(trash) and not osp.islink(trash):
            shutil.rmtree(trash, ignore_errors=True)
        else:
            with _suppress_oserror():
                os.remove(trash)


def _extract(archive: str, kind: str, dest_dir: str) -> None:
    dest_dir = osp.abspath(dest_dir)
    if osp.lexists(dest_dir) and not osp.isdir(dest_dir):
        raise _ArgumentError(f"cannot extract {archive!r} into {dest_dir!r}: it is a file, not "
                             "a directory")
    parent = osp.dirname(dest_dir)
    os.makedirs(parent, exist_ok=True)
    # Staged inside dest_dir when it exists (its parent may be read-only), else beside it so
    # that one rename publishes it. Not mkdtemp: its 0700 mode would stick after the rename.
    base = dest_dir if osp.isdir(dest_dir) else parent
    tmp = osp.join(base, f".{osp.basename(dest_dir)}.{os.getpid()}.{uuid.uuid4().hex[:8]}"
                         ".extract")
    os.mkdir(tmp)
    try:
        if kind == "tar":
            with tarfile.open(archive, "r:*") as tf:
                # names were validated by _member_names; the 'data' filter is a second guard
                # (and drops unsafe permission bits) where this Python has it
                if hasattr(tarfile, "data_filter"):
                    tf.extractall(tmp, filter="data")
                else:
                    tf.extractall(tmp)
        else:
            with zipfile.ZipFile(archive) as zf:
                zf.extractall(tmp)
        if not osp.exists(dest_dir):
            try:
                os.replace(tmp, dest_dir)
                return
            except OSError:
                if not osp.isdir(dest_dir):  # not another process publishing it first
                    raise
        for entry in os.listdir(tmp):
            _publish(osp.join(tmp, entry), osp.join(dest_dir, entry))
    finally:
        if osp.exists(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
