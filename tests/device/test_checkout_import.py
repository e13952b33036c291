"""Scripts run from a plain checkout (``PYTHONPATH=.``, no install, as the GPU machine runs a
copy of the tree) import the domain folders beside the package as its subpackages."""

from __future__ import annotations

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]

# the editable install's finder is dropped first: the tree is imported as a copy without an
# install would be
SCRIPT = """
import sys
sys.meta_path[:] = [f for f in sys.meta_path
                    if "editable" not in getattr(f, "__module__", "") + getattr(f, "__name__", "")]
sys.path.insert(0, sys.argv[1])
import paddle_hl
import paddle_hl.audio, paddle_hl.geometric, paddle_hl.hub, paddle_hl.text
import paddle_hl.vision.models
from paddle_hl.vision.transforms import Normalize
print(paddle_hl.vision.models.__file__)
print(paddle_hl.text.__file__)
print(paddle_hl.vision is paddle_hl.__getattr__("vision"))
"""


def test_domain_folders_import_from_a_plain_checkout():
    out = subprocess.run([sys.executable, "-I", "-c", SCRIPT, str(ROOT)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.split()
    assert lines[0] == str(ROOT / "vision" / "models" / "__init__.py")
    assert lines[1] == str(ROOT / "text" / "__init__.py")
    assert lines[2] == "True"


def test_an_installed_package_ignores_folders_beside_it(tmp_path):
    # outside a checkout (site-packages) a folder named like a domain is not the domain
    from paddle_hl import _checkout

    (tmp_path / "pkg").mkdir()
    (tmp_path / "vision").mkdir()
    (tmp_path / "vision" / "__init__.py").write_text("")
    assert not _checkout.is_checkout(tmp_path)
    assert _checkout.is_checkout(ROOT)
    finder = _checkout.DomainFinder(tmp_path / "paddle_hl")
    assert finder.find_spec("paddle_hl.nn") is None
    assert finder.find_spec("paddle_hl.vision").origin == str(tmp_path / "vision" / "__init__.py")
