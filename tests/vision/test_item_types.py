"""The vision datasets' items have Paddle's Python types (arrays of the same dtype and shape,
or PIL images of the same mode), compared with real Paddle on the same small files."""

from __future__ import annotations

import numpy as np
import pytest
from paddle_hl.vision import datasets

from tests.vision import test_datasets as T


def _kind(v):
    if isinstance(v, np.ndarray):
        return ("ndarray", str(v.dtype), v.shape)
    mode = getattr(v, "mode", None)
    return (type(v).__name__, mode, getattr(v, "size", None))


@pytest.fixture(scope="module")
def local_files(tmp_path_factory):
    rng = np.random.default_rng(7)
    d = tmp_path_factory.mktemp("vision-items")
    images = rng.integers(0, 256, (100, 28, 28), dtype=np.uint8)
    (d / "images.gz").write_bytes(T.idx_bytes(images))
    (d / "labels.gz").write_bytes(T.idx_bytes(rng.integers(0, 10, 100, dtype=np.uint8)))
    (d / "c10.tgz").write_bytes(T.cifar_tar(False, rng)[0])
    (d / "c100.tgz").write_bytes(T.cifar_tar(True, rng)[0])
    fl = T.flowers_files(rng)[0]
    for name, data in fl.items():
        (d / name).write_bytes(data)
    (d / "voc.tar").write_bytes(T.voc_tar(rng)[0])
    return d


@pytest.mark.parity
@pytest.mark.parametrize("backend", ["cv2", "pil"])
def test_items_match_paddle(pd, local_files, backend):
    d = local_files
    mnist = dict(image_path=str(d / "images.gz"), label_path=str(d / "labels.gz"))
    cases = [("MNIST", mnist), ("FashionMNIST", mnist),
             ("Cifar10", dict(data_file=str(d / "c10.tgz"))),
             ("Cifar100", dict(data_file=str(d / "c100.tgz"))),
             ("Flowers", dict(data_file=str(d / "102flowers.tgz"),
                              label_file=str(d / "imagelabels.mat"),
                              setid_file=str(d / "setid.mat"))),
             ("VOC2012", dict(data_file=str(d / "voc.tar")))]
    for name, kw in cases:
        ours = getattr(datasets, name)(backend=backend, **kw)
        ref = getattr(pd.vision.datasets, name)(backend=backend, **kw)
        assert len(ours) == len(ref), name
        for i in (0, len(ref) - 1):
            a, b = ours[i], ref[i]
            assert type(a) is type(b) and len(a) == len(b), name
            assert [_kind(x) for x in a] == [_kind(x) for x in b], (name, i)
            for x, y in zip(a, b):
                np.testing.assert_array_equal(np.asarray(x), np.asarray(y), err_msg=name)


@pytest.mark.parity
def test_public_attributes_match_paddle(pd, local_files):
    d = local_files
    for name, f in (("Cifar10", "c10.tgz"), ("Cifar100", "c100.tgz")):
        ours = getattr(datasets, name)(data_file=str(d / f))
        ref = getattr(pd.vision.datasets, name)(data_file=str(d / f))
        assert type(ours.data) is list and len(ours.data) == len(ref.data)
        for (img, lab), (rimg, rlab) in zip(ours.data, ref.data):
            assert type(lab) is type(rlab) is int and lab == rlab
            assert img.dtype == rimg.dtype and img.shape == rimg.shape
            np.testing.assert_array_equal(img, rimg)
    kw = dict(data_file=str(d / "102flowers.tgz"), label_file=str(d / "imagelabels.mat"),
              setid_file=str(d / "setid.mat"))
    ours, ref = datasets.Flowers(**kw), pd.vision.datasets.Flowers(**kw)
    assert ours.indexes.dtype == ref.indexes.dtype
    np.testing.assert_array_equal(ours.indexes, ref.indexes)
