"""Where a hub repository lives: parsing ``owner/repo[:branch]``, archive URLs, the cache, and
downloading and unpacking an archive into the cache safely.

The cache folder of a remote repository is ``<hub dir>/<owner>_<repo>_<branch>``. The hub dir is
``$PADDLE_HL_HUB_DIR`` when set, else ``$PADDLE_HL_HOME/hub``, else Paddle's own hub folder
``~/.cache/paddle/hub`` (same folder names as Paddle's, so a repository Paddle downloaded is
found there and used instead of fetched again).
A refresh is built completely beside the cache folder (download to a temporary file, unpack into
a temporary folder, check that ``hubconf.py`` is there) and only then swapped in, so a failed or
interrupted download never damages the copy already cached.
"""

from __future__ import annotations

import contextlib
import os
import os.path as osp
import re
import shutil
import sys
import tarfile
import uuid
import zipfile
import zlib
from dataclasses import dataclass
from urllib.parse import quote

__all__ = []

SOURCES = ("github", "gitee", "local")
HUBCONF = "hubconf.py"

#: (connect, read) timeouts in seconds for one HTTP request.
TIMEOUT = (15, 120)
#: How many times a download that broke off (network error, truncated body) is tried again.
RETRIES = 1
_CHUNK = 1 << 16

# The branch tried first when repo_dir names none; the other one is tried when it is missing.
_DEFAULT_BRANCHES = {"github": ("main", "master"), "gitee": ("master", "main")}
_HOSTS = {"github": "https://github.com", "gitee": "https://gitee.com"}
# Archive paths as the two sites serve them.
_PATHS = {"github": "/{owner}/{repo}/archive/{branch}.zip",
          "gitee": "/{owner}/{repo}/repository/archive/{branch}.zip"}
_URL_ENV = {"github": "PADDLE_HL_HUB_GITHUB_URL", "gitee": "PADDLE_HL_HUB_GITEE_URL"}
# A cache folder remembers which source filled it, as github and gitee share the folder naming.
_MARKER = ".paddle_hl_hub_source"
_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]+$")


class HubDownloadError(RuntimeError):
    """An archive could not be fetched; ``missing`` is True for an HTTP 404 (no such branch)."""

    def __init__(self, message: str, missing: bool = False):
        super().__init__(message)
        self.missing = missing


class _Attempt(Exception):
    """One failed download attempt that is worth retrying."""


@dataclass(frozen=True)
class RemoteRepo:
    """A parsed remote repository: ``source``, ``owner``, ``repo`` and an optional ``branch``."""

    source: str
    owner: str
    repo: str
    branch: str | None

    @property
    def name(self) -> str:
        return f"{self.owner}/{self.repo}"

    def branches(self) -> tuple[str, ...]:
        """Branches to try, in order: the one asked for, else the source's defaults."""
        return (self.branch,) if self.branch else _DEFAULT_BRANCHES[self.source]

    def label(self, branch: str) -> str:
        return f"{self.source}:{self.owner}/{self.repo}:{branch}"


def hub_dir() -> str:
    """The hub cache root, read from the environment on each call."""
    explicit = os.environ.get("PADDLE_HL_HUB_DIR")
    if explicit:
        return osp.abspath(osp.expanduser(explicit))
    home = os.environ.get("PADDLE_HL_HOME") or osp.join("~", ".cache", "paddle")
    return osp.abspath(osp.join(osp.expanduser(home), "hub"))


def shared_with_paddle() -> bool:
    """Whether the hub dir is Paddle's own (no paddle_hl variable moves it), so its folders
    may hold repositories Paddle downloaded."""
    return not (os.environ.get("PADDLE_HL_HUB_DIR") or os.environ.get("PADDLE_HL_HOME"))


def parse_remote(repo_dir, source: str, fn: str) -> RemoteRepo:
    """Split ``owner/repo[:branch]``; raises ValueError naming ``fn`` when malformed."""
    if not isinstance(repo_dir, str):
        raise TypeError(f"hub.{fn}: repo_dir must be a str 'owner/repo[:branch]' for source="
                        f"'{source}', but received {type(repo_dir).__name__} {repo_dir!r}")
    spec, sep, branch = repo_dir.partition(":")
    parts = spec.split("/")
    bad = (len(parts) != 2 or not all(_NAME_RE.match(p) and p not in (".", "..") for p in parts)
           or (sep and not _valid_branch(branch)))
    if bad:
        raise ValueError(f"hub.{fn}: repo_dir must look like 'owner/repo' or "
                         f"'owner/repo:branch' for source='{source}', but received {repo_dir!r}")
    return RemoteRepo(source, parts[0], parts[1], branch or None)


def _valid_branch(branch: str) -> bool:
    # git ref rules, reduced to what matters here: no empty parts, no '..', no control chars
    if not branch or branch.startswith(("/", "-")) or branch.endswith(("/", ".")):
        return False
    if ".." in branch or "//" in branch or "\\" in branch:
        return False
    return not any(ch.isspace() or ord(ch) < 32 or ch in "~^:?*[" for ch in branch)


def archive_url(repo: RemoteRepo, branch: str) -> str:
    """The archive URL of ``repo`` at ``branch``.

    ``$PADDLE_HL_HUB_GITHUB_URL`` / ``$PADDLE_HL_HUB_GITEE_URL`` override the site: either a base
    URL (``http://127.0.0.1:8000``; the site's archive path is appended) or a full template with
    ``{owner}``, ``{repo}`` and ``{branch}`` fields (e.g. ending in ``.tar.gz``).
    """
    override = os.environ.get(_URL_ENV[repo.source], "").strip()
    fields = {"owner": quote(repo.owner, safe=""), "repo": quote(repo.repo, safe=""),
              "branch": quote(branch, safe="/")}
    if "{" in override:
        try:
            return override.format(**fields)
        except (KeyError, IndexError, ValueError) as e:
            raise ValueError(f"hub: ${_URL_ENV[repo.source]}={override!r} is not a valid URL "
                             "template (fields: {owner}, {repo}, {branch})") from e
    base = (override or _HOSTS[repo.source]).rstrip("/")
    return base + _PATHS[repo.source].format(**fields)


def cache_dir(repo: RemoteRepo, branch: str) -> str:
    return osp.join(hub_dir(), f"{repo.owner}_{repo.repo}_{branch.replace('/', '_')}")


class ForeignCacheError(RuntimeError):
    """A cache folder holds a hubconf.py that paddle_hl did not download."""


def cached(repo: RemoteRepo, branch: str) -> str | None:
    """The cache folder of ``repo`` at ``branch`` when it holds a usable copy, else None.

    In Paddle's own hub folder (see :func:`shared_with_paddle`) a folder without the marker is
    a repository Paddle downloaded, and is used as Paddle uses it (for either site, as Paddle
    names the folders of both alike).

    Raises:
        ForeignCacheError: the folder has a ``hubconf.py`` but not the provenance marker that
            :func:`fetch` writes, in a hub folder only paddle_hl uses: someone else put it
            there, and its code is not run.
    """
    path = cache_dir(repo, branch)
    if not osp.isfile(osp.join(path, HUBCONF)):
        return None
    marker = osp.join(path, _MARKER)
    if not osp.isfile(marker):
        if shared_with_paddle():
            return path
        raise ForeignCacheError(
            f"hub: the cache folder {path} holds a {HUBCONF} that paddle_hl did not download "
            f"(it lacks the provenance file {_MARKER}); its code is not run. Remove the folder, "
            "or pass force_reload=True to replace it with a fresh download of "
            f"{repo.name} ({repo.source}).")
    with open(marker, encoding="utf-8") as f:
        if f.read().strip() != repo.label(branch):
            return None  # the same owner/repo from the other site
    return path


def any_cached(repo: RemoteRepo) -> bool:
    try:
        return any(cached(repo, b) for b in repo.branches())
    except ForeignCacheError:
        return False


@contextlib.contextmanager
def _fetch_lock(repo: RemoteRepo):
    """One process at a time looks up and fetches ``repo`` (DataLoader workers, notebooks and
    data-parallel ranks loading the same model): the others wait, then find it cached. An OS
    lock on a hidden file in the hub dir, released by the OS if its holder is killed; where the
    file cannot be created, the fetch goes on without it (the swap-in stays safe)."""
    from filelock import FileLock

    root = hub_dir()
    lock = FileLock(osp.join(root, f".{repo.source}_{repo.owner}_{repo.repo}.lock"))
    try:
        os.makedirs(root, exist_ok=True)
        lock.acquire()
    except OSError:
        yield
        return
    try:
        yield
    finally:
        lock.release()


def resolve(repo: RemoteRepo, force_reload: bool) -> str:
    """The local folder of ``repo``: the cached copy, or a fresh download (``force_reload``)."""
    with _fetch_lock(repo):
        return _resolve(repo, force_reload)


def _resolve(repo: RemoteRepo, force_reload: bool) -> str:
    if not force_reload:
        for branch in repo.branches():
            path = cached(repo, branch)
            if path is not None:
                print(f"Using cache found in {path}", file=sys.stderr)
                return path
    tried = []
    for branch in repo.branches():
        url = archive_url(repo, branch)
        try:
            return fetch(repo, branch, url)
        except HubDownloadError as e:
            if not e.missing:
                raise
            tried.append(url)
    which = " or ".join(repr(b) for b in repo.branches())
    raise RuntimeError(f"hub: repository {repo.name} with branch {which} was not found on "
                       f"{repo.source} (HTTP 404 from {', '.join(tried)}). Check the owner, the "
                       "repository name and the branch ('owner/repo:branch').")


def fetch(repo: RemoteRepo, branch: str, url: str) -> str:
    """Download ``url``, unpack it and swap it in as the cache folder of ``repo`` at ``branch``.

    Everything is staged under the hub dir with unique names and removed on failure; the old
    cache folder is replaced only once the new one is complete.
    """
    root = hub_dir()
    os.makedirs(root, exist_ok=True)
    dest = cache_dir(repo, branch)
    stem = f".{osp.basename(dest)}.{os.getpid()}.{uuid.uuid4().hex[:8]}"
    archive = osp.join(root, stem + ".archive.part")
    staging = osp.join(root, stem + ".extract")
    print(f"Downloading: {url} to {dest}", file=sys.stderr)
    try:
        download(url, archive)
        content = unpack(archive, staging, url)
        with open(osp.join(content, _MARKER), "w", encoding="utf-8") as f:
            f.write(repo.label(branch) + "\n")
        _swap_in(content, dest)
    finally:
        if osp.exists(archive):
            os.remove(archive)
        if osp.exists(staging):
            shutil.rmtree(staging, ignore_errors=True)
    return dest


def download(url: str, path: str) -> None:
    """Stream ``url`` into ``path`` (which must not exist), checking the announced size.

    Raises:
        HubDownloadError: HTTP error (``missing`` for 404), or the body broke off twice.
    """
    errors = []
    for _ in range(RETRIES + 1):
        try:
            _download_once(url, path)
            return
        except _Attempt as e:
            errors.append(str(e))
    raise HubDownloadError(f"hub: downloading {url} failed ({'; '.join(errors)}); the cache was "
                           "left as it was")


def _download_once(url: str, path: str) -> None:
    from paddle_hl.utils.download import DownloadError, stream_to_file

    try:
        with open(path, "wb") as f:
            stream_to_file(url, f, desc=osp.basename(url))
    except DownloadError as e:
        if e.status == 404:
            raise HubDownloadError(f"hub: {url} answered HTTP 404 Not Found",
                                   missing=True) from None
        if e.status is not None:
            reason = str(e).replace("HTTP status ", "")
            raise HubDownloadError(f"hub: {url} answered HTTP {reason}") from None
        raise _Attempt(str(e)) from None


def unpack(archive: str, staging: str, url: str) -> str:
    """Unpack ``archive`` into the new folder ``staging``; returns the repository root in it.

    GitHub and Gitee put everything under one top folder (``repo-<branch>/``,
    ``owner-repo-<sha>/``); that folder is the root. Unsafe members (absolute paths, ``..``,
    links leading outside, device files) make the whole archive refused before anything is
    written.
    """
    from paddle_hl.utils.download import extract_archive

    if not (zipfile.is_zipfile(archive) or tarfile.is_tarfile(archive)):
        raise RuntimeError(f"hub: the file downloaded from {url} is not a zip or tar archive "
                           f"({osp.getsize(archive)} bytes); nothing was cached")
    try:
        _verify(archive)
        extract_archive(archive, staging)
    except ValueError as e:
        raise RuntimeError(f"hub: refusing to unpack the archive from {url}: {e}") from e
    except (OSError, EOFError, zlib.error, zipfile.BadZipFile, tarfile.TarError) as e:
        raise RuntimeError(f"hub: the archive downloaded from {url} is corrupt "
                           f"({type(e).__name__}: {e}); nothing was cached") from e
    entries = [e for e in os.listdir(staging) if e not in ("__MACOSX", "pax_global_header")]
    root = staging
    if len(entries) == 1 and osp.isdir(osp.join(staging, entries[0])) and not osp.islink(
            osp.join(staging, entries[0])):
        root = osp.join(staging, entries[0])
    if not osp.isfile(osp.join(root, HUBCONF)):
        raise RuntimeError(f"hub: the archive from {url} has no {HUBCONF} at the top of the "
                           "repository; it does not publish hub entrypoints")
    return root


def _verify(archive: str) -> None:
    """Check the archive's checksums before anything is extracted."""
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            bad = zf.testzip()
        if bad is not None:
            raise zipfile.BadZipFile(f"CRC check failed for member {bad!r}")
        return
    # reading a compressed tar to the end checks the gzip/bz2/xz checksums and the headers
    with tarfile.open(archive, "r:*") as tf:
        for member in tf:
            if member.isfile():
                stream = tf.extractfile(member)
                while stream.read(_CHUNK * 16):
                    pass


def _swap_in(content: str, dest: str) -> None:
    """Make ``content`` the folder ``dest``, keeping the old ``dest`` until that succeeded."""
    old = None
    if osp.lexists(dest):
        old = f"{dest}.{os.getpid()}.{uuid.uuid4().hex[:8]}.old"
        os.replace(dest, old)
    try:
        os.replace(content, dest)
    except OSError:
        if old is not None:
            os.replace(old, dest)
        raise
    if old is not None:
        if osp.isdir(old) and not osp.islink(old):
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.remove(old)
