"""Helpers the dataset classes of the domains share (vision, text, audio): argument checks that
name the dataset, and the local file behind a dataset argument (the user's, or the cached
download).
"""

from __future__ import annotations

import os

__all__ = ["DatasetArgumentError", "check_mode", "fetch"]


class DatasetArgumentError(ValueError, AssertionError):
    """A bad dataset argument. Paddle asserts in these places, so this is both a ValueError
    and an AssertionError: code written for either keeps working."""


def check_mode(cls_name: str, mode, allowed) -> str:
    """``mode`` lower-cased, or an error naming the dataset and the allowed modes."""
    if not isinstance(mode, str) or mode.lower() not in allowed:
        raise DatasetArgumentError(f"{cls_name}: mode should be one of {list(allowed)}, but got "
                                   f"{mode!r}")
    return mode.lower()


def fetch(cls_name: str, arg_name: str, path, url: str, md5: str, module_name: str,
          download: bool) -> str:
    """A local file for a dataset argument: ``path`` itself, or the cached download of ``url``.

    The download goes through :func:`paddle_hl.utils.download.get_path_from_url`: a temporary
    file, an md5 check, then a rename into ``DATA_HOME/<module_name>``, so a failed download
    leaves nothing half-written in the cache.

    Args:
        cls_name (str): Dataset class, for messages.
        arg_name (str): The argument (``image_path``, ``data_file``, ...), for messages.
        path (str | None): What the user passed.
        url (str): Where to download from when ``path`` is not set.
        md5 (str): Expected md5 of the download.
        module_name (str): Sub-directory of the dataset cache.
        download (bool): Whether downloading is allowed.

    Returns:
        str: Path of an existing local file.
    """
    from . import download as dl

    if path:
        path = os.path.expanduser(os.fspath(path))
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{cls_name}: {arg_name} {path!r} does not exist (or is not "
                                    "a file)")
        return path
    if not download:
        raise DatasetArgumentError(f"{cls_name}: {arg_name} is not set and downloading "
                                   "automatically is disabled (download=False)")
    try:
        return dl.get_path_from_url(url, os.path.join(dl.DATA_HOME, module_name), md5,
                                    decompress=False)
    except RuntimeError as e:
        raise RuntimeError(f"{cls_name}: {e} Or pass the local file as {arg_name}=...") from None
