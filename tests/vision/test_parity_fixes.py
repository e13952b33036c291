"""DatasetFolder/ImageFolder filtering, nms top_k and zoo models in train mode, against
Paddle 2.6.2."""

from __future__ import annotations

import os

import numpy as np
import pytest
from PIL import Image

import paddle_hl

FILES = ["cat/a.png", "cat/b.JPG", "cat/c.txt", "cat/sub/d.png", "dog/e.jpeg", "dog/f.npy",
         "dog/g.bmp"]


@pytest.fixture()
def tree(tmp_path):
    for c in ("cat/sub", "dog", "empty"):
        os.makedirs(tmp_path / c, exist_ok=True)
    for i, f in enumerate(FILES):
        p = tmp_path / f
        if f.endswith(".npy"):
            np.save(p, np.zeros(3))
        elif f.endswith(".txt"):
            p.write_text("x")
        else:
            Image.fromarray(np.full((4, 4, 3), i * 20, np.uint8)).save(p, format="PNG")
    return tmp_path


def _folder(lib, root, cls, **kw):
    ds = getattr(lib.vision.datasets, cls)(str(root), loader=lambda p: p, **kw)
    paths = [s[0] if isinstance(s, (list, tuple)) else s for s in ds.samples]
    out = [os.path.relpath(p, root) for p in paths]
    if cls == "DatasetFolder":
        out = list(zip(out, [s[1] for s in ds.samples]))
        return out, ds.classes, ds.class_to_idx, len(ds)
    return out, len(ds)


@pytest.mark.parity
@pytest.mark.parametrize("cls", ["DatasetFolder", "ImageFolder"])
@pytest.mark.parametrize("kw", [{}, {"extensions": (".png",)}, {"extensions": (".txt",)},
                                {"extensions": (".png",), "is_valid_file": "all"}],
                         ids=["default", "png", "txt", "png+all"])
def test_folder_listing_parity(pd, tree, cls, kw):
    kw = dict(kw)
    if kw.get("is_valid_file") == "all":
        kw["is_valid_file"] = lambda p: True
    assert _folder(paddle_hl, tree, cls, **kw) == _folder(pd, tree, cls, **kw)


@pytest.mark.parity
@pytest.mark.parametrize("cls", ["DatasetFolder", "ImageFolder"])
def test_folder_is_valid_file_is_applied(pd, tree, cls):
    # the documented filter is applied; Paddle 2.6.2 never calls it and keeps every image
    def only_dogs(p):
        return os.sep + "dog" + os.sep in p

    ours = _folder(paddle_hl, tree, cls, is_valid_file=only_dogs)
    theirs = _folder(pd, tree, cls, is_valid_file=only_dogs)
    default = _folder(pd, tree, cls)
    assert theirs == default  # Paddle ignored the filter
    names = [e[0] if isinstance(e, tuple) else e for e in ours[0]]
    assert names == ["dog/e.jpeg", "dog/f.npy", "dog/g.bmp"]
    if cls == "DatasetFolder":
        assert ours[1:3] == theirs[1:3]  # classes are still every folder, as in Paddle
        assert [e[1] for e in ours[0]] == [1, 1, 1]


def _boxes():
    rng = np.random.RandomState(0)
    boxes = rng.rand(20, 4).astype("float32") * 50
    boxes[:, 2:] += boxes[:, :2] + 5
    return boxes, rng.rand(20).astype("float32"), rng.randint(0, 3, 20).astype("int64")


@pytest.mark.parity
@pytest.mark.parametrize("kw", [
    {}, {"scores": 1}, {"scores": 1, "top_k": 50}, {"scores": 1, "iou_threshold": 0.1},
    {"scores": 1, "category_idxs": 1, "categories": [0, 1, 2]},
    {"scores": 1, "category_idxs": 1, "categories": [0, 1, 2], "top_k": 4},
    {"scores": 1, "category_idxs": 1, "categories": [0, 1], "top_k": 4}, {"top_k": 3}],
    ids=["plain", "scores", "topk-large", "iou", "cats", "cats-topk", "some-cats-topk",
         "topk-no-scores"])
def test_nms_parity(pd, kw):
    boxes, scores, cats = _boxes()
    out = []
    for lib in (pd, paddle_hl):
        k = dict(kw)
        if "scores" in k:
            k["scores"] = lib.to_tensor(scores)
        if "category_idxs" in k:
            k["category_idxs"] = lib.to_tensor(cats)
        out.append(lib.vision.ops.nms(lib.to_tensor(boxes), **k).numpy().tolist())
    assert out[1] == out[0]


@pytest.mark.parity
@pytest.mark.parametrize("top_k", [1, 3, 5])
def test_nms_top_k_without_categories(pd, top_k):
    # the documented meaning: at most top_k boxes; Paddle 2.6.2 ignores top_k here and returns
    # every kept box (its leading top_k entries are ours)
    boxes, scores, _ = _boxes()
    ours = paddle_hl.vision.ops.nms(paddle_hl.to_tensor(boxes), 0.3,
                                    paddle_hl.to_tensor(scores), top_k=top_k).numpy().tolist()
    theirs = pd.vision.ops.nms(pd.to_tensor(boxes), 0.3, pd.to_tensor(scores),
                               top_k=top_k).numpy().tolist()
    assert len(ours) == top_k < len(theirs)
    assert ours == theirs[:top_k]


@pytest.mark.parity
@pytest.mark.slow
@pytest.mark.parametrize(("name", "size"), [("resnet18", 64), ("mobilenet_v2", 64)])
def test_zoo_model_train_mode_parity(pd, name, size):
    # batch statistics, biased batch variance for normalizing, momentum 0.9 running stats,
    # epsilon 1e-5: outputs, running stats and the eval-mode outputs that follow agree
    theirs = getattr(pd.vision.models, name)(num_classes=10)
    ours = getattr(paddle_hl.vision.models, name)(num_classes=10)
    ours.set_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    for m in (theirs, ours):
        for layer in m.sublayers():
            if type(layer).__name__ == "Dropout":
                layer.p = 0.0  # random masks cannot agree
    x = np.random.RandomState(0).rand(4, 3, size, size).astype("float32")
    res = {}
    for lib, m in ((pd, theirs), (paddle_hl, ours)):
        m.train()
        y = m(lib.to_tensor(x)).numpy()
        y2 = m(lib.to_tensor(x * 2 - 0.5)).numpy()
        stats = {k: v.numpy() for k, v in m.state_dict().items() if k.endswith(
            ("_mean", "_variance"))}
        m.eval()
        res[lib.__name__] = (y, y2, stats, m(lib.to_tensor(x)).numpy())
    (a, a2, sa, ea), (b, b2, sb, eb) = res["paddle"], res["paddle_hl"]
    for p, h in ((a, b), (a2, b2), (ea, eb)):
        np.testing.assert_allclose(h, p, rtol=0, atol=2e-4 * np.abs(p).max())
    assert sa.keys() == sb.keys()
    for k in sa:
        np.testing.assert_allclose(sb[k], sa[k], rtol=1e-4, atol=1e-5, err_msg=k)
