"""paddle_hl.audio.features against Paddle 2.6.2 (values, dtypes, shapes, state_dict), their
gradients (finite differences in float64, and a loss on the features reaching the waveform),
and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from paddle_hl.audio import features as Fe
from paddle_hl.audio import functional as F

import paddle_hl as paddle

CASES = [
    ("Spectrogram", {}),
    ("Spectrogram", dict(n_fft=256, hop_length=None, win_length=200, window="hamming",
                         power=2.0)),
    ("Spectrogram", dict(n_fft=128, hop_length=50, power=1.5, center=False)),
    ("Spectrogram", dict(n_fft=256, hop_length=64, pad_mode="constant",
                         window=("gaussian", 30.0))),
    ("MelSpectrogram", dict(sr=16000)),
    ("MelSpectrogram", dict(sr=8000, n_fft=512, hop_length=128, n_mels=40, f_min=0.0,
                            f_max=3000.0, htk=True, norm=2.0)),
    ("LogMelSpectrogram", dict(sr=16000)),
    ("LogMelSpectrogram", dict(sr=16000, n_fft=400, hop_length=160, n_mels=80, top_db=60.0,
                               ref_value=2.0, amin=1e-6, norm=None)),
    ("MFCC", dict(sr=16000)),
    ("MFCC", dict(sr=22050, n_mfcc=13, n_mels=40, window="blackman", top_db=80.0)),
]


def _case_id(case):
    name, kw = case
    return name + "-" + "-".join(f"{k}={v}" for k, v in kw.items())


@pytest.mark.parity
@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [[3, 4000], [4000]])
def test_features_match_paddle(pd, case, dtype, shape):
    name, kw = case
    x = np.random.randn(*shape).astype(dtype)
    ours_layer = getattr(Fe, name)(**kw, dtype=dtype)
    ref_layer = getattr(pd.audio.features, name)(**kw, dtype=dtype)
    ours = ours_layer(paddle.to_tensor(x))
    if name == "MFCC" and x.ndim == 1:
        # Paddle's MFCC transposes a 3-D tensor and fails on a 1-D waveform; ours returns the
        # unbatched [n_mfcc, frames], compared with Paddle's batch of one
        ref = ref_layer(pd.to_tensor(x[None]))[0]
    else:
        ref = ref_layer(pd.to_tensor(x))
    assert ours.shape == list(ref.shape)
    assert ours.dtype == getattr(paddle, dtype)
    r = ref.numpy()
    # float32 spectra carry FFT rounding relative to their largest value; Paddle's float64
    # mel filters are only float32-accurate (relative 1e-7), ours are exact
    tol = 2e-5 if dtype == "float32" else 1e-6
    np.testing.assert_allclose(ours.numpy(), r, rtol=tol, atol=tol * np.abs(r).max())
    # the buffers have Paddle's state_dict names, shapes and values
    ours_sd, ref_sd = ours_layer.state_dict(), ref_layer.state_dict()
    assert list(ours_sd) == list(ref_sd)
    for k in ref_sd:
        assert ours_sd[k].shape == list(ref_sd[k].shape), k
        v = ref_sd[k].numpy()
        np.testing.assert_allclose(ours_sd[k].numpy(), v, rtol=1e-4,
                                   atol=5e-5 * max(np.abs(v).max(), 1.0), err_msg=k)
    assert not ours_layer.parameters()


@pytest.mark.parity
def test_float64_layer_promotes_float32_input(pd):
    x = np.random.randn(2, 2000).astype("float32")
    ours = Fe.LogMelSpectrogram(sr=16000, dtype="float64")(paddle.to_tensor(x))
    ref = pd.audio.features.LogMelSpectrogram(sr=16000, dtype="float64")(pd.to_tensor(x))
    assert ours.dtype == paddle.float64 and str(ref.dtype) == "paddle.float64"
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parity
def test_float64_input_to_float32_layer_gives_float64(pd):
    x = np.random.randn(2, 3000)
    ours = Fe.Spectrogram()(paddle.to_tensor(x))
    ref = pd.audio.features.Spectrogram()(pd.to_tensor(x))
    assert ours.dtype == paddle.float64 and str(ref.dtype) == "paddle.float64"
    # Paddle's float32 window limits the agreement to float32 precision
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-5, atol=1e-5)
    assert Fe.MFCC(sr=16000)(paddle.to_tensor(x)).dtype == paddle.float64


def test_features_compose_as_documented():
    x = paddle.to_tensor(np.random.randn(2, 3000).astype("float64"))
    kw = dict(sr=16000, n_fft=256, hop_length=64, n_mels=32, dtype="float64")
    spec = Fe.Spectrogram(n_fft=256, hop_length=64, power=2.0, dtype="float64")(x).numpy()
    fb = F.compute_fbank_matrix(16000, 256, n_mels=32, f_min=50.0, dtype="float64").numpy()
    mel = Fe.MelSpectrogram(**kw)(x).numpy()
    np.testing.assert_allclose(mel, fb @ spec, rtol=1e-12, atol=1e-12)
    logmel = Fe.LogMelSpectrogram(**kw, top_db=50.0)(x).numpy()
    db = 10 * np.log10(np.maximum(mel, 1e-10))
    np.testing.assert_allclose(logmel, np.maximum(db, db.max() - 50.0), rtol=1e-12, atol=1e-9)
    mfcc = Fe.MFCC(**kw, n_mfcc=12)(x).numpy()
    dct = F.create_dct(12, 32, dtype="float64").numpy()
    np.testing.assert_allclose(mfcc, np.einsum("mk,nmt->nkt", dct, db), rtol=1e-10,
                               atol=1e-9)
    # Spectrogram is |STFT| ** power with 1 + T // hop frames
    s1 = Fe.Spectrogram(n_fft=256, hop_length=64, dtype="float64")(x)
    assert s1.shape == [2, 129, 1 + 3000 // 64]
    np.testing.assert_allclose(s1.numpy() ** 2, spec, rtol=1e-10, atol=1e-10)


def _finite_difference(f, x, eps=1e-6, n_checks=6, rng=None):
    """Directional derivatives of the scalar f at x along a few random directions."""
    rng = rng or np.random.default_rng(0)
    out = []
    for _ in range(n_checks):
        d = rng.standard_normal(x.shape)
        out.append((d, (f(x + eps * d) - f(x - eps * d)) / (2 * eps)))
    return out


@pytest.mark.parametrize("name, kw", [
    ("Spectrogram", dict(n_fft=64, hop_length=16, power=1.0)),
    ("Spectrogram", dict(n_fft=64, hop_length=24, power=2.0, center=False)),
    ("MelSpectrogram", dict(sr=8000, n_fft=64, hop_length=16, n_mels=8, f_min=0.0)),
    ("LogMelSpectrogram", dict(sr=8000, n_fft=64, hop_length=16, n_mels=8, f_min=0.0)),
    ("MFCC", dict(sr=8000, n_fft=64, hop_length=16, n_mels=8, n_mfcc=5, f_min=0.0,
                  pad_mode="constant")),
])
def test_feature_gradients_match_finite_differences(name, kw):
    layer = getattr(Fe, name)(**kw, dtype="float64")
    rng = np.random.default_rng(1)
    x0 = rng.standard_normal((2, 200))
    w = rng.standard_normal(layer(paddle.to_tensor(x0)).shape)

    def loss(x):
        return float((layer(paddle.to_tensor(x)).numpy() * w).sum())

    x = paddle.to_tensor(x0, stop_gradient=False)
    (layer(x) * paddle.to_tensor(w)).sum().backward()
    g = x.grad.numpy()
    for d, fd in _finite_difference(loss, x0, rng=rng):
        np.testing.assert_allclose((g * d).sum(), fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_loss_on_features_backpropagates_to_waveform(device, dtype):
    """A gradient step on the waveform lowers a loss computed on its log-mel features."""
    layer = Fe.LogMelSpectrogram(sr=16000, n_fft=256, hop_length=128, n_mels=32,
                                 dtype=dtype)
    target = layer(paddle.to_tensor(np.random.randn(4, 1600).astype(dtype)))
    wav = paddle.to_tensor(np.random.randn(4, 1600).astype(dtype) * 0.5, stop_gradient=False)
    losses = []
    for _ in range(3):
        loss = ((layer(wav) - target) ** 2).mean()
        loss.backward()
        assert wav.grad is not None and wav.grad.shape == [4, 1600]
        assert np.isfinite(wav.grad.numpy()).all()
        losses.append(float(loss.numpy()))
        with paddle.no_grad():
            wav.set_value(wav - 0.05 * wav.grad / float(paddle.abs(wav.grad).max().numpy()))
        wav.clear_grad()
    assert losses[-1] < losses[0]


def test_features_on_device_keep_place(device):
    x = paddle.randn([2, 4000])
    out = Fe.MFCC(sr=16000)(x)
    assert out.place == x.place
    assert out.shape == [2, 40, 32]


@pytest.mark.parametrize("shape", [[2, 1, 4000], [], [1, 1, 1, 800]])
def test_wrong_rank_raises(shape):
    x = paddle.zeros(shape)
    with pytest.raises(ValueError, match=r"MelSpectrogram: x must be a waveform of shape "
                                         r"\[N, T\]"):
        Fe.MelSpectrogram(sr=16000)(x)


def test_bad_input_types_and_lengths():
    with pytest.raises(TypeError, match="Spectrogram: x must be float32 or float64"):
        Fe.Spectrogram()(paddle.zeros([2, 4000], dtype="int64"))
    with pytest.raises(TypeError, match="Spectrogram: x must be a Tensor"):
        Fe.Spectrogram()(np.zeros((2, 4000)))
    with pytest.raises(ValueError, match="Spectrogram: x has 100 samples, fewer than n_fft = "
                                         "512"):
        Fe.Spectrogram(n_fft=512)(paddle.zeros([2, 100]))
    with pytest.raises(ValueError, match="MelSpectrogram: x has 2000 samples, fewer than "
                                         "n_fft = 2048"):
        Fe.MelSpectrogram(sr=16000)(paddle.zeros([2, 2000]))
    with pytest.raises(ValueError, match="fewer than n_fft = 512"):
        Fe.Spectrogram(n_fft=512, center=False)(paddle.zeros([2, 300]))


@pytest.mark.parametrize("cls, kwargs, match", [
    (Fe.MelSpectrogram, dict(sr=16000, n_fft=64, n_mels=128),
     "n_mels=128 is too large for n_fft=64"),
    (Fe.MFCC, dict(sr=16000, n_fft=128, n_mels=100), "n_mels=100 is too large for n_fft=128"),
    (Fe.MFCC, dict(sr=16000, n_mfcc=80, n_mels=64), "n_mfcc cannot be larger than n_mels"),
    (Fe.Spectrogram, dict(n_fft=256, win_length=512), r"win_length \(512\) must be <= n_fft"),
    (Fe.Spectrogram, dict(n_fft=0), "n_fft must be a positive int"),
    (Fe.Spectrogram, dict(pad_mode="circular"), "pad_mode must be 'reflect' or 'constant'"),
    (Fe.Spectrogram, dict(power=0.0), "power must be a positive number"),
    (Fe.LogMelSpectrogram, dict(amin=0.0), "amin must be strictly positive"),
    (Fe.MelSpectrogram, dict(sr=16000, f_min=9000.0), "expected 0 <= f_min < f_max"),
    (Fe.Spectrogram, dict(window="boxcar"), "unknown window type"),
])
def test_bad_arguments_raise(cls, kwargs, match):
    with pytest.raises(ValueError, match=match):
        cls(**kwargs)


@pytest.mark.parametrize("scipy_fft", [True, False])
@pytest.mark.parametrize("kw", [
    dict(n_fft=256, hop_length=64),
    dict(n_fft=255, hop_length=100, win_length=200, pad_mode="constant"),
    dict(n_fft=128, hop_length=128, center=False, power=1.0),
    dict(n_fft=64, hop_length=16, power=0.5, window="hamming")])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_cpu_path_equals_the_stft_path(monkeypatch, scipy_fft, kw, dtype):
    """The fused CPU kernel (with SciPy's FFT or NumPy's) and the general paddle.signal.stft
    path give the same features and the same waveform gradients."""
    from paddle_hl.audio.features import _spectrum, layers

    if not scipy_fft:
        monkeypatch.setattr(_spectrum, "_SCIPY_FFT", False)
    layer = Fe.Spectrogram(**kw, dtype=dtype)
    mel = Fe.MelSpectrogram(sr=8000, n_mels=16, f_min=0.0, **kw, dtype=dtype)
    x0 = np.random.randn(3, 1000).astype(dtype)
    results = []
    for fused in (True, False):
        monkeypatch.setattr(layers, "_FUSED_CPU", fused)
        out = []
        for lay in (layer, mel):
            x = paddle.to_tensor(x0, stop_gradient=False)
            y = lay(x)
            (y * paddle.to_tensor(np.cos(np.arange(y.size)).reshape(y.shape).astype(dtype))
             ).sum().backward()
            out += [y.numpy(), x.grad.numpy()]
            assert y.dtype == getattr(paddle, dtype) and x.grad.dtype == getattr(paddle, dtype)
        results.append(out)
    tol = 1e-4 if dtype == "float32" else 1e-10
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol * np.abs(b).max())


def test_layers_train_eval_and_state_dict_round_trip():
    a = Fe.MFCC(sr=16000, n_mfcc=13)
    b = Fe.MFCC(sr=16000, n_mfcc=13)
    b.set_state_dict(a.state_dict())
    x = paddle.randn([1, 2000])
    a.eval()
    np.testing.assert_allclose(a(x).numpy(), b(x).numpy(), rtol=1e-6, atol=1e-5)
