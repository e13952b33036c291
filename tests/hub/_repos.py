"""Test hub repositories: hubconf sources and real zip / tar.gz archives laid out as GitHub and
Gitee serve them (everything under one ``owner-repo-<sha>/`` top folder)."""

from __future__ import annotations

import hashlib
import io
import tarfile
import textwrap
import zipfile

SIBLING = "hub_test_sibling_mod"

HUBCONF = '''\
"""A hub repository used by the tests."""
import os as _os

dependencies = {deps!r}
VERSION = {version!r}
BRANCH = {branch!r}
ANSWER = 42


def tiny(scale=1, **kwargs):
    """A tiny model.

    Args:
        scale (int): multiplier <b>not html</b>.

    Returns:
        dict: what was asked for.
    """
    return {{"version": VERSION, "branch": BRANCH, "scale": scale, **kwargs}}


def linear(in_features=2, out_features=3):
    """A paddle_hl Linear layer."""
    import paddle_hl

    return paddle_hl.nn.Linear(in_features, out_features)


def sibling():
    """Reads a module that lives next to hubconf.py in the repository."""
    import {sibling}

    return {sibling}.VALUE


class Net:
    """A class entrypoint."""

    def __init__(self, width=4):
        self.width = width


nodoc = lambda: 5  # noqa: E731


def _hidden():
    """Private: not an entrypoint."""
    return 0
'''


def repo_files(version=1, branch="main", deps=("numpy",)) -> dict[str, bytes]:
    """The files of a test repository ({relative path: content})."""
    return {
        "hubconf.py": HUBCONF.format(deps=list(deps), version=version, branch=branch,
                                     sibling=SIBLING).encode(),
        f"{SIBLING}.py": b"VALUE = 'from the sibling module'\n",
        "README.md": b"# test repo\n",
        "pkg/__init__.py": b"",
        "pkg/model.py": textwrap.dedent("""\
            def build():
                return 'built'
        """).encode(),
    }


def top_folder(owner: str, repo: str, tag: str) -> str:
    sha = hashlib.sha1(f"{owner}/{repo}@{tag}".encode()).hexdigest()[:7]
    return f"{owner}-{repo}-{sha}"


def zip_bytes(files: dict[str, bytes], top: str, extra: dict[str, bytes] | None = None,
              compression=zipfile.ZIP_DEFLATED) -> bytes:
    """A zip as GitHub serves it: directory entries, then files, all under ``top/``."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=compression) as zf:
        zf.writestr(top + "/", b"")
        dirs = sorted({name.rsplit("/", 1)[0] for name in files if "/" in name})
        for d in dirs:
            zf.writestr(f"{top}/{d}/", b"")
        for name, data in files.items():
            zf.writestr(f"{top}/{name}", data)
        for name, data in (extra or {}).items():
            zf.writestr(name, data)
    return buf.getvalue()


def tar_gz_bytes(files: dict[str, bytes], top: str, extra=()) -> bytes:
    """A tar.gz as GitHub serves it: a pax global header carrying the commit, then ``top/``.

    ``extra`` is a sequence of ready TarInfo objects (with data for regular files) added at the
    end, to build hostile archives.
    """
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.PAX_FORMAT,
                      pax_headers={"comment": top.rsplit("-", 1)[-1]}) as tf:
        dirs = [top] + sorted({f"{top}/{n.rsplit('/', 1)[0]}" for n in files if "/" in n})
        for d in dirs:
            ti = tarfile.TarInfo(d)
            ti.type = tarfile.DIRTYPE
            ti.mode = 0o755
            tf.addfile(ti)
        for name, data in files.items():
            ti = tarfile.TarInfo(f"{top}/{name}")
            ti.size = len(data)
            ti.mode = 0o644
            tf.addfile(ti, io.BytesIO(data))
        for ti, data in extra:
            tf.addfile(ti, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def tar_member(name: str, data: bytes | None = None, kind=tarfile.REGTYPE, linkname: str = ""):
    ti = tarfile.TarInfo(name)
    ti.type = kind
    ti.linkname = linkname
    ti.size = len(data) if data is not None else 0
    ti.mode = 0o644
    return ti, data
