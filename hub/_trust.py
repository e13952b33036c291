"""Trusting remote repositories before their code runs, as ``torch.hub``'s ``trust_repo``.

- ``None`` (what Paddle code passes, as it does not know the argument): in a script, a warning
  naming the repository the first time it is fetched (it is neither trusted nor cached yet), as
  Paddle runs it; in an interactive session (a Python prompt, IPython, Jupyter) a question
  before running code from a repository not trusted before, as ``torch.hub`` plans to do. The
  answer yes is remembered.
- ``'check'``: ask on the terminal unless the repository is in the trusted list.
- ``True``: trust it without asking and remember that.
- ``False``: ask every time, trusted or not.

The trusted list is the file ``trusted_list`` in the hub cache folder, one ``source:owner/repo``
per line.
"""

from __future__ import annotations

import os
import os.path as osp
import sys
import warnings

from . import _repo

__all__ = []

TRUSTED_LIST = "trusted_list"


def _list_path() -> str:
    return osp.join(_repo.hub_dir(), TRUSTED_LIST)


def _key(repo: _repo.RemoteRepo) -> str:
    return f"{repo.source}:{repo.owner}/{repo.repo}"


def trusted() -> set[str]:
    """The entries of the trusted list (empty when the file does not exist)."""
    path = _list_path()
    if not osp.isfile(path):
        return set()
    with open(path, encoding="utf-8") as f:
        return {line.strip() for line in f if line.strip()}


def _remember(repo: _repo.RemoteRepo) -> None:
    os.makedirs(_repo.hub_dir(), exist_ok=True)
    # append mode: concurrent processes adding different repositories do not lose each other
    with open(_list_path(), "a", encoding="utf-8") as f:
        f.write(_key(repo) + "\n")


def validate(trust_repo, fn: str) -> None:
    """Raise ValueError unless ``trust_repo`` is None, True, False or 'check'."""
    if not (trust_repo is None or isinstance(trust_repo, bool) or trust_repo == "check"):
        raise ValueError(f"hub.{fn}: trust_repo must be None, True, False or 'check', but "
                         f"received {trust_repo!r}")


def check(repo: _repo.RemoteRepo, trust_repo, fn: str) -> None:
    """Apply the ``trust_repo`` policy to ``repo`` before anything of it is downloaded or run.

    Raises:
        ValueError: ``trust_repo`` is not None, True, False or 'check', or the answer to the
            question is neither yes nor no.
        RuntimeError: The user did not trust the repository.
    """
    validate(trust_repo, fn)
    is_trusted = _key(repo) in trusted()
    default = trust_repo is None
    if default and not is_trusted and interactive():
        trust_repo = "check"  # someone is there to answer: ask rather than warn
    answer = None
    if trust_repo is False or (trust_repo == "check" and not is_trusted):
        answer = _ask(repo)
        if answer is None and default:
            trust_repo = None  # nobody can answer after all (a notebook run unattended)
    if trust_repo is None:
        if not is_trusted and not _repo.any_cached(repo):
            warnings.warn(
                f"You are about to download and run code from an untrusted repository: "
                f"{repo.name} ({repo.source}). hub.{fn} will execute its hubconf.py. Pass "
                "trust_repo=False (always ask), 'check' (ask unless trusted) or True (trust and "
                "remember) to decide explicitly; this warning appears only the first time.",
                UserWarning, stacklevel=3)
        return
    if trust_repo is False or (trust_repo == "check" and not is_trusted):
        if answer in ("y", "yes"):
            pass
        elif answer in ("n", "no", "", None):
            raise RuntimeError(f"hub.{fn}: untrusted repository {repo.name} ({repo.source}); "
                               "nothing was downloaded or run. Answer 'y' or pass "
                               "trust_repo=True to trust it.")
        else:
            raise ValueError(f"hub.{fn}: unrecognized answer {answer!r}; expected 'y' or 'n'")
    if not is_trusted:
        _remember(repo)


def interactive() -> bool:
    """Whether a person can answer a question: a Python prompt (``python -i``, the REPL), or an
    IPython/Jupyter session. Scripts, batch jobs and pipelines are not interactive."""
    if hasattr(sys, "ps1") or sys.flags.interactive:
        return True
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        return ipython.get_ipython() is not None
    except Exception:  # a half-imported or unusual IPython: treat as a script
        return False


def _ask(repo: _repo.RemoteRepo) -> str | None:
    question = (f"The repository {repo.name} ({repo.source}) does not belong to the list of "
                f"trusted repositories in {_list_path()}. Running its hubconf.py executes code "
                "from the internet. Do you trust this repository and wish to add it to the "
                "trusted list of repositories (y/N)? ")
    try:
        return input(question).strip().lower()
    except (EOFError, NotImplementedError):  # no terminal, or a kernel that allows no input
        return None
