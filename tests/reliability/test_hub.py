"""Hub isolation: an interactive session is asked before untrusted code runs (a real `python -i`
process answering on stdin), repositories never share helper modules through sys.modules, and
a cache folder without paddle_hl's provenance marker is refused."""

from __future__ import annotations

import sys
import textwrap
import types

import pytest

import paddle_hl
from tests.http_server import serve_directory
from tests.hub._repos import repo_files, top_folder, zip_bytes

from ._helpers import env, run

hub = paddle_hl.hub

LIST = """
import warnings
warnings.simplefilter("always")
import paddle_hl
try:
    print("LIST", paddle_hl.hub.list("alice/models"))
except RuntimeError as e:
    print("REFUSED", e)
"""


@pytest.fixture
def site(tmp_path):
    with serve_directory(tmp_path / "www") as srv:
        srv.put("alice/models/archive/main.zip",
                zip_bytes(repo_files(), top_folder("alice", "models", "main")))
        yield srv, {"PADDLE_HL_HUB_DIR": str(tmp_path / "hub"),
                    "PADDLE_HL_HUB_GITHUB_URL": srv.base_url}


def _interactive(tmp_path, answer, extra_env):
    """A real interactive interpreter (``python -i``) that runs the script, then answers."""
    import subprocess

    script = tmp_path / "session.py"
    script.write_text(LIST)
    stdin = f"exec(open({str(script)!r}).read())\n"
    if answer is not None:
        stdin += f"{answer}\n"
    return subprocess.run([sys.executable, "-q", "-i"], input=stdin, capture_output=True,
                          text=True, timeout=120, env=env(**extra_env),
                          cwd=str(tmp_path))


def test_interactive_session_is_asked_before_running_untrusted_code(site, tmp_path):
    srv, extra = site
    res = _interactive(tmp_path, "n", extra)
    assert "Do you trust this repository" in res.stdout + res.stderr
    assert "REFUSED" in res.stdout and "untrusted repository alice/models" in res.stdout
    assert srv.hits("alice/models/archive/main.zip") == 0  # nothing downloaded, nothing run
    res = _interactive(tmp_path, "y", extra)
    assert "LIST ['Net', 'linear', 'nodoc', 'sibling', 'tiny']" in res.stdout, res.stderr
    # trusted from now on: no question, even with nobody to answer
    res = _interactive(tmp_path, "", extra)
    assert "Do you trust" not in res.stdout + res.stderr
    assert "LIST" in res.stdout


def test_interactive_session_that_cannot_answer_keeps_paddles_default(site, tmp_path):
    # stdin ends right after the code (an unattended session): the question gets no answer, so
    # the default is Paddle's, a warning, rather than a refusal
    srv, extra = site
    res = _interactive(tmp_path, None, extra)
    assert "Do you trust this repository" in res.stdout + res.stderr  # it did ask
    assert "LIST ['Net'" in res.stdout, res.stderr
    assert "untrusted repository" in res.stderr


def test_script_keeps_paddles_default(site, tmp_path):
    srv, extra = site
    res = run(LIST, timeout=120, **extra)
    assert "LIST ['Net'" in res.stdout, res.stderr
    assert "untrusted repository" in res.stderr  # the warning, as before
    assert "Do you trust" not in res.stdout + res.stderr


def _local_repo(root, value, name="helpers"):
    root.mkdir(parents=True)
    (root / f"{name}.py").write_text(f"VALUE = {value!r}\n")
    (root / "hubconf.py").write_text(textwrap.dedent(f"""\
        import {name} as _h

        AT_IMPORT = _h.VALUE


        def value():
            import {name}
            return {name}.VALUE, AT_IMPORT
    """))
    return str(root)


def test_repositories_do_not_share_helper_modules(tmp_path):
    a = _local_repo(tmp_path / "a", "from a")
    b = _local_repo(tmp_path / "b", "from b")
    assert hub.load(a, "value", source="local") == ("from a", "from a")
    assert "helpers" not in sys.modules
    assert hub.load(b, "value", source="local") == ("from b", "from b")
    assert hub.list(a, source="local") == ["value"]
    assert hub.load(a, "value", source="local") == ("from a", "from a")
    assert "helpers" not in sys.modules


def test_users_own_module_of_the_same_name_is_restored(tmp_path, monkeypatch):
    mine = types.ModuleType("helpers")
    mine.VALUE = "the user's"
    monkeypatch.setitem(sys.modules, "helpers", mine)
    a = _local_repo(tmp_path / "a", "from a")
    assert hub.load(a, "value", source="local") == ("from a", "from a")
    assert sys.modules["helpers"] is mine


def test_cache_folder_without_provenance_is_refused(site, tmp_path, monkeypatch):
    srv, extra = site
    for k, v in extra.items():
        monkeypatch.setenv(k, v)
    planted = tmp_path / "hub" / "alice_models_main"
    planted.mkdir(parents=True)
    ran = tmp_path / "planted-code-ran"
    (planted / "hubconf.py").write_text(f"open({str(ran)!r}, 'w').close()\n"
                                        "def tiny():\n    return 'planted'\n")
    with pytest.raises(RuntimeError, match=r"paddle_hl did not download .*provenance") as info:
        hub.load("alice/models", "tiny", trust_repo=True)
    assert str(planted) in str(info.value) and "force_reload=True" in str(info.value)
    assert not ran.exists()
    # force_reload replaces it with a real download, which then loads
    out = hub.load("alice/models", "tiny", trust_repo=True, force_reload=True)
    assert out["version"] == 1 and not ran.exists()
    assert srv.hits("alice/models/archive/main.zip") == 1
    assert hub.load("alice/models", "tiny", trust_repo=True)["version"] == 1


LOAD = """
import paddle_hl
print("OUT", paddle_hl.hub.load("alice/models", "tiny", trust_repo=True, scale=2))
"""


def test_processes_loading_one_new_repository_at_once(site, tmp_path):
    from ._helpers import popen

    srv, extra = site
    procs = [popen(LOAD, **extra) for _ in range(3)]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert "OUT {'version': 1, 'branch': 'main', 'scale': 2}" in out
    assert srv.hits("alice/models/archive/main.zip") == 1  # one fetched, the others waited
