"""Datasets over a directory tree of image files: DatasetFolder (one sub-folder per class) and
ImageFolder (every image file, no labels)."""

from __future__ import annotations

import os

from PIL import Image

import paddle_hl as paddle

from . import _common

__all__ = []

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


def has_valid_extension(filename: str, extensions) -> bool:
    """Whether ``filename`` ends with one of ``extensions`` (case-insensitive).

    Args:
        filename (str): Path of a file.
        extensions (list[str] | tuple[str]): Allowed extensions, e.g. ``('.jpg', '.png')``.

    Returns:
        bool: True when the extension is allowed.
    """
    if not isinstance(extensions, (list, tuple)):
        raise TypeError(f"has_valid_extension: `extensions` must be list or tuple, but got "
                        f"{type(extensions).__name__}")
    return filename.lower().endswith(tuple(x.lower() for x in extensions))


def _validity(extensions, is_valid_file, cls):
    """The file filter: by extension (Paddle's default list when neither is given), by
    ``is_valid_file``, or both when both are given."""
    if extensions is not None and not isinstance(extensions, (list, tuple)):
        raise TypeError(f"{cls}: `extensions` must be list or tuple, but got "
                        f"{type(extensions).__name__}")
    if is_valid_file is not None and not callable(is_valid_file):
        raise TypeError(f"{cls}: `is_valid_file` must be callable, but got "
                        f"{type(is_valid_file).__name__}")
    if is_valid_file is None:
        exts = IMG_EXTENSIONS if extensions is None else extensions
        return lambda path: has_valid_extension(path, exts)
    if extensions is None:
        return is_valid_file
    return lambda path: has_valid_extension(path, extensions) and is_valid_file(path)


def _walk_files(directory, valid):
    """Paths of the valid files under ``directory``, in sorted (deterministic) order."""
    out = []
    for root, _, fnames in sorted(os.walk(directory, followlinks=True)):
        for fname in sorted(fnames):
            path = os.path.join(root, fname)
            if valid(path):
                out.append(path)
    return out


def make_dataset(dir, class_to_idx, extensions, is_valid_file=None):
    """``(path, class_index)`` of every valid file under ``dir/<class>/`` for each class.

    Args:
        dir (str): Root directory.
        class_to_idx (dict[str, int]): Class folder name -> class index.
        extensions (list[str] | tuple[str] | None): Allowed extensions.
        is_valid_file (Callable, optional): Filter on the file path. Default: None.

    Returns:
        list[tuple[str, int]]: Samples sorted by class name, then path.
    """
    dir = os.path.expanduser(dir)
    valid = _validity(extensions, is_valid_file, "make_dataset")
    images = []
    for target in sorted(class_to_idx):
        d = os.path.join(dir, target)
        if os.path.isdir(d):
            images.extend((path, class_to_idx[target]) for path in _walk_files(d, valid))
    return images


class DatasetFolder(paddle.io.Dataset):
    """A dataset of files laid out as ``root/<class_name>/**/<file>``.

    Classes are the sub-directories of ``root`` in sorted order, numbered from 0; samples are
    sorted by class, then path.

    Args:
        root (str): Root directory.
        loader (Callable, optional): Loads a sample from its path. Default: None, which reads
            images with PIL (RGB), or with OpenCV (RGB numpy array) when the image backend is
            'cv2'.
        extensions (list[str] | tuple[str], optional): Allowed file extensions. Default: None,
            which means ``IMG_EXTENSIONS`` unless ``is_valid_file`` is given.
        transform (Callable, optional): Applied to each sample. Default: None.
        is_valid_file (Callable, optional): ``path -> bool`` filter (e.g. to skip corrupt
            files); used instead of the default extensions, or together with ``extensions``
            when both are given. Default: None. Paddle 2.6.2 documents this argument but
            never calls it (its default extension list always takes its place), so there
            every image file is kept; here the filter is applied, as documented.

    Attributes:
        classes (list[str]): Class names.
        class_to_idx (dict[str, int]): Class name -> index.
        samples (list[tuple[str, int]]): ``(path, class_index)`` pairs.
        targets (list[int]): The class index of each sample.

    Returns:
        Dataset: ``dataset[i]`` is ``(sample, class_index)`` with an int class index.

    Examples:
        >>> from paddle_hl.vision.datasets import DatasetFolder
        >>> ds = DatasetFolder('path/to/root')  # doctest: +SKIP
        >>> img, target = ds[0]  # doctest: +SKIP
    """

    def __init__(self, root, loader=None, extensions=None, transform=None,
                 is_valid_file=None):
        cls = type(self).__name__
        self.root = root
        self.transform = transform
        valid = _validity(extensions, is_valid_file, cls)
        if extensions is None and is_valid_file is None:
            extensions = IMG_EXTENSIONS
        classes, class_to_idx = self._find_classes(self.root)
        samples = make_dataset(self.root, class_to_idx, None, valid)
        if len(samples) == 0:
            allowed = ",".join(extensions) if extensions else "(by is_valid_file)"
            raise RuntimeError(f"{cls}: Found 0 files in subfolders of: {self.root}\n"
                               f"Supported extensions are: {allowed}")
        self.loader = default_loader if loader is None else loader
        self.extensions = extensions
        self.classes = classes
        self.class_to_idx = class_to_idx
        self.samples = samples
        self.targets = [s[1] for s in samples]
        self.dtype = paddle.get_default_dtype()

    def _find_classes(self, dir):
        """The sorted class folder names of ``dir`` and their indices.

        Args:
            dir (str): Root directory.

        Returns:
            tuple[list[str], dict[str, int]]: Classes and class -> index.
        """
        dir = os.path.expanduser(dir)
        if not os.path.isdir(dir):
            raise FileNotFoundError(f"{type(self).__name__}: root {dir!r} is not a directory")
        classes = sorted(d.name for d in os.scandir(dir) if d.is_dir())
        return classes, {c: i for i, c in enumerate(classes)}

    def __getitem__(self, index):
        path, target = self.samples[index]
        sample = self.loader(path)
        if self.transform is not None:
            sample = self.transform(sample)
        return sample, target

    def __len__(self):
        return len(self.samples)


class ImageFolder(paddle.io.Dataset):
    """A dataset of every image file under ``root`` (any depth), without labels.

    Args:
        root (str): Root directory.
        loader (Callable, optional): Loads a sample from its path. Default: None (see
            :class:`DatasetFolder`).
        extensions (list[str] | tuple[str], optional): Allowed file extensions. Default: None,
            which means ``IMG_EXTENSIONS`` unless ``is_valid_file`` is given.
        transform (Callable, optional): Applied to each sample. Default: None.
        is_valid_file (Callable, optional): ``path -> bool`` filter, applied as documented
            (Paddle 2.6.2 ignores it, see :class:`DatasetFolder`). Default: None.

    Attributes:
        samples (list[str]): Paths of the files, sorted.

    Returns:
        Dataset: ``dataset[i]`` is ``[sample]`` (a one-element list).

    Examples:
        >>> from paddle_hl.vision.datasets import ImageFolder
        >>> ds = ImageFolder('path/to/images')  # doctest: +SKIP
        >>> (img,) = ds[0]  # doctest: +SKIP
    """

    def __init__(self, root, loader=None, extensions=None, transform=None,
                 is_valid_file=None):
        cls = type(self).__name__
        self.root = root
        valid = _validity(extensions, is_valid_file, cls)
        if extensions is None and is_valid_file is None:
            extensions = IMG_EXTENSIONS
        path = os.path.expanduser(root)
        if not os.path.isdir(path):
            raise FileNotFoundError(f"{cls}: root {root!r} is not a directory")
        samples = _walk_files(path, valid)
        if len(samples) == 0:
            allowed = ",".join(extensions) if extensions else "(by is_valid_file)"
            raise RuntimeError(f"{cls}: Found 0 files in subfolders of: {self.root}\n"
                               f"Supported extensions are: {allowed}")
        self.loader = default_loader if loader is None else loader
        self.extensions = extensions
        self.samples = samples
        self.transform = transform

    def __getitem__(self, index):
        sample = self.loader(self.samples[index])
        if self.transform is not None:
            sample = self.transform(sample)
        return [sample]

    def __len__(self):
        return len(self.samples)


def pil_loader(path):
    """Read an image file as an RGB ``PIL.Image``.

    Args:
        path (str): Image path.

    Returns:
        PIL.Image.Image: The image in mode 'RGB'.
    """
    with open(path, "rb") as f:
        img = Image.open(f)
        return img.convert("RGB")


def cv2_loader(path):
    """Read an image file with OpenCV as an RGB uint8 array of shape [H, W, 3].

    Args:
        path (str): Image path.

    Returns:
        numpy.ndarray: The image, RGB channel order.
    """
    cv2 = paddle.utils.try_import("cv2")
    img = cv2.imread(path)
    if img is None:
        raise ValueError(f"cv2_loader: OpenCV cannot read an image from {path!r}")
    return cv2.cvtColor(img, cv2.COLOR_BGR2RGB)


def default_loader(path):
    """Read an image with the loader of the current image backend ('pil' or 'cv2').

    Args:
        path (str): Image path.

    Returns:
        PIL.Image.Image | numpy.ndarray: The RGB image.
    """
    if _common.check_backend("default_loader", None) == "cv2":
        return cv2_loader(path)
    return pil_loader(path)
