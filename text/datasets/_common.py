"""Shared plumbing of the text datasets: argument checks, cached downloads, archive errors, and
the readable item view."""

from __future__ import annotations

import contextlib
import html
import tarfile
import zipfile
import zlib

import numpy as np

from paddle_hl.utils.datasets import DatasetArgumentError, check_mode, fetch  # noqa: F401

__all__ = []

# what a damaged archive raises while being read: a bad header, a cut-off stream, bad deflate
# data, a broken gzip member, a zip whose directory does not add up
ARCHIVE_ERRORS = (tarfile.TarError, zipfile.BadZipFile, EOFError, zlib.error, OSError,
                  UnicodeDecodeError)


def check_positive(cls_name: str, arg: str, value) -> int:
    """``value`` as a positive int, or an error naming the argument."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise DatasetArgumentError(f"{cls_name}: {arg} should be set as a positive integer, but "
                                   f"got {value!r}")
    return value


@contextlib.contextmanager
def reading(cls_name: str, arg_name: str, path: str):
    """Turn the errors of a damaged archive into one that names the dataset and the argument."""
    try:
        yield
    except ARCHIVE_ERRORS as e:
        if isinstance(e, (FileNotFoundError, PermissionError)):
            raise
        raise ValueError(f"{cls_name}: cannot read {arg_name} {path!r}: {type(e).__name__}: {e} "
                         "(is the file corrupt or truncated? delete it to download it again)"
                         ) from None


def tar_member(tf: tarfile.TarFile, name: str, cls_name: str, arg_name: str) -> bytes:
    """The bytes of member ``name`` of an open tar file, or an error naming the argument."""
    try:
        f = tf.extractfile(name)
    except KeyError:
        f = None
    if f is None:
        raise ValueError(f"{cls_name}: {arg_name} {tf.name!r} has no file {name!r}; is it the "
                         "right archive?")
    with f:
        return f.read()


def text_of(token) -> str:
    """A vocabulary entry as text (the byte tokens of Imdb and Imikolov are UTF-8)."""
    if isinstance(token, bytes):
        return token.decode("utf-8", errors="replace")
    return str(token)


def invert(vocab: dict) -> dict:
    """``{id: token}`` for a ``{token: id}`` vocabulary."""
    return {v: k for k, v in vocab.items()}


def join_ids(ids, id_to_token: dict, unknown: str = "<?>") -> str:
    """The ids (any int sequence or array) mapped back to tokens, joined with spaces."""
    flat = np.asarray(ids).reshape(-1).tolist()  # lists, NumPy arrays and Tensors alike
    return " ".join(text_of(id_to_token[i]) if i in id_to_token else unknown for i in flat)


class ItemView:
    """A dataset item shown as text: each field's ids mapped back through its vocabulary.

    In Jupyter it renders as an HTML table (``_repr_html_``); elsewhere ``repr`` gives plain
    text lines.

    Args:
        title (str): Heading, e.g. ``"Imdb[3]"``.
        rows (list[tuple[str, str]]): ``(field name, readable value)`` pairs.
    """

    def __init__(self, title: str, rows):
        self.title = title
        self.rows = list(rows)

    def __getitem__(self, name: str) -> str:
        for key, value in self.rows:
            if key == name:
                return value
        raise KeyError(name)

    def __repr__(self) -> str:
        width = max((len(k) for k, _ in self.rows), default=0)
        return "\n".join([self.title] + [f"  {k:<{width}} : {v}" for k, v in self.rows])

    def _repr_html_(self) -> str:
        cell = "padding:2px 8px;text-align:left;vertical-align:top;border-bottom:1px solid " \
               "var(--jp-border-color2, #ddd)"
        body = "".join(f"<tr><th style='{cell}'>{html.escape(k)}</th>"
                       f"<td style='{cell};font-family:var(--jp-code-font-family, monospace)'>"
                       f"{html.escape(v)}</td></tr>" for k, v in self.rows)
        return (f"<table style='border-collapse:collapse'><caption style='text-align:left;"
                f"font-weight:bold'>{html.escape(self.title)}</caption>{body}</table>")
