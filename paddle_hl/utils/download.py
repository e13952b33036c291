"""``paddle.utils.download``: fetch datasets and pretrained weights into a local cache.

Files are streamed with ``requests`` into a temporary file next to their final place, checked
against the announced size (``Content-Length``) and the expected md5, and only then renamed into
the cache, so an interrupted or corrupt download never shows up as a cached file. A failed attempt
is retried once. Archives (tar, tar.gz, zip, ...) are extracted safely: members that would land
outside the target directory, links that point outside it and device files are refused.

The cache root is ``~/.cache/paddle_hl``; set the environment variable ``PADDLE_HL_HOME`` to use
another directory. Weights go to ``$PADDLE_HL_HOME/hapi/weights`` (``WEIGHTS_HOME``) and datasets
to ``$PADDLE_HL_HOME/dataset`` (``DATA_HOME``); both are read from the environment on each access.
"""

from __future__ import annotations

import hashlib
import logging
import os
import os.path as osp
import posixpath
import shutil
import sys
import tarfile
import uuid
import zipfile

__all__ = ["get_weights_path_from_url"]

logger = logging.getLogger(__name__)

#: How many times a failed download (network error, truncated body, wrong md5) is tried again.
DOWNLOAD_RETRY_LIMIT = 1
#: (connect, read) timeouts in seconds for one HTTP request.
TIMEOUT = (15, 120)
_CHUNK = 1 << 16
_ARCHIVE_SUFFIXES = (".tar.gz", ".tar.bz2", ".tar.xz", ".tgz", ".tbz2", ".txz", ".tar", ".zip")


class _ArgumentError(ValueError, AssertionError):
    """Bad argument. Paddle asserts here, so this is both a ValueError and an AssertionError."""


def _cache_home() -> str:
    return osp.expanduser(os.environ.get("PADDLE_HL_HOME") or osp.join("~", ".cache",
                                                                        "paddle_hl"))


def __getattr__(name):
    # Computed on access so that PADDLE_HL_HOME set after import (e.g. in tests) is honoured.
    if name == "WEIGHTS_HOME":
        return osp.join(_cache_home(), "hapi", "weights")
    if name == "DATA_HOME":
        return osp.join(_cache_home(), "dataset")
    raise AttributeError(f"module 'paddle_hl.utils.download' has no attribute '{name}'")


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
    fresh = False
    if check_exist and osp.isfile(fullpath) and _md5check(fullpath, md5sum):
        logger.info("Found %s", fullpath)
    else:
        fullpath = _download(url, root_dir, md5sum, method)
        fresh = True
    if decompress and (tarfile.is_tarfile(fullpath) or zipfile.is_zipfile(fullpath)):
        fullpath = _decompress(fullpath, force=fresh or not check_exist)
    return fullpath


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
            raw = zf.namelist()
        return "zip", [n for n in (_safe_name(r, archive) for r in raw) if n]
    raise _ArgumentError(f"{archive!r} is neither a tar nor a zip archive")


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
            os.replace(tmp, dest_dir)
            return
        for entry in os.listdir(tmp):
            dst = osp.join(dest_dir, entry)
            if osp.isdir(dst) and not osp.islink(dst):
                shutil.rmtree(dst)
            elif osp.lexists(dst):
                os.remove(dst)
            os.replace(osp.join(tmp, entry), dst)
    finally:
        if osp.exists(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
