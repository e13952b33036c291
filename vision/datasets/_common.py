"""Shared plumbing of the vision datasets: argument checks, image backend, cached downloads."""

from __future__ import annotations

import os

__all__ = []
import paddle_hl as paddle

_BACKENDS = ("pil", "cv2")


class DatasetArgumentError(ValueError, AssertionError):
    """A bad dataset argument. Paddle asserts in these places, so this is both a ValueError
    and an AssertionError: code written for either keeps working."""


def check_mode(cls_name: str, mode, allowed) -> str:
    """``mode`` lower-cased, or an error naming the dataset and the allowed modes."""
    if not isinstance(mode, str) or mode.lower() not in allowed:
        raise DatasetArgumentError(f"{cls_name}: mode should be one of {list(allowed)}, but got "
                                   f"{mode!r}")
    return mode.lower()


def check_backend(cls_name: str, backend) -> str:
    """The image backend to use: ``backend``, or the global one when it is None."""
    if backend is None:
        backend = _default_backend()
    if backend not in _BACKENDS:
        raise ValueError(f"{cls_name}: Expected backend are one of {list(_BACKENDS)}, but got "
                         f"{backend!r}")
    return backend


def _default_backend() -> str:
    # paddle_hl.vision.image (set_image_backend / get_image_backend) is a sibling module; 'pil'
    # is Paddle's default when nothing was set.
    try:
        from ..image import get_image_backend
    except ImportError:
        return "pil"
    return get_image_backend()


def fetch(cls_name: str, arg_name: str, path, url: str, md5: str, module_name: str,
          download: bool) -> str:
    """A local file for a dataset argument: ``path`` itself, or the cached download of ``url``.

    Args:
        cls_name (str): Dataset class, for messages.
        arg_name (str): The argument (``image_path``, ``data_file``, ...), for messages.
        path (str | None): What the user passed.
        url (str): Where to download from when ``path`` is not set.
        md5 (str): Expected md5 of the download.
        module_name (str): Sub-directory of the dataset cache (``DATA_HOME/<module_name>``).
        download (bool): Whether downloading is allowed.

    Returns:
        str: Path of an existing local file.
    """
    if path:
        path = os.path.expanduser(os.fspath(path))
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{cls_name}: {arg_name} {path!r} does not exist (or is not "
                                    "a file)")
        return path
    if not download:
        raise DatasetArgumentError(f"{cls_name}: {arg_name} is not set and downloading "
                                   "automatically is disabled (download=False)")
    dl = paddle.utils.download
    try:
        return dl.get_path_from_url(url, os.path.join(dl.DATA_HOME, module_name), md5,
                                    decompress=False)
    except RuntimeError as e:
        raise RuntimeError(f"{cls_name}: {e} Or pass the local file as {arg_name}=...") from None


def default_dtype() -> str:
    """The current default float dtype name (images of the 'cv2' backend are cast to it)."""
    return paddle.get_default_dtype()
