"""paddle.dataset.common: md5 of a file, cached downloads, and splitting a reader into files."""

from __future__ import annotations

import glob
import hashlib
import os
import pickle

from ..utils import download as _download

__all__ = []


def __getattr__(name):
    # the data folder is read from the environment on each access, as the download module does
    if name == "DATA_HOME":
        return _download.DATA_HOME
    raise AttributeError(f"module 'paddle_hl.dataset.common' has no attribute '{name}'")


def md5file(fname):
    """The md5 hex digest of a file's bytes.

    Args:
        fname (str): path of the file.

    Returns:
        str: 32 lowercase hex digits.
    """
    md5 = hashlib.md5()
    with open(fname, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            md5.update(chunk)
    return md5.hexdigest()


def must_mkdirs(path):
    """Create ``path`` and its parents; an existing folder is fine."""
    os.makedirs(path, exist_ok=True)


def download(url, module_name, md5sum, save_name=None):
    """Download ``url`` into ``DATA_HOME/module_name`` unless a file with ``md5sum`` is there.

    The file is streamed to a temporary name, its md5 checked, then renamed into place, under
    the download lock, so processes (and Paddle, which keeps its datasets in the same folder)
    sharing the file never see it half-written.

    Args:
        url (str): http(s) address.
        module_name (str): sub-folder of the data folder.
        md5sum (str): expected md5 of the file (None skips the check).
        save_name (str, optional): file name to save as; the URL's last part by default.

    Returns:
        str: the local path.
    """
    dirname = os.path.join(_download.DATA_HOME, module_name)
    must_mkdirs(dirname)
    filename = os.path.join(dirname, save_name or url.split("/")[-1])
    if os.path.exists(filename) and (md5sum is None or md5file(filename) == md5sum):
        return filename
    with _download._lock(filename):
        # another process may have fetched it while this one waited for the lock
        if os.path.exists(filename) and (md5sum is None or md5file(filename) == md5sum):
            return filename
        errors = []
        for _ in range(_download.DOWNLOAD_RETRY_LIMIT + 1):
            try:
                _download._get_download(url, filename, md5sum)  # temporary file, then rename
                return filename
            except _download.DownloadError as e:
                errors.append(str(e))
    raise RuntimeError(f"paddle.dataset.common.download: cannot download {url} to {filename} "
                       f"({len(errors)} attempts; last: {errors[-1]}). If this machine is "
                       f"offline, copy the file there by hand (md5 {md5sum}).")


def split(reader, line_count, suffix="%05d.pickle", dumper=pickle.dump):
    """Write a reader's samples into files of ``line_count`` samples each.

    Args:
        reader (callable): a reader.
        line_count (int): samples per file.
        suffix (str): file name pattern taking the file's index.
        dumper (callable): ``dumper(list_of_samples, file)``.
    """
    if not callable(reader):
        raise TypeError("paddle.dataset.common.split: reader must be callable, got "
                        f"{type(reader).__name__}")
    if "%" not in suffix:
        raise ValueError(f"paddle.dataset.common.split: suffix must hold a %-format for the "
                         f"file index, got {suffix!r}")
    lines, index = [], 0
    for s in reader():
        lines.append(s)
        if len(lines) >= line_count:
            with open(suffix % index, "wb") as f:
                dumper(lines, f)
            lines, index = [], index + 1
    if lines:
        with open(suffix % index, "wb") as f:
            dumper(lines, f)


def cluster_files_reader(files_pattern, trainer_count, trainer_id, loader=pickle.load):
    """A reader of the samples in this trainer's share of the files matching a pattern.

    Files are sorted by name and dealt round-robin: trainer ``i`` reads files ``i``,
    ``i + trainer_count``, ...

    Args:
        files_pattern (str): a glob pattern.
        trainer_count (int): number of trainers.
        trainer_id (int): this trainer's index.
        loader (callable): ``loader(file)`` returns a list of samples.

    Returns:
        callable: the reader.
    """

    def reader():
        files = sorted(glob.glob(files_pattern))
        for i, fn in enumerate(files):
            if i % trainer_count == trainer_id:
                with open(fn, "rb") as f:
                    yield from loader(f)

    return reader
