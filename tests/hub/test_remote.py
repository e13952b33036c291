"""paddle_hl.hub with source='github' and 'gitee' against a real HTTP server on 127.0.0.1 that
serves zip and tar.gz archives laid out as the two sites serve them."""

from __future__ import annotations

import os
import sys
import tarfile
import warnings
import zipfile

import pytest

import paddle_hl
from paddle_hl import hub
from tests.http_server import serve_directory
from tests.hub._repos import (
    SIBLING,
    repo_files,
    tar_gz_bytes,
    tar_member,
    top_folder,
    zip_bytes,
)

ENTRYPOINTS = ["Net", "linear", "nodoc", "sibling", "tiny"]
_PATHS = {"github": "{owner}/{repo}/archive/{branch}.{fmt}",
          "gitee": "{owner}/{repo}/repository/archive/{branch}.{fmt}"}


class Site:
    """The fake GitHub and Gitee: publishes archives and points the hub at them."""

    def __init__(self, server, monkeypatch, hub_dir):
        self.server = server
        self.monkeypatch = monkeypatch
        self.hub_dir = hub_dir
        self.use("github", "zip")
        self.use("gitee", "zip")

    def use(self, source, fmt):
        """Serve ``source`` archives in ``fmt``: zip through the base-URL form of the
        environment variable, tar.gz through the template form."""
        var = f"PADDLE_HL_HUB_{source.upper()}_URL"
        if fmt == "zip":
            self.monkeypatch.setenv(var, self.server.base_url)
        else:
            path = _PATHS[source].format(owner="{owner}", repo="{repo}", branch="{branch}",
                                         fmt=fmt)
            self.monkeypatch.setenv(var, f"{self.server.base_url}/{path}")

    def path(self, source="github", owner="alice", repo="models", branch="main", fmt="zip"):
        return _PATHS[source].format(owner=owner, repo=repo, branch=branch, fmt=fmt)

    def publish(self, source="github", owner="alice", repo="models", branch="main", fmt="zip",
                data=None, **files_kw):
        """Put an archive of a test repository on the server; returns its server path."""
        if data is None:
            files = repo_files(branch=branch, **files_kw)
            top = top_folder(owner, repo, branch)
            data = zip_bytes(files, top) if fmt == "zip" else tar_gz_bytes(files, top)
        self.use(source, fmt)
        rel = self.path(source, owner, repo, branch, fmt)
        self.server.put(rel, data)
        return rel

    def cache(self, name):
        return self.hub_dir / name


@pytest.fixture
def site(tmp_path, monkeypatch):
    hub_dir = tmp_path / "cache" / "hub"
    monkeypatch.setenv("PADDLE_HL_HUB_DIR", str(hub_dir))
    with serve_directory(tmp_path / "www") as srv:
        yield Site(srv, monkeypatch, hub_dir)


@pytest.fixture(autouse=True)
def _forget_repo_modules():
    yield
    sys.modules.pop(SIBLING, None)


def _leftovers(hub_dir):
    """Temporary files and folders of downloads, unpacking and swaps left in the hub dir."""
    if not hub_dir.exists():
        return []
    return sorted(n for n in os.listdir(hub_dir)
                  if (n.startswith(".") or n.endswith((".part", ".extract", ".old")))
                  and not n.endswith(".lock"))  # the lock files that coordinate processes


def _files_under(root):
    return sorted(os.path.relpath(os.path.join(d, f), root)
                  for d, _, fs in os.walk(root) for f in fs)


# --- list / help / load -------------------------------------------------------------------------

@pytest.mark.parametrize("source", ["github", "gitee"])
@pytest.mark.parametrize("fmt", ["zip", "tar.gz"])
def test_list_help_load(site, source, fmt):
    branch = "main" if source == "github" else "master"
    site.publish(source, branch=branch, fmt=fmt)
    names = hub.list("alice/models", source=source, trust_repo=True)
    assert names == ENTRYPOINTS
    doc = hub.help("alice/models", "tiny", source=source)
    assert doc.startswith("A tiny model.") and "scale (int)" in doc
    assert hub.help("alice/models", "nodoc", source=source) is None
    out = hub.load("alice/models", "tiny", source=source, scale=3, extra="x")
    assert out == {"version": 1, "branch": branch, "scale": 3, "extra": "x"}
    layer = hub.load("alice/models", "linear", source=source, in_features=5, out_features=7)
    assert isinstance(layer, paddle_hl.nn.Linear)
    assert layer.weight.shape == [5, 7]
    assert hub.load("alice/models", "sibling", source=source) == "from the sibling module"
    net = hub.load("alice/models", "Net", source=source, width=9)
    assert net.width == 9 and type(net).__module__ == "hubconf"
    # one download, then the cache; the folder is owner_repo_branch with the repository's files
    assert site.server.hits(site.path(source, branch=branch, fmt=fmt)) == 1
    cache = site.cache(f"alice_models_{branch}")
    assert (cache / "hubconf.py").is_file() and (cache / "pkg" / "model.py").is_file()
    assert _leftovers(site.hub_dir) == []
    assert sorted(n for n in os.listdir(site.hub_dir) if not n.endswith(".lock")) == [
        f"alice_models_{branch}", "trusted_list"]


def test_repo_folder_named_after_branch_in_archive(site):
    # GitHub's /archive/<branch>.zip puts everything under <repo>-<branch>/
    files = repo_files()
    site.publish(data=zip_bytes(files, "models-main"))
    assert hub.list("alice/models", trust_repo=True) == ENTRYPOINTS


def test_archive_without_top_folder(site):
    files = repo_files()
    buf = zip_bytes(files, "x")
    # rebuild without the top folder: members at the archive root
    import io

    flat = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(buf)) as src, zipfile.ZipFile(flat, "w") as dst:
        for info in src.infolist():
            name = info.filename[2:]
            if name:
                dst.writestr(name, src.read(info.filename))
    site.publish(data=flat.getvalue())
    assert hub.load("alice/models", "tiny", trust_repo=True)["version"] == 1


def test_archive_without_hubconf(site):
    site.publish(data=zip_bytes({"README.md": b"hi"}, "alice-models-abc1234"))
    with pytest.raises(RuntimeError, match="no hubconf.py"):
        hub.list("alice/models", trust_repo=True)
    assert not site.cache("alice_models_main").exists()
    assert _leftovers(site.hub_dir) == []


# --- branches -----------------------------------------------------------------------------------

def test_explicit_branch(site):
    site.publish(branch="main", version=1)
    site.publish(branch="dev", version=2)
    out = hub.load("alice/models:dev", "tiny", trust_repo=True)
    assert out["branch"] == "dev" and out["version"] == 2
    assert site.cache("alice_models_dev").is_dir()
    assert not site.cache("alice_models_main").exists()
    assert site.server.hits(site.path(branch="main")) == 0


def test_branch_with_slash(site):
    site.publish(branch="release/2.6")
    out = hub.load("alice/models:release/2.6", "tiny", trust_repo=True)
    assert out["branch"] == "release/2.6"
    assert site.cache("alice_models_release_2.6").is_dir()


def test_github_default_main_then_master(site):
    site.publish("github", branch="master")
    out = hub.load("alice/models", "tiny", trust_repo=True)
    assert out["branch"] == "master"
    # main answered 404 once (a 404 is not retried), then master was fetched
    assert site.server.hits(site.path(branch="main")) == 1
    assert site.server.hits(site.path(branch="master")) == 1
    assert site.cache("alice_models_master").is_dir()
    # the cache of the fallback branch is found again without the network
    hub.load("alice/models", "tiny")
    assert site.server.hits(site.path(branch="main")) == 1


def test_github_prefers_main(site):
    site.publish("github", branch="master")
    site.publish("github", branch="main")
    assert hub.load("alice/models", "tiny", trust_repo=True)["branch"] == "main"
    assert site.server.hits(site.path(branch="master")) == 0


def test_gitee_default_master(site):
    site.publish("gitee", branch="main")
    site.publish("gitee", branch="master")
    assert hub.load("alice/models", "tiny", source="gitee", trust_repo=True)["branch"] == "master"
    assert site.server.hits(site.path("gitee", branch="main")) == 0


def test_repository_not_found(site):
    with pytest.raises(RuntimeError, match=r"alice/nothing .*'main' or 'master'.*404"):
        hub.list("alice/nothing", trust_repo=True)
    assert [n for n in os.listdir(site.hub_dir)
            if n != "trusted_list" and not n.endswith(".lock")] == []


def test_http_error_is_not_a_missing_branch(site):
    site.publish(branch="master")
    site.server.fail(site.path(branch="main"), status=503, times=1)
    with pytest.raises(RuntimeError, match="HTTP 503"):
        hub.list("alice/models", trust_repo=True)
    assert site.server.hits(site.path(branch="master")) == 0


# --- cache --------------------------------------------------------------------------------------

def test_cache_reused_without_network(site, capsys, monkeypatch):
    site.publish()
    first = hub.load("alice/models", "tiny", trust_repo=True)
    capsys.readouterr()
    # point GitHub at a port nothing listens on: only the cache can answer
    monkeypatch.setenv("PADDLE_HL_HUB_GITHUB_URL", "http://127.0.0.1:9")
    assert hub.load("alice/models", "tiny") == first
    assert hub.list("alice/models") == ENTRYPOINTS
    err = capsys.readouterr().err
    assert f"Using cache found in {site.cache('alice_models_main')}" in err
    assert site.server.hits(site.path()) == 1


def test_default_cache_locations(tmp_path, monkeypatch):
    from paddle_hl.hub import _repo

    monkeypatch.delenv("PADDLE_HL_HUB_DIR", raising=False)
    monkeypatch.delenv("PADDLE_HL_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert _repo.hub_dir() == str(tmp_path / ".cache" / "paddle" / "hub")
    monkeypatch.setenv("PADDLE_HL_HOME", str(tmp_path / "home"))
    assert _repo.hub_dir() == str(tmp_path / "home" / "hub")
    monkeypatch.setenv("PADDLE_HL_HUB_DIR", str(tmp_path / "elsewhere"))
    assert _repo.hub_dir() == str(tmp_path / "elsewhere")


def test_force_reload_refreshes(site):
    site.publish(version=1)
    assert hub.load("alice/models", "tiny", trust_repo=True)["version"] == 1
    site.publish(version=2)
    assert hub.load("alice/models", "tiny")["version"] == 1
    assert hub.load("alice/models", "tiny", force_reload=True)["version"] == 2
    assert hub.load("alice/models", "tiny")["version"] == 2
    assert site.server.hits(site.path()) == 2
    assert _leftovers(site.hub_dir) == []


def test_force_reload_drops_deleted_files(site):
    site.publish(version=1)
    hub.list("alice/models", trust_repo=True)
    (site.cache("alice_models_main") / "stale.txt").write_text("local edit")
    hub.list("alice/models", force_reload=True)
    assert not (site.cache("alice_models_main") / "stale.txt").exists()


def test_github_and_gitee_do_not_share_a_cache(site):
    site.publish("github", branch="master", version="from github")
    site.publish("gitee", branch="master", version="from gitee")
    assert hub.load("alice/models:master", "tiny", trust_repo=True)["version"] == "from github"
    assert hub.load("alice/models:master", "tiny", source="gitee",
                    trust_repo=True)["version"] == "from gitee"
    assert site.server.hits(site.path("gitee", branch="master")) == 1


# --- dependencies -------------------------------------------------------------------------------

def test_missing_dependency_named(site):
    site.publish(deps=("numpy", "surely_missing_pkg_hub", "also.missing_sub"))
    with pytest.raises(RuntimeError,
                       match="Missing dependencies: surely_missing_pkg_hub, also.missing_sub"):
        hub.load("alice/models", "tiny", trust_repo=True)
    # Paddle checks dependencies when loading only
    assert hub.list("alice/models") == ENTRYPOINTS
    assert hub.help("alice/models", "tiny").startswith("A tiny model.")


# --- broken and hostile archives ----------------------------------------------------------------

def test_not_an_archive(site):
    site.publish(data=b"<html>rate limited</html>" * 10)
    with pytest.raises(RuntimeError, match="not a zip or tar archive"):
        hub.list("alice/models", trust_repo=True)
    assert not site.cache("alice_models_main").exists()
    assert _leftovers(site.hub_dir) == []


def test_corrupt_zip_member(site):
    files = repo_files()
    data = bytearray(zip_bytes(files, "alice-models-abc1234", compression=zipfile.ZIP_STORED))
    at = bytes(data).index(b"A tiny model.")
    data[at] ^= 0x20  # same length, wrong CRC
    site.publish(data=bytes(data))
    with pytest.raises(RuntimeError, match="corrupt"):
        hub.list("alice/models", trust_repo=True)
    assert not site.cache("alice_models_main").exists()
    assert _leftovers(site.hub_dir) == []


def test_truncated_tar_gz_file(site):
    data = tar_gz_bytes(repo_files(), "alice-models-abc1234")
    # the server announces and sends the short length: only the archive itself shows the damage
    site.publish(fmt="tar.gz", data=data[: len(data) * 2 // 3])
    with pytest.raises(RuntimeError, match="corrupt|not a zip or tar"):
        hub.list("alice/models", trust_repo=True)
    assert not site.cache("alice_models_main").exists()
    assert _leftovers(site.hub_dir) == []


@pytest.mark.parametrize("fmt", ["zip", "tar.gz"])
def test_corrupt_download_keeps_old_cache(site, fmt):
    site.publish(fmt=fmt, version=1)
    hub.list("alice/models", trust_repo=True)
    rel = site.publish(fmt=fmt, version=2)
    site.server.corrupt(rel, times=1)
    with pytest.raises(RuntimeError, match="corrupt|not a zip or tar"):
        hub.load("alice/models", "tiny", force_reload=True)
    assert hub.load("alice/models", "tiny")["version"] == 1
    assert _leftovers(site.hub_dir) == []


def _hostile(kind, top):
    files = repo_files()
    if kind == "zip-dotdot":
        return "zip", zip_bytes(files, top, extra={f"{top}/../../../evil.py": b"boom"})
    if kind == "zip-absolute":
        return "zip", zip_bytes(files, top, extra={"/tmp/hub_evil_abs.py": b"boom"})
    if kind == "tar-dotdot":
        return "tar.gz", tar_gz_bytes(files, top, extra=[tar_member("../../evil.py", b"boom")])
    if kind == "tar-absolute":
        return "tar.gz", tar_gz_bytes(files, top,
                                      extra=[tar_member("/tmp/hub_evil_abs.py", b"boom")])
    if kind == "tar-symlink-out":
        return "tar.gz", tar_gz_bytes(files, top, extra=[
            tar_member(f"{top}/escape", kind=tarfile.SYMTYPE, linkname="../../.."),
        ])
    if kind == "tar-hardlink-out":
        return "tar.gz", tar_gz_bytes(files, top, extra=[
            tar_member(f"{top}/passwd", kind=tarfile.LNKTYPE, linkname="../../etc/passwd"),
        ])
    if kind == "tar-device":
        return "tar.gz", tar_gz_bytes(files, top, extra=[
            tar_member(f"{top}/dev", kind=tarfile.CHRTYPE),
        ])
    raise AssertionError(kind)


HOSTILE = ["zip-dotdot", "zip-absolute", "tar-dotdot", "tar-absolute", "tar-symlink-out",
           "tar-hardlink-out", "tar-device"]


@pytest.mark.parametrize("kind", HOSTILE)
def test_unsafe_archive_refused(site, tmp_path, kind):
    before = set(_files_under(tmp_path))
    fmt, data = _hostile(kind, "alice-models-abc1234")
    site.publish(fmt=fmt, data=data)
    with pytest.raises(RuntimeError, match="refusing to unpack"):
        hub.list("alice/models", trust_repo=True)
    assert not site.cache("alice_models_main").exists()
    assert _leftovers(site.hub_dir) == []
    # nothing was written anywhere: the only new files are the archive served and trusted_list
    new = {n for n in set(_files_under(tmp_path)) - before if not n.endswith(".lock")}
    assert new == {os.path.join("www", *site.path(fmt=fmt).split("/")),
                   os.path.join("cache", "hub", "trusted_list")}
    assert not os.path.exists("/tmp/hub_evil_abs.py")


def test_unsafe_archive_keeps_old_cache(site):
    site.publish(version=1)
    hub.list("alice/models", trust_repo=True)
    fmt, data = _hostile("zip-dotdot", "alice-models-abc1234")
    site.publish(fmt=fmt, data=data)
    with pytest.raises(RuntimeError, match="refusing to unpack"):
        hub.list("alice/models", force_reload=True)
    assert hub.load("alice/models", "tiny")["version"] == 1


# --- interrupted downloads ----------------------------------------------------------------------

@pytest.mark.parametrize("fault", ["truncate", "drop"])
def test_interrupted_download_keeps_old_cache(site, fault):
    site.publish(version=1)
    hub.list("alice/models", trust_repo=True)
    rel = site.publish(version=2)
    getattr(site.server, fault)(rel, times=2)  # the first attempt and the retry both fail
    with pytest.raises(RuntimeError, match="truncated|Connection|failed"):
        hub.load("alice/models", "tiny", force_reload=True)
    assert site.server.hits(rel) == 3
    assert hub.load("alice/models", "tiny")["version"] == 1
    assert _leftovers(site.hub_dir) == []


def test_interrupted_first_download_leaves_nothing(site):
    rel = site.publish()
    site.server.truncate(rel, times=2)
    with pytest.raises(RuntimeError, match="truncated|IncompleteRead"):
        hub.list("alice/models", trust_repo=True)
    assert [n for n in os.listdir(site.hub_dir)
            if n != "trusted_list" and not n.endswith(".lock")] == []


def test_interrupted_download_is_retried_once(site):
    rel = site.publish(fmt="tar.gz")
    site.server.truncate(rel, times=1)
    assert hub.list("alice/models", trust_repo=True) == ENTRYPOINTS
    assert site.server.hits(rel) == 2


# --- trust --------------------------------------------------------------------------------------

def _no_input(prompt=""):
    raise AssertionError(f"asked although it should not: {prompt}")


def _answer(text, asked):
    def ask(prompt=""):
        asked.append(prompt)
        return text
    return ask


def _trusted_list(site):
    path = site.hub_dir / "trusted_list"
    return path.read_text().split() if path.exists() else []


def test_untrusted_without_trust_repo_warns_first_time(site, monkeypatch):
    site.publish()
    monkeypatch.setattr("builtins.input", _no_input)
    with pytest.warns(UserWarning, match="untrusted repository: alice/models"):
        assert hub.load("alice/models", "tiny")["version"] == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hub.load("alice/models", "tiny")  # cached now: no second warning
        hub.list("alice/models")
    assert _trusted_list(site) == []


@pytest.mark.parametrize("answer", ["n", "no", "", "N"])
def test_check_refused(site, monkeypatch, answer):
    site.publish()
    asked = []
    monkeypatch.setattr("builtins.input", _answer(answer, asked))
    with pytest.raises(RuntimeError, match="untrusted repository alice/models"):
        hub.load("alice/models", "tiny", trust_repo="check")
    assert len(asked) == 1 and "alice/models" in asked[0]
    assert site.server.hits(site.path()) == 0  # refused before anything was downloaded
    assert not site.hub_dir.exists() or _trusted_list(site) == []


def test_check_unrecognized_answer(site, monkeypatch):
    site.publish()
    monkeypatch.setattr("builtins.input", _answer("maybe", []))
    with pytest.raises(ValueError, match="unrecognized answer 'maybe'"):
        hub.list("alice/models", trust_repo="check")


def test_check_without_terminal_refuses(site, monkeypatch):
    site.publish()

    def eof(prompt=""):
        raise EOFError

    monkeypatch.setattr("builtins.input", eof)
    with pytest.raises(RuntimeError, match="untrusted repository"):
        hub.help("alice/models", "tiny", trust_repo="check")


@pytest.mark.parametrize("answer", ["y", "yes", "Y"])
def test_check_accepted_is_remembered(site, monkeypatch, answer):
    site.publish()
    asked = []
    monkeypatch.setattr("builtins.input", _answer(answer, asked))
    assert hub.load("alice/models", "tiny", trust_repo="check")["version"] == 1
    assert _trusted_list(site) == ["github:alice/models"]
    monkeypatch.setattr("builtins.input", _no_input)
    hub.load("alice/models", "tiny", trust_repo="check")
    assert len(asked) == 1


def test_true_trusts_and_remembers(site, monkeypatch):
    site.publish()
    monkeypatch.setattr("builtins.input", _no_input)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hub.load("alice/models", "tiny", trust_repo=True)
        hub.load("alice/models", "tiny", trust_repo="check", force_reload=True)
        hub.load("alice/models", "tiny", trust_repo=True)
    assert _trusted_list(site) == ["github:alice/models"]


def test_trusted_repo_does_not_warn_first_time(site, monkeypatch):
    site.publish()
    site.hub_dir.mkdir(parents=True)
    (site.hub_dir / "trusted_list").write_text("github:alice/models\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hub.load("alice/models", "tiny")


def test_false_always_asks(site, monkeypatch):
    site.publish()
    hub.list("alice/models", trust_repo=True)
    asked = []
    monkeypatch.setattr("builtins.input", _answer("y", asked))
    hub.load("alice/models", "tiny", trust_repo=False)
    hub.load("alice/models", "tiny", trust_repo=False)
    assert len(asked) == 2
    monkeypatch.setattr("builtins.input", _answer("n", asked))
    with pytest.raises(RuntimeError, match="untrusted"):
        hub.load("alice/models", "tiny", trust_repo=False)
    assert _trusted_list(site) == ["github:alice/models"]


def test_trust_is_per_source(site, monkeypatch):
    site.publish("github")
    site.publish("gitee", branch="master")
    hub.list("alice/models", trust_repo=True)
    asked = []
    monkeypatch.setattr("builtins.input", _answer("n", asked))
    with pytest.raises(RuntimeError, match="untrusted"):
        hub.list("alice/models", source="gitee", trust_repo="check")
    assert len(asked) == 1


@pytest.mark.parametrize("bad", ["yes", 1, "True"])
def test_bad_trust_repo_value(site, bad):
    with pytest.raises(ValueError, match="trust_repo must be None, True, False or 'check'"):
        hub.load("alice/models", "tiny", trust_repo=bad)
    assert site.server.requests == []


# --- argument checks (before any network access) ------------------------------------------------

@pytest.mark.parametrize("repo_dir", ["alice", "alice/models/extra", "alice/", "/models",
                                      "../x/models", "alice/models:", "alice/models:a..b",
                                      "al ice/models", "alice/models:-x"])
def test_malformed_repo_dir(site, repo_dir):
    with pytest.raises(ValueError, match="owner/repo"):
        hub.list(repo_dir, trust_repo=True)
    assert site.server.requests == []


def test_repo_dir_type(site):
    with pytest.raises(TypeError, match="repo_dir must be a str"):
        hub.list(3, trust_repo=True)


def test_unknown_source_and_bad_model_before_download(site):
    site.publish()
    with pytest.raises(ValueError, match='Unknown source: "svn"'):
        hub.load("alice/models", "tiny", source="svn")
    with pytest.raises(ValueError, match="model should be a str"):
        hub.load("alice/models", 3)
    with pytest.raises(ValueError, match="model should be a str"):
        hub.help("alice/models", None)
    assert site.server.requests == []


def test_missing_entrypoint_remote(site):
    site.publish()
    with pytest.raises(RuntimeError, match="Cannot find callable ANSWER in hubconf"):
        hub.load("alice/models", "ANSWER", trust_repo=True)
