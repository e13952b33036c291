"""MNIST and Fashion-MNIST: 28x28 grey digits / clothes in IDX files (gzip compressed)."""

from __future__ import annotations

import gzip
import struct

import numpy as np
from PIL import Image

import paddle_hl as paddle

from . import _common

__all__ = []

_IDX_IMAGES, _IDX_LABELS = 2051, 2049


class MNIST(paddle.io.Dataset):
    """The `MNIST <http://yann.lecun.com/exdb/mnist/>`_ handwritten digits dataset.

    Args:
        image_path (str, optional): Path of the IDX image file (``*-images-idx3-ubyte.gz``);
            None downloads it to ``DATA_HOME/mnist`` when ``download`` is True. Default: None.
        label_path (str, optional): Path of the IDX label file (``*-labels-idx1-ubyte.gz``);
            None downloads it like ``image_path``. Default: None.
        mode (str, optional): 'train' (60000 samples) or 'test' (10000). Default: 'train'.
        transform (Callable, optional): Applied to each image. Default: None.
        download (bool, optional): Download the files that are not given. Default: True.
        backend (str, optional): 'pil' returns ``PIL.Image`` images (mode 'L'), 'cv2' numpy
            arrays of shape [28, 28] in the default dtype; None uses
            ``paddle.vision.get_image_backend()``. Default: None.

    Returns:
        Dataset: ``dataset[i]`` is ``(image, label)``, label an int64 array of shape [1].

    Examples:
        >>> from paddle_hl.vision.datasets import MNIST
        >>> mnist = MNIST(mode='test')  # doctest: +SKIP
        >>> img, label = mnist[0]  # doctest: +SKIP
        >>> img.size, label  # doctest: +SKIP
        ((28, 28), array([7]))
    """

    NAME = "mnist"
    URL_PREFIX = "https://dataset.bj.bcebos.com/mnist/"
    TEST_IMAGE_URL = URL_PREFIX + "t10k-images-idx3-ubyte.gz"
    TEST_IMAGE_MD5 = "9fb629c4189551a2d022fa330f9573f3"
    TEST_LABEL_URL = URL_PREFIX + "t10k-labels-idx1-ubyte.gz"
    TEST_LABEL_MD5 = "ec29112dd5afa0611ce80d1b7f02629c"
    TRAIN_IMAGE_URL = URL_PREFIX + "train-images-idx3-ubyte.gz"
    TRAIN_IMAGE_MD5 = "f68b3c2dcbeaaa9fbdd348bbdeb94873"
    TRAIN_LABEL_URL = URL_PREFIX + "train-labels-idx1-ubyte.gz"
    TRAIN_LABEL_MD5 = "d53e105ee54ea40749a09fcbcd1e9432"

    def __init__(self, image_path=None, label_path=None, mode="train", transform=None,
                 download=True, backend=None):
        cls = type(self).__name__
        self.mode = _common.check_mode(cls, mode, ("train", "test"))
        self.backend = _common.check_backend(cls, backend)
        train = self.mode == "train"
        self.image_path = _common.fetch(
            cls, "image_path", image_path, self.TRAIN_IMAGE_URL if train else self.TEST_IMAGE_URL,
            self.TRAIN_IMAGE_MD5 if train else self.TEST_IMAGE_MD5, self.NAME, download)
        self.label_path = _common.fetch(
            cls, "label_path", label_path, self.TRAIN_LABEL_URL if train else self.TEST_LABEL_URL,
            self.TRAIN_LABEL_MD5 if train else self.TEST_LABEL_MD5, self.NAME, download)
        self.transform = transform
        self._parse_dataset()
        self.dtype = paddle.get_default_dtype()

    def _parse_dataset(self):
        cls = type(self).__name__
        images = _read_idx(self.image_path, _IDX_IMAGES, 3, cls, "image_path")
        labels = _read_idx(self.label_path, _IDX_LABELS, 1, cls, "label_path")
        if len(images) != len(labels):
            raise ValueError(f"{cls}: the image file holds {len(images)} images but the label "
                             f"file {len(labels)} labels ({self.image_path!r}, "
                             f"{self.label_path!r})")
        # kept as uint8 (a quarter of Paddle's float32 copy); cast per sample in __getitem__
        self.images = images
        self.labels = labels.astype(np.int64)

    def __getitem__(self, idx):
        image = self.images[idx]
        label = np.array([self.labels[idx]], dtype=np.int64)
        if self.backend == "pil":
            image = Image.fromarray(image)
        if self.transform is not None:
            image = self.transform(image)
        if self.backend == "pil":
            return image, label
        return image.astype(self.dtype), label

    def __len__(self):
        return len(self.labels)


class FashionMNIST(MNIST):
    """The `Fashion-MNIST <https://github.com/zalandoresearch/fashion-mnist>`_ dataset.

    Same files, arguments and samples as :class:`MNIST` (10 clothing classes instead of
    digits); downloads go to ``DATA_HOME/fashion-mnist``.

    Args:
        image_path (str, optional): Path of the IDX image file. Default: None.
        label_path (str, optional): Path of the IDX label file. Default: None.
        mode (str, optional): 'train' or 'test'. Default: 'train'.
        transform (Callable, optional): Applied to each image. Default: None.
        download (bool, optional): Download the files that are not given. Default: True.
        backend (str, optional): 'pil' or 'cv2' (see :class:`MNIST`). Default: None.

    Returns:
        Dataset: ``dataset[i]`` is ``(image, label)``, label an int64 array of shape [1].
    """

    NAME = "fashion-mnist"
    URL_PREFIX = "https://dataset.bj.bcebos.com/fashion_mnist/"
    TEST_IMAGE_URL = URL_PREFIX + "t10k-images-idx3-ubyte.gz"
    TEST_IMAGE_MD5 = "bef4ecab320f06d8554ea6380940ec79"
    TEST_LABEL_URL = URL_PREFIX + "t10k-labels-idx1-ubyte.gz"
    TEST_LABEL_MD5 = "bb300cfdad3c16e7a12a480ee83cd310"
    TRAIN_IMAGE_URL = URL_PREFIX + "train-images-idx3-ubyte.gz"
    TRAIN_IMAGE_MD5 = "8d4fb7e6c68d591d4c3dfef9ec88bf0d"
    TRAIN_LABEL_URL = URL_PREFIX + "train-labels-idx1-ubyte.gz"
    TRAIN_LABEL_MD5 = "25c81989df183df01b3e8a0aad5dffbe"


def _read_idx(path, magic, ndim, cls, arg):
    """The uint8 array of an IDX file (gzip compressed or not), checked against ``magic``."""
    with open(path, "rb") as f:
        head = f.read(2)
    try:
        if head == b"\x1f\x8b":
            with gzip.open(path, "rb") as f:
                buf = f.read()
        else:
            with open(path, "rb") as f:
                buf = f.read()
    except (OSError, EOFError) as e:
        raise ValueError(f"{cls}: cannot read {arg} {path!r}: {e}") from None
    header = 4 * (1 + ndim)
    if len(buf) < header:
        raise ValueError(f"{cls}: {arg} {path!r} is too short for an IDX file")
    found, *dims = struct.unpack_from(f">{1 + ndim}I", buf, 0)
    if found != magic:
        raise ValueError(f"{cls}: {arg} {path!r} is not an IDX file of the expected kind "
                         f"(magic number {found}, expected {magic})")
    count = int(np.prod(dims))
    if len(buf) - header < count:
        raise ValueError(f"{cls}: {arg} {path!r} is truncated: its header announces shape "
                         f"{tuple(dims)} ({count} bytes) but only {len(buf) - header} follow")
    return np.frombuffer(buf, dtype=np.uint8, count=count, offset=header).reshape(dims)
