"""Every import points down the stack.

Each module of paddle_hl and of the domain folders (vision/, audio/, text/, geometric/, hub/) is
parsed with ``ast`` and placed in a layer; an import from a lower layer to a higher one fails the
test, and so does a new import cycle among modules. Imports inside functions count as much as
module-level ones, and so do ``importlib.import_module("paddle_hl...")`` calls and attribute
chains through an imported package (``paddle.nn.functional.relu`` after ``import paddle_hl as
paddle`` is an import of ``paddle_hl.nn.functional``). The few upward edges that stay are listed
in ``ALLOWED`` with the reason; the cycles that stay, in ``KNOWN_CYCLES``.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOMAINS = ("vision", "audio", "text", "geometric", "hub")

# Lowest first: a module may import its own layer and the layers below it.
LAYERS = [
    # the finder that lets a plain checkout import its domain folders: imports nothing
    ("bootstrap", ["paddle_hl._checkout"]),
    # the notebook views render what they are handed and import nothing else from paddle_hl, so
    # everything that shows itself in Jupyter (progress bar, profiler, AMP, summary) calls down
    ("views", ["paddle_hl.notebook"]),
    ("backend", ["paddle_hl.backend"]),
    ("framework", ["paddle_hl.framework"]),
    ("tensor", ["paddle_hl.tensor", "paddle_hl.fft", "paddle_hl.linalg", "paddle_hl.signal",
                "paddle_hl.regularizer", "paddle_hl.device", "paddle_hl.version"]),
    ("nn", ["paddle_hl.nn"]),
    ("training", ["paddle_hl.optimizer", "paddle_hl.io", "paddle_hl.metric", "paddle_hl.sparse",
                  "paddle_hl.distribution"]),
    ("tools", ["paddle_hl.amp", "paddle_hl.autograd", "paddle_hl.profiler", "paddle_hl.static",
               "paddle_hl.jit", "paddle_hl.incubate", "paddle_hl.utils",
               "paddle_hl.inference", "paddle_hl.base", "paddle_hl.dataset",
               "paddle_hl.reader"]),
    ("hapi", ["paddle_hl.hapi", "paddle_hl.callbacks", "paddle_hl.distributed",
              "paddle_hl.onnx"]),
    ("domains", [f"paddle_hl.{d}" for d in DOMAINS]),
]
# The top-level namespace (paddle_hl/__init__.py) imports framework and tensor when it loads,
# so importing it counts as importing the tensor layer; it reaches every other subpackage only
# lazily, on first attribute access (``paddle_hl.nn``), which is its purpose: its own lazy
# imports are not checked.
FACE = "paddle_hl"
FACE_LAYER = "tensor"

# (importing module, imported module): why this upward edge stays. Each must be a lazy import.
ALLOWED = {
    ("paddle_hl.notebook", "paddle_hl.hapi"):
        "lr_find and interpret are reached as paddle_hl.notebook.* beside show_batch, but they "
        "run a Model, so they live in hapi; the notebook package forwards the two names on "
        "first access and its views still import nothing of the library",
    ("paddle_hl.incubate._graph", "paddle_hl.geometric"):
        "paddle.incubate.graph_send_recv and friends are Paddle's older names of the geometric "
        "domain's ops; the core reaches a domain only lazily",
}

# Cycles that remain, each with the reason; a strongly connected group of modules must lie
# inside one of them. Anything else is a new cycle and fails.
KNOWN_CYCLES: dict = {}


def _modules() -> dict:
    """module name -> (path, is_package) for paddle_hl and the mapped domain folders."""
    out = {}
    for top, prefix in [("paddle_hl", "paddle_hl")] + [(d, f"paddle_hl.{d}") for d in DOMAINS]:
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = list(path.relative_to(ROOT / top).with_suffix("").parts)
            is_pkg = parts[-1] == "__init__"
            if is_pkg:
                parts = parts[:-1]
            out[".".join([prefix, *parts])] = (path, is_pkg)
    return out


MODULES = _modules()


def _owner(name: str) -> str | None:
    """The module that ``name`` (a dotted path, maybe down to an attribute) lives in."""
    while name not in MODULES:
        if "." not in name:
            return None
        name = name.rsplit(".", 1)[0]
    return name


class _Imports(ast.NodeVisitor):
    """(line, imported module, lazy) for every paddle_hl import of one module."""

    def __init__(self, name: str, is_pkg: bool):
        self.name, self.is_pkg = name, is_pkg
        self.depth = 0
        self.aliases = {}  # local name -> module, for attribute chains through a package
        self.found = []
        self.missing = []  # (line, module) imported from a module that does not exist

    def _add(self, node, target):
        target = _owner(target)
        if target is not None and target != self.name:
            self.found.append((node.lineno, target, self.depth > 0))

    def _function(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_Import(self, node):
        for a in node.names:
            if a.name.split(".")[0] == "paddle_hl":
                self._add(node, a.name)
                local = a.asname or a.name.split(".")[0]
                self.aliases[local] = a.name if a.asname else "paddle_hl"

    def visit_ImportFrom(self, node):
        if node.level:
            base = self.name.split(".")
            if not self.is_pkg:
                base = base[:-1]
            base = base[:len(base) - node.level + 1]
            mod = ".".join(base + ([node.module] if node.module else []))
        else:
            mod = node.module or ""
        if mod.split(".")[0] != "paddle_hl":
            return
        if mod not in MODULES:
            self.missing.append((node.lineno, mod))
        for a in node.names:
            sub = f"{mod}.{a.name}"
            self._add(node, sub if sub in MODULES else mod)
            if sub in MODULES and MODULES[sub][1]:
                self.aliases[a.asname or a.name] = sub

    def visit_Call(self, node):
        fn = node.func
        called = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", None)
        if called == "import_module" and node.args:
            target = self._literal(node.args[0])
            if target is not None:
                self._add(node, target)
        self.generic_visit(node)

    def _literal(self, arg):
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return arg.value if arg.value.startswith("paddle_hl") else None
        # f"{__name__}.sub": a submodule of this package
        if (isinstance(arg, ast.JoinedStr) and len(arg.values) == 2
                and isinstance(arg.values[0], ast.FormattedValue)
                and getattr(arg.values[0].value, "id", None) == "__name__"
                and isinstance(arg.values[1], ast.Constant)):
            return self.name + arg.values[1].value
        return None

    def visit_Attribute(self, node):
        chain = []
        cur = node
        while isinstance(cur, ast.Attribute):
            chain.append(cur.attr)
            cur = cur.value
        if isinstance(cur, ast.Name) and cur.id in self.aliases:
            dotted = ".".join([self.aliases[cur.id], *reversed(chain)])
            target = _owner(dotted)
            if target is not None and target != self.aliases[cur.id]:
                self._add(node, target)
            return  # the inner Attribute nodes are parts of this chain
        self.generic_visit(node)


def _edges():
    edges, missing = [], []
    for name, (path, is_pkg) in MODULES.items():
        v = _Imports(name, is_pkg)
        v.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        edges.extend((name, target, line, lazy) for line, target, lazy in v.found)
        missing.extend(f"{path.relative_to(ROOT)}:{line}: {mod}" for line, mod in v.missing)
    return edges, missing


RANK = {prefix: i for i, (_, prefixes) in enumerate(LAYERS) for prefix in prefixes}
LAYER_NAMES = [n for n, _ in LAYERS]


def _layer(module: str) -> int:
    if module == FACE:
        return LAYER_NAMES.index(FACE_LAYER)
    parts = module.split(".")
    for n in range(len(parts), 1, -1):
        rank = RANK.get(".".join(parts[:n]))
        if rank is not None:
            return rank
    raise AssertionError(f"{module} is in no layer: add its package to LAYERS in {__file__}")


def _allowed(src, dst):
    """The ALLOWED entry covering src -> dst (src may be a package of the module)."""
    for (a, b), why in ALLOWED.items():
        inside = dst == b or (b != FACE and dst.startswith(b + "."))
        if (src == a or src.startswith(a + ".")) and inside:
            return (a, b), why
    return None


def _where(module, line):
    return f"{MODULES[module][0].relative_to(ROOT)}:{line}"


EDGES, MISSING = _edges()


def test_imports_name_modules_that_exist():
    assert not MISSING, "imports from modules that do not exist:\n" + "\n".join(MISSING)


def test_every_module_has_a_layer():
    for name in MODULES:
        _layer(name)


def _upward(edges) -> list:
    bad = []
    for src, dst, line, lazy in edges:
        if src == FACE:
            if not lazy and _layer(dst) > _layer(FACE):
                bad.append(f"{_where(src, line)}: the top-level namespace imports {dst} when "
                           f"it loads; load it on first attribute access instead")
            continue
        ls, ld = _layer(src), _layer(dst)
        if ld <= ls:
            continue
        if lazy and _allowed(src, dst):
            continue
        bad.append(f"{_where(src, line)}: {src} ({LAYER_NAMES[ls]}) imports {dst} "
                   f"({LAYER_NAMES[ld]}){' inside a function' if lazy else ''}: the edge "
                   f"{LAYER_NAMES[ls]} -> {LAYER_NAMES[ld]} points up")
    return bad


def test_imports_point_down():
    bad = list(dict.fromkeys(_upward(EDGES)))  # one line per import statement
    assert not bad, "imports that point up the stack:\n" + "\n".join(bad)


def test_allowed_exceptions_are_still_needed():
    used = {_allowed(s, d)[0] for s, d, _, lazy in EDGES
            if s != FACE and _layer(d) > _layer(s) and lazy and _allowed(s, d)}
    stale = set(ALLOWED) - used
    assert not stale, f"ALLOWED entries no import needs any more (remove them): {stale}"


def _cycles(edges):
    graph = {}
    for src, dst, _, lazy in edges:
        if src == FACE and lazy:
            continue  # the namespace's lazy attribute loading, see FACE
        if _layer(dst) > _layer(src) and _allowed(src, dst):
            continue
        graph.setdefault(src, set()).add(dst)
    # Tarjan's strongly connected components, iteratively
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = set()
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    comp.add(m)
                    if m == node:
                        break
                if len(comp) > 1:
                    out.append(comp)
    return out


def test_no_new_import_cycles():
    bad = []
    for comp in _cycles(EDGES):
        if any(comp <= known for known in KNOWN_CYCLES):
            continue
        ties = sorted({f"  {_where(s, line)}: {s} -> {d}" for s, d, line, _ in EDGES
                       if s in comp and d in comp})
        bad.append(f"modules that import each other in a circle: {sorted(comp)}\n"
                   + "\n".join(ties))
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("src,dst,lazy,expect", [
    ("paddle_hl.framework.engine", "paddle_hl.tensor.math", True, "points up"),
    ("paddle_hl.nn.layer.common", "paddle_hl.vision.models", False, "points up"),
    ("paddle_hl.nn.layer.common", "paddle_hl.tensor.math", False, None),
])
def test_the_checker_sees_upward_edges(src, dst, lazy, expect):
    """The rule itself: an upward edge is reported with its file, line and layers."""
    bad = _upward([(src, dst, 7, lazy)])
    if expect is None:
        assert bad == []
        return
    assert len(bad) == 1 and expect in bad[0]
    assert bad[0].startswith(f"{_where(src, 7)}: {src}")


def test_the_checker_sees_cycles():
    edges = [("paddle_hl.nn.clip", "paddle_hl.nn.param_attr", 3, False),
             ("paddle_hl.nn.param_attr", "paddle_hl.nn.clip", 9, True)]
    assert _cycles(edges) == [{"paddle_hl.nn.clip", "paddle_hl.nn.param_attr"}]


def test_the_checker_reads_lazy_and_attribute_imports():
    src = ("import paddle_hl as paddle\n"
           "def f():\n"
           "    from ..tensor import math\n"
           "    return paddle.nn.functional.relu\n")
    v = _Imports("paddle_hl.sparse.unary", False)
    v.visit(ast.parse(src))
    assert (3, "paddle_hl.tensor.math", True) in v.found
    assert (4, "paddle_hl.nn.functional", True) in v.found
    assert (1, "paddle_hl", False) in v.found
