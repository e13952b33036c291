"""Shared pieces of the audio backends: :class:`AudioInfo`, argument checks, the soundfile
import and the conversion between arrays and Tensors."""

from __future__ import annotations

import numbers
import os

import numpy as np

import paddle_hl as paddle

__all__ = []  # implementation module: the package exports the names

#: How to get the optional dependency that reads and writes FLAC, OGG and non-PCM16 WAV files.
AUDIO_EXTRA = "pip install 'paddle_hl[audio]'  (or: pip install soundfile)"


class _ArgError(ValueError, AssertionError):
    """A bad argument (Paddle asserts here; this is also a ValueError)."""


class AudioInfo:
    """Metadata of an audio file, as returned by :func:`paddle_hl.audio.info`.

    Attributes:
        sample_rate (int): Samples per second.
        num_samples (int): Frames per channel.
        num_channels (int): Number of channels.
        bits_per_sample (int): Bits of one sample (0 for lossy formats such as Vorbis).
        encoding (str): 'PCM_S' (signed integer PCM), 'PCM_U' (unsigned), 'PCM_F' (float),
            'ULAW', 'ALAW', 'FLAC' or 'VORBIS'.
    """

    def __init__(self, sample_rate: int, num_samples: int, num_channels: int,
                 bits_per_sample: int, encoding: str) -> None:
        self.sample_rate = sample_rate
        self.num_samples = num_samples
        self.num_channels = num_channels
        self.bits_per_sample = bits_per_sample
        self.encoding = encoding

    def __repr__(self) -> str:
        return (f"AudioInfo(sample_rate={self.sample_rate}, num_samples={self.num_samples}, "
                f"num_channels={self.num_channels}, bits_per_sample={self.bits_per_sample}, "
                f"encoding={self.encoding})")


def import_soundfile():
    """Import soundfile lazily; a clear ImportError naming the extra when it is missing."""
    try:
        import soundfile
    except (ImportError, OSError) as e:  # OSError: the module is there but libsndfile is not
        raise ImportError(f"paddle_hl.audio: the 'soundfile' backend needs the soundfile "
                          f"package and libsndfile ({e}). Install the audio extra: "
                          f"{AUDIO_EXTRA}") from e
    return soundfile


def check_path(filepath, fn: str) -> str:
    if not isinstance(filepath, (str, os.PathLike)):
        raise TypeError(f"paddle.audio.{fn}: filepath must be a str or os.PathLike, got "
                        f"{type(filepath).__name__}")
    return os.fspath(filepath)


def check_readable(path: str, fn: str) -> None:
    if not os.path.exists(path):
        raise FileNotFoundError(f"paddle.audio.{fn}: no such file: {path!r}")
    if os.path.isdir(path):
        raise IsADirectoryError(f"paddle.audio.{fn}: {path!r} is a directory, not an audio "
                                "file")


def check_range(frame_offset, num_frames, total: int, fn: str) -> tuple[int, int]:
    """Validate frame_offset / num_frames against a file of ``total`` frames; returns
    (start, count)."""
    for v, arg in ((frame_offset, "frame_offset"), (num_frames, "num_frames")):
        if not isinstance(v, numbers.Integral) or isinstance(v, bool):
            raise TypeError(f"paddle.audio.{fn}: {arg} must be an int, got "
                            f"{type(v).__name__}")
    if frame_offset < 0:
        raise _ArgError(f"paddle.audio.{fn}: frame_offset must be >= 0, got {frame_offset}")
    if num_frames < -1 or num_frames == 0:
        raise _ArgError(f"paddle.audio.{fn}: num_frames must be -1 (all) or positive, got "
                        f"{num_frames}")
    if frame_offset > total:
        raise _ArgError(f"paddle.audio.{fn}: frame_offset {frame_offset} is past the end of "
                        f"the file ({total} frames)")
    count = total - frame_offset if num_frames == -1 else min(num_frames, total - frame_offset)
    return int(frame_offset), int(count)


def source_array(src, channels_first: bool, fn: str = "save") -> np.ndarray:
    """The samples of ``src`` (Tensor or array, 2-D) as a NumPy array of shape [T, C]."""
    if isinstance(src, paddle.Tensor):
        arr = src.numpy()
    elif isinstance(src, np.ndarray):
        arr = src
    else:
        raise TypeError(f"paddle.audio.{fn}: src must be a Tensor of shape [C, T] (or [T, C] "
                        f"with channels_first=False), got {type(src).__name__}")
    if arr.ndim != 2:
        layout = "[C, T]" if channels_first else "[T, C]"
        raise _ArgError(f"paddle.audio.{fn}: expected a 2D tensor of shape {layout}, got shape "
                        f"{list(arr.shape)}")
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"paddle.audio.{fn}: src must hold float or integer samples, got "
                        f"dtype {arr.dtype}")
    return np.ascontiguousarray(arr.T if channels_first else arr)


def check_sample_rate(sample_rate, fn: str = "save") -> int:
    if not isinstance(sample_rate, numbers.Integral) or isinstance(sample_rate, bool) \
            or sample_rate <= 0:
        raise _ArgError(f"paddle.audio.{fn}: sample_rate must be a positive int, got "
                        f"{sample_rate!r}")
    return int(sample_rate)


def to_tensor(arr: np.ndarray, channels_first: bool) -> paddle.Tensor:
    """[T, C] array -> Tensor [C, T] (channels_first) or [T, C]."""
    return paddle.to_tensor(np.ascontiguousarray(arr.T) if channels_first else arr)
