"""CIFAR-10 and CIFAR-100: 32x32 colour images in the python-pickle batches of a tar.gz."""

from __future__ import annotations

import pickle
import tarfile

import numpy as np
from PIL import Image

import paddle_hl as paddle

from . import _common

__all__ = []

URL_PREFIX = "https://dataset.bj.bcebos.com/cifar/"
CIFAR10_URL = URL_PREFIX + "cifar-10-python.tar.gz"
CIFAR10_MD5 = "c58f30108f718f92721af3b95e74349a"
CIFAR100_URL = URL_PREFIX + "cifar-100-python.tar.gz"
CIFAR100_MD5 = "eb9058c3a382ffc7106e4002c42a8d85"

# which archive members hold a split: every file whose name contains the flag, in name order
MODE_FLAG_MAP = {
    "train10": "data_batch",
    "test10": "test_batch",
    "train100": "train",
    "test100": "test",
}


class Cifar10(paddle.io.Dataset):
    """The `CIFAR-10 <https://www.cs.toronto.edu/~kriz/cifar.html>`_ dataset (10 classes).

    Samples come in the order of the archive's batches (sorted by member name), then the order
    inside each batch, so the order is deterministic.

    Args:
        data_file (str, optional): Path of ``cifar-10-python.tar.gz``; None downloads it to
            ``DATA_HOME/cifar`` when ``download`` is True. Default: None.
        mode (str, optional): 'train' (50000 samples) or 'test' (10000). Default: 'train'.
        transform (Callable, optional): Applied to each image. Default: None.
        download (bool, optional): Download ``data_file`` when it is not given. Default: True.
        backend (str, optional): 'pil' returns RGB ``PIL.Image`` images, 'cv2' numpy arrays of
            shape [32, 32, 3] (HWC, RGB) in the default dtype; None uses
            ``paddle.vision.get_image_backend()``. Default: None.

    Returns:
        Dataset: ``dataset[i]`` is ``(image, label)``, label a 0-D int64 array.

    Examples:
        >>> from paddle_hl.vision.datasets import Cifar10
        >>> cifar10 = Cifar10(mode='test', backend='cv2')  # doctest: +SKIP
        >>> img, label = cifar10[0]  # doctest: +SKIP
        >>> img.shape, img.dtype, int(label)  # doctest: +SKIP
        ((32, 32, 3), dtype('float32'), 3)
    """

    def __init__(self, data_file=None, mode="train", transform=None, download=True,
                 backend=None):
        cls = type(self).__name__
        self.mode = _common.check_mode(cls, mode, ("train", "test"))
        self.backend = _common.check_backend(cls, backend)
        self._init_url_md5_flag()
        self.data_file = _common.fetch(cls, "data_file", data_file, self.data_url,
                                       self.data_md5, "cifar", download)
        self.transform = transform
        self._load_data()
        self.dtype = paddle.get_default_dtype()

    def _init_url_md5_flag(self):
        self.data_url = CIFAR10_URL
        self.data_md5 = CIFAR10_MD5
        self.flag = MODE_FLAG_MAP[self.mode + "10"]

    def _load_data(self):
        cls = type(self).__name__
        images, labels = [], []
        try:
            with tarfile.open(self.data_file, mode="r:*") as tf:
                members = sorted((m for m in tf.getmembers()
                                  if m.isfile() and self.flag in m.name), key=lambda m: m.name)
                if not members:
                    raise ValueError(f"{cls}: {self.data_file!r} has no batch file whose name "
                                     f"contains {self.flag!r} (is it the right archive?)")
                for m in members:
                    batch = _RestrictedUnpickler(tf.extractfile(m)).load()
                    data, batch_labels = _batch_fields(batch, m.name, cls)
                    images.append(data)
                    labels.append(batch_labels)
        except (tarfile.TarError, pickle.UnpicklingError, EOFError, OSError) as e:
            raise ValueError(f"{cls}: cannot read data_file {self.data_file!r}: {e}") from None
        # one (N, 3072) uint8 array: channel-major rows (1024 R, 1024 G, 1024 B)
        self.images = np.concatenate(images)
        self.labels = np.concatenate(labels)

    @property
    def data(self):
        """Paddle's list of ``(image, label)`` pairs: each image a flat uint8 row of 3072
        values (1024 R, 1024 G, 1024 B), each label an int. Built on first access from
        :attr:`images` (the rows are views, not copies)."""
        pairs = self.__dict__.get("_data")
        if pairs is None:
            pairs = self.__dict__["_data"] = list(zip(self.images, self.labels.tolist()))
        return pairs

    def __getitem__(self, idx):
        image = self.images[idx].reshape(3, 32, 32).transpose(1, 2, 0)
        label = np.array(self.labels[idx], dtype=np.int64)
        if self.backend == "pil":
            image = Image.fromarray(np.ascontiguousarray(image))
        if self.transform is not None:
            image = self.transform(image)
        if self.backend == "pil":
            return image, label
        return image.astype(self.dtype), label

    def __len__(self):
        return len(self.labels)


class Cifar100(Cifar10):
    """The `CIFAR-100 <https://www.cs.toronto.edu/~kriz/cifar.html>`_ dataset (100 fine labels).

    Args:
        data_file (str, optional): Path of ``cifar-100-python.tar.gz``; None downloads it to
            ``DATA_HOME/cifar`` when ``download`` is True. Default: None.
        mode (str, optional): 'train' (50000 samples) or 'test' (10000). Default: 'train'.
        transform (Callable, optional): Applied to each image. Default: None.
        download (bool, optional): Download ``data_file`` when it is not given. Default: True.
        backend (str, optional): 'pil' or 'cv2' (see :class:`Cifar10`). Default: None.

    Returns:
        Dataset: ``dataset[i]`` is ``(image, label)``, label a 0-D int64 array (fine label).
    """

    def __init__(self, data_file=None, mode="train", transform=None, download=True,
                 backend=None):
        super().__init__(data_file, mode, transform, download, backend)

    def _init_url_md5_flag(self):
        self.data_url = CIFAR100_URL
        self.data_md5 = CIFAR100_MD5
        self.flag = MODE_FLAG_MAP[self.mode + "100"]


def _batch_fields(batch, member, cls):
    if not isinstance(batch, dict) or b"data" not in batch:
        raise ValueError(f"{cls}: member {member!r} is not a CIFAR batch (a dict with b'data')")
    labels = batch.get(b"labels", batch.get(b"fine_labels"))
    if labels is None:
        raise ValueError(f"{cls}: member {member!r} has neither b'labels' nor b'fine_labels'")
    data = np.asarray(batch[b"data"], dtype=np.uint8).reshape(-1, 3 * 32 * 32)
    labels = np.asarray(labels, dtype=np.int64).reshape(-1)
    if len(data) != len(labels):
        raise ValueError(f"{cls}: member {member!r} has {len(data)} images but {len(labels)} "
                         "labels")
    return data, labels


class _RestrictedUnpickler(pickle.Unpickler):
    """Unpickles CIFAR batches (dicts of bytes, lists and numpy arrays) and nothing else, so a
    tampered archive cannot run code."""

    _ALLOWED = {
        ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
        ("numpy", "ndarray"), ("numpy", "dtype"), ("_codecs", "encode"),
        ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
    }

    def __init__(self, file):
        super().__init__(file, encoding="bytes")

    def find_class(self, module, name):
        if (module, name) in self._ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"CIFAR batch refers to {module}.{name}, which is not "
                                     "allowed in a data file")
