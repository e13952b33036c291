"""DataLoader throughput: images per second for a dataset that decodes JPEG files with Pillow and
augments them (random resized crop to 224x224, horizontal flip, normalise, HWC->CHW), with
num_workers 0 and 2, side by side with PyTorch's DataLoader on the same dataset.

Run: python benchmarks/dataloader.py [--images 256] [--batch 32] [--rounds 5]

Each figure is the median of the timed epochs; the loaders take turns epoch by epoch.
"""

from __future__ import annotations

import pathlib
import sys

# run from a checkout without installing: python benchmarks/<name>.py
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import argparse
import pathlib
import tempfile
import time

import numpy as np
from PIL import Image

MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32) * 255
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32) * 255


def make_images(folder: pathlib.Path, n: int, seed=0):
    rng = np.random.default_rng(seed)
    paths = []
    for i in range(n):
        arr = rng.integers(0, 255, size=(256 + i % 32, 320, 3), dtype=np.uint8)
        p = folder / f"img_{i:04d}.jpg"
        Image.fromarray(arr).save(p, quality=90)
        paths.append(p)
    return paths


class JpegDataset:
    """Decode + augment, written once and used by both loaders (map-style protocol)."""

    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        rng = np.random.default_rng(i)
        img = Image.open(self.paths[i]).convert("RGB")
        w, h = img.size
        s = rng.uniform(0.5, 1.0)
        cw, ch = int(w * s), int(h * s)
        x0, y0 = rng.integers(0, w - cw + 1), rng.integers(0, h - ch + 1)
        img = img.resize((224, 224), Image.BILINEAR, box=(x0, y0, x0 + cw, y0 + ch))
        a = np.asarray(img, dtype=np.float32)
        if rng.random() < 0.5:
            a = a[:, ::-1]
        a = (a - MEAN) / STD
        return np.ascontiguousarray(a.transpose(2, 0, 1)), np.int64(i % 10)


def _epoch_rate(make_loader):
    t0 = time.perf_counter()
    seen = 0
    for x, _y in make_loader():
        seen += x.shape[0]
    return seen / (time.perf_counter() - t0)


def _rates(makers, rounds=5):
    """Median images/s per loader over ``rounds`` epochs, the loaders taking turns, so that
    both see the same machine load (a warm-up epoch each first: page cache, imports)."""
    for mk in makers:
        _epoch_rate(mk)
    runs = [[] for _ in makers]
    for _ in range(rounds):
        for r, mk in zip(runs, makers):
            r.append(_epoch_rate(mk))
    return [float(np.median(r)) for r in runs]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--images", type=int, default=256)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=5, help="timed epochs per loader")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as d:
        paths = make_images(pathlib.Path(d), args.images)
        import paddle_hl

        class HlDataset(JpegDataset, paddle_hl.io.Dataset):
            pass

        rows = []
        torch = None
        try:
            import torch
            import torch.utils.data as tud

            class TorchDataset(JpegDataset, tud.Dataset):
                pass
        except ImportError:
            print("torch not installed: pip install torch==2.13.0")
        for nw in (0, 2):
            makers = [lambda nw=nw: paddle_hl.io.DataLoader(
                HlDataset(paths), batch_size=args.batch, num_workers=nw)]
            if torch is not None:
                makers.append(lambda nw=nw: tud.DataLoader(
                    TorchDataset(paths), batch_size=args.batch, num_workers=nw))
            rates = _rates(makers, args.rounds)
            rows.append((nw, rates[0], rates[1] if len(rates) > 1 else None))
    print(f"{'num_workers':>11}{'paddle_hl img/s':>17}{'torch img/s':>13}{'ratio':>8}")
    for nw, hl, th in rows:
        ratio = f"{hl / th:.2f}x" if th else "-"
        th_s = f"{th:.0f}" if th else "-"
        print(f"{nw:>11}{hl:>17.0f}{th_s:>13}{ratio:>8}")


if __name__ == "__main__":
    main()
