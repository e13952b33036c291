"""paddle_hl.audio load / save / info and the backends: round trips for WAV, FLAC and OGG,
frame ranges and layouts, raw integers, errors for missing files, non-audio files, bad
arguments, and a missing soundfile (the audio extra)."""

from __future__ import annotations

import sys
import wave

import numpy as np
import pytest
from paddle_hl.audio import backends

import paddle_hl as paddle

sf = pytest.importorskip("soundfile")


@pytest.fixture(autouse=True)
def _restore_backend():
    saved = backends._current
    yield
    backends._current = saved


def _tone(channels=2, n=4000, sr=16000):
    t = np.arange(n) / sr
    return np.stack([0.5 * np.sin(2 * np.pi * (220 + 110 * c) * t) for c in range(channels)]
                    ).astype(np.float32)


def test_default_backend_and_list():
    assert backends.list_available_backends() == ["wave_backend", "soundfile"]
    assert backends.get_current_backend() == "soundfile"
    backends.set_backend("wave_backend")
    assert backends.get_current_backend() == "wave_backend"
    with pytest.raises(ValueError, match="unknown backend 'sox'"):
        backends.set_backend("sox")


@pytest.mark.parametrize("ext, tol", [("wav", 1 / 16000), ("flac", 1 / 16000)])
@pytest.mark.parametrize("channels", [1, 2])
def test_lossless_round_trip(tmp_path, ext, tol, channels):
    x = _tone(channels)
    path = tmp_path / f"a.{ext}"
    paddle.audio.save(str(path), paddle.to_tensor(x), 16000)
    y, sr = paddle.audio.load(path)
    assert sr == 16000 and y.dtype == paddle.float32 and y.shape == [channels, 4000]
    np.testing.assert_allclose(y.numpy(), x, atol=tol)
    info = paddle.audio.info(str(path))
    assert (info.sample_rate, info.num_samples, info.num_channels, info.bits_per_sample) == \
        (16000, 4000, channels, 16)
    assert info.encoding == ("PCM_S" if ext == "wav" else "FLAC")


def test_ogg_round_trip_is_close(tmp_path):
    x = _tone(2, n=16000)
    path = str(tmp_path / "a.ogg")
    paddle.audio.save(path, paddle.to_tensor(x), 16000)
    y, sr = paddle.audio.load(path)
    assert sr == 16000 and y.shape == [2, 16000]
    # lossy: the tones come back (correlation), not the samples
    for c in range(2):
        assert np.corrcoef(y.numpy()[c, 2000:-2000], x[c, 2000:-2000])[0, 1] > 0.99
    info = paddle.audio.info(path)
    assert info.encoding == "VORBIS" and info.num_channels == 2


@pytest.mark.parametrize("bits, encoding, dtype, subtype", [
    (16, None, np.int16, "PCM_16"), (32, "PCM_S", np.int32, "PCM_32"),
    (24, "PCM_S", np.int32, "PCM_24"), (8, "PCM_U", np.uint8, "PCM_U8"),
    (32, "PCM_F", np.float32, "FLOAT"), (64, "PCM_F", np.float32, "DOUBLE")])
def test_wav_encodings_and_raw_values(tmp_path, bits, encoding, dtype, subtype):
    x = _tone(2)
    path = str(tmp_path / "e.wav")
    paddle.audio.save(path, paddle.to_tensor(x), 8000, encoding=encoding, bits_per_sample=bits)
    assert sf.info(path).subtype == subtype
    info = paddle.audio.info(path)
    assert info.bits_per_sample == bits
    y, _ = paddle.audio.load(path)
    np.testing.assert_allclose(y.numpy(), x, atol=2.0 ** (1 - min(bits, 24)))
    raw, _ = paddle.audio.load(path, normalize=False)
    assert raw.numpy().dtype == dtype
    if subtype == "PCM_16":
        np.testing.assert_array_equal(raw.numpy(), sf.read(path, dtype="int16")[0].T)


def test_channels_first_and_frame_range(tmp_path):
    x = _tone(2)
    path = str(tmp_path / "a.wav")
    paddle.audio.save(path, paddle.to_tensor(x.T), 16000, channels_first=False)
    y, _ = paddle.audio.load(path, channels_first=False, frame_offset=100, num_frames=50)
    assert y.shape == [50, 2]
    np.testing.assert_allclose(y.numpy(), x[:, 100:150].T, atol=1e-4)
    tail, _ = paddle.audio.load(path, frame_offset=3990)
    assert tail.shape == [2, 10]
    more, _ = paddle.audio.load(path, frame_offset=3990, num_frames=100)
    assert more.shape == [2, 10]


@pytest.mark.parametrize("backend", ["wave_backend", "soundfile"])
def test_wave_backend_agrees_with_soundfile(tmp_path, backend):
    x = _tone(2)
    path = str(tmp_path / "a.wav")
    backends.set_backend(backend)
    paddle.audio.save(path, paddle.to_tensor(x), 16000)
    ref = sf.read(path, dtype="int16")[0].T
    for b in ("wave_backend", "soundfile"):
        backends.set_backend(b)
        raw, sr = paddle.audio.load(path, normalize=False, frame_offset=7, num_frames=300)
        assert sr == 16000 and raw.numpy().dtype == np.int16
        np.testing.assert_array_equal(raw.numpy(), ref[:, 7:307])
        y, _ = paddle.audio.load(path)
        np.testing.assert_allclose(y.numpy(), ref / 32768.0, atol=1e-7)
        i = paddle.audio.info(path)
        assert (i.sample_rate, i.num_samples, i.num_channels, i.bits_per_sample, i.encoding) \
            == (16000, 4000, 2, 16, "PCM_S")


def test_wave_backend_24_bit(tmp_path):
    x = _tone(1)
    path = str(tmp_path / "a.wav")
    sf.write(path, x.T, 16000, subtype="PCM_24")
    backends.set_backend("wave_backend")
    y, _ = paddle.audio.load(path)
    ref = sf.read(path, dtype="float32", always_2d=True)[0].T
    np.testing.assert_allclose(y.numpy(), ref, atol=1e-7)


def test_clipping_of_out_of_range_floats(tmp_path):
    x = np.array([[1.5, -1.5, 1.0, -1.0, 0.0]], np.float32)
    for b in ("wave_backend", "soundfile"):
        backends.set_backend(b)
        path = str(tmp_path / f"{b}.wav")
        paddle.audio.save(path, paddle.to_tensor(x), 8000)
        raw = sf.read(path, dtype="int16")[0]
        assert raw[0] == 32767 and raw[1] == -32768 and raw[2] > 32000 and raw[3] < -32000


@pytest.mark.parity
def test_wav_load_matches_paddle(pd, tmp_path):
    x = _tone(2)
    path = str(tmp_path / "a.wav")
    sf.write(path, x.T, 16000, subtype="PCM_16")
    ref, sr = pd.audio.load(path, frame_offset=5, num_frames=200)
    ours, sr2 = paddle.audio.load(path, frame_offset=5, num_frames=200)
    assert sr == sr2 and ours.shape == list(ref.shape)
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), atol=1e-7)
    ref_raw, _ = pd.audio.load(path, normalize=False, channels_first=False)
    ours_raw, _ = paddle.audio.load(path, normalize=False, channels_first=False)
    np.testing.assert_array_equal(ours_raw.numpy(), ref_raw.numpy())
    ri, oi = pd.audio.info(path), paddle.audio.info(path)
    for k in ("sample_rate", "num_samples", "num_channels", "bits_per_sample", "encoding"):
        assert getattr(oi, k) == getattr(ri, k), k


def test_missing_and_non_audio_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="paddle.audio.load: no such file"):
        paddle.audio.load(str(tmp_path / "nope.wav"))
    junk = tmp_path / "junk.wav"
    junk.write_text("this is not audio")
    for b in ("soundfile", "wave_backend"):
        backends.set_backend(b)
        with pytest.raises(ValueError, match="junk.wav"):
            paddle.audio.load(str(junk))
        with pytest.raises(ValueError, match="junk.wav"):
            paddle.audio.info(str(junk))
    with pytest.raises(IsADirectoryError, match="is a directory"):
        paddle.audio.info(str(tmp_path))


def test_bad_save_and_load_arguments(tmp_path):
    x = paddle.to_tensor(_tone(1))
    with pytest.raises(ValueError, match=r"expected a 2D tensor of shape \[C, T\], got shape "
                                         r"\[4000\]"):
        paddle.audio.save(str(tmp_path / "a.wav"), x[0], 16000)
    with pytest.raises(ValueError, match="sample_rate must be a positive int"):
        paddle.audio.save(str(tmp_path / "a.wav"), x, 0)
    with pytest.raises(ValueError, match="cannot tell the audio format"):
        paddle.audio.save(str(tmp_path / "a.xyz"), x, 16000)
    with pytest.raises(ValueError, match="not supported for FLAC"):
        paddle.audio.save(str(tmp_path / "a.flac"), x, 16000, encoding="PCM_F",
                          bits_per_sample=32)
    paddle.audio.save(str(tmp_path / "a.wav"), x, 16000)
    with pytest.raises(ValueError, match="frame_offset 5000 is past the end"):
        paddle.audio.load(str(tmp_path / "a.wav"), frame_offset=5000)
    with pytest.raises(ValueError, match="num_frames must be -1"):
        paddle.audio.load(str(tmp_path / "a.wav"), num_frames=0)
    backends.set_backend("wave_backend")
    with pytest.raises(ValueError, match=r"wave_backend writes only 16-bit PCM WAV.*"
                                         r"paddle_hl\[audio\]"):
        paddle.audio.save(str(tmp_path / "b.wav"), x, 16000, bits_per_sample=24)
    with pytest.raises(ValueError, match=r"writes only \.wav files"):
        paddle.audio.save(str(tmp_path / "b.flac"), x, 16000)


def test_missing_soundfile_names_the_extra(tmp_path, monkeypatch):
    path = str(tmp_path / "a.flac")
    paddle.audio.save(path, paddle.to_tensor(_tone(1)), 16000)
    monkeypatch.setitem(sys.modules, "soundfile", None)  # import soundfile -> ImportError
    assert backends.list_available_backends() == ["wave_backend"]
    assert backends.get_current_backend() == "wave_backend"
    with pytest.raises(ImportError, match=r"pip install 'paddle_hl\[audio\]'"):
        backends.set_backend("soundfile")
    # the wave backend still works for PCM16 WAV, and names the extra for the FLAC file
    wav = str(tmp_path / "a.wav")
    paddle.audio.save(wav, paddle.to_tensor(_tone(1)), 16000)
    with wave.open(wav) as f:
        assert f.getnframes() == 4000
    with pytest.raises(ValueError, match=r"pip install 'paddle_hl\[audio\]'"):
        paddle.audio.load(path)
    # a backend chosen explicitly that then goes missing also says what to install
    backends._current = "soundfile"
    with pytest.raises(ImportError, match=r"paddle_hl\[audio\]"):
        paddle.audio.info(path)


@pytest.mark.parametrize("backend", ["wave_backend", "soundfile"])
def test_integer_source_is_written_unscaled(tmp_path, backend):
    backends.set_backend(backend)
    raw = np.array([[0, 1, -1, 32767, -32768, 1234]], dtype=np.int16)
    path = str(tmp_path / "i.wav")
    paddle.audio.save(path, paddle.to_tensor(raw), 8000)
    back, _ = paddle.audio.load(path, normalize=False)
    np.testing.assert_array_equal(back.numpy(), raw)
