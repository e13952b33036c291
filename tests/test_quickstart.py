"""The README's main job runs and its model learns."""

from __future__ import annotations

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_quickstart_runs_and_loss_falls():
    r = subprocess.run([sys.executable, str(ROOT / "quickstart.py")], capture_output=True,
                       text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "d/dw w**4 at w=5 -> 500.0" in r.stdout
    first, last = r.stdout.strip().splitlines()[-1].split("loss ")[1].split(" in ")[0].split(" -> ")
    assert float(last) < 0.2 * float(first)
