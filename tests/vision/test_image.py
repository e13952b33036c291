"""paddle_hl.vision.image: image backends and image_load."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from paddle_hl.vision import image as vimage
from PIL import Image

import paddle_hl as paddle

HAS_CV2 = importlib.util.find_spec("cv2") is not None


@pytest.fixture
def png(tmp_path):
    arr = np.random.default_rng(0).integers(0, 256, (6, 9, 3), dtype=np.uint8)
    path = tmp_path / "img.png"
    Image.fromarray(arr).save(path)
    return path, arr


@pytest.fixture(autouse=True)
def _restore_backend():
    prev = vimage.get_image_backend()
    yield
    vimage.set_image_backend(prev)


def test_default_backend_is_pil(png):
    path, arr = png
    assert vimage.get_image_backend() == "pil"
    img = vimage.image_load(path)
    assert isinstance(img, Image.Image) and img.size == (9, 6)
    np.testing.assert_array_equal(np.asarray(img), arr)


def test_set_and_get_backend(png):
    path, arr = png
    vimage.set_image_backend("tensor")
    assert vimage.get_image_backend() == "tensor"
    t = vimage.image_load(path)
    assert isinstance(t, paddle.Tensor) and t.dtype == paddle.uint8
    np.testing.assert_array_equal(t.numpy(), arr.transpose(2, 0, 1))
    # an explicit backend wins over the global one
    assert isinstance(vimage.image_load(path, backend="pil"), Image.Image)


def test_bad_backend_raises():
    with pytest.raises(ValueError, match="pil"):
        vimage.set_image_backend("skimage")
    with pytest.raises(ValueError, match="backend"):
        vimage.image_load("x.png", backend="PIL")


@pytest.mark.skipif(HAS_CV2, reason="OpenCV is installed")
def test_cv2_backend_without_opencv(png):
    path, _ = png
    vimage.set_image_backend("cv2")  # choosing it is allowed; decoding needs OpenCV
    assert vimage.get_image_backend() == "cv2"
    with pytest.raises(ImportError, match="opencv"):
        vimage.image_load(path)


@pytest.mark.skipif(not HAS_CV2, reason="needs OpenCV")
def test_cv2_backend_reads_bgr(png):
    path, arr = png
    out = vimage.image_load(path, backend="cv2")
    np.testing.assert_array_equal(out, arr[..., ::-1])


@pytest.mark.parity
def test_backend_parity(pd, png):
    path, arr = png
    from paddle.vision import image as pimage

    ours = vimage.image_load(path, backend="pil")
    theirs = pimage.image_load(str(path), backend="pil")
    assert ours.mode == theirs.mode and ours.size == theirs.size
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    assert pimage.get_image_backend() == vimage.get_image_backend() == "pil"
