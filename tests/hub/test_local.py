"""paddle_hl.hub with source='local', the repository's own hubconf.py (the vision model zoo),
notebook rendering, and parity with paddlepaddle==2.6.2."""

from __future__ import annotations

import inspect
import os
import pathlib
import sys

import pytest

import paddle_hl
from paddle_hl import hub
from tests.hub._repos import SIBLING, repo_files

ROOT = pathlib.Path(__file__).resolve().parents[2]
ENTRYPOINTS = ["Net", "linear", "nodoc", "sibling", "tiny"]


def _write_repo(path, **kw):
    for name, data in repo_files(**kw).items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return path


@pytest.fixture
def repo(tmp_path):
    return _write_repo(tmp_path / "repo")


@pytest.fixture(autouse=True)
def _forget_repo_modules():
    yield
    sys.modules.pop(SIBLING, None)


# --- list / help / load -------------------------------------------------------------------------

def test_list_public_callables(repo):
    names = hub.list(str(repo), source="local")
    assert names == ENTRYPOINTS  # sorted; no _hidden, no modules, no constants, no dependencies
    assert isinstance(names, list)


def test_help_returns_docstring(repo):
    doc = hub.help(str(repo), "tiny", source="local")
    assert isinstance(doc, str)
    assert doc.startswith("A tiny model.\n\n    Args:")
    assert hub.help(str(repo), "Net", source="local") == "A class entrypoint."
    assert hub.help(str(repo), "nodoc", source="local") is None


def test_load_passes_kwargs(repo):
    assert hub.load(str(repo), "tiny", source="local") == {
        "version": 1, "branch": "main", "scale": 1}
    assert hub.load(str(repo), "tiny", "local", False, scale=2, pretrained=False) == {
        "version": 1, "branch": "main", "scale": 2, "pretrained": False}
    layer = hub.load(str(repo), "linear", source="local", in_features=4, out_features=2)
    assert isinstance(layer, paddle_hl.nn.Linear) and layer.weight.shape == [4, 2]
    with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
        hub.load(str(repo), "linear", source="local", nope=1)


def test_repo_modules_importable_and_path_restored(repo):
    path_before = list(sys.path)
    assert hub.load(str(repo), "sibling", source="local") == "from the sibling module"
    assert sys.path == path_before
    assert "hubconf" not in sys.modules


def test_hubconf_module_does_not_leak_between_repos(tmp_path):
    a = _write_repo(tmp_path / "a", version="a")
    b = _write_repo(tmp_path / "b", version="b")
    assert hub.load(str(a), "tiny", source="local")["version"] == "a"
    assert hub.load(str(b), "tiny", source="local")["version"] == "b"
    sys.modules["hubconf"] = placeholder = type(sys)("hubconf")
    try:
        hub.list(str(a), source="local")
        assert sys.modules["hubconf"] is placeholder
    finally:
        del sys.modules["hubconf"]


def test_pathlike_and_user_dir(repo, monkeypatch):
    assert hub.list(repo, source="local") == ENTRYPOINTS
    monkeypatch.setenv("HOME", str(repo.parent))
    assert hub.list("~/repo", source="local") == ENTRYPOINTS


def test_force_reload_is_harmless_for_local(repo):
    assert hub.load(str(repo), "tiny", source="local", force_reload=True)["scale"] == 1


def test_local_ignores_trust(repo, monkeypatch):
    def no_input(prompt=""):
        raise AssertionError("local repositories are not asked about")

    monkeypatch.setattr("builtins.input", no_input)
    assert hub.load(str(repo), "tiny", source="local", trust_repo=False)["version"] == 1
    with pytest.raises(ValueError, match="trust_repo"):
        hub.list(str(repo), source="local", trust_repo="always")


# --- errors -------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", ["list", "help", "load"])
def test_unknown_source(repo, fn):
    args = (str(repo),) if fn == "list" else (str(repo), "tiny")
    with pytest.raises(ValueError, match=f'hub.{fn}: Unknown source: "Local"'):
        getattr(hub, fn)(*args, source="Local")


@pytest.mark.parametrize("fn", ["help", "load"])
@pytest.mark.parametrize("model", [3, None, ["tiny"]])
def test_model_not_str(repo, fn, model):
    with pytest.raises(ValueError, match="model should be a str of function name"):
        getattr(hub, fn)(str(repo), model, source="local")


@pytest.mark.parametrize("fn", ["help", "load"])
@pytest.mark.parametrize("model", ["missing", "ANSWER", "_hidden_not_there", "dependencies"])
def test_entry_missing_or_not_callable(repo, fn, model):
    with pytest.raises(RuntimeError, match=f"Cannot find callable {model} in hubconf"):
        getattr(hub, fn)(str(repo), model, source="local")


def test_missing_dependencies_named(tmp_path):
    repo = _write_repo(tmp_path / "r", deps=("numpy", "no_such_pkg_one", "no_such_pkg_two"))
    with pytest.raises(RuntimeError,
                       match="Missing dependencies: no_such_pkg_one, no_such_pkg_two"):
        hub.load(str(repo), "tiny", source="local")
    assert hub.list(str(repo), source="local") == ENTRYPOINTS


def test_dependencies_as_string_and_absent(tmp_path):
    repo = tmp_path / "r"
    repo.mkdir()
    (repo / "hubconf.py").write_text("dependencies = 'no_such_pkg_str'\ndef m():\n    return 1\n")
    with pytest.raises(RuntimeError, match="Missing dependencies: no_such_pkg_str"):
        hub.load(str(repo), "m", source="local")
    (repo / "hubconf.py").write_text("def m():\n    return 1\n")
    assert hub.load(str(repo), "m", source="local") == 1


@pytest.mark.parametrize("where", ["empty", "missing"])
def test_no_hubconf(tmp_path, where):
    path = tmp_path / "nothing"
    if where == "empty":
        path.mkdir()
    with pytest.raises(RuntimeError, match="no hubconf.py found"):
        hub.list(str(path), source="local")


def test_hubconf_that_raises(tmp_path):
    repo = tmp_path / "r"
    repo.mkdir()
    (repo / "hubconf.py").write_text("import not_a_module_anywhere\n")
    with pytest.raises(RuntimeError, match="importing .*hubconf.py failed with "
                                           "ModuleNotFoundError") as info:
        hub.list(str(repo), source="local")
    assert isinstance(info.value.__cause__, ModuleNotFoundError)
    assert "hubconf" not in sys.modules


def test_repo_dir_type_local():
    with pytest.raises(TypeError, match="repo_dir must be a directory path"):
        hub.list(3, source="local")


def test_signatures_extend_paddles():
    # Paddle's parameters, in order, with Paddle's defaults; trust_repo is keyword-only extra
    want = {"list": ["repo_dir", "source", "force_reload", "trust_repo"],
            "help": ["repo_dir", "model", "source", "force_reload", "trust_repo"],
            "load": ["repo_dir", "model", "source", "force_reload", "trust_repo", "kwargs"]}
    for fn, names in want.items():
        params = inspect.signature(getattr(hub, fn)).parameters
        assert list(params) == names
        assert params["source"].default == "github"
        assert params["force_reload"].default is False
        assert params["trust_repo"].kind is inspect.Parameter.KEYWORD_ONLY
        assert params["trust_repo"].default is None
    assert hub.__all__ == ["list", "help", "load"]
    assert paddle_hl.hub is hub


# --- notebook rendering -------------------------------------------------------------------------

def test_list_renders_as_table(repo):
    names = hub.list(str(repo), source="local")
    page = names._repr_html_()
    assert page.startswith("<table>") and page.endswith("</table>")
    assert page.count("<tr>") == len(ENTRYPOINTS) + 1
    assert "<code>tiny</code>" in page and "<code>(scale=1, **kwargs)</code>" in page
    assert "A tiny model." in page
    assert "&lt;b&gt;" not in page or "<b>not html</b>" not in page
    assert repr(names) == repr(ENTRYPOINTS) and str(names) == str(ENTRYPOINTS)


def test_help_renders_formatted(repo):
    doc = hub.help(str(repo), "tiny", source="local")
    page = doc._repr_html_()
    assert "<b>tiny</b>(scale=1, **kwargs)" in page
    assert "<b>Args:</b>" in page and "<b>Returns:</b>" in page
    # the docstring's own markup is shown, not interpreted
    assert "&lt;b&gt;not html&lt;/b&gt;" in page
    # outside a notebook it is the plain docstring
    assert repr(doc) == repr(str(doc))


def test_rendering_in_ipython(repo):
    pytest.importorskip("IPython")
    from IPython.core.formatters import DisplayFormatter

    formatter = DisplayFormatter()
    data, _ = formatter.format(hub.list(str(repo), source="local"))
    assert data["text/html"].startswith("<table>")
    assert data["text/plain"] == repr(ENTRYPOINTS)
    data, _ = formatter.format(hub.help(str(repo), "tiny", source="local"))
    assert "<b>Args:</b>" in data["text/html"]


# --- the repository's own hubconf: the vision model zoo ----------------------------------------

def test_root_hubconf_lists_the_zoo():
    from paddle_hl.vision.models import MODEL_REGISTRY

    assert hub.list(str(ROOT), source="local") == sorted(MODEL_REGISTRY)


def test_root_hubconf_loads_resnet18():
    from paddle_hl.vision.models import ResNet

    net = hub.load(str(ROOT), "resnet18", source="local", pretrained=False, num_classes=10)
    assert isinstance(net, ResNet)
    out = net(paddle_hl.rand([1, 3, 32, 32]))
    assert out.shape == [1, 10]
    doc = hub.help(str(ROOT), "resnet18", source="local")
    assert "ResNet" in doc


def test_root_hubconf_from_checkout_cwd(monkeypatch):
    monkeypatch.chdir(ROOT)
    assert "mobilenet_v2" in hub.list(".", source="local")


# --- parity with paddlepaddle==2.6.2 ------------------------------------------------------------

@pytest.mark.parity
def test_parity_list_help_load(pd, repo):
    assert hub.list(str(repo), source="local") == pd.hub.list(str(repo), source="local")
    for name in ENTRYPOINTS:
        assert hub.help(str(repo), name, source="local") == pd.hub.help(str(repo), name,
                                                                        source="local")
    for kwargs in [{}, {"scale": 4, "pretrained": True}]:
        assert hub.load(str(repo), "tiny", source="local", **kwargs) == pd.hub.load(
            str(repo), "tiny", source="local", **kwargs)
    ours = hub.load(str(repo), "Net", source="local", width=3)
    theirs = pd.hub.load(str(repo), "Net", source="local", width=3)
    assert type(ours).__name__ == type(theirs).__name__
    assert type(ours).__module__ == type(theirs).__module__ == "hubconf"
    assert vars(ours) == vars(theirs)
    # Paddle takes the repository off sys.path before the entrypoint runs, so its lazy import of
    # a sibling module only worked while an earlier load had left that module in sys.modules;
    # paddle_hl keeps the repository importable during the call and leaves nothing behind
    assert hub.load(str(repo), "sibling", source="local") == "from the sibling module"


@pytest.mark.parity
def test_parity_errors(pd, tmp_path, repo):
    # (a directory without hubconf.py is left out: Paddle then imports any 'hubconf' module
    # reachable on sys.path, e.g. one in the working directory; paddle_hl raises RuntimeError)
    bad_deps = _write_repo(tmp_path / "deps", deps=("numpy", "no_such_pkg_one"))
    cases = [
        (lambda m: m.hub.load(str(repo), "missing", source="local"), "Cannot find callable"),
        (lambda m: m.hub.load(str(repo), "ANSWER", source="local"), "Cannot find callable"),
        (lambda m: m.hub.help(str(repo), "missing", source="local"), "Cannot find callable"),
        (lambda m: m.hub.load(str(repo), 3, source="local"), "model should be a str"),
        (lambda m: m.hub.list(str(repo), source="svn"), 'Unknown source: "svn"'),
        (lambda m: m.hub.load(str(bad_deps), "tiny", source="local"),
         "Missing dependencies: no_such_pkg_one"),
    ]
    for call, text in cases:
        with pytest.raises(Exception) as theirs:
            call(pd)
        with pytest.raises(type(theirs.value), match=text) as ours:
            call(paddle_hl)
        assert text in str(theirs.value)
        assert type(ours.value) is type(theirs.value)


@pytest.mark.parity
def test_parity_root_hubconf(pd):
    assert hub.list(str(ROOT), source="local") == pd.hub.list(str(ROOT), source="local")
    assert hub.help(str(ROOT), "vgg11", source="local") == pd.hub.help(str(ROOT), "vgg11",
                                                                       source="local")
    ours = hub.load(str(ROOT), "squeezenet1_1", source="local", pretrained=False)
    theirs = pd.hub.load(str(ROOT), "squeezenet1_1", source="local", pretrained=False)
    assert type(ours) is type(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert os.path.isfile(ROOT / "hubconf.py")
