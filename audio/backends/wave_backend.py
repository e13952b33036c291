"""The ``wave_backend``: PCM WAV files through Python's standard ``wave`` module.

It needs no extra dependency; FLAC, OGG and float WAV files need the ``soundfile`` backend.
"""

from __future__ import annotations

import wave

import numpy as np

from paddle_hl.framework.io import write_file

from .backend import (
    AUDIO_EXTRA,
    AudioInfo,
    _ArgError,
    check_path,
    check_range,
    check_readable,
    check_sample_rate,
    source_array,
    to_tensor,
)

__all__ = []  # implementation module: the package exports the names

_INT_DTYPES = {1: np.uint8, 2: np.int16, 4: np.int32}


def _open(path: str, fn: str) -> wave.Wave_read:
    check_readable(path, fn)
    try:
        return wave.open(path, "rb")
    except (wave.Error, EOFError) as e:
        raise ValueError(f"paddle.audio.{fn}: {path!r} is not a PCM WAV file the "
                         f"wave_backend can read ({e or 'file too short'}). Other formats "
                         f"(FLAC, OGG, float WAV) need the soundfile backend: {AUDIO_EXTRA}, "
                         f"then paddle.audio.backends.set_backend('soundfile')") from None


def info(filepath: str) -> AudioInfo:
    """Metadata of a PCM WAV file (see :func:`paddle_hl.audio.info`)."""
    path = check_path(filepath, "info")
    with _open(path, "info") as f:
        width = f.getsampwidth()
        return AudioInfo(f.getframerate(), f.getnframes(), f.getnchannels(), 8 * width,
                         "PCM_U" if width == 1 else "PCM_S")


def _decode(raw: bytes, width: int, channels: int) -> np.ndarray:
    """PCM bytes -> integer array [T, C] (24-bit samples are widened to int32, left-aligned)."""
    if width == 3:
        b = np.frombuffer(raw, np.uint8).reshape(-1, 3)
        arr = (b[:, 0].astype(np.int32) << 8) | (b[:, 1].astype(np.int32) << 16) \
            | (b[:, 2].astype(np.int8).astype(np.int32) << 24)
    else:
        arr = np.frombuffer(raw, np.dtype(_INT_DTYPES[width]).newbyteorder("<"))
    return arr.reshape(-1, channels)


def load(filepath, frame_offset: int = 0, num_frames: int = -1, normalize: bool = True,
         channels_first: bool = True):
    """Load a PCM WAV file (see :func:`paddle_hl.audio.load`)."""
    path = check_path(filepath, "load")
    with _open(path, "load") as f:
        width, channels, sr = f.getsampwidth(), f.getnchannels(), f.getframerate()
        start, count = check_range(frame_offset, num_frames, f.getnframes(), "load")
        f.setpos(start)
        arr = _decode(f.readframes(count), width, channels)
    if normalize:
        if width == 1:
            arr = (arr.astype(np.float32) - 128.0) / 128.0
        else:
            scale = 2.0 ** 31 if width in (3, 4) else 2.0 ** 15
            arr = (arr.astype(np.float64) / scale).astype(np.float32)
    return to_tensor(arr, channels_first), sr


def save(filepath: str, src, sample_rate: int, channels_first: bool = True,
         encoding: str | None = None, bits_per_sample: int | None = 16) -> None:
    """Save a 16-bit PCM WAV file (see :func:`paddle_hl.audio.save`)."""
    path = check_path(filepath, "save")
    sr = check_sample_rate(sample_rate)
    if bits_per_sample not in (None, 16) or encoding not in (None, "PCM_S"):
        raise _ArgError(f"paddle.audio.save: the wave_backend writes only 16-bit PCM WAV "
                        f"(got encoding={encoding!r}, bits_per_sample={bits_per_sample!r}); "
                        f"other encodings need the soundfile backend: {AUDIO_EXTRA}")
    if not path.lower().endswith(".wav"):
        raise _ArgError(f"paddle.audio.save: the wave_backend writes only .wav files, got "
                        f"{path!r}; FLAC and OGG need the soundfile backend: {AUDIO_EXTRA}")
    arr = source_array(src, channels_first)
    if arr.dtype.kind == "f":
        # the float range [-1, 1] maps onto the int16 range; values outside it are clipped
        arr = np.clip(np.round(arr.astype(np.float64) * 32768.0), -32768, 32767)
    arr = arr.astype("<i2")

    def write(fh):
        with wave.open(fh, "wb") as f:
            f.setnchannels(arr.shape[1])
            f.setsampwidth(2)
            f.setframerate(sr)
            f.writeframes(arr.tobytes())

    # through a temporary file and a rename: a failed write keeps the previous file
    write_file(path, write)
