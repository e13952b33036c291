"""paddle_hl.hub: list, read the help of, and load the models a repository publishes.

A repository publishes entrypoints (functions or classes returning a model) in a ``hubconf.py``
at its top; ``dependencies = [...]`` there names the packages ``load`` requires. Repositories
come from GitHub (``source='github'``, ``'owner/repo[:branch]'``), Gitee (``source='gitee'``,
same scheme) or a local directory (``source='local'``).

Remote repositories are downloaded once as an archive and cached in Paddle's hub folder,
``~/.cache/paddle/hub/<owner>_<repo>_<branch>``, so a repository Paddle downloaded before is used
from there. Environment variables:

- ``PADDLE_HL_HUB_DIR``: the hub cache folder (default ``$PADDLE_HL_HOME/hub`` when
  ``PADDLE_HL_HOME`` is set, else ``~/.cache/paddle/hub``).
- ``PADDLE_HL_HUB_GITHUB_URL`` / ``PADDLE_HL_HUB_GITEE_URL``: another site to download from,
  as a base URL (``http://127.0.0.1:8000``) or an archive URL template with ``{owner}``,
  ``{repo}`` and ``{branch}`` (``http://mirror/{owner}/{repo}/{branch}.tar.gz``).

Loading a remote repository runs code from the internet. The extra keyword-only argument
``trust_repo`` decides whether that is fine, as in ``torch.hub``: ``None`` (the default, what
Paddle code passes) keeps Paddle's behaviour in scripts (a warning the first time a repository
is fetched) but, in an interactive session (Python prompt, IPython, Jupyter), asks before
running code from a repository not trusted before; ``'check'`` asks unless the repository was
trusted before, ``True`` trusts it and remembers that in ``<hub dir>/trusted_list``, ``False``
always asks. A yes is remembered in the trusted list.

Isolation: while a repository's ``hubconf.py`` and entrypoint run, modules already imported under
the names of the repository's own modules (another repository's ``utils``, say) are set aside,
and afterwards the repository's modules leave ``sys.modules`` and the others come back, so one
repository never silently runs another's helpers. In a hub folder only paddle_hl uses
(``PADDLE_HL_HUB_DIR`` or ``PADDLE_HL_HOME`` set), a cache folder that holds a ``hubconf.py``
without the provenance file paddle_hl writes when it downloads a repository is refused (pass
``force_reload=True`` to replace it with a fresh download); in Paddle's own hub folder such a
folder is a repository Paddle downloaded, and is used.

In a notebook, the results of ``list`` and ``help`` render as a table and a formatted docstring.
"""

from __future__ import annotations

import os
import os.path as osp

from . import _display, _hubconf, _repo, _trust

__all__ = ["list", "help", "load"]


def _check_source(source, fn: str) -> str:
    if source not in _repo.SOURCES:
        allowed = " | ".join(f'"{s}"' for s in _repo.SOURCES)
        raise ValueError(f'hub.{fn}: Unknown source: "{source}". Allowed values: {allowed}.')
    return source


def _local_dir(repo_dir, source: str, force_reload: bool, trust_repo, fn: str) -> str:
    """The local folder holding the repository (downloading a remote one when needed)."""
    if source == "local":
        if not isinstance(repo_dir, (str, os.PathLike)):
            raise TypeError(f"hub.{fn}: repo_dir must be a directory path for source='local', "
                            f"but received {type(repo_dir).__name__} {repo_dir!r}")
        return osp.abspath(osp.expanduser(os.fspath(repo_dir)))
    repo = _repo.parse_remote(repo_dir, source, fn)
    _trust.check(repo, trust_repo, fn)
    return _repo.resolve(repo, bool(force_reload))


def list(repo_dir: str, source: str = "github", force_reload: bool = False, *,
         trust_repo=None) -> list[str]:
    """List the entrypoints a repository publishes in its ``hubconf.py``.

    Args:
        repo_dir (str): ``'owner/repo'`` or ``'owner/repo:branch'`` for GitHub and Gitee (the
            default branch is ``main`` on GitHub and ``master`` on Gitee; the other one is tried
            when it does not exist), or a directory for ``source='local'``.
        source (str, optional): ``'github'``, ``'gitee'`` or ``'local'``. Default: 'github'.
        force_reload (bool, optional): Download the repository again even when it is cached.
            Default: False.
        trust_repo (bool | str | None, optional): Keyword only, not in Paddle: whether to trust
            a remote repository (see the module docstring). Default: None.

    Returns:
        list[str]: The names of the public callables of ``hubconf`` (not starting with ``_``),
        sorted. In a notebook the list renders as a table with signatures and summaries.

    Raises:
        ValueError: Unknown ``source``, malformed ``repo_dir`` or ``trust_repo``.
        RuntimeError: No ``hubconf.py``, it failed to import, or the download failed.

    Examples:
        >>> import paddle_hl as paddle
        >>> paddle.hub.list('PaddlePaddle/PaddleClas:develop', source='github')  # doctest: +SKIP
        ['alexnet', 'densenet121', ...]
    """
    _check_source(source, "list")
    _trust.validate(trust_repo, "list")
    path = _local_dir(repo_dir, source, force_reload, trust_repo, "list")
    with _hubconf.repo_on_path(path):
        module = _hubconf.import_hubconf(path, "list")
    names = _hubconf.entrypoints(module)
    return _display.EntrypointList(names, module, repo=str(repo_dir))


def help(repo_dir: str, model: str, source: str = "github", force_reload: bool = False, *,
         trust_repo=None) -> str | None:
    """The docstring of one entrypoint of a repository's ``hubconf.py``.

    Args:
        repo_dir (str): ``'owner/repo[:branch]'`` (GitHub, Gitee) or a directory (local).
        model (str): Name of the entrypoint.
        source (str, optional): ``'github'``, ``'gitee'`` or ``'local'``. Default: 'github'.
        force_reload (bool, optional): Download the repository again even when it is cached.
            Default: False.
        trust_repo (bool | str | None, optional): Keyword only, not in Paddle: whether to trust
            a remote repository (see the module docstring). Default: None.

    Returns:
        str | None: The entrypoint's ``__doc__`` (None when it has none). In a notebook it
        renders with the entrypoint's signature and bold section headers.

    Raises:
        ValueError: Unknown ``source``, ``model`` not a str, malformed ``repo_dir``.
        RuntimeError: ``model`` is missing from hubconf or not callable, or the repository
            could not be read.

    Examples:
        >>> import paddle_hl as paddle
        >>> print(paddle.hub.help('PaddlePaddle/PaddleClas:develop', 'alexnet'))  # doctest: +SKIP
    """
    _check_source(source, "help")
    _hubconf.check_model(model, "help")
    _trust.validate(trust_repo, "help")
    path = _local_dir(repo_dir, source, force_reload, trust_repo, "help")
    with _hubconf.repo_on_path(path):
        module = _hubconf.import_hubconf(path, "help")
    func = _hubconf.entry(module, model, "help")
    doc = func.__doc__
    if doc is None:
        return None
    return _display.Docstring(doc, model, _display._signature(func))


def load(repo_dir: str, model: str, source: str = "github", force_reload: bool = False, *,
         trust_repo=None, **kwargs):
    """Build a model published by a repository: ``hubconf.<model>(**kwargs)``.

    The packages listed in ``hubconf.dependencies`` must be importable. The repository folder
    is on ``sys.path`` while hubconf and the entrypoint run, so they can import its modules.

    Args:
        repo_dir (str): ``'owner/repo[:branch]'`` (GitHub, Gitee) or a directory (local).
        model (str): Name of the entrypoint.
        source (str, optional): ``'github'``, ``'gitee'`` or ``'local'``. Default: 'github'.
        force_reload (bool, optional): Download the repository again even when it is cached.
            Default: False.
        trust_repo (bool | str | None, optional): Keyword only, not in Paddle: whether to trust
            a remote repository (see the module docstring). Default: None.
        **kwargs: Passed to the entrypoint (e.g. ``pretrained=False``).

    Returns:
        object: What the entrypoint returns, usually a ``paddle.nn.Layer``.

    Raises:
        ValueError: Unknown ``source``, ``model`` not a str, malformed ``repo_dir``.
        RuntimeError: Missing dependencies (named), ``model`` missing from hubconf or not
            callable, an untrusted repository, or a failed download.

    Examples:
        >>> import paddle_hl as paddle
        >>> net = paddle.hub.load('.', 'resnet18', source='local')  # doctest: +SKIP
    """
    _check_source(source, "load")
    _hubconf.check_model(model, "load")
    _trust.validate(trust_repo, "load")
    path = _local_dir(repo_dir, source, force_reload, trust_repo, "load")
    with _hubconf.repo_on_path(path):
        module = _hubconf.import_hubconf(path, "load")
        _hubconf.check_dependencies(module, "load")
        func = _hubconf.entry(module, model, "load")
        return func(**kwargs)
