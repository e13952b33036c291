"""One door to the compiled kernels, the thread pool and OpenBLAS: only ``paddle_hl/backend/``
names numba, ``backend._numba``, ``backend._threads`` and ``backend._openblas``; everything
else asks the backend (``backend.kernel``, ``backend.split``, ``backend.parallel_map``, ...).
And every function of the package and its domains stays short enough to read."""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "paddle_hl"
DOMAINS = ("vision", "audio", "text", "geometric", "hub")
BACKEND = PACKAGE / "backend"
PRIVATE = ("_numba", "_threads", "_openblas")
FORBIDDEN = tuple(f"paddle_hl.backend.{name}" for name in PRIVATE)
MAX_FUNCTION_LINES = 150


def _sources():
    yield from PACKAGE.rglob("*.py")
    for d in DOMAINS:
        yield from (ROOT / d).rglob("*.py")


def _module_name(path):
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[0] in DOMAINS:
        parts.insert(0, "paddle_hl")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imported(tree, module, is_package):
    """Every module an import statement of ``tree`` names (``from a import b`` gives ``a``
    and ``a.b``), relative imports resolved against ``module``."""
    base = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                head = base[:len(base) - node.level + 1]
                src = ".".join(head + ([node.module] if node.module else []))
            else:
                src = node.module or ""
            yield node.lineno, src
            for alias in node.names:
                yield node.lineno, f"{src}.{alias.name}"


def _bad(name):
    return (name == "numba" or name.startswith("numba.")
            or any(name == f or name.startswith(f + ".") for f in FORBIDDEN))


def _violations(path):
    tree = ast.parse(path.read_text(), str(path))
    found = [(line, name) for line, name in
             _imported(tree, _module_name(path), path.name == "__init__.py") if _bad(name)]
    for node in ast.walk(tree):  # backend._threads.split(...) after "from .. import backend"
        if (isinstance(node, ast.Attribute) and node.attr in PRIVATE
                and isinstance(node.value, ast.Name) and node.value.id == "backend"):
            found.append((node.lineno, f"backend.{node.attr}"))
    return found


def test_nothing_outside_the_backend_names_numba_threads_or_openblas():
    found = {}
    for path in _sources():
        if BACKEND in path.parents:
            continue
        hits = _violations(path)
        if hits:
            found[str(path.relative_to(ROOT))] = hits
    assert not found, ("modules outside paddle_hl/backend/ reach the compiled kernels, the "
                       f"thread pool or OpenBLAS directly (ask the backend instead): {found}")


def test_the_check_sees_each_kind_of_import(tmp_path):
    # the check must catch what it is meant to: absolute, relative and attribute forms
    cases = {
        "import numba\n": True,
        "from numba import njit\n": True,
        "from ...backend import _threads\n": True,
        "from ...backend._numba import norm\n": True,
        "from paddle_hl.backend import _openblas\n": True,
        "from ... import backend\nbackend._threads.split(None, 1, 0)\n": True,
        "from ... import backend\nbackend.split(None, None, 1, 0)\n": False,
        "from ...backend import settings\n": False,
    }
    where = PACKAGE / "nn" / "functional" / "probe.py"
    for src, bad in cases.items():
        tree = ast.parse(src)
        hits = [n for _, n in _imported(tree, _module_name(where), False) if _bad(n)]
        hits += [n for n in ast.walk(tree) if isinstance(n, ast.Attribute)
                 and n.attr in PRIVATE and getattr(n.value, "id", None) == "backend"]
        assert bool(hits) is bad, src


def _long_functions(tree):
    """``(line, name, lines)`` of every function of ``tree`` over the limit."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            n = node.end_lineno - node.lineno + 1
            if n > MAX_FUNCTION_LINES:
                yield node.lineno, node.name, n


def test_functions_stay_short():
    # every function of the package and of the domains, with no exception (none is generated)
    long = [f"{path.relative_to(ROOT)}:{line} {name} ({n} lines)" for path in _sources()
            for line, name, n in _long_functions(ast.parse(path.read_text(), str(path)))]
    assert not long, (f"functions over {MAX_FUNCTION_LINES} lines (split them into named "
                      f"steps): {long}")


def test_the_length_check_counts_lines_of_nested_and_async_functions():
    def source(kind, lines):  # a function of ``lines`` lines nested in a class
        body = "".join(f"        x{i} = {i}\n" for i in range(lines - 1))
        return f"class C:\n    {kind} f(self):\n{body}"

    for kind in ("def", "async def"):
        assert not list(_long_functions(ast.parse(source(kind, MAX_FUNCTION_LINES))))
        assert list(_long_functions(ast.parse(source(kind, MAX_FUNCTION_LINES + 1)))) == [
            (2, "f", MAX_FUNCTION_LINES + 1)]


def test_only_the_numba_package_imports_numba():
    # inside the backend too: one place tries the import, the families follow it
    allowed = {BACKEND / "_numba" / "__init__.py", BACKEND / "_numba" / "_njit.py"}
    found = []
    for path in BACKEND.rglob("*.py"):
        if path in allowed:
            continue
        tree = ast.parse(path.read_text(), str(path))
        for line, name in _imported(tree, _module_name(path), path.name == "__init__.py"):
            if name == "numba" or name.startswith("numba."):
                found.append(f"{path.relative_to(ROOT)}:{line}")
    assert not found, found
