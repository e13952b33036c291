"""Oxford 102 Flowers: jpg images in a tarball, labels and splits in MATLAB .mat files."""

from __future__ import annotations

import os

import numpy as np
from PIL import Image

import paddle_hl as paddle

from . import _common
from ._matlab import loadmat

__all__ = []

DATA_URL = "http://paddlemodels.bj.bcebos.com/flowers/102flowers.tgz"
LABEL_URL = "http://paddlemodels.bj.bcebos.com/flowers/imagelabels.mat"
SETID_URL = "http://paddlemodels.bj.bcebos.com/flowers/setid.mat"
DATA_MD5 = "52808999861908f626f3c1f4e79d11fa"
LABEL_MD5 = "e0620be6f572b9609742df49c70aed4d"
SETID_MD5 = "a5357ecc9cb78c4bef273ce3793fc85c"

# The official readme calls 'tstid' the test split, but it is the larger one, so Paddle (and
# this reimplementation) trains on 'tstid' and tests on 'trnid'.
MODE_FLAG_MAP = {"train": "tstid", "test": "trnid", "valid": "valid"}

_IMAGE_NAME = "jpg/image_{:05d}.jpg"


class Flowers(paddle.io.Dataset):
    """The `Oxford 102 Flowers <https://www.robots.ox.ac.uk/~vgg/data/flowers/102/>`_ dataset.

    The image tarball is extracted once, next to it (``102flowers.tgz`` -> ``102flowers/``),
    and images are read from there.

    Args:
        data_file (str, optional): Path of ``102flowers.tgz``; None downloads it to
            ``DATA_HOME/flowers`` when ``download`` is True. Default: None.
        label_file (str, optional): Path of ``imagelabels.mat`` (variable ``labels``, 1..102).
            Default: None.
        setid_file (str, optional): Path of ``setid.mat`` (variables ``trnid``, ``valid``,
            ``tstid``: 1-based image numbers). Default: None.
        mode (str, optional): 'train' (6149 samples, the ``tstid`` split), 'valid' (1020) or
            'test' (1020, ``trnid``). Default: 'train'.
        transform (Callable, optional): Applied to each image. Default: None.
        download (bool, optional): Download the files that are not given. Default: True.
        backend (str, optional): 'pil' returns ``PIL.Image`` images, 'cv2' numpy HWC RGB arrays
            in the default dtype; None uses ``paddle.vision.get_image_backend()``.
            Default: None.

    Returns:
        Dataset: ``dataset[i]`` is ``(image, label)``, label an int64 array of shape [1].

    Examples:
        >>> from paddle_hl.vision.datasets import Flowers
        >>> flowers = Flowers(mode='test')  # doctest: +SKIP
        >>> img, label = flowers[0]  # doctest: +SKIP
    """

    def __init__(self, data_file=None, label_file=None, setid_file=None, mode="train",
                 transform=None, download=True, backend=None):
        cls = type(self).__name__
        self.mode = _common.check_mode(cls, mode, ("train", "valid", "test"))
        self.backend = _common.check_backend(cls, backend)
        flag = MODE_FLAG_MAP[self.mode]
        data_file = _common.fetch(cls, "data_file", data_file, DATA_URL, DATA_MD5, "flowers",
                                  download)
        label_file = _common.fetch(cls, "label_file", label_file, LABEL_URL, LABEL_MD5,
                                   "flowers", download)
        setid_file = _common.fetch(cls, "setid_file", setid_file, SETID_URL, SETID_MD5,
                                   "flowers", download)
        self.transform = transform
        self.labels = _mat_vector(label_file, "labels", cls, "label_file")
        # the .mat file's integer dtype, as Paddle keeps it
        self.indexes = _mat_vector(setid_file, flag, cls, "setid_file")
        bad = (self.indexes < 1) | (self.indexes > len(self.labels))
        if bad.any():
            raise ValueError(f"{cls}: setid_file {setid_file!r} refers to image number "
                             f"{int(self.indexes[bad][0])}, but label_file has labels for "
                             f"images 1..{len(self.labels)}")
        self.data_path = _extracted_dir(data_file, self.indexes, cls)

    def __getitem__(self, idx):
        index = int(self.indexes[idx])
        label = np.array([self.labels[index - 1]]).astype("int64")
        path = os.path.join(self.data_path, _IMAGE_NAME.format(index))
        image = Image.open(path)
        image.load()  # reads the pixels and closes the file now, not when collected
        if self.backend == "cv2":
            image = np.array(image)
        if self.transform is not None:
            image = self.transform(image)
        if self.backend == "pil":
            return image, label
        return image.astype(paddle.get_default_dtype()), label

    def __len__(self):
        return len(self.indexes)


def _mat_vector(path, key, cls, arg):
    try:
        mat = loadmat(path)
    except ValueError as e:
        raise ValueError(f"{cls}: cannot read {arg} {path!r}: {e}") from None
    if key not in mat:
        raise ValueError(f"{cls}: {arg} {path!r} has no variable {key!r} (it has "
                         f"{sorted(mat)})")
    return mat[key][0]


def _archive_dir(data_file):
    base = data_file
    for suffix in (".tgz", ".tar.gz", ".tar"):
        if base.endswith(suffix):
            return base[:-len(suffix)]
    return base + ".d"


def _extracted_dir(data_file, indexes, cls):
    """The directory holding ``jpg/`` for ``data_file``, extracting the tarball if needed."""
    dl = paddle.utils.download
    candidates = [_archive_dir(data_file),
                  # fallback when the tarball sits in a read-only directory
                  os.path.join(dl.DATA_HOME, "flowers",
                               os.path.basename(_archive_dir(data_file)))]
    for dest in candidates:
        if not _missing_images(dest, indexes):
            return dest
    errors = []
    for dest in candidates:
        try:
            dl.extract_archive(data_file, dest)
        except PermissionError as e:
            errors.append(str(e))
            continue
        except ValueError as e:
            raise ValueError(f"{cls}: cannot extract data_file {data_file!r}: {e}") from None
        missing = _missing_images(dest, indexes)
        if missing:
            raise ValueError(f"{cls}: data_file {data_file!r} lacks {len(missing)} images of "
                             f"this split, e.g. jpg/{missing[0]}")
        return dest
    raise PermissionError(f"{cls}: cannot extract {data_file!r}: {'; '.join(errors)}")


def _missing_images(dest, indexes):
    """Sorted names of the split's images that are not in ``dest/jpg``."""
    wanted = {os.path.basename(_IMAGE_NAME.format(int(i))) for i in np.unique(indexes)}
    folder = os.path.join(dest, "jpg")
    present = set(os.listdir(folder)) if os.path.isdir(folder) else set()
    return sorted(wanted - present)
