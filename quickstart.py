"""paddle_hl quick start: train LeNet on MNIST-format digits, offline, with the high-level API.

Run: python quickstart.py          (about a minute on 2 CPU cores, no internet needed)

1. Builds an MNIST-format dataset on the spot: the ten digits are drawn with Pillow's default
   font, then warped (random position, scale, rotation, slant, thickness, contrast and noise)
   into 28x28 grey images, written as the gzip-compressed IDX files MNIST ships as.
2. Reads them back with ``paddle.vision.datasets.MNIST(image_path=..., label_path=...)``.
3. Trains ``paddle.vision.models.LeNet`` with ``paddle.Model.fit``, evaluates it, predicts a few
   digits (printed as text pictures), saves the checkpoint, reloads it into a fresh model and
   checks that it scores the same, and prints ``paddle.summary``.

Options: ``--train-samples``, ``--test-samples``, ``--epochs``, ``--batch-size``, ``--workdir``
(keep the dataset and checkpoint there instead of a temporary folder), ``--min-accuracy`` (exit
status 1 below it; default 0.95), ``--seed``.
"""

from __future__ import annotations

import argparse
import gzip
import os
import struct
import sys
import tempfile
import time

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

# Run as a script, Python puts this file's folder (the repository root) first on sys.path, and
# the source folder paddle_hl/ there would shadow the installed package: the installation is
# what maps the domain folders (vision/, audio/, ...) in as paddle_hl.vision and so on.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import paddle_hl as paddle  # noqa: E402  (after the path fix above)

TEMPLATE = 64  # side of the canvas each glyph is drawn on before warping
SIDE = 28  # MNIST's image side
_SHADES = " .:-=+*#%@"


def _default_font(size):
    """Pillow's bundled default font at ``size`` pixels (older Pillow: its fixed bitmap font)."""
    try:
        return ImageFont.load_default(size=size), True
    except TypeError:  # Pillow < 10.1 has a single bitmap font without sizes
        return ImageFont.load_default(), False


def render_templates(sizes=(36, 44), strokes=(0, 1, 2)):
    """Draw each digit with Pillow's default font in a few sizes and stroke widths.

    Args:
        sizes (tuple[int]): font sizes in pixels.
        strokes (tuple[int]): stroke widths (thicker and thinner pen).

    Returns:
        tuple[np.ndarray, np.ndarray]: ``labels`` (int64 [K]) and ``templates`` (float32
        [K, 64, 64], white glyph on black, slightly blurred so that shrinking it does not alias).
    """
    labels, images = [], []
    for size in sizes:
        font, scalable = _default_font(size)
        for stroke in strokes:
            for digit in range(10):
                text = str(digit)
                img = Image.new("L", (TEMPLATE, TEMPLATE), 0)
                draw = ImageDraw.Draw(img)
                left, top, right, bottom = draw.textbbox((0, 0), text, font=font,
                                                         stroke_width=stroke)
                xy = ((TEMPLATE - (right - left)) / 2 - left,
                      (TEMPLATE - (bottom - top)) / 2 - top)
                draw.text(xy, text, fill=255, font=font, stroke_width=stroke, stroke_fill=255)
                if not scalable:  # the bitmap font is ~11 px high: enlarge it like a big font
                    img = img.resize((TEMPLATE * 3, TEMPLATE * 3), Image.BILINEAR).crop(
                        (TEMPLATE, TEMPLATE, 2 * TEMPLATE, 2 * TEMPLATE))
                img = img.filter(ImageFilter.GaussianBlur(1.0))
                labels.append(digit)
                images.append(np.asarray(img, dtype=np.float32))
    return np.asarray(labels, dtype=np.int64), np.stack(images)


def _glyph_geometry(templates):
    """Centre of mass (cy, cx) and ink height of every template, vectorised."""
    k, h, w = templates.shape
    mass = templates.sum(axis=(1, 2))
    cy = (templates.sum(axis=2) * np.arange(h, dtype=np.float32)).sum(axis=1) / mass
    cx = (templates.sum(axis=1) * np.arange(w, dtype=np.float32)).sum(axis=1) / mass
    rows = templates.max(axis=2) > 64
    top = rows.argmax(axis=1)
    bottom = h - rows[:, ::-1].argmax(axis=1)
    return cy, cx, (bottom - top).astype(np.float32)


def synthesize_digits(n, seed=0, templates=None, chunk=4096):
    """Random MNIST-like digit images.

    Each sample picks a template and an affine map (ink height 15-22 px, rotation +-15 degrees,
    slant, aspect, shift +-3 px); the 28x28 image is sampled from the template with bilinear
    interpolation for all samples of a chunk at once, then gets a random contrast and Gaussian
    noise.

    Args:
        n (int): number of images.
        seed (int): random seed (the same seed gives the same images).
        templates (tuple, optional): ``render_templates()`` output (drawn when None).
        chunk (int): samples warped per vectorised batch (bounds the memory).

    Returns:
        tuple[np.ndarray, np.ndarray]: ``images`` (uint8 [n, 28, 28]) and ``labels``
        (uint8 [n]).
    """
    labels, tmpl = templates if templates is not None else render_templates()
    rng = np.random.default_rng(seed)
    k_all, h, w = tmpl.shape
    cy, cx, ink = _glyph_geometry(tmpl)
    # a one-pixel black border lets clipped coordinates read zeros outside the canvas
    flat = np.pad(tmpl, ((0, 0), (1, 1), (1, 1))).reshape(-1)
    ph, pw = h + 2, w + 2
    grid = np.arange(SIDE, dtype=np.float32) - (SIDE - 1) / 2
    images = np.empty((n, SIDE, SIDE), dtype=np.uint8)
    picks = np.empty(n, dtype=np.int64)
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        k = rng.integers(0, k_all, m)
        scale = (ink[k] / rng.uniform(15, 22, m)).astype(np.float32)  # template px per image px
        angle = np.deg2rad(rng.uniform(-15, 15, m)).astype(np.float32)
        slant = rng.uniform(-0.25, 0.25, m).astype(np.float32)
        aspect = rng.uniform(0.8, 1.2, m).astype(np.float32)
        cos, sin = np.cos(angle), np.sin(angle)
        # image -> template map: scale * rotation * slant * aspect
        a11, a12 = scale * cos * aspect, scale * (cos * slant - sin)
        a21, a22 = scale * sin * aspect, scale * (sin * slant + cos)
        u = grid[None, None, :] - rng.uniform(-3, 3, (m, 1, 1)).astype(np.float32)
        v = grid[None, :, None] - rng.uniform(-3, 3, (m, 1, 1)).astype(np.float32)
        sx = a11[:, None, None] * u + a12[:, None, None] * v + cx[k][:, None, None] + 1
        sy = a21[:, None, None] * u + a22[:, None, None] * v + cy[k][:, None, None] + 1
        x0 = np.clip(np.floor(sx), 0, pw - 2)
        y0 = np.clip(np.floor(sy), 0, ph - 2)
        fx = np.clip(sx - x0, 0, 1)
        fy = np.clip(sy - y0, 0, 1)
        idx = (k[:, None, None] * (ph * pw) + y0.astype(np.int64) * pw + x0.astype(np.int64))
        top = flat[idx] * (1 - fx) + flat[idx + 1] * fx
        bottom = flat[idx + pw] * (1 - fx) + flat[idx + pw + 1] * fx
        out = top * (1 - fy) + bottom * fy
        out *= rng.uniform(0.7, 1.1, (m, 1, 1)).astype(np.float32)
        noise = rng.standard_normal(out.shape, dtype=np.float32)
        out += noise * rng.uniform(0, 30, (m, 1, 1)).astype(np.float32)
        images[start:start + m] = np.clip(out, 0, 255).astype(np.uint8)
        picks[start:start + m] = k
    return images, labels[picks].astype(np.uint8)


def write_idx(path, array):
    """Write ``array`` (uint8) as a gzip-compressed IDX file, the format MNIST ships in.

    Args:
        path (str): destination, e.g. ``train-images-idx3-ubyte.gz``.
        array (np.ndarray): uint8 images [n, rows, cols] (magic 2051) or labels [n] (2049).
    """
    array = np.ascontiguousarray(array, dtype=np.uint8)
    magic = 0x0800 | array.ndim  # 0x08: unsigned byte data, then the number of dimensions
    header = struct.pack(">I" + "I" * array.ndim, magic, *array.shape)
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(header)
        f.write(array.tobytes())


def build_dataset(root, train_samples=24000, test_samples=2000, seed=0):
    """Render the digits and write MNIST's four IDX files under ``root``.

    Args:
        root (str): output folder (created if needed).
        train_samples (int): number of training images.
        test_samples (int): number of test images (drawn with a different seed).
        seed (int): random seed.

    Returns:
        dict: ``{'train': (image_path, label_path), 'test': (image_path, label_path)}``.
    """
    os.makedirs(root, exist_ok=True)
    templates = render_templates()
    paths = {}
    for mode, prefix, n, s in (("train", "train", train_samples, seed),
                               ("test", "t10k", test_samples, seed + 1)):
        images, labels = synthesize_digits(n, s, templates)
        image_path = os.path.join(root, f"{prefix}-images-idx3-ubyte.gz")
        label_path = os.path.join(root, f"{prefix}-labels-idx1-ubyte.gz")
        write_idx(image_path, images)
        write_idx(label_path, labels)
        paths[mode] = (image_path, label_path)
    return paths


def ascii_digits(images, captions):
    """Text pictures of 28x28 images side by side (2x2 pixels per character)."""
    small = np.asarray(images, dtype=np.float32).reshape(len(images), SIDE // 2, 2, SIDE // 2, 2)
    small = small.mean(axis=(2, 4))
    lo = small.min(axis=(1, 2), keepdims=True)
    hi = small.max(axis=(1, 2), keepdims=True)
    # the faintest fifth (background noise) prints as blank
    ink = np.clip(((small - lo) / np.maximum(hi - lo, 1e-6) - 0.2) / 0.8, 0, 1)
    level = (ink * (len(_SHADES) - 1)).round().astype(int)
    chars = np.asarray(list(_SHADES))[level]  # [n, 14, 14]
    width = SIDE // 2
    lines = ["   ".join(f"{c:^{width}}" for c in captions)]
    for r in range(SIDE // 2):
        lines.append("   ".join("".join(chars[i, r]) for i in range(len(images))))
    return "\n".join(lines)


def digits_png(images, predicted, truth=None, columns=6, dpi=144):
    """A grid of digit images, each titled with its prediction, as PNG bytes (for notebooks).

    Args:
        images (np.ndarray): uint8 or float images [n, 28, 28].
        predicted (Sequence[int]): the predicted labels.
        truth (Sequence[int], optional): the true labels; a wrong prediction is titled in red
            with the true label.
        columns (int): images per row.
        dpi (int): resolution (144: sharp when shown at half size on high-density screens).

    Returns:
        bytes: the PNG file.
    """
    import io

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    n = len(images)
    rows = -(-n // columns)
    fig = Figure(figsize=(1.25 * columns, 1.45 * rows), dpi=dpi)
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, columns, squeeze=False)
    for i, ax in enumerate(axes.flat):
        ax.axis("off")
        if i >= n:
            continue
        ax.imshow(np.asarray(images[i]), cmap="gray_r", interpolation="nearest")
        ok = truth is None or int(predicted[i]) == int(truth[i])
        title = f"pred {int(predicted[i])}" + ("" if ok else f" (true {int(truth[i])})")
        ax.set_title(title, fontsize=9, color="#1b5e20" if ok else "#c62828")
    fig.tight_layout(pad=0.4)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", facecolor="white")
    return buf.getvalue()


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--train-samples", type=int, default=24000)
    p.add_argument("--test-samples", type=int, default=2000)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--workdir", default=None, help="keep the data and checkpoint here")
    p.add_argument("--min-accuracy", type=float, default=0.95)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def run(args, workdir):
    """The whole quick start in ``workdir``; returns the test accuracy after reloading."""
    t0 = time.perf_counter()
    paths = build_dataset(os.path.join(workdir, "mnist"), args.train_samples, args.test_samples,
                          args.seed)
    print(f"built MNIST-format IDX files in {os.path.join(workdir, 'mnist')} "
          f"({args.train_samples} train / {args.test_samples} test digits, "
          f"{time.perf_counter() - t0:.1f}s)")

    from paddle_hl.vision.datasets import MNIST
    from paddle_hl.vision.models import LeNet
    from paddle_hl.vision.transforms import Normalize

    transform = Normalize(mean=[127.5], std=[127.5], data_format="CHW")
    train_set = MNIST(*paths["train"], mode="train", transform=transform)
    test_set = MNIST(*paths["test"], mode="test", transform=transform)

    paddle.seed(args.seed)
    model = paddle.Model(LeNet(num_classes=10))
    model.prepare(paddle.optimizer.Adam(learning_rate=1e-3, parameters=model.parameters()),
                  paddle.nn.CrossEntropyLoss(), paddle.metric.Accuracy())
    t1 = time.perf_counter()
    model.fit(train_set, epochs=args.epochs, batch_size=args.batch_size, verbose=1)
    print(f"trained {args.epochs} epochs in {time.perf_counter() - t1:.1f}s")

    result = model.evaluate(test_set, batch_size=256, verbose=0)
    print(f"test loss {result['loss'][0]:.4f}  test accuracy {result['acc']:.4f}")

    shown = np.stack([test_set[i][0] for i in range(6)])
    logits = model.predict_batch([shown])[0]
    predicted = np.argmax(logits, axis=1)
    truth = [int(test_set[i][1][0]) for i in range(6)]
    print("a few test digits, predicted (true):")
    print(ascii_digits(test_set.images[:6], [f"{p} ({t})" for p, t in zip(predicted, truth)]))

    checkpoint = os.path.join(workdir, "checkpoint", "lenet")
    model.save(checkpoint)
    restored = paddle.Model(LeNet(num_classes=10))
    restored.prepare(paddle.optimizer.Adam(learning_rate=1e-3,
                                           parameters=restored.parameters()),
                     paddle.nn.CrossEntropyLoss(), paddle.metric.Accuracy())
    restored.load(checkpoint)
    again = restored.evaluate(test_set, batch_size=256, verbose=0)
    print(f"saved {checkpoint}.pdparams/.pdopt and reloaded: test accuracy {again['acc']:.4f}")
    if abs(again["acc"] - result["acc"]) > 1e-6:
        raise SystemExit("the reloaded checkpoint does not reproduce the trained model")

    paddle.summary(model.network, (1, 1, SIDE, SIDE))
    print(f"quick start finished in {time.perf_counter() - t0:.1f}s")
    return float(again["acc"])


def main(argv=None):
    args = _parse(argv)
    if args.workdir:
        accuracy = run(args, args.workdir)
    else:
        with tempfile.TemporaryDirectory(prefix="paddle_hl_quickstart_") as tmp:
            accuracy = run(args, tmp)
    if accuracy < args.min_accuracy:
        print(f"test accuracy {accuracy:.4f} is below {args.min_accuracy}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
