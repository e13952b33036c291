"""Run from a plain checkout: the domain folders beside the package are its subpackages.

The repository keeps ``vision/``, ``audio/``, ``text/``, ``geometric/`` and ``hub/`` beside
``paddle_hl/``; an install maps them to ``paddle_hl.vision`` and so on (setup.py). Scripts run
from a checkout without an install (``PYTHONPATH=.``, or a copy of the tree on another
machine) find them through this finder: it answers only for ``paddle_hl.<domain>`` when the
package's own folder has no such subpackage and the folder beside it does, in a directory that
is a checkout of this project (its pyproject.toml names paddle_hl), so an installed paddle_hl
never picks up unrelated folders of site-packages.
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys

__all__ = []

DOMAINS = ("vision", "audio", "text", "geometric", "hub")


class DomainFinder:
    """A meta path finder for the domain folders of a checkout (see the module docstring)."""

    def __init__(self, package_dir):
        self.package_dir = pathlib.Path(package_dir)
        self.root = self.package_dir.parent

    def find_spec(self, fullname, path=None, target=None):
        pkg, _, domain = fullname.partition(".")
        if pkg != self.package_dir.name or domain not in DOMAINS:
            return None
        init = self.root / domain / "__init__.py"
        if (self.package_dir / domain).exists() or not init.is_file():
            return None
        return importlib.util.spec_from_file_location(
            fullname, init, submodule_search_locations=[str(init.parent)])


def is_checkout(root) -> bool:
    """Whether ``root`` is the top of a checkout of this project."""
    root = pathlib.Path(root)
    try:
        return (root / "pyproject.toml").is_file() and 'name = "paddle_hl"' in (
            root / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return False


def _mapped_by_install(package_dir) -> bool:
    """Whether another finder (an install's mapping) already finds the domain folders."""
    name = f"{package_dir.name}.{DOMAINS[0]}"
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        if find is None:
            continue
        try:
            if find(name, [str(package_dir)]) is not None:
                return True
        except (ImportError, ValueError, TypeError):
            continue
    return False


def install(package_file):
    """Put the finder for the package at ``package_file`` (its ``__init__.py``) on
    ``sys.meta_path``, ahead of the path finder, when the package sits in a checkout."""
    package_dir = pathlib.Path(package_file).resolve().parent
    if not is_checkout(package_dir.parent):
        return
    if any(isinstance(f, DomainFinder) and f.package_dir == package_dir for f in sys.meta_path):
        return
    if _mapped_by_install(package_dir):
        return  # an install (editable too) maps the domains already: no hook of ours
    # first, so that a stale mapping of another install cannot hand this package the domain
    # folders of a different tree
    sys.meta_path.insert(0, DomainFinder(package_dir))

