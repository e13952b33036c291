"""Log-mel and MFCC features of a batch of 16 one-second 16 kHz clips, side by side: paddle_hl,
torchaudio (PyTorch CPU), librosa and Paddle 2.6.2, forward and forward+backward (a loss on the
features back-propagated to the waveform; librosa has no gradients).

All libraries run in one process, in interleaved rounds (one call of every case per round, the
order rotating each round), so that machine load hits them alike. Prints the median and range
(min-max) in ms per call and the ratios to torchaudio and Paddle.

Settings: n_fft 512, hop 128, Hann window, 64 Slaney-normalised Slaney-scale mel bands from 50 Hz
to 8 kHz, power 2, dB with amin 1e-10, 40 orthonormal DCT coefficients.

Run: python benchmarks/audio_features.py [--rounds 20] [--threads N] [--numpy-fft]
     [--libs paddle_hl,torchaudio,librosa,paddle]

paddle_hl's CPU features use SciPy's FFT when SciPy is installed; ``--numpy-fft`` measures the
NumPy fallback.

``--threads N`` limits BLAS/OpenMP and torch's intra-op pool to N threads. The torchaudio wheel
in some environments is built for a CUDA PyTorch and its C++ extension fails to load with a CPU
PyTorch; the transforms used here are pure PyTorch, so torchaudio is then imported without its
extension (said in the output).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
SR, N_FFT, HOP, N_MELS, F_MIN, N_MFCC = 16000, 512, 128, 64, 50.0, 40
BATCH, SECONDS = 16, 1.0


def _clips():
    rng = np.random.default_rng(0)
    t = np.arange(int(SR * SECONDS)) / SR
    tones = np.sin(2 * np.pi * rng.uniform(100, 4000, (BATCH, 1)) * t)
    return (0.5 * tones + 0.1 * rng.standard_normal((BATCH, t.size))).astype(np.float32)


def _paddle_cases(lib, x_np, name):
    feats = lib.audio.features
    logmel = feats.LogMelSpectrogram(sr=SR, n_fft=N_FFT, hop_length=HOP, n_mels=N_MELS,
                                     f_min=F_MIN)
    mfcc = feats.MFCC(sr=SR, n_mfcc=N_MFCC, n_fft=N_FFT, hop_length=HOP, n_mels=N_MELS,
                      f_min=F_MIN)
    x = lib.to_tensor(x_np)

    def fwd(layer):
        def run():
            with lib.no_grad():
                return layer(x)
        return run

    def fwd_bwd(layer):
        def run():
            xg = lib.to_tensor(x_np, stop_gradient=False)
            layer(xg).mean().backward()
            return xg.grad
        return run

    return {(name, "logmel", "fwd"): fwd(logmel), (name, "logmel", "fwd+bwd"): fwd_bwd(logmel),
            (name, "mfcc", "fwd"): fwd(mfcc), (name, "mfcc", "fwd+bwd"): fwd_bwd(mfcc)}


def _import_paddle_hl():
    """paddle_hl with its audio domain from this checkout (an editable install of another
    checkout can otherwise claim ``paddle_hl.audio``)."""
    import importlib.util

    sys.path.insert(0, str(ROOT))
    import paddle_hl

    init = ROOT / "audio" / "__init__.py"
    spec = importlib.util.find_spec("paddle_hl.audio")
    if spec is None or pathlib.Path(spec.origin or "").resolve() != init.resolve():
        spec = importlib.util.spec_from_file_location(
            "paddle_hl.audio", init, submodule_search_locations=[str(init.parent)])
        mod = importlib.util.module_from_spec(spec)
        sys.modules["paddle_hl.audio"] = mod
        spec.loader.exec_module(mod)
    return paddle_hl


def _import_torchaudio():
    try:
        import torchaudio
        return torchaudio, ""
    except OSError:
        pass
    # load torchaudio with its (unused here) C++ extension looked for in an empty folder
    import importlib.util
    import tempfile

    for mod in [m for m in sys.modules if m.startswith("torchaudio")]:
        del sys.modules[mod]
    base = pathlib.Path(importlib.util.find_spec("torchaudio").submodule_search_locations[0])
    spec = importlib.util.spec_from_file_location("torchaudio._extension.utils",
                                                  base / "_extension" / "utils.py")
    utils = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = utils
    spec.loader.exec_module(utils)
    utils._LIB_DIR = pathlib.Path(tempfile.mkdtemp())
    import torchaudio
    return torchaudio, " (without its C++ extension: built for another PyTorch)"


def _torch_cases(x_np):
    import torch

    torchaudio, note = _import_torchaudio()
    T = torchaudio.transforms
    melkw = dict(n_fft=N_FFT, hop_length=HOP, f_min=F_MIN, n_mels=N_MELS, norm="slaney",
                 mel_scale="slaney")
    mel = T.MelSpectrogram(sample_rate=SR, **melkw)
    to_db = T.AmplitudeToDB("power", top_db=None)
    mfcc = T.MFCC(sample_rate=SR, n_mfcc=N_MFCC, norm="ortho", melkwargs=melkw)
    x = torch.from_numpy(x_np)

    def logmel(v):
        return to_db(mel(v))

    def fwd(f):
        def run():
            with torch.no_grad():
                return f(x)
        return run

    def fwd_bwd(f):
        def run():
            xg = x.clone().requires_grad_()
            f(xg).mean().backward()
            return xg.grad
        return run

    name = "torchaudio"
    cases = {(name, "logmel", "fwd"): fwd(logmel), (name, "logmel", "fwd+bwd"): fwd_bwd(logmel),
             (name, "mfcc", "fwd"): fwd(mfcc), (name, "mfcc", "fwd+bwd"): fwd_bwd(mfcc)}
    return cases, f"torchaudio {torchaudio.__version__}{note}, torch {torch.__version__}"


def _librosa_cases(x_np):
    import librosa

    kw = dict(sr=SR, n_fft=N_FFT, hop_length=HOP, n_mels=N_MELS, fmin=F_MIN)

    def logmel():
        return librosa.power_to_db(librosa.feature.melspectrogram(y=x_np, **kw), top_db=None)

    def mfcc():
        return librosa.feature.mfcc(y=x_np, n_mfcc=N_MFCC, **kw)

    return {("librosa", "logmel", "fwd"): logmel, ("librosa", "mfcc", "fwd"): mfcc}, \
        f"librosa {librosa.__version__}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--libs", default="paddle_hl,torchaudio,librosa,paddle")
    ap.add_argument("--numpy-fft", action="store_true",
                    help="paddle_hl uses NumPy's FFT even when SciPy is installed")
    args = ap.parse_args(argv)
    thread_vars = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
    if args.threads and any(os.environ.get(v) != str(args.threads) for v in thread_vars):
        # BLAS and OpenMP read these when they load (NumPy is already imported here): start
        # again with them set
        os.environ.update({v: str(args.threads) for v in thread_vars})
        os.execv(sys.executable, [sys.executable, __file__, *sys.argv[1:]])
    libs = args.libs.split(",")
    x_np = _clips()
    cases, versions = {}, []
    if "paddle" in libs:
        import zlib  # noqa: F401

        import numpy.random  # noqa: F401  (paddle 2.6.2 crashes under NumPy 2 without these)
        import paddle

        cases.update(_paddle_cases(paddle, x_np, "paddle"))
        versions.append(f"paddle {paddle.__version__}")
    if "paddle_hl" in libs:
        paddle_hl = _import_paddle_hl()
        from paddle_hl.audio.features import _spectrum

        if args.numpy_fft:
            _spectrum._SCIPY_FFT = False
        versions.append("paddle_hl FFT: " + ("scipy.fft" if _spectrum._fft_module() else
                                              "numpy.fft"))
        cases.update(_paddle_cases(paddle_hl, x_np, "paddle_hl"))
        versions.append(f"paddle_hl from {pathlib.Path(paddle_hl.__file__).parent}")
    if "torchaudio" in libs:
        import torch

        if args.threads:
            torch.set_num_threads(args.threads)
        c, v = _torch_cases(x_np)
        cases.update(c)
        versions.append(v)
    if "librosa" in libs:
        c, v = _librosa_cases(x_np)
        cases.update(c)
        versions.append(v)
    print(f"batch {BATCH} x {SECONDS:g} s at {SR} Hz; n_fft {N_FFT}, hop {HOP}, {N_MELS} mels, "
          f"{N_MFCC} MFCC; {args.rounds} interleaved rounds; threads: "
          f"{args.threads or 'default'}")
    print("; ".join(versions))
    keys = list(cases)
    for fn in cases.values():  # warm-up (caches, lazy kernels)
        fn()
    times = {k: [] for k in keys}
    for r in range(args.rounds):
        shift = r % len(keys)
        for k in keys[shift:] + keys[:shift]:
            t0 = time.perf_counter()
            cases[k]()
            times[k].append((time.perf_counter() - t0) * 1e3)
    print(f"{'feature':<8}{'pass':<9}{'library':<12}{'median ms':>10}{'range ms':>16}"
          f"{'/torchaudio':>12}{'/paddle':>9}")
    for feat in ("logmel", "mfcc"):
        for mode in ("fwd", "fwd+bwd"):
            ref_t = times.get(("torchaudio", feat, mode))
            ref_p = times.get(("paddle", feat, mode))
            for lib in ("paddle_hl", "torchaudio", "librosa", "paddle"):
                t = times.get((lib, feat, mode))
                if not t:
                    continue
                med = statistics.median(t)
                rt = f"{med / statistics.median(ref_t):.2f}x" if ref_t else "-"
                rp = f"{med / statistics.median(ref_p):.2f}x" if ref_p else "-"
                rng = f"{min(t):.1f}-{max(t):.1f}"
                print(f"{feat:<8}{mode:<9}{lib:<12}{med:>10.1f}{rng:>16}{rt:>12}{rp:>9}")
    print("(a shared, noisy machine: compare the ratios within one run, not across runs)")


if __name__ == "__main__":
    main()
