"""Shared pieces of the reliability tests: archives, and running Python in a real subprocess."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
import textwrap
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def tar_gz(members: dict) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in members.items():
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            tf.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


def zip_of(members: dict, compression=zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def env(**extra) -> dict:
    """The environment of a child process: this checkout first on the path, no proxies."""
    e = dict(os.environ)
    e["PYTHONPATH"] = ROOT + os.pathsep + e.get("PYTHONPATH", "")
    e["NO_PROXY"] = e["no_proxy"] = "127.0.0.1,localhost"
    e.update({k: str(v) for k, v in extra.items()})
    return e


def popen(code: str, *args, stdin=None, **env_extra) -> subprocess.Popen:
    """Start ``python -c code args...`` from the repository root."""
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
                            cwd=ROOT, env=env(**env_extra), stdin=stdin,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run(code: str, *args, timeout=60, input=None, **env_extra) -> subprocess.CompletedProcess:
    """Run ``python -c code args...`` to completion (bounded by ``timeout``)."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
                          cwd=ROOT, env=env(**env_extra), input=input, capture_output=True,
                          text=True, timeout=timeout)
