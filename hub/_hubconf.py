"""Running a repository's ``hubconf.py`` and finding its entrypoints."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import os.path as osp
import sys

from ._repo import HUBCONF

__all__ = []

MODULE_NAME = "hubconf"


def _top_level_names(repo_dir: str) -> set[str]:
    """Names the repository's own modules and packages can be imported under."""
    names = set()
    with contextlib.suppress(OSError):
        for entry in os.listdir(repo_dir):
            path = osp.join(repo_dir, entry)
            if entry.endswith(".py") and osp.isfile(path):
                names.add(entry[:-3])
            elif entry.isidentifier() and osp.isdir(path):
                names.add(entry)  # a package, or a namespace package
    names.discard("hubconf")  # handled by import_hubconf
    # a folder that happens to share the name of a standard or core module is not isolated:
    # a second copy of those would break the running process
    keep = set(sys.builtin_module_names) | set(getattr(sys, "stdlib_module_names", ())) | {
        "paddle_hl", "paddle", "numpy"}
    return names - keep


def _owns(name: str, tops: set[str]) -> bool:
    return name.split(".", 1)[0] in tops


@contextlib.contextmanager
def repo_on_path(repo_dir: str):
    """Run with ``repo_dir`` first on ``sys.path`` and its modules isolated in ``sys.modules``.

    hubconf can import its sibling modules (also lazily, inside an entrypoint). Modules already
    loaded under the same names (another repository's ``utils``, say) are set aside while the
    repository runs, so it imports its own; afterwards the modules it loaded are dropped and the
    ones set aside come back, so the next repository never silently reuses this one's.
    """
    tops = _top_level_names(repo_dir)
    aside = {n: m for n, m in sys.modules.items() if _owns(n, tops)}
    for n in aside:
        del sys.modules[n]
    importlib.invalidate_caches()
    sys.path.insert(0, repo_dir)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(repo_dir)
        for n in [n for n in sys.modules if _owns(n, tops)]:
            del sys.modules[n]
        sys.modules.update(aside)


def import_hubconf(repo_dir: str, fn: str):
    """Execute ``repo_dir/hubconf.py`` as a fresh module named ``hubconf`` and return it.

    The module is registered in ``sys.modules`` only while it executes (classes defined in it
    keep ``__module__ == 'hubconf'``, as in Paddle), so repositories loaded one after the other
    never see each other's hubconf.

    Raises:
        RuntimeError: There is no hubconf.py, or executing it raised.
    """
    path = osp.join(repo_dir, HUBCONF)
    if not osp.isfile(path):
        what = "directory" if osp.isdir(repo_dir) else "path (it does not exist)"
        raise RuntimeError(f"hub.{fn}: no {HUBCONF} found in {what} {repo_dir!r}; a hub "
                           f"repository publishes its entrypoints in {HUBCONF} at its top")
    spec = importlib.util.spec_from_file_location(MODULE_NAME, path)
    module = importlib.util.module_from_spec(spec)
    previous = sys.modules.get(MODULE_NAME)
    sys.modules[MODULE_NAME] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        raise RuntimeError(f"hub.{fn}: importing {path} failed with {type(e).__name__}: {e}") \
            from e
    finally:
        if previous is None:
            sys.modules.pop(MODULE_NAME, None)
        else:
            sys.modules[MODULE_NAME] = previous
    return module


def entrypoints(module) -> list[str]:
    """Names of the public callables of a hubconf module, sorted as ``dir()`` sorts them."""
    return [name for name in dir(module)
            if not name.startswith("_") and callable(getattr(module, name))]


def check_model(model, fn: str) -> None:
    """Raise ValueError unless ``model`` (an entrypoint name) is a str."""
    if not isinstance(model, str):
        raise ValueError(f"hub.{fn}: Invalid input: model should be a str of function name, "
                         f"but received {type(model).__name__} {model!r}")


def entry(module, model, fn: str):
    """The callable ``model`` of a hubconf module.

    Raises:
        ValueError: ``model`` is not a str.
        RuntimeError: ``model`` is missing or not callable.
    """
    check_model(model, fn)
    func = getattr(module, model, None)
    if func is None or not callable(func):
        available = ", ".join(entrypoints(module)) or "none"
        raise RuntimeError(f"hub.{fn}: Cannot find callable {model} in hubconf (entrypoints: "
                           f"{available})")
    return func


def check_dependencies(module, fn: str) -> None:
    """Raise RuntimeError naming every package of ``hubconf.dependencies`` that is missing."""
    deps = getattr(module, "dependencies", None)
    if deps is None:
        return
    if isinstance(deps, str):
        deps = [deps]
    try:
        deps = list(deps)
    except TypeError:
        raise RuntimeError(f"hub.{fn}: hubconf.dependencies must be a list of package names, "
                           f"but it is {type(deps).__name__} {deps!r}") from None
    missing = [str(name) for name in deps if not _importable(name)]
    if missing:
        raise RuntimeError(f"hub.{fn}: Missing dependencies: {', '.join(missing)} (needed by "
                           f"{module.__file__}; install them, e.g. with pip, and try again)")


def _importable(name) -> bool:
    if not isinstance(name, str) or not name:
        return False
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a dotted name whose parent package is missing
        return False
