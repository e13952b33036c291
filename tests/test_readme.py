"""The README's Quick start is exactly two commands, and CI runs the test one."""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _quickstart_commands():
    text = (ROOT / "README.md").read_text()
    block = re.search(r"## Quick start\s+```bash\n(.*?)```", text, re.S)
    assert block, "README.md needs a '## Quick start' section with a bash block"
    return [ln for ln in block.group(1).splitlines() if ln.strip()]


def test_quickstart_has_two_commands():
    cmds = _quickstart_commands()
    assert len(cmds) == 2, cmds
    assert "quickstart.py" in cmds[0]
    assert "pytest" in cmds[1]


def test_ci_runs_the_readme_test_command():
    """CI's first job is the README's test command, word for word; later lines may add jobs
    (the lowest-versions run)."""
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    body = [ln for ln in ci if ln.strip() and not ln.startswith(("#", "set ", "cd ", "export ",
                                                                   "rm ", "if ", "fi", "  "))]
    assert body[0] == _quickstart_commands()[1], body
