"""Image decoding backend: Pillow by default, OpenCV when it is installed and selected."""

from __future__ import annotations

import importlib

import numpy as np
from PIL import Image

__all__ = []

_BACKENDS = ("pil", "cv2", "tensor")
_image_backend = "pil"


def _check_backend(backend):
    if backend not in _BACKENDS:
        raise ValueError(f"Expected backend are one of {list(_BACKENDS)}, but got {backend!r}")


def set_image_backend(backend):
    """Choose how ``image_load`` and the folder datasets decode images.

    Args:
        backend (str): 'pil' (PIL.Image, the default), 'cv2' (BGR ``HWC`` uint8 ndarray, needs
            OpenCV) or 'tensor' (``CHW`` uint8 Tensor).

    Examples:
        >>> from paddle_hl.vision.image import set_image_backend, get_image_backend
        >>> set_image_backend('pil')
        >>> get_image_backend()
        'pil'
    """
    global _image_backend
    _check_backend(backend)
    # OpenCV is imported when an image is decoded, so datasets that only need the array layout
    # of 'cv2' work without it
    _image_backend = backend


def get_image_backend():
    """Name of the backend that decodes images: 'pil', 'cv2' or 'tensor'.

    Returns:
        str: The current backend.
    """
    return _image_backend


def _import_cv2():
    try:
        return importlib.import_module("cv2")
    except ImportError as e:
        raise ImportError("the 'cv2' image backend needs OpenCV, which is not installed: "
                          "pip install opencv-python (or use the default 'pil' backend)") from e


def image_load(path, backend=None):
    """Load an image file.

    Args:
        path (str): Path of the image.
        backend (str, optional): 'pil', 'cv2' or 'tensor'; None uses the backend chosen with
            ``set_image_backend`` ('pil' unless changed).

    Returns:
        PIL.Image|np.ndarray|Tensor: A PIL image ('pil'), a BGR ``HWC`` uint8 array ('cv2') or
        a ``CHW`` uint8 Tensor in RGB order ('tensor').

    Examples:
        >>> import os, tempfile
        >>> import numpy as np
        >>> from PIL import Image
        >>> from paddle_hl.vision.image import image_load
        >>> path = os.path.join(tempfile.mkdtemp(), 'a.png')
        >>> Image.fromarray(np.zeros((4, 6, 3), np.uint8)).save(path)
        >>> image_load(path).size
        (6, 4)
    """
    if backend is None:
        backend = _image_backend
    _check_backend(backend)
    if backend == "pil":
        return Image.open(path)
    if backend == "cv2":
        cv2 = _import_cv2()
        img = cv2.imread(str(path))
        if img is None:
            raise FileNotFoundError(f"image_load: cv2 could not read an image from {path!r}")
        return img
    import paddle_hl as paddle

    with Image.open(path) as img:
        arr = np.asarray(img.convert("RGB") if img.mode not in ("L", "RGB") else img)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    return paddle.to_tensor(np.ascontiguousarray(arr.transpose(2, 0, 1)))
