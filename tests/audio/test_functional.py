"""paddle_hl.audio.functional against Paddle 2.6.2 (values, dtypes, shapes, edge cases) and
against SciPy's windows; mel round trips and the orthonormal DCT."""

from __future__ import annotations

import math

import numpy as np
import pytest
from paddle_hl.audio import functional as F

import paddle_hl as paddle

WINDOWS = ["hamming", "hann", "triang", "bohman", "blackman", "cosine", "tukey", "taylor",
           ("tukey", 0.3), ("tukey", 0.0), ("tukey", 1.0), ("gaussian", 2.0),
           ("general_gaussian", 1.5, 3.0), ("exponential", None, 2.0), ("taylor", 5, 40),
           ("taylor", 4, 30, False)]


@pytest.mark.parity
@pytest.mark.parametrize("window", WINDOWS, ids=str)
@pytest.mark.parametrize("fftbins", [True, False])
@pytest.mark.parametrize("n", [1, 2, 9, 16])
def test_get_window_matches_paddle(pd, window, fftbins, n):
    ours = F.get_window(window, n, fftbins=fftbins)
    ref = pd.audio.functional.get_window(window, n, fftbins=fftbins)
    assert ours.dtype == paddle.float64 and ours.shape == list(ref.shape)
    # Paddle evaluates tukey/taylor partly in float32 (differences up to ~2e-7)
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("window", WINDOWS, ids=str)
@pytest.mark.parametrize("fftbins", [True, False])
def test_get_window_matches_scipy(window, fftbins):
    signal = pytest.importorskip("scipy.signal")
    ours = F.get_window(window, 33, fftbins=fftbins).numpy()
    np.testing.assert_allclose(ours, signal.get_window(window, 33, fftbins=fftbins),
                               rtol=1e-12, atol=1e-12)


def test_get_window_periodic_is_symmetric_of_length_plus_one():
    sym = F.get_window("hann", 9, fftbins=False).numpy()
    per = F.get_window("hann", 8, fftbins=True).numpy()
    np.testing.assert_allclose(per, sym[:-1], atol=1e-15)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_get_window_dtype(dtype):
    assert F.get_window("hann", 8, dtype=dtype).dtype == getattr(paddle, dtype)


@pytest.mark.parametrize("window, err, match", [
    ("gaussian", ValueError, "needs one or more parameters"),
    ("exponential", ValueError, "needs one or more parameters"),
    ("general_gaussian", ValueError, "needs one or more parameters"),
    ("boxcar", ValueError, "unknown window type 'boxcar'"),
    (("general_gaussian", 1.0), ValueError, "needs 2 parameter"),
    (3, TypeError, "window must be a str or a tuple"),
])
def test_get_window_errors(window, err, match):
    with pytest.raises(err, match=match):
        F.get_window(window, 8)


def test_get_window_exponential_symmetric_needs_no_center():
    with pytest.raises(ValueError, match="center parameter must be None"):
        F.get_window(("exponential", 3.0), 8, fftbins=False)
    np.testing.assert_allclose(F.get_window(("exponential", 3.0), 8).numpy()[3], 1.0)


@pytest.mark.parity
@pytest.mark.parametrize("htk", [False, True])
@pytest.mark.parametrize("f", [0.0, 50.0, 440, 999.9, 1000.0, 4000.0, 11025.0])
def test_hz_mel_scalars_match_paddle(pd, htk, f):
    ours = F.hz_to_mel(f, htk=htk)
    ref = pd.audio.functional.hz_to_mel(f, htk=htk)
    assert isinstance(ours, float)
    np.testing.assert_allclose(ours, ref, rtol=1e-9)
    np.testing.assert_allclose(F.mel_to_hz(ours, htk=htk),
                               pd.audio.functional.mel_to_hz(ref, htk=htk), rtol=1e-9)
    np.testing.assert_allclose(F.mel_to_hz(ours, htk=htk), f, rtol=1e-9, atol=1e-9)


@pytest.mark.parity
@pytest.mark.parametrize("htk", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_hz_mel_tensors_match_paddle(pd, htk, dtype):
    f = np.array([0.0, 20.0, 300.0, 999.0, 1000.0, 1001.0, 8000.0, 22050.0], dtype=dtype)
    ours = F.hz_to_mel(paddle.to_tensor(f), htk=htk)
    ref = pd.audio.functional.hz_to_mel(pd.to_tensor(f), htk=htk)
    assert ours.dtype == getattr(paddle, dtype) and ours.shape == [8]
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-5, atol=1e-5)
    back = F.mel_to_hz(ours, htk=htk)
    ref_back = pd.audio.functional.mel_to_hz(ref, htk=htk)
    assert back.dtype == getattr(paddle, dtype)
    np.testing.assert_allclose(back.numpy(), ref_back.numpy(), rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(back.numpy(), f, rtol=1e-5, atol=1e-3)


def test_hz_to_mel_tensor_is_differentiable_without_nans():
    f = paddle.to_tensor([0.0, 500.0, 2000.0], dtype="float64", stop_gradient=False)
    F.hz_to_mel(f).sum().backward()
    g = f.grad.numpy()
    np.testing.assert_allclose(g[:2], 3.0 / 200.0)
    np.testing.assert_allclose(g[2], 27.0 / math.log(6.4) / 2000.0, rtol=1e-12)


def test_hz_to_mel_bad_input():
    with pytest.raises(TypeError, match="hz_to_mel: freq must be a float"):
        F.hz_to_mel("440")
    with pytest.raises(TypeError, match="float Tensor"):
        F.hz_to_mel(paddle.to_tensor([1, 2]))


@pytest.mark.parity
@pytest.mark.parametrize("htk", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mel_and_fft_frequencies_match_paddle(pd, htk, dtype):
    ours = F.mel_frequencies(40, 30.0, 8000.0, htk=htk, dtype=dtype)
    ref = pd.audio.functional.mel_frequencies(40, 30.0, 8000.0, htk=htk, dtype=dtype)
    assert ours.dtype == getattr(paddle, dtype) and ours.shape == [40]
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-5)
    for n_fft in (8, 9, 512):
        a = F.fft_frequencies(16000, n_fft, dtype=dtype)
        b = pd.audio.functional.fft_frequencies(16000, n_fft, dtype=dtype)
        assert a.dtype == getattr(paddle, dtype) and a.shape == list(b.shape)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)


@pytest.mark.parity
@pytest.mark.parametrize("norm", ["slaney", 1, 2.0, np.inf, None])
@pytest.mark.parametrize("htk", [False, True])
@pytest.mark.parametrize("sr, n_fft, n_mels, f_min, f_max", [
    (16000, 512, 64, 0.0, None), (22050, 2048, 128, 50.0, 8000.0), (8000, 256, 20, 20.0, None)])
def test_compute_fbank_matrix_matches_paddle(pd, norm, htk, sr, n_fft, n_mels, f_min, f_max):
    ours = F.compute_fbank_matrix(sr, n_fft, n_mels, f_min, f_max, htk=htk, norm=norm)
    ref = pd.audio.functional.compute_fbank_matrix(sr, n_fft, n_mels, f_min, f_max, htk=htk,
                                                   norm=norm)
    assert ours.dtype == paddle.float32 and ours.shape == [n_mels, n_fft // 2 + 1]
    # Paddle builds the triangles in float32: where a triangle's edge falls just beside an FFT
    # bin, cancellation leaves absolute errors of a few 1e-6 of the peak (ours is float64,
    # checked against librosa below)
    r = ref.numpy()
    np.testing.assert_allclose(ours.numpy(), r, rtol=1e-4, atol=2e-5 * np.abs(r).max())


def test_compute_fbank_matrix_dtype_and_librosa():
    librosa = pytest.importorskip("librosa")
    ours = F.compute_fbank_matrix(16000, 512, 40, 0.0, None, dtype="float64")
    assert ours.dtype == paddle.float64
    ref = librosa.filters.mel(sr=16000, n_fft=512, n_mels=40, fmin=0.0, dtype=np.float64)
    np.testing.assert_allclose(ours.numpy(), ref, rtol=1e-10, atol=1e-12)


def test_compute_fbank_matrix_warns_for_empty_filters():
    with pytest.warns(UserWarning, match="n_mels=128 is too large for n_fft=64"):
        fb = F.compute_fbank_matrix(16000, 64, n_mels=128)
    assert (fb.numpy().max(axis=1) == 0).any()


@pytest.mark.parametrize("kwargs, match", [
    (dict(norm="l2"), "norm must be 'slaney', a number"),
    (dict(f_min=9000.0), "expected 0 <= f_min < f_max"),
    (dict(n_mels=0), "n_mels must be >= 1"),
])
def test_compute_fbank_matrix_errors(kwargs, match):
    args = dict(sr=16000, n_fft=512)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        F.compute_fbank_matrix(**args)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kwargs", [{}, dict(top_db=None), dict(ref_value=3.0, amin=1e-5),
                                    dict(top_db=10.0), dict(top_db=0.0)])
def test_power_to_db_matches_paddle(pd, dtype, kwargs):
    x = (np.random.rand(2, 5, 7) ** 6).astype(dtype)
    x[0, 0, 0] = 0.0
    ours = F.power_to_db(paddle.to_tensor(x), **kwargs)
    ref = pd.audio.functional.power_to_db(pd.to_tensor(x), **kwargs)
    assert ours.dtype == getattr(paddle, dtype) and ours.shape == [2, 5, 7]
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("kwargs, match", [
    (dict(ref_value=0.0), "ref_value must be strictly positive"),
    (dict(amin=0.0), "amin must be strictly positive"),
    (dict(top_db=-1.0), "top_db must be non-negative"),
])
def test_power_to_db_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        F.power_to_db(paddle.ones([3]), **kwargs)
    with pytest.raises(TypeError, match="spect must be a Tensor"):
        F.power_to_db(np.ones(3))


@pytest.mark.parity
@pytest.mark.parametrize("norm", ["ortho", None])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n_mfcc, n_mels", [(13, 40), (1, 1), (64, 64)])
def test_create_dct_matches_paddle(pd, norm, dtype, n_mfcc, n_mels):
    ours = F.create_dct(n_mfcc, n_mels, norm=norm, dtype=dtype)
    ref = pd.audio.functional.create_dct(n_mfcc, n_mels, norm=norm, dtype=dtype)
    assert ours.dtype == getattr(paddle, dtype) and ours.shape == [n_mels, n_mfcc]
    # Paddle takes the cosine of float32 arguments up to ~pi * n_mfcc (abs error ~1e-5)
    atol = 5e-5 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-5, atol=atol)


def test_create_dct_ortho_columns_and_errors():
    d = F.create_dct(20, 20, dtype="float64").numpy()
    np.testing.assert_allclose(d.T @ d, np.eye(20), atol=1e-12)
    with pytest.raises(ValueError, match="norm must be 'ortho' or None"):
        F.create_dct(4, 6, norm="foo")
