"""PASCAL VOC 2012 semantic segmentation: jpg images and png masks read from the tar itself."""

from __future__ import annotations

import io
import os
import tarfile

import numpy as np
from PIL import Image

import paddle_hl as paddle

from . import _common

__all__ = []

VOC_URL = "https://dataset.bj.bcebos.com/voc/VOCtrainval_11-May-2012.tar"
VOC_MD5 = "6cd6e144f989b92b3379bac3b3de84fd"
SET_FILE = "VOCdevkit/VOC2012/ImageSets/Segmentation/{}.txt"
DATA_FILE = "VOCdevkit/VOC2012/JPEGImages/{}.jpg"
LABEL_FILE = "VOCdevkit/VOC2012/SegmentationClass/{}.png"

CACHE_DIR = "voc2012"

# Paddle's naming: 'train' reads trainval.txt, 'test' train.txt and 'valid' val.txt
MODE_FLAG_MAP = {"train": "trainval", "test": "train", "valid": "val"}


class VOC2012(paddle.io.Dataset):
    """The `PASCAL VOC 2012 <http://host.robots.ox.ac.uk/pascal/VOC/voc2012/>`_ segmentation set.

    Images and masks are read straight from the (uncompressed) tar, without extracting it:
    the members' offsets are indexed once, and each worker process opens its own handle, so the
    dataset can be used with a multi-process DataLoader.

    Args:
        data_file (str, optional): Path of ``VOCtrainval_11-May-2012.tar``; None downloads it to
            ``DATA_HOME/voc2012`` when ``download`` is True. Default: None.
        mode (str, optional): 'train' (the ``trainval`` list), 'valid' (``val``) or 'test'
            (``train``). Default: 'train'.
        transform (Callable, optional): Applied to each image (not to the mask). Default: None.
        download (bool, optional): Download ``data_file`` when it is not given. Default: True.
        backend (str, optional): 'pil' returns ``PIL.Image`` image and mask (palette 'P'),
            'cv2' numpy arrays (image HWC RGB, mask HW of class ids) in the default dtype; None
            uses ``paddle.vision.get_image_backend()``. Default: None.

    Returns:
        Dataset: ``dataset[i]`` is ``(image, label)``, the label being the segmentation mask.

    Examples:
        >>> from paddle_hl.vision.datasets import VOC2012
        >>> voc = VOC2012(mode='valid', backend='cv2')  # doctest: +SKIP
        >>> image, mask = voc[0]  # doctest: +SKIP
    """

    def __init__(self, data_file=None, mode="train", transform=None, download=True,
                 backend=None):
        cls = type(self).__name__
        self.mode = _common.check_mode(cls, mode, ("train", "valid", "test"))
        self.backend = _common.check_backend(cls, backend)
        self.flag = MODE_FLAG_MAP[self.mode]
        self.data_file = _common.fetch(cls, "data_file", data_file, VOC_URL, VOC_MD5, CACHE_DIR,
                                       download)
        self.transform = transform
        self._handle = None
        self._handle_pid = None
        self._load_anno()
        self.dtype = paddle.get_default_dtype()

    def _load_anno(self):
        cls = type(self).__name__
        try:
            with tarfile.open(self.data_file, "r:*") as tf:
                members = {m.name: m for m in tf.getmembers() if m.isfile()}
                set_file = SET_FILE.format(self.flag)
                if set_file not in members:
                    raise ValueError(f"{cls}: data_file {self.data_file!r} has no {set_file!r} "
                                     "(is it the VOC2012 trainval tar?)")
                lines = tf.extractfile(members[set_file]).read().decode("utf-8").splitlines()
        except tarfile.TarError as e:
            raise ValueError(f"{cls}: cannot read data_file {self.data_file!r}: {e}") from None
        names = [line.strip() for line in lines if line.strip()]
        self.data = [DATA_FILE.format(n) for n in names]
        self.labels = [LABEL_FILE.format(n) for n in names]
        absent = [f for f in self.data + self.labels if f not in members]
        if absent:
            raise ValueError(f"{cls}: data_file {self.data_file!r} lists {len(absent)} files "
                             f"in {SET_FILE.format(self.flag)!r} that it does not hold, e.g. "
                             f"{absent[0]!r}")
        self._spans = {f: (members[f].offset_data, members[f].size)
                       for f in self.data + self.labels}
        # an uncompressed tar (the real one) is read by offset; a compressed one via tarfile
        self._seekable = _is_plain_tar(self.data_file)

    def _read(self, name):
        # one handle per process: a handle inherited through fork would share its file offset
        if self._handle is None or self._handle_pid != os.getpid():
            self._handle = (open(self.data_file, "rb") if self._seekable
                            else tarfile.open(self.data_file, "r:*"))
            self._handle_pid = os.getpid()
        if self._seekable:
            offset, size = self._spans[name]
            if hasattr(os, "pread"):  # positional read: safe when threads share the handle
                return os.pread(self._handle.fileno(), size, offset)
            self._handle.seek(offset)
            return self._handle.read(size)
        return self._handle.extractfile(name).read()

    def __getitem__(self, idx):
        data = Image.open(io.BytesIO(self._read(self.data[idx])))
        label = Image.open(io.BytesIO(self._read(self.labels[idx])))
        if self.backend == "cv2":
            data = np.array(data)
            label = np.array(label)
        if self.transform is not None:
            data = self.transform(data)
        if self.backend == "cv2":
            return data.astype(self.dtype), label.astype(self.dtype)
        return data, label

    def __len__(self):
        return len(self.data)

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_handle"] = None
        state["_handle_pid"] = None
        return state

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle is not None:
            handle.close()


def _is_plain_tar(path):
    try:
        with tarfile.open(path, "r:"):
            return True
    except tarfile.ReadError:
        return False
