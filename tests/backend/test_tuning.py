"""The one tuning table (paddle_hl/backend/tuning.py): every entry is read somewhere and says
what it rests on, and no module keeps a threshold of its own.

What counts as a threshold constant (the AST scan below): a module-level assignment of an int or
float literal, or an arithmetic expression of literals (``1 << 20``, ``4 * 1024``), to an
upper-case name (``_NAME`` or ``NAME``) that contains one of the words of ``TUNED_WORDS``
(MIN, MAX, BYTES, BLOCK, CHUNK, LIMIT, ...). Scope: every module of paddle_hl and of the
domains (vision, audio, text, geometric, hub), except the short ``NOT_TUNING`` allowlist of
constants that match the pattern but choose nothing about speed.
"""

from __future__ import annotations

import ast
import pathlib
import re

import pytest

from paddle_hl.backend import tuning

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOMAINS = ("vision", "audio", "text", "geometric", "hub")
TUNED_WORDS = ("MIN", "MAX", "BYTES", "BLOCK", "CHUNK", "LIMIT", "THRESHOLD", "ROW", "ROWS",
               "BATCH", "PLANE", "TAPS", "COLS", "BUFSIZE", "LOOPS", "BELOW", "WORK", "STEP",
               "PIECES", "ELEMS", "SPLIT", "CACHE", "SLOTS")
NAME = re.compile(r"^_?[A-Z][A-Z0-9_]*$")
# matched by the pattern, but not performance thresholds: (file, name) -> why
NOT_TUNING = {
    ("paddle_hl/backend/_numpy.py", "_M_TRIM_THRESHOLD"): "glibc's mallopt parameter number",
    ("paddle_hl/backend/_numpy.py", "_M_MMAP_THRESHOLD"): "glibc's mallopt parameter number",
    ("paddle_hl/profiler/_statistic.py", "_ROW_LIMIT"): "rows of a printed summary",
    ("paddle_hl/notebook/amp.py", "_MAX_POINTS"): "points drawn in a chart",
    ("paddle_hl/notebook/amp.py", "_MAX_MARKS"): "marks drawn in a chart",
    ("paddle_hl/notebook/charts.py", "_MAX_POINTS"): "points drawn per chart series",
    ("paddle_hl/distributed/collective.py", "_MAX_DIMS"): "the wire header's layout",
    ("paddle_hl/distribution/_gamma.py", "_MAX_ITER"): "a series' iteration bound (accuracy)",
    ("paddle_hl/tensor/special.py", "_ERF_SPLIT"): "where erf switches series (accuracy)",
    ("paddle_hl/tensor/special.py", "_BESSEL_SPLIT"): "where Bessel switches series (accuracy)",
    ("paddle_hl/utils/download.py", "_CHUNK"): "bytes read per step of a download stream",
    ("paddle_hl/utils/download.py", "_RATIO_FLOOR"): "an archive-size safety bound",
    ("paddle_hl/utils/download.py", "DOWNLOAD_RETRY_LIMIT"): "retries of a broken download",
    ("paddle_hl/utils/download.py", "MAX_EXTRACT_SIZE"): "an archive-size safety bound",
    ("paddle_hl/utils/download.py", "MAX_COMPRESSION_RATIO"): "an archive-size safety bound",
    ("hub/_repo.py", "_CHUNK"): "bytes read per step of a download stream",
    ("paddle_hl/onnx/_export.py", "MIN_OPSET"): "the ONNX opsets the exporter writes",
    ("paddle_hl/onnx/_export.py", "MAX_OPSET"): "the ONNX opsets the exporter writes",
    ("paddle_hl/amp/debugging/_numerics.py", "_FP16_MAX"): "float16's largest value",
    ("audio/functional/functional.py", "_MIN_LOG_HZ"): "the mel scale's formula",
    ("text/datasets/wmt14.py", "MAX_LENGTH"): "the dataset's sentence-length filter",
}



def _sources():
    yield from (ROOT / "paddle_hl").rglob("*.py")
    for d in DOMAINS:
        yield from (ROOT / d).rglob("*.py")


def _literal(node):
    """Whether ``node`` is a number literal or arithmetic on number literals only."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp):
        return _literal(node.operand)
    if isinstance(node, ast.BinOp):
        return _literal(node.left) and _literal(node.right)
    return False


def _tuned_name(name):
    return bool(NAME.match(name)) and bool(set(name.strip("_").split("_")) & set(TUNED_WORDS))


def _constants(tree):
    """``(name, line, value)`` of the module-level threshold-like constants of ``tree``."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name) and _tuned_name(target.id) and _literal(value):
            # literal arithmetic only (checked above), so evaluating it runs nothing else
            yield target.id, node.lineno, eval(compile(ast.Expression(value), "<c>", "eval"), {})


def test_no_module_keeps_its_own_threshold():
    found = []
    for path in _sources():
        rel = path.relative_to(ROOT).as_posix()
        if rel == "paddle_hl/backend/tuning.py":
            continue
        for name, line, _ in _constants(ast.parse(path.read_text(), rel)):
            if (rel, name) not in NOT_TUNING:
                found.append(f"{rel}:{line} {name}")
    assert not found, ("module-level threshold constants outside backend/tuning.py (add an "
                       f"entry to tuning.TABLE and read it with tuning.value): {found}")


def test_every_entry_is_read_and_documented():
    readers = {}
    for path in _sources():
        rel = path.relative_to(ROOT).as_posix()
        if rel == "paddle_hl/backend/tuning.py":
            continue
        text = path.read_text()
        for e in tuning.TABLE:
            if f'tuning.value("{e.name}")' in text:
                readers.setdefault(e.name, []).append(rel)
    unread = [e.name for e in tuning.TABLE if e.name not in readers]
    assert not unread, f"tuning entries nobody reads: {unread}"
    for e in tuning.TABLE:
        assert isinstance(e.value, (int, float)) and e.value > 0, e
        assert len(e.decides) > 20 and len(e.measured) > 10 and e.machine, e
        assert re.match(r"^[a-z_]+\.[a-z_]+$", e.name), e.name


def test_the_scan_sees_each_form():
    cases = {
        "_BLOCK_BYTES = 1 << 20\n": True,
        "MIN_BYTES = 4 * 1024\n": True,
        "_WIDE_MAX = 2.0\n": True,
        "_CACHE: int = 512\n": True,
        "_X_MIN = -1\n": True,
        "_BLOCK = tuning.value('optimizer.block')\n": False,
        "_HALF_LOG_2PI = 0.5\n": False,  # no tuned word
        "_MODES = ('a', 'b')\n": False,
        "def f():\n    _BLOCK = 4\n": False,  # not module level
    }
    for src, bad in cases.items():
        assert bool(list(_constants(ast.parse(src)))) is bad, src


def test_readers_hold_the_table_values():
    from paddle_hl.backend import _numpy, _threads, windows

    assert windows._KEEP_COLS == tuning.value("conv.keep_cols")
    assert windows._DIRECT_MAX_TAPS == tuning.value("conv.direct_max_taps")
    assert _numpy._DW_CL_MAX_OUT == tuning.value("depthwise.cl_max_out")
    assert _threads.MIN_BYTES == tuning.value("threads.min_bytes")
    assert _numpy._cached_plan.cache_info().maxsize == tuning.value("depthwise.plan_cache")


def test_unknown_name_is_named():
    with pytest.raises(KeyError, match="conv.no_such"):
        tuning.value("conv.no_such")
    assert tuning.entry("conv.wide_max").value == 2.0
