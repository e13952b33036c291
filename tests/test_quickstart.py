"""The README's main job (quickstart.py): MNIST-format digits built offline, LeNet trained with
Model.fit past 95% test accuracy, a checkpoint saved and reloaded, summary printed."""

from __future__ import annotations

import gzip
import importlib.util
import os
import pathlib
import re
import struct
import subprocess
import sys
import sysconfig

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def qs():
    spec = importlib.util.spec_from_file_location("quickstart", ROOT / "quickstart.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_templates_are_the_ten_digits(qs):
    labels, templates = qs.render_templates(sizes=(36,), strokes=(0, 2))
    assert labels.tolist() == list(range(10)) * 2
    assert templates.shape == (20, qs.TEMPLATE, qs.TEMPLATE) and templates.dtype == np.float32
    assert (templates.max(axis=(1, 2)) > 200).all()  # every glyph has ink
    assert not np.allclose(templates[1], templates[7])


def test_synthesized_digits_are_random_and_reproducible(qs):
    images, labels = qs.synthesize_digits(300, seed=3, chunk=128)
    again, labels2 = qs.synthesize_digits(300, seed=3, chunk=128)
    other, _ = qs.synthesize_digits(300, seed=4, chunk=128)
    assert images.shape == (300, 28, 28) and images.dtype == np.uint8
    assert labels.dtype == np.uint8 and set(labels.tolist()) == set(range(10))
    np.testing.assert_array_equal(images, again)
    np.testing.assert_array_equal(labels, labels2)
    assert not np.array_equal(images, other)
    # a digit in the middle, a dark border, and noise: no two images are the same
    assert images[:, 10:18, 10:18].mean() > images[:, :2, :].mean()
    assert len({im.tobytes() for im in images}) == 300


def test_idx_files_read_back_through_vision_mnist(qs, tmp_path):
    paths = qs.build_dataset(str(tmp_path), train_samples=50, test_samples=20, seed=1)
    with gzip.open(paths["train"][0], "rb") as f:
        magic, n, rows, cols = struct.unpack(">IIII", f.read(16))
    assert (magic, n, rows, cols) == (2051, 50, 28, 28)
    with gzip.open(paths["test"][1], "rb") as f:
        assert struct.unpack(">II", f.read(8)) == (2049, 20)

    from paddle_hl.vision.datasets import MNIST

    images, labels = qs.synthesize_digits(50, seed=1)
    train = MNIST(*paths["train"], mode="train")
    assert len(train) == 50
    np.testing.assert_array_equal(train.images, images)
    np.testing.assert_array_equal(train.labels, labels)
    img, label = train[0]
    assert img.size == (28, 28) and label.tolist() == [int(labels[0])]
    assert len(MNIST(*paths["test"], mode="test")) == 20


def test_ascii_digits(qs):
    images, labels = qs.synthesize_digits(3, seed=0)
    text = qs.ascii_digits(images, [str(v) for v in labels]).splitlines()
    assert len(text) == 15
    assert all(len(line) == 3 * 14 + 2 * 3 for line in text[1:])
    assert set("".join(text[1:])) - set(qs._SHADES) == set()


def test_main_small_run_end_to_end(qs, tmp_path, capsys):
    rc = qs.main(["--train-samples", "512", "--test-samples", "128", "--epochs", "1",
                  "--batch-size", "64", "--min-accuracy", "0", "--workdir", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0
    assert "test accuracy" in out and "reloaded: test accuracy" in out
    assert "predicted (true)" in out
    assert "Total params: 61,610" in out
    assert (tmp_path / "checkpoint" / "lenet.pdparams").exists()
    assert (tmp_path / "checkpoint" / "lenet.pdopt").exists()
    assert (tmp_path / "mnist" / "t10k-labels-idx1-ubyte.gz").exists()


def test_main_fails_below_min_accuracy(qs, tmp_path, capsys):
    rc = qs.main(["--train-samples", "64", "--test-samples", "64", "--epochs", "1",
                  "--min-accuracy", "1.01", "--workdir", str(tmp_path)])
    assert rc == 1
    assert "is below 1.01" in capsys.readouterr().err


@pytest.mark.slow
def test_quickstart_reaches_95_percent():
    r = subprocess.run([sys.executable, str(ROOT / "quickstart.py")], capture_output=True,
                       text=True, timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    acc = float(re.search(r"test accuracy ([0-9.]+)\n", r.stdout).group(1))
    assert acc > 0.95
    reloaded = float(re.search(r"reloaded: test accuracy ([0-9.]+)", r.stdout).group(1))
    assert reloaded == acc
    assert "Total params: 61,610" in r.stdout


@pytest.mark.slow
def test_quickstart_runs_from_the_repository_root_on_a_regular_install(tmp_path):
    """The README's first command installs paddle_hl (not editable) and runs quickstart.py from
    the repository root, where the source folder paddle_hl/ sits first on sys.path: the script
    must import the installed package, whose installation maps the domain folders in."""
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                    "--target", str(site), str(ROOT)],
                   check=True, capture_output=True, timeout=300)
    # -S: no site module, so no editable-install finder can map the domains back in; the
    # dependencies come from this environment's site-packages, after the regular install
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site),
                                                       sysconfig.get_paths()["purelib"]]))
    r = subprocess.run([sys.executable, "-S", "quickstart.py", "--train-samples", "640",
                        "--test-samples", "200", "--epochs", "1", "--min-accuracy", "0"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "test accuracy" in r.stdout
