"""paddle_hl.vision.datasets on small files in the real formats, downloaded from a local HTTP
server (tests/http_server.py) through paddle_hl.utils.download, and compared with Paddle 2.6.2."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import pickle
import random
import shutil
import struct
import tarfile
import zlib

import numpy as np
import pytest
from paddle_hl.vision import datasets
from paddle_hl.vision.datasets import _matlab
from paddle_hl.vision.datasets import cifar as cifar_mod
from paddle_hl.vision.datasets import flowers as flowers_mod
from paddle_hl.vision.datasets import voc2012 as voc_mod
from PIL import Image

import paddle_hl as paddle
from tests.http_server import serve_directory

# ------------------------------------------------------------------------------------------------
# writers of the real formats


def idx_bytes(arr: np.ndarray, gz: bool = True) -> bytes:
    """An IDX file (MNIST's format) holding the uint8 array ``arr``."""
    magic = 0x0800 | arr.ndim  # 0x08: unsigned byte data
    raw = struct.pack(">I", magic) + struct.pack(f">{arr.ndim}I", *arr.shape) + arr.tobytes()
    return gzip.compress(raw, mtime=0) if gz else raw


def _add(tf: tarfile.TarFile, name: str, data: bytes) -> None:
    ti = tarfile.TarInfo(name)
    ti.size = len(data)
    ti.mode = 0o644
    tf.addfile(ti, io.BytesIO(data))


def tar_bytes(members: dict, mode: str = "w:gz", order=None) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tf:
        for name in order or members:
            _add(tf, name, members[name])
    return buf.getvalue()


def cifar_tar(hundred: bool, rng, n_train_batches=2, per_batch=6, n_test=5):
    """A cifar-10/100-python.tar.gz look-alike: python-2 style pickles with bytes keys, the
    batches added to the tar out of order."""
    top = "cifar-100-python" if hundred else "cifar-10-batches-py"
    label_key = b"fine_labels" if hundred else b"labels"
    n_cls = 100 if hundred else 10
    members, truth = {}, {}

    def batch(name, n):
        data = rng.integers(0, 256, (n, 3072), dtype=np.uint8)
        labels = [int(v) for v in rng.integers(0, n_cls, n)]
        d = {b"batch_label": name.encode(), label_key: labels, b"data": data,
             b"filenames": [f"img_{i}.png".encode() for i in range(n)]}
        if hundred:
            d[b"coarse_labels"] = [v // 5 for v in labels]
        members[f"{top}/{name}"] = pickle.dumps(d, protocol=2)
        truth[name] = (data, np.array(labels))

    if hundred:
        batch("train", n_train_batches * per_batch)
        batch("test", n_test)
        members[f"{top}/meta"] = pickle.dumps({b"fine_label_names": [b"x"] * 100}, protocol=2)
    else:
        for i in range(n_train_batches, 0, -1):
            batch(f"data_batch_{i}", per_batch)
        batch("test_batch", n_test)
        members[f"{top}/batches.meta"] = pickle.dumps({b"label_names": [b"x"] * 10},
                                                      protocol=2)
    names = list(members)
    random.Random(0).shuffle(names)
    return tar_bytes(members, order=names), truth


def jpeg_bytes(rng, h, w) -> bytes:
    arr = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="JPEG", quality=90)
    return buf.getvalue()


def png_mask_bytes(rng, h, w) -> bytes:
    img = Image.fromarray(rng.integers(0, 21, (h, w), dtype=np.uint8), mode="P")
    img.putpalette([c for i in range(256) for c in (i, 255 - i, (7 * i) % 256)])
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


# --- MAT-file (level 5) writer ---------------------------------------------------------------

_MI = {"i1": 1, "u1": 2, "i2": 3, "u2": 4, "i4": 5, "u4": 6, "f4": 7, "f8": 9, "i8": 12,
       "u8": 13}
_MX = {"f8": 6, "f4": 7, "i1": 8, "u1": 9, "i2": 10, "u2": 11, "i4": 12, "u4": 13, "i8": 14,
       "u8": 15}


def _element(mtype: int, data: bytes, bo: str, small_ok: bool = True) -> bytes:
    if small_ok and len(data) <= 4:
        # small data element: size and type share one uint32, data in the next 4 bytes
        return struct.pack(bo + "I", (len(data) << 16) | mtype) + data.ljust(4, b"\0")
    out = struct.pack(bo + "II", mtype, len(data)) + data
    return out + b"\0" * (-len(out) % 8)


def _matrix(name: str, arr: np.ndarray, bo: str, storage: str | None = None) -> bytes:
    arr = np.asarray(arr)
    if arr.ndim < 2:
        arr = arr.reshape(1, -1)
    if arr.dtype.kind == "U":
        codes = np.array([[ord(c) for c in row] for row in arr.reshape(-1)], dtype=np.uint16)
        cls, flags = 4, 4
        body = _element(4, codes.ravel(order="F").astype(bo + "u2").tobytes(), bo)
        dims = codes.shape
    else:
        code = arr.dtype.str[1:] if arr.dtype != bool else "u1"
        cls = _MX[code]
        flags = cls | (0x0200 if arr.dtype == bool else 0)
        store = storage or code
        body = _element(_MI[store], arr.ravel(order="F").astype(bo + store).tobytes(), bo)
        dims = arr.shape
    head = (_element(6, struct.pack(bo + "II", flags, 0), bo, small_ok=False)
            + _element(5, np.asarray(dims, dtype=bo + "i4").tobytes(), bo, small_ok=False)
            + _element(1, name.encode(), bo))
    return _element(14, head + body, bo, small_ok=False)


def mat_bytes(variables: dict, compress: bool = False, big_endian: bool = False,
              storage: dict | None = None) -> bytes:
    """A MATLAB 5.0 MAT-file holding ``variables`` (optionally zlib-compressed, as v7 does)."""
    bo = ">" if big_endian else "<"
    header = b"MATLAB 5.0 MAT-file, written by paddle_hl tests".ljust(116, b" ")
    header += b"\0" * 8 + struct.pack(bo + "H", 0x0100) + (b"MI" if big_endian else b"IM")
    body = b""
    for name, arr in variables.items():
        el = _matrix(name, arr, bo, (storage or {}).get(name))
        if compress:
            z = zlib.compress(el)
            el = struct.pack(bo + "II", 15, len(z)) + z
        body += el
    return header + body


def flowers_files(rng, n=12):
    members = {f"jpg/image_{i:05d}.jpg": jpeg_bytes(rng, 10 + i % 3, 14) for i in range(1, n + 1)}
    labels = rng.integers(1, 103, (1, n)).astype(np.uint8)
    perm = rng.permutation(np.arange(1, n + 1)).astype(np.uint16)
    setid = {"trnid": perm[None, :3], "valid": perm[None, 3:6], "tstid": perm[None, 6:]}
    return {
        "102flowers.tgz": tar_bytes(members, order=sorted(members, reverse=True)),
        "imagelabels.mat": mat_bytes({"labels": labels}, compress=True),
        "setid.mat": mat_bytes(setid),
    }, labels[0], setid, members


VOC_SETS = {"trainval": ["2007_000032", "2007_000039", "2008_000001"],
            "train": ["2007_000032", "2008_000001"], "val": ["2007_000039"]}


def voc_tar(rng, mode="w"):
    base = "VOCdevkit/VOC2012"
    members = {}
    for split, names in VOC_SETS.items():
        members[f"{base}/ImageSets/Segmentation/{split}.txt"] = ("\n".join(names) + "\n").encode()
    for i, name in enumerate(VOC_SETS["trainval"]):
        members[f"{base}/JPEGImages/{name}.jpg"] = jpeg_bytes(rng, 8 + i, 12)
        members[f"{base}/SegmentationClass/{name}.png"] = png_mask_bytes(rng, 8 + i, 12)
    members[f"{base}/Annotations/2007_000032.xml"] = b"<annotation/>"
    return tar_bytes(members, mode=mode), members


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


# ------------------------------------------------------------------------------------------------
# fixtures


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Every fake dataset file, written once: {name: bytes} plus the ground truth."""
    rng = np.random.default_rng(7)
    out = {}
    for prefix, n in (("train", 200), ("t10k", 100)):
        images = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
        labels = rng.integers(0, 10, n, dtype=np.uint8)
        out[f"{prefix}-images-idx3-ubyte.gz"] = idx_bytes(images)
        out[f"{prefix}-labels-idx1-ubyte.gz"] = idx_bytes(labels)
        out[f"truth-{prefix}"] = (images, labels)
    out["cifar-10-python.tar.gz"], out["truth-c10"] = cifar_tar(False, rng)
    out["cifar-100-python.tar.gz"], out["truth-c100"] = cifar_tar(True, rng)
    fl, labels, setid, members = flowers_files(rng)
    out.update(fl)
    out["truth-flowers"] = (labels, setid, members)
    out["VOCtrainval_11-May-2012.tar"], out["truth-voc"] = voc_tar(rng)
    out["voc.tar.gz"], _ = voc_tar(np.random.default_rng(7 + 1000), mode="w:gz")
    root = tmp_path_factory.mktemp("datasets")
    for name, data in out.items():
        if isinstance(data, bytes):
            (root / name).write_bytes(data)
    out["dir"] = root
    return out


@pytest.fixture
def server(tmp_path):
    with serve_directory(tmp_path / "www") as srv:
        yield srv


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("PADDLE_HL_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def hosted(files, server, home, monkeypatch):
    """Every URL/md5 table points at the local server, which hosts the fake files."""
    for name, data in files.items():
        if isinstance(data, bytes):
            server.put(f"data/{name}", data)

    def url_md5(name):
        return server.url(f"data/{name}"), md5(files[name])

    for cls in (datasets.MNIST, datasets.FashionMNIST):
        for split, prefix in (("TRAIN", "train"), ("TEST", "t10k")):
            for kind, tag in (("IMAGE", "images-idx3"), ("LABEL", "labels-idx1")):
                url, digest = url_md5(f"{prefix}-{tag}-ubyte.gz")
                monkeypatch.setattr(cls, f"{split}_{kind}_URL", url)
                monkeypatch.setattr(cls, f"{split}_{kind}_MD5", digest)
    for var, name in (("CIFAR10", "cifar-10-python.tar.gz"),
                      ("CIFAR100", "cifar-100-python.tar.gz")):
        url, digest = url_md5(name)
        monkeypatch.setattr(cifar_mod, f"{var}_URL", url)
        monkeypatch.setattr(cifar_mod, f"{var}_MD5", digest)
    for var, name in (("DATA", "102flowers.tgz"), ("LABEL", "imagelabels.mat"),
                      ("SETID", "setid.mat")):
        url, digest = url_md5(name)
        monkeypatch.setattr(flowers_mod, f"{var}_URL", url)
        monkeypatch.setattr(flowers_mod, f"{var}_MD5", digest)
    url, digest = url_md5("VOCtrainval_11-May-2012.tar")
    monkeypatch.setattr(voc_mod, "VOC_URL", url)
    monkeypatch.setattr(voc_mod, "VOC_MD5", digest)
    return server


def _cache(home, *parts):
    return os.path.join(str(home), "dataset", *parts)


# ------------------------------------------------------------------------------------------------
# MNIST / FashionMNIST


@pytest.mark.parametrize("cls,cache", [(datasets.MNIST, "mnist"),
                                       (datasets.FashionMNIST, "fashion-mnist")])
@pytest.mark.parametrize("mode,prefix", [("train", "train"), ("test", "t10k")])
def test_mnist_download_and_parse(hosted, home, files, cls, cache, mode, prefix):
    images, labels = files[f"truth-{prefix}"]
    ds = cls(mode=mode, backend="cv2")
    assert len(ds) == len(labels)
    assert ds.image_path == _cache(home, cache, f"{prefix}-images-idx3-ubyte.gz")
    for i in (0, 17, len(ds) - 1):
        img, lab = ds[i]
        assert img.dtype == np.float32 and img.shape == (28, 28)
        np.testing.assert_array_equal(img, images[i].astype(np.float32))
        assert lab.dtype == np.int64 and lab.shape == (1,) and lab[0] == labels[i]
    # a second instance reads the cache: no new request
    hits = hosted.hits(f"data/{prefix}-images-idx3-ubyte.gz")
    cls(mode=mode)
    assert hosted.hits(f"data/{prefix}-images-idx3-ubyte.gz") == hits == 1


def test_mnist_pil_backend_and_transform(hosted, files):
    images, labels = files["truth-t10k"]
    ds = datasets.MNIST(mode="test", backend="pil")
    img, lab = ds[3]
    assert isinstance(img, Image.Image) and img.mode == "L" and img.size == (28, 28)
    np.testing.assert_array_equal(np.asarray(img), images[3])
    np.testing.assert_array_equal(lab, np.array([labels[3]], dtype=np.int64))
    ds = datasets.MNIST(mode="test", backend="cv2", transform=lambda a: a[None] / 255.0)
    img, _ = ds[3]
    assert img.shape == (1, 28, 28) and img.dtype == np.float32
    np.testing.assert_allclose(img[0], images[3] / 255.0, rtol=1e-6)


def test_mnist_cv2_uses_default_dtype(hosted):
    paddle.set_default_dtype("float64")
    ds = datasets.MNIST(mode="test", backend="cv2")
    assert ds[0][0].dtype == np.float64


def test_mnist_local_files_and_plain_idx(files, tmp_path):
    images, labels = files["truth-t10k"]
    img_path = tmp_path / "img.idx"
    img_path.write_bytes(idx_bytes(images, gz=False))
    ds = datasets.MNIST(image_path=str(img_path),
                        label_path=str(files["dir"] / "t10k-labels-idx1-ubyte.gz"),
                        mode="test", download=False, backend="cv2")
    assert len(ds) == 100
    np.testing.assert_array_equal(ds[-1][0], images[-1].astype(np.float32))


def test_mnist_truncated_download_is_retried(hosted, home, files):
    hosted.truncate("data/t10k-images-idx3-ubyte.gz", times=1)
    ds = datasets.MNIST(mode="test", backend="cv2")
    assert len(ds) == 100
    assert hosted.hits("data/t10k-images-idx3-ubyte.gz") == 2


@pytest.mark.parametrize("fault", ["truncate", "corrupt"])
def test_mnist_bad_download_twice_raises_and_caches_nothing(hosted, home, fault):
    getattr(hosted, fault)("data/t10k-images-idx3-ubyte.gz", times=2)
    with pytest.raises(RuntimeError, match="t10k-images-idx3-ubyte.gz") as info:
        datasets.MNIST(mode="test")
    assert "by hand" in str(info.value) and "image_path=" in str(info.value)
    assert os.listdir(_cache(home, "mnist")) == []


def test_mnist_errors(files, tmp_path):
    with pytest.raises(AssertionError, match="mode"):
        datasets.MNIST(mode="val")
    with pytest.raises(ValueError, match="backend"):
        datasets.MNIST(mode="test", backend="opencv")
    with pytest.raises(AssertionError, match="downloading automatically is disabled"):
        datasets.MNIST(mode="test", download=False)
    with pytest.raises(FileNotFoundError, match="image_path"):
        datasets.MNIST(image_path=str(tmp_path / "nope.gz"), label_path="x", mode="test")
    lab = str(files["dir"] / "t10k-labels-idx1-ubyte.gz")
    img = str(files["dir"] / "t10k-images-idx3-ubyte.gz")
    with pytest.raises(ValueError, match="magic number 2049, expected 2051"):
        datasets.MNIST(image_path=lab, label_path=lab, mode="test")
    short = tmp_path / "short.gz"
    short.write_bytes(gzip.compress(gzip.decompress(files["t10k-images-idx3-ubyte.gz"])[:500]))
    with pytest.raises(ValueError, match="truncated"):
        datasets.MNIST(image_path=str(short), label_path=lab, mode="test")
    train_lab = str(files["dir"] / "train-labels-idx1-ubyte.gz")
    with pytest.raises(ValueError, match="100 images but the label file 200 labels"):
        datasets.MNIST(image_path=img, label_path=train_lab, mode="test")


def test_mnist_with_dataloader(hosted):
    ds = datasets.MNIST(mode="test", backend="cv2")
    loader = paddle.io.DataLoader(ds, batch_size=8, shuffle=False)
    x, y = next(iter(loader))
    assert x.shape == [8, 28, 28] and y.shape == [8, 1]
    assert x.dtype == paddle.float32 and y.dtype == paddle.int64


# ------------------------------------------------------------------------------------------------
# CIFAR


@pytest.mark.parametrize("hundred", [False, True])
@pytest.mark.parametrize("mode", ["train", "test"])
def test_cifar_download_and_parse(hosted, home, files, hundred, mode):
    cls = datasets.Cifar100 if hundred else datasets.Cifar10
    truth = files["truth-c100" if hundred else "truth-c10"]
    if hundred:
        data, labels = truth[mode]
    else:
        # The order of the data source, batches sorted by name (deterministic)
        keys = ["data_batch_1", "data_batch_2"] if mode == "train" else ["test_batch"]
        data = np.concatenate([truth[k][0] for k in keys])
        labels = np.concatenate([truth[k][1] for k in keys])
    ds = cls(mode=mode, backend="cv2")
    assert ds.data_file == _cache(home, "cifar", "cifar-100-python.tar.gz" if hundred
                                  else "cifar-10-python.tar.gz")
    assert len(ds) == len(labels)
    for i in range(len(ds)):
        img, lab = ds[i]
        assert img.shape == (32, 32, 3) and img.dtype == np.float32
        np.testing.assert_array_equal(img, data[i].reshape(3, 32, 32).transpose(1, 2, 0))
        assert lab.shape == () and lab.dtype == np.int64 and int(lab) == labels[i]
    again = cls(mode=mode, backend="cv2")
    np.testing.assert_array_equal(again.labels, ds.labels)


def test_cifar_pil_backend(hosted, files):
    data, labels = files["truth-c10"]["test_batch"]
    ds = datasets.Cifar10(mode="test", backend="pil", transform=lambda im: im.rotate(90))
    img, lab = ds[2]
    assert isinstance(img, Image.Image) and img.mode == "RGB"
    expected = Image.fromarray(data[2].reshape(3, 32, 32).transpose(1, 2, 0)).rotate(90)
    np.testing.assert_array_equal(np.asarray(img), np.asarray(expected))
    assert lab.dtype == np.int64 and lab.shape == ()


def test_cifar_errors(files, tmp_path):
    evil = tmp_path / "evil.tar.gz"

    class Boom:
        def __reduce__(self):
            return (os.system, ("echo pwned",))

    evil.write_bytes(tar_bytes({"cifar-10-batches-py/test_batch": pickle.dumps(
        {b"data": Boom(), b"labels": [1]}, protocol=2)}))
    with pytest.raises(ValueError, match="not allowed"):
        datasets.Cifar10(data_file=str(evil), mode="test")
    with pytest.raises(ValueError, match="no batch file whose name contains 'test_batch'"):
        datasets.Cifar10(data_file=str(files["dir"] / "cifar-100-python.tar.gz"), mode="test")
    with pytest.raises(ValueError, match="cannot read data_file"):
        datasets.Cifar10(data_file=str(files["dir"] / "setid.mat"), mode="test")
    with pytest.raises(AssertionError, match="mode"):
        datasets.Cifar100(mode="valid")
    with pytest.raises(AssertionError, match="data_file is not set"):
        datasets.Cifar10(download=False)


# ------------------------------------------------------------------------------------------------
# Flowers


@pytest.mark.parametrize("mode,flag", [("train", "tstid"), ("valid", "valid"), ("test", "trnid")])
def test_flowers_download_and_parse(hosted, home, files, mode, flag):
    labels, setid, members = files["truth-flowers"]
    ds = datasets.Flowers(mode=mode, backend="cv2")
    assert len(ds) == setid[flag].shape[1]
    assert ds.data_path == _cache(home, "flowers", "102flowers")
    for i, index in enumerate(setid[flag][0]):
        img, lab = ds[i]
        expected = np.asarray(Image.open(io.BytesIO(members[f"jpg/image_{index:05d}.jpg"])))
        assert img.dtype == np.float32 and img.shape == expected.shape
        np.testing.assert_array_equal(img, expected.astype(np.float32))
        assert lab.dtype == np.int64 and lab.shape == (1,) and lab[0] == labels[index - 1]
    img, _ = datasets.Flowers(mode=mode, backend="pil")[0]
    assert isinstance(img, Image.Image) and img.mode == "RGB"


def test_flowers_extracts_once(files, tmp_path, monkeypatch):
    for name in ("102flowers.tgz", "imagelabels.mat", "setid.mat"):
        shutil.copy(files["dir"] / name, tmp_path / name)
    kwargs = {k: str(tmp_path / n) for k, n in (("data_file", "102flowers.tgz"),
                                                  ("label_file", "imagelabels.mat"),
                                                  ("setid_file", "setid.mat"))}
    ds = datasets.Flowers(**kwargs, mode="test", download=False, backend="cv2")
    assert ds.data_path == str(tmp_path / "102flowers")
    calls = []
    monkeypatch.setattr(paddle.utils.download, "extract_archive",
                        lambda *a: calls.append(a))
    ds2 = datasets.Flowers(**kwargs, mode="valid", download=False, backend="cv2")
    assert calls == [] and len(ds2) == 3


def test_flowers_errors(files, tmp_path):
    base = {"data_file": str(files["dir"] / "102flowers.tgz"),
            "label_file": str(files["dir"] / "imagelabels.mat"),
            "setid_file": str(files["dir"] / "setid.mat")}
    with pytest.raises(AssertionError, match="mode"):
        datasets.Flowers(**base, mode="eval")
    with pytest.raises(ValueError, match="has no variable 'labels'"):
        datasets.Flowers(**{**base, "label_file": base["setid_file"]})
    bad = tmp_path / "setid.mat"
    bad.write_bytes(mat_bytes({"trnid": np.array([[1, 99]], np.uint16),
                               "valid": np.array([[1]], np.uint16),
                               "tstid": np.array([[2]], np.uint16)}))
    with pytest.raises(ValueError, match="image number 99"):
        datasets.Flowers(**{**base, "setid_file": str(bad)}, mode="test")
    with pytest.raises(AssertionError, match="setid_file is not set"):
        datasets.Flowers(data_file=base["data_file"], label_file=base["label_file"],
                         download=False)


# ------------------------------------------------------------------------------------------------
# VOC2012


@pytest.mark.parametrize("mode,split", [("train", "trainval"), ("test", "train"),
                                        ("valid", "val")])
def test_voc_download_and_parse(hosted, home, files, mode, split):
    members = files["truth-voc"]
    ds = datasets.VOC2012(mode=mode, backend="cv2")
    assert ds.data_file == _cache(home, "voc2012", "VOCtrainval_11-May-2012.tar")
    assert len(ds) == len(VOC_SETS[split])
    for i, name in enumerate(VOC_SETS[split]):
        img, mask = ds[i]
        jpg = members[f"VOCdevkit/VOC2012/JPEGImages/{name}.jpg"]
        png = members[f"VOCdevkit/VOC2012/SegmentationClass/{name}.png"]
        np.testing.assert_array_equal(img, np.asarray(Image.open(io.BytesIO(jpg)), np.float32))
        np.testing.assert_array_equal(mask, np.asarray(Image.open(io.BytesIO(png)), np.float32))
        assert img.dtype == mask.dtype == np.float32 and img.ndim == 3 and mask.ndim == 2


def test_voc_pil_backend_compressed_tar_and_pickling(files):
    for name in ("VOCtrainval_11-May-2012.tar", "voc.tar.gz"):
        ds = datasets.VOC2012(data_file=str(files["dir"] / name), mode="valid", backend="pil",
                              download=False)
        img, mask = ds[0]
        assert isinstance(img, Image.Image) and img.mode == "RGB"
        assert isinstance(mask, Image.Image) and mask.mode == "P"
        clone = pickle.loads(pickle.dumps(ds))  # what a DataLoader worker receives
        np.testing.assert_array_equal(np.asarray(clone[0][1]), np.asarray(mask))


def test_voc_errors(files, tmp_path):
    with pytest.raises(AssertionError, match="mode"):
        datasets.VOC2012(mode="trainval")
    broken = tmp_path / "broken.tar"
    broken.write_bytes(tar_bytes({"VOCdevkit/VOC2012/ImageSets/Segmentation/val.txt": b"x1\n"},
                                 mode="w"))
    with pytest.raises(ValueError, match="does not hold"):
        datasets.VOC2012(data_file=str(broken), mode="valid")
    with pytest.raises(ValueError, match="has no 'VOCdevkit"):
        datasets.VOC2012(data_file=str(broken), mode="train")


# ------------------------------------------------------------------------------------------------
# DatasetFolder / ImageFolder


@pytest.fixture
def tree(tmp_path):
    rng = np.random.default_rng(3)
    root = tmp_path / "tree"
    layout = ["cat/b.png", "cat/a.jpg", "cat/sub/c.JPEG", "dog/z.bmp", "dog/notes.txt",
              "empty_class/.keep", "top.png"]
    for rel in layout:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if rel.lower().endswith((".png", ".jpg", ".jpeg", ".bmp")):
            fmt = {"jpg": "JPEG", "jpeg": "JPEG", "png": "PNG", "bmp": "BMP"}[
                rel.rsplit(".", 1)[1].lower()]
            Image.fromarray(rng.integers(0, 256, (5, 7, 3), dtype=np.uint8)).save(p, fmt)
        else:
            p.write_bytes(b"text")
    return root


def test_dataset_folder(tree):
    ds = datasets.DatasetFolder(str(tree))
    assert ds.classes == ["cat", "dog", "empty_class"]
    assert ds.class_to_idx == {"cat": 0, "dog": 1, "empty_class": 2}
    rel = [(os.path.relpath(p, tree), t) for p, t in ds.samples]
    assert rel == [("cat/a.jpg", 0), ("cat/b.png", 0), ("cat/sub/c.JPEG", 0), ("dog/z.bmp", 1)]
    assert ds.targets == [0, 0, 0, 1] and len(ds) == 4
    img, target = ds[3]
    assert isinstance(img, Image.Image) and img.mode == "RGB" and target == 1
    assert type(target) is int


def test_dataset_folder_filters_and_loader(tree):
    ds = datasets.DatasetFolder(str(tree), extensions=(".txt",), loader=lambda p: open(p).read())
    assert [os.path.basename(p) for p, _ in ds.samples] == ["notes.txt"]
    assert ds[0] == ("text", 1)
    ds = datasets.DatasetFolder(str(tree), is_valid_file=lambda p: p.endswith("b.png"),
                                transform=lambda im: np.asarray(im).shape)
    assert [os.path.basename(p) for p, _ in ds.samples] == ["b.png"]
    assert ds[0] == ((5, 7, 3), 0)
    both = datasets.DatasetFolder(str(tree), extensions=[".png", ".bmp"],
                                  is_valid_file=lambda p: "z" in p)
    assert [os.path.basename(p) for p, _ in both.samples] == ["z.bmp"]
    with pytest.raises(RuntimeError, match="Found 0 files"):
        datasets.DatasetFolder(str(tree), extensions=(".gif",))
    with pytest.raises(TypeError, match="list or tuple"):
        datasets.DatasetFolder(str(tree), extensions=".png")
    with pytest.raises(FileNotFoundError):
        datasets.DatasetFolder(str(tree / "missing"))


def test_image_folder(tree):
    ds = datasets.ImageFolder(str(tree))
    assert [os.path.relpath(p, tree) for p in ds.samples] == [
        "top.png", "cat/a.jpg", "cat/b.png", "cat/sub/c.JPEG", "dog/z.bmp"]
    sample = ds[0]
    assert isinstance(sample, list) and len(sample) == 1
    assert isinstance(sample[0], Image.Image) and sample[0].size == (7, 5)
    ds = datasets.ImageFolder(str(tree), loader=lambda p: p, transform=os.path.basename)
    assert ds[1] == ["a.jpg"]
    with pytest.raises(RuntimeError, match="Found 0 files"):
        datasets.ImageFolder(str(tree), extensions=(".gif",))


# ------------------------------------------------------------------------------------------------
# the MAT-file reader


def test_mat_reader_variants():
    vals = {"labels": np.arange(1, 9, dtype=np.uint8).reshape(1, 8),
            "m": np.arange(6, dtype=np.float64).reshape(2, 3) / 4,
            "ids": np.array([[3, 1, 2]], dtype=np.uint16),
            "col": np.array([[-1], [5]], dtype=np.int32),
            "s": np.array([[1.5, -2.25]], dtype=np.float32),
            "txt": np.array(["ab", "cd"]),
            "flag": np.array([[True, False, True]]),
            "empty": np.zeros((0, 3))}
    for compress in (False, True):
        for big in (False, True):
            got = _matlab.loadmat(io.BytesIO(mat_bytes(vals, compress, big)))
            assert sorted(got) == sorted(vals)
            for k, v in vals.items():
                if k == "txt":
                    np.testing.assert_array_equal(got[k], np.array(["ab", "cd"]))
                    continue
                expected = v.astype(np.uint8) if v.dtype == bool else v
                assert got[k].dtype == expected.dtype and got[k].shape == expected.shape, k
                np.testing.assert_array_equal(got[k], expected)
    # a double array stored as uint8 (MATLAB shrinks storage) comes back as double
    got = _matlab.loadmat(io.BytesIO(mat_bytes({"d": np.array([[1.0, 200.0]])},
                                               storage={"d": "u1"})))
    assert got["d"].dtype == np.float64
    np.testing.assert_array_equal(got["d"], [[1.0, 200.0]])


def test_mat_reader_matches_scipy(tmp_path):
    sio = pytest.importorskip("scipy.io")
    vals = {"labels": np.arange(1, 103, dtype=np.uint8)[None], "trnid": np.arange(
        5, dtype=np.uint16)[None], "x": np.linspace(0, 1, 12).reshape(3, 4),
        "z": np.array([[1 + 2j, -3j]]), "i8": np.array([[-7, 8]], dtype=np.int8),
        "u64": np.array([[2**40]], dtype=np.uint64), "name": "flowers"}
    for compress in (False, True):
        path = tmp_path / f"v{compress}.mat"
        sio.savemat(str(path), vals, do_compression=compress)
        ours, ref = _matlab.loadmat(str(path)), sio.loadmat(str(path))
        assert sorted(ours) == sorted(k for k in ref if not k.startswith("__"))
        for k in ours:
            assert ours[k].dtype == ref[k].dtype and ours[k].shape == ref[k].shape, k
            np.testing.assert_array_equal(ours[k], ref[k])
        # and scipy reads what the test writer produces
        ref = sio.loadmat(io.BytesIO(mat_bytes({"a": vals["x"], "b": vals["trnid"]}, compress)))
        np.testing.assert_array_equal(ref["a"], vals["x"])


def test_mat_reader_errors(tmp_path):
    with pytest.raises(ValueError, match="not a MATLAB 5.0"):
        _matlab.loadmat(io.BytesIO(b"hello" * 40))
    data = mat_bytes({"a": np.arange(50.0)[None]})
    with pytest.raises(ValueError, match="damaged or truncated"):
        _matlab.loadmat(io.BytesIO(data[:200]))
    # a cell array (class 1)
    head = (_element(6, struct.pack("<II", 1, 0), "<", False)
            + _element(5, np.array([1, 1], "<i4").tobytes(), "<", False)
            + _element(1, b"c", "<"))
    cell = mat_bytes({})[:128] + _element(14, head, "<", False)
    with pytest.raises(ValueError, match="'c' is a MATLAB cell array"):
        _matlab.loadmat(io.BytesIO(cell))


# ------------------------------------------------------------------------------------------------
# parity with Paddle 2.6.2: the same local files through both


def _same_sample(ours, theirs):
    assert type(ours) in (tuple, list) and len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if isinstance(b, Image.Image):
            assert isinstance(a, Image.Image) and a.mode == b.mode and a.size == b.size
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        elif isinstance(b, np.ndarray):
            assert isinstance(a, np.ndarray)
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_array_equal(a, b)
        else:
            assert type(a) is type(b) and a == b


@pytest.mark.parity
@pytest.mark.parametrize("backend", ["pil", "cv2"])
@pytest.mark.parametrize("name", ["MNIST", "FashionMNIST"])
def test_parity_mnist(pd, files, backend, name):
    kw = dict(image_path=str(files["dir"] / "train-images-idx3-ubyte.gz"),
              label_path=str(files["dir"] / "train-labels-idx1-ubyte.gz"), mode="train",
              download=False, backend=backend)
    ours, theirs = getattr(datasets, name)(**kw), getattr(pd.vision.datasets, name)(**kw)
    assert len(ours) == len(theirs) == 200
    for i in range(0, 200, 13):
        _same_sample(ours[i], theirs[i])


@pytest.mark.parity
@pytest.mark.parametrize("backend", ["pil", "cv2"])
@pytest.mark.parametrize("name,file", [("Cifar10", "cifar-10-python.tar.gz"),
                                       ("Cifar100", "cifar-100-python.tar.gz")])
@pytest.mark.parametrize("mode", ["train", "test"])
def test_parity_cifar(pd, files, backend, name, file, mode):
    kw = dict(data_file=str(files["dir"] / file), mode=mode, download=False, backend=backend)
    ours, theirs = getattr(datasets, name)(**kw), getattr(pd.vision.datasets, name)(**kw)
    assert len(ours) == len(theirs)
    for i in range(len(ours)):
        _same_sample(ours[i], theirs[i])


@pytest.mark.parity
@pytest.mark.parametrize("backend", ["pil", "cv2"])
@pytest.mark.parametrize("mode", ["train", "valid", "test"])
def test_parity_flowers(pd, files, tmp_path, backend, mode):
    pytest.importorskip("scipy.io")  # Paddle reads the .mat files with scipy
    kws = []
    for who in ("ours", "theirs"):
        d = tmp_path / who  # separate copies: each extracts its own tarball
        d.mkdir()
        for n in ("102flowers.tgz", "imagelabels.mat", "setid.mat"):
            shutil.copy(files["dir"] / n, d / n)
        kws.append(dict(data_file=str(d / "102flowers.tgz"),
                        label_file=str(d / "imagelabels.mat"), setid_file=str(d / "setid.mat"),
                        mode=mode, download=False, backend=backend))
    ours, theirs = datasets.Flowers(**kws[0]), pd.vision.datasets.Flowers(**kws[1])
    assert len(ours) == len(theirs)
    for i in range(len(ours)):
        _same_sample(ours[i], theirs[i])


@pytest.mark.parity
@pytest.mark.parametrize("backend", ["pil", "cv2"])
@pytest.mark.parametrize("mode", ["train", "valid", "test"])
def test_parity_voc(pd, files, backend, mode):
    kw = dict(data_file=str(files["dir"] / "VOCtrainval_11-May-2012.tar"), mode=mode,
              download=False, backend=backend)
    ours, theirs = datasets.VOC2012(**kw), pd.vision.datasets.VOC2012(**kw)
    assert len(ours) == len(theirs)
    for i in range(len(ours)):
        _same_sample(ours[i], theirs[i])


@pytest.mark.parity
def test_parity_folders(pd, tree):
    ours, theirs = datasets.DatasetFolder(str(tree)), pd.vision.datasets.DatasetFolder(str(tree))
    assert ours.classes == theirs.classes and ours.class_to_idx == theirs.class_to_idx
    assert ours.samples == theirs.samples and ours.targets == theirs.targets
    for i in range(len(ours)):
        _same_sample(ours[i], theirs[i])
    ours, theirs = datasets.ImageFolder(str(tree)), pd.vision.datasets.ImageFolder(str(tree))
    assert ours.samples == theirs.samples
    for i in range(len(ours)):
        _same_sample(ours[i], theirs[i])


@pytest.mark.parity
def test_parity_signatures(pd):
    import inspect

    for name in datasets.__all__:
        ours = inspect.signature(getattr(datasets, name))
        theirs = inspect.signature(getattr(pd.vision.datasets, name))
        assert [(p.name, p.default) for p in ours.parameters.values()] == \
            [(p.name, p.default) for p in theirs.parameters.values()], name


# ------------------------------------------------------------------------------------------------
# edge cases


def test_empty_idx_files(tmp_path):
    img, lab = tmp_path / "i.gz", tmp_path / "l.gz"
    img.write_bytes(idx_bytes(np.zeros((0, 28, 28), np.uint8)))
    lab.write_bytes(idx_bytes(np.zeros((0,), np.uint8)))
    ds = datasets.MNIST(image_path=str(img), label_path=str(lab), mode="test", backend="cv2")
    assert len(ds) == 0
    with pytest.raises(IndexError):
        ds[0]


def test_no_pil_deprecation_warnings(hosted):
    """Reading samples with the PIL backend raises no (PIL) DeprecationWarning."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        datasets.MNIST(mode="test", backend="pil")[0]
        datasets.Cifar10(mode="test", backend="pil")[0]
        datasets.VOC2012(mode="valid", backend="pil")[0]


def test_voc_in_dataloader_workers(files):
    ds = datasets.VOC2012(data_file=str(files["dir"] / "VOCtrainval_11-May-2012.tar"),
                          mode="train", backend="cv2", transform=lambda a: a[:8, :8])
    ds[0]  # opens a handle in this process; workers must not share its offset
    batches = list(paddle.io.DataLoader(ds, batch_size=1, num_workers=2))
    assert len(batches) == 3
    for i, (img, mask) in enumerate(batches):
        np.testing.assert_array_equal(img.numpy()[0], ds[i][0])
        np.testing.assert_array_equal(mask.numpy()[0], ds[i][1])


def test_flowers_read_only_tarball_dir_falls_back_to_cache(files, home, tmp_path, monkeypatch):
    real = paddle.utils.download.extract_archive
    src = tmp_path / "ro"
    src.mkdir()
    for name in ("102flowers.tgz", "imagelabels.mat", "setid.mat"):
        shutil.copy(files["dir"] / name, src / name)

    def no_write_beside_the_tarball(archive, dest):
        if not dest.startswith(str(home)):
            raise PermissionError(f"[Errno 13] Permission denied: {dest!r}")
        return real(archive, dest)

    monkeypatch.setattr(paddle.utils.download, "extract_archive", no_write_beside_the_tarball)
    ds = datasets.Flowers(data_file=str(src / "102flowers.tgz"),
                          label_file=str(src / "imagelabels.mat"),
                          setid_file=str(src / "setid.mat"), mode="valid", backend="cv2")
    assert ds.data_path == _cache(home, "flowers", "102flowers")
    assert not (src / "102flowers").exists()
    assert ds[0][0].ndim == 3
