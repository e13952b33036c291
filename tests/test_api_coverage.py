"""Every public name of the in-scope Paddle 2.6 namespaces exists, works, and has Paddle's
signature (parameter names and defaults), per ../shared/api/paddle-2.6-api.json."""

from __future__ import annotations

import enum
import importlib
import inspect
import json
import pathlib
import re

import pytest

import paddle_hl

API_FILE = pathlib.Path(__file__).resolve().parents[2] / "shared" / "api" / "paddle-2.6-api.json"

# Namespaces whose issue has landed. Names of these namespaces that belong to a later issue are
# listed in PENDING with the issue that builds them; the list only ever shrinks.
NAMESPACES = ["paddle_hl", "paddle_hl.Tensor", "paddle_hl.linalg", "paddle_hl.fft",
              "paddle_hl.signal", "paddle_hl.autograd", "paddle_hl.utils.dlpack",
              "paddle_hl.optimizer", "paddle_hl.optimizer.lr", "paddle_hl.io",
              "paddle_hl.metric", "paddle_hl.callbacks", "paddle_hl.nn", "paddle_hl.nn.functional",
              "paddle_hl.nn.initializer", "paddle_hl.nn.utils", "paddle_hl.amp",
              "paddle_hl.profiler", "paddle_hl.hub", "paddle_hl.vision",
              "paddle_hl.vision.models", "paddle_hl.vision.transforms",
              "paddle_hl.vision.datasets", "paddle_hl.vision.ops", "paddle_hl.distribution",
              "paddle_hl.audio", "paddle_hl.audio.backends", "paddle_hl.audio.datasets",
              "paddle_hl.audio.features", "paddle_hl.audio.functional", "paddle_hl.geometric",
              "paddle_hl.text", "paddle_hl.text.datasets", "paddle_hl.sparse",
              "paddle_hl.sparse.nn", "paddle_hl.sparse.nn.functional", "paddle_hl.distributed",
              "paddle_hl.jit"]
PENDING = {}


def _api():
    if not API_FILE.exists():
        pytest.skip(f"{API_FILE} not found (it lives in ../shared beside the checkout)")
    return json.loads(API_FILE.read_text())


def _resolve(ns, name):
    if ns == "paddle_hl.Tensor":
        return getattr(paddle_hl.Tensor, name)
    mod = importlib.import_module(ns)
    return getattr(mod, name)


def _params(sig: str):
    """(name, default-repr or None) for each parameter of a signature string."""
    sig = re.sub(r"\s*->.*$", "", sig.strip())
    inner = sig[1:-1]
    out, depth, cur = [], 0, ""
    for ch in inner:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    res = []
    for p in out:
        if p in ("/", "*") or p.startswith("*"):
            continue
        name, _, default = p.partition("=")
        name = name.split(":")[0].strip()
        res.append((name, default.strip() or None))
    return res


def _names(ns):
    api = _api()
    if ns == "paddle_hl.Tensor":
        return {n: None for n in api["paddle_hl"]["Tensor"]["methods"]}
    return api[ns]


@pytest.mark.parametrize("ns", NAMESPACES)
def test_names_exist(ns):
    pending = PENDING.get(ns, {})
    missing = []
    for name in _names(ns):
        if name in pending:
            continue
        try:
            _resolve(ns, name)
        except AttributeError:
            missing.append(name)
    assert not missing, f"{ns}: {len(missing)} names missing: {missing}"


@pytest.mark.parametrize("ns", [n for n in NAMESPACES if n != "paddle_hl.Tensor"])
def test_signatures_match(ns):
    pending = PENDING.get(ns, {})
    bad = []
    for name, info in _names(ns).items():
        sig = info.get("signature")
        if name in pending or info.get("kind") not in ("function", "class") or not sig or \
                sig.startswith("(/, *args"):
            continue
        try:
            obj = _resolve(ns, name)
        except AttributeError:
            continue
        if isinstance(obj, type) and issubclass(obj, enum.Enum):
            continue  # enums are not called with arguments
        try:
            ours = inspect.signature(obj)
        except (TypeError, ValueError):
            bad.append(f"{name}: no signature")
            continue
        want = _params(info["signature"])
        wanted = {n for n, _ in want}
        # keyword-only extras that Paddle lacks (e.g. hub's trust_repo) are allowed
        got = [(p.name, None if p.default is inspect.Parameter.empty else repr(p.default))
               for p in ours.parameters.values()
               if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               and not (p.kind == p.KEYWORD_ONLY and p.name not in wanted)]
        if [n for n, _ in want] != [n for n, _ in got]:
            bad.append(f"{name}: parameters {[n for n, _ in got]} != {[n for n, _ in want]}")
            continue
        for (n, dw), (_, dg) in zip(want, got):
            if (dw is None) != (dg is None):
                bad.append(f"{name}: default of '{n}' is {dg}, Paddle has {dw}")
            elif dw is not None and _norm(dw) != _norm(dg):
                bad.append(f"{name}: default of '{n}' is {dg}, Paddle has {dw}")
    assert not bad, f"{ns}: {len(bad)} signature mismatches:\n" + "\n".join(bad)


def _norm(s):
    s = s.replace('"', "'")
    s = re.sub(r"<class '(\w+\.)*(\w+)'>", r"\2", s)
    s = s.replace("Variable", "Tensor")  # Paddle's static Variable is paddle_hl's Tensor
    try:
        v = eval(s, {"__builtins__": {}}, {})  # noqa: S307  (literal defaults only)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return float(v)
        return v
    except Exception:
        return s


# Abstract base classes whose methods subclasses must override (Paddle raises there too).
ABSTRACT = {"Dataset", "IterableDataset", "Sampler", "Layer", "Metric", "RNNCellBase",
            "Initializer", "Distribution", "Transform"}


def test_no_placeholder_raises():
    """No public callable is a NotImplementedError placeholder (abstract base methods aside)."""
    import ast

    root = pathlib.Path(paddle_hl.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for cls in [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]:
            if cls.name in ABSTRACT:
                for node in ast.walk(cls):
                    node._abstract = True
        for node in ast.walk(tree):
            if isinstance(node, ast.Raise) and node.exc is not None and not getattr(
                    node, "_abstract", False):
                exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                if isinstance(exc, ast.Name) and exc.id == "NotImplementedError":
                    offenders.append(f"{path.relative_to(root)}:{node.lineno}")
    assert not offenders, offenders


def test_pending_names_really_missing():
    """PENDING lists only names that are still missing: remove them as they land."""
    landed = [f"{ns}.{n}" for ns, names in PENDING.items() for n in names
              if _exists(ns, n)]
    assert not landed, f"remove from PENDING, they exist now: {landed}"


def _exists(ns, n):
    try:
        _resolve(ns, n)
        return True
    except AttributeError:
        return False


def test_inplace_method_only_names_are_not_top_level():
    for name in ["clip_", "scale_", "add_", "subtract_", "ceil_", "floor_", "exp_",
                 "reciprocal_", "round_", "sqrt_", "rsqrt_", "flatten_"]:
        assert not hasattr(paddle_hl, name), name
